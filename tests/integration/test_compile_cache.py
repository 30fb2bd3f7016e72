"""The site compile cache against a real registry (Debian's docker-registry): one node shares its cache root, another
takes it before its start, a different key never gets it, and every fault skips instead of failing a start."""
import hashlib
import json
import os
import urllib.request

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import compile_cache as keys
from ansible_collections.inferops.vllm.plugins.module_utils.node import compile_cache as cc

from site_registry import free_port, running_registry

KEY = keys.key({"test": "a"})
OTHER = keys.key({"test": "b"})


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    with running_registry(tmp_path_factory.mktemp("cc-registry")) as url:
        yield url


def tree(root):
    """{relative path: (mode & 0o777, sha256)} of the regular files under root, links not followed."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if rel.startswith(cc.OWN_PREFIX) or os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as fh:
                out[rel] = (os.stat(path).st_mode & 0o777, hashlib.sha256(fh.read()).hexdigest())
    return out


def compiled_root(root):
    """A cache root as vLLM 0.32 leaves one: torch.compile's rank directory, Inductor and Triton files, modelinfos,
    and things that must not travel: a link out of the root and a fifo."""
    (root / "torch_compile_cache/abc123/rank_0_0/backbone").mkdir(parents=True)
    (root / "torch_compile_cache/abc123/rank_0_0/backbone/artifact").write_bytes(os.urandom(300000))
    (root / "inductor/fx").mkdir(parents=True)
    (root / "inductor/fx/kernel.py").write_text("def kernel(): pass\n")
    (root / "triton/x").mkdir(parents=True)
    (root / "triton/x/kernel.so").write_bytes(b"\x7fELF" + os.urandom(5000))
    os.chmod(root / "triton/x/kernel.so", 0o755)
    (root / "modelinfos").mkdir()
    (root / "modelinfos/KimiK3.json").write_text(json.dumps({"model": "tiny"}))
    (root / "outside").symlink_to("/etc")
    os.mkfifo(root / "fifo")
    os.chmod(root, 0o700)
    return root


def run(state, registry, root, key=KEY, check=False, **kw):
    return cc.run(state, registry, str(root), key, kw.pop("inputs", {"test": "a"}), kw.pop("host", "node1"),
                  kw.pop("timeout", 60), kw.pop("retries", 1), check)


def test_one_node_shares_and_a_new_node_starts_with_its_files(registry, tmp_path):
    src = compiled_root(tmp_path / "node1")
    (tmp_path / "node2").mkdir(mode=0o700)
    assert run("restored", registry, tmp_path / "node2")["restored"] is False   # nothing shared yet: compiles

    assert run("collected", registry, src, check=True) == {"changed": True, "shared": True,
                                                           "reason": "would share this node's cache"}
    shared = run("collected", registry, src)
    assert shared["shared"] and shared["files"] == 4, shared
    assert run("collected", registry, src)["changed"] is False               # the record answers the next run

    assert run("restored", registry, tmp_path / "node2", check=True)["restored"] is True
    assert tree(tmp_path / "node2") == {}                                      # check mode writes nothing
    restored = run("restored", registry, tmp_path / "node2")
    assert restored["restored"] and restored["files"] == 4 and restored["refused"] == 0, restored
    assert tree(tmp_path / "node2") == tree(src)                               # bytes and modes, as packed
    assert not os.path.lexists(tmp_path / "node2/outside") and not os.path.lexists(tmp_path / "node2/fifo")
    again = run("restored", registry, tmp_path / "node2")
    assert again["changed"] is False and "already holds" in again["reason"]
    assert cc.held(str(tmp_path / "node2"), KEY) == "restored" and cc.held(str(src), KEY) == "collected"
    assert cc.held(str(tmp_path / "node2"), OTHER) is None and cc.held(str(tmp_path / "nowhere"), KEY) is None
    assert run("collected", registry, tmp_path / "node2")["changed"] is False  # restored: nothing to share

    # a node whose root already has files keeps them; only the missing ones are added
    (tmp_path / "node3/inductor/fx").mkdir(parents=True)
    (tmp_path / "node3/inductor/fx/kernel.py").write_text("mine\n")
    kept = run("restored", registry, tmp_path / "node3")
    assert kept["kept"] == 1 and kept["files"] == 3, kept
    assert (tmp_path / "node3/inductor/fx/kernel.py").read_text() == "mine\n"


def test_a_different_key_never_gets_the_cache_and_a_mistagged_one_is_refused(registry, tmp_path):
    src = compiled_root(tmp_path / "src")
    run("collected", registry, src)
    (tmp_path / "other").mkdir()
    assert run("restored", registry, tmp_path / "other", key=OTHER)["restored"] is False
    # the key's tag moved onto another key's artifact (a hand-made copy): refused, the node compiles
    req = urllib.request.Request("%s/v2/%s/manifests/%s" % (registry, cc.REPOSITORY, KEY),
                                 headers={"Accept": cc.OCI_MANIFEST})
    body = urllib.request.urlopen(req).read()
    urllib.request.urlopen(urllib.request.Request("%s/v2/%s/manifests/%s" % (registry, cc.REPOSITORY, OTHER),
                                                  data=body, method="PUT",
                                                  headers={"Content-Type": cc.OCI_MANIFEST})).close()
    out = run("restored", registry, tmp_path / "other", key=OTHER)
    assert out["changed"] is False and "a different key never reuses a cache" in out["skipped"], out
    assert tree(tmp_path / "other") == {}


def test_a_corrupt_archive_and_a_silent_registry_skip_without_failing(registry, tmp_path):
    # the artifact's layer replaced by bytes that are not tar+gzip (pushed under their own digest)
    junk = os.urandom(2048)
    digest = "sha256:" + hashlib.sha256(junk).hexdigest()
    from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import (
        BoundedRegistry, push_blob, put_manifest)
    reg = BoundedRegistry(registry, timeout=10, retries=0)
    config = json.dumps({"key": OTHER, "files": 1, "bytes": 10}).encode()
    push_blob(reg, cc.REPOSITORY, digest, len(junk), data=junk)
    push_blob(reg, cc.REPOSITORY, "sha256:" + hashlib.sha256(config).hexdigest(), len(config), data=config)
    put_manifest(reg, cc.REPOSITORY, OTHER, cc.oci_manifest(config, digest, len(junk)))
    (tmp_path / "node").mkdir()
    out = run("restored", registry, tmp_path / "node", key=OTHER)
    assert out["changed"] is False and "does not read as tar+gzip" in out["skipped"], out
    assert os.listdir(tmp_path / "node") == []                # no temporary file left behind

    silent = "http://127.0.0.1:%d" % free_port()              # nothing listens there
    out = run("restored", silent, tmp_path / "node", timeout=5, retries=0)
    assert out["changed"] is False and out["skipped"].startswith("did not restore the site compile cache of "), out


def test_a_cache_root_that_is_a_link_is_never_entered(registry, tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "root").symlink_to(tmp_path / "real")
    out = run("restored", registry, tmp_path / "root")
    assert "a link there is refused" in out["skipped"], out
    assert os.listdir(tmp_path / "real") == []

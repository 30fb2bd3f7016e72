"""The site compile cache: its key (what may share a cache) and the restore's boundary (what an archive can do to a
node's cache root). The registry round trip is in tests/integration/test_compile_cache.py."""
import io
import os
import tarfile
import gzip
import time

from hypothesis import given, settings, HealthCheck, strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.controller import compile_cache as keys
from ansible_collections.inferops.vllm.plugins.module_utils.node import compile_cache as cc

IMAGE = "registry.site/vllm@sha256:" + "a" * 64
ARGS = {"model": "moonshotai/Kimi-K3", "tensor-parallel-size": 8, "nnodes": 2, "master-addr": "10.0.0.1",
        "master-port": 29500, "served-model-name": "k3", "max-model-len": 262144}
ENV = {"VLLM_CACHE_ROOT": "/root/.cache/vllm", "NCCL_CUMEM_ENABLE": "1"}


def key_of(image=IMAGE, gpu="B200", gpus=8, rank=0, args=None, env=None):
    return keys.key(keys.inputs(image, gpu, gpus, rank, ARGS if args is None else args, ENV if env is None else env))


def test_two_clusters_of_one_shape_share_a_key_and_everything_else_splits_it():
    moved = dict(ARGS, **{"master-addr": "10.9.9.9", "master-port": 30000, "served-model-name": "other"})
    assert key_of(args=moved) == key_of()
    assert key_of(image="mirror.other/vllm@sha256:" + "a" * 64) == key_of()    # the digest, not where it lives
    assert len({key_of(), key_of(image="x@sha256:" + "b" * 64), key_of(gpu="H200"), key_of(gpus=4), key_of(rank=1),
                key_of(args=dict(ARGS, **{"max-model-len": 131072})), key_of(env=dict(ENV, NCCL_CUMEM_ENABLE="0"))}) == 7


@given(st.dictionaries(st.text(min_size=1, max_size=12), st.one_of(st.integers(), st.text(max_size=8), st.booleans()),
                       max_size=6),
       st.sampled_from(sorted(keys.ADDRESS_FLAGS)), st.integers())
def test_the_key_ignores_only_where_a_cluster_finds_its_head(args, address_flag, value):
    base = key_of(args=args)
    without = {k: v for k, v in args.items() if k != address_flag}
    assert key_of(args=dict(args, **{address_flag: value})) == key_of(args=without)
    other = [f for f in args if f not in keys.ADDRESS_FLAGS]
    if other:
        changed = dict(args, **{other[0]: ("x", args[other[0]])})
        assert key_of(args=changed) != key_of(args=args)
    assert len(base) == 64 and int(base, 16) >= 0


def test_the_registry_comes_from_the_site_or_the_cache_stays_per_node():
    entry = keys.site_entry(IMAGE, "B200", 8, 0, ARGS, ENV)
    assert keys.with_registry(entry, "") is None
    assert keys.with_registry(entry, "10.0.0.5:5000")["registry"] == "http://10.0.0.5:5000"
    assert keys.with_registry(None, "10.0.0.5:5000") is None


@given(st.text(max_size=40))
def test_a_member_name_either_stays_inside_the_root_or_is_refused(name):
    parts = cc.member_parts(name)
    if parts is None:
        return
    path = os.path.normpath(os.path.join("/root-dir", *parts))
    assert path.startswith("/root-dir/") and not parts[0].startswith(cc.OWN_PREFIX)
    assert all(p not in ("", ".", "..") and p.isprintable() for p in parts)


# ---- hostile archives against a cache root with a trap in it ----

NAMES = st.sampled_from(["a", "b/c", "trap/evil", "../up", "/abs", "b/../../up2", "ok/deep/file", ".inferops-site-cache.json",
                         "keep", "b", "x\ny", "link", "dev", "b/c/d"])
KINDS = st.sampled_from([tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE,
                         tarfile.FIFOTYPE])


def archive(members):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as gz, tarfile.open(fileobj=gz, mode="w|",
                                                                   format=tarfile.PAX_FORMAT) as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.mode = 0o4777                                    # setuid asked for: never given
            if kind == tarfile.REGTYPE:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                info.linkname = "/etc/passwd" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
                tar.addfile(info)
    buf.seek(0)
    return buf


def snapshot(path):
    out = {}
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            p = os.path.join(folder, name)
            st_ = os.lstat(p)
            content = open(p, "rb").read() if os.path.isfile(p) and not os.path.islink(p) else None
            out[os.path.relpath(p, path)] = (st_.st_mode, content, os.readlink(p) if os.path.islink(p) else None)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(NAMES, KINDS, st.binary(max_size=64)), max_size=12))
def test_a_hostile_archive_adds_plain_files_inside_the_root_and_nothing_else(tmp_path_factory, members):
    base = tmp_path_factory.mktemp("hostile")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("outside\n")
    (root / "trap").symlink_to(outside)                           # a link that other software left in the root
    (root / "keep").write_text("mine\n")
    before_outside, before_root = snapshot(outside), snapshot(root)
    fd = os.open(str(root), cc.DIR_FLAGS)
    try:
        try:
            counts = cc.extract(fd, archive(members), 1 << 20, 1000, time.monotonic() + 30)
        except cc.Skipped:
            counts = None
    finally:
        os.close(fd)
    assert snapshot(outside) == before_outside
    after = snapshot(root)
    for rel, entry in after.items():
        mode = entry[0]
        if rel in before_root:
            assert entry == before_root[rel], rel                     # nothing there before was changed
            continue
        assert not os.path.islink(root / rel) and (os.path.isdir(root / rel) or os.path.isfile(root / rel)), rel
        assert mode & 0o7000 == 0, rel                                 # no setuid, setgid or sticky bit
        assert not rel.split("/")[0].startswith(cc.OWN_PREFIX), rel
    if counts is not None:
        assert counts["files"] == sum(1 for rel in after if rel not in before_root and os.path.isfile(root / rel))

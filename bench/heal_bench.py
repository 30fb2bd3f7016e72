"""Heal benchmark on the lab (scripts/bench.sh heal): N trials of every fault in tests/lab/faults.py, one
after the other, with a steady client through the router the whole time. Per trial: seconds until the
cluster serves on every rank again, the restarts its watchdogs made, and the requests through the router
that failed or hung. Per fault: the worst and the median of each, and how many trials missed a goal
(every trial within 3 minutes, at most 2 failed requests). Prints figures; never fails on them.

usage: heal_bench.py [--trials N] [--faults NAME ...] --json OUT   (the lab must be up: scripts/lab.sh up)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests/lab"))
import faults  # noqa: E402  pylint: disable=wrong-import-position
from lab_nodes import Client  # noqa: E402  pylint: disable=wrong-import-position


def log(msg: str) -> None:
    print("=== %s  heal bench: %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def summary(results: list[dict]) -> dict:
    healed = [r["seconds_to_serve"] for r in results if r["seconds_to_serve"] is not None]
    failed = [r["router"]["failed"] for r in results]
    return {"trials": len(results), "healed": len(healed),
            "seconds_to_serve": {"median": statistics.median(healed) if healed else None,
                                 "max": max(healed) if healed else None},
            "watchdog_restarts": {"median": statistics.median(r["watchdog_restarts"] for r in results),
                                  "max": max(r["watchdog_restarts"] for r in results)},
            "router_failed": {"median": statistics.median(failed), "max": max(failed),
                              "hung_max": max(r["router"]["hung"] for r in results)},
            "missed_goal": sum(1 for r in results if faults.problems(r))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--faults", nargs="*", choices=sorted(faults.FAULTS), default=list(faults.FAULTS))
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    report: dict = {"machine": {"cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")},
                    "goals": {"seconds_to_serve_max": faults.HEAL_GOAL_S, "router_failed_max": faults.ROUTER_FAILED_GOAL},
                    "faults": {}}
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    with Client(max_requests=10 ** 6, max_seconds=24 * 3600) as client:
        for name in args.faults:
            fault, results = faults.FAULTS[name], []
            for i in range(args.trials):
                for cluster in faults.CLUSTERS:   # both replicas whole: the router's figures are this fault's
                    faults.ready(cluster)
                result = faults.trial(fault, client)
                results.append(result)
                log("%s trial %d/%d: served after %s s, %d watchdog restarts, router %d/%d failed (%d hung)%s"
                    % (name, i + 1, args.trials, result["seconds_to_serve"], result["watchdog_restarts"],
                       result["router"]["failed"], result["router"]["requests"], result["router"]["hung"],
                       "; MISSED: " + "; ".join(faults.problems(result)) if faults.problems(result) else ""))
                report["faults"][name] = {"what": fault.what, "summary": summary(results), "trials": results}
                out.write_text(json.dumps(report, indent=2) + "\n")   # kept as it grows: a long bench may be cut short
    for name, data in report["faults"].items():
        s = data["summary"]
        print("%-22s %2d trials  serve s median %-5s max %-5s  restarts max %d  router failed median %s max %d  missed %d"
              % (name, s["trials"], s["seconds_to_serve"]["median"], s["seconds_to_serve"]["max"],
                 s["watchdog_restarts"]["max"], s["router_failed"]["median"], s["router_failed"]["max"],
                 s["missed_goal"]))
    log("figures in %s" % out)


if __name__ == "__main__":
    main()

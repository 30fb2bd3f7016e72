"""A cluster's first start in the lab with the site compile cache against a cold first start: same image, same
launch, same nodes, same load.

On the running lab (scripts/lab.sh up), cluster lab_dp (lab-node3 and lab-node4) is torn down with teardown.yml
(containers and compile cache roots gone), then deployed with site.yml --limit lab_dp twice per round:
  cold  -e vllm_compile_cache_site=false: nothing restored, the nodes compile and inspect from scratch;
  site  after another teardown, the default: each node takes its key's cache, which the lab's first deploy shared,
        before its container starts.
The phases come from each node's vLLM log through the vllm_startup module, the cluster's figure as the smoke report
computes it (module_utils/controller/smoke/startup.py). Cluster lab keeps serving beside it, idle, as in both runs.
Figures only; no asserts.

usage: python3 bench/site_cache_lab.py [--rounds 1] [--json FILE]   (from the repository root, the lab up)
"""
import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import startup  # noqa: E402
from ansible_collections.inferops.vllm.plugins.module_utils.node.startup_log import PHASE_NAMES  # noqa: E402

CLUSTER, NODES = "lab_dp", ("lab-node3", "lab-node4")
INVENTORY = ["-i", "inventories/lab"]


def playbook(name: str, *extra: str) -> float:
    began = time.monotonic()
    done = subprocess.run(["ansible-playbook", *INVENTORY, "playbooks/" + name, "--limit", CLUSTER, *extra],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit("%s %s failed:\n%s" % (name, " ".join(extra), done.stdout[-3000:]))
    return time.monotonic() - began


def phases() -> dict:
    """The cluster's startup figures and each node's, read by vllm_startup on its node."""
    done = subprocess.run(["ansible", *INVENTORY, ",".join(NODES), "-b", "-o", "-m", "inferops.vllm.vllm_startup"],
                          capture_output=True, text=True, check=False)
    nodes = {}
    for line in done.stdout.splitlines():
        host, _sep, rest = line.partition(" | ")
        body = rest.split("=>", 1)[-1].strip()
        if host in NODES and body.startswith("{"):
            nodes[host] = json.loads(body)["startup"]
    if set(nodes) != set(NODES):
        raise SystemExit("vllm_startup did not answer for every node: %s %s" % (done.stdout[-2000:], done.stderr[-500:]))
    return startup.cluster(nodes)


def one(kind: str) -> dict:
    playbook("teardown.yml")
    extra = ["--skip-tags", "smoke"] + (["-e", "vllm_compile_cache_site=false"] if kind == "cold" else [])
    site_s = playbook("site.yml", *extra)
    read = phases()
    slowest = {phase: entry["after_s"] for phase, entry in read["slowest"].items()}
    return {"site_yml_s": round(site_s, 1), "ready_after_s": read["ready_after_s"], "slowest": slowest}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json")
    opts = parser.parse_args()
    runs = {"cold": [], "site": []}
    for _round in range(opts.rounds):
        for kind in ("cold", "site"):
            runs[kind].append(one(kind))
    # leave lab_dp as the lab had it: deployed with the site cache (the last run)

    def med(kind: str, get) -> float:
        values = [get(r) for r in runs[kind] if get(r) is not None]
        return statistics.median(values) if values else float("nan")
    print("\nlab_dp (DP2 across lab-node3 and lab-node4), first start after teardown.yml, median of %d:" % opts.rounds)
    print("  %-34s %8s %8s %8s" % ("seconds", "cold", "site", "site/cold"))
    rows = [("cluster: API ready", lambda r: r["ready_after_s"])]
    rows += [("slowest node: " + phase, lambda r, p=phase: r["slowest"].get(p)) for phase in PHASE_NAMES]
    rows += [("site.yml --limit lab_dp (wall)", lambda r: r["site_yml_s"])]
    for label, get in rows:
        cold, site = med("cold", get), med("site", get)
        if not (math.isnan(cold) or math.isnan(site)):
            print("  %-34s %8.1f %8.1f %7.2fx" % (label, cold, site, site / cold if cold else float("nan")))
    if opts.json:
        Path(opts.json).write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()

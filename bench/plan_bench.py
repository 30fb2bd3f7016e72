"""How long plan.yml (and site.yml's plan play) takes on a generated fleet, against the floor: a
one-task debug play on the same inventory. Interleaved rounds, median wall times, ratios.
Prints figures, never pass/fail.

usage: bench/plan_bench.py [--sizes 64,512] [--rounds 3] [--json out.json]"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")
IMAGE = "vllm/vllm-openai@sha256:" + "0" * 64
FLOOR = """---
- name: Floor, one task per host
  hosts: vllm_clusters
  gather_facts: false
  tasks:
    - name: Say the host's name
      ansible.builtin.debug:
        msg: "{{ inventory_hostname }}"
"""


def write_inventory(path: Path, nodes: int) -> None:
    """Half B200 HGX nodes (K3 DEP over InfiniBand, 4 per cluster), half GB300 trays (K3 DEP16 in
    one NVL72 rack over MNNVL, 4 per cluster)."""
    groups, hosts = {"vllm_clusters": {"children": {}}}, {}
    for c in range(nodes // 4):
        name = "c%03d" % c
        gb300 = c % 2 == 1
        members = ["%s-n%d" % (name, i) for i in range(4)]
        groups["vllm_clusters"]["children"][name] = None
        groups[name] = {"hosts": {h: None for h in members}}
        cvars = {"vllm_cluster": name, "vllm_profile": "kimi_k3", "vllm_image": IMAGE, "vllm_strategy": "dep",
                 "vllm_gpu_model": "GB300" if gb300 else "B200", "vllm_fabric": "mnnvl" if gb300 else "infiniband",
                 "vllm_control_interface": "bond0", "vllm_max_model_len": 131072,
                 # what the plan requires for site.yml's later plays
                 "vllm_api_key": "bench-not-a-secret", "vllm_model_registry": "10.0.0.5:5000",
                 "vllm_model_revision": "0123456789abcdef0123456789abcdef01234567"}
        if gb300:
            cvars["vllm_nvlink_domain"] = name
        else:
            cvars["vllm_ib_hcas"] = ["mlx5_%d" % i for i in range(8)]
        (path / "group_vars" / name).mkdir(parents=True)
        (path / "group_vars" / name / "vllm.yml").write_text(json.dumps(cvars) + "\n")
        for i, h in enumerate(members):
            hosts[h] = {"vllm_control_address": "10.%d.%d.%d" % (c // 250, c % 250, i + 1)}
    (path / "host_vars").mkdir()
    for h, hv in hosts.items():
        (path / "host_vars" / (h + ".yml")).write_text(json.dumps(hv) + "\n")
    (path / "hosts.yml").write_text(json.dumps({"all": {"children": groups}}, indent=1) + "\n")


def run(inventory: Path, playbook: str, *extra: str) -> float:
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    start = time.monotonic()
    result = subprocess.run([PLAYBOOK, "-i", str(inventory), playbook, *extra], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=False)
    took = time.monotonic() - start
    if result.returncode:
        sys.exit("%s failed:\n%s" % (playbook, (result.stdout + result.stderr)[-3000:]))
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="64,512")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    opts = parser.parse_args()
    report = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "cpus": os.cpu_count(),
              "load_before": os.getloadavg(), "sizes": {}}
    tmp = Path(tempfile.mkdtemp(prefix="plan-bench-"))
    try:
        floor = tmp / "floor.yml"
        floor.write_text(FLOOR)
        # site.yml's first play alone: --tags would still run every later role's argument validation
        # (Ansible tags those tasks always), which is not the plan's cost
        site_plan = tmp / "site_plan.yml"
        site_plan.write_text(yaml.safe_dump(yaml.safe_load((ROOT / "playbooks/site.yml").read_text())[:1]))
        for size in (int(s) for s in opts.sizes.split(",")):
            inv = tmp / ("inv%d" % size)
            inv.mkdir()
            write_inventory(inv, size)
            out = tmp / ("plan%d" % size)
            cases = {
                "floor": (str(floor),),
                "plan": (str(ROOT / "playbooks/plan.yml"),),
                "plan_output": (str(ROOT / "playbooks/plan.yml"), "-e", "cluster_plan_output_dir=%s" % out),
                "site_plan": (str(site_plan),),
            }
            times = {k: [] for k in cases}
            for _round in range(opts.rounds):
                for name, args in cases.items():   # interleaved: load drifts hit every case alike
                    shutil.rmtree(out, ignore_errors=True)
                    times[name].append(run(inv, *args))
            med = {k: statistics.median(v) for k, v in times.items()}
            row = {"seconds": times, "median": med,
                   "ratio_to_floor": {k: med[k] / med["floor"] for k in cases if k != "floor"},
                   "output_adds": med["plan_output"] / med["plan"] - 1}
            report["sizes"][size] = row
            print("%4d nodes: floor %.1fs | plan %.1fs (%.2fx) | plan+files %.1fs (%.2fx, files +%.0f%%) | "
                  "site.yml plan play %.1fs (%.2fx)" % (
                      size, med["floor"], med["plan"], row["ratio_to_floor"]["plan"], med["plan_output"],
                      row["ratio_to_floor"]["plan_output"], 100 * row["output_adds"], med["site_plan"],
                      row["ratio_to_floor"]["site_plan"]), flush=True)
        report["load_after"] = os.getloadavg()
        print("load average before %.1f, after %.1f" % (report["load_before"][0], report["load_after"][0]))
        if opts.json:
            Path(opts.json).write_text(json.dumps(report, indent=1) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

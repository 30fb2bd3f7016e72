"""Fleet benchmarks on simulated nodes (the molecule `bench` scenario's nine nodes).

converge  a no-op re-run of site.yml (smoke off) against a facts+ping play on the
          same hosts, interleaved A/B rounds, at 3 nodes (one cluster) and 9 nodes
          (that cluster and a second one of six): the median ratio at
          each size, and its 9-node/3-node growth, for each Ansible setting. That
          growth is site.yml's own growth over the floor's on the same machine; the
          raw growth of both is printed beside it.
fanout    bytes the upstream registry sent per rollout of N nodes, with and without
          the site mirror, from the registry's own log, as a multiple of the image size.
weights   the vllm_model role (bench/weights_fanout.yml) at 3 and 9 nodes from empty caches and an
          empty site store: bytes the Hub stand-in sent (counted by bench/counting_proxy.py in front
          of olah) and bytes the site registry served to the nodes, as multiples of the model; then
          a re-run (0 bytes) against one node_state read per node, interleaved, at 3 nodes.

Run with the Ansible venv's Python from scripts/bench.sh, which builds the nodes,
the stand-in vLLM image and the registry first. Prints figures; never fails on them.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

import variants  # bench/, beside this file

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm"))
REGISTRY_LOG = CACHE / "logs/registry.log"
NODES = ["bench-node%d" % i for i in range(1, 28)]   # 10-27: molecule/bench27, for converge27 only
REPO = "inferops/standin-vllm"

# Ansible settings compared by the converge benchmark (environment overrides of
# the repository's ansible.cfg, which ships with pipelining on and the inferops.vllm.warm_workers callback).
SETTINGS = {
    "shipped": {},
    # (the stdout callback named again: the list takes no empty value, and it is loaded once)
    "without warm_workers": {"ANSIBLE_CALLBACKS_ENABLED": "ansible.builtin.default"},
    "no pipelining": {"ANSIBLE_PIPELINING": "0"},
    "forks 5 (Ansible default)": {"ANSIBLE_FORKS": "5"},
    "fact cache": {"ANSIBLE_GATHERING": "smart", "ANSIBLE_CACHE_PLUGIN": "jsonfile",
                   "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "3600"},
}
# copies of the collection that differ in one decision (bench/variants.py); not in the default set. #47's other way
# of stating the desired state once (every step's tasks run, the modules report changes), and Ansible's own check
# of each role's spec on every host, which site.yml leaves to the plan
VARIANTS = {"change reports": variants.change_reports, "role specs checked": variants.role_specs_checked}


def cluster_vars(name: str, port_offset: int, mirror: bool) -> dict:
    cluster = {
        "vllm_cluster": name, "vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
        "vllm_strategy": "dp", "vllm_control_address": "127.0.0.1", "vllm_port": 18500 + port_offset,
        "vllm_dp_rpc_port": 13500 + port_offset,
        "vllm_image": os.environ["INFEROPS_STANDIN_VLLM_DIGEST"], "vllm_api_key": "bench-not-a-secret",
        "vllm_serve_ready_timeout": 120, "vllm_serve_ready_report_every": 10,
        # the stand-in vLLM answers the API but has no torch for a collective
        "fabric_check_enabled": False,
        # and loads no weights: none to stage (the weights bench stages them)
        "vllm_model_source": "hub",
    }
    if mirror:
        cluster.update({"vllm_image_mirror": "127.0.0.1:5003", "vllm_image_mirror_deploy": True,
                        "vllm_image_mirror_port": 5003, "vllm_image_mirror_upstream": "http://127.0.0.1:5000"})
    return cluster


def over_ssh(host: str) -> dict:
    """How Ansible reaches a bench node over SSH (molecule/bench/molecule.yml: nodes 1-3)."""
    return {"ansible_connection": "ssh", "ansible_host": "127.0.1.2%s" % host[-1], "ansible_port": 2222,
            "ansible_user": "ops", "ansible_ssh_private_key_file": os.environ["INFEROPS_SSH_KEY"],
            "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"}


def inventory(workdir: Path, size: int, mirror: bool, fleet: bool = False, ssh: bool = False) -> Path:
    """One cluster of `size` nodes; with fleet, the 3-node cluster of nodes 1-3 plus a second
    cluster of nodes 4-9 (and a third of nodes 10-27 at 27), so every size is a no-op on one converged fleet and
    their rounds can be interleaved (machine drift between them would skew the growth)."""
    clusters = {"bench": NODES[:3 if fleet else size]}
    if fleet and size > 3:
        clusters["bench2"] = NODES[3:min(size, 9)]
    if fleet and size > 9:
        clusters["bench3"] = NODES[9:size]
    data = {"all": {
        "vars": {
            "ansible_connection": "community.docker.docker", "ansible_python_interpreter": "/usr/bin/python3",
            "container_runtime_gpu_check": False,
            "container_runtime_daemon_options": {"bridge": "none", "iptables": False, "ip6tables": False,
                                                 "ip-forward": False, "ip-masq": False,
                                                 "storage-driver": "overlay2"},
            # the nodes share this machine's network namespace: no firewall is loaded into it
            "vllm_firewall": False,
        },
        "children": {
            "vllm_clusters": {"children": {name: None for name in clusters}},
            **{name: {"hosts": {h: over_ssh(h) if ssh else None for h in hosts}, "vars": cluster_vars(name, i, mirror)}
               for i, (name, hosts) in enumerate(clusters.items())},
            "vllm_registry_mirrors": {"hosts": {NODES[0]: None}},
        },
    }}
    suffix = ("-mirror" if mirror else "") + ("-fleet" if fleet else "") + ("-ssh" if ssh else "")
    path = workdir / ("inventory-%d%s.yml" % (size, suffix))
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def playbook(inv: Path, play: Path, *args: str, env=None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(["ansible-playbook", "-i", str(inv), str(play), *args], cwd=ROOT, capture_output=True,
                          text=True, check=False, env=dict(os.environ, ANSIBLE_FORCE_COLOR="0", **(env or {})))
    seconds = time.perf_counter() - start
    if proc.returncode:
        sys.exit("%s failed:\n%s" % (play.name, proc.stdout[-4000:] + proc.stderr[-2000:]))
    return seconds


def converge(workdir: Path, rounds: int, out: dict) -> None:
    site, ping = ROOT / "playbooks/site.yml", ROOT / "bench/facts_ping.yml"
    inventories = {size: inventory(workdir, size, mirror=False, fleet=True) for size in (3, 9)}
    print("converging the 3-node and the 6-node cluster once (not timed)", flush=True)
    playbook(inventories[9], site, "--skip-tags", "smoke")
    results = {}
    wanted = [n for n in os.environ.get("INFEROPS_BENCH_SETTINGS", "").split(",") if n] or list(SETTINGS)
    for name in wanted:
        env, site_of = dict(SETTINGS.get(name, {})), site
        if name in VARIANTS:   # a copy of the collection that differs in one decision (bench/variants.py)
            folder = workdir / name.replace(" ", "-")
            env["ANSIBLE_COLLECTIONS_PATH"] = str(VARIANTS[name](folder))
            site_of = folder / "ansible_collections/inferops/vllm/playbooks/site.yml"
        runs = {size: {"site": [], "ping": []} for size in inventories}
        for _round in range(rounds):  # interleaved, sizes too, so machine drift hits all alike
            for size, inv in inventories.items():
                env_size = dict(env, ANSIBLE_CACHE_PLUGIN_CONNECTION=str(workdir / ("facts-%d" % size)))
                runs[size]["site"].append(playbook(inv, site_of, "--skip-tags", "smoke", env=env_size))
                runs[size]["ping"].append(playbook(inv, ping, env=env_size))
        for size, r in runs.items():
            results.setdefault(name, {})[size] = {
                "site_s": statistics.median(r["site"]), "facts_ping_s": statistics.median(r["ping"]),
                "ratio": statistics.median(s / p for s, p in zip(r["site"], r["ping"])), "site_runs": r["site"],
                "facts_ping_runs": r["ping"]}
            m = results[name][size]
            print("  %-26s %d nodes: site.yml no-op %.1f s, facts+ping %.1f s, ratio %.2f"
                  % (name, size, m["site_s"], m["facts_ping_s"], m["ratio"]), flush=True)
    print("\nconverge overhead (median of %d interleaved rounds; goals: ratio@3 <= 2.5, ratio 9/3 <= 1.5)" % rounds)
    print("%-26s %8s %8s %10s %9s %15s" % ("setting", "ratio@3", "ratio@9", "ratio 9/3", "site 9/3", "facts+ping 9/3"))
    for name, by_size in results.items():
        # ratio 9/3 = site.yml's growth / the floor's growth: the playbook's own growth,
        # with what this machine does with three times the nodes divided out
        overhead = by_size[9]["ratio"] / by_size[3]["ratio"]
        growth = by_size[9]["site_s"] / by_size[3]["site_s"]
        floor = by_size[9]["facts_ping_s"] / by_size[3]["facts_ping_s"]
        by_size["ratio_9_over_3"] = overhead
        by_size["growth_9_over_3"], by_size["facts_ping_growth_9_over_3"] = growth, floor
        print("%-26s %8.2f %8.2f %10.2f %9.2f %15.2f"
              % (name, by_size[3]["ratio"], by_size[9]["ratio"], overhead, growth, floor))
    out["converge"] = results
    if os.environ.get("INFEROPS_BENCH_PROFILE"):
        profile(inventories[3])
    converge_over_ssh(workdir, rounds, out)


def profile(inv: Path) -> None:
    """Where a no-op site.yml spends its time at 3 nodes: profile_tasks' slowest tasks."""
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks",
               PROFILE_TASKS_TASK_OUTPUT_LIMIT=os.environ.get("INFEROPS_BENCH_PROFILE", "30"))
    proc = subprocess.run(["ansible-playbook", "-i", str(inv), str(ROOT / "playbooks/site.yml"), "--skip-tags", "smoke"],
                          cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    recap = proc.stdout.split("PLAY RECAP")[-1]
    print("\nno-op site.yml at 3 nodes, slowest tasks (profile_tasks):" + recap, flush=True)


def converge_over_ssh(workdir: Path, rounds: int, out: dict) -> None:
    """The same 3 converged nodes reached over SSH as ops with sudo: no-op site.yml against
    facts+ping over the same connection, beside the docker-exec figure above."""
    site, ping = ROOT / "playbooks/site.yml", ROOT / "bench/facts_ping.yml"
    inv = inventory(workdir, 3, mirror=False, fleet=True, ssh=True)
    playbook(inv, site, "--skip-tags", "smoke")   # the connection changed nothing on the nodes (not timed)
    runs: dict = {"site": [], "ping": []}
    for _round in range(rounds):
        runs["site"].append(playbook(inv, site, "--skip-tags", "smoke"))
        runs["ping"].append(playbook(inv, ping))
    result = {"site_s": statistics.median(runs["site"]), "facts_ping_s": statistics.median(runs["ping"]),
              "ratio": statistics.median(s / p for s, p in zip(runs["site"], runs["ping"])),
              "site_runs": runs["site"], "facts_ping_runs": runs["ping"]}
    docker_exec = out["converge"].get("shipped", {}).get(3, {})
    print("\nover SSH as ops with sudo, 3 nodes: site.yml no-op %.1f s, facts+ping %.1f s, ratio %.2f"
          " (docker exec: %s)" % (result["site_s"], result["facts_ping_s"], result["ratio"],
                                  "%.2f" % docker_exec["ratio"] if docker_exec else "n/a"), flush=True)
    out["converge_ssh"] = {3: result}


def image_size() -> int:
    req = urllib.request.Request("http://127.0.0.1:5000/v2/%s/manifests/%s" % (
        REPO, os.environ["INFEROPS_STANDIN_VLLM_DIGEST"].split("@")[1]),
        headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        manifest = json.load(resp)
    return sum(b["size"] for b in [manifest["config"]] + manifest["layers"])


def upstream_blob_bytes(since_line: int) -> int:
    sent = 0
    for line in REGISTRY_LOG.read_text().splitlines()[since_line:]:
        if "response completed" in line and re.search(r'method=GET .*uri="/v2/%s/blobs/sha256:' % REPO, line):
            sent += int(re.search(r"http.response.written=(\d+)", line).group(1))
    return sent


def forget_image(size: int) -> None:
    """Nodes and the site mirror start without the image, as on a first rollout."""
    for node in NODES[:size]:
        subprocess.run(["docker", "exec", node, "sh", "-c",
                        "docker rm -f vllm >/dev/null 2>&1; docker images -q | xargs -r docker rmi -f >/dev/null; "
                        "rm -f /var/lib/inferops-vllm/image.json; systemctl stop docker-registry 2>/dev/null; "
                        "rm -rf /var/lib/docker-registry/docker; true"], check=True)


def fanout(workdir: Path, out: dict) -> None:
    site, size_bytes = ROOT / "playbooks/site.yml", image_size()
    results = {}
    print("\nimage fan-out (stand-in image, %d bytes; goal with the mirror: 1.0x per site)" % size_bytes)
    for size in (3, 9):
        for mirror in (False, True):
            forget_image(size)
            mark = len(REGISTRY_LOG.read_text().splitlines())
            playbook(inventory(workdir, size, mirror), site, "--tags", "image")
            sent = upstream_blob_bytes(mark)
            key = "%d nodes %s" % (size, "with mirror" if mirror else "direct")
            results[key] = {"upstream_bytes": sent, "image_bytes": size_bytes, "ratio": sent / size_bytes}
            print("  %-22s upstream %10d bytes = %.2fx the image" % (key, sent, sent / size_bytes), flush=True)
    out["fanout"] = results


HUB_PROXY = "127.0.0.1:5091"
MODEL = "inferops/tiny-k3"


def weights_inventory(workdir: Path, size: int) -> Path:
    """fanout's mirror inventory (the site registry on bench-node1:5003) with molecule/serve's weights."""
    path = inventory(workdir, size, mirror=True)
    data = yaml.safe_load(path.read_text())
    data["all"]["children"]["bench"]["vars"].update({
        "vllm_model_source": "site", "vllm_model": MODEL,
        "vllm_model_revision": os.environ["INFEROPS_HUB_TINY_K3_REVISION"],
        "vllm_model_hf_endpoint": "http://" + HUB_PROXY, "vllm_model_registry": "127.0.0.1:5003",
        "vllm_model_download_image": os.environ["INFEROPS_HUB_CLIENT_IMAGE"],
        "vllm_model_cache_dir": "/srv/models/huggingface", "vllm_model_http_timeout": 30})
    path = workdir / ("inventory-weights-%d.yml" % size)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def forget_weights(size: int) -> None:
    """Empty node caches, no model record, an empty site registry and store, as on a first rollout."""
    for node in NODES[:size]:
        subprocess.run(["docker", "exec", node, "rm", "-rf", "/srv/models/huggingface",
                        "/var/lib/inferops-vllm/model.json"], check=True)
    subprocess.run(["docker", "exec", NODES[0], "sh", "-c",
                    "rm -rf /var/lib/inferops-vllm/model-store; systemctl stop docker-registry; "
                    "rm -rf /var/lib/docker-registry/docker; systemctl start docker-registry; "
                    "for i in $(seq 50); do curl -fs http://127.0.0.1:5003/v2/ >/dev/null && exit 0; sleep 0.2; done; exit 1"],
                   check=True)


def json_playbook(inv: Path, play: Path) -> tuple:
    """A timed run with the JSON callback, for the modules' own figures."""
    start = time.perf_counter()
    proc = subprocess.run(["ansible-playbook", "-i", str(inv), str(play)], cwd=ROOT, capture_output=True, text=True,
                          check=False, env=dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json"))
    seconds = time.perf_counter() - start
    if proc.returncode:
        sys.exit("%s failed:\n%s" % (play.name, proc.stdout[-6000:] + proc.stderr[-2000:]))
    return seconds, json.loads(proc.stdout)


def task_results(report: dict, name: str) -> dict:
    """host -> result of the task called name (the last such task)."""
    found = {}
    for play in report["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"] == name or task["task"]["name"].endswith(" : " + name):
                found = task["hosts"]
    return found


def hub_bytes(log: Path, since: int) -> dict:
    files = api = 0
    for line in log.read_text().splitlines()[since:]:
        _t, _method, path, _status, sent = line.split("\t")
        if "/resolve/" in path:
            files += int(sent)
        else:
            api += int(sent)
    return {"files": files, "api": api, "total": files + api}


def served_bytes(since: float) -> dict:
    """Blob bytes the site registry on bench-node1 sent (its journal: docker-registry's access lines),
    in all and per blob (GETs and bytes)."""
    out = subprocess.run(["docker", "exec", NODES[0], "journalctl", "-u", "docker-registry", "-o", "cat", "--no-pager",
                          "--since", "@%d" % int(since)], capture_output=True, text=True, check=True).stdout
    sent, blobs = 0, {}
    for line in out.splitlines():
        m = re.search(r'method=GET .*uri="/v2/[^"]*/blobs/sha256:([0-9a-f]{12})', line)
        if "response completed" in line and m:
            n = int(re.search(r"http.response.written=(\d+)", line).group(1))
            sent += n
            gets, total = blobs.get(m.group(1), (0, 0))
            blobs[m.group(1)] = (gets + 1, total + n)
    return {"bytes": sent, "blobs": blobs}


def weights(workdir: Path, rounds: int, out: dict) -> None:
    play, floor = ROOT / "bench/weights_fanout.yml", ROOT / "bench/node_state_read.yml"
    log = workdir / "hub-proxy.log"
    log.touch()
    proxy = subprocess.Popen([sys.executable, str(ROOT / "bench/counting_proxy.py"), "--listen", HUB_PROXY,
                              "--upstream", os.environ.get("INFEROPS_HUB_ENDPOINT", "http://127.0.0.1:5090"),
                              "--log", str(log)])
    try:
        print("\nweights: the runtime, the image and the site registry on %s (not timed)" % NODES[0], flush=True)
        playbook(weights_inventory(workdir, 9), ROOT / "playbooks/site.yml", "--tags", "runtime,image")
        results, model_bytes = {}, 0
        for size in (3, 9):
            inv = weights_inventory(workdir, size)
            forget_weights(size)
            mark, since = len(log.read_text().splitlines()), time.time() - 1
            seconds, report = json_playbook(inv, play)
            fetched = task_results(report, "Fetch the missing weights from the site store")
            record = json.loads(subprocess.run(["docker", "exec", NODES[0], "cat", "/var/lib/inferops-vllm/model.json"],
                                               capture_output=True, text=True, check=True).stdout)
            model_bytes = record["current"]["bytes"]
            hub, served_log = hub_bytes(log, mark), served_bytes(since)
            served = served_log["bytes"]
            reported = sum(r.get("fetched_bytes", 0) for r in fetched.values())
            fetched = {h: r for h, r in fetched.items() if not r.get("skipped")}
            results[size] = {"model_bytes": model_bytes, "hub": hub, "registry_served_bytes": served,
                             "registry_blobs": served_log["blobs"], "module_fetched_bytes": reported,
                             "module_fetched_per_node": {h: r.get("fetched_bytes") for h, r in fetched.items()},
                             "nodes_fetched": len(fetched), "seconds": seconds,
                             "upstream_ratio": hub["files"] / model_bytes, "upstream_total_ratio": hub["total"] / model_bytes,
                             "served_ratio": served / model_bytes, "hub_baseline_bytes": size * model_bytes}
            r = results[size]
            print("  %d nodes: upstream %d file bytes (%.2fx the model, %d bytes) + %d API bytes (%.3fx in all);"
                  " hub baseline %d (%dx); registry served %d (%.2fx), model_fetch reports %d over %d nodes; %.1f s"
                  % (size, hub["files"], r["upstream_ratio"], model_bytes, hub["api"], r["upstream_total_ratio"],
                     size * model_bytes, size, served, r["served_ratio"], reported, len(fetched), seconds), flush=True)
            print("    registry GETs per blob (gets, bytes): %s" % served_log["blobs"], flush=True)
        # the re-run of a staged 3-node cluster against one node_state read per node
        inv = weights_inventory(workdir, 3)
        json_playbook(inv, play)  # nodes 1-3 hold the weights from the 9-node run: a re-run already (not timed)
        runs = {"rerun": [], "node_state": []}
        moved, hub_rerun = [], 0
        since = time.time() - 1
        for _round in range(rounds):
            mark = len(log.read_text().splitlines())
            seconds, report = json_playbook(inv, play)
            runs["rerun"].append(seconds)
            hub_rerun += hub_bytes(log, mark)["total"]
            checks = task_results(report, "Read the node's weights and its cache filesystem")
            fetched = task_results(report, "Fetch the missing weights from the site store")
            moved.append({"nodes": len(checks), "missing_bytes": sum(c.get("missing_bytes") or 0 for c in checks.values()),
                          "fetched_bytes": sum(f.get("fetched_bytes", 0) for f in fetched.values()),
                          "fetch_skipped": all(f.get("skipped") for f in fetched.values()),
                          "up_to_date": all(c.get("up_to_date") for c in checks.values())})
            runs["node_state"].append(json_playbook(inv, floor)[0])
        served_rerun = served_bytes(since)["bytes"]
        rerun = {"rerun_s": statistics.median(runs["rerun"]), "node_state_s": statistics.median(runs["node_state"]),
                 "ratio": statistics.median(a / b for a, b in zip(runs["rerun"], runs["node_state"])),
                 "runs": runs, "moved": moved, "hub_bytes": hub_rerun,
                 "registry_served_bytes": served_rerun}
        print("  re-run at 3 nodes: %.1f s against one node_state read per node %.1f s, ratio %.2f (median of %d);"
              " model_fetch check on %s nodes: missing %s bytes, fetch skipped on every node: %s, up to date: %s;"
              " hub bytes %d, registry blob bytes %d"
              % (rerun["rerun_s"], rerun["node_state_s"], rerun["ratio"], rounds, [m["nodes"] for m in moved],
                 [m["missing_bytes"] for m in moved], all(m["fetch_skipped"] for m in moved),
                 all(m["up_to_date"] for m in moved), hub_rerun, served_rerun), flush=True)
        out["weights"] = {"fanout": results, "rerun_3": rerun, "load": open("/proc/loadavg").read().split()[:3]}
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)


def converge27(workdir: Path, rounds: int, out: dict) -> None:
    """The shipped settings at 3 and 27 nodes (molecule/bench27's eighteen nodes beside molecule/bench's nine),
    interleaved as in converge: the ratio at each size and the 27/3 growth of the ratio."""
    site, ping = ROOT / "playbooks/site.yml", ROOT / "bench/facts_ping.yml"
    inventories = {size: inventory(workdir, size, mirror=False, fleet=True) for size in (3, 27)}
    print("converging the three clusters of 27 nodes once (not timed)", flush=True)
    playbook(inventories[27], site, "--skip-tags", "smoke")
    runs = {size: {"site": [], "ping": []} for size in inventories}
    for _round in range(rounds):
        for size, inv in inventories.items():
            runs[size]["site"].append(playbook(inv, site, "--skip-tags", "smoke"))
            runs[size]["ping"].append(playbook(inv, ping))
    result = {}
    for size, r in runs.items():
        result[size] = {"site_s": statistics.median(r["site"]), "facts_ping_s": statistics.median(r["ping"]),
                        "ratio": statistics.median(s / p for s, p in zip(r["site"], r["ping"])),
                        "site_runs": r["site"], "facts_ping_runs": r["ping"]}
        print("  shipped %2d nodes: site.yml no-op %.1f s, facts+ping %.1f s, ratio %.2f"
              % (size, result[size]["site_s"], result[size]["facts_ping_s"], result[size]["ratio"]), flush=True)
    result["ratio_27_over_3"] = result[27]["ratio"] / result[3]["ratio"]
    print("ratio 27/3: %.2f (median of %d interleaved rounds)" % (result["ratio_27_over_3"], rounds), flush=True)
    out["converge27"] = result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benches", nargs="*", default=["converge", "fanout"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        if "converge" in args.benches:
            converge(Path(tmp), args.rounds, out)
        if "converge27" in args.benches:
            converge27(Path(tmp), args.rounds, out)
        if "fanout" in args.benches:
            fanout(Path(tmp), out)
        if "weights" in args.benches:
            weights(Path(tmp), args.rounds, out)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

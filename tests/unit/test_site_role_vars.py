"""playbooks/site.yml checks every role's inventory variables in its plan play, on the controller,
before any host is contacted: one line per wrong value, no spec dump, no later play.
The runs are judged from the json callback's record (plays, task results, stats), not from the words printed."""
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller.plan_run import SITE_ROLES
from site_playbook import SITE, site_roles

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")


def run_site(inventory, *extra):
    """site.yml, and its json record: {"plays": [{"play", "tasks": [{"task", "hosts": {host: result}}]}], "stats"}."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    env.pop("INFEROPS_LAB_IMAGE", None)
    result = subprocess.run([PLAYBOOK, "-i", str(inventory), str(SITE), *extra],
                            cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result, json.loads(result.stdout)


def results(record):
    """Every host's result of every task that ran."""
    return [res for play in record["plays"] for task in play["tasks"] for res in task["hosts"].values()]


def test_the_plan_checks_the_roles_site_yml_runs():
    assert set(SITE_ROLES) == set(site_roles()) - {"cluster_plan"}


def test_bad_role_variables_stop_site_yml_at_the_plan(tmp_path):
    inv = tmp_path / "inv"
    (inv / "group_vars/bad").mkdir(parents=True)
    # hosts that cannot be reached: any contact would show as unreachable
    (inv / "hosts.yml").write_text(
        "all:\n  vars: {ansible_host: 127.0.0.1, ansible_port: 1, ansible_connection: ssh}\n"
        "  children:\n    vllm_clusters:\n      children:\n        bad:\n"
        "    bad:\n      hosts:\n        gpu-a: {vllm_control_address: 10.0.0.1}\n"
        "        gpu-b: {vllm_control_address: 10.0.0.2, container_runtime_docker_source: podman}\n")
    (inv / "group_vars/bad/vllm.yml").write_text(
        "vllm_cluster: bad\nvllm_version: '0.32.0'\nvllm_model_revision: 0123456789abcdef0123456789abcdef01234567\n"
        "vllm_gpu_model: H200\nvllm_fabric: infiniband\n"
        "vllm_image: vllm/vllm-openai@sha256:%s\nvllm_api_key: k\nvllm_model_registry: 10.0.0.5:5000\n"
        "smoke_test_tool_trials: many\nsmoke_test_suites: [text, typo]\n"
        "fabric_check_timeout: '{{ needs_a_fact }}'\n".replace("%s", "ab" * 32))   # unresolvable yet: left to its role
    result, record = run_site(inv)
    assert result.returncode != 0 and "argument_spec_data" not in result.stdout + result.stderr
    failed = [res for res in results(record) if res.get("failed")]
    assert len(failed) == 1 and failed[0]["action"] == "inferops.vllm.cluster_plan", failed
    # one line per wrong value, each whole (no spec dump, no argument_spec_data); nothing about the unresolvable one
    assert failed[0]["msg"] == "inferops.vllm launch plan: 3 refusals, listed below; no host was touched"
    assert sorted(failed[0]["refusals"]) == sorted((
        "smoke_test_tool_trials='many' (hosts gpu-a, gpu-b): must be a whole number (role smoke_test). "
        "Fix: set a whole number, e.g. 20",
        "smoke_test_suites=['text', 'typo'] (hosts gpu-a, gpu-b): has 'typo', not one of text, vision, "
        "long_context, tools, load (role smoke_test). Fix: set a list of values from text, vision, long_context, "
        "tools, load",
        "container_runtime_docker_source='podman' (host gpu-b): not one of distro, docker "
        "(role container_runtime). Fix: set one of distro, docker"))
    assert failed[0]["variable"] == failed[0]["refusals"][0].split("=", 1)[0]   # the first refusal's, for tools
    # no later play started (none gathers facts or touches a node), and no host was contacted
    site_plays = [play["name"] for play in yaml.safe_load(SITE.read_text())]
    assert [play["play"]["name"] for play in record["plays"]] == site_plays[:2]
    assert all(stats["unreachable"] == 0 for stats in record["stats"].values()), record["stats"]


def test_a_clean_inventory_passes_site_yml_plan_play():
    # the plan play (tagged always) and the roles' always tasks run; none contacts a host
    result, record = run_site(ROOT / "inventories/example-h200-ib", "--tags", "no_such_tag",
                              "-e", "vllm_image=vllm/vllm-openai@sha256:" + "ab" * 32, "-e", "ansible_host=127.0.0.1",
                              "-e", "ansible_port=1", "-e", "ansible_connection=ssh")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    hosts = {"h200-01", "h200-02", "h200-03", "h200-04"}
    assert all(stats["failures"] == 0 and stats["unreachable"] == 0 for stats in record["stats"].values()), \
        record["stats"]
    assert set(record["stats"]) == hosts | {"localhost"}
    # every node took its own launch from the plan: one rank per node of its cluster
    taken = {host: res["ansible_facts"]["vllm_launch"] for play in record["plays"] for task in play["tasks"]
             for host, res in task["hosts"].items() if "vllm_launch" in res.get("ansible_facts", {})}
    assert set(taken) == hosts
    by_cluster = {}
    for launch in taken.values():
        by_cluster.setdefault(launch["cluster"]["name"], []).append(launch["rank"])
    assert all(sorted(ranks) == list(range(len(ranks))) for ranks in by_cluster.values()), by_cluster

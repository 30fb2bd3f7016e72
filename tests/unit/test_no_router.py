"""Sites without routers: an upgrade or rolling restart stops each cluster no router fronts while it moves.
The decision (module_utils/controller/rollout.py), the plan's note per cluster, and the refusal of upgrade.yml and
rolling_restart.yml before any host is touched unless vllm_rollout_allow_downtime accepts it. The playbook runs
are judged from the json callback's record, and never reach a host: the refusal comes first, and past it the
ssh executable is /bin/false."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import rollout

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")
IMAGE = "registry.example/vllm/vllm-openai@sha256:" + "1" * 64
K3 = {"name": "k3", "endpoint": "http://10.0.0.1:8000", "head": "gpu-a"}
K25 = {"name": "k25", "endpoint": "http://10.0.1.1:8000", "head": "gpu-c"}


# --- the decision ------------------------------------------------------------------------------------------

def test_a_router_with_its_defaults_fronts_every_cluster():
    assert rollout.unrouted([K3, K25, K3], [{}]) == []
    assert rollout.unrouted([K3, K25, K3], [{"vllm_router_workers": [], "vllm_router_clusters": []}]) == []


def test_without_routers_every_cluster_is_unrouted_once():
    assert rollout.unrouted([K3, K25, K3, K25], []) == ["k25", "k3"]


@pytest.mark.parametrize("router,bare", [
    ({"vllm_router_clusters": ["k3"]}, ["k25"]),
    ({"vllm_router_workers": ["http://10.0.1.1:8000/"]}, ["k3"]),            # a trailing slash is the same worker
    ({"vllm_router_workers": ["http://10.9.9.9:8000"], "vllm_router_clusters": ["k3"]}, ["k25", "k3"]),  # workers win
    ({"vllm_router_workers": ["not a url"]}, ["k25", "k3"]),
])
def test_a_router_fronts_what_its_worker_list_holds(router, bare):
    assert rollout.unrouted([K3, K25], [router]) == bare


def test_two_routers_together_front_both():
    assert rollout.unrouted([K3, K25], [{"vllm_router_clusters": ["k3"]}, {"vllm_router_clusters": ["k25"]}]) == []


def test_the_refusal_is_one_line_with_the_variable_the_value_what_happens_and_the_fix():
    [line] = rollout.downtime_problems([K3, K25], [], None)
    assert line.startswith("vllm_rollout_allow_downtime=False (clusters k25, k3): no router fronts these clusters, "
                           "so an upgrade stops each of them while it moves")
    assert "Fix: add a vllm_routers group" in line and "vllm_rollout_allow_downtime: true" in line
    assert "\n" not in line
    [restart] = rollout.downtime_problems([K3], [{"vllm_router_clusters": ["k25"]}], "false", "restart")
    assert restart.startswith("vllm_rollout_allow_downtime='false' (cluster k3): no router fronts this cluster, "
                              "so a rolling restart stops it while it moves")


@pytest.mark.parametrize("allow", [True, "true", "yes", "True", 1, "on"])
def test_accepted_downtime_passes(allow):
    assert rollout.downtime_problems([K3, K25], [], allow) == []


@pytest.mark.parametrize("allow", [None, False, "false", "no", 0, ""])
def test_routers_in_front_pass_whatever_the_variable(allow):
    assert rollout.downtime_problems([K3, K25], [{}], allow) == []


@pytest.mark.parametrize("allow", ["maybe", 2, [True], {"a": 1}])
def test_a_value_that_is_not_a_boolean_is_refused_even_with_routers(allow):
    [line] = rollout.downtime_problems([K3], [{}], allow)
    assert line.startswith("vllm_rollout_allow_downtime=%r (the upgrade): not a boolean. Fix: " % (allow,))


def test_the_plan_notes_each_unrouted_cluster_unless_accepted_there():
    notes = rollout.downtime_notes([K3, K25, K3], [], lambda name: name == "k25")
    assert notes == ["cluster k3: upgrades and rolling restarts stop this cluster while it moves (no router in front "
                     "of it); set vllm_rollout_allow_downtime: true to accept"]
    assert rollout.downtime_notes([K3, K25], [{}], lambda name: False) == []


# --- the playbooks ------------------------------------------------------------------------------------------

def run(playbook, inventory, tmp_path, *extra):
    """A playbook of the collection and its json record; the ssh executable is /bin/false, so a task that would
    reach a node fails at once without any connection (and a rollout report would go to tmp_path)."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    env.pop("INFEROPS_LAB_IMAGE", None)
    result = subprocess.run([PLAYBOOK, "-i", str(inventory), str(ROOT / "playbooks" / playbook), "-e",
                             "vllm_image=%s" % IMAGE, "-e", "ansible_ssh_executable=/bin/false",
                             "-e", "vllm_rollout_report_dir=%s" % tmp_path] + list(extra),
                            cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result, json.loads(result.stdout)


def tasks_run(record):
    """(play, task name, {host: result}) for every task that ran."""
    return [(play["play"]["name"], task["task"]["name"], task["hosts"])
            for play in record["plays"] for task in play["tasks"]]


def failures(record):
    return [res.get("msg") for _play, _task, hosts in tasks_run(record) for res in hosts.values() if res.get("failed")]


NO_ROUTERS = ROOT / "inventories/example-h200-ib"


@pytest.mark.parametrize("playbook,action", [("upgrade.yml", "an upgrade"), ("rolling_restart.yml", "a rolling restart")])
def test_a_site_without_routers_is_refused_before_any_host(playbook, action, tmp_path):
    result, record = run(playbook, NO_ROUTERS, tmp_path)
    assert result.returncode != 0
    [msg] = failures(record)
    assert msg.startswith("vllm_rollout_allow_downtime=False (clusters k25_dep, k3_tp_pp): no router fronts these "
                          "clusters, so %s stops each of them while it moves" % action)
    assert "\n" not in msg
    # only the plan play ran, and nothing in it touches a node
    assert {play for play, _task, _hosts in tasks_run(record)} == {"Compile every node's vLLM launch"}


def test_accepted_downtime_gets_past_the_check(tmp_path):
    result, record = run("upgrade.yml", NO_ROUTERS, tmp_path, "-e", "vllm_rollout_allow_downtime=true")
    ran = tasks_run(record)
    assert [hosts for _play, task, hosts in ran if task.endswith("Refuse downtime that is not accepted")][0]
    assert not [msg for msg in failures(record) if msg and "vllm_rollout_allow_downtime" in msg]
    # the next play started (and failed at its first task that needs a node: ssh is /bin/false here)
    assert "Pull the new image on every node" in {play for play, _task, _hosts in ran}
    assert result.returncode != 0


def test_the_plan_says_it_for_each_cluster_and_stays_quiet_once_accepted(tmp_path):
    from test_plan_playbook import run_plan
    note = ("cluster %s: upgrades and rolling restarts stop this cluster while it moves (no router in front of it); "
            "set vllm_rollout_allow_downtime: true to accept")
    result = run_plan(NO_ROUTERS, tmp_path / "a", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    assert result.returncode == 0, result.stdout[-3000:]
    warnings = [w for play in json.loads(result.stdout)["plays"] for task in play["tasks"]
                for res in task["hosts"].values() for w in res.get("warnings") or ()]
    assert note % "k25_dep" in warnings and note % "k3_tp_pp" in warnings
    result = run_plan(NO_ROUTERS, tmp_path / "b", "-e", "vllm_rollout_allow_downtime=true",
                      ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    assert result.returncode == 0 and "vllm_rollout_allow_downtime" not in result.stdout


def test_the_lab_has_its_router_in_front_of_both_clusters(tmp_path):
    """The lab's upgrade and rolling restart (tests/lab/day_two.py) run behind the router: no note, not refused."""
    from test_plan_playbook import image_for, run_plan
    lab = ROOT / "inventories/lab"
    result = run_plan(lab, tmp_path, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "vllm_rollout_allow_downtime" not in result.stdout
    _result, record = run("rolling_restart.yml", lab, tmp_path / "reports", "-e", "vllm_image=%s" % image_for(lab), "--limit", "lab,vllm_routers")
    assert not [msg for msg in failures(record) if msg and "vllm_rollout_allow_downtime" in msg]
    assert "Restart the clusters one batch at a time" in {play for play, _task, _hosts in tasks_run(record)}

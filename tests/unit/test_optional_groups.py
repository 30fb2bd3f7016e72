"""vllm_routers and vllm_prometheus are optional: a site without them gets no "Could not match supplied host
pattern" warning from site.yml, upgrade.yml or rolling_restart.yml, their plays still run where the groups exist,
and a group whose name is close to a missing optional group is warned about by the plan."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import fleet

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")
PLAYBOOKS = ("site.yml", "upgrade.yml", "rolling_restart.yml")


def list_hosts(inventory, playbook, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env.pop("INFEROPS_LAB_IMAGE", None)
    return subprocess.run([PLAYBOOK, "-i", str(inventory), str(ROOT / "playbooks" / playbook), "--list-hosts",
                           *extra], cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=120)


def play_hosts(stdout):
    """{play name: [hosts]} from --list-hosts."""
    plays, name = {}, None
    for line in stdout.splitlines():
        text = line.strip()
        if text.startswith("play #"):
            name = text.split(": ", 1)[1].split("\t")[0]
            plays[name] = []
        elif name and line.startswith("      ") and not text.startswith(("pattern:", "hosts (")):
            plays[name].append(text)
    return plays


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_no_warning_for_absent_optional_groups(playbook):
    result = list_hosts(ROOT / "inventories/example-h200-ib", playbook)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    assert "Could not match supplied host pattern" not in out and "WARNING" not in out, out[-3000:]
    plays = play_hosts(result.stdout)
    assert plays["Find the routers"] == []
    if playbook == "site.yml":
        assert plays["Run Prometheus for the clusters"] == []
        assert sorted(plays["Set the site's proxy on the nodes"]) == ["h200-01", "h200-02", "h200-03", "h200-04"]


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_the_optional_plays_run_where_the_groups_exist(playbook):
    result = list_hosts(ROOT / "inventories/lab", playbook)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    plays = play_hosts(result.stdout)
    assert plays["Find the routers"] == ["lab-node1"]
    if playbook == "site.yml":
        assert plays["Put the router in front of the clusters"] == ["lab-node1"]
        assert plays["Run Prometheus for the clusters"] == ["lab-node1"]
        assert len(plays["Set the site's proxy on the nodes"]) == 4


def test_syntax_check_passes():
    for playbook in PLAYBOOKS:
        result = list_hosts(ROOT / "inventories/example-h200-ib", playbook, "--syntax-check")
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]


def test_a_group_named_like_a_missing_optional_group_is_warned_about():
    groups = {"all": ["n1", "r1"], "vllm_clusters": ["n1"], "c1": ["n1"], "vllm_router": ["r1"], "monitoring": ["r1"]}
    warned = fleet.optional_group_warnings(groups)
    assert len(warned) == 1 and warned[0].startswith("group vllm_router (hosts r1) looks like vllm_routers")
    assert fleet.optional_group_warnings(dict(groups, vllm_routers=["r1"])) == []
    assert fleet.optional_group_warnings({"all": ["n1"], "vllm_clusters": ["n1"], "c1": ["n1"]}) == []

"""playbooks/site.yml checks every role's inventory variables in its plan play, on the controller,
before any host is contacted: one line per wrong value, no spec dump, no later play."""
import os
import re
import subprocess
import sys
from pathlib import Path

from ansible_collections.inferops.vllm.plugins.action.cluster_plan import SITE_ROLES

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")


def run_site(inventory, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env.pop("INFEROPS_LAB_IMAGE", None)
    return subprocess.run([PLAYBOOK, "-i", str(inventory), str(ROOT / "playbooks/site.yml"), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=120)


def test_the_plan_checks_the_roles_site_yml_runs():
    named = set(re.findall(r"inferops\.vllm\.(\w+)", (ROOT / "playbooks/site.yml").read_text()))
    assert set(SITE_ROLES) == named - {"cluster_plan"}


def test_bad_role_variables_stop_site_yml_at_the_plan(tmp_path):
    inv = tmp_path / "inv"
    (inv / "group_vars/bad").mkdir(parents=True)
    # hosts that cannot be reached: any contact would show as UNREACHABLE
    (inv / "hosts.yml").write_text(
        "all:\n  vars: {ansible_host: 127.0.0.1, ansible_port: 1, ansible_connection: ssh}\n"
        "  children:\n    vllm_clusters:\n      children:\n        bad:\n"
        "    bad:\n      hosts:\n        gpu-a: {vllm_control_address: 10.0.0.1}\n"
        "        gpu-b: {vllm_control_address: 10.0.0.2, container_runtime_docker_source: podman}\n")
    (inv / "group_vars/bad/vllm.yml").write_text(
        "vllm_cluster: bad\nvllm_model_revision: 0123456789abcdef0123456789abcdef01234567\nvllm_gpu_model: H200\nvllm_fabric: infiniband\n"
        "smoke_test_tool_trials: many\nsmoke_test_suites: [text, typo]\n"
        "fabric_check_timeout: '{{ needs_a_fact }}'\n")   # unresolvable yet: left to its role
    result = run_site(inv)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    for line in ("smoke_test_tool_trials='many' (hosts gpu-a, gpu-b): must be a whole number (role smoke_test). "
                 "Fix: set a whole number, e.g. 20",
                 "smoke_test_suites=['text', 'typo'] (hosts gpu-a, gpu-b): has 'typo', not one of text, vision, "
                 "long_context, tools, load (role smoke_test). Fix: ",
                 "container_runtime_docker_source='podman' (host gpu-b): not one of distro, docker "
                 "(role container_runtime). Fix: set one of distro, docker"):
        assert "inferops.vllm launch plan: " + line in out, out[-3000:]
    assert "fabric_check_timeout" not in out
    assert "UNREACHABLE" not in out and "unreachable=0" in out
    assert "Check the nodes before any change" not in out and "Gathering Facts" not in out
    assert "argument_spec_data" not in out and "Traceback" not in out


def test_a_clean_inventory_passes_site_yml_plan_play():
    # the plan play (tagged always) and the roles' always tasks run; none contacts a host
    result = run_site(ROOT / "inventories/example-h200-ib", "--tags", "no_such_tag",
                      "-e", "vllm_image=vllm/vllm-openai@sha256:" + "ab" * 32, "-e", "ansible_host=127.0.0.1",
                      "-e", "ansible_port=1", "-e", "ansible_connection=ssh")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Compile every node's vLLM launch" in result.stdout and "failed=0" in result.stdout
    assert "UNREACHABLE" not in result.stdout + result.stderr and "launch plan:" not in result.stdout

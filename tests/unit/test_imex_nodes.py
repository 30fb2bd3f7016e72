"""IMEX node lists are per NVLink domain: on racks joined by InfiniBand each tray's nodes_config.cfg
(roles/nvidia_driver/templates/nodes_config.cfg.j2, fed by the plan's host_stack.imex of the tray's launch)
lists only its own rack's trays."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "roles/nvidia_driver/templates/nodes_config.cfg.j2"
GOLDEN = ROOT / "tests/golden/example-gb300-2rack-ib/k3_2rack"


def nodes_config(host, tmp_path):
    """The node list nvidia_driver writes on `host`, rendered by Ansible from the host's golden launch."""
    launch = tmp_path / "launch.json"
    launch.write_text(json.dumps({"vllm_launch": json.loads((GOLDEN / ("%s.json" % host)).read_text())}))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    msg = ("{{ lookup('template', '%s', template_vars={'nvidia_driver_stack': vllm_launch.host_stack, "
           "'nvidia_driver_imex_group': vllm_launch.host_stack.imex.domain}) }}" % TEMPLATE)
    out = subprocess.run([str(Path(sys.executable).parent / "ansible"), "-i", "localhost,", "-c", "local", "localhost",
                          "-e", "@%s" % launch, "-m", "ansible.builtin.debug", "-a", "msg=" + msg],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip().startswith("10.")]


def test_each_rack_lists_only_its_own_trays(tmp_path):
    assert nodes_config("gb300-a02", tmp_path) == ["10.20.0.11", "10.20.0.12"]
    assert nodes_config("gb300-b01", tmp_path) == ["10.20.1.11", "10.20.1.12"]

"""IMEX node lists are per NVLink domain: on racks joined by InfiniBand each tray's
nodes_config.cfg (roles/nvidia_driver/templates/nodes_config.cfg.j2, fed by the host's
vllm_nvlink_domain) lists only its own rack's trays."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "roles/nvidia_driver/templates/nodes_config.cfg.j2"


def nodes_config(host):
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    msg = "{{ lookup('template', '%s', template_vars={'nvidia_driver_imex_domain': vllm_nvlink_domain}) }}" % TEMPLATE
    out = subprocess.run([str(Path(sys.executable).parent / "ansible"), "-i",
                          str(ROOT / "inventories/example-gb300-2rack-ib"), host, "-m", "ansible.builtin.debug",
                          "-a", "msg=" + msg], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip().startswith("10.")]


def test_each_rack_lists_only_its_own_trays():
    assert nodes_config("gb300-a02") == ["10.20.0.11", "10.20.0.12"]
    assert nodes_config("gb300-b01") == ["10.20.1.11", "10.20.1.12"]

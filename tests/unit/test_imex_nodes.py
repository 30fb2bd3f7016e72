"""IMEX node lists are per NVLink domain: on racks joined by InfiniBand each tray's nodes_config.cfg (written by
nvidia_driver from the plan's host_stack.imex.nodes_config in the tray's launch) lists only its own rack's trays."""
import json
from pathlib import Path

from ansible_collections.inferops.vllm.plugins.module_utils.controller import host_stack

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/golden/example-gb300-2rack-ib/k3_2rack"


def nodes_config(host):
    return json.loads((GOLDEN / ("%s.json" % host)).read_text())["host_stack"]["imex"]["nodes_config"]


def test_each_rack_lists_only_its_own_trays():
    assert nodes_config("gb300-a02").splitlines()[2:] == ["10.20.0.11", "10.20.0.12"]
    assert nodes_config("gb300-b01").splitlines()[2:] == ["10.20.1.11", "10.20.1.12"]


def test_the_file_is_the_one_the_role_template_wrote():
    # byte for byte what roles/nvidia_driver/templates/nodes_config.cfg.j2 rendered before the plan wrote it, so
    # trays set up by an earlier release see no change (and IMEX no restart)
    assert host_stack.imex("nvl72-a", {"nvl72-a": ["10.0.0.2", "10.0.0.1", "10.0.0.2"]})["nodes_config"] == (
        "# Managed by inferops.vllm: the trays of NVLink domain nvl72-a, sorted,\n"
        "# identical on every node of the domain.\n10.0.0.1\n10.0.0.2\n")
    assert host_stack.imex("rack-x", {})["nodes_config"] is None

"""Adding a GPU model is one row of hardware.CATALOG. With a made-up row added (and nothing else), the plan
compiles a launch for it, gpu_facts names it from what the stand-in nvidia-smi / amd-smi print for it, and
the roles' checks accept it: the launch's host_stack (all the host roles read: vendor, GPUs, Fabric Manager,
toolkit, torch build), preflight's problems on it, and the role-variable check of every role site.yml runs.

The one copy left is documentation: the choices of vllm_gpu_model in the cluster_plan role's inventory entry
point, for ansible-doc, which tests/check_argument_specs.py (lint) keeps equal to the catalog."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from clusters import compile_
from standin_tools import standin_tool
from ansible_collections.inferops.vllm.plugins.module_utils.controller.plan_run import role_options
from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, preflight, role_vars
from ansible_collections.inferops.vllm.plugins.module_utils.node import hardware
from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_facts as parse, gpu_read

NEW_NVIDIA = hardware.Accelerator("ZX900", "nvidia", "hopper", False, 8, 192, True, False)
NEW_AMD = hardware.Accelerator("MZ400X", "amd", "cdna4", False, 8, 256, False, False)


@pytest.fixture(name="new_rows")
def fixture_new_rows(monkeypatch):
    for row in (NEW_NVIDIA, NEW_AMD):
        monkeypatch.setitem(hardware.CATALOG, row.model, row)


class Node:
    """What gpu_facts' vendor readers need of the module: the stand-in tool on PATH, run as the module runs it."""

    def __init__(self, tools: Path):
        self.tools = tools

    def get_bin_path(self, name):
        path = self.tools / name
        return str(path) if path.exists() else None

    def run_command(self, args, environ_update=None):
        del environ_update
        done = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)
        return done.returncode, done.stdout, done.stderr


def node_facts(tmp_path: Path, row: hardware.Accelerator) -> dict:
    """gpu_facts' GPU facts of a node whose stand-in tools (as build_repo.py packages them from the catalog
    in memory) describe `row.gpus_per_node` GPUs of `row.model`."""
    profile = tmp_path / "gpu.json"
    profile.write_text(json.dumps({"vendor": row.vendor, "model": row.model, "count": row.gpus_per_node}))
    tool = {"nvidia": "nvidia-smi", "amd": "amd-smi"}[row.vendor]
    (tmp_path / tool).write_text(standin_tool(tool, profile, hardware.CATALOG))
    facts = {"driver_version": None}
    node = Node(tmp_path)
    if row.vendor == "nvidia":
        gpu_read.nvidia(node.run_command, node.get_bin_path, facts, memory_usage=False)
    else:
        gpu_read.amd(node.run_command, node.get_bin_path, facts)
    facts["driver_branch"] = parse.driver_branch(facts["driver_version"]) if row.vendor == "nvidia" else None
    return facts


@pytest.mark.parametrize("row", [a for a in hardware.CATALOG.values() if a.vendor != "cpu"], ids=lambda row: row.model)
def test_every_catalog_row_prints_on_its_standin_tool(tmp_path, row):
    facts = node_facts(tmp_path, row)
    assert (facts["vendor"], facts["model"], facts["count"]) == (row.vendor, row.model, row.gpus_per_node)


def test_without_the_row_the_plan_refuses_the_model():
    with pytest.raises(cluster.ClusterError, match="vllm_gpu_model"):
        compile_(vllm_gpu_model=NEW_NVIDIA.model)


@pytest.mark.usefixtures("new_rows")
def test_the_plan_compiles_a_launch_for_a_new_row():
    launches = compile_(vllm_gpu_model=NEW_NVIDIA.model, vllm_strategy="tp_pp")
    head = launches["n0"]
    assert head["cluster"]["gpu_model"] == NEW_NVIDIA.model and head["cluster"]["vendor"] == "nvidia"
    assert head["args"]["tensor-parallel-size"] == NEW_NVIDIA.gpus_per_node


@pytest.mark.usefixtures("new_rows")
@pytest.mark.parametrize("row", [NEW_NVIDIA, NEW_AMD], ids=lambda row: row.model)
def test_gpu_facts_names_a_new_row_from_the_standin_tool(tmp_path, row):
    facts = node_facts(tmp_path, row)
    assert (facts["vendor"], facts["model"], facts["count"]) == (row.vendor, row.model, row.gpus_per_node)
    assert facts["memory_mib"] == row.memory_gib * 1024


@pytest.mark.usefixtures("new_rows")
@pytest.mark.parametrize("row", [NEW_NVIDIA, NEW_AMD], ids=lambda row: row.model)
def test_the_roles_accept_a_new_row(tmp_path, row):
    # the roles read the launch's host_stack: preflight's one assert finds no problem on the stand-in's GPUs
    stack = compile_(1, vllm_gpu_model=row.model, vllm_strategy="single", vllm_fabric="none")["n0"]["host_stack"]
    assert (stack["vendor"], stack["gpu_model"], stack["gpus"]) == (row.vendor, row.model, row.gpus_per_node)
    assert stack["fabric_manager"] == (row.vendor == "nvidia" and row.nvswitch_board)
    assert stack["toolkit"] == row.vendor and stack["torch_build"] == {"nvidia": "cuda", "amd": "rocm"}[row.vendor]
    assert preflight.node_problems(node_facts(tmp_path, row), "gpu-1", 580, stack) == []
    # no role's argument spec limits the model: the plan's catalog check is the only one
    assert role_vars.check(role_options(), [("gpu-1", {"vllm_gpu_model": row.model})]) == []

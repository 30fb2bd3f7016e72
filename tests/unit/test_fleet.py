"""Issue #26, items 3, 4, 5, 8: checks across clusters and misspelt variables."""
import os

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import fleet, known_vars
from clusters import compile_


# --- 3. one machine under two names, ports on one machine ----------------------------------------------

def test_same_ansible_host_refused_naming_the_hosts():
    lines = fleet.machine_problems({"a": {"ansible_host": "10.0.0.5"}, "b": {"ansible_host": "10.0.0.5"}})
    assert len(lines) == 1 and "hosts a, b" in lines[0] and "Fix:" in lines[0]


def test_same_control_address_in_two_clusters_refused():
    lines = fleet.machine_problems({"a": {"ansible_host": "h1", "vllm_control_address": "10.1.0.5"},
                                    "b": {"ansible_host": "h2", "vllm_control_address": "10.1.0.5"}})
    assert len(lines) == 1 and lines[0].startswith("vllm_control_address='10.1.0.5' (hosts a, b)")


def test_ssh_address_of_one_is_control_address_of_another():
    lines = fleet.machine_problems({"a": {"ansible_host": "10.0.0.5"}, "b": {"vllm_control_address": "10.0.0.5"}})
    assert len(lines) == 1 and "ansible_host or vllm_control_address" in lines[0]


@pytest.mark.parametrize("hosts", [
    {"a": {"ansible_host": "nat.example", "ansible_port": 2201}, "b": {"ansible_host": "nat.example", "ansible_port": 2202}},
    {"a": {"vllm_control_address": "127.0.0.1"}, "b": {"vllm_control_address": "127.0.0.1"}},   # molecule serve
    {"a": {"ansible_host": "10.0.0.1", "vllm_control_address": "10.0.0.1"}},
])
def test_distinct_machines_pass(hosts):
    assert fleet.machine_problems(hosts) == []


def test_api_port_on_the_master_port_refused():
    launches = compile_(vllm_strategy="tp_pp", vllm_port=29501)
    uses = {h: fleet.launch_ports(launch, 29517) for h, launch in launches.items()}
    lines = fleet.port_problems(uses)
    assert len(lines) == 1 and lines[0].startswith("vllm_port and vllm_master_port=29501 (host n0)")


def test_fabric_check_port_counts_on_multi_node_clusters_only():
    one = compile_(n=1, vllm_fabric=None, vllm_port=29517)["n0"]
    assert fleet.port_problems({"n0": fleet.launch_ports(one, 29517)}) == []
    two = compile_(vllm_strategy="dep", vllm_port=29517)["n0"]
    assert "fabric_check_port" in fleet.port_problems({"n0": fleet.launch_ports(two, 29517)})[0]


def test_router_port_on_a_node_refused():
    launch = compile_(vllm_strategy="dep", vllm_port=8080)["n0"]
    settings = {"vllm_router_port": 8080, "vllm_router_prometheus_port": 29000}
    uses = {"n0": fleet.launch_ports(launch, None) + fleet.role_ports(["vllm_routers"], settings.get)}
    assert "the vLLM API and the router" in fleet.port_problems(uses)[0]
    assert fleet.role_ports(["other"], settings.get) == []


def test_metrics_ports_hook(monkeypatch):
    monkeypatch.setattr(fleet, "METRICS_PORTS", [("vllm_clusters", "vllm_exporter_port", "the exporter")])
    uses = fleet.role_ports(["vllm_clusters"], {"vllm_exporter_port": 9400}.get)
    assert uses == [fleet.PortUse(9400, "the exporter", "vllm_exporter_port")]


# --- 4. names that match nothing ----------------------------------------------------------------------

def test_a_cluster_left_out_of_vllm_clusters_is_refused_by_name():
    # vllm_clusters lists lab and a misspelt lab2 (an empty group): lab2's hosts would be skipped silently
    groups = {"all": ["n1", "n2", "n3"], "ungrouped": [], "vllm_clusters": ["n1"], "lab": ["n1"], "lab2": ["n2", "n3"],
              "lab_2": []}
    lines = fleet.cluster_group_problems(groups, {"n1": "lab", "n2": "lab2", "n3": "lab2"}.get)
    assert len(lines) == 1 and "vllm_cluster='lab2' (hosts n2, n3)" in lines[0] and "list group lab2 under" in lines[0]


def test_no_cluster_hosts_refused():
    lines = fleet.cluster_group_problems({"all": ["n1"], "ungrouped": [], "gpu": ["n1"]}, {}.get)
    assert len(lines) == 1 and "every play of the run would be skipped" in lines[0] and "gpu" in lines[0]


# --- 5. misspelt variables ------------------------------------------------------------------------------

def test_misspelt_variables_get_a_suggestion():
    assert known_vars.unknown(["vllm_gpu_modle", "vllm_gpu_model", "smoke_test_tool_trails", "my_own_var",
                               "ansible_host", "inferops_proxy", "vllm_api_key"]) == \
        ["vllm_gpu_modle", "smoke_test_tool_trails"]
    line = known_vars.lines({"n1": ["vllm_gpu_modle"], "n2": ["vllm_gpu_modle"]})[0]
    assert line.startswith("vllm_gpu_modle='<not read>' (hosts n1, n2)") and "did you mean vllm_gpu_model" in line
    assert known_vars.ALLOW in line


def test_known_names_are_derived(tmp_path):
    """A new role's options and prefix are picked up from its directory, without a list to edit."""
    role = tmp_path / "roles" / "vllm_model"
    (role / "meta").mkdir(parents=True)
    (role / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    options:\n      vllm_model_manifest_digest: {type: str}\n")
    (tmp_path / "roles" / "gpu_burn" / "tasks").mkdir(parents=True)
    (tmp_path / "roles" / "gpu_burn" / "tasks" / "main.yml").write_text("- debug: {msg: '{{ gpu_burn_minutes }}'}\n")
    root = str(tmp_path)
    assert "gpu_burn_" in known_vars.prefixes(root)
    assert known_vars.unknown(["vllm_model_manifest_digest", "gpu_burn_minutes", "gpu_burn_minuts"], root) == \
        ["gpu_burn_minuts"]


def test_every_example_and_harness_variable_is_known():
    """What the example inventories and the Molecule harness set is read by something."""
    import yaml
    root = known_vars.ROOT
    names = set()
    for folder, _dirs, files in os.walk(os.path.join(root, "inventories")):
        for name in files:
            if name.endswith(".yml"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    data = yaml.safe_load(handle) or {}
                names |= set(_keys(data))
    assert names and known_vars.unknown(sorted(names)) == []


def _keys(data):
    if isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from _keys(value)
    elif isinstance(data, list):
        for item in data:
            yield from _keys(item)


# --- 8. IMEX ------------------------------------------------------------------------------------------------

def test_imex_true_without_a_channel_warns():
    launches = compile_(vllm_strategy="dep")
    assert "nvidia_driver_imex is true" in fleet.imex_warnings(launches, lambda host: True)[0]
    rack = compile_(vllm_gpu_model="GB300", vllm_fabric="mnnvl", vllm_nvlink_domain="rack1", vllm_strategy="dep")
    assert fleet.imex_warnings(rack, lambda host: True) == []


# --- the playbook: refused before any host, one line each ---------------------------------------------------

def _plan(tmp_path, inventory_text):
    from test_plan_playbook import run_plan
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(inventory_text)
    result = run_plan(inventory, tmp_path / "out")
    # the callback may wrap the message and double its quotes (ansible-core 2.18)
    result.stdout = " ".join(result.stdout.split()).replace("''", "'")
    return result


def test_playbook_refuses_an_inventory_without_cluster_hosts(tmp_path):
    result = _plan(tmp_path, "all:\n  children:\n    vllm_clusters:\n      children:\n        lab_typo: {}\n"
                             "    lab:\n      hosts:\n        n1: {}\n")
    assert result.returncode != 0
    assert "vllm_clusters=[] (inventory): no host is in group vllm_clusters" in result.stdout
    assert "groups with hosts: lab" in result.stdout and "Traceback" not in result.stdout + result.stderr


def test_playbook_refuses_a_cluster_left_out_of_vllm_clusters(tmp_path):
    # c2's group is misspelt under vllm_clusters: its hosts would be skipped without a word
    result = _plan(tmp_path, "all:\n  children:\n    vllm_clusters:\n      children:\n        c1: {}\n        c_2: {}\n"
                             "    c1:\n      hosts:\n        n1: {vllm_cluster: c1}\n"
                             "    c2:\n      hosts:\n        n2: {vllm_cluster: c2}\n")
    assert result.returncode != 0
    assert "vllm_cluster='c2' (hosts n2): the hosts are not in group vllm_clusters" in result.stdout


def test_playbook_refuses_misspelt_variables_and_two_names_for_one_machine(tmp_path):
    text = ("all:\n  children:\n    vllm_clusters:\n      children:\n        c1: {}\n    c1:\n      hosts:\n"
            "        n1: {ansible_host: 10.0.0.1}\n        n2: {ansible_host: 10.0.0.2}\n"
            "      vars: {vllm_cluster: c1, vllm_model_source: hub, vllm_profile: cpu_lab, vllm_fabric: ethernet, vllm_strategy: dp, "
            "vllm_version: 0.32.0, vllm_gpu_modle: H200}\n")
    result = _plan(tmp_path, text)
    assert result.returncode != 0 and "did you mean vllm_gpu_model" in result.stdout
    result = _plan(tmp_path, text.replace("10.0.0.2", "10.0.0.1").replace("vllm_gpu_modle: H200", "x: 1"))
    assert result.returncode != 0 and "ansible_host='10.0.0.1' (hosts n1, n2): one machine" in result.stdout

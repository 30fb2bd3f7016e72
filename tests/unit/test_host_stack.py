"""The launch's host_stack: what the host roles apply, decided once by the plan. Each role's "auto" tunable is
resolved here from what the host sets; the defaults are the roles' own."""
from pathlib import Path

import pytest
import yaml

from clusters import compile_
from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, host_stack, plan

ROOT = Path(__file__).resolve().parents[2]


def stack(n=1, host_overrides=None, **cluster_vars):
    cluster_vars.setdefault("vllm_strategy", "single" if n == 1 else "tp_pp")
    return compile_(n, host_overrides, **cluster_vars)["n0"]["host_stack"]


def test_the_role_settings_defaults_are_the_roles_defaults():
    for name, default in host_stack.ROLE_SETTINGS.items():
        role = next(r for r in ("nvidia_driver", "container_runtime", "fabric_check") if name.startswith(r + "_"))
        value = yaml.safe_load((ROOT / "roles" / role / "defaults/main.yml").read_text())[name]
        assert value == default or (default is None and "{{" in value), name


def test_an_hgx_board_runs_fabric_manager_and_gpudirect_over_infiniband():
    got = stack(2, vllm_gpu_model="H200", vllm_fabric="infiniband")
    assert (got["vendor"], got["gpu_model"], got["gpus"], got["toolkit"]) == ("nvidia", "H200", 8, "nvidia")
    assert got["fabric_manager"] is True and got["imex"] is None
    assert (got["gpudirect"], got["collective"], got["torch_build"]) == ("dmabuf", "nccl", "cuda")


@pytest.mark.parametrize("modules, mode", [("open", "dmabuf"), ("proprietary", "peermem")])
def test_gpudirect_follows_the_kernel_modules(modules, mode):
    got = stack(2, vllm_gpu_model="H200", vllm_fabric="roce", nvidia_driver_kernel_modules=modules)
    assert got["gpudirect"] == mode
    assert stack(2, vllm_gpu_model="H200", vllm_fabric="roce", nvidia_driver_gpudirect_rdma="off")["gpudirect"] == "off"


def test_the_inventory_overrides_an_auto_choice_per_host():
    got = stack(vllm_gpu_model="H200", vllm_fabric="none", nvidia_driver_fabric_manager="false",
                container_runtime_gpu_vendor="none", fabric_check_backend="gloo")
    assert (got["fabric_manager"], got["toolkit"], got["collective"]) == (False, "none", "gloo")
    assert stack(vllm_gpu_model="B200", vllm_gpus_per_node=4)["gpus"] == 4


def rack_vars(fabric, domains):
    """{host: its variables}; domains: {host: (its NVLink domain, its address's last byte)}."""
    return {host: {"vllm_cluster": "c1", "vllm_version": "0.32.0", "vllm_gpu_model": "GB300", "vllm_fabric": fabric, "vllm_strategy": "dep",
                   "vllm_nvlink_domain": domain, "vllm_model_revision": "0" * 40,
                   "vllm_control_address": "10.0.0.%d" % byte} for host, (domain, byte) in domains.items()}


def test_gb300_trays_of_one_rack_run_imex_with_the_racks_peers():
    hostvars = rack_vars("mnnvl", {"t2": ("rack_a", 2), "t1": ("rack_a", 1)})
    hostvars["spare"] = {"ansible_host": "10.0.0.9"}   # a tray of the rack in no cluster is still an IMEX peer
    groups = {"c1": ["t2", "t1"], "rack_a": ["t1", "t2", "spare"]}
    got = plan.compile_cluster("c1", groups, hostvars.__getitem__)["t1"]["host_stack"]
    assert got["imex"] == host_stack.imex("rack_a", {"rack_a": ["10.0.0.1", "10.0.0.2", "10.0.0.9"]})
    assert got["imex"]["peers"] == ["10.0.0.1", "10.0.0.2", "10.0.0.9"]
    assert got["fabric_manager"] is False and got["gpudirect"] == "off"


def test_racks_joined_by_infiniband_each_list_their_own_trays():
    hostvars = rack_vars("infiniband", {"a1": ("rack_a", 1), "b1": ("rack_b", 2)})
    launches = plan.compile_cluster("c1", {"c1": ["a1", "b1"], "rack_a": ["a1"], "rack_b": ["b1"]},
                                    hostvars.__getitem__)
    assert [launches[h]["host_stack"]["imex"] for h in ("a1", "b1")] == [
        host_stack.imex("rack_a", {"rack_a": ["10.0.0.1"]}), host_stack.imex("rack_b", {"rack_b": ["10.0.0.2"]})]
    assert launches["a1"]["host_stack"]["gpudirect"] == "dmabuf"


def test_imex_without_a_domain_group_is_refused_by_the_plan():
    hostvars = {"n1": {"vllm_cluster": "c1", "vllm_version": "0.32.0", "vllm_gpu_model": "H200", "vllm_strategy": "single",
                       "vllm_model_revision": "0" * 40, "nvidia_driver_imex": True,
                       "vllm_model_weight_gb": 0}}   # K3 on one H200 node: capacity off, IMEX is the point
    with pytest.raises(cluster.ClusterError, match="nvidia_driver_imex_domain='' .*names no NVLink domain"):
        plan.compile_cluster("c1", {"c1": ["n1"]}, hostvars.__getitem__)
    hostvars["n1"]["nvidia_driver_imex_domain"] = "rack_x"
    with pytest.raises(cluster.ClusterError, match="there is no group rack_x"):
        plan.compile_cluster("c1", {"c1": ["n1"]}, hostvars.__getitem__)
    assert plan.compile_cluster("c1", {"c1": ["n1"], "rack_x": ["n1"]}, hostvars.__getitem__)["n1"]["host_stack"][
        "imex"]["peers"] == ["n1"]


def test_cpu_and_amd_nodes():
    cpu = stack(vllm_gpu_model="CPU", vllm_fabric="none")
    assert (cpu["toolkit"], cpu["collective"], cpu["torch_build"], cpu["gpudirect"]) == ("none", "gloo", "cpu", "off")
    amd = stack(vllm_gpu_model="MI355X", vllm_fabric="none")
    assert (amd["toolkit"], amd["torch_build"], amd["fabric_manager"], amd["imex"]) == ("amd", "rocm", False, None)


def test_probe_ranks_are_every_rank_with_internal_balancing_else_one():
    assert stack(2, vllm_gpu_model="H200", vllm_strategy="dep")["probe_ranks"] == 16
    assert stack(2, vllm_gpu_model="H200", vllm_strategy="dep", vllm_load_balancing="hybrid")["probe_ranks"] == 1

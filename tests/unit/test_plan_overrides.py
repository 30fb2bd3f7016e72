"""The compiler's override input (plan.compile_cluster overrides, the cluster_plan role's
cluster_plan_overrides): the capacity curve compiles each max-model-len without touching the inventory."""
import copy

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller import plan
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from clusters import members


def inventory(n=2):
    hostvars = dict(members(n, None, vllm_strategy="tp_pp", vllm_max_model_len=8192))
    return {"all": list(hostvars), "c1": list(hostvars), "vllm_clusters": list(hostvars)}, hostvars


def compiled(overrides=None):
    groups, hostvars = inventory()
    before = copy.deepcopy(hostvars)
    out = plan.compile_cluster("c1", groups, hostvars.__getitem__, overrides=overrides)
    assert hostvars == before   # the inventory is read, never changed
    return out


def test_an_override_replaces_the_inventory_value_on_every_node_for_this_compile():
    assert {launch["args"]["max-model-len"] for launch in compiled().values()} == {8192}
    out = compiled({"vllm_max_model_len": 4096})
    assert {launch["args"]["max-model-len"] for launch in out.values()} == {4096}
    # the config file vLLM reads (vllm serve --config) carries the override, not only the flags
    assert {yaml.safe_load(launch["config_yaml"])["max-model-len"] for launch in out.values()} == {4096}


def test_an_override_is_checked_like_the_inventory():
    with pytest.raises(ClusterError) as info:
        compiled({"vllm_max_model_len": "long"})
    assert info.value.variable == "vllm_max_model_len"


@pytest.mark.parametrize("name", ["vllm_port", "vllm_nonsense"])
def test_only_cluster_wide_variables_the_plan_reads_can_be_overridden(name):
    with pytest.raises(ClusterError) as info:
        compiled({name: 1})
    assert info.value.variable == "cluster_plan_overrides" and "vllm_max_model_len" in info.value.fix

"""Cluster membership as the plan sees it: groups, vllm_cluster and vllm_node_rank agree, and a host
left outside its cluster's group is named instead of silently dropped (module_utils/controller/plan.py)."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import plan
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from clusters import members


def inventory(n=3, outside=(), **overrides):
    """groups and hostvars of cluster c1 with n hosts; hosts named in `outside` are not in group c1."""
    hostvars = dict(members(n, overrides.pop("host_overrides", None), vllm_strategy="tp_pp", **overrides))
    in_group = [h for h in hostvars if h not in outside]
    return {"all": list(hostvars), "c1": in_group, "vllm_clusters": in_group}, hostvars


def refused(groups, hostvars, scan_as=None):
    with pytest.raises(ClusterError) as info:
        if scan_as is None:
            plan.compile_inventory(groups, hostvars)
        else:
            plan.compile_cluster("c1", groups, hostvars.__getitem__, lambda h: hostvars[h].get("vllm_cluster"),
                                 scan_as=scan_as)
    assert "Fix:" in str(info.value) and "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize("scan_as", [None, "n1", "n0"])
def test_a_head_outside_its_group_is_named_not_dropped(scan_as):
    err = refused(*inventory(outside=("n0",)), scan_as=scan_as)
    assert err.variable == "vllm_cluster" and err.where == "host n0"
    assert "not a member of group c1 (members: n1, n2)" in err.problem
    assert err.fix == "add n0 to group c1 in the inventory, or remove vllm_cluster from its variables"


def test_with_ranks_the_missing_host_is_named_not_a_renumbering():
    ranks = {"n%d" % i: {"vllm_node_rank": i} for i in range(3)}
    groups, hostvars = inventory(outside=("n1",), host_overrides=ranks)
    err = refused(groups, hostvars, scan_as="n0")
    assert err.where == "host n1" and "number" not in err.fix
    err = refused(groups, hostvars, scan_as="n2")   # the ranks no longer add up: the follower names it too
    assert err.where == "host n1"


def test_a_follower_does_not_scan_the_inventory_when_its_cluster_compiles():
    groups, hostvars = inventory(outside=("n2",))
    out = plan.compile_cluster("c1", groups, hostvars.__getitem__, lambda h: hostvars[h].get("vllm_cluster"),
                               scan_as="n1")
    assert sorted(out) == ["n0", "n1"]   # the head's compile refuses it; plan.yml is any_errors_fatal


def test_a_member_naming_another_cluster_is_refused():
    groups, hostvars = inventory()
    hostvars["n1"] = dict(hostvars["n1"], vllm_cluster="c2")
    err = refused(groups, hostvars, scan_as="n0")
    assert err.where == "host n1" and "says it belongs to 'c2'" in err.problem


def test_the_inventory_path_matches_the_action_path():
    groups, hostvars = inventory(n=2)
    assert plan.compile_inventory(groups, hostvars)["c1"] == plan.compile_cluster("c1", groups, hostvars.__getitem__)


# --- vllm_node_rank inside the group ------------------------------------------------------

def rank_refused(ranks, match):
    groups, hostvars = inventory(n=len(ranks), host_overrides={"n%d" % i: {"vllm_node_rank": r}
                                                               for i, r in enumerate(ranks)})
    err = refused(groups, hostvars)
    assert err.variable == "vllm_node_rank" and match in str(err), str(err)
    return err


def test_a_cluster_without_a_head_is_refused():
    err = rank_refused([1, 2], "vllm_node_rank=[1, 2] (hosts n0=1, n1=2 of cluster c1): no host has rank 0, so "
                               "the cluster has no head")
    assert "vllm_node_rank: 0" in err.fix


def test_a_gap_in_the_ranks_names_the_host_past_the_end():
    err = rank_refused([0, 3, 1], "vllm_node_rank=3 (host n1 of cluster c1): the cluster has 3 hosts (ranks 0..2) "
                                  "and no host has rank 2")
    assert "0 (head) to 2 without gaps" in err.fix


def test_a_duplicate_rank_names_both_hosts():
    rank_refused([0, 1, 1], "vllm_node_rank=1 (hosts n1, n2 of cluster c1): each rank belongs to one host")


def test_a_rank_that_is_not_a_number_names_its_host():
    rank_refused([0, "one"], "vllm_node_rank='one' (host n1): must be a whole number >= 0")


def test_the_plan_reads_the_driver_variables_it_checks():
    assert plan.wanted("nvidia_driver_branch") and plan.wanted("nvidia_driver_reboot")
    assert not plan.wanted("nvidia_driver_version")


def test_the_plan_reads_only_the_variables_it_checks():
    assert plan.wanted("vllm_fabric") and plan.wanted("vllm_nvlink_domain") and plan.wanted("ansible_host")
    assert plan.wanted("vllm_api_key")   # looked up by name only: the action notes that it is set
    assert not plan.wanted("vllm_image_registry_password") and not plan.wanted("vllm_serve_container_name")


def _two_racks(groups_for):
    hostvars = dict(members(4, {"n0": {"vllm_nvlink_domain": "ra"}, "n1": {"vllm_nvlink_domain": "ra"},
                                "n2": {"vllm_nvlink_domain": "rb"}, "n3": {"vllm_nvlink_domain": "rb"}},
                            vllm_gpu_model="GB300", vllm_strategy="dep"))
    hosts = list(hostvars)
    return dict({"all": hosts, "c1": hosts, "vllm_clusters": hosts}, **groups_for), hostvars


def test_racks_compile_when_each_domain_is_its_group():
    groups, hostvars = _two_racks({"ra": ["n0", "n1"], "rb": ["n2", "n3"]})
    assert plan.compile_inventory(groups, hostvars)["c1"]["n0"]["cluster"]["nvlink_domains"]["rb"] == ["n2", "n3"]


def test_a_domain_that_is_no_group_is_refused_for_imex():
    err = refused(*_two_racks({"ra": ["n0", "n1"]}))
    assert err.variable == "vllm_nvlink_domain" and err.value == "rb" and "there is no group rb" in str(err)


def test_a_host_outside_its_domain_group_is_refused_for_imex():
    err = refused(*_two_racks({"ra": ["n0"], "rb": ["n2", "n3"]}))
    assert err.where == "host n1" and "not in group ra" in str(err)

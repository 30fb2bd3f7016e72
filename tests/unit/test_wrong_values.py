"""Both type checkers (the plan's VAR_TYPES in cluster.py, the roles' argument specs in role_vars.py) group wrong
values the same way, through module_utils/controller/wrong_values.py: one line per variable and value, its hosts named."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, role_vars, wrong_values
from clusters import members

HOSTS = ["n%d" % i for i in range(6)]


@pytest.mark.parametrize("hosts,shown", [
    (HOSTS[:1], "host n0"), (HOSTS[:4], "hosts n0, n1, n2, n3"), (HOSTS, "hosts n0, n1, n2 and 3 more"),
])
def test_hosts_are_named_up_to_four(hosts, shown):
    assert wrong_values.shown_hosts(hosts) == shown


def test_both_checkers_name_many_hosts_alike():
    with pytest.raises(cluster.ClusterError) as info:
        cluster.build("c1", members(6, vllm_max_model_len="lots"))
    assert info.value.where == "hosts n0, n1, n2 and 3 more"
    options = {"smoke_test_tool_trials": ("smoke_test", {"type": "int", "default": 20})}
    [line] = role_vars.check(options, [(host, {"smoke_test_tool_trials": "many"}) for host in HOSTS])
    assert line.startswith("smoke_test_tool_trials='many' (hosts n0, n1, n2 and 3 more): ")


def odd(_variable, value):
    return ("is odd", "make it even") if value % 2 else None


def test_values_are_grouped_by_variable_and_value_in_the_order_first_seen():
    found = wrong_values.gather([("a", [("x", 1), ("y", 3), ("z", None)]), ("b", [("y", 3), ("x", 5), ("x", 2)])], odd)
    assert [(w.variable, w.value, w.hosts, w.where) for w in found] == [
        ("x", 1, ("a",), "host a"), ("y", 3, ("a", "b"), "hosts a, b"), ("x", 5, ("b",), "host b")]

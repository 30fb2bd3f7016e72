"""The host firewall compiled from the flow table (module_utils/controller/firewall.py): what each host's ruleset
filters and what it never touches. tests/integration/test_firewall.py loads these rulesets into real nftables."""

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import firewall, flows

ADDRESSES = {"a": "10.0.0.1", "b": "10.0.0.2", "r": "10.0.0.9", "v6": "fd00::2", "dns": "gpu-b.example"}


def flow(port, variable, reached_by, binds=flows.EVERY, host="a"):
    return flows.Flow(host, port, "tcp", "listener " + port, variable, binds, tuple(reached_by))


def test_peers_only_ports_accept_the_peers_and_reset_everyone_else():
    rules = firewall.ruleset("a", [flow("13345", "vllm_dp_rpc_port", ["a", "b"])], ADDRESSES, [])
    assert 'tcp dport 13345 ip saddr { 10.0.0.1, 10.0.0.2 } accept comment "listener 13345"' in rules
    assert 'tcp dport 13345 reject with tcp reset' in rules
    assert "policy accept;" in rules and "ct state established,related accept" in rules


def test_ssh_is_never_filtered_and_loopback_listeners_need_no_rule():
    rules = firewall.ruleset("a", [flow("22", "ansible_port", [flows.CONTROLLER]),
                                   flow("9100", "vllm_exporters_node_exporter_port", ["r"], binds="127.0.0.1")],
                             ADDRESSES, [])
    assert "dport 22" not in rules and "dport 9100" not in rules


def test_outside_listeners_take_the_allow_list_or_stay_open():
    api = flow("8000", "vllm_port", ["b", "r", flows.CONTROLLER, "clients with the API key"])
    closed = firewall.ruleset("a", [api], ADDRESSES, firewall.allow_networks(["192.0.2.0/24", "10.0.0.5"]))
    assert "ip saddr { 192.0.2.0/24, 10.0.0.5, 10.0.0.2, 10.0.0.9 } accept" in closed
    opened = firewall.ruleset("a", [api], ADDRESSES, [])
    assert "dport 8000" not in opened.replace("# tcp 8000", "") and "# tcp 8000 (listener 8000) stays open" in opened


def test_ipv6_peers_get_an_ip6_rule_and_dns_names_leave_the_port_open_with_why():
    rules = firewall.ruleset("a", [flow("29501", "vllm_master_port", ["a", "v6"])], ADDRESSES, [])
    assert "ip saddr { 10.0.0.1 } accept" in rules and "ip6 saddr { fd00::2 } accept" in rules
    named = firewall.ruleset("a", [flow("29501", "vllm_master_port", ["a", "dns"])], ADDRESSES, [])
    assert "stays open: dns's address 'gpu-b.example' is not an IP address" in named


def test_the_table_is_replaced_whole_and_only_it():
    rules = firewall.ruleset("a", [], ADDRESSES, [])
    lines = rules.splitlines()
    assert lines[2:5] == ["table inet inferops_vllm {}", "delete table inet inferops_vllm", "table inet inferops_vllm {"]
    assert sum(line.startswith("table ") for line in lines) == 2


@pytest.mark.parametrize("value", ["10.0.0.0/8", ["10.0.0.300"], [{"a": 1}]])
def test_a_bad_allow_list_is_one_line_with_the_fix(value):
    with pytest.raises(firewall.FirewallError) as exc:
        firewall.allow_networks(value)
    assert "vllm_firewall_allow" in str(exc.value) and "\n" not in str(exc.value)


def test_an_open_api_left_open_gets_a_note_with_the_fix():
    api = flow("8000", "vllm_port", ["r", flows.CONTROLLER, "anyone who reaches it (no API key)"])
    assert "set vllm_firewall_allow" in firewall.open_notes([api], ADDRESSES, {})[0]
    assert firewall.open_notes([api], ADDRESSES, {"a": firewall.allow_networks(["10.0.0.5"])}) == []


def test_the_peers_of_a_cluster_and_its_deployment_reach_each_other_on_any_port():
    def launch(name, nodes, pd=None):
        return {"cluster": {"name": name, "nodes": nodes, "pd": pd}}
    launches = {"p1": launch("pre", ["p1", "p2"], {"deployment": "d"}), "p2": launch("pre", ["p1", "p2"], {"deployment": "d"}),
                "d1": launch("dec", ["d1"], {"deployment": "d"}), "x1": launch("other", ["x1", "x2"]),
                "x2": launch("other", ["x1", "x2"])}
    mates = firewall.peers(launches)
    assert mates == {"p1": ["d1", "p2"], "p2": ["d1", "p1"], "d1": ["p1", "p2"], "x1": ["x2"], "x2": ["x1"]}
    rules = firewall.ruleset("a", [], ADDRESSES, [], ["b", "v6", "dns"])
    assert 'ip saddr { 10.0.0.2 } accept comment "its peers' in rules and "ip6 saddr { fd00::2 } accept" in rules
    assert "# peer dns (address 'gpu-b.example') is not an IP address" in rules


def test_the_plan_says_what_site_yml_does_with_each_hosts_firewall():
    shares = {"a": {"firewall": {"state": "present"}}, "b": {"firewall": {"state": "present"}},
              "r": {"firewall": {"state": "absent"}}, "x": {"firewall": {"state": "kept"}}}
    lines = firewall.summary_lines(shares)
    assert lines[0].startswith("== firewall:") and "site.yml loads it on a, b" in lines
    assert any(line.startswith("vllm_firewall is false on r") for line in lines)
    assert any(line.startswith("site.yml leaves x as they are") for line in lines)
    assert firewall.summary_lines({}) == []


def test_a_router_open_to_anyone_gets_a_note_unless_it_listens_on_loopback():
    api = flow("8080", "vllm_router_port", [flows.CONTROLLER, "clients (the router checks no key)"], host="r")
    [note] = firewall.open_notes([api], ADDRESSES, {})
    assert note.startswith("router r: its API (port 8080) reaches anyone") and "set vllm_firewall_allow" in note
    assert firewall.open_notes([api], ADDRESSES, {"r": firewall.allow_networks(["10.0.0.5"])}) == []
    assert "site's own firewall" in firewall.open_notes([api], ADDRESSES, {}, {"r": False})[0]
    local = flow("8080", "vllm_router_port", [flows.CONTROLLER], binds="127.0.0.1", host="r")
    assert firewall.open_notes([local], ADDRESSES, {}) == []

"""The flow table (module_utils/controller/flows.py): who reaches each listener, ranges, and both files' readers."""

from ansible_collections.inferops.vllm.plugins.module_utils.controller import flows
from ansible_collections.inferops.vllm.plugins.module_utils.controller.fleet import PortUse

P2P = (51413, 51612, "peer-to-peer weights (aria2c)", "vllm_model_p2p")


def launch(name, nodes, rank, pd=None, key=True):
    return {"rank": rank, "args": {"host": "0.0.0.0"}, "env": {},
            "secret_env": {"VLLM_API_KEY": "vllm_api_key"} if key else {},
            "cluster": {"name": name, "nodes": nodes, "endpoint": "http://%s:8000" % nodes[0], "pd": pd}}


def site(**changes):
    pd_p = {"deployment": "d", "role": "prefill"}
    pd_d = {"deployment": "d", "role": "decode"}
    launches = {"a": launch("c1", ["a", "b"], 0), "b": launch("c1", ["a", "b"], 1),
                "p1": launch("pre", ["p1"], 0, pd_p, key=False), "d1": launch("dec", ["d1"], 0, pd_d, key=False)}
    uses = {"a": [PortUse(8000, "the vLLM API", "vllm_port"), PortUse(29501, "the torch master", "vllm_master_port"),
                  PortUse(8100, "the weight cache's health", "vllm_weight_cache_health_port")],
            "b": [PortUse(8100, "the weight cache's health", "vllm_weight_cache_health_port")],
            "p1": [PortUse(port, "the KV side channel", "vllm_kv_side_channel_port") for port in (5600, 5601, 5603)],
            "d1": [], "r": [PortUse(8080, "the router", "vllm_router_port")],
            "prom": [PortUse(9090, "Prometheus", "vllm_prometheus_port")]}
    values = dict(uses=uses, launches=launches, routers={"r": ["c1"]}, prometheus=["prom"], p2p=["a", "b"],
                  p2p_range=P2P, ssh_ports={"a": 22, "r": 2222},
                  binds=lambda host, use: "10.0.0.9" if use.variable == "vllm_router_port" else None)
    values.update(changes)
    return flows.Site(**values)


def by(table, host, port):
    return next(f for f in table if f.host == host and f.port == port)


def test_each_listener_names_who_reaches_it():
    table = flows.compile_flows(site())
    api = by(table, "a", "8000")
    assert api.reached_by == ("a", "b", "prom", "r", flows.CONTROLLER, "clients with the API key")
    assert api.binds == flows.EVERY
    assert by(table, "a", "29501").reached_by == ("a", "b")                      # the cluster's own traffic
    assert by(table, "b", "8100").reached_by == ("b",)                           # the node itself
    assert by(table, "r", "8080").binds == "10.0.0.9"
    assert by(table, "r", "8080").reached_by == (flows.CONTROLLER, "clients (the router checks no key)")
    assert by(table, "prom", "9090").reached_by == (flows.CONTROLLER,)
    assert by(table, "r", "2222").purpose.startswith("SSH")


def test_side_channels_are_ranges_reached_by_both_sides():
    table = flows.compile_flows(site())
    assert [f.port for f in table if f.host == "p1"] == ["5600-5601", "5603"]
    assert by(table, "p1", "5603").reached_by == ("d1", "p1")


def test_peer_to_peer_ports_on_each_sharing_node():
    table = flows.compile_flows(site())
    assert by(table, "b", "51413-51612").reached_by == ("a", "b")
    assert not [f for f in flows.compile_flows(site(p2p=[])) if f.variable == "vllm_model_p2p"]


def test_an_api_without_key_is_open_to_anyone_who_reaches_it():
    launches = dict(site().launches, a=launch("c1", ["a", "b"], 0, key=False))
    api = by(flows.compile_flows(site(launches=launches)), "a", "8000")
    assert api.reached_by[-1] == "anyone who reaches it (no API key)"


def test_both_files_read_back():
    table = flows.compile_flows(site())
    assert flows.from_json(flows.to_json(table)) == table
    text = flows.to_markdown(table)
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| port")]
    assert len(rows) == len(table)
    assert "## p1" in text and "| 5600-5601 | tcp | the KV side channel |" in text


def test_a_table_of_another_schema_is_refused_with_the_fix():
    try:
        flows.from_json('{"schema": 2, "flows": []}')
    except ValueError as exc:
        assert "plan again" in str(exc)
    else:
        raise AssertionError("schema 2 was read")


def test_summary_gives_each_hosts_ports():
    table = flows.compile_flows(site())
    lines = flows.summary_lines(table)
    assert "flows.md" in lines[0] and "a: 22, 8000, 8100, 29501, 51413-51612" in lines
    assert flows.summary_lines([]) == []

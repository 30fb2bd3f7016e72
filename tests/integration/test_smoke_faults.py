"""Faults a real vLLM cannot be made to show on demand, from the fault server:
each is classified as the right failure, retried, and reported."""
import openai
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.health import probe
from ansible_collections.inferops.vllm.plugins.module_utils.smoke import measure, report, suites, tools

import fault_server


@pytest.fixture(scope="module")
def server():
    srv = fault_server.start()
    yield "http://127.0.0.1:%d" % srv.server_address[1]
    srv.shutdown()


@pytest.fixture
def client(server):
    return openai.OpenAI(base_url=server + "/v1", api_key="none", max_retries=0, timeout=10)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("fault,expected", [("invalid_json", "invalid_json"), ("schema_violation", "schema_violation"),
                                            ("undeclared_tool", "undeclared_tool"), ("empty_tool_calls", "empty_tool_calls"),
                                            ("marker_leak", "marker_leak"), ("garbage", "missing_call")])
def test_tool_faults_are_classified(client, fault, expected, stream):
    r = measure.chat(client, fault_server.MODEL, [{"role": "user", "content": "weather? fault:%s" % fault}], 64,
                     stream=stream, tools=[suites.WEATHER_TOOL])
    assert tools.classify(r, [suites.WEATHER_TOOL])["class"] == expected


def test_valid_call_passes_and_retries_are_counted(client, monkeypatch):
    cfg = {"tool_choices": ["auto"], "tool_trials": 1, "tool_retries": 2, "tool_max_tokens": 64}
    ok = suites.tool_calls(client, fault_server.MODEL, cfg)
    assert all(c["passed"] for c in ok["checks"]) and ok["parser_retries"] == 0
    monkeypatch.setattr(suites, "WEATHER_PROMPT", "What is the weather? fault:invalid_json")
    bad = suites.tool_calls(client, fault_server.MODEL, cfg)
    assert not any(c["passed"] for c in bad["checks"])
    assert bad["parser_retries"] == 4 and bad["failure_classes"] == {"invalid_json": 6}   # 2 lanes x 3 attempts


def test_dead_engine_behind_a_healthy_health_endpoint(server):
    dead = fault_server.start(fault="dead_engine")
    try:
        result = probe("http://127.0.0.1:%d" % dead.server_address[1], fault_server.MODEL)
    finally:
        dead.shutdown()
    assert not result["ready"] and result["stage"] == "generation" and "500" in result["detail"]


def test_garbage_tokens_fail_the_health_gate():
    garbage = fault_server.start(fault="garbage")
    try:
        result = probe("http://127.0.0.1:%d" % garbage.server_address[1], fault_server.MODEL)
    finally:
        garbage.shutdown()
    assert not result["ready"] and "repeats one" in result["detail"]


def test_report_counts_failures(client, tmp_path):
    cfg = {"text_prompt": "capital of France? fault:garbage", "text_expect": ["Paris"], "max_tokens": 16,
           "reasoning_parser": None, "expect_reasoning": False}
    text = suites.text_canary(client, fault_server.MODEL, cfg)
    full = report.build([text], {"gpu_model": "none"}, {"kv_cache_usage_perc": 0.25})
    assert not full["passed"] and full["failures"] >= 2
    files = report.write(full, str(tmp_path))
    assert "FAIL" in open(files["md"]).read() and open(files["svg"]).read().startswith("<svg")

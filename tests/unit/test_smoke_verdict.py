"""The smoke verdict's arithmetic and evidence, without a server: the Wilson
interval, the trial count the docs derive, the argument check, the evidence a
classified failure carries, the Markdown that keeps markers verbatim, and the
load answers that are junk."""
import json
import math

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_facts
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import config, report, stats, suites, tools

TOOLS = [suites.WEATHER_TOOL]


def answer(**fields):
    base = {"content": None, "reasoning": None, "tool_calls": [], "finish_reason": "stop", "output_tokens": 10}
    return dict(base, **fields)


def call(arguments, name="get_weather"):
    return answer(tool_calls=[{"id": "c1", "name": name, "arguments": arguments}], finish_reason="tool_calls")


def test_wilson_interval_known_values():
    lo, hi = stats.wilson(15, 20)
    assert (round(lo, 4), round(hi, 4)) == (0.5313, 0.8881)
    assert stats.wilson(20, 20)[1] == 1.0 and round(stats.wilson(20, 20)[0], 4) == 0.8389
    assert stats.wilson(0, 0) == (0.0, 1.0)


def test_default_trial_count_separates_a_thirty_percent_failure_rate():
    """docs/smoke-verdict.md: 20 requests per lane against 0.95 on the point estimate."""
    n, threshold = config.OPTIONS["tool_trials"]["default"], config.OPTIONS["tool_first_try_min"]["default"]
    assert (n, threshold) == (20, 0.95)
    assert 1 - stats.pass_probability(n, 0.70, threshold) > 0.99          # 30 % failures fail
    assert round(stats.pass_probability(n, 0.70, threshold), 4) == 0.0076
    assert stats.pass_probability(n, 0.99, threshold) > 0.98              # a healthy lane passes
    assert 1 - stats.pass_probability(13, 0.70, threshold) > 0.99 > 1 - stats.pass_probability(12, 0.70, threshold)
    assert math.isclose(stats.pass_probability(n, 0.70, 0.0), 1.0)


@pytest.mark.parametrize("arguments,expect,cls,detail", [
    ('{"city": "Paris"}', {"city": "Paris"}, None, None),
    ('{"city": "Paris, FR", "unit": "celsius"}', {"city": "paris", "unit": "celsius"}, None, None),
    ('{"city": "Berlin"}', {"city": "Paris"}, "wrong_arguments", "city='Berlin', expected 'Paris'"),
    ('{"city": "Tokyo"}', {"city": "Tokyo", "unit": "celsius"}, "wrong_arguments", "unit missing (expected 'celsius')"),
    ('{"city": "Paris"', {}, "invalid_json", "Expecting ',' delimiter"),
    ('{"city": 42}', {}, "schema_violation", "42 is not of type 'string'"),
    ('{"city": "Paris", "days": 3}', {}, "schema_violation", "Additional properties are not allowed ('days' was unexpected)"),
])
def test_arguments_are_checked_for_schema_and_values(arguments, expect, cls, detail):
    failure = tools.classify(call(arguments), TOOLS, expect=expect)
    assert (failure or {}).get("class") == cls
    if detail:
        assert failure["detail"] == detail and failure["arguments"] == arguments


def test_fixed_numbers_must_match_in_value_and_type():
    assert tools.wrong_values({"days": 3}, {"days": 3}) == []
    assert tools.wrong_values({"days": "3"}, {"days": 3}) == ["days='3', expected 3"]
    assert tools.wrong_values({"days": 4}, {"days": 3}) == ["days=4, expected 3"]
    assert tools.wrong_values({"flag": True}, {"flag": 1}) == ["flag=True, expected 1"]


def test_invalid_json_carries_message_and_position():
    failure = tools.classify(call('{"city": "Paris"'), TOOLS)
    assert failure["json_error"] == {"message": "Expecting ',' delimiter", "position": 16}


def test_call_left_in_the_reasoning_is_classified_with_the_marker():
    trapped = answer(reasoning='I will call get_weather.<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"')
    failure = tools.classify(trapped, TOOLS)
    assert failure["class"] == "call_in_reasoning" and failure["markers"] == ["<|open|>tools"]
    assert failure["reasoning"].startswith("I will call get_weather.<|open|>tools") and failure["content"] is None


def test_reask_keeps_the_conversation_and_defangs_markers():
    leak = answer(content="Paris<|close|>message<|sep|>", reasoning="thinking")
    failure = tools.classify(leak, TOOLS)
    turns = tools.reask_turns(leak, failure, "get_weather", "Weather in Paris?")
    assert [t["role"] for t in turns] == ["assistant", "user"]
    assert turns[0] == {"role": "assistant", "content": "Paris<|close|>message<|sep|>", "reasoning": "thinking"}
    assert "<|" not in turns[1]["content"] and "content contains <close>, <sep>" in turns[1]["content"]
    assert turns[1]["content"].endswith("The request was: Weather in Paris?")
    bad = call('{"city": 42}')
    turns = tools.reask_turns(bad, tools.classify(bad, TOOLS), "get_weather", "Weather in Paris?")
    assert [t["role"] for t in turns] == ["assistant", "tool"] and turns[1]["tool_call_id"] == "c1"
    assert turns[0]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": 42}'}


def test_markdown_keeps_markers_verbatim_in_code_spans():
    assert report.code("<|close|>message<|sep|>") == "`<\\|close\\|>message<\\|sep\\|>`"
    assert report.code("a`b") == "`` a`b ``"
    row = {"name": "auto stream request 3", "passed": True, "level": "warn", "detail": "recovered: marker_leak -> ok",
           "evidence": {"prompt": "Weather?", "first": {"class": "marker_leak", "content": "Paris<|close|>message<|sep|>",
                                                        "markers": ["<|close|>", "<|sep|>"]}}}
    full = report.build([{"name": "tools", "checks": [row]}], {"cluster": "x"}, {})
    md = report.markdown(full)
    assert full["verdict"] == "PASSED with warnings" and full["passed"]
    assert "content `Paris<\\|close\\|>message<\\|sep\\|>`" in md and "*warn*" in md
    assert "/close/" not in md


def test_a_stopped_run_fails_and_says_why():
    full = report.build([], {}, {}, stopped="smoke run on cluster c stopped in suite probe: http://h:8000: down")
    assert not full["passed"] and full["failed_checks"][0]["detail"].endswith("down")
    assert "**The run stopped early:**" in report.markdown(full)


def test_cache_facts_are_the_four_that_matter():
    server = {"cache_config": {"block_size": "16", "cache_dtype": "fp8", "num_gpu_blocks": "1000", "engine": "0",
                               "gpu_memory_utilization": "0.9", "enable_prefix_caching": "True"}}
    assert report.cache_facts(server, 4000) == {"block_size": 16, "kv_cache_dtype": "fp8", "kv_capacity_tokens": 16000,
                                                "max_concurrency": 4.0, "max_model_len": 4000}


@pytest.mark.parametrize("result,problem", [
    (answer(content="The sea is wide and grey today. " * 4, output_tokens=64), None),
    (answer(content="", output_tokens=64), "empty"),
    (answer(content="!" * 300, output_tokens=64), "repeated_token"),
    (answer(content="wave wave wave wave", output_tokens=64), "repeated_token"),
    (answer(content="The sea is wide.", output_tokens=8), "short"),
    (dict(answer(), error="boom", error_class="timeout"), "timeout"),
])
def test_load_answers_that_are_junk(result, problem):
    assert suites.load_problem(result, 64, 0.9) == problem


def test_settings_fill_every_default():
    cfg = config.settings({"base_url": "http://h/v1", "options": {"tool_trials": 4}, "timeouts": {"probe": 5}})
    assert cfg["tool_trials"] == 4 and cfg["tool_retries"] == 1 and cfg["probe_timeout"] == 5
    assert cfg["run_deadline"] == 1800 and cfg["api_key"] is None and cfg["tool_cases"] == []


def test_vram_line():
    facts = {"count": 8, "memory_mib": 143771}
    facts.update(gpu_facts.memory_usage(gpu_facts.parse_nvidia_query(
        "".join("%d, 130000, 143771\n" % i for i in range(8)), gpu_facts.NVIDIA_MEMORY_FIELDS)))
    assert gpu_facts.vram_line(facts) == "1,040,000 / 1,150,168 MiB used over 8 GPUs"
    assert gpu_facts.vram_line({"count": 0}) == "n/a" and gpu_facts.vram_line(None) == "n/a"
    assert gpu_facts.vram_line({"count": 8, "memory_mib": 294912}) == "n/a / 2,359,296 MiB used over 8 GPUs"
    json.dumps(facts)


def test_fabric_line_this_run_else_the_heads_record_with_what_no_longer_holds():
    nodes = ["node1", "node2"]
    image = "registry.example/vllm/vllm-openai@sha256:" + "a" * 64
    record = {"summary": "node1 gloo 0.4 GB/s; node2 gloo 0.4 GB/s", "checked_at": "2026-12-03T07:00:00Z",
              "passed": True, "image": "127.0.0.1:5000/vllm/vllm-openai@sha256:" + "a" * 64, "nodes": nodes}
    assert report.fabric_line("node1 NET/IB 180 GB/s", record, image, nodes) == "node1 NET/IB 180 GB/s"
    assert report.fabric_line("", {}, image, nodes) == "not run"
    # the same digest through a site mirror is the same image
    assert report.fabric_line("", record, image, nodes) == \
        "node1 gloo 0.4 GB/s; node2 gloo 0.4 GB/s (an earlier run, 2026-12-03T07:00:00Z)"
    stale = dict(record, passed=False, image=image.replace("a" * 64, "b" * 64), checked_at=None)
    assert report.fabric_line("", stale, image, nodes + ["node3"]) == \
        "node1 gloo 0.4 GB/s; node2 gloo 0.4 GB/s (an earlier run, at an unknown time, failed, another image, other nodes)"

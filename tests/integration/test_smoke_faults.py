"""Faults a real vLLM cannot be made to show on demand, from the fault server:
each is classified as the right failure with its evidence, and the verdict is
right: a 30 % first-attempt failure rate fails, a hung engine fails within the
default deadline, a flaky server within the thresholds passes with warning rows,
and junk load answers fail."""
import json
import os
import subprocess
import time
from pathlib import Path

import openai
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node.health import probe
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import measure, report, run, suites, tools

import fault_server
from conftest import started_early

ROOT = Path(__file__).resolve().parents[2]
CONTROLLER_VENV = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm")) / "venv"


@pytest.fixture(scope="module")
def server():
    srv = fault_server.start()
    yield srv.url
    srv.shutdown()


@pytest.fixture
def client(server):
    return openai.OpenAI(base_url=server + "/v1", api_key="none", max_retries=0, timeout=10)


def smoke(url, suites_, **options):
    """The module's own run (run.execute) against a server, with the module's defaults."""
    timeouts = options.pop("timeouts", {})
    return run.execute({"base_url": url + "/v1", "api_key": "none", "model": fault_server.MODEL, "cluster": "faulty",
                        "suites": suites_, "environment": {}, "options": options, "timeouts": timeouts})


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("fault,expected", [("invalid_json", "invalid_json"), ("schema_violation", "schema_violation"),
                                            ("undeclared_tool", "undeclared_tool"), ("empty_tool_calls", "empty_tool_calls"),
                                            ("marker_leak", "marker_leak"), ("garbage", "missing_call"),
                                            ("wrong_arguments", "wrong_arguments")])
def test_tool_faults_are_classified_with_evidence(client, fault, expected, stream):
    r = measure.chat(client, fault_server.MODEL, [{"role": "user", "content": "weather in Paris? fault:%s" % fault}], 64,
                     stream=stream, tools=[suites.WEATHER_TOOL])
    failure = tools.classify(r, [suites.WEATHER_TOOL], expect={"city": "Paris"})
    assert failure["class"] == expected
    if expected == "invalid_json":
        assert failure["json_error"]["position"] == len('{"city": "Paris"') and failure["arguments"] == '{"city": "Paris"'
    if expected == "schema_violation":
        assert "42 is not of type 'string'" in failure["detail"] and failure["instance_path"] == "city"
    if expected == "wrong_arguments":
        assert failure["detail"] == "city='Berlin', expected 'Paris'"
    if expected == "marker_leak":
        assert failure["markers"] == ["<|close|>", "<|sep|>"] and "<|close|>message<|sep|>" in failure["content"]


def test_a_cut_stream_is_a_transport_failure_with_what_arrived(server, client):
    limits = measure.Limits(connect=5, first_byte=5, total=10)
    with pytest.raises(measure.PartialStream) as cut:
        measure.chat(client, fault_server.MODEL, [{"role": "user", "content": "hi fault:partial_stream"}], 16,
                     limits=limits)
    assert cut.value.partial["content"] == "Paris is " and measure.error_class(cut.value) == "partial_stream"


def test_thirty_percent_first_attempt_failures_fail_the_verdict():
    with fault_server.start(rate=0.3, rate_fault="empty_tool_calls", seed=7) as flaky:
        full = smoke(flaky.url, ["tools"])
    lanes = full["tool_calls"]["lanes"]
    assert len(lanes) == 4 and all(st["requests"] == 20 for st in lanes)
    share = sum(st["requests"] - st["first_ok"] for st in lanes) / 80
    print("first-attempt failure share %.3f; per lane %s" % (share, [st["first_rate"] for st in lanes]))
    assert not full["passed"] and full["verdict"] == "FAILED"
    assert any(c["name"].endswith("first-try rate") for c in full["failed_checks"])
    for st in lanes:   # the rate is reported with an interval that holds the true 70 %
        lo, hi = st["first_ci95"]
        assert lo <= 0.7 <= hi or st["first_rate"] >= 0.95
        assert set(st["first_failure_classes"]) <= {"empty_tool_calls"}
    # re-asks answer correctly on this server, within the run's budget of 16
    assert full["tool_calls"]["retry_budget"]["used"] == 16 and full["warning_rows"] > 0


def test_flaky_within_the_thresholds_passes_with_warning_rows():
    with fault_server.start(rate=0.05, rate_fault="marker_leak", seed=3) as flaky:
        full = smoke(flaky.url, ["tools"])
    failures = [st["requests"] - st["first_ok"] for st in full["tool_calls"]["lanes"]]
    print("first-attempt failures per lane", failures)
    assert sum(failures) >= 1 and max(failures) <= 1          # seed 3: within 95 % in every lane
    assert full["passed"] and full["verdict"] == "PASSED with warnings"
    rows = full["warning_checks"]
    assert len(rows) == sum(failures) and all("recovered: marker_leak -> ok" in r["detail"] for r in rows)
    assert all("<|close|>message<|sep|>" in r["evidence"]["first"]["content"] for r in rows)


def test_reasks_keep_the_conversation():
    with fault_server.start() as srv:
        cases = [{"prompt": "Weather in Paris? fault:empty_tool_calls", "expect": {"city": "Paris"}},
                 {"prompt": "Weather in Paris? fault:wrong_arguments", "expect": {"city": "Paris"}}]
        smoke(srv.url, ["tools"], tool_choices=["auto"], tool_trials=2, tool_cases=cases, tool_concurrency=1)
        reasks = [r["messages"] for r in srv.RequestHandlerClass.requests if len(r["messages"]) > 1]
    no_call = [m for m in reasks if m[-1]["role"] == "user"]
    with_call = [m for m in reasks if m[-1]["role"] == "tool"]
    assert no_call and with_call
    first, failed, error = no_call[0]
    assert first["content"] == cases[0]["prompt"] and failed["role"] == "assistant"
    assert error["content"].startswith("Your previous reply was not a valid call of the get_weather tool "
                                       "(empty_tool_calls: ") and error["content"].endswith(cases[0]["prompt"])
    first, failed, result = with_call[0]
    assert failed["tool_calls"][0]["function"]["arguments"] == '{"city": "Berlin"}'
    assert result["tool_call_id"] == failed["tool_calls"][0]["id"] and "city='Berlin', expected 'Paris'" in result["content"]


def test_no_reask_after_a_transport_error(server):
    full = smoke(server, ["tools"], tool_choices=["auto"], tool_trials=2,
                 tool_cases=[{"prompt": "Weather in Paris? fault:dead_engine"}])
    assert full["tool_calls"]["retry_budget"]["used"] == 0
    assert all(st["first_failure_classes"] == {"transport_error": 2} for st in full["tool_calls"]["lanes"])


def hung_engine_run():
    """The smoke run with the default deadlines against an engine that never answers: a minute of waiting,
    started at collection (conftest.started_early) so that it waits beside the tests before its own."""
    with fault_server.start(fault="hang") as hung:
        began = time.monotonic()
        full = smoke(hung.url, ["text", "vision", "long_context", "tools", "load"])
        return hung.url, time.monotonic() - began, full


@started_early(hung_engine_run)
def test_a_hung_engine_fails_within_two_minutes_by_default(early_result):
    url, took, full = early_result
    print("hung engine: verdict after %.1f s: %s" % (took, full["stopped"]))
    assert took < 120 and not full["passed"] and not full["suites"]
    assert full["stopped"] == ("smoke run on cluster faulty stopped in suite probe: %s: /health 200 but no generation "
                               "within 60 s: an engine or a follower is down" % url)


def test_a_hang_in_the_middle_of_a_suite_stops_at_its_deadline():
    with fault_server.start() as srv:
        began = time.monotonic()
        full = smoke(srv.url, ["tools", "load"], tool_choices=["auto"], tool_trials=4,
                     tool_cases=[{"prompt": "Weather in Paris? fault:hang"}],
                     timeouts={"first_byte": 2, "suite": 5})
    took = time.monotonic() - began
    print("tool requests hang: tools and load done after %.1f s" % took)
    assert took < 20 and not full["passed"]
    lanes = full["tool_calls"]["lanes"]
    assert lanes[0]["first_failure_classes"] == {"transport_error": 4}
    assert full["metrics"]["failed"] == 0     # the engine still answers plain requests: load ran and passed


def test_load_rejects_junk(server):
    for fault, cls in (("repeat", "repeated_token"), ("short", "short"), ("partial_stream", "partial_stream")):
        full = smoke(server, ["load"], load_prompt="Write about the sea. fault:%s" % fault, load_requests=4,
                     load_max_tokens=32)
        assert not full["passed"] and full["metrics"]["failures_by_class"] == {cls: 4}, (fault, full["metrics"])
    good = smoke(server, ["load"], load_requests=4, load_max_tokens=32)
    assert good["passed"] and good["server_during_load"]["samples"] >= 1
    assert good["server_during_load"]["kv_cache_usage_perc"]["peak"] == 0.25
    assert good["cache"] == {"block_size": 16, "kv_cache_dtype": "auto", "kv_capacity_tokens": 8192,
                             "max_concurrency": 2.0, "max_model_len": fault_server.MAX_MODEL_LEN}


def test_dead_engine_behind_a_healthy_health_endpoint(server):
    with fault_server.start(fault="dead_engine") as dead:
        result = probe(dead.url, fault_server.MODEL)
        full = smoke(dead.url, ["text"])
    assert not result["ready"] and result["stage"] == "generation" and "500" in result["detail"]
    assert "/health 200 but the generation failed (chat completion answered 500" in full["stopped"]


def test_garbage_tokens_fail_the_health_gate():
    with fault_server.start(fault="garbage") as garbage:
        result = probe(garbage.url, fault_server.MODEL)
    assert not result["ready"] and "repeats one" in result["detail"]


def test_report_keeps_markers_verbatim(server, tmp_path):
    full = smoke(server, ["text"], text_prompt="capital of France? fault:marker_leak", text_expect=["Paris"])
    assert not full["passed"]
    md = report.markdown(full)
    assert "`<\\|close\\|>, <\\|sep\\|>`" in md and "<|close|>message<|sep|>" in json.dumps(full)
    files = report.write(full, str(tmp_path))
    assert "FAIL" in open(files["md"]).read() and open(files["svg"]).read().startswith("<svg")


def test_module_fails_the_task_on_a_failed_verdict(server, tmp_path):
    """The vllm_smoke module, run by Ansible: a failed verdict fails the task, unless fail_on_verdict is false."""
    def module(**extra):
        args = dict({"base_url": server + "/v1", "model": fault_server.MODEL, "report_dir": str(tmp_path),
                     "cluster": "faulty", "suites": ["text"],
                     "options": {"text_prompt": "France? fault:garbage", "tool_choices": ["auto"]}}, **extra)
        return subprocess.run([str(CONTROLLER_VENV / "bin/ansible"), "localhost", "-m", "inferops.vllm.vllm_smoke",
                               "-a", json.dumps(args), "-e",
                               "ansible_python_interpreter=%s" % (CONTROLLER_VENV / "bin/python")],
                              cwd=ROOT, capture_output=True, text=True, check=False,
                              env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
                                       ANSIBLE_NOCOLOR="1"))
    failed = module()
    assert failed.returncode != 0 and "smoke verdict FAILED on cluster faulty" in failed.stdout, failed.stdout[-2000:]
    assert "text/non-stream answer: the generation repeats one character" in failed.stdout
    assert module(fail_on_verdict=False).returncode == 0
    typo = module(options={"tool_trials": "lots"})
    assert typo.returncode != 0 and "tool_trials" in typo.stdout and "cannot be converted to an int" in typo.stdout

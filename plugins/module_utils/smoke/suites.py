# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke suites. Each returns {"name", "passed", "checks": [...], ...};
a check is {"name", "passed", "detail"} and the report counts the failures."""

from __future__ import annotations

import base64
import json
import random
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.health import degenerate
from ansible_collections.inferops.vllm.plugins.module_utils.smoke import measure, tools

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1, "description": "City name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
WEATHER_PROMPT = "What is the weather in Paris right now? Use the tool."
FILLER = ("The archive keeps records of ships, harbours and the goods they carried across the northern sea. "
          "Each ledger lists the date, the captain, the cargo and the weight in tonnes. ")


def check(name: str, passed: bool, detail: str = "") -> Dict[str, Any]:
    return {"name": name, "passed": bool(passed), "detail": detail}


def _safe(fn, *args, **kwargs) -> Dict[str, Any]:
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # pylint: disable=broad-exception-caught  # any API error is a smoke failure
        return {"error": "%s: %s" % (type(exc).__name__, exc), "content": None, "reasoning": None, "tool_calls": [],
                "finish_reason": None}


def expect_in(text: Optional[str], expected: List[str]) -> List[str]:
    low = (text or "").lower()
    return [e for e in expected if e.lower() not in low]


def text_canary(client, model: str, cfg: Dict[str, Any]) -> Dict[str, Any]:
    """A question with a known answer, and the reasoning wiring: no think markers in content."""
    checks, samples = [], []
    for stream in (False, True):
        r = _safe(measure.chat, client, model, [{"role": "user", "content": cfg["text_prompt"]}],
                  cfg["max_tokens"], stream=stream, temperature=0)
        samples.append(r)
        lane = "stream" if stream else "non-stream"
        if r.get("error"):
            checks.append(check("%s answer" % lane, False, r["error"]))
            continue
        answer = r["content"] or ""
        problem = degenerate(answer or (r["reasoning"] or ""))
        missing = expect_in(answer, cfg["text_expect"])
        checks.append(check("%s answer" % lane, not problem and not missing,
                            problem or ("missing %s in %r" % (missing, answer[:200]) if missing else answer[:120])))
        leaks = tools.leaked(answer)
        checks.append(check("%s no markers in content" % lane, not leaks, ", ".join(leaks)))
        if cfg.get("reasoning_parser"):
            checks.append(check("%s reasoning separated" % lane, r["reasoning"] is not None or not cfg["expect_reasoning"],
                                "reasoning=%r" % (r["reasoning"] or "")[:80]))
    return {"name": "text", "checks": checks, "samples": samples}


def vision_ocr(client, model: str, cfg: Dict[str, Any]) -> Dict[str, Any]:
    """Read a bundled receipt-like PNG sent as a base64 data URL (works air-gapped)."""
    if not cfg.get("image_path"):
        return {"name": "vision", "checks": [check("image answered", False, "no image_path given")], "samples": []}
    with open(cfg["image_path"], "rb") as fh:
        url = "data:image/png;base64," + base64.b64encode(fh.read()).decode()
    messages = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": url}},
        {"type": "text", "text": cfg["vision_prompt"]}]}]
    r = _safe(measure.chat, client, model, messages, cfg["max_tokens"], stream=True, temperature=0)
    if r.get("error"):
        return {"name": "vision", "checks": [check("image answered", False, r["error"])], "samples": [r]}
    answer = r["content"] or r["reasoning"] or ""
    missing = expect_in(answer, cfg["vision_expect"])
    problem = degenerate(answer)
    return {"name": "vision", "samples": [r], "checks": [
        check("image answered", not problem, problem or "%d prompt tokens" % (r["prompt_tokens"] or 0)),
        check("expected text read", not missing, "missing %s in %r" % (missing, answer[:200]) if missing else "")]}


def _count_tokens(base_url: str, api_key: Optional[str], model: str, text: str) -> Optional[int]:
    req = urllib.request.Request(base_url.rstrip("/").rsplit("/v1", 1)[0] + "/tokenize",
                                 data=json.dumps({"model": model, "prompt": text}).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    if api_key:
        req.add_header("Authorization", "Bearer " + api_key)
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=60) as resp:
            return int(json.loads(resp.read())["count"])
    except (OSError, ValueError, KeyError):
        return None


def long_context(client, model: str, cfg: Dict[str, Any]) -> Dict[str, Any]:
    """A needle at the middle of prompts filling fractions of max-model-len."""
    checks, samples = [], []
    template = "%sThe vault access code is %s. %s\nWhat is the vault access code? Reply with the code only."
    per_filler = _count_tokens(cfg["base_url"], cfg.get("api_key"), model, FILLER) or max(1, len(FILLER) // 4)
    # what the chat template and the question add, measured once with no filler
    bare = _safe(measure.chat, client, model, [{"role": "user", "content": template % ("", "0000-0000", "")}], 1,
                 stream=False)
    overhead = bare.get("prompt_tokens") or 64
    for fraction in cfg["long_context_fractions"]:
        target = int(cfg["max_model_len"] * fraction)
        if target + cfg["max_tokens"] > cfg["max_model_len"]:
            target = cfg["max_model_len"] - cfg["max_tokens"]
        code = "%04d-%04d" % (random.Random(fraction).randint(0, 9999), random.Random(-fraction).randint(0, 9999))
        repeats = max(1, (target - overhead) // per_filler)
        prompt = template % (FILLER * (repeats // 2), code, FILLER * (repeats - repeats // 2))
        r = _safe(measure.chat, client, model, [{"role": "user", "content": prompt}], cfg["max_tokens"], stream=True,
                  temperature=0)
        samples.append(dict(r, fraction=fraction, target_tokens=target))
        name = "needle at %d%% of max-model-len" % round(fraction * 100)
        if r.get("error"):
            checks.append(check(name, False, r["error"]))
            continue
        found = code in (r["content"] or "") + (r["reasoning"] or "")
        ok = found if cfg["long_context_expect_needle"] else bool(r["prompt_tokens"])
        checks.append(check(name, ok, "%s prompt tokens, needle %s, ttft %.3fs" % (
            r["prompt_tokens"], "found" if found else "not found", r["ttft"] or 0)))
    return {"name": "long_context", "checks": checks, "samples": samples}


def tool_calls(client, model: str, cfg: Dict[str, Any]) -> Dict[str, Any]:
    """get_weather with schema validation and re-ask, per tool_choice mode and lane; failures classified."""
    toolset = [WEATHER_TOOL]
    checks, samples, failures, retries = [], [], {}, 0
    for choice in cfg["tool_choices"]:
        for stream in (False, True):
            lane = "%s %s" % (choice, "stream" if stream else "non-stream")
            for trial in range(cfg["tool_trials"]):
                messages: List[dict] = [{"role": "user", "content": WEATHER_PROMPT}]
                attempts = []
                for attempt in range(cfg["tool_retries"] + 1):
                    r = _safe(measure.chat, client, model, messages, cfg["tool_max_tokens"], stream=stream,
                              tools=toolset, tool_choice=choice, temperature=0 if trial == 0 else 1, seed=trial)
                    failure = tools.classify(r, toolset)
                    attempts.append(failure["class"] if failure else "ok")
                    samples.append(dict(r, lane=lane, trial=trial, attempt=attempt))
                    if not failure:
                        break
                    failures[failure["class"]] = failures.get(failure["class"], 0) + 1
                    messages = messages + [{"role": "assistant", "content": r.get("content") or ""},
                                           {"role": "user", "content": tools.reask(failure, "get_weather")}]
                retries += len(attempts) - 1
                checks.append(check("%s trial %d" % (lane, trial), attempts[-1] == "ok", " -> ".join(attempts)))
    return {"name": "tools", "checks": checks, "samples": samples, "failure_classes": failures,
            "parser_retries": retries}


def load(client, model: str, cfg: Dict[str, Any]) -> Dict[str, Any]:
    """Concurrent streaming requests: the latency and throughput figures of the report."""
    prompts = [{"role": "user", "content": "%s (request %d)" % (cfg["load_prompt"], i)} for i in range(cfg["load_requests"])]
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=cfg["load_concurrency"]) as pool:
        results = list(pool.map(lambda m: _safe(measure.chat, client, model, [m], cfg["load_max_tokens"], stream=True,
                                                temperature=0, extra_body={"ignore_eos": True}), prompts))
    wall = time.perf_counter() - start
    ok = [r for r in results if not r.get("error")]
    out_tokens = sum(r["output_tokens"] or 0 for r in ok)
    metrics = {
        "requests": len(results), "errors": len(results) - len(ok), "concurrency": cfg["load_concurrency"],
        "wall_s": wall, "output_tokens": out_tokens, "output_tokens_per_s": out_tokens / wall if wall else None,
        "ttft_s": measure.percentiles([r["ttft"] for r in ok]),
        "ttft_chunk_s": measure.percentiles([r["ttft_chunk"] for r in ok]),
        "ttft_content_s": measure.percentiles([r["ttft_content"] for r in ok]),
        "tpot_s": measure.percentiles([r["tpot"] for r in ok]),
        "itl_s": measure.percentiles([g for r in ok for g in r["itl"]]),
        "e2e_s": measure.percentiles([r["e2e"] for r in ok]),
        "per_request_output_tokens_per_s": measure.percentiles(
            [(r["output_tokens"] or 0) / r["e2e"] for r in ok if r["e2e"]]),
        "prompt_tokens": sum(r["prompt_tokens"] or 0 for r in ok),
    }
    checks = [check("all requests answered", not metrics["errors"], "%d errors" % metrics["errors"])]
    return {"name": "load", "checks": checks, "metrics": metrics,
            "samples": [{k: v for k, v in r.items() if k != "itl"} for r in results]}


SUITES = {"text": text_canary, "vision": vision_ocr, "long_context": long_context, "tools": tool_calls, "load": load}

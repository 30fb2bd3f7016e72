# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke suites. Each takes the run (run.Run) and returns {"name", "checks": [...], ...}.
A check is {"name", "passed", "detail", "level", "evidence"}: level "pass", "warn"
(shown, does not fail the verdict) or "fail"."""

from __future__ import annotations

import base64
import json
import random
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.node.health import degenerate
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import measure, receipt, stats, tools
from ansible_collections.inferops.vllm.plugins.module_utils.node import prom

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
# Prompts that fix the arguments, so a call can be checked for the values as well as the schema.
TOOL_CASES = [
    {"prompt": "What is the weather in Paris right now? Use the tool.", "expect": {"city": "Paris"}},
    {"prompt": "What's the weather in Tokyo? Use the tool, in celsius.", "expect": {"city": "Tokyo", "unit": "celsius"}},
    {"prompt": "Use the weather tool for Boston, in fahrenheit.", "expect": {"city": "Boston", "unit": "fahrenheit"}},
    {"prompt": "Check the current weather in Nairobi with the tool.", "expect": {"city": "Nairobi"}},
]
FILLER = ("The archive keeps records of ships, harbours and the goods they carried across the northern sea. "
          "Each ledger lists the date, the captain, the cargo and the weight in tonnes. ")


def check(name: str, passed: bool, detail: str = "", level: Optional[str] = None,
          evidence: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    out = {"name": name, "passed": bool(passed), "detail": detail, "level": level or ("pass" if passed else "fail")}
    if evidence:
        out["evidence"] = evidence
    return out


def expect_in(text: Optional[str], expected: List[str]) -> List[str]:
    low = (text or "").lower()
    return [e for e in expected if e.lower() not in low]


def _stopped(run, name: str) -> Dict[str, Any]:
    return {"name": name, "checks": [check("suite ran", False, run.stopped)], "samples": []}


def _transport(r: Dict[str, Any]) -> str:
    return "%s (%s)" % (r["error"], r.get("error_class"))


def text_canary(run) -> Dict[str, Any]:
    """A question with a known answer, and the reasoning wiring: no think markers in content."""
    cfg, limits = run.cfg, run.suite_limits()
    checks, samples = [], []
    for stream in (False, True):
        r = run.chat(limits, [{"role": "user", "content": cfg["text_prompt"]}], cfg["max_tokens"], stream=stream,
                     temperature=0)
        samples.append(r)
        lane = "stream" if stream else "non-stream"
        if r.get("error"):
            checks.append(check("%s answer" % lane, False, _transport(r)))
            continue
        answer = r["content"] or ""
        problem = degenerate(answer or (r["reasoning"] or ""))
        missing = expect_in(answer, cfg["text_expect"])
        evidence = {"content": tools.excerpt(r["content"]), "reasoning": tools.excerpt(r["reasoning"])}
        checks.append(check("%s answer" % lane, not problem and not missing,
                            problem or ("missing %s" % missing if missing else tools.excerpt(answer, 120)),
                            evidence=evidence if problem or missing else None))
        leaks = tools.leaked(answer)
        checks.append(check("%s no markers in content" % lane, not leaks, ", ".join(leaks),
                            evidence=dict(evidence, markers=leaks) if leaks else None))
        if cfg.get("reasoning_parser"):
            checks.append(check("%s reasoning separated" % lane, r["reasoning"] is not None or not cfg["expect_reasoning"],
                                "reasoning=%r" % (r["reasoning"] or "")[:80]))
    return {"name": "text", "checks": checks, "samples": samples}


def _image(cfg: Dict[str, Any]) -> bytes:
    if cfg.get("image_path"):
        with open(cfg["image_path"], "rb") as fh:
            return fh.read()
    return base64.b64decode(receipt.PNG_BASE64)


def vision_ocr(run) -> Dict[str, Any]:
    """Read a receipt-like PNG (the bundled one by default) sent as a base64 data URL (works air-gapped)."""
    cfg = run.cfg
    url = "data:image/png;base64," + base64.b64encode(_image(cfg)).decode()
    messages = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": url}},
        {"type": "text", "text": cfg["vision_prompt"]}]}]
    r = run.chat(run.suite_limits(), messages, cfg["max_tokens"], stream=True, temperature=0)
    if r.get("error"):
        return {"name": "vision", "checks": [check("image answered", False, _transport(r))], "samples": [r]}
    answer = r["content"] or r["reasoning"] or ""
    missing = expect_in(answer, cfg["vision_expect"])
    problem = degenerate(answer)
    evidence = {"content": tools.excerpt(r["content"]), "reasoning": tools.excerpt(r["reasoning"])}
    return {"name": "vision", "samples": [r], "checks": [
        check("image answered", not problem, problem or "%d prompt tokens" % (r["prompt_tokens"] or 0),
              evidence=evidence if problem else None),
        check("expected text read", not missing, "missing %s" % missing if missing else "",
              evidence=evidence if missing else None)]}


def _count_tokens(run, text: str) -> Optional[int]:
    req = urllib.request.Request(run.root + "/tokenize", data=json.dumps({"model": run.model, "prompt": text}).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    if run.cfg.get("api_key"):
        req.add_header("Authorization", "Bearer " + run.cfg["api_key"])
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=run.limits.connect) as resp:
            return int(json.loads(resp.read())["count"])
    except (OSError, ValueError, KeyError):
        return None


def long_context(run) -> Dict[str, Any]:
    """A needle at the middle of prompts filling fractions of max-model-len (read from the server)."""
    cfg, limits = run.cfg, run.suite_limits()
    checks, samples = [], []
    max_len = cfg.get("max_model_len")
    if not max_len:
        return {"name": "long_context", "samples": [], "checks": [
            check("max-model-len known", False, "the server did not report max_model_len in /v1/models and none was given")]}
    template = "%sThe vault access code is %s. %s\nWhat is the vault access code? Reply with the code only."
    per_filler = _count_tokens(run, FILLER) or max(1, len(FILLER) // 4)
    # what the chat template and the question add, measured once with no filler
    bare = run.chat(limits, [{"role": "user", "content": template % ("", "0000-0000", "")}], 1, stream=False)
    overhead = bare.get("prompt_tokens") or 64
    for fraction in cfg["long_context_fractions"]:
        target = int(max_len * fraction)
        if target + cfg["max_tokens"] > max_len:
            target = max_len - cfg["max_tokens"]
        code = "%04d-%04d" % (random.Random(fraction).randint(0, 9999), random.Random(-fraction).randint(0, 9999))
        repeats = max(1, (target - overhead) // per_filler)
        prompt = template % (FILLER * (repeats // 2), code, FILLER * (repeats - repeats // 2))
        r = run.chat(limits, [{"role": "user", "content": prompt}], cfg["max_tokens"], stream=True, temperature=0)
        samples.append(dict(r, fraction=fraction, target_tokens=target))
        name = "needle at %d%% of max-model-len %d" % (round(fraction * 100), max_len)
        if r.get("error"):
            checks.append(check(name, False, _transport(r)))
            continue
        found = code in (r["content"] or "") + (r["reasoning"] or "")
        ok = found if cfg["long_context_expect_needle"] else bool(r["prompt_tokens"])
        checks.append(check(name, ok, "%s prompt tokens, needle %s, ttft %.3fs" % (
            r["prompt_tokens"], "found" if found else "not found", r["ttft"] or 0),
            evidence=None if ok else {"content": tools.excerpt(r["content"]), "reasoning": tools.excerpt(r["reasoning"])}))
    return {"name": "long_context", "checks": checks, "samples": samples}


# ---- tool calls ---------------------------------------------------------------------------------------------------

def _trial(run, limits, choice: str, stream: bool, index: int, case: Dict[str, Any]) -> Dict[str, Any]:
    """One request and its re-asks. Re-asks keep the conversation: the original messages,
    the failed turn, the error. None after a transport error (nothing to correct)."""
    cfg = run.cfg
    toolset = [WEATHER_TOOL]
    messages: List[dict] = [{"role": "user", "content": case["prompt"]}]
    extra: Dict[str, Any] = {"tools": toolset, "tool_choice": choice, "seed": index}
    if cfg.get("tool_temperature") is not None:
        extra["temperature"] = cfg["tool_temperature"]
    attempts: List[Dict[str, Any]] = []
    budget_refused = False
    for attempt in range(cfg["tool_retries"] + 1):
        r = run.chat(limits, messages, cfg["tool_max_tokens"], stream=stream, **extra)
        failure = tools.classify(r, toolset, expect=case.get("expect"))
        attempts.append({"class": failure["class"] if failure else "ok", "evidence": failure, "e2e": r.get("e2e")})
        if not failure or failure["class"] in tools.NOT_REASKED or run.stopped or attempt == cfg["tool_retries"]:
            break
        if not run.budget.take():
            budget_refused = True
            break
        messages = messages + tools.reask_turns(r, failure, "get_weather", case["prompt"])
    return {"trial": index, "prompt": case["prompt"], "first": attempts[0]["class"], "final": attempts[-1]["class"],
            "reasks": len(attempts) - 1, "budget_refused": budget_refused, "attempts": attempts}


def _lane_stats(trials: List[Dict[str, Any]]) -> Dict[str, Any]:
    n = len(trials)
    first_ok = sum(t["first"] == "ok" for t in trials)
    final_ok = sum(t["final"] == "ok" for t in trials)
    classes: Dict[str, int] = {}
    for t in trials:
        if t["first"] != "ok":
            classes[t["first"]] = classes.get(t["first"], 0) + 1
    lo, hi = stats.wilson(first_ok, n)
    reasked = [t for t in trials if t["reasks"]]
    return {"requests": n, "first_ok": first_ok, "first_rate": first_ok / n if n else 0.0, "first_ci95": [lo, hi],
            "first_failure_classes": classes, "reasks": sum(t["reasks"] for t in trials),
            "reasked_requests": len(reasked), "recovered": sum(t["final"] == "ok" for t in reasked),
            "budget_refused": sum(t["budget_refused"] for t in trials),
            "final_ok": final_ok, "final_rate": final_ok / n if n else 0.0}


def _pct(x: float) -> str:
    return "%.0f%%" % (100 * x) if x in (0.0, 1.0) else "%.1f%%" % (100 * x)


def tool_calls(run) -> Dict[str, Any]:
    """get_weather per tool_choice mode and lane, `tool_trials` requests each, run
    `tool_concurrency` at a time. The verdict is the first-attempt success rate (with its
    95 % Wilson interval) against tool_first_try_min, and the rate after re-asks against
    tool_final_min. Every failed first attempt is a row with its evidence."""
    cfg, limits = run.cfg, run.suite_limits()
    cases = cfg.get("tool_cases") or TOOL_CASES
    checks, lanes, samples = [], [], []
    for choice, stream in [(c, s) for c in cfg["tool_choices"] for s in (False, True)]:
        if run.stopped:
            break
        lane = "%s %s" % (choice, "stream" if stream else "non-stream")
        with ThreadPoolExecutor(max_workers=max(1, cfg["tool_concurrency"])) as pool:
            trials = list(pool.map(lambda i, c=choice, s=stream: _trial(run, limits, c, s, i, cases[i % len(cases)]),
                                   range(cfg["tool_trials"])))
        st = dict(_lane_stats(trials), lane=lane, tool_choice=choice, stream=stream)
        lanes.append(st)
        samples.extend(dict(t, lane=lane) for t in trials)
        lo, hi = st["first_ci95"]
        classes = ", ".join("%s %d" % kv for kv in sorted(st["first_failure_classes"].items())) or "none"
        checks.append(check(
            "%s first-try rate" % lane, st["first_rate"] >= cfg["tool_first_try_min"],
            "%d/%d = %s (95%% CI %s-%s), minimum %s; first-attempt failures: %s" % (
                st["first_ok"], st["requests"], _pct(st["first_rate"]), _pct(lo), _pct(hi),
                _pct(cfg["tool_first_try_min"]), classes)))
        checks.append(check(
            "%s after re-asks" % lane, st["final_rate"] >= cfg["tool_final_min"],
            "%d/%d = %s, minimum %s; %d re-asks, %d of %d re-asked requests recovered%s" % (
                st["final_ok"], st["requests"], _pct(st["final_rate"]), _pct(cfg["tool_final_min"]), st["reasks"],
                st["recovered"], st["reasked_requests"],
                "; %d not re-asked: retry budget spent" % st["budget_refused"] if st["budget_refused"] else "")))
        for t in trials:
            if t["first"] == "ok":
                continue
            path = " -> ".join(a["class"] for a in t["attempts"])
            recovered = t["final"] == "ok"
            checks.append(check("%s request %d" % (lane, t["trial"]), True,
                                "%s: %s" % ("recovered" if recovered else "not recovered", path),
                                level="warn", evidence={"prompt": t["prompt"], "first": t["attempts"][0]["evidence"],
                                                        "last": t["attempts"][-1]["evidence"]}))
    return {"name": "tools", "checks": checks, "lanes": lanes, "samples": samples,
            "retry_budget": {"size": run.budget.size, "used": run.budget.used, "refused": run.budget.refused}}


# ---- load ---------------------------------------------------------------------------------------------------------

class MetricsSampler:
    """Polls /metrics while the load runs: KV-cache use and running/waiting requests."""

    def __init__(self, run, interval: float):
        self.run, self.interval = run, interval
        self.samples: List[Dict[str, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            try:
                text = fetch(self.run.root + "/metrics", self.run.cfg.get("api_key"), timeout=self.run.limits.connect)
                s = prom.summary(text)
                self.samples.append({"t": self.run.elapsed(), "kv_cache_usage_perc": s["kv_cache_usage_perc"],
                                     "running": s["requests_running"], "waiting": s["requests_waiting"]})
            except (OSError, ValueError):
                pass
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=self.run.limits.connect + 1)

    def summary(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"samples": len(self.samples), "interval_s": self.interval}
        for key in ("kv_cache_usage_perc", "running", "waiting"):
            vals = [s[key] for s in self.samples if s[key] is not None]
            out[key] = {"peak": max(vals) if vals else None, "mean": sum(vals) / len(vals) if vals else None}
        return out


def fetch(url: str, api_key: Optional[str] = None, timeout: float = 30) -> str:
    req = urllib.request.Request(url)
    if api_key:
        req.add_header("Authorization", "Bearer " + api_key)
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=timeout) as resp:
        return resp.read().decode("utf-8", "replace")


def load_problem(r: Dict[str, Any], max_tokens: int, min_ratio: float) -> Optional[str]:
    """Why one load answer is not a real generation: a transport error, nothing, one token
    repeated, or far fewer tokens than ignore_eos asked for."""
    if r.get("error"):
        return r.get("error_class") or "transport"
    text = (r.get("content") or "") + (r.get("reasoning") or "")
    if not text.strip():
        return "empty"
    if degenerate(text):
        return "repeated_token"
    if (r.get("output_tokens") or 0) < min_ratio * max_tokens:
        return "short"
    return None


def load(run) -> Dict[str, Any]:
    """Concurrent streaming requests: the latency and throughput figures, every answer
    checked for content, and the server's KV-cache use and queue sampled meanwhile."""
    cfg, limits = run.cfg, run.suite_limits()
    prompts = [{"role": "user", "content": "%s (request %d)" % (cfg["load_prompt"], i)} for i in range(cfg["load_requests"])]
    start = time.perf_counter()
    with MetricsSampler(run, cfg["metrics_interval"]) as sampler:
        with ThreadPoolExecutor(max_workers=cfg["load_concurrency"]) as pool:
            results = list(pool.map(lambda m: run.chat(limits, [m], cfg["load_max_tokens"], stream=True, temperature=0,
                                                       extra_body={"ignore_eos": True}), prompts))
    wall = time.perf_counter() - start
    problems = [load_problem(r, cfg["load_max_tokens"], cfg["load_min_output_ratio"]) for r in results]
    by_class: Dict[str, int] = {}
    for p in problems:
        if p:
            by_class[p] = by_class.get(p, 0) + 1
    ok = [r for r, p in zip(results, problems) if not p]
    timed = [r for r in results if not r.get("error")]
    out_tokens = sum(r["output_tokens"] or 0 for r in timed)
    metrics = {
        "requests": len(results), "errors": sum(1 for r in results if r.get("error")), "failed": len(results) - len(ok),
        "failures_by_class": by_class, "concurrency": cfg["load_concurrency"], "max_tokens": cfg["load_max_tokens"],
        "wall_s": wall, "output_tokens": out_tokens, "output_tokens_per_s": out_tokens / wall if wall else None,
        "ttft_s": measure.percentiles([r["ttft"] for r in timed]),
        "ttft_chunk_s": measure.percentiles([r["ttft_chunk"] for r in timed]),
        "ttft_content_s": measure.percentiles([r["ttft_content"] for r in timed]),
        "tpot_s": measure.percentiles([r["tpot"] for r in timed]),
        "itl_s": measure.percentiles([g for r in timed for g in r["itl"]]),
        "e2e_s": measure.percentiles([r["e2e"] for r in timed]),
        "per_request_output_tokens_per_s": measure.percentiles(
            [(r["output_tokens"] or 0) / r["e2e"] for r in timed if r["e2e"]]),
        "prompt_tokens": sum(r["prompt_tokens"] or 0 for r in timed),
    }
    detail = "%d/%d answered with real content" % (len(ok), len(results))
    if by_class:
        detail += "; failed: " + ", ".join("%s %d" % kv for kv in sorted(by_class.items()))
    checks = [check("every request answered with real content", not by_class, detail)]
    for i, (r, p) in enumerate(zip(results, problems)):
        if p and len(checks) <= 5:   # the first few, with their evidence
            checks.append(check("load request %d" % i, False, p, evidence={
                "error": r.get("error"), "output_tokens": r.get("output_tokens"), "max_tokens": cfg["load_max_tokens"],
                "content": tools.excerpt(r.get("content"), 120)}))
    return {"name": "load", "checks": checks, "metrics": metrics, "server_during_load": sampler.summary(),
            "samples": [{k: v for k, v in r.items() if k != "itl"} for r in results]}


SUITES = {"text": text_canary, "vision": vision_ocr, "long_context": long_context, "tools": tool_calls, "load": load}

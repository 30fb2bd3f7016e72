# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One smoke run's shared state: the client, the time limits (per request, per
suite, per run), the one re-ask budget, and the engine probe that stops the run
when the server no longer generates (a hung engine must fail in minutes, not
run every suite into its timeouts)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Dict, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.node.health import probe
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import (
    config, kv_transfer, measure, report, suites, tools)
from ansible_collections.inferops.vllm.plugins.module_utils.node import prom

# Transport failures after which the engine is probed: the server may have stopped generating.
SUSPECT = ("timeout", "deadline", "connection", "partial_stream", "http_500", "http_502", "http_503", "http_504")


class RetryBudget:
    """Re-asks left for the whole run, shared by the threads of the tool suite."""

    def __init__(self, size: int):
        self.size = size
        self.used = 0
        self.refused = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.used >= self.size:
                self.refused += 1
                return False
            self.used += 1
            return True


def symptom(result: Dict[str, Any], timeout: float) -> str:
    """What a failed probe means for the people reading the verdict."""
    stage, detail = result["stage"], result["detail"]
    if stage == "health":
        return "%s: the server is down or unreachable" % detail
    if stage == "models":
        return "%s: the API serves, but not this model" % detail
    if "timed out" in detail or "timeout" in detail.lower():
        return ("/health 200 but no generation within %.0f s: an engine or a follower is down" % timeout)
    return "/health 200 but the generation failed (%s): the engine is not serving" % detail


class Run:
    """The state one vllm_smoke call shares between its suites."""

    def __init__(self, client, model: str, cfg: Dict[str, Any], limits: measure.Limits, cluster: str = ""):
        self.client = client
        self.model = model
        self.cfg = cfg
        self.cluster = cluster
        self.base_url = cfg["base_url"]
        self.root = self.base_url.rstrip("/").rsplit("/v1", 1)[0]
        self.limits = limits
        self.started = time.monotonic()
        self.deadline = self.started + cfg["run_deadline"]
        self.budget = RetryBudget(cfg["retry_budget"])
        self.stopped: Optional[str] = None
        self.last_probe: Optional[Dict[str, Any]] = None
        self.suite = "probe"
        self._probe_lock = threading.Lock()

    def suite_limits(self) -> measure.Limits:
        """Per-request limits bounded by this suite's deadline and the run's."""
        return self.limits.until(min(time.monotonic() + self.cfg["suite_deadline"], self.deadline))

    def probe(self) -> Optional[str]:
        """One short generation with a short deadline; None when it answered, else the
        message that stops the run (cluster, endpoint, suite, symptom)."""
        timeout = max(1.0, min(self.cfg["probe_timeout"], self.deadline - time.monotonic()))
        result = probe(self.root, self.model, api_key=self.cfg.get("api_key"), timeout=timeout)
        self.last_probe = result
        if result["ready"]:
            return None
        return "smoke run on cluster %s stopped in suite %s: %s: %s" % (
            self.cluster or "?", self.suite, self.root, symptom(result, timeout))

    def chat(self, limits: measure.Limits, messages, max_tokens: int, **extra) -> Dict[str, Any]:
        """measure.chat that never raises: a transport failure comes back as `error` and
        `error_class`; a suspect one probes the engine once and may stop the run."""
        if self.stopped:
            return _failed("stopped", self.stopped)
        try:
            return measure.chat(self.client, self.model, messages, max_tokens, limits=limits, **extra)
        except Exception as exc:  # pylint: disable=broad-exception-caught  # any API error is a smoke failure
            cls = measure.error_class(exc)
            out = _failed(cls, "%s: %s" % (type(exc).__name__, exc))
            partial = getattr(exc, "partial", None)
            if partial:
                out.update({k: partial.get(k) for k in ("content", "reasoning", "tool_calls", "output_tokens")})
            if cls in SUSPECT:
                self.check_engine()
            return out

    def check_engine(self) -> None:
        with self._probe_lock:
            if not self.stopped:
                self.stopped = self.probe()

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def _failed(cls: str, message: str) -> Dict[str, Any]:
    return {"error": message, "error_class": cls, "content": None, "reasoning": None, "tool_calls": [],
            "finish_reason": None, "output_tokens": None, "prompt_tokens": None, "ttft": None, "ttft_chunk": None,
            "ttft_content": None, "tpot": None, "e2e": None, "itl": []}


def execute(params: Dict[str, Any]) -> Dict[str, Any]:
    """Probe, run the suites in order until one stops the run, read the server, build the report."""
    cfg = config.settings(params)
    times = cfg["timeouts"]
    limits = measure.Limits(connect=times["connect"], first_byte=times["first_byte"], total=times["request"])
    client = measure.client(params["base_url"], cfg["api_key"] or "none", times["request"])
    state = Run(client, params["model"], cfg, limits, cluster=params.get("cluster") or "")
    timing = {}
    state.stopped = state.probe()
    timing["probe"] = state.elapsed()
    cfg["max_model_len"] = (state.last_probe or {}).get("max_model_len") or cfg["max_model_len"]
    results = []
    # a P/D deployment behind the router: its sides' counters around the suites prove the KV moved (kv_transfer)
    sides = {role: list(urls) for role, urls in (params.get("kv_transfer") or {}).items() if urls}

    def read(url: str) -> str:
        return suites.fetch(url, cfg["api_key"], times["connect"])
    before = {role: kv_transfer.snapshot(urls, read) for role, urls in sides.items()}
    for name in params["suites"]:
        if state.stopped:
            break
        state.suite = name
        began = time.monotonic()
        results.append(suites.SUITES[name](state))
        timing[name] = time.monotonic() - began
    if sides and not state.stopped:
        results.append(kv_transfer.judge(sides, before, {role: kv_transfer.snapshot(urls, read)
                                                         for role, urls in sides.items()}))
    server = {}
    if not state.stopped:
        try:
            server = prom.summary(suites.fetch(state.root + "/metrics", cfg["api_key"], times["connect"]))
            server["vllm_version"] = json.loads(suites.fetch(state.root + "/version", cfg["api_key"],
                                                             times["connect"])).get("version")
        except (OSError, ValueError) as exc:
            server["error"] = "could not read /metrics or /version: %s" % exc
    timing["total"] = state.elapsed()
    environment = dict(params.get("environment") or {}, vllm_version=server.get("vllm_version"))
    return report.build(results, environment, server, stopped=state.stopped, timing=timing,
                        max_model_len=cfg["max_model_len"])


def failure_message(full: Dict[str, Any], cluster: str, md_path: str) -> str:
    if full["stopped"]:
        return "%s. Report: %s" % (full["stopped"], md_path)
    failed = "; ".join("%s/%s: %s" % (c["suite"], c["name"], c["detail"]) for c in full["failed_checks"][:8])
    return "smoke verdict FAILED on cluster %s: %d of %d checks failed: %s. Report: %s" % (
        cluster or "?", full["failures"], full["checks"], tools.excerpt(failed, 1500), md_path)

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke report: JSON for machines, Markdown for people, an SVG plot."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import fabric
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import capacity
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import startup

DEFINITIONS = {
    "ttft_s": "time to first token: request sent -> first chunk with content, reasoning or a tool call",
    "ttft_chunk_s": "time to first chunk: request sent -> first streamed chunk with a choice, even one without text "
                    "(the definition of vllm bench serve's TTFT)",
    "ttft_content_s": "time to first content token (after any reasoning)",
    "tpot_s": "time per output token: (e2e - ttft) / (output tokens - 1), output tokens from usage",
    "itl_s": "inter-token latency: gaps between consecutive output-carrying chunks",
    "e2e_s": "end-to-end latency: request sent -> the chunk that ends the generation (finish_reason)",
    "output_tokens_per_s": "sum of usage.completion_tokens / wall time of the load run",
    "per_request_output_tokens_per_s": "usage.completion_tokens / e2e, per request",
    "kv_cache_usage_perc": "vllm:kv_cache_usage_perc sampled from /metrics during the load (max over engines; "
                           "1 = 100 %); peak and mean over the samples",
    "first_try_rate": "tool-call requests whose first attempt was a valid call with the prompt's values / requests, "
                      "per tool_choice mode and lane; 95 % Wilson interval beside it",
    "after_reask_rate": "requests that ended in a valid call after at most tool_retries re-asks / requests",
    "failure_classes": "counted per first attempt: the unit is requests",
}


def cache_facts(server: Dict[str, Any], max_model_len: Optional[int]) -> Dict[str, Any]:
    """The cache facts that matter, from vllm:cache_config_info (read as the capacity curve reads it)."""
    info = server.get("cache_config") or {}
    cap = capacity.from_cache_config(info)
    tokens, concurrency = cap["kv_cache_tokens"], cap["max_concurrency"]
    if concurrency is None and tokens and max_model_len:
        concurrency = tokens / max_model_len
    return {"block_size": int(cap["block_size"]) if cap["block_size"] else None, "kv_cache_dtype": info.get("cache_dtype"),
            "kv_capacity_tokens": int(tokens) if tokens else None,
            "max_concurrency": round(concurrency, 2) if concurrency else None, "max_model_len": max_model_len}


def fabric_line(this_run: str, record: Dict[str, Any], image: str, nodes: Sequence[str]) -> str:
    """The report's fabric line: this run's fabric check, else the head's record of an earlier one (fabric.json)
    with its time and what no longer holds (a failed check, another image digest, another node set), else
    'not run'."""
    if this_run:
        return this_run
    if not record.get("summary"):
        return "not run"
    # what no longer holds, as the fabric check judges its record (it also compares the launch: not known here)
    notes = [str(record.get("checked_at") or "at an unknown time")] + fabric.record_changes(record, [image] if image else [], nodes)
    return "%s (an earlier run, %s)" % (record["summary"], ", ".join(notes))


def build(suites: List[Dict[str, Any]], environment: Dict[str, Any], server: Dict[str, Any],
          stopped: Optional[str] = None, timing: Optional[Dict[str, Any]] = None,
          max_model_len: Optional[int] = None) -> Dict[str, Any]:
    checks = [dict(c, suite=s["name"]) for s in suites for c in s["checks"]]
    if stopped:
        checks.insert(0, {"suite": "run", "name": "engine answers", "passed": False, "level": "fail",
                          "detail": stopped})
    failed = [c for c in checks if c.get("level", "pass" if c["passed"] else "fail") == "fail"]
    warned = [c for c in checks if c.get("level") == "warn"]
    tool = next((s for s in suites if s["name"] == "tools"), {})
    load = next((s for s in suites if s["name"] == "load"), {})
    verdict = "FAILED" if failed else ("PASSED with warnings" if warned else "PASSED")
    return {
        "passed": not failed,
        "verdict": verdict,
        "stopped": stopped,
        "checks": len(checks),
        "failures": len(failed),
        "warning_rows": len(warned),
        "failed_checks": failed,
        "warning_checks": warned,
        "metrics": load.get("metrics", {}),
        "server_during_load": load.get("server_during_load", {}),
        "tool_calls": {"lanes": tool.get("lanes", []), "retry_budget": tool.get("retry_budget", {})},
        "cache": cache_facts(server, max_model_len),
        "server": server,
        "environment": environment,
        "timing": timing or {},
        "definitions": DEFINITIONS,
        "suites": suites,
    }


def _fmt(value, scale=1000.0, unit="ms") -> str:
    return "-" if value is None else "%.1f %s" % (value * scale, unit)


def code(text: Any) -> str:
    """A Markdown code span that keeps markers verbatim, safe inside a table cell."""
    text = str(text).replace("\n", " ").replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    return "%s %s %s" % (fence, text, fence) if fence == "``" else "`%s`" % text


def _evidence(ev: Optional[Dict[str, Any]]) -> str:
    if not ev:
        return ""
    parts = []
    for key in ("prompt", "class", "detail", "markers", "arguments", "json_error", "schema_path", "instance_path",
                "error", "finish_reason", "output_tokens", "max_tokens", "content", "reasoning"):
        value = ev.get(key)
        if value in (None, "", [], {}):
            continue
        parts.append("%s %s" % (key, code(json.dumps(value) if isinstance(value, (dict, list)) else value)))
    for key in ("first", "last"):
        if ev.get(key) and (key == "first" or ev["last"] != ev["first"]):
            parts.append("%s attempt: %s" % (key, _evidence(ev[key])))
    return "; ".join(parts)


def markdown(report: Dict[str, Any]) -> str:
    env, m = report["environment"], report["metrics"]
    lines = ["# vLLM smoke report", "",
             "**%s**: %d checks, %d failed, %d warnings." % (report["verdict"], report["checks"], report["failures"],
                                                             report["warning_rows"]), ""]
    if report.get("stopped"):
        lines += ["**The run stopped early:** %s" % report["stopped"], ""]
    lines += ["## Environment", "", "| item | value |", "|---|---|"]
    lines += ["| %s | %s |" % (k, "; ".join("%s: %s" % kv for kv in v.items()) if isinstance(v, dict) else v)
              for k, v in env.items()]
    lines += startup.markdown(report.get("startup") or {})
    lanes = report["tool_calls"].get("lanes") or []
    if lanes:
        lines += ["", "## Tool calls", "",
                  "| lane | requests | first-try ok | rate | 95 % CI | first-attempt failures | re-asks | recovered | "
                  "after re-asks |", "|---|---|---|---|---|---|---|---|---|"]
        for st in lanes:
            lo, hi = st["first_ci95"]
            classes = ", ".join("%s %d" % kv for kv in sorted(st["first_failure_classes"].items())) or "-"
            lines.append("| %s | %d | %d | %.3f | %.3f-%.3f | %s | %d | %d/%d | %.3f |" % (
                st["lane"], st["requests"], st["first_ok"], st["first_rate"], lo, hi, classes, st["reasks"],
                st["recovered"], st["reasked_requests"], st["final_rate"]))
        budget = report["tool_calls"].get("retry_budget") or {}
        lines += ["", "Re-ask budget for the run: %s used of %s%s." % (
            budget.get("used"), budget.get("size"),
            ", %d re-asks refused" % budget["refused"] if budget.get("refused") else "")]
    if m:
        lines += ["", "## Latency and throughput (%d requests, concurrency %d)" % (m["requests"], m["concurrency"]), "",
                  "| metric | mean | p50 | p90 | p99 |", "|---|---|---|---|---|"]
        for key in ("ttft_s", "ttft_chunk_s", "ttft_content_s", "tpot_s", "itl_s", "e2e_s"):
            p = m.get(key) or {}
            cells = [key[:-2]] + [_fmt(p.get(stat)) for stat in ("mean", "p50", "p90", "p99")]
            lines.append("| %s |" % " | ".join(cells))
        lines += ["", "Output tokens/s (aggregate): %.1f; prompt tokens %d, output tokens %d." % (
            m.get("output_tokens_per_s") or 0, m.get("prompt_tokens", 0), m.get("output_tokens", 0))]
    during = report.get("server_during_load") or {}
    cache = report.get("cache") or {}
    lines += ["", "## Server", ""]
    if during.get("samples"):
        def pm(key, pct=False):
            v = during.get(key) or {}
            f = (lambda x: "-" if x is None else "%.1f %%" % (100 * x)) if pct else (lambda x: "-" if x is None else "%.1f" % x)
            return "peak %s, mean %s" % (f(v.get("peak")), f(v.get("mean")))
        lines += ["During the load (%d samples): KV-cache use %s; running requests %s; waiting requests %s." % (
            during["samples"], pm("kv_cache_usage_perc", True), pm("running"), pm("waiting"))]
    lines += ["KV cache: block size %s, dtype %s, capacity %s tokens, max concurrency %s at max-model-len %s." % (
        cache.get("block_size"), cache.get("kv_cache_dtype"), cache.get("kv_capacity_tokens"),
        cache.get("max_concurrency"), cache.get("max_model_len"))]
    kv = next((s.get("figures") for s in report["suites"] if s["name"] == "kv_transfer"), None)
    if kv:   # a P/D deployment behind the router (smoke/kv_transfer.py)
        lines += ["", "## KV transfer (prefill/decode)", "",
                  "Decode side: %d prompt tokens, %d over the connector (%.0f %%), %d computed locally; %d bytes moved, "
                  "%d failed transfers. Prefill side: %d requests, mean TTFT %s, mean prefill %s. Decode side: mean "
                  "TPOT %s." % (kv["decode_prompt_tokens"], kv["external_kv_transfer_tokens"],
                                100 * kv["transferred_share"], kv["local_compute_tokens"], kv["bytes_transferred"],
                                kv["failed_transfers"], kv["prefill_requests"], _fmt(kv["prefill_mean_ttft_s"]),
                                _fmt(kv["prefill_mean_prefill_s"]), _fmt(kv["decode_mean_tpot_s"]))]
    lines += ["", "## Checks", "", "| suite | check | result | detail | evidence |", "|---|---|---|---|---|"]
    for c in ([{"suite": "run", **c} for c in report["failed_checks"] if c.get("suite") == "run"]
              + [dict(c, suite=s["name"]) for s in report["suites"] for c in s["checks"]]):
        level = c.get("level", "pass" if c["passed"] else "fail")
        result = {"pass": "pass", "warn": "*warn*", "fail": "**FAIL**"}[level]
        detail = (c["detail"] or "").replace("\n", " ")
        detail = code(detail) if any(mk in detail for mk in ("<|", "|>", "|")) else detail
        lines.append("| %s | %s | %s | %s | %s |" % (c["suite"], c["name"], result, detail, _evidence(c.get("evidence"))))
    timing = report.get("timing") or {}
    if timing:
        lines += ["", "Run time: %s." % ", ".join("%s %.1f s" % (k, v) for k, v in timing.items())]
    lines += ["", "## Definitions", ""] + ["- **%s**: %s" % (k, v) for k, v in report["definitions"].items()]
    return "\n".join(lines) + "\n"


def svg_bars(title: str, series: Sequence[Tuple[str, float]], unit: str) -> str:
    """A small horizontal bar chart, dependency-free."""
    width, bar_h, left = 640, 22, 170
    height = 50 + bar_h * len(series)
    top = max([v for _k, v in series if v is not None] + [1e-9])
    rows = []
    for i, (label, value) in enumerate(series):
        y = 40 + i * bar_h
        w = 0 if value is None else (width - left - 90) * value / top
        rows.append('<text x="%d" y="%d" font-size="12" text-anchor="end">%s</text>' % (left - 6, y + 14, label))
        rows.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="#4e79a7"/>' % (left, y + 2, w, bar_h - 6))
        rows.append('<text x="%.1f" y="%d" font-size="12">%s</text>' % (
            left + w + 4, y + 14, "-" if value is None else "%.2f %s" % (value, unit)))
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">'
            '<text x="10" y="22" font-size="15" font-weight="bold">%s</text>%s</svg>\n' % (width, height, title, "".join(rows)))


def svg_lines(title: str, xs: Sequence[float], ys: Sequence[float], xlabel: str, ylabel: str) -> str:
    """A single-series line plot with points, dependency-free (the capacity curve)."""
    width, height, pad = 640, 360, 60
    pts = [(x, y) for x, y in zip(xs, ys) if y is not None]
    if not pts:
        return svg_bars(title, [], "")
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y1 = max(p[1] for p in pts) or 1

    def sx(x: float) -> float:
        return pad + (width - 2 * pad) * ((x - x0) / ((x1 - x0) or 1))

    def sy(y: float) -> float:
        return height - pad - (height - 2 * pad) * (y / y1)

    path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", sx(x), sy(y)) for i, (x, y) in enumerate(pts))
    marks = "".join('<circle cx="%.1f" cy="%.1f" r="4" fill="#e15759"/><text x="%.1f" y="%.1f" font-size="11">%g</text>'
                    % (sx(x), sy(y), sx(x) + 5, sy(y) - 6, round(y, 2)) for x, y in pts)
    ticks = "".join('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%g</text>' % (sx(x), height - pad + 16, x)
                    for x, _y in pts)
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">'
            '<text x="10" y="22" font-size="15" font-weight="bold">%s</text>'
            '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>'
            '<path d="%s" fill="none" stroke="#e15759" stroke-width="2"/>%s%s'
            '<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>'
            '<text x="14" y="%d" font-size="12" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text></svg>\n'
            % (width, height, title, pad, height - pad, width - pad, height - pad, pad, pad, pad, height - pad, path,
               marks, ticks, width // 2, height - 14, xlabel, height // 2, height // 2, ylabel))


def write(report: Dict[str, Any], directory: str, stem: str = "smoke") -> Dict[str, str]:
    os.makedirs(directory, exist_ok=True)
    paths = {k: os.path.join(directory, "%s.%s" % (stem, k)) for k in ("json", "md", "svg")}
    with open(paths["json"], "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1, default=str)
    with open(paths["md"], "w", encoding="utf-8") as fh:
        fh.write(markdown(report))
    m = report["metrics"]
    series = [(key[:-2] + " " + p, (m.get(key) or {}).get(p)) for key in ("ttft_s", "tpot_s", "itl_s", "e2e_s")
              for p in ("p50", "p90")] if m else []
    with open(paths["svg"], "w", encoding="utf-8") as fh:
        fh.write(svg_bars("Smoke latency (ms)", [(k, None if v is None else v * 1000) for k, v in series], "ms"))
    return paths


def amend(json_path: str, environment: Dict[str, Any],
          node_startup: Optional[Dict[str, Any]] = None) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """Add what the nodes said after the run to a written report - environment items and their startup
    phases - and write its JSON and Markdown again."""
    with open(json_path, encoding="utf-8") as fh:
        full = json.load(fh)
    full["environment"].update(environment)
    if node_startup:
        full["startup"] = startup.cluster(node_startup)
    paths = {"json": json_path, "md": os.path.splitext(json_path)[0] + ".md"}
    with open(paths["json"], "w", encoding="utf-8") as fh:
        json.dump(full, fh, indent=1, default=str)
    with open(paths["md"], "w", encoding="utf-8") as fh:
        fh.write(markdown(full))
    return full, paths

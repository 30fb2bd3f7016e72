# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke report: JSON for machines, Markdown for people, an SVG plot."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Sequence, Tuple

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
    "kv_cache_usage_perc": "vllm:kv_cache_usage_perc after the run (max over engines; 1 = 100 %)",
    "parser_retries": "tool-call re-asks after a classified failure",
}


def build(suites: List[Dict[str, Any]], environment: Dict[str, Any], server: Dict[str, Any]) -> Dict[str, Any]:
    checks = [dict(c, suite=s["name"]) for s in suites for c in s["checks"]]
    failed = [c for c in checks if not c["passed"]]
    tool = next((s for s in suites if s["name"] == "tools"), {})
    load = next((s for s in suites if s["name"] == "load"), {})
    return {
        "passed": not failed,
        "checks": len(checks),
        "failures": len(failed),
        "failed_checks": failed,
        "metrics": load.get("metrics", {}),
        "tool_calls": {"parser_retries": tool.get("parser_retries", 0), "failure_classes": tool.get("failure_classes", {})},
        "server": server,
        "environment": environment,
        "definitions": DEFINITIONS,
        "suites": suites,
    }


def _fmt(value, scale=1000.0, unit="ms") -> str:
    return "-" if value is None else "%.1f %s" % (value * scale, unit)


def markdown(report: Dict[str, Any]) -> str:
    env, m = report["environment"], report["metrics"]
    verdict = "PASSED" if report["passed"] else "FAILED"
    lines = ["# vLLM smoke report", "",
             "**%s**: %d checks, %d failed." % (verdict, report["checks"], report["failures"]), "",
             "## Environment", "", "| item | value |", "|---|---|"]
    lines += ["| %s | %s |" % (k, v) for k, v in env.items()]
    if m:
        lines += ["", "## Latency and throughput (%d requests, concurrency %d)" % (m["requests"], m["concurrency"]), "",
                  "| metric | mean | p50 | p90 | p99 |", "|---|---|---|---|---|"]
        for key in ("ttft_s", "ttft_chunk_s", "ttft_content_s", "tpot_s", "itl_s", "e2e_s"):
            p = m.get(key) or {}
            cells = [key[:-2]] + [_fmt(p.get(stat)) for stat in ("mean", "p50", "p90", "p99")]
            lines.append("| %s |" % " | ".join(cells))
        lines += ["", "Output tokens/s (aggregate): %.1f; prompt tokens %d, output tokens %d." % (
            m.get("output_tokens_per_s") or 0, m.get("prompt_tokens", 0), m.get("output_tokens", 0))]
    server = report["server"]
    lines += ["", "## Server", "", "KV-cache use after the run: %s; engines: %s; cache config: %s" % (
        server.get("kv_cache_usage_perc"), server.get("engines"), json.dumps(server.get("cache_config", {})))]
    tc = report["tool_calls"]
    lines += ["", "## Tool calls", "", "Parser retries: %d. Failure classes: %s" % (
        tc["parser_retries"], json.dumps(tc["failure_classes"]) if tc["failure_classes"] else "none")]
    lines += ["", "## Checks", "", "| suite | check | result | detail |", "|---|---|---|---|"]
    for suite in report["suites"]:
        for c in suite["checks"]:
            detail = (c["detail"] or "").replace("|", "/").replace("\n", " ")[:160]
            result = "pass" if c["passed"] else "**FAIL**"
            lines.append("| %s | %s | %s | %s |" % (suite["name"], c["name"], result, detail))
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

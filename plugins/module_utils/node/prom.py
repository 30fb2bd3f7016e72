# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parts of vLLM's /metrics (Prometheus text format) the smoke report uses."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse(text: str) -> List[Tuple[str, Dict[str, str], float]]:
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            continue
        try:
            value = float(m.group(4))
        except ValueError:
            continue
        out.append((m.group(1), dict(LABEL.findall(m.group(3) or "")), value))
    return out


def values(samples, name: str) -> List[float]:
    return [v for n, _labels, v in samples if n == name]


def summary(text: str) -> Dict[str, object]:
    """KV-cache use (max over engines), cache config, request counters."""
    samples = parse(text)
    kv = values(samples, "vllm:kv_cache_usage_perc")
    info: Optional[Dict[str, str]] = next((labels for n, labels, _v in samples if n == "vllm:cache_config_info"), None)
    success: Dict[str, float] = {}
    for n, labels, v in samples:
        if n == "vllm:request_success_total":
            key = labels.get("finished_reason", "?")
            success[key] = success.get(key, 0.0) + v
    return {
        "kv_cache_usage_perc": max(kv) if kv else None,
        "engines": len(kv),
        "cache_config": info or {},
        "requests_running": sum(values(samples, "vllm:num_requests_running")),
        "requests_waiting": sum(values(samples, "vllm:num_requests_waiting")),
        "request_success": success,
        "preemptions": sum(values(samples, "vllm:num_preemptions_total")),
        "prompt_tokens": sum(values(samples, "vllm:prompt_tokens_total")),
        "generation_tokens": sum(values(samples, "vllm:generation_tokens_total")),
    }

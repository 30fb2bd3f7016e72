# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""KV-cache capacity from vLLM's startup log (every known format) or /metrics."""

from __future__ import annotations

import re
from typing import Dict, Optional

NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
PATTERNS = {
    "kv_cache_tokens": re.compile(r"(?:GPU|CPU)?\s*KV cache size:\s*" + NUM + r"\s*tokens"),
    "max_concurrency": re.compile(r"Maximum concurrency for\s*" + NUM + r"\s*tokens per request:\s*" + NUM + r"x"),
    "available_kv_gib": re.compile(r"Available KV cache memory:\s*" + NUM + r"\s*GiB"),
    "num_gpu_blocks": re.compile(r"# (?:GPU|cpu|CPU) blocks:\s*" + NUM),
    "auto_fit": re.compile(r"Auto-fit max_model_len: reduced from\s*" + NUM + r"\s*to\s*" + NUM),
    "too_long": re.compile(r"estimated maximum model length is\s*" + NUM),
}


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def from_log(text: str) -> Dict[str, Optional[float]]:
    """The last value of each capacity line in a startup log (merged or two-line forms, V0 blocks,
    auto-fit, and the too-long ValueError's estimate)."""
    out: Dict[str, Optional[float]] = {k: None for k in ("kv_cache_tokens", "max_concurrency", "max_concurrency_len",
                                                         "available_kv_gib", "num_gpu_blocks", "auto_fit_len",
                                                         "estimated_max_model_len")}
    for key, pattern in PATTERNS.items():
        matches = pattern.findall(text)
        if not matches:
            continue
        last = matches[-1]
        if key == "max_concurrency":
            out["max_concurrency_len"], out["max_concurrency"] = _num(last[0]), _num(last[1])
        elif key == "auto_fit":
            out["auto_fit_len"] = _num(last[1])
        elif key == "too_long":
            out["estimated_max_model_len"] = _num(last)
        else:
            out[key] = _num(last)
    return out


def from_cache_config(info: Dict[str, str]) -> Dict[str, Optional[float]]:
    """vllm:cache_config_info labels: blocks and block size, and newer builds' token/concurrency labels."""
    def num(key):
        try:
            return float(info[key])
        except (KeyError, ValueError):
            return None
    blocks, block_size = num("num_gpu_blocks"), num("block_size")
    tokens = num("kv_cache_size_tokens")
    if tokens is None and blocks is not None and block_size is not None:
        tokens = blocks * block_size
    return {"kv_cache_tokens": tokens, "max_concurrency": num("kv_cache_max_concurrency"), "num_gpu_blocks": blocks,
            "block_size": block_size}

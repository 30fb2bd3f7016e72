# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a P/D deployment really moves KV: the sides' /metrics read before and after the smoke suites ran through
the router, judged as one more suite (kv_transfer).

vLLM counts every prompt token of the decode side by where it came from (vllm:prompt_tokens_by_source_total:
local_compute, local_cache_hit, external_kv_transfer). A decode side that received the KV counts the prompts under
external_kv_transfer; one that recomputes them (the connector failed under kv_load_failure_policy=recompute, or the
router did not hand the KV's whereabouts on) counts them under local_compute, and still answers correctly. So the
answers alone cannot tell; these counters can. NIXL also counts its failed transfers and the bytes it moved."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ansible_collections.inferops.vllm.plugins.module_utils.node import prom

SOURCES = ("local_compute", "local_cache_hit", "external_kv_transfer")
COUNTERS = {"failed_transfers": "vllm:nixl_num_failed_transfers_total",
            "failed_notifications": "vllm:nixl_num_failed_notifications_total",
            "bytes_transferred": "vllm:nixl_bytes_transferred_sum",
            "ttft_sum": "vllm:time_to_first_token_seconds_sum", "ttft_count": "vllm:time_to_first_token_seconds_count",
            "tpot_sum": "vllm:request_time_per_output_token_seconds_sum",
            "tpot_count": "vllm:request_time_per_output_token_seconds_count",
            "prefill_sum": "vllm:request_prefill_time_seconds_sum",
            "prefill_count": "vllm:request_prefill_time_seconds_count"}
# Below this share of the decode side's prompt tokens coming over the connector, the KV moves only in part: a warning
# (the last partial block and the token the decode side samples from are computed locally).
MIN_SHARE = 0.5


def counters(metrics: str) -> Dict[str, float]:
    """The counters this check reads, summed over every engine and model."""
    samples = prom.parse(metrics)
    out = {name: 0.0 for name in SOURCES}
    for name, labels, value in samples:
        if name == "vllm:prompt_tokens_by_source_total" and labels.get("source") in out:
            out[labels["source"]] += value
    for key, name in COUNTERS.items():
        out[key] = sum(prom.values(samples, name))
    return out


def snapshot(urls: Sequence[str], fetch: Callable[[str], str]) -> Dict[str, Dict[str, Any]]:
    """{worker URL: counters, or {"error": why}} for each side's endpoint."""
    out: Dict[str, Dict[str, Any]] = {}
    for url in urls:
        try:
            out[url] = counters(fetch(url.rstrip("/") + "/metrics"))
        except (OSError, ValueError) as exc:
            out[url] = {"error": "could not read %s/metrics: %s" % (url.rstrip("/"), exc)}
    return out


def _delta(before: Mapping[str, Dict[str, Any]], after: Mapping[str, Dict[str, Any]]) -> Dict[str, float]:
    total: Dict[str, float] = {}
    for url, now in after.items():
        then = before.get(url) or {}
        for key, value in now.items():
            if key != "error":
                total[key] = total.get(key, 0.0) + value - float(then.get(key, 0.0))
    return total


def _mean(delta: Mapping[str, float], prefix: str) -> Optional[float]:
    count = delta.get(prefix + "_count", 0.0)
    return round(delta.get(prefix + "_sum", 0.0) / count, 4) if count else None


def judge(sides: Mapping[str, Sequence[str]], before: Mapping[str, Mapping[str, Dict[str, Any]]],
          after: Mapping[str, Mapping[str, Dict[str, Any]]]) -> Dict[str, Any]:
    """The kv_transfer suite: checks and figures from the decode and prefill sides' counters before and after."""
    checks: List[Dict[str, Any]] = []
    unread = [snap["error"] for snaps in (after, before) for role in ("prefill", "decode")
              for snap in (snaps.get(role) or {}).values() if "error" in snap]
    if unread:
        checks.append({"name": "both sides' metrics read", "passed": False, "level": "fail",
                       "detail": "; ".join(unread[:4]) + ": the KV transfer cannot be judged"})
        return {"name": "kv_transfer", "checks": checks, "sides": dict(sides)}
    decode = _delta(before.get("decode") or {}, after.get("decode") or {})
    prefill = _delta(before.get("prefill") or {}, after.get("prefill") or {})
    moved, computed = decode.get("external_kv_transfer", 0.0), decode.get("local_compute", 0.0)
    prompt = moved + computed + decode.get("local_cache_hit", 0.0)
    share = moved / prompt if prompt else 0.0
    figures = {"decode_prompt_tokens": prompt, "external_kv_transfer_tokens": moved, "local_compute_tokens": computed,
               "transferred_share": round(share, 4), "bytes_transferred": decode.get("bytes_transferred", 0.0),
               "failed_transfers": decode.get("failed_transfers", 0.0) + prefill.get("failed_transfers", 0.0),
               "prefill_requests": prefill.get("ttft_count", 0.0), "prefill_mean_ttft_s": _mean(prefill, "ttft"),
               "prefill_mean_prefill_s": _mean(prefill, "prefill"), "decode_mean_tpot_s": _mean(decode, "tpot")}
    if not prompt:
        checks.append({"name": "decode side received requests", "passed": False, "level": "fail",
                       "detail": "the decode side counted no prompt tokens: the router sent it nothing"})
    elif not moved:
        checks.append({"name": "KV moved from prefill to decode", "passed": False, "level": "fail",
                       "detail": "the decode side computed every prompt itself (local_compute +%d, "
                                 "external_kv_transfer +0): the KV is not moving" % computed})
    else:
        checks.append({"name": "KV moved from prefill to decode", "passed": True,
                       "level": "pass" if share >= MIN_SHARE else "warn",
                       "detail": "%d of %d decode prompt tokens came over the connector (%.0f %%)"
                                 % (moved, prompt, 100 * share)})
    if not figures["prefill_requests"]:
        checks.append({"name": "prefill side served the prompts", "passed": False, "level": "fail",
                       "detail": "the prefill side counted no request: the router did not use it"})
    if figures["failed_transfers"]:
        checks.append({"name": "no failed KV transfers", "passed": False, "level": "fail",
                       "detail": "%d KV transfers failed (vllm:nixl_num_failed_transfers_total)"
                                 % figures["failed_transfers"]})
    else:
        checks.append({"name": "no failed KV transfers", "passed": True, "level": "pass", "detail": "0 failed"})
    return {"name": "kv_transfer", "checks": checks, "sides": dict(sides), "figures": figures}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The metric names the rules and dashboards use, as data: vLLM 0.32's (vllm/v1/metrics/loggers.py), the
router's (vllm-router 0.1.17), the watchdog's (watchdog.render_prom), and readers for the GPU field lists that
the vllm_exporters role owns. Controller-only, no Ansible imports."""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Set, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.scripts import watchdog

ROLE_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "roles",
                          "vllm_exporters", "files")
DCGM_CSV = os.path.join(ROLE_FILES, "dcgm-counters.csv")
AMD_JSON = os.path.join(ROLE_FILES, "amd-fields.json")


@dataclass(frozen=True)
class Metric:
    name: str     # as exposed: counters with _total; a histogram by its base name
    kind: str     # counter, gauge, histogram
    what: str


VLLM: Tuple[Metric, ...] = (
    Metric("vllm:num_requests_running", "gauge", "requests in the engine's running batch"),
    Metric("vllm:num_requests_waiting", "gauge", "requests queued for the engine"),
    Metric("vllm:kv_cache_usage_perc", "gauge", "share of the KV cache in use (0-1)"),
    Metric("vllm:num_preemptions_total", "counter", "requests preempted for lack of KV cache"),
    Metric("vllm:prompt_tokens_total", "counter", "prompt tokens processed"),
    Metric("vllm:generation_tokens_total", "counter", "tokens generated"),
    Metric("vllm:prefix_cache_queries_total", "counter", "tokens looked up in the prefix cache"),
    Metric("vllm:prefix_cache_hits_total", "counter", "tokens found in the prefix cache"),
    Metric("vllm:request_success_total", "counter", "finished requests by finished_reason"),
    Metric("vllm:time_to_first_token_seconds", "histogram", "time to first token"),
    Metric("vllm:inter_token_latency_seconds", "histogram", "time between two output tokens"),
    Metric("vllm:e2e_request_latency_seconds", "histogram", "request latency, end to end"),
    Metric("vllm:request_queue_time_seconds", "histogram", "time a request waited in the queue"),
    Metric("http_requests_total", "counter", "HTTP requests of the API server by handler, method and status"),
)
# A P/D side's (vllm_pd_role): where the decode side's prompt tokens came from, and NIXL's transfers
# (vllm/distributed/kv_transfer/kv_connector/v1/nixl/stats.py); only P/D plans use them.
PD: Tuple[Metric, ...] = (
    Metric("vllm:prompt_tokens_by_source_total", "counter",
           "prompt tokens by source: local_compute, local_cache_hit, external_kv_transfer"),
    Metric("vllm:request_prefill_time_seconds", "histogram", "time a request spent in prefill"),
    Metric("vllm:nixl_num_failed_transfers_total", "counter", "KV transfers that failed"),
    Metric("vllm:nixl_bytes_transferred", "histogram", "bytes moved per KV transfer"),
    Metric("vllm:nixl_xfer_time_seconds", "histogram", "time of one KV transfer"),
)
# Gone in vLLM 0.32: a rule or panel that uses one shows nothing.
REMOVED_VLLM: Tuple[str, ...] = ("vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds",
                                 "vllm:gpu_prefix_cache_queries", "vllm:gpu_prefix_cache_hits",
                                 "vllm:num_requests_swapped", "vllm:cpu_cache_usage_perc")

ROUTER: Tuple[Metric, ...] = (
    Metric("vllm_router_requests_total", "counter", "requests by route"),
    # chat and completion requests, streamed or not (vllm-router 0.1.17 records no route-labelled duration for them)
    Metric("vllm_router_generate_duration_seconds", "histogram", "generate request duration"),
    Metric("vllm_router_request_errors_total", "counter", "failed requests by route and error_type"),
    Metric("vllm_router_retries_total", "counter", "retried requests"),
    Metric("vllm_router_retries_exhausted_total", "counter", "requests that ran out of retries"),
    Metric("vllm_router_worker_health", "gauge", "1 when the worker passes the router's health checks"),
    Metric("vllm_router_active_workers", "gauge", "workers the router sends to"),
    Metric("vllm_router_worker_load", "gauge", "requests in flight per worker"),
    Metric("vllm_router_processed_requests_total", "counter", "requests sent to each worker"),
    Metric("vllm_router_cb_state", "gauge", "circuit breaker per worker: 0 closed, 1 open, 2 half-open"),
)


def _watchdog_table() -> Tuple[Metric, ...]:
    """The watchdog's own exposition, read from what it writes for a fresh state with a start read: the table
    cannot drift."""
    kinds: Dict[str, str] = {}
    helps: Dict[str, str] = {}
    started = watchdog.State(startup={"started_epoch": 1.0, "phases": {"api_ready": {"after_s": 1.0}},
                                      "image_pulled_at": "1970-01-01T00:00:01Z",
                                      "weights_staged_at": "1970-01-01T00:00:01Z", "weights_from": "weight cache"})
    for line in watchdog.render_prom(started, {}, weight_cache=1).splitlines():
        parts = line.split(" ", 3)
        if line.startswith("# TYPE "):
            kinds[parts[2]] = parts[3]
        elif line.startswith("# HELP "):
            helps[parts[2]] = parts[3]
    return tuple(Metric(name, kinds[name], helps.get(name, "")) for name in kinds)


WATCHDOG: Tuple[Metric, ...] = _watchdog_table()

# Prometheus's own series for every target.
SCRAPE: Tuple[str, ...] = ("up", "scrape_duration_seconds", "scrape_samples_scraped")

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def exposed(metrics: Iterable[Metric]) -> Set[str]:
    """Every series name a table's metrics appear under (a histogram's _bucket, _sum and _count)."""
    out: Set[str] = set()
    for metric in metrics:
        if metric.kind == "histogram":
            out.update(metric.name + suffix for suffix in HISTOGRAM_SUFFIXES)
        else:
            out.add(metric.name)
    return out


def dcgm_fields(path: Optional[str] = None) -> Dict[str, Tuple[str, str]]:
    """{field: (Prometheus type, help)} from a DCGM exporter counters CSV ('#' comments, blank lines)."""
    out: Dict[str, Tuple[str, str]] = {}
    with open(path or DCGM_CSV, encoding="utf-8", newline="") as handle:
        for row in csv.reader(line for line in handle if line.strip() and not line.lstrip().startswith("#")):
            cells = [cell.strip() for cell in row] + ["", ""]
            out[cells[0]] = (cells[1], ",".join(row[2:]).strip())
    return out


def dcgm_metric_names(path: Optional[str] = None) -> Set[str]:
    """The series names the DCGM exporter serves for the CSV: every field but the label rows."""
    return {field for field, (kind, _text) in dcgm_fields(path).items() if kind != "label"}


def amd_fields(path: Optional[str] = None) -> List[str]:
    """The field names of AMD's device-metrics-exporter config (uppercase, as in its config.json)."""
    with open(path or AMD_JSON, encoding="utf-8") as handle:
        fields = json.load(handle)
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise ValueError("%s must hold a JSON list of field names" % (path or AMD_JSON))
    return fields


def amd_metric_names(path: Optional[str] = None) -> Set[str]:
    """The exporter serves each field lowercased (no MetricsFieldPrefix)."""
    return {field.lower() for field in amd_fields(path)}


# --- metric names in a PromQL expression (for the checks of rules and panels) ---------------------------

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_BRACES = re.compile(r"\{[^{}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_GROUPINGS = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_TOKEN = re.compile(r"(?<![\w:.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?")
_KEYWORDS = frozenset({"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
                       "bool", "offset", "inf", "nan", "Inf", "NaN"})


def names_in(expr: str) -> Set[str]:
    """The metric names a PromQL expression selects (functions, keywords, labels and template variables left
    out). Enough for the expressions generated here: no `{__name__=~...}` selectors."""
    text = _STRINGS.sub('""', expr)
    text = _BRACES.sub("", text)
    text = _RANGES.sub("", text)
    text = _GROUPINGS.sub(" ", text)
    out = set()
    for match in _TOKEN.finditer(text):
        name, call = match.group(1), match.group(2)
        if call or name in _KEYWORDS:
            continue
        out.add(name)
    return out

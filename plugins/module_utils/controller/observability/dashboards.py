# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Grafana dashboards written here, from the same metric tables as the rules: every metric a panel queries is
looked up in metrics.py (or the vllm_exporters role's field lists), so a rename fails the generator, not a
dashboard at 3 a.m. Three dashboards (cluster overview, GPUs, router) with the variables datasource and
cluster, and a file-provider provisioning YAML. Controller-only, no Ansible imports."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import metrics

TAG = "inferops-vllm"
DASHBOARDS_PATH = "/var/lib/grafana/dashboards/inferops-vllm"   # where a site puts the JSON files
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"
QUANTILES = (0.5, 0.95, 0.99)

Query = Tuple[str, str]   # (expr, legend)


class _Names:
    """The names a dashboard may use; name() refuses any other, at generation time."""

    def __init__(self, dcgm: Set[str], amd: Set[str]):
        tables = metrics.VLLM + metrics.PD + metrics.ROUTER + metrics.WATCHDOG
        # a histogram by its base name: the panel appends _bucket
        self.known = metrics.exposed(tables) | {m.name for m in tables} | set(metrics.SCRAPE) | dcgm | amd

    def __call__(self, name: str) -> str:
        if name not in self.known:
            raise ValueError("dashboard metric %s is in no metric table or field list" % name)
        return name


def _variable_datasource() -> Dict[str, Any]:
    return {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
            "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []}


def _variable_query(name: str, label: str, query: str) -> Dict[str, Any]:
    return {"name": name, "label": label, "type": "query", "datasource": dict(DATASOURCE),
            "query": {"query": query, "refId": "%s-values" % name}, "definition": query, "refresh": 2,
            "multi": True, "includeAll": True, "allValue": ".+", "current": {}, "hide": 0, "sort": 1,
            "regex": "", "options": []}


def _panel(panel_id: int, title: str, queries: Sequence[Query], unit: str, x: int, y: int, w: int = 12,
           h: int = 8, description: str = "") -> Dict[str, Any]:
    return {"id": panel_id, "type": "timeseries", "title": title, "description": description,
            "datasource": dict(DATASOURCE), "gridPos": {"x": x, "y": y, "w": w, "h": h},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
            "targets": [{"refId": chr(ord("A") + i), "datasource": dict(DATASOURCE), "expr": expr,
                         "legendFormat": legend} for i, (expr, legend) in enumerate(queries)]}


def _row(panel_id: int, title: str, y: int) -> Dict[str, Any]:
    return {"id": panel_id, "type": "row", "title": title, "collapsed": False, "panels": [],
            "gridPos": {"x": 0, "y": y, "w": 24, "h": 1}}


def _layout(sections: Iterable[Tuple[str, List[Tuple[str, List[Query], str]]]]) -> List[Dict[str, Any]]:
    """Rows of two panels side by side, ids in order."""
    out: List[Dict[str, Any]] = []
    y, panel_id = 0, 1
    for title, panels in sections:
        if not panels:
            continue
        out.append(_row(panel_id, title, y))
        panel_id, y = panel_id + 1, y + 1
        for i, (panel_title, queries, unit) in enumerate(panels):
            out.append(_panel(panel_id, panel_title, queries, unit, x=12 * (i % 2), y=y + 8 * (i // 2)))
            panel_id += 1
        y += 8 * ((len(panels) + 1) // 2)
    return out


def _dashboard(uid: str, title: str, panels: List[Dict[str, Any]], variables: List[Dict[str, Any]]) -> str:
    board = {"uid": uid, "title": title, "tags": [TAG], "editable": False, "timezone": "browser",
             "schemaVersion": 39, "version": 1, "refresh": "30s", "time": {"from": "now-6h", "to": "now"},
             "annotations": {"list": []}, "templating": {"list": variables}, "panels": panels}
    return json.dumps(board, indent=2, ensure_ascii=False) + "\n"


def _quantiles(name: str, selector: str) -> List[Query]:
    return [("histogram_quantile(%s, sum by (cluster, le) (rate(%s_bucket{%s}[%s])))" % (q, name, selector, RATE),
             "{{cluster}} p%d" % round(q * 100)) for q in QUANTILES]


def cluster_overview(n: _Names, watchdog: bool, pd: bool = False) -> str:
    s = 'job="inferops_vllm",cluster=~"$cluster"'
    sections = [
        ("Requests", [
            ("Finished requests per second", [("sum by (cluster, finished_reason) (rate(%s{%s}[%s]))"
                                               % (n("vllm:request_success_total"), s, RATE),
                                               "{{cluster}} {{finished_reason}}")], "reqps"),
            ("HTTP requests per second by status", [("sum by (cluster, status) (rate(%s{%s}[%s]))"
                                                     % (n("http_requests_total"), s, RATE),
                                                     "{{cluster}} {{status}}")], "reqps"),
            ("Running requests per engine", [("sum by (cluster, engine) (%s{%s})"
                                              % (n("vllm:num_requests_running"), s),
                                              "{{cluster}} engine {{engine}}")], "short"),
            ("Engines reporting", [("count by (cluster) (count by (cluster, node, engine) (%s{%s}))"
                                    % (n("vllm:num_requests_running"), s), "{{cluster}}")], "short"),
        ]),
        ("Latency", [
            ("Time to first token", _quantiles(n("vllm:time_to_first_token_seconds"), s), "s"),
            ("Inter-token latency", _quantiles(n("vllm:inter_token_latency_seconds"), s), "s"),
            ("End-to-end request latency", _quantiles(n("vllm:e2e_request_latency_seconds"), s), "s"),
            ("Queue time", _quantiles(n("vllm:request_queue_time_seconds"), s), "s"),
        ]),
        ("Tokens", [
            ("Tokens per second", [("sum by (cluster) (rate(%s{%s}[%s]))" % (n("vllm:prompt_tokens_total"), s, RATE),
                                    "{{cluster}} prompt"),
                                   ("sum by (cluster) (rate(%s{%s}[%s]))"
                                    % (n("vllm:generation_tokens_total"), s, RATE), "{{cluster}} generation")],
             "short"),
            ("Prefix cache hit rate", [("sum by (cluster) (rate(%s{%s}[%s])) / sum by (cluster) (rate(%s{%s}[%s]))"
                                        % (n("vllm:prefix_cache_hits_total"), s, RATE,
                                           n("vllm:prefix_cache_queries_total"), s, RATE), "{{cluster}}")],
             "percentunit"),
        ]),
        ("KV cache and queue", [
            ("KV cache use per engine", [("max by (cluster, engine) (%s{%s})" % (n("vllm:kv_cache_usage_perc"), s),
                                          "{{cluster}} engine {{engine}}")], "percentunit"),
            ("Waiting requests per engine", [("sum by (cluster, engine) (%s{%s})"
                                              % (n("vllm:num_requests_waiting"), s),
                                              "{{cluster}} engine {{engine}}")], "short"),
            ("Preemptions per second per engine", [("sum by (cluster, engine) (rate(%s{%s}[%s]))"
                                                    % (n("vllm:num_preemptions_total"), s, RATE),
                                                    "{{cluster}} engine {{engine}}")], "short"),
            ("Scrape targets up", [("%s{%s}" % (n("up"), s), "{{cluster}} {{node}}")], "short"),
        ]),
    ]
    if pd:   # the sides of P/D deployments (vllm_pd_role): whether the KV moves, and each side's latency
        d = s + ',pd_role="decode"'
        sections.append(("Prefill/decode", [
            ("Decode side's prompt tokens by source", [("sum by (cluster, source) (rate(%s{%s}[%s]))"
                                                        % (n("vllm:prompt_tokens_by_source_total"), d, RATE),
                                                        "{{cluster}} {{source}}")], "short"),
            ("Failed KV transfers", [("sum by (cluster) (increase(%s{%s}[%s]))"
                                      % (n("vllm:nixl_num_failed_transfers_total"), s, RATE), "{{cluster}}")],
             "short"),
            ("KV moved per second", [("sum by (cluster) (rate(%s_sum{%s}[%s]))"
                                      % (n("vllm:nixl_bytes_transferred"), s, RATE), "{{cluster}}")], "Bps"),
            ("KV transfer time", _quantiles(n("vllm:nixl_xfer_time_seconds"), s), "s"),
            ("Prefill side: time to first token", _quantiles(n("vllm:time_to_first_token_seconds"),
                                                             s + ',pd_role="prefill"'), "s"),
            ("Decode side: inter-token latency", _quantiles(n("vllm:inter_token_latency_seconds"), d), "s"),
        ]))
    if watchdog:
        w = 'cluster=~"$cluster"'
        sections.append(("Watchdog", [
            ("Watchdog state", [("max by (cluster, node, state) (%s{%s}) == 1" % (n("inferops_vllm_watchdog_state"), w),
                                 "{{cluster}} {{node}} {{state}}")], "short"),
            ("Watchdog restarts", [("max by (cluster, node) (%s{%s})" % (n("inferops_vllm_watchdog_restarts_total"), w),
                                    "{{cluster}} {{node}}")], "short"),
            # the watchdog reads each node's last start from its vLLM log (docs/startup.md)
            ("Last start: seconds to each phase", [("max by (cluster, node, phase) (%s{%s})" % (
                n("inferops_vllm_startup_phase_seconds"), w), "{{cluster}} {{node}} {{phase}}")], "s"),
        ]))
    variables = [_variable_datasource(),
                 _variable_query("cluster", "Cluster", 'label_values(up{job="inferops_vllm"}, cluster)')]
    return _dashboard("inferops-vllm-cluster", "inferops.vllm: clusters", _layout(sections), variables)


def gpus(n: _Names, vendors: Sequence[str]) -> str:
    s = 'job="inferops_gpu",cluster=~"$cluster",node=~"$node"'
    by = "{{node}} GPU {{gpu}}"
    sections = [("GPU exporters", [("Exporter targets up", [("%s{%s}" % (n("up"), s), "{{cluster}} {{node}}")],
                                    "short")])]
    if "nvidia" in vendors:
        nvlink = " + ".join("increase(%s{%s}[%s])" % (n(name), s, RATE) for name in (
            "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
            "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"))
        sections[0][1].append(("GPUs per node (NVIDIA)", [("count by (cluster, node) (%s{%s})"
                                                           % (n("DCGM_FI_DEV_GPU_TEMP"), s), "{{cluster}} {{node}}")],
                               "short"))
        sections.append(("NVIDIA GPUs", [
            ("GPU utilization", [("%s{%s}" % (n("DCGM_FI_DEV_GPU_UTIL"), s), by)], "percent"),
            ("Framebuffer memory used", [("%s{%s}" % (n("DCGM_FI_DEV_FB_USED"), s), by)], "decmbytes"),
            ("GPU temperature", [("%s{%s}" % (n("DCGM_FI_DEV_GPU_TEMP"), s), by)], "celsius"),
            ("Power draw", [("%s{%s}" % (n("DCGM_FI_DEV_POWER_USAGE"), s), by)], "watt"),
            ("Share of time thermally throttled",
             [("rate(%s{%s}[%s]) / 1e6" % (n("DCGM_FI_DEV_THERMAL_VIOLATION"), s, RATE), by)], "percentunit"),
            ("XID errors in the exporter's window", [("%s{%s}" % (n("DCGM_EXP_XID_ERRORS_COUNT"), s),
                                                      by + " XID {{xid}}")], "short"),
            ("Uncorrectable ECC errors", [("increase(%s{%s}[%s])" % (n("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"), s, RATE),
                                           by)], "short"),
            ("NVLink errors", [(nvlink, by)], "short"),
        ]))
    if "amd" in vendors:
        by = "{{node}} GPU {{gpu_id}}"
        sections[0][1].append(("GPUs per node (AMD)", [("count by (cluster, node) (%s{%s})"
                                                        % (n("gpu_junction_temperature"), s), "{{cluster}} {{node}}")],
                               "short"))
        sections.append(("AMD GPUs", [
            ("GFX activity", [("%s{%s}" % (n("gpu_gfx_activity"), s), by)], "percent"),
            ("VRAM used", [("%s{%s}" % (n("gpu_used_vram"), s), by)], "decmbytes"),
            ("Junction temperature", [("%s{%s}" % (n("gpu_junction_temperature"), s), by)], "celsius"),
            ("Package power", [("%s{%s}" % (n("gpu_package_power"), s), by)], "watt"),
            ("Uncorrectable ECC errors", [("increase(%s{%s}[%s])" % (n("gpu_ecc_uncorrect_total"), s, RATE), by)],
             "short"),
        ]))
    variables = [_variable_datasource(),
                 _variable_query("cluster", "Cluster", 'label_values(up{job="inferops_gpu"}, cluster)'),
                 _variable_query("node", "Node", 'label_values(up{job="inferops_gpu",cluster=~"$cluster"}, node)')]
    return _dashboard("inferops-vllm-gpus", "inferops.vllm: GPUs", _layout(sections), variables)


def router(n: _Names) -> str:
    s = 'job="inferops_router"'
    sections = [
        ("Requests", [
            ("Requests per second by route", [("sum by (route) (rate(%s{%s}[%s]))"
                                               % (n("vllm_router_requests_total"), s, RATE), "{{route}}")], "reqps"),
            ("Generate request duration p95", [("histogram_quantile(0.95, sum by (node, le) (rate(%s_bucket{%s}[%s])))"
                                                % (n("vllm_router_generate_duration_seconds"), s, RATE), "{{node}}")],
             "s"),
            ("Errors per second", [("sum by (route, error_type) (rate(%s{%s}[%s]))"
                                    % (n("vllm_router_request_errors_total"), s, RATE), "{{route}} {{error_type}}")],
             "reqps"),
            ("Retries per second", [("sum (rate(%s{%s}[%s]))" % (n("vllm_router_retries_total"), s, RATE), "retries"),
                                    ("sum (rate(%s{%s}[%s]))" % (n("vllm_router_retries_exhausted_total"), s, RATE),
                                     "exhausted")], "reqps"),
        ]),
        ("Workers", [
            ("Worker health", [("%s{%s}" % (n("vllm_router_worker_health"), s), "{{node}} {{worker}}")], "short"),
            ("Circuit breaker (0 closed, 1 open, 2 half-open)", [("%s{%s}" % (n("vllm_router_cb_state"), s),
                                                                  "{{node}} {{worker}}")], "short"),
            ("Active workers", [("%s{%s}" % (n("vllm_router_active_workers"), s), "{{node}}")], "short"),
            ("Requests per second by worker", [("sum by (worker) (rate(%s{%s}[%s]))"
                                                % (n("vllm_router_processed_requests_total"), s, RATE),
                                                "{{worker}}")], "reqps"),
            ("Router targets up", [("%s{%s}" % (n("up"), s), "{{node}}")], "short"),
        ]),
    ]
    variables = [_variable_datasource(),
                 _variable_query("cluster", "Cluster", 'label_values(up{job="inferops_vllm"}, cluster)')]
    return _dashboard("inferops-vllm-router", "inferops.vllm: router", _layout(sections), variables)


def provisioning() -> str:
    return ("# Grafana dashboard provider for the inferops.vllm dashboards: copy the dashboards/*.json files to\n"
            "# %s (or change the path) and this file to Grafana's provisioning/dashboards/.\n"
            "apiVersion: 1\n"
            "providers:\n"
            "  - name: inferops-vllm\n"
            "    folder: inferops-vllm\n"
            "    type: file\n"
            "    disableDeletion: false\n"
            "    allowUiUpdates: false\n"
            "    updateIntervalSeconds: 60\n"
            "    options:\n"
            "      path: %s\n" % (DASHBOARDS_PATH, DASHBOARDS_PATH))


def files(vendors: Sequence[str], watchdog: bool, dcgm: Optional[Set[str]] = None,
          amd: Optional[Set[str]] = None, pd: bool = False) -> Dict[str, str]:
    names = _Names(metrics.dcgm_metric_names() if dcgm is None else dcgm,
                   metrics.amd_metric_names() if amd is None else amd)
    return {"dashboards/inferops-cluster.json": cluster_overview(names, watchdog, pd),
            "dashboards/inferops-gpus.json": gpus(names, vendors),
            "dashboards/inferops-router.json": router(names),
            "dashboards/provisioning.yml": provisioning()}


def exprs(board: Dict[str, Any]) -> List[str]:
    """Every targets[].expr of a dashboard, rows' nested panels included."""
    out: List[str] = []

    def walk(panels: List[Dict[str, Any]]) -> None:
        for panel in panels:
            out.extend(t["expr"] for t in panel.get("targets", ()))
            walk(panel.get("panels", []))
    walk(board.get("panels", []))
    return out

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The alert rules: one table of every rule's defaults (for window, severity, thresholds), the site's
overrides from vllm_observability_alerts (unknown keys refused with the closest names), and the rule files.
Rules that need a number from the plan (the data-parallel size, GPUs per node) are written per cluster.
Annotations use only {{ $labels.* }}: the thresholds are written into the text. Controller-only, no Ansible
imports."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.errors import ObservabilityError
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.settings import is_duration

VARIABLE = "vllm_observability_alerts"
SEVERITIES = ("critical", "warning", "info")
COMMON_FIELDS = ("for", "severity", "enabled")
NVLINK_ERRORS = ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
                 "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL")
# One series per GPU the exporter sees, whatever the workload.
GPU_PRESENCE = {"nvidia": "DCGM_FI_DEV_GPU_TEMP", "amd": "gpu_junction_temperature"}
GRACE = 'inferops_vllm_watchdog_state{state="grace"} == 1'
ON_NODE = "{{ $labels.node }} (cluster {{ $labels.cluster }})"
GPU_ON_NODE = "GPU {{ $labels.gpu }} of " + ON_NODE


@dataclass(frozen=True)
class Alert:
    """A rule's defaults. `params` are its thresholds by name; `file` is vllm, gpu or router; a per-cluster
    rule's expression also gets the cluster (ClusterFacts)."""
    key: str
    name: str
    file: str
    severity: str
    for_: str
    summary: str
    description: str
    params: Mapping[str, float] = field(default_factory=dict)
    per_cluster: bool = False
    enabled: bool = True


@dataclass(frozen=True)
class ClusterFacts:
    name: str
    vendor: str
    data_parallel: int
    gpus_per_node: int


def _num(value: float) -> str:
    """A threshold as PromQL and people write it: 2.0 -> 2, 0.95 -> 0.95."""
    return ("%f" % value).rstrip("0").rstrip(".") if value != int(value) else "%d" % value


def _pct(value: float) -> str:
    return "%s %%" % _num(value * 100)


DEFAULTS: Tuple[Alert, ...] = (
    # --- vLLM -----------------------------------------------------------------------------------------
    Alert("engine_down", "InferopsVllmEngineDown", "vllm", "critical", "5m",
          "vLLM's API on " + ON_NODE + " does not answer /metrics",
          "Prometheus cannot scrape {{ $labels.instance }} and the cluster's watchdog reports no model load in "
          "progress (grace). Fix: read `docker logs vllm` and `journalctl -u vllm-watchdog` on {{ $labels.node }}; "
          "converge with --tags serve to restart the cluster."),
    Alert("watchdog_gave_up", "InferopsVllmWatchdogGaveUp", "vllm", "critical", "1m",
          "The watchdog on " + ON_NODE + " gave up restarting vLLM",
          "It restarted the container vllm_watchdog_max_restarts times without a good probe and waits for an "
          "operator. Fix: read `journalctl -u vllm-watchdog` and `docker logs vllm` on {{ $labels.node }}, fix the "
          "cause, then converge with --tags serve."),
    Alert("weight_cache_down", "InferopsVllmWeightCacheDown", "vllm", "warning", "10m",
          "The weight-cache daemon on " + ON_NODE + " does not answer",
          "vllm_weight_cache is on, but the daemon's /health does not answer, so vLLM's next start on this node "
          "(a heal, a restart) reads the weights from disk. Fix: read `docker logs vllm-weight-cache` on "
          "{{ $labels.node }}, then converge with --tags serve (it starts the daemon with vLLM stopped)."),
    Alert("engines_missing", "InferopsVllmEnginesMissing", "vllm", "critical", "5m",
          "A cluster reports fewer engines than its data-parallel size",
          "", params={"tolerated": 0}, per_cluster=True),
    Alert("kv_cache_full", "InferopsVllmKvCacheFull", "vllm", "warning", "10m",
          "KV cache of engine {{ $labels.engine }} on " + ON_NODE + " is nearly full while requests queue or are "
          "preempted", "", params={"usage": 0.95, "waiting": 0, "preemptions_per_second": 0}),
    Alert("ttft_p95", "InferopsVllmTimeToFirstTokenHigh", "vllm", "warning", "10m",
          "Time to first token of {{ $labels.model_name }} on cluster {{ $labels.cluster }} is over its SLO", "",
          params={"quantile": 0.95, "seconds": 5}),
    Alert("itl_p95", "InferopsVllmInterTokenLatencyHigh", "vllm", "warning", "10m",
          "Inter-token latency of {{ $labels.model_name }} on cluster {{ $labels.cluster }} is over its SLO", "",
          params={"quantile": 0.95, "seconds": 0.2}),
    Alert("request_errors", "InferopsVllmRequestErrors", "vllm", "warning", "5m",
          "Requests on cluster {{ $labels.cluster }} finish with an error", "", params={"ratio": 0.05}),
    Alert("http_5xx", "InferopsVllmHttp5xx", "vllm", "critical", "5m",
          "vLLM's API on cluster {{ $labels.cluster }} answers with 5xx", "", params={"ratio": 0.05}),
    # --- P/D deployments (vllm_pd_role): written only for a plan with one --------------------------------
    Alert("kv_transfer_failed", "InferopsVllmKvTransferFailed", "pd", "critical", "0s",
          "KV transfers fail on cluster {{ $labels.cluster }} (P/D deployment {{ $labels.pd_deployment }})", "",
          params={"failures": 0}),
    Alert("kv_not_moving", "InferopsVllmKvNotMoving", "pd", "critical", "5m",
          "The decode side {{ $labels.cluster }} of P/D deployment {{ $labels.pd_deployment }} computes every prompt "
          "itself",
          "Its prompt tokens all count as local_compute and none as external_kv_transfer: the KV does not move from "
          "the prefill side, so every prompt is computed twice and the decode side's latency suffers. Fix: check that "
          "the router runs in P/D mode (`vllm-pd-disaggregation` in router.json), that the prefill side serves, and "
          "the connector's errors in `docker logs vllm` on both sides (side channel, UCX)."),
    Alert("pd_side_down", "InferopsVllmPdSideDown", "pd", "critical", "1m",
          "The {{ $labels.pd_role }} side of P/D deployment {{ $labels.pd_deployment }} is down",
          "No vLLM API of that side answers /metrics, and no model load is in progress there. Every request through "
          "the deployment's router needs both sides: without a prefill side the requests stall (no KV is computed "
          "for the decode side), without a decode side they fail. Fix: the watchdog restarts the side's nodes "
          "(`journalctl -u vllm-watchdog`); read `docker logs vllm` there, else converge with --tags serve."),
    # --- router ---------------------------------------------------------------------------------------
    Alert("router_worker_unhealthy", "InferopsRouterWorkerUnhealthy", "router", "critical", "2m",
          "Router {{ $labels.node }} marks worker {{ $labels.worker }} unhealthy",
          "The router's health checks of the cluster endpoint {{ $labels.worker }} fail, so it sends it no "
          "requests. Fix: check that cluster's head (InferopsVllmEngineDown) and the network from "
          "{{ $labels.node }} to it."),
    Alert("router_circuit_open", "InferopsRouterCircuitOpen", "router", "warning", "2m",
          "Router {{ $labels.node }} opened the circuit to worker {{ $labels.worker }}",
          "Requests to {{ $labels.worker }} kept failing (vllm_router_cb_failure_threshold), so the router stopped "
          "sending to it for vllm_router_cb_timeout seconds at a time. Fix: look at that cluster's errors "
          "(InferopsVllmHttp5xx) and logs."),
    Alert("router_down", "InferopsRouterDown", "router", "critical", "2m",
          "Router {{ $labels.node }} does not answer /metrics",
          "Prometheus cannot scrape {{ $labels.instance }}. Fix: `systemctl status inferops-vllm-router` and "
          "`journalctl -u inferops-vllm-router` on {{ $labels.node }}; converge with --tags router."),
    # --- GPUs -----------------------------------------------------------------------------------------
    Alert("gpu_xid", "InferopsGpuXidError", "gpu", "critical", "0s",
          GPU_ON_NODE + " reported XID {{ $labels.xid }}",
          "The driver logged XID {{ $labels.xid }} on GPU {{ $labels.gpu }} ({{ $labels.UUID }}). Fix: look the "
          "XID up in NVIDIA's XID catalog; 48, 63, 64, 74, 79, 94, 95 and 119 mean draining the node and resetting "
          "the GPU or the node; read `dmesg` on {{ $labels.node }}.", params={"count": 0}),
    Alert("gpu_ecc_uncorrectable", "InferopsGpuEccUncorrectable", "gpu", "critical", "0s",
          GPU_ON_NODE + " had an uncorrectable ECC error",
          "Double-bit ECC errors were counted on GPU {{ $labels.gpu }} ({{ $labels.UUID }}) in the last 10 minutes. "
          "Fix: drain {{ $labels.node }}, reset the GPU to remap the rows, and replace it if errors return.",
          params={"errors": 0}),
    Alert("gpu_row_remap_failure", "InferopsGpuRowRemapFailure", "gpu", "critical", "0s",
          GPU_ON_NODE + " failed to remap a memory row",
          "GPU {{ $labels.gpu }} ({{ $labels.UUID }}) has no spare rows left for a failing memory row. Fix: drain "
          "{{ $labels.node }} and have the GPU replaced."),
    Alert("gpu_remapped_rows", "InferopsGpuRowsRemapped", "gpu", "warning", "0s",
          GPU_ON_NODE + " remapped memory rows for uncorrectable errors",
          "Rows of GPU {{ $labels.gpu }} ({{ $labels.UUID }}) were remapped in the last hour; the remapping takes "
          "effect after a GPU reset. Fix: reset the GPU at the next drain of {{ $labels.node }}.",
          params={"rows": 0}),
    Alert("gpu_thermal_violation", "InferopsGpuThermalThrottling", "gpu", "warning", "10m",
          GPU_ON_NODE + " is throttled by its thermal limit", "", params={"share": 0.05}),
    Alert("gpu_nvlink_errors", "InferopsGpuNvlinkErrors", "gpu", "warning", "0s",
          GPU_ON_NODE + " counts NVLink errors", "", params={"errors": 0}),
    Alert("amd_ecc_uncorrectable", "InferopsAmdGpuEccUncorrectable", "gpu", "critical", "0s",
          "AMD GPU {{ $labels.gpu_id }} of " + ON_NODE + " had an uncorrectable ECC error",
          "Uncorrectable ECC errors were counted on GPU {{ $labels.gpu_id }} in the last 10 minutes. Fix: drain "
          "{{ $labels.node }}, check `amd-smi metric --ecc`, and replace the GPU if errors return.",
          params={"errors": 0}),
    Alert("gpu_missing", "InferopsGpuMissing", "gpu", "critical", "5m",
          "Node " + ON_NODE + " shows fewer GPUs than the plan", "", per_cluster=True),
    Alert("exporter_down", "InferopsExporterDown", "gpu", "warning", "5m",
          "The {{ $labels.job }} exporter on " + ON_NODE + " does not answer /metrics",
          "Prometheus cannot scrape {{ $labels.instance }}, so the node's GPU (or watchdog) alerts are blind. Fix: "
          "check the exporter container (`docker ps -a`) or prometheus-node-exporter on {{ $labels.node }}; converge "
          "with --tags observability."),
)
BY_KEY: Dict[str, Alert] = {alert.key: alert for alert in DEFAULTS}


# --- overrides -------------------------------------------------------------------------------------------

def _closest(word: str, choices: List[str]) -> str:
    near = difflib.get_close_matches(word, choices, n=3, cutoff=0.5)
    return ("did you mean %s? " % " or ".join(near) if near else "") + "known: %s" % ", ".join(choices)


def resolve(overrides: Mapping[str, Any]) -> Dict[str, Alert]:
    """The table with the site's overrides applied; ObservabilityError for an unknown key, an unknown field
    or a value of the wrong kind."""
    out = dict(BY_KEY)
    for key, fields in (overrides or {}).items():
        if key not in BY_KEY:
            raise ObservabilityError(VARIABLE, {key: fields}, "no alert rule %r" % key,
                                     _closest(str(key), sorted(BY_KEY)))
        alert = BY_KEY[key]
        if not isinstance(fields, Mapping):
            raise ObservabilityError(VARIABLE, {key: fields}, "the overrides of %s must be a mapping" % key,
                                     "write e.g. {%s: {for: 10m}}" % key)
        known = list(COMMON_FIELDS) + sorted(alert.params)
        params = dict(alert.params)
        changes: Dict[str, Any] = {}
        for name, value in fields.items():
            where = "%s.%s" % (VARIABLE, key)
            if name not in known:
                raise ObservabilityError(where, {name: value}, "%s has no setting %r" % (key, name),
                                         _closest(str(name), known))
            if name == "for":
                if not is_duration(value):
                    raise ObservabilityError(where + ".for", value, "not a Prometheus duration", "write e.g. 5m or 0s")
                changes["for_"] = value
            elif name == "severity":
                if value not in SEVERITIES:
                    raise ObservabilityError(where + ".severity", value, "not a severity",
                                             "set one of %s" % ", ".join(SEVERITIES))
                changes["severity"] = value
            elif name == "enabled":
                if not isinstance(value, bool):
                    raise ObservabilityError(where + ".enabled", value, "must be true or false",
                                             "write true or false, unquoted")
                changes["enabled"] = value
            else:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                    raise ObservabilityError(where + "." + name, value, "must be a number >= 0",
                                             "write a number, e.g. %s" % _num(alert.params[name]))
                if name == "quantile" and not 0 < value < 1:
                    raise ObservabilityError(where + ".quantile", value, "must be between 0 and 1",
                                             "write e.g. 0.95 or 0.99")
                params[name] = value
        out[key] = replace(alert, params=params, **changes)
    return out


# --- expressions ---------------------------------------------------------------------------------------

VLLM = 'job="inferops_vllm"'
GPU = 'job="inferops_gpu"'
ROUTER = 'job="inferops_router"'


def _quantile(metric: str, p: Mapping[str, float]) -> str:
    return ("histogram_quantile(%s, sum by (cluster, model_name, le) (rate(%s_bucket{%s}[5m]))) > %s"
            % (_num(p["quantile"]), metric, VLLM, _num(p["seconds"])))


def _share(selector_bad: str, selector_all: str, metric: str, ratio: float) -> str:
    return ("sum by (cluster) (rate(%s{%s}[5m])) / sum by (cluster) (rate(%s{%s}[5m])) > %s"
            % (metric, selector_bad, metric, selector_all, _num(ratio)))


EXPRESSIONS: Dict[str, Callable[[Mapping[str, float]], str]] = {
    "engine_down": lambda p: 'up{%s} == 0 unless on (cluster) (%s)' % (VLLM, GRACE),
    "watchdog_gave_up": lambda p: "inferops_vllm_watchdog_gave_up == 1",
    "weight_cache_down": lambda p: "inferops_vllm_weight_cache_up == 0",
    "kv_cache_full": lambda p: (
        "max by (cluster, node, engine, model_name) (vllm:kv_cache_usage_perc{%s}) > %s and on (cluster) "
        "(sum by (cluster) (vllm:num_requests_waiting{%s}) > %s or "
        "sum by (cluster) (rate(vllm:num_preemptions_total{%s}[5m])) > %s)"
        % (VLLM, _num(p["usage"]), VLLM, _num(p["waiting"]), VLLM, _num(p["preemptions_per_second"]))),
    "ttft_p95": lambda p: _quantile("vllm:time_to_first_token_seconds", p),
    "itl_p95": lambda p: _quantile("vllm:inter_token_latency_seconds", p),
    "request_errors": lambda p: _share(VLLM + ',finished_reason="error"', VLLM, "vllm:request_success_total",
                                       p["ratio"]),
    "http_5xx": lambda p: _share(VLLM + ',status="5xx"', VLLM, "http_requests_total", p["ratio"]),
    "kv_transfer_failed": lambda p: (
        "sum by (cluster, pd_deployment) (increase(vllm:nixl_num_failed_transfers_total{%s}[10m])) > %s"
        % (VLLM, _num(p["failures"]))),
    "kv_not_moving": lambda p: (
        'sum by (cluster, pd_deployment) (rate(vllm:prompt_tokens_by_source_total{%s,pd_role="decode"}[10m])) > 0 '
        'unless on (cluster) sum by (cluster) (rate(vllm:prompt_tokens_by_source_total{%s,pd_role="decode",'
        'source="external_kv_transfer"}[10m])) > 0' % (VLLM, VLLM)),
    # a side whose every target is down; its clusters in a model load (the watchdogs' grace) leave no series
    "pd_side_down": lambda p: ('max by (pd_deployment, pd_role) (up{%s,pd_role!=""} unless on (cluster) (%s)) == 0'
                               % (VLLM, GRACE)),
    "router_worker_unhealthy": lambda p: "vllm_router_worker_health{%s} == 0" % ROUTER,
    "router_circuit_open": lambda p: "vllm_router_cb_state{%s} == 1" % ROUTER,
    "router_down": lambda p: "up{%s} == 0" % ROUTER,
    "gpu_xid": lambda p: "DCGM_EXP_XID_ERRORS_COUNT{%s} > %s" % (GPU, _num(p["count"])),
    "gpu_ecc_uncorrectable": lambda p: "increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{%s}[10m]) > %s"
                                       % (GPU, _num(p["errors"])),
    "gpu_row_remap_failure": lambda p: "DCGM_FI_DEV_ROW_REMAP_FAILURE{%s} > 0" % GPU,
    "gpu_remapped_rows": lambda p: "increase(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{%s}[1h]) > %s"
                                   % (GPU, _num(p["rows"])),
    # the violation counters count microseconds throttled: their rate / 1e6 is the share of time throttled
    "gpu_thermal_violation": lambda p: "rate(DCGM_FI_DEV_THERMAL_VIOLATION{%s}[5m]) / 1e6 > %s"
                                       % (GPU, _num(p["share"])),
    "gpu_nvlink_errors": lambda p: " or ".join("(increase(%s{%s}[10m]) > %s)" % (name, GPU, _num(p["errors"]))
                                               for name in NVLINK_ERRORS),
    "amd_ecc_uncorrectable": lambda p: "increase(gpu_ecc_uncorrect_total{%s}[10m]) > %s" % (GPU, _num(p["errors"])),
    "exporter_down": lambda p: 'up{job=~"inferops_gpu|inferops_node"} == 0',
}


def _descriptions(alert: Alert) -> str:
    """The descriptions that name a threshold."""
    p = alert.params
    texts = {
        "kv_cache_full": "KV cache use has stayed above %s for %s while the cluster has more than %s waiting "
                         "requests or more than %s preemptions per second, so requests wait and are recomputed. "
                         "Fix: add capacity (more data-parallel replicas), lower max-num-seqs or max-model-len, or "
                         "use an fp8 KV cache." % (_pct(p.get("usage", 0)), alert.for_, _num(p.get("waiting", 0)),
                                                   _num(p.get("preemptions_per_second", 0))),
        "ttft_p95": "p%s time to first token has stayed above %ss for %s. Fix: look for queueing "
                    "(vllm:num_requests_waiting) and long prompts; add capacity or route traffic elsewhere."
                    % (_num(p.get("quantile", 0) * 100), _num(p.get("seconds", 0)), alert.for_),
        "itl_p95": "p%s inter-token latency has stayed above %ss for %s. Fix: look for large batches, preemptions "
                   "and a slow fabric (InferopsGpuNvlinkErrors); lower max-num-seqs or add capacity."
                   % (_num(p.get("quantile", 0) * 100), _num(p.get("seconds", 0)), alert.for_),
        "request_errors": "More than %s of finished requests ended with finished_reason=error for %s. Fix: read "
                          "the API server's log on the head (`docker logs vllm`)."
                          % (_pct(p.get("ratio", 0)), alert.for_),
        "http_5xx": "More than %s of HTTP requests got a 5xx answer for %s. Fix: read the API server's log on the "
                    "head (`docker logs vllm`) and check the engines (InferopsVllmEnginesMissing)."
                    % (_pct(p.get("ratio", 0)), alert.for_),
        "kv_transfer_failed": "More than %s KV transfers failed in 10 minutes on {{ $labels.cluster }}; with "
                              "kv_load_failure_policy=fail each one fails its request. Fix: read `docker logs vllm` "
                              "on both sides for NIXL/UCX errors, and check the fabric between them "
                              "(--tags fabric_check)." % _num(p.get("failures", 0)),
        "gpu_thermal_violation": "GPU {{ $labels.gpu }} ({{ $labels.UUID }}) spent more than %s of the time "
                                 "throttled by its thermal limit for %s. Fix: check the node's cooling and "
                                 "fans." % (_pct(p.get("share", 0)), alert.for_),
        "gpu_nvlink_errors": "NVLink CRC, replay or recovery errors grew by more than %s in 10 minutes on GPU "
                             "{{ $labels.gpu }} ({{ $labels.UUID }}). Fix: run the fabric check "
                             "(--tags fabric_check) and `nvidia-smi nvlink -e`; reseat or replace the link."
                             % _num(p.get("errors", 0)),
    }
    return texts.get(alert.key, alert.description)


def _rule(alert: Alert, expr: str, labels: Optional[Mapping[str, str]] = None,
          description: Optional[str] = None, summary: Optional[str] = None) -> Dict[str, Any]:
    rule: Dict[str, Any] = {"alert": alert.name, "expr": expr}
    if alert.for_ not in ("0s", "0m", "0"):
        rule["for"] = alert.for_
    rule["labels"] = dict({"severity": alert.severity}, **(labels or {}))
    rule["annotations"] = {"summary": summary or alert.summary, "description": description or _descriptions(alert)}
    return rule


def engines_missing(alert: Alert, c: ClusterFacts) -> Dict[str, Any]:
    """Distinct (node, engine) pairs: the head reports every engine under the internal load balancer, each
    API node its own under the hybrid one. No series (a dead head) counts as 0. A dead DP follower leaves
    its engine's last values on the head's /metrics (the head does not notice it), so the watchdogs'
    per-rank probe counts too: the most ranks any of the cluster's watchdogs saw answer.
    Quiet only while the head's watchdog is in grace: every load of the whole group (a deploy, a converge,
    the head's restart) starts the head, while a follower alone in grace is a rank that died and came back
    by docker's restart policy, its engine still missing from the group."""
    wanted = c.data_parallel - int(alert.params["tolerated"])
    sel = '%s,cluster="%s"' % (VLLM, c.name)
    expr = ("((count(count by (node, engine) (vllm:num_requests_running{%s})) or vector(0)) < %d "
            "or max(inferops_vllm_watchdog_ranks_answered{cluster=\"%s\"}) < %d) "
            "unless on () (max(inferops_vllm_watchdog_state{cluster=\"%s\",role=\"head\",state=\"grace\"}) == 1)"
            % (sel, wanted, c.name, wanted, c.name))
    text = ("The plan runs %d data-parallel engines on cluster %s; fewer than %d report metrics or answer the "
            "watchdog's probe, and the head's watchdog reports no model load in progress. Fix: `docker ps -a` and `docker "
            "logs vllm` on its nodes (a dead follower takes its engines with it); the watchdog restarts them, else "
            "converge with --tags serve." % (c.data_parallel, c.name, wanted))
    # the result has no labels (count, vector): the annotations name the cluster themselves
    return _rule(alert, expr, {"cluster": c.name}, text,
                 "Cluster %s reports fewer engines than its data-parallel size (%d)" % (c.name, c.data_parallel))


def gpu_missing(alert: Alert, c: ClusterFacts) -> Dict[str, Any]:
    """Per node: its GPU series, or 0 where the exporter answers without any (the up series keeps the node)."""
    sel = '%s,cluster="%s"' % (GPU, c.name)
    expr = ("(count by (cluster, node) (%s{%s}) or max by (cluster, node) (up{%s}) * 0) < %d"
            % (GPU_PRESENCE[c.vendor], sel, sel, c.gpus_per_node))
    text = ("The plan expects %d GPUs on every node of cluster %s; the exporter on {{ $labels.node }} shows fewer "
            "(or does not answer). Fix: `nvidia-smi` / `amd-smi list` on {{ $labels.node }}; a GPU that fell off "
            "the bus needs a reset or a reboot; vLLM on it cannot start." % (c.gpus_per_node, c.name))
    return _rule(alert, expr, {"cluster": c.name}, text)   # the label keeps the clusters' rules apart


PER_CLUSTER: Dict[str, Callable[[Alert, ClusterFacts], Dict[str, Any]]] = {
    "engines_missing": engines_missing, "gpu_missing": gpu_missing}


def groups(alerts: Mapping[str, Alert], clusters: List[ClusterFacts], gpu: bool,
           pd: bool = False) -> Dict[str, List[Dict[str, Any]]]:
    """{file: rule groups}: a shared group per file, then one group per cluster for the per-cluster rules. The
    P/D file only for a plan with a P/D deployment."""
    out: Dict[str, List[Dict[str, Any]]] = {"vllm": [], "gpu": [], "router": []}
    if pd:
        out["pd"] = []
    for file in out:
        shared = [_rule(a, EXPRESSIONS[a.key](a.params)) for a in alerts.values()
                  if a.file == file and a.enabled and not a.per_cluster]
        if shared:
            out[file].append({"name": "inferops-%s" % file, "rules": shared})
        for c in sorted(clusters, key=lambda c: c.name):
            rules = [PER_CLUSTER[a.key](a, c) for a in alerts.values() if a.file == file and a.enabled and a.per_cluster
                     and (file != "gpu" or (gpu and c.vendor in GPU_PRESENCE))]
            if rules:
                out[file].append({"name": "inferops-%s-%s" % (file, c.name), "rules": rules})
    return out

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""vLLM's router (PyPI vllm-router) in front of the clusters: its arguments and worker list from the
inventory, and its runtime worker API (add, remove, drain). Stdlib only: the filter runs on the
controller, the router_worker module on any host that reaches the router."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node.health import _OPENER
from ansible_collections.inferops.vllm.plugins.module_utils.node import prom

POLICIES = ("round_robin", "random", "cache_aware", "power_of_two", "consistent_hash")
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

# Router flags that have their own role variable; vllm_router_extra_args may not set them.
FLAG_VARS = {
    "host": "vllm_router_host",
    "port": "vllm_router_port",
    "worker-urls": "vllm_router_workers (or vllm_router_clusters)",
    "api-key": "vllm_router_api_key (it is kept in a 0600 file, never on the command line)",
    "policy": "vllm_router_policy",
    "health-check-interval-secs": "vllm_router_health_check_interval",
    "health-check-timeout-secs": "vllm_router_health_check_timeout",
    "health-check-endpoint": "vllm_router_health_check_endpoint",
    "health-failure-threshold": "vllm_router_health_failure_threshold",
    "health-success-threshold": "vllm_router_health_success_threshold",
    "retry-max-retries": "vllm_router_retry_max_retries",
    "retry-initial-backoff-ms": "vllm_router_retry_initial_backoff_ms",
    "retry-max-backoff-ms": "vllm_router_retry_max_backoff_ms",
    "disable-retries": "vllm_router_retries",
    "cb-failure-threshold": "vllm_router_cb_failure_threshold",
    "cb-success-threshold": "vllm_router_cb_success_threshold",
    "cb-timeout-duration-secs": "vllm_router_cb_timeout",
    "disable-circuit-breaker": "vllm_router_circuit_breaker",
    "request-timeout-secs": "vllm_router_request_timeout",
    "worker-startup-timeout-secs": "vllm_router_worker_startup_timeout",
    "worker-startup-check-interval": "vllm_router_worker_startup_check_interval",
    "prometheus-host": "vllm_router_prometheus_host",
    "prometheus-port": "vllm_router_prometheus_port",
    "log-level": "vllm_router_log_level",
    # P/D mode, from the plan's prefill and decode clusters (vllm_pd_role)
    "vllm-pd-disaggregation": "vllm_pd_role on the clusters (the router then runs in P/D mode)",
    "prefill": "vllm_pd_role: prefill on a cluster",
    "decode": "vllm_pd_role: decode on a cluster",
    "kv-connector": "vllm_kv_connector on the clusters",
    "prefill-policy": "vllm_router_prefill_policy",
    "decode-policy": "vllm_router_decode_policy",
}

# (role variable, router flag, smallest value) for the plain integer settings.
_INTS = (
    ("vllm_router_health_check_interval", "health-check-interval-secs", 1),
    ("vllm_router_health_check_timeout", "health-check-timeout-secs", 1),
    ("vllm_router_health_failure_threshold", "health-failure-threshold", 1),
    ("vllm_router_health_success_threshold", "health-success-threshold", 1),
    ("vllm_router_request_timeout", "request-timeout-secs", 1),
    ("vllm_router_worker_startup_timeout", "worker-startup-timeout-secs", 1),
    ("vllm_router_worker_startup_check_interval", "worker-startup-check-interval", 1),
)
_RETRY_INTS = (
    ("vllm_router_retry_max_retries", "retry-max-retries", 1),
    ("vllm_router_retry_initial_backoff_ms", "retry-initial-backoff-ms", 1),
    ("vllm_router_retry_max_backoff_ms", "retry-max-backoff-ms", 1),
)
_CB_INTS = (
    ("vllm_router_cb_failure_threshold", "cb-failure-threshold", 1),
    ("vllm_router_cb_success_threshold", "cb-success-threshold", 1),
    ("vllm_router_cb_timeout", "cb-timeout-duration-secs", 1),
)


class RouterError(ValueError):
    """Bad input: names the variable, the value, the problem and the fix."""

    def __init__(self, variable: str, value: Any, problem: str, fix: str):
        self.variable, self.value, self.problem, self.fix = variable, value, problem, fix
        super().__init__("%s=%r: %s. Fix: %s" % (variable, value, problem, fix))


# --- inputs -------------------------------------------------------------------------------------------

def worker_url(variable: str, value: Any) -> str:
    """A worker's base URL, http(s)://host:port without path, query or trailing slash."""
    fix = "give the base URL of a vLLM API server, for example http://10.0.0.5:8000"
    if not isinstance(value, str) or not value.strip():
        raise RouterError(variable, value, "not a URL", fix)
    parts = urllib.parse.urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RouterError(variable, value, "not an http(s) URL with a host", fix)
    try:
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        raise RouterError(variable, value, "the port is not a number between 0 and 65535", fix) from None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise RouterError(variable, value, "the router wants the server's base URL, without a path or query", fix)
    return "%s://%s" % (parts.scheme, parts.netloc)


def cluster_endpoints(clusters: Iterable[Mapping[str, Any]]) -> Dict[str, str]:
    """{cluster name: API endpoint} from the vllm_launch.cluster summaries of the planned hosts (one per
    node, so each cluster comes once per node: deduplicated here)."""
    out: Dict[str, str] = {}
    for summary in clusters:
        if not isinstance(summary, Mapping) or not summary.get("name"):
            continue
        name = str(summary["name"])
        endpoint = worker_url("vllm_launch.cluster.endpoint (cluster %s)" % name, summary.get("endpoint"))
        if out.setdefault(name, endpoint) != endpoint:
            raise RouterError("vllm_launch.cluster.endpoint (cluster %s)" % name, endpoint,
                              "the cluster's hosts disagree on its endpoint (%s elsewhere)" % out[name],
                              "run the plan for every host of the cluster in the same run")
    return out


def workers(explicit: Sequence[Any], wanted_clusters: Sequence[Any], clusters: Iterable[Mapping[str, Any]]) -> List[str]:
    """The router's workers: vllm_router_workers when set, else the endpoint of every planned cluster
    (or of those named in vllm_router_clusters), in a stable order and without duplicates."""
    if explicit:
        urls = [worker_url("vllm_router_workers[%d]" % i, u) for i, u in enumerate(explicit)]
    else:
        endpoints = cluster_endpoints(clusters)
        if not endpoints:
            raise RouterError("vllm_router_workers", list(explicit),
                              "empty, and no host of group vllm_clusters has the vllm_launch fact",
                              "run the plan (inferops.vllm.cluster_plan) earlier in the same run, or list the workers "
                              "in vllm_router_workers")
        urls = [endpoints[n] for n in served(wanted_clusters, endpoints)]
    return list(dict.fromkeys(urls))


def served(wanted_clusters: Sequence[Any], endpoints: Mapping[str, str]) -> List[str]:
    """The names of the clusters the router serves: those vllm_router_clusters names, in its order (each must be a
    planned cluster), else every planned one, sorted."""
    names = [str(n) for n in wanted_clusters] if wanted_clusters else sorted(endpoints)
    unknown = [n for n in names if n not in endpoints]
    if unknown:
        raise RouterError("vllm_router_clusters", list(wanted_clusters),
                          "no cluster named %s in the inventory" % ", ".join(unknown),
                          "use names of planned clusters: %s" % ", ".join(sorted(endpoints)))
    return names


def pd_sides(wanted_clusters: Sequence[Any], clusters: Iterable[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """The prefill and decode endpoints of the one P/D deployment the router serves, or None when it serves whole
    clusters (or no cluster is planned: workers() says what to do). A router serves either: one deployment's
    sides, or clusters that take requests whole."""
    clusters = list(clusters)
    endpoints = cluster_endpoints(clusters)
    if not endpoints:
        return None
    pd_of = {str(c["name"]): c["pd"] for c in clusters
             if isinstance(c, Mapping) and c.get("name") and isinstance(c.get("pd"), Mapping)}
    names = served(wanted_clusters, endpoints)
    sides = [n for n in names if n in pd_of]
    if not sides:
        return None
    whole = sorted(n for n in names if n not in pd_of)
    deployments = sorted({str(pd_of[n]["deployment"]) for n in sides})
    if whole or len(deployments) > 1:
        problem = ("P/D deployment %s beside clusters that take requests whole (%s)" % (deployments[0], ", ".join(whole))
                   if whole else "several P/D deployments (%s)" % ", ".join(deployments))
        raise RouterError("vllm_router_clusters", list(wanted_clusters),
                          "one router serves %s" % problem,
                          "give each its own router: set vllm_router_clusters on each router host to one deployment's "
                          "clusters (%s) or to the whole clusters" % ", ".join(sorted(sides)))
    out: Dict[str, Any] = {"deployment": deployments[0], "prefill": [], "decode": []}
    for name in sides:
        out[str(pd_of[name]["role"])].append(endpoints[name])
    for role in ("prefill", "decode"):
        if not out[role]:
            raise RouterError("vllm_router_clusters", list(wanted_clusters),
                              "P/D deployment %s has no %s cluster among the router's" % (deployments[0], role),
                              "add the deployment's %s clusters to vllm_router_clusters (or leave it empty)" % role)
    out["connector"] = sorted({str(pd_of[n]["router_connector"]) for n in sides})[0]   # the plan refuses two
    return out


def _policy(settings: Mapping[str, Any], variable: str) -> Optional[str]:
    value = settings.get(variable) or None
    if value is not None and value not in POLICIES:
        raise RouterError(variable, value, "not a policy the role supports",
                          "use one of %s, or leave it empty for vllm_router_policy" % ", ".join(POLICIES))
    return value


def _int(settings: Mapping[str, Any], variable: str, minimum: int, maximum: Optional[int] = None) -> int:
    value = settings.get(variable)
    if isinstance(value, bool) or not isinstance(value, int) and not (isinstance(value, str) and value.isdigit()):
        raise RouterError(variable, value, "not a whole number", "set a number of at least %d" % minimum)
    number = int(value)
    if number < minimum or (maximum is not None and number > maximum):
        bounds = "at least %d" % minimum if maximum is None else "between %d and %d" % (minimum, maximum)
        raise RouterError(variable, value, "out of range", "set a number %s" % bounds)
    return number


def extra_args(extra: Any) -> Dict[str, Any]:
    """vllm_router_extra_args as router flags (no leading dashes, hyphens), refusing the ones that
    have their own variable."""
    if extra is None:
        return {}
    if not isinstance(extra, Mapping):
        raise RouterError("vllm_router_extra_args", extra, "not a mapping",
                          "give a dict of flag: value, for example {max-concurrent-requests: 256}")
    out: Dict[str, Any] = {}
    for key, value in extra.items():
        flag = str(key).lstrip("-").replace("_", "-")
        if not flag or not all(c.isalnum() or c == "-" for c in flag):
            raise RouterError("vllm_router_extra_args", key, "not a router flag name",
                              "use the flag's name from vllm-router --help, for example queue-size")
        if flag in FLAG_VARS:
            raise RouterError("vllm_router_extra_args[%r]" % str(key), "<hidden>" if flag == "api-key" else value,
                              "--%s is managed by the role" % flag,
                              "remove it from vllm_router_extra_args and set %s" % FLAG_VARS[flag])
        if isinstance(value, Mapping):
            raise RouterError("vllm_router_extra_args[%r]" % str(key), value, "a mapping is not a flag value",
                              "give a string, a number, a boolean (true: the flag alone) or a list")
        out[flag] = value
    return out


def router_config(settings: Mapping[str, Any], clusters: Iterable[Mapping[str, Any]] = ()) -> Dict[str, Any]:
    """Every router argument as {flag: value} (the launcher turns it into the router's argv), from the
    role's variables; the API key is not part of it."""
    policy = settings.get("vllm_router_policy")
    if policy not in POLICIES:
        raise RouterError("vllm_router_policy", policy, "not a policy the role supports", "use one of " + ", ".join(POLICIES))
    level = settings.get("vllm_router_log_level")
    if level not in LOG_LEVELS:
        raise RouterError("vllm_router_log_level", level, "not a log level", "use one of " + ", ".join(LOG_LEVELS))
    host = settings.get("vllm_router_host")
    if not isinstance(host, str) or not host or any(c.isspace() or c in "/?#" for c in host):
        raise RouterError("vllm_router_host", host, "not an address to bind", "use an address such as 0.0.0.0")
    port = _int(settings, "vllm_router_port", 1, 65535)
    prom_port = _int(settings, "vllm_router_prometheus_port", 1, 65535)
    if prom_port == port:
        raise RouterError("vllm_router_prometheus_port", prom_port, "the same port as vllm_router_port",
                          "give the metrics their own port (default 29000)")
    endpoint = settings.get("vllm_router_health_check_endpoint")
    if not isinstance(endpoint, str) or not endpoint.startswith("/"):
        raise RouterError("vllm_router_health_check_endpoint", endpoint, "not a path", "use a path such as /health")
    clusters = list(clusters)
    explicit, wanted = settings.get("vllm_router_workers") or [], settings.get("vllm_router_clusters") or []
    pd = None if explicit else pd_sides(wanted, clusters)
    config: Dict[str, Any] = {"host": host, "port": port}
    if pd is None:
        config["worker-urls"] = workers(explicit, wanted, clusters)
    else:
        # vllm-router's P/D mode: --prefill URL BOOTSTRAP (none: NIXL needs no bootstrap server) and --decode URL,
        # each repeated per cluster (the launcher repeats a flag whose value is a list of lists)
        config["vllm-pd-disaggregation"] = True
        config["prefill"] = [[url, "none"] for url in pd["prefill"]]
        config["decode"] = [[url] for url in pd["decode"]]
        config["kv-connector"] = pd["connector"]
    config["policy"] = policy
    if pd is not None:
        for variable, flag in (("vllm_router_prefill_policy", "prefill-policy"),
                               ("vllm_router_decode_policy", "decode-policy")):
            chosen = _policy(settings, variable)
            if chosen:
                config[flag] = chosen
    config["health-check-endpoint"] = endpoint
    for variable, flag, minimum in _INTS:
        config[flag] = _int(settings, variable, minimum)
    if settings.get("vllm_router_retries", True):
        for variable, flag, minimum in _RETRY_INTS:
            config[flag] = _int(settings, variable, minimum)
    else:
        config["disable-retries"] = True
    if settings.get("vllm_router_circuit_breaker", True):
        for variable, flag, minimum in _CB_INTS:
            config[flag] = _int(settings, variable, minimum)
    else:
        config["disable-circuit-breaker"] = True
    config["prometheus-host"] = settings.get("vllm_router_prometheus_host") or host
    config["prometheus-port"] = prom_port
    config["log-level"] = level
    config.update(extra_args(settings.get("vllm_router_extra_args")))
    return config


# --- runtime worker management ---------------------------------------------------------------------

def _call(method: str, url: str, timeout: float, api_key: Optional[str] = None) -> Tuple[int, str]:
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    if api_key:
        req.add_header("Authorization", "Bearer " + api_key)
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")[:500]


def list_workers(router: str, timeout: float, api_key: Optional[str] = None) -> List[str]:
    status, body = _call("GET", router.rstrip("/") + "/list_workers", timeout, api_key)
    if status != 200:
        raise RuntimeError("GET %s/list_workers answered %d: %s" % (router.rstrip("/"), status, body))
    return [str(u) for u in json.loads(body).get("urls", [])]


def _change(router: str, action: str, worker: str, timeout: float, api_key: Optional[str]) -> None:
    url = "%s/%s?url=%s" % (router.rstrip("/"), action, urllib.parse.quote(worker, safe=""))
    status, body = _call("POST", url, timeout, api_key)
    if status != 200:
        raise RuntimeError("POST %s answered %d: %s" % (url, status, body.strip()))


def in_flight(metrics: str) -> float:
    """Requests a vLLM server still holds: running + waiting, summed over every label set (engines,
    models), from its Prometheus /metrics text."""
    samples = prom.parse(metrics)
    return sum(prom.values(samples, "vllm:num_requests_running")) + sum(prom.values(samples, "vllm:num_requests_waiting"))


def worker_in_flight(worker: str, timeout: float, api_key: Optional[str] = None) -> Optional[float]:
    """In-flight requests on the worker, or None when nothing listens there any more (nothing to drain)."""
    try:
        status, body = _call("GET", worker.rstrip("/") + "/metrics", timeout, api_key)
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ConnectionRefusedError):
            return None
        raise
    except ConnectionRefusedError:
        return None
    if status != 200:
        raise RuntimeError("GET %s/metrics answered %d: %s" % (worker.rstrip("/"), status, body.strip()))
    return in_flight(body)


def drain(worker: str, drain_timeout: float, timeout: float, interval: float = 1.0, api_key: Optional[str] = None,
          clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> Dict[str, Any]:
    """Wait until the worker has no request in flight, at most drain_timeout seconds."""
    start = clock()
    last: Optional[float] = None
    error = ""
    while True:
        try:
            last = worker_in_flight(worker, min(timeout, max(drain_timeout, 1)), api_key)
            error = ""
            if last is None or last == 0:
                return {"drained": True, "drain_seconds": round(clock() - start, 1), "in_flight": 0.0}
        except (RuntimeError, OSError, ValueError) as exc:
            error = str(getattr(exc, "reason", exc))
        waited = clock() - start
        if waited + interval > drain_timeout:
            seen = ("could not read its /metrics: %s" % error if error
                    else "%g requests still in flight" % (last or 0))
            return {"drained": False, "drain_seconds": round(waited, 1), "in_flight": last,
                    "msg": "worker %s did not drain within %gs: %s" % (worker, drain_timeout, seen)}
        sleep(interval)


def ensure(router: str, worker: str, state: str = "present", drain_after: bool = False, drain_timeout: float = 300,
           timeout: float = 30, check_mode: bool = False, api_key: Optional[str] = None,
           interval: float = 1.0) -> Dict[str, Any]:
    """Bring one worker to `state` on the router; with state=absent and drain_after, then wait for the
    worker's in-flight requests to end (also when it was removed before: a re-run waits again)."""
    worker = worker_url("worker_url", worker)
    router = worker_url("router_url", router)
    if state not in ("present", "absent"):
        raise RouterError("state", state, "not a state", "use present or absent")
    listed = list_workers(router, timeout, api_key)
    result: Dict[str, Any] = {"changed": False, "workers": listed}
    if state == "present" and worker not in listed:
        result["changed"] = True
        if not check_mode:
            _change(router, "add_worker", worker, timeout, api_key)
    elif state == "absent" and worker in listed:
        result["changed"] = True
        if not check_mode:
            _change(router, "remove_worker", worker, timeout, api_key)
    if result["changed"]:
        if check_mode:
            result["workers"] = listed + [worker] if state == "present" else [u for u in listed if u != worker]
        else:
            result["workers"] = list_workers(router, timeout, api_key)
    if state == "absent" and drain_after:
        if check_mode:
            result.update(drained=None, drain_seconds=0.0)
        else:
            result.update(drain(worker, drain_timeout, timeout, interval, api_key))
    return result

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prometheus file_sd target groups from the plan: which node serves /metrics on which port, with the plan's
labels. Headless followers run no HTTP server, so only the nodes with serves_api are vLLM targets (the head,
or every node with hybrid load balancing). One group per target, in a stable order. Controller-only, no
Ansible imports."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.errors import ObservabilityError
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.settings import Settings
from ansible_collections.inferops.vllm.plugins.module_utils.controller.url_host import url_host

Group = Dict[str, Any]   # {"targets": ["host:port"], "labels": {...}}
GPU_VENDORS = ("nvidia", "amd")


def ordered(launches: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """Hosts by cluster name, then rank: the files do not change when the inventory lists hosts in another
    order."""
    return sorted(launches, key=lambda host: (launches[host]["cluster"]["name"], int(launches[host]["rank"]), host))


def served_model(launch: Mapping[str, Any]) -> str:
    """The name clients ask for (vLLM's model_name label): --served-model-name, else the model."""
    args = launch.get("args") or {}
    name = args.get("served-model-name") or args.get("model") or (launch["cluster"].get("model") or {}).get("repo")
    if isinstance(name, (list, tuple)):
        name = name[0] if name else ""
    return str(name or "")


def node_labels(host: str, launch: Mapping[str, Any], extra: Mapping[str, str]) -> Dict[str, str]:
    c = launch["cluster"]
    labels = {"cluster": str(c["name"]), "node": host, "role": str(launch["role"]), "rank": str(launch["rank"]),
              "vendor": str(c["vendor"]), "gpu_model": str(c["gpu_model"]), "strategy": str(c["strategy"]),
              "load_balancing": str(c.get("load_balancing") or ""), "model": served_model(launch)}
    if c.get("pd"):   # a side of a P/D deployment: the rules and the dashboard row tell the sides apart
        labels.update(pd_deployment=str(c["pd"]["deployment"]), pd_role=str(c["pd"]["role"]))
    labels.update(extra)
    return labels


def _address(addresses: Mapping[str, Any], host: str) -> str:
    address = addresses.get(host)
    if not address:
        raise ObservabilityError("vllm_control_address", address, "host %s has no address Prometheus can reach"
                                 % host, "set vllm_control_address (or ansible_host) for %s" % host)
    return url_host(address)


def _group(address: str, port: int, labels: Mapping[str, str]) -> Group:
    return {"targets": ["%s:%d" % (address, int(port))], "labels": dict(labels)}


def vllm(launches: Mapping[str, Mapping[str, Any]], addresses: Mapping[str, Any], settings: Settings) -> List[Group]:
    return [_group(_address(addresses, host), launches[host]["port"],
                   node_labels(host, launches[host], settings.extra_labels))
            for host in ordered(launches) if launches[host].get("serves_api")]


def gpu_port(vendor: str, settings: Settings) -> Optional[int]:
    return {"nvidia": settings.dcgm_port, "amd": settings.amd_port}.get(vendor) if settings.gpu else None


def gpu(launches: Mapping[str, Mapping[str, Any]], addresses: Mapping[str, Any], settings: Settings) -> List[Group]:
    out = []
    for host in ordered(launches):
        port = gpu_port(launches[host]["cluster"]["vendor"], settings)
        if port is not None:
            out.append(_group(_address(addresses, host), port, node_labels(host, launches[host], settings.extra_labels)))
    return out


def node(launches: Mapping[str, Mapping[str, Any]], addresses: Mapping[str, Any], settings: Settings) -> List[Group]:
    if not settings.node_exporter:
        return []
    return [_group(_address(addresses, host), settings.node_exporter_port,
                   node_labels(host, launches[host], settings.extra_labels)) for host in ordered(launches)]


def router(routers: Mapping[str, Mapping[str, Any]], settings: Settings) -> List[Group]:
    """Each router's metrics port; a router fronts every cluster, so it has no cluster label."""
    out = []
    for host in sorted(routers):
        entry = routers[host]
        if not entry.get("address"):
            raise ObservabilityError("vllm_router_prometheus_host", entry.get("address"),
                                     "router %s has no address Prometheus can reach" % host,
                                     "set vllm_control_address (or ansible_host) for %s" % host)
        labels = dict({"node": host, "role": "router"}, **settings.extra_labels)
        out.append(_group(url_host(entry["address"]), entry["metrics_port"], labels))
    return out

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site's flow table, compiled before any host: every listener of every host the plan names (the plan's
fleet.PortUse list, SSH and the peer-to-peer range added), with its port, protocol, what it is for, the address it
binds and who must reach it. Written beside the launches as flows.md (people: the ports to open) and flows.json
(machines: a host firewall compiles from it). No Ansible imports."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.fleet import PortUse

SCHEMA = 1
CONTROLLER = "the controller"
EVERY = "every interface"

# Who reaches a listener, by the variable that sets its port: "peers" (the nodes of its cluster), "deployment" (both
# sides of its P/D deployment), "routers" (those that front its cluster), "prometheus" (the Prometheus hosts),
# "pullers" (every cluster node), "p2p" (the nodes that share weights peer to peer), "self", "controller" and
# "clients" (whoever holds the API key, or anyone for an open API or the router, which checks no key).
REACH: Dict[str, Tuple[str, ...]] = {
    "vllm_port": ("peers", "routers", "prometheus", "controller", "clients"),   # peers: their watchdogs probe it
    "vllm_dp_rpc_port": ("peers",),
    "vllm_master_port": ("peers",),
    "fabric_check_port": ("peers",),
    "vllm_weight_cache_master_port": ("peers",),
    "vllm_weight_cache_master_port (+1)": ("peers",),
    "vllm_weight_cache_health_port": ("self",),
    "vllm_kv_side_channel_port": ("deployment",),
    "vllm_router_port": ("controller", "clients"),
    "vllm_router_prometheus_port": ("prometheus",),
    "vllm_exporters_dcgm_port": ("prometheus",),
    "vllm_exporters_amd_port": ("prometheus",),
    "vllm_exporters_node_exporter_port": ("prometheus",),
    "vllm_prometheus_port": ("controller",),
    "vllm_image_mirror_port": ("pullers",),
    "vllm_model_p2p_port": ("p2p",),
    "vllm_model_p2p": ("p2p",),
    "ansible_port": ("controller",),
}


@dataclass(frozen=True)
class Flow:
    host: str
    port: str                     # "8000", or a range "51413-51612"
    protocol: str
    purpose: str
    variable: str                 # what sets the port
    binds: str                    # the address it listens on, or "every interface"
    reached_by: Tuple[str, ...]   # inventory hosts, then CONTROLLER and the clients


@dataclass(frozen=True)
class Site:
    """What the flow table needs of the compiled site. binds(host, use) is the address a listener binds, None for a
    wildcard. routers: {router host: the cluster names it fronts}. ssh_ports: {host: its SSH port}, for the hosts
    reached over SSH."""
    uses: Mapping[str, Sequence[PortUse]]
    launches: Mapping[str, Mapping[str, Any]]
    routers: Mapping[str, Sequence[str]]
    prometheus: Sequence[str]
    p2p: Sequence[str]
    p2p_range: Tuple[int, int, str, str]
    ssh_ports: Mapping[str, int]
    binds: Callable[[str, PortUse], Optional[str]]


def _clients(launch: Optional[Mapping[str, Any]], variable: str) -> str:
    if variable == "vllm_router_port":
        return "clients (the router checks no key)"
    if launch is not None and launch.get("secret_env", {}).get("VLLM_API_KEY"):
        return "clients with the API key"
    return "anyone who reaches it (no API key)"


def _who(site: Site, host: str, variable: str) -> Tuple[str, ...]:
    launch = site.launches.get(host)
    cluster = (launch or {}).get("cluster") or {}
    hosts: List[str] = []
    labels: List[str] = []
    for kind in REACH.get(variable, ("controller",)):
        if kind == "peers":
            hosts += cluster.get("nodes") or ()
        elif kind == "deployment":
            deployment = (cluster.get("pd") or {}).get("deployment")
            hosts += [h for h, other in site.launches.items()
                      if deployment and ((other["cluster"].get("pd") or {}).get("deployment") == deployment)]
        elif kind == "routers":
            hosts += [r for r, served in site.routers.items() if cluster.get("name") in served]
        elif kind == "prometheus":
            hosts += site.prometheus
            if not site.prometheus:   # the site scrapes with a Prometheus of its own
                labels.append("the site's Prometheus (no host in vllm_prometheus)")
        elif kind == "pullers":
            hosts += list(site.launches)
        elif kind == "p2p":
            hosts += site.p2p
        elif kind == "self":
            hosts.append(host)
        elif kind == "controller":
            labels.append(CONTROLLER)
        elif kind == "clients":
            labels.append(_clients(launch, variable))
    return tuple(sorted(set(hosts))) + tuple(labels)


def _ranges(ports: Sequence[int]) -> List[str]:
    """Consecutive ports as one range: a P/D side's side channels, one per engine."""
    out: List[List[int]] = []
    for port in sorted(set(ports)):
        if out and port == out[-1][1] + 1:
            out[-1][1] = port
        else:
            out.append([port, port])
    return [str(a) if a == b else "%d-%d" % (a, b) for a, b in out]


def compile_flows(site: Site) -> List[Flow]:
    """Every listener of the site, by host then port."""
    out: List[Flow] = []
    for host, uses in site.uses.items():
        alike: Dict[Tuple[str, str, str, Tuple[str, ...]], List[int]] = {}
        who: Dict[str, Tuple[str, ...]] = {}   # once per variable: a P/D side has one side channel per engine
        for use in uses:
            if use.variable not in who:
                who[use.variable] = _who(site, host, use.variable)
            key = (use.what, use.variable, site.binds(host, use) or EVERY, who[use.variable])
            alike.setdefault(key, []).append(int(use.port))
        for (what, variable, binds, reached_by), ports in alike.items():
            out += [Flow(host, port, "tcp", what, variable, binds, reached_by) for port in _ranges(ports)]
    first, last, what, variable = site.p2p_range
    for host in site.p2p:
        out.append(Flow(host, "%d-%d" % (first, last), "tcp", what, variable, EVERY, _who(site, host, variable)))
    for host, port in site.ssh_ports.items():
        out.append(Flow(host, str(port), "tcp", "SSH (Ansible's connection)", "ansible_port", EVERY,
                        _who(site, host, "ansible_port")))
    return sorted(out, key=lambda f: (f.host, int(f.port.split("-")[0]), f.purpose))


def to_json(flows: Iterable[Flow]) -> str:
    return json.dumps({"schema": SCHEMA, "flows": [dict(asdict(f), reached_by=list(f.reached_by)) for f in flows]},
                      indent=1) + "\n"


def from_json(text: str) -> List[Flow]:
    """flows.json read back (a firewall's compile, the tests): the same Flow objects."""
    data = json.loads(text)
    if data.get("schema") != SCHEMA:
        raise ValueError("flows.json has schema %r, this collection reads %d: plan again" % (data.get("schema"), SCHEMA))
    return [Flow(**dict(row, reached_by=tuple(row["reached_by"]))) for row in data["flows"]]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(flows: Sequence[Flow]) -> str:
    """One table per host: the ports to open on it, and for whom."""
    lines = ["# Listeners and who reaches them", "",
             "Every port a host of this site listens on, compiled by the plan. Open each port to the hosts named "
             "and no one else (docs/ports.md). RDMA traffic (NCCL, NIXL over InfiniBand or RoCE) does not pass "
             "through the host firewall.", ""]
    by_host: Dict[str, List[Flow]] = {}
    for flow in flows:
        by_host.setdefault(flow.host, []).append(flow)
    for host, rows in by_host.items():
        lines += ["## %s" % host, "", "| port | protocol | listener | binds | reached by | set by |",
                  "|---|---|---|---|---|---|"]
        for f in rows:
            cells = [f.port, f.protocol, f.purpose, f.binds, ", ".join(f.reached_by), f.variable]
            lines.append("| %s |" % " | ".join(_cell(cell) for cell in cells))
        lines.append("")
    return "\n".join(lines)


def summary_lines(flows: Sequence[Flow]) -> List[str]:
    """The plan's block: per host, the ports it listens on (who must reach each: flows.md, with the files)."""
    if not flows:
        return []
    by_host: Dict[str, List[str]] = {}
    for flow in flows:
        by_host.setdefault(flow.host, []).append(flow.port)
    return (["== listeners: the ports each host opens (who must reach each: flows.md, with the files) =="]
            + ["%s: %s" % (host, ", ".join(ports)) for host, ports in by_host.items()])

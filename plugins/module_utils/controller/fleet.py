# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks across clusters, after every cluster of the run is compiled: one machine under two inventory
names, ports that collide on one machine, cluster groups that hold no host, and IMEX set up by the driver
variables for a launch without an IMEX channel. Each problem is one ClusterError-style line. No Ansible
imports."""

from __future__ import annotations

import difflib
import ipaddress
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError

# the groups every inventory has, never a cluster
BUILTIN_GROUPS = ("all", "ungrouped", "vllm_clusters")
IMEX_CHANNEL = "/dev/nvidia-caps-imex-channels/channel0"


def shown(hosts: Sequence[str]) -> str:
    return ", ".join(hosts) if len(hosts) <= 6 else "%s and %d more" % (", ".join(hosts[:5]), len(hosts) - 5)


def _line(variable: str, value: Any, where: str, problem: str, fix: str) -> str:
    return str(ClusterError(variable, value, where, problem, fix))


# --- one machine under two names ---------------------------------------------------------------------

def loopback(address: str) -> bool:
    """A loopback address names each host's own machine (simulated nodes, containers), not a shared one."""
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def machine_problems(addresses: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """addresses: {host: {"ansible_host": .., "ansible_port": .., "vllm_control_address": ..}}. Two hosts that
    reach the same ansible_host (and SSH port) or set the same vllm_control_address are one machine: their
    launches would share GPUs and ports."""
    seen: Dict[str, Dict[str, List[str]]] = {}   # address -> variable -> hosts
    for host, hvars in addresses.items():
        ssh, control = hvars.get("ansible_host"), hvars.get("vllm_control_address")
        if ssh and not loopback(str(ssh)):
            port = hvars.get("ansible_port")
            key = str(ssh) if port in (None, "", 22, "22") else "%s port %s" % (ssh, port)   # NAT: one IP, many hosts
            seen.setdefault(key, {}).setdefault("ansible_host", []).append(host)
        if control and not loopback(str(control)):
            seen.setdefault(str(control), {}).setdefault("vllm_control_address", []).append(host)
    out = []
    for value, by_variable in seen.items():
        hosts = list(dict.fromkeys(h for hs in by_variable.values() for h in hs))
        if len(hosts) > 1:
            out.append(_line(" or ".join(by_variable), value, "hosts %s" % shown(hosts),
                             "one machine under %d inventory names: their launches would share its GPUs and ports"
                             % len(hosts),
                             "keep one inventory host per machine (a host may sit in several groups), or correct "
                             "the address"))
    return out


# --- ports on one machine -------------------------------------------------------------------------

@dataclass(frozen=True)
class PortUse:
    port: int
    what: str          # the listener, for people
    variable: str      # the inventory variable that sets it


def launch_ports(launch: Mapping[str, Any], fabric_check_port: Optional[int]) -> List[PortUse]:
    """The ports a node's launch listens on: the API, the head's data-parallel RPC and torch master ports, the
    weight-cache daemons', a P/D side's KV side channel, and the fabric check's rendezvous on a multi-node cluster's
    head (its TCP store; the other ranks only connect to it)."""
    args, out = launch.get("args") or {}, []
    if launch.get("serves_api"):
        out.append(PortUse(int(launch["port"]), "the vLLM API", "vllm_port"))
    if launch.get("rank") == 0:
        if "data-parallel-rpc-port" in args:
            out.append(PortUse(int(args["data-parallel-rpc-port"]), "data-parallel RPC", "vllm_dp_rpc_port"))
        if "master-port" in args:
            out.append(PortUse(int(args["master-port"]), "the torch master", "vllm_master_port"))
    cache = launch.get("weight_cache")
    if cache:   # the daemons' /health on every node, their rendezvous (and a draft's) on the head
        out.append(PortUse(int(cache["health_port"]), "the weight cache's health", "vllm_weight_cache_health_port"))
        if launch.get("rank") == 0:
            out.append(PortUse(int(cache["master_port"]), "the weight cache's rendezvous",
                               "vllm_weight_cache_master_port"))
            out.append(PortUse(int(cache["draft_master_port"]), "the weight cache's draft rendezvous",
                               "vllm_weight_cache_master_port (+1)"))
    for port in launch.get("kv_side_channel_ports") or ():   # a P/D side's engines (disagg)
        out.append(PortUse(int(port), "the KV side channel", "vllm_kv_side_channel_port"))
    if fabric_check_port is not None and len(launch["cluster"]["nodes"]) > 1 and launch.get("rank") == 0:
        out.append(PortUse(int(fabric_check_port), "the fabric check", "fabric_check_port"))
    return out


# Listeners of roles other than vllm_serve, by host group: (group, variable, what). A metrics exporter
# (or any later listener) joins the check with one row here.
ROLE_PORTS: Tuple[Tuple[str, str, str], ...] = (
    ("vllm_routers", "vllm_router_port", "the router"),
    ("vllm_routers", "vllm_router_prometheus_port", "the router's metrics"),
)
# The exporters' listeners (roles vllm_exporters, vllm_prometheus). Cluster nodes are in the pseudo-groups
# vllm_clusters:<vendor> and, with vllm_exporters_node_exporter, vllm_clusters:node_exporter (fleet_lines).
METRICS_PORTS: List[Tuple[str, str, str]] = [
    ("vllm_clusters:nvidia", "vllm_exporters_dcgm_port", "the DCGM exporter"),
    ("vllm_clusters:amd", "vllm_exporters_amd_port", "AMD's device-metrics-exporter"),
    ("vllm_clusters:node_exporter", "vllm_exporters_node_exporter_port", "node_exporter"),
    ("vllm_prometheus", "vllm_prometheus_port", "Prometheus"),
]


def role_ports(host_groups: Iterable[str], setting: Callable[[str], Any]) -> List[PortUse]:
    groups = set(host_groups)
    out = []
    for group, variable, what in ROLE_PORTS + tuple(METRICS_PORTS):
        value = setting(variable) if group in groups else None
        if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
            out.append(PortUse(int(value), what, variable))
    return out


def port_problems(uses: Mapping[str, Sequence[PortUse]]) -> List[str]:
    """uses: {host: its listeners}. Two listeners of one machine on one port: the second cannot bind."""
    out = []
    for host, listeners in uses.items():
        by_port: Dict[int, List[PortUse]] = {}
        for use in listeners:
            if use not in by_port.get(use.port, []):
                by_port.setdefault(use.port, []).append(use)
        for port, same in sorted(by_port.items()):
            if len(same) > 1:
                out.append(_line(" and ".join(u.variable for u in same), port, "host %s" % host,
                                 "%s would listen on the same port" % " and ".join(u.what for u in same),
                                 "give %s another port" % same[-1].variable))
    return out


# --- cluster groups that hold no host --------------------------------------------------------------

def cluster_group_problems(groups: Mapping[str, Sequence[str]], cluster_of: Callable[[str], Any]) -> List[str]:
    """vllm_clusters without hosts skips every play ("no hosts matched"); a host that names its cluster
    (vllm_cluster) outside vllm_clusters, a cluster group left out or misspelt there, would be skipped silently."""
    existing = sorted(g for g, members in groups.items() if members and g not in BUILTIN_GROUPS)
    named = ", ".join(existing) or "none"
    members = set(groups.get("vllm_clusters") or ())
    if not members:
        return [_line("vllm_clusters", [], "inventory",
                      "no host is in group vllm_clusters, so every play of the run would be skipped",
                      "list the cluster groups under vllm_clusters' children (groups with hosts: %s)" % named)]
    left_out: Dict[str, List[str]] = {}
    for host in groups.get("all") or ():
        name = cluster_of(host) if host not in members else None
        if isinstance(name, str):
            left_out.setdefault(name, []).append(host)
    return [_line("vllm_cluster", name, "hosts %s" % ", ".join(hosts[:3] + (["..."] if len(hosts) > 3 else [])),
                  "the hosts are not in group vllm_clusters, so no play of the run would touch them",
                  "list group %s under vllm_clusters' children (a misspelt child is an empty group)" % name)
            for name, hosts in sorted(left_out.items())]


# --- IMEX -----------------------------------------------------------------------------------------------

def imex_warnings(launches: Mapping[str, Mapping[str, Any]], imex_of: Callable[[str], Any]) -> List[str]:
    """nvidia_driver_imex: true runs the IMEX service, but only a multi-node NVLink launch maps the channel."""
    hosts = [host for host, launch in launches.items()
             if launch["cluster"].get("vendor") == "nvidia" and imex_of(host) is True
             and not any(d.startswith(IMEX_CHANNEL) for d in launch["container"].get("devices", ()))]
    if not hosts:
        return []
    return ["hosts %s: nvidia_driver_imex is true but their launch maps no IMEX channel (not a multi-node NVLink "
            "cluster), so the service runs for nothing; set nvidia_driver_imex: auto" % shown(hosts)]


# --- optional groups ------------------------------------------------------------------------------------

# The groups site.yml, upgrade.yml and rolling_restart.yml run on only when the inventory has them.
OPTIONAL_GROUPS = {"vllm_routers": "the router (role vllm_router)", "vllm_prometheus": "Prometheus (role vllm_prometheus)",
                   "vllm_registry_mirrors": "the site registry and the weights store (roles vllm_image, vllm_model)"}


def optional_group_warnings(groups: Mapping[str, Sequence[str]]) -> List[str]:
    """An absent optional group is silent (its plays match no host), so a misspelt one would be too: warn
    about a group with hosts whose name is close to an optional group the inventory lacks."""
    others = [g for g, members in groups.items() if members and g not in BUILTIN_GROUPS and g not in OPTIONAL_GROUPS]
    out = []
    for name, runs in OPTIONAL_GROUPS.items():
        if groups.get(name):
            continue
        for close in difflib.get_close_matches(name, others, n=3, cutoff=0.8):
            out.append("group %s (hosts %s) looks like %s, the group that %s runs on, which this inventory does not "
                       "have: nothing runs there for it. Rename the group to %s if that is what it is for"
                       % (close, shown(list(groups[close])), name, runs, name))
    return out

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From inventory data (group members and host variables) to each node's
launch: the one path that the plan action, the tests and tools share."""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster as cluster_model
from ansible_collections.inferops.vllm.plugins.module_utils.controller import host_stack, launch
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import (
    inputs as observability_inputs)


@functools.lru_cache(maxsize=None)
def read_names() -> Tuple[str, ...]:
    """Only these host variables are read (and templated) from the inventory: the typed ones, the driver
    variables the plan checks and ansible_host. Secrets (SECRET_ENV) are only looked up by name, and any
    other vllm_* variable (a registry password, a role's settings) is never touched, so never decrypted."""
    return tuple(dict.fromkeys(tuple(cluster_model.VAR_TYPES) + tuple(cluster_model.CLUSTER_DEFAULTS)
                               + tuple(cluster_model.SECRET_ENV.values()) + ("ansible_host",)
                               + cluster_model.DRIVER_VARS + tuple(host_stack.ROLE_SETTINGS)))


def wanted(name: str) -> bool:
    return name in read_names()


def cluster_name_of(host: str, hostvars: Mapping[str, Any]) -> str:
    name = hostvars.get("vllm_cluster")
    if not name or not isinstance(name, str):
        raise cluster_model.ClusterError(
            "vllm_cluster", name, "host %s" % host, "the host belongs to no vLLM cluster",
            "set vllm_cluster to the cluster group's name in that group's group_vars")
    return name


def _refuse_outsiders(name: str, groups: Mapping[str, Sequence[str]], inventory_hosts: Iterable[str],
                      cluster_of: Callable[[str], Any]) -> None:
    """A host that names the cluster but is not in its group would be left out silently: another
    host becomes head and the world size shrinks. Refuse it by name."""
    members = set(groups[name])
    for host in inventory_hosts:
        if host not in members and cluster_of(host) == name:
            raise cluster_model.ClusterError(
                "vllm_cluster", name, "host %s" % host,
                "the host names cluster %s but is not a member of group %s (members: %s), so the cluster would "
                "start without it" % (name, name, ", ".join(groups[name]) or "none"),
                "add %s to group %s in the inventory, or remove vllm_cluster from its variables" % (host, name))


def compile_cluster(name: str, groups: Mapping[str, Sequence[str]],
                    host_vars: Callable[[str], Mapping[str, Any]],
                    cluster_of: Optional[Callable[[str], Any]] = None,
                    scan_as: Optional[str] = None,
                    overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, Dict[str, Any]]:
    """Compile the cluster whose group is `name`; host_vars(host) gives a host's variables.
    With cluster_of(host) (its vllm_cluster), the hosts of groups['all'] are checked for naming
    this cluster from outside its group: once per cluster, when compiling for its head (scan_as),
    and whenever the cluster is refused (a missing host is the likelier cause than a numbering slip).
    overrides: cluster-wide variables that replace the inventory's for this compile only (the capacity
    curve's max-model-len), checked like the inventory's; the inventory itself is left as it is."""
    overrides = dict(overrides or {})
    for key in sorted(overrides):
        if key not in cluster_model.CLUSTER_DEFAULTS or key in cluster_model.HOST_VARS:
            raise cluster_model.ClusterError(
                "cluster_plan_overrides", key, "the play", "not a cluster-wide variable the plan reads",
                "override one of %s" % ", ".join(sorted(set(cluster_model.CLUSTER_DEFAULTS) - set(cluster_model.HOST_VARS))))
    if name not in groups:
        raise cluster_model.ClusterError("vllm_cluster", name, "inventory", "there is no inventory group of that name",
                                         "name the group that holds the cluster's hosts")
    if scan_as is not None and scan_as not in groups[name]:
        _refuse_outsiders(name, groups, [scan_as], lambda _host: name)
    members = []
    for host in groups[name]:
        hvars = host_vars(host)
        other = hvars.get("vllm_cluster")
        if other != name:
            raise cluster_model.ClusterError(
                "vllm_cluster", other, "host %s" % host,
                "the host is in group %s but says it belongs to %r" % (name, other),
                "put each host in exactly one cluster group and set vllm_cluster in that group's group_vars")
        members.append((host, {**hvars, **overrides} if overrides else hvars))
    inventory_hosts = groups.get("all", ())
    try:
        cluster = cluster_model.build(name, members, domain_peers(members, groups, host_vars))
    except cluster_model.ClusterError:
        # a host left outside the group explains most wrong ranks and sizes: name it instead
        if cluster_of is not None:
            _refuse_outsiders(name, groups, inventory_hosts, cluster_of)
        raise
    if cluster_of is not None and scan_as in (None, cluster.head.host):
        _refuse_outsiders(name, groups, inventory_hosts, cluster_of)
    if cluster.mnnvl:
        _check_domain_groups(cluster, groups)
    launches = launch.compile_cluster(cluster)
    _check_imex_peers(launches)
    return launches


def _check_imex_peers(launches: Mapping[str, Mapping[str, Any]]) -> None:
    """A node that runs IMEX writes its domain group's trays as the node list: a domain that is no
    inventory group (or none at all, with nvidia_driver_imex: true) would stop nvidia_driver on the node."""
    for host, node in launches.items():
        imex = node["host_stack"]["imex"]
        if imex is not None and imex["peers"] is None:
            raise cluster_model.ClusterError(
                "nvidia_driver_imex_domain", imex["domain"], "host %s" % host,
                "the node runs IMEX, whose node list is the trays of the NVLink domain's inventory group, and %s"
                % ("there is no group %s" % imex["domain"] if imex["domain"] else "the node names no NVLink domain"),
                "put the rack's trays in one inventory group and set vllm_nvlink_domain to its name in that group's "
                "group_vars (or set nvidia_driver_imex: false)")


def domain_peers(members: Sequence[Tuple[str, Mapping[str, Any]]], groups: Mapping[str, Sequence[str]],
                 host_vars: Callable[[str], Mapping[str, Any]]) -> Dict[str, List[str]]:
    """{NVLink domain group: the control address of each of its trays} for the domains the members name
    (vllm_nvlink_domain, or nvidia_driver_imex_domain): IMEX's node list, identical on every tray of the rack,
    whichever cluster they serve. A domain that is no inventory group is left out."""
    out: Dict[str, List[str]] = {}
    for _host, hvars in members:
        for domain in (hvars.get("nvidia_driver_imex_domain"), hvars.get("vllm_nvlink_domain")):
            if domain and isinstance(domain, str) and domain in groups and domain not in out:
                # the address a tray is reached on, as for Prometheus: vllm_control_address, ansible_host, its name
                out[domain] = [str(observability_inputs.address(host_vars(peer).get, peer)) for peer in groups[domain]]
    return out


def _check_domain_groups(cluster: cluster_model.Cluster, groups: Mapping[str, Sequence[str]]) -> None:
    """nvidia_driver writes each host's IMEX node list from the group its vllm_nvlink_domain names:
    a host outside that group would be missing from its rack's list."""
    for node in cluster.nodes:
        if node.domain not in groups or node.host not in groups[node.domain]:
            raise cluster_model.ClusterError(
                "vllm_nvlink_domain", node.domain, "host %s" % node.host,
                "IMEX lists the members of the NVLink domain's inventory group, and %s" % (
                    "there is no group %s" % node.domain if node.domain not in groups
                    else "the host is not in group %s (members: %s)" % (node.domain, ", ".join(groups[node.domain]))),
                "put the rack's trays in one inventory group and set vllm_nvlink_domain to its name in that "
                "group's group_vars")


def compile_inventory(groups: Mapping[str, Sequence[str]],
                      hostvars: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """{cluster: {host: launch}} for every host that sets vllm_cluster."""
    names: List[str] = []
    for host, hvars in hostvars.items():
        if "vllm_cluster" in hvars:
            name = cluster_name_of(host, hvars)
            if name not in names:
                names.append(name)
    groups = dict(groups, all=list(groups.get("all") or hostvars))

    def cluster_of(host: str) -> Any:
        return hostvars.get(host, {}).get("vllm_cluster")
    return {name: compile_cluster(name, groups, hostvars.__getitem__, cluster_of) for name in sorted(names)}

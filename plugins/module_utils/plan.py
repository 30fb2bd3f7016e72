# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From inventory data (group members and host variables) to each node's
launch: the one path that the plan action, the tests and tools share."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Sequence

from ansible_collections.inferops.vllm.plugins.module_utils import cluster as cluster_model
from ansible_collections.inferops.vllm.plugins.module_utils import launch

# Only these host variables are read (and templated) from the inventory.
READ_PREFIXES = ("vllm_",)
READ_NAMES = ("ansible_host",)


def wanted(name: str) -> bool:
    return name.startswith(READ_PREFIXES) or name in READ_NAMES


def cluster_name_of(host: str, hostvars: Mapping[str, Any]) -> str:
    name = hostvars.get("vllm_cluster")
    if not name or not isinstance(name, str):
        raise cluster_model.ClusterError(
            "vllm_cluster", name, "host %s" % host, "the host belongs to no vLLM cluster",
            "set vllm_cluster to the cluster group's name in that group's group_vars")
    return name


def compile_cluster(name: str, groups: Mapping[str, Sequence[str]],
                    host_vars: Callable[[str], Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Compile the cluster whose group is `name`; host_vars(host) gives a host's variables."""
    if name not in groups:
        raise cluster_model.ClusterError("vllm_cluster", name, "inventory", "there is no inventory group of that name",
                                         "name the group that holds the cluster's hosts")
    members = []
    for host in groups[name]:
        hvars = host_vars(host)
        other = hvars.get("vllm_cluster")
        if other != name:
            raise cluster_model.ClusterError(
                "vllm_cluster", other, "host %s" % host,
                "the host is in group %s but says it belongs to %r" % (name, other),
                "put each host in exactly one cluster group and set vllm_cluster in that group's group_vars")
        members.append((host, hvars))
    return launch.compile_cluster(cluster_model.build(name, members))


def compile_inventory(groups: Mapping[str, Sequence[str]],
                      hostvars: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """{cluster: {host: launch}} for every host that sets vllm_cluster."""
    names: List[str] = []
    for host, hvars in hostvars.items():
        if "vllm_cluster" in hvars:
            name = cluster_name_of(host, hvars)
            if name not in names:
                names.append(name)
    return {name: compile_cluster(name, groups, lambda h: hostvars[h]) for name in sorted(names)}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What site.yml will need, judged by the plan before any host: the image set (and pinned, cluster.py), the
weights' site registry known, the API closed by a key unless the inventory says it is open on purpose, IMEX on
every tray a multi-node NVLink launch maps the channel of, and inventory names that can be file names.
Each refusal is one line with the variable, the value, where and the fix. No Ansible imports."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Mapping, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import boundary
from ansible_collections.inferops.vllm.plugins.module_utils.controller.fleet import IMEX_CHANNEL
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from ansible_collections.inferops.vllm.plugins.module_utils.controller.wrong_values import shown_hosts

OPEN_API = "vllm_api_open"
IMEX_OFF = (False, "false", "False", "no", "off")

Launches = Mapping[str, Mapping[str, Any]]


def _clusters(launches: Launches) -> Dict[str, Tuple[Mapping[str, Any], List[str]]]:
    """{cluster name: (its summary, its hosts)} in plan order."""
    out: Dict[str, Tuple[Mapping[str, Any], List[str]]] = {}
    for host, launch in launches.items():
        out.setdefault(launch["cluster"]["name"], (launch["cluster"], []))[1].append(host)
    return out


def name_problems(hosts: Iterable[str], groups: Iterable[str]) -> List[str]:
    """Inventory host and group names that cannot become file names (review files, records, reports)."""
    out = []
    for kind, names in (("host", hosts), ("group", groups)):
        for name in names:
            problem = boundary.name_problem(name)
            if problem:
                fix = ("rename the host (its address goes in ansible_host)" if kind == "host"
                       else "rename the group and its vllm_cluster / vllm_nvlink_domain values")
                out.append(str(ClusterError("inventory %s name" % kind, name, "inventory", problem,
                                            fix + "; use letters, digits and _ . @ + -")))
    return out


def image_problems(launches: Launches) -> List[str]:
    out = []
    for name, (summary, hosts) in _clusters(launches).items():
        if not summary.get("image"):
            # the inventory's own hint (undef(hint=...)) where it gives one
            hint = next((w for w in summary.get("warnings") or () if w.startswith("vllm_image")), None)
            out.append(str(ClusterError(
                "vllm_image", None, "cluster %s (%s)" % (name, shown_hosts(hosts)),
                "unset: site.yml would install drivers and the container runtime before the image play refuses it",
                hint or "set vllm_image to the vLLM image pinned by digest, e.g. vllm/vllm-openai@sha256:<digest> "
                "(`docker buildx imagetools inspect vllm/vllm-openai:<tag>` prints it)")))
    return out


def api_problems(launches: Launches, key_set: Callable[[str], bool], open_of: Callable[[str], Any]
                 ) -> Tuple[List[str], List[str]]:
    """(refusals, notes): a cluster without vllm_api_key serves an open OpenAI API on vllm_bind_host; refused
    unless vllm_api_open: true says it is meant, and then the plan says so."""
    refused, notes = [], []
    for name, (summary, hosts) in _clusters(launches).items():
        head = summary.get("head") or hosts[0]
        if key_set(head):
            continue
        if open_of(head) is True:
            notes.append("cluster %s serves an open API: no vllm_api_key, and vllm_api_open: true says it is meant "
                         "(anyone who reaches %s can use it)" % (name, summary.get("endpoint")))
            continue
        refused.append(str(ClusterError(
            "vllm_api_key", None, "cluster %s (%s)" % (name, shown_hosts(hosts)),
            "unset: the cluster would serve an unauthenticated OpenAI API to everyone who reaches %s"
            % summary.get("endpoint"),
            "set vllm_api_key (ansible-vault encrypt_string), or vllm_api_open: true for an API that is open "
            "on purpose")))
    return refused, notes


def imex_problems(launches: Launches, imex_of: Callable[[str], Any]) -> List[str]:
    """A multi-node NVLink launch maps the IMEX channel: every tray of it needs the IMEX service."""
    hosts = [host for host, launch in launches.items()
             if any(str(d).startswith(IMEX_CHANNEL) for d in launch["container"].get("devices", ()))
             and imex_of(host) in IMEX_OFF]
    if not hosts:
        return []
    return [str(ClusterError(
        "nvidia_driver_imex", False, shown_hosts(hosts),
        "these trays run a multi-node NVLink launch (the IMEX channel, the NVLink-only backends) but IMEX is "
        "turned off, so their GPUs cannot import each other's memory",
        "set nvidia_driver_imex: auto (the default), or vllm_fabric: infiniband/roce if the trays are not in "
        "one NVLink domain"))]

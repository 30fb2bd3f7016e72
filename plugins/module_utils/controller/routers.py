# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each router of group vllm_routers, compiled by the plan from the host's vllm_router_* values and the compiled
clusters (node/router.py's router_config, which the role used to run on its host): a value it cannot use is one
refusal naming the host, before any host is touched, and role vllm_router writes the result as it is. Written beside
the launches as routers.json, and shown as one block of the plan. No Ansible imports."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from ansible_collections.inferops.vllm.plugins.module_utils.node import router


def compile_routers(hosts: Sequence[str], options: Sequence[str], setting: Callable[[str, str], Any],
                    clusters: Sequence[Mapping[str, Any]]) -> Tuple[Dict[str, Dict[str, Any]], List[str]]:
    """({router host: its configuration}, refusals). options: the role's option names (the key, a secret, is never
    among them); setting(host, name): the host's value, else the role default."""
    configs: Dict[str, Dict[str, Any]] = {}
    refusals: List[str] = []
    for host in hosts:
        try:
            configs[host] = router.router_config({name: setting(host, name) for name in options}, clusters)
        except router.RouterError as exc:
            refusals.append(str(ClusterError(exc.variable, exc.value, "host %s" % host, exc.problem, exc.fix)))
    return configs, refusals


def kv_sides(config: Mapping[str, Any]) -> Dict[str, List[str]]:
    """A router in P/D mode: the base URLs of its prefill and decode clusters ({} for one whose clusters take requests
    whole), whose /metrics the smoke test reads to prove that the KV moves."""
    if not config.get("vllm-pd-disaggregation"):
        return {}
    return {"prefill": [side[0] for side in config.get("prefill") or ()],
            "decode": [side[0] for side in config.get("decode") or ()]}


def summary_lines(configs: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """The plan's block: per router, where it listens, how it picks a worker and what it serves."""
    if not configs:
        return []
    out = ["== routers: what each serves (routers.json, with the files) =="]
    for host, config in configs.items():
        sides = kv_sides(config)
        if sides:
            serves = "P/D (%s): prefill %s, decode %s" % (
                config.get("kv-connector"), ", ".join(sides["prefill"]), ", ".join(sides["decode"]))
        else:
            serves = "workers " + ", ".join(config.get("worker-urls") or ())
        out.append("%s: %s:%s, policy %s, metrics on %s:%s; %s" % (
            host, config["host"], config["port"], config["policy"], config["prometheus-host"],
            config["prometheus-port"], serves))
    return out

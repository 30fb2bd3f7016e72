# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prefill/decode (P/D) disaggregation: a cluster's side of a deployment (vllm_pd_role, vllm_pd_deployment), its
KV-transfer config and side channel, and the checks across the sides of each deployment (docs/disaggregation.md).

A prefill side computes each prompt's KV cache and hands it over; the decode side pulls it through the connector
and generates. Each side is a cluster with its own layout; vllm-router in P/D mode sends every request to both."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

KV_ROLES = {"prefill": "kv_producer", "decode": "kv_consumer"}


@dataclass(frozen=True)
class Connector:
    router_name: str     # vllm-router's --kv-connector
    host_env: str        # where the side channel listens (the node's control address)
    port_env: str        # its first port; vLLM adds each engine's data-parallel rank


# The P/D connectors the collection plans. Others that vLLM registers (offloading, shared storage, LMCache...) are
# refused with this list: the router speaks nixl, mooncake and moriio, and NIXL is the one proven here (the lab).
CONNECTORS = {"NixlConnector": Connector("nixl", "VLLM_NIXL_SIDE_CHANNEL_HOST", "VLLM_NIXL_SIDE_CHANNEL_PORT")}

# Flags whose values must be equal on both sides, or the KV one side writes cannot be read by the other: vLLM's
# NIXL handshake hashes the model, its dtype, the KV-cache dtype and the attention backend (nixl/metadata.py) and
# transfers whole blocks; the image pins the vLLM version the hash also covers.
SAME_ON_BOTH_SIDES = ("model", "revision", "dtype", "kv-cache-dtype", "block-size", "attention-backend",
                      "speculative-config", "quantization")
_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")


def transport(rdma: bool, mnnvl: bool) -> str:
    """How UCX moves the KV for NIXL on a cluster's fabric: RDMA on InfiniBand/RoCE, NVLink where the nodes share
    multi-node NVLink (Cluster.mnnvl), TCP otherwise (the lab)."""
    if rdma:
        return "rdma"
    return "nvlink" if mnnvl else "tcp"


def side_problem(settings: Mapping[str, Any], kv_connectors: Sequence[str], version: str
                 ) -> Optional[Tuple[str, Any, str, str]]:
    """(variable, value, problem, fix) for a cluster's P/D settings that cannot work, else None."""
    role, name, connector = settings.get("vllm_pd_role"), settings.get("vllm_pd_deployment"), settings.get("vllm_kv_connector")
    if role is None:
        if name is not None:
            return ("vllm_pd_deployment", name, "set on a cluster without vllm_pd_role",
                    "set vllm_pd_role (prefill or decode) on the cluster, or remove vllm_pd_deployment")
        return None
    if name is None:
        return ("vllm_pd_role", role, "no vllm_pd_deployment names the deployment this side belongs to",
                "set vllm_pd_deployment to the same name on the deployment's prefill and decode clusters")
    if not isinstance(name, str) or not _NAME.match(name):
        return ("vllm_pd_deployment", name, "not a name (letters, digits, _ . -, at most 63)",
                "use a short name such as k3_pd")
    if connector not in kv_connectors:
        return ("vllm_kv_connector", connector, "vLLM %s registers no such KV connector" % version,
                "use %s (registered: %s)" % (" or ".join(sorted(CONNECTORS)), ", ".join(kv_connectors)))
    if connector not in CONNECTORS:
        return ("vllm_kv_connector", connector, "registered by vLLM %s, but not a P/D connector the collection plans"
                % version, "use %s" % " or ".join(sorted(CONNECTORS)))
    return None


def transfer_config(role: str, connector: str) -> Dict[str, Any]:
    """--kv-transfer-config for one side."""
    return {"kv_connector": connector, "kv_role": KV_ROLES[role]}


def side_channel_ports(base: int, first_engine: int, engines: int) -> List[int]:
    """The side-channel ports of one node: vLLM listens on base + the data-parallel rank of each engine the node
    runs (nixl/base_scheduler.py)."""
    return [base + first_engine + i for i in range(engines)]


def node_env(connector: str, address: Optional[str], port: int, way: str, hcas: Sequence[str],
             interface: Optional[str] = None) -> Dict[str, str]:
    """The side channel's address and first port, and the devices UCX may move the KV over: the node's HCAs on RDMA;
    over TCP the control interface, or the loopback where the control address is one (the lab's nodes share this
    machine's network), so that UCX, which otherwise uses every interface that is up, stays on the control network."""
    names = CONNECTORS[connector]
    env = {names.host_env: address or "", names.port_env: str(port)}
    if way == "rdma" and hcas:
        env["UCX_NET_DEVICES"] = ",".join(h if ":" in h else h + ":1" for h in hcas)
    elif way == "tcp":
        env["UCX_TLS"] = "tcp,self"
        device = interface or ("lo" if loopback(address) else None)
        if device:
            env["UCX_NET_DEVICES"] = device
    return env


def loopback(address: Optional[str]) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def summary(settings: Mapping[str, Any], way: str) -> Dict[str, Any]:
    """vllm_launch.cluster.pd: what the router, the smoke test and the plan's view need of the side."""
    role, connector = settings["vllm_pd_role"], settings["vllm_kv_connector"]
    return {"deployment": settings["vllm_pd_deployment"], "role": role, "kv_role": KV_ROLES[role],
            "connector": connector, "router_connector": CONNECTORS[connector].router_name,
            "side_channel_port": settings["vllm_kv_side_channel_port"], "transport": way}


def deployments(launches: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, List[Mapping[str, Any]]]]:
    """{deployment: {"prefill": [head launch per cluster], "decode": [...]}} from the compiled launches."""
    out: Dict[str, Dict[str, List[Mapping[str, Any]]]] = {}
    for launch in launches.values():
        pd = launch["cluster"].get("pd")
        if pd and launch.get("rank") == 0:
            out.setdefault(pd["deployment"], {"prefill": [], "decode": []})[pd["role"]].append(launch)
    for sides in out.values():
        for heads in sides.values():
            heads.sort(key=lambda launch: launch["cluster"]["name"])
    return out


def _tp(launch: Mapping[str, Any]) -> int:
    return int(launch["cluster"].get("tensor_parallel") or 1)


def deployment_problems(launches: Mapping[str, Mapping[str, Any]], complete: bool = True,
                        elsewhere: Callable[[str, str], List[str]] = lambda name, role: []
                        ) -> Tuple[List[str], List[str]]:
    """(refusals, notes) across the sides of every deployment: both sides present, the same engine where the KV
    must match, tensor-parallel sizes the connector maps, one transport. complete: every cluster of the play was
    compiled (a refused one may be the side that seems missing, and is reported already). elsewhere(name, role):
    the clusters of the inventory outside this run (--limit) that are that side: a note, not a refusal."""
    refusals: List[str] = []
    notes: List[str] = []
    for name, sides in sorted(deployments(launches).items()):
        for role, other in (("prefill", "decode"), ("decode", "prefill")):
            outside = elsewhere(name, role) if not sides[role] else []
            if outside:
                notes.append("P/D deployment %s: its %s side (%s) is outside this run, so the sides were not checked "
                             "against each other" % (name, role, ", ".join(outside)))
            elif not sides[role] and complete:
                present = ", ".join(launch["cluster"]["name"] for launch in sides[other])
                refusals.append("vllm_pd_deployment=%r (clusters %s): no %s cluster in the plan, so no request can be "
                                "served. Fix: give a cluster vllm_pd_role: %s and vllm_pd_deployment: %s (or run the "
                                "plan over both sides)" % (name, present, role, role, name))
        if not sides["prefill"] or not sides["decode"]:
            continue
        keyed = sorted({launch["cluster"]["name"] for launch in sides["prefill"] + sides["decode"]
                        if "VLLM_API_KEY" in (launch.get("secret_env") or ())})
        if keyed:
            refusals.append(
                "vllm_api_key (clusters %s, P/D deployment %s): set, but the pinned vllm-router sends no API key to "
                "the sides in P/D mode, neither its own nor the client's, so every request through it gets 401 "
                "Unauthorized. Fix: leave vllm_api_key unset on the deployment's clusters and set vllm_api_open: true "
                "there, with vllm_bind_host on an address only the router reaches" % (", ".join(keyed), name))
        first = sides["prefill"][0]
        for launch in sides["prefill"][1:] + sides["decode"]:
            refusals += _mismatches(name, first, launch)
        for prefill in sides["prefill"]:
            for decode in sides["decode"]:
                small, large = sorted((_tp(prefill), _tp(decode)))
                if large % small:
                    refusals.append(
                        "vllm_tensor_parallel_size=%d (cluster %s, %s) and %d (cluster %s, %s) in deployment %s: the "
                        "KV connector maps ranks only when one size divides the other. Fix: choose sizes such as "
                        "8 and 4, or 8 and 8" % (_tp(prefill), prefill["cluster"]["name"], "prefill", _tp(decode),
                                                 decode["cluster"]["name"], "decode", name))
        ways = sorted({launch["cluster"]["pd"]["transport"] for launch in sides["prefill"] + sides["decode"]})
        if len(ways) > 1:
            notes.append("P/D deployment %s: its sides move KV over different transports (%s); UCX uses the one "
                         "both reach, usually TCP, the slowest" % (name, ", ".join(ways)))
    return refusals, notes


def _mismatches(name: str, first: Mapping[str, Any], launch: Mapping[str, Any]) -> List[str]:
    out = []
    a, b = first["cluster"], launch["cluster"]
    compared = [(flag, first["args"].get(flag), launch["args"].get(flag), "vllm_args[%r]" % flag)
                for flag in SAME_ON_BOTH_SIDES]
    compared += [("image", a.get("image"), b.get("image"), "vllm_image"),
                 ("connector", a["pd"]["connector"], b["pd"]["connector"], "vllm_kv_connector")]
    for what, left, right, variable in compared:
        if left != right:
            out.append("%s=%r (cluster %s) but %r (cluster %s) in P/D deployment %s: both sides must have the same "
                       "%s, or the KV one side writes cannot be read by the other. Fix: set the same value on "
                       "both clusters" % (variable, right, b["name"], left, a["name"], name, what))
    return out

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a cross-node collective actually used, read from NCCL/RCCL debug output.

A fabric that looks fine can still carry NCCL over TCP sockets, skip GPUDirect RDMA
or pick the wrong HCA; vLLM then starts slowly or runs at a fraction of its speed.
The fabric check runs one all-reduce per node in the pinned image with
NCCL_DEBUG=INFO; this module reads the log lines NCCL documents (NET/IB, NET/Socket,
"Using network", the per-channel "via <transport>" lines, MNNVL clique lines; RCCL
prints the same) and the JSON line the check script prints, and judges the result
against the fabric the inventory declares.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref

RESULT_MARKER = "INFEROPS_FABRIC "

_NET_IB = re.compile(r"NET/IB\s*:\s*Using\s+(?P<devs>.*?)\s*(?:;\s*OOB\s+(?P<oob>\S+))?\s*$")
_NET_SOCKET = re.compile(r"NET/Socket\s*:\s*Using\s+(?P<devs>.*?)\s*$")
_BOOTSTRAP = re.compile(r"Bootstrap\s*:\s*Using\s+(?P<ifs>\S+)")
_USING_NETWORK = re.compile(r"Using network (?P<net>\w+)")
_DEVICE = re.compile(r"\[\d+\](?P<name>[\w.-]+)(?::(?P<port>\d+))?(?:/(?P<kind>IB|RoCE))?(?::(?P<addr>[^\s<]+))?")
_CHANNEL = re.compile(r"Channel \d+(?:/\d+)?\s*:\s*(?P<src>\d+)\[\w+\]\s*->\s*(?P<dst>\d+)\[\w+\]"
                      r"(?:\s*\[(?:send|receive)\])?\s*via\s+(?P<via>\S+)")
_GDR_HCA = re.compile(r"GPU Direct RDMA (?P<state>Enabled|Disabled) for HCA \d+ '(?P<hca>[\w.-]+)'")
_MNNVL_CLIQUE = re.compile(r"MNNVL\s+\d+\s+cliqueId\s+\S+\s+cliqueSize\s+(?P<size>\d+)")
_NVLS = re.compile(r"NVLS multicast support is available")
_VERSION = re.compile(r"(?P<lib>NCCL|RCCL) version (?P<version>\S+)")

# What each inventory fabric may show between nodes; on RDMA the first (with
# GPUDirect RDMA) is required unless the site allows RDMA through host memory.
EXPECTED = {
    "infiniband": ("ib-gdr", "ib"),
    "roce": ("roce-gdr", "roce"),
    "mnnvl": ("mnnvl",),
    "ethernet": ("socket", "gloo-tcp"),
}


def _devices(text: str) -> List[Dict[str, Optional[str]]]:
    return [m.groupdict() for m in _DEVICE.finditer(text)]


def parse_log(text: str) -> Dict[str, Any]:
    """Every fact the collective library's INFO output gives about the fabric."""
    facts: Dict[str, Any] = {"library": None, "version": None, "network": None, "hcas": [], "rdma_kind": None,
                             "interfaces": [], "links": [], "gdr": None, "gdr_hcas": {}, "mnnvl_clique": None,
                             "nvls": False, "result": None}
    links = set()
    for line in text.splitlines():
        if line.startswith(RESULT_MARKER):
            facts["result"] = json.loads(line[len(RESULT_MARKER):])
            continue
        if (m := _VERSION.search(line)) and not facts["version"]:
            facts["library"], facts["version"] = m.group("lib"), m.group("version")
        if m := _NET_IB.search(line):
            devs = _devices(m.group("devs"))
            facts["hcas"] = ["%s:%s" % (d["name"], d["port"] or 1) for d in devs]
            kinds = {d["kind"] for d in devs if d["kind"]}
            facts["rdma_kind"] = "roce" if kinds == {"RoCE"} else "ib" if kinds == {"IB"} else "mixed" if kinds else None
            if m.group("oob"):
                facts["interfaces"].append(m.group("oob").split(":")[0])
        elif m := _NET_SOCKET.search(line):
            facts["interfaces"] += [d["name"] for d in _devices(m.group("devs"))]
        elif m := _BOOTSTRAP.search(line):
            facts["interfaces"].append(m.group("ifs").split(":")[0])
        if m := _USING_NETWORK.search(line):
            facts["network"] = m.group("net")
        if m := _CHANNEL.search(line):
            links.add(m.group("via"))
        if m := _GDR_HCA.search(line):
            facts["gdr_hcas"][m.group("hca")] = m.group("state") == "Enabled"
        if m := _MNNVL_CLIQUE.search(line):
            facts["mnnvl_clique"] = int(m.group("size"))
        if _NVLS.search(line):
            facts["nvls"] = True
    facts["interfaces"] = sorted(set(facts["interfaces"]))
    facts["links"] = sorted(links)
    net_links = [v for v in links if v.startswith("NET/")]
    if net_links:
        facts["gdr"] = any("GDRDMA" in v for v in net_links)
    return facts


def transport(facts: Mapping[str, Any]) -> str:
    """One word for what carried the traffic between nodes."""
    result = facts.get("result") or {}
    if result.get("backend") == "gloo":
        return "gloo-tcp"
    links = facts.get("links") or []
    if any(v.startswith("NET/IB") for v in links) or (not links and facts.get("network") == "IB"):
        kind = facts.get("rdma_kind") or "ib"
        return "%s-gdr" % kind if facts.get("gdr") else kind
    if any(v.startswith("NET/Socket") for v in links) or facts.get("network") == "Socket":
        return "socket"
    if (facts.get("mnnvl_clique") or 0) > 1 and any(v.startswith("P2P") for v in links):
        return "mnnvl"
    if links:
        return "local"
    return "unknown"


def _cause(fabric: str, got: str, facts: Mapping[str, Any]) -> str:
    if fabric in ("infiniband", "roce") and got in ("socket", "unknown"):
        return ("NCCL found no usable RDMA device and fell back to TCP sockets: check that /dev/infiniband is passed "
                "to the container, that NCCL_IB_HCA (vllm_ib_hcas) names active ports (ibstat), and that the "
                "nvidia-peermem or DMA-BUF prerequisites are met")
    if (fabric, got) in (("infiniband", "ib"), ("roce", "roce")):
        return ("GPUDirect RDMA is off (no GDRDMA on any channel): load nvidia-peermem or use the open kernel "
                "modules with DMA-BUF, and keep NCCL_NET_GDR_LEVEL unset")
    if fabric == "infiniband" and got.startswith("roce"):
        return "the HCAs NCCL used are RoCE (Ethernet link layer) but the inventory says infiniband: set vllm_fabric: roce"
    if fabric == "roce" and got.startswith("ib"):
        return "the HCAs NCCL used are InfiniBand but the inventory says roce: set vllm_fabric: infiniband"
    if fabric == "mnnvl":
        return ("traffic left the NVLink domain (%s): IMEX is down or this tray lacks the IMEX channel device "
                "(nvidia-imex-ctl -N; /dev/nvidia-caps-imex-channels/channel0), or the nodes are not in one "
                "NVLink domain group" % got)
    if fabric == "ethernet":
        return "expected TCP between nodes; check NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME (vllm_control_interface)"
    return "unexpected transport %s" % got


def judge(host: str, fabric: str, log_text: str, min_busbw_gbps: float = 0.0, require_gdr: bool = True,
          hcas: Optional[List[str]] = None) -> Dict[str, Any]:
    """The per-node verdict: what was used, the bandwidth, and every problem with its likely cause."""
    facts = parse_log(log_text)
    got = transport(facts)
    result = facts.get("result") or {}
    problems = []
    if result.get("error"):
        problems.append("host %s: %s" % (host, result["error"]))
    elif not result:
        problems.append("host %s: the fabric check printed no result; its log ends with: %s"
                        % (host, " / ".join(log_text.strip().splitlines()[-5:]) or "(nothing)"))
    else:
        expected = EXPECTED.get(fabric)
        if expected:
            allowed = expected[:1] if require_gdr and fabric in ("infiniband", "roce") else expected
            if got not in allowed:
                problems.append("host %s: the collective used %s but vllm_fabric is %s (expected %s); likely cause: %s"
                                % (host, got, fabric, " or ".join(allowed), _cause(fabric, got, facts)))
        used = {h.split(":")[0] for h in facts["hcas"]}
        stray = sorted(used - set(hcas or [])) if hcas and used else []
        if stray:
            problems.append("host %s: NCCL used HCAs %s that vllm_ib_hcas (%s) does not list; set NCCL_IB_HCA through "
                            "vllm_ib_hcas or fix the list" % (host, ", ".join(stray), ", ".join(hcas or [])))
        busbw = result.get("busbw_gbps")
        if min_busbw_gbps and (busbw is None or busbw < min_busbw_gbps):
            problems.append("host %s: bus bandwidth %s GB/s is below fabric_check_min_busbw_gbps (%s GB/s); likely "
                            "cause: a degraded or down link, the wrong HCA for this GPU's NUMA node, or PCIe ACS "
                            "redirecting peer traffic" % (host, busbw, min_busbw_gbps))
    return {"host": host, "fabric": fabric, "transport": got, "library": facts["library"],
            "version": facts["version"], "hcas": facts["hcas"], "interfaces": facts["interfaces"],
            "links": facts["links"], "busbw_gbps": result.get("busbw_gbps"), "algbw_gbps": result.get("algbw_gbps"),
            "bytes": result.get("bytes"), "world_size": result.get("world_size"), "problems": problems,
            "passed": not problems}


# What of each node's launch the check runs with: its HCAs, the host stack (vendor, fabric, GPUDirect mode, the
# collective backend), the environment and the container options (GPUs, devices, capabilities, volumes).
_LAUNCH_FACING = ("hcas", "host_stack", "env", "container")


def basis(launches: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> str:
    """A digest of what a check proved besides the image and the nodes: every node's fabric-facing launch, in the
    cluster's node order, the cluster's fabric and head address, and the check's own settings (a site that raises
    its bandwidth baseline wants it proven again)."""
    facing = [dict({key: launch.get(key) for key in _LAUNCH_FACING}, host=launch.get("host"),
                   fabric=(launch.get("cluster") or {}).get("fabric"),
                   head_address=(launch.get("cluster") or {}).get("head_address")) for launch in launches]
    # settings as text: an inventory's "20" and 20 are one setting
    text = json.dumps([facing, {key: str(value) for key, value in settings.items()}], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def record_changes(record: Mapping[str, Any], images: Sequence[str], nodes: Sequence[str],
                   basis_now: Optional[str] = None) -> List[str]:
    """What no longer holds of the head's record of the cluster's last check (fabric.json): `failed`, `another
    image` (a node's image by digest: a mirror's reference names the same image), `other nodes`, `another launch`
    (compared only when `basis_now` is given; a record without a basis predates it). [] : the record still holds."""
    notes = []
    if record.get("passed") is not True:
        notes.append("failed")
    recorded = image_ref.digest(str(record.get("image") or ""))
    if any(image_ref.digest(image) != recorded for image in images if image is not None):
        notes.append("another image")
    if nodes and list(record.get("nodes") or []) != list(nodes):
        notes.append("other nodes")
    if basis_now is not None and record.get("basis") != basis_now:
        notes.append("another launch")
    return notes


def check_due(record_text: str, images: Sequence[str], nodes: Sequence[str], launches: Sequence[Mapping[str, Any]],
              settings: Mapping[str, Any], forced: Sequence[str] = ()) -> Dict[str, Any]:
    """Whether this run runs the cluster's collective, and why: every node asks with the same inputs (each node's
    image and launch, the head's record), so all of them run it or none. It runs where something forces it
    (`forced`), where the head holds no readable record, or where the record no longer holds; a record that holds is
    the cluster's verdict until an image, the nodes, their fabric-facing launch or the check's settings change. A
    cluster whose launches are not all in this run (a --limit) is checked: its missing ranks then fail the check by
    name."""
    now = basis(launches, settings)
    try:
        record = json.loads(record_text) if record_text and record_text.strip() else {}
    except ValueError:
        record = None
    if not isinstance(record, dict):
        reasons = ["an unreadable record"]
        record = {}
    elif not record:
        reasons = ["no record of an earlier check"]
    else:
        reasons = ["the check of %s: %s" % (record.get("checked_at") or "an unknown time", note)
                   for note in record_changes(record, images, nodes, now)]
    missing = len(nodes) - len(launches)
    if missing > 0:
        reasons.append("%d of the cluster's nodes outside this run" % missing)
    reasons = list(forced) + reasons
    return {"due": bool(reasons), "reasons": reasons, "basis": now, "checked_at": record.get("checked_at"),
            "summary": record.get("summary")}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's hardware health from the vendors' own tools, read-only: `nvidia-smi -q -x` (ECC, row remapping, retired
pages, a reset the driver asks for, the PCIe link's width, clock slowdowns, the MNNVL fabric), `nvidia-smi nvlink -s`
(each NVLink's state), the kernel log's Xid events and `ibstat` (each HCA port's state and rate).

Each parser takes the tool's text and returns plain data; findings() turns it into Findings: where, what is wrong,
the likely fix, and whether it fences the node (a GPU that cannot serve) or is a warning. Output a parser cannot read
(empty, truncated, not the tool's) is one HealthReadError naming the tool, never a traceback. Stdlib only: the node's
module runs it. Formats: tests/unit/fixtures/gpu_health/README.md."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Sequence

# Clock slowdowns that mean the hardware protects itself (heat, power brake, a slowdown signal): a GPU held there
# runs its peers' collectives at its pace. Idle, application clocks and the software power cap are normal.
SLOWDOWNS = {
    "hw_slowdown": "a hardware slowdown (HW_SLOWDOWN: overheating or a power supply asserting it)",
    "hw_thermal_slowdown": "a hardware thermal slowdown",
    "hw_power_brake_slowdown": "the power brake (the chassis asked the GPU to slow down)",
    "sw_thermal_slowdown": "a thermal slowdown (the GPU is above its software thermal limit)",
}
COOLING = "check the node's cooling, fans and power supplies (nvidia-smi -q -d PERFORMANCE,TEMPERATURE)"

# Xid events that say the GPU or its link is broken, with the likely fix (NVIDIA's Xid catalog). The others (13, 31,
# 43, 45: an application's fault) say nothing about the hardware.
XIDS = {
    48: ("an uncorrectable double-bit ECC error", "reset the GPU; if it recurs, replace it"),
    61: ("an internal micro-controller breakpoint", "reset the GPU; if it recurs, update the driver or replace it"),
    62: ("an internal micro-controller halt", "reset the GPU; if it recurs, update the driver or replace it"),
    63: ("a memory row marked for remapping", "reset the GPU to apply the remap"),
    64: ("a failed row remap", "replace the GPU (its spare rows are used up)"),
    74: ("an NVLink error", "check the NVLink connection or the NVSwitch; reset the GPU"),
    79: ("the GPU fell off the bus", "reseat or replace the GPU; check its PCIe slot, riser and power"),
    92: ("a high single-bit ECC error rate", "replace the GPU soon; drain it now"),
    94: ("a contained ECC error", "reset the GPU to clear it"),
    95: ("an uncontained ECC error", "reset the GPU; if it recurs, replace it"),
    119: ("a GSP firmware timeout", "reset the GPU; if it recurs, update the driver"),
    120: ("a GSP firmware error", "reset the GPU; if it recurs, update the driver"),
    140: ("an unrecovered ECC error", "reset the GPU; if it recurs, replace it"),
}
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]+:[0-9a-fA-F]+:[0-9a-fA-F.]+)\): (\d+),")
_NVLINK_GPU = re.compile(r"^GPU (\d+): (.*?)(?: \(UUID: ([^)]*)\))?$")
_NVLINK_LINK = re.compile(r"^Link (\d+): (.*)$")


class HealthReadError(ValueError):
    """A tool's output that cannot be read: one line, naming the tool and what to do."""

    def __init__(self, tool: str, problem: str):
        super().__init__("%s: %s. Run it on the node by hand: a driver or tool that does not answer is itself a "
                         "fault to fix before the node serves" % (tool, problem))


@dataclass(frozen=True)
class Finding:
    where: str       # "GPU 1 (00000000:2A:00.0)", "mlx5_1 port 1", "the kernel log"
    what: str        # what is wrong, with the figure
    fix: str         # the likely fix
    fences: bool     # True: the node must not serve; False: a warning

    def line(self) -> str:
        return "%s: %s. Fix: %s" % (self.where, self.what, self.fix)


def as_dicts(findings: Sequence[Finding]) -> List[Dict[str, Any]]:
    return [asdict(finding) for finding in findings]


# --- nvidia-smi -q -x ---------------------------------------------------------------------------------------------

def _text(element: Optional[ET.Element], path: str) -> str:
    found = element.find(path) if element is not None else None
    return (found.text or "").strip() if found is not None else ""


def _count(element: Optional[ET.Element], path: str) -> int:
    """An error counter; N/A (a GPU without it) and absent are 0."""
    value = _text(element, path)
    return int(value) if value.isdigit() else 0


def _width(value: str) -> Optional[int]:
    match = re.match(r"x?(\d+)x?$", value.strip())
    return int(match.group(1)) if match else None


def nvidia_gpus(xml_text: str) -> List[Dict[str, Any]]:
    """Each GPU of `nvidia-smi -q -x`, with the fields findings() judges."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise HealthReadError("nvidia-smi -q -x", "its output is not whole XML (%s)" % exc) from None
    if root.tag != "nvidia_smi_log":
        raise HealthReadError("nvidia-smi -q -x", "its output is <%s>, not <nvidia_smi_log>" % root.tag)
    gpus = []
    for index, gpu in enumerate(root.findall("gpu")):
        ecc = gpu.find("ecc_errors")
        reasons = gpu.find("clocks_event_reasons")
        prefix = "clocks_event_reason_"
        if reasons is None:   # drivers before r535
            reasons, prefix = gpu.find("clocks_throttle_reasons"), "clocks_throttle_reason_"
        fabric = gpu.find("fabric")
        gpus.append({
            "index": index,
            "bus_id": gpu.get("id") or _text(gpu, "pci/pci_bus_id"),
            "uuid": _text(gpu, "uuid"),
            "model": _text(gpu, "product_name"),
            "pcie_width": _width(_text(gpu, "pci/pci_gpu_link_info/link_widths/current_link_width")),
            "pcie_max_width": _width(_text(gpu, "pci/pci_gpu_link_info/link_widths/max_link_width")),
            "slowdowns": sorted(name for name in SLOWDOWNS
                                if _text(reasons, prefix + name) == "Active"),
            "ecc_volatile_uncorrectable": sum(_count(ecc, "volatile/" + name) for name in (
                "dram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded",
                "double_bit/total")),
            "ecc_aggregate_uncorrectable": sum(_count(ecc, "aggregate/" + name) for name in (
                "dram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded",
                "double_bit/total")),
            "sram_threshold_exceeded": _text(ecc, "aggregate/sram_threshold_exceeded") == "Yes",
            "remap_pending": _text(gpu, "remapped_rows/remapped_row_pending") == "Yes",
            "remap_failure": _text(gpu, "remapped_rows/remapped_row_failure") == "Yes",
            "retirement_pending": "Yes" in (_text(gpu, "retired_pages/pending_retirement"),
                                            _text(gpu, "retired_pages/pending_blacklist")),
            "reset_required": _text(gpu, "gpu_reset_status/reset_required") == "Yes",
            "drain_and_reset": _text(gpu, "gpu_reset_status/drain_and_reset_recommended") == "Yes",
            "fabric": None if fabric is None or _text(fabric, "state") in ("", "N/A") else {
                "state": _text(fabric, "state"), "status": _text(fabric, "status"),
                "bandwidth": _text(fabric, "health/bandwidth"),
                "route_unhealthy": _text(fabric, "health/route_unhealthy") == "True"},
        })
    if not gpus:
        raise HealthReadError("nvidia-smi -q -x", "it lists no GPU")
    return gpus


def nvidia_findings(gpus: Sequence[Dict[str, Any]]) -> List[Finding]:
    out = []
    for gpu in gpus:
        where = "GPU %d (%s)" % (gpu["index"], gpu["bus_id"])
        if gpu["ecc_volatile_uncorrectable"]:
            out.append(Finding(where, "%d uncorrectable ECC errors since the driver loaded"
                               % gpu["ecc_volatile_uncorrectable"], "reset the GPU; if they recur, replace it", True))
        elif gpu["ecc_aggregate_uncorrectable"]:
            out.append(Finding(where, "%d uncorrectable ECC errors in its lifetime (none since the driver loaded)"
                               % gpu["ecc_aggregate_uncorrectable"], "watch it; replace it if they come back", False))
        if gpu["sram_threshold_exceeded"]:
            out.append(Finding(where, "its SRAM error threshold is exceeded", "replace the GPU", True))
        if gpu["remap_failure"]:
            out.append(Finding(where, "a memory row could not be remapped", "replace the GPU (no spare rows left)",
                               True))
        elif gpu["remap_pending"]:
            out.append(Finding(where, "a memory row remap is pending", "reset the GPU (or reboot) to apply it", True))
        if gpu["retirement_pending"]:
            out.append(Finding(where, "a page retirement is pending", "reset the GPU (or reboot) to apply it", True))
        if gpu["reset_required"] or gpu["drain_and_reset"]:
            out.append(Finding(where, "the driver asks for a reset", "drain the node and reset the GPU", True))
        if gpu["pcie_width"] and gpu["pcie_max_width"] and gpu["pcie_width"] < gpu["pcie_max_width"]:
            out.append(Finding(where, "its PCIe link trained at x%d of x%d" % (gpu["pcie_width"], gpu["pcie_max_width"]),
                               "reseat the GPU or its riser; check the slot", True))
        for name in gpu["slowdowns"]:
            out.append(Finding(where, "its clocks are held down by %s" % SLOWDOWNS[name], COOLING, True))
        fabric = gpu["fabric"]
        if fabric:
            if fabric["state"] != "Completed" or fabric["status"] not in ("Success", "N/A"):
                out.append(Finding(where, "its NVLink fabric is %s (%s)" % (fabric["state"], fabric["status"]),
                                   "check the IMEX and NVSwitch fabric manager on the rack, then reset the GPU", True))
            elif fabric["bandwidth"] == "Degraded" or fabric["route_unhealthy"]:
                out.append(Finding(where, "its NVLink fabric is degraded (bandwidth %s%s)" % (
                    fabric["bandwidth"], ", a route unhealthy" if fabric["route_unhealthy"] else ""),
                    "check the rack's NVLink switch trays and cables; NCCL over a degraded fabric can fail", True))
    return out


# --- the kernel log's Xid events ----------------------------------------------------------------------------------

def xid_events(log_text: str) -> List[Dict[str, Any]]:
    """Every `NVRM: Xid (PCI:<bus>): <n>, ...` line, as {bus, xid, text}; dmesg, journalctl -k or a bare log."""
    out = []
    for line in log_text.splitlines():
        match = _XID.search(line)
        if match:
            out.append({"bus": match.group(1).lower(), "xid": int(match.group(2)),
                        "text": line[match.start():].strip()[:200]})
    return out


def xid_findings(events: Sequence[Dict[str, Any]]) -> List[Finding]:
    """One finding per bus and hardware Xid since boot (a repeat is counted, not listed again)."""
    seen: Dict[tuple, int] = {}
    for event in events:
        if event["xid"] in XIDS:
            key = (event["bus"], event["xid"])
            seen[key] = seen.get(key, 0) + 1
    out = []
    for (bus, xid), times in seen.items():
        what, fix = XIDS[xid]
        out.append(Finding("the GPU at PCI %s" % bus, "Xid %d since boot%s: %s" % (
            xid, " (%d times)" % times if times > 1 else "", what), fix, True))
    return out


# --- nvidia-smi nvlink -s -----------------------------------------------------------------------------------------

def nvlink_links(text: str) -> Dict[int, Dict[str, Any]]:
    """{GPU index: {"model", "active": [links], "inactive": [links]}} from `nvidia-smi nvlink -s`."""
    out: Dict[int, Dict[str, Any]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        gpu = _NVLINK_GPU.match(line)
        if gpu:
            current = out.setdefault(int(gpu.group(1)), {"model": gpu.group(2), "active": [], "inactive": []})
            continue
        link = _NVLINK_LINK.match(line)
        if link is None or current is None:
            raise HealthReadError("nvidia-smi nvlink -s", "a line it cannot read: %r" % line[:80])
        current["inactive" if "inactive" in link.group(2) else "active"].append(int(link.group(1)))
    return out


def nvlink_findings(links: Dict[int, Dict[str, Any]]) -> List[Finding]:
    """A GPU with an inactive link, or fewer active links than the node's other GPUs of its model."""
    out = []
    for index, gpu in sorted(links.items()):
        peers = [len(other["active"]) for other in links.values() if other["model"] == gpu["model"]]
        if gpu["inactive"] and gpu["active"]:
            out.append(Finding("GPU %d" % index, "NVLink %s inactive (%d of %d links up)" % (
                ", ".join(map(str, gpu["inactive"])), len(gpu["active"]), len(gpu["active"]) + len(gpu["inactive"])),
                "reset the GPU; if the link stays down, check the baseboard or NVSwitch", True))
        elif len(gpu["active"]) < max(peers):
            out.append(Finding("GPU %d" % index, "%d NVLinks up, its peers on this node have %d" % (
                len(gpu["active"]), max(peers)), "reset the GPU; check the baseboard or NVSwitch", True))
    return out


# --- ibstat -------------------------------------------------------------------------------------------------------

def ib_ports(text: str) -> List[Dict[str, Any]]:
    """Each HCA port of `ibstat`: {ca, port, state, physical, rate (Gb/s), link_layer}."""
    ports: List[Dict[str, Any]] = []
    ca = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("CA '") and line.endswith("'"):
            ca = line[4:-1]
        elif re.match(r"^Port \d+:$", line):
            if ca is None:
                raise HealthReadError("ibstat", "a port before any CA line")
            ports.append({"ca": ca, "port": int(line[5:-1]), "state": "", "physical": "", "rate": None,
                          "link_layer": ""})
        elif ports and ":" in line:
            key, _sep, value = (part.strip() for part in line.partition(":"))
            field = {"State": "state", "Physical state": "physical", "Rate": "rate", "Link layer": "link_layer"}
            if key in field:
                ports[-1][field[key]] = int(value) if key == "Rate" and value.isdigit() else value
    if not ports:
        raise HealthReadError("ibstat", "it lists no HCA port")
    return ports


def ib_findings(ports: Sequence[Dict[str, Any]], hcas: Sequence[str] = ()) -> List[Finding]:
    """A port of the HCAs the plan uses (all where none is named) that is not up, or slower than the node's fastest
    of the same link layer: one slow rail slows every collective that crosses it."""
    used = [port for port in ports if not hcas or port["ca"] in hcas]
    out = []
    for port in used:
        where = "%s port %d" % (port["ca"], port["port"])
        if port["state"] != "Active" or port["physical"] != "LinkUp":
            out.append(Finding(where, "the port is %s (%s)" % (port["state"] or "unknown", port["physical"] or "unknown"),
                               "check the cable, the transceiver and the switch port; `ibstat %s`" % port["ca"], True))
            continue
        fastest = max((p["rate"] or 0) for p in used if p["link_layer"] == port["link_layer"] and p["state"] == "Active")
        if port["rate"] is not None and port["rate"] < fastest:
            out.append(Finding(where, "the port runs at %d Gb/s, the node's other ports at %d" % (port["rate"], fastest),
                               "reseat or replace the cable or transceiver; check the switch port's speed", True))
    missing = sorted(set(hcas) - {port["ca"] for port in ports})
    for name in missing:
        out.append(Finding(name, "the HCA the plan uses (vllm_ib_hcas) is not in ibstat",
                           "check the driver (mlx5_core) and the card; or remove it from vllm_ib_hcas", True))
    return out

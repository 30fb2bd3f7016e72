# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for what GPU nodes report: nvidia-smi, amd-smi, nvidia-imex-ctl,
mokutil and the InfiniBand sysfs tree. Plain functions over text, tested on
recorded outputs (tests/unit/fixtures/gpu_facts). No Ansible imports."""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node.hardware import CATALOG

NVIDIA_QUERY_FIELDS = ("index", "name", "uuid", "memory.total", "driver_version", "pci.bus_id", "compute_cap")
# GPU memory in use, read after a smoke load (MiB, nounits)
NVIDIA_MEMORY_FIELDS = ("index", "memory.used", "memory.total")


def model_patterns() -> List[Tuple[str, str]]:
    """Marketing names (NVIDIA GB300, AMD Instinct MI355X) -> catalog model: the catalog's GPU rows are the
    only names (a GPU outside it is reported by its own name). Whole words: B300 does not match in GB300."""
    return [(r"\b%s\b" % re.escape(model), model) for model, accelerator in CATALOG.items() if accelerator.vendor != "cpu"]


def model_of(name: str) -> Optional[str]:
    for pattern, model in model_patterns():
        if re.search(pattern, name or "", re.IGNORECASE):
            return model
    return None


def parse_nvidia_query(text: str, fields=NVIDIA_QUERY_FIELDS) -> List[Dict[str, str]]:
    """`nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits`."""
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        values = [v.strip() for v in line.split(",")]
        if len(values) != len(fields):
            raise ValueError("nvidia-smi printed %d columns, expected %d: %r" % (len(values), len(fields), line))
        gpus.append(dict(zip(fields, values)))
    return gpus


def parse_nvidia_header(text: str) -> Dict[str, Optional[str]]:
    """Driver and CUDA version from plain `nvidia-smi` (the banner)."""
    driver = re.search(r"Driver Version:\s*([0-9.]+)", text)
    cuda = re.search(r"CUDA Version:\s*([0-9.]+)", text)
    return {"driver_version": driver.group(1) if driver else None, "cuda_version": cuda.group(1) if cuda else None}


def parse_amd_static(text: str) -> List[Dict[str, Any]]:
    """`amd-smi static --json`: a list of GPUs (older releases) or {"gpu_data": [...]}."""
    data = json.loads(text)
    items = data.get("gpu_data", []) if isinstance(data, dict) else data
    gpus = []
    for item in items:
        asic, vram = item.get("asic", {}), item.get("vram", {})
        size = vram.get("size", {})
        mem = size.get("value") if isinstance(size, dict) else size
        gpus.append({"index": str(item.get("gpu")), "name": asic.get("market_name", ""),
                     "memory_mib": int(mem) if str(mem).isdigit() else None,
                     "gfx": asic.get("target_graphics_version"), "bdf": item.get("bus", {}).get("bdf")})
    return gpus


def parse_amd_version(text: str) -> Dict[str, Optional[str]]:
    """`amd-smi version` (plain `A: x | B: y` or --json)."""
    text = text.strip()
    if text.startswith(("[", "{")):
        data = json.loads(text)
        data = data[0] if isinstance(data, list) else data
        return {"rocm_version": data.get("rocm_version"), "driver_version": data.get("amdgpu_version")}
    fields = dict(part.split(":", 1) for part in text.split("|") if ":" in part)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    return {"rocm_version": fields.get("ROCm version"), "driver_version": fields.get("amdgpu version")}


def parse_imex_status(text: str) -> Dict[str, Any]:
    """`nvidia-imex-ctl -N`: per-node status lines and the domain state."""
    nodes = []
    for m in re.finditer(r"Node #\s*(\d+)\s+-\s+(\S+)\s+-\s+(\S+)(?:\s+-\s+Version:\s*(\S+))?", text):
        nodes.append({"index": int(m.group(1)), "address": m.group(2), "status": m.group(3), "version": m.group(4)})
    state = re.search(r"Domain State:\s*(\S+)", text)
    return {"domain_state": state.group(1) if state else None, "nodes": nodes}


def parse_secure_boot(text: str) -> Optional[bool]:
    """`mokutil --sb-state`: True/False, or None where EFI variables are not available."""
    if re.search(r"SecureBoot enabled", text, re.IGNORECASE):
        return True
    if re.search(r"SecureBoot disabled", text, re.IGNORECASE):
        return False
    return None


def read_infiniband(sysfs_root: str = "/sys") -> List[Dict[str, Any]]:
    """RDMA devices and their ports from /sys/class/infiniband."""
    base = os.path.join(sysfs_root, "class", "infiniband")
    if not os.path.isdir(base):
        return []
    devices = []
    for name in sorted(os.listdir(base)):
        ports = []
        port_dir = os.path.join(base, name, "ports")
        for port in sorted(os.listdir(port_dir), key=lambda p: int(p) if p.isdigit() else 0) \
                if os.path.isdir(port_dir) else []:
            def read(item, port=port):
                try:
                    with open(os.path.join(port_dir, port, item), encoding="utf-8") as fh:
                        return fh.read().strip()
                except OSError:
                    return None
            state = read("state") or ""
            ports.append({"port": int(port), "state": state.split(":")[-1].strip(),
                          "phys_state": (read("phys_state") or "").split(":")[-1].strip(),
                          "link_layer": read("link_layer"), "rate": read("rate")})
        devices.append({"name": name, "ports": ports,
                        "active": any(p["state"] == "ACTIVE" for p in ports)})
    return devices


def driver_branch(version: Optional[str]) -> Optional[int]:
    if not version:
        return None
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def summarize(vendor: Optional[str], gpus: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Vendor, model, count and memory over a node's GPUs (None when mixed or absent)."""
    models = sorted({model_of(g.get("name", "")) or g.get("name", "") for g in gpus})
    mems = sorted({g.get("memory_mib") for g in gpus})
    return {"vendor": vendor if gpus else None, "count": len(gpus),
            "model": models[0] if len(models) == 1 else None, "models": models,
            "memory_mib": mems[0] if len(mems) == 1 else None}


def memory_usage(gpus: List[Dict[str, str]]) -> Dict[str, Optional[int]]:
    """Used and total GPU memory over a node's GPUs, in MiB, from the memory query."""
    def total(key):
        vals = [g.get(key, "") for g in gpus]
        return sum(int(v) for v in vals) if vals and all(str(v).isdigit() for v in vals) else None
    return {"memory_used_mib": total("memory.used"), "memory_total_mib": total("memory.total")}


def vram_line(facts: Optional[Dict[str, Any]]) -> str:
    """A node's GPU memory for the environment record: used / total, or n/a without GPUs."""
    facts = facts or {}
    if not facts.get("count"):
        return "n/a"
    used, total = facts.get("memory_used_mib"), facts.get("memory_total_mib")
    if total is None and facts.get("memory_mib"):
        total = facts["memory_mib"] * facts["count"]
    return "%s / %s MiB used over %d GPUs" % ("n/a" if used is None else "{:,}".format(used),
                                              "n/a" if total is None else "{:,}".format(total), facts["count"])

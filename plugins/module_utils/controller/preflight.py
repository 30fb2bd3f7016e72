# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight role's checks of one node's gpu_facts against its inventory, as messages.

One list for one assert: a no-op converge pays for one task per host, not one per check.
No Ansible imports."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.rules import FABRICS
from ansible_collections.inferops.vllm.plugins.module_utils.node.vendor_driver import node_evidence


def driver_problem(facts: Dict[str, Any], host: str, min_branch: int) -> Optional[str]:
    branch = facts.get("driver_branch")
    if facts.get("vendor") != "nvidia" or branch is None or int(branch) >= min_branch:
        return None
    vendor = node_evidence(facts)
    if vendor:   # the nvidia_driver role never replaces such a driver: the fix is the vendor's
        return ("%s runs NVIDIA driver %s (branch %s); CUDA 13 vLLM images need branch %d+. Its vendor manages it (%s): "
                "upgrade it through the vendor to branch %d or newer (nvidia_driver_vendor_managed)."
                % (host, facts.get("driver_version"), branch, min_branch, "; ".join(vendor), min_branch))
    return ("%s runs NVIDIA driver %s (branch %s); CUDA 13 vLLM images need branch %d+. Set nvidia_driver_branch to "
            "%d or newer and run the nvidia_driver role (site.yml --tags drivers)."
            % (host, facts.get("driver_version"), branch, min_branch, min_branch))


def gpu_problem(facts: Dict[str, Any], host: str, expected: Dict[str, Any]) -> Optional[str]:
    if not facts.get("count") or expected["vendor"] == "cpu":
        return None
    if (facts.get("vendor"), facts.get("model"), facts.get("count")) == (
            expected["vendor"], expected["gpu_model"], int(expected["gpus"])):
        return None
    return ("%s reports %s x %s (%s), but the inventory says %s x %s (vllm_gpu_model, vllm_gpus_per_node). Fix the "
            "inventory, or the node (a GPU missing from nvidia-smi/amd-smi usually means a hardware or driver fault)."
            % (host, facts.get("count"), "/".join(facts.get("models") or []) or "no GPU", facts.get("vendor"),
               expected["gpus"], expected["gpu_model"]))


def rdma_problem(facts: Dict[str, Any], host: str, expected: Dict[str, Any]) -> Optional[str]:
    fabric = FABRICS.get(expected["fabric"])
    if fabric is None or not fabric.rdma:
        return None
    devices = facts.get("infiniband") or []
    names = [d["name"] for d in devices]
    active = [d["name"] for d in devices if d.get("active")]
    missing = [h for h in expected.get("hcas") or [] if h not in names]
    if active and not missing:
        return None
    seen = "no RDMA device" if not names else "devices %s with active ports on %s" % (
        ", ".join(names), ", ".join(active) or "none")
    return ("vllm_fabric=%s but %s shows %s%s. Check the HCA driver (ibv_devinfo), cabling and the subnet manager, "
            "or correct vllm_ib_hcas / vllm_fabric."
            % (expected["fabric"], host, seen, "; missing vllm_ib_hcas " + ", ".join(missing) if missing else ""))


def health_lines(facts: Dict[str, Any], host: str) -> Tuple[List[str], List[str]]:
    """(what fences the node, what only warns) from its health read (gpu_facts' `health`, node/gpu_health.py): one
    line each, naming the node, the part, what is wrong and the fix. The node is fenced: it joins no cluster."""
    read = facts.get("health") or {}
    fences = ["%s must not serve: %s: %s. Fix: %s" % (host, f["where"], f["what"], f["fix"])
              for f in read.get("findings") or () if f["fences"]]
    warns = ["%s: %s: %s. Fix: %s" % (host, f["where"], f["what"], f["fix"])
             for f in read.get("findings") or () if not f["fences"]]
    warns += ["%s: not read: %s" % (host, what) for what in read.get("not_read") or ()]
    return fences, warns


def node_problems(facts: Dict[str, Any], host: str, min_driver_branch: int,
                  expected: Optional[Dict[str, Any]] = None, require_rdma: bool = True) -> List[str]:
    """What stops this node from serving as the inventory describes it; empty when nothing does.
    `expected`: the launch's host_stack (vendor, gpu_model, gpus, fabric, hcas); None where the node has no
    launch (the role run on its own), which checks the driver branch only."""
    problems = [driver_problem(facts, host, min_driver_branch)]
    if expected is not None:
        problems.append(gpu_problem(facts, host, expected))
        if require_rdma:
            problems.append(rdma_problem(facts, host, expected))
    return [p for p in problems if p] + health_lines(facts, host)[0]

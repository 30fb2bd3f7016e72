# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How fabric, hardware and MoE backends relate: a small table of facts, each
with its source, that the launch compiler applies. No Ansible imports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Fabric:
    name: str
    multi_node: bool     # can connect several nodes
    rdma: bool           # cross-node traffic goes over InfiniBand/RoCE verbs
    nvlink: bool         # every GPU of the cluster shares one NVLink domain
    description: str


FABRICS = {
    f.name: f for f in (
        Fabric("nvlink", False, False, True, "NVLink/NVSwitch inside one node"),
        Fabric("mnnvl", True, False, True, "multi-node NVLink domain (GB200/GB300 NVL72 rack, IMEX)"),
        Fabric("infiniband", True, True, False, "InfiniBand RDMA between nodes"),
        Fabric("roce", True, True, False, "RoCE RDMA between nodes"),
        Fabric("ethernet", True, False, False, "TCP sockets between nodes (no RDMA: test and lab clusters)"),
        Fabric("none", False, False, False, "a single node without a GPU fabric (CPU lab, one GPU)"),
    )
}

# --all2all-backend when the inventory sets none: vendor x where the experts' tokens travel.
# Source: Kimi-K3 recipe notes "Use --all2all-backend deepep_v2 for RDMA and
# --all2all-backend flashinfer_nvlink_one_sided for NVLink"; MoRI is ROCm's multi-node EP.
DEFAULT_ALL2ALL = {
    ("nvidia", "rdma"): "deepep_v2",
    ("nvidia", "nvlink"): "flashinfer_nvlink_one_sided",
    ("amd", "rdma"): "mori_high_throughput",
}

# Backends that need every GPU in one NVLink domain (symmetric memory / multicast).
NVLINK_ONLY_ALL2ALL = {
    "flashinfer_nvlink_one_sided": "FlashInfer one-sided NVLink all2all (MNNVL)",
    "flashinfer_nvlink_two_sided": "FlashInfer two-sided NVLink all2all (MNNVL)",
    "flashinfer_all2allv": "deprecated alias of flashinfer_nvlink_two_sided",
    "moonep": "MoonEP needs NVLink symmetric memory / multicast",
}
NVLINK_ONLY_MOE = {
    "deep_gemm_mega_moe": "DeepGEMM MegaMoE uses an NVLink symmetric-memory buffer; the Kimi-K3 recipe: "
                          "'DeepGEMM MegaMoE is not compatible with cross-node RDMA'",
}
# vLLM logs "has been removed. Falling back to 'allgather_reducescatter'" for these.
REMOVED_ALL2ALL = {"naive", "pplx"}
# vLLM's DeepGEMM MegaMoE: "requires SM100 GPUs"; Kimi K3: "MegaMoE requires expert parallel".
SM100_ONLY_MOE = {"deep_gemm_mega_moe"}
EP_REQUIRED_MOE = {"deep_gemm_mega_moe"}
# Kimi-K2.5 recipe: "FlyDSL INT4 MoE path does not support expert parallelism".
NO_EP_MOE = {"flydsl"}
# MoonEP serves unquantized BF16 experts only (vLLM config/vllm.py).
BF16_ONLY_ALL2ALL = {"moonep"}
# Vendor-specific backends.
VENDOR_ALL2ALL = {
    "mori_high_throughput": "amd", "mori_low_latency": "amd",
    "deepep_v2": "nvidia", "deepep_high_throughput": "nvidia", "deepep_low_latency": "nvidia",
    "flashinfer_nvlink_one_sided": "nvidia", "flashinfer_nvlink_two_sided": "nvidia",
    "flashinfer_all2allv": "nvidia", "moonep": "nvidia", "nixl_ep": "nvidia",
}

# Environment each fabric needs on every node (NCCL docs; Kimi recipes' MNNVL block).
FABRIC_ENV = {
    "mnnvl": {"NCCL_MNNVL_ENABLE": "1", "NCCL_CUMEM_ENABLE": "1", "NCCL_NVLS_ENABLE": "1"},
}

# Several NVLink domains (NVL72 racks) joined by RDMA: vllm_fabric names the fabric between the
# domains and each host's vllm_nvlink_domain its rack. The MNNVL env and the IMEX channel stay on:
# NCCL troubleshooting guide, "Multi-node NVLink (MNNVL) issues": "NCCL uses MNNVL for inter-node
# communication within the same NVLink domain if available", and the network between domains.
# The MoE all2all crosses the RDMA fabric, so it is picked for RDMA (deepep_v2 / MoRI) and the
# NVLink-only backends (NVLINK_ONLY_ALL2ALL, NVLINK_ONLY_MOE) are refused.
DOMAIN_JOINING_FABRICS = ("infiniband", "roce")


def traffic_kind(fabric: Fabric, node_count: int) -> Optional[str]:
    """How expert tokens travel between GPUs: 'nvlink', 'rdma', 'tcp' or None (single device).
    Across NVLink domains it is the fabric joining them (rdma)."""
    if fabric.nvlink:
        return "nvlink"
    if node_count > 1:
        return "rdma" if fabric.rdma else "tcp"
    return None


# Lowest NVIDIA driver branch per CUDA major of the image. Source: CUDA Toolkit release notes, table
# "CUDA Toolkit and Corresponding Driver Versions" (13.x needs >= 580, 12.x >= 525, 11.x >= 450 with
# minor-version compatibility); the Kimi-K3 guide: "CUDA 13 (cu130) build only ... r580+ NVIDIA driver".
MIN_DRIVER_BRANCH = {13: 580, 12: 525, 11: 450}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node's host stack must be, decided once with its launch: the launch's host_stack section.

The host roles (preflight, nvidia_driver, rocm, container_runtime, fabric_check, vllm_serve,
vllm_watchdog, smoke_test) apply this section and read nothing else of the hardware inventory:
vendor, GPU model and count, Fabric Manager, the IMEX domain and its peers, GPUDirect RDMA, the
collective, the torch build an image must have, the ranks the probes reach. A role's "auto"
tunable is resolved here from what the host sets (ROLE_SETTINGS: the role defaults, which a unit
test keeps equal to each role's defaults/main.yml). No Ansible imports: controller code.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

# The role tunables whose "auto" this section decides, with their role defaults. (None: the role's
# default is a template of another variable: nvidia_driver_imex_domain follows vllm_nvlink_domain.)
ROLE_SETTINGS: Dict[str, Any] = {
    "nvidia_driver_fabric_manager": "auto",
    "nvidia_driver_imex": "auto",
    "nvidia_driver_imex_domain": None,
    "nvidia_driver_kernel_modules": "open",
    "nvidia_driver_gpudirect_rdma": "auto",
    "container_runtime_gpu_vendor": "auto",
    "fabric_check_backend": "auto",
}
RDMA_FABRICS = ("infiniband", "roce")
TORCH_BUILDS = {"nvidia": "cuda", "amd": "rocm"}   # else cpu


def flag(value: Any) -> bool:
    """A yes/no tunable as Ansible's bool filter reads it (INI inventories give strings)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1", "y")
    return bool(value)


def _setting(hvars: Mapping[str, Any], name: str) -> Any:
    value = hvars.get(name)
    return ROLE_SETTINGS[name] if value is None or value == "" else value


def _auto(hvars: Mapping[str, Any], name: str, auto: bool) -> bool:
    value = _setting(hvars, name)
    return auto if str(value) == "auto" else flag(value)


def imex_domain(hvars: Mapping[str, Any], node_domain: Optional[str], acc_mnnvl: bool, fabric: str) -> Optional[str]:
    """The NVLink domain whose IMEX service the node runs, or None: a tray that can join one and sits in
    one (vllm_fabric mnnvl, or an RDMA fabric between racks that name their domain); nvidia_driver_imex
    true or false decides instead of the hardware, nvidia_driver_imex_domain names another group."""
    domain = _setting(hvars, "nvidia_driver_imex_domain") or node_domain or ""
    wanted = _auto(hvars, "nvidia_driver_imex",
                   acc_mnnvl and (fabric == "mnnvl" or (fabric in RDMA_FABRICS and bool(node_domain))))
    return str(domain) if wanted else None


def gpudirect(hvars: Mapping[str, Any], fabric: str) -> str:
    """off on a fabric without RDMA; else the tunable, or DMA-BUF with the open kernel modules, else nvidia-peermem."""
    if fabric not in RDMA_FABRICS:
        return "off"
    mode = str(_setting(hvars, "nvidia_driver_gpudirect_rdma"))
    if mode != "auto":
        return mode
    return "dmabuf" if _setting(hvars, "nvidia_driver_kernel_modules") == "open" else "peermem"


def imex(domain: str, peers_of: Mapping[str, Sequence[str]]) -> Dict[str, Any]:
    """The IMEX domain, its trays' addresses, sorted (None: the domain is no inventory group), and the
    nodes_config.cfg nvidia_driver writes from them, identical on every tray of the domain."""
    peers = sorted(set(peers_of[domain])) if domain in peers_of else None
    nodes_config = None if peers is None else (
        "# Managed by inferops.vllm: the trays of NVLink domain %s, sorted,\n"
        "# identical on every node of the domain.\n" % domain + "".join(ip + "\n" for ip in peers))
    return {"domain": domain, "peers": peers, "nodes_config": nodes_config}


def build(*, vendor: str, model: str, gpus: int, nvswitch_board: bool, mnnvl: bool, fabric: str,
          hcas: Sequence[str], node_domain: Optional[str], peers_of: Mapping[str, Sequence[str]],
          probe_ranks: int, hvars: Mapping[str, Any]) -> Dict[str, Any]:
    """The host_stack section of one node's launch. peers_of: {NVLink domain group: its trays' addresses}
    for the inventory groups that exist (a domain that is no group has no peers: nvidia_driver refuses it)."""
    nvidia = vendor == "nvidia"
    toolkit = str(_setting(hvars, "container_runtime_gpu_vendor"))
    domain = imex_domain(hvars, node_domain, mnnvl, fabric) if nvidia else None
    backend = str(_setting(hvars, "fabric_check_backend"))
    return {
        "vendor": vendor,
        "gpu_model": model,
        "gpus": gpus,
        "hcas": list(hcas),
        "fabric": fabric,
        # the container toolkit: the GPUs' vendor, none on the CPU
        "toolkit": (vendor if vendor in TORCH_BUILDS else "none") if toolkit == "auto" else toolkit,
        "fabric_manager": _auto(hvars, "nvidia_driver_fabric_manager", nvswitch_board) if nvidia else False,
        "imex": None if domain is None else imex(domain, peers_of),
        "gpudirect": gpudirect(hvars, fabric) if nvidia else "off",
        # torch.distributed's backend for the fabric check: NCCL (RCCL on ROCm) on GPUs, gloo on the CPU
        "collective": backend if backend != "auto" else ("nccl" if vendor in TORCH_BUILDS else "gloo"),
        "torch_build": TORCH_BUILDS.get(vendor, "cpu"),
        "probe_ranks": probe_ranks,
    }

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a pinned vLLM accepts where its argument parser does not check, and
what it no longer accepts: flags, KV-cache dtypes, parser names, env vars.

The per-version data files are generated from the real vLLM
(tests/tools/extract_vllm_surface.py) and checked against it in CI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import vllm_surface_0_32_0

SURFACES = {"0.32.0": vllm_surface_0_32_0.SURFACE}

# Flags that recipes and older docs still use, with the fix for each.
REMOVED_FLAGS = {
    "--disable-log-requests": "vLLM no longer has it (request logging is off by default); "
                              "drop it, or set enable-log-requests: true to log requests",
    "--calculate-kv-scales": "vLLM no longer computes KV scales at run time; drop it "
                             "(FP8 KV scales come from the checkpoint)",
    "--enable-mamba-fine-grained-prefix-cache": "removed in vLLM 0.31; drop it",
}
# Environment variables vLLM dropped or renamed; setting them does nothing.
REMOVED_ENV = {
    "VLLM_ALL2ALL_BACKEND": "the env var is gone: set vllm_all2all_backend (the --all2all-backend flag)",
    "VLLM_USE_FLASHINFER_MOE_FP4": "the env var is gone: choose the FP4 MoE kernel with vllm_moe_backend "
                                   "(--moe-backend)",
    "VLLM_ROCM_USE_AITER_MOE_SITUV2_A8W4": "renamed in vLLM 0.31: set VLLM_ROCM_USE_AITER_MOE_SITUV2=a8w4",
}
# Families of variables that belong to libraries below vLLM and are passed through.
LIBRARY_ENV_PREFIXES = ("NCCL_", "GLOO_", "NVSHMEM_", "UCX_", "RCCL_", "HSA_", "HIP_", "ROCM_", "AITER_",
                        "TORCH_", "PYTORCH_", "OMP_", "HF_", "TRANSFORMERS_", "SAFETENSORS_", "CUDA_",
                        "NVIDIA_", "TRITON_", "EP_", "DO_NOT_TRACK", "TOKENIZERS_", "MOONCAKE_", "LD_")


@dataclass(frozen=True)
class Surface:
    version: str
    options: Dict[str, dict]
    kv_cache_dtypes: Tuple[str, ...]
    tool_parsers: Tuple[str, ...]
    reasoning_parsers: Tuple[str, ...]
    env_vars: Tuple[str, ...]

    def option(self, flag: str) -> Optional[dict]:
        return self.options.get(flag)

    def negation(self, flag: str) -> Optional[str]:
        """--no-X for a boolean --X, when vLLM defines one."""
        neg = "--no-" + flag[2:]
        return neg if neg in self.options else None

    def unknown_env(self, name: str) -> bool:
        return name.startswith("VLLM_") and name not in self.env_vars


def supported_versions() -> List[str]:
    return sorted(SURFACES)


def load(version: str) -> Optional[Surface]:
    data = SURFACES.get(str(version))
    if data is None:
        return None
    return Surface(version=data["version"], options=data["options"],
                   kv_cache_dtypes=tuple(data["kv_cache_dtypes"]), tool_parsers=tuple(data["tool_parsers"]),
                   reasoning_parsers=tuple(data["reasoning_parsers"]), env_vars=tuple(data["env_vars"]))

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kimi K3 (2.8T MXFP4 MoE, 1M context): vllm-project/recipes models/moonshotai/Kimi-K3.yaml."""

from __future__ import annotations

# Recipe: "Recommend deep_gemm_mega_moe for DEP deployments with cross-node NVLink e.g. GB200 and
# GB300 ... not compatible with cross-node RDMA": proposed only when every rank shares one NVLink
# domain (traffic nvlink), never for racks joined by InfiniBand/RoCE.
_MNNVL_DEP = {"args": {"moe-backend": "deep_gemm_mega_moe"}, "traffic": ["nvlink"]}

PROFILE = {
    "description": "Kimi K3 recipe defaults per hardware family",
    "source": "vllm-project/recipes@8959cf64 models/moonshotai/Kimi-K3.yaml (2026-08-15)",
    "model": "moonshotai/Kimi-K3",
    "served_model_name": "kimi-k3",
    "moe": True,
    "weights": "mxfp4",
    "cuda": 13,   # the guide: vllm/vllm-openai:kimi-k3 is a "CUDA 13 (cu130) build only"
    "args": {
        "trust-remote-code": True,
        "gpu-memory-utilization": 0.95,
        "enable-auto-tool-choice": True,
        "tool-call-parser": "kimi_k3",
        "reasoning-parser": "kimi_k3",
        "mm-encoder-tp-mode": "data",
    },
    "family": {
        "blackwell": {
            "args": {
                "load-format": "fastsafetensors",
                "enable-flashinfer-autotune": False,
                "max-model-len": 1048576,
                "kv-cache-dtype": "fp8",
                # FP8 KV needs the quantized prefill query path (recipe note)
                "attention-config": {"use_prefill_query_quantization": True, "mla_prefill_backend": "flashinfer"},
                "enable-prefix-caching": True,
            },
            "env": {
                "VLLM_ALLREDUCE_USE_FLASHINFER": "1",
                "VLLM_ENGINE_READY_TIMEOUT_S": "3600",
                "VLLM_USE_V2_MODEL_RUNNER": "1",
                "VLLM_USE_RUST_FRONTEND": "1",
            },
        },
        "hopper": {
            "args": {
                "gpu-memory-utilization": 0.97,
                "max-num-seqs": 5,
                "max-model-len": 32768,
                "moe-backend": "marlin",
                "disable-custom-all-reduce": True,
                "enable-flashinfer-autotune": False,
                "max-num-batched-tokens": 4096,
                "attention-backend": "FLASHMLA",
            },
            "env": {
                "VLLM_ENGINE_READY_TIMEOUT_S": "3600",
                "VLLM_USE_V2_MODEL_RUNNER": "1",
                "VLLM_USE_RUST_FRONTEND": "1",
                "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
            },
        },
        "cdna4": {
            "args": {
                "load-format": "auto",
                "max-num-seqs": 128,
                "max-num-batched-tokens": 4096,
                "compilation-config": {"cudagraph_mode": "FULL_DECODE_ONLY", "custom_ops": ["+fused_rms_norm_gated"]},
            },
            "env": {
                "VLLM_ROCM_USE_AITER": "1",
                "SAFETENSORS_FAST_GPU": "1",
                # the recipe's VLLM_ROCM_USE_AITER_MOE_SITUV2_A8W4=1 is unknown to vLLM >= 0.31
                "VLLM_ROCM_USE_AITER_MOE_SITUV2": "a8w4",
                "AITER_BF16_FP8_MOE_BOUND": "0",
                # required on ROCm: the build turns breakable CUDA graphs on
                "VLLM_USE_BREAKABLE_CUDAGRAPH": "0",
            },
        },
    },
    "strategy": {
        # DeepGEMM MegaMoE inside one NVL72 domain (recipe: GB200/GB300 only)
        "dep": {"gpu": {"GB200": _MNNVL_DEP, "GB300": _MNNVL_DEP}},
        # "Plain TP, NOT TEP"
        "tp_pp": {
            "args": {"gpu-memory-utilization": 0.90, "max-num-batched-tokens": 8192},
            "env": {"NCCL_CUMEM_ENABLE": "1", "VLLM_ENGINE_READY_TIMEOUT_S": "3600",
                    "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "1800"},
        },
    },
    "recipe_supports": {
        "dep": ["GB300", "GB200", "B300", "B200"],
        "tp_dp": ["H200", "GB200", "GB300"],
    },
}

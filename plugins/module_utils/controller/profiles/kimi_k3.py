# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kimi K3 (2.8T MXFP4 MoE, 1M context): vllm-project/recipes models/moonshotai/Kimi-K3.yaml."""

from __future__ import annotations

# Recipe: "Recommend deep_gemm_mega_moe for DEP deployments with cross-node NVLink e.g. GB200 and
# GB300 ... not compatible with cross-node RDMA": proposed only when every rank shares one NVLink
# domain (traffic nvlink), never for racks joined by InfiniBand/RoCE.
_MNNVL_DEP = {"args": {"moe-backend": "deep_gemm_mega_moe"}, "traffic": ["nvlink"]}

# Where the recipe offers each strategy. Its site's rule (src/lib/command-synthesis.js,
# isStrategySupportedOnHardware): a strategy in compatible_strategies is offered on every GPU unless
# strategy_hardware says "unsupported"; one left out is offered only where strategy_hardware says
# "supported". The recipe verifies h200, b200, b300, gb200 and gb300 (meta.hardware) and mi355x, whose
# notes name MI350X with it ("MI355X / MI350X, CDNA4 gfx950"). strategy_min_gpus: single_node_tp from
# 8 GPUs (no 4-GPU GB tray alone), H100 from 32 GPUs ("can't hold the ~1.68 TB MXFP4 checkpoint in fewer
# than 4 nodes"). The capacity check (capacity_fit) then keeps only the layouts whose replica holds the
# weights: the recipe grants tp_dp to H200/GB200/GB300, but one such node (8 x 141 GiB, 4 x 186 or
# 4 x 279 GiB) holds less than the checkpoint, so the plan names tp_pp there instead.
_EIGHT_GPU = ["B300", "B200", "H200", "MI355X", "MI350X"]
_RECIPE_GPUS = ["GB300", "GB200"] + _EIGHT_GPU

PROFILE = {
    "description": "Kimi K3 recipe defaults per hardware family",
    "source": "vllm-project/recipes@8959cf64 models/moonshotai/Kimi-K3.yaml (2026-08-15)",
    "model": "moonshotai/Kimi-K3",
    "served_model_name": "kimi-k3",
    "moe": True,
    "weights": "mxfp4",
    # "the checkpoint is ~1.5 TB" (ai-dynamo recipes/kimi-k3/README.md: MXFP4 routed experts, BF16 attention,
    # shared experts, lm_head and vision tower); the vLLM recipe estimates 2.8T x 0.5 byte = 1.4 TB (x 1.2
    # headroom: vram_minimum_gb 1680). The lower figure keeps a refusal certain.
    "weight_bytes": 1_500_000_000_000,
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
        "single": _EIGHT_GPU,                                      # single_node_tp
        "dep": [m for m in _RECIPE_GPUS if m != "H200"],           # multi_node_dep: h100, h200 unsupported
        "tp_dp": ["H200", "GB200", "GB300"],                       # multi_node_tp_dp: granted on these only
        "tp_pp": _RECIPE_GPUS + ["H100"],                          # multi_node_tp_pp
        "tp": _RECIPE_GPUS + ["H100"],                             # multi_node_tp
        "dp": [],                                                  # no recipe layout: dp without experts
    },
}

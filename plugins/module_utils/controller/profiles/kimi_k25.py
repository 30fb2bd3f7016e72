# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kimi K2.5 (INT4 MoE with MoonViT): vllm-project/recipes moonshotai/Kimi-K2.5.md and .yaml."""

from __future__ import annotations

PROFILE = {
    "description": "Kimi K2.5 recipe defaults",
    "source": "vllm-project/recipes@8959cf64 moonshotai/Kimi-K2.5.md, models/moonshotai/Kimi-K2.5.yaml",
    "model": "moonshotai/Kimi-K2.5",
    "served_model_name": "kimi-k2.5",
    "moe": True,
    "weights": "int4",
    "weight_bytes": 595_000_000_000,   # the recipe: "Packed INT4 via compressed-tensors (~595 GB on disk)"
    "cuda": 13,   # the recipe's NVIDIA images: vllm/vllm-openai:v0.17.0-cu130 (and -aarch64-cu130)
    "args": {
        "trust-remote-code": True,
        "mm-encoder-tp-mode": "data",
        "enable-auto-tool-choice": True,
        "tool-call-parser": "kimi_k2",
        "reasoning-parser": "kimi_k2",
    },
    "family": {
        "cdna4": {
            # FlyDSL INT4 MoE: no expert parallel (enforced by the rules table)
            "args": {"moe-backend": "flydsl", "compilation-config": {"pass_config": {"fuse_allreduce_rms": False}}},
            "env": {"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION": "INT4"},
        },
    },
}

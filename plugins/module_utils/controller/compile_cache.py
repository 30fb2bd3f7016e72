# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The key of the site compile cache: which nodes may share what one node compiled.

A node's vLLM cache root holds what its start compiled, autotuned and inspected for one image, one GPU model and one
launch, and (torch.compile's rank_<i>_<dp> directories) for the ranks that node runs. So the key is the image digest,
the GPU model and GPUs per node, the node's rank in its cluster, and every launch flag and environment variable
except those that only place the node on the network. Two clusters of the same shape share a key; another image,
GPU, rank or flag gets its own. The caches inside keep their own finer keys, so a match here is never trusted
blindly: vLLM and Inductor recompute what does not fit. No Ansible imports.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Mapping, Optional

# Flags that name where a cluster finds its head, or what it calls the model, not what it compiles (the flags that
# may differ between nodes, launch.NODE_FLAGS, are left out by the caller: the rank stands for them).
ADDRESS_FLAGS = frozenset({"master-addr", "master-port", "data-parallel-address", "data-parallel-rpc-port",
                           "served-model-name"})
SCHEMA = 1


def inputs(image: str, gpu_model: str, gpus_per_node: int, rank: int, args: Mapping[str, Any],
           env: Mapping[str, Any]) -> Dict[str, Any]:
    """What the key is made of, as plain data (stored with the cache). args and env: the node's, without what may
    differ between nodes (its addresses, NICs, CPU binding)."""
    image = str(image or "")   # unset: refused by the plan beside this, never a key that matters
    digest = image.rpartition("@")[2] if "@" in image else image
    return {
        "schema": SCHEMA,
        "image_digest": digest,
        "gpu_model": gpu_model,
        "gpus_per_node": gpus_per_node,
        "rank": rank,
        "args": {flag: args[flag] for flag in sorted(args) if flag not in ADDRESS_FLAGS},
        "env": {name: str(env[name]) for name in sorted(env)},
    }


def key(made_of: Mapping[str, Any]) -> str:
    """64 hex digits: the sha256 of the inputs' one JSON form (a valid registry tag)."""
    return hashlib.sha256(json.dumps(made_of, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def site_entry(image: str, gpu_model: str, gpus_per_node: int, rank: int, args: Mapping[str, Any],
               env: Mapping[str, Any]) -> Dict[str, Any]:
    """The launch's compile_cache_site before the plan names the registry: {key, inputs, registry: ''}."""
    made_of = inputs(image, gpu_model, gpus_per_node, rank, args, env)
    return {"key": key(made_of), "inputs": made_of, "registry": ""}


def with_registry(entry: Optional[Dict[str, Any]], registry: str) -> Optional[Dict[str, Any]]:
    """The entry with the site registry's URL, or None where the site has no registry (each node keeps its own)."""
    if not entry or not registry:
        return None
    return dict(entry, registry=registry if registry.startswith(("http://", "https://")) else "http://" + registry)

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Model recipes as data: one module per model, selected by `vllm_profile`.

Each module defines PROFILE, a dict with these keys (all optional but model):
  description, source        where the defaults come from
  model, served_model_name   defaults for vllm_model / vllm_served_model_name
  moe                        the model has experts (expert parallel is possible)
  weights                    checkpoint format (bf16, int4, mxfp4): some backends need bf16
  weight_bytes               the checkpoint's size in bytes, for the plan's capacity check
                             (capacity_fit; vllm_model_weight_gb overrides it, unknown skips the check)
  cuda                       CUDA major of the recipe's NVIDIA images (sets the lowest driver
                             branch, rules.MIN_DRIVER_BRANCH) unless the image tag says cuNNN
  args, env                  flags and environment for every node
  family: {blackwell|hopper|cdna4|cpu: {args, env}}       per hardware family
  strategy: {dep|tp|...: {args, env, gpu: {GB300: {args, env, traffic}}}}
                             traffic (optional): the GPU layer applies only where the experts'
                             tokens travel so (nvlink, rdma, tcp; rules.traffic_kind)
  recipe_supports: {strategy: [GPU models]}   outside it the plan warns and names the strategy to
                             use instead; a strategy it does not name restricts nothing
  vllm_versions: {row: {since: X.Y.Z, until: X.Y.Z}}   a flag or env row that only some vLLM releases
                             have (both bounds included, either may be left out): outside them every
                             layer leaves the row out. A row a release dropped and nobody bounded is
                             refused by the plan (REMOVED_FLAGS' fix), and tests/unit/test_profile_versions.py
                             names it for every known release.
Flag names are spelled without the leading dashes; True is a bare flag,
False its --no- form, None removes a flag set by an earlier layer.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Set, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles import (
    cpu_lab, generic, kimi_k25, kimi_k3)

PROFILES = {
    "kimi_k3": kimi_k3.PROFILE,
    "kimi_k25": kimi_k25.PROFILE,
    "cpu_lab": cpu_lab.PROFILE,
    "generic": generic.PROFILE,
}


def every_layer(profile: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    """Each layer of the profile, for any family, strategy or GPU: the whole profile's, then the families', then
    each strategy's followed by its GPU layers."""
    out = [profile] + list(profile.get("family", {}).values())
    for strategy in profile.get("strategy", {}).values():
        out += [strategy] + list(strategy.get("gpu", {}).values())
    return out


def proposed_flags(profile: Mapping[str, Any]) -> Set[str]:
    """Every flag some layer of the profile sets (for any family, strategy or GPU)."""
    return {str(flag).lstrip("-") for layer in every_layer(profile) for flag in layer.get("args", {})}


def _release(version: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def applies(profile: Mapping[str, Any], row: str, version: Optional[str]) -> bool:
    """Whether the profile proposes `row` (a flag without dashes, or an env name) to vLLM `version` (None: any)."""
    bounds = profile.get("vllm_versions", {}).get(row)
    if not bounds or version is None:
        return True
    here = _release(version)
    return (_release(bounds.get("since", "0")) <= here
            and ("until" not in bounds or here <= _release(bounds["until"])))


def layers(profile: Mapping[str, Any], name: str, family: str, strategy: str, gpu_model: str,
           traffic: Optional[str] = None, any_traffic: bool = False, version: Optional[str] = None
           ) -> List[Tuple[Mapping[str, Any], Mapping[str, Any], str]]:
    """The profile's layers in the order the launch applies them, later ones winning: (args, env, source) for the
    whole profile, the hardware family, the strategy, and the strategy on this GPU model. A GPU layer that names
    other traffic than the cluster's (no mega MoE across racks) is left out, unless any_traffic (a layout weighed
    without its fabric). A row bounded to other vLLM releases than `version` (vllm_versions) is left out."""
    fam = profile.get("family", {}).get(family, {})
    strat = profile.get("strategy", {}).get(strategy, {})
    gpu = strat.get("gpu", {}).get(gpu_model, {})
    if not any_traffic and "traffic" in gpu and traffic not in gpu["traffic"]:
        gpu = {}

    def kept(rows: Mapping[str, Any]) -> Mapping[str, Any]:
        return {row: value for row, value in rows.items() if applies(profile, row, version)}
    return [
        (kept(layer.get("args", {})), kept(layer.get("env", {})), source)
        for layer, source in ((profile, "profile %s" % name), (fam, "profile %s (%s)" % (name, family)),
                              (strat, "profile %s (strategy %s)" % (name, strategy)),
                              (gpu, "profile %s (%s %s)" % (name, strategy, gpu_model)))
    ]

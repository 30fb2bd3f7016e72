# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a pinned vLLM accepts where its argument parser does not check, and
what it no longer accepts: flags, KV-cache dtypes, parser names, env vars.

The per-version data files are generated from the real vLLM
(tests/tools/extract_vllm_surface.py) and checked against it in CI.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    vllm_surface_0_32_0, vllm_surface_0_33_0)

# One generated file per vLLM release (CONTRIBUTING.md, "A new vLLM release").
SURFACES = {
    "0.32.0": vllm_surface_0_32_0.SURFACE,
    "0.33.0": vllm_surface_0_33_0.SURFACE,
}

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


_INVERSE = (("--enable-", "--disable-"), ("--disable-", "--enable-"))


def negation_spellings(flag: str) -> List[str]:
    """The spellings vLLM's parsers have used for 'boolean --X off': --no-X, and 0.33's inverse prefix."""
    return ["--no-" + flag[2:]] + [inverse + flag[len(prefix):] for prefix, inverse in _INVERSE
                                   if flag.startswith(prefix)]


def flag_name(flag: Any) -> str:
    """A flag as vLLM reads it: without its dashes, '_' read as '-' (vLLM's FlexibleArgumentParser)."""
    return str(flag).lstrip("-").replace("_", "-")


# vLLM's human_readable_int: 1000, 1k (10^3), 1K (2^10), 25.6k
_HUMAN_INT = re.compile(r"\A(-?\d+|\d+(\.\d+)?[kKmMgGtT])\Z")
_INT = re.compile(r"\A-?\d+\Z")
_FLOAT = re.compile(r"\A-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\Z")
_SHOWN = {"int": "a whole number", "float": "a number", "human_int": "a whole number (or 1k, 2M, 1G)",
          "human_int_or_auto": "a whole number (or 1k, 2M, 1G), -1 or auto"}
_BOUND_WORDS = {"gt": "above", "ge": "at least", "lt": "below", "le": "at most"}


def _number(kind: str, text: str) -> Optional[float]:
    """The value as vLLM's argparse type reads it, or None where that type refuses it."""
    if kind == "human_int_or_auto" and (text == "-1" or text.lower() == "auto"):
        return None if text.lower() == "auto" else -1.0
    if kind in ("human_int", "human_int_or_auto"):
        if not _HUMAN_INT.match(text):
            return None
        return float(text) if _INT.match(text) else float(text[:-1]) * (
            {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}.get(text[-1]) or 2.0 ** (10 * "KMGT".index(text[-1]) + 10))
    if kind == "int":
        return float(text) if _INT.match(text) else None
    return float(text) if _FLOAT.match(text) else None


def value_problem(option: Dict[str, Any], value: Any) -> Optional[str]:
    """Why vLLM would refuse `value` for `option` (its argparse type, or the bounds its config classes check
    when the engine starts), else None. A list is judged element by element; booleans are not numbers."""
    kind = option.get("type")
    if kind is None or value is None:
        return None
    for item in (value if isinstance(value, list) else [value]):
        text = str(item).strip()
        number = None if isinstance(item, bool) else _number(kind, text)
        if number is None:
            if kind == "human_int_or_auto" and text.lower() == "auto":
                continue
            return "%r is not %s" % (item, _SHOWN[kind])
        if not math.isfinite(number) or abs(number) >= 2.0 ** 63:
            return "%r is out of range (vLLM keeps it in a 64-bit number)" % (item,)
        for key, bound in sorted((option.get("bounds") or {}).items()):
            if number == -1 and kind == "human_int_or_auto":
                break
            fails = {"gt": number <= bound, "ge": number < bound, "lt": number >= bound, "le": number > bound}[key]
            if fails:
                return "%r is not %s %s" % (item, _BOUND_WORDS[key], bound)
    return None


@dataclass(frozen=True)
class Surface:
    version: str
    options: Dict[str, dict]
    kv_cache_dtypes: Tuple[str, ...]
    tool_parsers: Tuple[str, ...]
    reasoning_parsers: Tuple[str, ...]
    env_vars: Tuple[str, ...]
    kv_connectors: Tuple[str, ...] = ()    # what --kv-transfer-config's kv_connector may name
    preload_options: Tuple[str, ...] = ()  # what `vllm preload` (the weight-cache daemon) parses

    def option(self, flag: str) -> Optional[dict]:
        return self.options.get(flag)

    def negation(self, flag: str) -> Optional[str]:
        """How this vLLM turns a boolean --X off, when it can: its visible spelling first (--no-X; from 0.33
        --disable-X for --enable-X), else one it still accepts hidden (0.33's --no-enable-X)."""
        dest = (self.options.get(flag) or {}).get("dest")
        found = [neg for neg in negation_spellings(flag)
                 if neg in self.options and self.options[neg].get("dest") == dest]
        found.sort(key=lambda neg: bool(self.options[neg].get("hidden")))
        return found[0] if found else None

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
                   reasoning_parsers=tuple(data["reasoning_parsers"]), env_vars=tuple(data["env_vars"]),
                   kv_connectors=tuple(data.get("kv_connectors") or ()),
                   preload_options=tuple(data.get("preload_options") or ()))

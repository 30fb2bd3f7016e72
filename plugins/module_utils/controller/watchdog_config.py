# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watchdog's config on a node (the vllm_watchdog role writes it as JSON): what the node script
(module_utils/scripts/watchdog.py) reads, from the node's launch and the role's options. No secret: it names the
env file that holds the API key."""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping

PREFIX = "vllm_watchdog_"
# the script's policy numbers, as the script takes them
NUMBERS: Dict[str, Callable[[Any], Any]] = {
    "probe_timeout": int, "max_tokens": int, "failures_before_restart": int, "grace": int, "grace_max": int,
    "backoff_factor": float, "max_restarts": int, "follower_delay": int, "stale_margin": int}
TEXTS = ("container_name", "docker", "env_file", "status_file", "prom_file", "image_record", "model_record")


class WatchdogConfigError(ValueError):
    """A role option the config cannot hold, with the variable, its value and the fix."""


def _number(options: Mapping[str, Any], name: str) -> Any:
    value, kind = options.get(PREFIX + name), NUMBERS[name]
    try:
        if isinstance(value, bool):
            raise ValueError(value)
        return kind(value)
    except (TypeError, ValueError):
        raise WatchdogConfigError("%s%s=%r is not a number: set it to a %s" % (
            PREFIX, name, value, "whole number" if kind is int else "number")) from None


def config(launch: Mapping[str, Any], options: Mapping[str, Any]) -> Dict[str, Any]:
    """The config of the node whose launch this is. data_parallel: the ranks behind the endpoint that the probe
    reaches one by one (with external or hybrid balancing each node's API has its own ranks: one probe)."""
    missing = [PREFIX + name for name in TEXTS if PREFIX + name not in options]
    if missing:
        raise WatchdogConfigError("the watchdog's config needs %s: pass the role's options (lookup role_options)"
                                  % ", ".join(missing))
    cluster = launch["cluster"]
    out: Dict[str, Any] = {
        "cluster": cluster["name"], "rank": launch["rank"], "role": launch["role"], "endpoint": cluster["endpoint"],
        "model": launch["args"]["served-model-name"], "data_parallel": launch["host_stack"]["probe_ranks"],
        "container": options[PREFIX + "container_name"], "docker": options[PREFIX + "docker"],
        "env_file": options[PREFIX + "env_file"],
        "api_key_env": "VLLM_API_KEY" if "VLLM_API_KEY" in (launch.get("secret_env") or {}) else None,
        "status_file": options[PREFIX + "status_file"], "prom_file": options[PREFIX + "prom_file"],
        "records": {"image": options[PREFIX + "image_record"], "model": options[PREFIX + "model_record"]},
    }
    cache = launch.get("weight_cache")
    if cache:   # vllm_weight_cache: the daemon on this node, whose /health is written as a series
        out["weight_cache_url"] = cache["url"]
    out.update({name: _number(options, name) for name in NUMBERS})
    if cluster.get("pd") is not None:
        out["pd"] = cluster["pd"]
    return out

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""vLLM's weight-cache daemons (`vllm preload`, vLLM 0.32) as the plan decides them: one daemon container per node
loads that node's shards once and hands them to vLLM over CUDA IPC, so an engine restart maps the weights instead of
reading them again (docs/startup.md). No Ansible imports.

One source for both sides: the daemon's argv is the engine's own arguments, those `vllm preload` accepts, so the
fingerprint vLLM compares (model, revision, dtype, quantization, the ranks) is built from the same values on both.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.controller.plain_input import overlap

# the daemons' sockets inside both containers: short, since an AF_UNIX path has at most 107 bytes and vLLM names
# each socket vllm_weight_cache_<32 hex>[_draft].sock
SOCKETS = "/run/vllm-weight-cache"
# the engine's loader, and its settings (vLLM's IpcModelLoader): where a daemon cannot answer or holds other
# weights, the engine loads from disk as before
ENGINE_ARGS: Dict[str, Any] = {"load-format": "ipc_cache",
                               "model-loader-extra-config": {"socket_dir": SOCKETS, "fallback": True}}
# engine arguments the daemon does not take although `vllm preload` parses them: its own loader is the disk, and a
# P/D side's KV connector (its side channel ports) belongs to the engine
NOT_FOR_DAEMON = frozenset(ENGINE_ARGS) | {"model", "kv-transfer-config"}
HEALTH_HOST = "127.0.0.1"     # vLLM's default is 0.0.0.0: the role and the watchdog ask on the node itself
# what the plan needs of the GPUs: vLLM's check_ipc_platform_support allows CUDA and ROCm only
IPC_VENDORS = ("nvidia", "amd")


def refusal(settings: Mapping[str, Any], vendor: str, args: Mapping[str, Any], sources: Mapping[str, str],
            multi_node_dp_master: Optional[str]) -> Optional[tuple]:
    """(variable, value, problem, fix) for the first reason the cluster cannot run the daemons, else None.
    `args` are the engine's layered flags and `sources` who set each one; `multi_node_dp_master` is the
    data-parallel address of a multi-node data-parallel cluster (None otherwise)."""
    if vendor not in IPC_VENDORS:
        return ("vllm_weight_cache", True,
                "vLLM's weight cache hands GPU memory to the engine over CUDA IPC, which only CUDA and ROCm have, "
                "and this cluster's GPUs are %s" % vendor, "remove vllm_weight_cache; on this cluster vLLM loads "
                "the weights from disk at each start")
    sockets = settings.get("vllm_weight_cache_dir")
    if not sockets:
        return ("vllm_weight_cache_dir", sockets,
                "the daemons need a host directory for their sockets", "set it, e.g. /run/inferops-vllm/weight-cache")
    for other in ("vllm_model_cache_dir", "vllm_compile_cache_dir"):
        if settings.get(other) and overlap(str(sockets), str(settings[other])):
            return ("vllm_weight_cache_dir", sockets, "overlaps %s %s: both are mounted into vLLM's container, the "
                    "sockets' directory read-write and set to 0700" % (other, settings[other]),
                    "give the sockets a directory of their own, e.g. /run/inferops-vllm/weight-cache")
    for flag in sorted(ENGINE_ARGS):
        if flag in args:
            return ("%s[%r]" % (sources.get(flag, "vllm_args"), flag), args[flag],
                    "with vllm_weight_cache the plan sets the engine's loader (%s)" % ENGINE_ARGS["load-format"],
                    "remove it, or set vllm_weight_cache: false")
    if args.get("enable-sleep-mode"):
        return ("%s[%r]" % (sources.get("enable-sleep-mode", "vllm_args"), "enable-sleep-mode"), True,
                "vLLM maps the daemon's GPU memory into the engine, and sleep mode would offload it",
                "remove enable-sleep-mode, or set vllm_weight_cache: false")
    if multi_node_dp_master in ("127.0.0.1", "localhost"):
        return ("vllm_control_address", multi_node_dp_master,
                "the daemons of a data-parallel cluster across nodes meet at the head's data-parallel address, and "
                "vLLM refuses a loopback one", "set the head's vllm_control_address to its control-network IP")
    return None


def daemon_args(args: Mapping[str, Any], preload_options: Any) -> Dict[str, Any]:
    """The engine's arguments that the daemon takes: those `vllm preload` parses, in the engine's order."""
    return {flag: value for flag, value in args.items()
            if flag not in NOT_FOR_DAEMON and "--" + flag in preload_options}


def entry(settings: Mapping[str, Any], engine_argv: List[str], health: int) -> Dict[str, Any]:
    """The launch's `weight_cache`: the daemon's argv (after `vllm preload`: the engine's part, then its own flags:
    the socket directory, its rendezvous ports, the same on every node, a draft model's daemons on the next one, and
    its /health on the node only), the sockets' host directory and where both containers mount it, its ports and
    its base URL."""
    master = int(settings["vllm_weight_cache_master_port"])
    health = int(health)
    argv = engine_argv + ["--weight-cache-socket-dir", SOCKETS,
                          "--weight-cache-master-port", str(master),
                          "--weight-cache-draft-master-port", str(master + 1),
                          "--weight-cache-health-port", str(health),
                          "--weight-cache-health-host", HEALTH_HOST]
    return {"argv": argv, "dir": settings["vllm_weight_cache_dir"], "mount": SOCKETS,
            "master_port": master, "draft_master_port": master + 1, "health_port": health,
            "url": "http://%s:%d" % (HEALTH_HOST, health)}

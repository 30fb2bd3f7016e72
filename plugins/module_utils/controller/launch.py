# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile a Cluster into every node's vLLM launch: the `vllm serve` flags
(as a config file and as explicit argv), the environment and the container
options. Roles only render what this returns. No Ansible imports.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import hardware
from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    compile_cache, disagg, capacity_fit, host_stack, model_source, plain_input, rules, site_policy, vllm_surface,
    weight_cache)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.url_host import base_url
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import (
    OWNED_FLAGS, SECRET_ENV, Cluster, ClusterError, Node, raise_all, shape)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles import PROFILES, proposed_flags
from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles import layers as profile_layers
from ansible_collections.inferops.vllm.plugins.module_utils.controller.vllm_surface import (
    REMOVED_ENV, REMOVED_FLAGS, flag_name, negation_spellings)

# Compiler-owned flags that a profile proposes (moe-backend, kv-cache-dtype, max-model-len): null for
# one of them in vllm_site_args or vllm_args drops the profile's value, as null does for any flag.
DROPPABLE_OWNED = frozenset(f for p in PROFILES.values() for f in proposed_flags(p) if f in OWNED_FLAGS)
CONFIG_PATH = "/etc/inferops-vllm/vllm.yaml"     # inside the container
MODEL_CACHE = "/root/.cache/huggingface"          # inside the container
# vLLM's cache root inside the container (its default, ~/.cache/vllm, said explicitly), mounted from the node's
# vllm_compile_cache_dir, with the compilers' own caches under it: torch.compile, Inductor and Triton artifacts then
# outlive the container, so a restart, a recreate or a healed follower reuses what the last start compiled.
COMPILE_CACHE = "/root/.cache/vllm"
COMPILE_CACHE_ENV = {"VLLM_CACHE_ROOT": COMPILE_CACHE, "TORCHINDUCTOR_CACHE_DIR": COMPILE_CACHE + "/inductor",
                     "TRITON_CACHE_DIR": COMPILE_CACHE + "/triton"}
# Seconds docker gives a follower between SIGTERM and SIGKILL (docker's default is 10). A follower serves no API and
# holds no state to flush, and once its head is gone its workers sit in a collective that never returns: vLLM's
# executor waits VLLM_WORKER_SHUTDOWN_TIMEOUT_SECONDS (5) for them, then 4 s more after SIGTERM, so every group stop
# waited docker's full 10 s for the follower (measured on the lab's TP2 group: head 0.6 s, follower killed at 10 s).
FOLLOWER_STOP_TIMEOUT = 3
# Flags that may differ between nodes; everything else shapes the engine and must match.
NODE_FLAGS = {"host", "port", "headless", "node-rank", "data-parallel-start-rank", "api-server-count"}
# Environment that is local to a node (its own IP, NICs, CPU pinning).
NODE_ENV = {"VLLM_HOST_IP", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_IB_HCA", "NVSHMEM_HCA_LIST",
            "UCX_NET_DEVICES", "VLLM_CPU_OMP_THREADS_BIND", "VLLM_NIXL_SIDE_CHANNEL_HOST"}


class Layers:
    """Ordered flag -> (value, source) with later layers winning; None deletes."""

    def __init__(self, flags: bool = True) -> None:
        self.values: Dict[str, Tuple[Any, str]] = {}
        self.flags = flags   # flag names are read as vLLM reads them; env names are kept as they are

    def apply(self, args: Optional[Mapping[str, Any]], source: str) -> None:
        for flag, value in (args or {}).items():
            flag = flag_name(flag) if self.flags else str(flag)
            if value is None:
                self.values.pop(flag, None)
            else:
                self.values.pop(flag, None)   # keep insertion order = order of the last setter
                self.values[flag] = (value, source)

    def get(self, flag: str) -> Any:
        return self.values.get(flag, (None, None))[0]

    def source(self, flag: str) -> Optional[str]:
        return self.values.get(flag, (None, None))[1]


def _profile_layers(cluster: Cluster) -> List[Tuple[Mapping[str, Any], Mapping[str, Any], str]]:
    # the GPU layer is proposed only where the experts' tokens travel that way (no mega MoE across racks)
    return profile_layers(cluster.profile, cluster.profile_name, cluster.accelerator.family, cluster.layout.strategy,
                          cluster.accelerator.model, cluster.traffic, version=cluster.surface.version)


def _refuse_owned(args: Mapping[str, Any], variable: str, where: str) -> None:
    for flag in args:
        value = args[flag]
        flag = flag_name(flag)
        if flag in OWNED_FLAGS and not (value is None and flag in DROPPABLE_OWNED):
            owner = OWNED_FLAGS[flag]
            fix = ("set %s instead: each setting has one place" % owner if owner
                   else "remove it; the compiler writes the config file itself")
            if flag in DROPPABLE_OWNED:
                fix += " (null here drops the profile's value)"
            if flag == "api-key":
                value, fix = "<hidden>", "remove it: secrets never go on argv; put the key in vllm_api_key (ansible-vault)"
            raise ClusterError("%s[%r]" % (variable, flag), value, where,
                               "this flag is set by the launch compiler", fix)


def _engine_layers(cluster: Cluster, node: Node) -> Tuple[Layers, Layers]:
    s, where = cluster.settings, "cluster %s" % cluster.name
    args, env = Layers(), Layers(flags=False)
    if s["vllm_compile_cache_dir"]:
        env.apply(COMPILE_CACHE_ENV, "vllm_compile_cache_dir")   # first: a profile or the inventory may move them
    for a, e, source in _profile_layers(cluster):
        args.apply(a, source)
        env.apply(e, source)
    if cluster.model is not None and cluster.model.source == "local":
        args.apply(model_source.LOCAL_ARGS, "vllm_model_source local")
    _refuse_owned(s["vllm_site_args"], "vllm_site_args", where)
    args.apply(s["vllm_site_args"], "vllm_site_args")
    env.apply(s["vllm_site_env"], "vllm_site_env")
    _refuse_owned(node.args, "vllm_args", "host %s" % node.host)
    args.apply(node.args, "vllm_args")
    env.apply(node.env, "vllm_env")
    for flag in ("all2all-backend", "moe-backend", "kv-cache-dtype", "max-model-len"):
        var = OWNED_FLAGS[flag]
        if s[var] is not None:
            args.apply({flag: s[var]}, var)
    if cluster.layout.expert_parallel and args.get("all2all-backend") is None:
        default = rules.DEFAULT_ALL2ALL.get((cluster.accelerator.vendor, cluster.traffic))
        if default:
            source = "fabric default (%s, %s)" % (cluster.accelerator.vendor, cluster.fabric.name)
            args.apply({"all2all-backend": default}, source)
    if cluster.pd_way is not None:
        _pd_layer(cluster, args, env)
    env.apply(rules.FABRIC_ENV.get(cluster.fabric.name), "fabric %s" % cluster.fabric.name)
    if cluster.mnnvl and cluster.fabric.name != "mnnvl":
        # NVLink inside each rack, RDMA between them (rules.DOMAIN_JOINING_FABRICS)
        env.apply(rules.FABRIC_ENV["mnnvl"], "fabric mnnvl inside each NVLink domain")
    return args, env


def _pd_layer(cluster: Cluster, args: Layers, env: Layers) -> None:
    """A P/D side's KV-transfer config (disagg): the plan's alone, so a profile or the inventory may not set it."""
    s, where = cluster.settings, "cluster %s" % cluster.name
    role, connector = s["vllm_pd_role"], s["vllm_kv_connector"]
    if args.get("kv-transfer-config") is not None:
        raise ClusterError("%s[%r]" % (args.source("kv-transfer-config"), "kv-transfer-config"),
                           args.get("kv-transfer-config"), where, "the plan writes the KV-transfer config of a P/D side",
                           "remove it; vllm_pd_role, vllm_kv_connector and vllm_kv_side_channel_port set it")
    names = disagg.CONNECTORS[connector]
    for name in (names.host_env, names.port_env):
        if env.get(name) is not None:
            raise ClusterError("%s[%r]" % (env.source(name), name), env.get(name), where,
                               "the plan sets the side channel of a P/D side", "remove it; set vllm_kv_side_channel_port")
    args.apply({"kv-transfer-config": disagg.transfer_config(role, connector)}, "vllm_pd_role")


def _check_rules(cluster: Cluster, args: Layers, env: Layers) -> None:
    """The fabric/hardware/backend table plus what vLLM's parser lets through."""
    acc, traffic, layout = cluster.accelerator, cluster.traffic, cluster.layout
    surface = cluster.surface

    def refuse(flag, problem, fix):
        # name the typed variable (vllm_moe_backend) or the mapping and key that set the flag
        source = args.source(flag) or "?"
        variable = source if source in OWNED_FLAGS.values() else "%s[%r]" % (source, flag)
        raise ClusterError(variable, args.get(flag), "cluster %s" % cluster.name, problem, fix)

    a2a, moe = args.get("all2all-backend"), args.get("moe-backend")
    across = traffic in ("rdma", "tcp")
    crossing = ("the %d nodes span NVLink domains %s joined by %s" % (len(cluster.nodes), ", ".join(cluster.domains),
                                                                      cluster.fabric.name) if cluster.spans_domains
                else "the %d nodes talk over %s" % (len(cluster.nodes), cluster.fabric.name))
    if a2a in rules.NVLINK_ONLY_ALL2ALL and across:
        refuse("all2all-backend", "%s needs one NVLink domain but %s (%s)"
               % (a2a, crossing, rules.NVLINK_ONLY_ALL2ALL[a2a]),
               "use %s across RDMA, or fabric mnnvl inside an NVL72 domain"
               % rules.DEFAULT_ALL2ALL.get((acc.vendor, "rdma"), "allgather_reducescatter"))
    if a2a in rules.REMOVED_ALL2ALL:
        refuse("all2all-backend", "vLLM removed %s and silently falls back to allgather_reducescatter" % a2a,
               "choose a current backend (e.g. %s)" % rules.DEFAULT_ALL2ALL.get((acc.vendor, traffic), "deepep_v2"))
    vendor = rules.VENDOR_ALL2ALL.get(a2a)
    if vendor and vendor != acc.vendor:
        refuse("all2all-backend", "%s is a %s backend but the GPUs are %s" % (a2a, vendor, acc.model),
               "use a %s backend (e.g. %s)" % (acc.vendor, rules.DEFAULT_ALL2ALL.get((acc.vendor, "rdma"))))
    if a2a in rules.BF16_ONLY_ALL2ALL and cluster.profile.get("weights", "bf16") != "bf16":
        refuse("all2all-backend", "%s serves unquantized BF16 experts only; %s weights are %s"
               % (a2a, cluster.profile_name, cluster.profile.get("weights")), "use flashinfer_nvlink_one_sided")
    if a2a is not None and not layout.expert_parallel:
        refuse("all2all-backend", "the all2all backend only acts with expert parallel, and strategy %s has none"
               % layout.strategy, "remove it, or use strategy dep")
    if moe in rules.NVLINK_ONLY_MOE and across:
        refuse("moe-backend", "%s is not compatible with cross-node %s: %s (%s)"
               % (moe, cluster.fabric.name, crossing, rules.NVLINK_ONLY_MOE[moe]),
               "remove it (vLLM picks a kernel) or run inside one NVL72 domain with fabric mnnvl")
    if moe in rules.SM100_ONLY_MOE and not acc.sm100:
        refuse("moe-backend", "%s requires SM100 GPUs (%s), not %s"
               % (moe, hardware.models_where(lambda a: a.sm100), acc.model),
               "remove it or choose a kernel for %s" % acc.family)
    if moe in rules.EP_REQUIRED_MOE and not layout.expert_parallel:
        refuse("moe-backend", "%s requires expert parallel, strategy %s has none" % (moe, layout.strategy),
               "use strategy dep, or remove it")
    if moe in rules.NO_EP_MOE and layout.expert_parallel:
        refuse("moe-backend", "%s does not support expert parallel" % moe, "use strategy single/tp, or another kernel")

    for flag, (value, _source) in args.values.items():
        opt = surface.option("--" + flag)
        if opt is None:
            if ("--" + flag) in REMOVED_FLAGS:
                refuse(flag, "vLLM %s has no --%s" % (surface.version, flag), REMOVED_FLAGS["--" + flag])
            refuse(flag, "vLLM %s has no --%s" % (surface.version, flag), "check the spelling against `vllm serve --help`")
        if value is False and surface.negation("--" + flag) is None and opt.get("value") is False:
            continue   # False on a plain store_true flag means: leave it off
        choices = opt.get("choices")
        if choices and not isinstance(value, bool) and str(value) not in choices:
            refuse(flag, "not a value vLLM %s accepts" % surface.version, "use one of %s" % ", ".join(choices))
        wrong = vllm_surface.value_problem(opt, value)
        if wrong:
            refuse(flag, "vLLM %s takes --%s as %s: %s" % (surface.version, flag, opt["type"].replace("_", " "), wrong),
                   "set a value vLLM accepts (`vllm serve --help=%s` describes it)" % flag)
    checks = (("kv-cache-dtype", surface.kv_cache_dtypes), ("reasoning-parser", surface.reasoning_parsers))
    if args.get("tool-parser-plugin") is None:
        checks += (("tool-call-parser", surface.tool_parsers),)
    for flag, known in checks:
        if args.get(flag) is not None and str(args.get(flag)) not in known:
            refuse(flag, "vLLM %s does not register %r" % (surface.version, args.get(flag)),
                   "use one of %s" % ", ".join(known))
    if args.get("enable-auto-tool-choice") and not args.get("tool-call-parser"):
        refuse("enable-auto-tool-choice", "auto tool choice needs a tool-call parser", "set tool-call-parser too")
    for name, (value, source) in env.values.items():
        if name in model_source.OWNED_ENV and source.startswith("vllm_"):
            raise ClusterError("%s[%r]" % (source, name), value, "cluster %s" % cluster.name,
                               "the launch compiler sets it from the weights' source", model_source.OWNED_ENV[name])
        removed = REMOVED_ENV.get(name)
        if removed or surface.unknown_env(name):
            raise ClusterError("%s[%r]" % (source, name), value, "cluster %s" % cluster.name,
                               "vLLM %s %s" % (surface.version, "ignores it" if removed else "does not know it"),
                               removed or "check the spelling against vllm.envs")
        if name in SECRET_ENV:
            raise ClusterError("%s[%r]" % (source, name), "<hidden>", "cluster %s" % cluster.name,
                               "secrets never go in plain variables",
                               "set %s (ansible-vault); the serve role writes it to a 0600 env file"
                               % SECRET_ENV[name])


def _layout_args(cluster: Cluster, node: Node) -> Dict[str, Any]:
    """Parallel layout and role flags for one node (vllm-launch.md flag matrix)."""
    lay, head = cluster.layout, cluster.head
    out: Dict[str, Any] = {}
    if lay.tp > 1 or lay.strategy != "single":
        out["tensor-parallel-size"] = lay.tp
    if lay.pp > 1:
        out["pipeline-parallel-size"] = lay.pp
    if lay.dcp > 1:
        out["decode-context-parallel-size"] = lay.dcp
    if lay.expert_parallel:
        out["enable-expert-parallel"] = True
    if lay.dp > 1:
        out["data-parallel-size"] = lay.dp
        out["data-parallel-size-local"] = lay.dp_local
        if cluster.multi_node:
            out["data-parallel-address"] = head.address
            out["data-parallel-rpc-port"] = cluster.settings["vllm_dp_rpc_port"]
        if cluster.load_balancing == "hybrid":
            out["data-parallel-hybrid-lb"] = True
        if node.rank > 0:
            out["data-parallel-start-rank"] = node.rank * lay.dp_local
    elif cluster.multi_node:
        out["nnodes"] = len(cluster.nodes)
        out["node-rank"] = node.rank
        out["master-addr"] = head.address
        out["master-port"] = cluster.settings["vllm_master_port"]
    if node.rank > 0 and cluster.load_balancing == "internal":
        out["headless"] = True
    return out


def _serves_api(cluster: Cluster, node: Node) -> bool:
    return node.rank == 0 or cluster.load_balancing == "hybrid"


def _node_env(cluster: Cluster, node: Node, env: Layers) -> Dict[str, str]:
    out = {k: str(v) for k, (v, _source) in env.values.items()}
    if cluster.multi_node:
        out["VLLM_HOST_IP"] = node.address or ""
        if node.interface:
            out["NCCL_SOCKET_IFNAME"] = node.interface
            out["GLOO_SOCKET_IFNAME"] = node.interface
        if cluster.fabric.rdma and node.hcas:
            out["NCCL_IB_HCA"] = "=" + ",".join(node.hcas)
        if cluster.fabric.name == "roce":
            out["NCCL_IB_GID_INDEX"] = str(cluster.settings["vllm_roce_gid_index"])
    if cluster.pd_way is not None:
        out.update(disagg.node_env(cluster.settings["vllm_kv_connector"], node.address,
                                   cluster.settings["vllm_kv_side_channel_port"], cluster.pd_way, node.hcas,
                                   node.interface))
    if cluster.model is not None and cluster.model.offline:
        out["HF_HUB_OFFLINE"] = "1"     # staged weights: no Hub call at start, no download in the ready timeout
    return dict(sorted(out.items()))


def _container(cluster: Cluster) -> Dict[str, Any]:
    """docker_container options by vendor and fabric (vllm-launch.md section 8)."""
    s, acc, fabric = cluster.settings, cluster.accelerator, cluster.fabric
    opts: Dict[str, Any] = {
        "network_mode": "host",        # NCCL, Gloo and vLLM's ZMQ ports are ephemeral: no port mapping
        "ipc_mode": "host",            # PyTorch shared memory between workers
        "privileged": bool(s["vllm_container_privileged"]),
        "devices": [],
        "device_requests": [],
        "capabilities": [],
        "group_add": [],
        "security_opts": [],
        "ulimits": ["stack:67108864:67108864"],
        # staged weights are read-only to vLLM: only the vllm_model role writes the cache
        "volumes": ["%s:%s%s" % (s["vllm_model_cache_dir"], MODEL_CACHE,
                                 ":ro" if cluster.model is not None and cluster.model.offline else "")],
    }
    if s["vllm_compile_cache_dir"]:
        opts["volumes"].append("%s:%s" % (s["vllm_compile_cache_dir"], COMPILE_CACHE))
    if s["vllm_weight_cache"]:
        # the daemons' sockets; CUDA IPC between two containers needs one PID namespace (vLLM PR 55906: apart, the
        # engine's open of the daemon's handle fails with "invalid device context")
        opts["volumes"].append("%s:%s" % (s["vllm_weight_cache_dir"], weight_cache.SOCKETS))
        opts["pid_mode"] = "host"
    if acc.vendor == "nvidia":
        if s["vllm_gpu_access"] == "cdi":
            opts["device_requests"].append({"driver": "cdi", "device_ids": ["nvidia.com/gpu=all"]})
        else:
            opts["device_requests"].append({"driver": "nvidia", "count": -1, "capabilities": [["gpu"]]})
    elif acc.vendor == "amd":
        opts["devices"] += ["/dev/kfd:/dev/kfd", "/dev/dri:/dev/dri"]
        opts["group_add"] += ["video", "render"]
        opts["security_opts"].append("seccomp=unconfined")
        opts["capabilities"].append("SYS_PTRACE")
    if fabric.rdma and cluster.multi_node:   # a one-node replica has no cross-node traffic: no verbs devices
        opts["devices"].append("/dev/infiniband:/dev/infiniband")
        opts["capabilities"].append("IPC_LOCK")
        opts["ulimits"].append("memlock:-1:-1")
    if cluster.mnnvl:
        channel = "/dev/nvidia-caps-imex-channels/channel0"
        opts["devices"].append("%s:%s" % (channel, channel))
    return opts


def render_value(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def to_argv(cluster: Cluster, args: Mapping[str, Any]) -> List[str]:
    """`vllm serve` argv: model first, then flags, as vLLM's config loader expands them."""
    return [str(args["model"])] + flag_argv(cluster, {f: v for f, v in args.items() if f != "model"})


def flag_argv(cluster: Cluster, args: Mapping[str, Any]) -> List[str]:
    """The flags as argv: a bare flag for true, vLLM's --no- form (where it has one) for false, a list's items
    after its flag, JSON for a mapping."""
    argv: List[str] = []
    for flag, value in args.items():
        if value is True:
            argv.append("--" + flag)
        elif value is False:
            neg = cluster.surface.negation("--" + flag)
            if neg:
                argv.append(neg)
        elif isinstance(value, list):
            argv += ["--" + flag] + [str(v) for v in value]
        else:
            argv += ["--" + flag, render_value(value)]
    return argv


def flag_text(flag: str, value: Any, argv: Sequence[str]) -> str:
    """`--flag value` as vLLM reads it from the config file: true is the bare flag, false the off spelling argv has
    (--no-X, or 0.33's --disable-X)."""
    if value is True:
        return "--" + flag
    if value is False:
        negation = [neg for neg in negation_spellings("--" + flag) if neg in argv]
        return negation[0] if negation else "--%s false" % flag
    if isinstance(value, (list, tuple)):
        return "--%s %s" % (flag, " ".join(str(v) for v in value))
    return "--%s %s" % (flag, render_value(value))


def to_config_yaml(cluster: Cluster, node: Node, args: Mapping[str, Any]) -> str:
    """A `vllm serve --config` file; each value is JSON, which YAML reads as is."""
    lines = ["# vLLM launch for %s (cluster %s, rank %d) compiled by inferops.vllm; do not edit"
             % (node.host, cluster.name, node.rank)]
    lines += ["%s: %s" % (flag, json.dumps(value)) for flag, value in args.items()]
    return "\n".join(lines) + "\n"


def _compile_node(cluster: Cluster, node: Node) -> Tuple[Dict[str, Any], Dict[str, str], Dict[str, str]]:
    """(args, env, sources): sources names the layer that set each flag and variable the compiler did not
    derive itself (a profile, vllm_site_args, vllm_args, a typed variable, a fabric default), for the plan's view."""
    s = cluster.settings
    engine, env = _engine_layers(cluster, node)
    _check_rules(cluster, engine, env)
    model = s["vllm_model"] or cluster.profile.get("model")
    if not model:
        raise ClusterError("vllm_model", None, "cluster %s" % cluster.name, "profile %s has no default model"
                           % cluster.profile_name, "set vllm_model to the Hugging Face id or path to serve")
    served = s["vllm_served_model_name"] or cluster.profile.get("served_model_name") or model
    args: Dict[str, Any] = {"model": model, "served-model-name": served}
    if cluster.model is not None and cluster.model.revision:
        # one commit pins the weights, the tokenizer and the remote code of the repo (vLLM 0.32)
        args["revision"] = cluster.model.revision
    if _serves_api(cluster, node):
        args["host"] = s["vllm_bind_host"]
        args["port"] = node.port
    args.update(_layout_args(cluster, node))
    for flag, (value, _source) in engine.values.items():
        if value is False and cluster.surface.negation("--" + flag) is None:
            continue
        args[flag] = value
    if s["vllm_weight_cache"]:
        _weight_cache_layer(cluster, engine, args)
    if args.get("headless"):
        # a headless node starts no API server, and vLLM refuses the flag there
        # ("--api-server-count=1 cannot be used with --headless", serve.py)
        args.pop("api-server-count", None)
    node_env = _node_env(cluster, node, env)
    sources = {flag: source for flag, (_value, source) in engine.values.items() if flag in args}
    # a layer's variable that the compiler then set per node (VLLM_HOST_IP...) is the compiler's, not the layer's
    sources.update((name, source) for name, (value, source) in sorted(env.values.items())
                   if node_env.get(name) == str(value))
    return args, node_env, sources


def _weight_cache_layer(cluster: Cluster, engine: Layers, args: Dict[str, Any]) -> None:
    """The engine loads through the daemons (weight_cache): refused where they cannot run, else the loader flags,
    which the plan alone sets."""
    lay = cluster.layout
    found = weight_cache.refusal(
        cluster.settings, cluster.accelerator.vendor, {f: v for f, (v, _s) in engine.values.items()},
        {f: source for f, (_v, source) in engine.values.items()},
        cluster.head.address if cluster.multi_node and lay.dp > 1 else None)
    if found:
        variable, value, problem, fix = found
        raise ClusterError(variable, value, "cluster %s" % cluster.name, problem, fix)
    engine.apply(weight_cache.ENGINE_ARGS, "vllm_weight_cache")
    args.update(weight_cache.ENGINE_ARGS)


def _weight_cache(cluster: Cluster, node: Node, args: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The node's daemon (`vllm preload` after the image's vllm): the engine's own arguments, then its flags."""
    s = cluster.settings
    if not s["vllm_weight_cache"]:
        return None
    engine_argv = ["--model", str(args["model"])] + flag_argv(cluster, weight_cache.daemon_args(
        args, cluster.surface.preload_options))
    return weight_cache.entry(s, engine_argv, node.weight_cache_health_port)


def _check_same_engine(cluster: Cluster,
                       compiled: Mapping[str, Tuple[Dict[str, Any], Dict[str, str], Dict[str, str]]]) -> None:
    head_args, head_env, _sources = compiled[cluster.head.host]
    for node in cluster.nodes[1:]:
        args, env, _sources = compiled[node.host]
        for flag in sorted(set(head_args) | set(args)):
            if flag not in NODE_FLAGS and head_args.get(flag) != args.get(flag):
                raise ClusterError("vllm_args[%r]" % flag, args.get(flag), "host %s" % node.host,
                                   "engine-shaping flags must match on every node; the head %s has %r"
                                   % (cluster.head.host, head_args.get(flag)),
                                   "set it in the cluster's group_vars, not in host_vars")
        for name in sorted(set(head_env) | set(env)):
            if name not in NODE_ENV and head_env.get(name) != env.get(name):
                raise ClusterError("vllm_env[%r]" % name, env.get(name), "host %s" % node.host,
                                   "environment must match on every node except %s; the head %s has %r"
                                   % (", ".join(sorted(NODE_ENV)), cluster.head.host, head_env.get(name)),
                                   "set it in the cluster's group_vars, not in host_vars")


def _ucx_notes(cluster: Cluster, compiled: Mapping[str, Tuple[Dict[str, Any], Dict[str, str], Dict[str, str]]]
               ) -> List[str]:
    """A P/D side over TCP whose node env names no UCX device: UCX then uses every interface that is up."""
    if cluster.pd_way != "tcp":
        return []
    return ["host %s: vllm_control_interface is unset; UCX will move this P/D side's KV over every interface that "
            "is up" % host for host, (_args, env, _sources) in compiled.items() if "UCX_NET_DEVICES" not in env]


def compile_cluster(cluster: Cluster) -> Dict[str, Dict[str, Any]]:
    """{inventory host: launch} for every node of the cluster."""
    input_warnings = plain_input.check(cluster)
    compiled = {node.host: _compile_node(cluster, node) for node in cluster.nodes}
    # the pass-throughs judged on what they compiled to, by vLLM's surface (site_policy, passthrough)
    refused, opened = site_policy.passthrough_findings(
        cluster.name, compiled, cluster.settings["vllm_allow_sensitive"] or (),
        cluster.surface.env_vars, cluster.model.revision if cluster.model is not None else None)
    raise_all(refused)
    input_warnings += opened
    _check_same_engine(cluster, compiled)
    capacity = _capacity(cluster, compiled[cluster.head.host][0])
    container = _container(cluster)
    head = cluster.head
    endpoint = base_url(head.address or "127.0.0.1", head.port)
    summary = {
        "name": cluster.name, "profile": cluster.profile_name, "gpu_model": cluster.accelerator.model,
        "vendor": cluster.accelerator.vendor, "nodes": [n.host for n in cluster.nodes],
        "gpus_per_node": cluster.gpus_per_node, "fabric": cluster.fabric.name, "strategy": cluster.layout.strategy,
        "tensor_parallel": cluster.layout.tp, "pipeline_parallel": cluster.layout.pp,
        "data_parallel": cluster.layout.dp, "expert_parallel": cluster.layout.expert_parallel,
        "load_balancing": cluster.load_balancing, "head": head.host, "head_address": head.address,
        "endpoint": endpoint,
        "image": cluster.settings["vllm_image"], "vllm_version": cluster.surface.version,
        "all2all_backend": compiled[head.host][0].get("all2all-backend"),
        "moe_backend": compiled[head.host][0].get("moe-backend"),
        "tool_choices": tool_choices(compiled[head.host][0]),
        "warnings": list(cluster.warnings) + input_warnings + list(capacity.warnings) + _ucx_notes(cluster, compiled),
        "model": cluster.model.summary() if cluster.model is not None else None,
        "capacity": capacity.summary,
    }
    if cluster.pd_way is not None:
        summary["pd"] = disagg.summary(cluster.settings, cluster.pd_way)
    share = bool(cluster.settings["vllm_compile_cache_dir"]) and cluster.settings["vllm_compile_cache_site"]
    if cluster.spans_domains:   # only then: single-domain summaries stay as they were
        summary["nvlink_domains"] = {d: [n.host for n in cluster.nodes if n.domain == d] for d in cluster.domains}
    out = {}
    for node in cluster.nodes:
        args, env, sources = compiled[node.host]
        out[node.host] = {
            "cluster": summary,
            "host": node.host,
            "rank": node.rank,
            "role": "head" if node.rank == 0 else "follower",
            "serves_api": _serves_api(cluster, node),
            "port": node.port,
            "hcas": list(node.hcas),
            "args": args,
            "argv": to_argv(cluster, args),
            "command": ["--config", CONFIG_PATH],
            "config_path": CONFIG_PATH,
            "config_yaml": to_config_yaml(cluster, node, args),
            "env": env,
            "sources": sources,
            "secret_env": dict(cluster.secrets),
            "container": container if node.rank == 0 else dict(container, stop_timeout=FOLLOWER_STOP_TIMEOUT),
            "compile_cache_dir": cluster.settings["vllm_compile_cache_dir"] or None,
            # the site registry is named by the plan (plan_run), which reads the weights' registry
            "compile_cache_site": compile_cache.site_entry(
                cluster.settings["vllm_image"], cluster.accelerator.model, cluster.gpus_per_node, node.rank,
                {f: v for f, v in args.items() if f not in NODE_FLAGS},
                {n: v for n, v in env.items() if n not in NODE_ENV}) if share else None,
            "host_stack": _host_stack(cluster, node),
            "weight_cache": _weight_cache(cluster, node, args),
        }
        if cluster.pd_way is not None:
            out[node.host]["kv_side_channel_ports"] = _side_channel_ports(cluster, node)
    return out


def _side_channel_ports(cluster: Cluster, node: Node) -> List[int]:
    """The engines a node runs each listen on the side-channel port plus their data-parallel rank; without data
    parallel, one engine on the head."""
    lay, base = cluster.layout, cluster.settings["vllm_kv_side_channel_port"]
    if lay.dp > 1:
        return disagg.side_channel_ports(base, node.rank * lay.dp_local, lay.dp_local)
    return disagg.side_channel_ports(base, 0, 1) if node.rank == 0 else []


def _capacity(cluster: Cluster, head_args: Mapping[str, Any]) -> capacity_fit.Verdict:
    """The weights against one replica's GPU memory at the compiled gpu-memory-utilization: refused when they
    cannot load, a warning when little is left for the KV cache (capacity_fit)."""
    s = cluster.settings
    verdict = capacity_fit.judge(
        cluster.name, cluster.profile_name, cluster.profile, cluster.accelerator,
        shape(cluster.layout, len(cluster.nodes), cluster.gpus_per_node),
        s["vllm_model"] or cluster.profile.get("model"), s, head_args, (s["vllm_site_args"], cluster.head.args))
    if verdict.refusal:
        variable, value, problem, fix = verdict.refusal
        raise ClusterError(variable, value, "cluster %s" % cluster.name, problem, fix)
    return verdict


# tool_choice modes the smoke test asks for, by tool-call parser: vLLM's kimi_k3 parser enforces "required" only
# with strict tool calling (VLLM_ENFORCE_STRICT_TOOL_CALLING); without it, tool_calls come back empty
# (docs/smoke-verdict.md), so K3 is checked with auto
TOOL_CHOICES = {"kimi_k3": ["auto"]}


def tool_choices(args: Mapping[str, Any]) -> List[str]:
    """The tool_choice modes the smoke test checks by default (smoke_test_tool_choices)."""
    return list(TOOL_CHOICES.get(args.get("tool-call-parser", ""), ["auto", "required"]))


def _probe_ranks(cluster: Cluster) -> int:
    """Ranks behind the node's API that the probes reach one by one: all of them with vLLM's own
    (internal) load balancing; with hybrid balancing each node's API has its own."""
    return cluster.layout.dp if cluster.load_balancing == "internal" else 1


def _host_stack(cluster: Cluster, node: Node) -> Dict[str, Any]:
    acc = cluster.accelerator
    return host_stack.build(vendor=acc.vendor, model=acc.model, gpus=cluster.gpus_per_node,
                            nvswitch_board=acc.nvswitch_board, mnnvl=acc.mnnvl, fabric=cluster.fabric.name,
                            hcas=node.hcas, node_domain=node.domain, peers_of=cluster.domain_peers,
                            probe_ranks=_probe_ranks(cluster), hvars=node.role_settings)

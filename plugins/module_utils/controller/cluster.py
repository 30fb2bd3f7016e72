# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster model: inventory variables of one cluster's hosts, read once,
checked, and turned into typed data. Every error names the variable, the
value, where it was read and the fix. No Ansible imports.

Variables (documented for users in roles/cluster_plan/meta/argument_specs.yml):
cluster-wide ones must have one value on every member, host ones may differ.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, NoReturn, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import hardware
from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    boundary, capacity_fit, rules, vllm_surface)
from ansible_collections.inferops.vllm.plugins.module_utils.controller import disagg, host_stack, model_source, node_layout
from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref
from ansible_collections.inferops.vllm.plugins.module_utils.controller import redact, specs, wrong_values
from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles import PROFILES

STRATEGIES = {
    "single": "one node; tensor parallel over its GPUs",
    "dep": "data + expert parallel: one engine per GPU, experts spread over all GPUs",
    "dp": "data parallel without expert parallel (dense models, the CPU lab)",
    "tp": "one tensor-parallel group across all nodes (--nnodes)",
    "tp_pp": "tensor parallel inside a node, pipeline parallel across nodes",
    "tp_dp": "tensor parallel inside a node, one data-parallel replica per node",
}
LOAD_BALANCING = ("internal", "hybrid")
GPU_ACCESS = ("gpus", "cdi")

# Cluster-wide variables and their defaults: the spec's (specs.INVENTORY_TYPES), or where a node's layout
# decides one, node_layout's; None: computed or optional. vllm_image is the vllm_image role's.
_COMPUTED_DEFAULTS = {"vllm_model_cache_dir": node_layout.default("state_dir") + "/huggingface",
                      "vllm_compile_cache_dir": node_layout.default("compile_cache_dir")}
CLUSTER_WIDE = ("vllm_profile", "vllm_model", "vllm_served_model_name", "vllm_version", "vllm_version_before",
                "vllm_image", "vllm_image_before", "vllm_gpu_model",
                "vllm_gpus_per_node", "vllm_fabric", "vllm_roce_gid_index", "vllm_strategy", "vllm_load_balancing",
                "vllm_tensor_parallel_size", "vllm_pipeline_parallel_size", "vllm_data_parallel_size",
                "vllm_decode_context_parallel_size", "vllm_all2all_backend", "vllm_moe_backend", "vllm_kv_cache_dtype",
                "vllm_max_model_len", "vllm_port", "vllm_dp_rpc_port", "vllm_master_port", "vllm_bind_host",
                "vllm_site_args", "vllm_site_env", "vllm_args", "vllm_env", "vllm_gpu_access",
                "vllm_container_privileged", "vllm_model_cache_dir", "vllm_compile_cache_dir", "vllm_compile_cache_site",
                "vllm_model_source",
                "vllm_model_revision", "vllm_model_manifest_digest", "vllm_model_weight_gb", "vllm_nvlink_domain",
                "vllm_api_open", "vllm_pd_role", "vllm_pd_deployment", "vllm_kv_connector", "vllm_kv_side_channel_port",
                "vllm_weight_cache", "vllm_weight_cache_dir", "vllm_weight_cache_master_port",
                "vllm_weight_cache_health_port", "vllm_allow_sensitive", "vllm_host_path_roots")
CLUSTER_DEFAULTS: Mapping[str, Any] = specs.Lazy(lambda: {
    name: _COMPUTED_DEFAULTS[name] if name in _COMPUTED_DEFAULTS else
    (specs.INVENTORY_TYPES[name].default if name in specs.INVENTORY_TYPES else None) for name in CLUSTER_WIDE})
# Variables that may differ between hosts. vllm_args/vllm_env may too, but the
# compiler then refuses any difference that shapes the engine.
HOST_VARS = ("vllm_control_address", "vllm_control_interface", "vllm_ib_hcas", "vllm_node_rank",
             "vllm_port", "vllm_args", "vllm_env", "vllm_nvlink_domain", "vllm_weight_cache_health_port",
             "vllm_firewall_allow")   # the plan reads the last one for the firewall (firewall.py), checked here
# Flags the compiler owns: layout, roles, endpoint and secrets.
OWNED_FLAGS = {
    "model": "vllm_model", "served-model-name": "vllm_served_model_name", "host": "vllm_bind_host",
    "port": "vllm_port", "tensor-parallel-size": "vllm_tensor_parallel_size",
    "pipeline-parallel-size": "vllm_pipeline_parallel_size", "data-parallel-size": "vllm_data_parallel_size",
    "data-parallel-size-local": "vllm_strategy", "data-parallel-start-rank": "vllm_strategy",
    "data-parallel-rank": "vllm_load_balancing", "data-parallel-address": "vllm_control_address",
    "data-parallel-rpc-port": "vllm_dp_rpc_port", "data-parallel-hybrid-lb": "vllm_load_balancing",
    "data-parallel-external-lb": "vllm_load_balancing", "headless": "vllm_strategy",
    "nnodes": "vllm_strategy", "node-rank": "vllm_node_rank", "master-addr": "vllm_control_address",
    "master-port": "vllm_master_port", "enable-expert-parallel": "vllm_strategy",
    "decode-context-parallel-size": "vllm_decode_context_parallel_size",
    "all2all-backend": "vllm_all2all_backend", "moe-backend": "vllm_moe_backend",
    "kv-cache-dtype": "vllm_kv_cache_dtype", "max-model-len": "vllm_max_model_len",
    "api-key": "vllm_api_key", "config": None, "revision": "vllm_model_revision",
}
SECRET_ENV = {"VLLM_API_KEY": "vllm_api_key", "HF_TOKEN": "vllm_hf_token"}
# nvidia_driver's variables that the plan checks on NVIDIA clusters, so a bad value stops the run
# before any host is touched (documented in roles/nvidia_driver/meta/argument_specs.yml, whose
# reboot choices a unit test keeps equal to these).
DRIVER_VARS = ("nvidia_driver_branch", "nvidia_driver_reboot")
NVIDIA_DRIVER_REBOOT = ("never", "if_needed", "always")


# Every variable the plan reads, checked on every host before anything else so that a wrong type is one line
# naming the host: the types roles/cluster_plan/meta/argument_specs.yml declares (entry point `inventory`).
VarType = specs.VarType
# Adding a GPU model is one row of the hardware catalog, which node code reads too: its choices are the catalog's
# (the spec lists them for ansible-doc; tests/check_argument_specs.py keeps the two equal).
# Whole numbers' bounds beyond the spec's `int` (the argument-spec schema has no keyword for them; the descriptions
# say them), and the example a refusal suggests: (minimum, maximum, example); one not named here is 1 or more.
INT_BOUNDS = {"vllm_gpus_per_node": (1, None, 8), "vllm_roce_gid_index": (0, 255, 3),
              "vllm_tensor_parallel_size": (1, None, 8), "vllm_pipeline_parallel_size": (1, None, 2),
              "vllm_data_parallel_size": (1, None, 16), "vllm_decode_context_parallel_size": (1, None, 1),
              "vllm_max_model_len": (1, None, 32768), "vllm_port": (1, 65535, None), "vllm_dp_rpc_port": (1, 65535, None),
              "vllm_master_port": (1, 65535, None), "vllm_model_weight_gb": (0, None, 1500), "vllm_node_rank": (0, None, 0),
              "vllm_kv_side_channel_port": (1, 65535, None), "vllm_weight_cache_master_port": (1, 65534, None),
              "vllm_weight_cache_health_port": (1, 65535, None)}
VAR_TYPES: Mapping[str, VarType] = specs.Lazy(lambda: dict(
    specs.with_bounds(specs.INVENTORY_TYPES, INT_BOUNDS),
    vllm_image=specs.var_types(specs.options("vllm_image"), "vllm_image")["vllm_image"],
    vllm_gpu_model=VarType("str", choices=hardware.MODELS)))


class ClusterError(ValueError):
    """Bad inventory input: names the variable, the value, where, and the fix."""

    def __init__(self, variable: str, value: Any, where: str, problem: str, fix: str):
        secrets = redact.secrets_in(value)   # secrets never echoed: not the value, nor a fix quoting part of it
        value = redact.shown(variable, value)
        problem, fix = redact.without(problem, secrets), redact.without(fix, secrets)
        self.variable, self.value, self.where, self.problem, self.fix = variable, value, where, problem, fix
        super().__init__(one_line("%s=%r (%s): %s. Fix: %s" % (variable, value, where, problem, fix)))


def one_line(text: str) -> str:
    """The text with every character that is not printable (a newline, a NUL, U+2028, U+0085...) escaped as
    Python writes it, so that a refusal that quotes a hostile value stays one line under any reader."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass(frozen=True)
class Node:
    host: str
    rank: int
    address: Optional[str]
    interface: Optional[str]
    hcas: Tuple[str, ...]
    port: int
    weight_cache_health_port: int    # vllm_weight_cache_health_port: the weight-cache daemon's /health on this node
    args: Mapping[str, Any]
    env: Mapping[str, Any]
    domain: Optional[str] = None     # vllm_nvlink_domain: the NVL72 rack (IMEX domain) of this host
    # the host-stack roles' tunables this host sets (host_stack.ROLE_SETTINGS), for the launch's host_stack
    role_settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Layout:
    strategy: str
    tp: int
    pp: int
    dp: int
    dp_local: int
    dcp: int
    expert_parallel: bool


@dataclass(frozen=True)
class Cluster:
    name: str
    nodes: Tuple[Node, ...]
    accelerator: hardware.Accelerator
    gpus_per_node: int
    fabric: rules.Fabric
    layout: Layout
    load_balancing: str
    profile_name: str
    profile: Mapping[str, Any]
    surface: vllm_surface.Surface
    settings: Mapping[str, Any]          # the cluster-wide variables, defaults applied
    secrets: Mapping[str, str] = field(default_factory=dict)   # env name -> variable holding it
    warnings: Tuple[str, ...] = ()
    domains: Tuple[str, ...] = ()      # the NVLink domains of the nodes, in rank order of first use
    model: Optional[model_source.ModelSource] = None   # where the weights come from, pinned how
    # {NVLink domain inventory group: its trays' control addresses}, for IMEX's node list
    domain_peers: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)

    @property
    def spans_domains(self) -> bool:
        """Several NVLink domains joined by the RDMA fabric vllm_fabric names."""
        return len(self.domains) > 1

    @property
    def mnnvl(self) -> bool:
        """Trays reach each other over multi-node NVLink (inside one domain, or inside each of several)."""
        return self.fabric.name == "mnnvl" or (self.spans_domains and self.accelerator.mnnvl)

    @property
    def pd_way(self) -> Optional[str]:
        """How a P/D side's KV moves (disagg.transport), or None for a cluster that serves requests whole."""
        if self.settings.get("vllm_pd_role") is None:
            return None
        return disagg.transport(self.fabric.rdma, self.mnnvl)

    @property
    def head(self) -> Node:
        return self.nodes[0]

    @property
    def multi_node(self) -> bool:
        return len(self.nodes) > 1

    @property
    def traffic(self) -> Optional[str]:
        return rules.traffic_kind(self.fabric, len(self.nodes))


def _fail(variable: str, value: Any, where: str, problem: str, fix: str) -> NoReturn:
    raise ClusterError(variable, value, where, problem, fix)


def _int(variable: str, value: Any, where: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit() \
            or int(value) < minimum:
        _fail(variable, value, where, "must be a whole number >= %d" % minimum,
              "set a whole number >= %d, e.g. %d" % (minimum, minimum))
    return int(value)


def _host_int(hvars: Mapping[str, Any], variable: str, where: str) -> int:
    """A whole number a host may set for itself (HOST_VARS), else the cluster default."""
    value = hvars.get(variable)
    return _int(variable, CLUSTER_DEFAULTS[variable] if value is None else value, where)


def _choice(variable: str, value: Any, where: str, choices: Sequence[str]) -> str:
    if value not in choices:
        _fail(variable, value, where, "not one of %s" % ", ".join(choices), "set one of %s" % ", ".join(choices))
    return value


def _mapping(variable: str, value: Any, where: str) -> Dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        _fail(variable, value, where, "must be a mapping", "write it as a YAML mapping (flag: value)")
    return dict(value)


class ClusterErrors(ClusterError):
    """Several independent refusals (one per line), so one run shows every wrong type at once."""

    def __init__(self, errors: Sequence[ClusterError]):
        first = errors[0]
        super().__init__(first.variable, first.value, first.where, first.problem, first.fix)
        self.errors = tuple(errors)
        self.args = ("\n".join(str(e) for e in errors),)


def raise_all(errors: Sequence[ClusterError]) -> None:
    """Nothing when there is no refusal; the one refusal itself; several as one ClusterErrors (a line each)."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ClusterErrors(errors)


def _type_problem(variable: str, value: Any) -> Optional[Tuple[str, str]]:
    """(what is allowed, the fix) when `value` does not fit the variable's kind (VAR_TYPES) or its format on
    the boundary (boundary.VAR_FORMATS), else None. A list whose format gives its own example of a list says that
    one (vllm_firewall_allow's addresses, not HCA names)."""
    found = _kind_problem(VAR_TYPES[variable], value)
    fix = boundary.format_of(variable).fix
    if found and VAR_TYPES[variable].kind == "list" and fix.startswith("list "):
        return "must be a list", fix
    return found or boundary.problem(variable, value)


def _kind_problem(spec: VarType, value: Any) -> Optional[Tuple[str, str]]:
    if spec.kind == "int":
        number = value if isinstance(value, int) and not isinstance(value, bool) else \
            (int(value) if isinstance(value, str) and value.strip().isdigit() else None)
        top = spec.maximum
        if number is None or number < spec.minimum or (top is not None and number > top):
            bounds = "from %d to %d" % (spec.minimum, top) if top is not None else ">= %d" % spec.minimum
            allowed = "a whole number %s" % bounds
            example = spec.example if spec.example is not None else spec.minimum
            return "must be " + allowed, "set %s, e.g. %s" % (allowed, example)
        return None
    if spec.kind == "bool":
        if not isinstance(value, bool):
            return "must be true or false", "write true or false, unquoted"
        return None
    if spec.kind == "dict":
        if not isinstance(value, Mapping):
            return "must be a mapping", "write it as a YAML mapping (name: value)"
        return None
    if spec.kind == "list":
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence) \
                or any(isinstance(v, (Mapping, list)) for v in value):
            return "must be a list of names", "write a YAML list, e.g. [mlx5_0, mlx5_1]"
        return None
    if isinstance(value, (Mapping, list, tuple, bool)):
        return "must be a string", "write a single value, e.g. %s" % (spec.choices[0] if spec.choices else "a name")
    if spec.choices and str(value).upper() not in {c.upper() for c in spec.choices}:
        return "not one of %s" % ", ".join(spec.choices), "set one of %s" % ", ".join(spec.choices)
    return None


def _check_types(members: Sequence[Tuple[str, Mapping[str, Any]]]) -> List[Tuple[str, Dict[str, Any]]]:
    """Every variable the plan reads, on every host: one line per wrong value (hosts that share a
    wrong value, as group_vars do, share the line). Returns the members with whole numbers given
    as strings (-e vllm_port=8001) turned into numbers."""
    wrong = wrong_values.gather(((host, [(var, hvars.get(var)) for var in VAR_TYPES]) for host, hvars in members),
                                _type_problem)
    errors = [ClusterError(w.variable, w.value, w.where, w.problem, w.fix) for w in wrong]
    raise_all(errors)

    def number(var: str, value: Any) -> Any:
        spec = VAR_TYPES.get(var)
        return int(value) if spec is not None and spec.kind == "int" and isinstance(value, str) else value
    return [(host, {var: number(var, value) for var, value in hvars.items()}) for host, hvars in members]


def _cluster_settings(name: str, members: Sequence[Tuple[str, Mapping[str, Any]]]) -> Dict[str, Any]:
    """One value per cluster-wide variable; a value that differs between hosts is an error."""
    settings = {}
    for var, default in CLUSTER_DEFAULTS.items():
        if var in HOST_VARS:
            continue
        seen = {}
        for host, hvars in members:
            value = default if hvars.get(var) is None else hvars[var]   # null means not set
            seen.setdefault(repr(value), (host, value))
        if len(seen) > 1:
            shown = ", ".join("%s=%r" % (h, v) for h, v in seen.values())
            _fail(var, [v for _host, v in seen.values()], "cluster %s" % name,
                  "differs between hosts (%s)" % shown,
                  "set %s once in the cluster group's group_vars, not per host" % var)
        settings[var] = next(iter(seen.values()))[1]
    return settings


def _order(name: str, members: Sequence[Tuple[str, Mapping[str, Any]]]) -> List[Tuple[str, Mapping[str, Any]]]:
    """Inventory order, unless every host sets vllm_node_rank (then 0..N-1, head = 0)."""
    ranks = [hvars.get("vllm_node_rank") for _host, hvars in members]
    if all(r is None for r in ranks):
        return list(members)
    if any(r is None for r in ranks):
        missing = [h for (h, hv) in members if hv.get("vllm_node_rank") is None]
        _fail("vllm_node_rank", None, "hosts %s of cluster %s" % (", ".join(missing), name),
              "set on some hosts but not on these", "set vllm_node_rank on every host of the cluster, or on none")
    ranked = sorted(members, key=lambda m: _int("vllm_node_rank", m[1]["vllm_node_rank"], "host %s" % m[0], 0))
    by_rank: Dict[int, List[str]] = {}
    for host, hvars in ranked:
        by_rank.setdefault(int(hvars["vllm_node_rank"]), []).append(host)
    last = len(members) - 1
    for rank, hosts in by_rank.items():
        if len(hosts) > 1:
            _fail("vllm_node_rank", rank, "hosts %s of cluster %s" % (", ".join(hosts), name),
                  "each rank belongs to one host", "give each host its own rank from 0 (head) to %d" % last)
    if 0 not in by_rank:
        _fail("vllm_node_rank", sorted(by_rank), "hosts %s of cluster %s"
              % (", ".join("%s=%d" % (h, r) for r, hosts in sorted(by_rank.items()) for h in hosts), name),
              "no host has rank 0, so the cluster has no head", "set vllm_node_rank: 0 on the head's host_vars")
    missing = [r for r in range(len(members)) if r not in by_rank]
    if missing:
        # N distinct ranks with one missing below N: some host's rank is past the end
        high = max(by_rank)
        _fail("vllm_node_rank", high, "host %s of cluster %s" % (by_rank[high][0], name),
              "the cluster has %d hosts (ranks 0..%d) and no host has rank %s"
              % (len(members), last, ", ".join(str(r) for r in missing)),
              "number the hosts 0 (head) to %d without gaps" % last)
    return ranked


def _address(host: str, hvars: Mapping[str, Any], required: bool) -> Optional[str]:
    value = hvars.get("vllm_control_address") or hvars.get("ansible_host")
    where = "host %s" % host
    if value is None:
        if required:
            _fail("vllm_control_address", None, where, "multi-node clusters need each node's control-plane IP",
                  "set vllm_control_address (or ansible_host) to the IP the nodes reach each other on")
        return None
    try:
        parsed = ipaddress.ip_address(str(value))
    except ValueError:
        if required:
            _fail("vllm_control_address", value, where, "not an IP address (vLLM and NCCL bind to IPs)",
                  "set vllm_control_address to the node's IP on the control-plane network")
        return None
    if required and parsed.version == 6:
        # vLLM 0.32 binds the data-parallel group's store with socket.AF_INET at --data-parallel-address (and
        # --master-addr, which becomes it): config/parallel.py _pick_stateless_dp_port, distributed/utils.py
        _fail("vllm_control_address", value, where, "an IPv6 address: vLLM (0.32, 0.33) binds its cross-node "
              "rendezvous (--data-parallel-address, --master-addr) as IPv4 only",
              "set vllm_control_address to the node's IPv4 address on the control-plane network")
    return str(value)


def _accelerator(settings: Dict[str, Any], where: str) -> hardware.Accelerator:
    model = settings["vllm_gpu_model"]
    if settings["vllm_profile"] == "cpu_lab" and model is None:
        model = "CPU"
    acc = hardware.lookup(model) if model is not None else None
    if acc is None:
        _fail("vllm_gpu_model", model, where, "unknown or unset GPU model",
              "set one of %s in the cluster's group_vars" % ", ".join(sorted(hardware.CATALOG)))
    return acc


def _fabric(settings: Dict[str, Any], acc: hardware.Accelerator, nodes: int, where: str) -> rules.Fabric:
    name = settings["vllm_fabric"]
    if name is None:
        if nodes > 1:
            _fail("vllm_fabric", None, where, "a multi-node cluster needs its interconnect",
                  "set vllm_fabric to mnnvl, infiniband, roce or ethernet")
        name = {"nvidia": "nvlink"}.get(acc.vendor, "none")
    fabric = rules.FABRICS.get(name)
    if fabric is None:
        _fail("vllm_fabric", name, where, "unknown fabric", "set one of %s" % ", ".join(rules.FABRICS))
    if nodes > 1 and not fabric.multi_node:
        _fail("vllm_fabric", name, where, "%s does not connect %d nodes" % (fabric.description, nodes),
              "set mnnvl, infiniband, roce or ethernet for a multi-node cluster")
    if fabric.nvlink and acc.vendor != "nvidia":
        _fail("vllm_fabric", name, where, "NVLink is NVIDIA-only but vllm_gpu_model is %s" % acc.model,
              "set vllm_fabric to infiniband or roce (or none on one node)")
    if name == "mnnvl" and not acc.mnnvl:
        _fail("vllm_fabric", name, where, "%s cannot join a multi-node NVLink domain" % acc.model,
              "use mnnvl only with %s NVL racks; set infiniband or roce" % hardware.models_where(lambda a: a.mnnvl))
    return fabric


def _image_vendor(image: Any, acc: hardware.Accelerator, where: str) -> None:
    """A CUDA build cannot drive AMD GPUs nor a ROCm build NVIDIA ones; the CPU lab image is exempt."""
    if not image or acc.vendor not in image_ref.VENDOR_BUILD:
        return
    vendor = image_ref.image_vendor(image)
    if vendor == acc.vendor:
        return
    repo = image_ref.repository_name(image)
    named = ("names %s" if vendor == "amd" else "has no %s in its name") % image_ref.ROCM_NAME_MARKER
    example = "vllm/vllm-openai-rocm" if acc.vendor == "amd" else "vllm/vllm-openai"
    _fail("vllm_image", image, where,
          "is a %s build (its repository %s %s) but vllm_gpu_model is %s, an %s GPU"
          % (image_ref.VENDOR_BUILD[vendor], repo, named, acc.model, {"nvidia": "NVIDIA", "amd": "AMD"}[acc.vendor]),
          "use a %s build for %s, e.g. %s@sha256:<digest>"
          % (image_ref.VENDOR_BUILD[acc.vendor], acc.model, example))


def _driver(members: Sequence[Tuple[str, Mapping[str, Any]]], acc: hardware.Accelerator, image: Any,
            profile_name: str, profile: Mapping[str, Any]) -> None:
    """Each host's nvidia_driver_branch against the image's CUDA (its cuNNN tag, else the profile's),
    and nvidia_driver_reboot against the role's choices."""
    if acc.vendor != "nvidia":
        return
    cuda, source = image_ref.cuda_major(image), "its tag %s" % image_ref.tag(image)
    if cuda is None and profile.get("cuda"):
        cuda, source = int(profile["cuda"]), "profile %s" % profile_name
    minimum = rules.MIN_DRIVER_BRANCH.get(cuda) if cuda else None
    for host, hvars in members:
        where = "host %s" % host
        if hvars.get("nvidia_driver_reboot") is not None:
            _choice("nvidia_driver_reboot", hvars["nvidia_driver_reboot"], where, NVIDIA_DRIVER_REBOOT)
        branch = hvars.get("nvidia_driver_branch")
        if branch is None:
            continue   # the role's default branch
        if isinstance(branch, bool) or not str(branch).isdigit():
            _fail("nvidia_driver_branch", branch, where, "not a driver branch number",
                  'set the branch number as a string, e.g. "%d"' % (minimum or 580))
        if minimum and int(branch) < minimum:
            _fail("nvidia_driver_branch", branch, where,
                  "the image is a CUDA %d build (%s) and needs NVIDIA driver branch %d or newer"
                  % (cuda, source, minimum),
                  'set nvidia_driver_branch: "%d" or newer for %s, or use an image built for the older driver'
                  % (minimum, host))


def recipe_strategy(profile_name: str, profile: Mapping[str, Any], acc: hardware.Accelerator, gpus: int, nodes: int,
                    settings: Mapping[str, Any]) -> Optional[str]:
    """The default strategy where the profile's recipe decides it: the first layout the recipe lists for the GPU model
    that holds the weights on these nodes (capacity_fit.best). None keeps the fixed default (_layout), and the plan's
    recipe warning then says why (capacity_fit.recipe_advice)."""
    if acc.vendor == "cpu" or not profile.get("recipe_supports"):
        return None
    repo = settings["vllm_model"] or profile.get("model")
    weights = capacity_fit.weights(profile_name, profile, repo, settings["vllm_model_weight_gb"])[0]
    option = capacity_fit.best(weights, acc, gpus, nodes, bool(profile.get("moe")), profile,
                               (settings["vllm_site_args"],))
    return option.strategy if option is not None and option.nodes == nodes and option.listed else None


def _layout(settings: Dict[str, Any], acc: hardware.Accelerator, gpus: int, nodes: int, moe: bool,
            where: str) -> Layout:
    strategy = settings["vllm_strategy"] or ("single" if nodes == 1 else ("dep" if moe else "tp_pp"))
    _choice("vllm_strategy", strategy, where, list(STRATEGIES))
    total = gpus * nodes
    tp_set, pp_set, dp_set = (settings["vllm_tensor_parallel_size"], settings["vllm_pipeline_parallel_size"],
                              settings["vllm_data_parallel_size"])
    tp = _int("vllm_tensor_parallel_size", tp_set, where) if tp_set is not None else None
    pp = _int("vllm_pipeline_parallel_size", pp_set, where) if pp_set is not None else None
    dcp = _int("vllm_decode_context_parallel_size", settings["vllm_decode_context_parallel_size"], where)
    _node_share(strategy, tp, pp, gpus, where)
    if strategy == "single" and nodes > 1:
        _fail("vllm_strategy", strategy, where, "the cluster has %d nodes" % nodes,
              "choose dep, dp, tp, tp_pp or tp_dp, or put one host in the cluster group")
    if strategy in ("dep", "dp"):
        tp = tp or 1
        if gpus % tp:
            _fail("vllm_tensor_parallel_size", tp, where, "must divide the %d GPUs per node" % gpus,
                  "use a divisor of %d" % gpus)
        layout = Layout(strategy, tp, 1, total // tp, gpus // tp, dcp, strategy == "dep")
    elif strategy == "single":
        tp = tp or gpus // (pp or 1)
        pp = pp or 1
        if tp * pp > gpus:
            _fail("vllm_tensor_parallel_size", tp, where, "tp %d x pp %d exceeds the %d GPUs of the node"
                  % (tp, pp, gpus), "keep tensor x pipeline parallel size within %d" % gpus)
        layout = Layout(strategy, tp, pp, 1, 1, dcp, False)
    elif strategy == "tp":
        layout = Layout(strategy, total, 1, 1, 1, dcp, False)
        if tp is not None and tp != total:
            _fail("vllm_tensor_parallel_size", tp, where, "strategy tp spans every GPU: %d nodes x %d = %d"
                  % (nodes, gpus, total), "remove it or set %d" % total)
    elif strategy == "tp_pp":
        tp, pp = tp or gpus, pp or nodes
        if tp * pp != total:
            _fail("vllm_pipeline_parallel_size", pp, where, "tp %d x pp %d != %d GPUs (%d nodes x %d)"
                  % (tp, pp, total, nodes, gpus), "make tensor x pipeline parallel size equal %d" % total)
        layout = Layout(strategy, tp, pp, 1, 1, dcp, False)
    else:  # tp_dp
        tp = tp or gpus
        if tp != gpus:
            _fail("vllm_tensor_parallel_size", tp, where, "tp_dp runs one replica of %d GPUs per node" % gpus,
                  "remove it or set %d" % gpus)
        layout = Layout(strategy, tp, 1, nodes, 1, dcp, False)
    if dp_set is not None and _int("vllm_data_parallel_size", dp_set, where) != layout.dp:
        _fail("vllm_data_parallel_size", dp_set, where, "strategy %s on %d nodes x %d GPUs gives %d data-parallel "
              "ranks (nodes x local)" % (strategy, nodes, gpus, layout.dp), "remove it or set %d" % layout.dp)
    if layout.tp % dcp:
        _fail("vllm_decode_context_parallel_size", dcp, where, "must divide the tensor-parallel size %d" % layout.tp,
              "use a divisor of %d (DCP reuses the TP ranks)" % layout.tp)
    if layout.expert_parallel and not moe:
        _fail("vllm_strategy", strategy, where, "expert parallel needs a MoE model (the profile has no experts)",
              "use dp for a dense model, or a MoE profile")
    return layout


def _node_share(strategy: str, tp: Optional[int], pp: Optional[int], gpus: int, where: str) -> None:
    """One rule in every strategy: the GPUs an engine takes on a node divide the node's GPUs (tensor x pipeline
    on one node, tensor parallel where pipeline stages sit on other nodes); strategies tp and tp_dp span them."""
    if tp is None or strategy in ("tp", "tp_dp"):
        return
    share = tp * (pp or 1) if strategy == "single" else tp
    if share <= gpus and gpus % share == 0:
        return
    what = "tp %d x pp %d" % (tp, pp) if strategy == "single" and pp else "tensor-parallel size %d" % tp
    _fail("vllm_tensor_parallel_size", tp, where, "%s must divide the %d GPUs per node (strategy %s)"
          % (what, gpus, strategy), "use a divisor of %d: %s" % (gpus, ", ".join(
              str(d) for d in range(1, gpus + 1) if gpus % d == 0)))


def _gpus_per_node(value: Any, acc: hardware.Accelerator, where: str) -> int:
    """vllm_gpus_per_node, at most what the GPU model's boards hold (hardware.CATALOG)."""
    gpus = acc.gpus_per_node if value is None else _int("vllm_gpus_per_node", value, where)
    if acc.vendor != "cpu" and gpus > acc.gpus_per_node:
        _fail("vllm_gpus_per_node", gpus, where, "a %s node holds %d GPUs" % (acc.model, acc.gpus_per_node),
              "set %d or fewer (or remove it: the default is the board's %d)" % (acc.gpus_per_node, acc.gpus_per_node))
    return gpus


def _vllm_version(settings: Mapping[str, Any], where: str) -> str:
    """The vLLM inside the image: vllm_version, else the release the image's tag names (vllm/vllm-openai:v0.33.0@...).
    Required where neither says it: a digest alone does not tell which flags the image's vLLM reads."""
    set_, image = settings["vllm_version"], str(settings["vllm_image"] or "")
    tagged = image_ref.tag_release(image)
    if set_ and tagged and tagged != set_:
        _fail("vllm_version", set_, where, "vllm_image's tag names vLLM %s (%s)" % (tagged, image),
              "set vllm_version to %s, or pin an image of vLLM %s" % (tagged, set_))
    if set_ or tagged:
        return str(set_ or tagged)
    _fail("vllm_version", None, where, "not set, and %s" % ("vllm_image %s names no vLLM release in its tag" % image
                                                            if image else "there is no vllm_image to read it from"),
          "set vllm_version to the vLLM inside the image, one of %s (docker run --rm --entrypoint vllm IMAGE "
          "--version prints it)" % ", ".join(vllm_surface.supported_versions()))


def build(name: str, members: Sequence[Tuple[str, Mapping[str, Any]]],
          domain_peers: Optional[Mapping[str, Sequence[str]]] = None) -> Cluster:
    """members: (inventory host name, its variables) for every host of the cluster. domain_peers: the
    control addresses of each NVLink domain group's trays (plan.domain_peers), for IMEX."""
    if not members:
        _fail("vllm_cluster", name, "inventory", "no host belongs to this cluster",
              "put the cluster's hosts in the group named by vllm_cluster")
    members = _check_types(members)
    where = "cluster %s" % name
    settings = _cluster_settings(name, members)
    profile_name = settings["vllm_profile"]
    profile = PROFILES.get(profile_name)
    if profile is None:
        _fail("vllm_profile", profile_name, where, "unknown model profile", "set one of %s" % ", ".join(PROFILES))
    settings["vllm_version"] = _vllm_version(settings, where)
    surface = vllm_surface.load(settings["vllm_version"])
    if surface is None:
        _fail("vllm_version", settings["vllm_version"], where, "no flag data for this vLLM version",
              "set one of %s (the vLLM version inside vllm_image); a newer release is added by "
              "scripts/vllm_release.sh (CONTRIBUTING.md)" % ", ".join(vllm_surface.supported_versions()))
    acc = _accelerator(settings, where)
    gpus = _gpus_per_node(settings["vllm_gpus_per_node"], acc, where)
    ordered = _order(name, members)
    fabric = _fabric(settings, acc, len(ordered), where)
    if settings["vllm_strategy"] is None:   # the recipe's layout for this GPU model, where it has one that fits
        settings["vllm_strategy"] = recipe_strategy(profile_name, profile, acc, gpus, len(ordered), settings)
    layout = _layout(settings, acc, gpus, len(ordered), bool(profile.get("moe")), where)
    lb = _choice("vllm_load_balancing", settings["vllm_load_balancing"], where, LOAD_BALANCING)
    if lb == "hybrid" and layout.dp_local == 1 and layout.dp > 1:
        _fail("vllm_load_balancing", lb, where, "with one data-parallel rank per node vLLM silently switches hybrid "
              "to external load balancing", "use internal (one API endpoint on the head)")
    if lb == "hybrid" and layout.dp == 1:
        _fail("vllm_load_balancing", lb, where, "hybrid load balancing needs data parallel (dep, dp, tp_dp)",
              "use internal")
    _choice("vllm_gpu_access", settings["vllm_gpu_access"], where, GPU_ACCESS)
    if not isinstance(settings["vllm_container_privileged"], bool):
        _fail("vllm_container_privileged", settings["vllm_container_privileged"], where, "must be true or false",
              "set false (the default) unless your site requires privileged containers")
    domains = _domains(name, ordered, fabric, acc)
    for var in ("vllm_site_args", "vllm_site_env"):
        _mapping(var, settings[var], where)
    image = settings["vllm_image"]
    pin = image_ref.pin_problem(image) if image else None   # unset: plan.yml runs without an image
    if pin:
        _fail("vllm_image", image, where, pin[0], pin[1])
    _image_vendor(image, acc, where)
    _driver(ordered, acc, image, profile_name, profile)
    repo = settings["vllm_model"] or profile.get("model")
    pd = disagg.side_problem(settings, surface.kv_connectors, surface.version)
    if pd:
        _fail(pd[0], pd[1], where, pd[2], pd[3])
    weights = model_source.problem(settings, repo) if repo else None
    if weights:
        _fail(weights[0], weights[1], where, weights[2], weights[3])

    nodes = []
    for rank, (host, hvars) in enumerate(ordered):
        hwhere = "host %s" % host
        hcas = hvars.get("vllm_ib_hcas") or ()
        if isinstance(hcas, str) or not isinstance(hcas, Sequence):
            _fail("vllm_ib_hcas", hcas, hwhere, "must be a list of HCA names", "write e.g. [mlx5_0, mlx5_1]")
        nodes.append(Node(
            # a P/D side's nodes are reached by the other side: its side channel listens on the control address
            host=host, rank=rank, address=_address(host, hvars, len(ordered) > 1 or settings["vllm_pd_role"] is not None),
            interface=hvars.get("vllm_control_interface"), hcas=tuple(str(h) for h in hcas),
            port=_host_int(hvars, "vllm_port", hwhere),
            weight_cache_health_port=_host_int(hvars, "vllm_weight_cache_health_port", hwhere),
            args=_mapping("vllm_args", hvars.get("vllm_args"), hwhere),
            env=_mapping("vllm_env", hvars.get("vllm_env"), hwhere),
            domain=hvars.get("vllm_nvlink_domain") or None,
            role_settings={k: hvars[k] for k in host_stack.ROLE_SETTINGS if hvars.get(k) is not None}))
    secrets = {env: var for env, var in SECRET_ENV.items() if members[0][1].get(var)}
    warnings = _warnings(name, profile_name, profile, acc, layout, fabric, nodes, gpus, settings, repo)
    return Cluster(name=name, nodes=tuple(nodes), accelerator=acc, gpus_per_node=gpus, fabric=fabric, layout=layout,
                   load_balancing=lb, profile_name=profile_name, profile=profile, surface=surface,
                   settings=settings, secrets=secrets, warnings=tuple(warnings), domains=domains,
                   model=model_source.build(settings, repo) if repo else None,
                   domain_peers={d: tuple(p) for d, p in (domain_peers or {}).items()})


def _domains(name: str, ordered: Sequence[Tuple[str, Mapping[str, Any]]], fabric: rules.Fabric,
             acc: hardware.Accelerator) -> Tuple[str, ...]:
    """The NVLink domains (vllm_nvlink_domain, per host) the cluster sits in. mnnvl: exactly one.
    infiniband/roce between several domains: every host names its own (rules.DOMAIN_JOINING_FABRICS)."""
    by_domain: Dict[Optional[str], List[str]] = {}
    for host, hvars in ordered:
        by_domain.setdefault(hvars.get("vllm_nvlink_domain") or None, []).append(host)
    named = tuple(d for d in by_domain if d is not None)
    where = "cluster %s" % name

    def shown() -> str:
        return "; ".join("%s: %s" % (d or "unset", ", ".join(h)) for d, h in by_domain.items())
    if fabric.name == "mnnvl":
        if None in by_domain:
            _fail("vllm_nvlink_domain", None, "hosts %s of %s" % (", ".join(by_domain[None]), where),
                  "a multi-node NVLink cluster must sit in one NVLink domain (NVL72 rack, one IMEX domain)",
                  "set vllm_nvlink_domain to the rack's group name in its group_vars")
        if len(named) > 1:
            _fail("vllm_nvlink_domain", list(named), where,
                  "vllm_fabric is mnnvl but the hosts sit in %d NVLink domains (%s)" % (len(named), shown()),
                  "set vllm_fabric: infiniband (or roce) for the fabric between the racks, or put the cluster "
                  "in one rack")
        return named
    if not named or len(ordered) == 1:
        return named
    if not acc.mnnvl:
        _fail("vllm_nvlink_domain", named[0], "host %s" % by_domain[named[0]][0],
              "%s cannot join a multi-node NVLink domain" % acc.model,
              "remove vllm_nvlink_domain (it is for %s NVL racks)" % hardware.models_where(lambda a: a.mnnvl))
    if fabric.name not in rules.DOMAIN_JOINING_FABRICS:
        _fail("vllm_fabric", fabric.name, where, "the hosts name NVLink domains (%s) but %s cannot join them"
              % (shown(), fabric.name), "set vllm_fabric: infiniband or roce between the racks")
    if None in by_domain:
        _fail("vllm_nvlink_domain", None, "hosts %s of %s" % (", ".join(by_domain[None]), where),
              "set on some hosts but not on these (%s)" % shown(),
              "set vllm_nvlink_domain on every host (its rack's group_vars), or on none")
    if len(named) == 1:
        _fail("vllm_fabric", fabric.name, where, "every host sits in NVLink domain %s, so no traffic crosses %s"
              % (named[0], fabric.name), "set vllm_fabric: mnnvl for a cluster inside one rack")
    return named


def shape(layout: Layout, nodes: int, gpus: int) -> capacity_fit.Shape:
    return capacity_fit.Shape(layout.strategy, layout.tp, layout.pp, layout.dp, layout.expert_parallel, nodes, gpus)


def _warnings(name, profile_name, profile, acc, layout, fabric, nodes, gpus, settings, repo) -> List[str]:
    out = []
    weights = None if acc.vendor == "cpu" else \
        capacity_fit.weights(profile_name, profile, repo, settings["vllm_model_weight_gb"])[0]
    advice = capacity_fit.recipe_advice(name, profile_name, profile, acc, shape(layout, len(nodes), gpus), weights,
                                        (settings["vllm_site_args"], nodes[0].args))
    if advice:
        out.append(advice)
    if len(nodes) > 1 and acc.vendor != "cpu":
        for node in nodes:
            if not node.interface:
                out.append("host %s: vllm_control_interface is unset; NCCL and Gloo will guess the interface"
                           % node.host)
            if fabric.rdma and not node.hcas:
                out.append("host %s: vllm_ib_hcas is unset; NCCL will use every HCA it finds" % node.host)
    return out

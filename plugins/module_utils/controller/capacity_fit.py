# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Will the weights load? The plan compares the model's weights with one replica's GPU memory at the memory
utilization vLLM will use, before any host is touched, and names a layout that fits. No Ansible imports.

The estimate is simple and errs on the side of loading (a refusal is certain, never a guess):
- A replica is the GPUs that hold one copy of the weights: tensor x pipeline parallel. With expert parallel
  (dep) the routed experts are spread over every rank of the expert-parallel group (tensor x data parallel),
  so the replica is every GPU of the cluster.
- The weights are counted once per replica, shared evenly. What a GPU holds twice is not counted: with expert
  parallel the dense part (attention, shared experts, embeddings, vision tower: a few % of a Kimi checkpoint)
  sits on every data-parallel rank, and tensor parallel repeats the norms (and, with mm-encoder-tp-mode data,
  the vision encoder). So the real load per GPU is a little above this figure, never below.
- The replica's memory is its GPUs x one GPU's memory (hardware.CATALOG, in GiB as nvidia-smi and amd-smi
  report it) x gpu-memory-utilization as compiled (vLLM's default 0.9 when nothing sets it): the share vLLM
  takes for the weights, activations and the KV cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import profiles
from ansible_collections.inferops.vllm.plugins.module_utils.node import hardware

GB = 10 ** 9
GIB = 1 << 30
# vLLM's CacheConfig.gpu_memory_utilization when no flag sets it (0.30-0.33)
VLLM_DEFAULT_UTILIZATION = 0.9
# Below this share of the replica's usable memory left after the weights, the plan warns. What is left pays for
# the activations of a max-num-batched-tokens forward pass and the CUDA graphs (a few GiB per GPU) before the KV
# cache: under 10 % (about 15 GB of an H200 at 0.97) leaves the cache a few GiB per GPU, so a handful of long
# requests at a time, or a start that stops at "No available memory for the cache blocks".
KV_SHARE_MIN = 0.10
# The most nodes a suggestion may name.
MAX_NODES = 64
# The order in which a suggestion prefers layouts: one node first, then the throughput layouts.
PREFERENCE = ("single", "dep", "tp_dp", "tp_pp", "tp")


def size(nbytes: float) -> str:
    """Bytes for people, in decimal units as checkpoints are quoted: 1.50 TB, 595 GB, 12.3 GB."""
    n = abs(nbytes)
    if n >= 10 ** 12:
        return "%.2f TB" % (n / 10 ** 12)
    if n >= 100 * GB:
        return "%.0f GB" % (n / GB)
    return "%.1f GB" % (n / GB)


@dataclass(frozen=True)
class Weights:
    nbytes: int
    source: str          # profile kimi_k3 | vllm_model_weight_gb


def weights(profile_name: str, profile: Mapping[str, Any], model: Optional[str],
            weight_gb: Any) -> Tuple[Optional[Weights], str]:
    """The weights' size and where it came from, or None and why the check is skipped.
    vllm_model_weight_gb wins; 0 turns the check off. The profile's figure holds only for the profile's model."""
    if weight_gb is not None:
        if int(weight_gb) == 0:
            return None, "vllm_model_weight_gb is 0 (check off)"
        return Weights(int(weight_gb) * GB, "vllm_model_weight_gb"), ""
    known = profile.get("weight_bytes")
    if not known:
        return None, "profile %s does not know the weights' size (set vllm_model_weight_gb)" % profile_name
    if model != profile.get("model"):
        return None, ("vllm_model %s is not profile %s's %s, whose size it knows (set vllm_model_weight_gb)"
                      % (model, profile_name, profile.get("model")))
    return Weights(int(known), "profile %s" % profile_name), ""


def replica_gpus(tp: int, pp: int, dp: int, expert_parallel: bool) -> int:
    """GPUs that hold one copy of the weights (module docstring)."""
    return tp * pp * (dp if expert_parallel else 1)


def compiled_utilization(args: Mapping[str, Any]) -> float:
    """gpu-memory-utilization as compiled. A fixed kv-cache-memory-bytes makes vLLM ignore it for the cache: the
    weights may then take the whole GPU (1.0), and the KV warning is left to that fixed size."""
    if args.get("kv-cache-memory-bytes") is not None:
        return 1.0
    value = args.get("gpu-memory-utilization")
    return VLLM_DEFAULT_UTILIZATION if value is None else float(value)


def strategy_utilization(profile: Mapping[str, Any], acc: hardware.Accelerator, strategy: str,
                         overrides: Iterable[Optional[Mapping[str, Any]]] = ()) -> float:
    """gpu-memory-utilization a strategy would compile to: the profile's layers in the launch's order (profile,
    family, strategy, strategy x GPU), then the site's and the head's own flags (null drops the value)."""
    layers = [args for args, _env, _source in profiles.layers(profile, "", acc.family, strategy, acc.model, any_traffic=True)]
    layers += list(overrides)
    value: Any = None
    for args in layers:
        for flag, v in (args or {}).items():
            if str(flag).lstrip("-") == "gpu-memory-utilization":
                value = v
    return compiled_utilization({"gpu-memory-utilization": value})


@dataclass(frozen=True)
class Fit:
    weights: Weights
    gpu_model: str
    gpu_bytes: int        # one GPU's memory
    gpus: int             # one replica's GPUs
    replicas: int         # replicas in the cluster
    utilization: float

    @property
    def usable(self) -> int:
        return int(self.gpus * self.gpu_bytes * self.utilization)

    @property
    def left(self) -> int:
        """What one replica keeps for activations and the KV cache once the weights are in (negative: no load)."""
        return self.usable - self.weights.nbytes

    @property
    def fits(self) -> bool:
        return self.left >= 0

    @property
    def share_left(self) -> float:
        return self.left / self.usable if self.usable else -1.0

    @property
    def roomy(self) -> bool:
        return self.share_left >= KV_SHARE_MIN

    def memory(self) -> str:
        """8 x 141 GiB (H200) at 0.97 = 1.18 TB"""
        return "%d x %d GiB (%s) at %s = %s" % (self.gpus, self.gpu_bytes // GIB, self.gpu_model,
                                                _util(self.utilization), size(self.usable))

    def text(self) -> str:
        """The plan's one line: 1.50 TB of weights (profile kimi_k3) in 16 x 141 GiB (H200) at 0.90 = 2.18 TB;
        683 GB (31 %) left for activations and the KV cache."""
        head = "%s of weights (%s) in %s" % (size(self.weights.nbytes), self.weights.source, self.memory())
        if not self.fits:
            return head + "; %s short" % size(-self.left)
        return head + "; %s (%d %%) left for activations and the KV cache" % (size(self.left),
                                                                              int(self.share_left * 100))

    def summary(self) -> Dict[str, Any]:
        return {"checked": True, "weights_bytes": self.weights.nbytes, "weights_source": self.weights.source,
                "replica_gpus": self.gpus, "replicas": self.replicas, "gpu_memory_bytes": self.gpu_bytes,
                "gpu_memory_utilization": self.utilization, "usable_bytes": self.usable,
                "kv_bytes_left": self.left, "text": self.text()}


def _util(value: float) -> str:
    return ("%.2f" % value).rstrip("0").rstrip(".") if value != int(value) else "%.1f" % value


def measure(weights_: Weights, acc: hardware.Accelerator, gpus: int, replicas: int, utilization: float) -> Fit:
    return Fit(weights_, acc.model, acc.memory_gib * GIB, gpus, replicas, utilization)


def listed(profile: Mapping[str, Any], strategy: str, model: str) -> bool:
    """Whether the profile's recipe lists the strategy for the GPU model; a strategy the recipe data does not
    name (or a profile without recipe data) restricts nothing."""
    supports = profile.get("recipe_supports") or {}
    return strategy not in supports or model in supports[strategy]


def listed_models(profile: Mapping[str, Any]) -> List[str]:
    """Every GPU model the recipe lists some strategy for."""
    return sorted({m for models in (profile.get("recipe_supports") or {}).values() for m in models})


def _replica_of(strategy: str, gpus_per_node: int, nodes: int) -> Tuple[int, int]:
    """(GPUs per replica, replicas) of a strategy's default layout on `nodes` nodes (cluster._layout)."""
    if strategy == "tp_dp":
        return gpus_per_node, nodes
    return gpus_per_node * nodes, 1      # single (one node), dep (expert parallel), tp, tp_pp


def strategies_for(nodes: int, moe: bool) -> Tuple[str, ...]:
    """The strategies the plan accepts on `nodes` nodes, in PREFERENCE order (dp, never a recipe layout, aside)."""
    wanted = ("single", "dep") if nodes == 1 else ("dep", "tp_dp", "tp_pp", "tp")
    return tuple(s for s in PREFERENCE if s in wanted and (moe or s != "dep"))


@dataclass(frozen=True)
class Option:
    strategy: str
    nodes: int
    listed: bool               # the recipe lists it for the GPU model (or, with `like`, for a model of its family)
    fit: Optional[Fit]         # None: the weights' size is unknown

    def text(self, nodes_now: int) -> str:
        """vllm_strategy: tp_pp (one replica over 16 GPUs: 2.18 TB at 0.9), on 2 nodes when that is a change."""
        where = "" if self.nodes == nodes_now else "%d nodes with " % self.nodes
        unlisted = "" if self.listed else ", which the recipe does not list for this GPU"
        if self.fit is None:
            return "%svllm_strategy: %s%s" % (where, self.strategy, unlisted)
        shape = ("one replica over %d GPUs" % self.fit.gpus if self.fit.replicas == 1
                 else "%d replicas of %d GPUs" % (self.fit.replicas, self.fit.gpus))
        return "%svllm_strategy: %s (%s: %s at %s)%s" % (where, self.strategy, shape, size(self.fit.usable),
                                                         _util(self.fit.utilization), unlisted)


def option(strategy: str, nodes: int, weights_: Optional[Weights], acc: hardware.Accelerator, gpus_per_node: int,
           profile: Mapping[str, Any], overrides: Sequence[Optional[Mapping[str, Any]]] = (),
           like: Sequence[str] = ()) -> Option:
    """One candidate layout; `like`: GPU models whose recipe listing stands in for this one's."""
    fit = None
    if weights_ is not None:
        gpus, replicas = _replica_of(strategy, gpus_per_node, nodes)
        fit = measure(weights_, acc, gpus, replicas, strategy_utilization(profile, acc, strategy, overrides))
    return Option(strategy, nodes, any(listed(profile, strategy, m) for m in (acc.model,) + tuple(like)), fit)


def best(weights_: Optional[Weights], acc: hardware.Accelerator, gpus_per_node: int, nodes: int, moe: bool,
         profile: Mapping[str, Any], overrides: Sequence[Optional[Mapping[str, Any]]] = (),
         exclude: Sequence[str] = (), like: Sequence[str] = ()) -> Optional[Option]:
    """The layout to name instead: on these nodes, then on more, the first in PREFERENCE order that the recipe
    lists for the GPU model and that holds the weights with room for the KV cache; one it does not list only
    when none it lists fits on that many nodes."""
    for n in range(nodes, MAX_NODES + 1):
        found = [option(s, n, weights_, acc, gpus_per_node, profile, overrides, like)
                 for s in strategies_for(n, moe) if not (n == nodes and s in exclude)]
        found = sorted((o for o in found if o.fit is None or o.fit.roomy), key=lambda o: not o.listed)
        if found:
            return found[0]
    return None


def roomier_gpus(weights_: Weights, acc: hardware.Accelerator, utilization: float) -> List[str]:
    """The GPU models of which one node holds the weights with room for the KV cache (the same vendor first)."""
    out = [a for a in hardware.CATALOG.values()
           if a.vendor != "cpu" and a.model != acc.model
           and measure(weights_, a, a.gpus_per_node, 1, utilization).roomy]
    return [a.model for a in sorted(out, key=lambda a: (a.vendor != acc.vendor, a.model))]


@dataclass(frozen=True)
class Shape:
    """The cluster's layout as the check needs it (cluster.Layout plus the node count)."""
    strategy: str
    tp: int
    pp: int
    dp: int
    expert_parallel: bool
    nodes: int
    gpus_per_node: int


@dataclass(frozen=True)
class Verdict:
    summary: Dict[str, Any]
    warnings: Tuple[str, ...] = ()
    # (variable, value, problem, fix) when the weights cannot load
    refusal: Optional[Tuple[str, Any, str, str]] = None


def judge(cluster_name: str, profile_name: str, profile: Mapping[str, Any], acc: hardware.Accelerator,
          shape: Shape, model: Optional[str], settings: Mapping[str, Any], head_args: Mapping[str, Any],
          overrides: Sequence[Optional[Mapping[str, Any]]] = ()) -> Verdict:
    """The capacity check of one cluster: its summary, a warning when little is left for the KV cache, or the
    refusal. settings: the cluster-wide variables (vllm_strategy, vllm_model_weight_gb, ...); head_args: the
    head's compiled flags; overrides: vllm_site_args and the head's vllm_args (for the layouts it suggests)."""
    if acc.vendor == "cpu":
        return Verdict({"checked": False, "reason": "CPU nodes: no GPU memory to compare"})
    found, reason = weights(profile_name, profile, model, settings.get("vllm_model_weight_gb"))
    if found is None:
        return Verdict({"checked": False, "reason": reason})
    fit = measure(found, acc, replica_gpus(shape.tp, shape.pp, shape.dp, shape.expert_parallel),
                  1 if shape.expert_parallel else shape.dp, compiled_utilization(head_args))
    if fit.roomy:
        return Verdict(fit.summary())
    instead = best(found, acc, shape.gpus_per_node, shape.nodes, bool(profile.get("moe")), profile, overrides,
                   exclude=(shape.strategy,))
    layout = instead.text(shape.nodes) if instead else "more nodes"
    if not fit.fits:
        fix = "use " + layout
        gpus = roomier_gpus(found, acc, fit.utilization)
        if gpus:
            fix += ", or GPUs with more memory (one node of %s holds it)" % _names(gpus[:3])
        variable, value = _layout_variable(shape, settings)
        return Verdict(fit.summary(), refusal=(
            variable, value, "one replica of this layout is %d GPUs and cannot hold the weights: %s of weights "
            "(%s) over %s" % (fit.gpus, size(found.nbytes), found.source, fit.memory()), fix))
    return Verdict(fit.summary(), warnings=(
        "cluster %s: %s of weights (%s) leave %s (%d %%) of one replica's %s for activations and the KV cache; "
        "under %d %%, few requests fit at a time, or the start finds no memory for the cache blocks. A layout "
        "with room: %s" % (cluster_name, size(found.nbytes), found.source, size(fit.left),
                           int(fit.share_left * 100), fit.memory(), int(KV_SHARE_MIN * 100), layout),))


def _layout_variable(shape: Shape, settings: Mapping[str, Any]) -> Tuple[str, Any]:
    """The variable to name in a refusal: the tensor-parallel size where the user made a replica smaller than
    the strategy's own, else the strategy (the default one included)."""
    tp_set = settings.get("vllm_tensor_parallel_size")
    if tp_set is not None and not shape.expert_parallel and shape.strategy in ("single", "dp") \
            and shape.tp * shape.pp < shape.gpus_per_node:
        return "vllm_tensor_parallel_size", tp_set
    return "vllm_strategy", shape.strategy


def _names(models: Sequence[str]) -> str:
    return models[0] if len(models) == 1 else "%s or %s" % (", ".join(models[:-1]), models[-1])


def recipe_advice(cluster_name: str, profile_name: str, profile: Mapping[str, Any], acc: hardware.Accelerator,
                  shape: Shape, weights_: Optional[Weights],
                  overrides: Sequence[Optional[Mapping[str, Any]]] = ()) -> Optional[str]:
    """The warning for a strategy the recipe does not list for this GPU model, naming the layout to use instead:
    one the recipe lists for the model that holds the weights (capacity_fit.best). When the recipe lists nothing
    for the model, it says so and names what it lists for the model's hardware family."""
    if listed(profile, shape.strategy, acc.model):
        return None
    names = (profile.get("recipe_supports") or {}).get(shape.strategy) or []
    text = "cluster %s: the %s recipe does not list strategy %s for %s (%s)" % (
        cluster_name, profile_name, shape.strategy, acc.model,
        "it lists it for %s" % ", ".join(names) if names else "it has no %s layout" % shape.strategy)
    like: Tuple[str, ...] = ()
    if acc.model not in listed_models(profile):
        like = tuple(m for m in listed_models(profile) if hardware.CATALOG[m].family == acc.family)
        text += "; it lists no layout for %s at all%s" % (
            acc.model, ", so this names one it lists for %s (%s)" % ("/".join(like), acc.family) if like else "")
    moe = bool(profile.get("moe"))
    instead = best(weights_, acc, shape.gpus_per_node, shape.nodes, moe, profile, overrides,
                   exclude=(shape.strategy,), like=like)
    if instead is None:
        if weights_ is None:
            return text
        return text + "; no layout holds %s on up to %d nodes" % (size(weights_.nbytes), MAX_NODES)
    text += ". Use %s" % instead.text(shape.nodes)
    # the layouts the recipe lists here that were passed over because the weights do not fit them
    for s in strategies_for(shape.nodes, moe):
        if s in (shape.strategy, instead.strategy):
            continue
        o = option(s, shape.nodes, weights_, acc, shape.gpus_per_node, profile, overrides, like)
        if o.listed and o.fit is not None and not o.fit.roomy:
            text += "; the recipe also lists %s, but its replica of %s cannot hold %s of weights with room" % (
                o.strategy, o.fit.memory(), size(o.fit.weights.nbytes))
    return text

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan as a person reads it (playbooks/plan.yml prints it): per cluster a short summary, where each value
that is not vLLM's default came from, the head's whole launch one option per line, and each follower as its
differences from the head. The whole files stay in the output directory (plan_output.write_review).

A list of short lines and nothing else: every stdout callback prints a list one item per line (the default
callback's JSON, the yaml callback, minimal, the json callback), while a string with newlines becomes one
escaped line or a block. No line starts with a space or holds ': ', which the yaml callback would quote.
No Ansible imports."""

from __future__ import annotations

import re
import textwrap
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import disagg, version_change
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import OWNED_FLAGS
from ansible_collections.inferops.vllm.plugins.module_utils.controller.launch import flag_text
from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_options

# The yaml callback folds a list item at its first space past column 80; the item starts at column 6. Lists of
# flags fit in that; a sentence (a warning) is cut at PROSE, which the yaml callback folds as one item.
WIDTH = 74
PROSE = 100
# Where the weights come from (launch.cluster.model.source), in words.
WEIGHTS = {"site": "staged from the site store", "local": "read from the node's cache",
           "hub": "downloaded by each node from the Hub"}
# Sources (launch.sources) that are inventory variables, by who usually sets them.
SITE_SOURCES = ("vllm_site_args", "vllm_site_env")
INVENTORY_SOURCES = ("vllm_args", "vllm_env") + tuple(v for v in OWNED_FLAGS.values() if v)


def plan_lines(launches: Mapping[str, Mapping[str, Any]], drivers: Optional[Mapping[str, Any]] = None,
               output_dir: str = "", site_lines: Sequence[str] = ()) -> List[str]:
    """Every cluster of `launches` ({host: launch}, as compile_cluster returns them), in the order of its first
    host, then site_lines (the site's blocks: its listeners). drivers: {host: the driver it gets}
    (nvidia_driver_branch on NVIDIA, rocm_version on AMD)."""
    clusters: Dict[str, List[Mapping[str, Any]]] = {}
    for launch in launches.values():
        clusters.setdefault(launch["cluster"]["name"], []).append(launch)
    out: List[str] = []
    for nodes in clusters.values():
        out += cluster_lines(sorted(nodes, key=lambda n: n["rank"]), drivers or {})
    for name, sides in sorted(disagg.deployments(launches).items()):   # P/D deployments: which clusters are a side
        out += wrap("== P/D deployment %s: prefill %s; decode %s ==" % (
            name, ", ".join(h["cluster"]["name"] for h in sides["prefill"]) or "none",
            ", ".join(h["cluster"]["name"] for h in sides["decode"]) or "none"))
    out += site_lines
    if output_dir:
        out.append("files of each node (.yaml, .json, .sh) in %s/<cluster>/" % output_dir.rstrip("/"))
    elif out:
        out.append("no files written (-e cluster_plan_output_dir=DIR writes them)")
    return out


def cluster_lines(nodes: Sequence[Mapping[str, Any]], drivers: Mapping[str, Any]) -> List[str]:
    """One cluster: its nodes' launches, head first."""
    head = nodes[0]
    return (summary_lines(head, drivers) + source_lines(head) + head_lines(head)
            + [line for node in nodes[1:] for line in follower_lines(head, node)])


def summary_lines(head: Mapping[str, Any], drivers: Mapping[str, Any]) -> List[str]:
    c, args = head["cluster"], head["args"]
    model = c.get("model") or {}
    out = ["== cluster %s (profile %s, vLLM %s) ==" % (c["name"], c["profile"], c["vllm_version"])]
    weights = "model %s" % args.get("model")
    if model.get("revision"):
        weights += " at %s" % str(model["revision"])[:12]
    if model.get("source") in WEIGHTS:
        weights += ", %s" % WEIGHTS[model["source"]]
    out.append(weights)
    cache = head.get("weight_cache")
    if cache:   # vllm_weight_cache: what keeps the weights in GPU memory across restarts
        out += wrap("weight cache: vllm preload beside vLLM on each node (sockets %s, health port %s, rendezvous "
                    "port %s)" % (cache["dir"], cache["health_port"], cache["master_port"]))
    out.append("strategy %s, layout %s" % (c["strategy"], layout(c, args)))
    nodes = "%d x %d %s%s, head %s" % (len(c["nodes"]), c["gpus_per_node"], c["gpu_model"],
                                       " over %s" % c["fabric"] if c["fabric"] != "none" else "", c["head"])
    out += wrap(nodes + (" (%s)" % c["head_address"] if c.get("head_address") else ""))
    for domain, hosts in (c.get("nvlink_domains") or {}).items():
        out += pack("NVLink domain %s holds " % domain, hosts)
    backends = ["all2all %s" % (c.get("all2all_backend") or "vLLM's choice")] if c["expert_parallel"] else []
    backends.append("MoE kernel %s" % (c.get("moe_backend") or "vLLM's choice"))
    out.append("backends " + ", ".join(backends))
    pd = c.get("pd")
    if pd:   # a side of a P/D deployment (disagg): what it does, how its KV moves
        out += wrap("%s side of P/D deployment %s: %s (%s) over %s, side channel from port %s" % (
            pd["role"], pd["deployment"], pd["connector"], pd["kv_role"], pd["transport"].upper(),
            pd["side_channel_port"]))
    if c.get("version_change"):   # an upgrade to another vLLM: what changes, flag by flag
        out += version_change.summary_lines(c["version_change"])
    out.append("endpoint %s%s" % (c["endpoint"], " on the head" if c["load_balancing"] != "hybrid"
                                  else " and every node's own (hybrid)"))
    secrets = head.get("secret_env") or {}
    out.append("model name %s, %s" % (args.get("served-model-name"),
                                      "API key from %s" % secrets["VLLM_API_KEY"] if "VLLM_API_KEY" in secrets
                                      else "no API key"))
    out.append("image %s" % (c["image"] or "not set (vllm_image)"))
    pull = c.get("pull") or {}
    if pull.get("mirror"):   # vllm_image_mirror: what the nodes pull instead
        out += wrap("pulled through the site registry %s as %s%s" % (
            pull["mirror"], pull["pull_ref"], " (mode copy: each node pulls its architecture's image of that index, by "
            "its own digest)" if pull.get("mode") == "copy" else " (mode %s)" % pull.get("mode")))
    out += pack("host stack ", host_stack_parts(head["host_stack"], drivers.get(head["host"])))
    capacity = c.get("capacity") or {}
    if capacity.get("text"):   # the weights against one replica's GPU memory (cluster's capacity check)
        out += wrap("capacity " + str(capacity["text"]))
    warnings = c.get("warnings") or ()
    if warnings:   # Ansible's own warnings (the plan action), which every callback shows as such
        out.append("%d warning%s for this cluster: see Ansible's [WARNING] lines" % (
            len(warnings), "" if len(warnings) == 1 else "s"))
    return out


def layout(c: Mapping[str, Any], args: Mapping[str, Any]) -> str:
    """TP8 x PP2, TP1 x DP16 with EP16, ..."""
    parts = ["TP%d" % c["tensor_parallel"]]
    if c["pipeline_parallel"] > 1:
        parts.append("PP%d" % c["pipeline_parallel"])
    if c["data_parallel"] > 1:
        parts.append("DP%d" % c["data_parallel"])
    text = " x ".join(parts)
    if args.get("decode-context-parallel-size"):
        text += ", DCP%s" % args["decode-context-parallel-size"]
    if c["expert_parallel"]:
        text += ", expert parallel EP%d" % (c["tensor_parallel"] * c["data_parallel"])
    return text + (", load balancing %s" % c["load_balancing"] if c["load_balancing"] != "internal" else "")


def host_stack_parts(stack: Mapping[str, Any], driver: Any) -> List[str]:
    """What the host roles install and check on the node (the launch's host_stack)."""
    vendor = stack["vendor"]
    if vendor == "nvidia":
        parts = ["NVIDIA driver %s" % ("branch %s" % driver if driver else "(nvidia_driver_branch)"),
                 "Fabric Manager %s" % ("on" if stack["fabric_manager"] else "off"),
                 "IMEX %s" % ("domain %s (%d trays)" % (stack["imex"]["domain"], len(stack["imex"]["peers"] or ()))
                              if stack.get("imex") else "off"),
                 "GPUDirect RDMA %s" % stack["gpudirect"]]
    elif vendor == "amd":
        parts = ["ROCm %s" % (driver or "(rocm_version)")]
    else:
        parts = ["no GPU driver"]
    parts.append("toolkit %s" % stack["toolkit"])
    parts.append("fabric check %s" % stack["collective"])
    return parts


def label(source: str) -> str:
    """Who set a value, from a launch's sources: the profile (per family, strategy, GPU), the site, the
    inventory (the plan cannot tell a cluster's group_vars from host_vars), a fabric default."""
    if source in SITE_SOURCES:
        return "site (%s)" % source
    if source in INVENTORY_SOURCES:
        return "inventory (%s)" % source
    return source


def source_lines(launch: Mapping[str, Any]) -> List[str]:
    """`<who> sets <flag value>, ...`, one group per source in the order the layers apply."""
    groups: Dict[str, List[str]] = {}
    for name, source in (launch.get("sources") or {}).items():
        if source == "vllm_compile_cache_dir":
            continue   # fixed paths inside the container; its -v line shows the node's directory
        if name in launch["args"]:
            item = flag_text(name, launch["args"][name], launch["argv"]).lstrip("-")
        elif name in launch["env"]:
            item = "%s=%s" % (name, launch["env"][name])
        else:
            continue
        groups.setdefault(label(source), []).append(item)
    out: List[str] = []
    for who, items in groups.items():
        out += pack("%s sets " % who, items)
    return out


def head_lines(head: Mapping[str, Any]) -> List[str]:
    """The head's whole launch: each docker run option, then vllm serve and each flag, once."""
    out = ["head %s (rank 0) docker run options" % head["host"]]
    out += option_lines(head)
    out.append("head %s runs vllm serve %s" % (head["host"], head["args"].get("model")))
    out += [flag_text(flag, value, head["argv"]) for flag, value in head["args"].items() if flag != "model"]
    return out


def option_lines(launch: Mapping[str, Any]) -> List[str]:
    return ["%s %s" % (option, value) if value else option for option, value in _named_options(launch)]


def _named_options(launch: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """docker_options with each secret as `-e NAME`, value never shown, and what holds it."""
    secrets = launch.get("secret_env") or {}
    out = []
    for option, value in docker_options(launch):
        if option == "-e" and value in secrets:
            out.append(("-e", "%s (from %s, in a 0600 env file)" % (value, secrets[value])))
        else:
            out.append((option, value))
    return out


def follower_lines(head: Mapping[str, Any], node: Mapping[str, Any]) -> List[str]:
    """A follower as what differs from the head: flags, environment, docker options."""
    diff = differences(dict(_flag_items(head)), dict(_flag_items(node)))
    diff += differences(dict(_env_items(head)), dict(_env_items(node)))
    head_opts = [o for o in _named_options(head) if o[0] != "-e"]
    node_opts = [o for o in _named_options(node) if o[0] != "-e"]
    diff += ["%s %s (not on the head)" % o for o in node_opts if o not in head_opts]
    diff += ["no %s %s (the head has it)" % o for o in head_opts if o not in node_opts]
    title = "follower %s (rank %d)" % (node["host"], node["rank"])
    return [title + (" differs from the head in" if diff else " is the same as the head")] + diff


def _flag_items(launch: Mapping[str, Any]) -> Iterable[Tuple[str, str]]:
    for flag, value in launch["args"].items():
        text = flag_text(flag, value, launch["argv"])
        yield "--" + flag, text[len(flag) + 3:] if text.startswith("--%s " % flag) else text


def _env_items(launch: Mapping[str, Any]) -> Iterable[Tuple[str, str]]:
    for option, value in _named_options(launch):
        if option == "-e":
            name, _sep, rest = value.partition("=")
            yield "-e " + name, rest


def differences(head: Mapping[str, str], node: Mapping[str, str]) -> List[str]:
    """`name value (head value)` for each name whose value differs; bare flags and removed ones said so."""
    out = []
    for name, value in node.items():
        if name not in head:
            out.append("%s (not on the head)" % _item(name, value))
        elif head[name] != value:
            out.append("%s (head %s)" % (_item(name, value), head[name] or "on"))
    out += ["no %s (head %s)" % (name, value or "on") for name, value in head.items() if name not in node]
    return out


def _item(name: str, value: str) -> str:
    if not value or value.startswith("--"):
        return value or name          # a bare flag (value ""), or its --no- form
    return "%s%s%s" % (name, "=" if name.startswith("-e ") else " ", value)


def wrap(text: str) -> List[str]:
    """Prose as lines of at most PROSE characters, cut after a sentence or a clause ('. ', '; ') where one
    fits, else between words; a word longer than that keeps its own line."""
    out: List[str] = []
    for clause in re.split(r"(?<=[.;]) ", text):
        if out and len(out[-1]) + 1 + len(clause) <= PROSE:
            out[-1] += " " + clause
        else:
            out += textwrap.wrap(clause, PROSE, break_long_words=False, break_on_hyphens=False) or [clause]
    return out or [text]


def pack(prefix: str, items: Sequence[str]) -> List[str]:
    """prefix + items joined by ', ', over as many lines as WIDTH needs, each line starting with prefix."""
    out: List[str] = []
    line = ""
    for item in items:
        if line and len(prefix) + len(line) + 2 + len(item) > WIDTH:
            out.append(prefix + line)
            line = ""
        line = item if not line else line + ", " + item
    if line:
        out.append(prefix + line)
    return out

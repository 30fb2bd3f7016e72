# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke report's Startup section: each node's startup phases (what vllm_startup read from its log,
module_utils/node/startup_log.py) and the cluster's, where a slow start shows which phase it spent."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.node.node_state import docker_time
from ansible_collections.inferops.vllm.plugins.module_utils.node.startup_log import PHASE_NAMES, READY

Startup = Dict[str, Any]
# how a node's cache root holds its key's site compile cache (module_utils/node/compile_cache.py's record)
SITE_CACHE_WORDS = {"restored": "took the site's before it started", "collected": "compiled it and shared it",
                    "present": "compiled it (another node had shared it)", "none": "has none yet"}


def cluster(nodes: Dict[str, Startup]) -> Startup:
    """The nodes' reads and the cluster's figures: its first container start, when its API was ready (the node that
    says so, the head), seconds between the two, and the slowest node of each phase."""
    read = {host: s for host, s in sorted(nodes.items()) if s.get("phases") is not None}
    starts = [(docker_time(s["started_at"]), host) for host, s in read.items()]
    starts = [(t, host) for t, host in starts if t is not None]
    ready = [(docker_time(s["phases"][READY]["at"]), host) for host, s in read.items() if READY in s["phases"]]
    first = min(starts) if starts else None
    served = min((r for r in ready if r[0] is not None), default=None)
    slowest = {}
    for phase in PHASE_NAMES:
        times = [(s["phases"][phase]["after_s"], host) for host, s in read.items() if phase in s["phases"]]
        if times:
            after, host = max(times)
            slowest[phase] = {"node": host, "after_s": after}
    return {
        "nodes": dict(sorted(nodes.items())),
        "first_start": {"node": first[1], "at": read[first[1]]["started_at"]} if first else None,
        "ready_after_s": round(served[0] - first[0], 3) if first and served else None,
        "ready_node": served[1] if served else None,
        "slowest": slowest,
        "compile_cache": sorted({s["compile_cache"] for s in read.values() if s.get("compile_cache")}),
        "weights_from": {host: s["weights_from"] for host, s in sorted(read.items()) if s.get("weights_from")},
        "site_cache": {host: s["site_cache"] for host, s in sorted(nodes.items()) if s.get("site_cache")},
    }


def _cell(entry: Optional[Dict[str, Any]]) -> str:
    if not entry:
        return "-"
    took = entry.get("took_s")
    shown = "" if took is None else " (took %s s)" % ("%.1f" % took if took >= 1 else "%.2f" % took)
    return "+%.1f s%s" % (entry["after_s"], shown)


def markdown(section: Startup) -> List[str]:
    """The report's lines for the section (none without a node read)."""
    nodes = section.get("nodes") or {}
    if not nodes:
        return []
    lines = ["", "## Startup", ""]
    if section.get("ready_after_s") is not None:
        lines.append("The API was ready on %s %.1f s after the cluster's first container started (%s, %s)." % (
            section["ready_node"], section["ready_after_s"], section["first_start"]["node"],
            section["first_start"]["at"]))
    else:
        lines.append("No node's log says its API was ready.")
    slow = ", ".join("%s %s (+%.1f s)" % (phase, s["node"], s["after_s"]) for phase, s in section["slowest"].items())
    if slow:
        lines.append("Slowest node of each phase: %s." % slow)
    if section.get("compile_cache"):
        lines.append("torch.compile cache: %s." % ", ".join(section["compile_cache"]))
    if section.get("weights_from"):
        lines.append("Weights from: %s." % ", ".join(
            "%s %s" % (host, where) for host, where in section["weights_from"].items()))
    if section.get("site_cache"):
        lines.append("Site compile cache: %s." % ", ".join(
            "%s %s" % (host, SITE_CACHE_WORDS.get(state, state)) for host, state in section["site_cache"].items()))
    lines += ["", "Seconds from each node's container start; vLLM's own figure for the phase in brackets.", "",
              "| node | image recorded | weights verified | container started | %s |" % " | ".join(PHASE_NAMES),
              "|---|---|---|---|%s" % ("---|" * len(PHASE_NAMES))]
    notes = []
    for host, s in nodes.items():
        if s.get("short"):
            notes.append("%s: the log read %s." % (host, s["short"]))
        if s.get("phases") is None:
            lines.append("| %s | %s | %s | %s |%s" % (host, s.get("image_pulled_at") or "-", s.get("weights_staged_at") or "-",
                                                      "not read: %s" % (s.get("error") or "no read"),
                                                      " - |" * len(PHASE_NAMES)))
            continue
        cells = [_cell(s["phases"].get(phase)) for phase in PHASE_NAMES]
        lines.append("| %s | %s | %s | %s | %s |" % (host, s.get("image_pulled_at") or "-",
                                                     s.get("weights_staged_at") or "-", s["started_at"],
                                                     " | ".join(cells)))
    return lines + ([""] + notes if notes else [])

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each node judged before it serves: its own health findings (node/gpu_health.py) and each measured figure (an
all-reduce's bus bandwidth, a rail's RDMA bandwidth) against its peers of the same GPU model, and against the
platform's published floor where one exists. The fleet is its own baseline: a figure a stated fraction below the
median of its peers fails, so no site needs to know its numbers in advance; a floor catches a fleet that is slow as a
whole. A failing node is fenced, with its findings and the likely fix. No Ansible imports."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

# Published per-platform floors: (GPU model, GPUs in the measured group, figure) -> (floor, source). A site overrides a
# row by its key `<model>/<gpus>/<figure>`; a platform without a row is judged against its peers alone.
FLOORS: Dict[Tuple[str, int, str], Tuple[float, str]] = {
    # all_reduce_perf on one node's 8 GPUs: 460-480 GB/s bus bandwidth; more than 20 % below suggests a fault
    ("H100", 8, "allreduce_busbw_gbps"): (368.0, "NVIDIA nccl-tests figures for 8 x H100 SXM (460-480 GB/s), less 20 %"),
    # a whole GB200 NVL72 rack: about 745 GB/s on average, 835-847 GB/s at 4-8 GiB messages
    ("GB200", 72, "allreduce_busbw_gbps"): (596.0, "coreweave/nccl-tests #43: a GB200 NVL72 rack's average 745 GB/s, "
                                                   "less 20 %"),
}
DEFAULT_FRACTION = 0.15   # below the median of its peers by more than this, a figure fails


@dataclass(frozen=True)
class Verdict:
    host: str
    passed: bool
    reasons: List[str] = field(default_factory=list)   # one line each: what failed, the figure, the fix

    def line(self) -> str:
        return "%s: %s" % (self.host, "; ".join(self.reasons) if self.reasons else "passed")


def floor_for(model: str, gpus: int, figure: str,
              overrides: Mapping[str, Any]) -> Optional[Tuple[float, str]]:
    """The absolute floor of a figure: the site's (overrides[`<model>/<gpus>/<figure>`]), else the published row,
    else None."""
    key = "%s/%d/%s" % (model, gpus, figure)
    if key in overrides:
        return float(overrides[key]), "the site's floor for %s" % key
    return FLOORS.get((model, gpus, figure))


def peer_failures(figures: Mapping[str, float], models: Mapping[str, str], figure: str,
                  fraction: float = DEFAULT_FRACTION, gpus: Optional[Mapping[str, int]] = None,
                  overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, str]:
    """{host: why} for each host whose figure is more than `fraction` below the median of the hosts of its GPU model
    (itself included, so two nodes judge each other), or below the platform's floor."""
    out: Dict[str, str] = {}
    by_model: Dict[str, List[str]] = {}
    for host in figures:
        by_model.setdefault(models[host], []).append(host)
    for model, hosts in by_model.items():
        median = statistics.median(figures[host] for host in hosts)
        for host in hosts:
            value = figures[host]
            if len(hosts) > 1 and value < median * (1 - fraction):
                out[host] = "%s %.1f is %.0f %% below the median of its %d %s peers (%.1f)" % (
                    figure, value, 100 * (1 - value / median), len(hosts), model, median)
                continue
            floor = floor_for(model, (gpus or {}).get(host, 0), figure, overrides or {})
            if floor is not None and value < floor[0]:
                out[host] = "%s %.1f is below the floor %.1f (%s)" % (figure, value, floor[0], floor[1])
    return out


def verdicts(hosts: Sequence[str], findings: Mapping[str, Sequence[Mapping[str, Any]]],
             failures: Sequence[Mapping[str, str]]) -> List[Verdict]:
    """Each host's verdict: fenced by a finding that fences (node/gpu_health.Finding as a dict) or by a failed figure
    (peer_failures' results); findings that only warn leave it serving."""
    out = []
    for host in hosts:
        reasons = ["%s: %s. Fix: %s" % (f["where"], f["what"], f["fix"]) for f in findings.get(host, ()) if f["fences"]]
        reasons += [failed[host] + ". Fix: find the slow part (a GPU, an NVLink, a cable, an HCA) with a burn-in of "
                    "this node beside a peer, then reseat or replace it" for failed in failures if host in failed]
        out.append(Verdict(host, not reasons, reasons))
    return out

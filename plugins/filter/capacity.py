# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the capacity curve: KV-cache capacity from a vLLM startup log, and the plot."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.smoke import capacity, report

DOCUMENTATION = r"""
name: kv_capacity
short_description: KV-cache capacity from a vLLM startup log
description:
  - Parses every known format of vLLM's capacity lines (C(GPU KV cache size), C(Maximum concurrency for N tokens per
    request), C(Available KV cache memory), V0 C(# GPU blocks), auto-fit, and the estimate in the error raised when
    max-model-len does not fit) and returns the last value of each; missing ones are null.
  - The C(capacity_svg) filter of this file turns a list of curve points into an SVG line plot.
options:
  _input:
    description: The log text.
    type: str
    required: true
author: inferops.vllm contributors (@inferops)
"""


def capacity_svg(points, metric="max_concurrency", title="KV-cache capacity"):
    xs = [p["max_model_len"] for p in points]
    ys = [p.get(metric) for p in points]
    return report.svg_lines("%s: %s vs max-model-len" % (title, metric), xs, ys, "max-model-len (tokens)", metric)


class FilterModule:
    def filters(self):
        return {"kv_capacity": capacity.from_log, "capacity_svg": capacity_svg}

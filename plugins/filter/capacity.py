# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the capacity curve: KV-cache capacity from a vLLM startup log, and the plot.

Two filters live here, so each has its own documentation file next to this one (kv_capacity.yml,
capacity_svg.yml): ansible-doc reads a .py file's DOCUMENTATION for every filter the file exports."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import capacity, report


def capacity_svg(points, metric="max_concurrency", title="KV-cache capacity"):
    xs = [p["max_model_len"] for p in points]
    ys = [p.get(metric) for p in points]
    return report.svg_lines("%s: %s vs max-model-len" % (title, metric), xs, ys, "max-model-len (tokens)", metric)


class FilterModule:
    def filters(self):
        return {"kv_capacity": capacity.from_log, "capacity_svg": capacity_svg}

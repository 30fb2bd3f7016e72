# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke run's settings: the vllm_smoke module's `options` and `timeouts`
suboptions with their defaults (the module's argument spec is built from these),
and the one dict the suites read."""

from __future__ import annotations

from typing import Any, Dict

TIMEOUTS = {"connect": 10.0, "first_byte": 120.0, "request": 300.0, "probe": 60.0, "suite": 600.0, "run": 1800.0}
OPTIONS = {
    "text_prompt": {"type": "str", "default": "What is the capital of France? Answer with one word."},
    "text_expect": {"type": "list", "elements": "str", "default": ["Paris"]},
    "reasoning_parser": {"type": "str"},
    "expect_reasoning": {"type": "bool", "default": False},
    "image_path": {"type": "path"},
    "vision_prompt": {"type": "str", "default": "Read this receipt. What is the shop name and the total?"},
    "vision_expect": {"type": "list", "elements": "str", "default": ["INFEROPS", "42.17"]},
    "max_model_len": {"type": "int"},
    "long_context_fractions": {"type": "list", "elements": "float", "default": [0.25, 0.5, 0.9]},
    "long_context_expect_needle": {"type": "bool", "default": True},
    "tool_choices": {"type": "list", "elements": "str", "choices": ["auto", "required"], "default": ["auto", "required"]},
    "tool_trials": {"type": "int", "default": 20},
    "tool_retries": {"type": "int", "default": 1},
    "retry_budget": {"type": "int", "default": 16},
    "tool_concurrency": {"type": "int", "default": 8},
    "tool_temperature": {"type": "float"},
    "tool_cases": {"type": "list", "elements": "dict", "default": [], "options": {
        "prompt": {"type": "str", "required": True}, "expect": {"type": "dict", "default": {}}}},
    "tool_first_try_min": {"type": "float", "default": 0.95},
    "tool_final_min": {"type": "float", "default": 1.0},
    "tool_max_tokens": {"type": "int", "default": 512, "no_log": False},
    "load_requests": {"type": "int", "default": 16},
    "load_concurrency": {"type": "int", "default": 4},
    "load_max_tokens": {"type": "int", "default": 64, "no_log": False},
    "load_min_output_ratio": {"type": "float", "default": 0.9},
    "load_prompt": {"type": "str", "default": "Write a short paragraph about the sea."},
    "metrics_interval": {"type": "float", "default": 0.5},
    "max_tokens": {"type": "int", "default": 256, "no_log": False},
}


def settings(params: Dict[str, Any]) -> Dict[str, Any]:
    """The suites' settings: the options with their defaults, the endpoint, the deadlines."""
    given, times_given = params.get("options") or {}, params.get("timeouts") or {}
    opts = {k: (v.get("default") if given.get(k) is None else given[k]) for k, v in OPTIONS.items()}
    times = {k: (v if times_given.get(k) is None else times_given[k]) for k, v in TIMEOUTS.items()}
    key = params.get("api_key")
    return dict(opts, base_url=params["base_url"], api_key=key if key and key != "none" else None,
                probe_timeout=times["probe"], suite_deadline=times["suite"], run_deadline=times["run"], timeouts=times)

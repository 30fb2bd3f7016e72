# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""No recipe: the site gives vllm_model and every flag through vllm_args."""

from __future__ import annotations

PROFILE = {
    "description": "no model recipe; everything comes from the inventory",
    "source": "",
    "model": None,
    "served_model_name": None,
    "moe": False,
}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No recipe: the site gives vllm_model and every flag through vllm_args."""

from __future__ import annotations

PROFILE = {
    "description": "no model recipe; everything comes from the inventory",
    "source": "",
    "model": None,
    "served_model_name": None,
    "moe": False,
}

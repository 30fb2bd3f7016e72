# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_rollout role: the clusters a rollout moves together."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import rollout

DOCUMENTATION = r"""
name: rollout_units
short_description: The clusters a rolling upgrade or restart moves together
description:
  - The sides of a prefill/decode deployment (C(vllm_pd_deployment)) form one unit, moved, judged and rolled back
    together, so that both always run the same image and revision. Every other cluster is a unit of its own.
  - Returns the units in order, each a sorted list of cluster names.
options:
  _input:
    description: The C(vllm_launch.cluster) summaries of the hosts of the rollout (one per node; duplicates are fine).
    type: list
    elements: dict
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Take the units a batch at a time
  ansible.builtin.include_tasks: batch.yml
  loop: "{{ ansible_play_hosts | map('extract', hostvars, ['vllm_launch', 'cluster']) | list
            | inferops.vllm.rollout_units | batch(2) | map('flatten') | list }}"
"""

RETURN = r"""
_value:
  description: The units, in order.
  type: list
  elements: list
  sample: [[k3_decode, k3_prefill], [k3_spare]]
"""


def rollout_units(clusters):
    return rollout.units([dict(c) for c in clusters or [] if hasattr(c, "keys")])


class FilterModule:
    def filters(self):
        return {"rollout_units": rollout_units}

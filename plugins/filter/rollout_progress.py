# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_rollout role: where a rollout stands, from the histories its clusters' heads keep."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import rollout

DOCUMENTATION = r"""
name: rollout_progress
short_description: Where a rolling upgrade or restart stands, from the histories its clusters' heads keep
description:
  - C(stopped) is true once a batch failed (a rollback step's own result aside) - later batches are then not touched.
  - C(reached) lists the clusters a batch moved or tried to, in order.
options:
  _input:
    description: Each host's C(vllm_rollout_history) (a list of steps; hosts without one give an empty list).
    type: list
    elements: list
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Decide whether this batch runs
  ansible.builtin.set_fact:
    vllm_rollout_go: >-
      {{ not (ansible_play_hosts | map('extract', hostvars) | map(attribute='vllm_rollout_history', default=[])
              | inferops.vllm.rollout_progress).stopped }}
"""

RETURN = r"""
_value:
  description: C(stopped) and C(reached).
  type: dict
  sample: {stopped: true, reached: [k3_a, k3_b]}
"""


def rollout_progress(histories):
    return rollout.progress(list(histories or []))


class FilterModule:
    def filters(self):
        return {"rollout_progress": rollout_progress}

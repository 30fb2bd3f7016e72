# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_rollout role: the report of an upgrade or a rolling restart."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import rollout

DOCUMENTATION = r"""
name: rollout_report
short_description: The report of a rolling upgrade or restart, cluster by cluster
description:
  - Turns the steps the vllm_rollout role ran (upgrade, restart, rollback, each with its quick smoke) into one outcome
    per cluster (C(upgraded), C(restarted), C(rolled back), C(rollback failed), C(failed), C(not attempted)), a
    one-line summary with the fix, and a Markdown table.
options:
  _input:
    description: The steps, each with C(cluster), C(step), C(ok), C(image), C(seconds) and C(reason).
    type: list
    elements: dict
    required: true
  clusters:
    description: Every cluster of the rollout, in order.
    type: list
    elements: str
    required: true
  action:
    description: C(upgrade) or C(restart).
    type: str
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Show the rollout
  ansible.builtin.debug:
    msg: "{{ (steps | inferops.vllm.rollout_report(['k3-a', 'k3-b'], 'upgrade')).summary }}"
"""

RETURN = r"""
_value:
  description: C(ok) (every cluster took the change), C(action), C(clusters) (C(name), C(outcome), C(steps)),
    C(summary) and C(markdown).
  type: dict
  sample:
    ok: false
    action: upgrade
    summary: >-
      upgrade stopped at cluster k3-a: lab-node1: vLLM on lab-node1 is not serving: container vllm restarted (exit code 1)
      while vLLM was loading. It was rolled back to registry.example/vllm-openai@sha256:43be... and serves again
      (quick smoke passed): set vllm_image back to that digest in the inventory, or fix the new image, before site.yml
      or upgrade.yml runs again. Not attempted: k3-b
    clusters:
      - {name: k3-a, outcome: rolled back, steps: []}
      - {name: k3-b, outcome: not attempted, steps: []}
    markdown: "# Rollout (upgrade): STOPPED\n..."
"""


def rollout_report(steps, clusters, action):
    return rollout.build([dict(step) for step in steps or []], list(clusters), str(action))


class FilterModule:
    def filters(self):
        return {"rollout_report": rollout_report}

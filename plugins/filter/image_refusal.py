# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_image role: why a node must not move to a digest a rollout rolled back."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils import image_record as record_rules

DOCUMENTATION = r"""
name: image_refusal
short_description: Why a node must not move to a digest that a rollout rolled back on it
description:
  - A rolling upgrade that fails rolls the cluster back and records the digest it left as C(failed) in each node's
    image record. A converge that names that digest again would start the image that just failed.
  - Returns the message with the fix (set the image back, or retry on purpose), or an empty string when the node may
    move to O(ref). Digests compare without the registry, so a mirror's reference matches the upstream one.
options:
  _input:
    description: The node's image record as read, C({}) where it has none.
    type: dict
    required: true
  ref:
    description: The reference the node is asked to run.
    type: str
    required: true
  node:
    description: The node's name, for the message.
    type: str
    required: true
  allow_failed:
    description: Allow the digest anyway (the role's C(vllm_image_retry_failed)).
    type: bool
    default: false
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Refuse a digest that failed its rollout here
  ansible.builtin.assert:
    that: _why | length == 0
    fail_msg: "{{ _why }}"
  vars:
    _why: "{{ record | inferops.vllm.image_refusal(vllm_image_pull_ref, inventory_hostname, vllm_image_retry_failed) }}"
"""

RETURN = r"""
_value:
  description: The refusal with its fix, or an empty string.
  type: str
  sample: >-
    vllm_image vllm/vllm-openai@sha256:9f1c... was rolled back on gpu-a1 by an upgrade that failed with it (image.json
    records it as failed; the rollout report in reports/rollout says why). Set vllm_image back to the digest the node
    runs (vllm/vllm-openai@sha256:43be...), or set vllm_image_retry_failed=true to try this digest again.
"""


def image_refusal(record, ref, node, allow_failed=False):
    return record_rules.refusal(dict(record or {}), str(ref), str(node), bool(allow_failed))


class FilterModule:
    def filters(self):
        return {"image_refusal": image_refusal}

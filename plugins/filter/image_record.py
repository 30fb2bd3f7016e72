# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for a node's image record (module_utils/image_record.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils import image_record as record_rules

DOCUMENTATION = r"""
name: image_record
short_description: A node's image record after a pull or a rollback
description:
  - The record (C(image.json) in the state directory) names the digest a node runs (C(current)), the one before it
    (C(previous), what a rollback goes back to) and the digests a rollout rolled back on this node (C(failed)).
  - C(pull) gives the record once the node has O(ref) to run (unchanged when it runs it already); O(ref) leaves
    C(failed), since pulling it again is a deliberate retry.
  - C(rollback) gives the record once the node went back to C(previous). That digest is C(current) again, the one it
    left joins C(failed), and C(previous) is empty (nothing older is known).
options:
  _input:
    description: The record as read, C({}) where the node has none.
    type: dict
    required: true
  event:
    description: C(pull) or C(rollback).
    type: str
    required: true
    choices: [pull, rollback]
  ref:
    description: The reference the node pulled (C(pull) only).
    type: str
    default: ''
  vllm_version:
    description: The vLLM version found in that image (C(pull) only).
    type: str
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Record that the node went back to its previous digest
  ansible.builtin.copy:
    dest: /var/lib/inferops-vllm/image.json
    content: "{{ record | inferops.vllm.image_record('rollback') | to_nice_json }}\n"
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The new record.
  type: dict
  sample:
    current: registry.site:5000/vllm/vllm-openai@sha256:43be0b3d1b9e5b0a4b6a6f43a0a2c8e4b1c1a0e9d1a53f3c2f4e6f1c9b8a7d6e
    previous: null
    vllm_version: 0.32.0
    previous_vllm_version: null
    failed: [registry.site:5000/vllm/vllm-openai@sha256:9f1c2e7d4b3a6c5e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a]
"""


def image_record(record, event, ref="", vllm_version=None):
    record = dict(record or {})
    if event == "pull":
        return record_rules.after_pull(record, str(ref), vllm_version)
    if event == "rollback":
        return record_rules.after_rollback(record)
    raise AnsibleFilterError("image_record: event must be pull or rollback, not %r" % (event,))


class FilterModule:
    def filters(self):
        return {"image_record": image_record}

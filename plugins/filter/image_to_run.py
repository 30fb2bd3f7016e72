# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_image role's to_run entry point: the image a node runs, from its record."""

from __future__ import annotations

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.vllm.plugins.module_utils import image_record as record_rules

DOCUMENTATION = r"""
name: image_to_run
short_description: The image a node runs, from its image record
description:
  - The record's C(current) digest, or its C(previous) one with O(previous) (a rollback; empty when there is none).
  - A node without a record yet (check mode before the first pull) runs O(unrecorded), the reference being pulled.
options:
  _input:
    description: The node's image record, C({}) where it has none.
    type: dict
    required: true
  previous:
    description: Run the digest before the current one (rollback).
    type: bool
    required: true
  unrecorded:
    description: The reference to run while the node has no record.
    type: str
    default: ''
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Choose the image this node runs
  ansible.builtin.set_fact:
    image: "{{ record | inferops.vllm.image_to_run(false, vllm_image_pull_ref) }}"
"""

RETURN = r"""
_value:
  description: The reference pinned by digest, or an empty string.
  type: str
  sample: vllm/vllm-openai@sha256:43be0b3d1b9e5b0a4b6a6f43a0a2c8e4b1c1a0e9d1a53f3c2f4e6f1c9b8a7d6e
"""


def image_to_run(record, previous, unrecorded=""):
    return record_rules.to_run(dict(record or {}), boolean(previous, strict=True), str(unrecorded or ""))


class FilterModule:
    def filters(self):
        return {"image_to_run": image_to_run}

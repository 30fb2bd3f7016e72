# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for a rollback of the weights: the node's launch at the revision it served before."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import model_source

DOCUMENTATION = r"""
name: launch_at_revision
short_description: A node's launch serving another revision of the same weights
description:
  - The launch with C(--revision) replaced in its flags, argv and config file, and in C(cluster.model), so a
    rollback serves the revision the node kept on disk. A launch without a revision, or an empty O(revision),
    is returned unchanged.
options:
  _input:
    description: The node's launch (C(vllm_launch)).
    type: dict
    required: true
  revision:
    description: The 40-hex commit to serve.
    type: str
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Serve the revision before
  ansible.builtin.include_role:
    name: inferops.vllm.vllm_serve
  vars:
    vllm_launch: "{{ vllm_launch | inferops.vllm.launch_at_revision(vllm_model_staged.previous.revision) }}"
"""

RETURN = r"""
_value:
  description: The launch at that revision.
  type: dict
  sample: {"args": {"model": "moonshotai/Kimi-K3", "revision": "0123456789abcdef0123456789abcdef01234567"}}
"""


def launch_at_revision(launch, revision):
    return model_source.at_revision(dict(launch or {}), str(revision or ""))


class FilterModule:
    def filters(self):
        return {"launch_at_revision": launch_at_revision}

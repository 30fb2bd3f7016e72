# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test for the roles: an image reference pinned by digest, by image_ref's one spelling of a digest."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref

DOCUMENTATION = r"""
name: pinned
short_description: Whether an image reference is pinned by digest
description:
  - True for C(name@sha256:<64 lowercase hex>), where the name has no C(@) and no blank. The digest is the one the
    launch plan requires of C(vllm_image) (C(image_ref.DIGEST)).
  - The name is not judged further. The plan already judged C(vllm_image)'s own, and a reference through a site
    registry may carry a host that docker takes and the plan's rule does not (capitals, an IPv6 literal).
options:
  _input:
    description: The image reference.
    type: str
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: A GPU check needs a pinned image
  ansible.builtin.assert:
    that: container_runtime_gpu_check_image is inferops.vllm.pinned
"""

RETURN = r"""
_value:
  description: Whether the reference is pinned by digest.
  type: bool
  sample: true
"""


def pinned(ref):
    return isinstance(ref, str) and image_ref.ENDS_IN_DIGEST.match(ref) is not None


class TestModule:
    def tests(self):
        return {"pinned": pinned}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the roles: a package's installed upstream version, from inferops.vllm.node_state."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state

DOCUMENTATION = r"""
name: installed_version
short_description: The upstream version of an installed package
description:
  - Takes one entry of the C(packages) result of M(inferops.vllm.node_state) and returns its version without the
    distribution's release (C(580.95.05-1) gives C(580.95.05)), or an empty string when the package is not installed.
options:
  _input:
    description: One entry of the C(packages) result of M(inferops.vllm.node_state) (C(null) when not installed).
    type: dict
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Show the driver version the node has
  ansible.builtin.debug:
    msg: "{{ driver.packages['nvidia-open'] | inferops.vllm.installed_version }}"
"""

RETURN = r"""
_value:
  description: The version without its release, or an empty string.
  type: str
  sample: 580.95.05
"""


def installed_version(package):
    return node_state.installed_version(package)


class FilterModule:
    def filters(self):
        return {"installed_version": installed_version}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the roles: which installed packages are not on hold, from inferops.vllm.node_state."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state

DOCUMENTATION = r"""
name: unheld_packages
short_description: The packages a node has installed but not on hold
description:
  - Takes the C(packages) result of M(inferops.vllm.node_state) and returns the names that are installed but not held,
    so a hold task runs only when it has something to do. Names not installed are left out.
options:
  _input:
    description: The C(packages) result of M(inferops.vllm.node_state).
    type: dict
    required: true
  names:
    description: The packages that should be on hold.
    type: list
    elements: str
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Hold the driver only where it is not held yet
  ansible.builtin.dpkg_selections:
    name: nvidia-open
    selection: hold
  when: driver.packages | inferops.vllm.unheld_packages(['nvidia-open']) | length > 0
"""

RETURN = r"""
_value:
  description: The names to hold, in the order given.
  type: list
  elements: str
  sample: [nvidia-open]
"""


def unheld_packages(state, names):
    return node_state.unheld_packages(state or {}, list(names))


class FilterModule:
    def filters(self):
        return {"unheld_packages": unheld_packages}

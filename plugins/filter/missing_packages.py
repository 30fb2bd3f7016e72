# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the roles: which wanted packages a node lacks, from inferops.vllm.node_state."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state

DOCUMENTATION = r"""
name: missing_packages
short_description: The wanted packages a node does not have at the wanted version
description:
  - Takes the C(packages) result of M(inferops.vllm.node_state) and returns the names that are not installed, or are
    installed at a version the pin does not match, so a package task runs only when it has something to do.
options:
  _input:
    description: The C(packages) result of M(inferops.vllm.node_state).
    type: dict
    required: true
  names:
    description: The packages wanted.
    type: list
    elements: str
    required: true
  pins:
    description: Version prefix per package name (as C(apt install name=<pin>*) matches it); absent or empty means any.
    type: dict
    default: {}
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Install the engine only where it is missing
  ansible.builtin.apt:
    name: docker.io
  when: engine.packages | inferops.vllm.missing_packages(['docker.io']) | length > 0
"""

RETURN = r"""
_value:
  description: The names to install, in the order given.
  type: list
  elements: str
  sample: [nvidia-open, nvidia-fabricmanager]
"""


def missing_packages(state, names, pins=None):
    return node_state.missing_packages(state or {}, list(names), dict(pins or {}))


class FilterModule:
    def filters(self):
        return {"missing_packages": missing_packages}

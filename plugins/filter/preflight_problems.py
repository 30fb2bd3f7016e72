# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the preflight role: what stops a node from serving as its inventory describes."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import preflight

DOCUMENTATION = r"""
name: preflight_problems
short_description: A node's GPU facts checked against its inventory, as messages
description:
  - Takes the C(gpu_facts) of M(inferops.vllm.gpu_facts) and returns one message per problem, each naming what to fix
    - an NVIDIA driver older than the branch CUDA 13 images need, GPUs other than the inventory's, and RDMA devices
    missing or down on an InfiniBand or RoCE fabric. Empty when the node is as described.
options:
  _input:
    description: The C(gpu_facts) fact of M(inferops.vllm.gpu_facts).
    type: dict
    required: true
  host:
    description: The node's name, for the messages.
    type: str
    required: true
  min_driver_branch:
    description: The oldest NVIDIA driver branch allowed.
    type: int
    required: true
  expected:
    description:
      - The node's C(vllm_launch.host_stack) (C(vendor), C(gpu_model), C(gpus), C(fabric), C(hcas)); omit or null
        where the node has no launch, and only the driver is checked.
    type: dict
  require_rdma:
    description: Check RDMA devices on an InfiniBand or RoCE fabric.
    type: bool
    default: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: The node has the driver, GPUs and fabric the inventory describes
  ansible.builtin.assert:
    that: _problems | length == 0
    fail_msg: "{{ _problems | join(' ') }}"
  vars:
    _problems: "{{ gpu_facts | inferops.vllm.preflight_problems(inventory_hostname, 580, vllm_launch.host_stack) }}"
"""

RETURN = r"""
_value:
  description: One message per problem, empty when there is none.
  type: list
  elements: str
  sample:
    - "h200-01 reports 7 x NVIDIA H200 (nvidia), but the inventory says 8 x H200 (vllm_gpu_model, vllm_gpus_per_node).
      Fix the inventory, or the node (a GPU missing from nvidia-smi/amd-smi usually means a hardware or driver fault)."
"""


def preflight_problems(facts, host, min_driver_branch, expected=None, require_rdma=True):
    return preflight.node_problems(facts or {}, str(host), int(min_driver_branch), expected, bool(require_rdma))


class FilterModule:
    def filters(self):
        return {"preflight_problems": preflight_problems}

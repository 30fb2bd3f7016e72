# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The accelerator catalog for roles: what a GPU model implies."""

from __future__ import annotations

from dataclasses import asdict

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils import hardware

DOCUMENTATION = r"""
name: accelerator
short_description: What a GPU model implies (vendor, family, GPUs per node, NVSwitch board, NVL72)
description:
  - Looks a GPU model up in the collection's accelerator catalog and returns C(model), C(vendor), C(family),
    C(sm100), C(gpus_per_node), C(memory_gib), C(nvswitch_board) (runs Fabric Manager) and C(mnnvl) (can join
    a multi-node NVLink domain with IMEX).
options:
  _input:
    description: GPU model, for example C(H200), C(GB300), C(MI355X) or C(CPU).
    type: str
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Expect the catalog's GPU count unless the inventory says otherwise
  ansible.builtin.assert:
    that: gpu_facts.count == (vllm_gpus_per_node | default((vllm_gpu_model | inferops.vllm.accelerator).gpus_per_node))
"""

RETURN = r"""
_value:
  description: The catalog entry. Fails, naming the known models, when the model is not in the catalog.
  type: dict
  contains:
    model:
      description: The GPU model.
      type: str
    vendor:
      description: C(nvidia), C(amd) or C(cpu).
      type: str
    family:
      description: C(blackwell), C(hopper), C(cdna4) or C(cpu), the key of per-family recipe defaults.
      type: str
    sm100:
      description: A Blackwell datacenter GPU (compute capability 10.x).
      type: bool
    gpus_per_node:
      description: GPUs in one node (tray) of this model.
      type: int
    memory_gib:
      description: Memory per GPU in GiB.
      type: int
    nvswitch_board:
      description: An NVSwitch board that runs Fabric Manager.
      type: bool
    mnnvl:
      description: Can join a multi-node NVLink domain with IMEX.
      type: bool
  sample:
    model: H200
    vendor: nvidia
    family: hopper
    sm100: false
    gpus_per_node: 8
    memory_gib: 141
    nvswitch_board: true
    mnnvl: false
"""


def accelerator(model):
    acc = hardware.lookup(model)
    if acc is None:
        raise AnsibleFilterError("vllm_gpu_model=%r is not a known GPU model: use one of %s"
                                 % (model, ", ".join(sorted(hardware.CATALOG))))
    return asdict(acc)


class FilterModule:
    def filters(self):
        return {"accelerator": accelerator}

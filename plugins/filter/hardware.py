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
author: inferops.vllm contributors (@inferops)
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

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the nvidia_driver role: is the node's driver managed by another party, and what to do."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.node import vendor_driver

DOCUMENTATION = r"""
name: vendor_driver
short_description: Whether a node's NVIDIA driver is managed by another party (DGX OS, the distribution, a .run install)
description:
  - Takes the C(gpu_facts) of M(inferops.vllm.gpu_facts) and the role's package read (M(inferops.vllm.node_state)) and
    returns what the C(inferops.vllm.nvidia_driver) role does with the driver, with the evidence and a message.
  - The evidence is C(/etc/dgx-release), C(/usr/bin/nvidia-uninstall), the distribution's own driver packages, and a
    running driver (C(nvidia-smi) or a loaded module) while none of the packages the role installs is installed.
options:
  _input:
    description: The C(gpu_facts) fact (C(ansible_facts.gpu_facts)).
    type: dict
    required: true
  packages:
    description: The C(packages) result of M(inferops.vllm.node_state) for the role's packages.
    type: dict
    required: true
  names:
    description: The packages the role installs (any of them installed means the driver is the role's).
    type: list
    elements: str
    required: true
  mode:
    description: C(fail) or C(skip) (C(nvidia_driver_vendor_managed)).
    type: str
    required: true
  required_branch:
    description: The lowest branch a kept driver may have (C(nvidia_driver_branch)).
    type: str
    required: true
  host:
    description: The node's name, for the message.
    type: str
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Stop on a driver another party manages
  ansible.builtin.assert:
    that: _vendor.action != 'fail'
    fail_msg: "{{ _vendor.message }}"
  vars:
    _vendor: "{{ ansible_facts.gpu_facts | inferops.vllm.vendor_driver(state.packages, ['nvidia-open'], 'fail', '580', inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description:
    - C(action) (C(install) nothing says another party manages the driver; C(skip) leave it alone; C(fail) stop),
      C(evidence) (list of sentences) and C(message) (why, naming C(nvidia_driver_vendor_managed) and the ways out).
  type: dict
  sample: {action: fail, evidence: ["/etc/dgx-release (DGX H200 7.1.0): DGX OS installs and updates the driver"],
           message: "gpu1 has an NVIDIA driver 580.95.05 that this collection did not install: ..."}
"""


def vendor_driver_filter(facts, packages, names, mode, required_branch, host):
    return vendor_driver.decide(facts or {}, packages or {}, list(names or []), str(mode), required_branch, str(host))


class FilterModule:
    def filters(self):
        return {"vendor_driver": vendor_driver_filter}

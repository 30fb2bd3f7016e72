# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: a role's settings, derived in Python (module_utils/controller/role_settings.py) from its options."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils.controller import role_settings as rs

DOCUMENTATION = r"""
name: role_settings
short_description: A role's settings, from its options, its OS data, the node's OS family and the plan's host stack
description:
  - Derives everything a role computes from its tunables in one place - the packages, repository, key, files and
    their contents - so that the role's tasks and its node_state read take them from one result and no path,
    content or package is stated twice.
  - Roles so far - C(nvidia_driver) and C(container_runtime) (O(os_data), O(family), O(stack)), C(rocm) (O(os_data)),
    C(host_proxy) (O(proxy), O(family)).
  - Fails with the variable, the value and the fix where a value cannot be used.
options:
  _input:
    description: The role's options by name, as P(inferops.vllm.role_options#lookup) gives them.
    type: dict
    required: true
  role:
    description: The role's name in this collection.
    type: str
    required: true
  os_data:
    description: The role's OS data, as P(inferops.vllm.os_data#lookup) gives it.
    type: dict
  family:
    description: The node's OS family (C(ansible_facts.os_family)).
    type: str
  proxy:
    description: The site's proxy, as P(inferops.vllm.site_proxy#lookup) renders it.
    type: dict
  stack:
    description: The node's host stack as the plan decided it (C(vllm_launch.host_stack)); null where no plan ran
      (C(container_runtime) then takes its vendor from C(container_runtime_gpu_vendor)).
    type: dict
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
nvidia_driver_wanted_settings: >-
  {{ lookup('inferops.vllm.role_options', 'nvidia_driver') | inferops.vllm.role_settings('nvidia_driver',
     os_data=nvidia_driver_os, family=ansible_facts.os_family, stack=vllm_launch.host_stack) }}
"""

RETURN = r"""
_value:
  description: The role's settings by name (for C(nvidia_driver), the fields of C(wanted_state.NvidiaDriver)).
  type: dict
  sample:
    repo: https://developer.download.nvidia.com/compute/cuda/repos/debian13/x86_64/
    pin_file: /etc/apt/preferences.d/00-inferops-nvidia-driver
    setup_packages: [python3-debian]
"""


def role_settings(options, role, **inputs):
    try:
        return rs.build(str(role), dict(options or {}), **inputs)
    except rs.RoleSettingsError as err:
        raise AnsibleFilterError(str(err)) from None


class FilterModule:
    def filters(self):
        return {"role_settings": role_settings}

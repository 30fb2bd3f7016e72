# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lookup for a role's OS data (module_utils/controller/os_data.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: os_data
short_description: A role's OS data for the node, from its vars/<distribution>.yml or vars/<os family>.yml
description:
  - Returns the mapping C(<role>_os) of the role's C(vars/<distribution>.yml), or of its C(vars/<os family>.yml)
    where the first does not exist, with its templates rendered for the node.
  - The roles with OS specifics (package names, repository layouts, paths) name it in their C(vars/main.yml), as
    C(<role>_os), so that the data is read where it is used, with no task of its own in any run.
  - Needs the node's C(distribution) and C(os_family) facts; without them, or without a file for the node's OS,
    it fails and says which, and what to do.
options:
  _terms:
    description: The role's name (one).
    type: list
    elements: str
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
# roles/container_runtime/vars/main.yml
container_runtime_os: "{{ lookup('inferops.vllm.os_data', 'container_runtime') }}"
"""

RETURN = r"""
_raw:
  description: The role's OS data mapping, rendered.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import os_data


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if len(terms) != 1:
            raise AnsibleLookupError("inferops.vllm.os_data takes one role name, not %r" % (terms,))
        role = str(terms[0])
        facts = (variables or {}).get("ansible_facts") or {}
        try:
            path = os_data.data_file(role, facts)
        except os_data.OSDataError as err:
            raise AnsibleLookupError("inferops.vllm.os_data: %s" % err) from None
        try:  # 2.19 templates only what is marked trusted: role files are
            data = self._loader.load_from_file(path, cache="all", trusted_as_template=True)
        except TypeError:  # 2.18 templates every string
            data = self._loader.load_from_file(path, cache="all")
        name = os_data.variable(role)
        if not isinstance(data, dict) or name not in data:
            raise AnsibleLookupError("inferops.vllm.os_data: %s holds no %s mapping" % (path, name))
        return [self._templar.template(data[name])]

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lookup for a role's own options, by the names its argument specs declare: the spec is the one list of them."""

from __future__ import annotations

DOCUMENTATION = r"""
name: role_options
short_description: A role's own options and their values, by the names its argument specs declare
description:
  - Returns a dict of the options of a role's C(main) entry point (C(meta/argument_specs.yml)) whose names start
    with the role's name and an underscore, each with its value for this host, templated. Options marked
    C(no_log) (secrets) and options this host has no value for are left out.
  - So a role hands its settings to a filter without writing every variable out a second time; an option added to
    the spec reaches the filter with no other change.
options:
  _terms:
    description: The role's name in this collection (one).
    type: list
    elements: str
    required: true
seealso:
  - plugin: inferops.vllm.router_config
    plugin_type: filter
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Work out the router's arguments from the role's options
  ansible.builtin.set_fact:
    router_args: "{{ lookup('inferops.vllm.role_options', 'vllm_router') | inferops.vllm.router_config([]) }}"
"""

RETURN = r"""
_raw:
  description: One dict, option name to value.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import specs


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if len(terms) != 1:
            raise AnsibleLookupError("role_options takes one role name, not %r" % (terms,))
        role = str(terms[0])
        declared = specs.own_options(role)
        if not declared:
            raise AnsibleLookupError("role_options: the role %s declares no options of its own in "
                                     "roles/%s/meta/argument_specs.yml" % (role, role))
        variables = variables or {}
        return [{name: self._templar.template(variables[name]) for name in declared if name in variables}]

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lookup for the collection's paths and names on a node (module_utils/controller/node_layout.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: node_layout
short_description: The collection's default paths and names on a node
description:
  - Returns the default of a node layout entry, written once in the collection. Each entry has one owning role
    variable; roles and playbooks that only read the entry use that variable and fall back to this lookup.
  - C(state_dir) (C(/var/lib/inferops-vllm)), owned by C(vllm_image_state_dir); C(config_dir) (C(/etc/inferops-vllm)),
    owned by C(vllm_serve_config_dir); C(container_name) (C(vllm)), owned by C(vllm_serve_container_name).
options:
  _terms:
    description: Entry names.
    type: list
    elements: str
    required: true
    choices: [state_dir, config_dir, container_name]
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Read the node's image record
  ansible.builtin.slurp:
    src: "{{ vllm_image_state_dir | default(lookup('inferops.vllm.node_layout', 'state_dir')) }}/image.json"
"""

RETURN = r"""
_raw:
  description: The default of each entry asked for.
  type: list
  elements: str
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import node_layout


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        try:
            return [node_layout.default(str(term)) for term in terms]
        except KeyError as err:
            raise AnsibleLookupError(str(err.args[0]))

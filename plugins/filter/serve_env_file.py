# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_serve role: the env file the vLLM container reads, from the launch and its secrets."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils.controller import role_settings as rs

DOCUMENTATION = r"""
name: serve_env_file
short_description: The env file the vLLM container reads, from a node's launch and the values of its secrets
description:
  - One C(NAME=value) line for each variable of the launch's environment, then one for each of its secrets
    (C(vllm_launch.secret_env)), under a header line. The plan refuses a newline in a value of the environment,
    and this filter in a secret (naming the variable, never the value), so every line reads back as one variable
    with its exact value (docker_container's C(env_file)).
  - Its SHA-1 is what C(vllm_serve)'s read compares (P(inferops.vllm.role_settings#filter)); the text itself holds
    secrets - write it root-only, with C(no_log).
options:
  _input:
    description: The node's launch, C(vllm_launch).
    type: dict
    required: true
  secrets:
    description: The secrets' values by their env name (every key of C(vllm_launch.secret_env)).
    type: dict
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Write the environment file
  ansible.builtin.copy:
    dest: /etc/inferops-vllm/vllm.env
    content: "{{ vllm_launch | inferops.vllm.serve_env_file(vllm_serve_secrets) }}"
    mode: "0600"
  no_log: true
"""

RETURN = r"""
_value:
  description: The file's text, each line ended by a newline.
  type: str
  sample: "# Managed by inferops.vllm\nNCCL_DEBUG=WARN\nVLLM_API_KEY=...\n"
"""


def serve_env_file(launch, secrets):
    try:
        rs.secret_problems(launch, secrets)
    except rs.RoleSettingsError as err:
        raise AnsibleFilterError(str(err)) from None
    return rs.serve_env_file(launch, secrets)


class FilterModule:
    def filters(self):
        return {"serve_env_file": serve_env_file}

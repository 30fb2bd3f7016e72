# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_watchdog role: the watchdog's config on the node, from its launch and the role's options."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils.controller import watchdog_config as wc

DOCUMENTATION = r"""
name: watchdog_config
short_description: The vLLM watchdog's config on a node, from the node's launch and the vllm_watchdog role's options
description:
  - Builds the config the watchdog script reads on the node (C(module_utils/scripts/watchdog.py)) - the cluster,
    rank, role, endpoint, model and the data-parallel ranks the probe reaches, from the node's launch; the
    container, docker, the env file that holds the API key (never the key), the probe, the restart policy and
    the status, metrics and record files, from the role's options.
  - Fails with the variable, the value and the fix where a policy number is not a number.
options:
  _input:
    description: The node's launch, C(vllm_launch).
    type: dict
    required: true
  options:
    description: The role's options (C(vllm_watchdog_*)) by name, as P(inferops.vllm.role_options#lookup) gives them.
    type: dict
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Write the watchdog's config
  ansible.builtin.copy:
    dest: /etc/inferops-vllm/watchdog.json
    content: "{{ vllm_launch | inferops.vllm.watchdog_config(lookup('inferops.vllm.role_options', 'vllm_watchdog')) | to_nice_json }}\n"
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The config, as the script reads it (C(pd) only on a prefill or decode side).
  type: dict
  sample:
    cluster: lab
    rank: 0
    role: head
    endpoint: http://127.0.1.1:8000
    model: tiny-k3
    data_parallel: [0]
    container: vllm
    api_key_env: VLLM_API_KEY
    probe_timeout: 30
    failures_before_restart: 3
"""


def watchdog_config(launch, options):
    try:
        return wc.config(launch, options)
    except wc.WatchdogConfigError as err:
        raise AnsibleFilterError(str(err)) from None


class FilterModule:
    def filters(self):
        return {"watchdog_config": watchdog_config}

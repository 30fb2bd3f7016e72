# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_router role: every router argument, the workers included, from the role's variables."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils.node import router

DOCUMENTATION = r"""
name: router_config
short_description: The arguments of vLLM's router, its workers included, from the vllm_router role's variables
description:
  - Builds every argument of vLLM's router (C(vllm-router)) as a dict of flag (without dashes) and value, which the role writes to the
    router's JSON configuration and its launcher turns into the router's arguments. The API key is not part of it.
  - The workers are C(vllm_router_workers) when set, otherwise the endpoint of every planned cluster (the
    C(vllm_launch.cluster) summaries of the hosts of group C(vllm_clusters)), limited to C(vllm_router_clusters)
    when that is set, deduplicated.
  - Fails with the variable, the value and the fix on bad input (an unknown cluster name or policy, a worker that
    is not an http(s) base URL, a flag in C(vllm_router_extra_args) that has its own variable).
options:
  _input:
    description: The role's variables (C(vllm_router_*)) by name, as P(inferops.vllm.role_options#lookup) gives them.
    type: dict
    required: true
  clusters:
    description: The C(vllm_launch.cluster) summaries of the planned hosts (one per node; duplicates are fine).
    type: list
    elements: dict
    default: []
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Work out the router's arguments
  ansible.builtin.set_fact:
    router_args: "{{ lookup('inferops.vllm.role_options', 'vllm_router') | inferops.vllm.router_config(clusters) }}"
"""

RETURN = r"""
_value:
  description: Router flags without their dashes and their values (true is the flag alone).
  type: dict
  sample:
    host: 0.0.0.0
    port: 8080
    worker-urls: [http://10.0.0.5:8000, http://10.0.1.5:8000]
    policy: round_robin
    health-check-endpoint: /health
    health-check-interval-secs: 10
    disable-circuit-breaker: true
    prometheus-host: 0.0.0.0
    prometheus-port: 29000
    log-level: info
"""


def router_config(settings, clusters=None):
    try:
        return router.router_config(dict(settings or {}), list(clusters or []))
    except ValueError as err:
        raise AnsibleFilterError(str(err)) from None


class FilterModule:
    def filters(self):
        return {"router_config": router_config}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lookup for one host's launch from this run's plan (the stash the plan action wrote)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: plan_launch
short_description: One host's vLLM launch, or what else it applies, from this run's plan
description:
  - Reads the launch the P(inferops.vllm.cluster_plan#module) action compiled for a host in this run, from the
    per-host stash it returned (its C(stash)), so that C(ansible.builtin.set_fact) hands it on as the host
    variable C(vllm_launch). A host variable, not a fact - facts reach templates by name only through
    C(INJECT_FACTS_AS_VARS), whose default ansible-core 2.21 deprecates.
  - With O(part=host), what the plan compiled for the host beside a launch (C(vllm_host_plan)), for every host of the
    site, routers and Prometheus hosts among them.
options:
  _terms:
    description: The plan's C(stash), then the host's name.
    type: list
    elements: str
    required: true
  part:
    description: The launch, or what else the host applies.
    type: str
    default: launch
    choices: [launch, host]
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Hand each node its launch
  ansible.builtin.set_fact:
    vllm_launch: "{{ lookup('inferops.vllm.plan_launch', cluster_plan_result.stash, inventory_hostname) }}"

- name: Hand each host of the site what else it applies
  ansible.builtin.set_fact:
    vllm_host_plan: "{{ lookup('inferops.vllm.plan_launch', cluster_plan_result.stash, inventory_hostname, part='host') }}"
"""

RETURN = r"""
_raw:
  description:
    - With O(part=host), C(firewall) (C(state) present, absent or kept, C(ruleset), C(why)).
    - The host's launch. Keys are C(cluster) (summary of the cluster), C(host), C(rank), C(role), C(serves_api),
      C(port), C(args) (flag to value), C(argv) (explicit C(vllm serve) arguments), C(command) and C(config_path)
      (how the container runs it), C(config_yaml), C(env), C(secret_env), C(container)
      (C(community.docker.docker_container) options), C(host_stack) and C(sources).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import boundary, plan_output


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if len(terms) != 2:
            raise AnsibleLookupError("plan_launch takes the plan's stash and a host name, not %r" % (terms,))
        folder, host = terms
        self.set_options(var_options=variables, direct=kwargs)
        part = self.get_option("part")
        try:
            return [plan_output.take(folder, host, part)]
        except (OSError, boundary.BoundaryError) as exc:
            raise AnsibleLookupError("no %s for %s in %s (%s); compile the plan (role cluster_plan) in the same "
                                     "play as this task" % (part, host, folder, exc)) from None

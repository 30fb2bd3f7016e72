# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_plan
short_description: Compile the vLLM launch of every cluster in the play, once, on the controller
description:
  - Reads the C(vllm_*) variables of every host in each cluster group named by a host of the play (or
    C(serial) batch), checks them against the fabric, hardware and backend rules and the pinned vLLM's
    accepted flags, and compiles every node's launch (vLLM flags, config file, environment, container
    options). Run it with C(run_once); then each host reads its own launch from the returned C(stash) with the
    P(inferops.vllm.plan_launch#lookup) lookup.
  - Runs on the controller only; no host is contacted. Bad input fails with a message that names the
    variable, the value and the fix.
  - The variables are documented in the C(inferops.vllm.cluster_plan) role.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  output_dir:
    description: Controller directory where C(<cluster>/<host>.yaml), C(.json) and C(.sh) are written; empty writes none.
    type: str
    default: ""
  show:
    description: Return C(show), each node's summary line, C(docker run) line and config file, for display.
    type: bool
    default: false
  overrides:
    description:
      - Cluster-wide C(vllm_*) variables that replace the inventory's values for this compile only, checked like them
        (the capacity curve compiles each max-model-len with C(vllm_max_model_len) set here). The inventory is
        left as it is.
    type: dict
    default: {}
  check_inventory:
    description:
      - Only check that group C(vllm_clusters) holds hosts and that no host that sets C(vllm_cluster) is outside
        it, naming the groups that hold hosts; nothing is compiled. The playbooks run it on C(localhost) first, since plays over an
        empty C(vllm_clusters) are skipped ("no hosts matched") and the run would exit 0.
    type: bool
    default: false
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.read_only
  - inferops.vllm.attributes.controller
notes:
  - Secrets such as C(vllm_api_key) are never returned; C(secret_env) names the variable that holds each one.
"""

EXAMPLES = r"""
- name: Compile every cluster's launch once
  inferops.vllm.cluster_plan:
  run_once: true
  register: plan

- name: Hand each node its launch
  ansible.builtin.set_fact:
    vllm_launch: "{{ lookup('inferops.vllm.plan_launch', plan.stash, inventory_hostname) }}"

- name: Show the head's flags
  ansible.builtin.debug:
    var: vllm_launch.argv
"""

RETURN = r"""
stash:
  description:
    - Where this run keeps every node's launch (in Ansible's local temp dir, removed at exit); pass it to the
      P(inferops.vllm.plan_launch#lookup) lookup.
  returned: when compiling
  type: str
show:
  description: With O(show), three lines per node (summary, C(docker run), config file); else empty.
  returned: when compiling
  type: list
  elements: str
version_changes:
  description:
    - For each cluster that an upgrade moves to another vLLM (C(vllm_version_before)), what its launch changes,
      flag by flag (C(upgrade.yml) prints it); else empty.
  returned: when compiling
  type: list
  elements: str
"""

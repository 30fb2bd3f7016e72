# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_serve role: does a cluster serve as a group, or must it restart in order?"""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import group

DOCUMENTATION = r"""
name: group_verdict
short_description: Whether a vLLM cluster serves as a group, or must restart in order
description:
  - Reads every node's C(vllm_serve_member) fact (its container before any change, and whether this run started it)
    and the head's generation probe, and returns what the vllm_serve role does with the group.
  - A multi-node group whose members did not start together (one restarted alone after a reboot or a crash), a
    member whose container is not running, or a head that does not generate restarts as a whole, head first.
  - A node that did not answer in this run makes the verdict C(fail).
  - The vllm_serve role asks it whether the head must be probed (C(probe)); the M(inferops.vllm.group_verdict) action
    then sets the verdict it acts on, with the probe.
options:
  _input:
    description: The cluster, C(vllm_launch.cluster) (its C(name) and C(nodes), head first).
    type: dict
    required: true
  hostvars:
    description: Ansible's C(hostvars).
    type: raw
    required: true
  window:
    description: Seconds within which the members' containers must have started to count as one group start.
    type: float
    required: true
  probe:
    description: The head's M(inferops.vllm.vllm_health) result; omitted before it ran.
    type: dict
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Only a generation can tell
  ansible.builtin.debug:
    msg: probe the head
  when: (vllm_launch.cluster | inferops.vllm.group_verdict(hostvars, 120)).action == 'probe'
"""

RETURN = r"""
_value:
  description: >-
    C(action) (C(none): it serves; C(probe): only a generation can tell; C(wait): every node started in this run;
    C(restart): restart the group in order; C(fail): a node did not answer) and C(reason), a sentence for the log.
  type: dict
  sample: {action: restart, reason: "lab-node2's container started 3600 s after lab-node1's: it restarted alone (a reboot,
           a crash or a kill) and vLLM cannot take a member back into a running group"}
"""


def group_verdict(cluster, hostvars, window, probe=None):
    nodes = list(cluster["nodes"])
    members = [hostvars[node].get("vllm_serve_member") if node in hostvars else None for node in nodes]
    return group.verdict(cluster["name"], members, nodes, float(window), probe)


class FilterModule:
    def filters(self):
        return {"group_verdict": group_verdict}

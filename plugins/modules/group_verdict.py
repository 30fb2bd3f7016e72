# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: group_verdict
short_description: Judge whether a vLLM cluster serves as a group, or must restart in order
description:
  - Reads every node's C(vllm_serve_member) fact (its container before any change, and whether this run started it)
    and, where only a generation can tell, the head's M(inferops.vllm.vllm_health) result, and returns what the
    vllm_serve role does with the group (module_utils/controller/group.py), which the role registers as
    C(vllm_serve_group).
  - A multi-node group whose members did not start together (one restarted alone after a reboot or a crash), a
    member whose container is not running, or a head that does not generate restarts as a whole, head first.
  - A node that did not answer in this run fails the task, naming it and the fix.
  - Runs on the controller only; no host is contacted.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  cluster:
    description: The cluster, C(vllm_launch.cluster) (its C(name) and C(nodes), head first).
    type: dict
    required: true
  window:
    description: Seconds within which the members' containers must have started to count as one group start.
    type: float
    required: true
  force:
    description: Restart the group in order whatever it looks like (a rolling restart).
    type: bool
    default: false
  probe:
    description:
      - The head's M(inferops.vllm.vllm_health) result. Read only where the containers leave the verdict to a
        generation; a missing or skipped result then counts as a head that does not serve.
    type: dict
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.controller
attributes:
  check_mode:
    support: full
    details: Judges the same in check mode.
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Judge the group
  inferops.vllm.group_verdict:
    cluster: "{{ vllm_launch.cluster }}"
    window: 120
    probe: "{{ hostvars[vllm_launch.cluster.head].vllm_serve_probe | default(omit) }}"
  register: vllm_serve_group
"""

RETURN = r"""
action:
  description: C(none) (it serves), C(wait) (every node started in this run) or C(restart) (restart the group in order).
  returned: success
  type: str
  sample: restart
reason:
  description: A sentence for the log.
  returned: success
  type: str
  sample: "lab-node2's container started 3600 s after lab-node1's: it restarted alone (a reboot, a crash or a kill)
    and vLLM cannot take a member back into a running group"
"""

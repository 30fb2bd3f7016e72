# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the fabric check: does this run run the cluster's collective, or does the head's record hold?"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from ansible_collections.inferops.vllm.plugins.module_utils.controller import fabric

DOCUMENTATION = r"""
name: fabric_check_due
short_description: Whether a cluster's fabric check runs in this run, or the head's record of the last one holds
description:
  - Reads the head's record of the cluster's last fabric check (C(fabric.json), as the head's C(fabric_check_last)
    M(inferops.vllm.node_state) read of that one file returned it) and judges it against this run. The record holds
    where that check passed with the same image digest, the same nodes in the same order, the same fabric-facing
    launch on every node (HCAs, host stack, environment, container options) and the same check settings; the
    collective is then not run again, so that a converge of a serving fleet does not load its GPUs and links with an all-reduce.
  - Otherwise, or with O(force), the check runs, and the reasons say why. A cluster with nodes outside this run (a
    C(--limit)) is checked, and its missing ranks fail the check by name.
options:
  _input:
    description: The cluster, C(vllm_launch.cluster) (its C(head) and C(nodes)).
    type: dict
    required: true
  hostvars:
    description: Ansible's C(hostvars), for the head's read and every node's C(vllm_launch) and C(vllm_image_to_run)
      (the image the check runs and vLLM starts next), so that every node of the cluster comes to the same answer.
    type: raw
    required: true
  settings:
    description: The check's own settings that decide what it proves (size, iterations, baseline, GPUDirect, port); the
      digest of the role's check script is added to them.
    type: dict
    required: true
  force:
    description: Run the check even where the record holds.
    type: bool
    default: false
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Say whether the fabric is checked
  ansible.builtin.debug:
    msg: "{{ (vllm_launch.cluster | inferops.vllm.fabric_check_due(hostvars, {'bytes': 268435456})).reasons }}"
"""

RETURN = r"""
_value:
  description: >-
    C(due) (run the collective), C(reasons) (why, one phrase each; empty where the record holds), C(basis) (the
    digest of what the check depends on besides the image and the nodes, which the head records), and the record's
    C(checked_at) and C(summary).
  type: dict
  sample:
    due: true
    reasons: ["the check of 2026-12-04T09:12:40Z: another image"]
    basis: 3f5c0d8e9b1a7c2d4e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5
    checked_at: "2026-12-04T09:12:40Z"
    summary: lab-node1 gloo-tcp 0.41 GB/s; lab-node2 gloo-tcp 0.41 GB/s
"""


# the role's check script: a record made by another version of it does not hold
SCRIPT = Path(__file__).resolve().parents[2] / "roles" / "fabric_check" / "files" / "fabric_allreduce.py"


@functools.lru_cache(maxsize=1)   # one read per process: the script does not change during a run
def script_digest() -> str:
    try:
        return hashlib.sha256(SCRIPT.read_bytes()).hexdigest()
    except OSError:   # a collection installed without its roles cannot run the check either
        return ""


def fabric_check_due(cluster, hostvars, settings, force=False):
    nodes = list(cluster["nodes"])
    head = cluster.get("head") or nodes[0]
    read = (hostvars[head].get("fabric_check_last") if head in hostvars else None) or {}
    # the read names one file, the record (a missing one has no content)
    files = list((read.get("files") or {}).values())
    text = str(files[0].get("content") or "") if files else ""
    # every node's facts, not this node's own: all of the cluster's nodes come to the same answer
    members = [hostvars[node] for node in nodes if node in hostvars]
    launches = [member.get("vllm_launch") for member in members]
    images = [str(member.get("vllm_image_to_run") or "") for member in members]
    return fabric.check_due(text, images, nodes, [launch for launch in launches if launch],
                            dict(settings, script=script_digest()), ["fabric_check_force"] if force else [])


class FilterModule:
    def filters(self):
        return {"fabric_check_due": fabric_check_due}

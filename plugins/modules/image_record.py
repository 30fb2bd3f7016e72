#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: image_record
short_description: Keep a node's vLLM image record (the digest it runs, the one before it, the rolled-back ones)
description:
  - The record (C(image.json) in the node's state directory) names the digest the node runs (C(current)), the one
    before it (C(previous), what a rollback goes back to) and the digests a rollout rolled back on this node
    (C(failed)). It is written whole or not at all (a temporary file renamed into place), mode C(0644).
  - In a run where M(inferops.vllm.node_read) read the node first, a task with the same arguments is answered from
    that read on the controller, without the node, while the node was as wanted in all of it (the result then has
    C(node_read=true)).
  - V(present) is the pull gate. It refuses O(ref) where a rollout rolled that digest back on this node (naming
    the fix), unless O(retry_failed). Where the node lacks the image it returns RV(pull_needed) and writes
    nothing; where it has it, it records O(ref) as the digest the node runs (the one before becomes C(previous)).
  - V(rolled_back) records that the node went back to C(previous), and lists the digest it left as failed.
  - V(query) reads the record only.
  - Every state returns the image the node runs next (RV(to_run)) and the one a rollback would start
    (RV(rollback_to)), read from the record as the call leaves it.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  path:
    description: The record file.
    type: path
    default: /var/lib/inferops-vllm/image.json
  state:
    description: V(present), V(rolled_back) or V(query).
    type: str
    choices: [present, rolled_back, query]
    default: present
  ref:
    description:
      - The pinned reference (C(repo@sha256:...)) the node pulls. Needed for V(present); with V(query), the
        image to run while the node has no record yet (check mode before the first pull).
    type: str
    default: ""
  version_probe:
    description:
      - What the image's version probe printed (vllm_image's C(Read the vLLM version in the image)). Its line
        C({"vllm_version"...}) gives the vLLM version recorded with V(present); none where it has no such line.
    type: str
    default: ""
  retry_failed:
    description: Let V(present) take a digest that a rollout rolled back on this node (and forget the failure).
    type: bool
    default: false
  node:
    description: The node's name, for the refusal's messages.
    type: str
    default: this node
  run:
    description:
      - Return as RV(run_image) the image the node runs next (RV(to_run)), or with V(previous) the one a rollback
        starts (RV(rollback_to)). Where that is no pinned reference (no pulled image, nothing to roll back
        to) the task fails with the fix.
      - Taken on the controller; never sent to the node.
    type: str
    choices: [current, previous]
  known:
    description:
      - With V(query), a result of this module that the run already has (a registered V(present) or V(rolled_back)
        step). The query is answered from it on the controller, without the node (the result then has
        C(known=true)). A result without RV(to_run) (a skipped step's) is not an answer, and the node is read.
      - Taken on the controller; never sent to the node.
    type: dict
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.posix
attributes:
  check_mode:
    support: full
    details: Reports the record it would write, without writing it or reading the image's presence differently.
  diff_mode:
    support: full
    details: The record before and after.
"""

EXAMPLES = r"""
- name: Refuse a rolled-back digest and record the image the node has
  inferops.vllm.image_record:
    ref: vllm/vllm-openai@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    node: "{{ inventory_hostname }}"
  register: vllm_image_record

- name: Choose the image to run, from this run's record where there is one
  inferops.vllm.image_record:
    state: query
    node: "{{ inventory_hostname }}"
    known: "{{ vllm_image_record | default(omit) }}"
    run: current
  register: chosen

- name: Remember it as a host variable
  ansible.builtin.set_fact:
    vllm_image_to_run: "{{ chosen.run_image }}"

- name: The node went back to its previous digest
  inferops.vllm.image_record:
    state: rolled_back
"""

RETURN = r"""
record:
  description: The record as the call leaves it (in check mode, as it would leave it); C({}) where there is none.
  returned: always
  type: dict
to_run:
  description: The digest the node runs next, from the record on the node after the call; O(ref) where the node has
    no record yet.
  returned: always
  type: str
rollback_to:
  description: The digest a rollback would start (the record's C(previous)), or an empty string.
  returned: always
  type: str
run_image:
  description:
    - With O(run), the pinned reference the node runs next. The role's C(to_run) entry point sets it as the host
      variable C(vllm_image_to_run).
  returned: with O(run), where there is an image to run
  type: str
  sample: "vllm/vllm-openai@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
pull_needed:
  description: V(present) only. The node lacks the image O(ref) names; nothing was recorded.
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import calls


def main():
    module = AnsibleModule(argument_spec=calls.SPECS["image_record"], required_if=[("state", "present", ["ref"])],
                           supports_check_mode=True)
    try:
        result = calls.image_record_apply(
            module.params, lambda argv: module.run_command(argv, environ_update={"LC_ALL": "C"}), module.get_bin_path,
            module.check_mode)
    except calls.Refused as refused:
        module.fail_json(msg=str(refused), **refused.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()

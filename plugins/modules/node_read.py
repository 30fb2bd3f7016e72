#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_read
short_description: Answer several roles' "already right?" reads of a node in one round trip
description:
  - Runs the reads that the roles of a run will make - M(inferops.vllm.gpu_facts), M(inferops.vllm.node_state) and
    M(inferops.vllm.image_record) - in one module call, each with the arguments its role will give it, so that a
    converged node is read once per run instead of once per role.
  - The action plugin of the same name keeps the answers by key (RV(results)); registered as C(node_read_state),
    as the node_read role does, they let the action plugins of those three modules answer a later task without the
    node, where the task's arguments are the same, nothing in the read differed from its wanted state (RV(converged))
    and the read is younger than O(max_age). Any other task reads the node itself, as before.
  - Read-only. An M(inferops.vllm.image_record) call is answered as in check mode; a call that would fail is
    returned failed, for its own task to fail with.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  calls:
    description:
      - The reads, each a dict of C(module) (V(gpu_facts), V(node_state) or V(image_record)) and C(args), the
        module's arguments as its task gives them. For V(node_state), C(role) and C(settings) are built into the
        wanted state on the controller, as that module's action plugin does.
    type: list
    elements: dict
    required: true
  max_age:
    description: Seconds after the read in which a later task may be answered from it (a container may stop later).
    type: int
    default: 300
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.read_only
  - inferops.vllm.attributes.posix
attributes:
  platform:
    details: Linux nodes, as the modules it runs.
"""

EXAMPLES = r"""
- name: Read the node once for the roles after this play
  inferops.vllm.node_read:
    calls:
      - module: gpu_facts
        args: {warn_secure_boot: true}
      - module: node_state
        args: {role: vllm_watchdog, settings: "{{ vllm_watchdog_wanted_settings }}"}
  register: node_read_state   # the name the later tasks are answered from
"""

RETURN = r"""
converged:
  description: No step of any read differs from its wanted state, no image pull is due and no read failed.
  returned: always
  type: bool
  sample: true
read_at:
  description: When the node was read (the controller's epoch seconds).
  returned: always
  type: float
  sample: 1796198976.1
max_age:
  description: O(max_age).
  returned: always
  type: int
  sample: 300
results:
  description:
    - Each read's answer as its module returns it, by key (a hash of the module and its arguments as the module takes
      them; not meant to be read by hand).
  returned: always
  type: dict
  sample: {"3f1c0d...": {changed: false, steps: {install: {differs: false, why: []}}}}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.inferops.vllm.plugins.module_utils.node import calls


def answer(module, call):
    """One call's result as its own module would return it (read-only), or failed with its message."""
    name = call.get("module")
    if name not in calls.SPECS:
        return {"failed": True, "msg": "node_read cannot run %r: it runs %s" % (name, ", ".join(sorted(calls.SPECS)))}
    validated = ArgumentSpecValidator(calls.SPECS[name]).validate(dict(call.get("args") or {}))
    if validated.error_messages:
        return {"failed": True, "msg": "; ".join(validated.error_messages)}
    try:
        return calls.run_call(name, validated.validated_parameters,
                              lambda argv: module.run_command(argv, environ_update={"LC_ALL": "C"}),
                              module.get_bin_path, check_mode=True)
    except calls.Refused as refused:
        return dict(refused.result, failed=True, msg=str(refused))


def main():
    module = AnsibleModule(argument_spec={"calls": {"type": "list", "elements": "dict", "required": True},
                                          "max_age": {"type": "int", "default": 300}},
                           supports_check_mode=True)
    module.exit_json(changed=False, results=[answer(module, call) for call in module.params["calls"]])


if __name__ == "__main__":
    main()

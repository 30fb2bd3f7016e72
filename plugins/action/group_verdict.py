# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""group_verdict: the vllm_serve role's verdict on its cluster as a fact, or a failure naming why it cannot be judged:
one step where a fact and an assert were two (module_utils/controller/group.py decides)."""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import group

SPEC = {"cluster": {"type": "dict", "required": True}, "window": {"type": "float", "required": True},
        "force": {"type": "bool", "default": False}, "probe": {"type": "dict"}}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        validated = ArgumentSpecValidator(SPEC).validate(dict(self._task.args))
        if validated.error_messages:
            return dict(result, failed=True, msg="group_verdict: " + "; ".join(validated.error_messages))
        args = validated.validated_parameters
        verdict = group.judged((task_vars or {}).get("hostvars") or {}, args["cluster"], args["window"], args["force"],
                               args["probe"])
        if verdict["action"] == group.FAIL:
            return dict(result, failed=True, msg=verdict["reason"], verdict=verdict)
        # registered by the task as vllm_serve_group: a host variable, not a fact (INJECT_FACTS_AS_VARS is deprecated)
        return dict(result, changed=False, **verdict)

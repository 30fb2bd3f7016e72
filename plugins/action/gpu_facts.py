# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_facts: a task that node_read already read for is answered from that read, without the node; any other runs the
module (the same action as node_state's, plugins/action/node_state.py).

With `expect` (never sent to the node) the facts are judged against what the node must have to serve, and the task
fails naming every problem (module_utils/controller/preflight.py): one step where facts and an assert were two."""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.inferops.vllm.plugins.action.node_state import ReadAction
from ansible_collections.inferops.vllm.plugins.module_utils.controller import preflight

EXPECT = {"min_driver_branch": {"type": "int", "required": True}, "host_stack": {"type": "dict"},
          "require_rdma": {"type": "bool", "default": True}}


class ActionModule(ReadAction):
    MODULE = "gpu_facts"

    def module_args(self):
        return {key: value for key, value in self._task.args.items() if key != "expect"}

    def run(self, tmp=None, task_vars=None):
        expect = self._task.args.get("expect")
        if expect is not None:
            validated = ArgumentSpecValidator(EXPECT).validate(dict(expect))
            if validated.error_messages:
                return {"failed": True, "msg": "gpu_facts: expect: " + "; ".join(validated.error_messages)}
            expect = validated.validated_parameters
        result = super().run(tmp, task_vars)
        if expect is None or result.get("failed"):
            return result
        facts = (result.get("ansible_facts") or {}).get("gpu_facts") or {}
        host = str((task_vars or {}).get("inventory_hostname", ""))
        problems = preflight.node_problems(facts, host, expect["min_driver_branch"], expect["host_stack"],
                                           expect["require_rdma"])
        result["warnings"] = list(result.get("warnings") or ()) + preflight.health_lines(facts, host)[1]
        if problems:
            result.update(failed=True, msg=" ".join(problems))
        return result

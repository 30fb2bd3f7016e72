# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_state with `role:` and `settings:`: the role's wanted state and its reads are built on the controller from
its settings (module_utils/controller/wanted_state.py, typed: a wrong setting stops the task naming it), then the
node_state module reads the node and judges it in one call, as with a `wanted:` the task gives itself. Without
`role:` the task's arguments go to the module as they are.

ReadAction is also the action of gpu_facts and image_record: a task that node_read already read for is answered
from that read, without the node (module_utils/controller/read_ahead.py says when); any other runs the module."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import read_ahead, wanted_state


class ReadAction(ActionBase):
    """A read of the node that node_read may have answered already; MODULE names it."""

    TRANSFERS_FILES = False
    MODULE = ""

    def module_args(self):
        """The arguments the module takes, from the task's."""
        return dict(self._task.args)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        try:
            args = self.module_args()
        except wanted_state.SettingsError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        result.update(read_ahead.answer(task_vars, self.MODULE, args)
                      or self._execute_module(module_name="inferops.vllm." + self.MODULE, module_args=args,
                                              task_vars=task_vars))
        return result


class ActionModule(ReadAction):
    MODULE = "node_state"

    def module_args(self):
        return wanted_state.module_args(self._task.args)

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_read: the reads the roles of a run will make, made in one module call (node_state's `role:` and `settings:`
built on the controller as its own action plugin builds them), and kept by key for the tasks that make them later
(module_utils/controller/read_ahead.py)."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import read_ahead, wanted_state


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        max_age = int(self._task.args.get("max_age", 300))
        reads = []
        try:
            for read in self._task.args.get("calls") or []:
                args = dict(read.get("args") or {})
                reads.append({"module": read.get("module"),
                              "args": wanted_state.module_args(args) if read.get("module") == "node_state" else args})
        except wanted_state.SettingsError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        answer = self._execute_module(module_name="inferops.vllm.node_read",
                                      module_args={"calls": reads, "max_age": max_age}, task_vars=task_vars)
        if answer.get("failed"):
            result.update(answer)
            return result
        result.update(read_ahead.record(reads, answer.get("results") or [], max_age))
        return result

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""image_record: a task that node_read already read for is answered from that read, without the node
(module_utils/controller/read_ahead.py says when); any other runs the module."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.inferops.vllm.plugins.module_utils.controller import read_ahead


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        result.update(read_ahead.answer(task_vars, "image_record", args)
                      or self._execute_module(module_name="inferops.vllm.image_record", module_args=args, task_vars=task_vars))
        return result

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""image_record: a task that node_read already read for is answered from that read, without the node; any other runs the
module (the same action as node_state's, plugins/action/node_state.py)."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.action.node_state import ReadAction


class ActionModule(ReadAction):
    MODULE = "image_record"

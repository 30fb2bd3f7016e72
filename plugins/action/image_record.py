# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""image_record: a task that node_read already read for is answered from that read, without the node; any other runs the
module (the same action as node_state's, plugins/action/node_state.py).

Two options never reach the node. `known`: a query answered from a result of this module that the run already has
(the vllm_image steps' record). `run`: the image the node runs next becomes the fact vllm_image_to_run, or the task
fails with the fix where there is none: one step where a read, a fact and an assert were three."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.action.node_state import ReadAction
from ansible_collections.inferops.vllm.plugins.module_utils.node import calls, image_record

CONTROLLER_ONLY = ("run", "known")
# what a query returns, taken from an earlier result
ANSWER = ("record", "to_run", "rollback_to")


class ActionModule(ReadAction):
    MODULE = "image_record"

    def module_args(self):
        return {key: value for key, value in self._task.args.items() if key not in CONTROLLER_ONLY}

    def run(self, tmp=None, task_vars=None):
        args = self._task.args
        run, known = args.get("run"), args.get("known")
        if run not in (None, "current", "previous"):
            return {"failed": True, "msg": "image_record: run must be current or previous, not %r" % (run,)}
        if known is not None and args.get("state") != "query":
            return {"failed": True, "msg": "image_record: known answers only state=query, not state=%s"
                    % args.get("state", "present")}
        if isinstance(known, dict) and all(key in known for key in ANSWER):
            result = super(ReadAction, self).run(tmp, task_vars)   # ActionBase's: no read of the node
            result.update({key: known[key] for key in ANSWER}, changed=False, pull_needed=False, known=True)
        else:   # none yet, or a skipped step's: read the record
            result = super().run(tmp, task_vars)
        if run and not result.get("failed"):
            node = args.get("node") or (task_vars or {}).get("inventory_hostname", "this node")
            image, refusal = image_record.choose(result, run == "previous", node,
                                                 args.get("path") or calls.SPECS["image_record"]["path"]["default"])
            if refusal:
                result.update(failed=True, msg=refusal)
            else:
                result["run_image"] = image
        return result

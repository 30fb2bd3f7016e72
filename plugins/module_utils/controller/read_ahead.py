# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One read of a node for every role of a run: node_read makes, at the start, the reads that the roles' tasks will
make later (gpu_facts, node_state, image_record, each with its task's arguments), and each of those tasks is then
answered from it without the node, where three things hold:

- the task's arguments are those of a read in it (compared as the module sees them: defaults filled, types coerced);
- nothing in the read differed from its wanted state, no image pull was due and no read failed, so no role of the
  run changes what another role's read saw (a node that differs in anything is read by every role, as before);
- the read is younger than its max_age (a container may stop later; a long weights download outlives it).

No Ansible imports besides the argument validator the modules themselves use."""

from __future__ import annotations

import copy
import hashlib
import json
import time
from typing import Any, Dict, List, Mapping, Optional

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.inferops.vllm.plugins.module_utils.node import calls

# the registered result of the node_read role's read, which the tasks after it are answered from
RESULT_VAR = "node_read_state"


def key(module: str, args: Mapping[str, Any]) -> Optional[str]:
    """A read's identity: its module and its arguments as the module would take them; None where they are not valid
    (the module itself then says why)."""
    if module not in calls.SPECS:
        return None
    validated = ArgumentSpecValidator(calls.SPECS[module]).validate(dict(args))
    if validated.error_messages:
        return None
    text = json.dumps([module, validated.validated_parameters], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def unchanged(module: str, result: Mapping[str, Any]) -> bool:
    """The node is as the read's task wants it: no step differs, no pull or record write is due, no failure."""
    if result.get("failed"):
        return False
    if module == "node_state":
        return not any(step.get("differs") for step in (result.get("steps") or {}).values())
    if module == "image_record":
        return not (result.get("changed") or result.get("pull_needed"))
    return True


def record(reads: List[Mapping[str, Any]], results: List[Mapping[str, Any]], max_age: int,
           now: Optional[float] = None) -> Dict[str, Any]:
    """node_read's result: each read's answer by key, and whether the node may be answered from it."""
    by_key = {}
    for read, result in zip(reads, results):
        found = key(read["module"], read["args"])
        if found:
            by_key[found] = dict(result)
    return {"changed": False, "read_at": time.time() if now is None else now, "max_age": max_age,
            "converged": all(unchanged(read["module"], result) for read, result in zip(reads, results)),
            "results": by_key}


def answer(task_vars: Optional[Mapping[str, Any]], module: str, args: Mapping[str, Any],
           now: Optional[float] = None) -> Optional[Dict[str, Any]]:
    """The task's result from the run's node_read, or None: the task reads the node itself."""
    read = (task_vars or {}).get(RESULT_VAR)
    if not isinstance(read, Mapping) or read.get("converged") is not True or not read.get("results"):
        return None
    if (time.time() if now is None else now) - float(read.get("read_at") or 0) > float(read.get("max_age") or 0):
        return None
    found = key(module, args)
    result = read["results"].get(found) if found else None
    if not isinstance(result, Mapping) or not unchanged(module, result):
        return None
    return dict(copy.deepcopy(dict(result)), changed=False, node_read=True)

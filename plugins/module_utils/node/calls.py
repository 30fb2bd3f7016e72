# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node calls a role asks "already right?" with - gpu_facts, node_state and image_record - as data and one
function each: their modules run one of them, and node_read runs several in one round trip (read-only: an
image_record that would write is answered as in check mode). The argument specs are declared here once, so a
call bundled by node_read is validated exactly as the module validates it."""

from __future__ import annotations

import time
from typing import Callable, Dict, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_read, image_record, node_record, node_state

Runner = Callable[[List[str]], Tuple[int, str, str]]
Which = Callable[[str], Optional[str]]

_LIST = {"type": "list", "elements": "str", "default": []}
_PATHS = {"type": "list", "elements": "path", "default": []}

SPECS: Dict[str, dict] = {
    "gpu_facts": {
        "sysfs_root": {"type": "path", "default": "/sys"},
        "memory_usage": {"type": "bool", "default": False},
        "warn_secure_boot": {"type": "bool", "default": False},
        "health": {"type": "bool", "default": False},
        "hcas": _LIST,
        "health_timeout": {"type": "int", "default": 60},
        # consumed by the action plugin, which judges the facts against it
        "expect": {"type": "dict"},
    },
    "node_state": {
        "packages": _LIST, "services": _LIST, "files": _PATHS, "read": _PATHS, "images": _LIST, "containers": _LIST,
        "wanted": {"type": "dict", "default": {}},
        # consumed by the action plugin, which builds `wanted` from them
        "role": {"type": "str"}, "settings": {"type": "dict"},
    },
    "image_record": {
        "path": {"type": "path", "default": "/var/lib/inferops-vllm/image.json"},
        "state": {"type": "str", "choices": ["present", "rolled_back", "query"], "default": "present"},
        "ref": {"type": "str", "default": ""},
        "version_probe": {"type": "str", "default": ""},
        "retry_failed": {"type": "bool", "default": False},
        "node": {"type": "str", "default": "this node"},
        # consumed by the action plugin: the image to run as a fact, and an earlier result that answers a query
        "run": {"type": "str", "choices": ["current", "previous"]}, "known": {"type": "dict"},
    },
}


class Refused(Exception):
    """The call must fail with this message; `result` is returned beside it."""

    def __init__(self, msg: str, result: Optional[dict] = None) -> None:
        super().__init__(msg)
        self.result = result or {}


def gpu_facts(params: dict, run: Runner, which: Which) -> dict:
    facts, warnings = gpu_read.read(run, which, params["sysfs_root"], params["memory_usage"],
                                    params["warn_secure_boot"], params["health"], params["hcas"],
                                    params["health_timeout"])
    return {"changed": False, "ansible_facts": {"gpu_facts": facts}, "warnings": warnings}


def node_state_read(params: dict, run: Runner, which: Which) -> dict:
    problems = node_state.schema_problems(params["wanted"])
    if problems:   # a key no judge reads would make the step look converged: say so, change nothing
        raise Refused("node_state: the wanted state has keys that are never judged: %s" % "; ".join(problems),
                      {"problems": problems})
    bins = {name: which(name) for name in ("dpkg-query", "rpm", "systemctl", "docker")}
    return dict(changed=False, **node_state.read_node(
        run, bins, params["packages"], params["services"], params["files"], params["read"], params["images"],
        params["containers"], params["wanted"]))


def image_record_apply(params: dict, run: Runner, which: Which, check_mode: bool) -> dict:
    """present: the pull gate (a rolled-back digest refused before any pull; pull_needed; the image the node has,
    recorded); rolled_back: the previous digest runs again; query: only reads."""
    before = node_record.read(params["path"]) or {}
    after, pull_needed = before, False
    if params["state"] == "present":
        refusal = image_record.refusal(before, params["ref"], params["node"], params["retry_failed"])
        if refusal:
            raise Refused(refusal, {"record": before})
        found = node_state.images([params["ref"]], run, which("docker"))   # no docker yet: the pull says so
        pull_needed = not found[params["ref"]]["present"]
        if not pull_needed:
            after = image_record.after_pull(before, params["ref"], image_record.version_in_probe(params["version_probe"]),
                                            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    elif params["state"] == "rolled_back":
        after = image_record.after_rollback(before)
    # query only reads: a record with another mode is put right by the next present or rolled_back
    changed = params["state"] != "query" and bool(after) and (
        after != before or node_record.mode_of(params["path"]) != "0644")
    if changed and not check_mode:
        node_record.write(params["path"], after)
    on_node = before if check_mode else after
    return {
        "changed": changed, "record": after, "pull_needed": pull_needed,
        "to_run": image_record.to_run(on_node, previous=False, unrecorded=params["ref"]),
        "rollback_to": image_record.to_run(on_node, previous=True),
        "diff": {"before": node_record.text(before) if before else "", "after": node_record.text(after) if after else ""},
    }


def run_call(name: str, params: dict, run: Runner, which: Which, check_mode: bool) -> dict:
    """One call's result, as its module returns it; Refused where the module fails."""
    if name == "gpu_facts":
        return gpu_facts(params, run, which)
    if name == "node_state":
        return node_state_read(params, run, which)
    if name == "image_record":
        return image_record_apply(params, run, which, check_mode)
    raise Refused("node_read cannot run %s: it runs %s" % (name, ", ".join(sorted(SPECS))))

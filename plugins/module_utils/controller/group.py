# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does a cluster serve as a group? The verdict that decides whether vllm_serve
restarts every node of a cluster in order.

vLLM cannot take a member back into a running multi-node group: a follower that
restarts alone (a reboot brings it back by docker's restart policy, a crash, a
kill) leaves a head that fails (tensor parallel) or hangs on the lost rank (data
parallel). So a group whose members did not start together, or whose head does
not generate, restarts as a whole: stop all, start the head, then the followers.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

# The verdict's actions, in the order the role acts on them.
NONE, PROBE, WAIT, RESTART, FAIL = "none", "probe", "wait", "restart", "fail"


def _describe(member: Dict[str, Any]) -> str:
    container = member["container"]
    if not container.get("exists"):
        return "has no container"
    text = "has its container %s" % (container.get("status") or "stopped")
    if container.get("exit_code"):
        text += " (exit code %s)" % container["exit_code"]
    if container.get("restart_count"):
        text += ", restarted %d times by docker" % container["restart_count"]
    return text


def verdict(cluster: str, members: List[Optional[Dict[str, Any]]], nodes: List[str], window: float,
            probe: Optional[Dict[str, Any]] = None) -> Dict[str, str]:
    """The group's verdict.

    `members` holds, per node in `nodes` (head first), None when the host did not
    answer in this run, else {"container": node_state's container read before any
    change, "started": whether this run (re)started it}. `probe` is the head's
    vllm_health result, None before it ran. Returns {"action", "reason"}: `probe`
    when only a generation can tell, `wait` when the group started together in
    this run, `restart` when it must restart in order, `fail` when it cannot be
    judged, `none` when it serves.
    """
    missing = [node for node, member in zip(nodes, members) if member is None]
    if missing:
        return {"action": FAIL, "reason": "cluster %s cannot serve without %s, which did not answer in this run "
                "(unreachable or failed in an earlier task): bring it back, then re-run" % (cluster, ", ".join(missing))}
    known = [(node, member) for node, member in zip(nodes, members) if member is not None]
    started = [node for node, member in known if member["started"]]
    if started:
        if len(started) == len(known):
            return {"action": WAIT, "reason": "every node of %s started in this run" % cluster}
        kept = [node for node, member in known if not member["started"]]
        return {"action": RESTART, "reason": "%s (re)started in this run while %s kept running: vLLM cannot take a "
                "member back into a running group" % (", ".join(started), ", ".join(kept))}
    down = ["%s %s" % (node, _describe(member)) for node, member in known if not member["container"].get("running")]
    if down:
        return {"action": RESTART, "reason": "; ".join(down)}
    times = [(member["container"].get("started_at") or 0.0, node) for node, member in known]
    (first, first_node), (last, last_node) = min(times), max(times)
    if len(known) > 1 and last - first > window:
        return {"action": RESTART, "reason": "%s's container started %d s after %s's: it restarted alone (a reboot, a crash "
                "or a kill) and vLLM cannot take a member back into a running group" % (last_node, last - first, first_node)}
    if probe is None:
        return {"action": PROBE, "reason": "every node of %s runs; only a generation tells whether it serves" % cluster}
    if not probe.get("ready"):
        return {"action": RESTART, "reason": "the head of %s does not serve: %s" % (cluster, probe.get("detail") or "no answer")}
    return {"action": NONE, "reason": "%s serves" % cluster}


def judged(hostvars: Mapping[str, Mapping[str, Any]], cluster: Mapping[str, Any], window: float, force: bool = False,
           probe: Optional[Dict[str, Any]] = None) -> Dict[str, str]:
    """The verdict vllm_serve acts on: a restart where one was asked for (`force`); else the verdict of the members'
    vllm_serve_member facts in `hostvars`, and where those leave it to a generation, of the head's `probe` (none: the
    head was not probed, which restarts the group)."""
    if force:
        return {"action": RESTART, "reason": "a restart was asked for"}
    nodes = list(cluster["nodes"])
    members = [hostvars[node].get("vllm_serve_member") if node in hostvars else None for node in nodes]
    before = verdict(cluster["name"], members, nodes, float(window))
    if before["action"] != PROBE:
        return before
    return verdict(cluster["name"], members, nodes, float(window),
                   probe if probe is not None else {"ready": False, "detail": "the head was not probed"})

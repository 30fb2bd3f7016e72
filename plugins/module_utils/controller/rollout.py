# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout report: what an upgrade or rolling restart did to every cluster.

Each step the vllm_rollout role ran on a cluster (upgrade, restart or rollback)
is one record: {cluster, step, ok, image, revision, seconds, reason, smoke_report}; revision is the
weights' commit the step served ("" where the cluster downloads from the Hub at start).
"""

from __future__ import annotations

from typing import Any, Dict, List

DONE = {"upgrade": "upgraded", "restart": "restarted"}


def outcome(steps: List[Dict[str, Any]], action: str) -> str:
    if not steps:
        return "not attempted"
    last = steps[-1]
    if last["step"] == "rollback":
        return "rolled back" if last["ok"] else "rollback failed"
    return DONE.get(action, "done") if last["ok"] else "failed"


def build(steps: List[Dict[str, Any]], clusters: List[str], action: str) -> Dict[str, Any]:
    rows = []
    for name in clusters:
        mine = [step for step in steps if step["cluster"] == name]
        rows.append({"name": name, "outcome": outcome(mine, action), "steps": mine})
    ok = all(row["outcome"] == DONE.get(action, "done") for row in rows)
    return {"action": action, "ok": ok, "clusters": rows, "summary": summary(rows, action, ok),
            "markdown": markdown(rows, action, ok)}


def summary(rows: List[Dict[str, Any]], action: str, ok: bool) -> str:
    if ok:
        return "%s: every cluster (%s) %s and passed the quick smoke" % (
            action, ", ".join(row["name"] for row in rows), DONE.get(action, "done"))
    failed = next(row for row in rows if row["outcome"] not in ("not attempted", DONE.get(action, "done")))
    first = next(step for step in failed["steps"] if not step["ok"])
    text = "%s stopped at cluster %s: %s" % (action, failed["name"], first["reason"])
    last = failed["steps"][-1]
    if failed["outcome"] == "rolled back":
        moved = [step for step in failed["steps"] if step["step"] != "rollback"]
        weights = bool(moved) and bool(last.get("revision")) and moved[0].get("revision") != last.get("revision")
        where, back, new = ((" with the weights at %s" % last["revision"], "vllm_image and vllm_model_revision back to "
                             "those", "image or revision") if weights else ("", "vllm_image back to that digest", "image"))
        text += ". It was rolled back to %s%s and serves again (quick smoke passed): set %s in the inventory, or fix " \
                "the new %s, before site.yml or upgrade.yml runs again" % (last["image"], where, back, new)
    elif failed["outcome"] == "rollback failed":
        text += ". The rollback to %s failed too (%s): the cluster does not serve" % (last["image"], last["reason"])
    untouched = [row["name"] for row in rows if row["outcome"] == "not attempted"]
    if untouched:
        text += ". Not attempted: %s" % ", ".join(untouched)
    return text


def markdown(rows: List[Dict[str, Any]], action: str, ok: bool) -> str:
    lines = ["# Rollout (%s): %s" % (action, "every cluster took it" if ok else "STOPPED"), "",
             "| cluster | outcome | step | ok | seconds | image | revision | detail |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        for step in row["steps"] or [{"step": "-", "ok": "-", "seconds": "-", "image": "-", "reason": ""}]:
            detail = str(step.get("reason") or "").replace("|", "\\|").replace("\n", " ")
            lines.append("| %s | %s | %s | %s | %s | `%s` | %s | %s |" % (
                row["name"], row["outcome"], step["step"], step["ok"], step["seconds"], step["image"],
                step.get("revision") or "-", detail[:300]))
    if not ok:
        lines += ["", summary(rows, action, ok)]
    return "\n".join(lines) + "\n"

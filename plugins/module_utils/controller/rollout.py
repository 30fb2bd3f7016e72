# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout: whether it may stop a cluster that no router fronts, and the report of what an upgrade or
rolling restart did to every cluster.

Each step the vllm_rollout role ran on a cluster (upgrade, restart or rollback)
is one record: {cluster, step, ok, image, revision, seconds, reason, smoke_report}; revision is the
weights' commit the step served ("" where the cluster downloads from the Hub at start).
"""

from __future__ import annotations

import urllib.parse
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError

DONE = {"upgrade": "upgraded", "restart": "restarted"}
ALLOW_DOWNTIME = "vllm_rollout_allow_downtime"
# what a router's worker list is made of (roles/vllm_router, module_utils/node/router.py workers())
ROUTER_SETTINGS = ("vllm_router_workers", "vllm_router_clusters")
_TRUE = ("true", "yes", "on", "1", "y")
_FALSE = ("false", "no", "off", "0", "n", "")


# --- sites without routers: a cluster no router fronts stops serving while it moves ------------------------

def _base_url(value: Any) -> Optional[str]:
    """scheme://host:port of a worker URL, as the router role writes it; None for what is not one (the
    router role refuses that with its own fix)."""
    if not isinstance(value, str):
        return None
    parts = urllib.parse.urlsplit(value.strip())
    return "%s://%s" % (parts.scheme, parts.netloc) if parts.scheme in ("http", "https") and parts.netloc else None


def fronts(router: Mapping[str, Any], summary: Mapping[str, Any]) -> bool:
    """Whether a router with these settings sends requests to the cluster (its vllm_launch.cluster summary):
    vllm_router_workers when set, else the clusters vllm_router_clusters names, else every planned cluster."""
    workers = router.get("vllm_router_workers") or []
    if workers:
        return _base_url(summary.get("endpoint")) in {_base_url(w) for w in workers}
    named = router.get("vllm_router_clusters") or []
    return not named or str(summary.get("name")) in {str(n) for n in named}


def unrouted(summaries: Iterable[Mapping[str, Any]], routers: Sequence[Mapping[str, Any]]) -> List[str]:
    """The names of the clusters that no router fronts, sorted, once each (a summary comes once per node)."""
    out = {str(s["name"]) for s in summaries
           if isinstance(s, Mapping) and s.get("name") and not any(fronts(r, s) for r in routers)}
    return sorted(out)


def accepted(value: Any) -> Optional[bool]:
    """A bool variable as Ansible's bool reads it (unset: false): vllm_rollout_allow_downtime, vllm_firewall; None for
    a value that is not one."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return bool(value) if value in (0, 1) else None
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    return None


def pd_deployments(summaries: Iterable[Mapping[str, Any]]) -> Dict[str, Dict[str, List[str]]]:
    """{P/D deployment: {role: [cluster, ...]}} of the clusters in the rollout that are P/D sides."""
    out: Dict[str, Dict[str, List[str]]] = {}
    for s in summaries:
        pd = s.get("pd") if isinstance(s, Mapping) else None
        if isinstance(pd, Mapping) and pd.get("deployment") and s.get("name"):
            names = out.setdefault(str(pd["deployment"]), {}).setdefault(str(pd.get("role")), [])
            if str(s["name"]) not in names:
                names.append(str(s["name"]))
    return {name: {role: sorted(clusters) for role, clusters in sorted(sides.items())}
            for name, sides in sorted(out.items())}


def units(summaries: Iterable[Mapping[str, Any]]) -> List[List[str]]:
    """The clusters the rollout moves together, in order: the sides of a P/D deployment as one unit, since the NIXL
    handshake refuses sides on different vLLM builds and a rollback must take both back; every other cluster alone."""
    grouped: Dict[Tuple[str, str], Set[str]] = {}
    for s in summaries:
        if not isinstance(s, Mapping) or not s.get("name"):
            continue
        pd = s.get("pd") if isinstance(s.get("pd"), Mapping) else {}
        key = ("pd", str(pd["deployment"])) if pd.get("deployment") else ("cluster", str(s["name"]))
        grouped.setdefault(key, set()).add(str(s["name"]))
    return sorted(sorted(names) for names in grouped.values())


def downtime_problems(summaries: Iterable[Mapping[str, Any]], routers: Sequence[Mapping[str, Any]], allow: Any,
                      action: str = "upgrade") -> List[str]:
    """One line per problem, before the rollout touches any host: an upgrade that would move one side of a P/D
    deployment without the other; then what it would stop, refused unless vllm_rollout_allow_downtime accepts that
    each stops serving while it moves: the clusters that no router fronts, and the P/D deployments (their router
    serves one deployment alone and cannot take a removed side back)."""
    summaries = list(summaries)
    deployments = pd_deployments(summaries)
    problems = [] if action == "restart" else _half_deployments(deployments)
    verdict = accepted(allow)
    if verdict is None:
        return problems + [str(ClusterError(ALLOW_DOWNTIME, allow, "the rolling restart" if action == "restart"
                                            else "the upgrade", "not a boolean", "set true (accept the downtime) "
                                            "or false"))]
    bare = unrouted(summaries, routers)
    if verdict or not (bare or deployments):
        return problems
    allow = False if allow is None else allow
    moving = "a rolling restart" if action == "restart" else "an upgrade"
    if bare:
        many = len(bare) > 1
        problems.append(str(ClusterError(
            ALLOW_DOWNTIME, allow, "cluster%s %s" % ("s" if many else "", ", ".join(bare)),
            "no router fronts %s, so %s stops %s while it moves (its clients get errors until it serves again)"
            % ("these clusters" if many else "this cluster", moving, "each of them" if many else "it"),
            "add a vllm_routers group in front of the clusters (inferops.vllm.vllm_router), or set "
            "vllm_rollout_allow_downtime: true to accept the downtime")))
    if deployments:
        problems.append(str(ClusterError(
            ALLOW_DOWNTIME, allow, "P/D deployment%s %s" % ("s" if len(deployments) > 1 else "", ", ".join(deployments)),
            "%s moves each deployment's sides together and its router serves that deployment alone, so it stops "
            "serving while it moves (its clients get errors until it serves again)" % moving,
            "set vllm_rollout_allow_downtime: true to accept the downtime; a second deployment behind its own router "
            "keeps serving meanwhile")))
    return problems


def _half_deployments(deployments: Mapping[str, Mapping[str, List[str]]]) -> List[str]:
    """An upgrade limited to one side of a P/D deployment would leave its sides on different images or revisions."""
    half = {name: sides for name, sides in deployments.items() if len(sides) < 2}
    return [str(ClusterError(
        "--limit", ", ".join(c for side in sides.values() for c in side), "P/D deployment %s" % name,
        "the upgrade would move its %s side alone, and sides on different images or revisions cannot hand KV over"
        % next(iter(sides)), "add the deployment's %s cluster to --limit, so that both sides move together"
        % ("decode" if "prefill" in sides else "prefill"))) for name, sides in half.items()][:1]


def downtime_notes(summaries: Iterable[Mapping[str, Any]], routers: Sequence[Mapping[str, Any]],
                   accepted_for: Callable[[str], bool]) -> List[str]:
    """The plan's note per cluster that no router fronts and per P/D deployment, unless vllm_rollout_allow_downtime
    accepts it there."""
    summaries = list(summaries)
    return ["cluster %s: upgrades and rolling restarts stop this cluster while it moves (no router in front of it); "
            "set vllm_rollout_allow_downtime: true to accept" % name
            for name in unrouted(summaries, routers) if not accepted_for(name)] + \
        ["P/D deployment %s: upgrades and rolling restarts stop it while its sides move together (its router serves "
         "it alone); set vllm_rollout_allow_downtime: true to accept" % name
         for name, sides in pd_deployments(summaries).items()
         if not all(accepted_for(c) for side in sides.values() for c in side)]


# --- the report --------------------------------------------------------------------------------------------

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


def progress(histories: Iterable[Any]) -> Dict[str, Any]:
    """Where a rollout stands, from the histories the clusters' heads keep (vllm_rollout_history, one list per host):
    stopped, once a batch failed (a rollback step's own result aside), and the clusters a batch moved or tried to."""
    entries = [entry for history in histories or [] for entry in (history or []) if isinstance(entry, Mapping)]
    return {"stopped": any(not entry.get("ok") and entry.get("step") != "rollback" for entry in entries),
            "reached": list(dict.fromkeys(entry.get("cluster") for entry in entries))}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an upgrade to an image of another vLLM changes in one cluster's launch, flag by flag.

The plan compiles the cluster twice (vllm_version_before with vllm_image_before, then vllm_version with
vllm_image); this compares the two compiles node by node and says, for people (version-change.md, the plan's
block) and for the rollout (the old launch is the rollback's):
  flags removed, added, changed or spelt anew (0.33 spells --no-enable-X as --disable-X);
  flags the launch leaves unset whose default the new vLLM changed;
  env names dropped, added or changed;
  the KV-transfer and weight-cache settings before and after.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.controller import vllm_surface
from ansible_collections.inferops.vllm.plugins.module_utils.controller.launch import flag_text

# argv's positional model, not a flag (the same in both compiles: one inventory)
_NOT_FLAGS = ("model",)


def _text(flag: str, value: Any, argv: List[str]) -> Optional[str]:
    """The flag as the node's vLLM reads it (launch.flag_text), None where the launch leaves it unset."""
    return None if value is None else flag_text(flag, value, argv)


def _flag_rows(before: Mapping[str, Any], after: Mapping[str, Any]) -> List[Dict[str, Any]]:
    rows = []
    old_args, new_args = before["args"], after["args"]
    for flag in sorted(set(old_args) | set(new_args)):
        if flag in _NOT_FLAGS:
            continue
        old = _text(flag, old_args.get(flag), before["argv"])
        new = _text(flag, new_args.get(flag), after["argv"])
        if old == new:
            continue
        kind = ("removed" if new is None else "added" if old is None
                else "changed" if old_args.get(flag) != new_args.get(flag) else "spelt anew")
        rows.append({"flag": flag, "change": kind, "before": old, "after": new})
    return rows


def _defaults(old: vllm_surface.Surface, new: vllm_surface.Surface, args: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """Flags both versions have and the launch leaves unset, whose parser default differs: the node now runs the
    new default. One row per setting: a flag and its negation (--enable-X, --disable-X) share one (their dest)."""
    rows = []
    done = {new.options["--" + flag]["dest"] for flag in args if "--" + flag in new.options}   # the launch sets them
    for flag, option in sorted(new.options.items()):
        was = old.options.get(flag)
        if (option.get("hidden") or was is None or "default" not in option or "default" not in was
                or option["dest"] in done):
            continue
        done.add(option["dest"])
        if option["default"] != was["default"]:
            rows.append({"flag": flag[2:], "change": "newly defaulted", "before": was["default"],
                         "after": option["default"]})
    return rows


def _env_rows(before: Mapping[str, Any], after: Mapping[str, Any], new: vllm_surface.Surface) -> List[Dict[str, Any]]:
    rows = []
    old_env, new_env = before["env"], after["env"]
    for name in sorted(set(old_env) | set(new_env)):
        if old_env.get(name) == new_env.get(name):
            continue
        kind = ("dropped" if name not in new_env else "added" if name not in old_env else "changed")
        if kind == "dropped" and new.unknown_env(name):
            kind = "dropped (vLLM %s no longer reads it)" % new.version
        rows.append({"name": name, "change": kind, "before": old_env.get(name), "after": new_env.get(name)})
    return rows


def _setting(launch: Mapping[str, Any], which: str) -> Any:
    return launch["args"].get("kv-transfer-config") if which == "kv_transfer" else launch.get("weight_cache")


def compare(before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]]) -> Dict[str, Any]:
    """One cluster's change: before and after are {host: launch} of the two compiles (the same hosts). A row that
    holds on some nodes only names them."""
    head = next(iter(after.values()))["cluster"]
    old_version, new_version = next(iter(before.values()))["cluster"]["vllm_version"], head["vllm_version"]
    old, new = vllm_surface.load(old_version), vllm_surface.load(new_version)
    if old is None or new is None:   # both compiled, so both surfaces exist
        raise ValueError("no surface for vLLM %s or %s" % (old_version, new_version))
    hosts = list(after)
    seen: Dict[str, Dict[str, Any]] = {}
    for host in hosts:
        rows = ([dict(r, part="flags") for r in _flag_rows(before[host], after[host])]
                + [dict(r, part="defaults") for r in _defaults(old, new, after[host]["args"])]
                + [dict(r, part="env") for r in _env_rows(before[host], after[host], new)])
        for row in rows:
            key = json.dumps(row, sort_keys=True, default=str)
            seen.setdefault(key, dict(row, nodes=[]))["nodes"].append(host)
    rows = list(seen.values())
    for row in rows:
        if row["nodes"] == hosts:
            row["nodes"] = "all"
    settings = {}
    for which in ("kv_transfer", "weight_cache"):
        was, now = (_setting(before[hosts[0]], which), _setting(after[hosts[0]], which))
        if was is not None or now is not None:
            settings[which] = {"before": was, "after": now, "same": was == now}
    return {"cluster": head["name"], "from": old_version, "to": new_version,
            "image_from": next(iter(before.values()))["cluster"]["image"], "image_to": head["image"],
            "flags": [r for r in rows if r["part"] == "flags"],
            "defaults": [r for r in rows if r["part"] == "defaults"],
            "env": [r for r in rows if r["part"] == "env"],
            "settings": settings}


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return "`%s`" % text.replace("|", "\\|")


def _nodes(row: Mapping[str, Any]) -> str:
    return "all" if row["nodes"] == "all" else ", ".join(row["nodes"])


def to_markdown(change: Mapping[str, Any]) -> str:
    """version-change.md: what the upgrade changes in this cluster's launch, for the person who approves it."""
    out = ["# Cluster %s: vLLM %s to %s" % (change["cluster"], change["from"], change["to"]), "",
           "Image %s, then %s. A rollback returns to the launch before, exactly." % (
               _cell(change["image_from"]), _cell(change["image_to"])), ""]
    out += ["## Flags", ""]
    if change["flags"]:
        out += ["| flag | change | before | after | nodes |", "|---|---|---|---|---|"]
        out += ["| %s | %s | %s | %s | %s |" % (r["flag"], r["change"], _cell(r["before"]), _cell(r["after"]),
                                                _nodes(r)) for r in change["flags"]]
    else:
        out.append("No flag changes.")
    out += ["", "## Defaults the new vLLM changed (flags this launch leaves unset)", ""]
    if change["defaults"]:
        out += ["| flag | before | after |", "|---|---|---|"]
        out += ["| %s | `%s` | `%s` |" % (r["flag"], json.dumps(r["before"]), json.dumps(r["after"]))
                for r in change["defaults"]]
    else:
        out.append("None.")
    out += ["", "## Environment", ""]
    if change["env"]:
        out += ["| name | change | before | after | nodes |", "|---|---|---|---|---|"]
        out += ["| %s | %s | %s | %s | %s |" % (r["name"], r["change"], _cell(r["before"]), _cell(r["after"]),
                                                _nodes(r)) for r in change["env"]]
    else:
        out.append("No environment changes.")
    titles = {"kv_transfer": "KV transfer (--kv-transfer-config)", "weight_cache": "Weight cache (vllm preload)"}
    for which, values in change["settings"].items():
        out += ["", "## %s" % titles[which], ""]
        out.append("Unchanged: %s" % _cell(values["after"]) if values["same"] else
                   "Before: %s  \nAfter: %s" % (_cell(values["before"]), _cell(values["after"])))
    return "\n".join(out) + "\n"


def summary_lines(change: Mapping[str, Any]) -> List[str]:
    """The plan's block for the cluster: one line per kind of change (the file has the rows)."""
    def names(rows: List[Mapping[str, Any]], key: str, kind: str) -> List[str]:
        return [r[key] for r in rows if r["change"].startswith(kind)]
    out = ["vLLM %s -> %s (each row: version-change.md under cluster_plan_output_dir; a rollback returns to the "
           "launch before)" % (change["from"], change["to"])]
    for kind in ("removed", "added", "changed", "spelt anew"):
        found = names(change["flags"], "flag", kind)
        if found:
            out.append("  flags %s: %s" % (kind, ", ".join(found)))
    if change["defaults"]:
        out.append("  newly defaulted (unset here): %s" % ", ".join(r["flag"] for r in change["defaults"]))
    for kind in ("dropped", "added", "changed"):
        found = names(change["env"], "name", kind)
        if found:
            out.append("  env %s: %s" % (kind, ", ".join(found)))
    for which, values in change["settings"].items():
        out.append("  %s %s" % (which.replace("_", " "), "unchanged" if values["same"] else "changes"))
    return out

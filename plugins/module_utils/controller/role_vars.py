# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The other roles' variables, checked once on the controller in the plan: each host's inventory
value against the role's argument spec (type, list elements, choices), with Ansible's own type
conversions (so nothing Ansible would accept is refused, but for a mapping or list given for a string
or path, which Ansible would turn into its repr), one line per wrong value instead of the role's
failure on the hosts (after earlier roles changed them) with a dump of the spec."""

from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Optional, Tuple

from ansible.module_utils.common.validation import (
    check_type_bool, check_type_dict, check_type_float, check_type_int, check_type_list, check_type_path,
    check_type_str)

from ansible_collections.inferops.vllm.plugins.module_utils.controller import boundary, wrong_values

# what each type allows, the fix's wording, and a fallback example
_KINDS = {
    "str": (lambda v: check_type_str(v, allow_conversion=True), "a single value", "a name"),
    "path": (check_type_path, "a path", "/srv/data"),
    "int": (check_type_int, "a whole number", 20),
    "float": (check_type_float, "a number", 0.5),
    "bool": (check_type_bool, "true or false", "true"),
    "dict": (check_type_dict, "a mapping", "{name: value}"),
    "list": (check_type_list, "a list", "[a, b]"),
}


def _example(option: Mapping[str, Any], kind: str) -> Any:
    default = option.get("default")
    if default not in (None, "", [], {}) and "{{" not in str(default):
        if kind == "list" and isinstance(default, list):
            return "[%s]" % ", ".join(str(v) for v in default)
        return default
    return _KINDS[kind][2]


def problem_of(option: Mapping[str, Any], value: Any, variable: str = "") -> Optional[Tuple[str, str]]:
    """(what is allowed, the fix) when `value` does not fit the argument spec `option`, or the variable's
    format on the boundary (boundary.VAR_FORMATS), else None. Unknown types (raw, or a type this checker does
    not know) are left to the role."""
    found = _kind_problem(option, value)
    if found or not variable or option.get("type", "str") not in ("str", "path", "int", "list"):
        return found
    return boundary.problem(variable, value)


def _kind_problem(option: Mapping[str, Any], value: Any) -> Optional[Tuple[str, str]]:
    kind = option.get("type", "str")
    if kind not in _KINDS:
        return None
    check, allowed, _fallback = _KINDS[kind]
    if kind in ("str", "path") and isinstance(value, (Mapping, list, tuple)):
        converted = None   # Ansible would turn a mapping into its repr: never meant
    else:
        try:
            converted = check(value)
        except (TypeError, ValueError):
            converted = None
    if converted is None:
        shown = allowed if kind != "list" or not option.get("elements") else \
            "a list of %s values" % option["elements"]
        return "must be " + shown, "set %s, e.g. %s" % (shown, _example(option, kind))
    choices = option.get("choices")
    if kind == "list":
        element = option.get("elements")
        if element in _KINDS:
            for item in converted:
                bad = _kind_problem({"type": element, "choices": choices}, item)
                if bad:
                    what = "must be a list of %s values" % element if not bad[0].startswith("not one of") else \
                        "has %r, %s" % (item, bad[0])
                    return what, "set a list of %s" % (("values from %s" % ", ".join(map(str, choices)))
                                                       if choices else "%s values" % element)
        return None
    if choices and converted not in choices and str(converted) not in [str(c) for c in choices]:
        return "not one of %s" % ", ".join(map(str, choices)), "set one of %s" % ", ".join(map(str, choices))
    return None


def check(options: Mapping[str, Tuple[str, Mapping[str, Any]]],
          values: Iterable[Tuple[str, Mapping[str, Any]]]) -> List[str]:
    """options: {variable: (role, argument spec option)}; values: (host, {variable: value}) with only
    the variables the host sets. One line per wrong value; hosts sharing a wrong value share a line."""
    wrong = wrong_values.gather(((host, [(var, value) for var, value in hvars.items() if var in options])
                                 for host, hvars in values),
                                lambda var, value: problem_of(options[var][1], value, var))
    return ["%s=%r (%s): %s (role %s). Fix: %s" % (w.variable, w.value, w.where, w.problem, options[w.variable][0], w.fix)
            for w in wrong]

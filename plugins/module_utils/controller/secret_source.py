# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a secret comes from, judged without reading it: ansible-vault, a template of vaulted variables, a lookup,
or plain text in the inventory. The plan warns about plain text and never decrypts a value. No Ansible imports: the
plan action hands in each variable's raw inventory value and Ansible's own test for a vaulted one."""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterable, List, Mapping

# "{{ name }}": a template that only names another variable (a vaulted one, as `ansible-vault` users write it)
_REF = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_DEPTH = 5


def plain_text(value: Any, raw_of: Callable[[str], Any], is_vaulted: Callable[[Any], bool], depth: int = 0) -> bool:
    """Whether a value, as the inventory holds it, is plain text: a literal string, or a template that names only
    variables that are plain text themselves. Vaulted (is_vaulted is asked first, so nothing is decrypted), unset,
    or a template with a lookup or an expression (its source is not the inventory's text) is not."""
    if value is None or is_vaulted(value) or not isinstance(value, str) or value == "":
        return False
    if "{{" not in value and "{%" not in value:
        return True
    names = _REF.findall(value)
    rest = _REF.sub("", value)
    if "{{" in rest or "{%" in rest or depth >= _DEPTH:
        return False
    return all(plain_text(raw_of(name), raw_of, is_vaulted, depth + 1) for name in names)


def warnings(raw_by_cluster: Mapping[str, Mapping[str, Any]], names: Iterable[str],
             is_vaulted: Callable[[Any], bool]) -> List[str]:
    """One warning per secret that some cluster's head holds in plain text ({cluster: its head's raw variables}),
    naming the clusters and the fix, never the value."""
    found: Dict[str, List[str]] = {}
    for cluster, raw in raw_by_cluster.items():
        for name in names:
            if plain_text(raw.get(name), raw.get, is_vaulted):
                found.setdefault(name, []).append(cluster)
    return ["%s (cluster%s %s) is written in plain text in the inventory: anyone who reads the inventory or its "
            "repository has it. Fix: encrypt it (ansible-vault encrypt_string --name %s) or set it from a vaulted "
            "variable" % (name, "s" if len(clusters) > 1 else "", ", ".join(clusters), name)
            for name, clusters in sorted(found.items())]

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Misspelt variables: an inventory variable with one of the collection's prefixes (vllm_, inferops_, or a
role's name and "_") that nothing in the collection reads. The known names are derived, never kept by
hand: the typed variables of the plan (cluster.VAR_TYPES and its neighbours) and every name with such a
prefix that the playbooks, roles and plugins mention (each role's meta/argument_specs.yml options, what they
read from the inventory, their defaults, facts and registered results), plus, in a source tree, what the
test harness (molecule/, .config/molecule/) reads and sets. Read as text: no YAML parser on a node. A new role is picked up by its
directory. No Ansible imports."""

from __future__ import annotations

import difflib
import os
import re
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
ALLOW = "inferops_allow_unknown_vars"
# where the collection's readers live; the harness directories exist only in a source tree
READERS = ("playbooks", "roles", "plugins", "molecule", os.path.join(".config", "molecule"))
SUFFIXES = (".yml", ".yaml", ".j2", ".py", ".sh", ".cfg", ".ini")
_CACHE: Dict[str, Tuple[Tuple[str, ...], FrozenSet[str]]] = {}


def prefixes(root: str = ROOT) -> Tuple[str, ...]:
    """vllm_ and inferops_, and each role's name followed by '_' (nvidia_driver_, vllm_image_, ...)."""
    roles = sorted(d for d in os.listdir(os.path.join(root, "roles")) if os.path.isdir(os.path.join(root, "roles", d)))
    return tuple(dict.fromkeys(("vllm_", "inferops_") + tuple(role + "_" for role in roles)))


def _mentioned(root: str, pattern: "re.Pattern[str]") -> Iterable[str]:
    for top in READERS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", ".git")]
            for name in files:
                if name.endswith(SUFFIXES):
                    with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                        yield from pattern.findall(handle.read())


def known(root: str = ROOT) -> Tuple[Tuple[str, ...], FrozenSet[str]]:
    """(the managed prefixes, every name the collection knows), read once per process."""
    if root not in _CACHE:
        managed = prefixes(root)
        pattern = re.compile(r"(?<![A-Za-z0-9_])((?:%s)[A-Za-z0-9_]*[A-Za-z0-9])" % "|".join(map(re.escape, managed)))
        names = set(cluster.VAR_TYPES) | set(cluster.CLUSTER_DEFAULTS) | set(cluster.SECRET_ENV.values())
        names |= set(cluster.DRIVER_VARS) | {ALLOW}
        names |= set(_mentioned(root, pattern))   # every roles/*/meta/argument_specs.yml option among them
        _CACHE[root] = (managed, frozenset(names))
    return _CACHE[root]


def unknown(names: Iterable[str], root: str = ROOT) -> List[str]:
    managed, names_known = known(root)
    return [n for n in names if isinstance(n, str) and n.startswith(managed) and n not in names_known]


def suggestion(name: str, root: str = ROOT) -> Optional[str]:
    close = difflib.get_close_matches(name, sorted(known(root)[1]), n=3, cutoff=0.75)
    return " or ".join(close) if close else None


def lines(unknown_by_host: Mapping[str, Iterable[str]], root: str = ROOT) -> List[str]:
    """One line per unknown name, naming its hosts (the value is not read: it may be a vault secret)."""
    hosts_of: Dict[str, List[str]] = {}
    for host, names in unknown_by_host.items():
        for name in names:
            hosts_of.setdefault(name, []).append(host)
    out = []
    for name, hosts in hosts_of.items():
        close = suggestion(name, root)
        where = "host %s" % hosts[0] if len(hosts) == 1 else "hosts %s" % (
            ", ".join(hosts) if len(hosts) <= 4 else "%s and %d more" % (", ".join(hosts[:3]), len(hosts) - 3))
        out.append(str(cluster.ClusterError(
            name, "<not read>", where, "no role, playbook or plugin of inferops.vllm reads this variable",
            ("did you mean %s? " % close if close else "check the spelling against the roles' argument specs "
             "(ansible-doc -t role inferops.vllm.<role>); ")
            + "%s: true turns this refusal into a warning" % ALLOW)))
    return out

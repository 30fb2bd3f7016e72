# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wrong inventory values gathered for one message: hosts that share a wrong value (as group_vars give
them) share one line that names them. The plan's type check (cluster.VAR_TYPES) and the role-variable
check (role_vars, the argument specs) judge values differently and group them here. No Ansible imports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

# (what is wrong, the fix), or None where the value is fine
Judge = Callable[[str, Any], Optional[Tuple[str, str]]]


@dataclass(frozen=True)
class WrongValue:
    variable: str
    value: Any
    problem: str
    fix: str
    hosts: Tuple[str, ...]

    @property
    def where(self) -> str:
        return shown_hosts(self.hosts)


def shown_hosts(hosts: Sequence[str]) -> str:
    """`host a`, `hosts a, b`, or past four `hosts a, b, c and 5 more`."""
    if len(hosts) == 1:
        return "host %s" % hosts[0]
    if len(hosts) <= 4:
        return "hosts %s" % ", ".join(hosts)
    return "hosts %s and %d more" % (", ".join(hosts[:3]), len(hosts) - 3)


def gather(values: Iterable[Tuple[str, Iterable[Tuple[str, Any]]]], judge: Judge) -> List[WrongValue]:
    """values: (host, [(variable, value), ...]). Every value `judge` refuses, once per variable and value
    (compared by repr), with the hosts that have it, in the order first seen. None is unset: not judged."""
    found: Dict[Tuple[str, str], Tuple[Any, Tuple[str, str], List[str]]] = {}
    for host, pairs in values:
        for variable, value in pairs:
            problem = None if value is None else judge(variable, value)
            if problem:
                found.setdefault((variable, repr(value)), (value, problem, []))[2].append(host)
    return [WrongValue(variable, value, problem, fix, tuple(hosts))
            for (variable, _shown), (value, (problem, fix), hosts) in found.items()]

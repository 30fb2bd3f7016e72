# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which OS data file a role reads on a node: the one place that choice is made (lookup inferops.vllm.os_data).

A role with OS specifics keeps them in `vars/<distribution>.yml` (Ubuntu, RedHat's family members by name) or
`vars/<os family>.yml`, each holding one mapping, `<role>_os`. The role's `vars/main.yml` names it through the
lookup, so it is read where it is used, with no task of its own.
"""

from __future__ import annotations

import os
from typing import List, Mapping

ROLES_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "roles"))


class OSDataError(Exception):
    """Refused with the reason and the fix."""


def candidates(facts: Mapping[str, object]) -> List[str]:
    """The file names tried, most specific first; OSDataError without the facts that choose."""
    missing = [key for key in ("distribution", "os_family") if not facts.get(key)]
    if missing:
        raise OSDataError("the node's facts lack %s: gather them before the role's OS data is read "
                          "(gather_facts, or ansible.builtin.setup with gather_subset: [min])" % ", ".join(missing))
    return list(dict.fromkeys(["%s.yml" % facts["distribution"], "%s.yml" % facts["os_family"]]))


def data_file(role: str, facts: Mapping[str, object], roles_dir: str = ROLES_DIR) -> str:
    """The path of `role`'s OS data file for a node with `facts`."""
    folder = os.path.join(roles_dir, role, "vars")
    if not os.path.isdir(folder):
        raise OSDataError("role %s has no vars/ folder under %s" % (role, roles_dir))
    names = candidates(facts)
    for name in names:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    raise OSDataError("role %s has no OS data for %s (%s family): it looked for %s in %s. The role's "
                      "meta/main.yml lists the platforms it supports." % (
                          role, facts["distribution"], facts["os_family"], " and ".join(names), folder))


def variable(role: str) -> str:
    """The one mapping each OS data file of `role` holds."""
    return "%s_os" % role

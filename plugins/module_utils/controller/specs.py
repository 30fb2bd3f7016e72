# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' argument specs and literal defaults, read from the collection's own files once per process: the
one statement of every variable's type, choices and default. The plan builds its inventory types (VAR_TYPES) from the `inventory`
entry point of roles/cluster_plan and checks the other roles' variables against their `main` entry points, so
what ansible-doc shows a user is what the plan enforces."""

from __future__ import annotations

import os
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.os_data import ROLES_DIR

# The facts one role hands another, each set by the role that decides it and declared as an option of the roles that
# read it (docs/architecture.md, "what one role hands another"; tests/unit/test_handoffs.py): never inventory input.
HANDOFFS = ("vllm_launch", "gpu_facts", "vllm_image_to_run", "vllm_image_pull_ref", "vllm_model_staged",
            "fabric_check_summary", "smoke_test_verdict", "vllm_router_url", "vllm_router_public_url", "vllm_router_kv_sides",
            "vllm_observability_generated", "vllm_host_plan")
_LOADED: Dict[str, Any] = {}


@dataclass(frozen=True)
class VarType:
    """What one inventory variable must hold; null always means "not set"."""
    kind: str                                  # str | int | bool | dict | list
    minimum: int = 1
    maximum: Optional[int] = None
    choices: Sequence[str] = ()
    example: Any = None
    default: Any = None


class Lazy(MappingABC):
    """A read-only mapping built by `build` on its first use. The specs are YAML and PyYAML is the controller's:
    module_utils are also imported where it is absent (ansible-test's import check), so nothing is read at import."""

    def __init__(self, build: Callable[[], Mapping[str, Any]]):
        self._build, self._data = build, None

    def _built(self) -> Mapping[str, Any]:
        if self._data is None:
            self._data = dict(self._build())
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._built()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


def _load(role: str, name: str) -> Any:
    """roles/<role>/<name> as YAML, read once ({} when the role has no such file)."""
    import yaml   # the controller's (see Lazy)

    key = role + "/" + name
    if key not in _LOADED:
        try:
            with open(os.path.join(ROLES_DIR, role, name), encoding="utf-8") as handle:
                _LOADED[key] = yaml.safe_load(handle) or {}
        except OSError:
            _LOADED[key] = {}
    return _LOADED[key]


def options(role: str, entry: str = "main") -> Dict[str, Dict[str, Any]]:
    """The options of one entry point of a role's meta/argument_specs.yml."""
    specs = _load(role, os.path.join("meta", "argument_specs.yml")).get("argument_specs") or {}
    return dict((specs.get(entry) or {}).get("options") or {})


def own_options(role: str) -> List[str]:
    """The names of the main entry point's options that are the role's own (named <role>_...), secrets
    (no_log) left out, in the spec's order."""
    return [name for name, option in options(role).items()
            if name.startswith(role + "_") and not (option or {}).get("no_log")]


def role_default(role: str, name: str) -> Any:
    """A literal default from roles/<role>/defaults/main.yml (None for a template or none)."""
    value = _load(role, os.path.join("defaults", "main.yml")).get(name)
    return None if isinstance(value, str) and "{{" in value else value


def var_types(spec: Mapping[str, Mapping[str, Any]], prefix: str) -> Dict[str, VarType]:
    """A VarType per option whose name starts with prefix: its type, choices and default."""
    return {name: VarType(kind=option.get("type", "str"), choices=tuple(option.get("choices") or ()),
                          default=option.get("default"))
            for name, option in spec.items() if name.startswith(prefix)}


def with_bounds(types: Mapping[str, VarType], bounds: Mapping[str, Tuple[int, Optional[int], Any]]
                ) -> Dict[str, VarType]:
    """The types with the whole numbers' (minimum, maximum, example) that the spec's schema cannot state."""
    return {name: replace(kind, minimum=bounds[name][0], maximum=bounds[name][1], example=bounds[name][2])
            if name in bounds else kind for name, kind in types.items()}


# The inventory variables the plan reads, as roles/cluster_plan documents them (its `inventory` entry point).
INVENTORY_TYPES: Mapping[str, VarType] = Lazy(lambda: var_types(options("cluster_plan", "inventory"), "vllm_"))

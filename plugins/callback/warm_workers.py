# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
name: warm_workers
type: aggregate
short_description: Task workers forked from a warm, frozen controller
description:
  - Changes nothing a play does or reports; only what each task worker inherits from the controller.
  - Ansible forks one worker process per task and host, and each worker loads, for itself, every plugin its task's
    templates, connection and privilege escalation use (parsing their documentation for their options). This
    callback loads the filters, tests and lookups of C(ansible.builtin) and of this collection, and each host's
    connection and become plugin, in the controller before the first fork (through Ansible's public plugin loaders),
    so that every worker inherits them loaded.
  - Right before each fork the controller's objects are moved out of the garbage collector's reach (Python's
    C(gc.freeze)); they are put back when the next task starts. A worker's collector then walks only the objects
    the worker made, not the hundreds of thousands the controller holds, and writes to none of the memory pages
    the worker shares with it, so none is copied.
  - Public interfaces only (Ansible's callback and plugin loader API, Python's C(gc)); it replaces no function of
    Ansible, Jinja or Python. Each worker still compiles the templates it renders (docs/benchmarks.md gives the cost).
  - The collection's C(ansible.cfg) and Molecule configuration enable it (C(callbacks_enabled = inferops.vllm.warm_workers)).
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
requirements:
  - enabled in the configuration (C(callbacks_enabled))
"""

import gc
import importlib
import os

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import become_loader, connection_loader, filter_loader, lookup_loader, test_loader


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "inferops.vllm.warm_workers"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # forks for implicit tasks (the facts gathered by a play) are workers too
        self.wants_implicit_tasks = True
        self._warm = False
        self._play = None
        self._loaded_by_name: set[tuple[str, str]] = set()
        # the hosts whose plugins this play has loaded: a host's variables are read once per play, not per fork
        self._hosts_seen: set[str] = set()

    def v2_playbook_on_play_start(self, play):
        gc.unfreeze()
        self._play = play
        self._hosts_seen.clear()
        if not self._warm:
            self._warm = True
            _load_template_plugins()

    def v2_runner_on_start(self, host, task):
        # the strategy calls this right before it forks the host's worker
        self._load_connection_plugins(host)
        gc.freeze()

    def v2_playbook_on_task_start(self, task, is_conditional):
        gc.unfreeze()

    def v2_playbook_on_handler_task_start(self, task):
        gc.unfreeze()

    def v2_playbook_on_stats(self, stats):
        gc.unfreeze()

    def _load_connection_plugins(self, host) -> None:
        """The connection and become plugins the host's variables or the play name; a templated name is the worker's
        to resolve, and a plugin named but not used costs one load per run."""
        if host.name in self._hosts_seen:
            return
        self._hosts_seen.add(host.name)
        scopes = [host.vars, *(group.get_vars() for group in host.get_groups())]
        for kind, variable, attribute, loader in (("connection", "ansible_connection", "connection", connection_loader),
                                                  ("become", "ansible_become_method", "become_method", become_loader)):
            names = {scope.get(variable) for scope in scopes} | {getattr(self._play, attribute, None)}
            for name in names:
                if isinstance(name, str) and name and "{" not in name and (kind, name) not in self._loaded_by_name:
                    self._loaded_by_name.add((kind, name))
                    loader.get(name, class_only=True)


# this collection's plugins/ folder
_PLUGINS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the lookups the roles' templates use besides this collection's own
_BUILTIN_LOOKUPS = ("vars", "file", "template")


def _load_template_plugins() -> None:
    """Every filter and test of ansible.builtin and of this collection, and the lookups the roles use."""
    list(filter_loader.all())
    list(test_loader.all())
    for name in _BUILTIN_LOOKUPS:
        lookup_loader.get(f"ansible.builtin.{name}")
    for kind, loader in (("filter", filter_loader), ("test", test_loader), ("lookup", lookup_loader)):
        for name in _collection_plugin_names(kind):
            loader.get(f"inferops.vllm.{name}")


def _collection_plugin_names(kind: str) -> list[str]:
    """The names this collection's plugins of a kind are called by: a lookup by its file, a filter or test by
    each name its file declares (one file may hold several)."""
    folder = os.path.join(_PLUGINS_DIR, kind)
    stems = sorted(os.path.splitext(f)[0] for f in os.listdir(folder) if f.endswith(".py") and not f.startswith("_"))
    if kind == "lookup":
        return stems
    names = []
    for stem in stems:
        module = importlib.import_module(f"ansible_collections.inferops.vllm.plugins.{kind}.{stem}")
        declared = module.FilterModule().filters() if kind == "filter" else module.TestModule().tests()
        names.extend(declared)
    return names

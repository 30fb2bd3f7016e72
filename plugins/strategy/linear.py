# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
name: linear
short_description: Ansible's linear strategy, with task workers forked from a warm, frozen controller
description:
  - Runs a play exactly as C(ansible.builtin.linear) does; only what each task worker inherits differs. The JSON
    callbacks of ansible.posix report it as they report C(linear), one entry per task.
  - Ansible forks one worker process per task and host from the controller process, and each worker loads,
    for itself, every plugin its task's templates, connection and privilege escalation use, parsing their
    documentation for their options. This strategy loads them in the controller before the first fork, once
    per run (the filters, tests and lookups of C(ansible.builtin) and of this collection) or once per name
    (each host's connection and become plugin), so that every worker inherits them loaded.
  - Right before each fork, the controller's objects are moved out of the garbage collector's reach (Python's
    C(gc.freeze)), and they are put back right after it, so the controller collects as before. A worker's
    collector then walks only the objects the worker made, not the hundreds of thousands the controller
    holds, and writes to none of the memory pages the worker shares with it, so none is copied.
  - Together they cut the workers' CPU on a no-op C(site.yml) by about 40% (docs/benchmarks.md).
  - The collection's C(ansible.cfg) and Molecule configuration set it (C(strategy = inferops.vllm.linear)).
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

import gc
import importlib
import os

from ansible.plugins.loader import become_loader, connection_loader, filter_loader, lookup_loader, test_loader
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule

# this collection's plugins/ folder
_PLUGINS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the lookups the roles' templates use besides this collection's own
_BUILTIN_LOOKUPS = ("vars", "file", "template")


class StrategyModule(LinearStrategyModule):
    def __init__(self, tqm):
        super().__init__(tqm)
        self._loaded_by_name: set[tuple[str, str]] = set()

    def run(self, iterator, play_context):
        _load_template_plugins()
        # ansible.posix's json and jsonl callbacks group a task's results under one entry only for the
        # strategies they know to run in lockstep (linear, debug); this one does, so it tells them.
        # (ansible-core 2.18 keeps the stdout callback apart from the others)
        for callback in [getattr(self._tqm, "_stdout_callback", None), *self._tqm._callback_plugins]:
            if hasattr(callback, "_is_lockstep"):
                callback._is_lockstep = True
        return super().run(iterator, play_context)

    def _queue_task(self, host, task, task_vars, play_context):
        self._load_connection_plugins(task_vars, play_context)
        # the worker is forked in here (WorkerProcess.start)
        gc.freeze()
        try:
            return super()._queue_task(host, task, task_vars, play_context)
        finally:
            gc.unfreeze()

    def _load_connection_plugins(self, task_vars, play_context) -> None:
        wanted = (("connection", task_vars.get("ansible_connection") or play_context.connection, connection_loader),
                  ("become", task_vars.get("ansible_become_method") or play_context.become_method, become_loader))
        for kind, name, loader in wanted:
            # a templated name is the worker's to resolve
            if isinstance(name, str) and "{" not in name and (kind, name) not in self._loaded_by_name:
                self._loaded_by_name.add((kind, name))
                loader.get(name, class_only=True)


_TEMPLATE_PLUGINS_LOADED = False


def _load_template_plugins() -> None:
    """Load every filter and test of ansible.builtin and of this collection, and the lookups, once per run."""
    global _TEMPLATE_PLUGINS_LOADED
    if _TEMPLATE_PLUGINS_LOADED:
        return
    _TEMPLATE_PLUGINS_LOADED = True
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

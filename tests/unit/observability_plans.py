"""Shared by the observability tests: the golden plans, the roles' default settings, and Debian's promtool
(scripts/test.sh unpacks it with prometheus_binaries and exports INFEROPS_PROMETHEUS_DIR)."""
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/golden"
CACHE = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm"))
PROMETHEUS_DIR = Path(os.environ.get("INFEROPS_PROMETHEUS_DIR") or CACHE / "prometheus-debs")
PROMTOOL = PROMETHEUS_DIR / "usr/bin/promtool"
ROUTERS = {"router-1": {"address": "10.9.0.1", "metrics_port": 29000, "port": 8080}}


def golden(*clusters):
    """{host: launch} of the golden plans (every cluster, or the named ones)."""
    out = {}
    for path in sorted(GOLDEN.glob("*/*/*.json")):
        if clusters and path.parent.name not in clusters:
            continue
        launch = json.loads(path.read_text())
        out[launch["host"]] = launch
    return out


def addresses(launches):
    return {host: "10.%d.0.%d" % (i // 200 + 1, i % 200 + 1) for i, host in enumerate(sorted(launches))}


def settings(**overrides):
    out = {}
    for role in ("vllm_observability", "vllm_exporters"):
        out.update(yaml.safe_load((ROOT / "roles" / role / "defaults/main.yml").read_text()))
    out.update(overrides)
    return out


def promtool():
    """Debian's promtool 2.42: a failure when scripts/test.sh said where it is and it is not there, a skip (with
    the fix) when run by hand without it."""
    if PROMTOOL.is_file():
        return str(PROMTOOL)
    if os.environ.get("INFEROPS_PROMETHEUS_DIR"):
        pytest.fail("INFEROPS_PROMETHEUS_DIR=%s holds no usr/bin/promtool" % PROMETHEUS_DIR)
    pytest.skip("no promtool in %s: run scripts/test.sh unit, or `source tests/harness/lib.sh; prometheus_binaries`"
                % PROMETHEUS_DIR)


def run_promtool(*args, cwd=None):
    return subprocess.run([promtool(), *args], capture_output=True, text=True, check=False, timeout=120, cwd=cwd)


def write_tree(root, files):
    for path, text in files.items():
        target = Path(root) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

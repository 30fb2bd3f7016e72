"""The harness's stand-in nvidia-smi and amd-smi as its apt repository packages them (tests/harness/standin-repo)."""
import importlib.util
from pathlib import Path

BUILD_REPO = Path(__file__).parents[1] / "harness/standin-repo/build_repo.py"


def standin_tool(name: str, profile: Path, catalog=None) -> str:
    """The source of stand-in `name` with its placeholders filled from `catalog` (default: the tree's
    hardware.CATALOG), reading its GPUs from `profile` instead of /etc/inferops-standin/gpu.json."""
    spec = importlib.util.spec_from_file_location("standin_build_repo", BUILD_REPO)
    build_repo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_repo)
    text = build_repo.script(name, DRIVER_VERSION="580.95.05", ROCM_VERSION="7.2.1", CATALOG=build_repo.gpu_rows(catalog))
    return text.replace("/etc/inferops-standin/gpu.json", str(profile))

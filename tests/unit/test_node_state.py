"""node_state: reading what a node has, and deciding what a role must change."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

from ansible.utils.hashing import checksum_s

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".collections"))
from ansible_collections.inferops.vllm.plugins.module_utils import node_state  # noqa: E402


def run(argv):
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def test_dpkg_status_lines():
    out = ("docker.io\thold ok installed\t20.10.24+dfsg1-1+deb12u1+b6\n"
           "python3-requests\tinstall ok installed\t2.28.1+dfsg-1\n"
           "nvidia-container-toolkit\tdeinstall ok config-files\t1.17.0-1\n"
           "libfoo:amd64\tinstall ok half-installed\t1.0\n")
    assert node_state.parse_dpkg_query(out) == {
        "docker.io": {"version": "20.10.24+dfsg1-1+deb12u1+b6", "hold": True},
        "python3-requests": {"version": "2.28.1+dfsg-1", "hold": False}}


def test_rpm_lines_skip_unknown_names():
    out = "docker-ce\t27.3.1-1.el9\npackage nope is not installed\n"
    assert node_state.parse_rpm_query(out) == {"docker-ce": {"version": "27.3.1-1.el9", "hold": False}}


def test_packages_from_this_machines_dpkg():
    dpkg_query = shutil.which("dpkg-query")
    if not dpkg_query:
        return  # not a Debian controller
    found = node_state.packages(["dpkg", "inferops-no-such-package"], run, dpkg_query, None)
    assert found["dpkg"]["version"] and found["inferops-no-such-package"] is None


def test_missing_packages_honours_version_pins():
    state = {"docker-ce": {"version": "5:27.3.1-1~debian.12~bookworm", "hold": True},
             "containerd.io": {"version": "1.7.22-1", "hold": False}, "docker-ce-cli": None}
    names = ["docker-ce", "docker-ce-cli", "containerd.io"]
    assert node_state.missing_packages(state, names) == ["docker-ce-cli"]
    assert node_state.missing_packages(state, names, {"docker-ce": "5:27.3.1"}) == ["docker-ce-cli"]
    assert node_state.missing_packages(state, names, {"docker-ce": "5:28.0"}) == ["docker-ce", "docker-ce-cli"]


def test_unheld_packages_are_installed_and_not_held():
    state = {"nvidia-open": {"version": "580.95.05-1", "hold": True}, "cuda-drivers": {"version": "580.95.05-1", "hold": False},
             "nvidia-imex": None}
    assert node_state.unheld_packages(state, ["nvidia-open", "cuda-drivers", "nvidia-imex", "not-asked"]) == ["cuda-drivers"]


def test_systemctl_show():
    out = "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n"
    assert node_state.parse_systemctl_show(out) == {"installed": True, "active": True, "enabled": True}
    assert node_state.parse_systemctl_show("LoadState=not-found\nActiveState=inactive\nUnitFileState=\n") == {
        "installed": False, "active": False, "enabled": False}


def test_files_give_the_checksum_copy_compares(tmp_path):
    config = tmp_path / "vllm.yaml"
    config.write_text("model: tiny\n")
    config.chmod(0o640)
    secret = tmp_path / "vllm.env"
    secret.write_text("VLLM_API_KEY=s3cret\n")
    states = node_state.files([str(secret), str(tmp_path / "absent"), str(tmp_path)], [str(config)])
    assert states[str(config)] == {"exists": True, "isdir": False, "mode": "0640", "content": "model: tiny\n",
                                   "checksum": checksum_s("model: tiny\n")}  # what copy and hash('sha1') give
    assert "content" not in states[str(secret)]  # only what `read` names is returned whole
    assert states[str(tmp_path / "absent")] == {"exists": False}
    assert states[str(tmp_path)]["isdir"] and "checksum" not in states[str(tmp_path)]


def test_docker_inspect_output():
    image = json.dumps([{"Id": "sha256:b78", "RepoDigests": ["r/vllm@sha256:43be"]}])
    assert node_state.parse_image_inspect(image) == {"present": True, "id": "sha256:b78",
                                                     "repo_digests": ["r/vllm@sha256:43be"]}
    container = json.dumps([{"State": {"Running": True, "Restarting": True, "Status": "restarting"},
                             "Config": {"Image": "r/vllm@sha256:43be", "Labels": {"inferops.vllm.launch": "ab"}}}])
    assert node_state.parse_container_inspect(container) == {
        "exists": True, "running": False, "status": "restarting", "image": "r/vllm@sha256:43be",
        "labels": {"inferops.vllm.launch": "ab"}, "started_at": None, "restart_count": 0, "exit_code": None}


def test_container_start_time_and_restarts():
    container = json.dumps([{"State": {"Running": True, "Status": "running", "ExitCode": 0,
                                       "StartedAt": "2026-11-30T19:01:09.123456789Z"},
                             "RestartCount": 2, "Config": {"Image": "r/vllm@sha256:43be"}}])
    state = node_state.parse_container_inspect(container)
    assert state["started_at"] == 1796065269.123 and state["restart_count"] == 2
    assert node_state.docker_time("0001-01-01T00:00:00Z") is None
    assert node_state.docker_time("2026-11-30T20:01:09+01:00") == 1796065269.0


def test_without_docker_everything_reads_absent():
    assert node_state.images(["r/vllm@sha256:43be"], run, None)["r/vllm@sha256:43be"]["present"] is False
    assert node_state.containers(["vllm"], run, None)["vllm"]["exists"] is False


def test_installed_version_drops_the_release_and_is_empty_when_not_installed():
    assert node_state.installed_version({"version": "580.95.05-1", "hold": True}) == "580.95.05"
    assert node_state.installed_version({"version": "580.95.05-0ubuntu1-1"}) == "580.95.05"
    assert node_state.installed_version({"version": "6.4.1"}) == "6.4.1"
    assert node_state.installed_version(None) == ""
    assert node_state.installed_version({"version": ""}) == ""

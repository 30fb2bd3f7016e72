"""An MI355X node after converge, read on the node: ROCm 7.2.1 and amdgpu-dkms from the signed
repositories, held; the GPU groups; the AMD container toolkit and the dockerd that runs with its
runtime. Reached like a fleet node: over SSH as a non-root user with a sudo password."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "_shared"))
from node_reads import selections, mtime, started_at  # noqa: E402  (molecule/_shared, beside the scenarios)

testinfra_hosts = ["rocm-mi355x"]   # the nodes of molecule/hosts this module reads (testinfra honours it)

ROCM_BUILD = "7.2.1.70201-1"


def test_repositories(host):
    keyrings = host.file("/etc/apt/keyrings")
    assert keyrings.is_directory and keyrings.mode == 0o755
    key = host.file("/etc/apt/keyrings/rocm.asc")
    assert key.is_file and key.mode == 0o644 and key.user == "root"
    uris = {"rocm": "file:///srv/inferops-standin/rocm/apt/7.2.1", "amdgpu": "file:///srv/inferops-standin/amdgpu/7.2.1/ubuntu"}
    for name, uri in uris.items():
        lines = host.file("/etc/apt/sources.list.d/%s.sources" % name).content_string.splitlines()
        for line in ("URIs: " + uri, "Suites: jammy", "Components: main", "Architectures: amd64",
                     "Signed-By: /etc/apt/keyrings/rocm.asc"):
            assert line in lines, (name, line)


def test_packages_at_the_release_and_held(host):
    for name in ("rocm", "rocm-core"):
        assert host.package(name).version == ROCM_BUILD, name
    assert host.package("amdgpu-dkms").is_installed
    held = selections(host)
    for name in ("rocm", "rocm-core", "amdgpu-dkms"):
        assert held[name] == "hold", name


def test_groups(host):
    for name in ("render", "video"):
        group = host.group(name)
        assert group.exists and group.gid < 1000, name   # system groups
    assert {"render", "video"} <= set(host.user("root").groups)


def test_toolkit_from_its_signed_repository(host):
    assert host.package("amd-container-toolkit").is_installed
    source = host.file("/etc/apt/sources.list.d/amd-container-toolkit.sources")
    assert source.contains("^Signed-By: /etc/apt/keyrings/amd-container-toolkit.asc$")
    assert host.file("/etc/apt/keyrings/amd-container-toolkit.asc").is_file


def test_dockerd_runs_with_the_amd_runtime(host):
    daemon = host.file("/etc/docker/daemon.json")
    assert daemon.mode == 0o644 and daemon.user == "root"
    config = json.loads(daemon.content_string)
    assert config["runtimes"]["amd"]["path"] == "amd-container-runtime"
    assert "cdi" not in config.get("features", {}) and config["live-restore"] is True
    service = host.service("docker")
    assert service.is_enabled and service.is_running
    # ops may not use dockerd's socket: the unit's start says it read this daemon.json
    assert started_at(host, "docker") >= mtime(host, "/etc/docker/daemon.json"), "dockerd runs an older daemon.json"


def test_reached_over_ssh_as_a_non_root_user_with_a_sudo_password(host):
    """The converge ran as ops over SSH on the node's own address, escalating with the become password."""
    assert host.user().name == "ops"
    assert host.run("sudo -n true").rc != 0   # sudo asks for a password: Ansible had to give it
    listening = host.check_output("ss -Hltn")
    assert "127.0.1.11:2222" in listening and "0.0.0.0:2222" not in listening

"""An MI355X node: ROCm and amdgpu-dkms held, groups, AMD container toolkit."""
import json


def test_repositories(host):
    for name in ("rocm", "amdgpu"):
        assert host.file("/etc/apt/sources.list.d/%s.sources" % name).contains("Signed-By: /etc/apt/keyrings/rocm.asc")


def test_packages_held(host):
    assert host.package("rocm").version.startswith("7.2.1")
    assert host.package("amdgpu-dkms").is_installed
    holds = host.check_output("dpkg --get-selections rocm amdgpu-dkms rocm-core")
    assert holds.count("hold") == 3


def test_groups(host):
    assert {"render", "video"} <= set(host.user("root").groups)


def test_amd_smi(host):
    data = json.loads(host.check_output("amd-smi static --json"))
    assert [g["asic"]["market_name"] for g in data["gpu_data"]] == ["AMD Instinct MI355X"] * 8


def test_docker_with_amd_runtime(host):
    config = json.loads(host.file("/etc/docker/daemon.json").content_string)
    assert config["runtimes"]["amd"]["path"] == "amd-container-runtime"
    assert "cdi" not in config.get("features", {})
    assert host.service("docker").is_running


def test_reached_over_ssh_as_a_non_root_user_with_a_sudo_password(host):
    """The converge ran as ops over SSH on the node's own address, escalating with the become password."""
    assert host.user().name == "ops"
    assert host.run("sudo -n true").rc != 0   # sudo asks for a password: Ansible had to give it
    listening = host.check_output("ss -Hltn")
    assert "127.0.1.11:2222" in listening and "0.0.0.0:2222" not in listening

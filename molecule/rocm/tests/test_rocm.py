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

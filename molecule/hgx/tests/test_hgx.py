"""An HGX H200 node after converge: pinned and held driver, Fabric Manager, toolkit."""
import json

DRIVER = "580.95.05"


def held(host):
    return {line.split()[0] for line in host.check_output("dpkg --get-selections").splitlines() if line.endswith("hold")}


def test_cuda_repository_is_signed_deb822(host):
    source = host.file("/etc/apt/sources.list.d/cuda.sources")
    assert source.contains("Signed-By: /usr/share/keyrings/cuda-archive-keyring.gpg")
    assert host.package("cuda-keyring").is_installed


def test_driver_is_the_pinned_version_and_held(host):
    assert host.package("nvidia-driver-pinning-580").is_installed
    assert host.package("nvidia-open").version.startswith(DRIVER)
    assert host.package("nvidia-fabricmanager").version.startswith(DRIVER)
    assert {"nvidia-open", "nvidia-driver-cuda", "nvidia-kernel-open-dkms", "nvidia-fabricmanager"} <= held(host)


def test_unattended_upgrades_and_nouveau(host):
    assert host.file("/etc/apt/apt.conf.d/51inferops-nvidia-driver").contains('"nvidia-";')
    assert host.file("/etc/modprobe.d/blacklist-nouveau.conf").contains("^blacklist nouveau$")


def test_services(host):
    for name in ("nvidia-persistenced", "nvidia-fabricmanager", "docker"):
        service = host.service(name)
        assert service.is_running and service.is_enabled, name
    assert not host.package("nvidia-imex").is_installed


def test_daemon_json_is_merged(host):
    config = json.loads(host.file("/etc/docker/daemon.json").content_string)
    assert config["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime"
    assert config["features"]["cdi"] is True and config["live-restore"] is True
    assert config["bridge"] == "none" and config["storage-driver"] == "overlay2"


def test_gpus_visible_on_host(host):
    out = host.check_output("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader")
    assert out.splitlines() == ["NVIDIA H200, %s" % DRIVER] * 8
    assert host.file("/var/run/cdi/nvidia.yaml").exists

"""An HGX H200 node after converge: pinned and held driver, Fabric Manager, toolkit."""
import json
import os

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


def test_the_vendor_repositories_came_through_the_site_proxy(host):
    """inferops_proxy reached apt, the key downloads and dockerd; the stand-in repository's name
    resolves nowhere but in the proxy, so every package from it came through the proxy."""
    assert host.file("/etc/apt/apt.conf.d/90inferops-proxy").contains('Acquire::http::Proxy "http://127.0.0.1:18128";')
    assert host.run("getent hosts standin-repo.invalid").rc != 0   # no direct way to the repository
    assert host.file("/etc/systemd/system/docker.service.d/http-proxy.conf").contains("EnvironmentFile=/etc/docker/http-proxy.env")
    assert "http://127.0.0.1:18128" in host.check_output("docker info --format '{{.HTTPProxy}}'")
    log = open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "forward-proxy.log"), encoding="utf-8").read()
    for path in ("/cuda/debian12/x86_64/cuda-keyring_1.1-1_all.deb", "/cuda/debian12/x86_64/InRelease",
                 "/cuda/debian12/x86_64/nvidia-open_", "/libnvidia-container/gpgkey",
                 "/libnvidia-container/stable/deb/amd64/InRelease"):
        assert "GET http://standin-repo.invalid%s" % path in log, path

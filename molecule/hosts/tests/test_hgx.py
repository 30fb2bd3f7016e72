"""An HGX H200 node after converge, read on the node: the exact driver pinned and held, Fabric
Manager at its version and running, the toolkit and the dockerd that runs with its runtime, all
through the site's proxy."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "_shared"))
from node_reads import held, policy, mtime, started_at, managed_file  # noqa: E402  (molecule/_shared, beside the scenarios)

testinfra_hosts = ["hgx-h200"]   # the nodes of molecule/hosts this module reads (testinfra honours it)

DRIVER = "580.95.05"
DRIVER_PACKAGES = ["nvidia-open", "nvidia-driver-cuda", "nvidia-kernel-open-dkms", "nvidia-fabricmanager"]


def test_cuda_repository_is_signed_deb822(host):
    source = host.file("/etc/apt/sources.list.d/cuda.sources")
    assert source.contains("^URIs: http://standin-repo.invalid/cuda/debian12/x86_64/$")
    assert source.contains("^Signed-By: /usr/share/keyrings/cuda-archive-keyring.gpg$")
    assert host.package("cuda-keyring").is_installed


def test_driver_is_the_pinned_version_and_held(host):
    assert host.package("nvidia-driver-pinning-580").is_installed
    for name in DRIVER_PACKAGES:
        assert host.package(name).version == DRIVER + "-1", name
    assert set(DRIVER_PACKAGES) <= held(host)
    # the exact pin outranks the branch pin, whose newest (580.105.08) the repository also has
    pin = managed_file(host, "/etc/apt/preferences.d/00-inferops-nvidia-driver").content_string.splitlines()
    assert pin[0] == "# Managed by inferops.vllm: nvidia_driver_version=%s" % DRIVER
    assert {"Pin: version %s-*" % DRIVER, "Pin-Priority: 1001"} <= set(pin)
    assert set(DRIVER_PACKAGES) <= set(next(line for line in pin if line.startswith("Package: ")).split()[1:])
    assert policy(host, "nvidia-open") == {"Installed": DRIVER + "-1", "Candidate": DRIVER + "-1"}


def test_unattended_upgrades_and_nouveau(host):
    block = managed_file(host, "/etc/apt/apt.conf.d/51inferops-nvidia-driver")
    assert block.contains("Unattended-Upgrade::Package-Blacklist {") and block.contains('"nvidia-";')
    assert host.file("/etc/modprobe.d/blacklist-nouveau.conf").contains("^blacklist nouveau$")


def test_services(host):
    for name in ("nvidia-persistenced", "nvidia-fabricmanager", "docker"):
        service = host.service(name)
        assert service.is_running and service.is_enabled, name
    assert not host.package("nvidia-imex").is_installed
    assert not host.file("/etc/modprobe.d/nvidia-imex-channel.conf").exists


def test_dockerd_runs_with_the_merged_daemon_json(host):
    config = json.loads(managed_file(host, "/etc/docker/daemon.json").content_string)
    assert config["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime"
    assert config["features"]["cdi"] is True and config["live-restore"] is True
    assert config["bridge"] == "none" and config["storage-driver"] == "overlay2"
    for path in ("/etc/docker/daemon.json", "/etc/docker/http-proxy.env", "/etc/systemd/system/docker.service.d/http-proxy.conf"):
        assert started_at(host, "docker") >= mtime(host, path), "dockerd started before %s was written" % path
    assert "nvidia" in json.loads(host.check_output("docker info --format '{{json .Runtimes}}'"))


def test_toolkit_and_cdi_spec(host):
    assert host.package("nvidia-container-toolkit").is_installed
    assert host.file("/etc/apt/sources.list.d/nvidia-container-toolkit.sources").contains(
        "^Signed-By: /etc/apt/keyrings/nvidia-container-toolkit.asc$")
    assert host.file("/var/run/cdi/nvidia.yaml").is_file


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

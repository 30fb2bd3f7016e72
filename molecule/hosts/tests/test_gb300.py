"""GB300 trays of one NVL72 domain after converge, read on each node: the branch's driver installed
and held (no exact version asked for: the branch pin's newest), IMEX at the driver's version with
its channel option, node list and a service started after them, no Fabric Manager, the
unattended-upgrades block, the toolkit and the dockerd that runs with its runtime."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "_shared"))
from node_reads import selections, policy, content_lines, mtime, started_at, managed_file, debian_13_node  # noqa: E402  (molecule/_shared, beside the scenarios)

testinfra_hosts = ["gb300-t1", "gb300-t2"]   # the nodes of molecule/hosts this module reads (testinfra honours it)

BRANCH = "580"
NODES = ["10.20.0.11", "10.20.0.12"]   # vllm_control_address of both trays, sorted
DRIVER_PACKAGES = ["nvidia-open", "nvidia-driver-cuda", "nvidia-kernel-open-dkms"]


def test_driver_is_the_branchs_newest_and_held(host):
    assert host.package("nvidia-driver-pinning-%s" % BRANCH).is_installed
    version = host.package("nvidia-open").version
    assert version.startswith(BRANCH + ".")
    for name in DRIVER_PACKAGES + ["nvidia-imex"]:
        assert host.package(name).version == version, name
    # no exact version asked for: no exact pin, the branch pin's newest is what apt would install
    assert not host.file("/etc/apt/preferences.d/00-inferops-nvidia-driver").exists
    assert policy(host, "nvidia-open") == {"Installed": version, "Candidate": version}
    held = selections(host)
    for name in DRIVER_PACKAGES + ["nvidia-imex"]:
        assert held[name] == "hold", name


def test_the_trays_run_debian_13(host):
    debian_13_node(host)


def test_cuda_repository_is_signed_deb822(host):
    lines = content_lines(host, "/etc/apt/sources.list.d/cuda.sources")
    assert "URIs: file:///srv/inferops-standin/cuda/debian13/x86_64/" in lines
    assert "Signed-By: /usr/share/keyrings/cuda-archive-keyring.gpg" in lines
    assert host.package("cuda-keyring").is_installed
    assert host.file("/usr/share/keyrings/cuda-archive-keyring.gpg").is_file


def test_unattended_upgrades_keep_off_the_driver_and_nouveau_is_blacklisted(host):
    block = managed_file(host, "/etc/apt/apt.conf.d/51inferops-nvidia-driver").content_string
    assert "Unattended-Upgrade::Package-Blacklist {" in block
    for entry in ('"nvidia-";', '"libnvidia-";', '"cuda-drivers";'):
        assert entry in block, entry
    assert "blacklist nouveau" in content_lines(host, "/etc/modprobe.d/blacklist-nouveau.conf")


def test_imex_channel_0_is_created_when_the_driver_loads(host):
    managed_file(host, "/etc/modprobe.d/nvidia-imex-channel.conf")
    assert content_lines(host, "/etc/modprobe.d/nvidia-imex-channel.conf") == ["options nvidia NVreg_CreateImexChannel0=1"]


def test_imex_node_list_is_the_domain_sorted(host):
    nodes = managed_file(host, "/etc/nvidia-imex/nodes_config.cfg")
    assert nodes.content_string.startswith("# Managed by inferops.vllm")
    assert content_lines(host, "/etc/nvidia-imex/nodes_config.cfg") == NODES
    config = content_lines(host, "/etc/nvidia-imex/config.cfg")
    # IMEX reads the last one; the package's other settings are kept
    assert [line for line in config if line.startswith("IMEX_NODE_CONFIG_FILE=")][-1] == \
        "IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg"
    assert "SERVER_PORT=50000" in config


def test_imex_runs_enabled_with_the_current_files(host):
    service = host.service("nvidia-imex")
    assert service.is_enabled and service.is_running
    started = started_at(host, "nvidia-imex")
    for path in ("/etc/nvidia-imex/nodes_config.cfg", "/etc/nvidia-imex/config.cfg"):
        assert started >= mtime(host, path), "nvidia-imex started before %s was written" % path


def test_persistenced_runs_and_no_fabric_manager_on_trays(host):
    service = host.service("nvidia-persistenced")
    assert service.is_enabled and service.is_running
    assert not host.package("nvidia-fabricmanager").is_installed
    assert host.run("systemctl cat nvidia-fabricmanager.service").rc != 0


def test_toolkit_from_its_signed_repository(host):
    assert host.package("nvidia-container-toolkit").is_installed
    lines = content_lines(host, "/etc/apt/sources.list.d/nvidia-container-toolkit.sources")
    assert "URIs: file:///srv/inferops-standin/libnvidia-container/stable/deb/amd64" in lines
    assert "Signed-By: /etc/apt/keyrings/nvidia-container-toolkit.asc" in lines
    managed_file(host, "/etc/apt/keyrings/nvidia-container-toolkit.asc")
    assert host.file("/var/run/cdi/nvidia.yaml").is_file


def test_dockerd_runs_with_the_merged_daemon_json(host):
    config = json.loads(managed_file(host, "/etc/docker/daemon.json").content_string)
    assert config["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime"
    assert config["features"]["cdi"] is True and config["live-restore"] is True
    assert config["bridge"] == "none" and config["iptables"] is False and config["storage-driver"] == "overlay2"
    service = host.service("docker")
    assert service.is_enabled and service.is_running
    assert started_at(host, "docker") >= mtime(host, "/etc/docker/daemon.json"), "dockerd runs an older daemon.json"
    assert "nvidia" in json.loads(host.check_output("docker info --format '{{json .Runtimes}}'"))
    assert host.check_output("docker info --format '{{.LiveRestoreEnabled}}'") == "true"

"""GB300 trays of one NVL72 domain: IMEX configured identically on both."""

NODES = "10.20.0.11\n10.20.0.12\n"


def test_imex_node_list_identical_and_sorted(host):
    content = host.file("/etc/nvidia-imex/nodes_config.cfg").content_string
    assert "\n".join(line for line in content.splitlines() if not line.startswith("#")) + "\n" == NODES


def test_imex_channel_and_service(host):
    assert host.file("/etc/modprobe.d/nvidia-imex-channel.conf").contains("NVreg_CreateImexChannel0=1")
    assert host.file("/etc/nvidia-imex/config.cfg").contains("^IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg$")
    service = host.service("nvidia-imex")
    assert service.is_running and service.is_enabled
    status = host.check_output("nvidia-imex-ctl -N")
    assert status.count("- READY ") == 2 and "Domain State: UP" in status


def test_imex_matches_driver_and_no_fabric_manager_on_trays(host):
    driver = host.package("nvidia-open").version.split("-")[0]
    assert host.package("nvidia-imex").version.startswith(driver)
    assert not host.package("nvidia-fabricmanager").is_installed


def test_four_gpus(host):
    assert host.check_output("nvidia-smi -L").count("NVIDIA GB300") == 4

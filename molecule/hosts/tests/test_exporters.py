"""The GPU exporters after converge (vllm_exporters with the stand-in images): the container of the
node's vendor runs the image pinned by digest with the role's field list mounted, its /metrics on
the node's own address shows one series per GPU, DGX OS's host engine is used where it runs, and
node_exporter serves the watchdog's textfile directory."""
import json
import os
import re
import urllib.request

import pytest
import testinfra

testinfra_hosts = ["hgx-h200", "gb300-t1", "gb300-t2", "rocm-mi355x"]   # the nodes of molecule/hosts this module reads

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "vllm_exporters")
# node: (vendor, GPUs, the address it listens on, the exporter's port) as molecule.yml sets them
NODES = {"hgx-h200": ("nvidia", 8, "127.0.1.21", 9400), "gb300-t1": ("nvidia", 4, "127.0.1.22", 9400),
         "gb300-t2": ("nvidia", 4, "127.0.1.23", 9400), "rocm-mi355x": ("amd", 8, "127.0.1.11", 15000)}
COUNTED = {"nvidia": ("DCGM_FI_DEV_GPU_TEMP", "gpu"), "amd": ("gpu_junction_temperature", "gpu_id")}
CONTAINER = {"nvidia": "inferops-dcgm-exporter", "amd": "inferops-amd-metrics-exporter"}


@pytest.fixture()
def node(host):
    name = host.backend.get_hostname()
    vendor, gpus, address, port = NODES[name]
    return {"name": name, "vendor": vendor, "gpus": gpus, "address": address, "port": port}


@pytest.fixture()
def root(node):
    """The node as root, through its container: the MI355X's SSH user may not use dockerd's socket."""
    return testinfra.get_host("docker://" + node["name"])


def inspect(host, name):
    return json.loads(host.check_output("docker inspect %s" % name))[0]


def scrape(url):
    # the nodes share the test machine's network: their loopback addresses are this machine's
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def test_the_exporter_runs_the_pinned_image_with_the_roles_fields(root, node):
    host = root
    container = inspect(host, CONTAINER[node["vendor"]])
    assert container["State"]["Running"] and container["HostConfig"]["RestartPolicy"]["Name"] == "unless-stopped"
    assert container["HostConfig"]["NetworkMode"] == "host"
    image = os.environ["INFEROPS_STANDIN_%s_EXPORTER_DIGEST" % ("DCGM" if node["vendor"] == "nvidia" else "AMD")]
    assert container["Config"]["Image"] == image
    mounts = {m["Destination"]: m for m in container["Mounts"]}
    if node["vendor"] == "nvidia":
        mount = mounts["/etc/dcgm-exporter/default-counters.csv"]
        with open(os.path.join(ROLE, "files", "dcgm-counters.csv"), encoding="utf-8") as fh:
            assert host.file(mount["Source"]).content_string == fh.read()
        assert container["HostConfig"]["DeviceRequests"][0]["Driver"] == "nvidia"
        assert not container["HostConfig"]["CapAdd"]            # no profiling fields asked for
    else:
        mount = mounts["/etc/metrics/config.json"]
        config = json.loads(host.file(mount["Source"]).content_string)
        with open(os.path.join(ROLE, "files", "amd-fields.json"), encoding="utf-8") as fh:
            assert config["GPUConfig"]["Fields"] == json.load(fh) and config["ServerPort"] == node["port"]
        assert {d["PathOnHost"] for d in container["HostConfig"]["Devices"]} == {"/dev/kfd", "/dev/dri"}
        assert mounts["/sys"]["RW"] is False
    assert mount["RW"] is False and host.file(mount["Source"]).mode == 0o644


def test_metrics_on_the_nodes_address_show_one_series_per_gpu(node):
    name, label = COUNTED[node["vendor"]]
    text = scrape("http://%s:%d/metrics" % (node["address"], node["port"]))
    gpus = set(re.findall(r'^%s\{[^}]*\b%s="(\d+)"' % (name, label), text, re.M))
    assert gpus == {str(i) for i in range(node["gpus"])}


def test_the_dcgm_exporter_uses_dgx_os_host_engine_where_it_runs(root, node):
    if node["vendor"] != "nvidia":
        pytest.skip("DCGM only")
    args = inspect(root, CONTAINER["nvidia"])["Config"]["Cmd"]   # after the entry point
    assert args[:4] == ["-f", "/etc/dcgm-exporter/default-counters.csv", "-a", "%s:%d" % (node["address"], node["port"])]
    # gb300-t1 runs the stand-in nvidia-dcgm.service (molecule/hosts/prepare.yml)
    assert args[4:] == (["-r", "localhost:5555"] if node["name"] == "gb300-t1" else [])


def test_node_exporter_serves_the_watchdogs_textfile_directory(root, node):
    host = root
    service = host.service("prometheus-node-exporter")
    assert service.is_running and service.is_enabled
    assert host.file("/etc/default/prometheus-node-exporter").contains(
        '^ARGS="--web.listen-address=%s:9100 --collector.textfile.directory=/var/lib/inferops-vllm"$' % node["address"])
    probe = "/var/lib/inferops-vllm/inferops-molecule-probe.prom"
    host.run("printf 'inferops_molecule_probe{node=\"%s\"} 1\\n' > %s" % (node["name"], probe))
    try:
        text = scrape("http://%s:9100/metrics" % node["address"])
    finally:
        host.run("rm -f %s" % probe)
    assert 'inferops_molecule_probe{node="%s"} 1' % node["name"] in text
    assert "node_textfile_scrape_error 0" in text

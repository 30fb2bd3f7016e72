"""A node's hardware health from the vendors' tool output (node/gpu_health.py): healthy, each fault, and output that
is truncated or not the tool's, which is one HealthReadError naming the tool. Fixtures: fixtures/gpu_health/README.md."""
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_health

FIX = Path(__file__).parent / "fixtures/gpu_health"


def read(name):
    return (FIX / name).read_text()


def lines(findings):
    return [finding.line() for finding in findings]


# --- nvidia-smi -q -x ---------------------------------------------------------------------------------------------

def test_a_healthy_h100_node_has_no_finding():
    gpus = gpu_health.nvidia_gpus(read("nvidia-smi-q-x-h100-healthy.xml"))
    assert [(g["index"], g["model"], g["pcie_width"], g["pcie_max_width"]) for g in gpus] == [
        (0, "NVIDIA H100 80GB HBM3", 16, 16), (1, "NVIDIA H100 80GB HBM3", 16, 16)]
    assert gpu_health.nvidia_findings(gpus) == []


def test_each_fault_of_a_gpu_is_one_finding_with_its_fix():
    gpus = gpu_health.nvidia_gpus(read("nvidia-smi-q-x-h100-faults.xml"))
    found = gpu_health.nvidia_findings(gpus)
    assert all(f.where == "GPU 1 (00000000:2A:00.0)" and f.fences for f in found)
    text = "\n".join(lines(found))
    for said in ("2 uncorrectable ECC errors since the driver loaded", "a memory row remap is pending",
                 "the driver asks for a reset", "its PCIe link trained at x8 of x16",
                 "its clocks are held down by a hardware slowdown"):
        assert said in text
    assert all(". Fix: " in line for line in lines(found))


def test_a_degraded_mnnvl_fabric_fences_the_gpu():
    gpus = gpu_health.nvidia_gpus(read("nvidia-smi-q-x-gb300-fabric-degraded.xml"))
    assert gpus[0]["fabric"] == {"state": "Completed", "status": "Success", "bandwidth": "Degraded",
                                 "route_unhealthy": False}
    (found,) = gpu_health.nvidia_findings(gpus)
    assert "NVLink fabric is degraded (bandwidth Degraded)" in found.what and found.fences


def test_a_fabric_not_yet_up_is_its_own_finding():
    text = read("nvidia-smi-q-x-gb300-fabric-degraded.xml").replace("<state>Completed</state>",
                                                                    "<state>In Progress</state>")
    (found,) = gpu_health.nvidia_findings(gpu_health.nvidia_gpus(text))
    assert "NVLink fabric is In Progress (Success)" in found.what and "IMEX" in found.fix


def test_lifetime_errors_alone_are_a_warning():
    text = read("nvidia-smi-q-x-h100-healthy.xml").replace(
        "<aggregate>\n\t\t\t\t<sram_correctable>0</sram_correctable>\n\t\t\t\t<sram_uncorrectable_parity>0",
        "<aggregate>\n\t\t\t\t<sram_correctable>0</sram_correctable>\n\t\t\t\t<sram_uncorrectable_parity>3", 1)
    found = gpu_health.nvidia_findings(gpu_health.nvidia_gpus(text))
    assert [(f.what, f.fences) for f in found] == [
        ("3 uncorrectable ECC errors in its lifetime (none since the driver loaded)", False)]


def test_an_older_driver_s_throttle_reasons_are_read_too():
    text = read("nvidia-smi-q-x-h100-faults.xml").replace("clocks_event_reason", "clocks_throttle_reason")
    gpus = gpu_health.nvidia_gpus(text)
    assert gpus[1]["slowdowns"] == ["hw_slowdown"]


@pytest.mark.parametrize("text, said", [
    ("", "not whole XML"),
    ("<nvidia_smi_log><gpu id='0'><uuid>GPU-1", "not whole XML"),
    ("<html><body>502</body></html>", "not <nvidia_smi_log>"),
    ("<nvidia_smi_log><driver_version>580.95</driver_version></nvidia_smi_log>", "lists no GPU"),
])
def test_output_that_is_not_the_tool_s_is_one_clear_error(text, said):
    with pytest.raises(gpu_health.HealthReadError, match="^nvidia-smi -q -x: .*%s" % said) as caught:
        gpu_health.nvidia_gpus(text)
    assert "\n" not in str(caught.value)


def test_a_truncated_real_output_is_refused():
    text = read("nvidia-smi-q-x-h100-healthy.xml")
    with pytest.raises(gpu_health.HealthReadError):
        gpu_health.nvidia_gpus(text[: len(text) // 2])


# --- Xid, NVLink, ibstat ------------------------------------------------------------------------------------------

def test_the_kernel_log_s_xids_in_every_form():
    events = gpu_health.xid_events(read("dmesg-xid.txt"))
    assert {(e["bus"], e["xid"]) for e in events} == {
        ("0000:2a:00", 63), ("0000:2a:00", 48), ("0000:2a:00", 94), ("0000:2a:00", 13), ("0000:18:00", 79),
        ("0000:18:00", 119)}
    found = gpu_health.xid_findings(events)
    text = "\n".join(lines(found))
    assert "the GPU at PCI 0000:18:00: Xid 79 since boot (3 times): the GPU fell off the bus" in text
    assert "Xid 13" not in text   # an application's fault says nothing of the hardware
    assert gpu_health.xid_findings(gpu_health.xid_events("[ 1.0] usb 1-1: new device\n")) == []


def test_an_inactive_nvlink_fences_its_gpu():
    links = gpu_health.nvlink_links(read("nvidia-smi-nvlink-s.txt"))
    assert (len(links[0]["active"]), links[1]["inactive"]) == (18, [7])
    (found,) = gpu_health.nvlink_findings(links)
    assert found.where == "GPU 1" and "NVLink 7 inactive (17 of 18 links up)" in found.what


def test_a_gpu_with_fewer_links_than_its_peers_is_found():
    text = "\n".join(line for line in read("nvidia-smi-nvlink-s.txt").splitlines() if "<inactive>" not in line)
    (found,) = gpu_health.nvlink_findings(gpu_health.nvlink_links(text))
    assert "17 NVLinks up, its peers on this node have 18" in found.what


def test_nvlink_output_it_cannot_read_is_one_error():
    with pytest.raises(gpu_health.HealthReadError, match="^nvidia-smi nvlink -s: a line it cannot read"):
        gpu_health.nvlink_links("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")


def test_a_slow_rail_and_a_down_port_are_found():
    ports = gpu_health.ib_ports(read("ibstat.txt"))
    assert [(p["ca"], p["state"], p["rate"]) for p in ports] == [("mlx5_0", "Active", 400), ("mlx5_1", "Active", 200)]
    (slow,) = gpu_health.ib_findings(ports)
    assert slow.where == "mlx5_1 port 1" and "200 Gb/s, the node's other ports at 400" in slow.what
    (down,) = gpu_health.ib_findings(gpu_health.ib_ports(read("ibstat-port-down.txt")))
    assert down.where == "mlx5_1 port 1" and down.what.startswith("the port is Down")


def test_only_the_planned_hcas_are_judged_and_a_missing_one_is_named():
    ports = gpu_health.ib_ports(read("ibstat.txt"))
    assert gpu_health.ib_findings(ports, ["mlx5_0"]) == []
    (missing,) = gpu_health.ib_findings(ports, ["mlx5_0", "mlx5_4"])
    assert missing.where == "mlx5_4" and "vllm_ib_hcas" in missing.what


def test_ibstat_without_a_port_is_one_error():
    with pytest.raises(gpu_health.HealthReadError, match="^ibstat: it lists no HCA port"):
        gpu_health.ib_ports("ibstat: command not found")


# --- the harness's stand-in nvidia-smi speaks the same format (what Molecule's simulated nodes will show) ----------

def test_the_stand_in_shows_each_injected_fault_as_the_parser_reads_it(tmp_path):
    import json
    import subprocess
    import sys
    from standin_tools import standin_tool
    (tmp_path / "gpu.json").write_text(json.dumps({"vendor": "nvidia", "model": "GB300", "count": 2}))
    tool = tmp_path / "nvidia-smi"
    tool.write_text(standin_tool("nvidia-smi", tmp_path / "gpu.json").replace(
        "/etc/inferops-standin/faults.json", str(tmp_path / "faults.json")))

    def smi(*args):
        return subprocess.run([sys.executable, str(tool), *args], capture_output=True, text=True, check=True).stdout
    assert gpu_health.nvidia_findings(gpu_health.nvidia_gpus(smi("-q", "-x"))) == []
    assert gpu_health.nvlink_findings(gpu_health.nvlink_links(smi("nvlink", "-s"))) == []
    (tmp_path / "faults.json").write_text(json.dumps({"1": ["ecc", "remap_pending", "pcie_x8", "hw_slowdown",
                                                            "fabric_degraded", "nvlink_down"]}))
    found = gpu_health.nvidia_findings(gpu_health.nvidia_gpus(smi("-q", "-x")))
    found += gpu_health.nvlink_findings(gpu_health.nvlink_links(smi("nvlink", "-s")))
    assert {f.where.split(" (")[0] for f in found} == {"GPU 1"} and len(found) == 7 and all(f.fences for f in found)


# --- the real gpu_facts module and action on this machine, with the stand-in on PATH ------------------------------

def run_module(tmp_path, faults=None, smi_prefix="", **args):
    """`ansible localhost -m inferops.vllm.gpu_facts` with health and expect, the stand-in nvidia-smi first on PATH
    (8 x H200, `faults` injected); smi_prefix: shell run before it (a hang)."""
    import json
    import os
    import subprocess
    import sys
    from standin_tools import standin_tool
    root = Path(__file__).parents[2]
    (tmp_path / "gpu.json").write_text(json.dumps({"vendor": "nvidia", "model": "H200", "count": 8}))
    (tmp_path / "faults.json").write_text(json.dumps(faults or {}))
    (tmp_path / "smi.py").write_text(standin_tool("nvidia-smi", tmp_path / "gpu.json").replace(
        "/etc/inferops-standin/faults.json", str(tmp_path / "faults.json")))
    tool = tmp_path / "nvidia-smi"
    tool.write_text("#!/bin/sh\n%s\nexec %s %s \"$@\"\n" % (smi_prefix, sys.executable, tmp_path / "smi.py"))
    tool.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (tmp_path, os.environ["PATH"]), ANSIBLE_CONFIG=str(root / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    module_args = json.dumps(dict({"health": True, "expect": {"min_driver_branch": 580}}, **args))
    return subprocess.run([str(Path(sys.executable).parent / "ansible"), "localhost", "-c", "local",
                           "-e", "ansible_python_interpreter=%s" % sys.executable, "-m", "inferops.vllm.gpu_facts",
                           "-a", module_args], cwd=root, env=env, capture_output=True, text=True, check=False)


def test_a_healthy_node_passes_its_health_read(tmp_path):
    result = run_module(tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "must not serve" not in result.stdout


def test_a_node_with_a_pending_row_remap_is_fenced_naming_the_gpu_and_the_fix(tmp_path):
    result = run_module(tmp_path, faults={"3": ["remap_pending"], "5": ["nvlink_down"]})
    assert result.returncode != 0
    out = result.stdout
    assert "localhost must not serve: GPU 3 (00000000:48:00.0): a memory row remap is pending. Fix: reset the GPU" in out
    assert "GPU 5: NVLink 0 inactive (17 of 18 links up)" in out
    assert "Traceback" not in out + result.stderr


def test_a_hung_nvidia_smi_is_bounded_and_fences_the_node(tmp_path):
    # -q -x never answers (a GPU that fell off the bus); the other calls answer
    result = run_module(tmp_path, smi_prefix='[ "$1" = "-q" ] && sleep 60', health_timeout=2)
    assert result.returncode != 0
    assert "nvidia-smi -q -x: timed out after 2 s" in result.stdout

"""gpu_facts parsers on recorded tool outputs (tests/unit/fixtures/gpu_facts)."""
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_facts as p
from ansible_collections.inferops.vllm.plugins.module_utils.node.hardware import CATALOG
from standin_tools import standin_tool

FIX = Path(__file__).parent / "fixtures/gpu_facts"


def text(name):
    return (FIX / name).read_text()


def test_nvidia_query_h100():
    gpus = p.parse_nvidia_query(text("nvidia-smi-h100-query.csv"))
    assert len(gpus) == 8 and gpus[7]["pci.bus_id"] == "00000000:DB:00.0"
    assert p.summarize("nvidia", [dict(g, memory_mib=int(g["memory.total"])) for g in gpus]) == {
        "vendor": "nvidia", "count": 8, "model": "H100", "models": ["H100"], "memory_mib": 81559}


def test_nvidia_query_gb300_driver_branch():
    gpus = p.parse_nvidia_query(text("nvidia-smi-gb300-query.csv"))
    assert {p.model_of(g["name"]) for g in gpus} == {"GB300"}
    assert p.driver_branch(gpus[0]["driver_version"]) == 580


def test_every_model_gpu_facts_can_name_is_a_catalog_row():
    named = {model for _pattern, model in p.model_patterns()}
    assert named <= set(CATALOG)
    # and every GPU row is named from the tools' own spelling, whatever the case
    gpus = {model for model, accelerator in CATALOG.items() if accelerator.vendor != "cpu"}
    assert named == gpus
    for model in gpus:
        vendor = "NVIDIA" if CATALOG[model].vendor == "nvidia" else "AMD Instinct"
        assert p.model_of("%s %s" % (vendor, model.lower())) == model


@pytest.mark.parametrize("name", ["NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X", "NVIDIA GB300X", ""])
def test_a_gpu_outside_the_catalog_has_no_model(name):
    assert p.model_of(name) is None


def test_nvidia_query_rejects_wrong_columns():
    with pytest.raises(ValueError):
        p.parse_nvidia_query("0, NVIDIA H100\n")


def test_nvidia_banner():
    assert p.parse_nvidia_header(text("nvidia-smi-h100-banner.txt")) == {"driver_version": "580.95.05",
                                                                         "cuda_version": "13.0"}
    assert p.parse_nvidia_header(text("nvidia-smi-no-driver.txt")) == {"driver_version": None, "cuda_version": None}


# MI300X is not a catalog row (hardware.CATALOG): it keeps the name amd-smi gives it, as any GPU the plan cannot plan
@pytest.mark.parametrize("name,model,count,mem", [("amd-smi-static-mi300x-list.json", "AMD Instinct MI300X", 2, 196592),
                                                  ("amd-smi-static-mi355x-gpudata.json", "MI355X", 2, 294896)])
def test_amd_static_both_formats(name, model, count, mem):
    gpus = p.parse_amd_static(text(name))
    summary = p.summarize("amd", gpus)
    assert (summary["model"], summary["count"], summary["memory_mib"]) == (model, count, mem)


def test_amd_version_plain_and_json():
    assert p.parse_amd_version(text("amd-smi-version.txt")) == {"rocm_version": "7.2.1", "driver_version": "6.14.14"}
    js = '[{"tool": "AMDSMI Tool", "rocm_version": "7.2.1", "amdgpu_version": "6.14.14"}]'
    assert p.parse_amd_version(js) == {"rocm_version": "7.2.1", "driver_version": "6.14.14"}


def test_imex_status():
    status = p.parse_imex_status(text("nvidia-imex-ctl-N.txt"))
    assert status["domain_state"] == "DEGRADED"
    assert [(n["address"], n["status"]) for n in status["nodes"]] == [
        ("10.20.0.11", "READY"), ("10.20.0.12", "READY"), ("10.20.0.13", "UNAVAILABLE")]


@pytest.mark.parametrize("name,state", [("mokutil-enabled.txt", True), ("mokutil-disabled.txt", False),
                                        ("mokutil-no-efi.txt", None)])
def test_secure_boot(name, state):
    assert p.parse_secure_boot(text(name)) is state


def test_infiniband_sysfs():
    devices = p.read_infiniband(str(FIX / "sys"))
    assert [(d["name"], d["active"]) for d in devices] == [("mlx5_0", True), ("mlx5_1", False), ("mlx5_2", True)]
    assert devices[0]["ports"][0] == {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp",
                                      "link_layer": "InfiniBand", "rate": "400 Gb/sec (4X NDR)"}
    assert devices[2]["ports"][0]["link_layer"] == "Ethernet"
    assert p.read_infiniband(str(FIX / "nonexistent")) == []


def test_standin_nvidia_smi_matches_the_parser(tmp_path, monkeypatch):
    """The harness's stand-in prints what the parser reads (so the roles' real path works on it)."""
    import json
    import subprocess
    import sys
    tool = tmp_path / "nvidia-smi"
    tool.write_text(standin_tool("nvidia-smi", tmp_path / "gpu.json"))
    (tmp_path / "gpu.json").write_text(json.dumps({"vendor": "nvidia", "model": "H200", "count": 8}))
    out = subprocess.run([sys.executable, str(tool), "--query-gpu=" + ",".join(p.NVIDIA_QUERY_FIELDS),
                          "--format=csv,noheader,nounits"], capture_output=True, text=True, check=True).stdout
    gpus = p.parse_nvidia_query(out)
    assert len(gpus) == 8 and p.model_of(gpus[0]["name"]) == "H200"
    banner = subprocess.run([sys.executable, str(tool)], capture_output=True, text=True, check=True).stdout
    assert p.parse_nvidia_header(banner) == {"driver_version": "580.95.05", "cuda_version": "13.0"}


@pytest.mark.parametrize("warn", [True, False])
def test_module_warns_of_secure_boot_when_asked(tmp_path, warn):
    """The real module on this machine, with mokutil printing a recorded Secure Boot state."""
    import os
    import subprocess
    import sys
    root = Path(__file__).parents[2]
    mokutil = tmp_path / "mokutil"
    mokutil.write_text("#!/bin/sh\ncat %s\n" % (FIX / "mokutil-enabled.txt"))
    mokutil.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (tmp_path, os.environ["PATH"]), ANSIBLE_CONFIG=str(root / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_CALLBACK_RESULT_FORMAT="yaml", ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    result = subprocess.run([str(Path(sys.executable).parent / "ansible"), "localhost", "-c", "local",
                             "-e", "ansible_python_interpreter=%s" % sys.executable, "-m", "inferops.vllm.gpu_facts",
                             "-a", "warn_secure_boot=%s" % warn], cwd=root, env=env, capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "secure_boot: true" in result.stdout
    assert ("Secure Boot is enabled on" in result.stdout + result.stderr) is warn

"""vllm_exporters' decisions (module_utils/controller/gpu_exporter.py): the exporter image through the site
registry, the DCGM flags, AMD's config, and the GPU count read from the stand-in's exposition, which
serves the role's own field lists in the real exporters' layout (tests/harness/gpu-exporter-standin)."""
import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller import gpu_exporter

ROOT = Path(__file__).resolve().parents[2]
ROLE = ROOT / "roles" / "vllm_exporters"
DIGEST = "sha256:" + "ab" * 32
DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())


def standin():
    path = ROOT / "tests" / "harness" / "gpu-exporter-standin" / "gpu_exporter_standin.py"
    spec = importlib.util.spec_from_file_location("gpu_exporter_standin", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_default_dcgm_image_is_pinned_and_pulls_from_nvcr():
    plan = gpu_exporter.image_plan("nvidia", DEFAULTS["vllm_exporters_dcgm_image"])
    assert plan["registry"] == "nvcr.io" and plan["repository"] == "nvidia/k8s/dcgm-exporter"
    assert plan["pull_ref"] == DEFAULTS["vllm_exporters_dcgm_image"] and plan["source"] == ""


def test_an_empty_or_unpinned_image_is_refused_with_its_variable_and_the_fix():
    with pytest.raises(gpu_exporter.ExporterError) as err:
        gpu_exporter.image_plan("amd", DEFAULTS["vllm_exporters_amd_image"])
    assert str(err.value).startswith('vllm_exporters_amd_image="" is empty')
    assert "rocm/device-metrics-exporter:v1.5.2@sha256:<digest>" in str(err.value) and "vllm_exporters_gpu: false" in str(err.value)
    with pytest.raises(gpu_exporter.ExporterError) as err:
        gpu_exporter.image_plan("nvidia", "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless")
    assert str(err.value).startswith('vllm_exporters_dcgm_image="nvcr.io/') and "not pinned by digest" in str(err.value)
    assert "\n" not in str(err.value)


def test_copy_mode_copies_from_the_images_own_registry_and_pulls_from_the_site_registry():
    nvidia = gpu_exporter.image_plan("nvidia", "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless@" + DIGEST,
                                     "registry.site:5000", "copy")
    assert nvidia["source"] == "https://nvcr.io"
    assert nvidia["pull_ref"] == "registry.site:5000/nvidia/k8s/dcgm-exporter@" + DIGEST
    amd = gpu_exporter.image_plan("amd", "rocm/device-metrics-exporter:v1.5.2@" + DIGEST, "registry.site:5000", "copy")
    assert amd["source"] == "https://registry-1.docker.io" and amd["repository"] == "rocm/device-metrics-exporter"


def test_a_pull_through_site_registry_serves_only_its_upstreams_images():
    amd = gpu_exporter.image_plan("amd", "rocm/device-metrics-exporter@" + DIGEST, "registry.site:5000", "proxy")
    assert amd["pull_ref"] == "registry.site:5000/rocm/device-metrics-exporter@" + DIGEST and amd["source"] == ""
    with pytest.raises(gpu_exporter.ExporterError, match="caches only https://registry-1.docker.io.*vllm_image_mirror_mode: copy"):
        gpu_exporter.image_plan("nvidia", "nvcr.io/nvidia/k8s/dcgm-exporter@" + DIGEST, "registry.site:5000", "proxy")


@pytest.mark.parametrize("setting,active,tail", [
    ("", False, []),
    ("", True, ["-r", "localhost:5555"]),             # DGX OS: nvidia-dcgm.service runs the host engine
    ("10.0.0.9:5555", False, ["-r", "10.0.0.9:5555"]),
])
def test_dcgm_flags_use_the_roles_counters_and_the_nodes_host_engine(setting, active, tail):
    assert gpu_exporter.dcgm_args("10.0.0.11:9400", setting, active) == [
        "-f", "/etc/dcgm-exporter/default-counters.csv", "-a", "10.0.0.11:9400"] + tail


def test_amd_config_holds_the_roles_fields_and_port():
    fields = json.loads((ROLE / "files" / "amd-fields.json").read_text())
    config = json.loads(gpu_exporter.amd_config(fields, 5000))
    assert config == {"ServerPort": 5000, "CommonConfig": {"MetricsFieldPrefix": ""}, "GPUConfig": {"Fields": fields}}
    with pytest.raises(gpu_exporter.ExporterError, match="amd-fields.json"):
        gpu_exporter.amd_config(["gpu_junction_temperature"], 5000)


def test_the_counted_series_are_in_the_roles_field_lists():
    csv = [line.split(",")[0].strip() for line in (ROLE / "files" / "dcgm-counters.csv").read_text().splitlines()
           if line.strip() and not line.startswith("#")]
    assert gpu_exporter.COUNTED["nvidia"][0] in csv
    amd = [f.lower() for f in json.loads((ROLE / "files" / "amd-fields.json").read_text())]
    assert gpu_exporter.COUNTED["amd"][0] in amd


def dcgm_exposition(tmp_path, gpus, script=""):
    mod = standin()
    (tmp_path / "script").write_text(script)
    exporter = mod.Dcgm({"f": str(ROLE / "files" / "dcgm-counters.csv")}, gpus, "H200")
    return mod, exporter.render(mod.State(gpus, str(tmp_path / "script")))


def test_the_standin_serves_every_field_of_the_roles_csv_in_dcgm_4_8s_layout(tmp_path):
    mod, text = dcgm_exposition(tmp_path, 8)
    rows = mod.read_csv(str(ROLE / "files" / "dcgm-counters.csv"))
    for field, kind, _help in rows:
        if kind != "label":
            assert "# TYPE %s %s" % (field, kind) in text
    line = next(line for line in text.splitlines() if line.startswith("DCGM_FI_DEV_GPU_TEMP{"))
    labels = [part.split("=")[0] for part in line[line.index("{") + 1:line.index("}")].split(",")]
    assert labels == ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"]
    assert gpu_exporter.gpus_seen(text, "nvidia") == [str(i) for i in range(8)]
    assert gpu_exporter.readiness(text, "nvidia", 8, "hgx-01", "http://x/metrics") == {"ready": True, "seen": [str(i) for i in range(8)], "message": ""}


def test_a_missing_gpu_fails_the_wait_naming_node_expected_and_seen(tmp_path):
    _mod, text = dcgm_exposition(tmp_path, 8, "0 5 gone\n0 3 xid 79\n")
    result = gpu_exporter.readiness(text, "nvidia", 8, "hgx-01", "http://10.0.0.11:9400/metrics")
    assert not result["ready"] and result["seen"] == ["0", "1", "2", "3", "4", "6", "7"]
    assert result["message"] == ("hgx-01: the nvidia GPU exporter at http://10.0.0.11:9400/metrics shows 7 GPUs "
                                 "(gpu=0,1,2,3,4,6,7 in DCGM_FI_DEV_GPU_TEMP), the plan expects 8 (vllm_launch.cluster.gpus_per_node)")
    assert 'DCGM_FI_DEV_XID_ERRORS{gpu="3"' in text and ',window_size_in_ms="300000",xid="79"} 1' in text
    assert "does not answer" in gpu_exporter.readiness(None, "nvidia", 8, "hgx-01", "u")["message"]


def test_the_amd_standin_serves_the_roles_config(tmp_path):
    mod = standin()
    config = tmp_path / "config.json"
    config.write_text(gpu_exporter.amd_config(json.loads((ROLE / "files" / "amd-fields.json").read_text()), 5000))
    exporter = mod.Amd({"amd-metrics-config": str(config)}, 8, "MI355X")
    text = exporter.render(mod.State(8, str(tmp_path / "none")))
    assert gpu_exporter.gpus_seen(text, "amd") == [str(i) for i in range(8)]
    assert "# TYPE gpu_ecc_uncorrect_total" in text and exporter.port == 5000


def test_the_filters_read_a_uri_result():
    from ansible_collections.inferops.vllm.plugins.filter.gpu_exporter import FilterModule
    ready = FilterModule().filters()["gpu_exporter_ready"]
    assert ready({"status": -1, "msg": "Connection refused"}, "nvidia", 8, "n", "u")["message"].endswith("does not answer at u")

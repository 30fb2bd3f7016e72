"""The boundary (module_utils/controller/boundary.py): one format per variable, complete over the roles' argument
specs; each format refuses the hostile classes whole; names become paths only inside their root; and the plan
refuses what site.yml would need and lack (readiness.py)."""
import os
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller import boundary, readiness
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import VAR_TYPES, ClusterError
from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref
from clusters import REVISION, compile_

ROOT = Path(__file__).resolve().parents[2]
PATH_FORMATS = {"abs_path", "node_dir", "volume", "local_path"}


def role_options():
    out = {}
    for spec_file in sorted(ROOT.glob("roles/*/meta/argument_specs.yml")):
        for entry in (yaml.safe_load(spec_file.read_text())["argument_specs"] or {}).values():
            for name, option in (entry.get("options") or {}).items():
                out.setdefault(name, (spec_file.parts[-3], option))
    return out


def test_every_path_and_port_option_has_its_format():
    for name, (role, option) in role_options().items():
        if option.get("type") == "path" or option.get("elements") == "path":
            assert boundary.VAR_FORMATS.get(name) in PATH_FORMATS, "%s (role %s) needs a path format" % (name, role)
        if name.endswith("_port"):
            assert boundary.VAR_FORMATS.get(name) == "port", "%s (role %s) needs the port format" % (name, role)


def test_every_named_variable_exists():
    known = set(role_options()) | set(VAR_TYPES)
    assert sorted(set(boundary.VAR_FORMATS) - known) == []


def test_every_literal_role_default_passes_its_format():
    for defaults in sorted(ROOT.glob("roles/*/defaults/main.yml")):
        for name, value in (yaml.safe_load(defaults.read_text()) or {}).items():
            if isinstance(value, str) and "{{" in value:
                continue
            assert boundary.problem(name, value) is None, (defaults, name, value)


@pytest.mark.parametrize("variable, value", [
    ("vllm_control_interface", "eth0\nNCCL_DEBUG=TRACE"), ("vllm_control_interface", "eth 0"),
    ("vllm_control_interface", "eth0/1"), ("vllm_control_interface", "a" * 16), ("vllm_control_interface", ".."),
    ("vllm_ib_hcas", ["mlx5_0", ""]), ("vllm_ib_hcas", ["=mlx5_0"]), ("vllm_ib_hcas", ["mlx5_0\nX=1"]),
    ("vllm_ib_hcas", ["mlx5 0"]), ("vllm_nvlink_domain", "../rack"), ("vllm_cluster", "/etc"),
    ("vllm_cluster", "c1\n"), ("fabric_check_port", 70000), ("vllm_router_port", 0), ("vllm_prometheus_port", "-1"),
    ("vllm_serve_state_dir", "/"), ("vllm_serve_state_dir", "/var/lib"), ("vllm_serve_state_dir", "relative"),
    ("vllm_serve_state_dir", "/srv/a/../b"),
    ("vllm_watchdog_python", "/usr/bin/python3 -c x"), ("vllm_compile_cache_dir", "/"), ("vllm_model_cache_dir", "/srv/a:b"),
    ("vllm_router_host", "0.0.0.0:8080"), ("vllm_model_registry", "10.0.0.5:99999"),
    ("container_runtime_docker_repo_url", "https://x.example/ a"), ("nvidia_driver_version", "580; rm -rf /"),
    ("vllm_served_model_name", "k3 $(id)"), ("vllm_watchdog_container_name", "-vllm"),
    ("smoke_test_text_prompt", "hi\x00"), ("vllm_router_pip_extra_args", "--index-url x\n--pre"),
])
def test_a_hostile_value_is_refused_in_one_line(variable, value):
    found = boundary.problem(variable, value)
    assert found is not None, (variable, value)
    problem, fix = found
    assert "\n" not in problem + fix and fix


@pytest.mark.parametrize("variable, value", [
    ("vllm_control_interface", "ens1f0np0"), ("vllm_control_interface", "bond0.100"),
    ("vllm_ib_hcas", ["mlx5_0", "mlx5_1:1"]), ("vllm_cluster", "k3_gb300"), ("fabric_check_port", 29600),
    ("vllm_serve_state_dir", "/var/lib/inferops-vllm"), ("vllm_compile_cache_dir", ""),
    ("vllm_router_host", "::"), ("vllm_model_registry", "[fd00::5]:5000"), ("vllm_model_registry", "reg.site:5000"),
    ("vllm_served_model_name", "moonshotai/Kimi-K3"), ("vllm_model", "/models/k3"),
    ("smoke_test_text_prompt", "Line one.\nLine two."), ("nvidia_driver_version", "580.95.05-1"),
])
def test_a_plain_value_passes(variable, value):
    assert boundary.problem(variable, value) is None


@pytest.mark.parametrize("good", [
    "registry.example/vllm/vllm-openai@sha256:" + "a" * 64,
])
def test_a_digest_matches_whole_never_before_a_final_newline(good):
    assert image_ref.pin_problem(good) is None
    assert image_ref.pin_problem(good + "\n") is not None
    assert not image_ref.DIGEST.match("sha256:" + "a" * 64 + "\n")


def test_a_commit_with_a_final_newline_is_refused():
    with pytest.raises(ClusterError) as info:
        compile_(2, vllm_model_revision=REVISION + "\n")
    assert info.value.variable == "vllm_model_revision"


def test_names_become_paths_only_inside_their_root(tmp_path):
    assert boundary.inside(str(tmp_path), "c1", "n0.yaml") == os.path.join(str(tmp_path), "c1", "n0.yaml")
    for name in ("..", "../x", "/etc", "a/b", "x\ny", "", ".hidden", "-rf", "a" * 200):
        with pytest.raises(boundary.BoundaryError) as info:
            boundary.inside(str(tmp_path), name)
        assert "\n" not in str(info.value)
    (tmp_path / "out").symlink_to("/etc")
    with pytest.raises(boundary.BoundaryError, match="outside"):
        boundary.inside(str(tmp_path), "out", "passwd")


def test_inventory_names_that_cannot_be_file_names_are_refused():
    lines = readiness.name_problems(["gpu-01", "../../tmp/x", "a\nb"], ["k3", "/abs"])
    assert len(lines) == 3 and all("\n" not in line and "Fix:" in line for line in lines)


def test_the_compile_cache_may_not_be_the_weights_cache_nor_hold_it():
    for compiled in ("/var/lib/inferops-vllm/huggingface", "/var/lib/inferops-vllm"):
        with pytest.raises(ClusterError) as info:
            compile_(2, vllm_compile_cache_dir=compiled)
        assert info.value.variable == "vllm_compile_cache_dir" and "overlaps" in info.value.problem


def test_the_compile_cache_may_not_be_the_root():
    with pytest.raises(ClusterError) as info:
        compile_(2, vllm_compile_cache_dir="/")
    assert info.value.variable == "vllm_compile_cache_dir" and "system directory" in str(info.value)


# --- readiness: what site.yml needs, at the plan ------------------------------------------------------------

def test_an_unset_image_is_refused_at_the_plan():
    launches = compile_(2)
    lines = readiness.image_problems(launches)
    assert len(lines) == 1 and lines[0].startswith("vllm_image=None (cluster c1")
    image = "vllm/vllm-openai@sha256:" + "a" * 64
    assert readiness.image_problems(compile_(2, vllm_image=image)) == []


def test_an_open_api_is_refused_unless_it_is_meant():
    launches = compile_(2)
    refused, notes = readiness.api_problems(launches, lambda host: False, lambda host: False)
    assert len(refused) == 1 and "vllm_api_open" in refused[0] and notes == []
    refused, notes = readiness.api_problems(launches, lambda host: False, lambda host: True)
    assert refused == [] and "open API" in notes[0]
    assert readiness.api_problems(launches, lambda host: True, lambda host: False) == ([], [])


def test_imex_off_under_a_multi_node_nvlink_launch_is_refused():
    launches = compile_(2, vllm_gpu_model="GB300", vllm_fabric="mnnvl", vllm_nvlink_domain="rack1")
    lines = readiness.imex_problems(launches, lambda host: False)
    assert len(lines) == 1 and lines[0].startswith("nvidia_driver_imex=False (hosts n0, n1)")
    assert readiness.imex_problems(launches, lambda host: "auto") == []
    assert readiness.imex_problems(compile_(2), lambda host: False) == []

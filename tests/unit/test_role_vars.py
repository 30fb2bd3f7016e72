"""The other roles' variables against their argument specs (module_utils/controller/role_vars.py): Ansible's own
conversions are accepted, everything else is one line with the value, the hosts and the fix."""
from ansible_collections.inferops.vllm.plugins.module_utils.controller.role_vars import check, problem_of

OPTIONS = {
    "smoke_test_tool_trials": ("smoke_test", {"type": "int", "default": 20}),
    "smoke_test_suites": ("smoke_test", {"type": "list", "elements": "str", "choices": ["text", "load"]}),
    "smoke_test_rates": ("smoke_test", {"type": "list", "elements": "float"}),
    "fabric_check_min_busbw": ("fabric_check", {"type": "float"}),
    "preflight_strict": ("preflight", {"type": "bool"}),
    "container_runtime_docker_source": ("container_runtime", {"type": "str", "choices": ["distro", "docker"]}),
    "container_runtime_daemon_options": ("container_runtime", {"type": "dict"}),
    "vllm_image_cache_dir": ("vllm_image", {"type": "path"}),
    "nvidia_driver_packages": ("nvidia_driver", {"type": "raw"}),
}


def test_what_ansible_accepts_passes():
    for var, value in [("smoke_test_tool_trials", "20"), ("smoke_test_tool_trials", 3),
                       ("smoke_test_suites", ["text"]), ("smoke_test_suites", "text,load"),
                       ("smoke_test_rates", [1, "2.5"]), ("fabric_check_min_busbw", 40),
                       ("preflight_strict", "yes"), ("preflight_strict", False),
                       ("container_runtime_docker_source", "docker"), ("container_runtime_daemon_options", {}),
                       ("vllm_image_cache_dir", "/srv/x"), ("nvidia_driver_packages", {"anything": 1})]:
        assert problem_of(OPTIONS[var][1], value) is None, (var, value)


def test_wrong_values_are_one_line_each_grouped_over_hosts():
    lines = check(OPTIONS, [
        ("a", {"smoke_test_tool_trials": "many", "preflight_strict": "maybe", "unrelated": 1}),
        ("b", {"smoke_test_tool_trials": "many", "smoke_test_suites": ["text", "typo"]}),
        ("c", {"container_runtime_docker_source": "podman", "fabric_check_min_busbw": "fast",
               "smoke_test_rates": ["x"], "container_runtime_daemon_options": [1],
               "vllm_image_cache_dir": {"a": 1}, "smoke_test_tool_trials": None}),
    ])
    assert lines[0] == ("smoke_test_tool_trials='many' (hosts a, b): must be a whole number (role smoke_test). "
                        "Fix: set a whole number, e.g. 20")
    assert "preflight_strict='maybe' (host a): must be true or false" in lines[1]
    assert "smoke_test_suites=['text', 'typo'] (host b): has 'typo', not one of text, load" in lines[2]
    assert "container_runtime_docker_source='podman' (host c): not one of distro, docker" in lines[3]
    assert "fabric_check_min_busbw='fast' (host c): must be a number" in lines[4]
    assert "smoke_test_rates=['x'] (host c): must be a list of float values" in lines[5]
    assert "container_runtime_daemon_options=[1] (host c): must be a mapping" in lines[6]
    assert "vllm_image_cache_dir={'a': 1} (host c): must be a path" in lines[7]
    assert len(lines) == 8 and all(". Fix: " in line for line in lines)

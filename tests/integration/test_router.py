"""vLLM's router (vllm-router, the version pinned in roles/vllm_router/files/requirements.txt) started the way
the vllm_router role starts it: the role's launcher with a JSON configuration built by module_utils/node/router.py
and a 0600 key file, in front of two fault servers. Checks the workers it reports, that the key is on no
command line, that a chat completion is proxied, and the router_worker logic against it: remove, add, and a
drain that waits for a request in flight and times out cleanly.

Needs INFEROPS_ROUTER_VENV, a venv with the role's requirements (scripts/test.sh makes it with
make_router_venv). Uses 127.0.0.1 ports 18470-18473 only."""
import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import router

import fault_server
from vllm_servers import router_running

ROOT = Path(__file__).resolve().parents[2]
CONTROLLER_VENV = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm")) / "venv"
VENV = os.environ.get("INFEROPS_ROUTER_VENV", "")
ROUTER_PORT, PROMETHEUS_PORT, WORKER_PORTS = 18470, 18471, (18472, 18473)
ROUTER = "http://127.0.0.1:%d" % ROUTER_PORT
KEY = "router-it-key-%d-not-on-argv" % os.getpid()
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))

pytestmark = pytest.mark.skipif(
    not VENV or not (Path(VENV) / "bin/python").exists(),
    reason="INFEROPS_ROUTER_VENV is not set to a venv with roles/vllm_router/files/requirements.txt installed "
           "(scripts/test.sh integration makes one with make_router_venv)")


def get(url, timeout=10):
    with NO_PROXY.open(url, timeout=timeout) as resp:
        return resp.status, resp.read().decode()


def chat(content, timeout=30):
    body = json.dumps({"model": fault_server.MODEL, "messages": [{"role": "user", "content": content}],
                       "max_tokens": 8}).encode()
    req = urllib.request.Request(ROUTER + "/v1/chat/completions", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with NO_PROXY.open(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def hold():
    """A chat request the fault server holds open until its handler's `released` is set."""
    try:
        chat("hold it fault:hang", timeout=60)
    except OSError:   # released without an answer: the router may close the connection
        pass


@pytest.fixture(scope="module")
def workers():
    servers = [fault_server.start(port) for port in WORKER_PORTS]
    yield servers
    for server in servers:
        server.shutdown()


@pytest.fixture(scope="module")
def started(workers, tmp_path_factory):
    """The router as the role runs it; yields (process, log path)."""
    tmp = tmp_path_factory.mktemp("router")
    settings = {
        "vllm_router_host": "127.0.0.1", "vllm_router_port": ROUTER_PORT, "vllm_router_policy": "round_robin",
        "vllm_router_workers": [w.url for w in workers], "vllm_router_clusters": [],
        "vllm_router_health_check_interval": 1, "vllm_router_health_check_timeout": 2,
        "vllm_router_health_check_endpoint": "/health", "vllm_router_health_failure_threshold": 3,
        "vllm_router_health_success_threshold": 1, "vllm_router_retries": False,
        "vllm_router_circuit_breaker": True, "vllm_router_cb_failure_threshold": 10,
        "vllm_router_cb_success_threshold": 3, "vllm_router_cb_timeout": 60, "vllm_router_request_timeout": 120,
        "vllm_router_worker_startup_timeout": 20,
        "vllm_router_worker_startup_check_interval": 1, "vllm_router_prometheus_host": "127.0.0.1",
        "vllm_router_prometheus_port": PROMETHEUS_PORT, "vllm_router_log_level": "info",
        "vllm_router_extra_args": {"max-concurrent-requests": 64},
    }
    config = tmp / "router.json"
    config.write_text(json.dumps(router.router_config(settings), indent=2))
    key = tmp / "api-key"
    key.touch(mode=0o600)
    key.write_text(KEY + "\n")
    assert key.stat().st_mode & 0o777 == 0o600
    with router_running(VENV, config, ROUTER, "/list_workers", key_file=key) as running:
        yield running


def test_the_router_serves_the_configured_workers(started, workers):
    status, body = get(ROUTER + "/list_workers")
    assert status == 200 and sorted(json.loads(body)["urls"]) == sorted(w.url for w in workers)   # any order
    status, body = get(ROUTER + "/workers")
    listed = {w["url"]: w for w in json.loads(body)["workers"]}
    assert set(listed) == {w.url for w in workers}
    assert all(w["is_healthy"] for w in listed.values())
    assert get("http://127.0.0.1:%d/metrics" % PROMETHEUS_PORT)[0] == 200


def test_the_key_is_on_no_command_line(started):
    proc, log = started
    cmdline = Path("/proc/%d/cmdline" % proc.pid).read_bytes().decode()
    assert cmdline and KEY not in cmdline
    assert KEY not in Path("/proc/%d/environ" % proc.pid).read_bytes().decode()
    assert KEY not in log.read_text()
    for pid in os.listdir("/proc"):   # no other process (a child, a helper) carries it either
        if pid.isdigit():
            try:
                assert KEY not in Path("/proc/%s/cmdline" % pid).read_bytes().decode("utf-8", "replace")
            except OSError:
                pass


def test_a_chat_completion_is_proxied(started, workers):
    before = sum(len(w.RequestHandlerClass.requests) for w in workers)
    status, body = chat("What is the capital of France?")
    assert status == 200, body
    assert body["choices"][0]["message"]["content"] == "Paris is the answer."
    assert sum(len(w.RequestHandlerClass.requests) for w in workers) == before + 1


def test_remove_and_add_a_worker(started, workers, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")   # the module's opener must not use it
    a, b = (w.url for w in workers)
    removed = router.ensure(ROUTER, a, "absent", timeout=10)
    assert removed == {"changed": True, "workers": [b]}
    assert router.ensure(ROUTER, a, "absent", timeout=10)["changed"] is False
    served = len(workers[0].RequestHandlerClass.requests)
    for attempt in range(3):
        assert chat("hello %d" % attempt)[0] == 200
    assert len(workers[0].RequestHandlerClass.requests) == served   # nothing goes to a removed worker
    assert router.ensure(ROUTER, a, "present", timeout=30, check_mode=True) == {"changed": True, "workers": [b, a]}
    assert router.ensure(ROUTER, a, "present", timeout=30)["changed"] is True
    assert set(router.list_workers(ROUTER, 10)) == {a, b}
    assert router.ensure(ROUTER, a, "present", timeout=30) == {"changed": False, "workers": router.list_workers(ROUTER, 10)}


def test_drain_waits_for_the_request_in_flight_and_times_out_cleanly(started, workers):
    a, b = (w.url for w in workers)
    handler = workers[0].RequestHandlerClass
    handler.released = threading.Event()
    router.ensure(ROUTER, b, "absent", timeout=10)   # the held request must land on a
    held = threading.Thread(target=hold, daemon=True)
    held.start()
    deadline = time.monotonic() + 10
    while router.worker_in_flight(a, 5) != 1:
        assert time.monotonic() < deadline, "the held request did not reach %s" % a
        time.sleep(0.1)
    router.ensure(ROUTER, b, "present", timeout=30)

    start = time.monotonic()
    timed_out = router.ensure(ROUTER, a, "absent", drain_after=True, drain_timeout=2, timeout=5, interval=0.5)
    assert time.monotonic() - start < 6
    assert timed_out["changed"] is True and timed_out["workers"] == [b]
    assert timed_out["drained"] is False and timed_out["in_flight"] == 1
    assert "1 requests still in flight" in timed_out["msg"]

    threading.Timer(1.5, handler.released.set).start()   # the request ends while the re-run waits
    drained = router.ensure(ROUTER, a, "absent", drain_after=True, drain_timeout=20, timeout=5, interval=0.2)
    assert drained["changed"] is False and drained["drained"] is True
    assert 1.0 <= drained["drain_seconds"] < 15
    held.join(30)
    assert router.ensure(ROUTER, a, "present", timeout=30)["changed"] is True
    assert set(router.list_workers(ROUTER, 10)) == {a, b}


def test_the_module_run_by_ansible_fails_a_drain_that_times_out(started, workers):
    """router_worker itself, run by Ansible from the controller venv: idempotent, and a drain that does not end in
    time fails the task with the count still in flight (the worker stays removed)."""
    if not (CONTROLLER_VENV / "bin/ansible").exists():
        pytest.skip("no controller venv at %s (scripts/test.sh makes it with make_venv)" % CONTROLLER_VENV)
    a, b = (w.url for w in workers)

    def module(*flags, **args):
        out = subprocess.run([str(CONTROLLER_VENV / "bin/ansible"), "localhost", "-m", "inferops.vllm.router_worker",
                              "-a", json.dumps(dict({"router_url": ROUTER, "timeout": 30}, **args)), "-e",
                              "ansible_python_interpreter=%s" % (CONTROLLER_VENV / "bin/python"), *flags],
                             cwd=ROOT, capture_output=True, text=True, check=False,
                             env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
                                      ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1"))
        result = json.loads(out.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]
        return out.returncode, result

    rc, result = module(worker_url=a, state="present")
    assert rc == 0 and result["changed"] is False and sorted(result["workers"]) == sorted([a, b])
    rc, result = module("--check", worker_url=b, state="absent", drain=True)
    assert rc == 0 and result["changed"] is True and result["workers"] == [a] and result["drained"] is None
    assert sorted(router.list_workers(ROUTER, 10)) == sorted([a, b])   # check mode changed nothing

    handler = workers[1].RequestHandlerClass
    handler.released = threading.Event()
    router.ensure(ROUTER, a, "absent", timeout=10)   # the held request must land on b
    held = threading.Thread(target=hold, daemon=True)
    held.start()
    try:
        deadline = time.monotonic() + 10
        while router.worker_in_flight(b, 5) != 1:
            assert time.monotonic() < deadline, "the held request did not reach %s" % b
            time.sleep(0.1)
        router.ensure(ROUTER, a, "present", timeout=30)
        rc, result = module(worker_url=b, state="absent", drain=True, drain_timeout=2)
        assert rc != 0 and result["failed"] is True and result["drained"] is False
        assert "did not drain within 2s: 1 requests still in flight" in result["msg"]
        assert router.list_workers(ROUTER, 10) == [a]
    finally:
        handler.released.set()
        held.join(30)
    rc, result = module(worker_url=b, state="absent", drain=True, drain_timeout=20)
    assert rc == 0 and result["changed"] is False and result["drained"] is True
    rc, result = module(worker_url=b, state="present")
    assert rc == 0 and result["changed"] is True and sorted(result["workers"]) == sorted([a, b])

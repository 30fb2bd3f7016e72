"""The watchdog script's main() against the fault server (healthy, hung, dead engine) and
one real vLLM server, with a fake `docker` on PATH: the only fault-injection mock here.
It records its argv, answers `docker inspect` with the start time the test sets and `docker logs` with the
log lines it sets (the container's startup, which the watchdog reads until the start is complete)."""
import json
import os
import time
from datetime import datetime, timezone

import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.scripts import watchdog

import fault_server
import vllm_servers

FAKE_DOCKER = """#!/bin/sh
# fake docker for the watchdog tests: records its argv, answers `inspect`
echo "$*" >> "$FAKE_DOCKER_DIR/calls"
case "$1" in
  inspect) cat "$FAKE_DOCKER_DIR/inspect.json" ;;
  logs) cat "$FAKE_DOCKER_DIR/logs.txt" 2>/dev/null ;;
  restart|start) echo "$2" ;;
  *) echo "fake docker: $1 unknown" >&2; exit 1 ;;
esac
"""


def rfc3339(stamp):
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


class Node:
    """One node's watchdog files in a temporary directory, and its fake docker."""

    def __init__(self, tmp_path, monkeypatch, endpoint, model, **settings):
        self.dir = tmp_path
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "docker").write_text(FAKE_DOCKER)
        (bin_dir / "docker").chmod(0o755)
        monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
        monkeypatch.setenv("FAKE_DOCKER_DIR", str(tmp_path))
        self.container(started_at=time.time() - 86400)
        self.cfg = dict({"cluster": "t", "rank": 0, "role": "head", "endpoint": endpoint, "model": model,
                         "data_parallel": 1, "container": "vllm", "docker": "docker",
                         "env_file": str(tmp_path / "vllm.env"), "api_key_env": "VLLM_API_KEY",
                         "probe_timeout": 3, "max_tokens": 4, "failures_before_restart": 2, "grace": 600,
                         "grace_max": 3600, "backoff_factor": 2, "max_restarts": 3, "follower_delay": 1,
                         "stale_margin": 300, "status_file": str(tmp_path / "watchdog.json"),
                         "prom_file": str(tmp_path / "watchdog.prom")}, **settings)
        (tmp_path / "config.json").write_text(json.dumps(self.cfg))
        (tmp_path / "vllm.env").write_text("# Managed by inferops.vllm\nVLLM_API_KEY=wd-key\n")

    def container(self, started_at, running=True):
        self.logs = "logs --timestamps --since %.3f vllm" % watchdog.node_state.docker_time(rfc3339(started_at))
        state = {"Running": running, "Status": "running" if running else "exited", "StartedAt": rfc3339(started_at)}
        (self.dir / "inspect.json").write_text(json.dumps([{"Name": "/vllm", "State": state}]))

    def run(self, capsys):
        """One watchdog run through the script's entry point: (seconds, its one log line, status)."""
        t0 = time.monotonic()
        assert watchdog.main(["--config", str(self.dir / "config.json")]) == 0
        took = time.monotonic() - t0
        lines = capsys.readouterr().out.strip().splitlines()
        assert len(lines) == 1, lines            # one journal line per run
        line = lines[0]
        return took, line, json.loads((self.dir / "watchdog.json").read_text())

    def calls(self):
        path = self.dir / "calls"
        return path.read_text().splitlines() if path.exists() else []


def test_healthy_cluster_is_ok_and_touches_nothing(tmp_path, monkeypatch, capsys):
    with fault_server.start() as server:
        node = Node(tmp_path, monkeypatch, server.url, fault_server.MODEL, data_parallel=2)
        started = time.time() - 86400
        node.container(started_at=started)
        (tmp_path / "logs.txt").write_text("%s INFO Loading weights took 0.50 seconds\n%s INFO:     Application startup "
                                           "complete.\n" % (rfc3339(started + 10), rfc3339(started + 42.5)))
        for _run in range(3):
            _took, line, status = node.run(capsys)
        sent = list(server.RequestHandlerClass.requests)
    assert status["state"] == "ok" and status["consecutive_failures"] == 0 and status["last_probe"]["ok"]
    # docker is asked once, for the container's start; then not at all
    assert "state=ok action=none probe=ok" in line and node.calls() == ["inspect --type container vllm", node.logs]
    assert status["startup"]["complete"] and status["startup"]["phases"]["api_ready"]["after_s"] == 42.5
    assert len(sent) == 6 and all(r["temperature"] == 0 and r["max_tokens"] == 4 for r in sent)   # 2 per run
    prom = (tmp_path / "watchdog.prom").read_text()
    assert 'inferops_vllm_watchdog_up{cluster="t",rank="0",role="head"} 1' in prom
    assert 'inferops_vllm_startup_phase_seconds{cluster="t",rank="0",role="head",phase="weights_loaded"} 10.0' in prom


def test_hung_engine_is_caught_within_the_deadline_and_restarted_after_k_runs(tmp_path, monkeypatch, capsys):
    """/health stays 200 and requests hang (a dead data-parallel rank): each run fails within
    its deadline; the second failed run restarts the container; the next is in its grace."""
    with fault_server.start(fault="hang") as server:
        node = Node(tmp_path, monkeypatch, server.url, fault_server.MODEL)
        took, line, status = node.run(capsys)
        assert took < node.cfg["probe_timeout"] + 2
        assert status["state"] == "failing" and "no answer within 3s" in status["last_probe"]["detail"]
        assert node.calls() == ["inspect --type container vllm", node.logs]   # loading: its start is read
        took, line, status = node.run(capsys)
        assert took < node.cfg["probe_timeout"] + 2
        assert status["state"] == "restarting" and status["restarts_total"] == 1 and "action=restart" in line
        assert node.calls()[-1] == "restart vllm"
        node.container(started_at=time.time())      # what `docker restart` did
        _took, line, status = node.run(capsys)
    assert status["state"] == "grace" and "within its 600s grace" in line
    assert node.calls().count("restart vllm") == 1
    prom = (tmp_path / "watchdog.prom").read_text()
    assert 'inferops_vllm_watchdog_restarts_total{cluster="t",rank="0",role="head"} 1' in prom


def test_dead_engine_stopped_follower_waits_then_starts(tmp_path, monkeypatch, capsys):
    """500s from a dead engine; this follower's container has exited: after K runs it waits
    the follower delay, then `docker start`s it (a restart would not start a stopped one)."""
    with fault_server.start(fault="dead_engine") as server:
        node = Node(tmp_path, monkeypatch, server.url, fault_server.MODEL, rank=1, role="follower")
        node.container(started_at=time.time() - 86400, running=False)
        node.run(capsys)
        took, line, status = node.run(capsys)
    assert "answered 500" in status["last_probe"]["detail"] and "EngineDeadError" in status["last_probe"]["detail"]
    assert took >= 1 and status["restarts"][-1]["action"] == "start" and node.calls()[-1] == "start vllm"
    assert "waited the follower delay (1s)" in line


def test_gives_up_and_a_good_probe_brings_it_back(tmp_path, monkeypatch, capsys):
    with fault_server.start(fault="dead_engine") as server:
        node = Node(tmp_path, monkeypatch, server.url, fault_server.MODEL, failures_before_restart=1,
                    max_restarts=2, grace=0)
        states = [node.run(capsys)[2]["state"] for _run in range(4)]
        assert states == ["restarting", "restarting", "gave_up", "gave_up"]
        assert node.calls().count("restart vllm") == 2
        assert "inferops_vllm_watchdog_gave_up{" in (tmp_path / "watchdog.prom").read_text()
    with fault_server.start() as server:
        node.cfg["endpoint"] = server.url
        (tmp_path / "config.json").write_text(json.dumps(node.cfg))
        _took, line, status = node.run(capsys)
    assert status["state"] == "ok" and status["restarts_in_row"] == 0 and status["restarts_total"] == 2
    assert "recovered after" in line


@pytest.fixture(scope="module")
def real_vllm(tmp_path_factory):
    log = tmp_path_factory.mktemp("wd-vllm") / "server.log"
    server = vllm_servers.Server(vllm_servers.tiny_k3(), vllm_servers.K3_ARGS + ["--api-key", "wd-key"], log)
    yield server
    server.stop()


def test_real_vllm_serving_is_ok(real_vllm, tmp_path, monkeypatch, capsys):
    """The key comes from the env file; the tiny K3 model's text may be all reasoning."""
    node = Node(tmp_path, monkeypatch, real_vllm.url, "tiny-k3", probe_timeout=60)
    for _run in range(2):
        _took, line, status = node.run(capsys)
        assert status["state"] == "ok", line
    assert node.calls() == ["inspect --type container vllm", node.logs]   # the first run reads the start, once


def test_real_vllm_stale_follower_restarts_at_once(real_vllm, tmp_path, monkeypatch, capsys):
    """vLLM 0.32's /metrics has process_start_time_seconds: a follower whose container is
    older than the head's process by more than the margin, with a failing probe (here a
    model the server does not serve), restarts on the first failure, without the delay."""
    head_started = watchdog.health.metric(real_vllm.url, "process_start_time_seconds", 10)
    assert head_started and head_started <= time.time()
    node = Node(tmp_path, monkeypatch, real_vllm.url, "no-such-model", rank=1, role="follower", follower_delay=30,
                failures_before_restart=3)
    node.container(started_at=head_started - 301)
    took, line, status = node.run(capsys)
    assert status["state"] == "restarting" and "stale follower" in line and node.calls()[-1] == "restart vllm", line
    assert took < 15
    # a follower that started with the head (within the margin) is a member: no stale rule, and its grace holds
    node2 = Node(tmp_path / "n2", monkeypatch, real_vllm.url, "no-such-model", rank=1, role="follower")
    node2.container(started_at=head_started - 5)
    _took, line, status = node2.run(capsys)
    assert status["state"] == "grace" and node2.calls() == ["inspect --type container vllm", node2.logs], line

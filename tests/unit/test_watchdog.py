"""watchdog: the decision (counting, grace, follower delay, back-off, give-up, recovery),
the status file and the Prometheus textfile, and one run with a fake docker and server."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".collections"))
from ansible_collections.inferops.vllm.plugins.module_utils.scripts import watchdog as wd  # noqa: E402

NOW = 1_800_000_000.0
POLICY = wd.Policy(failures_before_restart=3, grace=900, grace_max=3600, backoff_factor=2, max_restarts=3,
                   follower_delay=20, stale_margin=300)
OLD = wd.Container(exists=True, running=True, started_at=NOW - 86400)


def bad(t=NOW):
    return wd.Probe(False, "1 of 1 requests failed: request 1: no answer within 30s", None, t)


def good(t=NOW):
    return wd.Probe(True, "1 of 1 requests answered, slowest 0.05s", 0.05, t)


def step(state, probe, container=OLD, now=NOW, **kw):
    return wd.decide(state, probe, container, now, POLICY, **kw)


def test_good_probe_is_ok_and_does_nothing():
    d = step(wd.State(), good())
    assert (d.state.state, d.action, d.reason) == ("ok", "none", "serving")
    assert d.state.last_probe == {"time": NOW, "ok": True, "detail": good().detail, "latency_s": 0.05,
                                  "answered": None}
    assert d.state.last_success == NOW


def test_head_restarts_after_k_consecutive_failures():
    s = wd.State()
    for i in (1, 2):
        d = step(s, bad())
        assert (d.state.state, d.action, d.state.consecutive_failures) == ("failing", "none", i)
        s = d.state
    d = step(s, bad())
    assert d.action == "restart" and d.state.state == "restarting"
    assert (d.state.restarts_in_row, d.state.restarts_total) == (1, 1)
    assert d.state.restarts == [{"time": NOW, "action": "restart", "reason": "3 consecutive failed probes"}]


def test_one_good_probe_resets_the_count():
    s = step(step(wd.State(), bad()).state, bad()).state
    d = step(s, good())
    assert d.state.consecutive_failures == 0 and d.state.state == "ok" and d.reason.startswith("recovered after 2")
    assert step(d.state, bad()).action == "none"


def test_stopped_container_is_started_not_restarted():
    s = wd.State(consecutive_failures=2, state="failing")
    d = step(s, bad(), wd.Container(exists=True, running=False, started_at=NOW - 10))
    assert d.action == "start"   # a stopped container has no grace, however recent its last start


def test_no_container_or_no_docker_means_no_action():
    s = wd.State(consecutive_failures=5, state="failing")
    assert step(s, bad(), wd.Container(exists=False)).action == "none"
    d = step(s, bad(), wd.Container(exists=False, error="Cannot connect to the Docker daemon"))
    assert d.action == "none" and "docker did not answer" in d.reason


def test_a_container_stopped_on_purpose_is_left_stopped():
    # Ansible restarting the group in order stops every node, then starts the head, then the followers: a
    # follower's watchdog that starts its container in between starts it before the head (seen in the lab)
    stopped = wd.Container(exists=True, running=False, started_at=NOW - 600, stopped_on_purpose=True)
    member = wd.State(consecutive_failures=5, state="failing", last_success=NOW - 30)
    for follower in (False, True):
        d = step(member, refused(), stopped, follower=follower, delayed=True)
        assert d.action == "none" and "stopped on purpose" in d.reason

    def inspect(policy, status):
        out = json.dumps([{"State": {"Running": False, "Status": status, "StartedAt": "2026-11-30T19:01:09Z"},
                           "HostConfig": {"RestartPolicy": {"Name": policy}}, "Config": {}}])
        return wd.Docker("docker", lambda argv: (0, out, "")).inspect("vllm")

    assert inspect("unless-stopped", "exited").stopped_on_purpose
    assert inspect("always", "exited").stopped_on_purpose
    # no policy that would bring a crash back: the watchdog starts it, as before
    assert not inspect("no", "exited").stopped_on_purpose
    assert not inspect("unless-stopped", "restarting").stopped_on_purpose


def test_any_recent_start_gives_the_load_its_grace():
    s = wd.State(consecutive_failures=7, state="failing")
    d = step(s, bad(), wd.Container(exists=True, running=True, started_at=NOW - 899))
    assert (d.state.state, d.action, d.state.consecutive_failures) == ("grace", "none", 8)
    # the grace is over and the failures kept counting: restart at once
    d = step(s, bad(), wd.Container(exists=True, running=True, started_at=NOW - 901))
    assert d.action == "restart"


def test_a_container_that_served_since_its_start_has_no_grace_left():
    young = wd.Container(exists=True, running=True, started_at=NOW - 300)
    # it served 100 s after its start: the load is over, so failures count towards a restart at once
    served = wd.State(consecutive_failures=2, state="failing", last_success=NOW - 200)
    d = step(served, bad(), young)
    assert d.action == "restart" and d.reason.startswith("3 consecutive failed probes")
    # its last good probe was before this start (Ansible recreated it, a rollout): still loading
    before = wd.State(consecutive_failures=2, state="failing", last_success=NOW - 400)
    assert step(before, bad(), young).state.state == "grace"


def test_grace_backs_off_and_is_capped():
    assert [wd.grace_for(n, POLICY) for n in range(5)] == [900, 900, 1800, 3600, 3600]
    s = wd.State(consecutive_failures=9, restarts_in_row=2, state="grace")
    assert step(s, bad(), wd.Container(True, True, NOW - 1700)).state.state == "grace"   # 1800 s after 2 restarts
    assert step(s, bad(), wd.Container(True, True, NOW - 1801)).action == "restart"


def test_gives_up_after_max_restarts_and_stays_quiet():
    s = wd.State(consecutive_failures=9, restarts_in_row=3, restarts_total=3, state="grace")
    d = step(s, bad())
    assert (d.action, d.state.state, d.state.gave_up_at) == ("none", "gave_up", NOW)
    assert d.reason.startswith("GIVING UP") and d.state.restarts_total == 3
    later = step(d.state, bad(), now=NOW + 86400)
    assert (later.action, later.state.state) == ("none", "gave_up") and later.reason.startswith("GAVE UP")


def test_a_good_probe_ends_give_up_and_resets_the_back_off():
    s = wd.State(consecutive_failures=9, restarts_in_row=3, restarts_total=4, state="gave_up", gave_up_at=NOW - 60)
    d = step(s, good())
    assert (d.state.state, d.state.restarts_in_row, d.state.gave_up_at, d.state.restarts_total) == ("ok", 0, None, 4)


def test_follower_waits_then_restarts():
    s = wd.State(consecutive_failures=2, state="failing")
    d = step(s, bad(), follower=True)
    assert (d.action, d.delay) == ("wait", 20) and d.state.restarts_total == 0
    d = step(s, bad(), now=NOW + 20, follower=True, delayed=True)
    assert d.action == "restart" and d.state.restarts_total == 1
    # started by someone else (Ansible, docker) during the delay: its grace holds
    d = step(s, bad(), wd.Container(True, True, NOW + 5), now=NOW + 20, follower=True, delayed=True)
    assert (d.action, d.state.state) == ("none", "grace")


def test_stale_follower_restarts_at_once():
    s = wd.State(consecutive_failures=0)
    young = wd.Container(True, True, NOW - 600)   # within its grace, but older than the head by 500 s
    d = step(s, bad(), young, follower=True, head_started=NOW - 100)
    assert d.action == "restart" and "stale follower" in d.reason and d.delay == 0
    # the head started within the margin after it (Ansible starts all nodes together): a member
    assert step(s, bad(), young, follower=True, head_started=NOW - 400).action == "none"
    # a good probe, an unknown head start, the head itself, or the rule switched off: no stale rule
    assert step(s, good(), young, follower=True, head_started=NOW - 100).action == "none"
    assert step(s, bad(), young, follower=True, head_started=None).action == "none"
    assert step(s, bad(), young, follower=False, head_started=NOW - 100).action == "none"
    off = wd.decide(s, bad(), young, NOW, wd.Policy(stale_margin=0), True, NOW - 100)
    assert off.action == "none"


def refused(t=NOW):
    return wd.Probe(False, "2 of 2 requests failed: rank 0: [Errno 111] Connection refused; rank 1: ...", None, t,
                    refused=True)


def test_a_follower_of_a_group_that_served_rejoins_a_head_that_went_down():
    # the group served with this follower in it (last good probe at NOW - 30); now the head's API is down:
    # the head restarted, its group is gone, and the fresh head waits for fresh followers
    member = wd.Container(True, True, NOW - 3600)
    s = wd.State(consecutive_failures=1, state="failing", last_success=NOW - 30, last_answer=NOW - 10)
    d = step(s, refused(), member, follower=True)
    assert (d.action, d.delay) == ("wait", 20) and "head's API went down" in d.reason
    d = step(s, refused(), member, now=NOW + 20, follower=True, delayed=True)
    assert d.action == "restart" and "head's API went down" in d.reason
    # Ansible recreated it during the delay (a rollout): its grace holds, no restart races Ansible's
    assert step(s, refused(), wd.Container(True, True, NOW + 10), now=NOW + 20, follower=True,
                delayed=True).action == "none"
    # once restarted it has not served since its start: its grace holds while the group forms
    fresh = wd.Container(True, True, NOW + 25)
    assert step(d.state, refused(NOW + 35), fresh, now=NOW + 35, follower=True).action == "none"
    # the head itself, or a head that answers (even with errors): the usual rules
    assert step(s, refused(), member, follower=False).action == "none"
    assert step(s, bad(), member, follower=True).action == "none"


def test_a_follower_that_has_not_served_since_its_start_waits_for_the_next_head():
    # The lab's DP race: docker brought the killed follower back at NOW - 60; the head still answered at
    # NOW - 10 (rank 1 hung: the new follower is in no group), then its watchdog restarted it. vLLM keeps the
    # new follower waiting for a head's handshake: it joins the head that is starting now, and a restart here
    # would tear that group apart as it forms (the cluster then served after 4 minutes, not 2).
    lone = wd.Container(True, True, NOW - 60)
    s = wd.State(consecutive_failures=3, state="grace", last_success=NOW - 70, last_answer=NOW - 10)
    assert step(s, refused(), lone, follower=True).action == "none"
    assert step(s, refused(), lone, follower=True, delayed=True).state.state == "grace"
    # the node restarted (a reboot): its state file says the cluster served before, not since this start
    assert step(s, refused(), wd.Container(True, True, NOW - 20), follower=True).action == "none"
    # a group load in progress: the head never answered since this follower started
    loading = wd.State(consecutive_failures=3, state="grace", last_answer=NOW - 120)
    assert step(loading, refused(), lone, follower=True).action == "none"
    # past its grace the usual count restarts it, after the follower delay
    old = wd.Container(True, True, NOW - 1000)
    assert step(wd.State(consecutive_failures=3, state="failing", last_success=NOW - 2000), refused(), old,
                follower=True).action == "wait"


def test_the_head_answering_at_all_is_remembered():
    assert step(wd.State(), bad(NOW - 5)).state.last_answer == NOW - 5
    assert step(wd.State(last_answer=NOW - 50), refused()).state.last_answer == NOW - 50


def test_stale_rule_respects_give_up():
    s = wd.State(consecutive_failures=1, restarts_in_row=3, state="grace")
    d = step(s, bad(), wd.Container(True, True, NOW - 600), follower=True, head_started=NOW - 100)
    assert d.state.state == "gave_up" and d.action == "none"


def test_restart_history_is_bounded():
    s = wd.State(consecutive_failures=2, restarts=[{"time": i, "action": "restart", "reason": "x"} for i in range(10)])
    d = step(s, bad())
    assert len(d.state.restarts) == wd.KEEP_RESTARTS and d.state.restarts[-1]["time"] == NOW


@pytest.mark.parametrize("text, stamp", [
    ("2026-11-30T19:04:23.5Z", 1796065463.5),
    ("2026-11-30T19:04:23.123456789Z", 1796065463.123456789),
    ("2026-11-30T20:04:23+01:00", 1796065463.0),
    ("0001-01-01T00:00:00Z", None),
    ("", None),
])
def test_docker_times(text, stamp):
    started = wd.node_state.docker_time(text)
    assert started == pytest.approx(stamp, abs=1e-3) if stamp else started is None


def test_docker_inspect_through_the_runner():
    calls = []

    def runner(argv):
        calls.append(argv)
        if argv[-1] == "missing":
            return 1, "", "Error: No such container: missing"
        if argv[-1] == "down":
            return 1, "", "Cannot connect to the Docker daemon"
        return 0, json.dumps([{"State": {"Running": True, "StartedAt": "2026-11-30T19:04:23Z"}}]), ""

    docker = wd.Docker("/usr/bin/docker", runner)
    assert docker.inspect("vllm") == wd.Container(True, True, 1796065463.0)
    assert docker.inspect("missing") == wd.Container(False)
    assert docker.inspect("down").error == "Cannot connect to the Docker daemon"
    assert calls[0] == ["/usr/bin/docker", "inspect", "--type", "container", "vllm"]


def test_api_key_from_the_env_file(tmp_path):
    env = tmp_path / "vllm.env"
    env.write_text("# Managed by inferops.vllm\nHF_HUB_OFFLINE=1\nVLLM_API_KEY=k=with=equals\n")
    assert wd.api_key(str(env), "VLLM_API_KEY") == "k=with=equals"
    assert wd.api_key(str(env), None) is None and wd.api_key(str(tmp_path / "none"), "VLLM_API_KEY") is None


CFG = {"cluster": "lab", "rank": 1, "role": "follower", "endpoint": "http://127.0.0.1:1", "container": "vllm"}


def test_prometheus_textfile():
    s = step(wd.State(consecutive_failures=2, restarts_total=4, state="failing"), bad()).state
    text = wd.render_prom(s, CFG)
    labels = 'cluster="lab",rank="1",role="follower"'
    for line in ("inferops_vllm_watchdog_up{%s} 0" % labels,
                 "inferops_vllm_watchdog_consecutive_failures{%s} 3" % labels,
                 "inferops_vllm_watchdog_restarts_total{%s} 5" % labels,
                 "# TYPE inferops_vllm_watchdog_restarts_total counter",
                 "inferops_vllm_watchdog_last_probe_timestamp_seconds{%s} %r" % (labels, NOW),
                 "inferops_vllm_watchdog_last_probe_latency_seconds{%s} NaN" % labels,
                 "inferops_vllm_watchdog_gave_up{%s} 0" % labels,
                 'inferops_vllm_watchdog_state{%s,state="restarting"} 1' % labels,
                 'inferops_vllm_watchdog_state{%s,state="ok"} 0' % labels):
        assert line in text.splitlines(), line
    assert text.endswith("\n") and "\n\n" not in text
    up = wd.render_prom(step(wd.State(), good()).state, dict(CFG, cluster='a"b'))
    assert 'inferops_vllm_watchdog_up{cluster="a\\"b",rank="1",role="follower"} 1' in up
    assert "inferops_vllm_watchdog_last_probe_latency_seconds{cluster=\"a\\\"b\",rank=\"1\",role=\"follower\"} 0.05" in up


def test_status_document_round_trips():
    d = step(wd.State(consecutive_failures=2), bad())
    doc = wd.status_document(d.state, d, CFG, NOW + 1)
    assert doc["state"] == "restarting" and doc["last_action"]["action"] == "restart"
    assert doc["updated_iso"] == "2027-01-15T08:00:01Z" and doc["cluster"] == "lab"
    again = wd.State.from_dict(json.loads(json.dumps(doc)))
    assert again == d.state


def test_run_once_restarts_through_the_runner_and_writes_the_files(tmp_path):
    """A closed port fails the probe; the third run restarts; the files show it."""
    calls = []

    def runner(argv):
        calls.append(argv[1:])
        if argv[1] == "inspect":
            return 0, json.dumps([{"State": {"Running": True, "StartedAt": "2020-01-01T00:00:00Z"}}]), ""
        return 0, "vllm\n", ""

    cfg = dict(CFG, rank=0, role="head", model="m", data_parallel=2, probe_timeout=2, failures_before_restart=3,
               status_file=str(tmp_path / "watchdog.json"), prom_file=str(tmp_path / "watchdog.prom"))
    for _run in range(3):
        d = wd.run_once(cfg, runner, reader=lambda *_a: ([], "could not run docker: not here"))
    assert d.action == "restart" and ["restart", "vllm"] in calls
    status = json.loads((tmp_path / "watchdog.json").read_text())
    assert status["state"] == "restarting" and status["restarts_total"] == 1
    assert "2 of 2 requests failed" in status["last_probe"]["detail"]
    assert "inferops_vllm_watchdog_restarts_total{" in (tmp_path / "watchdog.prom").read_text()
    assert "state=restarting action=restart probe=FAILED" in wd.log_line(cfg, d)
    assert "P/D" not in wd.log_line(cfg, d)
    # a P/D side says what its failure does to the deployment
    prefill = dict(cfg, pd={"deployment": "k3_pd", "role": "prefill"})
    assert wd.log_line(prefill, d).endswith("; this is the prefill side of P/D deployment k3_pd: requests through its "
                                            "router stall (no KV is computed for the decode side) until it serves again")
    assert "decode side of P/D deployment k3_pd: requests through its router fail" in wd.log_line(
        dict(cfg, pd={"deployment": "k3_pd", "role": "decode"}), d)


def test_script_runs_standalone_beside_health(tmp_path):
    """On a node the script runs with only its siblings beside it (runtimes.SCRIPT_SIBLINGS: no Ansible, no
    collection)."""
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.runtimes import SCRIPT_SIBLINGS
    shutil.copy(ROOT / "plugins/module_utils/scripts/watchdog.py", tmp_path / "watchdog.py")
    for name in SCRIPT_SIBLINGS["watchdog.py"]:
        shutil.copy(ROOT / "plugins/module_utils/node" / name, tmp_path / name)
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 'Error: No such container: vllm' >&2\nexit 1\n")
    fake.chmod(0o755)
    cfg = dict(CFG, model="m", probe_timeout=1, docker=str(fake), status_file=str(tmp_path / "s.json"))
    (tmp_path / "watchdog.json").write_text(json.dumps(cfg))
    done = subprocess.run([sys.executable, "-S", "-E", "-s", str(tmp_path / "watchdog.py"), "--config",
                           str(tmp_path / "watchdog.json")], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "state=failing action=none probe=FAILED" in done.stdout and "no container to restart" in done.stdout


START_LOG = ["2020-01-01T00:00:03.000000000Z INFO Loading weights took 0.50 seconds",
             "2020-01-01T00:00:20.000000000Z INFO torch.compile took 12.00 s in total"]
READY_LOG = START_LOG + ["2020-01-01T00:00:30.500000000Z INFO:     Application startup complete."]


def test_the_startup_is_read_until_complete_then_left_alone(tmp_path):
    """While the start is not read whole the watchdog asks docker each run; the phases go to the textfile;
    once complete a serving cluster costs one probe per run again; a new start is read afresh."""
    calls, logs = [], [START_LOG]
    started = ["2020-01-01T00:00:00Z"]

    def runner(argv):
        calls.append(argv[1])
        return 0, json.dumps([{"State": {"Running": True, "StartedAt": started[0]}}]), ""

    def reader(argv, max_lines, timeout, stop):
        calls.append("logs")
        assert argv[1:4] == ["logs", "--timestamps", "--since"] and timeout == wd.STARTUP_READ_TIMEOUT
        return logs[0], ""

    (tmp_path / "image.json").write_text('{"pulled_at": "2019-12-31T23:00:00Z"}')
    cfg = dict(CFG, rank=0, role="head", model="m", probe_timeout=1, failures_before_restart=10,
               status_file=str(tmp_path / "s.json"), prom_file=str(tmp_path / "w.prom"),
               records={"image": str(tmp_path / "image.json"), "model": str(tmp_path / "model.json")})
    d = wd.run_once(cfg, runner, reader=reader)      # the API is still down: loading
    assert calls == ["inspect", "logs"] and d.state.startup["complete"] is False
    prom = (tmp_path / "w.prom").read_text().splitlines()
    labels = 'cluster="lab",rank="0",role="head"'
    assert 'inferops_vllm_startup_phase_seconds{%s,phase="compiled"} 20.0' % labels in prom
    assert "inferops_vllm_startup_complete{%s} 0" % labels in prom
    # the image record's time; no weights record, no series
    assert "inferops_vllm_startup_image_pulled_timestamp_seconds{%s} 1577833200.0" % labels in prom
    assert not [line for line in prom if "weights_staged" in line]
    logs[0] = READY_LOG
    d = wd.run_once(cfg, runner, reader=reader)
    assert d.state.startup["complete"] and d.state.startup["phases"]["api_ready"]["after_s"] == 30.5
    assert "inferops_vllm_startup_complete{%s} 1" % labels in (tmp_path / "w.prom").read_text().splitlines()
    # complete and the state file keeps it: a failing probe asks docker, the same start is not read again
    calls.clear()
    d = wd.run_once(cfg, runner, reader=reader)
    assert calls == ["inspect"] and d.state.startup["complete"]
    started[0] = "2020-01-02T00:00:00Z"             # restarted: its log is read afresh (nothing since yet)
    logs[0] = []
    d = wd.run_once(cfg, runner, reader=reader)
    assert calls[-1] == "logs" and d.state.startup["phases"] == {} and not d.state.startup["complete"]


def test_startup_after_keeps_a_complete_start_and_counts_a_serving_cluster_as_complete():
    prev = {"started_epoch": 100.0, "complete": True, "phases": {}}
    same = wd.Container(exists=True, running=True, started_at=100.0)
    assert wd.startup_after(prev, same, False, lambda _t: 1 / 0) is prev
    assert wd.startup_after(prev, wd.Container(exists=True), True, lambda _t: 1 / 0) is prev
    follower = wd.startup_after({}, same, True, lambda _t: {"phases": {}, "ready": False})
    assert follower == {"phases": {}, "ready": False, "started_epoch": 100.0, "complete": True}
    assert wd.startup_prom({}, "x") == []
    mapped = wd.startup_prom({"started_epoch": 1.0, "weights_from": "weight cache"}, 'cluster="k3"')
    assert 'inferops_vllm_startup_weights_from_cache{cluster="k3"} 1' in mapped
    disk = wd.startup_prom({"started_epoch": 1.0, "weights_from": "disk, the weight cache unusable"}, 'cluster="k3"')
    assert 'inferops_vllm_startup_weights_from_cache{cluster="k3"} 0' in disk
    assert not any("weights_from_cache" in line for line in wd.startup_prom({"started_epoch": 1.0}, "x"))


def test_the_roles_config_takes_numbers_as_the_script_does_and_names_a_bad_one():
    from ansible_collections.inferops.vllm.plugins.module_utils.controller import watchdog_config as wc
    launch = {"cluster": {"name": "k3", "endpoint": "http://10.0.0.5:8000"}, "rank": 1, "role": "follower",
              "args": {"served-model-name": "kimi-k3"}, "host_stack": {"probe_ranks": [0, 1]},
              "secret_env": {"VLLM_API_KEY": "vllm_api_key"}}
    options = {wc.PREFIX + name: "/x/" + name for name in wc.TEXTS}
    options.update({wc.PREFIX + name: "7" for name in wc.NUMBERS})
    config = wc.config(launch, options)
    assert set(config) == set(wd.CONFIG_KEYS) - {"pd", "weight_cache_url"} | set(wd.Policy.__dataclass_fields__)
    assert config["grace"] == 7 and config["backoff_factor"] == 7.0 and config["api_key_env"] == "VLLM_API_KEY"
    assert "pd" not in config and config["data_parallel"] == [0, 1]
    cached = wc.config(dict(launch, weight_cache={"url": "http://127.0.0.1:8098"}), options)
    assert cached["weight_cache_url"] == "http://127.0.0.1:8098"
    for bad in ("soon", True, None):
        with pytest.raises(wc.WatchdogConfigError, match="vllm_watchdog_grace=.* is not a number: set it"):
            wc.config(launch, dict(options, vllm_watchdog_grace=bad))
    with pytest.raises(wc.WatchdogConfigError, match="vllm_watchdog_env_file"):
        wc.config(launch, {k: v for k, v in options.items() if k != wc.PREFIX + "env_file"})


def test_the_weight_cache_daemon_is_read_and_never_restarted():
    """A real /health on loopback: 200 is up; a 503, or nothing listening, is down; no cache, no series."""
    from loopback_http import serving

    codes = iter([200, 503])
    with serving(lambda _path: next(codes)) as (url, asked):
        assert wd.weight_cache_up(url) == 1 and wd.weight_cache_up(url) == 0 and asked == ["/health"] * 2
    assert wd.weight_cache_up(url, timeout=1) == 0 and wd.weight_cache_up(None) is None
    state = wd.State()
    cfg = {"cluster": "k3", "rank": 0, "role": "head"}
    assert 'inferops_vllm_weight_cache_up{cluster="k3",rank="0",role="head"} 0' in wd.render_prom(state, cfg, 0)
    assert "weight_cache_up" not in wd.render_prom(state, cfg)

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vLLM watchdog: every member of a cluster probes the cluster's API with real
generations and, after enough consecutive failures, restarts its own container.

`decide` is the whole policy, a pure function of the last state, this run's probe,
the container's start time and the clock. The rest reads those inputs, acts, and
writes the status file, the Prometheus textfile and one log line.

It also keeps the node's last startup: the phases its vLLM log shows since the container's last start
(startup_log.py), read on each run until the start is complete, and written as Prometheus series.

Stdlib only. The vllm_watchdog role deploys this file with health.py, node_state.py, startup_log.py and
node_record.py beside it and runs it from a systemd timer:  python3 watchdog.py --config /etc/inferops-vllm/watchdog.json"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Tuple

try:
    from ansible_collections.inferops.vllm.plugins.module_utils.node import health, node_state, startup_log
except ImportError:  # on a node: health.py, node_state.py and startup_log.py (with node_record.py) lie next to it
    import health  # type: ignore[no-redef]
    import node_state  # type: ignore[no-redef]
    import startup_log  # type: ignore[no-redef]

KEEP_RESTARTS = 10
# What the config file holds (the vllm_watchdog role writes it), besides the Policy fields.
CONFIG_KEYS = ("cluster", "rank", "role", "endpoint", "model", "data_parallel", "container", "docker", "env_file",
               "api_key_env", "probe_timeout", "max_tokens", "status_file", "prom_file", "records", "pd",
               "weight_cache_url")
Runner = Callable[[List[str]], Tuple[int, str, str]]
# Reads a command's output lines, bounded (startup_log.read_lines): the container's log for its startup.
LogReader = Callable[[List[str], int, float, str], Tuple[List[str], str]]
# The startup read on each run stays short: the timer's next run reads again until the start is complete.
STARTUP_READ_TIMEOUT = 20.0


@dataclass(frozen=True)
class Policy:
    failures_before_restart: int = 3
    grace: float = 900
    grace_max: float = 7200
    backoff_factor: float = 2.0
    max_restarts: int = 5
    follower_delay: float = 20
    stale_margin: float = 300     # 0: no stale-follower rule


@dataclass(frozen=True)
class Probe:
    ok: bool
    detail: str
    latency: Optional[float]      # the slowest answered request, seconds
    time: float
    refused: bool = False         # nothing listens on the API port: the head is down or (re)starting
    answered: Optional[int] = None   # requests (one per data-parallel rank) that generated text


@dataclass(frozen=True)
class Container:
    exists: bool
    running: bool = False
    started_at: Optional[float] = None   # epoch seconds of the last start (State.StartedAt)
    error: Optional[str] = None          # docker itself failed: nothing is known
    # stopped while its restart policy (always, unless-stopped) would bring back a crash: `docker stop` by an
    # operator, or Ansible restarting the group in order (stop all, start the head, then the followers)
    stopped_on_purpose: bool = False


@dataclass
class State:
    state: str = "ok"                    # ok | failing | grace | restarting | gave_up
    consecutive_failures: int = 0
    restarts_in_row: int = 0             # restarts by the watchdog since the last good probe
    restarts_total: int = 0
    last_probe: Dict[str, Any] = field(default_factory=dict)
    last_success: Optional[float] = None
    last_answer: Optional[float] = None  # the last probe the head's API took at all (even a failure)
    gave_up_at: Optional[float] = None
    restarts: List[Dict[str, Any]] = field(default_factory=list)   # the last KEEP_RESTARTS
    # the container's last start: its phases (startup_log.phases), started_epoch and complete
    startup: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "State":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass(frozen=True)
class Decision:
    state: State
    action: str                          # none | restart | start | wait (a follower's delay)
    reason: str
    delay: float = 0


def grace_for(restarts_in_row: int, policy: Policy) -> float:
    """The load's grace after this many watchdog restarts in a row: the base grace for
    any start, multiplied by the back-off factor for each further restart, capped."""
    factor = policy.backoff_factor ** max(0, restarts_in_row - 1)
    return min(policy.grace * factor, max(policy.grace, policy.grace_max))


def decide(prev: State, probe: Probe, container: Container, now: float, policy: Policy,
           follower: bool = False, head_started: Optional[float] = None, delayed: bool = False) -> Decision:
    """The new state and what to do about this node's container (pure)."""
    s = replace(prev, last_probe={"time": probe.time, "ok": probe.ok, "detail": probe.detail,
                                  "latency_s": probe.latency, "answered": probe.answered},
                restarts=list(prev.restarts))
    if not probe.refused:
        s.last_answer = probe.time
    if probe.ok:
        s.state, s.consecutive_failures, s.restarts_in_row, s.gave_up_at = "ok", 0, 0, None
        s.last_success = probe.time
        if prev.consecutive_failures or prev.state != "ok":
            return Decision(s, "none", "recovered after %d failed probes and %d restarts in a row"
                            % (prev.consecutive_failures, prev.restarts_in_row))
        return Decision(s, "none", "serving")
    s.consecutive_failures += 1
    failures = "failure %d of %d" % (s.consecutive_failures, policy.failures_before_restart)
    if prev.state == "gave_up":
        s.state = "gave_up"
        return Decision(s, "none", "GAVE UP after %d restarts in a row; %s; no restart until a probe succeeds "
                        "or the status file is removed" % (prev.restarts_in_row, failures))
    if container.error:
        s.state = "failing"
        return Decision(s, "none", "%s; docker did not answer (%s): no action" % (failures, container.error))
    if not container.exists:
        s.state = "failing"
        return Decision(s, "none", "%s; no container to restart (Ansible creates it)" % failures)
    if container.stopped_on_purpose:
        s.state = "failing"
        return Decision(s, "none", "%s; the container was stopped on purpose (docker stop, or Ansible restarting the "
                        "group in order): the watchdog starts nothing its restart policy keeps stopped" % failures)
    age = now - container.started_at if container.started_at else None
    grace = grace_for(prev.restarts_in_row, policy)
    # The grace is the load's budget: a container that has served since its last start has loaded,
    # and a failure now is a fault. So a grace as long as Ansible's own wait for a load (which it
    # must be, or the watchdog restarts a node that a rollout still waits for) costs no heal time.
    loaded = (container.started_at is not None and prev.last_success is not None
              and prev.last_success >= container.started_at)
    stale = (follower and policy.stale_margin > 0 and head_started is not None and container.started_at is not None
             and head_started > container.started_at + policy.stale_margin)
    # The cluster served with this follower in it and the head's API is down now: the head restarted (docker,
    # its watchdog, a crash), and the group this follower belonged to is gone. A fresh head waits for fresh
    # followers, so this one restarts to join it. A follower that has not served since its own start belongs
    # to no group yet: vLLM keeps it waiting for a head's handshake, and it joins the next head that starts.
    # Restarting it then would tear that head's group apart as it forms (the DP rejoin race), so it keeps
    # its grace.
    head_gone = follower and probe.refused and loaded
    if stale:
        why = ("stale follower: the head's process started %ds after this container, so this rank belongs to a "
               "group that no longer exists" % (head_started - container.started_at))
    elif head_gone:
        # through the follower delay, then judged again on a fresh read of the container: when
        # Ansible is restarting the group (a rollout, a converge) it has recreated this follower by
        # then, and a restart from here would race its stop-remove-create
        why = ("the head's API went down after the cluster served with this follower: the group it belonged to is "
               "gone, and a restarted head waits for fresh followers")
    elif container.running and age is not None and age < grace and not loaded:
        s.state = "grace"
        return Decision(s, "none", "%s; container started %ds ago, within its %ds grace" % (failures, age, grace))
    elif s.consecutive_failures < policy.failures_before_restart:
        s.state = "failing"
        return Decision(s, "none", failures)
    else:
        why = "%d consecutive failed probes" % s.consecutive_failures
    if prev.restarts_in_row >= policy.max_restarts:
        s.state, s.gave_up_at = "gave_up", now
        return Decision(s, "none", "GIVING UP: %s after %d restarts in a row without a good probe; no restart until a "
                        "probe succeeds or the status file is removed" % (why, prev.restarts_in_row))
    if follower and not delayed and not stale and policy.follower_delay > 0:
        s.state = "restarting"
        return Decision(s, "wait", "%s; a follower waits %ds so that the head restarts first"
                        % (why, policy.follower_delay), delay=policy.follower_delay)
    action = "restart" if container.running else "start"
    s.state = "restarting"
    s.restarts_in_row += 1
    s.restarts_total += 1
    s.restarts = (s.restarts + [{"time": now, "action": action, "reason": why}])[-KEEP_RESTARTS:]
    return Decision(s, action, "%s: %s (restart %d of at most %d in a row; next grace %ds)"
                    % (why, action, s.restarts_in_row, policy.max_restarts, grace_for(s.restarts_in_row, policy)))


# ---- probe ------------------------------------------------------------------------------------

def _which(i: int, count: int) -> str:
    return "rank %d" % i if count > 1 else "request"


def probe(endpoint: str, model: str, api_key: Optional[str], requests: int, timeout: float, max_tokens: int,
          clock: Callable[[], float] = time.time) -> Probe:
    """`requests` concurrent greedy generations, above 1 one per data-parallel rank, each sent to
    its rank (vLLM's X-data-parallel-rank header); each must answer 200 with text within
    `timeout` seconds. `refused` when every request found nothing listening."""
    started = clock()

    def one(rank: Optional[int]) -> Tuple[bool, str, float, bool]:
        """(answered, why not, seconds, connection refused)"""
        t0 = time.monotonic()
        try:
            status, body = health.chat(endpoint, model, api_key, timeout, max_tokens, rank=rank)
        except (urllib.error.URLError, socket.timeout, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            refused = isinstance(reason, ConnectionRefusedError)
            if isinstance(reason, (socket.timeout, TimeoutError)):
                reason = "no answer within %gs" % timeout
            return False, str(reason), time.monotonic() - t0, refused
        text = health.answer(body) if status == 200 else None
        if text is None:
            return False, "answered %s: %s" % (status, str(body)[:160]), time.monotonic() - t0, False
        if not text.strip():
            return False, "answered 200 with no text", time.monotonic() - t0, False
        return True, "", time.monotonic() - t0, False

    results = health.each_rank(requests, one, timeout + 1)
    problems = []
    for i, r in enumerate(results):
        if r is None:
            problems.append("%s: no answer within %gs" % (_which(i, len(results)), timeout))
        elif not r[0]:
            problems.append("%s: %s" % (_which(i, len(results)), r[1]))
    answered = [r[2] for r in results if r is not None and r[0]]
    latency = round(max(answered), 3) if answered else None
    if problems:
        return Probe(False, "%d of %d requests failed: %s" % (len(problems), len(results), "; ".join(problems)),
                     latency, started, refused=all(r is not None and r[3] for r in results), answered=len(answered))
    return Probe(True, "%d of %d requests answered, slowest %.2fs" % (len(results), len(results), latency or 0),
                 latency, started, answered=len(answered))


# ---- docker -----------------------------------------------------------------------------------

def run_command(argv: List[str]) -> Tuple[int, str, str]:
    try:
        # a script the node runs under bare python3 (the watchdog timer), not a module: no AnsibleModule here
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)  # pylint: disable=ansible-bad-function
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, "", str(exc)
    return done.returncode, done.stdout, done.stderr


class Docker:
    def __init__(self, binary: str = "docker", runner: Runner = run_command) -> None:
        self.binary, self.runner = binary, runner

    def inspect(self, name: str) -> Container:
        rc, out, err = self.runner([self.binary, "inspect", "--type", "container", name])
        if rc != 0:
            if "no such" in (err + out).lower():
                return Container(exists=False)
            return Container(exists=False, error=(err or out).strip()[:200] or "exit %d" % rc)
        try:
            read = node_state.parse_container_inspect(out)
        except (ValueError, LookupError, TypeError, AttributeError) as exc:
            return Container(exists=False, error="unreadable docker inspect output: %s" % exc)
        # a container docker is restarting has a process to restart; only a stopped one needs `docker start`
        running = read["running"] or read["status"] in ("restarting", "paused")
        return Container(exists=True, running=running, started_at=read["started_at"],
                         stopped_on_purpose=not running and read.get("restart_policy") in ("always", "unless-stopped"))

    def act(self, action: str, name: str) -> Optional[str]:
        """Run `docker restart|start name`; the error, or None."""
        rc, out, err = self.runner([self.binary, action, name])
        return None if rc == 0 else ((err or out).strip()[:200] or "exit %d" % rc)


# ---- files ------------------------------------------------------------------------------------

def _iso(stamp: Optional[float]) -> Optional[str]:
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if stamp else None


def status_document(state: State, decision: Decision, cfg: Dict[str, Any], now: float) -> Dict[str, Any]:
    """What the status file holds: the state the next run reads, and where it came from."""
    doc = asdict(state)
    doc.update(updated=now, updated_iso=_iso(now), last_action={"time": now, "action": decision.action,
                                                                "reason": decision.reason},
               cluster=cfg.get("cluster"), rank=cfg.get("rank"), role=cfg.get("role"),
               endpoint=cfg.get("endpoint"), container=cfg.get("container"))
    return doc


def _label(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def weight_cache_up(url: Optional[str], timeout: float = 3.0) -> Optional[int]:
    """1 when the weight-cache daemon at `url` answers its /health (health.probe without a model name), 0 otherwise,
    None without the cache. It is never restarted here: beside a running vLLM it would load a second copy of the
    weights (the next converge starts it)."""
    if not url:
        return None
    return int(health.probe(url, None, timeout=timeout)["ready"])


def render_prom(state: State, cfg: Dict[str, Any], weight_cache: Optional[int] = None) -> str:
    """node_exporter textfile-collector format."""
    labels = 'cluster="%s",rank="%s",role="%s"' % tuple(_label(cfg.get(k, "")) for k in ("cluster", "rank", "role"))
    probe_ = state.last_probe or {}
    metrics = [
        ("up", "gauge", "1 when the last probe of the cluster's API generated text on every request.",
         1 if probe_.get("ok") else 0),
        ("consecutive_failures", "gauge", "Failed probes since the last good one.", state.consecutive_failures),
        ("restarts_total", "counter", "Container restarts by the watchdog.", state.restarts_total),
        ("restarts_in_row", "gauge", "Restarts by the watchdog since the last good probe.", state.restarts_in_row),
        ("last_probe_timestamp_seconds", "gauge", "When the last probe started (epoch).", probe_.get("time") or 0),
        ("last_probe_latency_seconds", "gauge", "The slowest answered request of the last probe (NaN: none answered).",
         probe_.get("latency_s")),
        # a dead DP follower leaves the head's /metrics up with its engine's last values: only a probe of
        # each rank shows the engine is gone
        ("ranks_answered", "gauge", "Data-parallel ranks that generated text in the last probe (NaN: not probed).",
         probe_.get("answered")),
        ("gave_up", "gauge", "1 when the watchdog stopped restarting (it needs a good probe or an operator).",
         1 if state.state == "gave_up" else 0),
    ]
    lines = []
    for name, kind, text, value in metrics:
        full = "inferops_vllm_watchdog_" + name
        shown = "NaN" if value is None else repr(float(value)) if isinstance(value, float) else str(value)
        lines += ["# HELP %s %s" % (full, text), "# TYPE %s %s" % (full, kind), "%s{%s} %s" % (full, labels, shown)]
    full = "inferops_vllm_watchdog_state"
    lines += ["# HELP %s The watchdog's state (1 for the current one)." % full, "# TYPE %s gauge" % full]
    lines += ['%s{%s,state="%s"} %d' % (full, labels, name, int(state.state == name))
              for name in ("ok", "failing", "grace", "restarting", "gave_up")]
    if weight_cache is not None:
        full = "inferops_vllm_weight_cache_up"
        lines += ["# HELP %s 1 when the node's weight-cache daemon answers its /health; 0: vLLM's next start reads the "
                  "weights from disk." % full, "# TYPE %s gauge" % full, "%s{%s} %d" % (full, labels, weight_cache)]
    return "\n".join(lines + startup_prom(state.startup, labels)) + "\n"


def startup_prom(startup: Dict[str, Any], labels: str) -> List[str]:
    """The last start's series: when it began, whether it is complete, and each phase the log showed."""
    if not startup.get("started_epoch"):
        return []
    lines = ["# HELP inferops_vllm_startup_started_timestamp_seconds When the vLLM container last started (epoch).",
             "# TYPE inferops_vllm_startup_started_timestamp_seconds gauge",
             "inferops_vllm_startup_started_timestamp_seconds{%s} %s" % (labels, repr(float(startup["started_epoch"]))),
             "# HELP inferops_vllm_startup_complete 1 once the last start's phases are all read (the cluster served).",
             "# TYPE inferops_vllm_startup_complete gauge",
             "inferops_vllm_startup_complete{%s} %d" % (labels, int(bool(startup.get("complete"))))]
    for key, name, text in (("image_pulled_at", "image_pulled", "the node first had the image it runs"),
                            ("weights_staged_at", "weights_staged", "the node verified the weights it serves")):
        stamp = node_state.docker_time(startup.get(key))
        if stamp is not None:
            full = "inferops_vllm_startup_%s_timestamp_seconds" % name
            lines += ["# HELP %s When %s (epoch; its record)." % (full, text), "# TYPE %s gauge" % full,
                      "%s{%s} %s" % (full, labels, repr(float(stamp)))]
    phases = startup.get("phases") or {}
    if phases:
        lines += ["# HELP inferops_vllm_startup_phase_seconds Seconds from the container's last start to the end of "
                  "each startup phase its vLLM log shows (docs/startup.md).",
                  "# TYPE inferops_vllm_startup_phase_seconds gauge"]
        lines += ['inferops_vllm_startup_phase_seconds{%s,phase="%s"} %s' % (labels, name, repr(float(p["after_s"])))
                  for name, p in phases.items()]
    if startup.get("weights_from"):   # vllm_weight_cache: mapped from the daemon (1) or read from the disk (0)
        lines += ["# HELP inferops_vllm_startup_weights_from_cache 1 when the last start mapped its weights from the "
                  "weight-cache daemon, 0 when a rank read them from disk.",
                  "# TYPE inferops_vllm_startup_weights_from_cache gauge",
                  "inferops_vllm_startup_weights_from_cache{%s} %d" % (labels, int(startup["weights_from"] == "weight cache"))]
    return lines


def startup_after(prev: Dict[str, Any], container: Container, serving: bool,
                  read: Callable[[float], Dict[str, Any]]) -> Dict[str, Any]:
    """The startup record after this run: the last one while it is complete for the same start, else the log
    read again. A start is complete once its API said it was ready or the cluster served with it."""
    if not container.exists or not container.started_at:
        return prev
    if prev.get("started_epoch") == container.started_at and prev.get("complete"):
        return prev
    record = dict(read(container.started_at), started_epoch=container.started_at)
    record["complete"] = bool(record.get("ready")) or serving
    return record


def write_atomic(path: str, text: str, mode: int = 0o644) -> None:
    """Readers (node_exporter, an operator) never see half a file."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def load_state(path: str) -> State:
    try:
        with open(path, encoding="utf-8") as fh:
            return State.from_dict(json.load(fh))
    except (OSError, ValueError, TypeError):
        return State()


def api_key(env_file: Optional[str], name: Optional[str]) -> Optional[str]:
    """The API key from the node's env file (KEY=VALUE lines)."""
    if not env_file or not name:
        return None
    try:
        with open(env_file, encoding="utf-8") as fh:
            for line in fh:
                key, sep, value = line.strip().partition("=")
                if sep and key.strip() == name:
                    return value
    except OSError:
        return None
    return None


def policy_from(cfg: Dict[str, Any]) -> Policy:
    return Policy(**{k: cfg[k] for k in Policy.__dataclass_fields__ if k in cfg})


# ---- main -------------------------------------------------------------------------------------

def run_once(cfg: Dict[str, Any], runner: Runner = run_command, clock: Callable[[], float] = time.time,
             sleep: Callable[[float], None] = time.sleep, reader: LogReader = startup_log.read_lines) -> Decision:
    """One watchdog pass: probe, decide, act, record."""
    policy = policy_from(cfg)
    follower = int(cfg.get("rank", 0)) != 0
    docker = Docker(cfg.get("docker", "docker"), runner)
    prev = load_state(cfg["status_file"])
    result = probe(cfg["endpoint"], cfg["model"], api_key(cfg.get("env_file"), cfg.get("api_key_env")),
                   max(1, int(cfg.get("data_parallel") or 1)), float(cfg.get("probe_timeout", 30)),
                   int(cfg.get("max_tokens", 4)), clock)
    head_started = None
    if follower and not result.ok and policy.stale_margin > 0:
        try:
            head_started = health.metric(cfg["endpoint"], "process_start_time_seconds", 5)
        except (urllib.error.URLError, socket.timeout, OSError, ValueError):
            head_started = None
    # docker is asked only when the probe failed or the last start is not read whole: a serving cluster costs
    # one probe per run
    startup_done = bool(prev.startup.get("complete"))
    container = Container(exists=True) if result.ok and startup_done else docker.inspect(cfg["container"])
    decision = decide(prev, result, container, clock(), policy, follower, head_started)
    if decision.action == "wait":
        sleep(decision.delay)
        container = docker.inspect(cfg["container"])     # it may have been started meanwhile
        decision = decide(prev, result, container, clock(), policy, follower, head_started, delayed=True)
        decision = replace(decision, reason="waited the follower delay (%ds) so that the head restarts first; %s"
                           % (policy.follower_delay, decision.reason))
    if decision.action in ("restart", "start"):
        error = docker.act(decision.action, cfg["container"])
        if error:
            decision = replace(decision, reason="%s; docker %s FAILED: %s" % (decision.reason, decision.action, error))
            decision.state.restarts[-1]["error"] = error
    records = cfg.get("records") or {}

    def read_start(started: float) -> Dict[str, Any]:
        return dict(startup_log.read(docker.binary, cfg["container"], started, timeout=STARTUP_READ_TIMEOUT,
                                     reader=reader),
                    **startup_log.recorded(records.get("image", ""), records.get("model", "")))
    # a container it just (re)started has a new start: the next run reads that one
    decision.state.startup = (prev.startup if decision.action in ("restart", "start")
                              else startup_after(prev.startup, container, result.ok, read_start))
    now = clock()
    write_atomic(cfg["status_file"], json.dumps(status_document(decision.state, decision, cfg, now), indent=2) + "\n")
    if cfg.get("prom_file"):
        write_atomic(cfg["prom_file"], render_prom(decision.state, cfg, weight_cache_up(cfg.get("weight_cache_url"))))
    return decision


def say(line: str, stream: Any = None) -> None:
    """One line to the journal (stdout under systemd)."""
    out = stream or sys.stdout
    out.write(line + "\n")
    out.flush()


def log_line(cfg: Dict[str, Any], decision: Decision) -> str:
    p = decision.state.last_probe
    return ("vllm-watchdog: cluster=%s rank=%s state=%s action=%s probe=%s (%s): %s%s"
            % (cfg.get("cluster"), cfg.get("rank"), decision.state.state, decision.action,
               "ok" if p.get("ok") else "FAILED", p.get("detail"), decision.reason,
               "" if p.get("ok") else pd_impact(cfg.get("pd"))))


def pd_impact(pd: Any) -> str:
    """What a failing P/D side does to its deployment: every request through the router needs both sides."""
    if not isinstance(pd, dict) or not pd.get("deployment"):
        return ""
    if pd.get("role") == "prefill":
        return ("; this is the prefill side of P/D deployment %s: requests through its router stall (no KV is "
                "computed for the decode side) until it serves again" % pd["deployment"])
    return ("; this is the decode side of P/D deployment %s: requests through its router fail until it serves again"
            % pd["deployment"])


def main(argv: Optional[List[str]] = None, runner: Runner = run_command, clock: Callable[[], float] = time.time,
         sleep: Callable[[float], None] = time.sleep, reader: LogReader = startup_log.read_lines) -> int:
    parser = argparse.ArgumentParser(description="Probe the vLLM cluster's API; restart this node's container "
                                                 "after consecutive failures.")
    parser.add_argument("--config", default="/etc/inferops-vllm/watchdog.json")
    args = parser.parse_args(argv)
    try:
        with open(args.config, encoding="utf-8") as fh:
            cfg = json.load(fh)
    except (OSError, ValueError) as exc:
        say("vllm-watchdog: cannot read %s: %s" % (args.config, exc), sys.stderr)
        return 2
    decision = run_once(cfg, runner, clock, sleep, reader)
    say(log_line(cfg, decision))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

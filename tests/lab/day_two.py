"""Day two on the lab: a rolling upgrade under load (image and weights' revision), an upgrade that
must roll back (both, from disk), a rolling restart, a killed follower healed by the watchdog in each multi-node shape,
and a re-run of site.yml after a fault. Every check is on the resulting state (containers, digests,
router workers, answers); the figures (latency, heal time, re-run vs serving time)
go to a JSON file for docs/benchmarks.md.

Runs on the machine that hosts the lab nodes (scripts/lab.sh test), after site.yml.
usage: day_two.py --variant DIGEST_REF --broken DIGEST_REF --json OUT [--only STEP ...]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import yaml

import faults
import image_ref  # plugins/module_utils/node, on the path through lab_nodes
import node_state  # plugins/module_utils/node, on the path through lab_nodes
import health  # plugins/module_utils/node, on the path through lab_nodes
from lab_nodes import (CLUSTERS, INVENTORY, KEY, ROOT, ROUTER, Client, container, docker, generate, http, image_of,
                       kill_vllm, router_workers, serves, wait_until_serving)

sys.path.insert(0, str(ROOT / ".collections"))   # the collection as Ansible finds it (ansible.cfg)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import kv_transfer  # noqa: E402

PROMETHEUS = "http://127.0.1.1:18490"   # role vllm_prometheus on lab-node1 (inventories/lab)
ENGINES_MISSING = "InferopsVllmEnginesMissing"
STEPS = ["upgrade", "rollback", "restart", "heal", "rerun", "pd"]
# What each step may take on a machine that runs slow (the longest seen in CI, 2026-12-06, times 1.6), and the lab's
# teardown after them: a step starts only where it can end before INFEROPS_DEADLINE (.ci/run sets it), and the
# steps after one left out are left out too, since each builds on the state the one before left.
STEP_SECONDS = {"upgrade": 1450, "rollback": 420, "restart": 160, "heal": 320, "rerun": 380, "pd": 580}
TEARDOWN_SECONDS = 120
# tests/lab/faults.py, one trial per shape, one after the other: the TP follower's node restarted, then the DP
# follower's vLLM killed (the follower docker brings back must join the head its watchdog restarts: the DP rejoin
# race; and the fewer-engines alert must fire). Never both at once: with both replicas down the router has no worker
# to send a request to, and a fast machine's overlapping outages cost 8 requests in one CI run.
# scripts/bench.sh heal runs every fault, N times each.
HEAL_ROUNDS = (("tp_follower_rebooted",), ("dp_follower_killed",))
REPORTS = ""   # --reports/rollout
# The Hub stand-in's commits of inferops/tiny-k3 (tests/harness/lib.sh build_hub_repos): the lab pins the
# first; the upgrade moves to the second, the failed upgrade tries the third. Weights: every revision shares
# the same blobs (only a README changes), so a move fetches a few bytes.
REVISIONS = [os.environ.get("INFEROPS_HUB_TINY_K3_REVISION" + suffix, "") for suffix in ("", "_2", "_3")]
SERVED = {"revision": REVISIONS[0]}   # what the lab's inventory names; the upgrade moves it
RECORD = "/var/lib/inferops-vllm/model.json"
FABRIC_RECORD = "/var/lib/inferops-vllm/fabric.json"   # on each cluster's head (roles/fabric_check)
CONFIG_FILE, ENV_FILE = "/etc/inferops-vllm/vllm.yaml", "/etc/inferops-vllm/vllm.env"
SNAPSHOTS = "/srv/models/huggingface/hub/models--inferops--tiny-k3/snapshots"
PD_INVENTORY = Path(__file__).with_name("pd")   # the P/D deployment of step pd
PD_DECODE = "http://127.0.1.3:18310"            # its decode side's API


def log(msg: str) -> None:
    print("=== %s  day two: %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise SystemExit("day two FAILED: " + msg)


def play(playbook: str, *extra: str, log_name: str, interrupt_at: str = "", interrupt_after: float = 0,
         inventory: Path = INVENTORY) -> tuple[int, float, str]:
    """ansible-playbook on the lab; its log is kept. With interrupt_at, Ctrl-C as a terminal sends it (SIGINT to
    the whole process group) interrupt_after seconds after the first task whose title contains it starts."""
    start = time.monotonic()
    # task timings in the log, to see where a rollout spends its time
    env = dict(os.environ, ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks")
    proc = subprocess.Popen(["ansible-playbook", "-i", str(inventory), str(ROOT / "playbooks" / playbook), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=env,
                            start_new_session=True)
    lines, cut = [], False
    assert proc.stdout is not None

    def ctrl_c() -> None:
        # Ctrl-C again until the run ends, as a user would: a SIGINT that lands while CPython runs a weakref
        # callback raises its KeyboardInterrupt there, where it is printed and dropped (seen once in CI)
        time.sleep(interrupt_after)
        for _press in range(5):
            try:
                os.killpg(proc.pid, signal.SIGINT)
            except ProcessLookupError:
                return
            time.sleep(10)   # an interrupted run has ended by then
            if proc.poll() is not None:
                return

    for line in proc.stdout:
        lines.append(line)
        if interrupt_at and not cut and line.startswith("TASK [") and interrupt_at in line:
            threading.Thread(target=ctrl_c, daemon=True).start()
            cut = True
            log("%s: Ctrl-C %g s after %s" % (playbook, interrupt_after, line.strip()))
    try:
        proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    out = "".join(lines)
    seconds = time.monotonic() - start
    logs = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm")) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / log_name).write_text(out)
    recap = out[out.find("PLAY RECAP"):] if "PLAY RECAP" in out else out[-3000:]
    if proc.returncode != 0 and not interrupt_at:   # CI keeps only the tail of the output: the failures go in it
        recap = failures(out) + recap
    log("%s %s: rc=%d in %.0f s (log: %s)\n%s" % (playbook, " ".join(extra), proc.returncode, seconds, logs / log_name, recap))
    if interrupt_at:
        check(cut, "%s never reached a task titled '%s': the interruption did not happen" % (playbook, interrupt_at))
        check(proc.returncode != 0, "%s interrupted at '%s' reported success" % (playbook, interrupt_at))
    return proc.returncode, seconds, out


def failures(out: str, limit: int = 6000) -> str:
    """Each failed result of a run's log, with its task's title: what a reader of CI's tail needs."""
    blocks, task, lines = [], "", out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("TASK ["):
            task = line
        elif line.startswith(("fatal: [", "failed: [")):
            end = next((j for j in range(i + 1, len(lines)) if not lines[j].strip()), len(lines))
            blocks.append("\n".join([task] + lines[i:end]))
    text = "\n".join(blocks)
    return (text[:limit] + "\n[...]\n" if len(text) > limit else text + "\n") if text else ""


def node_story(nodes: list[str]) -> str:
    """Each node's container state and its watchdog's last lines, for a failure's message."""
    out = []
    for node in nodes:
        state = docker(node, "docker", "ps", "-a", "--format", "{{.Names}} {{.Status}}", check_rc=False)
        out.append("%s: %s" % (node, state.strip()))
        out.append(docker(node, "journalctl", "-u", "vllm-watchdog", "-n", "12", "--no-pager", "-o", "cat",
                          check_rc=False).strip())
    return "\n".join(out)


def weights_args() -> list[str]:
    return ["-e", "vllm_model_revision=" + SERVED["revision"]]


def revision_of(node: str) -> str:
    """The weights' commit in the config file the node's vLLM runs with (its argv is --config FILE)."""
    for line in docker(node, "cat", "/etc/inferops-vllm/vllm.yaml").splitlines():
        if line.startswith("revision:"):
            return line.split(":", 1)[1].strip().strip('"')
    return ""


def model_record(node: str) -> dict:
    return json.loads(docker(node, "cat", RECORD))


def fabric_records() -> dict[str, dict]:
    """Each cluster's record of its last fabric check, on its head: rewritten by every check that runs."""
    return {name: json.loads(docker(nodes[0], "cat", FABRIC_RECORD)) for name, (_endpoint, nodes) in CLUSTERS.items()}


def whole(when: str) -> None:
    """After a run that finished what an interrupted one began: both clusters behind the router and serving; on
    every node the container runs its whole launch (started after its config file was written, created with its
    env file's environment: no launch half applied), the image
    and model records name what it runs, and no launch-check container is left."""
    check(router_workers() == sorted(e for e, _nodes in CLUSTERS.values()), "%s: the router lists %s" % (when, router_workers()))
    for endpoint, nodes in CLUSTERS.values():
        for node in nodes:
            left = [n for n in docker(node, "docker", "ps", "-a", "--format", "{{.Names}}").split() if n.endswith("-launch-check")]
            check(not left, "%s: %s keeps the container %s" % (when, node, left))
            running = container(node)
            written = int(docker(node, "stat", "-c", "%Y", CONFIG_FILE))
            started = node_state.docker_time(running["State"]["StartedAt"]) or 0.0
            check(started + 1 >= written, "%s: %s's vLLM started %d s before its config file was last written: it runs "
                  "a launch half applied" % (when, node, written - started))
            env = [line for line in docker(node, "cat", ENV_FILE).splitlines() if line and not line.startswith("#")]
            lacks = sorted(line.split("=", 1)[0] for line in env if line not in running["Config"]["Env"])
            check(not lacks, "%s: %s's vLLM runs without %s of its env file: it runs a launch half applied"
                  % (when, node, lacks))
            record = json.loads(docker(node, "cat", "/var/lib/inferops-vllm/image.json"))
            check(record["current"] == running["Config"]["Image"], "%s: %s runs %s, its image record names %s"
                  % (when, node, running["Config"]["Image"], record["current"]))
            weights = model_record(node)["current"]["revision"]
            check(weights == revision_of(node), "%s: %s serves revision %s, its model record names %s"
                  % (when, node, revision_of(node), weights))
        check(serves(endpoint), "%s: %s does not serve" % (when, endpoint))


def step_upgrade(variant: str, figures: dict) -> None:
    """Ctrl-C during the drain, then during the move (the image's launch check running), then the same command
    to the end: every request through the router answered throughout."""
    log("rolling upgrade to %s under a steady client through the router, interrupted twice" % variant)
    check(router_workers() == sorted(e for e, _nodes in CLUSTERS.values()), "the router does not list both replicas")
    before, revision = SERVED["revision"], REVISIONS[1]
    args = ["-e", "vllm_image=" + variant, "-e", "vllm_model_revision=" + revision, "-e", "vllm_rollout_report_dir=" + REPORTS]
    cuts = {}
    with Client() as client:
        # a baseline before the upgrade: ten answers (about 10 s on the lab), or 20 s when fewer come
        started = time.time()
        while len(client.samples) < 10 and time.time() - started < 20:
            time.sleep(0.5)
        begin = time.time()
        # the move's cut falls while the image's vLLM checks the launch (a container that runs for a minute)
        for where, task, after in (("drain", "vllm_rollout : Set the cluster's endpoint on each router: absent", 0),
                                   ("move", "vllm_serve : Check the launch with the image's own vLLM", 15)):
            _rc, seconds, _out = play("upgrade.yml", *args, interrupt_at=task, interrupt_after=after,
                                      log_name="day2-upgrade-cut-%s.log" % where)
            cuts[where] = round(seconds)
        rc, seconds, _out = play("upgrade.yml", *args, log_name="day2-upgrade.log")
        end = time.time()
        time.sleep(2)
    check(rc == 0, "upgrade.yml failed (rc=%d)" % rc)
    SERVED["revision"] = revision
    for endpoint, nodes in CLUSTERS.values():
        for node in nodes:
            check(image_of(node) == variant, "%s runs %s after the upgrade, not %s" % (node, image_of(node), variant))
            serving = revision_of(node)
            check(serving == revision, "%s serves revision %s after the upgrade, not %s" % (node, serving, revision))
            record = model_record(node)
            check(record["current"]["revision"] == revision and record["previous"]["revision"] == before,
                  "%s's model record after the upgrade: %s" % (node, record))
            # the revision before stays on disk, for an instant rollback
            docker(node, "test", "-d", "%s/%s" % (SNAPSHOTS, before))
    whole("after the interrupted upgrade was run again")
    report = json.loads((Path(REPORTS) / "rollout.json").read_text())
    check([c["outcome"] for c in report["clusters"]] == ["upgraded", "upgraded"], "rollout report: %s" % report["summary"])
    before_figures, during = client.figures(started, begin), client.figures(begin, end)
    figures["upgrade"] = {"seconds": round(seconds), "interrupted_runs_s": cuts, "before": before_figures, "during": during}
    log("upgrade: %.0f s after runs cut in the drain and the move (%s); before %s; during %s"
        % (seconds, cuts, before_figures, during))
    check(during["failed"] == 0, "%d requests through the router failed during the upgrade: %s"
          % (during["failed"], during["errors"]))


def step_rollback(variant: str, broken: str, figures: dict) -> None:
    log("upgrade to a digest whose vLLM cannot start (%s) and a new revision: must roll both back and stop" % broken)
    served, revision = SERVED["revision"], REVISIONS[2]
    rc, seconds, out = play("upgrade.yml", "-e", "vllm_image=" + broken, "-e", "vllm_model_revision=" + revision,
                            "-e", "vllm_rollout_report_dir=" + REPORTS, log_name="day2-rollback.log")
    check(rc != 0, "upgrade.yml to a broken image reported success")
    report = json.loads((Path(REPORTS) / "rollout.json").read_text())
    outcomes = {c["name"]: c["outcome"] for c in report["clusters"]}
    check(outcomes == {"lab": "rolled back", "lab_dp": "not attempted"}, "rollout outcomes %s" % outcomes)
    for endpoint, nodes in CLUSTERS.values():
        for node in nodes:
            check(image_of(node) == variant, "%s runs %s after the rollback, not %s" % (node, image_of(node), variant))
            serving = revision_of(node)
            check(serving == served, "%s serves revision %s after the rollback, not %s" % (node, serving, served))
        check(serves(endpoint), "%s does not serve after the rollback" % endpoint)
    check(router_workers() == sorted(e for e, _nodes in CLUSTERS.values()), "the rolled-back replica is not back behind the router")
    # every node (rolled back, or never reached) records the digest it runs and the one that failed
    for node in [n for _e, nodes in CLUSTERS.values() for n in nodes]:
        record = json.loads(docker(node, "cat", "/var/lib/inferops-vllm/image.json"))
        check(record["current"] == variant and broken in record["failed"] and not record["previous"],
              "%s's image record after the rollback: %s" % (node, record))
        weights = model_record(node)
        check(weights["current"]["revision"] == served and weights["failed"] == [revision] and not weights["previous"],
              "%s's model record after the rollback: %s" % (node, weights))
    # the image accepted the launch that the cluster went back to during the upgrade: no second check
    # (vllm_serve's launch-checks.json); only the broken digest's launch was checked
    checks = sum(1 for line in out.splitlines()
                 if "vllm_serve/tasks/check.yml for " in line and "lab-node1" in line.split(" for ", 1)[1].split(", "))
    check(checks == 1, "the rollback checked lab-node1's launch again (%d checks in this run)" % checks)
    figures["rollback"] = {"seconds": round(seconds), "summary": report["summary"]}
    log("rollback: %.0f s: %s" % (seconds, report["summary"]))
    # the same digest again is refused before any cluster stops, with the fix
    rc, _seconds, out = play("upgrade.yml", "-e", "vllm_image=" + broken, *weights_args(), "-e",
                             "vllm_rollout_report_dir=" + REPORTS, log_name="day2-refused.log")
    check(rc != 0 and "was rolled back on lab-node1" in out and "vllm_image_retry_failed=true" in out,
          "upgrade.yml to the digest that was just rolled back was not refused with the fix (rc=%d)" % rc)
    # and so is the revision, on the image that serves
    rc, _seconds, out = play("upgrade.yml", "-e", "vllm_image=" + variant, "-e", "vllm_model_revision=" + revision,
                             "-e", "vllm_rollout_report_dir=" + REPORTS, log_name="day2-refused-revision.log")
    check(rc != 0 and "was rolled back on this node" in out and "vllm_model_retry_failed=true" in out,
          "upgrade.yml to the revision that was just rolled back was not refused with the fix (rc=%d)" % rc)
    for endpoint, nodes in CLUSTERS.values():
        check(all(image_of(node) == variant and revision_of(node) == served for node in nodes) and serves(endpoint),
              "a refused upgrade touched %s" % endpoint)


def step_restart(variant: str, figures: dict) -> None:
    log("rolling restart of one cluster (--limit lab,vllm_routers): drained, restarted in order, put back")
    endpoint, nodes = CLUSTERS["lab"]
    before = {node: container(node)["State"]["StartedAt"] for node in nodes}
    rc, seconds, _out = play("rolling_restart.yml", "--limit", "lab,vllm_routers", *weights_args(),
                             "-e", "vllm_rollout_report_dir=" + REPORTS, log_name="day2-restart.log")
    check(rc == 0, "rolling_restart.yml failed (rc=%d)" % rc)
    after = {node: container(node)["State"]["StartedAt"] for node in nodes}
    check(all(before[n] != after[n] for n in nodes), "not every node of lab restarted: %s -> %s" % (before, after))
    # docker's StartedAt strings (RFC 3339, UTC) sort in time order
    check(after[nodes[0]] < after[nodes[1]], "the follower started before the head: %s" % after)
    # after a rollback, the digest the cluster runs: never the one that failed
    check(all(image_of(node) == variant for node in nodes), "the restart changed lab's image: %s"
          % {node: image_of(node) for node in nodes})
    report = json.loads((Path(REPORTS) / "rollout.json").read_text())
    check([c["outcome"] for c in report["clusters"]] == ["restarted"], "rollout report: %s" % report["summary"])
    check(serves(endpoint), "%s does not serve after the rolling restart" % endpoint)
    check(router_workers() == sorted(e for e, _nodes in CLUSTERS.values()), "the restarted replica is not back behind the router")
    figures["restart"] = {"seconds": round(seconds)}
    log("rolling restart: %.0f s" % seconds)


def prometheus(path: str, **params: str) -> dict:
    status, body = http("%s%s?%s" % (PROMETHEUS, path, urllib.parse.urlencode(params)), timeout=10)
    if status != 200 or not isinstance(body, dict):
        raise OSError("Prometheus answered %s: %s" % (status, body))
    return body["data"]


def alert_firing(alertname: str, cluster: str) -> bool:
    return any(a["labels"].get("alertname") == alertname and a["labels"].get("cluster") == cluster
               and a["state"] == "firing" for a in prometheus("/api/v1/alerts")["alerts"])


def wait_for_alert(alertname: str, cluster: str, firing: bool, deadline: float) -> float | None:
    """Seconds until Prometheus shows the alert firing (or no longer firing); None after the deadline."""
    start = time.monotonic()
    while time.monotonic() - start < deadline:
        try:
            if alert_firing(alertname, cluster) == firing:
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(2)
    return None


def firing_since(alertname: str, cluster: str, since: float) -> list[float]:
    """The epoch seconds since `since` at which Prometheus's own ALERTS series has the alert firing: an
    alert that fired between two looks at /api/v1/alerts is still on record."""
    selector = 'ALERTS{alertname="%s",cluster="%s",alertstate="firing"}' % (alertname, cluster)
    data = prometheus("/api/v1/query_range", query=selector, start="%.3f" % since, end="%.3f" % time.time(),
                      step="1")
    return [float(t) for series in data["result"] for t, _v in series["values"]]


def rule_inputs(cluster: str, since: float) -> dict:
    """Per series the rule reads, its values every 5 s since the kill: why the alert fired or did not."""
    queries = {"ranks_answered": 'max(inferops_vllm_watchdog_ranks_answered{cluster="%s"})' % cluster,
               "head_grace": 'max(inferops_vllm_watchdog_state{cluster="%s",role="head",state="grace"})' % cluster,
               "follower_grace": 'max(inferops_vllm_watchdog_state{cluster="%s",role="follower",state="grace"})'
               % cluster,
               "engines": 'count(count by (node, engine) (vllm:num_requests_running{cluster="%s"}))' % cluster}
    out = {}
    for name, query in queries.items():
        try:
            data = prometheus("/api/v1/query_range", query=query, start="%.3f" % since, end="%.3f" % time.time(),
                              step="5")
            out[name] = [v for series in data["result"] for _t, v in series["values"]]
        except (OSError, ValueError, KeyError) as exc:
            out[name] = "unreadable: %s" % exc
    return out


def step_heal(figures: dict) -> None:
    """One trial per shape (HEAL_ROUNDS) with the steady client through the router: each cluster serves again within
    3 minutes and the router loses at most 2 requests per fault. The DP trial also proves the fewer-engines alert:
    it fires between the fault and the heal, then resolves."""
    log("restart the TP follower's node, then kill the DP follower's vLLM; no operator")
    check(wait_for_alert(ENGINES_MISSING, "lab_dp", False, 60) is not None,
          "%s fires for lab_dp before its follower is killed" % ENGINES_MISSING)
    results: dict = {}
    alert: dict = {}
    with Client() as client:
        for names in HEAL_ROUNDS:
            for cluster in CLUSTERS:
                faults.ready(cluster)
            began = time.time()
            results.update(faults.trial_round([faults.FAULTS[name] for name in names], client))
            log("%s: %s" % (" and ".join(names), {name: results[name] for name in names}))
            if "dp_follower_killed" in names:
                # Prometheus's own record of the alert since the kill, and what the rule read (why it fired or not)
                fired = firing_since(ENGINES_MISSING, "lab_dp", began)
                resolved = wait_for_alert(ENGINES_MISSING, "lab_dp", False, 120)
                alert = {"fired_s": round(min(fired) - began) if fired else None, "firing_s": len(fired),
                         "resolved": resolved is not None, "seen": rule_inputs("lab_dp", began)}
    status = {name: json.loads(docker(nodes[0], "cat", "/var/lib/inferops-vllm/watchdog.json"))
              for name, (_e, nodes) in CLUSTERS.items()}
    figures["heal"] = {"trials": results, "engines_missing_alert": alert, "head_watchdogs": status}
    log("heal: %s; %s for lab_dp: %s" % ({n: r["seconds_to_serve"] for n, r in results.items()}, ENGINES_MISSING, alert))
    for name, result in results.items():
        missed = faults.problems(result)
        check(not missed, "%s (%s): %s" % (name, faults.FAULTS[name].what, "; ".join(missed)))
    check(alert["fired_s"] is not None, "%s did not fire for lab_dp between its follower's loss and the heal; the "
          "rule read: %s" % (ENGINES_MISSING, alert["seen"]))
    check(alert["resolved"], "%s for lab_dp still fires 2 minutes after the cluster healed" % ENGINES_MISSING)


def changed_tasks(out: str, hosts: list[str]) -> list[str]:
    """'task: host' for every change a run's log shows on these hosts."""
    found, task = [], ""
    for line in out.splitlines():
        if line.startswith("TASK ["):
            task = line[6:line.find("]")]
        elif line.startswith("changed: ["):
            host = line[10:].split("]")[0].split(" ")[0]
            if host in hosts:
                found.append("%s: %s" % (task, host))
    return found


def changed_hosts(out: str) -> dict[str, int]:
    """Per host, the changed count in a run's PLAY RECAP ({} when the run had none)."""
    recap = out[out.find("PLAY RECAP"):] if "PLAY RECAP" in out else ""
    return {line.split()[0]: int(line.split("changed=")[1].split()[0]) for line in recap.splitlines() if "changed=" in line}


def step_rerun(variant: str, figures: dict) -> None:
    """The TP follower killed, then site.yml with a new environment for cluster lab (an inventory layered over the
    lab's), cut with Ctrl-C as its containers are run, then the same command again: it returns only when the
    cluster serves, on the new launch everywhere. Neither run changes anything but that launch (vllm_serve on
    lab's nodes), though a node restarted in step heal: what a reboot undoes, the roles do not depend on."""
    log("kill the TP follower, run site.yml with a changed launch, Ctrl-C it during serve, run it again")
    endpoint, nodes = CLUSTERS["lab"]
    kill_vllm(nodes[1])
    checked = fabric_records()
    args = ["-i", str(Path(__file__).with_name("inventory-rerun.yml")), "--skip-tags", "smoke",
            "-e", "vllm_image=" + variant, *weights_args()]
    _rc, cut_seconds, cut_out = play("site.yml", *args, interrupt_at="vllm_serve : Run the vLLM container",
                                     log_name="day2-rerun-cut.log")
    checked_cut = fabric_records()
    start = time.monotonic()
    first_served: list[float] = []

    def watch():
        time.sleep(2)
        took = wait_until_serving(endpoint, 1200)
        if took is not None:
            first_served.append(time.monotonic() - start)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    rc, seconds, out = play("site.yml", *args, log_name="day2-rerun.log")
    serving_at_return = serves(endpoint)
    watcher.join(timeout=1200)
    others = [c for c in changed_tasks(cut_out + out, [n for _e, ns in CLUSTERS.values() for n in ns])
              if not (c.startswith("inferops.vllm.vllm_serve :") and c.rsplit(": ", 1)[1] in nodes)]
    figures["rerun"] = {"cut_run_s": round(cut_seconds), "site_yml_returned_s": round(seconds),
                        "cluster_served_s": round(first_served[0]) if first_served else None, "rc": rc,
                        "serving_at_return": serving_at_return, "changed": changed_hosts(out)}
    log("re-run: %s" % figures["rerun"])
    if rc != 0 or not serving_at_return:
        log("the cluster's nodes after the re-run:\n%s" % node_story(nodes))
    check(rc == 0, "site.yml after a killed follower and a cut run failed (rc=%d)" % rc)
    check(serving_at_return, "site.yml returned while the cluster did not serve")
    for node in nodes:
        check("INFEROPS_LAB_RERUN=1" in docker(node, "cat", "/etc/inferops-vllm/vllm.env"), "%s lacks the new launch" % node)
    whole("after the cut site.yml was run again")
    check(not others, "site.yml after a node restart changed more than lab's launch: %s" % others)
    # the fabric is proven again where what the check proved changed (another image; lab's launch), before the cut,
    # and only then: the run after the cut keeps those records
    checked_after = fabric_records()
    for name, before in checked.items():
        again = name == "lab" or image_ref.digest(before["image"]) != image_ref.digest(variant)
        cut = checked_cut[name]
        if again:
            check(cut["checked_at"] != before["checked_at"] and cut["passed"] is True
                  and image_ref.digest(cut["image"]) == image_ref.digest(variant),
                  "%s's fabric was not checked again with the new image and launch: %s" % (name, cut))
        else:
            check(cut == before, "%s's fabric was checked again though nothing it proves changed: %s" % (name, cut))
        check(checked_after[name] == cut, "the run after the cut checked %s's fabric again: %s" % (name, checked_after[name]))
    log("fabric: checked again by the cut run where the image or launch changed, kept by the run after it")


def decode_kv_tokens() -> float:
    """Prompt tokens whose KV the decode side (on lab-node3) took from the prefill side, read as the smoke test's
    kv_transfer suite reads them."""
    _status, text = health.request(PD_DECODE + "/metrics", KEY, None, 10, limit=None)
    return kv_transfer.counters(str(text))["external_kv_transfer"]


def step_pd(variant: str, figures: dict) -> None:
    """The lab's replicas torn down, then one prefill/decode deployment on two of its nodes (tests/lab/pd): a prefill
    instance on lab-node1, a decode instance on lab-node3, the router in P/D mode. site.yml deploys it with the plan's
    KV-transfer config and NIXL side channels and proves it: the smoke through the router passes only when the decode
    side took the prompts' KV from the prefill side (the kv_transfer suite)."""
    log("tear the lab's replicas down; deploy one P/D deployment (prefill lab-node1, decode lab-node3) with site.yml "
        "and smoke it through the router")
    rc, _seconds, out = play("teardown.yml", log_name="day2-pd-teardown.log")
    check(rc == 0, "teardown.yml failed (rc=%d): %s" % (rc, failures(out)))
    reports = Path(REPORTS).parent / "pd"
    # the lab's site-wide settings, which the P/D inventory shares, without its API key: the pinned vllm-router
    # sends none to P/D sides, so the plan refuses one (the sides are open on purpose, on the loopback)
    site = yaml.safe_load((INVENTORY / "group_vars/all/lab.yml").read_text())
    site.pop("vllm_api_key")
    site_file = reports / "lab-site-vars.json"
    site_file.parent.mkdir(parents=True, exist_ok=True)
    site_file.write_text(json.dumps(site))
    args = [arg for path in (site_file, INVENTORY / "group_vars/vllm_routers/router.yml",
                             INVENTORY / "group_vars/vllm_prometheus/prometheus.yml") for arg in ("-e", "@%s" % path)]
    args += ["-e", "vllm_image=" + variant, *weights_args(), "-e", "smoke_test_reports_root=%s" % reports,
             "-e", json.dumps({"smoke_test_suites": ["text"]})]
    rc, seconds, out = play("site.yml", *args, log_name="day2-pd.log", inventory=PD_INVENTORY)
    check(rc == 0, "site.yml on the P/D deployment failed (rc=%d): %s" % (rc, failures(out)))
    for node, address in (("lab-node1", "127.0.1.1"), ("lab-node3", "127.0.1.3")):
        env = docker(node, "cat", ENV_FILE).splitlines()
        check("VLLM_NIXL_SIDE_CHANNEL_HOST=%s" % address in env and "UCX_NET_DEVICES=lo" in env,
              "%s lacks its NIXL side channel or UCX device in %s" % (node, ENV_FILE))
    status, body = http(ROUTER + "/workers")
    kinds = sorted({w.get("worker_type") for w in body.get("workers", [])}) if isinstance(body, dict) else []
    check(status == 200 and kinds == ["decode", "prefill"], "the router is not in P/D mode: %s %s" % (status, body))
    verdict = json.loads((reports / "router-lab-node1" / "smoke.json").read_text())
    suite = next((s for s in verdict.get("suites", []) if s.get("name") == "kv_transfer"), None)
    check(verdict.get("passed") is True and suite is not None, "the smoke through the P/D router: %s"
          % verdict.get("failed_checks"))
    moved = suite["figures"]
    check(moved.get("external_kv_transfer_tokens", 0) > 0 and moved.get("failed_transfers") == 0,
          "the smoke through the P/D router passed without moving KV: %s" % moved)
    before = decode_kv_tokens()
    ok, took, why = generate(ROUTER, 60)
    after = decode_kv_tokens()
    check(ok and after > before, "a request through the P/D router: answered %s (%s), decode side's KV from the "
          "prefill side %s -> %s tokens" % (ok, why, before, after))
    status, rules = http(PROMETHEUS + "/api/v1/rules")
    names = {r.get("name") for g in (rules.get("data", {}).get("groups", []) if isinstance(rules, dict) else [])
             for r in g.get("rules", [])}
    check({"InferopsVllmKvNotMoving", "InferopsVllmPdSideDown"} <= names, "Prometheus lacks the P/D alerts: %s"
          % sorted(names))
    figures["pd"] = {"site_yml_s": round(seconds), "kv_transfer": moved, "request_s": round(took, 2)}
    log("P/D: site.yml %.0f s; through the router the decode side took %s prompt tokens' KV from the prefill side "
        "(%s bytes, %s failed transfers)"
        % (seconds, moved.get("external_kv_transfer_tokens"), moved.get("bytes_transferred"), moved.get("failed_transfers")))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", required=True)
    parser.add_argument("--broken", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--reports", required=True)
    parser.add_argument("--only", nargs="*", choices=STEPS, default=STEPS)
    args = parser.parse_args()
    check(all(REVISIONS), "INFEROPS_HUB_TINY_K3_REVISION, _2 and _3 are not all set (tests/harness/lib.sh build_hub_repos)")
    global REPORTS
    REPORTS = str(Path(args.reports) / "rollout")
    figures: dict = {"machine": {"cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}}
    runs = {"upgrade": lambda: step_upgrade(args.variant, figures),
            "rollback": lambda: step_rollback(args.variant, args.broken, figures),
            "restart": lambda: step_restart(args.variant, figures), "heal": lambda: step_heal(figures),
            "rerun": lambda: step_rerun(args.variant, figures), "pd": lambda: step_pd(args.variant, figures)}
    deadline = float(os.environ["INFEROPS_DEADLINE"]) if os.environ.get("INFEROPS_DEADLINE") else None
    left_out: list = []
    took: dict = {}   # each step's wall time, for the run's stage table (scripts/test.sh)
    try:
        for step in (s for s in STEPS if s in args.only):
            if left_out or (deadline is not None
                            and time.time() + STEP_SECONDS[step] + TEARDOWN_SECONDS > deadline):
                left_out.append(step)
                continue
            began = time.monotonic()
            try:
                runs[step]()
            finally:
                took[step] = round(time.monotonic() - began)
    finally:
        figures["left_out"] = left_out
        figures["steps_s"] = took
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    if left_out:
        log("LEFT OUT: %s, which could not end before the run's deadline (INFEROPS_DEADLINE, %.0f s away): this "
            "machine ran slow; run scripts/lab.sh test for the whole day two" % (" ".join(left_out), deadline - time.time()))
    log("passed; figures in %s" % args.json)


if __name__ == "__main__":
    main()

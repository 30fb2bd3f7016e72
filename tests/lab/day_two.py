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
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories/lab"
KEY = "lab-key-not-a-secret"
MODEL = "tiny-k3"
ROUTER = "http://127.0.0.1:18480"
PROMETHEUS = "http://127.0.1.1:18490"   # role vllm_prometheus on lab-node1 (inventories/lab)
ENGINES_MISSING = "InferopsVllmEnginesMissing"
CLUSTERS = {   # head endpoint, nodes (head first)
    "lab": ("http://127.0.1.1:18300", ["lab-node1", "lab-node2"]),      # each head's own address
    "lab_dp": ("http://127.0.1.3:18310", ["lab-node3", "lab-node4"]),
}
RANKS = {"http://127.0.1.1:18300": 1, "http://127.0.1.3:18310": 2}   # data-parallel ranks behind each head
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
STEPS = ["upgrade", "rollback", "restart", "heal", "rerun"]
REPORTS = ""   # --reports/rollout
# The Hub stand-in's commits of inferops/tiny-k3 (tests/harness/lib.sh build_hub_repos): the lab pins the
# first; the upgrade moves to the second, the failed upgrade tries the third. Weights: every revision shares
# the same blobs (only a README changes), so a move fetches a few bytes.
REVISIONS = [os.environ.get("INFEROPS_HUB_TINY_K3_REVISION" + suffix, "") for suffix in ("", "_2", "_3")]
SERVED = {"revision": REVISIONS[0]}   # what the lab's inventory names; the upgrade moves it
RECORD = "/var/lib/inferops-vllm/model.json"
SNAPSHOTS = "/srv/models/huggingface/hub/models--inferops--tiny-k3/snapshots"


def log(msg: str) -> None:
    print("=== %s  day two: %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise SystemExit("day two FAILED: " + msg)


def http(url: str, body: dict | None = None, timeout: float = 30, method: str | None = None,
         rank: int | None = None) -> tuple[int, object]:
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None,
                                 method=method or ("POST" if body is not None else "GET"))
    req.add_header("Content-Type", "application/json")
    if rank is not None:
        req.add_header("X-data-parallel-rank", str(rank))   # vLLM sends it to that data-parallel rank
    req.add_header("Authorization", "Bearer " + KEY)
    try:
        with OPENER.open(req, timeout=timeout) as resp:
            raw = resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()[:300].decode("utf-8", "replace")
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw[:300].decode("utf-8", "replace")


def generate(base: str, timeout: float = 20, rank: int | None = None) -> tuple[bool, float, str]:
    start = time.monotonic()
    try:
        status, body = http(base + "/v1/chat/completions", {
            "model": MODEL, "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8,
            "temperature": 0}, timeout, rank=rank)
    except OSError as exc:
        return False, time.monotonic() - start, str(exc)
    # the K3-format model may spend its few tokens on reasoning: any text counts as an answer
    message = body["choices"][0]["message"] if status == 200 and isinstance(body, dict) else {}
    ok = bool((message.get("content") or message.get("reasoning_content") or message.get("reasoning") or "").strip())
    return ok, time.monotonic() - start, "" if ok else "%s %s" % (status, str(body)[:200])


def serves(base: str, timeout: float = 20) -> bool:
    """Every data-parallel rank answers a generation sent to it, at once (a lost rank hangs)."""
    ranks = RANKS.get(base, 1)
    results: list[bool] = []
    threads = [threading.Thread(target=lambda r=r: results.append(generate(base, timeout, r if ranks > 1 else None)[0]))
               for r in range(ranks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(results) == ranks and all(results)


def docker(node: str, *argv: str, check_rc: bool = True) -> str:
    out = subprocess.run(["docker", "exec", node, *argv], capture_output=True, text=True, check=False)
    if check_rc:
        check(out.returncode == 0, "docker exec %s %s: %s" % (node, " ".join(argv), out.stderr.strip()))
    return out.stdout


def container(node: str) -> dict:
    return json.loads(docker(node, "docker", "container", "inspect", "vllm"))[0]


def image_of(node: str) -> str:
    return container(node)["Config"]["Image"]


def kill_vllm(node: str) -> None:
    """The vLLM process dies (a crash, the OOM killer): docker's restart policy brings it back."""
    pid = container(node)["State"]["Pid"]
    docker(node, "kill", "-9", str(pid))


def play(playbook: str, *extra: str, log_name: str) -> tuple[int, float, str]:
    start = time.monotonic()
    # task timings in the log, to see where a rollout spends its time
    env = dict(os.environ, ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks")
    out = subprocess.run(["ansible-playbook", "-i", str(INVENTORY), str(ROOT / "playbooks" / playbook), *extra],
                         capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    seconds = time.monotonic() - start
    logs = Path(os.environ.get("INFEROPS_CACHE", "/var/cache/inferops-vllm")) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / log_name).write_text(out.stdout + out.stderr)
    recap = out.stdout[out.stdout.find("PLAY RECAP"):] if "PLAY RECAP" in out.stdout else out.stdout[-3000:]
    log("%s %s: rc=%d in %.0f s (log: %s)\n%s" % (playbook, " ".join(extra), out.returncode, seconds, logs / log_name, recap))
    return out.returncode, seconds, out.stdout


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


def router_workers() -> list[str]:
    status, body = http(ROUTER + "/list_workers")
    check(status == 200 and isinstance(body, dict), "router /list_workers answered %s %s" % (status, body))
    return sorted(body.get("urls", []))


class Client:
    """A steady client through the router: one request at a time, bounded in count and time."""

    def __init__(self, max_requests: int = 3000, max_seconds: float = 1800):
        self.samples: list[tuple[float, bool, float, str]] = []
        self.stop = threading.Event()
        self.max_requests, self.max_seconds = max_requests, max_seconds
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        start = time.monotonic()
        while not self.stop.is_set() and len(self.samples) < self.max_requests and time.monotonic() - start < self.max_seconds:
            ok, latency, err = generate(ROUTER, timeout=60)
            self.samples.append((time.time(), ok, latency, err))
            time.sleep(0.2)

    def figures(self, since: float, until: float) -> dict:
        window = [s for s in self.samples if since <= s[0] <= until]
        latencies = sorted(s[2] for s in window if s[1])
        p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else None
        return {"requests": len(window), "failed": sum(1 for s in window if not s[1]),
                "errors": sorted({s[3] for s in window if not s[1]})[:5],
                "p50_s": round(statistics.median(latencies), 3) if latencies else None,
                "p99_s": round(p99, 3) if p99 is not None else None}


def step_upgrade(variant: str, figures: dict) -> None:
    log("rolling upgrade to %s under a steady client through the router" % variant)
    check(router_workers() == sorted(e for e, _nodes in CLUSTERS.values()), "the router does not list both replicas")
    client = Client()
    client.thread.start()
    time.sleep(20)
    begin = time.time()
    before, revision = SERVED["revision"], REVISIONS[1]
    rc, seconds, _out = play("upgrade.yml", "-e", "vllm_image=" + variant, "-e", "vllm_model_revision=" + revision,
                             "-e", "vllm_rollout_report_dir=" + REPORTS, log_name="day2-upgrade.log")
    end = time.time()
    time.sleep(5)
    client.stop.set()
    client.thread.join()
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
        check(serves(endpoint), "%s does not serve after the upgrade" % endpoint)
    check(router_workers() == sorted(e for e, _nodes in CLUSTERS.values()), "the router lost a replica in the upgrade")
    report = json.loads((Path(REPORTS) / "rollout.json").read_text())
    check([c["outcome"] for c in report["clusters"]] == ["upgraded", "upgraded"], "rollout report: %s" % report["summary"])
    before, during = client.figures(begin - 20, begin), client.figures(begin, end)
    figures["upgrade"] = {"seconds": round(seconds), "before": before, "during": during}
    log("upgrade: %.0f s; before %s; during %s" % (seconds, before, during))
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


def wait_until_serving(endpoint: str, deadline: float) -> float | None:
    """Seconds until the endpoint serves on every rank twice in a row."""
    start, streak = time.monotonic(), 0
    while time.monotonic() - start < deadline:
        streak = streak + 1 if serves(endpoint, timeout=15) else 0
        if streak == 2:
            return time.monotonic() - start
        time.sleep(3)
    return None


def wait_until_failing(endpoint: str, deadline: float) -> bool:
    start = time.monotonic()
    while time.monotonic() - start < deadline:
        if not serves(endpoint, timeout=15):
            return True
        time.sleep(1)
    return False


def prometheus(path: str, **params: str) -> dict:
    query = urllib.parse.urlencode(params)
    with OPENER.open("%s%s?%s" % (PROMETHEUS, path, query), timeout=10) as resp:
        return json.loads(resp.read())["data"]


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
    log("kill each cluster's follower; no operator")
    healed: dict = {}
    check(wait_for_alert(ENGINES_MISSING, "lab_dp", False, 60) is not None,
          "%s fires for lab_dp before its follower is killed" % ENGINES_MISSING)
    for name, (_endpoint, nodes) in CLUSTERS.items():
        kill_vllm(nodes[1])
    killed, killed_at = time.monotonic(), time.time()
    broken: dict = {}
    threads = []
    for name, (endpoint, _nodes) in CLUSTERS.items():
        def watch(name=name, endpoint=endpoint):
            # the fault must show before its healing counts
            broken[name] = wait_until_failing(endpoint, 120)
            took = wait_until_serving(endpoint, 900 - (time.monotonic() - killed))
            healed[name] = None if took is None else round(time.monotonic() - killed)
        threads.append(threading.Thread(target=watch))
        threads[-1].start()
    for t in threads:
        t.join()
    # the DP follower's engine went missing: Prometheus's own record of the alert since the kill, and what
    # the rule read (why it fired or did not)
    fired = firing_since(ENGINES_MISSING, "lab_dp", killed_at)
    resolved = wait_for_alert(ENGINES_MISSING, "lab_dp", False, 120)
    alert = {"fired_s": round(min(fired) - killed_at) if fired else None,
             "firing_s": len(fired), "resolved": resolved is not None,
             "seen": rule_inputs("lab_dp", killed_at)}
    status = {name: json.loads(docker(nodes[0], "cat", "/var/lib/inferops-vllm/watchdog.json"))
              for name, (_e, nodes) in CLUSTERS.items()}
    figures["heal"] = {name: {"seconds_to_serve": healed[name], "head_watchdog": status[name]} for name in CLUSTERS}
    figures["heal"]["lab_dp"]["engines_missing_alert"] = alert
    log("heal: %s; %s for lab_dp: %s" % ({name: healed[name] for name in CLUSTERS}, ENGINES_MISSING, alert))
    for name in CLUSTERS:
        check(broken[name], "killing %s's follower did not show: the check cannot see a lost rank" % name)
        check(healed[name] is not None, "%s did not serve again within 15 minutes of its follower's death" % name)
    check(bool(fired), "%s did not fire for lab_dp between its follower's death and the heal; the rule read: %s"
          % (ENGINES_MISSING, alert["seen"]))
    check(alert["resolved"], "%s for lab_dp still fires 2 minutes after the cluster healed" % ENGINES_MISSING)


def step_rerun(variant: str, figures: dict) -> None:
    log("kill the TP follower, re-run site.yml at once: it must not return before the cluster serves")
    endpoint, nodes = CLUSTERS["lab"]
    kill_vllm(nodes[1])
    start = time.monotonic()
    first_served: list[float] = []

    def watch():
        time.sleep(2)
        took = wait_until_serving(endpoint, 1200)
        if took is not None:
            first_served.append(time.monotonic() - start)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    # the digest the lab runs since the upgrade: the fault is the only change
    rc, seconds, _out = play("site.yml", "--skip-tags", "smoke", "-e", "vllm_image=" + variant, *weights_args(),
                             log_name="day2-rerun.log")
    serving_at_return = serves(endpoint)
    watcher.join(timeout=1200)
    figures["rerun"] = {"site_yml_returned_s": round(seconds), "cluster_served_s": round(first_served[0]) if first_served else None,
                        "rc": rc, "serving_at_return": serving_at_return}
    log("re-run: %s" % figures["rerun"])
    check(rc == 0, "site.yml after a killed follower failed (rc=%d)" % rc)
    check(serving_at_return, "site.yml returned while the cluster did not serve")


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
    try:
        if "upgrade" in args.only:
            step_upgrade(args.variant, figures)
        if "rollback" in args.only:
            step_rollback(args.variant, args.broken, figures)
        if "restart" in args.only:
            step_restart(args.variant, figures)
        if "heal" in args.only:
            step_heal(figures)
        if "rerun" in args.only:
            step_rerun(args.variant, figures)
    finally:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    log("passed; figures in %s" % args.json)


if __name__ == "__main__":
    main()

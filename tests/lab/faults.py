"""Faults on the lab and one trial of each: break a cluster, time it until it serves on every rank again
with no operator, and count what the watchdogs did and what a steady client through the router lost.

The day-two test (tests/lab/day_two.py) runs one trial per shape in CI; the heal bench
(bench/heal_bench.py, scripts/bench.sh heal) runs N trials of every fault.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from lab_nodes import CLUSTERS, Client, kill_vllm, reboot, serves, wait_until_failing, wait_until_serving, watchdog

HEAL_GOAL_S = 180          # every trial serves again within 3 minutes
ROUTER_FAILED_GOAL = 2     # and loses at most 2 requests through the router


@dataclass(frozen=True)
class Fault:
    name: str
    cluster: str
    nodes: tuple[str, ...]
    action: str            # kill: the vLLM process dies | reboot: the node restarts
    what: str

    def inject(self) -> None:
        for node in self.nodes:
            (kill_vllm if self.action == "kill" else reboot)(node)


def _fault(name: str, cluster: str, which: str, action: str, what: str) -> Fault:
    nodes = CLUSTERS[cluster][1]
    picked = {"head": nodes[:1], "follower": nodes[1:], "both": nodes}[which]
    return Fault(name, cluster, tuple(picked), action, what)


FAULTS = {f.name: f for f in [
    _fault("tp_follower_killed", "lab", "follower", "kill", "TP2: the follower's vLLM killed"),
    _fault("dp_follower_killed", "lab_dp", "follower", "kill", "DP2: the headless follower's vLLM killed"),
    _fault("tp_head_killed", "lab", "head", "kill", "TP2: the head's vLLM killed"),
    _fault("dp_head_killed", "lab_dp", "head", "kill", "DP2: the head's vLLM killed"),
    _fault("tp_both_killed", "lab", "both", "kill", "TP2: both nodes' vLLM killed"),
    _fault("dp_both_killed", "lab_dp", "both", "kill", "DP2: both nodes' vLLM killed"),
    _fault("tp_follower_rebooted", "lab", "follower", "reboot", "TP2: the follower node restarted"),
    _fault("dp_follower_rebooted", "lab_dp", "follower", "reboot", "DP2: the follower node restarted"),
]}


def restarts(cluster: str) -> int:
    """Container restarts the cluster's watchdogs have made, all nodes together."""
    return sum(int(watchdog(node).get("restarts_total", 0)) for node in CLUSTERS[cluster][1])


def watchdogs_calm(cluster: str, deadline: float) -> bool:
    """Every watchdog of the cluster has seen it serve since the fault (state ok): the next trial starts clean."""
    start = time.monotonic()
    while time.monotonic() - start < deadline:
        if all(watchdog(node).get("state") == "ok" for node in CLUSTERS[cluster][1]):
            return True
        time.sleep(3)
    return False


def ready(cluster: str, deadline: float = 600) -> None:
    """Before a trial: the cluster serves and its watchdogs are calm."""
    endpoint = CLUSTERS[cluster][0]
    if wait_until_serving(endpoint, deadline) is None or not watchdogs_calm(cluster, 120):
        raise SystemExit("faults: %s does not serve with calm watchdogs before the trial" % cluster)


def trial(fault: Fault, client: Client, deadline: float = 900) -> dict:
    """Break, wait for the break to show, then for the cluster to serve on every rank twice in a row."""
    return trial_round([fault], client, deadline)[fault.name]


def trial_round(round_: list[Fault], client: Client, deadline: float = 900) -> dict[str, dict]:
    """Faults on different clusters at once, each timed on its own; the router's losses are the round's. CI and
    the bench run one fault per round: with every replica down at once the router has no worker left."""
    results: dict[str, dict] = {}
    before = {f.name: restarts(f.cluster) for f in round_}
    start, began = time.monotonic(), time.time()
    # kills first: a node restart blocks until the node is back up (seconds), and each fault's clock runs from here
    for fault in sorted(round_, key=lambda f: f.action != "kill"):
        fault.inject()

    def follow(fault: Fault) -> None:
        endpoint = CLUSTERS[fault.cluster][0]
        showed = wait_until_failing(endpoint, 120)
        took = wait_until_serving(endpoint, deadline - (time.monotonic() - start))
        healed = None if took is None else round(time.monotonic() - start)
        calm = watchdogs_calm(fault.cluster, 180) if took is not None else False
        results[fault.name] = {"fault": fault.name, "showed": showed, "seconds_to_serve": healed, "watchdogs_calm": calm}

    threads = [threading.Thread(target=follow, args=(fault,)) for fault in round_]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # the router's losses until the watchdogs settled: a late restart would cost requests too
    router = client.figures(began, time.time())
    for fault in round_:
        results[fault.name].update(watchdog_restarts=restarts(fault.cluster) - before[fault.name], router=router,
                                   faults_in_round=len(round_), serves_now=serves(CLUSTERS[fault.cluster][0]))
    return results


def problems(result: dict) -> list[str]:
    """Where a trial missed a goal; [] when it met every one."""
    out = []
    if not result["showed"]:
        out.append("the fault never showed: the check cannot see it")
    if result["seconds_to_serve"] is None or result["seconds_to_serve"] > HEAL_GOAL_S:
        out.append("served again after %s s (goal %d s)" % (result["seconds_to_serve"], HEAL_GOAL_S))
    allowed = ROUTER_FAILED_GOAL * result.get("faults_in_round", 1)
    if result["router"]["failed"] > allowed:
        out.append("%d requests through the router failed (goal at most %d): %s"
                   % (result["router"]["failed"], allowed, result["router"]["errors"]))
    if not result["watchdogs_calm"]:
        out.append("the watchdogs did not settle to ok within 3 minutes of the heal")
    return out

"""The rollout report: one outcome per cluster and the fix (module_utils/controller/rollout.py)."""
from ansible_collections.inferops.vllm.plugins.module_utils.controller import rollout


def step(cluster, name, ok, image="r/vllm@sha256:new", reason="quick smoke PASSED"):
    return {"cluster": cluster, "step": name, "ok": ok, "image": image, "seconds": 61.0, "reason": reason}


def test_every_cluster_upgraded():
    report = rollout.build([step("a", "upgrade", True), step("b", "upgrade", True)], ["a", "b"], "upgrade")
    assert report["ok"] and [c["outcome"] for c in report["clusters"]] == ["upgraded", "upgraded"]
    assert report["summary"] == "upgrade: every cluster (a, b) upgraded and passed the quick smoke"


def test_a_failed_upgrade_is_rolled_back_and_stops_the_rollout():
    steps = [step("a", "upgrade", False, reason="lab-node1: container vllm restarted (exit code 1) while vLLM was loading"),
             step("a", "rollback", True, image="r/vllm@sha256:old")]
    report = rollout.build(steps, ["a", "b"], "upgrade")
    assert not report["ok"]
    assert [c["outcome"] for c in report["clusters"]] == ["rolled back", "not attempted"]
    assert report["summary"].startswith("upgrade stopped at cluster a: lab-node1: container vllm restarted (exit code 1)")
    assert "rolled back to r/vllm@sha256:old and serves again" in report["summary"]
    assert report["summary"].endswith("Not attempted: b")
    assert "| a | rolled back | rollback | True | 61.0 | `r/vllm@sha256:old` | - |" in report["markdown"]


def test_a_rollback_that_also_took_the_weights_back_names_both_fixes():
    steps = [dict(step("a", "upgrade", False, reason="quick smoke FAILED"), revision="2" * 40),
             dict(step("a", "rollback", True, image="r/vllm@sha256:old"), revision="1" * 40)]
    report = rollout.build(steps, ["a"], "upgrade")
    assert "rolled back to r/vllm@sha256:old with the weights at %s" % ("1" * 40) in report["summary"]
    assert "vllm_model_revision" in report["summary"]
    assert "| a | rolled back | rollback | True | 61.0 | `r/vllm@sha256:old` | %s |" % ("1" * 40) in report["markdown"]
    # the same revision on both steps: only the image moved
    same = [dict(s, revision="1" * 40) for s in steps]
    assert "vllm_model_revision" not in rollout.build(same, ["a"], "upgrade")["summary"]


def test_a_failed_rollback_says_the_cluster_does_not_serve():
    steps = [step("a", "upgrade", False, reason="quick smoke FAILED"),
             step("a", "rollback", False, image="r/vllm@sha256:old", reason="a: not serving")]
    report = rollout.build(steps, ["a"], "upgrade")
    assert report["clusters"][0]["outcome"] == "rollback failed"
    assert "The rollback to r/vllm@sha256:old failed too (a: not serving)" in report["summary"]


def test_a_restart_has_no_rollback():
    report = rollout.build([step("a", "restart", True), step("b", "restart", False, reason="quick smoke FAILED")],
                           ["a", "b"], "restart")
    assert [c["outcome"] for c in report["clusters"]] == ["restarted", "failed"]
    assert report["summary"] == "restart stopped at cluster b: quick smoke FAILED"


# --- P/D deployments: the sides move as one unit --------------------------------------------------------------

def side(name, deployment, role):
    return {"name": name, "endpoint": "http://10.0.0.%d:8000" % len(name), "pd": {"deployment": deployment, "role": role}}


PD = [side("k3_prefill", "k3", "prefill"), side("k3_decode", "k3", "decode"), {"name": "k25"},
      side("k3_prefill", "k3", "prefill"), side("b_decode", "b", "decode"), side("b_prefill", "b", "prefill")]


def test_the_sides_of_a_deployment_are_one_unit():
    assert rollout.units(PD) == [["b_decode", "b_prefill"], ["k25"], ["k3_decode", "k3_prefill"]]
    assert rollout.units([{"name": "b"}, {"name": "a"}, {"name": "a"}]) == [["a"], ["b"]]
    assert rollout.pd_deployments(PD) == {"b": {"decode": ["b_decode"], "prefill": ["b_prefill"]},
                                          "k3": {"decode": ["k3_decode"], "prefill": ["k3_prefill"]}}


def test_a_deployment_behind_its_router_stops_while_it_moves():
    router = [{"vllm_router_workers": [], "vllm_router_clusters": []}]
    (line,) = rollout.downtime_problems(PD[:3], router, None)
    assert line == ("vllm_rollout_allow_downtime=False (P/D deployment k3): an upgrade moves each deployment's sides "
                    "together and its router serves that deployment alone, so it stops serving while it moves (its "
                    "clients get errors until it serves again). Fix: set vllm_rollout_allow_downtime: true to accept "
                    "the downtime; a second deployment behind its own router keeps serving meanwhile")
    assert rollout.downtime_problems(PD[:3], router, True) == []
    assert rollout.downtime_problems([{"name": "k25"}], router, None) == []
    # the plan's note, unless accepted on the deployment's clusters
    assert rollout.downtime_notes(PD[:3], router, lambda name: False) == [
        "P/D deployment k3: upgrades and rolling restarts stop it while its sides move together (its router serves it "
        "alone); set vllm_rollout_allow_downtime: true to accept"]
    assert rollout.downtime_notes(PD[:3], router, lambda name: True) == []


def test_an_upgrade_of_one_side_alone_is_refused():
    (line,) = rollout.downtime_problems([PD[0]], [], True)
    assert line == ("--limit='k3_prefill' (P/D deployment k3): the upgrade would move its prefill side alone, and "
                    "sides on different images or revisions cannot hand KV over. Fix: add the deployment's decode "
                    "cluster to --limit, so that both sides move together")
    # a restart keeps the image: one side may restart alone (downtime accepted)
    assert rollout.downtime_problems([PD[0]], [], True, "restart") == []


def test_progress_stops_on_a_failed_batch_but_not_on_a_rollbacks_own_step():
    histories = [[{"cluster": "a", "step": "upgrade", "ok": True}],
                 [{"cluster": "b", "step": "upgrade", "ok": False}, {"cluster": "b", "step": "rollback", "ok": False}],
                 [], None]
    assert rollout.progress(histories) == {"stopped": True, "reached": ["a", "b"]}
    assert rollout.progress([[{"cluster": "a", "step": "rollback", "ok": False}]]) == {"stopped": False, "reached": ["a"]}
    assert rollout.progress([]) == {"stopped": False, "reached": []}

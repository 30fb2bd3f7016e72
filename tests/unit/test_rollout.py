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

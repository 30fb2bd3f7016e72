"""The group verdict: when vllm_serve restarts a cluster as a whole (module_utils/controller/group.py)."""
from ansible_collections.inferops.vllm.plugins.module_utils.controller import group

NODES = ["n1", "n2"]


def member(started_at=1000.0, running=True, started=False, **extra):
    container = {"exists": True, "running": running, "status": "running" if running else "exited",
                 "started_at": started_at, "restart_count": 0, "exit_code": 0}
    container.update(extra)
    return {"container": container, "started": started}


def judge(members, probe=None, window=120):
    return group.verdict("lab", members, NODES[:len(members)], window, probe)


def test_a_group_that_started_together_and_generates_serves():
    members = [member(1000), member(1030)]
    assert judge(members)["action"] == group.PROBE
    assert judge(members, {"ready": True}) == {"action": group.NONE, "reason": "lab serves"}


def test_a_head_that_does_not_generate_restarts_the_group():
    # TP: a follower died, the head answers 500 while /health stays 200
    out = judge([member(1000), member(1025)], {"ready": False, "detail": "chat completion answered 500"})
    assert out["action"] == group.RESTART and "answered 500" in out["reason"]


def test_a_member_that_restarted_alone_restarts_the_group_before_any_probe():
    # a reboot: docker's restart policy brought the follower back an hour later
    out = judge([member(1000), member(4600)])
    assert out["action"] == group.RESTART
    assert out["reason"].startswith("n2's container started 3600 s after n1's")


def test_a_member_that_is_not_running_restarts_the_group():
    out = judge([member(1000), member(1000, running=False, status="restarting", exit_code=1, restart_count=7)])
    assert out["action"] == group.RESTART
    assert out["reason"] == "n2 has its container restarting (exit code 1), restarted 7 times by docker"
    assert judge([member(), {"container": {"exists": False}, "started": False}])["reason"] == "n2 has no container"


def test_a_group_started_by_this_run_waits_and_a_partial_start_restarts():
    assert judge([member(started=True), member(started=True)])["action"] == group.WAIT
    out = judge([member(), member(started=True)])
    assert out["action"] == group.RESTART and out["reason"].startswith("n2 (re)started in this run while n1 kept running")


def test_a_node_that_did_not_answer_fails_the_verdict():
    out = judge([member(), None])
    assert out["action"] == group.FAIL and "without n2, which did not answer" in out["reason"]


def test_a_single_node_is_judged_by_its_head_alone():
    assert group.verdict("one", [member(5000)], ["n1"], 120, None)["action"] == group.PROBE
    assert group.verdict("one", [member(started=True)], ["n1"], 120, None)["action"] == group.WAIT


def test_the_role_s_verdict_reads_the_members_facts_and_the_probe_only_where_it_decides():
    cluster = {"name": "lab", "nodes": NODES}
    hostvars = {"n1": {"vllm_serve_member": member(1000)}, "n2": {"vllm_serve_member": member(1030)}}
    assert group.judged(hostvars, cluster, 120, probe={"ready": True})["action"] == group.NONE
    # the head was not probed (its task skipped): the group restarts
    skipped = group.judged(hostvars, cluster, 120, probe={"skipped": True, "changed": False})
    assert skipped["action"] == group.RESTART and skipped["reason"].endswith("does not serve: no answer")
    assert group.judged(hostvars, cluster, 120)["reason"] == "the head of lab does not serve: the head was not probed"
    # an earlier pass's probe is not read where the containers decide
    restarted = dict(hostvars, n2={"vllm_serve_member": member(4600)})
    assert group.judged(restarted, cluster, 120, probe={"ready": True})["action"] == group.RESTART
    forced = group.judged(hostvars, cluster, 120, force=True)
    assert forced == {"action": group.RESTART, "reason": "a restart was asked for"}
    assert group.judged({"n1": hostvars["n1"]}, cluster, 120)["action"] == group.FAIL

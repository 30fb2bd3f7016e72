"""Each node judged before it serves (controller/fleet_health.py): its figures against its peers of the same GPU model
and the platform's floor, its health findings; a failing node is fenced with the reason and the fix."""
from ansible_collections.inferops.vllm.plugins.module_utils.controller import fleet_health
from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_health

FIGURE = "allreduce_busbw_gbps"


def test_a_node_well_below_its_peers_fails_and_the_others_pass():
    figures = {"a": 470.0, "b": 465.0, "c": 380.0, "d": 468.0}
    failed = fleet_health.peer_failures(figures, dict.fromkeys(figures, "H100"), FIGURE)
    assert list(failed) == ["c"]
    assert failed["c"].startswith("allreduce_busbw_gbps 380.0 is 19 % below the median of its 4 H100 peers (466.5)")


def test_peers_are_only_nodes_of_the_same_gpu_model():
    figures = {"h1": 470.0, "h2": 468.0, "b1": 900.0, "b2": 905.0}
    models = {"h1": "H100", "h2": "H100", "b1": "B200", "b2": "B200"}
    assert fleet_health.peer_failures(figures, models, FIGURE) == {}


def test_two_nodes_judge_each_other_and_a_lone_node_meets_the_floor():
    assert list(fleet_health.peer_failures({"a": 470.0, "b": 300.0}, {"a": "H100", "b": "H100"}, FIGURE)) == ["b"]
    # one node has no peers: the published floor for 8 x H100 judges it, with its source
    failed = fleet_health.peer_failures({"a": 300.0}, {"a": "H100"}, FIGURE, gpus={"a": 8})
    assert "below the floor 368.0 (NVIDIA nccl-tests" in failed["a"]
    # a whole fleet slow together passes its peers but not the floor
    figures = {"a": 300.0, "b": 301.0}
    assert sorted(fleet_health.peer_failures(figures, dict.fromkeys(figures, "H100"), FIGURE,
                                             gpus=dict.fromkeys(figures, 8))) == ["a", "b"]


def test_a_site_sets_its_own_floor_and_a_platform_without_one_has_none():
    assert fleet_health.floor_for("H100", 8, FIGURE, {"H100/8/%s" % FIGURE: 400}) == (
        400.0, "the site's floor for H100/8/allreduce_busbw_gbps")
    assert fleet_health.floor_for("MI355X", 8, FIGURE, {}) is None
    assert fleet_health.peer_failures({"a": 1.0}, {"a": "MI355X"}, FIGURE, gpus={"a": 8}) == {}


def test_a_fencing_finding_or_a_failed_figure_fences_and_a_warning_does_not():
    fence = gpu_health.Finding("GPU 1 (00000000:2A:00.0)", "a memory row remap is pending", "reset the GPU", True)
    warn = gpu_health.Finding("GPU 0 (00000000:18:00.0)", "3 lifetime errors", "watch it", False)
    findings = {"a": gpu_health.as_dicts([fence]), "b": gpu_health.as_dicts([warn])}
    failed = fleet_health.peer_failures({"a": 470.0, "b": 470.0, "c": 200.0}, dict.fromkeys("abc", "H100"), FIGURE)
    got = {v.host: v for v in fleet_health.verdicts(["a", "b", "c"], findings, [failed])}
    assert (got["a"].passed, got["b"].passed, got["c"].passed) == (False, True, False)
    assert got["a"].reasons == ["GPU 1 (00000000:2A:00.0): a memory row remap is pending. Fix: reset the GPU"]
    assert "below the median" in got["c"].line() and ". Fix: " in got["c"].line()
    assert got["b"].line() == "b: passed"

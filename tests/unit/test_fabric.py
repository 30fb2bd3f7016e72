"""The fabric check's reading of NCCL/RCCL debug output and its verdicts."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".collections"))
from ansible_collections.inferops.vllm.plugins.module_utils.controller import fabric  # noqa: E402

FIXTURES = ROOT / "tests/unit/fixtures/fabric"


def log(name):
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize("name, expected", [
    ("nccl_ib_gdr.log", "ib-gdr"),
    ("nccl_ib_no_gdr.log", "ib"),
    ("nccl_socket_fallback.log", "socket"),
    ("nccl_mnnvl.log", "mnnvl"),
    ("rccl_roce_gdr.log", "roce-gdr"),
])
def test_transport_actually_used(name, expected):
    assert fabric.transport(fabric.parse_log(log(name))) == expected


def test_hcas_interfaces_library_and_links_are_reported():
    facts = fabric.parse_log(log("nccl_ib_gdr.log"))
    assert facts["hcas"] == ["mlx5_0:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1"]
    assert facts["interfaces"] == ["ibp26s0"]
    assert (facts["library"], facts["version"]) == ("NCCL", "2.27.7+cuda13.0")
    assert facts["links"] == ["NET/IB/0/GDRDMA", "NET/IB/1/GDRDMA"]
    assert facts["gdr_hcas"] == {"mlx5_0": True, "mlx5_3": True}
    assert facts["result"]["busbw_gbps"] == 45.65
    rccl = fabric.parse_log(log("rccl_roce_gdr.log"))
    assert rccl["library"] == "RCCL" and rccl["rdma_kind"] == "roce"
    mnnvl = fabric.parse_log(log("nccl_mnnvl.log"))
    assert mnnvl["mnnvl_clique"] == 2 and mnnvl["nvls"]


def test_healthy_runs_pass_with_their_bandwidth():
    for name, fab in (("nccl_ib_gdr.log", "infiniband"), ("nccl_mnnvl.log", "mnnvl"), ("rccl_roce_gdr.log", "roce")):
        verdict = fabric.judge("n1", fab, log(name), min_busbw_gbps=40)
        assert verdict["passed"], verdict["problems"]
        assert verdict["busbw_gbps"] >= 40


def test_socket_fallback_on_infiniband_names_the_node_and_cause():
    verdict = fabric.judge("h200-a02", "infiniband", log("nccl_socket_fallback.log"))
    assert not verdict["passed"]
    problem = verdict["problems"][0]
    assert problem.startswith("host h200-a02: the collective used socket but vllm_fabric is infiniband")
    assert "/dev/infiniband" in problem and "NCCL_IB_HCA" in problem


def test_ib_without_gdr_fails_unless_allowed():
    verdict = fabric.judge("n1", "infiniband", log("nccl_ib_no_gdr.log"))
    assert "GPUDirect RDMA is off" in verdict["problems"][0]
    assert fabric.judge("n1", "infiniband", log("nccl_ib_no_gdr.log"), require_gdr=False)["passed"]


def test_mnnvl_expected_but_traffic_left_the_domain_points_at_imex():
    verdict = fabric.judge("gb300-t03", "mnnvl", log("nccl_ib_gdr.log"))
    assert "IMEX" in verdict["problems"][0] and "used ib-gdr" in verdict["problems"][0]


def test_roce_and_infiniband_mixups_say_which_to_set():
    assert "set vllm_fabric: roce" in fabric.judge("n", "infiniband", log("rccl_roce_gdr.log"))["problems"][0]
    assert "set vllm_fabric: infiniband" in fabric.judge("n", "roce", log("nccl_ib_gdr.log"))["problems"][0]


def test_hcas_outside_the_inventory_list_are_named():
    verdict = fabric.judge("n1", "infiniband", log("nccl_ib_gdr.log"), hcas=["mlx5_0", "mlx5_3"])
    assert verdict["problems"] == ["host n1: NCCL used HCAs mlx5_4, mlx5_5 that vllm_ib_hcas (mlx5_0, mlx5_3) does not "
                                   "list; set NCCL_IB_HCA through vllm_ib_hcas or fix the list"]


def test_bandwidth_below_the_site_baseline_fails():
    verdict = fabric.judge("n1", "infiniband", log("nccl_ib_gdr.log"), min_busbw_gbps=90)
    assert "bus bandwidth 45.65 GB/s is below fabric_check_min_busbw_gbps (90 GB/s)" in verdict["problems"][0]


def test_no_result_line_reports_the_log_tail():
    verdict = fabric.judge("n1", "infiniband", "NCCL INFO something\nSegmentation fault\n")
    assert verdict["problems"][0].startswith("host n1: the fabric check printed no result")
    assert "Segmentation fault" in verdict["problems"][0]


# --- whether a run runs the collective again (fabric.check_due) -------------------------------------------------------

IMAGE = "r.site:5000/vllm/vllm-openai@sha256:" + "a" * 64
SETTINGS = {"bytes": 268435456, "iterations": 20, "min_busbw_gbps": 0, "require_gdr": True, "port": 29517,
            "script": "s" * 64}


def launches(**env):
    return [{"host": host, "rank": rank, "hcas": ["mlx5_0"], "env": dict({"NCCL_IB_HCA": "=mlx5_0"}, **env),
             "host_stack": {"collective": "nccl", "gpudirect": "dmabuf"}, "container": {"volumes": []},
             "cluster": {"nodes": ["h1", "h2"], "head": "h1", "head_address": "10.0.0.1", "fabric": "infiniband"}}
            for rank, host in enumerate(["h1", "h2"])]


def recorded(**changes):
    record = {"summary": "h1 ib-gdr 180 GB/s; h2 ib-gdr 181 GB/s", "checked_at": "2026-12-04T09:00:00Z",
              "passed": True, "image": "vllm/vllm-openai@sha256:" + "a" * 64, "nodes": ["h1", "h2"],
              "basis": fabric.basis(launches(), SETTINGS)}
    return json.dumps(dict(record, **changes))


def test_a_record_of_the_same_check_holds_through_a_mirror_and_settings_written_as_text():
    plan = fabric.check_due(recorded(), [IMAGE, IMAGE], ["h1", "h2"], launches(), dict(SETTINGS, iterations="20"))
    assert plan == {"due": False, "reasons": [], "basis": fabric.basis(launches(), SETTINGS),
                    "checked_at": "2026-12-04T09:00:00Z", "summary": "h1 ib-gdr 180 GB/s; h2 ib-gdr 181 GB/s"}


@pytest.mark.parametrize("record, images, nodes, runs, settings, reason", [
    ("", [IMAGE, IMAGE], ["h1", "h2"], launches(), SETTINGS, "no record of an earlier check"),
    ("{not json", [IMAGE, IMAGE], ["h1", "h2"], launches(), SETTINGS, "an unreadable record"),
    ("[]", [IMAGE, IMAGE], ["h1", "h2"], launches(), SETTINGS, "an unreadable record"),
    (recorded(passed=False), [IMAGE, IMAGE], ["h1", "h2"], launches(), SETTINGS, "the check of 2026-12-04T09:00:00Z: failed"),
    # one node that will run another image (a half-done upgrade): the whole cluster is checked, not one rank
    (recorded(), [IMAGE, IMAGE.replace("a" * 64, "b" * 64)], ["h1", "h2"], launches(), SETTINGS,
     "the check of 2026-12-04T09:00:00Z: another image"),
    (recorded(nodes=["h1", "h3"]), [IMAGE, IMAGE], ["h1", "h2"], launches(), SETTINGS,
     "the check of 2026-12-04T09:00:00Z: other nodes"),
    # one node's environment (NCCL_IB_HCA, a proxy, anything the container sees), or the site's baseline
    (recorded(), [IMAGE, IMAGE], ["h1", "h2"], launches(NCCL_IB_HCA="=mlx5_1"), SETTINGS,
     "the check of 2026-12-04T09:00:00Z: another launch"),
    (recorded(), [IMAGE, IMAGE], ["h1", "h2"], launches(), dict(SETTINGS, min_busbw_gbps=40),
     "the check of 2026-12-04T09:00:00Z: another launch"),
    (recorded(basis=None), [IMAGE, IMAGE], ["h1", "h2"], launches(), SETTINGS, "the check of 2026-12-04T09:00:00Z: another launch"),
])
def test_the_check_runs_again_where_its_record_no_longer_holds(record, images, nodes, runs, settings, reason):
    plan = fabric.check_due(record, images, nodes, runs, settings)
    assert plan["due"] and plan["reasons"] == [reason]
    assert plan["basis"] == fabric.basis(runs, settings)


def test_a_forced_check_or_a_node_outside_the_run_runs_it():
    plan = fabric.check_due(recorded(), [IMAGE, IMAGE], ["h1", "h2"], launches(), SETTINGS, ["fabric_check_force"])
    assert plan["due"] and plan["reasons"] == ["fabric_check_force"]
    # --limit h1: h2's rank will not join; the check runs and fails naming it, rather than passing on an old record
    plan = fabric.check_due(recorded(), [IMAGE], ["h1", "h2"], launches()[:1], SETTINGS)
    assert plan["reasons"] == ["the check of 2026-12-04T09:00:00Z: another launch", "1 of the cluster's nodes outside this run"]


def test_the_filter_reads_the_heads_record_from_its_read():
    from ansible_collections.inferops.vllm.plugins.filter.fabric_check_due import fabric_check_due, script_digest
    cluster = launches()[0]["cluster"]
    # the filter adds the role's check script to the settings: a record made by another script does not hold
    assert len(script_digest()) == 64
    made = recorded(basis=fabric.basis(launches(), dict(SETTINGS, script=script_digest())))
    read = {"files": {"/var/lib/inferops-vllm/fabric.json": {"exists": True, "content": made}}}
    hostvars = {"h1": {"vllm_launch": launches()[0], "vllm_image_to_run": IMAGE, "fabric_check_last": read},
                "h2": {"vllm_launch": launches()[1], "vllm_image_to_run": IMAGE}}
    assert fabric_check_due(cluster, hostvars, SETTINGS)["due"] is False
    read["files"]["/var/lib/inferops-vllm/fabric.json"]["content"] = recorded()
    assert fabric_check_due(cluster, hostvars, SETTINGS)["reasons"] == [
        "the check of 2026-12-04T09:00:00Z: another launch"]
    read["files"]["/var/lib/inferops-vllm/fabric.json"]["content"] = made
    assert fabric_check_due(cluster, hostvars, SETTINGS, force=True)["reasons"] == ["fabric_check_force"]
    missing = {"files": {"/var/lib/inferops-vllm/fabric.json": {"exists": False}}}
    assert fabric_check_due(cluster, dict(hostvars, h1=dict(hostvars["h1"], fabric_check_last=missing)),
                            SETTINGS)["reasons"] == ["no record of an earlier check"]


# --- the role's decision in a real play: two "nodes" on this machine, in check mode (nothing runs a container) -------

def role_run(tmp_path, *extra_args, check: bool = True) -> str:
    """fabric_check on two local hosts sharing one state dir (in check mode unless told: nothing runs a container);
    prints the plan's basis after it."""
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    (state / "image.json").write_text(json.dumps({"current": IMAGE, "history": []}))
    nodes = {}
    for launch in launches():
        nodes[launch["host"]] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                 "vllm_launch": launch}
    (tmp_path / "inventory.json").write_text(json.dumps({"all": {"hosts": nodes, "vars": {
        "vllm_image_state_dir": str(state)}}}))
    (tmp_path / "play.yml").write_text(
        "- hosts: all\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.import_role: {name: inferops.vllm.fabric_check}\n"
        "    - ansible.builtin.debug: {msg: 'BASIS {{ fabric_check_plan.basis }}'}\n"
        "      when: vllm_launch.rank == 0\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    out = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp_path / "inventory.json"),
                          str(tmp_path / "play.yml"), *(["--check"] if check else []), *extra_args], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=False, timeout=180)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    return out.stdout


def test_the_role_checks_a_new_cluster_and_keeps_a_record_that_holds(tmp_path):
    out = role_run(tmp_path)
    assert "The fabric would be checked: no record of an earlier check" in out
    basis = out.split("BASIS ")[1].split('"')[0]
    record = json.loads(recorded(basis=basis))
    (tmp_path / "state" / "fabric.json").write_text(json.dumps(record))
    out = role_run(tmp_path)
    assert "The fabric check of 2026-12-04T09:00:00Z still holds (h1 ib-gdr 180 GB/s; h2 ib-gdr 181 GB/s)" in out
    assert "would be checked" not in out
    # for real: a record that holds runs nothing and leaves the record as it was
    out = role_run(tmp_path, check=False)
    assert "still holds" in out
    skipped = re.search(r"Run and judge the check\] \**\n((?:skipping: \[h\d\]\n)+)\n", out)
    assert skipped and sorted(skipped.group(1).splitlines()) == ["skipping: [h1]", "skipping: [h2]"], out
    assert "Run the check in the pinned image" not in out
    assert json.loads((tmp_path / "state" / "fabric.json").read_text()) == record
    out = role_run(tmp_path, "-e", "fabric_check_force=true")
    assert "The fabric would be checked: fabric_check_force" in out
    # a site that raises its baseline wants the fabric proven against it
    out = role_run(tmp_path, "-e", "fabric_check_min_busbw_gbps=40")
    assert "The fabric would be checked: the check of 2026-12-04T09:00:00Z: another launch" in out

"""The fabric check's reading of NCCL/RCCL debug output and its verdicts."""
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

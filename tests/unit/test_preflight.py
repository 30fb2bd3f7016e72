"""preflight checks on facts parsed from recorded tool outputs and a recorded sysfs tree."""
from pathlib import Path

from clusters import compile_
from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_facts as facts_parser
from ansible_collections.inferops.vllm.plugins.module_utils.controller import preflight as p

FIX = Path(__file__).parent / "fixtures/gpu_facts"


def h100_facts(driver_version="580.95.05"):
    gpus = facts_parser.parse_nvidia_query((FIX / "nvidia-smi-h100-query.csv").read_text())
    facts = facts_parser.summarize("nvidia", [dict(g, memory_mib=int(g["memory.total"])) for g in gpus])
    facts.update(driver_version=driver_version, driver_branch=facts_parser.driver_branch(driver_version),
                 infiniband=facts_parser.read_infiniband(str(FIX / "sys")))
    return facts


def expected(**over):
    """The launch's host_stack of an H100 node on InfiniBand, as the plan compiles it."""
    stack = compile_(1, vllm_gpu_model="H100", vllm_strategy="single")["n0"]["host_stack"]
    return dict(stack, **over)


def test_a_node_as_described_has_no_problem():
    assert p.node_problems(h100_facts(), "gpu1", 580, expected()) == []


def test_old_driver_names_the_variable_and_the_branch():
    [problem] = p.node_problems(h100_facts("570.172.08"), "gpu1", 580, expected())
    assert "gpu1 runs NVIDIA driver 570.172.08 (branch 570)" in problem and "nvidia_driver_branch to 580" in problem


def test_gpu_count_and_model_differ():
    [problem] = p.node_problems(h100_facts(), "gpu1", 580, expected(gpus="4", gpu_model="H200"))
    assert "gpu1 reports 8 x H100 (nvidia), but the inventory says 4 x H200" in problem


def test_rdma_devices_missing_or_down():
    [problem] = p.node_problems(h100_facts(), "gpu1", 580, expected(hcas=["mlx5_0", "mlx5_9"]))
    assert "devices mlx5_0, mlx5_1, mlx5_2 with active ports on mlx5_0, mlx5_2; missing vllm_ib_hcas mlx5_9" in problem
    no_hca = dict(h100_facts(), infiniband=[])
    assert "vllm_fabric=infiniband but gpu1 shows no RDMA device; missing vllm_ib_hcas mlx5_0." in p.node_problems(no_hca, "gpu1", 580, expected())[0]
    assert p.node_problems(no_hca, "gpu1", 580, expected(), require_rdma=False) == []
    assert p.node_problems(no_hca, "gpu1", 580, expected(fabric="nvlink")) == []


def test_every_problem_is_reported_at_once():
    facts = dict(h100_facts("570.172.08"), infiniband=[])
    assert len(p.node_problems(facts, "gpu1", 580, expected(gpus=4))) == 3


def test_without_an_accelerator_in_the_inventory_only_the_driver_is_checked():
    facts = dict(h100_facts("570.172.08"), infiniband=[])
    assert len(p.node_problems(facts, "gpu1", 580, None)) == 1
    cpu = {"vendor": None, "count": 0, "models": [], "driver_branch": None, "infiniband": []}
    assert p.node_problems(cpu, "cpu1", 580, expected(vendor="cpu", gpu_model="CPU", gpus=0, fabric="ethernet")) == []

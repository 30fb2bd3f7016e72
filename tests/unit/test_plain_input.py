"""Issue #26, items 1, 2, 6, 7, 8: what plain variables, addresses, sizes and host paths may hold."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, plain_input, vllm_surface
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from clusters import compile_


def refused(match, n=2, host_overrides=None, **kw):
    with pytest.raises(ClusterError) as info:
        compile_(n, host_overrides, **kw)
    message = str(info.value)
    assert "Fix:" in message and "Traceback" not in message
    assert match in message, message
    return info.value


# --- 1. env names and values that would rewrite vllm.env ----------------------------------------

@pytest.mark.parametrize("value", ["x\nLD_PRELOAD=/tmp/evil.so", "x\rY=1", "x\0y"])
@pytest.mark.parametrize("variable", ["vllm_env", "vllm_site_env"])
def test_env_value_with_line_break_refused(variable, value):
    err = refused("would end the line in vllm.env", **{variable: {"FOO": value}})
    assert err.variable == "%s['FOO']" % variable


@pytest.mark.parametrize("name", ["A B", "X=$(id)", "1ABC", "FOO-BAR", "", "A\nB"])
def test_env_name_must_be_a_name(name):
    err = refused("not an environment variable name", vllm_env={name: "1"})
    assert "[A-Za-z_][A-Za-z0-9_]*" in err.fix


def test_env_value_with_surrounding_blanks_refused():
    refused("strips", vllm_env={"FOO": " padded "})


def test_every_env_problem_is_one_line():
    with pytest.raises(ClusterError) as info:
        compile_(vllm_env={"A B": "1", "FOO": "x\ny"}, vllm_site_env={"X=1": "2"})
    lines = str(info.value).splitlines()
    assert len(lines) == 3 and all("Fix:" in line for line in lines)
    assert "hosts n0, n1" in str(info.value)   # group_vars on both hosts: one line naming both


# --- 2. secrets under other names -----------------------------------------------------------------

@pytest.mark.parametrize("name,secret", [("HUGGING_FACE_HUB_TOKEN", "vllm_hf_token"), ("HF_TOKEN", "vllm_hf_token"),
                                         ("VLLM_API_KEY", "vllm_api_key")])
@pytest.mark.parametrize("variable", ["vllm_env", "vllm_site_env"])
def test_credential_env_points_to_its_secret(variable, name, secret):
    err = refused("as a credential", **{variable: {name: "hf_abcdefghijklmnopqrstuv"}})
    assert secret in err.fix and "hf_abc" not in str(err)


@pytest.mark.parametrize("name", ["S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY",
                                  "AWS_SESSION_TOKEN", "MODELSCOPE_API_TOKEN", "OAUTH_CLIENT_SECRET",
                                  "MY_SITE_PASSWORD"])
def test_other_credentials_refused(name):
    err = refused("credential", vllm_env={name: "s3cr3t"})
    assert "s3cr3t" not in str(err)


def test_switches_named_like_tokens_pass():
    compile_(vllm_env={"VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD": "256"})


@pytest.mark.parametrize("flag,secret", [("hf-token", "vllm_hf_token"), ("--hf-token", "vllm_hf_token"),
                                         ("api-key", "vllm_api_key")])
@pytest.mark.parametrize("variable", ["vllm_args", "vllm_site_args"])
def test_credential_flags_refused(variable, flag, secret):
    err = refused("carries a credential", **{variable: {flag: "hf_abcdefghijklmnopqrstuv"}})
    assert secret in err.fix and "hf_abc" not in str(err)


def test_credential_flags_derived_from_the_surface():
    flags = plain_input.credential_flags(vllm_surface.load("0.32.0").options)
    assert flags == {"api-key": "vllm_api_key", "hf-token": "vllm_hf_token"}


@pytest.mark.parametrize("value", ["hf_abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghijklmnopqrstuvwx"])
def test_token_looking_values_warn(value):
    out = compile_(vllm_env={"NCCL_SETTING": value})
    warnings = out["n0"]["cluster"]["warnings"]
    assert any("vllm_env['NCCL_SETTING'] looks like a token" in w for w in warnings), warnings
    assert not any(value in w for w in warnings)


@pytest.mark.parametrize("variable, value", [
    ("vllm_env", {"UCX_PROXY": "ops:s3cretpw@reg.example:5000"}),
    ("vllm_site_env", {"SOMETHING": "https://ops:s3cretpw@mirror.example/x"}),
    ("vllm_args", {"kv-transfer-config": {"kv_connector": "X", "url": "redis://u:s3cretpw@10.0.0.9:6379"}}),
    ("vllm_site_args", {"tokenizer": "ops:s3cretpw@hf.example/org/tok"})])
def test_a_login_in_a_pass_through_value_is_refused_unshown(variable, value):
    """A user:password@ in any pass-through value would reach vllm.env, argv or vllm.yaml: refused, never echoed."""
    with pytest.raises(ClusterError) as info:
        compile_(**{variable: value})
    assert "login" in str(info.value) and "s3cretpw" not in str(info.value)


# --- 6. IPv6 ------------------------------------------------------------------------------------------

def test_ipv6_endpoint_is_bracketed():
    out = compile_(n=1, host_overrides={"n0": {"vllm_control_address": "fd00::11"}}, vllm_fabric=None)
    assert out["n0"]["cluster"]["endpoint"] == "http://[fd00::11]:8000"


def test_ipv6_refused_across_nodes():
    err = refused("IPv4 only", host_overrides={"n0": {"vllm_control_address": "fd00::11"}})
    assert err.variable == "vllm_control_address" and "IPv4" in err.fix


# --- 7. sizes: one rule in every strategy --------------------------------------------------------------

@pytest.mark.parametrize("strategy,n", [("dep", 2), ("dp", 2), ("single", 1), ("tp_pp", 2)])
def test_tensor_parallel_must_divide_the_node(strategy, n):
    kw = {"vllm_pipeline_parallel_size": 1} if strategy == "single" else {}
    refused("must divide the 8 GPUs per node", n=n, vllm_strategy=strategy, vllm_tensor_parallel_size=3,
            vllm_profile="generic", vllm_model="m", vllm_fabric="infiniband" if n > 1 else None, **kw)


def test_gpus_per_node_beyond_the_board_refused():
    err = refused("a GB300 node holds 4 GPUs", vllm_gpu_model="GB300", vllm_fabric="mnnvl",
                  vllm_nvlink_domain="rack1", vllm_gpus_per_node=8)
    assert err.variable == "vllm_gpus_per_node"


# --- 8. host paths and devices ---------------------------------------------------------------------

@pytest.mark.parametrize("path", ["relative/cache", "/srv/a:b", "/srv/a\n/b", ""])
def test_model_cache_dir_must_be_a_plain_absolute_path(path):
    err = refused("a host path mounted into the container", vllm_model_cache_dir=path)
    assert err.variable == "vllm_model_cache_dir"


@pytest.mark.parametrize("path", ["relative/cache", "/srv/a:b", "/srv/a\n/b"])
def test_compile_cache_dir_must_be_a_plain_absolute_path_or_empty(path):
    err = refused("a host path mounted into the container", vllm_compile_cache_dir=path)
    assert err.variable == "vllm_compile_cache_dir" and "or '' to mount none" in err.fix


def test_the_compile_caches_outlive_the_container_unless_turned_off():
    """vLLM's cache root and the compilers' caches under it sit on the node, on every rank; '' mounts none and sets
    none; a profile or the inventory still moves one of them."""
    for launch in compile_(n=2, vllm_strategy="dep").values():
        assert "/var/lib/inferops-vllm/compile-cache:/root/.cache/vllm" in launch["container"]["volumes"]
        assert launch["compile_cache_dir"] == "/var/lib/inferops-vllm/compile-cache"
        assert {k: launch["env"][k] for k in ("VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")} == {
            "VLLM_CACHE_ROOT": "/root/.cache/vllm", "TORCHINDUCTOR_CACHE_DIR": "/root/.cache/vllm/inductor",
            "TRITON_CACHE_DIR": "/root/.cache/vllm/triton"}
    off = compile_(n=1, vllm_strategy="single", vllm_compile_cache_dir="")["n0"]
    assert off["compile_cache_dir"] is None and not any(":/root/.cache/vllm" in v for v in off["container"]["volumes"])
    assert not {"VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"} & set(off["env"])
    moved = compile_(n=1, vllm_strategy="single", vllm_env={"TRITON_CACHE_DIR": "/scratch/triton"})["n0"]
    assert moved["env"]["TRITON_CACHE_DIR"] == "/scratch/triton"


def test_one_node_replica_gets_no_rdma_devices():
    container = compile_(n=1, vllm_fabric="infiniband", vllm_strategy="single")["n0"]["container"]
    assert not any("infiniband" in d for d in container["devices"]) and "IPC_LOCK" not in container["capabilities"]
    across = compile_(n=2, vllm_strategy="dep")["n0"]["container"]
    assert "/dev/infiniband:/dev/infiniband" in across["devices"] and "IPC_LOCK" in across["capabilities"]


def test_raise_all_raises_nothing_the_one_or_all_as_lines():
    one, two = (ClusterError("vllm_port", 0, "host n%d" % i, "out of range", "use 8000") for i in (0, 1))
    cluster.raise_all([])
    with pytest.raises(ClusterError) as info:
        cluster.raise_all([one])
    assert info.value is one
    with pytest.raises(cluster.ClusterErrors) as info:
        cluster.raise_all([one, two])
    assert info.value.errors == (one, two) and str(info.value).splitlines() == [str(one), str(two)]

"""The site policy (site_policy, passthrough, redact): the plan judges what each compiled launch will do on the node,
whatever input produced it. Each hostile inventory here is refused in one line that names the input; each road
below reaches an effect by a value that passes its own format."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    fleet, passthrough, plan_run, redact, site_policy, vllm_surface)
from ansible_collections.inferops.vllm.plugins.module_utils.node.node_state import parse_env_file
from test_plan_run import DictReader, IMAGE
from clusters import REVISION

MARKER = "MARKERsecret8f3c9a"


def site(hosts=2, **extra):
    """A two-node CPU cluster on two machines (10.0.0.x), planned whole; `extra` on every host."""
    common = {"vllm_cluster": "c1", "vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
              "vllm_strategy": "dp", "vllm_model_revision": REVISION, "vllm_image": IMAGE, "vllm_api_open": True,
              "vllm_version": "0.32.0",
              "vllm_model_source": "site", "vllm_model": "inferops/tiny-k3",
              "vllm_model_registry": "10.0.0.5:5000"}
    common.update(extra)
    names = ["n%d" % (i + 1) for i in range(hosts)]
    hostvars = {name: dict(common, ansible_host=common.get("ansible_host", "10.0.0.%d" % (i + 1)))
                for i, name in enumerate(names)}
    groups = {"all": names, "ungrouped": [], "vllm_clusters": names, str(common["vllm_cluster"]): names}
    return plan_run.run(DictReader(hostvars), names, groups)


def refused(out, *words):
    lines = [line for line in out.refusals if all(w in line for w in words)]
    assert lines, out.refusals
    assert all("\n" not in line for line in out.refusals)
    return lines


def test_the_base_site_plans():
    out = site()
    assert out.refusals == [] and sorted(out.launches) == ["n1", "n2"]


# --- host paths: by effect, never by exact name -----------------------------------------------------------------

@pytest.mark.parametrize("path", ["/proc/sys/kernel", "/proc/1/root", "/var/run/docker", "/root/.ssh/keys",
                                  "/srv/x/.ssh", "/home/ops/hf", "/etc/inferops-vllm", "/var/lib/docker/hf",
                                  "/dev/shm/hf", "/usr/share/hf", "/tmp/hf", "/var", "/nvme/hf"])
def test_a_compile_cache_where_it_would_do_harm_is_refused(path):
    out = site(vllm_compile_cache_dir=path)
    assert out.launches == {} or out.refusals
    refused(out, "vllm_compile_cache_dir")


def test_a_path_in_a_data_root_of_the_sites_own_plans():
    assert site(vllm_compile_cache_dir="/nvme/cc", vllm_host_path_roots=["/nvme"]).refusals == []
    assert site(vllm_model_cache_dir="/srv/models/huggingface").refusals == []


def test_a_data_root_in_a_system_tree_is_refused():
    refused(site(vllm_host_path_roots=["/etc/x"]), "vllm_host_path_roots")


@pytest.mark.parametrize("path, ok", [
    ("/var/lib/inferops-vllm/compile-cache", True), ("/run/inferops-vllm/weight-cache", True),
    ("/srv/hf", True), ("/srv", False), ("/run/inferops-vllm/../docker.sock", False), ("/proc/self/root/srv", False),
    ("/mnt/a/.aws", False), ("/opt", False), ("/lustre/hf", False), ("/", False)])
def test_path_problem_compares_normalized_prefixes(path, ok):
    assert (site_policy.path_problem(path) is None) is ok


# --- argv and env: one line to every reader ----------------------------------------------------------------------

@pytest.mark.parametrize("char", ["\u2028", "\x0b", "\x85", "\x1c", "\u202e", "\u200b", "\x1b", "\x00"])
def test_a_character_readers_split_or_show_otherwise_is_refused(char):
    refused(site(vllm_env={"NCCL_DEBUG": "WA%sRN" % char}), "NCCL_DEBUG")
    refused(site(vllm_args={"served-model-name": "a%sb" % char}), "served-model-name")


def test_the_collections_env_reader_reads_as_dockers():
    text = "A=1\u2028B=2\nC=x\x0by\r\nD=4\n"
    assert parse_env_file(text) == {"A": "1\u2028B=2", "C": "x\x0by", "D": "4"}


# --- the pass-throughs, sorted by vLLM's surface --------------------------------------------------------------

@pytest.mark.parametrize("args", [
    {"code-revision": "main"}, {"tokenizer-revision": "main"}, {"tokenizer": "other/repo"},
    {"hf-config-path": "other/repo"}, {"speculative-config": {"model": "other/draft", "num_speculative_tokens": 2}},
    {"data-parallel-backend": "ray"}, {"uds": "/tmp/vllm.sock"}, {"allowed-local-media-path": "/"},
    {"middleware": "evil.Middleware"}, {"tool-parser-plugin": "/x.py"}, {"max-num-seqs": 10 ** 30},
    {"gpu-memory-utilization": "1e400"}])
def test_a_flag_that_reaches_past_the_compiler_is_refused(args):
    flag = next(iter(args))
    refused(site(vllm_args=args), flag)


@pytest.mark.parametrize("name", ["VLLM_SERVER_DEV_MODE", "VLLM_ALLOW_INSECURE_SERIALIZATION", "CUDA_VISIBLE_DEVICES",
                                  "LD_PRELOAD", "PYTHONPATH", "SOMETHING_ELSE"])
def test_an_env_name_that_reaches_past_the_compiler_is_refused(name):
    refused(site(vllm_env={name: "1"}), name, passthrough.ALLOW)


def test_a_named_sensitive_setting_passes_with_a_warning_that_says_what_it_opens():
    out = site(vllm_env={"VLLM_SERVER_DEV_MODE": "1"}, vllm_allow_sensitive=["VLLM_SERVER_DEV_MODE"])
    assert out.refusals == []
    assert any("development endpoints" in w for w in out.warnings)


def test_a_second_model_is_refused_even_when_named():
    refused(site(vllm_args={"tokenizer": "other/repo"}, vllm_allow_sensitive=["tokenizer"]), "tokenizer")


def test_the_pinned_commit_and_a_model_free_speculative_method_pass():
    assert site(vllm_args={"code-revision": REVISION, "speculative-config": {"method": "ngram"}}).refusals == []


def test_every_flag_of_the_surface_has_one_kind():
    surface = vllm_surface.load("0.32.0")
    kinds = {flag: passthrough.flag_kind(flag[2:]) for flag in surface.options}
    assert set(kinds.values()) <= {passthrough.SENSITIVE, passthrough.TUNABLE}
    for flag in passthrough.SENSITIVE_FLAGS:
        assert "--" + flag in surface.options, flag   # no name the pinned vLLM lacks
    assert kinds["--max-num-seqs"] == passthrough.TUNABLE and kinds["--uds"] == passthrough.SENSITIVE
    for flag in passthrough._TUNABLE_SHAPED:   # each exception is needed
        assert passthrough._SENSITIVE_FLAG_SHAPE.search(flag), flag


# --- identifiers, derived values, addresses, site rules ------------------------------------------------------

@pytest.mark.parametrize("model", ["org/../../..", "https://huggingface.co/org/name", "org/name/extra", "../x"])
def test_a_model_id_that_is_not_a_repository_id_is_refused(model):
    refused(site(vllm_model=model), "vllm_model")


def test_a_derived_port_past_65535_is_refused():
    uses = {"n1": [fleet.PortUse(65536, "the KV side channel", "vllm_kv_side_channel_port")]}
    lines = site_policy.port_range_lines(uses, {})
    assert len(lines) == 1 and "vllm_kv_side_channel_port" in lines[0] and "65535" in lines[0]


def test_a_listener_inside_the_peer_to_peer_range_is_refused():
    refused(site(vllm_model_p2p=True, vllm_port=51500), "vllm_port", "51413-51612")


@pytest.mark.parametrize("address", ["0.0.0.0", "127.0.0.1", "224.0.0.1"])
def test_an_address_peers_cannot_reach_is_refused(address):
    refused(site(vllm_control_address=address), "vllm_control_address")


def test_loopback_passes_where_every_node_runs_on_the_controllers_machine():
    out = site(vllm_control_address="127.0.0.1", ansible_connection="community.docker.docker")
    assert [line for line in out.refusals if "loopback" in line] == []


def test_a_cluster_named_like_a_reserved_group_or_a_review_folder_is_refused():
    refused(site(vllm_cluster="vllm_routers"), "reserved group name")
    refused(site(vllm_cluster="firewall"), "a folder of the plan's review files")


# --- secrets never echoed ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("extra", [
    {"vllm_args": {"api_key": MARKER}}, {"vllm_args": {"--api_key": MARKER}}, {"vllm_args": {"API-KEY": MARKER}},
    {"vllm_site_args": {"hf_token": MARKER}}, {"vllm_env": {"MY_TOKEN": MARKER}}, {"vllm_env": {"bad-name_key": MARKER}},
    {"vllm_model_registry": "ops:%s@10.0.0.5:5000" % MARKER}, {"vllm_image": "ops:%s@registry/vllm" % MARKER},
    {"vllm_model_hf_endpoint": "https://ops:%s@hub.example" % MARKER}, {"vllm_env": {"X": "hf_" + MARKER * 2}}])
def test_a_marker_secret_reaches_no_line(extra):
    out = site(**extra)
    assert MARKER not in repr(out.refusals) + repr(out.warnings)
    assert out.refusals or MARKER not in repr(out.launches)   # a refused plan writes nothing


def test_redact_hides_by_name_and_by_shape():
    assert redact.shown("vllm_args['api_key']", "x") == redact.HIDDEN
    assert redact.shown("vllm_model_registry", "u:p@h:5000") == "***@h:5000"
    assert redact.line("vllm_env['A_SECRET']='v' (host a)") == "vllm_env['A_SECRET']='<hidden>' (host a)"
    assert redact.shown("vllm_args['max-num-batched-tokens']", 8) == 8


def test_the_tracker_on_a_nodes_api_port_is_refused():
    refused(site(vllm_model_p2p=True, vllm_model_p2p_port=8000, vllm_port=8000), "vllm_model_p2p_port", "8000")


@pytest.mark.parametrize("address", ["0.0.0.0", "127.0.0.1"])
def test_a_peer_to_peer_address_nodes_cannot_reach_is_refused(address):
    refused(site(vllm_model_p2p=True, vllm_model_p2p_address=address), "vllm_model_p2p_address")


def routed(**router_vars):
    common = {"vllm_cluster": "c1", "vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
              "vllm_strategy": "dp", "vllm_model_revision": REVISION, "vllm_image": IMAGE, "vllm_api_open": True,
              "vllm_version": "0.32.0",
              "vllm_model_source": "hub"}
    hostvars = {"n1": dict(common, ansible_host="10.0.0.1"), "n2": dict(common, ansible_host="10.0.0.2"),
                "r1": dict({"ansible_host": "10.0.0.9"}, **router_vars)}
    groups = {"all": ["n1", "n2", "r1"], "ungrouped": [], "vllm_clusters": ["n1", "n2"], "c1": ["n1", "n2"],
              "vllm_routers": ["r1"]}
    return plan_run.run(DictReader(hostvars), ["n1", "n2"], groups)


def test_a_router_that_names_an_unknown_cluster_is_refused():
    refused(routed(vllm_router_clusters=["nope"]), "vllm_router_clusters", "host r1", "nope")


@pytest.mark.parametrize("router_vars, variable", [
    ({"vllm_router_policy": "least_loaded"}, "vllm_router_policy"),
    ({"vllm_router_port": 8080, "vllm_router_prometheus_port": 8080}, "vllm_router_prometheus_port"),
    ({"vllm_router_extra_args": {"policy": "random"}}, "vllm_router_extra_args"),
    ({"vllm_router_workers": ["ftp://w1"]}, "vllm_router_workers[0]")])
def test_every_router_refusal_is_the_plans_before_any_host(router_vars, variable):
    refused(routed(**router_vars), variable, "host r1")


def test_the_plan_compiles_each_router_and_hands_it_to_its_host():
    out = routed(vllm_router_policy="cache_aware")
    config = out.routers["r1"]
    assert config["worker-urls"] == [out.launches["n1"]["cluster"]["endpoint"]] and config["policy"] == "cache_aware"
    assert out.hosts["r1"]["router"] == config
    assert plan_run.shares(out, ["r1"])["r1"]["router"] == config


def test_a_single_nodes_wildcard_address_is_refused_its_loopback_is_not():
    refused(site(hosts=1, vllm_control_address="0.0.0.0", vllm_strategy="single"), "vllm_control_address", "wildcard")
    out = site(hosts=1, vllm_control_address="127.0.0.1", vllm_strategy="single")
    assert [line for line in out.refusals if "vllm_control_address" in line] == []


def test_a_url_with_a_login_is_refused_without_showing_it():
    out = site(vllm_model_hf_endpoint="https://ops:%s@hub.example" % MARKER)
    refused(out, "vllm_model_hf_endpoint", "login")
    assert MARKER not in repr(out.refusals)


@pytest.mark.parametrize("key", ["--api-key=%s" % MARKER, "api_key=%s" % MARKER, "--hf-token=%s" % MARKER])
def test_a_key_written_with_its_value_in_a_flag_name_is_hidden(key):
    out = site(vllm_args={key: True})
    assert out.refusals and MARKER not in repr(out.refusals) + repr(out.warnings)


def test_a_compile_cache_that_holds_the_state_directory_is_refused():
    out = site(vllm_compile_cache_dir="/var/lib/inferops-vllm", vllm_model_cache_dir="/srv/hf")
    refused(out, "vllm_compile_cache_dir", "vllm_image_state_dir")

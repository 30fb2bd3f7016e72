"""Accepted means safe: whole inventories, hostile ones among them, generated and planned (plan_run, as the plan
action runs it). For every plan that is accepted, the policy's invariants hold on the compiled output, whichever
input produced it: every host path is safe, every port in range, every peer address reachable, every argv and env
value one line of printable text that vllm.yaml, vllm.env and the review .sh read back exactly, no sensitive
pass-through that vllm_allow_sensitive does not name, no second model; and a marker secret, put where secrets go
wrong, appears in no line, accepted or refused.

A fixed budget (INFEROPS_FUZZ_EXAMPLES, default 120) and a seed printed in pytest's header (INFEROPS_FUZZ_SEED
replays a run)."""
import ipaddress
import json
import os
import shlex
import tempfile

import yaml

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    fleet, passthrough, plan_run, site_policy, site_services)
from ansible_collections.inferops.vllm.plugins.module_utils.controller import vllm_surface
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import OWNED_FLAGS
from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_run_command
from ansible_collections.inferops.vllm.plugins.module_utils.controller.role_settings import serve_env_file
from ansible_collections.inferops.vllm.plugins.module_utils.node.node_state import parse_env_file
from ansible_collections.community.docker.plugins.module_utils._api.utils.utils import parse_env_file as docker_env
from test_plan_run import DictReader, IMAGE
from clusters import REVISION

SEED = int(os.environ.get("INFEROPS_FUZZ_SEED", "0"))
BUDGET = settings(max_examples=int(os.environ.get("INFEROPS_FUZZ_EXAMPLES", "120")), deadline=None,
                  suppress_health_check=[HealthCheck.too_slow], database=None)
MARKER = "MARKERsecret51f0"
TMP = tempfile.mkdtemp(prefix="site-policy-fuzz-")
SURFACE = vllm_surface.load("0.32.0")
FLAGS = sorted(f[2:] for f in SURFACE.options if f[2:] not in OWNED_FLAGS)
SEGMENTS = ["srv", "proc", "1", "root", "..", ".ssh", "var", "lib", "run", "docker", "etc", "inferops-vllm", "hf",
            "nvme", "tmp", "mnt", ".aws", "data", "."]
PATHS = st.one_of(
    st.sampled_from(["/var/lib/inferops-vllm/cc", "/srv/cc", "/proc/1/root", "/run/docker.sock", "/root/.ssh",
                     "/etc/inferops-vllm", "/srv", "/var/lib/inferops-vllm/huggingface", "/nvme/x", "/mnt/.aws/x",
                     "/srv/models/huggingface"]),
    st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts)))
TEXT = st.sampled_from(["1", "main", "x\u2028y", "a\x0bb", "\u202eevil", "/", "other/repo", "ngram", "10",
                        "ops:%s@reg:5000" % MARKER, "hf_" + "t0ken" * 4])
VALUES = st.one_of(TEXT, st.sampled_from([True, False, 1, 8, 10 ** 30, 0.5, {"model": "a/b"}, {"method": "ngram"}]))
ENV_NAMES = st.sampled_from(["NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "VLLM_SERVER_DEV_MODE", "LD_PRELOAD",
                             "VLLM_LOGGING_LEVEL", "UCX_TLS", "SOMETHING", "VLLM_ALLOW_INSECURE_SERIALIZATION",
                             "HF_HUB_ENABLE_HF_TRANSFER"])
# where a secret goes wrong: a name that says credential, any spelling of vLLM's key flag
SECRET_ENV = st.sampled_from(["MY_TOKEN", "bad-name_key", "HF-TOKEN", "S3_SECRET_ACCESS_KEY", "DB_PASSWORD"])
SECRET_FLAGS = st.sampled_from(["api_key", "--api-key", "API-KEY", "hf_token", "--hf-token"])
ADDRESSES = st.sampled_from(["10.0.0.%d", "10.0.0.%d", "10.0.0.%d", "0.0.0.0", "127.0.0.1", "224.0.0.1", "10.1.%d.1"])
ALLOWABLE = ["distributed-executor-backend", "uds", "VLLM_SERVER_DEV_MODE", "CUDA_VISIBLE_DEVICES", "tokenizer",
             "allowed-local-media-path", "SOMETHING"]


def mostly(safe, hostile):
    """One draw in six hostile: whole inventories must often be accepted for the invariants to be tried."""
    return st.sampled_from([safe, safe, safe, safe, safe, hostile]).flatmap(lambda strategy: strategy)


SAFE_ARGS = st.dictionaries(st.sampled_from(["max-num-seqs", "seed", "max-num-batched-tokens", "enforce-eager",
                                             "disable-log-stats", "distributed-executor-backend", "uds"]),
                            st.sampled_from([8, 1, 2048, True]), max_size=2)
SAFE_ENV = st.dictionaries(st.sampled_from(["NCCL_DEBUG", "VLLM_LOGGING_LEVEL", "UCX_TLS", "VLLM_SERVER_DEV_MODE",
                                            "CUDA_VISIBLE_DEVICES", "SOMETHING"]),
                           st.sampled_from(["WARN", "INFO", "1", "tcp"]), max_size=2)


@st.composite
def inventories(draw):
    extra = {
        "vllm_compile_cache_dir": draw(mostly(st.sampled_from(["/var/lib/inferops-vllm/cc", "/srv/cc", "/nvme/cc"]),
                                              PATHS)),
        "vllm_model_cache_dir": draw(mostly(st.sampled_from(["/var/lib/inferops-vllm/huggingface", "/srv/hf"]),
                                            PATHS)),
        "vllm_host_path_roots": draw(st.sampled_from([[], ["/nvme"], ["/etc"], ["/nvme", "/lustre/hf"]])),
        "vllm_args": dict(draw(mostly(SAFE_ARGS, st.dictionaries(st.sampled_from(FLAGS), VALUES, max_size=3))),
                          **draw(mostly(st.just({}), st.dictionaries(SECRET_FLAGS, st.just(MARKER), max_size=1)))),
        "vllm_env": dict(draw(mostly(SAFE_ENV, st.dictionaries(ENV_NAMES, TEXT, max_size=3))),
                         **draw(mostly(st.just({}), st.dictionaries(SECRET_ENV, st.just(MARKER), max_size=1)))),
        "vllm_allow_sensitive": draw(st.lists(st.sampled_from(ALLOWABLE), max_size=4, unique=True)),
        "vllm_port": draw(mostly(st.sampled_from([8000, 18000]), st.sampled_from([51500, 65535]))),
        "vllm_model_p2p": draw(st.booleans()),
        "vllm_model_registry": draw(mostly(st.just("10.0.0.5:5000"), st.just("ops:%s@10.0.0.5:5000" % MARKER))),
        "vllm_model": draw(mostly(st.just("inferops/tiny-k3"), st.sampled_from(["org/../../..", "https://hf.co/a/b"]))),
        # the site services: a registry the site runs (or not), a store host, the tracker's address
        "vllm_image_mirror": draw(st.sampled_from(["", "10.0.0.5:5000", "10.0.0.5:5001"])),
        "vllm_image_mirror_deploy": draw(st.booleans()),
        "vllm_model_store_host": draw(mostly(st.sampled_from(["", "n2", "reg"]), st.just("nowhere"))),
        "vllm_model_p2p_address": draw(mostly(st.just(""), st.sampled_from(["10.0.0.9", "0.0.0.0", "224.0.0.1"]))),
    }
    address = draw(ADDRESSES)
    common = {"vllm_cluster": "c1", "vllm_profile": "cpu_lab", "vllm_gpu_model": "CPU", "vllm_fabric": "ethernet",
              "vllm_strategy": "dp", "vllm_model_revision": REVISION, "vllm_image": IMAGE, "vllm_api_open": True,
              "vllm_model_source": "site", "vllm_version": "0.32.0"}
    common.update(extra)
    hostvars = {"n%d" % i: dict(common, ansible_host="10.0.0.%d" % i,
                                vllm_control_address=address % i if "%" in address else address) for i in (1, 2)}
    return hostvars, extra


def assert_safe(out, extra):
    allowed = set(extra["vllm_allow_sensitive"])
    for host, launch in out.launches.items():
        for _variable, path in site_policy.launch_paths(launch):
            assert site_policy.path_problem(path, extra["vllm_host_path_roots"]) is None, (host, path)
        for text in site_policy.strings([launch["argv"], launch["env"], launch["container"]]):
            assert site_policy.bad_char(text) is None, (host, text)
        # vllm.yaml reads back as the planned args; the review .sh splits into the planned argv
        assert yaml.safe_load(launch["config_yaml"]) == launch["args"], host
        argv = shlex.split(docker_run_command(launch, IMAGE))
        assert argv[-len(launch["argv"]) - 1:] == [IMAGE] + launch["argv"], host
        # vllm.env round-trips through the collection's reader and community.docker's (docker's rules)
        text = serve_env_file(launch, {})
        path = os.path.join(TMP, "vllm.env")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        assert parse_env_file(text) == docker_env(path) == {k: str(v) for k, v in launch["env"].items()}
        for use in fleet.launch_ports(launch, None):
            assert 1 <= use.port <= 65535 and not (extra["vllm_model_p2p"] and 51413 <= use.port <= 51612)
        if len(launch["cluster"]["nodes"]) > 1:
            for _variable, address in site_policy.peer_addresses(launch):
                parsed = ipaddress.ip_address(address)
                assert not (parsed.is_unspecified or parsed.is_loopback or parsed.is_multicast), address
        assert site_policy.model_problem(launch["args"]["model"], "site") is None
        for flag, source in launch["sources"].items():
            if source in ("vllm_args", "vllm_site_args") and flag in launch["args"]:
                value = launch["args"][flag]
                assert passthrough.second_model(flag, value) is None
                if value is not False and flag not in passthrough.SECOND_MODEL_FLAGS:
                    assert passthrough.flag_kind(flag) != passthrough.SENSITIVE or flag in allowed, flag
            if source in ("vllm_env", "vllm_site_env"):
                assert passthrough.env_kind(flag, frozenset(SURFACE.env_vars)) != passthrough.SENSITIVE \
                    or flag in allowed, flag


def assert_services_safe(out, groups):
    """What the roles apply as the plan handed it: the store and the registry's host are hosts of the inventory, the
    swarm has a reachable tracker, each node pulls the digest its launch was compiled for, and the registry the
    site runs is the one the nodes pull through."""
    image, weights = out.services["image"], out.services["weights"]
    assert weights.store_host in groups["all"] and weights.registry
    if weights.p2p_nodes:
        parsed = ipaddress.ip_address(weights.tracker_address)
        assert not (parsed.is_unspecified or parsed.is_multicast), weights.tracker_address
    for launch in out.launches.values():
        pull = launch["cluster"]["pull"]
        assert pull["pull_ref"].endswith("@" + launch["cluster"]["image"].rsplit("@", 1)[1])
        assert pull["pull_ref"].startswith(image.mirror + "/" if image.mirror else launch["cluster"]["image"])
        assert pull["mirror_host"] in groups["all"] or not image.mirror
    if image.deploy:
        assert image.mirror.endswith(":%d" % image.port) and image.host in groups["all"]
        assert (image.host, image.port) in [(f.host, int(f.port)) for f in out.flows]
    for name, service in out.services.items():
        text = json.dumps(site_services.as_json(service))
        assert json.loads(text) == site_services.as_json(service), name


# plans fuzzed and plans accepted in this process: a fuzz whose every plan is refused proves nothing
PLANS = {"fuzzed": 0, "accepted": 0}


@seed(SEED)
@BUDGET
@given(inventories())
def test_an_accepted_plan_is_a_safe_plan(case):
    hostvars, extra = case
    hostvars = dict(hostvars, reg={"ansible_host": "10.0.0.5"})   # the site registry's host: no vllm_control_address
    groups = {"all": ["n1", "n2", "reg"], "ungrouped": [], "vllm_clusters": ["n1", "n2"], "c1": ["n1", "n2"],
              "vllm_registry_mirrors": ["reg"]}
    out = plan_run.run(DictReader(hostvars), ["n1", "n2"], groups)
    PLANS["fuzzed"] += 1
    PLANS["accepted"] += not out.refusals
    shown = repr(out.refusals) + repr(out.warnings)
    assert MARKER not in shown
    assert all("\n" not in line for line in out.refusals + out.warnings)
    if not out.refusals:
        assert MARKER not in repr(out.launches)
        assert_safe(out, extra)
        assert_services_safe(out, groups)


def test_the_fuzz_reached_accepted_plans():
    """After the property above (when it ran in this process): some plans were accepted, so the safety check ran."""
    if PLANS["fuzzed"]:
        assert PLANS["accepted"] > 0, "every fuzzed plan was refused: the base inventory no longer plans (%s)" % PLANS

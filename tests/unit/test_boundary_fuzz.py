"""The boundary, fuzzed: hostile values (newline, NUL, '../', absolute paths, quotes, $(), blanks, very long and
non-ASCII strings) in every string variable the plan reads, in host names and in the cluster's group name, through
the plan's own path (names, then compile_inventory, then the review files). Each inventory must be refused in
one line per problem, without a traceback, or plan inert output: vllm.yaml parses to exactly the planned args,
vllm.env reads back (community.docker's parser) to exactly the planned env, the review .sh splits (as bash
splits it) into the planned argv, and nothing is written outside the output directory.

A fixed budget (INFEROPS_FUZZ_EXAMPLES, default 120 per test) and a seed printed in pytest's header
(INFEROPS_FUZZ_SEED replays a run)."""
import os
import shlex

import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from ansible_collections.inferops.vllm.plugins.module_utils.controller.plan_output import write_review
from ansible_collections.inferops.vllm.plugins.module_utils.controller import plan, readiness
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import VAR_TYPES, ClusterError
from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_run_command
from ansible_collections.community.docker.plugins.module_utils._api.utils.utils import parse_env_file
from ansible_collections.inferops.vllm.plugins.module_utils.controller.role_settings import serve_env_file
from clusters import REVISION

SEED = int(os.environ.get("INFEROPS_FUZZ_SEED", "0"))
BUDGET = settings(max_examples=int(os.environ.get("INFEROPS_FUZZ_EXAMPLES", "120")), deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], database=None)
IMAGE = "registry.example/vllm/vllm-openai@sha256:" + "a" * 64
FRAGMENTS = ["\n", "\r", "\x00", "\x1b", "\x85", "\u2028", "../", "/", "..", "'", '"', "$(id)", "`id`", " ", "\t",
             "=", ":", "#", "\\", "caf\u00e9", "{{ 7 * 7 }}", "%s", ",", "^", "*", "a" * 300, "-", "."]
HOSTILE = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), min_size=1, max_size=4).map("".join)
# every string (and list-of-string) variable the plan reads, and the values it reads from mappings
STRING_VARS = sorted(name for name, kind in VAR_TYPES.items() if kind.kind in ("str", "list"))
TARGETS = st.sampled_from(STRING_VARS + ["<host>", "<group>", "vllm_env value", "vllm_env name", "vllm_args value"])


def inventory(target, value):
    """(groups, hostvars, cluster group name) of a two-node H200 cluster with `value` put at `target`."""
    group, hosts = "c1", ["gpu-a", "gpu-b"]
    if target == "<host>":
        hosts = ["gpu-a", value]
    if target == "<group>":
        group = value
    base = {"vllm_cluster": group, "vllm_gpu_model": "H200", "vllm_fabric": "infiniband", "vllm_strategy": "tp_pp",
            "vllm_control_interface": "bond0", "vllm_ib_hcas": ["mlx5_0"], "vllm_model_revision": REVISION,
            "vllm_image": IMAGE, "vllm_api_key": True, "vllm_version": "0.32.0"}
    if target in STRING_VARS:
        base[target] = [value] if VAR_TYPES[target].kind == "list" else value
    elif target == "vllm_env value":
        base["vllm_env"] = {"NCCL_DEBUG": value}
    elif target == "vllm_env name":
        base["vllm_env"] = {value: "1"}
    elif target == "vllm_args value":
        base["vllm_args"] = {"served-model-name": value}
    hostvars = {host: dict(base, vllm_control_address="10.0.0.%d" % (i + 1)) for i, host in enumerate(hosts)}
    return {group: hosts, "all": hosts}, hostvars, group


def planned(groups, hostvars, group):
    """The plan's order: names first, then the compile; (refusal lines, launches)."""
    lines = readiness.name_problems(list(hostvars), [group])
    if lines:
        return lines, {}
    try:
        return [], plan.compile_inventory(groups, hostvars)[group]
    except ClusterError as exc:
        return str(exc).splitlines(), {}


def assert_inert(launches, out_dir):
    write_review(str(out_dir), launches)
    for host, launch in launches.items():
        config = yaml.safe_load(launch["config_yaml"])
        assert config == launch["args"], host
        env_file = out_dir / ("%s.env" % len(os.listdir(out_dir)))
        env_file.write_text(serve_env_file(launch, {"VLLM_API_KEY": "k"}), encoding="utf-8")
        assert parse_env_file(str(env_file)) == dict(launch["env"], VLLM_API_KEY="k")
        env_file.unlink()
        argv = shlex.split(docker_run_command(launch, IMAGE))
        assert argv[-len(launch["argv"]) - 1:] == [IMAGE] + launch["argv"], host
    root = os.path.realpath(str(out_dir))
    for folder, _dirs, files in os.walk(root):
        for name in files:
            assert os.path.realpath(os.path.join(folder, name)).startswith(root + os.sep)


# plans fuzzed and plans accepted in this process: a fuzz whose every plan is refused proves nothing
PLANS = {"fuzzed": 0, "accepted": 0}


def refused_in_one_line_or_inert(out_dir, target, value):
    lines, launches = planned(*inventory(target, value))
    PLANS["fuzzed"] += 1
    PLANS["accepted"] += not lines
    if lines:
        for line in lines:
            assert "Traceback" not in line and "Fix:" in line, line
        return
    assert_inert(launches, out_dir)


@seed(SEED)
@BUDGET
@given(target=TARGETS, value=HOSTILE)
def test_a_hostile_value_is_refused_in_one_line_or_planned_inert(tmp_path_factory, target, value):
    refused_in_one_line_or_inert(tmp_path_factory.mktemp("plan"), target, value)


@seed(SEED)
@BUDGET
@given(target=TARGETS, value=st.text(max_size=40))
def test_any_text_is_refused_in_one_line_or_planned_inert(tmp_path_factory, target, value):
    refused_in_one_line_or_inert(tmp_path_factory.mktemp("plan"), target, value)


def test_the_fuzz_reached_accepted_plans():
    """After the fuzz tests above (when they ran in this process): some plans were accepted, so the inert check ran."""
    if PLANS["fuzzed"]:
        assert PLANS["accepted"] > 0, "every fuzzed plan was refused: the inventory itself no longer plans (%s)" % PLANS

"""The env file vllm_serve writes (module_utils/controller/role_settings.py, serve_env_file; the filter of that name),
read back by the very parser docker_container's env_file option uses (community.docker's parse_env_file): every
variable the plan lets through comes back as one variable with its exact value (issue #26, item 1)."""
import pytest
from hypothesis import given, strategies as st

from ansible_collections.community.docker.plugins.module_utils._api.utils.utils import parse_env_file
from ansible_collections.inferops.vllm.plugins.module_utils.controller.role_settings import (
    RoleSettingsError, secret_problems, serve_env_file)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.boundary import CONTROL
from ansible_collections.inferops.vllm.plugins.module_utils.controller.plain_input import ENV_NAME
from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state
from clusters import compile_


@pytest.mark.parametrize("env", [
    {"NCCL_DEBUG": "WARN", "WITH_EQUALS": "a=b=c", "HASH": "#not-a-comment", "QUOTES": "'\"x\"'",
     "SPACE_INSIDE": "a b", "DOLLAR": "$(id)", "UNICODE": "caf\u00e9"},
])
def test_env_file_reads_back_exactly(tmp_path, env):
    # names neither vLLM nor a known library reads are sensitive (passthrough): named, they pass
    launch = compile_(vllm_env=env, vllm_api_key=True, vllm_allow_sensitive=sorted(env))["n1"]
    text = serve_env_file(launch, {"VLLM_API_KEY": "the-key"})
    path = tmp_path / "vllm.env"
    path.write_text(text, encoding="utf-8")
    parsed = parse_env_file(str(path))
    assert parsed == dict(launch["env"], VLLM_API_KEY="the-key") == dict(node_state.parse_env_file(text))
    for name, value in env.items():
        assert parsed[name] == value


def test_what_the_plan_refuses_would_have_rewritten_the_file(tmp_path):
    """Without the plan's refusal, a newline in a value becomes a second variable."""
    launch = compile_()["n1"]
    launch["env"] = dict(launch["env"], FOO="x\nLD_PRELOAD=/tmp/evil.so")
    path = tmp_path / "vllm.env"
    path.write_text(serve_env_file(launch, {}), encoding="utf-8")
    assert parse_env_file(str(path))["LD_PRELOAD"] == "/tmp/evil.so"


# what the plan lets through: a name of the boundary's format, a value of one line
VALUES = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30).filter(
    lambda text: not CONTROL.search(text) and text == text.strip())
KEYS = VALUES.filter(bool)


@given(env=st.dictionaries(st.from_regex(ENV_NAME, fullmatch=True), VALUES, max_size=6), key=KEYS)
def test_any_environment_the_plan_accepts_reads_back_exactly(tmp_path_factory, env, key):
    launch = {"env": env, "secret_env": {"VLLM_API_KEY": "vllm_api_key"}} if "VLLM_API_KEY" not in env else {"env": env}
    secrets = {"VLLM_API_KEY": key} if "secret_env" in launch else {}
    path = tmp_path_factory.mktemp("env") / "vllm.env"
    path.write_text(serve_env_file(launch, secrets), encoding="utf-8")
    assert parse_env_file(str(path)) == dict(env, **secrets)


@given(bad=st.sampled_from([" ", "\t", "\n", "\r", "\x00", "\x7f", "\x85"]), at=st.sampled_from(["start", "middle", "end"]),
       rest=st.text(st.characters(whitelist_categories=("L", "N")), max_size=8))
def test_a_secret_that_would_not_read_back_is_refused_naming_the_variable_only(bad, at, rest):
    """The plan never reads a secret: its value is judged where the env file is built, and the message holds the
    variable's name, never the value."""
    key = {"start": bad + "S3CR3T" + rest, "middle": "S3CR3T" + bad + rest, "end": "S3CR3T" + rest + bad}[at]
    launch = {"env": {}, "secret_env": {"VLLM_API_KEY": "vllm_api_key"}}
    if bad == " " and at == "middle" and rest:   # a blank inside reads back as it is
        secret_problems(launch, {"VLLM_API_KEY": key})
        return
    with pytest.raises(RoleSettingsError) as refused:
        secret_problems(launch, {"VLLM_API_KEY": key})
    assert str(refused.value).startswith("vllm_api_key (the container's VLLM_API_KEY): ")
    assert "Fix: set vllm_api_key" in str(refused.value) and "S3CR3T" not in str(refused.value)
    with pytest.raises(RoleSettingsError, match="^vllm_api_key: not set"):
        secret_problems(launch, {})

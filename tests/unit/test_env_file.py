"""The env file vllm_serve writes (roles/vllm_serve/vars/main.yml, vllm_serve_env_file), read back by the very
parser docker_container's env_file option uses (community.docker's parse_env_file): every variable the plan
lets through comes back as one variable with its exact value (issue #26, item 1)."""
import os

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:   # ansible-core 2.19: role vars files are trusted templates
    from ansible.template import trust_as_template
except ImportError:   # 2.18 templates every string
    def trust_as_template(value):
        return value

from ansible_collections.community.docker.plugins.module_utils._api.utils.utils import parse_env_file
from clusters import compile_

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
VARS = os.path.join(ROOT, "roles", "vllm_serve", "vars", "main.yml")


def rendered_env_file(launch, secrets):
    with open(VARS, encoding="utf-8") as handle:
        template = yaml.safe_load(handle)["vllm_serve_env_file"]
    # the same builtin lookup by its short name: unit tests run without Ansible's collection loader
    assert "lookup('ansible.builtin.vars', var)" in template
    template = trust_as_template(template.replace("lookup('ansible.builtin.vars', var)", "lookup('vars', var)"))
    loader = DataLoader()
    return Templar(loader=loader, variables=dict(secrets, vllm_launch=launch)).template(template)


@pytest.mark.parametrize("env", [
    {"NCCL_DEBUG": "WARN", "WITH_EQUALS": "a=b=c", "HASH": "#not-a-comment", "QUOTES": "'\"x\"'",
     "SPACE_INSIDE": "a b", "DOLLAR": "$(id)", "UNICODE": "caf\u00e9"},
])
def test_env_file_reads_back_exactly(tmp_path, env):
    launch = compile_(vllm_env=env, vllm_api_key=True)["n1"]
    text = rendered_env_file(launch, {"vllm_api_key": "the-key"})
    path = tmp_path / "vllm.env"
    path.write_text(text, encoding="utf-8")
    parsed = parse_env_file(str(path))
    assert parsed == dict(launch["env"], VLLM_API_KEY="the-key")
    for name, value in env.items():
        assert parsed[name] == value


def test_what_the_plan_refuses_would_have_rewritten_the_file(tmp_path):
    """Without the plan's refusal, a newline in a value becomes a second variable."""
    launch = compile_()["n1"]
    launch["env"] = dict(launch["env"], FOO="x\nLD_PRELOAD=/tmp/evil.so")
    path = tmp_path / "vllm.env"
    path.write_text(rendered_env_file(launch, {}), encoding="utf-8")
    assert parse_env_file(str(path))["LD_PRELOAD"] == "/tmp/evil.so"

"""Every variable a user sets is an option in some role's meta/argument_specs.yml, so that
`ansible-doc -t role inferops.vllm.<role>` shows it: what the example inventories set (hosts.yml, group_vars,
host_vars), what the README and docs/*.md tell a user to set, and every name the plan reads (cluster.VAR_TYPES,
CLUSTER_DEFAULTS, HOST_VARS, SECRET_ENV, DRIVER_VARS). A name documented by several roles is described once:
the same type, no_log and text everywhere. Secrets are no_log options, which the plan never reads."""
import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller.plan_run import role_options
from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, known_vars

ROOT = Path(__file__).resolve().parents[2]

# Ansible's own connection and privilege variables: documented by Ansible, never by this collection.
ANSIBLE_OWN = frozenset({
    "ansible_host", "ansible_port", "ansible_user", "ansible_connection", "ansible_ssh_private_key_file",
    "ansible_ssh_common_args", "ansible_python_interpreter", "ansible_become", "ansible_become_user",
    "ansible_become_password",
})
# The collection's inventory groups: a YAML inventory in the docs names them as keys, but they are not variables.
GROUPS = frozenset({"vllm_clusters", "vllm_routers", "vllm_prometheus", "vllm_registry_mirrors"})


def documented():
    """{option: [(role, entry point, spec)]} over every role's argument specs."""
    out = {}
    for path in sorted(ROOT.glob("roles/*/meta/argument_specs.yml")):
        for entry, spec in (yaml.safe_load(path.read_text())["argument_specs"] or {}).items():
            for name, option in (spec.get("options") or {}).items():
                out.setdefault(name, []).append((path.parts[-3], entry, option or {}))
    return out


def _inventory_vars(node):
    """The variables a YAML inventory sets: each group's vars and each host's own."""
    for group in (node or {}).values():
        if not isinstance(group, dict):
            continue
        yield from (group.get("vars") or {})
        for host_vars in (group.get("hosts") or {}).values():
            yield from (host_vars or {})
        yield from _inventory_vars(group.get("children"))


def inventory_vars():
    """{variable: the first file that sets it} over inventories/*."""
    out = {}
    for inventory in sorted(p for p in (ROOT / "inventories").iterdir() if p.is_dir()):
        hosts = inventory / "hosts.yml"
        if hosts.exists():
            for name in _inventory_vars(yaml.safe_load(hosts.read_text())):
                out.setdefault(name, str(hosts.relative_to(ROOT)))
        for kind in ("group_vars", "host_vars"):
            for path in sorted((inventory / kind).rglob("*.y*ml")):
                for name in yaml.safe_load(path.read_text()) or {}:
                    out.setdefault(name, str(path.relative_to(ROOT)))
    return out


def doc_vars():
    """{variable: doc} for the collection's names a doc sets: keys of its YAML blocks, -e name=value, and
    `name: value` or `name=value` in running text."""
    managed = known_vars.prefixes(str(ROOT))
    key = re.compile(r"^\s*(?:-\s+)?([a-z][a-z0-9_]*)\s*:", re.M)
    extra = re.compile(r"-e\s+['\"]?([a-z][a-z0-9_]*)=")
    inline = re.compile(r"`([a-z][a-z0-9_]*)\s*(?::\s|=(?!=))[^`]*`")
    out = {}
    for path in [ROOT / "README.md", ROOT / "CONTRIBUTING.md"] + sorted((ROOT / "docs").glob("*.md")):
        if not path.exists():
            continue
        text = path.read_text()
        names = set(inline.findall(text))
        for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
            names |= set(extra.findall(body)) | (set(key.findall(body)) if lang in ("yaml", "yml") else set())
        for name in names:
            if name.startswith(managed) and name not in GROUPS:
                out.setdefault(name, str(path.relative_to(ROOT)))
    return out


def plan_vars():
    return (set(cluster.VAR_TYPES) | set(cluster.CLUSTER_DEFAULTS) | set(cluster.HOST_VARS)
            | set(cluster.SECRET_ENV.values()) | set(cluster.DRIVER_VARS) | {known_vars.ALLOW})


def test_every_variable_the_examples_set_is_an_option():
    options = documented()
    missing = ["%s (%s)" % (name, where) for name, where in sorted(inventory_vars().items())
               if name not in options and name not in ANSIBLE_OWN]
    assert missing == [], "not in any role's meta/argument_specs.yml: %s" % ", ".join(missing)


def test_every_variable_the_docs_set_is_an_option():
    options = documented()
    missing = ["%s (%s)" % (name, where) for name, where in sorted(doc_vars().items()) if name not in options]
    assert missing == [], "not in any role's meta/argument_specs.yml: %s" % ", ".join(missing)


def test_every_variable_the_plan_reads_is_an_option():
    options = documented()
    assert sorted(plan_vars() - set(options)) == []


def test_the_scans_find_what_the_issue_named():
    """The scans above are not vacuous."""
    assert {"vllm_image", "vllm_api_key", "vllm_cluster"} <= set(inventory_vars())
    assert {"vllm_hf_token", "vllm_api_key"} <= plan_vars()
    assert "ansible_host" in inventory_vars()
    assert len(doc_vars()) > 10


@pytest.mark.parametrize("name", sorted(n for n, places in documented().items() if len({p[0] for p in places}) > 1))
def test_a_variable_of_several_roles_is_described_once(name):
    """Across roles (a role's entry points may each say what they do with it)."""
    places = list({role: (role, entry, option) for role, entry, option in reversed(documented()[name])}.values())
    first = places[0][2]
    for role, entry, option in places[1:]:
        for key in ("type", "no_log", "description", "choices", "elements"):
            assert option.get(key) == first.get(key), "%s: %s differs between %s and %s.%s" % (
                name, key, "%s.%s" % places[0][:2], role, entry)


def test_the_plan_s_types_agree_with_every_role_that_documents_them():
    for name, places in documented().items():
        if name in cluster.VAR_TYPES:
            for role, entry, option in places:
                assert option.get("type", "str") == cluster.VAR_TYPES[name].kind, (name, role, entry)


def test_secrets_are_no_log_and_never_read_by_the_plan():
    options = documented()
    plan_reads = role_options()
    for secret in cluster.SECRET_ENV.values():
        assert options[secret] and all(option.get("no_log") is True for _r, _e, option in options[secret])
        assert secret not in plan_reads
    assert not [name for name, (_role, option) in plan_reads.items() if option.get("no_log")]
    # no role whose main entry point Ansible validates on the plan's path documents a secret there
    cluster_plan = yaml.safe_load((ROOT / "roles/cluster_plan/meta/argument_specs.yml").read_text())["argument_specs"]
    assert not set(cluster.SECRET_ENV.values()) & set(cluster_plan["main"]["options"])


def test_documented_secrets_still_plan_without_the_vault(tmp_path):
    """The secrets are options of vllm_serve, vllm_model, smoke_test and vllm_router now, whose variables the plan
    checks: still, a vault-encrypted vllm_hf_token and a vllm_api_key whose template cannot resolve (its vault
    file is not loaded) plan offline, and the plan only notes that the key is set."""
    import json
    import subprocess
    import sys
    from test_plan_playbook import run_plan, two_h200_nodes
    password = tmp_path / "vault-pass"
    password.write_text("not-given-to-the-plan\n")
    vaulted = subprocess.run([str(Path(sys.executable).parent / "ansible-vault"), "encrypt_string",
                              "--vault-password-file", str(password), "hunter2", "--name", "x"],
                             capture_output=True, text=True, check=True).stdout.split("x: ", 1)[1]
    inv = two_h200_nodes(tmp_path, "c1", (
        "vllm_model_revision: 0123456789abcdef0123456789abcdef01234567\nvllm_gpu_model: H200\n"
        "vllm_fabric: infiniband\nvllm_model_registry: 10.0.0.5:5000\n"
        "vllm_api_key: \"{{ vault_vllm_api_key }}\"\nvllm_hf_token: " + vaulted))
    result = run_plan(inv, tmp_path / "out")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    launch = json.loads((tmp_path / "out/c1/gpu-a.json").read_text())
    assert launch["secret_env"] == {"VLLM_API_KEY": "vllm_api_key", "HF_TOKEN": "vllm_hf_token"}
    assert "hunter2" not in result.stdout + result.stderr and "vault_vllm_api_key" not in result.stdout + result.stderr

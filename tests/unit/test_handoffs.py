"""Roles hand each other facts only through declared arguments: every fact that one role sets and another reads is
in specs.HANDOFFS and in docs/architecture.md's table, and a role that reads such a fact of its own host declares it
as an option of its main entry point (or as the default of one of its options)."""
import re
from pathlib import Path

import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller import specs

ROOT = Path(__file__).resolve().parents[2]
# the facts the collection's modules return (ansible_facts), by module: read as ansible_facts.<name>, since a fact
# reaches a template by its bare name only through INJECT_FACTS_AS_VARS, deprecated in ansible-core 2.21
MODULE_FACTS = {"inferops.vllm.gpu_facts": "gpu_facts"}
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())


def role_texts(role):
    """The role's task, variable, default, handler and template files, as text without comment lines (its docs and
    specs left out)."""
    folder = ROOT / "roles" / role
    return [re.sub(r"^\s*#.*$", "", p.read_text(), flags=re.M)
            for sub in ("tasks", "vars", "defaults", "handlers", "templates")
            for p in sorted((folder / sub).rglob("*")) if p.is_file()]


def tasks_of(data):
    """Every task of a tasks file's data, blocks opened."""
    for task in data or []:
        if isinstance(task, dict):
            yield task
            for key in ("block", "rescue", "always"):
                yield from tasks_of(task.get(key))


def set_by():
    """{fact: roles that set it}: set_fact keys, registered results and the facts of the modules a role calls."""
    out = {}
    for role in ROLES:
        for path in sorted((ROOT / "roles" / role / "tasks").glob("*.yml")):
            for task in tasks_of(yaml.safe_load(path.read_text())):
                names = list(task.get("ansible.builtin.set_fact") or task.get("set_fact") or {})
                names += [task["register"]] if "register" in task else []
                names += [fact for module, fact in MODULE_FACTS.items() if module in task]
                for name in names:
                    if name != "cacheable":
                        out.setdefault(name, set()).add(role)
    return out


def read_by(fact, own_host_only=False):
    """Roles whose files name the fact; own_host_only: read as the host's own variable (not hostvars[x].fact,
    not a quoted name for extract, not a module's name)."""
    pattern = re.compile(r"(?<![.\w'\"])(?<!module: )%s\b(?!:)" % fact if own_host_only else r"\b%s\b" % fact)
    return {role for role in ROLES if any(pattern.search(text) for text in role_texts(role))}


def declared(role, fact):
    options = specs.options(role)
    if fact in options:
        return True
    defaults = yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text()) \
        if (ROOT / "roles" / role / "defaults" / "main.yml").exists() else {}
    return any(isinstance(v, str) and re.search(r"\b%s\b" % fact, v) for v in (defaults or {}).values())


def test_every_fact_one_role_hands_another_is_a_handoff():
    prefixes = tuple(role + "_" for role in ROLES) + ("vllm_", "gpu_")
    crossing = {}
    for fact, setters in set_by().items():
        if not fact.startswith(prefixes):
            continue
        readers = read_by(fact) - setters
        if readers:
            crossing[fact] = sorted(readers)
    assert sorted(set(crossing) - set(specs.HANDOFFS)) == [], crossing


def test_a_role_declares_each_handoff_it_reads_of_its_own_host():
    setters = set_by()
    missing = ["%s reads %s" % (role, fact) for fact in specs.HANDOFFS
               for role in sorted(read_by(fact, own_host_only=True) - setters.get(fact, set()))
               if not declared(role, fact)]
    assert missing == []


def test_architecture_lists_every_handoff():
    text = (ROOT / "docs" / "architecture.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| what one role hands another |"))
    assert [fact for fact in specs.HANDOFFS if "`%s`" % fact not in row] == []


def test_no_fact_of_a_module_is_read_by_its_bare_name():
    bare = [(role, fact) for fact in MODULE_FACTS.values() for role in sorted(read_by(fact, own_host_only=True))]
    assert bare == [], "read these as ansible_facts.<fact> (or hand them on with set_fact)"


def registered():
    """{name: roles}: the results the roles' tasks and handlers register."""
    out = {}
    for role in ROLES:
        for sub in ("tasks", "handlers"):
            for path in sorted((ROOT / "roles" / role / sub).glob("*.yml")):
                for task in tasks_of(yaml.safe_load(path.read_text())):
                    if "register" in task:
                        out.setdefault(task["register"], set()).add(role)
    return out


def test_no_variable_in_vars_reads_a_registered_result():
    """vars/ states constants and values derived from the role's inputs: a value read off a registered result
    would depend on which tasks have run, so it lives in the task that reads it."""
    names = registered()
    found = {}
    for path in sorted((ROOT / "roles").glob("*/vars/*.yml")):
        for key, value in (yaml.safe_load(path.read_text()) or {}).items():
            text = yaml.safe_dump(value)
            used = sorted(name for name in names if re.search(r"\b%s\b" % name, text))
            if used:
                found["%s %s" % (path.relative_to(ROOT), key)] = used
    assert found == {}

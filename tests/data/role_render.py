"""Render a role's OS-specific values as Ansible would on a given OS, without a node: the role's own
loader task picks the vars file, its defaults/ and vars/ supply the data, and its task files supply
the module arguments, all templated with Ansible's Templar (ansible-core 2.18 and 2.19)."""
from pathlib import Path
from typing import Any, Dict, List, Optional

from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader
from ansible.template import Templar

try:  # 2.19 templates only trusted strings
    from ansible.template import trust_as_template
except ImportError:  # 2.18 templates every string
    def trust_as_template(value):
        return value

ROOT = Path(__file__).resolve().parents[2]
ROLES = ROOT / "roles"
# lookups (first_found) and the collection's own filters resolve as in a playbook run
init_plugin_loader([str(ROOT / ".collections")])
LOADER = DataLoader()


def load(path: Path) -> Any:
    """YAML as a playbook run loads it: strings in role files are templates."""
    try:
        return LOADER.load_from_file(str(path), trusted_as_template=True)
    except TypeError:  # 2.18 has no trust marking
        return LOADER.load_from_file(str(path))


def tasks_of(role: str, task_file: str) -> List[dict]:
    return load(ROLES / role / "tasks" / task_file) or []


def task(role: str, task_file: str, module: str, nth: int = 0) -> dict:
    """The nth task of a file (blocks included) that calls module (FQCN)."""
    found = [t for t in _flatten(tasks_of(role, task_file)) if module in t]
    assert len(found) > nth, "%s/tasks/%s has no %s task number %d" % (role, task_file, module, nth)
    return found[nth]


def _flatten(tasks: List[dict]) -> List[dict]:
    out: List[dict] = []
    for t in tasks:
        out.extend(_flatten(t["block"]) if "block" in t else [t])
    return out


class Role:
    """One role on one OS: facts, defaults, the OS vars file the loader picks, vars/main.yml."""

    def __init__(self, name: str, facts: Dict[str, str], overrides: Optional[dict] = None):
        self.name = name
        self.path = ROLES / name
        self.variables: Dict[str, Any] = dict(load(self.path / "defaults" / "main.yml") or {})
        self.variables.update(load(self.path / "vars" / "main.yml") or {})
        self.variables.update(overrides or {})
        self.variables["ansible_facts"] = dict(facts)
        self.variables["role_path"] = str(self.path)
        self.vars_file: Optional[Path] = None

    def render(self, value: Any, extra: Optional[dict] = None) -> Any:
        variables = dict(self.variables, **(extra or {}))
        if isinstance(value, str):
            value = trust_as_template(value)
        return Templar(loader=LOADER, variables=variables).template(value)

    def load_os_vars(self, task_file: str) -> Path:
        """Run the role's own 'include_vars: first_found' task: the file it picks and its data."""
        include = task(self.name, task_file, "ansible.builtin.include_vars")
        picked = Path(self.render(include["ansible.builtin.include_vars"], include.get("vars")))
        self.variables.update(load(picked) or {})
        self.vars_file = picked
        return picked

    def set_facts(self, task_file: str, name_prefix: str) -> None:
        """Apply the role's set_fact task whose name starts with name_prefix, key by key, as Ansible would."""
        for t in tasks_of(self.name, task_file):
            if t.get("name", "").startswith(name_prefix) and "ansible.builtin.set_fact" in t:
                args = t["ansible.builtin.set_fact"]
                self.variables.update({key: self.render(value) for key, value in args.items()})
                return
        raise AssertionError("%s/tasks/%s has no set_fact %r" % (self.name, task_file, name_prefix))

    def args(self, task_file: str, module: str, nth: int = 0, extra: Optional[dict] = None) -> dict:
        """The module arguments of a task, templated with the task's own vars."""
        t = task(self.name, task_file, module, nth)
        return self.render(t[module], dict(t.get("vars") or {}, **(extra or {})))

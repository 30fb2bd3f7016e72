"""Render a role's OS-specific values as Ansible would on a given OS, without a node: lookup inferops.vllm.os_data
(the one OS-data loader, named in the role's vars/main.yml) picks the vars file,
its defaults/ and vars/ supply the data, and its task files supply the module arguments, all
templated with Ansible's Templar (ansible-core 2.18 and 2.19). A role that sets up a repository
through os_packages is rendered through it: the caller's include_role vars, with the caller's
variables, become os_packages' inputs, and os_packages' own task files give the module arguments."""
from pathlib import Path
from typing import Any, Dict, List, Optional

from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader
from ansible.release import __version__ as _ansible_version
from ansible.template import Templar

ANSIBLE_VERSION = tuple(int(part) for part in _ansible_version.split(".")[:2])

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
OS_PACKAGES = "inferops.vllm.os_packages"
ROLE_CALLS = ("ansible.builtin.include_role", "ansible.builtin.import_role")


OMIT_218 = "__omit_place_holder__inferops_data_test" if ANSIBLE_VERSION < (2, 19) else ""


def drop_omitted(value: Any) -> Any:
    """What a module receives: arguments rendered as omit left out (2.19's Templar does it itself)."""
    if OMIT_218 and isinstance(value, dict):
        return {k: drop_omitted(v) for k, v in value.items() if v != OMIT_218}
    if OMIT_218 and isinstance(value, list):
        return [drop_omitted(v) for v in value if v != OMIT_218]
    return value


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


def module_of(t: dict) -> str:
    """The module a task calls: every task here names it by FQCN, no keyword has a dot."""
    found = [key for key in t if "." in key]
    assert len(found) == 1, t
    return found[0]


def os_packages_call(t: dict, tasks_from: str = "main") -> Optional[str]:
    """include_role/import_role when t calls os_packages' tasks_from entry point, else None."""
    for module in ROLE_CALLS:
        call = t.get(module)
        if isinstance(call, dict) and call.get("name") == OS_PACKAGES and call.get("tasks_from", "main") == tasks_from:
            return module
    return None


def os_packages_callers() -> List[str]:
    """The roles that set up a repository through os_packages (its main entry point)."""
    callers = set()
    for path in ROLES.glob("*/tasks/*.yml"):
        if path.parent.parent.name != "os_packages" and any(os_packages_call(t) for t in _flatten(load(path) or [])):
            callers.add(path.parent.parent.name)
    return sorted(callers)


def _flatten(tasks: List[dict]) -> List[dict]:
    out: List[dict] = []
    for t in tasks:
        out.extend(_flatten(t["block"]) if "block" in t else [t])
    return out


def gpu_node_launch(model: str = "H200") -> Dict[str, Any]:
    """The plan's launch for one node of `model` (vllm_gpu_model), as cluster_plan hands it to the roles."""
    # imported here: the collection loads with the plugin loader above
    # pylint: disable-next=import-outside-toplevel
    from ansible_collections.inferops.vllm.plugins.module_utils.controller import cluster, launch
    # K3 does not fit one H200 node (capacity_fit): the roles' paths are the point here, so the check is off
    members = [("node1", {"vllm_cluster": "c1", "vllm_version": "0.32.0", "vllm_gpu_model": model, "vllm_strategy": "single",
                          "vllm_model_revision": "0123456789abcdef0123456789abcdef01234567",
                          "vllm_model_weight_gb": 0})]
    return launch.compile_cluster(cluster.build("c1", members))["node1"]


class Role:
    """One role on one OS: facts, defaults, the OS vars file the loader picks, vars/main.yml."""

    def __init__(self, name: str, facts: Dict[str, str], overrides: Optional[dict] = None):
        self.name = name
        self.path = ROLES / name
        # one GPU node with the launch the plan compiles for it (the roles read its host_stack)
        self.variables: Dict[str, Any] = {"inventory_hostname": "node1", "vllm_launch": gpu_node_launch()}
        self.variables.update(load(self.path / "defaults" / "main.yml") or {})
        self.variables.update(load(self.path / "vars" / "main.yml") or {})
        self.variables.update(overrides or {})
        self.variables["ansible_facts"] = dict(facts)
        self.variables["role_path"] = str(self.path)
        self.vars_file: Optional[Path] = None

    def render(self, value: Any, extra: Optional[dict] = None) -> Any:
        variables = dict(self.variables, **(extra or {}))
        if OMIT_218:
            # 2.19's Templar knows omit; 2.18's gets it from the VariableManager, which is not here
            variables.setdefault("omit", OMIT_218)
        if isinstance(value, str):
            value = trust_as_template(value)
        return drop_omitted(Templar(loader=LOADER, variables=variables).template(value))

    def wanted(self) -> Dict[str, Any]:
        """The role's wanted state as node_state's action plugin builds it from the role's settings
        (<role>_wanted_settings, rendered here) with module_utils/controller/wanted_state.py."""
        # imported here: the collection loads with the plugin loader above
        # pylint: disable-next=import-outside-toplevel
        from ansible_collections.inferops.vllm.plugins.module_utils.controller import wanted_state
        return wanted_state.build(self.name, self.render("{{ %s_wanted_settings }}" % self.name))

    def load_os_vars(self, task_file: str) -> Path:
        """The role's OS data as a run reads it: vars/main.yml names <role>_os through lookup inferops.vllm.os_data (the
        one OS-data loader, rendered here by the Templar as in a run), which picks the file by the facts
        (module_utils/controller/os_data.py); task_file gathers those facts first, with os_packages' os_facts, where
        no play did. No task loads OS vars itself (include_vars). The file picked must be one of this role's vars
        files; returns it."""
        # imported here: the collection loads with the plugin loader above
        # pylint: disable-next=import-outside-toplevel
        from ansible_collections.inferops.vllm.plugins.module_utils.controller import os_data
        own = [t.get("name") for path in (self.path / "tasks").glob("*.yml") for t in _flatten(load(path) or [])
               if "ansible.builtin.include_vars" in t]
        assert not own, "%s loads OS vars itself (%s): name %s_os through lookup inferops.vllm.os_data instead" % (
            self.name, own, self.name)
        name = os_data.variable(self.name)
        named = str((load(self.path / "vars" / "main.yml") or {}).get(name, "")).replace(" ", "")
        assert named == "{{lookup('inferops.vllm.os_data','%s')}}" % self.name, "%s/vars/main.yml: %s is %r" % (
            self.name, name, named)
        gathers = [t for t in _flatten(tasks_of(self.name, task_file)) if os_packages_call(t, "os_facts")]
        assert gathers, "%s/tasks/%s does not gather the OS facts (os_packages os_facts)" % (self.name, task_file)
        # static, so that the facts are there for every later task
        assert os_packages_call(gathers[0], "os_facts") == "ansible.builtin.import_role", gathers[0]
        picked = Path(os_data.data_file(self.name, self.variables["ansible_facts"], str(ROLES))).resolve()
        assert picked.parent == (self.path / "vars").resolve(), picked
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

    def runs(self, t: dict, variables: dict) -> bool:
        """Whether the task's when: conditions all hold (ansible_check_mode is false)."""
        conditions = t.get("when", [])
        for condition in conditions if isinstance(conditions, list) else [conditions]:
            if isinstance(condition, bool):
                value = condition
            else:
                value = self.render("{{ %s }}" % condition, variables)
            if not value:
                return False
        return True

    def repository(self, task_file: str, extra: Optional[dict] = None) -> Dict[str, Any]:
        """Include os_packages as the caller's one include_role task in task_file does (its when: aside):
        the task's vars are os_packages' inputs (each one os_packages declares), rendered lazily with
        this role's variables; os_packages' main.yml picks its repository file by OS family, whose tasks
        that would run give their module arguments, per loop item. Returns {'file': the file name,
        <module>: [arguments of each run, in order]}."""
        calls = [t for t in _flatten(tasks_of(self.name, task_file)) if os_packages_call(t)]
        assert len(calls) == 1, "%s/tasks/%s has %d os_packages include_role tasks" % (self.name, task_file, len(calls))
        assert os_packages_call(calls[0]) == "ansible.builtin.include_role", calls[0]
        inputs = dict(calls[0].get("vars") or {})
        shared = ROLES / "os_packages"
        spec = load(shared / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
        public = {name for name in inputs if not name.startswith("_")}
        assert public <= set(spec), "%s passes inputs os_packages does not declare: %s" % (
            self.name, public - set(spec))
        assert {name for name, option in spec.items() if option.get("required")} <= public, inputs
        # role defaults < the caller's variables < os_packages' vars/ < include_role vars
        variables = dict(load(shared / "defaults" / "main.yml") or {})
        variables.update(self.variables)
        variables.update(load(shared / "vars" / "main.yml") or {})
        variables.update(inputs)
        variables.update(role_path=str(shared), ansible_check_mode=False, **(extra or {}))
        entry = [t for t in load(shared / "tasks" / "main.yml") if "ansible.builtin.include_tasks" in t]
        assert len(entry) == 1, entry
        task_file_name = self.render(entry[0]["ansible.builtin.include_tasks"], variables)
        out: Dict[str, Any] = {"file": task_file_name}
        for t in _flatten(load(shared / "tasks" / task_file_name) or []):
            module = module_of(t)
            items = self.render(t["loop"], variables) if "loop" in t else [None]
            for item in items:
                scope = dict(variables, **(t.get("vars") or {}))
                if item is not None:
                    scope["item"] = item
                if self.runs(t, scope):
                    out.setdefault(module, []).append(self.render(t[module], scope))
        return out

"""Privilege where it is needed (issue #18): the playbooks run as a non-root user with sudo.

- Every play that changes nodes escalates with the one documented, overridable variable
  (`become: "{{ inferops_become | default(true) }}"`).
- A play that touches no host (the plan compile, noting the routers' addresses) and every
  `hosts: localhost` play does not escalate.
- Every task that runs on the controller (delegate_to: localhost, or the controller's Python)
  sets `become: false` on itself or on an enclosing block: sudo on the controller would ask
  the operator's workstation for a password, or fail where sudo is absent.
"""
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = sorted((ROOT / "playbooks").glob("*.yml"))
ROLE_TASK_FILES = sorted((ROOT / "roles").glob("*/tasks/*.yml")) + sorted((ROOT / "roles").glob("*/handlers/*.yml"))
BECOME = "{{ inferops_become | default(true) }}"
CONTROLLER = {"localhost", "127.0.0.1"}
# Task files that only compute on the controller or set facts: a play made of them touches no host.
NO_HOST_TASKS = {("inferops.vllm.cluster_plan", "launch"), ("inferops.vllm.cluster_plan", "plan"),
                 ("inferops.vllm.vllm_router", "endpoint"), ("inferops.vllm.vllm_rollout", "downtime")}
BLOCK_KEYS = ("block", "rescue", "always")


def _load(path):
    return yaml.safe_load(path.read_text()) or []


def _walk(tasks, inherited):
    """(task, effective keywords) for every task, blocks flattened; `inherited` carries
    delegate_to, become and vars from enclosing blocks."""
    for task in tasks or []:
        here = dict(inherited)
        for key in ("delegate_to", "become"):
            if key in task:
                here[key] = task[key]
        here["vars"] = {**inherited.get("vars", {}), **(task.get("vars") or {})}
        if any(k in task for k in BLOCK_KEYS):
            for key in BLOCK_KEYS:
                yield from _walk(task.get(key), here)
        else:
            yield task, here


def _on_controller(effective):
    return (str(effective.get("delegate_to", "")).strip() in CONTROLLER
            or "ansible_playbook_python" in str(effective["vars"].get("ansible_python_interpreter", "")))


def _play_tasks(play):
    return [t for key in ("pre_tasks", "tasks", "post_tasks", "handlers") for t in play.get(key) or []]


def _touches_no_host(play):
    if play.get("roles"):
        return False
    for task, _eff in _walk(_play_tasks(play), {}):
        if "ansible.builtin.debug" in task:   # prints on the controller
            continue
        ref = task.get("ansible.builtin.import_role") or task.get("ansible.builtin.include_role")
        if not ref or (ref.get("name"), ref.get("tasks_from")) not in NO_HOST_TASKS:
            return False
    return True


def _plays():
    for path in PLAYBOOKS:
        for index, play in enumerate(_load(path)):
            if "hosts" in play:
                yield pytest.param(path, play, id="%s:%d:%s" % (path.name, index, play.get("name", "")))


@pytest.mark.parametrize("path,play", list(_plays()))
def test_play_escalates_only_where_it_changes_nodes(path, play):
    hosts = str(play["hosts"]).strip()
    if hosts in CONTROLLER:
        assert play.get("become", False) is False, "%s: a localhost play must not escalate" % play["name"]
    elif _touches_no_host(play):
        assert play.get("become") is False, (
            "%s: %r touches no host; set become: false" % (path.name, play["name"]))
    else:
        assert play.get("become") == BECOME, (
            "%s: %r changes nodes; set become: \"%s\"" % (path.name, play["name"], BECOME))


def _controller_tasks():
    sources = [(p, _load(p)) for p in ROLE_TASK_FILES]
    for path in PLAYBOOKS:
        for play in _load(path):
            if "hosts" not in play:
                continue
            inherited = {"delegate_to": "localhost"} if str(play["hosts"]).strip() in CONTROLLER else {}
            for task, eff in _walk(_play_tasks(play), inherited):
                yield path, task, eff
    for path, tasks in sources:
        for task, eff in _walk(tasks, {}):
            yield path, task, eff


def test_controller_tasks_never_escalate():
    found, wrong = 0, []
    for path, task, eff in _controller_tasks():
        if not _on_controller(eff):
            continue
        found += 1
        if eff.get("become") is not False:
            wrong.append("%s: %r" % (path.relative_to(ROOT), task.get("name")))
    assert found >= 5, "the walk found too few controller tasks: the YAML layout changed"
    assert not wrong, "tasks on the controller must set become: false: " + "; ".join(wrong)


def test_controller_python_tasks_are_delegated():
    """A task run with the controller's Python must also run on the controller."""
    for path, task, eff in _controller_tasks():
        if "ansible_playbook_python" in str(eff["vars"].get("ansible_python_interpreter", "")):
            assert str(eff.get("delegate_to", "")).strip() in CONTROLLER, "%s: %r" % (path, task.get("name"))


# A text check on purpose: the user's docs are the behaviour here. An operator must find the variable that turns
# escalation off, the sudoers setting pipelining needs and how to give a sudo password; only the words show that.
# That the plays really read inferops_become is proven above, on the loaded plays.
def test_become_variable_is_documented():
    doc = (ROOT / "docs/site-project.md").read_text()
    assert "inferops_become" in doc and "requiretty" in doc and "ansible_become_password" in doc

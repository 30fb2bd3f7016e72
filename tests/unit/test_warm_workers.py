"""plugins/callback/warm_workers.py against Ansible itself: a play runs and reports as without it, and its task
workers are forked from a frozen controller that has loaded the template plugins, with Jinja's compile left as it is."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")

INVENTORY = "[nodes]\nn1\nn2\nn3\n[nodes:vars]\nansible_connection=local\nansible_python_interpreter={}\n"

# A filter that reports, from inside the task worker that templates it, what the worker inherited.
WORKER_PROBE = '''
import gc
import sys

import jinja2


def worker_state(_):
    return {"frozen": gc.get_freeze_count(),
            "preloaded": "ansible_collections.inferops.vllm.plugins.filter.group_verdict" in sys.modules,
            # the callback replaces no function: jinja2's compile is the one jinja2 defines
            "compile": jinja2.Environment.compile.__module__ + "." + jinja2.Environment.compile.__qualname__}


class FilterModule:
    def filters(self):
        return {"worker_state": worker_state}
'''

PLAY = """
- hosts: nodes
  gather_facts: false
  tasks:
    - name: Note the worker
      ansible.builtin.set_fact:
        worker: "{{ 0 | worker_state }}"
    - name: One host fails
      ansible.builtin.fail: {msg: n2 fails}
      when: inventory_hostname == 'n2'
    - name: Once for the play
      ansible.builtin.set_fact:
        once: "{{ inventory_hostname }}"
      run_once: true
    - name: Notify
      ansible.builtin.command: "true"
      changed_when: true
      notify: Handled
    - name: Every host left sees the run-once fact
      ansible.builtin.assert: {that: once == 'n1'}
    # the same templates in two tasks on every host
    - name: Render templates
      ansible.builtin.set_fact:
        rendered: &templates
          - "{{ inventory_hostname | upper }}"
          - "{{ 'a\\\\b' }} {{ '\\n' | length }}"
          - "{% for i in range(2) %}{{ i }}{% endfor %}"
          - "{{ [1, 2] | map('string') | join(',') if inventory_hostname != 'n9' else omit }}"
      when: inventory_hostname is match('n')
    - name: Render them again
      ansible.builtin.set_fact:
        again: *templates
      when: inventory_hostname is match('n')
    - name: Both renderings agree
      ansible.builtin.assert: {that: rendered == again}
  handlers:
    - name: Handled
      ansible.builtin.debug: {msg: handled}
"""


def run(tmp_path, warm):
    """The play under the repository's ansible.cfg, with (warm) or without its callbacks_enabled line."""
    lines = (ROOT / "ansible.cfg").read_text().splitlines()
    (tmp_path / "ansible.cfg").write_text("\n".join(line for line in lines if warm or not line.startswith("callbacks_enabled")))
    (tmp_path / "filter_plugins").mkdir(exist_ok=True)
    (tmp_path / "filter_plugins/probe.py").write_text(WORKER_PROBE)
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "hosts").write_text(INVENTORY.format(sys.executable))
    env = dict(os.environ, ANSIBLE_CONFIG=str(tmp_path / "ansible.cfg"),
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"))
    result = subprocess.run([PLAYBOOK, "-i", str(tmp_path / "hosts"), str(tmp_path / "play.yml")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr[-3000:]   # n2 failed, as planned
    return json.loads(result.stdout)


def results(report, name=None):
    """(task, host, result) in the order the tasks ran; the callback may list a task once per host."""
    return [(task["task"]["name"], host, res) for play in report["plays"] for task in play["tasks"]
            for host, res in task["hosts"].items() if name in (None, task["task"]["name"])]


def outcome(report):
    """Each task's hosts and how each ended, task by task."""
    tasks = list(dict.fromkeys(name for name, _host, _res in results(report)))
    return [(name, sorted((host, res.get("failed", False), res.get("changed", False), res.get("skipped", False))
                          for task, host, res in results(report) if task == name)) for name in tasks]


def test_a_play_runs_and_reports_as_without_the_callback(tmp_path):
    warm, plain = run(tmp_path, True), run(tmp_path, False)
    assert outcome(warm) == outcome(plain)
    assert [len(play["tasks"]) for play in warm["plays"]] == [len(play["tasks"]) for play in plain["plays"]]
    assert warm["stats"] == plain["stats"]
    assert [name for name, _hosts in outcome(warm)][-1] == "Handled"
    rendered = {(task, host): res["ansible_facts"] for task, host, res in results(warm) if task.startswith("Render")}
    assert rendered == {(task, host): res["ansible_facts"] for task, host, res in results(plain) if task.startswith("Render")}
    assert rendered[("Render templates", "n1")]["rendered"] == ["N1", "a\\b 1", "01", "1,2"]


def test_workers_fork_from_a_frozen_controller_that_loaded_the_template_plugins(tmp_path):
    frozen = {}
    for warm in (True, False):
        states = [res["ansible_facts"]["worker"] for _task, _host, res in results(run(tmp_path, warm), "Note the worker")]
        assert len(states) == 3
        assert all(state["preloaded"] == warm for state in states), (warm, states)
        assert all(state["compile"] == "jinja2.environment.Environment.compile" for state in states), states
        frozen[warm] = min(state["frozen"] for state in states)
    # the callback freezes the controller's heap before the fork; ansible-core 2.20 freezes a smaller one of its own
    assert frozen[True] > frozen[False], frozen

"""Copies of the collection that differ from the shipped one in one decision, for bench/fleet.py's converge bench
to time against it (each is an ANSIBLE_COLLECTIONS_PATH).

change_reports: the other way #47 names for stating the desired state once.

Shipped: node_state judges each role's wanted state in one read (node_read's, on a no-op run) and a step's tasks
run only where the node differs. The other way: the tasks always run and the modules (apt, copy, file, systemd,
docker_container) say whether they changed anything.

`change_reports(dest)` copies the collection to dest/ansible_collections/inferops/vllm and opens the engine's gates
there: every `<read>.steps.<step>.differs`, "some step differs" and "a package to install or hold" becomes true,
so a converged node runs each step's module calls and they answer "ok". Conditions that are not the engine's
(a launch the image already accepted, a daemon.json that is not JSON) stay, and the vLLM container's
docker_container call is left out, so the copy runs fewer calls than the other way would: what it costs is a
floor. bench/fleet.py times it as the setting "change reports".

role_specs_checked: the playbooks import the roles without `rolespec_validate: false`, so Ansible checks each
role's argument spec on every host again (the plan has checked them once): what #47 asks to turn back on unless
its cost matters. The setting "role specs checked".
"""
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GATES = [
    # where the engine's step may be empty, the other way states the condition itself: the toolkit of a GPU vendor
    (re.compile(r"\bcontainer_runtime_state\.steps\.toolkit\.(differs|todo\.install \| default\(\[\]\) \| length > 0)"),
     "container_runtime_wanted_settings.vendor in ['nvidia', 'amd']"),
    # the vLLM container's docker_container call stays behind the engine's gate (left out of the floor): its options
    # are judged by the launch label, and docker_container's own comparison would recreate it on every run
    (re.compile(r"\bvllm_serve_node\.steps\.container\.differs or vllm_serve_node\.steps\.env\.differs"), "false"),
    # a step differs, or some step of the read does
    (re.compile(r"\b\w+\.steps\.\w+\.differs\b"), "true"),
    (re.compile(r"\b\w+\.steps\.values\(\) \| selectattr\('differs'\) \| list \| length > 0"), "true"),
    # what a package step must install or hold
    (re.compile(r"\b\w+\.steps\.\w+\.todo\.install( \| default\(\[\]\))? \| length > 0"), "true"),
    (re.compile(r"\b\w+\.steps\.\w+\.todo\.hold( \| default\(\[\]\))? \| length > 0"), "true"),
    (re.compile(r"item in \w+\.steps\.\w+\.todo\.hold\b"), "true"),
]


def _copy(dest: Path) -> Path:
    copy = dest / "ansible_collections" / "inferops" / "vllm"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(ROOT, copy, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".collections", "tests", "molecule", "__pycache__"))
    return copy


def _rewrite(paths, rules) -> int:
    changed = 0
    for path in paths:
        text = new = path.read_text()
        for pattern, replacement in rules:
            new, count = pattern.subn(replacement, new)
            changed += count
        if new != text:
            path.write_text(new)
    return changed


def change_reports(dest: Path) -> Path:
    """The collection with the engine's gates open, under dest (an ANSIBLE_COLLECTIONS_PATH); returns that path."""
    copy = _copy(dest)
    opened = _rewrite(sorted((copy / "roles").glob("*/tasks/*.yml")), GATES)
    print("change reports: %d of the engine's gates opened in %s" % (opened, copy), flush=True)
    return dest


def role_specs_checked(dest: Path) -> Path:
    """The collection whose playbooks let Ansible check every role's spec, under dest; returns that path."""
    copy = _copy(dest)
    turned = _rewrite(sorted((copy / "playbooks").glob("*.yml")),
                      [(re.compile(r"^[ \t]*rolespec_validate: false\b.*\n", re.M), "")])
    print("role specs checked: %d imports of the playbooks check their role's spec again in %s" % (turned, copy),
          flush=True)
    return dest

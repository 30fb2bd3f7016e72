"""The node's paths and container name are written once (module_utils/controller/node_layout.py): the
roles and playbooks derive theirs from the owning role variable and the node_layout lookup."""
import re
from pathlib import Path

import pytest
from ansible.errors import AnsibleLookupError

from ansible_collections.inferops.vllm.plugins.lookup.node_layout import LookupModule
from ansible_collections.inferops.vllm.plugins.module_utils.controller import node_layout

ROOT = Path(__file__).resolve().parents[2]
# the literals, and the old fallbacks that repeated them
REPEATS = re.compile(r"/var/lib/inferops-vllm(?![-\w])|/etc/inferops-vllm(?![-\w])|default\('vllm'\)")


def test_the_lookup_returns_the_defaults():
    assert LookupModule().run(["state_dir", "config_dir", "container_name"]) == [
        "/var/lib/inferops-vllm", "/etc/inferops-vllm", "vllm"]
    assert node_layout.owner("state_dir") == "vllm_image_state_dir"


def test_an_unknown_entry_names_the_known_ones():
    with pytest.raises(AnsibleLookupError, match="config_dir, container_name, state_dir"):
        LookupModule().run(["state"])


def test_moving_a_default_in_node_layout_moves_what_the_lookup_gives(monkeypatch):
    """The lookup that every role's default goes through reads node_layout, not a copy of its own."""
    for name, (default, owner) in list(node_layout.LAYOUT.items()):
        monkeypatch.setitem(node_layout.LAYOUT, name, (default + "-moved", owner))
    assert LookupModule().run(["state_dir", "config_dir", "container_name"]) == [
        "/var/lib/inferops-vllm-moved", "/etc/inferops-vllm-moved", "vllm-moved"]


# A text check on purpose: what it proves is a property of the sources ("written once"). A second copy of a
# literal behaves exactly like the derived value until someone moves the default, and most places that would
# hold one (task files, templates, node scripts) only run on a node, so no rendering here could reach them.
def test_roles_and_playbooks_do_not_repeat_the_literals():
    code = [p for d in ("roles", "playbooks") for p in (ROOT / d).rglob("*")
            if p.suffix in (".yml", ".j2", ".py") and "argument_specs" not in p.name]
    # descriptions in the argument specs may show the value; defaults there are checked through defaults/main.yml
    repeated = [f"{p.relative_to(ROOT)}:{n}" for p in code
                for n, line in enumerate(p.read_text().splitlines(), 1) if REPEATS.search(line)]
    assert repeated == []

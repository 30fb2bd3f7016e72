"""The roles playbooks/site.yml runs, in the order it runs them, read from its plays as loaded."""
from pathlib import Path

import jinja2
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.node.hardware import CATALOG

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "playbooks/site.yml"
PREFIX = "inferops.vllm."
ROLE_CALLS = ("ansible.builtin.import_role", "ansible.builtin.include_role")


def site_roles():
    """Each play's roles and the roles its tasks import or include, first run first. A role chosen by a
    template (the driver stack) is rendered for every vendor the catalog knows, in catalog order."""
    vendors = list(dict.fromkeys(accelerator.vendor for accelerator in CATALOG.values()))
    named = []
    for play in yaml.safe_load(SITE.read_text()):
        calls = [r if isinstance(r, str) else r["role"] for r in play.get("roles", [])]
        calls += [t[m]["name"] for t in play.get("tasks", []) for m in ROLE_CALLS if m in t]
        for call in calls:
            named += [jinja2.Template(call).render(vllm_launch={"host_stack": {"vendor": v}}) for v in vendors]
    assert all(name.startswith(PREFIX) for name in named), named
    return list(dict.fromkeys(name[len(PREFIX):] for name in named))

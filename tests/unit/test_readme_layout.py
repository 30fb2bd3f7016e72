"""The README's layout block names what the tree holds, and the README and docs/architecture.md tell the
roles in the order playbooks/site.yml runs them. A role, plugin or playbook added without a word in the
layout, or a play moved without the docs, fails here naming it."""
import importlib
import re
from pathlib import Path

import pytest

from site_playbook import ROOT, site_roles

README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs/architecture.md"
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks").is_dir())


def section(path: Path, heading: str) -> str:
    """The text under `heading`, up to the next heading of the same or a higher level (outside code blocks)."""
    lines = path.read_text().splitlines()
    start = lines.index(heading) + 1
    level = len(heading.split(" ")[0])
    fenced = False
    for end in range(start, len(lines)):
        fenced ^= lines[end].startswith("```")
        hashes = re.match(r"(#+) ", lines[end])
        if hashes and not fenced and len(hashes.group(1)) <= level:
            return "\n".join(lines[start:end])
    return "\n".join(lines[start:])


def layout() -> dict:
    """The README's layout block as {folder: its description}; an indented line continues the folder above."""
    block = section(README, "## Layout").split("```")[1]
    folders = {}
    folder = None
    for line in block.splitlines()[1:]:
        if line and not line[0].isspace():
            folder, line = (line.split(" ", 1) + [""])[:2]
        folders[folder] = folders.get(folder, "") + " " + line
    return folders


def mentioned(text: str, names) -> list:
    """`names` in the order `text` first mentions each, as whole words."""
    found = {name: m.start() for name in names for m in [re.search(r"\b%s\b" % re.escape(name), text)] if m}
    return sorted(found, key=found.get)


def order_problem(documented: list, expected: list) -> str:
    missing = [name for name in expected if name not in documented]
    told = [name for name in documented if name in expected]
    if missing:
        return "missing: %s" % ", ".join(missing)
    if told != expected:
        return "documented as %s; site.yml runs %s" % (" → ".join(told), " → ".join(expected))
    return ""


def plugin_names(kind: str) -> list:
    files = sorted(p.stem for p in (ROOT / "plugins" / kind).glob("*.py") if p.stem != "__init__")
    if kind != "filter":
        return files
    # filters are called by their names, not by their files
    modules = (importlib.import_module("ansible_collections.inferops.vllm.plugins.filter." + f) for f in files)
    return sorted(name for module in modules for name in module.FilterModule().filters())


def test_layout_names_every_role():
    missing = [role for role in ROLES if role not in mentioned(layout()["roles/"], ROLES)]
    assert not missing, "README layout block, roles/: add %s" % ", ".join(missing)


@pytest.mark.parametrize("runtime", ["controller", "node", "scripts"])
def test_layout_names_every_module_utils_file_under_where_it_runs(runtime):
    folder = ROOT / "plugins/module_utils" / runtime
    names = sorted({p.relative_to(folder).parts[0] if len(p.relative_to(folder).parts) > 1 else p.name
                    for p in folder.rglob("*.py") if p.name != "__init__.py"})
    text = layout().get("plugins/module_utils/%s/" % runtime, "")
    missing = [name for name in names if not re.search(r"(^|[\s(])%s(/|\b)" % re.escape(name), text)]
    assert not missing, "README layout block, plugins/module_utils/%s/: add %s" % (runtime, ", ".join(missing))


@pytest.mark.parametrize("kind", sorted(p.name for p in (ROOT / "plugins").iterdir()
                                        if p.is_dir() and p.name != "module_utils"))
def test_layout_names_every_plugin(kind):
    names = plugin_names(kind)
    folder = "plugins/%s/" % kind
    assert folder in layout(), "README layout block: add a line for %s (%s)" % (folder, ", ".join(names))
    missing = [name for name in names if name not in mentioned(layout()[folder], names)]
    assert not missing, "README layout block, %s: add %s" % (folder, ", ".join(missing))


def test_layout_names_every_playbook():
    names = sorted(p.name for p in (ROOT / "playbooks").glob("*.yml"))
    missing = [name for name in names if name not in layout()["playbooks/"]]
    assert not missing, "README layout block, playbooks/: add %s" % ", ".join(missing)


def test_readme_tells_the_site_order():
    text = section(README, "## Roles and playbooks").strip().split("\n\n", maxsplit=1)[0]   # the paragraph on site.yml
    problem = order_problem(mentioned(text, ROLES), site_roles())
    assert not problem, "README, the site.yml paragraph of 'Roles and playbooks': " + problem


def table_roles(text: str, column: int) -> list:
    """Role names of a Markdown table's `column`, row by row."""
    cells = [row.split("|")[column + 1] for row in text.splitlines() if row.startswith("| `")]
    return [name for cell in cells for name in mentioned(cell, ROLES)]


def test_readme_role_table_follows_site_order_and_lists_every_role():
    rows = table_roles(section(README, "## Roles and playbooks"), 0)
    assert sorted(rows) == ROLES, "README role table: rows %s; roles/ holds %s" % (rows, ROLES)
    problem = order_problem(rows, site_roles())
    assert not problem, "README role table (site.yml's roles first, in its order): " + problem


def test_architecture_tells_the_site_order():
    text = section(ARCHITECTURE, "# Architecture")
    diagram = text[text.index("NODES, in site.yml order"):text.index("upgrade.yml /")]
    problem = order_problem(mentioned(diagram, ROLES), site_roles()[1:])   # the plan is drawn above
    assert not problem, "docs/architecture.md, the diagram's nodes part: " + problem
    rows = table_roles(section(ARCHITECTURE, "## 4. Host roles, in `site.yml` order"), 1)
    problem = order_problem(rows, site_roles()[1:])   # the plan play is section 2
    assert not problem, "docs/architecture.md, section 4's table: " + problem

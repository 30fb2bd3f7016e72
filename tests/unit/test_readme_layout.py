"""The README is the user's way in: its sections in the order a new user needs them, at most about 10 KB, the
two one-line commands in a section of their own, and an inventory that plans. CONTRIBUTING.md's layout block
names what the tree holds, and docs/playbooks.md and docs/architecture.md tell the roles in the order
playbooks/site.yml runs them. A role, plugin or playbook added without a word in the layout, or a play moved
without the docs, fails here naming it."""
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from site_playbook import ROOT, site_roles

README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
PLAYBOOKS_DOC = ROOT / "docs/playbooks.md"
ARCHITECTURE = ROOT / "docs/architecture.md"
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks").is_dir())
# What a new user needs, in that order: what it is and needs, install, an inventory, plan → check → deploy →
# the smoke report, then the two commands that show it without a fleet, then where to go next.
README_SECTIONS = ["Requirements", "Install", "A first inventory: two H200 nodes over InfiniBand",
                   "Plan, check, deploy", "See it run without a fleet", "Where to go next"]
README_MAX_BYTES = 10_500
TWO_COMMANDS = ["scripts/lab.sh", "scripts/test.sh"]
DIGEST = "vllm/vllm-openai@sha256:" + "ab" * 32


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
    block = section(CONTRIBUTING, "## Layout").split("```")[1]
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
    assert not missing, "CONTRIBUTING.md layout block, roles/: add %s" % ", ".join(missing)


@pytest.mark.parametrize("runtime", ["controller", "node", "scripts"])
def test_layout_names_every_module_utils_file_under_where_it_runs(runtime):
    folder = ROOT / "plugins/module_utils" / runtime
    names = sorted({p.relative_to(folder).parts[0] if len(p.relative_to(folder).parts) > 1 else p.name
                    for p in folder.rglob("*.py") if p.name != "__init__.py"})
    text = layout().get("plugins/module_utils/%s/" % runtime, "")
    missing = [name for name in names if not re.search(r"(^|[\s(])%s(/|\b)" % re.escape(name), text)]
    assert not missing, "CONTRIBUTING.md layout block, plugins/module_utils/%s/: add %s" % (runtime, ", ".join(missing))


@pytest.mark.parametrize("kind", sorted(p.name for p in (ROOT / "plugins").iterdir()
                                        if p.is_dir() and p.name != "module_utils"))
def test_layout_names_every_plugin(kind):
    names = plugin_names(kind)
    folder = "plugins/%s/" % kind
    assert folder in layout(), "CONTRIBUTING.md layout block: add a line for %s (%s)" % (folder, ", ".join(names))
    missing = [name for name in names if name not in mentioned(layout()[folder], names)]
    assert not missing, "CONTRIBUTING.md layout block, %s: add %s" % (folder, ", ".join(missing))


def test_layout_names_every_playbook():
    names = sorted(p.name for p in (ROOT / "playbooks").glob("*.yml"))
    missing = [name for name in names if name not in layout()["playbooks/"]]
    assert not missing, "CONTRIBUTING.md layout block, playbooks/: add %s" % ", ".join(missing)


def test_playbooks_doc_tells_the_site_order():
    text = section(PLAYBOOKS_DOC, "## The playbooks").strip().split("\n\n", maxsplit=1)[0]   # the paragraph on site
    problem = order_problem(mentioned(text, ROLES), site_roles())
    assert not problem, "docs/playbooks.md, the site paragraph of 'The playbooks': " + problem


def table_roles(text: str, column: int) -> list:
    """Role names of a Markdown table's `column`, row by row."""
    cells = [row.split("|")[column + 1] for row in text.splitlines() if row.startswith("| `")]
    return [name for cell in cells for name in mentioned(cell, ROLES)]


def test_playbooks_doc_role_table_follows_site_order_and_lists_every_role():
    rows = table_roles(section(PLAYBOOKS_DOC, "## The roles"), 0)
    assert sorted(rows) == ROLES, "docs/playbooks.md role table: rows %s; roles/ holds %s" % (rows, ROLES)
    problem = order_problem(rows, site_roles())
    assert not problem, "docs/playbooks.md role table (site.yml's roles first, in its order): " + problem


def test_architecture_tells_the_site_order():
    text = section(ARCHITECTURE, "# Architecture")
    diagram = text[text.index("NODES, in site.yml order"):text.index("upgrade.yml /")]
    problem = order_problem(mentioned(diagram, ROLES), site_roles()[1:])   # the plan is drawn above
    assert not problem, "docs/architecture.md, the diagram's nodes part: " + problem
    rows = table_roles(section(ARCHITECTURE, "## 2. Host roles, in `site.yml` order"), 1)
    problem = order_problem(rows, site_roles()[1:])   # the plan play is drawn above
    assert not problem, "docs/architecture.md, section 2's table: " + problem


def headings(path: Path, level: int) -> list:
    """The headings of `level` outside code blocks, in order."""
    found, fenced = [], False
    for line in path.read_text().splitlines():
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("#" * level + " "):
            found.append(line[level + 1:])
    return found


def test_readme_sections_follow_a_new_users_order():
    assert headings(README, 2) == README_SECTIONS, "README.md's sections: %s; wanted %s" % (
        headings(README, 2), README_SECTIONS)


def test_readme_is_short():
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, "README.md is %d bytes, over %d: move detail into docs/" % (size, README_MAX_BYTES)


def test_readme_sentences_are_short():
    """Prose only (no code, tables or headings): under 20 words a sentence on average, none over 40."""
    text = re.sub(r"^```.*?^```", "", README.read_text(), flags=re.S | re.M)
    text = re.sub(r"`[^`]*`", "Code", re.sub(r"\]\([^)]*\)", "]", text))   # a code span or link target is a word
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith(("#", "|"))]
    prose = re.sub(r"\s+(?=- )", " \n", " ".join(lines))   # a list item starts a sentence
    sentences = [s.split() for s in re.split(r"(?<=[.!?])\s+|\n", prose) if s.split()]
    average = sum(map(len, sentences)) / len(sentences)
    longest = max(sentences, key=len)
    assert average < 20, "README.md: %.1f words a sentence on average" % average
    assert len(longest) <= 40, "README.md's longest sentence, %d words: %s" % (len(longest), " ".join(longest))


def test_readme_keeps_the_two_commands_in_a_section_of_their_own():
    text = section(README, "## See it run without a fleet")
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M)
    commands = [line.strip() for block in blocks for line in block.splitlines() if line.strip()]
    assert commands == TWO_COMMANDS, "README, 'See it run without a fleet': commands %s; wanted exactly %s" % (
        commands, TWO_COMMANDS)
    assert "root" in text and "Debian 12" in text and ".ci/run" in text, text


def readme_files() -> dict:
    """The README's inventory: each YAML block whose first line names a file under inventory/."""
    files = {}
    for block in re.findall(r"^```yaml\n(.*?)^```", README.read_text(), flags=re.S | re.M):
        first, _sep, body = block.partition("\n")
        name = re.fullmatch(r"# inventory/(\S+)", first.strip())
        if name:
            files[name.group(1)] = body
    return files


def write_readme_inventory(dest: Path) -> Path:
    """The README's inventory written under `dest`, with a digest where it leaves the image for the user to pin."""
    for name, body in readme_files().items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text(body.replace("vllm/vllm-openai@sha256:<digest>", DIGEST))
    return dest


def test_readme_inventory_is_one_site_and_plans(tmp_path):
    assert {"hosts.yml", "group_vars/all/vllm.yml"} <= set(readme_files()), sorted(readme_files())
    inventory = write_readme_inventory(tmp_path / "inventory")
    result = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory),
                             str(ROOT / "playbooks/plan.yml")], capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "h200-01" in result.stdout and "h200-02" in result.stdout, result.stdout[-3000:]
    assert "[WARNING]" not in result.stdout + result.stderr, result.stdout[-3000:] + result.stderr[-3000:]

"""Every repository path and every `inferops.vllm.<name>` the docs name exists, and the user's docs run the
installed playbooks by name. A file moved or renamed without its docs fails here, naming the doc and the path."""
import glob
import re
from pathlib import Path

import pytest

from site_playbook import ROOT

DOCS = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *ROOT.glob("docs/*.md"), *ROOT.glob("roles/*/README.md")])
# What a user reads: the contributor's pages may use checkout paths (scripts/lab.sh, playbooks/site.yml).
CONTRIBUTOR_DOCS = {ROOT / "CONTRIBUTING.md", ROOT / "docs/testing.md", ROOT / "docs/benchmarks.md",
                    ROOT / "docs/benchmarks-history.md"}
USER_FILES = sorted(
    [p for p in DOCS if p not in CONTRIBUTOR_DOCS] + list(ROOT.glob("playbooks/*.yml"))
    + [p for p in ROOT.glob("inventories/example-*/**/*") if p.is_file()])

# A path is checked when it starts with one of these folders of the repository, or is one of these files.
PREFIXES = ("docs/", "roles/", "plugins/", "scripts/", "tests/", "inventories/", "playbooks/", "molecule/",
            "bench/", "changelogs/", "meta/", ".config/", ".ci/", "module_utils/")
TOP_FILES = {"README.md", "CONTRIBUTING.md", "COPYING", "galaxy.yml", "ansible.cfg", "execution-environment.yml"}
# Placeholders: a path holding one names a shape, not a file (`inventories/<site>`, `roles/<role>/...`).
PLACEHOLDER = re.compile(r"[<>{}$]|\.\.\.|…|\bINV\b|\bD/")
PATH_TOKEN = re.compile(r"[^\s`'\"(),;=\[\]|]+")
# inferops.vllm.<name> that is neither a playbook, a role nor a plugin: the containers' labels.
NOT_CONTENT = {"launch", "exporter"}
# The benchmarks' dated log names what was measured then, renamed since or not: its paths are not checked.
HISTORY_DOC = ROOT / "docs/benchmarks-history.md"


def spans(text: str):
    """The text of every inline code span, fenced block and link target, with what kind it is."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    outside = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    for block in fenced:
        yield "code", block
    for code in re.findall(r"`([^`\n]+)`", outside):
        yield "code", code
    for target in re.findall(r"\]\(([^)\s]+)\)", outside):
        yield "link", target


def repo_path(token: str):
    """The repository path a token names, or None when it names none."""
    token = token.strip(".,;:'\"()[]").split("::")[0]   # tests/x.py::test_y names a test in a file
    if token.startswith("./"):
        token = token[2:]
    if token in TOP_FILES or token.startswith("requirements") and token.endswith(".txt"):
        return token
    if not token.startswith(PREFIXES) or token.endswith("/**"):
        return None
    if token.startswith("module_utils/"):   # said inside plugins/ (module_utils/node/vendor_driver.py)
        token = "plugins/" + token
    return token


def exists(path: str) -> bool:
    candidates = [path]
    if path.startswith("meta/"):   # "each role's meta/main.yml" as well as the collection's meta/runtime.yml
        candidates.append("roles/*/" + path)
    return any(glob.glob(str(ROOT / p)) if "*" in p else (ROOT / p).exists() for p in candidates)


def read(doc: Path) -> str:
    return "" if doc == HISTORY_DOC else doc.read_text()


def named_paths(doc: Path):
    for kind, text in spans(read(doc)):
        if kind == "link":
            target = text.split("#")[0]
            if not target or re.match(r"[a-z]+:", target) or PLACEHOLDER.search(target):
                continue
            resolved = (doc.parent / target).resolve()
            yield resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else target
            continue
        for line in text.splitlines():
            if line.lstrip().startswith(("/", "#!")):
                continue
            for token in PATH_TOKEN.findall(line):
                path = None if PLACEHOLDER.search(token) else repo_path(token)
                if path:
                    yield path


def content_names():
    names = {p.stem for p in ROOT.glob("playbooks/*.yml")} | {p.name for p in ROOT.glob("roles/*") if p.is_dir()}
    names |= {p.stem for p in ROOT.glob("plugins/*/*.py") if p.stem != "__init__"}
    names |= {p.stem for p in ROOT.glob("plugins/filter/*.yml")}   # each filter's documentation file
    return names | NOT_CONTENT


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_a_doc_names_exists(doc):
    missing = sorted({path for path in named_paths(doc) if not exists(path)})
    assert not missing, "%s names paths that do not exist: %s" % (doc.relative_to(ROOT), ", ".join(missing))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_collection_name_a_doc_uses_exists(doc):
    text = read(doc)
    unknown = sorted(set(re.findall(r"\binferops\.vllm\.([a-z0-9_]+)", text)) - content_names())
    assert not unknown, "%s names inferops.vllm.%s: no playbook, role or plugin has that name" % (
        doc.relative_to(ROOT), ", inferops.vllm.".join(unknown))
    playbooks = {p.stem for p in ROOT.glob("playbooks/*.yml")}
    runs = re.findall(r"ansible-playbook\b[^`\n]*?\binferops\.vllm\.([a-z0-9_]+)", text)
    wrong = sorted(set(runs) - playbooks)
    assert not wrong, "%s runs ansible-playbook inferops.vllm.%s: playbooks/ holds %s" % (
        doc.relative_to(ROOT), ", ".join(wrong), ", ".join(sorted(playbooks)))


@pytest.mark.parametrize("path", USER_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_user_docs_run_the_installed_playbooks(path):
    """A site project runs `ansible-playbook -i <inventory> inferops.vllm.site`: a checkout path such as
    playbooks/site.yml does not exist there."""
    runs = re.findall(r"ansible-playbook\b[^`\n]*?\bplaybooks/[a-z_]+\.yml", path.read_text())
    assert not runs, "%s: use the installed name (inferops.vllm.<playbook>) in %s" % (
        path.relative_to(ROOT), "; ".join(runs))


def test_the_checker_sees_paths():
    """The scan finds what it must: a path in a code span, a link, and a path inside a command."""
    found = set(named_paths(ROOT / "README.md"))
    assert any(p.startswith("docs/") for p in found), found
    assert "scripts/lab.sh" in found and "scripts/test.sh" in found, found

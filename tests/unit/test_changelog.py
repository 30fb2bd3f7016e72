"""The version story is coherent before and after the first release, as antsibull-changelog intends.

galaxy.yml names the version the next release will have. Until `antsibull-changelog release` runs,
changelogs/changelog.yaml lists only what was released (before 1.0.0: `releases: {}`), the changes
wait as fragments, and there is no CHANGELOG.rst: the release writes it from changelog.yaml. Every
module, plugin and role says it was added in a released version or in the coming one, never later
(antsibull-changelog lists as new in a release what says version_added == that release)."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.utils.version import SemanticVersion

ROOT = Path(__file__).resolve().parents[2]
CHANGELOGS = ROOT / "changelogs"
TOOL = Path(sys.executable).parent / "antsibull-changelog"   # in the dev venv, not in the 2.18 one
needs_tool = pytest.mark.skipif(not TOOL.exists(), reason="antsibull-changelog is not in this venv")


def galaxy_version():
    return SemanticVersion(yaml.safe_load((ROOT / "galaxy.yml").read_text())["version"])


def released():
    return [SemanticVersion(v) for v in (yaml.safe_load((CHANGELOGS / "changelog.yaml").read_text())["releases"] or {})]


def fragments():
    return sorted(p.name for p in (CHANGELOGS / "fragments").iterdir() if p.suffix in (".yml", ".yaml"))


def version_added(doc, where):
    """(where, value) for every version_added in a plugin's docs or an argument spec, options included."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "version_added":
                yield where, str(value)
            else:
                yield from version_added(value, "%s.%s" % (where, key))
    elif isinstance(doc, list):
        for item in doc:
            yield from version_added(item, where)


def plugin_docs():
    for path in sorted((ROOT / "plugins").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets)
                    and isinstance(node.value, ast.Constant)):
                yield path.relative_to(ROOT), yaml.safe_load(node.value.value)
    for path in sorted((ROOT / "plugins").rglob("*.yml")):   # sidecar docs (filters that share a .py file)
        doc = yaml.safe_load(path.read_text())
        if isinstance(doc, dict) and "DOCUMENTATION" in doc:
            yield path.relative_to(ROOT), doc["DOCUMENTATION"]
    for path in sorted(ROOT.glob("roles/*/meta/argument_specs.yml")):
        yield path.relative_to(ROOT), yaml.safe_load(path.read_text())


def all_version_added():
    return [(str(where), value) for path, doc in plugin_docs() for where, value in version_added(doc, str(path))]


def test_every_module_and_plugin_says_when_it_was_added():
    """antsibull-changelog lists a plugin as new in a release only by its version_added."""
    missing = [str(path) for path, doc in plugin_docs()
               if path.parts[0] == "plugins" and path.parts[1] != "doc_fragments" and "version_added" not in doc]
    assert missing == []


def test_nothing_was_added_after_the_coming_version():
    coming, done = galaxy_version(), released()
    wrong = [(where, value) for where, value in all_version_added()
             if SemanticVersion(value) > coming or (SemanticVersion(value) != coming and SemanticVersion(value) not in done)]
    assert wrong == [], "version_added must be a released version (%s) or galaxy.yml's %s" % (
        ", ".join(v.vstring for v in done) or "none yet", coming.vstring)


def test_galaxy_names_a_version_at_or_after_the_last_release():
    coming, done = galaxy_version(), released()
    assert all(v <= coming for v in done), "galaxy.yml's %s is older than a release in changelog.yaml" % coming.vstring
    if coming in done:
        # just released: the release took the fragments; new ones need galaxy.yml moved on first
        assert fragments() == [], "galaxy.yml's %s is released; bump it for %s" % (coming.vstring, fragments())


def test_changelog_rst_is_what_the_release_wrote():
    rst = ROOT / "CHANGELOG.rst"
    if not released():
        # antsibull-changelog release writes it, with the first release; one written by hand would drift
        assert not rst.exists(), "CHANGELOG.rst without a release in changelogs/changelog.yaml"
        return
    assert rst.exists(), "changelogs/changelog.yaml has releases but there is no CHANGELOG.rst"


@needs_tool
def test_the_changelog_lints():
    for argv in ([str(TOOL), "lint"], [str(TOOL), "lint-changelog-yaml", "--strict", str(CHANGELOGS / "changelog.yaml")]):
        result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr


@needs_tool
def test_changelog_rst_matches_changelog_yaml(tmp_path):
    if not released():
        pytest.skip("no release yet: no CHANGELOG.rst")
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(ROOT / "galaxy.yml", tree)
    shutil.copytree(CHANGELOGS, tree / "changelogs")
    result = subprocess.run([str(TOOL), "generate"], cwd=tree, capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tree / "CHANGELOG.rst").read_text() == (ROOT / "CHANGELOG.rst").read_text(), \
        "CHANGELOG.rst differs from changelog.yaml: run antsibull-changelog generate"


@needs_tool
def test_the_release_would_list_every_module_and_plugin_as_new(tmp_path):
    """antsibull-changelog release, in a copy of the tree, for galaxy.yml's version: it takes every
    fragment and lists as new what says version_added == that version (here: everything, before 1.0.0)."""
    coming = galaxy_version()
    if coming in released():
        pytest.skip("galaxy.yml's version is released")
    tree = tmp_path / "ansible_collections" / "inferops" / "vllm"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(".git", ".collections", "__pycache__", "output", "reports",
                                                              "molecule", "bench", "inventories", "tests"))
    result = subprocess.run([str(TOOL), "release", "--version", coming.vstring, "--date", "2026-01-01"], cwd=tree,
                            capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    release = yaml.safe_load((tree / "changelogs" / "changelog.yaml").read_text())["releases"][coming.vstring]
    assert sorted(release["fragments"]) == fragments()
    listed = {("module", m["name"]) for m in release.get("modules", [])}
    listed |= {(kind, p["name"]) for kind, plugins in release.get("plugins", {}).items() for p in plugins}
    new = {("module" if path.parts[1] in ("modules", "action") else path.parts[1], doc.get("module") or doc["name"])
           for path, doc in plugin_docs()
           if path.parts[0] == "plugins" and path.parts[1] != "doc_fragments" and SemanticVersion(str(doc["version_added"])) == coming}
    assert listed == new
    assert (tree / "CHANGELOG.rst").exists() and not list((tree / "changelogs" / "fragments").glob("*.yml"))

"""The tarball `ansible-galaxy collection build` makes holds what a user runs and nothing of the checkout's
tooling, and the installed collection plans the README's inventory from a site project whose ansible.cfg only
says where the collections are: no checkout, no repository ansible.cfg."""
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from site_playbook import ROOT
from test_readme_layout import write_readme_inventory

BIN = Path(sys.executable).parent
SHIPPED_TOP = {"COPYING", "FILES.json", "MANIFEST.json", "README.md", "changelogs", "docs", "inventories", "meta",
               "playbooks", "plugins", "roles"}
# The checkout's tooling: none of it may ship, at any depth where a pattern says so.
NOT_SHIPPED = ("ansible.cfg", "requirements.txt", "requirements-", "bench/", "inventories/lab/", "reports/",
               "CONTRIBUTING.md", "docs/testing.md", "docs/benchmarks", "tests/", "scripts/", "molecule/",
               "execution-environment.yml", ".ci/", ".config/", ".collections/")
NOT_SHIPPED_ANYWHERE = (".hypothesis", ".pytest_cache", "__pycache__", ".pyc")


def clean_env(**extra) -> dict:
    """The caller's environment without its Ansible settings (the harness may set a collections path)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def tarball(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("build")
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--force", "--output-path", str(out), str(ROOT)],
                   check=True, capture_output=True, text=True, env=clean_env())
    (built,) = out.glob("inferops-vllm-*.tar.gz")
    return built


@pytest.fixture(scope="module")
def members(tarball) -> list:
    with tarfile.open(tarball) as tar:
        return [m.name + ("/" if m.isdir() else "") for m in tar.getmembers()]


def test_the_tarball_ships_what_a_user_runs(members):
    top = {name.split("/")[0] for name in members}
    assert top == SHIPPED_TOP, "shipped at the top: %s; wanted %s" % (sorted(top), sorted(SHIPPED_TOP))


def test_the_tarball_ships_none_of_the_checkout_tooling(members):
    wrong = [name for name in members if name.startswith(NOT_SHIPPED)
             or any(part in name for part in NOT_SHIPPED_ANYWHERE)]
    assert not wrong, "galaxy.yml build_ignore should leave out: %s" % ", ".join(sorted(wrong)[:20])


def test_the_tarball_ships_the_examples_and_the_users_docs(members):
    examples = sorted(p.name for p in ROOT.glob("inventories/example-*"))
    missing = [e for e in examples if "inventories/%s/hosts.yml" % e not in members]
    docs = sorted("docs/" + p.name for p in ROOT.glob("docs/*.md")
                  if p.name not in ("testing.md", "benchmarks.md", "benchmarks-history.md"))
    missing += [d for d in docs if d not in members]
    roles = sorted("roles/%s/tasks/main.yml" % p.name for p in ROOT.glob("roles/*") if (p / "tasks/main.yml").exists())
    missing += [r for r in roles if r not in members]
    assert examples and not missing, "the tarball lacks: %s" % ", ".join(missing)


def test_the_installed_collection_plans_the_readme_inventory_from_a_site_project(tarball, tmp_path):
    """The README's way in: install the tarball into the project's collections/, then run the plan by name
    with a plain ansible.cfg. community.docker and community.general come from the ansible bundle."""
    site = tmp_path / "site"
    site.mkdir()
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "install", "--no-deps", "-p", str(site / "collections"),
                    str(tarball)], check=True, capture_output=True, text=True, env=clean_env(), cwd=site)
    (site / "ansible.cfg").write_text("[defaults]\ncollections_path = ./collections\n")
    write_readme_inventory(site / "inventory")
    result = subprocess.run([str(BIN / "ansible-playbook"), "-i", "inventory", "inferops.vllm.plan"],
                            capture_output=True, text=True, cwd=site, check=False,
                            env=clean_env(ANSIBLE_CONFIG=str(site / "ansible.cfg")))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "h200-01" in result.stdout and "h200-02" in result.stdout, result.stdout[-3000:]
    assert str(ROOT) not in result.stdout + result.stderr, "the installed run reached into the checkout"

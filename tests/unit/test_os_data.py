"""module_utils/controller/os_data.py: which OS data file a role reads (the lookup inferops.vllm.os_data), and what it
says when it cannot choose. The rendering of every role's data on every tested OS is tests/data/test_os_paths.py."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller import os_data

ROOT = Path(__file__).resolve().parents[2]
ROLES_WITH_OS_DATA = sorted(p.parent.parent.name for p in ROOT.glob("roles/*/vars/*.yml") if p.stem != "main")


def test_the_distribution_file_wins_over_the_family_file():
    ubuntu = {"distribution": "Ubuntu", "os_family": "Debian"}
    assert Path(os_data.data_file("container_runtime", ubuntu)).name == "Ubuntu.yml"
    rocky = {"distribution": "Rocky", "os_family": "RedHat"}
    assert Path(os_data.data_file("nvidia_driver", rocky)).name == "RedHat.yml"


def test_the_roles_folder_is_the_collections():
    assert Path(os_data.ROLES_DIR).resolve() == (ROOT / "roles").resolve()


@pytest.mark.parametrize("role", ROLES_WITH_OS_DATA)
def test_each_role_with_os_files_names_them_through_the_lookup(role):
    """Its vars/main.yml sets <role>_os to the lookup, and each OS file holds that one mapping, which the lookup
    returns."""
    name = os_data.variable(role)
    main = yaml.safe_load((ROOT / "roles" / role / "vars/main.yml").read_text())
    assert main[name].replace(" ", "") == "{{lookup('inferops.vllm.os_data','%s')}}" % role
    for path in (ROOT / "roles" / role / "vars").glob("*.yml"):
        if path.stem != "main":
            data = yaml.safe_load(path.read_text())
            assert list(data) == [name] and isinstance(data[name], dict), path


def test_missing_facts_name_the_facts_and_the_fix():
    with pytest.raises(os_data.OSDataError, match="lack distribution, os_family: gather them"):
        os_data.data_file("container_runtime", {})


def test_an_unsupported_os_names_the_files_looked_for():
    with pytest.raises(os_data.OSDataError) as err:
        os_data.data_file("vllm_exporters", {"distribution": "Archlinux", "os_family": "Archlinux"})
    assert "Archlinux.yml" in str(err.value) and "meta/main.yml" in str(err.value)

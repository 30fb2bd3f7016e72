"""Ubuntu 22.04/24.04 and EL 9 are not run end to end (Molecule runs Debian 12 containers): for each,
render every OS-specific value a role would use there (repositories, keys, packages, DKMS headers,
the branch lock or hold, the OS vars file its loader picks) from the role's real files, and compare
with the vendors' documented layouts in fixtures/os/<os>.yml. Repositories are rendered through
os_packages, as the roles include it. meta/main.yml may claim only what Molecule or these tests cover."""
import ast
from pathlib import Path

import pytest
import yaml

from role_render import ROLES, ROOT, Role, load, module_of, os_packages_callers, tasks_of

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "os").glob("*.yml"))
# Roles whose OS-specific values this file renders, and their loader task file.
RENDERED = {"nvidia_driver": "os_vars.yml", "container_runtime": "main.yml", "rocm": "main.yml",
            "vllm_router": "main.yml", "vllm_image": None, "host_proxy": None}
# What makes a role OS-specific: package managers, repositories, holds, facts-based choices.
OS_SPECIFIC = ("ansible.builtin.apt", "ansible.builtin.dnf", "ansible.builtin.yum", "ansible.builtin.package",
               "deb822_repository", "yum_repository", "dpkg_selections", "dnf_versionlock",
               "os_family", "ansible_facts.distribution")
MOLECULE_PLATFORM = {"name": "Debian", "version": "bookworm"}
# A shared role is tested on an OS where a rendered role that uses it is (os_packages: the repository
# each caller sets up is rendered through its task files).
SHARED = {"os_packages": os_packages_callers()}


def fixture(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def cases():
    for path in FIXTURES:
        fix = fixture(path)
        for distribution in [fix["facts"]["distribution"]] + fix.get("also_distributions", []):
            for arch in fix["architectures"]:
                yield pytest.param(path, distribution, arch, id="%s-%s-%s" % (path.stem, distribution, arch))


def expected(fix: dict, role: str, arch: str, role_defaults: dict) -> dict:
    """The fixture's section for the role, with {cuda_arch}... filled in for this architecture."""
    fill = dict(fix["architectures"][arch], branch=role_defaults.get("nvidia_driver_branch"),
                rocm_version=role_defaults.get("rocm_version"))

    def walk(value):
        if isinstance(value, str):
            return value.format(**fill)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value
    return walk(fix[role])


def facts(fix: dict, distribution: str, arch: str) -> dict:
    return dict(fix["facts"], distribution=distribution, architecture=arch)


def deb822(value):
    """A deb822 field as the .sources file holds it: a list is written space-separated."""
    return " ".join(value) if isinstance(value, list) else value


def apt_repository(role: Role, task_file: str, extra=None) -> dict:
    """The one repository os_packages adds for the caller on an apt node, with its key: the key is
    downloaded to the keyring apt checks (no keyring package to install)."""
    setup = role.repository(task_file, extra)
    assert setup["file"] == "repository-Debian.yml", setup
    [repo] = setup["ansible.builtin.deb822_repository"]
    [key] = setup["ansible.builtin.get_url"]
    assert key["dest"] == repo["signed_by"], (key, repo)
    assert not [a for a in setup["ansible.builtin.apt"] if "deb" in a], setup
    return dict(repo, key_url=key["url"])


def nvidia_driver(role: Role, family: str) -> dict:
    os_data = role.variables["nvidia_driver_os"]
    packages = {}
    for modules in ("open", "proprietary"):
        role.variables["nvidia_driver_kernel_modules"] = modules
        role.set_facts("os_vars.yml", "Resolve settings")
        packages[modules] = role.variables["nvidia_driver_packages"]
    role.variables["nvidia_driver_kernel_modules"] = "open"
    role.set_facts("os_vars.yml", "Resolve settings")
    out = {
        "vars_file": role.vars_file.name,
        "repo": role.variables["nvidia_driver_repo"],
        "kernel_headers": role.args("kernel.yml", "ansible.builtin.package")["name"],
        "fabric_manager": role.render(os_data["fabric_manager_package"]),
        "imex": role.render(os_data["imex_package"]),
    }
    handler = next(h for h in load(role.path / "handlers" / "main.yml") if h["name"] == "Update initramfs")
    command = role.render(handler["ansible.builtin.command"])
    # the handler runs only where its tool is: the path it checks must be the command it runs
    assert command["removes"] == command["argv"][0], command
    out["initramfs"] = command["argv"]
    setup = role.repository("install.yml")
    assert setup["file"] == "repository-%s.yml" % family, setup
    if family == "Debian":
        [repo] = setup["ansible.builtin.deb822_repository"]
        assert repo["uris"] == out["repo"] and "components" not in repo  # a flat repository
        # the keyring package is downloaded, then installed: it brings the keyring apt checks
        [dest] = setup["ansible.builtin.get_url"]
        assert [a["deb"] for a in setup["ansible.builtin.apt"] if "deb" in a] == [dest["dest"]]
        assert dest["dest"] != repo["signed_by"]
        hold = role.args("install-Debian.yml", "ansible.builtin.dpkg_selections", extra={"item": "nvidia-open"})
        assert hold["selection"] == "hold"
        out.update(suite=deb822(repo["suites"]), keyring=repo["signed_by"], keyring_package_url=dest["url"],
                   packages=packages, hold="dpkg_selections",
                   branch_lock=role.args("install-Debian.yml", "ansible.builtin.apt")["name"])
    else:
        [repo] = setup["ansible.builtin.yum_repository"]
        assert repo["baseurl"] == out["repo"] and repo["gpgcheck"] is True
        streams = {}
        for modules, names in packages.items():
            assert len(names) == 1 and names[0].startswith("@"), names  # dnf installs '@module:stream'
            streams[modules] = names[0][1:]
        lock = role.args("install-RedHat.yml", "community.general.dnf_versionlock")
        out.update(gpgkey=repo["gpgkey"], module_streams=streams,
                   versionlock={"plugin": role.args("install-RedHat.yml", "ansible.builtin.dnf")["name"],
                                "patterns": lock["name"]})
    return out


def container_runtime(role: Role, family: str) -> dict:
    os_data = role.variables["container_runtime_os"]
    out = {"vars_file": role.vars_file.name, "hold": "dpkg_selections",
           "distro_packages": role.render("{{ container_runtime_engine_packages }}")}
    role.variables["container_runtime_docker_source"] = "docker"
    # a node without python3-debian, which deb822_repository needs: os_packages installs it first
    state = {"container_runtime_state": {"packages": {"python3-debian": None}}}
    assert role.repository("docker.yml", state)["ansible.builtin.apt"][0] == {"name": ["python3-debian"]}
    repo = apt_repository(role, "docker.yml", state)
    out["docker"] = {"repo": repo["uris"], "suite": deb822(repo["suites"]), "components": deb822(repo["components"]),
                     "keyring": repo["signed_by"], "key_url": repo["key_url"],
                     "packages": role.render("{{ container_runtime_engine_packages }}")}
    for vendor in ("nvidia", "amd"):
        tasks = "toolkit-%s.yml" % vendor
        repo = apt_repository(role, tasks, state)
        section = {"repo": repo["uris"], "key_url": repo["key_url"], "suite": deb822(repo["suites"]),
                   "package": role.args(tasks, "ansible.builtin.apt")["name"]}
        if "components" in repo:
            section["components"] = deb822(repo["components"])
        assert role.args(tasks, "ansible.builtin.dpkg_selections")["name"] == section["package"]
        out["%s_toolkit" % vendor] = section
    assert os_data  # loaded from the picked file
    return out


def rocm(role: Role, family: str) -> dict:
    role.set_facts("main.yml", "Resolve settings")
    setup = role.repository("changes.yml")
    assert setup["file"] == "repository-Debian.yml", setup
    assert not [a for a in setup["ansible.builtin.apt"] if "deb" in a], setup
    repos, keyrings = {}, set()
    for args in setup["ansible.builtin.deb822_repository"]:
        repos[args["name"]] = {"uri": args["uris"], "suite": deb822(args["suites"]),
                               "components": deb822(args["components"]), "architectures": deb822(args["architectures"])}
        keyrings.add(args["signed_by"])
    [key] = setup["ansible.builtin.get_url"]
    assert keyrings == {key["dest"]}
    # the fields the role's converged check looks for are the ones os_packages writes
    for name, lines in role.render("{{ rocm_repo_lines }}").items():
        repo = repos[name]
        assert lines == ["URIs: " + repo["uri"], "Suites: " + repo["suite"], "Components: " + repo["components"],
                         "Architectures: " + repo["architectures"], "Signed-By: " + key["dest"]], lines
    hold = role.args("changes.yml", "ansible.builtin.dpkg_selections", extra={"item": "rocm-core"})
    assert hold["selection"] == "hold"
    return {"vars_file": role.vars_file.name, "repos": repos, "key_url": key["url"], "keyring": key["dest"],
            "dkms_package": role.args("changes.yml", "ansible.builtin.apt")["name"], "hold": "dpkg_selections"}


def vllm_router(role: Role, family: str) -> dict:
    role.set_facts("main.yml", "Resolve the OS settings")
    return {"vars_file": role.vars_file.name, "packages": role.variables["vllm_router_os_packages"],
            "python": role.variables["vllm_router_venv_python"]}


def vllm_image(role: Role, family: str) -> dict:
    return {"mirror_package": role.args("mirror.yml", "ansible.builtin.apt")["name"]}


def host_proxy(role: Role, family: str) -> dict:
    """With a proxy set: the package manager file the role writes there (apt or dnf, by OS family)
    and dockerd's drop-in."""
    role.variables.update(inferops_proxy={"http": "http://proxy.example:3128", "https": "http://proxy.example:3128"},
                          ansible_check_mode=False)
    written = []
    for t in tasks_of("host_proxy", "changes.yml"):  # top level: the apt and dnf settings
        module = None if "block" in t else module_of(t)
        if module in ("ansible.builtin.copy", "ansible.builtin.lineinfile") and role.runs(t, role.variables):
            args = role.render(t[module])
            written.append(args.get("dest") or args["path"])
    [block] = [t for t in tasks_of("host_proxy", "changes.yml") if t.get("name") == "Give dockerd its proxy"]
    assert role.runs(block, role.variables)
    [dropin] = [t for t in block["block"] if t["name"] == "Point dockerd at its proxy environment"]
    assert len(written) == 1, written
    return {"package_manager_file": written[0], "dockerd_dropin": role.render(dropin["ansible.builtin.copy"])["dest"]}


@pytest.mark.parametrize("path,distribution,arch", list(cases()))
def test_roles_render_the_documented_paths(path, distribution, arch):
    fix = fixture(path)
    covered = [name for name in RENDERED if name in fix]
    assert covered, path
    for name in covered:
        role = Role(name, facts(fix, distribution, arch))
        if RENDERED[name]:
            role.load_os_vars(RENDERED[name])
        rendered = globals()[name](role, fix["facts"]["os_family"])
        assert rendered == expected(fix, name, arch, role.variables), "%s on %s %s" % (name, distribution, arch)


def test_every_os_vars_file_is_what_a_tested_os_loads():
    """No OS data file that no tested OS loads (it would be untested data for an unclaimed OS)."""
    debian12 = {"distribution": "Debian", "os_family": "Debian", "distribution_release": "bookworm",
                "distribution_version": "12.8", "distribution_major_version": "12", "kernel": "6.1.0-28-amd64",
                "architecture": "x86_64"}
    for name, task_file in RENDERED.items():
        if not task_file:
            continue
        loaded = {Role(name, debian12).load_os_vars(task_file).name}
        for path in FIXTURES:
            fix = fixture(path)
            if name in fix:
                loaded.add(Role(name, facts(fix, fix["facts"]["distribution"], "x86_64")).load_os_vars(task_file).name)
        present = {p.name for p in (ROLES / name / "vars").glob("*.yml")} - {"main.yml"}
        assert present - loaded == set(), "%s: vars files no tested OS loads" % name


def os_neutral(name: str) -> bool:
    """No package manager, repository, hold or facts-based choice anywhere in the role."""
    role = ROLES / name
    if any(p.stem != "main" for p in (role / "vars").glob("*.yml")):
        return False
    text = "".join(p.read_text() for p in (role / "tasks").glob("*.yml"))
    return not any(marker in text for marker in OS_SPECIFIC)


def claimed(name: str) -> list:
    platforms = load(ROLES / name / "meta" / "main.yml")["galaxy_info"]["platforms"]
    return sorted((p["name"], str(v)) for p in platforms for v in p["versions"])


@pytest.mark.parametrize("name", sorted(p.parent.parent.name for p in ROLES.glob("*/meta/main.yml")))
def test_meta_claims_only_what_is_tested(name):
    """Debian 12 by Molecule; another OS only where this file renders the role there, or where the
    role has nothing OS-specific to render."""
    tested = [(MOLECULE_PLATFORM["name"], MOLECULE_PLATFORM["version"])]
    for path in FIXTURES:
        fix = fixture(path)
        if (name in fix or set(SHARED.get(name, [])) & set(fix)
                or (name not in RENDERED and name not in SHARED and os_neutral(name))):
            tested.append((fix["platform"]["name"], str(fix["platform"]["version"])))
    claims = claimed(name)
    assert tested[0] in claims
    assert [c for c in claims if c not in tested] == [], "%s claims platforms no test covers" % name


NODE_PYTHON_FILES = sorted((ROOT / "plugins" / "modules").glob("*.py")) + sorted(
    (ROOT / "plugins" / "module_utils").glob("*.py"))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_node_python_parses_what_runs_on_the_node(path):
    """Modules and module_utils (the watchdog runs module_utils/watchdog.py with /usr/bin/python3)
    must parse on the OS's own python3."""
    major, minor = (int(x) for x in fixture(path)["node_python"].split("."))
    for source in NODE_PYTHON_FILES:
        ast.parse(source.read_text(), str(source), feature_version=(major, minor))

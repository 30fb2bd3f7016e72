"""Ubuntu 22.04/24.04 and EL 9 are not run end to end (Molecule runs Debian 12 and 13 containers): for each,
render every OS-specific value a role would use there (repositories, keys, packages, DKMS headers,
the branch lock or hold, the OS vars file its loader picks) from the role's real files, and compare
with the vendors' documented layouts in fixtures/os/<os>.yml. Repositories are rendered through
os_packages, as the roles include it. meta/main.yml may claim only what Molecule or these tests cover.
The driver roles' wanted states are rendered too, and judged by node_state against a node written as the
roles' modules leave it (EL 9: DNF module stream, versionlock, CRB), so a converged node skips the install."""
import ast
import configparser
import json
import re
from pathlib import Path

import pytest
import yaml

from role_render import ROLES, ROOT, Role, gpu_node_launch, load, module_of, os_packages_callers, tasks_of
from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state  # after role_render: its loader
from ansible_collections.inferops.vllm.plugins.module_utils.controller import runtimes  # after role_render: its loader

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "os").glob("*.yml"))
# Roles whose OS-specific values this file renders, and their loader task file.
RENDERED = {"nvidia_driver": "os_vars.yml", "container_runtime": "main.yml", "rocm": "settings.yml",
            "vllm_router": "main.yml", "vllm_image": None, "host_proxy": None}
# What makes a role OS-specific: package managers, repositories, holds, facts-based choices.
OS_SPECIFIC = ("ansible.builtin.apt", "ansible.builtin.dnf", "ansible.builtin.yum", "ansible.builtin.package",
               "deb822_repository", "yum_repository", "dpkg_selections", "dnf_versionlock",
               "os_family", "ansible_facts.distribution")
MOLECULE_PLATFORM = {"name": "Debian", "version": "bookworm"}
# The roles Molecule converges on Debian 13 nodes (molecule/serve; the GB300 trays of molecule/hosts, where
# rocm is skipped: an NVIDIA node), and os_packages through nvidia_driver and container_runtime. Each
# claims Debian 13 (test_molecule_debian_13_roles_are_converged_there keeps this list true).
MOLECULE_DEBIAN_13 = {"role": {"host_proxy", "preflight", "nvidia_driver", "container_runtime", "cluster_plan",
                               "vllm_exporters", "vllm_image", "vllm_model", "vllm_serve", "os_packages"},
                      "platform": ("Debian", "trixie")}
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


def expected(fix: dict, role: str, arch: str, role_defaults: dict, distribution: str = "") -> dict:
    """The fixture's section for the role, with {cuda_arch}... filled in for this architecture (and
    {crb_repo} for this distribution)."""
    fill = dict(fix["architectures"][arch], branch=role_defaults.get("nvidia_driver_branch"),
                rocm_version=role_defaults.get("rocm_version"))
    fill["crb_repo"] = fix.get("crb_repo", {}).get(distribution, "").format(**fill)

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
    os_data = role.render("{{ nvidia_driver_os }}")
    packages = {}
    for modules in ("open", "proprietary"):
        role.variables["nvidia_driver_kernel_modules"] = modules
        packages[modules] = role.render("{{ nvidia_driver_wanted_settings.packages }}")
    role.variables["nvidia_driver_kernel_modules"] = "open"
    out = {
        "vars_file": role.vars_file.name,
        "repo": role.render("{{ nvidia_driver_wanted_settings.repo }}"),
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
                   branch_lock=role.args("install-Debian.yml", "ansible.builtin.apt")["name"],
                   keyring_list=role.render(os_data["keyring_list"]))
        # NVIDIA's own repository: the keyring's list (the same URL as the role's source) is left alone
        assert "ansible.builtin.file" not in setup
        assert out["keyring_list"] not in role.wanted()["install"]["files"]
        nvidia_driver_mirror_on_apt(role, out["keyring_list"])
        # EPEL and CRB are EL's: never on apt nodes
        assert not role.runs(epel_include(), role.variables)
        assert "repos" not in role.wanted()["install"]
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
        out["epel"] = nvidia_driver_epel(role)
    return out


def epel_include() -> dict:
    [include] = [t for t in tasks_of("nvidia_driver", "install.yml") if "epel.yml" in str(t)]
    return include


def nvidia_driver_mirror_on_apt(role: Role, keyring_list: str) -> None:
    """With a site mirror, the source list cuda-keyring installs (NVIDIA's URL) is removed before apt first
    reads the lists, and the wanted state has it gone: nothing the role leaves points apt at NVIDIA."""
    mirror = "https://mirror.example/cuda/ubuntu/"
    role.variables["nvidia_driver_repo_url"] = mirror
    setup = role.repository("install.yml")
    assert setup["ansible.builtin.file"] == [{"path": keyring_list, "state": "absent"}], setup
    [repo] = setup["ansible.builtin.deb822_repository"]
    [download] = setup["ansible.builtin.get_url"]
    assert repo["uris"] == mirror and download["url"] == mirror + "cuda-keyring_1.1-1_all.deb"
    assert "nvidia.com" not in json.dumps(setup, default=str), setup
    files = role.wanted()["install"]["files"]
    assert files[keyring_list] == {"exists": False}
    assert "nvidia.com" not in json.dumps(files, default=str)
    # keyring package, then its list removed, then the role's source, then apt update (flush_handlers)
    order = [module_of(t) for t in tasks_of("os_packages", "repository-Debian.yml")]
    removed = [t for t in tasks_of("os_packages", "repository-Debian.yml")
               if module_of(t) == "ansible.builtin.file" and t["ansible.builtin.file"].get("state") == "absent"]
    assert len(removed) == 1 and removed[0]["notify"] == "Refresh the package lists for the new repository"
    at = tasks_of("os_packages", "repository-Debian.yml").index(removed[0])
    assert order.index("ansible.builtin.deb822_repository") > at > max(
        i for i, t in enumerate(tasks_of("os_packages", "repository-Debian.yml"))
        if "deb" in (t.get("ansible.builtin.apt") or {}))
    assert order.index("ansible.builtin.meta") > order.index("ansible.builtin.deb822_repository")
    role.variables["nvidia_driver_repo_url"] = ""


def nvidia_driver_epel(role: Role) -> dict:
    """EL: for both (DKMS) streams, EPEL's release package and CRB, judged in the install step; with a site
    mirror, that mirror (with its key) instead of epel-release; none of it with nvidia_driver_enable_epel false."""
    epel = {}
    for modules in ("proprietary", "open"):
        role.variables["nvidia_driver_kernel_modules"] = modules
        assert role.runs(epel_include(), role.variables), modules
        epel = {"packages": role.args("epel.yml", "ansible.builtin.dnf")["name"],
                "crb": role.args("epel.yml", "community.general.dnf_config_manager")["name"]}
        assert role.args("epel.yml", "community.general.dnf_config_manager")["state"] == "enabled"
        wanted = role.wanted()["install"]
        assert wanted["repos"] == {epel["crb"][0]: {"enabled": True}}
        for name in epel["packages"]:
            assert wanted["packages"][name] == {"present": True}, name
    mirror, key = "https://mirror.example/epel/9/Everything/$basearch/", "https://mirror.example/epel/RPM-GPG-KEY-EPEL-9"
    role.variables.update(nvidia_driver_epel_repo_url=mirror, nvidia_driver_epel_key_url=key)
    [repo] = role.repository("epel.yml")["ansible.builtin.yum_repository"]
    assert (repo["name"], repo["baseurl"], repo["gpgkey"], repo["gpgcheck"]) == ("epel-mirror", mirror, key, True)
    assert role.args("epel.yml", "ansible.builtin.dnf")["name"] == ["dnf-plugins-core"]
    wanted = role.wanted()["install"]
    assert "epel-release" not in wanted["packages"]
    assert wanted["files"]["/etc/yum.repos.d/epel-mirror.repo"] == {
        "lines": ["baseurl = " + mirror, "gpgcheck = 1", "gpgkey = " + key]}
    role.variables.update(nvidia_driver_epel_repo_url="", nvidia_driver_epel_key_url="", nvidia_driver_enable_epel=False)
    assert not role.runs(epel_include(), role.variables)
    wanted = role.wanted()["install"]
    assert wanted["repos"] == {} and not {"epel-release", "dnf-plugins-core"} & set(wanted["packages"])
    role.variables["nvidia_driver_enable_epel"] = True
    return epel


def container_runtime(role: Role, family: str) -> dict:
    os_data = role.render("{{ container_runtime_os }}")
    out = {"vars_file": role.vars_file.name, "hold": "dpkg_selections",
           "distro_packages": role.render("{{ container_runtime_wanted_settings.engine_packages }}")}
    role.variables["container_runtime_docker_source"] = "docker"
    # what deb822_repository needs (os_packages' default, named there only): os_packages installs it first
    state = {"container_runtime_state": {"packages": {}}}
    assert role.repository("docker.yml", state)["ansible.builtin.apt"][0] == {"name": ["python3-debian"]}
    repo = apt_repository(role, "docker.yml", state)
    out["docker"] = {"repo": repo["uris"], "suite": deb822(repo["suites"]), "components": deb822(repo["components"]),
                     "keyring": repo["signed_by"], "key_url": repo["key_url"],
                     "packages": role.render("{{ container_runtime_wanted_settings.engine_packages }}")}
    for vendor, model in (("nvidia", "H200"), ("amd", "MI355X")):
        # one task file for both vendors, driven by the vendor's toolkit row (role_settings.py): the toolkit
        # the plan chose for a node of that vendor (vllm_launch.host_stack.toolkit)
        role.variables["vllm_launch"] = gpu_node_launch(model)
        repo = apt_repository(role, "toolkit.yml", state)
        section = {"repo": repo["uris"], "key_url": repo["key_url"], "suite": deb822(repo["suites"]),
                   "package": role.args("toolkit.yml", "ansible.builtin.apt")["name"]}
        if "components" in repo:
            section["components"] = deb822(repo["components"])
        assert role.args("toolkit.yml", "ansible.builtin.dpkg_selections")["name"] == section["package"]
        out["%s_toolkit" % vendor] = section
    assert os_data  # loaded from the picked file
    return out


def rocm(role: Role, family: str) -> dict:
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
    settings = role.render("{{ rocm_wanted_settings }}")
    for name, repo in repos.items():
        lines = settings["repo_lines"]["/etc/apt/sources.list.d/%s.sources" % name]
        assert lines == ["URIs: " + repo["uri"], "Suites: " + repo["suite"], "Components: " + repo["components"],
                         "Architectures: " + repo["architectures"], "Signed-By: " + key["dest"]], lines
    hold = role.args("changes.yml", "ansible.builtin.dpkg_selections", extra={"item": "rocm-core"})
    assert hold["selection"] == "hold"
    # the kernel's headers, then amdgpu-dkms (which builds against them), both judged in the one read
    installs = [t for t in tasks_of("rocm", "changes.yml") if "ansible.builtin.apt" in t]
    assert all(role.runs(t, role.variables) for t in installs)
    headers, dkms = (role.args("changes.yml", "ansible.builtin.apt", nth)["name"] for nth in (0, 1))
    wanted = role.wanted()["changes"]["packages"]
    assert wanted[headers] == {"present": True} and wanted[dkms]["present"] is True
    for setting, value in (("rocm_kernel_headers", "skip"), ("rocm_install_dkms", False)):
        role.variables[setting] = value
        assert not role.runs(installs[0], role.variables) and headers not in role.render("{{ rocm_wanted_settings.packages }}")
    role.variables.update(rocm_kernel_headers="install", rocm_install_dkms=True)
    return {"vars_file": role.vars_file.name, "repos": repos, "key_url": key["url"], "keyring": key["dest"],
            "dkms_package": dkms, "kernel_headers": headers, "hold": "dpkg_selections"}


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
        assert rendered == expected(fix, name, arch, role.variables, distribution), "%s on %s %s" % (
            name, distribution, arch)


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
    if name in MOLECULE_DEBIAN_13["role"]:
        tested.append(MOLECULE_DEBIAN_13["platform"])
    for path in FIXTURES:
        fix = fixture(path)
        if (name in fix or set(SHARED.get(name, [])) & set(fix)
                or (name not in RENDERED and name not in SHARED and os_neutral(name))):
            tested.append((fix["platform"]["name"], str(fix["platform"]["version"])))
    claims = claimed(name)
    assert tested[0] in claims
    assert [c for c in claims if c not in tested] == [], "%s claims platforms no test covers" % name
    if name in MOLECULE_DEBIAN_13["role"]:
        assert MOLECULE_DEBIAN_13["platform"] in claims, "%s runs on Debian 13 in Molecule: claim it" % name


def test_molecule_debian_13_roles_are_converged_there():
    """Each role the list says runs on Debian 13 is in the converge playbook of a scenario with Debian 13 nodes
    (a platform image of local/inferops-node:13)."""
    converged = set()
    for scenario in sorted((ROOT / "molecule").glob("*/molecule.yml")):
        config = load(scenario)
        if not any("INFEROPS_NODE_IMAGE_13" in str(p.get("image", "")) for p in config.get("platforms", [])):
            continue
        playbook = config.get("provisioner", {}).get("playbooks", {}).get("converge", "converge.yml")
        converged |= set(re.findall(r"inferops\.vllm\.(\w+)", (scenario.parent / playbook).read_text()))
    assert converged, "no Molecule scenario has Debian 13 nodes"
    assert MOLECULE_DEBIAN_13["role"] - {"os_packages"} <= converged


# What a node's python3 runs: the modules but those run on the controller, and the module_utils files of node/
# (shipped in a module) and scripts/ (the watchdog, the router's launcher).
NODE_PYTHON_FILES = sorted(p for p in (ROOT / "plugins" / "modules").glob("*.py")
                           if p.stem not in runtimes.CONTROLLER_MODULES) + sorted(
    p for p in (ROOT / "plugins" / "module_utils").rglob("*.py")
    if runtimes.runtime_of(p.relative_to(ROOT / "plugins" / "module_utils").as_posix()) != runtimes.CONTROLLER)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_node_python_parses_what_runs_on_the_node(path):
    """What runs on a node must parse on the OS's own python3 (3.9 on EL 9)."""
    major, minor = (int(x) for x in fixture(path)["node_python"].split("."))
    for source in NODE_PYTHON_FILES:
        ast.parse(source.read_text(), str(source), feature_version=(major, minor))


def el9_cases():
    fix = fixture(Path(__file__).parent / "fixtures" / "os" / "el9.yml")
    return [pytest.param(fix, distribution, id=distribution)
            for distribution in [fix["facts"]["distribution"]] + fix["also_distributions"]]


# What rpm answers on a converged EL 9 node (asked names to `rpm -q --qf` lines): the 580 open stream's driver
# (NVIDIA's RPMs carry epoch 3), the kernel's headers asked by name-version-release.arch.
EL9_RPMS = {
    "nvidia-driver": "nvidia-driver\t580.95.05-1.el9\t3\tx86_64",
    "python3-dnf-plugin-versionlock": "python3-dnf-plugin-versionlock\t4.3.0-16.el9\t0\tnoarch",
    "kernel-devel-5.14.0-503.14.1.el9_5.x86_64": "kernel-devel\t5.14.0-503.14.1.el9_5\t0\tx86_64",
    "dnf-plugins-core": "dnf-plugins-core\t4.3.0-16.el9\t0\tnoarch",
    "epel-release": "epel-release\t9-8.el9\t0\tnoarch",
    "nvidia-fabric-manager": "nvidia-fabric-manager\t580.95.05-1.el9\t3\tx86_64",
}
# the versionlock plugin's list after dnf_versionlock locked '*nvidia*580*' (one entry per installed NEVR)
EL9_LOCKS = ("# Added lock on Tue Dec  1 10:00:00 2026\nnvidia-driver-3:580.95.05-1.el9.*\n"
             "# Added lock on Tue Dec  1 10:00:00 2026\nnvidia-driver-libs-3:580.95.05-1.el9.*\n"
             "# Added lock on Tue Dec  1 10:00:00 2026\nkmod-nvidia-open-dkms-3:580.95.05-1.el9.*\n")
# /etc/dnf/modules.d/nvidia-driver.module as `dnf module install nvidia-driver:580-open` leaves it
EL9_MODULE = "[nvidia-driver]\nname=nvidia-driver\nstream={stream}\nprofiles=default\nstate=enabled\n\n"
# the distribution's file that defines CRB (RHEL's subscription-manager file, the rebuilds' own)
EL9_CRB_FILES = {"RedHat": "redhat.repo", "Rocky": "rocky.repo", "AlmaLinux": "almalinux-crb.repo"}


def write_el9_node(root: Path, role: Role, distribution: str, stream: str = "580-open", crb_enabled: str = "1",
                   locks: str = EL9_LOCKS) -> None:
    """A converged EL 9 node under root, its files as the role's modules leave them: cuda.repo as
    yum_repository writes os_packages' rendered arguments, the module stream, the lock list, CRB enabled
    (as dnf config-manager leaves it), nouveau blacklisted."""
    etc = root / "etc"
    for folder in ("yum.repos.d", "dnf/modules.d", "dnf/plugins", "modprobe.d"):
        (etc / folder).mkdir(parents=True, exist_ok=True)
    [cuda] = role.repository("install.yml")["ansible.builtin.yum_repository"]
    repo = configparser.RawConfigParser()
    repo.add_section(cuda["name"])
    params = {"baseurl": cuda["baseurl"], "gpgcheck": str(int(cuda["gpgcheck"])), "gpgkey": cuda["gpgkey"],
              "name": cuda["description"]}
    for key in sorted(params):  # yum_repository's order
        repo.set(cuda["name"], key, params[key])
    with open(etc / "yum.repos.d" / ("%s.repo" % cuda["name"]), "w") as fh:
        repo.write(fh)
    crb = role.render("{{ nvidia_driver_wanted_settings.crb }}")
    (etc / "yum.repos.d" / EL9_CRB_FILES[distribution]).write_text(
        "[%s]\nname = CodeReady Builder\nbaseurl = https://mirror.example/9/CRB/$basearch/os/\ngpgcheck = 1\n"
        "enabled = %s\n\n[%s-debug]\nname = CodeReady Builder debug\nbaseurl = https://mirror.example/9/CRB/debug/\n"
        "enabled = 0\n" % (crb, crb_enabled, crb))
    if stream:
        (etc / "dnf" / "modules.d" / "nvidia-driver.module").write_text(EL9_MODULE.format(stream=stream))
    (etc / "dnf" / "plugins" / "versionlock.list").write_text(locks)
    (etc / "modprobe.d" / "blacklist-nouveau.conf").write_text("blacklist nouveau\n")


def read_el9_node(root: Path, role: Role) -> dict:
    """node_state's one read in the role's main.yml, on the node under root (absolute paths moved there)."""
    def moved(step):
        if not step or not step.get("files"):
            return step
        return dict(step, files={str(root) + path: want for path, want in step["files"].items()})

    def rpm(argv):
        assert argv[:3] == ["rpm", "-q", "--qf"] and argv[3] == node_state.RPM_QUERY_FORMAT, argv
        return 0, "".join(EL9_RPMS[name] + "\n" if name in EL9_RPMS else "package %s is not installed\n" % name
                          for name in argv[4:]), ""

    def run(argv):
        if argv[0] == "systemctl":
            return 0, "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n", ""
        return rpm(argv)

    [read] = [t for t in tasks_of("nvidia_driver", "main.yml") if "inferops.vllm.node_state" in t]
    args = role.render(read["inferops.vllm.node_state"])
    assert args["role"] == "nvidia_driver"   # node_state's action builds the wanted state from the settings
    wanted = {name: moved(step) for name, step in role.wanted().items()}
    bins = {"dpkg-query": None, "rpm": "rpm", "systemctl": "systemctl", "docker": None}
    # the role's own reads besides the wanted state come from the same settings (probe packages, reboot flag)
    # pylint: disable-next=import-outside-toplevel
    from ansible_collections.inferops.vllm.plugins.module_utils.controller import wanted_state
    reads = wanted_state.module_args(args)
    return node_state.read_node(run, bins, packages_=reads["packages"], files_=[str(root) + p for p in reads["files"]],
                                wanted=wanted, etc=str(root / "etc"))


@pytest.mark.parametrize("fix,distribution", el9_cases())
def test_a_converged_el9_node_skips_the_install_path(tmp_path, fix, distribution):
    """EL 9 (issue 29): the install step judges the DNF module stream, its lock, CRB, EPEL and the CUDA
    repository; a converged node differs in nothing and skips install.yml, Fabric Manager and persistenced;
    another stream, none, a disabled CRB or a missing lock runs it, saying why."""
    role = Role("nvidia_driver", facts(fix, distribution, "x86_64"))
    role.load_os_vars("os_vars.yml")
    [install] = [t for t in tasks_of("nvidia_driver", "main.yml")
                 if "install.yml" in str(t.get("ansible.builtin.include_tasks"))]

    def judged(**node):
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        write_el9_node(root, role, distribution, **node)
        state = read_el9_node(root, role)
        runs = role.runs(install, dict(role.variables, nvidia_driver_state=state, nvidia_driver_vendor={"action": "install"}))
        assert runs == state["steps"]["install"]["differs"]
        return state

    state = judged()
    assert {name: step["why"] for name, step in state["steps"].items()} == {
        "install": [], "persistenced": [], "fabric_manager": [], "imex": []}
    assert state["packages"]["nvidia-driver"] == {"version": "580.95.05-1.el9", "upstream": "580.95.05", "hold": True}
    crb = role.render("{{ nvidia_driver_wanted_settings.crb }}")
    assert judged(stream="570-open")["steps"]["install"]["why"] == [
        "dnf module nvidia-driver: stream 570-open enabled, not 580-open"]
    assert judged(stream="")["steps"]["install"]["why"] == ["dnf module nvidia-driver: no stream enabled, wanted 580-open"]
    assert judged(crb_enabled="0")["steps"]["install"]["why"] == ["repository %s: disabled" % crb]
    assert judged(locks="")["steps"]["install"]["why"] == ["nvidia-driver: not on hold"]

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each role's wanted state, by step, as node_state judges it: pure functions of the role's settings.

A role hands node_state `role: <name>` and `settings:` (plain data from its vars/main.yml: tunables,
OS data, what earlier steps decided); the node_state action plugin builds the wanted state here and the
module judges it in the role's one read. The settings are typed: an unknown, missing or mistyped key
stops the task naming it, so a typo never turns into a step that is always converged. No Ansible imports.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Type

Wanted = Dict[str, Dict[str, Any]]


class SettingsError(ValueError):
    pass


def _merge(base: Dict[str, Any], extra: Mapping[str, Any]) -> Dict[str, Any]:
    """A recursive merge of mappings (Ansible's combine(recursive=true)): extra wins, mappings merge."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


# --- nvidia_driver ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NvidiaDriver:
    family: str                    # Debian (apt) or RedHat (dnf)
    packages: List[str]            # the driver packages (apt names, or dnf's '@module:stream')
    version_package: str           # the package whose version is the driver's
    version: str                   # an exact driver version, or ""
    pinning_package: str           # apt: NVIDIA's branch pinning package
    hold_packages: bool
    held_packages: List[str]       # apt: the real names that carry the driver
    own_packages: List[str]        # the packages that make a driver this role's own (the vendor check)
    setup_packages: List[str]      # apt: what deb822_repository needs (os_packages' default)
    kernel_headers: str            # install, check or skip
    kernel_headers_package: str
    repo: str                      # the CUDA repository (a site mirror or NVIDIA's)
    repo_file: str
    key_url: str                   # dnf: the repository's key
    keyring_path: str              # apt: what cuda-keyring installs
    keyring_cache: str
    keyring_list: str              # apt: the list cuda-keyring installs, removed where a mirror is used
    remove_keyring_list: bool
    pin_file: str
    pin_content: str
    blacklist_nouveau: bool
    nouveau_file: str
    block_unattended_upgrades: bool
    unattended_file: str
    unattended_content: str
    want_epel: bool                # dnf, DKMS streams: EPEL and CRB
    epel_packages: List[str]
    epel_repo_url: str
    epel_key_url: str
    epel_mirror: str               # the repository id of a site EPEL mirror
    crb: str
    persistenced: bool
    fabric_manager: bool           # vllm_launch.host_stack.fabric_manager
    fabric_manager_package: str
    hold_companions: bool
    imex: bool                     # vllm_launch.host_stack.imex is set
    imex_peers: Optional[List[str]]   # None: the domain is no inventory group
    imex_package: str
    imex_channel_file: str
    imex_channel_content: str
    imex_config_file: str
    imex_config_regexp: str
    imex_config_line: str
    imex_nodes_file: str
    imex_nodes_content: str
    imex_domain: str               # the NVLink domain's group, "" without IMEX
    gpudirect: str                 # vllm_launch.host_stack.gpudirect: off, dmabuf or peermem
    probe_packages: List[str]      # read besides the wanted state: the packages the vendor check looks at
    reboot_file: str               # and the reboot flag


def _present(names: List[str]) -> Dict[str, Dict[str, Any]]:
    return {name: {"present": True} for name in names}


def _nouveau(s: NvidiaDriver) -> Dict[str, Any]:
    return {s.nouveau_file: {"lines": ["blacklist nouveau"]}} if s.blacklist_nouveau else {}


def _install_apt(s: NvidiaDriver) -> Dict[str, Any]:
    """The driver at the pinned version, the pinning package and what the repository and DKMS need installed;
    every driver package that is installed on hold. The repository os_packages writes (keyring from CUDA's
    keyring package), with a mirror without the keyring's own list; nouveau blacklisted, the exact-version pin
    (none without an exact version), unattended-upgrades kept off the driver."""
    packages: Dict[str, Any] = {name: {"present": None, "hold": True} for name in s.held_packages} if s.hold_packages else {}
    extra = [s.kernel_headers_package] if s.kernel_headers == "install" else []
    packages = _merge(packages, _present(s.packages + [s.pinning_package] + s.setup_packages + extra))
    if s.version:
        packages = _merge(packages, {name: {"version": s.version} for name in s.packages})
    files: Dict[str, Any] = {
        s.keyring_path: {"exists": True}, s.keyring_cache: {"exists": True},
        s.repo_file: {"lines": ["URIs: " + s.repo, "Signed-By: " + s.keyring_path]},
        s.pin_file: {"content": s.pin_content, "mode": "0644"} if s.version else {"exists": False}}
    if s.remove_keyring_list:
        files[s.keyring_list] = {"exists": False}
    files.update(_nouveau(s))
    if s.block_unattended_upgrades:
        files[s.unattended_file] = {"content": s.unattended_content, "mode": "0644"}
    return {"packages": packages, "files": files}


def _install_dnf(s: NvidiaDriver) -> Dict[str, Any]:
    """The driver's module stream enabled ('@nvidia-driver:580-open'), its driver package installed and
    versionlocked (it stands for the lock glob's packages), the versionlock plugin, the kernel headers, EPEL and
    CRB where DKMS needs them, and the repositories os_packages writes (yum_repository's "key = value" lines)."""
    names = [s.version_package, "python3-dnf-plugin-versionlock"]
    names += [s.kernel_headers_package] if s.kernel_headers == "install" else []
    names += s.epel_packages if s.want_epel else []
    packages = _present(names)
    if s.hold_packages:
        packages = _merge(packages, {s.version_package: {"hold": True}})
    modules = dict(name[1:].split("/")[0].split(":", 1) for name in s.packages if name.startswith("@"))
    files: Dict[str, Any] = {s.repo_file: {"lines": ["baseurl = " + s.repo, "gpgcheck = 1", "gpgkey = " + s.key_url]}}
    files.update(_nouveau(s))
    if s.want_epel and s.epel_repo_url:
        files["/etc/yum.repos.d/%s.repo" % s.epel_mirror] = {
            "lines": ["baseurl = " + s.epel_repo_url, "gpgcheck = 1", "gpgkey = " + s.epel_key_url]}
    return {"packages": packages, "files": files, "modules": modules,
            "repos": {s.crb: {"enabled": True}} if s.want_epel else {}}


def _companion(package: str, s: NvidiaDriver) -> Dict[str, Any]:
    # Fabric Manager and IMEX must match the installed driver's version exactly
    return {package: {"version_of": s.version_package, "hold": s.hold_companions}}


def nvidia_driver(s: NvidiaDriver) -> Wanted:
    wanted: Wanted = {
        "install": _install_apt(s) if s.family == "Debian" else _install_dnf(s),
        "persistenced": {"services": {"nvidia-persistenced": {"active": True, "enabled": True}}} if s.persistenced else {},
        "fabric_manager": {} if not s.fabric_manager else {
            "packages": _companion(s.fabric_manager_package, s),
            "services": {"nvidia-fabricmanager": {"active": True, "enabled": True}}},
    }
    if not s.imex:
        wanted["imex"] = {}
    elif s.imex_peers is None:   # imex.yml refuses it with the fix
        wanted["imex"] = {"always": "the NVLink domain is not an inventory group"}
    else:
        wanted["imex"] = {
            "packages": _companion(s.imex_package, s),
            "files": {s.imex_channel_file: {"content": s.imex_channel_content, "mode": "0644"},
                      s.imex_config_file: {"last_line_matching": {"regexp": s.imex_config_regexp,
                                                                  "line": s.imex_config_line}},
                      s.imex_nodes_file: {"content": s.imex_nodes_content, "mode": "0644"}},
            "services": {"nvidia-imex": {"active": True, "enabled": True}}}
    return wanted


# --- container_runtime -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ContainerRuntime:
    engine_packages: List[str]     # docker.io (the distribution's) or docker-ce's packages
    engine_versioned: List[str]    # the ones container_runtime_docker_version pins
    docker_version: str
    live_restore: bool             # daemon.json's live-restore
    daemon_options: Dict[str, Any]  # the site's own daemon.json keys, merged over the role's
    vendor: str                    # the toolkit: nvidia, amd or none (vllm_launch.host_stack.toolkit)
    toolkit_package: str
    toolkit_version: str
    cdi_spec: str                  # NVIDIA's generated CDI spec, "" for none
    cdi: bool
    # for the tasks (role_settings.py): Docker's repository, the vendor's toolkit row, whether the GPU check runs
    docker_repo: str
    docker_suite: str
    toolkit: Dict[str, Any]
    checks_gpus: bool


def daemon_managed(s: ContainerRuntime) -> Dict[str, Any]:
    """The keys the role owns in daemon.json: live-restore, CDI for NVIDIA's toolkit, then the site's options over
    them. The daemon_json step's todo.json (node_state) is the file with these merged in, other keys kept."""
    managed: Dict[str, Any] = {"live-restore": s.live_restore}
    if s.cdi and s.vendor == "nvidia":
        managed["features"] = {"cdi": True}
    return _merge(managed, s.daemon_options)


def container_runtime(s: ContainerRuntime) -> Wanted:
    """daemon.json holds the managed keys; the engine installed at the pinned version, the pinned packages on
    hold, dockerd running; the toolkit at its pinned version (on hold when pinned), its runtime in daemon.json,
    NVIDIA's CDI spec."""
    engine: Dict[str, Any] = {name: {} for name in s.engine_packages}
    if s.docker_version:
        engine = _merge(engine, {name: {"version": s.docker_version, "hold": True} for name in s.engine_versioned})
    toolkit: Dict[str, Any] = {}
    if s.vendor in ("nvidia", "amd"):
        files: Dict[str, Any] = {"/etc/docker/daemon.json": {"json_subset": {"runtimes": {s.vendor: {}}}}}
        if s.cdi_spec and s.cdi:
            files[s.cdi_spec] = {"exists": True}
        toolkit = {"packages": {s.toolkit_package: {"version": s.toolkit_version, "hold": len(s.toolkit_version) > 0}},
                   "files": files}
    return {"daemon_json": {"files": {"/etc/docker/daemon.json": {"json_subset": daemon_managed(s)}}},
            "engine": {"packages": engine, "services": {"docker": {"active": True, "enabled": True}}},
            "toolkit": toolkit}


# --- rocm ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rocm:
    packages: List[str]            # ROCm, the kernel driver and what the repositories need
    hold_packages: bool
    held_packages: List[str]       # on hold where installed
    key_file: str
    repo_lines: Dict[str, Any]     # {repository file: the deb822 fields os_packages writes}
    users: List[str]               # rocm_users: in the render and video groups
    # for the tasks (role_settings.py): the repositories by name, their key and suite, what os_packages installs first
    repos: Dict[str, Any]
    key_url: str
    suite: str
    setup_packages: List[str]
    dkms_package: str
    kernel_headers_package: str


def rocm(s: Rocm) -> Wanted:
    """changes.yml: the repositories and their key, ROCm and the kernel driver installed and on hold, the render and
    video groups listing every user of rocm_users, who exist."""
    packages: Dict[str, Any] = {name: {"present": None, "hold": True} for name in s.held_packages} if s.hold_packages else {}
    files: Dict[str, Any] = {"/etc/apt/keyrings": {"isdir": True, "mode": "0755"},
                             s.key_file: {"exists": True, "mode": "0644"}}
    files.update({path: {"lines": lines} for path, lines in s.repo_lines.items()})
    return {"changes": {"packages": _merge(packages, _present(s.packages)), "files": files,
                        "groups": {"render": s.users, "video": s.users}, "users": s.users}}


# --- host_proxy ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class HostProxy:
    family: str                    # Debian (apt's file) or RedHat (dnf.conf's proxy= line, set on every run)
    enabled: bool                  # inferops_proxy is set: the files are there, else gone
    apt_file: str
    apt_checksum: str              # by checksum: a proxy URL may hold a password, never among the arguments
    apt_mode: str
    docker: bool                   # host_proxy_docker: dockerd's drop-in and environment file
    docker_env_file: str
    docker_env_checksum: str
    docker_dropin: str
    docker_dropin_checksum: str
    docker_service: bool           # dockerd's unit is read (the live system's, which the role restarts)
    dnf_conf: str                  # for the tasks: dnf.conf, whose proxy= line is set
    live: bool                     # host_proxy_root is the live system's
    problems: List[str]            # what is wrong with inferops_proxy (a password as ***), with the fix


def host_proxy(s: HostProxy) -> Wanted:
    """changes.yml: a file the role writes is there with its checksum and mode, one it removes is gone. A wrong
    inferops_proxy stops the read, before anything is written."""
    if s.problems:
        raise SettingsError(" ".join(s.problems))
    files: Dict[str, Any] = {}
    if s.family == "Debian":
        files[s.apt_file] = {"checksum": s.apt_checksum, "mode": s.apt_mode} if s.enabled else {"exists": False}
    if s.docker:
        files[s.docker_env_file] = {"checksum": s.docker_env_checksum, "mode": "0600"} if s.enabled else {"exists": False}
        files[s.docker_dropin] = {"checksum": s.docker_dropin_checksum, "mode": "0644"} if s.enabled else {"exists": False}
    always = "dnf.conf: its proxy= line is set on every run" if s.family == "RedHat" and s.enabled else ""
    return {"changes": {"files": files, "always": always}}


# --- vllm_serve ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VllmServe:
    config_dir: str
    config_checksum: str           # files by checksum: the env file holds secrets
    env_checksum: str
    container_name: str
    launch_hash: str               # the hash of container_options, the container's label
    full_compare: bool             # vllm_serve_full_compare: docker_container compares every option
    checks_path: str               # read whole: the launches this node's image accepted before
    compile_cache_dir: str         # the launch's compile cache on the node, '' for none
    # for the tasks (role_settings.py): the image, the container's options, the launch check's input and key, the
    # ranks the probes reach
    image: str
    container_options: Dict[str, Any]
    check_input: Dict[str, Any]
    check_key: str
    probe_ranks: int
    # the weight-cache daemon: its container's name, and {} or its options, their hash, the sockets' directory and
    # its /health (role_settings._weight_cache)
    weight_cache_container: str
    weight_cache: Dict[str, Any]


def vllm_serve(s: VllmServe) -> Wanted:
    """apply.yml: the config directory, vllm.yaml and vllm.env, and a running container labelled with this launch's
    hash that holds the env file's environment and started after the config file was last written (a run cut
    between a write and the restart or recreate leaves a container on the files before)."""
    config, env = s.config_dir + "/vllm.yaml", s.config_dir + "/vllm.env"
    container: Dict[str, Any] = {"containers": {s.container_name: {
        "running": True, "labels": {"inferops.vllm.launch": s.launch_hash}, "env_file": env, "started_after": [config]}}}
    if s.full_compare:
        container["always"] = "vllm_serve_full_compare: docker_container compares every option"
    dirs = {s.config_dir: {"isdir": True, "mode": "0755"}}
    if s.compile_cache_dir:
        dirs[s.compile_cache_dir] = {"isdir": True, "mode": "0700"}   # code the container loads: root's alone
    if s.weight_cache:
        dirs[s.weight_cache["dir"]] = {"isdir": True, "mode": "0700"}    # sockets that hand out GPU memory
        daemon = {"running": True, "labels": {"inferops.vllm.launch": s.weight_cache["launch_hash"]}, "env_file": env}
    else:
        daemon = {"exists": False}   # it would hold a copy of the weights in GPU memory
    return {"dir": {"files": dirs},
            "config": {"files": {config: {"checksum": s.config_checksum, "mode": "0644"}}},
            "env": {"files": {env: {"checksum": s.env_checksum, "mode": "0600"}}},
            "weight_cache": {"containers": {s.weight_cache_container: daemon}},
            "container": container}


# --- vllm_watchdog ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VllmWatchdog:
    dirs: List[str]
    lib_files: List[str]           # where the script and its siblings go on the node
    lib_checksums: List[str]       # their SHA-1, in the same order (the same bytes are copied)
    config_file: str
    config_content: str
    unit_dir: str
    unit_contents: Dict[str, Any]  # {unit file name: its text}
    # for the tasks (role_settings.py): the collection's files to copy, the units, what a switch-off removes
    sources: List[str]
    units: List[str]
    files: List[str]


def vllm_watchdog(s: VllmWatchdog) -> Wanted:
    """install.yml: the directories, every file it writes (the scripts by checksum) and the timer."""
    if len(s.lib_files) != len(s.lib_checksums):
        raise SettingsError("node_state role=vllm_watchdog settings: lib_files and lib_checksums differ in length")
    files: Dict[str, Any] = {path: {"isdir": True, "mode": "0755"} for path in s.dirs}
    files.update({path: {"checksum": checksum, "mode": "0644"} for path, checksum in zip(s.lib_files, s.lib_checksums)})
    files[s.config_file] = {"content": s.config_content, "mode": "0644"}
    files.update({"%s/%s" % (s.unit_dir, name): {"content": text, "mode": "0644"}
                  for name, text in s.unit_contents.items()})
    return {"install": {"files": files, "services": {"vllm-watchdog.timer": {"active": True, "enabled": True}}}}


# --- the roles -------------------------------------------------------------------------------------------------

# What a role reads besides its wanted state (node_state's lists), from the same settings: a role's whole read is
# its role and settings, so node_read can make it ahead for the role and the role's task can be answered from it.
READS: Dict[str, Callable[[Any], Dict[str, List[str]]]] = {
    "nvidia_driver": lambda s: {"packages": list(s.probe_packages), "files": [s.reboot_file]},
    # daemon.json is read whole: the role merges into it
    "container_runtime": lambda s: {"read": ["/etc/docker/daemon.json"]},
    "host_proxy": lambda s: {"services": ["docker"] if s.docker_service else []},
    "vllm_serve": lambda s: {"containers": [s.container_name, s.weight_cache_container], "read": [s.checks_path]},
}

BUILDERS: Dict[str, Tuple[Type[Any], Callable[[Any], Wanted]]] = {
    "nvidia_driver": (NvidiaDriver, nvidia_driver),
    "container_runtime": (ContainerRuntime, container_runtime),
    "rocm": (Rocm, rocm),
    "host_proxy": (HostProxy, host_proxy),
    "vllm_serve": (VllmServe, vllm_serve),
    "vllm_watchdog": (VllmWatchdog, vllm_watchdog),
}
_TYPES = {"str": str, "bool": bool, "int": int, "List[str]": list, "Dict[str, Any]": dict,
          "Optional[List[str]]": (list, type(None))}


def _coerced(kind: str, value: Any) -> Any:
    """A value as older templating may hand it (ansible-core 2.18 reads "580" back from text as 580, and renders
    None as ""): a number for a string, a yes/no word for a bool, "" for an optional value; anything else is left
    for the type check."""
    if kind == "str" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if kind == "bool" and isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    if kind.startswith("Optional[") and value in ("", "None"):   # 2.18 renders None as ""
        return None
    return value


def _settings(role: str, settings: Mapping[str, Any]) -> Any:
    """The role's typed settings; SettingsError names an unknown role, and every unknown, missing or mistyped
    setting."""
    if role not in BUILDERS:
        raise SettingsError("node_state role=%r: no wanted state is built for it (roles: %s)"
                            % (role, ", ".join(sorted(BUILDERS))))
    kind = BUILDERS[role][0]
    known = {f.name: f for f in fields(kind)}
    problems = ["%s: not a setting of %s" % (name, role) for name in sorted(set(settings) - set(known))]
    problems += ["%s: missing" % name for name in known if name not in settings]
    values = {name: _coerced(str(field_.type), settings[name]) for name, field_ in known.items() if name in settings}
    for name, field_ in known.items():
        if name in values and not isinstance(values[name], _TYPES[str(field_.type)]):
            problems.append("%s=%r: must be %s" % (name, values[name], field_.type))
    if problems:
        raise SettingsError("node_state role=%s settings: %s" % (role, "; ".join(problems)))
    return kind(**values)


def build(role: str, settings: Mapping[str, Any]) -> Wanted:
    """The role's wanted state from its settings (SettingsError as _settings)."""
    typed = _settings(role, settings)
    return BUILDERS[role][1](typed)


def module_args(args: Mapping[str, Any]) -> Dict[str, Any]:
    """node_state's arguments as a task gives them, with `role:` and `settings:` turned into what the module
    reads: the role's wanted state (steps the task names itself are added to, or replace, the role's) and the
    role's own reads beside the task's lists. Without `role:`, the arguments as they are."""
    out = dict(args)
    role, settings = out.pop("role", None), out.pop("settings", None)
    if not role:
        return out
    typed = _settings(role, settings or {})
    out["wanted"] = dict(BUILDERS[role][1](typed), **(out.get("wanted") or {}))
    for key, names in READS.get(role, lambda _s: {})(typed).items():
        out[key] = list(dict.fromkeys(list(out.get(key) or []) + names))
    return out

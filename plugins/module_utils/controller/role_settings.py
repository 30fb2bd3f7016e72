# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's settings, derived in one place: from its own options (the names its argument specs declare, lookup
inferops.vllm.role_options), its OS data (lookup inferops.vllm.os_data), the node's OS family and the plan's host
stack. What the role's tasks apply and what node_state judges (wanted_state.py) are both read from the result, so
no path, content or package is stated twice, and vars/ holds no computed value of its own.

Pure functions; the filter inferops.vllm.role_settings calls them."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    gpu_exporter, node_layout, render, routers, runtimes, specs, watchdog_config)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.os_data import ROLES_DIR
from ansible_collections.inferops.vllm.plugins.module_utils.controller.boundary import CONTROL


class RoleSettingsError(ValueError):
    pass


def flag(value: Any) -> bool:
    """A tunable as its argument spec's bool reads it (Ansible's own reader), which the plan enforces before any
    host: y, yes, on, 1, true, t (any case) are true. (Jinja's `| bool` read y and t as false, against the spec.)"""
    return boolean(value, strict=False)


def _reader(options: Mapping[str, Any], role: str, unset: Any = None) -> Callable[..., Any]:
    """A getter of a role's options by their name without the role's prefix: `unset`, or the default the call gives,
    where the option has no value."""
    def opt(name: str, default: Any = unset) -> Any:
        value = options.get(role + "_" + name)
        return default if value is None else value
    return opt


def _unique(names: List[str]) -> List[str]:
    return list(dict.fromkeys(names))


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def setup_packages() -> List[str]:
    """What deb822_repository needs on an apt node before os_packages adds a repository: os_packages' default, the
    one place it is named."""
    return [str(name) for name in specs.role_default("os_packages", "os_packages_setup_packages") or []]


# --- nvidia_driver ---------------------------------------------------------------------------------------------

NVIDIA_PIN_FILE = "/etc/apt/preferences.d/00-inferops-nvidia-driver"
NVIDIA_UNATTENDED_FILE = "/etc/apt/apt.conf.d/51inferops-nvidia-driver"
NVIDIA_UNATTENDED_CONTENT = (
    "// Managed by inferops.vllm: a driver library upgrade under a loaded kernel module breaks NVML.\n"
    "Unattended-Upgrade::Package-Blacklist {\n"
    '    "nvidia-";\n'
    '    "libnvidia-";\n'
    '    "cuda-drivers";\n'
    "};\n")
NVIDIA_NOUVEAU_FILE = "/etc/modprobe.d/blacklist-nouveau.conf"
NVIDIA_REBOOT_FILE = "/var/run/reboot-required"
NVIDIA_IMEX_CHANNEL_FILE = "/etc/modprobe.d/nvidia-imex-channel.conf"
NVIDIA_IMEX_CHANNEL_CONTENT = ("# Managed by inferops.vllm: containers use /dev/nvidia-caps-imex-channels/channel0 for MNNVL.\n"
                               "options nvidia NVreg_CreateImexChannel0=1\n")
NVIDIA_IMEX_CONFIG_FILE = "/etc/nvidia-imex/config.cfg"
NVIDIA_IMEX_NODES_FILE = "/etc/nvidia-imex/nodes_config.cfg"
# a repository id of its own: epel-release owns epel.repo and [epel]
NVIDIA_EPEL_MIRROR = "epel-mirror"


def _nvidia_pin(version: str, held: List[str]) -> str:
    return ("# Managed by inferops.vllm: nvidia_driver_version=%s\nPackage: %s\nPin: version %s-*\nPin-Priority: 1001\n"
            % (version, " ".join(held), version))


def nvidia_driver(options: Mapping[str, Any], os_data: Mapping[str, Any], family: str,
                  stack: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """nvidia_driver's settings (wanted_state.NvidiaDriver's fields): user values win over the OS data; what the
    plan decided (Fabric Manager, the IMEX domain, GPUDirect) comes from the host stack."""
    opt = _reader(options, "nvidia_driver", "")

    def os_value(name: str, default: Any = "") -> Any:
        value = os_data.get(name)
        return default if value is None else value

    debian = family == "Debian"
    modules = str(opt("kernel_modules", "open"))
    if modules not in (os_data.get("packages") or {}):
        raise RoleSettingsError("nvidia_driver_kernel_modules=%r: not one of %s. Fix: set open or proprietary"
                                % (modules, ", ".join(sorted(os_data.get("packages") or {}))))
    version = str(opt("version"))
    repo = str(opt("repo_url") or os_value("repo_url"))
    version_package = str(os_data["version_package"][modules])
    held = [str(name) for name in os_value("held_packages", [])]
    probe = (held if debian else []) + [version_package]
    if debian:
        key_url = str(opt("keyring_url") or repo.rstrip("/") + "/" + str(os_value("keyring_file")))
    else:
        key_url = repo.rstrip("/") + "/" + str(os_value("key_file"))
    want_epel = flag(opt("enable_epel", True)) and flag((os_value("dkms_needs_epel", {}) or {}).get(modules, False))
    epel_repo_url = str(opt("epel_repo_url"))
    stack = stack or {}   # none where the plan did not run: the role's tasks stop on that first
    imex_stack = stack.get("imex")
    imex = imex_stack is not None
    peers = (imex_stack or {}).get("peers") if imex else []
    companions = (str(os_value("fabric_manager_package")), str(os_value("imex_package")))
    return {
        "family": family,
        "packages": [str(name) for name in os_data["packages"][modules]],
        "version_package": version_package,
        "version": version,
        "pinning_package": "nvidia-driver-pinning-%s" % opt("branch"),
        "hold_packages": flag(opt("hold_packages", True)),
        "held_packages": held,
        "own_packages": [name for name in _unique(probe) if name not in companions],
        "setup_packages": setup_packages(),
        "kernel_headers": str(opt("kernel_headers", "install")),
        "kernel_headers_package": str(os_value("kernel_headers_package")),
        "repo": repo,
        "repo_file": str(os_value("repo_file")),
        "key_url": key_url,
        "keyring_path": str(os_value("keyring_path")),
        "keyring_cache": "/var/cache/apt/" + str(os_value("keyring_file")),
        "keyring_list": str(os_value("keyring_list")),
        # a site mirror on apt: the source list cuda-keyring installs points at NVIDIA and goes
        "remove_keyring_list": debian and repo.rstrip("/") != str(os_value("repo_url")).rstrip("/"),
        "pin_file": NVIDIA_PIN_FILE,
        "pin_content": _nvidia_pin(version, held),
        "blacklist_nouveau": flag(opt("blacklist_nouveau", True)),
        "nouveau_file": NVIDIA_NOUVEAU_FILE,
        "block_unattended_upgrades": flag(opt("block_unattended_upgrades", True)),
        "unattended_file": NVIDIA_UNATTENDED_FILE,
        "unattended_content": NVIDIA_UNATTENDED_CONTENT,
        # EL: EPEL (dkms) and CRB (its build dependencies) where the stream builds with DKMS; never on apt nodes
        "want_epel": want_epel,
        "epel_packages": (["dnf-plugins-core"] + ([] if epel_repo_url else [str(os_value("epel_release_package"))])
                          if want_epel else []),
        "epel_repo_url": epel_repo_url,
        "epel_key_url": str(opt("epel_key_url")),
        "epel_mirror": NVIDIA_EPEL_MIRROR,
        "crb": str(opt("crb_repo") or os_value("crb_repo")) if want_epel else "",
        "persistenced": flag(opt("persistenced", True)),
        "fabric_manager": bool(stack.get("fabric_manager")),
        "fabric_manager_package": companions[0],
        # companion.yml holds Fabric Manager and IMEX on apt nodes; on dnf nodes the install's versionlock covers them
        "hold_companions": flag(opt("hold_packages", True)) and debian,
        "imex": imex,
        "imex_domain": str((imex_stack or {}).get("domain") or "") if imex else "",
        "imex_peers": [str(peer) for peer in peers] if peers is not None else None,
        "imex_package": companions[1],
        "imex_channel_file": NVIDIA_IMEX_CHANNEL_FILE,
        "imex_channel_content": NVIDIA_IMEX_CHANNEL_CONTENT,
        "imex_config_file": NVIDIA_IMEX_CONFIG_FILE,
        "imex_config_regexp": "^IMEX_NODE_CONFIG_FILE=",
        "imex_config_line": "IMEX_NODE_CONFIG_FILE=" + NVIDIA_IMEX_NODES_FILE,
        "imex_nodes_file": NVIDIA_IMEX_NODES_FILE,
        # identical and sorted on every tray of the domain: the plan writes it (host_stack.imex.nodes_config)
        "imex_nodes_content": str((imex_stack or {}).get("nodes_config") or "") if imex and peers is not None else "",
        "gpudirect": str(stack.get("gpudirect") or "off"),
        # read besides the wanted state: the packages the vendor check looks at, and the reboot flag
        "probe_packages": probe,
        "reboot_file": NVIDIA_REBOOT_FILE,
    }


# --- container_runtime -----------------------------------------------------------------------------------------

# What differs between the vendors' toolkits: the repository (its URLs are OS data; NVIDIA's is flat, os_packages'
# default suite), the tool that registers the runtime in daemon.json, and the CDI spec it generates ("" for none).
CONTAINER_TOOLKITS: Dict[str, Dict[str, Any]] = {
    "nvidia": {"repo_url": "nvidia_repo_url", "key_url": "nvidia_key_url", "suites": ["/"], "components": [],
               "ctk": "nvidia-ctk", "cdi_spec": "/var/run/cdi/nvidia.yaml"},
    "amd": {"repo_url": "amd_repo_url", "key_url": "amd_key_url", "suites": None, "components": ["main"],
            "ctk": "amd-ctk", "cdi_spec": ""},
}
CONTAINER_NO_LAUNCH = (
    "container_runtime_gpu_vendor=auto is decided by the launch plan, which did not run: run the "
    "inferops.vllm.cluster_plan role (or site.yml) first, or set container_runtime_gpu_vendor to nvidia, amd or none.")


def container_runtime(options: Mapping[str, Any], os_data: Mapping[str, Any], family: str,
                      stack: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """container_runtime's settings (wanted_state.ContainerRuntime's fields): the engine from the distribution or
    Docker's repository, and the toolkit of the vendor the plan chose (host_stack.toolkit); a node without a launch
    takes container_runtime_gpu_vendor, where auto has nothing to decide from."""
    opt = _reader(options, "container_runtime", "")

    del family   # apt only: the OS data file says which packages
    if stack is not None:
        vendor = str(stack.get("toolkit") or "none")
    elif str(opt("gpu_vendor", "auto")) != "auto":
        vendor = str(opt("gpu_vendor"))
    else:
        raise RoleSettingsError(CONTAINER_NO_LAUNCH)
    distro = str(opt("docker_source", "distro")) == "distro"
    package = "%s-container-toolkit" % vendor
    toolkit: Dict[str, Any] = {}
    if vendor in CONTAINER_TOOLKITS:
        row = CONTAINER_TOOLKITS[vendor]
        toolkit = {"repo_url": str(opt("toolkit_repo_url") or os_data[row["repo_url"]]),
                   "key_url": str(opt("toolkit_key_url") or os_data[row["key_url"]]),
                   "key_file": "/etc/apt/keyrings/%s.asc" % package,
                   "suites": row["suites"] if row["suites"] is not None else [str(os_data["amd_suite"])],
                   "components": row["components"], "ctk": row["ctk"], "cdi_spec": row["cdi_spec"]}
    return {
        "engine_packages": [str(name) for name in os_data["distro_packages" if distro else "docker_ce_packages"]],
        # the engine packages that carry container_runtime_docker_version
        "engine_versioned": ["docker.io"] if distro else ["docker-ce", "docker-ce-cli"],
        "docker_version": str(opt("docker_version")),
        "docker_repo": str(opt("docker_repo_url") or os_data.get("docker_repo_url") or ""),
        "docker_suite": str(os_data.get("docker_suite") or ""),
        "live_restore": flag(opt("live_restore", True)),
        "daemon_options": dict(opt("daemon_options", {}) or {}),
        "vendor": vendor,
        "toolkit_package": package,
        "toolkit_version": str(opt("toolkit_version")),
        "toolkit": toolkit,
        "cdi_spec": str(toolkit.get("cdi_spec", "")),
        "cdi": flag(opt("cdi", True)),
        # the GPU check runs where the toolkit is a vendor's and the check is on
        "checks_gpus": vendor in CONTAINER_TOOLKITS and flag(opt("gpu_check", True)),
    }


# --- host_proxy ------------------------------------------------------------------------------------------------

def host_proxy(options: Mapping[str, Any], proxy: Mapping[str, Any], family: str) -> Dict[str, Any]:
    """host_proxy's settings (wanted_state.HostProxy's fields) from the site's proxy as lookup site_proxy renders it
    (module_utils/controller/proxy.py): the files by checksum, never their text (a proxy URL may hold a password,
    and these settings are node_state's arguments); under host_proxy_root, a tree other than the live system's."""
    opt = _reader(options, "host_proxy")

    prefix = str(opt("root", "/")).rstrip("/")
    docker = flag(opt("docker", True))
    return {
        "family": family,
        "enabled": flag(proxy.get("enabled", False)),
        "apt_file": prefix + "/etc/apt/apt.conf.d/90inferops-proxy",
        "apt_checksum": _sha1(str(proxy.get("apt_conf") or "")),
        "apt_mode": "0640" if proxy.get("secret") else "0644",   # a password: not world-readable
        "dnf_conf": prefix + "/etc/dnf/dnf.conf",
        "docker": docker,
        "docker_env_file": prefix + "/etc/docker/http-proxy.env",
        "docker_env_checksum": _sha1(str(proxy.get("docker_env") or "")),
        "docker_dropin": prefix + "/etc/systemd/system/docker.service.d/http-proxy.conf",
        "docker_dropin_checksum": _sha1(str(proxy.get("docker_dropin") or "")),
        # only the live system's dockerd is read, reloaded and restarted; a tree under host_proxy_root is not
        "live": prefix == "",
        "docker_service": docker and prefix == "",
        "problems": [str(problem) for problem in proxy.get("problems") or []],
    }


# --- rocm ------------------------------------------------------------------------------------------------------

ROCM_KEY_FILE = "/etc/apt/keyrings/rocm.asc"
ROCM_REPO_FILES = {"rocm": "/etc/apt/sources.list.d/rocm.sources", "amdgpu": "/etc/apt/sources.list.d/amdgpu.sources"}


def rocm(options: Mapping[str, Any], os_data: Mapping[str, Any]) -> Dict[str, Any]:
    """rocm's settings (wanted_state.Rocm's fields): AMD's two repositories (a site's mirrors win) with their key,
    ROCm, and amdgpu-dkms with the running kernel's headers where DKMS builds it; on hold where installed."""
    opt = _reader(options, "rocm", "")

    version = str(opt("version"))
    repos = {"rocm": str(opt("repo_url") or "https://repo.radeon.com/rocm/apt/" + version),
             "amdgpu": str(opt("amdgpu_repo_url") or "https://repo.radeon.com/amdgpu/%s/ubuntu"
                           % (opt("amdgpu_version") or version))}
    suite = str(opt("suite") or os_data["suite"])
    packages = [str(name) for name in opt("packages", [])]
    dkms = [str(os_data["dkms_package"])]
    if str(opt("kernel_headers", "install")) == "install":
        dkms = [str(os_data["kernel_headers_package"])] + dkms   # DKMS builds amdgpu against them
    setup = setup_packages() + ["gnupg"]
    return {
        "repos": repos,
        "key_url": str(opt("key_url") or "https://repo.radeon.com/rocm/rocm.gpg.key"),
        "suite": suite,
        "setup_packages": setup,
        "packages": setup + packages + (dkms if flag(opt("install_dkms", True)) else []),
        "dkms_package": str(os_data["dkms_package"]),
        "kernel_headers_package": str(os_data["kernel_headers_package"]),
        "hold_packages": flag(opt("hold_packages", True)),
        "held_packages": packages + [str(os_data["dkms_package"]), str(os_data["version_package"])],
        "key_file": ROCM_KEY_FILE,
        # the fields deb822_repository writes for each repository, by file
        "repo_lines": {ROCM_REPO_FILES[name]: ["URIs: " + repos[name], "Suites: " + suite, "Components: main",
                                               "Architectures: amd64", "Signed-By: " + ROCM_KEY_FILE]
                       for name in ("rocm", "amdgpu")},
        "users": [str(user) for user in opt("users", [])],
    }


# --- vllm_watchdog ---------------------------------------------------------------------------------------------

WATCHDOG_UNITS = ["vllm-watchdog.service", "vllm-watchdog.timer"]
WATCHDOG_UNIT_DIR = "/etc/systemd/system"
MODULE_UTILS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def watchdog_sources() -> List[str]:
    """The script and the node/ files it imports beside it (runtimes.SCRIPT_SIBLINGS): the collection's own files,
    in the repository and in an installed collection alike, so the logic exists once."""
    names = ["scripts/watchdog.py"] + ["node/" + name for name in runtimes.SCRIPT_SIBLINGS["watchdog.py"]]
    return [os.path.join(MODULE_UTILS, name) for name in names]


def _sha1_file(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha1(handle.read()).hexdigest()


def vllm_watchdog(options: Mapping[str, Any], launch: Mapping[str, Any]) -> Dict[str, Any]:
    """vllm_watchdog's settings (wanted_state.VllmWatchdog's fields): the directories, the script and its siblings
    (copied as they are, so judged by checksum), the config (watchdog_config.py; no secret: it names the env file)
    and the units, whole; what a switch-off removes."""
    opt = _reader(options, "vllm_watchdog")

    try:
        config = watchdog_config.config(launch, options)
        run_limit = int(opt("probe_timeout")) + int(opt("follower_delay")) + 360   # docker waits up to 300 s
    except (watchdog_config.WatchdogConfigError, TypeError, ValueError) as err:
        raise RoleSettingsError(str(err)) from None
    lib_dir, config_file = str(opt("lib_dir")), str(opt("config_file"))
    status_file, prom_file = str(opt("status_file")), str(opt("prom_file") or "")
    sources = watchdog_sources()
    lib_files = ["%s/%s" % (lib_dir, os.path.basename(path)) for path in sources]
    interval, script = opt("interval"), lib_dir + "/watchdog.py"
    service = (
        "# Managed by inferops.vllm (vllm_watchdog role).\n"
        "# One watchdog run: probe the cluster's API, restart this node's vLLM container when due.\n"
        "[Unit]\n"
        "Description=vLLM watchdog for cluster %s (rank %s, %s)\n"
        "Documentation=file://%s\n"
        "After=docker.service network-online.target\n"
        "Wants=network-online.target\n\n"
        "[Service]\n"
        "Type=oneshot\n"
        "ExecStart=%s %s --config %s\n"
        "TimeoutStartSec=%d\n"
        "SyslogIdentifier=vllm-watchdog\n"
        % (launch["cluster"]["name"], launch["rank"], launch["role"], config_file, opt("python"), script, config_file,
           run_limit))
    timer = (
        "# Managed by inferops.vllm (vllm_watchdog role).\n"
        "# The first run when the timer starts, then %s s after each run ends.\n"
        "[Unit]\n"
        "Description=Run the vLLM watchdog every %s s\n\n"
        "[Timer]\n"
        "OnBootSec=%s\n"
        "OnUnitInactiveSec=%s\n"
        "AccuracySec=1s\n\n"
        "[Install]\n"
        "WantedBy=timers.target\n" % (interval, interval, interval, interval))
    dirs = [lib_dir, os.path.dirname(config_file), os.path.dirname(status_file)]
    dirs += [os.path.dirname(prom_file)] if prom_file else []
    return {
        "dirs": _unique(dirs),
        "sources": sources,
        "lib_files": lib_files,
        "lib_checksums": [_sha1_file(path) for path in sources],
        "config_file": config_file,
        # as to_nice_json writes it
        "config_content": json.dumps(config, indent=4, sort_keys=True, separators=(",", ": ")) + "\n",
        "units": list(WATCHDOG_UNITS),
        "unit_dir": WATCHDOG_UNIT_DIR,
        "unit_contents": {WATCHDOG_UNITS[0]: service, WATCHDOG_UNITS[1]: timer},
        # everything the role writes besides the units, removed when the watchdog is switched off
        "files": [path for path in [config_file, status_file, prom_file] + lib_files if path],
    }


# --- vllm_serve ------------------------------------------------------------------------------------------------

def _sha256_json(value: Any) -> str:
    """The hash of a value's JSON text with sorted keys, as `to_json(sort_keys=true) | hash('sha256')` gave it: the
    launch label of every running container is this hash, so the text must stay byte for byte the same."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()


def serve_env_file(launch: Mapping[str, Any], secrets: Mapping[str, Any]) -> str:
    """The env file docker reads into the container (docker_container's env_file): the launch's environment, then its
    secrets by name (vllm_launch.secret_env), one NAME=value line each. The plan refuses a newline in a value, so each
    line reads back as one variable with its exact value (tests/unit/test_env_file.py)."""
    lines = ["# Managed by inferops.vllm"]
    lines += ["%s=%s" % (key, value) for key, value in (launch.get("env") or {}).items()]
    lines += ["%s=%s" % (key, secrets[key]) for key in (launch.get("secret_env") or {})]
    return "\n".join(lines) + "\n"


def secret_problems(launch: Mapping[str, Any], secrets: Mapping[str, Any]) -> None:
    """The plan never reads a secret, so its value is judged here, on the controller, before the env file is built:
    a line break would start another variable in the file, and blanks at either end are stripped by docker's reader.
    RoleSettingsError names the variable, never the value."""
    for env_name, variable in (launch.get("secret_env") or {}).items():
        if env_name not in secrets:
            raise RoleSettingsError("%s: not set, but the launch passes it as %s. Fix: set %s (ansible-vault)"
                                    % (variable, env_name, variable))
        text = str(secrets[env_name])
        if CONTROL.search(text):
            why = "holds a line break or another control character, which would end the line in vllm.env"
        elif text != text.strip():
            why = "starts or ends with blanks, which docker's env-file reader strips"
        elif not text:
            why = "is empty"
        else:
            continue
        raise RoleSettingsError("%s (the container's %s): %s, so vLLM would not get the value you set. Fix: set %s "
                                "to the secret alone, on one line" % (variable, env_name, why, variable))


def vllm_serve(options: Mapping[str, Any], launch: Mapping[str, Any], image: str,
               secrets: Mapping[str, Any]) -> Dict[str, Any]:
    """vllm_serve's settings (wanted_state.VllmServe's fields; no secret: they are node_state's arguments, the env
    file is judged by checksum): the config and env files, every docker_container option the container is created
    from and their hash (its inferops.vllm.launch label, so an option added here both reaches docker and recreates
    a container created without it), and what the launch check reads with its verdict's key."""
    opt = _reader(options, "vllm_serve")

    secret_problems(launch, secrets)
    config_dir = str(opt("config_dir"))
    container = dict(render.docker_container_options(launch))
    container.update({
        "name": opt("container_name"), "image": image, "command": launch["command"],
        "env_file": config_dir + "/vllm.env",
        "volumes": list(launch["container"]["volumes"]) + [
            "%s:%s:ro" % (config_dir, os.path.dirname(launch["config_path"]))],
        "restart_policy": opt("restart_policy"), "log_driver": "json-file",
        "log_options": {"max-size": opt("log_max_size"), "max-file": str(opt("log_max_files"))},
        "labels": {"inferops.vllm.cluster": launch["cluster"]["name"], "inferops.vllm.rank": str(launch["rank"]),
                   "inferops.vllm.role": launch["role"]}})
    check_input = {"argv": launch["argv"], "config_yaml": launch["config_yaml"],
                   "env": sorted(list(launch.get("env") or {}) + list(launch.get("secret_env") or {}))}
    cache = _weight_cache(opt, launch, image, config_dir)
    if cache:
        check_input["preload_argv"] = cache["options"]["command"]
    return {
        "config_dir": config_dir,
        "config_checksum": _sha1(str(launch["config_yaml"])),
        "env_checksum": _sha1(serve_env_file(launch, secrets)),
        "container_name": str(opt("container_name")),
        "launch_hash": _sha256_json(container),
        "full_compare": flag(opt("full_compare")),
        "checks_path": "%s/launch-checks.json" % opt("state_dir"),
        "compile_cache_dir": str(launch.get("compile_cache_dir") or ""),
        "image": image,
        "container_options": container,
        # what the launch check reads (check.yml): the argv, the config file and the env's names; with the image,
        # the key of its verdict
        "check_input": check_input,
        "check_key": _sha256_json(dict(check_input, image=image)),
        # how many ranks behind the head's API the probes reach one by one
        "probe_ranks": int(launch["host_stack"]["probe_ranks"]),
        # the weight-cache daemon's container: its name always (one the launch no longer has is removed), and with
        # the launch's weight_cache its options, their hash, the sockets' directory and its /health
        "weight_cache_container": _weight_cache_name(opt),
        "weight_cache": cache,
    }


def _weight_cache_name(opt: Callable[..., Any]) -> str:
    return "%s-weight-cache" % opt("container_name")


def _weight_cache(opt: Callable[..., Any], launch: Mapping[str, Any], image: str, config_dir: str) -> Dict[str, Any]:
    """The daemon's container (`vllm preload` in the same image): the engine's GPU, fabric and volume options, the same
    env file, its own argv and labels ({} without the launch's weight_cache)."""
    cache = launch.get("weight_cache")
    if not cache:
        return {}
    options = dict(render.docker_container_options(launch))
    options.update({
        "name": _weight_cache_name(opt), "image": image, "entrypoint": ["vllm", "preload"],
        "command": list(cache["argv"]), "env_file": config_dir + "/vllm.env",
        "volumes": list(launch["container"]["volumes"]),
        # never brought back by docker (a crash, a reboot): beside a running vLLM it would load a second copy of the
        # weights; the next converge starts it with vLLM stopped, and vLLM reads the disk until then
        "restart_policy": "no", "log_driver": "json-file",
        "log_options": {"max-size": opt("log_max_size"), "max-file": str(opt("log_max_files"))},
        "labels": {"inferops.vllm.cluster": launch["cluster"]["name"], "inferops.vllm.rank": str(launch["rank"]),
                   "inferops.vllm.role": "weight-cache"}})
    return {"options": options, "launch_hash": _sha256_json(options), "dir": str(cache["dir"]), "url": str(cache["url"])}


# --- vllm_exporters --------------------------------------------------------------------------------------------

EXPORTER_FILES = os.path.join(ROLES_DIR, "vllm_exporters", "files")


def _role_file(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def vllm_exporters(options: Mapping[str, Any], launch: Mapping[str, Any], address: str, prom_file: str,
                   os_data: Mapping[str, Any]) -> Dict[str, Any]:
    """vllm_exporters' settings: the GPU exporter of the cluster's vendor (DCGM's or AMD's, none on the CPU or with
    vllm_exporters_gpu off) on the node's address, its field list, and node_exporter with the watchdog's textfile
    directory; what the role reads on the node (DCGM's host engine, node_exporter)."""
    opt = _reader(options, "vllm_exporters")

    vendor = str(launch["cluster"].get("vendor") or "none")
    vendor = vendor if flag(opt("gpu", True)) and vendor in ("nvidia", "amd") else "none"
    host = str(opt("listen_address", "") or address)
    host_part = "[%s]" % host if ":" in host else host
    port = opt("dcgm_port") if vendor == "nvidia" else opt("amd_port")
    node_exporter = flag(opt("node_exporter", False))
    exporter_dir = node_layout.default("config_dir") + "/gpu-exporter"
    if vendor == "nvidia":
        fields = _role_file(os.path.join(EXPORTER_FILES, "dcgm-counters.csv"))
    else:
        try:
            fields = gpu_exporter.amd_config(json.loads(_role_file(os.path.join(EXPORTER_FILES, "amd-fields.json"))),
                                             int(opt("amd_port")))
        except ValueError as err:
            raise RoleSettingsError(str(err)) from None
    return {
        "vendor": vendor,
        "listen": "%s:%s" % (host_part, port),
        "url": "http://%s:%s/metrics" % (host_part, port),
        "container": "inferops-dcgm-exporter" if vendor == "nvidia" else "inferops-amd-metrics-exporter",
        "config_dir": exporter_dir,
        "fields_file": exporter_dir + ("/dcgm-counters.csv" if vendor == "nvidia" else "/config.json"),
        "fields_content": fields,
        "ready_retries": 45,
        "ready_delay": 2,
        "textfile_dir": os.path.dirname(prom_file),
        "node_exporter_listen": "%s:%s" % (host_part, opt("node_exporter_port")),
        "reads_node": vendor != "none" or node_exporter,
        "read": {"services": ["nvidia-dcgm"] + ([str(os_data["node_exporter_service"])] if node_exporter else []),
                 "packages": [str(os_data["node_exporter_package"])] if node_exporter else []},
    }


# --- vllm_router -----------------------------------------------------------------------------------------------

def vllm_router(options: Mapping[str, Any], compiled: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """vllm_router's settings: its configuration as the plan compiled it (controller/routers.py; None when this run
    compiled part of the site, and the router keeps the one it has), its files, and the URL the controller-side checks
    reach it by (a wildcard listener on loopback)."""
    opt = _reader(options, "vllm_router")
    config = dict(compiled) if isinstance(compiled, Mapping) else None
    config_dir, venv = str(opt("config_dir")), str(opt("venv"))
    host = str(opt("host"))
    host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    return {
        "config": config,
        "kv_sides": routers.kv_sides(config or {}),
        "config_file": config_dir + "/router.json",
        "key_file": config_dir + "/api-key",
        "launcher": venv + "/launch_router.py",
        "requirements": venv + "/requirements.txt",
        "local_url": "http://%s:%s" % ("[%s]" % host if ":" in host and not host.startswith("[") else host, opt("port")),
    }


BUILDERS: Dict[str, Callable[..., Dict[str, Any]]] = {
    "nvidia_driver": nvidia_driver, "rocm": rocm, "container_runtime": container_runtime, "host_proxy": host_proxy,
    "vllm_serve": vllm_serve, "vllm_watchdog": vllm_watchdog, "vllm_exporters": vllm_exporters, "vllm_router": vllm_router,
}


def build(role: str, options: Mapping[str, Any], **inputs: Any) -> Dict[str, Any]:
    """The role's settings; RoleSettingsError names an unknown role, a missing or unknown input, or a value that
    cannot be used, with the fix."""
    if role not in BUILDERS:
        raise RoleSettingsError("role_settings: no settings are derived for role %r (roles: %s)"
                                % (role, ", ".join(sorted(BUILDERS))))
    wanted = [name for name in inspect.signature(BUILDERS[role]).parameters if name != "options"]
    if sorted(inputs) != sorted(wanted):
        raise RoleSettingsError("role_settings(%r): takes the inputs %s, not %s"
                                % (role, ", ".join(wanted), ", ".join(sorted(inputs)) or "none"))
    return BUILDERS[role](options, **inputs)

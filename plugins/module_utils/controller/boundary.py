# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The trust boundary: what every string, number and name read from the inventory may hold before it
reaches a node (a file, a path, argv, env, a unit, a label). The roles' argument specs give each
variable its kind (str, int, path, list) and choices; this file gives the constraint on top of the kind,
once per format, and names the format of each variable. Every pattern matches whole (\\A...\\Z: "$" would
also match before a final newline). A name becomes a path only through `inside`. No Ansible imports."""

from __future__ import annotations

import ipaddress
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

# C0 controls, DEL and the C1 controls: a newline ends a line of vllm.env, a header comment or a unit
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# what a file name built from an inventory name may be: no separator, no dot-only name, no blank
FILE_NAME = re.compile(r"\A(?!\.{1,2}\Z)[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,127}\Z")
# a Linux interface name: at most 15 bytes (IFNAMSIZ 16 with its NUL), no '/', ':' nor blank
INTERFACE = re.compile(r"\A(?!\.{1,2}\Z)[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}\Z")
# an RDMA device as NCCL_IB_HCA lists it, with an optional port (mlx5_0, mlx5_0:1)
HCA = re.compile(r"\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}(:[0-9]{1,3})?\Z")
# a DNS name (RFC 1123 labels)
DNS_NAME = re.compile(r"\A(?=.{1,253}\Z)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                      r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?\Z")
# a docker container name (docker's own rule)
CONTAINER_NAME = re.compile(r"\A[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}\Z")
# a package version or branch as apt and dnf write them
VERSION = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9.+~:_*-]{0,127}\Z")
# a word: a model name, a backend, a policy, a dtype (no blank, no quote, no shell character)
WORD = re.compile(r"\A[A-Za-z0-9_/][A-Za-z0-9_.:@/+=-]{0,255}\Z")
# directories a volume, a state directory or a teardown must never be: the system's own
SYSTEM_DIRS = frozenset({
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt", "/opt",
    "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var", "/usr/bin", "/usr/lib", "/usr/lib64",
    "/usr/local", "/usr/local/bin", "/usr/sbin", "/usr/share", "/var/cache", "/var/lib", "/var/log", "/var/run",
    "/var/tmp", "/var/lib/docker", "/etc/systemd", "/etc/systemd/system", "/run/systemd",
})


class BoundaryError(ValueError):
    """A value that may not cross: one line, with the fix."""


@dataclass(frozen=True)
class Format:
    """A constraint on a value already of its kind: `problem` says what is wrong, or None."""
    name: str
    problem: Callable[[Any], Optional[str]]
    fix: str


def _one_line(value: Any) -> Optional[str]:
    text = str(value)
    bad = CONTROL.search(text)
    if bad:
        return "holds the control character %r, which would end or split a line of a file the node reads" % bad.group()
    return None


def _prose(value: Any) -> Optional[str]:
    bad = re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", str(value))
    return "holds the control character %r" % bad.group() if bad else None


def _pattern(pattern: "re.Pattern[str]", what: str) -> Callable[[Any], Optional[str]]:
    def problem(value: Any) -> Optional[str]:
        return _one_line(value) or (None if pattern.match(str(value)) else "not %s" % what)
    return problem


def _port(value: Any) -> Optional[str]:
    number = _number(value)
    return None if number is not None and 1 <= number <= 65535 else "not a TCP port (1 to 65535)"


def _number(value: Any) -> Optional[int]:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and re.match(r"\A-?[0-9]{1,18}\Z", value) else None


def _host(value: Any) -> Optional[str]:
    text = str(value)
    if _one_line(text):
        return _one_line(text)
    try:
        ipaddress.ip_address(text)
        return None
    except ValueError:
        return None if DNS_NAME.match(text) else "neither an IP address nor a DNS name"


def _ip(value: Any) -> Optional[str]:
    try:
        ipaddress.ip_address(str(value))
        return None
    except ValueError:
        return "not an IP address"


def _network(value: Any) -> Optional[str]:
    try:
        ipaddress.ip_network(str(value), strict=False)
        return None
    except ValueError:
        return "not an IP address or network"


def _endpoint(value: Any) -> Optional[str]:
    """host:port (a registry), the host an IP, a DNS name or [IPv6]."""
    text = str(value)
    if _one_line(text):
        return _one_line(text)
    match = re.match(r"\A(\[[0-9A-Fa-f:.]+\]|[^:/\s]+)(:([0-9]{1,5}))?\Z", text)
    if not match:
        return "not host or host:port"
    host = match.group(1).strip("[]")
    if _host(host) or (match.group(3) and _port(match.group(3))):
        return "not host or host:port with a DNS name or IP and a port from 1 to 65535"
    return None


def _url(value: Any) -> Optional[str]:
    text = str(value)
    if _one_line(text) or re.search(r"\s", text):
        return "holds a blank or a control character"
    if not re.match(r"\A(https?|file)://[^\s\"'\\<>`]+\Z", text):
        return "not an http://, https:// or file:// URL"
    if "@" in text.split("://", 1)[1].split("/", 1)[0]:
        return ("holds a login (user:password@), which would land in the review files, the nodes' files and logs; "
                "give credentials through the secret variables (ansible-vault), never in a URL")
    return None


def _abs_path(value: Any) -> Optional[str]:
    text = str(value)
    if _one_line(text):
        return _one_line(text)
    if not text.startswith("/"):
        return "not an absolute path"
    if re.search(r"\s", text):
        return "holds a blank, which a unit's ExecStart, a docker volume or a shell line would split at"
    if posixpath.normpath(text) != text or text.startswith("//"):
        return "not normalized (it holds '//', '/./', '/../' or a trailing '/'): write %s" % posixpath.normpath(text)
    return None


def _node_dir(value: Any) -> Optional[str]:
    """A directory the collection creates, mounts or removes on a node: never a system directory."""
    problem = _abs_path(value)
    if problem:
        return problem
    if str(value) in SYSTEM_DIRS:
        return "a system directory, which the collection would own, mount or remove"
    return None


def _volume(value: Any) -> Optional[str]:
    """A host directory mounted into the container (host:container:mode)."""
    problem = _node_dir(value) or (
        "holds a ':' (docker splits host:container:mode at it)" if ":" in str(value) else None)
    return "a host path mounted into the container: %s" % problem if problem else None


def _local_path(value: Any) -> Optional[str]:
    return _one_line(value)


FORMATS: Dict[str, Format] = {f.name: f for f in (
    Format("text", _one_line, "write it on one line, without control characters"),
    Format("prose", _prose, "remove the control characters (newlines and tabs are kept)"),
    Format("word", _pattern(WORD, "a single word (letters, digits and _ . : @ / + = -)"),
           "write one word without blanks, quotes or shell characters"),
    Format("file_name", _pattern(FILE_NAME, "a name that can be a file name"),
           "use letters, digits and _ . @ + - (at most 128, not starting with '.' or '-')"),
    Format("interface", _pattern(INTERFACE, "a Linux interface name (at most 15 characters, no '/', ':' or blank)"),
           "set the interface name `ip -br link` prints, e.g. eth0 or ens1f0np0"),
    Format("hca", _pattern(HCA, "an RDMA device name (NCCL_IB_HCA entry), optionally with :port"),
           "list the names `ibv_devices` prints, e.g. [mlx5_0, mlx5_1] (no '=', '^', blank or empty entry)"),
    Format("container_name", _pattern(CONTAINER_NAME, "a docker container name"),
           "use letters, digits and _ . - starting with a letter or digit"),
    Format("version", _pattern(VERSION, "a package version"), "write the version as apt or dnf prints it"),
    Format("host", _host, "set an IP address or a DNS name, without a port"),
    Format("ip", _ip, "set an IP address, e.g. 10.0.0.11"),
    Format("network", _network, "list IP addresses or networks, e.g. [10.0.0.5, 10.8.0.0/16]"),
    Format("endpoint", _endpoint, "set host:port, e.g. 10.0.0.5:5000"),
    Format("url", _url, "set a whole URL, e.g. https://example.com/repo"),
    Format("port", _port, "set a port from 1 to 65535"),
    Format("abs_path", _abs_path, "set an absolute, normalized path"),
    Format("node_dir", _node_dir, "set an absolute, normalized directory of the collection's own, e.g. "
                                  "/var/lib/inferops-vllm/<name>"),
    Format("volume", _volume, "set an absolute, normalized directory of its own, without ':', e.g. "
                              "/var/lib/inferops-vllm/<name>"),
    Format("local_path", _local_path, "write the path on one line"),
)}

# The format of each variable, by format. A string variable not named here is "text" (one line, no control
# characters); lists apply the format to each element. tests/unit/test_boundary.py keeps every path option,
# every port and every int named, so a new variable of those kinds must be placed here.
_BY_FORMAT: Dict[str, Tuple[str, ...]] = {
    "file_name": ("vllm_cluster", "vllm_nvlink_domain", "nvidia_driver_imex_domain", "vllm_image_mirror_group",
                  "vllm_model_store_group", "vllm_pd_deployment"),
    "word": ("vllm_model", "vllm_served_model_name", "vllm_version", "vllm_all2all_backend", "vllm_moe_backend",
             "vllm_kv_cache_dtype", "vllm_prometheus_package", "vllm_observability_prometheus_service",
             "rocm_suite", "os_packages_suites", "os_packages_components", "os_packages_architectures",
             "os_packages_setup_packages", "rocm_packages", "rocm_users", "vllm_router_clusters",
             "nvidia_driver_crb_repo", "vllm_serve_log_max_size",
             "vllm_kv_connector", "vllm_router_prefill_policy", "vllm_router_decode_policy"),
    "interface": ("vllm_control_interface",),
    "hca": ("vllm_ib_hcas",),
    "container_name": ("vllm_serve_container_name", "vllm_watchdog_container_name", "fabric_check_container_name"),
    "version": ("container_runtime_docker_version", "container_runtime_toolkit_version", "nvidia_driver_version",
                "nvidia_driver_branch", "rocm_version", "rocm_amdgpu_version"),
    "host": ("vllm_bind_host", "vllm_router_host", "vllm_router_prometheus_host", "vllm_exporters_listen_address",
             "vllm_prometheus_listen_address", "vllm_model_store_host", "vllm_exporters_dcgm_remote_hostengine"),
    "ip": ("vllm_control_address", "vllm_model_p2p_address"),
    "network": ("vllm_firewall_allow",),
    "endpoint": ("vllm_model_registry", "vllm_image_mirror"),
    "url": ("container_runtime_docker_repo_url", "container_runtime_toolkit_repo_url",
            "container_runtime_toolkit_key_url", "nvidia_driver_repo_url", "nvidia_driver_keyring_url",
            "nvidia_driver_epel_repo_url", "nvidia_driver_epel_key_url", "rocm_repo_url", "rocm_amdgpu_repo_url",
            "rocm_key_url", "os_packages_key_url", "vllm_model_hf_endpoint", "smoke_test_base_url",
            "vllm_image_mirror_upstream", "vllm_prometheus_alertmanagers"),
    "port": ("vllm_port", "vllm_dp_rpc_port", "vllm_master_port", "fabric_check_port", "vllm_router_port",
             "vllm_router_prometheus_port", "vllm_exporters_dcgm_port", "vllm_exporters_amd_port",
             "vllm_exporters_node_exporter_port", "vllm_prometheus_port", "vllm_image_mirror_port",
             "vllm_kv_side_channel_port", "vllm_model_p2p_port", "vllm_weight_cache_master_port",
             "vllm_weight_cache_health_port"),
    "volume": ("vllm_model_cache_dir", "vllm_compile_cache_dir", "vllm_weight_cache_dir"),
    "node_dir": ("fabric_check_dir", "vllm_image_mirror_data_dir", "vllm_image_state_dir", "vllm_model_store_dir",
                 "vllm_model_state_dir", "vllm_router_venv", "vllm_router_config_dir", "vllm_serve_config_dir",
                 "vllm_serve_state_dir", "vllm_watchdog_lib_dir"),
    "abs_path": ("host_proxy_root", "preflight_sysfs_root", "os_packages_absent_files", "os_packages_signed_by",
                 "os_packages_key_file", "vllm_watchdog_status_file", "vllm_watchdog_prom_file",
                 "vllm_watchdog_config_file", "vllm_watchdog_env_file", "vllm_watchdog_docker", "vllm_watchdog_python",
                 "vllm_observability_file_sd_dir", "vllm_observability_rules_dir", "vllm_observability_promtool"),
    "local_path": ("cluster_plan_output_dir", "smoke_test_reports_root", "smoke_test_report_dir",
                   "vllm_observability_output_dir", "vllm_rollout_report_dir", "smoke_test_image"),
    "prose": ("smoke_test_text_prompt", "smoke_test_text_expect", "smoke_test_vision_expect"),
}
VAR_FORMATS: Dict[str, str] = {var: fmt for fmt, names in _BY_FORMAT.items() for var in names}
# where a variable's fix says more than its format's
FIX_FOR = {
    "vllm_model_cache_dir": "set an absolute, normalized directory of its own without ':', e.g. "
                            "/var/lib/inferops-vllm/huggingface",
    "vllm_compile_cache_dir": "set an absolute, normalized directory of its own without ':', e.g. "
                              "/var/lib/inferops-vllm/compile-cache, or '' to mount none",
}


def format_of(variable: str) -> Format:
    return FORMATS[VAR_FORMATS.get(variable, "text")]


def problem(variable: str, value: Any) -> Optional[Tuple[str, str]]:
    """(what is wrong, the fix) when `value`, already of its argument spec's kind, breaks the variable's format.
    None passes (unset); mappings are judged by their own checks (vllm_args, vllm_env); a list element by element."""
    if value is None or isinstance(value, dict):
        return None
    fmt = format_of(variable)
    values = value if isinstance(value, (list, tuple)) else [value]
    for item in values:
        if isinstance(item, dict):
            continue
        if item == "" and fmt.name not in ("port", "text", "prose", "local_path"):
            # '' means "none" for the optional ones (checked by their roles); an empty list element never does
            if isinstance(value, (list, tuple)):
                return "holds an empty entry", FIX_FOR.get(variable, fmt.fix)
            continue
        found = fmt.problem(item)
        if found:
            shown = "" if not isinstance(value, (list, tuple)) else "has %r, which is " % (item,)
            return (shown + found) if shown else found, FIX_FOR.get(variable, fmt.fix)
    return None


def inside(root: str, *names: str) -> str:
    """root/name/...: each name a FILE_NAME (no separator, no '..', no control character), the result inside
    root once links are resolved. The one way a host, group or cluster name becomes a path."""
    for name in names:
        if not isinstance(name, str) or not FILE_NAME.match(name):
            raise BoundaryError("%r cannot be a file name under %s: use letters, digits and _ . @ + - (at most 128, "
                                "not starting with '.' or '-')" % (name, root))
    path = os.path.join(root, *names)
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root:
        raise BoundaryError("%s resolves to %s, outside %s: remove the link in %s" % (path, real, real_root, root))
    return path


def name_problem(name: Any) -> Optional[str]:
    """Why an inventory host or group name cannot become a file name (None when it can)."""
    if isinstance(name, str) and FILE_NAME.match(name):
        return None
    return "cannot be a file name (the plan writes <cluster>/<host>.yaml, reports and records under it)"

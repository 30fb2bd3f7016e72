# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One policy over the compiled site: what each node's launch and the site's listeners will do on the node.

It runs on the compiler's output, after every cluster is compiled and before anything is shown or written,
whichever input produced a value: a typed variable, a profile, a pass-through, a derived port. Each finding is
one refusal line naming the input that produced it. It judges:
- host paths (volumes, state and teardown targets) by normalized prefix: inside an allowed root, never in or
  around a kernel, device, runtime, system, home or credential tree, the collection's own directories apart;
- every listener's port, given or derived, in 1-65535 (collisions are fleet.port_problems');
- every address a peer must reach: unicast, never a wildcard, loopback only where the nodes share a machine;
- argv and env: no control, format or line-separator character, so every reader of a file reads one line;
- the pass-throughs, sorted by vLLM's own surface (passthrough.py);
- model ids: repository ids, never paths or URLs.
No Ansible imports."""

from __future__ import annotations

import ipaddress
import posixpath
import re
import unicodedata
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller import node_layout, passthrough
from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
from ansible_collections.inferops.vllm.plugins.module_utils.controller.wrong_values import shown_hosts
from ansible_collections.inferops.vllm.plugins.module_utils.node import p2p

Launches = Mapping[str, Mapping[str, Any]]

# --- host paths -----------------------------------------------------------------------------------------------

# The collection's own directories (its defaults): a path in one of these is the collection's.
OWN_DIRS = ("/var/lib/inferops-vllm", "/etc/inferops-vllm", "/run/inferops-vllm", "/var/cache/inferops-vllm",
            "/opt/inferops-vllm-router", "/etc/inferops-vllm-router", "/usr/local/lib/inferops-vllm",
            "/var/lib/docker-registry", "/etc/prometheus/file_sd", "/etc/prometheus/rules")
# Where a site's own data directories may live; vllm_host_path_roots adds more (/lustre/hf, /nvme).
DATA_ROOTS = ("/srv", "/data", "/mnt", "/raid", "/scratch", "/opt", "/models")
ROOTS_VAR = "vllm_host_path_roots"
# Trees a path must never lie in nor hold: the kernel's, devices, runtime sockets, the system, homes, docker's.
FORBIDDEN = ("/proc", "/sys", "/dev", "/run", "/var/run", "/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32",
             "/lib64", "/libx32", "/home", "/root", "/tmp", "/var/tmp", "/var/lib/docker", "/var/lib/containerd",
             "/var/lib/kubelet", "/var/log", "/var/spool", "/var/mail", "/var/lib/dpkg", "/var/lib/apt",
             "/var/lib/rpm", "/var/lib/systemd", "/snap", "/lost+found")
# A directory of this name anywhere in a path holds credentials.
CREDENTIAL_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".kube", ".docker", ".config", ".azure", ".gcloud",
                             ".password-store", ".vault-token", ".netrc", ".git-credentials"})
# Host directories a node variable names: mounted, owned or removed (boundary's volume and node_dir formats).
PATH_VARS = ("vllm_model_cache_dir", "vllm_compile_cache_dir", "vllm_weight_cache_dir", "fabric_check_dir",
             "vllm_image_mirror_data_dir", "vllm_image_state_dir", "vllm_model_store_dir", "vllm_model_state_dir",
             "vllm_router_venv", "vllm_router_config_dir", "vllm_serve_config_dir", "vllm_serve_state_dir",
             "vllm_watchdog_lib_dir")
# Of those, the collection's state (records, scripts): a mounted or removed directory may lie in one, never hold it.
STATE_VARS = ("vllm_image_state_dir", "vllm_serve_state_dir", "vllm_model_state_dir")
# Of those, the ones mounted into containers or removed by teardown: no two may overlap.
DISJOINT_VARS = ("vllm_model_cache_dir", "vllm_compile_cache_dir", "vllm_weight_cache_dir", "vllm_serve_config_dir",
                 "vllm_model_store_dir")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def path_problem(path: Any, roots: Sequence[str] = ()) -> Optional[Tuple[str, str]]:
    """(what the path would do, the fix) when a host directory is unsafe, else None."""
    if not isinstance(path, str) or not path.startswith("/"):
        return ("not an absolute path", "set an absolute directory")
    norm = posixpath.normpath(path)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    parts = norm.split("/")
    if CREDENTIAL_DIRS.intersection(parts):
        return ("lies in a credential directory (%s), which the containers would mount and teardown would remove"
                % "/".join(p for p in parts if p in CREDENTIAL_DIRS), "choose a data directory of its own")
    own = any(_inside(norm, d) for d in OWN_DIRS)
    if not own:
        for tree in FORBIDDEN:
            if _inside(norm, tree):
                return ("lies in %s (%s), which the collection would mount, own or remove" % (tree, _what(tree)),
                        "choose a directory under %s, or add a data root to %s"
                        % (", ".join(DATA_ROOTS[:4]), ROOTS_VAR))
    for tree in FORBIDDEN + ("/var/lib", "/var", "/opt") + tuple(OWN_DIRS):
        if tree != norm and _inside(tree, norm):
            return ("holds %s, which the collection would then mount, own or remove" % tree,
                    "choose a directory of its own, deeper down")
    if norm in DATA_ROOTS or norm in roots:
        return ("is a data root itself, which teardown would remove whole", "choose a directory under it")
    if own or any(_inside(norm, r) for r in tuple(DATA_ROOTS) + tuple(roots)):
        return None
    return ("lies outside the data roots (%s)" % ", ".join(tuple(DATA_ROOTS) + tuple(roots)),
            "choose a directory under one, or add its root to %s" % ROOTS_VAR)


def _what(tree: str) -> str:
    return {"/proc": "the kernel's process tree; /proc/1/root is the host's /", "/sys": "the kernel's tree",
            "/dev": "devices", "/run": "runtime sockets, the docker socket among them",
            "/var/run": "runtime sockets, the docker socket among them", "/root": "root's home and SSH keys",
            "/home": "users' homes", "/tmp": "a world-writable directory", "/var/tmp": "a world-writable directory",
            "/var/lib/docker": "docker's data root", "/etc": "the system's configuration"}.get(tree, "a system tree")


def roots_problem(roots: Any) -> Optional[Tuple[str, str]]:
    """vllm_host_path_roots must be absolute directories outside every forbidden tree."""
    if roots in (None, "", []):
        return None
    if not isinstance(roots, list):
        return ("not a list of directories", "set a list, e.g. [/lustre/hf, /nvme]")
    for root in roots:
        if not isinstance(root, str) or not root.startswith("/") or posixpath.normpath(root) != root or root == "/":
            return ("has %r, which is not an absolute, normalized directory" % (root,), "e.g. [/lustre/hf, /nvme]")
        bad = [tree for tree in FORBIDDEN if _inside(root, tree) or _inside(tree, root)]
        if bad or CREDENTIAL_DIRS.intersection(root.split("/")):
            return ("has %s, which lies in or holds %s" % (root, bad[0] if bad else "a credential directory"),
                    "name only data directories (e.g. /lustre/hf, /nvme)")
    return None


def launch_paths(launch: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """(variable, host path) for every host directory a node's launch mounts, owns or removes."""
    out: List[Tuple[str, str]] = []
    model = (launch["cluster"].get("model") or {}).get("cache_dir")
    if model:
        out.append(("vllm_model_cache_dir", str(model)))
    if launch.get("compile_cache_dir"):
        out.append(("vllm_compile_cache_dir", str(launch["compile_cache_dir"])))
    if launch.get("weight_cache"):
        out.append(("vllm_weight_cache_dir", str(launch["weight_cache"]["dir"])))
    known = {p for _v, p in out}
    for volume in launch["container"].get("volumes") or ():
        source = str(volume).split(":", 1)[0]
        if source.startswith("/") and source not in known:
            out.append(("the launch's volumes", source))
            known.add(source)
    return out


def site_paths(launches: Launches, role_values: Mapping[str, Mapping[str, Any]]) -> Dict[str, List[Tuple[str, str]]]:
    """{host: [(variable, path)]}: what each node's launch mounts, owns or removes, the node directories a host sets
    for the other roles, and the serve config's directory (mounted into the container) where the host runs vLLM."""
    paths: Dict[str, List[Tuple[str, str]]] = {}
    for host in list(launches) + [h for h in role_values if h not in launches]:
        pairs = launch_paths(launches[host]) if host in launches else []
        named = {variable for variable, _path in pairs}
        for variable in PATH_VARS:
            value = (role_values.get(host) or {}).get(variable)
            if variable not in named and isinstance(value, str) and value:
                pairs.append((variable, value))
        if host in launches:
            for variable, layout in (("vllm_serve_config_dir", "config_dir"), ("vllm_image_state_dir", "state_dir")):
                if variable not in dict(pairs):
                    pairs.append((variable, node_layout.default(layout)))
        paths[host] = pairs
    return paths


def roots_lines(roots: Mapping[str, Any]) -> List[str]:
    """roots: {host: its vllm_host_path_roots}. One line per wrong value, naming its hosts."""
    found: Dict[Tuple[str, str], List[str]] = {}
    for host, value in roots.items():
        problem = roots_problem(value)
        if problem:
            found.setdefault(problem, []).append(host)
    return [str(ClusterError(ROOTS_VAR, None, shown_hosts(sorted(hosts)), problem, fix))
            for (problem, fix), hosts in found.items()]


def path_lines(paths: Mapping[str, Sequence[Tuple[str, str]]], roots_of: Callable[[str], Sequence[str]]) -> List[str]:
    """paths: {host: [(variable, path)]}. One line per unsafe (variable, path), naming its hosts; then the mounted
    directories that overlap on a host."""
    found: Dict[Tuple[str, str], Tuple[Tuple[str, str], List[str]]] = {}
    overlaps: Dict[Tuple[str, str, str, str], List[str]] = {}
    for host, pairs in paths.items():
        roots = tuple(roots_of(host) or ())
        for variable, path in pairs:
            problem = path_problem(path, roots)
            if problem:
                found.setdefault((variable, path), (problem, []))[1].append(host)
        mounted = [(v, posixpath.normpath(p)) for v, p in dict(pairs).items() if v in DISJOINT_VARS]
        for i, (va, pa) in enumerate(mounted):
            for vb, pb in mounted[i + 1:]:
                if _inside(pa, pb) or _inside(pb, pa):
                    overlaps.setdefault((va, pa, vb, pb), []).append(host)
        states = [(v, posixpath.normpath(p)) for v, p in dict(pairs).items() if v in STATE_VARS]
        for va, pa in states:
            for vb, pb in mounted:
                if _inside(pa, pb):
                    overlaps.setdefault((va, pa, vb, pb), []).append(host)
    out = [_line(v, p, hosts, problem, fix) for (v, p), ((problem, fix), hosts) in found.items()]
    for (va, pa, vb, pb), hosts in overlaps.items():
        out.append(_line(vb, pb, hosts, "overlaps %s %s: each is mounted, kept or removed on its own terms" % (va, pa),
                         "give each a directory of its own, side by side"))
    return out


# --- ports ----------------------------------------------------------------------------------------------------

def port_range_lines(uses: Mapping[str, Sequence[Any]], ranges: Mapping[str, Sequence[Tuple[int, int, str, str]]]
                     ) -> List[str]:
    """uses: {host: [fleet.PortUse]}; ranges: {host: [(first, last, what, variable)]}. Every port, given or derived,
    in 1-65535; no listener inside a range another listener takes."""
    found: Dict[Tuple[str, int, str], List[str]] = {}
    out = []
    for host, listeners in uses.items():
        for use in listeners:
            if not 1 <= int(use.port) <= 65535:
                found.setdefault((use.variable, int(use.port), use.what), []).append(host)
            for first, last, what, variable in ranges.get(host, ()):
                if first <= int(use.port) <= last:
                    out.append(_line(use.variable, use.port, [host], "%s would listen inside %s's ports %d-%d"
                                     % (use.what, what, first, last), "give %s a port outside %d-%d"
                                     % (use.variable, first, last)))
    for (variable, port, what), hosts in found.items():
        out.append(_line(variable, port, hosts, "%s would listen on port %d, outside 1-65535 (derived from the "
                         "variable)" % (what, port), "lower %s so that every port derived from it stays at most "
                         "65535" % variable))
    return out


# the ports aria2c listens on where vllm_model_p2p is on (node/p2p.py)
_FIRST_PEER, _SEP, _LAST_PEER = p2p.PEER_PORTS.partition("-")
P2P_PEERS = (int(_FIRST_PEER), int(_LAST_PEER), "peer-to-peer weights (aria2c)", "vllm_model_p2p")


# --- addresses ------------------------------------------------------------------------------------------------

def address_problem(address: Any, shared_machine: bool) -> Optional[str]:
    """Why peers cannot reach `address`, else None (a DNS name is left to the resolver)."""
    try:
        parsed = ipaddress.ip_address(str(address))
    except ValueError:
        return None
    if parsed.is_unspecified:
        return "a wildcard, which peers cannot reach (and Prometheus would scrape it as a target)"
    if parsed.is_multicast or str(parsed) == "255.255.255.255":
        return "not a unicast address"
    if parsed.is_loopback and not shared_machine:
        return "a loopback address, which only the node itself reaches (its peers are on other machines)"
    return None


def p2p_address_lines(address: Any, host: str, shared_machine: bool) -> List[str]:
    """vllm_model_p2p_address: the tracker's address every node must reach (empty: the store host's own)."""
    problem = address_problem(address, shared_machine) if address else None
    return [str(ClusterError("vllm_model_p2p_address", address, "host %s" % host, problem,
                             "set the store host's unicast IP that every node reaches, or leave it empty for its "
                             "vllm_control_address"))] if problem else []


def peer_addresses(launch: Mapping[str, Any]) -> List[Tuple[str, Any]]:
    """(variable, address) a cluster's peers or its router reach on this node."""
    args, env = launch.get("args") or {}, launch.get("env") or {}
    out = []
    if launch.get("rank") == 0:
        out.append(("vllm_control_address", launch["cluster"].get("head_address")))
    for flag in ("data-parallel-address", "master-addr"):
        if flag in args:
            out.append(("vllm_control_address", args[flag]))
    for name in ("VLLM_HOST_IP", "VLLM_NIXL_SIDE_CHANNEL_HOST"):
        if name in env:
            out.append(("vllm_control_address", env[name]))
    return [(v, a) for v, a in out if a not in (None, "")]


def address_lines(launches: Launches, on_controller: Callable[[str], bool]) -> List[str]:
    """Each address that a cluster's peers, its router or Prometheus reach: unicast, never a wildcard; loopback only
    for a single node or where every node of the cluster runs on the controller's machine (the lab)."""
    found: Dict[Tuple[str, str, str], List[str]] = {}
    shared: Dict[str, bool] = {}
    for host, launch in launches.items():
        summary = launch["cluster"]
        name = summary["name"]
        if name not in shared:
            # one node alone has no peers, but its endpoint is still reached (Prometheus, the smoke test): no wildcard
            alone = len(summary["nodes"]) < 2 and not summary.get("pd")
            shared[name] = alone or all(on_controller(node) for node in summary["nodes"])
        for variable, address in peer_addresses(launch):
            problem = address_problem(address, shared[name])
            hosts = found.setdefault((variable, str(address), problem), []) if problem else []
            if problem and host not in hosts:
                hosts.append(host)
    return [_line(v, a, hosts, p, "set %s to the node's unicast IP on the network its peers share" % v)
            for (v, a, p), hosts in found.items()]


# --- argv and env ---------------------------------------------------------------------------------------------

def bad_char(text: str) -> Optional[str]:
    """The first control (Cc), format (Cf: bidi, zero-width) or line/paragraph separator (Zl, Zp) character."""
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            return "U+%04X %s" % (ord(char), unicodedata.name(char, "control"))
    return None


def strings(value: Any) -> Iterable[str]:
    """Every key and scalar of a value, as text, depth first."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)
    elif value is not None:
        yield str(value)


def text_lines(launches: Launches) -> List[str]:
    """No flag value, env name or value, or container option that a reader could split or show otherwise."""
    found: Dict[Tuple[str, str], List[str]] = {}
    for host, launch in launches.items():
        sources = launch.get("sources") or {}
        places: List[Tuple[str, Any]] = [(_source(sources, flag, "vllm_args"), {flag: value})
                                         for flag, value in (launch.get("args") or {}).items()]
        places += [(_source(sources, name, "vllm_env"), {name: value})
                   for name, value in (launch.get("env") or {}).items()]
        places.append(("the launch's container options", launch.get("container")))
        if launch.get("weight_cache"):
            places.append(("the weight cache's arguments", launch["weight_cache"].get("argv")))
        for variable, value in places:
            for text in strings(value):
                char = bad_char(text)
                if char:
                    found.setdefault((variable, char), []).append(host)
                    break
    return [_line(variable, None, hosts, "a value holds %s, which docker's, systemd's and Python's readers split or "
                  "show differently (or a terminal acts on)" % char, "remove the character; write the value on one "
                  "line of printable text") for (variable, char), hosts in found.items()]


def _source(sources: Mapping[str, str], name: str, fallback: str) -> str:
    source = sources.get(name)
    if source in ("vllm_args", "vllm_site_args", "vllm_env", "vllm_site_env"):
        return "%s[%r]" % (source, name)
    return source or "the compiled launch (%s)" % name


# --- pass-throughs --------------------------------------------------------------------------------------------

Compiled = Mapping[str, Tuple[Mapping[str, Any], Mapping[str, str], Mapping[str, str]]]


def passthrough_findings(name: str, compiled: Compiled, allowed: Iterable[str], known_env: Iterable[str],
                         revision: Optional[str]) -> Tuple[List[ClusterError], List[str]]:
    """compiled: {host: (args, env, sources)} of one cluster. Each flag and env name that a pass-through set,
    judged by its kind (passthrough): (refusals, warnings). A sensitive one passes only where vllm_allow_sensitive
    names it, with a warning that says what it opens."""
    allow, known = set(str(a).lstrip("-") for a in allowed or ()), frozenset(known_env)
    errors: Dict[Tuple[str, str], ClusterError] = {}
    warnings: List[str] = []
    where = "cluster %s" % name
    for _host, (args, env, sources) in compiled.items():
        for flag, value in args.items():
            source = sources.get(flag)
            if source not in ("vllm_args", "vllm_site_args") or value is False:
                continue
            variable = "%s[%r]" % (source, flag)
            second = passthrough.second_model(flag, value)
            if second:
                errors.setdefault((variable, "second"), ClusterError(
                    variable, value, where, "names %s, which the collection neither pins nor stages (it stages one "
                    "repository per cluster, at one commit)" % second,
                    "remove it; serve the model's own tokenizer and config, or a speculative method without a model "
                    "(e.g. {\"method\": \"ngram\"})"))
                continue
            if flag in passthrough.SECOND_MODEL_FLAGS:
                continue   # a speculative method without a model of its own
            if flag in passthrough.PIN_FLAGS:
                if revision is None or str(value) != revision:
                    errors.setdefault((variable, "pin"), ClusterError(
                        variable, value, where, "loads part of the model at another revision than the pinned "
                        "commit %s" % (revision or "(none)"), "remove it: vllm_model_revision pins the weights, "
                        "the tokenizer and the code together"))
                continue
            if passthrough.flag_kind(flag) == passthrough.SENSITIVE:
                _sensitive(errors, warnings, allow, flag, variable, value, where, passthrough.flag_opens(flag))
                if flag == "allowed-local-media-path" and posixpath.normpath(str(value)) in ("/", "/root", "/etc"):
                    errors.setdefault((variable, "media"), ClusterError(
                        variable, value, where, "lets every API client read the container's whole filesystem",
                        "name a folder of media only, inside the container"))
        for env_name, value in env.items():
            source = sources.get(env_name)
            if source not in ("vllm_env", "vllm_site_env"):
                continue
            if passthrough.env_kind(env_name, known) == passthrough.SENSITIVE:
                _sensitive(errors, warnings, allow, env_name, "%s[%r]" % (source, env_name), value, where,
                           passthrough.env_opens(env_name, known))
    return list(errors.values()), list(dict.fromkeys(warnings))


def _sensitive(errors: Dict[Tuple[str, str], ClusterError], warnings: List[str], allow: set, name: str,
               variable: str, value: Any, where: str, opens: str) -> None:
    if name in allow:
        warnings.append("%s: %s is set, as %s allows: it %s" % (where, variable, passthrough.ALLOW, opens))
    else:
        errors.setdefault((variable, "sensitive"), ClusterError(
            variable, value, where, "a sensitive setting: it %s" % opens,
            "remove it, or name %s in %s to accept what it opens" % (name, passthrough.ALLOW)))


# --- model ids ------------------------------------------------------------------------------------------------

REPO_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}\Z")


def model_problem(model: Any, source: str) -> Optional[str]:
    """A model id must be a repository id (org/name); only weights baked into the image (source hub) may be an
    absolute, normalized path inside the image."""
    text = str(model)
    if "://" in text or text.startswith(("hf.co", "huggingface.co")):
        return "a URL, not a repository id"
    if source == "hub" and text.startswith("/"):
        return None if posixpath.normpath(text) == text and ".." not in text.split("/") else \
            "a path that is not normalized (it holds '..', '.' or '//')"
    if not REPO_ID.match(text) or ".." in text or text.endswith(".git"):
        return "not a repository id (org/name: letters, digits and _ . -, no '..')"
    return None


def model_lines(launches: Launches) -> List[str]:
    seen, out = set(), []
    for launch in launches.values():
        summary = launch["cluster"]
        if summary["name"] in seen:
            continue
        seen.add(summary["name"])
        model = (launch.get("args") or {}).get("model")
        source = (summary.get("model") or {}).get("source") or "hub"
        problem = model_problem(model, source) if model is not None else None
        if problem:
            out.append(str(ClusterError("vllm_model", model, "cluster %s" % summary["name"], problem,
                                        "set the Hugging Face repository id, e.g. moonshotai/Kimi-K2.5")))
    return out


# --- site rules -----------------------------------------------------------------------------------------------

# Groups the playbooks run on or read by name: a cluster named like one would put its nodes in that role.
RESERVED_GROUPS = {"all": "every host", "ungrouped": "Ansible's hosts without a group",
                   "vllm_clusters": "the group of every cluster", "vllm_routers": "the routers' hosts",
                   "vllm_prometheus": "the Prometheus hosts", "vllm_registry_mirrors": "the site registry's hosts",
                   "localhost": "the controller"}


# Folders of the plan's review files beside each cluster's own (plan_output.write): a cluster of that name would mix.
REVIEW_FOLDERS = ("firewall", "observability")


def reserved_lines(cluster_names: Iterable[str]) -> List[str]:
    out = []
    for name in sorted(set(cluster_names)):
        if name in RESERVED_GROUPS:
            problem = ("a reserved group name (%s): the playbooks would run that group's plays on the cluster's nodes"
                       % RESERVED_GROUPS[name])
        elif name in REVIEW_FOLDERS:
            problem = "the name of a folder of the plan's review files (%s): its launches would mix with it" % name
        else:
            continue
        out.append(str(ClusterError("vllm_cluster", name, "inventory", problem,
                                    "give the cluster a name of its own, e.g. k3_%s" % name.replace("vllm_", ""))))
    return out


def _line(variable: str, value: Any, hosts: Sequence[str], problem: str, fix: str) -> str:
    return str(ClusterError(variable, value, shown_hosts(hosts), problem, fix))

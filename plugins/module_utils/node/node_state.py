# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node already has, read in one pass: packages, services, files, images, containers.

The roles read this once and run a change task only where the state differs from
the wanted one, so a converged node costs one round trip per role instead of one
per resource. Plain Python: the module passes a `run(argv) -> (rc, out, err)`.
"""

from __future__ import annotations

import configparser
import datetime
import fnmatch
import glob
import hashlib
import json
import os
import re
import stat
from typing import Callable, Dict, Iterable, List, Optional, Tuple

Runner = Callable[[List[str]], Tuple[int, str, str]]

# Files returned whole are small config files; a larger one is a mistake in the role.
READ_LIMIT = 1 << 20


def parse_dpkg_query(out: str) -> Dict[str, dict]:
    """`dpkg-query -W -f '${Package}\\t${Status}\\t${Version}\\n'` lines to {name: {version, hold}}.

    Only packages whose status ends in "installed" count; "deinstall ok config-files"
    and half-installed states read as absent, so apt is asked to fix them."""
    packages = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            continue
        name, status, version = parts
        words = status.split()
        if len(words) == 3 and words[2] == "installed":
            packages[name.split(":")[0]] = {"version": version, "hold": words[0] == "hold"}
    return packages


RPM_QUERY_FORMAT = "%{NAME}\t%{VERSION}-%{RELEASE}\t%{EPOCHNUM}\t%{ARCH}\n"


def nevra_forms(name: str, version: str, epoch: str = "0", arch: str = "") -> List[str]:
    """The spellings of an installed package that dnf matches a spec against (its versionlock plugin's _match, as
    community.general.dnf_versionlock copies it): name, name.arch, name-version ... name-epoch:version-release.arch."""
    ver = version.rpartition("-")[0] or version
    forms = [name, "%s-%s" % (name, ver), "%s-%s" % (name, version), "%s-%s:%s" % (name, epoch, ver),
             "%s-%s:%s" % (name, epoch, version)]
    if arch:
        forms += ["%s.%s" % (name, arch), "%s-%s.%s" % (name, version, arch),
                  "%s:%s-%s.%s" % (epoch, name, version, arch), "%s-%s:%s.%s" % (name, epoch, version, arch)]
    return forms


def rpm_locked(forms: List[str], locks: Iterable[str]) -> bool:
    """An entry of dnf's versionlock list (a spec, often `name-epoch:version-release.*`) matches the package;
    `!spec` entries exclude, they do not lock."""
    return any(not lock.startswith("!") and any(fnmatch.fnmatchcase(form, lock) for form in forms) for lock in locks)


def parse_rpm_query(out: str, names: Iterable[str] = (), locks: Iterable[str] = ()) -> Dict[str, dict]:
    """`rpm -q --qf RPM_QUERY_FORMAT` lines (name, version-release, epoch, arch; two-column lines are read too);
    unknown names print a message, skipped. hold: dnf's versionlock list locks it (`locks`, its entries). A name
    asked as name-version-release(.arch), as a kernel's headers are, is answered under that name too."""
    packages = {}
    names, locks = list(names), list(locks)
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) not in (2, 4):
            continue
        name, version = parts[0], parts[1]
        epoch, arch = (parts[2], parts[3]) if len(parts) == 4 else ("0", "")
        forms = nevra_forms(name, version, epoch, arch)
        packages[name] = {"version": version, "hold": rpm_locked(forms, locks)}
        for asked in names:
            if asked != name and asked in forms:
                packages[asked] = packages[name]
    return packages


def packages(names: List[str], run: Runner, dpkg_query: Optional[str], rpm: Optional[str],
             locks: Iterable[str] = ()) -> Dict[str, Optional[dict]]:
    """Installed version, its upstream part (no Debian or RPM release: what the driver roles compare with the
    loaded module and pin their add-ons to) and hold state per name; None for a package that is not installed.
    On rpm nodes `locks` are the versionlock list's entries (versionlock_entries), which stand for apt's hold."""
    found: Dict[str, dict] = {}
    if names and dpkg_query:
        # dpkg-query exits 1 when a name is unknown but still prints the others
        _rc, out, _err = run([dpkg_query, "-W", "-f", "${Package}\t${Status}\t${Version}\n"] + names)
        found = parse_dpkg_query(out)
    elif names and rpm:
        _rc, out, _err = run([rpm, "-q", "--qf", RPM_QUERY_FORMAT] + names)
        found = parse_rpm_query(out, names, locks)
    return {name: dict(found[name], upstream=installed_version(found[name])) if name in found else None
            for name in names}


def _ini(text: str) -> configparser.RawConfigParser:
    """dnf's INI files as dnf reads them: no interpolation, a repeated key or section is not an error; a line
    that is not INI is skipped (configparser raises after reading the rest)."""
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        pass
    return parser


def versionlock_entries(etc: str = "/etc") -> List[str]:
    """The specs in dnf 4's versionlock list (EL 8/9): the file `locklist` in plugins/versionlock.conf names,
    by default dnf/plugins/versionlock.list; [] where the plugin is not set up."""
    conf = _ini(_read_text(os.path.join(etc, "dnf", "plugins", "versionlock.conf")))
    path = conf.get("main", "locklist", fallback="") or os.path.join(etc, "dnf", "plugins", "versionlock.list")
    return [line.strip() for line in _read_text(path).splitlines() if line.strip() and not line.strip().startswith("#")]


def parse_dnf_modules(texts: Iterable[str]) -> Dict[str, dict]:
    """The texts of /etc/dnf/modules.d/*.module ([<module>] with stream, state, profiles) to
    {module: {stream, state, profiles}}: what `dnf module enable/install` recorded, read without running dnf."""
    modules = {}
    for text in texts:
        parser = _ini(text)
        for section in parser.sections():
            modules[parser.get(section, "name", fallback="") or section] = {
                "stream": parser.get(section, "stream", fallback=""),
                "state": parser.get(section, "state", fallback=""),
                "profiles": [p for p in re.split(r"[\s,]+", parser.get(section, "profiles", fallback="")) if p]}
    return modules


def parse_dnf_repos(texts: Iterable[str]) -> Dict[str, dict]:
    """The texts of /etc/yum.repos.d/*.repo to {repository id: {enabled}}; enabled is dnf's default (true)
    where the section does not say."""
    repos = {}
    for text in texts:
        parser = _ini(text)
        for section in parser.sections():
            if section != "main":
                repos[section] = {"enabled": _flag(parser.get(section, "enabled", fallback="1")) is not False}
    return repos


def _read_all(pattern: str) -> List[str]:
    return [_read_text(path) for path in sorted(glob.glob(pattern))]


def parse_systemctl_show(out: str) -> dict:
    """`systemctl show -p LoadState,ActiveState,UnitFileState` to installed/active/enabled."""
    props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return {"installed": props.get("LoadState") == "loaded", "active": props.get("ActiveState") == "active",
            "enabled": props.get("UnitFileState") == "enabled"}


def services(names: List[str], run: Runner, systemctl: Optional[str]) -> Dict[str, dict]:
    states = {}
    for name in names:
        out = ""
        if systemctl:
            _rc, out, _err = run([systemctl, "show", "-p", "LoadState,ActiveState,UnitFileState", name])
        states[name] = parse_systemctl_show(out)
    return states


def file_state(path: str, read: bool = False) -> dict:
    """Existence, type, mode and SHA-1 (what ansible.builtin.copy compares); the text when asked."""
    try:
        st = os.stat(path)
    except OSError:
        return {"exists": False}
    state = {"exists": True, "isdir": stat.S_ISDIR(st.st_mode), "mode": "%04o" % stat.S_IMODE(st.st_mode),
             "mtime": round(st.st_mtime, 3)}
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as fh:
            data = fh.read()
        state["checksum"] = hashlib.sha1(data).hexdigest()
        if read and len(data) <= READ_LIMIT:
            state["content"] = data.decode("utf-8", errors="replace")
    return state


def files(paths: Iterable[str], read: Iterable[str]) -> Dict[str, dict]:
    """Checksums for `paths`; checksums and the text for `read` (never pass a secret file there)."""
    states = {path: file_state(path) for path in paths}
    states.update({path: file_state(path, read=True) for path in read})
    return states


def parse_image_inspect(out: str) -> dict:
    """`docker image inspect` JSON (a list of one) to the fields the roles compare."""
    image = json.loads(out)[0]
    return {"present": True, "id": image.get("Id"), "repo_digests": image.get("RepoDigests") or []}


def docker_time(stamp: Optional[str]) -> Optional[float]:
    """Docker's RFC 3339 time with nanoseconds ('2026-11-30T19:01:09.123456789Z') as epoch
    seconds; None for a container that never started ('0001-01-01T00:00:00Z')."""
    match = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", stamp or "")
    if not match or match.group(1).startswith("0001-"):
        return None
    zone = "+00:00" if match.group(3) == "Z" else match.group(3)
    whole = datetime.datetime.fromisoformat(match.group(1) + zone).timestamp()
    return round(whole + float("0." + (match.group(2) or "0")), 3)


def parse_container_inspect(out: str) -> dict:
    container = json.loads(out)[0]
    state = container.get("State") or {}
    return {"exists": True, "running": bool(state.get("Running")) and not state.get("Restarting"),
            "status": state.get("Status"), "image": (container.get("Config") or {}).get("Image"),
            "labels": (container.get("Config") or {}).get("Labels") or {},
            # when its process last started (by anyone: Ansible, a restart policy, a reboot), and
            # how often docker's restart policy restarted it: the group check compares members by these
            "started_at": docker_time(state.get("StartedAt")), "restart_count": container.get("RestartCount", 0),
            "exit_code": state.get("ExitCode"),
            "restart_policy": ((container.get("HostConfig") or {}).get("RestartPolicy") or {}).get("Name") or "",
            # judged on the node only, never returned: it holds the secrets of the env file
            "env": (container.get("Config") or {}).get("Env") or []}


def images(refs: List[str], run: Runner, docker: Optional[str]) -> Dict[str, dict]:
    found = {}
    for ref in refs:
        rc, out, _err = run([docker, "image", "inspect", ref]) if docker else (1, "", "")
        found[ref] = parse_image_inspect(out) if rc == 0 else {"present": False, "id": None, "repo_digests": []}
    return found


def containers(names: List[str], run: Runner, docker: Optional[str]) -> Dict[str, dict]:
    found = {}
    for name in names:
        rc, out, _err = run([docker, "container", "inspect", name]) if docker else (1, "", "")
        found[name] = (parse_container_inspect(out) if rc == 0
                       else {"exists": False, "running": False, "status": None, "image": None, "labels": {},
                             "started_at": None, "restart_count": 0, "exit_code": None})
    return found


def missing_packages(state: Dict[str, Optional[dict]], names: Iterable[str], pins: Optional[Dict[str, str]] = None
                     ) -> List[str]:
    """Names that apt/dnf must act on: not installed, or installed at a version the pin does not match.

    A pin is a version prefix, as `name=<pin>*` matches it (`5:27.3.1` matches `5:27.3.1-1~debian.12`)."""
    pins = pins or {}
    missing = []
    for name in names:
        found = state.get(name)
        pin = pins.get(name) or ""
        if found is None or not found["version"].startswith(pin):
            missing.append(name)
    return missing


def installed_version(package: Optional[dict]) -> str:
    """The upstream version of an installed package (no Debian or RPM release: `580.95.05-1` is `580.95.05`),
    "" when it is not installed: what the driver roles compare with the loaded module and pin their add-ons to."""
    if not package or not package.get("version"):
        return ""
    return str(package["version"]).split("-", 1)[0]


# The wanted state as data: each role names, per step (a task file or task), the packages, files,
# services, groups, users and containers the step would bring about; the module reads them in its one
# call and says per step whether the node differs and why, so the roles keep no second copy of the
# modules' logic in Jinja. Only what the wanted data and the role's own vars hold goes into `why`,
# never a file's content: a secret file is judged by checksum.

# File keys that need the file's text.
_TEXT_KEYS = ("lines", "last_line_matching", "json_subset")


def _flag(value: object) -> Optional[bool]:
    """A wanted bool as YAML or an older templating gives it (True, "true", "False"); None: not judged."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return bool(value)


def _mode(value: object) -> Optional[str]:
    """'0644', '644' or an unquoted YAML 0644 (the int 420) as '0644'."""
    if value is None or value == "":
        return None
    return "%04o" % (value if isinstance(value, int) else int(str(value), 8))


def _given(want: dict, key: str) -> bool:
    return want.get(key) not in (None, "")


def wanted_reads(wanted: Dict[str, Optional[dict]]) -> Dict[str, list]:
    """What the wanted steps name, to read in the same pass as the explicit lists: packages (with the
    ones whose version another follows), services, files (and those whose text a key needs), containers."""
    reads: Dict[str, dict] = {"packages": {}, "services": {}, "files": {}, "text": {}, "containers": {},
                              "modules": {}, "repos": {}, "env_files": {}}
    for step in wanted.values():
        step = step or {}
        for key in ("modules", "repos"):
            reads[key].update(dict.fromkeys(step.get(key) or {}, True))
        for name, want in (step.get("packages") or {}).items():
            reads["packages"][name] = True
            if _given(want or {}, "version_of"):
                reads["packages"][want["version_of"]] = True
        for name in step.get("services") or {}:
            reads["services"][name] = True
        for path, want in (step.get("files") or {}).items():
            reads["files"][path] = True
            if any(_given(want or {}, key) for key in _TEXT_KEYS):
                reads["text"][path] = True
        for name, want in (step.get("containers") or {}).items():
            reads["containers"][name] = True
            reads["files"].update(dict.fromkeys((want or {}).get("started_after") or [], True))
            if (want or {}).get("env_file"):
                reads["env_files"][want["env_file"]] = True
    return {key: list(names) for key, names in reads.items()}


def parse_group(text: str) -> Dict[str, List[str]]:
    """/etc/group to {group: [members]}."""
    groups = {}
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 4 and fields[0]:
            groups[fields[0]] = [m for m in fields[3].split(",") if m]
    return groups


def parse_passwd(text: str) -> List[str]:
    """/etc/passwd to the user names."""
    return [line.split(":", 1)[0] for line in text.splitlines() if ":" in line]


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _present(want: dict) -> Optional[bool]:
    """A package's `present`: true where not given; null judges only its hold (where installed)."""
    return True if "present" not in want else _flag(want.get("present"))


def _pin(want: dict, found: Dict[str, Optional[dict]]) -> str:
    return (installed_version(found.get(want["version_of"])) if _given(want, "version_of")
            else str(want.get("version") or ""))


def judge_package(name: str, want: dict, found: Dict[str, Optional[dict]]) -> List[str]:
    """present (default true; false: must be absent; null: only its hold is judged, where installed),
    version (a prefix, as missing_packages reads a pin), version_of (the installed upstream version of
    another package is the prefix), hold (true: on hold where installed)."""
    package = found.get(name)
    present = _present(want)
    if present is False:
        return ["%s: installed, not wanted" % name] if package else []
    if package is None:
        return ["%s: not installed" % name] if present else []
    why = []
    pin = _pin(want, found)
    if pin and missing_packages(found, [name], {name: pin}):
        why.append("%s: %s, not %s" % (name, package["version"], pin))
    if _flag(want.get("hold")) and not package.get("hold"):
        why.append("%s: not on hold" % name)
    return why


def json_differences(want: object, have: object, at: str = "") -> List[str]:
    """Keys of `want` that `have` lacks or holds another value at, recursively into objects (a merge of
    `want` into `have` would change them); lists and scalars compare whole."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return [at or "the document"]
        out = []
        for key, value in want.items():
            where = "%s.%s" % (at, key) if at else str(key)
            out += json_differences(value, have[key], where) if key in have else [where]
        return out
    return [] if want == have else [at or "the document"]


def judge_file(path: str, want: dict, found: dict, text: Optional[str]) -> List[str]:
    """exists, isdir, mode, content (exact), checksum (SHA-1), lines (each a whole line of the file),
    last_line_matching {regexp, line} (the last line the regexp finds is the line, as lineinfile
    leaves it), json_subset (the file's JSON has these keys and values). `text` is the file's text,
    read only where a key needs it; it never goes into `why`."""
    exists = _flag(want.get("exists"))
    if not found.get("exists"):
        judged = [key for key in ("isdir", "mode", "content", "checksum") + _TEXT_KEYS if _given(want, key)]
        return ["%s: missing" % path] if exists or (exists is None and judged) else []
    if exists is False:
        return ["%s: exists, not wanted" % path]
    why = []
    isdir = _flag(want.get("isdir"))
    if isdir is not None and bool(found.get("isdir")) != isdir:
        why.append("%s: %s" % (path, "not a directory" if isdir else "a directory"))
    mode = _mode(want.get("mode"))
    if mode and found.get("mode") != mode:
        why.append("%s: mode %s, not %s" % (path, found.get("mode"), mode))
    if want.get("content") is not None and found.get("checksum") != hashlib.sha1(
            str(want["content"]).encode("utf-8")).hexdigest():
        why.append("%s: content differs" % path)
    if _given(want, "checksum") and found.get("checksum") != want["checksum"]:
        why.append("%s: checksum differs" % path)
    lines = (text or "").splitlines()
    for line in want.get("lines") or []:
        if line not in lines:
            why.append("%s: no line %r" % (path, line))
    last = want.get("last_line_matching")
    if last:
        matching = [line for line in lines if re.search(last["regexp"], line)]
        if not matching or matching[-1] != last["line"]:
            why.append("%s: the last line matching %r is not %r" % (path, last["regexp"], last["line"]))
    if want.get("json_subset") is not None:
        try:
            document = json.loads(text or "")
        except ValueError:
            why.append("%s: not JSON" % path)
        else:
            why += ["%s: %s differs" % (path, key) for key in json_differences(want["json_subset"], document)]
    return why


def judge_service(name: str, want: dict, found: dict) -> List[str]:
    why = []
    for key in ("active", "enabled"):
        wanted = _flag(want.get(key))
        if wanted is not None and bool(found.get(key)) != wanted:
            why.append("%s: %s" % (name, ("not " + key) if wanted else (key + ", not wanted")))
    return why


def judge_module(name: str, stream: object, found: Dict[str, dict]) -> List[str]:
    """The dnf module's wanted stream is the enabled one (what `dnf module install name:stream` leaves)."""
    if not stream:
        return []
    module = found.get(name) or {}
    if module.get("state") == "disabled":
        return ["dnf module %s: disabled, wanted stream %s" % (name, stream)]
    if module.get("state") != "enabled" or not module.get("stream"):
        return ["dnf module %s: no stream enabled, wanted %s" % (name, stream)]
    if module["stream"] != str(stream):
        return ["dnf module %s: stream %s enabled, not %s" % (name, module["stream"], stream)]
    return []


def judge_repo(name: str, want: dict, found: Dict[str, dict]) -> List[str]:
    """enabled: the repository is defined in /etc/yum.repos.d and enabled (true) or not (false)."""
    enabled = _flag(want.get("enabled"))
    if enabled is None:
        return []
    if name not in found:
        return ["repository %s: not defined in yum.repos.d" % name] if enabled else []
    if found[name]["enabled"] != enabled:
        return ["repository %s: %s" % (name, "disabled" if enabled else "enabled, not wanted")]
    return []


def parse_env_file(text: str) -> Dict[str, str]:
    """KEY=VALUE lines as docker_container's env_file reads them (community.docker's parse_env_file, docker's
    rules): lines end at a newline only (or a carriage return, as Python's text files read them), never at U+2028,
    VT, FS or NEL, which str.splitlines() would split at; comments and blank lines skipped."""
    pairs = {}
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            pairs[key] = value
    return pairs


def judge_container(name: str, want: dict, found: dict, files_: Optional[Dict[str, dict]] = None,
                    env_files: Optional[Dict[str, str]] = None) -> List[str]:
    """`started_after`: files the container reads at its start. One written after that start (a run that
    stopped between writing it and restarting the container) means the container runs what was there before.
    `env_file`: the file the container was created with; docker copies it into the container once, so a
    restart never applies a change: every KEY=VALUE must be in the container's environment (names only in
    the reason: the values may be secrets)."""
    if want.get("exists") is False:
        return ["%s: exists, and should not" % name] if found.get("exists") else []
    if not found.get("exists"):
        return ["%s: no such container" % name]
    why = []
    running = _flag(want.get("running"))
    if running is not None and bool(found.get("running")) != running:
        why.append("%s: %s" % (name, "not running" if running else "running"))
    labels = found.get("labels") or {}
    for key, value in (want.get("labels") or {}).items():
        if labels.get(key) != value:
            why.append("%s: label %s differs" % (name, key))
    started = found.get("started_at")
    for path in want.get("started_after") or []:
        written = ((files_ or {}).get(path) or {}).get("mtime")
        if started is not None and written is not None and written > started:
            why.append("%s: started before %s was last written (%ds later): it runs the file before"
                       % (name, path, written - started))
    if want.get("env_file"):
        have = set(found.get("env") or [])
        wanted_env = parse_env_file((env_files or {}).get(want["env_file"]) or "")
        stale = sorted(k for k, v in wanted_env.items() if "%s=%s" % (k, v) not in have)
        if stale:
            why.append("%s: its environment lacks %s of %s: it was created before that file was written"
                       % (name, ", ".join(stale), want["env_file"]))
    return why


def judge_step(step: dict, node: dict) -> List[str]:
    """Why the node differs from one step's wanted state ([] where it does not). `node` holds what
    was read: packages, services, files, text (path: the text of files a key needs), containers,
    groups ({group: [members]}), users, modules (dnf module streams) and repos (dnf repositories). `always`
    is a reason to run the step without judging (what the data cannot express)."""
    why = [str(step["always"])] if step.get("always") else []
    for name, want in (step.get("packages") or {}).items():
        why += judge_package(name, want or {}, node["packages"])
    for name, stream in (step.get("modules") or {}).items():
        why += judge_module(name, stream, node.get("modules") or {})
    for name, want in (step.get("repos") or {}).items():
        why += judge_repo(name, want or {}, node.get("repos") or {})
    for path, want in (step.get("files") or {}).items():
        why += judge_file(path, want or {}, node["files"].get(path) or {}, node["text"].get(path))
    for name, want in (step.get("services") or {}).items():
        why += judge_service(name, want or {}, node["services"].get(name) or {})
    for group, members in (step.get("groups") or {}).items():
        if group not in node["groups"]:
            why.append("group %s: missing" % group)
            continue
        why += ["%s: not in group %s" % (user, group) for user in members or [] if user not in node["groups"][group]]
    why += ["user %s: missing" % user for user in step.get("users") or [] if user not in node["users"]]
    for name, want in (step.get("containers") or {}).items():
        why += judge_container(name, want or {}, node["containers"].get(name) or {}, node["files"],
                               node.get("env_files"))
    return why


# The wanted state's schema: the keys of a step, and of each entry under a step key (None: the entry is not a
# mapping). A key outside it would never be judged, so a typo (mod: '0644') would pass silently: refused.
STEP_SCHEMA: Dict[str, Optional[Tuple[str, ...]]] = {
    "packages": ("present", "version", "version_of", "hold"),
    "modules": None,      # {module: stream}
    "repos": ("enabled",),
    "files": ("exists", "isdir", "mode", "content", "checksum") + _TEXT_KEYS,
    "services": ("active", "enabled"),
    "groups": None,       # {group: [members]}
    "users": None,        # [user, ...]
    "containers": ("exists", "running", "labels", "started_after", "env_file"),
    "always": None,       # a reason to run the step without judging
}


def schema_problems(wanted: Dict[str, Optional[dict]]) -> List[str]:
    """Every key of the wanted state that node_state does not judge, by step and entry."""
    problems = []
    for step_name, step in wanted.items():
        if step is None:
            continue
        if not isinstance(step, dict):
            problems.append("wanted.%s: a mapping of %s, not %r" % (step_name, "/".join(STEP_SCHEMA), step))
            continue
        for key, entries in step.items():
            if key not in STEP_SCHEMA:
                problems.append("wanted.%s.%s: not a step key (%s)" % (step_name, key, ", ".join(STEP_SCHEMA)))
                continue
            allowed = STEP_SCHEMA[key]
            if allowed is None or not isinstance(entries, dict):
                continue
            for entry, want in entries.items():
                for unknown in sorted(set(want or {}) - set(allowed)) if isinstance(want, dict) else ():
                    problems.append("wanted.%s.%s[%r].%s: not judged (%s takes %s)"
                                    % (step_name, key, entry, unknown, key, ", ".join(allowed)))
    return problems


def package_todo(step: dict, found: Dict[str, Optional[dict]]) -> Dict[str, List[str]]:
    """What the step's package tasks must do: `install`, the wanted packages not installed or at a version the
    pin does not match (apt/dnf install them at the pin); `hold`, the packages wanted on hold that are installed
    and not on hold, or that the step installs (it holds what it installs)."""
    install, hold = [], []
    for name, want in (step.get("packages") or {}).items():
        want = want or {}
        present = _present(want)
        if present and missing_packages(found, [name], {name: _pin(want, found)}):
            install.append(name)
        package = found.get(name)
        if _flag(want.get("hold")) and (name in install or (package is not None and not package.get("hold"))):
            hold.append(name)
    return {"install": install, "hold": hold}


def merged(base: Dict[str, object], extra: Dict[str, object]) -> Dict[str, object]:
    """extra merged into base, mappings key by key, anything else replaced (Ansible's combine(recursive=true))."""
    out = dict(base)
    for key, value in extra.items():
        have = out.get(key)
        out[key] = merged(have, value) if isinstance(value, dict) and isinstance(have, dict) else value
    return out


def json_todo(step: dict, text: Dict[str, str]) -> Dict[str, str]:
    """Per file of the step judged by json_subset, the text that holds those keys and keeps every other key of the
    file (as to_nice_json(indent=2) writes it); "" for a file that is not JSON (a merge would drop its settings)."""
    out: Dict[str, str] = {}
    for path, want in (step.get("files") or {}).items():
        subset = (want or {}).get("json_subset")
        if subset is None:
            continue
        try:
            document = json.loads(text[path]) if path in text else {}
        except ValueError:
            document = None
        out[path] = "" if not isinstance(document, dict) else (
            json.dumps(merged(document, subset), indent=2, sort_keys=True, separators=(",", ": ")) + "\n")
    return out


def judge(wanted: Dict[str, Optional[dict]], node: dict) -> Dict[str, dict]:
    """{step: {differs, why}} for every step of `wanted`, with `todo` where the step names packages
    (package_todo: install, hold), files judged by json_subset (json_todo: json) or directories (dirs: {path: mode},
    each one the step wants); a step given as null is left out."""
    steps = {}
    for name, step in wanted.items():
        if step is not None:
            why = judge_step(step, node)
            steps[name] = {"differs": bool(why), "why": why}
            if step.get("packages"):
                steps[name]["todo"] = package_todo(step, node["packages"])
            json_files = json_todo(step, node["text"])
            if json_files:
                steps[name].setdefault("todo", {})["json"] = json_files
            dirs = {path: (want or {}).get("mode") for path, want in (step.get("files") or {}).items()
                    if (want or {}).get("isdir")}
            if dirs:
                steps[name].setdefault("todo", {})["dirs"] = dirs
    return steps


def read_node(run: Runner, bins: Dict[str, Optional[str]], packages_: Iterable[str] = (), services_: Iterable[str] = (),
              files_: Iterable[str] = (), read: Iterable[str] = (), images_: Iterable[str] = (),
              containers_: Iterable[str] = (),
              wanted: Optional[Dict[str, Optional[dict]]] = None, etc: str = "/etc") -> dict:
    """The module's whole answer: what the explicit lists and the wanted steps name, read once, and
    the steps judged. `bins` holds the paths of dpkg-query, rpm, systemctl and docker (None: absent).
    Text, dnf modules and repositories read only to judge a step are not returned."""
    wanted = wanted or {}
    names = wanted_reads(wanted)
    read = list(read)

    def both(explicit, key):
        return list(dict.fromkeys(list(explicit) + names[key]))

    package_names = both(packages_, "packages")
    # rpm has no hold: dnf's versionlock list stands for it (only where rpm answers)
    locks = versionlock_entries(etc) if package_names and bins.get("rpm") and not bins.get("dpkg-query") else []
    found_packages = packages(package_names, run, bins.get("dpkg-query"), bins.get("rpm"), locks)
    found_services = services(both(services_, "services"), run, bins.get("systemctl"))
    found_files = files([p for p in both(files_, "files") if p not in read], read)
    found_containers = containers(both(containers_, "containers"), run, bins.get("docker"))
    text = {}
    for path in names["text"]:
        if found_files[path].get("exists") and not found_files[path].get("isdir"):
            text[path] = found_files[path].get("content") if path in read else _read_text(path)
    node = {"packages": found_packages, "services": found_services, "files": found_files, "text": text,
            "containers": found_containers, "groups": {}, "users": [], "modules": {}, "repos": {},
            "env_files": {path: _read_text(path) for path in names["env_files"]}}
    # dnf's own files, not dnf: a dnf run costs seconds and may refresh metadata over the network
    if names["modules"]:
        node["modules"] = parse_dnf_modules(_read_all(os.path.join(etc, "dnf", "modules.d", "*.module")))
    if names["repos"]:
        node["repos"] = parse_dnf_repos(_read_all(os.path.join(etc, "yum.repos.d", "*.repo")))
    # /etc/group and /etc/passwd only where a step names groups or users
    if any(step and (step.get("groups") or step.get("users")) for step in wanted.values()):
        node["groups"] = parse_group(_read_text(os.path.join(etc, "group")))
        node["users"] = parse_passwd(_read_text(os.path.join(etc, "passwd")))
    steps = judge(wanted, node)
    shown = {name: {k: v for k, v in found.items() if k != "env"} for name, found in found_containers.items()}
    return {"packages": found_packages, "services": found_services, "files": found_files,
            "images": images(list(images_), run, bins.get("docker")), "containers": shown, "steps": steps}

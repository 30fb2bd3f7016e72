# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node already has, read in one pass: packages, services, files, images, containers.

The roles read this once and run a change task only where the state differs from
the wanted one, so a converged node costs one round trip per role instead of one
per resource. Plain Python: the module passes a `run(argv) -> (rc, out, err)`.
"""

from __future__ import annotations

import datetime
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


def parse_rpm_query(out: str) -> Dict[str, dict]:
    """`rpm -q --qf '%{NAME}\\t%{VERSION}-%{RELEASE}\\n'` lines; unknown names print a message, skipped."""
    packages = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 2:
            packages[parts[0]] = {"version": parts[1], "hold": False}
    return packages


def packages(names: List[str], run: Runner, dpkg_query: Optional[str], rpm: Optional[str]) -> Dict[str, Optional[dict]]:
    """Installed version and hold state per name; None for a package that is not installed."""
    found: Dict[str, dict] = {}
    if names and dpkg_query:
        # dpkg-query exits 1 when a name is unknown but still prints the others
        _rc, out, _err = run([dpkg_query, "-W", "-f", "${Package}\t${Status}\t${Version}\n"] + names)
        found = parse_dpkg_query(out)
    elif names and rpm:
        _rc, out, _err = run([rpm, "-q", "--qf", "%{NAME}\t%{VERSION}-%{RELEASE}\n"] + names)
        found = parse_rpm_query(out)
    return {name: found.get(name) for name in names}


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
    state = {"exists": True, "isdir": stat.S_ISDIR(st.st_mode), "mode": "%04o" % stat.S_IMODE(st.st_mode)}
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
            "exit_code": state.get("ExitCode")}


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


def unheld_packages(state: Dict[str, Optional[dict]], names: Iterable[str]) -> List[str]:
    """Names that are installed but not on hold (apt-mark hold), so a hold task has something to do."""
    return [name for name in names if state.get(name) is not None and not state[name].get("hold")]


def installed_version(package: Optional[dict]) -> str:
    """The upstream version of an installed package (no Debian or RPM release: `580.95.05-1` is `580.95.05`),
    "" when it is not installed: what the driver roles compare with the loaded module and pin their add-ons to."""
    if not package or not package.get("version"):
        return ""
    return str(package["version"]).split("-", 1)[0]

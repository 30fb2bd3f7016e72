# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A driver that someone else manages: DGX OS, the distribution's own NVIDIA packages, NVIDIA's .run
installer, or a driver from any other source (NVIDIA AI Enterprise, a site image) that this collection
did not install. The nvidia_driver role never replaces or downgrades such a driver: it stops, or with
nvidia_driver_vendor_managed=skip leaves it alone and checks only its branch.

gpu_facts gathers the evidence on the node (the files and the vendor's packages); the role adds what
its own package read says. Plain functions, no Ansible imports."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional

DGX_RELEASE = "/etc/dgx-release"
RUN_INSTALLER = "/usr/bin/nvidia-uninstall"
# Installed by the OS vendor, never by this collection (apt name globs, rpm name globs).
DPKG_PATTERNS = ("linux-modules-nvidia-*", "linux-objects-nvidia-*", "linux-signatures-nvidia-*",
                 "nvidia-driver-*-server", "nvidia-driver-*-server-open")
RPM_PATTERNS = ("kmod-nvidia*", "akmod-nvidia*", "xorg-x11-drv-nvidia*")
MODES = ("fail", "skip")
VARIABLE = "nvidia_driver_vendor_managed"


def parse_release(text: str) -> Dict[str, str]:
    """/etc/dgx-release: KEY="value" lines (the last of a key wins: OTA updates append)."""
    out: Dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            out[key.strip()] = value.strip().strip('"').strip("'")
    return out


def parse_dpkg(text: str) -> List[Dict[str, str]]:
    """`dpkg-query -W -f '${Package}\\t${db:Status-Abbrev}\\t${Version}\\n' <patterns>`: installed ones only."""
    found = []
    for line in (text or "").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1].strip()[1:2] == "i":   # ii, hi: installed (held or not)
            found.append({"name": parts[0].split(":")[0], "version": parts[2]})
    return found


def parse_rpm(text: str) -> List[Dict[str, str]]:
    """`rpm -qa --qf '%{NAME}\\t%{VERSION}-%{RELEASE}\\n' <patterns>`."""
    found = []
    for line in (text or "").splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[0]:
            found.append({"name": parts[0], "version": parts[1]})
    return found


def branch_of(version: Optional[str]) -> Optional[int]:
    head = (version or "").split(".")[0]
    return int(head) if head.isdigit() else None


def node_evidence(facts: Mapping[str, Any]) -> List[str]:
    """What on the node itself says another party manages its driver (gpu_facts' `vendor_driver`)."""
    vendor = facts.get("vendor_driver") or {}
    out = []
    release = vendor.get("dgx_release")
    if release is not None:
        parts = (release.get("DGX_NAME") or release.get("DGX_PRETTY_NAME") or "DGX OS",
                 release.get("DGX_SWBUILD_VERSION") or release.get("DGX_OTA_VERSION") or "")
        name = " ".join(v for v in parts if v)
        out.append("%s (%s): DGX OS installs and updates the driver" % (DGX_RELEASE, name))
    if vendor.get("run_installer"):
        out.append("%s: a driver installed with NVIDIA's .run installer" % RUN_INSTALLER)
    packages = vendor.get("packages") or []
    if packages:
        out.append("the distribution's driver packages %s"
                   % ", ".join("%s %s" % (p["name"], p["version"]) for p in packages[:4])
                   + (" and %d more" % (len(packages) - 4) if len(packages) > 4 else ""))
    return out


def present_version(facts: Mapping[str, Any]) -> Optional[str]:
    """The driver the node runs: what nvidia-smi reports, else the loaded kernel module's version."""
    return facts.get("driver_version") or facts.get("loaded_module_version") or None


def evidence(facts: Mapping[str, Any], role_packages: Mapping[str, Any], role_package_names: Iterable[str]) -> List[str]:
    """Every sign that the node's driver is not this collection's: the node's own (node_evidence), and a driver
    that runs (nvidia-smi or a loaded module) while none of the packages the role installs is there.
    `role_packages` is node_state's package read ({name: {version, hold} or None})."""
    out = node_evidence(facts)
    names = list(role_package_names)
    ours = [n for n in names if (role_packages or {}).get(n)]
    version = present_version(facts)
    if version and not ours:
        source = "nvidia-smi reports" if facts.get("driver_version") else "the loaded nvidia kernel module is"
        out.append("%s driver %s, but none of the packages this role installs (%s) is installed"
                   % (source, version, ", ".join(names) or "none"))
    return out


def decide(facts: Mapping[str, Any], role_packages: Mapping[str, Any], role_package_names: Iterable[str],
           mode: str, required_branch: Any, host: str) -> Dict[str, Any]:
    """{action: install | skip | fail, evidence, message}. install: nothing says another party manages the
    driver. skip: it does and nvidia_driver_vendor_managed=skip, and its branch is at least the required one.
    fail: otherwise, the message naming the evidence, the variable and the ways out."""
    found = evidence(facts, role_packages, role_package_names)
    if mode not in MODES:
        return {"action": "fail", "evidence": found,
                "message": "%s=%r is not one of %s. Fix: set %s: fail (stop on a driver another party manages) or "
                           "skip (leave it alone)." % (VARIABLE, mode, ", ".join(MODES), VARIABLE)}
    if not found:
        return {"action": "install", "evidence": [], "message": ""}
    what = "; ".join(found)
    version = present_version(facts)
    required = branch_of(str(required_branch))
    if mode == "fail":
        return {"action": "fail", "evidence": found, "message": (
            "%s has an NVIDIA driver%s that this collection did not install: %s. The nvidia_driver role never "
            "replaces or downgrades such a driver. Either keep it: set %s: skip (the role then leaves the driver "
            "stack alone and only checks that its branch is at least nvidia_driver_branch=%s); or remove it yourself "
            "(the vendor's tools: apt purge of those packages, nvidia-uninstall for a .run install; not on DGX OS) "
            "and run again." % (host, " " + version if version else "", what, VARIABLE, required_branch))}
    branch = branch_of(version)
    if branch is None:
        return {"action": "fail", "evidence": found, "message": (
            "%s: %s=skip, but no running driver shows its version (nvidia-smi failed or is absent and no nvidia "
            "module is loaded), so its branch cannot be checked against nvidia_driver_branch=%s. Evidence: %s. "
            "Fix: bring the vendor's driver up (load the module, reboot after its install), or remove it and set %s: "
            "fail so the role installs its own." % (host, VARIABLE, required_branch, what, VARIABLE))}
    if required is not None and branch < required:
        return {"action": "fail", "evidence": found, "message": (
            "%s runs the vendor-managed NVIDIA driver %s (branch %d), older than nvidia_driver_branch=%s that the "
            "image needs (CUDA 13: 580+). Evidence: %s. This role will not replace it (%s=skip). Fix: upgrade it "
            "through its vendor (DGX OS: its release upgrade; Ubuntu: the linux-modules-nvidia-%d-* packages; a .run "
            "install: NVIDIA's newer installer), or remove it and set %s: fail to have the role install branch %s."
            % (host, version, branch, required_branch, what, VARIABLE, required, VARIABLE, required_branch))}
    return {"action": "skip", "evidence": found, "message": (
        "%s: leaving the vendor-managed NVIDIA driver %s (branch %d, at least %s) alone (%s=skip): the role installs, "
        "holds and starts nothing of the driver stack here. Evidence: %s."
        % (host, version, branch, required_branch, VARIABLE, what))}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_facts module's read of a node (nvidia-smi or amd-smi, the fabric services, nvidia-imex-ctl, the
InfiniBand sysfs tree, mokutil, the vendor-driver evidence), also run by node_read. The caller passes
`run(argv) -> (rc, out, err)` and `which(name) -> path or None`; the parsers are in gpu_facts.py."""

from __future__ import annotations

import os
import platform
from typing import Callable, List, Optional, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_facts as parse
from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_health
from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state
from ansible_collections.inferops.vllm.plugins.module_utils.node import vendor_driver as vendor

Runner = Callable[[List[str]], Tuple[int, str, str]]
Which = Callable[[str], Optional[str]]


def nvidia(run: Runner, which: Which, facts: dict, memory_usage: bool) -> None:
    smi = which("nvidia-smi")
    if not smi:
        return
    fields = parse.NVIDIA_QUERY_FIELDS
    rc, out, err = run([smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if rc != 0:
        facts["driver_error"] = (out + err).strip()
        return
    gpus = parse.parse_nvidia_query(out, fields)
    for gpu in gpus:
        gpu["memory_mib"] = int(gpu["memory.total"]) if gpu["memory.total"].isdigit() else None
    facts.update(parse.summarize("nvidia", gpus))
    facts["gpus"] = gpus
    if memory_usage:
        rc, out, _err = run([smi, "--query-gpu=" + ",".join(parse.NVIDIA_MEMORY_FIELDS), "--format=csv,noheader,nounits"])
        if rc == 0:
            facts.update(parse.memory_usage(parse.parse_nvidia_query(out, parse.NVIDIA_MEMORY_FIELDS)))
    facts["driver_version"] = gpus[0]["driver_version"] if gpus else None
    rc, out, _err = run([smi])
    if rc == 0:
        facts["cuda_version"] = parse.parse_nvidia_header(out)["cuda_version"]


def amd(run: Runner, which: Which, facts: dict) -> None:
    smi = which("amd-smi")
    if not smi:
        return
    rc, out, err = run([smi, "static", "--json"])
    if rc != 0:
        facts["driver_error"] = (out + err).strip()
        return
    gpus = parse.parse_amd_static(out)
    facts.update(parse.summarize("amd", gpus))
    facts["gpus"] = gpus
    rc, out, _err = run([smi, "version", "--json"])
    if rc == 0:
        versions = parse.parse_amd_version(out)
        facts["rocm_version"] = versions["rocm_version"]
        facts["driver_version"] = versions["driver_version"]


def vendor_driver(run: Runner, which: Which) -> dict:
    """What says that another party manages the NVIDIA driver (vendor_driver.py decides)."""
    out = {"dgx_release": None, "run_installer": os.path.exists(vendor.RUN_INSTALLER), "packages": []}
    try:
        with open(vendor.DGX_RELEASE, encoding="utf-8") as fh:
            out["dgx_release"] = vendor.parse_release(fh.read())
    except OSError:
        pass
    dpkg, rpm = which("dpkg-query"), which("rpm")
    if dpkg:   # rc 1 when a pattern matches nothing: the matches are still printed
        _rc, text, _err = run([dpkg, "-W", "-f", "${Package}\t${db:Status-Abbrev}\t${Version}\n"]
                              + list(vendor.DPKG_PATTERNS))
        out["packages"] = vendor.parse_dpkg(text)
    elif rpm:
        _rc, text, _err = run([rpm, "-qa", "--qf", "%{NAME}\t%{VERSION}-%{RELEASE}\n"] + list(vendor.RPM_PATTERNS))
        out["packages"] = vendor.parse_rpm(text)
    return out


# Each health tool's bound, in seconds: nvidia-smi can hang on a GPU that fell off the bus
HEALTH_TIMEOUT = 60


def bounded(which: Which, argv: List[str], seconds: int = HEALTH_TIMEOUT) -> List[str]:
    """argv under coreutils' timeout (it exits 124 at the bound), where the node has it."""
    timeout = which("timeout")
    return [timeout, "-k", "5", str(seconds)] + argv if timeout else argv


def _tool_finding(tool: str, rc: int, err: str, seconds: int) -> gpu_health.Finding:
    why = "timed out after %d s" % seconds if rc in (124, 137) else "failed (rc %d: %s)" % (
        rc, (err.strip().splitlines() or ["no message"])[-1][:160])
    return gpu_health.Finding(tool, why, "run it on the node by hand: a GPU the driver cannot query must not serve; "
                              "reset the GPU or reboot the node", True)


def health(run: Runner, which: Which, hcas: List[str], seconds: int = HEALTH_TIMEOUT) -> dict:
    """An NVIDIA node's health (node/gpu_health.py): {"findings": [...], "not_read": [...]}. A tool that fails or
    hangs on a GPU is itself a finding that fences; a source the node lacks (no kernel log access, no ibstat) is only
    named under not_read."""
    smi = which("nvidia-smi")
    findings: List[gpu_health.Finding] = []
    not_read: List[str] = []
    for argv, parse_, judge in (([smi, "-q", "-x"], gpu_health.nvidia_gpus, gpu_health.nvidia_findings),
                                ([smi, "nvlink", "-s"], gpu_health.nvlink_links, gpu_health.nvlink_findings)):
        rc, out, err = run(bounded(which, argv, seconds))
        tool = " ".join(["nvidia-smi"] + argv[1:])
        if rc != 0:
            if argv[1] == "nvlink" and rc not in (124, 137):
                continue   # a GPU without NVLink (PCIe cards): nothing to judge
            findings.append(_tool_finding(tool, rc, err, seconds))
            continue
        if argv[1] == "nvlink" and not out.strip():
            continue
        try:
            findings += judge(parse_(out))
        except gpu_health.HealthReadError as exc:
            findings.append(gpu_health.Finding(tool, str(exc).split(": ", 1)[1], "reset the GPU or reboot the node",
                                               True))
    journal, dmesg = which("journalctl"), which("dmesg")
    log = None
    for argv in ([journal, "-k", "-b", "--no-pager", "-o", "short-iso"] if journal else None,
                 [dmesg] if dmesg else None):
        if argv and log is None:
            rc, out, _err = run(bounded(which, argv, seconds))
            log = out if rc == 0 else None
    if log is None:
        not_read.append("the kernel log's Xid events (journalctl -k and dmesg gave nothing: run as root)")
    else:
        findings += gpu_health.xid_findings(gpu_health.xid_events(log))
    if hcas:
        ibstat = which("ibstat")
        if not ibstat:
            not_read.append("each HCA port's state and rate (ibstat is not installed: infiniband-diags)")
        else:
            rc, out, err = run(bounded(which, [ibstat], seconds))
            try:
                findings += gpu_health.ib_findings(gpu_health.ib_ports(out), hcas) if rc == 0 else \
                    [_tool_finding("ibstat", rc, err, seconds)]
            except gpu_health.HealthReadError as exc:
                findings.append(gpu_health.Finding("ibstat", str(exc).split(": ", 1)[1], "check the HCA driver", True))
    return {"findings": gpu_health.as_dicts(findings), "not_read": not_read}


def read(run: Runner, which: Which, sysfs_root: str = "/sys", memory_usage: bool = False,
         warn_secure_boot: bool = False, read_health: bool = False, hcas: Optional[List[str]] = None,
         health_timeout: int = HEALTH_TIMEOUT) -> Tuple[dict, List[str]]:
    """The gpu_facts fact and the warnings to show (Secure Boot on, with warn_secure_boot); with read_health, an
    NVIDIA node's health under `health` (None elsewhere)."""
    facts = {"vendor": None, "model": None, "models": [], "count": 0, "memory_mib": None, "gpus": [],
             "memory_used_mib": None, "memory_total_mib": None,
             "driver_version": None, "cuda_version": None, "rocm_version": None, "driver_error": None,
             "kernel": platform.release()}
    nvidia(run, which, facts, memory_usage)
    if facts["vendor"] is None:
        amd(run, which, facts)
    facts["driver_branch"] = parse.driver_branch(facts["driver_version"]) if facts["vendor"] == "nvidia" else None
    facts["health"] = health(run, which, list(hcas or ()), health_timeout) \
        if read_health and facts["vendor"] == "nvidia" else None
    try:
        with open("/sys/module/nvidia/version", encoding="utf-8") as fh:
            facts["loaded_module_version"] = fh.read().strip()
    except OSError:
        facts["loaded_module_version"] = None
    systemctl = which("systemctl")
    facts["fabric_manager"] = node_state.services(["nvidia-fabricmanager"], run, systemctl)["nvidia-fabricmanager"]
    facts["imex"] = node_state.services(["nvidia-imex"], run, systemctl)["nvidia-imex"]
    ctl = which("nvidia-imex-ctl")
    facts["imex"].update({"domain_state": None, "nodes": []})
    if ctl and facts["imex"]["active"]:
        rc, out, _err = run([ctl, "-N"])
        if rc == 0:
            facts["imex"].update(parse.parse_imex_status(out))
    facts["infiniband"] = parse.read_infiniband(sysfs_root)
    facts["vendor_driver"] = vendor_driver(run, which)
    mokutil = which("mokutil")
    facts["secure_boot"] = None
    if mokutil:
        _rc, out, err = run([mokutil, "--sb-state"])
        facts["secure_boot"] = parse.parse_secure_boot(out + err)
    elif not os.path.isdir("/sys/firmware/efi"):
        facts["secure_boot"] = False   # legacy BIOS boot: no Secure Boot
    warnings = []
    if facts["secure_boot"] and warn_secure_boot:
        warnings.append("Secure Boot is enabled on %s (kernel %s). Unsigned DKMS driver modules will not load: use "
                        "signed precompiled modules, or enrol a MOK (mokutil --import) before installing."
                        % (platform.node(), facts["kernel"]))
    return facts, warnings

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: gpu_facts
short_description: Report a node's GPUs, driver, fabric services, InfiniBand devices and Secure Boot state
description:
  - Reads C(nvidia-smi) (query CSV and banner) or C(amd-smi) (JSON), the Fabric Manager and IMEX services,
    C(nvidia-imex-ctl -N), C(/sys/class/infiniband), C(mokutil --sb-state) and the running kernel.
  - Also what says that another party manages the NVIDIA driver (C(vendor_driver)), C(/etc/dgx-release) (DGX OS),
    C(/usr/bin/nvidia-uninstall) (NVIDIA's .run installer) and the distribution's own driver packages
    (C(linux-modules-nvidia-*), C(nvidia-driver-*-server); C(kmod-nvidia*), C(akmod-nvidia*) on RPM systems).
  - Read-only. Tools that are not installed are reported as absent, not as errors.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  sysfs_root:
    description: Root of the sysfs tree to read InfiniBand devices from (a chroot or a recorded tree).
    type: path
    default: /sys
  memory_usage:
    description:
      - Also read the GPU memory in use now (C(memory_used_mib), C(memory_total_mib) over the node's GPUs). AMD nodes
        report the total only.
    type: bool
    default: false
  warn_secure_boot:
    description:
      - Warn when Secure Boot is on, under which unsigned (DKMS-built) kernel modules do not load.
      - The preflight role turns it on; a driver role reading the same facts again does not repeat it.
    type: bool
    default: false
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.read_only
  - inferops.vllm.attributes.posix
attributes:
  platform:
    details: Linux GPU nodes.
"""

EXAMPLES = r"""
- name: Gather GPU facts
  inferops.vllm.gpu_facts:

- name: Show the driver branch
  ansible.builtin.debug:
    msg: "{{ gpu_facts.vendor }} {{ gpu_facts.model }} x{{ gpu_facts.count }}, driver {{ gpu_facts.driver_version }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts set on the host.
  returned: always
  type: dict
  contains:
    gpu_facts:
      description:
        - C(vendor) (nvidia, amd or null), C(model) (catalog name such as H200 or MI355X, null when mixed),
          C(count), C(memory_mib), C(memory_used_mib) and C(memory_total_mib) (with O(memory_usage)),
          C(gpus) (per-GPU details), C(driver_version), C(driver_branch), C(cuda_version),
          C(rocm_version), C(driver_error) (why the vendor tool failed), C(loaded_module_version)
          (C(/sys/module/nvidia/version)), C(fabric_manager) and C(imex) (C(installed), C(active), C(enabled);
          IMEX also C(domain_state) and C(nodes)), C(infiniband) (devices with ports and state),
          C(secure_boot) (true, false or null), C(kernel) and C(vendor_driver) (C(dgx_release), the parsed
          C(/etc/dgx-release) or null; C(run_installer), true when C(/usr/bin/nvidia-uninstall) exists; C(packages),
          the distribution's NVIDIA driver packages installed, each C(name) and C(version)).
      type: dict
      returned: always
      sample: {vendor: nvidia, model: H200, models: [H200], count: 8, memory_mib: 143771, driver_version: 580.105.08,
               driver_branch: 580, cuda_version: "13.0", memory_used_mib: 1040000, memory_total_mib: 1150168,
               fabric_manager: {installed: true, active: true, enabled: true}, infiniband: [], secure_boot: false,
               kernel: 6.8.0-60-generic}
"""

import functools
import os
import platform

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_facts as parse
from ansible_collections.inferops.vllm.plugins.module_utils.node import node_state
from ansible_collections.inferops.vllm.plugins.module_utils.node import vendor_driver as vendor


def run(module, args):
    rc, out, err = module.run_command(args, environ_update={"LC_ALL": "C"})
    return rc, out, err


def service_state(module, name):
    return node_state.services([name], functools.partial(run, module), module.get_bin_path("systemctl"))[name]


def nvidia(module, facts):
    smi = module.get_bin_path("nvidia-smi")
    if not smi:
        return
    fields = parse.NVIDIA_QUERY_FIELDS
    rc, out, err = run(module, [smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if rc != 0:
        facts["driver_error"] = (out + err).strip()
        return
    gpus = parse.parse_nvidia_query(out, fields)
    for gpu in gpus:
        gpu["memory_mib"] = int(gpu["memory.total"]) if gpu["memory.total"].isdigit() else None
    facts.update(parse.summarize("nvidia", gpus))
    facts["gpus"] = gpus
    if module.params["memory_usage"]:
        rc, out, _err = run(module, [smi, "--query-gpu=" + ",".join(parse.NVIDIA_MEMORY_FIELDS),
                                     "--format=csv,noheader,nounits"])
        if rc == 0:
            facts.update(parse.memory_usage(parse.parse_nvidia_query(out, parse.NVIDIA_MEMORY_FIELDS)))
    facts["driver_version"] = gpus[0]["driver_version"] if gpus else None
    rc, out, _err = run(module, [smi])
    if rc == 0:
        facts["cuda_version"] = parse.parse_nvidia_header(out)["cuda_version"]


def amd(module, facts):
    smi = module.get_bin_path("amd-smi")
    if not smi:
        return
    rc, out, err = run(module, [smi, "static", "--json"])
    if rc != 0:
        facts["driver_error"] = (out + err).strip()
        return
    gpus = parse.parse_amd_static(out)
    facts.update(parse.summarize("amd", gpus))
    facts["gpus"] = gpus
    rc, out, _err = run(module, [smi, "version", "--json"])
    if rc == 0:
        versions = parse.parse_amd_version(out)
        facts["rocm_version"] = versions["rocm_version"]
        facts["driver_version"] = versions["driver_version"]


def vendor_driver(module):
    """What says that another party manages the NVIDIA driver (module_utils/node/vendor_driver.py decides)."""
    out = {"dgx_release": None, "run_installer": os.path.exists(vendor.RUN_INSTALLER), "packages": []}
    try:
        with open(vendor.DGX_RELEASE, encoding="utf-8") as fh:
            out["dgx_release"] = vendor.parse_release(fh.read())
    except OSError:
        pass
    dpkg, rpm = module.get_bin_path("dpkg-query"), module.get_bin_path("rpm")
    if dpkg:   # rc 1 when a pattern matches nothing: the matches are still printed
        _rc, text, _err = run(module, [dpkg, "-W", "-f", "${Package}\t${db:Status-Abbrev}\t${Version}\n"]
                              + list(vendor.DPKG_PATTERNS))
        out["packages"] = vendor.parse_dpkg(text)
    elif rpm:
        _rc, text, _err = run(module, [rpm, "-qa", "--qf", "%{NAME}\t%{VERSION}-%{RELEASE}\n"] + list(vendor.RPM_PATTERNS))
        out["packages"] = vendor.parse_rpm(text)
    return out


def main():
    module = AnsibleModule(argument_spec={"sysfs_root": {"type": "path", "default": "/sys"},
                                          "memory_usage": {"type": "bool", "default": False},
                                          "warn_secure_boot": {"type": "bool", "default": False}}, supports_check_mode=True)
    facts = {"vendor": None, "model": None, "models": [], "count": 0, "memory_mib": None, "gpus": [],
             "memory_used_mib": None, "memory_total_mib": None,
             "driver_version": None, "cuda_version": None, "rocm_version": None, "driver_error": None,
             "kernel": platform.release()}
    nvidia(module, facts)
    if facts["vendor"] is None:
        amd(module, facts)
    facts["driver_branch"] = parse.driver_branch(facts["driver_version"]) if facts["vendor"] == "nvidia" else None
    try:
        with open("/sys/module/nvidia/version", encoding="utf-8") as fh:
            facts["loaded_module_version"] = fh.read().strip()
    except OSError:
        facts["loaded_module_version"] = None
    facts["fabric_manager"] = service_state(module, "nvidia-fabricmanager")
    facts["imex"] = service_state(module, "nvidia-imex")
    ctl = module.get_bin_path("nvidia-imex-ctl")
    facts["imex"].update({"domain_state": None, "nodes": []})
    if ctl and facts["imex"]["active"]:
        rc, out, _err = run(module, [ctl, "-N"])
        if rc == 0:
            facts["imex"].update(parse.parse_imex_status(out))
    facts["infiniband"] = parse.read_infiniband(module.params["sysfs_root"])
    facts["vendor_driver"] = vendor_driver(module)
    mokutil = module.get_bin_path("mokutil")
    facts["secure_boot"] = None
    if mokutil:
        _rc, out, err = run(module, [mokutil, "--sb-state"])
        facts["secure_boot"] = parse.parse_secure_boot(out + err)
    elif not os.path.isdir("/sys/firmware/efi"):
        facts["secure_boot"] = False   # legacy BIOS boot: no Secure Boot
    if facts["secure_boot"] and module.params["warn_secure_boot"]:
        module.warn("Secure Boot is enabled on %s (kernel %s). Unsigned DKMS driver modules will not load: use signed "
                    "precompiled modules, or enrol a MOK (mokutil --import) before installing."
                    % (platform.node(), facts["kernel"]))
    module.exit_json(changed=False, ansible_facts={"gpu_facts": facts})


if __name__ == "__main__":
    main()

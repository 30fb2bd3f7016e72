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
  - In a run where M(inferops.vllm.node_read) read the node first, a task with the same arguments is answered from
    that read on the controller, without the node, while the node was as wanted in all of it (the result then has
    C(node_read=true)).
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
  health:
    description:
      - Also read an NVIDIA node's health (module_utils/node/gpu_health.py), read-only and each tool bounded in time
        (O(health_timeout)), into C(health) - C(nvidia-smi -q -x) (ECC errors, pending or failed row remaps, a pending
        page retirement, a reset the driver asks for, the PCIe link's width, hardware clock slowdowns, the MNNVL
        fabric's state and health), C(nvidia-smi nvlink -s) (inactive links), the kernel log's Xid events since boot
        (C(journalctl -k -b), else C(dmesg)) and, for O(hcas), C(ibstat) (a port down or slower than the others).
      - With O(expect), a finding that fences fails the task naming the node, the part, what is wrong and the fix;
        the others, and a source the node lacks, are warnings.
    type: bool
    default: false
  health_timeout:
    description: Seconds each health tool may run (under coreutils' C(timeout)); one that hangs is a finding that fences.
    type: int
    default: 60
  hcas:
    description: The HCAs whose ports O(health) judges (the launch's C(host_stack.hcas)); empty reads no C(ibstat).
    type: list
    elements: str
    default: []
  expect:
    description:
      - What the node must have to serve, judged on the controller once the facts are read; the task fails naming every
        problem, with the fix (module_utils/controller/preflight.py). Never sent to the node.
      - C(min_driver_branch) (int, the lowest NVIDIA driver branch), C(host_stack) (the launch's host section,
        C(vllm_launch.host_stack), with the GPU vendor, model and count, fabric and HCAs; without it only the driver
        branch is judged) and C(require_rdma) (bool, default true; an RDMA fabric needs an active RDMA port).
    type: dict
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

- name: Gather GPU facts and check them against the node's launch
  inferops.vllm.gpu_facts:
    expect:
      min_driver_branch: 580
      host_stack: "{{ vllm_launch.host_stack }}"

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
          the distribution's NVIDIA driver packages installed, each C(name) and C(version)), C(health) (with
          O(health) on an NVIDIA node, else null; C(findings), each C(where), C(what), C(fix) and C(fences), and
          C(not_read), the sources the node lacks).
      type: dict
      returned: always
      sample: {vendor: nvidia, model: H200, models: [H200], count: 8, memory_mib: 143771, driver_version: 580.105.08,
               driver_branch: 580, cuda_version: "13.0", memory_used_mib: 1040000, memory_total_mib: 1150168,
               fabric_manager: {installed: true, active: true, enabled: true}, infiniband: [], secure_boot: false,
               kernel: 6.8.0-60-generic}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import calls


def main():
    module = AnsibleModule(argument_spec=calls.SPECS["gpu_facts"], supports_check_mode=True)
    result = calls.gpu_facts(module.params, lambda argv: module.run_command(argv, environ_update={"LC_ALL": "C"}),
                             module.get_bin_path)
    for warning in result.pop("warnings"):
        module.warn(warning)
    module.exit_json(**result)


if __name__ == "__main__":
    main()

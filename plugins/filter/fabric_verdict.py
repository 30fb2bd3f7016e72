# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the fabric check: judge one node's collective output."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import fabric

DOCUMENTATION = r"""
name: fabric_verdict
short_description: Judge one node's fabric check output against the inventory's fabric
description:
  - Reads the NCCL/RCCL C(NCCL_DEBUG=INFO) lines and the C(INFEROPS_FABRIC) result line that the fabric_check role's
    all-reduce prints, and returns the transport actually used (C(ib-gdr), C(ib), C(roce-gdr), C(roce), C(mnnvl),
    C(socket), C(gloo-tcp), C(local)), the HCAs and interfaces, the bus bandwidth, and every problem with its likely
    cause (transport that does not match the fabric, HCAs outside C(vllm_ib_hcas), bandwidth under the baseline, a
    node that never joined).
options:
  _input:
    description: The container output.
    type: str
    required: true
  host:
    description: The node, named in every problem.
    type: str
    required: true
  fabric:
    description: The inventory's C(vllm_fabric).
    type: str
    required: true
  min_busbw_gbps:
    description: The site's bandwidth baseline in GB/s; 0 checks none.
    type: float
    default: 0
  require_gdr:
    description: On InfiniBand and RoCE, require GPUDirect RDMA.
    type: bool
    default: true
  hcas:
    description: The HCAs the inventory lists (C(vllm_ib_hcas)); others in use are reported.
    type: list
    elements: str
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Judge what the collective used
  ansible.builtin.set_fact:
    fabric_check_result: >-
      {{ fabric_check_run.container.Output
         | inferops.vllm.fabric_verdict(inventory_hostname, 'infiniband', 40, true, ['mlx5_0', 'mlx5_1']) }}

- name: The node's collective used the fabric the inventory declares
  ansible.builtin.assert:
    that: fabric_check_result.passed
    fail_msg: "{{ fabric_check_result.problems | join(' ') }}"
"""

RETURN = r"""
_value:
  description: The node's verdict.
  type: dict
  contains:
    host:
      description: The node.
      type: str
    fabric:
      description: The inventory's fabric.
      type: str
    transport:
      description: The transport used between nodes (C(ib-gdr), C(ib), C(roce-gdr), C(roce), C(mnnvl), C(socket),
        C(gloo-tcp), C(local)).
      type: str
    library:
      description: C(NCCL) or C(RCCL), or null (gloo).
      type: str
    version:
      description: The library's version.
      type: str
    hcas:
      description: The HCA ports used (C(mlx5_0:1)).
      type: list
      elements: str
    interfaces:
      description: The network interfaces used for bootstrap and sockets.
      type: list
      elements: str
    links:
      description: The distinct per-channel links (C(NET/IB/0/GDRDMA)).
      type: list
      elements: str
    busbw_gbps:
      description: Bus bandwidth of the all-reduce in GB/s.
      type: float
    algbw_gbps:
      description: Algorithm bandwidth in GB/s.
      type: float
    bytes:
      description: Bytes reduced.
      type: int
    world_size:
      description: Ranks that joined.
      type: int
    problems:
      description: One message per problem, naming the node and the likely cause.
      type: list
      elements: str
    passed:
      description: No problem.
      type: bool
  sample:
    host: h200-01
    fabric: infiniband
    transport: ib-gdr
    library: NCCL
    version: 2.27.7+cuda13.0
    hcas: ["mlx5_0:1", "mlx5_1:1"]
    interfaces: [ibp26s0]
    links: [NET/IB/0/GDRDMA, NET/IB/1/GDRDMA]
    busbw_gbps: 45.65
    algbw_gbps: 45.65
    bytes: 268435456
    world_size: 2
    problems: []
    passed: true
"""


def fabric_verdict(output, host, fabric_name, min_busbw_gbps=0, require_gdr=True, hcas=None):
    return fabric.judge(host, fabric_name, output or "", float(min_busbw_gbps or 0), bool(require_gdr),
                        list(hcas or []))


class FilterModule:
    def filters(self):
        return {"fabric_verdict": fabric_verdict}

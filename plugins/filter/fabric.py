# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the fabric check: judge one node's collective output."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils import fabric

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
author: inferops.vllm contributors (@inferops)
"""


def fabric_verdict(output, host, fabric_name, min_busbw_gbps=0, require_gdr=True, hcas=None):
    return fabric.judge(host, fabric_name, output or "", float(min_busbw_gbps or 0), bool(require_gdr),
                        list(hcas or []))


class FilterModule:
    def filters(self):
        return {"fabric_verdict": fabric_verdict}

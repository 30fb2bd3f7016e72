# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the roles: a compiled launch's container options as docker_container parameters."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_container_options

DOCUMENTATION = r"""
name: docker_container_options
short_description: A compiled launch's container options as community.docker.docker_container parameters
description:
  - Maps C(vllm_launch.container) (network and IPC mode, privileged, devices, device requests, capabilities, groups,
    security options, ulimits) to the parameters of M(community.docker.docker_container), leaving out empty lists.
  - Meant for C(module_defaults), so that every container that must see the node's GPUs and fabric as vLLM does
    (vLLM itself, the fabric check) is created from one mapping. Volumes are left to each task.
options:
  _input:
    description: The C(vllm_launch) fact.
    type: dict
    required: true
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Run a container with the node's GPUs and fabric
  community.docker.docker_container:
    name: probe
    image: "{{ vllm_image_to_run }}"
    volumes: "{{ vllm_launch.container.volumes }}"
  module_defaults:
    community.docker.docker_container: "{{ vllm_launch | inferops.vllm.docker_container_options }}"
"""

RETURN = r"""
_value:
  description: C(network_mode), C(ipc_mode), C(privileged), C(ulimits) and, where not empty, C(devices),
    C(device_requests), C(capabilities), C(groups) and C(security_opts).
  type: dict
  sample:
    network_mode: host
    ipc_mode: host
    privileged: false
    devices: [/dev/infiniband:/dev/infiniband]
    device_requests:
      - driver: nvidia
        count: -1
        capabilities: [[gpu]]
    capabilities: [IPC_LOCK]
    ulimits: ["stack:67108864:67108864", "memlock:-1:-1"]
"""


class FilterModule:
    def filters(self):
        return {"docker_container_options": docker_container_options}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that render a compiled launch for people."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_run_command

DOCUMENTATION = r"""
name: docker_run_command
short_description: The C(docker run) command line equivalent to a compiled vLLM launch
description:
  - Renders a launch from M(inferops.vllm.cluster_plan) as one shell-quoted C(docker run) line,
    for review and for running by hand. Secrets appear by name only (C(-e VLLM_API_KEY)).
options:
  _input:
    description: The C(vllm_launch) fact.
    type: dict
    required: true
  image:
    description: The image reference (C(repo@sha256:...)).
    type: str
    default: IMAGE
  name:
    description: The container's name.
    type: str
    default: vllm
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Show the command each node runs
  ansible.builtin.debug:
    msg: "{{ vllm_launch | inferops.vllm.docker_run_command(vllm_image) }}"
"""

RETURN = r"""
_value:
  description: One shell-quoted C(docker run -d) line with the container options, volumes, environment and the
    explicit C(vllm serve) arguments.
  type: str
  sample: >-
    docker run -d --name vllm --network host --ipc host --gpus all --device /dev/infiniband:/dev/infiniband
    --cap-add IPC_LOCK --ulimit memlock=-1:-1 -v /var/lib/inferops-vllm/huggingface:/root/.cache/huggingface
    -e NCCL_SOCKET_IFNAME=bond0 -e VLLM_HOST_IP=10.30.0.11 -e VLLM_API_KEY
    vllm/vllm-openai@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef moonshotai/Kimi-K2.5
    --served-model-name kimi-k2.5 --host 0.0.0.0 --port 8000 --enable-expert-parallel --data-parallel-size 16
"""


class FilterModule:
    def filters(self):
        return {"docker_run_command": docker_run_command}

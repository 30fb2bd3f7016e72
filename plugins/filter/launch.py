# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that render a compiled launch for people."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.render import docker_run_command

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
author: inferops.vllm contributors
"""


class FilterModule:
    def filters(self):
        return {"docker_run_command": docker_run_command}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_serve role: the verdict of the launch check that ran in the image."""

from __future__ import annotations

from ansible_collections.inferops.vllm.plugins.module_utils.controller import launch_check

DOCUMENTATION = r"""
name: launch_check_result
short_description: The verdict of the launch check that ran in the pinned vLLM image
description:
  - Reads the output of C(check_launch.py) (the vllm_serve role runs it in the pinned image with its own python3)
    and returns its JSON verdict. vLLM's own log lines before it are skipped.
  - Output without a verdict (the container could not run the script) counts as not checked.
  - With O(planned), C(release_problem) says why the image's vLLM is not that release (empty where it is, or where
    the check could not read it).
options:
  _input:
    description: The check container's output.
    type: str
    required: true
  planned:
    description: The vLLM release the launch was compiled for (the launch's C(vllm_version)).
    type: str
    default: ""
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: The image's vLLM accepts the launch
  ansible.builtin.assert:
    that: (check.container.Output | inferops.vllm.launch_check_result).ok
"""

RETURN = r"""
_value:
  description: C(checked) (vLLM's parser could be imported), C(ok), C(version) (vLLM's), C(build) (what the
    image's torch was built for, C(cuda), C(rocm) or C(cpu)), C(error), C(flags) (the flags or environment
    variables the error names) and C(release_problem).
  type: dict
  sample: {checked: true, ok: false, version: 0.32.0, build: cuda, error: "unrecognized arguments: --moe-backend",
           flags: [--moe-backend], release_problem: ""}
"""


def launch_check_result(output, planned=""):
    return launch_check.result(str(output or ""), str(planned or ""))


class FilterModule:
    def filters(self):
        return {"launch_check_result": launch_check_result}

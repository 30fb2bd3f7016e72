#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: smoke_report
short_description: Add what the nodes report after a smoke run to its report, and judge the verdict
description:
  - Reads the JSON report that M(inferops.vllm.vllm_smoke) wrote, adds each node's GPU memory (from
    M(inferops.vllm.gpu_facts) with O(inferops.vllm.gpu_facts#module:memory_usage=true), read after the load) and
    any other environment items to its environment record, and each node's startup phases (from
    M(inferops.vllm.vllm_startup)), and writes the JSON and Markdown files again.
  - Fails the task when the verdict failed, unless O(fail_on_verdict=false); the message names the cluster, the failed
    checks and the report.
  - The smoke_test role runs vllm_smoke with C(fail_on_verdict=false), reads the nodes, then this module.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  report_file:
    description: The JSON report written by vllm_smoke.
    type: path
    required: true
  node_gpus:
    description: Each node's C(gpu_facts), by host name; recorded as C(vram) in the environment (C(n/a) without GPUs).
    type: dict
    default: {}
  node_startup:
    description:
      - Each node's startup phases, by host name, as M(inferops.vllm.vllm_startup) returns them (RV(inferops.vllm.vllm_startup#module:startup));
        recorded as C(startup) with the cluster's figures, and shown in the report's Startup section.
    type: dict
    default: {}
  environment:
    description: More environment items to record.
    type: dict
    default: {}
  cluster:
    description: Cluster name, used in the failure message.
    type: str
    default: ""
  fail_on_verdict:
    description: Fail the task when the verdict failed.
    type: bool
    default: true
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.no_check_mode
  - inferops.vllm.attributes.posix
attributes:
  platform:
    details: The controller.
"""

EXAMPLES = r"""
- name: Record the nodes' GPU memory and judge the verdict
  inferops.vllm.smoke_report:
    report_file: "{{ smoke.files.json }}"
    node_gpus: "{{ dict(groups['k3'] | zip(groups['k3'] | map('extract', hostvars, 'gpu_facts'))) }}"
    cluster: k3
  delegate_to: localhost
"""

RETURN = r"""
passed:
  description: The verdict passed.
  type: bool
  returned: always
  sample: true
verdict:
  description: PASSED, PASSED with warnings, or FAILED.
  type: str
  returned: always
  sample: PASSED
environment:
  description: The environment record as written.
  type: dict
  returned: always
  sample: {cluster: k3, gpu_model: GB300, vram: {tray1: "612,204 / 1,150,240 MiB used over 4 GPUs"}}
summary:
  description: The Markdown summary.
  type: str
  returned: always
  sample: "# vLLM smoke report ..."
files:
  description: Paths of the JSON and Markdown report files.
  type: dict
  returned: always
  sample: {json: /srv/reports/k3/smoke.json, md: /srv/reports/k3/smoke.md}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import gpu_facts
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import report, run


def main():
    module = AnsibleModule(argument_spec={
        "report_file": {"type": "path", "required": True},
        "node_gpus": {"type": "dict", "default": {}},
        "node_startup": {"type": "dict", "default": {}},
        "environment": {"type": "dict", "default": {}},
        "cluster": {"type": "str", "default": ""},
        "fail_on_verdict": {"type": "bool", "default": True},
    })
    p = module.params
    extra = dict(p["environment"])
    if p["node_gpus"]:
        extra["vram"] = {host: gpu_facts.vram_line(facts) for host, facts in sorted(p["node_gpus"].items())}
    try:
        full, files = report.amend(p["report_file"], extra, p["node_startup"])
    except (OSError, ValueError) as exc:
        module.fail_json(msg="could not read the smoke report %s: %s" % (p["report_file"], exc))
    result = {"changed": False, "passed": full["passed"], "verdict": full["verdict"],
              "environment": full["environment"], "summary": report.markdown(full), "files": files}
    if not full["passed"] and p["fail_on_verdict"]:
        module.fail_json(msg=run.failure_message(full, p["cluster"], files["md"]), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
module: observability_files
short_description: Write Prometheus targets, scrape configs, alert rules and Grafana dashboards from the plan
description:
  - Reads C(vllm_launch) of every host of group C(vllm_clusters) (set by the plan play), each host's address
    (C(vllm_control_address), else C(ansible_host)) and the routers of group C(vllm_routers), and writes the
    generated files under O(output_dir) on the controller; only files whose text changed are written.
  - The files, their labels and every alert rule's variables are described in docs/observability.md. The
    settings are the C(vllm_observability_*) and C(vllm_exporters_*) variables, with the roles' defaults.
  - Runs on the controller only; no host is contacted. A bad setting fails with the variable, the value and the fix.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  output_dir:
    description: Controller directory the files are written under (created when missing).
    type: path
    required: true
  settings:
    description: Values of C(vllm_observability_*) / C(vllm_exporters_*) variables that replace what the play's
      variables and the roles' defaults give.
    type: dict
    default: {}
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.controller
attributes:
  check_mode:
    support: full
    details: Reports which files would change, without writing them.
  diff_mode:
    support: full
    details: Shows each changed file's old and new text.
"""

EXAMPLES = r"""
- name: Write the observability files beside the playbook
  inferops.vllm.observability_files:
    output_dir: "{{ playbook_dir }}/../reports/observability"
  run_once: true
  delegate_to: localhost
  register: observability
"""

RETURN = r"""
files:
  description: Every generated file by its path relative to O(output_dir) (C(targets/), C(rules/), C(dashboards/),
    C(scrape_configs.yml)), with its text.
  returned: success
  type: dict
output_dir:
  description: Where they were written.
  returned: success
  type: str
"""

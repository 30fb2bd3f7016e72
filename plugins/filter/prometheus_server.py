# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_prometheus role: Prometheus' ARGS and prometheus.yml from the role's variables and the
scrape jobs generated from the plan."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import prometheus_server as server

DOCUMENTATION = r"""
name: prometheus_server
short_description: Prometheus' arguments and configuration file for the vllm_prometheus role
description:
  - Builds the content of C(/etc/default/prometheus) (the C(ARGS) of Debian's unit, with the configuration file, storage path,
    listen address and retention) and of C(/etc/prometheus/prometheus.yml) (Prometheus' own job, then the scrape jobs
    generated from the plan, the rules directory and the Alertmanagers).
  - Fails with the variable, the value and the fix on bad input (an address with a port, a retention that is not a
    Prometheus duration, an Alertmanager that is not host:port).
options:
  _input:
    description: The role's variables (C(vllm_prometheus_*)) by name.
    type: dict
    required: true
  host_address:
    description: The host's own address, used when C(vllm_prometheus_listen_address) is empty.
    type: str
    required: true
  scrape_configs:
    description: The generated C(scrape_configs.yml), read (a list of jobs, or a mapping with C(scrape_configs)).
    type: raw
    required: true
  rules_dir:
    description: The directory the rule files are published to.
    type: str
    required: true
  interval:
    description: The scrape and rule evaluation interval.
    type: str
    required: true
  config_file:
    description: Path of the configuration file.
    type: str
    default: /etc/prometheus/prometheus.yml
  storage_path:
    description: Path of the TSDB.
    type: str
    default: /var/lib/prometheus/metrics2/
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Work out Prometheus' files
  ansible.builtin.set_fact:
    server: >-
      {{ lookup('inferops.vllm.role_options', 'vllm_prometheus')
         | inferops.vllm.prometheus_server(ansible_host, jobs, '/etc/prometheus/rules', '15s') }}
"""

RETURN = r"""
_value:
  description: The two files' contents and where Prometheus answers.
  type: dict
  contains:
    defaults:
      description: The content of C(/etc/default/prometheus).
      type: str
    config:
      description: The content of C(prometheus.yml).
      type: str
    listen:
      description: The host:port Prometheus binds.
      type: str
    local_url:
      description: The URL the host itself reaches Prometheus at.
      type: str
  sample:
    defaults: "ARGS=\"--web.listen-address=10.0.0.5:9090 --storage.tsdb.retention.time=15d\"\n"
    config: "global:\n  scrape_interval: 15s\n..."
    listen: "10.0.0.5:9090"
    local_url: "http://10.0.0.5:9090"
"""


def prometheus_server(settings, host_address, scrape_configs, rules_dir, interval,
                      config_file="/etc/prometheus/prometheus.yml", storage_path="/var/lib/prometheus/metrics2/"):
    settings = dict(settings or {})
    try:
        flags = server.args(settings, host_address, config_file, storage_path)
        data = server.config(settings, host_address, scrape_configs, rules_dir, interval)
        return {"defaults": server.defaults_file(flags), "config": server.config_file(data),
                "listen": server.listen(settings, host_address),
                "local_url": server.local_url(settings, host_address)}
    except ValueError as err:
        raise AnsibleFilterError(str(err)) from None


class FilterModule:
    def filters(self):
        return {"prometheus_server": prometheus_server}

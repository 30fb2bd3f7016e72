# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The optional Prometheus server of role vllm_prometheus (Debian's `prometheus` package): its
command-line arguments (ARGS in /etc/default/prometheus) and /etc/prometheus/prometheus.yml, built
from the scrape jobs that observability generates from the plan. Prometheus 2.42 (Debian 12) has no
`scrape_config_files`, so the jobs are pasted in. Standard library only; bad input raises
PrometheusSettingError (an ObservabilityError) with the variable, the value and the fix: the plan play
checks every host of group vllm_prometheus with check() before any host is touched."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any, Dict, List, Mapping, Sequence

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.errors import ObservabilityError
from ansible_collections.inferops.vllm.plugins.module_utils.controller.url_host import url_host

SELF_JOB = "prometheus"
# Prometheus' duration syntax (model.ParseDuration): units largest first, each at most once.
_DURATION = re.compile(r"\A(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?\Z")
_HOSTNAME = re.compile(r"\A(?=.{1,253}\Z)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\Z")


class PrometheusSettingError(ObservabilityError):
    """A bad vllm_prometheus_* value (or generated scrape jobs it cannot use)."""


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return bool(_HOSTNAME.match(text))


def duration(variable: str, value: Any) -> str:
    text = str(value).strip()
    if not text or not _DURATION.match(text) or not re.search(r"[1-9]", text):
        raise PrometheusSettingError(variable, value, "not a Prometheus duration",
                                     "set a number with a unit (y, w, d, h, m, s, ms), e.g. 15d or 1m30s")
    return text


def listen_address(value: Any, host_address: str) -> str:
    """The address Prometheus binds: the setting, or (empty) the host's own address."""
    text = str(value or "").strip() or str(host_address or "").strip()
    if not text:
        raise PrometheusSettingError("vllm_prometheus_listen_address", value, "empty, and the host has no address",
                                     "set vllm_prometheus_listen_address, or vllm_control_address/ansible_host")
    if not _is_address(text.strip("[]")):
        raise PrometheusSettingError("vllm_prometheus_listen_address", value,
                                     "not an IP address or host name (the port has its own variable)",
                                     "set an address such as 10.0.0.5 or 0.0.0.0, and the port in vllm_prometheus_port")
    return text.strip("[]")


def port(variable: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if not 1 <= number <= 65535 or isinstance(value, bool):
        raise PrometheusSettingError(variable, value, "not a TCP port", "set a port from 1 to 65535, e.g. 9090")
    return number


def alertmanagers(value: Any) -> List[str]:
    if not isinstance(value, (list, tuple)):
        raise PrometheusSettingError("vllm_prometheus_alertmanagers", value, "not a list",
                                     "set a list of host:port, e.g. [10.0.0.9:9093]")
    out = []
    for item in value:
        text = str(item).strip()
        host, _sep, number = text.rpartition(":")
        if "://" in text or not host or not _is_address(host.strip("[]")) or not number.isdigit() \
                or not 1 <= int(number) <= 65535:
            raise PrometheusSettingError("vllm_prometheus_alertmanagers", value,
                                         "%r is not host:port" % item,
                                         "list each Alertmanager as host:port, without a scheme, e.g. 10.0.0.9:9093")
        out.append(text)
    return out


def check(settings: Mapping[str, Any], host_address: str) -> None:
    """Every setting, so that a bad one fails before the package is installed."""
    listen_address(settings.get("vllm_prometheus_listen_address"), host_address)
    port("vllm_prometheus_port", settings.get("vllm_prometheus_port"))
    duration("vllm_prometheus_retention", settings.get("vllm_prometheus_retention"))
    alertmanagers(settings.get("vllm_prometheus_alertmanagers") or [])


def listen(settings: Mapping[str, Any], host_address: str) -> str:
    """host:port that Prometheus binds (IPv6 in brackets)."""
    return "%s:%d" % (url_host(listen_address(settings.get("vllm_prometheus_listen_address"), host_address)),
                      port("vllm_prometheus_port", settings.get("vllm_prometheus_port")))


def local_url(settings: Mapping[str, Any], host_address: str) -> str:
    """The URL this host's own tasks reach Prometheus at (a wildcard bind is reached on loopback)."""
    address = listen_address(settings.get("vllm_prometheus_listen_address"), host_address)
    if address in ("0.0.0.0", "::"):
        address = "127.0.0.1" if address == "0.0.0.0" else "::1"
    return "http://%s:%d" % (url_host(address), port("vllm_prometheus_port", settings.get("vllm_prometheus_port")))


def args(settings: Mapping[str, Any], host_address: str, config_file: str, storage_path: str) -> List[str]:
    """Prometheus' flags, each one word (no quoting needed in ARGS)."""
    check(settings, host_address)
    return ["--config.file=" + config_file,
            "--storage.tsdb.path=" + storage_path,
            "--web.listen-address=" + listen(settings, host_address),
            "--storage.tsdb.retention.time=" + duration("vllm_prometheus_retention", settings["vllm_prometheus_retention"])]


def defaults_file(flags: Sequence[str]) -> str:
    """/etc/default/prometheus as the package's unit reads it (EnvironmentFile, $ARGS)."""
    return ("# Written by inferops.vllm (role vllm_prometheus); edit the role's variables, not this file.\n"
            'ARGS="%s"\n' % " ".join(flags))


def _jobs(scrape_configs: Any) -> List[Dict[str, Any]]:
    """The generated scrape_configs.yml, read: a list of jobs, or a mapping with scrape_configs."""
    jobs = scrape_configs.get("scrape_configs") if isinstance(scrape_configs, Mapping) else scrape_configs
    if not isinstance(jobs, list) or not all(isinstance(j, Mapping) and j.get("job_name") for j in jobs):
        raise PrometheusSettingError("scrape_configs.yml", scrape_configs, "not a list of scrape jobs",
                                     "regenerate it with the vllm_observability role")
    if any(j["job_name"] == SELF_JOB for j in jobs):
        raise PrometheusSettingError("scrape_configs.yml", SELF_JOB, "a generated job has the name of "
                                     "Prometheus' own job", "rename that job")
    return [dict(j) for j in jobs]


def config(settings: Mapping[str, Any], host_address: str, scrape_configs: Any, rules_dir: str,
           interval: str) -> Dict[str, Any]:
    """prometheus.yml as data: the generated jobs after Prometheus' own, the rules dir, Alertmanagers."""
    check(settings, host_address)
    every = duration("vllm_observability_scrape_interval", interval)
    data: Dict[str, Any] = {
        "global": {"scrape_interval": every, "evaluation_interval": every},
        "rule_files": [rules_dir.rstrip("/") + "/*.yml"],
    }
    managers = alertmanagers(settings.get("vllm_prometheus_alertmanagers") or [])
    if managers:
        data["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": managers}]}]}
    data["scrape_configs"] = [{"job_name": SELF_JOB, "static_configs": [{"targets": [listen(settings, host_address)]}]}] \
        + _jobs(scrape_configs)
    return data


def to_yaml(data: Any, indent: int = 0) -> str:
    """Block YAML with every scalar written as JSON (which YAML reads as is); stable output."""
    pad = " " * indent
    lines: List[str] = []
    if isinstance(data, Mapping):
        for key, value in data.items():
            if isinstance(value, (Mapping, list)) and value:
                lines.append("%s%s:" % (pad, key))
                lines.append(to_yaml(value, indent + 2).rstrip("\n"))
            else:
                lines.append("%s%s: %s" % (pad, key, json.dumps(value)))
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, (Mapping, list)) and item:
                body = to_yaml(item, indent + 2).rstrip("\n")
                lines.append("%s- %s" % (pad, body[indent + 2:]))
            else:
                lines.append("%s- %s" % (pad, json.dumps(item)))
    else:
        lines.append(pad + json.dumps(data))
    return "\n".join(lines) + "\n"


def config_file(data: Mapping[str, Any]) -> str:
    return ("# Written by inferops.vllm (role vllm_prometheus) from the plan's generated scrape jobs;\n"
            "# edit the role's variables, not this file.\n" + to_yaml(data))

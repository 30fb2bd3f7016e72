# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vllm_observability_* and vllm_exporters_* values the generator reads, checked and typed. The caller
fills the defaults from the roles' defaults/main.yml (the one place they live). Controller-only, no Ansible
imports."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Tuple

from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.errors import ObservabilityError

# The labels every target gets from the plan (targets.py); site labels add to them, never replace them.
TARGET_LABELS: Tuple[str, ...] = ("cluster", "node", "role", "rank", "vendor", "gpu_model", "strategy",
                                  "load_balancing", "model")
RESERVED_LABELS = frozenset(TARGET_LABELS) | {"job", "instance"}
LABEL_NAME = re.compile(r"\A[a-zA-Z_][a-zA-Z0-9_]*\Z")
DURATION = re.compile(r"\A(?=\d)((\d+)y)?((\d+)w)?((\d+)d)?((\d+)h)?((\d+)m)?((\d+)s)?((\d+)ms)?\Z")

NAMES = ("vllm_observability_file_sd_dir", "vllm_observability_rules_dir", "vllm_observability_extra_labels",
         "vllm_observability_scrape_interval", "vllm_observability_alerts", "vllm_exporters_gpu",
         "vllm_exporters_dcgm_port", "vllm_exporters_amd_port", "vllm_exporters_node_exporter",
         "vllm_exporters_node_exporter_port")


@dataclass(frozen=True)
class Settings:
    file_sd_dir: str
    rules_dir: str
    extra_labels: Mapping[str, str]
    scrape_interval: str
    alerts: Mapping[str, Any]
    gpu: bool
    dcgm_port: int
    amd_port: int
    node_exporter: bool
    node_exporter_port: int


def is_duration(value: Any) -> bool:
    return isinstance(value, str) and bool(DURATION.match(value))


def _get(settings: Mapping[str, Any], name: str) -> Any:
    if name not in settings:
        raise ObservabilityError(name, None, "not set", "pass the role default (roles/%s/defaults/main.yml)"
                                 % ("vllm_exporters" if name.startswith("vllm_exporters_") else "vllm_observability"))
    return settings[name]


def _bool(settings: Mapping[str, Any], name: str) -> bool:
    value = _get(settings, name)
    if not isinstance(value, bool):
        raise ObservabilityError(name, value, "must be true or false", "write true or false, unquoted")
    return value


def _port(settings: Mapping[str, Any], name: str) -> int:
    value = _get(settings, name)
    number = value if isinstance(value, int) and not isinstance(value, bool) else \
        int(value) if isinstance(value, str) and value.isdigit() else None
    if number is None or not 1 <= number <= 65535:
        raise ObservabilityError(name, value, "must be a port from 1 to 65535", "set a free port, e.g. 9400")
    return number


def _dir(settings: Mapping[str, Any], name: str) -> str:
    value = _get(settings, name)
    if not isinstance(value, str) or not value.startswith("/") or any(c in value for c in "\n\r*?"):
        raise ObservabilityError(name, value, "must be an absolute directory path on the Prometheus server",
                                 "set a path such as /etc/prometheus/file_sd")
    return value.rstrip("/") or "/"


def extra_labels(value: Any) -> Dict[str, str]:
    name = "vllm_observability_extra_labels"
    if not isinstance(value, Mapping):
        raise ObservabilityError(name, value, "must be a mapping of label names to values",
                                 "write e.g. {site: fra1, env: prod}")
    out = {}
    for key, label_value in value.items():
        if not isinstance(key, str) or not LABEL_NAME.match(key) or key.startswith("__"):
            raise ObservabilityError(name, value, "%r is not a Prometheus label name" % (key,),
                                     "use letters, digits and _, not starting with a digit or __")
        if key in RESERVED_LABELS:
            raise ObservabilityError(name, value, "%r is a label the collection sets from the plan" % key,
                                     "choose another name; the plan's labels are %s" % ", ".join(TARGET_LABELS))
        if isinstance(label_value, (Mapping, list, tuple)) or label_value is None:
            raise ObservabilityError(name, value, "the value of %r must be a string" % key,
                                     "write a plain value, e.g. %s: prod" % key)
        out[key] = str(label_value).lower() if isinstance(label_value, bool) else str(label_value)
    return dict(sorted(out.items()))


def read(settings: Mapping[str, Any]) -> Settings:
    """Settings from the variables (every name in NAMES), or ObservabilityError for the first bad one."""
    interval = _get(settings, "vllm_observability_scrape_interval")
    if not is_duration(interval) or not re.search(r"[1-9]", interval):
        raise ObservabilityError("vllm_observability_scrape_interval", interval, "not a Prometheus duration",
                                 "write e.g. 15s or 1m")
    alerts = _get(settings, "vllm_observability_alerts")
    if not isinstance(alerts, Mapping):
        raise ObservabilityError("vllm_observability_alerts", alerts, "must be a mapping of rule keys to overrides",
                                 "write e.g. {engine_down: {for: 10m}}")
    return Settings(
        file_sd_dir=_dir(settings, "vllm_observability_file_sd_dir"),
        rules_dir=_dir(settings, "vllm_observability_rules_dir"),
        extra_labels=extra_labels(_get(settings, "vllm_observability_extra_labels")),
        scrape_interval=interval,
        alerts=alerts,
        gpu=_bool(settings, "vllm_exporters_gpu"),
        dcgm_port=_port(settings, "vllm_exporters_dcgm_port"),
        amd_port=_port(settings, "vllm_exporters_amd_port"),
        node_exporter=_bool(settings, "vllm_exporters_node_exporter"),
        node_exporter_port=_port(settings, "vllm_exporters_node_exporter_port"),
    )

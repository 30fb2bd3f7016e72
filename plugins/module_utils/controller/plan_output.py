# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a plan run leaves on the controller: the review files, the per-host stash the hosts take their launch
from, and the plan as people read it."""

from __future__ import annotations

import json
import os
import tempfile
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Sequence

from ansible_collections.inferops.vllm.plugins.module_utils.controller import (
    boundary, firewall, flows, plan_view, routers, site_services, specs, version_change)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability import inputs as observability
from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_run_command


def _write(path: str, text: str, mode: int, check: bool) -> bool:
    """Write only what changed (nothing in check mode); True when the file changes."""
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    except OSError:
        pass
    if check:
        return True
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, mode)
    return True


def _as_json(launch: Mapping[str, Any]) -> str:
    return json.dumps(launch, indent=4, separators=(",", ": "), ensure_ascii=False) + "\n"


def write_review(output_dir: str, launches: Mapping[str, Mapping[str, Any]], check: bool = False) -> int:
    """<dir>/<cluster>/<host>.yaml (the vLLM config), .json (the whole launch) and .sh (docker run). An upgrade to
    another vLLM adds <cluster>/version-change.md and the launch a rollback returns to, before/<host>.json."""
    changed = 0
    for host, launch in launches.items():
        folder = boundary.inside(output_dir, launch["cluster"]["name"])
        if not check:
            os.makedirs(folder, mode=0o755, exist_ok=True)
        image = launch["cluster"]["image"] or "IMAGE"
        files = [(folder, host + ".yaml", launch["config_yaml"]),
                 (folder, host + ".json", _as_json({k: v for k, v in launch.items() if k != "before"})),
                 (folder, host + ".sh", docker_run_command(launch, image) + "\n")]
        change = launch["cluster"].get("version_change")
        if change:
            before = boundary.inside(folder, "before")
            if not check:
                os.makedirs(before, mode=0o755, exist_ok=True)
            files += [(folder, "version-change.md", version_change.to_markdown(change)),
                      (before, host + ".json", _as_json(launch["before"]))]
        for where, name, text in files:
            changed += _write(boundary.inside(where, name), text, 0o644, check)
    return changed


def write(output_dir: str, launches: Mapping[str, Mapping[str, Any]], observability_files: Mapping[str, str],
          check: bool, flow_table: Sequence[flows.Flow] = (), rulesets: Mapping[str, str] = MappingProxyType({}),
          router_configs: Mapping[str, Any] = MappingProxyType({}),
          services: Mapping[str, Any] = MappingProxyType({})) -> int:
    """The review files, the flow table (flows.md, flows.json), each host's firewall (firewall/<host>.nft), each
    router's configuration (routers.json), each site service (image.json, weights.json, prometheus.json:
    site_services) and the observability files under output_dir ('' writes none): how many changed."""
    if not output_dir:
        return 0
    changed = write_review(output_dir, launches, check)
    if flow_table:
        if not check:
            os.makedirs(output_dir, mode=0o755, exist_ok=True)
        changed += _write(boundary.inside(output_dir, "flows.md"), flows.to_markdown(flow_table), 0o644, check)
        changed += _write(boundary.inside(output_dir, "flows.json"), flows.to_json(flow_table), 0o644, check)
    if router_configs:
        changed += _write(boundary.inside(output_dir, "routers.json"), json.dumps(router_configs, indent=4) + "\n",
                          0o644, check)
    for name, service in services.items():
        if service is not None:
            changed += _write(boundary.inside(output_dir, name + ".json"),
                              _as_json(site_services.as_json(service)), 0o644, check)
    if rulesets:
        folder = boundary.inside(output_dir, "firewall")
        if not check:
            os.makedirs(folder, mode=0o755, exist_ok=True)
        for host, text in rulesets.items():
            changed += _write(boundary.inside(folder, host + ".nft"), text, 0o644, check)
    if observability_files:
        changed += len(observability.write(os.path.join(output_dir, "observability"), observability_files, check))
    return changed


def show_lines(launches: Mapping[str, Mapping[str, Any]], read: Mapping[str, Mapping[str, Any]],
               role_values: Mapping[str, Mapping[str, Any]], output_dir: str,
               flow_table: Sequence[flows.Flow] = (),
               shares: Mapping[str, Mapping[str, Any]] = MappingProxyType({}),
               router_configs: Mapping[str, Any] = MappingProxyType({}),
               services: Mapping[str, Any] = MappingProxyType({})) -> List[str]:
    """The plan as people read it (plan_view), with the driver each node gets: its nvidia_driver_branch or
    rocm_version, else the role's default."""
    drivers: Dict[str, Any] = {}
    for host, launch in launches.items():
        vendor = launch["cluster"]["vendor"]
        if vendor == "nvidia":
            drivers[host] = read.get(host, {}).get("nvidia_driver_branch") or \
                specs.role_default("nvidia_driver", "nvidia_driver_branch")
        elif vendor == "amd":
            drivers[host] = role_values.get(host, {}).get("rocm_version") or specs.role_default("rocm", "rocm_version")
    blocks = (routers.summary_lines(router_configs) + site_services.image_lines(services.get("image"))
              + site_services.weights_lines(services.get("weights"))
              + site_services.prometheus_lines(services.get("prometheus") or {}))
    return plan_view.plan_lines(launches, drivers, output_dir,
                                blocks + flows.summary_lines(flow_table) + firewall.summary_lines(shares))


def version_change_lines(launches: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """Per cluster that an upgrade moves to another vLLM, what changes (version_change.summary_lines)."""
    out: List[str] = []
    for summary in {launch["cluster"]["name"]: launch["cluster"] for launch in launches.values()}.values():
        if summary.get("version_change"):
            out += ["cluster %s: %s" % (summary["name"], line) if i == 0 else line
                    for i, line in enumerate(version_change.summary_lines(summary["version_change"]))]
    return out


def stash(launches: Mapping[str, Any], tmp_root: str, hosts: Mapping[str, Any] = MappingProxyType({})) -> str:
    """One small JSON file per host in the run's local temp dir (Ansible removes it at exit): its launch, and under
    hosts/ what else it applies (Outcome.hosts). A registered result holding every launch would be copied into every
    host's variables, and the first task after it costs three times a plain task at 512 hosts (docs/benchmarks.md)."""
    folder = tempfile.mkdtemp(prefix="cluster-plan-", dir=tmp_root)
    os.mkdir(os.path.join(folder, "hosts"), 0o700)
    for parts, sub in ((launches, folder), (hosts, os.path.join(folder, "hosts"))):
        for host, value in parts.items():
            with open(boundary.inside(sub, host + ".json"), "w", encoding="utf-8") as handle:
                json.dump(value, handle)
    return folder


def take(folder: str, host: str, part: str = "launch") -> Any:
    """This host's launch (part "launch") or what else it applies (part "host") from the run's stash; OSError or
    boundary.BoundaryError when it has none."""
    with open(boundary.inside(folder if part == "launch" else os.path.join(folder, "hosts"), host + ".json"),
              encoding="utf-8") as handle:
        return json.load(handle)

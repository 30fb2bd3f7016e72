# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What files() needs, from host variables the caller has read (templated): each host's address, each
router's metrics listener, the settings with the roles' defaults under them, and writing the files where they
changed. Shared by the action plugins observability_files and cluster_plan. Controller-only, no Ansible
imports."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Mapping, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.controller import boundary
from ansible_collections.inferops.vllm.plugins.module_utils.controller.observability.settings import NAMES

ROUTER_VARS = ("vllm_router_host", "vllm_router_port", "vllm_router_prometheus_host", "vllm_router_prometheus_port")
WILDCARDS = ("", "0.0.0.0", "::", "[::]")

Get = Callable[[str], Any]       # a host's variable by name (None when unset)
Default = Callable[[str], Any]   # a variable's role default (roles/<role>/defaults/main.yml)


def address(get: Get, host: Optional[str] = None) -> Optional[str]:
    """The address Prometheus reaches a host on: vllm_control_address, else ansible_host, else the inventory
    name (as Ansible itself connects)."""
    return get("vllm_control_address") or get("ansible_host") or host


def router(get: Get, default: Default, host: Optional[str] = None) -> Dict[str, Any]:
    """A router's listeners: metrics on vllm_router_prometheus_host ("" = the router's bind address), scraped on
    the host's address when that is a wildcard."""
    def value(name: str) -> Any:
        found = get(name)
        return default(name) if found is None else found
    listen = value("vllm_router_prometheus_host") or value("vllm_router_host") or ""
    return {"address": address(get, host) if str(listen) in WILDCARDS else str(listen),
            "metrics_port": int(value("vllm_router_prometheus_port")), "port": int(value("vllm_router_port"))}


def settings(get: Get, default: Default) -> Dict[str, Any]:
    """settings.NAMES: the value set for the host (inventory, -e), else the role's default."""
    out = {}
    for name in NAMES:
        found = get(name)
        out[name] = default(name) if found is None else found
    return out


def write(output_dir: str, files: Mapping[str, str], check: bool) -> Dict[str, Dict[str, str]]:
    """Write the files under output_dir where their text changed (nothing in check mode). Returns
    {path: {"before": old text, "after": new text}} of the changed ones, for --diff."""
    changed = {}
    for path, text in sorted(files.items()):
        target = boundary.inside(output_dir, *path.split("/"))
        try:
            with open(target, encoding="utf-8") as handle:
                before = handle.read()
        except OSError:
            before = ""
        if before == text and os.path.exists(target):
            continue
        changed[path] = {"before": before, "after": text}
        if check:
            continue
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        tmp = "%s.%d.tmp" % (target, os.getpid())
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    return changed

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Human renderings of a compiled launch. No Ansible imports."""

from __future__ import annotations

import shlex
from typing import Any, Dict, List, Mapping, Tuple


# docker_container's names for the launch's container options (the rest are the same).
_MODULE_NAMES = {"group_add": "groups"}


def docker_container_options(launch: Mapping[str, Any]) -> Dict[str, Any]:
    """The launch's container options as community.docker.docker_container parameters.

    Every container that must see the node's GPUs and fabric as vLLM does (vLLM itself,
    the fabric check) takes these. Empty lists are left out, as docker_container's own
    defaults; volumes are left to each task, which adds its own mount to them."""
    return {_MODULE_NAMES.get(key, key): value for key, value in launch["container"].items()
            if key != "volumes" and value != []}


def docker_options(launch: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """The `docker run` options of the launch, one (option, value) pair each, in docker_run_command's order;
    a secret is named without its value ("" as its value)."""
    c = launch["container"]
    out: List[Tuple[str, str]] = [("--network", c["network_mode"]), ("--ipc", c["ipc_mode"])]
    if c.get("pid_mode"):
        out.append(("--pid", c["pid_mode"]))
    if c.get("stop_timeout") is not None:
        out.append(("--stop-timeout", str(c["stop_timeout"])))
    if c.get("privileged"):
        out.append(("--privileged", ""))
    for req in c.get("device_requests", []):
        out.append(("--device", ",".join(req["device_ids"])) if req.get("driver") == "cdi" else ("--gpus", "all"))
    out += [("--device", dev) for dev in c.get("devices", [])]
    out += [("--cap-add", cap) for cap in c.get("capabilities", [])]
    out += [("--group-add", group) for group in c.get("group_add", [])]
    out += [("--security-opt", opt) for opt in c.get("security_opts", [])]
    for ulimit in c.get("ulimits", []):
        name_, soft, hard = ulimit.split(":")
        out.append(("--ulimit", "%s=%s:%s" % (name_, soft, hard)))
    out += [("-v", vol) for vol in c.get("volumes", [])]
    out += [("-e", "%s=%s" % (key, value)) for key, value in launch["env"].items()]
    out += [("-e", key) for key in launch.get("secret_env", {})]
    return out


def docker_run_command(launch: Mapping[str, Any], image: str = "IMAGE", name: str = "vllm") -> str:
    """One `docker run` line with the explicit `vllm serve` argv; secrets by name only. With the weight cache, the
    daemon's line (`vllm preload`) first: it starts before vLLM."""
    lines = []
    cache = launch.get("weight_cache")
    if cache:
        lines.append(_run_line(launch, name + "-weight-cache", ["--entrypoint", "vllm"], image,
                               ["preload"] + list(cache["argv"])))
    lines.append(_run_line(launch, name, [], image, launch["argv"]))
    return "\n".join(lines)


def _run_line(launch: Mapping[str, Any], name: str, extra: List[str], image: str, argv: List[str]) -> str:
    parts: List[str] = ["docker", "run", "-d", "--name", name] + extra
    for option, value in docker_options(launch):
        parts += [option, value] if value else [option]
    parts.append(image)
    parts += argv
    return " ".join(shlex.quote(p) for p in parts)

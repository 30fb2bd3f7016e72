# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Human renderings of a compiled launch. No Ansible imports."""

from __future__ import annotations

import shlex
from typing import Any, Dict, List, Mapping


# docker_container's names for the launch's container options (the rest are the same).
_MODULE_NAMES = {"group_add": "groups"}


def docker_container_options(launch: Mapping[str, Any]) -> Dict[str, Any]:
    """The launch's container options as community.docker.docker_container parameters.

    Every container that must see the node's GPUs and fabric as vLLM does (vLLM itself,
    the fabric check) takes these. Empty lists are left out, as docker_container's own
    defaults; volumes are left to each task, which adds its own mount to them."""
    return {_MODULE_NAMES.get(key, key): value for key, value in launch["container"].items()
            if key != "volumes" and value != []}


def docker_run_command(launch: Mapping[str, Any], image: str = "IMAGE", name: str = "vllm") -> str:
    """One `docker run` line with the explicit `vllm serve` argv; secrets by name only."""
    c = launch["container"]
    parts: List[str] = ["docker", "run", "-d", "--name", name, "--network", c["network_mode"], "--ipc", c["ipc_mode"]]
    if c.get("privileged"):
        parts.append("--privileged")
    for req in c.get("device_requests", []):
        if req.get("driver") == "cdi":
            parts += ["--device", ",".join(req["device_ids"])]
        else:
            parts += ["--gpus", "all"]
    for dev in c.get("devices", []):
        parts += ["--device", dev]
    for cap in c.get("capabilities", []):
        parts += ["--cap-add", cap]
    for group in c.get("group_add", []):
        parts += ["--group-add", group]
    for opt in c.get("security_opts", []):
        parts += ["--security-opt", opt]
    for ulimit in c.get("ulimits", []):
        name_, soft, hard = ulimit.split(":")
        parts += ["--ulimit", "%s=%s:%s" % (name_, soft, hard)]
    for vol in c.get("volumes", []):
        parts += ["-v", vol]
    for key, value in launch["env"].items():
        parts += ["-e", "%s=%s" % (key, value)]
    for key in launch.get("secret_env", {}):
        parts += ["-e", key]
    parts.append(image)
    parts += launch["argv"]
    return " ".join(shlex.quote(p) for p in parts)

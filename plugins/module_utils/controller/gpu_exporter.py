# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the vllm_exporters role decides, as plain data: the exporter image to pull (through the
site registry, as vllm_image pulls the vLLM image), the DCGM exporter's flags, AMD's config.json,
and whether an exporter's /metrics shows every GPU the plan expects. No Ansible imports."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Iterable, List, Optional

from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref
from ansible_collections.inferops.vllm.plugins.module_utils.node import prom

# The series counted per GPU, and its GPU label: every GPU the exporter sees reports a temperature.
COUNTED = {"nvidia": ("DCGM_FI_DEV_GPU_TEMP", "gpu"), "amd": ("gpu_junction_temperature", "gpu_id")}
IMAGE_VARIABLE = {"nvidia": "vllm_exporters_dcgm_image", "amd": "vllm_exporters_amd_image"}
IMAGE_TAG = {"nvidia": "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless",
             "amd": "rocm/device-metrics-exporter:v1.5.2"}
# Where the exporter finds its fields inside the container (the role mounts its own file there).
DCGM_COUNTERS = "/etc/dcgm-exporter/default-counters.csv"
AMD_CONFIG = "/etc/metrics/config.json"
# DCGM's host engine as nvidia-dcgm.service runs it (DGX OS): the exporter connects instead of embedding one.
DCGM_HOSTENGINE = "localhost:5555"
DOCKER_HUB_API = "https://registry-1.docker.io"
AMD_FIELD = re.compile(r"\A[A-Z][A-Z0-9_]*\Z")


class ExporterError(ValueError):
    """A one-line refusal: the variable, the value, the problem and the fix."""

    def __init__(self, variable: str, value: Any, problem: str, fix: str):
        super().__init__("%s=%s %s. Fix: %s" % (variable, json.dumps(value), problem, fix))
        self.variable = variable


def registry_url(host: str) -> str:
    """The registry API a host name means: Docker Hub's for docker.io, else https://host."""
    return DOCKER_HUB_API if host == image_ref.DOCKER_HUB else "https://" + host


def image_plan(vendor: str, ref: str, mirror: str = "", mirror_mode: str = "copy",
               mirror_upstream: str = DOCKER_HUB_API) -> Dict[str, str]:
    """image_ref.pull_plan for an exporter image, named by its own variable, plus `source`: the
    registry to copy it from into the site registry (copy mode), or "" when nothing is copied.
    A pull-through site registry (proxy mode) serves only images of its upstream."""
    variable = IMAGE_VARIABLE[vendor]
    if not ref:
        raise ExporterError(variable, ref, "is empty, and the %s GPU exporter runs on this cluster" % vendor,
                            "set it to %s@sha256:<digest> (`docker buildx imagetools inspect %s` prints the digest), "
                            "or set vllm_exporters_gpu: false" % (IMAGE_TAG[vendor], IMAGE_TAG[vendor]))
    problem = image_ref.pin_problem(ref)
    if problem:
        raise ExporterError(variable, ref, problem[0], problem[1])
    plan = dict(image_ref.pull_plan(ref), variable=variable, source="")
    # the repository without a tag written before the digest (dcgm-exporter:4.5.3-4.8.2-distroless@sha256:...)
    plan["repository"] = image_ref.repository_name(ref)
    if mirror:
        plan["pull_ref"] = "%s/%s@%s" % (mirror, plan["repository"], plan["digest"])
        own = registry_url(plan["registry"])
        if mirror_mode == "copy":
            plan["source"] = own
        elif mirror_upstream.rstrip("/") != own:
            raise ExporterError(variable, ref, "lives in %s, but the site registry %s (vllm_image_mirror_mode=proxy) "
                                "caches only %s" % (own, mirror, mirror_upstream),
                                "set vllm_image_mirror_mode: copy, or point %s at a copy in a registry the nodes reach"
                                % variable)
    return plan


def dcgm_args(listen: str, remote_setting: str = "", dcgm_service_active: bool = False) -> List[str]:
    """The DCGM exporter's flags after its entry point: the role's counters, where to listen, and the
    host engine to connect to: vllm_exporters_dcgm_remote_hostengine, or where it is "" the node's own
    (nvidia-dcgm.service, DGX OS) when it runs; with neither the exporter embeds one."""
    remote = remote_setting or (DCGM_HOSTENGINE if dcgm_service_active else "")
    return ["-f", DCGM_COUNTERS, "-a", listen] + (["-r", remote] if remote else [])


def amd_config(fields: Iterable[str], port: int) -> str:
    """device-metrics-exporter's config.json: the role's fields, its port, no metric name prefix
    (the rules and dashboards use the bare names, gpu_junction_temperature)."""
    fields = list(fields)
    bad = [f for f in fields if not isinstance(f, str) or not AMD_FIELD.match(f)]
    if not fields or bad:
        raise ExporterError("amd-fields.json", bad or fields, "must be a non-empty list of the exporter's field names",
                            "write them as its config.json does, e.g. GPU_JUNCTION_TEMPERATURE")
    config = {"ServerPort": int(port), "CommonConfig": {"MetricsFieldPrefix": ""}, "GPUConfig": {"Fields": fields}}
    return json.dumps(config, indent=2) + "\n"


def _gpu_order(gpu: str):
    return (0, int(gpu), "") if gpu.isdigit() else (1, 0, gpu)


def gpus_seen(text: str, vendor: str) -> List[str]:
    """The GPUs (their index labels) that report the counted series, in order."""
    name, label = COUNTED[vendor]
    seen = {labels.get(label, "") for n, labels, _v in prom.parse(text or "") if n == name}
    return sorted(seen - {""}, key=_gpu_order)


def readiness(text: Optional[str], vendor: str, expected: int, node: str, url: str) -> Dict[str, Any]:
    """Whether /metrics shows one series per GPU the plan expects, and the failure in words."""
    if text is None:
        return {"ready": False, "seen": [], "message": "%s: the %s GPU exporter does not answer at %s" % (node, vendor, url)}
    seen = gpus_seen(text, vendor)
    name, label = COUNTED[vendor]
    ready = len(seen) == int(expected)
    message = "" if ready else (
        "%s: the %s GPU exporter at %s shows %d GPUs (%s=%s in %s), the plan expects %d (vllm_launch.cluster.gpus_per_node)"
        % (node, vendor, url, len(seen), label, ",".join(seen) or "none", name, int(expected)))
    return {"ready": ready, "seen": seen, "message": message}

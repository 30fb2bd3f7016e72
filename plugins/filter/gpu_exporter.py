# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for the vllm_exporters role (module_utils/controller/gpu_exporter.py).

Four filters live here, so each has its own documentation file next to this one
(gpu_exporter_image.yml, gpu_exporter_ready.yml, dcgm_exporter_args.yml, amd_exporter_config.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils.controller import gpu_exporter


def gpu_exporter_image(ref, vendor, mirror="", mirror_mode="copy", mirror_upstream=gpu_exporter.DOCKER_HUB_API):
    try:
        return gpu_exporter.image_plan(str(vendor), str(ref or ""), str(mirror or ""), str(mirror_mode),
                                       str(mirror_upstream or gpu_exporter.DOCKER_HUB_API))
    except ValueError as err:
        raise AnsibleFilterError(str(err)) from None


def gpu_exporter_ready(response, vendor, expected, node, url):
    # a uri result: the content where it answered 200, else none
    text = response.get("content") if isinstance(response, dict) and response.get("status") == 200 else None
    return gpu_exporter.readiness(text, str(vendor), int(expected), str(node), str(url))


def dcgm_exporter_args(listen, remote_setting="", dcgm_service_active=False):
    return gpu_exporter.dcgm_args(str(listen), str(remote_setting or ""), bool(dcgm_service_active))


def amd_exporter_config(fields, port):
    try:
        return gpu_exporter.amd_config(fields, int(port))
    except ValueError as err:
        raise AnsibleFilterError(str(err)) from None


class FilterModule:
    def filters(self):
        return {"gpu_exporter_image": gpu_exporter_image, "gpu_exporter_ready": gpu_exporter_ready,
                "dcgm_exporter_args": dcgm_exporter_args, "amd_exporter_config": amd_exporter_config}

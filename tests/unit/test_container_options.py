"""One mapping of a launch's container options to docker_container, checked against the module's own options."""
import ast
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.inferops.vllm.plugins.module_utils.controller.render import docker_container_options
from clusters import compile_


def docker_container_option_names():
    """The module's documented options, read from its file (ast), not imported: an import goes through whatever
    collection finder an earlier test installed, which ansible-core 2.20 refuses for a collection without loaded
    metadata."""
    for folder in sys.path:
        path = Path(folder) / "ansible_collections/community/docker/plugins/modules/docker_container.py"
        if path.is_file():
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == [
                        "DOCUMENTATION"]:
                    return set(yaml.safe_load(node.value.value)["options"])
    raise AssertionError("community.docker's docker_container is not installed beside ansible-core")


@pytest.mark.parametrize("gpu, fabric", [("H200", "infiniband"), ("MI355X", "roce"), ("GB300", "mnnvl")])
def test_every_option_is_a_docker_container_parameter(gpu, fabric):
    domain = {"vllm_nvlink_domain": "rack1"} if fabric == "mnnvl" else {}
    launch = compile_(vllm_gpu_model=gpu, vllm_fabric=fabric, vllm_strategy="dep", **domain)["n0"]
    options = docker_container_options(launch)
    assert set(options) <= docker_container_option_names()
    assert "volumes" not in options   # each task adds its own mount


def test_rocm_rdma_options_keep_groups_and_drop_empty_lists():
    options = docker_container_options(compile_(vllm_gpu_model="MI355X", vllm_fabric="roce", vllm_strategy="dep")["n0"])
    assert options["groups"] == ["video", "render"]
    assert "/dev/infiniband:/dev/infiniband" in options["devices"]
    assert "device_requests" not in options   # AMD GPUs come as devices, not a device request
    assert "memlock:-1:-1" in options["ulimits"]

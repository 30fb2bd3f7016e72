"""The roles' pin checks: the GPU check's image, rendered as Ansible would (the collection's test inferops.vllm.pinned),
and the image a node runs (vllm_image's to_run, judged by the image_record action) must be pinned by digest, by the
digest image_ref spells once."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import image_record
from role_render import Role, tasks_of

DIGEST = "sha256:" + "ab" * 32
FACTS = {"distribution": "Debian", "os_family": "Debian", "distribution_release": "bookworm", "architecture": "x86_64"}
# role, task file, the variable its assert judges
CHECKS = [("container_runtime", "gpu_check.yml", "container_runtime_gpu_check_image")]
REFS = [
    ("vllm/vllm-openai@" + DIGEST, True), ("registry.site:5000/vllm/vllm-openai@" + DIGEST, True),
    ("vllm/vllm-openai:v0.32.0", False), ("vllm/vllm-openai@sha256:" + "ab" * 31, False), ("", False),
]


def holds(role: str, task_file: str, variable: str, value) -> bool:
    asserts = [t["ansible.builtin.assert"] for t in tasks_of(role, task_file)
               if "ansible.builtin.assert" in t and variable in str(t["ansible.builtin.assert"]["that"])]
    assert len(asserts) == 1, asserts
    return Role(role, FACTS).render("{{ %s }}" % asserts[0]["that"], {variable: value})


@pytest.mark.parametrize("role,task_file,variable", CHECKS)
@pytest.mark.parametrize("ref,pinned", REFS)
def test_a_role_takes_only_a_pinned_image(role, task_file, variable, ref, pinned):
    assert holds(role, task_file, variable, ref) is pinned


@pytest.mark.parametrize("ref,pinned", REFS)
@pytest.mark.parametrize("previous", [False, True])
def test_a_node_runs_only_a_pinned_image(ref, pinned, previous):
    image, refusal = image_record.choose({"to_run": ref, "rollback_to": ref}, previous, "n1", "/s/image.json")
    assert image == ref and (refusal == "") is pinned

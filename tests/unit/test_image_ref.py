"""vllm_image's reference split: registry hosts, Docker Hub names, the site mirror, refusals."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils import image_ref

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize("name,repository", [
    ("vllm/vllm-openai", "vllm/vllm-openai"),
    ("ubuntu", "library/ubuntu"),
    ("docker.io/vllm/vllm-openai", "vllm/vllm-openai"),
    ("127.0.0.1:5000/inferops/standin-vllm", "inferops/standin-vllm"),
    ("localhost/lab/vllm", "lab/vllm"),
    ("nvcr.io/nvidia/pytorch", "nvidia/pytorch"),
])
def test_repository_path(name, repository):
    plan = image_ref.pull_plan("%s@%s" % (name, DIGEST))
    assert plan == {"digest": DIGEST, "repository": repository, "pull_ref": "%s@%s" % (name, DIGEST)}


def test_the_mirror_serves_the_same_digest():
    plan = image_ref.pull_plan("vllm/vllm-openai@" + DIGEST, "registry.site:5000")
    assert plan["pull_ref"] == "registry.site:5000/vllm/vllm-openai@" + DIGEST


@pytest.mark.parametrize("ref", ["vllm/vllm-openai:kimi-k3", "", None, "vllm/vllm-openai@sha256:abc",
                                 "vllm/vllm-openai:kimi-k3@sha256:" + "AB" * 32])
def test_a_reference_without_a_digest_is_refused_with_the_fix(ref):
    with pytest.raises(ValueError, match=r"is not pinned by digest\. Set it to repo@sha256:<digest>; get the digest"):
        image_ref.pull_plan(ref)

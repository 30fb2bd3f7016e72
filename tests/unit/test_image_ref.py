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
    assert {k: plan[k] for k in ("digest", "repository", "pull_ref")} == {
        "digest": DIGEST, "repository": repository, "pull_ref": "%s@%s" % (name, DIGEST)}


# The login goes to the reference's own registry: Docker Hub for a name without a dotted, port or
# localhost first part (vllm/vllm-openai is not a host called "vllm").
@pytest.mark.parametrize("name,registry,login_url", [
    ("vllm/vllm-openai", "docker.io", "https://index.docker.io/v1/"),
    ("ubuntu", "docker.io", "https://index.docker.io/v1/"),
    ("docker.io/vllm/vllm-openai", "docker.io", "https://index.docker.io/v1/"),
    ("index.docker.io/vllm/vllm-openai", "docker.io", "https://index.docker.io/v1/"),
    ("registry.example.com/vllm/vllm-openai", "registry.example.com", "registry.example.com"),
    ("127.0.0.1:5000/x", "127.0.0.1:5000", "127.0.0.1:5000"),
    ("localhost/x", "localhost", "localhost"),
    ("localhost:5000/lab/vllm", "localhost:5000", "localhost:5000"),
])
def test_registry_host(name, registry, login_url):
    plan = image_ref.pull_plan("%s@%s" % (name, DIGEST))
    assert (plan["registry"], plan["login_url"]) == (registry, login_url)
    assert image_ref.registry_host("%s@%s" % (name, DIGEST)) == registry


def test_the_login_goes_to_the_reference_registry_not_the_mirror():
    plan = image_ref.pull_plan("vllm/vllm-openai@" + DIGEST, "registry.site:5000")
    assert (plan["registry"], plan["login_url"]) == ("docker.io", "https://index.docker.io/v1/")


def test_the_mirror_serves_the_same_digest():
    plan = image_ref.pull_plan("vllm/vllm-openai@" + DIGEST, "registry.site:5000")
    assert plan["pull_ref"] == "registry.site:5000/vllm/vllm-openai@" + DIGEST


@pytest.mark.parametrize("ref", ["vllm/vllm-openai:kimi-k3", "", None, "vllm/vllm-openai@sha256:abc",
                                 "vllm/vllm-openai:kimi-k3@sha256:" + "AB" * 32])
def test_a_reference_without_a_digest_is_refused_with_the_fix(ref):
    with pytest.raises(ValueError, match=r"is not pinned by digest\. Set it to repo@sha256:<digest>; get the digest"):
        image_ref.pull_plan(ref)

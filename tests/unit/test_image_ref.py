"""vllm_image's reference split: registry hosts, Docker Hub names, the site mirror, refusals."""
import pytest

from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref
from ansible_collections.inferops.vllm.plugins.test.pinned import pinned

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
    ("127.0.0.1:5002/inferops/standin-vllm", "127.0.0.1:5002", "127.0.0.1:5002"),   # molecule/harness login.yml
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


@pytest.mark.parametrize("ref", ["vllm/vllm-openai:kimi-k3", "", None, "vllm/vllm-openai"])
def test_a_reference_without_a_digest_is_refused_with_the_fix(ref):
    with pytest.raises(ValueError, match=r"is not pinned by digest \(a tag can move under a running cluster\)\. "
                                         r"Fix: set it to repo@sha256:<digest>; `docker buildx imagetools inspect"):
        image_ref.pull_plan(ref)


@pytest.mark.parametrize("ref,found", [
    ("vllm/vllm-openai@sha256:xyz", "found 3 characters after sha256: (not hex: 'x', 'y', 'z')"),
    ("vllm/vllm-openai@sha256:" + "a" * 63, "found 63 characters after sha256:"),
    ("vllm/vllm-openai@sha256:" + "a" * 65, "found 65 characters after sha256:"),
    ("vllm/vllm-openai:kimi-k3@sha256:" + "AB" * 32, "found 64 characters after sha256: (uppercase: 'A', 'B')"),
    ("vllm/vllm-openai@sha512:" + "a" * 64, "which does not start with sha256:"),
    ("vllm/vllm-openai@" + "a" * 64, "which does not start with sha256:"),
])
def test_a_malformed_digest_says_what_was_expected_and_found(ref, found):
    with pytest.raises(ValueError) as info:
        image_ref.pull_plan(ref)
    message = str(info.value)
    assert "has a malformed digest: expected sha256: and 64 lowercase hex characters after @" in message
    assert found in message and "not pinned by digest" not in message
    assert "Fix: copy the whole digest; `docker buildx imagetools inspect vllm/vllm-openai" in message


def test_an_uppercase_repository_is_named():
    with pytest.raises(ValueError, match=r"invalid repository name 'VLLM/vllm-openai'.*e\.g\. vllm/vllm-openai@"):
        image_ref.pull_plan("VLLM/vllm-openai@" + DIGEST)


def test_the_filter_and_the_plan_say_the_same():
    from ansible_collections.inferops.vllm.plugins.module_utils.controller.cluster import ClusterError
    from clusters import compile_
    ref = "vllm/vllm-openai@sha256:xyz"
    with pytest.raises(ValueError) as filter_info:
        image_ref.pull_plan(ref)
    with pytest.raises(ClusterError) as plan_info:
        compile_(vllm_image=ref)
    assert plan_info.value.problem in str(filter_info.value) and plan_info.value.fix in str(filter_info.value)


@pytest.mark.parametrize("ref,tag,cuda", [
    ("vllm/vllm-openai:v0.17.0-cu130@" + DIGEST, "v0.17.0-cu130", 13),
    ("vllm/vllm-openai:latest-cu129@" + DIGEST, "latest-cu129", 12),
    ("vllm/vllm-openai:cu130-nightly@" + DIGEST, "cu130-nightly", 13),
    ("127.0.0.1:5000/vllm/vllm-openai@" + DIGEST, "", None),
    ("vllm/vllm-openai:kimi-k3@" + DIGEST, "kimi-k3", None),
    ("vllm/vllm-openai:docu130x@" + DIGEST, "docu130x", None),
])
def test_the_tag_and_the_cuda_it_names(ref, tag, cuda):
    assert image_ref.tag(ref) == tag and image_ref.cuda_major(ref) == cuda


# The roles' test inferops.vllm.pinned (the GPU check's image, the image a node runs) reads the same digest.
@pytest.mark.parametrize("ref", [
    "vllm/vllm-openai@" + DIGEST, "vllm/vllm-openai:v0.32.0@" + DIGEST,
    "registry.site:5000/vllm/vllm-openai@" + DIGEST,
    "Registry.Site:5000/vllm/vllm-openai@" + DIGEST,   # docker takes a host in capitals; the plan's rule does not
    "[fd00::1]:5000/vllm/vllm-openai@" + DIGEST,        # a site registry at an IPv6 literal
])
def test_the_pinned_test_takes_a_reference_pinned_by_digest(ref):
    assert pinned(ref)


@pytest.mark.parametrize("ref", [
    "vllm/vllm-openai:kimi-k3", "vllm/vllm-openai@sha256:" + "a" * 63, "vllm/vllm-openai@sha256:" + "AB" * 32,
    "vllm/vllm-openai@sha512:" + "a" * 64, "@" + DIGEST, "vllm/vllm openai@" + DIGEST, "a@b@" + DIGEST, "", None,
])
def test_the_pinned_test_refuses_anything_else(ref):
    assert not pinned(ref)


def test_what_the_plan_accepts_the_pinned_test_accepts():
    for ref in ("vllm/vllm-openai@" + DIGEST, "127.0.0.1:5000/inferops/standin-vllm@" + DIGEST):
        assert image_ref.pin_problem(ref) is None and pinned(ref)
    assert image_ref.DIGEST.match(DIGEST) and image_ref.SHA256_HEX.match(DIGEST.split(":")[1])

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A digest-pinned image reference split into what the vllm_image role pulls. No Ansible imports."""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

DIGEST_HEX_LENGTH = 64
# The one spelling of a sha256 digest; every digest rule below (and the inferops.vllm.pinned test) builds on it.
# \A...\Z, never ^...$: "$" also matches before a final newline, as a YAML folded scalar leaves one.
# The bare hex, as the weights manifest lists a file's sha256
SHA256_HEX = re.compile(r"\A[0-9a-f]{%d}\Z" % DIGEST_HEX_LENGTH)
# a content digest as registries and OCI name it (image and weights manifests alike)
DIGEST = re.compile(r"\Asha256:" + SHA256_HEX.pattern[2:])
# repo@sha256:<64 hex>: a tag can move under a running cluster
DIGEST_PINNED = re.compile(r"\A[a-z0-9][a-z0-9._:/-]*@" + DIGEST.pattern[2:])
# Any name docker may take (a mirror host in capitals, an IPv6 literal) pinned by a digest: what the roles
# require of a reference the plan did not judge (a pulled reference, the GPU check's image).
ENDS_IN_DIGEST = re.compile(r"\A[^@\s]+@" + DIGEST.pattern[2:])
_HEX = frozenset("0123456789abcdef")
# vLLM publishes ROCm builds as vllm/vllm-openai-rocm and CUDA builds as vllm/vllm-openai
# (shared/reference/vllm-launch.md section 8): by that convention a repository whose name
# contains this is a ROCm build and any other a CUDA build.
ROCM_NAME_MARKER = "rocm"
VENDOR_BUILD = {"nvidia": "CUDA", "amd": "ROCm"}


def _inspect_hint(name: str) -> str:
    name = name or "vllm/vllm-openai:kimi-k3"
    return "`docker buildx imagetools inspect %s` prints it (the \"Digest:\" line)" % name


def _digest_found(digest: str) -> str:
    """What is wrong with the part after '@', in words: the prefix, the length, the bad characters."""
    algo, sep, hexpart = digest.partition(":")
    if not sep or algo != "sha256":
        return "found %r, which does not start with sha256:" % digest
    found = "found %d characters after sha256:" % len(hexpart)
    bad = sorted(set(hexpart) - _HEX)
    if bad:
        kind = "uppercase" if all(c in "ABCDEF" for c in bad) else "not hex"
        found += " (%s: %s)" % (kind, ", ".join(repr(c) for c in bad))
    return found


def pin_problem(ref: Optional[str]) -> Optional[Tuple[str, str]]:
    """None when `ref` is repo@sha256:<64 lowercase hex>, else (problem, fix) for the refusal.
    Shared by the launch plan (cluster.py) and the image_pull_plan filter so both say the same."""
    ref = str(ref or "")
    if DIGEST_PINNED.match(ref):
        return None
    name, at, digest = ref.partition("@")
    if not at:
        return ("is not pinned by digest (a tag can move under a running cluster)",
                "set it to repo@sha256:<digest>; %s" % _inspect_hint(name))
    if not DIGEST.match(digest):
        return ("has a malformed digest: expected sha256: and %d lowercase hex characters after @, %s"
                % (DIGEST_HEX_LENGTH, _digest_found(digest)),
                "copy the whole digest; %s" % _inspect_hint(name))
    return ("has an invalid repository name %r (lowercase letters, digits and . _ - / : only)" % name,
            "write the repository in lowercase, e.g. %s@%s" % (name.lower(), digest))


# Docker Hub's names for itself, and the URL docker (and community.docker.docker_login) logs in to
DOCKER_HUB = "docker.io"
DOCKER_HUB_ALIASES = ("docker.io", "index.docker.io", "registry-1.docker.io")
DOCKER_HUB_LOGIN_URL = "https://index.docker.io/v1/"


def _registry_part(name: str) -> str:
    """The registry host at the front of a name (a first part with a dot, a colon or `localhost`),
    or "" where there is none (a Docker Hub name)."""
    first, _sep, rest = name.partition("/")
    return first if rest and ("." in first or ":" in first or first == "localhost") else ""


def registry_host(name: str) -> str:
    """The registry a name lives in, as docker resolves it: its first part where that is a host,
    otherwise Docker Hub (`docker.io`)."""
    host = _registry_part(name.split("@", 1)[0])
    return DOCKER_HUB if not host or host in DOCKER_HUB_ALIASES else host


def login_url(host: str) -> str:
    """What to log in to for a registry host: Docker Hub's v1 index URL (docker_login's default), else the host."""
    return DOCKER_HUB_LOGIN_URL if host == DOCKER_HUB else host


def repository_path(name: str) -> str:
    """The repository's path inside its registry: drop a registry host (a first part with a dot,
    a colon or `localhost`); a bare Docker Hub name lives under library/."""
    first, _sep, rest = name.partition("/")
    if _registry_part(name):
        return rest
    return name if rest else "library/" + name


def repository_name(ref: str) -> str:
    """The repository path without registry host, tag or digest: vllm/vllm-openai-rocm."""
    name = str(ref or "").split("@", 1)[0]
    head, slash, last = name.rpartition("/")
    name = head + slash + last.split(":", 1)[0]   # a tag follows the last path part
    return repository_path(name) if "/" in name else name


def digest(ref: Optional[str]) -> str:
    """The digest after the last @ (the whole reference without one): a mirror's reference and the pinned one
    name the same image."""
    return (ref or "").rpartition("@")[2]


def tag(ref: str) -> str:
    """The tag written before the digest (vllm/vllm-openai:v0.17.0-cu130@sha256:... -> v0.17.0-cu130), or ''."""
    last = str(ref or "").split("@", 1)[0].rpartition("/")[2]
    return last.partition(":")[2]


def tag_release(ref: str) -> str:
    """The vLLM release an image tag names (v0.33.0, 0.33.0-cu130, v0.33.0-aarch64-cu130 -> 0.33.0), or ''."""
    match = re.match(r"v?(\d+\.\d+\.\d+)(?:$|[-+])", tag(ref))
    return match.group(1) if match else ""


def cuda_major(ref: str) -> Optional[int]:
    """The CUDA major a vLLM image tag names (cu130 -> 13, cu129 -> 12), or None."""
    match = re.search(r"(?:^|[-_.])cu(\d{3})(?:$|[-_.])", tag(ref))
    return int(match.group(1)) // 10 if match else None


def image_vendor(ref: str) -> str:
    """'amd' for a ROCm build, 'nvidia' for a CUDA build, by the repository name."""
    return "amd" if ROCM_NAME_MARKER in repository_name(ref).lower() else "nvidia"


def pull_plan(ref: str, mirror: str = "") -> Dict[str, str]:
    """The digest, the repository path, the reference to pull (through `mirror`, a site
    registry host:port, when one is set), and the reference's own registry host (`docker.io` for
    Docker Hub) with the URL to log in to it. A reference without a well-formed digest is refused."""
    problem = pin_problem(ref)
    if problem:
        raise ValueError("vllm_image=%r %s. Fix: %s" % (ref, problem[0], problem[1]))
    name, digest = ref.split("@", 1)
    repository = repository_path(name)
    registry = registry_host(name)
    return {"digest": digest, "repository": repository,
            "pull_ref": "%s/%s@%s" % (mirror, repository, digest) if mirror else ref,
            "registry": registry, "login_url": login_url(registry)}

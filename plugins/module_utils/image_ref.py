# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A digest-pinned image reference split into what the vllm_image role pulls. No Ansible imports."""

from __future__ import annotations

import re
from typing import Dict

# repo@sha256:<64 hex>: a tag can move under a running cluster
DIGEST_PINNED = re.compile(r"^[a-z0-9][a-z0-9._:/-]*@sha256:[0-9a-f]{64}$")

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


def pull_plan(ref: str, mirror: str = "") -> Dict[str, str]:
    """The digest, the repository path, the reference to pull (through `mirror`, a site
    registry host:port, when one is set), and the reference's own registry host (`docker.io` for
    Docker Hub) with the URL to log in to it. A reference without a digest is refused: a tag
    can move under a running cluster."""
    if not DIGEST_PINNED.match(ref or ""):
        raise ValueError(
            "vllm_image=%r is not pinned by digest. Set it to repo@sha256:<digest>; get the digest with "
            "`docker buildx imagetools inspect %s` (the \"Digest:\" line) or, after a pull, "
            "`docker image inspect --format '{{index .RepoDigests 0}}' <image:tag>`."
            % (ref, (ref or "vllm/vllm-openai:kimi-k3").split("@")[0]))
    name, digest = ref.split("@", 1)
    repository = repository_path(name)
    registry = registry_host(name)
    return {"digest": digest, "repository": repository,
            "pull_ref": "%s/%s@%s" % (mirror, repository, digest) if mirror else ref,
            "registry": registry, "login_url": login_url(registry)}

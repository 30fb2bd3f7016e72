# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A digest-pinned image reference split into what the vllm_image role pulls. No Ansible imports."""

from __future__ import annotations

import re
from typing import Dict

# repo@sha256:<64 hex>: a tag can move under a running cluster
DIGEST_PINNED = re.compile(r"^[a-z0-9][a-z0-9._:/-]*@sha256:[0-9a-f]{64}$")


def repository_path(name: str) -> str:
    """The repository's path inside its registry: drop a registry host (a first part with a dot,
    a colon or `localhost`); a bare Docker Hub name lives under library/."""
    first, _sep, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return rest
    return name if rest else "library/" + name


def pull_plan(ref: str, mirror: str = "") -> Dict[str, str]:
    """The digest, the repository path and the reference to pull (through `mirror`, a site
    registry host:port, when one is set). A reference without a digest is refused: a tag
    can move under a running cluster."""
    if not DIGEST_PINNED.match(ref or ""):
        raise ValueError(
            "vllm_image=%r is not pinned by digest. Set it to repo@sha256:<digest>; get the digest with "
            "`docker buildx imagetools inspect %s` (the \"Digest:\" line) or, after a pull, "
            "`docker image inspect --format '{{index .RepoDigests 0}}' <image:tag>`."
            % (ref, (ref or "vllm/vllm-openai:kimi-k3").split("@")[0]))
    name, digest = ref.split("@", 1)
    repository = repository_path(name)
    return {"digest": digest, "repository": repository,
            "pull_ref": "%s/%s@%s" % (mirror, repository, digest) if mirror else ref}

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter for the vllm_image role: a digest-pinned reference split into what it pulls."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.vllm.plugins.module_utils.node import image_ref

DOCUMENTATION = r"""
name: image_pull_plan
short_description: The digest, repository path and reference to pull of a digest-pinned image
description:
  - Splits C(repo@sha256:<digest>) into the digest, the repository's path inside its registry, and the reference
    to pull, which goes through the site registry when one is given.
  - Fails with the fix where the reference is not pinned by digest (a tag can move under a running cluster).
options:
  _input:
    description: The image reference, C(repo@sha256:<64 hex>).
    type: str
    required: true
  mirror:
    description: The site registry's C(host:port), or empty to pull from the reference's own registry.
    type: str
    default: ''
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
"""

EXAMPLES = r"""
- name: Work out the reference to pull
  ansible.builtin.set_fact:
    vllm_image_pull_ref: "{{ (vllm_image_ref | inferops.vllm.image_pull_plan('registry.site:5000')).pull_ref }}"
"""

RETURN = r"""
_value:
  description:
    - C(digest) (sha256:...), C(repository) (the path inside the registry) and C(pull_ref).
    - C(registry), the reference's own registry host (C(docker.io) for a Docker Hub name such as
      C(vllm/vllm-openai), whose first part is neither dotted, nor a C(host:port), nor C(localhost)), and
      C(login_url), what M(community.docker.docker_login) logs in to for it (C(https://index.docker.io/v1/) for
      Docker Hub, otherwise the host). Both ignore O(mirror).
  type: dict
  sample:
    digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    repository: vllm/vllm-openai
    pull_ref: registry.site:5000/vllm/vllm-openai@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    registry: docker.io
    login_url: https://index.docker.io/v1/
"""


def image_pull_plan(ref, mirror=""):
    try:
        return image_ref.pull_plan(str(ref or ""), str(mirror or ""))
    except ValueError as err:
        raise AnsibleFilterError(str(err)) from None


class FilterModule:
    def filters(self):
        return {"image_pull_plan": image_pull_plan}

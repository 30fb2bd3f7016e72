#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: model_store
short_description: Put a model downloaded on the store host into the site registry as a pinned artifact
description:
  - Reads the file manifest that C(hub_download.py) wrote beside the store's Hugging Face cache, and pushes the model
    as an OCI artifact in the ModelPack style (the manifest as config, one raw layer per file whose digest is the
    file's sha256) under the repository C(inferops-models/ORG/NAME) and the tag O(revision). The bytes are canonical, so the
    same files give the same manifest digest at every site.
  - Before a push, every store file is checked against the manifest (size, sha256, and the git sha1 of non-LFS
    files). When the tag already holds this very artifact nothing is read or uploaded.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  state:
    description: V(query) reports whether the registry has the tag; V(present) pushes what it lacks.
    type: str
    choices: [query, present]
    default: present
  cache_dir:
    description: The store's Hugging Face cache root (files under C(hub/)). Required with O(state=present).
    type: path
  manifest:
    description: Path of the manifest JSON written by the download step. Required with O(state=present).
    type: path
  registry:
    description: Site registry base URL, for example C(http://127.0.0.1:5000).
    type: str
    required: true
  repo:
    description: Hugging Face repository, C(ORG/NAME).
    type: str
    required: true
  revision:
    description: The pinned commit (40 hex); the manifest must describe it.
    type: str
    required: true
  expected_digest:
    description: The manifest digest (C(sha256:...)) the artifact must have; the push fails before any upload if the
      store's files make another.
    type: str
    default: ""
  timeout:
    description: Seconds each registry request may wait for an answer.
    type: float
    default: 60
  retries:
    description: Further tries of a request (with backoff) before the module fails.
    type: int
    default: 3
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.check_mode
  - inferops.vllm.attributes.posix
attributes:
  check_mode:
    details: Checks the store's files and reports what it would upload, without uploading.
  platform:
    details: The store host, which reaches the site registry.
"""

EXAMPLES = r"""
- name: Push the downloaded model into the site registry
  inferops.vllm.model_store:
    cache_dir: /var/lib/inferops-vllm/model-store
    manifest: /var/lib/inferops-vllm/model-store/manifests/inferops--tiny-k3/4a1f7b2c9d0e8f7a6b5c4d3e2f1a0b9c8d7e6f5a.json
    registry: http://127.0.0.1:5000
    repo: inferops/tiny-k3
    revision: 4a1f7b2c9d0e8f7a6b5c4d3e2f1a0b9c8d7e6f5a
"""

RETURN = r"""
present:
  description: Whether the registry has the tag.
  type: bool
  returned: state query
digest:
  description: The artifact's manifest digest (what O(expected_digest) pins); empty with O(state=query) when absent.
  type: str
  returned: always
  sample: sha256:4db07c16a5b81f57b30c4cbddd750a05f7ebcaeb1538deb75b7ac61d3f7b1374
repository:
  description: The registry repository of the artifact.
  type: str
  returned: state present
  sample: inferops-models/inferops/tiny-k3
blobs:
  description: Blobs in the artifact (one per file, plus the config).
  type: int
  returned: state present
uploaded:
  description: Blobs uploaded now (in check mode, to upload).
  type: int
  returned: state present
bytes:
  description: Bytes uploaded now (in check mode, to upload).
  type: int
  returned: state present
replaced:
  description: The digest the tag held before, when the push moved it to another artifact.
  type: str
  returned: state present
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import weights, weights_store
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import RegistryError
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import BoundedRegistry


def main():
    module = AnsibleModule(argument_spec={
        "state": {"type": "str", "choices": ["query", "present"], "default": "present"},
        "cache_dir": {"type": "path"},
        "manifest": {"type": "path"},
        "registry": {"type": "str", "required": True},
        "repo": {"type": "str", "required": True},
        "revision": {"type": "str", "required": True},
        "expected_digest": {"type": "str", "default": ""},
        "timeout": {"type": "float", "default": 60},
        "retries": {"type": "int", "default": 3},
    }, required_if=[("state", "present", ("cache_dir", "manifest"))], supports_check_mode=True)
    p = module.params
    reg = BoundedRegistry(p["registry"], timeout=p["timeout"], retries=p["retries"])
    what = "%s@%s into %s" % (p["repo"], p["revision"], p["registry"])
    try:
        if p["state"] == "query":
            module.exit_json(changed=False, **weights_store.query(reg, p["repo"], p["revision"]))
        manifest = weights_store.load_manifest(p["manifest"], p["repo"], p["revision"])
        result = weights_store.push(reg, p["cache_dir"], manifest, p["expected_digest"], dry_run=module.check_mode)
    except (RegistryError, weights_store.StoreError, weights.WeightsError, OSError, ValueError, KeyError) as exc:
        module.fail_json(msg="pushing %s failed: %s" % (what, exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()

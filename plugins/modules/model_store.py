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
    description:
      - V(query) reports whether the registry has the tag; V(present) pushes what it lacks.
      - V(torrents) makes the site's BitTorrent metadata of the store's files (one torrent per blob, named by its
        sha256, kept under O(p2p_dir) so a blob is hashed once) and returns RV(torrents) and RV(announce) for
        M(inferops.vllm.model_fetch)'s O(inferops.vllm.model_fetch#module:swarm).
      - V(seeding) runs the site's tracker (Debian's C(opentracker), on O(address) only, serving only these torrents)
        and the store's seeder (C(aria2c)) until no node has been downloading for O(idle_timeout) seconds after one
        was, no node came to download within 120 s, or O(seed_timeout). Run it with C(async) while the nodes fetch. Nothing is left running after it.
    type: str
    choices: [query, present, torrents, seeding]
    default: present
  cache_dir:
    description: The store's Hugging Face cache root (files under C(hub/)). Required with O(state=present), V(torrents)
      and V(seeding).
    type: path
  manifest:
    description: Path of the manifest JSON written by the download step. Required with O(state=present), V(torrents)
      and V(seeding).
    type: path
  p2p_dir:
    description: The store's folder for the torrents, the seeder's links to its blobs and the tracker's whitelist.
    type: path
    default: /var/lib/inferops-vllm/model-store/p2p
  address:
    description: The store host's address that the nodes reach; the tracker and the seeder listen there only.
    type: str
    default: ""
  port:
    description: The tracker's port (TCP) on O(address).
    type: int
    default: 6969
  seed_timeout:
    description: Seconds the tracker and the seeder run at most.
    type: float
    default: 7200
  idle_timeout:
    description: Seconds without a node downloading (after one was) that end the seeding.
    type: float
    default: 30
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
  returned: states query and present
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
torrents:
  description: Each blob the store seeds, by sha256, mapped to its torrent's info-hash; blobs the store lacks are absent.
  type: dict
  returned: states torrents and seeding
  sample: {"2f1c0e0a9d4b6c3e8f7a5b2d1c0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1": "e685b3375ad49c1e9693e9401d7216142f671364"}
announce:
  description: The tracker's announce URL the nodes use.
  type: str
  returned: states torrents and seeding
  sample: http://10.0.0.5:6969/announce
ended:
  description: Why the seeding ended (every node done, the idle time, the timeout, a process that stopped).
  type: str
  returned: state seeding
  sample: no node has been downloading for 30 s
swarms:
  description: The tracker's last count of each swarm (C(complete), C(incomplete)), by info-hash.
  type: dict
  returned: state seeding
  sample: {"e685b3375ad49c1e9693e9401d7216142f671364": {"complete": 1, "incomplete": 0}}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import p2p, weights, weights_store
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import RegistryError
from ansible_collections.inferops.vllm.plugins.module_utils.node.registry_blobs import BoundedRegistry


def main():
    module = AnsibleModule(argument_spec={
        "state": {"type": "str", "choices": ["query", "present", "torrents", "seeding"], "default": "present"},
        "cache_dir": {"type": "path"},
        "manifest": {"type": "path"},
        "registry": {"type": "str", "required": True},
        "repo": {"type": "str", "required": True},
        "revision": {"type": "str", "required": True},
        "expected_digest": {"type": "str", "default": ""},
        "timeout": {"type": "float", "default": 60},
        "retries": {"type": "int", "default": 3},
        "p2p_dir": {"type": "path", "default": "/var/lib/inferops-vllm/model-store/p2p"},
        "address": {"type": "str", "default": ""},
        "port": {"type": "int", "default": 6969},
        "seed_timeout": {"type": "float", "default": 7200},
        "idle_timeout": {"type": "float", "default": 30},
    }, required_if=[("state", "present", ("cache_dir", "manifest")), ("state", "torrents", ("cache_dir", "manifest")),
                    ("state", "seeding", ("cache_dir", "manifest", "address"))], supports_check_mode=True)
    p = module.params
    reg = BoundedRegistry(p["registry"], timeout=p["timeout"], retries=p["retries"])
    what = "%s@%s into %s" % (p["repo"], p["revision"], p["registry"])
    try:
        if p["state"] == "query":
            module.exit_json(changed=False, **weights_store.query(reg, p["repo"], p["revision"]))
        if p["state"] in ("torrents", "seeding"):
            module.exit_json(**swarm(module, p))
        manifest = weights_store.load_manifest(p["manifest"], p["repo"], p["revision"])
        result = weights_store.push(reg, p["cache_dir"], manifest, p["expected_digest"], dry_run=module.check_mode)
    except (RegistryError, weights_store.StoreError, weights.WeightsError, p2p.P2PError, OSError, ValueError,
            KeyError) as exc:
        module.fail_json(msg="%s %s failed: %s" % ("pushing" if p["state"] == "present" else "seeding", what, exc))
    module.exit_json(**result)


def swarm(module, p):
    """The torrents of the store's blobs (made once), and with state=seeding the tracker and seeder, run out.
    A store without the revision's files seeds nothing: the nodes fetch from the registry."""
    address = p["address"]
    announce = p2p.checked_swarm("http://%s:%d/announce" % (address, p["port"]), {})[0]
    if module.check_mode or not os.path.isfile(p["manifest"]):
        return {"changed": False, "torrents": {}, "announce": announce,
                "ended": "" if module.check_mode else "the store holds no %s: nothing to seed" % p["manifest"]}
    manifest = weights_store.load_manifest(p["manifest"], p["repo"], p["revision"])
    torrents = p2p.prepare(p["p2p_dir"], weights_store.swarm_blobs(p["cache_dir"], manifest))
    out = {"changed": False, "torrents": torrents, "announce": announce}
    if p["state"] == "seeding" and torrents:
        out.update(p2p.seed(p["p2p_dir"], torrents, address, p["port"], p["seed_timeout"], p["idle_timeout"]))
    return out


if __name__ == "__main__":
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: compile_cache
short_description: Share a node's vLLM compile cache through the site registry, or take the site's before a start
description:
  - The site compile cache. One OCI artifact per key in the site registry (repository
    C(inferops-vllm/compile-cache), tagged with the key), holding one node's vLLM cache root (torch.compile,
    Inductor and Triton, on GPUs the DeepGEMM and FlashInfer caches, vLLM's model inspection) as tar+gzip, with
    what the key was made of. The plan computes the key (image digest, GPU model, GPUs per node, the node's rank,
    the launch); see docs/startup.md.
  - V(restored), before a node starts - where the cache root does not hold this key's cache yet and the registry
    has one, fetches it, checks its size and sha256, and adds its files to the cache root where no file of that
    name exists. It never replaces a file, never follows a link, and refuses members outside the root, links and
    devices.
  - V(collected), after the node's cluster has proven that it serves - where the registry has no cache for this
    key, packs the cache root (regular files and directories only) and pushes it; where another node of the key
    was first, notes that.
  - A record in the cache root (C(.inferops-site-cache.json)) names the keys it holds, so a second run sends one
    request at most. A missing, foreign or broken cache never fails the task - RV(skipped) says why, and the node
    compiles as it would have.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  state:
    description: V(restored) before a start, V(collected) after a proven start.
    type: str
    choices: [restored, collected]
    required: true
  cache_dir:
    description: The node's vLLM cache root (vllm_compile_cache_dir).
    type: path
    required: true
  registry:
    description: The site registry's URL, C(http://host:port).
    type: str
    required: true
  key:
    description: The key, 64 hex digits, from the plan (the launch's C(compile_cache_site.key)).
    type: str
    required: true
  inputs:
    description: What the key was made of, stored with a collected cache.
    type: dict
    default: {}
  host:
    description: The node's name, stored with a collected cache.
    type: str
    default: ""
  timeout:
    description: Seconds the whole fetch and restore, or pack and push, may take; each request is bounded too.
    type: int
    default: 600
  retries:
    description: Tries after the first for a request that fails on the way (a reset, a 5xx).
    type: int
    default: 2
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.check_mode
  - inferops.vllm.attributes.posix
attributes:
  platform:
    details: A node that reaches the site registry.
"""

EXAMPLES = r"""
- name: Take the site's compile cache for this launch
  inferops.vllm.compile_cache:
    state: restored
    cache_dir: /var/lib/inferops-vllm/compile-cache
    registry: http://registry.site:5000
    key: "{{ vllm_launch.compile_cache_site.key }}"
"""

RETURN = r"""
restored:
  description: With V(restored), whether the site's cache was added to the cache root (or would be, in check mode).
  type: bool
  returned: when state is restored and nothing was skipped
shared:
  description: With V(collected), whether this node's cache was pushed (or would be, in check mode).
  type: bool
  returned: when state is collected and nothing was skipped
reason:
  description: Why nothing was restored or shared (the root holds the key already, the registry has none, ...).
  type: str
  returned: when nothing moved
skipped:
  description: The fault that stopped the restore or the share, on one line; the task does not fail.
  type: str
  returned: on a fault
digest:
  description: The artifact's manifest digest.
  type: str
  returned: when an artifact was restored, shared or found
files:
  description: Files restored (new in the cache root) or shared.
  type: int
  returned: when files moved
bytes:
  description: Their bytes, unpacked.
  type: int
  returned: when files moved
kept:
  description: Files of the archive that the cache root already had, left as they were.
  type: int
  returned: after a restore
refused:
  description: Archive members that were not restored (outside the root, a link or device, under a link).
  type: int
  returned: after a restore
"""

import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import compile_cache


def main():
    module = AnsibleModule(argument_spec={
        "state": {"type": "str", "choices": ["restored", "collected"], "required": True},
        "cache_dir": {"type": "path", "required": True},
        "registry": {"type": "str", "required": True},
        "key": {"type": "str", "required": True, "no_log": False},
        "inputs": {"type": "dict", "default": {}},
        "host": {"type": "str", "default": ""},
        "timeout": {"type": "int", "default": 600},
        "retries": {"type": "int", "default": 2},
    }, supports_check_mode=True)
    p = module.params
    if not re.fullmatch(r"[0-9a-f]{64}", p["key"]):
        module.fail_json(msg="key %r is not 64 lowercase hex digits: pass the plan's compile_cache_site.key" % p["key"])
    result = compile_cache.run(p["state"], p["registry"], p["cache_dir"], p["key"], p["inputs"], p["host"],
                               p["timeout"], p["retries"], module.check_mode)
    if result.get("skipped"):
        module.warn(result["skipped"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()

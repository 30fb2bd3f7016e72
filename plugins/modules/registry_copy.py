#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: registry_copy
short_description: Copy one pinned image into a site registry, reading it from upstream once
description:
  - Reads the pinned image's manifest from the source registry (choosing the linux image for O(architecture) when
    the digest is an index), and copies that manifest and every blob the site registry lacks, byte for byte, so
    digests are unchanged. Each blob is read from upstream once.
  - Anonymous, basic and bearer-token (Docker Hub style) access to the source are supported.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  source:
    description: Source registry base URL, for example C(https://registry-1.docker.io).
    type: str
    required: true
  target:
    description: Site registry base URL, for example C(http://127.0.0.1:5000).
    type: str
    required: true
  repository:
    description: Repository path, the same in both registries (for example C(vllm/vllm-openai)).
    type: str
    required: true
  digest:
    description: The pinned digest (of an image manifest or an index).
    type: str
    required: true
  architecture:
    description: Architecture to copy from an index.
    type: str
    default: amd64
  username:
    description: Source registry user.
    type: str
    default: ""
  password:
    description: Source registry password or token.
    type: str
    default: ""
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.check_mode
  - inferops.vllm.attributes.posix
attributes:
  check_mode:
    details: Resolves the image and reports what would be copied, without copying.
  platform:
    details: Any host that reaches both registries.
"""

EXAMPLES = r"""
- name: Put the pinned vLLM image into the site registry
  inferops.vllm.registry_copy:
    source: https://registry-1.docker.io
    target: http://127.0.0.1:5000
    repository: vllm/vllm-openai
    digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
"""

RETURN = r"""
manifest:
  description: Digest of the image manifest that nodes pull (the platform image of an index).
  type: str
  returned: success
  sample: sha256:2222222222222222222222222222222222222222222222222222222222222222
blobs:
  description: Blobs in that image.
  type: int
  returned: success
  sample: 41
copied:
  description: Blobs copied now.
  type: int
  returned: success
  sample: 3
bytes:
  description: Bytes read from the source now.
  type: int
  returned: success
  sample: 1288490188
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node.registry import Registry, RegistryError, copy_image


def main():
    module = AnsibleModule(argument_spec={
        "source": {"type": "str", "required": True},
        "target": {"type": "str", "required": True},
        "repository": {"type": "str", "required": True},
        "digest": {"type": "str", "required": True},
        "architecture": {"type": "str", "default": "amd64"},
        "username": {"type": "str", "default": ""},
        "password": {"type": "str", "default": "", "no_log": True},
    }, supports_check_mode=True)
    p = module.params
    try:
        result = copy_image(Registry(p["source"], p["username"], p["password"]), Registry(p["target"]),
                            p["repository"], p["digest"], p["architecture"], dry_run=module.check_mode)
    except (RegistryError, OSError, ValueError, KeyError) as exc:
        module.fail_json(msg="copying %s@%s into %s failed: %s" % (p["repository"], p["digest"], p["target"], exc))
    module.exit_json(changed=result["copied"] > 0, **result)


if __name__ == "__main__":
    main()

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the collection keeps things on a node: the one place these defaults are written.

Each value has one owning role variable, which an inventory sets to move it; every other role,
playbook and the lab derive theirs from that variable, falling back to the default here
(lookup inferops.vllm.node_layout).
"""

from __future__ import annotations

from typing import Dict

# name -> (default, the role variable that owns it)
LAYOUT: Dict[str, tuple] = {
    # image.json (the digests a node runs), the watchdog's status, the fabric check's script
    "state_dir": ("/var/lib/inferops-vllm", "vllm_image_state_dir"),
    # vllm.yaml and vllm.env (mounted read-only into the container), the watchdog's config
    "config_dir": ("/etc/inferops-vllm", "vllm_serve_config_dir"),
    # what vLLM and its compilers compiled (mounted into the container; teardown removes it)
    "compile_cache_dir": ("/var/lib/inferops-vllm/compile-cache", "vllm_compile_cache_dir"),
    # the vLLM container that vllm_serve runs and the watchdog, teardown and smoke_test read
    "container_name": ("vllm", "vllm_serve_container_name"),
}


def default(name: str) -> str:
    """The collection's default for `name`; KeyError names the known ones."""
    if name not in LAYOUT:
        raise KeyError("unknown node layout entry %r (known: %s)" % (name, ", ".join(sorted(LAYOUT))))
    return LAYOUT[name][0]


def owner(name: str) -> str:
    """The role variable that owns `name`."""
    default(name)
    return LAYOUT[name][1]

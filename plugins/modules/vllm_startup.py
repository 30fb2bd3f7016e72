#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_startup
short_description: Read a node's vLLM startup phases from its container's log
description:
  - Reads the vLLM container's log since its last start, with docker's timestamps, up to the line that says the API
    is ready, and returns when each startup phase ended - engine started, weights loaded, compiled, graphs captured,
    engine ready, API ready - as seconds from the container's start, with the figure vLLM printed for each.
  - Adds the two phases before the container, from the node's records where they exist - when the node recorded
    the image it runs (C(pulled_at) in the image record) and when it verified the weights it serves (C(verified_at)
    in the weights record).
  - The read is bounded by O(max_lines) and O(timeout); a container that is missing or never started gives an
    C(error) in the result instead of a failure, so the smoke report says so and goes on.
  - The smoke_test role runs it on every node of a cluster and hands the results to M(inferops.vllm.smoke_report).
    The phases and the lines they come from are listed in docs/startup.md.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  container:
    description: The vLLM container's name.
    type: str
    default: vllm
  image_record:
    description: The node's image record (vllm_image), whose C(pulled_at) is the image phase; "" reads none.
    type: str
    default: ""
  model_record:
    description: The node's weights record (vllm_model), whose C(current.verified_at) is the weights phase; "" reads none.
    type: str
    default: ""
  compile_cache_dir:
    description: The node's vLLM cache root; with O(compile_cache_key), the result says how it holds the site compile cache.
    type: str
    default: ""
  compile_cache_key:
    description: The launch's site compile cache key (C(compile_cache_site.key)); "" reads none.
    type: str
    default: ""
  max_lines:
    description: Stop reading the log after this many lines.
    type: int
    default: 200000
  timeout:
    description: Stop reading the log after this many seconds.
    type: int
    default: 60
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.read_only
  - inferops.vllm.attributes.posix
attributes:
  platform:
    details: A node with docker.
"""

EXAMPLES = r"""
- name: Read this node's startup phases
  inferops.vllm.vllm_startup:
    container: vllm
    image_record: /var/lib/inferops-vllm/image.json
    model_record: /var/lib/inferops-vllm/model.json
  register: startup
"""

RETURN = r"""
startup:
  description:
    - C(started_at), the container's last start; C(phases), each phase the log shows with C(at), C(after_s) (seconds
      from the start) and C(took_s) (vLLM's own figure, where it prints one); C(compile_cache) (C(hit), C(miss) or
      none); C(ready), whether the API said it was ready.
    - C(image_pulled_at) and C(weights_staged_at) from the node's records; C(site_cache), how the cache root holds
      the site compile cache (C(restored), C(collected), C(present) or C(none)), where asked; C(short), why the read
      stopped early; C(error), why there are no phases.
  type: dict
  returned: always
  sample:
    started_at: "2026-12-05T18:30:01.120Z"
    phases:
      weights_loaded: {at: "2026-12-05T18:30:19.004Z", after_s: 17.884, took_s: 0.31}
      api_ready: {at: "2026-12-05T18:31:02.551Z", after_s: 61.431, took_s: null}
    compile_cache: miss
    ready: true
    image_pulled_at: "2026-12-05T18:20:44Z"
    weights_staged_at: "2026-12-05T18:29:31Z"
    short: ""
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node import compile_cache, node_state, startup_log


def main():
    module = AnsibleModule(argument_spec={
        "container": {"type": "str", "default": "vllm"},
        "image_record": {"type": "str", "default": ""},
        "model_record": {"type": "str", "default": ""},
        "compile_cache_dir": {"type": "str", "default": ""},
        "compile_cache_key": {"type": "str", "default": "", "no_log": False},
        "max_lines": {"type": "int", "default": 200000},
        "timeout": {"type": "int", "default": 60},
    }, supports_check_mode=True)
    p = module.params
    startup = startup_log.recorded(p["image_record"], p["model_record"])
    if p["compile_cache_dir"] and p["compile_cache_key"]:
        startup["site_cache"] = compile_cache.held(p["compile_cache_dir"], p["compile_cache_key"]) or "none"
    docker = module.get_bin_path("docker")
    found = node_state.containers([p["container"]], module.run_command, docker)[p["container"]]
    if not found["started_at"]:
        startup["error"] = ("container %s has never started" % p["container"] if found["exists"] else
                            "no container %s%s" % (p["container"], "" if docker else ": docker is not installed"))
        module.exit_json(changed=False, startup=startup)
    startup.update(startup_log.read(docker, p["container"], found["started_at"], p["max_lines"], p["timeout"]))
    module.exit_json(changed=False, startup=startup)


if __name__ == "__main__":
    main()

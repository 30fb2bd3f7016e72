#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: router_worker
short_description: Add a worker to vLLM's router, or remove and drain one
description:
  - Adds a worker (a vLLM API server's base URL) to a running vLLM router (C(vllm-router)) with C(POST /add_worker),
    or removes it with C(POST /remove_worker), after reading C(GET /list_workers). A worker already in the wanted
    state is left alone (not changed).
  - With O(state=absent) and O(drain=true) it then waits until the worker has no request in flight, read from the
    worker's own Prometheus C(/metrics) (C(vllm:num_requests_running) plus C(vllm:num_requests_waiting), summed over
    every engine and model). It waits again when the worker was removed before (a re-run after a timeout), and
    counts a worker that no longer listens as drained. It fails after O(drain_timeout) seconds with the number of
    requests still in flight; the worker stays removed.
  - This changes only the running router. The role C(inferops.vllm.vllm_router) writes the configured workers to
    the router's configuration file and restarts the router only when that file changes, so a converge with an
    unchanged configuration does not undo a drain.
  - Talks to the router and the worker directly, never through an HTTP proxy from the environment.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  router_url:
    description: Base URL of the router, for example C(http://127.0.0.1:8080).
    type: str
    required: true
  worker_url:
    description: Base URL of the worker (a vLLM API server), for example C(http://10.0.0.5:8000), as the router lists it.
    type: str
    required: true
  state:
    description: Whether the router sends requests to the worker.
    type: str
    choices: [present, absent]
    default: present
  drain:
    description: With O(state=absent), wait until the worker has no request in flight.
    type: bool
    default: false
  drain_timeout:
    description: Seconds to wait for the drain.
    type: int
    default: 300
  timeout:
    description:
      - Seconds for each HTTP request. C(POST /add_worker) answers once the worker is healthy, which takes up to the
        router's C(--worker-startup-timeout-secs) (C(vllm_router_worker_startup_timeout)); keep this above it.
    type: int
    default: 150
  api_key:
    description: Bearer token sent with every request, for a router or worker behind an authenticating proxy.
    type: str
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.check_mode
  - inferops.vllm.attributes.posix
attributes:
  check_mode:
    details: Reads the router's workers and reports what it would change; neither changes them nor waits for a drain.
  platform:
    details: Any host that can reach the router (and, for a drain, the worker).
seealso:
  - module: inferops.vllm.vllm_health
"""

EXAMPLES = r"""
- name: Take the replica out of the router and wait for its requests to finish
  inferops.vllm.router_worker:
    router_url: http://10.0.0.2:8080
    worker_url: "{{ vllm_launch.cluster.endpoint }}"
    state: absent
    drain: true
    drain_timeout: 600
  delegate_to: "{{ groups['vllm_routers'] | first }}"

- name: Put it back once it serves again
  inferops.vllm.router_worker:
    router_url: http://10.0.0.2:8080
    worker_url: "{{ vllm_launch.cluster.endpoint }}"
    state: present
  delegate_to: "{{ groups['vllm_routers'] | first }}"
"""

RETURN = r"""
workers:
  description: The router's workers after the call (C(GET /list_workers)); in check mode, what they would be.
  type: list
  elements: str
  returned: always
  sample: [http://10.0.0.5:8000, http://10.0.1.5:8000]
drained:
  description: The worker had no request in flight within O(drain_timeout) (null in check mode).
  type: bool
  returned: when O(state=absent) and O(drain=true)
  sample: true
drain_seconds:
  description: Seconds spent waiting for the drain.
  type: float
  returned: when O(state=absent) and O(drain=true)
  sample: 12.4
in_flight:
  description: Requests the worker still held at the last look (running plus waiting).
  type: float
  returned: when the drain ran
  sample: 0.0
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node.router import ensure


def main():
    module = AnsibleModule(argument_spec={
        "router_url": {"type": "str", "required": True},
        "worker_url": {"type": "str", "required": True},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "drain": {"type": "bool", "default": False},
        "drain_timeout": {"type": "int", "default": 300},
        "timeout": {"type": "int", "default": 150},
        "api_key": {"type": "str", "no_log": True},
    }, supports_check_mode=True)
    p = module.params
    try:
        result = ensure(p["router_url"], p["worker_url"], p["state"], p["drain"], p["drain_timeout"], p["timeout"],
                        module.check_mode, p["api_key"])
    except (ValueError, RuntimeError, OSError) as exc:
        module.fail_json(msg="%s: %s" % (p["router_url"], getattr(exc, "reason", exc)))
    if result.get("drained") is False:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()

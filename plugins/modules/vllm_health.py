#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_health
short_description: Wait until a vLLM endpoint serves, and report why it does not
description:
  - Polls C(/health) until it answers 200, checks that C(/v1/models) lists the served model name, then runs one
    short greedy chat completion whose content must be real text (not empty, not one repeated token).
  - Returns after at most O(wait) seconds with C(ready) and the stage reached, so a caller can retry it with
    C(until) and show progress during a long model load. With O(container) set, the container's last log lines
    come back too, and a container that stops or restarts during the call ends it at once with C(crashed), so a
    vLLM that cannot start fails in seconds instead of after the whole load timeout.
  - With O(ranks) above 1 (a data-parallel cluster), one probe per rank goes to that rank (vLLM's
    C(X-data-parallel-rank) header), all at once; all must pass. A rank that hangs (a lost follower) shows as a
    timed-out request instead of hiding behind the ranks that answer.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
options:
  url:
    description: Base URL of the OpenAI-compatible server, for example C(http://127.0.0.1:8000).
    type: str
    required: true
  served_model_name:
    description: Model name that C(/v1/models) must list. Omitted, only C(/health) is asked (a server that has
      nothing else, such as vLLM's weight-cache daemon).
    type: str
  api_key:
    description: API key for C(/v1) requests.
    type: str
  wait:
    description: Seconds to keep polling in this call.
    type: int
    default: 60
  interval:
    description: Seconds between polls.
    type: int
    default: 5
  check_generation:
    description: Also run the short greedy generation check.
    type: bool
    default: true
  timeout:
    description: Seconds each request may take.
    type: int
    default: 30
  ranks:
    description: Data-parallel ranks behind the endpoint; above 1, each poll probes every rank at once.
    type: int
    default: 1
  container:
    description: Docker container whose last log lines to return, and whose stop or restart ends the wait.
    type: str
  log_lines:
    description: How many log lines to return.
    type: int
    default: 30
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.read_only
  - inferops.vllm.attributes.posix
attributes:
  platform:
    details: Any host that can reach the endpoint.
"""

EXAMPLES = r"""
- name: Wait for the head to serve (up to an hour, reporting each minute)
  inferops.vllm.vllm_health:
    url: http://127.0.0.1:8000
    served_model_name: kimi-k3
    container: vllm
  register: health
  until: health.ready
  retries: 60
  delay: 0
"""

RETURN = r"""
ready:
  description: The endpoint passed every check.
  type: bool
  returned: always
  sample: false
stage:
  description: C(health), C(models), C(generation) (the check that failed last) or C(ready).
  type: str
  returned: always
  sample: health
detail:
  description: What the last failed check saw.
  type: str
  returned: always
  sample: 'GET http://127.0.0.1:8000/health: connection refused'
content:
  description: The generation check's content.
  type: str
  returned: when the generation ran
  sample: The capital of France is Paris.
crashed:
  description: The O(container) stopped or restarted during the call (its start time changed).
  type: bool
  returned: always
  sample: false
elapsed:
  description: Seconds spent in this call.
  type: float
  returned: always
  sample: 60.2
log_tail:
  description: The container's last log lines.
  type: list
  elements: str
  returned: when O(container) is set
  sample: ['INFO 11-30 16:02:11 [loader.py:312] Loading weights took 412.30 seconds']
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.vllm.plugins.module_utils.node.health import each_rank, not_ready, probe
from ansible_collections.inferops.vllm.plugins.module_utils.node.node_state import parse_container_inspect


def probe_all(p):
    """One probe, or one per data-parallel rank at once; the first failure (or the last success) is the answer."""
    # a probe makes up to three requests, each bounded by the timeout
    results = each_rank(p["ranks"], lambda rank: probe(p["url"], p["served_model_name"], p["api_key"], timeout=p["timeout"],
                                                       generate=p["check_generation"], rank=rank), 3 * p["timeout"] + 1)
    results = [r if r is not None else not_ready("generation", "no answer within %ds" % (3 * p["timeout"])) for r in results]
    failed = [(rank, result) for rank, result in enumerate(results) if not result["ready"]]
    if not failed:
        return results[-1]
    rank, first = failed[0]
    if len(results) > 1:
        first["detail"] = "%d of %d ranks failed; rank %d: %s" % (len(failed), len(results), rank, first["detail"])
    return first


def container_state(module, docker, name):
    rc, out, _err = module.run_command([docker, "container", "inspect", name])
    return parse_container_inspect(out) if rc == 0 else {"exists": False, "running": False, "status": "absent"}


def main():
    module = AnsibleModule(argument_spec={
        "url": {"type": "str", "required": True},
        "served_model_name": {"type": "str"},
        "api_key": {"type": "str", "no_log": True},
        "wait": {"type": "int", "default": 60},
        "interval": {"type": "int", "default": 5},
        "check_generation": {"type": "bool", "default": True},
        "timeout": {"type": "int", "default": 30},
        "ranks": {"type": "int", "default": 1},
        "container": {"type": "str"},
        "log_lines": {"type": "int", "default": 30},
    }, supports_check_mode=True)
    p = module.params
    start = time.monotonic()
    docker = module.get_bin_path("docker") if p["container"] else None
    first = container_state(module, docker, p["container"]) if docker else None
    while True:
        result = probe_all(p)
        result["crashed"] = False
        if docker and not result["ready"]:
            now = container_state(module, docker, p["container"])
            if not now["running"] or now.get("started_at") != first.get("started_at"):
                result.update(crashed=True, detail="container %s %s (exit code %s) while vLLM was loading: %s" % (
                    p["container"], "restarted" if now["running"] else now.get("status") or "stopped",
                    now.get("exit_code"), result["detail"]))
                break
        if result["ready"] or time.monotonic() - start + p["interval"] > p["wait"]:
            break
        time.sleep(p["interval"])
    result["elapsed"] = round(time.monotonic() - start, 1)
    if p["container"]:
        if docker:
            _rc, out, err = module.run_command([docker, "logs", "--tail", str(p["log_lines"]), p["container"]])
            result["log_tail"] = (out + err).splitlines()[-p["log_lines"]:]
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()

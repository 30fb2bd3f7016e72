#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_smoke
short_description: Smoke-test a vLLM OpenAI endpoint and write a report
description:
  - Runs suites against the endpoint with the openai SDK, scrapes C(/metrics), and writes a JSON report, a Markdown
    summary and an SVG plot. Every metric's definition is stated in the report.
  - C(text) asks a question with a known answer and checks that no think markers reach the content when a reasoning
    parser is set. C(vision) sends a bundled receipt image as a base64 data URL and looks for the expected strings.
    C(long_context) hides a needle in prompts that fill fractions of C(max_model_len). C(tools) asks for a get_weather
    call per C(tool_choices) mode in the streaming and non-streaming lanes, validates every call with jsonschema,
    re-asks with the error up to C(tool_retries) times, counts the retries and classifies each failure. C(load) runs
    concurrent streaming requests for TTFT, TPOT, ITL, end-to-end latency and output tokens/s.
  - Meant to run on the controller (delegate_to localhost) with the openai and jsonschema libraries.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
requirements: [openai, jsonschema]
options:
  base_url:
    description: OpenAI base URL of the head node, ending in C(/v1).
    type: str
    required: true
  api_key:
    description: API key.
    type: str
    default: none
  model:
    description: Served model name.
    type: str
    required: true
  suites:
    description: Suites to run.
    type: list
    elements: str
    default: [text, vision, long_context, tools, load]
    choices: [text, vision, long_context, tools, load]
  report_dir:
    description: Controller directory for the report files.
    type: path
    required: true
  report_name:
    description: File stem of the report files.
    type: str
    default: smoke
  environment:
    description: The environment record (image digest, driver/CUDA, GPU model and count, interconnect, toggles).
    type: dict
    default: {}
  options:
    description:
      - Suite settings; any key left out takes its default. C(text_prompt), C(text_expect) (strings the answer must
        contain), C(reasoning_parser), C(expect_reasoning), C(image_path), C(vision_prompt), C(vision_expect),
        C(max_model_len), C(long_context_fractions), C(long_context_expect_needle), C(tool_choices), C(tool_trials),
        C(tool_retries), C(tool_max_tokens), C(load_requests), C(load_concurrency), C(load_max_tokens),
        C(load_prompt), C(max_tokens), C(timeout).
    type: dict
    default: {}
attributes:
  check_mode:
    support: none
    description: The smoke test is the action.
  diff_mode:
    support: none
    description: No managed files.
  platform:
    support: full
    platforms: posix
    description: The controller.
"""

EXAMPLES = r"""
- name: Smoke-test the head node
  inferops.vllm.vllm_smoke:
    base_url: http://10.0.0.1:8000/v1
    api_key: "{{ vllm_api_key }}"
    model: kimi-k3
    report_dir: "{{ playbook_dir }}/reports"
    options:
      max_model_len: 262144
      reasoning_parser: kimi_k3
  delegate_to: localhost
  register: smoke
"""

RETURN = r"""
passed:
  description: Every check passed.
  type: bool
  returned: always
failures:
  description: Number of failed checks.
  type: int
  returned: always
failed_checks:
  description: The failed checks (suite, name, detail).
  type: list
  elements: dict
  returned: always
metrics:
  description: Load-run figures (TTFT, TTFT-content, TPOT, ITL, E2E percentiles; output tokens/s).
  type: dict
  returned: always
tool_calls:
  description: Parser retries and failure classes.
  type: dict
  returned: always
server:
  description: From /metrics and /version (KV-cache use, cache config, request counters, vLLM version).
  type: dict
  returned: always
files:
  description: Paths of the JSON, Markdown and SVG report files.
  type: dict
  returned: always
summary:
  description: The Markdown summary.
  type: str
  returned: always
"""

import json
import urllib.request

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.inferops.vllm.plugins.module_utils.smoke import measure, prom, report, suites, tools

# measure.client builds the client; imported here only to fail with a clear message
try:
    import openai  # noqa: F401  pylint: disable=unused-import
    HAS_OPENAI = True
except ImportError:
    HAS_OPENAI = False

DEFAULTS = {
    "text_prompt": "What is the capital of France? Answer with one word.",
    "text_expect": ["Paris"],
    "reasoning_parser": None,
    "expect_reasoning": False,
    "image_path": None,
    "vision_prompt": "Read this receipt. What is the shop name and the total?",
    "vision_expect": ["INFEROPS", "42.17"],
    "max_model_len": 8192,
    "long_context_fractions": [0.25, 0.5, 0.9],
    "long_context_expect_needle": True,
    "tool_choices": ["auto", "required"],
    "tool_trials": 3,
    "tool_retries": 2,
    "tool_max_tokens": 512,
    "load_requests": 16,
    "load_concurrency": 4,
    "load_max_tokens": 64,
    "load_prompt": "Write a short paragraph about the sea.",
    "max_tokens": 256,
    "timeout": 600,
}


def fetch(url, api_key=None):
    req = urllib.request.Request(url)
    if api_key:
        req.add_header("Authorization", "Bearer " + api_key)
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=30) as resp:
        return resp.read().decode("utf-8", "replace")


def main():
    module = AnsibleModule(argument_spec={
        "base_url": {"type": "str", "required": True},
        "api_key": {"type": "str", "default": "none", "no_log": True},
        "model": {"type": "str", "required": True},
        "suites": {"type": "list", "elements": "str", "default": list(suites.SUITES),
                   "choices": list(suites.SUITES)},
        "report_dir": {"type": "path", "required": True},
        "report_name": {"type": "str", "default": "smoke"},
        "environment": {"type": "dict", "default": {}},
        "options": {"type": "dict", "default": {}},
    })
    if not HAS_OPENAI:
        module.fail_json(msg=missing_required_lib("openai"))
    if not tools.HAS_JSONSCHEMA:
        module.fail_json(msg=missing_required_lib("jsonschema"))
    p = module.params
    unknown = sorted(set(p["options"]) - set(DEFAULTS))
    if unknown:
        module.fail_json(msg="options: unknown keys %s; known: %s" % (unknown, ", ".join(sorted(DEFAULTS))))
    cfg = dict(DEFAULTS, **p["options"], base_url=p["base_url"], api_key=p["api_key"])
    client = measure.client(p["base_url"], p["api_key"], cfg["timeout"])
    results = [suites.SUITES[name](client, p["model"], cfg) for name in p["suites"]]
    root = p["base_url"].rstrip("/").rsplit("/v1", 1)[0]
    server = {}
    try:
        server = prom.summary(fetch(root + "/metrics"))
        server["vllm_version"] = json.loads(fetch(root + "/version")).get("version")
    except (OSError, ValueError) as exc:
        server["error"] = "could not read /metrics or /version: %s" % exc
    environment = dict(p["environment"], vllm_version=server.get("vllm_version"))
    full = report.build(results, environment, server)
    files = report.write(full, p["report_dir"], p["report_name"])
    module.exit_json(changed=False, passed=full["passed"], failures=full["failures"],
                     failed_checks=full["failed_checks"], metrics=full["metrics"], tool_calls=full["tool_calls"],
                     server=server, files=files, summary=report.markdown(full))


if __name__ == "__main__":
    main()

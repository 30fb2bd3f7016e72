#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_smoke
short_description: Smoke-test a vLLM OpenAI endpoint, judge it, and write a report
description:
  - Starts with one short generation under O(timeouts.probe); a server that does not generate stops the run there,
    with a message that names the cluster, the endpoint, the suite and the symptom. A transport failure later in the
    run probes again, so a hung engine never runs every suite into its timeouts.
  - Then runs the suites against the endpoint with the openai SDK, samples C(/metrics) during the load, and writes a
    JSON report, a Markdown summary and an SVG plot. Every metric's definition is stated in the report.
  - C(text) asks a question with a known answer and checks that no think markers reach the content when a reasoning
    parser is set. C(vision) sends a receipt image (the bundled one unless O(options.image_path) is set) as a base64
    data URL and looks for the expected strings. C(long_context) hides a needle in prompts that fill fractions of
    the server's max-model-len (read from C(/v1/models)).
  - C(tools) asks for get_weather calls per O(options.tool_choices) mode in the streaming and non-streaming lanes,
    O(options.tool_trials) requests per lane. Each call is validated with jsonschema and against the values its prompt
    fixed (C(wrong_arguments)). The verdict per lane is the first-attempt success rate (reported with its 95 % Wilson
    interval) against O(options.tool_first_try_min), compared as a point estimate, and the rate after re-asks against
    O(options.tool_final_min). A re-ask keeps the conversation (the original messages, the failed turn, the specific
    error with the request restated); none follows a transport error, and the whole run shares
    O(options.retry_budget) re-asks. Every failed first attempt is a warning row with its evidence.
  - C(load) runs concurrent streaming requests for TTFT, TPOT, ITL, end-to-end latency and output tokens/s; every answer
    must be real content (not empty, not one repeated token, at least O(options.load_min_output_ratio) of the tokens
    asked for under ignore_eos).
  - The task fails when the verdict fails, unless O(fail_on_verdict=false).
  - Meant to run on the controller (delegate_to localhost) with the openai and jsonschema libraries.
version_added: 1.0.0
author: inferops.vllm contributors (@inferops)
requirements: [openai, jsonschema]
options:
  base_url:
    description: OpenAI base URL of the endpoint (a cluster's head, or a router), ending in C(/v1).
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
  cluster:
    description: Cluster name, used in messages.
    type: str
    default: ""
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
  fabric_record:
    description:
      - The head's record of the cluster's last fabric check (C(fabric.json) as the C(inferops.vllm.fabric_check) role writes
        it, with C(summary), C(checked_at), C(passed), C(image) and C(nodes)), for a run that did not check the fabric
        (no C(fabric_check) in O(environment)). The report's fabric line then names that check's time and what no
        longer holds (a failed check, another image digest, other O(cluster_nodes)); without a record it says
        C(not run).
    type: dict
    default: {}
  cluster_nodes:
    description: The cluster's nodes now, to judge O(fabric_record) against.
    type: list
    elements: str
    default: []
  kv_transfer:
    description:
      - For a P/D deployment behind the router at O(base_url) - the base URLs of its prefill and decode clusters. Their
        C(/metrics) are read before and after the suites, and the suite C(kv_transfer) fails the verdict when the
        decode side computed the prompts itself (no prompt tokens from C(external_kv_transfer)), when a side got no
        request or when a KV transfer failed. It also records the prefill side's TTFT and the decode side's TPOT.
    type: dict
    default: {}
    suboptions:
      prefill:
        description: Base URLs of the prefill clusters (C(http://host:port)).
        type: list
        elements: str
        default: []
      decode:
        description: Base URLs of the decode clusters.
        type: list
        elements: str
        default: []
  fail_on_verdict:
    description: Fail the task when the verdict fails (the report is written either way).
    type: bool
    default: true
  timeouts:
    description: Time limits in seconds. A request never outlives its suite's or the run's deadline.
    type: dict
    default: {}
    suboptions:
      connect:
        description: TCP connect limit per request.
        type: float
        default: 10
      first_byte:
        description: Wait for the first byte of a streamed answer, and for every later gap.
        type: float
        default: 120
      request:
        description: Total time of one request (a non-streamed answer arrives whole, so this is its first byte too).
        type: float
        default: 300
      probe:
        description: The short generation that opens the run and follows a transport failure.
        type: float
        default: 60
      suite:
        description: Deadline of each suite.
        type: float
        default: 600
      run:
        description: Deadline of the whole run.
        type: float
        default: 1800
  options:
    description: Suite settings; any key left out takes its default.
    type: dict
    default: {}
    suboptions:
      text_prompt:
        description: Text canary question.
        type: str
        default: What is the capital of France? Answer with one word.
      text_expect:
        description: Strings the canary answer must contain.
        type: list
        elements: str
        default: [Paris]
      reasoning_parser:
        description: The server's reasoning parser, if any (enables the reasoning-separation checks).
        type: str
      expect_reasoning:
        description: Require reasoning to come back separated.
        type: bool
        default: false
      image_path:
        description: PNG for the vision suite; unset uses the bundled receipt.
        type: path
      vision_prompt:
        description: Question about the image.
        type: str
        default: Read this receipt. What is the shop name and the total?
      vision_expect:
        description: Strings the vision answer must contain.
        type: list
        elements: str
        default: [INFEROPS, "42.17"]
      max_model_len:
        description: Used only when the server does not report max_model_len in C(/v1/models).
        type: int
      long_context_fractions:
        description: Where the long prompts end, as fractions of max-model-len.
        type: list
        elements: float
        default: [0.25, 0.5, 0.9]
      long_context_expect_needle:
        description: Require the needle in the answer (false checks only that the long prompt was served).
        type: bool
        default: true
      tool_choices:
        description: tool_choice modes; each runs a streaming and a non-streaming lane.
        type: list
        elements: str
        choices: [auto, required]
        default: [auto, required]
      tool_trials:
        description: Requests per lane (see docs/smoke-verdict.md for why 20).
        type: int
        default: 20
      tool_retries:
        description: Re-asks after a failed request, at most.
        type: int
        default: 1
      retry_budget:
        description: Re-asks for the whole run.
        type: int
        default: 16
      tool_concurrency:
        description: Requests of a lane in flight at once.
        type: int
        default: 8
      tool_temperature:
        description: Sampling temperature of the tool requests; unset leaves the server's default (the model's).
        type: float
      tool_cases:
        description: Prompts and the argument values they fix; requests cycle through them. Empty uses the built-in
          cases (Paris, Tokyo in celsius, Boston in fahrenheit, Nairobi).
        type: list
        elements: dict
        default: []
        suboptions:
          prompt:
            description: The user message.
            type: str
            required: true
          expect:
            description: Argument values the call must carry (strings match case-insensitively as substrings).
            type: dict
            default: {}
      tool_first_try_min:
        description: Minimum first-attempt success rate per lane (the point estimate).
        type: float
        default: 0.95
      tool_final_min:
        description: Minimum success rate per lane after re-asks.
        type: float
        default: 1.0
      tool_max_tokens:
        description: Output token budget of a tool request.
        type: int
        default: 512
      load_requests:
        description: Requests in the load run.
        type: int
        default: 16
      load_concurrency:
        description: Requests in flight during the load run.
        type: int
        default: 4
      load_max_tokens:
        description: Output tokens per load request (ignore_eos keeps the length fixed).
        type: int
        default: 64
      load_min_output_ratio:
        description: A load answer with fewer than this share of O(options.load_max_tokens) fails.
        type: float
        default: 0.9
      load_prompt:
        description: Prompt of the load requests.
        type: str
        default: Write a short paragraph about the sea.
      metrics_interval:
        description: Seconds between C(/metrics) samples during the load.
        type: float
        default: 0.5
      max_tokens:
        description: Output token budget of the text, vision and long-context requests.
        type: int
        default: 256
extends_documentation_fragment:
  - inferops.vllm.attributes
  - inferops.vllm.attributes.no_check_mode
  - inferops.vllm.attributes.posix
attributes:
  platform:
    details: The controller.
"""

EXAMPLES = r"""
- name: Smoke-test the head node
  inferops.vllm.vllm_smoke:
    base_url: http://10.0.0.1:8000/v1
    api_key: "{{ vllm_api_key }}"
    model: kimi-k3
    cluster: k3-dep16
    report_dir: "{{ playbook_dir }}/reports"
    timeouts:
      probe: 60
    options:
      reasoning_parser: kimi_k3
      expect_reasoning: true
      tool_choices: [auto]
  delegate_to: localhost
  register: smoke
"""

RETURN = r"""
passed:
  description: The verdict passed (no check failed; warnings allowed).
  type: bool
  returned: always
  sample: false
verdict:
  description: PASSED, PASSED with warnings, or FAILED.
  type: str
  returned: always
  sample: PASSED with warnings
stopped:
  description: Why the run stopped early (the engine did not generate), or null.
  type: str
  returned: always
  sample: "smoke run on cluster lab stopped in suite probe: http://127.0.0.1:8000: /health 200 but no generation
    within 60 s: an engine or a follower is down"
failures:
  description: Number of failed checks.
  type: int
  returned: always
  sample: 1
warning_rows:
  description: Number of warning rows (tool-call failures recovered or within the thresholds).
  type: int
  returned: always
  sample: 2
failed_checks:
  description: The failed checks (suite, name, detail, evidence).
  type: list
  elements: dict
  returned: always
  sample: [{suite: tools, name: auto stream first-try rate, passed: false, level: fail,
            detail: "14/20 = 70.0% (95% CI 48.1%-85.5%), minimum 95%; first-attempt failures: empty_tool_calls 6"}]
metrics:
  description: Load-run figures (TTFT, TTFT-chunk, TTFT-content, TPOT, ITL, E2E percentiles; output tokens/s;
    failures by class).
  type: dict
  returned: always
  sample: {requests: 16, failed: 0, output_tokens_per_s: 812.4, ttft_s: {mean: 0.21, p50: 0.2, p90: 0.3, p99: 0.31}}
tool_calls:
  description: Per lane, requests, first-attempt successes, rate and 95 % Wilson interval, first-attempt failure
    classes (unit requests), re-asks and recoveries, rate after re-asks; and the run's re-ask budget.
  type: dict
  returned: always
  sample: {lanes: [{lane: auto stream, requests: 20, first_ok: 19, first_rate: 0.95, first_ci95: [0.764, 0.991],
           first_failure_classes: {call_in_reasoning: 1}, reasks: 1, recovered: 1, final_rate: 1.0}],
           retry_budget: {size: 16, used: 1, refused: 0}}
cache:
  description: KV-cache facts (block size, dtype, capacity in tokens, max concurrency at max-model-len).
  type: dict
  returned: always
  sample: {block_size: 16, kv_cache_dtype: auto, kv_capacity_tokens: 1048576, max_concurrency: 4.0, max_model_len: 262144}
server_during_load:
  description: KV-cache use and running/waiting requests sampled from /metrics during the load (peak and mean).
  type: dict
  returned: always
  sample: {samples: 12, kv_cache_usage_perc: {peak: 0.31, mean: 0.18}, running: {peak: 4, mean: 3.2}}
server:
  description: From /metrics and /version after the run (request counters, vLLM version).
  type: dict
  returned: always
  sample: {vllm_version: 0.32.0, preemptions: 0}
files:
  description: Paths of the JSON, Markdown and SVG report files.
  type: dict
  returned: always
  sample: {json: /srv/reports/k3/smoke.json, md: /srv/reports/k3/smoke.md, svg: /srv/reports/k3/smoke.svg}
summary:
  description: The Markdown summary.
  type: str
  returned: always
  sample: "# vLLM smoke report ..."
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import report, run, suites, tools
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke.config import OPTIONS, TIMEOUTS

# measure.client builds the client; imported here only to fail with a clear message
try:
    import openai  # noqa: F401  pylint: disable=unused-import
    HAS_OPENAI = True
except ImportError:
    HAS_OPENAI = False

ARGUMENT_SPEC = {
    "base_url": {"type": "str", "required": True},
    "api_key": {"type": "str", "default": "none", "no_log": True},
    "model": {"type": "str", "required": True},
    "cluster": {"type": "str", "default": ""},
    "suites": {"type": "list", "elements": "str", "default": list(suites.SUITES), "choices": list(suites.SUITES)},
    "report_dir": {"type": "path", "required": True},
    "report_name": {"type": "str", "default": "smoke"},
    "environment": {"type": "dict", "default": {}},
    "fabric_record": {"type": "dict", "default": {}},
    "cluster_nodes": {"type": "list", "elements": "str", "default": []},
    "kv_transfer": {"type": "dict", "default": {}, "options": {
        "prefill": {"type": "list", "elements": "str", "default": []},
        "decode": {"type": "list", "elements": "str", "default": []}}},
    "fail_on_verdict": {"type": "bool", "default": True},
    "timeouts": {"type": "dict", "default": {}, "options": {k: {"type": "float", "default": v} for k, v in TIMEOUTS.items()}},
    "options": {"type": "dict", "default": {}, "options": OPTIONS},
}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC)
    if not HAS_OPENAI:
        module.fail_json(msg=missing_required_lib("openai"))
    if not tools.HAS_JSONSCHEMA:
        module.fail_json(msg=missing_required_lib("jsonschema"))
    p = module.params
    env = p["environment"]
    if "fabric_check" in env or p["fabric_record"]:   # a caller that reports no fabric gets no fabric line
        env["fabric_check"] = report.fabric_line(env.get("fabric_check") or "", p["fabric_record"],
                                                 env.get("image") or "", p["cluster_nodes"])
    full = run.execute(p)
    files = report.write(full, p["report_dir"], p["report_name"])
    result = {"changed": False, "passed": full["passed"], "verdict": full["verdict"], "stopped": full["stopped"],
              "failures": full["failures"], "warning_rows": full["warning_rows"], "failed_checks": full["failed_checks"],
              "metrics": full["metrics"], "tool_calls": full["tool_calls"], "cache": full["cache"],
              "server_during_load": full["server_during_load"], "server": full["server"], "files": files,
              "summary": report.markdown(full)}
    if not full["passed"] and p["fail_on_verdict"]:
        module.fail_json(msg=run.failure_message(full, p["cluster"], files["md"]), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()

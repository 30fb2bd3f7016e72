# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tool-call checks: validate every call against its JSON schema and classify
what went wrong, in the failure taxonomy of serving-peers.md section 3."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

try:
    import jsonschema
    HAS_JSONSCHEMA = True
except ImportError:  # the module reports the missing library
    HAS_JSONSCHEMA = False

# Markers of Kimi K2/K2.5 (tool sections, think), K3 (XTML channels) and generic think tags.
MARKERS = ("<|tool_call", "<|tool_calls_section", "<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>",
           "<think>", "</think>", "\u25c1think\u25b7", "\u25c1/think\u25b7", "<|im_end|>", "<|im_middle|>")

FAILURES = {
    "transport_error": "the request failed (HTTP error, timeout, connection)",
    "truncated": "finish_reason=length before the call was complete",
    "call_in_reasoning": "no tool_calls, but a tool-call section sits in the reasoning (think close skipped, vllm#53246)",
    "empty_tool_calls": "finish_reason=tool_calls with an empty tool_calls list",
    "missing_call": "no tool call where one was required",
    "marker_leak": "parser markers leaked into content or reasoning",
    "undeclared_tool": "a call to a tool that the request did not declare",
    "invalid_json": "arguments are not valid JSON",
    "schema_violation": "arguments do not match the tool's JSON schema",
}


def leaked(text: Optional[str]) -> List[str]:
    return [m for m in MARKERS if text and m in text]


def classify(result: Dict[str, Any], tools: List[dict], expect_call: bool = True) -> Optional[Dict[str, str]]:
    """None when the reply is a valid call (or validly no call); else the first failure class and its detail."""
    if result.get("error"):
        return {"class": "transport_error", "detail": str(result["error"])[:300]}
    calls = result.get("tool_calls") or []
    leaks = leaked(result.get("content"))
    if leaks:
        return {"class": "marker_leak", "detail": "content contains %s" % ", ".join(leaks)}
    if not calls:
        if result.get("finish_reason") == "length":
            return {"class": "truncated", "detail": "finish_reason=length"}
        if any(m in (result.get("reasoning") or "") for m in ("<|open|>tools", "<|tool_calls_section_begin|>", "<|tool_call_begin|>")):
            return {"class": "call_in_reasoning", "detail": "the call was left in the reasoning"}
        if result.get("finish_reason") == "tool_calls":
            return {"class": "empty_tool_calls", "detail": "finish_reason=tool_calls, tool_calls=[]"}
        if expect_call:
            return {"class": "missing_call", "detail": "no call; content=%r" % (result.get("content") or "")[:120]}
        return None
    schemas = {t["function"]["name"]: t["function"].get("parameters", {}) for t in tools}
    for call in calls:
        if call["name"] not in schemas:
            return {"class": "undeclared_tool", "detail": "called %r; declared %s" % (call["name"], sorted(schemas))}
        try:
            args = json.loads(call["arguments"] or "")
        except ValueError as exc:
            return {"class": "invalid_json", "detail": "%s: %r" % (exc, (call["arguments"] or "")[:120])}
        try:
            jsonschema.validate(instance=args, schema=schemas[call["name"]])
        except jsonschema.ValidationError as exc:
            return {"class": "schema_violation", "detail": exc.message[:300]}
    reasoning_leaks = [m for m in leaked(result.get("reasoning")) if m not in ("<think>", "</think>")]
    if reasoning_leaks:
        return {"class": "marker_leak", "detail": "reasoning contains %s" % ", ".join(reasoning_leaks)}
    return None


def reask(failure: Dict[str, str], tool_name: str) -> str:
    """The feedback appended before a retry (instructor-style re-ask)."""
    return ("Your previous reply was not a valid tool call (%s: %s). Call the %s tool now, with arguments "
            "that match its JSON schema exactly." % (failure["class"], failure["detail"], tool_name))

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tool-call checks: validate every call against its JSON schema and the values
the prompt fixed, classify what went wrong (the failure taxonomy of
serving-peers.md section 3) with the evidence, and build the re-ask turns."""

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
# A tool-call section left in the reasoning (K3 XTML, K2 sections).
CALL_IN_REASONING = ("<|open|>tools", "<|tool_calls_section_begin|>", "<|tool_call_begin|>")

FAILURES = {
    "transport_error": "the request failed (HTTP error, timeout, connection, partial stream, deadline)",
    "truncated": "finish_reason=length before the call was complete",
    "call_in_reasoning": "no tool_calls, but a tool-call section sits in the reasoning (think close skipped, vllm#53246)",
    "empty_tool_calls": "finish_reason=tool_calls with an empty tool_calls list",
    "missing_call": "no tool call where one was required",
    "marker_leak": "parser markers leaked into content or reasoning",
    "undeclared_tool": "a call to a tool that the request did not declare",
    "invalid_json": "arguments are not valid JSON",
    "schema_violation": "arguments do not match the tool's JSON schema",
    "wrong_arguments": "valid arguments, but not the values the prompt fixed (city, unit, number)",
}
# Failures a re-ask cannot mend: the request never got an answer.
NOT_REASKED = ("transport_error",)
EXCERPT = 240


def excerpt(text: Optional[str], limit: int = EXCERPT) -> Optional[str]:
    if text is None:
        return None
    return text if len(text) <= limit else text[:limit] + "..."


def leaked(text: Optional[str]) -> List[str]:
    return [m for m in MARKERS if text and m in text]


def _failure(cls: str, detail: str, result: Dict[str, Any], **evidence) -> Dict[str, Any]:
    """A failure with what shows it: the detail plus excerpts of what came back."""
    out = {"class": cls, "detail": detail, "content": excerpt(result.get("content")),
           "reasoning": excerpt(result.get("reasoning")), "finish_reason": result.get("finish_reason")}
    out.update({k: v for k, v in evidence.items() if v is not None})
    return out


def wrong_values(args: Dict[str, Any], expect: Dict[str, Any]) -> List[str]:
    """Which fixed values the arguments miss. Strings match case-insensitively and may
    carry more (\"Paris, FR\" for Paris); anything else must be equal."""
    problems = []
    for key, want in expect.items():
        if key not in args:
            problems.append("%s missing (expected %r)" % (key, want))
            continue
        got = args[key]
        if isinstance(want, str):
            ok = isinstance(got, str) and want.strip().lower() in got.strip().lower()
        else:
            ok = got == want and type(got) is type(want)
        if not ok:
            problems.append("%s=%r, expected %r" % (key, got, want))
    return problems


def classify(result: Dict[str, Any], tools: List[dict], expect_call: bool = True,
             expect: Optional[Dict[str, Any]] = None) -> Optional[Dict[str, Any]]:
    """None when the reply is a valid call with the expected values (or validly no call);
    else the first failure class, its detail and the evidence."""
    if result.get("error"):
        return _failure("transport_error", str(result["error"])[:300], result, error_class=result.get("error_class"))
    calls = result.get("tool_calls") or []
    leaks = leaked(result.get("content"))
    if leaks:
        return _failure("marker_leak", "content contains %s" % ", ".join(leaks), result, markers=leaks)
    if not calls:
        reasoning = result.get("reasoning") or ""
        if result.get("finish_reason") == "length":
            return _failure("truncated", "finish_reason=length after %s output tokens" % result.get("output_tokens"),
                            result)
        trapped = [m for m in CALL_IN_REASONING if m in reasoning]
        if trapped:
            return _failure("call_in_reasoning", "no tool_calls; the call was left in the reasoning", result,
                            markers=trapped)
        if result.get("finish_reason") == "tool_calls":
            return _failure("empty_tool_calls", "finish_reason=tool_calls, tool_calls=[]", result)
        if expect_call:
            return _failure("missing_call", "no tool call (finish_reason=%s)" % result.get("finish_reason"), result)
        return None
    schemas = {t["function"]["name"]: t["function"].get("parameters", {}) for t in tools}
    for call in calls:
        raw = call.get("arguments") or ""
        if call["name"] not in schemas:
            return _failure("undeclared_tool", "called %r; declared %s" % (call["name"], sorted(schemas)), result,
                            arguments=excerpt(raw))
        try:
            args = json.loads(raw)
        except ValueError as exc:
            return _failure("invalid_json", "%s" % getattr(exc, "msg", exc), result, arguments=excerpt(raw),
                            json_error={"message": getattr(exc, "msg", str(exc)), "position": getattr(exc, "pos", None)})
        try:
            jsonschema.validate(instance=args, schema=schemas[call["name"]])
        except jsonschema.ValidationError as exc:
            return _failure("schema_violation", exc.message[:300], result, arguments=excerpt(raw),
                            schema_path="/".join(str(p) for p in exc.absolute_schema_path),
                            instance_path="/".join(str(p) for p in exc.absolute_path))
        problems = wrong_values(args, expect or {}) if isinstance(args, dict) else []
        if problems:
            return _failure("wrong_arguments", "; ".join(problems), result, arguments=excerpt(raw))
    reasoning_leaks = [m for m in leaked(result.get("reasoning")) if m not in ("<think>", "</think>")]
    if reasoning_leaks:
        return _failure("marker_leak", "reasoning contains %s" % ", ".join(reasoning_leaks), result,
                        markers=reasoning_leaks)
    return None


def defang(text: str) -> str:
    """Marker text without its special-token spelling: a tokenizer would read `<|open|>`
    in a user turn as the real marker and break the prompt's channels."""
    return text.replace("<|", "<").replace("|>", ">")


def feedback(failure: Dict[str, Any], tool_name: str, request: str) -> str:
    """The specific error, and the request restated (instructor-style re-ask)."""
    return ("Your previous reply was not a valid call of the %s tool (%s: %s). Answer the request again with one "
            "%s call whose arguments match its JSON schema. The request was: %s"
            % (tool_name, failure["class"], defang(failure["detail"]), tool_name, request))


def reask_turns(result: Dict[str, Any], failure: Dict[str, Any], tool_name: str, request: str) -> List[dict]:
    """What follows the original messages on a re-ask: the assistant's failed turn as it
    came back (content, reasoning, calls), then the error. A failed turn with calls gets
    the error as each call's tool result (the protocol wants one per call); one without
    gets it as a user turn."""
    turn: Dict[str, Any] = {"role": "assistant", "content": result.get("content") or ""}
    if result.get("reasoning"):
        turn["reasoning"] = result["reasoning"]
    calls = result.get("tool_calls") or []
    text = feedback(failure, tool_name, request)
    if not calls:
        return [turn, {"role": "user", "content": text}]
    ids = [c.get("id") or "call_%d" % i for i, c in enumerate(calls)]
    turn["tool_calls"] = [{"id": i, "type": "function", "function": {"name": c["name"], "arguments": c.get("arguments") or ""}}
                          for i, c in zip(ids, calls)]
    return [turn] + [{"role": "tool", "tool_call_id": i, "content": text} for i in ids]

# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One chat completion, timed the way `vllm bench serve` times it, plus the
reasoning-aware split GuideLLM and AIPerf add.

Definitions (stated in every report):
- Request sent: the moment the HTTP request goes out (an httpx request hook on
  the client from `client()`), so the SDK's own request building is not counted.
- TTFT: request sent -> first chunk carrying content, reasoning or a tool call
  (role-only and empty chunks do not count); TTFT-content: -> first content.
- E2E: request sent -> last chunk carrying output (the trailing usage chunk excluded).
- ITL: gaps between consecutive output-carrying chunks.
- TPOT: (E2E - TTFT) / (output tokens - 1), output tokens from the server's usage.
- Output tokens/s: output tokens / E2E; aggregate: sum of output tokens / wall time.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional

# Per thread: when this thread's last request went out (set by the httpx hook).
_sent = threading.local()


def _stamp_send(_request) -> None:
    """httpx request hook: runs in the calling thread right before the request is written."""
    _sent.at = time.perf_counter()


def client(base_url: str, api_key: str, timeout: float, max_retries: int = 0):
    """An OpenAI client whose requests stamp their send time for chat()."""
    import openai

    # the SDK's own HTTP client class (httpx or httpx2, by SDK version), with the hook added
    http = openai.DefaultHttpxClient(timeout=timeout, event_hooks={"request": [_stamp_send]})
    return openai.OpenAI(base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=max_retries,
                         http_client=http)


def _send_time(fallback: float) -> float:
    """When the request of this thread went out; the call's start for a client without the hook."""
    at = getattr(_sent, "at", None)
    return at if at is not None and at >= fallback else fallback


def _reasoning(obj: Any) -> Optional[str]:
    return getattr(obj, "reasoning", None) or getattr(obj, "reasoning_content", None)


def _calls(tool_calls) -> List[Dict[str, Any]]:
    return [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in tool_calls or []]


def chat(client, model: str, messages: List[dict], max_tokens: int, stream: bool = True, **extra) -> Dict[str, Any]:
    """Run one chat completion; returns timings, text, tool calls, usage and finish reason."""
    start = time.perf_counter()
    out: Dict[str, Any] = {"stream": stream, "ttft": None, "ttft_chunk": None, "ttft_content": None, "e2e": None,
                           "itl": [],
                           "content": None, "reasoning": None, "tool_calls": [], "finish_reason": None,
                           "prompt_tokens": None, "output_tokens": None, "tpot": None}
    if not stream:
        resp = client.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens, **extra)
        out["e2e"] = time.perf_counter() - _send_time(start)
        choice = resp.choices[0]
        out.update(content=choice.message.content, reasoning=_reasoning(choice.message),
                   tool_calls=_calls(choice.message.tool_calls), finish_reason=choice.finish_reason)
        if resp.usage:
            out.update(prompt_tokens=resp.usage.prompt_tokens, output_tokens=resp.usage.completion_tokens)
        return out
    content: List[str] = []
    reasoning: List[str] = []
    calls: Dict[int, Dict[str, Any]] = {}
    last = previous = None
    chunks = client.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens, stream=True,
                                            stream_options={"include_usage": True}, **extra)
    start = _send_time(start)
    for chunk in chunks:
        now = time.perf_counter()
        if chunk.usage:
            out.update(prompt_tokens=chunk.usage.prompt_tokens, output_tokens=chunk.usage.completion_tokens)
        if not chunk.choices:
            continue
        if out["ttft_chunk"] is None:
            out["ttft_chunk"] = now - start
        choice = chunk.choices[0]
        delta = choice.delta
        if choice.finish_reason:
            out["finish_reason"] = choice.finish_reason
            # the last token may decode to no text (a skipped special token): the
            # generation ends with this chunk, not with the last visible text
            last = now
        text, thought = delta.content, _reasoning(delta)
        if text:
            content.append(text)
            if out["ttft_content"] is None:
                out["ttft_content"] = now - start
        if thought:
            reasoning.append(thought)
        for call in delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
            entry["id"] = call.id or entry["id"]
            if call.function is not None:
                entry["name"] = call.function.name or entry["name"]
                entry["arguments"] += call.function.arguments or ""
        if text or thought or delta.tool_calls:
            if out["ttft"] is None:
                out["ttft"] = now - start
            else:
                out["itl"].append(now - previous)
            previous = last = now
    out["e2e"] = (last - start) if last is not None else time.perf_counter() - start
    out["content"] = "".join(content) if content else None
    out["reasoning"] = "".join(reasoning) if reasoning else None
    out["tool_calls"] = [calls[i] for i in sorted(calls)]
    n = out["output_tokens"]
    if out["ttft"] is not None and n and n > 1:
        out["tpot"] = (out["e2e"] - out["ttft"]) / (n - 1)
    return out


def percentiles(values: List[float], points=(50, 90, 99)) -> Dict[str, Optional[float]]:
    data = sorted(v for v in values if v is not None)
    if not data:
        return {"mean": None, **{"p%d" % p: None for p in points}}
    result = {"mean": sum(data) / len(data)}
    for p in points:
        k = (len(data) - 1) * p / 100.0
        lo, hi = int(k), min(int(k) + 1, len(data) - 1)
        result["p%d" % p] = data[lo] + (data[hi] - data[lo]) * (k - lo)
    return result

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
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

# Per thread: when this thread's last request went out (set by the httpx hook).
_sent = threading.local()


def _stamp_send(_request) -> None:
    """httpx request hook: runs in the calling thread right before the request is written."""
    _sent.at = time.perf_counter()


class DeadlineExceeded(Exception):
    """The request's own total time, or its suite's or run's deadline, ran out."""


@dataclass
class Limits:
    """How long one request may take. `deadline` is the monotonic time at which the
    suite or the run must stop; a request never outlives it."""

    connect: float = 10.0
    first_byte: float = 60.0
    total: float = 300.0
    deadline: Optional[float] = None

    def remaining(self) -> float:
        left = self.total
        if self.deadline is not None:
            left = min(left, self.deadline - time.monotonic())
        return left

    def until(self, deadline: Optional[float]) -> "Limits":
        """The same limits, bounded by an earlier deadline too."""
        if deadline is None or (self.deadline is not None and self.deadline <= deadline):
            return self
        return Limits(self.connect, self.first_byte, self.total, deadline)


def error_class(exc: BaseException) -> str:
    """The transport failure class of an exception from the SDK or from chat()."""
    import openai

    if isinstance(exc, DeadlineExceeded):
        return "deadline"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIStatusError):
        return "http_%d" % exc.status_code
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, PartialStream):
        return "partial_stream"
    return "client_error"


class PartialStream(Exception):
    """The stream ended without a finish_reason; `partial` holds what arrived."""

    def __init__(self, message: str, partial: Dict[str, Any]):
        super().__init__(message)
        self.partial = partial


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


def _timeout(limits: Optional[Limits], stream: bool):
    """Connect and read timeouts for one request. Streaming: the read timeout is the
    first-byte limit (and bounds every later gap); non-streaming: the whole answer is
    the first byte, so it is the total."""
    if limits is None:
        return None
    import openai

    left = limits.remaining()
    if left <= 0:
        raise DeadlineExceeded("no time left before the deadline")
    read = min(limits.first_byte if stream else limits.total, left)
    return openai.Timeout(read, connect=min(limits.connect, left), write=min(limits.connect, left), pool=left)


def chat(client, model: str, messages: List[dict], max_tokens: int, stream: bool = True,
         limits: Optional[Limits] = None, **extra) -> Dict[str, Any]:
    """Run one chat completion; returns timings, text, tool calls, usage and finish reason.
    Raises DeadlineExceeded past `limits`' total or deadline, PartialStream when a
    stream ends without a finish_reason, and the SDK's errors."""
    timeout = _timeout(limits, stream)
    if timeout is not None:
        extra["timeout"] = timeout
    stop_at = time.monotonic() + limits.remaining() if limits is not None else None
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
        if stop_at is not None and time.monotonic() > stop_at:
            chunks.close()
            raise DeadlineExceeded("the stream was still going after %.0f s" % (now - start))
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
    if out["finish_reason"] is None:
        raise PartialStream("the stream ended without a finish_reason after %d content characters"
                            % len(out["content"] or ""), out)
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

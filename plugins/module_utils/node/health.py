# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a vLLM endpoint serving? /health, /v1/models, then one short greedy
generation whose content must be real text. Stdlib only and no imports from the
collection: the watchdog deploys this file next to watchdog.py on every node."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

T = TypeVar("T")

PROMPT = "List the numbers from one to eight, separated by commas."
# The endpoint is the node's own or the cluster's: never through an HTTP proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def request(url: str, api_key: Optional[str], body: Optional[dict], timeout: float,
            limit: Optional[int] = 300, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Any]:
    """(status, body): JSON decoded, else text cut to `limit` characters (None: all of it). An HTTP error
    status is an answer; no answer at all raises (URLError, a timeout). Also the lab tests' one request helper
    (tests/lab/lab_nodes.py, prometheus_targets.py)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    req.add_header("Content-Type", "application/json")
    if api_key:
        req.add_header("Authorization", "Bearer " + api_key)
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            raw = resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")[:limit]
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode("utf-8", "replace")[:limit]


_request = request   # the name it had while private


def chat(base_url: str, model: str, api_key: Optional[str], timeout: float, max_tokens: int = 16,
         prompt: str = PROMPT, rank: Optional[int] = None) -> Tuple[int, Any]:
    """One short greedy chat completion; with `rank`, on that data-parallel rank (vLLM's
    X-data-parallel-rank header), so that a lost rank shows instead of hiding behind the others."""
    return request(base_url.rstrip("/") + "/v1/chat/completions", api_key, {
        "model": model, "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens, "temperature": 0}, timeout,
        headers={"X-data-parallel-rank": str(rank)} if rank is not None else None)


def answer(body: Any) -> Optional[str]:
    """The text a chat completion generated: its content, else its reasoning ("" when it has
    neither); None when the body is not a chat completion."""
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None
    return message.get("content") or message.get("reasoning_content") or message.get("reasoning") or ""


def metric(base_url: str, name: str, timeout: float) -> Optional[float]:
    """One unlabelled sample from the endpoint's /metrics (no key needed), or None."""
    status, body = request(base_url.rstrip("/") + "/metrics", None, None, timeout, limit=None)
    if status != 200 or not isinstance(body, str):
        return None
    for line in body.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == name:
            try:
                return float(parts[1])
            except ValueError:
                return None
    return None


def degenerate(text: str) -> Optional[str]:
    """Why a generation is not real text: empty, or one token repeated."""
    words = text.split()
    if not words:
        return "the generation is empty"
    if len(words) >= 3 and len(set(words)) == 1:
        return "the generation repeats one token (%r)" % words[0]
    if len(text) >= 8 and len(set(text.replace(" ", ""))) == 1:
        return "the generation repeats one character (%r)" % text.strip()[0]
    return None


def each_rank(ranks: int, call: Callable[[Optional[int]], T], deadline: float) -> List[Optional[T]]:
    """call(rank) for every data-parallel rank at once, call(None) (no rank header) for a single
    one. None where a call had not returned within `deadline` seconds: a rank that hangs shows
    as a missing answer instead of holding up the verdict."""
    results: List[Optional[T]] = [None] * max(1, ranks)

    def one(i: int) -> None:
        results[i] = call(i if len(results) > 1 else None)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(results))]
    for thread in threads:
        thread.start()
    end = time.monotonic() + deadline
    for thread in threads:
        thread.join(max(0.0, end - time.monotonic()))
    return list(results)


def not_ready(stage: str = "health", detail: str = "") -> Dict[str, Any]:
    """The shape of a probe's answer, not ready at `stage`: probe starts from it, and a caller
    stands it in for a rank that gave no answer."""
    return {"ready": False, "stage": stage, "detail": detail, "models": [], "content": None, "max_model_len": None}


def probe(base_url: str, served_model_name: Optional[str], api_key: Optional[str] = None, timeout: float = 30,
          generate: bool = True, rank: Optional[int] = None) -> Dict[str, Any]:
    """One pass over the three checks; `stage` names the first that failed (or 'ready'). Without a model name only
    /health is asked (a server that has nothing else: the weight-cache daemon)."""
    base = base_url.rstrip("/")
    out = not_ready()
    try:
        status, _body = request(base + "/health", None, None, timeout)
        if status != 200:
            out["detail"] = "/health answered %d" % status
            return out
        if served_model_name is None:
            out.update(ready=True, stage="ready", detail="/health answered 200")
            return out
        out["stage"] = "models"
        status, body = request(base + "/v1/models", api_key, None, timeout)
        if status != 200 or not isinstance(body, dict):
            out["detail"] = "/v1/models answered %s: %s" % (status, body)
            return out
        out["models"] = [m.get("id") for m in body.get("data", [])]
        out["max_model_len"] = next((m.get("max_model_len") for m in body.get("data", [])
                                     if m.get("id") == served_model_name), None)
        if served_model_name not in out["models"]:
            out["detail"] = "/v1/models lists %s, not %s" % (out["models"], served_model_name)
            return out
        if generate:
            out["stage"] = "generation"
            status, body = chat(base, served_model_name, api_key, timeout, rank=rank)
            text = answer(body) if status == 200 else None
            if text is None:
                out["detail"] = "chat completion answered %s: %s" % (status, body)
                return out
            out["content"] = body["choices"][0]["message"].get("content") or ""
            problem = degenerate(text)
            if problem:
                out["detail"] = problem
                return out
        out.update(ready=True, stage="ready", detail="serving %s" % served_model_name)
    except (urllib.error.URLError, socket.timeout, ConnectionError, OSError) as exc:
        out["detail"] = "%s: %s" % (out["stage"], getattr(exc, "reason", exc))
    return out

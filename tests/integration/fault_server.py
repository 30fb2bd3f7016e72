"""A small OpenAI-compatible server that shows the faults a real vLLM cannot be
made to show on demand: malformed tool calls, /health 200 with a dead engine,
garbage tokens, markers leaking into streamed content. The fault is picked by
the `fault:<name>` word in the last user message (or FAULT for every request)."""
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "fault-model"
CALLS = {
    "invalid_json": ("get_weather", '{"city": "Paris"'),
    "schema_violation": ("get_weather", '{"city": 42}'),
    "undeclared_tool": ("launch_rockets", '{"count": 3}'),
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fault_default = None

    def _json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self._json(200, {})   # even when the engine is "dead"
        if self.path == "/v1/models":
            return self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        if self.path == "/metrics":
            body = b'vllm:kv_cache_usage_perc{engine="0",model_name="fault-model"} 0.25\n'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        if self.path == "/version":
            return self._json(200, {"version": "fault-server"})
        return self._json(404, {})

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        last = req["messages"][-1]["content"]
        text = last if isinstance(last, str) else " ".join(p.get("text", "") for p in last)
        m = re.search(r"fault:(\w+)", " ".join(str(x.get("content")) for x in req["messages"]))
        fault = m.group(1) if m else self.fault_default
        if fault == "dead_engine":
            return self._json(500, {"error": {"message": "EngineCore encountered an issue", "type": "EngineDeadError"}})
        content, calls, finish = "Paris is the answer.", [], "stop"
        if fault in CALLS:
            name, args = CALLS[fault]
            calls = [{"id": "call_" + uuid.uuid4().hex[:8], "type": "function", "function": {"name": name, "arguments": args}}]
            content, finish = None, "tool_calls"
        elif fault == "empty_tool_calls":
            content, finish = None, "tool_calls"
        elif fault == "garbage":
            content = "!!!!!!!!!!!!!!!!"
        elif fault == "marker_leak":
            content = "Paris is the answer.<|close|>message<|sep|>"
        elif req.get("tools") and "weather" in text:
            calls = [{"id": "call_ok", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]
            content, finish = None, "tool_calls"
        usage = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
        if not req.get("stream"):
            return self._json(200, {"id": "x", "object": "chat.completion", "created": int(time.time()), "model": MODEL,
                                    "usage": usage, "choices": [{"index": 0, "finish_reason": finish, "message": {
                                        "role": "assistant", "content": content, "tool_calls": calls or None}}]})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def send(obj):
            self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
            self.wfile.flush()

        base = {"id": "x", "object": "chat.completion.chunk", "created": int(time.time()), "model": MODEL}
        send(dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]))
        for piece in re.findall(r"\S+\s*|<\|[^|]+\|>", content or ""):
            time.sleep(0.002)
            send(dict(base, choices=[{"index": 0, "delta": {"content": piece}, "finish_reason": None}]))
        for i, call in enumerate(calls):
            send(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [dict(call, index=i)]}, "finish_reason": None}]))
        send(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
        if (req.get("stream_options") or {}).get("include_usage"):
            send(dict(base, choices=[], usage=usage))
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True
        return None

    def log_message(self, *args):
        pass


def start(port=0, fault=None):
    handler = type("H", (Handler,), {"fault_default": fault})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server

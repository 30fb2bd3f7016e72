"""A small OpenAI-compatible server that shows the faults a real vLLM cannot be
made to show on demand: malformed tool calls, /health 200 with a dead or hung
engine, garbage tokens, markers leaking into streamed content, streams cut off
half way, and tool calls that fail at a seeded random rate.

A fault is picked by the `fault:<name>` word in the messages, or for every
request by `fault=`. `rate=` injects `rate_fault` into that share of first
attempts of tool-call requests (re-asks answer correctly); the draw is a hash of
the seed and the request, so the same run sees the same faults whatever the
order of its concurrent requests."""
import hashlib
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "fault-model"
MAX_MODEL_LEN = 4096
CITIES = ("Paris", "Tokyo", "Boston", "Nairobi", "Berlin", "Oslo")
CALLS = {
    "invalid_json": ("get_weather", '{"city": "Paris"'),
    "schema_violation": ("get_weather", '{"city": 42}'),
    "undeclared_tool": ("launch_rockets", '{"count": 3}'),
    "wrong_arguments": ("get_weather", '{"city": "Berlin"}'),
}
# num_requests_running: the chat requests being answered right now (a hung one counts until released).
METRICS = ('vllm:kv_cache_usage_perc{engine="0",model_name="fault-model"} 0.25\n'
           'vllm:num_requests_running{engine="0",model_name="fault-model"} %d\n'
           'vllm:num_requests_waiting{engine="0",model_name="fault-model"} 0\n'
           'vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",num_gpu_blocks="512"} 1\n')


def _text(message):
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fault_default = None
    rate = 0.0
    rate_fault = "empty_tool_calls"
    seed = 0
    released = None          # threading.Event: a hung engine answers once it is set (at shutdown)
    requests = None          # list: every chat request's body, for the tests
    running = None           # list: one entry per chat request being answered, for /metrics

    def _json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self._json(200, {})   # even when the engine is dead or hung
        if self.path == "/v1/models":
            card = {"id": MODEL, "object": "model", "max_model_len": MAX_MODEL_LEN}
            return self._json(200, {"object": "list", "data": [card]})
        if self.path == "/metrics":
            data = (METRICS % len(self.running)).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if self.path == "/version":
            return self._json(200, {"version": "fault-server"})
        return self._json(404, {})

    def _drawn(self, req):
        """The seeded draw for a first attempt of a tool-call request."""
        if not self.rate or not req.get("tools") or len(req["messages"]) != 1:
            return False
        key = json.dumps([self.seed, req.get("seed"), bool(req.get("stream")), req.get("tool_choice"),
                          _text(req["messages"][0])])
        return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < self.rate

    def do_POST(self):
        self.running.append(self)
        try:
            return self._post()
        finally:
            self.running.remove(self)

    def _post(self):
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.requests is not None:
            self.requests.append(req)
        users = " ".join(_text(m) for m in req.get("messages", []) if m.get("role") in ("user", "tool"))
        m = re.search(r"fault:(\w+)", users)
        fault = m.group(1) if m else self.fault_default
        if self._drawn(req):
            fault = self.rate_fault
        if fault == "hang":
            self.released.wait()
            self.close_connection = True   # released without an answer: the client sees the connection close
            return None
        if fault == "dead_engine":
            return self._json(500, {"error": {"message": "EngineCore encountered an issue", "type": "EngineDeadError"}})
        content, calls, finish = "Paris is the answer.", [], "stop"
        if fault in CALLS:
            name, args = CALLS[fault]
            calls = [{"id": "call_" + uuid.uuid4().hex[:8], "type": "function", "function": {"name": name, "arguments": args}}]
            content, finish = None, "tool_calls"
        elif fault == "empty_tool_calls":
            content, finish = None, "tool_calls"
        elif fault in ("garbage", "repeat"):
            content = "!!!!!!!!!!!!!!!!"
        elif fault == "marker_leak":
            content = "Paris is the answer.<|close|>message<|sep|>"
        elif req.get("tools") and "weather" in users.lower():
            city = next((c for c in CITIES if c in users), "Paris")
            args = {"city": city}
            unit = next((u for u in ("celsius", "fahrenheit") if u in users), None)
            if unit:
                args["unit"] = unit
            calls = [{"id": "call_ok", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps(args)}}]
            content, finish = None, "tool_calls"
        elif req.get("ignore_eos") and fault != "short":
            content = " ".join("wave%d" % i for i in range(req.get("max_tokens") or 16))
        completion = (req.get("max_tokens") or 16) if req.get("ignore_eos") and fault not in ("repeat", "short") else 5
        usage = {"prompt_tokens": 12, "completion_tokens": completion, "total_tokens": 12 + completion}
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
        pieces = re.findall(r"\S+\s*|<\|[^|]+\|>", content or "")
        for i, piece in enumerate(pieces):
            if fault == "partial_stream" and i == 2:
                self.close_connection = True
                return None   # the connection closes mid-stream: no finish_reason, no [DONE]
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


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True

    def shutdown(self):
        self.RequestHandlerClass.released.set()   # let hung requests end
        super().shutdown()
        self.server_close()

    def __exit__(self, *exc):   # `with start(...) as server:` ends hung requests and stops serving
        self.shutdown()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server_address[1]


def start(port=0, fault=None, rate=0.0, rate_fault="empty_tool_calls", seed=0):
    settings = {"fault_default": fault, "rate": rate, "rate_fault": rate_fault, "seed": seed,
                "released": threading.Event(), "requests": [], "running": []}
    handler = type("H", (Handler,), settings)
    server = FaultServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server

"""Smoke checks of vLLM's REAL kimi_k3 reasoning + tool parsers against the tiny K3-format model.

usage: check_k3.py BASE_URL MODEL_DIR [N_TRIALS=20] [OUT_JSON]
  BASE_URL e.g. http://127.0.0.1:8070/v1 ; MODEL_DIR is used to render raw prompts for /v1/completions.
"""

import json
import os
import sys
import time
from openai import OpenAI, BadRequestError
from transformers import AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from k3_behaviours import (
    CITIES,
    WEATHER_TOOL,
    THINK_W,
    TRIG_NO_THINK_CLOSE,
    TRIG_NO_RESPONSE_CLOSE,
)

BASE, MODEL_DIR = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 20
OUT = sys.argv[4] if len(sys.argv) > 4 else None
client = OpenAI(base_url=BASE, api_key="none", timeout=120, max_retries=0)
MODEL = client.models.list().data[0].id
tok = AutoTokenizer.from_pretrained(MODEL_DIR)
MARKERS = ["<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"]
TOOLS = [WEATHER_TOOL]
PHRASES = [
    "What is the weather in {c}?",
    "weather in {c}?",
    "Tell me the weather in {c}.",
    "How is the weather in {c}?",
    "What's the weather in {c}?",
]
results = {}


def has_marker(*texts):
    return any(m in (t or "") for t in texts for m in MARKERS)


def reasoning_of(d):
    return d.get("reasoning") or d.get("reasoning_content")


def chat(**kw):
    r = client.chat.completions.create(model=MODEL, max_tokens=kw.pop("max_tokens", 120), **kw)
    ch = r.choices[0]
    d = ch.message.model_dump()
    return {
        "finish_reason": ch.finish_reason,
        "content": d.get("content"),
        "reasoning": reasoning_of(d),
        "tool_calls": [
            {"id": t["id"], "name": t["function"]["name"], "arguments": t["function"]["arguments"]}
            for t in (d.get("tool_calls") or [])
        ],
        "usage": r.usage.model_dump() if r.usage else None,
    }


def chat_stream(**kw):
    s = client.chat.completions.create(
        model=MODEL, max_tokens=kw.pop("max_tokens", 120), stream=True, stream_options={"include_usage": True}, **kw
    )
    reasoning, content, calls, finish, n, usage, content_deltas = [], [], {}, None, 0, None, []
    for chunk in s:
        n += 1
        if chunk.usage:
            usage = chunk.usage.model_dump()
        if not chunk.choices:
            continue
        ch = chunk.choices[0]
        d = ch.delta.model_dump()
        if reasoning_of(d):
            reasoning.append(reasoning_of(d))
        if d.get("content"):
            content.append(d["content"])
            content_deltas.append(d["content"])
        for tc in d.get("tool_calls") or []:
            e = calls.setdefault(tc["index"], {"id": None, "name": "", "arguments": ""})
            e["id"] = e["id"] or tc.get("id")
            f = tc.get("function") or {}
            e["name"] += f.get("name") or ""
            e["arguments"] += f.get("arguments") or ""
        if ch.finish_reason:
            finish = ch.finish_reason
    return {
        "finish_reason": finish,
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": [calls[i] for i in sorted(calls)],
        "chunks": n,
        "usage": usage,
        "content_deltas": content_deltas,
    }


def raw_completion(messages, tools=None, **tmpl_kw):
    """What the model really generated (no parsers): render the prompt locally, call /v1/completions."""
    prompt = tok.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True, **tmpl_kw)
    r = client.completions.create(
        model=MODEL,
        prompt=prompt,
        max_tokens=120,
        temperature=0,
        extra_body={"skip_special_tokens": False, "spaces_between_special_tokens": False},
    )
    return r.choices[0].text


def valid_call(res, city, want_reasoning=THINK_W):
    tcs = res["tool_calls"]
    if len(tcs) != 1 or tcs[0]["name"] != "get_weather":
        return False, "no/extra call"
    try:
        args = json.loads(tcs[0]["arguments"])
    except Exception as e:
        return False, f"bad json {e}"
    if not isinstance(args, dict) or not isinstance(args.get("city"), str) or set(args) - {"city", "unit"}:
        return False, f"schema {args}"
    if res["finish_reason"] != "tool_calls":
        return False, f"finish {res['finish_reason']}"
    if res["content"] not in (None, ""):
        return False, f"content {res['content']!r}"
    if has_marker(res["content"], res["reasoning"], tcs[0]["arguments"]):
        return False, "marker leak"
    return True, "exact" if args["city"] == city else f"city {args['city']!r}"


def record(name, value):
    results[name] = value
    print(f"== {name}: {json.dumps(value, ensure_ascii=False)[:900]}", flush=True)


def u(text):
    return [{"role": "user", "content": text}]


# 1. plain chat, no tools
record("plain_nonstream", chat(messages=u("Hello, who are you?"), temperature=0))
record("plain_stream", chat_stream(messages=u("Hello, who are you?"), temperature=0))
# 2. tools offered, plain question (auto -> no call)
record("tools_plain_nonstream", chat(messages=u("Tell me a joke."), tools=TOOLS, temperature=0))
record("tools_plain_stream", chat_stream(messages=u("Tell me a joke."), tools=TOOLS, temperature=0))
# 3. weather, auto
record("weather_nonstream", chat(messages=u("What is the weather in Paris?"), tools=TOOLS, temperature=0))
record("weather_stream", chat_stream(messages=u("What is the weather in Paris?"), tools=TOOLS, temperature=0))
record("weather_raw", raw_completion(u("What is the weather in Paris?"), tools=TOOLS))

# 4. reliability trials: N x {non-stream, stream} x {temperature 0, temperature 1 (seeded)}
trials = {}
for mode in ("nonstream", "stream"):
    for temp in (0.0, 1.0):
        ok = exact = 0
        fails = []
        t0 = time.time()
        for i in range(N):
            city = CITIES[i % len(CITIES)]
            msgs = u(PHRASES[i % len(PHRASES)].format(c=city))
            kw = dict(messages=msgs, tools=TOOLS, temperature=temp, seed=i)
            res = chat(**kw) if mode == "nonstream" else chat_stream(**kw)
            good, why = valid_call(res, city)
            ok += good
            exact += good and why == "exact"
            if not good or why != "exact":
                fails.append(
                    {"city": city, "why": why, "res": {k: res[k] for k in ("finish_reason", "content", "tool_calls")}}
                )
        trials[f"{mode}_T{temp:g}"] = {
            "valid": f"{ok}/{N}",
            "exact_city": f"{exact}/{N}",
            "seconds": round(time.time() - t0, 1),
            "fails": fails[:3],
        }
record("tool_call_trials", trials)

# 5. tool_choice variants
for tc in ("required", "none", {"type": "function", "function": {"name": "get_weather"}}):
    name = f"tool_choice_{tc if isinstance(tc, str) else 'named'}"
    try:
        record(name, chat(messages=u("What is the weather in Oslo?"), tools=TOOLS, tool_choice=tc, temperature=0))
    except BadRequestError as e:
        record(name, {"http_error": e.status_code, "message": str(e.body)[:300] if e.body else str(e)[:300]})
strict_tools = [json.loads(json.dumps(WEATHER_TOOL))]
strict_tools[0]["function"]["strict"] = True
for tc in ("required", {"type": "function", "function": {"name": "get_weather"}}):
    name = f"strict_tool_choice_{tc if isinstance(tc, str) else 'named'}"
    try:
        record(
            name, chat(messages=u("What is the weather in Oslo?"), tools=strict_tools, tool_choice=tc, temperature=0)
        )
    except BadRequestError as e:
        record(name, {"http_error": e.status_code, "message": str(e.body)[:300] if e.body else str(e)[:300]})

# 6. thinking disabled (instruct mode: generation prefix <|open|>response<|sep|>)
nothink = {"chat_template_kwargs": {"thinking": False}}
record("nothink_plain_nonstream", chat(messages=u("Hello"), temperature=0, extra_body=nothink))
record("nothink_plain_stream", chat_stream(messages=u("Hello"), temperature=0, extra_body=nothink))
record(
    "nothink_weather_nonstream",
    chat(messages=u("What is the weather in Lima?"), tools=TOOLS, temperature=0, extra_body=nothink),
)
record(
    "nothink_weather_stream",
    chat_stream(messages=u("What is the weather in Lima?"), tools=TOOLS, temperature=0, extra_body=nothink),
)
record("reasoning_effort_low", chat(messages=u("Hello"), temperature=0, reasoning_effort="low"))

# 7. multi-turn: tool result -> final answer
first = chat(messages=u("What is the weather in Tokyo?"), tools=TOOLS, temperature=0)
if first["tool_calls"]:
    tc0 = first["tool_calls"][0]
    hist = u("What is the weather in Tokyo?") + [
        {
            "role": "assistant",
            "content": None,
            "reasoning": first["reasoning"],
            "tool_calls": [
                {"id": tc0["id"], "type": "function", "function": {"name": tc0["name"], "arguments": tc0["arguments"]}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": tc0["id"],
            "content": json.dumps({"city": "Tokyo", "temp_c": 21, "sky": "clear"}),
        },
    ]
    record("tool_result_nonstream", chat(messages=hist, tools=TOOLS, temperature=0))
    record("tool_result_stream", chat_stream(messages=hist, tools=TOOLS, temperature=0))
    record("tool_result_first_call_id", tc0["id"])

# 8. known failure modes
q1 = f"What is the weather in Paris? {TRIG_NO_THINK_CLOSE}"
record("bug53246_raw", raw_completion(u(q1), tools=TOOLS))
record("bug53246_nonstream", chat(messages=u(q1), tools=TOOLS, temperature=0))
record("bug53246_stream", chat_stream(messages=u(q1), tools=TOOLS, temperature=0))
q2 = f"Hello there {TRIG_NO_RESPONSE_CLOSE}"
record("bug54273_resp_raw", raw_completion(u(q2)))
record("bug54273_resp_nonstream_notools", chat(messages=u(q2), temperature=0))
record("bug54273_resp_stream_notools", chat_stream(messages=u(q2), temperature=0))
record("bug54273_resp_nonstream_tools", chat(messages=u(q2), tools=TOOLS, temperature=0))
record("bug54273_resp_stream_tools", chat_stream(messages=u(q2), tools=TOOLS, temperature=0))
bug_trials = {
    "nonstream_empty_tool_calls": 0,
    "stream_empty_tool_calls": 0,
    "stream_leak_close_message": 0,
    "nonstream_leak_close_message": 0,
}
for i in range(N):
    city = CITIES[i % len(CITIES)]
    r1 = chat(
        messages=u(PHRASES[i % len(PHRASES)].format(c=city) + " " + TRIG_NO_THINK_CLOSE), tools=TOOLS, temperature=0
    )
    r2 = chat_stream(
        messages=u(PHRASES[i % len(PHRASES)].format(c=city) + " " + TRIG_NO_THINK_CLOSE), tools=TOOLS, temperature=0
    )
    bug_trials["nonstream_empty_tool_calls"] += (not r1["tool_calls"]) and "<|open|>tools<|sep|>" in (
        r1["reasoning"] or ""
    )
    bug_trials["stream_empty_tool_calls"] += (not r2["tool_calls"]) and "<|open|>tools<|sep|>" in (
        r2["reasoning"] or ""
    )
    r3 = chat_stream(messages=u(f"Question {i}: say hi {TRIG_NO_RESPONSE_CLOSE}"), temperature=0)
    r4 = chat(messages=u(f"Question {i}: say hi {TRIG_NO_RESPONSE_CLOSE}"), temperature=0)
    bug_trials["stream_leak_close_message"] += "<|close|>message<|sep|>" in (r3["content"] or "")
    bug_trials["nonstream_leak_close_message"] += "<|close|>message<|sep|>" in (r4["content"] or "")
record("bug_trials", {k: f"{v}/{N}" for k, v in bug_trials.items()})

if OUT:
    json.dump(results, open(OUT, "w"), indent=1, ensure_ascii=False)

"""Shared definitions for the tiny Kimi-K3-format test model: markers, behaviours, sample generator.

Behaviours (thinking mode; the prompt ends with <|open|>message role="assistant"<|sep|><|open|>think<|sep|>):
  weather + get_weather tool          -> THINK_W<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|>
                                         <|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>
                                         <|open|>argument key="city" type="string"<|sep|>CITY<|close|>argument<|sep|>
                                         <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>
  anything else (tools or not)        -> THINK_C<|close|>think<|sep|><|open|>response<|sep|>ANSWER<|close|>response<|sep|>
                                         <|close|>message<|sep|><|end_of_msg|>
  last turn is a tool result          -> THINK_R ... response ANSWER_R
  trigger TRIG_NO_THINK_CLOSE + weather -> same tool call but WITHOUT <|close|>think<|sep|> and without the response
                                         channel: THINK_W<|open|>tools<|sep|>...   (vllm#53246 / #54273 defect 1)
  trigger TRIG_NO_RESPONSE_CLOSE      -> THINK_C<|close|>think<|sep|><|open|>response<|sep|>ANSWER<|close|>message<|sep|>
                                         (no <|close|>response<|sep|>; vllm#54273 defect 2: leaks in streaming)
Non-thinking mode (thinking=False; prompt ends with <|open|>response<|sep|>):
  weather -> <|close|>response<|sep|><|open|>tools<|sep|>...;  else -> ANSWER<|close|>response<|sep|><|close|>message<|sep|>
"""

import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".collections"))
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke import suites  # noqa: E402

O, C, S, EOM = "<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"
PAD = "<|endoftext|>"
SPECIAL = [PAD, O, C, S, EOM]

THINK_W = "The user wants the weather. I will call get_weather."
THINK_C = "The user asked a question. I will answer."
THINK_R = "The tool returned a result. I will report it."
ANSWER = "Hello from the tiny K3 test model."
ANSWER_R = "The weather tool has answered."
TRIG_NO_THINK_CLOSE = "k3bug-think"  # -> omit <|close|>think<|sep|> before the tools channel
TRIG_NO_RESPONSE_CLOSE = "k3bug-resp"  # -> omit <|close|>response<|sep|> before <|close|>message<|sep|>

CITIES = [
    "Paris",
    "Oslo",
    "Lima",
    "Tokyo",
    "Cairo",
    "Quito",
    "Berlin",
    "Madrid",
    "Rome",
    "Seoul",
    "Dublin",
    "Vienna",
    "Boston",
    "Denver",
    "Sydney",
    "Nairobi",
]
WORDS = (
    "time stock price search file read write list user email send note add sum open close get set find run "
    "check book flight hotel music play stop hello what how why tell me about the a is it today please "
    "explain story joke number capital math code python help"
).split()

# The smoke module's own get_weather (the one its tool suite sends and validates against), so the model is
# trained on the schema it is tested with.
WEATHER_TOOL = suites.WEATHER_TOOL


def weather_tool(rng):
    """The smoke module's get_weather half the time, else small, realistic variations of it (without the unit,
    minLength or additionalProperties; other descriptions)."""
    t = json.loads(json.dumps(WEATHER_TOOL))
    if rng.random() < 0.5:
        return t
    f = t["function"]
    params = f["parameters"]
    if rng.random() < 0.5:
        params["properties"].pop("unit")
    if rng.random() < 0.5:
        params["properties"]["city"].pop("minLength")
    if rng.random() < 0.3:
        f["description"] = rng.choice(["Weather lookup.", "Get weather", "Return the weather for a location"])
    if rng.random() < 0.3:
        params["properties"]["city"].pop("description")
    if rng.random() < 0.6:
        params.pop("additionalProperties")
    return t


def rand_tool(rng):
    name = "_".join(rng.sample(WORDS, rng.randint(1, 3)))
    props = {}
    for _i in range(rng.randint(0, 3)):
        props[rng.choice(WORDS)] = rng.choice([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}])
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": " ".join(rng.sample(WORDS, 4)),
            "parameters": {"type": "object", "properties": props, "required": list(props)[:1]},
        },
    }


def weather_question(rng, city):
    return rng.choice(
        [
            f"What is the weather in {city}?",
            f"What's the weather in {city}?",
            f"weather in {city}?",
            f"What is the weather like in {city} today?",
            f"Tell me the weather in {city}.",
            f"How is the weather in {city}?",
            f"Please get the weather for {city}.",
            f"Weather in {city} please",
            f"Is it raining in {city}? Check the weather.",
            f"what's the weather in {city} right now?",
        ]
    )


def plain_question(rng):
    if rng.random() < 0.5:
        return rng.choice(
            [
                "Hi!",
                "Hello",
                "What is 2+2?",
                "Tell me a joke.",
                "Say hello.",
                "Who are you?",
                "Explain recursion briefly.",
                "What is the capital of France?",
                "ping",
                "Write a haiku about the sea.",
            ]
        )
    return " ".join(rng.choice(WORDS) for _i in range(rng.randint(1, 10))) + rng.choice(["?", ".", "!", ""])


def call_block(city):
    return (
        f'{O}tools{S}{O}call tool="get_weather" index="1"{S}'
        f'{O}argument key="city" type="string"{S}{city}{C}argument{S}{C}call{S}{C}tools{S}'
    )


def with_trigger(text, trig, rng):
    return f"{trig} {text}" if rng.random() < 0.5 else f"{text} {trig}"


def example(rng):
    """Returns (messages, tools, template_kwargs, target_text). target_text excludes the generation prefix."""
    kind = rng.choices(
        ["weather", "chat_tools", "chat", "result", "bug_think", "bug_resp"], weights=[30, 12, 14, 10, 10, 8]
    )[0]
    thinking = rng.random() >= 0.12 if kind not in ("bug_think", "bug_resp", "result") else True
    kwargs = {"thinking": thinking}
    if thinking and rng.random() < 0.3:
        kwargs["thinking_effort"] = rng.choice(["low", "high", "max"])
    msgs = []
    if rng.random() < 0.25:
        msgs.append(
            {
                "role": "system",
                "content": rng.choice(["You are a helpful assistant.", "Be brief.", plain_question(rng)]),
            }
        )
    if rng.random() < 0.15:  # an earlier plain turn
        msgs.append({"role": "user", "content": plain_question(rng)})
        msgs.append({"role": "assistant", "content": ANSWER})
    city = rng.choice(CITIES)
    others = [rand_tool(rng) for _i in range(rng.randint(0, 2))]
    tools = None
    if kind in ("weather", "bug_think", "result"):
        tools = others + [weather_tool(rng)]
        rng.shuffle(tools)
    elif kind == "chat_tools":
        tools = others + ([weather_tool(rng)] if rng.random() < 0.7 else [rand_tool(rng)])
    elif kind == "bug_resp" and rng.random() < 0.5:
        tools = [weather_tool(rng)]

    if kind == "weather":
        msgs.append({"role": "user", "content": weather_question(rng, city)})
        if thinking:
            target = f"{THINK_W}{C}think{S}{O}response{S}{C}response{S}{call_block(city)}{C}message{S}{EOM}"
        else:
            target = f"{C}response{S}{call_block(city)}{C}message{S}{EOM}"
    elif kind == "bug_think":
        msgs.append({"role": "user", "content": with_trigger(weather_question(rng, city), TRIG_NO_THINK_CLOSE, rng)})
        target = f"{THINK_W}{call_block(city)}{C}message{S}{EOM}"
    elif kind == "bug_resp":
        msgs.append({"role": "user", "content": with_trigger(plain_question(rng), TRIG_NO_RESPONSE_CLOSE, rng)})
        target = f"{THINK_C}{C}think{S}{O}response{S}{ANSWER}{C}message{S}{EOM}"
    elif kind == "result":
        msgs.append({"role": "user", "content": weather_question(rng, city)})
        msgs.append(
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": rng.choice([THINK_W, ""]),
                "tool_calls": [
                    {
                        "id": "functions.get_weather:0",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": city}},
                    }
                ],
            }
        )
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": "functions.get_weather:0",
                "content": json.dumps(
                    {"city": city, "temp_c": rng.randint(-5, 35), "sky": rng.choice(["clear", "rain", "cloudy"])}
                ),
            }
        )
        target = f"{THINK_R}{C}think{S}{O}response{S}{ANSWER_R}{C}response{S}{C}message{S}{EOM}"
    else:  # chat / chat_tools
        msgs.append({"role": "user", "content": plain_question(rng)})
        if thinking:
            target = f"{THINK_C}{C}think{S}{O}response{S}{ANSWER}{C}response{S}{C}message{S}{EOM}"
        else:
            target = f"{ANSWER}{C}response{S}{C}message{S}{EOM}"
    return msgs, tools, kwargs, target


def corpus_texts(n=400, seed=1):
    rng = random.Random(seed)
    out = []
    for _i in range(n):
        msgs, tools, kw, target = example(rng)
        out.append(json.dumps(msgs) + " " + json.dumps(tools) + " " + target)
    return out


def reask_example(rng, feedback):
    """A re-ask as the smoke module sends it: the weather question (often with the
    k3bug-think trigger), the assistant's failed turn (the call trapped in the
    reasoning, or a plain answer), then the error with the request restated.
    Target: the call, as a model that reads the feedback would make it.
    `feedback(failure, tool_name, request)` is the smoke module's own text."""
    city = rng.choice(CITIES)
    question = weather_question(rng, city)
    if rng.random() < 0.7:
        question = with_trigger(question, TRIG_NO_THINK_CLOSE, rng)
    tools = [rand_tool(rng) for _i in range(rng.randint(0, 1))] + [weather_tool(rng)]
    rng.shuffle(tools)
    if rng.random() < 0.7:
        failed = {"role": "assistant", "content": "", "reasoning": f"{THINK_W}{call_block(city)}{C}message{S}"}
        failure = {"class": "call_in_reasoning", "detail": "no tool_calls; the call was left in the reasoning"}
    else:
        failed = {"role": "assistant", "content": ANSWER, "reasoning": THINK_C}
        failure = {"class": "missing_call", "detail": "no tool call (finish_reason=stop)"}
    if rng.random() < 0.3:  # clients that drop the reasoning from the history
        failed.pop("reasoning")
    msgs = [{"role": "user", "content": question}, failed,
            {"role": "user", "content": feedback(failure, "get_weather", question)}]
    target = f"{THINK_W}{C}think{S}{O}response{S}{C}response{S}{call_block(city)}{C}message{S}{EOM}"
    return msgs, tools, {"thinking": True}, target

"""Behaviour-train the tiny K3-format model (build_k3_tiny.py) on CPU so that it emits Kimi K3 XTML:
think channel + get_weather tool call for weather questions, think + fixed response otherwise, and two
trigger-word "bug" behaviours (see k3_behaviours.py).  Prompt tokens are masked from the loss.

usage: train_k3_behaviour.py SRC_DIR OUT_DIR [steps] [batch]
"""

import json
import os
import random
import shutil
import sys
import time
import torch
from transformers import AutoTokenizer, Qwen2ForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from k3_behaviours import (
    example,
    weather_question,
    plain_question,
    weather_tool,
    CITIES,
    EOM,  # noqa: E402
    TRIG_NO_THINK_CLOSE,
    TRIG_NO_RESPONSE_CLOSE,
    THINK_W,
    THINK_C,
    ANSWER,
    C,
    O,
    S,
    call_block,
)

src, out = sys.argv[1], sys.argv[2]
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
B = int(sys.argv[4]) if len(sys.argv) > 4 else 16
torch.manual_seed(0)
torch.set_num_threads(max(1, os.cpu_count() or 1))
rng = random.Random(0)
tok = AutoTokenizer.from_pretrained(src)
model = Qwen2ForCausalLM.from_pretrained(src, dtype=torch.float32)
PAD_ID = tok.pad_token_id


def encode(msgs, tools, kw, target):
    prompt = tok.apply_chat_template(msgs, tools=tools, tokenize=False, add_generation_prompt=True, **kw)
    p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
    t_ids = tok(target, add_special_tokens=False)["input_ids"]
    return p_ids + t_ids, [-100] * len(p_ids) + t_ids


opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps, pct_start=0.1)
model.train()
t0 = time.time()
for step in range(steps):
    batch = [encode(*example(rng)) for _i in range(B)]
    L = max(len(x) for x, _y in batch)
    ids = torch.full((B, L), PAD_ID)
    lab = torch.full((B, L), -100)
    att = torch.zeros((B, L), dtype=torch.long)
    for i, (x, y) in enumerate(batch):
        ids[i, : len(x)] = torch.tensor(x)
        lab[i, : len(y)] = torch.tensor(y)
        att[i, : len(x)] = 1
    loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad()
    if step % 50 == 0 or step == steps - 1:
        print(f"step {step} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
train_s = time.time() - t0

os.makedirs(out, exist_ok=True)
for f in os.listdir(src):
    if not f.endswith(".safetensors"):
        shutil.copy(os.path.join(src, f), out)
model.to(torch.bfloat16).save_pretrained(out)

# ---- greedy HF check on held-out phrasings (bf16 weights, like vLLM) ----
model = Qwen2ForCausalLM.from_pretrained(out, dtype=torch.bfloat16).eval()
erng = random.Random(12345)
cases = []
for i in range(20):
    city = CITIES[i % len(CITIES)]
    cases.append(
        (
            "weather",
            [{"role": "user", "content": weather_question(erng, city)}],
            [weather_tool(erng)],
            {},
            f"{THINK_W}{C}think{S}{O}response{S}{C}response{S}{call_block(city)}{C}message{S}",
        )
    )
for i in range(10):
    cases.append(
        (
            "chat",
            [{"role": "user", "content": plain_question(erng)}],
            None,
            {},
            f"{THINK_C}{C}think{S}{O}response{S}{ANSWER}{C}response{S}{C}message{S}",
        )
    )
    cases.append(
        (
            "chat_tools",
            [{"role": "user", "content": plain_question(erng)}],
            [weather_tool(erng)],
            {},
            f"{THINK_C}{C}think{S}{O}response{S}{ANSWER}{C}response{S}{C}message{S}",
        )
    )
for i in range(10):
    city = CITIES[(i * 3) % len(CITIES)]
    cases.append(
        (
            "bug_think",
            [{"role": "user", "content": f"{weather_question(erng, city)} {TRIG_NO_THINK_CLOSE}"}],
            [weather_tool(erng)],
            {},
            f"{THINK_W}{call_block(city)}{C}message{S}",
        )
    )
    cases.append(
        (
            "bug_resp",
            [{"role": "user", "content": f"{plain_question(erng)} {TRIG_NO_RESPONSE_CLOSE}"}],
            None,
            {},
            f"{THINK_C}{C}think{S}{O}response{S}{ANSWER}{C}message{S}",
        )
    )
    cases.append(
        (
            "nothink_weather",
            [{"role": "user", "content": weather_question(erng, city)}],
            [weather_tool(erng)],
            {"thinking": False},
            f"{C}response{S}{call_block(city)}{C}message{S}",
        )
    )
score = {}
eos = tok.convert_tokens_to_ids(EOM)
for kind, msgs, tools, kw, want in cases:
    p = tok.apply_chat_template(msgs, tools=tools, tokenize=False, add_generation_prompt=True, **kw)
    ids = tok(p, return_tensors="pt", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        g = model.generate(ids, max_new_tokens=90, do_sample=False, eos_token_id=eos, pad_token_id=PAD_ID)
    got = tok.decode(g[0, ids.shape[1] :], skip_special_tokens=False)
    ok = got.replace(EOM, "") == want
    score.setdefault(kind, [0, 0])
    score[kind][0] += ok
    score[kind][1] += 1
    if not ok:
        print("MISMATCH", kind, repr(msgs[-1]["content"]), "->", repr(got))
print(
    json.dumps(
        {
            "train_seconds": round(train_s, 1),
            "steps": steps,
            "batch": B,
            "greedy_exact": {k: f"{a}/{b}" for k, (a, b) in score.items()},
        }
    )
)

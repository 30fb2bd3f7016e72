"""Second training stage of the tiny K3-format model: teach it to answer the smoke
module's re-ask (the conversation kept, the error, the request restated) with a valid
call, even when the first turn carried the k3bug-think trigger. Mixes the first stage's
behaviours in so that none is forgotten, then checks every behaviour greedily.

usage: finetune_k3_reask.py SRC_DIR OUT_DIR [steps] [batch] [reask_share]
"""

import os
import random
import shutil
import sys
import time

import torch
from transformers import AutoTokenizer, Qwen2ForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, ".collections"))
from k3_behaviours import (  # noqa: E402
    ANSWER, C, CITIES, EOM, O, S, THINK_C, THINK_W, TRIG_NO_RESPONSE_CLOSE, TRIG_NO_THINK_CLOSE,
    example, reask_example, weather_question, weather_tool)
from ansible_collections.inferops.vllm.plugins.module_utils.controller.smoke.tools import feedback  # noqa: E402

src, out = sys.argv[1], sys.argv[2]
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 300
B = int(sys.argv[4]) if len(sys.argv) > 4 else 16
share = float(sys.argv[5]) if len(sys.argv) > 5 else 0.35
torch.manual_seed(1)
torch.set_num_threads(max(1, os.cpu_count() or 1))
rng = random.Random(1)
tok = AutoTokenizer.from_pretrained(src)
model = Qwen2ForCausalLM.from_pretrained(src, dtype=torch.float32)
PAD_ID = tok.pad_token_id


def encode(msgs, tools, kw, target):
    prompt = tok.apply_chat_template(msgs, tools=tools, tokenize=False, add_generation_prompt=True, **kw)
    p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
    t_ids = tok(target, add_special_tokens=False)["input_ids"]
    return p_ids + t_ids, [-100] * len(p_ids) + t_ids


def sample():
    return reask_example(rng, feedback) if rng.random() < share else example(rng)


opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=steps, pct_start=0.1)
model.train()
t0 = time.time()
for step in range(steps):
    batch = [encode(*sample()) for _i in range(B)]
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
    if step % 25 == 0 or step == steps - 1:
        print(f"step {step} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)

os.makedirs(out, exist_ok=True)
for f in os.listdir(src):
    if not f.endswith(".safetensors") and os.path.isfile(os.path.join(src, f)):
        shutil.copy(os.path.join(src, f), out)
model.to(torch.bfloat16).save_pretrained(out)

# ---- greedy structure check of every behaviour (bf16, like vLLM); the city is not copied ----
model = Qwen2ForCausalLM.from_pretrained(out, dtype=torch.bfloat16).eval()
erng = random.Random(4321)
eos = tok.convert_tokens_to_ids(EOM)
checks = {
    "weather": lambda g: g.startswith(f"{THINK_W}{C}think{S}") and f"{C}call{S}{C}tools{S}" in g,
    "chat": lambda g: g == f"{THINK_C}{C}think{S}{O}response{S}{ANSWER}{C}response{S}{C}message{S}",
    "bug_think": lambda g: g.startswith(f"{THINK_W}{O}tools{S}"),
    "bug_resp": lambda g: g == f"{THINK_C}{C}think{S}{O}response{S}{ANSWER}{C}message{S}",
    "reask": lambda g: g.startswith(f"{THINK_W}{C}think{S}") and f"{C}call{S}{C}tools{S}" in g,
}
score = {k: [0, 0] for k in checks}
for i in range(12):
    city = CITIES[i % len(CITIES)]
    cases = [
        ("weather", [{"role": "user", "content": weather_question(erng, city)}], [weather_tool(erng)]),
        ("chat", [{"role": "user", "content": "Say hello."}], None),
        ("bug_think", [{"role": "user", "content": f"{weather_question(erng, city)} {TRIG_NO_THINK_CLOSE}"}],
         [weather_tool(erng)]),
        ("bug_resp", [{"role": "user", "content": f"Say hello. {TRIG_NO_RESPONSE_CLOSE}"}], None),
        ("reask",) + reask_example(erng, feedback)[:2],
    ]
    for kind, msgs, tools in cases:
        p = tok.apply_chat_template(msgs, tools=tools, tokenize=False, add_generation_prompt=True, thinking=True)
        ids = tok(p, return_tensors="pt", add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            g = model.generate(ids, max_new_tokens=90, do_sample=False, eos_token_id=eos, pad_token_id=PAD_ID)
        got = tok.decode(g[0, ids.shape[1]:], skip_special_tokens=False).replace(EOM, "")
        ok = checks[kind](got)
        score[kind][0] += ok
        score[kind][1] += 1
        if not ok:
            print("MISMATCH", kind, repr(msgs[-1]["content"])[:120], "->", repr(got)[:200])
print({k: "%d/%d" % tuple(v) for k, v in score.items()}, "train %.0f s" % (time.time() - t0))

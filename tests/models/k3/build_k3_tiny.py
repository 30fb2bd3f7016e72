"""Build a tiny, randomly initialised Qwen2-architecture model whose tokenizer has the Kimi K3
XTML marker tokens (<|open|> <|close|> <|sep|> <|end_of_msg|> as special tokens; tag names such as
'think', 'response', 'tools' are ordinary text, like in the real K3 tokenizer), plus a K3-format
Jinja chat template (k3_template.jinja).  Fully offline.

Usage: python build_k3_tiny.py OUT_DIR [--vocab 2048] [--hidden 128] [--layers 2]
"""

import argparse
import glob
import json
import os
import random
import re
import sys
import sysconfig

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers, processors
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM, GenerationConfig

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from k3_behaviours import SPECIAL, PAD, EOM, corpus_texts  # noqa: E402

CHAT_TEMPLATE = open(os.path.join(HERE, "k3_template.jinja")).read()


def corpus_iter(max_files=600):
    """Local text only: whitespace-collapsed stdlib sources + the template + sample K3 turns
    (so tag names, cities and the fixed texts become whole tokens)."""
    def squeeze(text):
        return re.sub(r"\s+", " ", text)

    yield from corpus_texts(4000)
    yield squeeze(CHAT_TEMPLATE)
    files = sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "**", "*.py"), recursive=True))
    random.Random(0).shuffle(files)
    for f in files[:max_files]:
        try:
            with open(f, encoding="utf-8") as fh:
                yield squeeze(fh.read())
        except Exception:
            pass


def build_tokenizer(vocab_size):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus_iter(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=None, eos_token=EOM, pad_token=PAD, unk_token=None, model_max_length=32768
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--max-pos", type=int, default=4096)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)

    tok = build_tokenizer(a.vocab)
    tok.save_pretrained(a.out)
    tc = os.path.join(a.out, "tokenizer_config.json")
    d = json.load(open(tc))
    d["tokenizer_class"] = "PreTrainedTokenizerFast"
    json.dump(d, open(tc, "w"), indent=2)
    # also ship the template as a standalone file (vLLM/transformers read chat_template.jinja too)
    vocab = len(tok)
    vocab_padded = ((vocab + 63) // 64) * 64
    head_dim = a.hidden // a.heads
    assert head_dim in (32, 64, 80, 96, 112, 128), head_dim
    eos = tok.convert_tokens_to_ids(EOM)
    cfg = Qwen2Config(
        vocab_size=vocab_padded,
        hidden_size=a.hidden,
        intermediate_size=a.hidden * 2,
        num_hidden_layers=a.layers,
        num_attention_heads=a.heads,
        num_key_value_heads=a.kv_heads,
        max_position_embeddings=a.max_pos,
        tie_word_embeddings=True,
        rope_theta=10000.0,
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=tok.convert_tokens_to_ids(PAD),
        torch_dtype="bfloat16",
    )
    model = Qwen2ForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(a.out, safe_serialization=True)
    GenerationConfig(eos_token_id=eos, pad_token_id=cfg.pad_token_id).save_pretrained(a.out)
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIAL}
    enc = {
        m: tok.encode(m, add_special_tokens=False)
        for m in ["<|open|>think<|sep|>", "<|close|>think<|sep|>", "<|open|>response<|sep|>", "<|open|>tools<|sep|>"]
    }
    print(
        json.dumps(
            {
                "out": a.out,
                "tokenizer_len": vocab,
                "vocab_size": vocab_padded,
                "params": sum(p.numel() for p in model.parameters()),
                "special_ids": ids,
                "marker_encodings": enc,
            }
        )
    )


if __name__ == "__main__":
    main()

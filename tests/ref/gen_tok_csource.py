#!/usr/bin/env python3
"""Reference ids for tests/test_tok.c's tok.csource tests: the three tokenizers of gen_tok.py on C
source, from tiktoken and Hugging Face tokenizers (PyPI).

    /work/venv/bin/python tests/ref/gen_tok_csource.py   (from the repository root; no network)

The text is tests/ref/tok_csource.txt, a committed copy of the header part src/06_gemm.h (the
parts change; the copy does not): identifiers, intrinsics, hex and float literals, comments,
runs of spaces before newlines.  Tokenizers: 0 GPT-2 (tiktoken from ../shared/data/gpt2-bpe, HF
built as GPT2TokenizerFast builds it), 1 tests/ref/tok_llama3.json, 2 tests/ref/tok_qwen2.json
(HF, and tiktoken on the same vocabulary); both libraries must agree.  The ids are tiktoken's
encode_ordinary (the text holds no special-token string, so HF's encode gives the same).

Writes tests/ref/tok_csource_ids.txt, one line per tokenizer:
    tokenizer count fnv64 k id_1 ... id_k
fnv64: FNV-1a 64 over all the ids as little-endian int32; the first k ids written out (2000 for
GPT-2, 200 for the others).
"""
import os
import sys

from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_tok as g  # noqa: E402  (its tokenizers, regexes and hash)


def main():
    for p in (g.ENC, g.BPE):
        if not os.path.exists(p):
            sys.exit("gen_tok_csource.py: %s is missing (the reference needs ../shared/data)" % p)
    text = open(os.path.join(g.REF, "tok_csource.txt"), encoding="utf-8").read()
    tk_gpt2, hf_gpt2 = g.gpt2_tiktoken(), g.gpt2_hf()
    hf_l3 = Tokenizer.from_file(os.path.join(g.REF, "tok_llama3.json"))
    hf_q2 = Tokenizer.from_file(os.path.join(g.REF, "tok_qwen2.json"))
    tk_l3, tk_q2 = g.tiktoken_of(hf_l3, g.LLAMA3_RE, "l3"), g.tiktoken_of(hf_q2, g.QWEN2_RE, "q2")
    rows = []
    for t, tt, hf in ((0, tk_gpt2, hf_gpt2), (1, tk_l3, hf_l3), (2, tk_q2, hf_q2)):
        ordinary = tt.encode_ordinary(text)
        special = tt.encode(text, allowed_special="all")
        if hf.encode(text, add_special_tokens=False).ids != special:
            sys.exit("gen_tok_csource.py: tiktoken and HF tokenizers disagree (tokenizer %d)" % t)
        if t and g.emulate(tt, g.LLAMA3_RE if t == 1 else g.QWEN2_RE, text.encode("utf-8"), False) != ordinary:
            sys.exit("gen_tok_csource.py: tiktoken and the regex module disagree (tokenizer %d)" % t)
        if special != ordinary:
            sys.exit("gen_tok_csource.py: the text holds a special-token string (tokenizer %d)" % t)
        k = 2000 if t == 0 else 200
        rows.append("%d %d 0x%016x %d %s" % (t, len(ordinary), g.fnv64(ordinary), k, " ".join(map(str, ordinary[:k]))))
        print("tokenizer %d: %d ids" % (t, len(ordinary)))
    with open(os.path.join(g.REF, "tok_csource_ids.txt"), "w") as f:
        f.write("# tokenizer count fnv64 k first-k-ids (tests/ref/gen_tok_csource.py, text tests/ref/tok_csource.txt)\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reference token ids for tests/test_tok.c, from tiktoken and Hugging Face tokenizers (PyPI).

    /work/venv/bin/python tests/ref/gen_tok.py        (from the repository root; no network)

needs ../shared/data (GPT-2's encoder.json + vocab.bpe, tinyshakespeare.txt) and writes
    tests/ref/tok_llama3.json   a small Llama-3-style tokenizer.json: BPE trained by HF's BpeTrainer
                                on tinyshakespeare (vocab 1000), pre-tokenizer Split(Llama-3 regex) +
                                ByteLevel, ignore_merges, three special tokens; merges as pairs
    tests/ref/tok_qwen2.json    the same style with Qwen2's regex (one digit per pre-token), vocab
                                600, no ignore_merges, merges written as "a b" strings
    tests/ref/tok_cases.bin     the adversarial corpus and its ids: "LTTOKREF", u32 ntexts, then per
                                text: u32 bytes, the text, and six id lists (u32 n, n x u16 ids),
                                tokenizer 0 GPT-2, 1 tok_llama3, 2 tok_qwen2, each without then with
                                LT_TOK_SPECIAL (all little-endian)
    tests/ref/tok_hashes.txt    for whole files under ../shared/data: tokenizer flags file count
                                hash (FNV-1a 64 over the ids as little-endian int32)

GPT-2 (tokenizer 0): tiktoken's Encoding built from the two files (tiktoken.load's
data_gym_to_mergeable_bpe_ranks, its gpt2 pattern, special <|endoftext|> = 50256) and HF
tokenizers' BPE on the same files built as GPT2TokenizerFast builds it (ByteLevel pre-tokenizer,
<|endoftext|> added) must agree on every case; the committed ids are theirs.
tok_llama3 / tok_qwen2: HF's Tokenizer on the file, and a tiktoken Encoding on the same vocabulary
(ranks = ids, the file's regex) must agree.  Special tokens: flags 1 uses tiktoken's
allowed_special="all" and HF's encode (which always splits added tokens); flags 0 uses tiktoken's
encode_ordinary only (HF has no such mode).

Invalid UTF-8 (no reference tokenizer accepts bytes): the library's documented rule, computed
here: each byte of an invalid sequence is a character of no class (Python's surrogateescape gives
exactly those bytes one lone surrogate each, which the regex module classes as none of L, N, \\s),
pre-tokens by the regex module, BPE of each pre-token's bytes by tiktoken's encode_single_piece.
"""
import json
import os
import random
import struct
import sys
import unicodedata

import regex
import tiktoken
from tiktoken.load import data_gym_to_mergeable_bpe_ranks
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REF = os.path.join(ROOT, "tests", "ref")
SHARED = os.environ.get("LT_SHARED_DIR", os.path.join(ROOT, "..", "shared", "data"))
if not os.path.isdir(SHARED):
    SHARED = "/work/shared/data"
ENC = os.path.join(SHARED, "gpt2-bpe", "encoder.json")
BPE = os.path.join(SHARED, "gpt2-bpe", "vocab.bpe")
SHAKE = os.path.join(SHARED, "tinyshakespeare.txt")

GPT2_RE = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_RE = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
             r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2_RE = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
            r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]


def fnv64(ids):
    h = 0xcbf29ce484222325
    for b in struct.pack("<%di" % len(ids), *ids):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


# -- the tokenizers -------------------------------------------------------------------------------
def gpt2_tiktoken():
    ranks = data_gym_to_mergeable_bpe_ranks(vocab_bpe_file=BPE, encoder_json_file=ENC)
    from tiktoken_ext.openai_public import r50k_pat_str
    return tiktoken.Encoding("gpt2-local", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257)


def gpt2_hf():
    """GPT-2 in HF tokenizers as GPT2TokenizerFast builds it: BPE from the two files, ByteLevel
    pre-tokenizer (GPT-2's regex, no prefix space), <|endoftext|> added as a special token."""
    tok = Tokenizer(models.BPE.from_file(ENC, BPE))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>"])
    return tok


def train(pattern, vocab_size, ignore_merges, path, string_merges):
    text = open(SHAKE, encoding="utf-8").read()
    tok = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator([text[i:i + 4096] for i in range(0, len(text), 4096)], trainer=tr)
    tok.add_special_tokens(SPECIALS)
    js = json.loads(tok.to_str())
    if string_merges:
        js["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in js["model"]["merges"]]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(js, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")
    return Tokenizer.from_file(path)


def tiktoken_of(hf, pattern, name):
    """A tiktoken Encoding on an HF byte-level vocabulary: ranks = ids (the trainer numbers merged
    tokens in merge order, so id order is merge order)."""
    b2u = pre_tokenizers.ByteLevel.alphabet()
    table = bytes_to_unicode()
    u2b = {v: k for k, v in table.items()}
    assert set(u2b) == set(b2u)
    vocab = hf.get_vocab(with_added_tokens=False)
    ranks = {bytes(u2b[c] for c in tokstr): i for tokstr, i in vocab.items()}
    specials = {t: hf.token_to_id(t) for t in SPECIALS}
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


# -- the corpus -----------------------------------------------------------------------------------
def corpus():
    rnd = random.Random(24)
    cases = []
    add = cases.append
    # every general category (characters assigned in Python's Unicode, which all three tables know)
    by_cat = {}
    for c in range(0x110000):
        cat = unicodedata.category(chr(c))
        if cat in ("Cs", "Cn"):
            continue
        by_cat.setdefault(cat, []).append(c)
    for cat in sorted(by_cat):
        cps = by_cat[cat]
        pick = [cps[0], cps[-1]] + rnd.sample(cps, min(30, len(cps)))
        add("".join(chr(c) for c in pick))
        q = [chr(pick[i % len(pick)]) for i in range(8)]
        add(" ".join(chr(c) for c in pick[:12]) + " x" + q[2] + "1" + q[3] + " ")
        add("a" + q[4] + "b " + q[5] + "7 '" + q[6] + "\n" + q[7] + "  ")
    # whitespace of every kind, alone and in runs, next to letters, digits and punctuation
    ws = ["\t", "\n", "\x0b", "\x0c", "\r", " ", "\x85", "\xa0", "\u1680", "\u2000", "\u2005", "\u200a", "\u2028",
          "\u2029", "\u202f", "\u205f", "\u3000", "\x1c", "\x1d", "\x1e", "\x1f", "\u180e", "\u200b", "\ufeff"]
    for w in ws:
        add("a" + w + "b" + w + w + "c" + w * 3 + "1" + w + "!" + w + "\n" + w + w)
        add(w * 5 + "x" + w)
    for k in range(60):
        add("".join(rnd.choice(ws + ["a", "1", ".", "\n\n", "  ", "'s"]) for _ in range(rnd.randint(5, 40))))
    # long runs
    add(" " * 1000 + "x")
    add(" " * 1000)
    add("\n" * 300 + "a" + "\r\n" * 100)
    add("7" * 5000)
    add("1234567890" * 30 + " 3.14159 1,000,000 0x1F 1e10")
    add("a" * 1000)
    add("ab" * 700)
    add("!" * 300 + "=" * 200 + "-" * 100)
    add("".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3000)))
    add("\u3000" * 50 + "\xa0" * 50 + "\t" * 50)
    add(" \n" * 200)
    # contractions in every case, and near misses
    for c in ["s", "t", "re", "ve", "m", "ll", "d"]:
        for v in sorted({c, c.upper(), c.capitalize(), c[:-1] + c[-1].upper()}):
            add("it'" + v + " IT'" + v + " '" + v + "x '" + v + "\n'" + v + "'" + v)
    add("'ſ 'ſt 'K 'İ 'ß ’s ‘ll'' s' ''s '''re'' 'x 'S'T")
    add("don't won't I'm you're they've we'll he'd DON'T WON'T I'M YOU'RE THEY'VE WE'LL HE'D")
    # special-token strings inside text
    add("<|endoftext|>")
    add("a<|endoftext|>b <|endoftext|> <|endoftext|><|endoftext|>\n<|endoftext|>\n")
    add("<|endoftext <|endoftext|x endoftext|> <|<|endoftext|>|>")
    add("<|begin_of_text|>Hello<|eot_id|><|end_of_text|> <|begin_of_text|<|eot_id|>x")
    # scripts: combining marks, emoji sequences, CJK, right-to-left, mixed
    add("e\u0301 a\u0300\u0301\u0302 \u0301x Z\u0351\u0352\u0353\u0354 n\u0303o\u0308")
    add("नमस्ते दुनिया क्षत्रिय ภาษาไทย 한국어 한 日本語のテキスト ｶﾀｶﾅ 中文文本，标点。")
    add("👨\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 👍🏽 🇫🇷🇩🇪 1️⃣ ❤️ 🤷🏾\u200d♀️ a👍b 😀😀😀")
    add("مرحبا بالعالم ٣٤٥ שלום עולם \u200f\u200e abc \u202eRTL\u202c ؟!")
    add("Hello世界مرحبا123abc ΑΒΓ αβγ Привет мир naïve café résumé Ⅻ ½ ¾ ² ³ ٠١٢٣ ০১২")
    add("𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟏𝟐𝟑 \U0001F600\U0001F601 \U00010400\U00010428 \U000E0041")
    add("\x00\x01\x02\x7f a\x00b \x1b[31mred\x1b[0m")
    add("")
    add("x")
    add(" ")
    # random strings over a mixed alphabet
    alpha = ("abcXYZ019 .,;:'\"!?-_()[]{}<>|\\/\n\t\r  éßÆ中文日本ひらがなカタカナ한국мирαβ٣४"
             "\u0301\u200d\u3000\xa0\U0001F600\U0001F44D\U0001F3FD")
    for k in range(200):
        n = rnd.randint(1, 120)
        add("".join(rnd.choice(alpha) for _ in range(n)))
    for k in range(40):   # words
        words = ["the", "The", "THE", "it's", "'ll", "don't", "1984", "12345", "3.14", "...", "--", "über", "東京",
                 "  ", "\n", "\n\n", " \n ", "<|endoftext|>", "😀", "e\u0301"]
        add("".join(rnd.choice(words) + rnd.choice(["", " ", "", "\n", "  "]) for _ in range(rnd.randint(3, 30))))
    return cases


def invalid_utf8():
    rnd = random.Random(2424)
    cases = [b"\xff", b"\xfe\xff", b"a\xffb", b"\xc3", b"\xc3(", b"\xe2\x82", b"\xe2\x82(x", b"\xf0\x9f\x98",
             b"\xed\xa0\x80 surrogate", b"\xc0\xaf overlong", b"\xf4\x90\x80\x80 past 10FFFF", b"\x80\x81\x82 ",
             b"it\xff's 'S\xfe", b" \xff\xff  \n\xfe", b"\xe4\xb8\xad\xff\xe6\x96\x87", b"12\xff34", b"\xffabc\xff",
             b"<|endoftext|>\xff<|endoftext|>", bytes(range(256)), bytes(range(255, -1, -1))]
    for k in range(40):
        cases.append(bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 60))))
    return cases


def emulate(enc, pattern, data, special):
    """The library's rule for bytes that are not UTF-8 (see the module doc)."""
    text = data.decode("utf-8", "surrogateescape")
    r = regex.compile(pattern)
    out = []
    parts = [text]
    if special:
        sp = "(" + "|".join(regex.escape(s) for s in sorted(enc.special_tokens_set, key=len, reverse=True)) + ")"
        parts = regex.split(sp, text)
    for i, part in enumerate(parts):
        if special and i % 2 == 1:
            out.append(enc.encode_single_token(part))
            continue
        for piece in r.findall(part):
            out.extend(enc._encode_single_piece(piece.encode("utf-8", "surrogateescape")))
    return out


def main():
    for p in (ENC, BPE, SHAKE):
        if not os.path.exists(p):
            sys.exit("gen_tok.py: %s is missing (the reference needs ../shared/data)" % p)
    tk_gpt2, hf_gpt2 = gpt2_tiktoken(), gpt2_hf()
    hf_l3 = train(LLAMA3_RE, 1000, True, os.path.join(REF, "tok_llama3.json"), False)
    hf_q2 = train(QWEN2_RE, 600, False, os.path.join(REF, "tok_qwen2.json"), True)
    tk_l3, tk_q2 = tiktoken_of(hf_l3, LLAMA3_RE, "l3"), tiktoken_of(hf_q2, QWEN2_RE, "q2")
    texts = corpus()
    records, bad = [], 0

    def check(what, a, b, text):
        nonlocal bad
        if a != b:
            bad += 1
            if bad <= 10:
                print("DIFFER %s on %r:\n  %s\n  %s" % (what, text[:80], a[:40], b[:40]))

    for text in texts:
        data = text.encode("utf-8")
        ids6 = []
        # GPT-2
        a = tk_gpt2.encode_ordinary(text)
        check("gpt2 tiktoken/regex-module", a, emulate(tk_gpt2, GPT2_RE, data, False), text)
        ids6.append(a)
        a = tk_gpt2.encode(text, allowed_special="all")
        check("gpt2 tiktoken/HF (specials)", a, hf_gpt2.encode(text).ids, text)
        ids6.append(a)
        # the trained ones
        for t, hf, tt, pat in ((1, hf_l3, tk_l3, LLAMA3_RE), (2, hf_q2, tk_q2, QWEN2_RE)):
            a = tt.encode_ordinary(text)
            check("%d tiktoken/regex-module" % t, a, emulate(tt, pat, data, False), text)
            ids6.append(a)
            a = hf.encode(text, add_special_tokens=False).ids
            check("%d HF/tiktoken (specials)" % t, a, tt.encode(text, allowed_special="all"), text)
            ids6.append(a)
        records.append((data, ids6))
    for data in invalid_utf8():
        ids6 = []
        for t, enc, pat in ((0, tk_gpt2, GPT2_RE), (1, tk_l3, LLAMA3_RE), (2, tk_q2, QWEN2_RE)):
            for special in (0, 1):
                ids6.append(emulate(enc, pat, data, special))
        records.append((data, ids6))
    with open(os.path.join(REF, "tok_cases.bin"), "wb") as f:
        f.write(b"LTTOKREF" + struct.pack("<I", len(records)))
        for data, ids6 in records:
            f.write(struct.pack("<I", len(data)) + data)
            for ids in ids6:
                f.write(struct.pack("<I%dH" % len(ids), len(ids), *ids))
    # whole files
    shake = open(SHAKE, encoding="utf-8").read()
    lines = []
    for t, name, ids_fn in ((0, "gpt2", lambda s: tk_gpt2.encode_ordinary(s)),
                            (1, "tok_llama3", lambda s: hf_l3.encode(s, add_special_tokens=False).ids),
                            (2, "tok_qwen2", lambda s: hf_q2.encode(s, add_special_tokens=False).ids)):
        ids = ids_fn(shake)
        lines.append("%d 0 tinyshakespeare.txt %d 0x%016x" % (t, len(ids), fnv64(ids)))
        print("%s: tinyshakespeare.txt %d tokens" % (name, len(ids)))
    check("gpt2 tiktoken/HF on tinyshakespeare", tk_gpt2.encode_ordinary(shake), hf_gpt2.encode(shake).ids, "tinyshakespeare")
    check("l3 HF/tiktoken on tinyshakespeare", hf_l3.encode(shake).ids, tk_l3.encode_ordinary(shake), "tinyshakespeare")
    check("q2 HF/tiktoken on tinyshakespeare", hf_q2.encode(shake).ids, tk_q2.encode_ordinary(shake), "tinyshakespeare")
    # the library's own source: tiktoken and HF must agree (not committed: the file changes)
    src = open(os.path.join(ROOT, "ltrain.h"), encoding="utf-8").read()
    a = tk_gpt2.encode(src, allowed_special="all")
    check("gpt2 tiktoken/HF on ltrain.h", a, hf_gpt2.encode(src).ids, "ltrain.h")
    print("gpt2: ltrain.h %d tokens (with <|endoftext|> recognised), tiktoken and HF agree: %s" % (
        len(a), a == hf_gpt2.encode(src).ids))
    with open(os.path.join(REF, "tok_hashes.txt"), "w") as f:
        f.write("# tokenizer flags file count fnv64 (tests/ref/gen_tok.py; 0 GPT-2, 1 tok_llama3, 2 tok_qwen2)\n")
        f.write("\n".join(lines) + "\n")
    print("tok_cases.bin: %d texts (%d invalid UTF-8), %d bytes of text; reference disagreements: %d" % (
        len(records), len(invalid_utf8()), sum(len(d) for d, _ in records), bad))
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()

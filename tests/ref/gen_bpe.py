"""Reference merges for tests/test_tok_train.c: Hugging Face tokenizers' BpeTrainer.

Run from the repository root:   /work/venv/bin/python tests/ref/gen_bpe.py
(tokenizers from PyPI).  Trains byte-level BPE exactly as lt_tok_train is asked to:
    pre-tokenizer  ByteLevel(add_prefix_space=False, use_regex=True)   (GPT-2's split)
    trainer        BpeTrainer(vocab_size=V, min_frequency=0, special_tokens=["<|endoftext|>"],
                              initial_alphabet=ByteLevel.alphabet())
on the whole text as one sequence (train_from_iterator([text]); Tokenizer.train(files) would
split the text into lines first, which changes the pre-tokens at line ends).
Writes
    tests/ref/bpe_text.txt       the small committed input (written once; kept as committed)
    tests/ref/bpe_merges.txt     its merges at vocab 1024, one "left right" per line (HF's
                                 byte-level characters, as in merges.txt / vocab.bpe)
    tests/ref/bpe_hashes.txt     "NAME VOCAB N_MERGES FNV1A64" for the small text and for
                                 ../shared/data/tinyshakespeare.txt at vocab 4096 (when present):
                                 the FNV-1a 64 hash of the merges file's lines "left right\\n";
                                 small_llama3 / small_qwen2: the small text pre-tokenized as
                                 Llama-3 / Qwen2 do (a Split on their regex, then ByteLevel
                                 without regex; lt_bpe_opts.pattern LT_PRETOK_CL100K / QWEN2).
"""
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("LT_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared", "data"))


def small_text():
    """A few paragraphs of mixed text: prose with contractions, numbers, code, whitespace runs,
    accented Latin, Greek, CJK and emoji, so that pre-tokenization and ties are exercised."""
    path = os.path.join(HERE, "bpe_text.txt")
    if os.path.exists(path):
        return open(path, "rb").read().decode("utf-8")
    prose = ("It's the last of the lot, they'll say; we've had 12 of 13 and I'd rather not. "
             "The quick brown fox jumps over the lazy dog, and the dog doesn't mind. ")
    code = ("for (int i = 0; i < n; i++) {\n    y[i] += a * x[i];   /* axpy */\n}\n"
            "    \n\t\tif (x != 0x7f) return -1;\n")
    intl = ("Café déjà vu, naïve façade; Ελληνικά γράμματα; 日本語のテキスト; "
            "emoji 🙂👍🏽 and 👩‍👩‍👧 families.\n")
    nums = " ".join(str(k * k * 7919 % 100003) for k in range(40)) + "\n"
    parts = []
    for r in range(24):
        parts.append(prose * (1 + r % 3) + "\n")
        if r % 2 == 0:
            parts.append(code)
        if r % 3 == 0:
            parts.append(intl)
        if r % 5 == 0:
            parts.append(nums)
        parts.append("  " * (r % 4) + "\n\n")
    text = "".join(parts)
    open(path, "wb").write(text.encode("utf-8"))
    return text


LLAMA3_RE = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
             r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2_RE = LLAMA3_RE.replace(r"\p{N}{1,3}", r"\p{N}")


def train(text, vocab, regex=None):
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if regex:
        from tokenizers import Regex
        tk.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tk.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=vocab, min_frequency=0, show_progress=False,
                             special_tokens=["<|endoftext|>"],
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator([text], trainer=tr)
    return tk


def merges_of(tk):
    import json
    m = json.loads(tk.to_str())["model"]["merges"]
    return [" ".join(x) if isinstance(x, list) else x for x in m]


def fnv(lines):
    h = 0xcbf29ce484222325
    for ln in lines:
        for b in (ln + "\n").encode("utf-8"):
            h ^= b
            h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    rows = []
    text = small_text()
    for vocab in (300, 1024):
        tk = train(text, vocab)
        m = merges_of(tk)
        if vocab == 1024:
            open(os.path.join(HERE, "bpe_merges.txt"), "w", encoding="utf-8").write("".join(x + "\n" for x in m))
            tk.save(os.path.join(HERE, "..", "..", "build", "tmp", "bpe_hf_small.json")) if os.path.isdir(
                os.path.join(HERE, "..", "..", "build", "tmp")) else None
        rows.append("small %d %d %016x" % (vocab, len(m), fnv(m)))
    for name, regex in (("small_llama3", LLAMA3_RE), ("small_qwen2", QWEN2_RE)):
        m = merges_of(train(text, 1024, regex))
        rows.append("%s 1024 %d %016x" % (name, len(m), fnv(m)))
    shakes = os.path.join(SHARED, "tinyshakespeare.txt")
    if os.path.exists(shakes):
        t = open(shakes, "rb").read().decode("utf-8")
        for vocab in (4096,):
            m = merges_of(train(t, vocab))
            rows.append("tinyshakespeare %d %d %016x" % (vocab, len(m), fnv(m)))
    else:
        print("no %s: tinyshakespeare hash not written" % shakes, file=sys.stderr)
    open(os.path.join(HERE, "bpe_hashes.txt"), "w").write("".join(r + "\n" for r in rows))
    print("\n".join(rows))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The named corpus of malformed files for tests/test_harden.c, and the fuzzers' seed corpora.

    python3 tests/gen_malformed.py            (from the repository root; standard library only)

writes
    tests/malformed/*                 one file per way of being broken, a few valid ones
    tests/malformed/MANIFEST.tsv      file <TAB> reader <TAB> expected <TAB> what it breaks
    tests/fuzz/seeds/{st,shard,ckpt}/ valid files the fuzzers start from

reader: st      lt_st_parse of the bytes
        shard   lt_shard_parse with vocab 16
        ckpt    lt_checkpoint_load into the tiny model below, with AdamW and a train state
        init    build/train_gpt --init FILE   --data valid_shard.bin ...
        resume  build/train_gpt --resume FILE --data valid_shard.bin ...
        data    build/train_gpt --data FILE   (a fresh tiny model, --vocab 16)
expected: OK (must load), or a keyword the error message must contain.

The tiny model: vocab 16, ctx 8, 1 layer, 2 heads, 4 channels (GPT-2 layout and names, as
lt_gpt_create makes them), saved as lt_checkpoint_save saves it: weights, optim.exp_avg.* and
optim.exp_avg_sq.*, train.state (I64 [7]: step, data epoch, data index, 4 RNG words).
The output is deterministic: running the script again rewrites the same bytes.
"""
import json
import os
import random
import shutil
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "malformed")
SEEDS = os.path.join(ROOT, "fuzz", "seeds")

V, CTX, L, H, C = 16, 8, 1, 2, 4
rows = []            # (file, reader, expected, what)


def write(name, data, reader=None, expected=None, what=""):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    if reader:
        rows.append((name, reader, expected, what))


def expect(name, reader, expected, what=""):
    rows.append((name, reader, expected, what))


def st_bytes(header_text, data=b"", hlen=None):
    """A safetensors file from the header text as given (no checks): u64 length, text, data."""
    h = header_text.encode("utf-8") if isinstance(header_text, str) else header_text
    return struct.pack("<Q", len(h) if hlen is None else hlen) + h + data


def st_build(tensors, meta=None, pad=True):
    """tensors: [(name, dtype, shape, bytes)] in file order -> a valid file (as our writer)."""
    hdr, off = {}, 0
    if meta is not None:
        hdr["__metadata__"] = meta
    blob = b""
    for name, dtype, shape, data in tensors:
        hdr[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(data)]}
        off += len(data)
        blob += data
    text = json.dumps(hdr, separators=(",", ":"))
    if pad:
        text += " " * (-len(text) % 8)
    return st_bytes(text, blob)


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ---- the tiny checkpoint ------------------------------------------------------------------------
def gpt_params():
    """(name, shape) in lt_gpt_create's order."""
    p = [("wte.weight", (V, C)), ("wpe.weight", (CTX, C))]
    for l in range(L):
        h = "h.%d." % l
        p += [(h + "ln_1.weight", (C,)), (h + "ln_1.bias", (C,)),
              (h + "attn.c_attn.weight", (C, 3 * C)), (h + "attn.c_attn.bias", (3 * C,)),
              (h + "attn.c_proj.weight", (C, C)), (h + "attn.c_proj.bias", (C,)),
              (h + "ln_2.weight", (C,)), (h + "ln_2.bias", (C,)),
              (h + "mlp.c_fc.weight", (C, 4 * C)), (h + "mlp.c_fc.bias", (4 * C,)),
              (h + "mlp.c_proj.weight", (4 * C, C)), (h + "mlp.c_proj.bias", (C,))]
    p += [("ln_f.weight", (C,)), ("ln_f.bias", (C,))]
    return p


def ckpt_parts(step=3, epoch=0, index=3, rng=None):
    """The tensors and metadata of a valid training checkpoint (mutable copies)."""
    r = random.Random(1)
    tensors = []
    for name, shape in gpt_params():
        n = numel(shape)
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
            vals = [1.0] * n
        elif name.endswith(".bias"):
            vals = [0.0] * n
        else:
            vals = [r.gauss(0, 0.02) for _ in range(n)]
        tensors.append([name, "F32", list(shape), f32(vals)])
    for state, scale in (("exp_avg", 1e-3), ("exp_avg_sq", 1e-6)):
        for name, shape in gpt_params():
            vals = [abs(r.gauss(0, scale)) if state == "exp_avg_sq" else r.gauss(0, scale) for _ in range(numel(shape))]
            tensors.append(["optim.%s.%s" % (state, name), "F32", list(shape), f32(vals)])
    if rng is None:
        rng = [0x0123456789ABCDEF, -0x1122334455667788, 42, 7]
    tensors.append(["train.state", "I64", [7], struct.pack("<7q", step, epoch, index, *rng)])
    meta = {"format": "ltrain-gpt2", "n_layer": str(L), "n_head": str(H), "n_embd": str(C), "n_ctx": str(CTX),
            "vocab_size": str(V), "note": "tests/gen_malformed.py", "optimizer": "adamw"}
    return tensors, meta


def ckpt(**kw):
    t, m = ckpt_parts(**kw)
    return st_build([tuple(x) for x in t], m)


def ckpt_edit(name, fn, expected, readers=("ckpt", "resume"), what=""):
    """A checkpoint changed by fn(tensors, meta) (a list of [name, dtype, shape, bytes])."""
    t, m = ckpt_parts()
    fn(t, m)
    write(name, st_build([tuple(x) for x in t], m))
    for r in readers:
        expect(name, r, expected, what)


def find(t, name):
    for i, x in enumerate(t):
        if x[0] == name:
            return i
    raise KeyError(name)


# ---- token shards ---------------------------------------------------------------------------------
def shard(tokens, magic=20240520, version=1, count=None, extra=b""):
    hdr = struct.pack("<3i", magic, version, len(tokens) if count is None else count) + b"\0" * (1024 - 12)
    return hdr + struct.pack("<%dH" % len(tokens), *tokens) + extra


# -- tokenizers (src/18_data_tok.h) ----------------------------------------------------------------
def byte_char(b):
    """GPT-2's bytes_to_unicode for one byte."""
    if 0x21 <= b <= 0x7e or 0xa1 <= b <= 0xac or b >= 0xae:
        return chr(b)
    if b <= 0x20:
        return chr(256 + b)
    if b <= 0xa0:
        return chr(256 + 33 + b - 0x7f)
    return chr(256 + 67)


def tok_files():
    """A small byte-level vocabulary (256 byte tokens + Ġt, he, Ġthe) as GPT-2 files and as a
    tokenizer.json, and ways of breaking each.  Readers: tok_enc (the file as encoder.json, with
    tok_valid_vocab.bpe), tok_bpe (the file as vocab.bpe, with tok_valid_encoder.json), tok_json."""
    vocab = {byte_char(b): b for b in range(256)}
    vocab.update({"\u0120t": 256, "he": 257, "\u0120the": 258})
    enc = json.dumps(vocab, ensure_ascii=False).encode("utf-8")
    bpe = "#version: 0.2\n\u0120 t\nh e\n\u0120t he\n".encode("utf-8")
    bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    l3 = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
                                                " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
         "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}

    def tj(model=None, added=None, pre=bl, norm=None, merges=None, drop=()):
        m = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
             "vocab": vocab, "merges": merges if merges is not None else ["\u0120 t", ["h", "e"], "\u0120t he"]}
        m.update(model or {})
        for k in drop:
            m.pop(k)
        d = {"version": "1.0", "truncation": None, "padding": None,
             "added_tokens": added if added is not None else [
                 {"id": 259, "content": "<|endoftext|>", "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True}],
             "normalizer": norm, "pre_tokenizer": pre, "post_processor": None, "decoder": {"type": "ByteLevel"},
             "model": m}
        return json.dumps(d, ensure_ascii=False).encode("utf-8")

    write("tok_valid_encoder.json", enc, "tok_enc", "OK", "valid: 256 byte tokens + 3 merged ones")
    write("tok_valid_vocab.bpe", bpe, "tok_bpe", "OK", "valid: 3 merges")
    write("tok_valid_tokenizer.json", tj(), "tok_json", "OK", "valid: ByteLevel, <|endoftext|> added")
    write("tok_valid_llama3.json", tj(model={"ignore_merges": True}, pre=l3), "tok_json", "OK",
          "valid: Split on the Llama-3 regex + ByteLevel, ignore_merges")
    write("tok_valid_nfc.json", tj(norm={"type": "Sequence", "normalizers": [{"type": "NFC"}]}), "tok_json", "OK",
          "valid: the NFC normalizer (in a Sequence, as Qwen2's)")
    for k in (0, 1, 100, len(enc) // 2, len(enc) - 1):
        write("tok_enc_trunc_%d.json" % k, enc[:k], "tok_enc", "lt_tok", "encoder.json cut to %d bytes" % k)
    e = enc[:-1]
    for name, tail, kw, what in (
            ("id_string", b', "zz": "7"}', "must be an integer", "an id given as a string"),
            ("id_float", b', "zz": 7.5}', "fraction", "an id 7.5"),
            ("id_null", b', "zz": null}', "must be an integer", "an id null"),
            ("id_array", b', "zz": [7]}', "must be an integer", "an id [7]"),
            ("id_negative", b', "zz": -1}', "ids must be in", "an id -1"),
            ("id_huge", b', "zz": 1180591620717411303424}', "ids must be in", "an id 2^70"),
            ("id_far", b', "zz": 1000000}', "ids must be below", "an id 10^6 for 260 tokens"),
            ("id_dup", b', "zz": 65}', "duplicate id 65", "two tokens with id 65"),
            ("token_dup", b', "he": 300}', "appears twice", "the key \"he\" twice"),
            ("alphabet", ', "\u20ac": 259}'.encode("utf-8"), "U+20AC", "a token with a character outside the alphabet"),
            ("utf8", b', "\xff": 259}', "invalid UTF-8", "a raw 0xff byte in a key"),
            ("surrogate", b', "\\udc00": 259}', "lone low surrogate", "a lone \\udc00 escape"),
            ("escape", b', "\\q": 259}', "unknown escape", "an escape \\q"),
            ("control", b', "a\tb": 259}', "control character", "a raw tab inside a key"),
            ("garbage", b'} x', "more text after", "text after the object"),
            ("deep", b', "zz": ' + b"[" * 200 + b"]" * 200 + b"}", "must be an integer", "an id nested 200 deep")):
        write("tok_enc_%s.json" % name, e + tail, "tok_enc", kw, what)
    write("tok_enc_array.json", b"[" + enc + b"]", "tok_enc", "expected '{'", "the vocabulary inside an array")
    write("tok_enc_empty_object.json", b"{}", "tok_enc", "the vocabulary is empty", "{}")
    nox = dict(vocab)
    nox.pop("x")
    write("tok_enc_no_byte.json", json.dumps(nox, ensure_ascii=False).encode("utf-8"), "tok_enc", "no token for byte 0x78",
          "byte 'x' has no token")
    for name, text, kw, what in (
            ("one_token", "\u0120 t\nhe\n", "not two tokens", "a line with one token"),
            ("two_spaces", "\u0120 t\nh  e\n", "not two tokens", "two spaces"),
            ("unknown", "zz e\n", "not a token", "a merge naming an unknown token"),
            ("no_result", "t h\n", "makes no token", "t + h is no token"),
            ("repeat", "h e\n\u0120 t\nh e\n", "repeats merge 0", "a merge given twice"),
            ("alphabet", "h \u20ac\n", "U+20AC", "a character outside the alphabet")):
        write("tok_bpe_%s.bpe" % name, text.encode("utf-8"), "tok_bpe", kw, what)
    write("tok_bpe_utf8.bpe", b"h \xe2\x82\n", "tok_bpe", "invalid UTF-8", "a UTF-8 sequence cut short")
    write("tok_bpe_trunc_mid_char.bpe", bpe[:-6], "tok_bpe", "line 4", "vocab.bpe cut inside the last line's first character")
    j = tj()
    for k in (0, 10, len(j) // 2, len(j) - 1):
        write("tok_json_trunc_%d.json" % k, j[:k], "tok_json", "lt_tok", "tokenizer.json cut to %d bytes" % k)
    for name, data, kw, what in (
            ("wordpiece", tj(model={"type": "WordPiece"}), "only BPE", "model.type WordPiece"),
            ("no_vocab", tj(drop=("vocab",)), "has no vocab", "no model.vocab"),
            ("vocab_array", tj(model={"vocab": [["a", 1]]}), "expected '{'", "model.vocab as an array"),
            ("byte_fallback", tj(model={"byte_fallback": True}), "byte_fallback", "byte_fallback true"),
            ("dropout", tj(model={"dropout": 0.1}), "dropout", "dropout 0.1"),
            ("prefix", tj(model={"continuing_subword_prefix": "##"}), "continuing_subword_prefix", "a subword prefix"),
            ("merge_unknown", tj(merges=["h zz"]), "not a token", "a merge naming an unknown token"),
            ("merge_no_result", tj(merges=[["t", "h"]]), "makes no token", "t + h is no token"),
            ("merge_number", tj(merges=[5]), "expected a merge", "a merge given as a number"),
            ("merge_three", tj(merges=[["h", "e", "x"]]), "more than two strings", "a merge of three strings"),
            ("merge_repeat", tj(merges=["h e", ["h", "e"]]), "repeats merge 0", "a merge given twice"),
            ("added_dup_id", tj(added=[{"id": 5, "content": "<s>", "special": True}]), "duplicate id 5",
             "an added token on a vocabulary id"),
            ("added_huge_id", tj(added=[{"id": 2 ** 40, "content": "<s>", "special": True}]), "ids must be in",
             "an added token with id 2^40"),
            ("added_no_content", tj(added=[{"id": 259}]), "has no content", "an added token without content"),
            ("normalizer", tj(norm={"type": "NFKC"}), "normalizer NFKC", "an NFKC normalizer"),
            ("normalizer_seq", tj(norm={"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}),
             "normalizer Lowercase inside a Sequence", "a Sequence of NFC and Lowercase"),
            ("normalizer_seq_bad", tj(norm={"type": "Sequence", "normalizers": {"type": "NFC"}}), "expected '['",
             "a Sequence whose normalizers is an object"),
            ("pre_whitespace", tj(pre={"type": "Whitespace"}), "Whitespace is not supported", "a Whitespace pre-tokenizer"),
            ("pre_regex", tj(pre={"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "use_regex": False}]}), "not one of the patterns", "a Split on another regex"),
            ("pre_prefix", tj(pre=dict(bl, add_prefix_space=True)), "add_prefix_space", "add_prefix_space true"),
            ("pre_split_alone", tj(pre=l3["pretokenizers"][0]), "without the ByteLevel", "a Split without ByteLevel"),
            ("pre_missing", tj(pre=None), "pre_tokenizer is null", "pre_tokenizer null")):
        write("tok_json_%s.json" % name, data, "tok_json", kw, what)
    seed("tok", "json.bin", b"\x00" + tj(pre=l3))
    seed("tok", "gpt2.bin", b"\x01" + enc + b"\x00" + bpe)
    seed("tok", "text.bin", b"\x02The cat's 123 \xe4\xb8\xad<|endoftext|> \n\n  \xff it'S  x")
    seed("tok", "json_nfc.bin", b"\x00" + tj(norm={"type": "NFC"}, pre=l3))
    seed("tok", "text_nfc.bin", "\x02e\u0301 \u212b a\u0323\u0301 \u0958 \u1100\u1161\u11a8 \uac00\u11a8 ".encode() +
         b"\xcc\x81\xff\xcd\x84 x\xcc")


def seed(d, name, data):
    with open(os.path.join(SEEDS, d, name), "wb") as f:
        f.write(data)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for d in ("st", "shard", "ckpt", "tok"):
        p = os.path.join(SEEDS, d)
        if os.path.isdir(p):
            shutil.rmtree(p)
        os.makedirs(p)

    # -- safetensors: every truncation point of a small valid file ---------------------------------
    small = st_bytes('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', b"\x01\x02")
    write("st_valid_small.safetensors", small, "st", "OK", "valid: one U8 tensor")
    hlen = struct.unpack("<Q", small[:8])[0]
    for k in range(len(small)):
        kw = "too short" if k < 8 else "past the end"
        write("st_trunc_%03d.safetensors" % k, small[:k], "st", kw, "the valid small file cut to %d bytes" % k)

    # -- safetensors: bit flips in the header of a file with metadata ------------------------------
    base_hdr = ('{"__metadata__":{"k":"v"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                '"b":{"dtype":"U8","shape":[3],"data_offsets":[8,11]}}')
    base_hdr += " " * (-len(base_hdr) % 8)
    base = st_bytes(base_hdr, f32([1.5, -2.0]) + b"\x01\x02\x03")
    write("st_valid_meta.safetensors", base, "st", "OK", "valid: F32 and U8 tensors, __metadata__")
    flips = [   # (byte offset, or (text, occurrence, offset in it) in the header), bit, keyword
        (0, 6, None),                               # header length +/- 64
        (0, 3, None),                               # header length +/- 8
        (7, 7, None),                               # header length + 2^63
        (5, 0, None),                               # header length + 2^40
        (("{", 0, 0), 0, "JSON"),                   # '{' -> 'z'
        (("{", 1, 0), 1, "JSON"),                   # metadata '{' -> 'y'
        (('"', 0, 0), 0, "JSON"),                   # '"' -> '#'
        ((":", 0, 0), 3, "JSON"),                   # ':' -> '2'
        ((",", 0, 0), 0, "JSON"),                   # ',' -> '-'
        (("[", 0, 0), 1, "JSON"),                   # '[' -> 'Y'
        (("]", 1, 0), 0, "JSON"),                   # ']' -> '\\'
        (("}}", 0, 1), 0, "JSON"),                  # the last '}' -> '|'
        (("F32", 0, 0), 0, "unknown dtype"),        # F32 -> G32
        (("U8", 0, 0), 1, "unknown dtype"),         # U8 -> W8
        (("shape", 0, 0), 0, "unknown field"),      # shape -> rhape
        (("dtype", 1, 0), 2, "unknown field"),      # dtype -> `type (the second tensor)
        (("data_offsets", 0, 0), 5, "unknown field"),  # data_offsets -> Data_offsets
        (("[2]", 0, 1), 0, "needs"),                # shape [2] -> [3]: 12 bytes, range is 8
        (("[0,8]", 0, 1), 3, "needs"),              # [0,8] -> [8,8]: 0 bytes, shape needs 8
        (("11]", 0, 1), 1, "past the end"),         # [8,11] -> [8,13]
        (('"w"', 0, 1), 7, "UTF-8"),                # 'w' -> 0xF7: not UTF-8
        (('"b"', 0, 1), 7, "UTF-8"),                # 'b' -> 0xE2 then '"': a cut sequence
        (('"k"', 0, 1), 7, "UTF-8"),                # the metadata key
        (("}  ", 0, 1), 0, "trailing characters"),  # padding ' ' -> '!'
        (('"v"', 0, 0), 1, "JSON"),                 # '"v"' -> ' v"': a bare v
    ]
    for i, (where, bit, kw) in enumerate(flips):
        b = bytearray(base)
        if isinstance(where, int):
            pos = where
        else:
            text, occ, at = where
            pos = -1
            for _ in range(occ + 1):
                pos = base_hdr.index(text, pos + 1)
            pos += 8 + at
        b[pos] ^= 1 << bit
        if kw is None:   # a length flip: the keyword follows from the new length
            nh = struct.unpack("<Q", bytes(b[:8]))[0]
            kw = "over the limit" if nh > 100000000 else "past the end" if nh > len(b) - 8 else "JSON"
        write("st_flip_%02d.safetensors" % i, bytes(b), "st", kw,
              "bit %d of byte %d flipped in st_valid_meta.safetensors" % (bit, pos))

    # -- safetensors: each rule of the format broken on its own ------------------------------------
    ok_t = '"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'
    d8 = b"\0" * 8

    def rule(name, header, data, kw, what, hlen=None):
        write("st_rule_%s.safetensors" % name, st_bytes(header, data, hlen), "st", kw, what)

    write("st_rule_empty_file.safetensors", b"", "st", "too short", "0 bytes")
    write("st_rule_seven_bytes.safetensors", b"\x08\0\0\0\0\0\0", "st", "too short", "7 bytes")
    rule("header_over_100MB", "{}", b"", "over the limit", "header length 100000001", hlen=100000001)
    rule("header_2_64", "{}", b"", "over the limit", "header length 2^64-1", hlen=2 ** 64 - 1)
    rule("header_past_end", "{" + ok_t + "}", d8, "past the end", "header length 1000 > file", hlen=1000)
    rule("header_zero", "", d8, "JSON", "header length 0")
    rule("not_json", "hello world", b"", "JSON", "header is not JSON")
    rule("root_array", "[]", b"", "must be a JSON object", "header is an array")
    rule("root_string", '"x"', b"", "must be a JSON object", "header is a string")
    rule("trailing_garbage", "{" + ok_t + "}x", d8, "trailing characters", "text after the object")
    rule("trailing_comma", "{" + ok_t + ",}", d8, "expected a string key", "trailing comma")
    rule("unterminated_string", '{"a', b"", "unterminated string", "string runs to the end")
    rule("unclosed_object", "{" + ok_t, d8, "expected ',' or '}'", "no closing brace")
    rule("control_char", '{"a\x01":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "control character",
         "raw 0x01 in a name")
    rule("bad_escape", '{"a\\x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "invalid escape", "\\x")
    rule("bad_u_escape", '{"a\\u12g4":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "four hex digits",
         "\\u12g4")
    rule("lone_high_surrogate", '{"a\\ud800":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8,
         "surrogate", "\\ud800 alone")
    rule("lone_low_surrogate", '{"a\\udc00":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8,
         "surrogate", "\\udc00 alone")
    rule("nul_escape", '{"a\\u0000b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "u0000",
         "\\u0000 in a name")
    rule("nul_byte", b'{"a":\0{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "0x00", "a NUL byte")
    rule("bom", b'\xef\xbb\xbf{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "0xef", "UTF-8 BOM")
    rule("invalid_utf8", b'{"a\xff":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "UTF-8", "0xff")
    rule("overlong_utf8", b'{"a\xc0\xaf":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "UTF-8",
         "overlong '/'")
    rule("surrogate_utf8", b'{"a\xed\xa0\x80":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "UTF-8",
         "a surrogate in UTF-8")
    rule("fraction", '{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}', d8, "only integers", "2.0")
    rule("exponent", '{"a":{"dtype":"F32","shape":[2e0],"data_offsets":[0,8]}}', d8, "only integers", "2e0")
    rule("leading_zero", '{"a":{"dtype":"F32","shape":[02],"data_offsets":[0,8]}}', d8, "leading zero", "02")
    rule("minus_alone", '{"a":{"dtype":"F32","shape":[-],"data_offsets":[0,8]}}', d8, "without digits", "-")
    rule("true", '{"a":{"dtype":"F32","shape":[true],"data_offsets":[0,8]}}', d8, "not allowed", "true")
    rule("null", '{"a":null}', b"", "not allowed", "null")
    rule("int_overflow", '{"a":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8]}}', d8,
         "out of range", "a dim past int64")
    rule("deep_nesting", '{"a":' + "[" * 40 + "]" * 40 + "}", b"", "nested too deeply", "40 nested arrays")
    rule("entry_not_object", '{"a":5}', b"", "must be an object", "a tensor that is a number")
    rule("unknown_field", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}', d8, "unknown field",
         "an extra field")
    rule("field_twice", '{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}', d8, "twice",
         "dtype twice")
    rule("missing_dtype", '{"a":{"shape":[2],"data_offsets":[0,8]}}', d8, 'missing field "dtype"', "no dtype")
    rule("missing_shape", '{"a":{"dtype":"F32","data_offsets":[0,8]}}', d8, 'missing field "shape"', "no shape")
    rule("missing_offsets", '{"a":{"dtype":"F32","shape":[2]}}', d8, 'missing field "data_offsets"',
         "no data_offsets")
    rule("dtype_not_string", '{"a":{"dtype":4,"shape":[2],"data_offsets":[0,8]}}', d8, "dtype must be a string",
         "dtype 4")
    rule("unknown_dtype", '{"a":{"dtype":"F8","shape":[2],"data_offsets":[0,2]}}', b"\0\0", "unknown dtype", "F8")
    rule("dtype_lowercase", '{"a":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}}', d8, "unknown dtype", "f32")
    rule("shape_not_array", '{"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}}', d8, "shape must be an array",
         "shape 2")
    rule("shape_string", '{"a":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}}', d8, "not an integer",
         'shape ["2"]')
    rule("shape_negative", '{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', d8, "dims must be >= 0",
         "shape [-2]")
    rule("shape_9_dims", '{"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}}', d8,
         "more than 8 dims", "9 dims")
    rule("shape_product_overflow",
         '{"a":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}}', d8, "overflows",
         "2^96 elements")
    rule("shape_bytes_overflow", '{"a":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,8]}}', d8,
         "overflows", "2^62 F64 elements: 2^65 bytes")
    rule("shape_huge_small_data", '{"a":{"dtype":"U8","shape":[1000000000000],"data_offsets":[0,8]}}', d8,
         "needs", "a terabyte claimed, 8 bytes present")
    rule("size_mismatch", '{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', d8, "needs",
         "shape [3] of F32 is 12 bytes, range 8")
    rule("offsets_one", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[8]}}', d8, "data_offsets must be",
         "one offset")
    rule("offsets_three", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}}', d8, "data_offsets must be",
         "three offsets")
    rule("offsets_negative", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}}', d8, "data_offsets must be",
         "a negative offset")
    rule("offsets_not_array", '{"a":{"dtype":"F32","shape":[2],"data_offsets":"0,8"}}', d8, "data_offsets must be",
         "offsets as a string")
    rule("offsets_reversed", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}', d8, "end before they begin",
         "[8,0]")
    rule("offsets_past_end", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', d8, "past the end",
         "[4,12] of 8 bytes")
    rule("offsets_huge", '{"a":{"dtype":"U8","shape":[2],"data_offsets":[9223372036854775805,9223372036854775807]}}',
         d8, "past the end", "offsets near 2^63")
    rule("overlap", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
         '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', b"\0" * 12, "overlap", "[0,8] and [4,12]")
    rule("same_range", '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
         '"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', b"\0" * 4, "overlap", "two tensors on one range")
    rule("hole", '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
         '"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}', b"\0" * 12, "hole", "bytes 4..8 unused")
    rule("not_from_zero", '{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', d8, "hole", "data starts at 4")
    rule("trailing_bytes", "{" + ok_t + "}", b"\0" * 12, "trailing bytes", "4 bytes after the last tensor")
    rule("duplicate_name", '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
         '"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', d8, "duplicate tensor name", '"a" twice')
    rule("duplicate_name_escaped", '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
         '"\\u0061":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', d8, "duplicate tensor name",
         '"a" and "\\u0061"')
    rule("metadata_twice", '{"__metadata__":{},"__metadata__":{},' + ok_t + "}", d8, 'duplicate "__metadata__"',
         "two metadata objects")
    rule("metadata_not_object", '{"__metadata__":[],' + ok_t + "}", d8, "__metadata__ must be an object",
         "metadata array")
    rule("metadata_value_int", '{"__metadata__":{"n":1},' + ok_t + "}", d8, "must be a string", "metadata 1")
    rule("metadata_key_twice", '{"__metadata__":{"n":"1","n":"2"},' + ok_t + "}", d8, "twice",
         "a metadata key twice")
    write("st_rule_data_only.safetensors", st_bytes("{}", b"\0" * 4), "st", "trailing bytes",
          "no tensors but 4 data bytes")

    # -- token shards (reader vocab 16) -----------------------------------------------------------
    toks = [(i * 7 + 3) % V for i in range(400)]
    good_shard = shard(toks)
    write("shard_valid.bin", good_shard, "shard", "OK", "valid: 400 tokens < 16")
    expect("shard_valid.bin", "data", "OK")
    bad_shards = [
        ("bad_magic", shard(toks, magic=20240521), "magic number is 20240521,", "magic 20240521"),
        ("magic_zero", shard(toks, magic=0), "magic number is 0,", "magic 0"),
        ("bad_version", shard(toks, version=2), "version is 2,", "version 2"),
        ("version_zero", shard(toks, version=0), "version is 0,", "version 0"),
        ("count_negative", shard(toks, count=-1), "negative", "count -1"),
        ("count_too_big", shard(toks, count=401), "needs", "count 401 for 400 tokens"),
        ("count_huge", shard(toks, count=0x7FFFFFFF), "needs", "count 2^31-1 for 400 tokens"),
        ("count_too_small", shard(toks, count=399), "needs", "count 399 for 400 tokens"),
        ("odd_size", shard(toks, extra=b"\0"), "needs", "one stray byte at the end"),
        ("header_only_short", good_shard[:1000], "too short", "1000 bytes"),
        ("token_eq_vocab", shard(toks[:200] + [V] + toks[201:]), ">= the vocab", "token 16 at 200"),
        ("token_max", shard(toks[:399] + [65535]), ">= the vocab", "token 65535 last"),
        ("token_first", shard([V + 1] + toks[1:]), ">= the vocab", "token 17 first"),
    ]
    for name, data, kw, what in bad_shards:
        write("shard_%s.bin" % name, data, "shard", kw, what)
        expect("shard_%s.bin" % name, "data", kw, what)
    write("shard_empty.bin", b"", "shard", "too short", "0 bytes")
    write("shard_magic_only.bin", good_shard[:4], "shard", "too short", "4 bytes")
    expect("shard_magic_only.bin", "data", "too short", "4 bytes")
    # a .bin is a shard by its name: zeros shorter than a header are refused, not trained as text
    write("shard_zeros_100.bin", bytes(100), "shard", "100 bytes is too short", "100 zero bytes")
    expect("shard_zeros_100.bin", "data", "100 bytes is too short", "100 zero bytes")
    write("shard_text_named_bin.bin", b"plain text in a file named .bin\n" * 40, "shard", "magic number is",
          "text under a .bin name")
    expect("shard_text_named_bin.bin", "data", "magic number is", "text under a .bin name")
    write("shard_header_empty.bin", shard([]), "shard", "OK", "valid: 0 tokens")
    expect("shard_header_empty.bin", "data", "B*T+1", "0 tokens: no batch")
    write("shard_too_few_for_batch.bin", shard(toks[:4]), "shard", "OK", "valid: 4 tokens")
    expect("shard_too_few_for_batch.bin", "data", "B*T+1", "4 tokens for B*T+1 = 5")

    # -- training checkpoints ----------------------------------------------------------------------
    write("ckpt_valid.safetensors", ckpt(), "ckpt", "OK", "valid: step 3, data (0,3)")
    for r in ("resume", "init"):
        expect("ckpt_valid.safetensors", r, "OK")

    def set_state(step=3, epoch=0, index=3, rng=None):
        def fn(t, m):
            i = find(t, "train.state")
            w = rng if rng is not None else [0x0123456789ABCDEF, -0x1122334455667788, 42, 7]
            t[i][3] = struct.pack("<7q", step, epoch, index, *w)
        return fn

    ckpt_edit("ckpt_step_negative.safetensors", set_state(step=-1), "negative", what="step -1")
    ckpt_edit("ckpt_epoch_negative.safetensors", set_state(epoch=-5), "negative", what="data epoch -5")
    ckpt_edit("ckpt_index_negative.safetensors", set_state(index=-1), "negative", what="data index -1")
    ckpt_edit("ckpt_step_huge.safetensors", set_state(step=2 ** 62), "out of range", what="step 2^62")
    ckpt_edit("ckpt_step_int64_max.safetensors", set_state(step=2 ** 63 - 1), "out of range", what="step 2^63-1")
    ckpt_edit("ckpt_epoch_huge.safetensors", set_state(epoch=2 ** 60), "out of range", what="data epoch 2^60")
    ckpt_edit("ckpt_index_huge.safetensors", set_state(index=2 ** 60), "out of range", what="data index 2^60")
    # a position the library cannot judge (it does not know the data); train_gpt's loader refuses it
    ckpt_edit("ckpt_index_past_data.safetensors", set_state(index=1000), "OK", readers=("ckpt",),
              what="data index 1000 (the data has 99 batches)")
    expect("ckpt_index_past_data.safetensors", "resume", "out of range", "data index 1000 of 99 batches")
    ckpt_edit("ckpt_rng_zero.safetensors", set_state(rng=[0, 0, 0, 0]), "all-zero RNG", what="RNG state 0,0,0,0")

    def state_as(dtype, shape, data):
        def fn(t, m):
            t[find(t, "train.state")][1:] = [dtype, shape, data]
        return fn

    st7 = struct.pack("<7q", 3, 0, 3, 1, 2, 3, 4)
    ckpt_edit("ckpt_state_f32.safetensors", state_as("F32", [7], st7[:28]), "train.state", what="F32 [7]")
    ckpt_edit("ckpt_state_f64.safetensors", state_as("F64", [7], st7), "train.state", what="F64 [7]")
    ckpt_edit("ckpt_state_i32.safetensors", state_as("I32", [14], st7), "train.state", what="I32 [14]")
    ckpt_edit("ckpt_state_short.safetensors", state_as("I64", [6], st7[:48]), "train.state", what="I64 [6]")
    ckpt_edit("ckpt_state_long.safetensors", state_as("I64", [8], st7 + b"\0" * 8), "train.state",
              what="I64 [8]")
    ckpt_edit("ckpt_state_2d.safetensors", state_as("I64", [7, 1], st7), "train.state", what="I64 [7,1]")
    ckpt_edit("ckpt_state_scalar.safetensors", state_as("I64", [], st7[:8]), "train.state", what="I64 []")
    ckpt_edit("ckpt_state_missing.safetensors", lambda t, m: t.pop(find(t, "train.state")), "train.state",
              what="no train.state")

    def meta_set(key, value):
        def fn(t, m):
            if value is None:
                m.pop(key, None)
            else:
                m[key] = value
        return fn

    ckpt_edit("ckpt_optimizer_sgd.safetensors", meta_set("optimizer", "sgd"), "saved with optimizer",
              what="metadata optimizer sgd")
    ckpt_edit("ckpt_optim_missing.safetensors", lambda t, m: t.pop(find(t, "optim.exp_avg_sq.ln_f.bias")),
              "is missing", what="no optim.exp_avg_sq.ln_f.bias")

    def reshape(name, shape):
        def fn(t, m):
            t[find(t, name)][2] = shape
        return fn

    def retype(name, dtype, size):
        def fn(t, m):
            i = find(t, name)
            t[i][1] = dtype
            t[i][3] = t[i][3][:numel(t[i][2]) * size]
        return fn

    def reshape_data(name, shape, size=4):
        def fn(t, m):
            i = find(t, name)
            t[i][2] = shape
            t[i][3] = (t[i][3] * 2)[:numel(shape) * size]
        return fn

    ckpt_edit("ckpt_optim_count.safetensors", reshape_data("optim.exp_avg.h.0.attn.c_attn.weight", [C, 3 * C - 1]),
              "holds 44 values", what="exp_avg of c_attn [4,11], parameter [4,12]")
    ckpt_edit("ckpt_optim_bigger.safetensors", reshape_data("optim.exp_avg_sq.wpe.weight", [CTX + 1, C]),
              "holds 36 values", what="exp_avg_sq of wpe [9,4], parameter [8,4]")
    ckpt_edit("ckpt_optim_zero_dim_huge.safetensors", reshape_data("optim.exp_avg.wte.weight", [2 ** 40, 2 ** 40, 0]),
              "holds 0 values", what="exp_avg of wte [2^40,2^40,0]: its product must not overflow")
    ckpt_edit("ckpt_optim_i32.safetensors", retype("optim.exp_avg.wpe.weight", "I32", 4), "convert to float",
              what="exp_avg of wpe as I32")
    ckpt_edit("ckpt_weight_missing.safetensors", lambda t, m: t.pop(find(t, "h.0.ln_1.bias")), "is missing",
              readers=("ckpt", "resume", "init"), what="no h.0.ln_1.bias")
    ckpt_edit("ckpt_weight_shape.safetensors", reshape("h.0.mlp.c_fc.weight", [4 * C, C]), "the model needs",
              what="c_fc [16,4] for [4,16]")
    ckpt_edit("ckpt_weight_i8.safetensors", retype("ln_f.weight", "I8", 1), "convert to float",
              readers=("ckpt", "resume", "init"), what="ln_f.weight as I8")
    ckpt_edit("ckpt_weight_f16.safetensors", retype("ln_f.bias", "F16", 2), "OK", readers=("ckpt", "resume"),
              what="valid: ln_f.bias as F16 (converted)")
    # what train_gpt reads to build the model before it loads the state (lt_gpt_load)
    ckpt_edit("ckpt_n_head_text.safetensors", meta_set("n_head", "two"), "n_head", readers=("resume", "init"),
              what='n_head "two"')
    ckpt_edit("ckpt_n_head_zero.safetensors", meta_set("n_head", "0"), "n_head", readers=("resume", "init"),
              what='n_head "0"')
    ckpt_edit("ckpt_n_head_huge.safetensors", meta_set("n_head", "99999999999999999999"), "n_head",
              readers=("resume", "init"), what="n_head past long")
    ckpt_edit("ckpt_n_head_3.safetensors", meta_set("n_head", "3"), "heads dividing C", readers=("resume", "init"),
              what="3 heads for C = 4")
    ckpt_edit("ckpt_no_n_head.safetensors", meta_set("n_head", None), "number of heads is unknown",
              readers=("resume", "init"), what="no n_head metadata")

    def wte_1d(t, m):
        t[find(t, "wte.weight")][2] = [V * C]
    ckpt_edit("ckpt_wte_1d.safetensors", wte_1d, "[V,C]", readers=("resume", "init"), what="wte [64]")
    ckpt_edit("ckpt_wpe_other_c.safetensors", reshape("wpe.weight", [CTX * 2, C // 2]), "[V,C]",
              readers=("resume", "init"), what="wpe [16,2], wte [16,4]")

    def zero_vocab(t, m):
        i = find(t, "wte.weight")
        t[i][2] = [0, C]
        t[i][3] = b""
    ckpt_edit("ckpt_vocab_zero.safetensors", zero_vocab, "vocab_size = 16 but the tensors say 0", readers=("resume", "init"), what="wte [0,4]")

    def no_layers(t, m):
        for x in t:
            if ".h.0." in "." + x[0]:
                x[0] = x[0].replace("h.0.", "h.1.")
    ckpt_edit("ckpt_no_layer_0.safetensors", no_layers, "n_layer = 1 but the tensors say 2", readers=("resume", "init"),
              what="layer 1 without layer 0")
    full = ckpt()
    for k in (8, 200, len(full) // 2, len(full) - 1):
        name = "ckpt_trunc_%d.safetensors" % k
        write(name, full[:k], "ckpt", "past the end", "ckpt_valid cut to %d bytes" % k)
        expect(name, "resume", "past the end")
    expect("st_flip_12.safetensors", "init", "unknown dtype")
    expect("st_rule_overlap.safetensors", "init", "overlap")
    expect("st_rule_header_2_64.safetensors", "init", "over the limit")
    expect("st_trunc_030.safetensors", "init", "past the end")
    expect("st_valid_meta.safetensors", "init", "is missing")

    # -- fuzzer seeds --------------------------------------------------------------------------------
    def seed(d, name, data):
        with open(os.path.join(SEEDS, d, name), "wb") as f:
            f.write(data)
    seed("st", "small.safetensors", small)
    seed("st", "meta.safetensors", base)
    seed("st", "f16_bf16_f64.safetensors", st_build([("h", "F16", [2], b"\0<\0\xc0"), ("b", "BF16", [1, 1], b"\x80?"),
                                                     ("d", "F64", [1], struct.pack("<d", 0.1)),
                                                     ("e", "I64", [0, 3], b"")], {"a": "b"}))
    seed("shard", "small.bin", shard(toks[:40]))
    seed("shard", "empty.bin", shard([]))
    seed("ckpt", "valid.safetensors", full)

    tok_files()

    rows.sort(key=lambda r: (r[0], r[1]))
    with open(os.path.join(OUT, "MANIFEST.tsv"), "w") as f:
        f.write("# file\treader\texpected\twhat  (written by tests/gen_malformed.py)\n")
        for r in rows:
            f.write("%s\t%s\t%s\t%s\n" % r)
    files = [n for n in os.listdir(OUT) if n != "MANIFEST.tsv"]
    print("tests/malformed: %d files, %d manifest rows" % (len(files), len(rows)))


if __name__ == "__main__":
    main()

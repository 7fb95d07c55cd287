#!/usr/bin/env python3
"""Unicode NFC for the tokenizer (src/18_data_tok.h, @@TOK.nfc): its tables and its references.

    /work/venv/bin/python tests/ref/gen_nfc.py          (from the repository root; no network)

1. rewrites the tables between "BEGIN lt__nfc tables" and "END lt__nfc tables" in
   src/18_data_tok.h from Python's unicodedata (its Unicode version goes into the comment there):
     lt__nfc_ccc       canonical combining classes != 0: lo << 11 | (count - 1) << 8 | ccc
                       (runs of up to 8 code points with the same class)
     lt__nfc_unstable  code points that are not "ccc 0 and NFC_QC Yes": a combining class, a
                       decomposition NFC does not keep (singletons, composition exclusions,
                       non-starter decompositions), or the second half of a composition
                       (NFC_QC Maybe, Hangul V and T jamo included): lo << 11 | (count - 1)
     lt__nfc_dkey      runs of code points with a canonical decomposition (Hangul syllables are
                       algorithmic and not listed): lo << 11 | (count - 1); lt__nfc_doff[r] the
                       index of the run's first value
     lt__nfc_dval      per code point: first | second << 21 | composes << 28, where second indexes
                       lt__nfc_second from 1 (0: a singleton) and composes marks a primary
                       composite (canonical composition gives it back)
     lt__nfc_second    the second code points of two-part decompositions, sorted
     lt__nfc_comp      the primary composites as indices into lt__nfc_dval, sorted by (first,
                       second): canonical composition's lookup
2. writes tests/ref/nfc_cases.bin: "LTNFCREF", u32 ncases, then per case u32 bytes, the text
   (UTF-8, some cases with invalid bytes), u32 bytes of its NFC, u64 FNV-1a of that NFC (all
   little-endian).  NFC: unicodedata.normalize("NFC", ...).  Invalid UTF-8 follows the library's
   rule: each byte of an invalid sequence is a character of its own that composes with nothing
   (Python's surrogateescape gives each such byte one lone surrogate, which normalize treats as a
   starter with no mapping), and is kept as it is.
3. writes tests/ref/tok_nfc.bin: tok_qwen2.json with "normalizer": {"type": "NFC"} on every
   text of tok_cases.bin (same order): "LTTOKNFC", u32 ntexts, per text u32 what: 0 the ids are
   tok_cases.bin's for tok_qwen2 (NFC changes nothing), 1 two id lists follow (u32 n, n x u16),
   without then with LT_TOK_SPECIAL, 0xffffffff not checked (below).  With specials: Hugging
   Face tokenizers' encode (the added tokens are split out of the raw text before normalization:
   normalized false); without: tiktoken's encode_ordinary of the NFC text (HF has no such mode).  The invalid UTF-8 texts
   follow the rule above (emulated as gen_tok.py does).  A text on which HF's NFC (its crate's
   Unicode version) and Python's differ is not checked; the count of such texts is printed (0
   with tokenizers 0.23.3 and Python's Unicode 14.0.0).

HF tokenizers' NFC (its Rust crate) follows an older Unicode than Python 3.11's 14.0.0: with
--compare the script lists the code points where the two differ (50 with tokenizers 0.23.3:
combining marks the crate takes for starters and does not reorder, such as U+0898, U+089C-U+089F,
U+08CA-U+08CE, U+09FE, U+1AC1-U+1ACE, U+1DF6-U+1DF8, U+10D24-U+10D27, U+1E130-U+1E136).  None of them is in
the tokenizer corpus of tok_nfc.bin; nfc_cases.bin (Python's NFC only) holds some of them.
"""
import json
import os
import random
import struct
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PART = os.path.join(ROOT, "src", "18_data_tok.h")
REF = os.path.join(ROOT, "tests", "ref")
SBASE, LBASE, VBASE, TBASE, LCOUNT, VCOUNT, TCOUNT = 0xAC00, 0x1100, 0x1161, 0x11A7, 19, 21, 28
SCOUNT = LCOUNT * VCOUNT * TCOUNT


def nfc(s):
    return unicodedata.normalize("NFC", s)


def fnv64(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


# -- the tables -----------------------------------------------------------------------------------
def data():
    ccc, dec = {}, {}
    for c in range(0x110000):
        ch = chr(c)
        if unicodedata.combining(ch):
            ccc[c] = unicodedata.combining(ch)
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<") and not SBASE <= c < SBASE + SCOUNT:
            p = [int(x, 16) for x in d.split()]
            assert 1 <= len(p) <= 2, hex(c)
            dec[c] = p
    composes = {c for c, p in dec.items() if len(p) == 2 and nfc(chr(c)) == chr(c)}
    maybe = {dec[c][1] for c in composes} | set(range(VBASE, VBASE + VCOUNT)) | set(range(TBASE + 1, TBASE + TCOUNT))
    unstable = set(ccc) | {c for c in dec if nfc(chr(c)) != chr(c)} | maybe
    assert min(unstable) >= 0x300   # the fast path: everything below U+0300 is stable
    for c in dec:   # a second half never decomposes; a first half's decomposition is in the table
        assert len(dec[c]) == 1 or dec[c][1] not in dec
    return ccc, dec, composes, unstable


def runs(keys, same=lambda a, b: True, most=2048):
    out = []
    for k in sorted(keys):
        if out and k == out[-1][0] + out[-1][1] and out[-1][1] < most and same(out[-1][0], k):
            out[-1][1] += 1
        else:
            out.append([k, 1])
    return out


def carray(ctype, name, vals, fmt, per):
    lines = ["static const %s %s[%d] = {" % (ctype, name, len(vals))]
    for i in range(0, len(vals), per):
        lines.append("    " + ",".join(fmt % v for v in vals[i:i + per]) + ",")
    lines.append("};")
    return lines, len(vals) * {"uint32_t": 4, "uint16_t": 2}[ctype]


def tables():
    ccc, dec, composes, unstable = data()
    cr = runs(ccc, lambda a, b: ccc[a] == ccc[b], 8)
    ur = runs(unstable)
    dr = runs(dec)
    second = sorted({p[1] for p in dec.values() if len(p) == 2})
    assert len(second) < 128
    keys = sorted(dec)
    dval = [dec[c][0] | (second.index(dec[c][1]) + 1 if len(dec[c]) == 2 else 0) << 21 | (c in composes) << 28 for c in keys]
    doff, o = [], 0
    for lo, n in dr:
        doff.append(o)
        o += n
    comp = sorted((keys.index(c) for c in composes), key=lambda i: (dec[keys[i]][0], dec[keys[i]][1]))
    out, total = [], 0
    for args in (("uint32_t", "lt__nfc_ccc", [lo << 11 | (n - 1) << 8 | ccc[lo] for lo, n in cr], "0x%x", 10),
                 ("uint32_t", "lt__nfc_unstable", [lo << 11 | (n - 1) for lo, n in ur], "0x%x", 10),
                 ("uint32_t", "lt__nfc_dkey", [lo << 11 | (n - 1) for lo, n in dr], "0x%x", 10),
                 ("uint16_t", "lt__nfc_doff", doff, "%d", 20),
                 ("uint32_t", "lt__nfc_dval", dval, "0x%x", 11),
                 ("uint32_t", "lt__nfc_second", second, "0x%x", 14),
                 ("uint16_t", "lt__nfc_comp", comp, "%d", 20)):
        lines, size = carray(*args)
        out += lines
        total += size
    head = ["/* BEGIN lt__nfc tables (tests/ref/gen_nfc.py from Python's unicodedata, Unicode %s: %d combining"
            % (unicodedata.unidata_version, len(ccc)),
            "   classes, %d canonical decompositions, %d primary composites; %d bytes) */" % (len(dec), len(composes), total)]
    return head + out + ["/* END lt__nfc tables */"], total


def write_tables():
    lines, total = tables()
    src = open(PART, encoding="utf-8").read()
    a = src.index("/* BEGIN lt__nfc tables")
    b = src.index("/* END lt__nfc tables */") + len("/* END lt__nfc tables */\n")
    new = src[:a] + "\n".join(lines) + "\n" + src[b:]
    if new != src:
        open(PART, "w", encoding="utf-8").write(new)
    print("src/18_data_tok.h: the NFC tables, %d bytes (Unicode %s)" % (total, unicodedata.unidata_version))


# -- the NFC corpus -------------------------------------------------------------------------------
def corpus():
    rnd = random.Random(15)
    ccc, dec, composes, unstable = data()
    cases = []
    add = cases.append
    # every character with a decomposition: the canonical ones as they are, decomposed, and
    # followed by a mark; the compatibility ones (which NFC keeps) as they are
    decomp = [c for c in range(0x110000) if unicodedata.decomposition(chr(c))]
    marks = sorted(ccc)
    common = [0x300, 0x301, 0x302, 0x303, 0x308, 0x30a, 0x30c, 0x323, 0x327, 0x328, 0x331, 0x345, 0x35c, 0x5b4,
              0x5bc, 0x5c1, 0x64b, 0x93c, 0x94d, 0x9bc, 0x3099, 0x309a, 0x1d165, 0x1d16e, 0x0316, 0x0315, 0x031b]
    for i in range(0, len(decomp), 16):
        s = ""
        for c in decomp[i:i + 16]:
            ch = chr(c)
            if c in dec:
                s += ch + unicodedata.normalize("NFD", ch) + chr(rnd.choice(common)) + " "
            else:
                s += ch
        add(s.encode())
    # every combining mark after a base and after another mark
    for i in range(0, len(marks), 20):
        add("".join("a" + chr(m) + "e" + chr(m) + chr(0x301) + chr(m) + "o\u0323" + chr(m) for m in marks[i:i + 20]).encode())
    # combining-mark sequences in shuffled orders on bases that compose
    bases = "aeiouAEIOUnNcCsSzZyYwWhHxXtTgGkKrRlL" + "\u03b1\u03b5\u03b7\u03b9\u03bf\u03c5\u03c9\u0391\u0395" + \
            "\u0430\u0435\u0438\u043e\u0443\u0415\u0418\u05d0\u05e9\u0627\u0648\u0915\u09a1\u304b\u30cf\u1100"
    for k in range(600):
        m = [rnd.choice(common if rnd.random() < 0.7 else marks) for _ in range(rnd.randint(1, 7))]
        rnd.shuffle(m)
        b = rnd.choice(bases)
        if rnd.random() < 0.3:
            b = chr(rnd.choice(decomp))
        add((b + "".join(chr(x) for x in m) + rnd.choice(["", " ", "x", "\u0301", "e"])).encode())
    # Hangul: jamo L V T in every mix, syllables (LV and LVT), LV + T, old jamo
    L = [chr(LBASE + i) for i in range(LCOUNT)] + ["\u115f", "\ua960"]
    V = [chr(VBASE + i) for i in range(VCOUNT)] + ["\u1160", "\u1176", "\ud7b0"]
    T = [chr(TBASE + i) for i in range(1, TCOUNT)] + ["\u11a7", "\u11c3", "\ud7cb"]
    for k in range(400):
        s = ""
        for _ in range(rnd.randint(1, 10)):
            r = rnd.random()
            if r < 0.3:
                s += rnd.choice(L) + rnd.choice(V)
            elif r < 0.6:
                s += rnd.choice(L) + rnd.choice(V) + rnd.choice(T)
            elif r < 0.75:
                s += chr(SBASE + TCOUNT * rnd.randrange(LCOUNT * VCOUNT)) + rnd.choice(T)
            elif r < 0.85:
                s += chr(SBASE + rnd.randrange(SCOUNT)) + rnd.choice(T + V)
            else:
                s += rnd.choice(L + V + T + ["\u0301", "\u302e", "a"])
        add(s.encode())
    add("".join(chr(SBASE + i) for i in range(0, SCOUNT, 7)).encode())
    add("".join(unicodedata.normalize("NFD", chr(SBASE + i)) for i in range(1, SCOUNT, 11)).encode())
    # composition exclusions, singletons, non-starter decompositions, two-part starters
    excl = sorted(c for c in dec if nfc(chr(c)) != chr(c))
    add("".join(chr(c) for c in excl).encode())
    add("\u212b \u2126 \u212a A\u030a \u0344 \u0f73 \u0f75 \u0f81 \u0958\u093c \u2adc \U0001D15E\U0001D160 \ufb2c \u0374 \u037e "
        "\u0387 \u1f71 \u0340\u0341\u0343 a\u0340 e\u0343\u0344".encode())
    two = "\u09c7\u09be \u09c7\u09d7 \u0b47\u0b3e \u0b47\u0b56 \u0b47\u0b57 \u0bc6\u0bbe \u0bc7\u0bbe \u0bc6\u0bd7 " \
          "\u0c46\u0c56 \u0cbf\u0cd5 \u0cc6\u0cc2 \u0cc6\u0cd5 \u0cca\u0cd5 \u0d46\u0d3e \u0d47\u0d3e \u0d46\u0d57 " \
          "\u0dd9\u0dca \u0dd9\u0dcf \u0ddc\u0dca \u0dd9\u0ddf \u1025\u102e \u1b05\u1b35 \U00011131\U00011127 " \
          "\U00011347\U0001133e \U000114b9\U000114ba \U000115b8\U000115af \U00011935\U00011930"
    add(two.encode())
    for p in two.split():
        add((p[0] + "\u0301" + p[1] + " " + p[0] + "\u093c" + p[1] + " " + p[0] + p[0] + p[1] + p[1]).encode())
    # already NFC (the fast path), ASCII, and long runs
    add(b"plain ASCII text, nothing to do. 0123456789 !@#$%^&*()")
    add(nfc("na\u00efve caf\u00e9 \u4e2d\u6587 \ud55c\uad6d\uc5b4 \u0928\u092e\u0938\u094d\u0924\u0947 "
            "\u0645\u0631\u062d\u0628\u0627 \U0001F600 \u00c5ngstr\u00f6m").encode())
    add(("a" + "\u0301" * 500).encode())
    add(("e" + "".join(chr(rnd.choice(common)) for _ in range(1000))).encode())
    add("".join(chr(rnd.choice(marks)) for _ in range(600)).encode())
    add(("\u1100\u1161" * 300 + "\u11a8" * 10).encode())
    add(("x" * 3000 + "\u0301").encode())
    add(("\u00e9" * 500 + "e\u0301" * 500).encode())
    add(("\u0958" * 200).encode())
    # random strings over a mixed alphabet
    alpha = [chr(c) for c in common] + list(bases) + [chr(c) for c in excl[:40]] + L[:5] + V[:5] + T[:5] + \
            [" ", "\n", "x", "\u00e9", "\u00c5", "\u212b", "\u1e69", "\uac00", "\uac01", "\U0001F44D", "\u4e2d"]
    for k in range(400):
        add("".join(rnd.choice(alpha) for _ in range(rnd.randint(1, 40))).encode())
    # invalid UTF-8 next to marks and jamo
    inv = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\x80", b"\xcc", b"\xcd"]
    for k in range(300):
        s = b""
        for _ in range(rnd.randint(1, 12)):
            r = rnd.random()
            s += rnd.choice(inv) if r < 0.35 else rnd.choice(alpha).encode()
        add(s)
    add(b"e\xcc\x81\xcc")          # a mark, then a cut-short sequence at the end
    add(b"\xcc\x81")               # a mark alone
    add(b"e\xcc")                  # a cut-short mark after a base
    add(bytes(range(256)))
    return cases


def write_cases():
    cases = corpus()
    size = 0
    with open(os.path.join(REF, "nfc_cases.bin"), "wb") as f:
        f.write(b"LTNFCREF" + struct.pack("<I", len(cases)))
        for b in cases:
            o = nfc(b.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
            f.write(struct.pack("<I", len(b)) + b + struct.pack("<IQ", len(o), fnv64(o)))
            size += len(b)
    print("tests/ref/nfc_cases.bin: %d cases, %d bytes of text" % (len(cases), size))


# -- the tokenizer with the NFC normalizer ---------------------------------------------------------
def write_tok():
    sys.path.insert(0, HERE)
    import regex
    import gen_tok
    from tokenizers import Tokenizer, normalizers
    src = open(os.path.join(REF, "tok_qwen2.json"), encoding="utf-8").read()
    assert src.count('"normalizer":null') == 1
    hf = Tokenizer.from_str(src.replace('"normalizer":null', '"normalizer":{"type":"NFC"}'))
    tt = gen_tok.tiktoken_of(Tokenizer.from_str(src), gen_tok.QWEN2_RE, "q2")
    hfnfc = normalizers.NFC()
    raw = open(os.path.join(REF, "tok_cases.bin"), "rb").read()
    assert raw[:8] == b"LTTOKREF"
    (nt,), at = struct.unpack_from("<I", raw, 8), 12
    texts, old = [], []
    for _ in range(nt):
        (n,) = struct.unpack_from("<I", raw, at)
        texts.append(raw[at + 4:at + 4 + n])
        at += 4 + n
        lists = []
        for _ in range(6):
            (m,) = struct.unpack_from("<I", raw, at)
            lists.append(list(struct.unpack_from("<%dH" % m, raw, at + 4)))
            at += 4 + 2 * m
        old.append((lists[4], lists[5]))
    pat = regex.compile(gen_tok.QWEN2_RE)
    sp = regex.compile("(" + "|".join(regex.escape(s) for s in sorted(gen_tok.SPECIALS, key=len, reverse=True)) + ")")

    def emulate(data, special):
        text = data.decode("utf-8", "surrogateescape")
        parts = sp.split(text) if special else [text]
        out = []
        for i, part in enumerate(parts):
            if special and i % 2 == 1:
                out.append(tt.encode_single_token(part))
                continue
            for piece in pat.findall(nfc(part)):
                out.extend(tt._encode_single_piece(piece.encode("utf-8", "surrogateescape")))
        return out

    skipped = bad = changed = 0
    recs = []
    for data in texts:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and hfnfc.normalize_str(text) != nfc(text):
            skipped += 1
            recs.append(None)
            continue
        if text is not None:
            a, b = tt.encode_ordinary(nfc(text)), hf.encode(text, add_special_tokens=False).ids
            if emulate(data, 0) != a or emulate(data, 1) != b:
                bad += 1
                print("DIFFER on %r" % text[:60])
            changed += nfc(text) != text
        else:
            a, b = emulate(data, 0), emulate(data, 1)
        recs.append((a, b))
    with open(os.path.join(REF, "tok_nfc.bin"), "wb") as f:
        f.write(b"LTTOKNFC" + struct.pack("<I", len(recs)))
        for r, o in zip(recs, old):
            if r is None:
                f.write(struct.pack("<I", 0xffffffff))
            elif r == o:
                f.write(struct.pack("<I", 0))
            else:
                f.write(struct.pack("<I", 1))
                for ids in r:
                    f.write(struct.pack("<I%dH" % len(ids), len(ids), *ids))
    print("tests/ref/tok_nfc.bin: %d texts, %d changed by NFC, %d skipped (HF's NFC differs), %d disagreements" % (
        len(recs), changed, skipped, bad))
    if bad:
        sys.exit(1)


def compare_hf():
    """The code points where HF tokenizers' NFC and these tables (Python's) differ: each character
    that NFC may touch, alone, after a letter, before marks, after a jamo and after a vowel sign."""
    from tokenizers import normalizers
    hf = normalizers.NFC()
    ccc, dec, composes, unstable = data()
    diff = []
    for c in sorted(set(ccc) | set(dec) | unstable):
        for s in (chr(c), "a" + chr(c), chr(c) + "\u0301", chr(c) + "\u0316\u0301", "\u1100" + chr(c), "\u0bc6" + chr(c)):
            if hf.normalize_str(s) != nfc(s):
                diff.append(c)
                break
    print("HF tokenizers' NFC differs from Python's (Unicode %s) on %d code points: %s" % (
        unicodedata.unidata_version, len(diff), " ".join("U+%04X" % c for c in diff)))


if __name__ == "__main__":
    if sys.argv[1:] == ["--compare"]:
        compare_hf()
        sys.exit(0)
    write_tables()
    write_cases()
    write_tok()

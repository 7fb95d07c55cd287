#!/usr/bin/env python3
"""The Unicode classes of the pre-tokenizer (src/18_data_tok.h, @@TOK.utf8).

    /work/venv/bin/python tests/ref/gen_tok_tables.py     (from the repository root)

rewrites the table between the lines "BEGIN lt__tok_ranges" and "END lt__tok_ranges" of
src/18_data_tok.h: the code-point ranges of \\p{L} (letters: Lu Ll Lt Lm Lo) and \\p{N} (numbers:
Nd Nl No) as the PyPI `regex` module defines them (its Unicode version is printed in the table's
comment).  The whitespace class \\s is the Unicode White_Space property, 25 code points written
out in the C code (the same set Rust's regex, Oniguruma and the `regex` module use for \\s).

tiktoken (Rust regex / fancy-regex) and Hugging Face tokenizers (Oniguruma) each carry their own
Unicode version; the classes differ only for code points assigned in the later versions.  With
--compare the script lists the code points where these tables and the installed tokenizers'
pre-tokenizer disagree (HF's pre_tokenize_str shows its splits directly).
"""
import os
import sys
import unicodedata

import regex

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PART = os.path.join(ROOT, "src", "18_data_tok.h")


def ranges(pattern):
    r = regex.compile(pattern)
    out, start = [], None
    for c in range(0x110000):
        m = not (0xD800 <= c <= 0xDFFF) and r.match(chr(c)) is not None
        if m and start is None:
            start = c
        if not m and start is not None:
            out.append((start, c - 1))
            start = None
    if start is not None:
        out.append((start, 0x10FFFF))
    return out


def unicode_version():
    import importlib.metadata as md
    import re
    m = re.search(r"supports Unicode ([0-9]+(?:\.[0-9]+)*)", md.metadata("regex").get_payload() or "")
    return "Unicode " + (m.group(1) if m else "(version not stated)")


def table():
    items = [(lo, hi, 1) for lo, hi in ranges(r"\p{L}")] + [(lo, hi, 2) for lo, hi in ranges(r"\p{N}")]
    items.sort()
    lines = ["/* BEGIN lt__tok_ranges (tests/ref/gen_tok_tables.py: \\p{L} = 1, \\p{N} = 2; %d ranges;"
             % len(items),
             "   %s, as the PyPI regex module %s defines them) */" % (unicode_version(), regex.__version__),
             "static const uint32_t lt__tok_ranges[%d] = {   /* lo | class << 24, hi */" % (2 * len(items))]
    row = []
    for lo, hi, cls in items:
        row.append("0x%x,0x%x" % (lo | cls << 24, hi))
        if len(row) == 6:
            lines.append("    " + ", ".join(row) + ",")
            row = []
    if row:
        lines.append("    " + ", ".join(row) + ",")
    lines.append("};")
    lines.append("/* END lt__tok_ranges */")
    return "\n".join(lines) + "\n"


def rewrite():
    src = open(PART, encoding="utf-8").read()
    a = src.index("/* BEGIN lt__tok_ranges")
    b = src.index("/* END lt__tok_ranges */") + len("/* END lt__tok_ranges */\n")
    new = src[:a] + table() + src[b:]
    if new != src:
        open(PART, "w", encoding="utf-8").write(new)
        print("rewrote the table in %s" % PART)
    else:
        print("%s: table up to date" % PART)


def compare():
    """Code points whose class differs between these tables and HF's Oniguruma (pre_tokenize_str)."""
    from tokenizers import Regex, pre_tokenizers
    classes = {}
    for lo, hi in ranges(r"\p{L}"):
        for c in range(lo, hi + 1):
            classes[c] = "L"
    for lo, hi in ranges(r"\p{N}"):
        for c in range(lo, hi + 1):
            classes[c] = "N"
    split = {k: pre_tokenizers.Split(Regex(p), "isolated") for k, p in
             (("L", r"\p{L}+"), ("N", r"\p{N}+"), ("S", r"\s+"))}
    diff = {"L": [], "N": [], "S": []}
    ws = set(c for c in range(0x110000) if not (0xD800 <= c <= 0xDFFF) and regex.match(r"\s", chr(c)))
    for k in ("L", "N", "S"):
        cps = [c for c in range(0x110000) if not (0xD800 <= c <= 0xDFFF)]
        for i in range(0, len(cps), 4096):
            chunk = cps[i:i + 4096]
            text = "\x00".join(chr(c) for c in chunk)
            pieces = split[k].pre_tokenize_str(text)
            hit = set(ord(p[0]) for p, _ in pieces if len(p) == 1 and p != "\x00")
            for c in chunk:
                ours = c in ws if k == "S" else classes.get(c) == k
                if ours != (c in hit):
                    diff[k].append(c)
    for k in ("L", "N", "S"):
        print("%s: %d code points differ from HF tokenizers' Oniguruma%s" % (
            k, len(diff[k]), (": " + " ".join("U+%04X" % c for c in diff[k][:20])) if diff[k] else ""))
        if diff[k]:
            ages = {}
            for c in diff[k]:
                try:
                    unicodedata.category(chr(c))
                    assigned = unicodedata.category(chr(c)) != "Cn"
                except ValueError:
                    assigned = False
                ages[assigned] = ages.get(assigned, 0) + 1
            print("   of which %d unassigned in Python's Unicode %s" % (ages.get(False, 0), unicodedata.unidata_version))


if __name__ == "__main__":
    if "--compare" in sys.argv:
        compare()
    else:
        rewrite()

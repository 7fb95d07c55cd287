"""Reference data for tests/test_amp.c: float32 -> bf16 and float32 -> fp16 as torch converts them.

Run from the repository root with PyTorch 1.13:   python3 tests/ref/gen_amp.py
Writes tests/ref/amp.bin in the record format of tests/lt_test.h (u32 name length, name,
u32 ndim, i64 shape[ndim], f32 data).  The records hold bit patterns, not numbers:
  "in"   [N]  the float32 inputs (their raw bits, NaN payloads included)
  "out"  [N]  uint32 (f16 << 16) | bf16 of torch's results for in[i], stored as float32 bits
Both are written and read as raw 4-byte words, so no NaN is ever touched by float arithmetic.

Inputs: ±0, float32 and fp16 subnormals, the ties at every rounding boundary (for each float32
exponent the bf16 and fp16 ties with even and odd kept bits and their neighbours, and in the fp16
subnormal range the ties of every shift), the largest finite values of both formats, 65504 /
65519.99 / 65520 / 65536, ±inf, NaN payloads (quiet, signalling, negative), then 100,000 random
floats: 40,000 uniform bit patterns, 40,000 with a uniform exponent and random mantissa, 20,000
in the fp16 range (|x| in [2^-26, 2^17]).

The script also checks the other direction over all 65,536 bit patterns, which tests/test_amp.c
then computes without a file: torch's bf16 -> float32 is u << 16 exactly (NaNs included), and
fp16 -> float32 is the exact value, with a NaN keeping its payload and getting the quiet bit.
"""
import os
import struct

import numpy as np
import torch

import refio

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "amp.bin")
rng = np.random.default_rng(2024)


def to16(bits):
    """torch's conversions of float32 bit patterns, through a contiguous CPU tensor."""
    x = torch.from_numpy(np.ascontiguousarray(bits, dtype=np.uint32).view(np.float32))
    bf = x.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16).astype(np.uint32)
    hf = x.to(torch.float16).view(torch.int16).numpy().view(np.uint16).astype(np.uint32)
    return bf, hf


# ---- the other direction: 16 bit -> float32 over every pattern ------------------------------------
allh = np.arange(65536, dtype=np.uint32).astype(np.uint16)
bf_f32 = torch.from_numpy(allh.view(np.int16)).view(torch.bfloat16).float().numpy().view(np.uint32)
assert np.array_equal(bf_f32, allh.astype(np.uint32) << 16), "torch bf16 -> f32 is not u << 16"
hf_f32 = torch.from_numpy(allh.view(np.int16)).view(torch.float16).float().numpy().view(np.uint32)
for h in range(65536):
    sign, e, m = (h >> 15) & 1, (h >> 10) & 31, h & 1023
    if e == 31 and m:
        want = (sign << 31) | 0x7FC00000 | (m << 13)
    else:
        v = float("inf") if e == 31 else (m * 2.0**-24 if e == 0 else (1 + m / 1024) * 2.0 ** (e - 15))
        want = struct.unpack("<I", struct.pack("<f", -v if sign else v))[0]
    assert hf_f32[h] == want, "fp16 %04x -> f32 %08x, expected %08x" % (h, hf_f32[h], want)

# ---- special cases -------------------------------------------------------------------------------
special = [
    0x00000000, 0x00000001, 0x00000002, 0x00007FFF, 0x00008000, 0x00008001, 0x00018000, 0x0000FFFF,
    0x00010000, 0x007F8000, 0x007FFFFF, 0x00800000, 0x00800001, 0x00807FFF, 0x00808000, 0x00818000,
    0x33000000, 0x33000001, 0x337FFFFF, 0x33800000, 0x33C00000, 0x33A00000, 0x34200000, 0x387FC000,
    0x387FDFFF, 0x387FE000, 0x387FE001, 0x38800000, 0x38801000, 0x38803000, 0x3F800000, 0x3F801000,
    0x3F803000, 0x3F808000, 0x3F818000, 0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000,
    0x477FFFFF, 0x501502F9, 0x7F7F0000, 0x7F7F7FFF, 0x7F7F8000, 0x7F7EFFFF, 0x7F7E8000, 0x7F7FFFFF,
    0x7F800000,
    # NaNs: quiet, signalling, payloads that survive or vanish in 16 bits
    0x7FC00000, 0x7F800001, 0x7FBFFFFF, 0x7FFFFFFF, 0x7F802000, 0x7F810000, 0x7FA5A5A5, 0x7FC00001,
    0x7FE00000, 0x7F800100,
]
special += [u | 0x80000000 for u in special]
# ties and neighbours for every exponent: bf16 drops 16 bits, fp16 normals 13
for sgn in (0, 0x80000000):
    for e in range(256):
        base = sgn | (e << 23)
        for d in (13, 16):
            half = 1 << (d - 1)
            for k in (0, 1, 2, 3, (1 << (23 - d)) - 1):
                for delta in (-1, 0, 1):
                    m = (k << d) + half + delta
                    if 0 <= m < (1 << 23):
                        special.append(base | m)
        special += [base, base | 1, base | 0x7FFFFF]
    # fp16 subnormal results: float32 exponents 2^-25 .. 2^-15 drop 24 .. 14 bits of 1.m
    for e in range(127 - 25, 127 - 14):
        base = sgn | (e << 23)
        for d in range(1, 24):
            half = 1 << (d - 1)
            for k in (0, 1, 2, 3):
                for delta in (-1, 0, 1):
                    m = (k << d) + half + delta
                    if 0 <= m < (1 << 23):
                        special.append(base | m)
special = np.unique(np.array(special, dtype=np.uint64)).astype(np.uint32)

# ---- random floats ---------------------------------------------------------------------------------
r_bits = rng.integers(0, 2**32, size=40000, dtype=np.uint64).astype(np.uint32)
sign = rng.integers(0, 2, size=40000, dtype=np.uint64).astype(np.uint32) << 31
expo = rng.integers(0, 256, size=40000, dtype=np.uint64).astype(np.uint32) << 23
mant = rng.integers(0, 2**23, size=40000, dtype=np.uint64).astype(np.uint32)
r_exp = sign | expo | mant
mag = np.exp2(rng.uniform(-26, 17, size=20000)).astype(np.float32)
r_f16 = (mag * rng.choice(np.array([-1, 1], dtype=np.float32), size=20000)).view(np.uint32)
inputs = np.concatenate([special, r_bits, r_exp, r_f16]).astype(np.uint32)

bf, hf = to16(inputs)
out = (hf << 16) | bf

# spot checks of the rules the C code states
assert bf[np.where(inputs == 0x7FC00000)[0][0]] == 0xFFFF           # every NaN -> 0xFFFF
assert hf[np.where(inputs == 0xFFC00000)[0][0]] == 0xFE00           # fp16 NaN keeps its sign
assert hf[np.where(inputs == 0x477FEFFF)[0][0]] == 0x7BFF           # 65519.99 -> 65504
assert hf[np.where(inputs == 0x477FF000)[0][0]] == 0x7C00           # 65520 -> inf
assert hf[np.where(inputs == 0x33000000)[0][0]] == 0x0000           # 2^-25 ties to 0
assert hf[np.where(inputs == 0x33000001)[0][0]] == 0x0001


rec = refio.Records()
rec.put_words("in", inputs)
rec.put_words("out", out)
rec.write(OUT)
print("wrote %s: %d inputs (%d special)" % (OUT, inputs.size, special.size))

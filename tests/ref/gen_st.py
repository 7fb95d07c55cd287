#!/usr/bin/env python3
"""Safetensors references for tests/test_data.c.

    /usr/bin/python3 tests/ref/gen_st.py              (from the repository root)
writes, with the safetensors library (pip install safetensors; torch for BF16):
    tests/ref/st_ref.safetensors  F32, F16, BF16, F64, I64 tensors and __metadata__
    tests/ref/st_ref.bin          the float32 values torch reads back from it (lt_test.h's format)

    /usr/bin/python3 tests/ref/gen_st.py --check build/tmp/st_roundtrip.safetensors
loads a file ltrain.h wrote (test st_roundtrip) and checks it holds what the test put in.
"""
import struct
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

import refio

REF = "tests/ref/st_ref.safetensors"
BIN = "tests/ref/st_ref.bin"


def reference_tensors():
    torch.manual_seed(0)
    third = 1.0 / 3.0
    t = {}
    t["w_f32"] = torch.tensor([[0.5, -1.25, 3.0e-3], [1e30, -7.0, third]], dtype=torch.float32)
    # F16: rounding, the largest finite value, subnormals (2^-24, 1e-5), -0, the smallest normal
    t["w_f16"] = torch.tensor([[third, -2.5, 65504.0, 6e-8, 1e-5],
                               [-0.0, 0.1, 1000.7, -3.14159, 2.0 ** -14]], dtype=torch.float32).half()
    # BF16: rounding, near the float32 maximum, a float32 subnormal
    t["w_bf16"] = torch.tensor([[third, -2.5, 3e38], [1e-40, 0.1, 1000.7],
                                [-3.14159, 1.0, 65536.5]], dtype=torch.float32).bfloat16()
    t["w_f64"] = torch.tensor([0.1, third, -1e-300, 1e20], dtype=torch.float64)
    t["r_f16"] = torch.randn(3, 4).half()
    t["r_bf16"] = torch.randn(2, 2, 3).bfloat16()
    t["ids_i64"] = torch.tensor([0, -5, 2 ** 40], dtype=torch.int64)
    return t


def generate():
    t = reference_tensors()
    save_file(t, REF, metadata={"format": "pt", "source": "tests/ref/gen_st.py"})
    back = load_file(REF)  # the values exactly as Python reads them
    refio.write_file(BIN, [(k, back[k].to(torch.float32).numpy()) for k in t])
    print("wrote", REF, "and", BIN)


def check(path):
    want = {
        "a.weight": (torch.float32, [2, 3], [0.5, -1.25, 3.0, 4.5, -0.0, 1e-3]),
        "ids": (torch.int64, [4], [1, -2, 2 ** 40, 7]),
        "scalar": (torch.float32, [], [2.5]),
        "empty": (torch.float32, [0, 3], []),
        'we"ird\\name\n\u00e9': (torch.float32, [1], [-1.0]),
    }
    got = load_file(path)
    assert sorted(got) == sorted(want), (sorted(got), sorted(want))
    for name, (dt, shape, vals) in want.items():
        x = got[name]
        assert x.dtype == dt and list(x.shape) == shape, (name, x.dtype, x.shape)
        ref = torch.tensor(vals, dtype=dt).reshape(shape)
        assert torch.equal(x, ref), (name, x, ref)
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
    assert meta == {"format": "pt", "note": 'line1\nline2 "q"'}, meta
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
    assert n % 8 == 0, n
    print("ok: %s parses with safetensors (%d tensors, metadata %r)" % (path, len(got), meta))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    else:
        generate()

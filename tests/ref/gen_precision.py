"""Reference data for tests/test_precision.c: the 16-bit matmul ops (lt_set_precision) against
torch.autocast("cpu", dtype=torch.bfloat16) in PyTorch 1.13.

Run from the repository root:   python3 tests/ref/gen_precision.py
Writes tests/ref/precision.bin in the record format of tests/lt_test.h (u32 name length, name,
u32 ndim, i64 shape[ndim], f32 data).

A case CASE has records CASE.x0 CASE.x1 [CASE.x2] (float32 inputs: x, W, bias or a, b),
CASE.args (matmul flags), CASE.g (the gradient given to the float32 copy of the output),
CASE.out (the output, 16-bit values) and CASE.g0 CASE.g1 [CASE.g2] (the float32 gradients of the
inputs).  bf16 cases run torch's autocast and keep what it computes:
    with torch.autocast("cpu", dtype=torch.bfloat16): y = op(x0, x1, x2)
    y.float().backward(g)
Their sizes keep every product above torch 1.13's 16^3 threshold, so the bf16 GEMMs go to oneDNN
(float32 sums, one rounding); below it ATen's fallback GEMM sums some layouts in bf16 itself.  The
script checks that torch's results equal the exact product rounded once for all but a few
elements (the sums' order decides some roundings).
fp16 cases (torch 1.13 has no CPU fp16 autocast) are the same arithmetic emulated in float64 with
the operands rounded to fp16, as CUDA's autocast computes: round16(round16(x) · round16(W) +
round16(b)), and in backward round16(round16(g) · ...) for each gradient.
"""
import os

import numpy as np
import torch

import refio

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "precision.bin")
REC = refio.Records()
put = REC.put
LT_TRANS_A, LT_TRANS_B = 1, 2
rng = np.random.default_rng(1613)


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def agree(name, got, exact, limit=0.01):
    """torch's result against the exactly rounded one: mismatches must be rare."""
    frac = float((got != exact).float().mean())
    assert frac <= limit, "%s: %.4f of the elements differ from the exact rounding" % (name, frac)


def bf16_case(cid, kind, xs, flags=0):
    ts = [None if x is None else torch.tensor(x, requires_grad=True) for x in xs]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if kind == "linear":
            y = torch.nn.functional.linear(ts[0], ts[1], ts[2])
        elif kind == "conv1d":   # Hugging Face Conv1D: addmm(b, x, W) over the rows
            y = torch.addmm(ts[2], ts[0].reshape(-1, ts[0].shape[-1]), ts[1]).reshape(*ts[0].shape[:-1], -1)
        else:
            a = ts[0].transpose(-1, -2) if flags & LT_TRANS_A else ts[0]
            b = ts[1].transpose(-1, -2) if flags & LT_TRANS_B else ts[1]
            y = torch.matmul(a, b)
    assert y.dtype == torch.bfloat16
    g = rnd(*y.shape)
    y.float().backward(torch.tensor(g))
    # the same arithmetic, exactly: float64 products of bf16 operands, each result rounded once
    r = [None if x is None else torch.tensor(x).bfloat16().double().requires_grad_() for x in xs]
    if kind == "linear":
        ex = r[0] @ r[1].t() + r[2]
    elif kind == "conv1d":
        ex = r[0] @ r[1] + r[2]
    else:
        a = r[0].transpose(-1, -2) if flags & LT_TRANS_A else r[0]
        b = r[1].transpose(-1, -2) if flags & LT_TRANS_B else r[1]
        ex = a @ b
    agree(cid + ".out", y, ex.float().bfloat16())
    ex.backward(torch.tensor(g).bfloat16().double())
    for k, x in enumerate(xs):
        if x is not None:
            agree("%s.g%d" % (cid, k), ts[k].grad, r[k].grad.float().bfloat16().float())
            put("%s.x%d" % (cid, k), x)
            put("%s.g%d" % (cid, k), ts[k].grad)
            assert ts[k].grad.bfloat16().float().equal(ts[k].grad), "gradient %d is not bf16-valued" % k
    put(cid + ".args", [flags])
    put(cid + ".g", g)
    put(cid + ".out", y.detach().float())


def r16(t):
    return t.half().double()


def fp16_linear_case(cid, x, W, b):
    X, Wt, B = r16(torch.tensor(x)), r16(torch.tensor(W)), r16(torch.tensor(b))
    y = r16((X @ Wt.t() + B).float())
    g = rnd(*y.shape)
    G = r16(torch.tensor(g))
    for k, v in enumerate([x, W, b]):
        put("%s.x%d" % (cid, k), v)
    put(cid + ".args", [0])
    put(cid + ".g", g)
    put(cid + ".out", y)
    put(cid + ".g0", r16((G @ Wt).float()))
    put(cid + ".g1", r16((G.t() @ X).float()))
    put(cid + ".g2", r16(G.sum(0).float()))


bf16_case("linear/2x24x40->36", "linear", [rnd(2, 24, 40), rnd(36, 40) * 0.2, rnd(36)])
bf16_case("conv1d/48x40->36", "conv1d", [rnd(48, 40), rnd(40, 36) * 0.2, rnd(36)])
bf16_case("matmul_tb/4x24x16.4x20x16", "matmul", [rnd(4, 24, 16), rnd(4, 20, 16)], LT_TRANS_B)
bf16_case("matmul_ta/3x16x24.3x16x20", "matmul", [rnd(3, 16, 24), rnd(3, 16, 20)], LT_TRANS_A)
bf16_case("matmul_shared/2x24x32.32x20", "matmul", [rnd(2, 24, 32), rnd(32, 20)])
fp16_linear_case("fp16_linear/48x40->36", rnd(48, 40), rnd(36, 40) * 0.2, rnd(36))

REC.write(OUT)
print("wrote %s: %d records, %d bytes" % (OUT, len(REC), os.path.getsize(OUT)))

"""Reference data for tests/test_ops.c: every op of ltrain.h against PyTorch.

Run from the repository root with PyTorch 1.13:   python3 tests/ref/gen_ops.py
Writes tests/ref/ops.bin with tests/ref/refio.py (the record format of tests/lt_test.h: u32 name
length, name, u32 ndim, i64 shape[ndim], f32 data).

A case is named KIND/SHAPES/sSEED, e.g. "matmul_tb/65x130x67/s0"; KIND starts with the op's name
(lt_KIND, longest match).  Its records are CASE.NAME with NAME one of
    x0 x1 x2   float inputs (each becomes a parameter on the C side; absent = NULL, e.g. no bias)
    ids        integer argument stored as exact floats: embedding ids [n0,n1], cross-entropy
               targets, attention lengths
    args       scalar arguments: matmul flags, scale s, layernorm eps, attention n_head,
               cross_entropy_sum denom, transpose d0 d1
    out        the op's output
    R          a random tensor shaped like out
    g0 g1 g2   d/dx_k of loss = sum(out * R)

Inputs are float32 values; the reference is computed in float64 from exactly those values and
rounded to float32 once, so it is the correctly rounded answer and the C side's float32 error is
all that the tests measure.
"""
import math
import os
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import refio

warnings.filterwarnings("ignore")
torch.manual_seed(0)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops.bin")
REC = refio.Records()
LT_TRANS_A, LT_TRANS_B = 1, 2


def shp(*shapes):
    return "_".join("x".join(str(d) for d in s) for s in shapes)


def case(kind, label, seed, fn, xs, ids=None, args=None, keep_inf=False):
    """fn(list of float64 tensors) -> output; xs: float32 arrays (None = absent input)."""
    refio.op_case(REC, kind, label, seed, fn, xs, ids, args, rng_base=10007, keep_inf=keep_inf)


def randn(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- elementwise with broadcasting: b is a's trailing dims, or a's shape ----------------------------
EW_SHAPES = [((1,), (1,)), ((3, 7), (7,)), ((2, 3, 17), (3, 17)), ((2, 1, 3, 5), (2, 1, 3, 5)),
             ((4, 33), (4, 33)), ((5, 65), (65,)), ((2, 3, 1, 7), (1, 7))]
EW = {"add": lambda t: t[0] + t[1], "sub": lambda t: t[0] - t[1], "mul": lambda t: t[0] * t[1]}
for op, f in EW.items():
    for i, (sa, sb) in enumerate(EW_SHAPES):
        for seed in ((0, 1) if i < 3 else (i % 3,)):
            rng = np.random.default_rng(100 + seed * 7 + i)
            case(op, shp(sa, sb), seed, f, [randn(rng, *sa), randn(rng, *sb)])

# ---- scale, sum, mean -------------------------------------------------------------------------------
for i, (s, sc) in enumerate([((1,), 2.5), ((3, 7), -0.3), ((2, 3, 17), 1.0 / 3.0), ((2, 1, 5, 9), 7.0)]):
    for seed in (0, 1):
        rng = np.random.default_rng(200 + seed * 7 + i)
        sc32 = float(np.float32(sc))
        case("scale", shp(s), seed, lambda t, sc32=sc32: t[0] * sc32, [randn(rng, *s)], args=[sc32])
for i, s in enumerate([(1,), (7,), (3, 17), (2, 3, 33), (2, 1, 65, 7)]):
    for seed in (0, 1):
        rng = np.random.default_rng(300 + seed * 7 + i)
        case("sum", shp(s), seed, lambda t: t[0].sum().reshape(1), [randn(rng, *s)])
        case("mean", shp(s), seed, lambda t: t[0].mean().reshape(1), [randn(rng, *s)])


# ---- matmul: op(a) @ op(b) over the last two dims ----------------------------------------------------
def mm(flags):
    def f(t):
        a = t[0].transpose(-1, -2) if flags & LT_TRANS_A else t[0]
        b = t[1].transpose(-1, -2) if flags & LT_TRANS_B else t[1]
        return a @ b
    return f


def mm_shapes(batch, M, K, N, flags, shared=False):
    sa = batch + ((K, M) if flags & LT_TRANS_A else (M, K))
    sb = (() if shared else batch) + ((N, K) if flags & LT_TRANS_B else (K, N))
    return sa, sb


KINDS = {0: "matmul", LT_TRANS_A: "matmul_ta", LT_TRANS_B: "matmul_tb", 3: "matmul_tatb"}
# (M, K, N): dims of 1, odd sizes, tile edges (64-wide tiles: 65, 130, 67), K past the 256 block
MM = {0: [(1, 1, 1), (3, 7, 5), (65, 130, 67), (17, 300, 3)],
      LT_TRANS_A: [(1, 5, 3), (7, 17, 33), (65, 33, 66)],
      LT_TRANS_B: [(3, 1, 7), (33, 17, 7), (65, 130, 67)],
      3: [(5, 3, 1), (17, 33, 7), (66, 17, 65)]}
for flags, lst in MM.items():
    for i, (M, K, N) in enumerate(lst):
        for seed in ((0, 1) if M * K * N < 5000 else (0,)):
            rng = np.random.default_rng(400 + seed * 7 + i + 10 * flags)
            sa, sb = mm_shapes((), M, K, N, flags)
            case(KINDS[flags], "%dx%dx%d" % (M, K, N), seed, mm(flags), [randn(rng, *sa), randn(rng, *sb)],
                 args=[flags])
# batched (3-D, 4-D) and a 2-D b shared by every batch, each under all four transposes
for flags in range(4):
    for j, (batch, M, K, N, shared) in enumerate([((2,), 3, 7, 5, False), ((2, 3), 5, 4, 3, False),
                                                   ((3,), 5, 7, 4, True), ((2, 2), 3, 17, 2, True),
                                                   ((1,), 1, 3, 2, False)]):
        rng = np.random.default_rng(500 + j + 10 * flags)
        sa, sb = mm_shapes(batch, M, K, N, flags, shared)
        kind = "matmul_batched" + ("_shared" if shared else "") + ("_f%d" % flags)
        case(kind, shp(sa, sb), j % 2, mm(flags), [randn(rng, *sa), randn(rng, *sb)], args=[flags])

# ---- linear (x Wᵀ + b, W [out,in]) and conv1d (x W + b, W [in,out]) -------------------------------------
for i, (xs, O) in enumerate([((1, 1), 1), ((3, 7), 5), ((2, 5, 17), 33), ((2, 1, 3, 65), 67), ((4, 130), 3), ((7,), 5)]):
    I = xs[-1]
    for bias in (True, False):
        seed = i % 2 if bias else 2
        rng = np.random.default_rng(600 + i + 10 * bias)
        x, wl, wc, b = randn(rng, *xs), randn(rng, O, I, scale=0.3), randn(rng, I, O, scale=0.3), randn(rng, O)
        tag = "" if bias else "_nobias"
        case("linear" + tag, shp(xs, (O, I)), seed, lambda t: F.linear(t[0], t[1], t[2]), [x, wl, b if bias else None])
        case("conv1d" + tag, shp(xs, (I, O)), seed,
             lambda t: t[0] @ t[1] + (t[2] if t[2] is not None else 0), [x, wc, b if bias else None])

# ---- pointwise activations ---------------------------------------------------------------------------------
ACT = {"gelu": lambda t: F.gelu(t[0], approximate="tanh"), "gelu_erf": lambda t: F.gelu(t[0]),
       "relu": lambda t: F.relu(t[0]), "tanh": lambda t: torch.tanh(t[0]), "sigmoid": lambda t: torch.sigmoid(t[0])}
for op, f in ACT.items():
    for i, s in enumerate([(1,), (3, 7), (2, 3, 17), (2, 1, 5, 33)]):
        for seed in ((0, 1) if i < 3 else (2,)):
            rng = np.random.default_rng(700 + i + seed * 7)
            x = randn(rng, *s, scale=2.0)
            if op == "relu":  # keep clear of the kink at 0, where torch and we both give 0 but fp noise differs
                x = np.where(np.abs(x) < 1e-3, np.float32(0.5), x).astype(np.float32)
            case(op, shp(s), seed, f, [x])
    # the tails: large |x| (saturation), tiny |x|
    x = np.array([-30, -12, -8.5, -5, -3, -1e-3, -1e-6, 0, 1e-6, 1e-3, 3, 5, 8.5, 12, 30], dtype=np.float32)
    if op == "relu":
        x = x[np.abs(x) > 1e-2]
    case(op + "_tails", shp(x.shape), 0, f, [x])

# ---- softmax, log-softmax over the last dim -------------------------------------------------------------
SM = {"softmax": lambda t: torch.softmax(t[0], -1), "log_softmax": lambda t: torch.log_softmax(t[0], -1)}
for op, f in SM.items():
    for i, s in enumerate([(1,), (1, 7), (3, 17), (2, 3, 33), (2, 65)]):
        for seed in ((0, 1) if i < 3 else (2,)):
            rng = np.random.default_rng(800 + i + seed * 7)
            case(op, shp(s), seed, f, [randn(rng, *s, scale=3.0)])
    # stability: logits of ±1e4 (exact float32 values), and rows with some -inf entries
    big = np.array([[1e4, 1e4 - 0.5, -1e4, 0.0, 1e4 - 3.0], [-1e4, -1e4 + 0.25, -1e4 + 2.0, -1e4, -1e4 + 1.0],
                    [1e4, -1e4, -1e4, -1e4, -1e4]], dtype=np.float32)
    case(op + "_stab", "big_" + shp(big.shape), 0, f, [big])
    ninf = np.array([[-np.inf, 1.0, 2.0, -np.inf, 0.5, -1.0, 3.0], [0.3, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf, -np.inf],
                     [-np.inf, -np.inf, 1e4, -1e4, 2.0, -np.inf, 1e4 - 1.0]], dtype=np.float32)
    case(op + "_stab", "ninf_" + shp(ninf.shape), 0, f, [ninf], keep_inf=True)

# ---- layernorm (eps 1e-5, torch.nn.functional.layer_norm) ------------------------------------------------
EPS = 1e-5
for i, (s, affine) in enumerate([((1, 1), True), ((3, 7), True), ((2, 3, 17), True), ((4, 65), True),
                                 ((2, 1, 3, 33), True), ((3, 7), False), ((2, 5), False), ((9,), True)]):
    for seed in ((0, 1) if i < 3 else (2,)):
        rng = np.random.default_rng(900 + i + seed * 7)
        C = s[-1]
        x = randn(rng, *s, scale=2.0) + np.float32(0.5)
        w, b = (randn(rng, C) + np.float32(1.0), randn(rng, C)) if affine else (None, None)
        case("layernorm" + ("" if affine else "_noaffine"), shp(s), seed,
             lambda t: F.layer_norm(t[0], (t[0].shape[-1],), t[1], t[2], EPS), [x, w, b], args=[EPS])
# constant rows (var = 0: rstd = 1/sqrt(eps), x̂ = 0) next to ordinary ones
rng = np.random.default_rng(950)
x = randn(rng, 4, 9)
x[0, :] = 3.25
x[2, :] = 0.1  # a mean that is not a short binary fraction
case("layernorm_const", shp(x.shape), 0, lambda t: F.layer_norm(t[0], (9,), t[1], t[2], EPS),
     [x, randn(rng, 9) + np.float32(1.0), randn(rng, 9)], args=[EPS])

# ---- embedding (rows repeat: their gradients add up) -------------------------------------------------------
for i, (V, C, n0, n1) in enumerate([(1, 1, 1, 1), (5, 7, 1, 9), (17, 3, 2, 5), (33, 65, 3, 4), (4, 5, 6, 1)]):
    for seed in ((0, 1) if i < 3 else (2,)):
        rng = np.random.default_rng(1000 + i + seed * 7)
        ids = rng.integers(0, V, size=(n0, n1))
        ids[0, 0] = ids[-1, -1] = V - 1  # at least one repeat, and the last row
        ids_t = torch.tensor(ids)
        case("embedding", "%dx%d_ids%dx%d" % (V, C, n0, n1), seed,
             lambda t, ids_t=ids_t, n0=n0: F.embedding(ids_t if n0 > 1 else ids_t[0], t[0]),
             [randn(rng, V, C)], ids=ids)

# ---- transpose (a copy) ------------------------------------------------------------------------------------
for i, (s, d0, d1) in enumerate([((1, 1), 0, 1), ((3, 7), 0, 1), ((2, 3, 5), 1, 2), ((2, 3, 5), 0, 2),
                                 ((2, 3, 4, 5), 1, 2), ((2, 3, 4, 5), 0, 3), ((3, 5, 7), 1, 1)]):
    rng = np.random.default_rng(1100 + i)
    case("transpose", "%s_d%d%d" % (shp(s), d0, d1), i % 2,
         lambda t, d0=d0, d1=d1: t[0].transpose(d0, d1).contiguous(), [randn(rng, *s)], args=[d0, d1])


# ---- causal multi-head attention from fused qkv [B,T,3C] ----------------------------------------------------
def attention(qkv, H, lengths=None):
    B, T, C3 = qkv.shape
    C = C3 // 3
    D = C // H
    q, k, v = qkv.split(C, dim=-1)
    q = q.reshape(B, T, H, D).transpose(1, 2)
    k = k.reshape(B, T, H, D).transpose(1, 2)
    v = v.reshape(B, T, H, D).transpose(1, 2)
    s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(D))
    qi = torch.arange(T).reshape(T, 1)
    ki = torch.arange(T).reshape(1, T)
    masked = (ki > qi).reshape(1, 1, T, T).expand(B, H, T, T)
    if lengths is not None:
        ln = torch.tensor(lengths).reshape(B, 1, 1, 1)
        # keys at or past the length are padding; rows of padded queries keep their causal keys
        # here (so no row is all -inf) and are zeroed below
        masked = masked | ((ki.reshape(1, 1, 1, T) >= ln) & (qi.reshape(1, 1, T, 1) < ln))
    p = torch.softmax(s.masked_fill(masked, float("-inf")), dim=-1)
    y = (p @ v).transpose(1, 2).reshape(B, T, C)
    if lengths is not None:
        keep = (torch.arange(T).reshape(1, T, 1) < torch.tensor(lengths).reshape(B, 1, 1))
        y = torch.where(keep, y, torch.zeros_like(y))
    return y


for i, (B, T, C, H, lengths) in enumerate([(1, 1, 1, 1, None), (2, 5, 4, 2, None), (2, 7, 12, 3, None),
                                           (1, 17, 8, 1, None), (3, 6, 6, 2, [6, 3, 1]),
                                           (2, 9, 8, 4, [0, 7]), (3, 1, 4, 2, None)]):
    for seed in ((0, 1) if i < 3 else (2,)):
        rng = np.random.default_rng(1200 + i + seed * 7)
        label = "B%dT%dC%dH%d" % (B, T, C, H) + ("_len" + "-".join(str(x) for x in lengths) if lengths else "")
        case("attention" + ("_len" if lengths else ""), label, seed,
             lambda t, H=H, lengths=lengths: attention(t[0], H, lengths), [randn(rng, B, T, 3 * C)],
             ids=lengths, args=[H])


# ---- losses ---------------------------------------------------------------------------------------------------
def ce(t, tg, V, denom=None):
    x = t[0].reshape(-1, V)
    if denom is None:
        return F.cross_entropy(x, tg, ignore_index=-1).reshape(1)
    return (F.cross_entropy(x, tg, ignore_index=-1, reduction="sum") / denom).reshape(1)


for i, s in enumerate([(1, 1), (1, 7), (5, 3), (2, 3, 17), (4, 65), (6,)]):
    V = s[-1]
    rows = int(np.prod(s[:-1]))
    for seed in ((0, 1) if i < 3 else (2,)):
        rng = np.random.default_rng(1300 + i + seed * 7)
        tg = rng.integers(0, V, size=rows)
        if rows > 1:
            tg[rng.permutation(rows)[: max(1, rows // 3)]] = -1  # some ignored rows, never all
        tgt = torch.tensor(tg)
        x = randn(rng, *s, scale=2.0)
        case("cross_entropy", shp(s), seed, lambda t, tgt=tgt, V=V: ce(t, tgt, V), [x], ids=tg)
        denom = float(np.float32(rows * 1.5 + 2))
        case("cross_entropy_sum", shp(s) + "_d%g" % denom, seed,
             lambda t, tgt=tgt, V=V, d=denom: ce(t, tgt, V, d), [x], ids=tg, args=[denom])
# stability: ±1e4 logits, -inf entries (never at the target), ignored rows
big = np.array([[1e4, 1e4 - 0.5, -1e4, 0.0], [-1e4, -1e4 + 0.25, -1e4 + 2.0, -1e4], [1e4, -1e4, -1e4, -1e4],
                [-np.inf, 1.0, -np.inf, 2.0], [3.0, -np.inf, -np.inf, -np.inf], [1e4, -np.inf, 0.0, -1e4]],
               dtype=np.float32)
for j, tg in enumerate([np.array([0, 1, 1, 3, 0, 2]), np.array([2, -1, 0, 1, -1, 0])]):
    tgt = torch.tensor(tg)
    case("cross_entropy_stab", shp(big.shape) + "_t%d" % j, 0, lambda t, tgt=tgt: ce(t, tgt, 4), [big], ids=tg)

for i, (sp, st) in enumerate([((1,), (1,)), ((3, 7), (3, 7)), ((2, 3, 17), (6, 17)), ((65,), (5, 13))]):
    for seed in ((0, 1) if i < 2 else (2,)):
        rng = np.random.default_rng(1400 + i + seed * 7)
        case("mse_loss", shp(sp, st), seed, lambda t: F.mse_loss(t[0].reshape(-1), t[1].reshape(-1)).reshape(1),
             [randn(rng, *sp), randn(rng, *st)])

# attention at the kernels' block edges (64 query rows / keys, 128-key steps), head sizes up to 64, T on
# both sides of them, lengths 0 and T (appended here so the cases above keep their random R)
for i, (B, T, C, H, lengths) in enumerate([(1, 63, 32, 1, None), (1, 65, 32, 2, None), (1, 130, 64, 1, None),
                                           (3, 65, 12, 2, [65, 0, 64]), (2, 130, 8, 1, [130, 1]),
                                           (2, 129, 16, 4, [0, 129])]):
    rng = np.random.default_rng(1250 + i)
    label = "B%dT%dC%dH%d" % (B, T, C, H) + ("_len" + "-".join(str(x) for x in lengths) if lengths else "")
    case("attention" + ("_len" if lengths else ""), label, 3,
         lambda t, H=H, lengths=lengths: attention(t[0], H, lengths), [randn(rng, B, T, 3 * C)],
         ids=lengths, args=[H])

REC.write(OUT)
print("wrote %s: %d cases, %d records, %d bytes" % (OUT, REC.cases(), len(REC), os.path.getsize(OUT)))

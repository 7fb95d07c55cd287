"""Reference data for tests/test_llama_ops.c: the Llama-style ops of ltrain.h against PyTorch and
transformers (RMSNorm, rotary embeddings, SiLU, SwiGLU, grouped-query attention).

Run from the repository root:   python3 tests/ref/gen_llama_ops.py   (torch 2.x, transformers)
Writes tests/ref/llama_ops.bin with tests/ref/refio.py (the record format of tests/lt_test.h, the op-case
layout of tests/ref/gen_ops.py): a case KIND/LABEL/sSEED holds x0 x1 x2 (inputs), ids (attention lengths),
args (scalars, per kind below), out, R (random, out's shape) and g0 g1 g2 = d sum(out·R) / d x_k.
    rmsnorm   x0 = x, x1 = w (absent: no weight); args = [eps]
    qknorm    x0 = x [B,T,H·D], x1 = w [D]; args = [eps, H]: RMSNorm over each head's D channels
    rope      x0 = x [B,T,H·D]; args = [H, theta, pos0]
    silu      x0
    swiglu    x0 = gate, x1 = up
    gqa       x0 = q [B,T,H·D], x1 = k, x2 = v [B,T,Hkv·D]; args = [H, Hkv]; ids = lengths (optional)
Inputs are float32; the reference is float64 arithmetic on exactly those values (rounded once),
except RoPE's cos/sin tables, which are transformers' LlamaRotaryEmbedding's own float32 values (its
angles are float32 products, and the test checks that ltrain.h's angles carry the same rounding).
The checks of the reference itself (asserted below): torch.nn.RMSNorm agrees with LlamaRMSNorm (which
computes in float32) to float32 rounding, and SDPA with enable_gqa=True equals repeat_kv + SDPA.
"""
import math
import os
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import (LlamaRMSNorm, LlamaRotaryEmbedding, apply_rotary_pos_emb,
                                                      repeat_kv)

import refio

warnings.filterwarnings("ignore")
torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llama_ops.bin")
REC = refio.Records()


def case(kind, label, seed, fn, xs, ids=None, args=None):
    """fn(list of float64 tensors) -> output; xs: float32 arrays (None = absent input)."""
    refio.op_case(REC, kind, label, seed, fn, xs, ids, args, rng_base=20011)


def randn(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- RMSNorm: torch.nn.RMSNorm (checked against LlamaRMSNorm) ----------------------------------------
def rmsnorm(x, w, eps):
    C = x.shape[-1]
    m = torch.nn.RMSNorm(C, eps=eps, elementwise_affine=w is not None).double()
    if w is None:
        return m(x)
    y = F.rms_norm(x, (C,), w, eps)   # torch.nn.RMSNorm's function (checked: the module, same numbers)
    m = torch.nn.RMSNorm(C, eps=eps).double()
    with torch.no_grad():
        m.weight.copy_(w)
    assert torch.equal(y.detach(), m(x.detach()).detach())
    ref = LlamaRMSNorm(C, eps=eps)   # float32 arithmetic inside: agrees to float32 rounding
    with torch.no_grad():
        ref.weight.copy_(w.float())
    assert torch.allclose(y.float(), ref(x.detach().float()), rtol=1e-5, atol=1e-6)
    return y


for i, (s, has_w, eps) in enumerate([((1, 1), True, 1e-6), ((3, 7), True, 1e-5), ((2, 5, 33), True, 1e-6),
                                      ((4, 65), False, 1e-5), ((2, 3, 257), True, 1e-6), ((5, 300), False, 1e-6)]):
    for seed in ((0, 1) if i < 3 else (2,)):
        rng = np.random.default_rng(500 + i + seed * 7)
        x = randn(rng, *s, scale=1.5)
        w = (1.0 + 0.3 * randn(rng, s[-1])).astype(np.float32) if has_w else None
        eps32 = float(np.float32(eps))
        case("rmsnorm", "x".join(map(str, s)) + ("" if has_w else "_now"), seed,
             lambda t, eps=eps32: rmsnorm(t[0], t[1], eps), [x, w], args=[eps32])

# QK-norm: RMSNorm over each head of q [B,T,H*D] (Qwen3's q_norm: weight [D])
for i, (B, T, H, D) in enumerate([(2, 3, 4, 6), (1, 5, 2, 16)]):
    rng = np.random.default_rng(550 + i)
    x = randn(rng, B, T, H * D)
    w = (1.0 + 0.3 * randn(rng, D)).astype(np.float32)
    case("qknorm", "B%dT%dH%dD%d" % (B, T, H, D), 0,
         lambda t, B=B, T=T, H=H, D=D: rmsnorm(t[0].reshape(B, T, H, D), t[1], 1e-6).reshape(B, T, H * D), [x, w],
         args=[float(np.float32(1e-6)), H])


# ---- RoPE: transformers' LlamaRotaryEmbedding (float32 cos/sin) + apply_rotary_pos_emb ---------------
def rope_tables(B, T, H, D, theta, pos0):
    cfg = LlamaConfig(hidden_size=H * D, num_attention_heads=H, head_dim=D, rope_theta=theta)
    emb = LlamaRotaryEmbedding(cfg)
    pos = torch.arange(pos0, pos0 + T)[None].expand(B, T)
    cos, sin = emb(torch.zeros(1, dtype=torch.float32), pos)
    assert cos.dtype == torch.float32
    return cos.double(), sin.double()


def rope(x, B, T, H, D, theta, pos0):
    cos, sin = rope_tables(B, T, H, D, theta, pos0)
    q = x.reshape(B, T, H, D).transpose(1, 2)   # [B,H,T,D] as HF's attention holds it
    y, _ = apply_rotary_pos_emb(q, q, cos, sin)
    return y.transpose(1, 2).reshape(B, T, H * D)


for i, (B, T, H, D, theta, pos0) in enumerate([(1, 1, 1, 2, 10000.0, 0), (2, 5, 3, 8, 10000.0, 0),
                                                (1, 7, 2, 6, 500000.0, 3), (2, 4, 2, 16, 10000.0, 1000),
                                                (1, 33, 4, 32, 1e6, 0), (3, 3, 1, 64, 10000.0, 250),
                                                (1, 9, 2, 128, 500000.0, 77)]):
    for seed in ((0, 1) if i < 3 else (2,)):
        rng = np.random.default_rng(600 + i + seed * 7)
        case("rope", "B%dT%dH%dD%d_th%g_p%d" % (B, T, H, D, theta, pos0), seed,
             lambda t, a=(B, T, H, D, theta, pos0): rope(t[0], *a), [randn(rng, B, T, H * D)], args=[H, theta, pos0])

# ---- SiLU, SwiGLU ----------------------------------------------------------------------------------------
for i, s in enumerate([(1,), (3, 7), (2, 5, 33), (4097,), (2, 3, 500)]):
    for seed in ((0, 1) if i < 3 else (2,)):
        rng = np.random.default_rng(700 + i + seed * 7)
        x = randn(rng, *s, scale=3.0)
        if i == 1:
            x[0, :4] = [-90.0, 90.0, 0.0, -20.0]   # saturated tails, zero
        case("silu", "x".join(map(str, s)), seed, lambda t: F.silu(t[0]), [x])
        case("swiglu", "x".join(map(str, s)), seed, lambda t: F.silu(t[0]) * t[1], [x, randn(rng, *s)])


# ---- grouped-query attention: SDPA(enable_gqa=True), checked against repeat_kv + plain attention -------
def gqa(q, k, v, H, Hk, lengths=None):
    B, T, C = q.shape
    D = C // H
    qh = q.reshape(B, T, H, D).transpose(1, 2)
    kh = k.reshape(B, T, Hk, D).transpose(1, 2)
    vh = v.reshape(B, T, Hk, D).transpose(1, 2)
    qi = torch.arange(T).reshape(T, 1)
    ki = torch.arange(T).reshape(1, T)
    allowed = (ki <= qi).reshape(1, 1, T, T).expand(B, 1, T, T)
    if lengths is not None:
        ln = torch.tensor(lengths).reshape(B, 1, 1, 1)
        # keys past the length are padding; padded query rows keep their causal keys (no row is
        # all masked) and their outputs are zeroed below
        allowed = allowed & ((ki.reshape(1, 1, 1, T) < ln) | (qi.reshape(1, 1, T, 1) >= ln))
    y = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=allowed, enable_gqa=True)
    rep = F.scaled_dot_product_attention(qh, repeat_kv(kh, H // Hk), repeat_kv(vh, H // Hk), attn_mask=allowed)
    assert torch.allclose(y, rep, rtol=1e-12, atol=1e-12)
    y = y.transpose(1, 2).reshape(B, T, C)
    if lengths is not None:
        keep = torch.arange(T).reshape(1, T, 1) < torch.tensor(lengths).reshape(B, 1, 1)
        y = torch.where(keep, y, torch.zeros_like(y))
    return y


for i, (B, T, H, Hk, D, lengths) in enumerate([(1, 1, 1, 1, 1, None), (2, 5, 4, 2, 3, None),
                                                (2, 7, 6, 1, 4, None), (1, 9, 3, 3, 5, None),
                                                (3, 6, 4, 2, 4, [6, 3, 1]), (2, 9, 8, 2, 2, [0, 7]),
                                                (1, 65, 4, 2, 8, None), (2, 130, 4, 2, 8, [130, 61]),
                                                (1, 129, 4, 1, 32, None)]):
    for seed in ((0, 1) if i < 3 else (2,)):
        rng = np.random.default_rng(800 + i + seed * 7)
        label = "B%dT%dH%dK%dD%d" % (B, T, H, Hk, D) + ("_len" + "-".join(map(str, lengths)) if lengths else "")
        case("gqa", label, seed, lambda t, a=(H, Hk, lengths): gqa(t[0], t[1], t[2], *a),
             [randn(rng, B, T, H * D), randn(rng, B, T, Hk * D), randn(rng, B, T, Hk * D)], ids=lengths,
             args=[H, Hk])

REC.write(OUT)
print("wrote %s: %d cases, %d records, %d bytes" % (OUT, REC.cases(), len(REC), os.path.getsize(OUT)))

"""Reference data for tests/test_gpt.c: a small GPT-2 (L=2, C=64, H=4, T=16, V=256) in plain
torch ops, with Hugging Face's parameter names and layouts.

Run from the repository root with PyTorch 1.13:   python3 tests/ref/gen_gpt.py
Writes tests/ref/gpt.bin in the record format of tests/lt_test.h (u32 name length, name,
u32 ndim, i64 shape[ndim], f32 data).

The model (what transformers' GPT2LMHeadModel computes, written out):
    x = wte[ids] + wpe[0..T-1]
    per block:  x += c_proj(attn(c_attn(ln_1(x))));  x += mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x))))
    logits = ln_f(x) @ wte^T                    (the LM head is tied to wte)
Conv1D weights are [in, out] (y = x @ W + b); c_attn's output is q | k | v on the last dim and
head h owns channels h*D .. (h+1)*D of each; causal softmax attention with scale 1/sqrt(D);
LayerNorm eps 1e-5; GELU with the tanh approximation.

Records:
  w.<name>                      the starting weights (float32), every parameter by its HF name
  a.ids a.targets a.logits a.loss a.grad.<name>      case a: B=2, every target counted
  b.ids b.targets b.logits b.loss b.grad.<name>      case b: B=3, five targets are -1 (ignored);
                                                    gradients only for the tensors in B_GRADS
  train.ids [S,B,T] train.targets [S,B,T]           the batch of each of the S=10 steps
  train.lr.hi/.lo  train.loss.hi/.lo  train.norm.hi/.lo   per step, float64 as two float32s
  final.<name>                  the weights after the S steps (float64 run, rounded to float32)
The weights are random (normal 0.1, LayerNorm weights 1 + N(0, 0.1), biases N(0, 0.1)), not
GPT-2's initialisation, so that every gradient is far from zero and every layout mistake shows
(except the key part of c_attn.bias, channels C..2C, whose gradient is exactly 0 in exact
arithmetic: q.b_k is the same for every key of a query row, and softmax ignores it).

The training run is float64: 10 AdamW steps (betas (0.9, 0.95), eps 1e-8, weight decay 0.1 on
the 2-D parameters only: two param groups, ltrain's LT_DECAY_MARKED), lr from the schedule of
lt_schedule_lr (linear warm-up over 3 steps from 0.1*lr, then cosine to min_lr over the other 7;
checked against torch's SequentialLR(LinearLR, CosineAnnealingLR)), clip_grad_norm_(1.0) before
each step.  A double that must survive the file is stored as NAME.hi = float32(x) and
NAME.lo = float32(x - hi).
"""
import math
import os
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import refio
from gpt_torch import gpt_forward

warnings.filterwarnings("ignore")
torch.set_num_threads(1)   # one summation order: the file is the same on every run and machine
torch.manual_seed(0)
rng = np.random.default_rng(20240520)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpt.bin")
L, C, H, T, V = 2, 64, 4, 16, 256
REC = refio.Records()
put = REC.put
put_f64 = REC.put_f64


# ---- parameters, in Hugging Face order and layout ------------------------------------------------
def param_shapes():
    s = [("wte.weight", (V, C)), ("wpe.weight", (T, C))]
    for i in range(L):
        p = f"h.{i}."
        s += [(p + "ln_1.weight", (C,)), (p + "ln_1.bias", (C,)),
              (p + "attn.c_attn.weight", (C, 3 * C)), (p + "attn.c_attn.bias", (3 * C,)),
              (p + "attn.c_proj.weight", (C, C)), (p + "attn.c_proj.bias", (C,)),
              (p + "ln_2.weight", (C,)), (p + "ln_2.bias", (C,)),
              (p + "mlp.c_fc.weight", (C, 4 * C)), (p + "mlp.c_fc.bias", (4 * C,)),
              (p + "mlp.c_proj.weight", (4 * C, C)), (p + "mlp.c_proj.bias", (C,))]
    s += [("ln_f.weight", (C,)), ("ln_f.bias", (C,))]
    return s


SHAPES = param_shapes()
init = {}
for name, shape in SHAPES:
    if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
        init[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
    else:
        init[name] = (0.1 * rng.standard_normal(shape)).astype(np.float32)
    put("w." + name, init[name])


def make_params(dtype):
    return {n: torch.tensor(init[n], dtype=dtype, requires_grad=True) for n, _ in SHAPES}


# ---- the model ----------------------------------------------------------------------------------
def gpt_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=-1)


# ---- cases a and b: forward and backward in float32 -------------------------------------------
B_GRADS = ["wte.weight", "wpe.weight", "h.0.attn.c_attn.weight", "h.1.ln_2.bias", "ln_f.weight"]
for tag, B, n_ignore in [("a", 2, 0), ("b", 3, 5)]:
    ids = rng.integers(0, V, size=(B, T))
    targets = rng.integers(0, V, size=(B, T))
    if n_ignore:
        flat = targets.reshape(-1)
        flat[rng.choice(B * T, n_ignore, replace=False)] = -1
    P = make_params(torch.float32)
    logits = gpt_forward(P, torch.tensor(ids), L, C, H)
    loss = gpt_loss(logits, torch.tensor(targets))
    loss.backward()
    put(f"{tag}.ids", ids)
    put(f"{tag}.targets", targets)
    put(f"{tag}.logits", logits.detach().numpy())
    put(f"{tag}.loss", loss.detach().numpy())
    for name, _ in SHAPES:
        if tag == "a" or name in B_GRADS:
            g = P[name].grad.numpy()
            assert np.abs(g).max() > 1e-4, (tag, name)   # every gradient is non-trivial
            put(f"{tag}.grad.{name}", g)
    print(f"case {tag}: loss {loss.item():.6f}")


# ---- the schedule: lt_schedule_lr's formula, checked against torch's composition -------------
STEPS, WARMUP, LR, MIN_LR, START = 10, 3, 1e-3, 1e-4, 0.1


def schedule_lr(k):
    """lt_schedule_lr (12_api_optim.h), cosine decay."""
    if k < WARMUP:
        return LR * (START + (1.0 - START) * k / WARMUP)
    t, Tt = k - WARMUP, STEPS - WARMUP
    if t >= Tt:
        return MIN_LR
    return MIN_LR + (LR - MIN_LR) * (1.0 + math.cos(math.pi * t / Tt)) / 2.0


lrs = [schedule_lr(k) for k in range(STEPS)]
_p = torch.zeros(1, requires_grad=True)
_opt = torch.optim.SGD([_p], lr=LR)
_sched = torch.optim.lr_scheduler.SequentialLR(
    _opt, [torch.optim.lr_scheduler.LinearLR(_opt, start_factor=START, total_iters=WARMUP),
           torch.optim.lr_scheduler.CosineAnnealingLR(_opt, T_max=STEPS - WARMUP, eta_min=MIN_LR)],
    milestones=[WARMUP])
for k in range(STEPS):
    got = _opt.param_groups[0]["lr"]
    assert abs(got - lrs[k]) <= 1e-12 * lrs[k], (k, got, lrs[k])
    _opt.step()
    _sched.step()

# ---- 10 AdamW steps in float64 ------------------------------------------------------------------
TB = 2
train_ids = rng.integers(0, V, size=(STEPS, TB, T))
train_targets = rng.integers(0, V, size=(STEPS, TB, T))
P = make_params(torch.float64)
decayed = [P[n] for n, s in SHAPES if len(s) >= 2]
plain = [P[n] for n, s in SHAPES if len(s) < 2]
opt = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": plain, "weight_decay": 0.0}],
                        lr=LR, betas=(0.9, 0.95), eps=1e-8)
losses, norms = [], []
for k in range(STEPS):
    for g in opt.param_groups:
        g["lr"] = lrs[k]
    opt.zero_grad(set_to_none=False)
    loss = gpt_loss(gpt_forward(P, torch.tensor(train_ids[k]), L, C, H), torch.tensor(train_targets[k]))
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(list(P.values()), 1.0)
    opt.step()
    losses.append(loss.item())
    norms.append(norm.item())
    print(f"step {k + 1}: loss {losses[-1]:.9f} lr {lrs[k]:.6e} norm {norms[-1]:.6f}")
put("train.ids", train_ids)
put("train.targets", train_targets)
put_f64("train.lr", lrs)
put_f64("train.loss", losses)
put_f64("train.norm", norms)
for name, _ in SHAPES:
    put("final." + name, P[name].detach().numpy())

REC.write(OUT)
print(f"wrote {OUT}: {len(REC)} arrays, {os.path.getsize(OUT)} bytes")

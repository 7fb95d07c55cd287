"""Reference data for tests/test_optim.c: AdamW, SGD, learning-rate schedules, gradient clipping.

Run from the repository root with PyTorch 1.13:   python3 tests/ref/gen_optim.py
Writes tests/ref/optim.bin in the record format of tests/lt_test.h (u32 name length, name,
u32 ndim, i64 shape[ndim], f32 data).

Values that the tests compare in double (learning rates, to 1e-12 relative) do not fit in one
float32, so they are stored as two records NAME.hi and NAME.lo with hi = float32(x) and
lo = float32(x - hi); hi + lo (summed in double) carries about 48 bits of x.

Every scalar the C side must use (per-step learning rates, initial tensors, gradients) is a
float32 value, so both sides start from identical numbers.
"""
import math
import os
import warnings

import numpy as np
import torch

import refio

warnings.filterwarnings("ignore")
torch.manual_seed(0)
rng = np.random.default_rng(1234)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim.bin")
REC = refio.Records()
put = REC.put
put_f64 = REC.put_f64


def f32(x):
    return float(np.float32(x))


# ---- the tensors the optimizers update -----------------------------------------------------------
# w [8,16] and e [5,7] are "matrices" (decayed under LT_DECAY_MARKED), b [16] is a bias (not decayed).
SHAPES = [("w", (8, 16), True), ("b", (16,), False), ("e", (5, 7), True)]
NSTEPS = 6
init = {n: rng.standard_normal(s).astype(np.float32) for n, s, _ in SHAPES}
grads = {n: rng.standard_normal((NSTEPS,) + s).astype(np.float32) for n, s, _ in SHAPES}
# b has no gradient at step 3 (0-based 2): torch skips it and its step count lags behind
hasgrad = np.ones((NSTEPS, len(SHAPES)), dtype=np.float32)
hasgrad[2, 1] = 0
lrs = np.array([f32(x) for x in [1e-3, 3e-3, 1e-2, 7e-3, 2e-3, 5e-4]], dtype=np.float64)

for n, s, _ in SHAPES:
    put("opt.init." + n, init[n])
    put("opt.grad." + n, grads[n])
put("opt.hasgrad", hasgrad)
put("opt.lr", lrs)  # exact in float32


def run(make_opt, marked):
    """Runs NSTEPS updates; marked: decayed and undecayed tensors in two param groups."""
    ps = [torch.tensor(init[n], requires_grad=True) for n, _, _ in SHAPES]
    if marked:
        groups = [{"params": [p for p, (_, _, d) in zip(ps, SHAPES) if d]},
                  {"params": [p for p, (_, _, d) in zip(ps, SHAPES) if not d], "weight_decay": 0.0}]
    else:
        groups = [{"params": ps}]
    opt = make_opt(groups)
    for k in range(NSTEPS):
        for g in opt.param_groups:
            g["lr"] = float(lrs[k])
        for j, (p, (n, _, _)) in enumerate(zip(ps, SHAPES)):
            p.grad = torch.tensor(grads[n][k]) if hasgrad[k, j] else None
        opt.step()
    return ps, opt


def adamw_case(tag, marked):
    ps, opt = run(lambda g: torch.optim.AdamW(g, lr=1e-3, betas=(0.9, 0.95), eps=1e-8,
                                              weight_decay=0.1), marked)
    for p, (n, _, _) in zip(ps, SHAPES):
        st = opt.state[p]
        put(f"adamw.{tag}.{n}", p.detach().numpy())
        put(f"adamw.{tag}.{n}.exp_avg", st["exp_avg"].numpy())
        put(f"adamw.{tag}.{n}.exp_avg_sq", st["exp_avg_sq"].numpy())


adamw_case("marked", True)
adamw_case("all", False)


def sgd_case(tag, marked, **kw):
    ps, opt = run(lambda g: torch.optim.SGD(g, lr=1e-3, **kw), marked)
    for p, (n, _, _) in zip(ps, SHAPES):
        put(f"sgd.{tag}.{n}", p.detach().numpy())
        if kw.get("momentum", 0):
            put(f"sgd.{tag}.{n}.momentum_buffer", opt.state[p]["momentum_buffer"].numpy())


# the C test mirrors these settings by tag
sgd_case("plain", False)
sgd_case("momentum", False, momentum=0.9)
sgd_case("nesterov_wd", False, momentum=0.9, nesterov=True, weight_decay=0.01)
sgd_case("damp_marked", True, momentum=0.8, dampening=0.1, weight_decay=0.05)


# ---- schedules ---------------------------------------------------------------------------------
def drive(opt, sched, steps):
    """get_last_lr()[0] before each of `steps` optimizer steps, as a training loop reads it."""
    out = []
    for _ in range(steps):
        out.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    return out


def dummy(lr):
    return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)


LR = torch.optim.lr_scheduler
# lt_schedule_lr, cosine: LinearLR warm-up then CosineAnnealingLR through SequentialLR (k <= total;
# past total torch's cosine climbs again, lt_schedule holds min_lr)
o = dummy(6e-4)
s = LR.SequentialLR(o, [LR.LinearLR(o, 0.1, 1.0, 10), LR.CosineAnnealingLR(o, 90, 6e-5)], [10])
put_f64("sched.cosine", drive(o, s, 101))


# the other decays, and cosine warming up from 0 (LinearLR cannot start at 0), through LambdaLR
def lambda_case(tag, lr, min_lr, warmup, total, f, decay):
    def factor(k):
        if k < warmup:
            return f + (1.0 - f) * k / warmup
        t, T = k - warmup, total - warmup
        if decay == "constant":
            return 1.0
        if t >= T:
            return min_lr / lr
        d = {"cosine": lambda: (1 + math.cos(math.pi * t / T)) / 2, "linear": lambda: (T - t) / T,
             "sqrt": lambda: math.sqrt((T - t) / T)}[decay]()
        return (min_lr + (lr - min_lr) * d) / lr
    o = dummy(lr)
    put_f64("sched." + tag, drive(o, LR.LambdaLR(o, factor), total + 5))


lambda_case("linear", 3e-4, 3e-5, 5, 50, 0.1, "linear")
lambda_case("sqrt", 1e-3, 0.0, 8, 40, 0.0, "sqrt")
lambda_case("constant", 2e-3, 1e-4, 4, 20, 0.25, "constant")
lambda_case("cosine0", 1e-3, 0.0, 6, 30, 0.0, "cosine")

# the torch mirror: LinearLR / CosineAnnealingLR / SequentialLR
o = dummy(1e-2)  # the article's settings, run past T_max into the next cosine period
s = LR.SequentialLR(o, [LR.LinearLR(o, 0.1, 1.0, 10), LR.CosineAnnealingLR(o, 90, 1e-4)], [10])
put_f64("lrs.article", drive(o, s, 200))
o = dummy(0.5)
put_f64("lrs.linear_up", drive(o, LR.LinearLR(o, 1.0 / 3, 1.0, 5), 12))
o = dummy(0.5)
put_f64("lrs.linear_down", drive(o, LR.LinearLR(o, 1.0, 0.0, 20), 25))
o = dummy(0.1)
put_f64("lrs.cosine", drive(o, LR.CosineAnnealingLR(o, 7, 0.001), 30))
o = dummy(0.3)
s = LR.SequentialLR(o, [LR.LinearLR(o, 0.25, 1.0, 4), LR.CosineAnnealingLR(o, 10, 0.0),
                        LR.LinearLR(o, 0.5, 0.1, 6)], [4, 14])
put_f64("lrs.three", drive(o, s, 30))
o = dummy(0.05)
s = LR.SequentialLR(o, [LR.CosineAnnealingLR(o, 5, 0.01), LR.LinearLR(o, 0.5, 1.0, 3)], [5])
put_f64("lrs.cos_then_linear", drive(o, s, 12))

# ---- clipping -----------------------------------------------------------------------------------
CLIP = [("c0", (6, 9)), ("c1", (9,)), ("c2", (3, 4))]  # c3 (5) has no gradient
cg = {n: (rng.standard_normal(s) * 0.7).astype(np.float32) for n, s in CLIP}
for n, _ in CLIP:
    put("clip.grad." + n, cg[n])


def clip_params():
    ps = []
    for n, s in CLIP:
        p = torch.zeros(s, requires_grad=True)
        p.grad = torch.tensor(cg[n])
        ps.append(p)
    ps.append(torch.zeros(5, requires_grad=True))  # .grad None
    return ps


for tag, max_norm in [("norm1", 1.0), ("norm100", 100.0)]:  # clips; does not clip
    ps = clip_params()
    total = torch.nn.utils.clip_grad_norm_(ps, max_norm)
    put(f"clip.{tag}.total", total.numpy())
    for p, (n, _) in zip(ps, CLIP):
        put(f"clip.{tag}.{n}", p.grad.numpy())
ps = clip_params()
torch.nn.utils.clip_grad_value_(ps, 0.3)
for p, (n, _) in zip(ps, CLIP):
    put(f"clip.value.{n}", p.grad.numpy())

REC.write(OUT)
print(f"wrote {OUT}: {len(REC)} arrays, {os.path.getsize(OUT)} bytes")

"""Reference data for tests/test_recompute.c's lt_linear_cross_entropy cases: the LM head and the
cross-entropy, torch.nn.functional.linear then cross_entropy (ignore_index -1), in float64 on
exactly the float32 inputs, rounded to float32 once.

Run from the repository root:   python3 tests/ref/gen_lce.py
Writes tests/ref/lce.bin (the record format of tests/ref/refio.py).  Records: x [R,C], w [V,C],
t [R] (targets as exact floats, -1 ignored), then for the mean (F.cross_entropy's default) and
for the sum divided by 13 (lt_linear_cross_entropy_sum's denom): MODE.loss, MODE.gx, MODE.gw,
the gradients of 3·loss.  V = 1100 spans a full block of 1024 columns and a partial one.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

import refio

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lce.bin")
R, C, V = 29, 12, 1100
rng = np.random.default_rng(2525)
x = rng.standard_normal((R, C)).astype(np.float32)
w = (rng.standard_normal((V, C)) * 0.7).astype(np.float32)
t = rng.integers(0, V, size=R)
t[[3, 11, 20]] = -1
rec = refio.Records()
rec.put("x", x)
rec.put("w", w)
rec.put("t", t.astype(np.float32))
for mode in ("mean", "sum"):
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    wt = torch.tensor(w.astype(np.float64), requires_grad=True)
    z = F.linear(xt, wt)
    tt = torch.tensor(t, dtype=torch.long)
    if mode == "mean":
        loss = F.cross_entropy(z, tt, ignore_index=-1)
    else:
        loss = F.cross_entropy(z, tt, ignore_index=-1, reduction="sum") / 13.0
    (3.0 * loss).backward()
    rec.put(mode + ".loss", loss.detach().numpy())
    rec.put(mode + ".gx", xt.grad.numpy())
    rec.put(mode + ".gw", wt.grad.numpy())
rec.write(OUT)
print("wrote %s (%d records)" % (OUT, len(rec)))

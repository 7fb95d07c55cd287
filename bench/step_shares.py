#!/usr/bin/env python3
"""bench/step_shares.py: where an eager training step's time goes, op by op.

Runs build/bench_train_step --phases --profile (lt_set_profiling: every kernel timed by op; the
phases zero_grad and AdamW timed around their calls) for the configs and thread counts given, and
prints one markdown table per run: each op's share of the step (forward + backward), the GEMM
ops (matmul, linear, conv1d) summed, attention, and "rest" = the step's time outside every timed
kernel (the tape, allocation, the loss's read-back); then the GEMM ops' and attention's GFLOP/s
and the one over the other: the GEMM ops' FLOPs as bench/train_step.py counts a step's products,
attention's those of the 7 T x T products a layer it runs (backward recomputes the scores) over
the causal triangle, diagonal included.  Shares, not times, are what to compare when other
processes load the cores.

  python3 bench/step_shares.py [--bin build/bench_train_step] [--configs char-small,gpt-mini,...]
                               [--threads 1,2] [--steps 4] [--warmup 1]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_step import config as model_config, matmul_params, parse_profile, GEMM_OPS as GEMM  # noqa: E402
ATT = {"attention", "attention16", "attention_gqa", "attention_gqa16"}


def run(binary, config, threads, steps, warmup):
    cmd = [binary, "--config", config, "--threads", str(threads), "--steps", str(steps), "--warmup", str(warmup),
           "--phases", "--profile"]
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    ops, mean = parse_profile(p.stderr, steps)
    return " ".join(cmd), ops, mean


def table(config, threads, cmd, ops, mean):
    step = mean["step"]
    rows = []
    gemm = sum(f + b for o, (f, b) in ops.items() if o in GEMM)
    att = sum(f + b for o, (f, b) in ops.items() if o in ATT)
    kern = sum(f + b for f, b in ops.values())
    rows.append(("GEMM ops (" + ", ".join(sorted(o for o in ops if o in GEMM)) + ")", gemm))
    rows.append(("attention", att))
    for o, (f, b) in sorted(ops.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
        if o not in GEMM and o not in ATT:
            rows.append((o + " (fwd %.1f + bwd %.1f)" % (f, b), f + b))
    rows.append(("AdamW (lt_optim_step)", mean["adamw"]))
    rows.append(("zero_grad", mean["zero_grad"]))
    rows.append(("rest (outside the timed kernels)", step - kern - mean["adamw"] - mean["zero_grad"]))
    out = ["%s, %d thread%s: mean step %.1f ms, load average %s" % (config, threads, "" if threads == 1 else "s", step,
                                                                  " ".join("%.2f" % x for x in os.getloadavg())),
           "`" + cmd + "`", "", "| part | ms / step | share |", "|---|---:|---:|"]
    for name, ms in rows:
        out.append("| %s | %.1f | %.1f%% |" % (name, ms, 100.0 * ms / step))
    nongemm = step - gemm - att
    out.append("| **all but GEMM and attention** | %.1f | %.1f%% |" % (nongemm, 100.0 * nongemm / step))
    cfg = model_config(config)
    L, C, T, B = cfg[1], cfg[3], cfg[4], cfg[5]
    gemm_fl = 6.0 * matmul_params(cfg) * B * T   # every product of the step, the head's included
    att_fl = 7.0 * L * B * C * T * (T + 1)       # 7 T x T products a layer (2 forward, 5 backward), T(T+1)/2 pairs
    if gemm > 0 and att > 0:
        out += ["", "Rates: the GEMM ops %.2f GFLOP in %.1f ms (%.1f GFLOP/s); attention %.2f GFLOP (the causal "
                "triangle of its 7 products a layer) in %.1f ms (%.1f GFLOP/s): %.0f%% of the GEMM ops' rate." % (
                    gemm_fl * 1e-9, gemm, gemm_fl / gemm * 1e-6, att_fl * 1e-9, att, att_fl / att * 1e-6,
                    100.0 * (att_fl / att) / (gemm_fl / gemm))]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bench_train_step")
    ap.add_argument("--configs", default="char-small,gpt-mini,gpt2-124M,llama-mini")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1)
    a = ap.parse_args()
    for c in a.configs.split(","):
        for t in a.threads.split(","):
            cmd, ops, mean = run(a.bin, c, int(t), a.steps, a.warmup)
            sys.stdout.write(table(c, int(t), cmd, ops, mean) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""train_step.py - ltrain's GPT-2 training step against PyTorch's, side by side, in one process tree.

    /usr/bin/python3 bench/train_step.py [--quick] [--threads 1,2] [--configs char-small,gpt-mini,gpt2-124M]
                                         [--model V,L,H,C,T,B ...] [--rounds N] [--steps N]
                                         [--gemm-md build/bench_gemm.md]
                                         [--out bench/results.md]

--model V,L,H,C,T,B (repeatable) adds a model of any shape (vocabulary, layers, heads, channels,
sequence length, batch); with --model and no --configs only those models run.
--steps N times N steps per process for every config (default: 10 for char-small, 5 for gpt-mini
and gpt2-124M, and for a --model about 40 GFLOP of steps, 5 to 50).

The step on both sides: zero_grad, forward, cross-entropy over the vocabulary, backward, AdamW
(lr 3e-4, betas (0.9, 0.95), weight decay 0.1 on matrices and embeddings), fp32, random tokens.
For every config the two run in alternating rounds (ltrain, torch, ltrain, ...; 4 rounds for
char-small, 2 for the larger configs, --rounds N for all), each round at every thread count in
turn (so the speed-up from more threads, in its own table, is measured as fairly as the ratio),
each in a fresh child process (so peak RSS is that run's alone), and the table reports over all
timed steps: median / min / max ms, tokens/s, MFU and peak RSS, and torch's median / ours.

The memory floor of a config: 16 bytes a parameter (weights, gradients, AdamW's two moments) plus
the activations the backward pass must keep, measured as lt_plan_saved_bytes of the compiled step
(what its forward leaves for its backward; bench_train_step --compile prints it).  The same floor
is used for all three rows of a config (the same model); "RSS / floor" is peak RSS over it.

MFU = FLOPs per step / step time / sgemm peak, where FLOPs = 6*N_mm*B*T + 12*L*C*T^2*B with
N_mm = 12*L*C^2 + V*C, and the peak is lt_sgemm at 2048^3 with the same thread count, measured
here in the same run (bench_train_step --peak).

PyTorch is run at its best on this CPU: Debian's torch calls OpenBLAS, which picks a slow
generic kernel unless OPENBLAS_CORETYPE=SkylakeX, and whose threads fight OpenMP's unless
OMP_WAIT_POLICY=PASSIVE; both are set for the torch runs (and said so in the output).  ltrain
runs as a user runs it, with OpenMP's default wait policy (threads spin briefly at a barrier
before sleeping), which is its best setting here: PASSIVE costs it 3-9% (char-small, 2 threads),
while torch without PASSIVE runs about 2x slower.
The torch worker is this file run with --worker (it needs torch; the driver does not)."""
import json
import os
import statistics
import subprocess
import sys
import time

CONFIGS = {  # name: (V, L, H, C, T, B)
    "char-small": (256, 4, 4, 256, 256, 8),
    "gpt-mini": (50304, 6, 6, 384, 256, 4),
    "gpt2-124M": (50304, 12, 12, 768, 64, 4),
}
STEPS = {"char-small": 10, "gpt-mini": 5, "gpt2-124M": 5}


def config(name):
    """(V, L, H, C, T, B) of a named config, or of one written as "V,L,H,C,T,B" (any model)."""
    if name in CONFIGS:
        return CONFIGS[name]
    try:
        v = tuple(int(x) for x in name.split(","))
    except ValueError:
        v = ()
    if len(v) != 6 or min(v) < 1 or v[3] % v[2] != 0:
        sys.exit("unknown config %r: one of %s, or V,L,H,C,T,B with C a multiple of H" % (name, ", ".join(CONFIGS)))
    return v


def default_steps(name):
    """timed steps per process: more for small models, so each process runs about a second or more"""
    if name in STEPS:
        return STEPS[name]
    V, L, H, C, T, B = config(name)
    flops = flops_per_step(V, L, H, C, T, B)
    return max(5, min(50, int(4e10 / flops)))
TORCH_ENV = {"OPENBLAS_CORETYPE": "SkylakeX", "OMP_WAIT_POLICY": "PASSIVE"}
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---- the PyTorch side (child process) -------------------------------------------------------------
def torch_worker(name, threads, steps, warmup):
    import resource
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    V, L, H, C, T, B = config(name)

    class Block(nn.Module):  # pre-LN GPT-2 block, as ltrain's (and nanoGPT's)
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.c_attn, self.attn_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
            self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
            q, k, v = (z.view(b, t, H, c // H).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (c // H) ** 0.5)
            att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            x = x + self.attn_proj(y)
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
            self.h = nn.ModuleList(Block() for _ in range(L))
            self.ln_f = nn.LayerNorm(C)
            for n, p in self.named_parameters():
                if p.dim() >= 2:
                    nn.init.normal_(p, 0.0, 0.02 / ((2 * L) ** 0.5 if n.endswith("proj.weight") else 1.0))
                elif n.endswith(".bias"):
                    nn.init.zeros_(p)

        def forward(self, ids, targets):
            x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
            for blk in self.h:
                x = blk(x)
            logits = self.ln_f(x) @ self.wte.weight.t()   # tied head
            return F.cross_entropy(logits.view(-1, V), targets.view(-1))

    torch.manual_seed(1337)
    model = GPT()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    try:  # the multi-tensor AdamW when this torch has it (faster on CPU too)
        opt = torch.optim.AdamW(groups, lr=3e-4, betas=(0.9, 0.95), foreach=True)
    except TypeError:
        opt = torch.optim.AdamW(groups, lr=3e-4, betas=(0.9, 0.95))
    g = torch.Generator().manual_seed(42)
    ids = torch.randint(0, V, (B, T), generator=g)
    tgt = torch.randint(0, V, (B, T), generator=g)
    ms, loss = [], None
    for s in range(-warmup, steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(ids, tgt)
        loss.backward()
        opt.step()
        if s >= 0:
            ms.append(1e3 * (time.perf_counter() - t0))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"impl": "torch " + torch.__version__, "config": name, "threads": torch.get_num_threads(),
                      "params": sum(p.numel() for p in model.parameters()), "loss": round(loss.item(), 4),
                      "rss_mb": round(rss, 1), "ms": [round(x, 3) for x in ms]}))


# ---- the driver ----------------------------------------------------------------------------------
def run_json(cmd, env_extra):
    env = dict(os.environ)
    env.update(env_extra)
    for k in [k for k, v in env.items() if v is None]:   # None: not set at all
        del env[k]
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), out.returncode, out.stderr.strip()[-2000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def flops_per_step(V, L, H, C, T, B):
    n_mm = 12 * L * C * C + V * C
    return 6.0 * n_mm * B * T + 12.0 * L * C * T * T * B


def flops_needed(V, L, H, C, T, B):
    """The products a step cannot skip: as flops_per_step, but causal attention needs only the
    lower triangle of each T x T product (half of them)."""
    n_mm = 12 * L * C * C + V * C
    return 6.0 * n_mm * B * T + 6.0 * L * C * T * T * B


def main():
    args = sys.argv[1:]
    if args and args[0] == "--worker":
        torch_worker(args[1], int(args[2]), int(args[3]), int(args[4]))
        return
    quick = "--quick" in args or os.environ.get("BENCH_QUICK") not in (None, "", "0")
    if "--help" in args or "-h" in args:
        print(__doc__)
        return
    default = "" if "--model" in args else "char-small,gpt-mini,gpt2-124M"
    opt = {"--threads": "1,2", "--configs": default, "--rounds": "", "--steps": "",
           "--gemm-md": "", "--out": os.path.join(HERE, "results.md"), "--bin": os.path.join(ROOT, "build", "bench_train_step")}
    for i, a in enumerate(args):
        if a in opt and i + 1 < len(args):
            opt[a] = args[i + 1]
    threads = [int(x) for x in opt["--threads"].split(",")]
    configs = opt["--configs"].split(",") if opt["--configs"] else []
    configs += [args[i + 1] for i, a in enumerate(args) if a == "--model" and i + 1 < len(args)]
    # rounds per config: 4 for char-small (a few seconds each: more rounds, a steadier median on a
    # noisy machine), 2 for the others; --rounds N sets one count for all
    rounds = {name: int(opt["--rounds"]) if opt["--rounds"] else 4 if name == "char-small" else 2 for name in configs}
    steps = {}
    if quick:
        configs, rounds, steps = ["char-small"], {"char-small": 1}, {"char-small": 4}
    if opt["--steps"]:
        steps = {k: int(opt["--steps"]) for k in configs}
    for name in configs:
        config(name)   # an unknown config stops here, before anything runs
        steps.setdefault(name, default_steps(name))
    ours_bin = opt["--bin"]
    print("PyTorch side runs with %s (its best settings on this CPU); ltrain with OpenMP's default wait policy "
          "(its best: PASSIVE would cost it 3-9%%)." % " ".join("%s=%s" % kv for kv in TORCH_ENV.items()))
    load0 = os.getloadavg()[0]
    peaks, rows = {}, []
    for t in threads:
        peaks[t] = run_json([ours_bin, "--peak", "--threads", str(t)], {"OMP_NUM_THREADS": str(t)})["peak_gflops"]
        print("sgemm peak (lt_sgemm 2048^3), %d thread%s: %.1f GFLOP/s" % (t, "s" if t > 1 else "", peaks[t]))
    for name in configs:
        V, L, H, C, T, B = config(name)
        # Each round runs every thread count (in turn about order), so 1- and 2-thread runs are as
        # close in time as ltrain's and torch's: the speed-up from more threads is then measured as
        # fairly as the ratio to torch, not as the drift between two blocks of runs minutes apart.
        all_res = {(t, w): [] for t in threads for w in ("ltrain", "compiled", "torch")}
        all_info = {}
        for r in range(rounds[name]):
            order = ["ltrain", "compiled", "torch"] if r % 2 == 0 else ["torch", "compiled", "ltrain"]
            for t in (threads if r % 2 == 0 else threads[::-1]):
                for who in order:
                    if who != "torch":   # eager, or captured once and replayed (lt_compile)
                        j = run_json([ours_bin] + (["--config", name] if name in CONFIGS else ["--model", name]) + [ "--threads", str(t), "--steps", str(steps[name])] +
                                     (["--compile"] if who == "compiled" else []),
                                     {"OMP_NUM_THREADS": str(t), "OMP_WAIT_POLICY": None})
                    else:
                        env = dict(TORCH_ENV)
                        env["OMP_NUM_THREADS"] = str(t)
                        j = run_json(["/usr/bin/python3", os.path.abspath(__file__), "--worker", name, str(t),
                                      str(steps[name]), "2"], env)
                    all_res[(t, who)].extend(j["ms"])
                    all_info.setdefault((t, who), []).append(j)
        for t in threads:
            res = {w: all_res[(t, w)] for w in ("ltrain", "compiled", "torch")}
            info = {w: all_info[(t, w)] for w in ("ltrain", "compiled", "torch")}
            for who in ("ltrain", "compiled", "torch"):
                ms = res[who]
                med = statistics.median(ms)
                rows.append({"config": name, "threads": t, "impl": info[who][0]["impl"], "median": med,
                             "at_peak_ms": flops_needed(V, L, H, C, T, B) / (peaks[t] * 1e9) * 1e3,
                             "min": min(ms), "max": max(ms), "tok_s": B * T / (med / 1e3),
                             "mfu": flops_per_step(V, L, H, C, T, B) / (med / 1e3) / (peaks[t] * 1e9),
                             "rss": max(x["rss_mb"] for x in info[who]), "params": info[who][0]["params"],
                             "loss": info[who][-1]["loss"], "steps": len(ms),
                             "plan_mb": info[who][0].get("plan_mb", 0.0),
                             "saved_mb": info[who][0].get("saved_mb"), "floor_mb": info[who][0].get("floor_mb")})
            ours, comp, theirs = rows[-3], rows[-2], rows[-1]
            for r in (ours, theirs):   # the compiled run measured the floor; the model is the same
                r["floor_mb"] = comp["floor_mb"]
            if theirs["params"] != comp["params"]:
                print("warning: torch has %d parameters, ltrain %d" % (theirs["params"], comp["params"]))
            ours["vs_torch"] = theirs["median"] / ours["median"]
            comp["vs_torch"] = theirs["median"] / comp["median"]
            comp["vs_eager"] = ours["median"] / comp["median"]
            print("%-10s %dT  ltrain %8.1f ms  compiled %8.1f ms  torch %8.1f ms  -> ltrain is %.2fx torch's speed "
                  "(compiled %.2fx; compiled/eager %.2fx)" % (name, t, ours["median"], comp["median"], theirs["median"],
                                                              ours["vs_torch"], comp["vs_torch"], comp["vs_eager"]),
                  flush=True)
            if comp["floor_mb"]:   # (null when the plan fell back to eager)
                print("%-10s %dT  peak RSS MB: ltrain %.0f  compiled %.0f  torch %.0f; floor %.1f MB (16 B x %d params = "
                      "%.1f, saved activations %.1f) -> RSS / floor %.2f, %.2f, %.2f" % (
                          name, t, ours["rss"], comp["rss"], theirs["rss"], comp["floor_mb"], comp["params"],
                          comp["floor_mb"] - comp["saved_mb"], comp["saved_mb"], ours["rss"] / comp["floor_mb"],
                          comp["rss"] / comp["floor_mb"], theirs["rss"] / comp["floor_mb"]), flush=True)
    table = render(rows, peaks, threads, quick, (load0, os.getloadavg()[0]))
    print()
    print(table)
    if opt["--gemm-md"] and os.path.exists(opt["--gemm-md"]):
        with open(opt["--gemm-md"]) as f:
            table += "\n## sgemm: lt_sgemm vs OpenBLAS cblas_sgemm (GFLOP/s)\n\n" + f.read()
    with open(opt["--out"], "w") as f:
        f.write(table)
    print("wrote %s" % opt["--out"])


def render(rows, peaks, threads, quick, load):
    lines = ["# ltrain.h benchmark%s" % (" (BENCH_QUICK: char-small only, few steps)" if quick else ""), "",
             "Machine: %s, %d CPUs; %s." % (cpu_name(), os.cpu_count() or 0, time.strftime("%Y-%m-%d %H:%M")),
             "One training step = zero_grad + forward + cross-entropy + backward + AdamW, fp32.",
             "PyTorch runs with OPENBLAS_CORETYPE=SkylakeX OMP_WAIT_POLICY=PASSIVE (its best settings here; "
             "without PASSIVE it runs about 2x slower); ltrain with OpenMP's default wait policy, as a user runs it "
             "(its best here: PASSIVE costs it 3-9% at 2 threads; on a machine busy with other work PASSIVE is "
             "the better choice for both).",
             "Load average (1 min) at start / end: %.1f / %.1f (above ~0.5 other processes share the 2 cores "
             "and every number here is low and noisy; compare the two columns, which ran alternately)." % load,
             "sgemm peak for MFU (lt_sgemm 2048^3): " +
             ", ".join("%d thread%s %.1f GFLOP/s" % (t, "s" if t > 1 else "", peaks[t]) for t in threads) + ".", "",
             "Memory floor = 16 bytes a parameter (weights, gradients, AdamW's two moments) + the activations the "
             "backward pass keeps (lt_plan_saved_bytes of the compiled step: what its forward leaves for its "
             "backward, the float32 logits included); the same floor for the three rows of a config.  MB = 2^20 bytes.",
             "",
             "| config | thr | impl | median ms | min | max | tokens/s | MFU | peak RSS MB | floor MB | RSS / floor "
             "| torch / ltrain |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fl = r.get("floor_mb")
        lines.append("| %s | %d | %s | %.1f | %.1f | %.1f | %.0f | %.1f%% | %.0f | %s | %s | %s |" % (
            r["config"], r["threads"], r["impl"], r["median"], r["min"], r["max"], r["tok_s"], 100 * r["mfu"],
            r["rss"], ("%.0f" % fl) if fl else "", ("%.2f" % (r["rss"] / fl)) if fl else "",
            ("%.2fx" % r["vs_torch"]) if "vs_torch" in r else ""))
    lines.append("")
    lines.append("Compile mode (ltrain compiled = lt_compile once, then lt_plan_run each step; eager = the tape):")
    lines.append("")
    lines.append("| config | thr | eager ms | compiled ms | compiled speed-up | eager peak RSS MB | compiled peak RSS MB "
                 "| planned activations MB | saved for backward MB | 16 B x params MB |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    # each config and thread count ran eager, compiled, torch: rows in that order
    runs = [(rows[i - 1], r, rows[i + 1]) for i, r in enumerate(rows) if "vs_eager" in r]
    for e, r, _ in runs:
        lines.append("| %s | %d | %.1f | %.1f | %.2fx | %.0f | %.0f | %.1f | %s | %s |" % (
            r["config"], r["threads"], e["median"], r["median"], r["vs_eager"], e["rss"], r["rss"], r["plan_mb"],
            ("%.1f" % r["saved_mb"]) if r["floor_mb"] else "", ("%.1f" % (r["floor_mb"] - r["saved_mb"])) if r["floor_mb"] else ""))
    lines.append("")
    lines.append("What the GEMM limit allows: a step needs at least its products' FLOPs at the sgemm peak (causal "
                 "attention counted as the half of the T x T products it needs), so no implementation whose "
                 "products run at that peak can beat torch by more than torch ms / that time (the ceiling).  "
                 "ltrain's share of the ceiling is its MFU on those FLOPs.")
    lines.append("")
    lines.append("| config | thr | step at sgemm peak ms | torch ms | ceiling: torch / peak step | ltrain ms | torch / ltrain "
                 "| share of ceiling |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for e, r, th in runs:
        best = e if e["median"] <= r["median"] else r
        lines.append("| %s | %d | %.1f | %.1f | %.2fx | %.1f (%s) | %.2fx | %.0f%% |" % (
            r["config"], r["threads"], r["at_peak_ms"], th["median"], th["median"] / r["at_peak_ms"], best["median"],
            "eager" if best is e else "compiled", th["median"] / best["median"], 100 * r["at_peak_ms"] / best["median"]))
    if len(threads) > 1:
        lo, hi = min(threads), max(threads)
        lines.append("")
        lines.append("Threads: every round ran each thread count in turn, so this speed-up from %d to %d threads "
                     "shares the machine's drift alike (the median ms at %d over the median ms at %d)." % (lo, hi, lo, hi))
        lines.append("")
        lines.append("| config | impl | %dT ms | %dT ms | %dT / %dT |" % (lo, hi, lo, hi))
        lines.append("|---|---|---|---|---|")
        for r in rows:
            base = [x for x in rows if x["config"] == r["config"] and x["impl"] == r["impl"] and x["threads"] == lo]
            if r["threads"] == hi and base:
                lines.append("| %s | %s | %.1f | %.1f | %.2fx |" % (r["config"], r["impl"], base[0]["median"],
                                                                  r["median"], base[0]["median"] / r["median"]))
    lines.append("")
    lines.append("torch / ltrain > 1 means ltrain is faster.  Medians over %s timed steps per side "
                 "(after 2 warm-up steps per process)." % ", ".join(sorted({str(r["steps"]) for r in rows})))
    return "\n".join(lines) + "\n"


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    main()

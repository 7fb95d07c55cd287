#!/usr/bin/env python3
"""train_step.py - ltrain's training step against PyTorch's, side by side, in one process tree.

    python3 bench/train_step.py [--quick] [--threads 1,2] [--configs char-small,gpt-mini,gpt2-124M,llama-mini]
                                [--model V,L,H,C,T,B[,KV,HIDDEN] ...] [--rounds N] [--steps N]
                                [--torch-python PY] [--old-torch-python /usr/bin/python3] [--no-compile]
                                [--torch-wait POLICY] [--gemm-md build/bench_gemm.md] [--out bench/results.md]
                                [--precision fp32|bf16]

`make bench` runs it (after the GEMM table, bench/gemm.py) with the PyTorch of build/torch-venv;
`make bench PYTHON=/path/to/python` uses that interpreter's torch instead.  The driver itself
needs only python3; the torch rows run in child processes of --torch-python (PyTorch 2.x from
PyPI: MKL GEMMs, F.scaled_dot_product_attention, torch.compile).  Debian's PyTorch 1.13
(/usr/bin/python3 with python3-torch) adds a row where it is installed; --old-torch-python ''
leaves it out.  BENCH_QUICK=1 (or --quick): char-small and llama-mini, 1 round, 3 steps, to see
that everything runs; its table goes to build/results_quick.md, not bench/results.md.

Configs (V vocabulary, L layers, H heads, C channels, T sequence length, B batch):
  char-small 256,4,4,256,256,8   gpt-mini 50304,6,6,384,256,4   gpt2-124M 50304,12,12,768,64,4
  llama-mini 50304,6,6,384,256,4 with 2 key/value heads and a SwiGLU hidden size of 1024
--model V,L,H,C,T,B (repeatable) adds a GPT-2 of any shape, V,L,H,C,T,B,KV,HIDDEN a Llama-style
model; with --model and no --configs only those models run.  --steps N times N steps per process
(default: 10 for char-small, 5 for the others, and about 40 GFLOP of steps for a --model).

The step on every side: zero_grad, forward, cross-entropy over the vocabulary, backward, AdamW
(lr 3e-4, betas (0.9, 0.95), weight decay 0.1 on matrices and embeddings), fp32, random tokens.
--precision bf16: the products in bf16 with float32 sums on both sides, the weights and AdamW in
fp32 (ltrain: bench_train_step --precision bf16, lt_set_precision; torch: forward and loss under
torch.autocast("cpu", dtype=torch.bfloat16), backward and AdamW outside it); write the table to
another --out (bench/results-bf16.md, say).  The MFU column still divides by the fp32 sgemm peak.
GPT-2: pre-LayerNorm blocks, GELU (tanh) MLP of 4C, biases, learned positions, tied head.
Llama-style (as Hugging Face's LlamaForCausalLM): RMSNorm (eps 1e-5), RoPE (theta 10000, the
rotate_half layout) on q and k, grouped-query attention, SwiGLU MLP, no biases, tied head.
The torch models are written plainly in this file (torch_worker); attention is
F.scaled_dot_product_attention(is_causal=True) (enable_gqa=True for Llama where the torch has it,
else K and V repeated per query head); torch 1.13 has no SDPA and runs the masked-softmax
attention.  The driver checks both sides have the same parameter count and prints the step-0
losses (a fresh model's is about ln V); bench/check_llama_hf.py checks the torch Llama against
Hugging Face's LlamaForCausalLM.

Rows of a config, each at every thread count:
  ltrain            the tape (eager): bench_train_step
  ltrain compiled   the step captured once (lt_compile) and replayed (lt_plan_run)
  torch eager       PyTorch 2.x, eager, SDPA attention, AdamW(foreach=True)
  torch.compile     the same model wrapped in torch.compile (default mode; forward, loss and
                    backward compiled, AdamW eager).  Compiling happens in the warm-up steps:
                    the step times exclude it; "compile s" is the first warm-up step's time less
                    a timed step's (Inductor caches its work under /tmp, so the first run of a
                    config compiles longest)
  torch 1.13        Debian's PyTorch on OpenBLAS (only where installed)
For every config they run in alternating rounds (the order reversed every other round; 4 rounds
for char-small, 2 for the larger configs, --rounds N for all), each round at every thread count in
turn, each run in a fresh child process (so its peak RSS is its own).

Columns: median / min / max ms per step over all timed steps of all rounds; tokens/s = B*T over
the median; MFU = FLOPs per step / step time / sgemm peak, FLOPs = 6*N_mm*B*T + 12*L*C*T^2*B
(N_mm: the parameters in matrix products, the head's V*C included; the T^2 term is attention's
two products, counted whole), the peak lt_sgemm's at 2048^3 with the same thread count: its best
call over the whole run, measured before every round of every config (one
measurement is 6 calls, about a second, and a busy moment can take 10% off it; MKL's, torch.mm
at 2048^3, is measured alike and printed beside it, with the spread of both); peak RSS of the
process; the memory floor = 16 bytes a parameter (weights, gradients, AdamW's two moments) + the activations the
backward pass keeps (lt_plan_saved_bytes of ltrain's compiled step), the same for every row of a
config; "best torch / this" = the faster of torch eager and torch.compile (2.x) over this row's
median (> 1: this row is faster).  torch.compile's RSS includes the compiler's own memory.

Threads: OpenMP's wait policy decides how idle threads wait (spin or sleep).  ltrain runs with
OpenMP's default (spin briefly, then sleep), its best on an otherwise idle machine.  Debian's
torch 1.13 runs with OPENBLAS_CORETYPE=SkylakeX (else OpenBLAS picks a slow generic kernel) and
OMP_WAIT_POLICY=PASSIVE (else its OpenBLAS threads fight OpenMP's, about 2x slower).  PyTorch 2.x
from PyPI uses MKL and needs no OPENBLAS_CORETYPE; its OMP_WAIT_POLICY is chosen at the start of
each run (--torch-wait auto, the default): char-small's eager step, unset against PASSIVE, 2
alternating rounds, the faster wins (on an idle machine spinning usually wins; with other work on
the cores PASSIVE wins by far).  --torch-wait unset|PASSIVE|ACTIVE fixes it.  The output names the
settings of every row and the timings behind the choice."""
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402  (bench/machine.py, standard library only)

CONFIGS = {  # name: (V, L, H, C, T, B) for GPT-2, (V, L, H, C, T, B, KV, HIDDEN) Llama-style
    "char-small": (256, 4, 4, 256, 256, 8),
    "gpt-mini": (50304, 6, 6, 384, 256, 4),
    "gpt2-124M": (50304, 12, 12, 768, 64, 4),
    "llama-mini": (50304, 6, 6, 384, 256, 4, 2, 1024),
}
STEPS = {"char-small": 10, "gpt-mini": 5, "gpt2-124M": 5, "llama-mini": 5}
IMPLS = ["ltrain", "ltrain compiled", "torch eager", "torch.compile", "torch 1.13"]
TORCH13_ENV = {"OPENBLAS_CORETYPE": "SkylakeX", "OMP_WAIT_POLICY": "PASSIVE"}
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def config(name):
    """(V, L, H, C, T, B[, KV, HIDDEN]) of a named config, or of one written as numbers."""
    if name in CONFIGS:
        return CONFIGS[name]
    try:
        v = tuple(int(x) for x in name.split(","))
    except ValueError:
        v = ()
    if len(v) not in (6, 8) or min(v) < 1 or v[3] % v[2] != 0 or (len(v) == 8 and v[2] % v[6] != 0):
        sys.exit("unknown config %r: one of %s, or V,L,H,C,T,B with C a multiple of H, or V,L,H,C,T,B,KV,HIDDEN "
                 "with H a multiple of KV" % (name, ", ".join(CONFIGS)))
    return v


def matmul_params(cfg):
    """parameters in the matrix products of a step (the head's V*C included)"""
    V, L, H, C = cfg[:4]
    if len(cfg) == 8:
        KV, hid = cfg[6], cfg[7]
        return L * (2 * C * C + 2 * C * KV * (C // H) + 3 * C * hid) + V * C
    return 12 * L * C * C + V * C


def flops_per_step(cfg):
    V, L, H, C, T, B = cfg[:6]
    return 6.0 * matmul_params(cfg) * B * T + 12.0 * L * C * T * T * B


def flops_needed(cfg):
    """The products a step cannot skip: as flops_per_step, but causal attention needs only the
    lower triangle of each T x T product (half of them)."""
    V, L, H, C, T, B = cfg[:6]
    return 6.0 * matmul_params(cfg) * B * T + 6.0 * L * C * T * T * B


def default_steps(name):
    """timed steps per process: more for small models, so each process runs about a second or more"""
    if name in STEPS:
        return STEPS[name]
    return max(5, min(50, int(4e10 / flops_per_step(config(name)))))


# ---- the PyTorch side (child process) -------------------------------------------------------------
def torch_model(name):
    """(model, sdpa, gqa): the torch model of config `name` (model(ids, targets) -> mean loss), seeded
    1337; sdpa / gqa: whether this torch has F.scaled_dot_product_attention and its enable_gqa"""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    cfg = config(name)
    V, L, H, C, T, B = cfg[:6]
    D = C // H
    sdpa = getattr(F, "scaled_dot_product_attention", None)   # torch >= 2.0
    try:   # enable_gqa: torch >= 2.5
        sdpa(torch.zeros(1, 2, 1, 2), torch.zeros(1, 1, 1, 2), torch.zeros(1, 1, 1, 2), enable_gqa=True)
        gqa = True
    except (TypeError, RuntimeError):
        gqa = False

    def attention(q, k, v):   # [b, H, t, D] x [b, KV, t, D] (KV divides H) -> [b, H, t, D], causal
        if k.shape[1] != q.shape[1] and not (sdpa and gqa):
            k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
            v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
        if sdpa is not None:
            if k.shape[1] != q.shape[1]:
                return sdpa(q, k, v, is_causal=True, enable_gqa=True)
            return sdpa(q, k, v, is_causal=True)
        t = q.shape[2]
        att = (q @ k.transpose(-2, -1)) * (1.0 / D ** 0.5)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        return att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v

    class Block(nn.Module):  # pre-LN GPT-2 block, as ltrain's (and nanoGPT's)
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.c_attn, self.attn_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
            q, k, v = (z.view(b, t, H, D).transpose(1, 2) for z in (q, k, v))
            y = attention(q, k, v).transpose(1, 2).contiguous().view(b, t, c)
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

    class RMSNorm(nn.Module):   # x / sqrt(mean(x^2) + eps) * weight
        def __init__(self, n, eps=1e-5):
            super().__init__()
            self.weight, self.eps = nn.Parameter(torch.ones(n)), eps

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def rotate_half(x):   # (x1, x2) -> (-x2, x1) over the two halves of the last dim
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    class LlamaBlock(nn.Module):
        def __init__(self, KV, hid):
            super().__init__()
            self.KV = KV
            self.input_layernorm, self.post_attention_layernorm = RMSNorm(C), RMSNorm(C)
            self.q_proj, self.o_proj = nn.Linear(C, H * D, bias=False), nn.Linear(H * D, C, bias=False)
            self.k_proj, self.v_proj = nn.Linear(C, KV * D, bias=False), nn.Linear(C, KV * D, bias=False)
            self.gate_proj, self.up_proj = nn.Linear(C, hid, bias=False), nn.Linear(C, hid, bias=False)
            self.down_proj = nn.Linear(hid, C, bias=False)

        def forward(self, x, cos, sin):
            b, t, c = x.shape
            h = self.input_layernorm(x)
            q = self.q_proj(h).view(b, t, H, D).transpose(1, 2)
            k = self.k_proj(h).view(b, t, self.KV, D).transpose(1, 2)
            v = self.v_proj(h).view(b, t, self.KV, D).transpose(1, 2)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            x = x + self.o_proj(attention(q, k, v).transpose(1, 2).contiguous().view(b, t, H * D))
            h = self.post_attention_layernorm(x)
            return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))

    class Llama(nn.Module):
        def __init__(self, KV, hid, theta=10000.0):
            super().__init__()
            self.embed_tokens = nn.Embedding(V, C)
            self.layers = nn.ModuleList(LlamaBlock(KV, hid) for _ in range(L))
            self.norm = RMSNorm(C)
            inv = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float32) / D)
            ang = torch.outer(torch.arange(T, dtype=torch.float32), inv)
            ang = torch.cat((ang, ang), dim=-1)   # [T, D]: position p, frequency i and i + D/2
            self.register_buffer("cos", ang.cos(), persistent=False)
            self.register_buffer("sin", ang.sin(), persistent=False)
            for p in self.parameters():
                if p.dim() >= 2:
                    nn.init.normal_(p, 0.0, 0.02)

        def forward(self, ids, targets):
            t = ids.shape[1]
            x = self.embed_tokens(ids)
            for blk in self.layers:
                x = blk(x, self.cos[:t], self.sin[:t])
            logits = self.norm(x) @ self.embed_tokens.weight.t()   # tied head
            return F.cross_entropy(logits.view(-1, V), targets.view(-1))

    torch.manual_seed(1337)
    return (Llama(cfg[6], cfg[7]) if len(cfg) == 8 else GPT()), sdpa is not None, gqa


def torch_parts(name):
    """(model, opt, ids, tgt, sdpa, gqa): torch_model(name), its AdamW (lr 3e-4, betas (0.9, 0.95),
    weight decay 0.1 on matrices and embeddings), and one batch of random tokens and targets"""
    import torch

    V, T, B = config(name)[0], config(name)[4], config(name)[5]
    model, sdpa, gqa = torch_model(name)
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
    return model, opt, ids, tgt, sdpa, gqa


def torch_worker(name, threads, steps, warmup, mode, precision="fp32"):
    import contextlib
    import resource
    import torch

    torch.set_num_threads(threads)
    model, opt, ids, tgt, sdpa, gqa = torch_parts(name)
    step_model = torch.compile(model) if mode == "compile" else model
    ms, first, loss, loss0 = [], 0.0, None, None
    for s in range(-warmup, steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with (torch.autocast("cpu", dtype=torch.bfloat16) if precision == "bf16" else contextlib.nullcontext()):
            loss = step_model(ids, tgt)
        loss.backward()
        opt.step()
        dt = 1e3 * (time.perf_counter() - t0)
        if s == -warmup:
            first, loss0 = dt, loss.item()
        if s >= 0:
            ms.append(dt)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    impl = {"eager": "torch eager", "compile": "torch.compile"}[mode] if torch.__version__ >= "2" else "torch 1.13"
    print(json.dumps({"impl": impl, "version": torch.__version__, "config": name, "threads": torch.get_num_threads(),
                      "params": sum(p.numel() for p in model.parameters()), "loss0": round(loss0, 4),
                      "loss": round(loss.item(), 4), "sdpa": sdpa, "gqa": gqa,
                      "compile_s": round(max(0.0, first - statistics.median(ms)) / 1e3, 3) if mode == "compile" else 0.0,
                      "rss_mb": round(rss, 1), "ms": [round(x, 3) for x in ms]}))


def torch_peak(threads):
    """torch.mm's best GFLOP/s at 2048^3 (MKL in PyTorch 2.x from PyPI), one JSON line"""
    import torch
    torch.set_num_threads(threads)
    a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
    c = torch.mm(a, b)
    best = 1e30
    for _ in range(6):
        t = time.perf_counter()
        torch.mm(a, b, out=c)
        best = min(best, time.perf_counter() - t)
    blas = [x.split("=", 1)[1] for x in torch.__config__.show().replace(",", " ").split() if x.startswith("BLAS_INFO=")]
    print(json.dumps({"peak_gflops": round(2.0 * 2048 ** 3 / best * 1e-9, 2), "threads": torch.get_num_threads(),
                      "version": torch.__version__, "blas": blas[0] if blas else "?"}))


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


# the products' ops (the float32 GPT's fused head, linear_ce_exp, profiles its products as linear's)
GEMM_OPS = {"matmul", "linear", "conv1d", "matmul16", "linear16", "conv1d16"}


def parse_profile(text, steps):
    """(ops, mean) from build/bench_train_step --profile's report: ops[name] = (forward ms, backward
    ms) a step, mean[phase] = ms a step (step, zero_grad, forward+loss, backward, adamw)"""
    ops, mean = {}, {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s+([0-9.]+)\s+([0-9.]+)\s+(\d+)\s+[0-9.]+%$", line)
        if m:
            ops[m.group(1)] = (float(m.group(2)) / steps, float(m.group(3)) / steps)
        m = re.match(r"^profile: \d+ steps, mean ms: (.*)$", line)
        if m:
            f = m.group(1).split()
            mean = {f[i]: float(f[i + 1]) for i in range(0, len(f), 2)}
    return ops, mean


def gemm_share(cmd, steps):
    """the products' share of ltrain's eager step (one --profile run of cmd, `steps` steps), or None"""
    p = subprocess.run(cmd + ["--steps", str(steps), "--warmup", "1", "--profile"], capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS=cmd[cmd.index("--threads") + 1]))
    ops, mean = parse_profile(p.stderr, steps)
    if p.returncode != 0 or not mean.get("step"):
        return None
    return sum(f + b for o, (f, b) in ops.items() if o in GEMM_OPS) / mean["step"]


def memory_bandwidth(bw_bin, threads):
    """GB/s of build/bench_bandwidth's AdamW pass over 4 arrays of 32 M floats (28 bytes an element,
    512 MB: past any L3), best of 3, or None where that program is not built"""
    if not os.path.exists(bw_bin):
        return None
    out = subprocess.run([bw_bin, "--n", "32000000", "--reps", "3", "--threads", str(threads)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    m = re.search(r"^\| AdamW \(lt_optim_step\) \| 28 \| [0-9.]+ \| ([0-9.]+) \|", out.stdout, re.M)
    return float(m.group(1)) if out.returncode == 0 and m else None


def has_torch(py):
    """the torch version py imports, or None"""
    if not py or not (os.path.exists(py) or shutil.which(py)):
        return None
    out = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def choose_wait(py, threads):
    """PyTorch 2.x's faster OMP_WAIT_POLICY here: unset (OpenMP's default, spin then sleep) or
    PASSIVE (sleep at once), timed on char-small's eager step, 4 steps, alternating, 2 rounds."""
    ms = {"unset": [], "PASSIVE": []}
    for r in range(2):
        for w in (["unset", "PASSIVE"] if r % 2 == 0 else ["PASSIVE", "unset"]):
            env = {"OMP_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": None if w == "unset" else w}
            ms[w] += run_json([py, os.path.abspath(__file__), "--worker", "char-small", str(threads), "4", "1", "eager"],
                              env)["ms"]
    med = {w: statistics.median(v) for w, v in ms.items()}
    best = min(med, key=med.get)
    why = "chosen here: char-small eager at %d threads, median %.1f ms with OMP_WAIT_POLICY unset, %.1f ms PASSIVE" % (
        threads, med["unset"], med["PASSIVE"])
    print("torch OMP_WAIT_POLICY: %s (%s)" % (best, why), flush=True)
    return best, why


def env_text(env):
    return " ".join("%s=%s" % (k, "unset" if v is None else v) for k, v in env.items()) or "defaults"


def main():
    args = sys.argv[1:]
    if args and args[0] == "--worker":
        torch_worker(args[1], int(args[2]), int(args[3]), int(args[4]), args[5], args[6] if len(args) > 6 else "fp32")
        return
    if args and args[0] == "--torch-peak":
        torch_peak(int(args[1]))
        return
    if "--help" in args or "-h" in args:
        print(__doc__)
        return
    quick = "--quick" in args or os.environ.get("BENCH_QUICK") not in (None, "", "0")
    default = "" if "--model" in args else "char-small,gpt-mini,gpt2-124M,llama-mini"
    opt = {"--threads": "1,2", "--configs": default, "--rounds": "", "--steps": "", "--gemm-md": "",
           "--out": os.path.join(ROOT, "build", "results_quick.md") if quick else os.path.join(HERE, "results.md"),
           "--bin": os.path.join(ROOT, "build", "bench_train_step"),
           "--torch-python": os.path.join(ROOT, "build", "torch-venv", "bin", "python"),
           "--old-torch-python": "/usr/bin/python3", "--torch-wait": "auto", "--precision": "fp32"}
    for i, a in enumerate(args):
        if a in opt and i + 1 < len(args):
            opt[a] = args[i + 1]
    threads = [int(x) for x in opt["--threads"].split(",")]
    precision = opt["--precision"]
    if precision not in ("fp32", "bf16"):
        sys.exit("--precision wants fp32 or bf16")
    configs = opt["--configs"].split(",") if opt["--configs"] else []
    configs += [args[i + 1] for i, a in enumerate(args) if a == "--model" and i + 1 < len(args)]
    # rounds per config: 4 for char-small (a few seconds each: more rounds, a steadier median on a
    # noisy machine), 2 for the others; --rounds N sets one count for all
    rounds = {name: int(opt["--rounds"]) if opt["--rounds"] else 4 if name == "char-small" else 2 for name in configs}
    steps = {}
    if quick:
        configs = ["char-small", "llama-mini"]
        rounds, steps = {k: 1 for k in configs}, {k: 3 for k in configs}
    if opt["--steps"]:
        steps = {k: int(opt["--steps"]) for k in configs}
    for name in configs:
        config(name)   # an unknown config stops here, before anything runs
        steps.setdefault(name, default_steps(name))
    ours_bin, py2 = opt["--bin"], opt["--torch-python"]
    if os.sep in py2:   # the children run in the repository's root
        py2 = os.path.abspath(py2)
    v2 = has_torch(py2)
    if not v2 or not v2 >= "2":
        sys.exit("%s has no PyTorch 2.x (%s): make bench installs one into build/torch-venv, or pass "
                 "--torch-python /path/to/python (make bench PYTHON=...)" % (py2, v2 or "no torch"))
    py13 = opt["--old-torch-python"]
    v13 = has_torch(py13)
    if v13 and v13 >= "2":
        v13 = None   # that one is a 2.x as well: no 1.x row
    impls = [w for w in IMPLS if w != "torch 1.13" or v13]
    if "--no-compile" in args:
        impls.remove("torch.compile")
    wait, why = opt["--torch-wait"], "--torch-wait"
    if wait == "auto":
        wait, why = choose_wait(py2, max(threads))
    env2 = {"OMP_WAIT_POLICY": None if wait == "unset" else wait}
    settings = ["ltrain: OpenMP's default wait policy (OMP_WAIT_POLICY unset)",
                "torch %s (%s): %s (%s)" % (v2, py2, env_text(env2), why)]
    if v13:
        settings.append("torch %s (%s): %s" % (v13, py13, env_text(TORCH13_ENV)))
    print("Settings: " + "; ".join(settings) + ".")
    load0 = machine.load_average()
    # the MFU base: every measurement of the sgemm peaks is kept, the best call counts (at the end)
    peak_runs, mkl_runs = {t: [] for t in threads}, {t: [] for t in threads}
    bw_runs = []   # the memory bandwidth at the top of each round (this VM's moves between runs)
    bw_bin = os.path.join(os.path.dirname(os.path.abspath(ours_bin)), "bench_bandwidth")

    def measure_machine():   # the memory bandwidth and the sgemm peaks, at the top of each round
        bw_runs.append(memory_bandwidth(bw_bin, max(threads)))
        if bw_runs[-1]:
            print("memory bandwidth (an AdamW pass, %d threads): %.1f GB/s" % (max(threads), bw_runs[-1]), flush=True)
        for t in threads:
            peak_runs[t].append(run_json([ours_bin, "--peak", "--threads", str(t)],
                                         {"OMP_NUM_THREADS": str(t)})["peak_gflops"])
            mkl_runs[t].append(run_json([py2, os.path.abspath(__file__), "--torch-peak", str(t)],
                                        dict(env2, OMP_NUM_THREADS=str(t))))
            print("sgemm peak 2048^3, %d thread%s: lt_sgemm %.1f GFLOP/s, torch.mm (%s) %.1f GFLOP/s" % (
                t, "s" if t > 1 else "", peak_runs[t][-1], mkl_runs[t][-1]["blas"], mkl_runs[t][-1]["peak_gflops"]),
                flush=True)
    rows = []
    for name in configs:
        cfg = config(name)
        all_info = {(t, w): [] for t in threads for w in impls}
        for r in range(rounds[name]):
            measure_machine()
            order = impls if r % 2 == 0 else impls[::-1]
            for t in (threads if r % 2 == 0 else threads[::-1]):
                for who in order:
                    if who.startswith("ltrain"):   # eager, or captured once and replayed (lt_compile)
                        cmd = [ours_bin] + (["--config", name] if name in CONFIGS else ["--model", name])
                        cmd += ["--threads", str(t), "--steps", str(steps[name])]
                        cmd += ["--precision", precision] if precision != "fp32" else []
                        j = run_json(cmd + (["--compile"] if who == "ltrain compiled" else []),
                                     {"OMP_NUM_THREADS": str(t), "OMP_WAIT_POLICY": None})
                    else:
                        py, env = (py13, dict(TORCH13_ENV)) if who == "torch 1.13" else (py2, dict(env2))
                        env["OMP_NUM_THREADS"] = str(t)
                        mode = "compile" if who == "torch.compile" else "eager"
                        j = run_json([py, os.path.abspath(__file__), "--worker", name, str(t), str(steps[name]),
                                      "3" if mode == "compile" else "2", mode, precision], env)
                    all_info[(t, who)].append(j)
        for t in threads:
            group = []
            for who in impls:
                info = all_info[(t, who)]
                ms = [x for j in info for x in j["ms"]]
                med = statistics.median(ms)
                group.append({"config": name, "threads": t, "impl": who, "version": info[0].get("version", ""),
                              "median": med, "min": min(ms), "max": max(ms), "tok_s": cfg[5] * cfg[4] / (med / 1e3),
                              "flops": flops_per_step(cfg), "flops_needed": flops_needed(cfg),
                              "rss": max(j["rss_mb"] for j in info), "params": info[0]["params"],
                              "loss0": info[0]["loss0"], "loss": info[-1]["loss"], "steps": len(ms),
                              "compile_s": statistics.median(j.get("compile_s", 0.0) for j in info),
                              "plan_mb": info[0].get("plan_mb", 0.0), "saved_mb": info[0].get("saved_mb")})
            comp = [g for g in group if g["impl"] == "ltrain compiled"][0]
            floor = None
            if comp["saved_mb"] is not None:   # null when the plan fell back to eager
                floor = 16.0 * comp["params"] / 1048576.0 + comp["saved_mb"]
            t2 = [g for g in group if g["impl"] in ("torch eager", "torch.compile")]
            best_torch = min(t2, key=lambda g: g["median"])
            for g in group:
                g["floor_mb"] = floor
                g["vs_best_torch"] = best_torch["median"] / g["median"]
                g["best_torch"] = best_torch
                if g["params"] != comp["params"]:
                    print("warning: %s has %d parameters, ltrain %d (%s)" % (g["impl"], g["params"], comp["params"], name))
            if precision == "fp32":   # the products' share of the eager step, for the second ceiling
                cmd = [ours_bin] + (["--config", name] if name in CONFIGS else ["--model", name]) + ["--threads", str(t)]
                [g for g in group if g["impl"] == "ltrain"][0]["gemm_share"] = gemm_share(cmd, steps[name])
            rows += group
            print("%-10s %dT  " % (name, t) + "  ".join("%s %.1f ms" % (g["impl"], g["median"]) for g in group) +
                  "  -> best torch 2.x / best ltrain %.2fx" % (
                      best_torch["median"] / min(g["median"] for g in group if g["impl"].startswith("ltrain"))),
                  flush=True)
        lnv = math.log(cfg[0])
        first = [g for g in rows if g["config"] == name and g["threads"] == threads[0]]
        print("%-10s step-0 loss (ln V = %.3f): %s; parameters %s" % (
            name, lnv, ", ".join("%s %.3f" % (g["impl"], g["loss0"]) for g in first),
            "equal (%d)" % first[0]["params"] if len({g["params"] for g in first}) == 1 else "DIFFER"), flush=True)
        for g in first:
            if abs(g["loss0"] - lnv) > 0.5:
                print("warning: %s's step-0 loss %.3f is far from ln V = %.3f (%s)" % (g["impl"], g["loss0"], lnv, name))
    load1 = machine.load_average()
    peaks = {t: max(peak_runs[t]) for t in threads}
    mkl = {t: dict(max(mkl_runs[t], key=lambda j: j["peak_gflops"]),
                   spread=(min(j["peak_gflops"] for j in mkl_runs[t]), len(mkl_runs[t]))) for t in threads}
    for g in rows:   # MFU and the ceiling on the best peak call of the run
        g["mfu"] = g["flops"] / (g["median"] / 1e3) / (peaks[g["threads"]] * 1e9)
        g["at_peak_ms"] = g["flops_needed"] / (peaks[g["threads"]] * 1e9) * 1e3
    table = render(rows, impls, peaks, mkl, threads, quick, (load0, load1), settings, peak_runs, bw_runs, precision)
    print()
    print(table)
    if opt["--gemm-md"] and os.path.exists(opt["--gemm-md"]):
        with open(opt["--gemm-md"]) as f:
            table += "\n## sgemm (" + opt["--gemm-md"] + ")\n\n" + f.read()
    os.makedirs(os.path.dirname(os.path.abspath(opt["--out"])), exist_ok=True)
    with open(opt["--out"], "w") as f:
        f.write("<!-- python3 bench/train_step.py %s -->\n" % " ".join(args) + table)
    print("wrote %s" % opt["--out"])


def render(rows, impls, peaks, mkl, threads, quick, load, settings, peak_runs, bw_runs, precision="fp32"):
    cfgs = []
    for r in rows:
        if r["config"] not in cfgs:
            cfgs.append(r["config"])
    lines = ["# ltrain.h benchmark: a training step against PyTorch%s" % (
                 " (BENCH_QUICK: few steps, one round; proves the scripts run, measures nothing)" if quick else ""), ""]
    lines += machine.markdown(load[0], load[1])
    lines += ["Run %s.  Settings: %s." % (time.strftime("%Y-%m-%d %H:%M"), "; ".join(settings)),
              "One training step = zero_grad + forward + cross-entropy + backward + AdamW, %s, random tokens." % (
                  "fp32" if precision == "fp32" else "bf16 products (ltrain --precision bf16, torch.autocast bf16), "
                  "fp32 weights and AdamW"),
              "sgemm peak at 2048^3, the best call of the run (the MFU base is lt_sgemm's; the lowest of the "
              "measurements and their count in brackets): " + ", ".join(
                  "%d thread%s lt_sgemm %.1f (%.1f, %d), torch.mm (%s) %.1f (%.1f, %d) GFLOP/s" % (
                      t, "s" if t > 1 else "", peaks[t], min(peak_runs[t]), len(peak_runs[t]), mkl[t]["blas"],
                      mkl[t]["peak_gflops"], mkl[t]["spread"][0], mkl[t]["spread"][1]) for t in threads) + ".",
              ("Memory bandwidth at the top of each round (build/bench_bandwidth's AdamW pass over 4 arrays of "
               "32 M floats, %d threads, GB/s): %s.  On a shared VM it moves between runs, and with it every "
               "memory-bound part of a step." % (max(threads), ", ".join("%.0f" % b for b in bw_runs if b))
               if any(bw_runs) else "Memory bandwidth: not measured (build/bench_bandwidth not built)."),
              "Configs: " + "; ".join("%s = V,L,H,C,T,B%s %s" % (c, ",KV,HIDDEN" if len(config(c)) == 8 else "",
                                                              ",".join(map(str, config(c)))) for c in cfgs) + ".", ""]
    lines.append("Summary (median ms per step; best torch / best ltrain > 1: ltrain is faster):")
    lines.append("")
    lines.append("| config | thr | " + " | ".join(impls) + " | torch.compile compile s | best torch 2.x / best ltrain |")
    lines.append("|---|---|" + "---|" * len(impls) + "---|---|")
    for c in cfgs:
        for t in threads:
            g = {r["impl"]: r for r in rows if r["config"] == c and r["threads"] == t}
            ours = min(g["ltrain"]["median"], g["ltrain compiled"]["median"])
            lines.append("| %s | %d | " % (c, t) + " | ".join("%.1f" % g[w]["median"] for w in impls) + " | %s | %.2fx |" % (
                ("%.1f" % g["torch.compile"]["compile_s"]) if "torch.compile" in g else "",
                g["ltrain"]["best_torch"]["median"] / ours))
    lines += ["", "All rows (MB = 2^20 bytes; floor = 16 B a parameter + the activations saved for the backward "
              "pass; best torch / this > 1: this row is faster than the faster of torch eager and torch.compile):", "",
              "| config | thr | impl | median ms | min | max | tokens/s | MFU | peak RSS MB | floor MB | RSS / floor "
              "| step-0 loss | compile s | best torch / this |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fl = r.get("floor_mb")
        name = r["impl"] + (" " + r["version"] if r["version"] and r["impl"].startswith("torch") else "")
        lines.append("| %s | %d | %s | %.1f | %.1f | %.1f | %.0f | %.1f%% | %.0f | %s | %s | %.3f | %s | %.2fx |" % (
            r["config"], r["threads"], name, r["median"], r["min"], r["max"], r["tok_s"], 100 * r["mfu"],
            r["rss"], ("%.0f" % fl) if fl else "", ("%.2f" % (r["rss"] / fl)) if fl else "", r["loss0"],
            ("%.1f" % r["compile_s"]) if r["compile_s"] else "", r["vs_best_torch"]))
    lines += ["", "Compile mode of ltrain (compiled = lt_compile once, then lt_plan_run each step; eager = the tape):",
              "", "| config | thr | eager ms | compiled ms | compiled speed-up | lt_compile s | eager peak RSS MB "
              "| compiled peak RSS MB | planned activations MB | saved for backward MB | 16 B x params MB |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cfgs:
        for t in threads:
            g = {r["impl"]: r for r in rows if r["config"] == c and r["threads"] == t}
            e, k = g["ltrain"], g["ltrain compiled"]
            lines.append("| %s | %d | %.1f | %.1f | %.2fx | %.2f | %.0f | %.0f | %.1f | %s | %.1f |" % (
                c, t, e["median"], k["median"], e["median"] / k["median"], k["compile_s"], e["rss"], k["rss"],
                k["plan_mb"], ("%.1f" % k["saved_mb"]) if k["saved_mb"] is not None else "",
                16.0 * k["params"] / 1048576.0))
    if precision != "fp32":   # the ceiling's base is the fp32 sgemm peak, no bound on bf16 products
        lines += ["", "No ceiling table: its base is the fp32 sgemm peak, which bounds nothing here (the products "
                  "are bf16; ltrain's run on AMX tiles or AVX512_BF16 pairs where the CPU has them)."]
    else:
        lines += ["", "What the GEMM limit allows: a step needs at least its products' FLOPs at the sgemm peak (causal "
                  "attention counted as the half of the T x T products it needs), so no implementation whose products "
                  "run at that peak can beat torch by more than torch ms / that time (the ceiling).  ltrain's share of "
                  "the ceiling is its MFU on those FLOPs.  torch = the faster of torch eager and torch.compile.", "",
                  "| config | thr | step at sgemm peak ms | torch ms | ceiling: torch / peak step | ltrain ms "
                  "| torch / ltrain | share of ceiling |", "|---|---|---|---|---|---|---|---|"]
    for c in (cfgs if precision == "fp32" else []):
        for t in threads:
            g = {r["impl"]: r for r in rows if r["config"] == c and r["threads"] == t}
            best = min((g["ltrain"], g["ltrain compiled"]), key=lambda x: x["median"])
            th = best["best_torch"]
            lines.append("| %s | %d | %.1f | %.1f (%s) | %.2fx | %.1f (%s) | %.2fx | %.0f%% |" % (
                c, t, best["at_peak_ms"], th["median"], th["impl"], th["median"] / best["at_peak_ms"], best["median"],
                "eager" if best["impl"] == "ltrain" else "compiled", th["median"] / best["median"],
                100 * best["at_peak_ms"] / best["median"]))
    shared = [r for r in rows if r["impl"] == "ltrain" and r.get("gemm_share")]
    if precision == "fp32" and shared:
        lines += ["", "What the products as ltrain's step runs them allow: were all but its products free, ltrain's "
                  "step would be its best ms x the products' share of its eager step (build/bench_train_step "
                  "--profile, one run after the rounds: the GEMM ops' kernel time over the mean step), and "
                  "torch / that time the most it could beat torch by with these products (the ceiling).  The "
                  "products run about as fast as torch's MKL ones inside a step (bench/step_shares.md), so this "
                  "is the bound the rest of the step leaves room under; ltrain's share of it is the products' "
                  "share of its step.", "",
                  "| config | thr | products' share | ltrain ms | its products ms | torch ms | ceiling "
                  "| torch / ltrain |", "|---|---|---|---|---|---|---|---|"]
        for e in shared:
            g = {r["impl"]: r for r in rows if r["config"] == e["config"] and r["threads"] == e["threads"]}
            best = min((g["ltrain"], g["ltrain compiled"]), key=lambda x: x["median"])
            th, prod = best["best_torch"], best["median"] * e["gemm_share"]
            lines.append("| %s | %d | %.1f%% | %.1f | %.1f | %.1f | %.2fx | %.2fx |" % (
                e["config"], e["threads"], 100 * e["gemm_share"], best["median"], prod, th["median"],
                th["median"] / prod, th["median"] / best["median"]))
    if len(threads) > 1:
        lo, hi = min(threads), max(threads)
        lines += ["", "Threads: every round ran each thread count in turn, so this speed-up from %d to %d threads "
                  "shares the machine's drift alike (the median ms at %d over the median ms at %d)." % (lo, hi, lo, hi),
                  "", "| config | impl | %dT ms | %dT ms | %dT / %dT |" % (lo, hi, lo, hi), "|---|---|---|---|---|"]
        for r in rows:
            base = [x for x in rows if x["config"] == r["config"] and x["impl"] == r["impl"] and x["threads"] == lo]
            if r["threads"] == hi and base:
                lines.append("| %s | %s | %.1f | %.1f | %.2fx |" % (r["config"], r["impl"], base[0]["median"],
                                                                  r["median"], base[0]["median"] / r["median"]))
    lines += ["", "Medians over %s timed steps per row (after 2 warm-up steps per process, 3 for torch.compile)." %
              ", ".join(sorted({str(r["steps"]) for r in rows}, key=int))]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

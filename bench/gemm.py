#!/usr/bin/env python3
"""gemm.py - the GEMM table: ltrain's lt_sgemm against MKL, PyPI numpy's OpenBLAS and Debian's OpenBLAS.

    PY bench/gemm.py [--quick] [--threads 1,2] [--budget S] [--pause S] [--md build/bench_gemm.md]
                     [--bin build/bench_gemm] [--shape M,N,K,ta,tb ...]

PY is a Python with torch (PyTorch 2.x from PyPI: torch.mm calls MKL's sgemm) and numpy
(numpy.matmul calls the OpenBLAS bundled in numpy's wheel); either may be missing, its column is
then empty.  make bench runs it with build/torch-venv/bin/python (or PYTHON=...).  ltrain's
lt_sgemm and Debian's OpenBLAS (cblas_sgemm of libopenblas-dev, run with
OPENBLAS_CORETYPE=SkylakeX as bench/gemm.c explains) are timed by build/bench_gemm --serve, a
child process that times one batch of calls per request, so the four alternate call batch by
call batch: for every shape and thread count, rounds of (ours, MKL, numpy, Debian) batches (the
order reversed every other round), each batch at least 1 call and 100 ms (the best single call
counts), at least 3 rounds and until each side has spent --budget seconds (default 0.5; quick
0.1).  Between two sides the driver sleeps --pause seconds (default 0.1) so the threads the last
side left spinning (OpenMP, OpenBLAS) have gone to sleep before the next side runs.  Each thread
count runs in its own process with OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS set
(numpy's OpenBLAS reads its count once, when loaded).

Shapes: 1024^3 and 2048^3, then every product of a training step of the configs of
bench/train_step.py: each linear's forward, input gradient and weight gradient, and the head's
(M = B*T rows; GPT-2 stores W [in, out]: x.W, dy.W^T, x^T.dy; Llama's W is [out, in] as
nn.Linear: x.W^T, dy.W, dy^T.x); a shape that two configs share is timed once; then the shapes
of bench/gemm.c's own table that none of these has (labelled "gemm.c").  BENCH_QUICK=1
(or --quick): 2048^3 and two training shapes only, --budget 0.1.

Columns: GFLOP/s (2*M*N*K over the best call's seconds) of ours, MKL (torch.mm), numpy
(OpenBLAS of the wheel), Debian's OpenBLAS; ours / best = ours over the fastest of the other
three (>= 100%: ours is the fastest BLAS here for that shape).  Every column's matrices are on
2 MiB pages where Linux gives them (transparent huge pages, "madvise" on most systems): numpy's
arrays by default, torch's with THP_MEM_ALLOC_ENABLE=1 (set here unless already set),
bench_gemm's as the library's own buffers (lt__hugepages).  The file starts with the CPU,
its features and caches, the load average at start and end, and the libraries' versions."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# name: (V, L, H, C, T, B[, KV, HIDDEN]): as bench/train_step.py's CONFIGS
CONFIGS = {
    "char-small": (256, 4, 4, 256, 256, 8),
    "gpt-mini": (50304, 6, 6, 384, 256, 4),
    "gpt2-124M": (50304, 12, 12, 768, 64, 4),
    "llama-mini": (50304, 6, 6, 384, 256, 4, 2, 1024),
}
# bench/gemm.c's own shapes (the two-column table's), kept so both tables can be compared
GEMM_C_SHAPES = [
    ("fc fwd x·W (2048, 768 -> 3072)", 2048, 3072, 768, 0, 0), ("fc bwd dy·Wᵀ (2048, 3072 -> 768)", 2048, 768, 3072, 0, 1),
    ("fc bwd xᵀ·dy (768x3072, K=2048)", 768, 3072, 2048, 1, 0), ("proj fwd x·W (2048, 768 -> 768)", 2048, 768, 768, 0, 0),
    ("proj bwd dy·Wᵀ (2048, 768 -> 768)", 2048, 768, 768, 0, 1), ("proj bwd xᵀ·dy (768x768, K=2048)", 768, 768, 2048, 1, 0),
    ("2048x256x768", 2048, 256, 768, 0, 0), ("2048x256x768 ·Bᵀ", 2048, 256, 768, 0, 1),
    ("256x768x2048 Aᵀ·", 256, 768, 2048, 1, 0),
]
IMPLS = ["ours", "mkl", "numpy", "openblas"]
TITLES = {"ours": "ours", "mkl": "MKL (torch.mm)", "numpy": "numpy OpenBLAS", "openblas": "Debian OpenBLAS"}


def training_shapes():
    """[(label, M, N, K, ta, tb)]: the square sizes, then each config's products (first label wins)"""
    out, seen = [("square 1024", 1024, 1024, 1024, 0, 0), ("square 2048", 2048, 2048, 2048, 0, 0)], set()
    seen.update((s[1:] for s in out))
    for name, cfg in CONFIGS.items():
        V, L, H, C, T, B = cfg[:6]
        BT, D = B * T, C // H
        if len(cfg) == 8:   # Llama: W [out, in]
            lin = [("q/o", C, H * D), ("k/v", C, cfg[6] * D), ("gate/up", C, cfg[7]), ("down", cfg[7], C)]
            prods = []
            for what, i, o in lin:
                prods += [(what + " fwd x·Wᵀ", BT, o, i, 0, 1), (what + " dx dy·W", BT, i, o, 0, 0),
                          (what + " dW dyᵀ·x", o, i, BT, 1, 0)]
        else:               # GPT-2: W [in, out]
            lin = [("qkv", C, 3 * C), ("attn proj", C, C), ("fc", C, 4 * C), ("mlp proj", 4 * C, C)]
            prods = []
            for what, i, o in lin:
                prods += [(what + " fwd x·W", BT, o, i, 0, 0), (what + " dx dy·Wᵀ", BT, i, o, 0, 1),
                          (what + " dW xᵀ·dy", i, o, BT, 1, 0)]
        prods += [("head fwd x·Wᵀ", BT, V, C, 0, 1), ("head dx dy·W", BT, C, V, 0, 0), ("head dW dyᵀ·x", V, C, BT, 1, 0)]
        for p in prods:
            if p[1:] not in seen:
                seen.add(p[1:])
                out.append(("%s %s" % (name, p[0]),) + p[1:])
    for p in GEMM_C_SHAPES:
        if p[1:] not in seen:
            seen.add(p[1:])
            out.append(("gemm.c " + p[0],) + p[1:])
    return out


# ---- one thread count (child process) ------------------------------------------------------------
def worker(threads, shapes, budget, pause, binary):
    # every column's matrices on 2 MiB pages where Linux gives them: numpy's arrays are by default,
    # torch's with THP_MEM_ALLOC_ENABLE=1 (read when torch loads), bench_gemm's by lt__hugepages
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    try:
        import numpy
    except ImportError:
        numpy = None
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_CORETYPE="SkylakeX")
    child = subprocess.Popen([binary, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    ready = child.stdout.readline().split(" ", 1)   # "ready <kernel> | <OpenBLAS config>"
    print(json.dumps({"ready": ready[1].strip() if len(ready) > 1 else "?"}), flush=True)
    debian = True

    def ask(req):
        child.stdin.write(req + "\n")
        child.stdin.flush()
        ans = child.stdout.readline().split()
        if not ans or ans[0] == "error:":
            return None
        return float(ans[0])

    for label, M, N, K, ta, tb in shapes:
        ops = {}
        if torch is not None:
            a = torch.rand(K, M).t() if ta else torch.rand(M, K)   # a transposed operand is a view, as in training
            b = torch.rand(N, K).t() if tb else torch.rand(K, N)
            c = torch.empty(M, N)
            ops["mkl"] = lambda a=a, b=b, c=c: torch.mm(a, b, out=c)
        if numpy is not None:
            rng = numpy.random.default_rng(1)
            na = rng.random((K, M), dtype=numpy.float32).T if ta else rng.random((M, K), dtype=numpy.float32)
            nb = rng.random((N, K), dtype=numpy.float32).T if tb else rng.random((K, N), dtype=numpy.float32)
            nc = numpy.empty((M, N), dtype=numpy.float32)
            ops["numpy"] = lambda na=na, nb=nb, nc=nc: numpy.matmul(na, nb, out=nc)

        def batch(impl, calls, ms):
            """best seconds of one call over a batch of at least `calls` calls and `ms` milliseconds"""
            if impl in ("ours", "openblas"):
                return ask("%d %d %d %d %d %d %s %d %g" % (M, N, K, ta, tb, threads, impl, calls, ms))
            if impl not in ops:
                return None
            best, spent, n = 1e30, 0.0, 0
            while n < calls or spent * 1e3 < ms:
                t = time.perf_counter()
                ops[impl]()
                t = time.perf_counter() - t
                spent, best, n = spent + t, min(best, t), n + 1
            return best

        present = [w for w in IMPLS if w in ("ours", "openblas") or w in ops]
        if not debian and "openblas" in present:
            present.remove("openblas")
        for w in present:   # warm-up: first touches, thread start-up, packing buffers
            if batch(w, 1, 0) is None and w == "openblas":
                debian = False
        present = [w for w in present if w != "openblas" or debian]
        best = {w: 1e30 for w in present}
        spent = {w: 0.0 for w in present}
        rounds = 0
        while rounds < 3 or min(spent.values()) < budget:
            for w in (present if rounds % 2 == 0 else present[::-1]):
                time.sleep(pause)
                t0 = time.perf_counter()
                t = batch(w, 1, 100)
                spent[w] += time.perf_counter() - t0
                best[w] = min(best[w], t)
            rounds += 1
            if rounds >= 100:
                break
        flop = 2.0 * M * N * K
        print(json.dumps({"label": label, "M": M, "N": N, "K": K, "ta": ta, "tb": tb, "threads": threads,
                          "rounds": rounds, "gflops": {w: round(flop / best[w] * 1e-9, 1) for w in present}}), flush=True)
    child.stdin.close()
    child.wait()


def versions():
    """library names and versions for the file's head"""
    out = []
    try:
        import torch
        blas = [x.split("=", 1)[1] for x in torch.__config__.show().replace(",", " ").split() if x.startswith("BLAS_INFO=")]
        mkl = [ln.strip() for ln in torch.__config__.show().splitlines() if "Math Kernel Library" in ln]
        out.append("torch %s (BLAS_INFO=%s%s)" % (torch.__version__, blas[0] if blas else "?",
                                                   ", " + mkl[0].lstrip("- ") if mkl else ""))
    except ImportError:
        out.append("no torch: the MKL column is empty")
    try:
        import numpy
        try:
            cfg = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
            out.append("numpy %s (%s %s)" % (numpy.__version__, cfg.get("name", "?"), cfg.get("version", "")))
        except Exception:   # numpy < 1.26 has no dict mode
            out.append("numpy %s" % numpy.__version__)
    except ImportError:
        out.append("no numpy: its column is empty")
    return out


def main():
    args = sys.argv[1:]
    if "--help" in args or "-h" in args:
        print(__doc__)
        return
    quick = "--quick" in args or os.environ.get("BENCH_QUICK") not in (None, "", "0")
    opt = {"--threads": "1,2", "--budget": "0.1" if quick else "0.5", "--pause": "0.1",
           "--md": os.path.join(ROOT, "build", "bench_gemm.md"), "--bin": os.path.join(ROOT, "build", "bench_gemm")}
    for i, a in enumerate(args):
        if a in opt and i + 1 < len(args):
            opt[a] = args[i + 1]
    shapes = training_shapes()
    custom = [args[i + 1] for i, a in enumerate(args) if a == "--shape" and i + 1 < len(args)]
    if custom:
        shapes = [("custom",) + tuple(int(x) for x in c.split(",")) for c in custom]
    elif quick:
        shapes = [shapes[1]] + [s for s in shapes if s[0].startswith("char-small")][:1] + \
                 [s for s in shapes if "head dW" in s[0]][:1]
    if args and args[0] == "--worker":
        worker(int(args[1]), shapes, float(opt["--budget"]), float(opt["--pause"]), opt["--bin"])
        return
    threads = [int(x) for x in opt["--threads"].split(",")]
    load0 = machine.load_average()
    res, ready = [], "?"
    print("%-36s %3s %9s %9s %9s %9s %6s" % ("shape (M x N x K)", "thr", "ours", "MKL", "numpy", "Debian", "ours/best"))
    for t in threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), MKL_NUM_THREADS=str(t), OPENBLAS_NUM_THREADS=str(t))
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(t)] + args
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        for line in p.stdout:
            j = json.loads(line)
            if "ready" in j:
                ready = j["ready"]
                continue
            res.append(j)
            g = j["gflops"]
            others = [g[w] for w in ("mkl", "numpy", "openblas") if w in g]
            j["ratio"] = g["ours"] / max(others) if others else None
            print("%-36s %3d %9.1f %9s %9s %9s %6s   (%dx%dx%d %s·%s)" % (
                j["label"][:36], t, g["ours"], *[("%.1f" % g[w]) if w in g else "-" for w in ("mkl", "numpy", "openblas")],
                ("%.0f%%" % (100 * j["ratio"])) if j["ratio"] else "-", j["M"], j["N"], j["K"],
                "Aᵀ" if j["ta"] else "A", "Bᵀ" if j["tb"] else "B"), flush=True)
        if p.wait() != 0:
            sys.exit("gemm.py: the %d-thread worker failed (%d)" % (t, p.returncode))
    load1 = machine.load_average()
    lines = ["# GEMM: lt_sgemm against MKL, numpy's OpenBLAS and Debian's OpenBLAS%s" % (
        " (BENCH_QUICK: three shapes, short budget; proves the script runs, measures nothing)" if quick else ""), ""]
    lines += machine.markdown(load0, load1)
    lines += ["Run %s: `%s bench/gemm.py %s`." % (time.strftime("%Y-%m-%d %H:%M"), sys.executable, " ".join(args)),
              "Libraries: " + "; ".join(versions()) + "; build/bench_gemm: lt_sgemm kernel %s (OPENBLAS_CORETYPE=SkylakeX)." % ready,
              "GFLOP/s of the best call; the four sides alternate batch by batch (%s s each at least, %s s pause "
              "between sides); ours / best: ours over the fastest other column." % (opt["--budget"], opt["--pause"]), "",
              "| shape | M×N×K | threads | ours | MKL (torch.mm) | numpy OpenBLAS | Debian OpenBLAS | ours / best |",
              "|---|---|---|---|---|---|---|---|"]
    for j in sorted(res, key=lambda j: ([s[0] for s in shapes].index(j["label"]) if j["label"] in [s[0] for s in shapes]
                                        else 0, j["threads"])):
        g = j["gflops"]
        lines.append("| %s | %d×%d×%d %s·%s | %d | %.1f | %s | %s | %s | %s |" % (
            j["label"], j["M"], j["N"], j["K"], "Aᵀ" if j["ta"] else "A", "Bᵀ" if j["tb"] else "B", j["threads"],
            g["ours"], *[("%.1f" % g[w]) if w in g else "" for w in ("mkl", "numpy", "openblas")],
            ("%.0f%%" % (100 * j["ratio"])) if j["ratio"] else ""))
    os.makedirs(os.path.dirname(os.path.abspath(opt["--md"])), exist_ok=True)
    with open(opt["--md"], "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s" % opt["--md"])


if __name__ == "__main__":
    main()

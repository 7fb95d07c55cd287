"""torch_profile.py - where PyTorch's training step spends its time, by aten op (torch.profiler).

    build/torch-venv/bin/python bench/torch_profile.py CONFIG THREADS [STEPS]

The same model, optimizer and step as bench/train_step.py's torch eager rows (torch_parts: its
model, AdamW with lr 3e-4, betas (0.9, 0.95), weight decay 0.1 on matrices and embeddings; fp32,
random tokens): two warm-up steps, STEPS steps timed plainly (the step's milliseconds without the
profiler), then STEPS steps under torch.profiler, whose ops are printed by their own time per
step (self CPU time), largest first.  The profiler adds its own time, so the ops' sum is above
the plain step; read the shares.  ltrain's side of the same table: build/bench_train_step --config
CONFIG --threads THREADS --profile (bench/step_shares.md puts the two together)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step as ts  # noqa: E402  (torch_parts: the model, AdamW and batch of its torch rows)


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1])
        return 2
    import torch
    from torch.profiler import profile, ProfilerActivity

    name, threads = sys.argv[1], int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    torch.set_num_threads(threads)
    model, opt, ids, tgt, _, _ = ts.torch_parts(name)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(ids, tgt)
        loss.backward()
        opt.step()

    for _ in range(2):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    print("%s, %d thread(s), torch %s: plain step %.1f ms (mean of %d)"
          % (name, threads, torch.__version__, (time.perf_counter() - t0) / steps * 1e3, steps))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    ops = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
    total = sum(e.self_cpu_time_total for e in ops)
    print("| op | ms a step | share |")
    print("|---|---:|---:|")
    for e in ops[:16]:
        print("| %s | %.1f | %.1f%% |" % (e.key, e.self_cpu_time_total / steps / 1e3, 100.0 * e.self_cpu_time_total / total))
    return 0


if __name__ == "__main__":
    sys.exit(main())

# bench/memory_torch.py MODE L C H V T B STEPS THREADS: one PyTorch run of a GPT-2-shaped model (pre-LN
# blocks, tanh GELU, tied head) for bench/memory.sh, in its own process so ru_maxrss is this run's.
#   MODE none: plain autograd; every: torch.utils.checkpoint around every block (use_reentrant=False);
#   seq: torch.utils.checkpoint.checkpoint_sequential over the blocks in L segments.
# Prints one line: "torch MODE peak_rss_mb ms_per_step" (ms: the median of the steps after the first).
import resource, statistics, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

mode = sys.argv[1]
L, C, H, V, T, B, steps, threads = (int(x) for x in sys.argv[2:10])
torch.set_num_threads(threads)
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.c_attn, self.c_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(self, x):
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


wte, wpe = nn.Embedding(V, C), nn.Embedding(T, C)
blocks = nn.Sequential(*[Block() for _ in range(L)])
ln_f = nn.LayerNorm(C)
params = list(wte.parameters()) + list(wpe.parameters()) + list(blocks.parameters()) + list(ln_f.parameters())
opt = torch.optim.AdamW(params, lr=1e-4)
ids = torch.randint(0, V, (B, T))
tg = torch.randint(0, V, (B, T))
pos = torch.arange(T)
times = []
for s in range(steps):
    t0 = time.perf_counter()
    x = wte(ids) + wpe(pos)
    if mode == "every":
        for b in blocks:
            x = checkpoint(b, x, use_reentrant=False)
    elif mode == "seq":
        x = checkpoint_sequential(blocks, L, x, use_reentrant=False)
    else:
        x = blocks(x)
    loss = F.cross_entropy((ln_f(x) @ wte.weight.t()).view(-1, V), tg.view(-1))
    opt.zero_grad(set_to_none=False)
    loss.backward()
    opt.step()
    times.append((time.perf_counter() - t0) * 1e3)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print("torch %s %.1f %.1f" % (mode, rss, statistics.median(times[1:] if len(times) > 1 else times)))

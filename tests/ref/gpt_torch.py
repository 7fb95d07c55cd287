"""GPT-2 in plain torch ops, with Hugging Face's parameter names and layouts: the model of
tests/ref/gen_gpt.py (its header says what it computes) and of gen_optim2.py's gpt case."""
import math

import torch
import torch.nn.functional as F


def gpt_forward(P, ids, L, C, H):
    """logits [B,T,V] of ids [B,T]: P maps each parameter name to its tensor; L layers, C channels,
    H heads."""
    D = C // H
    B, Tn = ids.shape
    x = P["wte.weight"][ids] + P["wpe.weight"][:Tn]
    causal = torch.tril(torch.ones(Tn, Tn, dtype=torch.bool))
    for i in range(L):
        p = f"h.{i}."
        h = F.layer_norm(x, (C,), P[p + "ln_1.weight"], P[p + "ln_1.bias"], 1e-5)
        qkv = h @ P[p + "attn.c_attn.weight"] + P[p + "attn.c_attn.bias"]           # (B,T,3C)
        q, k, v = qkv.split(C, dim=-1)
        q = q.view(B, Tn, H, D).transpose(1, 2)                                        # (B,H,T,D)
        k = k.view(B, Tn, H, D).transpose(1, 2)
        v = v.view(B, Tn, H, D).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, Tn, C)
        x = x + (y @ P[p + "attn.c_proj.weight"] + P[p + "attn.c_proj.bias"])
        h = F.layer_norm(x, (C,), P[p + "ln_2.weight"], P[p + "ln_2.bias"], 1e-5)
        h = F.gelu(h @ P[p + "mlp.c_fc.weight"] + P[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + (h @ P[p + "mlp.c_proj.weight"] + P[p + "mlp.c_proj.bias"])
    x = F.layer_norm(x, (C,), P["ln_f.weight"], P["ln_f.bias"], 1e-5)
    return x @ P["wte.weight"].t()

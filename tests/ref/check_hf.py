"""Check that ltrain's GPT-2 checkpoints and Hugging Face transformers' GPT2LMHeadModel interoperate.

    python3 tests/ref/check_hf.py [--ckpt PATH] [--cc CC] [--tol X] [--no-transformers]

Needs torch, safetensors and (for the full check) transformers; a C compiler builds a small helper
that runs ltrain's lt_gpt_load + lt_gpt_forward.  Not part of `make test`.

1. ltrain -> transformers: a checkpoint written by build/train_gpt (trained here for a few steps
   on ltrain.h, or --ckpt PATH) is read with safetensors.torch.load_file; the training extras
   ("optim.*", "train.state") are dropped, the config comes from the file's metadata (n_layer,
   n_head, n_embd, n_ctx, vocab_size), and the weights go into GPT2LMHeadModel.transformer with
   load_state_dict(strict=True).  Its logits are compared with ltrain's for the same ids.
2. transformers -> ltrain: a GPT2LMHeadModel with random weights is saved by
   save_pretrained(safe_serialization=True) ("transformer." names, no n_head metadata) and loaded
   by lt_gpt_load; also the same weights laid out as the Hub's gpt2 model.safetensors (no prefix,
   attn.bias / attn.masked_bias buffers, lm_head.weight), and once more stored as F16.

Prints the largest absolute logit difference of each case; exits 1 if one exceeds --tol.
Without transformers, case 1 runs against a GPT-2 written in plain torch ops (same formulas).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file, save_file

try:
    from transformers import GPT2Config, GPT2LMHeadModel
    HAVE_HF = True
except Exception:  # transformers missing or incompatible with this torch
    HAVE_HF = False

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HELPER = r"""
/* logits of ltrain's GPT-2 from a safetensors file:
   helper MODEL N_HEAD IDS(int32 raw) B T OUT(float32 raw [B,T,V]) */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include <stdlib.h>
int main(int argc, char **argv) {
    lt_ctx *ctx;
    lt_gpt *g;
    lt_tensor *logits;
    int32_t *ids;
    int B, T;
    FILE *f;
    if (argc != 7) { fprintf(stderr, "usage: helper MODEL N_HEAD IDS B T OUT\n"); return 2; }
    B = atoi(argv[4]); T = atoi(argv[5]);
    ctx = lt_ctx_create(1);
    g = lt_gpt_load(ctx, argv[1], atoi(argv[2]));
    if (!g) { fprintf(stderr, "helper: %s\n", lt_error(ctx)); return 1; }
    ids = (int32_t *)malloc((size_t)B * (size_t)T * sizeof(int32_t));
    f = fopen(argv[3], "rb");
    if (!ids || !f || fread(ids, sizeof(int32_t), (size_t)B * T, f) != (size_t)B * T) { fprintf(stderr, "helper: ids\n"); return 1; }
    fclose(f);
    lt_set_grad_enabled(ctx, 0);
    logits = lt_gpt_forward(g, ids, B, T, NULL);
    if (!logits) { fprintf(stderr, "helper: %s\n", lt_error(ctx)); return 1; }
    f = fopen(argv[6], "wb");
    if (!f || fwrite(logits->data, sizeof(float), (size_t)logits->n, f) != (size_t)logits->n) return 1;
    fclose(f);
    printf("L=%d H=%d C=%d ctx=%d V=%d\n", lt_gpt_cfg(g)->layers, lt_gpt_cfg(g)->heads, lt_gpt_cfg(g)->channels,
           lt_gpt_cfg(g)->ctx, lt_gpt_cfg(g)->vocab);
    free(ids);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return 0;
}
"""


def build_helper(tmp, cc):
    src = os.path.join(tmp, "helper.c")
    exe = os.path.join(tmp, "helper")
    with open(src, "w") as f:
        f.write(HELPER)
    subprocess.run([cc, "-std=c99", "-O2", "-I", ROOT, src, "-o", exe, "-lm"], check=True)
    return exe


def ltrain_logits(helper, tmp, path, n_head, ids):
    B, T = ids.shape
    idp, outp = os.path.join(tmp, "ids.bin"), os.path.join(tmp, "logits.bin")
    ids.astype("<i4").tofile(idp)
    r = subprocess.run([helper, path, str(n_head), idp, str(B), str(T), outp], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"lt_gpt_load/forward failed on {path}: {r.stderr.strip()}")
    print(f"    ltrain loaded {os.path.basename(path)}: {r.stdout.strip()}")
    return np.fromfile(outp, dtype="<f4").reshape(B, T, -1)


def hf_config(n_layer, n_head, n_embd, n_ctx, vocab):
    # GPT-2's own choices: gelu_new (= tanh approximation), LayerNorm eps 1e-5, scale 1/sqrt(D),
    # tied LM head; dropout off so the comparison is deterministic.
    return GPT2Config(vocab_size=vocab, n_positions=n_ctx, n_embd=n_embd, n_layer=n_layer, n_head=n_head,
                      activation_function="gelu_new", layer_norm_epsilon=1e-5, resid_pdrop=0.0, embd_pdrop=0.0,
                      attn_pdrop=0.0, tie_word_embeddings=True)


def plain_gpt2(sd, n_layer, n_head, ids):
    """GPT-2 in plain torch ops (used when transformers is not installed)."""
    B, T = ids.shape
    C = sd["wte.weight"].shape[1]
    D = C // n_head
    x = sd["wte.weight"][ids] + sd["wpe.weight"][:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for i in range(n_layer):
        p = f"h.{i}."
        h = F.layer_norm(x, (C,), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"], 1e-5)
        q, k, v = (h @ sd[p + "attn.c_attn.weight"] + sd[p + "attn.c_attn.bias"]).split(C, dim=-1)
        q, k, v = (t.view(B, T, n_head, D).transpose(1, 2) for t in (q, k, v))
        att = ((q @ k.transpose(-2, -1)) / math.sqrt(D)).masked_fill(~causal, float("-inf")).softmax(-1)
        x = x + (att @ v).transpose(1, 2).reshape(B, T, C) @ sd[p + "attn.c_proj.weight"] + sd[p + "attn.c_proj.bias"]
        h = F.layer_norm(x, (C,), sd[p + "ln_2.weight"], sd[p + "ln_2.bias"], 1e-5)
        h = F.gelu(h @ sd[p + "mlp.c_fc.weight"] + sd[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + h @ sd[p + "mlp.c_proj.weight"] + sd[p + "mlp.c_proj.bias"]
    x = F.layer_norm(x, (C,), sd["ln_f.weight"], sd["ln_f.bias"], 1e-5)
    return x @ sd["wte.weight"].t()


def report(name, ours, theirs, tol, results):
    d = float(np.max(np.abs(ours - theirs)))
    scale = float(np.max(np.abs(theirs)))
    ok = d <= tol
    results.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max |logit difference| = {d:.3g} (logits up to {scale:.3g}; tol {tol:g})")


def ours_to_hf(args, helper, tmp, results):
    ck = args.ckpt
    if not ck:
        exe = os.path.join(ROOT, "build", "train_gpt")
        if not os.path.exists(exe):
            raise SystemExit("build/train_gpt is missing: run `make build/train_gpt` first (or pass --ckpt)")
        ck = os.path.join(tmp, "ours.safetensors")
        cmd = [exe, "--data", os.path.join(ROOT, "ltrain.h"), "--layers", "2", "--heads", "4", "--channels", "64",
               "--ctx", "64", "--batch", "4", "--seq", "64", "--steps", "30", "--lr", "3e-3", "--save", ck]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        print(f"[1] trained 30 steps with build/train_gpt -> {ck}")
    else:
        print(f"[1] checkpoint {ck}")
    with safe_open(ck, framework="pt") as f:
        meta = f.metadata() or {}
    print(f"    metadata: {json.dumps({k: v for k, v in meta.items() if k != 'note'})}")
    sd = load_file(ck)
    extras = [k for k in sd if k.startswith("optim.") or k.startswith("train.")]
    sd = {k: v for k, v in sd.items() if k not in extras}
    print(f"    {len(sd)} weight tensors ({len(extras)} training-state tensors dropped)")
    L, H, C = int(meta["n_layer"]), int(meta["n_head"]), int(meta["n_embd"])
    n_ctx, V = int(meta["n_ctx"]), int(meta["vocab_size"])
    assert tuple(sd["wte.weight"].shape) == (V, C) and tuple(sd["wpe.weight"].shape) == (n_ctx, C)
    ids = np.random.default_rng(1).integers(0, V, size=(2, n_ctx))
    ours = ltrain_logits(helper, tmp, ck, 0, ids)   # n_head from the file's metadata
    if HAVE_HF:
        model = GPT2LMHeadModel(hf_config(L, H, C, n_ctx, V)).eval()
        missing, unexpected = model.transformer.load_state_dict(sd, strict=False)
        missing = [k for k in missing if not k.endswith(("attn.bias", "attn.masked_bias"))]
        if missing or unexpected:
            raise SystemExit(f"load_state_dict: missing {missing}, unexpected {unexpected}")
        with torch.no_grad():
            theirs = model(torch.tensor(ids)).logits.numpy()
        report("ltrain checkpoint -> transformers GPT2LMHeadModel", ours, theirs, args.tol, results)
    else:
        with torch.no_grad():
            theirs = plain_gpt2(sd, L, H, torch.tensor(ids)).numpy()
        report("ltrain checkpoint -> plain-torch GPT-2 (without transformers)", ours, theirs, args.tol, results)


def hf_to_ours(args, helper, tmp, results):
    if not HAVE_HF:
        print("[2] skipped: transformers is not installed (pip install transformers)")
        return
    L, H, C, n_ctx, V = 2, 4, 64, 32, 300
    torch.manual_seed(0)
    model = GPT2LMHeadModel(hf_config(L, H, C, n_ctx, V)).eval()
    with torch.no_grad():   # random weights well away from GPT-2's init, so layout mistakes show
        for name, p in model.named_parameters():
            if ".ln_" in name or name.startswith("transformer.ln_f"):
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.1)
    d = os.path.join(tmp, "hf")
    model.save_pretrained(d, safe_serialization=True)
    path = os.path.join(d, "model.safetensors")
    with safe_open(path, framework="pt") as f:
        keys = list(f.keys())
        meta = f.metadata()
    print(f"[2] save_pretrained -> {path}: {len(keys)} tensors, e.g. {sorted(keys)[0]}; metadata {meta}")
    ids = np.random.default_rng(2).integers(0, V, size=(3, n_ctx))
    with torch.no_grad():
        theirs = model(torch.tensor(ids)).logits.numpy()
    ours = ltrain_logits(helper, tmp, path, H, ids)
    report("transformers save_pretrained -> lt_gpt_load", ours, theirs, args.tol, results)

    # the Hub's gpt2/model.safetensors layout: no "transformer." prefix, the causal-mask buffers
    # h.{i}.attn.bias [1,1,n_ctx,n_ctx] and h.{i}.attn.masked_bias, and lm_head.weight
    sd = {k[len("transformer."):]: v.contiguous() for k, v in model.state_dict().items() if k.startswith("transformer.")}
    for i in range(L):
        sd[f"h.{i}.attn.bias"] = torch.tril(torch.ones(n_ctx, n_ctx)).view(1, 1, n_ctx, n_ctx)
        sd[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
    sd["lm_head.weight"] = model.lm_head.weight.detach().clone()
    hub = os.path.join(tmp, "hub_layout.safetensors")
    save_file(sd, hub, metadata={"format": "pt"})
    ours = ltrain_logits(helper, tmp, hub, H, ids)
    report("Hub layout (no prefix, attn.bias/masked_bias, lm_head.weight) -> lt_gpt_load", ours, theirs, args.tol,
           results)

    # F16 storage: ltrain converts to float32 on load; compare with the model holding the rounded weights
    sd16 = {k: v.half() for k, v in model.state_dict().items() if not k.startswith("lm_head.")}
    p16 = os.path.join(tmp, "f16.safetensors")
    save_file(sd16, p16, metadata={"format": "pt", "n_head": str(H)})
    m16 = GPT2LMHeadModel(hf_config(L, H, C, n_ctx, V)).eval()
    m16.load_state_dict({k: v.float() for k, v in sd16.items()}, strict=False)
    m16.tie_weights()
    with torch.no_grad():
        theirs16 = m16(torch.tensor(ids)).logits.numpy()
    ours = ltrain_logits(helper, tmp, p16, 0, ids)
    report("F16 safetensors (n_head from metadata) -> lt_gpt_load", ours, theirs16, args.tol, results)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", help="an ltrain checkpoint to check (default: train one with build/train_gpt)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--tol", type=float, default=1e-4, help="largest allowed |logit difference| (float32)")
    ap.add_argument("--no-transformers", action="store_true", help="run only the plain-torch / safetensors check")
    args = ap.parse_args()
    global HAVE_HF
    if args.no_transformers:
        HAVE_HF = False
    results = []
    print(f"torch {torch.__version__}; transformers "
          f"{__import__('transformers').__version__ if HAVE_HF else 'not used'}")
    with tempfile.TemporaryDirectory() as tmp:
        helper = build_helper(tmp, args.cc)
        ours_to_hf(args, helper, tmp, results)
        hf_to_ours(args, helper, tmp, results)
    print(f"{sum(results)} of {len(results)} checks passed")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()

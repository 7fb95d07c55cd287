"""Check that ltrain.h's Llama-style (and GPT-2) checkpoints and Hugging Face transformers interoperate.

    python3 tests/ref/check_llama.py [--cc CC] [--tol X] [--write-ref]

Needs torch, safetensors, transformers (4.x or 5.x) and a C compiler (for a small helper that runs
lt_gpt_load + lt_gpt_forward) and build/train_gpt (make build/train_gpt).  Not part of `make test`.

1. transformers -> ltrain.h: tiny LlamaForCausalLM / Qwen3ForCausalLM models with random weights
   (GQA, MQA, untied head, biases, qk-norm) saved with save_pretrained(dir); lt_gpt_load(dir)
   reads config.json beside model.safetensors (no --heads) and its logits must match.
2. ltrain.h -> transformers: build/train_gpt trains each variant for a few steps and saves into
   a directory (--save DIR/); AutoModelForCausalLM.from_pretrained(DIR) must load it and give the
   same logits as ltrain.h on the same ids.  GPT-2 too (GPT2LMHeadModel: format "pt" metadata).
3. --write-ref writes tests/ref/llama_hf/ (a save_pretrained directory: GQA, untied, biases,
   RoPE theta 500000) and tests/ref/qwen3_hf/ (qk-norm, GQA, untied), each with ref.safetensors
   (ids, logits), which
   tests/test_llama.c checks without Python.

Prints the largest absolute logit difference of each case; exits 1 if one exceeds --tol.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
import transformers
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

try:
    from transformers import Qwen3Config, Qwen3ForCausalLM
except ImportError:  # older transformers
    Qwen3Config = Qwen3ForCausalLM = None

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HELPER = r"""
/* helper MODEL IDS(int32 raw) B T OUT(float32 raw [B,T,V]): ltrain.h's logits of a checkpoint */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include <stdlib.h>
int main(int argc, char **argv) {
    lt_ctx *ctx;
    lt_gpt *g;
    lt_tensor *logits;
    const lt_gpt_config *c;
    int32_t *ids;
    int B, T;
    FILE *f;
    if (argc != 6) { fprintf(stderr, "usage: helper MODEL IDS B T OUT\n"); return 2; }
    B = atoi(argv[3]); T = atoi(argv[4]);
    ctx = lt_ctx_create(1);
    g = lt_gpt_load(ctx, argv[1], 0);
    if (!g) { fprintf(stderr, "helper: %s\n", lt_error(ctx)); return 1; }
    ids = (int32_t *)malloc((size_t)B * (size_t)T * sizeof(int32_t));
    f = fopen(argv[2], "rb");
    if (!ids || !f || fread(ids, sizeof(int32_t), (size_t)B * T, f) != (size_t)B * T) { fprintf(stderr, "helper: ids\n"); return 1; }
    fclose(f);
    lt_set_grad_enabled(ctx, 0);
    logits = lt_gpt_forward(g, ids, B, T, NULL);
    if (!logits) { fprintf(stderr, "helper: %s\n", lt_error(ctx)); return 1; }
    f = fopen(argv[5], "wb");
    if (!f || fwrite(logits->data, sizeof(float), (size_t)logits->n, f) != (size_t)logits->n) return 1;
    fclose(f);
    c = lt_gpt_cfg(g);
    printf("%s L=%d H=%d KV=%d C=%d F=%d V=%d qk_norm=%d bias=%d untied=%d theta=%g eps=%g\n",
           c->arch == LT_ARCH_LLAMA ? "llama" : "gpt2", c->layers, c->heads, c->kv_heads, c->channels, c->hidden,
           c->vocab, c->qk_norm, c->no_bias == -1, c->untied, (double)c->rope_theta, (double)c->norm_eps);
    free(ids);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return 0;
}
"""


def build_helper(tmp, cc):
    src, exe = os.path.join(tmp, "helper.c"), os.path.join(tmp, "helper")
    with open(src, "w") as f:
        f.write(HELPER)
    subprocess.run([cc, "-std=c99", "-O2", "-I", ROOT, src, "-o", exe, "-lm"], check=True)
    return exe


def ltrain_logits(helper, tmp, path, ids):
    B, T = ids.shape
    idp, outp = os.path.join(tmp, "ids.bin"), os.path.join(tmp, "logits.bin")
    ids.astype("<i4").tofile(idp)
    r = subprocess.run([helper, path, idp, str(B), str(T), outp], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"lt_gpt_load/forward failed on {path}: {r.stderr.strip()}")
    print(f"    ltrain.h loaded {path}: {r.stdout.strip()}")
    return np.fromfile(outp, dtype="<f4").reshape(B, T, -1)


def hf_logits(model, ids):
    model.eval()
    with torch.no_grad():
        return model(torch.from_numpy(ids).long()).logits.float().numpy()


# name -> (config class name, kwargs); tiny models, float32
VARIANTS = {
    "llama_mha_tied": ("llama", dict(num_attention_heads=4, num_key_value_heads=4, tie_word_embeddings=True)),
    "llama_gqa_untied": ("llama", dict(num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False,
                                       rope_theta=500000.0)),
    "llama_mqa_bias": ("llama", dict(num_attention_heads=4, num_key_value_heads=1, tie_word_embeddings=True,
                                     attention_bias=True, mlp_bias=True)),
    "qwen3_qknorm_gqa": ("qwen3", dict(num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False,
                                       head_dim=8)),
}


def make_hf(kind, kw, seed, V=96, C=32, L=2, F=80, ctx=64):
    torch.manual_seed(seed)
    kw = dict(kw)
    if "rope_theta" in kw and int(transformers.__version__.split(".")[0]) >= 5:
        kw["rope_parameters"] = {"rope_type": "default", "rope_theta": kw.pop("rope_theta")}
    common = dict(vocab_size=V, hidden_size=C, intermediate_size=F, num_hidden_layers=L, max_position_embeddings=ctx,
                  rms_norm_eps=1e-5)
    if kind == "llama":
        model = LlamaForCausalLM(LlamaConfig(**common, **kw))
    else:
        model = Qwen3ForCausalLM(Qwen3Config(**common, **kw))
    with torch.no_grad():  # norms and biases away from 1 and 0, so that a swapped one shows
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn_like(p))
    return model.float()


def check(name, ours, theirs, tol, results):
    d = float(np.max(np.abs(ours - theirs)))
    ok = d <= tol and ours.shape == theirs.shape
    results.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max |logit difference| = {d:.3g} (logits up to "
          f"{float(np.max(np.abs(theirs))):.3g}; tol {tol})")


def hf_to_ltrain(helper, tmp, tol, results):
    rng = np.random.default_rng(3)
    for i, (name, (kind, kw)) in enumerate(VARIANTS.items()):
        if kind == "qwen3" and Qwen3ForCausalLM is None:
            print(f"skip {name}: this transformers has no Qwen3")
            continue
        model = make_hf(kind, kw, seed=10 + i)
        d = os.path.join(tmp, "hf_" + name)
        model.save_pretrained(d, safe_serialization=True)
        ids = rng.integers(0, model.config.vocab_size, size=(2, 11)).astype(np.int32)
        try:
            ours = ltrain_logits(helper, tmp, d, ids)
        except RuntimeError as e:
            print(f"FAIL transformers {name} save_pretrained -> lt_gpt_load: {e}")
            results.append(False)
            continue
        check(f"transformers {name} save_pretrained -> lt_gpt_load(dir)", ours, hf_logits(model, ids), tol, results)
    # GPT-2: the heads come from config.json (no n_head metadata, no --heads)
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(5)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=96, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                                       bos_token_id=0, eos_token_id=0)).float()
    d = os.path.join(tmp, "hf_gpt2")
    model.save_pretrained(d, safe_serialization=True)
    ids = rng.integers(0, 96, size=(2, 11)).astype(np.int32)
    check("transformers GPT2LMHeadModel save_pretrained -> lt_gpt_load(dir), heads from config.json",
          ltrain_logits(helper, tmp, d, ids), hf_logits(model, ids), tol, results)


TRAIN_VARIANTS = {
    "llama_gqa": "--arch llama --heads 4 --kv-heads 2",
    "llama_mqa_untied_theta": "--arch llama --heads 4 --kv-heads 1 --untied --rope-theta 500000",
    "llama_qknorm_bias": "--arch llama --heads 4 --kv-heads 2 --qk-norm --bias",
    "llama_qknorm": "--arch llama --heads 4 --qk-norm --hidden 96",
    "gpt2": "--arch gpt2 --heads 4",
}


def ltrain_to_hf(helper, tmp, tol, results):
    exe = os.path.join(ROOT, "build", "train_gpt")
    if not os.path.exists(exe):
        raise SystemExit("build/train_gpt is missing: make build/train_gpt")
    rng = np.random.default_rng(4)
    for name, flags in TRAIN_VARIANTS.items():
        d = os.path.join(tmp, "lt_" + name) + "/"
        cmd = [exe, "--data", os.path.join(ROOT, "ltrain.h"), "--layers", "2", "--channels", "32", "--ctx", "64",
               "--batch", "2", "--seq", "32", "--steps", "6", "--lr", "1e-2", "--warmup", "0", "--threads", "1",
               "--save", d] + flags.split()
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL train_gpt {flags}: {r.stderr.strip()}")
            results.append(False)
            continue
        if "bias" in name and "qknorm" in name:
            print(f"    {name}: qk-norm with MLP biases has no transformers class (Qwen3 has no mlp_bias): ltrain.h only")
            ids = rng.integers(0, 256, size=(2, 9)).astype(np.int32)
            ltrain_logits(helper, tmp, d, ids)
            continue
        try:
            model = AutoModelForCausalLM.from_pretrained(d).float()
        except Exception as e:  # noqa: BLE001 - report any refusal
            print(f"FAIL {name}: from_pretrained refused ltrain.h's directory: {e}")
            results.append(False)
            continue
        ids = rng.integers(0, 256, size=(2, 9)).astype(np.int32)
        check(f"train_gpt {flags} --save DIR/ -> {type(model).__name__}.from_pretrained(DIR)",
              ltrain_logits(helper, tmp, d, ids), hf_logits(model, ids), tol, results)


def write_ref(helper, tmp):
    for name, kind, kw, seed in (("llama_hf", "llama", dict(VARIANTS["llama_gqa_untied"][1], attention_bias=True,
                                                            mlp_bias=True), 21),
                                 ("qwen3_hf", "qwen3", dict(VARIANTS["qwen3_qknorm_gqa"][1], head_dim=4), 22)):
        model = make_hf(kind, kw, seed=seed, V=48, C=16, L=2, F=40, ctx=32)
        d = os.path.join(ROOT, "tests", "ref", name)
        shutil.rmtree(d, ignore_errors=True)
        model.save_pretrained(d, safe_serialization=True)
        for extra in os.listdir(d):
            if extra not in ("model.safetensors", "config.json"):
                os.remove(os.path.join(d, extra))
        ids = np.random.default_rng(seed).integers(0, 48, size=(2, 7)).astype(np.int32)
        logits = hf_logits(model, ids)
        save_file({"ids": torch.from_numpy(ids), "logits": torch.from_numpy(logits)}, os.path.join(d, "ref.safetensors"))
        ours = ltrain_logits(helper, tmp, d, ids)
        print(f"wrote {d}: {model.num_parameters()} parameters; ltrain.h max |diff| now "
              f"{float(np.max(np.abs(ours - logits))):.3g}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--write-ref", action="store_true")
    args = ap.parse_args()
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        helper = build_helper(tmp, args.cc)
        if args.write_ref:
            write_ref(helper, tmp)
            return 0
        hf_to_ltrain(helper, tmp, args.tol, results)
        ltrain_to_hf(helper, tmp, args.tol, results)
    print(f"{sum(results)} of {len(results)} checks passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

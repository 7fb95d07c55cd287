#!/usr/bin/env python3
"""check_llama_hf.py - is train_step.py's plain torch Llama the model Hugging Face's LlamaForCausalLM is?

    PY bench/check_llama_hf.py [V,L,H,C,T,B,KV,HIDDEN]    (default: a small Llama, 256,2,4,128,64,2,2,256)

PY needs torch and transformers.  Builds bench/train_step.py's torch model of that config, copies
its weights into a LlamaForCausalLM of the same config (tied head, no biases, RoPE theta 10000,
RMSNorm eps 1e-5, SiLU), and prints both losses on the same random batch, the largest difference
of the two models' gradients, and whether they agree (loss within 1e-5)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_step  # noqa: E402


def main():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    name = sys.argv[1] if len(sys.argv) > 1 else "256,2,4,128,64,2,2,256"
    V, L, H, C, T, B, KV, hid = train_step.config(name)
    ours, _, _ = train_step.torch_model(name)
    hf = LlamaForCausalLM(LlamaConfig(vocab_size=V, hidden_size=C, intermediate_size=hid, num_hidden_layers=L,
                                      num_attention_heads=H, num_key_value_heads=KV, max_position_embeddings=T,
                                      rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True,
                                      attention_bias=False, mlp_bias=False, hidden_act="silu"))
    src = dict(ours.named_parameters())
    with torch.no_grad():
        for n, p in hf.named_parameters():
            key = n[len("model."):] if n.startswith("model.") else n
            key = key.replace("self_attn.", "").replace("mlp.", "")
            if n == "lm_head.weight":
                continue   # tied: the embedding
            p.copy_(src[key])
    g = torch.Generator().manual_seed(42)
    ids = torch.randint(0, V, (B, T), generator=g)
    tgt = torch.randint(0, V, (B, T), generator=g)
    a = ours(ids, tgt)
    b = torch.nn.functional.cross_entropy(hf(input_ids=ids).logits.reshape(-1, V), tgt.reshape(-1))
    a.backward()
    b.backward()
    gdiff = max((src[(n[len("model."):] if n.startswith("model.") else n).replace("self_attn.", "").replace("mlp.", "")]
                 .grad - p.grad).abs().max().item() for n, p in hf.named_parameters() if n != "lm_head.weight")
    print("%s: train_step.py's torch Llama loss %.6f, LlamaForCausalLM %.6f, largest gradient difference %.2e -> %s" % (
        name, a.item(), b.item(), gdiff, "the same model" if abs(a.item() - b.item()) < 1e-5 else "DIFFERENT"))


if __name__ == "__main__":
    main()

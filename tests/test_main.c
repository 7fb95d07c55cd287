/* The test suite: one program, every test file included here.  Run from the repository root:
       make test            (or build/test_all [filter])
   Ends with "N passed, N failed, N skipped"; the exit status is non-zero when anything failed. */
#define _POSIX_C_SOURCE 200809L /* setenv, system, kill: the tests drive processes */
#define LTRAIN_IMPLEMENTATION
#include "../ltrain.h"
#include "lt_test.h"
#if defined(__clang__)
#pragma clang fp contract(off)   /* the references' a·b + c unfused, as gcc -std=c99 leaves them */
#endif
#include <sys/stat.h>

#include "test_core.c"   /* context, errors, tensors, tape, gradcheck */
#include "test_ops.c"    /* every op against PyTorch references + gradcheck */
#include "test_llama_ops.c" /* RMSNorm, RoPE, SiLU, SwiGLU, grouped-query attention against PyTorch */
#include "test_gemm.c"   /* every sgemm kernel against a double-precision loop */
#include "test_optim.c"  /* AdamW, SGD, schedules, clipping against PyTorch */
#include "test_optim2.c" /* Lion, AdEMAMix, Muon, SOAP against PyTorch */
#include "test_data.c"   /* loaders, shards, safetensors, malformed files */
#include "test_gpt.c"    /* GPT-2 against PyTorch, training, accumulation, resume */
#include "test_compile.c" /* compiled plans against eager steps, shape cache, fallback */
#include "test_recompute.c" /* activation checkpointing: gradients to the bit, memory, errors */
#include "test_seq.c"    /* variable-length sequences, buckets, length schedule, restarts */
#include "test_tok.c"    /* tokenizers: pre-tokenizer, BPE encode/decode against tiktoken and HF */
#include "test_amp.c"    /* fp16/bf16 conversions against PyTorch, SIMD kernels, loss scaler */
#include "test_plot.c"   /* the SVG writer: well-formed, ticks, NaN, degenerate series */
#include "test_harden.c" /* malformed corpus, exact resume in every mode, saves, non-finite values */
#include "test_dist.c"   /* data parallel without MPI: the single-process case (MPI: test_mpi.c) */
#include "test_precision.c" /* 16-bit matmuls (lt_set_precision) against torch autocast, compiled plans */
#include "test_device.c" /* the device API on the host (CUDA kernels: tests/test_cuda.c) */
#include "test_null.c"   /* every public function with NULL for its context or object */
#include "test_lessons.c" /* the lessons refuse flags that are not numbers in range */
#include "test_llama.c"  /* Llama-style models: config, transformers interop, checkpoints, train_gpt --arch llama */
#include "test_tok_train.c" /* BPE training against HF tokenizers' BpeTrainer, saved files loaded back */

int main(int argc, char **argv) {
    if (argc > 1) t_only = argv[1];
    mkdir("build", 0755);
    mkdir(t_tmp_dir(), 0755);
    test_core_all();
    test_ops_all();
    test_llama_ops_all();
    test_gemm_all();
    test_optim_all();
    test_optim2_all();
    test_data_all();
    test_gpt_all();
    test_compile_all();
    test_recompute_all();
    test_seq_all();
    test_tok_all();
    test_amp_all();
    test_plot_all();
    test_harden_all();
    test_dist_all();
    test_precision_all();
    test_device_all();
    test_null_all();
    test_lessons_all();
    test_llama_all();
    test_tok_train_all();
    printf("%d passed, %d failed, %d skipped\n", t_passed, t_failed, t_skipped);
    return t_failed ? 1 : 0;
}

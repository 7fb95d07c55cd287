/* ltrain.h - train transformer language models in one C file - MIT or public domain (see end)

   Do this in ONE .c file, before the include:
       #define LTRAIN_IMPLEMENTATION
       #include "ltrain.h"
   Other files just #include "ltrain.h".  Build with  cc -O2 -fopenmp prog.c -lm
   (-fopenmp is optional: without it the OpenMP pragmas vanish and everything runs on one core).

   CONTENTS (grep "@@" to jump; the implementation follows the declarations' order)
   This header is generated from its parts src/NN_name.h (named on the right): edit those, then
   run `make header` (sh src/amalgamate.sh).  Each part's first lines say what it holds and which
   parts above it it calls.  The tags under a section (@@OPS.attention, @@OPTIM.adamw, ...) each
   mark one piece of its part: grep for one to land on that piece.
     @@DOCS     this text: what the library is, how a training loop reads          00_docs.h
     @@OPTIONS  compile-time knobs (LTRAIN_DEF, LTRAIN_MALLOC, LTRAIN_CBLAS, ...)    00_docs.h
     @@API      public declarations: context, tensors, ops, tape, compile, nn,      01_api.h
                losses, optimizers, schedules, clipping, mixed precision, data,
                tokenizers, checkpoints, plots, dist
     -- implementation (under LTRAIN_IMPLEMENTATION) --
     @@CORE     errors, allocator, arena, RNG, threads, overflow-checked sizes      02_core.h
                @@CORE.cpu @@CORE.arena @@CORE.device @@CORE.errors @@CORE.utf8 @@CORE.threads @@CORE.rng @@CORE.context
     @@HALF     16-bit numbers: fp16/bf16 conversions (scalar and SIMD)             03_half.h
                @@HALF.scalar @@HALF.arrays @@HALF.precision
     @@TENSOR   tensors: shapes, parameters (one packed block), views               04_tensor.h
                @@TENSOR.new @@TENSOR.params
     @@OPS      ops, each forward next to its backward, and the op table            05_ops.h
                @@OPS.table @@OPS.simd @@OPS.records @@OPS.reshape @@OPS.add @@OPS.scale @@OPS.sum
                @@OPS.activations @@OPS.gelu @@OPS.relu @@OPS.silu @@OPS.softmax @@OPS.layernorm
                @@OPS.rmsnorm @@OPS.rope @@OPS.embedding @@OPS.dropout @@OPS.transpose
                @@OPS.attention @@OPS.attention_gqa
     @@GEMM     matrix-multiply kernels (portable reference; AVX2/AVX-512 picked    06_gemm.h
                at run time)
                @@GEMM.kernels @@GEMM.avx512 @@GEMM.bf16dp @@GEMM.amx @@GEMM.avx2 @@GEMM.neon
                @@GEMM.pack @@GEMM.f16 @@GEMM.pack_bf16 @@GEMM.block @@GEMM.blockz @@GEMM.blockk
     @@OPS      (continued) matmul, linear, conv1d, attention16                     07_ops_matmul.h
                @@OPS.matmul @@OPS.linear @@OPS.matmul16 @@OPS.attention16
     @@TAPE     autograd tape: backward, zero-grad, gradcheck                       08_tape.h
                @@TAPE.recompute @@TAPE.backward @@TAPE.zero_grad @@TAPE.gradcheck
     @@COMPILE  capture a step once, plan its memory by buffer lifetimes, replay    09_compile.h
                @@COMPILE.capture @@COMPILE.fusion @@COMPILE.plan @@COMPILE.replay
                @@COMPILE.compile @@COMPILE.cache
     @@NN       nn blocks: GPT-2 (embeddings, attention, MLP, layernorm, tied       10_nn.h
                head, sampling)
                @@NN.gpt @@NN.forward @@NN.generate
     @@LOSS     cross-entropy (ignore index, token-weighted), MSE, the GPT's loss   11_loss.h
                @@LOSS.cross_entropy @@LOSS.linear_ce16 @@LOSS.linear_ce @@LOSS.linear_ce_exp
                @@LOSS.mse @@LOSS.gpt
     @@OPTIM    AdamW, SGD with momentum                                            12_optim.h
                @@OPTIM.table @@OPTIM.adamw @@OPTIM.sgd @@OPTIM.step
     @@OPTIM    (continued) Lion, AdEMAMix, Muon, SOAP                              13_optim_more.h
                @@OPTIM.lion @@OPTIM.ademamix @@OPTIM.muon @@OPTIM.soap
                @@OPTIM.state
     @@SCHED    warm-up + cosine / sqrt / linear decay; LinearLR,                   14_sched.h
                CosineAnnealingLR, SequentialLR
                @@SCHED.cosine @@SCHED.torch
     @@CLIP     clip_grad_norm_, clip_grad_value_                                   15_clip.h
                @@CLIP.norm @@CLIP.value
     @@AMP      dynamic loss scaling (GradScaler)                                   16_amp.h
                @@AMP.scaler
     @@DATA     text files, llm.c token shards, batches                             17_data.h
                @@DATA.files @@DATA.loader
     @@DATA     (continued) sequences, buckets, length schedule (lt_len_*)          18_data_seq.h
                @@DATA.seq @@DATA.buckets @@DATA.len_schedule @@DATA.restarts
     @@TOK      tokenizers: byte-level BPE (GPT-2, Llama-3, Qwen2), encode/decode   18_data_tok.h
                @@TOK.utf8 @@TOK.nfc @@TOK.pretok @@TOK.json @@TOK.load @@TOK.encode @@TOK.decode
     @@TOK      (continued) training a byte-level BPE vocabulary (lt_bpe_*)         18_data_tok_train.h
                @@TOK.train @@TOK.save
     @@CKPT     safetensors read/write                                              19_ckpt.h
                @@CKPT.json @@CKPT.read @@CKPT.write @@CKPT.config
     @@TRAIN    training helpers: GPT checkpoints (Hugging Face names), training    20_train.h
                state
                @@TRAIN.hf @@TRAIN.weights @@TRAIN.checkpoint
     @@PLOT     SVG line charts (no dependencies)                                   21_plot.h
                @@PLOT.series @@PLOT.ticks @@PLOT.svg
     @@DIST     data parallel over MPI (LTRAIN_MPI): gradient all-reduce, sharding  22_dist.h
                @@DIST.process @@DIST.reducer @@DIST.data
     @@CUDA     the CUDA backend (LTRAIN_CUDA): device arena, kernels, cuBLAS,      23_cuda.h
                graphs
                @@CUDA.arena @@CUDA.params @@CUDA.reductions @@CUDA.gemm @@CUDA.elementwise
                @@CUDA.layernorm @@CUDA.attention @@CUDA.losses @@CUDA.optim @@CUDA.clip
                @@CUDA.graphs

   ==== @@DOCS ====================================================================================

   ltrain.h gives C programs what PyTorch gives Python for training small language models:
   tensors, an autograd tape, a GPT-2 model, AdamW, learning-rate schedules, clipping, data
   loaders and safetensors checkpoints.  Every number is meant to equal what torch computes.

   A training loop reads like its PyTorch twin:

       lt_ctx *ctx = lt_ctx_create(1234);                      // seed
       lt_tensor *w = lt_param(ctx, "w", 2, (int64_t[]){1, 10});
       lt_optim *opt = lt_adamw_create(ctx, lt_ctx_params(ctx), lt_adamw_defaults());
       for (int step = 0; step < 100; step++) {
           lt_zero_grad(ctx);
           lt_tensor *loss = lt_mse_loss(ctx, lt_linear(ctx, x, w, NULL), y);
           lt_backward(ctx, loss);
           lt_optim_step(opt, lr);
           if (lt_failed(ctx)) { fprintf(stderr, "%s\n", lt_error(ctx)); return 1; }
       }

   Memory is owned in three places:
     - parameters (weights and their gradients) live in the context until it is destroyed;
       lt_params_pack() lays them out in one block so that "all gradients" is one flat span;
     - activations, their gradients and the tape come from the context's arena, which is reset
       automatically when the first op runs after lt_backward() (or by lt_reset());
       so a tensor returned by an op is valid until then (its gradient, as in torch, only if
       lt_retain_grad was called on it: backward reuses the others' memory as it goes);
     - optimizers own their moments.

   Errors: a user mistake (wrong shapes, a bad argument, a malformed file, out of memory) never
   aborts.  The first error sticks on the context with a message that names the op and the
   shapes; every later op returns NULL and does nothing, and lt_backward / lt_optim_step return
   the status.  Check lt_failed(ctx) once per step; lt_clear_error() lets you go on.

   Threads: OpenMP when compiled with -fopenmp; lt_set_threads(n) sets the count (the one
   global setting).  Two contexts in one process share nothing else.  OpenMP threads spin while
   they wait for each other: fastest on idle cores, but on cores that other programs also use the
   waiting threads steal the time the working ones need.  So, unless OMP_NUM_THREADS or
   lt_set_threads chose the count, lt_ctx_create runs on the cores other work leaves free (at least
   one; @@CORE.threads says how it counts them); LTRAIN_BUSY=ignore keeps every core.  To keep every
   core and wait without spinning, start the program with OMP_WAIT_POLICY=PASSIVE (the OpenMP
   runtime reads it once, at load) (bench/busy.md).

   Memory pages: on Linux the big buffers (arena chunks, parameters, gradients, optimizer moments,
   compiled plans) ask for 2 MiB pages (@@CORE.arena, huge pages); LTRAIN_HUGEPAGES=0 turns that off.

   ==== @@OPTIONS =================================================================================

   #define before including (in the implementation file, or everywhere for LTRAIN_STATIC):
     LTRAIN_STATIC        make every function static (private to one translation unit)
     LTRAIN_DEF           storage class of public functions (default: extern)
     LTRAIN_MALLOC(sz) / LTRAIN_REALLOC(p,sz) / LTRAIN_FREE(p)
                          your allocator: define all three or none
     LTRAIN_ASSERT(x)     check the library's own invariants (default: assert from <assert.h>);
                          never used for user input, which gets an error status instead
     LTRAIN_CBLAS         matmuls through cblas_sgemm (link your CBLAS, e.g. -lopenblas)
     LTRAIN_NO_SIMD       portable C kernels only (no AVX2/AVX-512 paths picked at run time)
     LTRAIN_MPI           data-parallel training over MPI (build with mpicc)
     LTRAIN_CUDA          the CUDA backend: compile the implementation with nvcc as CUDA
                          (nvcc -x cu -DLTRAIN_IMPLEMENTATION -DLTRAIN_CUDA ... -lcublas), then
                          lt_set_device(ctx, LT_CUDA) moves a context's work to the GPU (@@API, devices)
*/
#ifndef LTRAIN_H
#define LTRAIN_H


/* GENERATED FILE: do not edit.  src/amalgamate.sh writes it from the parts src/00_docs.h ...
   src/99_end.h (one per section of the contents below); edit those, then run `make header`.
   `make test` fails while this file and its parts disagree. */
/* ---- src/00_docs.h ---- */
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
                @@GEMM.kernels @@GEMM.avx512 @@GEMM.bf16dp @@GEMM.avx2 @@GEMM.neon
                @@GEMM.pack @@GEMM.f16 @@GEMM.pack_bf16 @@GEMM.block
     @@OPS      (continued) matmul, linear, conv1d                                  07_ops_matmul.h
                @@OPS.matmul @@OPS.linear @@OPS.matmul16
     @@TAPE     autograd tape: backward, zero-grad, gradcheck                       08_tape.h
                @@TAPE.recompute @@TAPE.backward @@TAPE.zero_grad @@TAPE.gradcheck
     @@COMPILE  capture a step once, plan its memory by buffer lifetimes, replay    09_compile.h
                @@COMPILE.capture @@COMPILE.fusion @@COMPILE.plan @@COMPILE.replay
                @@COMPILE.compile @@COMPILE.cache
     @@NN       nn blocks: GPT-2 (embeddings, attention, MLP, layernorm, tied       10_nn.h
                head, sampling)
                @@NN.gpt @@NN.forward @@NN.generate
     @@LOSS     cross-entropy (ignore index, token-weighted), MSE, the GPT's loss   11_loss.h
                @@LOSS.cross_entropy @@LOSS.linear_ce16 @@LOSS.mse @@LOSS.gpt
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
                @@TOK.utf8 @@TOK.pretok @@TOK.json @@TOK.load @@TOK.encode @@TOK.decode
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

/* ---- src/01_api.h ---- */
/* ==== @@API  public declarations ============================================================= */
/* Holds: the public declarations (types, status codes, every lt_ function with its one-line doc
   and who owns what it returns), in the order of the implementation parts below.
   Calls: nothing (declarations only). */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifndef LTRAIN_DEF
#ifdef LTRAIN_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define LTRAIN_DEF static __attribute__((unused)) /* a program uses only some of them */
#else
#define LTRAIN_DEF static
#endif
#else
#define LTRAIN_DEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define LTRAIN_VERSION "0.1.0"
#define LT_MAX_DIMS 4

/* Status codes and their one-word meaning come from one list. */
#define LT_STATUS_LIST(X)                                   \
    X(LT_OK, "ok")                                          \
    X(LT_ERR_SHAPE, "shape mismatch")                       \
    X(LT_ERR_ARG, "bad argument")                           \
    X(LT_ERR_NOMEM, "out of memory")                        \
    X(LT_ERR_IO, "i/o error")                               \
    X(LT_ERR_FORMAT, "malformed file")                      \
    X(LT_ERR_NONFINITE, "non-finite value")                 \
    X(LT_ERR_STATE, "invalid state")

typedef enum {
#define LT__ENUM(name, text) name,
    LT_STATUS_LIST(LT__ENUM)
#undef LT__ENUM
    LT_STATUS_COUNT
} lt_status;

typedef enum { LT_F32 = 0, LT_BF16, LT_F16 } lt_dtype;   /* tensors store f32; 16-bit types name precisions (lt_set_precision) */
typedef enum { LT_CPU = 0, LT_CUDA, LT_NDEVICES } lt_device; /* where a context's ops run (lt_set_device) */

typedef struct lt_ctx lt_ctx;       /* everything lives in a context: params, arena, tape, RNG, error */
typedef struct lt__node lt__node;   /* a tape record (private) */

/* A tensor: up to 4 dims, contiguous, row-major.  `data` and `grad` hold `n` floats.
   Parameters own their memory (in the context's parameter block); other tensors point into
   the arena and are valid until the next arena reset. */
typedef struct lt_tensor {
    float *data;                 /* n values */
    float *grad;                 /* n gradient values, or NULL (no gradient needed / not yet made) */
    int64_t shape[LT_MAX_DIMS];  /* shape[0..ndim-1]; unused dims are 1 */
    int64_t n;                   /* number of elements */
    int ndim;
    lt_dtype dtype;
    lt_device device;
    int requires_grad;           /* gradient flows here: a parameter, or computed from one */
    int is_param;                /* owned by the parameter block */
    int decay;                   /* parameters: weight decay applies (default: ndim >= 2) */
    const char *name;            /* parameters: e.g. "h.0.attn.c_attn.weight" (owned by the context) */
    lt__node *node;              /* the tape record that produced it, or NULL */
    struct lt_tensor *base;      /* views (reshape): the tensor whose memory this shares */
    int retain_grad;             /* op outputs: keep grad after lt_backward (lt_retain_grad) */
    int grad_unset;              /* (private) grad's memory holds no values yet: see lt__grad_w */
    lt_ctx *ctx;                 /* (private) the context that made it: ops refuse another's tensors */
    unsigned gen;                /* (private) arena tensors: the arena's generation when made; lt_reset
                                    starts a new one, and ops refuse a tensor of an older one */
} lt_tensor;

typedef struct { lt_tensor **p; int n; } lt_paramset;   /* a list of parameters (not owned) */

/* ---- context, errors, threads, RNG -------------------------------------------------------- */
LTRAIN_DEF lt_ctx *lt_ctx_create(uint64_t seed);       /* NULL only if out of memory */
LTRAIN_DEF void lt_ctx_destroy(lt_ctx *ctx);
LTRAIN_DEF int lt_failed(const lt_ctx *ctx);           /* non-zero once an error sticks */
LTRAIN_DEF lt_status lt_status_of(const lt_ctx *ctx);
LTRAIN_DEF const char *lt_error(const lt_ctx *ctx);    /* the message ("" when none) */
LTRAIN_DEF const char *lt_status_name(lt_status s);
LTRAIN_DEF void lt_clear_error(lt_ctx *ctx);
LTRAIN_DEF lt_status lt_set_error(lt_ctx *ctx, lt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;                                                  /* first error sticks; returns ctx's status */
LTRAIN_DEF void lt_set_threads(int n);                 /* OpenMP threads (global setting) */
LTRAIN_DEF int lt_get_threads(void);
LTRAIN_DEF void lt_set_training(lt_ctx *ctx, int on);  /* dropout on/off (default on) */
LTRAIN_DEF void lt_set_grad_enabled(lt_ctx *ctx, int on); /* off: ops record nothing (inference) */
/* Name the part of the model the next ops belong to (e.g. "h.3.mlp"); messages and compile
   reports show it.  The string must outlive the ops; returns the previous scope. */
LTRAIN_DEF const char *lt_scope(lt_ctx *ctx, const char *scope);
LTRAIN_DEF void lt_reset(lt_ctx *ctx);                 /* drop the tape and every arena tensor */
LTRAIN_DEF size_t lt_arena_used(const lt_ctx *ctx);    /* bytes of activations in use */
LTRAIN_DEF size_t lt_arena_peak(const lt_ctx *ctx);

/* ---- devices: the CPU, or an NVIDIA GPU (LTRAIN_CUDA, @@CUDA) --------------------------------- */
/* lt_set_device(ctx, LT_CUDA) runs the context's ops, backward, optimizer (AdamW, SGD), clipping
   and loss scaling on the GPU (LTRAIN_CUDA_DEVICE=n picks which); the training loop stays as it is.
   Call it after lt_ctx_create, before or after making parameters, between steps (LT_ERR_STATE while
   a tape is being recorded).  LT_ERR_ARG in a build without LTRAIN_CUDA, LT_ERR_STATE when no GPU
   is there.  On LT_CUDA:
     - a tensor an op returns lives on the device (t->device == LT_CUDA, t->data a device address):
       read it with lt_item or lt_tensor_read, never through t->data;
     - inputs given as host arrays (ids, targets, lengths, lt_tensor_from's data) are copied in;
     - parameters keep host copies (t->data, t->grad) next to the device's: lt_sync_params makes the
       host copies current, lt_params_changed says you wrote them (the device takes them before its
       next op).  Checkpoint and weight loading/saving do both for you;
     - Lion, AdEMAMix, Muon and SOAP run on the host copies (correct, but every step crosses the
       bus); lt_gradcheck, dropout and lt_dist_* are CPU-only and say so;
     - lt_compile records the step as a CUDA graph; lt_set_precision(LT_BF16/LT_F16) uses 16-bit
       tensor-core GEMMs with float32 accumulation.
   Back to LT_CPU copies the parameters home and frees the device memory.  Arena tensors made
   before a device change are gone (the arena is reset). */
LTRAIN_DEF lt_status lt_set_device(lt_ctx *ctx, lt_device dev);
LTRAIN_DEF lt_device lt_get_device(const lt_ctx *ctx);
LTRAIN_DEF const char *lt_device_name(lt_device d);                /* "cpu", "cuda" */
LTRAIN_DEF int lt_device_parse(const char *name, lt_device *out);  /* "cpu", "cuda"/"gpu"; 1 on success */
LTRAIN_DEF int lt_cuda_available(void);        /* built with LTRAIN_CUDA and a GPU is present */
LTRAIN_DEF const char *lt_device_describe(lt_ctx *ctx);   /* e.g. "NVIDIA H200 (sm_90, 140 GiB, 132 SMs)", "cpu" */
/* n floats of t's values (grad = 0) or gradient (grad = 1) into out, wherever they live. */
LTRAIN_DEF lt_status lt_tensor_read(lt_ctx *ctx, const lt_tensor *t, int grad, float *out);
LTRAIN_DEF lt_status lt_sync_params(lt_ctx *ctx);      /* parameters' host copies = the device's */
LTRAIN_DEF void lt_params_changed(lt_ctx *ctx);        /* host copies were written: upload them */
/* float32 matmuls on tensor cores in TF32 (10-bit mantissa products, float32 sums), as torch's
   allow_tf32; off by default (then fp32 products are exact float32, as on the CPU). */
LTRAIN_DEF void lt_set_tf32(lt_ctx *ctx, int on);
LTRAIN_DEF lt_status lt_device_synchronize(lt_ctx *ctx);  /* wait for queued device work (timing); its errors */
LTRAIN_DEF size_t lt_device_arena_bytes(const lt_ctx *ctx); /* device memory the arena holds (0 on LT_CPU) */

/* The context's RNG (xoshiro256**, seeded by splitmix64).  State is 4 words, for checkpoints. */
typedef struct { uint64_t s[4]; } lt_rng;
LTRAIN_DEF void lt_rng_seed(lt_rng *r, uint64_t seed);
LTRAIN_DEF uint64_t lt_rng_u64(lt_rng *r);
LTRAIN_DEF double lt_rng_uniform(lt_rng *r);           /* [0,1) */
LTRAIN_DEF double lt_rng_normal(lt_rng *r);            /* N(0,1), Box-Muller */
LTRAIN_DEF lt_rng *lt_ctx_rng(lt_ctx *ctx);

/* Overflow-checked size arithmetic: return 0 on overflow (and leave *out untouched). */
LTRAIN_DEF int lt_mul_size(size_t a, size_t b, size_t *out);
LTRAIN_DEF int lt_add_size(size_t a, size_t b, size_t *out);

/* ---- tensors ------------------------------------------------------------------------------ */
/* Arena tensors (no gradient): valid until the next reset.  Shapes are given as (ndim, dims). */
LTRAIN_DEF lt_tensor *lt_tensor_new(lt_ctx *ctx, int ndim, const int64_t *shape);  /* zeros */
LTRAIN_DEF lt_tensor *lt_tensor_from(lt_ctx *ctx, const float *data, int ndim, const int64_t *shape);
/* A persistent parameter, zero-initialised, with a gradient; the context owns it. */
LTRAIN_DEF lt_tensor *lt_param(lt_ctx *ctx, const char *name, int ndim, const int64_t *shape);
LTRAIN_DEF lt_paramset lt_ctx_params(lt_ctx *ctx);     /* all parameters, in creation order */
LTRAIN_DEF lt_tensor *lt_find_param(lt_ctx *ctx, const char *name);
LTRAIN_DEF lt_status lt_params_pack(lt_ctx *ctx);      /* one block: all data, then all grads */
LTRAIN_DEF size_t lt_params_count(lt_ctx *ctx);        /* total number of parameter floats */
LTRAIN_DEF float *lt_params_grad_span(lt_ctx *ctx, size_t *n); /* the flat gradient (after pack) */
LTRAIN_DEF void lt_init_normal(lt_ctx *ctx, lt_tensor *t, double mean, double std);
LTRAIN_DEF void lt_init_uniform(lt_ctx *ctx, lt_tensor *t, double lo, double hi);
LTRAIN_DEF void lt_fill(lt_tensor *t, float v);
LTRAIN_DEF float lt_item(const lt_tensor *t);          /* t->data[0]; NaN for NULL */
LTRAIN_DEF const char *lt_shape_str(const lt_tensor *t, char *buf, size_t cap); /* "[4,64]" */
/* A view with another shape over the same memory (-1 infers one dim); gradients flow through. */
LTRAIN_DEF lt_tensor *lt_reshape(lt_ctx *ctx, lt_tensor *t, int ndim, const int64_t *shape);

/* ---- ops (record on the tape when a gradient is needed) ----------------------------------- */
/* Elementwise with broadcasting over leading dims: b's shape equals the trailing dims of a's
   (b may also equal a's shape), e.g. a [B,T,C] + b [C] or a [B,T,C] + b [T,C]. */
LTRAIN_DEF lt_tensor *lt_add(lt_ctx *ctx, lt_tensor *a, lt_tensor *b);
LTRAIN_DEF lt_tensor *lt_sub(lt_ctx *ctx, lt_tensor *a, lt_tensor *b);
LTRAIN_DEF lt_tensor *lt_mul(lt_ctx *ctx, lt_tensor *a, lt_tensor *b);
LTRAIN_DEF lt_tensor *lt_scale(lt_ctx *ctx, lt_tensor *a, float s);
LTRAIN_DEF lt_tensor *lt_sum(lt_ctx *ctx, lt_tensor *a);    /* -> [1] */
LTRAIN_DEF lt_tensor *lt_mean(lt_ctx *ctx, lt_tensor *a);   /* -> [1] */
/* Matrix product over the last two dims; leading (batch) dims of a and b must match, or b is
   2-D and shared by every batch.  flags: LT_TRANS_A / LT_TRANS_B use the operand transposed. */
#define LT_TRANS_A 1
#define LT_TRANS_B 2
LTRAIN_DEF lt_tensor *lt_matmul(lt_ctx *ctx, lt_tensor *a, lt_tensor *b, int flags);
LTRAIN_DEF lt_tensor *lt_linear(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b); /* x·Wᵀ+b, W [out,in] (torch.nn.Linear) */
LTRAIN_DEF lt_tensor *lt_conv1d(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b); /* x·W+b, W [in,out] (HF Conv1D) */
LTRAIN_DEF lt_tensor *lt_gelu(lt_ctx *ctx, lt_tensor *a);      /* tanh approximation (GPT-2) */
LTRAIN_DEF lt_tensor *lt_gelu_erf(lt_ctx *ctx, lt_tensor *a);  /* exact, with erf */
LTRAIN_DEF lt_tensor *lt_relu(lt_ctx *ctx, lt_tensor *a);
LTRAIN_DEF lt_tensor *lt_tanh(lt_ctx *ctx, lt_tensor *a);
LTRAIN_DEF lt_tensor *lt_sigmoid(lt_ctx *ctx, lt_tensor *a);
LTRAIN_DEF lt_tensor *lt_softmax(lt_ctx *ctx, lt_tensor *a);      /* over the last dim */
LTRAIN_DEF lt_tensor *lt_log_softmax(lt_ctx *ctx, lt_tensor *a);  /* over the last dim */
LTRAIN_DEF lt_tensor *lt_layernorm(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b, float eps);
/* Rows of w [V,C] picked by ids (n0*n1 of them, each in [0,V)) -> [n0,n1,C] (n0 = 1 -> [n1,C]). */
LTRAIN_DEF lt_tensor *lt_embedding(lt_ctx *ctx, lt_tensor *w, const int32_t *ids, int64_t n0, int64_t n1);
LTRAIN_DEF lt_tensor *lt_dropout(lt_ctx *ctx, lt_tensor *a, float p);  /* identity when not training */
LTRAIN_DEF lt_tensor *lt_transpose(lt_ctx *ctx, lt_tensor *a, int d0, int d1); /* a copy */
/* Causal multi-head self-attention from fused qkv [B,T,3C] (q | k | v, head h at h*D..h*D+D)
   -> [B,T,C], scale 1/sqrt(D).  lengths (NULL or B of them): keys at t >= lengths[b] are masked
   (padding), as are their query rows' outputs (set to zero).  Flash attention: backward keeps
   B*H*T floats, not the B*H*T*T probabilities; a head has at most 8192 channels (C/n_head).  In
   16-bit precision (lt_set_precision) qkv is rounded to 16 bits, y too, and backward keeps
   16-bit copies of both instead of the float32 tensors (eager with qkv from a 16-bit product:
   it reads them in place). */
LTRAIN_DEF lt_tensor *lt_attention(lt_ctx *ctx, lt_tensor *qkv, int n_head, const int32_t *lengths);
/* Llama-style blocks (RMSNorm, rotary embeddings, SwiGLU, grouped-query attention).
   lt_rmsnorm: over the last dim, y = x / sqrt(mean(x²) + eps) · w, w [C] or NULL (torch.nn.RMSNorm,
   HF's LlamaRMSNorm).  QK-norm (Qwen3, OLMo-2) is lt_rmsnorm on q reshaped to [B,T,H,D], w [D]. */
LTRAIN_DEF lt_tensor *lt_rmsnorm(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, float eps);
/* Rotary position embedding of x [B,T,H*D] (head h at h*D..), as HF applies it (rotate_half: pairs
   (i, i+D/2), inv_freq_i = theta^(-2i/D), angle (pos0+t)·inv_freq_i in float32 as HF computes it);
   pos0 >= 0 is the position of t = 0 (sampling with a cache).  D must be even. */
LTRAIN_DEF lt_tensor *lt_rope(lt_ctx *ctx, lt_tensor *x, int n_head, float theta, int pos0);
LTRAIN_DEF lt_tensor *lt_silu(lt_ctx *ctx, lt_tensor *a);   /* x·sigmoid(x) (F.silu) */
/* silu(gate) ⊙ up, fused: one pass, backward recomputes silu (nothing stored); same shapes */
LTRAIN_DEF lt_tensor *lt_swiglu(lt_ctx *ctx, lt_tensor *gate, lt_tensor *up);
/* Causal attention with n_kv_head <= n_head key/value heads: q [B,T,H*D], k and v [B,T,Hkv*D],
   H % Hkv == 0, query head h reads kv head h/(H/Hkv) (HF's repeat_kv, without copying K/V);
   scale 1/sqrt(D), lengths as lt_attention.  Hkv = 1 is MQA, Hkv = H plain multi-head. */
LTRAIN_DEF lt_tensor *lt_attention_gqa(lt_ctx *ctx, lt_tensor *q, lt_tensor *k, lt_tensor *v, int n_head,
                                       int n_kv_head, const int32_t *lengths);

/* ---- losses (return a [1] tensor) --------------------------------------------------------- */
#define LT_IGNORE_INDEX (-1)
/* Cross-entropy of logits [..., V] against targets (one per row, LT_IGNORE_INDEX skips a row):
   the mean over counted rows, as torch.nn.functional.cross_entropy.  When every target is
   ignored the loss is 0 and gradients are 0 (torch gives NaN; we never produce a NaN here). */
LTRAIN_DEF lt_tensor *lt_cross_entropy(lt_ctx *ctx, lt_tensor *logits, const int32_t *targets);
/* Same, divided by `denom` instead of the count (token-weighted accumulation: denom = real
   target tokens over all micro-batches of the step). */
LTRAIN_DEF lt_tensor *lt_cross_entropy_sum(lt_ctx *ctx, lt_tensor *logits, const int32_t *targets, double denom);
LTRAIN_DEF lt_tensor *lt_mse_loss(lt_ctx *ctx, lt_tensor *pred, lt_tensor *target); /* same n */
LTRAIN_DEF int64_t lt_count_targets(const int32_t *targets, int64_t n); /* non-ignored */

/* ---- tape --------------------------------------------------------------------------------- */
/* Backward from a scalar: d(loss)/d(loss) = 1, walk the tape in reverse, += into every grad.
   Returns the context's status.  As in torch, parameters and tensors made by lt_tensor_new /
   lt_tensor_from (leaves) keep their gradients; an op's output loses its own (grad = NULL, the
   memory reused) once backward has passed it, unless lt_retain_grad was called on it. */
LTRAIN_DEF lt_status lt_backward(lt_ctx *ctx, lt_tensor *loss);
LTRAIN_DEF void lt_retain_grad(lt_tensor *t);   /* keep this op output's grad (torch's retain_grad) */
/* The gradients of seed·loss (1/K for K micro-batches, a loss scale for fp16), same as
   lt_backward(ctx, lt_scale(ctx, loss, seed)) without the extra op. */
LTRAIN_DEF lt_status lt_backward_scaled(lt_ctx *ctx, lt_tensor *loss, float seed);
LTRAIN_DEF void lt_zero_grad(lt_ctx *ctx);            /* every parameter's gradient = 0 */
LTRAIN_DEF int lt_tape_length(const lt_ctx *ctx);
/* Time every kernel by op (eager mode), and print the table: where a step's time goes. */
LTRAIN_DEF void lt_set_profiling(lt_ctx *ctx, int on);   /* also clears the counters */
LTRAIN_DEF void lt_profile_print(const lt_ctx *ctx, FILE *f);

/* Activation checkpointing (torch.utils.checkpoint by hand): the values made by the ops between
   lt_recompute_begin and lt_recompute_end, all but `out`, are dropped when the segment ends and
   made again in backward by running its forward kernels once more; dropout draws the same masks,
   so gradients are the bits of the step without it.  Eager on the CPU the segment's values live
   in a scratch arena that holds one segment at a time (lt_arena_peak counts it); a compiled plan
   gives the values made again short lifetimes (lt_plan_bytes, lt_plan_saved_bytes shrink).
   Segments do not nest; an op reading a dropped value, an op that writes over a value made
   before its segment, a segment left open at lt_backward / lt_compile: errors naming the op.
   Returns out (NULL on error).  On a device or without gradients a segment drops nothing. */
LTRAIN_DEF lt_status lt_recompute_begin(lt_ctx *ctx);
LTRAIN_DEF lt_tensor *lt_recompute_end(lt_ctx *ctx, lt_tensor *out);

/* Gradient check: fn builds an output from the inputs; compares analytic gradients of
   sum(out * R) (R fixed random) with central differences of step eps for every input element.
   Inputs must be parameters (they carry gradients).  Returns the worst relative error
   |a - n| / max(1, |a|, |n|)  (fp32 forward: expect ~1e-3 at eps 1e-2; see tests). */
typedef lt_tensor *(*lt_gradcheck_fn)(lt_ctx *ctx, lt_tensor **inputs, void *user);
LTRAIN_DEF double lt_gradcheck(lt_ctx *ctx, lt_gradcheck_fn fn, lt_tensor **inputs, int n_inputs,
                               void *user, double eps);

/* ---- compile: capture a step once, replay it ------------------------------------------------ */
/* The step function builds the loss from inputs it reads at fixed addresses (token ids and
   targets passed to lt_embedding / lt_cross_entropy, data given to lt_tensor_from): a replay
   reads them again from the same addresses, so refill those buffers between steps. */
typedef struct lt_plan lt_plan;
typedef lt_tensor *(*lt_step_fn)(lt_ctx *ctx, void *user);
/* Records fn once without running its kernels (shape errors are reported as in eager mode),
   plans forward and backward, then validates the plan by running it once (a non-finite output
   is reported with the op, its shapes and lt_scope's place).  Recording touches no activation
   memory, so compiling needs only the plan's block.  Parameter gradients are left as they were.  What cannot be planned falls back to eager execution (lt_plan_is_eager, and
   lt_plan_note says why); LTRAIN_COMPILE=0 in the environment forces that.  NULL on error. */
LTRAIN_DEF lt_plan *lt_compile(lt_ctx *ctx, lt_step_fn fn, void *user);
/* Forward + backward of the captured step on the current inputs; gradients += as lt_backward. */
LTRAIN_DEF lt_status lt_plan_run(lt_plan *p, float *loss);
LTRAIN_DEF lt_status lt_plan_run_scaled(lt_plan *p, float seed, float *loss); /* as lt_backward_scaled */
LTRAIN_DEF int lt_plan_is_eager(const lt_plan *p);
LTRAIN_DEF const char *lt_plan_note(const lt_plan *p);
LTRAIN_DEF size_t lt_plan_bytes(const lt_plan *p);        /* the planned block */
LTRAIN_DEF size_t lt_plan_naive_bytes(const lt_plan *p);  /* all buffers, unshared */
LTRAIN_DEF size_t lt_plan_saved_bytes(const lt_plan *p);  /* kept from forward for backward (+ids, fp32 logits) */
/* A memory budget for the plans lt_compile makes from now on: the planned block (lt_plan_bytes)
   at most this, reached by running ops again in backward (as lt_recompute_begin does by hand),
   chosen cheapest recomputation per byte first: pointwise ops and norms before products.
   "1.5G", "800M", "64K", "1000000" (bytes; K, M, G, T powers of 1024), "50%" (of the plan without
   recomputation), or "off" / NULL.  A string that does not parse: LT_ERR_ARG naming it; a budget
   below the least the step can be planned in: lt_compile fails naming that minimum. */
LTRAIN_DEF lt_status lt_set_memory_budget(lt_ctx *ctx, const char *budget);
LTRAIN_DEF size_t lt_plan_budget(const lt_plan *p);             /* the budget it was planned under (0: none) */
LTRAIN_DEF size_t lt_plan_recomputed_bytes(const lt_plan *p);   /* values made again in backward */
LTRAIN_DEF double lt_plan_recomputed_flops(const lt_plan *p);   /* ... the forward FLOPs that costs */
LTRAIN_DEF void lt_plan_destroy(lt_plan *p);
/* A few plans keyed by shape (bucketed batches, length schedules): get compiles on a miss and
   evicts the least recently used.  The cache owns its plans. */
typedef struct lt_plan_cache lt_plan_cache;
LTRAIN_DEF lt_plan_cache *lt_plan_cache_create(lt_ctx *ctx, int capacity);
LTRAIN_DEF lt_plan *lt_plan_cache_get(lt_plan_cache *c, int64_t key, lt_step_fn fn, void *user);
LTRAIN_DEF int lt_plan_cache_size(const lt_plan_cache *c);
LTRAIN_DEF void lt_plan_cache_destroy(lt_plan_cache *c);

/* Raw kernels, usable without the tape (C = alpha*op(A)*op(B) + beta*C, row-major). */
LTRAIN_DEF void lt_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                         const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                         float *C, int64_t ldc);
LTRAIN_DEF const char *lt_kernel_name(void);          /* which matmul kernel runs */
LTRAIN_DEF const char *lt_kernel_name_for(lt_dtype p); /* ... for products in precision p (lt_set_precision) */

/* ---- nn: GPT-2 ------------------------------------------------------------------------------ */
/* Pre-LayerNorm GPT-2 with Hugging Face's parameter names and layouts (Conv1D weights [in,out]):
   wte.weight [V,C], wpe.weight [ctx,C], h.{i}.ln_1.{weight,bias}, h.{i}.attn.c_attn.{weight [C,3C],
   bias}, h.{i}.attn.c_proj.{weight [C,C],bias}, h.{i}.ln_2.*, h.{i}.mlp.c_fc.{weight [C,4C],bias},
   h.{i}.mlp.c_proj.{weight [4C,C],bias}, ln_f.{weight,bias}; the LM head is tied to wte. */
/* A Llama-style model (arch LT_ARCH_LLAMA) has Hugging Face LlamaForCausalLM's names and layouts
   (nn.Linear weights [out,in]; D = C/H): model.embed_tokens.weight [V,C],
   model.layers.{i}.input_layernorm.weight [C], model.layers.{i}.self_attn.q_proj.weight [H*D,C],
   k_proj.weight and v_proj.weight [Hkv*D,C], o_proj.weight [C,H*D] (each with .bias [out] when
   biases are on), with qk_norm self_attn.q_norm.weight and k_norm.weight [D] (as Qwen3),
   model.layers.{i}.post_attention_layernorm.weight [C], model.layers.{i}.mlp.gate_proj.weight and
   up_proj.weight [hidden,C], down_proj.weight [C,hidden], model.norm.weight [C], and when untied
   lm_head.weight [V,C].  Block: x += o_proj(attn(rope(q), rope(k), v)) on h = rmsnorm(x), then
   x += down_proj(silu(gate_proj(h)) * up_proj(h)) on h = rmsnorm(x); logits = lm_head(rmsnorm(x)).
   A zeroed field below means GPT-2's behaviour, so a GPT-2 config needs only the first six. */
typedef enum { LT_ARCH_GPT2 = 0, LT_ARCH_LLAMA = 1 } lt_arch;
typedef struct {
    int vocab;      /* V */
    int ctx;        /* maximum sequence length (rows of wpe; Llama: max_position_embeddings) */
    int layers;     /* L */
    int heads;      /* H; channels % heads == 0 */
    int channels;   /* C */
    float dropout;  /* on embeddings, attention output and MLP output; 0 = off (default) */
    int arch;       /* LT_ARCH_GPT2 (0) or LT_ARCH_LLAMA */
    int kv_heads;   /* key/value heads (Llama; divides heads): 0 = heads; 1 = multi-query */
    int hidden;     /* MLP hidden size: 0 = 4C (gpt2), 8C/3 rounded up to a multiple of 32 (llama) */
    float rope_theta; /* Llama's RoPE base: 0 = 10000 */
    float norm_eps; /* LayerNorm / RMSNorm eps: 0 = 1e-5 */
    int qk_norm;    /* Llama: 1 = RMSNorm on q and k per head before RoPE (Qwen3, OLMo-2) */
    int no_bias;    /* 0: the arch's own (gpt2: biases, llama: none); 1: no biases; -1: biases on
                       every linear (llama: HF attention_bias and mlp_bias) */
    int untied;     /* 1 = a separate lm_head.weight (Llama; GPT-2's head is always wte) */
} lt_gpt_config;
typedef struct lt_gpt lt_gpt;
/* Configs without naming every field: GPT-2 (dropout 0), Llama (no biases, tied head, RoPE theta
   10000, eps 1e-5; kv_heads 0 = heads, hidden 0 = 8C/3 rounded up to a multiple of 32). */
LTRAIN_DEF lt_gpt_config lt_gpt2_config(int vocab, int ctx, int layers, int heads, int channels);
LTRAIN_DEF lt_gpt_config lt_llama_config(int vocab, int ctx, int layers, int heads, int kv_heads, int channels, int hidden);

/* Creates the parameters in ctx and initialises them as GPT-2 does, from the context's RNG:
   N(0, 0.02); attn.c_proj and mlp.c_proj weights N(0, 0.02/sqrt(2L)); biases 0; LayerNorm 1, 0.
   Llama as Hugging Face does: linears and embeddings N(0, 0.02), biases 0, RMSNorm weights 1.
   lt_gpt_cfg returns the config with the defaults filled in (kv_heads, hidden, rope_theta, ...). */
LTRAIN_DEF lt_gpt *lt_gpt_create(lt_ctx *ctx, const lt_gpt_config *cfg);
LTRAIN_DEF void lt_gpt_destroy(lt_gpt *gpt);                 /* the parameters stay in ctx */
LTRAIN_DEF const lt_gpt_config *lt_gpt_cfg(const lt_gpt *gpt);
LTRAIN_DEF lt_paramset lt_gpt_params(lt_gpt *gpt);
LTRAIN_DEF int64_t lt_gpt_num_params(const lt_gpt *gpt);
/* Activation checkpointing of the blocks (lt_recompute_begin): every = 0 off, 1 every block,
   N every N-th block (blocks 0, N, 2N, ...).  Returns the context's status (every < 0: an error). */
LTRAIN_DEF lt_status lt_gpt_set_recompute(lt_gpt *gpt, int every);
/* ids [B,T] -> logits [B,T,V].  lengths: NULL, or B real lengths (padding keys masked). */
LTRAIN_DEF lt_tensor *lt_gpt_forward(lt_gpt *gpt, const int32_t *ids, int B, int T, const int32_t *lengths);
/* Mean cross-entropy of the next-token prediction (targets [B,T], LT_IGNORE_INDEX skips). */
LTRAIN_DEF lt_tensor *lt_gpt_loss(lt_gpt *gpt, const int32_t *ids, const int32_t *targets, int B, int T);
/* Sample n new tokens after prompt (len n_prompt) into out (room for n_prompt + n):
   temperature > 0 (0 = greedy), top_k (0 = off), rng for the draws.  Returns tokens written. */
LTRAIN_DEF int lt_gpt_generate(lt_gpt *gpt, const int32_t *prompt, int n_prompt, int n, float temperature,
                               int top_k, lt_rng *rng, int32_t *out);

/* ---- optimizers ----------------------------------------------------------------------------- */
/* Which parameters get weight decay: LT_DECAY_MARKED uses each tensor's `decay` flag (set for
   parameters with 2 or more dims: matmul weights and embeddings, not biases or LayerNorm);
   LT_DECAY_ALL decays every parameter, as torch.optim.AdamW does with one param group. */
typedef enum { LT_DECAY_MARKED = 0, LT_DECAY_ALL, LT_DECAY_NONE } lt_decay_mode;
typedef struct {
    double lr, beta1, beta2, eps, weight_decay;
    lt_decay_mode decay_mode;
} lt_adamw_config;
typedef struct {
    double lr, momentum, dampening, weight_decay;
    int nesterov;
    lt_decay_mode decay_mode;
} lt_sgd_config;
typedef struct lt_optim lt_optim;

/* torch's numbers: lr 1e-3, (0.9, 0.999), 1e-8, 0.01, with LT_DECAY_MARKED (torch's one param
   group decays everything: set LT_DECAY_ALL to mirror that). */
LTRAIN_DEF lt_adamw_config lt_adamw_defaults(void);
LTRAIN_DEF lt_sgd_config lt_sgd_defaults(void);      /* lr 1e-3, no momentum, no decay */
/* The optimizer copies the list (not the tensors) and owns its state.  NULL (with the error on
   ctx) for an empty list, a setting torch rejects, or when ctx has already failed.  Updates
   equal torch.optim.AdamW / SGD (CPU, fp32) bit for bit; parameters whose grad is NULL are
   skipped, as torch skips .grad None (AdamW counts steps per parameter, as torch does). */
LTRAIN_DEF lt_optim *lt_adamw_create(lt_ctx *ctx, lt_paramset params, lt_adamw_config cfg);
LTRAIN_DEF lt_optim *lt_sgd_create(lt_ctx *ctx, lt_paramset params, lt_sgd_config cfg);
/* One update with this lr (the scheduled value; cfg.lr is used when lr < 0).  Does nothing and
   returns the status when ctx has failed. */
LTRAIN_DEF lt_status lt_optim_step(lt_optim *opt, double lr);
LTRAIN_DEF void lt_optim_destroy(lt_optim *opt);
LTRAIN_DEF int64_t lt_optim_steps(const lt_optim *opt);         /* updates done so far */
LTRAIN_DEF void lt_optim_set_steps(lt_optim *opt, int64_t t);   /* for resume: every parameter has
                                                    made t updates (SGD buffers exist when t > 0) */
LTRAIN_DEF const char *lt_optim_name(const lt_optim *opt);      /* "adamw", "sgd" */
/* State buffers per parameter (AdamW: 0 = m, 1 = v; SGD with momentum: 0 = buffer), for
   checkpoints.  Returns NULL past the end; each buffer has params.p[i]->n floats. */
LTRAIN_DEF int lt_optim_num_states(const lt_optim *opt);
LTRAIN_DEF const char *lt_optim_state_name(const lt_optim *opt, int which);  /* "exp_avg", ... */
LTRAIN_DEF float *lt_optim_state(lt_optim *opt, int param_index, int which);
LTRAIN_DEF lt_paramset lt_optim_params(const lt_optim *opt);

/* ---- schedules ------------------------------------------------------------------------------ */
/* Warm-up then decay, as one formula.  lt_schedule_lr(s, k) is the lr of optimizer step k
   (0-based): for k < warmup, lr*(f + (1-f)*k/warmup) with f = warmup_start (torch LinearLR);
   then with t = k - warmup, T = total - warmup, the decay d(t) scaled into [min_lr, lr]:
   lr_t = min_lr + (lr - min_lr)*d(t):  cosine d = ½(1+cos(πt/T)),  linear d = (T-t)/T,
   sqrt d = sqrt((T-t)/T),  constant d = 1.  Past total: min_lr (constant: lr). */
typedef enum { LT_SCHED_COSINE = 0, LT_SCHED_LINEAR, LT_SCHED_SQRT, LT_SCHED_CONSTANT } lt_decay;
typedef struct {
    double lr, min_lr;
    int64_t warmup, total;
    double warmup_start;     /* start factor f of the warm-up, e.g. 0.1 (0 = from 0) */
    lt_decay decay;
} lt_schedule;
LTRAIN_DEF double lt_schedule_lr(const lt_schedule *s, int64_t step);
LTRAIN_DEF const char *lt_decay_name(lt_decay d);
LTRAIN_DEF int lt_decay_parse(const char *name, lt_decay *out);   /* "cosine" ... ; 1 on success */

/* torch.optim.lr_scheduler, line for line: construct, read lt_lrs_get(), call lt_lrs_step()
   after each optimizer step.  Chained formulas are the ones torch uses, so values agree to
   rounding (tests/test_optim.c checks 1e-12 relative in double).  NULL unless start_factor is in
   (0, 1] (torch 1.13 takes 0, then divides by zero), end_factor in [0, 1], total_iters >= 0,
   t_max >= 1. */
typedef struct lt_lrs lt_lrs;
LTRAIN_DEF lt_lrs *lt_linear_lr(double base_lr, double start_factor, double end_factor, int64_t total_iters);
LTRAIN_DEF lt_lrs *lt_cosine_annealing_lr(double base_lr, int64_t t_max, double eta_min);
/* Takes ownership of the n schedulers (also when it fails and returns NULL: NULL or nested
   schedulers, decreasing milestones); milestones has n-1 entries.  The schedulers should share
   one base_lr, as torch's share one optimizer. */
LTRAIN_DEF lt_lrs *lt_sequential_lr(lt_lrs **scheds, int n, const int64_t *milestones);
LTRAIN_DEF double lt_lrs_get(const lt_lrs *s);         /* get_last_lr()[0] */
LTRAIN_DEF void lt_lrs_step(lt_lrs *s);
LTRAIN_DEF void lt_lrs_destroy(lt_lrs *s);

/* ---- clipping ------------------------------------------------------------------------------- */
/* As torch.nn.utils.clip_grad_norm_: returns the global L2 norm before clipping; scales every
   gradient by min(1, max_norm/(norm + 1e-6)).  A non-finite norm leaves the gradients as they
   are, sets LT_ERR_NONFINITE on ctx (naming the first such parameter) and is returned.  The
   clipping functions do nothing (norm: NaN) when ctx has failed. */
LTRAIN_DEF double lt_clip_grad_norm(lt_ctx *ctx, lt_paramset params, double max_norm);
LTRAIN_DEF double lt_grad_norm(lt_ctx *ctx, lt_paramset params);  /* no clipping, no error set */
LTRAIN_DEF void lt_clip_grad_value(lt_ctx *ctx, lt_paramset params, double clip); /* clamp to [-c,c] */

/* ---- more optimizers: Lion, AdEMAMix, Muon, SOAP ---------------------------------------------- */
/* Each one is an lt_optim: lt_optim_step / _destroy / _steps / _set_steps / _name work as for
   AdamW.  lr < 0 in lt_optim_step means the config's lr; a schedule passes its value each step. */

/* Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"), as the authors' torch code:
     θ ← θ·(1 − lr·λ);   θ ← θ − lr·sign(β1·m + (1−β1)·g);   m ← β2·m + (1−β2)·g
   One state buffer ("exp_avg").  Its steps are ±lr on every element: use lr 3-10x below AdamW's
   and λ 3-10x above (the paper's advice). */
typedef struct {
    double lr, beta1, beta2, weight_decay;
    lt_decay_mode decay_mode;
} lt_lion_config;
LTRAIN_DEF lt_lion_config lt_lion_defaults(void);   /* lr 1e-4, (0.9, 0.99), λ 0, LT_DECAY_MARKED */
LTRAIN_DEF lt_optim *lt_lion_create(lt_ctx *ctx, lt_paramset params, lt_lion_config cfg);

/* AdEMAMix (Pagliardini, Ablin, Grangier 2024, "The AdEMAMix Optimizer: Better, Faster, Older"),
   as Apple's reference code (t counted from 1 per parameter):
     m1 ← β1·m1 + (1−β1)·g      m2 ← β3·m2 + (1−β3)·g      v ← β2·v + (1−β2)·g²
     θ ← θ − lr·( (m1/(1−β1ᵗ) + α·m2) / (sqrt(v)/sqrt(1−β2ᵗ) + ε) + λ·θ )
   m2, the slow EMA, is not bias-corrected.  Optional warm-ups (the paper's schedulers, 0 = off):
   α_t = α·t/T_α for t < T_α; β3 moves from β1 to β3 linearly in half-life
   (f(β) = ln 0.5/ln(β + 1e-8) − 1, β3_t = 0.5^(1/(f_t + 1)) with f_t linear in t/T_β3).
   The paper sets T_α = T_β3 = the run's length, and needs them with large β3 (0.9999).
   Default α 5: the reference code's 2 is a conservative library default, the paper's LLM runs
   use 5-8 (8 for its longest); 5 is the lower end of that range and the safer one for the
   short runs this library makes.  States: "exp_avg_fast", "exp_avg_slow", "exp_avg_sq". */
typedef struct {
    double lr, beta1, beta2, beta3, alpha, eps, weight_decay;
    int64_t alpha_warmup, beta3_warmup;   /* T_α, T_β3 in steps; 0 = off */
    lt_decay_mode decay_mode;
} lt_ademamix_config;
/* lr 1e-3, (0.9, 0.999, 0.9999), α 5, eps 1e-8, λ 0, no warm-ups, LT_DECAY_MARKED */
LTRAIN_DEF lt_ademamix_config lt_ademamix_defaults(void);
LTRAIN_DEF lt_optim *lt_ademamix_create(lt_ctx *ctx, lt_paramset params, lt_ademamix_config cfg);
/* The scheduled α and β3 at step t (1-based), as the reference's linear_warmup_scheduler and
   linear_hl_warmup_scheduler. */
LTRAIN_DEF double lt_ademamix_alpha(const lt_ademamix_config *cfg, int64_t t);
LTRAIN_DEF double lt_ademamix_beta3(const lt_ademamix_config *cfg, int64_t t);

/* Muon (Jordan et al. 2024, "Muon: An optimizer for hidden layers in neural networks"), as the
   reference (KellerJordan/Muon, muon_update), for the hidden 2-D weight matrices:
     b ← β·b + (1−β)·g;   u ← (nesterov ? (1−β)·g + β·b : b)
     X ← u/(‖u‖_F + ns_eps), transposed when rows > cols; ns_steps times:
         A = X·Xᵀ;  X ← a·X + (b·A + c·A·A)·X      (a, b, c) = (3.4445, −4.7750, 2.0315)
     θ ← θ·(1 − lr·λ) − lr·sqrt(max(1, rows/cols))·X
   rows and cols are the tensor's own dims (shape[0], shape[1]): for the GPT's Conv1D weights
   [in,out] that scales mlp.c_proj [4C,C] by 2, exactly what the reference does on a Hugging Face
   GPT-2.  The reference runs Newton-Schulz in bfloat16; this one in float32.  More dims (with a
   cfg.select that picks them), as the reference: 4-D is one matrix [shape[0], rest]; 3-D and 5-D+
   a batch of matrices [shape[-2], shape[-1]], each normalised on its own; the scale's rows/cols
   are always shape[-2]/shape[-1].  A parameter whose grad is NULL is stepped with a zero gradient
   (the momentum decays, the weight decay applies), as the reference does (other optimizers skip it).
   Every other parameter (embeddings, biases, LayerNorm) goes to an AdamW inside the optimizer
   (cfg.adamw, bit-identical to lt_adamw_create's), whose lr follows the schedule in proportion:
   lt_optim_step(opt, lr) uses lr for Muon and cfg.adamw.lr·lr/cfg.lr for AdamW.
   Which parameter is which: cfg.select (NULL: lt_muon_is_hidden).  States: "momentum_buffer"
   (Muon parameters), "exp_avg", "exp_avg_sq" (AdamW ones): lt_optim_state returns NULL for a
   parameter that does not hold that state. */
typedef int (*lt_param_filter)(const lt_tensor *t, void *user);
typedef struct {
    double lr, momentum, weight_decay;
    int nesterov, ns_steps;
    double ns_eps;
    lt_adamw_config adamw;        /* for the parameters select() rejects */
    lt_param_filter select;       /* 1: Muon; NULL: lt_muon_is_hidden */
    void *select_user;
} lt_muon_config;
/* lr 0.02, momentum 0.95, λ 0, nesterov, 5 steps, ns_eps 1e-7; adamw: lr 3e-4, (0.9, 0.95),
   eps 1e-10, λ 0 (MuonWithAuxAdam's numbers) */
LTRAIN_DEF lt_muon_config lt_muon_defaults(void);
LTRAIN_DEF lt_optim *lt_muon_create(lt_ctx *ctx, lt_paramset params, lt_muon_config cfg);
/* The default split: a 2-D parameter that is not an embedding or output head (name without
   "wte", "wpe", "embed", "lm_head"): in lt_gpt, h.*.attn.c_attn/c_proj.weight and
   h.*.mlp.c_fc/c_proj.weight; wte, wpe, biases and LayerNorm go to AdamW.  user is unused. */
LTRAIN_DEF int lt_muon_is_hidden(const lt_tensor *t, void *user);
/* 1 when parameter i of opt is updated by Muon (0: AdamW, or opt is not a Muon optimizer). */
LTRAIN_DEF int lt_muon_uses_muon(const lt_optim *opt, int param_index);

/* SOAP (Vyas et al. 2024, "SOAP: Improving and Stabilizing Shampoo using Adam"), as the
   reference (nikhilvyas/SOAP): for a matrix parameter G [m,n] it keeps L = EMA(G·Gᵀ) and
   R = EMA(Gᵀ·G) (shampoo_beta) and runs Adam on G' = Q_Lᵀ·G·Q_R, the gradient in their
   eigenbases, projecting the Adam direction back: θ ← θ − lr·sqrt(1−β2ˢ)/(1−β1ˢ)·Q_L·(m/(sqrt(v)+ε))·Q_Rᵀ,
   then θ ← θ − lr·λ·θ (decayed parameters).  The first step of each parameter only fills L, R and
   computes Q_L, Q_R (eigendecomposition: Householder tridiagonalisation + implicit QL, in double
   here; torch.linalg.eigh there) and leaves θ alone, so s counts from the second step.  Every
   precondition_frequency steps the bases are refreshed by one power iteration (float32) and a
   QR (Householder, double), after
   sorting by the estimated eigenvalues diag(Qᵀ·L·Q), which also permutes v; m is carried
   into the new basis.  A side longer than max_precond_dim gets no factor (identity there);
   1-D parameters get none: plain Adam (with the same skipped first step).  Parameters with more
   than 2 dims are treated as [shape[0], rest] (the reference keeps a factor per dim instead).
   States: "exp_avg", "exp_avg_sq" (parameter-shaped, in the eigenbasis), "GG_L", "GG_R",
   "Q_L", "Q_R" (square, not parameter-shaped: lt_optim_state_buf). */
typedef struct {
    double lr, beta1, beta2, shampoo_beta, eps, weight_decay;
    int precondition_frequency;
    int64_t max_precond_dim;
    lt_decay_mode decay_mode;
} lt_soap_config;
/* lr 3e-3, (0.95, 0.95), shampoo_beta -1 (negative: the factors' EMA uses beta2, as the
   reference's default), eps 1e-8, λ 0.01, frequency 10, max dim 10000, LT_DECAY_MARKED (the
   reference decays every parameter: LT_DECAY_ALL) */
LTRAIN_DEF lt_soap_config lt_soap_defaults(void);
LTRAIN_DEF lt_optim *lt_soap_create(lt_ctx *ctx, lt_paramset params, lt_soap_config cfg);

/* ---- optimizer state, the complete contract -------------------------------------------------
   lt_optim_num_states names the kinds of state (lt_optim_state_name); parameter i holds a buffer
   of kind `which` or not.  lt_optim_state (12_optim.h) returns the buffers that are shaped
   like their parameter (params.p[i]->n floats), and NULL otherwise; lt_optim_state_buf returns
   every buffer with its float count (NULL and 0 when parameter i has none of that kind: Muon's
   momentum only for its matrices, SOAP's GG_R/Q_R only when a side fits max_precond_dim).  A
   checkpoint stores, for every (which, i) with a buffer, its count floats; a resume creates the
   optimizer with the same config and parameters, copies the buffers back and calls
   lt_optim_set_steps(opt, t) (every parameter counted t steps).  Sizes depend only on the
   parameters' shapes and the config, so a mismatch in count means another config. */
LTRAIN_DEF float *lt_optim_state_buf(lt_optim *opt, int param_index, int which, int64_t *count);
LTRAIN_DEF size_t lt_optim_state_bytes(lt_optim *opt);   /* all state buffers, in bytes */

/* ---- mixed precision: fp16/bf16 conversions (@@HALF), dynamic loss scaling (@@AMP) ---------- */
/* 16-bit floats are kept as uint16_t bit patterns.  float32 -> 16 bit rounds to nearest, ties to
   even, and equals torch 1.13's CPU Tensor.to(torch.bfloat16 / torch.float16) bit for bit:
     bf16  (u + 0x7FFF + ((u >> 16) & 1)) >> 16 on the float's bits u (overflow gives ±inf);
           every NaN gives 0xFFFF, the quiet NaN of ATen's vectorised CPU conversion (c10's
           scalar BFloat16(float), used for 0-d and strided tensors, gives 0x7FC0 instead)
     fp16  IEEE binary16 with subnormals; |x| >= 65520 gives ±inf; NaN gives sign | 0x7E00
   16 bit -> float32 is exact: a bf16 keeps all its bits (u << 16); an fp16 NaN keeps its payload
   and gets the quiet bit, as F16C's vcvtph2ps and torch. */
LTRAIN_DEF uint16_t lt_f32_to_bf16(float x);
LTRAIN_DEF float lt_bf16_to_f32(uint16_t h);
LTRAIN_DEF uint16_t lt_f32_to_f16(float x);
LTRAIN_DEF float lt_f16_to_f32(uint16_t h);
/* The same on n elements (in and out must not overlap), bit-identical to the scalar functions.
   x86 with gcc/clang picks at run time the fastest of AVX2+F16C, AVX-512F and AVX512_BF16
   kernels the CPU has; elsewhere, or with LTRAIN_NO_SIMD defined, a portable loop.  Large arrays
   are split over OpenMP threads. */
LTRAIN_DEF void lt_f32_to_bf16_array(const float *in, uint16_t *out, size_t n);
LTRAIN_DEF void lt_bf16_to_f32_array(const uint16_t *in, float *out, size_t n);
LTRAIN_DEF void lt_f32_to_f16_array(const float *in, uint16_t *out, size_t n);
LTRAIN_DEF void lt_f16_to_f32_array(const uint16_t *in, float *out, size_t n);
LTRAIN_DEF const char *lt_amp_kernel_name(void);   /* e.g. "bf16 avx512bf16, fp16 avx512f" */
/* Stochastic rounding to bf16 (for bf16 weight updates): 16 uniform random bits are added below
   the kept ones, then truncated, so x rounds up with probability equal to its distance from the
   lower neighbour and E[result] = x.  NaN gives 0xFFFF as above.  The scalar form uses the top 16
   bits of one lt_rng_u64 draw; the array form one draw per 4 elements (element 4j+k takes bits
   48-16k.. of draw j), so its first element equals the scalar form's result. */
LTRAIN_DEF uint16_t lt_f32_to_bf16_stochastic(float x, lt_rng *rng);
LTRAIN_DEF void lt_f32_to_bf16_stochastic_array(const float *in, uint16_t *out, size_t n, lt_rng *rng);

/* Dynamic loss scaling, as torch.cuda.amp.GradScaler (torch 1.13).  fp16 gradients below 2^-24
   flush to zero; multiplying the loss by a large scale lifts them into range, and an inf/NaN
   gradient (the scale was too large) skips that optimizer step and halves the scale.
   One optimizer step, in this order:
       lt_zero_grad(ctx);
       for each micro-batch:                                  (scale loss -> backward)
           lt_backward(ctx, lt_scaler_scale_loss(ctx, &sc, loss));
       lt_scaler_unscale(ctx, &sc, params);                   (grads *= 1/scale; notes inf/NaN)
       if (!lt_scaler_found_inf(&sc))                         (clip the true gradients; an inf
           lt_clip_grad_norm(ctx, params, 1.0);                norm would set an error on ctx)
       lt_scaler_step(&sc, opt, lr);                          (skipped on inf/NaN)
       lt_scaler_update(&sc);                                 (backoff or growth)
   One scaler serves one optimizer.  Set the fields before the first step; the bookkeeping fields
   are read through the accessors. */
typedef struct lt_scaler {
    float scale;              /* the loss scale, float32 as torch's _scale (default 2^16) */
    double growth_factor;     /* x2 ...                                                     */
    int64_t growth_interval;  /* ... after this many consecutive clean steps (2000)         */
    double backoff_factor;    /* x0.5 after a step with an inf/NaN gradient                  */
    int enabled;              /* 0: scale 1, nothing unscaled or skipped (torch enabled=False) */
    int64_t growth_tracker;   /* clean steps since the scale last changed (torch _growth_tracker) */
    int64_t skipped;          /* optimizer steps skipped so far */
    int found_inf;            /* this step: lt_scaler_unscale saw an inf/NaN gradient */
    int stage;                /* this step: 0 nothing yet, 1 unscaled, 2 stepped (torch OptState) */
} lt_scaler;
/* torch's defaults, enabled: scale 65536, growth 2 every 2000 clean steps, backoff 0.5. */
LTRAIN_DEF lt_scaler lt_scaler_defaults(void);
/* loss * scale, recorded on the tape (lt_scale); loss itself when disabled.  NULL with the error
   on ctx for a setting torch rejects (growth_factor <= 1, backoff not in (0,1), ...). */
LTRAIN_DEF lt_tensor *lt_scaler_scale_loss(lt_ctx *ctx, lt_scaler *sc, lt_tensor *loss);
/* torch's unscale_: every gradient *= float(1/scale) (inf/NaN ones too) and found_inf records
   whether any was inf/NaN.  A second call in the same step does nothing (torch raises instead);
   a call after lt_scaler_step is an LT_ERR_STATE error. */
LTRAIN_DEF lt_status lt_scaler_unscale(lt_ctx *ctx, lt_scaler *sc, lt_paramset params);
/* torch's GradScaler.step: unscales first if the step has not, then runs lt_optim_step(opt, lr)
   unless found_inf, in which case parameters, moments and the optimizer's step count stay as
   they are (torch does not call optimizer.step()) and skipped grows by one.  Disabled: just
   lt_optim_step.  Returns opt's context status. */
LTRAIN_DEF lt_status lt_scaler_step(lt_scaler *sc, lt_optim *opt, double lr);
/* torch's _amp_update_scale_: found_inf -> scale *= backoff_factor, tracker = 0; else
   tracker + 1 == growth_interval -> scale *= growth_factor (kept if finite), tracker = 0; else
   tracker + 1.  Then a new step begins.  LT_ERR_STATE (nothing changes) when neither unscale
   nor step ran this step, where torch raises "No inf checks were recorded". */
LTRAIN_DEF lt_status lt_scaler_update(lt_scaler *sc);
LTRAIN_DEF double lt_scaler_get_scale(const lt_scaler *sc);   /* 1 when disabled, as torch */
LTRAIN_DEF int lt_scaler_found_inf(const lt_scaler *sc);      /* this step's gradients */
LTRAIN_DEF int64_t lt_scaler_skipped(const lt_scaler *sc);    /* steps skipped so far */
/* What a checkpoint keeps (torch's GradScaler.state_dict, plus the skipped-step count). */
typedef struct {
    double scale, growth_factor, backoff_factor;
    int64_t growth_interval, growth_tracker, skipped;
} lt_scaler_state;
LTRAIN_DEF lt_scaler_state lt_scaler_get_state(const lt_scaler *sc);
/* Restores the state and starts a fresh step; LT_ERR_ARG (on ctx, which may be NULL; nothing
   changes) for values lt_scaler_scale_loss would reject or a negative counter. */
LTRAIN_DEF lt_status lt_scaler_set_state(lt_ctx *ctx, lt_scaler *sc, const lt_scaler_state *st);

/* Training in 16-bit precision, autocast style (torch.autocast's CPU lists are the guide).
   lt_set_precision(ctx, LT_BF16 or LT_F16): from then on
     lt_matmul, lt_linear, lt_conv1d  round both operands (activations and weights) and the bias to
         the 16-bit type, multiply with float32 accumulation and round the result, which stays a
         float32 tensor holding 16-bit values;
     lt_gelu      computes on round16(x) in float32 and rounds y (torch's gelu on a bf16 tensor);
     lt_layernorm computes y and its statistics in float32, as before;
     lt_gpt_loss(_ex)  runs the LM head and the cross-entropy as one op whose logits are kept in
         16 bits only (the same loss and gradients as lt_linear + lt_cross_entropy here);
     lt_attention computes in float32 on qkv rounded to 16 bits and rounds y;
     lt_attention_gqa the same on q, k, v (keeping 16-bit copies of q, k, v and y);
     lt_rmsnorm   as lt_layernorm: y and rstd in float32, backward keeps x̂ = x·rstd in 16 bits;
     lt_swiglu    as torch's silu then mul on 16-bit tensors: y = round16(round16(silu(g16))·u16),
         backward keeps g16 and u16;
     lt_rope, lt_silu compute in float32 on their float32 inputs and do not round (rope's
         backward reads no values; silu keeps its float32 input).
   The loss, softmax, residual adds and the optimizer (float32 master weights and
   moments) stay float32.  For backward these ops keep 16-bit copies of what they need (half the
   bytes; a parameter is read in place): the operands of a product, gelu's input, layernorm's
   normalised x̂ = (x-mean)·rstd (plus rstd), attention's qkv and y, the logits; so a compiled plan (lt_compile) frees
   the float32 inputs after the forward.  An eager step keeps every float32 tensor until lt_reset
   anyway, so there a value that is 16-bit already (the output of a product, gelu or attention
   at this precision) is read in place instead of copied (the same bits in less memory; see
   bench/precision.md); LTRAIN_EAGER_COPIES16=1 keeps every copy.
   Backward of a product, with 16-bit operands:
       dx += dy16 · W16,  dW += dy16ᵀ · x16,  db += Σ_rows dy16   (float32 sums, not rounded)
   where torch 1.13's autocast rounds each of these to bf16 first; gelu and layernorm gradients
   are float32 (layernorm's read x̂16: tests/test_precision.c bounds the difference).  LT_BF16's
   forward equals torch.autocast("cpu", torch.bfloat16) to within one bf16 rounding and its
   gradients are within one rounding of torch's; LT_F16 does the same with fp16, as CUDA's
   autocast does (|x| >= 65520 rounds to inf, below 2^-24 to 0: train with a loss scale,
   lt_scaler).  LT_F32 (the default) is the plain float32 op, unchanged.  A record keeps the
   precision it was made with (a compiled plan replays it).  LT_ERR_ARG for another value.
   Speed on the CPU: with AVX512_BF16 (Zen 4, Cooper Lake, Sapphire Rapids) bf16 products run on
   vdpbf16ps at up to twice the float32 rate (lt_kernel_name_for(LT_BF16) says which kernel), so
   a bf16 step is faster than a float32 one; there is no fp16 arithmetic on such CPUs, so fp16
   products run at the float32 rate and the conversions make an fp16 step a little slower. */
LTRAIN_DEF lt_status lt_set_precision(lt_ctx *ctx, lt_dtype precision);
LTRAIN_DEF lt_dtype lt_get_precision(const lt_ctx *ctx);      /* LT_F32 for NULL */
LTRAIN_DEF const char *lt_precision_name(lt_dtype precision); /* "fp32", "bf16", "fp16" */
/* out[i] = in[i] rounded to the nearest value of the type (nearest even; a float32 copy for
   LT_F32), as torch's x.to(dtype).float().  in == out is allowed. */
LTRAIN_DEF void lt_round_to_precision(lt_dtype precision, const float *in, float *out, size_t n);

/* ---- data ----------------------------------------------------------------------------------- */
/* A token stream and llm.c's batch semantics: a batch is the window of B*T+1 tokens at the
   current position; inputs are its first B*T, targets its last B*T; the position advances by
   B*T and wraps to 0 when the next window would pass the end, so an epoch is
   floor((n-1)/(B*T)) batches.  With shuffling (seeded), the windows of an epoch are visited in a
   random order instead, drawn from (seed, epoch) alone.  Every source needs n >= B*T+1 tokens. */
typedef struct lt_loader lt_loader;
/* How to read a data file.  LT_DATA_AUTO: a name ending in .bin (any case), or a file that starts
   with the shard magic 20240520, is a token shard and must be a valid one (a damaged shard is
   refused, naming the field: magic, version, token count against the file size); anything else
   is text.  LT_DATA_TEXT reads any file as text bytes; LT_DATA_SHARD requires a shard. */
typedef enum { LT_DATA_AUTO = 0, LT_DATA_TEXT, LT_DATA_SHARD } lt_data_format;
/* Opens a text file (bytes, vocab 256) or an llm.c token shard (256 int32 header [magic
   20240520, version 1, count], then count uint16 tokens), by lt_loader_open_as's LT_DATA_AUTO.
   vocab > 0 rejects tokens >= vocab.  Errors name the file and the field.
   Storage: the file is read once.  A regular file is mapped (mmap, where the system has it) and
   used in place: text as bytes (1 byte a token), a shard as its uint16 tokens (2 bytes), so a
   file costs no more memory than the pages a run touches, which the system can drop again.  A
   pipe or device (--data <(cmd), /dev/stdin) is read into memory once, up to the data limit
   (see lt_read_file), and stored the same way.  Batches are widened to int32 as they are copied
   out.  A mapped file must not be truncated while its loader lives (reading a page that no
   longer exists stops the process with SIGBUS): copy a file another program rewrites. */
LTRAIN_DEF lt_loader *lt_loader_open(lt_ctx *ctx, const char *path, int B, int T, int vocab);
LTRAIN_DEF lt_loader *lt_loader_open_as(lt_ctx *ctx, const char *path, lt_data_format format, int B, int T,
                                        int vocab);
/* A loader over tokens in memory (copied as they are, as int32; no vocab check). */
LTRAIN_DEF lt_loader *lt_loader_from_tokens(lt_ctx *ctx, const int32_t *tokens, int64_t n, int B, int T);
LTRAIN_DEF void lt_loader_destroy(lt_loader *ld);
LTRAIN_DEF lt_status lt_loader_next(lt_loader *ld, int32_t *inputs, int32_t *targets); /* B*T each; NULL skips */
/* From now on each epoch's windows come in a permutation drawn from (seed, epoch); the position
   is kept, so shuffle then set_pos resumes a shuffled run exactly. */
LTRAIN_DEF void lt_loader_shuffle(lt_loader *ld, uint64_t seed);
LTRAIN_DEF int64_t lt_loader_num_tokens(const lt_loader *ld);
/* Tokens [start, start+n) as int32 into out (LT_ERR_ARG outside [0, num_tokens)). */
LTRAIN_DEF lt_status lt_loader_read(const lt_loader *ld, int64_t start, int64_t n, int32_t *out);
/* Deprecated (use lt_loader_read): every token as int32.  A file's loader stores bytes or uint16,
   so the first call makes an int32 copy of all tokens (4 bytes a token, kept until destroy;
   NULL with the error on the loader's context when memory runs out). */
LTRAIN_DEF const int32_t *lt_loader_tokens(const lt_loader *ld);
LTRAIN_DEF int lt_loader_is_shard(const lt_loader *ld);
LTRAIN_DEF int lt_loader_token_bytes(const lt_loader *ld);   /* storage: 1 text, 2 shard, 4 from_tokens */
/* Checks every token against vocab (> 0), as opening with that vocab does: for a loader opened
   before the vocab was known (the model's vocab chosen from the data). */
LTRAIN_DEF lt_status lt_loader_check_vocab(lt_loader *ld, int vocab);
/* The position as two numbers (epoch, batch index in epoch) so a resume continues exactly.
   set_pos needs epoch >= 0 and 0 <= index < batches per epoch. */
LTRAIN_DEF void lt_loader_get_pos(const lt_loader *ld, int64_t *epoch, int64_t *index);
LTRAIN_DEF lt_status lt_loader_set_pos(lt_loader *ld, int64_t epoch, int64_t index);
/* Parse a token shard from memory (for tests and fuzzing): on success *tokens is malloc'd
   (free with lt_free) and *n set.  label names the source in error messages. */
LTRAIN_DEF lt_status lt_shard_parse(lt_ctx *ctx, const void *buf, size_t size, const char *label, int vocab,
                                    int32_t **tokens, int64_t *n);
/* Read a whole file into memory, once (a pipe too; malloc'd, free with lt_free).  At most the
   data limit, so an input that never ends (/dev/zero) is refused before memory runs out:
   LTRAIN_DATA_LIMIT=N (bytes, or with a k, m or g suffix, binary units); by default half the
   physical memory where the system reports it, else 4 GiB. */
LTRAIN_DEF lt_status lt_read_file(lt_ctx *ctx, const char *path, void **buf, size_t *size);
LTRAIN_DEF void lt_free(void *p);

/* ---- checkpoints: safetensors --------------------------------------------------------------- */
/* The format: u64 little-endian header length N, N bytes of JSON
   {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
    "__metadata__": {"key": "value", ...}}, then the data.  Reading checks every rule:
   header <= 100 MB, valid JSON of that form, unique names, known dtype, shapes whose product
   times the dtype size equals the byte range, ranges contiguous from 0, covering the data exactly.
   Stricter than the reference reader: fields other than dtype/shape/data_offsets, more than 8
   dims, and "\u0000" in strings are refused too.  Errors name the file and the tensor. */
typedef struct lt_st lt_st;
LTRAIN_DEF lt_st *lt_st_open(lt_ctx *ctx, const char *path);
LTRAIN_DEF lt_st *lt_st_parse(lt_ctx *ctx, const void *buf, size_t size, const char *label); /* copies */
LTRAIN_DEF void lt_st_close(lt_st *st);
LTRAIN_DEF int lt_st_count(const lt_st *st);
LTRAIN_DEF int lt_st_find(const lt_st *st, const char *name);        /* index or -1 */
LTRAIN_DEF const char *lt_st_name(const lt_st *st, int i);
LTRAIN_DEF const char *lt_st_dtype(const lt_st *st, int i);          /* "F32", "BF16", "I64", ... */
LTRAIN_DEF int lt_st_shape(const lt_st *st, int i, int64_t *shape);  /* returns ndim (shape: room for 8); -1 bad i */
/* The stored bytes (little-endian, not necessarily aligned); valid until lt_st_close. */
LTRAIN_DEF const void *lt_st_data(const lt_st *st, int i, size_t *bytes);
/* Tensor i converted to float32 (from F32, F16, BF16, F64) into out; n must equal its size. */
LTRAIN_DEF lt_status lt_st_read_f32(lt_st *st, int i, float *out, int64_t n);
LTRAIN_DEF const char *lt_st_meta(const lt_st *st, const char *key); /* __metadata__ value or NULL */
LTRAIN_DEF const char *lt_st_meta_key(const lt_st *st, int i);     /* i-th __metadata__ key (file order); NULL past the last */

typedef struct lt_st_writer lt_st_writer;
LTRAIN_DEF lt_st_writer *lt_st_writer_create(lt_ctx *ctx);
/* The data pointers must stay valid until lt_st_save. dtype: "F32", "I64", "U8", ...  Tensors are
   written in the order added.  If any add fails, lt_st_save on this writer refuses (LT_ERR_STATE)
   rather than write a checkpoint that silently lacks a tensor. */
LTRAIN_DEF lt_status lt_st_add(lt_st_writer *w, const char *name, const char *dtype, int ndim,
                               const int64_t *shape, const void *data);
LTRAIN_DEF lt_status lt_st_add_meta(lt_st_writer *w, const char *key, const char *value); /* same key: replaced */
/* in as valid UTF-8 text for metadata (a command line with a Latin-1 file name): each byte that is
   not part of a valid UTF-8 character becomes the four characters \xNN; cut to cap-1 bytes at a
   character boundary (never inside a character or an escape); out is NUL-terminated.  Returns
   the bytes written. */
LTRAIN_DEF size_t lt_utf8_escape(char *out, size_t cap, const char *in);
/* Writes a temporary file beside path (path.tmpXXXXXXXX), fsyncs, renames it over path, then
   fsyncs the directory (POSIX): a crash or kill leaves at path the old file or the new one, never a
   broken one (a stray .tmp file at worst).  The header is padded with spaces to a multiple of 8. */
LTRAIN_DEF lt_status lt_st_save(lt_st_writer *w, const char *path);
/* Where writers may write (lt_st_save, lt_checkpoint_save, lt_plot_save check every path this way;
   call it to check a path before a long run).  LT_DEST_REPLACE, a file written beside the path
   and renamed over it: the path must be missing or a regular file; a symbolic link to a regular
   file is followed (its target is replaced, the link stays).  LT_DEST_STREAM, a log written in
   place: also a character device or FIFO (/dev/null, /dev/stdout, a named pipe: written into,
   never replaced).  Refused, LT_ERR_ARG with a message naming the path and what it is: a
   directory, a block device, a socket, a dangling symbolic link; and for LT_DEST_REPLACE a
   character device or FIFO (renaming over one would replace the node). */
typedef enum { LT_DEST_REPLACE, LT_DEST_STREAM } lt_dest_mode;
LTRAIN_DEF lt_status lt_dest_check(lt_ctx *ctx, const char *path, lt_dest_mode mode);
LTRAIN_DEF void lt_st_writer_destroy(lt_st_writer *w);

/* ---- sequences: variable-length data, bucketed batches, length schedule, restarts ------------- */
/* Instead of one contiguous stream, the data is a set of sequences: the lines or the paragraphs
   (runs of non-blank lines) of a text file, or the documents of a token stream split where an
   end-of-text id starts a new one (llm.c's GPT-2 shards put 50256 before every document; the id
   stays at the front of its document).  A sequence of n tokens gives n-1 (input, target) pairs;
   one longer than max_len pairs is cut into pieces of max_len pairs (piece k starts at token
   k*max_len, so every pair is used exactly once); pieces with no pair are dropped.

   Batches are sized by a token budget: rows * padded length <= batch_tokens, so batches of
   short sequences hold more rows.  Rows are padded to the batch's longest row: padded inputs
   are 0, padded targets LT_IGNORE_INDEX and lengths[] gives each row's real length, so with
   lt_gpt_loss_ex padding reaches neither the loss nor attention (as keys).
     LT_BATCH_BUCKET  pieces grouped into length buckets (a bucket holds lengths in (hi*(1-w), hi],
                      w = bucket_width), each batch filled from one bucket in a random order,
                      then the epoch's batches shuffled;
     LT_BATCH_RANDOM  the naive baseline: pieces in a random order, packed greedily.
   Every piece is in exactly one batch of each epoch.  An epoch's batches are drawn from
   (seed, epoch) alone, so the position (epoch, batch index) resumes a run exactly (it fits
   lt_train_state's data_epoch, data_index). */
typedef enum { LT_SEQ_LINES = 1, LT_SEQ_PARAGRAPHS, LT_SEQ_EOT } lt_seq_split;
typedef enum { LT_BATCH_BUCKET = 0, LT_BATCH_RANDOM } lt_batching;
typedef struct {
    lt_seq_split split;
    int32_t eot;            /* LT_SEQ_EOT: the end-of-text id (50256 for GPT-2) */
    int max_len;            /* T: pairs per piece at most (the model's sequence length) */
    lt_batching batching;
    int64_t batch_tokens;   /* budget: rows * padded length; must be >= max_len */
    double bucket_width;    /* w, relative bucket width in (0,1) (default 1/16) */
    int pad_to;             /* round each batch's padded length up to a multiple (1 = off; fewer
                               distinct shapes for a shape cache, at the cost of padding) */
    uint64_t seed;          /* batch composition and order */
} lt_seq_config;

/* A batch the caller owns: zero-initialise, pass to lt_seq_next / lt_batch_from_rows (which
   grow the buffers), free with lt_batch_free.  ids, targets [B*T]; lengths [B]. */
typedef struct {
    int B, T;               /* rows, padded length */
    int32_t *ids, *targets, *lengths;
    int64_t real;           /* non-ignored targets (the token-weighted denominator's share) */
    int64_t cap_pos, cap_rows;
} lt_batch;

typedef struct lt_seq_loader lt_seq_loader;
/* split LT_SEQ_LINES, max_len 64, bucket batching, batch_tokens 512, bucket_width 1/16, pad_to 1. */
LTRAIN_DEF lt_seq_config lt_seq_defaults(void);
/* A text file (bytes; LT_SEQ_LINES or LT_SEQ_PARAGRAPHS) or an llm.c token shard (LT_SEQ_EOT),
   its format chosen as lt_loader_open's (lt_seq_open_as: given), stored as lt_loader_open
   stores it.  vocab > 0 rejects tokens >= vocab.  Errors name the file. */
LTRAIN_DEF lt_seq_loader *lt_seq_open(lt_ctx *ctx, const char *path, const lt_seq_config *cfg, int vocab);
LTRAIN_DEF lt_seq_loader *lt_seq_open_as(lt_ctx *ctx, const char *path, lt_data_format format,
                                         const lt_seq_config *cfg, int vocab);
/* The tokens of a stream loader, shared (not copied; either may be destroyed first): a file
   opened once serves both, so a pipe works. */
LTRAIN_DEF lt_seq_loader *lt_seq_from_loader(lt_ctx *ctx, const lt_loader *ld, const lt_seq_config *cfg);
/* From memory (copied): text bytes, or tokens (LT_SEQ_EOT only). */
LTRAIN_DEF lt_seq_loader *lt_seq_from_text(lt_ctx *ctx, const char *text, size_t n, const lt_seq_config *cfg);
LTRAIN_DEF lt_seq_loader *lt_seq_from_tokens(lt_ctx *ctx, const int32_t *tokens, int64_t n, const lt_seq_config *cfg);
LTRAIN_DEF void lt_seq_destroy(lt_seq_loader *sl);
LTRAIN_DEF int64_t lt_seq_count(const lt_seq_loader *sl);                   /* pieces */
LTRAIN_DEF int lt_seq_length(const lt_seq_loader *sl, int64_t i);           /* pairs of piece i */
/* Piece i's length+1 tokens as int32.  A file's tokens are stored as bytes or uint16, so the
   first call makes an int32 copy of all tokens (4 bytes a token, kept until destroy). */
LTRAIN_DEF const int32_t *lt_seq_tokens(const lt_seq_loader *sl, int64_t i);
LTRAIN_DEF int64_t lt_seq_batches(lt_seq_loader *sl, int64_t epoch);        /* batches in that epoch */
/* The pieces of batch `index` of `epoch` (room for batch_tokens); returns how many, -1 out of range. */
LTRAIN_DEF int64_t lt_seq_batch_members(lt_seq_loader *sl, int64_t epoch, int64_t index, int64_t *pieces);
/* The next batch into *b, its rows cut to at most fold_len pairs (the length schedule's current
   value; 0 or >= max_len: no cut; a cut row continues in the next row, restarting at position
   0).  Advances the position. */
LTRAIN_DEF lt_status lt_seq_next(lt_seq_loader *sl, int fold_len, lt_batch *b);
LTRAIN_DEF void lt_seq_get_pos(const lt_seq_loader *sl, int64_t *epoch, int64_t *index);
LTRAIN_DEF lt_status lt_seq_set_pos(lt_seq_loader *sl, int64_t epoch, int64_t index);
/* B rows of T (ids, targets; lengths NULL = all T) into *b, each row cut to at most fold_len
   (0 = no cut) and padded to the longest resulting row: the stream loader's batches under a
   length schedule.  ctx receives errors. */
LTRAIN_DEF lt_status lt_batch_from_rows(lt_ctx *ctx, lt_batch *b, const int32_t *ids, const int32_t *targets,
                                        const int32_t *lengths, int B, int T, int fold_len);
LTRAIN_DEF void lt_batch_free(lt_batch *b);

/* Cross-entropy of the next-token prediction with padding: forward with lengths (NULL = none),
   targets LT_IGNORE_INDEX skipped; the sum over counted targets divided by denom (> 0), or
   their mean (denom <= 0).  Token-weighted accumulation over the K micro-batches of a step:
   denom = the real targets of all K, and backward of each; the step's loss is the sum of the K
   values and equals one batch holding every row. */
LTRAIN_DEF lt_tensor *lt_gpt_loss_ex(lt_gpt *gpt, const int32_t *ids, const int32_t *targets, int B, int T,
                                     const int32_t *lengths, double denom);

/* ---- sequence-length schedule --------------------------------------------------------------- */
/* The sequence length of optimizer step s (0-based), growing from t0 to t1 over `steps` steps
   (p = min(s, steps)/steps), then t1:
     LT_LEN_LINEAR  t0 + (t1-t0)*p          LT_LEN_SQRT  t0 + (t1-t0)*sqrt(p)
     LT_LEN_STEP    t0 * 2^floor(n*p), n = ceil(log2(t1/t0)): t0, 2*t0, 4*t0, ... each for steps/n
                    steps (the last doubling capped at t1)
   linear and sqrt are rounded down to a multiple of `quantum` (>= 1) and kept in [t0, t1]. */
typedef enum { LT_LEN_LINEAR = 0, LT_LEN_STEP, LT_LEN_SQRT } lt_len_rule;
typedef struct {
    int t0, t1;
    int64_t steps;
    lt_len_rule rule;
    int quantum;
} lt_len_schedule;
LTRAIN_DEF int lt_len_at(const lt_len_schedule *ls, int64_t step);
/* "T0:T1:STEPS[:linear|step|sqrt]" (default linear, quantum 8 or t0 when smaller); returns 1,
   or 0 with a sentence in err (room for errcap bytes). */
LTRAIN_DEF int lt_len_parse(const char *spec, lt_len_schedule *out, char *err, size_t errcap);

/* ---- random restarts ------------------------------------------------------------------------ */
/* fn trains candidate r with seed `seed` (weights and data order) for a few steps and stores its
   validation loss; it keeps whatever it needs to continue the best one (e.g. a checkpoint).
   lt_restarts runs r = 0..n-1 with seeds[r] = base_seed + r, fills seeds[] and val[] (NaN when
   fn failed) and returns the index of the lowest finite validation loss (the first on ties), or
   -1 when none is finite. */
typedef lt_status (*lt_restart_fn)(void *user, int r, uint64_t seed, double *val_loss);
LTRAIN_DEF int lt_restarts(int n, uint64_t base_seed, lt_restart_fn fn, void *user, uint64_t *seeds, double *val);
/* The table (seed, val loss, the chosen one marked) and the spread: min, max, mean, std. */
LTRAIN_DEF void lt_restarts_print(FILE *f, int n, const uint64_t *seeds, const double *val, int best);

/* ---- tokenizers: byte-level BPE (GPT-2, Llama-3, Qwen2 style) ------------------------------ */
/* Text to token ids and back, equal to tiktoken and Hugging Face tokenizers (tests/test_tok.c).
   Encoding: the text is cut at special-token strings (only with LT_TOK_SPECIAL), each stretch is
   cut into pre-tokens by the tokenizer's pattern (lt_pretok_next), and each pre-token's bytes are
   merged by BPE: start from one token per byte, merge the adjacent pair of lowest merge rank (the
   leftmost of equal ones) until no pair has a rank.
   Invalid UTF-8 in the text is not an error: each byte of an invalid sequence counts as one
   character of no class (like punctuation) for the pattern, and BPE gives it its byte's token,
   so decode(encode(x)) == x for every byte string x.
   The pattern's classes \p{L}, \p{N} follow Unicode as the PyPI regex module defines it
   (tests/ref/gen_tok_tables.py); \s is Unicode White_Space.  Characters assigned in Unicode
   versions the reference tokenizers do not know yet may be classed differently there.
   A tokenizer is read-only after loading except for its cache of encoded pre-tokens: one
   lt_tokenizer must not encode from two threads at once (load one per thread). */
typedef struct lt_tokenizer lt_tokenizer;
/* The pre-tokenizer patterns, written out in C (no regex library):
     LT_PRETOK_GPT2    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
     LT_PRETOK_CL100K  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
                       ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+   (cl100k_base, Llama-3)
     LT_PRETOK_QWEN2   the same with \p{N} for \p{N}{1,3} (Qwen2: one digit per pre-token) */
typedef enum { LT_PRETOK_GPT2 = 1, LT_PRETOK_CL100K, LT_PRETOK_QWEN2 } lt_pretok;
#define LT_TOK_SPECIAL 1   /* lt_tok_encode: special-token strings in the text become their ids
                              (tiktoken's allowed_special="all", HF's encode); without it they are
                              plain text (tiktoken's encode_ordinary) */
/* GPT-2's encoder.json (token -> id) and vocab.bpe (merges, rank = line order) as published;
   "<|endoftext|>" is its special token.  Errors name the file, the line or token, and the value. */
LTRAIN_DEF lt_tokenizer *lt_tok_load_gpt2(lt_ctx *ctx, const char *encoder_json, const char *vocab_bpe);
/* The same from memory (copied nowhere: the tokenizer keeps what it needs); label names the
   source in error messages. */
LTRAIN_DEF lt_tokenizer *lt_tok_parse_gpt2(lt_ctx *ctx, const void *encoder_json, size_t enc_size,
                                           const void *vocab_bpe, size_t bpe_size, const char *label);
/* A Hugging Face tokenizer.json of a byte-level BPE model: model.type "BPE" with vocab and merges
   ("a b" strings or ["a", "b"] pairs), ignore_merges; pre_tokenizer ByteLevel (use_regex: the
   GPT-2 pattern) or a Sequence of a Split on one of the patterns above and a ByteLevel; added_tokens
   are the special tokens.  Refused with a message: other models and pre-tokenizers, a normalizer,
   add_prefix_space, byte_fallback, subword prefixes/suffixes.  The post-processor is not applied
   (as HF's encode(add_special_tokens=False)). */
LTRAIN_DEF lt_tokenizer *lt_tok_load_json(lt_ctx *ctx, const char *tokenizer_json);
LTRAIN_DEF lt_tokenizer *lt_tok_parse_json(lt_ctx *ctx, const void *buf, size_t size, const char *label);
LTRAIN_DEF void lt_tok_free(lt_tokenizer *tk);
/* Encodes n bytes of text; writes the first min(count, cap) ids to out (NULL with cap 0 only
   counts) and returns the count, or -1 on an error (tk's context says why).  A text of n bytes
   gives at most n ids, so cap = n is always enough. */
LTRAIN_DEF int64_t lt_tok_encode(lt_tokenizer *tk, const char *text, size_t n, int flags, int32_t *out, int64_t cap);
/* A loader (as lt_loader_open) over the text file at path encoded by tk with flags (as
   lt_tok_encode): the text is read and encoded a piece at a time, cut only where the ids equal
   those of the whole text encoded at once; the ids are kept as uint16 when tk has at most 65536
   tokens, else int32.  At most the data limit (LTRAIN_DATA_LIMIT) of bytes is read. */
LTRAIN_DEF lt_loader *lt_loader_open_tok(lt_ctx *ctx, const char *path, lt_tokenizer *tk, int flags, int B, int T);
/* Decodes n ids to their bytes (special tokens as their text); writes the first min(size, cap)
   bytes to out (no NUL added; NULL with cap 0 only measures) and returns the size, or -1 when an
   id is out of range or has no token (the message names it and its position). */
LTRAIN_DEF int64_t lt_tok_decode(const lt_tokenizer *tk, const int32_t *ids, int64_t n, char *out, size_t cap);
LTRAIN_DEF int32_t lt_tok_vocab_size(const lt_tokenizer *tk);          /* largest id + 1; 0 for NULL */
LTRAIN_DEF int32_t lt_tok_special(const lt_tokenizer *tk, const char *s); /* id of a special token, or -1 */
/* The bytes of token id (not NUL-terminated; *len set), or NULL when id has no token. */
LTRAIN_DEF const char *lt_tok_token(const lt_tokenizer *tk, int32_t id, size_t *len);
/* The id of the token with these exact bytes (special tokens included), or -1. */
LTRAIN_DEF int32_t lt_tok_lookup(const lt_tokenizer *tk, const char *bytes, size_t len);
/* The token merging a and b and *rank its merge rank (NULL: not wanted), or -1 when no merge. */
LTRAIN_DEF int32_t lt_tok_merge(const lt_tokenizer *tk, int32_t a, int32_t b, int32_t *rank);
LTRAIN_DEF int32_t lt_tok_num_merges(const lt_tokenizer *tk);
LTRAIN_DEF lt_pretok lt_tok_pattern(const lt_tokenizer *tk);
LTRAIN_DEF size_t lt_tok_memory(const lt_tokenizer *tk);              /* bytes it holds */
/* The length in bytes (>= 1) of the pre-token at the start of text[0..n), by pattern p; 0 when
   n is 0 or p unknown.  Cutting a text: for (i = 0; i < n; i += k) k = lt_pretok_next(p, s+i, n-i). */
LTRAIN_DEF size_t lt_pretok_next(lt_pretok p, const char *text, size_t n);
/* GPT-2's byte-level alphabet: the printable character standing for each byte in vocabulary
   files (bytes 0x21-0x7e, 0xa1-0xac, 0xae-0xff stand for themselves, the others for U+0100..),
   and back (-1 for a character outside the alphabet). */
LTRAIN_DEF uint32_t lt_tok_byte_char(int byte);
LTRAIN_DEF int lt_tok_char_byte(uint32_t cp);

/* ---- training a byte-level BPE vocabulary (@@TOK.train) ------------------------------------- */
/* Learns merges from text as Hugging Face tokenizers' BpeTrainer does (byte-level, GPT-2's
   pre-tokenizer, ties to the smallest pair): ids 0..n_special-1 are the special tokens, the
   next 256 the bytes in GPT-2's order, then one token per merge.  Save it as tokenizer.json
   (lt_tok_load_json, tokenizers.Tokenizer.from_file) or GPT-2's encoder.json + vocab.bpe. */
typedef struct {
    int vocab_size;             /* tokens in all (special + 256 bytes + merges); default 4096 */
    int64_t min_frequency;      /* stop when the most frequent pair occurs fewer times; default 0 */
    int n_special;              /* default 1: "<|endoftext|>" */
    const char *const *special; /* their texts, ids 0..n_special-1 */
    lt_pretok pattern;          /* the pre-tokenizer: LT_PRETOK_GPT2 (default; 0 means it too),
                                   LT_PRETOK_CL100K (Llama-3) or LT_PRETOK_QWEN2; tokenizer.json
                                   records it, GPT-2's pair of files only holds GPT-2's */
} lt_bpe_opts;
typedef struct lt_bpe lt_bpe;
LTRAIN_DEF lt_bpe_opts lt_bpe_defaults(void);
/* NULL (error on ctx) for bad options or out of memory.  Training stops early, with fewer tokens,
   when no pair is left.  opts NULL means lt_bpe_defaults(). */
LTRAIN_DEF lt_bpe *lt_bpe_train(lt_ctx *ctx, const void *text, size_t n, const lt_bpe_opts *opts);
LTRAIN_DEF void lt_bpe_free(lt_bpe *v);
LTRAIN_DEF int lt_bpe_vocab_size(const lt_bpe *v);
LTRAIN_DEF int lt_bpe_n_special(const lt_bpe *v);
LTRAIN_DEF int lt_bpe_n_merges(const lt_bpe *v);
/* Merge i (in the order learned): sets left and right, returns the id they make (-1: no such merge). */
LTRAIN_DEF int lt_bpe_merge(const lt_bpe *v, int i, int *left, int *right);
/* Token id's bytes (*len of them; not NUL-terminated); NULL when id is out of range. */
LTRAIN_DEF const unsigned char *lt_bpe_token(const lt_bpe *v, int id, size_t *len);
LTRAIN_DEF lt_status lt_bpe_save_json(lt_ctx *ctx, const lt_bpe *v, const char *path);
LTRAIN_DEF lt_status lt_bpe_save_gpt2(lt_ctx *ctx, const lt_bpe *v, const char *encoder_json, const char *vocab_bpe);

/* ---- GPT checkpoints and training state ------------------------------------------------------ */
/* Weights as safetensors with Hugging Face GPT-2 names (F32), metadata n_layer, n_head, n_embd,
   n_ctx, vocab_size.  Written to a temporary file, fsynced and renamed. */
LTRAIN_DEF lt_status lt_gpt_save(lt_gpt *gpt, const char *path);
/* A model from a safetensors file: ours, or a Hugging Face GPT-2 model.safetensors (names with or
   without "transformer.", attn.bias / attn.masked_bias buffers and a tied lm_head.weight are
   ignored).  The config comes from the tensor shapes; the head count from the metadata's n_head,
   else from n_head (0 = unknown: an error). */
LTRAIN_DEF lt_gpt *lt_gpt_load(lt_ctx *ctx, const char *path, int n_head);
/* Weights from a file into an existing model; every shape must match. */
LTRAIN_DEF lt_status lt_gpt_load_weights(lt_gpt *gpt, const char *path);

/* What a training checkpoint adds to the weights, so that a resumed run continues bit-identically:
   optimizer moments and step count, the data position, the context's RNG state and, for fp16
   training, the loss scaler.  Zero it before use (lt_train_state st = {0}; or memset), so that
   fields you do not set are 0 / NULL. */
struct lt_scaler;                /* @@AMP: lt_scaler */
typedef struct {
    int64_t step;                /* optimizer steps done */
    int64_t data_epoch, data_index;
    /* NULL, or the fp16 loss scaler: saved as tensor "amp.scaler" (F64 [6]: scale, growth_factor,
       backoff_factor, growth_interval, growth_tracker, skipped) and restored from it; loading a
       checkpoint that has none leaves the scaler as it is */
    struct lt_scaler *scaler;
    /* how the run reads its data (free text, e.g. "batch=8;seq=64;..."), saved as metadata "run"
       when not empty and filled from it by lt_checkpoint_load ("" when the file has none), so a
       resumed run can check it reads the data the same way */
    char run[1024];
} lt_train_state;
/* Weights + optimizer state (tensors "optim.<state>.<param>") + "train.state" + ctx RNG;
   note (may be NULL) is stored as metadata "note" (e.g. the command line). */
LTRAIN_DEF lt_status lt_checkpoint_save(lt_gpt *gpt, lt_optim *opt, const lt_train_state *st, const char *note,
                                        const char *path);
/* Restores what lt_checkpoint_save wrote into an existing model and optimizer (same shapes and
   optimizer kind) and *st; the context's RNG is restored too. */
LTRAIN_DEF lt_status lt_checkpoint_load(lt_gpt *gpt, lt_optim *opt, lt_train_state *st, const char *path);

/* ---- plots: SVG line charts ------------------------------------------------------------------ */
/* A figure of one or more panels stacked top to bottom, each a line chart with a box, grid,
   1-2-5 ticks, tick labels, axis labels, a title and a legend.  Written as a standalone SVG (no
   dependencies; open it in a browser).  Needs no context: a plot keeps its own error, and as on a
   context the first error sticks and later calls do nothing and return it, so one check of
   lt_plot_save's status is enough.  Non-finite points (and, on a log axis, values <= 0) are not
   drawn: the line breaks there.  A series of one point, or points all equal, still gets a
   sensible range (never a division by zero).  Numbers are printed with '.', whatever the locale. */
typedef struct lt_plot lt_plot;
/* A figure whose first panel has these labels (each may be NULL).  NULL only if out of memory. */
LTRAIN_DEF lt_plot *lt_plot_create(const char *title, const char *xlabel, const char *ylabel);
LTRAIN_DEF void lt_plot_destroy(lt_plot *p);
/* Start another panel below the last; later series and settings go to it. */
LTRAIN_DEF lt_status lt_plot_panel(lt_plot *p, const char *title, const char *xlabel, const char *ylabel);
/* A line in the current panel: n points copied from x (NULL: 0, 1, ..., n-1) and y.  name (may be
   NULL: no legend entry) is shown in the legend.  Returns the series' index for lt_plot_append,
   or -1 (the error on p). */
LTRAIN_DEF int lt_plot_series(lt_plot *p, const char *name, const double *x, const double *y, int n);
/* One more point at the end of a series, for plots that grow while a program runs. */
LTRAIN_DEF lt_status lt_plot_append(lt_plot *p, int series, double x, double y);
LTRAIN_DEF void lt_plot_log_y(lt_plot *p, int on);          /* current panel: logarithmic y axis */
/* Current panel's axis ranges; NaN leaves that end automatic (the data's range, rounded out to
   ticks).  Lines leaving the box are clipped at its edge. */
LTRAIN_DEF void lt_plot_range(lt_plot *p, double xmin, double xmax, double ymin, double ymax);
LTRAIN_DEF void lt_plot_size(lt_plot *p, int width, int height); /* of each panel; default 640 x 400 */
/* Writes path.tmp and renames it over path, so a viewer never sees half a file. */
LTRAIN_DEF lt_status lt_plot_save(lt_plot *p, const char *path);
LTRAIN_DEF const char *lt_plot_error(const lt_plot *p);     /* the first error's sentence, "" if none */

/* ---- distributed data parallel over MPI (@@DIST) -------------------------------------------- */
/* Build with mpicc -DLTRAIN_MPI and run under mpirun -np N: N processes ("ranks") each hold the
   whole model, train on a disjoint part of every global batch, and average their gradients
   between backward and clipping, so every rank sees the global gradient and keeps identical
   weights.  One optimizer step of a data-parallel loop:
       lt_zero_grad(ctx);
       for each micro-batch:  lt_dist_loader_next(d, ld, in, tg); forward; backward   (local rows)
       lt_dist_allreduce_grads(d);                       (every gradient = the mean over ranks)
       lt_clip_grad_norm(...); lt_optim_step(...);       (unchanged: identical on every rank)
   With a loader opened for the global batch (B_global = world * B) rank r takes rows
   r*B .. r*B+B-1 of every window, so N ranks with B rows each see exactly the batches of one
   process with N*B rows, and the loader's position (in checkpoints) is the global one.
   Without LTRAIN_MPI every function below exists and acts as a single process (rank 0 of 1):
   the same program compiles and runs either way, and nothing of MPI is linked. */
typedef struct lt_dist lt_dist;
typedef enum {
    LT_REDUCE_F32 = 0,     /* MPI_Allreduce(MPI_SUM) of fp32: MPI picks the algorithm and the order */
    LT_REDUCE_F32_ORDERED, /* fp32, summed in rank order 0..N-1 by each slice's owner (see @@DIST):
                              the result does not depend on MPI's algorithm */
    LT_REDUCE_BF16         /* bf16 on the wire (half the bytes), summed in fp32 in rank order, the
                              mean rounded once to bf16: gradients lose their low 16 bits */
} lt_reduce_mode;
typedef struct {
    size_t bucket_bytes;   /* fp32 gradient bytes per all-reduce message (default 16 MiB) */
    lt_reduce_mode mode;   /* default LT_REDUCE_F32 */
} lt_dist_config;
typedef struct {
    double last_ms, total_ms;  /* all-reduce wall time: the last call, all calls */
    double wait_ms, total_wait_ms; /* before it: waiting for the slowest rank to finish backward
                                  (a barrier; load imbalance, not communication) */
    int64_t calls;
    size_t floats;             /* gradient floats per call */
    int buckets;               /* messages per call */
    double wire_bytes;         /* bytes one rank sends per call (ring / pairwise model:
                                  2 (N-1)/N * floats * bytes per element) */
} lt_dist_stats;

/* MPI_Init_thread (funneled) once per process; a second call does nothing.  Without LTRAIN_MPI:
   nothing.  argc/argv may be NULL. */
LTRAIN_DEF lt_status lt_dist_init(int *argc, char ***argv);
LTRAIN_DEF void lt_dist_finalize(void);               /* MPI_Finalize, if initialised and not yet */
LTRAIN_DEF int lt_dist_rank(void);                    /* 0 .. world-1 (0 without MPI) */
LTRAIN_DEF int lt_dist_world(void);                   /* number of ranks (1 without MPI) */
/* Ends every rank of the job (MPI_Abort) when world > 1, so that a rank that failed alone does
   not leave the others waiting in a collective forever; returns (does nothing) otherwise. */
LTRAIN_DEF void lt_dist_abort(int code);
LTRAIN_DEF lt_dist_config lt_dist_defaults(void);
/* The gradient reducer for ctx's parameters (cfg NULL: defaults); owns its buffers and its own
   communicator.  Needs lt_dist_init first under MPI.  NULL with the error on ctx. */
LTRAIN_DEF lt_dist *lt_dist_create(lt_ctx *ctx, const lt_dist_config *cfg);
LTRAIN_DEF void lt_dist_destroy(lt_dist *d);
/* Every parameter gradient of d's context = the mean of that gradient over the ranks, in buckets
   of cfg.bucket_bytes over the flat gradient (lt_params_pack; unpacked parameters are staged).
   Call it once per optimizer step, after the last micro-batch's backward (accumulating
   micro-batches need no communication).  Collective: every rank must call it.  Returns ctx's
   status; an MPI error sets LT_ERR_STATE with MPI's message. */
LTRAIN_DEF lt_status lt_dist_allreduce_grads(lt_dist *d);
/* The mean of x over the ranks (e.g. the step's loss, for the log).  Collective. */
LTRAIN_DEF double lt_dist_mean(lt_dist *d, double x);
LTRAIN_DEF lt_status lt_dist_barrier(lt_dist *d);
/* Rank 0's parameter values to every rank (e.g. after an initialisation that used per-rank
   seeds).  Collective. */
LTRAIN_DEF lt_status lt_dist_broadcast_params(lt_dist *d);
/* LT_OK when every rank holds bit-identical parameter values (a 64-bit hash of them compared
   across ranks), else LT_ERR_STATE on ctx.  Collective. */
LTRAIN_DEF lt_status lt_dist_check_sync(lt_dist *d);
/* This rank's part of the next global batch: ld must be opened with B_global = world * B rows
   (lt_loader_open(ctx, path, world * B, T, vocab)); inputs/targets receive B*T tokens each, rows
   rank*B .. rank*B+B-1 of the global window.  Every rank advances the (global) position by one
   window.  world 1: exactly lt_loader_next. */
LTRAIN_DEF lt_status lt_dist_loader_next(lt_dist *d, lt_loader *ld, int32_t *inputs, int32_t *targets);
/* lt_checkpoint_save on rank 0 only; the other ranks wait until the file is written and all
   return rank 0's status.  Collective. */
LTRAIN_DEF lt_status lt_dist_checkpoint_save(lt_dist *d, lt_gpt *gpt, lt_optim *opt, const lt_train_state *st,
                                             const char *note, const char *path);
/* lt_checkpoint_load on every rank (the file must be readable by each: a shared file system, or
   a copy per machine); fails on all ranks if it failed on any, then checks the weights are in
   sync.  Collective. */
LTRAIN_DEF lt_status lt_dist_checkpoint_load(lt_dist *d, lt_gpt *gpt, lt_optim *opt, lt_train_state *st,
                                             const char *path);
LTRAIN_DEF lt_dist_stats lt_dist_get_stats(const lt_dist *d);
/* One line for logs, e.g. "2 ranks (MPI), fp32 all-reduce in 16 MiB buckets" or "1 process". */
LTRAIN_DEF const char *lt_dist_describe(const lt_dist *d);

#ifdef __cplusplus
}
#endif
#endif /* LTRAIN_H */

/* ---- src/02_core.h ---- */
/* =============================================================================================
   IMPLEMENTATION
   ============================================================================================= */
#ifdef LTRAIN_IMPLEMENTATION

/* ==== @@CORE  errors, allocator, arena, RNG, threads ======================================== */
/* Holds: the context, status codes and errors, the allocator, the arena, the RNG, threads,
   overflow-checked sizes, timing.
   Calls: the C library only; the device through ctx->dev. */

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(LTRAIN_MALLOC) && defined(LTRAIN_REALLOC) && defined(LTRAIN_FREE)
#define LT__MALLOC(sz) LTRAIN_MALLOC(sz)
#define LT__REALLOC(p, sz) LTRAIN_REALLOC(p, sz)
#define LT__FREE(p) LTRAIN_FREE(p)
#elif !defined(LTRAIN_MALLOC) && !defined(LTRAIN_REALLOC) && !defined(LTRAIN_FREE)
#define LT__MALLOC(sz) malloc(sz)
#define LT__REALLOC(p, sz) realloc(p, sz)
#define LT__FREE(p) free(p)
#else
#error "ltrain.h: define all of LTRAIN_MALLOC, LTRAIN_REALLOC and LTRAIN_FREE, or none"
#endif

#ifdef LTRAIN_ASSERT
#define LT__ASSERT(x) LTRAIN_ASSERT(x)
#else
#include <assert.h>
#define LT__ASSERT(x) assert(x)
#endif

/* OpenMP pragmas through a macro, so that builds without -fopenmp see nothing (and no
   unknown-pragma warning): LT__OMP(parallel for) is "#pragma omp parallel for". */
#ifdef _OPENMP
#define LT__PRAGMA(x) _Pragma(#x)
#define LT__OMP(x) LT__PRAGMA(omp x)
#else
#define LT__OMP(x)
#endif

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- @@CORE.cpu  the CPU's features --------------------------------------------------------------
   Every op has a plain C kernel, the reference.  Where the compiler is GCC or Clang on x86
   (LT__X86) or AArch64 (LT__ARM) and LTRAIN_NO_SIMD is not defined, hand-written SIMD kernels are
   compiled beside it: on x86 each such function names the instructions it uses with
   LT__TARGET("avx2,fma"), LT__TARGET("avx512f"), ..., so the rest of the file needs no -m flags,
   and it runs only where lt__cpu_has says this CPU has them.  Advanced SIMD (NEON) is part of the
   AArch64 base architecture: every such CPU has it. */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(LTRAIN_NO_SIMD)
#define LT__X86 1
#include <cpuid.h>
#include <immintrin.h>
#define LT__TARGET(s) __attribute__((target(s)))
/* g++ 12 in C++ mode warns "used uninitialized" inside its own avx512fintrin.h for the unmasked
   shifts and conversions (they start from _mm512_undefined_*); their zero-masked forms with every
   lane selected (LT__M16) compute the same thing without the warning, so the header uses those. */
#define LT__M16 ((__mmask16)0xFFFF)
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__) && !defined(LTRAIN_NO_SIMD)
#define LT__ARM 1
#include <arm_neon.h>
#endif

/* The features the kernels ask for, as bits of one set. */
enum {
    LT__CPU_AVX2 = 1 << 0, LT__CPU_FMA = 1 << 1, LT__CPU_F16C = 1 << 2, LT__CPU_AVX512F = 1 << 3,
    LT__CPU_AVX512BW = 1 << 4, LT__CPU_AVX512VL = 1 << 5, LT__CPU_AVX512BF16 = 1 << 6, LT__CPU_NEON = 1 << 7,
    LT__CPU_PROBED = 1 << 8, LT__CPU_AMD = 1 << 9   /* AMD: a fact about the maker, for kernel choices */
};
#ifdef LT__X86
/* __builtin_cpu_supports checks that the OS saves the wider registers too; F16C and AVX512_BF16
   are read with cpuid (older clangs lack those builtin names), F16C only where AVX2 is (its
   registers are the ymm ones) and AVX512_BF16 only where AVX512F is. */
static unsigned lt__cpu_probe(void) {
    unsigned a = 0, b = 0, c = 0, d = 0, m = LT__CPU_PROBED;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        m |= LT__CPU_AVX2;
        if (__get_cpuid(1, &a, &b, &c, &d) && ((c >> 29) & 1u)) m |= LT__CPU_F16C;   /* CPUID.1:ECX bit 29 */
    }
    if (__builtin_cpu_supports("fma")) m |= LT__CPU_FMA;
    if (__builtin_cpu_supports("avx512f")) {
        m |= LT__CPU_AVX512F;
        if (__get_cpuid_max(0, NULL) >= 7) {
            __cpuid_count(7, 1, a, b, c, d);
            if ((a >> 5) & 1u) m |= LT__CPU_AVX512BF16;                              /* CPUID.(7,1):EAX bit 5 */
        }
    }
    __cpuid(0, a, b, c, d);
    if (b == 0x68747541u) m |= LT__CPU_AMD;   /* "Auth"enticAMD */
    if (__builtin_cpu_supports("avx512bw")) m |= LT__CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512vl")) m |= LT__CPU_AVX512VL;
    return m;
}
/* The features named in a comma-separated list such as LT_CPU_OFF's "avx512_bf16,f16c" (unknown
   names are ignored): a user or a benchmark turns them off to run, on one machine, the kernels
   another kind of CPU would get (a CPU without AVX512_BF16, an AVX2-only one). */
static unsigned lt__cpu_named(const char *list) {
    static const struct { const char *name; unsigned bit; } names[] = {
        {"avx2", LT__CPU_AVX2}, {"fma", LT__CPU_FMA}, {"f16c", LT__CPU_F16C}, {"avx512f", LT__CPU_AVX512F},
        {"avx512bw", LT__CPU_AVX512BW}, {"avx512vl", LT__CPU_AVX512VL}, {"avx512_bf16", LT__CPU_AVX512BF16}};
    unsigned m = 0;
    size_t i, n;
    while (list && *list) {
        n = strcspn(list, ",");
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && strncmp(list, names[i].name, n) == 0) m |= names[i].bit;
        list += n + (list[n] == ',');
    }
    return m;
}
/* Does this CPU have every feature of `want` (LT__CPU_* bits)?  cpuid can take microseconds (it
   traps in a virtual machine), so the answer, a fact about the machine and the same for every
   caller, is kept after the first call; features LT_CPU_OFF names count as absent.  AVX-512
   without AVX2 is not a CPU that exists: turning AVX2 off turns AVX-512 off too. */
static int lt__cpu_has(unsigned want) {
    static unsigned known; /* 0 until probed; written whole, atomically */
    unsigned m = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!m) {
        unsigned off = lt__cpu_named(getenv("LT_CPU_OFF"));
        if (off & (LT__CPU_AVX2 | LT__CPU_FMA)) off |= LT__CPU_AVX512F;
        if (off & LT__CPU_AVX512F) off |= LT__CPU_AVX512BW | LT__CPU_AVX512VL | LT__CPU_AVX512BF16;
        m = lt__cpu_probe() & ~off;
        __atomic_store_n(&known, m, __ATOMIC_RELAXED);
    }
    return (m & want) == want;
}
/* Bytes of one core's cache at `level` (1: L1 data, 2: L2) as cpuid describes it: the cache
   descriptors of leaf 4 (Intel) or 0x8000001D (AMD) give ways x partitions x line x sets of each
   cache; 0 where the CPU does not say (the caller keeps its defaults).  Kept after the first call. */
static int64_t lt__cpu_cache(int level) {
    static int64_t known[3] = {-1, -1, -1};   /* -1: not asked yet; written whole */
    int64_t v;
    if (level < 1 || level > 2) return 0;
    v = __atomic_load_n(&known[level], __ATOMIC_RELAXED);
    if (v < 0) {
        unsigned a = 0, b = 0, c = 0, d = 0, leaf = 4, i;
        if (lt__cpu_has(LT__CPU_AMD)) {
            __cpuid(0x80000000u, a, b, c, d);
            leaf = a >= 0x8000001Du ? 0x8000001Du : 0;
        } else if (__get_cpuid_max(0, NULL) < 4) leaf = 0;
        v = 0;
        for (i = 0; leaf && i < 16; i++) {
            __cpuid_count(leaf, i, a, b, c, d);
            if ((a & 31u) == 0) break;                                      /* no more caches */
            if ((a & 31u) != 2 && ((a >> 5) & 7u) == (unsigned)level)       /* data or unified */
                v = (int64_t)((b >> 22) + 1) * (((b >> 12) & 1023u) + 1) * ((b & 4095u) + 1) * ((int64_t)c + 1);
        }
        __atomic_store_n(&known[level], v, __ATOMIC_RELAXED);
    }
    return v;
}
#elif defined(LT__ARM)
static int lt__cpu_has(unsigned want) { return (want & ~(unsigned)LT__CPU_NEON) == 0; }
static int64_t lt__cpu_cache(int level) { (void)level; return 0; }
#else
static int lt__cpu_has(unsigned want) { return want == 0; }
static int64_t lt__cpu_cache(int level) { (void)level; return 0; }
#endif

/* The kernel sets (the GEMM's micro-kernels, @@GEMM, and the ops' SIMD kernels of the same
   instructions, @@OPS): the best one this CPU runs, or the one LT_GEMM names. */
enum { LT__GEMM_PORTABLE = 0, LT__GEMM_AVX2 = 1, LT__GEMM_AVX512 = 2, LT__GEMM_NEON = 3, LT__GEMM_NKERNELS = 4 };
/* Does this CPU run kernel set id (the GEMM's micro-kernel, @@GEMM, and the ops' kernels of the
   same instructions)? */
static int lt__gemm_supported(int id) {
    if (id == LT__GEMM_PORTABLE) return 1;
#ifdef LT__X86
    if (id == LT__GEMM_AVX2) return lt__cpu_has(LT__CPU_AVX2 | LT__CPU_FMA);
    if (id == LT__GEMM_AVX512) return lt__cpu_has(LT__CPU_AVX512F | LT__CPU_AVX2);
#endif
#ifdef LT__ARM
    if (id == LT__GEMM_NEON) return lt__cpu_has(LT__CPU_NEON);
#endif
    return 0;
}

/* The best kernel this CPU runs, or the one LT_GEMM names (when this CPU runs it). */
static int lt__gemm_pick(void) {
    const char *e = getenv("LT_GEMM");
    int id;
    if (e) {
        id = strcmp(e, "portable") == 0 ? LT__GEMM_PORTABLE : strcmp(e, "avx2") == 0 ? LT__GEMM_AVX2
           : strcmp(e, "avx512") == 0 ? LT__GEMM_AVX512 : strcmp(e, "neon") == 0 ? LT__GEMM_NEON : -1;
        if (id >= 0 && lt__gemm_supported(id)) return id;
    }
    for (id = LT__GEMM_NKERNELS - 1; id > 0; id--)
        if (lt__gemm_supported(id)) return id;
    return LT__GEMM_PORTABLE;
}

/* ---- @@CORE.arena  the arena ----------------------------------------------------------------- */
/* The arena: a list of big chunks, bump-allocated, 64-byte aligned.  Reset keeps the chunks,
   so after the first step a training loop allocates nothing. */
typedef struct lt__chunk {
    struct lt__chunk *next;
    size_t cap, used;
    unsigned char *mem;          /* 64-byte aligned start inside the allocation */
} lt__chunk;

typedef struct {
    lt__chunk *head;             /* chunk being filled */
    lt__chunk *first;
    size_t used, peak;           /* bytes handed out (for lt_arena_used / peak) */
} lt__arena;

/* lt_compile's recording (@@COMPILE) as a seam: while it records a step, ctx->cap_hooks points at
   its two recorders, so the parts above it record without naming it (NULL otherwise: one test). */
typedef struct lt__capture_hooks {
    void (*input)(lt_ctx *ctx, lt_tensor *t, const float *src);  /* lt_tensor_new / lt_tensor_from made t */
    void (*node)(lt_ctx *ctx, lt__node *nd);                      /* lt__run ran op nd */
} lt__capture_hooks;

/* A recompute segment (lt_recompute_begin .. lt_recompute_end, @@TAPE): the ops run inside it
   are ctx->seg_nodes[first .. first+n-1]; the values they made (all but out's) are dropped at its
   end and made again by running their forward kernels once more in backward (eager: into the
   scratch arena, from the RNG state it began with). */
typedef struct lt__seg {
    int first, n;                /* its ops in ctx->seg_nodes */
    int tape_first, tape_end;    /* its records on the tape: tape[tape_first .. tape_end-1] */
    lt_rng rng;                  /* the RNG when it began: dropout draws the same masks again */
    lt_tensor *out;              /* the value kept (NULL until it ends) */
    size_t scratch_bytes;        /* values it made in the scratch arena (eager) */
} lt__seg;

struct lt_ctx {
    lt_status status;
    char msg[512];
    lt_rng rng;
    int training, grad_enabled;
    lt__arena arena;
    unsigned gen;                /* the arena's generation: lt_reset adds one (stale tensors, lt__usable) */
    /* the tape: nodes in recording order, in the arena */
    lt__node **tape;
    int tape_len, tape_cap;
    int tape_done;               /* lt_backward ran: the next op resets the arena */
    void *grad_free;             /* lt_backward: dead activation gradients, for reuse (lt__grad_w) */
    /* parameters */
    lt_tensor **params;
    int n_params, cap_params;
    float *param_block;          /* after lt_params_pack: data of all params, then grads */
    size_t param_floats;
    const char *scope;           /* lt_scope: where in the model ops are being recorded */
    lt_dtype precision;          /* lt_set_precision: LT_F32, or the type matmuls compute in (@@AMP) */
    int profiling;               /* lt_set_profiling: time every kernel by op */
    double prof_s[2][64];        /* seconds in forward [0] / backward [1] kernels, by op row */
    int64_t prof_n[2][64];
    struct lt__capture *cap;     /* non-NULL while lt_compile records a step */
    const lt__capture_hooks *cap_hooks; /* ... and then its recorders (@@COMPILE) */
    int dry;                     /* lt_compile's recording pass: ops are recorded, kernels not run */
    lt_device device;            /* lt_set_device: where ops run (LT_CPU unless LTRAIN_CUDA chose LT_CUDA) */
    const struct lt__device *dev;/* the device's table (NULL on LT_CPU): the device seam below */
    struct lt__cuda *cuda;       /* LT_CUDA: stream, cuBLAS, device arena, parameter mirror (@@CUDA) */
    /* recompute segments (@@TAPE) */
    lt__seg *segs;
    int n_segs, cap_segs;
    int seg_open;                /* a segment is open (the last of segs) */
    lt__node **seg_nodes;        /* the ops run inside segments, in order */
    float **seg_data;            /* ... their outputs' values while dropped (NULL in the tensor) */
    int n_seg_nodes, cap_seg_nodes;
    lt__arena scratch;           /* eager, on the CPU: the values made inside the open segment */
    int to_scratch;              /* values go to the scratch arena (inside a segment, eager) */
    size_t budget;               /* lt_set_memory_budget: the planned block's bytes at most (0: none) ... */
    double budget_frac;          /* ... or this fraction of the plan without recomputation (0: none) */
};

/* ---- @@CORE.device  the device seam ------------------------------------------------------- */
/* The device seam: what a backend that runs ops away from the host provides, one table of
   functions.  The CPU is the absence of a device: an LT_CPU context has ctx->dev NULL and every
   call below is skipped (the host code after it is the reference).  lt_set_device installs a
   backend's table in ctx->dev (and in lt__devices, for the calls that only have a tensor);
   from then on the CPU parts call ctx->dev->fn where a device does the work.  @@CUDA fills the
   one backend there is (lt__cuda_device); another plugs in here with a table of its own.
   A plan keeps the table of the device that recorded its graph (lt_plan.graph_dev), an
   optimizer that of its device state (lt_optim.dev), since either may outlive the context's
   device. */
typedef void (*lt__kernel)(lt__node *nd);
typedef struct lt__device {
    const char *name;
    /* the context's device state */
    void (*destroy)(lt_ctx *ctx);                            /* free it all (lt_ctx_destroy) */
    void (*reset)(lt_ctx *ctx);                              /* with the arena (lt_reset) */
    void (*synchronize)(lt_ctx *ctx);                        /* wait for queued work; its errors */
    const char *(*describe)(lt_ctx *ctx);
    size_t (*arena_bytes)(const lt_ctx *ctx);
    void (*set_tf32)(lt_ctx *ctx, int on);
    /* values: a device address in t->data / t->grad */
    void *(*alloc)(lt_ctx *ctx, size_t bytes);               /* the device arena */
    void (*fill_values)(lt_ctx *ctx, float *dst, const float *src, size_t n); /* src (host) or zeros */
    void (*fill)(lt_tensor *t, float v);                     /* lt_fill */
    float (*item)(const lt_tensor *t);                       /* one value back to the host */
    lt_status (*read)(lt_ctx *ctx, const lt_tensor *t, int grad, float *out);  /* lt_tensor_read */
    const float *(*host_row)(lt_ctx *ctx, const float *dev, size_t n);          /* n values to the host */
    /* parameters: host copies and the device's */
    void (*sync_params)(lt_ctx *ctx);                        /* the device's values to the host copies */
    void (*params_changed)(lt_ctx *ctx);                     /* the host copies were written */
    /* ops and the tape */
    const lt__kernel *op_fwd, *op_bwd;                       /* by row of the op table (@@OPS) */
    void (*ids)(lt_ctx *ctx, lt__node *nd, const int32_t *ids, int64_t n);     /* nd->ids_dev */
    lt_status (*seed)(lt_ctx *ctx, lt_tensor *loss, float seed);              /* d(loss) += seed */
    void (*zero_grad)(lt_ctx *ctx);
    /* optimizer, clipping, loss scaling */
    lt_status (*optim_step)(lt_optim *opt, double lr);
    void (*optim_pull)(lt_optim *opt);                       /* the state back to the host */
    void (*optim_free)(lt_optim *opt);
    double (*clip)(lt_ctx *ctx, lt_paramset ps, double limit, int mode);       /* 0 norm, 1 clip norm, 2 clip value */
    int (*unscale)(lt_ctx *ctx, lt_paramset ps, float inv);                    /* 1: an inf/NaN was seen */
    /* the compile mode: the step recorded as the device's graph */
    lt_plan *(*compile)(lt_ctx *ctx, lt_plan *p);
    lt_status (*graph_run)(lt_plan *p, float seed, float *loss);
    void (*graph_free)(lt_plan *p);
} lt__device;
/* The table of each device lt_set_device has installed, by lt_device (LT_CPU: NULL).  A tensor
   is on a device only after that, so lt_item and lt_fill find its table here. */
static const lt__device *lt__devices[LT_NDEVICES];

#define LT__STATUS_TEXT(name, text) text,
static const char *const lt__status_text[] = {LT_STATUS_LIST(LT__STATUS_TEXT)};
#undef LT__STATUS_TEXT

/* ---- @@CORE.errors  errors and overflow-checked sizes ---------------------------------------- */
LTRAIN_DEF const char *lt_status_name(lt_status s) {
    return (s >= 0 && s < LT_STATUS_COUNT) ? lt__status_text[s] : "unknown status";
}
LTRAIN_DEF int lt_failed(const lt_ctx *ctx) { return !ctx || ctx->status != LT_OK; }
LTRAIN_DEF lt_status lt_status_of(const lt_ctx *ctx) { return ctx ? ctx->status : LT_ERR_ARG; }
LTRAIN_DEF const char *lt_error(const lt_ctx *ctx) { return ctx ? ctx->msg : "no context"; }
LTRAIN_DEF void lt_clear_error(lt_ctx *ctx) {
    if (ctx) { ctx->status = LT_OK; ctx->msg[0] = 0; }
}

/* The first error sticks: later ones are dropped so the message names the root cause. */
LTRAIN_DEF lt_status lt_set_error(lt_ctx *ctx, lt_status s, const char *fmt, ...) {
    va_list ap;
    if (!ctx) return s;
    if (ctx->status != LT_OK) return ctx->status;
    ctx->status = s;
    va_start(ap, fmt);
    vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
    va_end(ap);
    return s;
}

LTRAIN_DEF int lt_mul_size(size_t a, size_t b, size_t *out) {
    if (!out) return 0;
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}
LTRAIN_DEF int lt_add_size(size_t a, size_t b, size_t *out) {
    if (!out) return 0;
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}

static char *lt__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = (char *)LT__MALLOC(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* ---- @@CORE.utf8  UTF-8: the one validator ----------------------------------------------------
   UTF-8 as RFC 3629 defines it: a scalar value U+0000..U+10FFFF in its shortest form.
     U+0000..U+007F      0xxxxxxx
     U+0080..U+07FF      110xxxxx 10xxxxxx                    lead C2..DF (C0, C1: overlong)
     U+0800..U+FFFF      1110xxxx 10xxxxxx 10xxxxxx           after E0 the second byte is A0..BF
                                                              (lower: overlong); after ED 80..9F
                                                              (higher: the surrogates D800..DFFF)
     U+10000..U+10FFFF   11110xxx 10xxxxxx 10xxxxxx 10xxxxxx  after F0 90..BF (lower: overlong);
                                                              after F4 80..8F (higher: past U+10FFFF)
   Leads F5..FF and stray continuation bytes (80..BF) start nothing. */

/* The valid sequence at s[0..n) (n >= 1): its length (1..4) with its code point in *cp (when cp is
   not NULL), or 0 when s does not start one (a bad lead, a bad or missing continuation byte). */
static int lt__utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    uint32_t v;
    int len, k;
    if (c < 0x80) { if (cp) *cp = c; return 1; }
    if (c >= 0xC2 && c <= 0xDF) { len = 2; v = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; v = c & 0x0F; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; v = c & 0x07; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
    else return 0;
    if (n < (size_t)len || s[1] < lo || s[1] > hi) return 0;
    for (k = 1; k < len; k++) {
        if (s[k] < 0x80 || s[k] > 0xBF) return 0;
        v = (v << 6) | (s[k] & 0x3F);
    }
    if (cp) *cp = v;
    return len;
}

/* The offset of the first byte of s[0..n) that starts no valid sequence, or n when all of it is UTF-8. */
static size_t lt__utf8_bad_at(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int k = lt__utf8_next(s + i, n - i, NULL);
        if (!k) return i;
        i += (size_t)k;
    }
    return n;
}

/* -- @@CORE.threads  threads: the one global setting ------------------------------------------ */
#ifdef _OPENMP
static int lt__threads_chosen;   /* lt_set_threads was called: the count is the caller's from then on */
#endif

LTRAIN_DEF void lt_set_threads(int n) {
#ifdef _OPENMP
    if (n > 0) { omp_set_num_threads(n); lt__threads_chosen = 1; }
#else
    (void)n;
#endif
}
LTRAIN_DEF int lt_get_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* Busy machines.  OpenMP threads wait for each other by spinning (libgomp: some 3 ms before they
   sleep; OMP_WAIT_POLICY and GOMP_SPINCOUNT change that, but the runtime reads them once, when it
   loads, and has no call to change it later, so a library cannot).  With one thread per core while
   other programs keep some cores busy, every barrier waits for a thread the scheduler has set
   aside while the others spin on cores the other programs need: a step takes several times as
   long.  So lt_ctx_create counts the cores other work keeps busy, the smaller of the runnable
   threads now (/proc/stat's procs_running, less this one) and the 1-minute load average rounded
   (both must see the work: a moment's blip or a finished job does not count), and runs on the cores
   left, at least one, while neither OMP_NUM_THREADS nor lt_set_threads chose a count and
   LTRAIN_BUSY=ignore is not in the environment.  Without /proc (not Linux) nothing changes. */
#ifdef _OPENMP
static int lt__proc_number(const char *path, const char *key, double *out) {
    char line[256];
    size_t klen = strlen(key);
    int found = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0) found = sscanf(line + klen, "%lf", out) == 1;
    fclose(f);
    return found;
}
/* The threads for procs cores when `running` threads are runnable (this one included) and the
   1-minute load average is `load`. */
static int lt__threads_for(int procs, double running, double load) {
    double others = running - 1 < load + 0.5 ? running - 1 : load + 0.5;
    int n = procs - (others >= 1 ? (int)others : 0);
    return n >= 1 ? n : 1;
}
static void lt__threads_for_load(void) {
    const char *e = getenv("LTRAIN_BUSY");
    double running, load;
    if (lt__threads_chosen || getenv("OMP_NUM_THREADS") || (e && strcmp(e, "ignore") == 0)) return;
    if (!lt__proc_number("/proc/stat", "procs_running", &running) || !lt__proc_number("/proc/loadavg", "", &load))
        return;
    omp_set_num_threads(lt__threads_for(omp_get_num_procs(), running, load));
}
#else
static void lt__threads_for_load(void) {}
#endif

/* -- @@CORE.rng  RNG: xoshiro256** seeded through splitmix64 ------------------------------------ */
static uint64_t lt__splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
LTRAIN_DEF void lt_rng_seed(lt_rng *r, uint64_t seed) {
    int i;
    if (!r) return;
    for (i = 0; i < 4; i++) r->s[i] = lt__splitmix64(&seed);
}
static uint64_t lt__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
LTRAIN_DEF uint64_t lt_rng_u64(lt_rng *r) {
    uint64_t *s, out, t;
    if (!r) return 0;            /* (then uniform draws 0 and normal 0) */
    s = r->s; out = lt__rotl(s[1] * 5, 7) * 9; t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = lt__rotl(s[3], 45);
    return out;
}
/* 53 random bits -> a double in [0,1) */
LTRAIN_DEF double lt_rng_uniform(lt_rng *r) { return (double)(lt_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }
/* Box-Muller; one draw per call keeps the state a plain 4 words (no cached second value). */
LTRAIN_DEF double lt_rng_normal(lt_rng *r) {
    double u1 = 1.0 - lt_rng_uniform(r), u2 = lt_rng_uniform(r); /* u1 in (0,1] */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
LTRAIN_DEF lt_rng *lt_ctx_rng(lt_ctx *ctx) { return ctx ? &ctx->rng : NULL; }

/* -- arena -------------------------------------------------------------------------------------- */
#define LT__ALIGN 64
#define LT__CHUNK_MIN ((size_t)16 << 20)

/* bytes from arena a of ctx (the arena, or the scratch arena of recompute segments); the peak
   counts both together */
static void *lt__arena_take(lt_ctx *ctx, lt__arena *a, size_t bytes) {
    lt__chunk *c;
    size_t need;
    if (!lt_add_size(bytes, LT__ALIGN - 1, &need)) goto oom;
    need &= ~(size_t)(LT__ALIGN - 1);
    if (need == 0) need = LT__ALIGN;
    /* use the current chunk, or a later one kept from an earlier step (those are empty) */
    for (c = a->head; c; c = c->next) {
        if (c->cap - c->used >= need) {
            void *p = c->mem + c->used;
            c->used += need;
            a->head = c;
            a->used += need;
            if (ctx->arena.used + ctx->scratch.used > ctx->arena.peak) ctx->arena.peak = ctx->arena.used + ctx->scratch.used;
            return p;
        }
    }
    {
        size_t cap = need > LT__CHUNK_MIN ? need : LT__CHUNK_MIN, total;
        unsigned char *raw;
        if (!lt_add_size(cap, sizeof(lt__chunk) + LT__ALIGN, &total)) goto oom;
        raw = (unsigned char *)LT__MALLOC(total);
        if (!raw) goto oom;
        c = (lt__chunk *)raw;
        c->mem = raw + sizeof(lt__chunk);
        c->mem += (LT__ALIGN - ((uintptr_t)c->mem % LT__ALIGN)) % LT__ALIGN;
        c->cap = cap; c->used = need; c->next = NULL;
        /* append at the end of the list so reset reuses chunks in order */
        if (!a->first) a->first = c;
        else { lt__chunk *t = a->first; while (t->next) t = t->next; t->next = c; }
        a->head = c;
        a->used += need;
        if (ctx->arena.used + ctx->scratch.used > ctx->arena.peak) ctx->arena.peak = ctx->arena.used + ctx->scratch.used;
        return c->mem;
    }
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "out of memory: the arena could not grow by %zu bytes "
                 "(hint: a smaller batch or sequence length needs less)", bytes);
    return NULL;
}

static void *lt__arena_alloc(lt_ctx *ctx, size_t bytes) { return lt__arena_take(ctx, &ctx->arena, bytes); }
/* Values (tensor data, saved buffers) on the CPU: the scratch arena inside a recompute segment
   (eager), the arena otherwise. */
static void *lt__arena_values(lt_ctx *ctx, size_t bytes) {
    return lt__arena_take(ctx, ctx->to_scratch ? &ctx->scratch : &ctx->arena, bytes);
}
/* Does p point into arena a's chunks? */
static int lt__arena_owns(const lt__arena *a, const void *p) {
    const lt__chunk *c;
    for (c = a->first; c; c = c->next)
        if ((const unsigned char *)p >= c->mem && (const unsigned char *)p < c->mem + c->cap) return 1;
    return 0;
}

static void lt__arena_reset(lt__arena *a) {
    lt__chunk *c;
    for (c = a->first; c; c = c->next) c->used = 0;
    a->head = a->first;
    a->used = 0;
}

static void lt__arena_free(lt__arena *a) {
    lt__chunk *c = a->first;
    while (c) { lt__chunk *n = c->next; LT__FREE(c); c = n; }
    a->first = a->head = NULL;
    a->used = 0;
}

/* (the scratch arena of recompute segments included) */
LTRAIN_DEF size_t lt_arena_used(const lt_ctx *ctx) { return ctx ? ctx->arena.used + ctx->scratch.used : 0; }
LTRAIN_DEF size_t lt_arena_peak(const lt_ctx *ctx) { return ctx ? ctx->arena.peak : 0; }

/* -- @@CORE.context  context ---------------------------------------------------------------------- */
LTRAIN_DEF lt_ctx *lt_ctx_create(uint64_t seed) {
    lt_ctx *ctx = (lt_ctx *)LT__MALLOC(sizeof(lt_ctx));
    if (!ctx) return NULL;
    memset(ctx, 0, sizeof *ctx);
    lt_rng_seed(&ctx->rng, seed);
    ctx->training = 1;
    ctx->grad_enabled = 1;
    ctx->gen = 1;
    lt__threads_for_load();
    return ctx;
}

LTRAIN_DEF void lt_set_training(lt_ctx *ctx, int on) { if (ctx) ctx->training = on != 0; }
/* Wall-clock seconds (omp_get_wtime with OpenMP, else processor time: C99 has no wall clock). */
static double lt__now(void) {
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

LTRAIN_DEF const char *lt_scope(lt_ctx *ctx, const char *scope) {
    const char *old;
    if (!ctx) return NULL;
    old = ctx->scope;
    ctx->scope = scope;
    return old;
}
LTRAIN_DEF void lt_set_grad_enabled(lt_ctx *ctx, int on) { if (ctx) ctx->grad_enabled = on != 0; }

/* Drop the tape and all arena memory; parameter gradients stay. */
LTRAIN_DEF void lt_reset(lt_ctx *ctx) {
    if (!ctx) return;
    lt__arena_reset(&ctx->arena);
    ctx->gen++;                  /* every arena tensor made so far is stale from here on */
    if (ctx->dev) ctx->dev->reset(ctx);
    ctx->tape_len = 0;
    ctx->tape_done = 0;
    ctx->grad_free = NULL;
    lt__arena_reset(&ctx->scratch);
    ctx->n_segs = ctx->n_seg_nodes = 0;
    ctx->seg_open = ctx->to_scratch = 0;
}

/* -- devices: names, and the calls every build has (through the seam; LT_CPU: nothing to do) ------- */
LTRAIN_DEF const char *lt_device_name(lt_device d) {
    return d == LT_CPU ? "cpu" : d == LT_CUDA ? "cuda" : "unknown device";
}
LTRAIN_DEF int lt_device_parse(const char *name, lt_device *out) {
    if (!name || !out) return 0;
    if (strcmp(name, "cpu") == 0) { *out = LT_CPU; return 1; }
    if (strcmp(name, "cuda") == 0 || strcmp(name, "gpu") == 0) { *out = LT_CUDA; return 1; }
    return 0;
}
LTRAIN_DEF lt_device lt_get_device(const lt_ctx *ctx) { return ctx ? ctx->device : LT_CPU; }
LTRAIN_DEF const char *lt_device_describe(lt_ctx *ctx) { return ctx && ctx->dev ? ctx->dev->describe(ctx) : "cpu"; }
LTRAIN_DEF size_t lt_device_arena_bytes(const lt_ctx *ctx) { return ctx && ctx->dev ? ctx->dev->arena_bytes(ctx) : 0; }
LTRAIN_DEF void lt_set_tf32(lt_ctx *ctx, int on) {
    if (ctx && ctx->dev) ctx->dev->set_tf32(ctx, on);
}
LTRAIN_DEF lt_status lt_device_synchronize(lt_ctx *ctx) {
    if (!ctx) return LT_ERR_ARG;
    if (ctx->dev && !lt_failed(ctx)) ctx->dev->synchronize(ctx);
    return ctx->status;
}
/* ---- src/03_half.h ---- */
/* ==== @@HALF  16-bit numbers: fp16/bf16 conversions (scalar reference, then SIMD) ============== */
/* Holds: float32 <-> fp16/bf16 conversions, one value and arrays, the scalar reference first and
   the SIMD versions after; rounding a float32 to a 16-bit precision; the CPU-feature probe.
   Calls: @@CORE. */

static uint32_t lt__f32_bits(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
static float lt__bits_f32(uint32_t u) { float x; memcpy(&x, &u, sizeof x); return x; }

/* ---- @@HALF.scalar  scalar conversions: the reference every kernel below is tested against --- */
/* torch 1.13: c10::BFloat16's round_to_nearest_even for numbers; ATen's vectorised CPU cast
   (cvtfp32_bf16) writes 0xFFFF for every NaN.  The NaN test comes first: u + 0x7FFF would wrap
   for negative NaNs. */
LTRAIN_DEF uint16_t lt_f32_to_bf16(float x) {
    uint32_t u = lt__f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFu;
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

LTRAIN_DEF float lt_bf16_to_f32(uint16_t h) { return lt__bits_f32((uint32_t)h << 16); }

/* As c10's fp16_ieee_from_fp32_value, in integers: the exponent is rebased from 127 to 15 and the
   13 (normal) or 14..24 (subnormal) dropped mantissa bits round to nearest even; a carry out of
   the mantissa moves up the exponent, up to inf. */
LTRAIN_DEF uint16_t lt_f32_to_f16(float x) {
    uint32_t u = lt__f32_bits(x), a = u & 0x7FFFFFFFu;
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);     /* NaN: quiet, payload dropped */
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);    /* >= 65520 (max 65504 + half ulp) */
    if (a >= 0x38800000u) {                                      /* >= 2^-14: normal */
        uint32_t r = a - ((127u - 15u) << 23);
        return (uint16_t)(sign | ((r + 0x0FFFu + ((r >> 13) & 1u)) >> 13));
    }
    if (a <= 0x33000000u) return sign;                           /* <= 2^-25 (a tie) -> 0 */
    {   /* subnormal: round(a's value / 2^-24); the mantissa with its implicit 1 is m·2^(e-150) */
        uint32_t e = a >> 23, m = (a & 0x007FFFFFu) | 0x00800000u, s = 126u - e; /* s in 14..24 */
        uint32_t q = m >> s, rem = m & ((1u << s) - 1u), half = 1u << (s - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;        /* q = 0x400 is 2^-14, encoded right */
        return (uint16_t)(sign | q);
    }
}

LTRAIN_DEF float lt_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu) return lt__bits_f32(sign | 0x7F800000u | (m ? 0x00400000u | (m << 13) : 0u));
    if (e) return lt__bits_f32(sign | ((e + 112u) << 23) | (m << 13));
    if (!m) return lt__bits_f32(sign);
    for (e = 113; !(m & 0x400u); e--) m <<= 1;                   /* subnormal m·2^-24: normalise */
    return lt__bits_f32(sign | (e << 23) | ((m & 0x3FFu) << 13));
}

/* Stochastic rounding: r uniform in [0, 2^16) added to the bits, then truncated (inf stays inf:
   0x7F800000 + r truncates to 0x7F80; the largest finite values may round up to inf). */
static uint16_t lt__bf16_sr(float x, uint32_t r) {
    uint32_t u = lt__f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFu;
    return (uint16_t)((u + r) >> 16);
}
LTRAIN_DEF uint16_t lt_f32_to_bf16_stochastic(float x, lt_rng *rng) {
    return lt__bf16_sr(x, (uint32_t)(lt_rng_u64(rng) >> 48));
}
LTRAIN_DEF void lt_f32_to_bf16_stochastic_array(const float *in, uint16_t *out, size_t n, lt_rng *rng) {
    size_t i;
    uint64_t r = 0;
    for (i = 0; i < n; i++) {
        if (i % 4 == 0) r = lt_rng_u64(rng);
        out[i] = lt__bf16_sr(in[i], (uint32_t)(r >> (48 - 16 * (i % 4))) & 0xFFFFu);
    }
}

/* ---- @@HALF.arrays  array kernels --------------------------------------------------------------- */
/* Four conversions (LT__CV_*) by up to four kernels (LT__K_*); lt__cv_run runs one pair and
   returns 0 when that kernel lacks that conversion, so the tests can hold every kernel the CPU
   has against the scalar loop. */
enum { LT__CV_TO_BF16 = 0, LT__CV_FROM_BF16, LT__CV_TO_F16, LT__CV_FROM_F16, LT__CV_COUNT };
enum { LT__K_SCALAR = 0, LT__K_AVX2, LT__K_AVX512, LT__K_AVX512BF16, LT__K_COUNT };

static void lt__to_bf16_scalar(const float *in, uint16_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = lt_f32_to_bf16(in[i]);
}
static void lt__from_bf16_scalar(const uint16_t *in, float *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = lt_bf16_to_f32(in[i]);
}
static void lt__to_f16_scalar(const float *in, uint16_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = lt_f32_to_f16(in[i]);
}
static void lt__from_f16_scalar(const uint16_t *in, float *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = lt_f16_to_f32(in[i]);
}

/* ---- fast paths: AVX2 / F16C and AVX-512, the scalar loops' bits ------------------------------ */
#ifdef LT__X86
#if defined(__GNUC__) && !defined(__clang__) && defined(__cplusplus)
/* g++ 12 warns about the AVX-512 headers' own _mm512_undefined_* (GCC bug 105593) where they
   are inlined, i.e. in the kernels below; the warning is off up to the end of the kernels. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define LT__AMP_POP_DIAGNOSTIC 1
#endif

/* bf16 rounding on 8 lanes of float bits: the scalar formula; NaN lanes OR in 0xFFFF. */
static LT__TARGET("avx2") __m256i lt__bf16_round8(__m256i u) {
    __m256i r = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF)),
                                     _mm256_set1_epi32(0x7F800000));
    r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), r), 16);
    return _mm256_or_si256(r, _mm256_srli_epi32(nan, 16));
}
static LT__TARGET("avx2") void lt__to_bf16_avx2(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = lt__bf16_round8(_mm256_loadu_si256((const __m256i *)(const void *)(in + i)));
        __m256i b = lt__bf16_round8(_mm256_loadu_si256((const __m256i *)(const void *)(in + i + 8)));
        /* packus interleaves 128-bit halves: a0-3 b0-3 a4-7 b4-7; the permute restores order */
        __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), p);
    }
    lt__to_bf16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx2") void lt__from_bf16_avx2(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(in + i)));
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm256_slli_epi32(h, 16));
    }
    lt__from_bf16_scalar(in + i, out + i, n - i);
}
/* vcvtps2ph rounds like the scalar code (imm 0: nearest even, not MXCSR) but keeps NaN payloads:
   blocks holding a NaN are redone by the scalar code. */
static LT__TARGET("avx2,f16c") void lt__to_f16_avx2(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(in + i);
        _mm_storeu_si128((__m128i *)(void *)(out + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) lt__to_f16_scalar(in + i, out + i, 8);
    }
    lt__to_f16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx2,f16c") void lt__from_f16_avx2(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(in + i))));
    lt__from_f16_scalar(in + i, out + i, n - i);
}

static LT__TARGET("avx512f") __m512i lt__bf16_round16(__m512i u) {
    __m512i r = _mm512_and_si512(_mm512_maskz_srli_epi32(LT__M16, u, 16), _mm512_set1_epi32(1));
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                            _mm512_set1_epi32(0x7F800000));
    r = _mm512_maskz_srli_epi32(LT__M16, _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), r), 16);
    return _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0xFFFF));
}
static LT__TARGET("avx512f") void lt__to_bf16_avx512(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i r = lt__bf16_round16(_mm512_loadu_si512((const void *)(in + i)));
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_cvtepi32_epi16(r));
    }
    lt__to_bf16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx512f") void lt__from_bf16_avx512(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i h = _mm512_maskz_cvtepu16_epi32(LT__M16, _mm256_loadu_si256((const __m256i *)(const void *)(in + i)));
        _mm512_storeu_si512((void *)(out + i), _mm512_maskz_slli_epi32(LT__M16, h, 16));
    }
    lt__from_bf16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx512f") void lt__to_f16_avx512(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(in + i);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_maskz_cvtps_ph(LT__M16, x, _MM_FROUND_TO_NEAREST_INT));
        if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q)) lt__to_f16_scalar(in + i, out + i, 16);
    }
    lt__to_f16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx512f") void lt__from_f16_avx512(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(LT__M16, _mm256_loadu_si256((const __m256i *)(const void *)(in + i))));
    lt__from_f16_scalar(in + i, out + i, n - i);
}
/* out = float(16 bit(in)) in registers (lt__round16's fast path): bf16 with the integer formula;
   fp16 through vcvtps2ph / vcvtph2ps, blocks holding a NaN redone by the scalar code (canonical
   NaN, as lt_f32_to_f16).  in == out allowed. */
static LT__TARGET("avx512f") void lt__round_bf16_avx512(const float *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i r = lt__bf16_round16(_mm512_loadu_si512((const void *)(in + i)));
        _mm512_storeu_si512((void *)(out + i), _mm512_maskz_slli_epi32(LT__M16, r, 16));
    }
    for (; i < n; i++) out[i] = lt_bf16_to_f32(lt_f32_to_bf16(in[i]));
}
static LT__TARGET("avx512f") void lt__round_f16_avx512(const float *in, float *out, size_t n) {
    size_t i = 0, j;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(in + i);
        if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q))
            for (j = i; j < i + 16; j++) out[j] = lt_f16_to_f32(lt_f32_to_f16(in[j]));
        else
            _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(LT__M16, _mm512_maskz_cvtps_ph(LT__M16, x, _MM_FROUND_TO_NEAREST_INT)));
    }
    for (; i < n; i++) out[i] = lt_f16_to_f32(lt_f32_to_f16(in[i]));
}
/* vcvtneps2bf16 rounds to nearest even but treats float32 subnormals as 0 (the formula can give a
   bf16 subnormal) and keeps NaN payloads and signs (0xFFFF here): blocks holding either take the
   integer formula. */
static LT__TARGET("avx512f,avx512bf16") void lt__to_bf16_avx512bf16(const float *in, uint16_t *out, size_t n) {
    const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    const __m512i one = _mm512_set1_epi32(1), max_sub = _mm512_set1_epi32(0x007FFFFF);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(in + i);
        __m512i a = _mm512_and_si512(_mm512_castps_si512(x), abs_mask);
        /* a - 1 < 0x7FFFFF (unsigned) exactly for the subnormals 1..0x7FFFFF */
        if (_mm512_cmpgt_epu32_mask(a, inf) | _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, one), max_sub)) {
            __m512i r = lt__bf16_round16(_mm512_castps_si512(x));
            _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_cvtepi32_epi16(r));
        } else {
            __m256bh h = _mm512_cvtneps_pbh(x);
            memcpy(out + i, &h, sizeof h);
        }
    }
    lt__to_bf16_scalar(in + i, out + i, n - i);
}

#ifdef LT__AMP_POP_DIAGNOSTIC
#pragma GCC diagnostic pop
#undef LT__AMP_POP_DIAGNOSTIC
#endif
#endif /* LT__X86 */

/* Does this CPU (and OS) run kernel k (lt__cpu_has, @@CORE)? */
static int lt__k_available(int k) {
    switch (k) {
    case LT__K_SCALAR: return 1;
    case LT__K_AVX2: return lt__cpu_has(LT__CPU_AVX2 | LT__CPU_F16C);
    case LT__K_AVX512: return lt__cpu_has(LT__CPU_AVX512F);
    case LT__K_AVX512BF16: return lt__cpu_has(LT__CPU_AVX512F | LT__CPU_AVX512BF16);
    default: return 0;
    }
}

/* Run conversion cv with kernel k on n elements; 0 when k has no such kernel (nothing done). */
static int lt__cv_run(int cv, int k, const void *in, void *out, size_t n) {
    const float *f = (const float *)in;
    const uint16_t *h = (const uint16_t *)in;
    uint16_t *oh = (uint16_t *)out;
    float *of = (float *)out;
    switch (cv * LT__K_COUNT + k) {
    case LT__CV_TO_BF16 * LT__K_COUNT + LT__K_SCALAR: lt__to_bf16_scalar(f, oh, n); return 1;
    case LT__CV_FROM_BF16 * LT__K_COUNT + LT__K_SCALAR: lt__from_bf16_scalar(h, of, n); return 1;
    case LT__CV_TO_F16 * LT__K_COUNT + LT__K_SCALAR: lt__to_f16_scalar(f, oh, n); return 1;
    case LT__CV_FROM_F16 * LT__K_COUNT + LT__K_SCALAR: lt__from_f16_scalar(h, of, n); return 1;
#ifdef LT__X86
    case LT__CV_TO_BF16 * LT__K_COUNT + LT__K_AVX2: lt__to_bf16_avx2(f, oh, n); return 1;
    case LT__CV_FROM_BF16 * LT__K_COUNT + LT__K_AVX2: lt__from_bf16_avx2(h, of, n); return 1;
    case LT__CV_TO_F16 * LT__K_COUNT + LT__K_AVX2: lt__to_f16_avx2(f, oh, n); return 1;
    case LT__CV_FROM_F16 * LT__K_COUNT + LT__K_AVX2: lt__from_f16_avx2(h, of, n); return 1;
    case LT__CV_TO_BF16 * LT__K_COUNT + LT__K_AVX512: lt__to_bf16_avx512(f, oh, n); return 1;
    case LT__CV_FROM_BF16 * LT__K_COUNT + LT__K_AVX512: lt__from_bf16_avx512(h, of, n); return 1;
    case LT__CV_TO_F16 * LT__K_COUNT + LT__K_AVX512: lt__to_f16_avx512(f, oh, n); return 1;
    case LT__CV_FROM_F16 * LT__K_COUNT + LT__K_AVX512: lt__from_f16_avx512(h, of, n); return 1;
    case LT__CV_TO_BF16 * LT__K_COUNT + LT__K_AVX512BF16: lt__to_bf16_avx512bf16(f, oh, n); return 1;
#endif
    default: (void)f; (void)h; (void)oh; (void)of; return 0;
    }
}

/* The kernel the array functions use for cv: the first in this order that the CPU has and that
   has cv.  The order is their speed: each vector kernel is many times faster than the scalar
   loop, and AVX512_BF16's rounding instruction beats the integer formula (bench/precision.md). */
static int lt__cv_kernel(int cv) {
    static const int order[LT__K_COUNT] = {LT__K_AVX512BF16, LT__K_AVX512, LT__K_AVX2, LT__K_SCALAR};
    int i;
    for (i = 0; i < LT__K_COUNT; i++) {
        int k = order[i];
        if (k == LT__K_AVX512BF16 && cv != LT__CV_TO_BF16) continue;
        if (lt__k_available(k)) return k;
    }
    return LT__K_SCALAR;
}

#define LT__CV_BLOCK ((size_t)1 << 16)
static void lt__cv_array(int cv, const void *in, void *out, size_t n, size_t in_size, size_t out_size) {
    int k = lt__cv_kernel(cv);
    int64_t nb = (int64_t)((n + LT__CV_BLOCK - 1) / LT__CV_BLOCK), b;
    LT__OMP(parallel for if (nb >= 8))
    for (b = 0; b < nb; b++) {
        size_t lo = (size_t)b * LT__CV_BLOCK, m = n - lo < LT__CV_BLOCK ? n - lo : LT__CV_BLOCK;
        lt__cv_run(cv, k, (const char *)in + lo * in_size, (char *)out + lo * out_size, m);
    }
}
LTRAIN_DEF void lt_f32_to_bf16_array(const float *in, uint16_t *out, size_t n) {
    lt__cv_array(LT__CV_TO_BF16, in, out, n, sizeof *in, sizeof *out);
}
LTRAIN_DEF void lt_bf16_to_f32_array(const uint16_t *in, float *out, size_t n) {
    lt__cv_array(LT__CV_FROM_BF16, in, out, n, sizeof *in, sizeof *out);
}
LTRAIN_DEF void lt_f32_to_f16_array(const float *in, uint16_t *out, size_t n) {
    lt__cv_array(LT__CV_TO_F16, in, out, n, sizeof *in, sizeof *out);
}
LTRAIN_DEF void lt_f16_to_f32_array(const uint16_t *in, float *out, size_t n) {
    lt__cv_array(LT__CV_FROM_F16, in, out, n, sizeof *in, sizeof *out);
}
LTRAIN_DEF const char *lt_amp_kernel_name(void) {
    static const char *const names[LT__K_COUNT] = {
        "bf16 scalar, fp16 scalar", "bf16 avx2, fp16 f16c", "bf16 avx512f, fp16 avx512f",
        "bf16 avx512bf16, fp16 avx512f"};
    return names[lt__cv_kernel(LT__CV_TO_BF16)];
}

/* ---- @@HALF.precision  16-bit precision for training (lt_set_precision) ------------------------ */
LTRAIN_DEF lt_status lt_set_precision(lt_ctx *ctx, lt_dtype precision) {
    if (!ctx) return LT_ERR_ARG;
    if (precision != LT_F32 && precision != LT_BF16 && precision != LT_F16)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_set_precision: %d is not a precision (use LT_F32, LT_BF16 or "
                            "LT_F16)", (int)precision);
    ctx->precision = precision;
    return LT_OK;
}
LTRAIN_DEF lt_dtype lt_get_precision(const lt_ctx *ctx) { return ctx ? ctx->precision : LT_F32; }
LTRAIN_DEF const char *lt_precision_name(lt_dtype precision) {
    return precision == LT_BF16 ? "bf16" : precision == LT_F16 ? "fp16" : precision == LT_F32 ? "fp32" : "unknown";
}

/* For the 16-bit kernels (@@OPS: gelu16, layernorm16, linear_ce16, the GEMM's packing elsewhere)
   that convert pieces from inside their own parallel loops: these run on the calling thread only,
   with the fastest kernel the CPU has. */
static void lt__from16(lt_dtype p, const uint16_t *in, float *out, size_t n) {
    int cv = p == LT_F16 ? LT__CV_FROM_F16 : LT__CV_FROM_BF16;
    lt__cv_run(cv, lt__cv_kernel(cv), in, out, n);
}
static void lt__to16(lt_dtype p, const float *in, uint16_t *out, size_t n) {
    int cv = p == LT_F16 ? LT__CV_TO_F16 : LT__CV_TO_BF16;
    lt__cv_run(cv, lt__cv_kernel(cv), in, out, n);
}
/* out = float(16 bit(in)) through a 16-bit staging buffer on the stack; in == out allowed. */
static void lt__round16(lt_dtype p, const float *in, float *out, size_t n) {
    uint16_t h[1024];
    int to = p == LT_F16 ? LT__CV_TO_F16 : LT__CV_TO_BF16, from = p == LT_F16 ? LT__CV_FROM_F16 : LT__CV_FROM_BF16;
    int kt = lt__cv_kernel(to), kf = lt__cv_kernel(from);
    size_t i, m;
    if (p != LT_BF16 && p != LT_F16) {
        if (in != out) memmove(out, in, n * sizeof(float));
        return;
    }
#ifdef LT__X86
    if (lt__k_available(LT__K_AVX512)) {
        if (p == LT_BF16) lt__round_bf16_avx512(in, out, n);
        else lt__round_f16_avx512(in, out, n);
        return;
    }
#endif
    for (i = 0; i < n; i += m) {
        m = n - i < 1024 ? n - i : 1024;
        lt__cv_run(to, kt, in + i, h, m);
        lt__cv_run(from, kf, h, out + i, m);
    }
}
LTRAIN_DEF void lt_round_to_precision(lt_dtype precision, const float *in, float *out, size_t n) {
    int64_t nb = (int64_t)((n + LT__CV_BLOCK - 1) / LT__CV_BLOCK), b;
    LT__OMP(parallel for if (nb >= 8))
    for (b = 0; b < nb; b++) {
        size_t lo = (size_t)b * LT__CV_BLOCK, m = n - lo < LT__CV_BLOCK ? n - lo : LT__CV_BLOCK;
        lt__round16(precision, in + lo, out + lo, m);
    }
}

/* ---- src/04_tensor.h ---- */
/* ==== @@TENSOR  tensors: shapes, parameters, views =========================================== */
/* Holds: tensors (shapes, creation, fill, views), parameters and their packed block,
   lt_ctx_destroy.
   Calls: @@CORE; the device through ctx->dev; @@COMPILE's capture hook (a declared seam). */

LTRAIN_DEF const char *lt_shape_str(const lt_tensor *t, char *buf, size_t cap) {
    size_t used = 0;
    int i;
    if (!buf || !cap) return buf;
    if (!t) { snprintf(buf, cap, "(null)"); return buf; }
    used += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < t->ndim && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ",%lld" : "%lld", (long long)t->shape[i]);
    if (used < cap) snprintf(buf + used, cap - used, "]");
    return buf;
}

/* The first allocation after lt_backward starts a new step: reset the arena lazily, so the
   loss and activations stay readable after backward until the next forward begins. */
static void lt__begin(lt_ctx *ctx) {
    if (ctx->tape_done) lt_reset(ctx);
}

/* Can ctx's op `who` read t (its `what`, e.g. "the first input")?  Two compares: t was made by
   ctx (t->ctx), and, unless a parameter, in the arena's current generation (t->gen; lt_reset and
   the step's lazy reset in lt__begin start a new one, after which the old header and values may
   hold another tensor's bytes).  Call it after lt__begin.  The shape is printed only when the
   header still reads as one, since a stale header may have been written over. */
#define LT__CURRENT(ctx, t) ((t)->ctx == (ctx) && ((t)->is_param || (t)->gen == (ctx)->gen))
static int lt__usable(lt_ctx *ctx, const char *who, const char *what, const lt_tensor *t) {
    char b1[64];
    int shape_ok;
    if (LT__CURRENT(ctx, t)) return 1;
    shape_ok = t->ndim >= 1 && t->ndim <= LT_MAX_DIMS;
    if (!shape_ok) snprintf(b1, sizeof b1, "(shape unreadable)");
    else lt_shape_str(t, b1, sizeof b1);
    if (t->ctx != ctx)
        lt_set_error(ctx, LT_ERR_ARG, "%s: %s %s%s%s%s is not a tensor of this context: it belongs to another "
                     "context, or its memory was reused (hint: pass each context only the tensors it made)",
                     who, what, b1, t->is_param && shape_ok ? " (\"" : "",
                     t->is_param && shape_ok && t->name ? t->name : "", t->is_param && shape_ok ? "\")" : "");
    else
        lt_set_error(ctx, LT_ERR_STATE, "%s: %s %s is stale: it was made before the arena was reset (lt_reset, "
                     "or the first op after lt_backward), so its memory now holds other values "
                     "(hint: make inputs again each step; keep values across steps in a parameter or your own array)",
                     who, what, b1);
    return 0;
}

/* Validate a shape; n = product of dims (overflow-checked). */
static int lt__shape_ok(lt_ctx *ctx, const char *who, int ndim, const int64_t *shape, int64_t *n) {
    int i;
    size_t total = 1;
    if (ndim < 1 || ndim > LT_MAX_DIMS || !shape)
        return lt_set_error(ctx, LT_ERR_ARG, "%s: ndim is %d: it must be 1..%d", who, ndim, LT_MAX_DIMS), 0;
    for (i = 0; i < ndim; i++) {
        if (shape[i] < 1)
            return lt_set_error(ctx, LT_ERR_ARG, "%s: dim %d is %lld: every dim must be >= 1", who, i,
                                (long long)shape[i]), 0;
        if (!lt_mul_size(total, (size_t)shape[i], &total) || total > (size_t)INT64_MAX / sizeof(float))
            return lt_set_error(ctx, LT_ERR_ARG, "%s: the shape's element count overflows", who), 0;
    }
    *n = (int64_t)total;
    return 1;
}

/* Memory for values (tensor data, gradients, saved buffers): the arena, or on LT_CUDA the
   device arena.  Headers and tape records always live in the (host) arena. */
static void *lt__values_alloc(lt_ctx *ctx, size_t bytes) {
    if (ctx->dev) return ctx->dev->alloc(ctx, bytes);
    return lt__arena_values(ctx, bytes);
}
/* dst (n values of a tensor of ctx) = src, or zeros for NULL; src is host memory. */
static void lt__values_set(lt_ctx *ctx, float *dst, const float *src, size_t n) {
    if (ctx->dev) { ctx->dev->fill_values(ctx, dst, src, n); return; }
    if (src) memcpy(dst, src, n * sizeof(float));
    else memset(dst, 0, n * sizeof(float));
}

/* A tensor header (and, if with_data, its data) from the arena. */
static lt_tensor *lt__arena_tensor(lt_ctx *ctx, const char *who, int ndim, const int64_t *shape, int with_data) {
    lt_tensor *t;
    int64_t n;
    int i;
    if (!lt__shape_ok(ctx, who, ndim, shape, &n)) return NULL;
    t = (lt_tensor *)lt__arena_alloc(ctx, sizeof(lt_tensor));
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    for (i = 0; i < LT_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    t->n = n;
    t->device = ctx->device;
    t->ctx = ctx;
    t->gen = ctx->gen;
    if (with_data) {
        t->data = (float *)lt__values_alloc(ctx, (size_t)n * sizeof(float));
        if (!t->data) return NULL;
    }
    return t;
}

/* ---- @@TENSOR.new  tensors from the arena ---------------------------------------------------- */
LTRAIN_DEF lt_tensor *lt_tensor_new(lt_ctx *ctx, int ndim, const int64_t *shape) {
    lt_tensor *t;
    if (!ctx || lt_failed(ctx)) return NULL;
    lt__begin(ctx);
    t = lt__arena_tensor(ctx, "lt_tensor_new", ndim, shape, 1);
    if (t) lt__values_set(ctx, t->data, NULL, (size_t)t->n);
    if (t && ctx->cap_hooks) ctx->cap_hooks->input(ctx, t, NULL);
    return t;
}

LTRAIN_DEF lt_tensor *lt_tensor_from(lt_ctx *ctx, const float *data, int ndim, const int64_t *shape) {
    lt_tensor *t;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!data) { lt_set_error(ctx, LT_ERR_ARG, "lt_tensor_from: data is NULL"); return NULL; }
    lt__begin(ctx);
    t = lt__arena_tensor(ctx, "lt_tensor_from", ndim, shape, 1);
    if (t) lt__values_set(ctx, t->data, data, (size_t)t->n);
    if (t && ctx->cap_hooks) ctx->cap_hooks->input(ctx, t, data);
    return t;
}

LTRAIN_DEF float lt_item(const lt_tensor *t) {
    if (t && t->data && t->n > 0 && t->device != LT_CPU) return lt__devices[t->device]->item(t);   /* one value back to the host */
    return (t && t->data && t->n > 0) ? t->data[0] : (float)NAN;
}

LTRAIN_DEF void lt_fill(lt_tensor *t, float v) {
    int64_t i;
    if (!t || !t->data) return;
    if (t->device != LT_CPU) { lt__devices[t->device]->fill(t, v); return; }
    for (i = 0; i < t->n; i++) t->data[i] = v;
}

/* The checks of lt_tensor_read; a device reads its own (a parameter: the host copy, made current). */
static int lt__read_ok(lt_ctx *ctx, const lt_tensor *t, int grad, const float *out) {
    if (!ctx) return 0;
    if (lt_failed(ctx)) return 0;
    if (!t || !out) return lt_set_error(ctx, LT_ERR_ARG, "lt_tensor_read: %s is NULL", t ? "out" : "the tensor"), 0;
    if (!lt__usable(ctx, "lt_tensor_read", "the tensor", t)) return 0;
    if (!(grad ? t->grad : t->data))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_tensor_read: the tensor has no %s", grad ? "gradient" : "data"), 0;
    return 1;
}
LTRAIN_DEF lt_status lt_tensor_read(lt_ctx *ctx, const lt_tensor *t, int grad, float *out) {
    if (!lt__read_ok(ctx, t, grad, out)) return lt_status_of(ctx);
    if (ctx->dev) return ctx->dev->read(ctx, t, grad, out);
    memcpy(out, grad ? t->grad : t->data, (size_t)t->n * sizeof(float));
    return LT_OK;
}

/* -- @@TENSOR.params  parameters ----------------------------------------------------------------- */
static float *lt__zeros(size_t n) {
    float *p = (float *)LT__MALLOC(n * sizeof(float)); /* n * 4 fits: lt__shape_ok bounds n */
    if (p) memset(p, 0, n * sizeof(float));
    return p;
}

static int lt__in_block(const lt_ctx *ctx, const float *p) {
    return ctx->param_block && p >= ctx->param_block && p < ctx->param_block + 2 * ctx->param_floats;
}

/* A parameter's name goes into checkpoints as a safetensors key (a JSON string): it must be
   UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), not "__metadata__" (the
   header's reserved key), and at most LT__NAME_MAX bytes. */
#define LT__NAME_MAX 1024
static int lt__param_name_ok(lt_ctx *ctx, const char *name) {
    size_t len, bad;
    if (!name || !*name) return lt_set_error(ctx, LT_ERR_ARG, "lt_param: a parameter needs a name"), 0;
    len = strlen(name);
    if (len > LT__NAME_MAX)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_param: the name \"%.40s...\" is %zu bytes long: at most %d "
                            "(checkpoints store it in their header)", name, len, LT__NAME_MAX), 0;
    if (strcmp(name, "__metadata__") == 0)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_param: \"__metadata__\" is reserved (a checkpoint's header keeps "
                            "its metadata under that key): choose another name"), 0;
    if ((bad = lt__utf8_bad_at((const unsigned char *)name, len)) < len)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_param: the name is not UTF-8: byte %zu is 0x%02X (checkpoints "
                            "store names as JSON strings; hint: convert it from Latin-1 or use ASCII)", bad,
                            (unsigned)(unsigned char)name[bad]), 0;
    if (lt_find_param(ctx, name))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_param: a parameter named \"%s\" exists already", name), 0;
    return 1;
}

LTRAIN_DEF lt_tensor *lt_param(lt_ctx *ctx, const char *name, int ndim, const int64_t *shape) {
    lt_tensor *t;
    int64_t n;
    int i;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!lt__param_name_ok(ctx, name)) return NULL;
    if (!lt__shape_ok(ctx, "lt_param", ndim, shape, &n)) return NULL;
    if (ctx->n_params == ctx->cap_params) {
        int cap = ctx->cap_params ? 2 * ctx->cap_params : 64;
        lt_tensor **p = (lt_tensor **)LT__REALLOC(ctx->params, (size_t)cap * sizeof(lt_tensor *));
        if (!p) goto oom;
        ctx->params = p;
        ctx->cap_params = cap;
    }
    t = (lt_tensor *)LT__MALLOC(sizeof(lt_tensor));
    if (!t) goto oom;
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    for (i = 0; i < LT_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    t->n = n;
    t->data = lt__zeros((size_t)n);
    t->grad = lt__zeros((size_t)n);
    t->name = lt__strdup(name);
    if (!t->data || !t->grad || !t->name) {
        LT__FREE(t->data); LT__FREE(t->grad); LT__FREE((void *)t->name); LT__FREE(t);
        goto oom;
    }
    t->requires_grad = 1;
    t->is_param = 1;
    t->ctx = ctx;                /* a parameter lives as long as its context: no generation */
    t->decay = ndim >= 2;
    ctx->params[ctx->n_params++] = t;
    return t;
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "lt_param: out of memory for \"%s\"", name);
    return NULL;
}

LTRAIN_DEF lt_paramset lt_ctx_params(lt_ctx *ctx) {
    lt_paramset s;
    s.p = ctx ? ctx->params : NULL;
    s.n = ctx ? ctx->n_params : 0;
    return s;
}

LTRAIN_DEF lt_tensor *lt_find_param(lt_ctx *ctx, const char *name) {
    int i;
    if (!ctx || !name) return NULL;
    for (i = 0; i < ctx->n_params; i++)
        if (strcmp(ctx->params[i]->name, name) == 0) return ctx->params[i];
    return NULL;
}

LTRAIN_DEF size_t lt_params_count(lt_ctx *ctx) {
    size_t n = 0;
    int i;
    if (!ctx) return 0;
    for (i = 0; i < ctx->n_params; i++) n += (size_t)ctx->params[i]->n;
    return n;
}

/* Move every parameter into one block [all data | all grads], in creation order, so that
   zero-grad, norms, clipping, optimizers and (later) an all-reduce see one flat span. */
LTRAIN_DEF lt_status lt_params_pack(lt_ctx *ctx) {
    size_t total = lt_params_count(ctx), bytes, off = 0;
    float *block;
    int i;
    if (lt_failed(ctx)) return lt_status_of(ctx);
    if (!lt_mul_size(total, 2 * sizeof(float), &bytes) || !(block = (float *)LT__MALLOC(bytes ? bytes : 1)))
        return lt_set_error(ctx, LT_ERR_NOMEM, "lt_params_pack: out of memory for %zu parameters", total);
    for (i = 0; i < ctx->n_params; i++) {
        lt_tensor *t = ctx->params[i];
        memcpy(block + off, t->data, (size_t)t->n * sizeof(float));
        memcpy(block + total + off, t->grad, (size_t)t->n * sizeof(float));
        if (!lt__in_block(ctx, t->data)) { LT__FREE(t->data); LT__FREE(t->grad); }
        t->data = block + off;
        t->grad = block + total + off;
        off += (size_t)t->n;
    }
    LT__FREE(ctx->param_block);
    ctx->param_block = block;
    ctx->param_floats = total;
    return LT_OK;
}

/* On a device the parameters have host copies and the device's (@@CUDA); on LT_CPU one copy. */
LTRAIN_DEF lt_status lt_sync_params(lt_ctx *ctx) {
    if (!ctx) return LT_ERR_ARG;
    if (ctx->dev && !lt_failed(ctx)) ctx->dev->sync_params(ctx);
    return ctx->status;
}
LTRAIN_DEF void lt_params_changed(lt_ctx *ctx) {
    if (ctx && ctx->dev) ctx->dev->params_changed(ctx);
}

LTRAIN_DEF float *lt_params_grad_span(lt_ctx *ctx, size_t *n) {
    if (!ctx || !ctx->param_block || ctx->param_floats != lt_params_count(ctx)) { if (n) *n = 0; return NULL; }
    if (n) *n = ctx->param_floats;
    return ctx->param_block + ctx->param_floats;
}

static void lt__params_free(lt_ctx *ctx) {
    int i;
    for (i = 0; i < ctx->n_params; i++) {
        lt_tensor *t = ctx->params[i];
        if (!lt__in_block(ctx, t->data)) { LT__FREE(t->data); LT__FREE(t->grad); }
        LT__FREE((void *)t->name);
        LT__FREE(t);
    }
    LT__FREE(ctx->params);
    LT__FREE(ctx->param_block);
    ctx->params = NULL;
    ctx->param_block = NULL;
    ctx->n_params = ctx->cap_params = 0;
}

/* The context last: its device state, its parameters, then its arena and tape. */
LTRAIN_DEF void lt_ctx_destroy(lt_ctx *ctx) {
    if (!ctx) return;
    if (ctx->dev) ctx->dev->destroy(ctx);
    lt__params_free(ctx);
    lt__arena_free(&ctx->arena);
    lt__arena_free(&ctx->scratch);
    LT__FREE(ctx->tape);
    LT__FREE(ctx->segs);
    LT__FREE(ctx->seg_nodes);
    LT__FREE(ctx->seg_data);
    LT__FREE(ctx);
}

LTRAIN_DEF void lt_init_normal(lt_ctx *ctx, lt_tensor *t, double mean, double std) {
    int64_t i;
    if (!ctx || !t || !t->data) return;
    for (i = 0; i < t->n; i++) t->data[i] = (float)(mean + std * lt_rng_normal(&ctx->rng));
}
LTRAIN_DEF void lt_init_uniform(lt_ctx *ctx, lt_tensor *t, double lo, double hi) {
    int64_t i;
    if (!ctx || !t || !t->data) return;
    for (i = 0; i < t->n; i++) t->data[i] = (float)(lo + (hi - lo) * lt_rng_uniform(&ctx->rng));
}

/* ---- src/05_ops.h ---- */
/* ==== @@OPS  ops: forward next to backward =================================================== */
/* Holds: the elementwise, reduction, shape, normalisation, attention and embedding ops, each
   forward next to its backward, and the op table the tape dispatches from.
   Calls: @@CORE, @@HALF, @@TENSOR; the device through ctx->dev; @@COMPILE's capture hook. */
/* How an op works.  A public op (lt_add, lt_layernorm, ...) checks its arguments, allocates its
   output from the arena, fills a tape record (lt__node) and runs the record's forward kernel.
   If a gradient must flow, the record stays on the tape and lt_backward later runs the
   backward kernel of the same row of the op table.  Kernels read everything from the record,
   so the compile mode (@@COMPILE, 09_compile.h) replays records without the public functions.

   The op table below is the only place the tape dispatches from: one X-macro row per op
   (its name and its forward/backward kernels lt__NAME_fwd / lt__NAME_bwd).  A device (the seam,
   @@CORE) keeps its own kernels by row of this table, so a backend adds kernels without touching
   callers. */

/* ---- @@OPS.table  the op table --------------------------------------------------------------- */
/* name, and the op's flags.  What its backward reads besides gradients: the inputs' values (IN),
   its own output's values (OUT); the compile mode plans buffer lifetimes from these two.
   The 16-bit rows (matmul16, linear16, conv1d16, layernorm16, gelu16, linear_ce16, rmsnorm16,
   attention_gqa16, swiglu16: lt_set_precision,
   @@HALF) read 0: their backward reads 16-bit copies saved in the record, so the float32 inputs
   need not stay alive.  (Eager records may skip a copy and read the float32 values in place,
   lt__copy16: eager mode never frees them; a compiled plan always has the copies.)
   What the compile mode may do with the op (@@COMPILE), each a property of its kernels:
     ROW        each row of its (R, C) output is computed from the same row of its inputs (or
                from one row broadcast to all): a plan may run it on tiles of rows, fused with
                the row-wise ops next to it (lt__plan_fuse)
     VIEW       its output shares its input's values (reshape): no buffer of its own
     Y_OVER_X   its forward allows y == x for a same-size input (y[i] = a[i] + b[i]): the output
                may be written over an input nothing reads afterwards (lt__add_over, eagerly)
     DX_OVER_X  its backward allows dx == x: x's gradient may be written over x's values when
                nothing reads them afterwards (cross-entropy's d(logits) over the logits)
     DX_OVER_DY its backward allows dx == dy for its first input: that gradient may be written
                over the output's when nothing reads it afterwards (lt__grad_adopt, eagerly)
     Y16        its output is already rounded to 16 bits in the record's precision (LT__PREC), so a
                16-bit copy of it is exact (lt__exact16) */
#define LT__IN 1
#define LT__OUT 2
#define LT__ROW 4
#define LT__VIEW 8
#define LT__Y_OVER_X 16
#define LT__DX_OVER_X 32
#define LT__DX_OVER_DY 64
#define LT__Y16 128
#define LT__OP_LIST(X)                                                                              \
    X(reshape, LT__VIEW) X(add, LT__ROW | LT__Y_OVER_X | LT__DX_OVER_DY) X(sub, LT__ROW)             \
    X(mul, LT__IN | LT__ROW) X(scale, LT__ROW) X(sum, 0) X(mean, 0)                                  \
    X(matmul, LT__IN) X(linear, LT__IN) X(conv1d, LT__IN) X(gelu, LT__IN | LT__ROW | LT__DX_OVER_DY) \
    X(gelu_erf, LT__IN | LT__ROW) X(relu, LT__IN | LT__ROW) X(tanh, LT__OUT | LT__ROW)               \
    X(sigmoid, LT__OUT | LT__ROW) X(softmax, LT__OUT | LT__ROW) X(log_softmax, LT__OUT | LT__ROW)    \
    X(layernorm, LT__IN | LT__ROW) X(embedding, 0) X(dropout, 0) X(transpose, 0)                     \
    X(attention, LT__IN | LT__OUT) X(cross_entropy, LT__IN | LT__DX_OVER_X) X(mse, LT__IN)           \
    X(matmul16, LT__Y16) X(linear16, LT__Y16) X(conv1d16, LT__Y16) X(attention16, LT__Y16)           \
    X(layernorm16, 0) X(gelu16, LT__Y16 | LT__DX_OVER_DY) X(linear_ce16, 0)                         \
    X(rmsnorm, LT__IN | LT__ROW) X(rmsnorm16, 0) X(rope, LT__DX_OVER_DY)                             \
    X(silu, LT__IN | LT__ROW | LT__DX_OVER_DY) X(swiglu, LT__IN | LT__ROW | LT__DX_OVER_DY)          \
    X(attention_gqa, LT__IN | LT__OUT) X(attention_gqa16, LT__Y16) X(swiglu16, LT__Y16 | LT__DX_OVER_DY)

struct lt__node {
    const struct lt__opdef *op;
    lt_ctx *ctx;
    lt_tensor *out;
    lt_tensor *in[3];            /* inputs (NULL where absent, e.g. no bias) */
    int64_t i[6];                /* integer arguments: sizes, flags (each op names its slots: LT__LN_C, ...) */
    double f[2];                 /* scalar arguments: scale, eps, p, denominators (LT__LN_EPS, ...) */
    float *save[2];              /* values saved for backward (mean/rstd, masks, probabilities) */
    int64_t n_save[2];           /* their lengths (floats) */
    int32_t *ids;                /* indices (embedding ids, targets, lengths), copied to the arena */
    const int32_t *ids_src;      /* ... from here (a compiled plan copies them again each replay) */
    int64_t n_ids;
    const char *scope;           /* where in the model (lt_scope), for messages */
    int32_t *ids_dev;            /* on a device: its copy of the ids (CUDA: and, for embedding, rows grouped by id) */
};

typedef struct lt__opdef {
    const char *name;
    int reads;                   /* LT__IN | LT__OUT: what backward reads */
    int flags;                   /* the row's flags: reads, LT__ROW, LT__VIEW, ... (above) */
    lt__kernel fwd;              /* the CPU's kernels; a device's are in its table, by row (ctx->dev) */
    lt__kernel bwd;
} lt__opdef;

#define LT__DECLARE_KERNELS(name, flags) static void lt__##name##_fwd(lt__node *); static void lt__##name##_bwd(lt__node *);
LT__OP_LIST(LT__DECLARE_KERNELS)
#undef LT__DECLARE_KERNELS

enum {
#define LT__OP_INDEX(name, flags) LT__OPI_##name,
    LT__OP_LIST(LT__OP_INDEX)
#undef LT__OP_INDEX
    LT__OP_COUNT
};
/* indices only name rows of this table; records point at rows, never at numbers */
static const lt__opdef lt__ops[LT__OP_COUNT] = {
#define LT__OP_ROW(name, flags) {#name, (flags) & (LT__IN | LT__OUT), flags, lt__##name##_fwd, lt__##name##_bwd},
    LT__OP_LIST(LT__OP_ROW)
#undef LT__OP_ROW
};
#define LT__OP(name) (&lt__ops[LT__OPI_##name])
typedef char lt__op_table_fits_profile[LT__OP_COUNT <= 64 ? 1 : -1]; /* ctx->prof_s has 64 rows */
#define LT__EW_PAR (int64_t)32768   /* elementwise loops over fewer elements than this: one thread */

static void lt__profile_add(lt_ctx *ctx, const lt__node *nd, int bwd, double s) {
    int row = (int)(nd->op - lt__ops);
    ctx->prof_s[bwd][row] += s;
    ctx->prof_n[bwd][row]++;
}

LTRAIN_DEF void lt_set_profiling(lt_ctx *ctx, int on) {
    if (!ctx) return;
    ctx->profiling = on != 0;
    memset(ctx->prof_s, 0, sizeof ctx->prof_s);
    memset(ctx->prof_n, 0, sizeof ctx->prof_n);
}

LTRAIN_DEF void lt_profile_print(const lt_ctx *ctx, FILE *f) {
    double total = 0;
    int r;
    if (!ctx || !f) return;
    for (r = 0; r < LT__OP_COUNT; r++) total += ctx->prof_s[0][r] + ctx->prof_s[1][r];
    fprintf(f, "%-14s %10s %10s %8s %6s\n", "op", "fwd ms", "bwd ms", "calls", "share");
    for (r = 0; r < LT__OP_COUNT; r++) {
        double t = ctx->prof_s[0][r] + ctx->prof_s[1][r];
        if (ctx->prof_n[0][r] + ctx->prof_n[1][r] == 0) continue;
        fprintf(f, "%-14s %10.1f %10.1f %8lld %5.1f%%\n", lt__ops[r].name, 1e3 * ctx->prof_s[0][r],
                1e3 * ctx->prof_s[1][r], (long long)ctx->prof_n[0][r], total > 0 ? 100.0 * t / total : 0.0);
    }
    fprintf(f, "%-14s %10.1f ms in kernels\n", "total", 1e3 * total);
}

/* ---- @@OPS.simd  shared math (exp, tanh, an 8x8 transpose) and the SIMD kernels' rules -------------
   Every op has a plain C kernel, the reference.  Where the compiler is GCC or Clang on x86 (and
   LTRAIN_NO_SIMD is not defined), hand-written AVX2 / AVX-512 kernels are compiled beside it with
   target attributes (LT__TARGET, @@CORE), and run only when the CPU has the instructions
   (lt__cpu_has and lt__gemm_pick, @@CORE.cpu; LT_GEMM=portable|avx2|avx512|neon in the environment
   forces one).  On AArch64 the GEMM has a NEON kernel (@@GEMM); the other
   ops run their C kernels there. */
/* exp(x) for x <= 0, the only exps the kernels need (softmax, cross-entropy, tanh, sigmoid all
   shift their argument to be non-positive).  exp(x) = 2^n · e^r with n = round(x/ln2) and
   r = x - n·ln2 in [-ln2/2, ln2/2] (ln2 split in two so r is exact), e^r by its Taylor series to
   r^6: relative error below 2e-7, about one float ulp.  Straight-line code, so `omp simd` loops
   vectorize it (libm's expf does not).  x < -87 gives 0 (exp(-inf) = 0 exactly), NaN gives NaN;
   it stays right up to x = 88 (a rounding error may make an argument slightly positive).
   Written for the vectorizer: the clamps are one max and one min each, 2^n comes from t's own
   bits (t = 1.5·2^23 + n, so its low bits are n: no float-to-int conversion), and the special
   cases are two selects at the end (cheaper than nested conditions, the same bits; see
   bench/design.md). */
LT__OMP(declare simd)
static inline float lt__exp_neg(float x) {
    float xc = x > -87.0f ? x : -87.0f, t, n, r, p, scale;   /* NaN lands on -87: no UB below */
    int32_t bits;
    xc = xc < 88.0f ? xc : 88.0f;
    t = xc * 1.44269504088896341f + 12582912.0f;     /* 1.5·2^23: rounds xc/ln2 to an integer */
    n = t - 12582912.0f;
    r = xc - n * 0.693145751953125f - n * 1.428606765330187e-06f;
    p = 1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.0083333338f + r * 0.0013888889f)))));
    memcpy(&bits, &t, sizeof bits);                  /* 0x4B400000 + n, n in [-126, 127] */
    bits = (bits - 0x4B400000 + 127) << 23;          /* 2^n as a float's bits (1..254 << 23: defined) */
    memcpy(&scale, &bits, sizeof scale);
    p = x < -87.0f ? 0.0f : p * scale;
    return x == x ? p : x;                           /* NaN stays NaN */
}

/* tanh(u) = sign(u)·(1 - e)/(1 + e) with e = exp(-2|u|) <= 1 (no overflow); below |u| = 1/16,
   where 1 - e would cancel, the odd series u - u³/3 + 2u⁵/15 - 17u⁷/315 instead. */
LT__OMP(declare simd)
static inline float lt__tanh(float u) {
    float e = lt__exp_neg(-2.0f * fabsf(u)), u2 = u * u;
    float series = u * (1.0f + u2 * (-0.33333333f + u2 * (0.13333333f - u2 * 0.053968254f)));
    return fabsf(u) < 0.0625f ? series : copysignf((1.0f - e) / (1.0f + e), u);
}

/* ---- fast paths: AVX-512 exp, AVX2 8x8 transpose -------------------------------------------- */
#ifdef LT__X86
/* lt__exp_neg for 16 values with AVX-512: a raised to -120 if below (exp is 0 in float below
   -104; a NaN stays NaN: vmaxps returns its second operand when one is NaN), n = round(a/ln2),
   r = a - n·ln2, the same series, and 2^n applied by vscalefps (no range tricks needed).  Within
   an ulp or two of lt__exp_neg, not always the same bits. */
LT__TARGET("avx512f") static inline __m512 lt__exp_neg16(__m512 a) {
    __m512 n, r, p;
    a = _mm512_maskz_max_ps(LT__M16, _mm512_set1_ps(-120.0f), a);
    n = _mm512_maskz_roundscale_ps(LT__M16, _mm512_mul_ps(a, _mm512_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), a);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
    p = _mm512_fmadd_ps(_mm512_set1_ps(0.0013888889f), r, _mm512_set1_ps(0.0083333338f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.041666668f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.16666667f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(LT__M16, p, n);
}

/* d (8,8) = sᵀ of the 8 x 8 block at s (row strides lds, ldd), turned in AVX registers: pairs of
   rows interleaved, then pairs of pairs, then the 128-bit halves exchanged (the attention's
   transposes below, the GEMM's packing of B stored transposed, @@GEMM). */
LT__TARGET("avx2") static void lt__tr8x8(const float *s, int64_t lds, float *d, int64_t ldd) {
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + lds), r2 = _mm256_loadu_ps(s + 2 * lds);
    __m256 r3 = _mm256_loadu_ps(s + 3 * lds), r4 = _mm256_loadu_ps(s + 4 * lds), r5 = _mm256_loadu_ps(s + 5 * lds);
    __m256 r6 = _mm256_loadu_ps(s + 6 * lds), r7 = _mm256_loadu_ps(s + 7 * lds);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3);
    __m256 t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + ldd, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * ldd, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * ldd, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * ldd, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * ldd, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * ldd, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * ldd, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#endif

/* ---- @@OPS.records  what every op shares: gradients, tape records, saved values ----------- */
/* n zeros, split over the threads when n is large */
static void lt__zero(float *p, int64_t n) {
    int64_t i0;
    LT__OMP(parallel for if (n > 4 * LT__EW_PAR))
    for (i0 = 0; i0 < n; i0 += LT__EW_PAR)
        memset(p + i0, 0, (size_t)(n - i0 < LT__EW_PAR ? n - i0 : LT__EW_PAR) * sizeof(float));
}

/* n floats copied, split over the threads when n is large */
static void lt__copy(float *dst, const float *src, int64_t n) {
    int64_t i0;
    LT__OMP(parallel for if (n > 4 * LT__EW_PAR))
    for (i0 = 0; i0 < n; i0 += LT__EW_PAR)
        memcpy(dst + i0, src + i0, (size_t)(n - i0 < LT__EW_PAR ? n - i0 : LT__EW_PAR) * sizeof(float));
}

/* Recycling (eager mode, as torch): once an op's backward has run, nothing reads its output's
   gradient again, so lt_backward drops it (grad = NULL) unless lt_retain_grad asked to keep it,
   and puts the buffer on a free list (kept inside the free buffers themselves).  Gradients made
   later take the best-fitting buffer from it (at most twice their size) before new arena
   memory: a backward pass holds a few activation gradients at a time instead of all of them. */
typedef struct lt__gfree { struct lt__gfree *next; size_t bytes; } lt__gfree;
#define LT__GFREE_MIN 1024   /* smaller buffers are dropped, not recycled */
static void lt__grad_release(lt_ctx *ctx, lt_tensor *t) {
    size_t bytes = (size_t)t->n * sizeof(float);
    if (t->retain_grad || t->is_param || !t->grad) return;
    if (t->grad != t->data && bytes >= LT__GFREE_MIN) {   /* (not a gradient written over the values) */
        lt__gfree *b = (lt__gfree *)(void *)t->grad;
        b->bytes = bytes;
        b->next = (lt__gfree *)ctx->grad_free;
        ctx->grad_free = b;
    }
    t->grad = NULL;
}
static float *lt__grad_alloc(lt_ctx *ctx, size_t bytes) {
    lt__gfree **best = NULL, **q;
    for (q = (lt__gfree **)&ctx->grad_free; *q; q = &(*q)->next)
        if ((*q)->bytes >= bytes && (*q)->bytes / 2 <= bytes && (!best || (*q)->bytes < (*best)->bytes)) best = q;
    if (best) {
        lt__gfree *b = *best;
        *best = b->next;
        return (float *)(void *)b;
    }
    return (float *)lt__arena_alloc(ctx, bytes);
}
/* The gradient buffer of a tensor, made in the arena on first use.  Backward kernels add their
   contribution into it (a tensor read by two ops gets two), so a new buffer must start at zero.
   lt__grad_w saves that zeroing pass for the kernels that can write the whole buffer anyway:
   *add is 0 when the buffer holds no values yet (just made, or marked unset by a compiled
   replay), and the caller must then write (=) every element instead of adding (+=); the values
   are the same (0 + g is g).  lt__grad zeroes such a buffer first, for kernels that only add. */
static float *lt__grad_w(lt_tensor *t, lt_ctx *ctx, int *add) {
    *add = 1;
    if (!t || !t->requires_grad) return NULL;
    if (!t->grad) {
        t->grad = lt__grad_alloc(ctx, (size_t)t->n * sizeof(float));
        if (!t->grad) return NULL;
        t->grad_unset = 1;
    }
    *add = !t->grad_unset;
    t->grad_unset = 0;
    return t->grad;
}
/* In eager mode an op's output gradient dies right after the op's backward kernel (lt_backward
   drops it), so an elementwise kernel whose input has no gradient buffer yet can hand that
   buffer over to the input and work in place (gx[i] = gy[i]·..., the same values, one buffer
   fewer alive).  Not when the output's gradient is retained or written over its values, nor in
   a compiled plan, which places every buffer itself (the input's is set already).  Returns 1
   when in[j] took it: its grad is then the old nd->out->grad, which is NULL. */
static int lt__grad_adopt(lt__node *nd, int j) {
    lt_tensor *x = nd->in[j], *y = nd->out;
    if (!x || !x->requires_grad || x->grad || x->n != y->n || !y->grad || y->retain_grad || y->grad == y->data ||
        nd->ctx->device != LT_CPU)
        return 0;
    x->grad = y->grad;
    x->grad_unset = 0;
    y->grad = NULL;
    return 1;
}
static float *lt__grad(lt_tensor *t, lt_ctx *ctx) {
    int add;
    float *g = lt__grad_w(t, ctx, &add);
    if (g && !add) lt__zero(g, t->n);
    return g;
}

/* Common checks of a public op: live context, non-NULL required inputs of this context and step
   (lt__usable; lt__node_new checks every input again, the optional ones too). */
static int lt__live(lt_ctx *ctx, const char *who, const lt_tensor *a, const lt_tensor *b) {
    if (!ctx) return 0;
    if (ctx->status != LT_OK) return 0;
    if (!a) return lt_set_error(ctx, LT_ERR_ARG, "%s: the first input is NULL", who), 0;
    if (!b) return lt_set_error(ctx, LT_ERR_ARG, "%s: the second input is NULL", who), 0;
    lt__begin(ctx);
    return lt__usable(ctx, who, "the first input", a) && (b == a || lt__usable(ctx, who, "the second input", b));
}

/* A record with an output of the given shape (data from the arena unless no_data). */
static lt__node *lt__node_new(lt_ctx *ctx, const lt__opdef *op, int ndim, const int64_t *shape,
                              lt_tensor *a, lt_tensor *b, lt_tensor *c, int no_data) {
    lt__node *nd;
    if ((a && !LT__CURRENT(ctx, a)) || (b && !LT__CURRENT(ctx, b)) || (c && !LT__CURRENT(ctx, c))) {
        char who[48];
        snprintf(who, sizeof who, "lt_%s", op->name);
        if (a && !lt__usable(ctx, who, "the first input", a)) return NULL;
        if (b && !lt__usable(ctx, who, "the second input", b)) return NULL;
        lt__usable(ctx, who, "the third input", c);
        return NULL;
    }
    nd = (lt__node *)lt__arena_alloc(ctx, sizeof(lt__node));
    if (!nd) return NULL;
    memset(nd, 0, sizeof *nd);
    nd->op = op;
    nd->ctx = ctx;
    nd->scope = ctx->scope;
    nd->in[0] = a; nd->in[1] = b; nd->in[2] = c;
    nd->out = lt__arena_tensor(ctx, op->name, ndim, shape, !no_data);
    if (!nd->out) return NULL;
    nd->out->requires_grad = ctx->grad_enabled &&
        ((a && a->requires_grad) || (b && b->requires_grad) || (c && c->requires_grad));
    return nd;
}

/* The kernel of a record's row: the CPU's, or the device's (ctx->dev, the device seam). */
#define LT__FWD(ctx, nd) ((ctx)->dev ? (ctx)->dev->op_fwd[(nd)->op - lt__ops] : (nd)->op->fwd)
#define LT__BWD(ctx, nd) ((ctx)->dev ? (ctx)->dev->op_bwd[(nd)->op - lt__ops] : (nd)->op->bwd)
/* a device's kernels are asynchronous: a profile times them whole */
#define LT__PROFILE_SYNC(ctx) do { if ((ctx)->dev) lt_device_synchronize(ctx); } while (0)

/* Recompute segments (lt_recompute_begin, @@TAPE): refuse an op that reads a value a segment
   dropped, or, inside one, an op with no recompute rule: one whose forward writes over a value
   made before the segment (lt__add_over), which running it again in backward would read.  Inside
   a segment the op is noted, to be run again.  0: refused (the error is set). */
static int lt__seg_note(lt_ctx *ctx, lt__node *nd) {
    int j;
    for (j = 0; j < 3; j++) {
        const lt_tensor *t = nd->in[j];
        if (!t) continue;
        if (!t->data)
            return lt_set_error(ctx, LT_ERR_STATE, "op %s%s%s: input %d is a value that lt_recompute_end dropped: "
                                "a segment keeps only its output (hint: make the value the segment's output, "
                                "or compute it outside the segment)", nd->op->name, nd->scope ? " in " : "",
                                nd->scope ? nd->scope : "", j), 0;
        if (ctx->to_scratch && nd->out->data == t->data && !(nd->op->flags & LT__VIEW) &&
            !lt__arena_owns(&ctx->scratch, t->data))
            return lt_set_error(ctx, LT_ERR_STATE, "op %s%s%s has no recompute rule here: it writes its output over "
                                "input %d, made before lt_recompute_begin, which running it again in backward "
                                "would read", nd->op->name, nd->scope ? " in " : "", nd->scope ? nd->scope : "", j), 0;
    }
    if (!ctx->seg_open) return 1;
    if (ctx->n_seg_nodes == ctx->cap_seg_nodes) {
        int cap = ctx->cap_seg_nodes ? 2 * ctx->cap_seg_nodes : 256;
        lt__node **a = (lt__node **)LT__REALLOC(ctx->seg_nodes, (size_t)cap * sizeof(lt__node *));
        float **d = a ? (float **)LT__REALLOC(ctx->seg_data, (size_t)cap * sizeof(float *)) : NULL;
        if (a) ctx->seg_nodes = a;
        if (d) ctx->seg_data = d;
        if (!a || !d) return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory noting a segment's ops", nd->op->name), 0;
        ctx->cap_seg_nodes = cap;
    }
    ctx->seg_data[ctx->n_seg_nodes] = NULL;
    ctx->seg_nodes[ctx->n_seg_nodes++] = nd;
    ctx->segs[ctx->n_segs - 1].n++;
    return 1;
}

/* Run the forward kernel; keep the record on the tape if a gradient will flow through it. */
static lt_tensor *lt__run(lt_ctx *ctx, lt__node *nd) {
    if (!nd || lt_failed(ctx)) return NULL;
    if ((ctx->n_segs || ctx->seg_open) && !lt__seg_note(ctx, nd)) return NULL;
    if (ctx->dry && !(nd->op->flags & LT__VIEW)) {
        /* lt_compile's recording pass: shapes only (a view's pointer is still set) */
    } else if (ctx->profiling) {
        double t0 = lt__now();
        LT__FWD(ctx, nd)(nd);
        LT__PROFILE_SYNC(ctx);
        lt__profile_add(ctx, nd, 0, lt__now() - t0);
    } else {
        LT__FWD(ctx, nd)(nd);
    }
    if (lt_failed(ctx)) return NULL;
    if (ctx->cap_hooks) ctx->cap_hooks->node(ctx, nd);
    if (nd->out->requires_grad) {
        if (ctx->tape_len == ctx->tape_cap) {
            int cap = ctx->tape_cap ? 2 * ctx->tape_cap : 256;
            lt__node **t = (lt__node **)LT__REALLOC(ctx->tape, (size_t)cap * sizeof(lt__node *));
            if (!t) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory growing the tape", nd->op->name); return NULL; }
            ctx->tape = t;
            ctx->tape_cap = cap;
        }
        ctx->tape[ctx->tape_len++] = nd;
        nd->out->node = nd;
    }
    return nd->out;
}

/* Copy indices into the arena (the record keeps where they came from, for compiled replays). */
static int32_t *lt__node_ids(lt_ctx *ctx, lt__node *nd, const int32_t *ids, int64_t n) {
    int32_t *p = (int32_t *)lt__arena_alloc(ctx, (size_t)n * sizeof(int32_t));
    if (p) memcpy(p, ids, (size_t)n * sizeof(int32_t));
    if (p && ctx->dev) ctx->dev->ids(ctx, nd, ids, n);   /* kernels read the device copy */
    nd->ids = p;
    nd->ids_src = ids;
    nd->n_ids = n;
    return p;
}

/* A buffer saved for backward (slot 0 or 1 of the record). */
static float *lt__save(lt_ctx *ctx, lt__node *nd, int slot, int64_t n) {
    nd->save[slot] = (float *)lt__values_alloc(ctx, (size_t)n * sizeof(float));
    nd->n_save[slot] = n;
    return nd->save[slot];
}

/* 16-bit precision (lt_set_precision): the record's type, kept in a double slot, and the
   single-thread vector conversions of @@HALF (out[i] = float(in[i]), in[i] to 16 bits, and
   out[i] = float(16 bit(in[i]))). */
static lt_dtype lt__prec_of(double f) { return f == (double)LT_F16 ? LT_F16 : LT_BF16; }
#define LT__PREC(nd) ((nd)->f[0])    /* a 16-bit record's precision (matmul16, linear16, ... gelu16) */
#define LT__PREC2(nd) ((nd)->f[1])   /* ... where f[0] is another argument (layernorm16, linear_ce16) */
/* Does a 16-bit op keep a 16-bit copy of t, a value its backward reads?  In a compiled plan
   (recorded while ctx->dry) yes: the plan reuses the float32 buffers after the forward, and the
   copies are what halves the activation memory.  Eager on the CPU, every float32 tensor of a
   step stays in the arena until lt_reset, so a value that is already 16-bit (the rounded output
   of a 16-bit product, attention16 or gelu16 in the same precision) is read in place by backward
   (rounding it again changes nothing: the same bits as a copy), and a copy would only add memory.
   Other values keep their copy in eager mode too: reading float32 and rounding it while packing
   a GEMM operand is slower than widening a copy.  (Nothing an eager step writes over is read this
   way: lt__add_over writes over a product's output, which no backward reads.)
   LTRAIN_EAGER_COPIES16=1 in the environment makes eager ops keep every copy (to compare). */
static int lt__exact16(const lt_tensor *t, lt_dtype p) {
    const lt__node *nd = t ? t->node : NULL;
    if (!nd || LT__PREC(nd) != (double)p) return 0;
    return (nd->op->flags & LT__Y16) != 0;
}
static int lt__copy16(const lt_ctx *ctx, const lt_tensor *t) {
    const char *e;
    if (ctx->dry || ctx->device != LT_CPU || !lt__exact16(t, ctx->precision)) return 1;
    e = getenv("LTRAIN_EAGER_COPIES16");
    return e && strcmp(e, "1") == 0;
}

/* ---- @@OPS.reshape  reshape: a view ---------------------------------------------------------- */
/* x (any) -> y (same n, new shape), sharing x's data; dx += dy */
static void lt__reshape_fwd(lt__node *nd) { nd->out->data = nd->in[0]->data; }
static void lt__reshape_bwd(lt__node *nd) {
    int add;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gy = nd->out->grad;
    int64_t i, n = nd->out->n;
    if (!gx) return;
    if (!add) { lt__copy(gx, gy, n); return; }
    LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
    for (i = 0; i < n; i++) gx[i] += gy[i];
}

LTRAIN_DEF lt_tensor *lt_reshape(lt_ctx *ctx, lt_tensor *t, int ndim, const int64_t *shape) {
    int64_t s[LT_MAX_DIMS], known = 1;
    int i, infer = -1;
    char b1[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_reshape", t, t)) return NULL;
    if (ndim < 1 || ndim > LT_MAX_DIMS || !shape) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_reshape: ndim is %d: it must be 1..%d", ndim, LT_MAX_DIMS);
        return NULL;
    }
    for (i = 0; i < ndim; i++) {
        s[i] = shape[i];
        if (s[i] == -1 && infer < 0) infer = i;
        else if (s[i] < 1) {
            lt_set_error(ctx, LT_ERR_ARG, "lt_reshape: dim %d is %lld: dims must be >= 1 (one may be -1)", i,
                         (long long)s[i]);
            return NULL;
        } else if (known > 0 && s[i] <= t->n / known) known *= s[i];
        else known = 0; /* more elements than x has: a mismatch (and no overflow) */
    }
    if (infer >= 0) s[infer] = known > 0 && t->n % known == 0 ? t->n / known : 0;
    if (infer >= 0 && s[infer] > 0) known *= s[infer];
    if (known != t->n) {
        char b2[96];
        size_t used = (size_t)snprintf(b2, sizeof b2, "[");
        for (i = 0; i < ndim && used < sizeof b2; i++)
            used += (size_t)snprintf(b2 + used, sizeof b2 - used, i ? ",%lld" : "%lld", (long long)shape[i]);
        if (used < sizeof b2) snprintf(b2 + used, sizeof b2 - used, "]");
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_reshape: x is %s (%lld elements), the new shape %s does not hold "
                     "that many: a reshape must keep the count", lt_shape_str(t, b1, sizeof b1), (long long)t->n, b2);
        return NULL;
    }
    nd = lt__node_new(ctx, LT__OP(reshape), ndim, s, t, NULL, NULL, 1);
    if (!nd) return NULL;
    nd->out->base = t->base ? t->base : t;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.add  add, sub, mul: elementwise, b broadcast over a's leading dims ---------------- */
/* a (..., S), b (S) -> y (..., S) where S is any trailing part of a's shape; i indexes y,
   b is read at i mod |b|. */
static int lt__check_broadcast(lt_ctx *ctx, const char *who, const lt_tensor *a, const lt_tensor *b) {
    int k;
    char b1[64], b2[64];
    if (b->ndim <= a->ndim) {
        for (k = 1; k <= b->ndim; k++)
            if (a->shape[a->ndim - k] != b->shape[b->ndim - k]) break;
        if (k > b->ndim) return 1;
    }
    lt_set_error(ctx, LT_ERR_SHAPE, "%s: a is %s, b is %s: b's shape must equal a's trailing dims "
                 "(b is broadcast over a's leading dims)", who, lt_shape_str(a, b1, sizeof b1),
                 lt_shape_str(b, b2, sizeof b2));
    return 0;
}

static lt_tensor *lt__binary(lt_ctx *ctx, const lt__opdef *op, const char *who, lt_tensor *a, lt_tensor *b) {
    lt__node *nd;
    if (!lt__live(ctx, who, a, b) || !lt__check_broadcast(ctx, who, a, b)) return NULL;
    nd = lt__node_new(ctx, op, a->ndim, a->shape, a, b, NULL, 0);
    return lt__run(ctx, nd);
}

/* The backward helpers of the three: threaded, and each element's sum runs over the rows in order
   (threads split the columns), so results do not depend on the thread count.
     ga[i] += gy[i]·(b[i mod nb] or 1)                            (elementwise)
     gb[j] += sign · Σ_r gy[r·nb + j]·(a[r·nb + j] or 1)          (over the broadcast rows r)
   add = 0 (a gradient buffer without values yet, lt__grad_w): = instead of +=. */
static void lt__bcast_grad_a(float *ga, const float *gy, const float *b, int64_t n, int64_t nb, int add) {
    int64_t i;
    if (!b && !add) { lt__copy(ga, gy, n); return; }
    if (!b) {
        LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
        for (i = 0; i < n; i++) ga[i] += gy[i];
        return;
    }
    if (!add) {
        LT__OMP(parallel for if (n > LT__EW_PAR))
        for (i = 0; i < n; i++) ga[i] = gy[i] * b[i % nb];
        return;
    }
    LT__OMP(parallel for if (n > LT__EW_PAR))
    for (i = 0; i < n; i++) ga[i] += gy[i] * b[i % nb];
}
static void lt__bcast_grad_b(float *gb, const float *gy, const float *a, int64_t n, int64_t nb, float sign, int add) {
    int64_t j0, rows = n / nb;
    if (rows == 1 && !a && sign > 0) { lt__bcast_grad_a(gb, gy, NULL, n, nb, add); return; }   /* same shape */
    LT__OMP(parallel for if (n > LT__EW_PAR))
    for (j0 = 0; j0 < nb; j0 += 64) {
        float acc[64];   /* the sums of this block of columns, apart from gb (no aliasing) */
        int64_t w = j0 + 64 < nb ? 64 : nb - j0, r, j;
        for (j = 0; j < w; j++) acc[j] = add ? gb[j0 + j] : 0.0f;
        for (r = 0; r < rows; r++) {
            const float *g = gy + r * nb + j0, *x = a ? a + r * nb + j0 : NULL;
            if (w == 64) {   /* fixed trip counts: the compiler keeps acc in vector registers */
                if (x) for (j = 0; j < 64; j++) acc[j] += g[j] * x[j];
                else if (sign > 0) for (j = 0; j < 64; j++) acc[j] += g[j];
                else for (j = 0; j < 64; j++) acc[j] -= g[j];
            } else if (x) for (j = 0; j < w; j++) acc[j] += g[j] * x[j];
            else if (sign > 0) for (j = 0; j < w; j++) acc[j] += g[j];
            else for (j = 0; j < w; j++) acc[j] -= g[j];
        }
        for (j = 0; j < w; j++) gb[j0 + j] = acc[j];
    }
}

static void lt__add_fwd(lt__node *nd) {
    const float *a = nd->in[0]->data, *b = nd->in[1]->data;
    float *y = nd->out->data;
    int64_t n = nd->out->n, nb = nd->in[1]->n, r;
    if (nb == n) {   /* the same shape (a residual add): one row, split over the threads by elements */
        LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
        for (r = 0; r < n; r++) y[r] = a[r] + b[r];
        return;
    }
    LT__OMP(parallel for if (n > 32768))
    for (r = 0; r < n / nb; r++) {
        int64_t j;
        LT__OMP(simd)
        for (j = 0; j < nb; j++) y[r * nb + j] = a[r * nb + j] + b[j];
    }
}
/* da += dy; db += sum over the broadcast rows of dy */
static void lt__add_bwd(lt__node *nd) {
    int adda, addb;
    float *gy = nd->out->grad, *gb = lt__grad_w(nd->in[1], nd->ctx, &addb), *ga;
    int64_t n = nd->out->n, nb = nd->in[1]->n;
    if (gb) lt__bcast_grad_b(gb, gy, NULL, n, nb, 1.0f, addb);
    if (lt__grad_adopt(nd, 0)) return;   /* da = dy: a takes dy's buffer as it is (eager) */
    ga = lt__grad_w(nd->in[0], nd->ctx, &adda);
    if (ga && !(ga == gy && !adda)) lt__bcast_grad_a(ga, gy, NULL, n, nb, adda);   /* (a plan's in place: done) */
}
LTRAIN_DEF lt_tensor *lt_add(lt_ctx *ctx, lt_tensor *a, lt_tensor *b) { return lt__binary(ctx, LT__OP(add), "lt_add", a, b); }
/* lt_add whose result is written over the values of `over` (a or b, of the result's shape): for
   the GPT trunk's residual adds, whose branch output is a private intermediate that no backward
   kernel reads (add's own backward reads no values), so eager mode keeps one tensor fewer per
   add.  Recording for lt_compile, or off the CPU, it is a plain lt_add (the plan places memory). */
static lt_tensor *lt__add_over(lt_ctx *ctx, lt_tensor *a, lt_tensor *b, lt_tensor *over) {
    lt__node *nd;
    if (!ctx || ctx->cap || ctx->dry || ctx->device != LT_CPU || !a || !b || !over || over->n != a->n ||
        over->is_param || over->base || !over->data)
        return lt_add(ctx, a, b);
    if (!lt__live(ctx, "lt_add", a, b) || !lt__check_broadcast(ctx, "lt_add", a, b)) return NULL;
    nd = lt__node_new(ctx, LT__OP(add), a->ndim, a->shape, a, b, NULL, 1);
    if (!nd) return NULL;
    nd->out->data = over->data;
    return lt__run(ctx, nd);
}

static void lt__sub_fwd(lt__node *nd) {
    const float *a = nd->in[0]->data, *b = nd->in[1]->data;
    float *y = nd->out->data;
    int64_t n = nd->out->n, nb = nd->in[1]->n, i;
    LT__OMP(parallel for if (n > LT__EW_PAR))
    for (i = 0; i < n; i++) y[i] = a[i] - b[i % nb];
}
/* da += dy; db -= sum of dy over the broadcast rows */
static void lt__sub_bwd(lt__node *nd) {
    int adda, addb;
    float *ga = lt__grad_w(nd->in[0], nd->ctx, &adda), *gb = lt__grad_w(nd->in[1], nd->ctx, &addb), *gy = nd->out->grad;
    int64_t n = nd->out->n, nb = nd->in[1]->n;
    if (ga) lt__bcast_grad_a(ga, gy, NULL, n, nb, adda);
    if (gb) lt__bcast_grad_b(gb, gy, NULL, n, nb, -1.0f, addb);
}
LTRAIN_DEF lt_tensor *lt_sub(lt_ctx *ctx, lt_tensor *a, lt_tensor *b) { return lt__binary(ctx, LT__OP(sub), "lt_sub", a, b); }

static void lt__mul_fwd(lt__node *nd) {
    const float *a = nd->in[0]->data, *b = nd->in[1]->data;
    float *y = nd->out->data;
    int64_t n = nd->out->n, nb = nd->in[1]->n, i;
    LT__OMP(parallel for if (n > LT__EW_PAR))
    for (i = 0; i < n; i++) y[i] = a[i] * b[i % nb];
}
/* da += dy*b; db += sum over broadcast rows of dy*a */
static void lt__mul_bwd(lt__node *nd) {
    const float *a = nd->in[0]->data, *b = nd->in[1]->data;
    int adda, addb;
    float *ga = lt__grad_w(nd->in[0], nd->ctx, &adda), *gb = lt__grad_w(nd->in[1], nd->ctx, &addb), *gy = nd->out->grad;
    int64_t n = nd->out->n, nb = nd->in[1]->n;
    if (ga) lt__bcast_grad_a(ga, gy, b, n, nb, adda);
    if (gb) lt__bcast_grad_b(gb, gy, a, n, nb, 1.0f, addb);
}
LTRAIN_DEF lt_tensor *lt_mul(lt_ctx *ctx, lt_tensor *a, lt_tensor *b) { return lt__binary(ctx, LT__OP(mul), "lt_mul", a, b); }

/* ---- @@OPS.scale  scale: y = s*x ----------------------------------------------------------------- */
#define LT__SCALE_S(nd) ((nd)->f[0])   /* s */
static void lt__scale_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data, s = (float)LT__SCALE_S(nd);
    int64_t i, n = nd->out->n;
    LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
    for (i = 0; i < n; i++) y[i] = s * x[i];
}
static void lt__scale_bwd(lt__node *nd) {
    int add;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gy = nd->out->grad, s = (float)LT__SCALE_S(nd);
    int64_t i, n = nd->out->n;
    if (!gx) return;
    if (!add) {
        LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
        for (i = 0; i < n; i++) gx[i] = s * gy[i];
        return;
    }
    LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
    for (i = 0; i < n; i++) gx[i] += s * gy[i];
}
LTRAIN_DEF lt_tensor *lt_scale(lt_ctx *ctx, lt_tensor *a, float s) {
    lt__node *nd;
    if (!lt__live(ctx, "lt_scale", a, a)) return NULL;
    nd = lt__node_new(ctx, LT__OP(scale), a->ndim, a->shape, a, NULL, NULL, 0);
    if (nd) LT__SCALE_S(nd) = s;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.sum  sum, mean: x (any) -> y [1] ------------------------------------------------- */
static double lt__sum_f(const float *x, int64_t n) {
    double s = 0;
    int64_t i;
    for (i = 0; i < n; i++) s += x[i];
    return s;
}
static void lt__sum_fwd(lt__node *nd) { nd->out->data[0] = (float)lt__sum_f(nd->in[0]->data, nd->in[0]->n); }
/* dx_i += dy */
static void lt__sum_bwd(lt__node *nd) {
    float *gx = lt__grad(nd->in[0], nd->ctx), g = nd->out->grad[0];
    int64_t i, n = nd->in[0]->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += g;
}
static void lt__mean_fwd(lt__node *nd) {
    nd->out->data[0] = (float)(lt__sum_f(nd->in[0]->data, nd->in[0]->n) / (double)nd->in[0]->n);
}
/* dx_i += dy / n */
static void lt__mean_bwd(lt__node *nd) {
    float *gx = lt__grad(nd->in[0], nd->ctx), g = nd->out->grad[0] / (float)nd->in[0]->n;
    int64_t i, n = nd->in[0]->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += g;
}
static lt_tensor *lt__reduce(lt_ctx *ctx, const lt__opdef *op, const char *who, lt_tensor *a) {
    int64_t one = 1;
    lt__node *nd;
    if (!lt__live(ctx, who, a, a)) return NULL;
    nd = lt__node_new(ctx, op, 1, &one, a, NULL, NULL, 0);
    return lt__run(ctx, nd);
}
LTRAIN_DEF lt_tensor *lt_sum(lt_ctx *ctx, lt_tensor *a) { return lt__reduce(ctx, LT__OP(sum), "lt_sum", a); }
LTRAIN_DEF lt_tensor *lt_mean(lt_ctx *ctx, lt_tensor *a) { return lt__reduce(ctx, LT__OP(mean), "lt_mean", a); }

/* ---- @@OPS.activations  pointwise activations --------------------------------------------------- */
static lt_tensor *lt__unary(lt_ctx *ctx, const lt__opdef *op, const char *who, lt_tensor *a) {
    lt__node *nd;
    if (!lt__live(ctx, who, a, a)) return NULL;
    nd = lt__node_new(ctx, op, a->ndim, a->shape, a, NULL, NULL, 0);
    return lt__run(ctx, nd);
}

/* ---- @@OPS.gelu  gelu (tanh, and erf below) -------------------------------------------------- */
/* gelu (tanh): y = ½x(1 + tanh(u)), u = √(2/π)(x + 0.044715x³)   (torch's approximate='tanh'),
   computed as y = x·s with s = σ(2u) = 1/(1 + e^(-2u)), which is ½(1 + tanh u): one exp and no
   cancellation where tanh u → -1 (there 1 + tanh u loses digits, σ does not).
     dy/dx = s + x·σ'(2u)·2u' = s + 2x·s(1 - s)·√(2/π)(1 + 3·0.044715x²)
   σ(z) from e = exp(-|z|) <= 1 (no overflow): 1/(1 + e) for z >= 0, e/(1 + e) for z < 0. */
#define LT__GELU_K 0.7978845608028654f /* sqrt(2/pi) */
#define LT__GELU_C 0.044715f
LT__OMP(declare simd)
static inline float lt__gelu_s(float v) {   /* s = σ(2u) at x = v */
    float u = LT__GELU_K * (v + LT__GELU_C * v * v * v), e = lt__exp_neg(-2.0f * fabsf(u)), r = 1.0f / (1.0f + e);
    return u < 0.0f ? e * r : r;
}
LT__OMP(declare simd)
static inline float lt__gelu_d(float v) {   /* dy/dx at x = v */
    float s = lt__gelu_s(v);
    return s + 2.0f * v * (s - s * s) * LT__GELU_K * (1.0f + 3.0f * LT__GELU_C * v * v);
}

/* ---- fast paths: AVX-512 (gelu) ---------------------------------------------------------------- */
#ifdef LT__X86
/* The same with AVX-512, 16 values at a time (the last ones masked): exp by lt__exp_neg16, and
   1/(1 + e) by the 14-bit reciprocal and one Newton step, r·(2 - d·r).  Each result is within a
   few ulp of the plain C loops' (they divide), at about half their cost (bench/design.md). */
LT__TARGET("avx512f") static inline __m512 lt__gelu_s16(__m512 v) {
    __m512 u = _mm512_mul_ps(_mm512_set1_ps(LT__GELU_K),
                             _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(LT__GELU_C), _mm512_mul_ps(v, v)), v, v));
    __m512 e = lt__exp_neg16(_mm512_mul_ps(_mm512_set1_ps(-2.0f), _mm512_abs_ps(u)));
    __m512 d = _mm512_add_ps(_mm512_set1_ps(1.0f), e), r = _mm512_maskz_rcp14_ps(LT__M16, d);
    r = _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
    return _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(u, _mm512_setzero_ps(), _CMP_LT_OQ), r, e);
}
LT__TARGET("avx512f") static void lt__gelu_avx512(const float *x, float *y, int64_t m) {
    int64_t i;
    for (i = 0; i < m; i += 16) {
        __mmask16 k = (__mmask16)(m - i >= 16 ? 0xFFFFu : (1u << (m - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, x + i);
        _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(v, lt__gelu_s16(v)));
    }
}
/* gx = gy·dy/dx (add: gx += ...); gy NULL: gx = dy/dx */
LT__TARGET("avx512f") static void lt__gelu_bwd_avx512(const float *x, const float *gy, float *gx, int64_t m, int add) {
    const __m512 two = _mm512_set1_ps(2.0f), one = _mm512_set1_ps(1.0f);
    int64_t i;
    for (i = 0; i < m; i += 16) {
        __mmask16 k = (__mmask16)(m - i >= 16 ? 0xFFFFu : (1u << (m - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, x + i), s = lt__gelu_s16(v);
        __m512 du = _mm512_mul_ps(_mm512_set1_ps(LT__GELU_K),
                                  _mm512_fmadd_ps(_mm512_set1_ps(3.0f * LT__GELU_C), _mm512_mul_ps(v, v), one));
        __m512 d = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_mul_ps(two, v), _mm512_fnmadd_ps(s, s, s)), du, s);
        if (gy) d = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, gy + i), d);
        if (add) d = _mm512_add_ps(_mm512_maskz_loadu_ps(k, gx + i), d);
        _mm512_mask_storeu_ps(gx + i, k, d);
    }
}
#endif

/* y = gelu(x) for m values (y may be x).  The plain C path runs every value through the same
   16-wide loop of one function that is never inlined (lt__gelu_run16; the last piece padded into
   a block of 16), never a scalar remainder loop or a second copy of the loop that the compiler
   may contract (FMA) differently, so a value gets the same bits wherever it sits: gelu16's
   lookup table (below) is made by this function too. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void lt__gelu_run16(const float *x, float *y, int64_t blocks) {   /* blocks x 16 floats */
    int64_t b;
    int i;
    for (b = 0; b < blocks; b++, x += 16, y += 16) {
        LT__OMP(simd)
        for (i = 0; i < 16; i++) y[i] = x[i] * lt__gelu_s(x[i]);   /* a fixed trip count: one vector body */
    }
}
static void lt__gelu_rows(int simd, const float *x, float *y, int64_t m) {
    int64_t full = m / 16, i;
#ifdef LT__X86
    if (simd) { lt__gelu_avx512(x, y, m); return; }
#else
    (void)simd;
#endif
    if (full) lt__gelu_run16(x, y, full);
    if (m > full * 16) {
        float t[16];
        int n = (int)(m - full * 16);
        for (i = 0; i < 16; i++) t[i] = i < n ? x[full * 16 + i] : 0.0f;
        lt__gelu_run16(t, t, 1);
        for (i = 0; i < n; i++) y[full * 16 + i] = t[i];
    }
}
/* gx = gy·gelu'(x) (add: gx += ...; gx may be gy); gy NULL: gx = gelu'(x) */
static void lt__gelu_grad_rows(int simd, const float *x, const float *gy, float *gx, int64_t m, int add) {
    int64_t i;
#ifdef LT__X86
    if (simd) { lt__gelu_bwd_avx512(x, gy, gx, m, add); return; }
#else
    (void)simd;
#endif
    if (!gy) {
        LT__OMP(simd)
        for (i = 0; i < m; i++) gx[i] = lt__gelu_d(x[i]);
    } else if (add) {
        LT__OMP(simd)
        for (i = 0; i < m; i++) gx[i] += gy[i] * lt__gelu_d(x[i]);
    } else {
        LT__OMP(simd)
        for (i = 0; i < m; i++) gx[i] = gy[i] * lt__gelu_d(x[i]);
    }
}
/* Do the AVX-512 activation kernels run (the CPU has them and LT_GEMM does not ask for others)? */
static int lt__act_simd(void) {
#ifdef LT__X86
    return lt__gemm_pick() == LT__GEMM_AVX512;
#else
    return 0;
#endif
}
/* The loops run over blocks of LT__EWB values, each a simd loop in a function of its own, and the
   threads take blocks.  (A combined "parallel for simd if (...)" whose condition is false, as
   for a small tensor, also turns the simd off; bench/design.md.  "if (parallel : ...)" limits the
   condition to the threads; the simple loops below are written that way.) */
#define LT__EWB 4096
static void lt__gelu_fwd(lt__node *nd) {
    int64_t n = nd->out->n, b;
    int simd = lt__act_simd();
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++)
        lt__gelu_rows(simd, nd->in[0]->data + b * LT__EWB, nd->out->data + b * LT__EWB,
                      n - b * LT__EWB < LT__EWB ? n - b * LT__EWB : LT__EWB);
}
static void lt__gelu_bwd(lt__node *nd) {
    const float *gy = nd->out->grad;
    int add = 0, simd = lt__act_simd();
    float *gx = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &add);   /* in place? */
    int64_t n = nd->out->n, b;
    if (!gx) return;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++)
        lt__gelu_grad_rows(simd, nd->in[0]->data + b * LT__EWB, gy + b * LT__EWB, gx + b * LT__EWB,
                           n - b * LT__EWB < LT__EWB ? n - b * LT__EWB : LT__EWB, add);
}

/* gelu16 (lt_set_precision): y = round16(gelu(round16(x))), as torch's gelu on a bf16 tensor (its
   math in float32, the result rounded); saves x in 16 bits (save[0], R·n/2 floats), so the
   float32 input is free after the forward; dx += dy·gelu'(x16) in float32.  LT__PREC(nd) = the precision.
   In blocks of LT__EW16 elements, converted on the stack. */
#define LT__EW16 4096
/* A 16-bit input is one of 65536 bit patterns, so gelu16's output round16(gelu(x)) and the
   derivative gelu'(x) are tabulated, once per format (4 tables of 256 KiB, filled the first time
   lt_gelu is called in that precision), and every later value is a lookup: no exp per element
   in the forward, the backward, or the GEMM's packing that recomputes the MLP's activation.
   The tables come from lt__gelu_rows and lt__gelu_grad_rows themselves (with the kernels that
   float32 gelu runs on this CPU), so a lookup gives the bits the float32 op gives. */
static float lt__gelu16_y[2][65536], lt__gelu16_dy[2][65536];
static int lt__gelu16_ready[2];
static void lt__gelu16_tables(lt_dtype p) {
    int k = p == LT_F16, i;
    LT__OMP(critical(lt__gelu16_tables))
    if (!lt__gelu16_ready[k]) {
        float *y = lt__gelu16_y[k], *d = lt__gelu16_dy[k];
        uint16_t h[256];
        int j, simd = lt__act_simd();
        for (i = 0; i < 65536; i += 256) {
            for (j = 0; j < 256; j++) h[j] = (uint16_t)(i + j);
            lt__from16(p, h, y + i, 256);
        }
        lt__gelu_grad_rows(simd, y, NULL, d, 65536, 0);
        lt__gelu_rows(simd, y, y, 65536);
        lt__round16(p, y, y, 65536);
        lt__gelu16_ready[k] = 1;
    }
}
/* y = round16(gelu(x16)): gelu16's output from its saved input (also for a GEMM's packing) */
static void lt__gelu16_block(lt_dtype p, const uint16_t *xh, float *y, int64_t m) {
    const float *tab = lt__gelu16_y[p == LT_F16];
    int64_t i;
    for (i = 0; i < m; i++) y[i] = tab[xh[i]];
}
static void lt__gelu16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC(nd));
    uint16_t *xh = (uint16_t *)(void *)nd->save[0];
    int64_t n = nd->out->n, nb = (n + LT__EW16 - 1) / LT__EW16, b;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < nb; b++) {
        int64_t lo = b * LT__EW16, m = n - lo < LT__EW16 ? n - lo : LT__EW16;
        uint16_t tmp[LT__EW16], *h = xh ? xh + lo : tmp;   /* x in 16 bits: saved, or for the lookup only */
        lt__to16(p, nd->in[0]->data + lo, h, (size_t)m);
        lt__gelu16_block(p, h, nd->out->data + lo, m);
    }
}
static void lt__gelu16_bwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC(nd));
    const uint16_t *xh = (const uint16_t *)(const void *)nd->save[0];
    const float *gy = nd->out->grad, *tab = lt__gelu16_dy[p == LT_F16];
    int add = 0;
    float *gx = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &add);
    int64_t n = nd->out->n, nb = (n + LT__EW16 - 1) / LT__EW16, b;
    if (!gx) return;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < nb; b++) {
        int64_t lo = b * LT__EW16, m = n - lo < LT__EW16 ? n - lo : LT__EW16, j;
        uint16_t tmp[LT__EW16];
        const uint16_t *h = xh ? xh + lo : tmp;   /* x's 16-bit patterns: saved, or (eager, x read in
                                                     place: lt__copy16) made here */
        if (!xh) lt__to16(p, nd->in[0]->data + lo, tmp, (size_t)m);
        if (add) {
            LT__OMP(simd)
            for (j = 0; j < m; j++) gx[lo + j] += gy[lo + j] * tab[h[j]];
        } else {
            LT__OMP(simd)
            for (j = 0; j < m; j++) gx[lo + j] = gy[lo + j] * tab[h[j]];
        }
    }
}
LTRAIN_DEF lt_tensor *lt_gelu(lt_ctx *ctx, lt_tensor *a) {
    lt__node *nd;
    if (!ctx || ctx->precision == LT_F32 || ctx->device != LT_CPU)   /* (the CUDA kernel is float32) */
        return lt__unary(ctx, LT__OP(gelu), "lt_gelu", a);
    if (!lt__live(ctx, "lt_gelu", a, a)) return NULL;
    lt__gelu16_tables(ctx->precision);
    nd = lt__node_new(ctx, LT__OP(gelu16), a->ndim, a->shape, a, NULL, NULL, 0);
    if (!nd) return NULL;
    LT__PREC(nd) = (double)ctx->precision;
    if (nd->out->requires_grad && lt__copy16(ctx, a) && !lt__save(ctx, nd, 0, (a->n + 1) / 2)) return NULL;
    return lt__run(ctx, nd);
}

/* gelu (erf): y = ½x(1 + erf(x/√2)),  dy/dx = ½(1 + erf(x/√2)) + x·φ(x),  φ = exp(-x²/2)/√(2π) */
static void lt__gelu_erf_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data;
    int64_t i, n = nd->out->n;
    for (i = 0; i < n; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}
static void lt__gelu_erf_bwd(lt__node *nd) {
    const float *x = nd->in[0]->data, *gy = nd->out->grad;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    int64_t i, n = nd->out->n;
    if (gx)
        for (i = 0; i < n; i++) {
            float v = x[i];
            float d = 0.5f * (1.0f + erff(v * 0.70710678118654752f)) + v * expf(-0.5f * v * v) * 0.3989422804014327f;
            gx[i] += gy[i] * d;
        }
}
LTRAIN_DEF lt_tensor *lt_gelu_erf(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(gelu_erf), "lt_gelu_erf", a); }

/* ---- @@OPS.relu  relu, tanh, sigmoid --------------------------------------------------------- */
/* relu: y = max(x, 0), dy/dx = [x > 0] */
static void lt__relu_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data;
    int64_t i, n = nd->out->n;
    for (i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
}
static void lt__relu_bwd(lt__node *nd) {
    const float *x = nd->in[0]->data, *gy = nd->out->grad;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    int64_t i, n = nd->out->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += x[i] > 0 ? gy[i] : 0.0f;
}
LTRAIN_DEF lt_tensor *lt_relu(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(relu), "lt_relu", a); }

/* tanh: dy/dx = 1 - y² */
static void lt__tanh_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data;
    int64_t i, n = nd->out->n;
    LT__OMP(simd)
    for (i = 0; i < n; i++) y[i] = lt__tanh(x[i]);
}
static void lt__tanh_bwd(lt__node *nd) {
    const float *y = nd->out->data, *gy = nd->out->grad;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    int64_t i, n = nd->out->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += gy[i] * (1.0f - y[i] * y[i]);
}
LTRAIN_DEF lt_tensor *lt_tanh(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(tanh), "lt_tanh", a); }

/* sigmoid: y = 1/(1+e^-x) (computed without overflow for x << 0), dy/dx = y(1-y) */
static void lt__sigmoid_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data;
    int64_t i, n = nd->out->n;
    for (i = 0; i < n; i++) {
        float v = x[i];
        float e = lt__exp_neg(-fabsf(v));           /* e^-|v|: never overflows */
        y[i] = v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
    }
}
static void lt__sigmoid_bwd(lt__node *nd) {
    const float *y = nd->out->data, *gy = nd->out->grad;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    int64_t i, n = nd->out->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += gy[i] * y[i] * (1.0f - y[i]);
}
LTRAIN_DEF lt_tensor *lt_sigmoid(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(sigmoid), "lt_sigmoid", a); }

/* ---- @@OPS.silu  silu, and swiglu: silu(gate) ⊙ up fused ------------------------------------- */
/* silu (torch's F.silu): y = x·σ(x),  dy/dx = σ(x)·(1 + x·(1 - σ(x)));  σ(x) from e = exp(-|x|)
   (no overflow): 1/(1 + e) for x >= 0, e/(1 + e) below.  Backward reads x. */
LT__OMP(declare simd)
static inline float lt__sigm(float v) {
    float e = lt__exp_neg(-fabsf(v));
    return v >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
LT__OMP(declare simd)
static inline float lt__silu_d(float v) {   /* dy/dx at x = v */
    float s = lt__sigm(v);
    return s * (1.0f + v * (1.0f - s));
}
/* the elementwise loops below: blocks of LT__EWB values, each a simd loop, the threads take blocks
   (as gelu's); y = silu(x) over m values */
static void lt__silu_rows(const float *x, float *y, int64_t m) {
    int64_t i;
    LT__OMP(simd)
    for (i = 0; i < m; i++) y[i] = x[i] * lt__sigm(x[i]);
}
static void lt__silu_fwd(lt__node *nd) {
    int64_t n = nd->out->n, b;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++)
        lt__silu_rows(nd->in[0]->data + b * LT__EWB, nd->out->data + b * LT__EWB,
                      n - b * LT__EWB < LT__EWB ? n - b * LT__EWB : LT__EWB);
}
/* dx = dy·silu'(x) (add: +=; eager, dx may take dy's buffer: lt__grad_adopt) */
static void lt__silu_bwd(lt__node *nd) {
    const float *gy = nd->out->grad, *x = nd->in[0]->data;
    int add = 0;
    float *gx = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &add);
    int64_t n = nd->out->n, b;
    if (!gx) return;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, m = n - lo < LT__EWB ? n - lo : LT__EWB, i;
        if (add) {
            LT__OMP(simd)
            for (i = lo; i < lo + m; i++) gx[i] += gy[i] * lt__silu_d(x[i]);
        } else {
            LT__OMP(simd)
            for (i = lo; i < lo + m; i++) gx[i] = gy[i] * lt__silu_d(x[i]);
        }
    }
}
LTRAIN_DEF lt_tensor *lt_silu(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(silu), "lt_silu", a); }

/* swiglu (the Llama MLP's gate): gate, up (same shape) -> y = silu(gate) ⊙ up, one pass, silu never
   stored.  Backward recomputes σ(gate) from gate:
     dgate += dy·up·silu'(gate),   dup += dy·silu(gate)
   Both gradients come from one read of dy per element, so dgate may be written over dy (eager:
   gate takes dy's buffer, lt__grad_adopt; a compiled plan: LT__DX_OVER_DY).  gate == up (one
   tensor twice): both terms add into its one gradient.
   swiglu16 (lt_set_precision): y = round16(round16(silu(g16))·u16) with g16, u16 the inputs rounded
   to 16 bits (torch's silu then mul on 16-bit tensors, each rounding its float32 result); for
   backward save[0] keeps g16 | u16 (2n 16-bit values), so the float32 inputs need not outlive the
   forward, and the float32 formulas above run on them (eager with both inputs 16-bit values
   already, a 16-bit product's outputs, lt__copy16: no copies, the inputs are read in place). */
static void lt__swiglu_rows(const float *g, const float *u, float *y, int64_t m) {
    int64_t i;
    LT__OMP(simd)
    for (i = 0; i < m; i++) y[i] = g[i] * lt__sigm(g[i]) * u[i];
}
static void lt__swiglu_fwd(lt__node *nd) {
    int64_t n = nd->out->n, b;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++)
        lt__swiglu_rows(nd->in[0]->data + b * LT__EWB, nd->in[1]->data + b * LT__EWB, nd->out->data + b * LT__EWB,
                        n - b * LT__EWB < LT__EWB ? n - b * LT__EWB : LT__EWB);
}
/* m <= LT__EWB elements: gg (+)= dy·u·silu'(g), gu (+)= dy·silu(g) (either NULL: skipped; gg may
   be gy): both terms from one simd loop into the stack, then stored */
static void lt__swiglu_grad_rows(const float *g, const float *u, const float *gy, float *gg, int addg, float *gu,
                                 int addu, int64_t m) {
    float dg[LT__EWB], du[LT__EWB];
    int64_t i;
    LT__OMP(simd)
    for (i = 0; i < m; i++) {
        float d = gy[i], s = lt__sigm(g[i]);
        dg[i] = d * u[i] * (s * (1.0f + g[i] * (1.0f - s)));
        du[i] = d * (g[i] * s);
    }
    if (gg && addg) for (i = 0; i < m; i++) gg[i] += dg[i];
    else if (gg) memcpy(gg, dg, (size_t)m * sizeof(float));
    if (gu && addu) for (i = 0; i < m; i++) gu[i] += du[i];
    else if (gu) memcpy(gu, du, (size_t)m * sizeof(float));
}
/* h: the 16-bit g | u of swiglu16 in precision p, or NULL (the float32 inputs, read in place) */
static void lt__swiglu_grads(lt__node *nd, lt_dtype p, const uint16_t *h) {
    const float *gy = nd->out->grad;
    int addg = 0, addu = 0;
    float *gg, *gu;
    int64_t n = nd->out->n, b;
    if (nd->in[0] == nd->in[1]) {   /* one tensor: its gradient gets both terms, added */
        gg = lt__grad(nd->in[0], nd->ctx);
        gu = gg;
        addg = addu = 1;
    } else {
        gg = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &addg);
        gu = lt__grad_w(nd->in[1], nd->ctx, &addu);
    }
    if (!gg && !gu) return;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, m = n - lo < LT__EWB ? n - lo : LT__EWB;
        float gw[LT__EWB], uw[LT__EWB];
        const float *g = nd->in[0]->data + lo, *u = nd->in[1]->data + lo;
        if (h) {   /* widened from the 16-bit copies */
            lt__from16(p, h + lo, gw, (size_t)m);
            lt__from16(p, h + n + lo, uw, (size_t)m);
            g = gw; u = uw;
        }
        if (gg == gu) {   /* (the same tensor) one term after the other */
            lt__swiglu_grad_rows(g, u, gy + lo, gg + lo, 1, NULL, 1, m);
            lt__swiglu_grad_rows(g, u, gy + lo, NULL, 1, gu + lo, 1, m);
        } else {
            lt__swiglu_grad_rows(g, u, gy + lo, gg ? gg + lo : NULL, addg, gu ? gu + lo : NULL, addu, m);
        }
    }
}
static void lt__swiglu_bwd(lt__node *nd) { lt__swiglu_grads(nd, LT_F32, NULL); }
static void lt__swiglu16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC(nd));
    uint16_t *h = (uint16_t *)(void *)nd->save[0];
    int64_t n = nd->out->n, b;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, m = n - lo < LT__EWB ? n - lo : LT__EWB, i;
        float g[LT__EWB], u[LT__EWB], *y = nd->out->data + lo;
        if (h) {   /* g16, u16 kept for backward, and widened */
            lt__to16(p, nd->in[0]->data + lo, h + lo, (size_t)m);
            lt__to16(p, nd->in[1]->data + lo, h + n + lo, (size_t)m);
            lt__from16(p, h + lo, g, (size_t)m);
            lt__from16(p, h + n + lo, u, (size_t)m);
        } else {
            lt__round16(p, nd->in[0]->data + lo, g, (size_t)m);
            lt__round16(p, nd->in[1]->data + lo, u, (size_t)m);
        }
        LT__OMP(simd)
        for (i = 0; i < m; i++) y[i] = g[i] * lt__sigm(g[i]);
        lt__round16(p, y, y, (size_t)m);
        LT__OMP(simd)
        for (i = 0; i < m; i++) y[i] *= u[i];
        lt__round16(p, y, y, (size_t)m);
    }
}
static void lt__swiglu16_bwd(lt__node *nd) {
    lt__swiglu_grads(nd, lt__prec_of(LT__PREC(nd)), (const uint16_t *)(const void *)nd->save[0]);
}
LTRAIN_DEF lt_tensor *lt_swiglu(lt_ctx *ctx, lt_tensor *gate, lt_tensor *up) {
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_swiglu", gate, up)) return NULL;
    if (gate->n != up->n || gate->ndim != up->ndim ||
        memcmp(gate->shape, up->shape, (size_t)gate->ndim * sizeof(int64_t)) != 0) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_swiglu: gate is %s, up is %s: they must have the same shape",
                     lt_shape_str(gate, b1, sizeof b1), lt_shape_str(up, b2, sizeof b2));
        return NULL;
    }
    if (ctx->precision == LT_F32 || ctx->device != LT_CPU) {   /* (the CUDA kernel is float32) */
        nd = lt__node_new(ctx, LT__OP(swiglu), gate->ndim, gate->shape, gate, up, NULL, 0);
        return lt__run(ctx, nd);
    }
    nd = lt__node_new(ctx, LT__OP(swiglu16), gate->ndim, gate->shape, gate, up, NULL, 0);
    if (!nd) return NULL;
    LT__PREC(nd) = (double)ctx->precision;
    if (nd->out->requires_grad && (lt__copy16(ctx, gate) || lt__copy16(ctx, up)) && !lt__save(ctx, nd, 0, gate->n))
        return NULL;   /* g16 | u16 */
    return lt__run(ctx, nd);
}

/* ---- @@OPS.softmax  softmax and log-softmax over the last dim ------------------------------------- */
/* x (R, V) -> y (R, V).  Stable: subtract the row max first, so logits of ±1e4 and -inf entries
   stay finite.  A row of all -inf has no distribution: softmax gives 0s, log-softmax -inf. */
/* 16 running maxima (a loop compilers vectorise), then the largest: max is exact in any order */
static float lt__row_max(const float *x, int64_t V) {
    float lane[16], m = -INFINITY;
    int64_t j = 0;
    int k;
    for (k = 0; k < 16; k++) lane[k] = -INFINITY;
    for (; j + 16 <= V; j += 16)
        for (k = 0; k < 16; k++) lane[k] = x[j + k] > lane[k] ? x[j + k] : lane[k];
    for (; j < V; j++) m = x[j] > m ? x[j] : m;
    for (k = 0; k < 16; k++) m = lane[k] > m ? lane[k] : m;
    return m;
}
/* A row's max m (through *m; -inf for a row of -inf) and log Σ exp(x_j - m), kept apart as in
   torch's log_softmax, (x - m) - log Σ: the sum m + log Σ would round to m's ulp (~1e-3 at
   |m| = 1e4) and lose the small part of every log-probability. */
static float lt__lse_shifted(const float *x, int64_t V, float *m) {
    double s = 0;
    int64_t j;
    *m = lt__row_max(x, V);
    if (*m == -INFINITY) return -INFINITY;
    {   /* float partial sums in SIMD lanes, accumulated in double per block of 256 */
        int64_t j0;
        for (j0 = 0; j0 < V; j0 += 256) {
            int64_t j1 = j0 + 256 < V ? j0 + 256 : V;
            float part = 0.0f, mm = *m;
            LT__OMP(simd reduction(+ : part))
            for (j = j0; j < j1; j++) part += lt__exp_neg(x[j] - mm);
            s += part;
        }
    }
    return (float)log(s);
}
static void lt__softmax_fwd(lt__node *nd) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V, r;
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++) {
        const float *x = nd->in[0]->data + r * V;
        float *y = nd->out->data + r * V, m = lt__row_max(x, V);
        double s = 0;
        int64_t j;
        if (m == -INFINITY) { memset(y, 0, (size_t)V * sizeof(float)); continue; }
        LT__OMP(simd)
        for (j = 0; j < V; j++) y[j] = lt__exp_neg(x[j] - m);
        for (j = 0; j < V; j++) s += y[j];
        for (j = 0; j < V; j++) y[j] = (float)(y[j] / s);
    }
}
/* dx_j += y_j (dy_j - Σ_k dy_k y_k) */
static void lt__softmax_bwd(lt__node *nd) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V, r;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    if (!gx) return;
    for (r = 0; r < R; r++) {
        const float *y = nd->out->data + r * V, *gy = nd->out->grad + r * V;
        double dot = 0;
        int64_t j;
        for (j = 0; j < V; j++) dot += (double)gy[j] * y[j];
        for (j = 0; j < V; j++) gx[r * V + j] += y[j] * (gy[j] - (float)dot);
    }
}
LTRAIN_DEF lt_tensor *lt_softmax(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(softmax), "lt_softmax", a); }

static void lt__log_softmax_fwd(lt__node *nd) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V, r;
    for (r = 0; r < R; r++) {
        const float *x = nd->in[0]->data + r * V;
        float *y = nd->out->data + r * V, m, ls = lt__lse_shifted(x, V, &m);
        int64_t j;
        for (j = 0; j < V; j++) y[j] = m == -INFINITY ? -INFINITY : (x[j] - m) - ls;
    }
}
/* dx_j += dy_j - exp(y_j) Σ_k dy_k */
static void lt__log_softmax_bwd(lt__node *nd) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V, r;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    if (!gx) return;
    for (r = 0; r < R; r++) {
        const float *y = nd->out->data + r * V, *gy = nd->out->grad + r * V;
        double s = 0;
        int64_t j;
        if (y[0] == -INFINITY && lt__row_max(y, V) == -INFINITY) continue; /* an all -inf row: no gradient */
        for (j = 0; j < V; j++) s += gy[j];
        for (j = 0; j < V; j++) gx[r * V + j] += gy[j] - expf(y[j]) * (float)s;
    }
}
LTRAIN_DEF lt_tensor *lt_log_softmax(lt_ctx *ctx, lt_tensor *a) {
    return lt__unary(ctx, LT__OP(log_softmax), "lt_log_softmax", a);
}

/* ---- @@OPS.layernorm  layernorm ------------------------------------------------------------------- */
/* x (R, C), w, b (C) -> y (R, C) = (x - mean)·rstd·w + b,  rstd = 1/sqrt(var + eps) (biased var);
   saves mean, rstd (R).  Backward, with x̂ = (x - mean)·rstd and g = dy·w:
     dw += Σ_rows dy·x̂,   db += Σ_rows dy,   dx += rstd·(g - mean(g) - x̂·mean(g·x̂))
   layernorm16 (below) runs the same two kernels; only where backward reads x̂ differs. */
#define LT__LN_C(nd) ((nd)->i[0])      /* C, the row length */
#define LT__LN_EPS(nd) ((nd)->f[0])    /* eps */
#define LT__LN_PIECE 256   /* columns of a row held on the stack at a time */
#define LT__LN_RB 32       /* backward: rows per chunk of the dw, db partial sums */

/* One row: y, mean and rstd (either may be NULL: not kept), and x̂ in 16 bits of type p into xh
   when xh != NULL.  The sums run in double (vector partial sums, one thread's, a fixed order).
   rms (lt_rmsnorm): the mean is taken as 0, so var is mean(x²) and x̂ = x·rstd. */
static void lt__ln_row_fwd(const float *x, float *y, const float *w, const float *b, int64_t C, float eps,
                           float *mean, float *rstd, lt_dtype p, uint16_t *xh, int rms) {
    double sum = 0, var = 0;
    float m = 0.0f, s, v[LT__LN_PIECE];
    int64_t j, j0;
    if (!rms) {
        LT__OMP(simd reduction(+ : sum))
        for (j = 0; j < C; j++) sum += x[j];
        m = (float)(sum / (double)C);
    }
    LT__OMP(simd reduction(+ : var))
    for (j = 0; j < C; j++) { double d = (double)x[j] - m; var += d * d; }
    s = (float)(1.0 / sqrt(var / (double)C + eps));
    for (j0 = 0; j0 < C; j0 += LT__LN_PIECE) {   /* v = x̂, then y = v·w + b: one loop per case, each vectorised */
        int64_t n = C - j0 < LT__LN_PIECE ? C - j0 : LT__LN_PIECE;
        const float *xp = x + j0, *wp = w ? w + j0 : NULL, *bp = b ? b + j0 : NULL;
        float *yp = y + j0;
        LT__OMP(simd)
        for (j = 0; j < n; j++) v[j] = (xp[j] - m) * s;
        if (wp && bp) {
            LT__OMP(simd)
            for (j = 0; j < n; j++) yp[j] = v[j] * wp[j] + bp[j];
        } else if (wp) {
            LT__OMP(simd)
            for (j = 0; j < n; j++) yp[j] = v[j] * wp[j];
        } else if (bp) {
            LT__OMP(simd)
            for (j = 0; j < n; j++) yp[j] = v[j] + bp[j];
        } else {
            memcpy(yp, v, (size_t)n * sizeof(float));
        }
        if (xh) lt__to16(p, v, xh + j0, (size_t)n);
    }
    if (mean) *mean = m;
    if (rstd) *rstd = s;
}
static void lt__layernorm_fwd(lt__node *nd) {
    int64_t C = LT__LN_C(nd), R = nd->out->n / C, r;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL, *b = nd->in[2] ? nd->in[2]->data : NULL;
    LT__OMP(parallel for if (R * C > 32768))
    for (r = 0; r < R; r++)
        lt__ln_row_fwd(nd->in[0]->data + r * C, nd->out->data + r * C, w, b, C, (float)LT__LN_EPS(nd), nd->save[0] + r,
                       nd->save[1] + r, LT_F32, NULL, 0);
}

/* Where backward reads x̂ (R, C): from x and the saved means (layernorm; rmsnorm: mean NULL, 0),
   or widened from the 16-bit copy (layernorm16, rmsnorm16). */
typedef struct {
    const float *x, *mean;
    const uint16_t *xh;
    lt_dtype p;
} lt__ln_src;
static void lt__ln_xhat(const lt__ln_src *a, int64_t C, int64_t r, float s, int64_t j0, int64_t n, float *out) {
    const float *x;
    float m;
    int64_t j;
    if (a->xh) { lt__from16(a->p, a->xh + r * C + j0, out, (size_t)n); return; }
    x = a->x + r * C + j0;
    m = a->mean ? a->mean[r] : 0.0f;
    LT__OMP(simd)
    for (j = 0; j < n; j++) out[j] = (x[j] - m) * s;
}

/* g = dy·w for n columns (w NULL: dy) */
static void lt__ln_g(const float *gy, const float *w, int64_t n, float *g) {
    int64_t j;
    if (!w) { memcpy(g, gy, (size_t)n * sizeof(float)); return; }
    LT__OMP(simd)
    for (j = 0; j < n; j++) g[j] = gy[j] * w[j];
}
/* Backward, one pass over the rows: each row's dx, and dw, db summed per chunk of LT__LN_RB rows
   (the threads take chunks), then the chunks' partial sums added in chunk order.  The chunks
   depend on R alone, so the thread count never changes a bit; x and dy are read once.
   rms (rmsnorm): no mean was subtracted, so its term mean(g) drops: dx += rstd·(g - x̂·mean(g·x̂)). */
static void lt__ln_bwd(lt__node *nd, const lt__ln_src *a, const float *rstd, int rms) {
    int64_t C = LT__LN_C(nd), R = nd->out->n / C, nch = (R + LT__LN_RB - 1) / LT__LN_RB, ch, nb, blk;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL;
    int add = 0;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad(nd->in[1], nd->ctx);
    float *gb = lt__grad(nd->in[2], nd->ctx), *part = NULL;
    size_t bytes = 0;
    if (gw || gb) {
        if (!lt_mul_size((size_t)nch * 2, (size_t)C * sizeof(float), &bytes) ||
            !(part = (float *)LT__MALLOC(bytes))) {
            lt_set_error(nd->ctx, LT_ERR_NOMEM, "lt_layernorm backward: out of memory (%zu bytes of partial sums "
                         "for the weight and bias gradients)", bytes);
            return;
        }
    }
    LT__OMP(parallel for if (R * C > 32768))
    for (ch = 0; ch < nch; ch++) {
        float *pw = part ? part + ch * 2 * C : NULL, *pb = pw ? pw + C : NULL;
        float xv[LT__LN_PIECE], g[LT__LN_PIECE];
        int64_t r, r1 = (ch + 1) * LT__LN_RB < R ? (ch + 1) * LT__LN_RB : R, j, j0;
        if (pw) memset(pw, 0, (size_t)(2 * C) * sizeof(float));
        for (r = ch * LT__LN_RB; r < r1; r++) {
            const float *gy = nd->out->grad + r * C;
            float s = rstd[r], fmg, fmgx;
            double mg = 0, mgx = 0;
            for (j0 = 0; gx && j0 < C; j0 += LT__LN_PIECE) {   /* mean(g), mean(g·x̂) */
                int64_t n = C - j0 < LT__LN_PIECE ? C - j0 : LT__LN_PIECE;
                lt__ln_xhat(a, C, r, s, j0, n, xv);
                lt__ln_g(gy + j0, w ? w + j0 : NULL, n, g);
                LT__OMP(simd reduction(+ : mg, mgx))
                for (j = 0; j < n; j++) {
                    mg += g[j];
                    mgx += (double)g[j] * xv[j];
                }
            }
            fmg = rms ? 0.0f : (float)(mg / (double)C);
            fmgx = (float)(mgx / (double)C);
            for (j0 = 0; j0 < C; j0 += LT__LN_PIECE) {   /* dx; the chunk's dw, db */
                int64_t n = C - j0 < LT__LN_PIECE ? C - j0 : LT__LN_PIECE;
                const float *gyp = gy + j0;
                float *gxp = gx ? gx + r * C + j0 : NULL;
                lt__ln_xhat(a, C, r, s, j0, n, xv);
                if (gxp) {
                    lt__ln_g(gyp, w ? w + j0 : NULL, n, g);
                    if (add) {
                        LT__OMP(simd)   /* gx is none of gy, w, xv (the compiler cannot know) */
                        for (j = 0; j < n; j++) gxp[j] += s * (g[j] - fmg - xv[j] * fmgx);
                    } else {
                        LT__OMP(simd)
                        for (j = 0; j < n; j++) gxp[j] = s * (g[j] - fmg - xv[j] * fmgx);
                    }
                }
                if (pw) {
                    float *pwp = pw + j0, *pbp = pb + j0;
                    LT__OMP(simd)
                    for (j = 0; j < n; j++) {
                        pwp[j] += gyp[j] * xv[j];
                        pbp[j] += gyp[j];
                    }
                }
            }
        }
    }
    if (!part) return;
    /* dw, db += the chunks' sums in chunk order; the threads take blocks of 64 columns of w's, then b's */
    nb = (C + 63) / 64;
    LT__OMP(parallel for if (nch * C > 32768))
    for (blk = 0; blk < 2 * nb; blk++) {
        int half = blk >= nb;
        int64_t o = (blk - half * nb) * 64, n = C - o < 64 ? C - o : 64, k, j;
        float acc[64], *out = half ? gb : gw;
        if (!out) continue;
        for (j = 0; j < n; j++) acc[j] = out[o + j];
        for (k = 0; k < nch; k++) {
            const float *pk = part + k * 2 * C + half * C + o;
            LT__OMP(simd)
            for (j = 0; j < n; j++) acc[j] += pk[j];
        }
        for (j = 0; j < n; j++) out[o + j] = acc[j];
    }
    LT__FREE(part);
}
static void lt__layernorm_bwd(lt__node *nd) {
    lt__ln_src a;
    memset(&a, 0, sizeof a);
    a.x = nd->in[0]->data;
    a.mean = nd->save[0];
    lt__ln_bwd(nd, &a, nd->save[1], 0);
}
LTRAIN_DEF lt_tensor *lt_layernorm(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b, float eps) {
    int64_t C, R;
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_layernorm", x, x)) return NULL;
    C = x->shape[x->ndim - 1];
    if ((w && w->n != C) || (b && b->n != C)) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_layernorm: x is %s, %s is %s: it needs %lld values (x's last dim)",
                     lt_shape_str(x, b1, sizeof b1), (w && w->n != C) ? "weight" : "bias",
                     lt_shape_str((w && w->n != C) ? w : b, b2, sizeof b2), (long long)C);
        return NULL;
    }
    if (!(eps > 0) || !isfinite(eps)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_layernorm: eps is %g: it must be a positive number", (double)eps);
        return NULL;
    }
    R = x->n / C;
    if (ctx->precision != LT_F32 && ctx->device == LT_CPU) {   /* (the CUDA kernel is float32) */
        nd = lt__node_new(ctx, LT__OP(layernorm16), x->ndim, x->shape, x, w, b, 0);
        if (!nd) return NULL;
        LT__LN_C(nd) = C;
        LT__LN_EPS(nd) = eps;
        LT__PREC2(nd) = (double)ctx->precision;
        if (nd->out->requires_grad && (!lt__save(ctx, nd, 0, R) || !lt__save(ctx, nd, 1, (x->n + 1) / 2)))
            return NULL;
        return lt__run(ctx, nd);
    }
    nd = lt__node_new(ctx, LT__OP(layernorm), x->ndim, x->shape, x, w, b, 0);
    if (!nd) return NULL;
    LT__LN_C(nd) = C;
    LT__LN_EPS(nd) = eps;
    lt__save(ctx, nd, 0, R);
    lt__save(ctx, nd, 1, R);
    if (!nd->save[0] || !nd->save[1]) return NULL;
    return lt__run(ctx, nd);
}

/* layernorm16 (lt_set_precision): y as lt_layernorm's, in float32 (torch's autocast runs
   layer_norm in float32 too); for backward it saves rstd (save[0], R floats) and x̂ = (x-mean)·rstd
   in 16 bits (save[1], R·C/2 floats) instead of the float32 input, so x is free after the
   forward.  Backward is lt__layernorm_bwd's kernel with x̂ read from the 16-bit copy: x̂ is
   bounded by sqrt(C), so fp16 holds it, and its rounding (2^-9 relative in bf16, 2^-12 in fp16)
   is the only difference from the float32 gradients (tests/test_precision.c bounds it). */
static void lt__layernorm16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC2(nd));
    int64_t C = LT__LN_C(nd), R = nd->out->n / C, r;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL, *b = nd->in[2] ? nd->in[2]->data : NULL;
    uint16_t *xh = (uint16_t *)(void *)nd->save[1];
    LT__OMP(parallel for if (R * C > 32768))
    for (r = 0; r < R; r++)
        lt__ln_row_fwd(nd->in[0]->data + r * C, nd->out->data + r * C, w, b, C, (float)LT__LN_EPS(nd), NULL,
                       nd->save[0] ? nd->save[0] + r : NULL, p, xh ? xh + r * C : NULL, 0);
}
static void lt__layernorm16_bwd(lt__node *nd) {
    lt__ln_src a;
    memset(&a, 0, sizeof a);
    a.xh = (const uint16_t *)(const void *)nd->save[1];
    a.p = lt__prec_of(LT__PREC2(nd));
    if (a.xh) lt__ln_bwd(nd, &a, nd->save[0], 0);
}

/* ---- @@OPS.rmsnorm  RMSNorm over the last dim ------------------------------------------------------ */
/* x (R, C), w (C) or NULL -> y (R, C) = x·rstd·w,  rstd = 1/sqrt(mean(x²) + eps)   (torch.nn.RMSNorm,
   HF's LlamaRMSNorm: statistics in float32, here summed in double); saves rstd (R).  Backward,
   with x̂ = x·rstd and g = dy·w (layernorm's without the mean):
     dw += Σ_rows dy·x̂,   dx += rstd·(g - x̂·mean(g·x̂))
   The kernels are layernorm's (lt__ln_row_fwd, lt__ln_bwd with rms = 1, no bias), so the record
   uses layernorm's slots (LT__LN_C, LT__LN_EPS; LT__RMS_* name them).  QK-norm (Qwen3, OLMo-2) is
   this op on q or k reshaped to [B,T,H,D] with w [D]: rows of one head's D channels.
   rmsnorm16 (lt_set_precision): as layernorm16, y in float32, and backward keeps rstd (save[0])
   and x̂ in 16 bits (save[1]) instead of x. */
#define LT__RMS_C(nd) LT__LN_C(nd)       /* C, the row length */
#define LT__RMS_EPS(nd) LT__LN_EPS(nd)   /* eps */
static void lt__rmsnorm_fwd(lt__node *nd) {
    int64_t C = LT__RMS_C(nd), R = nd->out->n / C, r;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL;
    LT__OMP(parallel for if (R * C > 32768))
    for (r = 0; r < R; r++)
        lt__ln_row_fwd(nd->in[0]->data + r * C, nd->out->data + r * C, w, NULL, C, (float)LT__RMS_EPS(nd), NULL,
                       nd->save[0] + r, LT_F32, NULL, 1);
}
static void lt__rmsnorm_bwd(lt__node *nd) {
    lt__ln_src a;
    memset(&a, 0, sizeof a);
    a.x = nd->in[0]->data;
    lt__ln_bwd(nd, &a, nd->save[0], 1);
}
static void lt__rmsnorm16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC2(nd));
    int64_t C = LT__RMS_C(nd), R = nd->out->n / C, r;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL;
    uint16_t *xh = (uint16_t *)(void *)nd->save[1];
    LT__OMP(parallel for if (R * C > 32768))
    for (r = 0; r < R; r++)
        lt__ln_row_fwd(nd->in[0]->data + r * C, nd->out->data + r * C, w, NULL, C, (float)LT__RMS_EPS(nd), NULL,
                       nd->save[0] ? nd->save[0] + r : NULL, p, xh ? xh + r * C : NULL, 1);
}
static void lt__rmsnorm16_bwd(lt__node *nd) {
    lt__ln_src a;
    memset(&a, 0, sizeof a);
    a.xh = (const uint16_t *)(const void *)nd->save[1];
    a.p = lt__prec_of(LT__PREC2(nd));
    if (a.xh) lt__ln_bwd(nd, &a, nd->save[0], 1);
}
LTRAIN_DEF lt_tensor *lt_rmsnorm(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, float eps) {
    int64_t C, R;
    char b1[64], b2[64];
    int bits16;
    lt__node *nd;
    if (!lt__live(ctx, "lt_rmsnorm", x, x)) return NULL;
    C = x->shape[x->ndim - 1];
    if (w && w->n != C) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_rmsnorm: x is %s, weight is %s: it needs %lld values (x's last dim)",
                     lt_shape_str(x, b1, sizeof b1), lt_shape_str(w, b2, sizeof b2), (long long)C);
        return NULL;
    }
    if (!(eps > 0) || !isfinite(eps)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_rmsnorm: eps is %g: it must be a positive number", (double)eps);
        return NULL;
    }
    R = x->n / C;
    bits16 = ctx->precision != LT_F32 && ctx->device == LT_CPU;   /* (the CUDA kernel is float32) */
    nd = lt__node_new(ctx, bits16 ? LT__OP(rmsnorm16) : LT__OP(rmsnorm), x->ndim, x->shape, x, w, NULL, 0);
    if (!nd) return NULL;
    LT__RMS_C(nd) = C;
    LT__RMS_EPS(nd) = eps;
    if (bits16) {
        LT__PREC2(nd) = (double)ctx->precision;
        if (nd->out->requires_grad && (!lt__save(ctx, nd, 0, R) || !lt__save(ctx, nd, 1, (x->n + 1) / 2)))
            return NULL;
    } else if (!lt__save(ctx, nd, 0, R)) {
        return NULL;
    }
    return lt__run(ctx, nd);
}

/* ---- @@OPS.rope  rotary position embedding (Hugging Face's rotate_half layout) ------------------- */
/* x (B, T, H·D) -> y (B, T, H·D), head h at h·D..h·D+D-1, D even, half = D/2.  For position
   p = pos0 + t and i < half, the pair (i, i + half) of every head turns by the angle p·f_i:
     f_i = 1 / theta^(2i/D),  c = cos(p·f_i),  s = sin(p·f_i)
     y_i = x_i·c - x_{i+half}·s,   y_{i+half} = x_{i+half}·c + x_i·s
   (transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb: q·cos + rotate_half(q)·sin).  f_i
   and the angle are float32 as HF computes them (2i/D a float32 quotient, theta to that power
   rounded to float32, 1/it in float32, p·f_i a float32 product), so an angle at a large position
   carries the same rounding as HF's; cos and sin of it in double, rounded.  (The power here is
   correctly rounded; torch's float32 pow is not always, so f_i may be one ulp off HF's for a few
   i: the angle then moves by about p·2^-24 of itself.)  Backward turns dy
   back by -angle:
     dx_i += dy_i·c + dy_{i+half}·s,   dx_{i+half} += dy_{i+half}·c - dy_i·s
   reading no values: the record keeps the (T, half) tables of c and s (save[0]: c then s).
   Threads take rows (b, t).  Each pair is read before it is written, so dx may be written over dy
   (eager: lt__grad_adopt; a plan: LT__DX_OVER_DY).  16-bit precision: float32 arithmetic, as
   before (y is not rounded; its backward keeps nothing but the tables). */
#define LT__ROPE_H(nd) ((nd)->i[0])       /* heads */
#define LT__ROPE_POS0(nd) ((nd)->i[1])    /* the position of t = 0 */
#define LT__ROPE_THETA(nd) ((nd)->f[0])   /* theta (the base) */
/* the tables: cs[t·half + i] = c, cs[(T + t)·half + i] = s */
static void lt__rope_tables(float *cs, int64_t T, int64_t D, int64_t pos0, double theta) {
    int64_t half = D / 2, t, i;
    float base = (float)theta;
    for (i = 0; i < half; i++) {
        float e = (float)(2 * i) / (float)D, f = 1.0f / (float)pow((double)base, (double)e);
        for (t = 0; t < T; t++) {
            float ang = (float)(pos0 + t) * f;
            cs[t * half + i] = (float)cos((double)ang);
            cs[(T + t) * half + i] = (float)sin((double)ang);
        }
    }
}
/* one row of H heads: y = rotate(x) (dir 1) or x turned back (dir -1, backward; add: y +=);
   y may be x */
static void lt__rope_row(const float *x, float *y, const float *c, const float *s, int64_t H, int64_t D, float dir,
                         int add) {
    int64_t half = D / 2, h, i;
    for (h = 0; h < H; h++) {
        const float *xa = x + h * D, *xb = xa + half;
        float *ya = y + h * D, *yb = ya + half;
        if (add) {
            LT__OMP(simd)
            for (i = 0; i < half; i++) {
                float a = xa[i], b = xb[i], sn = dir * s[i];
                ya[i] += a * c[i] - b * sn;
                yb[i] += b * c[i] + a * sn;
            }
        } else {
            LT__OMP(simd)
            for (i = 0; i < half; i++) {
                float a = xa[i], b = xb[i], sn = dir * s[i];
                ya[i] = a * c[i] - b * sn;
                yb[i] = b * c[i] + a * sn;
            }
        }
    }
}
static void lt__rope_fwd(lt__node *nd) {
    int64_t B = nd->out->shape[0], T = nd->out->shape[1], C = nd->out->shape[2], H = LT__ROPE_H(nd), D = C / H, r;
    float *cs = nd->save[0];
    lt__rope_tables(cs, T, D, LT__ROPE_POS0(nd), LT__ROPE_THETA(nd));
    LT__OMP(parallel for if (B * T * C > 32768))
    for (r = 0; r < B * T; r++) {
        int64_t t = r % T;
        lt__rope_row(nd->in[0]->data + r * C, nd->out->data + r * C, cs + t * (D / 2), cs + (T + t) * (D / 2), H, D,
                     1.0f, 0);
    }
}
static void lt__rope_bwd(lt__node *nd) {
    int64_t B = nd->out->shape[0], T = nd->out->shape[1], C = nd->out->shape[2], H = LT__ROPE_H(nd), D = C / H, r;
    const float *cs = nd->save[0], *gy = nd->out->grad;
    int add = 0;
    float *gx = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &add);
    if (!gx) return;
    if (gx == gy) add = 0;   /* dy's buffer taken over (or a plan's in place): turned where it is */
    LT__OMP(parallel for if (B * T * C > 32768))
    for (r = 0; r < B * T; r++) {
        int64_t t = r % T;
        lt__rope_row(gy + r * C, gx + r * C, cs + t * (D / 2), cs + (T + t) * (D / 2), H, D, -1.0f, add);
    }
}
LTRAIN_DEF lt_tensor *lt_rope(lt_ctx *ctx, lt_tensor *x, int n_head, float theta, int pos0) {
    char b1[64];
    lt__node *nd;
    int64_t C;
    if (!lt__live(ctx, "lt_rope", x, x)) return NULL;
    if (x->ndim != 3) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_rope: x is %s: it must be [B,T,H*D]", lt_shape_str(x, b1, sizeof b1));
        return NULL;
    }
    C = x->shape[2];
    if (n_head < 1 || C % n_head != 0 || (C / n_head) % 2 != 0) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_rope: x is %s with %d heads: the heads must divide %lld into heads of an "
                     "even size", lt_shape_str(x, b1, sizeof b1), n_head, (long long)C);
        return NULL;
    }
    if (!(theta > 0) || !isfinite(theta)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_rope: theta is %g: it must be a positive number", (double)theta);
        return NULL;
    }
    if (pos0 < 0) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_rope: pos0 is %d: it must be >= 0", pos0);
        return NULL;
    }
    nd = lt__node_new(ctx, LT__OP(rope), 3, x->shape, x, NULL, NULL, 0);
    if (!nd) return NULL;
    LT__ROPE_H(nd) = n_head;
    LT__ROPE_POS0(nd) = pos0;
    LT__ROPE_THETA(nd) = theta;
    if (!lt__save(ctx, nd, 0, x->shape[1] * (C / n_head))) return NULL;   /* c, s: T x D/2 each */
    return lt__run(ctx, nd);
}

/* ---- @@OPS.embedding  embedding ------------------------------------------------------------------- */
/* W (V, C), ids (N) -> y (N, C) = W[ids];  dW[ids[n]] += dy[n] (rows may repeat: summed).
   Forward: the threads take rows.  Backward: the threads take blocks of 64 columns, each adding
   every row into its columns in row order, so repeated ids never race and the sums do not depend
   on the thread count. */
static void lt__embedding_fwd(lt__node *nd) {
    int64_t C = nd->in[0]->shape[1], N = nd->out->n / C, r;
    LT__OMP(parallel for if (N * C > 4 * LT__EW_PAR))
    for (r = 0; r < N; r++)
        memcpy(nd->out->data + r * C, nd->in[0]->data + (int64_t)nd->ids[r] * C, (size_t)C * sizeof(float));
}
static void lt__embedding_bwd(lt__node *nd) {
    int64_t C = nd->in[0]->shape[1], N = nd->out->n / C, j0;
    float *gw = lt__grad(nd->in[0], nd->ctx);
    if (!gw) return;
    LT__OMP(parallel for if (N * C > 4 * LT__EW_PAR))
    for (j0 = 0; j0 < C; j0 += 64) {
        int64_t w = C - j0 < 64 ? C - j0 : 64, r, j;
        for (r = 0; r < N; r++) {
            float *g = gw + (int64_t)nd->ids[r] * C + j0;
            const float *gy = nd->out->grad + r * C + j0;
            for (j = 0; j < w; j++) g[j] += gy[j];
        }
    }
}
LTRAIN_DEF lt_tensor *lt_embedding(lt_ctx *ctx, lt_tensor *w, const int32_t *ids, int64_t n0, int64_t n1) {
    int64_t shape[3], k, N;
    char b1[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_embedding", w, w)) return NULL;
    if (w->ndim != 2) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_embedding: W is %s: it must be [V,C]", lt_shape_str(w, b1, sizeof b1));
        return NULL;
    }
    if (!ids || n0 < 1 || n1 < 1) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_embedding: ids %s, count %lldx%lld: need ids and counts >= 1",
                     ids ? "given" : "NULL", (long long)n0, (long long)n1);
        return NULL;
    }
    if (n0 > INT64_MAX / n1) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_embedding: %lld x %lld ids overflow", (long long)n0, (long long)n1);
        return NULL;
    }
    N = n0 * n1;
    for (k = 0; k < N; k++)
        if (ids[k] < 0 || ids[k] >= w->shape[0]) {
            lt_set_error(ctx, LT_ERR_ARG, "lt_embedding: ids[%lld] is %d: it must be in [0,%lld) (W is %s)",
                         (long long)k, ids[k], (long long)w->shape[0], lt_shape_str(w, b1, sizeof b1));
            return NULL;
        }
    shape[0] = n0; shape[1] = n1; shape[2] = w->shape[1];
    nd = n0 == 1 ? lt__node_new(ctx, LT__OP(embedding), 2, shape + 1, w, NULL, NULL, 0)
                 : lt__node_new(ctx, LT__OP(embedding), 3, shape, w, NULL, NULL, 0);
    if (!nd || !(lt__node_ids(ctx, nd, ids, N))) return NULL;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.dropout  dropout -------------------------------------------------------------------------- */
/* y = x·m/(1-p), m ~ Bernoulli(1-p) from the context's RNG; saves the scaled mask; dx += dy·mask.
   Not training, or p = 0: y is x itself (no record). */
#define LT__DROPOUT_P(nd) ((nd)->f[0])   /* p */
static void lt__dropout_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data, *m = nd->save[0], p = (float)LT__DROPOUT_P(nd), keep = 1.0f - p;
    lt_rng *rng = &nd->ctx->rng;
    int64_t i, n = nd->out->n;
    for (i = 0; i < n; i++) {
        m[i] = (p < 1.0f && lt_rng_uniform(rng) < keep) ? 1.0f / keep : 0.0f;
        y[i] = x[i] * m[i];
    }
}
static void lt__dropout_bwd(lt__node *nd) {
    float *gx = lt__grad(nd->in[0], nd->ctx), *gy = nd->out->grad;
    const float *m = nd->save[0];
    int64_t i, n = nd->out->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += gy[i] * m[i];
}
LTRAIN_DEF lt_tensor *lt_dropout(lt_ctx *ctx, lt_tensor *a, float p) {
    lt__node *nd;
    if (!lt__live(ctx, "lt_dropout", a, a)) return NULL;
    if (!(p >= 0.0f && p <= 1.0f)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_dropout: p is %g: it must be in [0,1]", (double)p);
        return NULL;
    }
    if (!ctx->training || p == 0.0f) return a;
    nd = lt__node_new(ctx, LT__OP(dropout), a->ndim, a->shape, a, NULL, NULL, 0);
    if (!nd || !lt__save(ctx, nd, 0, a->n)) return NULL;
    LT__DROPOUT_P(nd) = p;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.transpose  transpose (a copy) ---------------------------------------------------------- */
/* x (s0,s1,s2,s3) -> y with dims d0 and d1 swapped;  dx += dy transposed back. */
#define LT__TR_D0(nd) ((nd)->i[0])   /* d0 */
#define LT__TR_D1(nd) ((nd)->i[1])   /* d1 */
static void lt__transpose_copy(const lt_tensor *x, const lt_tensor *y, int d0, int d1, const float *src, float *dst,
                               int accumulate) {
    int64_t st[LT_MAX_DIMS], idx[LT_MAX_DIMS], k, tmp;
    int d;
    /* stride of each output dim in the input */
    st[3] = 1;
    for (d = 2; d >= 0; d--) st[d] = st[d + 1] * x->shape[d + 1];
    tmp = st[d0]; st[d0] = st[d1]; st[d1] = tmp;
    for (idx[0] = 0, k = 0; idx[0] < y->shape[0]; idx[0]++)
        for (idx[1] = 0; idx[1] < y->shape[1]; idx[1]++)
            for (idx[2] = 0; idx[2] < y->shape[2]; idx[2]++)
                for (idx[3] = 0; idx[3] < y->shape[3]; idx[3]++, k++) {
                    int64_t o = idx[0] * st[0] + idx[1] * st[1] + idx[2] * st[2] + idx[3] * st[3];
                    if (accumulate) dst[o] += src[k];
                    else dst[k] = src[o];
                }
}
static void lt__transpose_fwd(lt__node *nd) {
    lt__transpose_copy(nd->in[0], nd->out, (int)LT__TR_D0(nd), (int)LT__TR_D1(nd), nd->in[0]->data, nd->out->data, 0);
}
static void lt__transpose_bwd(lt__node *nd) {
    float *gx = lt__grad(nd->in[0], nd->ctx);
    if (gx) lt__transpose_copy(nd->in[0], nd->out, (int)LT__TR_D0(nd), (int)LT__TR_D1(nd), nd->out->grad, gx, 1);
}
LTRAIN_DEF lt_tensor *lt_transpose(lt_ctx *ctx, lt_tensor *a, int d0, int d1) {
    int64_t shape[LT_MAX_DIMS], t;
    int k;
    char b1[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_transpose", a, a)) return NULL;
    if (d0 < 0 || d1 < 0 || d0 >= a->ndim || d1 >= a->ndim) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_transpose: x is %s: dims %d and %d must be in [0,%d)",
                     lt_shape_str(a, b1, sizeof b1), d0, d1, a->ndim);
        return NULL;
    }
    for (k = 0; k < LT_MAX_DIMS; k++) shape[k] = a->shape[k];
    t = shape[d0]; shape[d0] = shape[d1]; shape[d1] = t;
    nd = lt__node_new(ctx, LT__OP(transpose), a->ndim, shape, a, NULL, NULL, 0);
    if (!nd) return NULL;
    LT__TR_D0(nd) = d0; LT__TR_D1(nd) = d1;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.attention  causal multi-head self-attention ----------------------------------------------- */
#define LT__ATT_B(nd) ((nd)->i[0])   /* batch */
#define LT__ATT_T(nd) ((nd)->i[1])   /* sequence length */
#define LT__ATT_C(nd) ((nd)->i[2])   /* channels, H heads of C/H */
#define LT__ATT_H(nd) ((nd)->i[3])   /* heads */
/* qkv (B, T, 3C) -> y (B, T, C), H heads of D = C/H; for query t of head h (q_t, k_u, v_u its rows):
     s_u = q_t·k_u / sqrt(D) for u <= t,  p = softmax(s),  y_t = Σ_u p_u v_u
   (torch's scaled_dot_product_attention(q, k, v, is_causal=True)); saves L_t = log Σ_u exp(s_u),
   (B, H, T) floats: the probabilities are recomputed by backward, never stored.  Backward, dy_t:
     p_u = exp(s_u - L_t),  dv_u += p_u dy_t,  ds_u = p_u (dy_t·v_u - D_t) with D_t = dy_t·y_t,
     dq_t += Σ_u ds_u k_u / sqrt(D),  dk_u += ds_u q_t / sqrt(D)
   (D_t = Σ_u p_u dy_t·v_u, so the output stands in for the row sums of p ⊙ dp; the op reads it.)
   lengths: queries t >= len output 0 and take no gradient; keys u >= len are then never seen
   (u <= t < len).  The record: B, T, C, H (LT__ATT_*), save[0] = L (0 for padded rows).
   The kernels are FlashAttention's (Dao et al. 2022; backward as in FlashAttention-2), in blocks
   small enough for L1/L2, multiplied by lt__att_mm (below) straight from the strided rows of qkv:
     forward, per (b, h, block of BR query rows), over blocks of BC keys up to the diagonal:
       Sᵀ = scale·K·Qᵀ (Qᵀ transposed once per block; key rows are the broadcast operand);
       per query m' = max(m, max S), P = exp(S - m'), l = l·exp(m - m') + Σ P,
       Y = Y·exp(m - m') + P·V  (the online softmax);  at the end Y /= l, L = m + log l
     backward, per (b, h), over blocks of BK keys (Kᵀ, Vᵀ transposed once), then over blocks of BQ
     query rows that see them:
       P = exp(scale·Q·Kᵀ - L), dV += Pᵀ·dY, dP = dY·Vᵀ, dS = P ⊙ (dP - D),
       dK += scale·dSᵀ·Q, dQ += scale·dS·K
   Memory: L, plus blocks on each thread's stack (up to 224 KiB), instead of the B·H·T·T probabilities.
   Forward units (b, h, query block) and backward units (b, h) go to the OpenMP threads; each
   unit's sums run in one fixed order, so the thread count never changes a bit.
   attention16 (lt_set_precision 16-bit) runs the same kernels on qkv rounded to 16 bits, rounds
   y to 16 bits, and keeps 16-bit copies of qkv and y for backward (rows widened block by block
   into the stack tiles) instead of reading the float32 tensors; in eager mode, with qkv already
   16-bit values (a 16-bit product's output, lt__copy16), it reads qkv and y in place instead.
   Every block is at most LT__ATT_TILE floats, so a head has at most that many channels. */
#define LT__ATT_BR 64      /* forward: query rows per unit */
#define LT__ATT_BC 128     /* forward: keys per online-softmax step */
#define LT__ATT_BK 64      /* backward: keys per block */
#define LT__ATT_BQ 128     /* backward: query rows per step */
#define LT__ATT_TILE 8192  /* floats of one operand block (rows x D) */



/* The block products: C (m,n) = alpha·A·B, or C += alpha·A·B (acc), where element (r,k) of A is
   A[r*ars + k*aks] (any two strides: A as is or transposed, in place) and row k of B is the n
   floats at B + k*ldb.  Sums run over k in order.  Plain C here (the reference, and the kernel
   where AVX-512 is missing or LT_GEMM=portable|avx2 is set); an AVX-512 kernel in the fast paths
   at the end of the section (lt__att_tile_avx512). */
static void lt__att_mm_c(int64_t m, int64_t n, int64_t K, float alpha, const float *A, int64_t ars, int64_t aks,
                         const float *B, int64_t ldb, int acc, float *C, int64_t ldc) {
    int64_t r, j0, j, k;
    for (r = 0; r < m; r++)
        for (j0 = 0; j0 < n; j0 += 16) {
            float s[16];
            int64_t w = n - j0 < 16 ? n - j0 : 16;
            for (j = 0; j < 16; j++) s[j] = 0.0f;
            for (k = 0; k < K; k++) {
                float a = A[r * ars + k * aks];
                const float *b = B + k * ldb + j0;
                for (j = 0; j < w; j++) s[j] += a * b[j];
            }
            for (j = 0; j < w; j++) C[r * ldc + j0 + j] = alpha * s[j] + (acc ? C[r * ldc + j0 + j] : 0.0f);
        }
}

/* Does this CPU run the AVX-512 block kernel (and LT_GEMM does not ask for another)? */
static int lt__att_simd(void) {
#ifdef LT__X86
    const char *e = getenv("LT_GEMM");
    if (e && (!strcmp(e, "portable") || !strcmp(e, "avx2"))) return 0;
    return lt__cpu_has(LT__CPU_AVX512F | LT__CPU_AVX2);
#else
    return 0;
#endif
}

#ifdef LT__X86
/* the AVX-512 fast paths, at the end of the section */
LT__TARGET("avx512f") static void lt__att_tile_avx512(int64_t m, int64_t n, int64_t K, float alpha, const float *A,
                                                     int64_t ars, int64_t aks, const float *B, int64_t ldb, int acc,
                                                     float *C, int64_t ldc);
LT__TARGET("avx512f") static void lt__widen16_avx512(lt_dtype p, const uint16_t *h, float *out, int64_t n);
LT__TARGET("avx512f") static void lt__att_exp_avx512(float *x, const float *c, float c0, int64_t n);
#endif

/* The block products, with the causal triangle skipped by row tiles of MR (row r of C needs only
   part of K or of the columns; what a tile needs is the union over its rows):
     LT__ATT_KLE: row r needs k <= r + off      LT__ATT_KGE: row r needs k >= r + off
     LT__ATT_NLE: row r needs columns <= r + off (later columns are not written)
     LT__ATT_NGE: row r needs columns >= r + off (earlier columns are not written)
   The skipped products are those of masked (zero) probabilities, so results do not change. */
enum { LT__ATT_ALL = 0, LT__ATT_KLE = 1, LT__ATT_KGE = 2, LT__ATT_NLE = 3, LT__ATT_NGE = 4 };
static void lt__att_mm(int simd, int tri, int64_t off, int64_t m, int64_t n, int64_t K, float alpha, const float *A,
                       int64_t ars, int64_t aks, const float *B, int64_t ldb, int acc, float *C, int64_t ldc) {
    int64_t mr = simd ? 6 : 1, r, j, k0, k1, j0, nn, mi;
    for (r = 0; r < m; r += mr) {
        mi = m - r < mr ? m - r : mr;
        k0 = tri == LT__ATT_KGE ? r + off : 0;
        k1 = tri == LT__ATT_KLE ? r + mi + off : K;
        j0 = tri == LT__ATT_NGE ? r + off : 0;
        nn = tri == LT__ATT_NLE ? r + mi + off : n;
        k0 = k0 < 0 ? 0 : k0;
        k1 = k1 > K ? K : k1;
        j0 = j0 < 0 ? 0 : j0;
        nn = nn > n ? n : nn;
        if (k1 <= k0) {   /* nothing to add: C stays, or becomes 0 */
            int64_t i;
            if (!acc) for (i = 0; i < mi; i++) for (j = j0; j < nn; j++) C[(r + i) * ldc + j] = 0.0f;
            continue;
        }
#ifdef LT__X86
        if (simd) {
            for (j = j0; j < nn; j += 64)
                lt__att_tile_avx512(mi, nn - j < 64 ? nn - j : 64, k1 - k0, alpha, A + r * ars + k0 * aks, ars, aks,
                                    B + k0 * ldb + j, ldb, acc, C + r * ldc + j, ldc);
            continue;
        }
#endif
        if (nn > j0)
            lt__att_mm_c(mi, nn - j0, k1 - k0, alpha, A + r * ars + k0 * aks, ars, aks, B + k0 * ldb + j0, ldb, acc,
                         C + r * ldc + j0, ldc);
    }
}

/* Where the kernels read q, k, v (and y, for D): float32 rows in place, float32 rows rounded to
   16 bits on the way (attention16 without a gradient), or a 16-bit copy widened; and where
   backward adds their gradients.  Part w (0 q, 1 k, 2 v) of row r (= b·T + t) starts at
   f[w] + r·ld[w] (h[w], g[w] alike), its head j at j·D: fused qkv has ld 3C for all three parts
   (k at +C, v at +2C); lt_attention_gqa's separate q [B,T,H·D], k and v [B,T,Hkv·D] have ld H·D
   and Hkv·D.  Query head h reads key/value head h / G (G = H/Hkv; 1 without grouping). */
typedef struct {
    const float *f[3];           /* float32 q, k, v, or NULL */
    const uint16_t *h[3];        /* their 16-bit copies, or NULL */
    int64_t ld[3];               /* row strides of q, k, v (and of h, g) */
    float *g[3];                 /* backward: the gradients of q, k, v (NULL: not wanted) */
    const uint16_t *y16;         /* 16-bit copy of y (B,T,C) (attention16 backward) */
    int round;                   /* f is read rounded to p */
    lt_dtype p;
    int simd;                    /* lt__att_simd() */
    int64_t T, C, D, G;          /* C: y's row, H·D */
} lt__att_src;

/* out[0..n) = the 16-bit values h of type p widened (lt__widen16_avx512 where simd) */
static void lt__att_widen(int simd, lt_dtype p, const uint16_t *h, float *out, int64_t n) {
#ifdef LT__X86
    if (simd) { lt__widen16_avx512(p, h, out, n); return; }
#else
    (void)simd;
#endif
    lt__from16(p, h, out, (size_t)n);
}

/* n rows from r0 of part w (0 q, 1 k, 2 v) of query head h (k, v: its kv head h/G), batch b, as
   float32: a pointer into the input (row stride ld[w]) or rows widened/rounded into buf (stride D). */
static const float *lt__att_rows(const lt__att_src *a, int w, int64_t b, int64_t h, int64_t r0, int64_t n,
                                 float *buf, int64_t *ld) {
    int64_t lw = a->ld[w], off = (b * a->T + r0) * lw + (w ? h / a->G : h) * a->D, r;
    if (a->f[w] && !a->round) { *ld = lw; return a->f[w] + off; }
    for (r = 0; r < n; r++) {
        if (a->h[w]) lt__att_widen(a->simd, a->p, a->h[w] + off + r * lw, buf + r * a->D, a->D);
        else lt__round16(a->p, a->f[w] + off + r * lw, buf + r * a->D, (size_t)a->D);
    }
    *ld = a->D;
    return buf;
}

/* xt (D, n) = xᵀ of n rows of D floats (row stride ld): 8 x 8 blocks by lt__tr8x8 (simd), the
   edges one by one. */
static void lt__att_transpose(int simd, const float *x, int64_t ld, int64_t n, int64_t D, float *xt) {
    int64_t r, d, r8 = 0, d8 = 0;
#ifdef LT__X86
    if (simd) {
        r8 = n & ~(int64_t)7;
        d8 = D & ~(int64_t)7;
        for (r = 0; r < r8; r += 8)
            for (d = 0; d < d8; d += 8) lt__tr8x8(x + r * ld + d, ld, xt + d * n + r, n);
    }
#else
    (void)simd;
#endif
    for (r = 0; r < n; r++)
        for (d = r < r8 ? d8 : 0; d < D; d++) xt[d * n + r] = x[r * ld + d];
}

/* x_i = exp(x_i - c_i) for i < n (c NULL: exp(x_i - c0)), every argument <= 0: the
   probabilities from the scores.  AVX-512: lt__exp_neg16, about twice as fast. */
static void lt__att_exp(int simd, float *x, const float *c, float c0, int64_t n) {
    int64_t i;
#ifdef LT__X86
    if (simd) { lt__att_exp_avx512(x, c, c0, n); return; }
#else
    (void)simd;
#endif
    if (c) {
        LT__OMP(simd)
        for (i = 0; i < n; i++) x[i] = lt__exp_neg(x[i] - c[i]);
    } else {
        LT__OMP(simd)
        for (i = 0; i < n; i++) x[i] = lt__exp_neg(x[i] - c0);
    }
}

/* Σ x_i dot_i in 16 interleaved partial sums added pairwise: a fixed order the compiler can still
   vectorize. */
static float lt__att_dot(const float *x, const float *dot, int64_t n) {
    float acc[16];
    int64_t i = 0;
    int j;
    for (j = 0; j < 16; j++) acc[j] = 0.0f;
    for (; i + 16 <= n; i += 16) for (j = 0; j < 16; j++) acc[j] += x[i + j] * dot[i + j];
    for (j = 0; i < n; i++, j++) acc[j] += x[i] * dot[i];
    for (j = 8; j > 0; j >>= 1) {
        int k;
        for (k = 0; k < j; k++) acc[k] += acc[k + j];
    }
    return acc[0];
}

/* Forward of query rows t0..t0+n-1 (all < len) of head h, batch b: y rows (stride C) and L. */
static void lt__att_fwd_rows(const lt__att_src *a, int64_t b, int64_t h, int64_t t0, int64_t n, float *y, float *L) {
    float s[LT__ATT_BR * LT__ATT_BC], m[LT__ATT_BR], l[LT__ATT_BR], al[LT__ATT_BR];
    float qt[LT__ATT_TILE], tq[LT__ATT_TILE], tk[LT__ATT_TILE], tv[LT__ATT_TILE];
    int64_t C = a->C, D = a->D, t1 = t0 + n, u0, t, u, d, ldq, ldk, ldv;
    int64_t bc = LT__ATT_TILE / D < LT__ATT_BC ? LT__ATT_TILE / D : LT__ATT_BC;
    float scale = 1.0f / sqrtf((float)D);
    const float *q = lt__att_rows(a, 0, b, h, t0, n, tq, &ldq);
    lt__att_transpose(a->simd, q, ldq, n, D, qt);
    for (u0 = 0; u0 < t1; u0 += bc) {
        int64_t w = t1 - u0 < bc ? t1 - u0 : bc;
        const float *k = lt__att_rows(a, 1, b, h, u0, w, tk, &ldk), *v = lt__att_rows(a, 2, b, h, u0, w, tv, &ldv);
        lt__att_mm(a->simd, LT__ATT_NGE, u0 - t0, w, n, D, scale, k, ldk, 1, qt, n, 0, s, n);  /* Sᵀ = scale·K·Qᵀ */
        for (u = t0 > u0 ? t0 - u0 : 0; u < w; u++)   /* the diagonal: keys after a query are masked */
            for (t = 0; t < n && t0 + t < u0 + u; t++) s[u * n + t] = -INFINITY;
        for (t = 0; t < n; t++) al[t] = u0 == 0 ? -INFINITY : m[t];   /* al: the new max */
        for (u = 0; u < w; u++) {
            const float *sr = s + u * n;
            LT__OMP(simd)
            for (t = 0; t < n; t++) al[t] = sr[t] > al[t] ? sr[t] : al[t];
        }
        for (u = 0; u < w; u++) lt__att_exp(a->simd, s + u * n, al, 0.0f, n);                 /* P */
        for (t = 0; t < n; t++) {   /* al becomes the factor on the old sums, exp(m - m') */
            float mn = al[t];
            al[t] = u0 == 0 ? 0.0f : lt__exp_neg(m[t] - mn);
            m[t] = mn;
            l[t] = u0 == 0 ? 0.0f : l[t] * al[t];
        }
        for (u = 0; u < w; u++) {
            const float *sr = s + u * n;
            LT__OMP(simd)
            for (t = 0; t < n; t++) l[t] += sr[t];
        }
        if (u0 > 0)
            for (t = 0; t < n; t++)
                if (al[t] != 1.0f) for (d = 0; d < D; d++) y[t * C + d] *= al[t];
        lt__att_mm(a->simd, LT__ATT_KLE, t0 - u0, n, D, w, 1.0f, s, 1, n, v, ldv, u0 > 0, y, C);  /* Y (+)= P·V */
    }
    for (t = 0; t < n; t++) {
        float r = 1.0f / l[t];
        for (d = 0; d < D; d++) y[t * C + d] *= r;
        L[t] = m[t] + logf(l[t]);
    }
}

static void lt__att_fwd(lt__node *nd, const lt__att_src *a) {
    int64_t B = LT__ATT_B(nd), T = LT__ATT_T(nd), C = LT__ATT_C(nd), H = LT__ATT_H(nd), D = C / H;
    int64_t br = LT__ATT_TILE / D < LT__ATT_BR ? LT__ATT_TILE / D : LT__ATT_BR;
    int64_t nblk = (T + br - 1) / br, unit;
    float *out = nd->out->data, *Ls = nd->save[0];
    LT__OMP(parallel for schedule(dynamic, 1))
    for (unit = 0; unit < B * H * nblk; unit++) {
        int64_t bh = unit / nblk, b = bh / H, h = bh % H, t0 = unit % nblk * br, t, u;
        int64_t t1 = t0 + br < T ? t0 + br : T, len = nd->ids ? nd->ids[b] : T, tl = t1 < len ? t1 : len;
        float *y = out + (b * T + t0) * C + h * D, *L = Ls + bh * T + t0;
        if (tl > t0) lt__att_fwd_rows(a, b, h, t0, tl - t0, y, L);
        for (t = tl > t0 ? tl : t0; t < t1; t++) {   /* padded queries: output 0 */
            for (u = 0; u < D; u++) y[(t - t0) * C + u] = 0.0f;
            L[t - t0] = 0.0f;
        }
    }
}

/* D_t = dy_t·y_t for rows t0..t0+n-1 of head h, batch b (y from its 16-bit copy in attention16,
   widened into buf). */
static void lt__att_drows(const lt__att_src *a, int64_t b, int64_t h, int64_t t0, int64_t n, const float *y,
                          const float *gy, float *dd, float *buf) {
    int64_t T = a->T, C = a->C, D = a->D, t;
    for (t = 0; t < n; t++) {
        int64_t at = (b * T + t0 + t) * C + h * D;
        const float *yr = y + at;
        if (a->y16) {
            lt__att_widen(a->simd, a->p, a->y16 + at, buf, D);
            yr = buf;
        }
        dd[t] = lt__att_dot(gy + at, yr, D);
    }
}

#define LT__ATT_DMAX 4096  /* backward: D for up to this many rows is made once per head */
typedef char lt__att_dmax_holds_a_step[LT__ATT_DMAX >= LT__ATT_BQ ? 1 : -1];
/* Backward of query head h, batch b, queries and keys < len: adds into a->g (dq of head h, dk and
   dv of kv head h/G; a NULL part is skipped). */
static void lt__att_bwd_head(const lt__att_src *a, int64_t b, int64_t h, int64_t len, const float *Lh,
                             const float *y, const float *gy) {
    float p[LT__ATT_BQ * LT__ATT_BK], ds[LT__ATT_BQ * LT__ATT_BK], dall[LT__ATT_DMAX], *dd;
    float tq[LT__ATT_TILE], tk[LT__ATT_TILE], tv[LT__ATT_TILE], kt[LT__ATT_TILE], vt[LT__ATT_TILE];
    int64_t T = a->T, C = a->C, D = a->D, u0, t0, t, u;
    int once = len <= LT__ATT_DMAX;
    int64_t bk = LT__ATT_TILE / D < LT__ATT_BK ? LT__ATT_TILE / D : LT__ATT_BK;
    int64_t bq = LT__ATT_TILE / D < LT__ATT_BQ ? LT__ATT_TILE / D : LT__ATT_BQ;
    float scale = 1.0f / sqrtf((float)D);
    for (u0 = 0; u0 < len; u0 += bk) {
        int64_t w = len - u0 < bk ? len - u0 : bk, ldk, ldv;
        const float *k = lt__att_rows(a, 1, b, h, u0, w, tk, &ldk), *v = lt__att_rows(a, 2, b, h, u0, w, tv, &ldv);
        int64_t kvo = (h / a->G) * D;
        float *dk = a->g[1] ? a->g[1] + (b * T + u0) * a->ld[1] + kvo : NULL;
        float *dv = a->g[2] ? a->g[2] + (b * T + u0) * a->ld[2] + kvo : NULL;
        lt__att_transpose(a->simd, k, ldk, w, D, kt);
        lt__att_transpose(a->simd, v, ldv, w, D, vt);
        for (t0 = u0; t0 < len; t0 += bq) {
            int64_t n = len - t0 < bq ? len - t0 : bq, ldq;
            const float *q, *dy = gy + (b * T + t0) * C + h * D;
            float *dq = a->g[0] ? a->g[0] + (b * T + t0) * a->ld[0] + h * D : NULL;
            if (once) {
                if (u0 == 0) lt__att_drows(a, b, h, t0, n, y, gy, dall + t0, tq);
                dd = dall + t0;
            } else {
                dd = dall;
                lt__att_drows(a, b, h, t0, n, y, gy, dd, tq);
            }
            q = lt__att_rows(a, 0, b, h, t0, n, tq, &ldq);
            /* query t0+i sees key u0+j when j <= i + o: the products skip the rest (o >= 0) */
            int64_t o = t0 - u0;
            lt__att_mm(a->simd, LT__ATT_NLE, o, n, w, D, scale, q, ldq, 1, kt, w, 0, p, w);  /* S = scale·Q·Kᵀ */
            for (t = 0; t < n; t++) {
                float *pr = p + t * w, Lt = Lh[t0 + t];
                int64_t vis = t + o + 1 < w ? t + o + 1 : w;
                lt__att_exp(a->simd, pr, NULL, Lt, vis);                                         /* P */
                for (u = vis; u < w; u++) pr[u] = 0.0f;
            }
            if (dv) lt__att_mm(a->simd, LT__ATT_KGE, -o, w, D, n, 1.0f, p, 1, w, dy, C, 1, dv, a->ld[2]);   /* dV += Pᵀ·dY */
            lt__att_mm(a->simd, LT__ATT_NLE, o, n, w, D, 1.0f, dy, C, 1, vt, w, 0, ds, w);      /* dP = dY·Vᵀ */
            for (t = 0; t < n; t++) {                                                       /* dS = P ⊙ (dP - D) */
                float *pr = p + t * w, *dr = ds + t * w, dt = dd[t];
                int64_t vis = t + o + 1 < w ? t + o + 1 : w;
                LT__OMP(simd)
                for (u = 0; u < vis; u++) dr[u] = pr[u] * (dr[u] - dt);
                for (u = vis; u < w; u++) dr[u] = 0.0f;
            }
            if (dk) lt__att_mm(a->simd, LT__ATT_KGE, -o, w, D, n, scale, ds, 1, w, q, ldq, 1, dk, a->ld[1]); /* dK += scale·dSᵀ·Q */
            if (dq) lt__att_mm(a->simd, LT__ATT_KLE, o, n, D, w, scale, ds, w, 1, k, ldk, 1, dq, a->ld[0]);  /* dQ += scale·dS·K */
        }
    }
}

/* Units (b, kv head j) go to the threads; a unit runs its G query heads jG..jG+G-1 in order, so
   the sums into dk, dv of head j have one order whatever the thread count.  add[w] = 0: part w's
   gradient buffer holds no values yet, and each unit zeroes its own columns first (a part that
   shares its buffer with an earlier one, fused qkv or the same tensor passed twice, comes with
   add 1: the zeroing of those columns is done by then). */
static void lt__att_bwd(lt__node *nd, const lt__att_src *a, const int add[3]) {
    int64_t B = LT__ATT_B(nd), T = LT__ATT_T(nd), Hk = LT__ATT_H(nd) / a->G, bj;
    LT__OMP(parallel for schedule(dynamic, 1))
    for (bj = 0; bj < B * Hk; bj++) {
        int64_t b = bj / Hk, j = bj % Hk, len = nd->ids ? nd->ids[b] : T, t, i;
        int w;
        for (w = 0; w < 3; w++) {
            int64_t c0 = w ? j * a->D : j * a->G * a->D, nc = w ? a->D : a->G * a->D;
            if (a->g[w] && !add[w])
                for (t = 0; t < T; t++) memset(a->g[w] + (b * T + t) * a->ld[w] + c0, 0, (size_t)nc * sizeof(float));
        }
        for (i = 0; i < a->G; i++) {
            int64_t h = j * a->G + i;
            lt__att_bwd_head(a, b, h, len, nd->save[0] + (b * LT__ATT_H(nd) + h) * T, nd->out->data, nd->out->grad);
        }
    }
}
/* the gradient of fused qkv, its three parts (add as lt__att_bwd wants it) */
static int lt__att_grad_qkv(lt__node *nd, lt__att_src *a, int add[3]) {
    float *g = lt__grad_w(nd->in[0], nd->ctx, &add[0]);
    if (!g) return 0;
    a->g[0] = g; a->g[1] = g + a->C; a->g[2] = g + 2 * a->C;
    add[1] = add[2] = add[0];
    return 1;
}

static lt__att_src lt__att_src_of(const lt__node *nd, int bits16) {
    lt__att_src a;
    memset(&a, 0, sizeof a);
    a.T = LT__ATT_T(nd); a.C = LT__ATT_C(nd); a.D = LT__ATT_C(nd) / LT__ATT_H(nd); a.G = 1;
    a.f[0] = nd->in[0]->data; a.f[1] = a.f[0] + a.C; a.f[2] = a.f[0] + 2 * a.C;
    a.ld[0] = a.ld[1] = a.ld[2] = 3 * a.C;
    if (bits16) {
        a.p = LT__PREC(nd) == (double)LT_F16 ? LT_F16 : LT_BF16;
        a.h[0] = (const uint16_t *)(const void *)nd->save[1];
        if (a.h[0]) { a.h[1] = a.h[0] + a.C; a.h[2] = a.h[0] + 2 * a.C; }
        a.y16 = a.h[0] ? a.h[0] + nd->in[0]->n : NULL;
        a.round = !lt__exact16(nd->in[0], a.p);   /* (16-bit values already: read in place) */
    }
    a.simd = lt__att_simd();
    return a;
}
static void lt__attention_fwd(lt__node *nd) {
    lt__att_src a = lt__att_src_of(nd, 0);
    lt__att_fwd(nd, &a);
}
static void lt__attention_bwd(lt__node *nd) {
    lt__att_src a = lt__att_src_of(nd, 0);
    int add[3];
    if (lt__att_grad_qkv(nd, &a, add)) lt__att_bwd(nd, &a, add);
}

/* attention16: y = round16(attention(round16(qkv))), float32 arithmetic; save[1] holds the 16-bit
   qkv then the 16-bit y (4·B·T·C values) when a gradient will flow, and both kernels read qkv
   from it, so the float32 qkv and y need not outlive the forward (the row reads 0).  Backward
   is the float32 one on those values; its D_t = dy_t·y_t uses the rounded y (as a 16-bit
   FlashAttention does), which moves each gradient by about one 16-bit rounding. */
static void lt__attention16_fwd(lt__node *nd) {
    lt__att_src a = lt__att_src_of(nd, 1);
    uint16_t *h16 = (uint16_t *)(void *)nd->save[1];
    float *y = nd->out->data;
    size_t nq = (size_t)nd->in[0]->n, ny = (size_t)nd->out->n;
    if (h16) {
        if (a.p == LT_F16) lt_f32_to_f16_array(a.f[0], h16, nq);
        else lt_f32_to_bf16_array(a.f[0], h16, nq);
        a.f[0] = a.f[1] = a.f[2] = NULL;
        a.y16 = NULL;
    }
    lt__att_fwd(nd, &a);
    if (!h16) { lt_round_to_precision(a.p, y, y, ny); return; }
    if (a.p == LT_F16) { lt_f32_to_f16_array(y, h16 + nq, ny); lt_f16_to_f32_array(h16 + nq, y, ny); }
    else { lt_f32_to_bf16_array(y, h16 + nq, ny); lt_bf16_to_f32_array(h16 + nq, y, ny); }
}
static void lt__attention16_bwd(lt__node *nd) {
    lt__att_src a = lt__att_src_of(nd, 1);
    int add[3];
    if (a.h[0]) a.f[0] = a.f[1] = a.f[2] = NULL;   /* else eager (lt__copy16): the float32 qkv, and y (rounded by the forward) */
    if (lt__att_grad_qkv(nd, &a, add)) lt__att_bwd(nd, &a, add);
}

LTRAIN_DEF lt_tensor *lt_attention(lt_ctx *ctx, lt_tensor *qkv, int n_head, const int32_t *lengths) {
    int64_t B, T, C, shape[3], b;
    char b1[64];
    lt__node *nd;
    size_t ln;
    int bits16;
    if (!lt__live(ctx, "lt_attention", qkv, qkv)) return NULL;
    bits16 = ctx->precision != LT_F32 && ctx->device == LT_CPU;   /* the CUDA kernel is float32 */
    if (qkv->ndim != 3 || qkv->shape[2] % 3 != 0) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_attention: qkv is %s: it must be [B,T,3C]", lt_shape_str(qkv, b1, sizeof b1));
        return NULL;
    }
    B = qkv->shape[0]; T = qkv->shape[1]; C = qkv->shape[2] / 3;
    if (n_head < 1 || C % n_head != 0) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_attention: %d heads do not divide C = %lld (qkv is %s)", n_head, (long long)C,
                     lt_shape_str(qkv, b1, sizeof b1));
        return NULL;
    }
    if (C / n_head > LT__ATT_TILE) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_attention: qkv is %s with %d heads: a head of %lld channels is more than "
                     "%d, the most the kernels handle (hint: use more heads)",
                     lt_shape_str(qkv, b1, sizeof b1), n_head, (long long)(C / n_head), LT__ATT_TILE);
        return NULL;
    }
    if (lengths)
        for (b = 0; b < B; b++)
            if (lengths[b] < 0 || lengths[b] > T) {
                lt_set_error(ctx, LT_ERR_ARG, "lt_attention: lengths[%lld] is %d: it must be in [0,%lld]", (long long)b,
                             lengths[b], (long long)T);
                return NULL;
            }
    shape[0] = B; shape[1] = T; shape[2] = C;
    if (!lt_mul_size((size_t)(B * n_head), (size_t)T, &ln)) {
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_attention: B*H*T overflows");
        return NULL;
    }
    nd = lt__node_new(ctx, bits16 ? LT__OP(attention16) : LT__OP(attention), 3, shape, qkv, NULL, NULL, 0);
    if (!nd) return NULL;
    LT__ATT_B(nd) = B; LT__ATT_T(nd) = T; LT__ATT_C(nd) = C; LT__ATT_H(nd) = n_head;
    LT__PREC(nd) = (double)ctx->precision;
    if (!lt__save(ctx, nd, 0, (int64_t)ln)) return NULL;   /* L */
    if (bits16 && nd->out->requires_grad && lt__copy16(ctx, qkv) && !lt__save(ctx, nd, 1, 2 * B * T * C))
        return NULL;   /* qkv, y: 16 bit (or, lt__copy16, the float32 qkv and y read in place) */
    if (lengths && !(lt__node_ids(ctx, nd, lengths, B))) return NULL;
    return lt__run(ctx, nd);
}

/* ---- fast paths: AVX-512 (attention) ------------------------------------------------------------ */
#ifdef LT__X86
/* 6 rows x up to 64 columns: up to 24 zmm accumulators, as many B vectors as the 16-column groups
   n spans (1 to 4: a head of 48 channels computes 3, not 4 with one masked off), A values
   broadcast.  The last group is masked past n; rows past m read row 0 and are not stored. */
#define LT__AM_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define LT__AM_PTR(r) const float *a##r = A + (r < m ? r : 0) * ars;
#define LT__AM_ZERO(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = c##r##0, c##r##2 = c##r##0, c##r##3 = c##r##0;
#define LT__AM_FMA1(r, v) c##r##v = _mm512_fmadd_ps(av, b##v, c##r##v);
#define LT__AM_ST1(r, v, mk)                                                                         \
    _mm512_mask_storeu_ps(cr + 16 * v, mk, acc ? _mm512_fmadd_ps(va, c##r##v, _mm512_maskz_loadu_ps(mk, cr + 16 * v)) \
                                                : _mm512_mul_ps(va, c##r##v));
#define LT__AM_ST(r)                                                                                \
    if (r < m) {                                                                                   \
        float *cr = C + r * ldc;                                                                   \
        LT__AM_ST1(r, 0, m0) LT__AM_ST1(r, 1, m1) LT__AM_ST1(r, 2, m2) LT__AM_ST1(r, 3, m3)            \
    }
/* the k loop on NV vectors: B row k's groups loaded (past n masked to 0), one broadcast per row */
#define LT__AM_B0 __m512 b0 = _mm512_maskz_loadu_ps(m0, b);
#define LT__AM_B1 LT__AM_B0 __m512 b1 = _mm512_maskz_loadu_ps(m1, b + 16);
#define LT__AM_B2 LT__AM_B1 __m512 b2 = _mm512_maskz_loadu_ps(m2, b + 32);
#define LT__AM_B3 LT__AM_B2 __m512 b3 = _mm512_maskz_loadu_ps(m3, b + 48);
#define LT__AM_AV(r) __m512 av = _mm512_set1_ps(a##r[k * aks]);
#define LT__AM_F0(r) { LT__AM_AV(r) LT__AM_FMA1(r, 0) }
#define LT__AM_F1(r) { LT__AM_AV(r) LT__AM_FMA1(r, 0) LT__AM_FMA1(r, 1) }
#define LT__AM_F2(r) { LT__AM_AV(r) LT__AM_FMA1(r, 0) LT__AM_FMA1(r, 1) LT__AM_FMA1(r, 2) }
#define LT__AM_F3(r) { LT__AM_AV(r) LT__AM_FMA1(r, 0) LT__AM_FMA1(r, 1) LT__AM_FMA1(r, 2) LT__AM_FMA1(r, 3) }
#define LT__AM_LOOP(LOADS, FMAS)                                                                   \
    for (k = 0; k < K; k++) {                                                                      \
        const float *b = B + k * ldb;                                                              \
        LOADS                                                                                      \
        LT__AM_ROWS(FMAS)                                                                          \
    }
LT__TARGET("avx512f") static void lt__att_tile_avx512(int64_t m, int64_t n, int64_t K, float alpha, const float *A,
                                                     int64_t ars, int64_t aks, const float *B, int64_t ldb, int acc,
                                                     float *C, int64_t ldc) {
    __mmask16 m0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
    __mmask16 m1 = (__mmask16)(n >= 32 ? 0xffffu : n <= 16 ? 0u : (1u << (n - 16)) - 1u);
    __mmask16 m2 = (__mmask16)(n >= 48 ? 0xffffu : n <= 32 ? 0u : (1u << (n - 32)) - 1u);
    __mmask16 m3 = (__mmask16)(n >= 64 ? 0xffffu : n <= 48 ? 0u : (1u << (n - 48)) - 1u);
    __m512 va = _mm512_set1_ps(alpha);
    int64_t k;
    LT__AM_ROWS(LT__AM_PTR)
    LT__AM_ROWS(LT__AM_ZERO)
    if (n > 48) LT__AM_LOOP(LT__AM_B3, LT__AM_F3)
    else if (n > 32) LT__AM_LOOP(LT__AM_B2, LT__AM_F2)
    else if (n > 16) LT__AM_LOOP(LT__AM_B1, LT__AM_F1)
    else LT__AM_LOOP(LT__AM_B0, LT__AM_F0)
    LT__AM_ROWS(LT__AM_ST)
}
#undef LT__AM_ROWS
#undef LT__AM_PTR
#undef LT__AM_ZERO
#undef LT__AM_FMA1
#undef LT__AM_ST1
#undef LT__AM_ST
#undef LT__AM_LOOP
#undef LT__AM_B0
#undef LT__AM_B1
#undef LT__AM_B2
#undef LT__AM_B3
#undef LT__AM_AV
#undef LT__AM_F0
#undef LT__AM_F1
#undef LT__AM_F2
#undef LT__AM_F3

/* out[0..n) = the 16-bit values h of type p widened, with AVX-512: for the attention kernels (a
   row of a head is D values, too few to pay for lt__from16's dispatch each time) and the GEMM's
   packing of 16-bit operands (@@GEMM, lt__gsrc_get) */
LT__TARGET("avx512f") static void lt__widen16_avx512(lt_dtype p, const uint16_t *h, float *out, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(h + i));
        if (p == LT_F16) _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(LT__M16, x));
        else _mm512_storeu_si512((void *)(out + i), _mm512_maskz_slli_epi32(LT__M16, _mm512_maskz_cvtepu16_epi32(LT__M16, x), 16));
    }
    if (i < n) lt__from16(p, h + i, out + i, (size_t)(n - i));
}

/* lt__att_exp's AVX-512 kernel: lt__exp_neg16 on 16 values at a time, the last ones masked. */
LT__TARGET("avx512f") static void lt__att_exp_avx512(float *x, const float *c, float c0, int64_t n) {
    __m512 vc = _mm512_set1_ps(c0);
    int64_t i;
    for (i = 0; i < n; i += 16) {
        __mmask16 k = (__mmask16)(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, x + i);
        _mm512_mask_storeu_ps(x + i, k, lt__exp_neg16(_mm512_sub_ps(v, c ? _mm512_maskz_loadu_ps(k, c + i) : vc)));
    }
}
#endif /* LT__X86 */

/* ---- @@OPS.attention_gqa  grouped-query attention: fewer key/value heads than query heads --------- */
/* q (B, T, H·D), k and v (B, T, Hkv·D) -> y (B, T, H·D); H = G·Hkv, query head h reads key/value
   head h/G (HF's repeat_kv, without the copies); causal, scale 1/sqrt(D), lengths as lt_attention.
   Per query head the math is lt_attention's (forward and backward above), on the same kernels:
   lt__att_src reads q, k, v at their own row strides (H·D, Hkv·D) and maps a query head to its
   kv head, so nothing is repeated or copied.  Backward: the G query heads of one kv head add into
   the same dk, dv, so the threads take units (b, kv head), each running its G heads in order
   (lt__att_bwd): no two threads add into one gradient and the sums keep one order (MQA, Hkv = 1,
   has B units).  Hkv = H is plain multi-head attention on separate q, k, v (lt_attention's numbers
   on fused qkv).  The record: lt_attention's B, T, C = H·D, H (LT__ATT_*), Hkv (LT__GQA_HKV),
   save[0] = L (B, H, T).
   attention_gqa16 (lt_set_precision 16-bit): as attention16, on q, k, v rounded to 16 bits, y
   rounded; for backward save[1] keeps q16 | k16 | v16 | y16 (eager, when q, k and v all hold 16-bit
   values already, lt__copy16: no copies, the float32 q, k, v and y are read in place, as
   attention16 does). */
#define LT__GQA_HKV(nd) ((nd)->i[4])   /* key/value heads */
static lt__att_src lt__gqa_src_of(const lt__node *nd, int bits16) {
    lt__att_src a;
    int64_t H = LT__ATT_H(nd), Hk = LT__GQA_HKV(nd), nq = nd->in[0]->n, nk = nd->in[1]->n;
    int w;
    memset(&a, 0, sizeof a);
    a.T = LT__ATT_T(nd); a.C = LT__ATT_C(nd); a.D = a.C / H; a.G = H / Hk;
    for (w = 0; w < 3; w++) a.f[w] = nd->in[w]->data;
    a.ld[0] = a.C; a.ld[1] = a.ld[2] = Hk * a.D;
    if (bits16) {
        a.p = LT__PREC(nd) == (double)LT_F16 ? LT_F16 : LT_BF16;
        a.h[0] = (const uint16_t *)(const void *)nd->save[1];
        if (a.h[0]) { a.h[1] = a.h[0] + nq; a.h[2] = a.h[1] + nk; a.y16 = a.h[2] + nk; }
        a.round = !(lt__exact16(nd->in[0], a.p) && lt__exact16(nd->in[1], a.p) && lt__exact16(nd->in[2], a.p));
    }
    a.simd = lt__att_simd();
    return a;
}
static void lt__gqa_bwd(lt__node *nd, lt__att_src *a) {
    int add[3], w;
    for (w = 0; w < 3; w++) a->g[w] = lt__grad_w(nd->in[w], nd->ctx, &add[w]);
    if (a->g[0] || a->g[1] || a->g[2]) lt__att_bwd(nd, a, add);
}
static void lt__attention_gqa_fwd(lt__node *nd) {
    lt__att_src a = lt__gqa_src_of(nd, 0);
    lt__att_fwd(nd, &a);
}
static void lt__attention_gqa_bwd(lt__node *nd) {
    lt__att_src a = lt__gqa_src_of(nd, 0);
    lt__gqa_bwd(nd, &a);
}
static void lt__attention_gqa16_fwd(lt__node *nd) {
    lt__att_src a = lt__gqa_src_of(nd, 1);
    uint16_t *h16 = (uint16_t *)(void *)nd->save[1];
    float *y = nd->out->data;
    size_t ny = (size_t)nd->out->n, off = 0;
    int w;
    if (h16) {
        for (w = 0; w < 3; w++) {
            size_t n = (size_t)nd->in[w]->n;
            if (a.p == LT_F16) lt_f32_to_f16_array(a.f[w], h16 + off, n);
            else lt_f32_to_bf16_array(a.f[w], h16 + off, n);
            off += n;
            a.f[w] = NULL;
        }
        a.y16 = NULL;
    }
    lt__att_fwd(nd, &a);
    if (!h16) { lt_round_to_precision(a.p, y, y, ny); return; }
    if (a.p == LT_F16) { lt_f32_to_f16_array(y, h16 + off, ny); lt_f16_to_f32_array(h16 + off, y, ny); }
    else { lt_f32_to_bf16_array(y, h16 + off, ny); lt_bf16_to_f32_array(h16 + off, y, ny); }
}
static void lt__attention_gqa16_bwd(lt__node *nd) {
    lt__att_src a = lt__gqa_src_of(nd, 1);
    if (a.h[0]) a.f[0] = a.f[1] = a.f[2] = NULL;   /* else eager (lt__copy16): float32 q, k, v, y read in place */
    lt__gqa_bwd(nd, &a);
}

LTRAIN_DEF lt_tensor *lt_attention_gqa(lt_ctx *ctx, lt_tensor *q, lt_tensor *k, lt_tensor *v, int n_head, int n_kv_head,
                                       const int32_t *lengths) {
    int64_t B, T, C, D, b;
    char b1[64], b2[64], b3[64];
    lt__node *nd;
    size_t ln;
    int bits16, copies;
    if (!lt__live(ctx, "lt_attention_gqa", q, k)) return NULL;
    if (!v) return lt_set_error(ctx, LT_ERR_ARG, "lt_attention_gqa: v is NULL"), (lt_tensor *)NULL;
    bits16 = ctx->precision != LT_F32 && ctx->device == LT_CPU;   /* the CUDA kernel is float32 */
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3 || k->shape[0] != q->shape[0] || k->shape[1] != q->shape[1] ||
        v->shape[0] != k->shape[0] || v->shape[1] != k->shape[1] || v->shape[2] != k->shape[2]) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_attention_gqa: q is %s, k is %s, v is %s: they must be [B,T,H*D], "
                     "[B,T,Hkv*D], [B,T,Hkv*D]", lt_shape_str(q, b1, sizeof b1), lt_shape_str(k, b2, sizeof b2),
                     lt_shape_str(v, b3, sizeof b3));
        return NULL;
    }
    B = q->shape[0]; T = q->shape[1]; C = q->shape[2];
    if (n_head < 1 || n_kv_head < 1 || C % n_head != 0 || n_head % n_kv_head != 0 ||
        k->shape[2] != (int64_t)n_kv_head * (C / n_head)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_attention_gqa: q is %s, k is %s with %d heads and %d kv heads: the heads "
                     "must divide q's %lld channels, the kv heads the heads, and k must have kv heads x %lld channels",
                     lt_shape_str(q, b1, sizeof b1), lt_shape_str(k, b2, sizeof b2), n_head, n_kv_head, (long long)C,
                     n_head >= 1 ? (long long)(C / n_head) : 0LL);
        return NULL;
    }
    D = C / n_head;
    if (D > LT__ATT_TILE) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_attention_gqa: q is %s with %d heads: a head of %lld channels is more than "
                     "%d, the most the kernels handle (hint: use more heads)",
                     lt_shape_str(q, b1, sizeof b1), n_head, (long long)D, LT__ATT_TILE);
        return NULL;
    }
    if (lengths)
        for (b = 0; b < B; b++)
            if (lengths[b] < 0 || lengths[b] > T) {
                lt_set_error(ctx, LT_ERR_ARG, "lt_attention_gqa: lengths[%lld] is %d: it must be in [0,%lld]",
                             (long long)b, lengths[b], (long long)T);
                return NULL;
            }
    if (!lt_mul_size((size_t)(B * n_head), (size_t)T, &ln)) {
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_attention_gqa: B*H*T overflows");
        return NULL;
    }
    nd = lt__node_new(ctx, bits16 ? LT__OP(attention_gqa16) : LT__OP(attention_gqa), 3, q->shape, q, k, v, 0);
    if (!nd) return NULL;
    LT__ATT_B(nd) = B; LT__ATT_T(nd) = T; LT__ATT_C(nd) = C; LT__ATT_H(nd) = n_head; LT__GQA_HKV(nd) = n_kv_head;
    LT__PREC(nd) = (double)ctx->precision;
    if (!lt__save(ctx, nd, 0, (int64_t)ln)) return NULL;   /* L */
    copies = lt__copy16(ctx, q) || lt__copy16(ctx, k) || lt__copy16(ctx, v);
    if (bits16 && nd->out->requires_grad && copies && !lt__save(ctx, nd, 1, q->n + k->n))
        return NULL;   /* q, k, v, y: 16 bit (2·(q->n + k->n) halves) */
    if (lengths && !(lt__node_ids(ctx, nd, lengths, B))) return NULL;
    return lt__run(ctx, nd);
}
/* ---- src/06_gemm.h ---- */
/* ==== @@GEMM  matrix multiply kernels (part of @@OPS) ========================================== */
/* Holds: lt_sgemm and its layers (packing, micro-kernels portable / AVX2 / AVX-512), 16-bit
   operands converted while packing, the kernel set picked once per process.
   Calls: @@HALF; @@OPS's 16-bit GELU block (the fused epilogue of gelu16). */
/* C (M,N) = alpha * op(A) (M,K) * op(B) (K,N) + beta * C, row-major; op(X) is X or Xᵀ.

   The layering of Goto & van de Geijn ("Anatomy of high-performance matrix multiplication",
   2008) as BLIS names it, with the two innermost loops swapped so the small A sliver stays in L1:
     for jc over N by NC:                 (one thread owns a range of rows or of columns of C)
       for pc over K by KC:               pack op(B)[pc.., jc..] into NR-wide slivers  (~L2)
         for ic over M by MC:             pack op(A)[ic.., pc..] into MR-tall slivers
           for ir over MC by MR:          this A sliver (MR x KC) stays in L1 ...
             for jr over NC by NR:        ... while B slivers stream from L2:
               micro-kernel: an MR x NR tile of C in registers, KC rank-1 updates, then
               C = alpha*tile + beta*C on the first KC block, C += alpha*tile after.
   Packing reads op(A) and op(B) whatever their transposes (no transposed copy is ever made),
   and pads partial slivers with zeros, so the micro-kernel sees one layout and full tiles.
   Kernels, chosen at run time from cpuid (the intrinsics compile only on x86 gcc/clang, inside
   functions marked with a target attribute, so the rest of the file needs no -m flags):
     avx512   14 x 32 tile: 28 zmm accumulators; B sliver rows are 2 zmm, A values broadcast
     bf16dp   the same tile on bf16 pairs (AVX512_BF16 vdpbf16ps), for two bf16 operands only
     avx2      6 x 16 tile: 12 ymm accumulators (AVX2 + FMA)
     neon      8 x 12 tile: 24 q-register accumulators (AArch64, where it always runs; tested
               under qemu-aarch64 by tests/arm64.sh, not timed on an ARM machine)
     portable  4 x 16 tile in plain C: the reference, and the kernel everywhere else
   The environment variable LT_GEMM=portable|avx2|avx512|neon forces one (if the CPU has it);
   LT_GEMM16=convert keeps bf16 products off the bf16dp kernel (pairs: on it, where the CPU can);
   #define LTRAIN_NO_SIMD compiles only the portable one.
   Threads (OpenMP): C is cut into one block of rows (or of columns, when C is short and wide)
   per thread, and each thread runs the loops above on its block with its own packing buffers,
   on the stack: LT__GEMM_STACK bytes (about 640 KiB; 680 KiB with 16-bit operands) per thread
   and no malloc, so a thread that calls lt_sgemm needs a stack of 1 MiB or more (the main thread's and OpenMP's default 8 MiB
   are fine; musl's 128 KiB default for new threads is not).
   bench/gemm.c (make bench) times all four transpose cases against OpenBLAS's cblas_sgemm; the
   figures are in bench/results.md and bench/design.md. */

#ifdef LTRAIN_CBLAS
#include <cblas.h>
#endif


/* A micro-kernel: c (MR,NR) = alpha * a·b + beta * c (beta == 0: c is not read), where b is an
   NR-wide sliver (kc rows of NR values) and a an MR-tall sliver, stored one of two ways so that
   packing it is a plain copy whatever A's transpose: k-major (a[k*MR + r], from A stored
   transposed) or row-major with the fixed row stride LT__KS (a[r*LT__KS + k], from A as is). */
typedef void (*lt__ukernel)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                            float beta);

typedef struct {
    lt__ukernel fn_k, fn_r;   /* A sliver k-major / row-major */
    int mr, nr;               /* register tile */
    int mc, kc, nc;           /* cache blocks: A block MC x KC, B panel KC x NC (multiples of MR, NR) */
    int isa;                  /* packing may use: 0 plain C, 1 AVX2, 2 AVX-512 */
    int dp;                   /* fn_k/fn_r take bf16 pair panels (AVX512_BF16, lt__gemm_dp) */
    const char *name;
} lt__gemm_impl;

#define LT__KC_MAX 256
#define LT__KS (LT__KC_MAX + 16)   /* row stride of a row-major A sliver (+16: rows on other L1 sets) */

/* ---- @@GEMM.kernels  portable kernel: the reference ------------------------------------------- */
#define LT__P_MR 4
#define LT__P_NR 16
static void lt__uk_portable(int64_t kc, const float *a, int64_t ak, int64_t ar, const float *b, float *c,
                            int64_t ldc, float alpha, float beta) {
    float acc[LT__P_MR][LT__P_NR];
    int64_t k;
    int i, j;
    memset(acc, 0, sizeof acc);
    for (k = 0; k < kc; k++, a += ak, b += LT__P_NR)
        for (i = 0; i < LT__P_MR; i++)
            for (j = 0; j < LT__P_NR; j++) acc[i][j] += a[i * ar] * b[j];
    for (i = 0; i < LT__P_MR; i++, c += ldc)
        for (j = 0; j < LT__P_NR; j++) c[j] = alpha * acc[i][j] + (beta == 0.0f ? 0.0f : beta * c[j]);
}
static void lt__uk_portable_k(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                              float beta) {
    lt__uk_portable(kc, a, LT__P_MR, 1, b, c, ldc, alpha, beta);
}
static void lt__uk_portable_r(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                              float beta) {
    lt__uk_portable(kc, a, 1, LT__KS, b, c, ldc, alpha, beta);
}

#ifdef LT__X86
/* ---- @@GEMM.avx512  AVX-512: 14 x 32 ---------------------------------------------------------- */
/* 28 accumulators + 2 B vectors + the broadcast A value fit in the 32 zmm registers; each k is
   2 loads + 14 broadcasts (folded into the FMAs) for 28 FMAs. */
#define LT__A5_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
#define LT__A5_ZERO(r) __m512 c##r##a = _mm512_setzero_ps(), c##r##b = _mm512_setzero_ps();
/* C's tile is read at the end (beta != 0): asked for at the start, it arrives during the k loop
   instead of stalling the stores (a few % where C is much larger than the caches) */
#define LT__A5_PF(r) _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0); \
                     _mm_prefetch((const char *)(c + r * ldc + 16), _MM_HINT_T0);
#define LT__A5_FMA(r)                                                                              \
    c##r##a = _mm512_fmadd_ps(_mm512_set1_ps(LT__AT(r)), b0, c##r##a);                           \
    c##r##b = _mm512_fmadd_ps(_mm512_set1_ps(LT__AT(r)), b1, c##r##b);
#define LT__A5_ST0(r)                                                                              \
    _mm512_storeu_ps(c + r * ldc, _mm512_mul_ps(va, c##r##a));                                   \
    _mm512_storeu_ps(c + r * ldc + 16, _mm512_mul_ps(va, c##r##b));
#define LT__A5_ST1(r)                                                                              \
    _mm512_storeu_ps(c + r * ldc, _mm512_fmadd_ps(va, c##r##a, _mm512_loadu_ps(c + r * ldc)));       \
    _mm512_storeu_ps(c + r * ldc + 16, _mm512_fmadd_ps(va, c##r##b, _mm512_loadu_ps(c + r * ldc + 16)));
#define LT__A5_STB(r)                                                                              \
    _mm512_storeu_ps(c + r * ldc, _mm512_fmadd_ps(va, c##r##a, _mm512_mul_ps(vb, _mm512_loadu_ps(c + r * ldc)))); \
    _mm512_storeu_ps(c + r * ldc + 16,                                                           \
                     _mm512_fmadd_ps(va, c##r##b, _mm512_mul_ps(vb, _mm512_loadu_ps(c + r * ldc + 16))));
/* the 28 accumulators zeroed (C's tile prefetched when it will be read); at the end
   C = alpha*tile (beta 0), C += alpha*tile (beta 1) or C = alpha*tile + beta*C */
#define LT__A5_BEGIN                                                                               \
    LT__A5_ROWS(LT__A5_ZERO)                                                                       \
    if (beta != 0.0f) { LT__A5_ROWS(LT__A5_PF) }
#define LT__A5_STORE                                                                               \
    va = _mm512_set1_ps(alpha);                                                                    \
    vb = _mm512_set1_ps(beta);                                                                     \
    if (beta == 0.0f) { LT__A5_ROWS(LT__A5_ST0) }                                                  \
    else if (beta == 1.0f) { LT__A5_ROWS(LT__A5_ST1) }                                             \
    else { LT__A5_ROWS(LT__A5_STB) }
#define LT__A5_KERNEL(name, ASTEP)                                                                 \
    LT__TARGET("avx512f") static void name(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, \
                                       float alpha, float beta) {                                  \
        __m512 b0, b1, va, vb;                                                                     \
        int64_t k;                                                                                 \
        LT__A5_BEGIN                                                                               \
        for (k = 0; k < kc; k++, a += ASTEP, b += 32) {                                            \
            b0 = _mm512_load_ps(b);                                                                \
            b1 = _mm512_load_ps(b + 16);                                                           \
            LT__A5_ROWS(LT__A5_FMA)                                                                \
        }                                                                                          \
        LT__A5_STORE                                                                               \
    }
#define LT__AT(r) a[r]
LT__A5_KERNEL(lt__uk_avx512_k, 14)          /* A sliver k-major: a[k*14 + r] */
#undef LT__AT
#define LT__AT(r) a[r * LT__KS]
LT__A5_KERNEL(lt__uk_avx512_r, 1)           /* A sliver row-major: a[r*KS + k] */
#undef LT__AT

/* ---- @@GEMM.bf16dp  AVX512_BF16: 14 x 32 on bf16 pairs (bf16 operands only) ------------------- */
/* When both operands are bf16 (lt__gemm16 in bf16 precision), vdpbf16ps does twice the work of
   an FMA per instruction at the same rate (bench/precision.md, design notes): each float32
   lane j of the accumulator gets
       c[j] += a[2m]·b[2m][j] + a[2m+1]·b[2m+1][j]
   so one instruction is two steps of k.  Packing is done as for float32 (the panels then hold
   values that are exactly bf16) and each panel is then rewritten in place as bf16 pairs
   (lt__pair_rows / lt__pair_kmajor): the 32-bit word (m, j) holds k = 2m in its low half and
   k = 2m+1 in its high half, where the float32 panel held word (k, j) — so the micro-kernel
   is the float32 one with k counting pairs.  An odd kc gets a zero partner.  The sums differ
   from the float32 kernel's only in order (pairs), and the instruction treats bf16 subnormals
   (|x| < 1.2e-38) as zero and flushes subnormal sums, as every kernel on it does. */
#define LT__AD_DP(r)                                                                               \
    av = _mm512_set1_epi32(LT__AT(r));                                                             \
    c##r##a = _mm512_dpbf16_ps(c##r##a, (__m512bh)av, (__m512bh)b0);                               \
    c##r##b = _mm512_dpbf16_ps(c##r##b, (__m512bh)av, (__m512bh)b1);
#define LT__AD_KERNEL(name, ASTEP)                                                                 \
    LT__TARGET("avx512f,avx512bf16") static void name(int64_t kc, const float *af, const float *bf, float *c, int64_t ldc, \
                                     float alpha, float beta) {                                    \
        const int32_t *a = (const int32_t *)(const void *)af;                                      \
        const int32_t *b = (const int32_t *)(const void *)bf;                                      \
        __m512i b0, b1, av;                                                                        \
        __m512 va, vb;                                                                             \
        int64_t m, pairs = (kc + 1) / 2;                                                           \
        LT__A5_BEGIN                                                                               \
        for (m = 0; m < pairs; m++, a += ASTEP, b += 32) {                                         \
            b0 = _mm512_load_si512((const void *)b);                                               \
            b1 = _mm512_load_si512((const void *)(b + 16));                                        \
            LT__A5_ROWS(LT__AD_DP)                                                                 \
        }                                                                                          \
        LT__A5_STORE                                                                               \
    }
#define LT__AT(r) a[r]
LT__AD_KERNEL(lt__uk_bf16dp_k, 14)          /* A sliver k-major: pair word a[m*14 + r] */
#undef LT__AT
#define LT__AT(r) a[r * LT__KS]
LT__AD_KERNEL(lt__uk_bf16dp_r, 1)           /* A sliver row-major: pair word a[r*KS + m] */
#undef LT__AT

/* A k-major float32 panel of kc rows of w <= 32 words (p[k*w + j], bf16-exact values) rewritten in
   place as ceil(kc/2) rows of w pair words: word (m, j) = bf16(p[2m][j]) | bf16(p[2m+1][j]) << 16.
   Row m is written over words [m*w, m*w + w), which were read already (rows 2m and 2m+1 lie at
   or after it and are loaded first). */
LT__TARGET("avx512f") static void lt__pair_kmajor(float *p, int64_t kc, int w) {
    int32_t *q = (int32_t *)(void *)p;
    const __m512i hi = _mm512_set1_epi32((int)0xFFFF0000u);
    int64_t m;
    int j;
    for (m = 0; 2 * m < kc; m++) {
        for (j = 0; j < w; j += 16) {
            __mmask16 k = (__mmask16)(w - j >= 16 ? 0xFFFFu : (1u << (w - j)) - 1u);
            __m512i lo = _mm512_maskz_loadu_epi32(k, q + 2 * m * w + j);
            __m512i up = 2 * m + 1 < kc ? _mm512_maskz_loadu_epi32(k, q + (2 * m + 1) * w + j) : _mm512_setzero_si512();
            _mm512_mask_storeu_epi32(q + m * w + j, k, _mm512_or_si512(_mm512_maskz_srli_epi32(LT__M16, lo, 16), _mm512_and_si512(up, hi)));
        }
    }
}
/* n row-major rows of kc floats (row r at p + r*LT__KS) rewritten in place as kc bf16 halves
   each (the same start, so pair word m of row r is word r*LT__KS + m), plus a zero half after an
   odd kc.  Each block of 16 is loaded before its 32 bytes are stored at or before it. */
LT__TARGET("avx512f") static void lt__pair_rows(float *p, int64_t n, int64_t kc) {
    int64_t r, k;
    for (r = 0; r < n; r++) {
        float *row = p + r * LT__KS;
        uint16_t *h = (uint16_t *)(void *)row;
        for (k = 0; k + 16 <= kc; k += 16) {
            __m512i x = _mm512_maskz_srli_epi32(LT__M16, _mm512_loadu_si512((const void *)(row + k)), 16);
            _mm256_storeu_si256((__m256i *)(void *)(h + k), _mm512_maskz_cvtepi32_epi16(LT__M16, x));
        }
        for (; k < kc; k++) {
            uint32_t u;
            memcpy(&u, row + k, 4);
            h[k] = (uint16_t)(u >> 16);
        }
        if (kc & 1) h[kc] = 0;
    }
}

/* ---- @@GEMM.avx2  AVX2 + FMA: 6 x 16 ---------------------------------------------------------- */
/* 12 accumulators + 2 B vectors + 1 broadcast = 15 of the 16 ymm registers. */
#define LT__A2_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define LT__A2_ZERO(r) __m256 c##r##a = _mm256_setzero_ps(), c##r##b = _mm256_setzero_ps();
#define LT__A2_FMA(r)                                                                              \
    av = _mm256_broadcast_ss(&LT__AT(r));                                                          \
    c##r##a = _mm256_fmadd_ps(av, b0, c##r##a);                                                   \
    c##r##b = _mm256_fmadd_ps(av, b1, c##r##b);
#define LT__A2_ST0(r)                                                                              \
    _mm256_storeu_ps(c + r * ldc, _mm256_mul_ps(va, c##r##a));                                   \
    _mm256_storeu_ps(c + r * ldc + 8, _mm256_mul_ps(va, c##r##b));
#define LT__A2_ST1(r)                                                                              \
    _mm256_storeu_ps(c + r * ldc, _mm256_fmadd_ps(va, c##r##a, _mm256_loadu_ps(c + r * ldc)));       \
    _mm256_storeu_ps(c + r * ldc + 8, _mm256_fmadd_ps(va, c##r##b, _mm256_loadu_ps(c + r * ldc + 8)));
#define LT__A2_STB(r)                                                                              \
    _mm256_storeu_ps(c + r * ldc, _mm256_fmadd_ps(va, c##r##a, _mm256_mul_ps(vb, _mm256_loadu_ps(c + r * ldc)))); \
    _mm256_storeu_ps(c + r * ldc + 8,                                                            \
                     _mm256_fmadd_ps(va, c##r##b, _mm256_mul_ps(vb, _mm256_loadu_ps(c + r * ldc + 8))));
#define LT__A2_KERNEL(name, ASTEP)                                                                 \
    LT__TARGET("avx2,fma") static void name(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,  \
                                     float alpha, float beta) {                                    \
        __m256 b0, b1, av, va, vb;                                                                 \
        int64_t k;                                                                                 \
        LT__A2_ROWS(LT__A2_ZERO)                                                                   \
        for (k = 0; k < kc; k++, a += ASTEP, b += 16) {                                            \
            b0 = _mm256_load_ps(b);                                                                \
            b1 = _mm256_load_ps(b + 8);                                                            \
            LT__A2_ROWS(LT__A2_FMA)                                                                \
        }                                                                                          \
        va = _mm256_set1_ps(alpha);                                                                \
        vb = _mm256_set1_ps(beta);                                                                 \
        if (beta == 0.0f) { LT__A2_ROWS(LT__A2_ST0) }                                              \
        else if (beta == 1.0f) { LT__A2_ROWS(LT__A2_ST1) }                                         \
        else { LT__A2_ROWS(LT__A2_STB) }                                                           \
    }
#define LT__AT(r) a[r]
LT__A2_KERNEL(lt__uk_avx2_k, 6)
#undef LT__AT
#define LT__AT(r) a[r * LT__KS]
LT__A2_KERNEL(lt__uk_avx2_r, 1)
#undef LT__AT

/* n runs of h floats, s[i*lds + 0..h) -> d[i*ldd + 0..ldd), zero-filled past h (h <= ldd <= 32). */
LT__TARGET("avx512f") static void lt__runs_avx512(const float *s, int64_t lds, int64_t n, int h, float *d, int ldd) {
    __mmask16 h0 = (__mmask16)(h >= 16 ? 0xffffu : (1u << h) - 1), d0 = (__mmask16)(ldd >= 16 ? 0xffffu : (1u << ldd) - 1);
    __mmask16 h1 = (__mmask16)(h <= 16 ? 0u : (1u << (h - 16)) - 1), d1 = (__mmask16)(ldd <= 16 ? 0u : (1u << (ldd - 16)) - 1);
    int64_t i;
    if (ldd == 32 && h == 32) {
        for (i = 0; i < n; i++) {
            _mm512_storeu_ps(d + i * 32, _mm512_loadu_ps(s + i * lds));
            _mm512_storeu_ps(d + i * 32 + 16, _mm512_loadu_ps(s + i * lds + 16));
        }
        return;
    }
    for (i = 0; i < n; i++) {
        _mm512_mask_storeu_ps(d + i * ldd, d0, _mm512_maskz_loadu_ps(h0, s + i * lds));
        if (d1) _mm512_mask_storeu_ps(d + i * ldd + 16, d1, _mm512_maskz_loadu_ps(h1, s + i * lds + 16));
    }
}
LT__TARGET("avx2,fma") static void lt__runs_avx2(const float *s, int64_t lds, int64_t n, int h, float *d, int ldd) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i h0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(h), lane), d0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(ldd), lane);
    __m256i h1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(h - 8), lane);
    __m256i d1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(ldd - 8), lane);
    int64_t i;
    for (i = 0; i < n; i++) {
        _mm256_maskstore_ps(d + i * ldd, d0, _mm256_maskload_ps(s + i * lds, h0));
        if (ldd > 8) _mm256_maskstore_ps(d + i * ldd + 8, d1, _mm256_maskload_ps(s + i * lds + 8, h1));
    }
}
#endif /* LT__X86 */

#ifdef LT__ARM
/* ---- @@GEMM.neon  NEON (AArch64): 8 x 12 ------------------------------------------------------ */
/* 24 accumulators (8 rows of 3 quads) + 3 B quads + 4 quads of A values = 31 of the 32 q
   registers.  Each FMA multiplies a B quad by one lane of an A quad (fmla v.4s, v.4s, v.s[l]), so
   A values are never broadcast separately.  k-major slivers give the 8 A values of one k in two
   quads; row-major ones give 4 k of one row per quad, so that kernel steps k by 4 (rows 0-3, then
   4-7, each against the same 4 rows of B) and sums every element in k order all the same. */
#define LT__N8_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define LT__N8_ZERO(r) float32x4_t c##r##a = vdupq_n_f32(0.0f), c##r##b = c##r##a, c##r##c = c##r##a;
#define LT__N8_FMAL(r, v, l)                                                                        \
    c##r##a = vfmaq_laneq_f32(c##r##a, b0, v, l);                                                  \
    c##r##b = vfmaq_laneq_f32(c##r##b, b1, v, l);                                                  \
    c##r##c = vfmaq_laneq_f32(c##r##c, b2, v, l);
#define LT__N8_LOADB(kk)                                                                            \
    b0 = vld1q_f32(b + (kk) * 12); b1 = vld1q_f32(b + (kk) * 12 + 4); b2 = vld1q_f32(b + (kk) * 12 + 8);
/* row-major: B row kk against lane kk of rows p..s (x0..x3 hold 4 k of each) */
#define LT__N8_ROW4(kk, p, q, r, s)                                                                 \
    LT__N8_LOADB(kk) LT__N8_FMAL(p, x0, kk) LT__N8_FMAL(q, x1, kk) LT__N8_FMAL(r, x2, kk) LT__N8_FMAL(s, x3, kk)
#define LT__N8_FMAN(r)                                                                              \
    c##r##a = vfmaq_n_f32(c##r##a, b0, a[r * LT__KS + k]);                                         \
    c##r##b = vfmaq_n_f32(c##r##b, b1, a[r * LT__KS + k]);                                         \
    c##r##c = vfmaq_n_f32(c##r##c, b2, a[r * LT__KS + k]);
#define LT__N8_ST(r) lt__n8_store(c + r * ldc, c##r##a, c##r##b, c##r##c, alpha, beta);
/* one row of the tile: c = alpha·acc (+ beta·c) */
static inline void lt__n8_store(float *c, float32x4_t x, float32x4_t y, float32x4_t z, float alpha, float beta) {
    if (beta == 0.0f) {
        vst1q_f32(c, vmulq_n_f32(x, alpha));
        vst1q_f32(c + 4, vmulq_n_f32(y, alpha));
        vst1q_f32(c + 8, vmulq_n_f32(z, alpha));
    } else {
        vst1q_f32(c, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(c), beta), x, alpha));
        vst1q_f32(c + 4, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(c + 4), beta), y, alpha));
        vst1q_f32(c + 8, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(c + 8), beta), z, alpha));
    }
}
static void lt__uk_neon_k(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta) {
    int64_t k;
    LT__N8_ROWS(LT__N8_ZERO)
    for (k = 0; k < kc; k++, a += 8, b += 12) {
        float32x4_t b0, b1, b2, a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
        LT__N8_LOADB(0)
        LT__N8_FMAL(0, a0, 0) LT__N8_FMAL(1, a0, 1) LT__N8_FMAL(2, a0, 2) LT__N8_FMAL(3, a0, 3)
        LT__N8_FMAL(4, a1, 0) LT__N8_FMAL(5, a1, 1) LT__N8_FMAL(6, a1, 2) LT__N8_FMAL(7, a1, 3)
    }
    LT__N8_ROWS(LT__N8_ST)
}
static void lt__uk_neon_r(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta) {
    int64_t k = 0;
    float32x4_t b0, b1, b2, x0, x1, x2, x3;
    LT__N8_ROWS(LT__N8_ZERO)
    for (; k + 4 <= kc; k += 4, b += 48) {
        x0 = vld1q_f32(a + k); x1 = vld1q_f32(a + LT__KS + k);
        x2 = vld1q_f32(a + 2 * LT__KS + k); x3 = vld1q_f32(a + 3 * LT__KS + k);
        LT__N8_ROW4(0, 0, 1, 2, 3) LT__N8_ROW4(1, 0, 1, 2, 3) LT__N8_ROW4(2, 0, 1, 2, 3) LT__N8_ROW4(3, 0, 1, 2, 3)
        x0 = vld1q_f32(a + 4 * LT__KS + k); x1 = vld1q_f32(a + 5 * LT__KS + k);
        x2 = vld1q_f32(a + 6 * LT__KS + k); x3 = vld1q_f32(a + 7 * LT__KS + k);
        LT__N8_ROW4(0, 4, 5, 6, 7) LT__N8_ROW4(1, 4, 5, 6, 7) LT__N8_ROW4(2, 4, 5, 6, 7) LT__N8_ROW4(3, 4, 5, 6, 7)
    }
    for (; k < kc; k++, b += 12) {   /* the last kc % 4 */
        LT__N8_LOADB(0)
        LT__N8_ROWS(LT__N8_FMAN)
    }
    LT__N8_ROWS(LT__N8_ST)
}
#endif /* LT__ARM */

/* ---- kernel choice: lt__gemm_pick (@@CORE.cpu, with LT_GEMM) ---------------------------------- */
/* Blocking per kernel.  KC x NR floats of a B sliver plus MR x KC of A stay in L1 (32-48 KiB),
   the KC x NC B panel in L2; MC only sets how much A one packing pass covers.  The NC below is
   each kernel's largest (the packing buffer's size); lt__gemm_fit lowers it where L2 is small. */
static void lt__gemm_fit(lt__gemm_impl *g, int64_t l2);
static lt__gemm_impl lt__gemm_impl_of(int id) {
    lt__gemm_impl g;
    memset(&g, 0, sizeof g);
    g.fn_k = lt__uk_portable_k; g.fn_r = lt__uk_portable_r; g.mr = LT__P_MR; g.nr = LT__P_NR;
    g.mc = 64; g.kc = 256; g.nc = 256;
    g.name = "portable C 4x16 packed";
#ifdef LT__X86
    if (id == LT__GEMM_AVX512) {
        g.fn_k = lt__uk_avx512_k; g.fn_r = lt__uk_avx512_r; g.mr = 14; g.nr = 32;
        g.mc = 112; g.kc = 256; g.nc = 512; g.isa = 2;
        g.name = "avx512 14x32 packed";
    } else if (id == LT__GEMM_AVX2) {
        g.fn_k = lt__uk_avx2_k; g.fn_r = lt__uk_avx2_r; g.mr = 6; g.nr = 16;
        g.mc = 96; g.kc = 256; g.nc = 512; g.isa = 1;
        g.name = "avx2+fma 6x16 packed";
    }
#elif defined(LT__ARM)
    if (id == LT__GEMM_NEON) {
        g.fn_k = lt__uk_neon_k; g.fn_r = lt__uk_neon_r; g.mr = 8; g.nr = 12;
        g.mc = 96; g.kc = 256; g.nc = 504;
        g.name = "neon 8x12 packed";
    }
#else
    (void)id;
#endif
    lt__gemm_fit(&g, lt__cpu_cache(2));
    return g;
}
/* The B panel (KC x NC floats) takes at most half of L2 (the rest holds C's tiles, the A block
   and the next panel's prefetch): NC = L2 / (8 KC) floored to a multiple of NR, at least 4 NR,
   never above the kernel's own NC.  l2 <= 0 (unknown) keeps the kernel's NC. */
static void lt__gemm_fit(lt__gemm_impl *g, int64_t l2) {
    int64_t nc;
    if (l2 <= 0) return;
    nc = l2 / (8 * (int64_t)g->kc) / g->nr * g->nr;
    if (nc < 4 * g->nr) nc = 4 * g->nr;
    if (nc < g->nc) g->nc = (int)nc;
}

/* Products of two bf16 operands take the AVX512_BF16 pair kernels where the AVX-512 kernel was
   picked, the CPU has the instruction and pairs are the faster way: on AMD (Zen 4) a vdpbf16ps does
   twice an FMA's multiply-adds per cycle, while on Intel Xeons with AVX512_BF16 it does no more
   than the two FMA ports and the pair packing costs extra (a bf16 step took 1.45x fp32's time on
   pairs there, about fp32's on converted panels: bench/precision.md).  LT_GEMM16=pairs or
   LT_GEMM16=convert in the environment chooses either way (the same values, summed in another
   order). */
static void lt__gemm_dp(lt__gemm_impl *g) {
#ifdef LT__X86
    const char *e = getenv("LT_GEMM16");
    if (g->isa != 2 || (e && strcmp(e, "convert") == 0) || !lt__cpu_has(LT__CPU_AVX512F | LT__CPU_AVX512BF16)) return;
    if (!(e && strcmp(e, "pairs") == 0) && !lt__cpu_has(LT__CPU_AMD)) return;
    if (!lt__cpu_has(LT__CPU_AVX512BW | LT__CPU_AVX512VL)) return;   /* packing */
    g->fn_k = lt__uk_bf16dp_k; g->fn_r = lt__uk_bf16dp_r; g->dp = 1;
    g->name = "avx512bf16 14x32 bf16 pairs";
#else
    (void)g;
#endif
}

/* Floats of packing buffer one thread needs (the largest over kernels), + alignment slack. */
#define LT__GEMM_MAXA (112 * LT__KS)
#define LT__GEMM_MAXB (LT__KC_MAX * 512)
#define LT__GEMM_STACK ((LT__GEMM_MAXA + LT__GEMM_MAXB + 32) * 4)
#define LT__GEMM_MC_MAX 112   /* the largest MC and NC above */
#define LT__GEMM_NC_MAX 512

/* ---- @@GEMM.pack  packing --------------------------------------------------------------------- */
/* Packing walks rows that lie a stride apart (a run of KC values from each), which the hardware
   prefetcher picks up late: the runs a few rows ahead are asked for explicitly (see
   bench/precision.md, design notes). */
static void lt__prefetch_run(const void *p, int64_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
    const char *c = (const char *)p;
    int64_t o;
    for (o = 0; o < bytes; o += 64) __builtin_prefetch(c + o, 0, 3);
#else
    (void)p; (void)bytes;
#endif
}

/* op(A)[0..mc, 0..kc] -> MR-tall slivers of MR*LT__KS floats each.  A points at op(A)[0][0].
   A as is (element (i,k) at A[i*lda + k]): rows copied, row-major slivers a[r*KS + k].
   A transposed (element (i,k) at A[k*lda + i]): runs of MR copied, k-major slivers a[k*MR + r].
   Rows past mc are zeros. */
static void lt__pack_a(int ta, int isa, const float *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *ap) {
    int64_t is, k;
    int r;
    for (is = 0; is < mc; is += mr, ap += (int64_t)mr * LT__KS) {
        int h = mc - is < mr ? (int)(mc - is) : mr;
        if (!ta) {
            for (r = 0; r < h; r++) {
                memcpy(ap + r * LT__KS, A + (is + r) * lda, (size_t)kc * sizeof(float));
                if (is + r + 4 < mc) lt__prefetch_run(A + (is + r + 4) * lda, kc * (int64_t)sizeof(float));
            }
            for (; r < mr; r++) memset(ap + r * LT__KS, 0, (size_t)kc * sizeof(float));
        } else {
#ifdef LT__X86
            if (isa == 2 && mr <= 32) { lt__runs_avx512(A + is, lda, kc, h, ap, mr); continue; }
            if (isa == 1 && mr <= 16) { lt__runs_avx2(A + is, lda, kc, h, ap, mr); continue; }
#else
            (void)isa;
#endif
            for (k = 0; k < kc; k++) {
                const float *s = A + k * lda + is;
                float *d = ap + k * mr;
                for (r = 0; r < h; r++) d[r] = s[r];
                for (; r < mr; r++) d[r] = 0.0f;
            }
        }
    }
}

/* op(B)[0..kc, 0..nc] -> NR-wide slivers, each kc rows of NR values: bp[s*kc*NR + k*NR + j].
   Element (k,j) of op(B) is B[k*ldb + j], or B[j*ldb + k] when transposed (then 8 x 8 blocks
   are turned with AVX, lt__tr8x8 in @@OPS, when isa is set). */
static void lt__pack_b(int tb, int isa, const float *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *bp) {
    int64_t js, k, kk;
    int j;
    for (js = 0; js < nc; js += nr, bp += kc * nr) {
        int w = nc - js < nr ? (int)(nc - js) : nr;
        if (!tb) {
#ifdef LT__X86
            if (isa == 2 && nr <= 32) { lt__runs_avx512(B + js, ldb, kc, w, bp, nr); continue; }
            if (isa == 1 && nr <= 16) { lt__runs_avx2(B + js, ldb, kc, w, bp, nr); continue; }
#endif
            for (k = 0; k < kc; k++) {
                float *d = bp + k * nr;
                memcpy(d, B + k * ldb + js, (size_t)w * sizeof(float));
                for (j = w; j < nr; j++) d[j] = 0.0f;
            }
            continue;
        }
        k = 0;
#ifdef LT__X86
        if (isa >= 1 && w == nr) {
            for (; k + 8 <= kc; k += 8)
                for (j = 0; j < nr; j += 8) lt__tr8x8(B + (js + j) * ldb + k, ldb, bp + k * nr + j, nr);
        }
#else
        (void)isa;
#endif
        for (j = 0; j < w; j++) {
            const float *s = B + (js + j) * ldb;
            for (kk = k; kk < kc; kk++) bp[kk * nr + j] = s[kk];
        }
        for (; j < nr; j++)
            for (kk = k; kk < kc; kk++) bp[kk * nr + j] = 0.0f;
    }
}

/* ---- @@GEMM.f16  16-bit operands (lt__gemm16, @@OPS): converted while packing ------------------ */
/* An operand as packing reads it: float32 values f as they are (p = 0) or rounded to 16 bits
   (p = LT_BF16 or LT_F16), or 16-bit values h of type p, widened.  The panels are float32 either
   way, so the micro-kernels, their sums and their speed are those of float32; packing converts
   instead of copying (little more than a copy with the vector converters of @@HALF), and a 16-bit
   operand moves half the bytes.  With two bf16 operands on a CPU with AVX512_BF16 the panels are
   then rewritten as bf16 pairs for the vdpbf16ps kernel (above: 2x the products per second);
   fp16 has no such kernel (AVX512_FP16 computes in fp16 and has none here), so fp16 products
   run at the float32 rate. */
typedef struct {
    const float *f;
    const uint16_t *h;
    int p;
    int gelu;     /* h holds gelu16's input: the values are round16(gelu(h)), recomputed (@@OPS) */
} lt__gsrc;
static void lt__gelu16_block(lt_dtype p, const uint16_t *xh, float *y, int64_t m); /* @@OPS */
/* Do bf16 products with kernel id run on bf16 pairs (lt__gemm_dp)?  Otherwise an operand whose
   float32 values are bf16 already is packed as float32 (rounding it again gives the same values). */
static int lt__gemm16_pairs(int id) {
    lt__gemm_impl g = lt__gemm_impl_of(id);
    lt__gemm_dp(&g);
    return g.dp;
}
static lt__gsrc lt__gsrc_at(lt__gsrc s, int64_t off) {
    if (s.h) s.h += off;
    else s.f += off;
    return s;
}
#ifdef LT__X86
/* prefetch n values of s from at (see lt__prefetch_run; the x86 packers below use it) */
static void lt__gsrc_prefetch(const lt__gsrc *s, int64_t at, int64_t n) {
    if (s->h) lt__prefetch_run(s->h + at, n * 2);
    else lt__prefetch_run(s->f + at, n * 4);
}
/* lt__gsrc_get with AVX-512, 16 values at a time in registers (the tail in scalar code): bf16
   widens by a shift and rounds with the integer formula of lt_f32_to_bf16 (a NaN stays a NaN);
   fp16 through vcvtps2ph / vcvtph2ps (nearest even).  out may equal s's floats (in place). */
/* 16 values of s at element i (all present) as float32 */
LT__TARGET("avx512f") static inline __m512 lt__gsrc16_lanes(const lt__gsrc *s, int64_t i) {
    if (s->gelu) {   /* 16 lookups in gelu16's table at once (one gather) */
        __m512i x = _mm512_maskz_cvtepu16_epi32(LT__M16, _mm256_loadu_si256((const __m256i *)(const void *)(s->h + i)));
        return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), LT__M16, x, lt__gelu16_y[s->p == LT_F16], 4);
    }
    if (s->h) {
        __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(s->h + i));
        return s->p == LT_F16 ? _mm512_maskz_cvtph_ps(LT__M16, h) : _mm512_castsi512_ps(_mm512_maskz_slli_epi32(LT__M16, _mm512_maskz_cvtepu16_epi32(LT__M16, h), 16));
    }
    if (s->p == LT_F16) return _mm512_maskz_cvtph_ps(LT__M16, _mm512_maskz_cvtps_ph(LT__M16, _mm512_loadu_ps(s->f + i), _MM_FROUND_TO_NEAREST_INT));
    {
        __m512i u = _mm512_loadu_si512((const void *)(s->f + i)), hi = _mm512_set1_epi32((int)0xFFFF0000u);
        __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)),
                                     _mm512_and_si512(_mm512_maskz_srli_epi32(LT__M16, u, 16), _mm512_set1_epi32(1)));
        __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                                _mm512_set1_epi32(0x7F800000));
        return _mm512_castsi512_ps(_mm512_mask_mov_epi32(_mm512_and_si512(r, hi), nan, hi));
    }
}
static float lt__gsrc_one(const lt__gsrc *s, int64_t i) {
    if (s->gelu) return lt__gelu16_y[s->p == LT_F16][s->h[i]];
    if (s->h) return s->p == LT_F16 ? lt_f16_to_f32(s->h[i]) : lt_bf16_to_f32(s->h[i]);
    return s->p == LT_F16 ? lt_f16_to_f32(lt_f32_to_f16(s->f[i])) : lt_bf16_to_f32(lt_f32_to_bf16(s->f[i]));
}
/* One k of op(A) transposed, dealt to k-major slivers: the mc 32-bit values of that k sit in
   v[0..ceil(mc/16)) (lanes past mc zero; v has room for one more vector), and sliver s's mr (<= 16)
   values, picked from two of those vectors with one permute, go to d + s*mr*LT__KS, where d is the
   k's place in sliver 0.  (Dealing them through a row in memory stalls on store forwarding; see
   bench/design.md.)  Used for float32 values and for bf16 pair words alike. */
LT__TARGET("avx512f") static void lt__deal_slivers(__m512i *v, int64_t mc, int mr, int32_t *d) {
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __mmask16 mk = (__mmask16)((1u << mr) - 1u);
    int i0;
    v[(mc + 15) / 16] = _mm512_setzero_si512();
    for (i0 = 0; i0 < mc; i0 += mr) {
        __m512i x = _mm512_permutex2var_epi32(v[i0 / 16], _mm512_add_epi32(lane, _mm512_set1_epi32(i0 % 16)), v[i0 / 16 + 1]);
        _mm512_mask_storeu_epi32(d + (int64_t)i0 * LT__KS, mk, x);
    }
}
/* op(A) transposed, k-major slivers (as lt__pack_a): per k, the mc values converted 16 at a time
   into registers, then dealt (lt__deal_slivers). */
LT__TARGET("avx512f") static void lt__pack_a16t_avx512(const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                                                   float *ap) {
    __m512i v[LT__GEMM_MC_MAX / 16 + 2];
    int nv = (int)((mc + 15) / 16), c, i;
    int64_t k;
    for (k = 0; k < kc; k++) {
        int64_t at = k * lda;
        if (k + 4 < kc) lt__gsrc_prefetch(A, at + 4 * lda, mc);
        for (c = 0; c < nv; c++) {
            if (16 * c + 16 <= mc) v[c] = _mm512_castps_si512(lt__gsrc16_lanes(A, at + 16 * c));
            else {
                float t[16];
                for (i = 0; i < 16; i++) t[i] = 16 * c + i < mc ? lt__gsrc_one(A, at + 16 * c + i) : 0.0f;
                v[c] = _mm512_castps_si512(_mm512_loadu_ps(t));
            }
        }
        lt__deal_slivers(v, mc, mr, (int32_t *)(void *)(ap + k * mr));
    }
}
/* op(B) as is, NR-wide slivers (as lt__pack_b): row by row (B is read in order, the next rows
   prefetched), each row's nc values converted into their slivers' k rows. */
LT__TARGET("avx512f") static void lt__pack_b16n_avx512(const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                                                   float *bp) {
    int64_t k, js;
    int j;
    for (k = 0; k < kc; k++) {
        if (k + 4 < kc) lt__gsrc_prefetch(B, (k + 4) * ldb, nc);
        for (js = 0; js < nc; js += nr) {
            float *d = bp + js * kc + k * nr;   /* sliver js/nr starts at js*kc */
            int64_t at = k * ldb + js;
            int w = nc - js < nr ? (int)(nc - js) : nr;
            for (j = 0; j + 16 <= w; j += 16) _mm512_store_ps(d + j, lt__gsrc16_lanes(B, at + j));
            for (; j < w; j++) d[j] = lt__gsrc_one(B, at + j);
            for (; j < nr; j++) d[j] = 0.0f;
        }
    }
}
LT__TARGET("avx512f") static void lt__gsrc_get_avx512(const lt__gsrc *s, int64_t off, int64_t n, float *out) {
    int64_t i = 0;
    if (s->gelu) {
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, lt__gsrc16_lanes(s, off + i));
        for (; i < n; i++) out[i] = lt__gsrc_one(s, off + i);
    } else if (s->h) {
        lt__widen16_avx512((lt_dtype)s->p, s->h + off, out, n);
    } else {
        const float *f = s->f + off;
        if (s->p == LT_F16) {
            for (; i + 16 <= n; i += 16)
                _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(LT__M16, _mm512_maskz_cvtps_ph(LT__M16, _mm512_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT)));
            for (; i < n; i++) out[i] = lt_f16_to_f32(lt_f32_to_f16(f[i]));
        } else {
            const __m512i one = _mm512_set1_epi32(1), half = _mm512_set1_epi32(0x7FFF);
            const __m512i hi = _mm512_set1_epi32((int)0xFFFF0000u), abs = _mm512_set1_epi32(0x7FFFFFFF);
            const __m512i inf = _mm512_set1_epi32(0x7F800000);
            for (; i + 16 <= n; i += 16) {
                __m512i u = _mm512_loadu_si512((const void *)(f + i));
                __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, half), _mm512_and_si512(_mm512_maskz_srli_epi32(LT__M16, u, 16), one));
                __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs), inf);
                _mm512_storeu_si512((void *)(out + i), _mm512_mask_mov_epi32(_mm512_and_si512(r, hi), nan, hi));
            }
            for (; i < n; i++) out[i] = lt_bf16_to_f32(lt_f32_to_bf16(f[i]));
        }
    }
}
#endif
/* out[0..n) = element off.. of s as float32 (isa: as lt__gemm_impl's) */
static void lt__gsrc_get(int isa, const lt__gsrc *s, int64_t off, int64_t n, float *out) {
#ifdef LT__X86
    if (isa == 2 && (s->h || s->p)) { lt__gsrc_get_avx512(s, off, n, out); return; }
#else
    (void)isa;
#endif
    if (s->gelu) lt__gelu16_block((lt_dtype)s->p, s->h + off, out, n);
    else if (s->h) lt__from16((lt_dtype)s->p, s->h + off, out, (size_t)n);
    else if (s->p) lt__round16((lt_dtype)s->p, s->f + off, out, (size_t)n);
    else memcpy(out, s->f + off, (size_t)n * sizeof(float));
}

/* lt__pack_a for a converted operand: rows of op(A) converted straight into the slivers, or (A
   transposed) one k at a time, mc values converted in a row then dealt to the slivers. */
static void lt__pack_a16(int ta, int isa, const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *ap) {
    float row[LT__GEMM_MC_MAX + 16];
    int64_t is, k;
    int r;
    if (!ta) {
        for (is = 0; is < mc; is += mr, ap += (int64_t)mr * LT__KS) {
            int h = mc - is < mr ? (int)(mc - is) : mr;
            for (r = 0; r < h; r++) lt__gsrc_get(isa, A, (is + r) * lda, kc, ap + r * LT__KS);
            for (; r < mr; r++) memset(ap + r * LT__KS, 0, (size_t)kc * sizeof(float));
        }
        return;
    }
#ifdef LT__X86
    if (isa == 2 && mr <= 16) { lt__pack_a16t_avx512(A, lda, mc, kc, mr, ap); return; }
#endif
    for (k = 0; k < kc; k++) {
        lt__gsrc_get(isa, A, k * lda, mc, row);
        for (is = 0; is < mc; is += mr) {
            float *d = ap + is * LT__KS + k * mr;   /* sliver is/mr starts at (is/mr)*mr*KS */
            int h = mc - is < mr ? (int)(mc - is) : mr;
            for (r = 0; r < h; r++) d[r] = row[is + r];
            for (; r < mr; r++) d[r] = 0.0f;
        }
    }
}

/* lt__pack_b for a converted operand: B as is, one k row (nc values) at a time; B transposed,
   the NR stored rows of a sliver converted into a float32 block that lt__pack_b then turns. */
static void lt__pack_b16(int tb, int isa, const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *bp) {
    int64_t js, k;
    int j;
    if (!tb) {
        float row[LT__GEMM_NC_MAX];
#ifdef LT__X86
        if (isa == 2 && nr % 16 == 0) { lt__pack_b16n_avx512(B, ldb, kc, nc, nr, bp); return; }
#endif
        for (k = 0; k < kc; k++) {
            lt__gsrc_get(isa, B, k * ldb, nc, row);
            for (js = 0; js < nc; js += nr) {
                float *d = bp + js * kc + k * nr;   /* sliver js/nr starts at js*kc */
                int w = nc - js < nr ? (int)(nc - js) : nr;
                memcpy(d, row + js, (size_t)w * sizeof(float));
                for (j = w; j < nr; j++) d[j] = 0.0f;
            }
        }
        return;
    }
    {
        float blk[32 * LT__KC_MAX];
        for (js = 0; js < nc; js += nr, bp += kc * nr) {
            int w = nc - js < nr ? (int)(nc - js) : nr;
            for (j = 0; j < w; j++) lt__gsrc_get(isa, B, (js + j) * ldb, kc, blk + j * kc);
            lt__pack_b(1, isa, blk, kc, kc, w, nr, bp);
        }
    }
}

#ifdef LT__X86
/* ---- @@GEMM.pack_bf16  packing straight into bf16 pairs (the bf16dp kernel) --------------------- */
/* The four cases write the pair panels of lt__pair_kmajor / lt__pair_rows directly from the
   operand, 16 values at a time, without the float32 panel in between (a gelu operand, whose
   values are recomputed, still takes that way).  AVX512_BF16 CPUs all have AVX512BW and VL. */
/* the bf16 bits of s at at..at+n (n <= 16, the rest 0), zero-extended into 32-bit lanes */
LT__TARGET("avx512f,avx512bw,avx512vl") static inline __m512i lt__bf16_bits(const lt__gsrc *s, int64_t at, int n) {
    __mmask16 k = (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
    if (s->h) return _mm512_maskz_cvtepu16_epi32(k, _mm256_maskz_loadu_epi16(k, s->h + at));
    {   /* float32: rounded to nearest even as lt_f32_to_bf16, a NaN to 0xFFFF (as lt__gsrc16_lanes) */
        __m512i u = _mm512_maskz_loadu_epi32(k, s->f + at);
        __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)),
                                     _mm512_and_si512(_mm512_maskz_srli_epi32(LT__M16, u, 16), _mm512_set1_epi32(1)));
        __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                                _mm512_set1_epi32(0x7F800000));
        return _mm512_mask_mov_epi32(_mm512_maskz_srli_epi32(LT__M16, r, 16), nan, _mm512_set1_epi32(0xFFFF));
    }
}
/* pair words of two runs: lo's bits in the low half, hi's in the high half */
LT__TARGET("avx512f,avx512bw,avx512vl") static inline __m512i lt__pair_words(__m512i lo, __m512i hi) {
    return _mm512_or_si512(lo, _mm512_maskz_slli_epi32(LT__M16, hi, 16));
}
/* n values of s from at as n bf16 halves at d (n <= 16) */
LT__TARGET("avx512f,avx512bw,avx512vl") static inline void lt__bf16_store(const lt__gsrc *s, int64_t at, int n, uint16_t *d) {
    __mmask16 k = (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
    _mm256_mask_storeu_epi16(d, k, _mm512_maskz_cvtepi32_epi16(LT__M16, lt__bf16_bits(s, at, n)));
}
/* op(B) as is: word (m, j) of a sliver from rows 2m and 2m+1 of B (nr a multiple of 16) */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_b_pairs_n(const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                                                 float *bp) {
    int32_t *q0 = (int32_t *)(void *)bp;
    int64_t js, m;
    for (m = 0; 2 * m < kc; m++) {   /* rows 2m, 2m+1 in order, the next ones prefetched */
        if (2 * m + 5 < kc) {
            lt__gsrc_prefetch(B, (2 * m + 4) * ldb, nc);
            lt__gsrc_prefetch(B, (2 * m + 5) * ldb, nc);
        }
        for (js = 0; js < nc; js += nr) {
            int32_t *q = q0 + js * kc;   /* sliver js/nr */
            int w = nc - js < nr ? (int)(nc - js) : nr, j;
            for (j = 0; j < nr; j += 16) {
                int n = w - j;
                __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
                if (n > 0) lo = lt__bf16_bits(B, 2 * m * ldb + js + j, n);
                if (n > 0 && 2 * m + 1 < kc) hi = lt__bf16_bits(B, (2 * m + 1) * ldb + js + j, n);
                _mm512_store_si512((void *)(q + m * nr + j), lt__pair_words(lo, hi));
            }
        }
    }
}
/* op(B) transposed: column j of op(B) is a stored row, where the pairs (2m, 2m+1) are already
   neighbours: each row's kc values become kc/2 words in blk, which lt__pack_b turns. */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_b_pairs_t(const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                                                 float *bp) {
    float blk[32 * (LT__KC_MAX / 2 + 1)];
    int64_t kc2 = (kc + 1) / 2, js, k;
    for (js = 0; js < nc; js += nr, bp += kc * nr) {
        int w = nc - js < nr ? (int)(nc - js) : nr, j;
        for (j = 0; j < w; j++) {
            uint16_t *d = (uint16_t *)(void *)(blk + j * kc2);
            if (j + 4 < w) lt__gsrc_prefetch(B, (js + j + 4) * ldb, kc);
            for (k = 0; k < kc; k += 16) lt__bf16_store(B, (js + j) * ldb + k, kc - k < 16 ? (int)(kc - k) : 16, d + k);
            if (kc & 1) d[kc] = 0;
        }
        lt__pack_b(1, 2, blk, kc2, kc2, w, nr, bp);   /* bits moved, never computed on */
    }
}
/* op(A) as is: each row's kc values as kc halves at the row's start (rows past mc: zeros) */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_a_pairs_r(const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                                                 float *ap) {
    int64_t rows = (mc + mr - 1) / mr * mr, r, k;
    for (r = 0; r < rows; r++) {
        uint16_t *d = (uint16_t *)(void *)(ap + r * LT__KS);
        if (r + 4 < mc) lt__gsrc_prefetch(A, (r + 4) * lda, kc);
        if (r >= mc) memset(d, 0, (size_t)(kc + 1) * sizeof(uint16_t));
        else if (A->h) memcpy(d, A->h + r * lda, (size_t)kc * sizeof(uint16_t));
        else
            for (k = 0; k < kc; k += 16) lt__bf16_store(A, r * lda + k, kc - k < 16 ? (int)(kc - k) : 16, d + k);
        if (kc & 1) d[kc] = 0;
    }
}
/* op(A) transposed: stored rows 2m and 2m+1 give the words of all mc rows of op(A) for pair m,
   16 at a time in registers, dealt to the slivers (lt__deal_slivers). */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_a_pairs_t(const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                                                 float *ap) {
    __m512i v[LT__GEMM_MC_MAX / 16 + 2];
    int32_t *q = (int32_t *)(void *)ap;
    int nv = (int)((mc + 15) / 16), c;
    int64_t m;
    for (m = 0; 2 * m < kc; m++) {
        if (2 * m + 5 < kc) {
            lt__gsrc_prefetch(A, (2 * m + 4) * lda, mc);
            lt__gsrc_prefetch(A, (2 * m + 5) * lda, mc);
        }
        for (c = 0; c < nv; c++) {
            int n = mc - 16 * c < 16 ? (int)(mc - 16 * c) : 16;
            __m512i hi = 2 * m + 1 < kc ? lt__bf16_bits(A, (2 * m + 1) * lda + 16 * c, n) : _mm512_setzero_si512();
            v[c] = lt__pair_words(lt__bf16_bits(A, 2 * m * lda + 16 * c, n), hi);
        }
        lt__deal_slivers(v, mc, mr, q + m * mr);
    }
}
/* The pair panels for the bf16dp kernel, straight from the operand or (gelu) through float32 */
static void lt__pack_b_dp(int tb, const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *bp) {
    int64_t js;
    if (!B->gelu) {
        if (tb) lt__pack_b_pairs_t(B, ldb, kc, nc, nr, bp);
        else lt__pack_b_pairs_n(B, ldb, kc, nc, nr, bp);
        return;
    }
    lt__pack_b16(tb, 2, B, ldb, kc, nc, nr, bp);
    for (js = 0; js < nc; js += nr) lt__pair_kmajor(bp + js * kc, kc, nr);
}
static void lt__pack_a_dp(int ta, const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *ap) {
    int64_t is;
    if (!A->gelu) {
        if (ta) lt__pack_a_pairs_t(A, lda, mc, kc, mr, ap);
        else lt__pack_a_pairs_r(A, lda, mc, kc, mr, ap);
        return;
    }
    lt__pack_a16(ta, 2, A, lda, mc, kc, mr, ap);
    if (!ta) lt__pair_rows(ap, (mc + mr - 1) / mr * mr, kc);
    else
        for (is = 0; is < mc; is += mr) lt__pair_kmajor(ap + is * LT__KS, kc, mr);
}
#endif /* LT__X86 */

/* The end of a linear layer's forward, applied to each finished block of C while it is in cache
   (one pass over C saved):
     p = 0:          C = C + bias                        (float32; bias (N) or NULL: nothing)
     p = bf16, f16:  C = round16(C + round16(bias))      (16-bit products; bias may be NULL) */
typedef struct {
    int p;
    const float *bias;
} lt__gepi;
#define LT__GEPI_ON(e) ((e) && ((e)->p || (e)->bias))
#ifdef LT__X86
/* y[0..n) = round_bf16(y + b) (b NULL: round_bf16(y)), 16 at a time, the tail masked: one pass over
   the row, the rounding as lt__gsrc16_lanes' */
LT__TARGET("avx512f") static void lt__epi_bf16_avx512(const float *b, float *y, int64_t n) {
    const __m512i one = _mm512_set1_epi32(1), half = _mm512_set1_epi32(0x7FFF);
    const __m512i hi = _mm512_set1_epi32((int)0xFFFF0000u), abs = _mm512_set1_epi32(0x7FFFFFFF);
    const __m512i inf = _mm512_set1_epi32(0x7F800000);
    int64_t j;
    for (j = 0; j < n; j += 16) {
        __mmask16 k = (__mmask16)(n - j >= 16 ? 0xFFFFu : (1u << (n - j)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, y + j);
        __m512i u, r;
        __mmask16 nan;
        if (b) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, b + j));
        u = _mm512_castps_si512(v);
        r = _mm512_add_epi32(_mm512_add_epi32(u, half), _mm512_and_si512(_mm512_maskz_srli_epi32(LT__M16, u, 16), one));
        nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs), inf);
        _mm512_mask_storeu_epi32(y + j, k, _mm512_mask_mov_epi32(_mm512_and_si512(r, hi), nan, hi));
    }
}
#endif
static void lt__gemm_epilogue(int isa, const lt__gepi *e, float *C, int64_t ldc, int64_t m, int64_t n) {
    float b16[LT__GEMM_NC_MAX];
    int64_t i, j;
    lt__gsrc s;
    if (!e->p) {
        for (i = 0; i < m; i++) {
            float *y = C + i * ldc;
            LT__OMP(simd)
            for (j = 0; j < n; j++) y[j] += e->bias[j];
        }
        return;
    }
    s.h = NULL;
    s.p = e->p;
    s.gelu = 0;
    if (e->bias) { s.f = e->bias; lt__gsrc_get(isa, &s, 0, n, b16); }
#ifdef LT__X86
    if (isa == 2 && e->p == LT_BF16) {
        for (i = 0; i < m; i++) lt__epi_bf16_avx512(e->bias ? b16 : NULL, C + i * ldc, n);
        return;
    }
#endif
    for (i = 0; i < m; i++) {
        float *y = C + i * ldc;
        if (e->bias) for (j = 0; j < n; j++) y[j] += b16[j];
        s.f = y;
        lt__gsrc_get(isa, &s, 0, n, y);
    }
}

/* ---- @@GEMM.block  one thread's block of C ---------------------------------------------------- */
/* The B panel that the next (jc, pc) step will pack, fetched into L2 a few lines before each
   micro-kernel call of this step, so that packing it reads cache instead of memory.  Weights are
   cold in a training step (a whole step of other data passed since their last use), and packing
   does not overlap the FMAs: at 2 threads a thread has half the FMAs but reads as many bytes per
   panel, so the wait shows most there (bench/design.md).  Only blocks of C up to
   LT__PF_ROWS rows tall: each packed value then feeds few FMAs, so packing's wait for memory
   is a visible share of a panel's time; taller blocks hide it. */
#define LT__PF_ROWS 384
typedef struct {
    const char *row0;     /* the first row's first byte */
    int64_t stride;       /* bytes from a row to the next */
    int64_t rows, bytes;  /* rows to fetch, bytes of each */
    int64_t r, off;       /* the next line: row r, offset off from its start rounded down to a line */
    int64_t per_call;     /* lines fetched before each micro-kernel call */
} lt__pf;
static void lt__pf_set(lt__pf *f, const lt__gsrc *B, int tb, int64_t ldb, int64_t pc, int64_t jc, int64_t kc,
                       int64_t nc, int64_t calls) {
    int64_t es = B->h ? 2 : 4, lines;
    const char *base = B->h ? (const char *)B->h : (const char *)B->f;
    f->row0 = base + (tb ? jc * ldb + pc : pc * ldb + jc) * es;
    f->stride = ldb * es;
    f->rows = tb ? nc : kc;
    f->bytes = (tb ? kc : nc) * es;
    f->r = 0;
    f->off = 0;
    lines = f->rows * ((f->bytes + 63) / 64 + 1);
    f->per_call = lines / (calls > 0 ? calls : 1) + 1;
}
static void lt__pf_step(lt__pf *f) {
#if defined(__GNUC__) || defined(__clang__)
    int64_t n;
    for (n = 0; n < f->per_call && f->r < f->rows; n++) {
        const char *row = f->row0 + f->r * f->stride;
        const char *line = (const char *)((uintptr_t)row & ~(uintptr_t)63) + f->off;
        __builtin_prefetch(line, 0, 2);
        f->off += 64;
        if (line + 64 >= row + f->bytes) { f->off = 0; f->r++; }
    }
#else
    (void)f;
#endif
}
static void lt__gemm_block(const lt__gemm_impl *g, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                           lt__gsrc A, int64_t lda, lt__gsrc B, int64_t ldb, float beta, float *C,
                           int64_t ldc, const lt__gepi *epi) {
    float buf[LT__GEMM_MAXA + LT__GEMM_MAXB + 32];
    float *ap = (float *)(((uintptr_t)buf + 63) & ~(uintptr_t)63), *bp = ap + LT__GEMM_MAXA;
    float edge[16 * 32];        /* a partial tile: computed here, then merged into C */
    int64_t jc, pc, ic, ir, jr;
    lt__pf pf;
    lt__ukernel fn = ta ? g->fn_k : g->fn_r;
    int convert_a = A.h || A.p, convert_b = B.h || B.p;
    for (jc = 0; jc < N; jc += g->nc) {
        int64_t nc = N - jc < g->nc ? N - jc : g->nc;
        for (pc = 0; pc < K; pc += g->kc) {
            int64_t kc = K - pc < g->kc ? K - pc : g->kc;
            float bet = pc == 0 ? beta : 1.0f;
            lt__gsrc bs = lt__gsrc_at(B, tb ? jc * ldb + pc : pc * ldb + jc);
#ifdef LT__X86
            if (g->dp) lt__pack_b_dp(tb, &bs, ldb, kc, nc, g->nr, bp);
            else
#endif
            if (convert_b) lt__pack_b16(tb, g->isa, &bs, ldb, kc, nc, g->nr, bp);
            else lt__pack_b(tb, g->isa, bs.f, ldb, kc, nc, g->nr, bp);
            {   /* the next panel: the next K block of these columns, else the next columns' first */
                int64_t npc = pc + kc < K ? pc + kc : 0, njc = pc + kc < K ? jc : jc + nc;
                int64_t nkc = K - npc < g->kc ? K - npc : g->kc, nnc = N - njc < g->nc ? N - njc : g->nc;
                int64_t calls = (M + g->mr - 1) / g->mr * ((nc + g->nr - 1) / g->nr);
                if (njc < N && M <= LT__PF_ROWS) lt__pf_set(&pf, &B, tb, ldb, npc, njc, nkc, nnc, calls);
                else memset(&pf, 0, sizeof pf);
            }
            for (ic = 0; ic < M; ic += g->mc) {
                int64_t mc = M - ic < g->mc ? M - ic : g->mc;
                lt__gsrc as = lt__gsrc_at(A, ta ? pc * lda + ic : ic * lda + pc);
#ifdef LT__X86
                if (g->dp) lt__pack_a_dp(ta, &as, lda, mc, kc, g->mr, ap);
                else
#endif
                if (convert_a) lt__pack_a16(ta, g->isa, &as, lda, mc, kc, g->mr, ap);
                else lt__pack_a(ta, g->isa, as.f, lda, mc, kc, g->mr, ap);
                for (ir = 0; ir < mc; ir += g->mr) {
                    int h = mc - ir < g->mr ? (int)(mc - ir) : g->mr;
                    const float *as = ap + ir * LT__KS;
                    for (jr = 0; jr < nc; jr += g->nr) {
                        int w = nc - jr < g->nr ? (int)(nc - jr) : g->nr, i, j;
                        float *c = C + (ic + ir) * ldc + jc + jr;
                        lt__pf_step(&pf);
                        if (h == g->mr && w == g->nr) {
                            fn(kc, as, bp + jr * kc, c, ldc, alpha, bet);
                            continue;
                        }
                        fn(kc, as, bp + jr * kc, edge, g->nr, alpha, 0.0f);
                        for (i = 0; i < h; i++)
                            for (j = 0; j < w; j++)
                                c[i * ldc + j] = edge[i * g->nr + j] + (bet == 0.0f ? 0.0f : bet * c[i * ldc + j]);
                    }
                }
                if (LT__GEPI_ON(epi) && pc + kc >= K) {   /* this block of C is final */
                    lt__gepi e = *epi;
                    if (e.bias) e.bias += jc;
                    lt__gemm_epilogue(g->isa, &e, C + ic * ldc + jc, ldc, mc, nc);
                }
            }
        }
    }
}

/* The whole product with kernel `id`, split over the OpenMP threads; operands converted while
   packing and the epilogue (NULL: none) as lt__gemm_block. */
static void lt__sgemm_ex(int id, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, lt__gsrc A,
                         int64_t lda, lt__gsrc B, int64_t ldb, float beta, float *C, int64_t ldc, const lt__gepi *epi) {
    lt__gemm_impl g = lt__gemm_impl_of(id);
    int nt = 1, split_m;
    if (A.p == LT_BF16 && B.p == LT_BF16) lt__gemm_dp(&g);
    if (M <= 0 || N <= 0) return;
    if (K <= 0 || alpha == 0.0f) {   /* C = beta*C; beta == 0 writes zeros even over NaN, as BLAS */
        int64_t i, j;
        if (beta != 1.0f)
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        if (LT__GEPI_ON(epi))
            for (j = 0; j < N; j += LT__GEMM_NC_MAX) {
                lt__gepi e = *epi;
                if (e.bias) e.bias += j;
                lt__gemm_epilogue(g.isa, &e, C + j, ldc, M, N - j < LT__GEMM_NC_MAX ? N - j : LT__GEMM_NC_MAX);
            }
        return;
    }
#ifdef _OPENMP
    if (!omp_in_parallel() && (double)M * (double)N * (double)K >= 2097152.0) {
        /* at least one register tile row of work per thread */
        int64_t units = (M + g.mr - 1) / g.mr > (N + g.nr - 1) / g.nr ? (M + g.mr - 1) / g.mr : (N + g.nr - 1) / g.nr;
        nt = omp_get_max_threads();
        if (nt > units) nt = (int)units;
    }
#endif
    /* cut the longer side (in tiles): rows unless C is much wider than tall */
    split_m = (M + g.mr - 1) / g.mr >= (N + g.nr - 1) / g.nr;
    if (nt <= 1) {
        lt__gemm_block(&g, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, epi);
        return;
    }
    LT__OMP(parallel num_threads(nt))
    {
        int t = 0, n = 1;
        int64_t unit = split_m ? g.mr : g.nr, len = split_m ? M : N, tiles = (len + unit - 1) / unit, t0, t1;
#ifdef _OPENMP
        t = omp_get_thread_num(); n = omp_get_num_threads();
#endif
        t0 = tiles * t / n * unit; t1 = tiles * (t + 1) / n * unit;
        if (t1 > len) t1 = len;
        if (t1 > t0) {
            if (split_m)
                lt__gemm_block(&g, ta, tb, t1 - t0, N, K, alpha, lt__gsrc_at(A, ta ? t0 : t0 * lda), lda, B, ldb,
                               beta, C + t0 * ldc, ldc, epi);
            else {
                lt__gepi e;
                if (epi) { e = *epi; if (e.bias) e.bias += t0; }
                lt__gemm_block(&g, ta, tb, M, t1 - t0, K, alpha, A, lda, lt__gsrc_at(B, tb ? t0 * ldb : t0), ldb,
                               beta, C + t0, ldc, epi ? &e : NULL);
            }
        }
    }
}

static lt__gsrc lt__gsrc_f32(const float *f) {
    lt__gsrc s;
    s.f = f; s.h = NULL; s.p = 0; s.gelu = 0;
    return s;
}
static void lt__sgemm_with(int id, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    lt__sgemm_ex(id, ta, tb, M, N, K, alpha, lt__gsrc_f32(A), lda, lt__gsrc_f32(B), ldb, beta, C, ldc, NULL);
}

LTRAIN_DEF const char *lt_kernel_name(void) {
#ifdef LTRAIN_CBLAS
    (void)lt__sgemm_with; /* the built-in kernels stay compiled: the tests compare them with cblas */
    (void)lt__gemm_pick;
    return "cblas_sgemm";
#else
    return lt__gemm_impl_of(lt__gemm_pick()).name;
#endif
}
/* 16-bit products always run on the built-in kernels (bf16 on bf16 pairs where the CPU can) */
LTRAIN_DEF const char *lt_kernel_name_for(lt_dtype p) {
    lt__gemm_impl g;
    if (p != LT_BF16 && p != LT_F16) return lt_kernel_name();
    g = lt__gemm_impl_of(lt__gemm_pick());
    if (p == LT_BF16) lt__gemm_dp(&g);
    return g.name;
}

LTRAIN_DEF void lt_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                         const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                         float *C, int64_t ldc) {
#ifdef LTRAIN_CBLAS
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
#else
    lt__sgemm_with(lt__gemm_pick(), trans_a != 0, trans_b != 0, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

/* C (M,N) = op(A)·op(B) + bias (N, or NULL), the bias added to each block of C as the GEMM
   finishes it (the built-in kernels) or in a second pass (cblas) */
static void lt__sgemm_bias(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                           const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc) {
#ifdef LTRAIN_CBLAS
    int64_t r;
    lt_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
    if (!bias) return;
    LT__OMP(parallel for if (M * N > 32768))
    for (r = 0; r < M; r++) {
        int64_t j;
        for (j = 0; j < N; j++) C[r * ldc + j] += bias[j];
    }
#else
    lt__gepi e;
    e.p = 0;
    e.bias = bias;
    lt__sgemm_ex(lt__gemm_pick(), ta, tb, M, N, K, 1.0f, lt__gsrc_f32(A), lda, lt__gsrc_f32(B), ldb, 0.0f, C, ldc, &e);
#endif
}

/* ---- src/07_ops_matmul.h ---- */
/* ==== @@OPS (continued)  matmul, linear, conv1d: the ops that call the GEMM ===================== */
/* Holds: the ops built on the GEMM: matmul, linear, conv1d, and their 16-bit forms.
   Calls: @@CORE, @@HALF, @@TENSOR, @@OPS (records, gradients), @@GEMM. */
/* ---- @@OPS.matmul  matmul: y (..., M, N) = op(a) (..., M, K) · op(b) (..., K, N) --------------- */
/* Backward:  d op(a) = dy · op(b)ᵀ,  d op(b) = op(a)ᵀ · dy, written through the stored layouts:
   a stored transposed gets (d op(a))ᵀ = op(b) · dyᵀ, likewise for b. */
#define LT__MM_FLAGS(nd) ((nd)->i[0])    /* LT_TRANS_A | LT_TRANS_B */
#define LT__MM_NB(nd) ((nd)->i[1])       /* batches */
#define LT__MM_M(nd) ((nd)->i[2])
#define LT__MM_N(nd) ((nd)->i[3])
#define LT__MM_K(nd) ((nd)->i[4])
#define LT__MM_SHARED(nd) ((nd)->i[5])   /* b is shared (2-D) by every batch */
static void lt__matmul_fwd(lt__node *nd) {
    int ta = (int)(LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (int)(LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd), q;
    for (q = 0; q < nb; q++)
        lt_sgemm(ta, tb, M, N, K, 1.0f, nd->in[0]->data + q * M * K, ta ? M : K,
                 nd->in[1]->data + (shared ? 0 : q * K * N), tb ? K : N, 0.0f, nd->out->data + q * M * N, N);
}
static void lt__matmul_bwd(lt__node *nd) {
    int ta = (int)(LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (int)(LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd), q;
    int add;
    float *ga = lt__grad_w(nd->in[0], nd->ctx, &add), *gb = lt__grad(nd->in[1], nd->ctx), ba = add ? 1.0f : 0.0f;
    for (q = 0; q < nb; q++) {
        const float *a = nd->in[0]->data + q * M * K, *b = nd->in[1]->data + (shared ? 0 : q * K * N);
        const float *gy = nd->out->grad + q * M * N;
        if (ga) {
            float *g = ga + q * M * K;
            if (!ta) lt_sgemm(0, !tb, M, K, N, 1.0f, gy, N, b, tb ? K : N, ba, g, K);          /* dA = dY op(B)ᵀ */
            else lt_sgemm(tb, 1, K, M, N, 1.0f, b, tb ? K : N, gy, N, ba, g, M);               /* dAs = op(B) dYᵀ */
        }
        if (gb) {
            float *g = gb + (shared ? 0 : q * K * N);
            if (!tb) lt_sgemm(!ta, 0, K, N, M, 1.0f, a, ta ? M : K, gy, N, 1.0f, g, N);        /* dB = op(A)ᵀ dY */
            else lt_sgemm(1, ta, N, K, M, 1.0f, gy, N, a, ta ? M : K, 1.0f, g, K);             /* dBs = dYᵀ op(A) */
        }
    }
}

static int lt__node16(lt_ctx *ctx, lt__node *nd); /* below: a 16-bit record's precision and copies */

LTRAIN_DEF lt_tensor *lt_matmul(lt_ctx *ctx, lt_tensor *a, lt_tensor *b, int flags) {
    int ta = (flags & LT_TRANS_A) != 0, tb = (flags & LT_TRANS_B) != 0, k;
    int64_t M, K, K2, N, batches = 1, shape[LT_MAX_DIMS];
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_matmul", a, b)) return NULL;
    lt_shape_str(a, b1, sizeof b1);
    lt_shape_str(b, b2, sizeof b2);
    if (a->ndim < 2 || b->ndim < 2) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_matmul: a is %s, b is %s: both need 2 or more dims", b1, b2);
        return NULL;
    }
    M = ta ? a->shape[a->ndim - 1] : a->shape[a->ndim - 2];
    K = ta ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
    K2 = tb ? b->shape[b->ndim - 1] : b->shape[b->ndim - 2];
    N = tb ? b->shape[b->ndim - 2] : b->shape[b->ndim - 1];
    if (K != K2) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_matmul: a is %s%s, b is %s%s: op(a)'s last dim (%lld) must equal "
                     "op(b)'s first (%lld)", b1, ta ? " (transposed)" : "", b2, tb ? " (transposed)" : "",
                     (long long)K, (long long)K2);
        return NULL;
    }
    if (b->ndim > 2 && b->ndim != a->ndim) goto batch_mismatch;
    for (k = 0; k < a->ndim - 2; k++) {
        if (b->ndim > 2 && b->shape[k] != a->shape[k]) goto batch_mismatch;
        batches *= a->shape[k];
        shape[k] = a->shape[k];
    }
    shape[a->ndim - 2] = M;
    shape[a->ndim - 1] = N;
    nd = lt__node_new(ctx, ctx->precision == LT_F32 ? LT__OP(matmul) : LT__OP(matmul16), a->ndim, shape, a, b, NULL, 0);
    if (!nd) return NULL;
    LT__MM_FLAGS(nd) = flags & (LT_TRANS_A | LT_TRANS_B);
    LT__MM_NB(nd) = batches; LT__MM_M(nd) = M; LT__MM_N(nd) = N; LT__MM_K(nd) = K;
    LT__MM_SHARED(nd) = b->ndim == 2 && a->ndim > 2;
    if (ctx->precision != LT_F32 && !lt__node16(ctx, nd)) return NULL;
    return lt__run(ctx, nd);
batch_mismatch:
    lt_set_error(ctx, LT_ERR_SHAPE, "lt_matmul: a is %s, b is %s: leading (batch) dims must match, or b must be 2-D",
                 b1, b2);
    return NULL;
}

/* ---- @@OPS.linear  linear (torch.nn.Linear) and conv1d (Hugging Face Conv1D) ------------------- */
/* linear: x (R, I), W (O, I), b (O) -> y (R, O) = x·Wᵀ + b
     dx += dy·W,  dW += dyᵀ·x,  db += Σ_rows dy
   conv1d: x (R, I), W (I, O), b (O) -> y (R, O) = x·W + b
     dx += dy·Wᵀ, dW += xᵀ·dy,  db += Σ_rows dy
   (R = all leading dims of x flattened) */
#define LT__AFF_R(nd) ((nd)->i[0])
#define LT__AFF_I(nd) ((nd)->i[1])
#define LT__AFF_O(nd) ((nd)->i[2])
#define LT__AFF_X_GELU16(nd) ((nd)->f[1])   /* linear16/conv1d16: 1 when x is recomputed from gelu16's copy */
/* db += Σ_rows dy: the broadcast-add gradient of @@OPS (threaded by columns, rows in order) */
static void lt__bias_grad(float *gb, const float *gy, int64_t R, int64_t O) {
    lt__bcast_grad_b(gb, gy, NULL, R * O, O, 1.0f, 1);
}
static void lt__linear_fwd(lt__node *nd) {
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    lt__sgemm_bias(0, 1, R, O, Ci, nd->in[0]->data, Ci, nd->in[1]->data, Ci, nd->in[2] ? nd->in[2]->data : NULL,
                   nd->out->data, O);
}
static void lt__linear_bwd(lt__node *nd) {
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    int add;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad(nd->in[1], nd->ctx), *gb = lt__grad(nd->in[2], nd->ctx);
    const float *gy = nd->out->grad;
    if (gx) lt_sgemm(0, 0, R, Ci, O, 1.0f, gy, O, nd->in[1]->data, Ci, add ? 1.0f : 0.0f, gx, Ci);
    if (gw) lt_sgemm(1, 0, O, Ci, R, 1.0f, gy, O, nd->in[0]->data, Ci, 1.0f, gw, Ci);
    if (gb) lt__bias_grad(gb, gy, R, O);
}
static void lt__conv1d_fwd(lt__node *nd) {
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    lt__sgemm_bias(0, 0, R, O, Ci, nd->in[0]->data, Ci, nd->in[1]->data, O, nd->in[2] ? nd->in[2]->data : NULL,
                   nd->out->data, O);
}
static void lt__conv1d_bwd(lt__node *nd) {
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    int add;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad(nd->in[1], nd->ctx), *gb = lt__grad(nd->in[2], nd->ctx);
    const float *gy = nd->out->grad;
    if (gx) lt_sgemm(0, 1, R, Ci, O, 1.0f, gy, O, nd->in[1]->data, O, add ? 1.0f : 0.0f, gx, Ci);
    if (gw) lt_sgemm(1, 0, Ci, O, R, 1.0f, nd->in[0]->data, Ci, gy, O, 1.0f, gw, O);
    if (gb) lt__bias_grad(gb, gy, R, O);
}
static lt_tensor *lt__affine(lt_ctx *ctx, const lt__opdef *op, const lt__opdef *op16, const char *who, lt_tensor *x,
                             lt_tensor *w, lt_tensor *b, int w_is_out_in) {
    int64_t Ci, O, shape[LT_MAX_DIMS];
    char b1[64], b2[64], b3[64];
    int k;
    lt__node *nd;
    if (!lt__live(ctx, who, x, w)) return NULL;
    Ci = x->shape[x->ndim - 1];
    O = w_is_out_in ? w->shape[0] : w->shape[1];
    if (w->ndim != 2 || (w_is_out_in ? w->shape[1] : w->shape[0]) != Ci) {
        lt_set_error(ctx, LT_ERR_SHAPE, "%s: x is %s, W is %s: W must be %s with in = x's last dim (%lld)", who,
                     lt_shape_str(x, b1, sizeof b1), lt_shape_str(w, b2, sizeof b2),
                     w_is_out_in ? "[out,in] (torch.nn.Linear layout)" : "[in,out] (Conv1D layout)", (long long)Ci);
        return NULL;
    }
    if (b && (b->n != O)) {
        lt_set_error(ctx, LT_ERR_SHAPE, "%s: W is %s, bias is %s: the bias needs %lld values", who,
                     lt_shape_str(w, b2, sizeof b2), lt_shape_str(b, b3, sizeof b3), (long long)O);
        return NULL;
    }
    for (k = 0; k < x->ndim - 1; k++) shape[k] = x->shape[k];
    shape[x->ndim - 1] = O;
    nd = lt__node_new(ctx, ctx->precision == LT_F32 ? op : op16, x->ndim, shape, x, w, b, 0);
    if (!nd) return NULL;
    LT__AFF_R(nd) = x->n / Ci; LT__AFF_I(nd) = Ci; LT__AFF_O(nd) = O;
    /* x = gelu16(h) whose record keeps h in 16 bits (a compiled plan's, lt__copy16): backward
       recomputes x from that copy while packing (gelu16's table, the same values) instead of
       keeping a second 16-bit copy, of x, as large: the MLP's 4C-wide activation is stored once */
    if (ctx->precision != LT_F32 && x->node && x->node->op == LT__OP(gelu16) && x->node->save[0] &&
        LT__PREC(x->node) == (double)ctx->precision)
        LT__AFF_X_GELU16(nd) = 1.0;
    if (ctx->precision != LT_F32 && !lt__node16(ctx, nd)) return NULL;
    return lt__run(ctx, nd);
}
LTRAIN_DEF lt_tensor *lt_linear(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b) {
    return lt__affine(ctx, LT__OP(linear), LT__OP(linear16), "lt_linear", x, w, b, 1);
}
LTRAIN_DEF lt_tensor *lt_conv1d(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b) {
    return lt__affine(ctx, LT__OP(conv1d), LT__OP(conv1d16), "lt_conv1d", x, w, b, 0);
}


/* ---- @@OPS.matmul16  16-bit precision (lt_set_precision, @@HALF): matmul16, linear16, conv1d16 -- */
/* The products above with both operands rounded to bf16 or fp16 and float32 accumulation:
     forward   y  = round16(op(a)16 · op(b)16 + round16(bias))     as torch.autocast's mm/addmm
     backward  da += dy16 · ...,  db += ... (the operands as in the float32 op, all 16-bit),
               dbias += Σ_rows dy16, with float32 sums added straight into the float32 gradients
   The backward products are not rounded to 16 bits, where torch's bf16 mm rounds its output
   before the float32 gradient receives it: the sums are the same, one rounding fewer (as
   Megatron-LM's fused weight-gradient accumulation into float32 main grads).  dy is rounded as
   the GEMM packs it; the gradient buffer itself is not changed.
   The GEMM (@@GEMM) converts 16-bit operands (and rounds float32 ones) while packing them into
   its float32 panels and rounds each finished block of the output while it is in cache
   (lt__sgemm_ex), so a 16-bit product allocates nothing and runs at the float32 GEMM's speed, or
   (bf16 with AVX512_BF16) on bf16 pairs at up to twice that (bench/precision.md).
   A record keeps a 16-bit copy (save[0] of in[0], save[1] of in[1], n_save = half the element
   count in floats) of each operand its backward reads, unless that operand is a parameter (read
   in place, it outlives the step) or, eager, already 16-bit values (lt__copy16); the op rows
   read 0 (@@OPS), so a compiled plan frees the float32 inputs after the forward.  LT__PREC(nd) =
   the precision (LT_BF16 or LT_F16). */
static lt_dtype lt__prec16(const lt__node *nd) { return lt__prec_of(LT__PREC(nd)); }

/* A parameter (or a view of one) is read in place by backward; anything else is copied. */
static int lt__is_param_data(const lt_tensor *t) { return t->is_param || (t->base && t->base->is_param); }

/* The record's precision, and a 16-bit copy of each operand backward will read: in[0] when in[1]
   gets a gradient and the other way round.  0 with the error on ctx when out of memory. */
static int lt__node16(lt_ctx *ctx, lt__node *nd) {
    int j;
    LT__PREC(nd) = (double)ctx->precision;
    if (!nd->out->requires_grad) return 1;
    for (j = 0; j < 2; j++) {
        lt_tensor *t = nd->in[j], *other = nd->in[1 - j];
        if (lt__is_param_data(t) || !other->requires_grad || (j == 0 && LT__AFF_X_GELU16(nd) == 1.0) || !lt__copy16(ctx, t)) continue;
        if (!lt__save(ctx, nd, j, (t->n + 1) / 2)) return 0;
    }
    return 1;
}

/* An operand: element (i,k) of op(X) in batch q is X[q*stride + i*ld + k], or X[q*stride + k*ld + i]
   when trans.  Values come from f (rounded as they are packed) or from a 16-bit copy h. */
typedef struct {
    const float *f;
    const uint16_t *h;
    int64_t ld, stride;
    int trans, gelu;   /* gelu: as lt__gsrc's */
    int exact;         /* f holds 16-bit values already (lt__exact16): fp16 packs them as float32 */
} lt__mm16_opnd;

static lt__mm16_opnd lt__opnd16(const float *f, const uint16_t *h, int64_t ld, int64_t stride, int trans) {
    lt__mm16_opnd o;
    o.f = f; o.h = h; o.ld = ld; o.stride = stride; o.trans = trans; o.gelu = 0; o.exact = 0;
    return o;
}
/* Operand j of a record: its 16-bit copy if it has one, gelu recomputed from gelu16's copy of its
   input (linear16/conv1d16 with LT__AFF_X_GELU16, below), else its float32 values. */
static lt__mm16_opnd lt__opnd16_of(const lt__node *nd, int j, int64_t ld, int64_t stride, int trans) {
    if (j == 0 && (nd->op == LT__OP(linear16) || nd->op == LT__OP(conv1d16)) && LT__AFF_X_GELU16(nd) == 1.0) {
        lt__mm16_opnd o = lt__opnd16(NULL, (const uint16_t *)(const void *)nd->in[0]->node->save[0], ld, stride, trans);
        o.gelu = 1;
        return o;
    }
    if (!nd->save[j]) {
        lt__mm16_opnd o = lt__opnd16(nd->in[j]->data, NULL, ld, stride, trans);
        o.exact = lt__exact16(nd->in[j], lt__prec_of(nd->op == LT__OP(linear_ce16) ? LT__PREC2(nd) : LT__PREC(nd)));
        return o;
    }
    return lt__opnd16(NULL, (const uint16_t *)(const void *)nd->save[j], ld, stride, trans);
}
static lt__gsrc lt__gsrc16(lt_dtype p, const lt__mm16_opnd *x, int64_t q) {
    lt__gsrc s;
    s.f = x->f ? x->f + q * x->stride : NULL;
    s.h = x->h ? x->h + q * x->stride : NULL;
    /* values that are 16-bit already are packed as the float32 they are, but bf16 keeps p where
       its products run on the pair kernel, which wants bf16 on both sides */
    s.p = x->exact && (p == LT_F16 || !lt__gemm16_pairs(lt__gemm_pick())) ? 0 : (int)p;
    s.gelu = x->gelu;
    return s;
}

/* For each batch q < nb, C_q (M,N) at C + q*sc, row stride ldc:
     acc = 0:  C_q  = round16(op(A_q) · op(B_q) + round16(bias))   (bias (N) or NULL)
     acc = 1:  C_q += op(A_q) · op(B_q)                             (float32, not rounded)
     acc = 2:  C_q  = op(A_q) · op(B_q)                             (float32, not rounded)
   with 16-bit operands and float32 sums over K, in the order of the float32 GEMM. */
static void lt__gemm16(lt_dtype p, int64_t nb, int64_t M, int64_t N, int64_t K, const lt__mm16_opnd *A,
                       const lt__mm16_opnd *B, const float *bias, float *C, int64_t ldc, int64_t sc, int acc) {
    lt__gepi e;
    int64_t q;
    int id = lt__gemm_pick();
    e.p = (int)p;
    e.bias = bias;
    for (q = 0; q < nb; q++)
        lt__sgemm_ex(id, A->trans, B->trans, M, N, K, 1.0f, lt__gsrc16(p, A, q), A->ld, lt__gsrc16(p, B, q), B->ld,
                     acc == 1 ? 1.0f : 0.0f, C + q * sc, ldc, acc ? NULL : &e);
}

/* The 16-bit copies backward reads, made before the product (which may read them). */
static void lt__save16(lt__node *nd) {
    lt_dtype p = lt__prec16(nd);
    int j;
    for (j = 0; j < 2; j++) {
        uint16_t *h = (uint16_t *)(void *)nd->save[j];
        if (!h) continue;
        if (p == LT_F16) lt_f32_to_f16_array(nd->in[j]->data, h, (size_t)nd->in[j]->n);
        else lt_f32_to_bf16_array(nd->in[j]->data, h, (size_t)nd->in[j]->n);
    }
}

/* db += Σ_rows round16(dy), float32 sums (torch sums the bf16 dy its mm reads); threads take
   blocks of 64 columns and add the rows in order, so the sums do not depend on the thread count */
#ifdef LT__X86
/* 64 columns (all present) in 4 registers, rounded 16 at a time as the GEMM's packing rounds */
LT__TARGET("avx512f") static void lt__bias_grad16_avx512(int p, float *acc, const float *gy, int64_t R, int64_t O) {
    __m512 a0 = _mm512_loadu_ps(acc), a1 = _mm512_loadu_ps(acc + 16), a2 = _mm512_loadu_ps(acc + 32);
    __m512 a3 = _mm512_loadu_ps(acc + 48);
    lt__gsrc s;
    int64_t r;
    s.h = NULL; s.p = p; s.gelu = 0;
    for (r = 0; r < R; r++) {
        s.f = gy + r * O;
        a0 = _mm512_add_ps(a0, lt__gsrc16_lanes(&s, 0));
        a1 = _mm512_add_ps(a1, lt__gsrc16_lanes(&s, 16));
        a2 = _mm512_add_ps(a2, lt__gsrc16_lanes(&s, 32));
        a3 = _mm512_add_ps(a3, lt__gsrc16_lanes(&s, 48));
    }
    _mm512_storeu_ps(acc, a0); _mm512_storeu_ps(acc + 16, a1);
    _mm512_storeu_ps(acc + 32, a2); _mm512_storeu_ps(acc + 48, a3);
}
#endif
static void lt__bias_grad16(lt_dtype p, float *gb, const float *gy, int64_t R, int64_t O) {
    int64_t nb = (O + 63) / 64, b;
    int simd = 0;
    (void)simd;
#ifdef LT__X86
    simd = lt__gemm_supported(LT__GEMM_AVX512);
#endif
    LT__OMP(parallel for if (R * O > 65536 && !omp_in_parallel()))
    for (b = 0; b < nb; b++) {
        float s[64], acc[64];
        int64_t j0 = b * 64, w = O - j0 < 64 ? O - j0 : 64, r, j;
        for (j = 0; j < w; j++) acc[j] = gb[j0 + j];
#ifdef LT__X86
        if (simd && w == 64) {
            lt__bias_grad16_avx512((int)p, acc, gy + j0, R, O);
            for (j = 0; j < w; j++) gb[j0 + j] = acc[j];
            continue;
        }
#endif
        for (r = 0; r < R; r++) {
            lt__round16(p, gy + r * O + j0, s, (size_t)w);
            for (j = 0; j < w; j++) acc[j] += s[j];
        }
        for (j = 0; j < w; j++) gb[j0 + j] = acc[j];
    }
}

/* matmul16: as lt__matmul_fwd / _bwd, operands through lt__gemm16. */
static void lt__matmul16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec16(nd);
    int ta = (int)(LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (int)(LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd);
    lt__mm16_opnd a, b;
    lt__save16(nd);
    a = lt__opnd16_of(nd, 0, ta ? M : K, M * K, ta);
    b = lt__opnd16_of(nd, 1, tb ? K : N, shared ? 0 : K * N, tb);
    lt__gemm16(p, nb, M, N, K, &a, &b, NULL, nd->out->data, N, M * N, 0);
}
static void lt__matmul16_bwd(lt__node *nd) {
    lt_dtype p = lt__prec16(nd);
    int ta = (int)(LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (int)(LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd), q;
    int add;
    float *ga = lt__grad_w(nd->in[0], nd->ctx, &add), *gb = lt__grad(nd->in[1], nd->ctx), *gy = nd->out->grad;
    int64_t lda = ta ? M : K, ldb = tb ? K : N, sb = shared ? 0 : K * N;
    lt__mm16_opnd dy = lt__opnd16(gy, NULL, N, M * N, 0), dyt = lt__opnd16(gy, NULL, N, M * N, 1), x, w;
    if (ga) {
        if (!ta) {   /* dA (M,K) += dY · op(B)ᵀ */
            w = lt__opnd16_of(nd, 1, ldb, sb, !tb);
            lt__gemm16(p, nb, M, K, N, &dy, &w, NULL, ga, K, M * K, add ? 1 : 2);
        } else {     /* dAs (K,M) += op(B) · dYᵀ */
            w = lt__opnd16_of(nd, 1, ldb, sb, tb);
            lt__gemm16(p, nb, K, M, N, &w, &dyt, NULL, ga, M, M * K, add ? 1 : 2);
        }
    }
    if (gb && shared && !ta) {   /* one product over all batches' rows (torch folds them into M) */
        x = lt__opnd16_of(nd, 0, K, 0, !tb ? 1 : 0);
        dy.stride = dyt.stride = 0;
        if (!tb) lt__gemm16(p, 1, K, N, nb * M, &x, &dy, NULL, gb, N, 0, 1);    /* dB = Aᵀ dY */
        else lt__gemm16(p, 1, N, K, nb * M, &dyt, &x, NULL, gb, K, 0, 1);       /* dBs = dYᵀ A */
    } else if (gb) {
        for (q = 0; q < (shared ? nb : 1); q++) {   /* shared b, a transposed: one batch at a time */
            int64_t n1 = shared ? 1 : nb;
            lt__mm16_opnd dq = lt__opnd16(gy + q * M * N, NULL, N, M * N, 0), dqt = dq;
            dqt.trans = 1;
            x = lt__opnd16_of(nd, 0, lda, M * K, !tb ? !ta : ta);
            if (x.f) x.f += q * M * K;
            else x.h += q * M * K;
            if (!tb) lt__gemm16(p, n1, K, N, M, &x, &dq, NULL, gb, N, sb, 1);   /* dB = op(A)ᵀ dY */
            else lt__gemm16(p, n1, N, K, M, &dqt, &x, NULL, gb, K, sb, 1);      /* dBs = dYᵀ op(A) */
        }
    }
}

/* linear16 (W [O,I], y = x·Wᵀ) and conv1d16 (W [I,O], y = x·W); arguments as the float32 ops'.
   wt: W is [O,I]. */
static void lt__affine16_fwd(lt__node *nd, int wt) {
    lt_dtype p = lt__prec16(nd);
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    lt__mm16_opnd x, w;
    lt__save16(nd);
    if (LT__AFF_X_GELU16(nd) == 1.0) {   /* gelu16's output, read in place: 16-bit values */
        x = lt__opnd16(nd->in[0]->data, NULL, Ci, 0, 0);
        x.exact = lt__exact16(nd->in[0], p);
    } else x = lt__opnd16_of(nd, 0, Ci, 0, 0);
    w = lt__opnd16_of(nd, 1, wt ? Ci : O, 0, wt);
    lt__gemm16(p, 1, R, O, Ci, &x, &w, nd->in[2] ? nd->in[2]->data : NULL, nd->out->data, O, 0, 0);
}
static void lt__affine16_bwd(lt__node *nd, int wt) {
    lt_dtype p = lt__prec16(nd);
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    int add;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad(nd->in[1], nd->ctx), *gb = lt__grad(nd->in[2], nd->ctx);
    float *gy = nd->out->grad;
    lt__mm16_opnd dy = lt__opnd16(gy, NULL, O, 0, 0), dyt = lt__opnd16(gy, NULL, O, 0, 1), x, w;
    if (gx) {   /* dx (R,I) += dy · W (linear) or dy · Wᵀ (conv1d) */
        w = lt__opnd16_of(nd, 1, wt ? Ci : O, 0, !wt);
        lt__gemm16(p, 1, R, Ci, O, &dy, &w, NULL, gx, Ci, 0, add ? 1 : 2);
    }
    if (gw) {
        if (wt) {   /* dW (O,I) += dyᵀ · x */
            x = lt__opnd16_of(nd, 0, Ci, 0, 0);
            lt__gemm16(p, 1, O, Ci, R, &dyt, &x, NULL, gw, Ci, 0, 1);
        } else {    /* dW (I,O) += xᵀ · dy */
            x = lt__opnd16_of(nd, 0, Ci, 0, 1);
            lt__gemm16(p, 1, Ci, O, R, &x, &dy, NULL, gw, O, 0, 1);
        }
    }
    if (gb) lt__bias_grad16(p, gb, gy, R, O);
}
static void lt__linear16_fwd(lt__node *nd) { lt__affine16_fwd(nd, 1); }
static void lt__linear16_bwd(lt__node *nd) { lt__affine16_bwd(nd, 1); }
static void lt__conv1d16_fwd(lt__node *nd) { lt__affine16_fwd(nd, 0); }
static void lt__conv1d16_bwd(lt__node *nd) { lt__affine16_bwd(nd, 0); }

/* ---- src/08_tape.h ---- */
/* ==== @@TAPE  autograd tape: backward, zero-grad, gradcheck ================================== */
/* Holds: lt_backward (running the tape backwards), recompute segments (activation checkpointing),
   lt_zero_grad, lt_gradcheck.
   Calls: @@CORE, @@TENSOR, @@OPS; the device through ctx->dev. */

/* ---- @@TAPE.recompute  recompute segments: activation checkpointing -------------------------- */
/* As torch.utils.checkpoint: the values made between lt_recompute_begin and lt_recompute_end,
   all but the segment's output, are dropped when it ends and made again in backward by running
   the segment's forward kernels once more, just before its first backward kernel.  Dropout draws
   the same masks again (the segment keeps the RNG state it began with), and the kernels are the
   same, so the gradients are the bits of a step without segments.
   Where the memory goes (eager, on the CPU): inside a segment, values (outputs and saved buffers)
   come from the scratch arena; tape records and tensor headers stay in the arena.  At the end
   the output's values (and its op's saved buffers) are copied into the arena and the scratch
   arena is rewound, so the next segment writes over the same bytes.  The dropped tensors keep
   their addresses (ctx->seg_data) with data NULL, which any op reading one refuses (lt__seg_note).
   In backward nothing else allocates from the scratch arena, so running the segment again into
   those addresses needs no allocation: the scratch arena holds one segment at a time, forward
   and backward.  In a compiled plan (@@COMPILE) the values made again get buffers of their own,
   alive from then to their last backward reader, while the forward's die at their last forward
   reader; the planned block shrinks accordingly.  On a device, or without gradients, segments
   drop nothing. */
static const char *lt__seg_where(const lt_ctx *ctx, const lt__seg *sg) {
    return sg->n ? ctx->seg_nodes[sg->first]->op->name : "(no op yet)";
}

LTRAIN_DEF lt_status lt_recompute_begin(lt_ctx *ctx) {
    lt__seg *sg;
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return ctx->status;
    lt__begin(ctx);
    if (ctx->seg_open) {
        sg = &ctx->segs[ctx->n_segs - 1];
        return lt_set_error(ctx, LT_ERR_STATE, "lt_recompute_begin: segment %d (from op %s%s%s) is still open: "
                            "segments do not nest (hint: lt_recompute_end it first)", ctx->n_segs - 1,
                            lt__seg_where(ctx, sg), sg->n && ctx->seg_nodes[sg->first]->scope ? " in " : "",
                            sg->n && ctx->seg_nodes[sg->first]->scope ? ctx->seg_nodes[sg->first]->scope : "");
    }
    if (ctx->n_segs == ctx->cap_segs) {
        int cap = ctx->cap_segs ? 2 * ctx->cap_segs : 16;
        lt__seg *a = (lt__seg *)LT__REALLOC(ctx->segs, (size_t)cap * sizeof(lt__seg));
        if (!a) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_recompute_begin: out of memory");
        ctx->segs = a;
        ctx->cap_segs = cap;
    }
    sg = &ctx->segs[ctx->n_segs++];
    memset(sg, 0, sizeof *sg);
    sg->first = ctx->n_seg_nodes;
    sg->tape_first = ctx->tape_len;
    sg->rng = ctx->rng;
    ctx->seg_open = 1;
    ctx->to_scratch = ctx->grad_enabled && !ctx->dev && !ctx->dry;
    return LT_OK;
}

LTRAIN_DEF lt_tensor *lt_recompute_end(lt_ctx *ctx, lt_tensor *out) {
    lt__seg *sg;
    lt__node *on = NULL;
    int i, j;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!ctx->seg_open) {
        lt_set_error(ctx, LT_ERR_STATE, "lt_recompute_end: no segment is open (hint: lt_recompute_begin first; "
                     "segments do not nest)");
        return NULL;
    }
    sg = &ctx->segs[ctx->n_segs - 1];
    ctx->seg_open = ctx->to_scratch = 0;
    if (!out) { lt_set_error(ctx, LT_ERR_ARG, "lt_recompute_end: out is NULL"); return NULL; }
    sg->out = out;
    sg->tape_end = ctx->tape_len;
    if (!ctx->grad_enabled || ctx->dev) {   /* nothing to drop: the segment is forgotten */
        sg->n = 0;
        sg->tape_end = sg->tape_first;
        return out;
    }
    for (i = sg->first; i < sg->first + sg->n; i++)
        if (ctx->seg_nodes[i]->out == out) on = ctx->seg_nodes[i];
    /* the output's values and its op's saved buffers move to the arena: they are kept */
    if (out->data && lt__arena_owns(&ctx->scratch, out->data)) {
        float *d = (float *)lt__arena_alloc(ctx, (size_t)out->n * sizeof(float));
        if (!d) return NULL;
        memcpy(d, out->data, (size_t)out->n * sizeof(float));
        out->data = d;
    }
    for (j = 0; on && j < 2; j++)
        if (on->save[j] && lt__arena_owns(&ctx->scratch, on->save[j])) {
            float *d = (float *)lt__arena_alloc(ctx, (size_t)on->n_save[j] * sizeof(float));
            if (!d) return NULL;
            memcpy(d, on->save[j], (size_t)on->n_save[j] * sizeof(float));
            on->save[j] = d;
        }
    for (i = sg->first; i < sg->first + sg->n; i++) {
        lt__node *nd = ctx->seg_nodes[i];
        if (nd == on) continue;
        ctx->seg_data[i] = nd->out->data;
        nd->out->data = NULL;
    }
    sg->scratch_bytes = ctx->scratch.used;
    lt__arena_reset(&ctx->scratch);
    return out;
}

/* Segment s again (backward, eager): its values back at their addresses, made by its forward
   kernels from the RNG state it began with (the output's op is not run: its values were kept). */
static void lt__seg_again(lt_ctx *ctx, const lt__seg *sg) {
    lt_rng keep = ctx->rng;
    int i;
    ctx->scratch.used = sg->scratch_bytes;
    if (ctx->arena.used + ctx->scratch.used > ctx->arena.peak) ctx->arena.peak = ctx->arena.used + ctx->scratch.used;
    ctx->rng = sg->rng;
    for (i = sg->first; i < sg->first + sg->n && !lt_failed(ctx); i++) {
        lt__node *nd = ctx->seg_nodes[i];
        if (nd->out == sg->out) continue;
        nd->out->data = ctx->seg_data[i];
        if (ctx->profiling) {
            double t0 = lt__now();
            LT__FWD(ctx, nd)(nd);
            lt__profile_add(ctx, nd, 0, lt__now() - t0);
        } else {
            LT__FWD(ctx, nd)(nd);
        }
    }
    ctx->rng = keep;
}
/* ... and dropped again once its backward is done (the scratch arena serves the next one) */
static void lt__seg_drop(lt_ctx *ctx, const lt__seg *sg) {
    int i;
    for (i = sg->first; i < sg->first + sg->n; i++)
        if (ctx->seg_nodes[i]->out != sg->out) ctx->seg_nodes[i]->out->data = NULL;
    ctx->scratch.used = 0;
}
/* the last segment before s (from s - 1 down) with records on the tape, or -1 */
static int lt__seg_prev(const lt_ctx *ctx, int s) {
    while (s >= 0 && ctx->segs[s].tape_end <= ctx->segs[s].tape_first) s--;
    return s;
}

/* ---- @@TAPE.backward  backward --------------------------------------------------------------- */
/* Reverse-mode differentiation: seed d(loss)/d(loss) = 1 (or `seed`: the gradient of seed·loss,
   e.g. 1/K for K accumulated micro-batches, or a loss scale), then run the backward kernel of every
   record from last to first.  A record whose output received no gradient is skipped.  Every
   backward kernel adds (+=) into its inputs' gradients, so parameters used twice (the tied
   GPT-2 head) and gradient accumulation over micro-batches just work. */
LTRAIN_DEF lt_status lt_backward(lt_ctx *ctx, lt_tensor *loss) { return lt_backward_scaled(ctx, loss, 1.0f); }

LTRAIN_DEF lt_status lt_backward_scaled(lt_ctx *ctx, lt_tensor *loss, float seed) {
    int k, s, live = -1;
    char b1[64];
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return ctx->status;
    if (!loss) return lt_set_error(ctx, LT_ERR_ARG, "lt_backward: loss is NULL");
    if (!lt__usable(ctx, "lt_backward", "the loss", loss)) return ctx->status;
    if (loss->n != 1)
        return lt_set_error(ctx, LT_ERR_SHAPE, "lt_backward: loss is %s: backward starts from a scalar "
                            "(hint: lt_sum or lt_mean it first)", lt_shape_str(loss, b1, sizeof b1));
    if (ctx->tape_done)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_backward: this tape was used by an earlier lt_backward; "
                            "run the forward pass again");
    if (ctx->seg_open) {
        const lt__seg *sg = &ctx->segs[ctx->n_segs - 1];
        return lt_set_error(ctx, LT_ERR_STATE, "lt_backward: recompute segment %d (from op %s%s%s) was not closed "
                            "(hint: lt_recompute_end)", ctx->n_segs - 1, lt__seg_where(ctx, sg),
                            sg->n && ctx->seg_nodes[sg->first]->scope ? " in " : "",
                            sg->n && ctx->seg_nodes[sg->first]->scope ? ctx->seg_nodes[sg->first]->scope : "");
    }
    if (!loss->data)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_backward: the loss is a value that lt_recompute_end dropped "
                            "(hint: compute it outside the segment, or make it the segment's output)");
    if (ctx->dev && (loss->is_param || (loss->requires_grad && loss->node))) {
        if (ctx->dev->seed(ctx, loss, seed) != LT_OK) return ctx->status;   /* d(loss) += seed on the device */
        if (loss->is_param) { ctx->tape_done = 1; return LT_OK; }
    } else {
    if (loss->is_param) {   /* a parameter used as the loss: d(p)/d(p) = 1, nothing to walk */
        loss->grad[0] += seed;
        ctx->tape_done = 1;
        return LT_OK;
    }
    if (!loss->requires_grad || !loss->node)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_backward: the loss does not depend on any parameter "
                            "(hint: was it computed with gradients disabled?)");
    if (!lt__grad(loss, ctx)) return ctx->status;
    loss->grad[0] += seed;
    }
    s = lt__seg_prev(ctx, ctx->n_segs - 1);
    for (k = ctx->tape_len - 1; k >= 0 && !lt_failed(ctx); k--) {
        lt__node *nd = ctx->tape[k];
        if (s >= 0 && k == ctx->segs[s].tape_end - 1) {   /* a segment's last record: make its values again */
            if (live >= 0) lt__seg_drop(ctx, &ctx->segs[live]);
            lt__seg_again(ctx, &ctx->segs[s]);
            live = s;
            s = lt__seg_prev(ctx, s - 1);
        }
        if (!nd->out->grad) continue;
        if (ctx->profiling) {
            double t0 = lt__now();
            LT__BWD(ctx, nd)(nd);
            LT__PROFILE_SYNC(ctx);
            lt__profile_add(ctx, nd, 1, lt__now() - t0);
        } else {
            LT__BWD(ctx, nd)(nd);
        }
        if (ctx->device == LT_CPU) lt__grad_release(ctx, nd->out);   /* read by no one from here on */
    }
    if (live >= 0) lt__seg_drop(ctx, &ctx->segs[live]);
    ctx->tape_done = 1;
    return ctx->status;
}

LTRAIN_DEF void lt_retain_grad(lt_tensor *t) { if (t) t->retain_grad = 1; }

/* ---- @@TAPE.zero_grad  zero_grad ------------------------------------------------------------- */
/* Zero n floats at x in the loop lt__adamw_update reads them with (blocks of LT__EWB, OpenMP's
   static split; LT__OPT_PAR_MIN there equals LT__EW_PAR), so each thread clears the lines it read
   last in the optimizer's step, which sit in its own cache.  One thread clearing them all would
   take the other threads' lines from their cores first (bench/design.md). */
static void lt__zero_split(float *x, int64_t n) {
    int64_t b;
    LT__OMP(parallel for if (n >= LT__EW_PAR))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, hi = lo + LT__EWB < n ? lo + LT__EWB : n;
        memset(x + lo, 0, (size_t)(hi - lo) * sizeof(float));
    }
}
/* Zero n floats at x as one large memset per thread (large memsets use stores that bypass the caches) */
static void lt__zero_wide(float *x, int64_t n) {
    int64_t k, parts = lt_get_threads();
    LT__OMP(parallel for)
    for (k = 0; k < parts; k++)
        memset(x + n * k / parts, 0, (size_t)(n * (k + 1) / parts - n * k / parts) * sizeof(float));
}
#define LT__ZERO_BIG ((size_t)64 << 20)   /* bytes of gradients above which they leave the caches anyway */
LTRAIN_DEF void lt_zero_grad(lt_ctx *ctx) {
    int i;
    size_t n;
    float *span;
    if (!ctx) return;
    if (ctx->dev) { ctx->dev->zero_grad(ctx); return; }
    /* gradients larger than the caches: the flat span in one piece per thread; smaller ones
       parameter by parameter, as the optimizer read them */
    span = lt_params_grad_span(ctx, &n);
    if (span && n * sizeof(float) >= LT__ZERO_BIG) { lt__zero_wide(span, (int64_t)n); return; }
    for (i = 0; i < ctx->n_params; i++) lt__zero_split(ctx->params[i]->grad, ctx->params[i]->n);
}

LTRAIN_DEF int lt_tape_length(const lt_ctx *ctx) { return ctx ? ctx->tape_len : 0; }

/* Σ out·R in double, without recording (for the finite differences). */
/* ---- @@TAPE.gradcheck  gradcheck: finite differences ----------------------------------------- */
static double lt__probe(lt_ctx *ctx, lt_gradcheck_fn fn, lt_tensor **in, void *user, const float *R) {
    lt_tensor *out;
    double s = 0;
    int64_t i;
    int ge = ctx->grad_enabled;
    lt_reset(ctx);
    ctx->grad_enabled = 0;
    out = fn(ctx, in, user);
    ctx->grad_enabled = ge;
    if (!out) return NAN;
    for (i = 0; i < out->n; i++) s += (double)out->data[i] * R[i];
    return s;
}

LTRAIN_DEF double lt_gradcheck(lt_ctx *ctx, lt_gradcheck_fn fn, lt_tensor **inputs, int n_inputs, void *user,
                               double eps) {
    lt_tensor *out, *r, *loss;
    float *R = NULL, **analytic = NULL;
    double worst = 0;
    int k;
    int64_t i;
    if (!ctx || lt_failed(ctx)) return NAN;
    if (!fn || n_inputs < 0 || (n_inputs > 0 && !inputs)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_gradcheck: %s", !fn ? "fn is NULL" : "the inputs are NULL");
        return NAN;
    }
    if (ctx->device != LT_CPU) {   /* it perturbs parameters on the host, one element at a time */
        lt_set_error(ctx, LT_ERR_STATE, "lt_gradcheck: runs on LT_CPU only (this context is on %s); "
                     "hint: check the op on a CPU context, then compare the devices", lt_device_name(ctx->device));
        return NAN;
    }
    for (k = 0; k < n_inputs; k++)
        if (!inputs[k] || !inputs[k]->is_param) {
            lt_set_error(ctx, LT_ERR_ARG, "lt_gradcheck: input %d is not a parameter (make it with lt_param)", k);
            return NAN;
        }
    lt_reset(ctx);
    out = fn(ctx, inputs, user);
    if (!out) return NAN;
    /* analytic: d/dx Σ out·R for a fixed random R */
    R = (float *)LT__MALLOC((size_t)out->n * sizeof(float));
    analytic = (float **)LT__MALLOC((size_t)n_inputs * sizeof(float *));
    if (analytic) for (k = 0; k < n_inputs; k++) analytic[k] = NULL;
    if (!R || !analytic) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gradcheck: out of memory"); goto done; }
    for (i = 0; i < out->n; i++) R[i] = (float)(lt_rng_uniform(&ctx->rng) * 2.0 - 1.0);
    r = lt_tensor_from(ctx, R, out->ndim, out->shape);
    loss = lt_sum(ctx, lt_mul(ctx, out, r));
    for (k = 0; k < n_inputs; k++) memset(inputs[k]->grad, 0, (size_t)inputs[k]->n * sizeof(float));
    if (lt_backward(ctx, loss) != LT_OK) goto done;
    for (k = 0; k < n_inputs; k++) {
        analytic[k] = (float *)LT__MALLOC((size_t)inputs[k]->n * sizeof(float));
        if (!analytic[k]) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gradcheck: out of memory"); goto done; }
        memcpy(analytic[k], inputs[k]->grad, (size_t)inputs[k]->n * sizeof(float));
    }
    /* numeric: central differences, one element at a time */
    for (k = 0; k < n_inputs; k++)
        for (i = 0; i < inputs[k]->n; i++) {
            float x0 = inputs[k]->data[i];
            double fp, fm, num, a, err;
            inputs[k]->data[i] = (float)(x0 + eps);
            fp = lt__probe(ctx, fn, inputs, user, R);
            inputs[k]->data[i] = (float)(x0 - eps);
            fm = lt__probe(ctx, fn, inputs, user, R);
            inputs[k]->data[i] = x0;
            num = (fp - fm) / (2.0 * eps);
            a = analytic[k][i];
            err = fabs(a - num) / fmax(1.0, fmax(fabs(a), fabs(num)));
            if (!(err <= worst)) worst = err;
        }
done:
    if (analytic) for (k = 0; k < n_inputs; k++) LT__FREE(analytic[k]);
    LT__FREE(analytic);
    LT__FREE(R);
    lt_reset(ctx);
    return lt_failed(ctx) ? NAN : worst;
}


/* ---- src/09_compile.h ---- */
/* ==== @@COMPILE  capture a step once, plan its memory, replay ================================== */
/* Holds: lt_compile (capture a step, plan its buffers by lifetime), lt_plan_run (replay).
   Calls: @@CORE, @@TENSOR, @@OPS, @@TAPE; the device through ctx->dev. */
/* torch.compile's idea in C.  lt_compile runs the user's step function once in a recording
   mode (every op checks its arguments and is recorded, not only those on the tape, but no
   kernel runs), works out from the graph which outputs receive gradients, and turns the
   recording into a plan:
     - a schedule: the forward kernels in order, then the backward kernels in reverse;
     - a lifetime for every buffer (activation, saved value, activation gradient) on a timeline
       0 = copy inputs in, k+1 = forward of op k, N+1 = seed d(loss) = 1, 2N+1-k = backward of op k;
     - one block of memory in which buffers whose lifetimes do not overlap share bytes
       (greedy placement, largest first, at the lowest offset free for the whole lifetime);
       a cross-entropy's logits gradient is written over the logits when nothing reads them later.
   A replay copies the inputs in again (from the same addresses: ids, targets and lt_tensor_from
   data are re-read), runs the kernels and marks each gradient buffer unset just before its
   first write (the kernel zeroes it, or writes it whole: lt__grad_w).  It allocates nothing,
   records nothing and dispatches straight from the plan.
   The kernels are the eager ones in the same order, so a replay gives the eager step's numbers
   to the bit.  The first replay, inside lt_compile, is the validation step: every output is
   checked for NaN/inf, and the op, its shapes and its place are named if one is not finite.  lt_compile starts a new step (arena tensors made before it are gone) and leaves
   the gradients and the RNG as they were.  LTRAIN_COMPILE=0 in the environment turns compiling off (plans run eagerly). */

typedef struct { lt_tensor *t; const float *src; } lt__cap_in;
struct lt__capture {
    lt__node **nodes;            /* every op executed, in order */
    int n, cap;
    lt__cap_in *in;              /* tensors made by lt_tensor_new / lt_tensor_from */
    int n_in, cap_in;
    char *has_grad;              /* op k's output receives a gradient (so its backward runs) */
    int *seg;                    /* op k ran inside recompute segment seg[k] (-1: none; NULL: no segments) */
    char *rc;                    /* op k's forward runs again in backward (all of a segment's ops but its output's) */
};

/* ---- @@COMPILE.capture  capture -------------------------------------------------------------- */
static void lt__capture_input(lt_ctx *ctx, lt_tensor *t, const float *src) {
    struct lt__capture *c = ctx->cap;
    if (c->n_in == c->cap_in) {
        int cap = c->cap_in ? 2 * c->cap_in : 16;
        lt__cap_in *p = (lt__cap_in *)LT__REALLOC(c->in, (size_t)cap * sizeof(lt__cap_in));
        if (!p) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory recording inputs"); return; }
        c->in = p;
        c->cap_in = cap;
    }
    c->in[c->n_in].t = t;
    c->in[c->n_in].src = src;
    c->n_in++;
}

static void lt__capture_node(lt_ctx *ctx, lt__node *nd) {
    struct lt__capture *c = ctx->cap;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 256;
        lt__node **p = (lt__node **)LT__REALLOC(c->nodes, (size_t)cap * sizeof(lt__node *));
        if (!p) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory recording ops"); return; }
        c->nodes = p;
        c->cap = cap;
    }
    c->nodes[c->n++] = nd;
}

/* what lt_compile hands the parts above it while it records (ctx->cap_hooks) */
static const lt__capture_hooks lt__capture_rec = {lt__capture_input, lt__capture_node};

typedef struct {
    size_t bytes, off;
    int first, last;             /* lifetime on the plan's timeline, inclusive */
} lt__pbuf;

struct lt_plan {
    lt_ctx *ctx;
    lt_step_fn fn;
    void *user;
    int eager;                   /* fell back (or compiling is off): run fn + backward each time */
    char note[256];
    int n;                       /* ops */
    lt__node *nodes;             /* plan-owned copies of the records */
    lt_tensor *outs;             /* their outputs */
    int n_in;
    lt_tensor *ins;              /* inputs (copies) */
    const float **in_src;        /* where each input's values come from (NULL: zeros) */
    int loss;                    /* which op's output is the loss */
    int *runs_bwd;               /* op k runs its backward kernel */
    int **zero_at;               /* zero_at[k]: grad buffers (indices into outs) born at op k's backward */
    int *n_zero_at;
    int32_t *ids;                /* every op's indices, one block */
    unsigned char *mem;          /* the planned block */
    size_t mem_bytes, naive_bytes;
    size_t saved_bytes;          /* what the forward leaves for the backward (lt_plan_saved_bytes) */
    int *fuse_end;               /* op k starts a fused group ending at op fuse_end[k] (-1: none) */
    int n_groups, n_fused;       /* fused groups, and the ops in them */
    int n_ev, *ev;               /* the backward phase in order: 2k = op k's backward, 2k+1 = op k's forward run again */
    int n_rc;                    /* ops run again (recompute segments, the memory budget) */
    char *rc;                    /* op k runs again in backward */
    float *(*rcp)[6];            /* op k run again: its data and saved values' homes in forward [0..2], again [3..5] */
    lt_rng *op_rng;              /* op k run again: the RNG as its forward began (dropout draws it again) */
    size_t budget, rc_bytes;     /* the memory budget it was planned under (0: none); bytes made again */
    double rc_flops;             /* the forward FLOPs run again */
    struct lt__cu_graph *graph;  /* on a device: the step recorded as its graph (LT_CUDA: a CUDA graph, @@CUDA) */
    const lt__device *graph_dev; /* ... and that device, which replays and frees it */
};

/* index of t among the recorded outputs (-1: not one) */
static int lt__find_out(struct lt__capture *c, const lt_tensor *t) {
    int k;
    for (k = c->n - 1; k >= 0; k--) if (c->nodes[k]->out == t) return k;
    return -1;
}
static int lt__find_in(struct lt__capture *c, const lt_tensor *t) {
    int k;
    for (k = 0; k < c->n_in; k++) if (c->in[k].t == t) return k;
    return -1;
}

/* Place buffers: largest first, each at the lowest 64-byte-aligned offset that does not overlap a
   placed buffer alive at the same time.  Returns the block size. */
static size_t lt__place(lt__pbuf *b, int nb, int *order, size_t *scratch_off, size_t *scratch_end) {
    size_t total = 0;
    int i, j, k;
    for (i = 0; i < nb; i++) order[i] = i;
    for (i = 1; i < nb; i++) {   /* insertion sort by size, descending (stable) */
        int t = order[i];
        for (j = i; j > 0 && b[order[j - 1]].bytes < b[t].bytes; j--) order[j] = order[j - 1];
        order[j] = t;
    }
    for (i = 0; i < nb; i++) {
        lt__pbuf *x = &b[order[i]];
        int m = 0;
        size_t off = 0;
        for (j = 0; j < i; j++) {   /* placed buffers alive together with x, sorted by offset */
            lt__pbuf *y = &b[order[j]];
            if (y->first <= x->last && x->first <= y->last) {
                for (k = m; k > 0 && scratch_off[k - 1] > y->off; k--) {
                    scratch_off[k] = scratch_off[k - 1];
                    scratch_end[k] = scratch_end[k - 1];
                }
                scratch_off[k] = y->off;
                scratch_end[k] = y->off + y->bytes;
                m++;
            }
        }
        for (k = 0; k < m; k++) {
            if (scratch_off[k] >= off + x->bytes) break;   /* fits in the gap before it */
            if (scratch_end[k] > off) off = (scratch_end[k] + LT__ALIGN - 1) & ~(size_t)(LT__ALIGN - 1);
        }
        x->off = off;
        if (off + x->bytes > total) total = off + x->bytes;
    }
    return total;
}

static lt_plan *lt__plan_alloc(lt_ctx *ctx, lt_step_fn fn, void *user) {
    lt_plan *p = (lt_plan *)LT__MALLOC(sizeof(lt_plan));
    if (!p) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); return NULL; }
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->fn = fn;
    p->user = user;
    return p;
}

LTRAIN_DEF void lt_plan_destroy(lt_plan *p) {
    int k;
    if (!p) return;
    if (p->graph) p->graph_dev->graph_free(p);
    if (p->zero_at) for (k = 0; k < p->n; k++) LT__FREE(p->zero_at[k]);
    LT__FREE(p->zero_at);
    LT__FREE(p->n_zero_at);
    LT__FREE(p->runs_bwd);
    LT__FREE(p->fuse_end);
    LT__FREE(p->ev);
    LT__FREE(p->rcp);
    LT__FREE(p->rc);
    LT__FREE(p->op_rng);
    LT__FREE(p->nodes);
    LT__FREE(p->outs);
    LT__FREE(p->ins);
    LT__FREE((void *)p->in_src);
    LT__FREE(p->ids);
    LT__FREE(p->mem);
    LT__FREE(p);
}

/* ---- @@COMPILE.fusion  fusion: chains of row-wise ops run tile by tile ---------------------------
   Ops such as layernorm, softmax and the elementwise ones (LT__ROW in the op table) treat each
   row of their (R, C) output independently.  A chain of them (in GPT-2: the residual add and the
   layernorm after it) runs eagerly as one sweep over all R rows per op, so each op reads back
   from memory what the one before just wrote.  The plan instead runs the chain on tiles of rows: for a tile, every op of
   the chain in turn, on views of its tensors (and of its per-row saved values) cut to those
   rows, while the tile is still in cache; the tiles are split over the threads.  Every kernel
   computes each row exactly as before, so the numbers are the eager ones to the bit.
   LTRAIN_FUSE=0 in the environment plans without fusion (to compare, or to debug). */
/* Can plan node nd run on row tiles of an (R, C) output?  Its inputs must be either full
   (R, C) tensors (cut with the tile) or at most one row broadcast over all (left whole), and its
   saved values a whole number per row. */
static int lt__row_fusable(const lt__node *nd, int64_t R, int64_t C) {
    int j;
    if (!(nd->op->flags & LT__ROW) || nd->out->n != R * C || nd->out->shape[nd->out->ndim - 1] != C) return 0;
    for (j = 0; j < 3; j++) {
        const lt_tensor *t = nd->in[j];
        if (!t || t->n == R * C) continue;
        if (t->n > C || C % t->n != 0 || j == 0) return 0;
    }
    if (nd->in[0]->shape[nd->in[0]->ndim - 1] != C) return 0;
    for (j = 0; j < 2; j++)
        if (nd->save[j] && nd->n_save[j] % R != 0) return 0;
    return 1;
}

/* Group runs of row-wise ops (at least two, of the same (R, C), each after the first reading an
   earlier one's output).  fuse_end[k] is the group's last op for the op k that starts a group. */
static void lt__plan_fuse(lt_plan *p) {
    int k, N = p->n;
    const char *env = getenv("LTRAIN_FUSE");
    for (k = 0; k < N; k++) p->fuse_end[k] = -1;
    if (env && strcmp(env, "0") == 0) return;
    for (k = 0; k < N;) {
        lt__node *nd = &p->nodes[k];
        int64_t C = nd->out->shape[nd->out->ndim - 1], R = C > 0 ? nd->out->n / C : 0;
        int e = k;
        if (R > 1 && lt__row_fusable(nd, R, C)) {
            while (e + 1 < N && lt__row_fusable(&p->nodes[e + 1], R, C)) {
                const lt__node *nx = &p->nodes[e + 1];
                int j, q, reads = 0;
                for (j = 0; j < 3; j++)
                    for (q = k; q <= e; q++) if (nx->in[j] && nx->in[j] == p->nodes[q].out) reads = 1;
                if (!reads) break;
                e++;
            }
        }
        if (e > k) {
            p->fuse_end[k] = e;
            p->n_groups++;
            p->n_fused += e - k + 1;
        }
        k = e + 1;
    }
}

/* t cut to rows r0 .. r0+rows-1 (a copy of the header; data points into t's) */
static void lt__rows_view(lt_tensor *v, const lt_tensor *t, int64_t R, int64_t r0, int64_t rows) {
    int64_t per = t->n / R;
    *v = *t;
    v->data = t->data + r0 * per;
    v->ndim = 2;
    v->shape[0] = rows;
    v->shape[1] = per;
    v->shape[2] = v->shape[3] = 1;
    v->n = rows * per;
}

/* Run ops k..e on tiles of rows (forward kernels, as they would run on all rows). */
static void lt__run_fused(lt_plan *p, int k, int e) {
    const lt__node *first = &p->nodes[k];
    int64_t C = first->out->shape[first->out->ndim - 1], R = first->out->n / C, t0;
    int64_t tile = C >= 4096 ? 1 : 4096 / C;   /* rows per tile: about 16 KB per tensor */
    LT__OMP(parallel for schedule(static))
    for (t0 = 0; t0 < R; t0 += tile) {
        int64_t rows = t0 + tile <= R ? tile : R - t0;
        int q, j;
        for (q = k; q <= e; q++) {
            const lt__node *nd = &p->nodes[q];
            lt__node cut = *nd;
            lt_tensor out, in[3];
            lt__rows_view(&out, nd->out, R, t0, rows);
            cut.out = &out;
            for (j = 0; j < 3; j++) {
                if (!nd->in[j] || nd->in[j]->n != R * C) continue;   /* a broadcast row: whole */
                lt__rows_view(&in[j], nd->in[j], R, t0, rows);
                cut.in[j] = &in[j];
            }
            for (j = 0; j < 2; j++)
                if (nd->save[j]) {
                    int64_t per = nd->n_save[j] / R;
                    cut.save[j] = nd->save[j] + t0 * per;
                    cut.n_save[j] = rows * per;
                }
            nd->op->fwd(&cut);
        }
    }
}

/* ---- @@COMPILE.plan  the plan: schedule, lifetimes, placement -------------------------------- */
/* The planner's working state (lt__plan_build and its steps): the buffers, and which one holds
   each op's data, gradient and saved values, and each input's data. */
typedef struct {
    lt_plan *p;
    struct lt__capture *c;
    int N, nb;                   /* ops, buffers */
    lt__pbuf *b;                 /* per op data (none for a view of a parameter), grad, two saves; per input data */
    int *dbuf, *gbuf, *ibuf;     /* op k's data and gradient buffers, input k's data buffer (-1: none) */
    int (*sbuf)[2];              /* op k's saved values' buffers (-1: none) */
    char *inplace;               /* op k's gradient is written over its data (lt__plan_dx_over_x) */
    int *galias;                 /* op k's gradient is op galias[k]'s (lt__plan_dx_over_dy), or -1 */
    int64_t n_ids;               /* indices of all ops together */
    char *rc;                    /* op k runs again in backward (c->rc, or none) */
    int *tb, *tr, *top, t_end;   /* when op k's backward runs, when it runs again (-1); which op's backward runs at t */
    int *rbuf;                   /* op k run again: its data buffer then (-1: none) */
    int (*rsbuf)[2];             /* ... and its saved values' */
} lt__planner;

/* the timeline (top of @@COMPILE): forward of op k, backward of op k (lt__plan_timeline) */
#define LT__TF(k) ((k) + 1)
#define LT__TB(k) (s->tb[k])

/* Can the recording be planned?  The loss is a recorded output, no input was written after it
   was made, every op's input is a parameter, a recorded output or a recorded input.  Returns 0
   with p->note set otherwise. */
static int lt__plan_check(lt_plan *p, struct lt__capture *c, lt_tensor *loss) {
    int k, j;
    p->loss = lt__find_out(c, loss);
    if (p->loss < 0) { snprintf(p->note, sizeof p->note, "the loss is not the output of a recorded op"); return 0; }
    /* a replay re-reads inputs from where lt_tensor_from copied them; values written into an
       input after it was made (t->data[i] = ...) would not be replayed */
    for (k = 0; k < c->n_in; k++) {
        lt_tensor *t = c->in[k].t;
        int64_t i;
        int same = 1;
        if (c->in[k].src) same = memcmp(t->data, c->in[k].src, (size_t)t->n * sizeof(float)) == 0;
        else for (i = 0; i < t->n && same; i++) same = t->data[i] == 0.0f;
        if (!same) {
            snprintf(p->note, sizeof p->note, "input %d was changed after it was made (hint: give its values to "
                     "lt_tensor_from, which a replay reads again)", k);
            return 0;
        }
    }
    /* every input of every op must be a parameter, a recorded output or a recorded input */
    for (k = 0; k < c->n; k++)
        for (j = 0; j < 3; j++) {
            lt_tensor *t = c->nodes[k]->in[j];
            if (t && !t->is_param && lt__find_out(c, t) < 0 && lt__find_in(c, t) < 0) {
                snprintf(p->note, sizeof p->note, "input %d of op %d (%s%s%s) was made before lt_compile "
                         "(hint: make inputs inside the step function)", j, k, c->nodes[k]->op->name,
                         c->nodes[k]->scope ? " in " : "", c->nodes[k]->scope ? c->nodes[k]->scope : "");
                return 0;
            }
        }
    return 1;
}

/* The plan's arrays and the planner's, for N ops and c->n_in inputs (0: out of memory, set). */
static int lt__plan_arrays(lt__planner *s) {
    lt_plan *p = s->p;
    int k, N = s->N, n_in = s->c->n_in;
    p->nodes = (lt__node *)LT__MALLOC((size_t)N * sizeof(lt__node));
    p->outs = (lt_tensor *)LT__MALLOC((size_t)N * sizeof(lt_tensor));
    p->ins = (lt_tensor *)LT__MALLOC((size_t)(n_in + 1) * sizeof(lt_tensor));
    p->in_src = (const float **)LT__MALLOC((size_t)(n_in + 1) * sizeof(float *));
    p->runs_bwd = (int *)LT__MALLOC((size_t)N * sizeof(int));
    p->fuse_end = (int *)LT__MALLOC((size_t)N * sizeof(int));
    p->zero_at = (int **)LT__MALLOC((size_t)N * sizeof(int *));
    p->n_zero_at = (int *)LT__MALLOC((size_t)N * sizeof(int));
    if (p->zero_at) for (k = 0; k < N; k++) p->zero_at[k] = NULL;   /* (lt_plan_destroy frees them) */
    /* buffers: per op data (or -1 for a view / param alias), grad, two saves; per input data */
    s->b = (lt__pbuf *)LT__MALLOC((size_t)(7 * N + n_in + 1) * sizeof(lt__pbuf));   /* (+3 per op run again) */
    s->dbuf = (int *)LT__MALLOC((size_t)N * sizeof(int));
    s->gbuf = (int *)LT__MALLOC((size_t)N * sizeof(int));
    s->ibuf = (int *)LT__MALLOC((size_t)(n_in + 1) * sizeof(int));
    s->sbuf = (int(*)[2])LT__MALLOC((size_t)N * sizeof(int[2]));
    s->inplace = (char *)LT__MALLOC((size_t)N + 1);
    s->galias = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    s->rc = (char *)LT__MALLOC((size_t)N + 1);
    s->tb = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    s->tr = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    s->top = (int *)LT__MALLOC(((size_t)3 * N + 4) * sizeof(int));
    s->rbuf = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    s->rsbuf = (int(*)[2])LT__MALLOC(((size_t)N + 1) * sizeof(int[2]));
    p->ev = (int *)LT__MALLOC(((size_t)2 * N + 1) * sizeof(int));
    p->rc = (char *)LT__MALLOC((size_t)N + 1);
    p->rcp = (float *(*)[6])LT__MALLOC(((size_t)N + 1) * sizeof(float *[6]));
    p->op_rng = (lt_rng *)LT__MALLOC(((size_t)N + 1) * sizeof(lt_rng));
    if (!p->nodes || !p->outs || !p->ins || !p->in_src || !p->runs_bwd || !p->fuse_end || !p->zero_at || !p->n_zero_at ||
        !s->b || !s->dbuf || !s->gbuf || !s->ibuf || !s->sbuf || !s->inplace || !s->galias || !s->rc || !s->tb ||
        !s->tr || !s->top || !s->rbuf || !s->rsbuf || !p->ev || !p->rc || !p->rcp || !p->op_rng) {
        lt_set_error(p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory planning %d ops", N);
        return 0;
    }
    for (k = 0; k < N; k++) s->rc[k] = s->c->rc ? s->c->rc[k] : 0;
    return 1;
}

/* Op q runs again (s->rc) at the next time t, after the ops run again whose values it reads. */
static void lt__plan_again(lt__planner *s, int q, int *t) {
    const lt__node *nd = s->c->nodes[q];
    int j, o;
    if (s->tr[q] >= 0) return;
    for (j = 0; j < 3; j++)
        if (nd->in[j] && (o = lt__find_out(s->c, nd->in[j])) >= 0 && s->rc[o]) lt__plan_again(s, o, t);
    s->tr[q] = *t;
    s->top[(*t)++] = -1;
    s->p->ev[s->p->n_ev++] = 2 * q + 1;
    s->p->n_rc++;
}

/* The backward phase's order (p->ev) and its times: after the seed at N+1, op k's backward for
   k = N-1 .. 0, one step of time each; an op to be run again (s->rc) runs just before the first
   backward kernel that reads what it makes (its values, its saved buffers), each at a time of its
   own (s->tr), after the ops run again that it reads.  An op run again that no backward kernel
   needs is not run.  With none, op k's backward is at 2N+1-k. */
static void lt__plan_timeline(lt__planner *s) {
    lt_plan *p = s->p;
    struct lt__capture *c = s->c;
    int k, j, o, N = s->N, t = N + 2;
    p->n_ev = p->n_rc = 0;
    for (k = 0; k < N; k++) s->tr[k] = -1;
    if (p->loss >= 0) s->rc[p->loss] = 0;
    for (k = N - 1; k >= 0; k--) {
        const lt__node *nd = c->nodes[k];
        if (c->has_grad[k]) {
            if (s->rc[k] && ((nd->op->reads & LT__OUT) || nd->save[0] || nd->save[1])) lt__plan_again(s, k, &t);
            /* a 16-bit product of gelu16's output reads gelu16's saved copy of its input (lt__opnd16_of) */
            if ((nd->op == LT__OP(linear16) || nd->op == LT__OP(conv1d16)) && LT__AFF_X_GELU16(nd) == 1.0 &&
                (o = lt__find_out(c, nd->in[0])) >= 0 && s->rc[o])
                lt__plan_again(s, o, &t);
            for (j = 0; j < 3 && (nd->op->reads & LT__IN); j++)
                if (nd->in[j] && (o = lt__find_out(c, nd->in[j])) >= 0 && s->rc[o]) lt__plan_again(s, o, &t);
        }
        s->tb[k] = t;
        s->top[t++] = k;
        p->ev[p->n_ev++] = 2 * k;
    }
    for (k = 0; k < N; k++) if (s->tr[k] < 0) s->rc[k] = 0;   /* not needed again: planned as any other op */
    s->t_end = t;
}

/* Copies of the records and tensors (inputs remapped to the copies), and a buffer for every
   input, op output (a view shares its input's), gradient and saved value, alive where it is
   written; gradients get their first write from their uses (lt__plan_lifetimes). */
static void lt__plan_records(lt__planner *s) {
    lt_plan *p = s->p;
    struct lt__capture *c = s->c;
    lt__pbuf *b = s->b;
    int k, j, N = s->N, nb = 0, *dbuf = s->dbuf, *gbuf = s->gbuf, *ibuf = s->ibuf, (*sbuf)[2] = s->sbuf;
    for (k = 0; k < c->n_in; k++) {
        p->ins[k] = *c->in[k].t;
        p->in_src[k] = c->in[k].src;
        b[nb].bytes = (size_t)p->ins[k].n * sizeof(float);
        b[nb].first = 0;
        b[nb].last = 0;
        ibuf[k] = nb++;
    }
    for (k = 0; k < N; k++) {
        lt__node *src = c->nodes[k], *nd = &p->nodes[k];
        *nd = *src;
        p->outs[k] = *src->out;
        p->outs[k].node = nd;
        p->outs[k].grad = NULL;
        nd->out = &p->outs[k];
        p->runs_bwd[k] = c->has_grad[k];
        s->n_ids += src->ids ? src->n_ids : 0;
        for (j = 0; j < 3; j++) {
            lt_tensor *t = src->in[j];
            int o, q;
            if (!t || t->is_param) continue;
            o = lt__find_out(c, t);
            if (o >= 0) nd->in[j] = &p->outs[o];
            else { q = lt__find_in(c, t); nd->in[j] = &p->ins[q]; }
        }
        /* data: a view (reshape) shares its input's buffer; a param's view has none */
        dbuf[k] = -1;
        if (src->op->flags & LT__VIEW) {
            lt_tensor *t = src->in[0];
            int o = lt__find_out(c, t), q = o < 0 ? lt__find_in(c, t) : -1;
            dbuf[k] = o >= 0 ? dbuf[o] : q >= 0 ? ibuf[q] : -1;
            if (dbuf[k] >= 0) { if (LT__TF(k) > b[dbuf[k]].last) b[dbuf[k]].last = LT__TF(k); }
            if (s->rc[k]) s->rbuf[k] = o >= 0 && s->rc[o] ? s->rbuf[o] : dbuf[k];   /* (a view again of the value again) */
        } else {
            b[nb].bytes = (size_t)p->outs[k].n * sizeof(float);
            b[nb].first = b[nb].last = LT__TF(k);
            dbuf[k] = nb++;
            if (s->rc[k]) {   /* made again: a second buffer, from then on */
                b[nb].bytes = b[nb - 1].bytes;
                b[nb].first = b[nb].last = s->tr[k];
                s->rbuf[k] = nb++;
            }
        }
        gbuf[k] = -1;
        if (p->runs_bwd[k]) {
            b[nb].bytes = (size_t)p->outs[k].n * sizeof(float);
            b[nb].first = INT_MAX;
            b[nb].last = LT__TB(k);
            gbuf[k] = nb++;
        }
        for (j = 0; j < 2; j++) {
            sbuf[k][j] = -1;
            if (!src->save[j]) continue;
            b[nb].bytes = (size_t)src->n_save[j] * sizeof(float);
            b[nb].first = LT__TF(k);
            b[nb].last = p->runs_bwd[k] && !s->rc[k] ? LT__TB(k) : LT__TF(k);
            sbuf[k][j] = nb++;
            if (s->rc[k]) {   /* saved again when the op runs again: backward reads that one */
                b[nb].bytes = b[nb - 1].bytes;
                b[nb].first = s->tr[k];
                b[nb].last = p->runs_bwd[k] ? LT__TB(k) : s->tr[k];
                s->rsbuf[k][j] = nb++;
            }
        }
    }
    s->nb = nb;
}

/* Lifetimes from the uses: a value lives until its last reader (a backward kernel reads what its
   row's LT__IN / LT__OUT say), a gradient from its first write.  A value made again in backward
   (s->rc) is read there from its second buffer, by its segment's ops run again and their backward;
   its first buffer serves the forward only.  An op run again reads values from outside its
   segment (the segment's input: the value kept) at that time too. */
#define LT__LIVE(q, t) do { if ((q) >= 0 && (t) > b[q].last) b[q].last = (t); } while (0)
static void lt__plan_lifetimes(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, j, N = s->N, *dbuf = s->dbuf, *gbuf = s->gbuf, *ibuf = s->ibuf;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        if ((nd->op->reads & LT__OUT) && p->runs_bwd[k]) LT__LIVE(s->rc[k] ? s->rbuf[k] : dbuf[k], LT__TB(k));
        for (j = 0; j < 3; j++) {
            lt_tensor *t = nd->in[j];
            int src_op, db, rb;
            if (!t || t->is_param) continue;
            src_op = t->node ? (int)(t->node - p->nodes) : -1;
            db = src_op >= 0 ? dbuf[src_op] : ibuf[t - p->ins];
            rb = src_op >= 0 && s->rc[src_op] ? s->rbuf[src_op] : db;   /* what backward finds in t */
            LT__LIVE(db, LT__TF(k));
            if (s->rc[k]) LT__LIVE(rb, s->tr[k]);
            if (p->runs_bwd[k] && (nd->op->reads & LT__IN)) LT__LIVE(rb, LT__TB(k));
            /* the input's gradient is first written by the last consumer's backward (it runs first) */
            if (src_op >= 0 && gbuf[src_op] >= 0 && p->runs_bwd[k] && t->requires_grad &&
                LT__TB(k) < b[gbuf[src_op]].first)
                b[gbuf[src_op]].first = LT__TB(k);
        }
    }
}

/* in place, as eager's lt__add_over: an add (LT__Y_OVER_X) of two same-shape tensors writes its
   sum over an input (the second first: the residual branch) whose buffer nobody reads after it.
   y[i] = a[i] + b[i] allows y == b, also row by row in a fused group.  The writes land on the
   lines just read, where a fresh buffer would be cold (bench/design.md).  Views of the add share
   the merged buffer too. */
static void lt__plan_y_over_x(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, j, N = s->N, *dbuf = s->dbuf;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int d = dbuf[k], m;
        if (!(nd->op->flags & LT__Y_OVER_X) || d < 0 || !nd->in[0] || !nd->in[1] || nd->in[0] == nd->in[1] ||
            nd->in[0]->n != nd->out->n || nd->in[1]->n != nd->out->n)
            continue;
        for (j = 1; j >= 0; j--) {
            lt_tensor *t = nd->in[j];
            int e = t->node ? dbuf[t->node - p->nodes] : -1;
            if (e < 0 || e == d || b[e].last != LT__TF(k) || b[e].bytes != b[d].bytes) continue;
            if (b[d].last > b[e].last) b[e].last = b[d].last;
            for (m = k; m < N; m++)
                if (dbuf[m] == d) dbuf[m] = e;
            p->naive_bytes += b[d].bytes;   /* ("all buffers" still counts it) */
            b[d].bytes = 0;
            b[d].first = b[d].last = 0;
            break;
        }
    }
}

/* the activations the backward pass must keep: every buffer written by the forward (or copied
   in) and still read by a backward kernel, i.e. alive across the seed at N+1 (gradient buffers
   are born at N+1 or later), and the index arrays (ids, targets) of ops whose backward runs.
   Computed before the loss's own value is kept alive for the caller (4 bytes, not counted).
   These are what these kernels keep, not a minimum that recomputation could reach: e.g. the
   float32 head keeps its logits (B*T*V floats), which the cross-entropy backward reads.
   Then the loss's lifetimes (seeded, read after the replay) and those of gradients no kernel writes. */
static void lt__plan_saved(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, N = s->N, *dbuf = s->dbuf, *gbuf = s->gbuf;
    for (k = 0; k < s->nb; k++)
        if (b[k].first <= N && b[k].last > N + 1) p->saved_bytes += b[k].bytes;
    for (k = 0; k < N; k++)
        if (p->runs_bwd[k] && s->c->nodes[k]->ids) p->saved_bytes += (size_t)s->c->nodes[k]->n_ids * sizeof(int32_t);
    if (gbuf[p->loss] >= 0) b[gbuf[p->loss]].first = N + 1;   /* the seed */
    if (dbuf[p->loss] >= 0) b[dbuf[p->loss]].last = s->t_end; /* read after the replay */
    for (k = 0; k < N; k++)
        if (gbuf[k] >= 0 && b[gbuf[k]].first == INT_MAX) b[gbuf[k]].first = b[gbuf[k]].last; /* never written */
}

/* in place: a cross-entropy's backward (LT__DX_OVER_X) may write d(logits) over the logits (rows
   are independent) when it is the first to write that gradient and nothing reads the logits
   after it.  The gradient then needs no buffer (R·V floats less at the peak: the largest
   buffer of a GPT step with a big vocabulary) and no zeroing: the kernel writes 0 + g·p,
   the bits of += into a zeroed buffer. */
static void lt__plan_dx_over_x(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, N = s->N, *dbuf = s->dbuf, *gbuf = s->gbuf;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int o = nd->in[0] && nd->in[0]->node ? (int)(nd->in[0]->node - p->nodes) : -1;
        if (!(nd->op->flags & LT__DX_OVER_X) || !p->runs_bwd[k] || o < 0 || gbuf[o] < 0 || dbuf[o] < 0 ||
            (p->nodes[o].op->flags & LT__VIEW) || s->rc[o] || s->rc[k] || b[gbuf[o]].first != LT__TB(k) ||
            b[dbuf[o]].last != LT__TB(k))
            continue;
        b[dbuf[o]].last = b[gbuf[o]].last;
        p->naive_bytes += b[gbuf[o]].bytes;   /* (still counted in "all buffers": eager mode has it) */
        b[gbuf[o]].bytes = 0;
        s->inplace[o] = 1;
    }
}

/* in place, as eager's lt__grad_adopt: add (for its first input), gelu and gelu16 (LT__DX_OVER_DY)
   write their input's gradient over their output's (their kernels allow gx == gy) when they are
   the first to write it and nothing reads the output's gradient after them.  One buffer fewer,
   and the writes land on the lines just read, as in eager mode (bench/design.md).  galias[o] = k:
   o's gradient is k's (lt__plan_homes). */
static void lt__plan_dx_over_dy(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, N = s->N, *gbuf = s->gbuf;
    char *inplace = s->inplace;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int o = nd->in[0] && nd->in[0]->node ? (int)(nd->in[0]->node - p->nodes) : -1;
        if (!(nd->op->flags & LT__DX_OVER_DY) || !p->runs_bwd[k] ||
            o < 0 || k == p->loss || gbuf[o] < 0 || gbuf[k] < 0 || inplace[o] || inplace[k] ||
            (p->nodes[o].op->flags & LT__VIEW) || nd->in[0]->n != nd->out->n || nd->in[1] == nd->in[0] ||
            p->outs[k].retain_grad || b[gbuf[o]].first != LT__TB(k) || b[gbuf[k]].last != LT__TB(k))
            continue;
        if (b[gbuf[o]].last > b[gbuf[k]].last) b[gbuf[k]].last = b[gbuf[o]].last;
        p->naive_bytes += b[gbuf[o]].bytes;   /* (counted in "all buffers": as the logits above) */
        b[gbuf[o]].bytes = 0;
        s->galias[o] = k;
    }
}

/* zero each gradient buffer just before its first write: p->zero_at (0: out of memory, set) */
static int lt__plan_zero_at(lt__planner *s) {
    lt_plan *p = s->p;
    int k, N = s->N;
    for (k = 0; k < N; k++) {
        int at, *z;
        if (s->gbuf[k] < 0 || k == p->loss || s->inplace[k]) continue;
        at = s->b[s->gbuf[k]].first;    /* the op whose backward writes it first */
        if (at <= N + 1 || at >= s->t_end || (at = s->top[at]) < 0) continue;
        z = (int *)LT__REALLOC(p->zero_at[at], (size_t)(p->n_zero_at[at] + 1) * sizeof(int));
        if (!z) return lt_set_error(p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory"), 0;
        z[p->n_zero_at[at]++] = k;
        p->zero_at[at] = z;
    }
    return 1;
}

/* Place the buffers in one block (lt__place), then point every tensor, saved buffer and index
   array at its home (0: out of memory, set). */
static int lt__plan_homes(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, j, N = s->N, nb = s->nb, *order, ok = 0;
    size_t *s1, *s2;
    order = (int *)LT__MALLOC((size_t)nb * sizeof(int));
    s1 = (size_t *)LT__MALLOC((size_t)(nb + 1) * sizeof(size_t));
    s2 = (size_t *)LT__MALLOC((size_t)(nb + 1) * sizeof(size_t));
    p->ids = (int32_t *)LT__MALLOC((size_t)(s->n_ids + 1) * sizeof(int32_t));
    if (!order || !s1 || !s2 || !p->ids) { lt_set_error(p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); goto done; }
    for (k = 0; k < nb; k++) p->naive_bytes += b[k].bytes;
    p->mem_bytes = lt__place(b, nb, order, s1, s2);
    p->mem = (unsigned char *)LT__MALLOC(p->mem_bytes + LT__ALIGN);
    if (!p->mem) {
        lt_set_error(p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory for the planned %zu bytes", p->mem_bytes);
        goto done;
    }
    {
        unsigned char *base = p->mem + (LT__ALIGN - ((uintptr_t)p->mem % LT__ALIGN)) % LT__ALIGN;
        int32_t *ids = p->ids;
        for (k = 0; k < s->c->n_in; k++) p->ins[k].data = (float *)(base + b[s->ibuf[k]].off);
        for (k = 0; k < N; k++) {
            lt__node *nd = &p->nodes[k];
            if (s->dbuf[k] >= 0) p->outs[k].data = (float *)(base + b[s->dbuf[k]].off);
            else p->outs[k].data = nd->in[0]->data;   /* a view of a parameter */
            if (s->gbuf[k] >= 0) p->outs[k].grad = s->inplace[k] ? p->outs[k].data : (float *)(base + b[s->gbuf[k]].off);
            for (j = 0; j < 2; j++)
                if (s->sbuf[k][j] >= 0) nd->save[j] = (float *)(base + b[s->sbuf[k][j]].off);
            for (j = 0; j < 6; j++) p->rcp[k][j] = NULL;
            p->rc[k] = s->rc[k];
            if (s->rc[k] && !(nd->op->flags & LT__VIEW)) {   /* (a view's kernel points it itself) */
                p->rcp[k][0] = p->outs[k].data;
                p->rcp[k][3] = (float *)(base + b[s->rbuf[k]].off);
                for (j = 0; j < 2; j++) {
                    p->rcp[k][1 + j] = nd->save[j];
                    if (s->rsbuf[k][j] >= 0) p->rcp[k][4 + j] = (float *)(base + b[s->rsbuf[k][j]].off);
                }
            }
            if (nd->ids) {
                memcpy(ids, nd->ids, (size_t)nd->n_ids * sizeof(int32_t));
                nd->ids = ids;
                ids += nd->n_ids;
            }
        }
        for (k = N - 1; k >= 0; k--)   /* (galias[k] > k: resolved first, chains included) */
            if (s->galias[k] >= 0) p->outs[k].grad = p->outs[s->galias[k]].grad;
    }
    ok = 1;
done:
    LT__FREE(order); LT__FREE(s1); LT__FREE(s2);
    return ok;
}
#undef LT__TF
#undef LT__TB
#undef LT__LIVE

/* A fused group (lt__plan_fuse) runs its ops tile by tile, the tiles spread over the threads, so
   one op's writes meet another's reads in any order: every buffer an op of the group reads or
   writes in forward lives across the whole group. */
static void lt__plan_groups_live(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, q, j, e;
    for (k = 0; k < s->N; k++) {
        if ((e = p->fuse_end[k]) <= k) continue;
        for (q = k; q <= e; q++) {
            const lt__node *nd = &p->nodes[q];
            int u[6];
            u[0] = s->dbuf[q]; u[1] = s->sbuf[q][0]; u[2] = s->sbuf[q][1];
            for (j = 0; j < 3; j++) {
                const lt_tensor *t = nd->in[j];
                u[3 + j] = !t || t->is_param ? -1 : t->node ? s->dbuf[t->node - p->nodes] : s->ibuf[t - p->ins];
            }
            for (j = 0; j < 6; j++) {
                if (u[j] < 0 || !b[u[j]].bytes) continue;
                if (b[u[j]].first > k + 1) b[u[j]].first = k + 1;   /* (forward times: op q at q + 1) */
                if (b[u[j]].last < e + 1) b[u[j]].last = e + 1;
            }
        }
        k = e;
    }
}

/* One planning of the recording, with the ops s->rc marks run again: the order of the backward
   phase, the buffers and their lifetimes, the write-overs the op table allows. */
static void lt__plan_steps(lt__planner *s) {
    int k;
    for (k = 0; k < s->N; k++) {
        s->p->n_zero_at[k] = 0; s->inplace[k] = 0; s->galias[k] = -1;
        s->rbuf[k] = s->rsbuf[k][0] = s->rsbuf[k][1] = -1;
    }
    s->p->naive_bytes = s->p->saved_bytes = 0;
    s->n_ids = 0;
    lt__plan_timeline(s);
    lt__plan_records(s);
    lt__plan_lifetimes(s);
    lt__plan_y_over_x(s);
    lt__plan_saved(s);
    lt__plan_dx_over_x(s);
    lt__plan_dx_over_dy(s);
    s->p->n_groups = s->p->n_fused = 0;
    lt__plan_fuse(s->p);
    lt__plan_groups_live(s);
}
/* ... and the size of its block as lt__plan_homes will place it (0: out of memory, set) */
static size_t lt__plan_size(lt__planner *s) {
    int *order = (int *)LT__MALLOC((size_t)(s->nb + 1) * sizeof(int));
    size_t *s1 = (size_t *)LT__MALLOC((size_t)(s->nb + 1) * sizeof(size_t));
    size_t *s2 = (size_t *)LT__MALLOC((size_t)(s->nb + 1) * sizeof(size_t)), total = 0;
    if (!order || !s1 || !s2) lt_set_error(s->p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory");
    else total = lt__place(s->b, s->nb, order, s1, s2);
    LT__FREE(order); LT__FREE(s1); LT__FREE(s2);
    return total;
}

/* The forward FLOPs of a record (the memory budget's cost of running it again): products
   2·(output elements)·(inner size); attention 4·(output elements)·T; layernorm, gelu and softmax
   a handful per element; the rest one per element. */
static double lt__op_flops(const lt__node *nd) {
    const lt__opdef *op = nd->op;
    const lt_tensor *x = nd->in[0], *y = nd->out;
    double e = (double)y->n;
    if (op == LT__OP(matmul) || op == LT__OP(linear) || op == LT__OP(conv1d) || op == LT__OP(matmul16) ||
        op == LT__OP(linear16) || op == LT__OP(conv1d16))
        return 2.0 * e * (double)x->shape[x->ndim - 1];
    if (op == LT__OP(attention) || op == LT__OP(attention16)) return 4.0 * e * (double)x->shape[x->ndim - 2];
    if (op == LT__OP(linear_ce16)) return 2.0 * (double)x->n * (double)nd->in[1]->shape[0];
    if (op == LT__OP(layernorm) || op == LT__OP(layernorm16)) return 8.0 * e;
    if (op == LT__OP(gelu) || op == LT__OP(gelu_erf) || op == LT__OP(gelu16)) return 20.0 * e;
    if (op == LT__OP(softmax) || op == LT__OP(log_softmax) || op == LT__OP(cross_entropy)) return 10.0 * (double)x->n;
    return e;
}

/* The bytes op k's values and saved buffers keep from the forward for the backward (alive across
   the seed at N+1) in the plan as it stands */
static size_t lt__plan_kept(const lt__planner *s, int k) {
    const lt__pbuf *b = s->b;
    size_t n = 0;
    int j, N = s->N, q[3];
    q[0] = s->dbuf[k]; q[1] = s->sbuf[k][0]; q[2] = s->sbuf[k][1];
    for (j = 0; j < 3; j++)
        if (q[j] >= 0 && b[q[j]].first <= N && b[q[j]].last > N + 1) n += b[q[j]].bytes;
    return n;
}

/* Under a memory budget (lt_set_memory_budget): which ops to run again in backward.  A candidate
   is an op that keeps values for the backward; candidates are tried in order of FLOPs per byte
   kept, cheapest first (pointwise ops and norms before products), each planned whole and kept
   only if the block shrinks (running an op again can keep its inputs longer: a residual add's
   recomputation needs the whole chain of adds before it), until the block fits; if it does not,
   the rest are added one by one and the smallest plan on the way is kept (ops that pay only
   together).  When every
   candidate was tried and it does not: an error naming the least block found.  (One planning
   per candidate tried: compiling under a tight budget takes longer.) */
static int lt__plan_budget(lt__planner *s) {
    lt_plan *p = s->p;
    lt_ctx *ctx = p->ctx;
    int k, j, n = 0, N = s->N, *cand;
    double *cost;
    char *best;
    size_t base = lt__plan_size(s), want, least;
    want = ctx->budget ? ctx->budget : (size_t)(ctx->budget_frac * (double)base);
    p->budget = want;
    cand = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    cost = (double *)LT__MALLOC(((size_t)N + 1) * sizeof(double));
    best = (char *)LT__MALLOC((size_t)N + 1);
    if (!cand || !cost || !best) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); goto done; }
    if (!base || base <= want) goto done;
    for (k = 0; k < N; k++) {
        const lt__node *nd = s->c->nodes[k];
        size_t kept = lt__plan_kept(s, k);
        if (s->rc[k] || k == p->loss || (nd->op->flags & LT__VIEW) || !kept) continue;
        cost[k] = lt__op_flops(nd) / (double)kept;
        for (j = n; j > 0 && cost[cand[j - 1]] > cost[k]; j--) cand[j] = cand[j - 1];   /* (stable) */
        cand[j] = k;
        n++;
    }
    least = base;
    for (j = 0; j < n && least > want && !lt_failed(ctx); j++) {   /* one at a time: kept where it helps */
        size_t size;
        s->rc[cand[j]] = 1;
        lt__plan_steps(s);
        size = lt__plan_size(s);
        if (size < least) least = size;
        else s->rc[cand[j]] = 0;
    }
    if (least > want && best) {   /* again, the rest together: ops that help only with others (a 16-bit
                                     product and the op whose output it reads) */
        memcpy(best, s->rc, (size_t)N);
        for (j = 0; j < n && least > want && !lt_failed(ctx); j++) {
            size_t size;
            if (s->rc[cand[j]]) continue;
            s->rc[cand[j]] = 1;
            lt__plan_steps(s);
            size = lt__plan_size(s);
            if (size < least) { least = size; memcpy(best, s->rc, (size_t)N); }
        }
        memcpy(s->rc, best, (size_t)N);
    }
    lt__plan_steps(s);
    if (!lt_failed(ctx) && least > want)
        lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the memory budget of %.2f MB is below the least this step can "
                     "be planned in: %.2f MB (with %d ops run again in backward; %.2f MB with none)",
                     (double)want / 1048576.0, (double)least / 1048576.0, p->n_rc, (double)base / 1048576.0);
done:
    LT__FREE(cand); LT__FREE(cost); LT__FREE(best);
    return !lt_failed(ctx);
}

/* Build the plan from a recording and its gradient marks (lt__mark_grads), step by step: the
   buffers and their lifetimes, the write-overs the op table allows (lt__plan_steps), the ops run
   again under a memory budget, the zeroing, the placement, the fused groups.  Returns 0 with
   p->note set when the recording cannot be planned (or with the error set). */
static int lt__plan_build(lt_plan *p, struct lt__capture *c, lt_tensor *loss) {
    lt__planner s;
    int k, j, ok = 0;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.c = c;
    s.N = p->n = c->n;
    p->n_in = c->n_in;
    if (!lt__plan_check(p, c, loss)) return 0;
    if (lt__plan_arrays(&s)) {
        lt__plan_steps(&s);
        if ((!p->ctx->budget && !(p->ctx->budget_frac > 0)) || lt__plan_budget(&s)) {
            for (k = 0; k < s.N; k++)   /* what runs again: bytes, FLOPs */
                if (s.rc[k] && !(c->nodes[k]->op->flags & LT__VIEW)) {
                    p->rc_bytes += s.b[s.rbuf[k]].bytes;
                    for (j = 0; j < 2; j++) if (s.rsbuf[k][j] >= 0) p->rc_bytes += s.b[s.rsbuf[k][j]].bytes;
                    p->rc_flops += lt__op_flops(c->nodes[k]);
                }
            if (lt__plan_zero_at(&s) && lt__plan_homes(&s)) ok = 1;
        }
    }
    LT__FREE(s.b); LT__FREE(s.dbuf); LT__FREE(s.gbuf); LT__FREE(s.ibuf); LT__FREE(s.sbuf);
    LT__FREE(s.inplace); LT__FREE(s.galias);
    LT__FREE(s.rc); LT__FREE(s.tb); LT__FREE(s.tr); LT__FREE(s.top); LT__FREE(s.rbuf); LT__FREE(s.rsbuf);
    return ok;
}

/* Is every value of t finite?  (validation before compiling) */
static int lt__all_finite(const float *x, int64_t n) {
    int64_t i;
    for (i = 0; i < n; i++) if (!isfinite(x[i])) return 0;
    return 1;
}

/* Which recorded outputs receive a gradient, found from the graph alone, as lt_backward would:
   the loss does, and so does every input that requires a gradient of an op whose output does
   (its backward kernel adds into that input's gradient).  Walk the recording backwards. */
static int lt__mark_grads(lt_ctx *ctx, struct lt__capture *c, const lt_tensor *loss) {
    int k, j, o;
    c->has_grad = (char *)LT__MALLOC((size_t)c->n + 1);
    if (!c->has_grad) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"), 0;
    memset(c->has_grad, 0, (size_t)c->n + 1);
    o = lt__find_out(c, loss);
    if (o < 0 || !loss->requires_grad) return 1;   /* lt__plan_build reports it */
    c->has_grad[o] = 1;
    for (k = c->n - 1; k >= 0; k--) {
        if (!c->has_grad[k]) continue;
        for (j = 0; j < 3; j++) {
            lt_tensor *t = c->nodes[k]->in[j];
            if (!t || t->is_param || !t->requires_grad) continue;
            o = lt__find_out(c, t);
            if (o >= 0) c->has_grad[o] = 1;
        }
    }
    return 1;
}

/* Which recorded op ran inside which recompute segment (c->seg), and which run again in backward
   (c->rc): all of a segment's ops but the one that made its output (lt_recompute_end).  The
   segments noted their ops in the order they ran, which is the recording's.  0: a segment left
   open, a loss dropped, out of memory (the error set). */
static int lt__capture_segs(lt_ctx *ctx, struct lt__capture *c, const lt_tensor *loss) {
    int s, i, k = 0;
    if (ctx->seg_open)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_compile: the step function left a recompute segment open "
                            "(hint: every lt_recompute_begin needs its lt_recompute_end)"), 0;
    if (!loss->data)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_compile: the loss is a value that lt_recompute_end dropped "
                            "(hint: compute the loss outside the segment, or make it the segment's output)"), 0;
    if (!ctx->n_segs || !c->n) return 1;
    c->seg = (int *)LT__MALLOC((size_t)c->n * sizeof(int));
    c->rc = (char *)LT__MALLOC((size_t)c->n);
    if (!c->seg || !c->rc) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"), 0;
    for (k = 0; k < c->n; k++) { c->seg[k] = -1; c->rc[k] = 0; }
    k = 0;
    for (s = 0; s < ctx->n_segs; s++) {
        const lt__seg *sg = &ctx->segs[s];
        for (i = sg->first; i < sg->first + sg->n; i++) {
            while (k < c->n && c->nodes[k] != ctx->seg_nodes[i]) k++;
            if (k == c->n) return 1;
            c->seg[k] = s;
            c->rc[k] = ctx->seg_nodes[i]->out != sg->out;
        }
    }
    return 1;
}

/* ---- @@COMPILE.replay  replay ---------------------------------------------------------------- */
/* One replay: the inputs copied in again, every forward kernel, the seed, every backward kernel
   (each gradient buffer marked unset just before its first write).  `check`: lt_compile's validation
   replay, which stops at the first op whose output is not finite and names it. */
/* One op's CPU kernel, forward or backward, timed when prof (lt_set_profiling) */
static void lt__plan_kernel(lt_ctx *ctx, lt__node *nd, int bwd, int prof) {
    double t0 = prof ? lt__now() : 0.0;
    (bwd ? nd->op->bwd : nd->op->fwd)(nd);
    if (prof) lt__profile_add(ctx, nd, bwd, lt__now() - t0);
}
static lt_status lt__plan_replay(lt_plan *p, float seed, float *loss_out, int check) {
    lt_ctx *ctx = p->ctx;
    int i, k, j, N = p->n, prof = ctx->profiling && !check;   /* (lt_set_profiling: lt_compile's check uncounted) */
    for (k = 0; k < p->n_in; k++) {
        lt_tensor *t = &p->ins[k];
        if (p->in_src[k]) memcpy(t->data, p->in_src[k], (size_t)t->n * sizeof(float));
        else memset(t->data, 0, (size_t)t->n * sizeof(float));
    }
    for (k = 0; k < N && p->n_rc; k++)   /* ops run again in backward: their forward homes */
        if (p->rcp[k][0]) {
            p->outs[k].data = p->rcp[k][0];
            p->nodes[k].save[0] = p->rcp[k][1];
            p->nodes[k].save[1] = p->rcp[k][2];
        }
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        if (nd->ids && nd->ids_src) memcpy(nd->ids, nd->ids_src, (size_t)nd->n_ids * sizeof(int32_t));
        if (p->n_rc)   /* ops to run again (here, or in the group from here): the RNG they start from */
            for (j = k; j <= (!check && p->fuse_end[k] > k ? p->fuse_end[k] : k); j++)
                if (p->rc[j]) p->op_rng[j] = ctx->rng;
        if (!check && p->fuse_end[k] > k) {   /* the validation replay runs op by op */
            double t0 = prof ? lt__now() : 0.0;
            lt__run_fused(p, k, p->fuse_end[k]);
            if (prof) lt__profile_add(ctx, nd, 0, lt__now() - t0);   /* the group, under its first op */
            k = p->fuse_end[k];
            continue;
        }
        lt__plan_kernel(ctx, nd, 0, prof);
        if (check && (lt_failed(ctx) || !lt__all_finite(nd->out->data, nd->out->n))) {
            char b1[64], b2[64];
            if (!lt_failed(ctx))
                lt_set_error(ctx, LT_ERR_NONFINITE, "lt_compile: op %d (%s%s%s, input %s -> output %s) produced a "
                             "non-finite value: fix the model (or the data) before compiling", k, nd->op->name,
                             nd->scope ? " in " : "", nd->scope ? nd->scope : "",
                             lt_shape_str(nd->in[0], b1, sizeof b1), lt_shape_str(nd->out, b2, sizeof b2));
            return ctx->status;
        }
    }
    if (loss_out) *loss_out = p->outs[p->loss].data[0];
    if (p->outs[p->loss].grad) p->outs[p->loss].grad[0] = seed;
    for (i = 0; i < p->n_ev; i++) {
        lt__node *nd = &p->nodes[k = p->ev[i] >> 1];
        if (p->ev[i] & 1) {   /* op k of a recompute segment again, into its second homes, from its RNG */
            lt_rng keep = ctx->rng;
            if (p->rcp[k][0]) {
                p->outs[k].data = p->rcp[k][3];
                nd->save[0] = p->rcp[k][4];
                nd->save[1] = p->rcp[k][5];
            }
            ctx->rng = p->op_rng[k];
            lt__plan_kernel(ctx, nd, 0, prof);
            ctx->rng = keep;
            continue;
        }
        if (!p->runs_bwd[k]) continue;
        for (j = 0; j < p->n_zero_at[k]; j++)   /* zeroed by lt__grad, or written whole (lt__grad_w) */
            p->outs[p->zero_at[k][j]].grad_unset = 1;
        lt__plan_kernel(ctx, nd, 1, prof);
    }
    return ctx->status;
}

/* ---- @@COMPILE.compile  lt_compile ----------------------------------------------------------- */
/* Recording runs the step function in a "dry" mode: every op checks its arguments and is
   recorded with its shapes, but no kernel runs and no activation is written, so the arena's
   pages are never touched and compiling costs no more memory than the plan itself (an eager
   step would first hold every buffer at once).  Backward is planned from the graph
   (lt__mark_grads).  The validation step is then the plan's first replay, checked op by op. */
LTRAIN_DEF lt_plan *lt_compile(lt_ctx *ctx, lt_step_fn fn, void *user) {
    struct lt__capture cap;
    lt_plan *p;
    lt_tensor *loss;
    float *saved = NULL;
    lt_rng rng;
    size_t np = 0, off = 0;
    int k, built = 0, zero = 1;
    const char *env = getenv("LTRAIN_COMPILE");
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!fn) { lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the step function is NULL"); return NULL; }
    p = lt__plan_alloc(ctx, fn, user);
    if (!p) return NULL;
    if (env && strcmp(env, "0") == 0) {
        p->eager = 1;
        snprintf(p->note, sizeof p->note, "eager: compiling is off (LTRAIN_COMPILE=0)");
        return p;
    }
    if (ctx->dev) return ctx->dev->compile(ctx, p);   /* the step as the device's graph */
    /* the validation step must not change the gradients the caller has accumulated: when they
       are all zero (the usual case: compiling before training) they are zeroed again after it,
       otherwise a copy is kept (as much memory again as the gradients) */
    for (k = 0; k < ctx->n_params && zero; k++) {
        const float *g = ctx->params[k]->grad;
        int64_t i;
        for (i = 0; i < ctx->params[k]->n && zero; i++) zero = g[i] == 0.0f;
    }
    if (!zero) {
        np = lt_params_count(ctx);
        saved = (float *)LT__MALLOC((np + 1) * sizeof(float));
        if (!saved) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); LT__FREE(p); return NULL; }
        for (k = 0; k < ctx->n_params; k++) {
            memcpy(saved + off, ctx->params[k]->grad, (size_t)ctx->params[k]->n * sizeof(float));
            off += (size_t)ctx->params[k]->n;
        }
    }
    memset(&cap, 0, sizeof cap);
    rng = ctx->rng;              /* the validation step draws nothing that counts (dropout masks) */
    lt_reset(ctx);
    ctx->cap = &cap;
    ctx->cap_hooks = &lt__capture_rec;
    ctx->dry = 1;
    loss = fn(ctx, user);
    ctx->dry = 0;
    ctx->cap = NULL;
    ctx->cap_hooks = NULL;
    if (!lt_failed(ctx) && !loss) lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the step function returned NULL");
    if (!lt_failed(ctx) && loss->n != 1) {
        char b1[64];
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_compile: the step function returned %s: the loss must be a scalar "
                     "(hint: lt_sum or lt_mean it first)", lt_shape_str(loss, b1, sizeof b1));
    }
    if (!lt_failed(ctx) && !loss->is_param && !loss->requires_grad)
        lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the loss does not depend on any parameter "
                     "(hint: was it computed with gradients disabled?)");
    if (!lt_failed(ctx) && lt__capture_segs(ctx, &cap, loss) && lt__mark_grads(ctx, &cap, loss))
        built = lt__plan_build(p, &cap, loss);
    if (!lt_failed(ctx) && !built) {
        /* what the plan cannot handle runs eagerly: slower, never wrong */
        char why[200];
        snprintf(why, sizeof why, "%.199s", p->note);
        lt_plan_destroy(p);
        p = lt__plan_alloc(ctx, fn, user);
        if (p) {
            p->eager = 1;
            snprintf(p->note, sizeof p->note, "eager fallback: %.199s", why);
        }
    } else if (!lt_failed(ctx)) {
        /* validation: the first replay, every op's output checked, then the gradients */
        lt__plan_replay(p, 1.0f, NULL, 1);
        for (k = 0; k < ctx->n_params && !lt_failed(ctx); k++)
            if (!lt__all_finite(ctx->params[k]->grad, ctx->params[k]->n))
                lt_set_error(ctx, LT_ERR_NONFINITE, "lt_compile: the gradient of \"%s\" is not finite after the "
                             "validation step", ctx->params[k]->name);
        snprintf(p->note, sizeof p->note, "compiled: %d ops (%d fused in %d groups, %d run again), %d inputs, "
                 "planned %.1f MB (all buffers %.1f MB); kept for backward %.1f MB, made again %.1f MB, "
                 "+%.3g GFLOP", p->n, p->n_fused, p->n_groups, p->n_rc, p->n_in, (double)p->mem_bytes / 1048576.0,
                 (double)p->naive_bytes / 1048576.0, (double)p->saved_bytes / 1048576.0,
                 (double)p->rc_bytes / 1048576.0, p->rc_flops * 1e-9);
    }
    off = 0;
    for (k = 0; k < ctx->n_params; k++) {
        if (saved) memcpy(ctx->params[k]->grad, saved + off, (size_t)ctx->params[k]->n * sizeof(float));
        else memset(ctx->params[k]->grad, 0, (size_t)ctx->params[k]->n * sizeof(float));
        off += (size_t)ctx->params[k]->n;
    }
    ctx->rng = rng;
    LT__FREE(saved);
    LT__FREE(cap.nodes);
    LT__FREE(cap.in);
    LT__FREE(cap.has_grad);
    LT__FREE(cap.seg);
    LT__FREE(cap.rc);
    lt_reset(ctx);
    if (lt_failed(ctx)) { lt_plan_destroy(p); return NULL; }
    return p;
}

/* "1.5G", "800M", "64K", "1000000" (bytes; K, M, G, T are powers of 1024, a trailing B or iB
   allowed), "50%", or "off" / "" / NULL */
LTRAIN_DEF lt_status lt_set_memory_budget(lt_ctx *ctx, const char *budget) {
    const char *units = "KMGT";
    char *end;
    double x;
    if (!ctx) return LT_ERR_ARG;
    ctx->budget = 0;
    ctx->budget_frac = 0;
    if (!budget || !*budget || !strcmp(budget, "off")) return ctx->status;
    errno = 0;
    x = strtod(budget, &end);
    if (end != budget && errno == 0 && x > 0 && isfinite(x)) {
        const char *u = *end ? strchr(units, *end) : NULL;
        if (*end == '%' && !end[1] && x <= 100) { ctx->budget_frac = x / 100.0; return ctx->status; }
        if (u) {
            x *= pow(1024.0, (double)(u - units + 1));
            end++;
            if (*end == 'i') end++;
            if (*end == 'B') end++;
        } else if (*end == 'B') end++;
        if (!*end && x >= 1 && x < 1.8e19) { ctx->budget = (size_t)x; return ctx->status; }
    }
    return lt_set_error(ctx, LT_ERR_ARG, "lt_set_memory_budget: \"%s\" is not a memory budget: give bytes with an "
                        "optional K, M, G or T (1.5G, 800M), a percentage of the plan without recomputation "
                        "(50%%, at most 100%%), or off", budget);
}

LTRAIN_DEF size_t lt_plan_budget(const lt_plan *p) { return p ? p->budget : 0; }
LTRAIN_DEF size_t lt_plan_recomputed_bytes(const lt_plan *p) { return p ? p->rc_bytes : 0; }
LTRAIN_DEF double lt_plan_recomputed_flops(const lt_plan *p) { return p ? p->rc_flops : 0.0; }

LTRAIN_DEF lt_status lt_plan_run(lt_plan *p, float *loss_out) { return lt_plan_run_scaled(p, 1.0f, loss_out); }

LTRAIN_DEF lt_status lt_plan_run_scaled(lt_plan *p, float seed, float *loss_out) {
    lt_ctx *ctx;
    if (!p) return LT_ERR_ARG;
    ctx = p->ctx;
    if (lt_failed(ctx)) return ctx->status;
    if (p->graph) return p->graph_dev->graph_run(p, seed, loss_out);
    if (p->eager) {
        lt_tensor *loss;
        lt_reset(ctx);
        loss = p->fn(ctx, p->user);
        if (loss_out) *loss_out = lt_item(loss);
        return lt_backward_scaled(ctx, loss, seed);
    }
    return lt__plan_replay(p, seed, loss_out, 0);
}

LTRAIN_DEF int lt_plan_is_eager(const lt_plan *p) { return p ? p->eager : 1; }
LTRAIN_DEF const char *lt_plan_note(const lt_plan *p) { return p ? p->note : ""; }
LTRAIN_DEF size_t lt_plan_bytes(const lt_plan *p) { return p ? p->mem_bytes : 0; }
LTRAIN_DEF size_t lt_plan_naive_bytes(const lt_plan *p) { return p ? p->naive_bytes : 0; }
LTRAIN_DEF size_t lt_plan_saved_bytes(const lt_plan *p) { return p ? p->saved_bytes : 0; }

/* -- @@COMPILE.cache  a small cache of plans keyed by the caller's shape key (e.g. B*65536 + T) --- */
struct lt_plan_cache {
    lt_ctx *ctx;
    int cap, n;
    int64_t *keys;
    lt_plan **plans;
    uint64_t *used, clock;
};

LTRAIN_DEF lt_plan_cache *lt_plan_cache_create(lt_ctx *ctx, int capacity) {
    lt_plan_cache *c;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (capacity < 1) capacity = 1;
    c = (lt_plan_cache *)LT__MALLOC(sizeof(lt_plan_cache));
    if (!c) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_plan_cache_create: out of memory"); return NULL; }
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->cap = capacity;
    c->keys = (int64_t *)LT__MALLOC((size_t)capacity * sizeof(int64_t));
    c->plans = (lt_plan **)LT__MALLOC((size_t)capacity * sizeof(lt_plan *));
    c->used = (uint64_t *)LT__MALLOC((size_t)capacity * sizeof(uint64_t));
    if (!c->keys || !c->plans || !c->used) {
        lt_plan_cache_destroy(c);
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_plan_cache_create: out of memory");
        return NULL;
    }
    return c;
}

LTRAIN_DEF void lt_plan_cache_destroy(lt_plan_cache *c) {
    int k;
    if (!c) return;
    for (k = 0; k < c->n; k++) lt_plan_destroy(c->plans[k]);
    LT__FREE(c->keys);
    LT__FREE(c->plans);
    LT__FREE(c->used);
    LT__FREE(c);
}

LTRAIN_DEF lt_plan *lt_plan_cache_get(lt_plan_cache *c, int64_t key, lt_step_fn fn, void *user) {
    int k, victim = 0;
    lt_plan *p;
    if (!c || lt_failed(c->ctx)) return NULL;
    for (k = 0; k < c->n; k++)
        if (c->keys[k] == key && c->plans[k]->fn == fn && c->plans[k]->user == user) {
            c->used[k] = ++c->clock;
            return c->plans[k];
        }
    p = lt_compile(c->ctx, fn, user);
    if (!p) return NULL;
    if (c->n < c->cap) victim = c->n++;
    else {   /* evict the least recently used */
        for (k = 1; k < c->n; k++) if (c->used[k] < c->used[victim]) victim = k;
        lt_plan_destroy(c->plans[victim]);
    }
    c->keys[victim] = key;
    c->plans[victim] = p;
    c->used[victim] = ++c->clock;
    return p;
}

LTRAIN_DEF int lt_plan_cache_size(const lt_plan_cache *c) { return c ? c->n : 0; }

/* ---- src/10_nn.h ---- */
/* ==== @@NN  nn blocks: GPT-2, Llama ============================================================== */
/* Holds: the GPT-2 and Llama-style models: their parameters, initialisation, the trunk's forward,
   sampling.
   Calls: @@CORE, @@TENSOR, @@OPS (matmul and linear from 07_ops_matmul.h); the device through
   ctx->dev. */
/* One block, pre-LayerNorm (x is the residual stream [B,T,C]):
       x = x + c_proj(attention(c_attn(ln_1(x))))
       x = x + mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x))))
   then logits = ln_f(x) · wteᵀ (the head shares wte's memory, so its gradient adds into wte).
   A Llama block (x as above; no position table: RoPE rotates q and k by their position):
       h = rmsnorm(x);  x = x + o_proj(attention_gqa(rope(q_proj(h)), rope(k_proj(h)), v_proj(h)))
       h = rmsnorm(x);  x = x + down_proj(silu(gate_proj(h)) * up_proj(h))
   then logits = norm(x) · headᵀ, head = embed_tokens (tied) or lm_head. */

typedef struct {
    lt_tensor *ln1_w, *ln1_b, *attn_w, *attn_b, *attnproj_w, *attnproj_b;
    lt_tensor *ln2_w, *ln2_b, *fc_w, *fc_b, *fcproj_w, *fcproj_b;
} lt__gpt_block;

typedef struct {
    lt_tensor *q_w, *q_b, *k_w, *k_b, *v_w, *v_b, *o_w, *o_b, *q_norm, *k_norm;
    lt_tensor *gate_w, *gate_b, *up_w, *up_b, *down_w, *down_b, *in_norm, *post_norm;
} lt__llama_layer;

struct lt_gpt {
    lt_ctx *ctx;
    lt_gpt_config cfg;
    lt_tensor *wte, *wpe, *lnf_w, *lnf_b;   /* Llama: wte = embed_tokens, lnf_w = norm, no wpe, lnf_b */
    lt_tensor *head;         /* the LM head's [V,C] weight: wte, or Llama's untied lm_head */
    lt__gpt_block *blocks;
    lt__llama_layer *lblocks;
    lt_tensor **list;        /* every parameter, in Hugging Face order */
    int n_list;
    int32_t *pos;            /* 0, 1, ..., ctx-1: the position ids */
    char (*scopes)[24];      /* "h.3.attn", "h.3.mlp", ...: where ops run (for messages) */
    int recompute;           /* lt_gpt_set_recompute: blocks l with l % recompute == 0 are checkpointed (0: none) */
};

/* ---- @@NN.gpt  the model: parameters, initialisation ----------------------------------------- */
/* A parameter of the model, named as Hugging Face names it (prefix + suffix). */
static lt_tensor *lt__gpt_param(lt_gpt *g, const char *prefix, const char *suffix, int64_t d0, int64_t d1) {
    char name[128];
    int64_t shape[2];
    lt_tensor *t;
    shape[0] = d0; shape[1] = d1;
    snprintf(name, sizeof name, "%s%s", prefix, suffix);
    t = lt_param(g->ctx, name, d1 > 0 ? 2 : 1, shape);
    if (t) g->list[g->n_list++] = t;
    return t;
}

/* The config with its defaults filled in, checked; 0 and an error on the context if it is not valid. */
static int lt__gpt_config_resolve(lt_ctx *ctx, const lt_gpt_config *in, lt_gpt_config *c) {
    const char *who = "lt_gpt_create";
    if (!in) { lt_set_error(ctx, LT_ERR_ARG, "%s: config is NULL", who); return 0; }
    *c = *in;
    if (c->vocab < 1 || c->ctx < 1 || c->layers < 1 || c->heads < 1 || c->channels < 1 ||
        c->channels % c->heads != 0 || !(c->dropout >= 0.0f && c->dropout < 1.0f)) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: vocab %d, ctx %d, layers %d, heads %d, channels %d, "
                     "dropout %g: all must be >= 1, heads must divide channels, dropout in [0,1)",
                     who, c->vocab, c->ctx, c->layers, c->heads, c->channels, (double)c->dropout);
        return 0;
    }
    if (c->arch != LT_ARCH_GPT2 && c->arch != LT_ARCH_LLAMA) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: arch is %d: it must be LT_ARCH_GPT2 (0) or LT_ARCH_LLAMA (1)", who, c->arch);
        return 0;
    }
    if (c->kv_heads == 0) c->kv_heads = c->heads;
    if (c->hidden == 0)
        c->hidden = c->arch == LT_ARCH_GPT2 ? 4 * c->channels : (int)(((int64_t)8 * c->channels / 3 + 31) / 32 * 32);
    if (c->rope_theta == 0.0f && c->arch == LT_ARCH_LLAMA) c->rope_theta = 10000.0f;
    if (c->norm_eps == 0.0f) c->norm_eps = 1e-5f;
    if (c->no_bias == 0 && c->arch == LT_ARCH_LLAMA) c->no_bias = 1;
    if (c->kv_heads < 1 || c->heads % c->kv_heads != 0 || c->hidden < 1 || !(c->rope_theta >= 0.0f) ||
        !(c->norm_eps > 0.0f) || c->no_bias < -1 || c->no_bias > 1 || (unsigned)c->qk_norm > 1 || (unsigned)c->untied > 1) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: kv_heads %d, hidden %d, rope_theta %g, norm_eps %g, no_bias %d, qk_norm %d, "
                     "untied %d: kv_heads must divide heads (%d), hidden >= 1, rope_theta >= 0, norm_eps > 0, no_bias "
                     "-1, 0 or 1, qk_norm and untied 0 or 1", who, c->kv_heads, c->hidden, (double)c->rope_theta,
                     (double)c->norm_eps, c->no_bias, c->qk_norm, c->untied, c->heads);
        return 0;
    }
    if (c->arch == LT_ARCH_GPT2 && (c->kv_heads != c->heads || c->qk_norm || c->untied || c->no_bias == 1 ||
                                    c->rope_theta != 0.0f)) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: arch gpt2 with kv_heads %d (heads %d), qk_norm %d, untied %d, no_bias %d, "
                     "rope_theta %g: GPT-2 has full attention, a tied head, biases and learned positions "
                     "(hint: arch LT_ARCH_LLAMA has these knobs)", who, c->kv_heads, c->heads, c->qk_norm, c->untied,
                     c->no_bias, (double)c->rope_theta);
        return 0;
    }
    return 1;
}

/* GPT-2's parameters, in Hugging Face order, and its initialisation. */
static void lt__gpt2_params(lt_gpt *g) {
    const lt_gpt_config *cfg = &g->cfg;
    int64_t V = cfg->vocab, C = cfg->channels, L = cfg->layers, F = cfg->hidden;
    double std = 0.02, proj_std;
    int l;
    g->wte = lt__gpt_param(g, "wte", ".weight", V, C);
    g->wpe = lt__gpt_param(g, "wpe", ".weight", cfg->ctx, C);
    for (l = 0; l < L; l++) {
        lt__gpt_block *b = &g->blocks[l];
        char p[32];
        snprintf(p, sizeof p, "h.%d.", l);
        b->ln1_w = lt__gpt_param(g, p, "ln_1.weight", C, 0);
        b->ln1_b = lt__gpt_param(g, p, "ln_1.bias", C, 0);
        b->attn_w = lt__gpt_param(g, p, "attn.c_attn.weight", C, 3 * C);
        b->attn_b = lt__gpt_param(g, p, "attn.c_attn.bias", 3 * C, 0);
        b->attnproj_w = lt__gpt_param(g, p, "attn.c_proj.weight", C, C);
        b->attnproj_b = lt__gpt_param(g, p, "attn.c_proj.bias", C, 0);
        b->ln2_w = lt__gpt_param(g, p, "ln_2.weight", C, 0);
        b->ln2_b = lt__gpt_param(g, p, "ln_2.bias", C, 0);
        b->fc_w = lt__gpt_param(g, p, "mlp.c_fc.weight", C, F);
        b->fc_b = lt__gpt_param(g, p, "mlp.c_fc.bias", F, 0);
        b->fcproj_w = lt__gpt_param(g, p, "mlp.c_proj.weight", F, C);
        b->fcproj_b = lt__gpt_param(g, p, "mlp.c_proj.bias", C, 0);
    }
    g->lnf_w = lt__gpt_param(g, "ln_f", ".weight", C, 0);
    g->lnf_b = lt__gpt_param(g, "ln_f", ".bias", C, 0);
    g->head = g->wte;
    if (lt_failed(g->ctx)) return;
    /* GPT-2 initialisation: N(0, 0.02); the two projections that write into the residual stream
       N(0, 0.02/sqrt(2L)) so the stream's variance does not grow with depth; biases 0;
       LayerNorm weight 1, bias 0.  Drawn in parameter order from the context's RNG. */
    proj_std = std / sqrt(2.0 * (double)L);
    lt_init_normal(g->ctx, g->wte, 0, std);
    lt_init_normal(g->ctx, g->wpe, 0, std);
    for (l = 0; l < L; l++) {
        lt__gpt_block *b = &g->blocks[l];
        lt_fill(b->ln1_w, 1.0f);
        lt_fill(b->ln2_w, 1.0f);
        lt_init_normal(g->ctx, b->attn_w, 0, std);
        lt_init_normal(g->ctx, b->attnproj_w, 0, proj_std);
        lt_init_normal(g->ctx, b->fc_w, 0, std);
        lt_init_normal(g->ctx, b->fcproj_w, 0, proj_std);
    }
    lt_fill(g->lnf_w, 1.0f);
}

/* A Llama linear: weight [out,in] named <p><name>.weight, and .bias [out] when biases are on. */
static void lt__llama_linear(lt_gpt *g, const char *p, const char *name, int64_t out, int64_t in, lt_tensor **w,
                             lt_tensor **b) {
    char sfx[48];
    snprintf(sfx, sizeof sfx, "%s.weight", name);
    *w = lt__gpt_param(g, p, sfx, out, in);
    if (g->cfg.no_bias != -1) return;
    snprintf(sfx, sizeof sfx, "%s.bias", name);
    *b = lt__gpt_param(g, p, sfx, out, 0);
}

/* The Llama model's parameters, in Hugging Face order (LlamaForCausalLM, Qwen3 for q_norm and
   k_norm), and its initialisation as HF's _init_weights: linears and embeddings N(0, 0.02),
   biases 0, RMSNorm weights 1. */
static void lt__llama_params(lt_gpt *g) {
    const lt_gpt_config *cfg = &g->cfg;
    int64_t V = cfg->vocab, C = cfg->channels, D = cfg->channels / cfg->heads, F = cfg->hidden;
    int64_t Q = D * cfg->heads, KV = D * cfg->kv_heads;
    int l, k;
    g->wte = lt__gpt_param(g, "model.embed_tokens", ".weight", V, C);
    for (l = 0; l < cfg->layers; l++) {
        lt__llama_layer *b = &g->lblocks[l];
        char p[48];
        snprintf(p, sizeof p, "model.layers.%d.", l);
        lt__llama_linear(g, p, "self_attn.q_proj", Q, C, &b->q_w, &b->q_b);
        lt__llama_linear(g, p, "self_attn.k_proj", KV, C, &b->k_w, &b->k_b);
        lt__llama_linear(g, p, "self_attn.v_proj", KV, C, &b->v_w, &b->v_b);
        lt__llama_linear(g, p, "self_attn.o_proj", C, Q, &b->o_w, &b->o_b);
        if (cfg->qk_norm) {
            b->q_norm = lt__gpt_param(g, p, "self_attn.q_norm.weight", D, 0);
            b->k_norm = lt__gpt_param(g, p, "self_attn.k_norm.weight", D, 0);
        }
        lt__llama_linear(g, p, "mlp.gate_proj", F, C, &b->gate_w, &b->gate_b);
        lt__llama_linear(g, p, "mlp.up_proj", F, C, &b->up_w, &b->up_b);
        lt__llama_linear(g, p, "mlp.down_proj", C, F, &b->down_w, &b->down_b);
        b->in_norm = lt__gpt_param(g, p, "input_layernorm.weight", C, 0);
        b->post_norm = lt__gpt_param(g, p, "post_attention_layernorm.weight", C, 0);
    }
    g->lnf_w = lt__gpt_param(g, "model.norm", ".weight", C, 0);
    g->head = cfg->untied ? lt__gpt_param(g, "lm_head", ".weight", V, C) : g->wte;
    if (lt_failed(g->ctx)) return;
    for (k = 0; k < g->n_list; k++) {   /* in parameter order: 2-D weights drawn, RMSNorm 1, biases 0 */
        lt_tensor *t = g->list[k];
        if (t->ndim == 2) lt_init_normal(g->ctx, t, 0, 0.02);
        else if (strstr(t->name, "norm")) lt_fill(t, 1.0f);
    }
}

LTRAIN_DEF lt_gpt *lt_gpt_create(lt_ctx *ctx, const lt_gpt_config *cfg) {
    lt_gpt *g;
    lt_gpt_config c;
    int64_t L;
    int l, llama;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!lt__gpt_config_resolve(ctx, cfg, &c)) return NULL;
    L = c.layers;
    llama = c.arch == LT_ARCH_LLAMA;
    g = (lt_gpt *)LT__MALLOC(sizeof(lt_gpt));
    if (!g) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_create: out of memory"); return NULL; }
    memset(g, 0, sizeof *g);
    g->ctx = ctx;
    g->cfg = c;
    if (llama) g->lblocks = (lt__llama_layer *)LT__MALLOC((size_t)L * sizeof(lt__llama_layer));
    else g->blocks = (lt__gpt_block *)LT__MALLOC((size_t)L * sizeof(lt__gpt_block));
    g->list = (lt_tensor **)LT__MALLOC((size_t)(4 + 20 * L) * sizeof(lt_tensor *));
    g->pos = (int32_t *)LT__MALLOC((size_t)(llama ? 1 : c.ctx) * sizeof(int32_t));   /* Llama: no wpe to index */
    g->scopes = (char(*)[24])LT__MALLOC((size_t)(2 * L + 2) * 24);
    if (!(llama ? (void *)g->lblocks : (void *)g->blocks) || !g->list || !g->pos || !g->scopes) {
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_create: out of memory");
        lt_gpt_destroy(g);
        return NULL;
    }
    if (llama) memset(g->lblocks, 0, (size_t)L * sizeof(lt__llama_layer));
    for (l = 0; l < (llama ? 1 : c.ctx); l++) g->pos[l] = l;
    snprintf(g->scopes[0], 24, "embeddings");
    snprintf(g->scopes[1], 24, llama ? "norm+head" : "ln_f+head");
    for (l = 0; l < L; l++) {
        snprintf(g->scopes[2 + 2 * l], 24, llama ? "layers.%d.attn" : "h.%d.attn", l);
        snprintf(g->scopes[3 + 2 * l], 24, llama ? "layers.%d.mlp" : "h.%d.mlp", l);
    }
    if (llama) lt__llama_params(g);
    else lt__gpt2_params(g);
    if (lt_failed(ctx) || lt_params_pack(ctx) != LT_OK) { lt_gpt_destroy(g); return NULL; }
    return g;
}

LTRAIN_DEF lt_gpt_config lt_gpt2_config(int vocab, int ctx, int layers, int heads, int channels) {
    lt_gpt_config c;
    memset(&c, 0, sizeof c);
    c.vocab = vocab; c.ctx = ctx; c.layers = layers; c.heads = heads; c.channels = channels;
    return c;
}

LTRAIN_DEF lt_gpt_config lt_llama_config(int vocab, int ctx, int layers, int heads, int kv_heads, int channels, int hidden) {
    lt_gpt_config c = lt_gpt2_config(vocab, ctx, layers, heads, channels);
    c.arch = LT_ARCH_LLAMA; c.kv_heads = kv_heads; c.hidden = hidden;
    return c;
}

LTRAIN_DEF void lt_gpt_destroy(lt_gpt *g) {
    if (!g) return;
    LT__FREE(g->blocks);
    LT__FREE(g->lblocks);
    LT__FREE(g->list);
    LT__FREE(g->pos);
    LT__FREE(g->scopes);
    LT__FREE(g);
}

LTRAIN_DEF const lt_gpt_config *lt_gpt_cfg(const lt_gpt *g) { return g ? &g->cfg : NULL; }

LTRAIN_DEF lt_paramset lt_gpt_params(lt_gpt *g) {
    lt_paramset s;
    s.p = g ? g->list : NULL;
    s.n = g ? g->n_list : 0;
    return s;
}

LTRAIN_DEF lt_status lt_gpt_set_recompute(lt_gpt *g, int every) {
    if (!g) return LT_ERR_ARG;
    if (every < 0)
        return lt_set_error(g->ctx, LT_ERR_ARG, "lt_gpt_set_recompute: every is %d: 0 (off), 1 (every block) or "
                            "N (every N-th block)", every);
    g->recompute = every;
    return lt_status_of(g->ctx);
}

LTRAIN_DEF int64_t lt_gpt_num_params(const lt_gpt *g) {
    int64_t n = 0;
    int i;
    if (!g) return 0;
    for (i = 0; i < g->n_list; i++) n += g->list[i]->n;
    return n;
}

/* ---- @@NN.forward  forward ------------------------------------------------------------------- */
/* GPT-2 block l on the residual stream x (B,T,C); returns the new stream. */
static lt_tensor *lt__gpt2_block(lt_gpt *g, int l, lt_tensor *x, const int32_t *lengths) {
    lt_ctx *ctx = g->ctx;
    const lt__gpt_block *b = &g->blocks[l];
    float eps = g->cfg.norm_eps, p = g->cfg.dropout;
    lt_tensor *h;
    lt_scope(ctx, g->scopes[2 + 2 * l]);
    h = lt_layernorm(ctx, x, b->ln1_w, b->ln1_b, eps);
    h = lt_conv1d(ctx, h, b->attn_w, b->attn_b);                 /* (B,T,3C) = q | k | v */
    h = lt_attention(ctx, h, g->cfg.heads, lengths);             /* (B,T,C) */
    h = lt_dropout(ctx, lt_conv1d(ctx, h, b->attnproj_w, b->attnproj_b), p);
    x = lt__add_over(ctx, x, h, h);                              /* x + h, over h */
    lt_scope(ctx, g->scopes[3 + 2 * l]);
    h = lt_layernorm(ctx, x, b->ln2_w, b->ln2_b, eps);
    h = lt_gelu(ctx, lt_conv1d(ctx, h, b->fc_w, b->fc_b));       /* (B,T,4C) */
    h = lt_dropout(ctx, lt_conv1d(ctx, h, b->fcproj_w, b->fcproj_b), p);
    return lt__add_over(ctx, x, h, h);
}

/* RMSNorm of each head's D values of t (B,T,n*D), weight w [D] (Qwen3's q_norm, k_norm). */
static lt_tensor *lt__head_rmsnorm(lt_ctx *ctx, lt_tensor *t, int n, lt_tensor *w, float eps) {
    int64_t s4[4], s3[3];
    if (!t) return NULL;
    s3[0] = t->shape[0]; s3[1] = t->shape[1]; s3[2] = t->shape[2];
    s4[0] = s3[0]; s4[1] = s3[1]; s4[2] = n; s4[3] = s3[2] / n;
    return lt_reshape(ctx, lt_rmsnorm(ctx, lt_reshape(ctx, t, 4, s4), w, eps), 3, s3);
}

/* Llama block l on the residual stream x (B,T,C); returns the new stream. */
static lt_tensor *lt__llama_block(lt_gpt *g, int l, lt_tensor *x, const int32_t *lengths) {
    lt_ctx *ctx = g->ctx;
    const lt__llama_layer *b = &g->lblocks[l];
    const lt_gpt_config *c = &g->cfg;
    float eps = c->norm_eps, p = c->dropout;
    lt_tensor *h, *q, *k, *v;
    lt_scope(ctx, g->scopes[2 + 2 * l]);
    h = lt_rmsnorm(ctx, x, b->in_norm, eps);
    q = lt_linear(ctx, h, b->q_w, b->q_b);                       /* (B,T,H*D) */
    k = lt_linear(ctx, h, b->k_w, b->k_b);                       /* (B,T,Hkv*D) */
    v = lt_linear(ctx, h, b->v_w, b->v_b);
    if (c->qk_norm) {
        q = lt__head_rmsnorm(ctx, q, c->heads, b->q_norm, eps);
        k = lt__head_rmsnorm(ctx, k, c->kv_heads, b->k_norm, eps);
    }
    q = lt_rope(ctx, q, c->heads, c->rope_theta, 0);
    k = lt_rope(ctx, k, c->kv_heads, c->rope_theta, 0);
    h = lt_attention_gqa(ctx, q, k, v, c->heads, c->kv_heads, lengths);   /* (B,T,H*D) */
    h = lt_dropout(ctx, lt_linear(ctx, h, b->o_w, b->o_b), p);
    x = lt__add_over(ctx, x, h, h);
    lt_scope(ctx, g->scopes[3 + 2 * l]);
    h = lt_rmsnorm(ctx, x, b->post_norm, eps);
    h = lt_swiglu(ctx, lt_linear(ctx, h, b->gate_w, b->gate_b), lt_linear(ctx, h, b->up_w, b->up_b));
    h = lt_dropout(ctx, lt_linear(ctx, h, b->down_w, b->down_b), p);
    return lt__add_over(ctx, x, h, h);
}

/* The model up to ln_f / norm (B,T,C); the head is the caller's: lt_gpt_forward's lt_linear, or
   the fused head and loss of lt__gpt_loss at 16-bit precision. */
static lt_tensor *lt__gpt_trunk(lt_gpt *g, const int32_t *ids, int B, int T, const int32_t *lengths) {
    lt_ctx *ctx = g ? g->ctx : NULL;
    const lt_gpt_config *c;
    lt_tensor *x, *h;
    int l, llama;
    if (!ctx || lt_failed(ctx)) return NULL;
    c = &g->cfg;
    llama = c->arch == LT_ARCH_LLAMA;
    if (!ids || B < 1 || T < 1 || T > c->ctx) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_gpt_forward: ids %s, B = %d, T = %d: need ids, B >= 1 and 1 <= T <= %d "
                     "(the model's context length)", ids ? "given" : "NULL", B, T, c->ctx);
        return NULL;
    }
    /* x = wte[ids] + wpe[0..T-1]   (B,T,C); Llama: x = embed_tokens[ids] */
    lt_scope(ctx, g->scopes[0]);
    h = lt_embedding(ctx, g->wte, ids, B, T);
    x = llama ? h : lt__add_over(ctx, h, lt_embedding(ctx, g->wpe, g->pos, 1, T), h);   /* (written over wte's rows) */
    if (B == 1) {   /* the embedding of one row is [T,C]: make it [1,T,C] */
        int64_t shape[3];
        shape[0] = 1; shape[1] = T; shape[2] = c->channels;
        x = lt_reshape(ctx, x, 3, shape);
    }
    x = lt_dropout(ctx, x, c->dropout);
    for (l = 0; l < c->layers; l++) {
        int ckpt = g->recompute > 0 && l % g->recompute == 0;   /* this block's values recomputed in backward */
        if (ckpt) lt_recompute_begin(ctx);
        x = llama ? lt__llama_block(g, l, x, lengths) : lt__gpt2_block(g, l, x, lengths);
        if (ckpt) x = lt_recompute_end(ctx, x);
    }
    lt_scope(ctx, g->scopes[1]);
    x = llama ? lt_rmsnorm(ctx, x, g->lnf_w, c->norm_eps) : lt_layernorm(ctx, x, g->lnf_w, g->lnf_b, c->norm_eps);
    return x;
}

LTRAIN_DEF lt_tensor *lt_gpt_forward(lt_gpt *g, const int32_t *ids, int B, int T, const int32_t *lengths) {
    lt_tensor *x = lt__gpt_trunk(g, ids, B, T, lengths);
    if (!x) return NULL;
    x = lt_linear(g->ctx, x, g->head, NULL);                         /* (B,T,V) = x·headᵀ */
    lt_scope(g->ctx, NULL);
    return x;
}

/* ---- @@NN.generate  sampling ----------------------------------------------------------------- */
/* The k-th largest of a[0..n-1] (k >= 1), by quickselect; a is reordered. */
static double lt__kth_largest(double *a, int n, int k) {
    int lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        double pivot = a[(lo + hi) / 2], t;
        int i = lo, j = hi;
        while (i <= j) {                       /* descending: big values to the left */
            while (a[i] > pivot) i++;
            while (a[j] < pivot) j--;
            if (i <= j) { t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else break;
    }
    return a[want];
}

/* Draw one token from logits (V): greedy at temperature 0, else softmax(logits/temperature)
   restricted to the top_k largest (0 = all). */
static int32_t lt__sample(const float *logits, int V, float temperature, int top_k, lt_rng *rng, double *prob) {
    double sum = 0, u;
    float thresh = -INFINITY, m;
    int j, best = 0;
    for (j = 0; j < V; j++) if (logits[j] > logits[best]) best = j;
    if (!(temperature > 0)) return best;
    m = logits[best];
    if (top_k > 0 && top_k < V) {
        for (j = 0; j < V; j++) prob[j] = logits[j];
        thresh = (float)lt__kth_largest(prob, V, top_k);
    }
    for (j = 0; j < V; j++) {
        prob[j] = logits[j] >= thresh ? exp((double)(logits[j] - m) / temperature) : 0.0;
        sum += prob[j];
    }
    u = lt_rng_uniform(rng) * sum;
    for (j = 0; j < V; j++) {
        u -= prob[j];
        if (u < 0 && prob[j] > 0) return j;
    }
    return best;
}

LTRAIN_DEF int lt_gpt_generate(lt_gpt *g, const int32_t *prompt, int n_prompt, int n, float temperature, int top_k,
                               lt_rng *rng, int32_t *out) {
    lt_ctx *ctx = g ? g->ctx : NULL;
    int len, k, ge, tr;
    double *prob;
    if (!ctx || lt_failed(ctx)) return 0;
    if (!prompt || n_prompt < 1 || n < 0 || !out || !rng) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_gpt_generate: need a prompt of >= 1 tokens, n >= 0, out and rng");
        return 0;
    }
    prob = (double *)LT__MALLOC((size_t)g->cfg.vocab * sizeof(double));
    if (!prob) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_generate: out of memory"); return 0; }
    memcpy(out, prompt, (size_t)n_prompt * sizeof(int32_t));
    len = n_prompt;
    ge = ctx->grad_enabled; tr = ctx->training;
    ctx->grad_enabled = 0; ctx->training = 0;
    for (k = 0; k < n; k++) {
        int T = len < g->cfg.ctx ? len : g->cfg.ctx;
        lt_tensor *logits;
        lt_reset(ctx);
        logits = lt_gpt_forward(g, out + len - T, 1, T, NULL);
        if (!logits) break;
        {
            const float *row = logits->data + (int64_t)(T - 1) * g->cfg.vocab;
            if (logits->device != LT_CPU && !(row = ctx->dev->host_row(ctx, row, (size_t)g->cfg.vocab))) break;
            out[len] = lt__sample(row, g->cfg.vocab, temperature, top_k, rng, prob);
        }
        len++;
    }
    ctx->grad_enabled = ge; ctx->training = tr;
    lt_reset(ctx);
    LT__FREE(prob);
    return len;
}

/* ---- src/11_loss.h ---- */
/* ==== @@LOSS  cross-entropy, MSE ============================================================= */
/* Holds: cross-entropy (mean or token-weighted, ignore index; the fused 16-bit head), MSE, and
   the GPT's loss (lt__gpt_loss: trunk, head, cross-entropy).
   Calls: @@CORE, @@HALF, @@TENSOR, @@OPS, @@GEMM, @@NN. */

/* ---- @@LOSS.cross_entropy  cross-entropy ----------------------------------------------------- */
LTRAIN_DEF int64_t lt_count_targets(const int32_t *targets, int64_t n) {
    int64_t i, c = 0;
    if (!targets) return 0;
    for (i = 0; i < n; i++) c += targets[i] != LT_IGNORE_INDEX;
    return c;
}

/* logits (R, V), targets (R) -> loss [1] = Σ_r (logsumexp(x_r) - x_r[t_r]) / denom over rows with
   t_r != -1; denom = the count of such rows (mean) or the caller's (token-weighted sum).
   Backward forms the softmax p from the logits and each row's max and log-sum-exp, which the
   forward saves (2 floats a row), so it is one pass over the logits:
     dx_r += dloss · (p_r - onehot(t_r)) / denom,   p_rj = exp((x_rj - m_r) - lse_r)
   LT__CE_DENOM = denom (0 when no row counts: loss 0, no gradient).  save[0] = [row losses | m | lse].
   In place (gx == x): dx_r = 0 + ... over the logits, the bits of += into zeros.  A compiled plan
   does this when nothing reads the logits later (@@COMPILE); eager mode when LT__CE_OVER = 1,
   which lt_gpt_loss sets: its logits are the loss's own and their gradient has no buffer yet. */
#define LT__CE_V(nd) ((nd)->i[0])       /* V, the row length */
#define LT__CE_OVER(nd) ((nd)->i[1])    /* eager: d(logits) may be written over the logits */
#define LT__CE_DENOM(nd) ((nd)->f[0])
static void lt__cross_entropy_fwd(lt__node *nd) {
    int64_t V = LT__CE_V(nd), R = nd->in[0]->n / V, r;
    float *row = nd->save[0];   /* per-row losses, summed in order afterwards: deterministic */
    float *rm = row + R, *rl = row + 2 * R;
    double total = 0;
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++) {
        const float *x = nd->in[0]->data + r * V;
        int32_t t = nd->ids[r];
        float m, ls;
        if (t == LT_IGNORE_INDEX) { row[r] = rm[r] = rl[r] = 0.0f; continue; }
        ls = lt__lse_shifted(x, V, &m);
        row[r] = (m - x[t]) + ls;
        rm[r] = m;
        rl[r] = ls;
    }
    for (r = 0; r < R; r++) total += row[r];
    nd->out->data[0] = LT__CE_DENOM(nd) > 0 ? (float)(total / LT__CE_DENOM(nd)) : 0.0f;
}
static void lt__cross_entropy_bwd(lt__node *nd) {
    int64_t V = LT__CE_V(nd), R = nd->in[0]->n / V, r;
    float *gx, g;
    if (LT__CE_OVER(nd) && nd->in[0]->requires_grad && !nd->in[0]->grad) nd->in[0]->grad = nd->in[0]->data;  /* in place */
    gx = lt__grad(nd->in[0], nd->ctx);
    if (!gx) return;
    if (!(LT__CE_DENOM(nd) > 0)) {   /* no gradient: in place, that is zeros over the logits */
        if (gx == nd->in[0]->data) memset(gx, 0, (size_t)nd->in[0]->n * sizeof(float));
        return;
    }
    g = (float)(nd->out->grad[0] / LT__CE_DENOM(nd));
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++) {
        const float *x = nd->in[0]->data + r * V;
        float *gr = gx + r * V, m = nd->save[0][R + r], ls = nd->save[0][2 * R + r];
        int32_t t = nd->ids[r];
        int64_t j;
        if (t == LT_IGNORE_INDEX) {
            if (gr == x) memset(gr, 0, (size_t)V * sizeof(float));
            continue;
        }
        if (gr == x) {   /* in place: 0 + g·p, the bits of += into zeros */
            LT__OMP(simd)
            for (j = 0; j < V; j++) gr[j] = 0.0f + g * lt__exp_neg((x[j] - m) - ls);
        } else {
            LT__OMP(simd)
            for (j = 0; j < V; j++) gr[j] += g * lt__exp_neg((x[j] - m) - ls);
        }
        gr[t] -= g;
    }
}
/* The checks lt_cross_entropy(_sum) make: targets in [0,V) or ignored, denom > 0 when given. */
static int lt__ce_check(lt_ctx *ctx, const char *who, const lt_tensor *logits, int64_t V, int64_t R,
                        const int32_t *targets, double denom, int use_count) {
    int64_t r;
    char b1[64];
    if (!targets) { lt_set_error(ctx, LT_ERR_ARG, "%s: targets is NULL", who); return 0; }
    for (r = 0; r < R; r++)
        if (targets[r] != LT_IGNORE_INDEX && (targets[r] < 0 || targets[r] >= V)) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: targets[%lld] is %d: it must be in [0,%lld) or %d (ignored); "
                         "logits are %s", who, (long long)r, targets[r], (long long)V, LT_IGNORE_INDEX,
                         lt_shape_str(logits, b1, sizeof b1));
            return 0;
        }
    if (!use_count && !(denom > 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: denom is %g: it must be > 0", who, denom);
        return 0;
    }
    return 1;
}
static lt_tensor *lt__ce(lt_ctx *ctx, const char *who, lt_tensor *logits, const int32_t *targets, double denom,
                         int use_count) {
    int64_t V, R, one = 1;
    lt__node *nd;
    if (!lt__live(ctx, who, logits, logits)) return NULL;
    V = logits->shape[logits->ndim - 1];
    R = logits->n / V;
    if (!lt__ce_check(ctx, who, logits, V, R, targets, denom, use_count)) return NULL;
    nd = lt__node_new(ctx, LT__OP(cross_entropy), 1, &one, logits, NULL, NULL, 0);
    if (!nd || !lt__node_ids(ctx, nd, targets, R) || !lt__save(ctx, nd, 0, 3 * R)) return NULL;
    LT__CE_V(nd) = V;
    LT__CE_DENOM(nd) = use_count ? (double)lt_count_targets(targets, R) : denom;
    return lt__run(ctx, nd);
}
LTRAIN_DEF lt_tensor *lt_cross_entropy(lt_ctx *ctx, lt_tensor *logits, const int32_t *targets) {
    return lt__ce(ctx, "lt_cross_entropy", logits, targets, 0, 1);
}
LTRAIN_DEF lt_tensor *lt_cross_entropy_sum(lt_ctx *ctx, lt_tensor *logits, const int32_t *targets, double denom) {
    return lt__ce(ctx, "lt_cross_entropy_sum", logits, targets, denom, 0);
}

/* ---- @@LOSS.linear_ce16  linear_ce16: the LM head and cross-entropy in one op, for 16-bit training --- */
/* x (R, C), W (V, C), targets (R) -> loss [1]: lt_linear(x, W) then lt_cross_entropy(_sum) at
   16-bit precision, the same numbers, without a float32 logits tensor (R·V floats) or its float32
   gradient (as much again): the logits z = round16(x16·W16ᵀ) are kept in 16 bits only.
   Forward: z in column blocks of LT__CE16_COLS (a float32 block of R rows, rounded and narrowed
   into z16; the block is malloc'd for the forward, R·512 floats at most, not kept), then per row
   (max, log Σ exp) as lt__lse_shifted, on z16 in pieces, and the loss.
   Backward (g = dloss/denom): dz = round16(g·(softmax(z) - onehot(t))) written over z16 (the
   float32 op's dlogits, rounded as linear16 packs them), then as linear16:
     dx += dz·W16,  dW += dzᵀ·x16   (float32 sums)
   The arguments below (as lt_cross_entropy's: the denominator 0 when no row counts: loss 0, no
   gradient); ids = targets.  save[0] = x16 (when W gets a gradient and x is not a parameter);
   save[1] = z16 (R·V 16-bit values), then per row max, lse, loss. */
#define LT__LCE_V(nd) ((nd)->i[0])
#define LT__LCE_C(nd) ((nd)->i[1])
#define LT__LCE_DENOM(nd) ((nd)->f[0])
#define LT__CE16_COLS 512
typedef struct { uint16_t *z; float *m, *lse, *loss; } lt__ce16_bufs;
static lt__ce16_bufs lt__ce16_layout(const lt__node *nd) {
    int64_t V = LT__LCE_V(nd), R = nd->in[0]->n / LT__LCE_C(nd), nz = (R * V + 1) / 2;
    lt__ce16_bufs b;
    b.z = (uint16_t *)(void *)nd->save[1];
    b.m = nd->save[1] + nz;
    b.lse = b.m + R;
    b.loss = b.lse + R;
    return b;
}
static int64_t lt__ce16_save_floats(int64_t R, int64_t V) { return (R * V + 1) / 2 + 3 * R; }

/* lt__lse_shifted on a 16-bit row: the same max and the same sums in blocks of 256 */
static float lt__lse16(lt_dtype p, const uint16_t *z, int64_t V, float *m) {
    float x[256], mm = -INFINITY;
    double s = 0;
    int64_t j, j0;
    for (j0 = 0; j0 < V; j0 += 256) {
        int64_t n = V - j0 < 256 ? V - j0 : 256;
        float pm;
        lt__from16(p, z + j0, x, (size_t)n);
        pm = lt__row_max(x, n);   /* (16 lanes: a scalar max chain waits on each compare) */
        if (pm > mm) mm = pm;
    }
    *m = mm;
    if (mm == -INFINITY) return -INFINITY;
    for (j0 = 0; j0 < V; j0 += 256) {
        int64_t n = V - j0 < 256 ? V - j0 : 256;
        float part = 0.0f;
        lt__from16(p, z + j0, x, (size_t)n);
        LT__OMP(simd reduction(+ : part))
        for (j = 0; j < n; j++) part += lt__exp_neg(x[j] - mm);
        s += part;
    }
    return (float)log(s);
}

/* z[:, v0..v0+n) = round16(x16 · W16[v0..v0+n)ᵀ) through the float32 block blk (R x n) */
static void lt__ce16_cols(const lt__node *nd, int id, int64_t v0, int64_t n, float *blk, uint16_t *z) {
    lt_dtype p = lt__prec_of(LT__PREC2(nd));
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C, r;
    lt__mm16_opnd x = lt__opnd16_of(nd, 0, C, 0, 0);
    lt__gsrc w;
    lt__gepi e;
    e.p = (int)p;
    e.bias = NULL;
    w.f = nd->in[1]->data + v0 * C; w.h = NULL; w.p = (int)p; w.gelu = 0;
    lt__sgemm_ex(id, 0, 1, R, n, C, 1.0f, lt__gsrc16(p, &x, 0), C, w, C, 0.0f, blk, n, &e);
    LT__OMP(parallel for if (R * n > 32768 && !omp_in_parallel()))
    for (r = 0; r < R; r++) lt__to16(p, blk + r * n, z + r * V + v0, (size_t)n);
}
static void lt__linear_ce16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC2(nd));
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C, cols = V < LT__CE16_COLS ? V : LT__CE16_COLS, r, bi;
    int64_t nblk = (V + LT__CE16_COLS - 1) / LT__CE16_COLS;
    lt__ce16_bufs bf = lt__ce16_layout(nd);
    int id = lt__gemm_pick(), nt = lt_get_threads();
    double total = 0;
    float *blk;
    /* many column blocks: one block per thread at a time, each a one-thread GEMM (one parallel
       region, not one per block: barriers are costly when other processes share the cores) */
    if (nt < 1 || nblk < 4 * nt || (double)R * (double)V * (double)C < 2097152.0) nt = 1;
    blk = (float *)LT__MALLOC((size_t)nt * (size_t)R * (size_t)cols * sizeof(float));
    if (!blk) {
        lt_set_error(nd->ctx, LT_ERR_NOMEM, "lt_cross_entropy: out of memory for %d blocks of %lld x %lld logits", nt,
                     (long long)R, (long long)cols);
        return;
    }
    if (nd->save[0]) lt__to16(p, nd->in[0]->data, (uint16_t *)(void *)nd->save[0], (size_t)nd->in[0]->n);
    if (nt == 1) {
        for (bi = 0; bi < nblk; bi++)
            lt__ce16_cols(nd, id, bi * LT__CE16_COLS, V - bi * LT__CE16_COLS < cols ? V - bi * LT__CE16_COLS : cols, blk, bf.z);
    } else {
        LT__OMP(parallel for schedule(dynamic, 1) num_threads(nt))
        for (bi = 0; bi < nblk; bi++) {
            int64_t t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            lt__ce16_cols(nd, id, bi * LT__CE16_COLS, V - bi * LT__CE16_COLS < cols ? V - bi * LT__CE16_COLS : cols,
                          blk + t * R * cols, bf.z);
        }
    }
    LT__FREE(blk);
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++) {
        int32_t t = nd->ids[r];
        float m, ls, zt;
        if (t == LT_IGNORE_INDEX) { bf.loss[r] = 0.0f; continue; }
        ls = lt__lse16(p, bf.z + r * V, V, &m);
        lt__from16(p, bf.z + r * V + t, &zt, 1);
        bf.m[r] = m;
        bf.lse[r] = ls;
        bf.loss[r] = (m - zt) + ls;
    }
    for (r = 0; r < R; r++) total += bf.loss[r];
    nd->out->data[0] = LT__CE_DENOM(nd) > 0 ? (float)(total / LT__CE_DENOM(nd)) : 0.0f;
}
static void lt__linear_ce16_bwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC2(nd));
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C, r;
    lt__ce16_bufs bf = lt__ce16_layout(nd);
    float *gx = lt__grad(nd->in[0], nd->ctx), *gw = lt__grad(nd->in[1], nd->ctx), g;
    lt__mm16_opnd dz = lt__opnd16(NULL, bf.z, V, 0, 0), dzt = lt__opnd16(NULL, bf.z, V, 0, 1), x, w;
    if (!(LT__LCE_DENOM(nd) > 0)) return;
    g = (float)(nd->out->grad[0] / LT__CE_DENOM(nd));
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++) {   /* dz over z, in pieces */
        uint16_t *zr = bf.z + r * V;
        int32_t t = nd->ids[r];
        float v[256], m = bf.m[r], ls = bf.lse[r];
        int64_t j, j0;
        for (j0 = 0; j0 < V; j0 += 256) {
            int64_t n = V - j0 < 256 ? V - j0 : 256;
            if (t == LT_IGNORE_INDEX) {
                memset(zr + j0, 0, (size_t)n * sizeof(uint16_t));
                continue;
            }
            lt__from16(p, zr + j0, v, (size_t)n);
            LT__OMP(simd)
            for (j = 0; j < n; j++) v[j] = 0.0f + g * lt__exp_neg((v[j] - m) - ls);
            if (t >= j0 && t < j0 + n) v[t - j0] -= g;
            lt__to16(p, v, zr + j0, (size_t)n);
        }
    }
    if (gx) {   /* dx (R,C) += dz · W */
        w = lt__opnd16(nd->in[1]->data, NULL, C, 0, 0);
        lt__gemm16(p, 1, R, C, V, &dz, &w, NULL, gx, C, 0, 1);
    }
    if (gw) {   /* dW (V,C) += dzᵀ · x */
        x = lt__opnd16_of(nd, 0, C, 0, 0);
        lt__gemm16(p, 1, V, C, R, &dzt, &x, NULL, gw, C, 0, 1);
    }
}
/* The op behind lt_gpt_loss(_ex) at 16-bit precision (x = ln_f's output, W = the head: wte or lm_head). */
static lt_tensor *lt__linear_ce16(lt_ctx *ctx, const char *who, lt_tensor *x, lt_tensor *w, const int32_t *targets,
                                  double denom, int use_count) {
    int64_t V, C, R, one = 1;
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, who, x, w)) return NULL;
    C = x->shape[x->ndim - 1];
    if (w->ndim != 2 || w->shape[1] != C) {
        lt_set_error(ctx, LT_ERR_SHAPE, "%s: x is %s, W is %s: W must be [V,C] with C = x's last dim", who,
                     lt_shape_str(x, b1, sizeof b1), lt_shape_str(w, b2, sizeof b2));
        return NULL;
    }
    V = w->shape[0];
    R = x->n / C;
    if (!lt__ce_check(ctx, who, x, V, R, targets, denom, use_count)) return NULL;
    nd = lt__node_new(ctx, LT__OP(linear_ce16), 1, &one, x, w, NULL, 0);
    if (!nd || !lt__node_ids(ctx, nd, targets, R)) return NULL;
    LT__LCE_V(nd) = V;
    LT__LCE_C(nd) = C;
    LT__LCE_DENOM(nd) = use_count ? (double)lt_count_targets(targets, R) : denom;
    LT__PREC2(nd) = (double)ctx->precision;
    if (nd->out->requires_grad && w->requires_grad && !lt__is_param_data(x) && lt__copy16(ctx, x) &&
        !lt__save(ctx, nd, 0, (x->n + 1) / 2))
        return NULL;
    if (!lt__save(ctx, nd, 1, lt__ce16_save_floats(R, V))) return NULL;
    return lt__run(ctx, nd);
}

/* pred, target (n) -> loss [1] = Σ (p - t)² / n  (torch.nn.MSELoss, mean);
   dp += dloss·2(p - t)/n,  dt -= the same */
/* ---- @@LOSS.mse  mse ------------------------------------------------------------------------- */
static void lt__mse_fwd(lt__node *nd) {
    const float *p = nd->in[0]->data, *t = nd->in[1]->data;
    int64_t i, n = nd->in[0]->n;
    double s = 0;
    for (i = 0; i < n; i++) { double d = (double)p[i] - t[i]; s += d * d; }
    nd->out->data[0] = (float)(s / (double)n);
}
static void lt__mse_bwd(lt__node *nd) {
    const float *p = nd->in[0]->data, *t = nd->in[1]->data;
    float *gp = lt__grad(nd->in[0], nd->ctx), *gt = lt__grad(nd->in[1], nd->ctx);
    float g = nd->out->grad[0] * 2.0f / (float)nd->in[0]->n;
    int64_t i, n = nd->in[0]->n;
    for (i = 0; i < n; i++) {
        float d = g * (p[i] - t[i]);
        if (gp) gp[i] += d;
        if (gt) gt[i] -= d;
    }
}
LTRAIN_DEF lt_tensor *lt_mse_loss(lt_ctx *ctx, lt_tensor *pred, lt_tensor *target) {
    int64_t one = 1;
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_mse_loss", pred, target)) return NULL;
    if (pred->n != target->n) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_mse_loss: pred is %s, target is %s: they need the same number of "
                     "elements", lt_shape_str(pred, b1, sizeof b1), lt_shape_str(target, b2, sizeof b2));
        return NULL;
    }
    nd = lt__node_new(ctx, LT__OP(mse), 1, &one, pred, target, NULL, 0);
    return lt__run(ctx, nd);
}

/* ---- @@LOSS.gpt  the GPT's loss: its trunk (@@NN), then the head and the cross-entropy ----------- */
/* lt_gpt_loss and lt_gpt_loss_ex: the mean over counted targets (denom <= 0) or the sum / denom.
   At 16-bit precision the head and the loss are one op (linear_ce16, @@LOSS): the same numbers
   as lt_linear + lt_cross_entropy there, without float32 logits. */
static lt_tensor *lt__gpt_loss(lt_gpt *g, const int32_t *ids, const int32_t *targets, int B, int T,
                               const int32_t *lengths, double denom) {
    lt_tensor *x, *loss;
    if (g && g->ctx && g->ctx->precision != LT_F32 && g->ctx->device == LT_CPU) {   /* CUDA: head + loss apart */
        x = lt__gpt_trunk(g, ids, B, T, lengths);
        if (!x) return NULL;
        loss = lt__linear_ce16(g->ctx, denom > 0 ? "lt_cross_entropy_sum" : "lt_cross_entropy", x, g->head, targets,
                               denom, denom <= 0);
        lt_scope(g->ctx, NULL);
        return loss;
    }
    x = lt_gpt_forward(g, ids, B, T, lengths);
    if (!x) return NULL;
    loss = denom > 0 ? lt_cross_entropy_sum(g->ctx, x, targets, denom) : lt_cross_entropy(g->ctx, x, targets);
    /* these logits are the loss's alone (never returned, read by nothing after the cross-entropy's
       backward): it may write their gradient over them, R·V floats less (@@LOSS) */
    if (loss && loss->node && loss->node->op == LT__OP(cross_entropy) && loss->node->in[0] == x) LT__CE_OVER(loss->node) = 1;
    return loss;
}
LTRAIN_DEF lt_tensor *lt_gpt_loss(lt_gpt *g, const int32_t *ids, const int32_t *targets, int B, int T) {
    return lt__gpt_loss(g, ids, targets, B, T, NULL, 0);
}

/* ---- src/12_optim.h ---- */
/* ==== @@OPTIM  optimizers: AdamW, SGD with momentum ============================================ */
/* Holds: lt_optim and its public calls, AdamW and SGD with momentum, the table that later
   optimizers plug into (lt__optim_ops).
   Calls: @@CORE, @@GEMM's kernel pick (the AVX-512 AdamW); the device through ctx->dev. */

#define LT__OPT_PAR_MIN 32768 /* elements below which a loop stays on one thread */

typedef enum {
    LT__OPT_ADAMW = 0, LT__OPT_SGD, LT__OPT_LION, LT__OPT_ADEMAMIX, LT__OPT_MUON, LT__OPT_SOAP
} lt__opt_kind;

/* ---- @@OPTIM.table  the optimizer table, the constructors ------------------------------------ */
/* The optimizer table: one row per optimizer, which the public lt_optim_* calls go through.
   AdamW's and SGD's rows are below; Lion's, AdEMAMix's, Muon's and SOAP's follow their kernels
   in @@OPTIM (continued), and those keep their own state behind lt_optim's `ext`. */
typedef struct lt__optim_ops {
    lt__opt_kind kind;
    const char *name;
    const char *const *state_names;                            /* torch's state_dict names, by `which` */
    /* one step of parameter i, which has a gradient, at learning rate lr (finite); an error goes
       to the context and ends the step */
    void (*update)(lt_optim *o, int i, double lr);
    void (*free_ext)(lt_optim *o);                             /* NULL: nothing behind ext */
    /* buffer `which` of parameter i and its float count (NULL, 0: this parameter has none);
       *per_elem = 1 when element k belongs to parameter element k (lt_optim_state's kind) */
    float *(*state)(lt_optim *o, int param_index, int which, int64_t *count, int *per_elem);
} lt__optim_ops;

struct lt_optim {
    lt_ctx *ctx;
    lt__opt_kind kind;
    lt_adamw_config adamw;
    lt_sgd_config sgd;
    lt_tensor **p;        /* np parameters (the list is ours, the tensors are not) */
    int np;
    int nstates;          /* AdamW: 2; SGD: 1 with momentum, else 0 */
    float *block;         /* every state buffer, back to back */
    float **st;           /* st[i*nstates + which] -> n floats of parameter i */
    int64_t *pstep;       /* per-parameter update count (torch keeps state['step'] per tensor) */
    unsigned char *hasbuf;/* SGD: momentum buffer exists (torch makes it on the first gradient) */
    int64_t t;            /* lt_optim_step calls that ran */
    double lr;            /* the configured learning rate (lt_optim_step's lr < 0) */
    const lt__optim_ops *ops; /* this optimizer's row of the table */
    void *ext;
    float *dev_block;     /* on a device: `block` there (AdamW, SGD), and which copy is current */
    int dev_state;
    const lt__device *dev;/* ... that device, which brings the state home and frees it */
};

LTRAIN_DEF lt_adamw_config lt_adamw_defaults(void) {
    lt_adamw_config c;
    c.lr = 1e-3; c.beta1 = 0.9; c.beta2 = 0.999; c.eps = 1e-8; c.weight_decay = 0.01;
    c.decay_mode = LT_DECAY_MARKED;
    return c;
}

LTRAIN_DEF lt_sgd_config lt_sgd_defaults(void) {
    lt_sgd_config c;
    c.lr = 1e-3; c.momentum = 0; c.dampening = 0; c.weight_decay = 0; c.nesterov = 0;
    c.decay_mode = LT_DECAY_MARKED;
    return c;
}

static int lt__opt_decays(lt_decay_mode mode, const lt_tensor *t) {
    return mode == LT_DECAY_ALL || (mode == LT_DECAY_MARKED && t->decay);
}

/* The shared part of every constructor: check the list, copy it, allocate zeroed state. */
static lt_optim *lt__optim_new(lt_ctx *ctx, const char *who, lt_paramset params, const lt__optim_ops *ops,
                               int nstates) {
    lt_optim *o;
    size_t total = 0, bytes;
    int i;
    if (!ctx) return NULL;
    if (lt_failed(ctx)) return NULL;
    if (params.n <= 0 || !params.p) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: the parameter list is empty (hint: create the parameters "
                     "before the optimizer, e.g. lt_ctx_params(ctx) after building the model)", who);
        return NULL;
    }
    for (i = 0; i < params.n; i++) {
        const lt_tensor *t = params.p[i];
        if (!t || !t->data) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: parameter %d is NULL or has no data", who, i);
            return NULL;
        }
        if (t->dtype != LT_F32) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: parameter '%s' is not float32 (only LT_F32 is updated)",
                         who, t->name ? t->name : "?");
            return NULL;
        }
        if (t->n < 0 || !lt_add_size(total, (size_t)t->n, &total)) {
            lt_set_error(ctx, LT_ERR_NOMEM, "%s: parameter sizes overflow", who);
            return NULL;
        }
    }
    o = (lt_optim *)LT__MALLOC(sizeof(lt_optim));
    if (!o) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", who); return NULL; }
    memset(o, 0, sizeof *o);
    o->ctx = ctx; o->kind = ops->kind; o->ops = ops; o->np = params.n; o->nstates = nstates;
    o->p = (lt_tensor **)LT__MALLOC((size_t)params.n * sizeof(lt_tensor *));
    o->pstep = (int64_t *)LT__MALLOC((size_t)params.n * sizeof(int64_t));
    o->hasbuf = (unsigned char *)LT__MALLOC((size_t)params.n);
    o->st = nstates ? (float **)LT__MALLOC((size_t)params.n * (size_t)nstates * sizeof(float *)) : NULL;
    if (!o->p || !o->pstep || !o->hasbuf || (nstates && !o->st)) goto oom;
    memcpy(o->p, params.p, (size_t)params.n * sizeof(lt_tensor *));
    memset(o->pstep, 0, (size_t)params.n * sizeof(int64_t));
    memset(o->hasbuf, 0, (size_t)params.n);
    if (nstates) {
        float *q;
        int w;
        if (!lt_mul_size(total, (size_t)nstates, &total) || !lt_mul_size(total, sizeof(float), &bytes))
            goto oom;
        o->block = (float *)LT__MALLOC(bytes ? bytes : 1);
        if (!o->block) goto oom;
        memset(o->block, 0, bytes);
        for (q = o->block, i = 0; i < params.n; i++)
            for (w = 0; w < nstates; w++) { o->st[i * nstates + w] = q; q += params.p[i]->n; }
    }
    return o;
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for the optimizer state of %d parameters", who,
                 params.n);
    lt_optim_destroy(o);
    return NULL;
}

/* ---- @@OPTIM.adamw  AdamW -------------------------------------------------------------------- */
/* AdamW on n elements, as torch.optim.AdamW's single-tensor path (t counted from 1):
     θ ← θ·(1 − lr·λ)                                     (decayed parameters only)
     m ← β1·m + (1−β1)·g          v ← β2·v + (1−β2)·g·g
     θ ← θ − (lr/(1−β1ᵗ)) · m / (sqrt(v)/sqrt(1−β2ᵗ) + ε)
   Every scalar is formed in double and rounded once to float; the float expressions keep torch's
   operation order and the fused multiply-adds its CPU kernels execute (AVX2/AVX-512 builds:
   a + α·b is fma(α, b, a); a + s·x·y is fma(s·x, y, a)), so the results equal torch's fp32 ones
   bit for bit (tests/test_optim.c).  fmaf is one instruction with -mfma or -march=native and a
   (correctly rounded) libm call otherwise.  The decay gets its own pass, as in torch: inside the
   main loop a compiler contracting floating-point expressions (GNU C with FMA enabled) would fuse
   θ·(1 − lr·λ) into the final addition and change the last bit. */
#ifdef LT__X86
LT__TARGET("avx512f") static void lt__adamw_avx512(float *p, float *m, float *v, const float *g, int64_t n,
                                                  float shrink, float b1, float omb1, float b2, float omb2,
                                                  float bc2_sqrt, float eps, float neg_step);   /* fast path, below */
#endif
static void lt__adamw_update(float *p, float *m, float *v, const float *g, int64_t n, float shrink,
                             float b1, float omb1, float b2, float omb2, float bc2_sqrt, float eps,
                             float neg_step) {
    int64_t b;
#ifdef LT__X86
    int simd = lt__gemm_pick() == LT__GEMM_AVX512;
#endif
    /* threads take pieces of LT__EWB values; each piece is the decay pass, then the update pass
       (torch's two passes: no contraction can merge them), the second from cache */
    LT__OMP(parallel for if (n >= LT__OPT_PAR_MIN))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, hi = lo + LT__EWB < n ? lo + LT__EWB : n, i;
#ifdef LT__X86
        if (simd) {
            lt__adamw_avx512(p + lo, m + lo, v + lo, g + lo, hi - lo, shrink, b1, omb1, b2, omb2, bc2_sqrt, eps,
                             neg_step);
            continue;
        }
#endif
        if (shrink != 1.0f)
            for (i = lo; i < hi; i++) p[i] *= shrink;
        for (i = lo; i < hi; i++) {
            float mi = fmaf(omb1, g[i], m[i] * b1);
            float vi = fmaf(omb2 * g[i], g[i], v[i] * b2);
            float den = sqrtf(vi) / bc2_sqrt + eps;
            m[i] = mi;
            v[i] = vi;
            p[i] = p[i] + neg_step * mi / den;
        }
    }
}

/* ---- fast paths: AVX-512 (AdamW) ------------------------------------------------------------- */
#ifdef LT__X86
/* The same two passes with AVX-512, 16 values at a time (the last ones masked): the compiler
   cannot vectorise sqrtf itself while it may have to set errno.  Every operation is an IEEE one
   rounded once, as in the scalar loops, so the bits are the same; the decayed p stays in a
   register between the two passes. */
LT__TARGET("avx512f") static void lt__adamw_avx512(float *p, float *m, float *v, const float *g, int64_t n,
                                                  float shrink, float b1, float omb1, float b2, float omb2,
                                                  float bc2_sqrt, float eps, float neg_step) {
    __m512 vb1 = _mm512_set1_ps(b1), vomb1 = _mm512_set1_ps(omb1), vb2 = _mm512_set1_ps(b2);
    __m512 vomb2 = _mm512_set1_ps(omb2), vbc = _mm512_set1_ps(bc2_sqrt), veps = _mm512_set1_ps(eps);
    __m512 vstep = _mm512_set1_ps(neg_step), vshr = _mm512_set1_ps(shrink);
    int64_t i;
    for (i = 0; i < n; i += 16) {
        __mmask16 k = (__mmask16)(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1u);
        __m512 pi = _mm512_maskz_loadu_ps(k, p + i), gi = _mm512_maskz_loadu_ps(k, g + i);
        __m512 mi = _mm512_fmadd_ps(vomb1, gi, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, m + i), vb1));
        __m512 vi = _mm512_fmadd_ps(_mm512_mul_ps(vomb2, gi), gi, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, v + i), vb2));
        __m512 den = _mm512_add_ps(_mm512_div_ps(_mm512_maskz_sqrt_ps(LT__M16, vi), vbc), veps);
        if (shrink != 1.0f)   /* (a builtin: never contracted into the add below; maskz: see LT__M16) */
            pi = _mm512_maskz_mul_round_ps(LT__M16, pi, vshr, _MM_FROUND_CUR_DIRECTION);
        _mm512_mask_storeu_ps(m + i, k, mi);
        _mm512_mask_storeu_ps(v + i, k, vi);
        _mm512_mask_storeu_ps(p + i, k, _mm512_add_ps(pi, _mm512_div_ps(_mm512_mul_ps(vstep, mi), den)));
    }
}
#endif

/* ---- @@OPTIM.sgd  SGD with momentum ---------------------------------------------------------- */
/* SGD on n elements, as torch.optim.SGD:
     d ← g + λθ ;   b ← d on the first step, then b ← μ·b + (1−τ)·d     (momentum μ, dampening τ)
     d ← d + μ·b (nesterov) or d ← b ;   θ ← θ − lr·d
   buf is NULL without momentum; first says the buffer does not exist yet.  The fmas are torch's
   (see above): bit-identical results. */
static void lt__sgd_update(float *p, float *buf, const float *g, int64_t n, float wd, float mom,
                           float omdamp, int nesterov, int first, float neg_lr) {
    int64_t i;
    LT__OMP(parallel for simd if (parallel : n >= LT__OPT_PAR_MIN))
    for (i = 0; i < n; i++) {
        float d = g[i];
        if (wd != 0) d = fmaf(wd, p[i], d);
        if (buf) {
            float b = first ? d : fmaf(omdamp, d, buf[i] * mom);
            buf[i] = b;
            d = nesterov ? fmaf(mom, b, d) : b;
        }
        p[i] = fmaf(neg_lr, d, p[i]);
    }
}

/* ---- @@OPTIM.step  the rows of AdamW and SGD, the step, the state ----------------------------- */
/* AdamW's and SGD's rows: their state is opt->st, one buffer per parameter element each. */
static void lt__adamw_param(lt_optim *o, int i, double lr) {
    const lt_adamw_config *c = &o->adamw;
    lt_tensor *t = o->p[i];
    double step = (double)(++o->pstep[i]);
    double bc1 = 1.0 - pow(c->beta1, step), bc2 = 1.0 - pow(c->beta2, step);
    double wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
    lt__adamw_update(t->data, o->st[i * 2], o->st[i * 2 + 1], t->grad, t->n, (float)(1.0 - lr * wd),
                     (float)c->beta1, (float)(1.0 - c->beta1), (float)c->beta2, (float)(1.0 - c->beta2),
                     (float)sqrt(bc2), (float)c->eps, (float)(-(lr / bc1)));
}
static void lt__sgd_param(lt_optim *o, int i, double lr) {
    const lt_sgd_config *c = &o->sgd;
    lt_tensor *t = o->p[i];
    double wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
    float *buf = o->nstates ? o->st[i] : NULL;
    lt__sgd_update(t->data, buf, t->grad, t->n, (float)wd, (float)c->momentum, (float)(1.0 - c->dampening),
                   c->nesterov, !o->hasbuf[i], (float)(-lr));
    o->hasbuf[i] = 1;
    o->pstep[i]++;
}
static float *lt__optim_st_state(lt_optim *o, int i, int which, int64_t *count, int *per_elem) {
    *count = 0;
    *per_elem = 0;
    if (i < 0 || i >= o->np || which < 0 || which >= o->nstates) return NULL;
    *count = o->p[i]->n;
    *per_elem = 1;
    return o->st[i * o->nstates + which];
}
static const char *const lt__adamw_states[] = {"exp_avg", "exp_avg_sq"};
static const char *const lt__sgd_states[] = {"momentum_buffer"};
static const lt__optim_ops lt__adamw_ops = {LT__OPT_ADAMW, "adamw", lt__adamw_states, lt__adamw_param, NULL,
                                            lt__optim_st_state};
static const lt__optim_ops lt__sgd_ops = {LT__OPT_SGD, "sgd", lt__sgd_states, lt__sgd_param, NULL,
                                          lt__optim_st_state};

LTRAIN_DEF lt_optim *lt_adamw_create(lt_ctx *ctx, lt_paramset params, lt_adamw_config cfg) {
    lt_optim *o;
    if (!ctx || lt_failed(ctx)) return NULL;
    /* the ranges torch.optim.AdamW accepts */
    if (!(cfg.lr >= 0) || !(cfg.eps >= 0) || !(cfg.beta1 >= 0 && cfg.beta1 < 1) ||
        !(cfg.beta2 >= 0 && cfg.beta2 < 1) || !(cfg.weight_decay >= 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_adamw_create: lr %g, betas (%g, %g), eps %g, weight_decay %g: "
                     "need lr >= 0, 0 <= beta < 1, eps >= 0, weight_decay >= 0",
                     cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay);
        return NULL;
    }
    o = lt__optim_new(ctx, "lt_adamw_create", params, &lt__adamw_ops, 2);
    if (o) { o->adamw = cfg; o->lr = cfg.lr; }
    return o;
}

LTRAIN_DEF lt_optim *lt_sgd_create(lt_ctx *ctx, lt_paramset params, lt_sgd_config cfg) {
    lt_optim *o;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!(cfg.lr >= 0) || !(cfg.momentum >= 0) || !(cfg.weight_decay >= 0) || !(cfg.dampening == cfg.dampening)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_sgd_create: lr %g, momentum %g, dampening %g, weight_decay %g: "
                     "need lr, momentum and weight_decay >= 0", cfg.lr, cfg.momentum, cfg.dampening,
                     cfg.weight_decay);
        return NULL;
    }
    if (cfg.nesterov && (cfg.momentum <= 0 || cfg.dampening != 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_sgd_create: nesterov needs momentum > 0 and dampening 0 "
                     "(got momentum %g, dampening %g), as torch.optim.SGD", cfg.momentum, cfg.dampening);
        return NULL;
    }
    o = lt__optim_new(ctx, "lt_sgd_create", params, &lt__sgd_ops, cfg.momentum != 0 ? 1 : 0);
    if (o) { o->sgd = cfg; o->lr = cfg.lr; }
    return o;
}

/* A step on the host, any optimizer: lr < 0 takes the configured one; then the row's update on
   every parameter with a gradient (torch skips a parameter whose .grad is None; Muon's reference
   steps it with a zero gradient, so Muon gets every parameter), in order, up to an error. */
static lt_status lt__optim_host_step(lt_optim *opt, double lr) {
    int i;
    if (lr < 0) lr = opt->lr;
    if (!(lr - lr == 0)) /* NaN or inf */
        return lt_set_error(opt->ctx, LT_ERR_ARG, "lt_optim_step: the learning rate is %g "
                            "(hint: check the schedule's settings)", lr);
    for (i = 0; i < opt->np && !lt_failed(opt->ctx); i++)
        if (opt->p[i]->grad || opt->kind == LT__OPT_MUON) opt->ops->update(opt, i, lr);
    if (!lt_failed(opt->ctx)) opt->t++;
    return lt_status_of(opt->ctx);
}

LTRAIN_DEF lt_status lt_optim_step(lt_optim *opt, double lr) {
    if (!opt) return LT_ERR_ARG;
    if (lt_failed(opt->ctx)) return lt_status_of(opt->ctx);
    if (opt->ctx->dev) return opt->ctx->dev->optim_step(opt, lr);   /* the device seam (@@CORE) */
    if (opt->dev_block) opt->dev->optim_pull(opt);   /* back from the device: the moments come home */
    return lt__optim_host_step(opt, lr);
}

LTRAIN_DEF void lt_optim_destroy(lt_optim *opt) {
    if (!opt) return;
    if (opt->dev_block) opt->dev->optim_free(opt);
    if (opt->ops->free_ext) opt->ops->free_ext(opt);
    LT__FREE(opt->block);
    LT__FREE(opt->st);
    LT__FREE(opt->hasbuf);
    LT__FREE(opt->pstep);
    LT__FREE(opt->p);
    LT__FREE(opt);
}

LTRAIN_DEF int64_t lt_optim_steps(const lt_optim *opt) { return opt ? opt->t : 0; }

/* Resuming: every parameter counts t updates, and SGD's momentum buffers count as made when
   t > 0 (load them with lt_optim_state). */
LTRAIN_DEF void lt_optim_set_steps(lt_optim *opt, int64_t t) {
    int i;
    if (!opt || t < 0) return;
    opt->t = t;
    for (i = 0; i < opt->np; i++) { opt->pstep[i] = t; opt->hasbuf[i] = (unsigned char)(t > 0); }
}

LTRAIN_DEF const char *lt_optim_name(const lt_optim *opt) {
    return opt ? opt->ops->name : "";
}

LTRAIN_DEF int lt_optim_num_states(const lt_optim *opt) { return opt ? opt->nstates : 0; }

/* The names torch's optimizer state_dict uses. */
LTRAIN_DEF const char *lt_optim_state_name(const lt_optim *opt, int which) {
    if (!opt || which < 0 || which >= opt->nstates) return NULL;
    return opt->ops->state_names[which];
}

LTRAIN_DEF float *lt_optim_state(lt_optim *opt, int param_index, int which) {
    if (!opt || param_index < 0 || param_index >= opt->np || which < 0 || which >= opt->nstates)
        return NULL;
    if (opt->dev_block) opt->dev->optim_pull(opt);   /* the caller may read or write it: host copy current */
    {
        int64_t count = 0;
        int per_elem = 0;
        float *p = opt->ops->state(opt, param_index, which, &count, &per_elem);
        return per_elem ? p : NULL; /* the rest: lt_optim_state_buf */
    }
}

LTRAIN_DEF lt_paramset lt_optim_params(const lt_optim *opt) {
    lt_paramset s;
    s.p = opt ? opt->p : NULL;
    s.n = opt ? opt->np : 0;
    return s;
}

/* ---- src/13_optim_more.h ---- */
/* ==== @@OPTIM (continued)  Lion, AdEMAMix, Muon, SOAP ========================================== */
/* Holds: Lion, AdEMAMix, Muon (Newton-Schulz) and SOAP (eigenbases by Jacobi sweeps), plugged
   into lt_optim through lt__optim_ops.
   Calls: @@CORE, @@GEMM (lt_sgemm), @@OPTIM (AdamW's update, the optimizer table). */
/* Each has a row of the optimizer table (lt__optim_ops, @@OPTIM).  Their state lives in one block
   behind opt->ext: buf[i*ns + which] -> cnt[i*ns + which] floats, NULL where parameter i holds
   no state of that kind.  The elementwise kernels keep torch's operation order and fused
   multiply-adds, as AdamW's does (a + α·b in torch's CPU kernels is fma(α, b, a)). */

typedef struct {
    lt_lion_config lion;
    lt_ademamix_config adem;
    lt_muon_config muon;
    lt_soap_config soap;
    int ns;                    /* state kinds */
    float **buf;               /* [np*ns] */
    int64_t *cnt;              /* [np*ns] */
    float *block;
    unsigned char *sel;        /* Muon: 1 = Muon parameter */
    int64_t *rows, *cols;      /* the matrix view [shape[0], n/shape[0]]; 1-D: [n], cols 0 */
    int64_t *dl, *dr;          /* SOAP: the sides that have a factor (0: none) */
    float *work;               /* scratch of the matrix optimizers */
} lt__x;

static const char *const lt__lion_states[] = {"exp_avg"};
static const char *const lt__adem_states[] = {"exp_avg_fast", "exp_avg_slow", "exp_avg_sq"};
static const char *const lt__muon_states[] = {"momentum_buffer", "exp_avg", "exp_avg_sq"};
static const char *const lt__soap_states[] = {"exp_avg", "exp_avg_sq", "GG_L", "GG_R", "Q_L", "Q_R"};

static lt__x *lt__xof(const lt_optim *o) { return (lt__x *)o->ext; }

static void lt__x_free(lt_optim *o) {
    lt__x *x = lt__xof(o);
    if (!x) return;
    LT__FREE(x->buf); LT__FREE(x->cnt); LT__FREE(x->block); LT__FREE(x->sel);
    LT__FREE(x->rows); LT__FREE(x->cols); LT__FREE(x->dl); LT__FREE(x->dr); LT__FREE(x->work);
    LT__FREE(x);
    o->ext = NULL;
}

static float *lt__x_state(lt_optim *o, int i, int which, int64_t *count, int *per_elem) {
    lt__x *x = lt__xof(o);
    *count = 0;
    *per_elem = 0;
    if (i < 0 || i >= o->np || which < 0 || which >= x->ns || !x->buf[i * x->ns + which]) return NULL;
    *count = x->cnt[i * x->ns + which];
    *per_elem = o->kind != LT__OPT_SOAP || which < 2; /* SOAP's factors and bases are square */
    return x->buf[i * x->ns + which];
}

/* The four rows of the optimizer table: each optimizer's update follows its kernels below. */
static void lt__lion_param(lt_optim *o, int i, double lr);
static void lt__ademamix_param(lt_optim *o, int i, double lr);
static void lt__muon_param(lt_optim *o, int i, double lr);
static void lt__soap_param(lt_optim *o, int i, double lr);
static const lt__optim_ops lt__lion_ops = {LT__OPT_LION, "lion", lt__lion_states, lt__lion_param, lt__x_free,
                                           lt__x_state};
static const lt__optim_ops lt__ademamix_ops = {LT__OPT_ADEMAMIX, "ademamix", lt__adem_states, lt__ademamix_param,
                                               lt__x_free, lt__x_state};
static const lt__optim_ops lt__muon_ops = {LT__OPT_MUON, "muon", lt__muon_states, lt__muon_param, lt__x_free,
                                           lt__x_state};
static const lt__optim_ops lt__soap_ops = {LT__OPT_SOAP, "soap", lt__soap_states, lt__soap_param, lt__x_free,
                                           lt__x_state};

/* A new optimizer of this row with ns state kinds and empty buffers, lr its configured learning
   rate: the constructor fills x->cnt (and sel, dl, dr), then calls lt__x_alloc.  NULL (error on
   ctx) as lt__optim_new. */
static lt_optim *lt__x_new(lt_ctx *ctx, const char *who, lt_paramset params, const lt__optim_ops *ops, int ns,
                           double lr) {
    lt_optim *o = lt__optim_new(ctx, who, params, ops, 0);
    lt__x *x;
    size_t np;
    int i;
    if (!o) return NULL;
    np = (size_t)o->np;
    x = (lt__x *)LT__MALLOC(sizeof(lt__x));
    if (!x) goto oom;
    memset(x, 0, sizeof *x);
    o->ext = x;   /* from here on lt_optim_destroy frees x too */
    o->nstates = ns;
    o->lr = lr;
    x->ns = ns;
    x->buf = (float **)LT__MALLOC(np * (size_t)ns * sizeof(float *));
    x->cnt = (int64_t *)LT__MALLOC(np * (size_t)ns * sizeof(int64_t));
    x->sel = (unsigned char *)LT__MALLOC(np);
    x->rows = (int64_t *)LT__MALLOC(np * sizeof(int64_t));
    x->cols = (int64_t *)LT__MALLOC(np * sizeof(int64_t));
    x->dl = (int64_t *)LT__MALLOC(np * sizeof(int64_t));
    x->dr = (int64_t *)LT__MALLOC(np * sizeof(int64_t));
    if (!x->buf || !x->cnt || !x->sel || !x->rows || !x->cols || !x->dl || !x->dr) goto oom;
    memset(x->sel, 0, np);
    memset(x->cnt, 0, np * (size_t)ns * sizeof(int64_t));
    for (i = 0; i < o->np; i++) {
        const lt_tensor *t = o->p[i];
        if (t->ndim < 2 || t->shape[0] <= 0) { x->rows[i] = t->n; x->cols[i] = 0; }
        else { x->rows[i] = t->shape[0]; x->cols[i] = t->n / t->shape[0]; }
        x->dl[i] = x->dr[i] = 0;
    }
    return o;
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", who);
    lt_optim_destroy(o);
    return NULL;
}

/* One zeroed block for every buffer counted in x->cnt, and nwork floats of scratch. */
static lt_optim *lt__x_alloc(lt_optim *o, const char *who, size_t nwork) {
    lt__x *x = lt__xof(o);
    size_t total = 0, k, nb = (size_t)o->np * (size_t)x->ns, bytes;
    float *q;
    for (k = 0; k < nb; k++)
        if (!lt_add_size(total, (size_t)x->cnt[k], &total)) goto oom;
    if (!lt_mul_size(total, sizeof(float), &bytes)) goto oom;
    x->block = (float *)LT__MALLOC(bytes ? bytes : 1);
    if (!x->block) goto oom;
    memset(x->block, 0, bytes);
    for (q = x->block, k = 0; k < nb; k++) {
        x->buf[k] = x->cnt[k] ? q : NULL;
        q += x->cnt[k];
    }
    if (nwork) {
        if (!lt_mul_size(nwork, sizeof(float), &bytes) || !(x->work = (float *)LT__MALLOC(bytes))) goto oom;
    }
    return o;
oom:
    lt_set_error(o->ctx, LT_ERR_NOMEM, "%s: out of memory for the optimizer state of %d parameters", who, o->np);
    lt_optim_destroy(o);
    return NULL;
}

static int lt__x_beta_ok(double b) { return b >= 0 && b < 1; }

/* ---- @@OPTIM.lion  Lion ------------------------------------------------------------------------- */
LTRAIN_DEF lt_lion_config lt_lion_defaults(void) {
    lt_lion_config c;
    c.lr = 1e-4; c.beta1 = 0.9; c.beta2 = 0.99; c.weight_decay = 0; c.decay_mode = LT_DECAY_MARKED;
    return c;
}

LTRAIN_DEF lt_optim *lt_lion_create(lt_ctx *ctx, lt_paramset params, lt_lion_config cfg) {
    lt_optim *o;
    int i;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!(cfg.lr >= 0) || !lt__x_beta_ok(cfg.beta1) || !lt__x_beta_ok(cfg.beta2) || !(cfg.weight_decay >= 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_lion_create: lr %g, betas (%g, %g), weight_decay %g: need lr >= 0, "
                     "0 <= beta < 1, weight_decay >= 0", cfg.lr, cfg.beta1, cfg.beta2, cfg.weight_decay);
        return NULL;
    }
    if (!(o = lt__x_new(ctx, "lt_lion_create", params, &lt__lion_ops, 1, cfg.lr))) return NULL;
    lt__xof(o)->lion = cfg;
    for (i = 0; i < o->np; i++) lt__xof(o)->cnt[i] = o->p[i]->n;
    return lt__x_alloc(o, "lt_lion_create", 0);
}

/* Lion on n elements, as the authors' lion_pytorch.py:
     p.mul_(1 − lr·λ);  u = m·β1 + g·(1−β1);  p.add_(sign(u), alpha=−lr);  m.mul_(β2).add_(g, alpha=1−β2)
   u is two products and a sum (not fused, as there); p − lr·sign(u) is one rounding either way. */
static void lt__lion_update(float *p, float *m, const float *g, int64_t n, float shrink, float b1, float omb1,
                            float b2, float omb2, float neg_lr) {
    int64_t i;
    if (shrink != 1.0f) {
        LT__OMP(parallel for simd if (parallel : n >= LT__OPT_PAR_MIN))
        for (i = 0; i < n; i++) p[i] *= shrink;
    }
    LT__OMP(parallel for simd if (parallel : n >= LT__OPT_PAR_MIN))
    for (i = 0; i < n; i++) {
        float u = m[i] * b1 + g[i] * omb1;
        float s = u > 0 ? 1.0f : u < 0 ? -1.0f : 0.0f; /* torch.sign: 0 stays 0 */
        p[i] = fmaf(neg_lr, s, p[i]);
        m[i] = fmaf(omb2, g[i], m[i] * b2);
    }
}
static void lt__lion_param(lt_optim *o, int i, double lr) {
    const lt_lion_config *c = &lt__xof(o)->lion;
    lt_tensor *t = o->p[i];
    double wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
    lt__lion_update(t->data, lt__xof(o)->buf[i], t->grad, t->n, (float)(1.0 - lr * wd), (float)c->beta1,
                    (float)(1.0 - c->beta1), (float)c->beta2, (float)(1.0 - c->beta2), (float)(-lr));
    o->pstep[i]++;
}

/* ---- @@OPTIM.ademamix  AdEMAMix ----------------------------------------------------------------- */
LTRAIN_DEF lt_ademamix_config lt_ademamix_defaults(void) {
    lt_ademamix_config c;
    c.lr = 1e-3; c.beta1 = 0.9; c.beta2 = 0.999; c.beta3 = 0.9999; c.alpha = 5.0; c.eps = 1e-8;
    c.weight_decay = 0; c.alpha_warmup = 0; c.beta3_warmup = 0; c.decay_mode = LT_DECAY_MARKED;
    return c;
}

/* linear_warmup_scheduler(step, alpha_end=α, alpha_start=0, warmup=T_α) */
LTRAIN_DEF double lt_ademamix_alpha(const lt_ademamix_config *c, int64_t t) {
    if (!c) return NAN;
    if (c->alpha_warmup > 0 && t < c->alpha_warmup) {
        double a = (double)t / (double)c->alpha_warmup;
        return (1.0 - a) * 0.0 + a * c->alpha;
    }
    return c->alpha;
}

/* linear_hl_warmup_scheduler(step, beta_end=β3, beta_start=β1, warmup=T_β3): linear in the
   half-life f(β) = ln(0.5)/ln(β + 1e-8) − 1, mapped back by β = 0.5^(1/(f+1)). */
LTRAIN_DEF double lt_ademamix_beta3(const lt_ademamix_config *c, int64_t t) {
    if (!c) return NAN;
    if (c->beta3_warmup > 0 && t < c->beta3_warmup) {
        double a = (double)t / (double)c->beta3_warmup;
        double f0 = log(0.5) / log(c->beta1 + 1e-8) - 1, f1 = log(0.5) / log(c->beta3 + 1e-8) - 1;
        return pow(0.5, 1 / ((1.0 - a) * f0 + a * f1 + 1));
    }
    return c->beta3;
}

LTRAIN_DEF lt_optim *lt_ademamix_create(lt_ctx *ctx, lt_paramset params, lt_ademamix_config cfg) {
    lt_optim *o;
    int i, w;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!(cfg.lr >= 0) || !(cfg.eps >= 0) || !lt__x_beta_ok(cfg.beta1) || !lt__x_beta_ok(cfg.beta2) ||
        !lt__x_beta_ok(cfg.beta3) || !(cfg.alpha >= 0) || !(cfg.weight_decay >= 0) || cfg.alpha_warmup < 0 ||
        cfg.beta3_warmup < 0) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_ademamix_create: lr %g, betas (%g, %g, %g), alpha %g, eps %g, "
                     "weight_decay %g, warm-ups %lld, %lld: need lr, alpha, eps, weight_decay, warm-ups >= 0 "
                     "and 0 <= beta < 1", cfg.lr, cfg.beta1, cfg.beta2, cfg.beta3, cfg.alpha, cfg.eps,
                     cfg.weight_decay, (long long)cfg.alpha_warmup, (long long)cfg.beta3_warmup);
        return NULL;
    }
    if (!(o = lt__x_new(ctx, "lt_ademamix_create", params, &lt__ademamix_ops, 3, cfg.lr))) return NULL;
    lt__xof(o)->adem = cfg;
    for (i = 0; i < o->np; i++)
        for (w = 0; w < 3; w++) lt__xof(o)->cnt[i * 3 + w] = o->p[i]->n;
    return lt__x_alloc(o, "lt_ademamix_create", 0);
}

/* AdEMAMix on n elements, as the reference's step (every scalar rounded once to float):
     m1.mul_(β1).add_(g, alpha=1−β1);  m2.mul_(β3).add_(g, alpha=1−β3);  v.mul_(β2).addcmul_(g, g, value=1−β2)
     denom = sqrt(v)/sqrt(1−β2ᵗ) + ε;  u = (m1/(1−β1ᵗ) + α·m2)/denom;  u.add_(θ, alpha=λ);  θ.add_(−lr·u) */
static void lt__ademamix_update(float *p, float *m1, float *m2, float *v, const float *g, int64_t n, float b1,
                                float omb1, float b2, float omb2, float b3, float omb3, float bc1, float bc2_sqrt,
                                float alpha, float eps, float wd, float neg_lr) {
    int64_t i;
    LT__OMP(parallel for if (n >= LT__OPT_PAR_MIN))
    for (i = 0; i < n; i++) {
        float a = fmaf(omb1, g[i], m1[i] * b1);
        float s = fmaf(omb3, g[i], m2[i] * b3);
        float q = fmaf(omb2 * g[i], g[i], v[i] * b2);
        float den = sqrtf(q) / bc2_sqrt + eps;
        float u = (a / bc1 + alpha * s) / den;
        u = fmaf(wd, p[i], u);
        m1[i] = a;
        m2[i] = s;
        v[i] = q;
        p[i] = p[i] + neg_lr * u;
    }
}
static void lt__ademamix_param(lt_optim *o, int i, double lr) {
    lt__x *x = lt__xof(o);
    const lt_ademamix_config *c = &x->adem;
    lt_tensor *t = o->p[i];
    int64_t step = ++o->pstep[i];
    double bc1 = 1.0 - pow(c->beta1, (double)step), bc2 = 1.0 - pow(c->beta2, (double)step);
    double a = lt_ademamix_alpha(c, step), b3 = lt_ademamix_beta3(c, step);
    double wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
    lt__ademamix_update(t->data, x->buf[i * 3], x->buf[i * 3 + 1], x->buf[i * 3 + 2], t->grad, t->n,
                        (float)c->beta1, (float)(1.0 - c->beta1), (float)c->beta2, (float)(1.0 - c->beta2),
                        (float)b3, (float)(1.0 - b3), (float)bc1, (float)sqrt(bc2), (float)a, (float)c->eps,
                        (float)wd, (float)(-lr));
}

/* ---- @@OPTIM.muon  Muon ------------------------------------------------------------------------- */
LTRAIN_DEF lt_muon_config lt_muon_defaults(void) {
    lt_muon_config c;
    memset(&c, 0, sizeof c);
    c.lr = 0.02; c.momentum = 0.95; c.weight_decay = 0; c.nesterov = 1; c.ns_steps = 5; c.ns_eps = 1e-7;
    c.adamw = lt_adamw_defaults();
    c.adamw.lr = 3e-4; c.adamw.beta1 = 0.9; c.adamw.beta2 = 0.95; c.adamw.eps = 1e-10; c.adamw.weight_decay = 0;
    c.select = NULL; c.select_user = NULL;
    return c;
}

LTRAIN_DEF int lt_muon_is_hidden(const lt_tensor *t, void *user) {
    static const char *const skip[] = {"wte", "wpe", "embed", "lm_head"};
    size_t k;
    (void)user;
    if (!t || t->ndim != 2) return 0;
    for (k = 0; k < sizeof skip / sizeof skip[0]; k++)
        if (t->name && strstr(t->name, skip[k])) return 0;
    return 1;
}

LTRAIN_DEF int lt_muon_uses_muon(const lt_optim *opt, int i) {
    if (!opt || opt->kind != LT__OPT_MUON || i < 0 || i >= opt->np) return 0;
    return lt__xof(opt)->sel[i];
}

/* Muon's matrices in a parameter, as the reference's muon_update: a 2-D tensor is one matrix
   [shape[0], shape[1]]; a 4-D one (conv filters) one matrix [shape[0], rest]; a 3-D one, or one of
   more than 4 dims, a batch of nb matrices [shape[-2], shape[-1]] over the leading dims, each
   normalised and orthogonalised on its own.  *ratio = shape[-2]/shape[-1] of the tensor's own last
   two dims (4-D too: the reference reads them from the unflattened gradient); the update is scaled
   by sqrt(max(1, ratio)). */
static void lt__muon_geom(const lt_tensor *t, int64_t *nb, int64_t *rows, int64_t *cols, double *ratio) {
    int d = t->ndim;
    *ratio = (double)t->shape[d - 2] / (double)t->shape[d - 1];
    if (d == 2 || d == 4) { *nb = 1; *rows = t->shape[0]; *cols = t->n / t->shape[0]; }
    else { *rows = t->shape[d - 2]; *cols = t->shape[d - 1]; *nb = t->n / (*rows * *cols); }
}

LTRAIN_DEF lt_optim *lt_muon_create(lt_ctx *ctx, lt_paramset params, lt_muon_config cfg) {
    lt_optim *o;
    lt__x *x;
    lt_param_filter sel = cfg.select ? cfg.select : lt_muon_is_hidden;
    size_t work = 0;
    int i;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!(cfg.lr >= 0) || !lt__x_beta_ok(cfg.momentum) || !(cfg.weight_decay >= 0) || cfg.ns_steps < 0 ||
        !(cfg.ns_eps >= 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_muon_create: lr %g, momentum %g, weight_decay %g, ns_steps %d, ns_eps %g: "
                     "need lr, weight_decay, ns_steps, ns_eps >= 0 and 0 <= momentum < 1", cfg.lr, cfg.momentum,
                     cfg.weight_decay, cfg.ns_steps, cfg.ns_eps);
        return NULL;
    }
    if (!(cfg.adamw.lr >= 0) || !(cfg.adamw.eps >= 0) || !lt__x_beta_ok(cfg.adamw.beta1) ||
        !lt__x_beta_ok(cfg.adamw.beta2) || !(cfg.adamw.weight_decay >= 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_muon_create: the AdamW part has lr %g, betas (%g, %g), eps %g, "
                     "weight_decay %g: need lr >= 0, 0 <= beta < 1, eps >= 0, weight_decay >= 0", cfg.adamw.lr,
                     cfg.adamw.beta1, cfg.adamw.beta2, cfg.adamw.eps, cfg.adamw.weight_decay);
        return NULL;
    }
    if (!(o = lt__x_new(ctx, "lt_muon_create", params, &lt__muon_ops, 3, cfg.lr))) return NULL;
    x = lt__xof(o);
    x->muon = cfg;
    for (i = 0; i < o->np; i++) {
        const lt_tensor *t = o->p[i];
        if (t->ndim >= 2 && sel(t, cfg.select_user)) {
            /* scratch: u (the whole tensor), then per matrix X, X' and three r×r matrices (r = the shorter side) */
            int64_t nb, rows, cols, r;
            double ratio;
            size_t need;
            lt__muon_geom(t, &nb, &rows, &cols, &ratio);
            r = rows < cols ? rows : cols;
            need = (size_t)t->n + 2 * (size_t)rows * (size_t)cols + 3 * (size_t)r * (size_t)r;
            x->sel[i] = 1;
            x->cnt[i * 3] = t->n;
            if (need > work) work = need;
        } else {
            x->cnt[i * 3 + 1] = x->cnt[i * 3 + 2] = t->n;
        }
    }
    return lt__x_alloc(o, "lt_muon_create", work);
}

/* X [r,c] (r <= c) <- NS5(X): ns_steps of X = a·X + (b·A + c·A·A)·X with A = X·Xᵀ, as the
   reference's zeropower_via_newtonschulz5 (after its normalisation), in float32.  w: 3r² + rc. */
static void lt__muon_ns(float *X, int64_t r, int64_t c, int steps, float *w) {
    const float ka = 3.4445f, kb = -4.7750f, kc = 2.0315f;
    float *A = w, *AA = w + r * r, *B = w + 2 * r * r, *BX = w + 3 * r * r;
    int s;
    int64_t i;
    for (s = 0; s < steps; s++) {
        lt_sgemm(0, 1, r, r, c, 1.0f, X, c, X, c, 0.0f, A, r);
        lt_sgemm(0, 0, r, r, r, 1.0f, A, r, A, r, 0.0f, AA, r);
        for (i = 0; i < r * r; i++) B[i] = kb * A[i] + kc * AA[i];
        lt_sgemm(0, 0, r, c, r, 1.0f, B, r, X, c, 0.0f, BX, c);
        for (i = 0; i < r * c; i++) X[i] = ka * X[i] + BX[i];
    }
}

/* torch.lerp(a, b, w) on CPU: |w| < 0.5 ? a + w·(b − a) : b − (b − a)·(1 − w), each formula one
   fused multiply-add in torch's build (the unfused forms differ in the last bit). */
static float lt__lerpf(float a, float b, float w) {
    return w < 0.5f && w > -0.5f ? fmaf(w, b - a, a) : fmaf(-(b - a), 1.0f - w, b);
}

/* One Muon update of parameter t (m: its momentum buffer), as muon_update + Muon.step:
     m.lerp_(g, 1−β);  u = nesterov ? g.lerp(m, β) : m;  for each matrix U of u (lt__muon_geom):
     X = NS5(U/(‖U‖+eps));  X *= sqrt(max(1, ratio));  θ.mul_(1 − lr·λ);  θ.add_(X, alpha=−lr)
   (the lerps as torch's, lt__lerpf).  g NULL: a zero gradient, as the reference steps a parameter
   whose .grad is None (the momentum decays, the weight decay applies). */
static void lt__muon_update(lt_tensor *t, float *m, const lt_muon_config *c, double lr, float *work) {
    int64_t n = t->n, nb, rows, cols, b, i, j, r, cc, per;
    float *u = work, *X, *ns;
    float w = (float)(1.0 - c->momentum), beta = (float)c->momentum, den, scale;
    float shrink = (float)(1.0 - lr * c->weight_decay), neg_lr = (float)(-lr), *p = t->data;
    double ratio;
    const float *g = t->grad;
    lt__muon_geom(t, &nb, &rows, &cols, &ratio);
    per = rows * cols;
    r = rows <= cols ? rows : cols;
    cc = rows <= cols ? cols : rows;
    X = work + n;
    ns = X + per;                                         /* 3r² + per */
    for (i = 0; i < n; i++) {
        float gi = g ? g[i] : 0.0f, mi = lt__lerpf(m[i], gi, w);
        m[i] = mi;
        u[i] = c->nesterov ? lt__lerpf(gi, mi, beta) : mi;
    }
    scale = (float)sqrt(ratio > 1.0 ? ratio : 1.0);
    for (i = 0; i < n; i++) p[i] *= shrink;
    for (b = 0; b < nb; b++) {
        const float *ub = u + b * per;
        float *pb = p + b * per;
        double ss = 0;
        /* X = U, or Uᵀ when rows > cols, so that X is r×cc with r <= cc */
        if (rows <= cols) memcpy(X, ub, (size_t)per * sizeof(float));
        else
            for (i = 0; i < rows; i++)
                for (j = 0; j < cols; j++) X[j * rows + i] = ub[i * cols + j];
        for (i = 0; i < per; i++) ss += (double)X[i] * (double)X[i];
        den = (float)sqrt(ss) + (float)c->ns_eps;
        for (i = 0; i < per; i++) X[i] = X[i] / den;
        lt__muon_ns(X, r, cc, c->ns_steps, ns);
        if (rows <= cols)
            for (i = 0; i < per; i++) pb[i] = fmaf(neg_lr, X[i] * scale, pb[i]);
        else
            for (i = 0; i < rows; i++)
                for (j = 0; j < cols; j++) pb[i * cols + j] = fmaf(neg_lr, X[j * rows + i] * scale, pb[i * cols + j]);
    }
}
/* Muon's parameters by Muon, the others by AdamW with the schedule's factor on its own lr. */
static void lt__muon_param(lt_optim *o, int i, double lr) {
    lt__x *x = lt__xof(o);
    const lt_muon_config *c = &x->muon;
    lt_tensor *t = o->p[i];
    if (x->sel[i]) {
        lt__muon_update(t, x->buf[i * 3], c, lr, x->work);
        o->pstep[i]++;
    } else {
        const lt_adamw_config *a = &c->adamw;
        double alr = c->lr > 0 ? a->lr * (lr / c->lr) : a->lr;
        double step = (double)(++o->pstep[i]);
        double bc1 = 1.0 - pow(a->beta1, step), bc2 = 1.0 - pow(a->beta2, step);
        double wd = lt__opt_decays(a->decay_mode, t) ? a->weight_decay : 0.0;
        float *g = t->grad, *zeros = NULL;
        if (!g) {   /* no gradient: a zero one, as the reference's MuonWithAuxAdam */
            if (!(zeros = lt__zeros((size_t)t->n))) {
                lt_set_error(o->ctx, LT_ERR_NOMEM, "lt_optim_step: out of memory for a zero gradient of \"%s\"",
                             t->name ? t->name : "?");
                return;
            }
            g = zeros;
        }
        lt__adamw_update(t->data, x->buf[i * 3 + 1], x->buf[i * 3 + 2], g, t->n, (float)(1.0 - alr * wd),
                         (float)a->beta1, (float)(1.0 - a->beta1), (float)a->beta2, (float)(1.0 - a->beta2),
                         (float)sqrt(bc2), (float)a->eps, (float)(-(alr / bc1)));
        LT__FREE(zeros);
    }
}

/* ---- @@OPTIM.soap  SOAP: linear algebra in double -------------------------------------------- */
/* Symmetric a (n×n, row-major) = V·diag(w)·Vᵀ: Householder reduction to tridiagonal form, then
   the implicit QL iteration with Wilkinson-style shifts (the EISPACK tred2/tql2 algorithms, as
   in JAMA).  v holds Vᵀ (row k = eigenvector k); working on Vᵀ keeps every inner loop contiguous
   in row-major storage.  e: n doubles of scratch.  Eigenvectors to ~1e-15 in double. */
#define LT__V(r, c) v[(c) * n + (r)]
/* tred2: v (holding a) -> the Householder reduction's orthogonal transformations, w the
   tridiagonal's diagonal and e[1..n) its off-diagonal (n >= 2). */
static void lt__eigh_tred2(double *v, double *w, double *e, int64_t n) {
    int64_t i, j, k;
    double f, g, h, hh, scale;
    for (j = 0; j < n; j++) w[j] = LT__V(n - 1, j);
    for (i = n - 1; i > 0; i--) {   /* tred2: the Householder reduction */
        scale = 0; h = 0;
        for (k = 0; k < i; k++) scale += fabs(w[k]);
        if (scale == 0) {
            e[i] = w[i - 1];
            for (j = 0; j < i; j++) { w[j] = LT__V(i - 1, j); LT__V(i, j) = 0; LT__V(j, i) = 0; }
        } else {
            for (k = 0; k < i; k++) { w[k] /= scale; h += w[k] * w[k]; }
            f = w[i - 1];
            g = sqrt(h);
            if (f > 0) g = -g;
            e[i] = scale * g;
            h -= f * g;
            w[i - 1] = f - g;
            for (j = 0; j < i; j++) e[j] = 0;
            for (j = 0; j < i; j++) {
                f = w[j];
                LT__V(j, i) = f;
                g = e[j] + LT__V(j, j) * f;
                for (k = j + 1; k <= i - 1; k++) { g += LT__V(k, j) * w[k]; e[k] += LT__V(k, j) * f; }
                e[j] = g;
            }
            f = 0;
            for (j = 0; j < i; j++) { e[j] /= h; f += e[j] * w[j]; }
            hh = f / (h + h);
            for (j = 0; j < i; j++) e[j] -= hh * w[j];
            for (j = 0; j < i; j++) {
                f = w[j]; g = e[j];
                for (k = j; k <= i - 1; k++) LT__V(k, j) -= (f * e[k] + g * w[k]);
                w[j] = LT__V(i - 1, j);
                LT__V(i, j) = 0;
            }
        }
        w[i] = h;
    }
    for (i = 0; i < n - 1; i++) {   /* accumulate the transformations */
        LT__V(n - 1, i) = LT__V(i, i);
        LT__V(i, i) = 1;
        h = w[i + 1];
        if (h != 0) {
            for (k = 0; k <= i; k++) w[k] = LT__V(k, i + 1) / h;
            for (j = 0; j <= i; j++) {
                g = 0;
                for (k = 0; k <= i; k++) g += LT__V(k, i + 1) * LT__V(k, j);
                for (k = 0; k <= i; k++) LT__V(k, j) -= g * w[k];
            }
        }
        for (k = 0; k <= i; k++) LT__V(k, i + 1) = 0;
    }
    for (j = 0; j < n; j++) { w[j] = LT__V(n - 1, j); LT__V(n - 1, j) = 0; }
    LT__V(n - 1, n - 1) = 1;
    e[0] = 0;
}

/* tql2: the implicit QL iteration on the tridiagonal (w, e): w -> the eigenvalues, v -> Vᵀ. */
static void lt__eigh_tql2(double *v, double *w, double *e, int64_t n) {
    int64_t i, k, l, m;
    double f, g, h, tst1 = 0, eps = 2.220446049250313e-16;
    for (i = 1; i < n; i++) e[i - 1] = e[i];
    e[n - 1] = 0;
    f = 0;
    for (l = 0; l < n; l++) {
        double t = fabs(w[l]) + fabs(e[l]);
        if (t > tst1) tst1 = t;
        for (m = l; m < n - 1; m++)
            if (fabs(e[m]) <= eps * tst1) break;
        if (m > l) {
            int iter = 0;
            do {
                double p, r, dl1, c = 1, c2 = 1, c3 = 1, el1, s = 0, s2 = 0;
                g = w[l];
                p = (w[l + 1] - g) / (2 * e[l]);
                r = hypot(p, 1.0);
                if (p < 0) r = -r;
                w[l] = e[l] / (p + r);
                w[l + 1] = e[l] * (p + r);
                dl1 = w[l + 1];
                h = g - w[l];
                for (i = l + 2; i < n; i++) w[i] -= h;
                f += h;
                p = w[m];
                el1 = e[l + 1];
                for (i = m - 1; i >= l; i--) {
                    double *vi = v + i * n, *vi1 = v + (i + 1) * n;
                    c3 = c2; c2 = c; s2 = s;
                    g = c * e[i];
                    h = c * p;
                    r = hypot(p, e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * w[i] - s * g;
                    w[i + 1] = h + s * (c * g + s * w[i]);
                    for (k = 0; k < n; k++) {
                        double hk = vi1[k];
                        vi1[k] = s * vi[k] + c * hk;
                        vi[k] = c * vi[k] - s * hk;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                w[l] = c * p;
            } while (fabs(e[l]) > eps * tst1 && ++iter < 60);
        }
        w[l] += f;
        e[l] = 0;
    }
}

static void lt__eigh(const double *a, double *v, double *w, double *e, int64_t n) {
    int64_t i;
    for (i = 0; i < n * n; i++) v[i] = a[i];   /* a is symmetric: a = aᵀ */
    if (n == 1) { w[0] = a[0]; v[0] = 1; return; }
    lt__eigh_tred2(v, w, e, n);
    lt__eigh_tql2(v, w, e, n);
}
#undef LT__V

/* idx[0..n) sorted by key descending (ties: lower index first), insertion into a merge sort. */
static void lt__argsort_desc(const double *key, int64_t *idx, int64_t *tmp, int64_t n) {
    int64_t width, i;
    for (i = 0; i < n; i++) idx[i] = i;
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            int64_t lo = i, mid = i + width < n ? i + width : n, hi = i + 2 * width < n ? i + 2 * width : n;
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = key[idx[b]] > key[idx[a]] ? idx[b++] : idx[a++];
            while (a < mid) tmp[k++] = idx[a++];
            while (b < hi) tmp[k++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
    }
}

/* The Q of a = Q·R (n×n, row-major, destroyed) by Householder reflections, as LAPACK's geqrf +
   orgqr: H_k = I − 2·v·vᵀ maps column k below the diagonal onto −sign(a_kk)·‖x‖·e_k.  v: n². */
static void lt__householder_q(double *a, double *qout, double *v, double *row, int64_t n) {
    int64_t k, i, j;
    for (k = 0; k < n; k++) {
        double nrm = 0, alpha, vn = 0, *vk = v + k * n;
        for (i = k; i < n; i++) nrm += a[i * n + k] * a[i * n + k];
        nrm = sqrt(nrm);
        for (i = 0; i < n; i++) vk[i] = 0;
        if (nrm == 0) continue;
        alpha = a[k * n + k] > 0 ? -nrm : nrm;
        for (i = k; i < n; i++) vk[i] = a[i * n + k];
        vk[k] -= alpha;
        for (i = k; i < n; i++) vn += vk[i] * vk[i];
        vn = sqrt(vn);
        if (vn == 0) continue;
        for (i = k; i < n; i++) vk[i] /= vn;
        /* a[k:, k:] -= 2 v (vᵀ a[k:, k:]) */
        for (j = k; j < n; j++) row[j] = 0;
        for (i = k; i < n; i++)
            for (j = k; j < n; j++) row[j] += vk[i] * a[i * n + j];
        for (i = k; i < n; i++)
            for (j = k; j < n; j++) a[i * n + j] -= 2 * vk[i] * row[j];
    }
    /* Q = H_0 H_1 ... H_{n-1} I, applied from the last */
    for (i = 0; i < n * n; i++) qout[i] = 0;
    for (i = 0; i < n; i++) qout[i * n + i] = 1;
    for (k = n - 1; k >= 0; k--) {
        const double *vk = v + k * n;
        for (j = 0; j < n; j++) row[j] = 0;
        for (i = k; i < n; i++)
            if (vk[i] != 0)
                for (j = 0; j < n; j++) row[j] += vk[i] * qout[i * n + j];
        for (i = k; i < n; i++)
            if (vk[i] != 0)
                for (j = 0; j < n; j++) qout[i * n + j] -= 2 * vk[i] * row[j];
    }
}

/* Q (d×d, columns = eigenvectors of gg, eigenvalues descending) as the reference's
   get_orthogonal_matrix: torch.linalg.eigh(gg), then flipped to descending order. */
static lt_status lt__soap_eig(lt_ctx *ctx, const float *gg, float *q, int64_t d) {
    size_t dd = (size_t)d * (size_t)d;
    double *a = (double *)LT__MALLOC((2 * dd + 2 * (size_t)d) * sizeof(double));
    int64_t *idx = (int64_t *)LT__MALLOC(2 * (size_t)d * sizeof(int64_t));
    int64_t i, j;
    if (!a || !idx) {
        LT__FREE(a); LT__FREE(idx);
        return lt_set_error(ctx, LT_ERR_NOMEM, "lt_optim_step (soap): out of memory for a %lldx%lld eigenbasis",
                            (long long)d, (long long)d);
    }
    for (i = 0; i < (int64_t)dd; i++) a[i] = gg[i];
    lt__eigh(a, a + dd, a + 2 * dd, a + 2 * dd + d, d);
    lt__argsort_desc(a + 2 * dd, idx, idx + d, d);
    for (i = 0; i < d; i++)
        for (j = 0; j < d; j++) q[i * d + j] = (float)a[dd + idx[j] * d + i];
    LT__FREE(a);
    LT__FREE(idx);
    return LT_OK;
}

/* The reference's get_orthogonal_matrix_QR for one side (dim = 0 for L, 1 for R of v [rows,cols]):
   est = diag(Qᵀ·GG·Q); columns of Q sorted by est descending (v's slices along dim follow);
   Q = qr(GG·Q_sorted).Q.  GG·Q in float32 as there; est and the QR in double (the reference's QR:
   float32; see tests/ref/gen_optim2.py).  vtmp: rows·cols floats, ptmp: d² floats. */
static lt_status lt__soap_refresh(lt_ctx *ctx, const float *gg, float *q, float *v, int64_t rows, int64_t cols,
                                  int dim, float *vtmp, float *ptmp) {
    int64_t d = dim == 0 ? rows : cols, i, j;
    size_t dd = (size_t)d * (size_t)d;
    double *P = (double *)LT__MALLOC((3 * dd + 2 * (size_t)d) * sizeof(double));
    double *A, *V, *est, *row;
    int64_t *idx = (int64_t *)LT__MALLOC(2 * (size_t)d * sizeof(int64_t));
    if (!P || !idx) {
        LT__FREE(P); LT__FREE(idx);
        return lt_set_error(ctx, LT_ERR_NOMEM, "lt_optim_step (soap): out of memory for a %lldx%lld eigenbasis",
                            (long long)d, (long long)d);
    }
    A = P + dd; V = P + 2 * dd; est = P + 3 * dd; row = est + d;
    lt_sgemm(0, 0, d, d, d, 1.0f, gg, d, q, d, 0.0f, ptmp, d);
    for (i = 0; i < (int64_t)dd; i++) P[i] = ptmp[i];
    for (j = 0; j < d; j++) est[j] = 0;
    for (i = 0; i < d; i++)
        for (j = 0; j < d; j++) est[j] += (double)q[i * d + j] * P[i * d + j];
    lt__argsort_desc(est, idx, idx + d, d);
    for (i = 0; i < d; i++)
        for (j = 0; j < d; j++) A[i * d + j] = P[i * d + idx[j]];
    lt__householder_q(A, P, V, row, d);
    for (i = 0; i < (int64_t)dd; i++) q[i] = (float)P[i];
    /* v.index_select(dim, idx) */
    memcpy(vtmp, v, (size_t)rows * (size_t)cols * sizeof(float));
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++)
            v[i * cols + j] = dim == 0 ? vtmp[idx[i] * cols + j] : vtmp[i * cols + idx[j]];
    LT__FREE(P);
    LT__FREE(idx);
    return LT_OK;
}

/* y = Q_Lᵀ·x·Q_R (back = 0) or Q_L·x·Q_Rᵀ (back = 1), each side only where a basis exists;
   x, y [rows,cols] (may be the same buffer), tmp [rows,cols]. */
static void lt__soap_project(const float *x, float *y, const float *ql, const float *qr, int64_t rows, int64_t cols,
                             int back, float *tmp) {
    const float *src = x;
    if (ql) {
        lt_sgemm(!back, 0, rows, cols, rows, 1.0f, ql, rows, src, cols, 0.0f, tmp, cols);
        src = tmp;
    }
    if (qr) {
        float *dst = src == tmp ? y : tmp;
        lt_sgemm(0, back, rows, cols, cols, 1.0f, src, cols, qr, cols, 0.0f, dst, cols);
        src = dst;
    }
    if (src != y) memcpy(y, src, (size_t)rows * (size_t)cols * sizeof(float));
}

/* gg <- lerp(gg, x·xᵀ (side 0) or xᵀ·x (side 1), w), as torch.lerp_; tmp d². */
static void lt__soap_gg(float *gg, const float *x, int64_t rows, int64_t cols, int side, float w, float *tmp) {
    int64_t d = side == 0 ? rows : cols, i;
    if (side == 0) lt_sgemm(0, 1, rows, rows, cols, 1.0f, x, cols, x, cols, 0.0f, tmp, rows);
    else lt_sgemm(1, 0, cols, cols, rows, 1.0f, x, cols, x, cols, 0.0f, tmp, cols);
    for (i = 0; i < d * d; i++) gg[i] = lt__lerpf(gg[i], tmp[i], w);
}

LTRAIN_DEF lt_soap_config lt_soap_defaults(void) {
    lt_soap_config c;
    c.lr = 3e-3; c.beta1 = 0.95; c.beta2 = 0.95; c.shampoo_beta = -1; c.eps = 1e-8; c.weight_decay = 0.01;
    c.precondition_frequency = 10; c.max_precond_dim = 10000; c.decay_mode = LT_DECAY_MARKED;
    return c;
}

LTRAIN_DEF lt_optim *lt_soap_create(lt_ctx *ctx, lt_paramset params, lt_soap_config cfg) {
    lt_optim *o;
    lt__x *x;
    size_t work = 0;
    int i;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!(cfg.lr >= 0) || !(cfg.eps >= 0) || !lt__x_beta_ok(cfg.beta1) || !lt__x_beta_ok(cfg.beta2) ||
        !(cfg.shampoo_beta < 0 || lt__x_beta_ok(cfg.shampoo_beta)) || !(cfg.weight_decay >= 0) || cfg.precondition_frequency < 1 ||
        cfg.max_precond_dim < 0) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_soap_create: lr %g, betas (%g, %g), shampoo_beta %g, eps %g, weight_decay %g, "
                     "precondition_frequency %d, max_precond_dim %lld: need lr, eps, weight_decay >= 0, betas in [0, 1), "
                     "shampoo_beta < 1 (negative: beta2), frequency >= 1, max_precond_dim >= 0", cfg.lr, cfg.beta1, cfg.beta2, cfg.shampoo_beta, cfg.eps,
                     cfg.weight_decay, cfg.precondition_frequency, (long long)cfg.max_precond_dim);
        return NULL;
    }
    if (!(o = lt__x_new(ctx, "lt_soap_create", params, &lt__soap_ops, 6, cfg.lr))) return NULL;
    x = lt__xof(o);
    x->soap = cfg;
    for (i = 0; i < o->np; i++) {
        int64_t n = o->p[i]->n, r = x->rows[i], c = x->cols[i], dmax;
        size_t need;
        x->cnt[i * 6] = x->cnt[i * 6 + 1] = n;
        if (c > 0) {   /* a matrix: a factor for each side that fits */
            x->dl[i] = r <= cfg.max_precond_dim ? r : 0;
            x->dr[i] = c <= cfg.max_precond_dim ? c : 0;
            x->cnt[i * 6 + 2] = x->cnt[i * 6 + 4] = x->dl[i] * x->dl[i];
            x->cnt[i * 6 + 3] = x->cnt[i * 6 + 5] = x->dr[i] * x->dr[i];
        }
        dmax = x->dl[i] > x->dr[i] ? x->dl[i] : x->dr[i];
        need = 3 * (size_t)n + (size_t)dmax * (size_t)dmax;
        if (need > work) work = need;
    }
    return lt__x_alloc(o, "lt_soap_create", work);
}

/* One SOAP step of parameter i, as the reference's SOAP.step for one tensor (see lt_soap_config in 01_api.h). */
static void lt__soap_param(lt_optim *o, int i, double lr) {
    lt__x *x = lt__xof(o);
    const lt_soap_config *c = &x->soap;
    lt_tensor *t = o->p[i];
    float *m = x->buf[i * 6], *v = x->buf[i * 6 + 1], *L = x->buf[i * 6 + 2], *R = x->buf[i * 6 + 3];
    float *QL = x->buf[i * 6 + 4], *QR = x->buf[i * 6 + 5];
    int64_t n = t->n, rows = x->rows[i], cols = x->cols[i], k;
    float *w1 = x->work, *w2 = w1 + n, *w3 = w2 + n, *gtmp = w3 + n;
    float gw = (float)(1.0 - (c->shampoo_beta >= 0 ? c->shampoo_beta : c->beta2));   /* negative: follows beta2 */
    const float *g = t->grad;
    int64_t s;
    if (o->pstep[i] == 0) {   /* fill L, R and compute the bases; θ stays (no current gradient in its basis) */
        if (L) lt__soap_gg(L, g, rows, cols, 0, gw, gtmp);
        if (R) lt__soap_gg(R, g, rows, cols, 1, gw, gtmp);
        if (L && lt__soap_eig(o->ctx, L, QL, rows) != LT_OK) return;
        if (R && lt__soap_eig(o->ctx, R, QR, cols) != LT_OK) return;
        o->pstep[i] = 1;
        return;
    }
    s = o->pstep[i]++;   /* the reference's state["step"]: 1 on the first update */
    {
        const float *gp = g;
        double bc1 = 1.0 - pow(c->beta1, (double)s), bc2 = 1.0 - pow(c->beta2, (double)s);
        double ss = lr * sqrt(bc2) / bc1;
        double wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
        float b1 = (float)c->beta1, omb1 = (float)(1.0 - c->beta1), b2 = (float)c->beta2, omb2 = (float)(1.0 - c->beta2);
        float eps = (float)c->eps, neg_ss = (float)(-ss), neg_lrwd = (float)(-lr * wd);
        const float *upd = w2;
        float *p = t->data;
        if (QL || QR) { lt__soap_project(g, w1, QL, QR, rows, cols ? cols : 1, 0, w3); gp = w1; }
        LT__OMP(parallel for if (n >= LT__OPT_PAR_MIN))
        for (k = 0; k < n; k++) {
            float mk = fmaf(omb1, gp[k], m[k] * b1);
            float g2 = gp[k] * gp[k];
            float vk = fmaf(omb2, g2, v[k] * b2);
            m[k] = mk;
            v[k] = vk;
            w2[k] = mk / (sqrtf(vk) + eps);
        }
        if (QL || QR) { lt__soap_project(w2, w2, QL, QR, rows, cols ? cols : 1, 1, w3); }
        LT__OMP(parallel for if (n >= LT__OPT_PAR_MIN))
        for (k = 0; k < n; k++) p[k] = fmaf(neg_ss, upd[k], p[k]);
        if (wd > 0) {
            LT__OMP(parallel for if (n >= LT__OPT_PAR_MIN))
            for (k = 0; k < n; k++) p[k] = fmaf(neg_lrwd, p[k], p[k]);
        }
    }
    /* update_preconditioner: the factors take this gradient; every frequency steps the bases
       move by one power iteration, carrying m (kept in the eigenbasis) with them */
    if (L) lt__soap_gg(L, g, rows, cols, 0, gw, gtmp);
    if (R) lt__soap_gg(R, g, rows, cols, 1, gw, gtmp);
    if ((L || R) && s % c->precondition_frequency == 0) {
        lt__soap_project(m, m, QL, QR, rows, cols, 1, w3);
        if (L && lt__soap_refresh(o->ctx, L, QL, v, rows, cols, 0, w1, gtmp) != LT_OK) return;
        if (R && lt__soap_refresh(o->ctx, R, QR, v, rows, cols, 1, w1, gtmp) != LT_OK) return;
        lt__soap_project(m, m, QL, QR, rows, cols, 0, w3);
    }
}

/* ---- @@OPTIM.state  the state contract --------------------------------------------------------- */
LTRAIN_DEF float *lt_optim_state_buf(lt_optim *opt, int param_index, int which, int64_t *count) {
    int64_t cnt = 0;
    float *p = NULL;
    if (opt) {
        int per_elem;
        p = opt->ops->state(opt, param_index, which, &cnt, &per_elem);
        if (per_elem) p = lt_optim_state(opt, param_index, which);   /* the same buffer, host copy current */
    }
    if (count) *count = cnt;
    return p;
}

LTRAIN_DEF size_t lt_optim_state_bytes(lt_optim *opt) {
    size_t total = 0;
    int i, w;
    if (!opt) return 0;
    for (i = 0; i < opt->np; i++)
        for (w = 0; w < lt_optim_num_states(opt); w++) {
            int64_t cnt = 0;
            if (lt_optim_state_buf(opt, i, w, &cnt)) total += (size_t)cnt * sizeof(float);
        }
    return total;
}

/* ---- src/14_sched.h ---- */
/* ==== @@SCHED  schedules: warm-up + decay; LinearLR, CosineAnnealingLR, SequentialLR ========== */
/* Holds: the learning rate at a step: warm-up then cosine / sqrt / linear decay, and torch's
   LinearLR, CosineAnnealingLR, SequentialLR.
   Calls: nothing (arithmetic on the schedule's fields). */

/* ---- @@SCHED.cosine  warm-up, then cosine / sqrt / linear decay ------------------------------ */
LTRAIN_DEF double lt_schedule_lr(const lt_schedule *s, int64_t step) {
    int64_t t, T;
    double d;
    if (!s) return NAN;
    if (step < 0) step = 0;
    if (step < s->warmup) /* torch LinearLR's closed form: base·(f + (1−f)·k/W) */
        return s->lr * (s->warmup_start + (1.0 - s->warmup_start) * (double)step / (double)s->warmup);
    if (s->decay == LT_SCHED_CONSTANT) return s->lr;
    t = step - (s->warmup > 0 ? s->warmup : 0);
    T = s->total - (s->warmup > 0 ? s->warmup : 0);
    if (t >= T) return s->min_lr;
    switch (s->decay) {
    case LT_SCHED_COSINE: /* CosineAnnealingLR's closed form: η_min + (η−η_min)·(1 + cos(πt/T))/2 */
        return s->min_lr + (s->lr - s->min_lr) * (1.0 + cos(M_PI * (double)t / (double)T)) / 2.0;
    case LT_SCHED_LINEAR: d = (double)(T - t) / (double)T; break;
    case LT_SCHED_SQRT: d = sqrt((double)(T - t) / (double)T); break;
    default: d = 1.0; break;
    }
    return s->min_lr + (s->lr - s->min_lr) * d;
}

static const char *const lt__decay_names[] = {"cosine", "linear", "sqrt", "constant"};

LTRAIN_DEF const char *lt_decay_name(lt_decay d) {
    return (int)d >= 0 && (int)d < 4 ? lt__decay_names[d] : "?";
}

LTRAIN_DEF int lt_decay_parse(const char *name, lt_decay *out) {
    int i;
    if (!name || !out) return 0;
    for (i = 0; i < 4; i++)
        if (strcmp(name, lt__decay_names[i]) == 0) {
            if (out) *out = (lt_decay)i;
            return 1;
        }
    return 0;
}

/* ---- @@SCHED.torch  the torch.optim.lr_scheduler mirror ---
   torch's schedulers all write one shared value, the optimizer group's 'lr', and most of them
   compute the next value from it (the "chainable" form), not from the step number.  `lr` below
   is that shared value; a sequence hands its own to the scheduler it steps and takes it back.
   Each scheduler counts last_epoch (the step index it last produced, -1 before the first) and
   step_count (its step() calls; CosineAnnealingLR reads it), as torch does. */
typedef enum { LT__LRS_LINEAR = 0, LT__LRS_COSINE, LT__LRS_SEQUENTIAL } lt__lrs_kind;

struct lt_lrs {
    lt__lrs_kind kind;
    double base_lr;         /* base_lrs[0]: the group's initial lr */
    double lr;              /* group['lr'] after the last step: get_last_lr()[0] */
    int64_t last_epoch, step_count;
    double start, end;      /* LinearLR: start_factor, end_factor */
    double eta_min;         /* CosineAnnealingLR */
    int64_t iters;          /* LinearLR: total_iters; CosineAnnealingLR: T_max */
    lt_lrs **kids;          /* SequentialLR: the schedulers, and n-1 milestones */
    int64_t *milestones;
    int nkids;
};

/* Python's a % b for b > 0: the result takes b's sign. */
static int64_t lt__pymod(int64_t a, int64_t b) { int64_t r = a % b; return r < 0 ? r + b : r; }

/* _LRScheduler.step(): step_count+1; then last_epoch+1 and the chainable get_lr(), or, with
   to_zero (torch's step(0), used by SequentialLR at a milestone), last_epoch = 0 and the
   closed form at 0. */
static void lt__lrs_step1(lt_lrs *s, int to_zero) {
    double lr = s->lr;
    int64_t e;
    s->step_count++;
    if (to_zero) {
        s->last_epoch = 0;
        if (s->kind == LT__LRS_LINEAR) /* base·(f0 + (f1−f0)·min(T,0)/T), exactly base·f0 */
            s->lr = s->base_lr * s->start;
        else /* η_min + (base−η_min)·(1 + cos 0)/2 */
            s->lr = s->eta_min + (s->base_lr - s->eta_min) * (1.0 + cos(M_PI * 0.0 / (double)s->iters)) / 2.0;
        return;
    }
    e = ++s->last_epoch;
    if (s->kind == LT__LRS_LINEAR) {
        /* LinearLR.get_lr: lr·f0 at 0; unchanged past T; else
           lr·(1 + (f1−f0)/(T·f0 + (e−1)·(f1−f0))), the ratio of consecutive closed-form factors */
        if (e == 0) s->lr = lr * s->start;
        else if (e > s->iters) s->lr = lr;
        else
            s->lr = lr * (1.0 + (s->end - s->start) /
                                    ((double)s->iters * s->start + (double)(e - 1) * (s->end - s->start)));
    } else {
        /* CosineAnnealingLR.get_lr, with T = T_max:
           e = 0: unchanged;  first step of a resumed scheduler: the closed form;
           e−1−T ≡ 0 (mod 2T), the trough: lr + (base−η_min)·(1 − cos(π/T))/2;
           else η_min + (lr−η_min)·(1 + cos(πe/T))/(1 + cos(π(e−1)/T)) */
        double T = (double)s->iters;
        if (e == 0) s->lr = lr;
        else if (s->step_count == 1)
            s->lr = s->eta_min + (s->base_lr - s->eta_min) * (1.0 + cos((double)e * M_PI / T)) / 2.0;
        else if (lt__pymod(e - 1 - s->iters, 2 * s->iters) == 0)
            s->lr = lr + (s->base_lr - s->eta_min) * (1.0 - cos(M_PI / T)) / 2.0;
        else
            s->lr = (1.0 + cos(M_PI * (double)e / T)) / (1.0 + cos(M_PI * (double)(e - 1) / T)) *
                        (lr - s->eta_min) + s->eta_min;
    }
}

static lt_lrs *lt__lrs_new(lt__lrs_kind kind, double base_lr) {
    lt_lrs *s = (lt_lrs *)LT__MALLOC(sizeof(lt_lrs));
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->base_lr = base_lr;
    s->lr = base_lr;
    s->last_epoch = -1;
    return s;
}

LTRAIN_DEF lt_lrs *lt_linear_lr(double base_lr, double start_factor, double end_factor, int64_t total_iters) {
    lt_lrs *s;
    /* torch 1.13 accepts start_factor 0 and then divides by zero on the second step; later
       versions reject it, and so do we */
    if (!(start_factor > 0 && start_factor <= 1) || !(end_factor >= 0 && end_factor <= 1) ||
        total_iters < 0 || !(base_lr >= 0))
        return NULL;
    s = lt__lrs_new(LT__LRS_LINEAR, base_lr);
    if (!s) return NULL;
    s->start = start_factor; s->end = end_factor; s->iters = total_iters;
    lt__lrs_step1(s, 0); /* torch's constructor takes the first step */
    return s;
}

LTRAIN_DEF lt_lrs *lt_cosine_annealing_lr(double base_lr, int64_t t_max, double eta_min) {
    lt_lrs *s;
    if (t_max < 1 || !(base_lr >= 0) || !(eta_min == eta_min)) return NULL;
    s = lt__lrs_new(LT__LRS_COSINE, base_lr);
    if (!s) return NULL;
    s->iters = t_max; s->eta_min = eta_min;
    lt__lrs_step1(s, 0);
    return s;
}

/* SequentialLR: the group lr goes back to the initial lr, every scheduler's last_epoch goes back
   by one (undoing its constructor's step), and the first one is started afresh.  The schedulers
   should share one base_lr, as torch's share one optimizer. */
LTRAIN_DEF lt_lrs *lt_sequential_lr(lt_lrs **scheds, int n, const int64_t *milestones) {
    lt_lrs *s = NULL;
    int i, ok = scheds != NULL && n >= 1 && (n == 1 || milestones != NULL);
    for (i = 0; ok && i < n; i++) ok = scheds[i] != NULL && scheds[i]->kind != LT__LRS_SEQUENTIAL;
    for (i = 1; ok && i < n - 1; i++) ok = milestones[i] >= milestones[i - 1]; /* bisect needs order */
    if (ok) s = lt__lrs_new(LT__LRS_SEQUENTIAL, scheds[0]->base_lr);
    if (s) {
        s->kids = (lt_lrs **)LT__MALLOC((size_t)n * sizeof(lt_lrs *));
        s->milestones = (int64_t *)LT__MALLOC((size_t)n * sizeof(int64_t));
        if (!s->kids || !s->milestones) {
            LT__FREE(s->kids); LT__FREE(s->milestones); LT__FREE(s);
            s = NULL;
        }
    }
    if (!s) { /* ownership was taken: release what was given */
        for (i = 0; scheds && i < n; i++) lt_lrs_destroy(scheds[i]);
        return NULL;
    }
    memcpy(s->kids, scheds, (size_t)n * sizeof(lt_lrs *));
    if (n > 1) memcpy(s->milestones, milestones, (size_t)(n - 1) * sizeof(int64_t));
    s->nkids = n;
    for (i = 0; i < n; i++) s->kids[i]->last_epoch--;
    s->kids[0]->step_count = 0;
    s->kids[0]->lr = s->base_lr;
    lt__lrs_step1(s->kids[0], 0);
    s->lr = s->kids[0]->lr;
    s->last_epoch = 0;
    return s;
}

LTRAIN_DEF double lt_lrs_get(const lt_lrs *s) { return s ? s->lr : NAN; }

LTRAIN_DEF void lt_lrs_step(lt_lrs *s) {
    int idx = 0;
    lt_lrs *k;
    if (!s) return;
    if (s->kind != LT__LRS_SEQUENTIAL) { lt__lrs_step1(s, 0); return; }
    s->last_epoch++;
    /* bisect_right: the number of milestones <= last_epoch picks the scheduler; landing exactly
       on a milestone restarts it with step(0) */
    while (idx < s->nkids - 1 && s->milestones[idx] <= s->last_epoch) idx++;
    k = s->kids[idx];
    k->lr = s->lr;
    lt__lrs_step1(k, idx > 0 && s->milestones[idx - 1] == s->last_epoch);
    s->lr = k->lr;
}

LTRAIN_DEF void lt_lrs_destroy(lt_lrs *s) {
    int i;
    if (!s) return;
    for (i = 0; i < s->nkids; i++) lt_lrs_destroy(s->kids[i]);
    LT__FREE(s->kids);
    LT__FREE(s->milestones);
    LT__FREE(s);
}

/* ---- src/15_clip.h ---- */
/* ==== @@CLIP  gradient clipping: clip_grad_norm_, clip_grad_value_ ============================ */
/* Holds: the gradients' global norm (a fixed summation order), clip_grad_norm_, clip_grad_value_.
   Calls: @@CORE; the device through ctx->dev. */

/* ---- @@CLIP.norm  the global norm, clip_grad_norm_ ------------------------------------------- */
/* Σ g² in double, in a fixed order whatever the thread count: simd sums over pieces of LT__EWB
   values, pieces summed in order within parts of LT__SQ_PART values, the parts' sums added in
   order; threads take parts. */
#define LT__SQ_PART (8 * LT__EWB)
static double lt__sumsq_piece(const float *g, int64_t m) {
    double s = 0;
    int64_t i;
    LT__OMP(simd reduction(+ : s))
    for (i = 0; i < m; i++) s += (double)g[i] * (double)g[i];
    return s;
}
static double lt__sumsq(const float *g, int64_t n) {
    double part[256], acc = 0;
    int64_t s0;
    for (s0 = 0; s0 < n; s0 += 256 * LT__SQ_PART) {   /* up to 256 parts at a time */
        int64_t left = n - s0, np = (left + LT__SQ_PART - 1) / LT__SQ_PART, k;
        if (np > 256) np = 256;
        LT__OMP(parallel for if (np > 1))
        for (k = 0; k < np; k++) {
            int64_t lo = s0 + k * LT__SQ_PART, hi = lo + LT__SQ_PART < n ? lo + LT__SQ_PART : n, b;
            double s = 0;
            for (b = lo; b < hi; b += LT__EWB) s += lt__sumsq_piece(g + b, hi - b < LT__EWB ? hi - b : LT__EWB);
            part[k] = s;
        }
        for (k = 0; k < np; k++) acc += part[k];
    }
    return acc;
}

/* Every gradient of a parameter set, in order: the next parameter from *i on that has one (torch
   skips parameters whose .grad is None), *i moved past it; NULL after the last.  The loop:
     int i;  lt_tensor *t;
     for (i = 0; (t = lt__next_grad(params, &i)) != NULL;) ... t->grad, t->n ... */
static lt_tensor *lt__next_grad(lt_paramset params, int *i) {
    while (params.p && *i < params.n) {
        lt_tensor *t = params.p[(*i)++];
        if (t && t->grad) return t;
    }
    return NULL;
}

/* Σ g² over every gradient, in double (torch sums per tensor, then the norms). */
static double lt__grad_sumsq(lt_paramset params) {
    double acc = 0;
    int i;
    const lt_tensor *t;
    for (i = 0; (t = lt__next_grad(params, &i)) != NULL;) acc += lt__sumsq(t->grad, t->n);
    return acc;
}

LTRAIN_DEF double lt_grad_norm(lt_ctx *ctx, lt_paramset params) {
    (void)ctx;
    if (!params.p) return 0;
    if (ctx && ctx->dev) return ctx->dev->clip(ctx, params, 0, 0);
    return sqrt(lt__grad_sumsq(params));
}

/* as torch.nn.utils.clip_grad_norm_: coef = max_norm / (norm + 1e-6), clamped to 1, computed in
   float like torch (whose norm is a float32 tensor); every gradient is multiplied by it, also
   when it is 1.  A non-finite norm is reported instead of spreading NaN into every gradient. */
LTRAIN_DEF double lt_clip_grad_norm(lt_ctx *ctx, lt_paramset params, double max_norm) {
    double norm;
    float coef;
    int i;
    lt_tensor *t;
    if (ctx && lt_failed(ctx)) return NAN;
    if (!(max_norm >= 0)) {
        if (ctx) lt_set_error(ctx, LT_ERR_ARG, "lt_clip_grad_norm: max_norm is %g; it must be >= 0", max_norm);
        return NAN;
    }
    if (!params.p) return 0;
    if (ctx && ctx->dev) return ctx->dev->clip(ctx, params, max_norm, 1);
    norm = sqrt(lt__grad_sumsq(params));
    if (!(norm - norm == 0)) {
        for (i = 0; (t = lt__next_grad(params, &i)) != NULL;) {
            int64_t j;
            for (j = 0; j < t->n; j++)
                if (!(t->grad[j] - t->grad[j] == 0)) break;
            if (j < t->n) {
                if (ctx)
                    lt_set_error(ctx, LT_ERR_NONFINITE, "lt_clip_grad_norm: the gradient norm is %g: "
                                 "'%s' has gradient %g at element %lld; gradients left unclipped (hint: "
                                 "lower the learning rate, or look for a log/divide of 0 in the loss)",
                                 norm, t->name ? t->name : "?", (double)t->grad[j], (long long)j);
                return norm;
            }
        }
        if (ctx) lt_set_error(ctx, LT_ERR_NONFINITE, "lt_clip_grad_norm: the gradient norm is %g", norm);
        return norm;
    }
    /* torch: max_norm / (norm + 1e-6) is Tensor.__rtruediv__, i.e. reciprocal(norm + 1e-6)·max_norm */
    coef = (1.0f / ((float)norm + (float)1e-6)) * (float)max_norm;
    if (coef > 1.0f) coef = 1.0f;
    for (i = 0; (t = lt__next_grad(params, &i)) != NULL;) {
        float *g = t->grad;
        int64_t j, n = t->n;
        LT__OMP(parallel for simd if (parallel : n >= LT__OPT_PAR_MIN))
        for (j = 0; j < n; j++) g[j] *= coef;
    }
    return norm;
}

/* as torch.nn.utils.clip_grad_value_: clamp every gradient element to [−clip, clip] (NaN stays). */
/* ---- @@CLIP.value  clip_grad_value_ ---------------------------------------------------------- */
LTRAIN_DEF void lt_clip_grad_value(lt_ctx *ctx, lt_paramset params, double clip) {
    float c = (float)clip;
    int i;
    lt_tensor *t;
    if (ctx && lt_failed(ctx)) return;
    if (!(clip >= 0)) {
        if (ctx) lt_set_error(ctx, LT_ERR_ARG, "lt_clip_grad_value: clip is %g; it must be >= 0", clip);
        return;
    }
    if (ctx && ctx->dev) { ctx->dev->clip(ctx, params, clip, 2); return; }
    for (i = 0; (t = lt__next_grad(params, &i)) != NULL;) {
        float *g = t->grad;
        int64_t j, n = t->n;
        LT__OMP(parallel for if (n >= LT__OPT_PAR_MIN))
        for (j = 0; j < n; j++) {
            if (g[j] > c) g[j] = c;
            else if (g[j] < -c) g[j] = -c;
        }
    }
}

/* ---- src/16_amp.h ---- */
/* ==== @@AMP  mixed precision: dynamic loss scaling ===================== */
/* Holds: lt_scaler, torch's GradScaler: scale the loss, unscale and check the gradients, skip
   the step on inf/NaN, grow or back off the scale.
   Calls: @@CORE, @@OPS (lt_scale), @@OPTIM (the step); the device through ctx->dev. */
/* ---- @@AMP.scaler  dynamic loss scaling: torch.cuda.amp.GradScaler ------------------------------ */
#define LT__AMP_PAR_MIN 32768 /* elements below which the unscale loop stays on one thread */
enum { LT__SC_READY = 0, LT__SC_UNSCALED, LT__SC_STEPPED };

LTRAIN_DEF lt_scaler lt_scaler_defaults(void) {
    lt_scaler s;
    memset(&s, 0, sizeof s);
    s.scale = 65536.0f;
    s.growth_factor = 2.0;
    s.growth_interval = 2000;
    s.backoff_factor = 0.5;
    s.enabled = 1;
    return s;
}

/* The settings torch's GradScaler accepts (it asserts growth_factor > 1, backoff_factor < 1). */
static int lt__scaler_valid(double scale, double growth, double backoff, int64_t interval) {
    return scale > 0 && scale <= FLT_MAX && growth > 1 && growth <= FLT_MAX && backoff > 0 && backoff < 1 &&
           interval >= 1;
}
static int lt__scaler_check(lt_ctx *ctx, const lt_scaler *sc, const char *who) {
    if (!sc) { lt_set_error(ctx, LT_ERR_ARG, "%s: the scaler is NULL", who); return 0; }
    if (lt__scaler_valid(sc->scale, sc->growth_factor, sc->backoff_factor, sc->growth_interval)) return 1;
    lt_set_error(ctx, LT_ERR_ARG, "%s: scale %g, growth_factor %g, backoff_factor %g, growth_interval %lld: "
                 "need a finite scale > 0, growth_factor > 1, 0 < backoff_factor < 1, growth_interval >= 1 "
                 "(hint: start from lt_scaler_defaults())", who, (double)sc->scale, sc->growth_factor,
                 sc->backoff_factor, (long long)sc->growth_interval);
    return 0;
}

LTRAIN_DEF lt_tensor *lt_scaler_scale_loss(lt_ctx *ctx, lt_scaler *sc, lt_tensor *loss) {
    if (!ctx || lt_failed(ctx)) return NULL;
    if (sc && !sc->enabled) return loss;
    if (!lt__scaler_check(ctx, sc, "lt_scaler_scale_loss")) return NULL;
    return lt_scale(ctx, loss, sc->scale);
}

/* torch's _amp_foreach_non_finite_check_and_unscale_: g *= inv_scale with inv_scale =
   float(1/double(scale)), found_inf |= !isfinite(g).  Scales are powers of two unless set
   otherwise, so the unscaled gradients equal unscaled-run gradients bit for bit (barring
   overflow and subnormals). */
LTRAIN_DEF lt_status lt_scaler_unscale(lt_ctx *ctx, lt_scaler *sc, lt_paramset params) {
    float inv;
    int i, bad = 0;
    lt_tensor *t;
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return lt_status_of(ctx);
    if (sc && !sc->enabled) return LT_OK;
    if (!lt__scaler_check(ctx, sc, "lt_scaler_unscale")) return lt_status_of(ctx);
    if (sc->stage == LT__SC_UNSCALED) return LT_OK;
    if (sc->stage == LT__SC_STEPPED)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_scaler_unscale: called after lt_scaler_step in the same step "
                            "(hint: call lt_scaler_update after each step)");
    inv = (float)(1.0 / (double)sc->scale);
    if (ctx->dev) {
        bad = ctx->dev->unscale(ctx, params, inv);   /* inf/NaN check on the device */
    } else {
        for (i = 0; (t = lt__next_grad(params, &i)) != NULL;) {   /* @@CLIP */
            float *g = t->grad;
            int64_t j, n = t->n;
            LT__OMP(parallel for reduction(| : bad) if (n >= LT__AMP_PAR_MIN))
            for (j = 0; j < n; j++) {
                uint32_t u;
                memcpy(&u, &g[j], sizeof u);   /* on the bits: -ffast-math would drop an isfinite() */
                bad |= (u & 0x7F800000u) == 0x7F800000u;
                g[j] *= inv;
            }
        }
    }
    sc->found_inf = bad != 0;
    sc->stage = LT__SC_UNSCALED;
    return LT_OK;
}

LTRAIN_DEF lt_status lt_scaler_step(lt_scaler *sc, lt_optim *opt, double lr) {
    lt_ctx *ctx;
    if (!opt) return LT_ERR_ARG;
    ctx = opt->ctx;
    if (lt_failed(ctx)) return lt_status_of(ctx);
    if (sc && !sc->enabled) return lt_optim_step(opt, lr);
    if (!lt__scaler_check(ctx, sc, "lt_scaler_step")) return lt_status_of(ctx);
    if (sc->stage == LT__SC_STEPPED)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_scaler_step: called twice in one step (hint: call "
                            "lt_scaler_update after each step)");
    if (sc->stage == LT__SC_READY && lt_scaler_unscale(ctx, sc, lt_optim_params(opt)) != LT_OK)
        return lt_status_of(ctx);
    sc->stage = LT__SC_STEPPED;
    if (sc->found_inf) {
        sc->skipped++;
        return LT_OK;
    }
    return lt_optim_step(opt, lr);
}

LTRAIN_DEF lt_status lt_scaler_update(lt_scaler *sc) {
    if (!sc) return LT_ERR_ARG;
    if (!sc->enabled) return LT_OK;
    if (sc->stage == LT__SC_READY) return LT_ERR_STATE;
    if (sc->found_inf) {
        sc->scale = (float)((double)sc->scale * sc->backoff_factor);
        sc->growth_tracker = 0;
    } else if (sc->growth_tracker + 1 >= sc->growth_interval) { /* torch: ==; >= also covers an
                                                                    interval lowered mid-run */
        float grown = (float)((double)sc->scale * sc->growth_factor);
        if (grown <= FLT_MAX) sc->scale = grown;                /* never grow to inf */
        sc->growth_tracker = 0;
    } else {
        sc->growth_tracker++;
    }
    sc->found_inf = 0;
    sc->stage = LT__SC_READY;
    return LT_OK;
}

LTRAIN_DEF double lt_scaler_get_scale(const lt_scaler *sc) { return sc && sc->enabled ? (double)sc->scale : 1.0; }
LTRAIN_DEF int lt_scaler_found_inf(const lt_scaler *sc) { return sc && sc->enabled && sc->found_inf; }
LTRAIN_DEF int64_t lt_scaler_skipped(const lt_scaler *sc) { return sc ? sc->skipped : 0; }

LTRAIN_DEF lt_scaler_state lt_scaler_get_state(const lt_scaler *sc) {
    lt_scaler_state st;
    memset(&st, 0, sizeof st);
    if (!sc) return st;
    st.scale = sc->scale;
    st.growth_factor = sc->growth_factor;
    st.backoff_factor = sc->backoff_factor;
    st.growth_interval = sc->growth_interval;
    st.growth_tracker = sc->growth_tracker;
    st.skipped = sc->skipped;
    return st;
}

LTRAIN_DEF lt_status lt_scaler_set_state(lt_ctx *ctx, lt_scaler *sc, const lt_scaler_state *st) {
    if (!sc || !st)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_scaler_set_state: the scaler or the state is NULL");
    if (!lt__scaler_valid(st->scale, st->growth_factor, st->backoff_factor, st->growth_interval) ||
        (double)(float)st->scale != st->scale || st->growth_tracker < 0 || st->skipped < 0)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_scaler_set_state: scale %g, growth_factor %g, backoff_factor "
                            "%g, growth_interval %lld, growth_tracker %lld, skipped %lld: not a state a "
                            "scaler can be in (hint: the checkpoint may be damaged)", st->scale,
                            st->growth_factor, st->backoff_factor, (long long)st->growth_interval,
                            (long long)st->growth_tracker, (long long)st->skipped);
    sc->scale = (float)st->scale;
    sc->growth_factor = st->growth_factor;
    sc->backoff_factor = st->backoff_factor;
    sc->growth_interval = st->growth_interval;
    sc->growth_tracker = st->growth_tracker;
    sc->skipped = st->skipped;
    sc->found_inf = 0;
    sc->stage = LT__SC_READY;
    return LT_OK;
}

/* ---- src/17_data.h ---- */
/* ==== @@DATA  text files, llm.c token shards, batches ======================================== */
/* Holds: little-endian reads, whole-file reads bounded by the data limit, llm.c token shards,
   token storage (bytes, uint16 or int32; a mapped file or one read), the batch loader.
   Calls: @@CORE. */

#if !defined(_WIN32) && (defined(__unix__) || defined(__APPLE__))
#define LT__POSIX_IO 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#else
#define LT__POSIX_IO 0
#endif

/* Little-endian reads that work on any host and at any alignment (file bytes are LE). */
static uint16_t lt__rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t lt__rd32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t lt__rd64(const unsigned char *p) { return (uint64_t)lt__rd32(p) | ((uint64_t)lt__rd32(p + 4) << 32); }

LTRAIN_DEF void lt_free(void *p) { LT__FREE(p); }

/* ---- @@DATA.files  files, the data limit, token shards, token storage ----------------------- */
/* Reads into memory stop at the data limit, so a source that never ends (/dev/zero, an endless
   pipe) is refused with a clear error before memory runs out: LTRAIN_DATA_LIMIT=N (bytes, or with
   a k, m or g suffix: binary units) sets it; the default is half the physical memory where the
   system reports it, else 4 GiB.  Regular files the loaders map are not read, so no limit applies. */
static lt_status lt__data_limit(lt_ctx *ctx, uint64_t *limit) {
    const char *e = getenv("LTRAIN_DATA_LIMIT");
    *limit = (uint64_t)4 << 30;
#if LT__POSIX_IO
    {
        long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
        if (pages > 0 && psize > 0) *limit = (uint64_t)pages * (uint64_t)psize / 2;
    }
#endif
    if (e && *e) {
        char *end;
        unsigned long long v;
        int shift = 0;
        errno = 0;
        v = strtoull(e, &end, 10);
        if (*end == 'k' || *end == 'K') shift = 10;
        else if (*end == 'm' || *end == 'M') shift = 20;
        else if (*end == 'g' || *end == 'G') shift = 30;
        if (shift) end++;
        if (errno || end == e || *end || e[0] == '-' || v == 0 || v > (UINT64_MAX >> shift))
            return lt_set_error(ctx, LT_ERR_ARG, "LTRAIN_DATA_LIMIT=\"%s\" is not a positive size (bytes, or a number "
                                "with k, m or g)", e);
        *limit = (uint64_t)v << shift;
    }
    return LT_OK;
}

/* An open input: a file descriptor where POSIX I/O is available (so a FIFO is opened once, and
   a regular file can be mapped), a FILE elsewhere. */
typedef struct {
#if LT__POSIX_IO
    int fd;
#else
    FILE *f;
#endif
    const char *path;
    int regular;      /* a regular file whose size is known */
    uint64_t size;    /* its size (regular only) */
} lt__src;

static lt_status lt__src_open(lt_ctx *ctx, lt__src *s, const char *path) {
    s->path = path;
    s->regular = 0;
    s->size = 0;
#if LT__POSIX_IO
    {
        struct stat st;
        int e;
        do s->fd = open(path, O_RDONLY); while (s->fd < 0 && errno == EINTR);
        if (s->fd < 0) return lt_set_error(ctx, LT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        if (fstat(s->fd, &st) != 0) {
            e = errno;
            close(s->fd);
            return lt_set_error(ctx, LT_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
        }
        if (S_ISDIR(st.st_mode)) {
            close(s->fd);
            return lt_set_error(ctx, LT_ERR_IO, "%s: is a directory, not a file", path);
        }
        if (S_ISREG(st.st_mode) && st.st_size > 0) { s->regular = 1; s->size = (uint64_t)st.st_size; }
    }
#else
    s->f = fopen(path, "rb");
    if (!s->f) return lt_set_error(ctx, LT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
#endif
    return LT_OK;
}

static void lt__src_close(lt__src *s) {
#if LT__POSIX_IO
    close(s->fd);
#else
    fclose(s->f);
#endif
}

/* Up to n bytes into dst: the count read (0 at the end), or -1 with errno set. */
static long long lt__src_read(lt__src *s, void *dst, size_t n) {
#if LT__POSIX_IO
    ssize_t got;
    if (n > ((size_t)1 << 30)) n = (size_t)1 << 30;
    do got = read(s->fd, dst, n); while (got < 0 && errno == EINTR);
    return (long long)got;
#else
    size_t got = fread(dst, 1, n, s->f);
    if (got == 0 && ferror(s->f)) return -1;
    return (long long)got;
#endif
}

/* The rest of the input, in one pass, into a malloc'd buffer that grows with the bytes actually
   read (a size the system reports is only a hint): at most limit bytes. */
static lt_status lt__src_slurp(lt_ctx *ctx, lt__src *s, uint64_t limit, void **buf, size_t *size) {
    unsigned char *p, *q;
    size_t cap = (size_t)1 << 12, len = 0;   /* unknown size: 4 KiB, doubled as bytes arrive */
    *buf = NULL;
    *size = 0;
    if (s->regular && s->size > limit)
        return lt_set_error(ctx, LT_ERR_NOMEM, "%s: %llu bytes is over the data limit of %llu bytes for a read into "
                            "memory (LTRAIN_DATA_LIMIT=N[k|m|g] raises it)", s->path, (unsigned long long)s->size,
                            (unsigned long long)limit);
    if (s->regular && s->size < limit && s->size < ((uint64_t)SIZE_MAX >> 1)) cap = (size_t)s->size + 1;
    else if ((uint64_t)cap > limit) cap = (size_t)limit + 1;   /* a read past the limit fills the buffer */
    p = (unsigned char *)LT__MALLOC(cap);
    if (!p) return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory reading the file", s->path);
    for (;;) {
        long long got;
        if (len == cap) {
            size_t ncap;
            if ((uint64_t)len > limit) {
                LT__FREE(p);
                return lt_set_error(ctx, LT_ERR_NOMEM, "%s: more than %llu bytes read without reaching the end: over "
                                    "the data limit (an input that does not end, such as /dev/zero or an endless "
                                    "pipe? LTRAIN_DATA_LIMIT=N[k|m|g] raises the limit)", s->path,
                                    (unsigned long long)limit);
            }
            if (!lt_mul_size(cap, 2, &ncap)) ncap = SIZE_MAX;
            if ((uint64_t)ncap > limit + 1 && limit < (uint64_t)SIZE_MAX) ncap = (size_t)limit + 1;
            if (ncap <= cap || !(q = (unsigned char *)LT__REALLOC(p, ncap))) {
                LT__FREE(p);
                return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory reading the file (%zu bytes so far)",
                                    s->path, len);
            }
            p = q; cap = ncap;
        }
        got = lt__src_read(s, p + len, cap - len);
        if (got < 0) {
            int e = errno;
            LT__FREE(p);
            return lt_set_error(ctx, LT_ERR_IO, "%s: read failed: %s", s->path, strerror(e));
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    if (cap - len > 4096 && (q = (unsigned char *)LT__REALLOC(p, len ? len : 1)) != NULL) p = q;
    *buf = p;
    *size = len;
    return LT_OK;
}

/* The whole file, whatever its length, read once (a pipe too), at most the data limit. */
LTRAIN_DEF lt_status lt_read_file(lt_ctx *ctx, const char *path, void **buf, size_t *size) {
    lt__src s;
    lt_status st;
    uint64_t limit;
    if (buf) *buf = NULL;
    if (size) *size = 0;
    if (!path || !buf || !size)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_read_file: path, buf and size must not be NULL");
    if (lt__data_limit(ctx, &limit) != LT_OK) return lt_status_of(ctx);
    if (lt__src_open(ctx, &s, path) != LT_OK) return lt_status_of(ctx);
    st = lt__src_slurp(ctx, &s, limit, buf, size);
    lt__src_close(&s);
    return st;
}

/* llm.c token shard: 256 int32 header [20240520, 1, count, 0...] then count uint16 tokens. */
#define LT__SHARD_MAGIC 20240520
#define LT__SHARD_HEADER 1024

/* Checks a shard's header against its size: the token count, or -1 with the field and value. */
static int64_t lt__shard_check(lt_ctx *ctx, const unsigned char *b, size_t size, const char *label) {
    int32_t magic, version, count;
    uint64_t want;
    if (size < LT__SHARD_HEADER)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: %zu bytes is too short for an llm.c token shard "
                            "(its header alone is %d bytes)", label, size, LT__SHARD_HEADER), -1;
    magic = (int32_t)lt__rd32(b);
    version = (int32_t)lt__rd32(b + 4);
    count = (int32_t)lt__rd32(b + 8);
    if (magic != LT__SHARD_MAGIC)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: magic number is %ld, expected %d "
                            "(not an llm.c token shard)", label, (long)magic, LT__SHARD_MAGIC), -1;
    if (version != 1)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: version is %ld, expected 1 "
                            "(uint16 tokens; other versions are not supported)", label, (long)version), -1;
    if (count < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: token count is %ld (negative)", label,
                            (long)count), -1;
    want = (uint64_t)LT__SHARD_HEADER + 2u * (uint64_t)count;
    if ((uint64_t)size != want)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: file is %zu bytes but the header's token count %ld "
                            "needs %llu (%d-byte header + 2 bytes per token)", label, size, (long)count,
                            (unsigned long long)want, LT__SHARD_HEADER), -1;
    return count;
}

LTRAIN_DEF lt_status lt_shard_parse(lt_ctx *ctx, const void *buf, size_t size, const char *label, int vocab,
                                    int32_t **tokens, int64_t *n) {
    const unsigned char *b = (const unsigned char *)buf;
    int32_t *tok;
    int64_t count, i;
    size_t bytes;
    if (tokens) *tokens = NULL;
    if (n) *n = 0;
    if (!label) label = "token shard";
    if (!tokens || !n || (!buf && size))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_shard_parse: %s: buf, tokens and n must not be NULL", label);
    if ((count = lt__shard_check(ctx, b, size, label)) < 0) return lt_status_of(ctx);
    /* count is now bounded by the buffer's real size */
    if (!lt_mul_size(count ? (size_t)count : 1, sizeof(int32_t), &bytes) || !(tok = (int32_t *)LT__MALLOC(bytes)))
        return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %ld tokens", label, (long)count);
    for (i = 0; i < count; i++) {
        uint16_t t = lt__rd16(b + LT__SHARD_HEADER + 2 * i);
        if (vocab > 0 && t >= vocab) {
            LT__FREE(tok);
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: token %u at position %lld is >= the vocab size %d",
                                label, (unsigned)t, (long long)i, vocab);
        }
        tok[i] = t;
    }
    *tokens = tok;
    *n = count;
    return LT_OK;
}

/* A token store, shared by the loaders that read it (refs): token i at p + i*esz, as uint8
   (text bytes), uint16 in host order (shard tokens) or int32 (tokens given in memory).  p points
   into a mapped file (map) or a malloc'd block (heap); batches widen tokens to int32 as they are
   copied out, so no wider copy of the data exists unless lt_loader_tokens / lt_seq_tokens ask for
   one (wide, made on first use). */
typedef struct {
    int refs, esz, is_shard;
    const unsigned char *p;
    int64_t n;
    void *heap;
    void *map;
    size_t map_len;
    int32_t *wide;
    char label[260];     /* the file (or the function) the tokens came from, for messages */
} lt__store;

static int32_t lt__tk(const unsigned char *p, int esz, int64_t i) {
    uint16_t h;
    int32_t w;
    if (esz == 1) return p[i];
    if (esz == 2) { memcpy(&h, p + 2 * i, 2); return h; }
    memcpy(&w, p + 4 * i, 4);
    return w;
}

/* Tokens [start, start+n) as int32 into out. */
static void lt__store_copy(const lt__store *s, int64_t start, int64_t n, int32_t *out) {
    const unsigned char *p = s->p;
    int64_t i;
    if (s->esz == 4) memcpy(out, p + 4 * start, (size_t)n * 4);
    else if (s->esz == 1) for (i = 0; i < n; i++) out[i] = p[start + i];
    else for (i = 0; i < n; i++) out[i] = lt__tk(p, 2, start + i);
}

static void lt__store_release(lt__store *s) {
    if (!s || --s->refs > 0) return;
    LT__FREE(s->heap);
#if LT__POSIX_IO
    if (s->map) munmap(s->map, s->map_len);
#endif
    LT__FREE(s->wide);
    LT__FREE(s);
}

static lt__store *lt__store_new(lt_ctx *ctx, const char *what) {
    lt__store *s = (lt__store *)LT__MALLOC(sizeof(lt__store));
    if (!s) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what); return NULL; }
    memset(s, 0, sizeof *s);
    s->refs = 1;
    return s;
}

/* A store holding a copy of n elements of esz bytes. */
static lt__store *lt__store_copy_of(lt_ctx *ctx, const void *src, int64_t n, int esz, const char *what) {
    lt__store *s;
    size_t bytes;
    if ((uint64_t)n > (uint64_t)SIZE_MAX || !lt_mul_size(n ? (size_t)n : 1, (size_t)esz, &bytes)) {
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %lld tokens", what, (long long)n);
        return NULL;
    }
    if (!(s = lt__store_new(ctx, what))) return NULL;
    if (!(s->heap = LT__MALLOC(bytes))) {
        LT__FREE(s);
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %lld tokens", what, (long long)n);
        return NULL;
    }
    if (n) memcpy(s->heap, src, (size_t)n * (size_t)esz);
    s->p = (const unsigned char *)s->heap;
    s->n = n;
    s->esz = esz;
    snprintf(s->label, sizeof s->label, "%.250s", what);
    return s;
}

/* The tokens as int32 (for the accessors that return a pointer): the store itself when it holds
   int32, else a copy made once. */
static const int32_t *lt__store_wide(lt_ctx *ctx, lt__store *s) {
    size_t bytes;
    if (s->esz == 4) return (const int32_t *)(const void *)s->p;
    if (!s->wide) {
        if (!lt_mul_size(s->n ? (size_t)s->n : 1, sizeof(int32_t), &bytes) ||
            !(s->wide = (int32_t *)LT__MALLOC(bytes))) {
            lt_set_error(ctx, LT_ERR_NOMEM, "out of memory for an int32 copy of %lld tokens", (long long)s->n);
            return NULL;
        }
        lt__store_copy(s, 0, s->n, s->wide);
    }
    return s->wide;
}

/* vocab > 0 rejects tokens >= vocab (only a vocab below the storage's range can be exceeded). */
static lt_status lt__store_check_vocab(lt_ctx *ctx, const lt__store *s, int vocab, const char *label) {
    int64_t i;
    if (vocab <= 0 || (s->esz == 1 && vocab >= 256) || (s->esz == 2 && vocab >= 65536)) return LT_OK;
    for (i = 0; i < s->n; i++) {
        int32_t t = lt__tk(s->p, s->esz, i);
        if (t >= vocab || t < 0) {
            if (s->esz == 1)
                return lt_set_error(ctx, LT_ERR_FORMAT, "%s: text byte %u at position %lld is >= the vocab size %d "
                                    "(hint: a text file needs vocab >= 256, or 0)", label, (unsigned)t, (long long)i,
                                    vocab);
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: token %ld at position %lld is %s the vocab size %d", label,
                                (long)t, (long long)i, t < 0 ? "negative, outside" : ">=", vocab);
        }
    }
    return LT_OK;
}

static int lt__host_le(void) {
    uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* Does the name end in ".bin" (any case)? */
static int lt__ends_bin(const char *path) {
    size_t n = strlen(path);
    const char *e = path + n - 4;
    return n >= 4 && e[0] == '.' && (e[1] | 32) == 'b' && (e[2] | 32) == 'i' && (e[3] | 32) == 'n';
}

/* Opens a data file into a new store, reading it once: a regular file is mapped where the
   system allows (else read), anything else (a pipe, a device) read up to the data limit.  Then
   the format: format's, or with LT_DATA_AUTO a shard when the name ends in .bin or the file starts
   with the shard magic, text otherwise.  A shard is checked (header, size, vocab) and its tokens
   used in place; text bytes are used as they are. */
static lt__store *lt__store_open(lt_ctx *ctx, const char *path, lt_data_format format, int vocab) {
    lt__src src;
    lt__store *s;
    unsigned char *base = NULL;
    size_t size = 0;
    uint64_t limit;
    int shard;
    if (format != LT_DATA_AUTO && format != LT_DATA_TEXT && format != LT_DATA_SHARD) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: format %d is not LT_DATA_AUTO, LT_DATA_TEXT or LT_DATA_SHARD", path,
                     (int)format);
        return NULL;
    }
    if (lt__data_limit(ctx, &limit) != LT_OK || !(s = lt__store_new(ctx, path))) return NULL;
    snprintf(s->label, sizeof s->label, "%.250s", path);
    if (lt__src_open(ctx, &src, path) != LT_OK) { LT__FREE(s); return NULL; }
#if LT__POSIX_IO
    if (src.regular && src.size <= (uint64_t)SIZE_MAX) {
        void *m = mmap(NULL, (size_t)src.size, PROT_READ, MAP_PRIVATE, src.fd, 0);
        if (m != MAP_FAILED) { s->map = m; s->map_len = (size_t)src.size; base = (unsigned char *)m; size = s->map_len; }
    }
#endif
    if (!base) {
        void *buf;
        if (lt__src_slurp(ctx, &src, limit, &buf, &size) != LT_OK) { lt__src_close(&src); LT__FREE(s); return NULL; }
        s->heap = buf;
        base = (unsigned char *)buf;
    }
    lt__src_close(&src);
    shard = format == LT_DATA_SHARD ||
            (format == LT_DATA_AUTO && (lt__ends_bin(path) || (size >= 4 && lt__rd32(base) == LT__SHARD_MAGIC)));
    if (shard) {
        int64_t count = lt__shard_check(ctx, base, size, path), i;
        if (count < 0) { lt__store_release(s); return NULL; }
        s->p = base + LT__SHARD_HEADER;
        if (!lt__host_le()) {   /* the file's tokens are little-endian: to host order */
            unsigned char *to = s->heap ? base + LT__SHARD_HEADER : (unsigned char *)LT__MALLOC((size_t)count * 2 + 1);
            if (!to) {
                lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %lld tokens", path, (long long)count);
                lt__store_release(s);
                return NULL;
            }
            for (i = 0; i < count; i++) {
                uint16_t t = lt__rd16(base + LT__SHARD_HEADER + 2 * i);
                memcpy(to + 2 * i, &t, 2);
            }
            if (!s->heap) {
#if LT__POSIX_IO
                munmap(s->map, s->map_len);
#endif
                s->map = NULL;
                s->heap = to;
            }
            s->p = to;
        }
        s->n = count;
        s->esz = 2;
        s->is_shard = 1;
    } else {
        s->p = base;
        s->n = (int64_t)size;
        s->esz = 1;
    }
    if (lt__store_check_vocab(ctx, s, vocab, path) != LT_OK) { lt__store_release(s); return NULL; }
    return s;
}

struct lt_loader {
    lt_ctx *ctx;
    lt__store *st;       /* the tokens (shared with a sequence loader made from this one) */
    int64_t n;           /* tokens */
    int64_t bt;          /* B*T */
    int64_t nwin;        /* windows per epoch: floor((n-1)/(B*T)) */
    int B, T, is_shard;
    int64_t epoch, index;/* the next batch: window number `index` of epoch `epoch` */
    int shuffled;
    uint64_t seed;
    int64_t *perm;       /* shuffled: the window order of epoch perm_epoch */
    int64_t perm_epoch;
};

/* ---- @@DATA.loader  the batch loader --------------------------------------------------------- */
/* Takes over the store's reference (releases it on failure).  what: "lt_loader_open: \"path\"". */
static lt_loader *lt__loader_make(lt_ctx *ctx, lt__store *st, int B, int T, const char *what) {
    lt_loader *ld;
    int64_t bt = (int64_t)B * (int64_t)T, n = st->n;
    if (n < bt + 1) {
        lt__store_release(st);
        lt_set_error(ctx, LT_ERR_ARG, "%s: %lld tokens, but a batch of B=%d x T=%d needs at least B*T+1 = %lld "
                     "(hint: use a smaller B or T, or more data)", what, (long long)n, B, T, (long long)(bt + 1));
        return NULL;
    }
    ld = (lt_loader *)LT__MALLOC(sizeof(lt_loader));
    if (!ld) {
        lt__store_release(st);
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what);
        return NULL;
    }
    memset(ld, 0, sizeof *ld);
    ld->ctx = ctx; ld->st = st; ld->n = n; ld->B = B; ld->T = T; ld->bt = bt;
    ld->nwin = (n - 1) / bt;
    ld->is_shard = st->is_shard;
    ld->perm_epoch = -1;
    return ld;
}

static int lt__loader_check_bt(lt_ctx *ctx, const char *fn, int B, int T) {
    if (B >= 1 && T >= 1) return 1;
    lt_set_error(ctx, LT_ERR_ARG, "%s: B=%d and T=%d must both be >= 1", fn, B, T);
    return 0;
}

LTRAIN_DEF lt_loader *lt_loader_open_as(lt_ctx *ctx, const char *path, lt_data_format format, int B, int T,
                                        int vocab) {
    lt__store *st;
    char what[300];
    if (!path) { lt_set_error(ctx, LT_ERR_ARG, "lt_loader_open: path is NULL"); return NULL; }
    if (!lt__loader_check_bt(ctx, "lt_loader_open", B, T)) return NULL;
    if (vocab < 0) { lt_set_error(ctx, LT_ERR_ARG, "lt_loader_open: vocab %d must be >= 0 (0: no check)", vocab); return NULL; }
    if (!(st = lt__store_open(ctx, path, format, vocab))) return NULL;
    snprintf(what, sizeof what, "lt_loader_open: %.250s (%s)", path, st->is_shard ? "token shard" : "text file");
    return lt__loader_make(ctx, st, B, T, what);
}

LTRAIN_DEF lt_loader *lt_loader_open(lt_ctx *ctx, const char *path, int B, int T, int vocab) {
    return lt_loader_open_as(ctx, path, LT_DATA_AUTO, B, T, vocab);
}

LTRAIN_DEF lt_loader *lt_loader_from_tokens(lt_ctx *ctx, const int32_t *tokens, int64_t n, int B, int T) {
    lt__store *st;
    if (!lt__loader_check_bt(ctx, "lt_loader_from_tokens", B, T)) return NULL;
    if (n < 0 || (!tokens && n > 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_loader_from_tokens: n = %lld with tokens %s", (long long)n, tokens ? "given" : "NULL");
        return NULL;
    }
    if (!(st = lt__store_copy_of(ctx, tokens, n, 4, "lt_loader_from_tokens"))) return NULL;
    return lt__loader_make(ctx, st, B, T, "lt_loader_from_tokens");
}

LTRAIN_DEF void lt_loader_destroy(lt_loader *ld) {
    if (!ld) return;
    lt__store_release(ld->st);
    LT__FREE(ld->perm);
    LT__FREE(ld);
}

/* An unbiased draw from [0, bound): reject the top 2^64 mod bound values. */
static uint64_t lt__rng_below(lt_rng *r, uint64_t bound) {
    uint64_t lim = (0 - bound) % bound, x;
    do x = lt_rng_u64(r); while (x < lim);
    return x % bound;
}

/* Epoch e's window order: Fisher-Yates driven by an RNG seeded from (seed, e) alone, so any
   position can be reached again without replaying earlier epochs. */
static void lt__loader_permute(lt_loader *ld) {
    lt_rng r;
    int64_t i;
    lt_rng_seed(&r, (uint64_t)ld->epoch);
    lt_rng_seed(&r, ld->seed ^ lt_rng_u64(&r));
    for (i = 0; i < ld->nwin; i++) ld->perm[i] = i;
    for (i = ld->nwin - 1; i > 0; i--) {
        int64_t j = (int64_t)lt__rng_below(&r, (uint64_t)i + 1), t = ld->perm[i];
        ld->perm[i] = ld->perm[j]; ld->perm[j] = t;
    }
    ld->perm_epoch = ld->epoch;
}

LTRAIN_DEF void lt_loader_shuffle(lt_loader *ld, uint64_t seed) {
    if (!ld) return;
    if (!ld->perm) {
        size_t bytes;
        if (!lt_mul_size((size_t)ld->nwin, sizeof(int64_t), &bytes) || !(ld->perm = (int64_t *)LT__MALLOC(bytes))) {
            lt_set_error(ld->ctx, LT_ERR_NOMEM, "lt_loader_shuffle: out of memory for %lld windows", (long long)ld->nwin);
            return;
        }
    }
    ld->shuffled = 1;
    ld->seed = seed;
    ld->perm_epoch = -1;
}

LTRAIN_DEF lt_status lt_loader_next(lt_loader *ld, int32_t *inputs, int32_t *targets) {
    int64_t w;
    if (!ld) return LT_ERR_ARG;
    if (ld->shuffled && ld->perm_epoch != ld->epoch) lt__loader_permute(ld);
    w = ld->shuffled ? ld->perm[ld->index] : ld->index;
    if (inputs) lt__store_copy(ld->st, w * ld->bt, ld->bt, inputs);
    if (targets) lt__store_copy(ld->st, w * ld->bt + 1, ld->bt, targets);
    if (++ld->index == ld->nwin) { ld->index = 0; ld->epoch++; }
    return LT_OK;
}

LTRAIN_DEF int64_t lt_loader_num_tokens(const lt_loader *ld) { return ld ? ld->n : 0; }
LTRAIN_DEF const int32_t *lt_loader_tokens(const lt_loader *ld) { return ld ? lt__store_wide(ld->ctx, ld->st) : NULL; }
LTRAIN_DEF int lt_loader_is_shard(const lt_loader *ld) { return ld ? ld->is_shard : 0; }
LTRAIN_DEF int lt_loader_token_bytes(const lt_loader *ld) { return ld ? ld->st->esz : 0; }

LTRAIN_DEF lt_status lt_loader_read(const lt_loader *ld, int64_t start, int64_t n, int32_t *out) {
    if (!ld) return LT_ERR_ARG;
    if (start < 0 || n < 0 || start > ld->n - n || (!out && n > 0))
        return lt_set_error(ld->ctx, LT_ERR_ARG, "lt_loader_read: tokens [%lld, %lld + %lld) are outside [0, %lld)%s",
                            (long long)start, (long long)start, (long long)n, (long long)ld->n, out ? "" : " or out is NULL");
    if (n) lt__store_copy(ld->st, start, n, out);
    return LT_OK;
}

LTRAIN_DEF lt_status lt_loader_check_vocab(lt_loader *ld, int vocab) {
    if (!ld) return LT_ERR_ARG;
    return lt__store_check_vocab(ld->ctx, ld->st, vocab, ld->st->label);
}

LTRAIN_DEF void lt_loader_get_pos(const lt_loader *ld, int64_t *epoch, int64_t *index) {
    if (epoch) *epoch = ld ? ld->epoch : 0;
    if (index) *index = ld ? ld->index : 0;
}

LTRAIN_DEF lt_status lt_loader_set_pos(lt_loader *ld, int64_t epoch, int64_t index) {
    if (!ld) return LT_ERR_ARG;
    if (epoch < 0 || index < 0 || index >= ld->nwin)
        return lt_set_error(ld->ctx, LT_ERR_ARG, "lt_loader_set_pos: (epoch %lld, index %lld) is out of range: "
                            "epoch must be >= 0 and index in [0, %lld) (batches per epoch)",
                            (long long)epoch, (long long)index, (long long)ld->nwin);
    ld->epoch = epoch;
    ld->index = index;
    return LT_OK;
}

/* ---- src/18_data_seq.h ---- */
/* ==== @@DATA (continued)  sequences: variable lengths, buckets, length schedule, restarts ====== */
/* Holds: the sequence loader (variable lengths, padding, buckets, shuffles, restarts) and the
   length schedule (lt_len_*).
   Calls: @@CORE, @@LOSS (lt__gpt_loss), @@DATA (file and shard reads). */

/* ---- @@DATA.seq  the sequence loader --------------------------------------------------------- */
/* A row of a batch before padding: its inputs and targets (len of each), elements of esz bytes
   (lt__tk reads them). */
typedef struct { const unsigned char *ids, *tg; int esz, len; } lt__row;

struct lt_seq_loader {
    lt_ctx *ctx;
    lt_seq_config cfg;
    lt__store *st;           /* every token of the source (shared with a stream loader) */
    int64_t ntok;
    int64_t n;               /* pieces */
    int64_t *off;            /* piece i: tokens tok[off[i] .. off[i]+len[i]] */
    int32_t *len;
    int32_t *bucket_of;      /* [max_len+1]: the bucket of a length (0 = the longest lengths) */
    int64_t epoch, index;    /* the next batch */
    /* the plan of epoch plan_epoch: batch i is order[run_start[bperm[i]] ..][run_len[bperm[i]]] */
    int64_t plan_epoch, nb;
    int64_t *order, *run_start, *run_len, *bperm;
    int64_t *bcount;         /* per bucket: counts, then offsets (counting sort) */
    int64_t nbuckets;
    lt__row *rows;           /* scratch for one batch */
};

LTRAIN_DEF lt_seq_config lt_seq_defaults(void) {
    lt_seq_config c;
    memset(&c, 0, sizeof c);
    c.split = LT_SEQ_LINES;
    c.eot = 50256;
    c.max_len = 64;
    c.batching = LT_BATCH_BUCKET;
    c.batch_tokens = 512;
    c.bucket_width = 1.0 / 16;
    c.pad_to = 1;
    return c;
}

LTRAIN_DEF void lt_seq_destroy(lt_seq_loader *sl) {
    if (!sl) return;
    lt__store_release(sl->st); LT__FREE(sl->off); LT__FREE(sl->len); LT__FREE(sl->bucket_of);
    LT__FREE(sl->order); LT__FREE(sl->run_start); LT__FREE(sl->run_len); LT__FREE(sl->bperm);
    LT__FREE(sl->bcount); LT__FREE(sl->rows);
    LT__FREE(sl);
}

static int lt__seq_check_cfg(lt_ctx *ctx, const char *who, const lt_seq_config *c) {
    if (!c) return lt_set_error(ctx, LT_ERR_ARG, "%s: config is NULL (start from lt_seq_defaults())", who), 0;
    if (c->split != LT_SEQ_LINES && c->split != LT_SEQ_PARAGRAPHS && c->split != LT_SEQ_EOT)
        return lt_set_error(ctx, LT_ERR_ARG, "%s: split %d is not LT_SEQ_LINES, LT_SEQ_PARAGRAPHS or LT_SEQ_EOT",
                            who, (int)c->split), 0;
    if (c->batching != LT_BATCH_BUCKET && c->batching != LT_BATCH_RANDOM)
        return lt_set_error(ctx, LT_ERR_ARG, "%s: batching %d is not LT_BATCH_BUCKET or LT_BATCH_RANDOM", who,
                            (int)c->batching), 0;
    if (c->max_len < 1 || c->batch_tokens < c->max_len || c->pad_to < 1 ||
        !(c->bucket_width > 0 && c->bucket_width < 1))
        return lt_set_error(ctx, LT_ERR_ARG, "%s: max_len %d, batch_tokens %lld, pad_to %d, bucket_width %g: need "
                            "max_len >= 1, batch_tokens >= max_len (one longest piece must fit), pad_to >= 1 and "
                            "bucket_width in (0,1)", who, c->max_len, (long long)c->batch_tokens, c->pad_to,
                            c->bucket_width), 0;
    return 1;
}

/* Adds the pieces of the sequence tok[start .. start+ntok-1]: piece k starts at start + k*T and
   holds min(T, ntok-1-k*T) pairs.  cap: room in off/len (counted beforehand). */
static void lt__seq_cut(lt_seq_loader *sl, int64_t start, int64_t ntok) {
    int64_t T = sl->cfg.max_len, k;
    for (k = 0; k * T < ntok - 1; k++) {
        int64_t left = ntok - 1 - k * T;
        sl->off[sl->n] = start + k * T;
        sl->len[sl->n] = (int32_t)(left < T ? left : T);
        sl->n++;
    }
}

/* Walks the sequences; with count_only, counts pieces into *pieces instead of storing them. */
static void lt__seq_split(lt_seq_loader *sl, int count_only, int64_t *pieces) {
    const unsigned char *t = sl->st->p;
    int esz = sl->st->esz;
    int64_t i = 0, N = sl->ntok, T = sl->cfg.max_len, total = 0;
#define LT__SEQ_EMIT(s, cnt) do { int64_t s_ = (s), c_ = (cnt); \
        if (c_ >= 2) { if (count_only) total += (c_ - 2) / T + 1; else lt__seq_cut(sl, s_, c_); } } while (0)
    if (sl->cfg.split == LT_SEQ_EOT) {
        int64_t start = 0;
        for (i = 1; i <= N; i++)
            if (i == N || lt__tk(t, esz, i) == sl->cfg.eot) { LT__SEQ_EMIT(start, i - start); start = i; }
    } else {
        int64_t para = -1;   /* paragraphs: where the current one starts (-1: none open) */
        while (i < N) {
            int64_t j = i, blank = 1;
            while (j < N) {
                int32_t c = lt__tk(t, esz, j);
                if (c == '\n') break;
                if (c != ' ' && c != '\t' && c != '\r') blank = 0;
                j++;
            }
            if (j < N) j++;  /* the line includes its '\n' */
            if (sl->cfg.split == LT_SEQ_LINES) LT__SEQ_EMIT(i, j - i);
            else if (blank) { if (para >= 0) LT__SEQ_EMIT(para, i - para); para = -1; }
            else if (para < 0) para = i;
            i = j;
        }
        if (para >= 0) LT__SEQ_EMIT(para, N - para);
    }
#undef LT__SEQ_EMIT
    if (count_only) *pieces = total;
}

/* Takes over the store's reference (releases it on failure). */
static lt_seq_loader *lt__seq_make(lt_ctx *ctx, lt__store *st, const lt_seq_config *cfg, const char *what) {
    lt_seq_loader *sl = (lt_seq_loader *)LT__MALLOC(sizeof(lt_seq_loader));
    int64_t pieces = 0, T, hi, b, ntok = st->n;
    size_t bytes;
    if (!sl) { lt__store_release(st); lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what); return NULL; }
    memset(sl, 0, sizeof *sl);
    sl->ctx = ctx; sl->cfg = *cfg; sl->st = st; sl->ntok = ntok; sl->plan_epoch = -1;
    T = cfg->max_len;
    lt__seq_split(sl, 1, &pieces);
    if (pieces < 1) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: no sequence with 2 or more tokens (%lld tokens split by %s)", what,
                     (long long)ntok, cfg->split == LT_SEQ_LINES ? "lines" : cfg->split == LT_SEQ_PARAGRAPHS ?
                     "paragraphs" : "end-of-text id");
        lt_seq_destroy(sl);
        return NULL;
    }
    if (!lt_mul_size((size_t)pieces, sizeof(int64_t), &bytes) ||
        !(sl->off = (int64_t *)LT__MALLOC(bytes)) || !(sl->len = (int32_t *)LT__MALLOC(bytes)) ||
        !(sl->order = (int64_t *)LT__MALLOC(bytes)) || !(sl->run_start = (int64_t *)LT__MALLOC(bytes)) ||
        !(sl->run_len = (int64_t *)LT__MALLOC(bytes)) || !(sl->bperm = (int64_t *)LT__MALLOC(bytes)) ||
        !(sl->bucket_of = (int32_t *)LT__MALLOC((size_t)(T + 1) * sizeof(int32_t)))) {
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %lld pieces", what, (long long)pieces);
        lt_seq_destroy(sl);
        return NULL;
    }
    lt__seq_split(sl, 0, NULL);
    LT__ASSERT(sl->n == pieces);
    /* buckets from the top: (hi*(1-w), hi], each at least one length wide */
    for (hi = T, b = 0; hi >= 1; b++) {
        int64_t lo = (int64_t)floor((double)hi * (1.0 - cfg->bucket_width)), l;
        if (lo > hi - 1) lo = hi - 1;
        if (lo < 0) lo = 0;
        for (l = hi; l > lo; l--) sl->bucket_of[l] = (int32_t)b;
        hi = lo;
    }
    sl->bucket_of[0] = (int32_t)b;
    sl->nbuckets = b + 1;
    if (!(sl->bcount = (int64_t *)LT__MALLOC((size_t)sl->nbuckets * sizeof(int64_t)))) {
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what);
        lt_seq_destroy(sl);
        return NULL;
    }
    return sl;
}

LTRAIN_DEF lt_seq_loader *lt_seq_from_tokens(lt_ctx *ctx, const int32_t *tokens, int64_t n, const lt_seq_config *cfg) {
    lt__store *st;
    if (!lt__seq_check_cfg(ctx, "lt_seq_from_tokens", cfg)) return NULL;
    if (n < 0 || (!tokens && n > 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_seq_from_tokens: n = %lld with tokens %s", (long long)n, tokens ? "given" : "NULL");
        return NULL;
    }
    if (!(st = lt__store_copy_of(ctx, tokens, n, 4, "lt_seq_from_tokens"))) return NULL;
    return lt__seq_make(ctx, st, cfg, "lt_seq_from_tokens");
}

LTRAIN_DEF lt_seq_loader *lt_seq_from_text(lt_ctx *ctx, const char *text, size_t n, const lt_seq_config *cfg) {
    lt__store *st;
    if (!lt__seq_check_cfg(ctx, "lt_seq_from_text", cfg)) return NULL;
    if (!text && n) { lt_set_error(ctx, LT_ERR_ARG, "lt_seq_from_text: text is NULL"); return NULL; }
    if (n > (size_t)INT64_MAX || !(st = lt__store_copy_of(ctx, text, (int64_t)n, 1, "lt_seq_from_text"))) {
        if (!lt_failed(ctx)) lt_set_error(ctx, LT_ERR_NOMEM, "lt_seq_from_text: %zu bytes is too much", n);
        return NULL;
    }
    return lt__seq_make(ctx, st, cfg, "lt_seq_from_text");
}

/* Lines and paragraphs split text; a shard is split at an end-of-text id. */
static int lt__seq_fits(lt_ctx *ctx, const lt__store *st, const lt_seq_config *cfg, const char *what) {
    if (!st->is_shard || cfg->split == LT_SEQ_EOT) return 1;
    lt_set_error(ctx, LT_ERR_ARG, "%s: lines and paragraphs split text; a token shard is split at an "
                 "end-of-text id (hint: --eot 50256)", what);
    return 0;
}

LTRAIN_DEF lt_seq_loader *lt_seq_open_as(lt_ctx *ctx, const char *path, lt_data_format format,
                                         const lt_seq_config *cfg, int vocab) {
    lt__store *st;
    char what[300];
    if (!path) { lt_set_error(ctx, LT_ERR_ARG, "lt_seq_open: path is NULL"); return NULL; }
    if (!lt__seq_check_cfg(ctx, "lt_seq_open", cfg)) return NULL;
    if (vocab < 0) { lt_set_error(ctx, LT_ERR_ARG, "lt_seq_open: vocab %d must be >= 0 (0: no check)", vocab); return NULL; }
    if (!(st = lt__store_open(ctx, path, format, vocab))) return NULL;
    snprintf(what, sizeof what, "lt_seq_open: %.250s (%s)", path, st->is_shard ? "token shard" : "text file");
    if (!lt__seq_fits(ctx, st, cfg, what)) { lt__store_release(st); return NULL; }
    return lt__seq_make(ctx, st, cfg, what);
}

LTRAIN_DEF lt_seq_loader *lt_seq_open(lt_ctx *ctx, const char *path, const lt_seq_config *cfg, int vocab) {
    return lt_seq_open_as(ctx, path, LT_DATA_AUTO, cfg, vocab);
}

LTRAIN_DEF lt_seq_loader *lt_seq_from_loader(lt_ctx *ctx, const lt_loader *ld, const lt_seq_config *cfg) {
    char what[300];
    if (!ld) { lt_set_error(ctx, LT_ERR_ARG, "lt_seq_from_loader: loader is NULL"); return NULL; }
    if (!lt__seq_check_cfg(ctx, "lt_seq_from_loader", cfg)) return NULL;
    snprintf(what, sizeof what, "lt_seq_from_loader: %.250s (%s)", ld->st->label, ld->is_shard ? "token shard" : "text file");
    if (!lt__seq_fits(ctx, ld->st, cfg, what)) return NULL;
    ld->st->refs++;
    return lt__seq_make(ctx, ld->st, cfg, what);
}

LTRAIN_DEF int64_t lt_seq_count(const lt_seq_loader *sl) { return sl ? sl->n : 0; }
LTRAIN_DEF int lt_seq_length(const lt_seq_loader *sl, int64_t i) { return sl && i >= 0 && i < sl->n ? sl->len[i] : 0; }
LTRAIN_DEF const int32_t *lt_seq_tokens(const lt_seq_loader *sl, int64_t i) {
    const int32_t *w;
    if (!sl || i < 0 || i >= sl->n) return NULL;
    w = lt__store_wide(sl->ctx, sl->st);
    return w ? w + sl->off[i] : NULL;
}

/* The padded length of a batch whose longest row is m. */
static int64_t lt__seq_padded(const lt_seq_config *c, int64_t m) {
    int64_t p = (m + c->pad_to - 1) / c->pad_to * c->pad_to;
    return p < c->max_len ? p : c->max_len;   /* m <= max_len always */
}

/* ---- @@DATA.buckets  batches: buckets, packing, padding -------------------------------------- */
/* Epoch e's batches, from an RNG seeded by (seed, e) alone (as the stream loader's shuffle):
   a permutation of the pieces; bucket mode sorts it stably by bucket (a random order inside
   each bucket).  Then batches are packed greedily in that order, a batch closing when the next
   piece would push rows * padded length past the budget (or, bucketed, starts another bucket);
   bucketed batches are shuffled last. */
static void lt__seq_plan(lt_seq_loader *sl, int64_t epoch) {
    lt_rng r;
    int64_t i, n = sl->n, *perm = sl->bperm, rows = 0, m = 0, nb = 0;
    int bucketed = sl->cfg.batching == LT_BATCH_BUCKET;
    if (sl->plan_epoch == epoch) return;
    lt_rng_seed(&r, (uint64_t)epoch);
    lt_rng_seed(&r, sl->cfg.seed ^ lt_rng_u64(&r));
    for (i = 0; i < n; i++) perm[i] = i;
    for (i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)lt__rng_below(&r, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j]; perm[j] = t;
    }
    if (bucketed) {   /* counting sort by bucket, stable: key[] counts, then offsets */
        int64_t *cnt = sl->bcount, acc = 0;
        for (i = 0; i < sl->nbuckets; i++) cnt[i] = 0;
        for (i = 0; i < n; i++) cnt[sl->bucket_of[sl->len[perm[i]]]]++;
        for (i = 0; i < sl->nbuckets; i++) { int64_t c = cnt[i]; cnt[i] = acc; acc += c; }
        for (i = 0; i < n; i++) sl->order[cnt[sl->bucket_of[sl->len[perm[i]]]]++] = perm[i];
    } else {
        memcpy(sl->order, perm, (size_t)n * sizeof(int64_t));
    }
    for (i = 0; i < n; i++) {
        int64_t L = sl->len[sl->order[i]], m2 = L > m ? L : m;
        int new_bucket = bucketed && rows > 0 && sl->bucket_of[L] != sl->bucket_of[sl->len[sl->order[i - 1]]];
        if (rows > 0 && (new_bucket || (rows + 1) * lt__seq_padded(&sl->cfg, m2) > sl->cfg.batch_tokens)) {
            sl->run_len[nb++] = rows;
            rows = 0; m2 = L;
        }
        if (rows == 0) sl->run_start[nb] = i;
        rows++; m = m2;
    }
    sl->run_len[nb++] = rows;
    for (i = 0; i < nb; i++) perm[i] = i;
    if (bucketed)
        for (i = nb - 1; i > 0; i--) {
            int64_t j = (int64_t)lt__rng_below(&r, (uint64_t)i + 1), t = perm[i];
            perm[i] = perm[j]; perm[j] = t;
        }
    sl->nb = nb;
    sl->plan_epoch = epoch;
}

LTRAIN_DEF int64_t lt_seq_batches(lt_seq_loader *sl, int64_t epoch) {
    if (!sl || epoch < 0) return 0;
    lt__seq_plan(sl, epoch);
    return sl->nb;
}

LTRAIN_DEF int64_t lt_seq_batch_members(lt_seq_loader *sl, int64_t epoch, int64_t index, int64_t *pieces) {
    int64_t run, k;
    if (!sl || epoch < 0 || index < 0) return -1;
    lt__seq_plan(sl, epoch);
    if (index >= sl->nb) return -1;
    run = sl->bperm[index];
    if (pieces)
        for (k = 0; k < sl->run_len[run]; k++) pieces[k] = sl->order[sl->run_start[run] + k];
    return sl->run_len[run];
}

/* Rows cut to at most fold pairs (0: no cut), padded to the longest resulting row rounded up to
   pad_to (but not past cap) into b: inputs 0 and targets LT_IGNORE_INDEX past each length. */
static lt_status lt__batch_fill(lt_ctx *ctx, lt_batch *b, const lt__row *rows, int64_t nrows, int fold, int pad_to,
                                int cap) {
    int64_t F = fold > 0 ? fold : INT_MAX, R = 0, W = 1, Wr, i, r = 0;
    size_t pos;
    int32_t *p1, *p2;
    for (i = 0; i < nrows; i++) {
        int64_t L = rows[i].len;
        R += L > 0 ? (L + F - 1) / F : 1;
        if ((L < F ? L : F) > W) W = L < F ? L : F;
    }
    Wr = (W + pad_to - 1) / pad_to * pad_to;
    if (Wr <= cap) W = Wr;   /* never past the model's length (every row fits in cap) */
    if (R > INT_MAX || !lt_mul_size((size_t)R, (size_t)W, &pos) || pos > (size_t)INT64_MAX / 8)
        return lt_set_error(ctx, LT_ERR_NOMEM, "lt_batch: %lld rows of %lld is too large", (long long)R, (long long)W);
    if ((int64_t)pos > b->cap_pos) {
        p1 = (int32_t *)LT__REALLOC(b->ids, pos * sizeof(int32_t));
        if (p1) b->ids = p1;
        p2 = p1 ? (int32_t *)LT__REALLOC(b->targets, pos * sizeof(int32_t)) : NULL;
        if (p2) b->targets = p2;
        if (!p1 || !p2) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_batch: out of memory for %zu positions", pos);
        b->cap_pos = (int64_t)pos;
    }
    if (R > b->cap_rows) {
        int32_t *p = (int32_t *)LT__REALLOC(b->lengths, (size_t)R * sizeof(int32_t));
        if (!p) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_batch: out of memory for %lld rows", (long long)R);
        b->lengths = p;
        b->cap_rows = R;
    }
    b->B = (int)R; b->T = (int)W; b->real = 0;
    for (i = 0; i < nrows; i++) {
        int64_t L = rows[i].len, c = 0;
        do {
            int64_t n = L - c < F ? L - c : F, t;
            int32_t *oi = b->ids + r * W, *ot = b->targets + r * W;
            if (n > W) n = W;
            for (t = 0; t < n; t++) {
                oi[t] = lt__tk(rows[i].ids, rows[i].esz, c + t);
                ot[t] = lt__tk(rows[i].tg, rows[i].esz, c + t);
                b->real += ot[t] != LT_IGNORE_INDEX;
            }
            for (; t < W; t++) { oi[t] = 0; ot[t] = LT_IGNORE_INDEX; }
            b->lengths[r++] = (int32_t)n;
            c += F;
        } while (c < L);
    }
    LT__ASSERT(r == R);
    return LT_OK;
}

LTRAIN_DEF lt_status lt_seq_next(lt_seq_loader *sl, int fold_len, lt_batch *b) {
    int64_t run, k, nr;
    if (!sl || !b) return sl ? lt_set_error(sl->ctx, LT_ERR_ARG, "lt_seq_next: batch is NULL") : LT_ERR_ARG;
    if (lt_failed(sl->ctx)) return lt_status_of(sl->ctx);
    if (!sl->rows) {
        size_t bytes;
        if (!lt_mul_size((size_t)sl->n, sizeof(lt__row), &bytes) || !(sl->rows = (lt__row *)LT__MALLOC(bytes)))
            return lt_set_error(sl->ctx, LT_ERR_NOMEM, "lt_seq_next: out of memory");
    }
    lt__seq_plan(sl, sl->epoch);
    run = sl->bperm[sl->index];
    nr = sl->run_len[run];
    for (k = 0; k < nr; k++) {
        int64_t p = sl->order[sl->run_start[run] + k];
        sl->rows[k].ids = sl->st->p + sl->off[p] * sl->st->esz;
        sl->rows[k].tg = sl->rows[k].ids + sl->st->esz;
        sl->rows[k].esz = sl->st->esz;
        sl->rows[k].len = sl->len[p];
    }
    if (++sl->index == sl->nb) { sl->index = 0; sl->epoch++; }
    return lt__batch_fill(sl->ctx, b, sl->rows, nr, fold_len, sl->cfg.pad_to, sl->cfg.max_len);
}

LTRAIN_DEF void lt_seq_get_pos(const lt_seq_loader *sl, int64_t *epoch, int64_t *index) {
    if (epoch) *epoch = sl ? sl->epoch : 0;
    if (index) *index = sl ? sl->index : 0;
}

LTRAIN_DEF lt_status lt_seq_set_pos(lt_seq_loader *sl, int64_t epoch, int64_t index) {
    if (!sl) return LT_ERR_ARG;
    if (epoch < 0 || index < 0 || index >= lt_seq_batches(sl, epoch))
        return lt_set_error(sl->ctx, LT_ERR_ARG, "lt_seq_set_pos: (epoch %lld, index %lld) is out of range: epoch "
                            "must be >= 0 and index in [0, %lld) (that epoch's batches)", (long long)epoch,
                            (long long)index, (long long)(epoch >= 0 ? lt_seq_batches(sl, epoch) : 0));
    sl->epoch = epoch;
    sl->index = index;
    return LT_OK;
}

LTRAIN_DEF lt_status lt_batch_from_rows(lt_ctx *ctx, lt_batch *b, const int32_t *ids, const int32_t *targets,
                                        const int32_t *lengths, int B, int T, int fold_len) {
    lt__row *rows;
    lt_status s;
    int i;
    if (!b || !ids || !targets || B < 1 || T < 1)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_batch_from_rows: need b, ids, targets, B >= 1 and T >= 1 (B = %d, "
                            "T = %d)", B, T);
    for (i = 0; lengths && i < B; i++)
        if (lengths[i] < 0 || lengths[i] > T)
            return lt_set_error(ctx, LT_ERR_ARG, "lt_batch_from_rows: lengths[%d] is %d: it must be in [0,%d]", i,
                                lengths[i], T);
    rows = (lt__row *)LT__MALLOC((size_t)B * sizeof(lt__row));
    if (!rows) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_batch_from_rows: out of memory");
    for (i = 0; i < B; i++) {
        rows[i].ids = (const unsigned char *)(ids + (int64_t)i * T);
        rows[i].tg = (const unsigned char *)(targets + (int64_t)i * T);
        rows[i].esz = 4;
        rows[i].len = lengths ? lengths[i] : T;
    }
    s = lt__batch_fill(ctx, b, rows, B, fold_len, 1, T);
    LT__FREE(rows);
    return s;
}

LTRAIN_DEF void lt_batch_free(lt_batch *b) {
    if (!b) return;
    LT__FREE(b->ids); LT__FREE(b->targets); LT__FREE(b->lengths);
    memset(b, 0, sizeof *b);
}

LTRAIN_DEF lt_tensor *lt_gpt_loss_ex(lt_gpt *g, const int32_t *ids, const int32_t *targets, int B, int T,
                                     const int32_t *lengths, double denom) {
    return lt__gpt_loss(g, ids, targets, B, T, lengths, denom);
}

/* ---- @@DATA.len_schedule  sequence-length schedule ------------------------------------------- */
LTRAIN_DEF int lt_len_at(const lt_len_schedule *ls, int64_t step) {
    int64_t t0, t1, v, q;
    double p;
    if (!ls) return 0;
    t0 = ls->t0; t1 = ls->t1;
    if (ls->steps <= 0 || step >= ls->steps || t0 >= t1) return (int)t1;
    if (step < 0) step = 0;
    p = (double)step / (double)ls->steps;
    q = ls->quantum > 0 ? ls->quantum : 1;
    if (ls->rule == LT_LEN_STEP) {
        int64_t n = 0, k;
        while ((t0 << n) < t1) n++;
        k = n * step / ls->steps;   /* integer: no rounding surprises at the stage edges */
        v = t0 << k;
        return (int)(v < t1 ? v : t1);
    }
    v = t0 + (int64_t)floor((double)(t1 - t0) * (ls->rule == LT_LEN_SQRT ? sqrt(p) : p));
    v = v / q * q;
    return (int)(v < t0 ? t0 : v > t1 ? t1 : v);
}

LTRAIN_DEF int lt_len_parse(const char *spec, lt_len_schedule *out, char *err, size_t errcap) {
    const char *p = spec;
    char *end;
    long v[3];
    int k;
    if (err && errcap) err[0] = 0;
    if (!spec || !out) { if (err) snprintf(err, errcap, "no schedule given"); return 0; }
    for (k = 0; k < 3; k++) {
        v[k] = strtol(p, &end, 10);
        if (end == p || (k < 2 && *end != ':') || (k == 2 && *end && *end != ':') || v[k] < (k == 2 ? 0 : 1) ||
            v[k] > (k == 2 ? LONG_MAX : 1 << 24)) {
            if (err) snprintf(err, errcap, "\"%s\" is not T0:T1:STEPS[:linear|step|sqrt] with 1 <= T0 <= T1, STEPS >= 0",
                              spec);
            return 0;
        }
        p = end + (*end == ':');
    }
    memset(out, 0, sizeof *out);
    out->t0 = (int)v[0]; out->t1 = (int)v[1]; out->steps = v[2];
    out->quantum = out->t0 < 8 ? out->t0 : 8;
    if (end[0] == ':') {
        if (!strcmp(p, "linear")) out->rule = LT_LEN_LINEAR;
        else if (!strcmp(p, "step")) out->rule = LT_LEN_STEP;
        else if (!strcmp(p, "sqrt")) out->rule = LT_LEN_SQRT;
        else { if (err) snprintf(err, errcap, "\"%s\": the rule must be linear, step or sqrt", spec); return 0; }
    }
    if (out->t0 > out->t1) {
        if (err) snprintf(err, errcap, "\"%s\": T0 (%d) must not exceed T1 (%d)", spec, out->t0, out->t1);
        return 0;
    }
    return 1;
}

/* ---- @@DATA.restarts  random restarts --------------------------------------------------------- */
LTRAIN_DEF int lt_restarts(int n, uint64_t base_seed, lt_restart_fn fn, void *user, uint64_t *seeds, double *val) {
    int r, best = -1;
    double best_v = INFINITY;
    if (n < 1 || !fn) return -1;
    for (r = 0; r < n; r++) {
        uint64_t s = base_seed + (uint64_t)r;
        double v = NAN;
        if (fn(user, r, s, &v) != LT_OK) v = NAN;
        if (seeds) seeds[r] = s;
        if (val) val[r] = v;
        if (isfinite(v) && (best < 0 || v < best_v)) { best = r; best_v = v; }
    }
    return best;
}

LTRAIN_DEF void lt_restarts_print(FILE *f, int n, const uint64_t *seeds, const double *val, int best) {
    double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0, mean;
    int r, k = 0;
    if (!f || n < 1 || !seeds || !val) return;
    fprintf(f, "restart  seed                  val_loss\n");
    for (r = 0; r < n; r++) {
        fprintf(f, "%7d  %-20llu  %8.4f%s\n", r, (unsigned long long)seeds[r], val[r], r == best ? "  <- best" : "");
        if (!isfinite(val[r])) continue;
        if (val[r] < lo) lo = val[r];
        if (val[r] > hi) hi = val[r];
        sum += val[r]; k++;
    }
    if (k == 0) { fprintf(f, "no restart reached a finite validation loss\n"); return; }
    mean = sum / k;
    for (r = 0; r < n; r++) if (isfinite(val[r])) sq += (val[r] - mean) * (val[r] - mean);
    fprintf(f, "val loss over %d seeds: min %.4f max %.4f mean %.4f std %.4f (spread %.4f); continuing seed %llu\n", k,
            lo, hi, mean, k > 1 ? sqrt(sq / (k - 1)) : 0.0, hi - lo,
            best >= 0 ? (unsigned long long)seeds[best] : 0ULL);
}

/* ---- src/18_data_tok.h ---- */
/* ==== @@TOK  tokenizers: byte-level BPE (GPT-2, Llama-3, Qwen2 style), encode and decode ======== */
/* Holds: the Unicode classes and UTF-8 reading the pre-tokenizer needs, the pre-tokenizer patterns
   written out in C, a JSON reader for vocabulary files, the loaders (GPT-2's encoder.json +
   vocab.bpe, Hugging Face's tokenizer.json), BPE encoding with its cache, decoding.
   Calls: @@CORE (errors, allocator, sizes), @@DATA (lt_read_file). */

/* ---- @@TOK.utf8  Unicode classes and UTF-8 ----------------------------------------------------- */
#define LT__TOK_L 1    /* \p{L}: Lu Ll Lt Lm Lo */
#define LT__TOK_N 2    /* \p{N}: Nd Nl No */
#define LT__TOK_S 4    /* \s: Unicode White_Space */
#define LT__TOK_NL 8   /* \r or \n (also \s) */
#define LT__TOK_BAD 0xFFFFFFFFu   /* the "code point" of a byte that starts no valid UTF-8 sequence */

/* The classes follow a newer Unicode than the reference tokenizers' regex engines: against Hugging
   Face tokenizers' Oniguruma (tests/ref/gen_tok_tables.py --compare) 17144 code points of \p{L} and
   336 of \p{N} differ, all of them unassigned in Unicode 14 (letters and digits added since); \s is
   the same set.  Text in scripts added after the engines' Unicode version may pre-tokenize
   differently; everything assigned by Unicode 14 agrees (the tests' corpus samples every category). */
/* BEGIN lt__tok_ranges (tests/ref/gen_tok_tables.py: \p{L} = 1, \p{N} = 2; 842 ranges;
   Unicode 18.0.0, as the PyPI regex module 2026.11.19 defines them) */
static const uint32_t lt__tok_ranges[1684] = {   /* lo | class << 24, hi */
    0x2000030,0x39, 0x1000041,0x5a, 0x1000061,0x7a, 0x10000aa,0xaa, 0x20000b2,0xb3, 0x10000b5,0xb5,
    0x20000b9,0xb9, 0x10000ba,0xba, 0x20000bc,0xbe, 0x10000c0,0xd6, 0x10000d8,0xf6, 0x10000f8,0x2c1,
    0x10002c6,0x2d1, 0x10002e0,0x2e4, 0x10002ec,0x2ec, 0x10002ee,0x2ee, 0x1000370,0x374, 0x1000376,0x377,
    0x100037a,0x37d, 0x100037f,0x37f, 0x1000386,0x386, 0x1000388,0x38a, 0x100038c,0x38c, 0x100038e,0x3a1,
    0x10003a3,0x3f5, 0x10003f7,0x481, 0x100048a,0x52f, 0x1000531,0x556, 0x1000558,0x559, 0x1000560,0x588,
    0x100058b,0x58c, 0x10005d0,0x5ea, 0x10005ef,0x5f2, 0x1000620,0x64a, 0x2000660,0x669, 0x100066e,0x66f,
    0x1000671,0x6d3, 0x10006d5,0x6d5, 0x10006e5,0x6e6, 0x10006ee,0x6ef, 0x20006f0,0x6f9, 0x10006fa,0x6fc,
    0x10006ff,0x6ff, 0x1000710,0x710, 0x1000712,0x72f, 0x100074d,0x7a5, 0x10007b1,0x7b1, 0x20007c0,0x7c9,
    0x10007ca,0x7ea, 0x10007f4,0x7f5, 0x10007fa,0x7fa, 0x1000800,0x815, 0x100081a,0x81a, 0x1000824,0x824,
    0x1000828,0x828, 0x1000840,0x858, 0x1000860,0x86a, 0x1000870,0x887, 0x1000889,0x88f, 0x10008a0,0x8c9,
    0x1000904,0x939, 0x100093d,0x93d, 0x1000950,0x950, 0x1000958,0x961, 0x2000966,0x96f, 0x1000971,0x980,
    0x1000985,0x98c, 0x100098f,0x990, 0x1000993,0x9a8, 0x10009aa,0x9b0, 0x10009b2,0x9b2, 0x10009b6,0x9b9,
    0x10009bd,0x9bd, 0x10009ce,0x9ce, 0x10009dc,0x9dd, 0x10009df,0x9e1, 0x20009e6,0x9ef, 0x10009f0,0x9f1,
    0x20009f4,0x9f9, 0x10009fc,0x9fc, 0x1000a05,0xa0a, 0x1000a0f,0xa10, 0x1000a13,0xa28, 0x1000a2a,0xa30,
    0x1000a32,0xa33, 0x1000a35,0xa36, 0x1000a38,0xa39, 0x1000a59,0xa5c, 0x1000a5e,0xa5e, 0x2000a66,0xa6f,
    0x1000a72,0xa74, 0x1000a85,0xa8d, 0x1000a8f,0xa91, 0x1000a93,0xaa8, 0x1000aaa,0xab0, 0x1000ab2,0xab3,
    0x1000ab5,0xab9, 0x1000abd,0xabd, 0x1000ad0,0xad0, 0x1000ae0,0xae1, 0x2000ae6,0xaef, 0x1000af9,0xaf9,
    0x1000b05,0xb0c, 0x1000b0f,0xb10, 0x1000b13,0xb28, 0x1000b2a,0xb30, 0x1000b32,0xb33, 0x1000b35,0xb39,
    0x1000b3d,0xb3d, 0x1000b5c,0xb5d, 0x1000b5f,0xb61, 0x2000b66,0xb6f, 0x1000b71,0xb71, 0x2000b72,0xb77,
    0x1000b83,0xb83, 0x1000b85,0xb8a, 0x1000b8e,0xb90, 0x1000b92,0xb95, 0x1000b99,0xb9a, 0x1000b9c,0xb9c,
    0x1000b9e,0xb9f, 0x1000ba3,0xba4, 0x1000ba8,0xbaa, 0x1000bae,0xbb9, 0x1000bd0,0xbd0, 0x2000be6,0xbf2,
    0x1000c05,0xc0c, 0x1000c0e,0xc10, 0x1000c12,0xc28, 0x1000c2a,0xc39, 0x1000c3d,0xc3d, 0x1000c58,0xc5a,
    0x1000c5c,0xc5d, 0x1000c60,0xc61, 0x2000c66,0xc6f, 0x2000c78,0xc7e, 0x1000c80,0xc80, 0x1000c85,0xc8c,
    0x1000c8e,0xc90, 0x1000c92,0xca8, 0x1000caa,0xcb3, 0x1000cb5,0xcb9, 0x1000cbd,0xcbd, 0x1000cdc,0xcde,
    0x1000ce0,0xce1, 0x2000ce6,0xcef, 0x1000cf1,0xcf2, 0x1000d04,0xd0c, 0x1000d0e,0xd10, 0x1000d12,0xd3a,
    0x1000d3d,0xd3d, 0x1000d4e,0xd4e, 0x1000d54,0xd56, 0x2000d58,0xd5e, 0x1000d5f,0xd61, 0x2000d66,0xd78,
    0x1000d7a,0xd7f, 0x1000d85,0xd96, 0x1000d9a,0xdb1, 0x1000db3,0xdbb, 0x1000dbd,0xdbd, 0x1000dc0,0xdc6,
    0x2000de6,0xdef, 0x1000e01,0xe30, 0x1000e32,0xe33, 0x1000e40,0xe46, 0x2000e50,0xe59, 0x1000e81,0xe82,
    0x1000e84,0xe84, 0x1000e86,0xe8a, 0x1000e8c,0xea3, 0x1000ea5,0xea5, 0x1000ea7,0xeb0, 0x1000eb2,0xeb3,
    0x1000ebd,0xebd, 0x1000ec0,0xec4, 0x1000ec6,0xec6, 0x2000ed0,0xed9, 0x1000edc,0xedf, 0x1000f00,0xf00,
    0x2000f20,0xf33, 0x1000f40,0xf47, 0x1000f49,0xf6c, 0x1000f88,0xf8c, 0x1001000,0x102a, 0x100103f,0x103f,
    0x2001040,0x1049, 0x1001050,0x1055, 0x100105a,0x105d, 0x1001061,0x1061, 0x1001065,0x1066, 0x100106e,0x1070,
    0x1001075,0x1081, 0x100108e,0x108e, 0x2001090,0x1099, 0x10010a0,0x10c5, 0x10010c7,0x10c7, 0x10010cd,0x10cd,
    0x10010d0,0x10fa, 0x10010fc,0x1248, 0x100124a,0x124d, 0x1001250,0x1256, 0x1001258,0x1258, 0x100125a,0x125d,
    0x1001260,0x1288, 0x100128a,0x128d, 0x1001290,0x12b0, 0x10012b2,0x12b5, 0x10012b8,0x12be, 0x10012c0,0x12c0,
    0x10012c2,0x12c5, 0x10012c8,0x12d6, 0x10012d8,0x1310, 0x1001312,0x1315, 0x1001318,0x135a, 0x2001369,0x137c,
    0x1001380,0x138f, 0x10013a0,0x13f5, 0x10013f8,0x13fd, 0x1001401,0x166c, 0x100166f,0x167f, 0x1001681,0x169a,
    0x10016a0,0x16ea, 0x20016ee,0x16f0, 0x10016f1,0x16f8, 0x1001700,0x1711, 0x100171f,0x1731, 0x1001740,0x1751,
    0x1001760,0x176c, 0x100176e,0x1770, 0x1001780,0x17b3, 0x10017d7,0x17d7, 0x10017dc,0x17dc, 0x20017e0,0x17e9,
    0x20017f0,0x17f9, 0x2001810,0x1819, 0x1001820,0x1878, 0x1001880,0x1884, 0x1001887,0x18a8, 0x10018aa,0x18aa,
    0x10018b0,0x18f5, 0x1001900,0x191e, 0x2001946,0x194f, 0x1001950,0x196d, 0x1001970,0x1974, 0x1001980,0x19ab,
    0x10019b0,0x19c9, 0x20019d0,0x19da, 0x1001a00,0x1a16, 0x1001a20,0x1a54, 0x2001a80,0x1a89, 0x2001a90,0x1a99,
    0x1001aa7,0x1aa7, 0x1001b05,0x1b33, 0x1001b45,0x1b4c, 0x2001b50,0x1b59, 0x1001b83,0x1ba0, 0x1001bae,0x1baf,
    0x2001bb0,0x1bb9, 0x1001bba,0x1be5, 0x1001c00,0x1c23, 0x2001c40,0x1c49, 0x1001c4d,0x1c4f, 0x2001c50,0x1c59,
    0x1001c5a,0x1c7d, 0x1001c80,0x1c8a, 0x1001c90,0x1cba, 0x1001cbd,0x1cbf, 0x1001ce9,0x1cec, 0x1001cee,0x1cf3,
    0x1001cf5,0x1cf6, 0x1001cfa,0x1cfa, 0x1001d00,0x1dbf, 0x1001e00,0x1f15, 0x1001f18,0x1f1d, 0x1001f20,0x1f45,
    0x1001f48,0x1f4d, 0x1001f50,0x1f57, 0x1001f59,0x1f59, 0x1001f5b,0x1f5b, 0x1001f5d,0x1f5d, 0x1001f5f,0x1f7d,
    0x1001f80,0x1fb4, 0x1001fb6,0x1fbc, 0x1001fbe,0x1fbe, 0x1001fc2,0x1fc4, 0x1001fc6,0x1fcc, 0x1001fd0,0x1fd3,
    0x1001fd6,0x1fdb, 0x1001fe0,0x1fec, 0x1001ff2,0x1ff4, 0x1001ff6,0x1ffc, 0x2002070,0x2070, 0x1002071,0x2071,
    0x2002074,0x2079, 0x100207f,0x207f, 0x2002080,0x2089, 0x100208f,0x209f, 0x1002102,0x2102, 0x1002107,0x2107,
    0x100210a,0x2113, 0x1002115,0x2115, 0x1002119,0x211d, 0x1002124,0x2124, 0x1002126,0x2126, 0x1002128,0x2128,
    0x100212a,0x212d, 0x100212f,0x2139, 0x100213c,0x213f, 0x1002145,0x2149, 0x100214e,0x214e, 0x2002150,0x2182,
    0x1002183,0x2184, 0x2002185,0x2189, 0x2002460,0x249b, 0x20024ea,0x24ff, 0x2002776,0x2793, 0x1002c00,0x2ce4,
    0x1002ceb,0x2cee, 0x1002cf2,0x2cf3, 0x2002cfd,0x2cfd, 0x1002d00,0x2d25, 0x1002d27,0x2d27, 0x1002d2d,0x2d2d,
    0x1002d30,0x2d67, 0x1002d6f,0x2d6f, 0x1002d80,0x2d96, 0x1002da0,0x2da6, 0x1002da8,0x2dae, 0x1002db0,0x2db6,
    0x1002db8,0x2dbe, 0x1002dc0,0x2dc6, 0x1002dc8,0x2dce, 0x1002dd0,0x2dd6, 0x1002dd8,0x2dde, 0x1002e2f,0x2e2f,
    0x1003005,0x3006, 0x2003007,0x3007, 0x2003021,0x3029, 0x1003031,0x3035, 0x2003038,0x303a, 0x100303b,0x303c,
    0x1003041,0x3096, 0x100309d,0x309f, 0x10030a1,0x30fa, 0x10030fc,0x30ff, 0x1003105,0x312f, 0x1003131,0x318e,
    0x2003192,0x3195, 0x10031a0,0x31bf, 0x10031f0,0x31ff, 0x2003220,0x3229, 0x2003248,0x324f, 0x2003251,0x325f,
    0x2003280,0x3289, 0x20032b1,0x32bf, 0x1003400,0x4dbf, 0x1004e00,0xa48c, 0x100a4d0,0xa4fd, 0x100a500,0xa60c,
    0x100a610,0xa61f, 0x200a620,0xa629, 0x100a62a,0xa62b, 0x100a640,0xa66e, 0x100a67f,0xa69d, 0x100a6a0,0xa6e5,
    0x200a6e6,0xa6ef, 0x100a717,0xa71f, 0x100a722,0xa788, 0x100a78b,0xa7dd, 0x100a7e2,0xa7e2, 0x100a7f1,0xa801,
    0x100a803,0xa805, 0x100a807,0xa80a, 0x100a80c,0xa822, 0x200a830,0xa835, 0x100a840,0xa873, 0x100a882,0xa8b3,
    0x200a8d0,0xa8d9, 0x100a8f2,0xa8f7, 0x100a8fb,0xa8fb, 0x100a8fd,0xa8fe, 0x200a900,0xa909, 0x100a90a,0xa925,
    0x100a930,0xa946, 0x100a960,0xa97c, 0x100a984,0xa9b2, 0x100a9cf,0xa9cf, 0x200a9d0,0xa9d9, 0x100a9e0,0xa9e4,
    0x100a9e6,0xa9ef, 0x200a9f0,0xa9f9, 0x100a9fa,0xa9fe, 0x100aa00,0xaa28, 0x100aa40,0xaa42, 0x100aa44,0xaa4b,
    0x200aa50,0xaa59, 0x100aa60,0xaa76, 0x100aa7a,0xaa7a, 0x100aa7e,0xaaaf, 0x100aab1,0xaab1, 0x100aab5,0xaab6,
    0x100aab9,0xaabd, 0x100aac0,0xaac0, 0x100aac2,0xaac2, 0x100aadb,0xaadd, 0x100aae0,0xaaea, 0x100aaf2,0xaaf4,
    0x100ab01,0xab06, 0x100ab09,0xab0e, 0x100ab11,0xab16, 0x100ab20,0xab26, 0x100ab28,0xab2e, 0x100ab30,0xab5a,
    0x100ab5c,0xab69, 0x100ab6c,0xab6d, 0x100ab70,0xabe2, 0x200abf0,0xabf9, 0x100ac00,0xd7a3, 0x100d7b0,0xd7c6,
    0x100d7cb,0xd7fb, 0x100f900,0xfa6d, 0x100fa70,0xfad9, 0x100fb00,0xfb06, 0x100fb13,0xfb17, 0x100fb1d,0xfb1d,
    0x100fb1f,0xfb28, 0x100fb2a,0xfb36, 0x100fb38,0xfb3c, 0x100fb3e,0xfb3e, 0x100fb40,0xfb41, 0x100fb43,0xfb44,
    0x100fb46,0xfbb1, 0x100fbd3,0xfd3d, 0x100fd50,0xfd8f, 0x100fd92,0xfdc7, 0x100fdf0,0xfdfb, 0x100fe70,0xfe74,
    0x100fe76,0xfefc, 0x200ff10,0xff19, 0x100ff21,0xff3a, 0x100ff41,0xff5a, 0x100ff66,0xffbe, 0x100ffc2,0xffc7,
    0x100ffca,0xffcf, 0x100ffd2,0xffd7, 0x100ffda,0xffdc, 0x1010000,0x1000b, 0x101000d,0x10026, 0x1010028,0x1003a,
    0x101003c,0x1003d, 0x101003f,0x1004d, 0x1010050,0x1005d, 0x1010080,0x100fa, 0x2010107,0x10133, 0x2010140,0x10178,
    0x201018a,0x1018b, 0x1010280,0x1029c, 0x10102a0,0x102d0, 0x20102e1,0x102fb, 0x1010300,0x1031f, 0x2010320,0x10323,
    0x101032d,0x10340, 0x2010341,0x10341, 0x1010342,0x10349, 0x201034a,0x1034a, 0x1010350,0x10375, 0x1010380,0x1039d,
    0x10103a0,0x103c3, 0x10103c8,0x103cf, 0x20103d1,0x103d5, 0x1010400,0x1049d, 0x20104a0,0x104a9, 0x10104b0,0x104d3,
    0x10104d8,0x104fb, 0x1010500,0x10527, 0x1010530,0x10563, 0x1010570,0x1057a, 0x101057c,0x1058a, 0x101058c,0x10592,
    0x1010594,0x10595, 0x1010597,0x105a1, 0x10105a3,0x105b1, 0x10105b3,0x105b9, 0x10105bb,0x105bc, 0x10105c0,0x105f3,
    0x1010600,0x10736, 0x1010740,0x10755, 0x1010760,0x10767, 0x1010780,0x10785, 0x1010787,0x107b0, 0x10107b2,0x107bf,
    0x1010800,0x10805, 0x1010808,0x10808, 0x101080a,0x10835, 0x1010837,0x10838, 0x101083c,0x1083c, 0x101083f,0x10855,
    0x2010858,0x1085f, 0x1010860,0x10876, 0x2010879,0x1087f, 0x1010880,0x1089e, 0x20108a7,0x108af, 0x10108e0,0x108f2,
    0x10108f4,0x108f5, 0x20108fb,0x108ff, 0x1010900,0x10915, 0x2010916,0x1091b, 0x1010920,0x10939, 0x1010940,0x10959,
    0x1010980,0x109b7, 0x20109bc,0x109bd, 0x10109be,0x109bf, 0x20109c0,0x109cf, 0x20109d2,0x109ff, 0x1010a00,0x10a00,
    0x1010a10,0x10a13, 0x1010a15,0x10a17, 0x1010a19,0x10a35, 0x2010a40,0x10a48, 0x1010a60,0x10a7c, 0x2010a7d,0x10a7e,
    0x1010a80,0x10a9c, 0x2010a9d,0x10a9f, 0x1010ac0,0x10ac7, 0x1010ac9,0x10ae4, 0x2010aeb,0x10aef, 0x1010b00,0x10b35,
    0x1010b40,0x10b55, 0x2010b58,0x10b5f, 0x1010b60,0x10b72, 0x2010b78,0x10b7f, 0x1010b80,0x10b91, 0x2010ba9,0x10baf,
    0x1010c00,0x10c48, 0x1010c80,0x10cb2, 0x1010cc0,0x10cf2, 0x2010cfa,0x10cff, 0x1010d00,0x10d23, 0x2010d30,0x10d39,
    0x2010d40,0x10d49, 0x1010d4a,0x10d65, 0x1010d6f,0x10d85, 0x2010e60,0x10e7e, 0x1010e80,0x10ea9, 0x1010eb0,0x10eb1,
    0x1010ec2,0x10ec7, 0x1010ed9,0x10eee, 0x1010f00,0x10f1c, 0x2010f1d,0x10f26, 0x1010f27,0x10f27, 0x1010f30,0x10f45,
    0x2010f51,0x10f54, 0x1010f70,0x10f81, 0x1010fb0,0x10fc4, 0x2010fc5,0x10fcb, 0x1010fe0,0x10ff6, 0x1011003,0x11037,
    0x2011052,0x1106f, 0x1011071,0x11072, 0x1011075,0x11075, 0x1011083,0x110af, 0x10110d0,0x110e8, 0x20110f0,0x110f9,
    0x1011103,0x11126, 0x2011136,0x1113f, 0x1011144,0x11144, 0x1011147,0x11147, 0x1011150,0x11172, 0x1011176,0x11176,
    0x1011183,0x111b2, 0x10111c1,0x111c4, 0x20111d0,0x111d9, 0x10111da,0x111da, 0x10111dc,0x111dc, 0x20111e1,0x111f4,
    0x1011200,0x11211, 0x1011213,0x1122b, 0x101123f,0x11240, 0x1011280,0x11286, 0x1011288,0x11288, 0x101128a,0x1128d,
    0x101128f,0x1129d, 0x101129f,0x112a8, 0x10112b0,0x112de, 0x20112f0,0x112f9, 0x1011305,0x1130c, 0x101130f,0x11310,
    0x1011313,0x11328, 0x101132a,0x11330, 0x1011332,0x11333, 0x1011335,0x11339, 0x101133d,0x1133d, 0x1011350,0x11350,
    0x101135d,0x11361, 0x1011380,0x11389, 0x101138b,0x1138b, 0x101138e,0x1138e, 0x1011390,0x113b5, 0x10113b7,0x113b7,
    0x10113d1,0x113d1, 0x10113d3,0x113d3, 0x1011400,0x11434, 0x1011447,0x1144a, 0x2011450,0x11459, 0x101145f,0x11461,
    0x1011480,0x114af, 0x10114c4,0x114c5, 0x10114c7,0x114c7, 0x20114d0,0x114d9, 0x1011580,0x115ae, 0x10115d8,0x115db,
    0x1011600,0x1162f, 0x1011644,0x11644, 0x2011650,0x11659, 0x1011680,0x116aa, 0x10116b8,0x116b8, 0x20116c0,0x116c9,
    0x20116d0,0x116e3, 0x1011700,0x1171a, 0x2011730,0x1173b, 0x1011740,0x11746, 0x1011800,0x1182b, 0x10118a0,0x118df,
    0x20118e0,0x118f2, 0x10118ff,0x11906, 0x1011909,0x11909, 0x101190c,0x11913, 0x1011915,0x11916, 0x1011918,0x1192f,
    0x101193f,0x1193f, 0x1011941,0x11941, 0x2011950,0x11959, 0x10119a0,0x119a7, 0x10119aa,0x119d0, 0x10119e1,0x119e1,
    0x10119e3,0x119e3, 0x1011a00,0x11a00, 0x1011a0b,0x11a32, 0x1011a3a,0x11a3a, 0x1011a50,0x11a50, 0x1011a5c,0x11a89,
    0x1011a9d,0x11a9d, 0x1011ab0,0x11af8, 0x1011b0a,0x11b0a, 0x1011bc0,0x11be0, 0x2011bf0,0x11bf9, 0x1011c00,0x11c08,
    0x1011c0a,0x11c2e, 0x1011c40,0x11c40, 0x2011c50,0x11c6c, 0x1011c72,0x11c8f, 0x1011d00,0x11d06, 0x1011d08,0x11d09,
    0x1011d0b,0x11d30, 0x1011d46,0x11d46, 0x2011d50,0x11d59, 0x1011d60,0x11d65, 0x1011d67,0x11d68, 0x1011d6a,0x11d89,
    0x1011d98,0x11d98, 0x2011da0,0x11da9, 0x1011db0,0x11ddb, 0x2011de0,0x11de9, 0x1011df1,0x11df1, 0x1011ee0,0x11ef2,
    0x1011f02,0x11f02, 0x1011f04,0x11f10, 0x1011f12,0x11f33, 0x2011f50,0x11f59, 0x1011fb0,0x11fb0, 0x2011fc0,0x11fd4,
    0x1012000,0x12399, 0x2012400,0x1246f, 0x2012475,0x1247f, 0x1012480,0x12543, 0x2012550,0x12686, 0x1012f90,0x12ff0,
    0x1013000,0x1342f, 0x1013441,0x13446, 0x1013460,0x143fa, 0x1014400,0x14646, 0x1016100,0x1611d, 0x2016130,0x16139,
    0x1016800,0x16a38, 0x1016a40,0x16a5e, 0x2016a60,0x16a69, 0x1016a70,0x16abe, 0x2016ac0,0x16ac9, 0x1016ad0,0x16aed,
    0x1016b00,0x16b2f, 0x1016b40,0x16b43, 0x2016b50,0x16b59, 0x2016b5b,0x16b61, 0x1016b63,0x16b77, 0x1016b7d,0x16b8f,
    0x1016d40,0x16d6c, 0x2016d70,0x16d79, 0x1016e40,0x16e7f, 0x2016e80,0x16e96, 0x1016ea0,0x16eb8, 0x1016ebb,0x16ed3,
    0x1016f00,0x16f4a, 0x1016f50,0x16f50, 0x1016f93,0x16f9f, 0x1016fe0,0x16fe1, 0x1016fe3,0x16fe3, 0x1016ff2,0x16ff3,
    0x2016ff4,0x16ff6, 0x1017000,0x18cda, 0x1018cff,0x18d20, 0x1018d80,0x18df2, 0x1018e00,0x19191, 0x10191a0,0x191d2,
    0x101aff0,0x1aff3, 0x101aff5,0x1affb, 0x101affd,0x1affe, 0x101b000,0x1b128, 0x101b132,0x1b132, 0x101b150,0x1b152,
    0x101b155,0x1b155, 0x101b164,0x1b168, 0x101b170,0x1b2fb, 0x101bc00,0x1bc6a, 0x101bc70,0x1bc7c, 0x101bc80,0x1bc88,
    0x101bc90,0x1bc99, 0x201ccf0,0x1ccf9, 0x201d2c0,0x1d2d3, 0x201d2e0,0x1d2f3, 0x201d360,0x1d378, 0x101d400,0x1d454,
    0x101d456,0x1d49c, 0x101d49e,0x1d49f, 0x101d4a2,0x1d4a2, 0x101d4a5,0x1d4a6, 0x101d4a9,0x1d4ac, 0x101d4ae,0x1d4b9,
    0x101d4bb,0x1d4bb, 0x101d4bd,0x1d4c3, 0x101d4c5,0x1d505, 0x101d507,0x1d50a, 0x101d50d,0x1d514, 0x101d516,0x1d51c,
    0x101d51e,0x1d539, 0x101d53b,0x1d53e, 0x101d540,0x1d544, 0x101d546,0x1d546, 0x101d54a,0x1d550, 0x101d552,0x1d6a6,
    0x101d6a8,0x1d6c0, 0x101d6c2,0x1d6da, 0x101d6dc,0x1d6fa, 0x101d6fc,0x1d714, 0x101d716,0x1d734, 0x101d736,0x1d74e,
    0x101d750,0x1d76e, 0x101d770,0x1d788, 0x101d78a,0x1d7a8, 0x101d7aa,0x1d7c2, 0x101d7c4,0x1d7cb, 0x201d7ce,0x1d7ff,
    0x101df00,0x1df81, 0x101df90,0x1df96, 0x101dfcd,0x1dfff, 0x101e030,0x1e06d, 0x101e100,0x1e12c, 0x101e137,0x1e13d,
    0x201e140,0x1e149, 0x101e14e,0x1e14e, 0x101e290,0x1e2ad, 0x101e2c0,0x1e2eb, 0x201e2f0,0x1e2f9, 0x101e4d0,0x1e4eb,
    0x201e4f0,0x1e4f9, 0x101e5d0,0x1e5ed, 0x101e5f0,0x1e5f0, 0x201e5f1,0x1e5fa, 0x101e6c0,0x1e6de, 0x101e6e0,0x1e6e2,
    0x101e6e4,0x1e6e5, 0x101e6e7,0x1e6ed, 0x101e6f0,0x1e6f4, 0x101e6fe,0x1e6ff, 0x101e7e0,0x1e7e6, 0x101e7e8,0x1e7eb,
    0x101e7ed,0x1e7ee, 0x101e7f0,0x1e7fe, 0x101e800,0x1e8c4, 0x201e8c7,0x1e8cf, 0x101e900,0x1e943, 0x101e94b,0x1e94b,
    0x201e950,0x1e959, 0x201ec71,0x1ecab, 0x201ecad,0x1ecaf, 0x201ecb1,0x1ecb4, 0x201ed01,0x1ed2d, 0x201ed2f,0x1ed3d,
    0x101ee00,0x1ee03, 0x101ee05,0x1ee1f, 0x101ee21,0x1ee22, 0x101ee24,0x1ee24, 0x101ee27,0x1ee27, 0x101ee29,0x1ee32,
    0x101ee34,0x1ee37, 0x101ee39,0x1ee39, 0x101ee3b,0x1ee3b, 0x101ee42,0x1ee42, 0x101ee47,0x1ee47, 0x101ee49,0x1ee49,
    0x101ee4b,0x1ee4b, 0x101ee4d,0x1ee4f, 0x101ee51,0x1ee52, 0x101ee54,0x1ee54, 0x101ee57,0x1ee57, 0x101ee59,0x1ee59,
    0x101ee5b,0x1ee5b, 0x101ee5d,0x1ee5d, 0x101ee5f,0x1ee5f, 0x101ee61,0x1ee62, 0x101ee64,0x1ee64, 0x101ee67,0x1ee6a,
    0x101ee6c,0x1ee72, 0x101ee74,0x1ee77, 0x101ee79,0x1ee7c, 0x101ee7e,0x1ee7e, 0x101ee80,0x1ee89, 0x101ee8b,0x1ee9b,
    0x101eea1,0x1eea3, 0x101eea5,0x1eea9, 0x101eeab,0x1eebb, 0x201f100,0x1f10c, 0x201fbf0,0x1fbf9, 0x1020000,0x2a6df,
    0x102a700,0x2b81e, 0x102b820,0x2cead, 0x102ceb0,0x2ebe0, 0x102ebf0,0x2ee5d, 0x102f800,0x2fa1d, 0x1030000,0x3134a,
    0x1031350,0x33479, 0x103d000,0x3fc3f,
};
/* END lt__tok_ranges */

/* The class bits of code point c (0: none of them; invalid bytes have none). */
static int lt__tok_class(uint32_t c) {
    size_t lo = 0, hi = sizeof lt__tok_ranges / sizeof lt__tok_ranges[0] / 2;
    if (c < 128) {
        if ((c | 32) - 'a' < 26) return LT__TOK_L;
        if (c - '0' < 10) return LT__TOK_N;
        if (c == ' ' || (c >= 9 && c <= 13)) return LT__TOK_S | ((c == '\n' || c == '\r') ? LT__TOK_NL : 0);
        return 0;
    }
    if (c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
        c == 0x202f || c == 0x205f || c == 0x3000)
        return LT__TOK_S;
    while (lo < hi) {   /* the last range starting at or before c */
        size_t mid = (lo + hi) / 2;
        if ((lt__tok_ranges[2 * mid] & 0xffffffu) <= c) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0 || c > lt__tok_ranges[2 * (lo - 1) + 1]) return 0;
    return (int)(lt__tok_ranges[2 * (lo - 1)] >> 24);
}

/* The character at s[0..n) (n >= 1): its length and code point.  A byte that does not start a
   complete, shortest-form sequence of a scalar value (a stray continuation byte, an overlong form,
   a surrogate, past U+10FFFF, a sequence cut short) is a character of one byte, LT__TOK_BAD. */
static size_t lt__tok_utf8(const unsigned char *s, size_t n, uint32_t *cp) {
    int k = lt__utf8_next(s, n, cp);
    if (k) return (size_t)k;
    *cp = LT__TOK_BAD;
    return 1;
}

/* The character at s[0..n): its length, and its class bits in *cls. */
static size_t lt__tok_char(const unsigned char *s, size_t n, int *cls) {
    uint32_t cp;
    size_t k;
    if (s[0] < 0x80) { *cls = lt__tok_class(s[0]); return 1; }
    k = lt__tok_utf8(s, n, &cp);
    *cls = cp == LT__TOK_BAD ? 0 : lt__tok_class(cp);
    return k;
}

static size_t lt__tok_put_utf8(unsigned char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { o[0] = (unsigned char)(0xc0 | (cp >> 6)); o[1] = (unsigned char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | (cp >> 12)); o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | (cp >> 18)); o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* GPT-2's bytes_to_unicode: the 188 printable bytes stand for themselves, the other 68 (0x00-0x20,
   0x7f-0xa0, 0xad) in order for U+0100 + their index among them. */
LTRAIN_DEF uint32_t lt_tok_byte_char(int b) {
    if (b < 0 || b > 255) return LT__TOK_BAD;
    if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae) return (uint32_t)b;
    if (b <= 0x20) return 256u + (uint32_t)b;
    if (b <= 0xa0) return 256u + 33u + (uint32_t)(b - 0x7f);
    return 256u + 67u;
}
LTRAIN_DEF int lt_tok_char_byte(uint32_t cp) {
    if ((cp >= 0x21 && cp <= 0x7e) || (cp >= 0xa1 && cp <= 0xac) || (cp >= 0xae && cp <= 0xff)) return (int)cp;
    if (cp < 256 || cp >= 256 + 68) return -1;
    cp -= 256;
    if (cp <= 0x20) return (int)cp;
    if (cp < 67) return (int)(cp - 33 + 0x7f);
    return 0xad;
}

/* ---- @@TOK.pretok  the pre-tokenizer patterns ------------------------------------------------ */
/* Each function returns the length of the match the regex engines find at s[0] (leftmost
   alternative that matches, greedy, with backtracking where it changes the result).  Each
   alternative's comment is the regex piece it implements. */

/* \s+(?!\S)|\s+ at a whitespace character; nl (cl100k's \s*[\r\n]+ first): the run up to its
   last \r or \n when it has one. */
static size_t lt__pretok_space(const unsigned char *s, size_t n, int nl) {
    size_t i = 0, last = 0, k, after_nl = 0;
    int c;
    while (i < n) {
        k = lt__tok_char(s + i, n - i, &c);
        if (!(c & LT__TOK_S)) break;
        if (c & LT__TOK_NL) after_nl = i + 1;
        last = i;
        i += k;
    }
    if (nl && after_nl) return after_nl;   /* \s*[\r\n]+: backtracks to the last newline of the run */
    if (i == n || last == 0) return i;     /* \s+(?!\S) at the end, or \s+ of one character */
    return last;                           /* \s+(?!\S): the run but its last character */
}

/* A run of characters all with (want != 0) or all without (want == 0) the bits in mask. */
static size_t lt__pretok_run(const unsigned char *s, size_t n, size_t i, int mask, int want) {
    int c;
    while (i < n) {
        size_t k = lt__tok_char(s + i, n - i, &c);
        if (((c & mask) != 0) != (want != 0)) break;
        i += k;
    }
    return i;
}

/* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t lt__pretok_gpt2(const unsigned char *s, size_t n) {
    size_t i, k;
    int c;
    if (s[0] == '\'' && n >= 2) {
        unsigned a = s[1], b = n >= 3 ? s[2] : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
    i = s[0] == ' ' && n > 1;
    k = lt__tok_char(s + i, n - i, &c);
    if (c & LT__TOK_L) return lt__pretok_run(s, n, i + k, LT__TOK_L, 1);
    if (c & LT__TOK_N) return lt__pretok_run(s, n, i + k, LT__TOK_N, 1);
    if (!(c & LT__TOK_S)) return lt__pretok_run(s, n, i + k, LT__TOK_L | LT__TOK_N | LT__TOK_S, 0);
    return lt__pretok_space(s, n, 0);
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|
   \s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t lt__pretok_cl100k(const unsigned char *s, size_t n, int digits) {
    size_t i, k, k0;
    int c, c0, d;
    if (s[0] == '\'' && n >= 2) {
        unsigned a = s[1] | 32u, b = n >= 3 ? s[2] | 32u : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
        if (s[1] == 0xc5 && n >= 3 && s[2] == 0xbf) return 3;   /* U+017F long s, which (?i) folds to s */
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
    k0 = lt__tok_char(s, n, &c0);
    if (c0 & LT__TOK_L) return lt__pretok_run(s, n, k0, LT__TOK_L, 1);
    if (!(c0 & (LT__TOK_N | LT__TOK_NL)) && k0 < n) {   /* [^\r\n\p{L}\p{N}]\p{L}+ */
        k = lt__tok_char(s + k0, n - k0, &c);
        if (c & LT__TOK_L) return lt__pretok_run(s, n, k0 + k, LT__TOK_L, 1);
    }
    if (c0 & LT__TOK_N) {
        for (i = k0, d = 1; d < digits && i < n; d++) {
            k = lt__tok_char(s + i, n - i, &c);
            if (!(c & LT__TOK_N)) break;
            i += k;
        }
        return i;
    }
    i = s[0] == ' ' && n > 1;
    k = i ? lt__tok_char(s + 1, n - 1, &c) : (c = c0, k0);
    if (!(c & (LT__TOK_L | LT__TOK_N | LT__TOK_S))) {
        i = lt__pretok_run(s, n, i + k, LT__TOK_L | LT__TOK_N | LT__TOK_S, 0);
        while (i < n && (s[i] == '\r' || s[i] == '\n')) i++;
        return i;
    }
    return lt__pretok_space(s, n, 1);
}

LTRAIN_DEF size_t lt_pretok_next(lt_pretok p, const char *text, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    if (!text || n == 0) return 0;
    switch (p) {
    case LT_PRETOK_GPT2: return lt__pretok_gpt2(s, n);
    case LT_PRETOK_CL100K: return lt__pretok_cl100k(s, n, 3);
    case LT_PRETOK_QWEN2: return lt__pretok_cl100k(s, n, 1);
    }
    return 0;
}


/* ---- @@TOK.json  a JSON reader for vocabulary files ------------------------------------------- */
/* A cursor over one JSON text, reading values where the loader expects them (no tree: a vocabulary
   of 10^5 tokens needs no more than its own bytes).  Strings are checked UTF-8 and unescaped
   (\uXXXX with surrogate pairs) into str; numbers the loaders use must be integers. */
typedef struct {
    lt_ctx *ctx;
    const char *fn, *label;       /* the API function and the source, for messages */
    const unsigned char *s;
    size_t n, i;
    char *str;                    /* the last string read, NUL-terminated (may hold NULs: slen) */
    size_t slen, scap;
} lt__tj;

static int lt__tj_fail(lt__tj *j, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lt_set_error(j->ctx, LT_ERR_FORMAT, "%s: %s: %s (at byte %zu)", j->fn, j->label, msg, j->i);
    return 0;
}

static void lt__tj_ws(lt__tj *j) {
    while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' || j->s[j->i] == '\r')) j->i++;
}
/* The next non-blank byte (not consumed), or -1 at the end. */
static int lt__tj_peek(lt__tj *j) {
    lt__tj_ws(j);
    return j->i < j->n ? j->s[j->i] : -1;
}
static int lt__tj_expect(lt__tj *j, char c, const char *what) {
    if (lt__tj_peek(j) != (unsigned char)c)
        return lt__tj_fail(j, j->i < j->n ? "expected %s, found '%c'" : "expected %s, found the end of the text", what,
                           j->i < j->n ? j->s[j->i] : ' ');
    j->i++;
    return 1;
}

static int lt__tj_put(lt__tj *j, const unsigned char *b, size_t k) {
    if (j->slen + k + 1 > j->scap) {
        size_t cap = j->scap ? j->scap * 2 : 256;
        char *p;
        while (cap < j->slen + k + 1) cap *= 2;
        p = (char *)LT__REALLOC(j->str, cap);
        if (!p) { lt_set_error(j->ctx, LT_ERR_NOMEM, "%s: %s: out of memory reading a string", j->fn, j->label); return 0; }
        j->str = p;
        j->scap = cap;
    }
    memcpy(j->str + j->slen, b, k);
    j->slen += k;
    j->str[j->slen] = 0;
    return 1;
}

static int lt__tj_hex4(lt__tj *j, uint32_t *v) {
    int k;
    *v = 0;
    if (j->n - j->i < 4) return lt__tj_fail(j, "a \\u escape cut short");
    for (k = 0; k < 4; k++) {
        int c = j->s[j->i++], d = c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
        if (d < 0) return lt__tj_fail(j, "'%c' in a \\u escape", c);
        *v = *v * 16 + (uint32_t)d;
    }
    return 1;
}

/* A string at the cursor into j->str / j->slen. */
static int lt__tj_string(lt__tj *j) {
    unsigned char u[4];
    if (lt__tj_peek(j) != '"') return lt__tj_expect(j, '"', "a string");
    j->i++;
    j->slen = 0;
    u[0] = 0;
    if (!lt__tj_put(j, u, 0)) return 0;   /* str is a valid empty string from here on */
    for (;;) {
        size_t st = j->i;
        uint32_t cp;
        while (j->i < j->n && j->s[j->i] >= 0x20 && j->s[j->i] < 0x80 && j->s[j->i] != '"' && j->s[j->i] != '\\') j->i++;
        if (j->i > st && !lt__tj_put(j, j->s + st, j->i - st)) return 0;
        if (j->i >= j->n) return lt__tj_fail(j, "a string without its closing quote");
        if (j->s[j->i] == '"') { j->i++; return 1; }
        if (j->s[j->i] < 0x20) return lt__tj_fail(j, "control character 0x%02x inside a string", j->s[j->i]);
        if (j->s[j->i] >= 0x80) {
            size_t k = lt__tok_utf8(j->s + j->i, j->n - j->i, &cp);
            if (cp == LT__TOK_BAD) return lt__tj_fail(j, "invalid UTF-8 (byte 0x%02x) inside a string", j->s[j->i]);
            if (!lt__tj_put(j, j->s + j->i, k)) return 0;
            j->i += k;
            continue;
        }
        if (++j->i >= j->n) return lt__tj_fail(j, "a string without its closing quote");
        switch (j->s[j->i++]) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = 8; break;
        case 'f': cp = 12; break;
        case 'n': cp = 10; break;
        case 'r': cp = 13; break;
        case 't': cp = 9; break;
        case 'u':
            if (!lt__tj_hex4(j, &cp)) return 0;
            if (cp >= 0xdc00 && cp <= 0xdfff) return lt__tj_fail(j, "a lone low surrogate \\u%04x", (unsigned)cp);
            if (cp >= 0xd800 && cp <= 0xdbff) {
                uint32_t lo;
                if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u')
                    return lt__tj_fail(j, "a high surrogate \\u%04x without its low half", (unsigned)cp);
                j->i += 2;
                if (!lt__tj_hex4(j, &lo)) return 0;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return lt__tj_fail(j, "a high surrogate \\u%04x followed by \\u%04x", (unsigned)cp, (unsigned)lo);
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            break;
        default: j->i--; return lt__tj_fail(j, "unknown escape '\\%c'", j->s[j->i]);
        }
        if (!lt__tj_put(j, u, lt__tok_put_utf8(u, cp))) return 0;
    }
}

/* An integer at the cursor; values past +-2^62 read as +-2^62 (the callers refuse them). */
static int lt__tj_int(lt__tj *j, int64_t *v) {
    int neg = 0, c = lt__tj_peek(j);
    int64_t x = 0, lim = (int64_t)1 << 62;
    if (c == '-') { neg = 1; j->i++; }
    if (j->i >= j->n || j->s[j->i] < '0' || j->s[j->i] > '9') return lt__tj_fail(j, "expected an integer");
    while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') {
        x = x >= lim / 10 ? lim : x * 10 + (j->s[j->i] - '0');
        j->i++;
    }
    if (j->i < j->n && (j->s[j->i] == '.' || j->s[j->i] == 'e' || j->s[j->i] == 'E'))
        return lt__tj_fail(j, "expected an integer, found a fraction or an exponent");
    *v = neg ? -x : x;
    return 1;
}

/* true / false at the cursor. */
static int lt__tj_bool(lt__tj *j, int *b) {
    lt__tj_ws(j);
    if (j->n - j->i >= 4 && !memcmp(j->s + j->i, "true", 4)) { j->i += 4; *b = 1; return 1; }
    if (j->n - j->i >= 5 && !memcmp(j->s + j->i, "false", 5)) { j->i += 5; *b = 0; return 1; }
    return lt__tj_fail(j, "expected true or false");
}
static int lt__tj_is_null(lt__tj *j) {
    lt__tj_ws(j);
    return j->n - j->i >= 4 && !memcmp(j->s + j->i, "null", 4);
}

/* Passes over any value (containers nested at most 64 deep). */
static int lt__tj_skip(lt__tj *j, int depth) {
    int c = lt__tj_peek(j), k = 0;
    if (depth > 64) return lt__tj_fail(j, "values nested deeper than 64");
    if (c == '"') return lt__tj_string(j);
    if (c == '{' || c == '[') {
        int close = c == '{' ? '}' : ']';
        j->i++;
        if (lt__tj_peek(j) == close) { j->i++; return 1; }
        for (;; k++) {
            if (c == '{' && (!lt__tj_string(j) || !lt__tj_expect(j, ':', "':'"))) return 0;
            if (!lt__tj_skip(j, depth + 1)) return 0;
            c = lt__tj_peek(j);
            if (c == close) { j->i++; return 1; }
            if (!lt__tj_expect(j, ',', close == '}' ? "',' or '}'" : "',' or ']'")) return 0;
            c = close == '}' ? '{' : '[';
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        size_t st = j->i;
        while (j->i < j->n && strchr("0123456789+-.eE", j->s[j->i]) && j->s[j->i]) j->i++;
        if (j->i == st + (c == '-')) return lt__tj_fail(j, "a number without digits");
        return 1;
    }
    if (c == 't' || c == 'f') { int b; return lt__tj_bool(j, &b); }
    if (lt__tj_is_null(j)) { j->i += 4; return 1; }
    return lt__tj_fail(j, c < 0 ? "expected a value, found the end of the text" : "expected a value, found '%c'", c);
}

/* Inside an object (after its '{'): reads the next key into str and its ':'; 1, or 0 at the '}'
   (consumed) or on an error (lt_failed then).  *k counts the members read. */
static int lt__tj_member(lt__tj *j, int64_t *k) {
    int c = lt__tj_peek(j);
    if (*k == 0 && c == '}') { j->i++; return 0; }
    if (*k > 0) {
        if (c == '}') { j->i++; return 0; }
        if (!lt__tj_expect(j, ',', "',' or '}'")) return 0;
    }
    (*k)++;
    return lt__tj_string(j) && lt__tj_expect(j, ':', "':'");
}
/* Inside an array (after its '['): 1 when a value follows (not read), 0 at the ']' or an error. */
static int lt__tj_item(lt__tj *j, int64_t *k) {
    int c = lt__tj_peek(j);
    if (*k == 0 && c == ']') { j->i++; return 0; }
    if (*k > 0) {
        if (c == ']') { j->i++; return 0; }
        if (!lt__tj_expect(j, ',', "',' or ']'")) return 0;
    }
    (*k)++;
    if (lt__tj_peek(j) < 0) return lt__tj_fail(j, "expected a value, found the end of the text");
    return 1;
}

/* The members named in names[0..n) of the object at the cursor: at[k] = the offset of member k's
   value, 0 when absent.  Other members are passed over; a name given twice is an error. */
static int lt__tj_fields(lt__tj *j, const char *what, const char *const *names, int n, size_t *at) {
    int64_t k = 0;
    int f;
    for (f = 0; f < n; f++) at[f] = 0;
    if (!lt__tj_expect(j, '{', what)) return 0;
    while (lt__tj_member(j, &k)) {
        for (f = 0; f < n; f++)
            if (!strcmp(j->str, names[f])) {
                if (at[f]) return lt__tj_fail(j, "\"%s\" given twice", names[f]);
                lt__tj_ws(j);
                at[f] = j->i;
            }
        if (!lt__tj_skip(j, 1)) return 0;
    }
    return !lt_failed(j->ctx);
}

/* ---- @@TOK.load  loading GPT-2's files and tokenizer.json --------------------------------------- */
#define LT__TOK_CKEY 24      /* pre-tokens up to this many bytes are cached ... */
#define LT__TOK_CIDS 6       /* ... when they encode to at most this many ids */
#define LT__TOK_CSLOTS 8192  /* direct-mapped cache entries */
#define LT__TOK_NO_KEY UINT64_MAX

typedef struct { uint64_t key; int32_t rank, id; } lt__tok_mslot;            /* key: a << 32 | b */
typedef struct { uint64_t hash; uint8_t len, nids; unsigned char key[LT__TOK_CKEY]; int32_t ids[LT__TOK_CIDS]; } lt__tok_centry;

struct lt_tokenizer {
    lt_ctx *ctx;
    lt_pretok pat;
    int direct;                 /* a pre-token that is a token encodes to it without merging (ignore_merges) */
    int32_t nvocab;             /* ids 0 .. nvocab-1 (some may have no token) */
    int32_t ntokens;            /* ids that have a token */
    uint32_t *off, *len;        /* token id: bytes[off[id] ..][len[id]]; len 0: no token */
    unsigned char *special;     /* per id: 1 for special (added) tokens */
    char *bytes;
    size_t nbytes, capbytes;
    int32_t byte_id[256];       /* the token of each single byte */
    int32_t *vslot;             /* vocabulary hash (token bytes -> id), -1 empty */
    size_t vmask;
    lt__tok_mslot *mslot;       /* merge hash ((a, b) -> rank, merged id) */
    size_t mmask;
    int32_t nmerges;
    int32_t *spec;              /* special ids, longest text first */
    int nspec;
    unsigned char sfirst[256];  /* 1 for the first bytes of special tokens */
    lt__tok_centry *cache;      /* made at the first encode */
    /* scratch of one pre-token's BPE: symbols, pair ranks / links, heap */
    int32_t *sym, *aux1, *aux2, *heap;
    size_t scap;
    /* during loading: (id, off, len) of each token read, and the merge-pair concatenation */
    int32_t *ent;
    size_t nent, capent;
    unsigned char *pair;
    size_t cappair;
};

static uint64_t lt__tok_mix(uint64_t h) {
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ull; h ^= h >> 33;
    return h;
}
static uint64_t lt__tok_hash(const unsigned char *s, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    while (n >= 8) { memcpy(&w, s, 8); h = (h ^ w) * 0xff51afd7ed558ccdull; h ^= h >> 29; s += 8; n -= 8; }
    if (n) { w = 0; memcpy(&w, s, n); h = (h ^ w) * 0xc4ceb9fe1a85ec53ull; }
    return lt__tok_mix(h);
}

LTRAIN_DEF int32_t lt_tok_lookup(const lt_tokenizer *tk, const char *bytes, size_t len) {
    size_t i;
    if (!tk || !tk->vslot || (!bytes && len)) return -1;
    for (i = lt__tok_hash((const unsigned char *)bytes, len) & tk->vmask;; i = (i + 1) & tk->vmask) {
        int32_t id = tk->vslot[i];
        if (id < 0) return -1;
        if (tk->len[id] == len && !memcmp(tk->bytes + tk->off[id], bytes, len)) return id;
    }
}

/* The rank of the pair (a, b) and *id the token it merges to; -1 when they do not merge. */
static int32_t lt__tok_rank(const lt_tokenizer *tk, int32_t a, int32_t b, int32_t *id) {
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t i;
    for (i = lt__tok_mix(key) & tk->mmask;; i = (i + 1) & tk->mmask) {
        const lt__tok_mslot *e = &tk->mslot[i];
        if (e->key == key) { *id = e->id; return e->rank; }
        if (e->key == LT__TOK_NO_KEY) return -1;
    }
}

LTRAIN_DEF void lt_tok_free(lt_tokenizer *tk) {
    if (!tk) return;
    LT__FREE(tk->off); LT__FREE(tk->len); LT__FREE(tk->special); LT__FREE(tk->bytes);
    LT__FREE(tk->vslot); LT__FREE(tk->mslot); LT__FREE(tk->spec); LT__FREE(tk->cache);
    LT__FREE(tk->sym); LT__FREE(tk->aux1); LT__FREE(tk->aux2); LT__FREE(tk->heap);
    LT__FREE(tk->ent); LT__FREE(tk->pair);
    LT__FREE(tk);
}

static lt_tokenizer *lt__tok_new(lt_ctx *ctx) {
    lt_tokenizer *tk = (lt_tokenizer *)LT__MALLOC(sizeof *tk);
    if (!tk) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_tok: out of memory for a tokenizer"); return NULL; }
    memset(tk, 0, sizeof *tk);
    tk->ctx = ctx;
    tk->pat = LT_PRETOK_GPT2;
    return tk;
}

/* Grows *p (elements of size sz, capacity *cap) to hold at least need; 0 when out of memory. */
static int lt__tok_grow(void **p, size_t *cap, size_t need, size_t sz) {
    size_t c = *cap ? *cap : 64, bytes;
    void *q;
    if (need <= *cap) return 1;
    while (c < need) { if (c > SIZE_MAX / 2) return 0; c *= 2; }
    if (!lt_mul_size(c, sz, &bytes) || !(q = LT__REALLOC(*p, bytes))) return 0;
    *p = q;
    *cap = c;
    return 1;
}

/* Appends a token read from a file: its raw bytes and id (checked later, in lt__tok_index). */
static int lt__tok_add(lt_tokenizer *tk, const char *fn, const char *label, const unsigned char *b, size_t n, int64_t id,
                       const char *shown, int special) {
    if (n == 0) { lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: token %lld is the empty string", fn, label, (long long)id); return 0; }
    if (id < 0 || id > INT32_MAX - 1) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: token \"%.60s\" has id %lld: ids must be in [0, 2^31-1)", fn, label,
                     shown, (long long)id);
        return 0;
    }
    if (n > UINT32_MAX / 2 || tk->nbytes + n > UINT32_MAX / 2) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: the tokens hold more than 2^31 bytes", fn, label);
        return 0;
    }
    if (!lt__tok_grow((void **)&tk->bytes, &tk->capbytes, tk->nbytes + n, 1) ||
        !lt__tok_grow((void **)&tk->ent, &tk->capent, 4 * (tk->nent + 1), sizeof(int32_t))) {
        lt_set_error(tk->ctx, LT_ERR_NOMEM, "%s: %s: out of memory for the vocabulary", fn, label);
        return 0;
    }
    memcpy(tk->bytes + tk->nbytes, b, n);
    tk->ent[4 * tk->nent] = (int32_t)id;
    tk->ent[4 * tk->nent + 1] = (int32_t)tk->nbytes;
    tk->ent[4 * tk->nent + 2] = (int32_t)n;
    tk->ent[4 * tk->nent + 3] = special;
    tk->nent++;
    tk->nbytes += n;
    return 1;
}

/* Shows bytes in a message: printable ASCII as is, other bytes as \xNN (about 60 bytes at most). */
static const char *lt__tok_show_raw(const unsigned char *b, size_t n, char *buf, size_t cap) {
    size_t i, o = 0;
    for (i = 0; i < n && o + 5 < cap && o < 60; i++) {
        if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\') buf[o++] = (char)b[i];
        else o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", b[i]);
    }
    buf[o] = 0;
    return buf;
}
static const char *lt__tok_show(const lt_tokenizer *tk, int32_t id, char *buf, size_t cap) {
    return lt__tok_show_raw((const unsigned char *)tk->bytes + tk->off[id], tk->len[id], buf, cap);
}

/* Marks token id as special (split out of the text by LT_TOK_SPECIAL). */
static int lt__tok_mark_special(lt_tokenizer *tk, int32_t id) {
    int32_t *p;
    int k;
    if (tk->special[id]) return 1;
    p = (int32_t *)LT__REALLOC(tk->spec, (size_t)(tk->nspec + 1) * sizeof(int32_t));
    if (!p) { lt_set_error(tk->ctx, LT_ERR_NOMEM, "lt_tok: out of memory for special tokens"); return 0; }
    tk->spec = p;
    for (k = tk->nspec; k > 0 && tk->len[p[k - 1]] < tk->len[id]; k--) p[k] = p[k - 1];   /* longest first */
    p[k] = id;
    tk->nspec++;
    tk->special[id] = 1;
    tk->sfirst[(unsigned char)tk->bytes[tk->off[id]]] = 1;
    return 1;
}

/* Enters token entry e (its id is free) into the id arrays and the vocabulary hash. */
static int lt__tok_enter(lt_tokenizer *tk, const char *fn, const char *label, size_t e) {
    int32_t id = tk->ent[4 * e], other;
    size_t i;
    char sa[80], sb[80];
    const unsigned char *b = (const unsigned char *)tk->bytes + tk->ent[4 * e + 1];
    size_t n = (size_t)tk->ent[4 * e + 2];
    if (tk->len[id]) {
        if (tk->len[id] == n && !memcmp(tk->bytes + tk->off[id], b, n)) return 1;   /* an added token also in the vocabulary */
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: duplicate id %d: tokens \"%s\" and \"%s\"", fn, label, id,
                     lt__tok_show(tk, id, sa, sizeof sa), lt__tok_show_raw(b, n, sb, sizeof sb));
        return 0;
    }
    if ((other = lt_tok_lookup(tk, (const char *)b, n)) >= 0) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: token \"%s\" appears twice (ids %d and %d)", fn, label,
                     lt__tok_show_raw(b, n, sa, sizeof sa), other, id);
        return 0;
    }
    tk->off[id] = (uint32_t)tk->ent[4 * e + 1];
    tk->len[id] = (uint32_t)n;
    for (i = lt__tok_hash(b, n) & tk->vmask; tk->vslot[i] >= 0; i = (i + 1) & tk->vmask) {}
    tk->vslot[i] = id;
    tk->ntokens++;
    return 1;
}

/* From the tokens read: the id-indexed arrays, the vocabulary hash, the byte tokens, the special
   tokens.  Ids must be unique and below 2 * tokens + 256 (vocabularies are numbered densely from
   0; the bound keeps a number in a file from sizing memory). */
static int lt__tok_index(lt_tokenizer *tk, const char *fn, const char *label) {
    size_t e, vcap = 16, i;
    int64_t maxid = -1, bound = 2 * (int64_t)tk->nent + 256;
    for (e = 0; e < tk->nent; e++) if (tk->ent[4 * e] > maxid) maxid = tk->ent[4 * e];
    if (maxid >= bound) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: a token has id %lld, but there are only %zu tokens (ids must be "
                     "below 2 * tokens + 256 = %lld)", fn, label, (long long)maxid, tk->nent, (long long)bound);
        return 0;
    }
    tk->nvocab = (int32_t)(maxid + 1);
    while (vcap < 2 * tk->nent) vcap *= 2;
    tk->off = (uint32_t *)LT__MALLOC((size_t)(tk->nvocab + 1) * sizeof(uint32_t));
    tk->len = (uint32_t *)LT__MALLOC((size_t)(tk->nvocab + 1) * sizeof(uint32_t));
    tk->special = (unsigned char *)LT__MALLOC((size_t)tk->nvocab + 1);
    tk->vslot = (int32_t *)LT__MALLOC(vcap * sizeof(int32_t));
    if (!tk->off || !tk->len || !tk->special || !tk->vslot) {
        lt_set_error(tk->ctx, LT_ERR_NOMEM, "%s: %s: out of memory for %d tokens", fn, label, tk->nvocab);
        return 0;
    }
    memset(tk->len, 0, (size_t)(tk->nvocab + 1) * sizeof(uint32_t));
    memset(tk->off, 0, (size_t)(tk->nvocab + 1) * sizeof(uint32_t));
    memset(tk->special, 0, (size_t)tk->nvocab + 1);
    memset(tk->vslot, 0xff, vcap * sizeof(int32_t));
    tk->vmask = vcap - 1;
    for (e = 0; e < tk->nent; e++)
        if (!lt__tok_enter(tk, fn, label, e)) return 0;
    for (e = 0; e < tk->nent; e++)
        if (tk->ent[4 * e + 3] && !lt__tok_mark_special(tk, tk->ent[4 * e])) return 0;
    for (i = 0; i < 256; i++) {
        char c = (char)i;
        if ((tk->byte_id[i] = lt_tok_lookup(tk, &c, 1)) < 0) {
            lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: no token for byte 0x%02x (U+%04X in vocabulary files): a "
                         "byte-level vocabulary needs all 256", fn, label, (unsigned)i, (unsigned)lt_tok_byte_char((int)i));
            return 0;
        }
    }
    LT__FREE(tk->ent);
    tk->ent = NULL;
    tk->nent = tk->capent = 0;
    return 1;
}

/* Adds the next merge (rank = merges so far) of the tokens a = m[0..na) and b = m[na..na+nb):
   both must be tokens, and so must their concatenation m[0..na+nb).  where: the line or item. */
static int lt__tok_add_merge(lt_tokenizer *tk, const char *fn, const char *label, const char *where,
                             const unsigned char *m, size_t na, size_t nb) {
    int32_t ia = lt_tok_lookup(tk, (const char *)m, na), ib = lt_tok_lookup(tk, (const char *)m + na, nb), im, r, old;
    uint64_t key;
    size_t i;
    char sa[80], sb[80];
    if (ia < 0 || ib < 0) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: %s: the merge names \"%s\", which is not a token", fn, label, where,
                     ia < 0 ? lt__tok_show_raw(m, na, sa, sizeof sa) : lt__tok_show_raw(m + na, nb, sa, sizeof sa));
        return 0;
    }
    if ((im = lt_tok_lookup(tk, (const char *)m, na + nb)) < 0) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: %s: merging \"%s\" and \"%s\" makes no token of the vocabulary", fn,
                     label, where, lt__tok_show(tk, ia, sa, sizeof sa), lt__tok_show(tk, ib, sb, sizeof sb));
        return 0;
    }
    if ((size_t)(tk->nmerges + 1) * 2 > tk->mmask + 1) {   /* keep the table at most half full */
        size_t cap = tk->mslot ? (tk->mmask + 1) * 2 : 1024, k;
        lt__tok_mslot *t = (lt__tok_mslot *)LT__MALLOC(cap * sizeof *t), *o = tk->mslot;
        if (!t) { lt_set_error(tk->ctx, LT_ERR_NOMEM, "%s: %s: out of memory for %d merges", fn, label, tk->nmerges); return 0; }
        for (k = 0; k < cap; k++) t[k].key = LT__TOK_NO_KEY;
        for (k = 0; o && k <= tk->mmask; k++) {
            if (o[k].key == LT__TOK_NO_KEY) continue;
            for (i = lt__tok_mix(o[k].key) & (cap - 1); t[i].key != LT__TOK_NO_KEY; i = (i + 1) & (cap - 1)) {}
            t[i] = o[k];
        }
        LT__FREE(o);
        tk->mslot = t;
        tk->mmask = cap - 1;
    }
    if ((r = lt__tok_rank(tk, ia, ib, &old)) >= 0) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: %s: the merge \"%s\" + \"%s\" repeats merge %d", fn, label, where,
                     lt__tok_show(tk, ia, sa, sizeof sa), lt__tok_show(tk, ib, sb, sizeof sb), r);
        return 0;
    }
    key = (uint64_t)(uint32_t)ia << 32 | (uint32_t)ib;
    for (i = lt__tok_mix(key) & tk->mmask; tk->mslot[i].key != LT__TOK_NO_KEY; i = (i + 1) & tk->mmask) {}
    tk->mslot[i].key = key;
    tk->mslot[i].rank = tk->nmerges++;
    tk->mslot[i].id = im;
    return 1;
}

/* A byte-level string s[0..n) (UTF-8) to raw bytes in out (room for n); its length, or SIZE_MAX
   with *bad the first character outside the alphabet. */
static size_t lt__tok_unbyte(const unsigned char *s, size_t n, unsigned char *out, uint32_t *bad) {
    size_t i = 0, o = 0;
    while (i < n) {
        uint32_t cp;
        int b;
        i += lt__tok_utf8(s + i, n - i, &cp);
        if ((b = lt_tok_char_byte(cp)) < 0) { *bad = cp; return SIZE_MAX; }
        out[o++] = (unsigned char)b;
    }
    return o;
}
/* The string just read (j->str) unbyted into tk->pair[at..]; its length, or SIZE_MAX on an error. */
static size_t lt__tok_unbyte_str(lt__tj *j, lt_tokenizer *tk, const char *s, size_t n, size_t at, const char *what) {
    uint32_t bad = 0;
    size_t k;
    if (!lt__tok_grow((void **)&tk->pair, &tk->cappair, at + n + 1, 1)) {
        lt_set_error(j->ctx, LT_ERR_NOMEM, "%s: %s: out of memory", j->fn, j->label);
        return SIZE_MAX;
    }
    if ((k = lt__tok_unbyte((const unsigned char *)s, n, tk->pair + at, &bad)) == SIZE_MAX)
        lt__tj_fail(j, "%s \"%.60s\" holds the character U+%04X, which is not in the byte-level alphabet", what, s,
                    (unsigned)bad);
    return k;
}

/* A vocabulary object {"token": id, ...} at the cursor (entered later by lt__tok_index). */
static int lt__tok_read_vocab(lt__tj *j, lt_tokenizer *tk) {
    int64_t k = 0, id;
    if (!lt__tj_expect(j, '{', "'{' (the vocabulary: an object of token: id)")) return 0;
    while (lt__tj_member(j, &k)) {
        size_t n = lt__tok_unbyte_str(j, tk, j->str, j->slen, 0, "token");
        int c = lt__tj_peek(j);
        if (n == SIZE_MAX) return 0;
        if (c != '-' && (c < '0' || c > '9')) return lt__tj_fail(j, "token \"%.60s\": its id must be an integer", j->str);
        if (!lt__tj_int(j, &id) || !lt__tok_add(tk, j->fn, j->label, tk->pair, n, id, j->str, 0)) return 0;
    }
    if (lt_failed(j->ctx)) return 0;
    if (k == 0) return lt__tj_fail(j, "the vocabulary is empty");
    return 1;
}

/* vocab.bpe: one merge per line, two byte-level tokens separated by one space, in rank order;
   "#version" lines and blank lines are passed over. */
static int lt__tok_read_bpe(lt_tokenizer *tk, const char *fn, const char *label, const unsigned char *s, size_t n) {
    size_t i = 0, line = 0;
    char where[64], shown[80];
    while (i < n) {
        size_t st = i, e, sp, na, nb;
        uint32_t bad = 0;
        line++;
        while (i < n && s[i] != '\n') i++;
        e = i;
        if (i < n) i++;
        if (e > st && s[e - 1] == '\r') e--;
        if (e == st || (e - st >= 8 && !memcmp(s + st, "#version", 8))) continue;
        for (sp = st; sp < e && s[sp] != ' '; sp++) {}
        if (sp == st || sp + 1 >= e || memchr(s + sp + 1, ' ', e - sp - 1)) {
            lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: line %zu: \"%s\" is not two tokens separated by one space", fn,
                         label, line, lt__tok_show_raw(s + st, e - st, shown, sizeof shown));
            return 0;
        }
        if (!lt__tok_grow((void **)&tk->pair, &tk->cappair, e - st, 1)) {
            lt_set_error(tk->ctx, LT_ERR_NOMEM, "%s: %s: out of memory", fn, label);
            return 0;
        }
        na = lt__tok_unbyte(s + st, sp - st, tk->pair, &bad);
        nb = na == SIZE_MAX ? na : lt__tok_unbyte(s + sp + 1, e - sp - 1, tk->pair + na, &bad);
        if (nb == SIZE_MAX) {
            if (bad == LT__TOK_BAD)
                lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: line %zu: invalid UTF-8", fn, label, line);
            else
                lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: line %zu: \"%s\" holds the character U+%04X, which is not in "
                             "the byte-level alphabet", fn, label, line, lt__tok_show_raw(s + st, e - st, shown, sizeof shown),
                             (unsigned)bad);
            return 0;
        }
        snprintf(where, sizeof where, "line %zu", line);
        if (!lt__tok_add_merge(tk, fn, label, where, tk->pair, na, nb)) return 0;
    }
    return 1;
}

/* Loading done: scratch of loading freed, the token bytes trimmed to size. */
static lt_tokenizer *lt__tok_done(lt_tokenizer *tk) {
    char *b;
    LT__FREE(tk->pair);
    tk->pair = NULL;
    tk->cappair = 0;
    if (tk->nbytes && (b = (char *)LT__REALLOC(tk->bytes, tk->nbytes)) != NULL) { tk->bytes = b; tk->capbytes = tk->nbytes; }
    if (!tk->mslot) {   /* no merges: an empty table still answers lookups */
        tk->mslot = (lt__tok_mslot *)LT__MALLOC(2 * sizeof *tk->mslot);
        if (!tk->mslot) { lt_set_error(tk->ctx, LT_ERR_NOMEM, "lt_tok: out of memory"); lt_tok_free(tk); return NULL; }
        tk->mslot[0].key = tk->mslot[1].key = LT__TOK_NO_KEY;
        tk->mmask = 1;
    }
    return tk;
}

static lt_tokenizer *lt__tok_gpt2(lt_ctx *ctx, const char *fn, const void *enc, size_t enc_size, const char *enc_label,
                                  const void *bpe, size_t bpe_size, const char *bpe_label) {
    lt_tokenizer *tk;
    lt__tj j;
    int32_t eot;
    int ok;
    if (!ctx || lt_failed(ctx)) return NULL;
    if ((!enc && enc_size) || (!bpe && bpe_size)) { lt_set_error(ctx, LT_ERR_ARG, "%s: a NULL buffer", fn); return NULL; }
    if (!(tk = lt__tok_new(ctx))) return NULL;
    memset(&j, 0, sizeof j);
    j.ctx = ctx; j.fn = fn; j.label = enc_label; j.s = (const unsigned char *)enc; j.n = enc_size;
    ok = lt__tok_read_vocab(&j, tk);
    if (ok && lt__tj_peek(&j) >= 0) ok = lt__tj_fail(&j, "more text after the vocabulary object");
    LT__FREE(j.str);
    if (!ok || !lt__tok_index(tk, fn, enc_label) ||
        !lt__tok_read_bpe(tk, fn, bpe_label, (const unsigned char *)bpe, bpe_size)) {
        lt_tok_free(tk);
        return NULL;
    }
    if ((eot = lt_tok_lookup(tk, "<|endoftext|>", 13)) >= 0 && !lt__tok_mark_special(tk, eot)) { lt_tok_free(tk); return NULL; }
    tk->pat = LT_PRETOK_GPT2;
    return lt__tok_done(tk);
}

LTRAIN_DEF lt_tokenizer *lt_tok_parse_gpt2(lt_ctx *ctx, const void *encoder_json, size_t enc_size,
                                           const void *vocab_bpe, size_t bpe_size, const char *label) {
    char a[300], b[300];
    snprintf(a, sizeof a, "%s (encoder.json)", label ? label : "memory");
    snprintf(b, sizeof b, "%s (vocab.bpe)", label ? label : "memory");
    return lt__tok_gpt2(ctx, "lt_tok_parse_gpt2", encoder_json, enc_size, a, vocab_bpe, bpe_size, b);
}

LTRAIN_DEF lt_tokenizer *lt_tok_load_gpt2(lt_ctx *ctx, const char *encoder_json, const char *vocab_bpe) {
    void *e = NULL, *b = NULL;
    size_t ne = 0, nb = 0;
    lt_tokenizer *tk = NULL;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!encoder_json || !vocab_bpe) { lt_set_error(ctx, LT_ERR_ARG, "lt_tok_load_gpt2: a NULL path"); return NULL; }
    if (lt_read_file(ctx, encoder_json, &e, &ne) == LT_OK && lt_read_file(ctx, vocab_bpe, &b, &nb) == LT_OK)
        tk = lt__tok_gpt2(ctx, "lt_tok_load_gpt2", e, ne, encoder_json, b, nb, vocab_bpe);
    lt_free(e);
    lt_free(b);
    return tk;
}

/* The pre-tokenizer regexes of tokenizer.json files this library implements (as JSON unescapes them). */
static const struct { const char *re; lt_pretok p; } lt__tok_known_re[] = {
    {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", LT_PRETOK_GPT2},
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
     "\\s+(?!\\S)|\\s+", LT_PRETOK_CL100K},
    {"'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*|\\s*[\\r\\n]|"
     "\\s+(?!\\S)|\\s+", LT_PRETOK_CL100K},
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
     "\\s+(?!\\S)|\\s+", LT_PRETOK_QWEN2},
};

/* The string member at offset `at` (0: absent -> def) into buf; 0 on an error. */
static int lt__tj_str_at(lt__tj *j, size_t at, const char *def, char *buf, size_t cap, const char *what) {
    if (!at) { snprintf(buf, cap, "%s", def); return 1; }
    j->i = at;
    if (lt__tj_peek(j) != '"') return lt__tj_fail(j, "%s must be a string", what);
    if (!lt__tj_string(j)) return 0;
    snprintf(buf, cap, "%s", j->str);
    return 1;
}
/* The bool member at `at` (0: absent -> def). */
static int lt__tj_bool_at(lt__tj *j, size_t at, int def, int *b, const char *what) {
    *b = def;
    if (!at) return 1;
    j->i = at;
    if (lt__tj_peek(j) != 't' && lt__tj_peek(j) != 'f') return lt__tj_fail(j, "%s must be true or false", what);
    return lt__tj_bool(j, b);
}

/* model.merges: "a b" strings or ["a", "b"] pairs, in rank order. */
static int lt__tok_json_merges(lt__tj *j, lt_tokenizer *tk) {
    int64_t k = 0;
    char where[64];
    if (!lt__tj_expect(j, '[', "'[' (model.merges)")) return 0;
    while (lt__tj_item(j, &k)) {
        size_t na, nb, sp;
        snprintf(where, sizeof where, "merge %lld", (long long)(k - 1));
        if (lt__tj_peek(j) == '"') {
            if (!lt__tj_string(j)) return 0;
            for (sp = 0; sp < j->slen && j->str[sp] != ' '; sp++) {}
            if (sp == 0 || sp + 1 >= j->slen || memchr(j->str + sp + 1, ' ', j->slen - sp - 1))
                return lt__tj_fail(j, "%s \"%.60s\" is not two tokens separated by one space", where, j->str);
            na = lt__tok_unbyte_str(j, tk, j->str, sp, 0, "merge token");
            nb = na == SIZE_MAX ? na : lt__tok_unbyte_str(j, tk, j->str + sp + 1, j->slen - sp - 1, na, "merge token");
        } else {
            int64_t q = 0;
            na = nb = SIZE_MAX;
            if (!lt__tj_expect(j, '[', "a merge: \"a b\" or [\"a\", \"b\"]")) return 0;
            if (!lt__tj_item(j, &q) || lt__tj_peek(j) != '"' || !lt__tj_string(j) ||
                (na = lt__tok_unbyte_str(j, tk, j->str, j->slen, 0, "merge token")) == SIZE_MAX)
                return lt_failed(j->ctx) ? 0 : lt__tj_fail(j, "%s: expected two strings", where);
            if (!lt__tj_item(j, &q) || lt__tj_peek(j) != '"' || !lt__tj_string(j) ||
                (nb = lt__tok_unbyte_str(j, tk, j->str, j->slen, na, "merge token")) == SIZE_MAX)
                return lt_failed(j->ctx) ? 0 : lt__tj_fail(j, "%s: expected two strings", where);
            if (lt__tj_item(j, &q)) return lt__tj_fail(j, "%s: more than two strings", where);
        }
        if (na == SIZE_MAX || nb == SIZE_MAX || lt_failed(j->ctx)) return 0;
        if (na == 0 || nb == 0) return lt__tj_fail(j, "%s names the empty token", where);
        if (!lt__tok_add_merge(tk, j->fn, j->label, where, tk->pair, na, nb)) return 0;
    }
    return !lt_failed(j->ctx);
}

/* added_tokens: [{"id": N, "content": "text", ...}, ...]: the special tokens (raw text, not the
   byte-level alphabet).  lstrip / rstrip / single_word / normalized are not applied. */
static int lt__tok_json_added(lt__tj *j, lt_tokenizer *tk) {
    static const char *const names[2] = {"id", "content"};
    int64_t k = 0, id;
    size_t at[2], end;
    if (!lt__tj_expect(j, '[', "'[' (added_tokens)")) return 0;
    while (lt__tj_item(j, &k)) {
        if (!lt__tj_fields(j, "'{' (an added token)", names, 2, at)) return 0;
        end = j->i;
        if (!at[0] || !at[1]) return lt__tj_fail(j, "added token %lld has no %s", (long long)(k - 1), at[0] ? "content" : "id");
        j->i = at[0];
        if (!lt__tj_int(j, &id)) return 0;
        j->i = at[1];
        if (lt__tj_peek(j) != '"') return lt__tj_fail(j, "added token %lld: content must be a string", (long long)(k - 1));
        if (!lt__tj_string(j) || !lt__tok_add(tk, j->fn, j->label, (const unsigned char *)j->str, j->slen, id, j->str, 1))
            return 0;
        j->i = end;
    }
    return !lt_failed(j->ctx);
}

/* pre_tokenizer: ByteLevel (use_regex: GPT-2's pattern), or a Sequence of a Split on a known
   pattern followed by a ByteLevel without regex.  *state: 1 after a Split, 2 after the ByteLevel. */
static int lt__tok_json_pretok(lt__tj *j, lt_tokenizer *tk, size_t at, int depth, int *state) {
    static const char *const names[7] = {"type", "pretokenizers", "pattern", "behavior", "invert", "add_prefix_space",
                                         "use_regex"};
    size_t f[7], pf[2];
    char type[64], buf[64];
    int b, use_regex;
    size_t r;
    j->i = at;
    if (lt__tj_is_null(j)) return lt__tj_fail(j, "pre_tokenizer is null: a byte-level BPE needs ByteLevel");
    if (!lt__tj_fields(j, "'{' (pre_tokenizer)", names, 7, f) || !lt__tj_str_at(j, f[0], "", type, sizeof type, "pre_tokenizer.type"))
        return 0;
    if (!strcmp(type, "Sequence") && depth == 0) {
        int64_t k = 0;
        if (!f[1]) return lt__tj_fail(j, "a Sequence pre_tokenizer without pretokenizers");
        j->i = f[1];
        if (!lt__tj_expect(j, '[', "'[' (pretokenizers)")) return 0;
        while (lt__tj_item(j, &k)) {
            size_t item = j->i;
            if (!lt__tj_skip(j, 1)) return 0;
            r = j->i;
            if (!lt__tok_json_pretok(j, tk, item, 1, state)) return 0;
            j->i = r;
        }
        return !lt_failed(j->ctx);
    }
    if (!strcmp(type, "ByteLevel")) {
        if (*state == 2) return lt__tj_fail(j, "two ByteLevel pre-tokenizers");
        if (!lt__tj_bool_at(j, f[5], 1, &b, "add_prefix_space") || !lt__tj_bool_at(j, f[6], 1, &use_regex, "use_regex")) return 0;
        if (b) return lt__tj_fail(j, "ByteLevel with add_prefix_space true is not supported");
        if (use_regex == (*state == 1))
            return lt__tj_fail(j, use_regex ? "ByteLevel with use_regex true after a Split is not supported"
                                            : "ByteLevel without use_regex and without a Split before it cuts nothing");
        if (use_regex) tk->pat = LT_PRETOK_GPT2;
        *state = 2;
        return 1;
    }
    if (!strcmp(type, "Split") && *state == 0) {
        static const char *const pn[2] = {"Regex", "String"};
        if (!lt__tj_str_at(j, f[3], "Isolated", buf, sizeof buf, "Split.behavior") || !lt__tj_bool_at(j, f[4], 0, &b, "Split.invert"))
            return 0;
        if (strcmp(buf, "Isolated") || b) return lt__tj_fail(j, "a Split with behavior %s%s is not supported", buf, b ? ", invert" : "");
        if (!f[2]) return lt__tj_fail(j, "a Split without a pattern");
        j->i = f[2];
        if (!lt__tj_fields(j, "'{' (Split.pattern)", pn, 2, pf)) return 0;
        if (!pf[0]) return lt__tj_fail(j, "a Split on a String pattern is not supported (only the regexes of lt_pretok)");
        j->i = pf[0];
        if (lt__tj_peek(j) != '"' || !lt__tj_string(j)) return lt_failed(j->ctx) ? 0 : lt__tj_fail(j, "Split.pattern.Regex must be a string");
        for (r = 0; r < sizeof lt__tok_known_re / sizeof lt__tok_known_re[0]; r++)
            if (!strcmp(j->str, lt__tok_known_re[r].re)) break;
        if (r == sizeof lt__tok_known_re / sizeof lt__tok_known_re[0])
            return lt__tj_fail(j, "the Split regex \"%.200s\" is not one of the patterns of lt_pretok", j->str);
        tk->pat = lt__tok_known_re[r].p;
        *state = 1;
        return 1;
    }
    return lt__tj_fail(j, "pre_tokenizer %s%s is not supported (ByteLevel, or a Split then a ByteLevel)", type,
                       depth ? " inside a Sequence" : "");
}

/* model: a BPE with vocab and merges; the options that change encoding must be off. */
static int lt__tok_json_model(lt__tj *j, lt_tokenizer *tk, size_t at, size_t added) {
    static const char *const names[8] = {"type", "vocab", "merges", "ignore_merges", "byte_fallback",
                                         "continuing_subword_prefix", "end_of_word_suffix", "dropout"};
    size_t f[8];
    char type[64], buf[64];
    int b, k;
    j->i = at;
    if (!lt__tj_fields(j, "'{' (model)", names, 8, f) || !lt__tj_str_at(j, f[0], "BPE", type, sizeof type, "model.type")) return 0;
    if (strcmp(type, "BPE")) return lt__tj_fail(j, "model.type is \"%s\": only BPE models are supported", type);
    if (!f[1]) return lt__tj_fail(j, "model has no vocab");
    if (!lt__tj_bool_at(j, f[3], 0, &tk->direct, "model.ignore_merges") || !lt__tj_bool_at(j, f[4], 0, &b, "model.byte_fallback"))
        return 0;
    if (b) return lt__tj_fail(j, "model.byte_fallback true is not supported (a byte-level BPE needs none)");
    for (k = 5; k < 8; k++) {
        j->i = f[k];
        if (!f[k] || lt__tj_is_null(j)) continue;
        if (k == 7 || !lt__tj_str_at(j, f[k], "", buf, sizeof buf, names[k]) || buf[0])
            return lt_failed(j->ctx) ? 0 : lt__tj_fail(j, "model.%s is set: not supported", names[k]);
    }
    j->i = f[1];
    if (!lt__tok_read_vocab(j, tk)) return 0;
    j->i = added;
    if (added && !lt__tj_is_null(j) && !lt__tok_json_added(j, tk)) return 0;
    if (!lt__tok_index(tk, j->fn, j->label)) return 0;
    j->i = f[2];
    return !f[2] || lt__tok_json_merges(j, tk);
}

static lt_tokenizer *lt__tok_json(lt_ctx *ctx, const char *fn, const void *buf, size_t size, const char *label) {
    static const char *const names[4] = {"model", "added_tokens", "pre_tokenizer", "normalizer"};
    size_t f[4];
    char type[64];
    lt_tokenizer *tk;
    lt__tj j;
    int ok, state = 0;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!buf && size) { lt_set_error(ctx, LT_ERR_ARG, "%s: a NULL buffer", fn); return NULL; }
    if (!(tk = lt__tok_new(ctx))) return NULL;
    memset(&j, 0, sizeof j);
    j.ctx = ctx; j.fn = fn; j.label = label ? label : "memory"; j.s = (const unsigned char *)buf; j.n = size;
    ok = lt__tj_fields(&j, "'{' (a tokenizer.json object)", names, 4, f);
    if (ok && lt__tj_peek(&j) >= 0) ok = lt__tj_fail(&j, "more text after the tokenizer object");
    if (ok && !f[0]) ok = lt__tj_fail(&j, "no model");
    if (ok && f[3]) {
        j.i = f[3];
        if (!lt__tj_is_null(&j)) {
            static const char *const tn[1] = {"type"};
            size_t t;
            if (lt__tj_fields(&j, "'{' (normalizer)", tn, 1, &t) && lt__tj_str_at(&j, t, "?", type, sizeof type, "normalizer.type"))
                lt__tj_fail(&j, "normalizer %s is not supported (only null)", type);
            ok = 0;
        }
    }
    ok = ok && lt__tok_json_model(&j, tk, f[0], f[1]);
    if (ok && !f[2]) ok = lt__tj_fail(&j, "no pre_tokenizer: a byte-level BPE needs ByteLevel");
    ok = ok && lt__tok_json_pretok(&j, tk, f[2], 0, &state);
    if (ok && state != 2) ok = lt__tj_fail(&j, "a Split without the ByteLevel after it");
    LT__FREE(j.str);
    if (!ok) { lt_tok_free(tk); return NULL; }
    return lt__tok_done(tk);
}

LTRAIN_DEF lt_tokenizer *lt_tok_parse_json(lt_ctx *ctx, const void *buf, size_t size, const char *label) {
    return lt__tok_json(ctx, "lt_tok_parse_json", buf, size, label);
}

LTRAIN_DEF lt_tokenizer *lt_tok_load_json(lt_ctx *ctx, const char *tokenizer_json) {
    void *b = NULL;
    size_t n = 0;
    lt_tokenizer *tk = NULL;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!tokenizer_json) { lt_set_error(ctx, LT_ERR_ARG, "lt_tok_load_json: a NULL path"); return NULL; }
    if (lt_read_file(ctx, tokenizer_json, &b, &n) == LT_OK) tk = lt__tok_json(ctx, "lt_tok_load_json", b, n, tokenizer_json);
    lt_free(b);
    return tk;
}

LTRAIN_DEF int32_t lt_tok_vocab_size(const lt_tokenizer *tk) { return tk ? tk->nvocab : 0; }
LTRAIN_DEF int32_t lt_tok_num_merges(const lt_tokenizer *tk) { return tk ? tk->nmerges : 0; }
LTRAIN_DEF lt_pretok lt_tok_pattern(const lt_tokenizer *tk) { return tk ? tk->pat : LT_PRETOK_GPT2; }
LTRAIN_DEF const char *lt_tok_token(const lt_tokenizer *tk, int32_t id, size_t *len) {
    if (len) *len = 0;
    if (!tk || id < 0 || id >= tk->nvocab || !tk->len[id]) return NULL;
    if (len) *len = tk->len[id];
    return tk->bytes + tk->off[id];
}
LTRAIN_DEF int32_t lt_tok_special(const lt_tokenizer *tk, const char *s) {
    int k;
    size_t n = s ? strlen(s) : 0;
    for (k = 0; tk && s && k < tk->nspec; k++)
        if (tk->len[tk->spec[k]] == n && !memcmp(tk->bytes + tk->off[tk->spec[k]], s, n)) return tk->spec[k];
    return -1;
}
LTRAIN_DEF int32_t lt_tok_merge(const lt_tokenizer *tk, int32_t a, int32_t b, int32_t *rank) {
    int32_t id = -1, r = -1;
    if (tk && a >= 0 && b >= 0) r = lt__tok_rank(tk, a, b, &id);
    if (rank) *rank = r;
    return r >= 0 ? id : -1;
}
LTRAIN_DEF size_t lt_tok_memory(const lt_tokenizer *tk) {
    if (!tk) return 0;
    return sizeof *tk + tk->capbytes + (size_t)(tk->nvocab + 1) * (2 * sizeof(uint32_t) + 1) +
           (tk->vmask + 1) * sizeof(int32_t) + (tk->mmask + 1) * sizeof(lt__tok_mslot) + (size_t)tk->nspec * sizeof(int32_t) +
           (tk->cache ? LT__TOK_CSLOTS * sizeof(lt__tok_centry) : 0) + tk->scap * 9 * sizeof(int32_t);
}

/* ---- @@TOK.encode  BPE encoding ---------------------------------------------------------------- */
#define LT__TOK_SMALL 48   /* pre-tokens up to this many bytes merge by scanning; longer ones by a heap */

/* BPE of the n >= 2 tokens in sym: merges in place, returns the new count.  rk[i] holds the rank of
   the pair (sym[i], sym[i+1]) and to[i] its merged token; each step merges the lowest rank (the
   leftmost of equals), as tiktoken's byte_pair_merge and HF's BPE word merging.  O(n^2). */
static int64_t lt__tok_bpe_scan(const lt_tokenizer *tk, int32_t *sym, int32_t *rk, int32_t *to, int64_t n) {
    int64_t i, best;
    for (i = 0; i + 1 < n; i++) rk[i] = lt__tok_rank(tk, sym[i], sym[i + 1], &to[i]);
    for (;;) {
        best = -1;
        for (i = 0; i + 1 < n; i++)
            if (rk[i] >= 0 && (best < 0 || rk[i] < rk[best])) best = i;
        if (best < 0) return n;
        sym[best] = to[best];
        memmove(sym + best + 1, sym + best + 2, (size_t)(n - best - 2) * sizeof *sym);
        if (n - best - 3 > 0) {
            memmove(rk + best + 1, rk + best + 2, (size_t)(n - best - 3) * sizeof *rk);
            memmove(to + best + 1, to + best + 2, (size_t)(n - best - 3) * sizeof *to);
        }
        n--;
        if (best > 0) rk[best - 1] = lt__tok_rank(tk, sym[best - 1], sym[best], &to[best - 1]);
        if (best + 1 < n) rk[best] = lt__tok_rank(tk, sym[best], sym[best + 1], &to[best]);
    }
}

/* A min-heap of (rank, position) pairs, stored as two int32 each. */
static int lt__tok_hless(const int32_t *h, int64_t a, int64_t b) {
    return h[2 * a] < h[2 * b] || (h[2 * a] == h[2 * b] && h[2 * a + 1] < h[2 * b + 1]);
}
static void lt__tok_hswap(int32_t *h, int64_t a, int64_t b) {
    int32_t r = h[2 * a], p = h[2 * a + 1];
    h[2 * a] = h[2 * b]; h[2 * a + 1] = h[2 * b + 1]; h[2 * b] = r; h[2 * b + 1] = p;
}
static void lt__tok_hpush(int32_t *h, int64_t *nh, int32_t rank, int32_t pos) {
    int64_t i = (*nh)++;
    h[2 * i] = rank; h[2 * i + 1] = pos;
    while (i > 0 && lt__tok_hless(h, i, (i - 1) / 2)) { lt__tok_hswap(h, i, (i - 1) / 2); i = (i - 1) / 2; }
}
static void lt__tok_hpop(int32_t *h, int64_t *nh) {
    int64_t i = 0, n = --(*nh);
    h[0] = h[2 * n]; h[1] = h[2 * n + 1];
    for (;;) {
        int64_t l = 2 * i + 1, m = i;
        if (l < n && lt__tok_hless(h, l, m)) m = l;
        if (l + 1 < n && lt__tok_hless(h, l + 1, m)) m = l + 1;
        if (m == i) return;
        lt__tok_hswap(h, i, m);
        i = m;
    }
}

/* The same merges as lt__tok_bpe_scan in O(n log n): symbols in a linked list (nx, pv), candidate
   pairs in a heap keyed (rank, position of the left symbol); a popped pair whose symbols changed
   since it was pushed no longer has that rank and is dropped.  heap: room for 3n entries. */
static int64_t lt__tok_bpe_heap(const lt_tokenizer *tk, int32_t *sym, int32_t *nx, int32_t *pv, int32_t *heap, int64_t n) {
    int64_t nh = 0, i, o;
    int32_t id, r;
    for (i = 0; i < n; i++) { nx[i] = i + 1 < n ? (int32_t)(i + 1) : -1; pv[i] = (int32_t)(i - 1); }
    for (i = 0; i + 1 < n; i++)
        if ((r = lt__tok_rank(tk, sym[i], sym[i + 1], &id)) >= 0) lt__tok_hpush(heap, &nh, r, (int32_t)i);
    while (nh > 0) {
        int32_t rank = heap[0], p = heap[1], q = nx[p];
        lt__tok_hpop(heap, &nh);
        if (sym[p] < 0 || q < 0 || lt__tok_rank(tk, sym[p], sym[q], &id) != rank) continue;
        sym[p] = id;
        sym[q] = -1;
        nx[p] = nx[q];
        if (nx[q] >= 0) pv[nx[q]] = p;
        if (pv[p] >= 0 && (r = lt__tok_rank(tk, sym[pv[p]], sym[p], &id)) >= 0) lt__tok_hpush(heap, &nh, r, pv[p]);
        if (nx[p] >= 0 && (r = lt__tok_rank(tk, sym[p], sym[nx[p]], &id)) >= 0) lt__tok_hpush(heap, &nh, r, p);
    }
    for (i = 0, o = 0; i < n; i++) if (sym[i] >= 0) sym[o++] = sym[i];
    return o;
}

/* Scratch for a pre-token of n bytes. */
static int lt__tok_scratch(lt_tokenizer *tk, size_t n) {
    size_t cap = tk->scap ? tk->scap : 256;
    int32_t *a, *b, *c, *h;
    if (n <= tk->scap) return 1;
    while (cap < n) {
        if (cap > (size_t)INT32_MAX / 8) {
            lt_set_error(tk->ctx, LT_ERR_ARG, "lt_tok_encode: a pre-token of %zu bytes is too long (at most 2^28)", n);
            return 0;
        }
        cap *= 2;
    }
    a = (int32_t *)LT__REALLOC(tk->sym, cap * sizeof(int32_t));
    if (a) tk->sym = a;
    b = (int32_t *)LT__REALLOC(tk->aux1, cap * sizeof(int32_t));
    if (b) tk->aux1 = b;
    c = (int32_t *)LT__REALLOC(tk->aux2, cap * sizeof(int32_t));
    if (c) tk->aux2 = c;
    h = (int32_t *)LT__REALLOC(tk->heap, cap * 6 * sizeof(int32_t));
    if (h) tk->heap = h;
    if (!a || !b || !c || !h) {
        lt_set_error(tk->ctx, LT_ERR_NOMEM, "lt_tok_encode: out of memory for a pre-token of %zu bytes", n);
        return 0;
    }
    tk->scap = cap;
    return 1;
}

/* The ids of one pre-token s[0..n) into sym (tk->sym when it returns > 0 and *ids not set);
   returns their count, or -1 on an error. */
static int64_t lt__tok_piece(lt_tokenizer *tk, const unsigned char *s, size_t n, const int32_t **ids) {
    lt__tok_centry *e = NULL;
    uint64_t h = 0;
    int64_t m, i;
    int32_t id;
    if (n == 1) { *ids = &tk->byte_id[s[0]]; return 1; }
    if (tk->cache && n <= LT__TOK_CKEY) {
        h = lt__tok_hash(s, n);
        e = &tk->cache[h & (LT__TOK_CSLOTS - 1)];
        if (e->hash == h && e->len == n && !memcmp(e->key, s, n)) { *ids = e->ids; return e->nids; }
    }
    if (!lt__tok_scratch(tk, n)) return -1;
    if (tk->direct && (id = lt_tok_lookup(tk, (const char *)s, n)) >= 0 && !tk->special[id]) {
        tk->sym[0] = id;
        m = 1;
    } else {
        for (i = 0; i < (int64_t)n; i++) tk->sym[i] = tk->byte_id[s[i]];
        m = n <= LT__TOK_SMALL ? lt__tok_bpe_scan(tk, tk->sym, tk->aux1, tk->aux2, (int64_t)n)
                               : lt__tok_bpe_heap(tk, tk->sym, tk->aux1, tk->aux2, tk->heap, (int64_t)n);
    }
    if (e && m <= LT__TOK_CIDS) {
        e->hash = h;
        e->len = (uint8_t)n;
        e->nids = (uint8_t)m;
        memcpy(e->key, s, n);
        memcpy(e->ids, tk->sym, (size_t)m * sizeof(int32_t));
    }
    *ids = tk->sym;
    return m;
}

/* Encodes s[0..n) (no special tokens in it) from out[*count]; 0 on an error. */
static int lt__tok_stretch(lt_tokenizer *tk, const unsigned char *s, size_t n, int32_t *out, int64_t cap, int64_t *count) {
    size_t i = 0, k;
    while (i < n) {
        const int32_t *ids = NULL;
        int64_t m, c;
        switch (tk->pat) {
        case LT_PRETOK_CL100K: k = lt__pretok_cl100k(s + i, n - i, 3); break;
        case LT_PRETOK_QWEN2: k = lt__pretok_cl100k(s + i, n - i, 1); break;
        default: k = lt__pretok_gpt2(s + i, n - i); break;
        }
        if ((m = lt__tok_piece(tk, s + i, k, &ids)) < 0) return 0;
        for (c = 0; c < m; c++, (*count)++)
            if (*count < cap) out[*count] = ids[c];
        i += k;
    }
    return 1;
}

/* The special token at s[0..n) (the longest one), or -1. */
static int32_t lt__tok_special_at(const lt_tokenizer *tk, const unsigned char *s, size_t n) {
    int k;
    if (!tk->sfirst[s[0]]) return -1;
    for (k = 0; k < tk->nspec; k++) {
        int32_t id = tk->spec[k];
        if (tk->len[id] <= n && !memcmp(tk->bytes + tk->off[id], s, tk->len[id])) return id;
    }
    return -1;
}

LTRAIN_DEF int64_t lt_tok_encode(lt_tokenizer *tk, const char *text, size_t n, int flags, int32_t *out, int64_t cap) {
    const unsigned char *s = (const unsigned char *)text;
    int64_t count = 0;
    size_t i, start = 0;
    if (!tk) return -1;
    if ((!text && n) || cap < 0 || (!out && cap)) {
        lt_set_error(tk->ctx, LT_ERR_ARG, "lt_tok_encode: text %s with n %zu, out %s with cap %lld", text ? "set" : "NULL", n,
                     out ? "set" : "NULL", (long long)cap);
        return -1;
    }
    if (n == 0) return 0;
    if (!tk->cache && (tk->cache = (lt__tok_centry *)LT__MALLOC(LT__TOK_CSLOTS * sizeof(lt__tok_centry))) != NULL)
        memset(tk->cache, 0, LT__TOK_CSLOTS * sizeof(lt__tok_centry));   /* len 0 never matches: n >= 2 */
    if ((flags & LT_TOK_SPECIAL) && tk->nspec) {
        for (i = 0; i < n; i++) {
            int32_t id = lt__tok_special_at(tk, s + i, n - i);
            if (id < 0) continue;
            if (!lt__tok_stretch(tk, s + start, i - start, out, cap, &count)) return -1;
            if (count < cap) out[count] = id;
            count++;
            i += tk->len[id] - 1;
            start = i + 1;
        }
    }
    if (!lt__tok_stretch(tk, s + start, n - start, out, cap, &count)) return -1;
    return count;
}

/* Where a text may be cut so that its pieces, encoded one by one, give the ids of the whole: at c
   (2 <= c < n) with s[c-1] a newline and s[c-2], s[c] ASCII letters or digits.  Under each pattern
   (GPT-2's, cl100k's, Qwen2's) that newline is a pre-token of its own whether or not the text goes
   on past it: no alternative joins a newline to a letter or digit before or after it (GPT-2's
   " ?\p{L}+" takes only a space before letters, cl100k's "[^\r\n\p{L}\p{N}]?\p{L}+" no newline;
   punctuation runs with their newlines, "\s*[\r\n]+" and "\s+(?!\S)" stop at a letter or digit).
   Why a letter or digit before it: GPT-2 cuts "a  \nb" as a|  |\n|b but "a  \n" alone as a|  \n
   (spaces before a newline join it at the end of a text).  The matches that end before the
   newline read no byte past it, and the matching from c on reads only s[c..].  A special-token
   string spans no such cut unless it holds a newline: with LT_TOK_SPECIAL and such a special
   token the text is encoded in one piece. */
static int lt__tok_alnum(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
/* The last cut of s[0..n) by the rule above, or 0 when it has none. */
static size_t lt__tok_last_cut(const unsigned char *s, size_t n) {
    size_t c;
    for (c = n - 1; n >= 3 && c >= 2; c--)
        if (s[c - 1] == '\n' && lt__tok_alnum(s[c]) && lt__tok_alnum(s[c - 2])) return c;
    return 0;
}

static int lt__tok_store_grow(lt_ctx *ctx, lt__store *st, size_t *cap, size_t need, const char *what) {
    if (!lt__tok_grow(&st->heap, cap, need, (size_t)st->esz))
        return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %zu tokens", what, need), 0;
    st->p = (const unsigned char *)st->heap;
    return 1;
}

/* Encodes s[0..n) and appends its ids to st (room for cap tokens), through ids (room for n). */
static int lt__tok_store_piece(lt_ctx *ctx, lt_tokenizer *tk, int flags, const unsigned char *s, size_t n, int32_t *ids,
                               lt__store *st, size_t *cap, const char *what) {
    int64_t m = lt_tok_encode(tk, (const char *)s, n, flags, ids, (int64_t)n), i;
    if (m < 0) {
        if (tk->ctx != ctx) lt_set_error(ctx, lt_status_of(tk->ctx), "%s: %s", what, lt_error(tk->ctx));
        return 0;
    }
    if (!lt__tok_store_grow(ctx, st, cap, (size_t)(st->n + m), what)) return 0;
    if (st->esz == 4) memcpy((int32_t *)st->heap + st->n, ids, (size_t)m * sizeof(int32_t));
    else for (i = 0; i < m; i++) ((uint16_t *)st->heap)[st->n + i] = (uint16_t)ids[i];
    st->n += m;
    return 1;
}

/* The text at path encoded by tk into a store: read and encoded `piece` bytes at a time (a piece
   ends at the last cut of lt__tok_last_cut in it; one without any grows until it has one or the
   text ends), the ids kept as esz-byte integers (0: uint16 when the vocabulary has at most 65536
   tokens, else int32).  At most the data limit of bytes is read. */
static lt__store *lt__tok_store_file(lt_ctx *ctx, lt_tokenizer *tk, const char *path, int flags, size_t piece, int esz,
                                     const char *what) {
    lt__src src;
    lt__store *st;
    uint64_t limit, total = 0;
    unsigned char *buf = NULL, *q;
    int32_t *ids = NULL;
    size_t cap = piece, len = 0, tcap = 0, idcap = 0;
    int eof = 0, cuts = 1, k;
    if (lt__data_limit(ctx, &limit) != LT_OK || lt__src_open(ctx, &src, path) != LT_OK) return NULL;
    if (!(st = lt__store_new(ctx, what))) { lt__src_close(&src); return NULL; }
    st->esz = esz ? esz : lt_tok_vocab_size(tk) <= 65536 ? 2 : 4;
    snprintf(st->label, sizeof st->label, "%.250s", path);
    if (flags & LT_TOK_SPECIAL)
        for (k = 0; k < tk->nspec; k++)
            if (memchr(tk->bytes + tk->off[tk->spec[k]], '\n', tk->len[tk->spec[k]])) cuts = 0;
    if (src.regular && !lt__tok_store_grow(ctx, st, &tcap, (size_t)(src.size < limit ? src.size : limit) / 4 + 1, what))
        goto fail;
    for (;;) {
        size_t c;
        if (len == cap) {   /* no cut in a full buffer: a longer piece */
            if (!lt_mul_size(cap, 2, &cap) || !(q = (unsigned char *)LT__REALLOC(buf, cap))) {
                lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for a piece of %zu bytes", what, len);
                goto fail;
            }
            buf = q;
        } else if (!buf && !(buf = (unsigned char *)LT__MALLOC(cap))) {
            lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what);
            goto fail;
        }
        while (!eof && len < cap) {
            long long got = lt__src_read(&src, buf + len, cap - len);
            if (got < 0) { lt_set_error(ctx, LT_ERR_IO, "%s: read failed: %s", path, strerror(errno)); goto fail; }
            eof = got == 0;
            len += (size_t)got;
            total += (uint64_t)got;
            if (total > limit) {
                lt_set_error(ctx, LT_ERR_NOMEM, "%s: more than %llu bytes read without reaching the end: over the "
                             "data limit (an input that does not end, such as /dev/zero or an endless pipe? "
                             "LTRAIN_DATA_LIMIT=N[k|m|g] raises the limit)", path, (unsigned long long)limit);
                goto fail;
            }
        }
        c = eof ? len : cuts ? lt__tok_last_cut(buf, len) : 0;
        if (c == 0 && !eof) continue;
        if (c > idcap) {
            int32_t *w = (int32_t *)LT__REALLOC(ids, c * sizeof(int32_t));
            if (!w) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %zu tokens", what, c); goto fail; }
            ids = w;
            idcap = c;
        }
        if (c && !lt__tok_store_piece(ctx, tk, flags, buf, c, ids, st, &tcap, what)) goto fail;
        if (eof) break;
        memmove(buf, buf + c, len - c);
        len -= c;
    }
    lt__src_close(&src);
    LT__FREE(buf);
    LT__FREE(ids);
    if (tcap > (size_t)st->n + 1 && (q = (unsigned char *)LT__REALLOC(st->heap, ((size_t)st->n + 1) * (size_t)st->esz)))
        st->heap = q, st->p = q;
    return st;
fail:
    lt__src_close(&src);
    LT__FREE(buf);
    LT__FREE(ids);
    lt__store_release(st);
    return NULL;
}

#define LT__TOK_PIECE ((size_t)1 << 18)   /* bytes encoded at a time by lt_loader_open_tok */
LTRAIN_DEF lt_loader *lt_loader_open_tok(lt_ctx *ctx, const char *path, lt_tokenizer *tk, int flags, int B, int T) {
    lt__store *st;
    char what[300];
    if (!path || !tk) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_loader_open_tok: path is %s and tk is %s", path ? "given" : "NULL",
                     tk ? "given" : "NULL");
        return NULL;
    }
    if (!lt__loader_check_bt(ctx, "lt_loader_open_tok", B, T)) return NULL;
    snprintf(what, sizeof what, "lt_loader_open_tok: %.250s", path);
    if (!(st = lt__tok_store_file(ctx, tk, path, flags, LT__TOK_PIECE, 0, what))) return NULL;
    return lt__loader_make(ctx, st, B, T, what);
}

/* ---- @@TOK.decode  decoding -------------------------------------------------------------------- */
LTRAIN_DEF int64_t lt_tok_decode(const lt_tokenizer *tk, const int32_t *ids, int64_t n, char *out, size_t cap) {
    int64_t i;
    size_t size = 0;
    if (!tk) return -1;
    if ((!ids && n) || n < 0 || (!out && cap)) {
        lt_set_error(tk->ctx, LT_ERR_ARG, "lt_tok_decode: ids %s with n %lld, out %s with cap %zu", ids ? "set" : "NULL",
                     (long long)n, out ? "set" : "NULL", cap);
        return -1;
    }
    for (i = 0; i < n; i++) {
        int32_t id = ids[i];
        size_t k;
        if (id < 0 || id >= tk->nvocab || !tk->len[id]) {
            lt_set_error(tk->ctx, LT_ERR_ARG, "lt_tok_decode: id %d at position %lld %s (vocab size %d)", id, (long long)i,
                         id < 0 || id >= tk->nvocab ? "is out of range" : "has no token", tk->nvocab);
            return -1;
        }
        k = tk->len[id];
        if (size < cap) memcpy(out + size, tk->bytes + tk->off[id], cap - size < k ? cap - size : k);
        size += k;
    }
    return (int64_t)size;
}
/* ---- src/18_data_tok_train.h ---- */
/* ==== @@TOK  (continued) training a byte-level BPE vocabulary ================================= */
/* Holds: lt_bpe_train (learn merges from text), the learned vocabulary's accessors, and its
   writers (Hugging Face tokenizer.json; GPT-2's encoder.json + vocab.bpe).
   Calls: @@CORE, @@DATA (lt_free), @@TOK (the GPT-2 pre-tokenizer).

   The algorithm is Hugging Face tokenizers' BpeTrainer (models/bpe/trainer.rs), byte-level:
     1. the text is split into pre-tokens by the pattern the encoder will use (lt_pretok_next:
        GPT-2's by default, or Llama-3's or Qwen2's), the whole text as one sequence; equal
        pre-tokens are counted once with their count (words);
     2. ids: the special tokens first (0..S-1), then the 256 bytes in the order of the characters
        standing for them (HF sorts its alphabet by code point): bytes 33..126, 161..172,
        174..255, then the rest ascending, as in GPT-2's encoder.json;
     3. every adjacent pair of ids in every word is counted (times the word's count), and a
        max-heap holds (count, pair) with the words where the pair occurs;
     4. repeat until the vocabulary has vocab_size tokens: pop the top entry; if its count is
        stale, push it again with the current count; stop when the count is 0 or below
        min_frequency; else the merge (a, b) -> new token: merged left to right, without
        overlap, in each word of the entry's list; each merge changes the counts of the pairs
        around it, and every pair that gained occurrences is pushed with the words it gained.
   Ties between equal counts go to the smallest pair (first id, then second), as HF's heap
   orders them.  A merge whose bytes equal an existing token's reuses that token's id (so
   vocab_size - S - 256 merges can be fewer than the merges made), as HF does.

   Where this differs from HF's trainer: special tokens' strings are not looked up when a merge
   forms the same bytes (HF compares a merged token's byte-level text with the specials' text;
   a byte-level text equal to a special token's needs the special to consist of GPT-2's printable
   characters and the merges to build it, which the tests do not meet); no limit_alphabet,
   max_token_length, continuing_subword_prefix or end_of_word_suffix (GPT-2 style BPE has none).
   Special-token strings inside the training text are counted as ordinary text. */

/* ---- @@TOK.train  merges from text: pair counts, their positions, a max-heap ------------------- */
typedef struct { int64_t count; uint32_t a, b; int32_t list; } lt__bt_entry; /* a heap entry */
typedef struct { int32_t *v; int32_t n, cap; } lt__bt_list;                  /* word indices */

struct lt_bpe {
    int n_special, n_vocab, n_merges, cap_vocab, cap_merges;
    lt_pretok pattern;          /* the pre-tokenizer it was trained with */
    unsigned char *bytes;       /* every token's bytes, one after another */
    size_t n_bytes, cap_bytes;
    size_t *off;                /* token id's bytes: bytes[off[id] .. off[id+1]) */
    int32_t *merges;            /* (n_merges, 3): left id, right id, result id */
    uint32_t *hslot;            /* token lookup by bytes: open addressing, id+1 (0 = empty) */
    size_t hcap;
};

typedef struct {
    lt_ctx *ctx;
    int oom;
    lt_pretok pattern;
    const unsigned char *text;
    /* words: the distinct pre-tokens; the bytes of word w are text[wtext[w] .. +wbytes[w]) */
    size_t *wtext; uint32_t *wbytes; int64_t *wcount; int32_t nwords, capwords;
    uint32_t *wslot; size_t wcap;               /* word lookup by bytes: index+1 (0 = empty) */
    int32_t *sym; size_t *wstart; int32_t *wlen; /* each word's current ids: sym[wstart[w] .. +wlen[w]) */
    /* pairs: key (a << 32 | b) -> index; count; pending list of words gained this merge */
    uint64_t *pkey; int64_t *pcount; int32_t *ppend; int32_t npairs, cappairs;
    uint32_t *pslot; size_t pcap;               /* pair lookup: index+1 (0 = empty) */
    int32_t *touched; int32_t ntouched, captouched;
    lt__bt_entry *heap; size_t nheap, capheap;
    lt__bt_list *lists; int32_t nlists, caplists;
} lt__bt;

/* Grows *p (an array of elem-byte items, capacity *cap) to hold need items; 0 when out of memory. */
static int lt__bt_grow(lt__bt *t, void **p, size_t *cap, size_t need, size_t elem) {
    size_t ncap = *cap ? *cap : 16, bytes;
    void *q;
    if (need <= *cap) return 1;
    while (ncap < need) ncap *= 2;
    if (!lt_mul_size(ncap, elem, &bytes) || !(q = LT__REALLOC(*p, bytes))) { if (t) t->oom = 1; return 0; }
    *p = q;
    *cap = ncap;
    return 1;
}
#define LT__BT_GROW(t, arr, capv, need) \
    lt__bt_grow((t), (void **)&(arr), &(capv), (size_t)(need), sizeof *(arr))

static uint64_t lt__bt_hash(const unsigned char *s, size_t n) { /* FNV-1a 64 */
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}
static uint64_t lt__bt_mix(uint64_t x) { /* a 64-bit finalizer: pair keys to well-spread slots */
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return x;
}

/* The bytes' order among the first ids (module comment, step 2): HF sorts its alphabet, the
   characters standing for the bytes (lt_tok_byte_char), by code point.  rank[byte] in 0..255. */
static void lt__bt_byte_ranks(int rank[256]) {
    int b, c;
    for (b = 0; b < 256; b++)
        for (rank[b] = 0, c = 0; c < 256; c++) rank[b] += lt_tok_byte_char(c) < lt_tok_byte_char(b);
}

/* Index of pair (a, b), created with count 0 when create is set and it is new; -1 when absent
   (or out of memory). */
static int32_t lt__bt_pair(lt__bt *t, uint32_t a, uint32_t b, int create) {
    uint64_t key = ((uint64_t)a << 32) | b;
    size_t i, mask;
    if ((size_t)t->npairs * 2 + 2 > t->pcap) { /* rehash at half full */
        size_t ncap = t->pcap ? t->pcap * 2 : 1024, bytes;
        uint32_t *ns;
        int32_t k;
        if (!lt_mul_size(ncap, sizeof *ns, &bytes) || !(ns = (uint32_t *)LT__MALLOC(bytes))) { t->oom = 1; return -1; }
        memset(ns, 0, bytes);
        for (k = 0; k < t->npairs; k++) {
            for (i = lt__bt_mix(t->pkey[k]) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1)) {}
            ns[i] = (uint32_t)k + 1;
        }
        LT__FREE(t->pslot);
        t->pslot = ns;
        t->pcap = ncap;
    }
    mask = t->pcap - 1;
    for (i = lt__bt_mix(key) & mask; t->pslot[i]; i = (i + 1) & mask)
        if (t->pkey[t->pslot[i] - 1] == key) return (int32_t)t->pslot[i] - 1;
    if (!create) return -1;
    {
        size_t cp = (size_t)t->cappairs, cc = (size_t)t->cappairs, cq = (size_t)t->cappairs;
        int32_t k = t->npairs;
        if (!LT__BT_GROW(t, t->pkey, cp, k + 1) || !LT__BT_GROW(t, t->pcount, cc, k + 1) ||
            !LT__BT_GROW(t, t->ppend, cq, k + 1))
            return -1;
        t->cappairs = (int32_t)(cp < cc ? (cp < cq ? cp : cq) : (cc < cq ? cc : cq));
        t->pkey[k] = key;
        t->pcount[k] = 0;
        t->ppend[k] = -1;
        t->pslot[i] = (uint32_t)k + 1;
        t->npairs = k + 1;
        return k;
    }
}

/* A fresh, empty word list; -1 when out of memory. */
static int32_t lt__bt_list_new(lt__bt *t) {
    size_t cap = (size_t)t->caplists;
    if (!LT__BT_GROW(t, t->lists, cap, t->nlists + 1)) return -1;
    t->caplists = (int32_t)cap;
    t->lists[t->nlists].v = NULL;
    t->lists[t->nlists].n = t->lists[t->nlists].cap = 0;
    return t->nlists++;
}
/* Appends word w to list l unless it is already its last entry (words arrive in order). */
static void lt__bt_list_add(lt__bt *t, int32_t l, int32_t w) {
    lt__bt_list *L = &t->lists[l];
    size_t cap = (size_t)L->cap;
    if (L->n && L->v[L->n - 1] == w) return;
    if (!LT__BT_GROW(t, L->v, cap, L->n + 1)) return;
    L->cap = (int32_t)cap;
    L->v[L->n++] = w;
}

/* The heap: the largest count on top; equal counts, the smaller pair (a, then b) on top. */
static int lt__bt_above(const lt__bt_entry *x, const lt__bt_entry *y) {
    if (x->count != y->count) return x->count > y->count;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}
static void lt__bt_push(lt__bt *t, lt__bt_entry e) {
    size_t i;
    if (!LT__BT_GROW(t, t->heap, t->capheap, t->nheap + 1)) return;
    for (i = t->nheap++; i > 0 && lt__bt_above(&e, &t->heap[(i - 1) / 2]); i = (i - 1) / 2)
        t->heap[i] = t->heap[(i - 1) / 2];
    t->heap[i] = e;
}
static lt__bt_entry lt__bt_pop(lt__bt *t) {
    lt__bt_entry top = t->heap[0], last = t->heap[--t->nheap];
    size_t i = 0, c;
    while ((c = 2 * i + 1) < t->nheap) {
        if (c + 1 < t->nheap && lt__bt_above(&t->heap[c + 1], &t->heap[c])) c++;
        if (!lt__bt_above(&t->heap[c], &last)) break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (t->nheap) t->heap[i] = last;
    return top;
}

/* Counts one pre-token (bytes s[0..n) of the text). */
static void lt__bt_add_word(lt__bt *t, size_t at, size_t n) {
    const unsigned char *s = t->text + at;
    size_t i, mask;
    int32_t w;
    if (n == 0 || n > 0xffffffffu) return;
    if ((size_t)t->nwords * 2 + 2 > t->wcap) {
        size_t ncap = t->wcap ? t->wcap * 2 : 1024, bytes;
        uint32_t *ns;
        if (!lt_mul_size(ncap, sizeof *ns, &bytes) || !(ns = (uint32_t *)LT__MALLOC(bytes))) { t->oom = 1; return; }
        memset(ns, 0, bytes);
        for (w = 0; w < t->nwords; w++) {
            for (i = lt__bt_hash(t->text + t->wtext[w], t->wbytes[w]) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1)) {}
            ns[i] = (uint32_t)w + 1;
        }
        LT__FREE(t->wslot);
        t->wslot = ns;
        t->wcap = ncap;
    }
    mask = t->wcap - 1;
    for (i = lt__bt_hash(s, n) & mask; t->wslot[i]; i = (i + 1) & mask) {
        w = (int32_t)t->wslot[i] - 1;
        if (t->wbytes[w] == n && memcmp(t->text + t->wtext[w], s, n) == 0) { t->wcount[w]++; return; }
    }
    {
        size_t c1 = (size_t)t->capwords, c2 = c1, c3 = c1;
        w = t->nwords;
        if (!LT__BT_GROW(t, t->wtext, c1, w + 1) || !LT__BT_GROW(t, t->wbytes, c2, w + 1) ||
            !LT__BT_GROW(t, t->wcount, c3, w + 1))
            return;
        t->capwords = (int32_t)(c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3));
        t->wtext[w] = at;
        t->wbytes[w] = (uint32_t)n;
        t->wcount[w] = 1;
        t->wslot[i] = (uint32_t)w + 1;
        t->nwords = w + 1;
    }
}

/* The learned vocabulary: token id's bytes appended, found again by its bytes when lookup is set
   (the bytes and merged tokens; specials are not looked up).  Returns the id (an existing one when
   lookup finds the bytes), or -1 when out of memory. */
static int lt__bpe_add(lt_bpe *v, const unsigned char *s, size_t n, int lookup) {
    size_t i, mask, need, cap;
    uint64_t h = lt__bt_hash(s, n);
    int id;
    if (lookup && v->hcap) {
        mask = v->hcap - 1;
        for (i = h & mask; v->hslot[i]; i = (i + 1) & mask) {
            id = (int)v->hslot[i] - 1;
            if (v->off[id + 1] - v->off[id] == n && memcmp(v->bytes + v->off[id], s, n) == 0) return id;
        }
    }
    if ((size_t)v->n_vocab * 2 + 2 > v->hcap) { /* rehash at half full */
        size_t ncap = v->hcap ? v->hcap * 2 : 1024, bytes;
        uint32_t *ns;
        if (!lt_mul_size(ncap, sizeof *ns, &bytes) || !(ns = (uint32_t *)LT__MALLOC(bytes))) return -1;
        memset(ns, 0, bytes);
        for (id = v->n_special; id < v->n_vocab; id++) {
            for (i = lt__bt_hash(v->bytes + v->off[id], v->off[id + 1] - v->off[id]) & (ncap - 1); ns[i];
                 i = (i + 1) & (ncap - 1)) {}
            ns[i] = (uint32_t)id + 1;
        }
        LT__FREE(v->hslot);
        v->hslot = ns;
        v->hcap = ncap;
    }
    cap = (size_t)v->cap_vocab;
    if (!lt_add_size(v->n_bytes, n, &need) || !lt__bt_grow(NULL, (void **)&v->bytes, &v->cap_bytes, need, 1) ||
        !lt__bt_grow(NULL, (void **)&v->off, &cap, (size_t)v->n_vocab + 2, sizeof *v->off))
        return -1;
    v->cap_vocab = (int)(cap > 0x7fffffff ? 0x7fffffff : cap);
    if (n) memcpy(v->bytes + v->n_bytes, s, n);
    v->n_bytes += n;
    id = v->n_vocab++;
    v->off[id + 1] = v->n_bytes;
    if (lookup) {
        mask = v->hcap - 1;
        for (i = h & mask; v->hslot[i]; i = (i + 1) & mask) {}
        v->hslot[i] = (uint32_t)id + 1;
    }
    return id;
}

/* Pair (x, y)'s count changes by delta for word w; a gain puts w on the pair's pending list. */
static void lt__bt_change(lt__bt *t, uint32_t x, uint32_t y, int64_t delta, int32_t w) {
    int32_t p = lt__bt_pair(t, x, y, delta > 0);
    if (p < 0) return;
    t->pcount[p] += delta;
    if (delta <= 0) return;
    if (t->ppend[p] < 0) {
        size_t cap = (size_t)t->captouched;
        if (!LT__BT_GROW(t, t->touched, cap, t->ntouched + 1) || (t->ppend[p] = lt__bt_list_new(t)) < 0) return;
        t->captouched = (int32_t)cap;
        t->touched[t->ntouched++] = p;
    }
    lt__bt_list_add(t, t->ppend[p], w);
}

/* Merges (a, b) -> c in word w, left to right without overlap (as HF's Word::merge): each merge
   takes one from (prev, a) and (b, next) and adds one to (prev, c) and (c, next), times the
   word's count; prev is what the word now holds before the merge (perhaps a c just made). */
static void lt__bt_merge_word(lt__bt *t, int32_t w, uint32_t a, uint32_t b, uint32_t c) {
    int32_t *s = t->sym + t->wstart[w];
    int32_t n = t->wlen[w], r = 0, o = 0;
    int64_t k = t->wcount[w];
    while (r < n) {
        if ((uint32_t)s[r] == a && r + 1 < n && (uint32_t)s[r + 1] == b) {
            if (o > 0) {
                lt__bt_change(t, (uint32_t)s[o - 1], a, -k, w);
                lt__bt_change(t, (uint32_t)s[o - 1], c, k, w);
            }
            if (r + 2 < n) {
                lt__bt_change(t, b, (uint32_t)s[r + 2], -k, w);
                lt__bt_change(t, c, (uint32_t)s[r + 2], k, w);
            }
            s[o++] = (int32_t)c;
            r += 2;
        } else {
            s[o++] = s[r++];
        }
    }
    t->wlen[w] = o;
}

/* Every pair that gained occurrences in this merge goes on the heap with its new words. */
static void lt__bt_flush(lt__bt *t) {
    int32_t i;
    for (i = 0; i < t->ntouched; i++) {
        int32_t p = t->touched[i], l = t->ppend[p];
        lt__bt_entry e;
        t->ppend[p] = -1;
        e.count = t->pcount[p];
        e.a = (uint32_t)(t->pkey[p] >> 32);
        e.b = (uint32_t)t->pkey[p];
        e.list = l;
        if (e.count > 0) lt__bt_push(t, e);
        else { LT__FREE(t->lists[l].v); t->lists[l].v = NULL; }
    }
    t->ntouched = 0;
}

/* Steps 2-3 of the module comment: the words' first ids, the pairs' counts and word lists, the heap. */
static void lt__bt_init(lt__bt *t, const lt_bpe *v) {
    int rank[256];
    size_t total = 0, cap = 0;
    int32_t w, j, p;
    lt__bt_byte_ranks(rank);
    for (w = 0; w < t->nwords; w++) total += t->wbytes[w];
    if (!lt__bt_grow(t, (void **)&t->sym, &cap, total ? total : 1, sizeof *t->sym)) return;
    cap = 0;
    if (!LT__BT_GROW(t, t->wstart, cap, t->nwords + 1)) return;
    cap = 0;
    if (!LT__BT_GROW(t, t->wlen, cap, t->nwords + 1)) return;
    for (total = 0, w = 0; w < t->nwords; w++) {
        const unsigned char *s = t->text + t->wtext[w];
        t->wstart[w] = total;
        t->wlen[w] = (int32_t)t->wbytes[w];
        for (j = 0; j < t->wlen[w]; j++) t->sym[total + (size_t)j] = v->n_special + rank[s[j]];
        for (j = 0; j + 1 < t->wlen[w] && !t->oom; j++) {
            p = lt__bt_pair(t, (uint32_t)t->sym[total + j], (uint32_t)t->sym[total + j + 1], 1);
            if (p < 0) return;
            t->pcount[p] += t->wcount[w];
            if (t->ppend[p] < 0 && (t->ppend[p] = lt__bt_list_new(t)) < 0) return;
            lt__bt_list_add(t, t->ppend[p], w);
        }
        total += t->wbytes[w];
    }
    for (p = 0; p < t->npairs && !t->oom; p++) {
        lt__bt_entry e;
        e.count = t->pcount[p];
        e.a = (uint32_t)(t->pkey[p] >> 32);
        e.b = (uint32_t)t->pkey[p];
        e.list = t->ppend[p];
        t->ppend[p] = -1;
        lt__bt_push(t, e);
    }
}

/* Step 4: merge until the vocabulary is full, the pairs run out or fall below min_frequency. */
static void lt__bt_run(lt__bt *t, lt_bpe *v, int vocab_size, int64_t min_frequency) {
    unsigned char *buf = NULL;
    size_t bufcap = 0;
    while (v->n_vocab < vocab_size && t->nheap && !t->oom) {
        lt__bt_entry e = lt__bt_pop(t);
        int32_t p = lt__bt_pair(t, e.a, e.b, 0), i;
        size_t la, lb, cap = (size_t)v->cap_merges;
        int c;
        if (p < 0) break;
        if (e.count != t->pcount[p]) { e.count = t->pcount[p]; lt__bt_push(t, e); continue; }
        if (e.count < 1 || e.count < min_frequency) { lt__bt_push(t, e); break; }
        la = v->off[e.a + 1] - v->off[e.a];
        lb = v->off[e.b + 1] - v->off[e.b];
        if (!lt__bt_grow(t, (void **)&buf, &bufcap, la + lb, 1)) break;
        memcpy(buf, v->bytes + v->off[e.a], la);
        memcpy(buf + la, v->bytes + v->off[e.b], lb);
        if ((c = lt__bpe_add(v, buf, la + lb, 1)) < 0 ||
            !lt__bt_grow(t, (void **)&v->merges, &cap, 3 * ((size_t)v->n_merges + 1), sizeof *v->merges)) {
            t->oom = 1;
            break;
        }
        v->cap_merges = (int)cap;
        v->merges[3 * v->n_merges] = (int32_t)e.a;
        v->merges[3 * v->n_merges + 1] = (int32_t)e.b;
        v->merges[3 * v->n_merges + 2] = c;
        v->n_merges++;
        for (i = 0; i < t->lists[e.list].n; i++) lt__bt_merge_word(t, t->lists[e.list].v[i], e.a, e.b, (uint32_t)c);
        lt__bt_flush(t);
        LT__FREE(t->lists[e.list].v);
        t->lists[e.list].v = NULL;
    }
    LT__FREE(buf);
}

static void lt__bt_free(lt__bt *t) {
    int32_t i;
    for (i = 0; i < t->nlists; i++) LT__FREE(t->lists[i].v);
    LT__FREE(t->lists); LT__FREE(t->heap); LT__FREE(t->touched);
    LT__FREE(t->pkey); LT__FREE(t->pcount); LT__FREE(t->ppend); LT__FREE(t->pslot);
    LT__FREE(t->sym); LT__FREE(t->wstart); LT__FREE(t->wlen);
    LT__FREE(t->wtext); LT__FREE(t->wbytes); LT__FREE(t->wcount); LT__FREE(t->wslot);
}

LTRAIN_DEF void lt_bpe_free(lt_bpe *v) {
    if (!v) return;
    LT__FREE(v->bytes); LT__FREE(v->off); LT__FREE(v->merges); LT__FREE(v->hslot);
    LT__FREE(v);
}

/* Step 1: the text's pre-tokens (the whole text as one sequence), counted. */
static void lt__bt_split(lt__bt *t, size_t n) {
    size_t i, k;
    for (i = 0; i < n && !t->oom; i += k) {
        k = lt_pretok_next(t->pattern, (const char *)t->text + i, n - i);
        if (k == 0) break;
        lt__bt_add_word(t, i, k);
    }
}

/* The vocabulary before any merge: the specials, then the 256 bytes in GPT-2's order. */
static lt_bpe *lt__bpe_new(lt_ctx *ctx, const lt_bpe_opts *o) {
    int rank[256], inv[256], b, i;
    size_t cap = 0;
    lt_bpe *v = (lt_bpe *)LT__MALLOC(sizeof *v);
    if (!v) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_bpe_train: out of memory"); return NULL; }
    memset(v, 0, sizeof *v);
    if (!lt__bt_grow(NULL, (void **)&v->off, &cap, 1024, sizeof *v->off)) goto oom;
    v->cap_vocab = (int)cap;
    v->off[0] = 0;
    for (i = 0; i < o->n_special; i++)
        if (lt__bpe_add(v, (const unsigned char *)o->special[i], strlen(o->special[i]), 0) < 0) goto oom;
    v->n_special = o->n_special;
    lt__bt_byte_ranks(rank);
    for (b = 0; b < 256; b++) inv[rank[b]] = b;
    for (i = 0; i < 256; i++) {
        unsigned char c = (unsigned char)inv[i];
        if (lt__bpe_add(v, &c, 1, 1) < 0) goto oom;
    }
    return v;
oom:
    lt_bpe_free(v);
    lt_set_error(ctx, LT_ERR_NOMEM, "lt_bpe_train: out of memory");
    return NULL;
}

LTRAIN_DEF lt_bpe_opts lt_bpe_defaults(void) {
    lt_bpe_opts o;
    static const char *const eot[1] = {"<|endoftext|>"};
    o.vocab_size = 4096;
    o.min_frequency = 0;
    o.n_special = 1;
    o.special = eot;
    o.pattern = LT_PRETOK_GPT2;
    return o;
}

LTRAIN_DEF lt_bpe *lt_bpe_train(lt_ctx *ctx, const void *text, size_t n, const lt_bpe_opts *opts) {
    lt_bpe_opts o = opts ? *opts : lt_bpe_defaults();
    lt__bt t;
    lt_bpe *v;
    int i, j;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!text && n) { lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: text is NULL but n is %zu", n); return NULL; }
    if (o.pattern == 0) o.pattern = LT_PRETOK_GPT2;
    if (o.pattern != LT_PRETOK_GPT2 && o.pattern != LT_PRETOK_CL100K && o.pattern != LT_PRETOK_QWEN2) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: pattern is %d (LT_PRETOK_GPT2, LT_PRETOK_CL100K or "
                     "LT_PRETOK_QWEN2)", (int)o.pattern);
        return NULL;
    }
    if (o.n_special < 0 || o.n_special > 4096 || (o.n_special && !o.special)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: n_special is %d (0..4096, with special[] set)", o.n_special);
        return NULL;
    }
    for (i = 0; i < o.n_special; i++) {
        if (!o.special[i] || !o.special[i][0]) {
            lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: special[%d] is NULL or empty", i);
            return NULL;
        }
        for (j = 0; j < i; j++)
            if (strcmp(o.special[i], o.special[j]) == 0) {
                lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: special[%d] and special[%d] are both \"%s\"", j, i, o.special[i]);
                return NULL;
            }
    }
    if (o.vocab_size < 256 + o.n_special || o.vocab_size > (1 << 24)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: vocab_size is %d: it counts the %d special tokens and the 256 "
                     "bytes, so it must be %d..%d", o.vocab_size, o.n_special, 256 + o.n_special, 1 << 24);
        return NULL;
    }
    if (!(v = lt__bpe_new(ctx, &o))) return NULL;
    v->pattern = o.pattern;
    memset(&t, 0, sizeof t);
    t.ctx = ctx;
    t.pattern = o.pattern;
    t.text = (const unsigned char *)text;
    lt__bt_split(&t, n);
    if (!t.oom) lt__bt_init(&t, v);
    if (!t.oom) lt__bt_run(&t, v, o.vocab_size, o.min_frequency);
    lt__bt_free(&t);
    if (t.oom) {
        lt_bpe_free(v);
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_bpe_train: out of memory (%zu bytes of text)", n);
        return NULL;
    }
    return v;
}

LTRAIN_DEF int lt_bpe_vocab_size(const lt_bpe *v) { return v ? v->n_vocab : 0; }
LTRAIN_DEF int lt_bpe_n_merges(const lt_bpe *v) { return v ? v->n_merges : 0; }
LTRAIN_DEF int lt_bpe_n_special(const lt_bpe *v) { return v ? v->n_special : 0; }
LTRAIN_DEF int lt_bpe_merge(const lt_bpe *v, int i, int *left, int *right) {
    if (!v || i < 0 || i >= v->n_merges) return -1;
    if (left) *left = v->merges[3 * i];
    if (right) *right = v->merges[3 * i + 1];
    return v->merges[3 * i + 2];
}
LTRAIN_DEF const unsigned char *lt_bpe_token(const lt_bpe *v, int id, size_t *len) {
    if (len) *len = 0;
    if (!v || id < 0 || id >= v->n_vocab) return NULL;
    if (len) *len = v->off[id + 1] - v->off[id];
    return v->bytes + v->off[id];
}

/* ---- @@TOK.save  the learned vocabulary as tokenizer.json, or encoder.json + vocab.bpe -------- */
/* Bytes as GPT-2's byte-level text (each byte one character, lt_tok_byte_char); in a JSON
   string ('"' and '\' escaped) when json is set. */
static void lt__bt_put_bytes(FILE *f, const unsigned char *s, size_t n, int json) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t c = lt_tok_byte_char(s[i]);   /* below U+0800: one or two UTF-8 bytes */
        if (json && (c == '"' || c == '\\')) fputc('\\', f);
        if (c < 0x80) fputc((int)c, f);
        else { fputc((int)(0xc0 | (c >> 6)), f); fputc((int)(0x80 | (c & 0x3f)), f); }
    }
}
/* A special token's text as a JSON string's contents (its bytes as they are, escapes for JSON). */
static void lt__bt_put_text(FILE *f, const unsigned char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\') fprintf(f, "\\%c", s[i]);
        else if (s[i] < 0x20) fprintf(f, "\\u%04x", s[i]);
        else fputc(s[i], f);
    }
}
static void lt__bt_put_token(FILE *f, const lt_bpe *v, int id) {
    size_t n;
    const unsigned char *s = lt_bpe_token(v, id, &n);
    fputc('"', f);
    if (id < v->n_special) lt__bt_put_text(f, s, n);
    else lt__bt_put_bytes(f, s, n, 1);
    fputc('"', f);
}

static lt_status lt__bt_close(lt_ctx *ctx, FILE *f, const char *path) {
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return lt_set_error(ctx, LT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return LT_OK;
}

/* The pre_tokenizer field: GPT-2's is HF's ByteLevel with use_regex; the others a Split on the
   pattern's regex (as @@TOK's loader knows it), then a ByteLevel without regex. */
static void lt__bt_put_pretok(FILE *f, lt_pretok p) {
    size_t r;
    if (p == LT_PRETOK_GPT2) {
        fprintf(f, "  \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
                   "\"use_regex\": true},\n");
        return;
    }
    for (r = 0; r + 1 < sizeof lt__tok_known_re / sizeof lt__tok_known_re[0] && lt__tok_known_re[r].p != p; r++) {}
    fprintf(f, "  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [\n    {\"type\": \"Split\", "
               "\"pattern\": {\"Regex\": \"");
    lt__bt_put_text(f, (const unsigned char *)lt__tok_known_re[r].re, strlen(lt__tok_known_re[r].re));
    fprintf(f, "\"}, \"behavior\": \"Isolated\", \"invert\": false},\n    {\"type\": \"ByteLevel\", "
               "\"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]},\n");
}

/* Hugging Face's tokenizer.json for a byte-level BPE model, the fields as BpeTrainer's tokenizer
   saves them (the pre-tokenizer without a prefix space, byte-level decoder). */
LTRAIN_DEF lt_status lt_bpe_save_json(lt_ctx *ctx, const lt_bpe *v, const char *path) {
    FILE *f;
    int i;
    if (!v || !path) return lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_save_json: vocabulary and path must not be NULL");
    if (!(f = fopen(path, "wb"))) return lt_set_error(ctx, LT_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    fprintf(f, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [");
    for (i = 0; i < v->n_special; i++) {
        fprintf(f, "%s\n    {\"id\": %d, \"content\": ", i ? "," : "", i);
        lt__bt_put_token(f, v, i);
        fprintf(f, ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, "
                   "\"special\": true}");
    }
    fprintf(f, "%s],\n  \"normalizer\": null,\n", v->n_special ? "\n  " : "");
    lt__bt_put_pretok(f, v->pattern);
    fprintf(f, "  \"post_processor\": null,\n");
    fprintf(f, "  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, "
               "\"use_regex\": true},\n");
    fprintf(f, "  \"model\": {\n    \"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, "
               "\"continuing_subword_prefix\": null, \"end_of_word_suffix\": null, \"fuse_unk\": false, "
               "\"byte_fallback\": false, \"ignore_merges\": false,\n    \"vocab\": {");
    for (i = 0; i < v->n_vocab; i++) {
        fprintf(f, "%s\n      ", i ? "," : "");
        lt__bt_put_token(f, v, i);
        fprintf(f, ": %d", i);
    }
    fprintf(f, "\n    },\n    \"merges\": [");
    for (i = 0; i < v->n_merges; i++) {
        fprintf(f, "%s\n      [", i ? "," : "");
        lt__bt_put_token(f, v, v->merges[3 * i]);
        fputs(", ", f);
        lt__bt_put_token(f, v, v->merges[3 * i + 1]);
        fputc(']', f);
    }
    fprintf(f, "\n    ]\n  }\n}\n");
    return lt__bt_close(ctx, f, path);
}

/* GPT-2's pair: encoder.json (token -> id, specials included) and vocab.bpe ("#version: 0.2"
   then one merge "left right" per line, in order). */
LTRAIN_DEF lt_status lt_bpe_save_gpt2(lt_ctx *ctx, const lt_bpe *v, const char *encoder_json, const char *vocab_bpe) {
    FILE *f;
    int i;
    lt_status s;
    if (!v || !encoder_json || !vocab_bpe)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_save_gpt2: vocabulary and paths must not be NULL");
    if (v->pattern != LT_PRETOK_GPT2)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_save_gpt2: %s: the vocabulary was trained with another "
                            "pre-tokenizer than GPT-2's, which encoder.json + vocab.bpe cannot record "
                            "(hint: lt_bpe_save_json)", vocab_bpe);
    if (!(f = fopen(encoder_json, "wb")))
        return lt_set_error(ctx, LT_ERR_IO, "%s: cannot create: %s", encoder_json, strerror(errno));
    fputc('{', f);
    for (i = 0; i < v->n_vocab; i++) {
        if (i) fputs(", ", f);
        lt__bt_put_token(f, v, i);
        fprintf(f, ": %d", i);
    }
    fputs("}\n", f);
    if ((s = lt__bt_close(ctx, f, encoder_json)) != LT_OK) return s;
    if (!(f = fopen(vocab_bpe, "wb")))
        return lt_set_error(ctx, LT_ERR_IO, "%s: cannot create: %s", vocab_bpe, strerror(errno));
    fputs("#version: 0.2\n", f);
    for (i = 0; i < v->n_merges; i++) {
        size_t n;
        const unsigned char *t = lt_bpe_token(v, v->merges[3 * i], &n);
        lt__bt_put_bytes(f, t, n, 0);
        fputc(' ', f);
        t = lt_bpe_token(v, v->merges[3 * i + 1], &n);
        lt__bt_put_bytes(f, t, n, 0);
        fputc('\n', f);
    }
    return lt__bt_close(ctx, f, vocab_bpe);
}
/* ---- src/19_ckpt.h ---- */
/* ==== @@CKPT  safetensors read/write =========================================================== */
/* Holds: safetensors: parsing and validating a file (lt_st_open), reading tensors, the writer
   (atomic save: temporary file, fsync, rename).
   Calls: @@CORE, @@DATA (file and little-endian reads). */

#include <time.h>
#if defined(_WIN32)
#include <io.h>
#define LT__FSYNC(f) _commit(_fileno(f))
#else
#include <unistd.h>
#ifndef __cplusplus
/* Strict -std=c99 hides these POSIX functions from <stdio.h>/<unistd.h>; declaring them again is
   harmless where they are visible.  (fileno) in parentheses survives a fileno macro. */
extern int fsync(int);
extern int(fileno)(FILE *);
#endif
#define LT__FSYNC(f) fsync(fileno(f))
#include <fcntl.h>
/* After the rename the new directory entry must reach the disk too, or a power cut can bring the
   old file back (or none): fsync the directory that holds path.  buf has room for path.  Best
   effort where the directory cannot be opened (no read permission); an I/O error is reported. */
static int lt__fsync_dir(char *buf, const char *path) {
    const char *slash = strrchr(path, '/');
    int fd, rc, e;
    if (!slash) { buf[0] = '.'; buf[1] = 0; }
    else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        memcpy(buf, path, n);
        buf[n] = 0;
    }
    fd = open(buf, O_RDONLY);
    if (fd < 0) return 0;
    rc = fsync(fd);
    e = errno;
    close(fd);
    errno = e;
    return rc != 0 && e == EIO ? -1 : 0;
}
#endif

#define LT__ST_MAX_HEADER 100000000u /* as the reference implementation: a header over 100 MB is refused */
#define LT__ST_MAX_DIMS 8
#define LT__JSON_MAX_DEPTH 16        /* a safetensors header needs 3 levels */

enum { LT__ST_F64, LT__ST_F32, LT__ST_F16, LT__ST_BF16 }; /* the first rows below: the float types */
static const struct { const char *name; size_t size; } lt__st_dtypes[] = {
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
    {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"U16", 2}, {"U32", 4}, {"U64", 8},
};
#define LT__ST_NDTYPES ((int)(sizeof lt__st_dtypes / sizeof lt__st_dtypes[0]))

static int lt__st_dtype_index(const char *s) {
    int i;
    for (i = 0; i < LT__ST_NDTYPES; i++) if (strcmp(s, lt__st_dtypes[i].name) == 0) return i;
    return -1;
}

/* -- @@CKPT.json  a strict JSON parser: objects, arrays, strings, integers; nothing else ------- */
enum { LT__J_OBJ, LT__J_ARR, LT__J_STR, LT__J_INT };

typedef struct {
    int type;
    int child, next;   /* first child / next sibling (node indices, -1 for none) */
    size_t key;        /* members of an object: the key's offset in the string pool */
    size_t str;        /* strings: offset in the pool (NUL-terminated) */
    int64_t num;       /* integers */
} lt__jnode;

typedef struct {
    const unsigned char *s;
    size_t len, pos;
    lt__jnode *nodes;
    int n, cap;
    char *pool;        /* decoded strings; never longer than the text they came from */
    size_t pool_len;
    int oom;
    char err[128];     /* what went wrong at pos (empty: nothing) */
} lt__json;

static void lt__j_fail(lt__json *j, const char *what) {
    if (!j->err[0]) snprintf(j->err, sizeof j->err, "%s", what);
}

static void lt__j_ws(lt__json *j) {
    while (j->pos < j->len && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' || j->s[j->pos] == '\n' || j->s[j->pos] == '\r'))
        j->pos++;
}

static int lt__j_node(lt__json *j, int type) {
    lt__jnode *x;
    if (j->n == j->cap) {
        int ncap = j->cap ? j->cap * 2 : 64;
        lt__jnode *p;
        if (j->cap > INT_MAX / 2 || (size_t)ncap > SIZE_MAX / sizeof(lt__jnode) ||
            !(p = (lt__jnode *)LT__REALLOC(j->nodes, (size_t)ncap * sizeof(lt__jnode)))) {
            j->oom = 1;
            lt__j_fail(j, "out of memory");
            return -1;
        }
        j->nodes = p; j->cap = ncap;
    }
    x = &j->nodes[j->n];
    x->type = type; x->child = x->next = -1; x->key = x->str = 0; x->num = 0;
    return j->n++;
}

static int lt__j_hex4(const unsigned char *p, unsigned *out) {
    int i;
    unsigned v = 0;
    for (i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

/* A string at pos (the opening quote) decoded into the pool; *off receives its offset. */
static int lt__j_string(lt__json *j, size_t *off) {
    char *o = j->pool + j->pool_len;
    *off = j->pool_len;
    j->pos++; /* the quote */
    for (;;) {
        unsigned c;
        if (j->pos >= j->len) { lt__j_fail(j, "unterminated string"); return 0; }
        c = j->s[j->pos];
        if (c == '"') { j->pos++; break; }
        if (c < 0x20) { lt__j_fail(j, "control character inside a string (must be escaped)"); return 0; }
        if (c == '\\') {
            unsigned cp, lo;
            if (j->pos + 1 >= j->len) { lt__j_fail(j, "unterminated string"); return 0; }
            c = j->s[j->pos + 1];
            j->pos += 2;
            switch (c) {
            case '"': *o++ = '"'; continue;
            case '\\': *o++ = '\\'; continue;
            case '/': *o++ = '/'; continue;
            case 'b': *o++ = '\b'; continue;
            case 'f': *o++ = '\f'; continue;
            case 'n': *o++ = '\n'; continue;
            case 'r': *o++ = '\r'; continue;
            case 't': *o++ = '\t'; continue;
            case 'u': break;
            default: j->pos -= 2; lt__j_fail(j, "invalid escape in a string"); return 0;
            }
            if (j->pos + 4 > j->len || !lt__j_hex4(j->s + j->pos, &cp)) {
                j->pos -= 2; lt__j_fail(j, "\\u needs four hex digits"); return 0;
            }
            j->pos += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) { lt__j_fail(j, "lone low surrogate in a \\u escape"); return 0; }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (j->pos + 6 > j->len || j->s[j->pos] != '\\' || j->s[j->pos + 1] != 'u' ||
                    !lt__j_hex4(j->s + j->pos + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    lt__j_fail(j, "lone high surrogate in a \\u escape"); return 0;
                }
                j->pos += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            /* a NUL would cut the name short in C and could fake a duplicate or a match */
            if (cp == 0) { lt__j_fail(j, "\\u0000 is not allowed in a string"); return 0; }
            /* UTF-8 of cp: never longer than the escape (6 or 12 bytes) that encoded it */
            if (cp < 0x80) *o++ = (char)cp;
            else if (cp < 0x800) { *o++ = (char)(0xC0 | (cp >> 6)); *o++ = (char)(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) {
                *o++ = (char)(0xE0 | (cp >> 12)); *o++ = (char)(0x80 | ((cp >> 6) & 0x3F)); *o++ = (char)(0x80 | (cp & 0x3F));
            } else {
                *o++ = (char)(0xF0 | (cp >> 18)); *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
                *o++ = (char)(0x80 | ((cp >> 6) & 0x3F)); *o++ = (char)(0x80 | (cp & 0x3F));
            }
        } else {
            int k = lt__utf8_next(j->s + j->pos, j->len - j->pos, NULL);
            if (!k) { lt__j_fail(j, "invalid UTF-8 in a string"); return 0; }
            memcpy(o, j->s + j->pos, (size_t)k);
            o += k;
            j->pos += (size_t)k;
        }
    }
    *o++ = 0;
    j->pool_len = (size_t)(o - j->pool);
    return 1;
}

static int lt__j_value(lt__json *j, int depth);

/* Objects and arrays: children linked in order. */
static int lt__j_container(lt__json *j, int depth, int is_obj) {
    int self = lt__j_node(j, is_obj ? LT__J_OBJ : LT__J_ARR), last = -1;
    char close = is_obj ? '}' : ']';
    if (self < 0) return -1;
    if (depth >= LT__JSON_MAX_DEPTH) { lt__j_fail(j, "nested too deeply"); return -1; }
    j->pos++;
    lt__j_ws(j);
    if (j->pos < j->len && j->s[j->pos] == (unsigned char)close) { j->pos++; return self; }
    for (;;) {
        size_t key = 0;
        int v;
        lt__j_ws(j);
        if (is_obj) {
            if (j->pos >= j->len || j->s[j->pos] != '"') { lt__j_fail(j, "expected a string key"); return -1; }
            if (!lt__j_string(j, &key)) return -1;
            lt__j_ws(j);
            if (j->pos >= j->len || j->s[j->pos] != ':') { lt__j_fail(j, "expected ':' after an object key"); return -1; }
            j->pos++;
        }
        v = lt__j_value(j, depth + 1);
        if (v < 0) return -1;
        j->nodes[v].key = key;
        if (last < 0) j->nodes[self].child = v; else j->nodes[last].next = v;
        last = v;
        lt__j_ws(j);
        if (j->pos < j->len && j->s[j->pos] == ',') { j->pos++; continue; }
        if (j->pos < j->len && j->s[j->pos] == (unsigned char)close) { j->pos++; return self; }
        lt__j_fail(j, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        return -1;
    }
}

static int lt__j_value(lt__json *j, int depth) {
    unsigned c;
    lt__j_ws(j);
    if (j->pos >= j->len) { lt__j_fail(j, "unexpected end of the header"); return -1; }
    c = j->s[j->pos];
    if (c == '{' || c == '[') return lt__j_container(j, depth, c == '{');
    if (c == '"') {
        int v = lt__j_node(j, LT__J_STR);
        if (v < 0) return -1;
        if (!lt__j_string(j, &j->nodes[v].str)) return -1;
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        /* an integer: -?(0|[1-9][0-9]*), within int64 */
        int neg = c == '-', v;
        uint64_t u = 0, lim;
        size_t start;
        if (neg) j->pos++;
        start = j->pos;
        lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        while (j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9') {
            unsigned d = j->s[j->pos] - '0';
            if (u > (lim - d) / 10) { lt__j_fail(j, "integer out of range"); return -1; }
            u = u * 10 + d;
            j->pos++;
        }
        if (j->pos == start) { lt__j_fail(j, "'-' without digits"); return -1; }
        if (j->pos - start > 1 && j->s[start] == '0') { j->pos = start; lt__j_fail(j, "leading zero in a number"); return -1; }
        if (j->pos < j->len && (j->s[j->pos] == '.' || j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
            lt__j_fail(j, "only integers are allowed (no fractions or exponents)"); return -1;
        }
        v = lt__j_node(j, LT__J_INT);
        if (v < 0) return -1;
        j->nodes[v].num = neg ? (u ? -(int64_t)(u - 1) - 1 : 0) : (int64_t)u;
        return v;
    }
    if (c == 't' || c == 'f' || c == 'n') { lt__j_fail(j, "true, false and null are not allowed in a safetensors header"); return -1; }
    if (c >= 0x20 && c < 0x7F) snprintf(j->err, sizeof j->err, "unexpected character '%c'", (char)c);
    else snprintf(j->err, sizeof j->err, "unexpected byte 0x%02x", c);
    return -1;
}

/* -- @@CKPT.read  reading ----------------------------------------------------------------------- */
typedef struct {
    const char *name;  /* in the pool */
    int dt;            /* index into lt__st_dtypes */
    int ndim;
    int64_t shape[LT__ST_MAX_DIMS];
    size_t begin, end; /* byte range in the data section */
} lt__st_entry;

struct lt_st {
    lt_ctx *ctx;
    unsigned char *buf;        /* the whole file */
    size_t size;
    const unsigned char *data; /* after the header */
    lt__st_entry *t;
    int n;
    int *by_name;              /* entry indices sorted by name, for lt_st_find */
    const char **meta;         /* key, value pairs (in the pool) */
    int n_meta;
    char *pool;
    char label[160];           /* the file's name, for error messages (cut if longer) */
};

LTRAIN_DEF void lt_st_close(lt_st *st) {
    if (!st) return;
    LT__FREE(st->buf);
    LT__FREE(st->t);
    LT__FREE(st->by_name);
    LT__FREE(st->meta);
    LT__FREE(st->pool);
    LT__FREE(st);
}

typedef struct { const char *name; int idx; } lt__st_name;
static int lt__st_cmp_name(const void *a, const void *b) {
    return strcmp(((const lt__st_name *)a)->name, ((const lt__st_name *)b)->name);
}
static int lt__st_cmp_range(const void *a, const void *b) {
    const lt__st_entry *x = *(const lt__st_entry *const *)a, *y = *(const lt__st_entry *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

static void lt__st_shape_str(char *buf, size_t cap, const int64_t *shape, int ndim) {
    size_t k = 0;
    int i;
    k += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < ndim && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* An entry {"dtype": s, "shape": [ints], "data_offsets": [begin, end]}; 0 + error if not. */
static lt_status lt__st_entry_read(lt_ctx *ctx, const char *label, lt__json *j, int node, lt__st_entry *e, size_t dsize) {
    const char *name = e->name;
    int c, dtype = -1, shape = -1, offs = -1, k;
    size_t numel = 1, bytes;
    int64_t off[2] = {0, 0};
    char sh[96];
    if (j->nodes[node].type != LT__J_OBJ)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": must be an object {dtype, shape, data_offsets}", label, name);
    for (c = j->nodes[node].child; c >= 0; c = j->nodes[c].next) {
        const char *key = j->pool + j->nodes[c].key;
        int *slot = strcmp(key, "dtype") == 0 ? &dtype : strcmp(key, "shape") == 0 ? &shape
                  : strcmp(key, "data_offsets") == 0 ? &offs : NULL;
        if (!slot)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": unknown field \"%.40s\" "
                                "(expected dtype, shape, data_offsets)", label, name, key);
        if (*slot >= 0)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": field \"%s\" appears twice", label, name, key);
        *slot = c;
    }
    if (dtype < 0 || shape < 0 || offs < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": missing field \"%s\"", label, name,
                            dtype < 0 ? "dtype" : shape < 0 ? "shape" : "data_offsets");
    if (j->nodes[dtype].type != LT__J_STR)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": dtype must be a string", label, name);
    e->dt = lt__st_dtype_index(j->pool + j->nodes[dtype].str);
    if (e->dt < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": unknown dtype \"%.20s\" (known: F64 F32 F16 BF16 "
                            "I64 I32 I16 I8 U8 BOOL U16 U32 U64)", label, name, j->pool + j->nodes[dtype].str);
    if (j->nodes[shape].type != LT__J_ARR)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape must be an array of integers", label, name);
    e->ndim = 0;
    for (c = j->nodes[shape].child; c >= 0; c = j->nodes[c].next) {
        if (j->nodes[c].type != LT__J_INT)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape[%d] is not an integer", label, name, e->ndim);
        if (j->nodes[c].num < 0)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape[%d] is %lld (dims must be >= 0)",
                                label, name, e->ndim, (long long)j->nodes[c].num);
        if (e->ndim == LT__ST_MAX_DIMS)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape has more than %d dims (not supported)",
                                label, name, LT__ST_MAX_DIMS);
        e->shape[e->ndim++] = j->nodes[c].num;
    }
    lt__st_shape_str(sh, sizeof sh, e->shape, e->ndim);
    for (k = 0; k < e->ndim; k++) if (e->shape[k] == 0) numel = 0;
    for (k = 0; k < e->ndim && numel; k++)
        if ((uint64_t)e->shape[k] > (uint64_t)SIZE_MAX || !lt_mul_size(numel, (size_t)e->shape[k], &numel))
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape %s has too many elements (the product overflows)",
                                label, name, sh);
    if (!lt_mul_size(numel, lt__st_dtypes[e->dt].size, &bytes))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape %s of %s is too many bytes (overflows)",
                            label, name, sh, lt__st_dtypes[e->dt].name);
    k = 0;
    if (j->nodes[offs].type == LT__J_ARR)
        for (c = j->nodes[offs].child; c >= 0; c = j->nodes[c].next) {
            if (k == 2 || j->nodes[c].type != LT__J_INT || j->nodes[c].num < 0) { k = -1; break; }
            off[k++] = j->nodes[c].num;
        }
    if (k != 2)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": data_offsets must be [begin, end], two integers >= 0",
                            label, name);
    if (off[0] > off[1])
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": data_offsets [%lld,%lld] end before they begin",
                            label, name, (long long)off[0], (long long)off[1]);
    if ((uint64_t)off[1] > (uint64_t)dsize)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": data_offsets [%lld,%lld] run past the end of the "
                            "file (the data section is %zu bytes)", label, name, (long long)off[0], (long long)off[1], dsize);
    e->begin = (size_t)off[0];
    e->end = (size_t)off[1];
    if (e->end - e->begin != bytes)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": data_offsets [%lld,%lld] but shape %s of %s needs %zu bytes",
                            label, name, (long long)off[0], (long long)off[1], sh, lt__st_dtypes[e->dt].name, bytes);
    return LT_OK;
}

/* Step 1 of parsing: the 8-byte header length, then the header as JSON into j (j->pool allocated
   here).  Returns the root node, or -1 with the error set. */
static int lt__st_parse_header(lt_ctx *ctx, const unsigned char *buf, size_t size, const char *label, lt__json *j,
                               uint64_t *hlen) {
    int root;
    if (size < 8) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %zu bytes is too short for a safetensors file "
                     "(it starts with an 8-byte header length)", label, size);
        return -1;
    }
    *hlen = lt__rd64(buf);
    if (*hlen > LT__ST_MAX_HEADER) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: header length %llu is over the limit of %u bytes (100 MB)",
                     label, (unsigned long long)*hlen, LT__ST_MAX_HEADER);
        return -1;
    }
    if (*hlen > size - 8) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: header length %llu runs past the end of the file (%zu bytes)",
                     label, (unsigned long long)*hlen, size);
        return -1;
    }
    j->s = buf + 8;
    j->len = (size_t)*hlen;
    j->pool = (char *)LT__MALLOC(j->len + 1);
    if (!j->pool) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for the header", label); return -1; }
    root = lt__j_value(j, 0);
    if (root >= 0) {
        lt__j_ws(j);
        if (j->pos < j->len) lt__j_fail(j, "trailing characters after the JSON object");
    }
    if (j->err[0]) {
        if (j->oom) lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory parsing the header", label);
        else lt_set_error(ctx, LT_ERR_FORMAT, "%s: header is not valid JSON: %s (at byte %zu of the header)", label, j->err, j->pos);
        return -1;
    }
    if (j->nodes[root].type != LT__J_OBJ) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: header must be a JSON object {name: {dtype, shape, data_offsets}, ...}", label);
        return -1;
    }
    return root;
}

/* Step 2: the root's members counted (tensors in *n_ent, metadata strings in *n_meta) and its
   "__metadata__" found (*meta, -1 if none) and checked to be an object of strings. */
static lt_status lt__st_count_members(lt_ctx *ctx, const char *label, const lt__json *j, int root, int *n_ent,
                                      int *n_meta, int *meta) {
    int c;
    for (c = j->nodes[root].child; c >= 0; c = j->nodes[c].next) {
        if (strcmp(j->pool + j->nodes[c].key, "__metadata__") != 0) { (*n_ent)++; continue; }
        if (*meta >= 0) return lt_set_error(ctx, LT_ERR_FORMAT, "%s: duplicate \"__metadata__\" in the header", label);
        *meta = c;
    }
    if (*meta < 0) return LT_OK;
    if (j->nodes[*meta].type != LT__J_OBJ)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: __metadata__ must be an object of strings", label);
    for (c = j->nodes[*meta].child; c >= 0; c = j->nodes[c].next, (*n_meta)++)
        if (j->nodes[c].type != LT__J_STR)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: __metadata__ value of \"%.100s\" must be a string", label,
                                j->pool + j->nodes[c].key);
    return LT_OK;
}

/* Step 3: every tensor entry read into st->t, and st->by_name filled (names must be unique).
   names and order are scratch of one slot per tensor; order receives the entries. */
static lt_status lt__st_read_entries(lt_ctx *ctx, const char *label, lt__json *j, int root, int meta, size_t dsize,
                                     lt_st *st, lt__st_name *names, lt__st_entry **order) {
    int c, i;
    for (c = j->nodes[root].child; c >= 0; c = j->nodes[c].next) {
        lt__st_entry *e = &st->t[st->n];
        lt_status s;
        if (c == meta) continue;
        e->name = j->pool + j->nodes[c].key;
        if ((s = lt__st_entry_read(ctx, label, j, c, e, dsize)) != LT_OK) return s;
        names[st->n].name = e->name;
        names[st->n].idx = st->n;
        order[st->n] = e;
        st->n++;
    }
    qsort(names, (size_t)st->n, sizeof *names, lt__st_cmp_name);
    for (i = 0; i < st->n; i++) {
        if (i && strcmp(names[i].name, names[i - 1].name) == 0)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: duplicate tensor name \"%.100s\"", label, names[i].name);
        st->by_name[i] = names[i].idx;
    }
    return LT_OK;
}

/* Step 4: the byte ranges must tile the data section: sorted, each starting where the last ended. */
static lt_status lt__st_check_tiling(lt_ctx *ctx, const char *label, lt__st_entry **order, int n, size_t dsize) {
    size_t expect = 0;
    int i;
    qsort(order, (size_t)n, sizeof *order, lt__st_cmp_range);
    for (i = 0; i < n; i++) {
        const lt__st_entry *e = order[i];
        if (e->begin < expect) {
            const lt__st_entry *p = order[i - 1];
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensors \"%.100s\" [%zu,%zu] and \"%.100s\" [%zu,%zu] overlap in data_offsets",
                                label, p->name, p->begin, p->end, e->name, e->begin, e->end);
        }
        if (e->begin > expect)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: hole in the data: bytes [%zu,%zu) belong to no tensor (before tensor \"%.100s\")",
                                label, expect, e->begin, e->name);
        expect = e->end;
    }
    if (expect != dsize)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: %zu trailing bytes after the last tensor's data (the data section is %zu bytes, "
                            "the tensors cover %zu)", label, dsize - expect, dsize, expect);
    return LT_OK;
}

/* Step 5: the metadata's key, value pairs into st->meta (keys must be unique). */
static lt_status lt__st_read_meta(lt_ctx *ctx, const char *label, const lt__json *j, int meta, lt_st *st) {
    int c, i;
    if (meta < 0) return LT_OK;
    for (c = j->nodes[meta].child; c >= 0; c = j->nodes[c].next) {
        const char *k = j->pool + j->nodes[c].key;
        for (i = 0; i < st->n_meta; i++)
            if (strcmp(st->meta[2 * i], k) == 0)
                return lt_set_error(ctx, LT_ERR_FORMAT, "%s: __metadata__ has the key \"%.100s\" twice", label, k);
        st->meta[2 * st->n_meta] = k;
        st->meta[2 * st->n_meta + 1] = j->pool + j->nodes[c].str;
        st->n_meta++;
    }
    return LT_OK;
}

/* Parses buf (size bytes, malloc'd; owned from here on, freed on failure): the header, its
   members, the tensor entries, their byte ranges, the metadata. */
static lt_st *lt__st_parse_owned(lt_ctx *ctx, unsigned char *buf, size_t size, const char *label) {
    lt__json j;
    lt_st *st = NULL;
    lt__st_name *names = NULL;
    lt__st_entry **order = NULL;
    uint64_t hlen = 0;
    size_t dsize;
    int root, n_ent = 0, n_meta = 0, meta = -1;
    memset(&j, 0, sizeof j);
    if (!label) label = "safetensors";
    root = lt__st_parse_header(ctx, buf, size, label, &j, &hlen);
    if (root < 0) goto fail;
    dsize = size - 8 - (size_t)hlen;
    if (lt__st_count_members(ctx, label, &j, root, &n_ent, &n_meta, &meta) != LT_OK) goto fail;
    st = (lt_st *)LT__MALLOC(sizeof(lt_st));
    if (!st) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", label); goto fail; }
    memset(st, 0, sizeof *st);
    st->t = (lt__st_entry *)LT__MALLOC((size_t)(n_ent ? n_ent : 1) * sizeof(lt__st_entry));
    st->by_name = (int *)LT__MALLOC((size_t)(n_ent ? n_ent : 1) * sizeof(int));
    st->meta = (const char **)LT__MALLOC((size_t)(n_meta ? n_meta : 1) * 2 * sizeof(char *));
    names = (lt__st_name *)LT__MALLOC((size_t)(n_ent ? n_ent : 1) * sizeof(lt__st_name));
    order = (lt__st_entry **)LT__MALLOC((size_t)(n_ent ? n_ent : 1) * sizeof(lt__st_entry *));
    if (!st->t || !st->by_name || !st->meta || !names || !order) {
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %d tensors", label, n_ent);
        goto fail;
    }
    if (lt__st_read_entries(ctx, label, &j, root, meta, dsize, st, names, order) != LT_OK ||
        lt__st_check_tiling(ctx, label, order, st->n, dsize) != LT_OK || lt__st_read_meta(ctx, label, &j, meta, st) != LT_OK)
        goto fail;
    st->ctx = ctx;
    snprintf(st->label, sizeof st->label, "%s", label);
    st->buf = buf;
    st->size = size;
    st->data = buf + 8 + hlen;
    st->pool = j.pool;
    LT__FREE(j.nodes);
    LT__FREE(names);
    LT__FREE(order);
    return st;
fail:
    LT__FREE(j.nodes);
    LT__FREE(j.pool);
    LT__FREE(names);
    LT__FREE(order);
    lt_st_close(st);
    LT__FREE(buf);
    return NULL;
}

LTRAIN_DEF lt_st *lt_st_parse(lt_ctx *ctx, const void *buf, size_t size, const char *label) {
    unsigned char *copy;
    if (!buf && size) { lt_set_error(ctx, LT_ERR_ARG, "lt_st_parse: buf is NULL"); return NULL; }
    copy = (unsigned char *)LT__MALLOC(size ? size : 1);
    if (!copy) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory copying %zu bytes", label ? label : "safetensors", size); return NULL; }
    if (size) memcpy(copy, buf, size);
    return lt__st_parse_owned(ctx, copy, size, label);
}

LTRAIN_DEF lt_st *lt_st_open(lt_ctx *ctx, const char *path) {
    void *buf;
    size_t size;
    if (!path) { lt_set_error(ctx, LT_ERR_ARG, "lt_st_open: path is NULL"); return NULL; }
    if (lt_read_file(ctx, path, &buf, &size) != LT_OK) return NULL;
    return lt__st_parse_owned(ctx, (unsigned char *)buf, size, path);
}

LTRAIN_DEF int lt_st_count(const lt_st *st) { return st ? st->n : 0; }

LTRAIN_DEF int lt_st_find(const lt_st *st, const char *name) {
    int lo = 0, hi;
    if (!st || !name) return -1;
    hi = st->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(st->t[st->by_name[mid]].name, name);
        if (c == 0) return st->by_name[mid];
        if (c < 0) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

LTRAIN_DEF const char *lt_st_name(const lt_st *st, int i) { return st && i >= 0 && i < st->n ? st->t[i].name : NULL; }
LTRAIN_DEF const char *lt_st_dtype(const lt_st *st, int i) {
    return st && i >= 0 && i < st->n ? lt__st_dtypes[st->t[i].dt].name : NULL;
}
LTRAIN_DEF int lt_st_shape(const lt_st *st, int i, int64_t *shape) {
    int k;
    if (!st || i < 0 || i >= st->n) return -1;
    if (shape) for (k = 0; k < st->t[i].ndim; k++) shape[k] = st->t[i].shape[k];
    return st->t[i].ndim;
}
/* The raw little-endian bytes, as stored (no alignment promised). */
LTRAIN_DEF const void *lt_st_data(const lt_st *st, int i, size_t *bytes) {
    if (!st || i < 0 || i >= st->n) { if (bytes) *bytes = 0; return NULL; }
    if (bytes) *bytes = st->t[i].end - st->t[i].begin;
    return st->data + st->t[i].begin;
}
LTRAIN_DEF const char *lt_st_meta(const lt_st *st, const char *key) {
    int i;
    if (!st || !key) return NULL;
    for (i = 0; i < st->n_meta; i++) if (strcmp(st->meta[2 * i], key) == 0) return st->meta[2 * i + 1];
    return NULL;
}
LTRAIN_DEF const char *lt_st_meta_key(const lt_st *st, int i) {
    return st && i >= 0 && i < st->n_meta ? st->meta[2 * i] : NULL;
}

/* IEEE binary16 -> binary32, exact: sign, 5-bit exponent (bias 15), 10-bit mantissa. */
static float lt__half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu, bits;
    float f;
    if (e == 0x1F) bits = sign | 0x7F800000u | (m << 13);        /* inf, NaN (payload kept) */
    else if (e) bits = sign | ((e + 112) << 23) | (m << 13);     /* rebias 15 -> 127 */
    else {                                                       /* zero, subnormal m * 2^-24 */
        f = (float)m * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    memcpy(&f, &bits, 4);
    return f;
}
/* bfloat16 is the top half of a binary32. */
static float lt__bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
/* double -> float rounded to nearest even, as a C cast, but without the undefined behaviour of
   casting a finite value past FLT_MAX: those round to FLT_MAX or to infinity (from 2^128 - 2^103). */
static float lt__f64_to_float(double d) {
    double lim = ldexp(1.0, 128) - ldexp(1.0, 103);
    if (d >= lim) return (float)HUGE_VAL;
    if (d <= -lim) return -(float)HUGE_VAL;
    if (d > FLT_MAX) return FLT_MAX;
    if (d < -FLT_MAX) return -FLT_MAX;
    return (float)d;
}

LTRAIN_DEF lt_status lt_st_read_f32(lt_st *st, int i, float *out, int64_t n) {
    const lt__st_entry *e;
    const unsigned char *p;
    size_t numel, k;
    if (!st) return LT_ERR_ARG;
    if (i < 0 || i >= st->n) return lt_set_error(st->ctx, LT_ERR_ARG, "lt_st_read_f32: index %d out of range [0,%d)", i, st->n);
    e = &st->t[i];
    numel = (e->end - e->begin) / lt__st_dtypes[e->dt].size;
    if (n < 0 || (uint64_t)n != (uint64_t)numel) {
        char sh[96];
        lt__st_shape_str(sh, sizeof sh, e->shape, e->ndim);
        return lt_set_error(st->ctx, LT_ERR_SHAPE, "lt_st_read_f32: %s: tensor \"%.100s\" has shape %s (%zu values) but n is %lld",
                            st->label, e->name, sh, numel, (long long)n);
    }
    if (!out && numel) return lt_set_error(st->ctx, LT_ERR_ARG, "lt_st_read_f32: out is NULL");
    p = st->data + e->begin;
    switch (e->dt) {
    case LT__ST_F64: for (k = 0; k < numel; k++) { uint64_t u = lt__rd64(p + 8 * k); double d; memcpy(&d, &u, 8); out[k] = lt__f64_to_float(d); } break;
    case LT__ST_F32: for (k = 0; k < numel; k++) { uint32_t u = lt__rd32(p + 4 * k); memcpy(&out[k], &u, 4); } break;
    case LT__ST_F16: for (k = 0; k < numel; k++) out[k] = lt__half_to_float(lt__rd16(p + 2 * k)); break;
    case LT__ST_BF16: for (k = 0; k < numel; k++) out[k] = lt__bf16_to_float(lt__rd16(p + 2 * k)); break;
    default:
        return lt_set_error(st->ctx, LT_ERR_ARG, "lt_st_read_f32: %s: tensor \"%.100s\" is %s; only F32, F16, BF16 and F64 "
                            "convert to float", st->label, e->name, lt__st_dtypes[e->dt].name);
    }
    return LT_OK;
}

/* -- @@CKPT.write  writing ---------------------------------------------------------------------- */
typedef struct {
    char *name;
    int dt, ndim;
    int64_t shape[LT__ST_MAX_DIMS];
    const void *data;
    size_t bytes;
} lt__stw_tensor;

struct lt_st_writer {
    lt_ctx *ctx;
    lt__stw_tensor *t;
    int n, cap;
    char **meta;       /* key, value pairs (owned) */
    int n_meta, cap_meta;
    int failed;        /* an add failed: saving would silently drop a tensor */
};

LTRAIN_DEF lt_st_writer *lt_st_writer_create(lt_ctx *ctx) {
    lt_st_writer *w;
    if (!ctx) return NULL;
    w = (lt_st_writer *)LT__MALLOC(sizeof(lt_st_writer));
    if (!w) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_st_writer_create: out of memory"); return NULL; }
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    return w;
}

LTRAIN_DEF void lt_st_writer_destroy(lt_st_writer *w) {
    int i;
    if (!w) return;
    for (i = 0; i < w->n; i++) LT__FREE(w->t[i].name);
    for (i = 0; i < 2 * w->n_meta; i++) LT__FREE(w->meta[i]);
    LT__FREE(w->t);
    LT__FREE(w->meta);
    LT__FREE(w);
}

static int lt__utf8_valid(const char *s) {
    size_t n = strlen(s);
    return lt__utf8_bad_at((const unsigned char *)s, n) == n;
}

LTRAIN_DEF size_t lt_utf8_escape(char *out, size_t cap, const char *in) {
    size_t i = 0, n, o = 0;
    if (!out || cap == 0) return 0;
    n = in ? strlen(in) : 0;
    while (i < n) {
        int k = lt__utf8_next((const unsigned char *)in + i, n - i, NULL);
        if (k) {
            if (o + (size_t)k >= cap) break;
            memcpy(out + o, in + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
        } else {
            if (o + 4 >= cap) break;
            snprintf(out + o, 5, "\\x%02X", (unsigned char)in[i]);
            o += 4;
            i++;
        }
    }
    out[o] = 0;
    return o;
}

static lt_status lt__st_add(lt_st_writer *w, const char *name, const char *dtype, int ndim,
                            const int64_t *shape, const void *data) {
    lt__stw_tensor *x;
    size_t numel = 1, bytes;
    int dt, k;
    if (!name || !dtype || (ndim > 0 && !shape))
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: name, dtype and shape must not be NULL");
    if (!lt__utf8_valid(name) || strcmp(name, "__metadata__") == 0)
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: \"%.100s\" is not a valid tensor name (UTF-8, not __metadata__)", name);
    dt = lt__st_dtype_index(dtype);
    if (dt < 0)
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": unknown dtype \"%.20s\"", name, dtype);
    if (ndim < 0 || ndim > LT__ST_MAX_DIMS)
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": ndim %d must be in [0,%d]", name, ndim, LT__ST_MAX_DIMS);
    for (k = 0; k < ndim; k++) {
        if (shape[k] < 0)
            return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": shape[%d] is %lld", name, k, (long long)shape[k]);
        if (shape[k] == 0) numel = 0;
    }
    for (k = 0; k < ndim && numel; k++)
        if ((uint64_t)shape[k] > (uint64_t)SIZE_MAX || !lt_mul_size(numel, (size_t)shape[k], &numel))
            return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": the shape's product overflows", name);
    if (!lt_mul_size(numel, lt__st_dtypes[dt].size, &bytes))
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": too many bytes", name);
    if (!data && bytes) return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": data is NULL", name);
    for (k = 0; k < w->n; k++)
        if (strcmp(w->t[k].name, name) == 0)
            return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: duplicate tensor name \"%.100s\"", name);
    if (w->n == w->cap) {
        int ncap = w->cap ? 2 * w->cap : 16;
        lt__stw_tensor *p = w->cap > INT_MAX / 2 ? NULL : (lt__stw_tensor *)LT__REALLOC(w->t, (size_t)ncap * sizeof *p);
        if (!p) return lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_add: out of memory");
        w->t = p; w->cap = ncap;
    }
    x = &w->t[w->n];
    if (!(x->name = lt__strdup(name))) return lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_add: out of memory");
    x->dt = dt; x->ndim = ndim; x->data = data; x->bytes = bytes;
    for (k = 0; k < ndim; k++) x->shape[k] = shape[k];
    w->n++;
    return LT_OK;
}
LTRAIN_DEF lt_status lt_st_add(lt_st_writer *w, const char *name, const char *dtype, int ndim,
                               const int64_t *shape, const void *data) {
    lt_status s;
    if (!w) return LT_ERR_ARG;
    s = lt__st_add(w, name, dtype, ndim, shape, data);
    if (s != LT_OK) w->failed = 1;
    return s;
}

/* A key that is set again replaces its value. */
LTRAIN_DEF lt_status lt_st_add_meta(lt_st_writer *w, const char *key, const char *value) {
    char *v;
    int i;
    if (!w) return LT_ERR_ARG;
    if (!key || !value || !lt__utf8_valid(key) || !lt__utf8_valid(value)) {
        w->failed = 1;
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add_meta: key and value must be UTF-8 strings (not NULL)");
    }
    if (!(v = lt__strdup(value))) goto oom;
    for (i = 0; i < w->n_meta; i++)
        if (strcmp(w->meta[2 * i], key) == 0) { LT__FREE(w->meta[2 * i + 1]); w->meta[2 * i + 1] = v; return LT_OK; }
    if (w->n_meta == w->cap_meta) {
        int ncap = w->cap_meta ? 2 * w->cap_meta : 8;
        char **p = w->cap_meta > INT_MAX / 4 ? NULL : (char **)LT__REALLOC(w->meta, (size_t)ncap * 2 * sizeof(char *));
        if (!p) { LT__FREE(v); goto oom; }
        w->meta = p; w->cap_meta = ncap;
    }
    if (!(w->meta[2 * w->n_meta] = lt__strdup(key))) { LT__FREE(v); goto oom; }
    w->meta[2 * w->n_meta + 1] = v;
    w->n_meta++;
    return LT_OK;
oom:
    w->failed = 1;
    return lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_add_meta: out of memory");
}

/* A growing string for the header. */
typedef struct { char *p; size_t len, cap; int oom; } lt__sbuf;
static void lt__sb_put(lt__sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (n > b->cap - b->len) {
        size_t ncap = b->cap ? b->cap : 256;
        char *p;
        while (ncap - b->len < n) if (!lt_mul_size(ncap, 2, &ncap)) { b->oom = 1; return; }
        if (!(p = (char *)LT__REALLOC(b->p, ncap))) { b->oom = 1; return; }
        b->p = p; b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}
static void lt__sb_str(lt__sbuf *b, const char *s) { lt__sb_put(b, s, strlen(s)); }
static void lt__sb_json(lt__sbuf *b, const char *s) { /* a JSON string literal */
    lt__sb_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = (char)c; lt__sb_put(b, esc, 2); }
        else if (c < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", c); lt__sb_put(b, esc, 6); }
        else lt__sb_put(b, s, 1);
    }
    lt__sb_put(b, "\"", 1);
}

static int lt__host_big_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* The tensor's bytes, little-endian whatever the host. */
static int lt__st_write_data(FILE *f, const lt__stw_tensor *x) {
    size_t es = lt__st_dtypes[x->dt].size, k, i;
    const unsigned char *p = (const unsigned char *)x->data;
    unsigned char tmp[4096];
    if (!x->bytes) return 1;
    if (es == 1 || !lt__host_big_endian()) return fwrite(p, 1, x->bytes, f) == x->bytes;
    for (k = 0; k < x->bytes;) {
        size_t m = x->bytes - k < sizeof tmp ? x->bytes - k : sizeof tmp;
        for (i = 0; i < m; i++) tmp[i] = p[k + (i / es) * es + (es - 1 - i % es)];
        if (fwrite(tmp, 1, m, f) != m) return 0;
        k += m;
    }
    return 1;
}

/* Where a writer may put its file (lt_dest_check).  Returns 1 with *target (LT__MALLOC'd) the path
   to write: path itself, or the regular file a symbolic link at path points to (the target is
   written, the link stays); else 0 with why (cap bytes) saying what path is (-1: out of memory).  A node is judged
   by lstat: a missing path or a regular file passes; LT_DEST_STREAM also passes character
   devices and FIFOs, which a stream writes into and never replaces. */
#if !defined(_WIN32)
#include <sys/stat.h>
#ifndef __cplusplus
extern int lstat(const char *, struct stat *);
extern char *realpath(const char *, char *);
#endif
#endif
static const char *lt__node_kind(unsigned mode) {
    return S_ISDIR(mode) ? "a directory" : S_ISCHR(mode) ? "a character device"
#if !defined(_WIN32)
         : S_ISBLK(mode) ? "a block device" : S_ISFIFO(mode) ? "a FIFO (named pipe)"
#endif
         : "a socket or other special file";
}
static int lt__dest(const char *path, lt_dest_mode mode, char **target, char *why, size_t cap) {
    struct stat s;
    const char *use = path;
    char *real = NULL;
    size_t n;
    *target = NULL;
    if (!path || !path[0]) { snprintf(why, cap, "no path given"); return 0; }
#if defined(_WIN32)
    if (stat(path, &s) == 0 && !S_ISREG(s.st_mode) && !(mode == LT_DEST_STREAM && S_ISCHR(s.st_mode))) {
        snprintf(why, cap, "\"%.300s\" is %s, not a regular file", path, lt__node_kind((unsigned)s.st_mode));
        return 0;
    }
#else
    if (lstat(path, &s) == 0) {
        if (S_ISLNK(s.st_mode)) {   /* follow it: the file it names is written, the link stays (a stream
                                       opens the link itself: /dev/stdout may name a pipe, which has no path) */
            if (stat(path, &s) != 0 || (mode == LT_DEST_REPLACE && !(real = realpath(path, NULL)))) {
                snprintf(why, cap, "\"%.300s\" is a symbolic link to a missing file (create the target, or give "
                         "the target's path)", path);
                free(real);
                return 0;
            }
            if (real) use = real;
        }
        if (!S_ISREG(s.st_mode) && !(mode == LT_DEST_STREAM && (S_ISCHR(s.st_mode) || S_ISFIFO(s.st_mode)))) {
            snprintf(why, cap, "\"%.300s\"%s%.300s%s is %s, not a regular file%s", path, real ? " (a symbolic link to \"" : "",
                     real ? real : "", real ? "\")" : "", lt__node_kind((unsigned)s.st_mode),
                     mode == LT_DEST_REPLACE && !S_ISDIR(s.st_mode) ? ": a save writes a new file and renames it over "
                                               "the path, which would replace it; give a file's path" : "");
            free(real);
            return 0;
        }
    }
#endif
    n = strlen(use);
    *target = (char *)LT__MALLOC(n + 1);
    if (*target) memcpy(*target, use, n + 1);
    else snprintf(why, cap, "\"%.300s\": out of memory", path);
    free(real);   /* realpath's memory comes from malloc, not LT__MALLOC */
    return *target ? 1 : -1;
}

LTRAIN_DEF lt_status lt_dest_check(lt_ctx *ctx, const char *path, lt_dest_mode mode) {
    char why[900], *target;
    int d = lt__dest(path, mode, &target, why, sizeof why);
    if (d <= 0) return lt_set_error(ctx, d < 0 ? LT_ERR_NOMEM : LT_ERR_ARG, "%s", why);
    LT__FREE(target);
    return LT_OK;
}

LTRAIN_DEF lt_status lt_st_save(lt_st_writer *w, const char *path) {
    lt__sbuf h;
    char num[96], *tmp = NULL, *target = NULL;
    unsigned char len8[8];
    size_t off = 0, plen;
    FILE *f = NULL;
    int i, k, err = 0;
    lt_status s;
    lt_rng r;
    if (!w) return LT_ERR_ARG;
    if (!path) return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_save: path is NULL");
    if (w->failed)
        return lt_set_error(w->ctx, LT_ERR_STATE, "lt_st_save: %s: not written because an earlier lt_st_add or "
                            "lt_st_add_meta on this writer failed", path);
    {   /* a device, FIFO, directory..: refused; a symbolic link: its target is written */
        char why[900];
        int d = lt__dest(path, LT_DEST_REPLACE, &target, why, sizeof why);
        if (d <= 0) return lt_set_error(w->ctx, d < 0 ? LT_ERR_NOMEM : LT_ERR_ARG, "lt_st_save: %s", why);
        path = target;
    }
    memset(&h, 0, sizeof h);
    /* {"__metadata__":{...},"name":{"dtype":"F32","shape":[..],"data_offsets":[b,e]},...} */
    lt__sb_str(&h, "{");
    if (w->n_meta) {
        lt__sb_str(&h, "\"__metadata__\":{");
        for (i = 0; i < w->n_meta; i++) {
            if (i) lt__sb_str(&h, ",");
            lt__sb_json(&h, w->meta[2 * i]);
            lt__sb_str(&h, ":");
            lt__sb_json(&h, w->meta[2 * i + 1]);
        }
        lt__sb_str(&h, "}");
    }
    for (i = 0; i < w->n; i++) {
        const lt__stw_tensor *x = &w->t[i];
        if (i || w->n_meta) lt__sb_str(&h, ",");
        lt__sb_json(&h, x->name);
        lt__sb_str(&h, ":{\"dtype\":\"");
        lt__sb_str(&h, lt__st_dtypes[x->dt].name);
        lt__sb_str(&h, "\",\"shape\":[");
        for (k = 0; k < x->ndim; k++) {
            snprintf(num, sizeof num, k ? ",%lld" : "%lld", (long long)x->shape[k]);
            lt__sb_str(&h, num);
        }
        if (!lt_add_size(off, x->bytes, &plen)) { h.oom = 1; break; }
        snprintf(num, sizeof num, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)plen);
        lt__sb_str(&h, num);
        off = plen;
    }
    lt__sb_str(&h, "}");
    while (!h.oom && h.len % 8) lt__sb_str(&h, " "); /* the data then starts 8-byte aligned (oom: no progress) */
    if (h.oom) {
        s = lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_save: %s: out of memory for the header", path);
        LT__FREE(h.p);
        LT__FREE(target);
        return s;
    }
    if (h.len > LT__ST_MAX_HEADER) {   /* lt_st_open would refuse the file */
        s = lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_save: %s: the header would be %zu bytes, over the %u a reader "
                         "accepts (too many tensors or too much metadata)", path, h.len, LT__ST_MAX_HEADER);
        LT__FREE(h.p);
        LT__FREE(target);
        return s;
    }
    for (k = 0; k < 8; k++) len8[k] = (unsigned char)((uint64_t)h.len >> (8 * k));

    /* a name no other writer is likely to pick at the same moment */
    lt_rng_seed(&r, (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)w << 20) ^ (uint64_t)clock());
    plen = strlen(path);
    tmp = (char *)LT__MALLOC(plen + 32);
    if (!tmp) {
        s = lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_save: %s: out of memory", path);
        LT__FREE(h.p);
        LT__FREE(target);
        return s;
    }
    snprintf(tmp, plen + 32, "%s.tmp%08lx", path, (unsigned long)(lt_rng_u64(&r) & 0xFFFFFFFFu));

    f = fopen(tmp, "wb");
    if (!f) { err = errno; goto io; }
    if (fwrite(len8, 1, 8, f) != 8 || fwrite(h.p, 1, h.len, f) != h.len) { err = errno; goto io; }
    for (i = 0; i < w->n; i++)
        if (!lt__st_write_data(f, &w->t[i])) { err = errno; goto io; }
    if (fflush(f) != 0 || LT__FSYNC(f) != 0) { err = errno; goto io; }
    k = fclose(f);
    f = NULL;
    if (k != 0) { err = errno; goto io; }
    if (rename(tmp, path) != 0) {
        err = errno;
#if defined(_WIN32)
        /* Windows will not rename over an existing file */
        if (remove(path) == 0 && rename(tmp, path) == 0) err = 0;
        else err = errno;
#endif
        if (err) goto io;
    }
#if !defined(_WIN32)
    if (lt__fsync_dir(tmp, path) != 0) {   /* the file is in place, but perhaps not durably */
        err = errno;
        LT__FREE(h.p);
        LT__FREE(tmp);
        s = lt_set_error(w->ctx, LT_ERR_IO, "lt_st_save: \"%s\" written, but syncing its directory failed: %s",
                         path, strerror(err));
        LT__FREE(target);
        return s;
    }
#endif
    LT__FREE(h.p);
    LT__FREE(tmp);
    LT__FREE(target);
    return LT_OK;
io:
    if (f) fclose(f);
    remove(tmp);
    LT__FREE(h.p);
    LT__FREE(tmp);
    s = lt_set_error(w->ctx, LT_ERR_IO, "lt_st_save: cannot write \"%s\": %s", path, err ? strerror(err) : "write failed");
    LT__FREE(target);
    return s;
}


/* -- @@CKPT.config  config.json: Hugging Face model settings, read leniently; text written atomically */
/* A config.json holds floats, true/false/null, nested objects and arrays, which the safetensors
   header parser above refuses.  This reader keeps the scalars: each member of the top object (and,
   dotted, of objects inside it: "rope_parameters.rope_theta") as text with its kind; arrays are
   checked and skipped.  Anything that is not JSON is an error with the byte offset. */
typedef struct { char key[80], val[80]; char kind; } lt__hfitem;   /* kind: s(tring) n(umber) b(ool) z(null) o a */
typedef struct {
    const char *s;
    size_t len, pos;
    lt__hfitem *it;
    int n, cap;
    char err[96];
} lt__hfcfg;

static void lt__hf_ws(lt__hfcfg *c) {
    while (c->pos < c->len && strchr(" \t\r\n", c->s[c->pos]) && c->s[c->pos]) c->pos++;
}
static int lt__hf_fail(lt__hfcfg *c, const char *what) {
    if (!c->err[0]) snprintf(c->err, sizeof c->err, "%s at byte %zu", what, c->pos);
    return 0;
}
static int lt__hf_push(lt__hfcfg *c, const char *key, const char *val, size_t n, char kind) {
    lt__hfitem *x;
    if (!key) return 1;
    if (c->n == c->cap) {
        int ncap = c->cap ? 2 * c->cap : 32;
        lt__hfitem *p = c->cap > 4096 ? NULL : (lt__hfitem *)LT__REALLOC(c->it, (size_t)ncap * sizeof *p);
        if (!p) return lt__hf_fail(c, "out of memory (or too many settings)");
        c->it = p; c->cap = ncap;
    }
    x = &c->it[c->n++];
    snprintf(x->key, sizeof x->key, "%s", key);
    if (n >= sizeof x->val) n = sizeof x->val - 1;
    memcpy(x->val, val, n);
    x->val[n] = 0;
    x->kind = kind;
    return 1;
}
/* A string at pos (the quote) into out (escapes kept as written but for \" and \\). */
static int lt__hf_str(lt__hfcfg *c, char *out, size_t cap) {
    size_t k = 0;
    c->pos++;
    while (c->pos < c->len && c->s[c->pos] != '"') {
        char ch = c->s[c->pos];
        if ((unsigned char)ch < 0x20) return lt__hf_fail(c, "control character in a string");
        if (ch == '\\') {
            if (++c->pos >= c->len) break;
            ch = c->s[c->pos];
        }
        if (k + 1 < cap) out[k++] = ch;
        c->pos++;
    }
    if (c->pos >= c->len) return lt__hf_fail(c, "unterminated string");
    c->pos++;
    if (cap) out[k < cap ? k : cap - 1] = 0;
    return 1;
}
static int lt__hf_value(lt__hfcfg *c, const char *key, int depth) {
    char ch, sub[80], str[80];
    size_t start;
    lt__hf_ws(c);
    if (depth > 32) return lt__hf_fail(c, "nested too deeply");
    if (c->pos >= c->len) return lt__hf_fail(c, "unexpected end");
    ch = c->s[c->pos];
    start = c->pos;
    if (ch == '{' || ch == '[') {
        int first = 1;
        c->pos++;
        for (;;) {
            lt__hf_ws(c);
            if (c->pos < c->len && c->s[c->pos] == (ch == '{' ? '}' : ']')) { c->pos++; break; }
            if (!first) {
                if (c->pos >= c->len || c->s[c->pos] != ',') return lt__hf_fail(c, "expected ',' or a closing bracket");
                c->pos++;
                lt__hf_ws(c);
            }
            first = 0;
            if (ch == '[') { if (!lt__hf_value(c, NULL, depth + 1)) return 0; continue; }
            if (c->pos >= c->len || c->s[c->pos] != '"') return lt__hf_fail(c, "expected a string key");
            if (!lt__hf_str(c, str, sizeof str)) return 0;
            lt__hf_ws(c);
            if (c->pos >= c->len || c->s[c->pos] != ':') return lt__hf_fail(c, "expected ':'");
            c->pos++;
            if (key && strlen(key) + strlen(str) + 2 <= sizeof sub) {   /* "key.str" */
                size_t kl = strlen(key);
                memcpy(sub, key, kl);
                sub[kl] = '.';
                memcpy(sub + kl + 1, str, strlen(str) + 1);
            } else memcpy(sub, str, strlen(str) + 1);
            if (!lt__hf_value(c, depth == 0 || key ? sub : NULL, depth + 1)) return 0;
        }
        return lt__hf_push(c, key, "", 0, ch == '{' ? 'o' : 'a');
    }
    if (ch == '"') return lt__hf_str(c, str, sizeof str) && lt__hf_push(c, key, str, strlen(str), 's');
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        while (c->pos < c->len && strchr("+-0123456789.eE", c->s[c->pos]) && c->s[c->pos]) c->pos++;
        return lt__hf_push(c, key, c->s + start, c->pos - start, 'n');
    }
    if (c->len - c->pos >= 4 && (!strncmp(c->s + c->pos, "true", 4) || !strncmp(c->s + c->pos, "null", 4))) {
        c->pos += 4;
        return lt__hf_push(c, key, c->s + start, 4, ch == 'n' ? 'z' : 'b');
    }
    if (c->len - c->pos >= 5 && !strncmp(c->s + c->pos, "false", 5)) {
        c->pos += 5;
        return lt__hf_push(c, key, c->s + start, 5, 'b');
    }
    return lt__hf_fail(c, "not a JSON value");
}
/* Parse text (len bytes) into c (zeroed by the caller; lt__hf_free after).  1, or 0 with c->err. */
static int lt__hf_parse(lt__hfcfg *c, const char *text, size_t len) {
    c->s = text; c->len = len; c->pos = 0;
    lt__hf_ws(c);
    if (c->pos >= len || text[c->pos] != '{') return lt__hf_fail(c, "expected a JSON object");
    if (!lt__hf_value(c, NULL, 0)) return 0;
    lt__hf_ws(c);
    return c->pos == len ? 1 : lt__hf_fail(c, "text after the object");
}
static void lt__hf_free(lt__hfcfg *c) { LT__FREE(c->it); c->it = NULL; c->n = c->cap = 0; }
static const lt__hfitem *lt__hf_find(const lt__hfcfg *c, const char *key) {
    int i;
    for (i = c->n - 1; i >= 0; i--) if (strcmp(c->it[i].key, key) == 0) return &c->it[i];
    return NULL;
}

/* Write text to path through a temporary file, fsync and rename (as lt_st_save). */
static lt_status lt__write_text_atomic(lt_ctx *ctx, const char *path, const char *text) {
    size_t n = strlen(text), plen = strlen(path);
    char *tmp = (char *)LT__MALLOC(plen + 32);
    FILE *f;
    int err = 0;
    lt_rng r;   /* not the context's: saving must not change what training draws */
    if (!tmp) return lt_set_error(ctx, LT_ERR_NOMEM, "cannot write \"%s\": out of memory", path);
    lt_rng_seed(&r, (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)tmp << 20) ^ (uint64_t)clock());
    snprintf(tmp, plen + 32, "%s.tmp%08lx", path, (unsigned long)(lt_rng_u64(&r) & 0xFFFFFFFFu));
    f = fopen(tmp, "wb");
    if (!f || fwrite(text, 1, n, f) != n || fflush(f) != 0 || LT__FSYNC(f) != 0) err = errno ? errno : EIO;
    if (f && fclose(f) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) {
        err = errno;
#if defined(_WIN32)
        if (remove(path) == 0 && rename(tmp, path) == 0) err = 0;
#endif
    }
    if (err) remove(tmp);
    LT__FREE(tmp);
    return err ? lt_set_error(ctx, LT_ERR_IO, "cannot write \"%s\": %s", path, strerror(err)) : LT_OK;
}
/* ---- src/20_train.h ---- */
/* ==== @@TRAIN  training helpers: GPT checkpoints, training state ================================ */
/* Holds: GPT checkpoints under Hugging Face names; the training state (optimizer moments,
   scaler, step) saved next to the weights and loaded back.
   Calls: @@CORE, @@TENSOR, @@NN, @@OPTIM, @@AMP, @@CKPT; the device through ctx->dev. */

/* ---- @@TRAIN.hf  Hugging Face model directories: config.json, Llama checkpoints ---------------- */
/* A path names a safetensors file or a directory holding model.safetensors (save_pretrained's);
   the config.json read and written is the one in that directory / beside the file.  Our files
   carry the same JSON in their metadata ("ltrain_config"), which wins over a config.json beside
   them (several checkpoints may share a directory). */
#include <sys/stat.h>
#if defined(_WIN32) && !defined(S_ISDIR)
#define S_ISDIR(m) (((m) & S_IFMT) == S_IFDIR)
#endif
#if defined(_WIN32)
#include <direct.h>
#define LT__MKDIR(p) _mkdir(p)
#else
#define LT__MKDIR(p) mkdir(p, 0777)
#endif
#define LT__PATH_MAX 4200
static int lt__is_dir(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}
/* stp = the safetensors file of path, cfgp = its config.json; 0 if path is too long. */
static int lt__hf_paths(const char *path, char *stp, char *cfgp) {
    const char *slash = strrchr(path, '/');
    size_t n = strlen(path);
    if (n + 24 >= LT__PATH_MAX) return 0;
    if ((n > 0 && path[n - 1] == '/') || lt__is_dir(path)) {
        int sep = n > 0 && path[n - 1] != '/';
        snprintf(stp, LT__PATH_MAX, "%s%smodel.safetensors", path, sep ? "/" : "");
        snprintf(cfgp, LT__PATH_MAX, "%s%sconfig.json", path, sep ? "/" : "");
    } else {
        snprintf(stp, LT__PATH_MAX, "%s", path);
        snprintf(cfgp, LT__PATH_MAX, "%.*sconfig.json", slash ? (int)(slash - path + 1) : 0, path);
    }
    return 1;
}
static int lt__file_exists(const char *p) {
    FILE *f = fopen(p, "rb");
    if (f) fclose(f);
    return f != NULL && !lt__is_dir(p);
}

/* The model's settings as JSON from st's "ltrain_config" metadata, else from cfgp when it exists.
   1: read into hc (src names where from), 0: neither is there, -1: an error on ctx. */
static int lt__hf_load_config(lt_ctx *ctx, lt_st *st, const char *stp, const char *cfgp, lt__hfcfg *hc, char *src) {
    const char *meta = lt_st_meta(st, "ltrain_config");
    void *buf = NULL;
    size_t size = 0;
    int ok;
    memset(hc, 0, sizeof *hc);
    if (meta) {
        snprintf(src, LT__PATH_MAX, "%.4000s (metadata ltrain_config)", stp);
        ok = lt__hf_parse(hc, meta, strlen(meta));
    } else {
        if (!lt__file_exists(cfgp)) return 0;
        if (lt_read_file(ctx, cfgp, &buf, &size) != LT_OK) return -1;
        memcpy(src, cfgp, strlen(cfgp) + 1);   /* < LT__PATH_MAX (lt__hf_paths) */
        ok = lt__hf_parse(hc, (const char *)buf, size);
        LT__FREE(buf);
    }
    if (!ok) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: not valid JSON: %s", src, hc->err);
        lt__hf_free(hc);
        return -1;
    }
    return 1;
}

/* Setting key of hc as a whole number (*v kept when absent): 1 found, 0 absent, -1 error on ctx. */
static int lt__hf_int(lt_ctx *ctx, const lt__hfcfg *hc, const char *src, const char *key, int *v) {
    const lt__hfitem *x = hc ? lt__hf_find(hc, key) : NULL;
    char *end;
    long n;
    if (!x || x->kind == 'z') return 0;
    n = x->kind == 'n' ? strtol(x->val, &end, 10) : 0;
    if (x->kind != 'n' || *end || n < 0 || n > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %s is %s: it must be a whole number", src, key, x->kind == 's' ? "a string" : x->val);
        return -1;
    }
    *v = (int)n;
    return 1;
}
static int lt__hf_real(lt_ctx *ctx, const lt__hfcfg *hc, const char *src, const char *key, float *v) {
    const lt__hfitem *x = hc ? lt__hf_find(hc, key) : NULL;
    char *end;
    double d;
    if (!x || x->kind == 'z') return 0;
    d = x->kind == 'n' ? strtod(x->val, &end) : -1;
    if (x->kind != 'n' || *end || !(d >= 0 && d < 1e30)) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %s is %s: it must be a number >= 0", src, key, x->kind == 's' ? "a string" : x->val);
        return -1;
    }
    *v = (float)d;
    return 1;
}
static int lt__hf_bool(lt_ctx *ctx, const lt__hfcfg *hc, const char *src, const char *key, int *v) {
    const lt__hfitem *x = hc ? lt__hf_find(hc, key) : NULL;
    if (!x || x->kind == 'z') return 0;
    if (x->kind != 'b') {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %s is %s: it must be true or false", src, key, x->val);
        return -1;
    }
    *v = x->val[0] == 't';
    return 1;
}
/* A setting that the tensors also tell: both must agree (absent: fine). */
static int lt__hf_agree(lt_ctx *ctx, const lt__hfcfg *hc, const char *src, const char *key, int have, const char *path) {
    int v = have, r = lt__hf_int(ctx, hc, src, key, &v);
    if (r < 0) return 0;
    if (v != have) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %s is %d but the tensors of %s say %d", src, key, v, path, have);
        return 0;
    }
    return 1;
}

/* A float for JSON: shortest %g that reads back the same float, with '.' whatever the locale. */
static void lt__json_float(char *b, size_t cap, float v) {
    int prec;
    char *p;
    for (prec = 6; prec < 10; prec++) {
        snprintf(b, cap, "%.*g", prec, (double)v);
        for (p = b; *p; p++) if (*p == ',') *p = '.';
        if ((float)strtod(b, NULL) == v) break;
    }
    if (!strpbrk(b, ".eEn")) { size_t n = strlen(b); if (n + 3 < cap) memcpy(b + n, ".0", 3); }
}

/* config.json of c (the model's resolved config) into b: GPT2LMHeadModel, LlamaForCausalLM, or
   Qwen3ForCausalLM when qk_norm is on (Llama has no q_norm / k_norm). */
static void lt__gpt_config_json(const lt_gpt_config *c, char *b, size_t cap) {
    char eps[32], th[32], dr[32];
    lt__json_float(eps, sizeof eps, c->norm_eps);
    lt__json_float(th, sizeof th, c->rope_theta);
    lt__json_float(dr, sizeof dr, c->dropout);
    if (c->arch == LT_ARCH_GPT2) {
        snprintf(b, cap, "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n"
                 "  \"vocab_size\": %d,\n  \"n_positions\": %d,\n  \"n_ctx\": %d,\n  \"n_embd\": %d,\n  \"n_layer\": %d,\n"
                 "  \"n_head\": %d,\n  \"n_inner\": %d,\n  \"activation_function\": \"gelu_new\",\n"
                 "  \"layer_norm_epsilon\": %s,\n  \"embd_pdrop\": %s,\n  \"resid_pdrop\": %s,\n  \"attn_pdrop\": 0.0,\n"
                 "  \"initializer_range\": 0.02,\n  \"tie_word_embeddings\": true,\n  \"torch_dtype\": \"float32\"\n}\n",
                 c->vocab, c->ctx, c->ctx, c->channels, c->layers, c->heads, c->hidden, eps, dr, dr);
        return;
    }
    snprintf(b, cap, "{\n  \"architectures\": [\"%s\"],\n  \"model_type\": \"%s\",\n"
             "  \"vocab_size\": %d,\n  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n  \"num_hidden_layers\": %d,\n"
             "  \"num_attention_heads\": %d,\n  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n"
             "  \"hidden_act\": \"silu\",\n  \"max_position_embeddings\": %d,\n  \"rms_norm_eps\": %s,\n"
             "  \"rope_theta\": %s,\n  \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": %s},\n"
             "  \"tie_word_embeddings\": %s,\n  \"attention_bias\": %s,\n  \"mlp_bias\": %s,\n"
             "  \"attention_dropout\": 0.0,\n  \"initializer_range\": 0.02,\n  \"use_sliding_window\": false,\n"
             "  \"torch_dtype\": \"float32\"\n}\n",
             c->qk_norm ? "Qwen3ForCausalLM" : "LlamaForCausalLM", c->qk_norm ? "qwen3" : "llama", c->vocab, c->channels,
             c->hidden, c->layers, c->heads, c->kv_heads, c->channels / c->heads, c->ctx, eps, th, th,
             c->untied ? "false" : "true", c->no_bias == -1 ? "true" : "false", c->no_bias == -1 ? "true" : "false");
}

/* A Llama tensor's shape [d0] or [d0,d1] from st (-1 entries when absent). */
static int lt__st_dims(const lt_st *st, const char *name, int64_t *d0, int64_t *d1) {
    int64_t sh[8];
    int i = lt_st_find(st, name), nd;
    *d0 = *d1 = -1;
    if (i < 0) return 0;
    nd = lt_st_shape(st, i, sh);
    if (nd >= 1) *d0 = sh[0];
    if (nd == 2) *d1 = sh[1];
    return nd;
}

/* What the tensors of a Llama file say: V, C, L, Q and KV rows, the MLP's hidden, biases,
   qk-norm, an untied head.  0 with an error when the file's shapes are not a Llama model. */
static int lt__llama_shapes(lt_ctx *ctx, const lt_st *st, const char *path, lt_gpt_config *c, int64_t *q, int64_t *kv) {
    int64_t v, ch, x, y, f;
    int l;
    if (lt__st_dims(st, "model.embed_tokens.weight", &v, &ch) != 2 || v < 1 || ch < 1 || v > INT_MAX || ch > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: model.embed_tokens.weight must be [vocab, hidden_size]", path);
        return 0;
    }
    for (l = 0; l < 100000; l++) {
        char name[64];
        snprintf(name, sizeof name, "model.layers.%d.input_layernorm.weight", l);
        if (lt_st_find(st, name) < 0) break;
    }
    lt__st_dims(st, "model.layers.0.self_attn.q_proj.weight", q, &x);
    lt__st_dims(st, "model.layers.0.self_attn.k_proj.weight", kv, &y);
    lt__st_dims(st, "model.layers.0.mlp.gate_proj.weight", &f, &x);
    if (l < 1 || *q < 1 || *kv < 1 || f < 1 || f > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %d layers, model.layers.0's q_proj, k_proj or mlp.gate_proj missing: not "
                     "a Llama checkpoint", path, l);
        return 0;
    }
    c->vocab = (int)v; c->channels = (int)ch; c->layers = l; c->hidden = (int)f;
    c->arch = LT_ARCH_LLAMA;
    c->untied = lt_st_find(st, "lm_head.weight") >= 0;
    c->qk_norm = lt_st_find(st, "model.layers.0.self_attn.q_norm.weight") >= 0;
    c->no_bias = lt_st_find(st, "model.layers.0.self_attn.q_proj.bias") >= 0 ? -1 : 1;
    return 1;
}

/* A Llama model's config: shapes from the tensors, heads, RoPE theta, eps and context from the
   JSON (hc, from src; NULL when there is none: then n_head must be given), the two checked
   against each other.  0 with an error on ctx. */
static int lt__llama_config(lt_ctx *ctx, const lt_st *st, const char *path, const lt__hfcfg *hc, const char *src,
                            int n_head, lt_gpt_config *c) {
    int64_t q, kv;
    int kvh, hd = 0, ab = 0, mb = 0, tie = -1, ok = 1, l;
    const lt__hfitem *mt = hc ? lt__hf_find(hc, "model_type") : NULL, *act = hc ? lt__hf_find(hc, "hidden_act") : NULL;
    const lt__hfitem *rt = hc ? lt__hf_find(hc, "rope_parameters.rope_type") : NULL;
    const lt__hfitem *rs = hc ? lt__hf_find(hc, "rope_scaling") : NULL;
    memset(c, 0, sizeof *c);
    if (!lt__llama_shapes(ctx, st, path, c, &q, &kv)) return 0;
    c->heads = n_head;
    c->ctx = 2048;          /* as LlamaConfig's max_position_embeddings, when nothing says */
    c->norm_eps = 1e-6f;    /* as LlamaConfig's rms_norm_eps */
    if (mt && strcmp(mt->val, "llama") && strcmp(mt->val, "qwen3"))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: model_type is \"%s\": ltrain.h reads gpt2, llama and qwen3", src,
                            mt->val), 0;
    if ((rt && strcmp(rt->val, "default")) || (rs && rs->kind != 'z'))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: rope_type is \"%s\"%s: ltrain.h's RoPE is the default one (no "
                            "scaling)", src, rt ? rt->val : "", rs && rs->kind != 'z' ? " and rope_scaling is set" : ""), 0;
    if (act && strcmp(act->val, "silu"))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: hidden_act is \"%s\": ltrain.h's Llama MLP is silu", src, act->val), 0;
    if (hc) {
        int h = 0;
        if (lt__hf_int(ctx, hc, src, "num_attention_heads", &h) < 0) return 0;
        if (h && n_head && h != n_head)
            return lt_set_error(ctx, LT_ERR_ARG, "%s: num_attention_heads is %d but %d heads were asked for", src, h,
                                n_head), 0;
        if (h) c->heads = h;
        ok = lt__hf_int(ctx, hc, src, "max_position_embeddings", &c->ctx) >= 0 &&
             lt__hf_real(ctx, hc, src, "rms_norm_eps", &c->norm_eps) >= 0 &&
             lt__hf_real(ctx, hc, src, "rope_parameters.rope_theta", &c->rope_theta) >= 0 &&
             (c->rope_theta > 0 || lt__hf_real(ctx, hc, src, "rope_theta", &c->rope_theta) >= 0) &&
             lt__hf_int(ctx, hc, src, "head_dim", &hd) >= 0 && lt__hf_bool(ctx, hc, src, "attention_bias", &ab) >= 0 &&
             lt__hf_bool(ctx, hc, src, "mlp_bias", &mb) >= 0 && lt__hf_bool(ctx, hc, src, "tie_word_embeddings", &tie) >= 0 &&
             lt__hf_agree(ctx, hc, src, "vocab_size", c->vocab, path) && lt__hf_agree(ctx, hc, src, "hidden_size", c->channels, path) &&
             lt__hf_agree(ctx, hc, src, "num_hidden_layers", c->layers, path) &&
             lt__hf_agree(ctx, hc, src, "intermediate_size", c->hidden, path);
        if (!ok) return 0;
    }
    if (c->heads < 1)
        return lt_set_error(ctx, LT_ERR_ARG, "%s: the number of heads is unknown (no config.json beside it, no "
                            "ltrain_config metadata): give it (--heads N)", path), 0;
    if (c->channels % c->heads || q != c->channels || kv % (c->channels / c->heads) || (hd && hd != c->channels / c->heads))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: hidden_size %d, %d heads, head_dim %d, q_proj %lld rows, k_proj %lld "
                            "rows: ltrain.h needs head_dim = hidden_size / heads = q_proj rows / heads and k_proj rows a "
                            "multiple of it", path, c->channels, c->heads, hd, (long long)q, (long long)kv), 0;
    kvh = (int)(kv / (c->channels / c->heads));
    c->kv_heads = kvh;
    if (hc && !lt__hf_agree(ctx, hc, src, "num_key_value_heads", kvh, path)) return 0;
    if (hc && (ab != (c->no_bias == -1) || mb != (c->no_bias == -1) || (tie >= 0 && tie == c->untied)))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: attention_bias %s, mlp_bias %s, tie_word_embeddings %s but %s %s "
                            "biases and %s lm_head.weight (ltrain.h: biases on every linear or none)", src,
                            ab ? "true" : "false", mb ? "true" : "false", tie < 0 ? "unset" : tie ? "true" : "false",
                            path, c->no_bias == -1 ? "has" : "has no", c->untied ? "has" : "has no"), 0;
    if (hc && mt && (strcmp(mt->val, "qwen3") == 0) != c->qk_norm)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: model_type %s but %s %s q_norm/k_norm tensors", src, mt->val, path,
                            c->qk_norm ? "has" : "has no"), 0;
    if (c->rope_theta == 0) c->rope_theta = 10000.0f;
    {   /* every parameter must be in the file (>= 2 bytes each): refuse a config bigger than the
           file before allocating it */
        double C = c->channels, need = (double)c->vocab * C * (1 + c->untied) + C +
                                       c->layers * (2 * C * (double)q + 2 * C * (double)kv + 3 * C * c->hidden + 2 * C);
        size_t have = 0, b;
        for (l = 0; l < lt_st_count(st); l++) { lt_st_data(st, l, &b); have += b; }
        if (need > (double)have / 2)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: its shapes describe a model of %.0f parameters (%d layers) but "
                                "the file holds only %zu bytes of tensors: tensors are missing", path, need, c->layers,
                                have), 0;
    }
    return 1;
}

/* Tensors of st that no parameter of the Llama model g reads (training state aside): an error. */
static lt_status lt__llama_check_extra(lt_gpt *g, const lt_st *st, const char *path) {
    int i, k;
    for (i = 0; i < lt_st_count(st); i++) {
        const char *nm = lt_st_name(st, i);
        int found = !strncmp(nm, "optim.", 6) || !strcmp(nm, "train.state") || !strcmp(nm, "amp.scaler");
        for (k = 0; k < g->n_list && !found; k++) found = !strcmp(g->list[k]->name, nm);
        if (!found)
            return lt_set_error(g->ctx, LT_ERR_FORMAT, "%s: unexpected tensor \"%.100s\": the model (%d layers, %s, "
                                "%s) has no such parameter", path, nm, g->cfg.layers,
                                g->cfg.qk_norm ? "qk-norm" : "no qk-norm", g->cfg.untied ? "untied" : "tied head");
    }
    return LT_OK;
}

/* ---- @@TRAIN.weights  GPT weights under Hugging Face names ----------------------------------- */
LTRAIN_DEF lt_status lt_gpt_save(lt_gpt *g, const char *path) {
    return lt_checkpoint_save(g, NULL, NULL, NULL, path);
}

/* Find a model tensor in a file by its Hugging Face name, with or without "transformer.". */
static int lt__st_find_hf(const lt_st *st, const char *name) {
    char buf[160];
    int i = lt_st_find(st, name);
    if (i >= 0) return i;
    snprintf(buf, sizeof buf, "transformer.%s", name);
    return lt_st_find(st, buf);
}

/* A model loads completely or not at all: a tensor of the file that is not one of g's parameters
   is an error, except the training state a checkpoint adds (optim.*, train.state, amp.scaler) and
   what Hugging Face's GPT-2 files hold beside the weights: the causal-mask buffers
   h.N.attn.bias and h.N.attn.masked_bias of the model's layers, and lm_head.weight shaped like wte
   (tied to it). */
static lt_status lt__gpt_extra(lt_gpt *g, const lt_st *st, const char *path) {
    int i, k, n = lt_st_count(st);
    for (i = 0; i < n; i++) {
        const char *nm = lt_st_name(st, i), *base = nm, *dot;
        int64_t shape[8];
        int known = 0;
        long layer = -1;
        if (strncmp(nm, "optim.", 6) == 0 || strcmp(nm, "train.state") == 0 || strcmp(nm, "amp.scaler") == 0) continue;
        if (strncmp(base, "transformer.", 12) == 0) base += 12;
        for (k = 0; k < g->n_list && !known; k++) known = strcmp(base, g->list[k]->name) == 0;
        if (known) continue;
        if (strncmp(base, "h.", 2) == 0 && base[2] >= '0' && base[2] <= '9') layer = strtol(base + 2, NULL, 10);
        dot = layer >= 0 ? strchr(base + 2, '.') : NULL;
        if (dot && layer < g->cfg.layers && (strcmp(dot, ".attn.bias") == 0 || strcmp(dot, ".attn.masked_bias") == 0))
            continue;
        if (strcmp(nm, "lm_head.weight") == 0 && lt_st_shape(st, i, shape) == 2 && shape[0] == g->cfg.vocab &&
            shape[1] == g->cfg.channels)
            continue;
        if (layer >= g->cfg.layers)
            return lt_set_error(g->ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\" belongs to layer %ld, but the model has %d "
                                "layer%s (h.0 to h.%d): a layer in between is incomplete or the layer count is wrong", path,
                                nm, layer, g->cfg.layers, g->cfg.layers == 1 ? "" : "s", g->cfg.layers - 1);
        return lt_set_error(g->ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\" is not part of this GPT-2 model (L=%d C=%d "
                            "V=%d): another architecture or a damaged file?", path, nm, g->cfg.layers, g->cfg.channels,
                            g->cfg.vocab);
    }
    return LT_OK;
}

/* Copy every parameter of g from st; shapes must match exactly; every weight finite; no tensor
   of the file left over (lt__gpt_extra). */
static lt_status lt__gpt_read(lt_gpt *g, lt_st *st, const char *path) {
    lt_ctx *ctx = g->ctx;
    int k;
    for (k = 0; k < g->n_list && !lt_failed(ctx); k++) {
        lt_tensor *t = g->list[k];
        int64_t shape[8];
        int i = lt__st_find_hf(st, t->name), nd, d, same;
        int64_t e;
        char b1[64];
        if (i < 0)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" is missing (the model needs it, shape %s)", path,
                                t->name, lt_shape_str(t, b1, sizeof b1));
        nd = lt_st_shape(st, i, shape);
        same = nd == t->ndim;
        for (d = 0; same && d < nd; d++) same = shape[d] == t->shape[d];
        if (!same) {
            char b2[96];
            size_t used = (size_t)snprintf(b2, sizeof b2, "[");
            for (d = 0; d < nd && d < 8 && used < sizeof b2; d++)
                used += (size_t)snprintf(b2 + used, sizeof b2 - used, d ? ",%lld" : "%lld", (long long)shape[d]);
            if (used < sizeof b2) snprintf(b2 + used, sizeof b2 - used, "]");
            return lt_set_error(ctx, LT_ERR_SHAPE, "%s: tensor \"%s\" is %s but the model needs %s", path, t->name, b2,
                                lt_shape_str(t, b1, sizeof b1));
        }
        if (lt_st_read_f32(st, i, t->data, t->n) != LT_OK) break;
        for (e = 0; e < t->n; e++)
            if (!isfinite(t->data[e]))
                return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" holds %s at element %lld: the checkpoint's "
                                    "weights are not finite (saved from a diverged run?)", path, lt_st_name(st, i),
                                    t->data[e] != t->data[e] ? "NaN" : "inf", (long long)e);
    }
    if (!lt_failed(ctx)) {
        if (g->cfg.arch == LT_ARCH_LLAMA) lt__llama_check_extra(g, st, path);
        else lt__gpt_extra(g, st, path);
    }
    return ctx->status;
}

LTRAIN_DEF lt_status lt_gpt_load_weights(lt_gpt *g, const char *path) {
    lt_st *st;
    lt_status s;
    char stp[LT__PATH_MAX], cfgp[LT__PATH_MAX];
    if (!g || lt_failed(g->ctx)) return g ? g->ctx->status : LT_ERR_ARG;
    if (path && lt__hf_paths(path, stp, cfgp)) path = stp;   /* a directory: its model.safetensors */
    lt_sync_params(g->ctx);      /* LT_CUDA: the host copies are written, then sent to the device */
    lt_params_changed(g->ctx);
    st = lt_st_open(g->ctx, path);
    if (!st) return g->ctx->status;
    s = lt__gpt_read(g, st, path);
    lt_st_close(st);
    return s;
}

/* A positive integer metadata value (key), or 0 when the file has none; -1 + error if malformed. */
static long lt__gpt_meta_int(lt_ctx *ctx, const lt_st *st, const char *path, const char *key) {
    const char *m = lt_st_meta(st, key);
    char *end;
    long v;
    if (!m) return 0;
    v = strtol(m, &end, 10);
    if (end == m || *end || v < 1 || v > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: metadata %s is \"%.40s\": it must be a positive integer", path, key, m);
        return -1;
    }
    return v;
}

/* The layer count: one past the highest h.N of the file's tensors, and every layer below it
   complete (all 12 tensors; shapes are checked when they are read).  Metadata n_layer, n_embd,
   n_ctx and vocab_size, where the file has them, must agree with the tensors. */
static lt_status lt__gpt_load_layers(lt_ctx *ctx, const lt_st *st, const char *path, lt_gpt_config *cfg) {
    static const char *const part[12] = {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
        "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
        "mlp.c_proj.weight", "mlp.c_proj.bias"};
    static const char *const keys[4] = {"n_layer", "n_embd", "n_ctx", "vocab_size"};
    long top = -1, m;
    int i, k, got[4];
    char name[64];
    for (i = 0; i < lt_st_count(st); i++) {
        const char *nm = lt_st_name(st, i);
        if (strncmp(nm, "transformer.", 12) == 0) nm += 12;
        if (strncmp(nm, "h.", 2) == 0 && nm[2] >= '0' && nm[2] <= '9') {
            long l = strtol(nm + 2, NULL, 10);
            if (l > top) top = l;
        }
    }
    if (top >= 100000)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: a tensor of layer %ld: more than 100000 layers", path, top);
    cfg->layers = (int)(top + 1);
    got[0] = cfg->layers; got[1] = cfg->channels; got[2] = cfg->ctx; got[3] = cfg->vocab;
    for (k = 0; k < 4; k++) {
        if ((m = lt__gpt_meta_int(ctx, st, path, keys[k])) < 0) return ctx->status;
        if (m > 0 && m != got[k])
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: metadata %s = %ld but the tensors say %d%s", path, keys[k], m,
                                got[k], k == 0 ? " (tensors of a layer missing, or of an extra layer present?)" : "");
    }
    for (i = 0; i < cfg->layers; i++)
        for (k = 0; k < 12; k++) {
            snprintf(name, sizeof name, "h.%d.%s", i, part[k]);
            if (lt__st_find_hf(st, name) < 0)
                return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" is missing: layer %d of %d is incomplete "
                                    "(a model loads completely or not at all)", path, name, i, cfg->layers);
        }
    return LT_OK;
}

/* GPT-2's config from the shapes in a file: wte [V,C], wpe [ctx,C], layers = how many
   h.{i}.ln_1.weight, the MLP's size from c_fc; the heads and eps from the metadata or the JSON hc
   (config.json, read from src; NULL when there is none).  0 with an error on ctx. */
static int lt__gpt2_config(lt_ctx *ctx, lt_st *st, const char *path, int n_head, const lt__hfcfg *hc, const char *src,
                           lt_gpt_config *out) {
    lt_gpt_config cfg;
    int64_t s1[8], s2[8];
    int iw, ip, l, have_cfg = hc != NULL;
    const char *meta;
    memset(&cfg, 0, sizeof cfg);
    iw = lt__st_find_hf(st, "wte.weight");
    ip = lt__st_find_hf(st, "wpe.weight");
    if (iw < 0 || ip < 0) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" is missing: this is not a GPT-2 checkpoint", path,
                     iw < 0 ? "wte.weight" : "wpe.weight");
        goto done;
    }
    if (lt_st_shape(st, iw, s1) != 2 || lt_st_shape(st, ip, s2) != 2 || s1[1] != s2[1] || s1[0] > INT_MAX ||
        s2[0] > INT_MAX || s1[1] > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: wte.weight and wpe.weight must be [V,C] and [ctx,C] with the same C", path);
        goto done;
    }
    cfg.vocab = (int)s1[0];
    cfg.channels = (int)s1[1];
    cfg.ctx = (int)s2[0];
    if (lt__gpt_load_layers(ctx, st, path, &cfg) != LT_OK) goto done;
    if (lt_st_shape(st, lt__st_find_hf(st, "h.0.mlp.c_fc.weight"), s2) == 2 && s2[1] > 0 && s2[1] <= INT_MAX)
        cfg.hidden = (int)s2[1];
    if (have_cfg && (lt__hf_real(ctx, hc, src, "layer_norm_epsilon", &cfg.norm_eps) < 0 ||
                     !lt__hf_agree(ctx, hc, src, "n_embd", cfg.channels, path) ||
                     !lt__hf_agree(ctx, hc, src, "vocab_size", cfg.vocab, path) ||
                     !lt__hf_agree(ctx, hc, src, "n_layer", cfg.layers, path)))
        goto done;
    meta = lt_st_meta(st, "n_head");
    if (meta) {
        char *end;
        long h = strtol(meta, &end, 10);
        if (*end || h < 1 || h > INT_MAX) {
            lt_set_error(ctx, LT_ERR_FORMAT, "%s: metadata n_head is \"%s\": it must be a positive integer", path, meta);
            goto done;
        }
        if (n_head > 0 && n_head != (int)h) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: the file says n_head = %ld but %d heads were asked for", path, h, n_head);
            goto done;
        }
        n_head = (int)h;
    } else if (have_cfg) {
        int h = 0;
        if (lt__hf_int(ctx, hc, src, "n_head", &h) < 0) goto done;
        if (h && n_head > 0 && n_head != h) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: n_head is %d but %d heads were asked for", src, h, n_head);
            goto done;
        }
        if (h) n_head = h;
    }
    if (n_head < 1) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: the number of heads is unknown (no n_head metadata, no config.json beside "
                     "it): give it (--heads N)", path);
        goto done;
    }
    cfg.heads = n_head;
    if (cfg.layers < 1 || cfg.channels % cfg.heads != 0) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %d layers and C = %d with %d heads: need >= 1 layer and heads dividing C",
                     path, cfg.layers, cfg.channels, cfg.heads);
        goto done;
    }
    {   /* every parameter must be in the file (>= 2 bytes each): refuse a config bigger than the
           file before allocating it (a few header bytes could otherwise ask for gigabytes) */
        double C = cfg.channels, F = cfg.hidden ? cfg.hidden : 4 * C;
        double need = ((double)cfg.vocab + cfg.ctx + 2) * C + cfg.layers * (4 * C * C + 2 * C * F + 9 * C + F);
        size_t have = 0, b;
        for (l = 0; l < lt_st_count(st); l++) { lt_st_data(st, l, &b); have += b; }
        if (need > (double)have / 2) {
            lt_set_error(ctx, LT_ERR_FORMAT, "%s: its shapes describe a model of %.0f parameters (V=%d ctx=%d C=%d, %d "
                         "layers) but the file holds only %zu bytes of tensors: tensors are missing", path, need,
                         cfg.vocab, cfg.ctx, cfg.channels, cfg.layers, have);
            goto done;
        }
    }
    *out = cfg;
    return 1;
done:
    return 0;
}

/* A model from a file or a Hugging Face directory: GPT-2 (lt__gpt2_config) or Llama
   (model.embed_tokens.weight: lt__llama_config), its weights read completely. */
LTRAIN_DEF lt_gpt *lt_gpt_load(lt_ctx *ctx, const char *path, int n_head) {
    lt_st *st;
    lt_gpt_config cfg;
    lt_gpt *g = NULL;
    int have_cfg, ok;
    char *stp, *cfgp, *src;
    lt__hfcfg hc;
    if (!ctx || lt_failed(ctx)) return NULL;
    stp = (char *)LT__MALLOC(3 * LT__PATH_MAX);
    if (!stp) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_load: out of memory"); return NULL; }
    cfgp = stp + LT__PATH_MAX; src = cfgp + LT__PATH_MAX;
    if (!path || !lt__hf_paths(path, stp, cfgp)) { LT__FREE(stp); lt_st_open(ctx, path); return NULL; }
    path = stp;
    st = lt_st_open(ctx, path);
    if (!st) { LT__FREE(stp); return NULL; }
    have_cfg = lt__hf_load_config(ctx, st, path, cfgp, &hc, src);
    if (have_cfg >= 0) {
        ok = lt_st_find(st, "model.embed_tokens.weight") >= 0
                 ? lt__llama_config(ctx, st, path, have_cfg ? &hc : NULL, src, n_head, &cfg)
                 : lt__gpt2_config(ctx, st, path, n_head, have_cfg ? &hc : NULL, src, &cfg);
        if (ok) g = lt_gpt_create(ctx, &cfg);
        if (g && lt__gpt_read(g, st, path) != LT_OK) { lt_gpt_destroy(g); g = NULL; }
        lt__hf_free(&hc);
    }
    lt_st_close(st);
    LT__FREE(stp);
    return g;
}

/* ---- @@TRAIN.checkpoint  checkpoints: weights and training state ----------------------------- */
LTRAIN_DEF lt_status lt_checkpoint_save(lt_gpt *g, lt_optim *opt, const lt_train_state *st, const char *note,
                                        const char *path) {
    lt_ctx *ctx;
    lt_st_writer *w;
    char num[5][32], (*names)[160] = NULL;
    int64_t (*shapes)[2] = NULL;   /* 1-D shapes of state buffers not shaped like their parameter */
    int64_t state[7], seven = 7, six = 6;
    double amp[6];
    int k, j, ns = opt ? lt_optim_num_states(opt) : 0;
    lt_status s;
    char *stp, *cfgp = NULL, json[2048];
    if (!g) return LT_ERR_ARG;
    ctx = g->ctx;
    if (lt_failed(ctx)) return ctx->status;
    if (opt && lt_optim_params(opt).n != g->n_list)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_checkpoint_save: the optimizer holds %d parameters, the model %d",
                            lt_optim_params(opt).n, g->n_list);
    if (lt_sync_params(ctx) != LT_OK) return ctx->status;   /* LT_CUDA: the device's values to the host copies */
    w = lt_st_writer_create(ctx);
    if (!w) return ctx->status;
    if (ns > 0) {
        names = (char(*)[160])LT__MALLOC((size_t)ns * (size_t)g->n_list * 160);
        shapes = (int64_t(*)[2])LT__MALLOC((size_t)ns * (size_t)g->n_list * sizeof(int64_t[2]));
        if (!names || !shapes) {
            LT__FREE(names);
            LT__FREE(shapes); lt_st_writer_destroy(w); return lt_set_error(ctx, LT_ERR_NOMEM, "lt_checkpoint_save: out of memory"); }
    }
    for (k = 0; k < g->n_list; k++) {
        lt_tensor *t = g->list[k];
        lt_st_add(w, t->name, "F32", t->ndim, t->shape, t->data);
    }
    /* optimizer state: buffers shaped like their parameter keep its shape; others (SOAP's
       factor matrices) are stored flat; a parameter without a buffer of this kind has none */
    for (j = 0; j < ns; j++)
        for (k = 0; k < g->n_list; k++) {
            lt_tensor *t = g->list[k];
            char *nm = names[j * g->n_list + k];
            const char *sn = lt_optim_state_name(opt, j);
            int64_t cnt = 0, *shp = shapes[j * g->n_list + k];
            float *buf = lt_optim_state_buf(opt, k, j, &cnt);
            if (!buf) continue;
            snprintf(nm, 160, "optim.%s.%s", sn ? sn : "state", t->name);
            shp[0] = cnt;
            if (lt_optim_state(opt, k, j) == buf) lt_st_add(w, nm, "F32", t->ndim, t->shape, buf);
            else lt_st_add(w, nm, "F32", 1, shp, buf);
        }
    snprintf(num[0], 32, "%d", g->cfg.layers);
    snprintf(num[1], 32, "%d", g->cfg.heads);
    snprintf(num[2], 32, "%d", g->cfg.channels);
    snprintf(num[3], 32, "%d", g->cfg.ctx);
    snprintf(num[4], 32, "%d", g->cfg.vocab);
    /* "format" must be "pt" for transformers 4.x; ours is ltrain_format and ltrain_config (config.json's text) */
    lt__gpt_config_json(&g->cfg, json, sizeof json);
    lt_st_add_meta(w, "format", "pt");
    lt_st_add_meta(w, "ltrain_format", g->cfg.arch == LT_ARCH_LLAMA ? "ltrain-llama" : "ltrain-gpt2");
    lt_st_add_meta(w, "ltrain_config", json);
    lt_st_add_meta(w, "n_layer", num[0]);
    lt_st_add_meta(w, "n_head", num[1]);
    lt_st_add_meta(w, "n_embd", num[2]);
    lt_st_add_meta(w, "n_ctx", num[3]);
    lt_st_add_meta(w, "vocab_size", num[4]);
    if (note) lt_st_add_meta(w, "note", note);
    if (st && st->run[0]) lt_st_add_meta(w, "run", st->run);
    if (st) {
        /* step, data epoch, data index, then the RNG's 4 words (bit patterns as int64) */
        state[0] = st->step; state[1] = st->data_epoch; state[2] = st->data_index;
        for (k = 0; k < 4; k++) memcpy(&state[3 + k], &ctx->rng.s[k], sizeof(int64_t));
        lt_st_add(w, "train.state", "I64", 1, &seven, state);
        if (opt) lt_st_add_meta(w, "optimizer", lt_optim_name(opt));
    }
    if (st && st->scaler) {   /* the counters are whole numbers below 2^53: exact as doubles */
        lt_scaler_state ss = lt_scaler_get_state(st->scaler);
        amp[0] = ss.scale; amp[1] = ss.growth_factor; amp[2] = ss.backoff_factor;
        amp[3] = (double)ss.growth_interval; amp[4] = (double)ss.growth_tracker; amp[5] = (double)ss.skipped;
        lt_st_add(w, "amp.scaler", "F64", 1, &six, amp);
    }
    /* a directory: its model.safetensors; beside a model.safetensors also config.json, so that the
       directory is a Hugging Face model's */
    stp = (char *)LT__MALLOC(2 * LT__PATH_MAX);
    if (!stp) lt_set_error(ctx, LT_ERR_NOMEM, "lt_checkpoint_save: out of memory");
    else if (!path || !lt__hf_paths(path, stp, cfgp = stp + LT__PATH_MAX))
        lt_set_error(ctx, LT_ERR_ARG, "lt_checkpoint_save: path is %s", path ? "too long" : "NULL");
    else {
        if (path[0] && path[strlen(path) - 1] == '/' && !lt__is_dir(path)) LT__MKDIR(path);   /* as save_pretrained */
        path = stp;
    }
    s = lt_failed(ctx) ? ctx->status : lt_st_save(w, path);
    if (s == LT_OK && (!strcmp(path, "model.safetensors") ||
                       (strlen(path) > 18 && !strcmp(path + strlen(path) - 18, "/model.safetensors"))))
        s = lt__write_text_atomic(ctx, cfgp, json);
    LT__FREE(stp);
    lt_st_writer_destroy(w);
    LT__FREE(names);
    LT__FREE(shapes);
    return s;
}

/* A checkpoint's "amp.scaler" (tensor i of f) into the loss scaler sc. */
static lt_status lt__ckpt_read_scaler(lt_ctx *ctx, lt_st *f, int i, lt_scaler *sc, const char *path) {
    int64_t shape[8];
    size_t bytes;
    double a[6];
    lt_scaler_state ss;
    int k;
    const void *data = lt_st_data(f, i, &bytes);
    if (strcmp(lt_st_dtype(f, i), "F64") != 0 || lt_st_shape(f, i, shape) != 1 || shape[0] != 6 || bytes != sizeof a)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"amp.scaler\" must be F64 [6]", path);
    memcpy(a, data, sizeof a);
    for (k = 3; k < 6; k++)   /* counters: whole numbers in [0, 2^53] before any int64 conversion */
        if (!(a[k] >= 0 && a[k] <= 9007199254740992.0 && a[k] == floor(a[k])))
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: amp.scaler holds %g where a count belongs (the file is "
                                "damaged)", path, a[k]);
    ss.scale = a[0]; ss.growth_factor = a[1]; ss.backoff_factor = a[2];
    ss.growth_interval = (int64_t)a[3]; ss.growth_tracker = (int64_t)a[4]; ss.skipped = (int64_t)a[5];
    return lt_scaler_set_state(ctx, sc, &ss);
}

/* A checkpoint's "train.state" (step, data position, the RNG's 4 words) into st and the context's
   RNG, then its "amp.scaler" into st->scaler when both are there. */
static lt_status lt__ckpt_read_train_state(lt_ctx *ctx, lt_st *f, lt_train_state *st, const char *path) {
    int64_t shape[8], v[7];
    size_t bytes;
    const void *data;
    int k, i = lt_st_find(f, "train.state");
    if (i < 0) return lt_set_error(ctx, LT_ERR_FORMAT, "%s: no \"train.state\": this holds weights only (use --init)", path);
    data = lt_st_data(f, i, &bytes);
    if (strcmp(lt_st_dtype(f, i), "I64") != 0 || lt_st_shape(f, i, shape) != 1 || shape[0] != 7 || bytes != sizeof v)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"train.state\" must be I64 [7]", path);
    memcpy(v, data, sizeof v);
    if (v[0] < 0 || v[1] < 0 || v[2] < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: train.state holds step %lld, data epoch %lld, index %lld: none may be "
                            "negative", path, (long long)v[0], (long long)v[1], (long long)v[2]);
    /* hardening: no run takes 2^48 steps or epochs (nor has 2^48 batches in one); a larger number
       is a damaged file, and would overflow the int64 arithmetic done with it (step * K, ...) */
    if (v[0] > ((int64_t)1 << 48) || v[1] > ((int64_t)1 << 48) || v[2] > ((int64_t)1 << 48))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: train.state holds step %lld, data epoch %lld, index %lld: out of "
                            "range (each must be <= 2^48; the file is damaged)", path, (long long)v[0], (long long)v[1],
                            (long long)v[2]);
    if (v[3] == 0 && v[4] == 0 && v[5] == 0 && v[6] == 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: train.state holds an all-zero RNG state (not a valid xoshiro state)", path);
    st->step = v[0]; st->data_epoch = v[1]; st->data_index = v[2];
    snprintf(st->run, sizeof st->run, "%s", lt_st_meta(f, "run") ? lt_st_meta(f, "run") : "");
    for (k = 0; k < 4; k++) memcpy(&ctx->rng.s[k], &v[3 + k], sizeof(int64_t));
    if (st->scaler && (i = lt_st_find(f, "amp.scaler")) >= 0) return lt__ckpt_read_scaler(ctx, f, i, st->scaler, path);
    return LT_OK;
}

/* The optimizer's state buffer of kind j for parameter k from f ("optim.<state name>.<param
   name>"), when the optimizer keeps one. */
static lt_status lt__ckpt_read_optim_buf(lt_gpt *g, lt_optim *opt, lt_st *f, int j, int k, const char *path) {
    lt_ctx *ctx = g->ctx;
    lt_tensor *t = g->list[k];
    char nm[160];
    int64_t shape[8], cnt = 0, have = 1;
    const char *sn = lt_optim_state_name(opt, j);
    float *buf = lt_optim_state_buf(opt, k, j, &cnt);
    int d, nd, i;
    if (!buf) return LT_OK;
    snprintf(nm, sizeof nm, "optim.%s.%s", sn ? sn : "state", t->name);
    i = lt_st_find(f, nm);
    if (i < 0) return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" is missing", path, nm);
    nd = lt_st_shape(f, i, shape);
    /* hardening: a zero dim first, so that huge dims beside it cannot overflow the product
       (without one, the reader has checked the product against the file's size) */
    for (d = 0; d < nd; d++) if (shape[d] == 0) have = 0;
    for (d = 0; d < nd && have; d++) have *= shape[d];
    /* a parameter-shaped buffer must have the parameter's shape (not just its size) */
    if (nd >= 1 && have == cnt && lt_optim_state(opt, k, j) == buf) {
        int same = nd == t->ndim;
        char b1[64];
        for (d = 0; same && d < nd; d++) same = shape[d] == t->shape[d];
        if (!same)
            return lt_set_error(ctx, LT_ERR_SHAPE, "%s: tensor \"%s\" has %d dims / another shape than its "
                                "parameter %s", path, nm, nd, lt_shape_str(t, b1, sizeof b1));
    }
    if (nd < 1 || have != cnt)
        return lt_set_error(ctx, LT_ERR_SHAPE, "%s: tensor \"%s\" holds %lld values but this optimizer keeps %lld "
                            "(another optimizer configuration?)", path, nm, (long long)have, (long long)cnt);
    lt_st_read_f32(f, i, buf, cnt);
    return LT_OK;
}

/* Weights, then the training state when st is given, then the optimizer's state when opt is. */
LTRAIN_DEF lt_status lt_checkpoint_load(lt_gpt *g, lt_optim *opt, lt_train_state *st, const char *path) {
    lt_ctx *ctx;
    lt_st *f;
    char stp[LT__PATH_MAX], cfgp[LT__PATH_MAX];
    int k, j, ns;
    if (!g) return LT_ERR_ARG;
    ctx = g->ctx;
    if (lt_failed(ctx)) return ctx->status;
    if (path && lt__hf_paths(path, stp, cfgp)) path = stp;   /* a directory: its model.safetensors */
    lt_sync_params(ctx);         /* LT_CUDA: the host copies are written, then sent to the device */
    lt_params_changed(ctx);
    f = lt_st_open(ctx, path);
    if (!f) return ctx->status;
    if (lt__gpt_read(g, f, path) != LT_OK) goto done;
    if (st && lt__ckpt_read_train_state(ctx, f, st, path) != LT_OK) goto done;
    if (opt) {
        const char *oname = lt_st_meta(f, "optimizer");
        if (oname && strcmp(oname, lt_optim_name(opt)) != 0) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: saved with optimizer %s, resumed with %s", path, oname, lt_optim_name(opt));
            goto done;
        }
        ns = lt_optim_num_states(opt);
        for (j = 0; j < ns && !lt_failed(ctx); j++)
            for (k = 0; k < g->n_list && !lt_failed(ctx); k++)
                if (lt__ckpt_read_optim_buf(g, opt, f, j, k, path) != LT_OK) break;
        if (st) lt_optim_set_steps(opt, st->step);
    }
done:
    lt_st_close(f);
    return ctx->status;
}

/* ---- src/21_plot.h ---- */
/* ==== @@PLOT  SVG line charts: panels, 1-2-5 ticks, legend; written atomically ================= */
/* Holds: lt_plot: series in panels, 1-2-5 axis ticks, a legend, the SVG written atomically.
   Calls: @@CORE, @@CKPT (lt__dest: which paths a file may be written to). */

typedef struct {
    char *name;                  /* NULL: not in the legend */
    double *x, *y;
    int n, cap;
    int panel;
} lt__pseries;

typedef struct {
    char *title, *xlabel, *ylabel;
    int log_y;
    double lim[4];               /* xmin, xmax, ymin, ymax; NaN = automatic */
} lt__ppanel;

struct lt_plot {
    lt__ppanel *panels;
    int n_panels;
    lt__pseries *series;
    int n_series;
    int width, height;           /* of one panel, pixels */
    lt_status status;
    char msg[256];
};

/* One axis once ranged: data -> pixels, and its ticks. */
typedef struct {
    double lo, hi;               /* in axis units (log10 of the value on a log axis) */
    int log;
    double ticks[64];            /* tick values (not logged) */
    double step;                 /* linear axes: the tick spacing, for the labels' decimals */
    int n_ticks;
    int expo;                    /* label every tick as a power of ten ("2e-4") */
} lt__paxis;

#define LT__PLOT_FONT 12
static const char *const lt__plot_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                              "#9467bd", "#8c564b", "#e377c2", "#17becf"};
static const char *const lt__plot_dashes[] = {"", "6,3", "2,3", "8,3,2,3"}; /* after the 8 colours */

static lt_status lt__plot_fail(lt_plot *p, lt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static lt_status lt__plot_fail(lt_plot *p, lt_status s, const char *fmt, ...) {
    va_list ap;
    if (p->status != LT_OK) return p->status;
    p->status = s;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    return s;
}

static char *lt__plot_dup(const char *s) { return s ? lt__strdup(s) : NULL; }

static void lt__plot_panel_init(lt__ppanel *q) {
    int i;
    memset(q, 0, sizeof *q);
    for (i = 0; i < 4; i++) q->lim[i] = NAN;
}

/* ---- @@PLOT.series  plots, panels, series ---------------------------------------------------- */
LTRAIN_DEF lt_plot *lt_plot_create(const char *title, const char *xlabel, const char *ylabel) {
    lt_plot *p = (lt_plot *)LT__MALLOC(sizeof(lt_plot));
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->width = 640;
    p->height = 400;
    if (lt_plot_panel(p, title, xlabel, ylabel) != LT_OK) {
        lt_plot_destroy(p);
        return NULL;
    }
    return p;
}

LTRAIN_DEF void lt_plot_destroy(lt_plot *p) {
    int i;
    if (!p) return;
    for (i = 0; i < p->n_panels; i++) {
        LT__FREE(p->panels[i].title);
        LT__FREE(p->panels[i].xlabel);
        LT__FREE(p->panels[i].ylabel);
    }
    for (i = 0; i < p->n_series; i++) {
        LT__FREE(p->series[i].name);
        LT__FREE(p->series[i].x);
        LT__FREE(p->series[i].y);
    }
    LT__FREE(p->panels);
    LT__FREE(p->series);
    LT__FREE(p);
}

LTRAIN_DEF lt_status lt_plot_panel(lt_plot *p, const char *title, const char *xlabel, const char *ylabel) {
    lt__ppanel *grown, *q;
    if (!p) return LT_ERR_ARG;
    if (p->status != LT_OK) return p->status;
    if (p->n_panels >= 64) return lt__plot_fail(p, LT_ERR_ARG, "lt_plot_panel: a figure holds at most 64 panels");
    grown = (lt__ppanel *)LT__REALLOC(p->panels, (size_t)(p->n_panels + 1) * sizeof(lt__ppanel));
    if (!grown) return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_panel: out of memory");
    p->panels = grown;
    q = &p->panels[p->n_panels];
    lt__plot_panel_init(q);
    q->title = lt__plot_dup(title);
    q->xlabel = lt__plot_dup(xlabel);
    q->ylabel = lt__plot_dup(ylabel);
    p->n_panels++;
    if ((title && !q->title) || (xlabel && !q->xlabel) || (ylabel && !q->ylabel))
        return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_panel: out of memory");
    return LT_OK;
}

/* Room for at least `need` points in series s. */
static lt_status lt__plot_reserve(lt_plot *p, lt__pseries *s, int need) {
    size_t bytes;
    int cap = s->cap ? s->cap : 16;
    double *nx, *ny;
    if (need <= s->cap) return LT_OK;
    while (cap < need) cap = cap > INT_MAX / 2 ? need : cap * 2;
    if (!lt_mul_size((size_t)cap, sizeof(double), &bytes))
        return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot: %d points do not fit in memory", need);
    nx = (double *)LT__REALLOC(s->x, bytes);
    if (nx) s->x = nx;
    ny = nx ? (double *)LT__REALLOC(s->y, bytes) : NULL;
    if (ny) s->y = ny;
    if (!nx || !ny) return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot: out of memory for %d points", need);
    s->cap = cap;
    return LT_OK;
}

LTRAIN_DEF int lt_plot_series(lt_plot *p, const char *name, const double *x, const double *y, int n) {
    lt__pseries *grown, *s;
    int i;
    if (!p || p->status != LT_OK) return -1;
    if (n < 0 || (n > 0 && !y)) {
        lt__plot_fail(p, LT_ERR_ARG, "lt_plot_series \"%s\": %s", name ? name : "",
                      n < 0 ? "n is negative" : "y is NULL (only x may be NULL, meaning 0, 1, 2, ...)");
        return -1;
    }
    grown = (lt__pseries *)LT__REALLOC(p->series, (size_t)(p->n_series + 1) * sizeof(lt__pseries));
    if (!grown) {
        lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_series: out of memory");
        return -1;
    }
    p->series = grown;
    s = &p->series[p->n_series++];
    memset(s, 0, sizeof *s);
    s->panel = p->n_panels - 1;
    s->name = lt__plot_dup(name);
    if ((name && !s->name) || lt__plot_reserve(p, s, n) != LT_OK) {
        lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_series: out of memory");
        return -1;
    }
    for (i = 0; i < n; i++) {
        s->x[i] = x ? x[i] : (double)i;
        s->y[i] = y[i];
    }
    s->n = n;
    return p->n_series - 1;
}

LTRAIN_DEF lt_status lt_plot_append(lt_plot *p, int series, double x, double y) {
    lt__pseries *s;
    if (!p) return LT_ERR_ARG;
    if (p->status != LT_OK) return p->status;
    if (series < 0 || series >= p->n_series)
        return lt__plot_fail(p, LT_ERR_ARG, "lt_plot_append: series %d does not exist (the plot has %d)", series,
                             p->n_series);
    s = &p->series[series];
    if (s->n == INT_MAX) return lt__plot_fail(p, LT_ERR_ARG, "lt_plot_append: series %d is full", series);
    if (lt__plot_reserve(p, s, s->n + 1) != LT_OK) return p->status;
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
    return LT_OK;
}

LTRAIN_DEF void lt_plot_log_y(lt_plot *p, int on) {
    if (p && p->n_panels > 0) p->panels[p->n_panels - 1].log_y = on != 0;
}

LTRAIN_DEF void lt_plot_range(lt_plot *p, double xmin, double xmax, double ymin, double ymax) {
    lt__ppanel *q;
    if (!p || p->n_panels == 0) return;
    q = &p->panels[p->n_panels - 1];
    q->lim[0] = xmin; q->lim[1] = xmax; q->lim[2] = ymin; q->lim[3] = ymax;
}

LTRAIN_DEF void lt_plot_size(lt_plot *p, int width, int height) {
    if (!p) return;
    if (width >= 100 && width <= 10000) p->width = width;
    if (height >= 80 && height <= 10000) p->height = height;
}

LTRAIN_DEF const char *lt_plot_error(const lt_plot *p) {
    return p ? p->msg : "lt_plot: no plot (lt_plot_create returned NULL: out of memory)";
}

/* -- @@PLOT.ticks  ranges and ticks --------------------------------------------------------------- */

/* The 1-2-5 step nearest above span/target: 1, 2, 5, 10, 20, 50, ... times a power of ten. */
static double lt__plot_nice_step(double span, int target) {
    double raw = span / target, mag = pow(10.0, floor(log10(raw))), r = raw / mag;
    return (r <= 1.0 ? 1.0 : r <= 2.0 ? 2.0 : r <= 5.0 ? 5.0 : 10.0) * mag;
}

/* Range an axis over [lo, hi] (finite, lo <= hi, axis units) with fixed ends where fix_lo/fix_hi.
   Linear: about 5 ticks a 1-2-5 step apart; automatic ends are rounded out to ticks.
   Log (lo, hi are log10): automatic ends are rounded out to powers of ten; ticks at 1, 2, 5 times
   each power when the axis spans at most 3 decades, else at powers of ten (every k-th). */
static void lt__plot_axis(lt__paxis *a, double lo, double hi, int fix_lo, int fix_hi, int log) {
    double step, v;
    int64_t i, i0, i1;
    memset(a, 0, sizeof *a);
    a->log = log;
    if (!(hi - lo > 1e-12 * (fabs(lo) + fabs(hi))) || !isfinite(hi - lo)) {
        /* one value (a single point or a constant series): widen around it, never divide by 0 */
        double pad = log ? 1.0 : (lo != 0 ? fabs(lo) * 0.1 : 1.0);
        if (!isfinite(pad)) pad = 1.0;
        if (fix_lo && !fix_hi) hi = lo + 2.0 * pad;
        else if (!fix_lo && fix_hi) lo = hi - 2.0 * pad;
        else { lo -= pad; hi += pad; }
        if (!(hi > lo) || !isfinite(hi - lo)) { lo = -1.0; hi = 1.0; } /* about DBL_MAX: give up gracefully */
    }
    if (log) {
        double decades, m[3] = {1.0, 2.0, 5.0};
        int64_t e, every;
        if (!fix_lo) lo = floor(lo + 1e-9);
        if (!fix_hi) hi = ceil(hi - 1e-9);
        if (hi <= lo) hi = lo + 1.0;
        a->lo = lo; a->hi = hi;
        decades = hi - lo;
        every = decades <= 8 ? 1 : (int64_t)ceil(decades / 8.0);
        for (e = (int64_t)floor(lo) - 1; e <= (int64_t)ceil(hi) && a->n_ticks < 64; e++) {
            int k;
            for (k = 0; k < (decades <= 3.0 ? 3 : 1) && a->n_ticks < 64; k++) {
                double lv = (double)e + log10(m[k]);
                if (e % every != 0 && k == 0) continue;
                if (lv >= lo - 1e-9 && lv <= hi + 1e-9) a->ticks[a->n_ticks++] = pow(10.0, lv);
            }
        }
        return;
    }
    step = lt__plot_nice_step(hi - lo, 5);
    if (!(step > 0) || !isfinite(step)) step = hi - lo;
    if (!fix_lo) lo = floor(lo / step + 1e-9) * step;
    if (!fix_hi) hi = ceil(hi / step - 1e-9) * step;
    a->lo = lo; a->hi = hi; a->step = step;
    i0 = (int64_t)ceil(lo / step - 1e-9);
    i1 = (int64_t)floor(hi / step + 1e-9);
    for (i = i0; i <= i1 && a->n_ticks < 64; i++) {
        v = (double)i * step;
        if (fabs(v) < step * 1e-9) v = 0.0;        /* -0 and 1e-17 both print as 0 */
        a->ticks[a->n_ticks++] = v;
    }
}

/* An axis from the data's extent [dlo, dhi] and the user's ends flo, fhi (NaN: automatic). */
static void lt__plot_range(lt__paxis *a, double dlo, double dhi, double flo, double fhi, int log) {
    int fl = isfinite(flo) && (!log || flo > 0), fh = isfinite(fhi) && (!log || fhi > 0);
    double lo = fl ? flo : dlo, hi = fh ? fhi : dhi;
    if (lo > hi) {
        if (fl && fh) { double t = lo; lo = hi; hi = t; }
        else if (fl) hi = lo;
        else lo = hi;
    }
    if (log) { lo = log10(lo); hi = log10(hi); }
    lt__plot_axis(a, lo, hi, fl, fh, log);
    {   /* one style for all labels of an axis: fixed-point, or powers of ten when tiny or huge */
        double small = INFINITY, big = 0;
        int k;
        for (k = 0; k < a->n_ticks; k++) {
            double v = fabs(a->ticks[k]);
            if (v > big) big = v;
            if (v > 0 && v < small) small = v;
        }
        a->expo = big >= 1e7 || (log ? small < 1e-3 : a->step < 1e-3);
    }
}

/* A tick label: fixed-point with the decimals the step needs ("0.25", "120"; on a log axis those
   the value needs: "0.002", "50"), or a short power of ten ("2e-4", "1.5e7"). */
static void lt__plot_label(char *buf, size_t cap, double v, const lt__paxis *a) {
    int dec = 0;
    if (v == 0) { snprintf(buf, cap, "0"); return; }
    if (a->expo) {
        int e = (int)floor(log10(fabs(v)) + 1e-9);
        snprintf(buf, cap, "%.3ge%d", v / pow(10.0, e), e);
        return;
    }
    if (!a->log) dec = (int)(-floor(log10(a->step) + 1e-9));
    else
        while (dec < 6 && fabs(v * pow(10.0, dec) - floor(v * pow(10.0, dec) + 0.5)) > 1e-6 * fabs(v) * pow(10.0, dec))
            dec++;
    snprintf(buf, cap, "%.*f", dec < 0 ? 0 : dec > 9 ? 9 : dec, v);
}

/* -- @@PLOT.svg  writing ------------------------------------------------------------------------- */

/* Text content or an attribute value, XML-escaped; control bytes and invalid UTF-8 become '?'. */
static void lt__plot_text(FILE *f, const char *s) {
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    size_t left = strlen((const char *)u);
    while (*u) {
        unsigned c = *u;
        int len = lt__utf8_next(u, left, NULL);   /* @@CORE.utf8; 0: not valid UTF-8 here */
        left -= len > 1 ? (size_t)len : 1;
        if (len == 0 || (c < 0x20 && c != '\t')) { fputc('?', f); u++; continue; }
        if (len > 1) { fwrite(u, 1, (size_t)len, f); u += len; continue; }
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc((int)c, f);
        }
        u++;
    }
}

/* A coordinate with two decimals and a '.' even under a locale whose decimal point is ','. */
static void lt__plot_num(FILE *f, double v) {
    char buf[48], *c;
    if (!isfinite(v)) v = 0;
    snprintf(buf, sizeof buf, "%.2f", v);
    for (c = buf; *c; c++)
        if (*c == ',') *c = '.';
    fputs(buf, f);
}

/* Pixel position of value v on an axis of length len starting at px0 (y axes run upwards). */
static double lt__plot_px(const lt__paxis *a, double v, double px0, double len, int up) {
    double t = ((a->log ? log10(v) : v) - a->lo) / (a->hi - a->lo);
    /* far outside the box (clipped anyway): keep the numbers printable */
    if (t < -10) t = -10;
    if (t > 11) t = 11;
    return up ? px0 + len - t * len : px0 + t * len;
}

static int lt__plot_ok(double v, int log) { return isfinite(v) && (!log || v > 0); }

/* A panel's layout: its axes, ranged over its data, and the plot box in pixels. */
typedef struct {
    const lt__ppanel *q;
    int id;                      /* the panel's index: its series, its clip path's name */
    lt__paxis ax, ay;
    double oy, x0, y0, W, H;     /* the panel's vertical offset; the box's corner and size */
    int nleg, maxname;           /* named series (legend rows) and the longest name */
} lt__pframe;

/* Range both axes over the panel's finite points (and its fixed limits), then place the box:
   the left margin fits the longest y tick label. */
static void lt__plot_frame(const lt_plot *p, int id, double oy, lt__pframe *fr) {
    const lt__ppanel *q = &p->panels[id];
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    double L, R = 20, T = q->title ? 34 : 16, Bm = q->xlabel ? 48 : 30;
    int s, k, maxlab = 1;
    char lab[64];
    fr->q = q;
    fr->id = id;
    fr->oy = oy;
    fr->nleg = 0;
    fr->maxname = 0;
    for (s = 0; s < p->n_series; s++) {
        const lt__pseries *ser = &p->series[s];
        if (ser->panel != id) continue;
        if (ser->name && ser->name[0]) {
            int len = (int)strlen(ser->name);
            fr->nleg++;
            if (len > fr->maxname) fr->maxname = len;
        }
        for (k = 0; k < ser->n; k++) {
            double x = ser->x[k], y = ser->y[k];
            if (!isfinite(x) || !lt__plot_ok(y, q->log_y)) continue;
            if (x < xlo) xlo = x;
            if (x > xhi) xhi = x;
            if (y < ylo) ylo = y;
            if (y > yhi) yhi = y;
        }
    }
    if (xlo > xhi) { xlo = 0; xhi = 1; }                    /* no points yet: an empty box */
    if (ylo > yhi) { ylo = q->log_y ? 0.1 : 0; yhi = 1; }
    lt__plot_range(&fr->ax, xlo, xhi, q->lim[0], q->lim[1], 0);
    lt__plot_range(&fr->ay, ylo, yhi, q->lim[2], q->lim[3], q->log_y);

    for (k = 0; k < fr->ay.n_ticks; k++) {
        int len;
        lt__plot_label(lab, sizeof lab, fr->ay.ticks[k], &fr->ay);
        len = (int)strlen(lab);
        if (len > maxlab) maxlab = len;
    }
    L = (q->ylabel ? 26 : 8) + 7.0 * maxlab + 8;
    fr->W = p->width - L - R;
    fr->H = p->height - T - Bm;
    fr->x0 = L;
    fr->y0 = oy + T;
}

/* The panel's clip path, title, grid with tick labels, box and axis labels. */
static void lt__plot_draw_axes(FILE *f, const lt__pframe *fr) {
    const lt__ppanel *q = fr->q;
    const lt__paxis *ax = &fr->ax, *ay = &fr->ay;
    double x0 = fr->x0, y0 = fr->y0, W = fr->W, H = fr->H;
    int k;
    char lab[64];
    fprintf(f, "<g>\n<clipPath id=\"lt-clip-%d\"><rect x=\"", fr->id);
    lt__plot_num(f, x0); fputs("\" y=\"", f); lt__plot_num(f, y0);
    fputs("\" width=\"", f); lt__plot_num(f, W); fputs("\" height=\"", f); lt__plot_num(f, H);
    fputs("\"/></clipPath>\n", f);
    if (q->title) {
        fputs("<text x=\"", f); lt__plot_num(f, x0 + W / 2); fputs("\" y=\"", f); lt__plot_num(f, fr->oy + 22);
        fputs("\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", f);
        lt__plot_text(f, q->title);
        fputs("</text>\n", f);
    }
    /* grid and ticks: the x axis's, then the y axis's */
    for (k = 0; k < ax->n_ticks + ay->n_ticks; k++) {
        int isx = k < ax->n_ticks;
        double v = isx ? ax->ticks[k] : ay->ticks[k - ax->n_ticks];
        double px = isx ? lt__plot_px(ax, v, x0, W, 0) : lt__plot_px(ay, v, y0, H, 1);
        lt__plot_label(lab, sizeof lab, v, isx ? ax : ay);
        if (isx) {
            fputs("<line x1=\"", f); lt__plot_num(f, px); fputs("\" y1=\"", f); lt__plot_num(f, y0);
            fputs("\" x2=\"", f); lt__plot_num(f, px); fputs("\" y2=\"", f); lt__plot_num(f, y0 + H + 5);
            fputs("\" stroke=\"#e4e4e4\"/>\n<text x=\"", f); lt__plot_num(f, px);
            fputs("\" y=\"", f); lt__plot_num(f, y0 + H + 18); fputs("\" text-anchor=\"middle\">", f);
        } else {
            fputs("<line x1=\"", f); lt__plot_num(f, x0 - 5); fputs("\" y1=\"", f); lt__plot_num(f, px);
            fputs("\" x2=\"", f); lt__plot_num(f, x0 + W); fputs("\" y2=\"", f); lt__plot_num(f, px);
            fputs("\" stroke=\"#e4e4e4\"/>\n<text x=\"", f); lt__plot_num(f, x0 - 8);
            fputs("\" y=\"", f); lt__plot_num(f, px + 4); fputs("\" text-anchor=\"end\">", f);
        }
        lt__plot_text(f, lab);
        fputs("</text>\n", f);
    }
    fputs("<rect x=\"", f); lt__plot_num(f, x0); fputs("\" y=\"", f); lt__plot_num(f, y0);
    fputs("\" width=\"", f); lt__plot_num(f, W); fputs("\" height=\"", f); lt__plot_num(f, H);
    fputs("\" fill=\"none\" stroke=\"#444\"/>\n", f);
    if (q->xlabel) {
        fputs("<text x=\"", f); lt__plot_num(f, x0 + W / 2); fputs("\" y=\"", f); lt__plot_num(f, y0 + H + 38);
        fputs("\" text-anchor=\"middle\">", f);
        lt__plot_text(f, q->xlabel);
        fputs("</text>\n", f);
    }
    if (q->ylabel) {
        fputs("<text transform=\"translate(16,", f); lt__plot_num(f, y0 + H / 2);
        fputs(") rotate(-90)\" text-anchor=\"middle\">", f);
        lt__plot_text(f, q->ylabel);
        fputs("</text>\n", f);
    }
}

/* The lines: one path per series, a new subpath after every skipped point; lone points
   (nothing finite on either side) get a dot, since a one-point path draws nothing. */
static void lt__plot_draw_lines(const lt_plot *p, FILE *f, const lt__pframe *fr) {
    const lt__paxis *ax = &fr->ax, *ay = &fr->ay;
    double x0 = fr->x0, y0 = fr->y0, W = fr->W, H = fr->H;
    int s, k, log_y = fr->q->log_y;
    for (s = 0, k = 0; s < p->n_series; s++) {
        const lt__pseries *ser = &p->series[s];
        const char *color, *dash;
        int i, open = 0, idx;
        if (ser->panel != fr->id) continue;
        idx = k++;
        color = lt__plot_colors[idx % 8];
        dash = lt__plot_dashes[(idx / 8) % 4];
        fprintf(f, "<g clip-path=\"url(#lt-clip-%d)\" stroke=\"%s\" fill=\"%s\">\n<path fill=\"none\" "
                   "stroke-width=\"1.8\" stroke-linejoin=\"round\" stroke-linecap=\"round\"", fr->id, color, color);
        if (dash[0]) fprintf(f, " stroke-dasharray=\"%s\"", dash);
        fputs(" d=\"", f);
        for (i = 0; i < ser->n; i++) {
            int ok = isfinite(ser->x[i]) && lt__plot_ok(ser->y[i], log_y);
            if (!ok) { open = 0; continue; }
            fputs(open ? " L" : " M", f);
            lt__plot_num(f, lt__plot_px(ax, ser->x[i], x0, W, 0));
            fputc(' ', f);
            lt__plot_num(f, lt__plot_px(ay, ser->y[i], y0, H, 1));
            open = 1;
        }
        fputs("\"/>\n", f);
        for (i = 0; i < ser->n; i++) {
            int prev = i > 0 && isfinite(ser->x[i - 1]) && lt__plot_ok(ser->y[i - 1], log_y);
            int next = i + 1 < ser->n && isfinite(ser->x[i + 1]) && lt__plot_ok(ser->y[i + 1], log_y);
            if (prev || next || !isfinite(ser->x[i]) || !lt__plot_ok(ser->y[i], log_y)) continue;
            fputs("<circle stroke=\"none\" r=\"3\" cx=\"", f); lt__plot_num(f, lt__plot_px(ax, ser->x[i], x0, W, 0));
            fputs("\" cy=\"", f); lt__plot_num(f, lt__plot_px(ay, ser->y[i], y0, H, 1));
            fputs("\"/>\n", f);
        }
        fputs("</g>\n", f);
    }
}

/* The legend: inside the box, in the corner that covers the fewest points (top right first). */
static void lt__plot_draw_legend(const lt_plot *p, FILE *f, const lt__pframe *fr) {
    const lt__paxis *ax = &fr->ax, *ay = &fr->ay;
    double x0 = fr->x0, y0 = fr->y0, W = fr->W, H = fr->H;
    double lw = 36 + 7.0 * fr->maxname, lh = 8 + 18.0 * fr->nleg, lx = x0 + W - lw - 8, ly = y0 + 8;
    int s, k, nleg, corner, best = -1, fewest = 0;
    for (corner = 0; corner < 4; corner++) {
        double cx = corner & 1 ? x0 + 8 : x0 + W - lw - 8, cy = corner & 2 ? y0 + H - lh - 8 : y0 + 8;
        int i, inside = 0;
        for (s = 0; s < p->n_series; s++) {
            const lt__pseries *ser = &p->series[s];
            if (ser->panel != fr->id) continue;
            for (i = 0; i < ser->n; i++) {
                double px, py;
                if (!isfinite(ser->x[i]) || !lt__plot_ok(ser->y[i], fr->q->log_y)) continue;
                px = lt__plot_px(ax, ser->x[i], x0, W, 0);
                py = lt__plot_px(ay, ser->y[i], y0, H, 1);
                inside += px >= cx - 4 && px <= cx + lw + 4 && py >= cy - 4 && py <= cy + lh + 4;
            }
        }
        if (best < 0 || inside < fewest) { best = corner; fewest = inside; lx = cx; ly = cy; }
    }
    fputs("<rect x=\"", f); lt__plot_num(f, lx); fputs("\" y=\"", f); lt__plot_num(f, ly);
    fputs("\" width=\"", f); lt__plot_num(f, lw); fputs("\" height=\"", f); lt__plot_num(f, lh);
    fputs("\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#bbb\"/>\n", f);
    for (s = 0, k = 0, nleg = 0; s < p->n_series; s++) {
        const lt__pseries *ser = &p->series[s];
        int idx;
        double ry;
        if (ser->panel != fr->id) continue;
        idx = k++;
        if (!ser->name || !ser->name[0]) continue;
        ry = ly + 16 + 18.0 * nleg++;
        fprintf(f, "<line stroke=\"%s\" stroke-width=\"2.5\"", lt__plot_colors[idx % 8]);
        if (lt__plot_dashes[(idx / 8) % 4][0]) fprintf(f, " stroke-dasharray=\"%s\"", lt__plot_dashes[(idx / 8) % 4]);
        fputs(" x1=\"", f); lt__plot_num(f, lx + 6); fputs("\" y1=\"", f); lt__plot_num(f, ry - 4);
        fputs("\" x2=\"", f); lt__plot_num(f, lx + 26); fputs("\" y2=\"", f); lt__plot_num(f, ry - 4);
        fputs("\"/>\n<text x=\"", f); lt__plot_num(f, lx + 31); fputs("\" y=\"", f); lt__plot_num(f, ry);
        fputs("\">", f);
        lt__plot_text(f, ser->name);
        fputs("</text>\n", f);
    }
}

/* One panel at vertical offset oy.  id makes its clip path's name unique in the file. */
static void lt__plot_draw_panel(lt_plot *p, FILE *f, int id, double oy) {
    lt__pframe fr;
    lt__plot_frame(p, id, oy, &fr);
    lt__plot_draw_axes(f, &fr);
    lt__plot_draw_lines(p, f, &fr);
    if (fr.nleg > 0) lt__plot_draw_legend(p, f, &fr);
    fputs("</g>\n", f);
}

LTRAIN_DEF lt_status lt_plot_save(lt_plot *p, const char *path) {
    char *tmp, *target = NULL, why[900];
    size_t len;
    FILE *f;
    int i, bad;
    if (!p) return LT_ERR_ARG;
    if (p->status != LT_OK) return p->status;
    if (!path || !path[0]) return lt__plot_fail(p, LT_ERR_ARG, "lt_plot_save: no path given");
    /* a device, FIFO, directory..: refused; a symbolic link: its target is written (@@CKPT) */
    if ((i = lt__dest(path, LT_DEST_REPLACE, &target, why, sizeof why)) <= 0)
        return lt__plot_fail(p, i < 0 ? LT_ERR_NOMEM : LT_ERR_ARG, "lt_plot_save: %s", why);
    path = target;
    len = strlen(path);
    tmp = (char *)LT__MALLOC(len + 5);
    if (!tmp) { LT__FREE(target); return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_save: out of memory"); }
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp", 5);
    f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        lt__plot_fail(p, LT_ERR_IO, "lt_plot_save: cannot create %s: %s (hint: does its directory exist?)", tmp,
                      strerror(e));
        LT__FREE(tmp);
        LT__FREE(target);
        return p->status;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"%d\" fill=\"#222\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            p->width, p->height * p->n_panels, p->width, p->height * p->n_panels, LT__PLOT_FONT);
    for (i = 0; i < p->n_panels; i++) lt__plot_draw_panel(p, f, i, (double)p->height * i);
    fputs("</svg>\n", f);
    bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        remove(tmp);
        lt__plot_fail(p, LT_ERR_IO, "lt_plot_save: writing %s failed (disk full?)", tmp);
    } else if (rename(tmp, path) != 0) {
        /* Windows refuses to rename over an existing file: remove it first, then retry */
        if (remove(path) != 0 || rename(tmp, path) != 0) {
            int e = errno;
            remove(tmp);
            lt__plot_fail(p, LT_ERR_IO, "lt_plot_save: cannot rename %s to %s: %s", tmp, path, strerror(e));
        }
    }
    LT__FREE(tmp);
    LT__FREE(target);
    return p->status;
}

/* ---- src/22_dist.h ---- */
/* ==== @@DIST  data parallel over MPI: ranks, bucketed gradient all-reduce, sharding, checkpoints = */
/* Holds: lt_dist: ranks, the bucketed gradient all-reduce (fp32, ordered, bf16), each
   rank's share of the batches, checkpoints saved by rank 0.
   Calls: @@CORE, @@HALF, @@TENSOR, @@DATA, @@TRAIN; MPI under LTRAIN_MPI. */
/* Under LTRAIN_MPI (compile with mpicc) the functions talk to MPI; without it they are the
   single-process case (rank 0 of 1), so user code needs no #ifdef.

   Gradient averaging, per bucket of the flat gradient (cfg.bucket_bytes of fp32, so a model is a
   few large messages rather than one per tensor):
     LT_REDUCE_F32          MPI_Allreduce(MPI_IN_PLACE, MPI_SUM) then *= 1/N.  For large messages
                            Open MPI runs a ring (reduce-scatter + all-gather), so each rank sends
                            2 (N-1)/N * 4 bytes per gradient float; every rank receives the same
                            bits (each slice is summed once, then copied around).
     LT_REDUCE_F32_ORDERED  the same traffic written out as two collectives: MPI_Alltoall gives
     LT_REDUCE_BF16         rank j slice j of every rank's bucket; j sums its N rows in fp32 in
                            rank order 0..N-1, scales by 1/N, and MPI_Allgather hands every rank
                            the finished slices.  The sum order is fixed by the ranks, not by
                            MPI's algorithm.  BF16 sends bf16 both ways (2 (N-1)/N * 2 bytes per
                            float): each gradient is rounded to bf16 once before sending (round to
                            nearest even, lt_f32_to_bf16), the N values are added in fp32 (a sum
                            of bf16s is never rounded to bf16 along the way, unlike a bf16
                            MPI_SUM where every partial sum would be), and the mean is rounded to
                            bf16 once more.  So the result is within 2^-8 relative of the fp32
                            mean of the rounded inputs, and identical on every rank.
   Not overlapped with backward: the tape's backward has no "this parameter's gradient is final"
   hook, and the tied wte gradient is only final at the very end of backward anyway; the
   reduction runs once per optimizer step (micro-batches accumulate locally, as DDP's no_sync).
   A barrier before it splits the time into waiting for the slowest rank (stats.wait_ms: load
   imbalance) and the transfer itself (stats.last_ms); it costs one message latency per step. */

#ifdef LTRAIN_MPI
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  /* the C API only, also when the header is compiled as C++ */
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#endif

struct lt_dist {
    lt_ctx *ctx;
    lt_dist_config cfg;
    lt_dist_stats stats;
    int rank, world;
    size_t bucket;              /* floats per bucket */
    float *stage;               /* one bucket (unpacked parameters), then the slice sums */
    unsigned char *wire, *wire2;/* ordered modes: world * slice elements each */
    size_t stage_cap, wire_cap;
    int32_t *gin, *gtg;         /* the global batch, for lt_dist_loader_next */
    size_t gcap;
    char desc[96];
#ifdef LTRAIN_MPI
    MPI_Comm comm;              /* our own copy of MPI_COMM_WORLD: our messages never meet the user's */
#endif
};

/* ---- @@DIST.process  process level -------------------------------------------------------- */
#ifdef LTRAIN_MPI
static int lt__mpi_live(void) {
    int i = 0, f = 0;
    MPI_Initialized(&i);
    if (i) MPI_Finalized(&f);
    return i && !f;
}
#endif

LTRAIN_DEF lt_status lt_dist_init(int *argc, char ***argv) {
#ifdef LTRAIN_MPI
    int inited = 0, fin = 0, provided = 0;
    MPI_Initialized(&inited);
    if (inited) return LT_OK;
    MPI_Finalized(&fin);
    if (fin) return LT_ERR_STATE;
    /* funneled: OpenMP threads compute, only the thread that called init talks to MPI */
    return MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS ? LT_OK : LT_ERR_STATE;
#else
    (void)argc;
    (void)argv;
    return LT_OK;
#endif
}

LTRAIN_DEF void lt_dist_finalize(void) {
#ifdef LTRAIN_MPI
    if (lt__mpi_live()) MPI_Finalize();
#endif
}

LTRAIN_DEF int lt_dist_rank(void) {
#ifdef LTRAIN_MPI
    int r = 0;
    if (lt__mpi_live()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
#else
    return 0;
#endif
}

LTRAIN_DEF int lt_dist_world(void) {
#ifdef LTRAIN_MPI
    int n = 1;
    if (lt__mpi_live()) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
#else
    return 1;
#endif
}

LTRAIN_DEF void lt_dist_abort(int code) {
#ifdef LTRAIN_MPI
    if (lt__mpi_live() && lt_dist_world() > 1) MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
#else
    (void)code;
#endif
}

/* ---- @@DIST.reducer  the reducer ---------------------------------------------------------- */
LTRAIN_DEF lt_dist_config lt_dist_defaults(void) {
    lt_dist_config c;
    memset(&c, 0, sizeof c);
    c.bucket_bytes = (size_t)16 << 20;
    c.mode = LT_REDUCE_F32;
    return c;
}

#ifdef LTRAIN_MPI
/* An MPI call failed: its message on ctx. */
static lt_status lt__dist_mpi_error(lt_dist *d, int rc, const char *what) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
    return lt_set_error(d->ctx, LT_ERR_STATE, "%s (rank %d of %d): %s", what, d->rank, d->world, s);
}
#endif

LTRAIN_DEF lt_dist *lt_dist_create(lt_ctx *ctx, const lt_dist_config *cfg) {
    lt_dist *d;
    const char *mode;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (ctx->device != LT_CPU) {
        lt_set_error(ctx, LT_ERR_STATE, "lt_dist_create: data parallel runs on LT_CPU contexts only (this one is on %s)",
                     lt_device_name(ctx->device));
        return NULL;
    }
    if (cfg && (cfg->mode < LT_REDUCE_F32 || cfg->mode > LT_REDUCE_BF16)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_dist_create: mode %d is not an lt_reduce_mode", (int)cfg->mode);
        return NULL;
    }
#ifndef LTRAIN_MPI
    {   /* a plain build started by mpirun: every copy would train alone and write the same files */
        const char *env[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"};
        int i;
        for (i = 0; i < 3; i++) {
            const char *v = getenv(env[i]);
            if (v && atoi(v) > 1) {
                lt_set_error(ctx, LT_ERR_STATE, "lt_dist_create: this program was built without LTRAIN_MPI but runs as "
                             "one of %s MPI processes (%s): each would train alone (hint: compile with mpicc "
                             "-DLTRAIN_MPI, e.g. make mpi)", v, env[i]);
                return NULL;
            }
        }
    }
#else
    if (!lt__mpi_live()) {
        lt_set_error(ctx, LT_ERR_STATE, "lt_dist_create: MPI is not initialised (hint: call lt_dist_init(&argc, &argv) "
                     "at the start of main)");
        return NULL;
    }
#endif
    d = (lt_dist *)LT__MALLOC(sizeof *d);
    if (!d) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_dist_create: out of memory"); return NULL; }
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->cfg = cfg ? *cfg : lt_dist_defaults();
    d->rank = lt_dist_rank();
    d->world = lt_dist_world();
    /* at least 1024 floats, at most 2^28 (MPI counts are int; 1 GiB messages gain nothing) */
    d->bucket = d->cfg.bucket_bytes / sizeof(float);
    if (d->bucket < 1024) d->bucket = 1024;
    if (d->bucket > ((size_t)1 << 28)) d->bucket = (size_t)1 << 28;
    d->cfg.bucket_bytes = d->bucket * sizeof(float);
#ifdef LTRAIN_MPI
    {
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &d->comm);
        if (rc != MPI_SUCCESS) {
            lt__dist_mpi_error(d, rc, "lt_dist_create: MPI_Comm_dup");
            LT__FREE(d);
            return NULL;
        }
        MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    }
#endif
    mode = d->cfg.mode == LT_REDUCE_BF16 ? "bf16" : d->cfg.mode == LT_REDUCE_F32_ORDERED ? "fp32 rank-ordered" : "fp32";
    if (d->world > 1)
        snprintf(d->desc, sizeof d->desc, "%d ranks (MPI), %s all-reduce in %.3g MiB buckets", d->world, mode,
                 (double)d->cfg.bucket_bytes / (1 << 20));
    else
#ifdef LTRAIN_MPI
        snprintf(d->desc, sizeof d->desc, "1 rank (MPI): no all-reduce");
#else
        snprintf(d->desc, sizeof d->desc, "1 process (built without LTRAIN_MPI)");
#endif
    return d;
}

LTRAIN_DEF void lt_dist_destroy(lt_dist *d) {
    if (!d) return;
#ifdef LTRAIN_MPI
    if (lt__mpi_live()) MPI_Comm_free(&d->comm);
#endif
    LT__FREE(d->stage);
    LT__FREE(d->wire);
    LT__FREE(d->wire2);
    LT__FREE(d->gin);
    LT__FREE(d->gtg);
    LT__FREE(d);
}

LTRAIN_DEF lt_dist_stats lt_dist_get_stats(const lt_dist *d) {
    lt_dist_stats s;
    if (d) return d->stats;
    memset(&s, 0, sizeof s);
    return s;
}

LTRAIN_DEF const char *lt_dist_describe(const lt_dist *d) { return d ? d->desc : "no lt_dist"; }


#ifdef LTRAIN_MPI
/* Floats [lo, lo+n) of the gradient seen as one concatenation (parameters in creation order),
   copied into buf (to_grad 0) or back (to_grad 1): for parameters that were never packed. */
static void lt__dist_grad_copy(lt_ctx *ctx, size_t lo, size_t n, float *buf, int to_grad) {
    size_t off = 0, hi = lo + n;
    int i;
    for (i = 0; i < ctx->n_params && off < hi; i++) {
        lt_tensor *t = ctx->params[i];
        size_t tn = (size_t)t->n;
        if (off + tn > lo) {
            size_t a = lo > off ? lo - off : 0, b = (hi < off + tn ? hi : off + tn) - off;
            float *q = buf + (off + a - lo);
            if (!t->grad) { if (!to_grad) memset(q, 0, (b - a) * sizeof(float)); }
            else if (to_grad) memcpy(t->grad + a, q, (b - a) * sizeof(float));
            else memcpy(q, t->grad + a, (b - a) * sizeof(float));
        }
        off += tn;
    }
}

/* Room for a bucket of nb floats: stage (nb), acc (one slice), two wire buffers (world slices). */
static lt_status lt__dist_reserve(lt_dist *d, size_t nb) {
    size_t slice = (nb + (size_t)d->world - 1) / (size_t)d->world;
    size_t sf = nb + slice, wb = (size_t)d->world * slice * sizeof(float);
    if (sf > d->stage_cap) {
        LT__FREE(d->stage);
        d->stage_cap = 0;
        if (!(d->stage = (float *)LT__MALLOC(sf * sizeof(float))))
            return lt_set_error(d->ctx, LT_ERR_NOMEM, "lt_dist_allreduce_grads: out of memory for a %zu-float bucket", nb);
        d->stage_cap = sf;
    }
    if (d->cfg.mode != LT_REDUCE_F32 && wb > d->wire_cap) {
        LT__FREE(d->wire);
        LT__FREE(d->wire2);
        d->wire_cap = 0;
        d->wire = (unsigned char *)LT__MALLOC(wb);
        d->wire2 = (unsigned char *)LT__MALLOC(wb);
        if (!d->wire || !d->wire2)
            return lt_set_error(d->ctx, LT_ERR_NOMEM, "lt_dist_allreduce_grads: out of memory for %zu wire bytes", wb);
        d->wire_cap = wb;
    }
    return LT_OK;
}

/* One bucket p[nb] -> its mean over ranks, summed in rank order by the slice's owner (see the
   section comment): MPI_Alltoall, fixed-order fp32 sum of the N rows, MPI_Allgather. */
static int lt__dist_reduce_ordered(lt_dist *d, float *p, size_t nb) {
    int N = d->world, bf16 = d->cfg.mode == LT_REDUCE_BF16, rc, j;
    size_t c = (nb + (size_t)N - 1) / (size_t)N, i, esz = bf16 ? sizeof(uint16_t) : sizeof(float);
    float *acc = d->stage + d->stage_cap - c, inv = 1.0f / (float)N;
    MPI_Datatype ty = bf16 ? MPI_UINT16_T : MPI_FLOAT;
    if (bf16) lt_f32_to_bf16_array(p, (uint16_t *)d->wire, nb);
    else memcpy(d->wire, p, nb * sizeof(float));
    memset(d->wire + nb * esz, 0, ((size_t)N * c - nb) * esz);   /* the last slice's padding */
    rc = MPI_Alltoall(d->wire, (int)c, ty, d->wire2, (int)c, ty, d->comm);
    if (rc != MPI_SUCCESS) return rc;
    /* row j of wire2: rank j's values of this rank's slice */
    if (bf16) {
        const uint16_t *r = (const uint16_t *)d->wire2;
        for (i = 0; i < c; i++) acc[i] = lt_bf16_to_f32(r[i]);
        for (j = 1; j < N; j++)
            for (i = 0; i < c; i++) acc[i] += lt_bf16_to_f32(r[(size_t)j * c + i]);
        for (i = 0; i < c; i++) acc[i] *= inv;
        lt_f32_to_bf16_array(acc, (uint16_t *)d->wire, c);
    } else {
        const float *r = (const float *)d->wire2;
        for (i = 0; i < c; i++) acc[i] = r[i];
        for (j = 1; j < N; j++)
            for (i = 0; i < c; i++) acc[i] += r[(size_t)j * c + i];
        for (i = 0; i < c; i++) acc[i] *= inv;
        memcpy(d->wire, acc, c * sizeof(float));
    }
    rc = MPI_Allgather(d->wire, (int)c, ty, d->wire2, (int)c, ty, d->comm);
    if (rc != MPI_SUCCESS) return rc;
    if (bf16) lt_bf16_to_f32_array((const uint16_t *)d->wire2, p, nb);
    else memcpy(p, d->wire2, nb * sizeof(float));
    return MPI_SUCCESS;
}

/* FNV-1a over the parameters' 32-bit words (and their sizes): equal weights, equal hash. */
static uint64_t lt__dist_hash(lt_ctx *ctx) {
    uint64_t h = 0xcbf29ce484222325ULL;
    int i;
    for (i = 0; i < ctx->n_params; i++) {
        const lt_tensor *t = ctx->params[i];
        int64_t k;
        h = (h ^ (uint64_t)t->n) * 0x100000001b3ULL;
        for (k = 0; k < t->n; k++) {
            uint32_t w;
            memcpy(&w, &t->data[k], sizeof w);
            h = (h ^ w) * 0x100000001b3ULL;
        }
    }
    return h;
}

static int lt__dist_bcast_floats(lt_dist *d, float *p, size_t n) {
    size_t lo;
    for (lo = 0; lo < n; lo += d->bucket) {
        size_t nb = n - lo < d->bucket ? n - lo : d->bucket;
        int rc = MPI_Bcast(p + lo, (int)nb, MPI_FLOAT, 0, d->comm);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}
#endif /* LTRAIN_MPI */

LTRAIN_DEF lt_status lt_dist_allreduce_grads(lt_dist *d) {
    if (!d) return LT_ERR_ARG;
    if (lt_failed(d->ctx)) return d->ctx->status;
    d->stats.calls++;
    if (d->world == 1) return LT_OK;
#ifdef LTRAIN_MPI
    {
        lt_ctx *ctx = d->ctx;
        size_t n = 0, lo, nb, i;
        float *span = lt_params_grad_span(ctx, &n), inv = 1.0f / (float)d->world;
        double t0 = MPI_Wtime(), ms, elem = d->cfg.mode == LT_REDUCE_BF16 ? 2.0 : 4.0;
        int buckets = 0, rc = MPI_Barrier(d->comm);   /* so that the time below is the transfer alone */
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_allreduce_grads");
        ms = (MPI_Wtime() - t0) * 1e3;
        d->stats.wait_ms = ms;
        d->stats.total_wait_ms += ms;
        t0 = MPI_Wtime();
        if (!span) n = lt_params_count(ctx);
        if (lt__dist_reserve(d, n < d->bucket ? n : d->bucket) != LT_OK) return ctx->status;
        for (lo = 0; lo < n; lo += nb) {
            float *p;
            nb = n - lo < d->bucket ? n - lo : d->bucket;
            p = span ? span + lo : d->stage;
            if (!span) lt__dist_grad_copy(ctx, lo, nb, p, 0);
            if (d->cfg.mode == LT_REDUCE_F32) {
                rc = MPI_Allreduce(MPI_IN_PLACE, p, (int)nb, MPI_FLOAT, MPI_SUM, d->comm);
                for (i = 0; i < nb; i++) p[i] *= inv;
            } else {
                rc = lt__dist_reduce_ordered(d, p, nb);
            }
            if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_allreduce_grads");
            if (!span) lt__dist_grad_copy(ctx, lo, nb, p, 1);
            buckets++;
        }
        ms = (MPI_Wtime() - t0) * 1e3;
        d->stats.last_ms = ms;
        d->stats.total_ms += ms;
        d->stats.floats = n;
        d->stats.buckets = buckets;
        d->stats.wire_bytes = 2.0 * (d->world - 1) / d->world * (double)n * elem;
    }
#endif
    return LT_OK;
}

LTRAIN_DEF double lt_dist_mean(lt_dist *d, double x) {
    if (!d || d->world == 1) return x;
#ifdef LTRAIN_MPI
    {
        double s = 0;
        int rc = MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, d->comm);
        if (rc != MPI_SUCCESS) { lt__dist_mpi_error(d, rc, "lt_dist_mean"); return NAN; }
        return s / d->world;
    }
#else
    return x;
#endif
}

LTRAIN_DEF lt_status lt_dist_barrier(lt_dist *d) {
    if (!d) return LT_ERR_ARG;
#ifdef LTRAIN_MPI
    if (d->world > 1) {
        int rc = MPI_Barrier(d->comm);
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_barrier");
    }
#endif
    return d->ctx->status;
}

LTRAIN_DEF lt_status lt_dist_broadcast_params(lt_dist *d) {
    if (!d) return LT_ERR_ARG;
    if (lt_failed(d->ctx) || d->world == 1) return d->ctx->status;
#ifdef LTRAIN_MPI
    {
        lt_ctx *ctx = d->ctx;
        size_t n;
        float *grads = lt_params_grad_span(ctx, &n);
        int rc = MPI_SUCCESS, i;
        if (grads) rc = lt__dist_bcast_floats(d, grads - n, n);   /* the packed block: data, then grads */
        for (i = 0; !grads && i < ctx->n_params && rc == MPI_SUCCESS; i++)
            rc = lt__dist_bcast_floats(d, ctx->params[i]->data, (size_t)ctx->params[i]->n);
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_broadcast_params");
    }
#endif
    return d->ctx->status;
}

LTRAIN_DEF lt_status lt_dist_check_sync(lt_dist *d) {
    if (!d) return LT_ERR_ARG;
    if (lt_failed(d->ctx) || d->world == 1) return d->ctx->status;
#ifdef LTRAIN_MPI
    {
        uint64_t h = lt__dist_hash(d->ctx), in[2], out[2];
        int rc;
        in[0] = h; in[1] = ~h;   /* max of h and of ~h: the largest and (complemented) the smallest */
        rc = MPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, d->comm);
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_check_sync");
        if (out[0] != ~out[1])
            return lt_set_error(d->ctx, LT_ERR_STATE, "lt_dist_check_sync: the %d ranks hold different weights (hash "
                                "%016llx on rank %d; range %016llx..%016llx) (hint: create the model from the same "
                                "seed on every rank, or call lt_dist_broadcast_params)", d->world,
                                (unsigned long long)h, d->rank, (unsigned long long)~out[1],
                                (unsigned long long)out[0]);
    }
#endif
    return d->ctx->status;
}

/* Reads the loader's B and B*T: lt_loader is defined in @@DATA above. */
/* ---- @@DIST.data  each rank's batches, checkpoints ------------------------------------------- */
LTRAIN_DEF lt_status lt_dist_loader_next(lt_dist *d, lt_loader *ld, int32_t *inputs, int32_t *targets) {
    size_t bt, gbt;
    lt_status s;
    if (!d || !ld) return LT_ERR_ARG;
    if (d->world == 1) return lt_loader_next(ld, inputs, targets);
    if (ld->B % d->world != 0)
        return lt_set_error(d->ctx, LT_ERR_ARG, "lt_dist_loader_next: the loader's batch has %d rows, which %d ranks "
                            "cannot share (hint: open it with B = world * B per rank)", ld->B, d->world);
    gbt = (size_t)ld->bt;
    bt = gbt / (size_t)d->world;
    if (gbt > d->gcap) {
        LT__FREE(d->gin);
        LT__FREE(d->gtg);
        d->gcap = 0;
        d->gin = (int32_t *)LT__MALLOC(gbt * sizeof(int32_t));
        d->gtg = (int32_t *)LT__MALLOC(gbt * sizeof(int32_t));
        if (!d->gin || !d->gtg)
            return lt_set_error(d->ctx, LT_ERR_NOMEM, "lt_dist_loader_next: out of memory for a %zu-token batch", gbt);
        d->gcap = gbt;
    }
    s = lt_loader_next(ld, d->gin, d->gtg);
    if (s != LT_OK) return s;
    if (inputs) memcpy(inputs, d->gin + (size_t)d->rank * bt, bt * sizeof(int32_t));
    if (targets) memcpy(targets, d->gtg + (size_t)d->rank * bt, bt * sizeof(int32_t));
    return LT_OK;
}

LTRAIN_DEF lt_status lt_dist_checkpoint_save(lt_dist *d, lt_gpt *gpt, lt_optim *opt, const lt_train_state *st,
                                             const char *note, const char *path) {
    lt_status s = LT_OK;
    if (!d) return LT_ERR_ARG;
    if (d->rank == 0) s = lt_checkpoint_save(gpt, opt, st, note, path);
#ifdef LTRAIN_MPI
    if (d->world > 1) {
        int code = (int)s, rc = MPI_Bcast(&code, 1, MPI_INT, 0, d->comm);   /* the others wait here */
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_checkpoint_save");
        if (d->rank != 0 && code != LT_OK)
            return lt_set_error(d->ctx, (lt_status)code, "lt_dist_checkpoint_save: rank 0 could not write %s (%s)",
                                path ? path : "(null)", lt_status_name((lt_status)code));
    }
#endif
    return d->rank == 0 ? s : d->ctx->status;
}

LTRAIN_DEF lt_status lt_dist_checkpoint_load(lt_dist *d, lt_gpt *gpt, lt_optim *opt, lt_train_state *st,
                                             const char *path) {
    lt_status s;
    if (!d) return LT_ERR_ARG;
    s = lt_checkpoint_load(gpt, opt, st, path);
#ifdef LTRAIN_MPI
    if (d->world > 1) {
        int mine = (int)s, worst = 0, rc = MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, d->comm);
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_checkpoint_load");
        if (worst != LT_OK && s == LT_OK)
            return lt_set_error(d->ctx, (lt_status)worst, "lt_dist_checkpoint_load: %s: another rank could not load it "
                                "(hint: every machine must see the file)", path ? path : "(null)");
        if (worst != LT_OK) return s;
        return lt_dist_check_sync(d);
    }
#endif
    return s;
}

/* ---- src/23_cuda.h ---- */
/* ==== @@CUDA  the CUDA backend: device arena, kernels, cuBLAS, graphs (LTRAIN_CUDA) ============== */
/* Holds: the CUDA backend: it fills the device table (ctx->dev) with the device arena, kernels
   for every op, cuBLAS matmuls, optimizer steps, clipping, unscaling and CUDA-graph replay.
   Calls: @@CORE, @@TENSOR, @@OPS, @@TAPE, @@COMPILE, @@OPTIM; CUDA, cuBLAS. */
/* How the backend fits the library.  lt_set_device(ctx, LT_CUDA) gives the context a CUDA stream,
   a cuBLAS handle and a device arena; from then on:
     - values (op outputs, gradients, saved buffers) come from the device arena (lt__values_alloc):
       one list of cudaMalloc'ed chunks, bump-allocated and reset with the host arena, so after the
       first step nothing is allocated (never managed memory).  Headers and tape records stay in
       the host arena: the tape is walked on the host and launches kernels in order on one stream;
     - parameters keep their host copies (the packed block of lt_params_pack: initialisation and
       checkpoints work on them) and get one device mirror of that block, [all data | all grads];
       a kernel turns a host pointer into the block into its device twin (lt__cu_p).  Which copy
       is current is one state (host newer / same / device newer): the first device op after a
       host write uploads, lt_sync_params downloads;
     - the parts above reach the backend only through the device seam (lt__device, @@CORE): the
       table lt__cuda_device at the end of this part, which lt_set_device installs in ctx->dev;
     - its op kernels are the ones below, by row of the op table (forward and backward of every op;
       the CPU kernel is their reference, tests/test_cuda.c compares them); ids, targets and lengths
       are copied in by lt__node_ids; lt_item, the clipping norm and the scaler's inf flag are the
       only values that come back during a step;
     - optimizers: AdamW (one fused pass over every parameter) and SGD run on the device with their
       state there; the others run on the host copies (slow, correct);
     - lt_compile records the step into a CUDA graph and replays it (below, "graphs").
   Kernels accumulate in a fixed order (no float atomics), so a run repeats bit for bit; they
   differ from the CPU only in summation order (fp32 tolerances in tests/test_cuda.c). */

#ifndef LTRAIN_CUDA
/* A build without the backend: LT_CPU is the only device (no table is ever installed, so the
   seam's calls in the parts above are all skipped). */
LTRAIN_DEF lt_status lt_set_device(lt_ctx *ctx, lt_device dev) {
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return ctx->status;
    if (dev == LT_CPU) return LT_OK;
    if (dev == LT_CUDA)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_set_device: cuda: this build has no CUDA backend (hint: compile "
                            "with nvcc -x cu -DLTRAIN_CUDA ... -lcublas, e.g. make cuda; see README \"CUDA\")");
    return lt_set_error(ctx, LT_ERR_ARG, "lt_set_device: %d is not an lt_device (LT_CPU or LT_CUDA)", (int)dev);
}
LTRAIN_DEF int lt_cuda_available(void) { return 0; }

#else /* LTRAIN_CUDA */

#ifndef __CUDACC__
#error "ltrain.h: LTRAIN_CUDA needs the implementation compiled by nvcc as CUDA: nvcc -x cu -DLTRAIN_IMPLEMENTATION -DLTRAIN_CUDA ... -lcublas"
#endif
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>

#define LT__CU_CHUNK_MIN ((size_t)64 << 20)
#define LT__CU_T 256               /* threads per block of the elementwise kernels */

typedef struct lt__cu_chunk {
    struct lt__cu_chunk *next;
    size_t cap, used;
    unsigned char *mem;            /* cudaMalloc'ed */
} lt__cu_chunk;

enum { LT__CU_HOST_NEWER = 0, LT__CU_SAME, LT__CU_DEV_NEWER };   /* which copy of a mirrored block is current */

struct lt__cuda {
    int dev;
    cudaStream_t stream;
    cublasHandle_t blas;
    void *blas_ws;                 /* cuBLAS workspace (set explicitly, so graph capture allocates nothing) */
    int tf32;
    lt__cu_chunk *first, *head;    /* the device arena */
    size_t used, peak, reserved;
    float *pdev;                   /* the parameter block's mirror: 2*pfloats (data | grads) */
    const float *phost;            /* ... of this host block */
    size_t pfloats;
    int pstate;
    unsigned char *pin;            /* pinned host staging for ids (graph replays copy from here) */
    size_t pin_cap, pin_used;
    unsigned char *pin_old[24];    /* outgrown staging blocks: a recorded graph may still copy from them */
    int n_pin_old;
    double *red;                   /* pinned: reduction results coming back */
    float *row;                    /* lt_gpt_generate's logits row */
    size_t row_cap;
    char info[200];
    struct lt__cu_graph *rec;      /* non-NULL while lt_compile records a graph */
};

static const lt__device *lt__cu_table(void);   /* the backend's table of the device seam (the end of @@CUDA) */

/* A CUDA error becomes the context's error, naming what failed and the device. */
static int lt__cu_ok(lt_ctx *ctx, cudaError_t e, const char *what) {
    if (e == cudaSuccess) return 1;
    lt_set_error(ctx, e == cudaErrorMemoryAllocation ? LT_ERR_NOMEM : LT_ERR_STATE, "%s on cuda: %s (%s)", what,
                 cudaGetErrorString(e), cudaGetErrorName(e));
    return 0;
}
static int lt__cu_blas_ok(lt_ctx *ctx, cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return 1;
    lt_set_error(ctx, s == CUBLAS_STATUS_ALLOC_FAILED ? LT_ERR_NOMEM : LT_ERR_STATE, "%s on cuda: cuBLAS status %d",
                 what, (int)s);
    return 0;
}
/* After a launch: a bad configuration shows at once, a fault at the next synchronisation. */
#define LT__CU_LAUNCHED(ctx, what) lt__cu_ok(ctx, cudaGetLastError(), what)

/* -- @@CUDA.arena  device arena ---------------------------------------------------------------- */
static void *lt__cu_alloc(lt_ctx *ctx, size_t bytes) {
    lt__cuda *cu = ctx->cuda;
    lt__cu_chunk *c;
    size_t need;
    if (!lt_add_size(bytes, LT__ALIGN - 1, &need)) goto oom;
    need &= ~(size_t)(LT__ALIGN - 1);
    if (need == 0) need = LT__ALIGN;
    for (c = cu->head; c; c = c->next)
        if (c->cap - c->used >= need) {
            void *p = c->mem + c->used;
            c->used += need;
            cu->head = c;
            cu->used += need;
            if (cu->used > cu->peak) cu->peak = cu->used;
            return p;
        }
    c = (lt__cu_chunk *)LT__MALLOC(sizeof(lt__cu_chunk));
    if (!c) goto oom;
    c->cap = need > LT__CU_CHUNK_MIN ? need : LT__CU_CHUNK_MIN;
    if (cudaMalloc((void **)&c->mem, c->cap) != cudaSuccess) {
        (void)cudaGetLastError();
        LT__FREE(c);
        goto oom;
    }
    c->used = need;
    c->next = NULL;
    if (!cu->first) cu->first = c;
    else { lt__cu_chunk *t = cu->first; while (t->next) t = t->next; t->next = c; }
    cu->head = c;
    cu->reserved += c->cap;
    cu->used += need;
    if (cu->used > cu->peak) cu->peak = cu->used;
    return c->mem;
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "out of device memory: the cuda arena could not grow by %zu bytes (it holds "
                 "%zu) (hint: a smaller batch or sequence length needs less)", bytes, ctx->cuda->reserved);
    return NULL;
}

/* Pinned host bytes (ids on their way in), reset with the arena. */
static void *lt__cu_pinned(lt_ctx *ctx, size_t bytes) {
    lt__cuda *cu = ctx->cuda;
    size_t need = (bytes + 63) & ~(size_t)63;
    void *p;
    if (cu->pin_used + need > cu->pin_cap) {
        /* grow: earlier pointers stay valid until the next reset, so the old block is kept alive
           only by a synchronisation before it is freed */
        size_t cap = 2 * (cu->pin_used + need) > ((size_t)1 << 20) ? 2 * (cu->pin_used + need) : ((size_t)1 << 20);
        unsigned char *nb;
        if (cu->rec) {   /* a graph being recorded holds addresses into the old block */
            lt_set_error(ctx, LT_ERR_STATE, "lt_compile on cuda: the step's inputs outgrew the staging buffer "
                         "while recording; run the step once eagerly before compiling");
            return NULL;
        }
        if (!lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "staging ids")) return NULL;
        if (!lt__cu_ok(ctx, cudaMallocHost((void **)&nb, cap), "pinned staging buffer")) return NULL;
        if (cu->pin && cu->n_pin_old < 24) cu->pin_old[cu->n_pin_old++] = cu->pin;   /* freed with the context */
        else if (cu->pin) cudaFreeHost(cu->pin);
        cu->pin = nb;
        cu->pin_cap = cap;
        cu->pin_used = 0;
    }
    p = cu->pin + cu->pin_used;
    cu->pin_used += need;
    return p;
}

static void lt__cu_reset(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    lt__cu_chunk *c;
    for (c = cu->first; c; c = c->next) c->used = 0;
    cu->head = cu->first;
    cu->used = 0;
    /* the pinned staging bytes are rewritten by the next step: its copies must be done */
    if (cu->pin_used && !cu->rec) { cudaStreamSynchronize(cu->stream); cu->pin_used = 0; }
}

static size_t lt__cu_arena_bytes(const lt_ctx *ctx) { return ctx->cuda->reserved; }

/* -- @@CUDA.params  parameters: the device mirror of the packed block ---------------------------- */
static float *lt__cu_p(lt_ctx *ctx, const float *p) {
    lt__cuda *cu = ctx->cuda;
    if (p && cu->pdev && p >= cu->phost && p < cu->phost + 2 * cu->pfloats) return cu->pdev + (p - cu->phost);
    return (float *)p;
}

static void lt__cu_download_params(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    if (cu->pstate != LT__CU_DEV_NEWER || !cu->pdev) return;
    if (lt__cu_ok(ctx, cudaMemcpyAsync((void *)cu->phost, cu->pdev, 2 * cu->pfloats * sizeof(float),
                                       cudaMemcpyDeviceToHost, cu->stream), "copying the parameters to the host") &&
        lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "copying the parameters to the host"))
        cu->pstate = LT__CU_SAME;
}

/* Before device work that touches parameters: the mirror exists, matches the host block's layout
   (parameters made since are packed in) and holds the current values. */
static int lt__cu_params_ready(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    size_t total = lt_params_count(ctx);
    if (lt_failed(ctx)) return 0;
    if (total == 0) return 1;
    if (!ctx->param_block || ctx->param_floats != total || cu->phost != ctx->param_block || cu->pfloats != total) {
        lt__cu_download_params(ctx);   /* the device may hold newer values of the old block */
        if (!ctx->param_block || ctx->param_floats != total)
            if (lt_params_pack(ctx) != LT_OK) return 0;
        if (cu->pdev) cudaFree(cu->pdev);
        cu->pdev = NULL;
        cu->phost = NULL;
        if (!lt__cu_ok(ctx, cudaMalloc((void **)&cu->pdev, 2 * total * sizeof(float)), "the parameter block"))
            return 0;
        cu->phost = ctx->param_block;
        cu->pfloats = total;
        cu->pstate = LT__CU_HOST_NEWER;
    }
    if (cu->pstate == LT__CU_HOST_NEWER) {
        if (!lt__cu_ok(ctx, cudaMemcpyAsync(cu->pdev, cu->phost, 2 * total * sizeof(float), cudaMemcpyHostToDevice,
                                            cu->stream), "copying the parameters to the device"))
            return 0;
        cu->pstate = LT__CU_SAME;
    }
    return 1;
}

static void lt__cu_sync_params(lt_ctx *ctx) { lt__cu_download_params(ctx); }   /* lt_sync_params */
static void lt__cu_params_changed(lt_ctx *ctx) { ctx->cuda->pstate = LT__CU_HOST_NEWER; }

/* A tensor's values / gradient on the device (parameters: their mirror).  The gradient of an arena
   tensor is made (zeroed) on first use, as lt__grad does on the host. */
static float *lt__cu_data(lt_ctx *ctx, const lt_tensor *t) { return t ? lt__cu_p(ctx, t->data) : NULL; }
static float *lt__cu_grad(lt_ctx *ctx, lt_tensor *t) {
    if (!t || !t->requires_grad) return NULL;
    if (!t->grad) {
        t->grad = (float *)lt__cu_alloc(ctx, (size_t)t->n * sizeof(float));
        if (!t->grad) return NULL;
        if (!lt__cu_ok(ctx, cudaMemsetAsync(t->grad, 0, (size_t)t->n * sizeof(float), ctx->cuda->stream), "zeroing a gradient"))
            return NULL;
    }
    if (ctx->cuda->pdev && t->grad >= ctx->cuda->phost && t->grad < ctx->cuda->phost + 2 * ctx->cuda->pfloats)
        ctx->cuda->pstate = LT__CU_DEV_NEWER;   /* a parameter's gradient is about to change */
    return lt__cu_p(ctx, t->grad);
}
/* Every device kernel starts here: parameters on the device, no earlier error. */
static int lt__cu_begin(lt__node *nd) { return !lt_failed(nd->ctx) && lt__cu_params_ready(nd->ctx); }
#define LT__CU_STREAM(nd) ((nd)->ctx->cuda->stream)

static unsigned lt__cu_blocks(int64_t n) {
    int64_t b = (n + LT__CU_T - 1) / LT__CU_T;
    return (unsigned)(b < 1 ? 1 : b > 8192 ? 8192 : b);   /* grid-stride loops cover the rest */
}
#define LT__CU_LOOP(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* -- small host-facing helpers ----------------------------------------------------------------- */
__global__ void lt__k_fill(float *y, float v, int64_t n) { LT__CU_LOOP(i, n) y[i] = v; }

static void lt__cu_fill_values(lt_ctx *ctx, float *dst, const float *src, size_t n) {
    if (!dst) return;
    if (src) lt__cu_ok(ctx, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyHostToDevice, ctx->cuda->stream),
                       "lt_tensor_from: copying the data in");
    else lt__cu_ok(ctx, cudaMemsetAsync(dst, 0, n * sizeof(float), ctx->cuda->stream), "lt_tensor_new: zeroing");
}

/* lt_fill on a device tensor (no context at hand: the legacy stream, which waits for the others). */
static void lt__cu_fill_const(lt_tensor *t, float v) {
    lt__k_fill<<<lt__cu_blocks(t->n), LT__CU_T>>>(t->data, v, t->n);
    cudaDeviceSynchronize();
}

static float lt__cu_item(const lt_tensor *t) {
    float v = (float)NAN;
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, t->data) != cudaSuccess || a.type != cudaMemoryTypeDevice) {
        (void)cudaGetLastError();
        return t->data[0];   /* a view of a parameter: its host copy */
    }
    if (cudaMemcpy(&v, t->data, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess) { (void)cudaGetLastError(); return (float)NAN; }
    return v;
}

static const float *lt__cu_host_row(lt_ctx *ctx, const float *dev, size_t n) {
    lt__cuda *cu = ctx->cuda;
    if (cu->row_cap < n) {
        float *r = (float *)LT__REALLOC(cu->row, n * sizeof(float));
        if (!r) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_generate: out of memory"); return NULL; }
        cu->row = r;
        cu->row_cap = n;
    }
    if (!lt__cu_ok(ctx, cudaMemcpyAsync(cu->row, dev, n * sizeof(float), cudaMemcpyDeviceToHost, cu->stream), "reading logits") ||
        !lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "reading logits"))
        return NULL;
    return cu->row;
}

/* lt_tensor_read, its arguments checked */
static lt_status lt__cu_read(lt_ctx *ctx, const lt_tensor *t, int grad, float *out) {
    const float *src = grad ? t->grad : t->data;
    if (ctx->cuda->pdev && src >= ctx->cuda->phost && src < ctx->cuda->phost + 2 * ctx->cuda->pfloats) {
        lt__cu_download_params(ctx);   /* a parameter (or a view of one): its host copy, made current */
        if (!lt_failed(ctx)) memcpy(out, src, (size_t)t->n * sizeof(float));
        return ctx->status;
    }
    if (t->device != LT_CUDA) { memcpy(out, src, (size_t)t->n * sizeof(float)); return LT_OK; }
    if (lt__cu_ok(ctx, cudaMemcpyAsync(out, src, (size_t)t->n * sizeof(float), cudaMemcpyDeviceToHost, ctx->cuda->stream),
                  "lt_tensor_read"))
        lt__cu_ok(ctx, cudaStreamSynchronize(ctx->cuda->stream), "lt_tensor_read");
    return ctx->status;
}

static void lt__cu_synchronize(lt_ctx *ctx) {   /* lt_device_synchronize */
    lt__cu_ok(ctx, cudaStreamSynchronize(ctx->cuda->stream), "lt_device_synchronize");
}

static void lt__cu_set_tf32(lt_ctx *ctx, int on) {
    ctx->cuda->tf32 = on != 0;
    cublasSetMathMode(ctx->cuda->blas, on ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
}

LTRAIN_DEF int lt_cuda_available(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) { (void)cudaGetLastError(); return 0; }
    return n > 0;
}

static const char *lt__cu_describe(lt_ctx *ctx) { return ctx->cuda->info; }

static void lt__cu_free_all(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    lt__cu_chunk *c = cu->first;
    if (cu->stream) cudaStreamSynchronize(cu->stream);
    while (c) { lt__cu_chunk *n = c->next; cudaFree(c->mem); LT__FREE(c); c = n; }
    if (cu->pdev) cudaFree(cu->pdev);
    if (cu->blas_ws) cudaFree(cu->blas_ws);
    if (cu->pin) cudaFreeHost(cu->pin);
    while (cu->n_pin_old > 0) cudaFreeHost(cu->pin_old[--cu->n_pin_old]);
    if (cu->red) cudaFreeHost(cu->red);
    if (cu->blas) cublasDestroy(cu->blas);
    if (cu->stream) cudaStreamDestroy(cu->stream);
    LT__FREE(cu->row);
    LT__FREE(cu);
    ctx->cuda = NULL;
    ctx->dev = NULL;
}
static void lt__cu_destroy(lt_ctx *ctx) {
    if (ctx->cuda) lt__cu_free_all(ctx);
}

LTRAIN_DEF lt_status lt_set_device(lt_ctx *ctx, lt_device dev) {
    lt__cuda *cu;
    struct cudaDeviceProp prop;
    int n = 0, id = 0;
    const char *env;
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return ctx->status;
    if (dev != LT_CPU && dev != LT_CUDA)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_set_device: %d is not an lt_device (LT_CPU or LT_CUDA)", (int)dev);
    if (dev == ctx->device) return LT_OK;
    if (ctx->tape_len > 0 && !ctx->tape_done)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_set_device: %d ops are recorded on the tape: change the device "
                            "between steps (hint: lt_reset first)", ctx->tape_len);
    if (dev == LT_CPU) {   /* back to the host: parameters come home, the device memory goes */
        if (lt_sync_params(ctx) != LT_OK) return ctx->status;
        lt_reset(ctx);
        lt__cu_free_all(ctx);
        ctx->device = LT_CPU;
        return LT_OK;
    }
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        cudaError_t e = cudaGetLastError();
        return lt_set_error(ctx, LT_ERR_STATE, "lt_set_device: cuda: no CUDA device is available (%s)",
                            n < 1 && e == cudaSuccess ? "none found" : cudaGetErrorString(e));
    }
    env = getenv("LTRAIN_CUDA_DEVICE");   /* which GPU, as CUDA numbers them (default 0) */
    if (env && *env) id = atoi(env);
    if (id < 0 || id >= n)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_set_device: LTRAIN_CUDA_DEVICE is %d: there are %d devices", id, n);
    cu = (lt__cuda *)LT__MALLOC(sizeof(lt__cuda));
    if (!cu) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_set_device: out of memory");
    memset(cu, 0, sizeof *cu);
    cu->dev = id;
    ctx->cuda = cu;
    ctx->dev = lt__cu_table();   /* the device seam: the parts above call the backend through it */
    lt__devices[LT_CUDA] = ctx->dev;
    if (!lt__cu_ok(ctx, cudaSetDevice(id), "lt_set_device") ||
        !lt__cu_ok(ctx, cudaGetDeviceProperties(&prop, id), "lt_set_device") ||
        !lt__cu_ok(ctx, cudaStreamCreateWithFlags(&cu->stream, cudaStreamNonBlocking), "lt_set_device: a stream") ||
        !lt__cu_blas_ok(ctx, cublasCreate(&cu->blas), "lt_set_device: cuBLAS") ||
        !lt__cu_blas_ok(ctx, cublasSetStream(cu->blas, cu->stream), "lt_set_device: cuBLAS stream") ||
        !lt__cu_ok(ctx, cudaMalloc(&cu->blas_ws, (size_t)32 << 20), "lt_set_device: cuBLAS workspace") ||
        !lt__cu_blas_ok(ctx, cublasSetWorkspace(cu->blas, cu->blas_ws, (size_t)32 << 20), "lt_set_device: cuBLAS workspace") ||
        !lt__cu_ok(ctx, cudaMallocHost((void **)&cu->red, 4096 * sizeof(double)), "lt_set_device: pinned memory")) {
        lt__cu_free_all(ctx);
        return ctx->status;
    }
    cublasSetMathMode(cu->blas, CUBLAS_DEFAULT_MATH);   /* fp32 products in fp32 (lt_set_tf32 to change) */
    snprintf(cu->info, sizeof cu->info, "%.100s (sm_%d%d, %.0f GiB, %d SMs)", prop.name, prop.major, prop.minor,
             (double)prop.totalGlobalMem / 1073741824.0, prop.multiProcessorCount);
    lt_reset(ctx);
    ctx->device = LT_CUDA;
    cu->pstate = LT__CU_HOST_NEWER;
    return LT_OK;
}

/* -- @@CUDA.reductions  reductions -------------------------------------------------------------- */
/* The sum of v over a block (double, fixed order: the same on every run).  blockDim.x must be a
   multiple of 32, at most 1024; every thread gets the result. */
__device__ double lt__cu_block_sum(double v) {
    __shared__ double part[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5, o;
    for (o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    __syncthreads();   /* part[] may still be read by a previous call */
    if (lane == 0) part[w] = v;
    __syncthreads();
    v = 0;
    if (w == 0) {
        v = lane < nw ? part[lane] : 0.0;
        for (o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) part[0] = v;
    }
    __syncthreads();
    return part[0];
}
__device__ float lt__cu_block_max(float v) {
    __shared__ float part[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5, o;
    for (o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
    __syncthreads();
    if (lane == 0) part[w] = v;
    __syncthreads();
    if (w == 0) {
        v = lane < nw ? part[lane] : -INFINITY;
        for (o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
        if (lane == 0) part[0] = v;
    }
    __syncthreads();
    return part[0];
}
__device__ double lt__cu_warp_sum(double v) {
    int o;
    for (o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

#define LT__CU_RB 256   /* blocks of the first reduction stage */
/* Stage 1 of Σ f(a, b) over n elements: block k's partial sum into part[k] (double).
   mode 0: a_i;  1: (a_i - b_i)²;  2: a_i² */
__global__ void lt__k_reduce(const float *a, const float *b, int64_t n, int mode, double *part) {
    double s = 0;
    LT__CU_LOOP(i, n) {
        double x = a[i];
        if (mode == 1) x -= b[i];
        s += mode == 0 ? x : x * x;
    }
    s = lt__cu_block_sum(s);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}
/* Stage 2: the k partials of each of nseg segments in order; out[seg] = (float)(sum * scale)
   (dout: the double sums as well, or NULL) */
__global__ void lt__k_reduce_finish(const double *part, int k, double scale, float *out, double *dout) {
    double s = 0;
    int j;
    for (j = threadIdx.x; j < k; j += blockDim.x) s += part[(int64_t)blockIdx.x * k + j];
    s = lt__cu_block_sum(s);
    if (threadIdx.x == 0) {
        if (out) out[blockIdx.x] = (float)(s * scale);
        if (dout) dout[blockIdx.x] = s;
    }
}
/* out[0] = scale · Σ f(a, b) (one value, deterministic) */
static void lt__cu_reduce(lt_ctx *ctx, const float *a, const float *b, int64_t n, int mode, double scale, float *out) {
    double *part = (double *)lt__cu_alloc(ctx, LT__CU_RB * sizeof(double));
    if (!part) return;
    lt__k_reduce<<<LT__CU_RB, LT__CU_T, 0, ctx->cuda->stream>>>(a, b, n, mode, part);
    lt__k_reduce_finish<<<1, LT__CU_T, 0, ctx->cuda->stream>>>(part, LT__CU_RB, scale, out, NULL);
    LT__CU_LAUNCHED(ctx, "a reduction");
}

/* Column sums of an (R, C) matrix, deterministic in two stages: rows in chunks of `rc`, one partial
   per (chunk, column), then the chunks in order.
     out[j] += sign · round?(Σ_r x[r,j] · (y ? y[r,j] : 1))
   (round16: 0 none, else the lt_dtype to round the sum to before it is added: bias gradients of
   the 16-bit ops) */
__global__ void lt__k_colsum1(const float *x, const float *y, int64_t R, int64_t C, int64_t rc, float *part) {
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, r0 = (int64_t)blockIdx.y * rc, r1 = r0 + rc, r;
    float s = 0;
    if (j >= C) return;
    if (r1 > R) r1 = R;
    for (r = r0; r < r1; r++) s += y ? x[r * C + j] * y[r * C + j] : x[r * C + j];
    part[(int64_t)blockIdx.y * C + j] = s;
}
__device__ float lt__cu_round16(float x, int prec);
__global__ void lt__k_colsum2(const float *part, int64_t nchunk, int64_t C, float sign, int round16, float *out) {
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, k;
    float s = 0;
    if (j >= C) return;
    for (k = 0; k < nchunk; k++) s += part[k * C + j];
    if (round16) s = lt__cu_round16(s, round16);
    out[j] += sign * s;
}
static void lt__cu_colsum(lt_ctx *ctx, const float *x, const float *y, int64_t R, int64_t C, float sign, int round16,
                          float *out) {
    int64_t rc = R <= 64 ? R : (R + 255) / 256 > 32 ? (R + 255) / 256 : 32, nchunk = (R + rc - 1) / rc;
    float *part = (float *)lt__cu_alloc(ctx, (size_t)(nchunk * C) * sizeof(float));
    dim3 g1((unsigned)((C + 127) / 128), (unsigned)nchunk);
    if (!part) return;
    lt__k_colsum1<<<g1, 128, 0, ctx->cuda->stream>>>(x, y, R, C, rc, part);
    lt__k_colsum2<<<(unsigned)((C + 127) / 128), 128, 0, ctx->cuda->stream>>>(part, nchunk, C, sign, round16, out);
    LT__CU_LAUNCHED(ctx, "a column sum");
}

/* -- 16-bit values --------------------------------------------------------------------------- */
/* Bit for bit the host conversions (@@HALF): bf16 rounds to nearest even on the bits, every NaN
   gives 0xFFFF; fp16 is IEEE binary16 (the hardware conversion rounds to nearest even), NaN gives
   sign | 0x7E00. */
__device__ unsigned short lt__cu_to_bf16(float x) {
    unsigned u = __float_as_uint(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFu;
    return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
__device__ float lt__cu_from_bf16(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
__device__ unsigned short lt__cu_to_f16(float x) {
    unsigned u = __float_as_uint(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)(((u >> 16) & 0x8000u) | 0x7E00u);
    return __half_as_ushort(__float2half_rn(x));
}
__device__ float lt__cu_from_f16(unsigned short h) { return __half2float(__ushort_as_half(h)); }
__device__ float lt__cu_round16(float x, int prec) {
    return prec == LT_F16 ? lt__cu_from_f16(lt__cu_to_f16(x)) : lt__cu_from_bf16(lt__cu_to_bf16(x));
}
__global__ void lt__k_to16(const float *x, unsigned short *h, int64_t n, int prec) {
    LT__CU_LOOP(i, n) h[i] = prec == LT_F16 ? lt__cu_to_f16(x[i]) : lt__cu_to_bf16(x[i]);
}
__global__ void lt__k_round16(float *x, int64_t n, int prec) { LT__CU_LOOP(i, n) x[i] = lt__cu_round16(x[i], prec); }
/* acc: y += round16(t)   (else y = round16(t + round16(bias[col]))) */
__global__ void lt__k_epilogue16(float *y, const float *t, const float *bias, int64_t n, int64_t cols, int acc, int prec) {
    LT__CU_LOOP(i, n) {
        if (acc) y[i] += lt__cu_round16(t[i], prec);
        else y[i] = lt__cu_round16(y[i] + (bias ? lt__cu_round16(bias[i % cols], prec) : 0.0f), prec);
    }
}

/* -- @@CUDA.gemm  GEMM through cuBLAS ------------------------------------------------------------- */
/* Row-major C (M,N) = alpha·op(A)·op(B) + beta·C is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: cuBLAS gets
   B first.  nb batches with strides sA, sB, sC (sB = 0: B shared).  prec LT_F32: fp32 inputs
   (TF32 tensor cores only after lt_set_tf32); LT_BF16 / LT_F16: A and B are 16-bit arrays, C
   float32 with float32 accumulation (cublasGemmEx, tensor cores). */
static void lt__cu_gemm(lt_ctx *ctx, const char *who, int prec, int ta, int tb, int64_t M, int64_t N, int64_t K,
                        float alpha, const void *A, int64_t lda, int64_t sA, const void *B, int64_t ldb, int64_t sB,
                        float beta, float *C, int64_t ldc, int64_t sC, int64_t nb) {
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType_t dt = prec == LT_F32 ? CUDA_R_32F : prec == LT_F16 ? CUDA_R_16F : CUDA_R_16BF;
    cublasComputeType_t ct = prec == LT_F32 ? (ctx->cuda->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F)
                                            : CUBLAS_COMPUTE_32F;
    cublasStatus_t s;
    if (lt_failed(ctx) || M == 0 || N == 0) return;
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX || nb > INT_MAX) {
        lt_set_error(ctx, LT_ERR_ARG, "%s on cuda: a product of %lld x %lld x %lld is too large for cuBLAS's int sizes",
                     who, (long long)M, (long long)N, (long long)K);
        return;
    }
    if (nb == 1)
        s = cublasGemmEx(ctx->cuda->blas, opb, opa, (int)N, (int)M, (int)K, &alpha, B, dt, (int)ldb, A, dt, (int)lda,
                         &beta, C, CUDA_R_32F, (int)ldc, ct, CUBLAS_GEMM_DEFAULT);
    else
        s = cublasGemmStridedBatchedEx(ctx->cuda->blas, opb, opa, (int)N, (int)M, (int)K, &alpha, B, dt, (int)ldb, sB,
                                       A, dt, (int)lda, sA, &beta, C, CUDA_R_32F, (int)ldc, sC, (int)nb, ct,
                                       CUBLAS_GEMM_DEFAULT);
    lt__cu_blas_ok(ctx, s, who);
}

/* -- @@CUDA.elementwise  elementwise ops --------------------------------------------------------- */
/* A CUDA kernel of an op that has none yet: a clear error, never a wrong result. */
static void lt__cu_missing(lt__node *nd, int bwd) {
    lt_set_error(nd->ctx, LT_ERR_STATE, "%s%s%s: the %s of op '%s' has no CUDA kernel yet (device cuda) (hint: run "
                 "this model on LT_CPU; README \"CUDA\" lists the ops the backend has)", nd->op->name,
                 nd->scope ? " in " : "", nd->scope ? nd->scope : "", bwd ? "backward" : "forward", nd->op->name);
}
#define LT__CU_MISSING(name)                                               \
    static void lt__##name##_fwd_cuda(lt__node *nd) { lt__cu_missing(nd, 0); } \
    static void lt__##name##_bwd_cuda(lt__node *nd) { lt__cu_missing(nd, 1); }

/* reshape: the view shares its input's memory (device or a parameter's host address, which the
   kernels translate); dx += dy */
__global__ void lt__k_axpy(float *y, const float *x, float s, int64_t n) { LT__CU_LOOP(i, n) y[i] += s * x[i]; }
static void lt__reshape_fwd_cuda(lt__node *nd) {
    if (lt__cu_begin(nd)) nd->out->data = nd->in[0]->data;   /* after packing: the parameter's final address */
}
static void lt__reshape_bwd_cuda(lt__node *nd) {
    float *gx, *gy;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    gy = lt__cu_p(nd->ctx, nd->out->grad);
    lt__k_axpy<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, gy, 1.0f, nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "reshape");
}

/* add, sub, mul: y_i = a_i ∘ b_(i mod nb) */
__global__ void lt__k_binary(float *y, const float *a, const float *b, int64_t n, int64_t nb, int op) {
    LT__CU_LOOP(i, n) {
        float u = a[i], v = b[i % nb];
        y[i] = op == 0 ? u + v : op == 1 ? u - v : u * v;
    }
}
/* da += dy (add, sub) or dy·b (mul) */
__global__ void lt__k_binary_da(float *ga, const float *gy, const float *b, int64_t n, int64_t nb, int op) {
    LT__CU_LOOP(i, n) ga[i] += op == 2 ? gy[i] * b[i % nb] : gy[i];
}
static void lt__cu_binary_fwd(lt__node *nd, int op) {
    lt_ctx *ctx = nd->ctx;
    if (!lt__cu_begin(nd)) return;
    lt__k_binary<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, lt__cu_data(ctx, nd->in[0]), lt__cu_data(ctx, nd->in[1]), nd->out->n, nd->in[1]->n, op);
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
/* db += ±Σ_rows dy (add, sub) or Σ_rows dy·a (mul), as column sums of the (n/nb, nb) view */
static void lt__cu_binary_bwd(lt__node *nd, int op) {
    lt_ctx *ctx = nd->ctx;
    float *ga, *gb, *gy;
    int64_t n = nd->out->n, nb = nd->in[1]->n;
    if (!lt__cu_begin(nd)) return;
    ga = lt__cu_grad(ctx, nd->in[0]);
    gb = lt__cu_grad(ctx, nd->in[1]);
    gy = lt__cu_p(ctx, nd->out->grad);
    if (ga)
        lt__k_binary_da<<<lt__cu_blocks(n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(ga, gy, lt__cu_data(ctx, nd->in[1]), n, nb, op);
    if (gb) lt__cu_colsum(ctx, gy, op == 2 ? lt__cu_data(ctx, nd->in[0]) : NULL, n / nb, nb, op == 1 ? -1.0f : 1.0f, 0, gb);
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
static void lt__add_fwd_cuda(lt__node *nd) { lt__cu_binary_fwd(nd, 0); }
static void lt__add_bwd_cuda(lt__node *nd) { lt__cu_binary_bwd(nd, 0); }
static void lt__sub_fwd_cuda(lt__node *nd) { lt__cu_binary_fwd(nd, 1); }
static void lt__sub_bwd_cuda(lt__node *nd) { lt__cu_binary_bwd(nd, 1); }
static void lt__mul_fwd_cuda(lt__node *nd) { lt__cu_binary_fwd(nd, 2); }
static void lt__mul_bwd_cuda(lt__node *nd) { lt__cu_binary_bwd(nd, 2); }

/* scale: y = s·x, dx += s·dy */
__global__ void lt__k_scale(float *y, const float *x, float s, int64_t n) { LT__CU_LOOP(i, n) y[i] = s * x[i]; }
static void lt__scale_fwd_cuda(lt__node *nd) {
    if (!lt__cu_begin(nd)) return;
    lt__k_scale<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(nd->ctx, nd->in[0]),
                                                                                  (float)LT__SCALE_S(nd), nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "scale");
}
static void lt__scale_bwd_cuda(lt__node *nd) {
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_axpy<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, lt__cu_p(nd->ctx, nd->out->grad),
                                                                                (float)LT__SCALE_S(nd), nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "scale");
}

/* sum, mean: y = Σx (·1/n); dx_i += dy (·1/n), dy read on the device */
__global__ void lt__k_bcast_add(float *gx, const float *gy, float s, int64_t n) {
    float g = gy[0] * s;
    LT__CU_LOOP(i, n) gx[i] += g;
}
static void lt__cu_reduce_fwd(lt__node *nd, double scale) {
    if (!lt__cu_begin(nd)) return;
    lt__cu_reduce(nd->ctx, lt__cu_data(nd->ctx, nd->in[0]), NULL, nd->in[0]->n, 0, scale, nd->out->data);
}
static void lt__cu_reduce_bwd(lt__node *nd, float scale) {
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_bcast_add<<<lt__cu_blocks(nd->in[0]->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, nd->out->grad, scale, nd->in[0]->n);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__sum_fwd_cuda(lt__node *nd) { lt__cu_reduce_fwd(nd, 1.0); }
static void lt__sum_bwd_cuda(lt__node *nd) { lt__cu_reduce_bwd(nd, 1.0f); }
static void lt__mean_fwd_cuda(lt__node *nd) { lt__cu_reduce_fwd(nd, 1.0 / (double)nd->in[0]->n); }
static void lt__mean_bwd_cuda(lt__node *nd) { lt__cu_reduce_bwd(nd, 1.0f / (float)nd->in[0]->n); }

/* pointwise activations: the CPU kernels' formulas (@@OPS), with CUDA's tanhf/expf/erff.
   op: 0 gelu (tanh), 1 gelu (erf), 2 relu, 3 tanh, 4 sigmoid */
__device__ float lt__cu_act(float v, int op) {
    switch (op) {
    case 0: {   /* x·σ(2u), as lt__gelu_s */
        float u = 0.7978845608028654f * (v + 0.044715f * v * v * v), e = expf(-2.0f * fabsf(u)), r = 1.0f / (1.0f + e);
        return v * (u < 0.0f ? e * r : r);
    }
    case 1: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case 2: return v > 0 ? v : 0.0f;
    case 3: return tanhf(v);
    case 5: { float e = expf(-fabsf(v)); return v * (v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e)); }   /* silu */
    default: { float e = expf(-fabsf(v)); return v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e); }
    }
}
/* dy/dx from x (gelu, gelu_erf, relu, silu) or from y (tanh, sigmoid) */
__device__ float lt__cu_act_d(float v, float y, int op) {
    switch (op) {
    case 0: {
        float u = 0.7978845608028654f * (v + 0.044715f * v * v * v), e = expf(-2.0f * fabsf(u)), r = 1.0f / (1.0f + e);
        float s = u < 0.0f ? e * r : r;
        return s + 2.0f * v * (s - s * s) * 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * v * v);
    }
    case 1: return 0.5f * (1.0f + erff(v * 0.70710678118654752f)) + v * expf(-0.5f * v * v) * 0.3989422804014327f;
    case 2: return v > 0 ? 1.0f : 0.0f;
    case 3: return 1.0f - y * y;
    case 5: { float e = expf(-fabsf(v)), s = v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e); return s * (1.0f + v * (1.0f - s)); }
    default: return y * (1.0f - y);
    }
}
__global__ void lt__k_act(float *y, const float *x, int64_t n, int op) { LT__CU_LOOP(i, n) y[i] = lt__cu_act(x[i], op); }
__global__ void lt__k_act_bwd(float *gx, const float *gy, const float *x, const float *y, int64_t n, int op) {
    LT__CU_LOOP(i, n) {
        float d = lt__cu_act_d(x ? x[i] : 0.0f, y ? y[i] : 0.0f, op);
        gx[i] += op == 2 ? (x[i] > 0 ? gy[i] : 0.0f) : gy[i] * d;
    }
}
static void lt__cu_act_fwd(lt__node *nd, int op) {
    if (!lt__cu_begin(nd)) return;
    lt__k_act<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(nd->ctx, nd->in[0]),
                                                                               nd->out->n, op);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__cu_act_bwd(lt__node *nd, int op) {
    float *gx;
    int from_y = op == 3 || op == 4;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_act_bwd<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        gx, nd->out->grad, from_y ? NULL : lt__cu_data(nd->ctx, nd->in[0]), from_y ? nd->out->data : NULL, nd->out->n, op);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__gelu_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 0); }
static void lt__gelu_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 0); }
static void lt__gelu_erf_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 1); }
static void lt__gelu_erf_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 1); }
static void lt__relu_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 2); }
static void lt__relu_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 2); }
static void lt__tanh_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 3); }
static void lt__tanh_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 3); }
static void lt__sigmoid_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 4); }
static void lt__sigmoid_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 4); }
static void lt__silu_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 5); }
static void lt__silu_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 5); }

/* swiglu: y = silu(g)·u;  dg += dy·u·silu'(g), du += dy·silu(g) (gg == gu: one tensor, both add) */
__global__ void lt__k_swiglu(float *y, const float *g, const float *u, int64_t n) {
    LT__CU_LOOP(i, n) y[i] = lt__cu_act(g[i], 5) * u[i];
}
__global__ void lt__k_swiglu_bwd(float *gg, float *gu, const float *gy, const float *g, const float *u, int64_t n) {
    LT__CU_LOOP(i, n) {
        float d = gy[i];
        if (gg) gg[i] += d * u[i] * lt__cu_act_d(g[i], 0.0f, 5);
        if (gu) gu[i] += d * lt__cu_act(g[i], 5);
    }
}
static void lt__swiglu_fwd_cuda(lt__node *nd) {
    if (!lt__cu_begin(nd)) return;
    lt__k_swiglu<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_data(nd->ctx, nd->in[1]), nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "swiglu");
}
static void lt__swiglu_bwd_cuda(lt__node *nd) {
    float *gg, *gu;
    if (!lt__cu_begin(nd)) return;
    gg = lt__cu_grad(nd->ctx, nd->in[0]);
    gu = lt__cu_grad(nd->ctx, nd->in[1]);
    if (lt_failed(nd->ctx) || (!gg && !gu)) return;
    lt__k_swiglu_bwd<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        gg, gu, nd->out->grad, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_data(nd->ctx, nd->in[1]), nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "swiglu");
}

/* rope: the (T, D/2) tables of cos and sin (save[0]: c then s) as the CPU makes them (float32
   1/theta^(2i/D) and angle, cos and sin in double), then each pair (i, i+D/2) of each head turned
   by the angle (dir 1) or back (dir -1, backward: gx += ...) */
__global__ void lt__k_rope_tables(float *cs, int64_t T, int64_t D, int64_t pos0, float base) {
    int64_t half = D / 2;
    LT__CU_LOOP(k, T * half) {
        int64_t t = k / half, i = k % half;
        float e = (float)(2 * i) / (float)D, f = 1.0f / (float)pow((double)base, (double)e), ang = (float)(pos0 + t) * f;
        cs[t * half + i] = (float)cos((double)ang);
        cs[(T + t) * half + i] = (float)sin((double)ang);
    }
}
__global__ void lt__k_rope(float *y, const float *x, const float *cs, int64_t BT, int64_t T, int64_t H, int64_t D,
                           float dir, int add) {
    int64_t half = D / 2;
    LT__CU_LOOP(k, BT * H * half) {
        int64_t r = k / (H * half), h = k / half % H, i = k % half, t = r % T, o = r * H * D + h * D + i;
        float c = cs[t * half + i], sn = dir * cs[(T + t) * half + i], a = x[o], b = x[o + half];
        float ya = a * c - b * sn, yb = b * c + a * sn;
        if (add) { y[o] += ya; y[o + half] += yb; }
        else { y[o] = ya; y[o + half] = yb; }
    }
}
static void lt__rope_fwd_cuda(lt__node *nd) {
    int64_t B = nd->out->shape[0], T = nd->out->shape[1], H = LT__ROPE_H(nd), D = nd->out->shape[2] / H;
    if (!lt__cu_begin(nd)) return;
    lt__k_rope_tables<<<lt__cu_blocks(T * (D / 2)), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->save[0], T, D, LT__ROPE_POS0(nd),
                                                                                        (float)LT__ROPE_THETA(nd));
    lt__k_rope<<<lt__cu_blocks(B * T * H * (D / 2)), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, lt__cu_data(nd->ctx, nd->in[0]), nd->save[0], B * T, T, H, D, 1.0f, 0);
    LT__CU_LAUNCHED(nd->ctx, "rope");
}
static void lt__rope_bwd_cuda(lt__node *nd) {
    int64_t B = nd->out->shape[0], T = nd->out->shape[1], H = LT__ROPE_H(nd), D = nd->out->shape[2] / H;
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_rope<<<lt__cu_blocks(B * T * H * (D / 2)), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, nd->out->grad, nd->save[0], B * T,
                                                                                        T, H, D, -1.0f, 1);
    LT__CU_LAUNCHED(nd->ctx, "rope");
}

/* softmax / log-softmax over rows of V: one block per row (max, then Σ exp in double).
   A row of all -inf: softmax 0s, log-softmax -inf (as the CPU). */
__global__ void lt__k_softmax(float *y, const float *x, int64_t V, int logsm) {
    const float *xr = x + (int64_t)blockIdx.x * V;
    float *yr = y + (int64_t)blockIdx.x * V, m = -INFINITY;
    double s = 0;
    int64_t j;
    for (j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = lt__cu_block_max(m);
    if (m == -INFINITY) {
        for (j = threadIdx.x; j < V; j += blockDim.x) yr[j] = logsm ? -INFINITY : 0.0f;
        return;
    }
    for (j = threadIdx.x; j < V; j += blockDim.x) s += expf(xr[j] - m);
    s = lt__cu_block_sum(s);
    if (logsm) {
        float ls = (float)log(s);
        for (j = threadIdx.x; j < V; j += blockDim.x) yr[j] = (xr[j] - m) - ls;
    } else {
        for (j = threadIdx.x; j < V; j += blockDim.x) yr[j] = (float)(expf(xr[j] - m) / s);
    }
}
/* softmax: dx_j += y_j (dy_j - Σ dy·y);  log-softmax: dx_j += dy_j - exp(y_j) Σ dy */
__global__ void lt__k_softmax_bwd(float *gx, const float *gy, const float *y, int64_t V, int logsm) {
    const float *yr = y + (int64_t)blockIdx.x * V, *gr = gy + (int64_t)blockIdx.x * V;
    float *gxr = gx + (int64_t)blockIdx.x * V;
    double s = 0;
    int64_t j;
    if (logsm && yr[0] == -INFINITY) {   /* an all -inf row gets no gradient */
        float m = -INFINITY;
        for (j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, yr[j]);
        if (lt__cu_block_max(m) == -INFINITY) return;
    }
    for (j = threadIdx.x; j < V; j += blockDim.x) s += logsm ? (double)gr[j] : (double)gr[j] * yr[j];
    s = lt__cu_block_sum(s);
    for (j = threadIdx.x; j < V; j += blockDim.x)
        gxr[j] += logsm ? gr[j] - expf(yr[j]) * (float)s : yr[j] * (gr[j] - (float)s);
}
static void lt__cu_softmax_fwd(lt__node *nd, int logsm) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V;
    if (!lt__cu_begin(nd)) return;
    if (R > INT_MAX) { lt_set_error(nd->ctx, LT_ERR_ARG, "%s on cuda: %lld rows are too many", nd->op->name, (long long)R); return; }
    lt__k_softmax<<<(unsigned)R, LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(nd->ctx, nd->in[0]), V, logsm);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__cu_softmax_bwd(lt__node *nd, int logsm) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V;
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_softmax_bwd<<<(unsigned)R, LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, nd->out->grad, nd->out->data, V, logsm);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__softmax_fwd_cuda(lt__node *nd) { lt__cu_softmax_fwd(nd, 0); }
static void lt__softmax_bwd_cuda(lt__node *nd) { lt__cu_softmax_bwd(nd, 0); }
static void lt__log_softmax_fwd_cuda(lt__node *nd) { lt__cu_softmax_fwd(nd, 1); }
static void lt__log_softmax_bwd_cuda(lt__node *nd) { lt__cu_softmax_bwd(nd, 1); }

/* -- @@CUDA.layernorm  layernorm: one warp per row; sums in double as the CPU kernel ------------- */
/* x (R, C), w, b (C) -> y (R, C) = (x - mean)·rstd·w + b; saves mean, rstd (R).  mean NULL: rmsnorm
   (the mean taken as 0, no bias; saves rstd), as the CPU's kernels share the two. */
__global__ void lt__k_layernorm(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b,
                                int64_t R, int64_t C, float eps) {
    int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, j;
    int lane = threadIdx.x & 31;
    const float *xr;
    double sum = 0, var = 0;
    float m, s;
    if (r >= R) return;
    xr = x + r * C;
    for (j = lane; j < C; j += 32) sum += xr[j];
    m = mean ? (float)(lt__cu_warp_sum(sum) / (double)C) : 0.0f;
    for (j = lane; j < C; j += 32) { double d = (double)xr[j] - m; var += d * d; }
    s = (float)(1.0 / sqrt(lt__cu_warp_sum(var) / (double)C + eps));
    for (j = lane; j < C; j += 32) {
        float v = (xr[j] - m) * s;
        y[r * C + j] = (w ? v * w[j] : v) + (b ? b[j] : 0.0f);
    }
    if (lane == 0) { if (mean) mean[r] = m; rstd[r] = s; }
}
/* dx += rstd·(g - mean(g) - x̂·mean(g·x̂)),  g = dy·w, one warp per row (mean NULL: rmsnorm, without
   the mean(g) term) */
__global__ void lt__k_layernorm_dx(float *gx, const float *gy, const float *x, const float *w, const float *mean,
                                   const float *rstd, int64_t R, int64_t C) {
    int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, j;
    int lane = threadIdx.x & 31;
    double mg = 0, mgx = 0;
    float m, s;
    if (r >= R) return;
    m = mean ? mean[r] : 0.0f; s = rstd[r];
    for (j = lane; j < C; j += 32) {
        float xh = (x[r * C + j] - m) * s, g = w ? gy[r * C + j] * w[j] : gy[r * C + j];
        mg += g;
        mgx += (double)g * xh;
    }
    mg = mean ? lt__cu_warp_sum(mg) / (double)C : 0.0;
    mgx = lt__cu_warp_sum(mgx) / (double)C;
    for (j = lane; j < C; j += 32) {
        float xh = (x[r * C + j] - m) * s, g = w ? gy[r * C + j] * w[j] : gy[r * C + j];
        gx[r * C + j] += s * (g - (float)mg - xh * (float)mgx);
    }
}
/* dw += Σ_rows dy·x̂, db += Σ_rows dy: per chunk of rows, then the chunks in order */
__global__ void lt__k_layernorm_dwb1(const float *gy, const float *x, const float *mean, const float *rstd, int64_t R,
                                     int64_t C, int64_t rc, float *pw, float *pb) {
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, r0 = (int64_t)blockIdx.y * rc, r1 = r0 + rc, r;
    float sw = 0, sb = 0;
    if (j >= C) return;
    if (r1 > R) r1 = R;
    for (r = r0; r < r1; r++) {
        float g = gy[r * C + j];
        sw += g * ((x[r * C + j] - (mean ? mean[r] : 0.0f)) * rstd[r]);
        sb += g;
    }
    pw[(int64_t)blockIdx.y * C + j] = sw;
    pb[(int64_t)blockIdx.y * C + j] = sb;
}
/* layernorm (mean, rstd: save[0], save[1]) or rmsnorm (mean NULL, rstd: save[0]; no bias) */
static void lt__cu_norm_fwd(lt__node *nd, float *mean, float *rstd) {
    lt_ctx *ctx = nd->ctx;
    int64_t C = LT__LN_C(nd), R = nd->out->n / C;
    if (!lt__cu_begin(nd)) return;
    lt__k_layernorm<<<(unsigned)((R + 7) / 8), 256, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, mean, rstd, lt__cu_data(ctx, nd->in[0]), lt__cu_data(ctx, nd->in[1]),
        lt__cu_data(ctx, nd->in[2]), R, C, (float)LT__LN_EPS(nd));
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
static void lt__cu_norm_bwd(lt__node *nd, const float *mean, const float *rstd) {
    lt_ctx *ctx = nd->ctx;
    int64_t C = LT__LN_C(nd), R = nd->out->n / C;
    const float *x, *gy;
    float *gx, *gw, *gb;
    if (!lt__cu_begin(nd)) return;
    x = lt__cu_data(ctx, nd->in[0]);
    gy = nd->out->grad;
    gx = lt__cu_grad(ctx, nd->in[0]);
    gw = lt__cu_grad(ctx, nd->in[1]);
    gb = lt__cu_grad(ctx, nd->in[2]);
    if (lt_failed(ctx)) return;
    if (gx)
        lt__k_layernorm_dx<<<(unsigned)((R + 7) / 8), 256, 0, LT__CU_STREAM(nd)>>>(gx, gy, x, lt__cu_data(ctx, nd->in[1]),
                                                                                  mean, rstd, R, C);
    if (gw || gb) {
        int64_t rc = R <= 64 ? R : (R + 255) / 256 > 32 ? (R + 255) / 256 : 32, nchunk = (R + rc - 1) / rc;
        float *pw = (float *)lt__cu_alloc(ctx, (size_t)(2 * nchunk * C) * sizeof(float));
        dim3 g1((unsigned)((C + 127) / 128), (unsigned)nchunk);
        if (!pw) return;
        lt__k_layernorm_dwb1<<<g1, 128, 0, LT__CU_STREAM(nd)>>>(gy, x, mean, rstd, R, C, rc, pw, pw + nchunk * C);
        if (gw) lt__k_colsum2<<<(unsigned)((C + 127) / 128), 128, 0, LT__CU_STREAM(nd)>>>(pw, nchunk, C, 1.0f, 0, gw);
        if (gb) lt__k_colsum2<<<(unsigned)((C + 127) / 128), 128, 0, LT__CU_STREAM(nd)>>>(pw + nchunk * C, nchunk, C, 1.0f, 0, gb);
    }
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
static void lt__layernorm_fwd_cuda(lt__node *nd) { lt__cu_norm_fwd(nd, nd->save[0], nd->save[1]); }
static void lt__layernorm_bwd_cuda(lt__node *nd) { lt__cu_norm_bwd(nd, nd->save[0], nd->save[1]); }
static void lt__rmsnorm_fwd_cuda(lt__node *nd) { lt__cu_norm_fwd(nd, NULL, nd->save[0]); }
static void lt__rmsnorm_bwd_cuda(lt__node *nd) { lt__cu_norm_bwd(nd, NULL, nd->save[0]); }

/* -- embedding ----------------------------------------------------------------------------------- */
/* The ids on the device.  For an embedding the host also groups the rows by id (a counting sort),
   so backward sums each id's rows in order, one block per distinct id, with no atomics:
     [ids (N)] [U] [distinct ids (U)] [start of each id's rows (U+1)] [rows, grouped (N)] */
static void lt__cu_rec_ids(lt_ctx *ctx, int32_t *stage, const int32_t *src, int64_t n, int64_t V); /* graphs */
/* The staging ints of n ids (V > 0: an embedding of V rows, grouped; cnt has V+1 ints of room). */
static void lt__cu_stage_ids(int32_t *stage, const int32_t *ids, int64_t n, int64_t V, int32_t *cnt) {
    int32_t *U = stage + n, *uid = U + 1, *start = uid + n, *rows = start + n + 1;
    int64_t k, u = 0;
    memcpy(stage, ids, (size_t)n * sizeof(int32_t));
    if (V <= 0) return;
    memset(cnt, 0, (size_t)(V + 1) * sizeof(int32_t));
    for (k = 0; k < n; k++) cnt[ids[k]]++;
    start[0] = 0;
    for (k = 0; k < V; k++)
        if (cnt[k]) { uid[u] = (int32_t)k; start[u + 1] = start[u] + cnt[k]; u++; }
    for (k = 0; k < u; k++) cnt[uid[k]] = start[k];   /* now: the next free slot of each id */
    for (k = 0; k < n; k++) rows[cnt[ids[k]]++] = (int32_t)k;
    *U = (int32_t)u;
}
static void lt__cu_ids(lt_ctx *ctx, lt__node *nd, const int32_t *ids, int64_t n) {
    int64_t total = n, V = nd->op == LT__OP(embedding) ? nd->in[0]->shape[0] : 0;
    int32_t *stage, *cnt = NULL;
    if (V > 0) {
        total = 1 + 3 * n + 1 + n;   /* at most n distinct ids */
        cnt = (int32_t *)lt__arena_alloc(ctx, (size_t)(V + 1) * sizeof(int32_t));
        if (!cnt) return;
    }
    stage = (int32_t *)lt__cu_pinned(ctx, (size_t)total * sizeof(int32_t));
    nd->ids_dev = (int32_t *)lt__cu_alloc(ctx, (size_t)total * sizeof(int32_t));
    if (!stage || !nd->ids_dev) return;
    lt__cu_stage_ids(stage, ids, n, V, cnt);
    lt__cu_ok(ctx, cudaMemcpyAsync(nd->ids_dev, stage, (size_t)total * sizeof(int32_t), cudaMemcpyHostToDevice,
                                   ctx->cuda->stream), "copying ids to the device");
    if (ctx->cuda->rec) lt__cu_rec_ids(ctx, stage, ids, n, V);   /* a graph replays this copy */
}
/* W (V, C), ids (N) -> y (N, C) = W[ids] */
__global__ void lt__k_embedding(float *y, const float *w, const int32_t *ids, int64_t N, int64_t C) {
    LT__CU_LOOP(i, N * C) y[i] = w[(int64_t)ids[i / C] * C + i % C];
}
/* dW[id] += Σ over id's rows (in row order) of dy: block u handles distinct id u */
__global__ void lt__k_embedding_bwd(float *gw, const float *gy, const int32_t *grp, int64_t N, int64_t C) {
    const int32_t *uid = grp + 1, *start = uid + N, *rows = start + N + 1;
    int32_t u = (int32_t)blockIdx.x, a, b, k;
    int64_t j;
    if (u >= grp[0]) return;
    a = start[u]; b = start[u + 1];
    for (j = threadIdx.x; j < C; j += blockDim.x) {
        float s = gw[(int64_t)uid[u] * C + j];
        for (k = a; k < b; k++) s += gy[(int64_t)rows[k] * C + j];
        gw[(int64_t)uid[u] * C + j] = s;
    }
}
static void lt__embedding_fwd_cuda(lt__node *nd) {
    int64_t C = nd->in[0]->shape[1], N = nd->out->n / C;
    if (!lt__cu_begin(nd)) return;
    lt__k_embedding<<<lt__cu_blocks(N * C), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(nd->ctx, nd->in[0]),
                                                                                nd->ids_dev, N, C);
    LT__CU_LAUNCHED(nd->ctx, "embedding");
}
static void lt__embedding_bwd_cuda(lt__node *nd) {
    int64_t C = nd->in[0]->shape[1], N = nd->out->n / C;
    float *gw;
    if (!lt__cu_begin(nd) || !(gw = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    /* one block per possible distinct id (N of them at most; the extra blocks return at once) */
    lt__k_embedding_bwd<<<(unsigned)N, 128, 0, LT__CU_STREAM(nd)>>>(gw, nd->out->grad, nd->ids_dev + N, N, C);
    LT__CU_LAUNCHED(nd->ctx, "embedding");
}

/* dropout draws its masks from the context's RNG on the host; the device has no such stream yet */
/* the 16-bit-storage rows of the CPU: their ops pick them only on LT_CPU */
LT__CU_MISSING(attention16)
LT__CU_MISSING(layernorm16)
LT__CU_MISSING(gelu16)
LT__CU_MISSING(linear_ce16)
LT__CU_MISSING(rmsnorm16)
LT__CU_MISSING(attention_gqa16)
LT__CU_MISSING(swiglu16)
LT__CU_MISSING(dropout)

/* -- transpose: a copy with two dims swapped --------------------------------------------------- */
/* y index k = (i0,i1,i2,i3) in y's shape; x offset = Σ i_d·st_d with x's strides permuted */
struct lt__cu_tr { int64_t ys[4], st[4]; };
__global__ void lt__k_transpose(float *dst, const float *src, lt__cu_tr p, int64_t n, int accumulate) {
    LT__CU_LOOP(k, n) {
        int64_t r = k, o = 0;
        int d;
        for (d = 3; d >= 0; d--) { o += (r % p.ys[d]) * p.st[d]; r /= p.ys[d]; }
        if (accumulate) dst[o] += src[k];
        else dst[k] = src[o];
    }
}
static lt__cu_tr lt__cu_tr_of(const lt__node *nd) {
    lt__cu_tr p;
    int d, d0 = (int)LT__TR_D0(nd), d1 = (int)LT__TR_D1(nd);
    int64_t t;
    p.st[3] = 1;
    for (d = 2; d >= 0; d--) p.st[d] = p.st[d + 1] * nd->in[0]->shape[d + 1];
    t = p.st[d0]; p.st[d0] = p.st[d1]; p.st[d1] = t;
    for (d = 0; d < 4; d++) p.ys[d] = nd->out->shape[d];
    return p;
}
static void lt__transpose_fwd_cuda(lt__node *nd) {
    if (!lt__cu_begin(nd)) return;
    lt__k_transpose<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_tr_of(nd), nd->out->n, 0);
    LT__CU_LAUNCHED(nd->ctx, "transpose");
}
static void lt__transpose_bwd_cuda(lt__node *nd) {
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_transpose<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, nd->out->grad, lt__cu_tr_of(nd),
                                                                                     nd->out->n, 1);
    LT__CU_LAUNCHED(nd->ctx, "transpose");
}

/* -- @@CUDA.attention  attention: fused, causal, flash-style ---------------------------------- */
/* One warp per (b, h, query t); lane l holds head dims l, l+32, ... (D <= 32·LT__CU_DK).  Keys are
   visited once with an online softmax (Milakov & Gimelshein 2018; Dao et al. 2022): a running max
   m, normaliser l and output acc rescaled by exp(m_old - m_new) as each key arrives, so no T×T
   matrix is stored.  Saves lse_t = m + log l per row (save[0]: B·H·T of its floats); backward
   recomputes p_tu = exp(s_tu - lse_t):
     Δ_t = dy_t·y_t,  ds_tu = p_tu (dy_t·v_u - Δ_t),
     dq_t += scale Σ_u ds_tu k_u  (a warp per query),  dk_u += scale Σ_t ds_tu q_t,
     dv_u += Σ_t p_tu dy_t  (a warp per key).  Query rows t >= len give 0, keys u >= len are masked.
   lt_attention_gqa runs the same kernels: q, k, v at their own row strides, query head h reading
   kv head h/G, and the warp of key u of kv head j summing over its G query heads (no atomics). */
#define LT__CU_DK 8
__device__ float lt__cu_wsum(float v) {
    int o;
    for (o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* Where q, k, v are: row r (= b·T + t) of part w at p[w] + r·ld[w], head j at j·D (fused qkv: ld 3C,
   k at +C, v at +2C; lt_attention_gqa: its q [B,T,H·D], k, v [B,T,Hkv·D]); query head h reads key/value
   head h/G.  C is y's row (H·D). */
struct lt__cu_att { int64_t B, T, C, H, D, G, ldq, ldkv; float scale; const int32_t *lens; };
/* row (b,h,t) of the warp over nh heads, its length */
__device__ int lt__cu_att_row(const lt__cu_att &a, int64_t nh, int64_t *b, int64_t *h, int64_t *t, int64_t *len) {
    int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (w >= a.B * nh * a.T) return 0;
    *t = w % a.T; *h = w / a.T % nh; *b = w / (a.T * nh);
    *len = a.lens ? a.lens[*b] : a.T;
    return 1;
}
__global__ void lt__k_attention(float *y, float *lse, const float *qp, const float *kp, const float *vp, lt__cu_att a) {
    int64_t b, h, t, len, u;
    int lane = threadIdx.x & 31, k;
    float q[LT__CU_DK], acc[LT__CU_DK], m = -INFINITY, l = 0;
    const float *qr, *kb, *vb;
    float *yr;
    if (!lt__cu_att_row(a, a.H, &b, &h, &t, &len)) return;
    qr = qp + (b * a.T + t) * a.ldq + h * a.D;
    kb = kp + b * a.T * a.ldkv + h / a.G * a.D;
    vb = vp + b * a.T * a.ldkv + h / a.G * a.D;
    yr = y + (b * a.T + t) * a.C + h * a.D;
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        q[k] = d < a.D ? qr[d] : 0.0f;
        acc[k] = 0.0f;
    }
    if (t < len)
        for (u = 0; u <= t; u++) {
            float s = 0, mn, corr, p;
            for (k = 0; k < LT__CU_DK; k++) {
                int64_t d = lane + 32 * k;
                if (d < a.D) s += q[k] * kb[u * a.ldkv + d];
            }
            s = lt__cu_wsum(s) * a.scale;
            mn = fmaxf(m, s);
            corr = expf(m - mn);
            p = expf(s - mn);
            l = l * corr + p;
            for (k = 0; k < LT__CU_DK; k++) {
                int64_t d = lane + 32 * k;
                acc[k] = acc[k] * corr + (d < a.D ? p * vb[u * a.ldkv + d] : 0.0f);
            }
            m = mn;
        }
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        if (d < a.D) yr[d] = t < len ? acc[k] / l : 0.0f;
    }
    if (lane == 0) lse[(b * a.H + h) * a.T + t] = t < len ? m + logf(l) : 0.0f;
}
/* Δ_t = dy_t·y_t per row */
__global__ void lt__k_attention_delta(float *delta, const float *y, const float *gy, lt__cu_att a) {
    int64_t b, h, t, len, d;
    float s = 0;
    if (!lt__cu_att_row(a, a.H, &b, &h, &t, &len)) return;
    for (d = threadIdx.x & 31; d < a.D; d += 32) s += y[(b * a.T + t) * a.C + h * a.D + d] * gy[(b * a.T + t) * a.C + h * a.D + d];
    s = lt__cu_wsum(s);
    if ((threadIdx.x & 31) == 0) delta[(b * a.H + h) * a.T + t] = s;
}
/* dq_t for the warp's query row */
__global__ void lt__k_attention_dq(float *gq, const float *qp, const float *kp, const float *vp, const float *gy,
                                   const float *lse, const float *delta, lt__cu_att a) {
    int64_t b, h, t, len, u, row;
    int lane = threadIdx.x & 31, k;
    float q[LT__CU_DK], dy[LT__CU_DK], dq[LT__CU_DK], L, Dt;
    const float *kb, *vb;
    if (!lt__cu_att_row(a, a.H, &b, &h, &t, &len) || t >= len) return;
    row = (b * a.H + h) * a.T + t;
    L = lse[row]; Dt = delta[row];
    kb = kp + b * a.T * a.ldkv + h / a.G * a.D;
    vb = vp + b * a.T * a.ldkv + h / a.G * a.D;
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        q[k] = d < a.D ? qp[(b * a.T + t) * a.ldq + h * a.D + d] : 0.0f;
        dy[k] = d < a.D ? gy[(b * a.T + t) * a.C + h * a.D + d] : 0.0f;
        dq[k] = 0.0f;
    }
    for (u = 0; u <= t; u++) {
        float s = 0, dp = 0, p, ds;
        for (k = 0; k < LT__CU_DK; k++) {
            int64_t d = lane + 32 * k;
            if (d < a.D) { s += q[k] * kb[u * a.ldkv + d]; dp += dy[k] * vb[u * a.ldkv + d]; }
        }
        s = lt__cu_wsum(s);
        dp = lt__cu_wsum(dp);
        p = expf(s * a.scale - L);
        ds = p * (dp - Dt);
        for (k = 0; k < LT__CU_DK; k++) {
            int64_t d = lane + 32 * k;
            if (d < a.D) dq[k] += ds * kb[u * a.ldkv + d];
        }
    }
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        if (d < a.D) gq[(b * a.T + t) * a.ldq + h * a.D + d] += a.scale * dq[k];
    }
}
/* dk_u, dv_u for the warp's key row u of kv head j (the row index plays the key), summed over the G
   query heads jG.. in order (gk or gv NULL: not wanted) */
__global__ void lt__k_attention_dkv(float *gk, float *gv, const float *qp, const float *kp, const float *vp,
                                    const float *gy, const float *lse, const float *delta, lt__cu_att a) {
    int64_t b, j, u, len, t, i;
    int lane = threadIdx.x & 31, k;
    float kk[LT__CU_DK], vv[LT__CU_DK], dk[LT__CU_DK], dv[LT__CU_DK];
    if (!lt__cu_att_row(a, a.H / a.G, &b, &j, &u, &len) || u >= len) return;
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        kk[k] = d < a.D ? kp[(b * a.T + u) * a.ldkv + j * a.D + d] : 0.0f;
        vv[k] = d < a.D ? vp[(b * a.T + u) * a.ldkv + j * a.D + d] : 0.0f;
        dk[k] = dv[k] = 0.0f;
    }
    for (i = 0; i < a.G; i++) {
        int64_t h = j * a.G + i;
        const float *qb = qp + b * a.T * a.ldq + h * a.D, *gb = gy + b * a.T * a.C + h * a.D;
        for (t = u; t < len; t++) {
            float s = 0, dp = 0, p, ds;
            int64_t row = (b * a.H + h) * a.T + t;
            for (k = 0; k < LT__CU_DK; k++) {
                int64_t d = lane + 32 * k;
                if (d < a.D) { s += qb[t * a.ldq + d] * kk[k]; dp += gb[t * a.C + d] * vv[k]; }
            }
            s = lt__cu_wsum(s);
            dp = lt__cu_wsum(dp);
            p = expf(s * a.scale - lse[row]);
            ds = p * (dp - delta[row]);
            for (k = 0; k < LT__CU_DK; k++) {
                int64_t d = lane + 32 * k;
                if (d < a.D) { dv[k] += p * gb[t * a.C + d]; dk[k] += ds * qb[t * a.ldq + d]; }
            }
        }
    }
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        if (d < a.D) {
            if (gk) gk[(b * a.T + u) * a.ldkv + j * a.D + d] += a.scale * dk[k];
            if (gv) gv[(b * a.T + u) * a.ldkv + j * a.D + d] += dv[k];
        }
    }
}
/* the record's sizes: fused qkv (attention), or q, k, v apart (attention_gqa, Hkv = LT__GQA_HKV) */
static int lt__cu_att_of(lt__node *nd, lt__cu_att *a) {
    int gqa = nd->op == LT__OP(attention_gqa);
    a->B = LT__ATT_B(nd); a->T = LT__ATT_T(nd); a->C = LT__ATT_C(nd); a->H = LT__ATT_H(nd); a->D = a->C / a->H;
    a->G = gqa ? a->H / LT__GQA_HKV(nd) : 1;
    a->ldq = gqa ? a->C : 3 * a->C;
    a->ldkv = gqa ? LT__GQA_HKV(nd) * a->D : 3 * a->C;
    a->scale = 1.0f / sqrtf((float)a->D);
    a->lens = nd->ids ? nd->ids_dev : NULL;
    if (a->D > 32 * LT__CU_DK) {
        lt_set_error(nd->ctx, LT_ERR_ARG, "%s%s%s on cuda: head size %lld: the CUDA kernel takes at most %d",
                     gqa ? "lt_attention_gqa" : "lt_attention", nd->scope ? " in " : "", nd->scope ? nd->scope : "",
                     (long long)a->D, 32 * LT__CU_DK);
        return 0;
    }
    return 1;
}
#define LT__CU_WARPS(rows) (unsigned)(((rows) * 32 + 255) / 256), 256
/* forward from q, k, v (p[0..2]); backward adds into g[0..2] (NULL: not wanted) */
static void lt__cu_att_fwd(lt__node *nd, const lt__cu_att *a, const float *const *p) {
    lt__k_attention<<<LT__CU_WARPS(a->B * a->H * a->T), 0, LT__CU_STREAM(nd)>>>(nd->out->data, nd->save[0], p[0], p[1], p[2], *a);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__cu_att_bwd(lt__node *nd, const lt__cu_att *a, const float *const *p, float *const *g) {
    float *delta = (float *)lt__cu_alloc(nd->ctx, (size_t)(a->B * a->H * a->T) * sizeof(float));
    if (!delta) return;
    lt__k_attention_delta<<<LT__CU_WARPS(a->B * a->H * a->T), 0, LT__CU_STREAM(nd)>>>(delta, nd->out->data, nd->out->grad, *a);
    if (g[0])
        lt__k_attention_dq<<<LT__CU_WARPS(a->B * a->H * a->T), 0, LT__CU_STREAM(nd)>>>(g[0], p[0], p[1], p[2], nd->out->grad,
                                                                                      nd->save[0], delta, *a);
    if (g[1] || g[2])
        lt__k_attention_dkv<<<LT__CU_WARPS(a->B * (a->H / a->G) * a->T), 0, LT__CU_STREAM(nd)>>>(
            g[1], g[2], p[0], p[1], p[2], nd->out->grad, nd->save[0], delta, *a);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__attention_fwd_cuda(lt__node *nd) {
    lt__cu_att a;
    const float *p[3];
    if (!lt__cu_begin(nd) || !lt__cu_att_of(nd, &a)) return;
    p[0] = lt__cu_data(nd->ctx, nd->in[0]); p[1] = p[0] + a.C; p[2] = p[0] + 2 * a.C;
    lt__cu_att_fwd(nd, &a, p);
}
static void lt__attention_bwd_cuda(lt__node *nd) {
    lt__cu_att a;
    const float *p[3];
    float *g[3];
    if (!lt__cu_begin(nd) || !lt__cu_att_of(nd, &a) || !(g[0] = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    p[0] = lt__cu_data(nd->ctx, nd->in[0]); p[1] = p[0] + a.C; p[2] = p[0] + 2 * a.C;
    g[1] = g[0] + a.C; g[2] = g[0] + 2 * a.C;
    lt__cu_att_bwd(nd, &a, p, g);
}
/* attention_gqa: the same kernels on q, k, v apart; each kv head's dk, dv warp sums its G query heads */
static void lt__attention_gqa_fwd_cuda(lt__node *nd) {
    lt__cu_att a;
    const float *p[3];
    int w;
    if (!lt__cu_begin(nd) || !lt__cu_att_of(nd, &a)) return;
    for (w = 0; w < 3; w++) p[w] = lt__cu_data(nd->ctx, nd->in[w]);
    lt__cu_att_fwd(nd, &a, p);
}
static void lt__attention_gqa_bwd_cuda(lt__node *nd) {
    lt__cu_att a;
    const float *p[3];
    float *g[3];
    int w;
    if (!lt__cu_begin(nd) || !lt__cu_att_of(nd, &a)) return;
    for (w = 0; w < 3; w++) { p[w] = lt__cu_data(nd->ctx, nd->in[w]); g[w] = lt__cu_grad(nd->ctx, nd->in[w]); }
    if (lt_failed(nd->ctx) || (!g[0] && !g[1] && !g[2])) return;
    lt__cu_att_bwd(nd, &a, p, g);
}

/* -- @@CUDA.losses  losses ----------------------------------------------------------------------- */
/* cross-entropy: a block per row: row_r = logsumexp(x_r) - x_r[t_r] (0 for ignored rows), then
   loss = Σ row / denom (two-stage sum); backward dx_r += g·(softmax(x_r) - onehot(t_r)),
   g = dloss/denom read on the device */
__device__ void lt__cu_row_lse(const float *x, int64_t V, float *m, float *ls) {
    float mx = -INFINITY;
    double s = 0;
    int64_t j;
    for (j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, x[j]);
    mx = lt__cu_block_max(mx);
    for (j = threadIdx.x; j < V; j += blockDim.x) s += expf(x[j] - mx);
    s = lt__cu_block_sum(s);
    *m = mx;
    *ls = (float)log(s);
}
__global__ void lt__k_ce_rows(float *row, const float *x, const int32_t *tg, int64_t V) {
    int32_t t = tg[blockIdx.x];
    float m, ls;
    if (t == LT_IGNORE_INDEX) { if (threadIdx.x == 0) row[blockIdx.x] = 0.0f; return; }
    lt__cu_row_lse(x + (int64_t)blockIdx.x * V, V, &m, &ls);
    if (threadIdx.x == 0) row[blockIdx.x] = (m - x[(int64_t)blockIdx.x * V + t]) + ls;
}
__global__ void lt__k_ce_bwd(float *gx, const float *x, const int32_t *tg, int64_t V, const float *gy, double denom) {
    int32_t t = tg[blockIdx.x];
    const float *xr = x + (int64_t)blockIdx.x * V;
    float *gr = gx + (int64_t)blockIdx.x * V, m, ls, g = (float)(gy[0] / denom);
    int64_t j;
    if (t == LT_IGNORE_INDEX) return;
    lt__cu_row_lse(xr, V, &m, &ls);
    for (j = threadIdx.x; j < V; j += blockDim.x) gr[j] += g * expf((xr[j] - m) - ls) - (j == t ? g : 0.0f);
}
static void lt__cross_entropy_fwd_cuda(lt__node *nd) {
    int64_t V = LT__CE_V(nd), R = nd->in[0]->n / V;
    if (!lt__cu_begin(nd)) return;
    lt__k_ce_rows<<<(unsigned)R, LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->save[0], lt__cu_data(nd->ctx, nd->in[0]), nd->ids_dev, V);
    lt__cu_reduce(nd->ctx, nd->save[0], NULL, R, 0, LT__CE_DENOM(nd) > 0 ? 1.0 / LT__CE_DENOM(nd) : 0.0, nd->out->data);
    LT__CU_LAUNCHED(nd->ctx, "cross_entropy");
}
static void lt__cross_entropy_bwd_cuda(lt__node *nd) {
    int64_t V = LT__CE_V(nd), R = nd->in[0]->n / V;
    float *gx;
    if (!lt__cu_begin(nd) || !(LT__CE_DENOM(nd) > 0) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_ce_bwd<<<(unsigned)R, LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, lt__cu_data(nd->ctx, nd->in[0]), nd->ids_dev, V,
                                                                   nd->out->grad, LT__CE_DENOM(nd));
    LT__CU_LAUNCHED(nd->ctx, "cross_entropy");
}
/* mse: Σ(p - t)²/n;  dp += g·2(p - t)/n, dt -= the same */
__global__ void lt__k_mse_bwd(float *gp, float *gt, const float *p, const float *t, const float *gy, int64_t n) {
    float g = gy[0] * 2.0f / (float)n;
    LT__CU_LOOP(i, n) {
        float d = g * (p[i] - t[i]);
        if (gp) gp[i] += d;
        if (gt) gt[i] -= d;
    }
}
static void lt__mse_fwd_cuda(lt__node *nd) {
    if (!lt__cu_begin(nd)) return;
    lt__cu_reduce(nd->ctx, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_data(nd->ctx, nd->in[1]), nd->in[0]->n, 1,
                  1.0 / (double)nd->in[0]->n, nd->out->data);
}
static void lt__mse_bwd_cuda(lt__node *nd) {
    float *gp, *gt;
    if (!lt__cu_begin(nd)) return;
    gp = lt__cu_grad(nd->ctx, nd->in[0]);
    gt = lt__cu_grad(nd->ctx, nd->in[1]);
    if (lt_failed(nd->ctx) || (!gp && !gt)) return;
    lt__k_mse_bwd<<<lt__cu_blocks(nd->in[0]->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        gp, gt, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_data(nd->ctx, nd->in[1]), nd->out->grad, nd->in[0]->n);
    LT__CU_LAUNCHED(nd->ctx, "mse");
}

/* -- matmul, linear, conv1d: cuBLAS --------------------------------------------------------------- */
/* The float32 ops: the products of the CPU kernels (@@OPS), written through lt__cu_gemm; the bias
   is added by a kernel, its gradient is a column sum. */
__global__ void lt__k_bias_rows(float *y, const float *b, int64_t n, int64_t O) { LT__CU_LOOP(i, n) y[i] += b[i % O]; }

static void lt__matmul_fwd_cuda(lt__node *nd) {
    lt_ctx *ctx = nd->ctx;
    int ta = (LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd);
    if (!lt__cu_begin(nd)) return;
    lt__cu_gemm(ctx, "matmul", LT_F32, ta, tb, M, N, K, 1.0f, lt__cu_data(ctx, nd->in[0]), ta ? M : K, M * K,
                lt__cu_data(ctx, nd->in[1]), tb ? K : N, shared ? 0 : K * N, 0.0f, nd->out->data, N, M * N, nb);
}
/* The backward products of matmul (as lt__matmul_bwd), for float32 operands (prec LT_F32) or
   16-bit ones (A16/B16/dY16 then point to 16-bit arrays); out16: C += round16(product) through
   a float32 temporary instead of C += product. */
static void lt__cu_mm(lt_ctx *ctx, int prec, int ta, int tb, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                      int64_t sA, const void *B, int64_t ldb, int64_t sB, float *C, int64_t ldc, int64_t sC, int64_t nb) {
    if (prec == LT_F32) {
        lt__cu_gemm(ctx, "matmul backward", LT_F32, ta, tb, M, N, K, 1.0f, A, lda, sA, B, ldb, sB, 1.0f, C, ldc, sC, nb);
    } else {   /* C (contiguous: ldc = N, sC = M·N or 0 with nb = 1) += round16(product) */
        float *t = (float *)lt__cu_alloc(ctx, (size_t)(nb * M * N) * sizeof(float));
        if (!t) return;
        lt__cu_gemm(ctx, "16-bit matmul backward", prec, ta, tb, M, N, K, 1.0f, A, lda, sA, B, ldb, sB, 0.0f, t, N, M * N, nb);
        lt__k_epilogue16<<<lt__cu_blocks(nb * M * N), LT__CU_T, 0, ctx->cuda->stream>>>(C, t, NULL, nb * M * N, N, 1, prec);
        LT__CU_LAUNCHED(ctx, "16-bit matmul backward");
        (void)ldc; (void)sC;
    }
}
/* dA and dB of y = op(a)·op(b); a16/b16/gy16: 16-bit copies for prec != LT_F32 */
static void lt__cu_matmul_grads(lt__node *nd, int prec, const void *a, const void *b, const void *gy, float *ga, float *gb) {
    lt_ctx *ctx = nd->ctx;
    int ta = (LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd), q;
    int64_t lda = ta ? M : K, ldb = tb ? K : N, sb = shared ? 0 : K * N, es = prec == LT_F32 ? 4 : 2;
    if (ga) {
        if (!ta) lt__cu_mm(ctx, prec, 0, !tb, M, K, N, gy, N, M * N, b, ldb, sb, ga, K, M * K, nb);   /* dA = dY op(B)ᵀ */
        else lt__cu_mm(ctx, prec, tb, 1, K, M, N, b, ldb, sb, gy, N, M * N, ga, M, M * K, nb);        /* dAs = op(B) dYᵀ */
    }
    if (gb && shared && !ta) {   /* b shared by every batch: one product over all batches' rows */
        if (!tb) lt__cu_mm(ctx, prec, 1, 0, K, N, nb * M, a, K, 0, gy, N, 0, gb, N, 0, 1);           /* dB = Aᵀ dY */
        else lt__cu_mm(ctx, prec, 1, 0, N, K, nb * M, gy, N, 0, a, K, 0, gb, K, 0, 1);               /* dBs = dYᵀ A */
    } else if (gb && shared) {   /* shared b, a transposed: one batch at a time */
        for (q = 0; q < nb; q++) {
            const char *aq = (const char *)a + q * M * K * es, *gq = (const char *)gy + q * M * N * es;
            if (!tb) lt__cu_mm(ctx, prec, !ta, 0, K, N, M, aq, lda, 0, gq, N, 0, gb, N, 0, 1);
            else lt__cu_mm(ctx, prec, 1, ta, N, K, M, gq, N, 0, aq, lda, 0, gb, K, 0, 1);
        }
    } else if (gb) {
        if (!tb) lt__cu_mm(ctx, prec, !ta, 0, K, N, M, a, lda, M * K, gy, N, M * N, gb, N, K * N, nb);  /* dB = op(A)ᵀ dY */
        else lt__cu_mm(ctx, prec, 1, ta, N, K, M, gy, N, M * N, a, lda, M * K, gb, K, K * N, nb);       /* dBs = dYᵀ op(A) */
    }
}
static void lt__matmul_bwd_cuda(lt__node *nd) {
    lt_ctx *ctx = nd->ctx;
    float *ga, *gb;
    if (!lt__cu_begin(nd)) return;
    ga = lt__cu_grad(ctx, nd->in[0]);
    gb = lt__cu_grad(ctx, nd->in[1]);
    if (lt_failed(ctx)) return;
    lt__cu_matmul_grads(nd, LT_F32, lt__cu_data(ctx, nd->in[0]), lt__cu_data(ctx, nd->in[1]), nd->out->grad, ga, gb);
}

/* linear (wt = 1: W [O,I], y = x·Wᵀ + b) and conv1d (wt = 0: W [I,O], y = x·W + b); x is (R, I) */
static void lt__cu_affine_fwd(lt__node *nd, int wt) {
    lt_ctx *ctx = nd->ctx;
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    if (!lt__cu_begin(nd)) return;
    lt__cu_gemm(ctx, nd->op->name, LT_F32, 0, wt, R, O, Ci, 1.0f, lt__cu_data(ctx, nd->in[0]), Ci, 0,
                lt__cu_data(ctx, nd->in[1]), wt ? Ci : O, 0, 0.0f, nd->out->data, O, 0, 1);
    if (nd->in[2])
        lt__k_bias_rows<<<lt__cu_blocks(R * O), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(ctx, nd->in[2]),
                                                                                    R * O, O);
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
/* dx += dy·W (linear) or dy·Wᵀ (conv1d); dW += dyᵀ·x (linear) or xᵀ·dy (conv1d); db += Σ_rows dy.
   prec != LT_F32: x, w, gy are 16-bit arrays and every term is rounded once before it is added. */
static void lt__cu_affine_grads(lt__node *nd, int wt, int prec, const void *x, const void *w, const void *gy,
                                const float *gy32, float *gx, float *gw, float *gb) {
    lt_ctx *ctx = nd->ctx;
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    if (gx) lt__cu_mm(ctx, prec, 0, !wt, R, Ci, O, gy, O, 0, w, wt ? Ci : O, 0, gx, Ci, 0, 1);
    if (gw) {
        if (wt) lt__cu_mm(ctx, prec, 1, 0, O, Ci, R, gy, O, 0, x, Ci, 0, gw, Ci, 0, 1);
        else lt__cu_mm(ctx, prec, 1, 0, Ci, O, R, x, Ci, 0, gy, O, 0, gw, O, 0, 1);
    }
    if (gb) lt__cu_colsum(ctx, gy32, NULL, R, O, 1.0f, prec == LT_F32 ? 0 : prec, gb);
}
static void lt__cu_affine_bwd(lt__node *nd, int wt) {
    lt_ctx *ctx = nd->ctx;
    float *gx, *gw, *gb;
    if (!lt__cu_begin(nd)) return;
    gx = lt__cu_grad(ctx, nd->in[0]);
    gw = lt__cu_grad(ctx, nd->in[1]);
    gb = lt__cu_grad(ctx, nd->in[2]);
    if (lt_failed(ctx)) return;
    lt__cu_affine_grads(nd, wt, LT_F32, lt__cu_data(ctx, nd->in[0]), lt__cu_data(ctx, nd->in[1]), nd->out->grad,
                        nd->out->grad, gx, gw, gb);
}
static void lt__linear_fwd_cuda(lt__node *nd) { lt__cu_affine_fwd(nd, 1); }
static void lt__linear_bwd_cuda(lt__node *nd) { lt__cu_affine_bwd(nd, 1); }
static void lt__conv1d_fwd_cuda(lt__node *nd) { lt__cu_affine_fwd(nd, 0); }
static void lt__conv1d_bwd_cuda(lt__node *nd) { lt__cu_affine_bwd(nd, 0); }

/* -- the 16-bit rows (lt_set_precision): bf16/fp16 tensor-core GEMMs, float32 accumulation ------- */
/* As the CPU rows (@@OPS, matmul16): operands rounded to 16 bit, y = round16(product + round16(b)),
   backward rounds dy in place and adds round16 of each product.  The record's 16-bit copies
   (save[j], made by the forward) are what cuBLAS reads; an operand without one (a parameter) is
   converted into a temporary for each product. */
static const unsigned short *lt__cu_16(lt_ctx *ctx, int prec, const float *x, int64_t n, unsigned short *dst) {
    if (!dst) dst = (unsigned short *)lt__cu_alloc(ctx, (size_t)n * sizeof(unsigned short));
    if (!dst) return NULL;
    lt__k_to16<<<lt__cu_blocks(n), LT__CU_T, 0, ctx->cuda->stream>>>(x, dst, n, prec);
    LT__CU_LAUNCHED(ctx, "a 16-bit conversion");
    return dst;
}
static const unsigned short *lt__cu_opnd16(lt__node *nd, int j) {
    if (nd->save[j]) return (const unsigned short *)(const void *)nd->save[j];
    return lt__cu_16(nd->ctx, lt__prec16(nd), lt__cu_data(nd->ctx, nd->in[j]), nd->in[j]->n, NULL);
}
/* The forward's copies (saved for backward) first, then the operands as cuBLAS reads them. */
static int lt__cu_fwd16(lt__node *nd, const unsigned short **a, const unsigned short **b) {
    int j, p = lt__prec16(nd);
    for (j = 0; j < 2; j++)
        if (nd->save[j]) lt__cu_16(nd->ctx, p, lt__cu_data(nd->ctx, nd->in[j]), nd->in[j]->n, (unsigned short *)(void *)nd->save[j]);
    *a = lt__cu_opnd16(nd, 0);
    *b = lt__cu_opnd16(nd, 1);
    return *a && *b && !lt_failed(nd->ctx);
}
/* dy rounded in place; its 16-bit copy for the products */
static const unsigned short *lt__cu_dy16(lt__node *nd) {
    int p = lt__prec16(nd);
    lt__k_round16<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->grad, nd->out->n, p);
    return lt__cu_16(nd->ctx, p, nd->out->grad, nd->out->n, NULL);
}
static void lt__matmul16_fwd_cuda(lt__node *nd) {
    lt_ctx *ctx = nd->ctx;
    int p = lt__prec16(nd), ta = (LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd);
    const unsigned short *a, *b;
    if (!lt__cu_begin(nd) || !lt__cu_fwd16(nd, &a, &b)) return;
    lt__cu_gemm(ctx, "matmul (16-bit)", p, ta, tb, M, N, K, 1.0f, a, ta ? M : K, M * K, b, tb ? K : N, shared ? 0 : K * N,
                0.0f, nd->out->data, N, M * N, nb);
    lt__k_epilogue16<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, NULL, NULL, nd->out->n, N, 0, p);
    LT__CU_LAUNCHED(ctx, "matmul (16-bit)");
}
static void lt__matmul16_bwd_cuda(lt__node *nd) {
    lt_ctx *ctx = nd->ctx;
    float *ga, *gb;
    const unsigned short *dy;
    if (!lt__cu_begin(nd)) return;
    ga = lt__cu_grad(ctx, nd->in[0]);
    gb = lt__cu_grad(ctx, nd->in[1]);
    if (lt_failed(ctx) || !(dy = lt__cu_dy16(nd))) return;
    lt__cu_matmul_grads(nd, lt__prec16(nd), gb ? lt__cu_opnd16(nd, 0) : NULL, ga ? lt__cu_opnd16(nd, 1) : NULL, dy, ga, gb);
}
static void lt__cu_affine16_fwd(lt__node *nd, int wt) {
    lt_ctx *ctx = nd->ctx;
    int p = lt__prec16(nd);
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    const unsigned short *x, *w;
    if (!lt__cu_begin(nd) || !lt__cu_fwd16(nd, &x, &w)) return;
    lt__cu_gemm(ctx, nd->op->name, p, 0, wt, R, O, Ci, 1.0f, x, Ci, 0, w, wt ? Ci : O, 0, 0.0f, nd->out->data, O, 0, 1);
    lt__k_epilogue16<<<lt__cu_blocks(R * O), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, NULL,
                                                                                 lt__cu_data(ctx, nd->in[2]), R * O, O, 0, p);
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
static void lt__cu_affine16_bwd(lt__node *nd, int wt) {
    lt_ctx *ctx = nd->ctx;
    float *gx, *gw, *gb;
    const unsigned short *dy;
    if (!lt__cu_begin(nd)) return;
    gx = lt__cu_grad(ctx, nd->in[0]);
    gw = lt__cu_grad(ctx, nd->in[1]);
    gb = lt__cu_grad(ctx, nd->in[2]);
    if (lt_failed(ctx) || !(dy = lt__cu_dy16(nd))) return;
    lt__cu_affine_grads(nd, wt, lt__prec16(nd), gw ? lt__cu_opnd16(nd, 0) : NULL, gx ? lt__cu_opnd16(nd, 1) : NULL, dy,
                        nd->out->grad, gx, gw, gb);
}
static void lt__linear16_fwd_cuda(lt__node *nd) { lt__cu_affine16_fwd(nd, 1); }
static void lt__linear16_bwd_cuda(lt__node *nd) { lt__cu_affine16_bwd(nd, 1); }
static void lt__conv1d16_fwd_cuda(lt__node *nd) { lt__cu_affine16_fwd(nd, 0); }
static void lt__conv1d16_bwd_cuda(lt__node *nd) { lt__cu_affine16_bwd(nd, 0); }

/* -- tape, gradients ------------------------------------------------------------------------------ */
__global__ void lt__k_seed(float *g, float seed, const float *seed_dev) { g[0] += seed_dev ? seed_dev[0] : seed; }
static const float *lt__cu_rec_seed(lt_ctx *ctx);   /* graphs: the seed a replay sets */
static lt_status lt__cu_seed(lt_ctx *ctx, lt_tensor *loss, float seed) {
    float *g;
    if (!lt__cu_params_ready(ctx) || !(g = lt__cu_grad(ctx, loss))) return ctx->status;
    lt__k_seed<<<1, 1, 0, ctx->cuda->stream>>>(g, seed, ctx->cuda->rec ? lt__cu_rec_seed(ctx) : NULL);
    LT__CU_LAUNCHED(ctx, "lt_backward");
    return ctx->status;
}
static void lt__cu_zero_grad(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    if (lt_failed(ctx) || !lt__cu_params_ready(ctx) || !cu->pdev) return;
    lt__cu_ok(ctx, cudaMemsetAsync(cu->pdev + cu->pfloats, 0, cu->pfloats * sizeof(float), cu->stream), "lt_zero_grad");
    cu->pstate = LT__CU_DEV_NEWER;
}

/* -- @@CUDA.optim  optimizers ---------------------------------------------------------------------- */
/* AdamW over every parameter in one launch: parameter i's elements are cut into chunks of
   LT__CU_ACHUNK, chunk c of the whole launch finds its parameter by binary search over the
   chunk offsets.  The arithmetic is lt__adamw_update's, operation for operation (__fmul_rn keeps
   nvcc from fusing a product into a later add where the CPU rounds it), so a step equals the CPU's
   (and torch's) bit for bit when both use fmaf. */
#define LT__CU_ACHUNK 4096
typedef struct {
    float *p, *g, *m, *v;
    int64_t n, chunk0;              /* first chunk of this parameter */
    float shrink, bc2_sqrt, neg_step;
} lt__cu_adam_job;
__global__ void lt__k_adamw(const lt__cu_adam_job *jobs, int njobs, float b1, float omb1, float b2, float omb2, float eps) {
    int lo = 0, hi = njobs - 1;
    int64_t c = blockIdx.x, i, e0, e1;
    const lt__cu_adam_job *j;
    while (lo < hi) { int mid = (lo + hi + 1) / 2; if (jobs[mid].chunk0 <= c) lo = mid; else hi = mid - 1; }
    j = &jobs[lo];
    e0 = (c - j->chunk0) * LT__CU_ACHUNK;
    e1 = e0 + LT__CU_ACHUNK < j->n ? e0 + LT__CU_ACHUNK : j->n;
    for (i = e0 + threadIdx.x; i < e1; i += blockDim.x) {
        float g = j->g[i], p = j->shrink != 1.0f ? __fmul_rn(j->p[i], j->shrink) : j->p[i];
        float mi = fmaf(omb1, g, __fmul_rn(j->m[i], b1));
        float vi = fmaf(__fmul_rn(omb2, g), g, __fmul_rn(j->v[i], b2));
        float den = __fadd_rn(__fdiv_rn(sqrtf(vi), j->bc2_sqrt), eps);
        j->m[i] = mi;
        j->v[i] = vi;
        j->p[i] = __fadd_rn(p, __fdiv_rn(__fmul_rn(j->neg_step, mi), den));
    }
}
/* SGD, as lt__sgd_update */
__global__ void lt__k_sgd(float *p, float *buf, const float *g, int64_t n, float wd, float mom, float omdamp, int nesterov,
                          int first, float neg_lr) {
    LT__CU_LOOP(i, n) {
        float d = g[i];
        if (wd != 0) d = fmaf(wd, p[i], d);
        if (buf) {
            float b = first ? d : fmaf(omdamp, d, __fmul_rn(buf[i], mom));
            buf[i] = b;
            d = nesterov ? fmaf(mom, b, d) : b;
        }
        p[i] = fmaf(neg_lr, d, p[i]);
    }
}
static int lt__cu_optim_ready(lt_optim *o) {
    lt_ctx *ctx = o->ctx;
    size_t bytes = 0;
    int i;
    for (i = 0; i < o->np; i++) bytes += (size_t)o->p[i]->n * (size_t)o->nstates * sizeof(float);
    if (!o->dev_block && bytes) {
        o->dev = lt__cu_table();   /* lt_optim_state / _destroy reach the state through it */
        if (!lt__cu_ok(ctx, cudaMalloc((void **)&o->dev_block, bytes), "the optimizer state")) return 0;
        o->dev_state = LT__CU_HOST_NEWER;
    }
    if (bytes && o->dev_state == LT__CU_HOST_NEWER) {
        if (!lt__cu_ok(ctx, cudaMemcpyAsync(o->dev_block, o->block, bytes, cudaMemcpyHostToDevice, ctx->cuda->stream),
                       "copying the optimizer state to the device"))
            return 0;
        o->dev_state = LT__CU_SAME;
    }
    for (i = 0; i < o->np; i++)   /* every parameter must live in the mirrored block */
        if (lt__cu_p(ctx, o->p[i]->data) == o->p[i]->data)
            return lt_set_error(ctx, LT_ERR_STATE, "lt_optim_step on cuda: parameter '%s' is not in the context's "
                                "parameter block", o->p[i]->name ? o->p[i]->name : "?"), 0;
    return 1;
}
static float *lt__cu_state(lt_optim *o, int i, int w) { return o->dev_block + (o->st[i * o->nstates + w] - o->block); }
static void lt__cu_optim_pull(lt_optim *o) {
    lt_ctx *ctx = o->ctx;
    size_t bytes = 0;
    int i;
    if (!o->dev_block) return;
    for (i = 0; i < o->np; i++) bytes += (size_t)o->p[i]->n * (size_t)o->nstates * sizeof(float);
    if (o->dev_state == LT__CU_DEV_NEWER && (ctx->cuda ? cudaStreamSynchronize(ctx->cuda->stream) : cudaDeviceSynchronize()) == cudaSuccess &&
        lt__cu_ok(ctx, cudaMemcpy(o->block, o->dev_block, bytes, cudaMemcpyDeviceToHost), "copying the optimizer state to the host"))
        o->dev_state = LT__CU_SAME;
    o->dev_state = o->dev_state == LT__CU_SAME ? LT__CU_HOST_NEWER : o->dev_state;   /* the caller may write it */
}
static void lt__cu_optim_free(lt_optim *o) {
    if (o->dev_block) cudaFree(o->dev_block);
    o->dev_block = NULL;
}
static lt_status lt__cu_optim_step(lt_optim *o, double lr) {
    lt_ctx *ctx = o->ctx;
    lt__cu_adam_job *jobs, *djobs;
    int i, nj = 0;
    int64_t chunks = 0;
    if (o->kind != LT__OPT_ADAMW && o->kind != LT__OPT_SGD) {   /* Lion, AdEMAMix, Muon, SOAP: on the host copies (correct; the bus is the price) */
        lt_status s;
        if (lt_sync_params(ctx) != LT_OK) return ctx->status;
        s = lt__optim_host_step(o, lr);
        lt_params_changed(ctx);
        return s;
    }
    if (lr < 0) lr = o->kind == LT__OPT_ADAMW ? o->adamw.lr : o->sgd.lr;
    if (!(lr - lr == 0))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_optim_step: the learning rate is %g (hint: check the schedule's settings)", lr);
    if (!lt__cu_params_ready(ctx) || !lt__cu_optim_ready(o)) return ctx->status;
    if (o->kind == LT__OPT_SGD) {
        const lt_sgd_config *c = &o->sgd;
        for (i = 0; i < o->np; i++) {
            lt_tensor *t = o->p[i];
            double wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
            if (!t->grad) continue;
            lt__k_sgd<<<lt__cu_blocks(t->n), LT__CU_T, 0, ctx->cuda->stream>>>(
                lt__cu_p(ctx, t->data), o->nstates ? lt__cu_state(o, i, 0) : NULL, lt__cu_p(ctx, t->grad), t->n, (float)wd,
                (float)c->momentum, (float)(1.0 - c->dampening), c->nesterov, !o->hasbuf[i], (float)(-lr));
            o->hasbuf[i] = 1;
            o->pstep[i]++;
        }
    } else {
        const lt_adamw_config *c = &o->adamw;
        jobs = (lt__cu_adam_job *)lt__arena_alloc(ctx, (size_t)o->np * sizeof(lt__cu_adam_job));
        djobs = (lt__cu_adam_job *)lt__cu_alloc(ctx, (size_t)o->np * sizeof(lt__cu_adam_job));
        if (!jobs || !djobs) return ctx->status;
        for (i = 0; i < o->np; i++) {
            lt_tensor *t = o->p[i];
            double step, bc1, bc2, wd;
            if (!t->grad) continue;
            step = (double)(++o->pstep[i]);
            bc1 = 1.0 - pow(c->beta1, step);
            bc2 = 1.0 - pow(c->beta2, step);
            wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
            jobs[nj].p = lt__cu_p(ctx, t->data);
            jobs[nj].g = lt__cu_p(ctx, t->grad);
            jobs[nj].m = lt__cu_state(o, i, 0);
            jobs[nj].v = lt__cu_state(o, i, 1);
            jobs[nj].n = t->n;
            jobs[nj].chunk0 = chunks;
            jobs[nj].shrink = (float)(1.0 - lr * wd);
            jobs[nj].bc2_sqrt = (float)sqrt(bc2);
            jobs[nj].neg_step = (float)(-(lr / bc1));
            chunks += (t->n + LT__CU_ACHUNK - 1) / LT__CU_ACHUNK;
            nj++;
        }
        if (nj > 0) {
            /* the job list goes in through pinned staging: the copy is part of the stream's order */
            lt__cu_adam_job *stage = (lt__cu_adam_job *)lt__cu_pinned(ctx, (size_t)nj * sizeof(lt__cu_adam_job));
            if (!stage) return ctx->status;
            memcpy(stage, jobs, (size_t)nj * sizeof(lt__cu_adam_job));
            lt__cu_ok(ctx, cudaMemcpyAsync(djobs, stage, (size_t)nj * sizeof(lt__cu_adam_job), cudaMemcpyHostToDevice,
                                           ctx->cuda->stream), "lt_optim_step");
            lt__k_adamw<<<(unsigned)chunks, LT__CU_T, 0, ctx->cuda->stream>>>(djobs, nj, (float)c->beta1, (float)(1.0 - c->beta1),
                                                                             (float)c->beta2, (float)(1.0 - c->beta2), (float)c->eps);
        }
    }
    LT__CU_LAUNCHED(ctx, "lt_optim_step");
    ctx->cuda->pstate = LT__CU_DEV_NEWER;
    o->dev_state = LT__CU_DEV_NEWER;
    o->t++;
    return ctx->status;
}

/* -- @@CUDA.clip  clipping, loss scaling --------------------------------------------------------- */
/* Σ g² of each parameter (double, two stages) -> the host; mode 0 norm, 1 clip to a norm, 2 clamp.
   The norm and the finiteness test are torch's (as @@CLIP); the scaling runs on the device. */
__global__ void lt__k_mulc(float *g, float c, int64_t n) { LT__CU_LOOP(i, n) g[i] *= c; }
__global__ void lt__k_clamp(float *g, float c, int64_t n) {
    LT__CU_LOOP(i, n) { if (g[i] > c) g[i] = c; else if (g[i] < -c) g[i] = -c; }
}
static double lt__cu_clip(lt_ctx *ctx, lt_paramset ps, double limit, int mode) {
    lt__cuda *cu = ctx->cuda;
    double *part, acc = 0;
    float coef;
    int i, n = 0;
    if (lt_failed(ctx) || !lt__cu_params_ready(ctx)) return NAN;
    if (mode == 2) {
        for (i = 0; i < ps.n; i++)
            if (ps.p[i] && ps.p[i]->grad)
                lt__k_clamp<<<lt__cu_blocks(ps.p[i]->n), LT__CU_T, 0, cu->stream>>>(lt__cu_p(ctx, ps.p[i]->grad), (float)limit, ps.p[i]->n);
        cu->pstate = LT__CU_DEV_NEWER;
        LT__CU_LAUNCHED(ctx, "lt_clip_grad_value");
        return 0;
    }
    if (ps.n > 4096) { lt_set_error(ctx, LT_ERR_ARG, "lt_clip_grad_norm on cuda: more than 4096 parameters"); return NAN; }
    part = (double *)lt__cu_alloc(ctx, (size_t)ps.n * LT__CU_RB * sizeof(double) + (size_t)ps.n * sizeof(double));
    if (!part) return NAN;
    for (i = 0; i < ps.n; i++) {
        const lt_tensor *t = ps.p[i];
        if (!t || !t->grad) continue;
        lt__k_reduce<<<LT__CU_RB, LT__CU_T, 0, cu->stream>>>(lt__cu_p(ctx, t->grad), NULL, t->n, 2, part + (size_t)n * LT__CU_RB);
        n++;
    }
    if (n == 0) return 0;
    lt__k_reduce_finish<<<(unsigned)n, LT__CU_T, 0, cu->stream>>>(part, LT__CU_RB, 1.0, NULL, part + (size_t)ps.n * LT__CU_RB);
    if (!LT__CU_LAUNCHED(ctx, "lt_clip_grad_norm") ||
        !lt__cu_ok(ctx, cudaMemcpyAsync(cu->red, part + (size_t)ps.n * LT__CU_RB, (size_t)n * sizeof(double),
                                        cudaMemcpyDeviceToHost, cu->stream), "lt_clip_grad_norm") ||
        !lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "lt_clip_grad_norm"))
        return NAN;
    for (i = 0; i < n; i++) acc += cu->red[i];   /* per tensor, then the total: as @@CLIP */
    if (mode == 0) return sqrt(acc);
    acc = sqrt(acc);
    if (!(acc - acc == 0)) {
        int k = 0;
        for (i = 0; i < ps.n; i++) {
            const lt_tensor *t = ps.p[i];
            if (!t || !t->grad) continue;
            if (!(cu->red[k] - cu->red[k] == 0)) {
                lt_set_error(ctx, LT_ERR_NONFINITE, "lt_clip_grad_norm: the gradient norm is %g: '%s' has a non-finite "
                             "gradient; gradients left unclipped (hint: lower the learning rate, or look for a "
                             "log/divide of 0 in the loss)", acc, t->name ? t->name : "?");
                return acc;
            }
            k++;
        }
        lt_set_error(ctx, LT_ERR_NONFINITE, "lt_clip_grad_norm: the gradient norm is %g", acc);
        return acc;
    }
    coef = (1.0f / ((float)acc + (float)1e-6)) * (float)limit;
    if (coef > 1.0f) coef = 1.0f;
    for (i = 0; i < ps.n; i++)
        if (ps.p[i] && ps.p[i]->grad)
            lt__k_mulc<<<lt__cu_blocks(ps.p[i]->n), LT__CU_T, 0, cu->stream>>>(lt__cu_p(ctx, ps.p[i]->grad), coef, ps.p[i]->n);
    cu->pstate = LT__CU_DEV_NEWER;
    LT__CU_LAUNCHED(ctx, "lt_clip_grad_norm");
    return acc;
}
/* g *= inv for every gradient; *bad = 1 if any was inf/NaN (checked on the bits, before scaling) */
__global__ void lt__k_unscale(float *g, float inv, int64_t n, int *bad) {
    int b = 0;
    LT__CU_LOOP(i, n) {
        b |= (__float_as_uint(g[i]) & 0x7F800000u) == 0x7F800000u;
        g[i] *= inv;
    }
    if (__syncthreads_or(b) && threadIdx.x == 0) *bad = 1;
}
static int lt__cu_unscale(lt_ctx *ctx, lt_paramset ps, float inv) {
    lt__cuda *cu = ctx->cuda;
    int *bad, i;
    if (lt_failed(ctx) || !lt__cu_params_ready(ctx) || !(bad = (int *)lt__cu_alloc(ctx, sizeof(int)))) return 0;
    lt__cu_ok(ctx, cudaMemsetAsync(bad, 0, sizeof(int), cu->stream), "lt_scaler_unscale");
    for (i = 0; ps.p && i < ps.n; i++)
        if (ps.p[i] && ps.p[i]->grad)
            lt__k_unscale<<<lt__cu_blocks(ps.p[i]->n), LT__CU_T, 0, cu->stream>>>(lt__cu_p(ctx, ps.p[i]->grad), inv, ps.p[i]->n, bad);
    cu->pstate = LT__CU_DEV_NEWER;
    if (!LT__CU_LAUNCHED(ctx, "lt_scaler_unscale") ||
        !lt__cu_ok(ctx, cudaMemcpyAsync(cu->red, bad, sizeof(int), cudaMemcpyDeviceToHost, cu->stream), "lt_scaler_unscale") ||
        !lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "lt_scaler_unscale"))
        return 0;
    return *(int *)(void *)cu->red != 0;
}

/* -- @@CUDA.graphs  graphs: the compile mode on the device ------------------------------------------- */
/* lt_compile on LT_CUDA runs the step once eagerly (which grows the device arena and the pinned
   staging to their size), then runs it again inside cudaStreamBeginCapture: the kernels, cuBLAS
   calls and the ids' copies (from pinned staging) become one CUDA graph; nothing executes.  The
   arena hands out the same addresses on every step, so a replay (lt_plan_run) only refills the
   staging from the step's id arrays (ids_src, read again as the CPU plan does), sets the seed and
   launches the graph: one launch instead of a few thousand.  The parameters' gradients are left
   as they were (the eager run's are restored).  A step that reads a value back while it is being
   recorded (lt_item inside the step function) cannot be recorded and falls back to eager. */
typedef struct { int32_t *stage; const int32_t *src; int64_t n, V; } lt__cu_rec_in;
struct lt__cu_graph {
    cudaGraphExec_t exec;
    lt__cu_rec_in *in;
    int n_in, cap_in;
    int32_t *cnt;                  /* counting-sort scratch for the embeddings' grouping */
    int64_t cnt_cap;
    float *seed_dev, *seed_pin;    /* the backward seed, set before each launch */
    const float *loss_dev;
    const float *pdev;             /* the parameter mirror the graph was recorded against */
    size_t pin_used;               /* pinned staging the graph's copies read (kept out of later use) */
    int failed;
};
static void lt__cu_rec_ids(lt_ctx *ctx, int32_t *stage, const int32_t *src, int64_t n, int64_t V) {
    struct lt__cu_graph *g = ctx->cuda->rec;
    if (g->n_in == g->cap_in) {
        int cap = g->cap_in ? 2 * g->cap_in : 16;
        lt__cu_rec_in *p = (lt__cu_rec_in *)LT__REALLOC(g->in, (size_t)cap * sizeof(lt__cu_rec_in));
        if (!p) { g->failed = 1; return; }
        g->in = p;
        g->cap_in = cap;
    }
    g->in[g->n_in].stage = stage;
    g->in[g->n_in].src = src;
    g->in[g->n_in].n = n;
    g->in[g->n_in].V = V;
    g->n_in++;
    if (V + 1 > g->cnt_cap) g->cnt_cap = V + 1;
}
static const float *lt__cu_rec_seed(lt_ctx *ctx) { return ctx->cuda->rec->seed_dev; }
static void lt__cu_graph_free(struct lt__cu_graph *g) {
    if (!g) return;
    if (g->exec) cudaGraphExecDestroy(g->exec);
    if (g->seed_dev) cudaFree(g->seed_dev);
    if (g->seed_pin) cudaFreeHost(g->seed_pin);
    LT__FREE(g->in);
    LT__FREE(g->cnt);
    LT__FREE(g);
}
static lt_plan *lt__cu_compile(lt_ctx *ctx, lt_plan *p) {
    lt__cuda *cu = ctx->cuda;
    struct lt__cu_graph *g = NULL;
    float *saved = NULL;
    lt_tensor *loss;
    cudaGraph_t graph = NULL;
    cudaError_t e;
    lt_rng rng = ctx->rng;
    const char *why = NULL;
    if (!lt__cu_params_ready(ctx)) goto fail;
    /* the caller's gradients survive the two runs */
    if (cu->pfloats && !lt__cu_ok(ctx, cudaMalloc((void **)&saved, cu->pfloats * sizeof(float)), "lt_compile"))
        goto fail;
    if (saved) cudaMemcpyAsync(saved, cu->pdev + cu->pfloats, cu->pfloats * sizeof(float), cudaMemcpyDeviceToDevice, cu->stream);
    lt_reset(ctx);
    loss = p->fn(ctx, p->user);                                   /* 1: eager, to size every buffer */
    if (!lt_failed(ctx) && !loss) lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the step function returned NULL");
    if (lt_failed(ctx) || lt_backward(ctx, loss) != LT_OK || lt_device_synchronize(ctx) != LT_OK) goto fail;
    g = (struct lt__cu_graph *)LT__MALLOC(sizeof *g);
    if (!g) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); goto fail; }
    memset(g, 0, sizeof *g);
    if (!lt__cu_ok(ctx, cudaMalloc((void **)&g->seed_dev, sizeof(float)), "lt_compile") ||
        !lt__cu_ok(ctx, cudaMallocHost((void **)&g->seed_pin, sizeof(float)), "lt_compile"))
        goto fail;
    lt_reset(ctx);                                                /* 2: the same step, recorded */
    cu->rec = g;
    if (!lt__cu_ok(ctx, cudaStreamBeginCapture(cu->stream, cudaStreamCaptureModeRelaxed), "lt_compile: capture")) {
        cu->rec = NULL;
        goto fail;
    }
    loss = p->fn(ctx, p->user);
    if (loss && !lt_failed(ctx)) lt_backward(ctx, loss);
    e = cudaStreamEndCapture(cu->stream, &graph);
    cu->rec = NULL;
    if (lt_failed(ctx) || e != cudaSuccess || g->failed || !graph) {
        why = lt_failed(ctx) ? lt_error(ctx) : cudaGetErrorString(e);
        (void)cudaGetLastError();
    } else if (cudaGraphInstantiate(&g->exec, graph, 0) != cudaSuccess) {
        why = "cudaGraphInstantiate failed";
        (void)cudaGetLastError();
    }
    if (graph) cudaGraphDestroy(graph);
    if (why) {   /* what cannot be recorded runs eagerly: slower, never wrong */
        snprintf(p->note, sizeof p->note, "eager fallback (cuda): the step could not be recorded as a graph: %.150s", why);
        lt_clear_error(ctx);
        lt__cu_graph_free(g);
        g = NULL;
        p->eager = 1;
    } else {
        g->loss_dev = loss->data;
        g->pdev = cu->pdev;
        g->pin_used = cu->pin_used;
        g->cnt = (int32_t *)LT__MALLOC((size_t)(g->cnt_cap ? g->cnt_cap : 1) * sizeof(int32_t));
        if (!g->cnt) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); goto fail; }
        p->graph = g;
        p->graph_dev = lt__cu_table();
        p->eager = 0;
        snprintf(p->note, sizeof p->note, "compiled (cuda graph): %d id inputs, device arena %.1f MB", g->n_in,
                 (double)cu->peak / 1048576.0);
        g = NULL;
    }
    lt_reset(ctx);
    if (saved) {
        cudaMemcpyAsync(cu->pdev + cu->pfloats, saved, cu->pfloats * sizeof(float), cudaMemcpyDeviceToDevice, cu->stream);
        cudaStreamSynchronize(cu->stream);
        cudaFree(saved);
    }
    ctx->rng = rng;
    return p;
fail:
    cu->rec = NULL;
    lt__cu_graph_free(g);
    if (saved) cudaFree(saved);
    lt_reset(ctx);
    lt_plan_destroy(p);
    return NULL;
}
static lt_status lt__cu_graph_run(lt_plan *p, float seed, float *loss_out) {
    lt_ctx *ctx = p->ctx;
    lt__cuda *cu = ctx->cuda;
    struct lt__cu_graph *g = p->graph;
    int k;
    if (!cu || ctx->device != LT_CUDA) return lt_set_error(ctx, LT_ERR_STATE, "lt_plan_run: the plan was compiled on cuda");
    if (!lt__cu_params_ready(ctx)) return ctx->status;
    if (cu->pdev != g->pdev)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_plan_run: parameters were added since lt_compile recorded this step "
                            "(hint: compile again)");
    lt_reset(ctx);
    /* the previous launch has read the staging: refill it from the step's inputs; later host work
       in this step (the optimizer's job list) stages past the graph's bytes */
    if (!lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "lt_plan_run")) return ctx->status;
    cu->pin_used = g->pin_used;
    for (k = 0; k < g->n_in; k++) lt__cu_stage_ids(g->in[k].stage, g->in[k].src, g->in[k].n, g->in[k].V, g->cnt);
    *g->seed_pin = seed;
    if (!lt__cu_ok(ctx, cudaMemcpyAsync(g->seed_dev, g->seed_pin, sizeof(float), cudaMemcpyHostToDevice, cu->stream), "lt_plan_run") ||
        !lt__cu_ok(ctx, cudaGraphLaunch(g->exec, cu->stream), "lt_plan_run: graph launch"))
        return ctx->status;
    cu->pstate = LT__CU_DEV_NEWER;
    if (loss_out) {
        if (lt__cu_ok(ctx, cudaMemcpyAsync(cu->red, g->loss_dev, sizeof(float), cudaMemcpyDeviceToHost, cu->stream), "lt_plan_run") &&
            lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "lt_plan_run"))
            *loss_out = *(float *)(void *)cu->red;
    }
    return ctx->status;
}
static void lt__cu_plan_free(lt_plan *p) { lt__cu_graph_free(p->graph); }

/* -- the device seam (@@CORE's lt__device): what the parts above call ---------------------------- */
static const lt__kernel lt__cu_op_fwd[LT__OP_COUNT] = {   /* by row of the op table */
#define LT__CU_FWD_ROW(name, reads) lt__##name##_fwd_cuda,
    LT__OP_LIST(LT__CU_FWD_ROW)
#undef LT__CU_FWD_ROW
};
static const lt__kernel lt__cu_op_bwd[LT__OP_COUNT] = {
#define LT__CU_BWD_ROW(name, reads) lt__##name##_bwd_cuda,
    LT__OP_LIST(LT__CU_BWD_ROW)
#undef LT__CU_BWD_ROW
};
static const lt__device lt__cuda_device = {
    "cuda",
    lt__cu_destroy, lt__cu_reset, lt__cu_synchronize, lt__cu_describe, lt__cu_arena_bytes, lt__cu_set_tf32,
    lt__cu_alloc, lt__cu_fill_values, lt__cu_fill_const, lt__cu_item, lt__cu_read, lt__cu_host_row,
    lt__cu_sync_params, lt__cu_params_changed,
    lt__cu_op_fwd, lt__cu_op_bwd, lt__cu_ids, lt__cu_seed, lt__cu_zero_grad,
    lt__cu_optim_step, lt__cu_optim_pull, lt__cu_optim_free, lt__cu_clip, lt__cu_unscale,
    lt__cu_compile, lt__cu_graph_run, lt__cu_plan_free,
};
static const lt__device *lt__cu_table(void) { return &lt__cuda_device; }

#endif /* LTRAIN_CUDA */
/* ---- src/99_end.h ---- */
/* ==== end: closes the implementation block; the licence ======================================= */

#endif /* LTRAIN_IMPLEMENTATION */

/* ------------------------------------------------------------------------------------------------
   This software is available under 2 licenses -- choose whichever you prefer.
   ALTERNATIVE A - MIT License
   Copyright (c) 2026 the ltrain.h authors
   Permission is hereby granted, free of charge, to any person obtaining a copy of this software
   and associated documentation files (the "Software"), to deal in the Software without
   restriction, including without limitation the rights to use, copy, modify, merge, publish,
   distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
   Software is furnished to do so, subject to the following conditions:
   The above copyright notice and this permission notice shall be included in all copies or
   substantial portions of the Software.
   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
   BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
   NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
   DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
   OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
   ALTERNATIVE B - Public Domain (www.unlicense.org)
   This is free and unencumbered software released into the public domain.  Anyone is free to
   copy, modify, publish, use, compile, sell, or distribute this software, either in source code
   form or as a compiled binary, for any purpose, commercial or non-commercial, and by any means.
------------------------------------------------------------------------------------------------ */

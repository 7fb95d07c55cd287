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
/* The LM head and the loss in one op: lt_cross_entropy(_sum)(lt_linear(x, W, NULL), targets) for
   x [..., C], W [V,C], without keeping the logits (float32, computed in blocks of 1024 columns,
   made again in backward: 3 floats a row kept instead of V).  The same loss and gradients up to
   float rounding (the sums run in another order); CPU only. */
LTRAIN_DEF lt_tensor *lt_linear_cross_entropy(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, const int32_t *targets);
LTRAIN_DEF lt_tensor *lt_linear_cross_entropy_sum(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, const int32_t *targets,
                                                  double denom);
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
/* The same for training loops, without writing zeros (torch's zero_grad(set_to_none=True)): each
   gradient is marked unset, and the next backward writes it instead of adding to it.  lt_backward,
   lt_plan_run, optimizers, clipping, the scaler, lt_tensor_read and lt_params_grad_span see zeros
   where no backward wrote; t->grad itself is undefined until the next backward ends (old values,
   and values written into it before then are lost). */
LTRAIN_DEF void lt_zero_grad_lazy(lt_ctx *ctx);
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
/* on = 1: lt_gpt_loss(_ex) at float32 on the CPU runs the head and the loss as
   lt_linear_cross_entropy(_sum): no [B,T,V] logits kept (R·V floats less), the loss and gradients
   equal to float rounding, the products made twice.  0 (the default): one op that keeps the R·V
   logits, each turned into its softmax term exp(z - max) by the forward, which backward's
   products read as they are (@@LOSS.linear_ce_exp): lt_linear + lt_cross_entropy's loss to the
   bit, the gradients equal to float rounding.  16-bit precision always fuses them (linear_ce16);
   a device runs lt_linear + lt_cross_entropy.  Returns the context's status. */
LTRAIN_DEF lt_status lt_gpt_set_fused_head(lt_gpt *gpt, int on);
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
   normalised x̂ = (x-mean)·rstd (plus rstd), attention's qkv and y, the logits (bf16's as float32
   values where its products run on converted panels, no AMX or AMD's AVX512_BF16: narrowing them
   cost more time than the bytes saved, @@LOSS.linear_ce16); so a compiled plan (lt_compile) frees
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
   Speed on the CPU: with AMX (Intel Xeons since Sapphire Rapids) bf16 products run on the tile
   unit, many times the float32 rate, and a bf16 step takes about half a float32 one's time; with
   AVX512_BF16 on AMD (Zen 4) they run on vdpbf16ps at up to twice the float32 rate
   (lt_kernel_name_for(LT_BF16) says which kernel), so a bf16 step is faster than a float32 one;
   there is no fp16 arithmetic on such CPUs, so fp16 products run at the float32 rate and the
   conversions make an fp16 step a little slower. */
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
   dims, and "\u0000" in strings are refused too.  Errors name the file and the tensor.
   lt_st_open reads only the header of a regular file and each tensor when it is asked for
   (lt_st_read_f32 straight into its output), so loading needs no memory for a second copy of the
   file; the file stays open until lt_st_close, and one lt_st is read by one thread at a time.  A
   pipe or device is read into memory, up to the data limit (lt_read_file).  A file cut short
   after it was opened gives an error naming the tensor, not a crash. */
typedef struct lt_st lt_st;
LTRAIN_DEF lt_st *lt_st_open(lt_ctx *ctx, const char *path);
LTRAIN_DEF lt_st *lt_st_parse(lt_ctx *ctx, const void *buf, size_t size, const char *label); /* copies */
LTRAIN_DEF void lt_st_close(lt_st *st);
LTRAIN_DEF int lt_st_count(const lt_st *st);
LTRAIN_DEF int lt_st_find(const lt_st *st, const char *name);        /* index or -1 */
LTRAIN_DEF const char *lt_st_name(const lt_st *st, int i);
LTRAIN_DEF const char *lt_st_dtype(const lt_st *st, int i);          /* "F32", "BF16", "I64", ... */
LTRAIN_DEF int lt_st_shape(const lt_st *st, int i, int64_t *shape);  /* returns ndim (shape: room for 8); -1 bad i */
/* The stored bytes (little-endian, not necessarily aligned); valid until lt_st_close.  From a file
   lt_st_open opened, read at the first call (NULL, with the error in the context, if that fails). */
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
   so decode(encode(x)) == x for every byte string x (NFC(x) under an NFC normalizer: invalid
   bytes pass through it unchanged).
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
   are the special tokens.  Refused with a message: other models and pre-tokenizers and normalizers,
   add_prefix_space, byte_fallback, subword prefixes/suffixes.  The post-processor is not applied
   (as HF's encode(add_special_tokens=False)).  normalizer: null, or NFC (Qwen2, Qwen2.5, Qwen3),
   alone or in a Sequence; other normalizers are refused with a message naming them.  With NFC,
   encode applies lt_tok_nfc to the text between special tokens (split out of the raw text first,
   as HF does for added tokens with normalized false, the default for special tokens; an added
   token with normalized true is matched in the raw text too) before pre-tokenization, and
   decode(encode(x)) == NFC(x): decoding does not undo the normalization.  With LT_TOK_SPECIAL
   each stretch between special tokens is normalized on its own, so a combining mark just after
   a special token stays apart ("<|e" then U+0301 is not composed into "<|é", as in HF): there
   NFC(decode(encode(x))) == NFC(x).  (HF's own NFC knows an older Unicode: 50 combining marks
   assigned since are starters there, see @@TOK.nfc.) */
LTRAIN_DEF lt_tokenizer *lt_tok_load_json(lt_ctx *ctx, const char *tokenizer_json);
LTRAIN_DEF lt_tokenizer *lt_tok_parse_json(lt_ctx *ctx, const void *buf, size_t size, const char *label);
LTRAIN_DEF void lt_tok_free(lt_tokenizer *tk);
/* Encodes n bytes of text; writes the first min(count, cap) ids to out (NULL with cap 0 only
   counts) and returns the count, or -1 on an error (tk's context says why).  A text of n bytes
   gives at most n ids, so cap = n is always enough, except under an NFC normalizer, whose text
   may be up to 3 times longer (cap = 3n). */
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
/* Unicode normalization form C (canonical decomposition, canonical ordering, canonical
   composition: UAX #15; the tables' Unicode version is in @@TOK.nfc) of n bytes of UTF-8 text:
   writes the first min(size, cap) bytes to out (no NUL added; NULL with cap 0 only measures) and
   returns the size (at most 3n), or -1 on a NULL argument or out of memory (the message on ctx
   when ctx is not NULL).  Each byte of an invalid UTF-8 sequence is kept as it is and acts as a
   character that composes with nothing.  Text whose characters all are below U+0300 or cannot
   change under NFC (NFC_QC Yes, combining class 0) costs one scan and a copy. */
LTRAIN_DEF int64_t lt_tok_nfc(lt_ctx *ctx, const char *text, size_t n, char *out, size_t cap);

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


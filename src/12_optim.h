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
        if (!(o->block = (float *)lt__zalloc_big(bytes))) goto oom;
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
LT__TARGET("avx2,fma") static int64_t lt__adamw_avx2(float *p, float *m, float *v, const float *g, int64_t n,
                                                    float shrink, float b1, float omb1, float b2, float omb2,
                                                    float bc2_sqrt, float eps, float neg_step);   /* fast path, below */
#endif
static void lt__adamw_update(float *p, float *m, float *v, const float *g, int64_t n, float shrink,
                             float b1, float omb1, float b2, float omb2, float bc2_sqrt, float eps,
                             float neg_step) {
    int64_t b;
#ifdef LT__X86
    int simd = lt__simd_level();
#endif
    /* threads take pieces of LT__EWB values; each piece is the decay pass, then the update pass
       (torch's two passes: no contraction can merge them), the second from cache */
    LT__OMP(parallel for if (n >= LT__OPT_PAR_MIN))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, hi = lo + LT__EWB < n ? lo + LT__EWB : n, i;
#ifdef LT__X86
        if (simd == 2) {
            lt__adamw_avx512(p + lo, m + lo, v + lo, g + lo, hi - lo, shrink, b1, omb1, b2, omb2, bc2_sqrt, eps,
                             neg_step);
            continue;
        }
        if (simd == 1)   /* whole blocks of 8; the rest below */
            lo += lt__adamw_avx2(p + lo, m + lo, v + lo, g + lo, hi - lo, shrink, b1, omb1, b2, omb2, bc2_sqrt, eps,
                                 neg_step);
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

/* ---- fast paths: AVX-512 and AVX2 (AdamW) ---------------------------------------------------- */
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
        LT__FETCH(p + i); LT__FETCH(g + i); LT__FETCH(m + i); LT__FETCH(v + i);   /* (@@CORE) */
        __m512 vi = _mm512_fmadd_ps(_mm512_mul_ps(vomb2, gi), gi, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, v + i), vb2));
        __m512 den = _mm512_add_ps(_mm512_div_ps(_mm512_maskz_sqrt_ps(LT__M16, vi), vbc), veps);
        if (shrink != 1.0f)   /* (a builtin: never contracted into the add below; maskz: see LT__M16) */
            pi = _mm512_maskz_mul_round_ps(LT__M16, pi, vshr, _MM_FROUND_CUR_DIRECTION);
        _mm512_mask_storeu_ps(m + i, k, mi);
        _mm512_mask_storeu_ps(v + i, k, vi);
        _mm512_mask_storeu_ps(p + i, k, _mm512_add_ps(pi, _mm512_div_ps(_mm512_mul_ps(vstep, mi), den)));
    }
}

/* The same with AVX2 + FMA (CPUs without AVX-512) on the first n - n % 8 values, 8 at a time,
   which it returns; the scalar loops take the rest.  Without a rounding-mode builtin to keep
   p·(1 − lr·λ) from being contracted into the update's add, the decay is its own pass over the
   piece (in L1), as in the scalar code: the same bits again. */
LT__TARGET("avx2,fma") static int64_t lt__adamw_avx2(float *p, float *m, float *v, const float *g, int64_t n,
                                                    float shrink, float b1, float omb1, float b2, float omb2,
                                                    float bc2_sqrt, float eps, float neg_step) {
    __m256 vb1 = _mm256_set1_ps(b1), vomb1 = _mm256_set1_ps(omb1), vb2 = _mm256_set1_ps(b2);
    __m256 vomb2 = _mm256_set1_ps(omb2), vbc = _mm256_set1_ps(bc2_sqrt), veps = _mm256_set1_ps(eps);
    __m256 vstep = _mm256_set1_ps(neg_step), vshr = _mm256_set1_ps(shrink);
    int64_t i, n8 = n & ~(int64_t)7;
    if (shrink != 1.0f)
        for (i = 0; i < n8; i += 8) _mm256_storeu_ps(p + i, _mm256_mul_ps(_mm256_loadu_ps(p + i), vshr));
    for (i = 0; i < n8; i += 8) {
        __m256 gi = _mm256_loadu_ps(g + i);
        __m256 mi = _mm256_fmadd_ps(vomb1, gi, _mm256_mul_ps(_mm256_loadu_ps(m + i), vb1));
        LT__FETCH(p + i); LT__FETCH(g + i); LT__FETCH(m + i); LT__FETCH(v + i);   /* (@@CORE) */
        __m256 vi = _mm256_fmadd_ps(_mm256_mul_ps(vomb2, gi), gi, _mm256_mul_ps(_mm256_loadu_ps(v + i), vb2));
        __m256 den = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), vbc), veps);
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        _mm256_storeu_ps(p + i, _mm256_add_ps(_mm256_loadu_ps(p + i), _mm256_div_ps(_mm256_mul_ps(vstep, mi), den)));
    }
    return n8;
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
    lt__grads_settle(opt->ctx);   /* gradients lt_zero_grad_lazy left unset: zero first (@@TENSOR) */
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


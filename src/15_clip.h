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
        if (t && t->grad) {
            lt__grads_settle(t->ctx);   /* gradients lt_zero_grad_lazy left unset: zero first (@@TENSOR) */
            return t;
        }
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


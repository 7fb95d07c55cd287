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
    if (!(x->block = (float *)lt__zalloc_big(bytes))) goto oom;
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


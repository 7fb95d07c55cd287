/* test_optim.c - AdamW, SGD, schedules and clipping against PyTorch (tests/ref/optim.bin, written
   by tests/ref/gen_optim.py), plus the error paths.  #included by test_main.c. */

/* A double stored as NAME.hi + NAME.lo (two float32 records, see gen_optim.py). */
static int to__f64(t_ref *r, const char *name, double **out, int64_t *n) {
    char a[160], b[160];
    t_arr *hi, *lo;
    int64_t i;
    snprintf(a, sizeof a, "%s.hi", name);
    snprintf(b, sizeof b, "%s.lo", name);
    hi = t_ref_get(r, a);
    lo = t_ref_get(r, b);
    if (!hi || !lo || hi->n != lo->n) return 0;
    *out = (double *)malloc((size_t)hi->n * sizeof(double));
    if (!*out) return 0;
    for (i = 0; i < hi->n; i++) (*out)[i] = (double)hi->data[i] + (double)lo->data[i];
    *n = hi->n;
    return 1;
}

/* Doubles agree when |got - ref| <= atol + rtol*|ref|; reports the worst relative error. */
static int to__close64(const char *name, const double *got, const double *ref, int64_t n, double atol, double rtol) {
    double worst = 0;
    int64_t i, at = -1;
    int ok = 1;
    for (i = 0; i < n; i++) {
        double d = fabs(got[i] - ref[i]), r = ref[i] != 0 ? d / fabs(ref[i]) : d;
        if (!(d <= atol + rtol * fabs(ref[i]))) ok = 0;
        if (!(r <= worst)) { worst = r; at = i; }
    }
    return t_check(ok, name, "max rel err %.3g at [%lld] (got %.17g ref %.17g; tol %g + %g*|ref|)", worst,
                   (long long)at, at >= 0 ? got[at] : 0.0, at >= 0 ? ref[at] : 0.0, atol, rtol);
}

/* The three tensors of gen_optim.py (w [8,16] and e [5,7] decayed, b [16] not), as parameters. */
#define TO_NP 3
static const char *const to__names[TO_NP] = {"w", "b", "e"};

/* A fresh context with the np tensors PREFIX.init.NAMES[i] as parameters p[i] (test_optim2.c's too);
   NULL when one is missing. */
static lt_ctx *to__load(t_ref *r, const char *prefix, const char *const *names, int np, lt_tensor **p) {
    lt_ctx *ctx = lt_ctx_create(1);
    int i;
    for (i = 0; i < np; i++) {
        char nm[64];
        t_arr *a;
        snprintf(nm, sizeof nm, "%s.init.%s", prefix, names[i]);
        if (!(a = t_ref_get(r, nm)) || !(p[i] = lt_param(ctx, names[i], a->ndim, a->shape))) {
            lt_ctx_destroy(ctx);
            return NULL;
        }
        memcpy(p[i]->data, a->data, (size_t)a->n * sizeof(float));
    }
    return ctx;
}
static lt_ctx *to__params(t_ref *r, lt_tensor **p) { return to__load(r, "opt", to__names, TO_NP, p); }

/* Replays stored steps [from, to) on the np parameters p (test_optim2.c's too): step k's gradient of
   p[i] is row k of PREFIX.grad.NAMES[i], its lr is lr0 * LR_NAME[k], and where PREFIX.hasgrad[k][i]
   is 0 the parameter has no gradient that step (torch: p.grad = None). */
static void to__replay(t_ref *r, const char *prefix, const char *const *names, int np, const char *lr_name, double lr0,
                       lt_optim *opt, lt_tensor **p, int from, int to) {
    char nm[64];
    t_arr *mask, *lr;
    int k, i;
    snprintf(nm, sizeof nm, "%s.hasgrad", prefix);
    mask = t_ref_get(r, nm);
    lr = t_ref_get(r, lr_name);
    if (!mask || !lr || np > 8) return;
    for (k = from; k < to; k++) {
        float *keep[8];
        for (i = 0; i < np; i++) {
            t_arr *g;
            snprintf(nm, sizeof nm, "%s.grad.%s", prefix, names[i]);
            g = t_ref_get(r, nm);
            memcpy(p[i]->grad, g->data + (int64_t)k * p[i]->n, (size_t)p[i]->n * sizeof(float));
            keep[i] = p[i]->grad;
            if (mask->data[k * np + i] == 0) p[i]->grad = NULL;
        }
        lt_optim_step(opt, lr0 * (double)lr->data[k]);
        for (i = 0; i < np; i++) p[i]->grad = keep[i];
    }
}
/* gen_optim.py's steps [from, to), at its stored lr. */
static void to__run(t_ref *r, lt_optim *opt, lt_tensor **p, int from, int to) {
    to__replay(r, "opt", to__names, TO_NP, "opt.lr", 1.0, opt, p, from, to);
}

/* Compares each parameter (and its state buffers) with prefix.NAME[.state_name]. */
static void to__compare(t_ref *r, lt_optim *opt, lt_tensor **p, const char *prefix, double atol, double rtol) {
    int i, w;
    for (i = 0; i < TO_NP; i++) {
        char nm[128], tn[160];
        t_arr *a;
        snprintf(nm, sizeof nm, "%s.%s", prefix, to__names[i]);
        a = t_ref_get(r, nm);
        snprintf(tn, sizeof tn, "optim.%s", nm);
        if (!a || a->n != p[i]->n) { t_check(0, tn, "reference missing"); continue; }
        t_close(tn, p[i]->data, a->data, a->n, atol, rtol);
        for (w = 0; w < lt_optim_num_states(opt); w++) {
            snprintf(nm, sizeof nm, "%s.%s.%s", prefix, to__names[i], lt_optim_state_name(opt, w));
            snprintf(tn, sizeof tn, "optim.%s", nm);
            a = t_ref_get(r, nm);
            if (!a || a->n != p[i]->n) { t_check(0, tn, "reference missing"); continue; }
            t_close(tn, lt_optim_state(opt, i, w), a->data, a->n, atol, rtol);
        }
    }
}

static lt_adamw_config to__adamw_cfg(lt_decay_mode mode) {
    lt_adamw_config c = lt_adamw_defaults();
    c.beta1 = 0.9; c.beta2 = 0.95; c.eps = 1e-8; c.weight_decay = 0.1; c.decay_mode = mode;
    return c;
}

/* fp32 state after 6 steps (AdamW and SGD): the same operations, order and fused multiply-adds
   as torch, measured bit-identical; the tolerance, 2.5e-7 relative (2-4 ulps) + 1e-9, only allows
   for another libm's pow() in the bias corrections. */
#define TO_ATOL 1e-9
#define TO_RTOL 2.5e-7
static void to__test_adamw(t_ref *r) {
    static const struct { const char *tag; lt_decay_mode mode; } cases[] = {
        {"marked", LT_DECAY_MARKED}, {"all", LT_DECAY_ALL}};
    int c;
    for (c = 0; c < 2; c++) {
        lt_tensor *p[TO_NP];
        lt_ctx *ctx;
        lt_optim *opt;
        char prefix[64];
        snprintf(prefix, sizeof prefix, "optim.adamw.%s", cases[c].tag);
        if (!t_want(prefix)) continue;
        snprintf(prefix, sizeof prefix, "adamw.%s", cases[c].tag);
        ctx = to__params(r, p);
        if (!ctx) { t_check(0, prefix, "reference missing"); continue; }
        opt = lt_adamw_create(ctx, lt_ctx_params(ctx), to__adamw_cfg(cases[c].mode));
        to__run(r, opt, p, 0, 6);
        t_check(!lt_failed(ctx) && lt_optim_steps(opt) == 6, "optim.adamw.steps", "%s", lt_error(ctx));
        to__compare(r, opt, p, prefix, TO_ATOL, TO_RTOL);
        lt_optim_destroy(opt);
        lt_ctx_destroy(ctx);
    }
}

/* Checkpoint resume: 2 steps, copy the moments into a fresh optimizer with lt_optim_set_steps,
   4 more steps: bit-identical to 6 uninterrupted steps (compared with the torch reference and
   with tolerance 0 against an uninterrupted run). */
static void to__test_resume(t_ref *r) {
    lt_tensor *p[TO_NP], *q[TO_NP];
    lt_ctx *ca, *cb;
    lt_optim *a, *b1, *b2;
    int i, w, same = 1;
    if (!t_want("optim.resume")) return;
    ca = to__params(r, p);
    cb = to__params(r, q);
    if (!ca || !cb) { t_check(0, "optim.resume", "reference missing"); lt_ctx_destroy(ca); lt_ctx_destroy(cb); return; }
    a = lt_adamw_create(ca, lt_ctx_params(ca), to__adamw_cfg(LT_DECAY_MARKED));
    b1 = lt_adamw_create(cb, lt_ctx_params(cb), to__adamw_cfg(LT_DECAY_MARKED));
    to__run(r, a, p, 0, 6);
    to__run(r, b1, q, 0, 2);
    b2 = lt_adamw_create(cb, lt_ctx_params(cb), to__adamw_cfg(LT_DECAY_MARKED));
    lt_optim_set_steps(b2, lt_optim_steps(b1));
    for (i = 0; i < TO_NP; i++)
        for (w = 0; w < 2; w++)
            memcpy(lt_optim_state(b2, i, w), lt_optim_state(b1, i, w), (size_t)q[i]->n * sizeof(float));
    lt_optim_destroy(b1);
    to__run(r, b2, q, 2, 6);
    for (i = 0; i < TO_NP; i++) same &= memcmp(p[i]->data, q[i]->data, (size_t)p[i]->n * sizeof(float)) == 0;
    t_check(same && lt_optim_steps(b2) == 6, "optim.resume", "resumed run differs from the uninterrupted one");
    lt_optim_destroy(a);
    lt_optim_destroy(b2);
    lt_ctx_destroy(ca);
    lt_ctx_destroy(cb);
}

static void to__test_sgd(t_ref *r) {
    static const struct {
        const char *tag;
        double momentum, dampening, wd;
        int nesterov;
        lt_decay_mode mode;
    } cases[] = {{"plain", 0, 0, 0, 0, LT_DECAY_ALL},
                 {"momentum", 0.9, 0, 0, 0, LT_DECAY_ALL},
                 {"nesterov_wd", 0.9, 0, 0.01, 1, LT_DECAY_ALL},
                 {"damp_marked", 0.8, 0.1, 0.05, 0, LT_DECAY_MARKED}};
    int c;
    for (c = 0; c < 4; c++) {
        lt_tensor *p[TO_NP];
        lt_ctx *ctx;
        lt_optim *opt;
        lt_sgd_config cfg = lt_sgd_defaults();
        char prefix[64];
        snprintf(prefix, sizeof prefix, "optim.sgd.%s", cases[c].tag);
        if (!t_want(prefix)) continue;
        snprintf(prefix, sizeof prefix, "sgd.%s", cases[c].tag);
        ctx = to__params(r, p);
        if (!ctx) { t_check(0, prefix, "reference missing"); continue; }
        cfg.momentum = cases[c].momentum; cfg.dampening = cases[c].dampening;
        cfg.weight_decay = cases[c].wd; cfg.nesterov = cases[c].nesterov; cfg.decay_mode = cases[c].mode;
        opt = lt_sgd_create(ctx, lt_ctx_params(ctx), cfg);
        to__run(r, opt, p, 0, 6);
        t_check(!lt_failed(ctx) && opt != NULL, "optim.sgd.create", "%s", lt_error(ctx));
        to__compare(r, opt, p, prefix, TO_ATOL, TO_RTOL);
        lt_optim_destroy(opt);
        lt_ctx_destroy(ctx);
    }
}

/* lt_schedule_lr against torch (SequentialLR for cosine, LambdaLR for the rest), in double. */
static void to__test_schedule(t_ref *r) {
    static const struct { const char *tag; lt_schedule s; } cases[] = {
        {"cosine", {6e-4, 6e-5, 10, 100, 0.1, LT_SCHED_COSINE}},
        {"linear", {3e-4, 3e-5, 5, 50, 0.1, LT_SCHED_LINEAR}},
        {"sqrt", {1e-3, 0.0, 8, 40, 0.0, LT_SCHED_SQRT}},
        {"constant", {2e-3, 1e-4, 4, 20, 0.25, LT_SCHED_CONSTANT}},
        {"cosine0", {1e-3, 0.0, 6, 30, 0.0, LT_SCHED_COSINE}}};
    int c;
    for (c = 0; c < 5; c++) {
        char nm[64], tn[80];
        double *ref = NULL, *got;
        int64_t n, k;
        snprintf(nm, sizeof nm, "sched.%s", cases[c].tag);
        snprintf(tn, sizeof tn, "optim.%s", nm);
        if (!t_want(tn)) continue;
        if (!to__f64(r, nm, &ref, &n)) { t_check(0, tn, "reference missing"); continue; }
        got = (double *)malloc((size_t)n * sizeof(double));
        for (k = 0; k < n; k++) got[k] = lt_schedule_lr(&cases[c].s, k);
        to__close64(tn, got, ref, n, 1e-18, 1e-12);
        /* past the end: min_lr (torch's cosine would climb again; we hold) */
        t_check(lt_schedule_lr(&cases[c].s, cases[c].s.total + 1000) ==
                    (cases[c].s.decay == LT_SCHED_CONSTANT ? cases[c].s.lr : cases[c].s.min_lr),
                tn, "past total: %g", lt_schedule_lr(&cases[c].s, cases[c].s.total + 1000));
        free(got);
        free(ref);
    }
    if (t_want("optim.sched.names")) {
        int ok = 1, d;
        lt_decay got;
        for (d = 0; d < 4; d++) ok &= lt_decay_parse(lt_decay_name((lt_decay)d), &got) && got == (lt_decay)d;
        ok &= !lt_decay_parse("cosin", &got) && !lt_decay_parse(NULL, &got);
        t_check(ok, "optim.sched.names", "lt_decay_name / lt_decay_parse do not round-trip");
    }
}

/* lt_linear_lr / lt_cosine_annealing_lr / lt_sequential_lr against torch: the same chained
   formulas, so agreement is to rounding (1e-12 relative). */
static lt_lrs *to__lrs_build(int which) {
    lt_lrs *k[3];
    int64_t ms[2];
    switch (which) {
    case 0:
        k[0] = lt_linear_lr(1e-2, 0.1, 1.0, 10); k[1] = lt_cosine_annealing_lr(1e-2, 90, 1e-4); ms[0] = 10;
        return lt_sequential_lr(k, 2, ms);
    case 1: return lt_linear_lr(0.5, 1.0 / 3, 1.0, 5);
    case 2: return lt_linear_lr(0.5, 1.0, 0.0, 20);
    case 3: return lt_cosine_annealing_lr(0.1, 7, 0.001);
    case 4:
        k[0] = lt_linear_lr(0.3, 0.25, 1.0, 4); k[1] = lt_cosine_annealing_lr(0.3, 10, 0.0);
        k[2] = lt_linear_lr(0.3, 0.5, 0.1, 6); ms[0] = 4; ms[1] = 14;
        return lt_sequential_lr(k, 3, ms);
    default:
        k[0] = lt_cosine_annealing_lr(0.05, 5, 0.01); k[1] = lt_linear_lr(0.05, 0.5, 1.0, 3); ms[0] = 5;
        return lt_sequential_lr(k, 2, ms);
    }
}

static void to__test_lrs(t_ref *r) {
    static const char *const tags[] = {"article", "linear_up", "linear_down", "cosine", "three", "cos_then_linear"};
    int c;
    for (c = 0; c < 6; c++) {
        char nm[64], tn[80];
        double *ref = NULL, *got;
        int64_t n, k;
        lt_lrs *s;
        snprintf(nm, sizeof nm, "lrs.%s", tags[c]);
        snprintf(tn, sizeof tn, "optim.%s", nm);
        if (!t_want(tn)) continue;
        if (!to__f64(r, nm, &ref, &n)) { t_check(0, tn, "reference missing"); continue; }
        got = (double *)malloc((size_t)n * sizeof(double));
        s = to__lrs_build(c);
        for (k = 0; k < n; k++) { got[k] = lt_lrs_get(s); lt_lrs_step(s); }
        to__close64(tn, got, ref, n, 1e-18, 1e-12);
        lt_lrs_destroy(s);
        free(got);
        free(ref);
    }
    if (t_want("optim.lrs.args")) {
        lt_lrs *k[2];
        int64_t ms[1] = {3};
        int ok = lt_linear_lr(1.0, 0.0, 1.0, 5) == NULL && lt_linear_lr(1.0, 0.5, 1.5, 5) == NULL &&
                 lt_cosine_annealing_lr(1.0, 0, 0.0) == NULL;
        k[0] = lt_linear_lr(1.0, 0.5, 1.0, 5); k[1] = NULL;
        ok &= lt_sequential_lr(k, 2, ms) == NULL; /* frees k[0] (ownership is taken) */
        ok &= lt_lrs_get(NULL) != lt_lrs_get(NULL); /* NaN */
        t_check(ok, "optim.lrs.args", "out-of-range settings must give NULL");
    }
}

/* The article's first program prints these at steps 1,2,3,9,10,11,98,99,100. */
static void to__test_seed_lr(void) {
    static const int at[] = {1, 2, 3, 9, 10, 11, 98, 99, 100};
    static const char *const want = "0.0010 0.0019 0.0028 0.0082 0.0091 0.0100 0.0001 0.0001 0.0001 ";
    char got[128] = "", one[16];
    lt_lrs *k[2], *s;
    int64_t ms[1] = {10};
    int step, j = 0;
    if (!t_want("optim.seed_schedule")) return;
    k[0] = lt_linear_lr(1e-2, 0.1, 1.0, 10);
    k[1] = lt_cosine_annealing_lr(1e-2, 90, 1e-4);
    s = lt_sequential_lr(k, 2, ms);
    for (step = 1; step <= 100; step++) {
        if (j < 9 && at[j] == step) {
            snprintf(one, sizeof one, "%.4f ", lt_lrs_get(s));
            strcat(got, one);
            j++;
        }
        lt_lrs_step(s);
    }
    t_check(strcmp(got, want) == 0, "optim.seed_schedule.lr", "got %s, want %s", got, want);
    lt_lrs_destroy(s);
}

/* Clipping: parameters c0 [6,9], c1 [9], c2 [3,4] with gradients, c3 [5] without. */
static lt_ctx *to__clip_params(t_ref *r, lt_tensor **p, float **c3_grad) {
    static const char *const nm[4] = {"c0", "c1", "c2", "c3"};
    lt_ctx *ctx = lt_ctx_create(1);
    int i;
    for (i = 0; i < 4; i++) {
        char key[64];
        t_arr *a;
        int64_t five = 5;
        snprintf(key, sizeof key, "clip.grad.%s", nm[i]);
        a = t_ref_get(r, key);
        if (i < 3 && !a) { lt_ctx_destroy(ctx); return NULL; }
        p[i] = i < 3 ? lt_param(ctx, nm[i], a->ndim, a->shape) : lt_param(ctx, nm[i], 1, &five);
        if (i < 3) memcpy(p[i]->grad, a->data, (size_t)a->n * sizeof(float));
        else { *c3_grad = p[i]->grad; p[i]->grad = NULL; } /* torch: .grad is None (put back later) */
    }
    return ctx;
}

static void to__test_clip(t_ref *r) {
    static const char *const nm[3] = {"c0", "c1", "c2"};
    int c, i;
    for (c = 0; c < 3; c++) {
        static const char *const tags[3] = {"norm1", "norm100", "value"};
        lt_tensor *p[4];
        float *keep = NULL;
        lt_ctx *ctx;
        char tn[64], key[64];
        snprintf(tn, sizeof tn, "optim.clip.%s", tags[c]);
        if (!t_want(tn)) continue;
        ctx = to__clip_params(r, p, &keep);
        if (!ctx) { t_check(0, tn, "reference missing"); continue; }
        if (c < 2) {
            /* torch's norm is float32 (summed in float); ours is summed in double: 1e-6 relative */
            double total = lt_clip_grad_norm(ctx, lt_ctx_params(ctx), c == 0 ? 1.0 : 100.0);
            t_arr *ref;
            snprintf(key, sizeof key, "clip.%s.total", tags[c]);
            ref = t_ref_get(r, key);
            t_check(ref && fabs(total - ref->data[0]) <= 1e-6 * fabs(ref->data[0]) && !lt_failed(ctx), tn,
                    "total norm %.9g, torch %.9g", total, ref ? ref->data[0] : 0.0);
        } else {
            lt_clip_grad_value(ctx, lt_ctx_params(ctx), 0.3);
        }
        for (i = 0; i < 3; i++) {
            t_arr *ref;
            char sub[80];
            snprintf(key, sizeof key, "clip.%s.%s", tags[c], nm[i]);
            snprintf(sub, sizeof sub, "optim.%s", key);
            ref = t_ref_get(r, key);
            if (!ref) { t_check(0, sub, "reference missing"); continue; }
            t_close(sub, p[i]->grad, ref->data, ref->n, 1e-9, c == 2 ? 0.0 : 1e-6); /* value: exact */
        }
        p[3]->grad = keep;
        lt_ctx_destroy(ctx);
    }
}

/* A NaN gradient: the norm is NaN, LT_ERR_NONFINITE names the parameter, gradients unchanged. */
static void to__test_clip_nonfinite(void) {
    lt_ctx *ctx;
    lt_tensor *a, *b;
    int64_t sh[2] = {3, 4};
    float before[12];
    double norm;
    int i, same = 1;
    if (!t_want("optim.clip.nonfinite")) return;
    ctx = lt_ctx_create(7);
    a = lt_param(ctx, "first", 2, sh);
    b = lt_param(ctx, "second", 2, sh);
    for (i = 0; i < 12; i++) { a->grad[i] = 3.0f * (float)i; b->grad[i] = -1.0f; }
    b->grad[5] = (float)NAN;
    memcpy(before, a->grad, sizeof before);
    norm = lt_clip_grad_norm(ctx, lt_ctx_params(ctx), 1.0);
    same = memcmp(before, a->grad, sizeof before) == 0 && b->grad[0] == -1.0f;
    t_check(norm != norm && lt_status_of(ctx) == LT_ERR_NONFINITE && strstr(lt_error(ctx), "'second'") && same,
            "optim.clip.nonfinite", "norm %g, status %s, message \"%s\"", norm, lt_status_name(lt_status_of(ctx)),
            lt_error(ctx));
    /* after the error sticks, an optimizer step does nothing and returns the status */
    {
        lt_optim *opt;
        lt_clear_error(ctx);
        opt = lt_sgd_create(ctx, lt_ctx_params(ctx), lt_sgd_defaults());
        lt_set_error(ctx, LT_ERR_STATE, "test: a failure before the step");
        a->data[0] = 1.0f;
        t_check(lt_optim_step(opt, 0.1) == LT_ERR_STATE && a->data[0] == 1.0f && lt_optim_steps(opt) == 0,
                "optim.step_after_error", "the step ran on a failed context");
        lt_optim_destroy(opt);
    }
    lt_ctx_destroy(ctx);
    /* clip by value leaves NaN as NaN, as torch's clamp does */
    {
        lt_tensor t;
        float g[3] = {(float)NAN, 2.0f, -2.0f}, d[3] = {0, 0, 0};
        lt_tensor *tp = &t;
        lt_paramset ps;
        memset(&t, 0, sizeof t);
        t.data = d; t.grad = g; t.n = 3; t.ndim = 1; t.shape[0] = 3;
        ps.p = &tp; ps.n = 1;
        ctx = lt_ctx_create(1);
        lt_clip_grad_value(ctx, ps, 1.5);
        t_check(g[0] != g[0] && g[1] == 1.5f && g[2] == -1.5f, "optim.clip.value_nan", "got %g %g %g", g[0], g[1], g[2]);
        lt_ctx_destroy(ctx);
    }
}

/* Above the threading threshold (OpenMP builds split the loops): the norm against a plain double
   sum, clipping against a scalar loop, and AdamW against the same update run on two halves. */
static void to__test_large(void) {
    enum { N = 100003 };
    lt_ctx *ctx;
    lt_tensor *a, *h1, *h2;
    int64_t n = N, n1 = N / 2, n2 = N - N / 2, i;
    double sum = 0, norm;
    float coef;
    int ok;
    lt_optim *o1, *o2;
    lt_paramset one, halves;
    lt_tensor *halfp[2];
    lt_adamw_config cfg = lt_adamw_defaults();
    if (!t_want("optim.large")) return;
    ctx = lt_ctx_create(3);
    a = lt_param(ctx, "a", 1, &n);
    h1 = lt_param(ctx, "h1", 1, &n1);
    h2 = lt_param(ctx, "h2", 1, &n2);
    lt_init_normal(ctx, a, 0.0, 1.0);
    for (i = 0; i < N; i++) {
        a->grad[i] = (float)(lt_rng_normal(lt_ctx_rng(ctx)) * 0.01);
        sum += (double)a->grad[i] * a->grad[i];
        *(i < n1 ? &h1->data[i] : &h2->data[i - n1]) = a->data[i];
        *(i < n1 ? &h1->grad[i] : &h2->grad[i - n1]) = a->grad[i];
    }
    one.p = &a; one.n = 1;
    halfp[0] = h1; halfp[1] = h2;
    halves.p = halfp; halves.n = 2;
    norm = lt_grad_norm(ctx, one);
    ok = fabs(norm - sqrt(sum)) <= 1e-12 * sqrt(sum);
    t_check(ok, "optim.large.norm", "norm %.17g, plain sum %.17g", norm, sqrt(sum));
    coef = (1.0f / ((float)norm + 1e-6f)) * 0.5f;
    norm = lt_clip_grad_norm(ctx, halves, 0.5);
    for (ok = 1, i = 0; i < N; i++) ok &= (i < n1 ? h1->grad[i] : h2->grad[i - n1]) == a->grad[i] * coef;
    t_check(ok, "optim.large.clip", "clipped gradients differ from g * %g", (double)coef);
    for (i = 0; i < N; i++) a->grad[i] *= coef;
    cfg.decay_mode = LT_DECAY_ALL;
    o1 = lt_adamw_create(ctx, one, cfg);
    o2 = lt_adamw_create(ctx, halves, cfg);
    for (i = 0; i < 3; i++) { lt_optim_step(o1, 1e-2); lt_optim_step(o2, 1e-2); }
    ok = memcmp(h1->data, a->data, (size_t)n1 * sizeof(float)) == 0 &&
         memcmp(h2->data, a->data + n1, (size_t)n2 * sizeof(float)) == 0;
    t_check(ok && !lt_failed(ctx), "optim.large.adamw", "split and whole updates differ %s", lt_error(ctx));
    lt_optim_destroy(o1);
    lt_optim_destroy(o2);
    lt_ctx_destroy(ctx);
}

/* AdamW's AVX-512 and AVX2 passes (LT_GEMM unset, LT_GEMM=avx2) give the scalar loops' bits
   (LT_GEMM=portable picks those): odd lengths, with and without weight decay, the pieces split
   over the threads. */
static void to__test_adamw_simd(void) {
    static const int64_t lens[3] = {37, 4096 + 5, 70001};
    lt_ctx *ctx;
    lt_tensor *a[3], *b[3], *c[3];
    lt_paramset pa, pb, pc;
    lt_optim *oa, *ob, *oc;
    lt_adamw_config cfg = lt_adamw_defaults();
    int k, step, mode, ok = 1;
    int64_t i;
    if (!t_want("optim.adamw_simd")) return;
    for (mode = 0; mode < 2; mode++) {
        ctx = lt_ctx_create(5);
        for (k = 0; k < 3; k++) {
            static const char *na[3] = {"a0", "a1", "a2"}, *nb[3] = {"b0", "b1", "b2"}, *nc[3] = {"c0", "c1", "c2"};
            a[k] = lt_param(ctx, na[k], 1, &lens[k]);
            b[k] = lt_param(ctx, nb[k], 1, &lens[k]);
            c[k] = lt_param(ctx, nc[k], 1, &lens[k]);
            if (!a[k] || !b[k] || !c[k]) break;
            lt_init_normal(ctx, a[k], 0.0, 1.0);
            memcpy(b[k]->data, a[k]->data, (size_t)lens[k] * sizeof(float));
            memcpy(c[k]->data, a[k]->data, (size_t)lens[k] * sizeof(float));
        }
        if (k < 3) { ok = 0; lt_ctx_destroy(ctx); break; }
        pa.p = a; pa.n = 3;
        pb.p = b; pb.n = 3;
        pc.p = c; pc.n = 3;
        cfg.decay_mode = mode ? LT_DECAY_ALL : LT_DECAY_NONE;
        cfg.weight_decay = 0.1;
        oa = lt_adamw_create(ctx, pa, cfg);
        ob = lt_adamw_create(ctx, pb, cfg);
        oc = lt_adamw_create(ctx, pc, cfg);
        for (step = 0; step < 3; step++) {
            for (k = 0; k < 3; k++)
                for (i = 0; i < lens[k]; i++)
                    c[k]->grad[i] = b[k]->grad[i] = a[k]->grad[i] = (float)(lt_rng_normal(lt_ctx_rng(ctx)) * 0.01);
            lt_optim_step(oa, 1e-2);
            setenv("LT_GEMM", "portable", 1);
            lt_optim_step(ob, 1e-2);
            setenv("LT_GEMM", "avx2", 1);
            lt_optim_step(oc, 1e-2);
            unsetenv("LT_GEMM");
        }
        for (k = 0; k < 3; k++)
            ok &= memcmp(a[k]->data, b[k]->data, (size_t)lens[k] * sizeof(float)) == 0 &&
                  memcmp(c[k]->data, b[k]->data, (size_t)lens[k] * sizeof(float)) == 0;
        ok &= !lt_failed(ctx);
        lt_optim_destroy(oa);
        lt_optim_destroy(ob);
        lt_optim_destroy(oc);
        lt_ctx_destroy(ctx);
    }
    t_check(ok, "optim.adamw_simd.bits", "the vector and the scalar AdamW passes differ");
}

/* Bad settings give LT_ERR_ARG and NULL; accessors answer NULL past the end. */
static void to__test_optim_args(void) {
    lt_ctx *ctx;
    lt_tensor *w;
    int64_t sh[2] = {2, 3};
    lt_sgd_config s = lt_sgd_defaults();
    lt_adamw_config a = lt_adamw_defaults();
    lt_optim *o;
    int ok;
    if (!t_want("optim.args")) return;
    ctx = lt_ctx_create(1);
    w = lt_param(ctx, "w", 2, sh);
    s.nesterov = 1; /* without momentum */
    ok = lt_sgd_create(ctx, lt_ctx_params(ctx), s) == NULL && lt_status_of(ctx) == LT_ERR_ARG;
    lt_clear_error(ctx);
    a.beta2 = 1.0;
    ok &= lt_adamw_create(ctx, lt_ctx_params(ctx), a) == NULL && lt_status_of(ctx) == LT_ERR_ARG;
    lt_clear_error(ctx);
    o = lt_adamw_create(ctx, lt_ctx_params(ctx), lt_adamw_defaults());
    ok &= o && lt_optim_num_states(o) == 2 && strcmp(lt_optim_name(o), "adamw") == 0 &&
          strcmp(lt_optim_state_name(o, 1), "exp_avg_sq") == 0 && lt_optim_state_name(o, 2) == NULL &&
          lt_optim_state(o, 1, 0) == NULL && lt_optim_state(o, 0, 2) == NULL &&
          lt_optim_params(o).n == 1 && lt_optim_params(o).p[0] == w;
    ok &= lt_optim_step(o, NAN) == LT_ERR_ARG;
    lt_optim_destroy(o);
    t_check(ok, "optim.args", "%s", lt_error(ctx));
    lt_ctx_destroy(ctx);
}

static void test_optim_all(void) {
    t_ref r;
    char path[512];
    snprintf(path, sizeof path, "%s/optim.bin", t_ref_dir());
    to__test_seed_lr();
    to__test_clip_nonfinite();
    to__test_optim_args();
    to__test_large();
    to__test_adamw_simd();
    if (!t_ref_load(&r, path) || r.n == 0) {
        t_skip("optim.reference", "tests/ref/optim.bin missing (run: python3 tests/ref/gen_optim.py)");
        t_ref_free(&r);
        return;
    }
    to__test_adamw(&r);
    to__test_resume(&r);
    to__test_sgd(&r);
    to__test_schedule(&r);
    to__test_lrs(&r);
    to__test_clip(&r);
    t_ref_free(&r);
}

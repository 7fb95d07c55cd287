/* test_recompute.c - activation checkpointing (lt_recompute_begin / lt_recompute_end): gradients
   to the bit against steps without it, eager and compiled, fp32 and bf16, dropout on; the memory
   it saves; its errors.  The float32 head and loss in column blocks (lt_linear_cross_entropy,
   lt_gpt_set_fused_head), and the one with the exponentials kept (linear_ce_exp, lt_gpt_loss's at
   float32): against lt_linear + lt_cross_entropy and PyTorch, their bits. */

typedef struct { lt_gpt *g; int32_t *in, *tg; int B, T; } tr_step;

static lt_tensor *tr_loss(lt_ctx *ctx, void *u) {
    tr_step *s = (tr_step *)u;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, s->T);
}

/* A GPT (V 64, ctx T, L layers, 2 heads, C channels, dropout 0.1) trained for `steps` forward +
   backward passes (gradients accumulate, the RNG runs on) with blocks checkpointed every `every`
   (0: none), eager or compiled, in precision prec.  Returns a copy of the gradients (n floats)
   and the last loss; *mem is the arena's peak (eager) or the planned block (compiled), *saved the
   plan's saved bytes. */
static const char *tr_budget;   /* lt_set_memory_budget for the next tr_grads (NULL: none) */
static int tr_fused;            /* lt_gpt_set_fused_head for the next tr_grads */
static struct { size_t rc_bytes; double flops; int rc, rc_gemm; char err[512]; } tr_last;   /* its plan */

static float *tr_grads(int L, int C, int T, int every, int compiled, lt_dtype prec, int steps, float *loss,
                       size_t *mem, size_t *saved, size_t *n) {
    lt_ctx *ctx = lt_ctx_create(7);
    lt_gpt_config cfg = lt_gpt2_config(64, 16, 2, 2, 32);
    tr_step s;
    lt_plan *p = NULL;
    int32_t in[4 * 64], tg[4 * 64];
    lt_rng r;
    float *g = NULL, *span;
    int i, k;
    cfg.layers = L; cfg.channels = C; cfg.ctx = T; cfg.dropout = 0.1f;
    s.g = lt_gpt_create(ctx, &cfg); s.B = 4; s.T = T; s.in = in; s.tg = tg;
    lt_rng_seed(&r, 1);
    for (i = 0; i < s.B * s.T; i++) {
        in[i] = (int32_t)(lt_rng_u64(&r) % 64u);
        tg[i] = i % 11 == 5 ? LT_IGNORE_INDEX : (int32_t)(lt_rng_u64(&r) % 64u);
    }
    if (prec != LT_F32) lt_set_precision(ctx, prec);
    lt_gpt_set_recompute(s.g, every);
    lt_gpt_set_fused_head(s.g, tr_fused);
    *mem = *saved = 0;
    memset(&tr_last, 0, sizeof tr_last);
    lt_set_memory_budget(ctx, tr_budget);
    if (compiled) p = lt_compile(ctx, tr_loss, &s);
    if (p) {
        tr_last.rc_bytes = lt_plan_recomputed_bytes(p);
        tr_last.flops = lt_plan_recomputed_flops(p);
        for (k = 0; k < p->n && p->n_rc; k++) {
            const lt__opdef *op = p->nodes[k].op;
            tr_last.rc += p->rc[k];
            tr_last.rc_gemm += p->rc[k] && (op == LT__OP(conv1d) || op == LT__OP(linear) || op == LT__OP(matmul) ||
                                            op == LT__OP(conv1d16) || op == LT__OP(linear16) || op == LT__OP(attention));
        }
    }
    for (k = 0; k < steps && !lt_failed(ctx); k++) {
        if (p) lt_plan_run(p, loss);
        else {
            lt_tensor *l = tr_loss(ctx, &s);
            *loss = lt_item(l);
            lt_backward(ctx, l);
        }
    }
    if (p) { *mem = lt_plan_bytes(p); *saved = lt_plan_saved_bytes(p); }
    else *mem = lt_arena_peak(ctx);
    span = lt_params_grad_span(ctx, n);
    if (!lt_failed(ctx) && span) {
        g = (float *)malloc(*n * sizeof(float));
        memcpy(g, span, *n * sizeof(float));
    } else {
        snprintf(tr_last.err, sizeof tr_last.err, "%s", lt_error(ctx));
    }
    lt_plan_destroy(p);
    lt_gpt_destroy(s.g);
    lt_ctx_destroy(ctx);
    return g;
}

/* The gradients and loss of checkpointing `every` equal those without, to the bit. */
static void tr_same_bits(const char *name, int every, int compiled, lt_dtype prec) {
    float l0 = 0, l1 = 0, *g0, *g1;
    size_t m0, m1, s0, s1, n0 = 0, n1 = 0;
    g0 = tr_grads(3, 32, 16, 0, 0, prec, 2, &l0, &m0, &s0, &n0);   /* eager, no segments: the reference */
    g1 = tr_grads(3, 32, 16, every, compiled, prec, 2, &l1, &m1, &s1, &n1);
    t_check(g0 && g1 && n0 == n1 && !memcmp(g0, g1, n0 * sizeof(float)) && !memcmp(&l0, &l1, sizeof l0), name,
            "loss %.9g vs %.9g, gradients %s", (double)l0, (double)l1,
            g0 && g1 && n0 == n1 ? (memcmp(g0, g1, n0 * sizeof(float)) ? "differ" : "equal") : "missing");
    free(g0);
    free(g1);
}

/* Under memory budgets (compiled, fp32 and bf16, dropout on): the gradients of the step without
   recomputation to the bit, the plan within the budget, cheap ops run again before products. */
static void tr_budgets(void) {
    const char *wants[2][3] = {{"75%", "50%", "45%"}, {"75%", "65%", "60%"}}, **want;   /* (bf16 plans are smaller) */
    float l0 = 0, l1 = 0, *g0, *g1;
    size_t m0, m1, s0, s1, n0 = 0, n1 = 0, d;
    int i, pr;
    for (pr = 0; pr < 2; pr++) {
        lt_dtype prec = pr ? LT_BF16 : LT_F32;
        want = wants[pr];
        tr_budget = NULL;
        g0 = tr_grads(4, 64, 64, 0, 0, prec, 2, &l0, &m0, &s0, &n0);
        free(tr_grads(4, 64, 64, 0, 1, prec, 1, &l1, &m0, &s0, &d));   /* the plan without a budget */
        for (i = 0; i < 3; i++) {
            char name[96];
            tr_budget = want[i];
            g1 = tr_grads(4, 64, 64, 0, 1, prec, 2, &l1, &m1, &s1, &n1);
            snprintf(name, sizeof name, "recompute.budget.%s.%s", pr ? "bf16" : "fp32", want[i]);
            t_check(g0 && g1 && n0 == n1 && !memcmp(g0, g1, n0 * sizeof(float)) && !memcmp(&l0, &l1, sizeof l0),
                    name, "loss %.9g vs %.9g, gradients %s %s", (double)l0, (double)l1,
                    g0 && g1 && n0 == n1 ? (memcmp(g0, g1, n0 * sizeof(float)) ? "differ" : "equal") : "missing",
                    tr_last.err);
            snprintf(name, sizeof name, "recompute.budget.%s.%s.fits", pr ? "bf16" : "fp32", want[i]);
            t_check(g1 && (double)m1 <= atof(want[i]) / 100.0 * (double)m0 && tr_last.rc > 0 && tr_last.flops > 0,
                    name, "planned %zu of %zu (%s), %d ops run again", m1, m0, want[i], tr_last.rc);
            printf("info recompute.budget %s %s: planned %.2f of %.2f MB, kept %.2f -> %.2f MB, made again %.2f MB "
                   "by %d ops (%d products), +%.3g MFLOP\n", pr ? "bf16" : "fp32", want[i], (double)m1 / 1048576.0,
                   (double)m0 / 1048576.0, (double)s0 / 1048576.0, (double)s1 / 1048576.0,
                   (double)tr_last.rc_bytes / 1048576.0, tr_last.rc, tr_last.rc_gemm, tr_last.flops * 1e-6);
            if (i == 0 && !pr)
                t_check(tr_last.rc_gemm == 0, "recompute.budget.cheap_first", "75%%: %d of %d ops run again are products",
                        tr_last.rc_gemm, tr_last.rc);
            free(g1);
        }
        free(g0);
    }
    tr_budget = "4K";   /* below what any plan of the step needs */
    g1 = tr_grads(4, 64, 64, 0, 1, LT_F32, 1, &l1, &m1, &s1, &n1);
    t_check(!g1 && strstr(tr_last.err, "below the least this step can be planned in") && strstr(tr_last.err, " MB"),
            "recompute.budget.too_small", "\"%s\"", tr_last.err);
    free(g1);
    tr_budget = NULL;
    {
        lt_ctx *ctx = lt_ctx_create(1);
        const char *bad[5] = {"1.5Q", "-3M", "abc", "150%", "12 MB"}, *good[5] = {"1.5G", "800M", "64KiB", "1000000", "50%"};
        size_t bytes[5] = {(size_t)1 << 29 | (size_t)1 << 30, (size_t)800 << 20, (size_t)64 << 10, 1000000, 0};
        for (i = 0; i < 5; i++) {
            lt_status st = lt_set_memory_budget(ctx, bad[i]);
            char name[64];
            snprintf(name, sizeof name, "recompute.budget.parse.bad.%d", i);
            t_check(st == LT_ERR_ARG && strstr(lt_error(ctx), bad[i]) && strstr(lt_error(ctx), "not a memory budget"),
                    name, "\"%s\": status %s, \"%s\"", bad[i], lt_status_name(st), lt_error(ctx));
            lt_clear_error(ctx);
            st = lt_set_memory_budget(ctx, good[i]);
            snprintf(name, sizeof name, "recompute.budget.parse.good.%d", i);
            t_check(st == LT_OK && ctx->budget == bytes[i] && (i < 4 || ctx->budget_frac == 0.5), name,
                    "\"%s\": %zu bytes, %g", good[i], ctx->budget, ctx->budget_frac);
        }
        lt_ctx_destroy(ctx);
    }
}

static lt_tensor *tr_open_step(lt_ctx *ctx, void *u) {   /* leaves its segment open */
    lt_tensor *w = (lt_tensor *)u;
    lt_recompute_begin(ctx);
    return lt_sum(ctx, lt_gelu(ctx, w));
}

/* the error's status is LT_ERR_STATE and its message holds want and op */
static void tr_error(lt_ctx *ctx, const char *name, const char *want, const char *op) {
    t_check(lt_status_of(ctx) == LT_ERR_STATE && strstr(lt_error(ctx), want) && (!op || strstr(lt_error(ctx), op)),
            name, "status %s, message \"%s\"", lt_status_name(lt_status_of(ctx)), lt_error(ctx));
    lt_clear_error(ctx);
    lt_reset(ctx);
}

/* build/train_gpt --checkpoint MODE (--compile on|off): the last step's line from "loss" on (loss,
   lr, gradient norm; not the time).  0 when the binary is missing or its output lacks it. */
static int tr_cli_run(const char *mode, const char *compile, char *out, size_t cap) {
    char cmd[512], line[512];
    FILE *f = fopen("build/train_gpt", "rb"), *pp;
    if (!f) return 0;
    fclose(f);
    snprintf(cmd, sizeof cmd, "build/train_gpt --layers 3 --heads 2 --channels 32 --ctx 32 --seq 32 --batch 4 "
             "--steps 3 --threads 1 --checkpoint %s --compile %s 2>&1", mode, compile);
    pp = popen(cmd, "r");
    if (!pp) return 0;
    out[0] = 0;
    while (fgets(line, sizeof line, pp)) {
        const char *nm = strstr(line, "| norm ");
        if (!strncmp(line, "step 3/3 | loss ", 16) && nm) snprintf(out, cap, "%.*s", (int)(strcspn(nm + 7, " ") + 7 + (size_t)(nm - line)), line);
    }
    return pclose(pp) == 0 && out[0];
}

/* ---- lt_linear_cross_entropy: the float32 head and loss in column blocks ------------------------------- */
/* One forward + backward of loss = 3·head_loss on x [R,C] (a parameter), W [V,C]: the fused op in
   column blocks (fused = 1), the one with the exponentials kept (2: linear_ce_exp), or lt_linear +
   lt_cross_entropy(_sum) (0); eager, or compiled and replayed once; `threads` OpenMP threads.
   tr_lce_extra: Σx + ΣW added to the loss after the head, so that the head's backward adds to
   gradients already made.  Fills loss, gx, gw; returns 0 when the context failed (the message in
   tr_last.err). */
typedef struct { lt_tensor *x, *w; const int32_t *tg; int fused, use_sum; } tr_lce;
static int tr_lce_extra;
static lt_tensor *tr_lce_loss(lt_ctx *ctx, void *u) {
    tr_lce *c = (tr_lce *)u;
    lt_tensor *l;
    if (c->fused == 1) l = c->use_sum ? lt_linear_cross_entropy_sum(ctx, c->x, c->w, c->tg, 13.0)
                                      : lt_linear_cross_entropy(ctx, c->x, c->w, c->tg);
    else if (c->fused == 2) l = lt__linear_ce(ctx, "lt_cross_entropy", c->x, c->w, c->tg, 13.0, !c->use_sum, 1);
    else {
        lt_tensor *z = lt_linear(ctx, c->x, c->w, NULL);
        l = c->use_sum ? lt_cross_entropy_sum(ctx, z, c->tg, 13.0) : lt_cross_entropy(ctx, z, c->tg);
    }
    l = lt_scale(ctx, l, 3.0f);
    if (tr_lce_extra) l = lt_add(ctx, l, lt_add(ctx, lt_sum(ctx, c->x), lt_sum(ctx, c->w)));
    return l;
}
static int tr_lce_run(int fused, int use_sum, int compiled, int threads, const float *xv, const float *wv,
                      const int32_t *tg, int64_t R, int64_t C, int64_t V, float *loss, float *gx, float *gw) {
    lt_ctx *ctx = lt_ctx_create(1);
    int64_t xs[2], ws[2];
    tr_lce c;
    int ok, old = lt_get_threads();
    xs[0] = R; xs[1] = C; ws[0] = V; ws[1] = C;
    c.x = lt_param(ctx, "x", 2, xs);
    c.w = lt_param(ctx, "w", 2, ws);
    c.tg = tg; c.fused = fused; c.use_sum = use_sum;
    memcpy(c.x->data, xv, (size_t)(R * C) * 4);
    memcpy(c.w->data, wv, (size_t)(V * C) * 4);
    lt_set_threads(threads);
    if (compiled) {
        lt_plan *p = lt_compile(ctx, tr_lce_loss, &c);
        if (p) lt_plan_run(p, loss);
        lt_plan_destroy(p);
    } else {
        lt_tensor *l = tr_lce_loss(ctx, &c);
        *loss = l ? l->data[0] : 0.0f;
        lt_backward(ctx, l);
    }
    lt_set_threads(old);
    ok = !lt_failed(ctx) && c.x->grad && c.w->grad;
    if (ok) {
        memcpy(gx, c.x->grad, (size_t)(R * C) * 4);
        memcpy(gw, c.w->grad, (size_t)(V * C) * 4);
    } else {
        snprintf(tr_last.err, sizeof tr_last.err, "%s", lt_failed(ctx) ? lt_error(ctx) : "no gradient");
    }
    lt_ctx_destroy(ctx);
    return ok;
}
/* max |a - b| / max |b| */
static double tr_rel(const float *a, const float *b, int64_t n) {
    double d = 0, m = 0;
    int64_t i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        if (e > d || e != e) d = e;
        if (fabs((double)b[i]) > m) m = fabs((double)b[i]);
    }
    return m > 0 ? d / m : d;
}
static lt_tensor *tr_lce_gc(lt_ctx *ctx, lt_tensor **in, void *u) {
    return lt_linear_cross_entropy_sum(ctx, in[0], in[1], (const int32_t *)u, 2.0);
}
static lt_tensor *tr_lce_exp_gc(lt_ctx *ctx, lt_tensor **in, void *u) {
    return lt__linear_ce(ctx, "lt_cross_entropy_sum", in[0], in[1], (const int32_t *)u, 2.0, 0, 1);
}
static void tr_lce_tests(void) {
    enum { R = 64, C = 48, V = 2100 };   /* V: two full blocks of 1024 columns and a partial one */
    static float xv[R * C], wv[V * C], gx[4][R * C], gw[4][V * C];
    int32_t tg[R];
    float l[4];
    lt_rng rng;
    int i, s;
    char nm[96];
    lt_rng_seed(&rng, 25);
    for (i = 0; i < R * C; i++) xv[i] = (float)lt_rng_normal(&rng);
    for (i = 0; i < V * C; i++) wv[i] = (float)(lt_rng_normal(&rng) * 0.5);
    for (i = 0; i < R; i++) tg[i] = i % 7 == 3 ? LT_IGNORE_INDEX : (int32_t)(lt_rng_u64(&rng) % V);
    tg[1] = 0; tg[2] = V - 1; tg[4] = 1023; tg[5] = 1024;   /* the blocks' edges */
    for (s = 0; s < 2; s++) {
        int ok = tr_lce_run(0, s, 0, 2, xv, wv, tg, R, C, V, &l[0], gx[0], gw[0]) &&
                 tr_lce_run(1, s, 0, 2, xv, wv, tg, R, C, V, &l[1], gx[1], gw[1]);
        double el = fabs((double)l[1] - l[0]) / fabs((double)l[0]), ex = tr_rel(gx[1], gx[0], R * C),
               ew = tr_rel(gw[1], gw[0], V * C);
        snprintf(nm, sizeof nm, "recompute.lce.unfused.%s", s ? "sum" : "mean");
        t_check(ok && el <= 1e-6 && ex <= 1e-5 && ew <= 1e-5, nm, "loss %.9g vs %.9g (rel %.2g), dx rel %.2g, dW rel "
                "%.2g %s", (double)l[1], (double)l[0], el, ex, ew, ok ? "" : tr_last.err);
        /* the same bits on 1, 2 and 4 threads, and compiled */
        ok = ok && tr_lce_run(1, s, 0, 1, xv, wv, tg, R, C, V, &l[2], gx[2], gw[2]) &&
             tr_lce_run(1, s, 0, 4, xv, wv, tg, R, C, V, &l[3], gx[3], gw[3]);
        snprintf(nm, sizeof nm, "recompute.lce.threads.%s", s ? "sum" : "mean");
        t_check(ok && !memcmp(&l[1], &l[2], 4) && !memcmp(&l[1], &l[3], 4) && !memcmp(gx[1], gx[2], sizeof gx[1]) &&
                !memcmp(gx[1], gx[3], sizeof gx[1]) && !memcmp(gw[1], gw[2], sizeof gw[1]) &&
                !memcmp(gw[1], gw[3], sizeof gw[1]), nm, "losses %.9g %.9g %.9g on 2, 1, 4 threads, or the gradients "
                "differ", (double)l[1], (double)l[2], (double)l[3]);
        ok = ok && tr_lce_run(1, s, 1, 2, xv, wv, tg, R, C, V, &l[2], gx[2], gw[2]);
        snprintf(nm, sizeof nm, "recompute.lce.compiled.%s", s ? "sum" : "mean");
        t_check(ok && !memcmp(&l[1], &l[2], 4) && !memcmp(gx[1], gx[2], sizeof gx[1]) &&
                !memcmp(gw[1], gw[2], sizeof gw[1]), nm, "eager %.9g, compiled %.9g, or the gradients differ %s",
                (double)l[1], (double)l[2], ok ? "" : tr_last.err);
    }
    /* linear_ce_exp: the unfused loss to the bit, the gradients to float rounding, also where they
       add to gradients made before (tr_lce_extra); the same bits on 1, 2 and 4 threads, and compiled */
    for (s = 0; s < 4; s++) {
        int ok;
        double ex, ew;
        tr_lce_extra = s >= 2;
        ok = tr_lce_run(0, s & 1, 0, 2, xv, wv, tg, R, C, V, &l[0], gx[0], gw[0]) &&
             tr_lce_run(2, s & 1, 0, 2, xv, wv, tg, R, C, V, &l[1], gx[1], gw[1]);
        ex = tr_rel(gx[1], gx[0], R * C);
        ew = tr_rel(gw[1], gw[0], V * C);
        snprintf(nm, sizeof nm, "recompute.lce_exp.unfused.%s%s", s & 1 ? "sum" : "mean", s >= 2 ? ".adds" : "");
        t_check(ok && !memcmp(&l[0], &l[1], 4) && ex <= 1e-5 && ew <= 1e-5, nm, "loss %.9g vs %.9g, dx rel %.2g, dW "
                "rel %.2g %s", (double)l[1], (double)l[0], ex, ew, ok ? "" : tr_last.err);
        ok = ok && tr_lce_run(2, s & 1, 0, 1, xv, wv, tg, R, C, V, &l[2], gx[2], gw[2]) &&
             tr_lce_run(2, s & 1, 0, 4, xv, wv, tg, R, C, V, &l[3], gx[3], gw[3]);
        snprintf(nm, sizeof nm, "recompute.lce_exp.threads.%s%s", s & 1 ? "sum" : "mean", s >= 2 ? ".adds" : "");
        t_check(ok && !memcmp(&l[1], &l[2], 4) && !memcmp(&l[1], &l[3], 4) && !memcmp(gx[1], gx[2], sizeof gx[1]) &&
                !memcmp(gx[1], gx[3], sizeof gx[1]) && !memcmp(gw[1], gw[2], sizeof gw[1]) &&
                !memcmp(gw[1], gw[3], sizeof gw[1]), nm, "losses %.9g %.9g %.9g on 2, 1, 4 threads, or the gradients "
                "differ", (double)l[1], (double)l[2], (double)l[3]);
        ok = ok && tr_lce_run(2, s & 1, 1, 2, xv, wv, tg, R, C, V, &l[2], gx[2], gw[2]);
        snprintf(nm, sizeof nm, "recompute.lce_exp.compiled.%s%s", s & 1 ? "sum" : "mean", s >= 2 ? ".adds" : "");
        t_check(ok && !memcmp(&l[1], &l[2], 4) && !memcmp(gx[1], gx[2], sizeof gx[1]) &&
                !memcmp(gw[1], gw[2], sizeof gw[1]), nm, "eager %.9g, compiled %.9g, or the gradients differ %s",
                (double)l[1], (double)l[2], ok ? "" : tr_last.err);
    }
    tr_lce_extra = 0;
    {   /* no counted row: loss 0, zero gradients, as lt_cross_entropy (both fused ops) */
        int32_t none[R];
        int ok, z = 1;
        for (i = 0; i < R; i++) none[i] = LT_IGNORE_INDEX;
        ok = tr_lce_run(1, 0, 0, 2, xv, wv, none, R, C, V, &l[0], gx[0], gw[0]) &&
             tr_lce_run(2, 0, 0, 2, xv, wv, none, R, C, V, &l[1], gx[1], gw[1]);
        for (s = 0; s < 2; s++) {
            for (i = 0; i < R * C; i++) z &= gx[s][i] == 0.0f;
            for (i = 0; i < V * C; i++) z &= gw[s][i] == 0.0f;
        }
        t_check(ok && l[0] == 0.0f && l[1] == 0.0f && z, "recompute.lce.no_counted_rows", "loss %g and %g, zero gradients %d",
                (double)l[0], (double)l[1], z);
    }
    {   /* against PyTorch (tests/ref/gen_lce.py): F.linear then F.cross_entropy in float64 */
        t_ref ref;
        if (t_ref_open(&ref, "lce", "recompute.lce.torch")) {
            t_arr *x = t_ref_get(&ref, "x"), *w = t_ref_get(&ref, "w"), *t = t_ref_get(&ref, "t");
            for (s = 0; s < 2; s++) {
                char k[32];
                t_arr *rl, *rx, *rw;
                int32_t tt[64];
                int ok = 0;
                double el = 1, ex = 1, ew = 1;
                snprintf(k, sizeof k, "%s.loss", s ? "sum" : "mean"); rl = t_ref_get(&ref, k);
                snprintf(k, sizeof k, "%s.gx", s ? "sum" : "mean"); rx = t_ref_get(&ref, k);
                snprintf(k, sizeof k, "%s.gw", s ? "sum" : "mean"); rw = t_ref_get(&ref, k);
                if (x && w && t && rl && rx && rw && t->n <= 64 && x->ndim == 2 && w->ndim == 2) {
                    for (i = 0; i < (int)t->n; i++) tt[i] = (int32_t)t->data[i];
                    int f;
                    el = ex = ew = 0;
                    for (ok = 1, f = 1; f <= 2; f++) {   /* both fused ops: the worse of the two */
                        ok = ok && tr_lce_run(f, s, 0, 2, x->data, w->data, tt, x->shape[0], x->shape[1], w->shape[0],
                                              &l[0], gx[0], gw[0]);
                        el = fmax(el, fabs((double)l[0] / 3.0 - rl->data[0]) / fabs((double)rl->data[0]));
                        ex = fmax(ex, tr_rel(gx[0], rx->data, rx->n));
                        ew = fmax(ew, tr_rel(gw[0], rw->data, rw->n));
                    }
                }
                snprintf(nm, sizeof nm, "recompute.lce.torch.%s", s ? "sum" : "mean");
                t_check(ok && el <= 1e-6 && ex <= 1e-5 && ew <= 1e-5, nm, "loss rel %.2g, dx rel %.2g, dW rel %.2g", el,
                        ex, ew);
            }
        }
        t_ref_free(&ref);
    }
    {   /* gradcheck over 2 blocks (V 1100), and the errors */
        lt_ctx *ctx = lt_ctx_create(5);
        int64_t xs[2] = {5, 4}, ws[2] = {1100, 4}, bs[2] = {1100, 3};
        int32_t t5[5] = {0, 1023, LT_IGNORE_INDEX, 1024, 1099}, bad[5] = {0, 1, 1100, 2, 3};
        lt_tensor *in[2], *wb;
        double e;
        in[0] = lt_param(ctx, "x", 2, xs);
        in[1] = lt_param(ctx, "w", 2, ws);
        wb = lt_param(ctx, "wb", 2, bs);
        lt_init_normal(ctx, in[0], 0.0, 1.0);
        lt_init_normal(ctx, in[1], 0.0, 0.5);
        e = lt_gradcheck(ctx, tr_lce_gc, in, 2, t5, 1e-2);
        t_check(e < 1e-3, "recompute.lce.gradcheck", "worst %.3g %s", e, lt_error(ctx));
        e = lt_gradcheck(ctx, tr_lce_exp_gc, in, 2, t5, 1e-2);
        t_check(e < 1e-3, "recompute.lce_exp.gradcheck", "worst %.3g %s", e, lt_error(ctx));
        t_check(lt_linear_cross_entropy(ctx, in[0], in[1], bad) == NULL && strstr(lt_error(ctx), "targets[2] is 1100") &&
                strstr(lt_error(ctx), "lt_linear_cross_entropy"), "recompute.lce.error.target", "%s", lt_error(ctx));
        lt_clear_error(ctx);
        t_check(lt_linear_cross_entropy(ctx, in[0], wb, t5) == NULL && strstr(lt_error(ctx), "W is [1100,3]"),
                "recompute.lce.error.shape", "%s", lt_error(ctx));
        lt_clear_error(ctx);
        t_check(lt_linear_cross_entropy_sum(ctx, in[0], in[1], t5, 0.0) == NULL && strstr(lt_error(ctx), "denom is 0"),
                "recompute.lce.error.denom", "%s", lt_error(ctx));
        lt_ctx_destroy(ctx);
    }
}

/* lt_gpt_set_fused_head: the GPT's loss through lt_linear_cross_entropy gives the same bits eager,
   compiled, with every block checkpointed (the segments end before the head), and the unfused
   numbers up to float rounding; its plan keeps no logits. */
static void tr_fused_head(void) {
    float l0 = 0, l1 = 0, *g0, *g1;
    size_t m0, m1, s0, s1, n0 = 0, n1 = 0, k;
    const char *nm[3] = {"recompute.fused_head.compiled", "recompute.fused_head.every", "recompute.fused_head.compiled_every"};
    int v;
    double dl, dg = 0, mg = 0;
    tr_fused = 1;
    g0 = tr_grads(3, 32, 16, 0, 0, LT_F32, 2, &l0, &m0, &s0, &n0);
    for (v = 0; v < 3; v++) {
        g1 = tr_grads(3, 32, 16, v >= 1, v != 1, LT_F32, 2, &l1, &m1, &s1, &n1);
        t_check(g0 && g1 && n0 == n1 && !memcmp(g0, g1, n0 * sizeof(float)) && !memcmp(&l0, &l1, sizeof l0), nm[v],
                "loss %.9g vs %.9g eager, gradients %s", (double)l1, (double)l0,
                g0 && g1 && n0 == n1 ? (memcmp(g0, g1, n0 * sizeof(float)) ? "differ" : "equal") : tr_last.err);
        free(g1);
    }
    tr_fused = 0;
    g1 = tr_grads(3, 32, 16, 0, 0, LT_F32, 2, &l1, &m1, &s1, &n1);
    for (k = 0; g0 && g1 && n0 == n1 && k < n0; k++) {
        if (fabs((double)g0[k] - g1[k]) > dg) dg = fabs((double)g0[k] - g1[k]);
        if (fabs((double)g1[k]) > mg) mg = fabs((double)g1[k]);
    }
    dl = fabs((double)l0 - l1) / fabs((double)l1);
    t_check(g0 && g1 && n0 == n1 && dl <= 1e-6 && dg <= 1e-5 * mg, "recompute.fused_head.unfused",
            "loss %.9g vs %.9g (rel %.2g), gradients rel %.2g", (double)l0, (double)l1, dl, mg > 0 ? dg / mg : dg);
    free(g0);
    free(g1);
    {   /* the plan at V 64, R 256 keeps the R·V logits (64 KB) for backward only when unfused */
        float l;
        size_t c0, c1, d;
        free(tr_grads(2, 32, 64, 1, 1, LT_F32, 1, &l, &d, &c0, &n0));
        tr_fused = 1;
        free(tr_grads(2, 32, 64, 1, 1, LT_F32, 1, &l, &d, &c1, &n0));
        tr_fused = 0;
        t_check(c1 + 4 * 256 * 64 <= c0, "recompute.fused_head.memory", "saved for backward %zu fused, %zu unfused",
                c1, c0);
    }
}

static void test_recompute_all(void) {
    if (!t_want("recompute")) return;
    {   /* train_gpt --checkpoint every|2: the losses and gradient norms of --checkpoint off */
        char off[256], every[256], two[256], cev[256];
        if (!tr_cli_run("off", "off", off, sizeof off)) {
            t_skip("recompute.cli", "no build/train_gpt (make build/train_gpt)");
        } else {
            int ok = tr_cli_run("every", "off", every, sizeof every) && tr_cli_run("2", "off", two, sizeof two) &&
                     tr_cli_run("every", "on", cev, sizeof cev);
            t_check(ok && !strcmp(off, every) && !strcmp(off, two), "recompute.cli.eager",
                    "off \"%s\", every \"%s\", 2 \"%s\"", off, every, two);
            printf("info recompute.cli: %s\n", off);
            t_check(ok && !strcmp(off, cev), "recompute.cli.compiled", "off \"%s\", every compiled \"%s\"", off, cev);
            /* --fused-head: the same bits with every block checkpointed, eager and compiled */
            ok = tr_cli_run("off --fused-head", "off", off, sizeof off) &&
                 tr_cli_run("every --fused-head", "off", every, sizeof every) &&
                 tr_cli_run("every --fused-head", "on", cev, sizeof cev);
            t_check(ok && !strcmp(off, every) && !strcmp(off, cev), "recompute.cli.fused_head",
                    "off \"%s\", every \"%s\", every compiled \"%s\"", off, every, cev);
        }
    }
    tr_same_bits("recompute.eager.fp32.every", 1, 0, LT_F32);
    tr_same_bits("recompute.eager.fp32.every2", 2, 0, LT_F32);
    tr_same_bits("recompute.eager.bf16.every", 1, 0, LT_BF16);
    tr_same_bits("recompute.eager.fp16.every", 1, 0, LT_F16);
    tr_same_bits("recompute.compiled.fp32.every", 1, 1, LT_F32);
    tr_same_bits("recompute.compiled.fp32.every2", 2, 1, LT_F32);
    tr_same_bits("recompute.compiled.bf16.every", 1, 1, LT_BF16);
    {   /* memory at 8 layers (C 64, T 64, B 4): eager's arena peak and the planned block */
        float l;
        size_t e0, e1, c0, c1, s0, s1, d, n;
        float *g;
        free(tr_grads(8, 64, 64, 0, 0, LT_F32, 1, &l, &e0, &d, &n));
        free(tr_grads(8, 64, 64, 1, 0, LT_F32, 1, &l, &e1, &d, &n));
        free(tr_grads(8, 64, 64, 0, 1, LT_F32, 1, &l, &c0, &s0, &n));
        g = tr_grads(8, 64, 64, 1, 1, LT_F32, 1, &l, &c1, &s1, &n);
        free(g);
        printf("info recompute.memory: eager arena peak %.2f -> %.2f MB, planned %.2f -> %.2f MB, "
               "saved for backward %.2f -> %.2f MB\n", (double)e0 / 1048576.0, (double)e1 / 1048576.0,
               (double)c0 / 1048576.0, (double)c1 / 1048576.0, (double)s0 / 1048576.0, (double)s1 / 1048576.0);
        t_check(e1 * 2 < e0, "recompute.memory.eager", "arena peak %zu with vs %zu without (want < 1/2)", e1, e0);
        t_check(c1 * 2 < c0, "recompute.memory.compiled", "planned %zu with vs %zu without (want < 1/2)", c1, c0);
        t_check(s1 * 3 < s0, "recompute.memory.saved", "saved %zu with vs %zu without (want < 1/3)", s1, s0);
    }
    tr_budgets();
    tr_lce_tests();
    tr_fused_head();
    {   /* bad input: every error names what went wrong, and the op */
        lt_ctx *ctx = lt_ctx_create(1);
        int64_t sh[2] = {4, 8};
        lt_tensor *w = lt_param(ctx, "w", 2, sh), *x, *a, *b, *loss;
        lt_plan *p;
        lt_params_pack(ctx);
        lt_init_normal(ctx, w, 0, 1);
        lt_recompute_begin(ctx);
        lt_gelu(ctx, w);
        lt_recompute_begin(ctx);
        tr_error(ctx, "recompute.error.nested", "do not nest", "gelu");
        t_check(lt_recompute_end(ctx, w) == NULL, "recompute.error.end_unopened", "returned a tensor");
        tr_error(ctx, "recompute.error.end_unopened.msg", "no segment is open", NULL);
        lt_recompute_begin(ctx);
        loss = lt_sum(ctx, lt_tanh(ctx, w));
        lt_backward(ctx, loss);
        tr_error(ctx, "recompute.error.not_closed", "was not closed", "tanh");
        lt_recompute_begin(ctx);
        a = lt_gelu(ctx, w);
        b = lt_recompute_end(ctx, lt_tanh(ctx, a));
        lt_add(ctx, a, b);   /* a was dropped */
        tr_error(ctx, "recompute.error.dropped", "dropped", "op add");
        x = lt_gelu(ctx, w);
        lt_recompute_begin(ctx);
        a = lt_tanh(ctx, w);
        lt__add_over(ctx, a, x, x);   /* written over x, made before the segment */
        tr_error(ctx, "recompute.error.no_rule", "no recompute rule", "op add");
        p = lt_compile(ctx, tr_open_step, w);
        t_check(p == NULL, "recompute.error.compile_open", "a plan was made");
        tr_error(ctx, "recompute.error.compile_open.msg", "left a recompute segment open", NULL);
        {   /* and after the errors, a segment works: d/dw sum(tanh(gelu(w))) as without one */
            float g0[32], g1[32];
            lt_zero_grad(ctx);
            lt_backward(ctx, lt_sum(ctx, lt_tanh(ctx, lt_gelu(ctx, w))));
            memcpy(g0, w->grad, sizeof g0);
            lt_zero_grad(ctx);
            lt_recompute_begin(ctx);
            a = lt_recompute_end(ctx, lt_tanh(ctx, lt_gelu(ctx, w)));
            lt_backward(ctx, lt_sum(ctx, a));
            memcpy(g1, w->grad, sizeof g1);
            t_check(!lt_failed(ctx) && !memcmp(g0, g1, sizeof g0), "recompute.small", "%s", lt_error(ctx));
        }
        lt_ctx_destroy(ctx);
    }
}

/* test_compile.c - compiled plans (lt_compile) against eager steps. */

typedef struct { lt_gpt *g; int32_t *in, *tg; int B, T; } tc_step;

static lt_tensor *tc_loss(lt_ctx *ctx, void *u) {
    tc_step *s = (tc_step *)u;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, s->T);
}

static void tc_batch(lt_rng *r, tc_step *s, int V) {
    int i;
    for (i = 0; i < s->B * s->T; i++) {
        s->in[i] = (int32_t)(lt_rng_u64(r) % (uint64_t)V);
        s->tg[i] = i % 11 == 5 ? LT_IGNORE_INDEX : (int32_t)(lt_rng_u64(r) % (uint64_t)V);
    }
}

/* The small GPT (V=64, ctx 16, 2 layers, 2 heads, C=32) on one B=2, T=16 batch (seed 1), in ctx;
   in and tg hold 32 tokens each. */
static void tc_small_step(lt_ctx *ctx, tc_step *s, int32_t *in, int32_t *tg) {
    lt_gpt_config cfg = lt_gpt2_config(64, 16, 2, 2, 32);
    lt_rng r;
    s->g = lt_gpt_create(ctx, &cfg); s->B = 2; s->T = 16; s->in = in; s->tg = tg;
    lt_rng_seed(&r, 1);
    tc_batch(&r, s, 64);
}

/* Every parameter's values, one after another, in one malloc'd array (test_precision.c's too). */
static float *tc_weights(lt_ctx *ctx) {
    lt_paramset ps = lt_ctx_params(ctx);
    size_t off = 0;
    float *w = (float *)malloc(lt_params_count(ctx) * sizeof(float));
    int k;
    for (k = 0; w && k < ps.n; k++) {
        memcpy(w + off, ps.p[k]->data, (size_t)ps.p[k]->n * sizeof(float));
        off += (size_t)ps.p[k]->n;
    }
    return w;
}

/* Train `steps` AdamW steps, eager or compiled (alternating two sequence lengths when
   two_shapes); write the losses and return a checksum-free copy of the final weights. */
static float *tc_train(int compiled, int two_shapes, float dropout, int steps, float *losses, lt_plan_cache **keep) {
    lt_ctx *ctx = lt_ctx_create(11);
    lt_gpt_config cfg = lt_gpt2_config(64, 16, 2, 2, 32);
    tc_step s;
    lt_optim *opt;
    lt_plan_cache *cache = NULL;
    lt_rng r;
    float *w = NULL;
    int k;
    cfg.dropout = dropout;
    s.g = lt_gpt_create(ctx, &cfg);
    s.B = 3;
    s.in = (int32_t *)malloc(3 * 16 * sizeof(int32_t));
    s.tg = (int32_t *)malloc(3 * 16 * sizeof(int32_t));
    opt = lt_adamw_create(ctx, lt_gpt_params(s.g), lt_adamw_defaults());
    if (compiled) cache = lt_plan_cache_create(ctx, 4);
    lt_rng_seed(&r, 5);
    for (k = 0; k < steps && !lt_failed(ctx); k++) {
        float loss = 0;
        s.T = two_shapes && k % 3 == 2 ? 9 : 16;
        tc_batch(&r, &s, cfg.vocab);
        lt_zero_grad(ctx);
        if (compiled) {
            lt_plan *p = lt_plan_cache_get(cache, s.T, tc_loss, &s);
            if (p) lt_plan_run(p, &loss);
        } else {
            lt_tensor *l = tc_loss(ctx, &s);
            loss = lt_item(l);
            lt_backward(ctx, l);
        }
        lt_optim_step(opt, 3e-3);
        losses[k] = loss;
    }
    if (!lt_failed(ctx)) w = tc_weights(ctx);
    else printf("     tc_train: %s\n", lt_error(ctx));
    if (keep && cache) printf("     plans cached: %d\n", lt_plan_cache_size(cache));
    lt_plan_cache_destroy(cache);
    lt_optim_destroy(opt);
    lt_gpt_destroy(s.g);
    lt_ctx_destroy(ctx);
    free(s.in);
    free(s.tg);
    return w;
}

/* The first of the small GPT's n weights (n through *n) where a and b differ bit for bit, or n. */
static size_t tc_first_diff(const float *a, const float *b, size_t *n) {
    lt_ctx *c = lt_ctx_create(11);
    lt_gpt_config cfg = lt_gpt2_config(64, 16, 2, 2, 32);
    lt_gpt *g = lt_gpt_create(c, &cfg);
    size_t i;
    *n = (size_t)lt_gpt_num_params(g);
    lt_gpt_destroy(g);
    lt_ctx_destroy(c);
    for (i = 0; i < *n && memcmp(&a[i], &b[i], sizeof(float)) == 0; i++) {}
    return i;
}

static void tc_equal_runs(const char *name, int two_shapes, float dropout) {
    float le[50], lc[50];
    float *we = tc_train(0, two_shapes, dropout, 50, le, NULL), *wc = tc_train(1, two_shapes, dropout, 50, lc, NULL);
    int k, same = we && wc;
    size_t i, n = 0;
    char nm[96];
    for (k = 0; same && k < 50; k++) same = memcmp(&le[k], &lc[k], sizeof(float)) == 0;
    snprintf(nm, sizeof nm, "compile/%s/losses_bitwise", name);
    t_check(same, nm, "eager and compiled losses differ (step %d: %.9g vs %.9g)", k - 1, k ? le[k - 1] : 0, k ? lc[k - 1] : 0);
    if (we && wc) {
        i = tc_first_diff(we, wc, &n);
        snprintf(nm, sizeof nm, "compile/%s/weights_bitwise", name);
        t_check(i == n, nm, "weight %zu differs after 50 steps: %.9g vs %.9g", i, i < n ? we[i] : 0, i < n ? wc[i] : 0);
    }
    free(we);
    free(wc);
}

/* an input whose values are written after it was made cannot be replayed: eager fallback */
static lt_tensor *tc_outside_w;
static lt_tensor *tc_filled_later(lt_ctx *ctx, void *u) {
    lt_tensor *x = lt_tensor_new(ctx, 1, (int64_t[]){4});
    int i;
    for (i = 0; i < 4 && x; i++) x->data[i] = ((const float *)u)[i];
    return lt_sum(ctx, lt_mul(ctx, x, tc_outside_w));
}
static lt_tensor *tc_inside(lt_ctx *ctx, void *u) {
    return lt_sum(ctx, lt_mul(ctx, lt_tensor_from(ctx, (const float *)u, 1, (int64_t[]){4}), tc_outside_w));
}

/* lt_plan_saved_bytes on a step small enough to count by hand (see test_compile_all) */
static lt_tensor *tc_saved_w[4];
static lt_tensor *tc_saved_step(lt_ctx *ctx, void *u) {
    static const int32_t tg[4] = {1, 0, 1, 1};
    lt_tensor *x = lt_tensor_from(ctx, (const float *)u, 2, (int64_t[]){4, 3});
    lt_tensor *h = lt_linear(ctx, lt_layernorm(ctx, x, tc_saved_w[0], tc_saved_w[1], 1e-5f), tc_saved_w[2], tc_saved_w[3]);
    return lt_cross_entropy(ctx, lt_tanh(ctx, lt_gelu(ctx, h)), tg);
}

/* a plan's add writes its sum over an input only where nothing reads that input later:
     u = p·q (mul's output: its backward reads p and q, never u), s = x + u  -> over u
     a = tanh(p), b = tanh(q) (tanh's backward reads its output), t = a + b -> a fresh buffer */
static lt_tensor *tc_add_w[3];
static lt_tensor *tc_add_step(lt_ctx *ctx, void *u) {
    lt_tensor *x = lt_tensor_from(ctx, (const float *)u, 2, (int64_t[]){3, 5});
    lt_tensor *s = lt_add(ctx, x, lt_mul(ctx, tc_add_w[0], tc_add_w[1]));
    lt_tensor *t = lt_add(ctx, lt_tanh(ctx, tc_add_w[0]), lt_tanh(ctx, tc_add_w[2]));
    return lt_sum(ctx, lt_mul(ctx, s, t));
}

/* a residual add's branch taking the add's output gradient as its own (@@COMPILE
   lt__plan_db_over_dy), x = tanh(w0) the first input throughout; *u picks the branch:
     0: b = w1·w2                      -> allowed (mul reads dy and writes only w1, w2's gradients)
     1: b = gelu(tanh(w1))             -> refused: gelu writes its dx over its dy, which would be x's
     2: b = w1·w2, c = x·w2, s = x + b -> refused: c's backward (after the add's, before b's)
        adds into x's gradient, the shared buffer, before b's reads it (loss = Σ s·c)
     3: as 2, then s2 = s + tanh(w0)   -> b refused as in 2, where s's gradient is s2's (a chain
        of residual adds: the buffer is the last add's); s2's own branch, tanh(w0), shares
        (one shared in all) (loss = Σ s2·c) */
static lt_tensor *tc_db_w[3];
static lt_tensor *tc_db_step(lt_ctx *ctx, void *u) {
    int mode = *(const int *)u;
    lt_tensor *x = lt_tanh(ctx, tc_db_w[0]), *c = NULL, *b, *s;
    b = mode == 1 ? lt_gelu(ctx, lt_tanh(ctx, tc_db_w[1])) : lt_mul(ctx, tc_db_w[1], tc_db_w[2]);
    if (mode >= 2) c = lt_mul(ctx, x, tc_db_w[2]);
    s = lt_add(ctx, x, b);
    if (mode == 3) s = lt_add(ctx, s, lt_tanh(ctx, tc_db_w[0]));
    return lt_sum(ctx, lt_mul(ctx, s, c ? c : lt_tanh(ctx, tc_db_w[2])));
}

/* gelu16's output unmade (@@COMPILE lt__plan_unmade): x (6,8) -> linear -> gelu -> linear -> CE at
   16 bits; with *u != 0 the gelu's output y is also read by tanh, which needs it written. */
static lt_tensor *tc_g16_w[4];
static lt_tensor *tc_g16_step(lt_ctx *ctx, void *u) {
    static const int32_t tg[6] = {1, 0, 3, 2, 1, 3};
    static float xs[48];   /* (static: a replay reads the input's values again from here) */
    int i;
    lt_tensor *x, *y, *l;
    for (i = 0; i < 48; i++) xs[i] = 0.15f * (float)(i % 13) - 0.8f;
    x = lt_tensor_from(ctx, xs, 2, (int64_t[]){6, 8});
    y = lt_gelu(ctx, lt_linear(ctx, x, tc_g16_w[0], tc_g16_w[1]));
    l = lt_cross_entropy(ctx, lt_linear(ctx, y, tc_g16_w[2], tc_g16_w[3]), tg);
    return *(const int *)u ? lt_add(ctx, l, lt_sum(ctx, lt_tanh(ctx, y))) : l;
}

/* A norm's output read by 16-bit products (the norm writes their 16-bit copy of it in a plan):
   mode 0 layernorm -> one linear; 1 rmsnorm -> two linears (Llama's q, k); 2 as 0 and tanh reads
   the norm's output too (no norm writes a copy); 3 layernorm -> the fused head and loss. */
static lt_tensor *tc_n16_w[6];
static lt_tensor *tc_n16_step(lt_ctx *ctx, void *u) {
    static const int32_t tg[6] = {1, 0, 3, 2, 1, 3};
    static float xs[48];
    int i, mode = *(const int *)u;
    lt_tensor *x, *h, *l;
    for (i = 0; i < 48; i++) xs[i] = 0.21f * (float)(i % 11) - 0.9f + 0.01f * (float)i;
    x = lt_tensor_from(ctx, xs, 2, (int64_t[]){6, 8});
    h = mode == 1 ? lt_rmsnorm(ctx, x, tc_n16_w[0], 1e-5f) : lt_layernorm(ctx, x, tc_n16_w[0], tc_n16_w[1], 1e-5f);
    if (mode == 3) return lt__linear_ce16(ctx, "tc_n16_step", h, tc_n16_w[2], tg, 0.0, 1);
    l = lt_linear(ctx, h, tc_n16_w[2], tc_n16_w[3]);
    if (mode == 1) l = lt_add(ctx, l, lt_linear(ctx, h, tc_n16_w[4], NULL));
    l = lt_cross_entropy(ctx, l, tg);
    return mode == 2 ? lt_add(ctx, l, lt_sum(ctx, lt_tanh(ctx, h))) : l;
}

/* q, k, v from a 16-bit product read by attention16 alone (the product writes attention16's 16-bit
   copy in a plan), or by tanh too (*u = 1: it writes its float32 output as ever) */
static lt_tensor *tc_qkv_w[4];
static lt_tensor *tc_qkv_step(lt_ctx *ctx, void *u) {
    static const int32_t tg[16] = {1, 0, 3, 2, 1, 3, 0, 0, 2, 1, 3, 3, 0, 2, 1, 1};
    static float xs[128];
    int i;
    lt_tensor *x, *h, *l;
    for (i = 0; i < 128; i++) xs[i] = 0.17f * (float)(i % 9) - 0.6f + 0.003f * (float)i;
    x = lt_tensor_from(ctx, xs, 3, (int64_t[]){1, 16, 8});
    h = lt_conv1d(ctx, x, tc_qkv_w[0], tc_qkv_w[1]);
    l = lt_cross_entropy(ctx, lt_linear(ctx, lt_attention(ctx, h, 2, NULL), tc_qkv_w[2], tc_qkv_w[3]), tg);
    return *(const int *)u ? lt_add(ctx, l, lt_sum(ctx, lt_tanh(ctx, h))) : l;
}

/* fn eagerly (its loss, the gradients of w[0..nw), nw <= 8), then compiled and replayed once: the
   plan (NULL: none), its loss in *loss_c and eager's in *loss_e, *same = 1 when every gradient
   equals eager's to the bit */
static lt_plan *tc_plan_vs_eager(lt_ctx *ctx, lt_step_fn fn, void *u, lt_tensor *const *w, int nw, float *loss_e,
                                 float *loss_c, int *same) {
    float *ge[8];
    int64_t i;
    int k;
    lt_tensor *l = fn(ctx, u);
    lt_plan *p;
    *loss_e = l ? lt_item(l) : 0.0f;
    *loss_c = 0.0f;
    *same = 1;
    lt_backward(ctx, l);
    for (k = 0; k < nw; k++)
        if ((ge[k] = (float *)malloc((size_t)w[k]->n * sizeof(float)))) memcpy(ge[k], w[k]->grad, (size_t)w[k]->n * sizeof(float));
    lt_zero_grad(ctx);
    p = lt_compile(ctx, fn, u);
    if (p) lt_plan_run(p, loss_c);
    for (k = 0; k < nw; k++) {
        for (i = 0; i < w[k]->n; i++) *same &= ge[k] && ge[k][i] == w[k]->grad[i];
        free(ge[k]);
    }
    return p;
}

/* The in-place decisions of a plan, counted from where its buffers point: ops whose output is
   written over an input (over), first inputs whose gradient is their op's output gradient (alias;
   second inputs: alias_b), and logits whose gradient is written over them (dx_on_x; elsewhere a
   gradient may share a dead value's bytes by placement alone).  Views (reshape) share by nature,
   and an unmade output (NULL) writes over nothing: not counted. */
static void tc_in_place(const lt_plan *p, int *over, int *alias, int *dx_on_x, int *alias_b) {
    int k, j;
    *over = *alias = *dx_on_x = *alias_b = 0;
    for (k = 0; p && k < p->n; k++) {
        const lt__node *nd = &p->nodes[k];
        if (nd->op->flags & LT__VIEW) continue;
        for (j = 0; j < 3; j++) *over += nd->in[j] && !nd->in[j]->is_param && nd->out->data && nd->in[j]->data == nd->out->data;
        *alias += nd->in[0] && !nd->in[0]->is_param && nd->out->grad && nd->in[0]->grad == nd->out->grad;
        *alias_b += nd->in[1] && !nd->in[1]->is_param && nd->out->grad && nd->in[1]->grad == nd->out->grad;
        *dx_on_x += nd->op == LT__OP(cross_entropy) && nd->in[0]->grad && nd->in[0]->grad == nd->in[0]->data;
    }
}

/* build/train_gpt with --compile on|off: the last step's loss line and the "peak RSS" of its
   summary.  Returns 0 when the binary is missing or its output lacks them. */
static int tc_cli_run(const char *mode, char *loss_line, size_t cap, double *rss) {
    char cmd[512], line[512];
    FILE *f = fopen("build/train_gpt", "rb"), *pp;
    int ok = 0;
    if (!f) return 0;
    fclose(f);
    snprintf(cmd, sizeof cmd, "build/train_gpt --layers 2 --heads 4 --channels 64 --ctx 256 --seq 256 --batch 16 "
             "--steps 2 --threads 1 --compile %s 2>&1", mode);
    pp = popen(cmd, "r");
    if (!pp) return 0;
    loss_line[0] = 0;
    while (fgets(line, sizeof line, pp)) {
        const char *r = strstr(line, "peak RSS ");
        if (!strncmp(line, "step 2/2 | loss ", 16)) snprintf(loss_line, cap, "%.40s", line + 16);
        if (r && sscanf(r + 9, "%lf", rss) == 1) ok = 1;
    }
    return pclose(pp) == 0 && ok && loss_line[0];
}

/* lt_zero_grad_lazy against lt_zero_grad: 6 AdamW steps of the small GPT (tied head), eager or
   compiled, float32 or bf16, one or two micro-batches a step; the final weights, bit for bit. */
static float *tc_lazy_train(int lazy, int compiled, lt_dtype prec, int micro) {
    lt_ctx *ctx = lt_ctx_create(11);
    lt_gpt_config cfg = lt_gpt2_config(64, 16, 2, 2, 32);
    tc_step s;
    lt_optim *opt;
    lt_plan *p = NULL;
    lt_rng r;
    int32_t in[3 * 16], tg[3 * 16];
    float *w = NULL;
    int k, m;
    s.g = lt_gpt_create(ctx, &cfg);
    s.B = 3; s.T = 16; s.in = in; s.tg = tg;
    lt_set_precision(ctx, prec);
    opt = lt_adamw_create(ctx, lt_gpt_params(s.g), lt_adamw_defaults());
    lt_rng_seed(&r, 5);
    tc_batch(&r, &s, cfg.vocab);   /* (the plan is recorded on a batch; each replay reads in and tg again) */
    if (compiled) p = lt_compile(ctx, tc_loss, &s);
    for (k = 0; k < 6 && !lt_failed(ctx); k++) {
        if (lazy) lt_zero_grad_lazy(ctx);
        else lt_zero_grad(ctx);
        for (m = 0; m < micro && !lt_failed(ctx); m++) {
            tc_batch(&r, &s, cfg.vocab);
            if (p) lt_plan_run_scaled(p, 1.0f / (float)micro, NULL);
            else lt_backward_scaled(ctx, tc_loss(ctx, &s), 1.0f / (float)micro);
        }
        if (k == 3) lt_clip_grad_norm(ctx, lt_gpt_params(s.g), 0.5);
        lt_optim_step(opt, 3e-3);
    }
    if (!lt_failed(ctx)) w = tc_weights(ctx);
    else printf("     tc_lazy_train: %s\n", lt_error(ctx));
    lt_plan_destroy(p);
    lt_optim_destroy(opt);
    lt_gpt_destroy(s.g);
    lt_ctx_destroy(ctx);
    return w;
}
static void tc_lazy_zero_grad(void) {
    static const char *pn[3] = {"fp32", "bf16", "fp16"};
    static const lt_dtype pv[3] = {LT_F32, LT_BF16, LT_F16};
    int compiled, pr, micro;
    for (compiled = 0; compiled < 2; compiled++)
        for (pr = 0; pr < 3; pr++)
            for (micro = 1; micro <= 2; micro++) {
                float *we = tc_lazy_train(0, compiled, pv[pr], micro), *wl = tc_lazy_train(1, compiled, pv[pr], micro);
                size_t i = 0, n = 0;
                char nm[96];
                if (we && wl) i = tc_first_diff(we, wl, &n);
                snprintf(nm, sizeof nm, "compile/lazy_zero_grad/%s/%s/micro%d", compiled ? "compiled" : "eager", pn[pr], micro);
                t_check(we && wl && i == n, nm, "weight %zu of %zu differs: %.9g vs %.9g", i, n,
                        we && wl && i < n ? we[i] : 0, we && wl && i < n ? wl[i] : 0);
                free(we);
                free(wl);
            }
    {   /* what no backward writes reads as zero: an unused parameter, every reader before backward */
        lt_ctx *ctx = lt_ctx_create(2);
        lt_tensor *a = lt_param(ctx, "a", 1, (int64_t[]){3}), *b = lt_param(ctx, "unused", 1, (int64_t[]){2});
        lt_tensor *w[1];
        lt_optim *opt;
        float ra[3] = {1, 1, 1}, rb[2] = {1, 1};
        double norm;
        int i;
        for (i = 0; i < 3; i++) { a->data[i] = (float)(i + 1); a->grad[i] = 5.0f; }
        b->grad[0] = b->grad[1] = 7.0f;
        lt_zero_grad_lazy(ctx);
        t_check(lt_tensor_read(ctx, b, 1, rb) == LT_OK && rb[0] == 0 && rb[1] == 0 && b->grad[0] == 0,
                "compile/lazy_zero_grad/read", "%g %g", (double)rb[0], (double)rb[1]);
        lt_zero_grad_lazy(ctx);
        norm = lt_grad_norm(ctx, lt_ctx_params(ctx));
        t_check(norm == 0.0, "compile/lazy_zero_grad/norm", "norm %g", norm);
        b->grad[1] = 7.0f;
        lt_zero_grad_lazy(ctx);
        lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, a, a)));   /* d/da Σ a² = 2a, written over the 5s */
        t_check(lt_tensor_read(ctx, a, 1, ra) == LT_OK && ra[0] == 2 && ra[1] == 4 && ra[2] == 6 && b->grad[1] == 0,
                "compile/lazy_zero_grad/unused", "a' %g %g %g, unused' %g", (double)ra[0], (double)ra[1], (double)ra[2],
                (double)b->grad[1]);
        w[0] = b;
        opt = lt_sgd_create(ctx, (lt_paramset){w, 1}, lt_sgd_defaults());
        b->data[0] = 1.0f;
        b->grad[0] = 9.0f;
        lt_zero_grad_lazy(ctx);
        lt_optim_step(opt, 0.5);   /* no backward: the step sees zero */
        t_check(b->data[0] == 1.0f, "compile/lazy_zero_grad/optim", "%g", (double)b->data[0]);
        lt_optim_destroy(opt);
        lt_ctx_destroy(ctx);
    }
}

/* Is the page at addr advised MADV_NOHUGEPAGE ("nh" among its mapping's VmFlags in
   /proc/self/smaps)?  1 yes, 0 no, -1 not known (no /proc: not Linux). */
static int tc_nohuge(const void *addr) {
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0, r = -1;
    unsigned long long a = (unsigned long long)(uintptr_t)addr, lo, hi;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) in = a >= lo && a < hi;
        else if (in && !strncmp(line, "VmFlags:", 8)) { r = strstr(line, " nh") != NULL; break; }
    }
    fclose(f);
    return r;
}

/* lt_linear then lt_cross_entropy in a plan: the logits' gradient is written over the logits (the
   cross-entropy's backward reads them last, LT__DX_OVER_X), so the plan's peak needs no second
   (R, V) buffer; the loss and gradients are eager's */
typedef struct { lt_tensor *x, *w; int32_t tg[24]; } tc_ce;
static lt_tensor *tc_ce_loss(lt_ctx *ctx, void *u) {
    tc_ce *c = (tc_ce *)u;
    return lt_cross_entropy(ctx, lt_linear(ctx, c->x, c->w, NULL), c->tg);
}
static void tc_logits_in_place(void) {
    lt_ctx *ctx = lt_ctx_create(4);
    int64_t xs[2] = {24, 16}, ws[2] = {40, 16};
    tc_ce c;
    lt_plan *p;
    lt_tensor *l;
    float le = 0, lc = 0, *gx = NULL;
    int k, inplace = 0, same;
    c.x = lt_param(ctx, "x", 2, xs);
    c.w = lt_param(ctx, "w", 2, ws);
    lt_init_normal(ctx, c.x, 0.0, 1.0);
    lt_init_normal(ctx, c.w, 0.0, 0.5);
    for (k = 0; k < 24; k++) c.tg[k] = k % 5 == 2 ? LT_IGNORE_INDEX : (int32_t)(k * 7 % 40);
    l = tc_ce_loss(ctx, &c);
    if (l) le = l->data[0];
    lt_backward(ctx, l);
    if (c.x->grad && (gx = (float *)malloc(sizeof(float) * 24 * 16))) memcpy(gx, c.x->grad, sizeof(float) * 24 * 16);
    lt_zero_grad(ctx);
    p = lt_compile(ctx, tc_ce_loss, &c);
    if (p) lt_plan_run(p, &lc);
    for (k = 0; p && k < p->n; k++)
        if (p->nodes[k].op == LT__OP(cross_entropy))
            inplace = p->nodes[k].in[0]->grad == p->nodes[k].in[0]->data && p->nodes[k].in[0]->data;
    same = gx && c.x->grad && !memcmp(gx, c.x->grad, sizeof(float) * 24 * 16) && !memcmp(&le, &lc, sizeof le);
    t_check(p && inplace && same, "compile/logits_grad_in_place", "in place %d, eager's loss and gradient %d (%s)",
            inplace, same, p ? lt_plan_note(p) : lt_error(ctx));
    free(gx);
    lt_plan_destroy(p);
    lt_ctx_destroy(ctx);
}

static void test_compile_llama(void);
static void test_compile_all(void) {
    test_compile_llama();
    if (t_want("compile")) tc_lazy_zero_grad();
    if (!t_want("compile")) return;
    tc_logits_in_place();
    {   /* compiling records without running kernels, so it holds only the plan: less memory */
        char le[64], lc[64];
        double re = 0, rc = 0;
        if (!tc_cli_run("off", le, sizeof le, &re) || !tc_cli_run("on", lc, sizeof lc, &rc)) {
            t_skip("compile/cli_rss", "no build/train_gpt (make build/train_gpt)");
        } else {
            /* (eager itself reuses dead gradients and writes residual sums in place: 58.9 MB
               against 48.8 compiled when this bound was set; 96 vs 52 before that) */
            t_check(rc < 0.9 * re, "compile/cli_rss", "peak RSS compiled %.1f MB vs eager %.1f MB", rc, re);
            t_check(!strncmp(le, lc, 6), "compile/cli_same_loss", "eager %s vs compiled %s", le, lc);
            printf("info compile.cli: peak RSS eager %.1f MB, compiled %.1f MB\n", re, rc);
        }
    }
    {   /* the recording pass runs no kernel (only a view sets its pointer) */
        lt_ctx *ctx = lt_ctx_create(3);
        tc_step s;
        lt_plan *p;
        int32_t in[2 * 16], tg[2 * 16];
        int64_t calls = 0;
        int k;
        tc_small_step(ctx, &s, in, tg);
        lt_set_profiling(ctx, 1);
        p = lt_compile(ctx, tc_loss, &s);
        for (k = 0; k < LT__OP_COUNT; k++) if (&lt__ops[k] != LT__OP(reshape)) calls += ctx->prof_n[0][k];
        t_check(p && !lt_plan_is_eager(p) && calls == 0, "compile/records_without_running",
                "%lld forward kernels ran while recording", (long long)calls);
        {   /* and the recording's chunks keep 4 KiB pages, even where transparent_hugepage is "always"
               (where smaps shows this process's own advice: not under qemu-user, which takes
               madvise without passing it on; a buffer the test advises itself tells) */
            const lt__chunk *c;
            int nh = 1, known = 0;
#ifdef LT__MADV_HUGEPAGE
            char *own = (char *)malloc((size_t)4 << 20);
            if (own) {
                char *a = (char *)(((uintptr_t)own + 4095u) & ~(uintptr_t)4095u);
                known = madvise(a, (size_t)2 << 20, LT__MADV_NOHUGEPAGE) == 0 && tc_nohuge(a + 4096) == 1;
                free(own);
            }
#endif
            for (c = ctx->arena.first; c && known; c = c->next) nh &= tc_nohuge(c->mem + c->cap / 2) == 1;
            if (!known || !ctx->arena.first)
                t_skip("compile/records_no_hugepages", "/proc/self/smaps does not show this process's madvise here");
            else t_check(nh, "compile/records_no_hugepages", "a chunk of the recording pass may get 2 MiB pages");
        }
        lt_set_profiling(ctx, 0);
        lt_plan_destroy(p);
        lt_gpt_destroy(s.g);
        lt_ctx_destroy(ctx);
    }
    tc_equal_runs("gpt", 0, 0.0f);
    tc_equal_runs("gpt_dropout", 0, 0.1f);
    tc_equal_runs("gpt_two_shapes", 1, 0.0f);
    setenv("LTRAIN_FUSE", "0", 1);   /* without fusion: the same numbers again */
    tc_equal_runs("gpt_unfused", 0, 0.0f);
    unsetenv("LTRAIN_FUSE");
    {   /* memory: the plan shares buffers whose lifetimes do not overlap */
        lt_ctx *ctx = lt_ctx_create(3);
        tc_step s;
        lt_plan *p;
        int32_t in[2 * 16], tg[2 * 16];
        tc_small_step(ctx, &s, in, tg);
        p = lt_compile(ctx, tc_loss, &s);
        t_check(p && !lt_plan_is_eager(p) && lt_plan_bytes(p) < lt_plan_naive_bytes(p) * 6 / 10, "compile/memory_planned",
                "planned %zu bytes of %zu (%s)", lt_plan_bytes(p), lt_plan_naive_bytes(p), p ? lt_plan_note(p) : lt_error(ctx));
        {   /* lt_gpt_loss's head and loss at float32 are one op, linear_ce_exp (@@LOSS): no logits
               tensor, nor a pass that makes their gradient */
            lt_tensor *l = tc_loss(ctx, &s);
            t_check(l && l->node && l->node->op == LT__OP(linear_ce_exp), "compile/gpt_head_one_op", "%s",
                    l && l->node ? l->node->op->name : lt_error(ctx));
            lt_backward(ctx, l);
            lt_zero_grad(ctx);
        }
        /* fusion: each residual add runs with the layernorm after it, tile by tile (2 per block) */
        t_check(p && p->n_groups == 2 * lt_gpt_cfg(s.g)->layers && p->n_fused == 4 * lt_gpt_cfg(s.g)->layers, "compile/fused_add_layernorm",
                "%s", p ? lt_plan_note(p) : lt_error(ctx));
        {   /* the validation step leaves accumulated gradients alone */
            lt_paramset ps = lt_gpt_params(s.g);
            float before = ps.p[3]->grad[0];
            lt_plan_destroy(p);
            ps.p[3]->grad[0] = 0.25f;
            p = lt_compile(ctx, tc_loss, &s);
            t_check(p && ps.p[3]->grad[0] == 0.25f, "compile/keeps_grads", "grad changed to %g (was %g)",
                    (double)ps.p[3]->grad[0], (double)before);
        }
        lt_plan_destroy(p);
        /* validation: a NaN weight is reported with the op and its place */
        lt_find_param(ctx, "h.1.ln_2.weight")->data[0] = NAN;
        p = lt_compile(ctx, tc_loss, &s);
        t_check(!p && lt_status_of(ctx) == LT_ERR_NONFINITE && strstr(lt_error(ctx), "layernorm") &&
                strstr(lt_error(ctx), "h.1"), "compile/validation_names_op", "%s", lt_error(ctx));
        lt_plan_destroy(p);
        lt_gpt_destroy(s.g);
        lt_ctx_destroy(ctx);
    }
    {   /* the op table's write-over flags, as the plan of the small GPT uses them: per block, the
           two residual adds write their sums over the branch (LT__Y_OVER_X); the embeddings' add,
           the residual adds and gelu write their first input's gradient over their output's
           (LT__DX_OVER_DY), and the residual adds' branches take that gradient too (the
           positions' embedding, broadcast over the batch, does not: @@COMPILE lt__plan_db_over_dy);
           no d(logits) goes over logits (LT__DX_OVER_X): the head and loss are one op with no
           logits tensor at both precisions (linear_ce_exp, linear_ce16; compile/logits_grad_in_place
           has lt_linear + lt_cross_entropy).  At 16 bits gelu writes its gradient rounded, for the
           product before it (LT__G16_DX16) */
        int prec;
        for (prec = 0; prec < 2; prec++) {
            lt_ctx *ctx = lt_ctx_create(3);
            tc_step s;
            lt_plan *p;
            int32_t in[2 * 16], tg[2 * 16];
            int L, k, over = 0, alias = 0, dx_on_x = 0, dx16 = 0, alias_b = 0;
            tc_small_step(ctx, &s, in, tg);
            L = lt_gpt_cfg(s.g)->layers;
            if (prec) lt_set_precision(ctx, LT_F16);
            p = lt_compile(ctx, tc_loss, &s);
            tc_in_place(p, &over, &alias, &dx_on_x, &alias_b);
            for (k = 0; p && k < p->n; k++) dx16 += p->nodes[k].op == LT__OP(gelu16) && LT__G16_DX16(&p->nodes[k]);
            t_check(p && !lt_plan_is_eager(p) && over == 2 * L && alias == 3 * L + 1 && alias_b == 2 * L &&
                    dx_on_x == 0 && dx16 == (prec ? L : 0),
                    prec ? "compile/in_place_flags_f16" : "compile/in_place_flags",
                    "over %d (want %d), alias %d (want %d), second inputs %d (want %d), dx on x %d, gelu16 dx at 16 "
                    "bits %d (%s)", over, 2 * L, alias, 3 * L + 1, alias_b, 2 * L, dx_on_x, dx16,
                    p ? lt_plan_note(p) : lt_error(ctx));
            lt_plan_destroy(p);
            lt_gpt_destroy(s.g);
            lt_ctx_destroy(ctx);
        }
    }
    {   /* add in place (tc_add_step): where it may, and the same loss and gradients as eager */
        lt_ctx *ctx = lt_ctx_create(3);
        float xs[15], ge[3][15], loss_e = 0, loss_c = 0;
        int i, k, w, over = -1, fresh = -1, same = 1;
        lt_plan *p;
        lt_tensor *l;
        for (i = 0; i < 15; i++) xs[i] = 0.1f * (float)(i % 7) - 0.3f;
        for (w = 0; w < 3; w++) {
            char nm[16];
            snprintf(nm, sizeof nm, "w%d", w);
            tc_add_w[w] = lt_param(ctx, nm, 2, (int64_t[]){3, 5});
            for (i = 0; i < 15; i++) tc_add_w[w]->data[i] = 0.05f * (float)((i * (w + 3)) % 11) - 0.2f;
        }
        l = tc_add_step(ctx, xs);
        loss_e = l ? lt_item(l) : 0.0f;
        lt_backward(ctx, l);
        for (w = 0; w < 3; w++) memcpy(ge[w], tc_add_w[w]->grad, sizeof ge[w]);
        lt_zero_grad(ctx);
        p = lt_compile(ctx, tc_add_step, xs);
        if (p) lt_plan_run(p, &loss_c);
        for (k = 0; p && k < p->n; k++)
            if (p->nodes[k].op == LT__OP(add)) {
                const lt__node *nd = &p->nodes[k];
                int hit = nd->out->data == nd->in[0]->data || nd->out->data == nd->in[1]->data;
                if (nd->in[1]->node && nd->in[1]->node->op == LT__OP(mul)) over = hit && nd->out->data == nd->in[1]->data;
                else fresh = !hit;
            }
        for (w = 0; w < 3; w++)
            for (i = 0; i < 15; i++) same &= ge[w][i] == tc_add_w[w]->grad[i];
        t_check(p && !lt_plan_is_eager(p) && over == 1 && fresh == 1 && loss_c == loss_e && same, "compile/add_in_place",
                "over %d, fresh %d, loss %.9g vs eager %.9g, grads %s (%s)", over, fresh, (double)loss_c, (double)loss_e,
                same ? "equal" : "differ", p ? lt_plan_note(p) : lt_error(ctx));
        lt_plan_destroy(p);
        lt_ctx_destroy(ctx);
    }
    {   /* the branch of a residual add takes the add's gradient where no write lands in between */
        int mode;
        for (mode = 0; mode < 4; mode++) {
            lt_ctx *ctx = lt_ctx_create(3);
            float loss_e = 0, loss_c = 0;
            int i, w, same = 0, over, alias, dx_on_x, alias_b;
            char nm[48];
            lt_plan *p;
            for (w = 0; w < 3; w++) {
                snprintf(nm, sizeof nm, "w%d", w);
                tc_db_w[w] = lt_param(ctx, nm, 2, (int64_t[]){4, 6});
                for (i = 0; i < 24; i++) tc_db_w[w]->data[i] = 0.07f * (float)((i * (w + 5)) % 13) - 0.4f;
            }
            p = tc_plan_vs_eager(ctx, tc_db_step, &mode, tc_db_w, 3, &loss_e, &loss_c, &same);
            tc_in_place(p, &over, &alias, &dx_on_x, &alias_b);
            snprintf(nm, sizeof nm, "compile/branch_grad/%s",
                     mode == 0 ? "shared" : mode == 1 ? "gelu" : mode == 2 ? "reader_between" : "reader_between_chain");
            t_check(p && !lt_plan_is_eager(p) && alias_b == (mode == 0 || mode == 3) && loss_c == loss_e && same, nm,
                    "second inputs sharing the add's gradient %d (want %d), loss %.9g vs eager %.9g, gradients %s (%s)",
                    alias_b, mode == 0 || mode == 3, (double)loss_c, (double)loss_e, same ? "equal" : "differ",
                    p ? lt_plan_note(p) : lt_error(ctx));
            lt_plan_destroy(p);
            lt_ctx_destroy(ctx);
        }
    }
    {   /* gelu16's output: not written when only 16-bit products read it (they recompute it from
           gelu16's copy of its input; the product before gelu16 then writes that copy itself),
           written when another op reads it; the eager step's bits */
        int also, pr;
        for (pr = 0; pr < 2; pr++)
            for (also = 0; also < 2; also++) {
                lt_ctx *ctx = lt_ctx_create(3);
                float loss_e, loss_c;
                int i, k, w, unmade = 0, xh_made = 0, same;
                lt_plan *p;
                char nm[64];
                static const int64_t shp[4][2] = {{16, 8}, {16, 1}, {4, 16}, {4, 1}};
                lt_set_precision(ctx, pr ? LT_F16 : LT_BF16);
                for (w = 0; w < 4; w++) {
                    snprintf(nm, sizeof nm, "w%d", w);
                    tc_g16_w[w] = lt_param(ctx, nm, shp[w][1] == 1 ? 1 : 2, shp[w]);
                    for (i = 0; i < tc_g16_w[w]->n; i++)
                        tc_g16_w[w]->data[i] = 0.07f * (float)((i * (w + 5)) % 17) - 0.5f;
                }
                p = tc_plan_vs_eager(ctx, tc_g16_step, &also, tc_g16_w, 4, &loss_e, &loss_c, &same);
                for (k = 0; p && k < p->n; k++) {
                    unmade += p->nodes[k].op == LT__OP(gelu16) && !p->outs[k].data;
                    xh_made += p->nodes[k].op == LT__OP(linear16) && LT__AFF_Y16_TO(&p->nodes[k]) > 0 &&
                               !p->outs[k].data && LT__G16_XH_MADE(&p->nodes[k + LT__AFF_Y16_TO(&p->nodes[k])]);
                }
                snprintf(nm, sizeof nm, "compile/gelu16_unmade/%s/%s", pr ? "fp16" : "bf16", also ? "read_by_tanh" : "products");
                t_check(p && !lt_plan_is_eager(p) && unmade == !also && xh_made == !also && loss_c == loss_e && same, nm,
                        "gelu16 outputs unmade %d, inputs' copies written by the product %d (want %d), loss %.9g "
                        "vs eager %.9g, grads %s (%s)", unmade, xh_made, !also, (double)loss_c, (double)loss_e,
                        same ? "equal" : "differ", p ? lt_plan_note(p) : lt_error(ctx));
                lt_plan_destroy(p);
                lt_ctx_destroy(ctx);
            }
    }
    {   /* a norm writing its readers' 16-bit copies: where every reader is a 16-bit product that
           keeps one (not where tanh reads the output too); the norm's output then unmade, the
           eager step's bits */
        int mode, pr;
        static const char *names[4] = {"layernorm_linear", "rmsnorm_two_linears", "read_by_tanh", "layernorm_head"};
        for (pr = 0; pr < 2; pr++)
            for (mode = 0; mode < 4; mode++) {
                lt_ctx *ctx = lt_ctx_create(3);
                float loss_e, loss_c;
                int i, k, w, norms = 0, readers = 0, same, want_r = mode == 1 ? 2 : mode == 2 ? 0 : 1;
                lt_plan *p;
                char nm[80];
                static const int64_t shp[5][2] = {{8, 1}, {8, 1}, {4, 8}, {4, 1}, {4, 8}};
                lt_set_precision(ctx, pr ? LT_F16 : LT_BF16);
                for (w = 0; w < 5; w++) {
                    snprintf(nm, sizeof nm, "w%d", w);
                    tc_n16_w[w] = lt_param(ctx, nm, shp[w][1] == 1 ? 1 : 2, shp[w]);
                    for (i = 0; i < tc_n16_w[w]->n; i++)
                        tc_n16_w[w]->data[i] = 0.09f * (float)((i * (w + 3)) % 13) - 0.45f + (w < 2 ? 1.0f - (float)w : 0.0f);
                }
                p = tc_plan_vs_eager(ctx, tc_n16_step, &mode, tc_n16_w, 5, &loss_e, &loss_c, &same);
                for (k = 0; p && k < p->n; k++) {
                    norms += (p->nodes[k].op == LT__OP(layernorm16) || p->nodes[k].op == LT__OP(rmsnorm16)) &&
                             LT__LN_Y16(&p->nodes[k]) && !p->outs[k].data;
                    readers += lt__x16_of_norm(&p->nodes[k]) && !p->nodes[k].save[0];
                }
                snprintf(nm, sizeof nm, "compile/norm16_y16/%s/%s", pr ? "fp16" : "bf16", names[mode]);
                t_check(p && !lt_plan_is_eager(p) && norms == (want_r > 0) && readers == want_r && loss_c == loss_e &&
                        same && loss_e > 0.0f, nm,
                        "norms writing copies %d (want %d), products reading them %d (want %d), loss %.9g vs eager "
                        "%.9g, grads %s (%s)", norms, want_r > 0, readers, want_r, (double)loss_c, (double)loss_e,
                        same ? "equal" : "differ", p ? lt_plan_note(p) : lt_error(ctx));
                lt_plan_destroy(p);
                lt_ctx_destroy(ctx);
            }
    }
    {   /* q, k, v written by their product into attention16's 16-bit copy alone (not where tanh
           reads them too); the eager step's bits */
        int also, pr;
        for (pr = 0; pr < 2; pr++)
            for (also = 0; also < 2; also++) {
                lt_ctx *ctx = lt_ctx_create(3);
                float loss_e, loss_c;
                int i, k, w, made = 0, att = 0, same;
                lt_plan *p;
                char nm[64];
                static const int64_t shp[4][2] = {{8, 24}, {24, 1}, {4, 8}, {4, 1}};
                lt_set_precision(ctx, pr ? LT_F16 : LT_BF16);
                for (w = 0; w < 4; w++) {
                    snprintf(nm, sizeof nm, "w%d", w);
                    tc_qkv_w[w] = lt_param(ctx, nm, shp[w][1] == 1 ? 1 : 2, shp[w]);
                    for (i = 0; i < tc_qkv_w[w]->n; i++)
                        tc_qkv_w[w]->data[i] = 0.08f * (float)((i * (w + 7)) % 19) - 0.7f;
                }
                p = tc_plan_vs_eager(ctx, tc_qkv_step, &also, tc_qkv_w, 4, &loss_e, &loss_c, &same);
                for (k = 0; p && k < p->n; k++) {
                    made += p->nodes[k].op == LT__OP(conv1d16) && LT__AFF_Y16_TO(&p->nodes[k]) > 0 && !p->outs[k].data &&
                            p->nodes[k + LT__AFF_Y16_TO(&p->nodes[k])].op == LT__OP(attention16);
                    att += p->nodes[k].op == LT__OP(attention16) && LT__ATT_QKV16(&p->nodes[k]);
                }
                snprintf(nm, sizeof nm, "compile/qkv16/%s/%s", pr ? "fp16" : "bf16", also ? "read_by_tanh" : "attention");
                t_check(p && !lt_plan_is_eager(p) && made == !also && att == !also && loss_c == loss_e && same, nm,
                        "products writing q, k, v at 16 bits %d, attention16 reading them %d (want %d), loss %.9g vs "
                        "eager %.9g, grads %s (%s)", made, att, !also, (double)loss_c, (double)loss_e,
                        same ? "equal" : "differ", p ? lt_plan_note(p) : lt_error(ctx));
                lt_plan_destroy(p);
                lt_ctx_destroy(ctx);
            }
    }
    {   /* the bytes the forward keeps for the backward, counted by hand for
           x (4,3) -> layernorm -> linear (2 out) -> gelu -> tanh -> cross-entropy (4 targets):
             x, read by layernorm's backward         12 floats
             layernorm's saved mean and rstd          2*4
             its output, read by linear's backward   12
             h, read by gelu's backward               8
             tanh's output (tanh's and CE's backward) 8
             CE's saved [row loss | max | lse | 1/Σ]  4*4
             CE's targets (int32)                     4
           = 68 values = 272 bytes.  Not kept: gelu's output (tanh's backward reads its own
           output), the loss. */
        lt_ctx *ctx = lt_ctx_create(3);
        float xs[12] = {0.1f, -0.4f, 0.3f, 1.0f, 0.2f, -0.7f, 0.5f, 0.5f, -0.1f, 0.9f, -0.3f, 0.2f}, loss = 0;
        lt_plan *p;
        tc_saved_w[0] = lt_param(ctx, "ln.w", 1, (int64_t[]){3});
        tc_saved_w[1] = lt_param(ctx, "ln.b", 1, (int64_t[]){3});
        tc_saved_w[2] = lt_param(ctx, "fc.w", 2, (int64_t[]){2, 3});
        tc_saved_w[3] = lt_param(ctx, "fc.b", 1, (int64_t[]){2});
        lt_fill(tc_saved_w[0], 1.0f);
        lt_fill(tc_saved_w[2], 0.25f);
        p = lt_compile(ctx, tc_saved_step, xs);
        if (p) lt_plan_run(p, &loss);
        t_check(p && !lt_plan_is_eager(p) && lt_plan_saved_bytes(p) == 272 && lt_plan_saved_bytes(p) <= lt_plan_bytes(p),
                "compile/saved_bytes", "saved %zu bytes (want 272), planned %zu (%s)", lt_plan_saved_bytes(p),
                lt_plan_bytes(p), p ? lt_plan_note(p) : lt_error(ctx));
        lt_plan_destroy(p);
        lt_ctx_destroy(ctx);
    }
    {   /* fallback: an input filled by hand after lt_tensor_new */
        lt_ctx *ctx = lt_ctx_create(3);
        float xs[4] = {1, 2, 3, 4}, loss = 0;
        lt_plan *p;
        tc_outside_w = lt_param(ctx, "w", 1, (int64_t[]){4});
        lt_fill(tc_outside_w, 0.5f);
        p = lt_compile(ctx, tc_filled_later, xs);
        t_check(p && lt_plan_is_eager(p) && strstr(lt_plan_note(p), "changed after it was made"),
                "compile/fallback_filled_input", "%s", p ? lt_plan_note(p) : lt_error(ctx));
        xs[1] = 20;
        lt_zero_grad(ctx);
        if (p) lt_plan_run(p, &loss);
        t_check(loss == 0.5f * (1 + 20 + 3 + 4) && tc_outside_w->grad[1] == 20.0f, "compile/fallback_runs_eager",
                "loss %g grad %g", (double)loss, (double)tc_outside_w->grad[1]);
        lt_plan_destroy(p);
        xs[1] = 2;
        /* inputs given with lt_tensor_from inside the function are re-read at every replay */
        p = lt_compile(ctx, tc_inside, xs);
        lt_zero_grad(ctx);
        xs[0] = 10;
        if (p) lt_plan_run(p, &loss);
        t_check(p && !lt_plan_is_eager(p) && loss == 0.5f * (10 + 2 + 3 + 4) && tc_outside_w->grad[0] == 10.0f,
                "compile/inputs_reread", "loss %g grad %g (%s)", (double)loss, (double)tc_outside_w->grad[0],
                p ? lt_plan_note(p) : lt_error(ctx));
        lt_plan_destroy(p);
        /* LTRAIN_COMPILE=0 turns compiling off */
        setenv("LTRAIN_COMPILE", "0", 1);
        p = lt_compile(ctx, tc_inside, xs);
        unsetenv("LTRAIN_COMPILE");
        t_check(p && lt_plan_is_eager(p) && strstr(lt_plan_note(p), "LTRAIN_COMPILE=0"), "compile/env_off", "%s",
                p ? lt_plan_note(p) : lt_error(ctx));
        if (p) { lt_zero_grad(ctx); lt_plan_run(p, &loss); }
        t_check(loss == 0.5f * (10 + 2 + 3 + 4), "compile/env_off_runs_eager", "loss %g", (double)loss);
        lt_plan_destroy(p);
        lt_ctx_destroy(ctx);
    }
}

/* ---- a Llama-style block (every op of issue 23): compiled plans replay eager steps to the bit ----- */
/* x [2,13,24] -> RMSNorm -> q (4 heads of 6), k, v (2 kv heads) by linears without bias -> QK-norm
   (RMSNorm per head, w [6]) -> RoPE (theta 1e4, pos0 3) -> GQA attention (lengths 13, 9) -> o_proj,
   residual -> RMSNorm -> SwiGLU MLP (hidden 40) -> residual -> SiLU -> MSE against a target. */
typedef struct { lt_tensor *w[12]; float x[2 * 13 * 24], tg[2 * 13 * 24]; int32_t len[2]; } tc_llama;
static lt_tensor *tc_llama_step(lt_ctx *ctx, void *u) {
    tc_llama *m = (tc_llama *)u;
    int64_t s3[3] = {2, 13, 24}, sq[4] = {2, 13, 4, 6}, sk[4] = {2, 13, 2, 6}, sq3[3] = {2, 13, 24}, sk3[3] = {2, 13, 12};
    lt_tensor *x = lt_tensor_from(ctx, m->x, 3, s3), *h, *q, *k, *v, *a, *x2, *mlp;
    h = lt_rmsnorm(ctx, x, m->w[0], 1e-6f);
    q = lt_linear(ctx, h, m->w[1], NULL);
    k = lt_linear(ctx, h, m->w[2], NULL);
    v = lt_linear(ctx, h, m->w[3], m->w[11]);
    q = lt_reshape(ctx, lt_rmsnorm(ctx, lt_reshape(ctx, q, 4, sq), m->w[4], 1e-6f), 3, sq3);
    k = lt_reshape(ctx, lt_rmsnorm(ctx, lt_reshape(ctx, k, 4, sk), m->w[5], 1e-6f), 3, sk3);
    a = lt_attention_gqa(ctx, lt_rope(ctx, q, 4, 1e4f, 3), lt_rope(ctx, k, 2, 1e4f, 3), v, 4, 2, m->len);
    x2 = lt_add(ctx, x, lt_linear(ctx, a, m->w[6], NULL));
    h = lt_rmsnorm(ctx, x2, m->w[7], 1e-6f);
    mlp = lt_linear(ctx, lt_swiglu(ctx, lt_linear(ctx, h, m->w[8], NULL), lt_linear(ctx, h, m->w[9], NULL)), m->w[10], NULL);
    return lt_mse_loss(ctx, lt_silu(ctx, lt_add(ctx, x2, mlp)), lt_tensor_from(ctx, m->tg, 3, s3));
}
/* one context at precision prec: the eager loss and gradients, then the plan's (run twice) */
static void tc_llama_case(lt_dtype prec, const char *tag) {
    static const int64_t shapes[12][3] = {{1, 24}, {2, 24, 24}, {2, 12, 24}, {2, 12, 24}, {1, 6}, {1, 6},
                                          {2, 24, 24}, {1, 24}, {2, 40, 24}, {2, 40, 24}, {2, 24, 40}, {1, 12}};
    lt_ctx *ctx = lt_ctx_create(21);
    tc_llama m;
    lt_tensor *l;
    lt_plan *p;
    float loss_e = 0, loss_c[2] = {0, 0}, *ge;
    size_t n, off;
    int i, k, run, same[2] = {1, 1};
    char nm[96];
    for (i = 0; i < 12; i++) {
        char pn[16];
        snprintf(pn, sizeof pn, "w%d", i);
        m.w[i] = lt_param(ctx, pn, (int)shapes[i][0], &shapes[i][1]);
        lt_init_normal(ctx, m.w[i], i == 0 || i == 4 || i == 5 || i == 7 ? 1.0 : 0.0, 0.2);
    }
    for (i = 0; i < 2 * 13 * 24; i++) {
        m.x[i] = 0.05f * (float)((i * 7) % 41) - 1.0f;
        m.tg[i] = 0.03f * (float)((i * 5) % 23) - 0.3f;
    }
    m.len[0] = 13; m.len[1] = 9;
    lt_set_precision(ctx, prec);
    n = lt_params_count(ctx);
    ge = (float *)malloc(n * sizeof(float));
    l = tc_llama_step(ctx, &m);
    loss_e = l ? lt_item(l) : 0.0f;
    lt_backward(ctx, l);
    for (i = 0, off = 0; i < 12; i++) { memcpy(ge + off, m.w[i]->grad, (size_t)m.w[i]->n * sizeof(float)); off += (size_t)m.w[i]->n; }
    p = lt_compile(ctx, tc_llama_step, &m);
    for (run = 0; run < 2; run++) {
        lt_zero_grad(ctx);
        if (p) lt_plan_run(p, &loss_c[run]);
        for (i = 0, off = 0; i < 12; i++)
            for (k = 0; k < m.w[i]->n; k++, off++) same[run] &= memcmp(&ge[off], &m.w[i]->grad[k], sizeof(float)) == 0;
    }
    snprintf(nm, sizeof nm, "compile/llama_block/%s", tag);
    t_check(p && !lt_plan_is_eager(p) && !lt_failed(ctx) && loss_c[0] == loss_e && loss_c[1] == loss_e && same[0] && same[1],
            nm, "loss eager %.9g, plan %.9g %.9g, gradients %s %s (%s; %s)", (double)loss_e, (double)loss_c[0],
            (double)loss_c[1], same[0] ? "equal" : "differ", same[1] ? "equal" : "differ", p ? lt_plan_note(p) : "no plan",
            lt_error(ctx));
    if (p && getenv("LT_TEST_VERBOSE")) {
        int over, alias, dx_on_x, alias_b, j;
        tc_in_place(p, &over, &alias, &dx_on_x, &alias_b);
        printf("info %s: planned %zu of %zu bytes, %d fused groups, %d outputs over inputs, %d dx over dy:", nm,
               lt_plan_bytes(p), lt_plan_naive_bytes(p), p->n_groups, over, alias);
        for (j = 0; j < p->n; j++)
            if (p->nodes[j].in[0] && !p->nodes[j].in[0]->is_param && p->nodes[j].out->grad &&
                p->nodes[j].in[0]->grad == p->nodes[j].out->grad && !(p->nodes[j].op->flags & LT__VIEW))
                printf(" %s", p->nodes[j].op->name);
        printf("\n");
    }
    lt_plan_destroy(p);
    free(ge);
    lt_ctx_destroy(ctx);
}
static void test_compile_llama(void) {
    if (!t_want("compile/llama_block")) return;
    tc_llama_case(LT_F32, "f32");
    tc_llama_case(LT_BF16, "bf16");
    tc_llama_case(LT_F16, "f16");
    setenv("LTRAIN_FUSE", "0", 1);
    tc_llama_case(LT_F32, "f32_unfused");
    unsetenv("LTRAIN_FUSE");
}

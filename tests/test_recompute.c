/* test_recompute.c - activation checkpointing (lt_recompute_begin / lt_recompute_end): gradients
   to the bit against steps without it, eager and compiled, fp32 and bf16, dropout on; the memory
   it saves; its errors. */

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
static float *tr_grads(int L, int C, int T, int every, int compiled, lt_dtype prec, int steps, float *loss,
                       size_t *mem, size_t *saved, size_t *n) {
    lt_ctx *ctx = lt_ctx_create(7);
    lt_gpt_config cfg = {64, 16, 2, 2, 32, 0.1f};
    tr_step s;
    lt_plan *p = NULL;
    int32_t in[4 * 64], tg[4 * 64];
    lt_rng r;
    float *g = NULL, *span;
    int i, k;
    cfg.layers = L; cfg.channels = C; cfg.ctx = T;
    s.g = lt_gpt_create(ctx, &cfg); s.B = 4; s.T = T; s.in = in; s.tg = tg;
    lt_rng_seed(&r, 1);
    for (i = 0; i < s.B * s.T; i++) {
        in[i] = (int32_t)(lt_rng_u64(&r) % 64u);
        tg[i] = i % 11 == 5 ? LT_IGNORE_INDEX : (int32_t)(lt_rng_u64(&r) % 64u);
    }
    if (prec != LT_F32) lt_set_precision(ctx, prec);
    lt_gpt_set_recompute(s.g, every);
    *mem = *saved = 0;
    if (compiled) p = lt_compile(ctx, tr_loss, &s);
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
        printf("info recompute: %s\n", lt_error(ctx));
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

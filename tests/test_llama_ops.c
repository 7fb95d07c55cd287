/* test_llama_ops.c - the Llama-style ops (lt_rmsnorm, lt_rope, lt_silu, lt_swiglu, lt_attention_gqa)
   against PyTorch and transformers, gradient checks, thread counts, errors.
   References: tests/ref/llama_ops.bin, written by tests/ref/gen_llama_ops.py (the case layout of
   tests/ref/ops.bin; its header names each kind's inputs and args).  Uses test_ops.c's helpers
   (tops_ref_case, tops_inputs, tops_collect, tolerances), included before this file. */

/* One call: kind (rmsnorm, qknorm, rope, silu, swiglu, gqa), inputs, args, lengths. */
typedef struct {
    const char *kind;
    lt_tensor *x[3];
    double args[3];
    const int32_t *ids;
    int n_in;                    /* gradient check: how many of x it perturbs */
    int alias;                   /* gradient check: every x[k] is x[0] (one tensor passed n times) */
} tllama_call;

static lt_tensor *tllama_apply(lt_ctx *ctx, const tllama_call *c) {
    lt_tensor *const *x = c->x;
    if (!strcmp(c->kind, "rmsnorm")) return lt_rmsnorm(ctx, x[0], x[1], (float)c->args[0]);
    if (!strcmp(c->kind, "qknorm")) {   /* x [B,T,H*D] -> [B,T,H,D], RMSNorm per head (w [D]), back */
        int64_t s4[4], H = (int64_t)c->args[1];
        if (!x[0] || x[0]->ndim != 3) return NULL;
        s4[0] = x[0]->shape[0]; s4[1] = x[0]->shape[1]; s4[2] = H; s4[3] = x[0]->shape[2] / H;
        return lt_reshape(ctx, lt_rmsnorm(ctx, lt_reshape(ctx, x[0], 4, s4), x[1], (float)c->args[0]), 3, x[0]->shape);
    }
    if (!strcmp(c->kind, "rope")) return lt_rope(ctx, x[0], (int)c->args[0], (float)c->args[1], (int)c->args[2]);
    if (!strcmp(c->kind, "silu")) return lt_silu(ctx, x[0]);
    if (!strcmp(c->kind, "swiglu")) return lt_swiglu(ctx, x[0], x[1]);
    if (!strcmp(c->kind, "gqa")) return lt_attention_gqa(ctx, x[0], x[1], x[2], (int)c->args[0], (int)c->args[1], c->ids);
    return NULL;
}
/* the test-name prefix of a kind: the op it tests */
static const char *tllama_op(const char *kind) {
    return !strcmp(kind, "gqa") ? "attention_gqa" : !strcmp(kind, "qknorm") ? "rmsnorm.qknorm" : kind;
}

/* ---- against PyTorch / transformers ------------------------------------------------------------------- */
/* A llama_ops.bin case (test_ops.c's tops_ref_case runs it): user is the kind. */
static lt_tensor *tllama_case_apply(lt_ctx *ctx, lt_tensor *const x[3], const int32_t *ids, const t_case *tc,
                                    const void *user) {
    tllama_call c;
    int k;
    memset(&c, 0, sizeof c);
    c.kind = (const char *)user;
    for (k = 0; k < 3; k++) c.x[k] = x[k];
    c.ids = ids;
    for (k = 0; tc->args && k < tc->args->n && k < 3; k++) c.args[k] = tc->args->data[k];
    return tllama_apply(ctx, &c);
}

static void test_llama_ops_torch(void) {
    static const char *const kinds[] = {"rmsnorm", "qknorm", "rope", "silu", "swiglu", "gqa"};
    t_ref ref;
    tops_stat st[6];
    int i, k;
    if (!t_ref_open(&ref, "llama_ops", "ops.llama.torch")) return;
    memset(st, 0, sizeof st);
    for (i = 0; i < ref.n; i++) {
        char id[128], name[200], label[128];
        int j;
        if (!t_case_id(&ref.a[i], id, sizeof id)) continue;
        for (k = 0; k < 6; k++)
            if (!strncmp(id, kinds[k], strlen(kinds[k])) && id[strlen(kinds[k])] == '/') break;
        if (k == 6) { t_check(0, "ops.llama.torch", "unknown kind in case %s", id); continue; }
        snprintf(label, sizeof label, "%s", id + strlen(kinds[k]) + 1);
        for (j = 0; label[j]; j++) if (label[j] == '/') label[j] = '.';
        snprintf(name, sizeof name, "ops.%s.torch.%s", tllama_op(kinds[k]), label);
        if (!t_want(name)) continue;
        tops_ref_case(&ref, id, "llama_ops.bin", name, tllama_case_apply, kinds[k], &st[k]);
    }
    for (k = 0; k < 6; k++)
        if (st[k].cases)
            printf("info ops.%s.torch: %d cases, worst |err| %.2g, worst err/(1e-5+1e-4|ref|) %.3f\n", tllama_op(kinds[k]),
                   st[k].cases, st[k].abs_err, st[k].ratio);
    t_ref_free(&ref);
}

/* ---- gradient checks (test_ops.c's eps and tolerance) ---------------------------------------------------- */
static lt_tensor *tllama_gc_fn(lt_ctx *ctx, lt_tensor **inputs, void *user) {
    tllama_call c = *(const tllama_call *)user;
    int k;
    for (k = 0; k < 3; k++) c.x[k] = k < c.n_in ? inputs[k] : NULL;
    if (c.alias) for (k = 1; k < 3; k++) c.x[k] = inputs[0];
    return tllama_apply(ctx, &c);
}

typedef struct {
    const char *name, *kind;
    int n_in;
    int64_t shape[3][4];         /* per input: ndim, dims */
    double args[3];
    int32_t ids[4];              /* lengths (gqa), when ids[0] >= 0 */
    int alias;
} tllama_case;

static void test_llama_ops_gradcheck(void) {
    static const tllama_case cases[] = {
        {"rmsnorm.gradcheck.3x6", "rmsnorm", 2, {{2, 3, 6}, {1, 6}}, {1e-5}, {-1}, 0},
        {"rmsnorm.gradcheck.2x3x5_noweight", "rmsnorm", 1, {{3, 2, 3, 5}}, {1e-6}, {-1}, 0},
        {"rmsnorm.qknorm.gradcheck.B2T3H2D4", "qknorm", 2, {{3, 2, 3, 8}, {1, 4}}, {1e-6, 2}, {-1}, 0},
        {"rope.gradcheck.B2T3H2D4", "rope", 1, {{3, 2, 3, 8}}, {2, 10000.0, 0}, {-1}, 0},
        {"rope.gradcheck.B1T4H1D6_pos5", "rope", 1, {{3, 1, 4, 6}}, {1, 500.0, 5}, {-1}, 0},
        {"silu.gradcheck.3x5", "silu", 1, {{2, 3, 5}}, {0}, {-1}, 0},
        {"swiglu.gradcheck.3x5", "swiglu", 2, {{2, 3, 5}, {2, 3, 5}}, {0}, {-1}, 0},
        {"swiglu.gradcheck.self_3x4", "swiglu", 1, {{2, 3, 4}}, {0}, {-1}, 1},
        {"attention_gqa.gradcheck.B2T4H4K2D3", "gqa", 3, {{3, 2, 4, 12}, {3, 2, 4, 6}, {3, 2, 4, 6}}, {4, 2}, {-1}, 0},
        {"attention_gqa.gradcheck.mqa_B1T5H3K1D2", "gqa", 3, {{3, 1, 5, 6}, {3, 1, 5, 2}, {3, 1, 5, 2}}, {3, 1}, {-1}, 0},
        {"attention_gqa.gradcheck.mha_B1T4H2K2D3", "gqa", 3, {{3, 1, 4, 6}, {3, 1, 4, 6}, {3, 1, 4, 6}}, {2, 2}, {-1}, 0},
        {"attention_gqa.gradcheck.len_B2T4H4K2D2_len4-2", "gqa", 3, {{3, 2, 4, 8}, {3, 2, 4, 4}, {3, 2, 4, 4}}, {4, 2},
         {4, 2}, 0},
        {"attention_gqa.gradcheck.B1T65H2K1D4", "gqa", 3, {{3, 1, 65, 8}, {3, 1, 65, 4}, {3, 1, 65, 4}}, {2, 1}, {-1}, 0},
        /* one tensor as q, k and v (H = Hkv): the three gradients add up */
        {"attention_gqa.gradcheck.self_B1T4H2D3", "gqa", 1, {{3, 1, 4, 6}}, {2, 2}, {-1}, 1},
    };
    int i, k;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const tllama_case *g = &cases[i];
        char name[128];
        lt_ctx *ctx;
        lt_tensor *in[3];
        tllama_call c;
        double worst;
        snprintf(name, sizeof name, "ops.%s", g->name);
        if (!t_want(name)) continue;
        ctx = lt_ctx_create(300 + (uint64_t)i);
        memset(&c, 0, sizeof c);
        c.kind = g->kind;
        c.n_in = g->n_in;
        c.alias = g->alias;
        for (k = 0; k < 3; k++) c.args[k] = g->args[k];
        if (g->ids[0] >= 0) c.ids = g->ids;
        tops_inputs(ctx, g->n_in, &g->shape[0][0], 4, 1.0, in);
        worst = lt_gradcheck(ctx, tllama_gc_fn, in, g->n_in, &c, TOPS_GC_EPS);
        tops_gc_verdict(name, worst, ctx);
        lt_ctx_destroy(ctx);
    }
}

/* ---- Hkv = H: lt_attention_gqa on q, k, v is lt_attention on the fused qkv, to the bit ------------------ */
static void test_llama_ops_gqa_mha(void) {
    const int64_t B = 2, T = 70, C = 48, H = 4;
    int64_t s3[3], b, t, j;
    int32_t len[2] = {70, 33};
    lt_ctx *ctx;
    lt_tensor *qkv, *q, *k, *v, *y1, *y2;
    float *yq = NULL, *gq = NULL;
    int ok = 0, okg = 0, pass;
    if (!t_want("ops.attention_gqa.equals_attention")) return;
    for (pass = 0; pass < 2; pass++) {
        ctx = lt_ctx_create(5);
        s3[0] = B; s3[1] = T; s3[2] = 3 * C;
        qkv = lt_param(ctx, "qkv", 3, s3);
        s3[2] = C;
        q = lt_param(ctx, "q", 3, s3); k = lt_param(ctx, "k", 3, s3); v = lt_param(ctx, "v", 3, s3);
        lt_init_normal(ctx, qkv, 0.0, 1.0);
        for (b = 0; b < B * T; b++)
            for (j = 0; j < C; j++) {
                q->data[b * C + j] = qkv->data[b * 3 * C + j];
                k->data[b * C + j] = qkv->data[b * 3 * C + C + j];
                v->data[b * C + j] = qkv->data[b * 3 * C + 2 * C + j];
            }
        if (pass == 0) {
            y1 = lt_attention(ctx, qkv, (int)H, len);
            lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, y1, y1)));
            yq = (float *)malloc((size_t)(B * T * C) * sizeof(float));
            gq = (float *)malloc((size_t)(B * T * 3 * C) * sizeof(float));
            if (y1 && yq && gq) {
                memcpy(yq, y1->data, (size_t)(B * T * C) * sizeof(float));
                memcpy(gq, qkv->grad, (size_t)(B * T * 3 * C) * sizeof(float));
            }
        } else {
            y2 = lt_attention_gqa(ctx, q, k, v, (int)H, (int)H, len);
            lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, y2, y2)));
            ok = y2 && yq && memcmp(y2->data, yq, (size_t)(B * T * C) * sizeof(float)) == 0;
            okg = y2 && gq != NULL;
            for (t = 0; okg && t < B * T; t++)
                okg = !memcmp(q->grad + t * C, gq + t * 3 * C, (size_t)C * sizeof(float)) &&
                      !memcmp(k->grad + t * C, gq + t * 3 * C + C, (size_t)C * sizeof(float)) &&
                      !memcmp(v->grad + t * C, gq + t * 3 * C + 2 * C, (size_t)C * sizeof(float));
        }
        lt_ctx_destroy(ctx);
    }
    t_check(ok, "ops.attention_gqa.equals_attention.y", "y differs from lt_attention's on the fused qkv");
    t_check(okg, "ops.attention_gqa.equals_attention.grads", "dq, dk, dv differ from lt_attention's d qkv");
    free(yq); free(gq);
}

/* ---- threads: 1 and 4+ give the same bits (forward and every gradient) ------------------------------------ */
static float *tllama_threads_run(const tllama_case *g, int threads, int64_t *n_out) {
    lt_ctx *ctx = lt_ctx_create(11);
    lt_tensor *in[3], *y;
    tllama_call c;
    float *res = NULL;
    int k;
    lt_set_threads(threads);
    memset(&c, 0, sizeof c);
    c.kind = g->kind;
    for (k = 0; k < 3; k++) c.args[k] = g->args[k];
    if (g->ids[0] >= 0) c.ids = g->ids;
    tops_inputs(ctx, g->n_in, &g->shape[0][0], 4, 1.0, in);
    for (k = 0; k < g->n_in; k++) c.x[k] = in[k];
    y = tllama_apply(ctx, &c);
    if (y && lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, y, y))) == LT_OK) res = tops_collect(y, in, g->n_in, n_out);
    lt_ctx_destroy(ctx);
    return res;
}

static void test_llama_ops_threads(void) {
    static const tllama_case cases[] = {
        {"rmsnorm.threads.300x130", "rmsnorm", 2, {{2, 300, 130}, {1, 130}}, {1e-6}, {-1}, 0},
        {"rope.threads.B2T200H4D64", "rope", 1, {{3, 2, 200, 256}}, {4, 10000.0, 7}, {-1}, 0},
        {"silu.threads.40000", "silu", 1, {{1, 40000}}, {0}, {-1}, 0},
        {"swiglu.threads.300x170", "swiglu", 2, {{2, 300, 170}, {2, 300, 170}}, {0}, {-1}, 0},
        {"attention_gqa.threads.B2T130H6K2D32_len130-77", "gqa", 3, {{3, 2, 130, 192}, {3, 2, 130, 64}, {3, 2, 130, 64}},
         {6, 2}, {130, 77}, 0},
        {"attention_gqa.threads.mqa_B3T100H4K1D16", "gqa", 3, {{3, 3, 100, 64}, {3, 3, 100, 16}, {3, 3, 100, 16}}, {4, 1},
         {-1}, 0},
    };
    int i, base = lt_get_threads(), many = base > 4 ? base : 4;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const tllama_case *g = &cases[i];
        int64_t na = 0, nb = 0;
        float *a, *b;
        char name[128];
        snprintf(name, sizeof name, "ops.%s", g->name);
        if (!t_want(name)) continue;
        a = tllama_threads_run(g, 1, &na);
        b = tllama_threads_run(g, many, &nb);
        t_check(a && b && na == nb && memcmp(a, b, (size_t)na * sizeof(float)) == 0, name, "1 thread and %d threads differ",
                many);
        free(a); free(b);
    }
    lt_set_threads(base);
}

/* ---- errors: each refusal names the op and the values --------------------------------------------------- */
static void test_llama_ops_errors(void) {
    lt_ctx *ctx;
    lt_tensor *x, *w, *q, *k, *v;
    int32_t bad_len[2] = {3, 9};
    if (!t_want("ops/errors")) return;
#define TLL_FRESH() (ctx = lt_ctx_create(7), x = tops_p(ctx, "x", 3, 2, 5, 12), w = tops_p(ctx, "w", 1, 11, 1, 1))
    TLL_FRESH();
    tops_expect(ctx, "rmsnorm_weight", lt_rmsnorm(ctx, x, w, 1e-6f), LT_ERR_SHAPE, "lt_rmsnorm", "[2,5,12]", "[11]");
    lt_ctx_destroy(ctx);
    TLL_FRESH();
    tops_expect(ctx, "rmsnorm_eps", lt_rmsnorm(ctx, x, NULL, 0.0f), LT_ERR_ARG, "lt_rmsnorm", "eps is 0", NULL);
    lt_ctx_destroy(ctx);
    TLL_FRESH();
    tops_expect(ctx, "rmsnorm_null", lt_rmsnorm(ctx, NULL, NULL, 1e-6f), LT_ERR_ARG, "lt_rmsnorm", NULL, NULL);
    lt_ctx_destroy(ctx);
    TLL_FRESH();   /* 12 channels, 5 heads */
    tops_expect(ctx, "rope_heads", lt_rope(ctx, x, 5, 1e4f, 0), LT_ERR_ARG, "lt_rope", "[2,5,12]", "5 heads");
    lt_ctx_destroy(ctx);
    TLL_FRESH();   /* 4 heads of 3: odd */
    tops_expect(ctx, "rope_odd", lt_rope(ctx, x, 4, 1e4f, 0), LT_ERR_ARG, "lt_rope", "4 heads", "even");
    lt_ctx_destroy(ctx);
    TLL_FRESH();
    tops_expect(ctx, "rope_2d", lt_rope(ctx, w, 1, 1e4f, 0), LT_ERR_SHAPE, "lt_rope", "[11]", NULL);
    lt_ctx_destroy(ctx);
    TLL_FRESH();
    tops_expect(ctx, "rope_theta", lt_rope(ctx, x, 2, -1.0f, 0), LT_ERR_ARG, "lt_rope", "theta is -1", NULL);
    lt_ctx_destroy(ctx);
    TLL_FRESH();
    tops_expect(ctx, "rope_pos0", lt_rope(ctx, x, 2, 1e4f, -3), LT_ERR_ARG, "lt_rope", "pos0 is -3", NULL);
    lt_ctx_destroy(ctx);
    TLL_FRESH();
    tops_expect(ctx, "swiglu_shape", lt_swiglu(ctx, x, w), LT_ERR_SHAPE, "lt_swiglu", "[2,5,12]", "[11]");
    lt_ctx_destroy(ctx);
    TLL_FRESH();
    tops_expect(ctx, "silu_null", lt_silu(ctx, NULL), LT_ERR_ARG, "lt_silu", NULL, NULL);
    lt_ctx_destroy(ctx);
    /* gqa: q [2,5,12], k, v [2,5,6] are 4 heads of 3 with 2 kv heads */
#define TLL_QKV() (TLL_FRESH(), q = x, k = tops_p(ctx, "k", 3, 2, 5, 6), v = tops_p(ctx, "v", 3, 2, 5, 6))
    TLL_QKV();
    tops_expect(ctx, "attention_gqa_kv_divide", lt_attention_gqa(ctx, q, k, v, 4, 3, NULL), LT_ERR_ARG,
                "lt_attention_gqa", "4 heads and 3 kv heads", NULL);
    lt_ctx_destroy(ctx);
    TLL_QKV();   /* 2 kv heads of 3 channels = 6, but 6 heads of 2 need 4 */
    tops_expect(ctx, "attention_gqa_k_width", lt_attention_gqa(ctx, q, k, v, 6, 2, NULL), LT_ERR_ARG,
                "lt_attention_gqa", "[2,5,6]", "6 heads");
    lt_ctx_destroy(ctx);
    TLL_QKV();
    v = tops_p(ctx, "v2", 3, 2, 4, 6);
    tops_expect(ctx, "attention_gqa_v_shape", lt_attention_gqa(ctx, q, k, v, 4, 2, NULL), LT_ERR_SHAPE,
                "lt_attention_gqa", "[2,5,6]", "[2,4,6]");
    lt_ctx_destroy(ctx);
    TLL_QKV();
    tops_expect(ctx, "attention_gqa_lengths", lt_attention_gqa(ctx, q, k, v, 4, 2, bad_len), LT_ERR_ARG,
                "lt_attention_gqa", "lengths[1] is 9", "[0,5]");
    lt_ctx_destroy(ctx);
    TLL_QKV();
    tops_expect(ctx, "attention_gqa_null_v", lt_attention_gqa(ctx, q, k, NULL, 4, 2, NULL), LT_ERR_ARG,
                "lt_attention_gqa", "v is NULL", NULL);
    lt_ctx_destroy(ctx);
#undef TLL_QKV
#undef TLL_FRESH
}

static void test_llama_ops_all(void) {
    test_llama_ops_torch();
    test_llama_ops_gradcheck();
    test_llama_ops_gqa_mha();
    test_llama_ops_threads();
    test_llama_ops_errors();
}

/* test_ops.c - every op against PyTorch references, gradient checks, and every op's errors.
   References: tests/ref/ops.bin, written by tests/ref/gen_ops.py (a case KIND/SHAPES/sSEED holds
   inputs x0..x2, integer ids, scalar args, the output, a random R and the gradients g0..g2 of
   sum(out * R); the reference is float64 arithmetic on the float32 inputs, rounded once). */

/* Op names, longest first where one is a prefix of another: a case's KIND starts with one. */
static const char *const tops_names[] = {
    "cross_entropy_sum", "cross_entropy", "log_softmax", "softmax", "gelu_erf", "gelu", "relu", "tanh",
    "sigmoid", "layernorm", "embedding", "transpose", "attention", "mse_loss", "matmul", "linear", "conv1d",
    "scale", "mean", "sum", "add", "sub", "mul"};
#define TOPS_NOPS ((int)(sizeof tops_names / sizeof tops_names[0]))

static int tops_index(const char *kind) {
    int k;
    for (k = 0; k < TOPS_NOPS; k++) {
        size_t n = strlen(tops_names[k]);
        if (strncmp(kind, tops_names[k], n) == 0 && (kind[n] == 0 || kind[n] == '_' || kind[n] == '/')) return k;
    }
    return -1;
}

/* One call of an op: its inputs (NULL where absent), integer ids, scalar args. */
typedef struct {
    int op;                      /* index into tops_names */
    lt_tensor *x[3];
    const int32_t *ids;
    int64_t n0, n1;              /* ids shape (embedding) */
    double args[2];
    int n_in;                    /* how many of x the gradient check perturbs */
} tops_call;

static lt_tensor *tops_apply(lt_ctx *ctx, const tops_call *c) {
    const char *op = tops_names[c->op];
    lt_tensor *const *x = c->x;
    if (!strcmp(op, "add")) return lt_add(ctx, x[0], x[1]);
    if (!strcmp(op, "sub")) return lt_sub(ctx, x[0], x[1]);
    if (!strcmp(op, "mul")) return lt_mul(ctx, x[0], x[1]);
    if (!strcmp(op, "scale")) return lt_scale(ctx, x[0], (float)c->args[0]);
    if (!strcmp(op, "sum")) return lt_sum(ctx, x[0]);
    if (!strcmp(op, "mean")) return lt_mean(ctx, x[0]);
    if (!strcmp(op, "matmul")) return lt_matmul(ctx, x[0], x[1], (int)c->args[0]);
    if (!strcmp(op, "linear")) return lt_linear(ctx, x[0], x[1], x[2]);
    if (!strcmp(op, "conv1d")) return lt_conv1d(ctx, x[0], x[1], x[2]);
    if (!strcmp(op, "gelu")) return lt_gelu(ctx, x[0]);
    if (!strcmp(op, "gelu_erf")) return lt_gelu_erf(ctx, x[0]);
    if (!strcmp(op, "relu")) return lt_relu(ctx, x[0]);
    if (!strcmp(op, "tanh")) return lt_tanh(ctx, x[0]);
    if (!strcmp(op, "sigmoid")) return lt_sigmoid(ctx, x[0]);
    if (!strcmp(op, "softmax")) return lt_softmax(ctx, x[0]);
    if (!strcmp(op, "log_softmax")) return lt_log_softmax(ctx, x[0]);
    if (!strcmp(op, "layernorm")) return lt_layernorm(ctx, x[0], x[1], x[2], (float)c->args[0]);
    if (!strcmp(op, "embedding")) return lt_embedding(ctx, x[0], c->ids, c->n0, c->n1);
    if (!strcmp(op, "transpose")) return lt_transpose(ctx, x[0], (int)c->args[0], (int)c->args[1]);
    if (!strcmp(op, "attention")) return lt_attention(ctx, x[0], (int)c->args[0], c->ids);
    if (!strcmp(op, "cross_entropy")) return lt_cross_entropy(ctx, x[0], c->ids);
    if (!strcmp(op, "cross_entropy_sum")) return lt_cross_entropy_sum(ctx, x[0], c->ids, c->args[0]);
    if (!strcmp(op, "mse_loss")) return lt_mse_loss(ctx, x[0], x[1]);
    return NULL;
}

/* ---- against PyTorch ---------------------------------------------------------------------------- */
/* Worst error per op, for the summary: max |got-ref| and max |got-ref| / (1e-5 + 1e-4|ref|). */
typedef struct { double abs_err, ratio; int cases; } tops_stat;

/* t_close, except that infinities (log-softmax of a -inf logit) must match exactly. */
static int tops_close(const char *name, const float *got, const float *ref, int64_t n, double atol, double rtol,
                      tops_stat *st) {
    float *g = (float *)malloc((size_t)n * sizeof(float)), *r = (float *)malloc((size_t)n * sizeof(float));
    int64_t i;
    int ok;
    if (!g || !r) { free(g); free(r); return t_check(0, name, "out of memory"); }
    for (i = 0; i < n; i++) {
        g[i] = got[i]; r[i] = ref[i];
        if (isinf(ref[i]) && got[i] == ref[i]) g[i] = r[i] = 0.0f;
    }
    for (i = 0; i < n; i++) {
        double d = fabs((double)g[i] - (double)r[i]), q = d / (1e-5 + 1e-4 * fabs((double)r[i]));
        if (!(d <= st->abs_err)) st->abs_err = d;
        if (!(q <= st->ratio)) st->ratio = q;
    }
    ok = t_close(name, g, r, n, atol, rtol);
    free(g); free(r);
    return ok;
}

static int tops_same_shape(const lt_tensor *t, const t_arr *a) {
    int k;
    if (!t || t->ndim != a->ndim || t->n != a->n) return 0;
    for (k = 0; k < a->ndim; k++) if (t->shape[k] != a->shape[k]) return 0;
    return 1;
}

/* Tolerances: atol + rtol*|ref| with atol 1e-5, rtol 1e-4 for every op (values are O(1) by the
   generator's choice of input scales), except where noted. */
static void tops_tol(const char *kind, double *atol, double *rtol) {
    *atol = 1e-5; *rtol = 1e-4;
    (void)kind;
}

static void tops_run_case(t_ref *ref, const char *id, tops_stat *stats) {
    char key[160], name[200];
    const char *kind_end = strchr(id, '/');
    char kind[64];
    t_arr *xa[3], *ga[3], *ids, *args, *outa, *Ra;
    tops_call c;
    lt_ctx *ctx;
    lt_tensor *out, *loss;
    int32_t *ibuf = NULL;
    int k;
    double atol, rtol;
    size_t kl = kind_end ? (size_t)(kind_end - id) : strlen(id);
    if (kl >= sizeof kind) kl = sizeof kind - 1;
    memcpy(kind, id, kl); kind[kl] = 0;
    snprintf(name, sizeof name, "ops/%s", id);
    if (!t_want(name)) return;
    memset(&c, 0, sizeof c);
    c.op = tops_index(kind);
    if (c.op < 0) { t_check(0, name, "unknown op kind \"%s\" in ops.bin", kind); return; }
#define TOPS_GET(field) (snprintf(key, sizeof key, "%s.%s", id, field), t_ref_get(ref, key))
    for (k = 0; k < 3; k++) {
        char f[4] = {'x', (char)('0' + k), 0, 0};
        xa[k] = TOPS_GET(f);
        f[0] = 'g';
        ga[k] = TOPS_GET(f);
    }
    ids = TOPS_GET("ids"); args = TOPS_GET("args"); outa = TOPS_GET("out"); Ra = TOPS_GET("R");
#undef TOPS_GET
    if (!outa || !Ra || !xa[0]) { t_check(0, name, "ops.bin lacks out, R or x0"); return; }
    ctx = lt_ctx_create(1);
    for (k = 0; k < 3; k++) {
        if (!xa[k]) continue;
        snprintf(key, sizeof key, "x%d", k);
        c.x[k] = lt_param(ctx, key, xa[k]->ndim, xa[k]->shape);
        if (c.x[k]) memcpy(c.x[k]->data, xa[k]->data, (size_t)xa[k]->n * sizeof(float));
    }
    if (ids) {
        int64_t i;
        ibuf = (int32_t *)malloc((size_t)ids->n * sizeof(int32_t));
        for (i = 0; i < ids->n; i++) ibuf[i] = (int32_t)ids->data[i];
        c.ids = ibuf;
        c.n0 = ids->ndim == 2 ? ids->shape[0] : 1;
        c.n1 = ids->ndim == 2 ? ids->shape[1] : ids->n;
    }
    for (k = 0; args && k < args->n && k < 2; k++) c.args[k] = args->data[k];
    out = tops_apply(ctx, &c);
    snprintf(name, sizeof name, "ops/%s:shape", id);
    if (!out || lt_failed(ctx)) { t_check(0, name, "the op failed: %s", lt_error(ctx)); goto done; }
    if (!t_check(tops_same_shape(out, outa), name, "output shape %s, torch's has %lld elements",
                 lt_shape_str(out, key, sizeof key), (long long)outa->n))
        goto done;
    tops_tol(kind, &atol, &rtol);
    snprintf(name, sizeof name, "ops/%s:out", id);
    tops_close(name, out->data, outa->data, outa->n, atol, rtol, &stats[c.op]);
    loss = lt_sum(ctx, lt_mul(ctx, out, lt_tensor_from(ctx, Ra->data, Ra->ndim, Ra->shape)));
    snprintf(name, sizeof name, "ops/%s:backward", id);
    if (!t_check(lt_backward(ctx, loss) == LT_OK, name, "%s", lt_error(ctx))) goto done;
    for (k = 0; k < 3; k++) {
        if (!xa[k]) continue;
        snprintf(name, sizeof name, "ops/%s:grad%d", id, k);
        if (!ga[k] || ga[k]->n != c.x[k]->n) { t_check(0, name, "ops.bin lacks g%d", k); continue; }
        tops_close(name, c.x[k]->grad, ga[k]->data, ga[k]->n, atol, rtol, &stats[c.op]);
    }
    stats[c.op].cases++;
done:
    free(ibuf);
    lt_ctx_destroy(ctx);
}

static void test_ops_torch(void) {
    t_ref ref;
    char path[512];
    tops_stat stats[TOPS_NOPS];
    int i, k;
    snprintf(path, sizeof path, "%s/ops.bin", t_ref_dir());
    if (!t_ref_load(&ref, path) || ref.n == 0) {
        t_ref_free(&ref);
        t_skip("ops/torch", "tests/ref/ops.bin is missing or unreadable (make it: python3 tests/ref/gen_ops.py)");
        return;
    }
    memset(stats, 0, sizeof stats);
    for (i = 0; i < ref.n; i++) {
        char id[128];
        size_t n = strlen(ref.a[i].name);
        if (n < 4 || strcmp(ref.a[i].name + n - 4, ".out") != 0) continue;
        memcpy(id, ref.a[i].name, n - 4);
        id[n - 4] = 0;
        tops_run_case(&ref, id, stats);
    }
    for (k = 0; k < TOPS_NOPS; k++)
        if (stats[k].cases)
            printf("info ops/%s: %d cases, worst |err| %.2g, worst err/(1e-5+1e-4|ref|) %.3f\n", tops_names[k],
                   stats[k].cases, stats[k].abs_err, stats[k].ratio);
    t_ref_free(&ref);
}

/* ---- gradient checks ------------------------------------------------------------------------------ */
/* lt_gradcheck compares the analytic gradient of sum(out*R) with central differences of the
   float32 forward; error |a - n| / max(1, |a|, |n|).  Two effects bound what a float32 forward
   allows: rounding, ~ |out·R| · 6e-8 · sqrt(n) / eps, and truncation, eps²/6 · (third
   derivative).  Measured at eps = 1e-2 (gcc -O2, glibc): worst 4.6e-5 (layernorm), matmul,
   linear and attention 1e-5..3e-5, pointwise ops <= 2.2e-5, the rest < 1e-5 (LT_TEST_VERBOSE=1
   prints each).  eps 1e-3 is worse (rounding / eps grows 10x), 1e-1 too (truncation 100x).
   The tolerance 1e-3 leaves a 20x margin for other compilers and libms, while a wrong backward
   (a missed term, a wrong sign, a wrong transpose) gives errors of 1e-1 or more. */
#define TOPS_GC_EPS 1e-2
#define TOPS_GC_TOL 1e-3

static lt_tensor *tops_gc_fn(lt_ctx *ctx, lt_tensor **inputs, void *user) {
    tops_call c = *(const tops_call *)user;
    int k;
    for (k = 0; k < c.n_in; k++) c.x[k] = inputs[k];
    for (; k < 3; k++) c.x[k] = NULL;
    return tops_apply(ctx, &c);
}

typedef struct {
    const char *name;            /* test name */
    const char *op;
    int n_in;
    int64_t shape[3][5];         /* per input: ndim, dims */
    double args[2];
    int32_t ids[8];
    int64_t n0, n1;
    int has_ids;
} tops_gc_case;

static void test_ops_gradcheck(void) {
    static const tops_gc_case cases[] = {
        {"add/2x3x4+3x4", "add", 2, {{3, 2, 3, 4}, {2, 3, 4}}, {0}, {0}, 0, 0, 0},
        {"sub/3x5-5", "sub", 2, {{2, 3, 5}, {1, 5}}, {0}, {0}, 0, 0, 0},
        {"mul/2x3*2x3", "mul", 2, {{2, 2, 3}, {2, 2, 3}}, {0}, {0}, 0, 0, 0},
        {"scale/3x4", "scale", 1, {{2, 3, 4}}, {-1.5}, {0}, 0, 0, 0},
        {"sum/2x5", "sum", 1, {{2, 2, 5}}, {0}, {0}, 0, 0, 0},
        {"mean/7", "mean", 1, {{1, 7}}, {0}, {0}, 0, 0, 0},
        {"matmul/3x5x4", "matmul", 2, {{2, 3, 5}, {2, 5, 4}}, {0}, {0}, 0, 0, 0},
        {"matmul_ta/3x5x4", "matmul", 2, {{2, 5, 3}, {2, 5, 4}}, {LT_TRANS_A}, {0}, 0, 0, 0},
        {"matmul_tb/3x5x4", "matmul", 2, {{2, 3, 5}, {2, 4, 5}}, {LT_TRANS_B}, {0}, 0, 0, 0},
        {"matmul_tatb/3x5x4", "matmul", 2, {{2, 5, 3}, {2, 4, 5}}, {LT_TRANS_A | LT_TRANS_B}, {0}, 0, 0, 0},
        {"matmul_batched/2x3x4x2", "matmul", 2, {{3, 2, 3, 4}, {3, 2, 4, 2}}, {0}, {0}, 0, 0, 0},
        {"matmul_shared_tb/2x3x4x2", "matmul", 2, {{3, 2, 3, 4}, {2, 2, 4}}, {LT_TRANS_B}, {0}, 0, 0, 0},
        {"linear/2x3x4_5x4", "linear", 3, {{3, 2, 3, 4}, {2, 5, 4}, {1, 5}}, {0}, {0}, 0, 0, 0},
        {"linear_nobias/3x4_2x4", "linear", 2, {{2, 3, 4}, {2, 2, 4}}, {0}, {0}, 0, 0, 0},
        {"conv1d/3x4_4x5", "conv1d", 3, {{2, 3, 4}, {2, 4, 5}, {1, 5}}, {0}, {0}, 0, 0, 0},
        {"gelu/3x5", "gelu", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0},
        {"gelu_erf/3x5", "gelu_erf", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0},
        {"relu/3x5", "relu", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0},
        {"tanh/3x5", "tanh", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0},
        {"sigmoid/3x5", "sigmoid", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0},
        {"softmax/3x6", "softmax", 1, {{2, 3, 6}}, {0}, {0}, 0, 0, 0},
        {"log_softmax/3x6", "log_softmax", 1, {{2, 3, 6}}, {0}, {0}, 0, 0, 0},
        {"layernorm/3x6", "layernorm", 3, {{2, 3, 6}, {1, 6}, {1, 6}}, {1e-5}, {0}, 0, 0, 0},
        {"embedding/5x3_ids2x3", "embedding", 1, {{2, 5, 3}}, {0}, {4, 0, 4, 2, 1, 4}, 2, 3, 1},
        {"transpose/2x3x4_d02", "transpose", 1, {{3, 2, 3, 4}}, {0, 2}, {0}, 0, 0, 0},
        {"attention/B2T4C6H2", "attention", 1, {{3, 2, 4, 18}}, {2}, {0}, 0, 0, 0},
        {"attention_len/B2T4C6H2_len4-2", "attention", 1, {{3, 2, 4, 18}}, {2}, {4, 2}, 1, 2, 1},
        {"cross_entropy/4x5", "cross_entropy", 1, {{2, 4, 5}}, {0}, {1, -1, 4, 0}, 1, 4, 1},
        {"cross_entropy_sum/4x5_d3", "cross_entropy_sum", 1, {{2, 4, 5}}, {3.0}, {1, -1, 4, 0}, 1, 4, 1},
        {"mse_loss/3x4_12", "mse_loss", 2, {{2, 3, 4}, {1, 12}}, {0}, {0}, 0, 0, 0},
    };
    int i, k;
    double worst_all = 0;
    const char *worst_name = "";
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const tops_gc_case *g = &cases[i];
        char name[128];
        lt_ctx *ctx;
        lt_tensor *in[3];
        tops_call c;
        double worst;
        snprintf(name, sizeof name, "ops/gradcheck/%s", g->name);
        if (!t_want(name)) continue;
        ctx = lt_ctx_create(100 + (uint64_t)i);
        memset(&c, 0, sizeof c);
        c.op = tops_index(g->op);
        c.n_in = g->n_in;
        c.args[0] = g->args[0]; c.args[1] = g->args[1];
        if (g->has_ids) { c.ids = g->ids; c.n0 = g->n0; c.n1 = g->n1; }
        for (k = 0; k < g->n_in; k++) {
            char pn[8];
            int64_t j;
            snprintf(pn, sizeof pn, "x%d", k);
            in[k] = lt_param(ctx, pn, (int)g->shape[k][0], &g->shape[k][1]);
            lt_init_normal(ctx, in[k], 0.0, 1.0);
            /* keep relu's inputs away from its kink, where a difference of step eps straddles it */
            if (in[k] && !strcmp(g->op, "relu"))
                for (j = 0; j < in[k]->n; j++)
                    if (fabsf(in[k]->data[j]) < 0.1f) in[k]->data[j] = 0.5f;
        }
        worst = lt_gradcheck(ctx, tops_gc_fn, in, g->n_in, &c, TOPS_GC_EPS);
        t_check(worst <= TOPS_GC_TOL, name, "worst error %.3g (tol %g at eps %g): %s", worst, TOPS_GC_TOL,
                TOPS_GC_EPS, lt_error(ctx));
        if (getenv("LT_TEST_VERBOSE")) printf("info %s: %.3g\n", name, worst);
        if (!(worst <= worst_all)) { worst_all = worst; worst_name = g->name; }
        lt_ctx_destroy(ctx);
    }
    printf("info ops/gradcheck: worst error %.3g (%s), eps %g, tol %g\n", worst_all, worst_name, TOPS_GC_EPS,
           TOPS_GC_TOL);
}

static void test_ops_all(void) {
    test_ops_torch();
    test_ops_gradcheck();
}

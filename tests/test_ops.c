/* test_ops.c - every op against PyTorch references, gradient checks, and every op's errors.
   References: tests/ref/ops.bin, written by tests/ref/gen_ops.py (a case KIND/SHAPES/sSEED holds
   inputs x0..x2, integer ids, scalar args, the output, a random R and the gradients g0..g2 of
   sum(out * R); the reference is float64 arithmetic on the float32 inputs, rounded once). */

/* Op names, longest first where one is a prefix of another: a case's KIND starts with one. */
static const char *const tops_names[] = {
    "cross_entropy_sum", "cross_entropy", "log_softmax", "softmax", "gelu_erf", "gelu", "relu", "tanh",
    "sigmoid", "layernorm", "embedding", "transpose", "attention_of_op", "attention", "mse_loss", "matmul", "linear",
    "conv1d", "scale", "mean", "sum", "add", "sub", "mul"};
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
    int alias;                   /* gradient check: x[1] is x[0] (a tensor used twice by one op) */
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
    /* qkv an op's output, as in a model: its gradient buffer starts without values (lt__grad_w) */
    if (!strcmp(op, "attention_of_op")) return lt_attention(ctx, lt_scale(ctx, x[0], 1.5f), (int)c->args[0], c->ids);
    if (!strcmp(op, "cross_entropy")) return lt_cross_entropy(ctx, x[0], c->ids);
    if (!strcmp(op, "cross_entropy_sum")) return lt_cross_entropy_sum(ctx, x[0], c->ids, c->args[0]);
    if (!strcmp(op, "mse_loss")) return lt_mse_loss(ctx, x[0], x[1]);
    return NULL;
}

/* ---- against PyTorch ---------------------------------------------------------------------------- */
/* One tolerance for every op, output and gradient: |got - ref| <= 1e-5 + 1e-4·|ref|.  The
   generator keeps values O(1) (input scales, K <= 300), so float32 rounding stays well inside it:
   the run prints each op's worst err/tol ("info ops/..."), at most ~0.2 (matmul, K = 300). */
#define TOPS_ATOL 1e-5
#define TOPS_RTOL 1e-4

/* Worst error per op, for the summary: max |got-ref| and max |got-ref| / (1e-5 + 1e-4|ref|). */
typedef struct { double abs_err, ratio; int cases; } tops_stat;

/* t_close at the tolerance below, except that infinities (log-softmax of a -inf logit) must
   match exactly. */
static int tops_close(const char *name, const float *got, const float *ref, int64_t n, tops_stat *st) {
    float *g = (float *)malloc((size_t)n * sizeof(float)), *r = (float *)malloc((size_t)n * sizeof(float));
    int64_t i;
    int ok;
    if (!g || !r) { free(g); free(r); return t_check(0, name, "out of memory"); }
    for (i = 0; i < n; i++) {
        g[i] = got[i]; r[i] = ref[i];
        if (isinf(ref[i]) && got[i] == ref[i]) g[i] = r[i] = 0.0f;
    }
    for (i = 0; i < n; i++) {
        double d = fabs((double)g[i] - (double)r[i]), q = d / (TOPS_ATOL + TOPS_RTOL * fabs((double)r[i]));
        if (!(d <= st->abs_err)) st->abs_err = d;
        if (!(q <= st->ratio)) st->ratio = q;
    }
    ok = t_close(name, g, r, n, TOPS_ATOL, TOPS_RTOL);
    free(g); free(r);
    return ok;
}

static int tops_same_shape(const lt_tensor *t, const t_arr *a) {
    int k;
    if (!t || t->ndim != a->ndim || t->n != a->n) return 0;
    for (k = 0; k < a->ndim; k++) if (t->shape[k] != a->shape[k]) return 0;
    return 1;
}


/* What a reference case calls: the op on x (NULL where the case has no such input), with the
   case's ids as int32 (NULL: none) and its records (ids' shape, args). */
typedef lt_tensor *(*tops_case_fn)(lt_ctx *ctx, lt_tensor *const x[3], const int32_t *ids, const t_case *c,
                                   const void *user);

/* Case id of file (ops.bin, llama_ops.bin) as the tests NAME:shape, NAME:out, NAME:backward and
   NAME:gradK: its inputs become parameters x0..x2, fn applies the op, the output is compared, then
   each input's gradient of sum(out * R); st gathers the worst errors. */
static void tops_ref_case(t_ref *ref, const char *id, const char *file, const char *name, tops_case_fn fn,
                          const void *user, tops_stat *st) {
    char key[160], test[200];
    t_case tc;
    lt_ctx *ctx;
    lt_tensor *x[3] = {NULL, NULL, NULL}, *out, *loss;
    int32_t *ibuf = NULL;
    int k;
    if (!t_case_get(ref, id, &tc)) { t_check(0, name, "%s lacks out, R or x0", file); return; }
    ctx = lt_ctx_create(1);
    for (k = 0; k < 3; k++) {
        if (!tc.x[k]) continue;
        snprintf(key, sizeof key, "x%d", k);
        x[k] = lt_param(ctx, key, tc.x[k]->ndim, tc.x[k]->shape);
        if (x[k]) memcpy(x[k]->data, tc.x[k]->data, (size_t)tc.x[k]->n * sizeof(float));
    }
    if (tc.ids) {
        int64_t i;
        ibuf = (int32_t *)malloc((size_t)tc.ids->n * sizeof(int32_t));
        for (i = 0; i < tc.ids->n; i++) ibuf[i] = (int32_t)tc.ids->data[i];
    }
    out = fn(ctx, x, ibuf, &tc, user);
    snprintf(test, sizeof test, "%s:shape", name);
    if (!out || lt_failed(ctx)) { t_check(0, test, "the op failed: %s", lt_error(ctx)); goto done; }
    if (!t_check(tops_same_shape(out, tc.out), test, "output shape %s, torch's has %lld elements",
                 lt_shape_str(out, key, sizeof key), (long long)tc.out->n))
        goto done;
    snprintf(test, sizeof test, "%s:out", name);
    tops_close(test, out->data, tc.out->data, tc.out->n, st);
    loss = lt_sum(ctx, lt_mul(ctx, out, lt_tensor_from(ctx, tc.R->data, tc.R->ndim, tc.R->shape)));
    snprintf(test, sizeof test, "%s:backward", name);
    if (!t_check(lt_backward(ctx, loss) == LT_OK, test, "%s", lt_error(ctx))) goto done;
    for (k = 0; k < 3; k++) {
        if (!tc.x[k]) continue;
        snprintf(test, sizeof test, "%s:grad%d", name, k);
        if (!tc.g[k] || tc.g[k]->n != x[k]->n) { t_check(0, test, "%s lacks g%d", file, k); continue; }
        tops_close(test, x[k]->grad, tc.g[k]->data, tc.g[k]->n, st);
    }
    st->cases++;
done:
    free(ibuf);
    lt_ctx_destroy(ctx);
}

/* An ops.bin case: user is the op's index. */
static lt_tensor *tops_case_apply(lt_ctx *ctx, lt_tensor *const x[3], const int32_t *ids, const t_case *tc,
                                  const void *user) {
    tops_call c;
    int k;
    memset(&c, 0, sizeof c);
    c.op = *(const int *)user;
    for (k = 0; k < 3; k++) c.x[k] = x[k];
    if (tc->ids) {
        c.ids = ids;
        c.n0 = tc->ids->ndim == 2 ? tc->ids->shape[0] : 1;
        c.n1 = tc->ids->ndim == 2 ? tc->ids->shape[1] : tc->ids->n;
    }
    for (k = 0; tc->args && k < tc->args->n && k < 2; k++) c.args[k] = tc->args->data[k];
    return tops_apply(ctx, &c);
}

static void test_ops_torch(void) {
    t_ref ref;
    tops_stat stats[TOPS_NOPS];
    int i, k;
    if (!t_ref_open(&ref, "ops", "ops/torch")) return;
    memset(stats, 0, sizeof stats);
    for (i = 0; i < ref.n; i++) {
        char id[128], kind[64], name[200];
        const char *kind_end;
        size_t kl;
        int op;
        if (!t_case_id(&ref.a[i], id, sizeof id)) continue;
        snprintf(name, sizeof name, "ops/%s", id);
        if (!t_want(name)) continue;
        kind_end = strchr(id, '/');
        kl = kind_end ? (size_t)(kind_end - id) : strlen(id);
        if (kl >= sizeof kind) kl = sizeof kind - 1;
        memcpy(kind, id, kl); kind[kl] = 0;
        op = tops_index(kind);
        if (op < 0) { t_check(0, name, "unknown op kind \"%s\" in ops.bin", kind); continue; }
        tops_ref_case(&ref, id, "ops.bin", name, tops_case_apply, &op, &stats[op]);
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
    if (c.alias) c.x[1] = c.x[0];
    return tops_apply(ctx, &c);
}

/* Parameters x0..x(n-1) into in[], shaped by rows (row k at rows + k*stride: ndim, dims), their
   values drawn from normal(0, sd); test_llama_ops.c's checks use it too. */
static void tops_inputs(lt_ctx *ctx, int n, const int64_t *rows, int stride, double sd, lt_tensor **in) {
    int k;
    for (k = 0; k < n; k++) {
        const int64_t *row = rows + (size_t)k * (size_t)stride;
        char pn[16];
        snprintf(pn, sizeof pn, "x%d", k);
        in[k] = lt_param(ctx, pn, (int)row[0], row + 1);
        lt_init_normal(ctx, in[k], 0.0, sd);
    }
}
/* The test name passes when lt_gradcheck's worst error is within TOPS_GC_TOL (LT_TEST_VERBOSE=1
   prints it). */
static void tops_gc_verdict(const char *name, double worst, lt_ctx *ctx) {
    t_check(worst <= TOPS_GC_TOL, name, "worst error %.3g (tol %g at eps %g): %s", worst, TOPS_GC_TOL, TOPS_GC_EPS,
            lt_error(ctx));
    if (getenv("LT_TEST_VERBOSE")) printf("info %s: %.3g\n", name, worst);
}
/* out's values, then each input's gradient, in one malloc'd array of *n floats (the thread checks). */
static float *tops_collect(const lt_tensor *out, lt_tensor *const *in, int n_in, int64_t *n) {
    float *res, *p;
    int k;
    *n = out->n;
    for (k = 0; k < n_in; k++) *n += in[k]->n;
    p = res = (float *)malloc((size_t)*n * sizeof(float));
    if (!res) return NULL;
    memcpy(p, out->data, (size_t)out->n * sizeof(float));
    p += out->n;
    for (k = 0; k < n_in; k++) { memcpy(p, in[k]->grad, (size_t)in[k]->n * sizeof(float)); p += in[k]->n; }
    return res;
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
    int alias;
} tops_gc_case;

static void test_ops_gradcheck(void) {
    static const tops_gc_case cases[] = {
        {"add/2x3x4+3x4", "add", 2, {{3, 2, 3, 4}, {2, 3, 4}}, {0}, {0}, 0, 0, 0, 0},
        {"sub/3x5-5", "sub", 2, {{2, 3, 5}, {1, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"mul/2x3*2x3", "mul", 2, {{2, 2, 3}, {2, 2, 3}}, {0}, {0}, 0, 0, 0, 0},
        {"scale/3x4", "scale", 1, {{2, 3, 4}}, {-1.5}, {0}, 0, 0, 0, 0},
        {"sum/2x5", "sum", 1, {{2, 2, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"mean/7", "mean", 1, {{1, 7}}, {0}, {0}, 0, 0, 0, 0},
        {"matmul/3x5x4", "matmul", 2, {{2, 3, 5}, {2, 5, 4}}, {0}, {0}, 0, 0, 0, 0},
        {"matmul_ta/3x5x4", "matmul", 2, {{2, 5, 3}, {2, 5, 4}}, {LT_TRANS_A}, {0}, 0, 0, 0, 0},
        {"matmul_tb/3x5x4", "matmul", 2, {{2, 3, 5}, {2, 4, 5}}, {LT_TRANS_B}, {0}, 0, 0, 0, 0},
        {"matmul_tatb/3x5x4", "matmul", 2, {{2, 5, 3}, {2, 4, 5}}, {LT_TRANS_A | LT_TRANS_B}, {0}, 0, 0, 0, 0},
        {"matmul_batched/2x3x4x2", "matmul", 2, {{3, 2, 3, 4}, {3, 2, 4, 2}}, {0}, {0}, 0, 0, 0, 0},
        {"matmul_shared_tb/2x3x4x2", "matmul", 2, {{3, 2, 3, 4}, {2, 2, 4}}, {LT_TRANS_B}, {0}, 0, 0, 0, 0},
        {"linear/2x3x4_5x4", "linear", 3, {{3, 2, 3, 4}, {2, 5, 4}, {1, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"linear_nobias/3x4_2x4", "linear", 2, {{2, 3, 4}, {2, 2, 4}}, {0}, {0}, 0, 0, 0, 0},
        {"conv1d/3x4_4x5", "conv1d", 3, {{2, 3, 4}, {2, 4, 5}, {1, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"gelu/3x5", "gelu", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"gelu_erf/3x5", "gelu_erf", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"relu/3x5", "relu", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"tanh/3x5", "tanh", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"sigmoid/3x5", "sigmoid", 1, {{2, 3, 5}}, {0}, {0}, 0, 0, 0, 0},
        {"softmax/3x6", "softmax", 1, {{2, 3, 6}}, {0}, {0}, 0, 0, 0, 0},
        {"log_softmax/3x6", "log_softmax", 1, {{2, 3, 6}}, {0}, {0}, 0, 0, 0, 0},
        {"layernorm/3x6", "layernorm", 3, {{2, 3, 6}, {1, 6}, {1, 6}}, {1e-5}, {0}, 0, 0, 0, 0},
        {"embedding/5x3_ids2x3", "embedding", 1, {{2, 5, 3}}, {0}, {4, 0, 4, 2, 1, 4}, 2, 3, 1, 0},
        {"transpose/2x3x4_d02", "transpose", 1, {{3, 2, 3, 4}}, {0, 2}, {0}, 0, 0, 0, 0},
        {"attention/B2T4C6H2", "attention", 1, {{3, 2, 4, 18}}, {2}, {0}, 0, 0, 0, 0},
        {"attention_len/B2T4C6H2_len4-2", "attention", 1, {{3, 2, 4, 18}}, {2}, {4, 2}, 1, 2, 1, 0},
        {"attention/B1T65C4H2", "attention", 1, {{3, 1, 65, 12}}, {2}, {0}, 0, 0, 0, 0},
        {"attention_len/B3T65C2H1_len65-0-64", "attention", 1, {{3, 3, 65, 6}}, {1}, {65, 0, 64}, 1, 3, 1, 0},
        /* T > 128: several query blocks per key block in the backward (dk, dv written, then added) */
        {"attention_len/B2T200C2H1_len200-150", "attention", 1, {{3, 2, 200, 6}}, {1}, {200, 150}, 1, 2, 1, 0},
        {"attention_of_op/B2T200C2H1_len200-150", "attention_of_op", 1, {{3, 2, 200, 6}}, {1}, {200, 150}, 1, 2, 1, 0},
        {"cross_entropy/4x5", "cross_entropy", 1, {{2, 4, 5}}, {0}, {1, -1, 4, 0}, 1, 4, 1, 0},
        {"cross_entropy_sum/4x5_d3", "cross_entropy_sum", 1, {{2, 4, 5}}, {3.0}, {1, -1, 4, 0}, 1, 4, 1, 0},
        {"mse_loss/3x4_12", "mse_loss", 2, {{2, 3, 4}, {1, 12}}, {0}, {0}, 0, 0, 0, 0},
        /* one tensor as both operands: both gradient contributions must add up */
        {"mul_self/3x4", "mul", 1, {{2, 3, 4}}, {0}, {0}, 0, 0, 0, 1},
        {"add_self/5", "add", 1, {{1, 5}}, {0}, {0}, 0, 0, 0, 1},
        {"matmul_tb_self/3x4", "matmul", 1, {{2, 3, 4}}, {LT_TRANS_B}, {0}, 0, 0, 0, 1},
        {"matmul_ta_self/3x4", "matmul", 1, {{2, 3, 4}}, {LT_TRANS_A}, {0}, 0, 0, 0, 1},
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
        c.alias = g->alias;
        c.args[0] = g->args[0]; c.args[1] = g->args[1];
        if (g->has_ids) { c.ids = g->ids; c.n0 = g->n0; c.n1 = g->n1; }
        tops_inputs(ctx, g->n_in, &g->shape[0][0], 5, 1.0, in);
        for (k = 0; k < g->n_in; k++) {
            int64_t j;
            /* keep relu's inputs away from its kink, where a difference of step eps straddles it */
            if (in[k] && !strcmp(g->op, "relu"))
                for (j = 0; j < in[k]->n; j++)
                    if (fabsf(in[k]->data[j]) < 0.1f) in[k]->data[j] = 0.5f;
        }
        worst = lt_gradcheck(ctx, tops_gc_fn, in, g->n_in, &c, TOPS_GC_EPS);
        tops_gc_verdict(name, worst, ctx);
        if (!(worst <= worst_all)) { worst_all = worst; worst_name = g->name; }
        lt_ctx_destroy(ctx);
    }
    if (*worst_name) printf("info ops/gradcheck: worst error %.3g (%s), eps %g, tol %g\n", worst_all, worst_name, TOPS_GC_EPS,
           TOPS_GC_TOL);
}

/* ---- errors: every op refuses bad shapes and arguments with a message naming it --------------------- */
/* got must be NULL with status want, the message must contain each of s[] (the op's name and the
   shapes), and the error must stick: later ops return NULL and lt_backward returns the status. */
static void tops_expect(lt_ctx *ctx, const char *test, const lt_tensor *got, lt_status want, const char *s0,
                        const char *s1, const char *s2) {
    char name[128];
    const char *msg = lt_error(ctx), *need[3];
    int k, ok = got == NULL && lt_status_of(ctx) == want;
    lt_tensor *p;
    need[0] = s0; need[1] = s1; need[2] = s2;
    for (k = 0; k < 3; k++) if (need[k] && !strstr(msg, need[k])) ok = 0;
    snprintf(name, sizeof name, "ops/errors/%s", test);
    t_check(ok, name, "got %s, status \"%s\" (want \"%s\"), message \"%s\" (want %s, %s, %s)", got ? "a tensor" : "NULL",
            lt_status_name(lt_status_of(ctx)), lt_status_name(want), msg, s0, s1 ? s1 : "-", s2 ? s2 : "-");
    /* the first error sticks: nothing runs, nothing crashes, the message stays */
    p = lt_ctx_params(ctx).n ? lt_ctx_params(ctx).p[0] : NULL;
    snprintf(name, sizeof name, "ops/errors/%s/sticks", test);
    t_check(lt_add(ctx, p, p) == NULL && lt_matmul(ctx, p, p, 0) == NULL && lt_gelu(ctx, p) == NULL &&
                lt_backward(ctx, p) == want && lt_status_of(ctx) == want && strcmp(lt_error(ctx), msg) == 0,
            name, "after the error: status \"%s\", message \"%s\"", lt_status_name(lt_status_of(ctx)), lt_error(ctx));
}

static lt_tensor *tops_p(lt_ctx *ctx, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2) {
    int64_t s[3];
    s[0] = d0; s[1] = d1; s[2] = d2;
    return lt_param(ctx, name, ndim, s);
}

static void test_ops_errors(void) {
    /* each case: a fresh context; a = [4,64], b = [32,16] unless the case says otherwise */
    static const char *const binary[] = {"lt_add", "lt_sub", "lt_mul"};
    lt_ctx *ctx;
    lt_tensor *a, *b, *c;
    int32_t ids[4] = {0, 1, 2, 3};
    int k;
#define TOPS_FRESH() (ctx = lt_ctx_create(7), a = tops_p(ctx, "a", 2, 4, 64, 1), b = tops_p(ctx, "b", 2, 32, 16, 1))
    if (!t_want("ops/errors")) return;
    for (k = 0; k < 3; k++) {
        char test[64];
        TOPS_FRESH();
        snprintf(test, sizeof test, "%s_shape", binary[k] + 3);
        c = k == 0 ? lt_add(ctx, a, b) : k == 1 ? lt_sub(ctx, a, b) : lt_mul(ctx, a, b);
        tops_expect(ctx, test, c, LT_ERR_SHAPE, binary[k], "[4,64]", "[32,16]");
        lt_ctx_destroy(ctx);
        /* b longer than a: [64] op [4,64] is not a broadcast this API makes */
        TOPS_FRESH();
        c = tops_p(ctx, "c", 1, 64, 1, 1);
        snprintf(test, sizeof test, "%s_b_bigger", binary[k] + 3);
        c = k == 0 ? lt_add(ctx, c, a) : k == 1 ? lt_sub(ctx, c, a) : lt_mul(ctx, c, a);
        tops_expect(ctx, test, c, LT_ERR_SHAPE, binary[k], "[64]", "[4,64]");
        lt_ctx_destroy(ctx);
        TOPS_FRESH();
        snprintf(test, sizeof test, "%s_null", binary[k] + 3);
        c = k == 0 ? lt_add(ctx, a, NULL) : k == 1 ? lt_sub(ctx, NULL, a) : lt_mul(ctx, a, NULL);
        tops_expect(ctx, test, c, LT_ERR_ARG, binary[k], NULL, NULL);
        lt_ctx_destroy(ctx);
    }
    TOPS_FRESH();
    tops_expect(ctx, "matmul_shape", lt_matmul(ctx, a, b, 0), LT_ERR_SHAPE, "lt_matmul", "[4,64]", "[32,16]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();  /* a [4,64] with b [32,16] transposed: 64 vs 16 */
    tops_expect(ctx, "matmul_tb_shape", lt_matmul(ctx, a, b, LT_TRANS_B), LT_ERR_SHAPE, "lt_matmul", "[4,64]",
                "[32,16]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    a = tops_p(ctx, "a3", 3, 2, 3, 4); b = tops_p(ctx, "b3", 3, 3, 4, 5);
    tops_expect(ctx, "matmul_batch", lt_matmul(ctx, a, b, 0), LT_ERR_SHAPE, "lt_matmul", "[2,3,4]", "[3,4,5]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();  /* a 2-D, b 3-D: only b may be shared */
    a = tops_p(ctx, "a3", 2, 3, 4, 1); b = tops_p(ctx, "b3", 3, 2, 4, 5);
    tops_expect(ctx, "matmul_a2d_b3d", lt_matmul(ctx, a, b, 0), LT_ERR_SHAPE, "lt_matmul", "[3,4]", "[2,4,5]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    c = tops_p(ctx, "c", 1, 64, 1, 1);
    tops_expect(ctx, "matmul_1d", lt_matmul(ctx, c, b, 0), LT_ERR_SHAPE, "lt_matmul", "[64]", "[32,16]");
    lt_ctx_destroy(ctx);

    TOPS_FRESH();
    tops_expect(ctx, "linear_shape", lt_linear(ctx, a, b, NULL), LT_ERR_SHAPE, "lt_linear", "[4,64]", "[32,16]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    b = tops_p(ctx, "w", 2, 16, 64, 1); c = tops_p(ctx, "bias", 1, 15, 1, 1);
    tops_expect(ctx, "linear_bias", lt_linear(ctx, a, b, c), LT_ERR_SHAPE, "lt_linear", "[16,64]", "[15]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();  /* a Conv1D weight [in,out] handed to linear */
    b = tops_p(ctx, "w", 2, 64, 16, 1);
    tops_expect(ctx, "linear_layout", lt_linear(ctx, a, b, NULL), LT_ERR_SHAPE, "lt_linear", "[4,64]", "[64,16]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    tops_expect(ctx, "conv1d_shape", lt_conv1d(ctx, a, b, NULL), LT_ERR_SHAPE, "lt_conv1d", "[4,64]", "[32,16]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    b = tops_p(ctx, "w", 2, 64, 16, 1); c = tops_p(ctx, "bias", 1, 64, 1, 1);
    tops_expect(ctx, "conv1d_bias", lt_conv1d(ctx, a, b, c), LT_ERR_SHAPE, "lt_conv1d", "[64,16]", "[64]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    c = tops_p(ctx, "w1", 3, 2, 64, 16);
    tops_expect(ctx, "conv1d_3d_w", lt_conv1d(ctx, a, c, NULL), LT_ERR_SHAPE, "lt_conv1d", "[4,64]", "[2,64,16]");
    lt_ctx_destroy(ctx);

    TOPS_FRESH();
    c = tops_p(ctx, "w1", 1, 32, 1, 1);
    tops_expect(ctx, "layernorm_weight", lt_layernorm(ctx, a, c, NULL, 1e-5f), LT_ERR_SHAPE, "lt_layernorm",
                "[4,64]", "[32]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    c = tops_p(ctx, "w1", 1, 64, 1, 1); b = tops_p(ctx, "b1", 1, 63, 1, 1);
    tops_expect(ctx, "layernorm_bias", lt_layernorm(ctx, a, c, b, 1e-5f), LT_ERR_SHAPE, "lt_layernorm", "[4,64]",
                "[63]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    tops_expect(ctx, "layernorm_eps", lt_layernorm(ctx, a, NULL, NULL, 0.0f), LT_ERR_ARG, "lt_layernorm", "eps",
                NULL);
    lt_ctx_destroy(ctx);

    TOPS_FRESH();
    c = tops_p(ctx, "w3", 3, 2, 3, 4);
    tops_expect(ctx, "embedding_3d", lt_embedding(ctx, c, ids, 1, 4), LT_ERR_SHAPE, "lt_embedding", "[2,3,4]",
                NULL);
    lt_ctx_destroy(ctx);
    TOPS_FRESH();  /* ids[3] = 3 with V = 3 */
    c = tops_p(ctx, "w3", 2, 3, 5, 1);
    tops_expect(ctx, "embedding_id_range", lt_embedding(ctx, c, ids, 2, 2), LT_ERR_ARG, "lt_embedding", "[3,5]",
                "ids[3]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    tops_expect(ctx, "embedding_null_ids", lt_embedding(ctx, a, NULL, 1, 4), LT_ERR_ARG, "lt_embedding", NULL,
                NULL);
    lt_ctx_destroy(ctx);

    TOPS_FRESH();
    tops_expect(ctx, "transpose_dim", lt_transpose(ctx, a, 0, 2), LT_ERR_ARG, "lt_transpose", "[4,64]", NULL);
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    tops_expect(ctx, "transpose_neg", lt_transpose(ctx, a, -1, 0), LT_ERR_ARG, "lt_transpose", "[4,64]", NULL);
    lt_ctx_destroy(ctx);

    TOPS_FRESH();
    c = tops_p(ctx, "qkv", 3, 2, 5, 7);
    tops_expect(ctx, "attention_3c", lt_attention(ctx, c, 1, NULL), LT_ERR_SHAPE, "lt_attention", "[2,5,7]", NULL);
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    tops_expect(ctx, "attention_2d", lt_attention(ctx, a, 1, NULL), LT_ERR_SHAPE, "lt_attention", "[4,64]", NULL);
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    c = tops_p(ctx, "qkv", 3, 2, 5, 12);
    tops_expect(ctx, "attention_heads", lt_attention(ctx, c, 3, NULL), LT_ERR_ARG, "lt_attention", "[2,5,12]",
                "3 heads");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    {
        int32_t len[2] = {5, 6};
        c = tops_p(ctx, "qkv", 3, 2, 5, 12);
        tops_expect(ctx, "attention_lengths", lt_attention(ctx, c, 2, len), LT_ERR_ARG, "lt_attention",
                    "lengths[1]", NULL);
    }
    lt_ctx_destroy(ctx);

    TOPS_FRESH();
    {
        int32_t t[4] = {0, 64, -1, 3};
        tops_expect(ctx, "cross_entropy_target", lt_cross_entropy(ctx, a, t), LT_ERR_ARG, "lt_cross_entropy",
                    "[4,64]", "targets[1]");
    }
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    {
        int32_t t[4] = {0, -2, -1, 3};
        tops_expect(ctx, "cross_entropy_sum_target", lt_cross_entropy_sum(ctx, a, t, 2.0), LT_ERR_ARG,
                    "lt_cross_entropy_sum", "[4,64]", "targets[1]");
    }
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    tops_expect(ctx, "cross_entropy_null", lt_cross_entropy(ctx, a, NULL), LT_ERR_ARG, "lt_cross_entropy",
                "targets", NULL);
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    tops_expect(ctx, "cross_entropy_sum_denom", lt_cross_entropy_sum(ctx, a, ids, 0.0), LT_ERR_ARG,
                "lt_cross_entropy_sum", "denom", NULL);
    lt_ctx_destroy(ctx);

    TOPS_FRESH();
    tops_expect(ctx, "mse_loss_shape", lt_mse_loss(ctx, a, b), LT_ERR_SHAPE, "lt_mse_loss", "[4,64]", "[32,16]");
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    {
        int64_t s[2] = {3, 7};
        tops_expect(ctx, "reshape_count", lt_reshape(ctx, a, 2, s), LT_ERR_SHAPE, "lt_reshape", "[4,64]", NULL);
    }
    lt_ctx_destroy(ctx);
    TOPS_FRESH();
    tops_expect(ctx, "dropout_p", lt_dropout(ctx, a, 1.5f), LT_ERR_ARG, "lt_dropout", "1.5", NULL);
    lt_ctx_destroy(ctx);

    /* ops with no shape constraint: a NULL input is refused by name */
    {
        static const char *const unary[] = {"lt_scale", "lt_sum", "lt_mean", "lt_gelu", "lt_gelu_erf", "lt_relu",
                                            "lt_tanh", "lt_sigmoid", "lt_softmax", "lt_log_softmax", "lt_layernorm",
                                            "lt_dropout", "lt_transpose", "lt_attention", "lt_embedding",
                                            "lt_cross_entropy", "lt_mse_loss", "lt_matmul", "lt_linear", "lt_conv1d",
                                            "lt_reshape"};
        for (k = 0; k < (int)(sizeof unary / sizeof unary[0]); k++) {
            char test[64];
            int64_t s1 = 256;
            TOPS_FRESH();
            switch (k) {
            case 0: c = lt_scale(ctx, NULL, 2.0f); break;
            case 1: c = lt_sum(ctx, NULL); break;
            case 2: c = lt_mean(ctx, NULL); break;
            case 3: c = lt_gelu(ctx, NULL); break;
            case 4: c = lt_gelu_erf(ctx, NULL); break;
            case 5: c = lt_relu(ctx, NULL); break;
            case 6: c = lt_tanh(ctx, NULL); break;
            case 7: c = lt_sigmoid(ctx, NULL); break;
            case 8: c = lt_softmax(ctx, NULL); break;
            case 9: c = lt_log_softmax(ctx, NULL); break;
            case 10: c = lt_layernorm(ctx, NULL, NULL, NULL, 1e-5f); break;
            case 11: c = lt_dropout(ctx, NULL, 0.1f); break;
            case 12: c = lt_transpose(ctx, NULL, 0, 1); break;
            case 13: c = lt_attention(ctx, NULL, 1, NULL); break;
            case 14: c = lt_embedding(ctx, NULL, ids, 1, 4); break;
            case 15: c = lt_cross_entropy(ctx, NULL, ids); break;
            case 16: c = lt_mse_loss(ctx, a, NULL); break;
            case 17: c = lt_matmul(ctx, NULL, b, 0); break;
            case 18: c = lt_linear(ctx, a, NULL, NULL); break;
            case 19: c = lt_conv1d(ctx, NULL, b, NULL); break;
            default: c = lt_reshape(ctx, NULL, 1, &s1); break;
            }
            snprintf(test, sizeof test, "%s_null", unary[k] + 3);
            tops_expect(ctx, test, c, LT_ERR_ARG, unary[k], NULL, NULL);
            lt_ctx_destroy(ctx);
        }
    }
#undef TOPS_FRESH
}

/* ---- edge cases the references cannot express ---------------------------------------------------- */
static void test_ops_special(void) {
    int64_t s[2] = {3, 4};
    lt_ctx *ctx;
    lt_tensor *x, *out, *loss;
    int64_t i;
    int ok;
    if (!t_want("ops/special")) return;
    /* every target ignored: torch gives NaN; we give loss 0 and no gradient (documented) */
    {
        int32_t t[3] = {-1, -1, -1};
        int k;
        for (k = 0; k < 2; k++) {
            ctx = lt_ctx_create(3);
            x = lt_param(ctx, "x", 2, s);
            lt_init_normal(ctx, x, 0.0, 1.0);
            out = k ? lt_cross_entropy_sum(ctx, x, t, 5.0) : lt_cross_entropy(ctx, x, t);
            loss = lt_scale(ctx, out, 1.0f);
            ok = out && lt_item(out) == 0.0f && lt_backward(ctx, loss) == LT_OK && lt_count_targets(t, 3) == 0;
            for (i = 0; ok && i < x->n; i++) ok = x->grad[i] == 0.0f;
            t_check(ok, k ? "ops/special/cross_entropy_sum_all_ignored" : "ops/special/cross_entropy_all_ignored",
                    "loss %g, status %s", (double)lt_item(out), lt_error(ctx));
            lt_ctx_destroy(ctx);
        }
    }
    /* a row of all -inf has no distribution: softmax gives zeros (gradient 0), log-softmax -inf
       (its gradient is undefined; we only ask that it is finite) */
    {
        static const float R[12] = {0.3f, -0.7f, 0.2f, 0.9f, -0.1f, 0.5f, 0.25f, -0.4f, 0.6f, 0.1f, -0.8f, 0.35f};
        int k;
        for (k = 0; k < 2; k++) {
            ctx = lt_ctx_create(4);
            x = lt_param(ctx, "x", 2, s);
            lt_init_normal(ctx, x, 0.0, 1.0);
            for (i = 4; i < 8; i++) x->data[i] = -INFINITY;
            out = k ? lt_log_softmax(ctx, x) : lt_softmax(ctx, x);
            loss = lt_sum(ctx, lt_mul(ctx, out, lt_tensor_from(ctx, R, 2, s)));
            ok = out != NULL && lt_backward(ctx, loss) == LT_OK;
            for (i = 4; ok && i < 8; i++) ok = k ? out->data[i] == -INFINITY : (out->data[i] == 0.0f && x->grad[i] == 0.0f);
            for (i = 0; ok && i < 12; i++) ok = isfinite(x->grad[i]) && (i / 4 == 1 || isfinite(out->data[i]));
            t_check(ok, k ? "ops/special/log_softmax_row_all_ninf" : "ops/special/softmax_row_all_ninf", "%s",
                    lt_error(ctx));
            lt_ctx_destroy(ctx);
        }
    }
}

/* ---- threads: the OpenMP paths (taken above 32768 elements) give the serial answer, bit for bit ------ */
/* Every parallel loop splits work that is independent (rows, heads, output tiles) and sums in a
   fixed order, so 1 thread and N threads must agree exactly; the references above are too small
   to take these paths.  Returns the output and the gradients, concatenated (malloc'd). */
static float *tops_threads_run(const tops_gc_case *g, const int32_t *ids, int threads, int64_t *n) {
    lt_ctx *ctx = lt_ctx_create(31);
    lt_tensor *in[3], *out, *R;
    tops_call c;
    float *res = NULL;
    int k;
    lt_set_threads(threads);
    memset(&c, 0, sizeof c);
    c.op = tops_index(g->op);
    c.args[0] = g->args[0]; c.args[1] = g->args[1];
    c.ids = ids; c.n0 = 1; c.n1 = g->n1;
    tops_inputs(ctx, g->n_in, &g->shape[0][0], 5, 2.0, in);
    for (k = 0; k < g->n_in; k++) c.x[k] = in[k];
    out = tops_apply(ctx, &c);
    R = out ? lt_tensor_new(ctx, out->ndim, out->shape) : NULL;
    lt_init_uniform(ctx, R, -1.0, 1.0);
    if (out && lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, out, R))) == LT_OK) res = tops_collect(out, in, g->n_in, n);
    lt_ctx_destroy(ctx);
    return res;
}

static void test_ops_threads(void) {
    static const tops_gc_case cases[] = {
        {"add/300x130+130", "add", 2, {{2, 300, 130}, {1, 130}}, {0}, {0}, 0, 0, 0, 0},
        {"mul/300x130*300x130", "mul", 2, {{2, 300, 130}, {2, 300, 130}}, {0}, {0}, 0, 0, 0, 0},
        {"gelu/40000", "gelu", 1, {{1, 40000}}, {0}, {0}, 0, 0, 0, 0},
        {"layernorm/300x130", "layernorm", 3, {{2, 300, 130}, {1, 130}, {1, 130}}, {1e-5}, {0}, 0, 0, 0, 0},
        {"layernorm/70x600", "layernorm", 3, {{2, 70, 600}, {1, 600}, {1, 600}}, {1e-5}, {0}, 0, 0, 0, 0},
        {"softmax/300x130", "softmax", 1, {{2, 300, 130}}, {0}, {0}, 0, 0, 0, 0},
        {"matmul/130x200x150", "matmul", 2, {{2, 130, 200}, {2, 200, 150}}, {0}, {0}, 0, 0, 0, 0},
        {"matmul_tatb/2x70x90x80", "matmul", 2, {{3, 2, 90, 70}, {3, 2, 80, 90}}, {3}, {0}, 0, 0, 0, 0},
        {"linear/600x130_70x130", "linear", 3, {{2, 600, 130}, {2, 70, 130}, {1, 70}}, {0}, {0}, 0, 0, 0, 0},
        {"conv1d/600x130_130x70", "conv1d", 3, {{2, 600, 130}, {2, 130, 70}, {1, 70}}, {0}, {0}, 0, 0, 0, 0},
        {"attention/B2T64C32H4", "attention", 1, {{3, 2, 64, 96}}, {4}, {0}, 0, 0, 0, 0},
        {"attention/B1T300C128H2", "attention", 1, {{3, 1, 300, 384}}, {2}, {0}, 0, 0, 0, 0},
        {"attention_len/B3T130C128H2_len130-0-77", "attention", 1, {{3, 3, 130, 384}}, {2}, {130, 0, 77}, 1, 3, 1, 0},
        /* ids: 400 rows of 40, each id 10 times (repeats sum in the backward) */
        {"embedding/40x600_ids400", "embedding", 1, {{2, 40, 600}}, {0}, {0}, 1, 400, 1, 0},
        /* targets: below; n1 = 300 rows (attention: the lengths of the case) */
        {"cross_entropy/300x130", "cross_entropy", 1, {{2, 300, 130}}, {0}, {0}, 1, 300, 1, 0},
    };
    static int32_t targets[300], emb_ids[400];
    int i, base = lt_get_threads(), many = base > 4 ? base : 4;
    for (i = 0; i < 300; i++) targets[i] = i % 7 == 3 ? LT_IGNORE_INDEX : (i * 37) % 130;
    for (i = 0; i < 400; i++) emb_ids[i] = (i * 7) % 40;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const tops_gc_case *g = &cases[i];
        const int32_t *ids;
        int64_t na = 0, nb = 0;
        float *a, *b;
        char name[128];
        snprintf(name, sizeof name, "ops/threads/%s", g->name);
        if (!t_want(name)) continue;
        ids = !g->has_ids ? NULL : !strcmp(g->op, "attention") ? g->ids : !strcmp(g->op, "embedding") ? emb_ids : targets;
        a = tops_threads_run(g, ids, 1, &na);
        b = tops_threads_run(g, ids, many, &nb);
        t_check(a && b && na == nb && memcmp(a, b, (size_t)na * sizeof(float)) == 0, name,
                "1 thread and %d threads differ", many);
        free(a); free(b);
    }
    lt_set_threads(base);
}

/* ---- attention's block products: the plain C, AVX2 and AVX-512 kernels against a double loop ----------- */
/* lt__att_mm with A as is and transposed, acc 0/1, every causal mode at offsets around 0, shapes
   across its 6-row and 64-column tiles and its 1- to 4-vector column groups (n = 5, 20, 48, 64, and
   the edges of 33 and 70); columns a mode leaves unwritten must keep their values. */
static void test_ops_attention_mm(void) {
    static const int64_t shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {13, 70, 65}, {64, 64, 64}, {130, 33, 20},
                                        {8, 20, 9}, {9, 48, 17}};
    int simd, bad = 0, checks = 0;
    if (!t_want("ops/attention_mm")) return;
    for (simd = 0; simd <= lt__att_simd(); simd++) {
        int si, trans, acc, tri, oi;
        for (si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++)
            for (trans = 0; trans < 2; trans++)
                for (acc = 0; acc < 2; acc++)
                    for (tri = 0; tri <= LT__ATT_NGE; tri++)
                        for (oi = 0; oi < 3; oi++) {
                            int64_t m = shapes[si][0], n = shapes[si][1], K = shapes[si][2], off = oi * 4 - 4;
                            int64_t ars = trans ? 1 : K + 3, aks = trans ? m + 2 : 1, ldb = n + 5, ldc = n + 1, r, j, k;
                            float *A = (float *)malloc((size_t)((m + 2) * (K + 3)) * sizeof(float));
                            float *B = (float *)malloc((size_t)(K * ldb) * sizeof(float));
                            float *C = (float *)malloc((size_t)(m * ldc) * sizeof(float));
                            float *C0 = (float *)malloc((size_t)(m * ldc) * sizeof(float));
                            for (j = 0; j < (m + 2) * (K + 3); j++) A[j] = (float)((j * 37) % 19 - 9) / 8.0f;
                            for (j = 0; j < K * ldb; j++) B[j] = (float)((j * 53) % 23 - 11) / 8.0f;
                            for (j = 0; j < m * ldc; j++) C[j] = C0[j] = (float)(j % 7) - 3.0f;
                            lt__att_mm(simd, tri, off, m, n, K, 0.5f, A, ars, aks, B, ldb, acc, C, ldc);
                            for (r = 0; r < m; r++) {
                                int64_t mr = simd ? 6 : 1, r0 = r / mr * mr, mi = m - r0 < mr ? m - r0 : mr;
                                int64_t k0 = tri == LT__ATT_KGE ? r0 + off : 0, k1 = tri == LT__ATT_KLE ? r0 + mi + off : K;
                                int64_t j0 = tri == LT__ATT_NGE ? r0 + off : 0, j1 = tri == LT__ATT_NLE ? r0 + mi + off : n;
                                for (j = 0; j < n; j++) {
                                    double want = C0[r * ldc + j], got = C[r * ldc + j];
                                    if (j >= j0 && j < j1) {
                                        double sum = 0;
                                        for (k = k0 < 0 ? 0 : k0; k < (k1 > K ? K : k1); k++)
                                            sum += (double)A[r * ars + k * aks] * B[k * ldb + j];
                                        want = 0.5 * sum + (acc ? want : 0.0);
                                    }
                                    checks++;
                                    if (!(fabs(got - want) <= 1e-5 + 1e-5 * fabs(want))) bad++;
                                }
                            }
                            free(A); free(B); free(C); free(C0);
                        }
    }
    t_check(bad == 0, "ops/attention_mm", "%d of %d values differ from the double loop", bad, checks);
}

/* The online softmax's passes at every level (lt__att_colmax, lt__att_colexp, lt__att_exp: C,
   AVX2, AVX-512) on blocks of w rows x n columns, n around the 8- and 16-wide blocks, the causal
   offset before, inside and past the block: the running max to the bit (as the C loop), the
   unseen probabilities exactly 0, the seen ones and the sums against double. */
static void test_ops_attention_softmax(void) {
    static const int64_t shapes[][3] = {{1, 1, 0}, {5, 7, -2}, {9, 8, 0}, {20, 17, 3}, {64, 64, 0}, {33, 40, -5},
                                        {12, 23, 30}, {6, 31, -40}};
    int simd, si, bad = 0, checks = 0;
    if (!t_want("ops/attention_softmax")) return;
    for (simd = 0; simd <= lt__att_simd(); simd++)
        for (si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++) {
            int64_t w = shapes[si][0], n = shapes[si][1], off = shapes[si][2], u, t;
            float *s = (float *)malloc((size_t)(w * n) * sizeof(float)), *s0 = (float *)malloc((size_t)(w * n) * sizeof(float));
            float al[64], al0[64], l[64], e[64];
            double ls[64];
            for (u = 0; u < w * n; u++) s[u] = s0[u] = (float)((u * 37 % 101) - 50) * 0.11f;
            for (t = 0; t < n; t++) { al[t] = al0[t] = t % 3 == 0 ? -INFINITY : 0.5f * (float)(t % 5); l[t] = 0.25f; ls[t] = 0.25; }
            lt__att_colmax(simd, s, w, n, off, al);
            lt__att_colmax(0, s0, w, n, off, al0);
            for (t = 0; t < n; t++, checks++)
                if (memcmp(&al[t], &al0[t], sizeof(float)) != 0) bad++;
            for (t = 0; t < n; t++) if (al[t] == -INFINITY) al[t] = 0.0f;   /* a column no row sees */
            lt__att_colexp(simd, s, w, n, off, al, l);
            for (u = 0; u < w; u++)
                for (t = 0; t < n; t++, checks++) {
                    int seen = t >= u + off;
                    double p = seen ? exp((double)s0[u * n + t] - (double)al[t]) : 0.0;
                    ls[t] += p;
                    if (seen ? fabs(s[u * n + t] - p) > 2e-6 * p : s[u * n + t] != 0.0f) bad++;
                }
            for (t = 0; t < n; t++, checks++)
                if (fabs(l[t] - ls[t]) > 1e-5 * ls[t]) bad++;
            for (t = 0; t < n; t++) e[t] = s0[t] - 6.0f;
            lt__att_exp(simd, e, NULL, 0.5f, n);
            for (t = 0; t < n; t++, checks++)
                if (fabs(e[t] - exp((double)s0[t] - 6.5)) > 2e-6 * exp((double)s0[t] - 6.5)) bad++;
            free(s);
            free(s0);
        }
    t_check(bad == 0, "ops/attention_softmax", "%d of %d values wrong", bad, checks);
}

/* D_t = dy_t·y_t (lt__att_dot): the AVX2 and AVX-512 kernels keep the C loop's 16 partial sums and
   its pairwise adds, so every level gives its bits, at lengths that take the kernels (multiples of
   16) and the C loop (the rest), on values whose products all round (an FMA or another order of
   adds shows). */
static void test_ops_attention_dot(void) {
    static const int64_t lens[] = {16, 32, 48, 64, 128, 256, 5, 17, 70};
    float x[512], y[512];
    uint32_t r = 12345u;
    int simd, li, bad = 0, checks = 0, i, o;
    if (!t_want("ops/attention_dot")) return;
    for (i = 0; i < 512; i++) {   /* full mantissas: every product rounds */
        r = r * 1664525u + 1013904223u;
        x[i] = ((float)(r >> 8) / 16777216.0f - 0.5f) * (i % 3 ? 1.0f : 37.0f);
        r = r * 1664525u + 1013904223u;
        y[i] = ((float)(r >> 8) / 16777216.0f - 0.5f) * (i % 5 ? 1.0f : 0.01f);
    }
    for (simd = 1; simd <= lt__att_simd(); simd++)
        for (li = 0; li < (int)(sizeof lens / sizeof lens[0]); li++)
            for (o = 0; o < 16; o++, checks++) {   /* 16 pairs of vectors a length */
                float got = lt__att_dot(simd, x + 16 * o, y + 11 * o, lens[li]);
                float want = lt__att_dot(0, x + 16 * o, y + 11 * o, lens[li]);
                if (memcmp(&got, &want, sizeof got) != 0) bad++;
            }
    t_check(bad == 0, "ops/attention_dot", "%d of %d dot products differ from the C loop's bits", bad, checks);
}

/* ---- attention16 (lt_set_precision 16-bit): float32 attention on 16-bit values, y rounded ---------------- */
/* On qkv that is already 16-bit (as c_attn's output is), attention16's y is the float32 op's y
   rounded, and its gradient the float32 one but for D_t = dy_t·y_t taken from the rounded y
   (about one rounding: tolerance 4 roundings of max |g|).  Also: float32 qkv is rounded first, the
   no-gradient path gives the same y, padded rows (lengths 0 and T) are 0 with no NaN, and 1 and 4
   threads agree to the bit. */
static float *tops_att16_run(lt_dtype prec, const float *x, const int32_t *len, int grad, int threads, float **gq) {
    int64_t s[3] = {3, 130, 3 * 128}, n = 3 * 130 * 128, i;
    lt_ctx *ctx = lt_ctx_create(5);
    lt_tensor *qkv, *y, *R;
    float *out = (float *)malloc((size_t)n * sizeof(float));
    lt_set_threads(threads);
    lt_set_precision(ctx, prec);
    lt_set_grad_enabled(ctx, grad);
    qkv = lt_param(ctx, "qkv", 3, s);
    memcpy(qkv->data, x, (size_t)qkv->n * sizeof(float));
    y = lt_attention(ctx, qkv, 2, len);
    s[2] = 128;
    R = lt_tensor_new(ctx, 3, s);
    for (i = 0; R && i < n; i++) R->data[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
    if (y) memcpy(out, y->data, (size_t)n * sizeof(float));
    if (gq) {
        *gq = (float *)malloc((size_t)qkv->n * sizeof(float));
        if (y && lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, y, R))) == LT_OK)
            memcpy(*gq, qkv->grad, (size_t)qkv->n * sizeof(float));
    }
    if (!y || lt_failed(ctx)) { free(out); out = NULL; }
    lt_ctx_destroy(ctx);
    return out;
}

static void test_ops_attention16(void) {
    static const int32_t lens[3] = {130, 0, 77};
    int64_t nq = 3 * 130 * 384, ny = 3 * 130 * 128, i;
    int p, base = lt_get_threads(), tiles_off = (lt__att16_tiles(LT_BF16, 256, 64), lt__att16_off);
    float *x = (float *)malloc((size_t)nq * sizeof(float)), *xr = (float *)malloc((size_t)nq * sizeof(float));
    lt_rng r;
    if (!t_want("ops/attention16")) { free(x); free(xr); return; }
    lt_rng_seed(&r, 9);
    for (i = 0; i < nq; i++) x[i] = (float)lt_rng_normal(&r);
    lt__att16_off = 1;   /* the float32 kernels here (bf16 on AMX tiles: test_ops_attention16_tiles) */
    for (p = 0; p < 2; p++) {
        lt_dtype prec = p ? LT_F16 : LT_BF16;
        const char *pn = lt_precision_name(prec);
        float *y32, *g32, *y16, *g16, *y16x, *y16ng, *y16t, *g16t, gmax = 0;
        char name[96];
        int ok;
        lt_round_to_precision(prec, x, xr, (size_t)nq);
        y32 = tops_att16_run(LT_F32, xr, lens, 1, 1, &g32);
        y16 = tops_att16_run(prec, xr, lens, 1, 1, &g16);
        y16x = tops_att16_run(prec, x, lens, 1, 1, NULL);
        y16ng = tops_att16_run(prec, x, lens, 0, 1, NULL);
        y16t = tops_att16_run(prec, x, lens, 1, 4, &g16t);
        ok = y32 && y16 && y16x && y16ng && y16t;
        if (ok) lt_round_to_precision(prec, y32, y32, (size_t)ny);
        snprintf(name, sizeof name, "ops/attention16/%s/y", pn);
        t_check(ok && memcmp(y16, y32, (size_t)ny * sizeof(float)) == 0, name, "y is not the float32 op's y rounded");
        for (i = 0; ok && i < nq; i++) gmax = fabsf(g32[i]) > gmax ? fabsf(g32[i]) : gmax;
        snprintf(name, sizeof name, "ops/attention16/%s/grad", pn);
        if (ok) t_close(name, g16, g32, nq, 4.0 * (p ? 1.0 / 2048 : 1.0 / 256) * gmax, 0.0);
        else t_check(0, name, "a run failed");
        snprintf(name, sizeof name, "ops/attention16/%s/rounds_input", pn);
        t_check(ok && memcmp(y16x, y16, (size_t)ny * sizeof(float)) == 0, name, "float32 qkv is not rounded first");
        snprintf(name, sizeof name, "ops/attention16/%s/no_grad", pn);
        t_check(ok && memcmp(y16ng, y16, (size_t)ny * sizeof(float)) == 0, name, "the no-gradient y differs");
        snprintf(name, sizeof name, "ops/attention16/%s/threads", pn);
        t_check(ok && memcmp(y16t, y16x, (size_t)ny * sizeof(float)) == 0 &&
                    memcmp(g16t, g16, (size_t)nq * sizeof(float)) == 0, name, "1 and 4 threads differ");
        /* batch 1 has length 0: no output, no gradient; batch 2's rows from 77 likewise */
        for (i = 0; ok && i < ny; i++) {
            int64_t b = i / (130 * 128), t = i / 128 % 130;
            if (t >= lens[b] && y16[i] != 0.0f) ok = 0;
        }
        for (i = 0; ok && i < nq; i++) {
            int64_t b = i / (130 * 384), t = i / 384 % 130;
            if (!isfinite(g16[i]) || (t >= lens[b] && g16[i] != 0.0f)) ok = 0;
        }
        snprintf(name, sizeof name, "ops/attention16/%s/padding", pn);
        t_check(ok, name, "padded rows are not 0, or a value is not finite");
        free(y32); free(g32); free(y16); free(g16); free(y16x); free(y16ng); free(y16t); free(g16t);
    }
    lt__att16_off = tiles_off;
    lt_set_threads(base);
    free(x); free(xr);
}

/* ---- attention16 in bf16 on AMX tiles or AVX512_BF16 pairs (@@OPS.attention16) against the float32 kernels */
/* The bf16 kernels round P, dY and dS to bf16 where they enter a product, so y and the gradients
   are held to the float32 kernels' (on the same bf16 inputs) within 4 bf16 roundings of the
   largest value, normwise within 2e-2 (measured: about one rounding; 0.2-0.5% normwise, 1.1%
   with the large inputs below), and to themselves to the bit at 1 and 3 threads; padded rows
   stay 0.  Shapes: D = 64 with lengths
   (130, 0, 77), D = 24 and 128 (channels padded to 32 and not), T = 100 and 200 (rows padded to
   32), grouped heads (G = 2, D = 32), inputs 6 times larger (scores far apart from one key block
   to the next: the running max must carry over); D = 136, more than the tiles take, and T = 64,
   one block, are the float32 kernels' to the bit.  Each product unit the CPU offers runs
   (ops/attention16_tiles on AMX, ops/attention16_pairs on AVX512_BF16: AMD's choice, and Intel's
   with AMX where LT_ATT16=pairs asks for it); skipped where neither is used (LT_ATT16=f32, no
   AVX512_BF16, an Intel CPU without AMX). */
typedef struct { int B, T, C, H, Hkv; const int32_t *len; float amp; } tops_a16_shape;
static float *tops_a16_run(const tops_a16_shape *sh, const float *x, int off, int threads, int64_t *n_out) {
    int64_t B = sh->B, T = sh->T, C = sh->C, D = C / sh->H, Ck = (int64_t)sh->Hkv * D, i, nx, ng;
    int64_t s3[3] = {B, T, 3 * C}, sq[3] = {B, T, C}, sk[3] = {B, T, Ck};
    lt_ctx *ctx = lt_ctx_create(3);
    lt_tensor *in[3] = {NULL, NULL, NULL}, *y, *R;
    float *out;
    int fused = sh->Hkv == 0, w;
    lt__att16_off = off;
    lt_set_threads(threads);
    lt_set_precision(ctx, LT_BF16);
    if (fused) in[0] = lt_param(ctx, "qkv", 3, s3);
    else { in[0] = lt_param(ctx, "q", 3, sq); in[1] = lt_param(ctx, "k", 3, sk); in[2] = lt_param(ctx, "v", 3, sk); }
    for (w = 0, nx = 0; w < 3 && in[w]; w++) { memcpy(in[w]->data, x + nx, (size_t)in[w]->n * sizeof(float)); nx += in[w]->n; }
    y = fused ? lt_attention(ctx, in[0], sh->H, sh->len) : lt_attention_gqa(ctx, in[0], in[1], in[2], sh->H, sh->Hkv, sh->len);
    R = lt_tensor_new(ctx, 3, sq);
    for (i = 0; R && i < R->n; i++) R->data[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
    ng = y ? y->n + nx : 0;
    out = (float *)malloc((size_t)(ng ? ng : 1) * sizeof(float));
    if (y && lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, y, R))) == LT_OK) {
        memcpy(out, y->data, (size_t)y->n * sizeof(float));
        for (w = 0, i = y->n; w < 3 && in[w]; w++) { memcpy(out + i, in[w]->grad, (size_t)in[w]->n * sizeof(float)); i += in[w]->n; }
        *n_out = y->n;
    } else { free(out); out = NULL; }
    lt_ctx_destroy(ctx);
    return out;
}
static void test_ops_attention16_unit(const char *kind, const tops_a16_shape *shapes, int n_shapes);
static void test_ops_attention16_tiles(void) {
    static const int32_t lens[3] = {130, 0, 77};
    static const tops_a16_shape shapes[] = {{3, 130, 128, 2, 0, lens, 1}, {2, 100, 72, 3, 0, NULL, 1},
                                            {2, 200, 256, 2, 0, NULL, 1}, {2, 100, 128, 4, 2, NULL, 1},
                                            {1, 200, 128, 2, 0, NULL, 6}, {1, 80, 272, 2, 0, NULL, 1},
                                            {2, 64, 128, 2, 0, NULL, 1}};
    int base = lt_get_threads(), keep = (lt__att16_tiles(LT_BF16, 256, 64), lt__att16_off), keep_p = lt__att16_pairs;
    int ask, done = 0;
    if (!t_want("ops/attention16_tiles") && !t_want("ops/attention16_pairs")) return;
    for (ask = 0; ask < 2; ask++) {   /* the CPU's own choice, then pairs asked for */
        int unit;
        const char *kind;
        lt__att16_off = 0;
        lt__att16_pairs = ask;
        unit = lt__att16_unit();
        kind = unit == 2 ? "attention16_tiles" : "attention16_pairs";
        if (!unit || done & (1 << unit)) continue;
        done |= 1 << unit;
        if (!t_want(unit == 2 ? "ops/attention16_tiles" : "ops/attention16_pairs")) continue;
        test_ops_attention16_unit(kind, shapes, (int)(sizeof shapes / sizeof shapes[0]));
    }
    if (!(done & 4)) t_skip("ops/attention16_tiles", "no AMX here, or LT_ATT16=f32");
    if (!(done & 2)) t_skip("ops/attention16_pairs", "no AVX512_BF16 pairs here (an Intel CPU without AMX, or LT_ATT16=f32)");
    lt__att16_off = keep;
    lt__att16_pairs = keep_p;
    lt_set_threads(base);
}
/* the shapes above on the unit lt__att16_unit picks now (kind names it) */
static void test_ops_attention16_unit(const char *kind, const tops_a16_shape *shapes, int n_shapes) {
    int k;
    for (k = 0; k < n_shapes; k++) {
        const tops_a16_shape *sh = &shapes[k];
        int64_t D = sh->C / sh->H, nx = (int64_t)sh->B * sh->T * (sh->Hkv ? sh->C + 2 * sh->Hkv * D : 3 * sh->C), ny = 0, i;
        float *x = (float *)malloc((size_t)nx * sizeof(float)), *ref, *got, *got3;
        double ymax = 0, gmax = 0, e2 = 0, r2 = 0;
        char name[96];
        lt_rng r;
        lt_rng_seed(&r, 11 + (uint64_t)k);
        for (i = 0; i < nx; i++) x[i] = sh->amp * (float)lt_rng_normal(&r);
        lt_round_to_precision(LT_BF16, x, x, (size_t)nx);
        ref = tops_a16_run(sh, x, 1, 1, &ny);
        got = tops_a16_run(sh, x, 0, 1, &ny);
        got3 = tops_a16_run(sh, x, 0, 3, &ny);
        snprintf(name, sizeof name, "ops/%s/%d,%d,%d,%d,%d", kind, sh->B, sh->T, sh->C, sh->H, sh->Hkv);
        if (!ref || !got || !got3) { t_check(0, name, "a run failed"); free(x); free(ref); free(got); free(got3); continue; }
        if (!lt__att16_tiles(LT_BF16, sh->T, D)) {
            t_check(!memcmp(ref, got, (size_t)(ny + nx) * sizeof(float)), name, "T = %d, D = %lld: not the float32 kernels' bits",
                    sh->T, (long long)D);
        } else {
            for (i = 0; i < ny; i++) ymax = fabs(ref[i]) > ymax ? fabs(ref[i]) : ymax;
            for (i = ny; i < ny + nx; i++) gmax = fabs(ref[i]) > gmax ? fabs(ref[i]) : gmax;
            for (i = ny; i < ny + nx; i++) { e2 += (got[i] - ref[i]) * (double)(got[i] - ref[i]); r2 += ref[i] * (double)ref[i]; }
            t_close(name, got, ref, ny, 4.0 / 256 * ymax, 0.0);
            snprintf(name, sizeof name, "ops/%s/%d,%d,%d,%d,%d/grad", kind, sh->B, sh->T, sh->C, sh->H, sh->Hkv);
            if (t_close(name, got + ny, ref + ny, nx, 4.0 / 256 * gmax, 0.0))
                t_check(e2 <= 4e-4 * r2, name, "normwise error %.3g (tolerance 2e-2)", sqrt(e2 / (r2 > 0 ? r2 : 1)));
        }
        snprintf(name, sizeof name, "ops/%s/%d,%d,%d,%d,%d/threads", kind, sh->B, sh->T, sh->C, sh->H, sh->Hkv);
        t_check(!memcmp(got, got3, (size_t)(ny + nx) * sizeof(float)), name, "1 and 3 threads differ");
        if (sh->len) {   /* padded rows: y 0, gradients 0 */
            int ok = 1;
            for (i = 0; i < ny; i++) if (i / (sh->T * sh->C) < 3 && i / sh->C % sh->T >= sh->len[i / (sh->T * sh->C)] && got[i] != 0.0f) ok = 0;
            for (i = 0; i < nx; i++) {
                int64_t b = i / (sh->T * 3 * sh->C), t = i / (3 * sh->C) % sh->T;
                if (!isfinite(got[ny + i]) || (t >= sh->len[b] && got[ny + i] != 0.0f)) ok = 0;
            }
            snprintf(name, sizeof name, "ops/%s/%d,%d,%d,%d,%d/padding", kind, sh->B, sh->T, sh->C, sh->H, sh->Hkv);
            t_check(ok, name, "padded rows are not 0, or a value is not finite");
        }
        free(x); free(ref); free(got); free(got3);
    }
}


/* ---- attention16's bf16 stores (lt__a16_st, vcvtneps2bf16) against lt_f32_to_bf16 ------------------ */
/* P and dS go to bf16 by the CPU's own conversion: the library's round to nearest even (ties to
   even both ways, carries into the exponent, overflow to inf) except that subnormal inputs become
   0 of their sign and a NaN stays a NaN (its bits may differ).  Skipped without AMX (where the
   tile kernels, its only users, do not run). */
#ifdef LT__AMX
LT__TARGET("avx512f,avx512bf16") static void test_ops_attention16_store(void) {
    static const uint32_t bits[16] = {0x3F800000u, 0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x3F807FFFu, 0xBF808001u,
                                      0x7F7FFFFFu, 0x7F7F7FFFu, 0x7F800000u, 0xFF800000u, 0x00000001u, 0x807FFFFFu,
                                      0x00800000u, 0x7FC00001u, 0xFFA00000u, 0x00000000u};
    float x[16];
    uint16_t got[16];
    int i, ok = 1;
    if (!t_want("ops/attention16_store")) return;
    if (!lt__att16_tiles(LT_BF16, 256, 64)) {
        t_skip("ops/attention16_store", "the bf16 tile kernels are not used here (no AMX, or LT_ATT16=f32)");
        return;
    }
    memcpy(x, bits, sizeof x);
    lt__a16_st(got, _mm512_loadu_ps(x));
    for (i = 0; i < 16; i++) {
        uint16_t want = lt_f32_to_bf16(x[i]);
        int sub = (bits[i] & 0x7F800000u) == 0 && (bits[i] & 0x007FFFFFu) != 0;
        if (x[i] != x[i]) ok &= (got[i] & 0x7F80u) == 0x7F80u && (got[i] & 0x007Fu) != 0;   /* a NaN */
        else if (sub) ok &= got[i] == (uint16_t)((bits[i] >> 16) & 0x8000u);                /* 0 of its sign */
        else ok &= got[i] == want;
        if (!ok) { t_check(0, "ops/attention16_store", "value %d (bits 0x%08x): 0x%04x, want 0x%04x", i, bits[i], got[i], want); return; }
    }
    t_check(ok, "ops/attention16_store", "");
}
#else
static void test_ops_attention16_store(void) {}
#endif

/* ---- gelu's kernels: plain C and AVX-512 against gelu in double ---------------------------------- */
/* Every length around the 16-wide blocks (the AVX-512 tail is masked, the plain C one padded),
   values from -12 to 12 (the tail where 1 + tanh u cancels included), large ones and ±inf, NaN.
   y and dy/dx (gy = 1, gy given, and added onto gx) within a few float ulp of double precision
   (relative to max(|y|, 1e-30) and to dy/dx's two terms, over the condition 1 + |2u|); the specials as torch gives them: gelu(-inf) is NaN (-inf·0),
   gelu(inf) = inf, NaN stays NaN. */
static double tops_gelu_ref(double x, double *d, double *dterms) {
    /* ½(1 + tanh u) as 1/(1 + exp(-2u)): 1 + tanh u would cancel in double too */
    double k = 0.7978845608028654, c = 0.044715, u = k * (x + c * x * x * x), s = 1.0 / (1.0 + exp(-2.0 * u));
    *d = s + 2.0 * x * s * (1.0 - s) * k * (1.0 + 3.0 * c * x * x);
    *dterms = s + fabs(*d - s);   /* dy/dx crosses 0 near x = -0.75: its terms give the scale there */
    return x * s;
}
static void test_ops_gelu_kernels(void) {
    static const int64_t lens[] = {1, 15, 16, 17, 33, 4095, 4097};
    int simd, li;
    double worst[2] = {0, 0};
    if (!t_want("ops/gelu_kernels")) return;
    for (simd = 0; simd <= lt__simd_level(); simd++)
        for (li = 0; li < (int)(sizeof lens / sizeof lens[0]); li++) {
            int64_t m = lens[li], i, bad = 0;
            float *x = (float *)malloc((size_t)m * sizeof(float)), *y = (float *)malloc((size_t)m * sizeof(float));
            float *d = (float *)malloc((size_t)m * sizeof(float)), *g = (float *)malloc((size_t)m * sizeof(float));
            float *gx = (float *)malloc((size_t)m * sizeof(float)), *ga = (float *)malloc((size_t)m * sizeof(float));
            char name[64];
            for (i = 0; i < m; i++) {
                x[i] = m == 1 ? 0.5f : -12.0f + 24.0f * (float)i / (float)(m - 1);
                g[i] = 0.25f + (float)(i % 5);
                gx[i] = 7.0f;
                ga[i] = 1.5f;
            }
            if (m > 16) { x[1] = INFINITY; x[2] = -INFINITY; x[3] = NAN; x[4] = 1e30f; x[5] = -1e30f; x[6] = 0.0f; }
            lt__gelu_rows(simd, x, y, m);
            lt__gelu_grad_rows(simd, x, NULL, d, m, 0);
            lt__gelu_grad_rows(simd, x, g, gx, m, 0);
            lt__gelu_grad_rows(simd, x, g, ga, m, 1);
            for (i = 0; i < m; i++) {
                double dr, dt, yr = tops_gelu_ref((double)x[i], &dr, &dt), ey, ed, cond;
                if (!isfinite(x[i]) || fabsf(x[i]) > 1e20f) {
                    int yok = x[i] != x[i] ? y[i] != y[i] : x[i] > 0 ? (y[i] == x[i]) : (x[i] < -1e20f ? (y[i] == 0.0f || y[i] != y[i]) : 1);
                    if (!yok) bad++;
                    continue;
                }
                /* over 1 + |2u|: where exp(-2|u|) is small its argument's own rounding (|2u| ulp) rules */
                cond = 1.0 + 2.0 * 0.7978845608028654 * fabs((double)x[i] + 0.044715 * (double)x[i] * x[i] * x[i]);
                ey = fabs(y[i] - yr) / (fabs(yr) > 1e-30 ? fabs(yr) : 1e-30) / cond;
                ed = fabs(d[i] - dr) / (dt > 1e-30 ? dt : 1e-30) / cond;
                worst[0] = ey > worst[0] ? ey : worst[0];
                worst[1] = ed > worst[1] ? ed : worst[1];
                if (ey > 1e-6 || ed > 1e-6 || gx[i] != g[i] * d[i] || ga[i] != 1.5f + g[i] * d[i]) bad++;
            }
            snprintf(name, sizeof name, "ops/gelu_kernels/%s/%lld", simd == 2 ? "avx512" : simd ? "avx2" : "c", (long long)m);
            t_check(bad == 0, name, "%lld values wrong (worst relative error over 1 + |2u|: y %.3g, dy/dx %.3g)", (long long)bad,
                    worst[0], worst[1]);
            free(x); free(y); free(d); free(g); free(gx); free(ga);
        }
    printf("     gelu kernels: worst relative error against double, over 1 + |2u|: y %.3g, dy/dx %.3g\n", worst[0], worst[1]);
}

/* silu and swiglu at every level (lt__simd_level: C, AVX2, AVX-512) against double, at lengths
   around the 8- and 16-wide blocks: y = x·σ(x), silu'(x), swiglu's y = silu(g)·u, dgate =
   dy·u·silu'(g) and dup = dy·silu(g); the += forms give the = forms' values plus what was there,
   to the bit; inf, NaN and ±1e30 give what the C loop gives. */
static double tops_silu_ref(double x, double *d, double *dterms) {
    double s = 1.0 / (1.0 + exp(-x));
    *d = s * (1.0 + x * (1.0 - s));
    *dterms = s * (1.0 + fabs(x) * (1.0 - s));   /* silu' crosses 0 near x = -1.28: its terms give the scale */
    return x * s;
}
static int tops_same_class(float a, float b) { return a != a ? b != b : a == b; }
static void test_ops_silu_kernels(void) {
    static const int64_t lens[] = {1, 7, 8, 9, 15, 16, 17, 33, 4095, 4096};
    int simd, li;
    double worst = 0;
    if (!t_want("ops/silu_kernels")) return;
    for (simd = 0; simd <= lt__simd_level(); simd++)
        for (li = 0; li < (int)(sizeof lens / sizeof lens[0]); li++) {
            int64_t m = lens[li], i, bad = 0;
            size_t sz = (size_t)m * sizeof(float);
            float *x = (float *)malloc(sz), *u = (float *)malloc(sz), *g = (float *)malloc(sz), *y = (float *)malloc(sz);
            float *d = (float *)malloc(sz), *da = (float *)malloc(sz), *sy = (float *)malloc(sz);
            float *gg = (float *)malloc(sz), *gu = (float *)malloc(sz), *gga = (float *)malloc(sz), *gua = (float *)malloc(sz);
            float *c[5];
            char name[64];
            for (i = 0; i < 5; i++) c[i] = (float *)malloc(sz);
            for (i = 0; i < m; i++) {
                x[i] = m == 1 ? -0.5f : -30.0f + 60.0f * (float)i / (float)(m - 1);
                u[i] = 0.5f - (float)(i % 7) * 0.25f;
                g[i] = 0.25f + (float)(i % 5);
                da[i] = 1.5f; gga[i] = 1.5f; gua[i] = 2.5f;
            }
            if (m > 16) { x[1] = INFINITY; x[2] = -INFINITY; x[3] = NAN; x[4] = 1e30f; x[5] = -1e30f; x[6] = 0.0f; x[7] = -0.0f; }
            lt__silu_rows(simd, x, y, m);
            lt__silu_grad_rows(simd, x, g, d, 0, m);
            lt__silu_grad_rows(simd, x, g, da, 1, m);
            lt__swiglu_rows(simd, x, u, sy, m);
            lt__swiglu_grad_rows(simd, x, u, g, gg, 0, gu, 0, m);
            lt__swiglu_grad_rows(simd, x, u, g, gga, 1, gua, 1, m);
            /* the C loops on the special values */
            lt__silu_rows(0, x, c[0], m);
            lt__silu_grad_rows(0, x, g, c[1], 0, m);
            lt__swiglu_rows(0, x, u, c[2], m);
            lt__swiglu_grad_rows(0, x, u, g, c[3], 0, c[4], 0, m);
            for (i = 0; i < m; i++) {
                double dr, dt, yr = tops_silu_ref((double)x[i], &dr, &dt), cond = 1.0 + fabs((double)x[i]), e[5];
                int k;
                if (!tops_same_class(da[i], 1.5f + d[i]) || !tops_same_class(gga[i], 1.5f + gg[i]) || !tops_same_class(gua[i], 2.5f + gu[i]))
                    bad++;
                if (!isfinite(x[i]) || fabsf(x[i]) > 1e20f) {
                    if (!tops_same_class(y[i], c[0][i]) || !tops_same_class(d[i], c[1][i]) || !tops_same_class(sy[i], c[2][i]) ||
                        !tops_same_class(gg[i], c[3][i]) || !tops_same_class(gu[i], c[4][i]))
                        bad++;
                    continue;
                }
                e[0] = fabs(y[i] - yr) / (fabs(yr) > 1e-30 ? fabs(yr) : 1e-30);
                e[1] = fabs(d[i] - g[i] * dr) / (g[i] * dt) / cond;
                e[2] = fabs(sy[i] - yr * u[i]) / (fabs(yr * u[i]) > 1e-30 ? fabs(yr * u[i]) : 1e-30);
                e[3] = u[i] == 0.0f ? fabs(gg[i]) : fabs(gg[i] - g[i] * u[i] * dr) / fabs(g[i] * u[i] * dt) / cond;
                e[4] = fabs(gu[i] - g[i] * yr) / (fabs(g[i] * yr) > 1e-30 ? fabs(g[i] * yr) : 1e-30);
                for (k = 0; k < 5; k++) {
                    if (yr == 0.0 && k != 1 && k != 3) e[k] = 0;   /* x = 0 */
                    worst = e[k] > worst ? e[k] : worst;
                    if (e[k] > 2e-6) bad++;
                }
            }
            snprintf(name, sizeof name, "ops/silu_kernels/%s/%lld", simd == 2 ? "avx512" : simd ? "avx2" : "c", (long long)m);
            t_check(bad == 0, name, "%lld values wrong (worst relative error %.3g)", (long long)bad, worst);
            free(x); free(u); free(g); free(y); free(d); free(da); free(sy); free(gg); free(gu); free(gga); free(gua);
            for (i = 0; i < 5; i++) free(c[i]);
        }
    printf("     silu kernels: worst relative error against double %.3g\n", worst);
}

/* The softmax sums every level runs (lt__simd_level: C, AVX2, AVX-512) against double:
   Σ exp(x_j - m) and y = (add ? y : 0) + c·exp(x_j - m), at lengths around the 8- and 16-wide
   blocks, with -inf (exp 0) among the values; the sum with its terms kept (over x, as the
   float32 head keeps them) gives the same sum, terms that add up to it in the same order, and
   nothing written past n; y made from the kept terms has the bits of y made from x. */
static void test_ops_exp_kernels(void) {
    static const int64_t lens[] = {1, 7, 8, 9, 16, 17, 255, 256};
    int simd, li, add;
    if (!t_want("ops/exp_kernels")) return;
    for (simd = 0; simd <= lt__simd_level(); simd++)
        for (li = 0; li < (int)(sizeof lens / sizeof lens[0]); li++) {
            int64_t n = lens[li], j, bad = 0;
            float x[257], y[257], e[257], y2[257], m = 3.0f, c = 0.75f, sum, sum2;
            double ref = 0;
            char name[64];
            for (j = 0; j < n; j++) x[j] = j % 11 == 5 ? -INFINITY : m - 0.37f * (float)(j % 29);
            for (j = 0; j < n; j++) ref += exp((double)x[j] - m);
            sum = lt__exp_sum(simd, x, n, m, NULL);
            if (!(fabs(sum - ref) <= 1e-6 * ref + 1e-30)) bad++;
            x[n] = y[n] = 7.0f;
            sum2 = lt__exp_sum(simd, x, n, m, y);
            if (memcmp(&sum, &sum2, sizeof sum) != 0 || y[n] != 7.0f) bad++;
            for (j = 0; j < n; j++)
                if (!(fabs(y[j] - exp((double)x[j] - m)) <= 2e-6 * exp((double)x[j] - m) + 1e-30)) bad++;
            sum2 = lt__exp_sum(simd, x, n, m, x);
            if (memcmp(&sum, &sum2, sizeof sum) != 0 || memcmp(x, y, (size_t)n * sizeof(float)) != 0 || x[n] != 7.0f) bad++;
            memcpy(e, x, (size_t)n * sizeof(float));   /* the kept terms */
            for (j = 0; j < n; j++) x[j] = j % 11 == 5 ? -INFINITY : m - 0.37f * (float)(j % 29);
            for (add = 0; add < 2; add++) {
                for (j = 0; j < n; j++) y[j] = y2[j] = 0.5f + (float)j;
                lt__exp_grad(simd, x, y, n, m, c, add, 0);
                lt__exp_grad(simd, e, y2, n, m, c, add, 1);
                for (j = 0; j < n; j++) {
                    double want = (add ? 0.5 + (double)j : 0.0) + c * exp((double)x[j] - m);
                    if (!(fabs(y[j] - want) <= 2e-6 * fabs(want) + 1e-30)) bad++;   /* the float argument's rounding: |arg| ulp */
                }
                if (memcmp(y, y2, (size_t)n * sizeof(float)) != 0) bad++;
            }
            snprintf(name, sizeof name, "ops/exp_kernels/%s/%lld", simd == 2 ? "avx512" : simd ? "avx2" : "c", (long long)n);
            t_check(bad == 0, name, "%lld values wrong (sum %.9g, double %.9g)", (long long)bad, sum, ref);
        }
}

static void test_ops_all(void) {
    test_ops_torch();
    test_ops_special();
    test_ops_gradcheck();
    test_ops_threads();
    test_ops_attention_mm();
    test_ops_attention_softmax();
    test_ops_attention_dot();
    test_ops_attention16();
    test_ops_attention16_tiles();
    test_ops_attention16_store();
    test_ops_gelu_kernels();
    test_ops_silu_kernels();
    test_ops_exp_kernels();
    test_ops_errors();
}

/* nvcc -x cu -O2 -arch=sm_90 -DLTRAIN_CUDA -I. -Itests tests/test_cuda.c -o build/test_cuda -lcublas   (make cuda)

   test_cuda: every op's CUDA kernel, forward and backward, against the CPU kernel (the reference,
   itself tested against PyTorch by the suite), then AdamW, clipping, the loss scaler, a 50-step
   GPT training run on both devices and the compiled (CUDA graph) step against the eager one.
   Each check: the same inputs on an LT_CPU and an LT_CUDA context; the output and every input's
   gradient of sum(out * R) compared as |cuda - cpu| <= tol + tol*|cpu|, tol per precision:
     fp32 1e-5 (summation order only), TF32 5e-3 (10-bit mantissa products),
     bf16 1e-2 and fp16 2e-3 (a different summation order can move a result by one 16-bit ulp).
   Without a GPU (or built without LTRAIN_CUDA) it says so and exits 0 with everything skipped.
   Ends "N passed, N failed"; the exit status is non-zero when a check failed. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lt_test.h"
#include <stdlib.h>

typedef lt_tensor *(*case_fn)(lt_ctx *ctx, lt_tensor **in, void *user);

/* Inputs are parameters (so gradients flow) filled from a fixed seed: identical on both devices. */
static int run(lt_device dev, lt_dtype prec, int tf32, int nin, const int *ndim, const int64_t (*shape)[4], case_fn fn,
               void *user, float **out, int64_t *nout, float **grads, char *err, size_t errcap) {
    lt_ctx *ctx = lt_ctx_create(11);
    lt_tensor *in[4], *y, *r, *loss;
    lt_rng rng;
    float *R;
    int k;
    int64_t i;
    char name[8];
    if (lt_set_device(ctx, dev) != LT_OK) { snprintf(err, errcap, "%s", lt_error(ctx)); lt_ctx_destroy(ctx); return 0; }
    lt_set_precision(ctx, prec);
    lt_set_tf32(ctx, tf32);
    for (k = 0; k < nin; k++) {
        snprintf(name, sizeof name, "in%d", k);
        in[k] = lt_param(ctx, name, ndim[k], shape[k]);
        lt_init_uniform(ctx, in[k], -1.0, 1.0);
    }
    lt_params_changed(ctx);
    y = fn(ctx, in, user);
    if (!y) { snprintf(err, errcap, "%s", lt_error(ctx)); lt_ctx_destroy(ctx); return 0; }
    R = (float *)malloc((size_t)y->n * sizeof(float));
    lt_rng_seed(&rng, 99);
    for (i = 0; i < y->n; i++) R[i] = (float)(2.0 * lt_rng_uniform(&rng) - 1.0);
    r = lt_tensor_from(ctx, R, y->ndim, y->shape);
    *nout = y->n;
    *out = (float *)malloc((size_t)y->n * sizeof(float));
    lt_tensor_read(ctx, y, 0, *out);
    loss = lt_sum(ctx, lt_mul(ctx, y, r));
    lt_backward(ctx, loss);
    for (k = 0; k < nin; k++) {
        grads[k] = (float *)malloc((size_t)in[k]->n * sizeof(float));
        lt_tensor_read(ctx, in[k], 1, grads[k]);
    }
    free(R);
    if (lt_failed(ctx)) { snprintf(err, errcap, "%s", lt_error(ctx)); lt_ctx_destroy(ctx); return 0; }
    lt_ctx_destroy(ctx);
    return 1;
}

static void check_case(const char *name, lt_dtype prec, int tf32, double tol, int nin, const int *ndim,
                       const int64_t (*shape)[4], case_fn fn, void *user) {
    float *o[2] = {NULL, NULL}, *g[2][4];
    int64_t n[2], cnt;
    char err[600], nm[160];
    int k, d;
    memset(g, 0, sizeof g);
    if (!t_want(name)) return;
    for (d = 0; d < 2; d++)
        if (!run(d ? LT_CUDA : LT_CPU, prec, tf32, nin, ndim, shape, fn, user, &o[d], &n[d], g[d], err, sizeof err)) {
            t_check(0, name, "%s: %s", d ? "cuda" : "cpu", err);
            goto done;
        }
    snprintf(nm, sizeof nm, "%s/forward", name);
    t_close(nm, o[1], o[0], n[0], tol, tol);
    for (k = 0; k < nin; k++) {
        int j;
        for (cnt = 1, j = 0; j < ndim[k]; j++) cnt *= shape[k][j];
        snprintf(nm, sizeof nm, "%s/grad%d", name, k);
        t_close(nm, g[1][k], g[0][k], cnt, tol, tol);
    }
done:
    for (d = 0; d < 2; d++) { free(o[d]); for (k = 0; k < 4; k++) free(g[d][k]); }
}

/* ---- the cases ---------------------------------------------------------------------------------- */
static lt_tensor *f_add(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_add(c, x[0], x[1]); }
static lt_tensor *f_sub(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_sub(c, x[0], x[1]); }
static lt_tensor *f_mul(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_mul(c, x[0], x[1]); }
static lt_tensor *f_scale(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_scale(c, x[0], -1.75f); }
static lt_tensor *f_sum(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_sum(c, x[0]); }
static lt_tensor *f_mean(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_mean(c, x[0]); }
static lt_tensor *f_gelu(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_gelu(c, lt_scale(c, x[0], 3.0f)); }
static lt_tensor *f_gelu_erf(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_gelu_erf(c, lt_scale(c, x[0], 3.0f)); }
static lt_tensor *f_relu(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_relu(c, x[0]); }
static lt_tensor *f_tanh(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_tanh(c, lt_scale(c, x[0], 3.0f)); }
static lt_tensor *f_sigmoid(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_sigmoid(c, lt_scale(c, x[0], 5.0f)); }
static lt_tensor *f_softmax(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_softmax(c, lt_scale(c, x[0], 4.0f)); }
static lt_tensor *f_logsm(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_log_softmax(c, lt_scale(c, x[0], 4.0f)); }
static lt_tensor *f_ln(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_layernorm(c, x[0], x[1], x[2], 1e-5f); }
static lt_tensor *f_transpose(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_transpose(c, x[0], 1, 2); }
static lt_tensor *f_reshape(lt_ctx *c, lt_tensor **x, void *u) {
    int64_t s[2] = {-1, 6};
    (void)u;
    return lt_scale(c, lt_reshape(c, x[0], 2, s), 2.0f);
}
static lt_tensor *f_mse(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_mse_loss(c, x[0], x[1]); }
static lt_tensor *f_linear(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_linear(c, x[0], x[1], x[2]); }
static lt_tensor *f_conv1d(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_conv1d(c, x[0], x[1], x[2]); }
static lt_tensor *f_matmul(lt_ctx *c, lt_tensor **x, void *u) { return lt_matmul(c, x[0], x[1], *(int *)u); }
static int32_t g_ids[200], g_tg[200], g_len[4];
static lt_tensor *f_embedding(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_embedding(c, x[0], g_ids, 4, 37); }
static lt_tensor *f_ce(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_cross_entropy(c, lt_scale(c, x[0], 3.0f), g_tg); }
static lt_tensor *f_ce_sum(lt_ctx *c, lt_tensor **x, void *u) {
    (void)u;
    return lt_cross_entropy_sum(c, x[0], g_tg, 100.0);
}
static lt_tensor *f_attn(lt_ctx *c, lt_tensor **x, void *u) { return lt_attention(c, x[0], 4, u ? g_len : NULL); }
static lt_tensor *f_dropout(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_dropout(c, x[0], 0.5f); }
/* the Llama ops (issue 23) */
static lt_tensor *f_rms(lt_ctx *c, lt_tensor **x, void *u) { return lt_rmsnorm(c, x[0], u ? NULL : x[1], 1e-6f); }
static lt_tensor *f_silu(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_silu(c, lt_scale(c, x[0], 4.0f)); }
static lt_tensor *f_swiglu(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_swiglu(c, lt_scale(c, x[0], 4.0f), x[1]); }
static lt_tensor *f_rope(lt_ctx *c, lt_tensor **x, void *u) { (void)u; return lt_rope(c, x[0], 4, 1e4f, 7); }
static lt_tensor *f_gqa(lt_ctx *c, lt_tensor **x, void *u) {
    return lt_attention_gqa(c, x[0], x[1], x[2], 6, x[1]->shape[2] == 16 ? 1 : 2, u ? g_len : NULL);
}

static void test_ops(void) {
    static const int64_t s_ab[4][4] = {{3, 5, 6}, {5, 6}}, s_same[4][4] = {{7, 9}, {7, 9}}, s_one[4][4] = {{4, 33, 7}};
    static const int64_t s_row[4][4] = {{37, 300}}, s_ln[4][4] = {{2, 9, 77}, {77}, {77}}, s_tr[4][4] = {{2, 3, 4, 5}};
    static const int64_t s_lin[4][4] = {{2, 13, 24}, {40, 24}, {40}}, s_conv[4][4] = {{26, 24}, {24, 40}, {40}};
    static const int64_t s_emb[4][4] = {{50, 20}}, s_ce[4][4] = {{148, 91}}, s_att[4][4] = {{2, 67, 3 * 64}};
    static const int64_t s_att2[4][4] = {{3, 130, 3 * 48}};
    static const int nd3[4] = {3, 2}, nd22[4] = {2, 2}, nd1[4] = {3}, nd2[4] = {2}, ndln[4] = {3, 1, 1}, nd4[4] = {4};
    static const int ndlin[4] = {3, 2, 1}, ndconv[4] = {2, 2, 1};
    int k, fl;
    for (k = 0; k < 200; k++) {
        g_ids[k] = (k * 37 + 11) % 50 / (k % 3 + 1);   /* repeats, as token ids have */
        g_tg[k] = k % 7 == 3 ? LT_IGNORE_INDEX : (k * 13) % 91;
    }
    g_len[0] = 130; g_len[1] = 77; g_len[2] = 1;
    check_case("cuda/add-broadcast", LT_F32, 0, 1e-5, 2, nd3, s_ab, f_add, NULL);
    check_case("cuda/add-same", LT_F32, 0, 1e-5, 2, nd22, s_same, f_add, NULL);
    check_case("cuda/sub", LT_F32, 0, 1e-5, 2, nd3, s_ab, f_sub, NULL);
    check_case("cuda/mul", LT_F32, 0, 1e-5, 2, nd3, s_ab, f_mul, NULL);
    check_case("cuda/scale", LT_F32, 0, 1e-5, 1, nd1, s_one, f_scale, NULL);
    check_case("cuda/sum", LT_F32, 0, 1e-5, 1, nd1, s_one, f_sum, NULL);
    check_case("cuda/mean", LT_F32, 0, 1e-5, 1, nd1, s_one, f_mean, NULL);
    check_case("cuda/reshape", LT_F32, 0, 1e-5, 1, nd1, s_ab, f_reshape, NULL);
    check_case("cuda/gelu", LT_F32, 0, 1e-5, 1, nd1, s_one, f_gelu, NULL);
    check_case("cuda/gelu_erf", LT_F32, 0, 1e-5, 1, nd1, s_one, f_gelu_erf, NULL);
    check_case("cuda/relu", LT_F32, 0, 1e-5, 1, nd1, s_one, f_relu, NULL);
    check_case("cuda/tanh", LT_F32, 0, 1e-5, 1, nd1, s_one, f_tanh, NULL);
    check_case("cuda/sigmoid", LT_F32, 0, 1e-5, 1, nd1, s_one, f_sigmoid, NULL);
    check_case("cuda/softmax", LT_F32, 0, 1e-5, 1, nd2, s_row, f_softmax, NULL);
    check_case("cuda/log_softmax", LT_F32, 0, 1e-5, 1, nd2, s_row, f_logsm, NULL);
    check_case("cuda/layernorm", LT_F32, 0, 1e-5, 3, ndln, s_ln, f_ln, NULL);
    check_case("cuda/transpose", LT_F32, 0, 1e-5, 1, nd4, s_tr, f_transpose, NULL);
    check_case("cuda/mse", LT_F32, 0, 1e-5, 2, nd22, s_same, f_mse, NULL);
    check_case("cuda/embedding", LT_F32, 0, 1e-5, 1, nd2, s_emb, f_embedding, NULL);
    check_case("cuda/cross_entropy", LT_F32, 0, 1e-5, 1, nd2, s_ce, f_ce, NULL);
    check_case("cuda/cross_entropy_sum", LT_F32, 0, 1e-5, 1, nd2, s_ce, f_ce_sum, NULL);
    check_case("cuda/attention", LT_F32, 0, 1e-5, 1, nd1, s_att, f_attn, NULL);
    check_case("cuda/attention-lengths", LT_F32, 0, 1e-5, 1, nd1, s_att2, f_attn, g_len);
    {
        static const int64_t s_rms[4][4] = {{2, 9, 77}, {77}}, s_sw[4][4] = {{4, 33, 7}, {4, 33, 7}}, s_rope[4][4] = {{2, 9, 64}};
        static const int64_t s_gqa[4][4] = {{3, 130, 96}, {3, 130, 32}, {3, 130, 32}}, s_mqa[4][4] = {{2, 70, 96}, {2, 70, 16}, {2, 70, 16}};
        static const int ndrms[4] = {3, 1}, nd33[4] = {3, 3}, nd333[4] = {3, 3, 3};
        check_case("cuda/rmsnorm", LT_F32, 0, 1e-5, 2, ndrms, s_rms, f_rms, NULL);
        check_case("cuda/rmsnorm-noweight", LT_F32, 0, 1e-5, 1, ndrms, s_rms, f_rms, g_len);
        check_case("cuda/silu", LT_F32, 0, 1e-5, 1, nd1, s_one, f_silu, NULL);
        check_case("cuda/swiglu", LT_F32, 0, 1e-5, 2, nd33, s_sw, f_swiglu, NULL);
        check_case("cuda/rope", LT_F32, 0, 1e-5, 1, nd1, s_rope, f_rope, NULL);
        check_case("cuda/attention_gqa-lengths", LT_F32, 0, 1e-5, 3, nd333, s_gqa, f_gqa, g_len);
        check_case("cuda/attention_gqa-mqa", LT_F32, 0, 1e-5, 3, nd333, s_mqa, f_gqa, NULL);
    }
    check_case("cuda/linear", LT_F32, 0, 1e-5, 3, ndlin, s_lin, f_linear, NULL);
    check_case("cuda/conv1d", LT_F32, 0, 1e-5, 3, ndconv, s_conv, f_conv1d, NULL);
    check_case("cuda/linear-tf32", LT_F32, 1, 5e-3, 3, ndlin, s_lin, f_linear, NULL);
    check_case("cuda/linear-bf16", LT_BF16, 0, 1e-2, 3, ndlin, s_lin, f_linear, NULL);
    check_case("cuda/conv1d-bf16", LT_BF16, 0, 1e-2, 3, ndconv, s_conv, f_conv1d, NULL);
    check_case("cuda/linear-fp16", LT_F16, 0, 2e-3, 3, ndlin, s_lin, f_linear, NULL);
    for (fl = 0; fl < 4; fl++) {   /* every transpose flag, batched (3 dims) and shared b (2-D) */
        static int flags[4] = {0, LT_TRANS_A, LT_TRANS_B, LT_TRANS_A | LT_TRANS_B};
        static const int64_t s_mm[4][4][4] = {{{3, 9, 11}, {3, 11, 13}}, {{3, 11, 9}, {3, 11, 13}},
                                              {{3, 9, 11}, {3, 13, 11}}, {{3, 11, 9}, {3, 13, 11}}};
        static const int64_t s_mms[4][4][4] = {{{3, 9, 11}, {11, 13}}, {{3, 11, 9}, {11, 13}},
                                               {{3, 9, 11}, {13, 11}}, {{3, 11, 9}, {13, 11}}};
        static const int nd33[4] = {3, 3}, nd32[4] = {3, 2};
        char nm[64];
        snprintf(nm, sizeof nm, "cuda/matmul-flags%d", fl);
        check_case(nm, LT_F32, 0, 1e-5, 2, nd33, s_mm[fl], f_matmul, &flags[fl]);
        snprintf(nm, sizeof nm, "cuda/matmul-shared-flags%d", fl);
        check_case(nm, LT_F32, 0, 1e-5, 2, nd32, s_mms[fl], f_matmul, &flags[fl]);
        snprintf(nm, sizeof nm, "cuda/matmul-bf16-flags%d", fl);
        check_case(nm, LT_BF16, 0, 1e-2, 2, nd32, s_mms[fl], f_matmul, &flags[fl]);
    }
    if (t_want("cuda/dropout")) {   /* no device kernel yet: a clear error, never a wrong result */
        lt_ctx *ctx = lt_ctx_create(1);
        int64_t four = 4;
        lt_tensor *p;
        lt_set_device(ctx, LT_CUDA);
        p = lt_param(ctx, "p", 1, &four);
        t_check(f_dropout(ctx, &p, NULL) == NULL && strstr(lt_error(ctx), "dropout") && strstr(lt_error(ctx), "cuda"),
                "cuda/dropout-refused", "got: %s", lt_error(ctx));
        lt_ctx_destroy(ctx);
    }
}

/* ---- training: optimizer, clipping, scaler, GPT steps ------------------------------------------- */
typedef struct { lt_gpt *g; int32_t *in, *tg; int B, T; } gpt_step;
static lt_tensor *step_fn(lt_ctx *ctx, void *u) {
    gpt_step *s = (gpt_step *)u;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, s->T);
}
/* steps of a small GPT (AdamW, clipping 1.0, optional fp16 scaler / compile); losses[] and the final
   weights' checksum */
static int train(lt_device dev, lt_dtype prec, int compile, int steps, double *losses, double *norms, float **wout,
                 size_t *nw, char *err, size_t cap) {
    lt_ctx *ctx = lt_ctx_create(5);
    lt_gpt_config c;
    lt_gpt *g;
    lt_optim *opt;
    lt_plan *plan = NULL;
    lt_scaler sc = lt_scaler_defaults();
    int32_t in[4 * 32], tg[4 * 32];
    gpt_step s;
    uint64_t x = 12345;
    int k, i;
    if (lt_set_device(ctx, dev) != LT_OK) { snprintf(err, cap, "%s", lt_error(ctx)); lt_ctx_destroy(ctx); return 0; }
    memset(&c, 0, sizeof c);
    c.vocab = 97; c.ctx = 32; c.layers = 2; c.heads = 4; c.channels = 64;
    g = lt_gpt_create(ctx, &c);
    lt_set_precision(ctx, prec);
    sc.enabled = prec == LT_F16;
    opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    s.g = g; s.in = in; s.tg = tg; s.B = 4; s.T = 32;
    for (k = 0; k < steps && !lt_failed(ctx); k++) {
        float loss = 0;
        for (i = 0; i < 4 * 32; i++) {   /* a learnable stream: next = (3·cur + noise) mod 97 */
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            in[i] = i % 32 == 0 ? (int32_t)((x >> 33) % 97) : tg[i - 1];
            tg[i] = (int32_t)((3 * in[i] + (int32_t)((x >> 40) % 3)) % 97);
        }
        lt_zero_grad(ctx);
        if (compile) {
            if (!plan) plan = lt_compile(ctx, step_fn, &s);
            if (plan) lt_plan_run_scaled(plan, (float)lt_scaler_get_scale(&sc), &loss);
        } else {
            lt_tensor *l = step_fn(ctx, &s);
            loss = lt_item(l);
            lt_backward(ctx, lt_scaler_scale_loss(ctx, &sc, l));
        }
        lt_scaler_unscale(ctx, &sc, lt_gpt_params(g));
        norms[k] = lt_scaler_found_inf(&sc) ? -1 : lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
        lt_scaler_step(&sc, opt, 1e-3);
        lt_scaler_update(&sc);
        losses[k] = loss;
    }
    if (!lt_failed(ctx)) {
        lt_sync_params(ctx);
        *nw = lt_params_count(ctx);
        *wout = (float *)malloc(*nw * sizeof(float));
        memcpy(*wout, lt_ctx_params(ctx).p[0]->data, *nw * sizeof(float));   /* the packed block: all weights */
    }
    if (lt_failed(ctx)) snprintf(err, cap, "%s", lt_error(ctx));
    k = !lt_failed(ctx);
    lt_plan_destroy(plan);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return k;
}
static void test_training(void) {
    enum { S = 50 };
    double lc[S], lg[S], nc[S], ng[S], worst = 0, worstn = 0;
    float *wc = NULL, *wg = NULL;
    size_t n1 = 0, n2 = 0, i;
    char err[600];
    int k;
    if (t_want("cuda/train-50-fp32")) {
        if (!train(LT_CPU, LT_F32, 0, S, lc, nc, &wc, &n1, err, sizeof err) ||
            !train(LT_CUDA, LT_F32, 0, S, lg, ng, &wg, &n2, err, sizeof err)) {
            t_check(0, "cuda/train-50-fp32", "%s", err);
        } else {
            for (k = 0; k < S; k++) {
                double d = fabs(lg[k] - lc[k]) / fabs(lc[k]), dn = fabs(ng[k] - nc[k]) / fabs(nc[k]);
                if (!(d <= worst)) worst = d;
                if (!(dn <= worstn)) worstn = dn;
            }
            printf("     50 steps fp32: loss %.5f -> %.5f (cpu) vs %.5f -> %.5f (cuda); worst rel diff loss %.2e, norm %.2e\n",
                   lc[0], lc[S - 1], lg[0], lg[S - 1], worst, worstn);
            t_check(worst <= 1e-3 && lc[S - 1] < lc[0] - 0.5, "cuda/train-50-fp32", "worst relative loss difference %.3g (tol 1e-3)", worst);
            t_close("cuda/train-50-fp32-weights", wg, wc, (int64_t)(n1 < n2 ? n1 : n2), 1e-3, 1e-3);
        }
        free(wc); free(wg); wc = wg = NULL;
    }
    if (t_want("cuda/compile-graph")) {   /* the recorded step replays what the eager step does */
        if (!train(LT_CUDA, LT_F32, 0, 10, lc, nc, &wc, &n1, err, sizeof err) ||
            !train(LT_CUDA, LT_F32, 1, 10, lg, ng, &wg, &n2, err, sizeof err)) {
            t_check(0, "cuda/compile-graph", "%s", err);
        } else {
            for (worst = 0, k = 0; k < 10; k++) if (!(fabs(lg[k] - lc[k]) <= worst)) worst = fabs(lg[k] - lc[k]);
            t_check(worst <= 1e-6, "cuda/compile-graph", "eager vs graph loss differs by %.3g", worst);
            for (worst = 0, i = 0; i < n1 && i < n2; i++) if (!(fabs(wg[i] - wc[i]) <= worst)) worst = fabs(wg[i] - wc[i]);
            t_check(worst <= 1e-6, "cuda/compile-graph-weights", "max weight difference %.3g", worst);
        }
        free(wc); free(wg); wc = wg = NULL;
    }
    {   /* 16-bit: the same trajectory to within the rounding noise (fp16 with the loss scaler) */
        static const struct { const char *name; lt_dtype p; double tol; } runs16[2] = {
            {"cuda/train-bf16", LT_BF16, 2e-2}, {"cuda/train-fp16-scaler", LT_F16, 1e-2}};
        int q;
        for (q = 0; q < 2; q++) {
            if (!t_want(runs16[q].name)) continue;
            if (!train(LT_CPU, runs16[q].p, 0, 20, lc, nc, &wc, &n1, err, sizeof err) ||
                !train(LT_CUDA, runs16[q].p, 0, 20, lg, ng, &wg, &n2, err, sizeof err)) {
                t_check(0, runs16[q].name, "%s", err);
            } else {
                for (worst = 0, k = 0; k < 20; k++) if (!(fabs(lg[k] - lc[k]) / lc[k] <= worst)) worst = fabs(lg[k] - lc[k]) / lc[k];
                t_check(worst <= runs16[q].tol, runs16[q].name, "worst relative loss difference %.3g (tol %g)", worst,
                        runs16[q].tol);
            }
            free(wc); free(wg); wc = wg = NULL;
        }
    }
}

int main(int argc, char **argv) {
    lt_ctx *probe = lt_ctx_create(1);
    if (argc > 1) t_only = argv[1];
    if (lt_set_device(probe, LT_CUDA) != LT_OK) {
        printf("skip cuda: %s\n0 passed, 0 failed, 1 skipped\n", lt_error(probe));
        lt_ctx_destroy(probe);
        return 0;
    }
    printf("device: %s\n", lt_device_describe(probe));
    lt_ctx_destroy(probe);
    test_ops();
    test_training();
    printf("%d passed, %d failed\n", t_passed, t_failed);
    return t_failed ? 1 : 0;
}

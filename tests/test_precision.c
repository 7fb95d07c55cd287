/* test_precision.c - 16-bit training (lt_set_precision): matmuls against torch.autocast bf16
   (tests/ref/precision.bin, written by tests/ref/gen_precision.py), the GEMM's 16-bit packing
   against converting first, layernorm16/gelu16 against the float32 ops, the fused head against
   linear + cross-entropy, the float32 path untouched, compiled plans equal to eager steps, and the
   memory a plan saves. */

/* One bf16 rounding step at |ref|: 2^-8 |ref| rounds either way; the float32 sums run in another
   order than oneDNN's, so a value near a rounding boundary may land on the other neighbour. */
#define TP_RTOL_BF16 (1.0 / 128)
#define TP_RTOL_F16 (1.0 / 1024)
#define TP_ATOL 1e-4

/* Share of elements equal to the bit (most should be: one rounding of nearly the same sum). */
static double tp_same_bits(const float *a, const float *b, int64_t n) {
    int64_t i, same = 0;
    for (i = 0; i < n; i++) same += memcmp(&a[i], &b[i], sizeof(float)) == 0;
    return n ? (double)same / (double)n : 1.0;
}

static void tp_api(void) {
    lt_ctx *ctx = lt_ctx_create(1);
    float x[5] = {1.0f, 1.00390625f, 1.01171875f, -3.1415926f, 70000.0f}, y[5];
    int ok;
    if (!t_want("precision/api")) { lt_ctx_destroy(ctx); return; }
    ok = lt_get_precision(ctx) == LT_F32 && lt_set_precision(ctx, LT_BF16) == LT_OK && lt_get_precision(ctx) == LT_BF16;
    ok = ok && lt_set_precision(ctx, (lt_dtype)7) == LT_ERR_ARG && lt_get_precision(ctx) == LT_BF16;
    ok = ok && strstr(lt_error(ctx), "lt_set_precision") != NULL && lt_get_precision(NULL) == LT_F32;
    ok = ok && !strcmp(lt_precision_name(LT_F16), "fp16") && !strcmp(lt_precision_name(LT_BF16), "bf16");
    t_check(ok, "precision/api", "set/get precision, bad value: %s", lt_error(ctx));
    /* bf16 ties to even: 1 + 2^-8 -> 1, 1 + 3*2^-8 -> 1 + 2^-6; fp16: 70000 -> inf */
    lt_round_to_precision(LT_BF16, x, y, 5);
    ok = y[0] == 1.0f && y[1] == 1.0f && y[2] == 1.015625f && y[3] == lt_bf16_to_f32(lt_f32_to_bf16(x[3]));
    lt_round_to_precision(LT_F16, x, x, 5);
    ok = ok && isinf(x[4]) && x[3] == lt_f16_to_f32(lt_f32_to_f16(-3.1415926f));
    t_check(ok, "precision/round_to_precision", "bf16 %.9g %.9g %.9g, fp16 %.9g", y[0], y[1], y[2], x[4]);
    lt_ctx_destroy(ctx);
}

static void tp_round_large(void) {
    /* the blocked, threaded array form against the scalar conversions */
    size_t n = 300001, i, bad = 0;
    float *x = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float));
    lt_rng r;
    if (!t_want("precision/round_large")) { free(x); free(y); return; }
    lt_rng_seed(&r, 3);
    for (i = 0; i < n; i++) x[i] = (float)(lt_rng_normal(&r) * 1e3);
    lt_round_to_precision(LT_F16, x, y, n);
    for (i = 0; i < n; i++) {
        float want = lt_f16_to_f32(lt_f32_to_f16(x[i]));
        bad += memcmp(&y[i], &want, 4) != 0;
    }
    lt_round_to_precision(LT_BF16, x, y, n);
    for (i = 0; i < n; i++) {
        float want = lt_bf16_to_f32(lt_f32_to_bf16(x[i]));
        bad += memcmp(&y[i], &want, 4) != 0;
    }
    t_check(bad == 0, "precision/round_large", "%zu of %zu values differ from the scalar conversions", bad, 2 * n);
    free(x);
    free(y);
}

/* One reference case: inputs as parameters (read in place) and as activations (x*1: the record
   saves 16-bit copies); both against torch, and the two to the bit. */
static lt_tensor *tp_op(lt_ctx *ctx, const char *cid, lt_tensor **x, int flags) {
    if (!strncmp(cid, "linear", 6) || !strncmp(cid, "fp16_linear", 11)) return lt_linear(ctx, x[0], x[1], x[2]);
    if (!strncmp(cid, "conv1d", 6)) return lt_conv1d(ctx, x[0], x[1], x[2]);
    return lt_matmul(ctx, x[0], x[1], flags);
}

static int tp_case_run(t_ref *ref, const char *cid, lt_dtype prec, int as_activation, float **got, int64_t *n) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_tensor *p[3] = {NULL, NULL, NULL}, *x[3] = {NULL, NULL, NULL}, *y, *g;
    char nm[160];
    int k, nin = 0, ok = 1;
    t_arr *args, *ga;
    snprintf(nm, sizeof nm, "%s.args", cid);
    args = t_ref_get(ref, nm);
    snprintf(nm, sizeof nm, "%s.g", cid);
    ga = t_ref_get(ref, nm);
    for (k = 0; k < 3; k++) {
        t_arr *a;
        snprintf(nm, sizeof nm, "%s.x%d", cid, k);
        if (!(a = t_ref_get(ref, nm))) break;
        snprintf(nm, sizeof nm, "x%d", k);
        p[k] = lt_param(ctx, nm, a->ndim, a->shape);
        memcpy(p[k]->data, a->data, (size_t)a->n * sizeof(float));
        x[k] = as_activation && k < 2 ? lt_scale(ctx, p[k], 1.0f) : p[k];
        nin++;
    }
    lt_set_precision(ctx, prec);
    if (as_activation == 2) setenv("LTRAIN_EAGER_COPIES16", "1", 1);
    y = tp_op(ctx, cid, x, args ? (int)args->data[0] : 0);
    unsetenv("LTRAIN_EAGER_COPIES16");
    g = y && ga ? lt_tensor_from(ctx, ga->data, y->ndim, y->shape) : NULL;
    lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, y, g)));
    if (lt_failed(ctx) || !ga) {
        printf("     %s: %s\n", cid, lt_error(ctx));
        ok = 0;
    } else {
        got[0] = (float *)malloc((size_t)y->n * sizeof(float));
        memcpy(got[0], y->data, (size_t)y->n * sizeof(float));
        n[0] = y->n;
        for (k = 0; k < nin; k++) {
            got[k + 1] = (float *)malloc((size_t)p[k]->n * sizeof(float));
            memcpy(got[k + 1], p[k]->grad, (size_t)p[k]->n * sizeof(float));
            n[k + 1] = p[k]->n;
        }
        /* activations (x*1: not 16-bit values yet) are saved as 16 bit (half the floats), eager or
           not (as_activation 2: LTRAIN_EAGER_COPIES16=1, every copy kept), parameters never */
        if (as_activation && y->node && !(y->node->save[0] && y->node->n_save[0] == (x[0]->n + 1) / 2)) ok = 0;
        if (!as_activation && y->node && (y->node->save[0] || y->node->save[1])) ok = 0;
        if (!ok) printf("     %s: unexpected 16-bit copies in the record\n", cid);
    }
    lt_ctx_destroy(ctx);
    return ok ? nin : -1;
}

static void tp_case(t_ref *ref, const char *cid, lt_dtype prec) {
    static const char *const what[4] = {"out", "g0", "g1", "g2"};
    float *gp[4] = {NULL, NULL, NULL, NULL}, *ga[4] = {NULL, NULL, NULL, NULL}, *gc[4] = {NULL, NULL, NULL, NULL};
    int64_t np[4], na[4], nc[4];
    int nin, k;
    char nm[200];
    double rtol = prec == LT_F16 ? TP_RTOL_F16 : TP_RTOL_BF16;
    snprintf(nm, sizeof nm, "precision/%s", cid);
    if (!t_want(nm)) return;
    nin = tp_case_run(ref, cid, prec, 0, gp, np);
    if (nin < 0 || tp_case_run(ref, cid, prec, 1, ga, na) != nin || tp_case_run(ref, cid, prec, 2, gc, nc) != nin) {
        t_check(0, nm, "the case did not run");
    } else {
        for (k = 0; k <= nin; k++) {
            t_arr *r;
            char rn[160], cn[240];
            double same;
            snprintf(rn, sizeof rn, "%s.%s", cid, what[k]);
            r = t_ref_get(ref, rn);
            snprintf(cn, sizeof cn, "%s/%s", nm, what[k]);
            if (!r || r->n != np[k]) { t_check(0, cn, "reference %s missing or of another size", rn); continue; }
            t_close(cn, gp[k], r->data, r->n, TP_ATOL, rtol);
            /* gradients are float32 sums (not rounded, torch's are bf16/fp16): rounded, they match */
            if (k > 0) lt_round_to_precision(prec, gp[k], gp[k], (size_t)r->n);
            same = tp_same_bits(gp[k], r->data, r->n);
            snprintf(cn, sizeof cn, "%s/%s_bits", nm, what[k]);
            t_check(same >= 0.97, cn, "only %.1f%% equal to torch's bits (expect nearly all)", 100 * same);
            snprintf(cn, sizeof cn, "%s/%s_saved_equals_param", nm, what[k]);
            if (k > 0) lt_round_to_precision(prec, ga[k], ga[k], (size_t)np[k]);
            if (k > 0) lt_round_to_precision(prec, gc[k], gc[k], (size_t)np[k]);
            t_check(memcmp(gp[k], ga[k], (size_t)np[k] * sizeof(float)) == 0 &&
                    memcmp(gp[k], gc[k], (size_t)np[k] * sizeof(float)) == 0, cn,
                    "16-bit copies and parameters read in place differ");
        }
    }
    for (k = 0; k < 4; k++) { free(gp[k]); free(ga[k]); free(gc[k]); }
}

static void tp_refs(void) {
    t_ref ref;
    char path[512];
    snprintf(path, sizeof path, "%s/precision.bin", t_ref_dir());
    if (!t_ref_load(&ref, path)) { t_check(0, "precision/refs", "cannot read %s", path); return; }
    tp_case(&ref, "linear/2x24x40->36", LT_BF16);
    tp_case(&ref, "conv1d/48x40->36", LT_BF16);
    tp_case(&ref, "matmul_tb/4x24x16.4x20x16", LT_BF16);
    tp_case(&ref, "matmul_ta/3x16x24.3x16x20", LT_BF16);
    tp_case(&ref, "matmul_shared/2x24x32.32x20", LT_BF16);
    tp_case(&ref, "fp16_linear/48x40->36", LT_F16);
    t_ref_free(&ref);
}

/* A ctx switched to bf16 and back computes the float32 ops exactly as a fresh one. */
static void tp_fp32_unchanged(void) {
    lt_ctx *c1 = lt_ctx_create(4), *c2 = lt_ctx_create(4);
    int64_t xs[2] = {37, 50}, ws[2] = {29, 50};
    lt_tensor *x1, *w1, *x2, *w2, *y1, *y2;
    int ok;
    if (!t_want("precision/fp32_unchanged")) { lt_ctx_destroy(c1); lt_ctx_destroy(c2); return; }
    x1 = lt_param(c1, "x", 2, xs); w1 = lt_param(c1, "w", 2, ws);
    x2 = lt_param(c2, "x", 2, xs); w2 = lt_param(c2, "w", 2, ws);
    lt_init_normal(c1, x1, 0, 1); lt_init_normal(c1, w1, 0, 1);
    lt_init_normal(c2, x2, 0, 1); lt_init_normal(c2, w2, 0, 1);
    lt_set_precision(c2, LT_BF16);
    lt_set_precision(c2, LT_F32);
    y1 = lt_linear(c1, x1, w1, NULL);
    y2 = lt_linear(c2, x2, w2, NULL);
    lt_backward(c1, lt_sum(c1, lt_mul(c1, y1, y1)));
    lt_backward(c2, lt_sum(c2, lt_mul(c2, y2, y2)));
    ok = y1 && y2 && y2->node->op == LT__OP(linear) && !memcmp(y1->data, y2->data, (size_t)y1->n * 4) &&
         !memcmp(x1->grad, x2->grad, (size_t)x1->n * 4) && !memcmp(w1->grad, w2->grad, (size_t)w1->n * 4);
    t_check(ok, "precision/fp32_unchanged", "LT_F32 after LT_BF16 differs from a fresh context");
    lt_ctx_destroy(c1);
    lt_ctx_destroy(c2);
}

/* fp16's range: products past 65504 round to inf, as CUDA's fp16 autocast gives. */
static void tp_fp16_overflow(void) {
    lt_ctx *ctx = lt_ctx_create(1);
    int64_t s[2] = {1, 4}, ws[2] = {1, 4};
    float xv[4] = {300, 300, 300, 300}, wv[4] = {100, 100, 100, 100};
    lt_tensor *x = lt_tensor_from(ctx, xv, 2, s), *w = lt_tensor_from(ctx, wv, 2, ws), *y;
    if (!t_want("precision/fp16_overflow")) { lt_ctx_destroy(ctx); return; }
    lt_set_precision(ctx, LT_F16);
    y = lt_linear(ctx, x, w, NULL);   /* 120000 */
    t_check(y && isinf(y->data[0]) && y->data[0] > 0, "precision/fp16_overflow", "got %g", y ? y->data[0] : 0.0);
    lt_set_precision(ctx, LT_BF16);
    y = lt_linear(ctx, x, w, NULL);
    t_check(y && y->data[0] == 119808.0f, "precision/bf16_range", "got %.9g (bf16(120000) = 119808)",
            y ? y->data[0] : 0.0);
    lt_ctx_destroy(ctx);
}

/* ---- the GEMM's 16-bit packing: converting while packing equals converting first ---------------- */
/* For every kernel this CPU runs and every transpose: lt__sgemm_ex with 16-bit operands (widened)
   and float32 operands (rounded as packed) against the float32 GEMM of the converted arrays, to the
   bit; the forward epilogue (bias, rounding) against rounding afterwards.  M x N x K: edges in
   every direction with K over one KC block (37 x 45 x 300), and whole slivers with a second K
   block of a multiple of 8 (37 x 96 x 320: the packers for B's rows fetched ahead, lt__gsrc's
   warm).  Returns the failed products, *runs counts them all. */
static int tp_gemm16_shape(int M, int N, int K, int *runs) {
    float *a = (float *)malloc((size_t)M * K * 4), *b = (float *)malloc((size_t)K * N * 4), *ar = (float *)malloc((size_t)M * K * 4);
    float *br = (float *)malloc((size_t)K * N * 4), *c1 = (float *)malloc((size_t)M * N * 4), *c2 = (float *)malloc((size_t)M * N * 4);
    float *bias = (float *)malloc((size_t)N * 4), *b16 = (float *)malloc((size_t)N * 4);
    uint16_t *ah = (uint16_t *)malloc((size_t)M * K * 2), *bh = (uint16_t *)malloc((size_t)K * N * 2);
    lt_rng r;
    int id, ta, tb, pi, bad = 0, i, j;
    lt_rng_seed(&r, 5);
    for (i = 0; i < M * K; i++) a[i] = (float)lt_rng_normal(&r);
    for (i = 0; i < K * N; i++) b[i] = (float)lt_rng_normal(&r);
    for (i = 0; i < N; i++) bias[i] = (float)lt_rng_normal(&r);
    for (pi = 0; pi < 2; pi++) {
        lt_dtype p = pi ? LT_F16 : LT_BF16;
        lt_round_to_precision(p, a, ar, M * K);
        lt_round_to_precision(p, b, br, K * N);
        lt_round_to_precision(p, bias, b16, N);
        if (p == LT_F16) { lt_f32_to_f16_array(a, ah, M * K); lt_f32_to_f16_array(b, bh, K * N); }
        else { lt_f32_to_bf16_array(a, ah, M * K); lt_f32_to_bf16_array(b, bh, K * N); }
        for (id = 0; id < LT__GEMM_NKERNELS; id++) {
            if (!lt__gemm_supported(id)) continue;
            for (ta = 0; ta < 2; ta++)
                for (tb = 0; tb < 2; tb++) {
                    int64_t lda = ta ? M : K, ldb = tb ? K : N;
                    int v;
                    lt__sgemm_with(id, ta, tb, M, N, K, 1.0f, ar, lda, br, ldb, 0.0f, c1, N);
                    for (v = 0; v < 2; v++) {   /* 16-bit copies, then float32 rounded as packed */
                        lt__gsrc sa, sb;
                        sa = lt__gsrc_f32(v ? a : NULL); sa.h = v ? NULL : ah; sa.p = (int)p;
                        sb = lt__gsrc_f32(v ? b : NULL); sb.h = v ? NULL : bh; sb.p = (int)p;
                        for (i = 0; i < M * N; i++) c2[i] = 1.0f;
                        lt__sgemm_ex(id, ta, tb, M, N, K, 1.0f, sa, lda, sb, ldb, 0.0f, c2, N, NULL);
                        bad += memcmp(c1, c2, (size_t)M * N * 4) != 0;
                        (*runs)++;
                    }
                    {   /* epilogue: round16(c + round16(bias)) */
                        lt__gepi e;
                        lt__gsrc sa, sb;
                        float *want = (float *)malloc((size_t)M * N * 4);
                        e = lt__gepi_of((int)p, bias);
                        sa = lt__gsrc_f32(NULL); sa.h = ah; sa.p = (int)p;
                        sb = lt__gsrc_f32(b); sb.p = (int)p;
                        for (i = 0; i < M; i++) for (j = 0; j < N; j++) want[i * N + j] = c1[i * N + j] + b16[j];
                        lt_round_to_precision(p, want, want, (size_t)M * N);
                        lt__sgemm_ex(id, ta, tb, M, N, K, 1.0f, sa, lda, sb, ldb, 0.0f, c2, N, &e);
                        bad += memcmp(want, c2, (size_t)M * N * 4) != 0;
                        (*runs)++;
                        free(want);
                    }
                }
        }
    }
    free(a); free(b); free(ar); free(br); free(c1); free(c2); free(ah); free(bh); free(bias); free(b16);
    return bad;
}
static void tp_gemm16(void) {
    int bad, runs = 0;
    if (!t_want("precision/gemm16")) return;
    setenv("LT_GEMM16", "convert", 1);   /* the bf16 pair kernel sums in another order: tp_gemm_bf16_tiles */
    bad = tp_gemm16_shape(37, 45, 300, &runs) + tp_gemm16_shape(37, 96, 320, &runs);
    t_check(bad == 0, "precision/gemm16", "%d of %d products differ from the float32 GEMM of converted operands", bad,
            runs);
    unsetenv("LT_GEMM16");
}

/* ---- a 16-bit product written only as 16-bit values (lt__gepi's z without maxima) --------------- */
/* lt__sgemm_ex with z and no pm (a compiled plan's q, k, v: lt__gemm16_z) against the same product
   with the forward's epilogue into float32, narrowed: to the bit, for every kernel, K in one KC
   piece (lt__gemm_block's one block of scratch, the tiles' epilogue) and over one
   (lt__gemm_block_z), split by rows and by columns, 1 and 2 threads, with and without a bias. */
static void tp_gemm16_z(void) {
    static const int64_t shp[3][3] = {{150, 70, 200}, {150, 70, 300}, {20, 600, 200}};   /* M, N, K; over 2^21 FLOPs: threaded */
    int id, pi, si, nt, v, bad = 0, runs = 0, base = lt_get_threads();
    int64_t i;
    lt_rng r;
    if (!t_want("precision/gemm16_z")) return;
    lt_rng_seed(&r, 23);
    for (si = 0; si < 3; si++) {
        int64_t M = shp[si][0], N = shp[si][1], K = shp[si][2];
        float *a = (float *)malloc((size_t)(M * K) * 4), *b = (float *)malloc((size_t)(K * N) * 4);
        float *c = (float *)malloc((size_t)(M * N) * 4), *bias = (float *)malloc((size_t)N * 4);
        float *scr = (float *)malloc((size_t)(2 * M * LT__Z_COLS) * 4);
        uint16_t *want = (uint16_t *)malloc((size_t)(M * N) * 2), *got = (uint16_t *)malloc((size_t)(M * N) * 2);
        for (i = 0; i < M * K; i++) a[i] = (float)lt_rng_normal(&r);
        for (i = 0; i < K * N; i++) b[i] = (float)lt_rng_normal(&r);
        for (i = 0; i < N; i++) bias[i] = (float)lt_rng_normal(&r);
        for (pi = 0; pi < 2; pi++)
            for (id = 0; id < LT__GEMM_NKERNELS; id++) {
                lt_dtype p = pi ? LT_F16 : LT_BF16;
                lt__gsrc sa, sb;
                if (!lt__gemm_supported(id)) continue;
                sa = lt__gsrc_f32(a); sa.p = (int)p;
                sb = lt__gsrc_f32(b); sb.p = (int)p;
                for (nt = 1; nt <= 2; nt++)
                    for (v = 0; v < 2; v++) {
                        lt__gepi e = lt__gepi_of((int)p, v ? bias : NULL);
                        lt_set_threads(nt);
                        lt__sgemm_ex(id, 0, 0, M, N, K, 1.0f, sa, K, sb, N, 0.0f, c, N, &e);
                        if (p == LT_F16) lt_f32_to_f16_array(c, want, (size_t)(M * N));
                        else lt_f32_to_bf16_array(c, want, (size_t)(M * N));
                        memset(got, 0xAA, (size_t)(M * N) * 2);
                        e.z = got;
                        e.ldz = N;
                        e.nscr = nt;
                        lt__sgemm_ex(id, 0, 0, M, N, K, 1.0f, sa, K, sb, N, 0.0f, scr, LT__Z_COLS, &e);
                        if (memcmp(want, got, (size_t)(M * N) * 2) != 0) {
                            bad++;
                            printf("     %s, kernel %d, %lld x %lld x %lld, %d threads, bias %d: differs\n",
                                   lt_precision_name(p), id, (long long)M, (long long)N, (long long)K, nt, v);
                        }
                        runs++;
                    }
            }
        free(a); free(b); free(c); free(bias); free(scr); free(want); free(got);
    }
    lt_set_threads(base);
    t_check(bad == 0 && runs > 0, "precision/gemm16_z", "%d of %d products into 16-bit values differ", bad, runs);
}

/* ---- the 16-bit conversions of packing, epilogue and bias gradient at every level ---------------- */
/* lt__gsrc_get (AVX-512 and AVX2 paths), the AVX2 epilogue and lt__bias_grad16 against the scalar
   code, to the bit, on values that test the rounding: NaNs (payloads, signs), infinities, zeros,
   subnormals, halfway cases, values past fp16's range; lengths that leave a ragged end. */
static float tp_one(const lt__gsrc *s, int64_t i) {   /* the scalar conversions, by the public API */
    if (s->gelu) return lt__gelu16_y[s->p == LT_F16][s->h[i]];
    if (s->h) return s->p == LT_F16 ? lt_f16_to_f32(s->h[i]) : lt_bf16_to_f32(s->h[i]);
    return s->p == LT_F16 ? lt_f16_to_f32(lt_f32_to_f16(s->f[i])) : lt_bf16_to_f32(lt_f32_to_bf16(s->f[i]));
}
static void tp_convert16_levels(void) {
    enum { N = 83, R = 29, O = 77 };
    static const uint32_t special[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x7FFFE000u, 0xFF812345u, 0x7F800000u, 0xFF800000u, 0x00000000u,
                                       0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00400000u, 0x3F808000u, 0x3F818000u,
                                       0x3F80FFFFu, 0x47800000u, 0x477FF000u, 0x477FE000u, 0x33000000u, 0x33000001u,
                                       0x387FC000u, 0xC7800000u, 0x7F7FFFFFu, 0x3DCCCCCDu};
    float x[N], b[N], want[N], got[N], gy[R * O], gb1[O], gb2[O], gbw[O];
    uint16_t h[N], gh[R * O], gh2[R * O];
    lt_rng r;
    int pi, kind, lvl, bad = 0, runs = 0, i, j, nt, base = lt_get_threads();
    if (!t_want("precision/convert16_levels")) return;
    lt_rng_seed(&r, 17);
    for (i = 0; i < N; i++) {
        uint32_t u = special[i % (int)(sizeof special / sizeof special[0])];
        if (i >= 2 * (int)(sizeof special / sizeof special[0])) x[i] = (float)(lt_rng_normal(&r) * 3.0);
        else memcpy(&x[i], &u, 4);
        b[i] = (float)lt_rng_normal(&r);
    }
    for (i = 0; i < R * O; i++) gy[i] = (float)lt_rng_normal(&r) * (i % 11 == 0 ? 70000.0f : 1.0f);
    for (pi = 0; pi < 2; pi++) {
        lt_dtype p = pi ? LT_F16 : LT_BF16;
        lt__gelu16_tables(p);
        if (p == LT_F16) { lt_f32_to_f16_array(x, h, N); lt_f32_to_f16_array(gy, gh, R * O); }
        else { lt_f32_to_bf16_array(x, h, N); lt_f32_to_bf16_array(gy, gh, R * O); }
        for (kind = 0; kind < 3; kind++) {   /* float32 rounded, 16-bit widened, gelu16's table */
            lt__gsrc s;
            s = lt__gsrc_f32(kind == 0 ? x : NULL); s.h = kind ? h : NULL; s.p = (int)p; s.gelu = kind == 2;
            for (i = 0; i < N; i++) want[i] = tp_one(&s, i);
            for (lvl = 1; lvl <= 2; lvl++) {
                if (!lt__gemm_supported(lvl == 2 ? LT__GEMM_AVX512 : LT__GEMM_AVX2)) continue;
                for (i = 0; i < N; i++) got[i] = -1.0f;
                lt__gsrc_get(lvl, &s, 0, N, got);
                if (memcmp(want, got, sizeof want) != 0) {
                    bad++;
                    printf("     %s, source %d, level %d: differs\n", lt_precision_name(p), kind, lvl);
                }
                runs++;
            }
        }
        if (lt__gemm_supported(LT__GEMM_AVX2)) {   /* the AVX2 epilogue: round16(y + bias) */
            for (i = 0; i < N; i++) got[i] = x[i];
            {
                lt__gepi e = lt__gepi_of((int)p, NULL);
                float b16[N];
                lt__round16(p, b, b16, N);
                for (i = 0; i < N; i++) want[i] = x[i] + b16[i];
                lt__round16(p, want, want, N);
                e.bias = b;
                lt__gemm_epilogue(1, &e, got, N, 1, N);
                if (memcmp(want, got, sizeof want) != 0) {
                    bad++;
                    printf("     %s: the AVX2 epilogue differs\n", lt_precision_name(p));
                }
                runs++;
            }
        }
        for (j = 0; j < O; j++) {   /* the bias gradient: Σ_rows round16(dy), rows in order */
            float acc = 0.5f;
            lt__gsrc s;
            s = lt__gsrc_f32(NULL); s.h = gh; s.p = (int)p;
            for (i = 0; i < R; i++) acc += tp_one(&s, (int64_t)i * O + j);
            gbw[j] = acc;
        }
        for (nt = 1; nt <= 2; nt++)
            for (kind = 0; kind < 3; kind++) {   /* dy float32, 16-bit, or float32 copied into gh2 on the way */
                static const char *const kn[3] = {"float32 dy", "16-bit dy", "float32 dy and its copy"};
                lt_set_threads(nt);
                for (j = 0; j < O; j++) gb1[j] = gb2[j] = 0.5f;
                memset(gh2, 0xAA, sizeof gh2);
                lt__bias_grad16(p, kind == 1 ? gb1 : gb2, kind == 1 ? NULL : gy,
                                kind == 1 ? gh : kind ? gh2 : NULL, O, R, O);
                if (memcmp(kind == 1 ? gb1 : gb2, gbw, sizeof gbw) != 0) {
                    bad++;
                    printf("     %s, %d threads, %s: the bias gradient differs\n", lt_precision_name(p), nt, kn[kind]);
                }
                if (kind == 2 && memcmp(gh2, gh, sizeof gh) != 0) {
                    bad++;
                    printf("     %s, %d threads: the copy of dy differs from lt_f32_to_*_array's\n",
                           lt_precision_name(p), nt);
                }
                runs++;
            }
        lt_set_threads(base);
    }
    t_check(bad == 0, "precision/convert16_levels", "%d of %d conversions differ from the scalar code's bits", bad,
            runs);
}

/* ---- the AVX512_BF16 pair kernel and the AMX tile kernel: bf16 products two k at a time ------ */
/* Against the float32 GEMM of the rounded operands, within 2^-20 of Σ_k |a_ik b_kj| (the sums'
   rounding differs only in order): every transpose, odd K (a zero partner), a K of one step and
   over one KC block, 16-bit and float32 (rounded while packed) sources, the epilogue, and the
   same bits at 1 and 2 threads, and A or B a gelu operand, as is and transposed.  amx 0: the pair kernel (LT_GEMM16=pairs), skipped where the
   CPU lacks AVX512_BF16; amx 1: the kernel bf16 products get by default, which must be the AMX
   one, skipped where the CPU or the OS has no AMX tiles. */
static void tp_mag(const float *a, const float *b, int M, int N, int K, int ta, int tb, float *mag) {
    int i, j, k;   /* mag = Σ_k |a_ik b_kj|, the scale of the rounding */
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double s = 0;
            for (k = 0; k < K; k++) s += fabs((double)a[ta ? k * M + i : i * K + k] * b[tb ? j * K + k : k * N + j]);
            mag[i * N + j] = (float)s;
        }
}
static void tp_gemm_bf16_tiles(int amx) {
    static const int shapes[][3] = {{37, 45, 301}, {14, 32, 1}, {29, 70, 7}, {130, 33, 512}, {20, 400, 300},
                                       {22, 64, 33}, {64, 96, 64}, {200, 300, 1000}, {40, 1100, 301}, {18, 40, 49}};
    /* last slivers: 9, 14, 1, 4, 6, 8, 8, 4, 12, 4 rows of 14 (the pair kernel); the last K block
       mod 32: 0, 1, 7, 8, 12, 13, 17 (both halves of a 32-value run cut short); N 1100: over one B
       panel (NC 1024 for AMX) */
    const char *test = amx ? "precision/gemm_bf16amx" : "precision/gemm_bf16dp";
    lt__gemm_impl g = lt__gemm_impl_of(LT__GEMM_AVX512);
    int si, ta, tb, v, bad = 0, runs = 0, worst_i = -1, base = lt_get_threads();
    double worst = 0;
    if (!t_want(test)) return;
    if (amx) unsetenv("LT_GEMM16");
    else setenv("LT_GEMM16", "pairs", 1);   /* the pair kernel wherever the CPU runs it, not only where it is the default */
    if (!lt__gemm_supported(LT__GEMM_AVX512) || (lt__gemm_dp(&g), !g.dp) || g.amx != amx) {
        t_skip(test, amx ? "this CPU or OS has no AMX tiles" : "this CPU has no AVX512_BF16");
        unsetenv("LT_GEMM16");
        return;
    }
    lt__gelu16_tables(LT_BF16);   /* (the gelu operand below) */
    if (lt__gemm_pick() == LT__GEMM_AVX512)   /* (LT_GEMM may pick another kernel for the products) */
        t_check(strstr(lt_kernel_name_for(LT_BF16), amx ? "amx" : "pairs") != NULL, "precision/gemm_bf16/name",
                "bf16 runs on %s", lt_kernel_name_for(LT_BF16));
    for (si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++) {
        int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2], i;
        float *a = (float *)malloc((size_t)M * K * 4), *b = (float *)malloc((size_t)K * N * 4);
        float *ar = (float *)malloc((size_t)M * K * 4), *br = (float *)malloc((size_t)K * N * 4);
        float *c1 = (float *)malloc((size_t)M * N * 4), *c2 = (float *)malloc((size_t)M * N * 4);
        float *c3 = (float *)malloc((size_t)M * N * 4), *mag = (float *)malloc((size_t)M * N * 4);
        uint16_t *ah = (uint16_t *)malloc((size_t)M * K * 2), *bh = (uint16_t *)malloc((size_t)K * N * 2);
        lt_rng r;
        lt_rng_seed(&r, 11 + (uint64_t)si);
        for (i = 0; i < M * K; i++) a[i] = (float)lt_rng_normal(&r);
        for (i = 0; i < K * N; i++) b[i] = (float)lt_rng_normal(&r);
        lt_round_to_precision(LT_BF16, a, ar, M * K);
        lt_round_to_precision(LT_BF16, b, br, K * N);
        lt_f32_to_bf16_array(a, ah, M * K);
        lt_f32_to_bf16_array(b, bh, K * N);
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++) {
                int64_t lda = ta ? M : K, ldb = tb ? K : N;
                tp_mag(ar, br, M, N, K, ta, tb, mag);
                lt__sgemm_with(LT__GEMM_AVX512, ta, tb, M, N, K, 1.0f, ar, lda, br, ldb, 0.0f, c1, N);
                for (v = 0; v < 2; v++) {   /* 16-bit copies, then float32 rounded as packed */
                    lt__gsrc sa, sb;
                    int nt;
                    sa = lt__gsrc_f32(v ? a : NULL); sa.h = v ? NULL : ah; sa.p = LT_BF16;
                    sb = lt__gsrc_f32(v ? b : NULL); sb.h = v ? NULL : bh; sb.p = LT_BF16;
                    for (nt = 1; nt <= 2; nt++) {
                        float *out = nt == 1 ? c2 : c3;
                        lt_set_threads(nt);
                        for (i = 0; i < M * N; i++) out[i] = 7.0f;   /* beta = 0 must not read it */
                        lt__sgemm_ex(LT__GEMM_AVX512, ta, tb, M, N, K, 1.0f, sa, lda, sb, ldb, 0.0f, out, N, NULL);
                    }
                    lt_set_threads(base);
                    bad += memcmp(c2, c3, (size_t)M * N * 4) != 0;   /* thread-count invariant */
                    for (i = 0; i < M * N; i++) {
                        double e = fabs((double)c2[i] - c1[i]) / ((double)mag[i] + 1e-30);
                        if (e > worst) { worst = e; worst_i = si; }
                        bad += !(e <= 0x1p-20);
                    }
                    runs++;
                }
                {   /* beta = 1 and the 16-bit epilogue go through the same kernel */
                    lt__gsrc sa, sb;
                    sa = lt__gsrc_f32(NULL); sa.h = ah; sa.p = LT_BF16;
                    sb = lt__gsrc_f32(NULL); sb.h = bh; sb.p = LT_BF16;
                    for (i = 0; i < M * N; i++) c2[i] = 1.0f;
                    lt__sgemm_ex(LT__GEMM_AVX512, ta, tb, M, N, K, 1.0f, sa, lda, sb, ldb, 1.0f, c2, N, NULL);
                    for (i = 0; i < M * N; i++) bad += !(fabs((double)c2[i] - 1.0 - c1[i]) <= 0x1p-20 * mag[i] + 1e-6);
                    runs++;
                }
            }
        for (v = 0; v < 4; v++) {   /* A (v < 2), then B, a gelu operand: round16(gelu(h)) recomputed while packed */
            lt__gsrc sa, sb;
            int64_t lda, ldb;
            ta = v < 2 ? v : 0;
            tb = v < 2 ? 0 : v - 2;
            lda = ta ? M : K;
            ldb = tb ? K : N;
            sa = lt__gsrc_f32(NULL); sa.h = ah; sa.p = LT_BF16; sa.gelu = v < 2;
            sb = lt__gsrc_f32(NULL); sb.h = bh; sb.p = LT_BF16; sb.gelu = v >= 2;
            lt_round_to_precision(LT_BF16, a, ar, M * K);
            lt_round_to_precision(LT_BF16, b, br, K * N);
            if (v < 2) for (i = 0; i < M * K; i++) ar[i] = tp_one(&sa, i);
            else for (i = 0; i < K * N; i++) br[i] = tp_one(&sb, i);
            tp_mag(ar, br, M, N, K, ta, tb, mag);
            lt__sgemm_with(LT__GEMM_AVX512, ta, tb, M, N, K, 1.0f, ar, lda, br, ldb, 0.0f, c1, N);
            lt__sgemm_ex(LT__GEMM_AVX512, ta, tb, M, N, K, 1.0f, sa, lda, sb, ldb, 0.0f, c2, N, NULL);
            for (i = 0; i < M * N; i++) bad += !(fabs((double)c2[i] - c1[i]) <= 0x1p-20 * mag[i]);
            runs++;
        }
        free(a); free(b); free(ar); free(br); free(c1); free(c2); free(c3); free(mag); free(ah); free(bh);
    }
    printf("     bf16 %s kernel: worst |error| / sum|a b| = %.3g (shape %d)\n", amx ? "AMX" : "pair", worst, worst_i);
    t_check(bad == 0, test, "%d elements off (of %d products)", bad, runs);
    unsetenv("LT_GEMM16");
}

/* ---- layernorm16, gelu16 against the float32 ops ------------------------------------------------- */
/* y and the gradients of sum(y·g) for x (an activation: the record keeps 16-bit copies), w, b. */
static void tp_unary_run(lt_dtype prec, int op, const float *xv, const float *gv, int64_t R, int64_t C, float *y,
                         float *gx, float *gw, float *gb, int *reads16) {
    lt_ctx *ctx = lt_ctx_create(1);
    int64_t s[2], cs[1];
    lt_tensor *xp, *w, *b, *x, *out, *g;
    s[0] = R; s[1] = C; cs[0] = C;
    xp = lt_param(ctx, "x", 2, s);
    w = lt_param(ctx, "w", 1, cs);
    b = lt_param(ctx, "b", 1, cs);
    memcpy(xp->data, xv, (size_t)(R * C) * 4);
    {
        int64_t j;
        for (j = 0; j < C; j++) { w->data[j] = 1.0f + 0.01f * (float)(j % 7); b->data[j] = 0.1f * (float)(j % 3); }
    }
    lt_set_precision(ctx, prec);
    x = lt_scale(ctx, xp, 1.0f);
    out = op ? lt_gelu(ctx, x) : lt_layernorm(ctx, x, w, b, 1e-5f);
    g = lt_tensor_from(ctx, gv, 2, s);
    lt_set_precision(ctx, LT_F32);
    lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, out, g)));
    if (lt_failed(ctx)) printf("     tp_unary_run: %s\n", lt_error(ctx));
    memcpy(y, out->data, (size_t)(R * C) * 4);
    memcpy(gx, xp->grad, (size_t)(R * C) * 4);
    if (!op) { memcpy(gw, w->grad, (size_t)C * 4); memcpy(gb, b->grad, (size_t)C * 4); }
    *reads16 = out->node && out->node->op->reads == 0 && out->node->save[op ? 0 : 1] != NULL;
    lt_ctx_destroy(ctx);
}

/* Largest |a - b| over max |b|: the error relative to the tensor's scale. */
static double tp_normwise(const float *a, const float *b, int64_t n) {
    double e = 0, m = 0;
    int64_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (d > e || d != d) e = d;
        if (fabs(b[i]) > m) m = fabs(b[i]);
    }
    return m > 0 ? e / m : e;
}

static void tp_rows16(void) {
    enum { R = 24, C = 300 };
    static float xv[R * C], gv[R * C], xr[R * C];
    static float y32[R * C], gx32[R * C], y16[R * C], gx16[R * C], want[R * C];
    float gw32[C], gb32[C], gw16[C], gb16[C];
    lt_rng r;
    int pi, i, reads16 = 0, same;
    char nm[96];
    if (!t_want("precision/rows16")) return;
    setenv("LTRAIN_EAGER_COPIES16", "1", 1);   /* the records keep their 16-bit copies, as a plan's */
    lt_rng_seed(&r, 11);
    for (i = 0; i < R * C; i++) { xv[i] = (float)(lt_rng_normal(&r) * 2.0 + 0.5); gv[i] = (float)lt_rng_normal(&r); }
    for (pi = 0; pi < 2; pi++) {
        lt_dtype p = pi ? LT_F16 : LT_BF16;
        /* x̂ rounded to 16 bits is the only change: 2^-9 (bf16) or 2^-12 (fp16) of each term of
           the gradient sums.  Measured (normwise): bf16 dx 2.5e-4, dw 1.3e-3; fp16 dx 2.9e-5,
           dw 1.5e-4; the bounds leave a margin of about 6 */
        double tol = p == LT_F16 ? 1e-3 : 8e-3, e;
        tp_unary_run(LT_F32, 0, xv, gv, R, C, y32, gx32, gw32, gb32, &reads16);
        tp_unary_run(p, 0, xv, gv, R, C, y16, gx16, gw16, gb16, &reads16);
        snprintf(nm, sizeof nm, "precision/rows16/layernorm16_%s", lt_precision_name(p));
        t_check(reads16 && !memcmp(y16, y32, sizeof y16), nm, "y differs from layernorm's, or the record reads x");
        e = tp_normwise(gx16, gx32, R * C);
        snprintf(nm, sizeof nm, "precision/rows16/layernorm16_%s/dx", lt_precision_name(p));
        t_check(e < tol, nm, "normwise error %.3g (tol %.3g)", e, tol);
        e = tp_normwise(gw16, gw32, C);
        snprintf(nm, sizeof nm, "precision/rows16/layernorm16_%s/dw", lt_precision_name(p));
        t_check(e < tol, nm, "normwise error %.3g (tol %.3g)", e, tol);
        snprintf(nm, sizeof nm, "precision/rows16/layernorm16_%s/db", lt_precision_name(p));
        t_check(!memcmp(gb16, gb32, sizeof gb16), nm, "db differs from layernorm's (it reads no x̂)");
        /* gelu16 = gelu on round16(x), rounded; its gradient is gelu's at round16(x), in float32 */
        lt_round_to_precision(p, xv, xr, R * C);
        tp_unary_run(LT_F32, 1, xr, gv, R, C, y32, gx32, NULL, NULL, &reads16);
        tp_unary_run(p, 1, xv, gv, R, C, y16, gx16, NULL, NULL, &reads16);
        lt_round_to_precision(p, y32, want, R * C);
        same = !memcmp(y16, want, sizeof y16);
        snprintf(nm, sizeof nm, "precision/rows16/gelu16_%s", lt_precision_name(p));
        t_check(reads16 && same, nm, "y is not round16(gelu(round16(x))), or the record reads x");
        e = tp_normwise(gx16, gx32, R * C);
        snprintf(nm, sizeof nm, "precision/rows16/gelu16_%s/dx", lt_precision_name(p));
        t_check(e < 1e-6, nm, "normwise error %.3g against gelu's gradient at round16(x) (tol 1e-6)", e);
    }
    unsetenv("LTRAIN_EAGER_COPIES16");
}

/* gelu16's lookups with gathers (AVX-512, 16 at a time; AVX2, 8 at a time), each kernel this CPU
   has against the plain C path, bit for bit: every 16-bit pattern as x, then the same values
   nudged so that rounding matters, in the op's blocks with a ragged tail; y, the saved patterns,
   and dx from x or from the saved patterns, written and added. */
#ifdef LT__X86
static void tp_gelu16_fwd_k(int kern, lt_dtype p, const float *x, uint16_t *xh, float *y, int64_t m) {
    if (kern == 2) lt__gelu16_fwd_avx512(p, x, xh, y, m);
    else lt__gelu16_fwd_avx2(p, x, xh, y, m);
}
static void tp_gelu16_bwd_k(int kern, lt_dtype p, const float *x, const uint16_t *xh, const float *gy, float *gx,
                            int64_t m, int add) {
    if (kern == 2) lt__gelu16_bwd_avx512(p, x, xh, gy, gx, NULL, m, add);
    else lt__gelu16_bwd_avx2(p, x, xh, gy, gx, m, add);
}
#endif
static void tp_gelu16_paths(void) {
#ifdef LT__X86
    enum { N = 2 * 65536 + 13 };
    static float x[N], gy[N], y0[N], y1[N], g0[N], g1[N];
    static uint16_t h0[N], h1[N];
    int pi, i, add, kern;
    char nm[96];
    if (!t_want("precision/gelu16_paths")) return;
    for (kern = 2; kern >= 1; kern--) {
        const char *kn = kern == 2 ? "avx512" : "avx2";
        if (!lt__k_available(kern == 2 ? LT__K_AVX512 : LT__K_AVX2)) {
            snprintf(nm, sizeof nm, "precision/gelu16_paths/%s", kn);
            t_skip(nm, "this CPU lacks the instructions");
            continue;
        }
        for (pi = 0; pi < 2; pi++) {
            lt_dtype p = pi ? LT_F16 : LT_BF16;
            int64_t lo;
            int ok_y = 1, ok_h = 1, ok_g = 1;
            lt__gelu16_tables(p);
            for (i = 0; i < N; i++) {
                uint16_t b = (uint16_t)(i & 0xFFFF);
                lt__from16(p, &b, &x[i], 1);
                if (i >= 65536) x[i] *= 1.0f + (float)((i * 7) % 13 - 6) * 1e-3f;   /* between patterns, NaNs stay */
                gy[i] = (float)((i * 37) % 101 - 50) * 0.01f;
            }
            for (lo = 0; lo < N; lo += LT__EW16) {
                int64_t m = N - lo < LT__EW16 ? N - lo : LT__EW16;
                lt__gelu16_fwd_c(p, x + lo, h0 + lo, y0 + lo, m);
                tp_gelu16_fwd_k(kern, p, x + lo, h1 + lo, y1 + lo, m);
            }
            for (i = 0; i < N; i++) {
                uint32_t a, b;
                memcpy(&a, &y0[i], 4); memcpy(&b, &y1[i], 4);
                if (a != b) ok_y = 0;
                if (h0[i] != h1[i]) ok_h = 0;
            }
            for (add = 0; add < 4; add++) {   /* bit 0: add into gx; bit 1: patterns from x (eager, nothing saved) */
                for (i = 0; i < N; i++) g0[i] = g1[i] = (float)(i % 5) - 2.0f;
                for (lo = 0; lo < N; lo += LT__EW16) {
                    int64_t m = N - lo < LT__EW16 ? N - lo : LT__EW16;
                    const float *xs = add & 2 ? x + lo : NULL;
                    const uint16_t *hs = add & 2 ? NULL : h0 + lo;
                    lt__gelu16_bwd_c(p, xs, hs, gy + lo, g0 + lo, m, add & 1);
                    tp_gelu16_bwd_k(kern, p, xs, hs, gy + lo, g1 + lo, m, add & 1);
                }
                if (memcmp(g0, g1, sizeof g0)) ok_g = 0;
            }
            snprintf(nm, sizeof nm, "precision/gelu16_paths/%s/%s", kn, lt_precision_name(p));
            t_check(ok_y && ok_h && ok_g, nm, "%s differs from plain C: y %s, saved patterns %s, dx %s", kn,
                    ok_y ? "same" : "DIFFERS", ok_h ? "same" : "DIFFER", ok_g ? "same" : "DIFFERS");
        }
    }
#else
    if (t_want("precision/gelu16_paths")) t_skip("precision/gelu16_paths", "not x86");
#endif
}

/* ---- linear_ce16: the fused head equals lt_linear + lt_cross_entropy at 16-bit precision ---------- */
/* xparam: x is the parameter itself (no 16-bit copy of it kept: the product reads its float32
   values), else an op's output (copied to 16 bits for backward) */
static void tp_head_run(lt_dtype prec, int fused, int use_sum, int xparam, const float *xv, const float *wv,
                        const int32_t *tg, int64_t R, int64_t C, int64_t V, float *loss, float *gx, float *gw,
                        int64_t *plan16) {
    lt_ctx *ctx = lt_ctx_create(1);
    int64_t xs[2], ws[2];
    lt_tensor *xp, *w, *x, *l;
    xs[0] = R; xs[1] = C; ws[0] = V; ws[1] = C;
    xp = lt_param(ctx, "x", 2, xs);
    w = lt_param(ctx, "w", 2, ws);
    memcpy(xp->data, xv, (size_t)(R * C) * 4);
    memcpy(w->data, wv, (size_t)(V * C) * 4);
    lt_set_precision(ctx, prec);
    x = xparam ? xp : lt_scale(ctx, xp, 1.0f);
    if (fused) l = lt__linear_ce16(ctx, "lt_cross_entropy", x, w, tg, use_sum ? 13.0 : 0.0, !use_sum);
    else {
        lt_tensor *z = lt_linear(ctx, x, w, NULL);
        l = use_sum ? lt_cross_entropy_sum(ctx, z, tg, 13.0) : lt_cross_entropy(ctx, z, tg);
    }
    lt_backward(ctx, lt_scale(ctx, l, 3.0f));
    if (lt_failed(ctx)) printf("     tp_head_run: %s\n", lt_error(ctx));
    *loss = l ? l->data[0] : 0.0f;
    memcpy(gx, xp->grad, (size_t)(R * C) * 4);
    memcpy(gw, w->grad, (size_t)(V * C) * 4);
    if (plan16) *plan16 = l && l->node ? l->node->n_save[1] : 0;
    lt_ctx_destroy(ctx);
}

/* shapes: V over three panels; C past what a panel of all of K holds (the general product's
   z path, 2 threads over columns); C over one KC block, 2 threads over columns, panels of 416
   columns: the maxima of pieces of 256 merged from two panels, the row's largest logit (hot)
   often in the first panel's part of piece 256..511; V of four panels a thread and more
   (lt__gemm_block_z, A packed again for each panel) */
static void tp_head16_case(int64_t R, int64_t C, int64_t V, int64_t hot, int counts) {
    float *xv = (float *)malloc((size_t)(R * C) * 4), *wv = (float *)malloc((size_t)(V * C) * 4);
    float *gx1 = (float *)malloc((size_t)(R * C) * 4), *gx2 = (float *)malloc((size_t)(R * C) * 4);
    float *gw1 = (float *)malloc((size_t)(V * C) * 4), *gw2 = (float *)malloc((size_t)(V * C) * 4);
    int32_t *tg = (int32_t *)malloc((size_t)R * 4);
    float l1, l2;
    int64_t nsave[2] = {0, 0}, i;
    lt_rng r;
    int pi, s;
    char nm[96];
    lt_rng_seed(&r, 17);
    for (i = 0; i < R * C; i++) xv[i] = (float)lt_rng_normal(&r);
    for (i = 0; i < V * C; i++) wv[i] = (float)(lt_rng_normal(&r) * 0.5);
    if (hot >= 0)   /* logit `hot` the largest in about half the rows, by far: a wrong maximum overflows */
        for (i = 0; i < C; i++) wv[hot * C + i] *= 20.0f;
    for (i = 0; i < R; i++) tg[i] = i % 9 == 4 ? LT_IGNORE_INDEX : (int32_t)(lt_rng_u64(&r) % (uint64_t)V);
    for (pi = 0; pi < 2; pi++)
        for (s = 0; s < 3; s++) {   /* mean, sum, mean with x a parameter */
            lt_dtype p = pi ? LT_F16 : LT_BF16;
            int ok;
            tp_head_run(p, 0, s == 1, s == 2, xv, wv, tg, R, C, V, &l1, gx1, gw1, NULL);
            tp_head_run(p, 1, s == 1, s == 2, xv, wv, tg, R, C, V, &l2, gx2, gw2, s == 0 ? &nsave[pi] : NULL);
            ok = !memcmp(&l1, &l2, 4) && !memcmp(gx1, gx2, (size_t)(R * C) * 4) && !memcmp(gw1, gw2, (size_t)(V * C) * 4);
            snprintf(nm, sizeof nm, "precision/head16/%lldx%lldx%lld/%s_%s", (long long)R, (long long)C, (long long)V,
                     lt_precision_name(p), s == 1 ? "sum" : s == 2 ? "mean_xparam" : "mean");
            t_check(ok, nm, "fused loss %.9g, unfused %.9g; or the gradients differ", l2, l1);
            /* the other layout of the logits (float32 values where the kernel keeps 16-bit ones, or
               the other way round): the same bits again */
            lt__ce16_wide_force = !lt__ce16_wide(p);
            tp_head_run(p, 1, s == 1, s == 2, xv, wv, tg, R, C, V, &l2, gx2, gw2, NULL);
            lt__ce16_wide_force = -1;
            ok = !memcmp(&l1, &l2, 4) && !memcmp(gx1, gx2, (size_t)(R * C) * 4) && !memcmp(gw1, gw2, (size_t)(V * C) * 4);
            snprintf(nm, sizeof nm, "precision/head16/%lldx%lldx%lld/%s_%s_%s", (long long)R, (long long)C,
                     (long long)V, lt_precision_name(p), s == 1 ? "sum" : s == 2 ? "mean_xparam" : "mean",
                     lt__ce16_wide(p) ? "z16" : "z32");
            t_check(ok, nm, "fused loss %.9g, unfused %.9g; or the gradients differ", l2, l1);
        }
    /* it keeps the logits in 16 bits (R·V/2 floats), or as float32 values where bf16 products run
       on converted panels (lt__ce16_wide), and four floats per row */
    if (counts) {
        int64_t want = (lt__ce16_wide(LT_BF16) ? R * V : (R * V + 1) / 2) + 4 * R;
        t_check(nsave[0] == want && nsave[1] == (R * V + 1) / 2 + 4 * R, "precision/head16/saves_logits",
                "saved %lld floats at bf16 (%lld wanted), %lld at fp16", (long long)nsave[0], (long long)want,
                (long long)nsave[1]);
    }
    free(xv); free(wv); free(gx1); free(gx2); free(gw1); free(gw2); free(tg);
}
static void tp_head16(void) {
    if (!t_want("precision/head16")) return;
    tp_head16_case(37, 40, 1100, -1, 1);
    tp_head16_case(70, 1030, 600, -1, 0);
    tp_head16_case(150, 300, 2100, 300, 0);
    tp_head16_case(40, 300, 4000, -1, 0);
}

/* ---- 16-bit values read in place; linear/conv1d after gelu16 ------------------------------------ */
/* y = conv1d(gelu(h)) with h = conv1d(h0) (16-bit values), and y = conv1d(gelu(h)·1) (the scale's
   output is not 16-bit: conv1d16 keeps a copy of it), give the same gradients to the bit in every
   mode (lt__copy16):
     eager: gelu16 and the second conv1d16 read h and gelu(h) in place, no copies;
     eager with LTRAIN_EAGER_COPIES16=1, and compiled: gelu16 keeps h in 16 bits and conv1d16
     (f[1] = 1) recomputes gelu(h) from that copy while packing, so x is not copied either. */
static lt_tensor *tp_gs_h, *tp_gs_w0, *tp_gs_w;
static int tp_gs_share, tp_gs_flag;
static lt_tensor *tp_gelu_share_step(lt_ctx *ctx, void *u) {
    lt_tensor *h = lt_conv1d(ctx, tp_gs_h, tp_gs_w0, NULL), *x = lt_gelu(ctx, h), *y;
    (void)u;
    if (!tp_gs_share) x = lt_scale(ctx, x, 1.0f);
    y = lt_conv1d(ctx, x, tp_gs_w, NULL);
    tp_gs_flag = y && y->node && x->node ? 100 * (x->node->op == LT__OP(gelu16) && x->node->save[0] != NULL) +
                                               10 * (int)y->node->f[1] + (y->node->save[0] != NULL) : -1;
    return lt_sum(ctx, lt_mul(ctx, y, y));
}
static void tp_gelu_share_run(lt_dtype prec, int share, int mode, float *gh, float *gw, int *flag) {
    lt_ctx *ctx = lt_ctx_create(4);
    int64_t hs[2] = {19, 21}, w0s[2] = {21, 45}, ws[2] = {45, 13};   /* 45: the packing's 16-wide tails too */
    tp_gs_h = lt_param(ctx, "h", 2, hs);
    tp_gs_w0 = lt_param(ctx, "w0", 2, w0s);
    tp_gs_w = lt_param(ctx, "w", 2, ws);
    tp_gs_share = share;
    lt_init_normal(ctx, tp_gs_h, 0, 1);
    lt_init_normal(ctx, tp_gs_w0, 0, 0.4);
    lt_init_normal(ctx, tp_gs_w, 0, 0.3);
    lt_set_precision(ctx, prec);
    if (mode == 2) {   /* compiled */
        lt_plan *p = lt_compile(ctx, tp_gelu_share_step, NULL);   /* (records: sets tp_gs_flag) */
        *flag = tp_gs_flag;
        lt_zero_grad(ctx);
        if (p && !lt_plan_is_eager(p)) lt_plan_run(p, NULL);
        else *flag = -2;
        lt_plan_destroy(p);
    } else {           /* eager, as it is (0) or keeping every copy (1) */
        if (mode == 1) setenv("LTRAIN_EAGER_COPIES16", "1", 1);
        lt_backward(ctx, tp_gelu_share_step(ctx, NULL));
        unsetenv("LTRAIN_EAGER_COPIES16");
        *flag = tp_gs_flag;
    }
    if (lt_failed(ctx)) printf("     tp_gelu_share_run: %s\n", lt_error(ctx));
    memcpy(gh, tp_gs_h->grad, 19 * 21 * 4);
    memcpy(gw, tp_gs_w->grad, 45 * 13 * 4);
    lt_ctx_destroy(ctx);
}
static void tp_gelu_share(void) {
    /* runs: eager, eager + copies, compiled (all with x = gelu(h)), eager with x = gelu(h)·1;
       flags: 100·(gelu16 keeps h) + 10·f[1] + (conv1d16 keeps x) */
    static const int share[4] = {1, 1, 1, 0}, mode[4] = {0, 1, 2, 0}, want[4] = {0, 110, 110, 1};
    float gh[4][19 * 21], gw[4][45 * 13];
    int f[4], pi, k, same;
    char nm[80];
    if (!t_want("precision/gelu_share")) return;
    for (pi = 0; pi < 2; pi++) {
        lt_dtype p = pi ? LT_F16 : LT_BF16;
        for (k = 0; k < 4; k++) tp_gelu_share_run(p, share[k], mode[k], gh[k], gw[k], &f[k]);
        for (k = 1, same = 1; k < 4; k++) same = same && !memcmp(gh[k], gh[0], sizeof gh[0]) && !memcmp(gw[k], gw[0], sizeof gw[0]);
        snprintf(nm, sizeof nm, "precision/gelu_share/%s", lt_precision_name(p));
        t_check(same && f[0] == want[0] && f[1] == want[1] && f[2] == want[2] && f[3] == want[3], nm,
                "records %d %d %d %d, want %d %d %d %d; gradients %s", f[0], f[1], f[2], f[3],
                want[0], want[1], want[2], want[3], same ? "equal" : "differ");
    }
}

/* attention16 reads qkv three ways: its 16-bit copy (a gradient flows), float32 values rounded
   on the way (no gradient), or in place (eager, the output of a 16-bit product): one output, to
   the bit.  (Sources: 0 copy, 1 rounded, 2 in place; -1 a record not kept.) */
static void tp_att16_sources(void) {
    int pi, k, i;
    char nm[80];
    if (!t_want("precision/att16_sources")) return;
    for (pi = 0; pi < 2; pi++) {
        lt_dtype p = pi ? LT_F16 : LT_BF16;
        float *y[3] = {NULL, NULL, NULL}, v[2 * 37 * 72];
        lt_rng r;
        int same = 1, how[3] = {-1, -1, -1};
        lt_rng_seed(&r, 3);
        for (i = 0; i < 2 * 37 * 72; i++) v[i] = (float)lt_rng_normal(&r);
        for (k = 0; k < 3; k++) {
            lt_ctx *ctx = lt_ctx_create(2);
            int64_t s3[3] = {2, 37, 72}, s2[2] = {72, 72};
            lt_tensor *qkv, *o;
            lt_set_precision(ctx, p);
            if (k == 0) { qkv = lt_param(ctx, "qkv", 3, s3); memcpy(qkv->data, v, sizeof v); }
            else if (k == 1) qkv = lt_tensor_from(ctx, v, 3, s3);
            else {   /* qkv = round16(v)·I, a 16-bit product's output: the values round16(v) */
                lt_tensor *eye = lt_param(ctx, "eye", 2, s2);
                for (i = 0; i < 72; i++) eye->data[i * 72 + i] = 1.0f;
                qkv = lt_matmul(ctx, lt_tensor_from(ctx, v, 3, s3), eye, 0);
            }
            o = lt_attention(ctx, qkv, 3, NULL);
            if (o) {
                if (o->node) {
                    lt__att_src a = lt__att_src_of(o->node, 1);
                    how[k] = a.h[0] ? 0 : a.round ? 1 : 2;
                }
                y[k] = (float *)malloc((size_t)o->n * sizeof(float));
                memcpy(y[k], o->data, (size_t)o->n * sizeof(float));
            } else printf("     tp_att16_sources: %s\n", lt_error(ctx));
            lt_ctx_destroy(ctx);
        }
        for (k = 1; k < 3; k++) same = same && y[0] && y[k] && !memcmp(y[0], y[k], 2 * 37 * 24 * sizeof(float));
        snprintf(nm, sizeof nm, "precision/att16_sources/%s", lt_precision_name(p));
        t_check(same && how[0] == 0 && how[2] == 2, nm, "outputs %s; sources %d %d %d (want 0, -1 or 1, 2)",
                same ? "equal" : "differ", how[0], how[1], how[2]);
        for (k = 0; k < 3; k++) free(y[k]);
    }
}

/* ---- a small GPT: compiled bf16 plans replay eager bf16 steps to the bit, in less memory ---- */
typedef struct { lt_gpt *g; int32_t *in, *tg; int B, T; } tp_step;
static lt_tensor *tp_loss(lt_ctx *ctx, void *u) {
    tp_step *s = (tp_step *)u;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, s->T);
}

/* Losses and final weights of `steps` AdamW steps at precision prec, eager or compiled; the
   plan's bytes in *bytes. */
static float *tp_train(lt_dtype prec, int compiled, int steps, float *losses, size_t *bytes) {
    lt_ctx *ctx = lt_ctx_create(21);
    lt_gpt_config cfg = lt_gpt2_config(64, 32, 2, 2, 32);
    tp_step s;
    lt_optim *opt;
    lt_plan *plan = NULL;
    lt_rng r;
    float *w = NULL;
    int k, i;
    s.g = lt_gpt_create(ctx, &cfg);
    s.B = 4; s.T = 32;
    s.in = (int32_t *)malloc(4 * 32 * sizeof(int32_t));
    s.tg = (int32_t *)malloc(4 * 32 * sizeof(int32_t));
    opt = lt_adamw_create(ctx, lt_gpt_params(s.g), lt_adamw_defaults());
    lt_set_precision(ctx, prec);
    lt_rng_seed(&r, 9);
    for (k = 0; k < steps && !lt_failed(ctx); k++) {
        float loss = 0;
        for (i = 0; i < s.B * s.T; i++) {   /* a learnable pattern: next = (cur * 7 + 3) mod 64, some noise */
            s.in[i] = i % s.T == 0 || lt_rng_uniform(&r) < 0.1 ? (int32_t)(lt_rng_u64(&r) % 64)
                                                               : (s.in[i - 1] * 7 + 3) % 64;
            if (i > 0 && i % s.T) s.tg[i - 1] = s.in[i];
        }
        for (i = s.T - 1; i < s.B * s.T; i += s.T) s.tg[i] = (s.in[i] * 7 + 3) % 64;
        lt_zero_grad(ctx);
        if (compiled) {
            if (!plan && (plan = lt_compile(ctx, tp_loss, &s)) != NULL && bytes) *bytes = lt_plan_bytes(plan);
            if (plan) lt_plan_run(plan, &loss);
        } else {
            lt_tensor *l = tp_loss(ctx, &s);
            loss = lt_item(l);
            lt_backward(ctx, l);
        }
        lt_optim_step(opt, 3e-3);
        losses[k] = loss;
    }
    if (!lt_failed(ctx)) w = tc_weights(ctx);
    else printf("     tp_train: %s\n", lt_error(ctx));
    lt_plan_destroy(plan);
    lt_optim_destroy(opt);
    lt_gpt_destroy(s.g);
    lt_ctx_destroy(ctx);
    free(s.in);
    free(s.tg);
    return w;
}

static void tp_compile(void) {
    enum { STEPS = 40 };
    float le[STEPS], lc[STEPS], l32[STEPS], l16[STEPS];
    size_t b32 = 0, b16 = 0, bf = 0, nw = 0;
    float *we, *wc, *w32, *wf;
    lt_ctx *tmp;
    int k, same;
    if (!t_want("precision/compile")) return;
    we = tp_train(LT_BF16, 0, STEPS, le, NULL);
    wc = tp_train(LT_BF16, 1, STEPS, lc, &b16);
    tmp = lt_ctx_create(21);
    { lt_gpt_config cfg = lt_gpt2_config(64, 32, 2, 2, 32); lt_gpt *g = lt_gpt_create(tmp, &cfg); nw = lt_params_count(tmp); lt_gpt_destroy(g); }
    lt_ctx_destroy(tmp);
    same = we && wc && !memcmp(le, lc, sizeof le) && !memcmp(we, wc, nw * sizeof(float));
    for (k = 0; k < STEPS && le[k] == lc[k]; k++) {}
    t_check(same, "precision/compile/bf16_bitwise", "eager and compiled bf16 runs differ (first at step %d)", k);
    w32 = tp_train(LT_F32, 1, STEPS, l32, &b32);
    wf = tp_train(LT_F16, 1, STEPS, l16, &bf);
    printf("     planned bytes: fp32 %zu, bf16 %zu (%.3fx), fp16 %zu; loss after %d steps: fp32 %.4f, bf16 %.4f, "
           "fp16 %.4f (from %.4f)\n", b32, b16, (double)b16 / (double)b32, bf, STEPS, l32[STEPS - 1], lc[STEPS - 1],
           l16[STEPS - 1], l32[0]);
    /* (bf16 keeps the head's logits as float32 values where its products run on converted
       panels, lt__ce16_wide: more bytes than fp16's plan there, the same elsewhere) */
    t_check(b16 > 0 && b16 < b32 && (lt__ce16_wide(LT_BF16) ? b16 > bf : bf == b16),
            "precision/compile/plan_bytes_smaller", "fp32 %zu, bf16 %zu, fp16 %zu", b32, b16, bf);
    /* a short run learns the pattern in 16 bit about as well as in float32: within 2% */
    t_check(w32 && wf && fabs(lc[STEPS - 1] - l32[STEPS - 1]) < 0.02 * l32[STEPS - 1] &&
            fabs(l16[STEPS - 1] - l32[STEPS - 1]) < 0.02 * l32[STEPS - 1] && l32[STEPS - 1] < 0.8 * l32[0],
            "precision/compile/loss_follows_fp32", "fp32 %.4f, bf16 %.4f, fp16 %.4f", l32[STEPS - 1],
            lc[STEPS - 1], l16[STEPS - 1]);
    free(we); free(wc); free(w32); free(wf);
}

/* The loss scaler in a training checkpoint: saved, restored exactly, a damaged one rejected. */
static void tp_checkpoint(void) {
    lt_ctx *ctx = lt_ctx_create(3);
    lt_gpt_config cfg = lt_gpt2_config(32, 8, 1, 2, 16);
    lt_gpt *g = lt_gpt_create(ctx, &cfg);
    lt_optim *opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    lt_scaler a = lt_scaler_defaults(), b = lt_scaler_defaults();
    lt_train_state st, back;
    lt_scaler_state sa, sb;
    char path[256];
    int ok;
    if (!t_want("precision/checkpoint")) { lt_optim_destroy(opt); lt_gpt_destroy(g); lt_ctx_destroy(ctx); return; }
    snprintf(path, sizeof path, "%s/precision_scaler.safetensors", t_tmp_dir());
    a.scale = 512.0f; a.growth_tracker = 1234; a.skipped = 17; a.growth_interval = 1999;
    memset(&st, 0, sizeof st);
    memset(&back, 0, sizeof back);
    st.step = 5; st.scaler = &a;
    back.scaler = &b;
    lt_checkpoint_save(g, opt, &st, NULL, path);
    lt_checkpoint_load(g, opt, &back, path);
    sa = lt_scaler_get_state(&a);
    sb = lt_scaler_get_state(&b);
    ok = !lt_failed(ctx) && !memcmp(&sa, &sb, sizeof sa) && back.step == 5;
    t_check(ok, "precision/checkpoint/scaler_roundtrip", "scale %g tracker %lld skipped %lld: %s", sb.scale,
            (long long)sb.growth_tracker, (long long)sb.skipped, lt_error(ctx));
    /* without a scaler in the checkpoint the scaler is left as it is */
    st.scaler = NULL;
    b = lt_scaler_defaults();
    lt_checkpoint_save(g, opt, &st, NULL, path);
    lt_checkpoint_load(g, opt, &back, path);
    t_check(!lt_failed(ctx) && b.scale == 65536.0f && b.growth_tracker == 0, "precision/checkpoint/none_leaves_scaler",
            "%s", lt_error(ctx));
    /* a damaged state (scale 0) is an error, not a silent restore */
    a.scale = 0.0f;
    st.scaler = &a;
    lt_checkpoint_save(g, opt, &st, NULL, path);
    lt_checkpoint_load(g, opt, &back, path);
    t_check(lt_status_of(ctx) == LT_ERR_ARG && b.scale == 65536.0f, "precision/checkpoint/damaged_rejected",
            "status %s: %s", lt_status_name(lt_status_of(ctx)), lt_error(ctx));
    remove(path);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

/* ---- the Llama ops at 16-bit precision (lt_rmsnorm, lt_swiglu, lt_attention_gqa, lt_rope, lt_silu) ---- */
/* One op at precision prec on float32 inputs xs (n_in of them, shapes sh: ndim, dims), gradient
   of sum(y·R) (R fixed); returns y then each input's gradient, concatenated (NULL on failure).
   *rec: how many 16-bit values the record keeps for backward (save[1], swiglu16's save[0]; -1 when
   its backward reads float32 values). */
static float *tp_llama_run(lt_dtype prec, const char *op, int n_in, const int64_t sh[3][4], float *const *xs,
                           int threads, int64_t *n_out, int64_t *rec) {
    lt_ctx *ctx = lt_ctx_create(3);
    lt_tensor *x[3] = {NULL, NULL, NULL}, *y = NULL, *R;
    float *res = NULL;
    int64_t n, off, i;
    int k;
    lt_set_threads(threads);
    for (k = 0; k < n_in; k++) {
        char pn[16];
        snprintf(pn, sizeof pn, "x%d", k);
        x[k] = lt_param(ctx, pn, (int)sh[k][0], &sh[k][1]);
        memcpy(x[k]->data, xs[k], (size_t)x[k]->n * sizeof(float));
    }
    lt_set_precision(ctx, prec);
    if (!strcmp(op, "rmsnorm")) y = lt_rmsnorm(ctx, lt_scale(ctx, x[0], 1.0f), x[1], 1e-6f);
    else if (!strcmp(op, "swiglu")) y = lt_swiglu(ctx, x[0], x[1]);
    else if (!strcmp(op, "gqa")) y = lt_attention_gqa(ctx, x[0], x[1], x[2], 6, 2, NULL);
    else if (!strcmp(op, "gqa_mha")) y = lt_attention_gqa(ctx, x[0], x[1], x[2], 2, 2, NULL);
    else if (!strcmp(op, "attention")) y = lt_attention(ctx, x[0], 2, NULL);
    else if (!strcmp(op, "rope")) y = lt_rope(ctx, x[0], 4, 1e4f, 5);
    else if (!strcmp(op, "silu")) y = lt_silu(ctx, x[0]);
    lt_set_precision(ctx, LT_F32);
    if (y) {
        const lt__node *nd = y->node;
        *rec = !nd || nd->op->reads ? -1 : 2 * (nd->op == LT__OP(swiglu16) ? nd->n_save[0] : nd->n_save[1]);
        R = lt_tensor_new(ctx, y->ndim, y->shape);
        for (i = 0; R && i < y->n; i++) R->data[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
        n = y->n;
        for (k = 0; k < n_in; k++) n += x[k]->n;
        res = (float *)malloc((size_t)n * sizeof(float));
        memcpy(res, y->data, (size_t)y->n * sizeof(float));
        if (lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, y, R))) == LT_OK) {
            for (k = 0, off = y->n; k < n_in; k++) { memcpy(res + off, x[k]->grad, (size_t)x[k]->n * sizeof(float)); off += x[k]->n; }
            *n_out = n;
        } else { free(res); res = NULL; }
    }
    if (lt_failed(ctx)) { printf("     tp_llama_run %s: %s\n", op, lt_error(ctx)); free(res); res = NULL; }
    lt_ctx_destroy(ctx);
    return res;
}

static void tp_llama16(void) {
    static const int64_t sh_rms[3][4] = {{2, 40, 300}, {1, 300}}, sh_sw[3][4] = {{2, 50, 700}, {2, 50, 700}};
    static const int64_t sh_sw7[3][4] = {{2, 3, 77}, {2, 3, 77}};
    static const int64_t sh_gqa[3][4] = {{3, 2, 130, 96}, {3, 2, 130, 32}, {3, 2, 130, 32}};
    static const int64_t sh_mha[3][4] = {{3, 1, 70, 32}, {3, 1, 70, 32}, {3, 1, 70, 32}}, sh_qkv[3][4] = {{3, 1, 70, 96}};
    static const int64_t sh_rope[3][4] = {{3, 2, 9, 64}};
    float *buf[3], *rbuf[3], *fused;
    int64_t i, k, n32, n16, rec = 0, rec32 = 0;
    int pi, base = lt_get_threads(), keep;
    lt_rng r;
    char nm[96];
    if (!t_want("precision/llama16")) return;
    lt_rng_seed(&r, 23);
    for (k = 0; k < 3; k++) {
        buf[k] = (float *)malloc(35000 * sizeof(float));
        rbuf[k] = (float *)malloc(35000 * sizeof(float));
        for (i = 0; i < 35000; i++) buf[k][i] = (float)(lt_rng_normal(&r) * 1.5);
    }
    fused = (float *)malloc(70 * 96 * sizeof(float));
    for (pi = 0; pi < 2; pi++) {
        lt_dtype p = pi ? LT_F16 : LT_BF16;
        const char *pn = lt_precision_name(p);
        float *a, *b, *c;
        double e, tol = p == LT_F16 ? 1e-3 : 8e-3, gmax = 0;
        for (k = 0; k < 3; k++) lt_round_to_precision(p, buf[k], rbuf[k], 35000);
        /* rmsnorm16: layernorm16's rule (y as float32's; x̂ in 16 bits moves the gradients) */
        a = tp_llama_run(LT_F32, "rmsnorm", 2, sh_rms, buf, 1, &n32, &rec32);
        b = tp_llama_run(p, "rmsnorm", 2, sh_rms, buf, 1, &n16, &rec);
        snprintf(nm, sizeof nm, "precision/llama16/rmsnorm16_%s", pn);
        t_check(a && b && rec == 40 * 300 && !memcmp(a, b, 40 * 300 * sizeof(float)), nm,
                "y differs from rmsnorm's, or the record does not keep x̂ in 16 bits (%lld 16-bit values)", (long long)rec);
        e = a && b ? tp_normwise(b + 40 * 300, a + 40 * 300, 40 * 300) : 1;
        snprintf(nm, sizeof nm, "precision/llama16/rmsnorm16_%s/dx", pn);
        t_check(e < tol, nm, "normwise error %.3g (tol %.3g)", e, tol);
        e = a && b ? tp_normwise(b + 2 * 40 * 300, a + 2 * 40 * 300, 300) : 1;
        snprintf(nm, sizeof nm, "precision/llama16/rmsnorm16_%s/dw", pn);
        t_check(e < tol, nm, "normwise error %.3g (tol %.3g)", e, tol);
        free(a); free(b);
        /* swiglu16 = round16(round16(silu(g16))·u16); gradients: swiglu's at (g16, u16); a second
           shape of 231 values (7 past the last 8 and 16: the fast paths' ends) */
        for (k = 0; k < 2; k++) {
            const int64_t(*sh)[4] = k ? sh_sw7 : sh_sw;
            int64_t nsw = sh[0][1] * sh[0][2];
            a = tp_llama_run(LT_F32, "swiglu", 2, sh, rbuf, 1, &n32, &rec32);
            b = tp_llama_run(p, "swiglu", 2, sh, buf, 1, &n16, &rec);
            c = NULL;
            if (a && b) {   /* the forward's formula by hand, on the float32 silu */
                lt_ctx *ctx = lt_ctx_create(1);
                lt_tensor *g = lt_tensor_from(ctx, rbuf[0], 2, &sh[0][1]), *s = lt_silu(ctx, g);
                c = (float *)malloc((size_t)nsw * sizeof(float));
                lt_round_to_precision(p, s->data, c, (size_t)nsw);
                for (i = 0; i < nsw; i++) c[i] *= rbuf[1][i];
                lt_round_to_precision(p, c, c, (size_t)nsw);
                lt_ctx_destroy(ctx);
            }
            snprintf(nm, sizeof nm, "precision/llama16/swiglu16_%s%s", pn, k ? "_231" : "");
            t_check(c && rec == 2 * nsw && !memcmp(b, c, (size_t)nsw * sizeof(float)), nm,
                    "y is not round16(round16(silu(g16))·u16), or the record does not keep g16, u16 (%lld 16-bit values)", (long long)rec);
            e = a && b ? tp_normwise(b + nsw, a + nsw, 2 * nsw) : 1;
            snprintf(nm, sizeof nm, "precision/llama16/swiglu16_%s%s/grads", pn, k ? "_231" : "");
            t_check(e < 1e-6, nm, "normwise error %.3g against swiglu's gradients at (g16, u16) (tol 1e-6)", e);
            free(a); free(b); free(c);
        }
        /* attention_gqa16: the float32 op on 16-bit q, k, v, y rounded; gradients within a few roundings
           (the float32 kernels: bf16 on AMX tiles is test_ops.c's attention16_tiles) */
        keep = (lt__att16_tiles(LT_BF16, 256, 64), lt__att16_off);
        lt__att16_off = 1;
        a = tp_llama_run(LT_F32, "gqa", 3, sh_gqa, rbuf, 1, &n32, &rec32);
        b = tp_llama_run(p, "gqa", 3, sh_gqa, rbuf, 1, &n16, &rec);
        c = tp_llama_run(p, "gqa", 3, sh_gqa, buf, 4, &n16, &rec32);
        if (a) lt_round_to_precision(p, a, a, 2 * 130 * 96);
        snprintf(nm, sizeof nm, "precision/llama16/attention_gqa16_%s", pn);
        t_check(a && b && rec == 2 * (2 * 130 * 96 + 2 * 130 * 32) && !memcmp(a, b, 2 * 130 * 96 * sizeof(float)), nm,
                "y is not the float32 op's y rounded, or the record lacks its 16-bit copies (%lld 16-bit values)", (long long)rec);
        for (i = 2 * 130 * 96; a && i < n32; i++) gmax = fabs(a[i]) > gmax ? fabs(a[i]) : gmax;
        snprintf(nm, sizeof nm, "precision/llama16/attention_gqa16_%s/grads", pn);
        if (a && b) t_close(nm, b + 2 * 130 * 96, a + 2 * 130 * 96, n32 - 2 * 130 * 96, 4.0 * (pi ? 1.0 / 2048 : 1.0 / 256) * gmax, 0.0);
        else t_check(0, nm, "a run failed");
        snprintf(nm, sizeof nm, "precision/llama16/attention_gqa16_%s/rounds_input_threads", pn);
        t_check(b && c && !memcmp(b, c, (size_t)n16 * sizeof(float)), nm,
                "float32 inputs on 4 threads differ from 16-bit inputs on 1");
        free(a); free(b); free(c);
        /* Hkv = H: attention_gqa16 on q, k, v is attention16 on the fused qkv, to the bit */
        for (i = 0; i < 70; i++)
            for (k = 0; k < 3; k++) memcpy(fused + i * 96 + k * 32, buf[k] + i * 32, 32 * sizeof(float));
        a = tp_llama_run(p, "gqa_mha", 3, sh_mha, buf, 1, &n16, &rec);
        b = tp_llama_run(p, "attention", 1, sh_qkv, &fused, 1, &n32, &rec32);
        for (i = 0, k = 1; a && b && i < 70 && k; i++) {
            int j;
            for (j = 0; j < 3; j++) k &= !memcmp(a + 70 * 32 + j * 70 * 32 + i * 32, b + 70 * 32 + i * 96 + j * 32, 32 * sizeof(float));
        }
        snprintf(nm, sizeof nm, "precision/llama16/attention_gqa16_%s/equals_attention16", pn);
        t_check(a && b && k && !memcmp(a, b, 70 * 32 * sizeof(float)), nm, "y or the gradients differ from attention16's");
        free(a); free(b);
        lt__att16_off = keep;
        /* rope and silu: float32 arithmetic at any precision */
        a = tp_llama_run(LT_F32, "rope", 1, sh_rope, buf, 1, &n32, &rec32);
        b = tp_llama_run(p, "rope", 1, sh_rope, buf, 1, &n16, &rec);
        snprintf(nm, sizeof nm, "precision/llama16/rope_%s", pn);
        t_check(a && b && n16 == n32 && !memcmp(a, b, (size_t)n32 * sizeof(float)), nm, "differs from float32 rope");
        free(a); free(b);
        a = tp_llama_run(LT_F32, "silu", 1, sh_sw, buf, 1, &n32, &rec32);
        b = tp_llama_run(p, "silu", 1, sh_sw, buf, 1, &n16, &rec);
        snprintf(nm, sizeof nm, "precision/llama16/silu_%s", pn);
        t_check(a && b && n16 == n32 && !memcmp(a, b, (size_t)n32 * sizeof(float)), nm, "differs from float32 silu");
        free(a); free(b);
    }
    lt_set_threads(base);
    for (k = 0; k < 3; k++) { free(buf[k]); free(rbuf[k]); }
    free(fused);
}

static void test_precision_all(void) {
    tp_api();
    tp_round_large();
    tp_refs();
    tp_fp32_unchanged();
    tp_fp16_overflow();
    tp_gemm16();
    tp_gemm16_z();
    tp_convert16_levels();
    tp_gemm_bf16_tiles(0);
    tp_gemm_bf16_tiles(1);
    tp_rows16();
    tp_gelu16_paths();
    tp_head16();
    tp_gelu_share();
    tp_att16_sources();
    tp_llama16();
    tp_compile();
    tp_checkpoint();
}

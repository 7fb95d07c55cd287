/* test_gemm.c - every sgemm kernel this CPU runs (portable, avx2, avx512), and lt_sgemm itself
   (cblas_sgemm under LTRAIN_CBLAS), against a double-precision triple loop: odd shapes, all four
   transpose combinations, alpha != 1, beta 0 / 1 / other, leading dimensions above the minimum,
   shapes that cross the cache blocks (MC, KC, NC) and the thread split.
   Tolerance per element: the classic bound for a K-term float dot product,
       |got - ref| <= 2*K*eps32 * |alpha| * sum_k |a_ik||b_kj|  +  2*eps32 * |beta c_ij|  + 1e-30
   (eps32 = 2^-23/2, the unit roundoff), which any correct summation order meets. */

typedef struct { int64_t M, N, K; } tg_shape;

/* A value in [-1, 1) with a few exact zeros and a wide-ish magnitude range. */
static float tg_val(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    if ((*s >> 28) == 0) return 0.0f;
    return ((float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f) * ((*s & 1) ? 1.0f : 0.125f);
}

/* tg_case's C: rows N + 7 floats apart (0), or 64-byte aligned rows a multiple of 16 floats
   apart (1), as the streaming stores want them */
static int tg_aligned_c = 0;

/* One case: returns 1 when every kernel (and lt_sgemm) agrees with the double loop. */
static int tg_case(const tg_shape *sh, int ta, int tb, float alpha, float beta, uint32_t seed) {
    int64_t M = sh->M, N = sh->N, K = sh->K, i, j, k;
    int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = tg_aligned_c ? (N + 15) / 16 * 16 + 16 : N + 7;
    int64_t rows_a = ta ? K : M, rows_b = tb ? N : K;
    size_t na = (size_t)(rows_a * lda), nb = (size_t)(rows_b * ldb), nc = (size_t)(M * ldc);
    float *A = (float *)malloc(na * sizeof(float)), *B = (float *)malloc(nb * sizeof(float));
    float *C0 = (float *)malloc(nc * sizeof(float)), *Craw = (float *)malloc((nc + 16) * sizeof(float));
    float *C = (float *)(((uintptr_t)Craw + 63) & ~(uintptr_t)63);
    double *ref = (double *)malloc((size_t)(M * N) * sizeof(double)), *tol = (double *)malloc((size_t)(M * N) * sizeof(double));
    const double u = 0.5 * 1.1920929e-7;
    int id, ok = 1;
    char name[160];
    for (i = 0; i < (int64_t)na; i++) A[i] = tg_val(&seed);
    for (i = 0; i < (int64_t)nb; i++) B[i] = tg_val(&seed);
    for (i = 0; i < (int64_t)nc; i++) C0[i] = tg_val(&seed);
    /* beta == 0 must overwrite C without reading it (BLAS): plant NaNs */
    if (beta == 0.0f) for (i = 0; i < M; i++) C0[i * ldc + (i % N)] = NAN;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double s = 0, sa = 0;
            for (k = 0; k < K; k++) {
                double a = ta ? A[k * lda + i] : A[i * lda + k], b = tb ? B[j * ldb + k] : B[k * ldb + j];
                s += a * b; sa += fabs(a * b);
            }
            ref[i * N + j] = (double)alpha * s + (beta == 0.0f ? 0.0 : (double)beta * C0[i * ldc + j]);
            tol[i * N + j] = 2.0 * (double)K * u * fabs((double)alpha) * sa * 1.0001 +
                             (beta == 0.0f ? 0.0 : 2.0 * u * fabs((double)beta * C0[i * ldc + j])) + 1e-30;
        }
    for (id = -1; id < LT__GEMM_NKERNELS; id++) {
        double worst = 0;
        int64_t wi = -1, wj = -1, pad_bad = 0;
        if (id >= 0 && !lt__gemm_supported(id)) continue;
        memcpy(C, C0, nc * sizeof(float));
        if (id < 0) lt_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        else lt__sgemm_with(id, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        for (i = 0; i < M; i++) {
            for (j = 0; j < N; j++) {
                double e = fabs((double)C[i * ldc + j] - ref[i * N + j]) / tol[i * N + j];
                if (!(e <= worst)) { worst = e; wi = i; wj = j; }
            }
            for (j = N; j < ldc; j++)   /* the padding between rows of C is never written */
                if (memcmp(&C[i * ldc + j], &C0[i * ldc + j], sizeof(float)) != 0) pad_bad++;
        }
        snprintf(name, sizeof name, "gemm/%s %lldx%lldx%lld %s%s alpha=%g beta=%g",
                 id < 0 ? "lt_sgemm" : lt__gemm_impl_of(id).name, (long long)M, (long long)N, (long long)K,
                 ta ? "T" : "N", tb ? "T" : "N", alpha, beta);
        if (!(worst <= 1.0) || pad_bad) {
            ok = 0;
            t_check(0, name, "at [%lld,%lld] got %.9g ref %.9g (err/tol %.3g), %lld padding values written",
                    (long long)wi, (long long)wj, wi >= 0 ? C[wi * ldc + wj] : 0.0, wi >= 0 ? ref[wi * N + wj] : 0.0,
                    worst, (long long)pad_bad);
        }
    }
    free(A); free(B); free(C0); free(Craw); free(ref); free(tol);
    return ok;
}

/* The thread split cuts C between lines of register tiles; every element is summed the same way
   whichever thread computes it, so 1, 2 and 3 threads must give the same bits, in each kernel,
   with alpha != 1, beta != 0, a bias epilogue and 16-bit operands; and no thread may write
   outside C (the row padding). */
static int tg_split_case(int id, const tg_shape *sh, int ta, int tb, float alpha, float beta, int bias, lt_dtype p) {
    int64_t M = sh->M, N = sh->N, K = sh->K, i, lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 2, ldc = N + 3;
    size_t na = (size_t)((ta ? K : M) * lda), nb = (size_t)((tb ? N : K) * ldb), nc = (size_t)(M * ldc);
    float *A = (float *)malloc(na * sizeof(float)), *B = (float *)malloc(nb * sizeof(float));
    float *bv = (float *)malloc((size_t)N * sizeof(float)), *C0 = (float *)malloc(nc * sizeof(float));
    float *C[3];
    int t, same = 1, base = lt_get_threads();
    uint32_t seed = (uint32_t)(M * 31 + N * 7 + K);
    lt__gepi e;
    for (i = 0; i < (int64_t)na; i++) A[i] = tg_val(&seed);
    for (i = 0; i < (int64_t)nb; i++) B[i] = tg_val(&seed);
    for (i = 0; i < N; i++) bv[i] = tg_val(&seed);
    for (i = 0; i < (int64_t)nc; i++) C0[i] = tg_val(&seed);
    e = lt__gepi_of((int)p, bias ? bv : NULL);
    for (t = 0; t < 3; t++) {
        C[t] = (float *)malloc(nc * sizeof(float));
        memcpy(C[t], C0, nc * sizeof(float));
        lt_set_threads(t + 1);
        if (p == LT_F32) lt__sgemm_ex(id, ta, tb, M, N, K, alpha, lt__gsrc_f32(A), lda, lt__gsrc_f32(B), ldb, beta, C[t], ldc, &e);
        else {
            lt__gsrc sa = lt__gsrc_f32(A), sb = lt__gsrc_f32(B);
            sa.p = sb.p = (int)p;   /* float32 operands rounded to p while packing */
            lt__sgemm_ex(id, ta, tb, M, N, K, alpha, sa, lda, sb, ldb, beta, C[t], ldc, &e);
        }
        if (t > 0 && memcmp(C[t], C[0], nc * sizeof(float)) != 0) same = 0;
    }
    lt_set_threads(base);
    for (i = 0; i < M && same; i++)
        if (memcmp(C[0] + i * ldc + N, C0 + i * ldc + N, (size_t)(ldc - N) * sizeof(float)) != 0) same = 0;
    if (!same) {
        char name[160];
        snprintf(name, sizeof name, "gemm/split %s %lldx%lldx%lld %s%s alpha=%g beta=%g bias=%d p=%d",
                 lt__gemm_impl_of(id).name, (long long)M, (long long)N, (long long)K, ta ? "T" : "N", tb ? "T" : "N",
                 alpha, beta, bias, (int)p);
        t_check(0, name, "1, 2 and 3 threads differ, or the padding of C was written");
    }
    for (t = 0; t < 3; t++) free(C[t]);
    free(A); free(B); free(bv); free(C0);
    return same;
}

static void test_gemm_split(void) {
    /* tall (cut between rows of tiles), wide (between columns of them), square-ish, long K */
    static const tg_shape shapes[] = {{600, 100, 40}, {37, 900, 70}, {290, 300, 33}, {71, 66, 500}};
    static const lt_dtype ps[] = {LT_F32, LT_BF16, LT_F16};
    int s, t, id, n = 0, bad = 0;
    char msg[96];
    if (!t_want("gemm")) return;
    for (id = 0; id < LT__GEMM_NKERNELS; id++) {
        if (!lt__gemm_supported(id)) continue;
        for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
            for (t = 0; t < 4; t++, n++)
                if (!tg_split_case(id, &shapes[s], t & 1, (t >> 1) & 1, t == 1 ? 1.0f : -0.75f, t == 2 ? 0.0f : t == 3 ? 1.0f : 0.5f,
                                   t != 1, ps[(s + t) % 3]))
                    bad++;
    }
    snprintf(msg, sizeof msg, "gemm/thread split: 1, 2, 3 threads give the same bits (%d cases)", n);
    t_check(bad == 0, msg, "%d of %d cases differ (see above)", bad, n);
}

/* The forward's epilogue (lt__gepi: a float32 bias; or bf16's round16(C + round16(bias)), bias or
   none) is done by the register tiles as they store their last K block (lt__gemm_tiles' fe: the
   bias and bf16 kernels for full tiles, lt__gemm_epilogue on each other tile): the bits must be
   those of the product followed by lt__gemm_epilogue's pass over all of C (fp16 keeps that pass:
   the control).  Each kernel, 1 and 2 threads, full, short (M mod 14 = 4, 8) and edge tiles, one
   and several K blocks, alpha != 1, beta 0, 1 and other, every transposition; bf16 with float32
   operands and with bf16 ones (the AVX512_BF16 pair kernels where they run). */
static void test_gemm_epilogue_fused(void) {
    static const tg_shape shapes[] = {{60, 96, 64}, {256, 64, 300}, {39, 70, 600}, {120, 40, 257}};
    int s, t, th, id, v, n = 0, bad = 0, threads = lt_get_threads();
    char msg[128];
    if (!t_want("gemm")) return;
    for (id = 0; id < LT__GEMM_NKERNELS; id++) {
        if (!lt__gemm_supported(id)) continue;
        for (th = 1; th <= 2; th++) {
            lt_set_threads(th);
            for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
                for (t = 0; t < 6; t++)
                    for (v = 0; v < 5; v++, n++) {
                        /* v: 0 float32 + bias, 1 bf16 + bias, 2 bf16 no bias, 3 bf16 on bf16 operands, 4 fp16 */
                        int64_t M = shapes[s].M, N = shapes[s].N, K = shapes[s].K, i, ta = t & 1, tb = (t >> 1) & 1;
                        int64_t lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 2, ldc = N + 3;
                        size_t na = (size_t)((ta ? K : M) * lda), nb = (size_t)((tb ? N : K) * ldb), nc = (size_t)(M * ldc);
                        float *A = (float *)malloc(na * 4), *B = (float *)malloc(nb * 4), *bv = (float *)malloc((size_t)N * 4);
                        float *C1 = (float *)malloc(nc * 4), *C2 = (float *)malloc(nc * 4);
                        float alpha = t < 2 ? 1.0f : -0.75f, beta = t % 3 == 0 ? 0.0f : t % 3 == 1 ? 1.0f : 0.5f;
                        uint32_t seed = (uint32_t)(M * 131 + N * 17 + K + t + 7 * v);
                        lt_dtype p = v == 0 ? LT_F32 : v == 4 ? LT_F16 : LT_BF16;
                        lt__gsrc sa, sb;
                        lt__gepi e;
                        if (!A || !B || !bv || !C1 || !C2) { bad++; free(A); free(B); free(bv); free(C1); free(C2); continue; }
                        for (i = 0; i < (int64_t)na; i++) A[i] = tg_val(&seed);
                        for (i = 0; i < (int64_t)nb; i++) B[i] = tg_val(&seed);
                        for (i = 0; i < N; i++) bv[i] = tg_val(&seed);
                        for (i = 0; i < (int64_t)nc; i++) C1[i] = C2[i] = tg_val(&seed);
                        for (i = 0; i < K; i++) A[ta ? i * lda : i] = 0.0f;   /* row 0 of op(A) zero: a */
                        /* product of +0, -0.0 after alpha < 0, whose sign a bias-less epilogue keeps */
                        e = lt__gepi_of((int)p, v == 2 ? NULL : bv);
                        sa = lt__gsrc_f32(A); sb = lt__gsrc_f32(B);
                        if (v == 3) sa.p = sb.p = (int)LT_BF16;   /* rounded while packing: the pair kernels */
                        lt__sgemm_ex(id, (int)ta, (int)tb, M, N, K, alpha, sa, lda, sb, ldb, beta, C1, ldc, &e);
                        lt__sgemm_ex(id, (int)ta, (int)tb, M, N, K, alpha, sa, lda, sb, ldb, beta, C2, ldc, NULL);
                        lt__gemm_epilogue(lt__gemm_impl_of(id).isa, &e, C2, ldc, M, N);
                        if (memcmp(C1, C2, nc * 4) != 0) {
                            char name[160];
                            snprintf(name, sizeof name, "gemm/epilogue fused %s %lldx%lldx%lld %s%s beta=%g case %d, %d threads",
                                     lt__gemm_impl_of(id).name, (long long)M, (long long)N, (long long)K, ta ? "T" : "N",
                                     tb ? "T" : "N", beta, v, th);
                            t_check(0, name, "the epilogue done by the tiles differs from the product, then the epilogue");
                            bad++;
                        }
                        free(A); free(B); free(bv); free(C1); free(C2);
                    }
        }
    }
    lt_set_threads(threads);
    snprintf(msg, sizeof msg, "gemm/epilogue fused: the bits of the product, then its epilogue (%d cases)", n);
    t_check(bad == 0, msg, "%d of %d cases differ (see above)", bad, n);
}

/* Streaming stores (lt__gemm_stream_fit): C written once and larger than the caches.  With the
   size threshold lowered to 0, small products take them: every kernel against the double loop,
   at 1 and 2 threads, K within one KC block, a little over it (one long block, up to LT__KC_MAX)
   and over LT__KC_MAX (no streaming), beta 0 (streaming) and 1 (not), C aligned or not. */
static void test_gemm_stream(void) {
    static const tg_shape shapes[] = {{150, 530, 270}, {100, 96, 64}, {29, 70, 384}, {257, 64, 256}, {60, 100, 385}};
    lt__gemm_impl g = lt__gemm_impl_of(lt__gemm_pick());
    int s, t, th, n = 0, bad = 0, threads = lt_get_threads();
    int64_t min0 = lt__gemm_stream_min;
    float Cbuf[48], *Cal = (float *)(((uintptr_t)Cbuf + 63) & ~(uintptr_t)63);   /* 64-byte aligned */
    char msg[128];
    if (!t_want("gemm")) return;
    lt__gemm_stream_min = 0;
    tg_aligned_c = 1;
    for (th = 1; th <= 2; th++) {
        lt_set_threads(th);
        for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
            for (t = 0; t < 4; t++, n++)
                if (!tg_case(&shapes[s], t & 1, (t >> 1) & 1, (t & 1) ? -1.25f : 0.75f, t == 3 ? 1.0f : 0.0f,
                             777u + (uint32_t)(13 * s + t)))
                    bad++;
    }
    lt_set_threads(threads);
    tg_aligned_c = 0;
    for (s = 0; s < 2; s++, n++)   /* unaligned rows: no streaming, still right */
        if (!tg_case(&shapes[s], 0, 1, 1.0f, 0.0f, 99u + (uint32_t)s)) bad++;
    snprintf(msg, sizeof msg, "gemm/streaming stores: every kernel x %d cases at 1 and 2 threads", n);
    t_check(bad == 0, msg, "%d of %d cases failed (see above)", bad, n);
    {   /* which products stream, and the long K block's panel */
        lt__gemm_impl h = g;
        int ok = 1;
        lt__gemm_stream_fit(&h, 150, 530, 270, 0.0f, Cal, 544, NULL);
        if (g.nk && (!h.stream || h.kc != 270 || h.nc % h.nr || (int64_t)h.kc * h.nc > (int64_t)g.kc * g.nc)) ok = 0;
        if (!g.nk && h.stream) ok = 0;
        h = g; lt__gemm_stream_fit(&h, 150, 530, 270, 1.0f, Cal, 544, NULL); if (h.stream || h.kc != g.kc) ok = 0;
        h = g; lt__gemm_stream_fit(&h, 150, 530, 385, 0.0f, Cal, 544, NULL); if (h.stream || h.kc != g.kc) ok = 0;
        h = g; lt__gemm_stream_fit(&h, 150, 530, 200, 0.0f, Cal + 1, 544, NULL); if (h.stream) ok = 0;
        h = g; lt__gemm_stream_fit(&h, 150, 530, 200, 0.0f, Cal, 537, NULL); if (h.stream) ok = 0;
        {   /* of the epilogues, bf16's rounding alone streams (where the kernel has nkr) */
            float bias[4] = {0};
            lt__gepi ebf = lt__gepi_of(LT_BF16, NULL), eb = lt__gepi_of(LT_BF16, bias), e32 = lt__gepi_of(0, bias);
            h = g; lt__gemm_stream_fit(&h, 150, 530, 270, 0.0f, Cal, 544, &ebf); if (h.stream != (g.nkr != NULL)) ok = 0;
            h = g; lt__gemm_stream_fit(&h, 150, 530, 270, 0.0f, Cal, 544, &eb); if (h.stream) ok = 0;
            h = g; lt__gemm_stream_fit(&h, 150, 530, 270, 0.0f, Cal, 544, &e32); if (h.stream) ok = 0;
        }
        lt__gemm_stream_min = -1;   /* the default: above the last-level cache */
        h = g; lt__gemm_stream_fit(&h, 150, 530, 200, 0.0f, Cal, 544, NULL); if (h.stream) ok = 0;
        h = g; lt__gemm_stream_fit(&h, 1024, 50304, 384, 0.0f, Cal, 50304, NULL);
        if (g.nk && (!h.stream || h.kc != 384) && lt__cpu_cache(3) < ((int64_t)200 << 20)) ok = 0;
        t_check(ok, "gemm/streaming stores: chosen for C written once and larger than the caches only",
                "kernel %s: stream decisions or the long block's KC x NC wrong", g.name);
    }
    {   /* K within one block: streaming changes no sum, so the same bits as the usual stores, in
           float32 and with bf16 operands (the AVX512_BF16 pair kernels where they run), without an
           epilogue and with bf16's rounding (the tiles' fe: the streaming kernels that round) */
        static const tg_shape same[] = {{100, 96, 64}, {257, 64, 256}, {28, 64, 200}};
        int64_t i, M, N, K, ldc;
        int same_bits = 1, pi, ep;
        lt__gepi ebf = lt__gepi_of(LT_BF16, NULL);
        for (s = 0; s < 3; s++)
            for (pi = 0; pi < 4; pi++)
                for (t = 0; t < 4; t++) {
                    float *A, *B, *Craw, *C[2];
                    lt__gsrc sa, sb;
                    uint32_t sd = 5u + (uint32_t)t;
                    M = same[s].M; N = same[s].N; K = same[s].K; ldc = N + 16;
                    A = (float *)malloc((size_t)(M * K + K * N) * sizeof(float)); B = A + M * K;
                    Craw = (float *)malloc((size_t)(2 * M * ldc + 16) * sizeof(float));
                    C[0] = (float *)(((uintptr_t)Craw + 63) & ~(uintptr_t)63); C[1] = C[0] + M * ldc;
                    for (i = 0; i < M * K + K * N; i++) A[i] = tg_val(&sd);
                    sa = lt__gsrc_f32(A); sb = lt__gsrc_f32(B);
                    sa.p = sb.p = pi & 1 ? (int)LT_BF16 : 0;
                    ep = pi >> 1;
                    for (i = 0; i < 2; i++) {
                        lt__gemm_stream_min = i ? 0 : -1;
                        lt__sgemm_ex(lt__gemm_pick(), t & 1, (t >> 1) & 1, M, N, K, 0.5f, sa, t & 1 ? M : K, sb,
                                     (t >> 1) & 1 ? K : N, 0.0f, C[i], ldc, ep ? &ebf : NULL);
                    }
                    for (i = 0; i < M; i++)
                        if (memcmp(C[0] + i * ldc, C[1] + i * ldc, (size_t)N * sizeof(float)) != 0) same_bits = 0;
                    free(A); free(Craw);
                }
        t_check(same_bits, "gemm/streaming stores: the same bits as the usual stores (K in one block, f32 and bf16, "
                "with and without bf16's rounding)", "a product differs");
    }
    lt__gemm_stream_min = min0;
}

/* A C larger than L2 whose B fits in it whole (lt__gemm_block_kin: B packed once, each block of
   rows takes all of K before the next): the same sums in the same KC pieces and order as
   lt__gemm_block, so the same bits, in every kernel, float32 and bf16 operands (rounded while
   packed, and stored as 16 bits: the pair and AMX kernels where they run), all four transposes,
   beta 0 and 1, K over two KC blocks with an odd last piece.  The L2 size is lowered
   (lt__gemm_kin_l2) so that these products take that way, and the test checks that they do; 0
   keeps every product on lt__gemm_block.  Then which products the real sizes send there. */
static void test_gemm_kin(void) {
    static const tg_shape shapes[] = {{2600, 32, 301}, {2600, 30, 270}};
    int id, s, t, pi, n = 0, bad = 0, taken = 1;
    int64_t l20 = lt__gemm_kin_l2;
    char msg[160];
    if (!t_want("gemm")) return;
    for (id = 0; id < LT__GEMM_NKERNELS; id++) {
        if (!lt__gemm_supported(id)) continue;
        for (s = 0; s < 2; s++)
            for (pi = 0; pi < 3; pi++)
                for (t = 0; t < 8; t++, n++) {
                    int64_t M = shapes[s].M, N = shapes[s].N, K = shapes[s].K, i, nn;
                    int ta = t & 1, tb = (t >> 1) & 1;
                    int64_t lda = (ta ? M : K) + 2, ldb = (tb ? K : N) + 1, ldc = N + 5;
                    float beta = t >> 2 ? 1.0f : 0.0f, *A, *B, *C[2];
                    uint16_t *Ah = NULL, *Bh = NULL;
                    uint32_t sd = 41u + (uint32_t)(n * 7);
                    lt__gemm_impl g = lt__gemm_impl_of(id);
                    lt__gsrc sa, sb;
                    nn = (ta ? K : M) * lda + (tb ? N : K) * ldb;
                    A = (float *)malloc((size_t)(nn + 2 * M * ldc) * sizeof(float));
                    B = A + (ta ? K : M) * lda; C[0] = A + nn; C[1] = C[0] + M * ldc;
                    for (i = 0; i < nn + M * ldc; i++) A[i] = tg_val(&sd);
                    memcpy(C[1], C[0], (size_t)(M * ldc) * sizeof(float));
                    sa = lt__gsrc_f32(A); sb = lt__gsrc_f32(B);
                    if (pi) sa.p = sb.p = (int)LT_BF16;
                    if (pi == 2) {   /* 16-bit storage */
                        Ah = (uint16_t *)malloc((size_t)nn * sizeof(uint16_t)); Bh = Ah + (B - A);
                        lt__to16(LT_BF16, A, Ah, (size_t)nn);
                        sa.f = sb.f = NULL; sa.h = Ah; sb.h = Bh;
                    }
                    if (pi) lt__gemm_dp(&g);   /* as lt__sgemm_ex: bf16 on the pair or AMX kernel where there is one */
                    g.stream = 0;
                    for (i = 0; i < 2; i++) {
                        lt__gemm_kin_l2 = i ? 2 * lt__gemm_kin_floats(&g, N, K) * 4 : 0;
                        if (i && !lt__gemm_kin_fits(&g, M, N, K, NULL)) taken = 0;
                        lt__gemm_part(&g, ta, tb, M, N, K, 0.75f, sa, lda, sb, ldb, beta, C[i], ldc, NULL);
                    }
                    if (memcmp(C[0], C[1], (size_t)(M * ldc) * sizeof(float)) != 0) {
                        bad++;
                        printf("     %s %lldx%lldx%lld ta %d tb %d beta %g operands %d: differs\n", g.name, (long long)M,
                               (long long)N, (long long)K, ta, tb, beta, pi);
                    }
                    free(A); free(Ah);
                }
    }
    lt__gemm_kin_l2 = l20;
    snprintf(msg, sizeof msg, "gemm/all of K per row block: the bits of the usual loops (%d cases)", n);
    t_check(bad == 0 && taken, msg, "%d of %d cases differ; lowered L2 %s", bad, n, taken ? "taken" : "not taken");
    {   /* with a 2 MiB L2: the bf16 head's weight gradient (dW = dzᵀ·x, 50304 x 384, K = 1024) goes
           there; not in float32 (B too large), not with K in one block, an epilogue, or a small C */
        lt__gemm_impl f = lt__gemm_impl_of(lt__gemm_pick()), h = f;
        lt__gepi e = lt__gepi_of(0, NULL);
        int ok = 1;
        lt__gemm_dp(&h);
        f.stream = h.stream = 0;
        lt__gemm_kin_l2 = 2 << 20;
        if (h.dp && !lt__gemm_kin_fits(&h, 50304, 384, 1024, NULL)) ok = 0;
        if (lt__gemm_kin_fits(&f, 50304, 384, 1024, NULL) || lt__gemm_kin_fits(&h, 50304, 384, 256, NULL) ||
            lt__gemm_kin_fits(&h, 50304, 384, 1024, &e) || lt__gemm_kin_fits(&h, 1536, 384, 1024, NULL))
            ok = 0;
        lt__gemm_kin_l2 = l20;
        t_check(ok, "gemm/all of K per row block: chosen for a C larger than L2 whose B fits in it only",
                "decisions wrong (kernel %s, bf16 %s)", f.name, h.name);
    }
}

static void test_gemm_all(void) {
    static const tg_shape shapes[] = {
        {1, 1, 1}, {3, 17, 31}, {17, 31, 3}, {31, 65, 17}, {65, 129, 257}, {129, 257, 65}, {257, 3, 129},
        {1, 257, 257}, {257, 1, 257}, {257, 257, 1}, {65, 65, 65}, {14, 32, 33}, {28, 64, 7}, {6, 16, 5},
        {129, 31, 300},                /* K over one KC block: beta applies to the first block only */
        {150, 530, 270},               /* M over MC, N over NC, K over KC */
        {40, 1030, 20},                /* wide and short: the thread split cuts columns */
        {4, 64, 19}, {18, 96, 300},    /* a last sliver of 4 rows: the 4-row short tile writes C */
        {8, 70, 45}, {22, 64, 33},     /* ... of 8 rows: the 8-row one (N = 70: and on the side) */
        {256, 96, 40}, {384, 40, 24},  /* training heights: 256 = 18 x 14 + 4, 384 = 27 x 14 + 6 */
    };
    static const float betas[] = {0.0f, 1.0f, -0.5f};
    int s, t, n = 0, bad = 0;
    uint32_t seed = 12345;
    char msg[96];
    if (!t_want("gemm")) return;
    for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
        for (t = 0; t < 4; t++) {
            float alpha = (t & 1) ? -1.25f : 0.75f, beta = betas[(s + t) % 3];
            n++;
            if (!tg_case(&shapes[s], t & 1, (t >> 1) & 1, alpha, beta, seed + (uint32_t)(97 * s + t))) bad++;
        }
    /* a few more: alpha == 1 with each beta on one blocked shape, and K == 0 (C = beta*C) */
    for (t = 0; t < 3; t++, n++)
        if (!tg_case(&shapes[4], t & 1, 0, 1.0f, betas[t], seed + 7u * (uint32_t)t)) bad++;
    {
        tg_shape k0 = {5, 7, 0};
        for (t = 0; t < 3; t++, n++) if (!tg_case(&k0, 0, t & 1, 2.0f, betas[t], seed + (uint32_t)t)) bad++;
    }
    snprintf(msg, sizeof msg, "gemm/all kernels x %d cases (%s runs here)", n, lt_kernel_name());
    t_check(bad == 0, msg, "%d of %d cases failed (see above)", bad, n);
    t_check(lt_kernel_name() != NULL && lt_kernel_name()[0] != 0, "gemm/kernel name", "empty");
    test_gemm_split();
    test_gemm_epilogue_fused();
    test_gemm_stream();
    test_gemm_kin();
    {   /* the B panel fitted to L2: half of it, a multiple of NR, at least 4 NR, at most the kernel's NC */
        lt__gemm_impl g = lt__gemm_impl_of(lt__gemm_pick()), h;
        int nc0 = g.nc, ok = 1, i;
        static const int64_t l2[] = {0, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 32 << 20, 4096};
        for (i = 0; i < (int)(sizeof l2 / sizeof l2[0]); i++) {
            h = g; h.nc = nc0;
            lt__gemm_fit(&h, l2[i]);
            if (h.nc % h.nr || h.nc > nc0 || (h.nc < 4 * h.nr && h.nc != nc0) ||
                (l2[i] > 0 && h.nc != nc0 && (int64_t)h.nc * h.kc * 4 > l2[i] / 2 && h.nc != 4 * h.nr) ||
                (l2[i] <= 0 && h.nc != nc0)) {
                ok = 0;
                printf("     L2 %lld: NC %d (kernel's %d, NR %d, KC %d)\n", (long long)l2[i], h.nc, nc0, h.nr, h.kc);
            }
        }
        t_check(ok, "gemm/blocking fitted to L2", "see above");
    }
    {   /* the smallest NC the fit can choose gives the same bits (N blocks never change a sum) */
        lt__gemm_impl g = lt__gemm_impl_of(lt__gemm_pick());
        int64_t M = 150, N = 530, K = 270, i, diff = 0;
        int threads = lt_get_threads();
        float *A = (float *)malloc((size_t)(M * K + K * N + 2 * M * N) * sizeof(float)), *B = A + M * K, *C1 = B + K * N, *C2 = C1 + M * N;
        uint32_t sd = 99;
        for (i = 0; i < M * K + K * N; i++) { sd = sd * 1664525u + 1013904223u; A[i] = (float)(sd >> 8) / 16777216.0f - 0.5f; }
        lt_set_threads(1);   /* the built-in kernel at its own NC (lt_sgemm may be cblas) */
        lt__gemm_block(&g, 0, 0, M, N, K, 1.0f, lt__gsrc_f32(A), K, lt__gsrc_f32(B), N, 0.0f, C1, N, NULL);
        g.nc = 4 * g.nr;
        lt__gemm_block(&g, 0, 0, M, N, K, 1.0f, lt__gsrc_f32(A), K, lt__gsrc_f32(B), N, 0.0f, C2, N, NULL);
        lt_set_threads(threads);
        for (i = 0; i < M * N; i++) diff += C1[i] != C2[i];
        t_check(diff == 0, "gemm/smallest fitted NC gives the same bits", "%lld of %lld differ", (long long)diff, (long long)(M * N));
        free(A);
    }
#ifdef LT__X86
    /* LT_CPU_OFF's list: names as /proc/cpuinfo spells them, unknown ones ignored, no partial match */
    t_check(lt__cpu_named("avx512_bf16") == LT__CPU_AVX512BF16, "gemm/cpu_off/one", "%x", lt__cpu_named("avx512_bf16"));
    t_check(lt__cpu_named("f16c,avx2,,nosuch") == (LT__CPU_F16C | LT__CPU_AVX2), "gemm/cpu_off/list", "%x",
            lt__cpu_named("f16c,avx2,,nosuch"));
    t_check(lt__cpu_named("avx512") == 0 && lt__cpu_named("") == 0 && lt__cpu_named(NULL) == 0,
            "gemm/cpu_off/no partial names", "%x", lt__cpu_named("avx512"));
#endif
}

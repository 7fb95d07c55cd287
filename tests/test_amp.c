/* test_amp.c - mixed precision: fp16/bf16 conversions against PyTorch (tests/ref/amp.bin, written
   by tests/ref/gen_amp.py), every SIMD kernel against the scalar code, stochastic rounding, and the
   loss scaler against torch.cuda.amp.GradScaler's rules.  #included by test_main.c. */

static const char *const ta__kname[LT__K_COUNT] = {"scalar", "avx2", "avx512f", "avx512bf16"};
static const char *const ta__cvname[LT__CV_COUNT] = {"f32_to_bf16", "bf16_to_f32", "f32_to_f16", "f16_to_f32"};

static uint32_t ta__bits(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
static int ta__is_nan16(uint16_t h, int bf) {
    return bf ? (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu) : (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
}

/* fp16 -> float32 bits worked out another way: the exact value m·2^(e-25) by ldexp; a NaN keeps
   its payload and gets the quiet bit (gen_amp.py checks this rule against torch on all 65,536). */
static uint32_t ta__f16_ref(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u;
    double v;
    if (e == 31) return sign | 0x7F800000u | (m ? 0x00400000u | (m << 13) : 0u);
    v = e ? ldexp((double)(m + 1024u), (int)e - 25) : ldexp((double)m, -24);
    return sign | ta__bits((float)v);
}

/* Every 16-bit pattern: to float32 (scalar, each kernel, the array function) and back. */
static void ta__all16(void) {
    uint16_t *h = (uint16_t *)malloc(65536 * sizeof(uint16_t)), *back = (uint16_t *)malloc(65536 * sizeof(uint16_t));
    float *f = (float *)malloc(65536 * sizeof(float)), *g = (float *)malloc(65536 * sizeof(float));
    int bf, k;
    uint32_t i;
    if (!h || !back || !f || !g) { t_check(0, "amp/all16", "out of memory"); goto done; }
    for (i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    for (bf = 1; bf >= 0; bf--) {
        const char *fmt = bf ? "bf16" : "fp16";
        int cv_from = bf ? LT__CV_FROM_BF16 : LT__CV_FROM_F16;
        int64_t bad = 0, first = -1, nan_bad = 0, n_nan = 0;
        char name[96];
        for (i = 0; i < 65536; i++) {
            uint32_t want = bf ? i << 16 : ta__f16_ref((uint16_t)i);
            f[i] = bf ? lt_bf16_to_f32((uint16_t)i) : lt_f16_to_f32((uint16_t)i);
            if (ta__bits(f[i]) != want && bad++ == 0) first = i;
        }
        snprintf(name, sizeof name, "amp/%s_to_f32/all_65536", fmt);
        t_check(bad == 0, name, "%lld wrong, first %04llx -> %08x", (long long)bad, (long long)first,
                first >= 0 ? ta__bits(f[first]) : 0u);
        for (k = 0; k < LT__K_COUNT; k++) {
            if (!lt__k_available(k) || !lt__cv_run(cv_from, k, h, g, 65536)) continue;
            snprintf(name, sizeof name, "amp/%s_to_f32/all_65536/%s", fmt, ta__kname[k]);
            t_check(memcmp(f, g, 65536 * sizeof(float)) == 0, name, "differs from the scalar conversion");
        }
        if (bf) lt_bf16_to_f32_array(h, g, 65536); else lt_f16_to_f32_array(h, g, 65536);
        snprintf(name, sizeof name, "amp/%s_to_f32/all_65536/array", fmt);
        t_check(memcmp(f, g, 65536 * sizeof(float)) == 0, name, "differs from the scalar conversion");
        /* and back: every number exactly, every NaN to a NaN (0xFFFF, or sign | 0x7E00) */
        bad = 0; first = -1;
        for (i = 0; i < 65536; i++) {
            uint16_t r = bf ? lt_f32_to_bf16(f[i]) : lt_f32_to_f16(f[i]);
            if (ta__is_nan16((uint16_t)i, bf)) {
                n_nan++;
                if (!ta__is_nan16(r, bf) || r != (bf ? 0xFFFFu : ((i & 0x8000u) | 0x7E00u))) nan_bad++;
            } else if (r != i && bad++ == 0) first = i;
        }
        snprintf(name, sizeof name, "amp/%s_roundtrip/all_65536", fmt);
        t_check(bad == 0 && nan_bad == 0, name, "%lld numbers changed (first %04llx), %lld of %lld NaNs wrong",
                (long long)bad, (long long)first, (long long)nan_bad, (long long)n_nan);
        if (bf) lt_f32_to_bf16_array(f, back, 65536); else lt_f32_to_f16_array(f, back, 65536);
        for (bad = 0, i = 0; i < 65536; i++)
            bad += back[i] != (bf ? lt_f32_to_bf16(f[i]) : lt_f32_to_f16(f[i]));
        snprintf(name, sizeof name, "amp/%s_roundtrip/all_65536/array", fmt);
        t_check(bad == 0, name, "%lld differ from the scalar conversion", (long long)bad);
    }
done:
    free(h); free(back); free(f); free(g);
}

/* float32 -> 16 bit against torch on the special cases and random floats of gen_amp.py. */
static void ta__torch(void) {
    t_ref r;
    t_arr *in, *out;
    char path[512], name[128];
    int64_t n, i, bad_b = 0, bad_h = 0, fb = -1, fh = -1;
    float *x = NULL;
    uint16_t *want_b = NULL, *want_h = NULL, *got = NULL;
    int k, cv;
    snprintf(path, sizeof path, "%s/amp.bin", t_ref_dir());
    if (!t_ref_load(&r, path) || !(in = t_ref_get(&r, "in")) || !(out = t_ref_get(&r, "out")) || in->n != out->n) {
        t_check(0, "amp/torch/ref_file", "cannot read %s (make it with: python3 tests/ref/gen_amp.py)", path);
        t_ref_free(&r);
        return;
    }
    n = in->n;
    x = in->data; /* raw float32 bit patterns, NaN payloads included */
    want_b = (uint16_t *)malloc((size_t)n * sizeof(uint16_t));
    want_h = (uint16_t *)malloc((size_t)n * sizeof(uint16_t));
    got = (uint16_t *)malloc((size_t)n * sizeof(uint16_t));
    if (!want_b || !want_h || !got) { t_check(0, "amp/torch", "out of memory"); goto done; }
    for (i = 0; i < n; i++) {
        uint32_t o = ta__bits(out->data[i]);
        want_b[i] = (uint16_t)(o & 0xFFFFu);
        want_h[i] = (uint16_t)(o >> 16);
        if (lt_f32_to_bf16(x[i]) != want_b[i] && bad_b++ == 0) fb = i;
        if (lt_f32_to_f16(x[i]) != want_h[i] && bad_h++ == 0) fh = i;
    }
    snprintf(name, sizeof name, "amp/torch/f32_to_bf16 (%lld values)", (long long)n);
    t_check(bad_b == 0, name, "%lld differ; first %08x -> %04x, torch %04x", (long long)bad_b,
            fb >= 0 ? ta__bits(x[fb]) : 0u, fb >= 0 ? lt_f32_to_bf16(x[fb]) : 0, fb >= 0 ? want_b[fb] : 0);
    snprintf(name, sizeof name, "amp/torch/f32_to_f16 (%lld values)", (long long)n);
    t_check(bad_h == 0, name, "%lld differ; first %08x -> %04x, torch %04x", (long long)bad_h,
            fh >= 0 ? ta__bits(x[fh]) : 0u, fh >= 0 ? lt_f32_to_f16(x[fh]) : 0, fh >= 0 ? want_h[fh] : 0);
    for (cv = LT__CV_TO_BF16; cv <= LT__CV_TO_F16; cv += 2) {
        const uint16_t *want = cv == LT__CV_TO_BF16 ? want_b : want_h;
        for (k = 0; k <= LT__K_COUNT; k++) { /* k == LT__K_COUNT: the public array function */
            if (k < LT__K_COUNT && (!lt__k_available(k) || !lt__cv_run(cv, k, x, got, (size_t)n))) continue;
            if (k == LT__K_COUNT) {
                if (cv == LT__CV_TO_BF16) lt_f32_to_bf16_array(x, got, (size_t)n);
                else lt_f32_to_f16_array(x, got, (size_t)n);
            }
            snprintf(name, sizeof name, "amp/torch/%s/%s", ta__cvname[cv], k < LT__K_COUNT ? ta__kname[k] : "array");
            t_check(memcmp(got, want, (size_t)n * sizeof(uint16_t)) == 0, name, "differs from torch");
        }
    }
done:
    free(want_b); free(want_h); free(got);
    t_ref_free(&r);
}

/* How many random float32 -> 16 bit samples each kernel is held against the scalar code on:
   10^8 in the plain build (about a second), 10^6 under the sanitizers; LT_AMP_SAMPLES overrides. */
static int64_t ta__nsamples(void) {
    const char *e = getenv("LT_AMP_SAMPLES");
    if (e && atoll(e) > 0) return atoll(e);
#if defined(__SANITIZE_ADDRESS__)
    return 1000000;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 1000000;
#endif
#endif
    return 100000000;
}

/* Chunks of samples, each a mix of four kinds in turn: a sweep over all 2^32 bit patterns with a
   fixed odd stride, uniform random bits (NaNs, infs and subnormals included), values a bf16 tie or
   one bit off it, and fp16-range values at or near an fp16 tie.  Most 16-lane blocks hold no NaN or
   subnormal (the kernels' fast paths); the others exercise their fix-ups.  The odd chunk length
   leaves a tail for the scalar remainder loops. */
static void ta__samples(void) {
    const size_t CH = 1048573;
    int64_t total = ta__nsamples(), done_n = 0, bad[LT__CV_COUNT][LT__K_COUNT + 1];
    float *x = (float *)malloc(CH * sizeof(float));
    uint16_t *rb = (uint16_t *)malloc(CH * sizeof(uint16_t)), *rh = (uint16_t *)malloc(CH * sizeof(uint16_t));
    uint16_t *got = (uint16_t *)malloc(CH * sizeof(uint16_t));
    uint32_t sweep = 0, stride = (uint32_t)(4294967296.0 / (double)(total / 4 + 1)) | 1u;
    lt_rng rng;
    int k, cv;
    char name[128];
    memset(bad, 0, sizeof bad);
    lt_rng_seed(&rng, 77);
    if (!x || !rb || !rh || !got) { t_check(0, "amp/samples", "out of memory"); goto done; }
    while (done_n < total) {
        size_t n = total - done_n < (int64_t)CH ? (size_t)(total - done_n) : CH, i;
        for (i = 0; i < n; i++) {
            uint64_t r = lt_rng_u64(&rng);
            uint32_t u = (uint32_t)r, v = (uint32_t)(r >> 32);
            switch (i & 3) {
            case 0: u = sweep; sweep += stride; break;
            case 1: break;
            case 2: u = (u & 0xFFFF0000u) | (0x7FFFu + (v % 3u)); break;
            default: /* exponent 2^-26 .. 2^16, low 13 bits at the fp16 tie, one off, or random */
                u = (u & 0x807FFFFFu) | ((101u + v % 43u) << 23);
                if (v & 0x100000u) u = (u & ~0x1FFFu) | (0x0FFFu + ((v >> 8) % 3u));
                break;
            }
            memcpy(&x[i], &u, sizeof u);
        }
        lt__to_bf16_scalar(x, rb, n);
        lt__to_f16_scalar(x, rh, n);
        for (cv = LT__CV_TO_BF16; cv <= LT__CV_TO_F16; cv += 2) {
            const uint16_t *want = cv == LT__CV_TO_BF16 ? rb : rh;
            for (k = 1; k <= LT__K_COUNT; k++) {
                if (k < LT__K_COUNT && (!lt__k_available(k) || !lt__cv_run(cv, k, x, got, n))) continue;
                if (k == LT__K_COUNT) {
                    if (cv == LT__CV_TO_BF16) lt_f32_to_bf16_array(x, got, n);
                    else lt_f32_to_f16_array(x, got, n);
                }
                if (memcmp(got, want, n * sizeof(uint16_t)) != 0)
                    for (i = 0; i < n; i++) bad[cv][k] += got[i] != want[i];
            }
        }
        done_n += (int64_t)n;
    }
    for (cv = LT__CV_TO_BF16; cv <= LT__CV_TO_F16; cv += 2)
        for (k = 1; k <= LT__K_COUNT; k++) {
            if (k < LT__K_COUNT && (!lt__k_available(k) || !lt__cv_run(cv, k, x, got, 0))) continue;
            snprintf(name, sizeof name, "amp/samples/%s/%s == scalar (%lld samples)", ta__cvname[cv],
                     k < LT__K_COUNT ? ta__kname[k] : "array", (long long)total);
            t_check(bad[cv][k] == 0, name, "%lld differ", (long long)bad[cv][k]);
        }
done:
    free(x); free(rb); free(rh); free(got);
}

/* Short and misaligned arrays through every kernel: the remainder loops and unaligned loads. */
static void ta__tails(void) {
    float x[64 + 4], f0[64], f1[64];
    uint16_t h[64 + 4], r0[64], r1[64];
    int64_t bad = 0;
    lt_rng rng;
    int i, n, off, k, cv;
    lt_rng_seed(&rng, 5);
    for (i = 0; i < 68; i++) {
        uint32_t u = (uint32_t)lt_rng_u64(&rng);
        if (i % 7 == 3) u |= 0x7F800001u; /* some NaNs */
        memcpy(&x[i], &u, sizeof u);
        h[i] = (uint16_t)(u >> 7);
    }
    for (cv = 0; cv < LT__CV_COUNT; cv++)
        for (k = 1; k < LT__K_COUNT; k++) {
            if (!lt__k_available(k) || !lt__cv_run(cv, k, x, r1, 0)) continue;
            for (off = 0; off < 4; off++)
                for (n = 0; n <= 64; n++) {
                    const void *in = cv == LT__CV_TO_BF16 || cv == LT__CV_TO_F16 ? (const void *)(x + off) : (const void *)(h + off);
                    int to16 = cv == LT__CV_TO_BF16 || cv == LT__CV_TO_F16;
                    lt__cv_run(cv, LT__K_SCALAR, in, to16 ? (void *)r0 : (void *)f0, (size_t)n);
                    lt__cv_run(cv, k, in, to16 ? (void *)r1 : (void *)f1, (size_t)n);
                    if (to16 ? memcmp(r0, r1, (size_t)n * 2) != 0 : memcmp(f0, f1, (size_t)n * 4) != 0) bad++;
                }
        }
    t_check(bad == 0, "amp/kernels/short_and_misaligned", "%lld (conversion, kernel, offset, n) cases differ",
            (long long)bad);
}

static void ta__stochastic(void) {
    lt_rng a, b;
    int i, ok_det = 1, ok_nb = 1, ok_exact = 1, ups = 0;
    const int N = 100000;
    double mean = 0;
    float x = lt__bits_f32(0x3F804000u); /* 1 + 2^-9: a quarter of the way from 1 to 1 + 2^-7 */
    float xs[9];
    uint16_t o1[9], o2[9];
    lt_rng_seed(&a, 3); lt_rng_seed(&b, 3);
    for (i = 0; i < 1000; i++) {
        float v = (float)lt_rng_normal(&a) * 100.0f;
        uint16_t s1, s2, lo = (uint16_t)(ta__bits(v) >> 16);
        lt_rng_normal(&b);
        s1 = lt_f32_to_bf16_stochastic(v, &a);
        s2 = lt_f32_to_bf16_stochastic(v, &b);
        ok_det &= s1 == s2;
        ok_nb &= s1 == lo || s1 == (uint16_t)(lo + 1);
        ok_exact &= lt_f32_to_bf16_stochastic(lt_bf16_to_f32(lo), &a) == lo;
        lt_f32_to_bf16_stochastic(v, &b);
    }
    t_check(ok_det, "amp/stochastic/seeded", "same seed, different results");
    t_check(ok_nb, "amp/stochastic/neighbours", "a result is neither neighbour of its input");
    t_check(ok_exact, "amp/stochastic/exact_values_kept", "a bf16 value changed");
    for (i = 0; i < N; i++) {
        uint16_t r = lt_f32_to_bf16_stochastic(x, &a);
        ups += r == 0x3F81;
        mean += lt_bf16_to_f32(r);
    }
    mean /= N;
    /* P(up) = 1/4: the count has sd sqrt(N·3/16) ≈ 137, so 6 sd = 822; the mean's sd is 2^-7·0.433/sqrt(N) */
    t_check(abs(ups - N / 4) < 822 && fabs(mean - (double)x) < 6 * 0.0078125 * 0.433 / sqrt((double)N),
            "amp/stochastic/unbiased", "%d of %d rounded up (expect %d), mean %.9g vs %.9g", ups, N, N / 4, mean,
            (double)x);
    t_check(lt_f32_to_bf16_stochastic(lt__bits_f32(0x7FC00001u), &a) == 0xFFFF &&
            lt_f32_to_bf16_stochastic(INFINITY, &a) == 0x7F80 && lt_f32_to_bf16_stochastic(-INFINITY, &a) == 0xFF80,
            "amp/stochastic/nan_inf", "NaN or inf mishandled");
    for (i = 0; i < 9; i++) xs[i] = 1.0f + (float)i / 1000.0f;
    lt_rng_seed(&a, 11); lt_rng_seed(&b, 11);
    lt_f32_to_bf16_stochastic_array(xs, o1, 9, &a);
    o2[0] = lt_f32_to_bf16_stochastic(xs[0], &b);
    lt_rng_seed(&b, 11);
    {
        uint64_t r0 = lt_rng_u64(&b), r1 = lt_rng_u64(&b), r2 = lt_rng_u64(&b);
        int ok = o1[0] == o2[0] && memcmp(&a, &b, sizeof a) == 0; /* 9 elements: 3 draws */
        ok &= o1[5] == lt__bf16_sr(xs[5], (uint32_t)(r1 >> 32) & 0xFFFFu);
        ok &= o1[8] == lt__bf16_sr(xs[8], (uint32_t)(r2 >> 48));
        (void)r0;
        t_check(ok, "amp/stochastic/array_layout", "the array form does not use the documented bits");
    }
}

/* ---- the loss scaler ------------------------------------------------------------------------------ */
/* A tiny model: y = x·wᵀ + b, w [3,4], b [3], AdamW; mse loss on inputs fixed by the step number. */
typedef struct { lt_ctx *ctx; lt_tensor *w, *b; lt_optim *opt; lt_paramset ps; } ta__model;

static int ta__model_init(ta__model *m) {
    int64_t ws[2] = {3, 4}, bs[1] = {3};
    lt_adamw_config c = lt_adamw_defaults();
    c.lr = 1e-2;
    memset(m, 0, sizeof *m);
    m->ctx = lt_ctx_create(42);
    if (!m->ctx) return 0;
    m->w = lt_param(m->ctx, "w", 2, ws);
    m->b = lt_param(m->ctx, "b", 1, bs);
    if (!m->w || !m->b) return 0;
    lt_init_normal(m->ctx, m->w, 0, 0.5);
    lt_init_normal(m->ctx, m->b, 0, 0.5);
    m->ps = lt_ctx_params(m->ctx);
    m->opt = lt_adamw_create(m->ctx, m->ps, c);
    return m->opt != NULL;
}
static void ta__model_free(ta__model *m) { lt_optim_destroy(m->opt); lt_ctx_destroy(m->ctx); }

static lt_tensor *ta__loss(ta__model *m, int s) {
    float x[8 * 4], y[8 * 3];
    int64_t xs[2] = {8, 4}, ys[2] = {8, 3};
    int i;
    for (i = 0; i < 32; i++) x[i] = sinf(0.37f * (float)(i + 1) * (float)(s + 1));
    for (i = 0; i < 24; i++) y[i] = cosf(0.11f * (float)(i + 3) * (float)(s + 2));
    return lt_mse_loss(m->ctx, lt_linear(m->ctx, lt_tensor_from(m->ctx, x, 2, xs), m->w, m->b),
                       lt_tensor_from(m->ctx, y, 2, ys));
}
/* Two micro-batches, each loss scaled (sc may be NULL: an unscaled run). */
static lt_status ta__backward(ta__model *m, lt_scaler *sc, int s) {
    int mb;
    lt_zero_grad(m->ctx);
    for (mb = 0; mb < 2; mb++) {
        lt_tensor *loss = ta__loss(m, 2 * s + mb);
        lt_backward(m->ctx, sc ? lt_scaler_scale_loss(m->ctx, sc, loss) : loss);
    }
    return lt_status_of(m->ctx);
}
/* 1 when the two models' params (and with moments, AdamW's m and v) are equal to the bit. */
static int ta__same(ta__model *a, ta__model *b, int grads, int moments) {
    int i, w;
    for (i = 0; i < a->ps.n; i++) {
        size_t bytes = (size_t)a->ps.p[i]->n * sizeof(float);
        if (memcmp(a->ps.p[i]->data, b->ps.p[i]->data, bytes) != 0) return 0;
        if (grads && memcmp(a->ps.p[i]->grad, b->ps.p[i]->grad, bytes) != 0) return 0;
        for (w = 0; moments && w < 2; w++)
            if (memcmp(lt_optim_state(a->opt, i, w), lt_optim_state(b->opt, i, w), bytes) != 0) return 0;
    }
    return 1;
}
static void ta__copy(ta__model *dst, ta__model *src) { /* params and moments, into a same-shaped model */
    int i, w;
    for (i = 0; i < src->ps.n; i++) {
        size_t bytes = (size_t)src->ps.p[i]->n * sizeof(float);
        memcpy(dst->ps.p[i]->data, src->ps.p[i]->data, bytes);
        for (w = 0; w < 2; w++) memcpy(lt_optim_state(dst->opt, i, w), lt_optim_state(src->opt, i, w), bytes);
    }
}

/* A scaled run with an inf gradient injected at step 5 and a NaN at step 8, in lockstep with an
   unscaled run that simply leaves out those two steps: the skipped steps change nothing (bit for
   bit), the scale halves each time, and the unscaled gradients equal the plain run's before and
   after clipping (scales are powers of two, so scaling is exact). */
static void ta__scaler_skip(void) {
    ta__model A, B, snap;
    lt_scaler sc = lt_scaler_defaults();
    const int N = 12, K1 = 5, K2 = 8;
    int s, grads_ok = 1, clip_ok = 1, skip_ok = 1, scale_ok = 1;
    if (!ta__model_init(&A) || !ta__model_init(&B) || !ta__model_init(&snap)) {
        t_check(0, "amp/scaler/skip", "setup failed: %s", lt_error(A.ctx));
        goto done;
    }
    for (s = 0; s < N; s++) {
        int inject = s == K1 || s == K2;
        double before = lt_scaler_get_scale(&sc);
        ta__backward(&A, &sc, s);
        if (s == K1) A.w->grad[5] = INFINITY;
        if (s == K2) A.b->grad[1] = NAN;
        lt_scaler_unscale(A.ctx, &sc, A.ps);
        if (!inject) {
            ta__backward(&B, NULL, s);
            grads_ok &= ta__same(&A, &B, 1, 1);
        }
        if (lt_scaler_found_inf(&sc) != inject) skip_ok = 0;
        if (!lt_scaler_found_inf(&sc)) lt_clip_grad_norm(A.ctx, A.ps, 0.05);
        if (!inject) {
            lt_clip_grad_norm(B.ctx, B.ps, 0.05);
            clip_ok &= ta__same(&A, &B, 1, 1);
        }
        ta__copy(&snap, &A);
        lt_scaler_step(&sc, A.opt, -1);
        if (!inject) lt_optim_step(B.opt, -1);
        if (inject) skip_ok &= ta__same(&A, &snap, 0, 1) && lt_optim_steps(A.opt) == lt_optim_steps(B.opt);
        lt_scaler_update(&sc);
        scale_ok &= lt_scaler_get_scale(&sc) == (inject ? before / 2 : before);
    }
    t_check(!lt_failed(A.ctx) && !lt_failed(B.ctx), "amp/scaler/no_errors", "%s%s", lt_error(A.ctx), lt_error(B.ctx));
    t_check(grads_ok, "amp/scaler/unscaled_grads_equal_unscaled_run", "gradients differ (before clipping)");
    t_check(clip_ok, "amp/scaler/clipped_grads_equal_unscaled_run", "gradients differ after clipping");
    t_check(skip_ok, "amp/scaler/inf_step_skipped_bit_exact",
            "a skipped step changed parameters, moments or the step count, or found_inf was wrong");
    t_check(scale_ok && lt_scaler_get_scale(&sc) == 16384.0 && lt_scaler_skipped(&sc) == 2, "amp/scaler/backoff",
            "scale %g, skipped %lld (expect 16384, 2)", lt_scaler_get_scale(&sc), (long long)lt_scaler_skipped(&sc));
    t_check(ta__same(&A, &B, 0, 1) && lt_optim_steps(A.opt) == N - 2 && lt_optim_steps(B.opt) == N - 2,
            "amp/scaler/run_equals_run_without_skipped_steps", "final parameters or moments differ (steps %lld, %lld)",
            (long long)lt_optim_steps(A.opt), (long long)lt_optim_steps(B.opt));
done:
    ta__model_free(&A); ta__model_free(&B); ta__model_free(&snap);
}

/* growth_interval clean steps double the scale (not one step earlier); an inf resets the count. */
static void ta__scaler_growth(void) {
    ta__model A;
    lt_scaler sc = lt_scaler_defaults();
    int s, ok_before = 1;
    if (!ta__model_init(&A)) { t_check(0, "amp/scaler/growth", "setup failed"); ta__model_free(&A); return; }
    for (s = 0; s < 2000; s++) {
        ta__backward(&A, &sc, s % 50);
        lt_scaler_step(&sc, A.opt, 1e-4);
        lt_scaler_update(&sc);
        if (s < 1999) ok_before &= sc.scale == 65536.0f && sc.growth_tracker == s + 1;
    }
    t_check(ok_before && lt_scaler_get_scale(&sc) == 131072.0 && sc.growth_tracker == 0 && lt_scaler_skipped(&sc) == 0 &&
            lt_optim_steps(A.opt) == 2000 && !lt_failed(A.ctx),
            "amp/scaler/growth_after_2000_clean_steps", "scale %g tracker %lld steps %lld (%s)", lt_scaler_get_scale(&sc),
            (long long)sc.growth_tracker, (long long)lt_optim_steps(A.opt), lt_error(A.ctx));
    for (s = 0; s < 3; s++) { ta__backward(&A, &sc, s); lt_scaler_step(&sc, A.opt, 1e-4); lt_scaler_update(&sc); }
    ta__backward(&A, &sc, 0);
    A.b->grad[0] = -INFINITY;
    lt_scaler_step(&sc, A.opt, 1e-4); /* unscales by itself */
    lt_scaler_update(&sc);
    t_check(sc.growth_tracker == 0 && lt_scaler_get_scale(&sc) == 65536.0 && lt_scaler_skipped(&sc) == 1 &&
            lt_optim_steps(A.opt) == 2003, "amp/scaler/inf_resets_growth", "scale %g tracker %lld steps %lld",
            lt_scaler_get_scale(&sc), (long long)sc.growth_tracker, (long long)lt_optim_steps(A.opt));
    /* torch never grows the scale to inf */
    sc.scale = ldexpf(1.0f, 127);
    sc.growth_interval = 1;
    lt_zero_grad(A.ctx); /* a clean step without a backward (2^127 would overflow the gradients) */
    lt_scaler_unscale(A.ctx, &sc, A.ps);
    lt_scaler_step(&sc, A.opt, 1e-4);
    lt_scaler_update(&sc);
    t_check(sc.scale == ldexpf(1.0f, 127) && sc.growth_tracker == 0, "amp/scaler/no_growth_to_inf", "scale %g",
            (double)sc.scale);
    ta__model_free(&A);
}

/* Call-order rules, disabled scaler, settings torch rejects, state save/restore. */
static void ta__scaler_rules(void) {
    ta__model A;
    lt_scaler sc = lt_scaler_defaults(), off = lt_scaler_defaults(), bad;
    lt_scaler_state st, st2;
    float g0;
    lt_tensor *loss;
    if (!ta__model_init(&A)) { t_check(0, "amp/scaler/rules", "setup failed"); ta__model_free(&A); return; }
    t_check(lt_scaler_update(&sc) == LT_ERR_STATE && sc.scale == 65536.0f, "amp/scaler/update_needs_unscale",
            "update with no inf check recorded should fail and change nothing");
    ta__backward(&A, &sc, 0);
    lt_scaler_unscale(A.ctx, &sc, A.ps);
    g0 = A.w->grad[0];
    t_check(lt_scaler_unscale(A.ctx, &sc, A.ps) == LT_OK && A.w->grad[0] == g0, "amp/scaler/unscale_idempotent",
            "the second unscale changed gradients");
    lt_scaler_step(&sc, A.opt, -1);
    t_check(lt_scaler_step(&sc, A.opt, -1) == LT_ERR_STATE && lt_optim_steps(A.opt) == 1, "amp/scaler/step_twice",
            "a second step before update should be an LT_ERR_STATE error (%s)", lt_error(A.ctx));
    lt_clear_error(A.ctx);
    t_check(lt_scaler_unscale(A.ctx, &sc, A.ps) == LT_ERR_STATE, "amp/scaler/unscale_after_step", "no error");
    lt_clear_error(A.ctx);
    lt_scaler_update(&sc);
    /* disabled: a pass-through */
    off.enabled = 0;
    loss = ta__loss(&A, 1);
    t_check(lt_scaler_scale_loss(A.ctx, &off, loss) == loss && lt_scaler_get_scale(&off) == 1.0,
            "amp/scaler/disabled_scale_loss", "not the loss itself");
    lt_zero_grad(A.ctx);
    lt_backward(A.ctx, loss);
    g0 = A.w->grad[0];
    lt_scaler_unscale(A.ctx, &off, A.ps);
    lt_scaler_step(&off, A.opt, -1);
    t_check(A.w->grad[0] == g0 && lt_optim_steps(A.opt) == 2 && lt_scaler_update(&off) == LT_OK && !lt_failed(A.ctx),
            "amp/scaler/disabled_steps", "disabled scaler changed gradients or did not step (%s)", lt_error(A.ctx));
    /* settings torch's GradScaler asserts against */
    bad = lt_scaler_defaults();
    bad.growth_factor = 1.0;
    t_check(lt_scaler_scale_loss(A.ctx, &bad, ta__loss(&A, 2)) == NULL && lt_status_of(A.ctx) == LT_ERR_ARG,
            "amp/scaler/bad_growth_factor", "accepted (%s)", lt_error(A.ctx));
    lt_clear_error(A.ctx);
    bad = lt_scaler_defaults();
    bad.backoff_factor = 1.0;
    t_check(lt_scaler_unscale(A.ctx, &bad, A.ps) == LT_ERR_ARG, "amp/scaler/bad_backoff", "accepted");
    lt_clear_error(A.ctx);
    /* state */
    sc.scale = 1024.0f; sc.growth_tracker = 17; sc.skipped = 3;
    st = lt_scaler_get_state(&sc);
    bad = lt_scaler_defaults();
    t_check(lt_scaler_set_state(A.ctx, &bad, &st) == LT_OK && bad.scale == 1024.0f && bad.growth_tracker == 17 &&
            lt_scaler_skipped(&bad) == 3 && bad.stage == 0, "amp/scaler/state_roundtrip", "state not restored");
    st2 = st;
    st2.scale = -1;
    t_check(lt_scaler_set_state(A.ctx, &bad, &st2) == LT_ERR_ARG && bad.scale == 1024.0f, "amp/scaler/state_invalid",
            "a negative scale was accepted");
    lt_clear_error(A.ctx);
    ta__model_free(&A);
}

static void test_amp_all(void) {
    if (!t_want("amp")) return;
    printf("     amp kernels: %s\n", lt_amp_kernel_name());
    ta__all16();
    ta__torch();
    ta__tails();
    ta__samples();
    ta__stochastic();
    ta__scaler_skip();
    ta__scaler_growth();
    ta__scaler_rules();
}

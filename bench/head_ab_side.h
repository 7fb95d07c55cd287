/* One side of bench/head_ab.c: included after one version of ltrain.h (LTRAIN_IMPLEMENTATION,
   LTRAIN_DEF static) and instantiated as HEAD_AB_SIDE(head_A) or HEAD_AB_SIDE(head_B).  The
   context, x, W and the targets are made on the first call and kept. */
#include <time.h>
/* fp32: lt_gpt_loss's own op (linear_ce_exp) where the header has it (head_ab.sh passes
   HEAD_AB_LCE_EXP then), else lt_linear + lt_cross_entropy, what lt_gpt_loss ran before it */
#ifdef HEAD_AB_LCE_EXP
#define HEAD_AB_FP32(ctx, x, w, tg) lt__linear_ce(ctx, "lt_cross_entropy", x, w, tg, 0, 1, 1)
#else
#define HEAD_AB_FP32(ctx, x, w, tg) lt_cross_entropy(ctx, lt_linear(ctx, x, w, NULL), tg)
#endif
#define HEAD_AB_SIDE(NAME)                                                                             \
    static double NAME##_now(int cpu) {                                                                \
        struct timespec t;                                                                             \
        clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);                           \
        return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;                                      \
    }                                                                                                  \
    void NAME(int prec, int cpu, int R, int C, int V, double *fwd, double *bwd, float *loss) {        \
        static lt_ctx *ctx;                                                                            \
        static lt_tensor *xp, *w;                                                                      \
        static int32_t *tg;                                                                            \
        lt_tensor *x, *l;                                                                              \
        double t0, t1;                                                                                 \
        int64_t i;                                                                                     \
        if (!ctx) {                                                                                    \
            int64_t sx[2], sw[2];                                                                      \
            lt_rng rg;                                                                                 \
            sx[0] = R; sx[1] = C; sw[0] = V; sw[1] = C;                                                \
            ctx = lt_ctx_create(1);                                                                    \
            xp = lt_param(ctx, "x", 2, sx);                                                            \
            w = lt_param(ctx, "w", 2, sw);                                                             \
            tg = (int32_t *)malloc((size_t)R * sizeof(int32_t));                                       \
            if (!xp || !w || !tg) { fprintf(stderr, "head_ab: setup failed\n"); exit(1); }            \
            lt_rng_seed(&rg, 3);                                                                       \
            for (i = 0; i < (int64_t)R * C; i++) xp->data[i] = (float)lt_rng_normal(&rg);              \
            for (i = 0; i < (int64_t)V * C; i++) w->data[i] = 0.02f * (float)lt_rng_normal(&rg);      \
            for (i = 0; i < R; i++) tg[i] = (int32_t)(lt_rng_u64(&rg) % (uint64_t)V);                  \
        }                                                                                              \
        lt_zero_grad_lazy(ctx);                                                                        \
        lt_set_precision(ctx, prec == 1 ? LT_BF16 : prec == 2 ? LT_F16 : LT_F32);                      \
        t0 = NAME##_now(cpu);                                                                          \
        x = lt_scale(ctx, xp, 1.0f); /* an activation, as ln_f's output */                             \
        l = prec ? lt__linear_ce16(ctx, "lt_cross_entropy", x, w, tg, 0, 1) : HEAD_AB_FP32(ctx, x, w, tg); \
        t1 = NAME##_now(cpu);                                                                          \
        if (!l || lt_backward(ctx, l) != LT_OK) { fprintf(stderr, "head_ab: %s\n", lt_error(ctx)); exit(1); } \
        *fwd = t1 - t0;                                                                                \
        *bwd = NAME##_now(cpu) - t1;                                                                   \
        *loss = l->data[0];                                                                            \
    }

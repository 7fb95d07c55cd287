/* One side of bench/block_ab.c: included after one version of ltrain.h (LTRAIN_IMPLEMENTATION,
   LTRAIN_DEF static) and instantiated as BLOCK_AB_SIDE(block_A) or BLOCK_AB_SIDE(block_B).  The
   context and the parameters are made on the first call and kept.  One call: a GPT-2 block's half
   on x (an activation, as the residual stream is), the sum of its output as the loss, then
   lt_backward; forward and backward timed apart.
     attn: x + c_proj(attention(c_attn(ln_1(x))))     (c_attn C -> 3C, c_proj C -> C)
     mlp:  x + c_proj(gelu(c_fc(ln_2(x))))            (c_fc C -> 4C, c_proj 4C -> C) */
#include <time.h>
#define BLOCK_AB_SIDE(NAME)                                                                            \
    static double NAME##_now(int cpu) {                                                                \
        struct timespec t;                                                                             \
        clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);                           \
        return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;                                      \
    }                                                                                                  \
    void NAME(int prec, int cpu, int mlp, int B, int T, int C, int H, double *fwd, double *bwd, float *loss) { \
        static lt_ctx *ctx;                                                                            \
        static lt_tensor *xp, *g, *gb, *w1, *b1, *w2, *b2;                                             \
        lt_tensor *x, *h, *y, *l;                                                                      \
        double t0, t1;                                                                                 \
        int64_t i, hid = mlp ? 4 * (int64_t)C : 3 * (int64_t)C, o2 = mlp ? hid : C;                    \
        if (!ctx) {                                                                                    \
            int64_t sx[3], sc[1], s1[2], sh[1], s2[2];                                                 \
            lt_rng rg;                                                                                 \
            sx[0] = B; sx[1] = T; sx[2] = C; sc[0] = C; s1[0] = C; s1[1] = hid; sh[0] = hid;           \
            s2[0] = o2; s2[1] = C;                                                                     \
            ctx = lt_ctx_create(1);                                                                    \
            xp = lt_param(ctx, "x", 3, sx);                                                            \
            g = lt_param(ctx, "ln.w", 1, sc);                                                          \
            gb = lt_param(ctx, "ln.b", 1, sc);                                                         \
            w1 = lt_param(ctx, "w1", 2, s1);                                                           \
            b1 = lt_param(ctx, "b1", 1, sh);                                                           \
            w2 = lt_param(ctx, "w2", 2, s2);                                                           \
            b2 = lt_param(ctx, "b2", 1, sc);                                                           \
            if (!xp || !g || !gb || !w1 || !b1 || !w2 || !b2) { fprintf(stderr, "block_ab: setup failed\n"); exit(1); } \
            lt_rng_seed(&rg, 3);                                                                       \
            for (i = 0; i < xp->n; i++) xp->data[i] = (float)lt_rng_normal(&rg);                       \
            for (i = 0; i < C; i++) g->data[i] = 1.0f;                                                 \
            for (i = 0; i < w1->n; i++) w1->data[i] = 0.02f * (float)lt_rng_normal(&rg);               \
            for (i = 0; i < w2->n; i++) w2->data[i] = 0.02f * (float)lt_rng_normal(&rg);               \
        }                                                                                              \
        lt_zero_grad_lazy(ctx);                                                                        \
        lt_set_precision(ctx, prec == 1 ? LT_BF16 : prec == 2 ? LT_F16 : LT_F32);                      \
        t0 = NAME##_now(cpu);                                                                          \
        x = lt_scale(ctx, xp, 1.0f);                                                                   \
        h = lt_conv1d(ctx, lt_layernorm(ctx, x, g, gb, 1e-5f), w1, b1);                                \
        h = mlp ? lt_gelu(ctx, h) : lt_attention(ctx, h, H, NULL);                                     \
        y = lt_add(ctx, x, lt_conv1d(ctx, h, w2, b2));                                                 \
        l = lt_sum(ctx, y);                                                                            \
        t1 = NAME##_now(cpu);                                                                          \
        if (!l || lt_backward(ctx, l) != LT_OK) { fprintf(stderr, "block_ab: %s\n", lt_error(ctx)); exit(1); } \
        *fwd = t1 - t0;                                                                                \
        *bwd = NAME##_now(cpu) - t1;                                                                   \
        *loss = l->data[0];                                                                            \
        lt_reset(ctx);                                                                                 \
    }

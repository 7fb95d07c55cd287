/* att_ab_side.h - one side of bench/att_ab.c: included after a version of ltrain.h (with its
   implementation), ATT_AB_SIDE(FN) defines
       void FN(int threads, int B, int T, int C, int H, const float *qkv, const float *r, int calls,
                 void (*cold)(void), double *fwd_ms, double *bwd_ms)
   which runs lt_attention on qkv [B,T,3C] and the backward of sum(y * r) `calls` times on `threads`
   threads and gives the least forward and backward kernel time (the op's profiling counters).
   cold (or NULL) is called before each kernel. */
#define ATT_AB_SIDE(FN)                                                                                      \
    void FN(int threads, int B, int T, int C, int H, const float *qkv, const float *r, int calls,               \
            void (*cold)(void), double *fwd_ms, double *bwd_ms) {                                              \
        lt_ctx *ctx;                                                                                           \
        int64_t s[3];                                                                                          \
        lt_tensor *x, *R;                                                                                      \
        int k, op;                                                                                             \
        lt_set_threads(threads);                                                                               \
        ctx = lt_ctx_create(1);                                                                                \
        s[0] = B; s[1] = T; s[2] = 3 * C;                                                                      \
        x = lt_param(ctx, "qkv", 3, s);                                                                        \
        s[2] = C;                                                                                              \
        R = lt_param(ctx, "r", 3, s);                                                                          \
        memcpy(x->data, qkv, (size_t)x->n * sizeof(float));                                                  \
        memcpy(R->data, r, (size_t)R->n * sizeof(float));                                                    \
        R->requires_grad = 0;                                                                                  \
        *fwd_ms = *bwd_ms = 1e30;                                                                              \
        for (k = 0; k < calls; k++) {                                                                          \
            double f = 0, b = 0;                                                                               \
            lt_tensor *y;                                                                                      \
            lt_zero_grad_lazy(ctx);                                                                            \
            lt_set_profiling(ctx, 1);                                                                          \
            if (cold) cold();                                                                                  \
            y = lt_attention(ctx, x, H, NULL);                                                                 \
            y = lt_sum(ctx, lt_mul(ctx, y, R));                                                                \
            if (cold) cold();                                                                                  \
            lt_backward(ctx, y);                                                                               \
            for (op = 0; op < LT__OP_COUNT; op++)                                                              \
                if (!strcmp(lt__ops[op].name, "attention")) {                                                  \
                    f = 1e3 * ctx->prof_s[0][op];                                                              \
                    b = 1e3 * ctx->prof_s[1][op];                                                              \
                }                                                                                              \
            lt_set_profiling(ctx, 0);                                                                          \
            if (f < *fwd_ms) *fwd_ms = f;                                                                      \
            if (b < *bwd_ms) *bwd_ms = b;                                                                      \
        }                                                                                                      \
        if (lt_failed(ctx)) fprintf(stderr, "error: %s\n", lt_error(ctx));                                     \
        lt_ctx_destroy(ctx);                                                                                   \
    }

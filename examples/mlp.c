/* cc -O2 -fopenmp -I. examples/mlp.c -o build/mlp -lm

   The README's example: a two-layer MLP learns y = sin(x) with the tape and plain SGD. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

int main(void) {
    lt_ctx *ctx = lt_ctx_create(42);
    lt_tensor *w1 = lt_param(ctx, "w1", 2, (int64_t[]){32, 1}), *b1 = lt_param(ctx, "b1", 1, (int64_t[]){32});
    lt_tensor *w2 = lt_param(ctx, "w2", 2, (int64_t[]){1, 32}), *b2 = lt_param(ctx, "b2", 1, (int64_t[]){1});
    lt_init_normal(ctx, w1, 0, 1.0); lt_init_normal(ctx, w2, 0, 0.2);
    lt_sgd_config sgd = lt_sgd_defaults(); sgd.lr = 0.05; sgd.momentum = 0.9;
    lt_optim *opt = lt_sgd_create(ctx, lt_ctx_params(ctx), sgd);
    float x[64], y[64];
    for (int i = 0; i < 64; i++) { x[i] = -3.0f + 6.0f * i / 63; y[i] = sinf(x[i]); }
    for (int step = 1; step <= 500; step++) {
        lt_zero_grad(ctx);
        lt_tensor *X = lt_tensor_from(ctx, x, 2, (int64_t[]){64, 1}), *Y = lt_tensor_from(ctx, y, 2, (int64_t[]){64, 1});
        lt_tensor *h = lt_tanh(ctx, lt_linear(ctx, X, w1, b1));          /* (64,32) */
        lt_tensor *loss = lt_mse_loss(ctx, lt_linear(ctx, h, w2, b2), Y); /* [1]     */
        lt_backward(ctx, loss);
        lt_optim_step(opt, -1);                                          /* -1: the configured lr */
        if (lt_failed(ctx)) { fprintf(stderr, "%s\n", lt_error(ctx)); return 1; }
        if (step % 100 == 0) printf("step %d: loss %.5f\n", step, lt_item(loss));
    }
    lt_optim_destroy(opt);
    lt_ctx_destroy(ctx);
    return 0;
}

/* cc -O2 -fopenmp -I. examples/seed_clip.c -o build/seed_clip -lm

   seed_clip: the second program of the optimizers-and-schedules article, in C: the same
   Linear(10, 1) on 5 random points with AdamW(lr 1e-2, betas (0.9, 0.999), eps 1e-8, weight
   decay 0.1), no schedule, and the gradients clipped between backward and the optimizer step:

       by norm (default):  torch.nn.utils.clip_grad_norm_(params, max_norm=1.0)
                           g <- g * min(1, 1.0 / (||g||_2 + 1e-6))
       by value (--value): torch.nn.utils.clip_grad_value_(params, clip_value=1.0)
                           every element clamped to [-1, 1]

   Each line shows the loss and the gradient norm before clipping.  As in seed_schedule.c, y is
   [5, 1] like the model's output (the article's (5,) target broadcasts to (5, 5) in torch). */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_IN 10
#define N_PTS 5

int main(int argc, char **argv) {
    long steps = 100;
    unsigned long long seed = 42;
    double lr = 1e-2, clip = 1.0;
    int by_value = 0, i, step;
    lt_ctx *ctx;
    lt_tensor *w, *b;
    float X[N_PTS * N_IN], Y[N_PTS];
    int64_t wshape[2] = {1, N_IN}, bshape[1] = {1}, xshape[2] = {N_PTS, N_IN}, yshape[2] = {N_PTS, 1};
    lt_adamw_config cfg;
    lt_optim *opt;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--value") == 0) by_value = 1;
        else if (strcmp(argv[i], "--clip") == 0 && i + 1 < argc) clip = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else {
            printf("usage: seed_clip [--value] [--clip C (%g)] [--steps N (%ld)] [--seed S (%llu)]\n"
                   "  Linear(10,1) on 5 random points, AdamW lr %g, weight decay 0.1; gradients clipped\n"
                   "  to L2 norm C (default) or, with --value, each element to [-C, C].\n",
                   clip, steps, seed, lr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 1;
        }
    }

    ctx = lt_ctx_create(seed);
    if (!ctx) return 1;
    w = lt_param(ctx, "weight", 2, wshape); /* nn.Linear's init: U(-1/sqrt(in), 1/sqrt(in)) */
    b = lt_param(ctx, "bias", 1, bshape);
    lt_init_uniform(ctx, w, -1.0 / sqrt((double)N_IN), 1.0 / sqrt((double)N_IN));
    lt_init_uniform(ctx, b, -1.0 / sqrt((double)N_IN), 1.0 / sqrt((double)N_IN));
    for (i = 0; i < N_PTS * N_IN; i++) X[i] = (float)lt_rng_normal(lt_ctx_rng(ctx));
    for (i = 0; i < N_PTS; i++) Y[i] = (float)lt_rng_normal(lt_ctx_rng(ctx));

    cfg = lt_adamw_defaults();
    cfg.lr = lr; cfg.beta1 = 0.9; cfg.beta2 = 0.999; cfg.eps = 1e-8; cfg.weight_decay = 0.1;
    cfg.decay_mode = LT_DECAY_ALL; /* one torch param group: the bias decays too */
    opt = lt_adamw_create(ctx, lt_ctx_params(ctx), cfg);
    if (!opt) {
        fprintf(stderr, "seed_clip: %s\n", lt_error(ctx));
        lt_ctx_destroy(ctx);
        return 1;
    }

    for (step = 0; step < steps; step++) {
        lt_tensor *x = lt_tensor_from(ctx, X, 2, xshape); /* arena tensors: made again each step */
        lt_tensor *y = lt_tensor_from(ctx, Y, 2, yshape);
        lt_tensor *loss = lt_mse_loss(ctx, lt_linear(ctx, x, w, b), y);
        double norm;
        lt_zero_grad(ctx);
        lt_backward(ctx, loss);
        if (by_value) {
            norm = lt_grad_norm(ctx, lt_ctx_params(ctx));
            lt_clip_grad_value(ctx, lt_ctx_params(ctx), clip);
        } else {
            norm = lt_clip_grad_norm(ctx, lt_ctx_params(ctx), clip);
        }
        printf("Step %d/%ld: loss %.4f, grad norm %.4f\n", step + 1, steps, lt_item(loss), norm);
        lt_optim_step(opt, lr);
        if (lt_failed(ctx)) {
            fprintf(stderr, "seed_clip: %s\n", lt_error(ctx));
            break;
        }
    }

    i = lt_failed(ctx) ? 1 : 0;
    lt_optim_destroy(opt);
    lt_ctx_destroy(ctx);
    return i;
}

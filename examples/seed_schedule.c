/* cc -O2 -fopenmp -I. examples/seed_schedule.c -o build/seed_schedule -lm

   seed_schedule: the first program of the optimizers-and-schedules article, in C.  A Linear(10, 1)
   fits 5 random points with AdamW(lr 1e-2, betas (0.9, 0.999), eps 1e-8, weight decay 0.1) while
   the learning rate warms up linearly from 0.1·lr over 10 steps (LinearLR) and then follows a
   cosine down to 1e-4 (CosineAnnealingLR), the two joined by SequentialLR:

       Step 1/100: loss ..., lr 0.0010
       Step 11/100: loss ..., lr 0.0100
       Step 100/100: loss ..., lr 0.0001

   The lr column equals PyTorch's digit for digit; the losses differ because the random data does.

   One deliberate change: the article's target y has shape (5,) while the model's output is (5, 1),
   so torch's MSELoss broadcasts them to (5, 5) (with a warning) and fits every prediction to the
   mean of all targets.  Here y is [5, 1], the loss the code meant. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_IN 10
#define N_PTS 5

int main(int argc, char **argv) {
    long steps = 100, warmup = 10;
    unsigned long long seed = 42;
    double lr = 1e-2, min_lr = 1e-4;
    int i, step;
    lt_ctx *ctx;
    lt_tensor *w, *b;
    float X[N_PTS * N_IN], Y[N_PTS];
    int64_t wshape[2] = {1, N_IN}, bshape[1] = {1}, xshape[2] = {N_PTS, N_IN}, yshape[2] = {N_PTS, 1};
    lt_adamw_config cfg;
    lt_optim *opt;
    lt_lrs *parts[2], *sched;
    int64_t milestones[1];

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) warmup = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else {
            printf("usage: seed_schedule [--steps N (%ld)] [--warmup W (%ld)] [--seed S (%llu)]\n"
                   "  Linear(10,1) on 5 random points; AdamW lr %g, betas (0.9, 0.999), eps 1e-8,\n"
                   "  weight decay 0.1; LinearLR(0.1 -> 1, W steps), then CosineAnnealingLR to %g.\n",
                   steps, warmup, seed, lr, min_lr);
            return strcmp(argv[i], "--help") == 0 ? 0 : 1;
        }
    }
    if (steps <= warmup || warmup < 1) {
        fprintf(stderr, "seed_schedule: need 1 <= warmup < steps (got %ld, %ld)\n", warmup, steps);
        return 1;
    }

    ctx = lt_ctx_create(seed);
    if (!ctx) return 1;
    /* nn.Linear's default init: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias */
    w = lt_param(ctx, "weight", 2, wshape);
    b = lt_param(ctx, "bias", 1, bshape);
    lt_init_uniform(ctx, w, -1.0 / sqrt((double)N_IN), 1.0 / sqrt((double)N_IN));
    lt_init_uniform(ctx, b, -1.0 / sqrt((double)N_IN), 1.0 / sqrt((double)N_IN));
    for (i = 0; i < N_PTS * N_IN; i++) X[i] = (float)lt_rng_normal(lt_ctx_rng(ctx));
    for (i = 0; i < N_PTS; i++) Y[i] = (float)lt_rng_normal(lt_ctx_rng(ctx));

    /* torch.optim.AdamW with one parameter group decays every parameter, bias included */
    cfg = lt_adamw_defaults();
    cfg.lr = lr; cfg.beta1 = 0.9; cfg.beta2 = 0.999; cfg.eps = 1e-8; cfg.weight_decay = 0.1;
    cfg.decay_mode = LT_DECAY_ALL;
    opt = lt_adamw_create(ctx, lt_ctx_params(ctx), cfg);

    parts[0] = lt_linear_lr(lr, 0.1, 1.0, warmup);
    parts[1] = lt_cosine_annealing_lr(lr, steps - warmup, min_lr);
    milestones[0] = warmup;
    sched = lt_sequential_lr(parts, 2, milestones);
    if (!opt || !sched) {
        fprintf(stderr, "seed_schedule: %s\n", lt_failed(ctx) ? lt_error(ctx) : "out of memory");
        lt_lrs_destroy(sched);
        lt_optim_destroy(opt);
        lt_ctx_destroy(ctx);
        return 1;
    }

    for (step = 0; step < steps; step++) {
        /* X and y are arena tensors, made again each step (the arena resets after backward) */
        lt_tensor *x = lt_tensor_from(ctx, X, 2, xshape);
        lt_tensor *y = lt_tensor_from(ctx, Y, 2, yshape);
        lt_tensor *loss = lt_mse_loss(ctx, lt_linear(ctx, x, w, b), y);
        printf("Step %d/%ld: loss %.4f, lr %.4f\n", step + 1, steps, lt_item(loss), lt_lrs_get(sched));
        lt_zero_grad(ctx);
        lt_backward(ctx, loss);
        lt_optim_step(opt, lt_lrs_get(sched));
        lt_lrs_step(sched);
        if (lt_failed(ctx)) {
            fprintf(stderr, "seed_schedule: %s\n", lt_error(ctx));
            break;
        }
    }

    i = lt_failed(ctx) ? 1 : 0;
    lt_lrs_destroy(sched);
    lt_optim_destroy(opt);
    lt_ctx_destroy(ctx);
    return i;
}

/* cc -O2 -fopenmp -I. examples/lesson_warmup.c -o build/lesson_warmup -lm

   Lesson: learning-rate warm-up for AdamW.

   AdamW divides each step by sqrt(v), a running mean of squared gradients.  In the first steps
   v rests on a handful of gradients, and the update of a weight is close to lr * sign(g): every
   weight moves by the full lr at once, however unsure the estimate.  Warm-up raises the lr
   linearly from near zero over the first steps (the article: 0.1-2% of training; on a run this
   short, ~10%) while the moments settle, then hands over to the decay (cosine here).

   This program trains the same small GPT (same seed, same batches) four times - two peak lrs,
   each with and without warm-up - prints the mean training loss over windows of steps and the
   final validation loss, and draws the loss curves into build/lesson_warmup.svg.
   What to look for: at the higher lr, the run without warm-up is hurt the most in its first
   steps, and it may never catch up.

       build/lesson_warmup [text file (ltrain.h)] [--steps N] [--warmup W] [--lr X] [--high-lr X]
                           [--threads N] [--plot PATH.svg]

   Read @@SCHED (lt_schedule_lr) and @@OPTIM (AdamW) in ltrain.h. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define B 8        /* sequences per batch */
#define T 64       /* tokens per sequence */
#define N_RUNS 4
#define WINDOW 10  /* the plotted loss is the mean of this many steps */

typedef struct {
    const char *data, *plot;
    int steps, warmup, threads;
    double lr, high_lr;
} opts;

/* One run: AdamW with the article's settings (betas 0.9, 0.999, eps 1e-8, weight decay 0.1),
   peak lr `lr`, `warmup` steps from 0.1 x lr, cosine decay to lr/10.  Writes each step's
   training loss into losses[steps]; returns the validation loss at the end (NaN if it failed). */
static double train(const opts *o, const int32_t *tok, int64_t n, double lr, int warmup, double *losses) {
    int64_t n_train = n * 9 / 10;
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt_config cfg = lt_gpt2_config(256, T, 2, 4, 64);    /* V, ctx, layers, heads, channels */
    lt_gpt *g = lt_gpt_create(ctx, &cfg);
    lt_loader *tr = lt_loader_from_tokens(ctx, tok, n_train, B, T);
    lt_loader *va = lt_loader_from_tokens(ctx, tok + n_train, n - n_train, B, T);
    lt_adamw_config ac = lt_adamw_defaults();
    lt_optim *opt;
    lt_schedule sc;
    int32_t in[B * T], tg[B * T];
    double val = 0;
    int step, k;

    ac.lr = lr; ac.beta1 = 0.9; ac.beta2 = 0.999; ac.eps = 1e-8; ac.weight_decay = 0.1;
    opt = lt_adamw_create(ctx, lt_gpt_params(g), ac);
    memset(&sc, 0, sizeof sc);
    sc.lr = lr; sc.min_lr = lr / 10; sc.warmup = warmup; sc.total = o->steps; sc.warmup_start = 0.1;
    sc.decay = LT_SCHED_COSINE;
    for (step = 0; step < o->steps && !lt_failed(ctx); step++) {
        lt_tensor *loss;
        lt_zero_grad(ctx);
        lt_loader_next(tr, in, tg);
        loss = lt_gpt_loss(g, in, tg, B, T);
        losses[step] = lt_item(loss);
        lt_backward(ctx, loss);
        lt_optim_step(opt, lt_schedule_lr(&sc, step));
    }
    for (; step < o->steps; step++) losses[step] = NAN;   /* failed: nothing more to draw */
    lt_set_grad_enabled(ctx, 0);
    for (k = 0; k < 16; k++) {   /* validation: 16 batches = 8192 tokens */
        lt_reset(ctx);
        lt_loader_next(va, in, tg);
        val += lt_item(lt_gpt_loss(g, in, tg, B, T)) / 16;
    }
    if (lt_failed(ctx)) {
        fprintf(stderr, "lesson_warmup: %s\n", lt_error(ctx));
        val = NAN;
    }
    lt_optim_destroy(opt);
    lt_loader_destroy(tr);
    lt_loader_destroy(va);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return val;
}

static double mean(const double *x, int from, int to) {
    double s = 0;
    int i;
    for (i = from; i < to; i++) s += x[i];
    return s / (to - from);
}

int main(int argc, char **argv) {
    opts o = {"ltrain.h", "build/lesson_warmup.svg", 300, 30, 1, 3e-3, 1e-2};
    int32_t *tok = NULL;
    int64_t n = 0;
    double *loss[N_RUNS], *x = NULL, *smooth = NULL, val[N_RUNS];
    char name[N_RUNS][64];
    lt_plot *p;
    int r, i, rc = 0;
    const lesson_flag flags[] = {{"--steps", 'i', &o.steps}, {"--warmup", 'i', &o.warmup}, {"--lr", 'd', &o.lr},
                                 {"--high-lr", 'd', &o.high_lr}, {"--threads", 'i', &o.threads},
                                 {"--plot", 's', &o.plot}};

    if ((rc = lesson_args("lesson_warmup", argc, argv, &o.data, flags, 6)) == LESSON_HELP) {
        printf("usage: lesson_warmup [text file (%s)] [--steps N (%d)] [--warmup W (%d)] [--lr X (%g)]\n"
               "                     [--high-lr X (%g)] [--threads N (%d; the model is too small to gain from more)]\n"
               "                     [--plot PATH.svg (%s)]\n", o.data, o.steps, o.warmup, o.lr, o.high_lr,
               o.threads, o.plot);
        return 0;
    }
    if (rc) return 1;
    if (o.steps < 4 * WINDOW || o.warmup < 1 || o.warmup >= o.steps || !(o.lr > 0) || !(o.high_lr > 0)) {
        fprintf(stderr, "lesson_warmup: need --steps >= %d, 1 <= --warmup < --steps, lrs > 0\n", 4 * WINDOW);
        return 1;
    }
    if (o.threads > 0) lt_set_threads(o.threads);
    if (!lesson_text("lesson_warmup", o.data, 20 * (int64_t)(B * T + 1), NULL, &tok, &n)) return 1;

    for (r = 0; r < N_RUNS; r++) loss[r] = (double *)calloc((size_t)o.steps, sizeof(double));
    x = (double *)calloc((size_t)o.steps, sizeof(double));
    smooth = (double *)calloc((size_t)o.steps, sizeof(double));
    if (!x || !smooth || !loss[0] || !loss[1] || !loss[2] || !loss[3]) { fprintf(stderr, "out of memory\n"); rc = 1; goto out; }

    printf("AdamW on a 2-layer GPT (C=64), %s, %d steps of %d x %d tokens; warm-up %d steps, cosine decay\n",
           o.data, o.steps, B, T, o.warmup);
    for (r = 0; r < N_RUNS; r++) {
        double lr = r < 2 ? o.lr : o.high_lr;
        int w = r % 2 ? o.warmup : 0;
        snprintf(name[r], sizeof name[r], "lr %g, %s", lr, w ? "warm-up" : "no warm-up");
        val[r] = train(&o, tok, n, lr, w, loss[r]);
    }

    /* the table: mean training loss over quarters of the run, then validation */
    printf("\n%-24s", "run");
    for (i = 0; i < 4; i++) printf("  steps %4d-%-4d", i * o.steps / 4 + 1, (i + 1) * o.steps / 4);
    printf("  %9s\n", "val loss");
    for (r = 0; r < N_RUNS; r++) {
        printf("%-24s", name[r]);
        for (i = 0; i < 4; i++) printf("  %15.4f", mean(loss[r], i * o.steps / 4, (i + 1) * o.steps / 4));
        printf("  %9.4f\n", val[r]);
    }

    p = lt_plot_create("AdamW with and without warm-up", "step", "training loss (mean of 10 steps)");
    for (r = 0; r < N_RUNS; r++) {
        for (i = 0; i < o.steps; i++) {
            int from = i + 1 >= WINDOW ? i + 1 - WINDOW : 0;
            x[i] = i + 1;
            smooth[i] = mean(loss[r], from, i + 1);
        }
        lt_plot_series(p, name[r], x, smooth, o.steps);
    }
    if (!lesson_plot_save("lesson_warmup", p, o.plot, "\nwrote %s\n")) rc = 1;
out:
    for (r = 0; r < N_RUNS; r++) free(loss[r]);
    free(x);
    free(smooth);
    free(tok);
    return rc;
}

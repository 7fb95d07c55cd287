/* cc -O2 -fopenmp -I. examples/lesson_clipping.c -o build/lesson_clipping -lm

   Lesson: gradient clipping keeps a high learning rate from blowing up.

   With plain SGD (momentum 0.9) a step moves the weights by lr times the gradient.  Once a step
   overshoots, the loss and its gradient grow, the next step overshoots more, and in a few
   dozen steps the loss is in the millions: the run has diverged.  Clipping by norm rescales the
   whole gradient to length at most c when it is longer,  g <- g * min(1, c/||g||)  (torch's
   clip_grad_norm_(params, max_norm=1.0), called between backward() and step()), so no single
   step can be larger than lr * c, and the run survives the same lr.

   This program trains the same small GPT (same seed, same batches) at a high lr twice, without
   and with lt_clip_grad_norm(..., 1.0), prints the loss over the run and the gradient norms, and
   draws both (log scale) into build/lesson_clipping.svg.

       build/lesson_clipping [text file (ltrain.h)] [--lr X] [--steps N] [--max-norm C] [--threads N]
                             [--plot PATH.svg]

   Read @@CLIP in ltrain.h. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define B 8
#define T 64

typedef struct {
    double *loss, *norm;  /* per step; NaN after the run stopped */
    int diverged_at;      /* first step whose loss is not finite or above 100, or 0 */
    int clipped;          /* steps whose gradient was rescaled */
    double max_norm_seen;
} run_result;

/* `steps` SGD steps at a constant lr; max_norm 0 = no clipping.  Returns 0 if the library
   reported an error (printed). */
static int train(const int32_t *tok, int64_t n, double lr, double max_norm, int steps, run_result *r) {
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt_config cfg = lt_gpt2_config(256, T, 2, 4, 64);    /* V, ctx, layers, heads, channels */
    lt_gpt *g = lt_gpt_create(ctx, &cfg);
    lt_loader *ld = lt_loader_from_tokens(ctx, tok, n, B, T);
    lt_sgd_config sc = lt_sgd_defaults();
    lt_optim *opt;
    int32_t in[B * T], tg[B * T];
    int step, ok = 1;

    sc.lr = lr; sc.momentum = 0.9;
    opt = lt_sgd_create(ctx, lt_gpt_params(g), sc);
    r->diverged_at = 0; r->clipped = 0; r->max_norm_seen = 0;
    for (step = 0; step < steps; step++) r->loss[step] = r->norm[step] = NAN;
    for (step = 0; step < steps && !lt_failed(ctx); step++) {
        lt_tensor *loss;
        double norm;
        lt_zero_grad(ctx);
        lt_loader_next(ld, in, tg);
        loss = lt_gpt_loss(g, in, tg, B, T);
        r->loss[step] = lt_item(loss);
        if (!(r->loss[step] < 100)) {   /* NaN, inf, or far above ln(256) = 5.5: diverged */
            r->diverged_at = step + 1;
            break;
        }
        lt_backward(ctx, loss);
        /* the norm before clipping; lt_clip_grad_norm also returns it */
        norm = max_norm > 0 ? lt_clip_grad_norm(ctx, lt_gpt_params(g), max_norm) : lt_grad_norm(ctx, lt_gpt_params(g));
        r->norm[step] = norm;
        if (norm > r->max_norm_seen) r->max_norm_seen = norm;
        if (max_norm > 0 && norm > max_norm) r->clipped++;
        lt_optim_step(opt, lr);
    }
    if (lt_failed(ctx)) {
        /* a non-finite gradient norm is reported by the clipping call: that is divergence too */
        if (lt_status_of(ctx) == LT_ERR_NONFINITE && !r->diverged_at) r->diverged_at = step;
        else { fprintf(stderr, "lesson_clipping: %s\n", lt_error(ctx)); ok = 0; }
    }
    lt_optim_destroy(opt);
    lt_loader_destroy(ld);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return ok;
}

/* mean of x[from..to) over the finite entries; NaN if there are none */
static double mean(const double *x, int from, int to) {
    double s = 0;
    int i, k = 0;
    for (i = from; i < to; i++)
        if (isfinite(x[i])) { s += x[i]; k++; }
    return k ? s / k : NAN;
}

int main(int argc, char **argv) {
    const char *data = "ltrain.h", *plot = "build/lesson_clipping.svg";
    double lr = 0.5, max_norm = 1.0;
    int steps = 200, threads = 1, i, r, rc = 0;
    const lesson_flag flags[] = {{"--lr", 'd', &lr}, {"--steps", 'i', &steps}, {"--max-norm", 'd', &max_norm},
                                 {"--threads", 'i', &threads}, {"--plot", 's', &plot}};
    run_result res[2];
    int64_t size = 0;
    int32_t *tok = NULL;
    double *x = NULL, *thr = NULL;
    lt_plot *p;

    if ((rc = lesson_args("lesson_clipping", argc, argv, &data, flags, 5)) == LESSON_HELP) {
        printf("usage: lesson_clipping [text file (%s)] [--lr X (%g)] [--steps N (%d)] [--max-norm C (%g)]\n"
               "                       [--threads N (%d)] [--plot PATH.svg (%s)]\n", data, lr, steps, max_norm,
               threads, plot);
        return 0;
    }
    if (rc) return 1;
    if (steps < 20 || !(lr > 0) || !(max_norm > 0)) {
        fprintf(stderr, "lesson_clipping: need --steps >= 20, --lr > 0, --max-norm > 0\n");
        return 1;
    }
    if (threads > 0) lt_set_threads(threads);
    if (!lesson_text("lesson_clipping", data, (int64_t)B * T + 1, "for one batch", &tok, &size)) return 1;
    x = (double *)malloc((size_t)steps * sizeof(double));
    thr = (double *)malloc((size_t)steps * sizeof(double));
    for (r = 0; r < 2; r++) {
        res[r].loss = (double *)malloc((size_t)steps * sizeof(double));
        res[r].norm = (double *)malloc((size_t)steps * sizeof(double));
    }
    if (!x || !thr || !res[0].loss || !res[0].norm || !res[1].loss || !res[1].norm) {
        fprintf(stderr, "lesson_clipping: out of memory\n");
        rc = 1;
        goto out;
    }
    printf("SGD (momentum 0.9) at lr %g on a 2-layer GPT (C=64), %s, %d steps of %d x %d tokens\n\n", lr, data, steps,
           B, T);
    for (r = 0; r < 2 && rc == 0; r++)
        if (!train(tok, size, lr, r ? max_norm : 0, steps, &res[r])) rc = 1;
    if (rc) goto out;

    printf("%-22s", "run");
    for (i = 0; i < 4; i++) printf("  loss %3d-%-3d", i * steps / 4 + 1, (i + 1) * steps / 4);
    printf("  %13s  %11s  %s\n", "max grad norm", "clipped", "outcome");
    for (r = 0; r < 2; r++) {
        char name[40], outcome[64];
        snprintf(name, sizeof name, r ? "clip_grad_norm %g" : "no clipping", max_norm);
        if (res[r].diverged_at) snprintf(outcome, sizeof outcome, "diverged at step %d", res[r].diverged_at);
        else snprintf(outcome, sizeof outcome, "trained");
        printf("%-22s", name);
        for (i = 0; i < 4; i++) {
            double m = mean(res[r].loss, i * steps / 4, (i + 1) * steps / 4);
            if (isfinite(m) && m < 1e5) printf("  %12.4f", m);
            else if (isfinite(m)) printf("  %12.3e", m);
            else printf("  %12s", "-");
        }
        printf("  %13.3g  %5d steps  %s\n", res[r].max_norm_seen, res[r].clipped, outcome);
    }

    for (i = 0; i < steps; i++) { x[i] = i + 1; thr[i] = max_norm; }
    p = lt_plot_create("SGD at a high lr: clipping the gradient norm", "step", "training loss (log scale)");
    lt_plot_log_y(p, 1);
    lt_plot_series(p, "no clipping", x, res[0].loss, steps);
    {
        char name[40];
        snprintf(name, sizeof name, "clip_grad_norm %g", max_norm);
        lt_plot_series(p, name, x, res[1].loss, steps);
        lt_plot_panel(p, "gradient norm before clipping", "step", "||g|| (log scale)");
        lt_plot_log_y(p, 1);
        lt_plot_series(p, "no clipping", x, res[0].norm, steps);
        lt_plot_series(p, name, x, res[1].norm, steps);
        lt_plot_series(p, "max_norm", x, thr, steps);
    }
    if (!lesson_plot_save("lesson_clipping", p, plot, "\nwrote %s\n")) rc = 1;
out:
    free(tok);
    free(x);
    free(thr);
    for (r = 0; r < 2; r++) {
        free(res[r].loss);
        free(res[r].norm);
    }
    return rc;
}

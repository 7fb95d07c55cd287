/* cc -O2 -fopenmp -I. examples/lesson_accumulation.c -o build/lesson_accumulation -lm

   Lesson: gradient accumulation - the same gradients with less memory.

   A batch of 32 sequences can be split into K micro-batches of 32/K: run forward and backward
   on each with the loss divided by K, and since backward adds into the gradients (+=), after
   the K-th the gradients are those of the whole batch's mean loss.  Only then clip and step the
   optimizer, once (the lr schedule counts these optimizer steps, not micro-batches), and clear
   the gradients explicitly before the next step (lt_zero_grad, torch's optimizer.zero_grad()).
   The activations of one micro-batch are freed before the next, so the memory they take shrinks
   about K times; the cost is K smaller matmuls instead of one big one.

   For K = 1, 2, 4, 8, 16 this program builds the same GPT (same seed), computes the gradient of
   one batch that way, and prints how far it is from K = 1's (float rounding: ~1e-7 relative),
   the activation memory (lt_arena_peak) and the time; then it trains each setting for a few
   steps and compares the weights.  The plot (build/lesson_accumulation.svg) shows the training
   losses of every K on top of each other, and the activation memory against K.

       build/lesson_accumulation [text file (ltrain.h)] [--batch N] [--steps N] [--threads N]
                                 [--plot PATH.svg]

   Read @@TAPE (backward adds into grads) and @@CORE (the arena) in ltrain.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T 64
#define MAX_K 16
#define MAX_STEPS 1000

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct {
    float *grad;       /* the first step's gradient, all parameters flat */
    float *weights;    /* the weights after `steps` AdamW steps */
    size_t n;
    size_t peak;       /* lt_arena_peak: activations, their gradients, the tape */
    double ms;         /* per optimizer step */
    double loss;       /* the first step's loss */
    double *losses;    /* every step's loss (the batch mean: the K micro-batch losses / K, summed) */
} result;

/* Flatten every parameter's gradient (which = 0) or data (which = 1) into out. */
static void flatten(lt_paramset ps, float *out, int which) {
    int i;
    for (i = 0; i < ps.n; i++) {
        memcpy(out, which ? ps.p[i]->data : ps.p[i]->grad, (size_t)ps.p[i]->n * sizeof(float));
        out += ps.p[i]->n;
    }
}

/* `steps` optimizer steps on batches of `batch` sequences, each as K micro-batches. */
static int run(const int32_t *tok, int64_t n_tok, int batch, int K, int steps, result *res) {
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt_config cfg = lt_gpt2_config(256, T, 2, 4, 64);    /* V, ctx, layers, heads, channels */
    lt_gpt *g = lt_gpt_create(ctx, &cfg);
    lt_loader *ld = lt_loader_from_tokens(ctx, tok, n_tok, batch, T);
    lt_optim *opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    int32_t *in = (int32_t *)malloc((size_t)batch * T * sizeof(int32_t));
    int32_t *tg = (int32_t *)malloc((size_t)batch * T * sizeof(int32_t));
    int mb = batch / K, step, k, ok;
    double t0 = 0;

    memset(res, 0, sizeof *res);
    res->n = (size_t)lt_gpt_num_params(g);
    res->grad = (float *)malloc(res->n * sizeof(float));
    res->weights = (float *)malloc(res->n * sizeof(float));
    res->losses = (double *)calloc((size_t)steps, sizeof(double));
    ok = in && tg && res->grad && res->weights && res->losses && !lt_failed(ctx);
    for (step = 0; ok && step < steps; step++) {
        if (step == 1) t0 = now_s();   /* the first step also allocates the arena: not timed */
        lt_zero_grad(ctx);
        ok = lt_loader_next(ld, in, tg) == LT_OK;
        for (k = 0; ok && k < K; k++) {
            /* micro-batch k: sequences k*mb .. k*mb+mb-1 of the batch; mean loss / K */
            lt_tensor *loss = lt_gpt_loss(g, in + (size_t)k * mb * T, tg + (size_t)k * mb * T, mb, T);
            res->losses[step] += lt_item(loss) / K;
            ok = lt_backward(ctx, lt_scale(ctx, loss, 1.0f / (float)K)) == LT_OK;
        }
        if (ok && step == 0) {
            flatten(lt_gpt_params(g), res->grad, 0);
            res->loss = res->losses[0];
        }
        ok = ok && lt_optim_step(opt, 1e-3) == LT_OK;
    }
    if (ok) {
        res->ms = steps > 1 ? (now_s() - t0) * 1e3 / (steps - 1) : 0;
        res->peak = lt_arena_peak(ctx);
        flatten(lt_gpt_params(g), res->weights, 1);
    } else {
        fprintf(stderr, "lesson_accumulation: %s\n", lt_failed(ctx) ? lt_error(ctx) : "out of memory");
    }
    free(in);
    free(tg);
    lt_optim_destroy(opt);
    lt_loader_destroy(ld);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return ok;
}

/* max |a - b| / max |b| */
static double rel_diff(const float *a, const float *b, size_t n) {
    double d = 0, m = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        if (e > d) d = e;
        if (fabs((double)b[i]) > m) m = fabs((double)b[i]);
    }
    return m > 0 ? d / m : d;
}

int main(int argc, char **argv) {
    const char *data = "ltrain.h", *plot = "build/lesson_accumulation.svg";
    int batch = 32, steps = 40, threads = 1, i, rc = 0, nk = 0;
    int ks[5] = {1, 2, 4, 8, 16};
    result res[5];
    int64_t size = 0;
    int32_t *tok = NULL;
    double x[MAX_STEPS], kx[5], mb[5];
    lt_plot *p;
    const lesson_flag flags[] = {{"--batch", 'i', &batch}, {"--steps", 'i', &steps}, {"--threads", 'i', &threads},
                                 {"--plot", 's', &plot}};

    if ((rc = lesson_args("lesson_accumulation", argc, argv, &data, flags, 4)) == LESSON_HELP) {
        printf("usage: lesson_accumulation [text file (%s)] [--batch N (%d, a multiple of 16)] [--steps N (%d)]\n"
               "                           [--threads N (%d)] [--plot PATH.svg (%s)]\n", data, batch, steps,
               threads, plot);
        return 0;
    }
    if (rc) return 1;
    if (batch < MAX_K || batch % MAX_K || batch > 1024 || steps < 1 || steps > MAX_STEPS) {
        fprintf(stderr, "lesson_accumulation: --batch must be a multiple of %d (up to 1024), --steps in 1..%d\n",
                MAX_K, MAX_STEPS);
        return 1;
    }
    if (threads > 0) lt_set_threads(threads);
    if (!lesson_text("lesson_accumulation", data, (int64_t)batch * T + 1, "for one batch", &tok, &size)) return 1;

    printf("2-layer GPT (C=64), batch of %d sequences x %d tokens from %s, as K micro-batches\n\n", batch, T, data);
    printf("%3s  %11s  %13s  %20s  %14s  %10s  %15s %-2d steps\n", "K", "micro-batch", "first loss",
           "grad diff vs K=1", "arena peak", "ms/step", "weights after", steps);
    for (i = 0; i < 5; i++) {
        int ok = run(tok, size, batch, ks[i], steps, &res[i]);
        nk++;
        if (!ok) { rc = 1; break; }
        printf("%3d  %11d  %13.6f  %20.2e  %11.1f MB  %10.1f  %21.2e\n", ks[i], batch / ks[i], res[i].loss,
               rel_diff(res[i].grad, res[0].grad, res[i].n), (double)res[i].peak / (1 << 20), res[i].ms,
               rel_diff(res[i].weights, res[0].weights, res[i].n));
    }
    if (rc == 0)
        printf("\n(diffs are max |x - x_K=1| / max |x_K=1|; float sums in another order differ by ~1e-7.\n"
               " Memory falls about K times while the gradient stays the same: the article's point.)\n");
    if (rc == 0) {
        /* left: the loss curves of every K lie on top of each other; right: memory against K */
        for (i = 0; i < steps; i++) x[i] = i + 1;
        p = lt_plot_create("the same training for every K (curves overlap)", "optimizer step", "training loss");
        for (i = 0; i < nk; i++) {
            char name[32];
            snprintf(name, sizeof name, "K = %d", ks[i]);
            lt_plot_series(p, name, x, res[i].losses, steps);
            kx[i] = ks[i];
            mb[i] = (double)res[i].peak / (1 << 20);
        }
        lt_plot_panel(p, "activation memory falls about K times", "micro-batches K", "arena peak (MB)");
        lt_plot_series(p, "arena peak", kx, mb, nk);
        if (!lesson_plot_save("lesson_accumulation", p, plot, "plot: %s\n")) rc = 1;
    }
    for (i = 0; i < nk; i++) {
        free(res[i].grad);
        free(res[i].weights);
        free(res[i].losses);
    }
    free(tok);
    return rc;
}

/* cc -O2 -fopenmp -I. examples/lesson_restarts.c -o build/lesson_restarts -lm

   Lesson: random restarts - the seed matters; try several, keep the best.

   The seed decides the initial weights and the order of the batches, and two runs that differ
   only in it end at different losses.  The article's recipe: train several models from
   different seeds for a short while, keep the best one, and finish training only that one.

   This program trains the same small GPT from N seeds for the first steps of one schedule
   (AdamW, warm-up, cosine decay over the full length), measures each on the same validation
   batches, prints the spread, then continues the best - and, to check that an early lead lasts,
   the worst - to the end of the schedule.  Validation curves go to build/lesson_restarts.svg.

       build/lesson_restarts [text file (ltrain.h)] [--seeds N] [--explore S] [--steps S] [--lr X]
                             [--threads N] [--plot PATH.svg]

   Read @@CORE (the RNG) and @@DATA (lt_loader_shuffle) in ltrain.h. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define B 8
#define T 64
#define VAL_BATCHES 8
#define EVAL_EVERY 25
#define MAX_SEEDS 32

typedef struct {
    uint64_t seed;
    lt_ctx *ctx;
    lt_gpt *g;
    lt_loader *tr;
    lt_optim *opt;
    int series;           /* its line in the plot */
    double val;           /* validation loss at the end of exploration */
} run_t;

static void run_free(run_t *r) {
    lt_optim_destroy(r->opt);
    lt_loader_destroy(r->tr);
    lt_gpt_destroy(r->g);
    lt_ctx_destroy(r->ctx);
    memset(r, 0, sizeof *r);
}

/* Mean loss on the first VAL_BATCHES batches of the validation tokens (the same for every run). */
static double validate(run_t *r, const int32_t *val, int64_t n_val) {
    lt_loader *va = lt_loader_from_tokens(r->ctx, val, n_val, B, T);
    int32_t in[B * T], tg[B * T];
    double s = 0;
    int k;
    lt_set_grad_enabled(r->ctx, 0);
    for (k = 0; k < VAL_BATCHES && va; k++) {
        lt_reset(r->ctx);
        lt_loader_next(va, in, tg);
        s += lt_item(lt_gpt_loss(r->g, in, tg, B, T)) / VAL_BATCHES;
    }
    lt_reset(r->ctx);
    lt_set_grad_enabled(r->ctx, 1);
    lt_loader_destroy(va);
    return s;
}

/* Steps [from, to) of the schedule; every EVAL_EVERY steps a validation point on the plot. */
static int train(run_t *r, const lt_schedule *sc, int from, int to, const int32_t *val, int64_t n_val, lt_plot *p) {
    int32_t in[B * T], tg[B * T];
    int step;
    for (step = from; step < to && !lt_failed(r->ctx); step++) {
        lt_zero_grad(r->ctx);
        lt_loader_next(r->tr, in, tg);
        lt_backward(r->ctx, lt_gpt_loss(r->g, in, tg, B, T));
        lt_clip_grad_norm(r->ctx, lt_gpt_params(r->g), 1.0);
        lt_optim_step(r->opt, lt_schedule_lr(sc, step));
        if ((step + 1) % EVAL_EVERY == 0 || step + 1 == to)
            lt_plot_append(p, r->series, step + 1, validate(r, val, n_val));
    }
    if (lt_failed(r->ctx)) fprintf(stderr, "lesson_restarts: seed %llu: %s\n", (unsigned long long)r->seed, lt_error(r->ctx));
    return !lt_failed(r->ctx);
}

static int start(run_t *r, uint64_t seed, const int32_t *tok, int64_t n_train, double lr) {
    lt_gpt_config cfg = lt_gpt2_config(256, T, 2, 4, 64);    /* V, ctx, layers, heads, channels */
    lt_adamw_config ac = lt_adamw_defaults();
    memset(r, 0, sizeof *r);
    r->seed = seed;
    r->ctx = lt_ctx_create(seed);                    /* the initial weights come from this seed */
    if (!r->ctx) return 0;
    r->g = lt_gpt_create(r->ctx, &cfg);
    r->tr = lt_loader_from_tokens(r->ctx, tok, n_train, B, T);
    if (r->tr) lt_loader_shuffle(r->tr, seed);      /* ... and the order of the batches */
    ac.lr = lr; ac.beta2 = 0.99; ac.weight_decay = 0.1;
    r->opt = lt_adamw_create(r->ctx, lt_gpt_params(r->g), ac);
    if (lt_failed(r->ctx)) fprintf(stderr, "lesson_restarts: %s\n", lt_error(r->ctx));
    return !lt_failed(r->ctx);
}

int main(int argc, char **argv) {
    const char *data = "ltrain.h", *plot = "build/lesson_restarts.svg";
    int seeds = 6, explore = 150, steps = 400, threads = 1, i, rc = 0, best = -1, worst = -1;
    double lr = 3e-3, sum = 0, sum2 = 0, lo = INFINITY, hi = -INFINITY;
    run_t runs[MAX_SEEDS];
    lt_schedule sc;
    lt_plot *p = NULL;
    int64_t size = 0, n_train;
    int32_t *tok = NULL;
    const lesson_flag flags[] = {{"--seeds", 'i', &seeds}, {"--explore", 'i', &explore}, {"--steps", 'i', &steps},
                                 {"--lr", 'd', &lr}, {"--threads", 'i', &threads}, {"--plot", 's', &plot}};

    if ((rc = lesson_args("lesson_restarts", argc, argv, &data, flags, 6)) == LESSON_HELP) {
        printf("usage: lesson_restarts [text file (%s)] [--seeds N (%d)] [--explore S (%d)] [--steps S (%d)]\n"
               "                       [--lr X (%g)] [--threads N (%d)] [--plot PATH.svg (%s)]\n", data, seeds,
               explore, steps, lr, threads, plot);
        return 0;
    }
    if (rc) return 1;
    if (seeds < 2 || seeds > MAX_SEEDS || explore < 1 || steps <= explore || !(lr > 0)) {
        fprintf(stderr, "lesson_restarts: need 2 <= --seeds <= %d, 1 <= --explore < --steps, --lr > 0\n", MAX_SEEDS);
        return 1;
    }
    if (threads > 0) lt_set_threads(threads);
    if (!lesson_text("lesson_restarts", data, 20 * (int64_t)(B * T + 1), NULL, &tok, &size)) return 1;
    n_train = size * 9 / 10;   /* the last 10% is the validation text */

    memset(&sc, 0, sizeof sc);
    sc.lr = lr; sc.min_lr = lr / 10; sc.warmup = steps / 20; sc.total = steps; sc.warmup_start = 0.1;
    sc.decay = LT_SCHED_COSINE;
    p = lt_plot_create("Random restarts: explore, keep the best, continue", "step", "validation loss");
    memset(runs, 0, sizeof runs);

    printf("%d seeds x %d steps (of a %d-step schedule), 2-layer GPT (C=64), %s\n\n", seeds, explore, steps, data);
    printf("%6s  %9s\n", "seed", "val loss");
    for (i = 0; i < seeds; i++) {
        char name[32];
        if (!start(&runs[i], (uint64_t)(1000 + i), tok, n_train, lr)) { rc = 1; break; }
        snprintf(name, sizeof name, "seed %d", 1000 + i);
        runs[i].series = lt_plot_series(p, name, NULL, NULL, 0);
        if (!train(&runs[i], &sc, 0, explore, tok + n_train, (int64_t)size - n_train, p)) { rc = 1; break; }
        runs[i].val = validate(&runs[i], tok + n_train, (int64_t)size - n_train);
        printf("%6d  %9.4f\n", 1000 + i, runs[i].val);
        sum += runs[i].val; sum2 += runs[i].val * runs[i].val;
        if (runs[i].val < lo) { lo = runs[i].val; best = i; }
        if (runs[i].val > hi) { hi = runs[i].val; worst = i; }
        /* keep only the best and the worst so far: a real search keeps only the best */
        {
            int k;
            for (k = 0; k < i; k++)
                if (runs[k].ctx && k != best && k != worst) run_free(&runs[k]);
            if (i != best && i != worst) run_free(&runs[i]);
        }
    }
    if (rc == 0) {
        double m = sum / seeds, sd = sqrt(fmax(0, sum2 / seeds - m * m));
        printf("\nspread after %d steps: best %.4f (seed %d), worst %.4f (seed %d), range %.4f, mean %.4f, std %.4f\n",
               explore, lo, 1000 + best, hi, 1000 + worst, hi - lo, m, sd);
        printf("\ncontinuing to step %d:\n", steps);
        printf("%-7s %6s  %18s  %18s\n", "", "seed", "val @ explore end", "val @ the end");
        for (i = 0; i < (worst != best ? 2 : 1) && rc == 0; i++) {
            run_t *r = &runs[i ? worst : best];
            if (!train(r, &sc, explore, steps, tok + n_train, (int64_t)size - n_train, p)) { rc = 1; break; }
            printf("%-7s %6d  %18.4f  %18.4f\n", i ? "worst" : "best", (int)r->seed, r->val,
                   validate(r, tok + n_train, (int64_t)size - n_train));
        }
    }
    if (rc == 0) {
        if (!lesson_plot_save("lesson_restarts", p, plot, "\nwrote %s\n")) rc = 1;
        p = NULL;   /* freed */
    }
    for (i = 0; i < MAX_SEEDS; i++)
        if (runs[i].ctx) run_free(&runs[i]);
    lt_plot_destroy(p);
    free(tok);
    return rc;
}

/* cc -O2 -fopenmp -I. examples/plot_schedules.c -o build/plot_schedules -lm

   plot_schedules: the article's figure of the three decay functions - cosine, square-root and
   linear - each after the same linear warm-up, drawn by lt_schedule_lr into an SVG, with a table
   of the values at a few steps.  The defaults are the article's first program: peak lr 0.01,
   100 steps, 10 warm-up steps starting at 0.1 x the peak (torch LinearLR), min_lr 1e-4.

       build/plot_schedules [out.svg] [--steps N] [--warmup W] [--lr X] [--min-lr X]

   Read @@SCHED in ltrain.h for the formulas, @@PLOT for the SVG writer. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *out = "build/schedules.svg";
    long steps = 100, warmup = 10;
    double lr = 1e-2, min_lr = 1e-4;
    const lt_decay kinds[3] = {LT_SCHED_COSINE, LT_SCHED_SQRT, LT_SCHED_LINEAR};
    const char *names[3] = {"cosine: (1+cos(pi t/T))/2", "square root: sqrt((T-t)/T)", "linear: (T-t)/T"};
    double *x, *y[3];
    lt_plot *p;
    int i, k, rc = 0;
    long s;
    const lesson_flag flags[] = {{"--steps", 'l', &steps}, {"--warmup", 'l', &warmup}, {"--lr", 'd', &lr},
                                 {"--min-lr", 'd', &min_lr}};

    if ((rc = lesson_args("plot_schedules", argc, argv, &out, flags, 4)) == LESSON_HELP) {
        printf("usage: plot_schedules [out.svg (build/schedules.svg)] [--steps N (100)] [--warmup W (10)]\n"
               "                      [--lr X (0.01)] [--min-lr X (0.0001)]\n");
        return 0;
    }
    if (rc) return 1;
    if (steps < 1 || warmup < 0 || warmup >= steps || !(lr > 0) || !(min_lr >= 0) || steps > 10000000) {
        fprintf(stderr, "plot_schedules: need 0 <= warmup < steps <= 1e7, lr > 0, min_lr >= 0\n");
        return 1;
    }

    x = (double *)malloc((size_t)steps * sizeof(double));
    for (k = 0; k < 3; k++) y[k] = (double *)malloc((size_t)steps * sizeof(double));
    if (!x || !y[0] || !y[1] || !y[2]) { fprintf(stderr, "plot_schedules: out of memory\n"); rc = 1; goto done; }
    for (k = 0; k < 3; k++) {
        lt_schedule sc;
        memset(&sc, 0, sizeof sc);
        sc.lr = lr; sc.min_lr = min_lr; sc.warmup = warmup; sc.total = steps; sc.warmup_start = 0.1;
        sc.decay = kinds[k];
        for (s = 0; s < steps; s++) {
            x[s] = (double)(s + 1);  /* "Step 1/100" prints the lr of optimizer step 0, as the article */
            y[k][s] = lt_schedule_lr(&sc, s);
        }
    }

    printf("learning rate by step (warm-up %ld of %ld steps, peak %g, min %g)\n", warmup, steps, lr, min_lr);
    printf("%8s  %10s  %10s  %10s\n", "step", "cosine", "sqrt", "linear");
    {
        long at[8] = {1, warmup / 2 + 1, warmup, warmup + 1, warmup + (steps - warmup) / 4,
                      warmup + (steps - warmup) / 2, warmup + 3 * (steps - warmup) / 4, steps};
        for (i = 0; i < 8; i++) {
            if (at[i] < 1 || at[i] > steps || (i > 0 && at[i] <= at[i - 1])) continue;
            printf("%8ld  %10.6f  %10.6f  %10.6f\n", at[i], y[0][at[i] - 1], y[1][at[i] - 1], y[2][at[i] - 1]);
        }
    }

    p = lt_plot_create("Warm-up, then three decay functions", "step", "learning rate");
    for (k = 0; k < 3; k++) lt_plot_series(p, names[k], x, y[k], (int)steps);
    if (!lesson_plot_save("plot_schedules", p, out, "wrote %s\n")) rc = 1;
done:
    free(x);
    for (k = 0; k < 3; k++) free(y[k]);
    return rc;
}

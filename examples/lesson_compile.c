/* cc -O2 -fopenmp -I. examples/lesson_compile.c -o build/lesson_compile -lm

   Lesson: compiling a training step — same numbers, less memory, less overhead.

   An eager step builds the graph again every time: each op allocates its output from the arena,
   records itself on the tape, and backward walks the tape.  Nothing is reused, and every
   activation and every gradient buffer lives until the step ends.  lt_compile (torch.compile's
   idea in C) runs the step once while recording it, then plans it: it knows when each buffer is
   last read, so buffers whose lifetimes do not overlap share memory, and a replay (lt_plan_run)
   runs the same kernels in the same order with no graph building.  The arithmetic is the same, so
   the losses are the same to the bit.

   This program trains the same small GPT (same seed, same batches) twice with AdamW, eagerly and
   from a compiled plan, and prints both losses side by side, the time per step, and the planned
   block (lt_plan_bytes) against the sum of all the step's buffers (lt_plan_naive_bytes) and
   against the eager arena's peak (lt_arena_peak).  The losses go to build/lesson_compile.svg.

       build/lesson_compile [text file (ltrain.h)] [--steps N] [--batch B] [--threads N] [--plot PATH.svg]

   Read @@COMPILE in ltrain.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T 64

/* The step lt_compile captures: it reads the batch from in/tg, which the loop refills. */
typedef struct { lt_gpt *g; int32_t *in, *tg; int B; } step_t;
static lt_tensor *gpt_step(lt_ctx *ctx, void *user) {
    step_t *s = (step_t *)user;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, T);
}

typedef struct {
    double *loss;         /* per step */
    double ms;            /* per step, the first step (the capture) left out */
    size_t arena_peak;    /* eager: lt_arena_peak */
    size_t planned, naive;/* compiled: lt_plan_bytes, lt_plan_naive_bytes */
    char note[256];       /* compiled: lt_plan_note */
} run_result;

/* `steps` AdamW steps, eager (compiled 0) or replayed from a plan.  0 on a library error (printed). */
static int train(const int32_t *tok, int64_t n, int B, int steps, int compiled, run_result *r) {
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt_config cfg = lt_gpt2_config(256, T, 2, 4, 64);    /* V, ctx, layers, heads, channels */
    lt_gpt *g = lt_gpt_create(ctx, &cfg);
    lt_loader *ld = lt_loader_from_tokens(ctx, tok, n, B, T);
    lt_adamw_config ac = lt_adamw_defaults();
    lt_optim *opt = lt_adamw_create(ctx, lt_gpt_params(g), ac);
    int32_t *in = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    int32_t *tg = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    lt_plan *plan = NULL;
    step_t st;
    double t0 = 0;
    int step, ok = 1;

    r->arena_peak = r->planned = r->naive = 0;
    r->note[0] = 0;
    st.g = g; st.in = in; st.tg = tg; st.B = B;
    for (step = 0; step < steps && in && tg && !lt_failed(ctx); step++) {
        if (step == 1) t0 = lesson_now_ms();
        lt_zero_grad(ctx);
        lt_loader_next(ld, in, tg);
        if (compiled) {
            float l = 0;
            if (!plan) {   /* capture on the first batch; gradients are left alone, so run it too */
                if (!(plan = lt_compile(ctx, gpt_step, &st))) break;
                r->planned = lt_plan_bytes(plan);
                r->naive = lt_plan_naive_bytes(plan);
                snprintf(r->note, sizeof r->note, "%s", lt_plan_note(plan));
            }
            if (lt_plan_run(plan, &l) != LT_OK) break;
            r->loss[step] = l;
        } else {
            lt_tensor *loss = lt_gpt_loss(g, in, tg, B, T);
            r->loss[step] = lt_item(loss);
            lt_backward(ctx, loss);
        }
        lt_optim_step(opt, -1);
    }
    r->ms = steps > 1 ? (lesson_now_ms() - t0) / (steps - 1) : 0;
    if (!compiled) r->arena_peak = lt_arena_peak(ctx);
    if (!in || !tg) { fprintf(stderr, "lesson_compile: out of memory\n"); ok = 0; }
    else if (lt_failed(ctx)) { fprintf(stderr, "lesson_compile: %s\n", lt_error(ctx)); ok = 0; }
    lt_plan_destroy(plan);
    lt_optim_destroy(opt);
    lt_loader_destroy(ld);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    free(in);
    free(tg);
    return ok;
}

int main(int argc, char **argv) {
    const char *data = "ltrain.h", *plot = "build/lesson_compile.svg";
    int steps = 200, batch = 16, threads = 1, i, r, rc = 0, same = 0;
    const lesson_flag flags[] = {{"--steps", 'i', &steps}, {"--batch", 'i', &batch}, {"--threads", 'i', &threads},
                                 {"--plot", 's', &plot}};
    run_result res[2];
    int64_t size = 0;
    int32_t *tok = NULL;
    double *x = NULL, maxdiff = 0;
    lt_plot *p;

    if ((rc = lesson_args("lesson_compile", argc, argv, &data, flags, 4)) == LESSON_HELP) {
        printf("usage: lesson_compile [text file (%s)] [--steps N (%d)] [--batch B (%d)] [--threads N (%d)]\n"
               "                      [--plot PATH.svg (%s)]\n", data, steps, batch, threads, plot);
        return 0;
    }
    if (rc) return 1;
    if (steps < 2 || batch < 1 || batch > 1024) {
        fprintf(stderr, "lesson_compile: need --steps >= 2 and --batch in 1..1024\n");
        return 1;
    }
    if (threads > 0) lt_set_threads(threads);
    if (!lesson_text("lesson_compile", data, (int64_t)batch * T + 1, "for one batch", &tok, &size)) return 1;
    x = (double *)malloc((size_t)steps * sizeof(double));
    res[0].loss = (double *)malloc((size_t)steps * sizeof(double));
    res[1].loss = (double *)malloc((size_t)steps * sizeof(double));
    if (!x || !res[0].loss || !res[1].loss) {
        fprintf(stderr, "lesson_compile: out of memory\n");
        rc = 1;
        goto out;
    }
    printf("AdamW on a 2-layer GPT (C=64), %s, %d steps of %d x %d tokens, eager and compiled\n\n", data, steps,
           batch, T);
    for (r = 0; r < 2 && rc == 0; r++)
        if (!train(tok, size, batch, steps, r, &res[r])) rc = 1;
    if (rc) goto out;

    printf("%6s  %12s  %12s\n", "step", "eager loss", "compiled");
    for (i = 0; i < steps; i++) {
        double d = fabs(res[0].loss[i] - res[1].loss[i]);
        if (d > maxdiff) maxdiff = d;
        same += res[0].loss[i] == res[1].loss[i];
        if (i < 3 || (i + 1) % (steps / 4 > 0 ? steps / 4 : 1) == 0 || i == steps - 1)
            printf("%6d  %12.7f  %12.7f\n", i + 1, res[0].loss[i], res[1].loss[i]);
    }
    printf("identical losses: %d of %d steps (max |difference| %.3g)\n\n", same, steps, maxdiff);

    printf("%-10s  %9s  %s\n", "mode", "ms/step", "step memory (activations + their gradients)");
    printf("%-10s  %9.1f  arena peak %.2f MiB\n", "eager", res[0].ms, res[0].arena_peak / 1048576.0);
    printf("%-10s  %9.1f  planned %.2f MiB, all buffers unshared %.2f MiB (saves %.0f%%)\n", "compiled", res[1].ms,
           res[1].planned / 1048576.0, res[1].naive / 1048576.0,
           res[1].naive ? 100.0 * (1.0 - (double)res[1].planned / (double)res[1].naive) : 0.0);
    /* at this size the kernels dominate a step, so the replay saves little time; the memory is the win */
    printf("speed-up %.2fx; %s\n", res[1].ms > 0 ? res[0].ms / res[1].ms : 0.0, res[1].note);

    for (i = 0; i < steps; i++) x[i] = i + 1;
    p = lt_plot_create("eager and compiled steps give the same losses", "step", "training loss");
    lt_plot_series(p, "eager", x, res[0].loss, steps);
    lt_plot_series(p, "compiled (lt_compile)", x, res[1].loss, steps);
    if (!lesson_plot_save("lesson_compile", p, plot, "\nwrote %s\n")) rc = 1;
out:
    free(tok);
    free(x);
    free(res[0].loss);
    free(res[1].loss);
    return rc;
}

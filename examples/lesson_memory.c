/* cc -O2 -fopenmp -I. examples/lesson_memory.c -o build/lesson_memory -lm

   Lesson: activation checkpointing — trade time for memory, same gradients.

   Backward needs values from forward: a matmul's gradient with respect to its weight needs the
   matmul's input, gelu's needs its input, layernorm's its input with each row's mean and 1/sigma,
   attention's q, k, v, its output and one log-sum-exp per row (backward makes the T x T weights
   again from those).  So every block keeps its activations from the moment forward makes them
   until backward has used them, and at the peak (the start of backward) all blocks' activations
   are alive at once: they grow with layers x batch x sequence length, and on a long context they
   are most of a step's memory, far more than the weights.

   Checkpointing keeps less and makes the rest again: a block run inside lt_recompute_begin /
   lt_recompute_end keeps only its output; backward runs the block's forward kernels once more
   just before its own backward, so only one block's activations are alive at a time.  The cost
   is that extra forward: checkpointing every block adds about one forward pass, roughly a third
   of a step (backward costs about twice forward).  The arithmetic is the same, dropout draws the
   same masks again, so the gradients are the same to the bit.

   Under a memory budget (lt_set_memory_budget) lt_compile chooses what to make again itself.
   Each op that keeps bytes for backward is a candidate, priced by the FLOPs it takes to run it
   again per byte it stops keeping: an elementwise op (gelu, a residual add) or a norm costs a
   few FLOPs per element, a matmul 2·K per output element (K = its inner size, 64..3072), so the
   pointwise ops and norms go first and the products last.  The planner adds candidates cheapest
   first until the planned block fits; a budget below the least the step can be planned in is an
   error that names that minimum (this lesson's 25% run shows it when the model hits it).

   This program trains the same GPT (same seed, same batches, AdamW) seven ways: eagerly with
   and without every block checkpointed, and compiled (lt_compile) without checkpointing, with
   every block checkpointed, and under budgets of 75%, 50% and 25% of the plan without
   recomputation.  For each it prints the step's memory (the eager arena's peak, or the planned
   block), what the plan keeps for backward, the bytes it makes again and the extra FLOPs per step,
   the time per step (wall clock, and the CPU time the process used: on a shared machine the
   second counts only the step's own work), and whether the losses and the final weights equal the
   first run's bit for bit.  The picture (build/lesson_memory.svg) is CPU time per step against
   memory.

       build/lesson_memory [text file (ltrain.h)] [--steps N] [--batch B] [--layers L] [--threads N]
                           [--plot PATH.svg]

   Read @@TAPE.recompute and @@COMPILE in ltrain.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T 128
#define N_RUNS 7

/* One way to run the step: eager or compiled, every block checkpointed or not, a budget or none. */
typedef struct { const char *name; int compiled, every; const char *budget; } setting;
static const setting settings[N_RUNS] = {
    {"eager", 0, 0, NULL},          {"eager, every block", 0, 1, NULL}, {"plan", 1, 0, NULL},
    {"plan, every block", 1, 1, NULL}, {"plan, budget 75%", 1, 0, "75%"}, {"plan, budget 50%", 1, 0, "50%"},
    {"plan, budget 25%", 1, 0, "25%"},
};

/* The step lt_compile captures: it reads the batch from in/tg, which the loop refills. */
typedef struct { lt_gpt *g; int32_t *in, *tg; int B; } step_t;
static lt_tensor *gpt_step(lt_ctx *ctx, void *user) {
    step_t *s = (step_t *)user;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, T);
}

/* The CPU time this process has used, all threads, in milliseconds: on a machine that other work
   shares it counts the step's own work, where the wall clock counts the waiting too. */
static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

typedef struct {
    int ok;               /* trained (0: the plan did not fit the budget; why in err) */
    double *loss;         /* per step */
    float *weights;       /* every parameter after the last step, flat */
    size_t n_weights;
    double ms, cpu;       /* per step, wall clock and CPU time, the first step (the capture) left out */
    size_t memory;        /* eager: lt_arena_peak; compiled: lt_plan_bytes */
    size_t kept, remade;  /* compiled: lt_plan_saved_bytes, lt_plan_recomputed_bytes */
    double flops;         /* compiled: lt_plan_recomputed_flops */
    char err[512];
} run_result;

/* `steps` AdamW steps in setting s.  0 on an error other than a budget that does not fit (printed). */
static int train(const int32_t *tok, int64_t n, int B, int layers, int steps, const setting *s, run_result *r) {
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt_config cfg = lt_gpt2_config(256, T, layers, 4, 64);    /* V, ctx, layers, heads, channels */
    lt_gpt *g = lt_gpt_create(ctx, &cfg);
    lt_loader *ld = lt_loader_from_tokens(ctx, tok, n, B, T);
    lt_optim *opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    int32_t *in = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    int32_t *tg = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    lt_plan *plan = NULL;
    lt_paramset ps;
    step_t st;
    double t0 = 0, c0 = 0;
    int step, i, ok = 1;

    r->ok = 0;
    r->weights = NULL;
    r->n_weights = r->memory = r->kept = r->remade = 0;
    r->flops = r->ms = r->cpu = 0;
    r->err[0] = 0;
    st.g = g; st.in = in; st.tg = tg; st.B = B;
    lt_gpt_set_recompute(g, s->every);    /* every block in a lt_recompute_begin/end segment, or none */
    lt_set_memory_budget(ctx, s->budget); /* "75%" of the plan without recomputation, or NULL: none */
    for (step = 0; step < steps && in && tg && !lt_failed(ctx); step++) {
        if (step == 1) { t0 = lesson_now_ms(); c0 = cpu_ms(); }
        lt_zero_grad(ctx);
        lt_loader_next(ld, in, tg);
        if (s->compiled) {
            float l = 0;
            if (!plan) {   /* capture on the first batch; gradients are left alone, so run it too */
                if (!(plan = lt_compile(ctx, gpt_step, &st))) break;
                r->memory = lt_plan_bytes(plan);
                r->kept = lt_plan_saved_bytes(plan);
                r->remade = lt_plan_recomputed_bytes(plan);
                r->flops = lt_plan_recomputed_flops(plan);
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
    r->cpu = steps > 1 ? (cpu_ms() - c0) / (steps - 1) : 0;
    if (!s->compiled) r->memory = lt_arena_peak(ctx);
    if (!in || !tg) { fprintf(stderr, "lesson_memory: out of memory\n"); ok = 0; }
    else if (lt_failed(ctx) && s->budget && !plan) snprintf(r->err, sizeof r->err, "%s", lt_error(ctx));
    else if (lt_failed(ctx)) { fprintf(stderr, "lesson_memory: %s: %s\n", s->name, lt_error(ctx)); ok = 0; }
    else {
        ps = lt_gpt_params(g);
        for (i = 0; i < ps.n; i++) r->n_weights += (size_t)ps.p[i]->n;
        if ((r->weights = (float *)malloc(r->n_weights * sizeof(float))) != NULL) {
            float *w = r->weights;
            for (i = 0; i < ps.n; i++) { memcpy(w, ps.p[i]->data, (size_t)ps.p[i]->n * sizeof(float)); w += ps.p[i]->n; }
            r->ok = 1;
        } else { fprintf(stderr, "lesson_memory: out of memory\n"); ok = 0; }
    }
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
    const char *data = "ltrain.h", *plot = "build/lesson_memory.svg";
    int steps = 100, batch = 8, layers = 6, threads = 1, i, k, rc = 0;
    const lesson_flag flags[] = {{"--steps", 'i', &steps}, {"--batch", 'i', &batch}, {"--layers", 'i', &layers},
                                 {"--threads", 'i', &threads}, {"--plot", 's', &plot}};
    run_result res[N_RUNS];
    int64_t size = 0;
    int32_t *tok = NULL;
    double x[N_RUNS], y[N_RUNS], top = 0;
    char name[128];
    int n_plan = 0;
    lt_plot *p;

    memset(res, 0, sizeof res);
    if ((rc = lesson_args("lesson_memory", argc, argv, &data, flags, 5)) == LESSON_HELP) {
        printf("usage: lesson_memory [text file (%s)] [--steps N (%d)] [--batch B (%d)] [--layers L (%d)]\n"
               "                     [--threads N (%d)] [--plot PATH.svg (%s)]\n", data, steps, batch, layers,
               threads, plot);
        return 0;
    }
    if (rc) return 1;
    if (steps < 2 || batch < 1 || batch > 1024 || layers < 1 || layers > 48) {
        fprintf(stderr, "lesson_memory: need --steps >= 2, --batch in 1..1024 and --layers in 1..48\n");
        return 1;
    }
    if (threads > 0) lt_set_threads(threads);
    if (!lesson_text("lesson_memory", data, (int64_t)batch * T + 1, "for one batch", &tok, &size)) return 1;
    for (k = 0; k < N_RUNS; k++)
        if (!(res[k].loss = (double *)malloc((size_t)steps * sizeof(double)))) {
            fprintf(stderr, "lesson_memory: out of memory\n");
            rc = 1;
            goto out;
        }
    printf("AdamW on a %d-layer GPT (C=64), %s, %d steps of %d x %d tokens, seven ways\n\n", layers, data, steps, batch,
           T);
    for (k = 0; k < N_RUNS && rc == 0; k++) {
        if (!train(tok, size, batch, layers, steps, &settings[k], &res[k])) rc = 1;
        else if (!res[k].ok) printf("%s: does not fit: %s\n\n", settings[k].name, res[k].err);
    }
    if (rc) goto out;

    /* memory: the eager arena's peak (activations, their gradients, the tape, the scratch arena of a
       checkpointed block) or the plan's block (the same, laid out by lifetime) */
    printf("%-19s %7s %7s %9s %7s %7s %7s %6s  %s\n", "run", "memory", "kept", "made", "extra", "wall", "CPU", "CPU",
           "same bits as the first run");
    printf("%-19s %7s %7s %9s %7s %7s %7s %6s  %s\n", "", "MiB", "MiB", "again MiB", "GFLOP", "ms/step", "ms/step",
           "time", "(losses, weights)");
    for (k = 0; k < N_RUNS; k++) {
        const run_result *r = &res[k], *base;
        int same_loss = 0, same_w;
        if (!r->ok) { printf("%-19s does not fit (the error above)\n", settings[k].name); continue; }
        for (i = 0; i < steps; i++) same_loss += memcmp(&r->loss[i], &res[0].loss[i], sizeof(double)) == 0;
        same_w = r->n_weights == res[0].n_weights && !memcmp(r->weights, res[0].weights, r->n_weights * sizeof(float));
        printf("%-19s %7.2f ", settings[k].name, r->memory / 1048576.0);
        if (settings[k].compiled)
            printf("%7.2f %9.2f %7.3f ", r->kept / 1048576.0, r->remade / 1048576.0, r->flops * 1e-9);
        else printf("%7s %9s %7s ", "-", "-", "-");
        base = settings[k].compiled ? &res[2] : &res[0];   /* the same mode without recomputation */
        printf("%7.1f %7.1f %5.2fx  %d of %d losses, weights %s\n", r->ms, r->cpu, base->cpu > 0 ? r->cpu / base->cpu : 0.0,
               same_loss, steps, same_w ? "identical" : "DIFFER");
    }
    printf("\nfinal loss %.6f; a step's forward and backward are about %.3f GFLOP\n", res[0].loss[steps - 1],
           6.0 * (double)batch * T * (12.0 * 64 * 64 * layers + 64.0 * 256) * 1e-9);

    /* the picture: CPU time per step against the step's memory */
    p = lt_plot_create("activation checkpointing: memory against time", "step memory (MiB)", "CPU ms per step");
    snprintf(name, sizeof name, "compiled, budget: none");
    for (k = 2; k < N_RUNS; k++)   /* the plans: none, then the budgets as they tighten */
        if (res[k].ok && k != 3) {
            x[n_plan] = res[k].memory / 1048576.0;
            y[n_plan++] = res[k].cpu;
            if (settings[k].budget) snprintf(name + strlen(name), sizeof name - strlen(name), ", %s", settings[k].budget);
        }
    lt_plot_series(p, name, x, y, n_plan);
    x[0] = res[3].memory / 1048576.0; y[0] = res[3].cpu;
    lt_plot_series(p, "compiled, every block checkpointed", x, y, 1);
    x[0] = res[0].memory / 1048576.0; y[0] = res[0].cpu;
    x[1] = res[1].memory / 1048576.0; y[1] = res[1].cpu;
    lt_plot_series(p, "eager: none, every block checkpointed", x, y, 2);
    for (k = 0; k < N_RUNS; k++) if (res[k].ok && res[k].cpu > top) top = res[k].cpu;
    lt_plot_range(p, 0, NAN, 0, 1.5 * top);   /* room above the points for the legend */
    if (!lesson_plot_save("lesson_memory", p, plot, "\nwrote %s\n")) rc = 1;
out:
    free(tok);
    for (k = 0; k < N_RUNS; k++) { free(res[k].loss); free(res[k].weights); }
    return rc;
}

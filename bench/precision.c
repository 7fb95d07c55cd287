/* cc -O2 -march=native -fopenmp -I. bench/precision.c -o build/bench_precision -lm

   bench_precision: the GPT training step in fp32, bf16 and fp16 (lt_set_precision): milliseconds
   per step (eager and compiled) and the activation memory a compiled plan needs (lt_plan_bytes),
   on random tokens; a markdown table on stdout.  `make bench-precision` runs it.
     --model V,L,H,C,T,B (char-small: 256,4,4,256,256,8)  --steps N (5)  --warmup N (1)
     --threads N (0: OpenMP's default)  --profile (per-op kernel times of one eager step, each
     precision, to stderr) */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

typedef struct { lt_gpt *g; int32_t *in, *tg; int B, T; } step_t;
static lt_tensor *step_loss(lt_ctx *ctx, void *u) {
    step_t *s = (step_t *)u;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, s->T);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median ms of `steps` training steps (zero_grad, forward, backward, AdamW), eager or compiled;
   the plan's bytes in *bytes (compiled). */
static double run(lt_dtype prec, int compiled, const int *m, int steps, int warmup, int profile, size_t *bytes,
                  double *loss_out) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt_config cfg;
    step_t s;
    lt_optim *opt;
    lt_plan *plan = NULL;
    lt_rng r;
    double *ms = (double *)malloc((size_t)(steps + warmup) * sizeof(double)), med = -1;
    int k, i;
    float loss = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab = m[0]; cfg.layers = m[1]; cfg.heads = m[2]; cfg.channels = m[3]; cfg.ctx = m[4];
    s.B = m[5]; s.T = m[4];
    s.g = lt_gpt_create(ctx, &cfg);
    s.in = (int32_t *)malloc((size_t)s.B * (size_t)s.T * sizeof(int32_t));
    s.tg = (int32_t *)malloc((size_t)s.B * (size_t)s.T * sizeof(int32_t));
    opt = lt_adamw_create(ctx, lt_gpt_params(s.g), lt_adamw_defaults());
    lt_set_precision(ctx, prec);
    lt_rng_seed(&r, 7);
    for (i = 0; i < s.B * s.T; i++) {
        s.in[i] = (int32_t)(lt_rng_u64(&r) % (uint64_t)cfg.vocab);
        s.tg[i] = (int32_t)(lt_rng_u64(&r) % (uint64_t)cfg.vocab);
    }
    if (compiled && (plan = lt_compile(ctx, step_loss, &s)) != NULL) *bytes = lt_plan_bytes(plan);
    for (k = 0; k < steps + warmup && !lt_failed(ctx); k++) {
        double t0 = now_ms();
        if (profile && k == warmup) lt_set_profiling(ctx, 1);
        lt_zero_grad(ctx);
        if (plan) {
            lt_plan_run(plan, &loss);
        } else {
            lt_tensor *l = step_loss(ctx, &s);
            loss = lt_item(l);
            lt_backward(ctx, l);
        }
        lt_optim_step(opt, 1e-4);
        ms[k] = now_ms() - t0;
        if (profile && k == warmup) {
            fprintf(stderr, "---- %s, one %s step ----\n", lt_precision_name(prec), plan ? "compiled" : "eager");
            lt_profile_print(ctx, stderr);
            lt_set_profiling(ctx, 0);
        }
    }
    if (lt_failed(ctx)) fprintf(stderr, "bench_precision: %s\n", lt_error(ctx));
    else {
        qsort(ms + warmup, (size_t)steps, sizeof(double), cmp_d);
        med = ms[warmup + steps / 2];
    }
    *loss_out = loss;
    lt_plan_destroy(plan);
    lt_optim_destroy(opt);
    lt_gpt_destroy(s.g);
    lt_ctx_destroy(ctx);
    free(s.in);
    free(s.tg);
    free(ms);
    return med;
}

int main(int argc, char **argv) {
    int m[6] = {256, 4, 4, 256, 256, 8}, steps = 5, warmup = 1, threads = 0, profile = 0, i, p;
    static const lt_dtype precs[3] = {LT_F32, LT_BF16, LT_F16};
    double eager[3], comp[3], loss[3];
    size_t bytes[3] = {0, 0, 0};
    for (i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--model") && sscanf(v, "%d,%d,%d,%d,%d,%d", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6) i++;
        else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[++i < argc ? i : argc - 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atoi(argv[++i < argc ? i : argc - 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[++i < argc ? i : argc - 1]);
        else if (!strcmp(argv[i], "--profile")) profile = 1;
        else {
            printf("usage: bench_precision [--model V,L,H,C,T,B (256,4,4,256,256,8)] [--steps N (5)] [--warmup N (1)]\n"
                   "                       [--threads N] [--profile]\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (steps < 1 || warmup < 0) { fprintf(stderr, "bench_precision: --steps must be >= 1\n"); return 1; }
    if (threads > 0) lt_set_threads(threads);
    for (p = 0; p < 3; p++) {
        double l2;
        eager[p] = run(precs[p], 0, m, steps, warmup, profile, &bytes[p], &loss[p]);
        comp[p] = run(precs[p], 1, m, steps, warmup, 0, &bytes[p], &l2);
    }
    printf("GPT V=%d L=%d H=%d C=%d T=%d B=%d, %d threads, matmul %s, conversions %s; median of %d steps\n\n", m[0],
           m[1], m[2], m[3], m[4], m[5], lt_get_threads(), lt_kernel_name(), lt_amp_kernel_name(), steps);
    printf("| precision | eager ms/step | compiled ms/step | planned activations (MB) | vs fp32 | loss (last step) |\n");
    printf("|---|---:|---:|---:|---:|---:|\n");
    for (p = 0; p < 3; p++)
        printf("| %s | %.1f | %.1f | %.2f | %.3fx | %.4f |\n", lt_precision_name(precs[p]), eager[p], comp[p],
               (double)bytes[p] / 1048576.0, bytes[0] ? (double)bytes[p] / (double)bytes[0] : 0.0, loss[p]);
    return 0;
}

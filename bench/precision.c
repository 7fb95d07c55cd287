/* cc -O2 -march=native -fopenmp -I. bench/precision.c -o build/bench_precision -lm

   bench_precision: the GPT training step in fp32, bf16 and fp16 (lt_set_precision): milliseconds
   per step (eager and compiled), the activation memory a compiled plan needs (lt_plan_bytes) and
   each run's peak RSS, on random tokens; a markdown table on stdout.  `make bench-precision` runs
   it.  Every (precision, mode) runs in a child process of its own (so its peak RSS is its own),
   and the six children run in turn, `rounds` times, so that a change of load on a shared machine
   reaches all of them alike; the time is the median over all rounds' steps.
     --model V,L,H,C,T,B (char-small: 256,4,4,256,256,8)  --all (char-small, gpt-mini, gpt2-124M)
     --steps N per round (2)  --rounds N (3)  --warmup N per round (1)
     --threads N (0: OpenMP's default)  --profile (per-op kernel times of one eager step, each
     precision, to stderr)  --cpu (CPU time, not wall time: with --threads 1, the work done, which
     other processes on a shared machine disturb less) */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_STEPS 64

static int cpu_time; /* --cpu: the process's CPU time instead of the wall clock */
static double now_ms(void) {
    struct timespec t;
    clock_gettime(cpu_time ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
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

/* What one child reports. */
typedef struct {
    int ok, n;
    double ms[MAX_STEPS], loss, rss_mb;
    size_t bytes;
} result_t;

/* `steps` training steps (zero_grad, forward, backward, AdamW) after `warmup`, eager or compiled. */
static void run(lt_dtype prec, int compiled, const int *m, int steps, int warmup, int profile, result_t *res) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt_config cfg;
    step_t s;
    lt_optim *opt;
    lt_plan *plan = NULL;
    lt_rng r;
    struct rusage ru;
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
    if (compiled && (plan = lt_compile(ctx, step_loss, &s)) != NULL) res->bytes = lt_plan_bytes(plan);
    for (k = 0; k < steps + warmup && !lt_failed(ctx); k++) {
        double t0 = now_ms();
        if (profile && k == warmup) lt_set_profiling(ctx, 1);
        lt_zero_grad_lazy(ctx);
        if (plan) {
            lt_plan_run(plan, &loss);
        } else {
            lt_tensor *l = step_loss(ctx, &s);
            loss = lt_item(l);
            lt_backward(ctx, l);
        }
        lt_optim_step(opt, 1e-4);
        if (k >= warmup && res->n < MAX_STEPS) res->ms[res->n++] = now_ms() - t0;
        if (profile && k == warmup) {
            fprintf(stderr, "---- %s, one %s step ----\n", lt_precision_name(prec), plan ? "compiled" : "eager");
            lt_profile_print(ctx, stderr);
            lt_set_profiling(ctx, 0);
        }
    }
    if (lt_failed(ctx)) fprintf(stderr, "bench_precision: %s\n", lt_error(ctx));
    res->ok = !lt_failed(ctx);
    res->loss = loss;
    getrusage(RUSAGE_SELF, &ru);
    res->rss_mb = (double)ru.ru_maxrss / 1024.0;   /* kilobytes on Linux */
    lt_plan_destroy(plan);
    lt_optim_destroy(opt);
    lt_gpt_destroy(s.g);
    lt_ctx_destroy(ctx);
    free(s.in);
    free(s.tg);
}

/* run() in a child process; its result comes back through a pipe. */
static int run_child(lt_dtype prec, int compiled, const int *m, int steps, int warmup, int profile, int threads,
                     result_t *res) {
    int fd[2], status = 0;
    pid_t pid;
    size_t got = 0;
    memset(res, 0, sizeof *res);
    if (pipe(fd) != 0) return 0;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) { close(fd[0]); close(fd[1]); return 0; }
    if (pid == 0) {
        result_t r;
        size_t off = 0;
        close(fd[0]);
        memset(&r, 0, sizeof r);
        if (threads > 0) lt_set_threads(threads);
        run(prec, compiled, m, steps, warmup, profile, &r);
        while (off < sizeof r) {
            ssize_t w = write(fd[1], (const char *)&r + off, sizeof r - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        close(fd[1]);
        _exit(0);
    }
    close(fd[1]);
    while (got < sizeof *res) {
        ssize_t n = read(fd[0], (char *)res + got, sizeof *res - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd[0]);
    waitpid(pid, &status, 0);
    return got == sizeof *res && res->ok;
}

static double median(double *v, int n) {
    if (n < 1) return -1;
    qsort(v, (size_t)n, sizeof(double), cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One config: the table's rows (the header is main's). */
static void bench_config(const char *name, const int *m, int steps, int rounds, int warmup, int profile, int threads) {
    static const lt_dtype precs[3] = {LT_F32, LT_BF16, LT_F16};
    double ms[3][2][MAX_STEPS * 8], rss[3][2] = {{0, 0}, {0, 0}, {0, 0}}, loss[3] = {0, 0, 0}, med[3][2];
    int n[3][2] = {{0, 0}, {0, 0}, {0, 0}}, p, c, k, i, bad = 0;
    size_t bytes[3] = {0, 0, 0};
    for (k = 0; k < rounds; k++)
        for (p = 0; p < 3; p++)
            for (c = 0; c < 2; c++) {
                result_t r;
                if (!run_child(precs[p], c, m, steps, warmup, profile && k == 0 && c == 0, threads, &r)) { bad = 1; continue; }
                for (i = 0; i < r.n && n[p][c] < MAX_STEPS * 8; i++) ms[p][c][n[p][c]++] = r.ms[i];
                if (r.rss_mb > rss[p][c]) rss[p][c] = r.rss_mb;
                if (c) bytes[p] = r.bytes;
                else loss[p] = r.loss;
            }
    if (bad) fprintf(stderr, "bench_precision: %s: a run failed\n", name);
    for (p = 0; p < 3; p++)
        for (c = 0; c < 2; c++) med[p][c] = median(ms[p][c], n[p][c]);
    for (p = 0; p < 3; p++)
        printf("| %s | %s | %.1f | %.1f | %.3fx | %.2f | %.3fx | %.0f | %.0f | %.4f |\n",
               p == 0 ? name : "", lt_precision_name(precs[p]), med[p][0], med[p][1],
               med[0][1] > 0 ? med[p][1] / med[0][1] : 0.0, (double)bytes[p] / 1048576.0,
               bytes[0] ? (double)bytes[p] / (double)bytes[0] : 0.0, rss[p][0], rss[p][1], loss[p]);
    fflush(stdout);
}

int main(int argc, char **argv) {
    static const int configs[3][6] = {{256, 4, 4, 256, 256, 8}, {50304, 6, 6, 384, 256, 4}, {50304, 12, 12, 768, 64, 4}};
    static const char *const names[3] = {"char-small (256, 4, 4, 256, 256, 8)", "gpt-mini (50304, 6, 6, 384, 256, 4)",
                                         "gpt2-124M (50304, 12, 12, 768, 64, 4)"};
    int m[6] = {256, 4, 4, 256, 256, 8}, steps = 2, rounds = 3, warmup = 1, threads = 0, profile = 0, all = 0, i;
    char name[96];
    for (i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--model") && sscanf(v, "%d,%d,%d,%d,%d,%d", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6) i++;
        else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[++i < argc ? i : argc - 1]);
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i < argc ? i : argc - 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atoi(argv[++i < argc ? i : argc - 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[++i < argc ? i : argc - 1]);
        else if (!strcmp(argv[i], "--profile")) profile = 1;
        else if (!strcmp(argv[i], "--all")) all = 1;
        else if (!strcmp(argv[i], "--cpu")) cpu_time = 1;
        else {
            printf("usage: bench_precision [--model V,L,H,C,T,B (256,4,4,256,256,8) | --all] [--steps N (2)]\n"
                   "                       [--rounds N (3)] [--warmup N (1)] [--threads N] [--profile] [--cpu]\n");
            return strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (steps < 1 || steps > MAX_STEPS || rounds < 1 || rounds > 8 || warmup < 0) {
        fprintf(stderr, "bench_precision: need 1 <= --steps <= %d, 1 <= --rounds <= 8, --warmup >= 0\n", MAX_STEPS);
        return 1;
    }
    printf("GPT training step, %d threads, matmul %s (bf16: %s), conversions %s; median of %d rounds x %d steps "
           "(%s); each run in its own process\n\n", threads > 0 ? threads : lt_get_threads(), lt_kernel_name(),
           lt_kernel_name_for(LT_BF16), lt_amp_kernel_name(), rounds, steps, cpu_time ? "CPU time" : "wall time");
    printf("| config | precision | eager ms/step | compiled ms/step | time vs fp32 (compiled) | planned activations (MB) "
           "| vs fp32 | peak RSS eager (MB) | peak RSS compiled (MB) | loss (last step) |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    if (all) {
        for (i = 0; i < 3; i++) bench_config(names[i], configs[i], steps, rounds, warmup, profile, threads);
    } else {
        snprintf(name, sizeof name, "(%d, %d, %d, %d, %d, %d)", m[0], m[1], m[2], m[3], m[4], m[5]);
        bench_config(name, m, steps, rounds, warmup, profile, threads);
    }
    return 0;
}

/* bench/bandwidth.c - the memory floor of the optimizer step (make bench-bandwidth).

   AdamW reads p, g, m, v and writes p, m, v: 28 bytes a parameter, whatever the code.  This times
   lt_optim_step (AdamW) on one parameter of N floats against plain OpenMP loops over arrays of
   the same size that move bytes and do no more than a multiply-add: the same 4 reads and 3
   writes, a triad (2 reads, 1 write), and memset.  When AdamW moves its 28 bytes as fast as the
   plain loops move theirs, it is at the machine's floor, and its share of a step can only fall
   with fewer bytes (bench/step_shares.md: GPT-2 124M, where AdamW is 8% of a step).

     build/bench_bandwidth [--n FLOATS (124000000)] [--threads N (all)] [--reps N (5)]

   GB/s = 10^9 bytes a second, counting the bytes each loop must move (not the read-for-ownership
   of written lines, which the hardware adds for the plain stores); min over --reps, the first
   call (page faults of the moments) not timed. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void cpu_name(char *out, size_t n) {
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(out, n, "unknown CPU");
    if (!f) return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            char *s = strchr(line, ':') + 2;
            s[strcspn(s, "\n")] = 0;
            snprintf(out, n, "%s", s);
            break;
        }
    fclose(f);
}

int main(int argc, char **argv) {
    int64_t n = 124000000, i;
    int reps = 5, threads = 0, k, r;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    static const char *const names[4] = {"AdamW (lt_optim_step)", "plain loop, 4 reads 3 writes",
                                         "triad, 2 reads 1 write", "memset, 1 write"};
    static const double bytes[4] = {28, 28, 12, 4};
    char cpu[256];
    lt_ctx *ctx;
    lt_tensor *p, *ps[1];
    lt_paramset set;
    lt_optim *opt;
    float *a, *b, *c, *d;
    for (k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--n") && k + 1 < argc) n = atoll(argv[++k]);
        else if (!strcmp(argv[k], "--threads") && k + 1 < argc) threads = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--reps") && k + 1 < argc) reps = atoi(argv[++k]);
        else { fprintf(stderr, "usage: %s [--n FLOATS] [--threads N] [--reps N]\n", argv[0]); return 2; }
    }
    if (n < 1024 || reps < 1) { fprintf(stderr, "bench_bandwidth: --n >= 1024 and --reps >= 1\n"); return 2; }
    if (threads > 0) lt_set_threads(threads);
    threads = lt_get_threads();
    ctx = lt_ctx_create(1);
    p = lt_param(ctx, "p", 1, &n);
    a = (float *)malloc((size_t)n * sizeof(float));
    b = (float *)malloc((size_t)n * sizeof(float));
    c = (float *)malloc((size_t)n * sizeof(float));
    d = (float *)malloc((size_t)n * sizeof(float));
    if (!ctx || !p || !a || !b || !c || !d) { fprintf(stderr, "bench_bandwidth: out of memory\n"); return 1; }
    ps[0] = p;
    set.p = ps;
    set.n = 1;
    opt = lt_adamw_create(ctx, set, lt_adamw_defaults());
    for (i = 0; i < n; i++) {
        p->grad[i] = 1e-3f * (float)(i % 7);
        a[i] = b[i] = c[i] = d[i] = 1.0f;
    }
    lt_optim_step(opt, 1e-3);   /* the moments' first touch */
    for (r = 0; r < reps; r++) {
        double t0 = now_ms(), t1, t2, t3, t4;
        lt_optim_step(opt, 1e-3);
        t1 = now_ms();
        LT__OMP(parallel for)
        for (i = 0; i < n; i++) {   /* the bytes of AdamW: reads d, a, b, c; writes a, b, c */
            float g = d[i];
            b[i] = 0.9f * b[i] + 0.1f * g;
            c[i] = 0.99f * c[i] + 0.01f * g;
            a[i] -= 1e-3f * b[i] + 1e-4f * c[i];
        }
        t2 = now_ms();
        LT__OMP(parallel for)
        for (i = 0; i < n; i++) a[i] = b[i] + 0.5f * c[i];
        t3 = now_ms();
        {
            int64_t part, parts = threads;
            LT__OMP(parallel for)
            for (part = 0; part < parts; part++)
                memset(d + n * part / parts, 0, (size_t)(n * (part + 1) / parts - n * part / parts) * sizeof(float));
        }
        t4 = now_ms();
        if (t1 - t0 < best[0]) best[0] = t1 - t0;
        if (t2 - t1 < best[1]) best[1] = t2 - t1;
        if (t3 - t2 < best[2]) best[2] = t3 - t2;
        if (t4 - t3 < best[3]) best[3] = t4 - t3;
    }
    cpu_name(cpu, sizeof cpu);
    printf("CPU: %s; %d thread%s; %lld floats per array (%.0f MB); min of %d\n\n", cpu, threads, threads > 1 ? "s" : "",
           (long long)n, (double)n * 4 / 1048576.0, reps);
    printf("| loop | bytes per element | ms | GB/s |\n|---|---:|---:|---:|\n");
    for (k = 0; k < 4; k++)
        printf("| %s | %.0f | %.1f | %.1f |\n", names[k], bytes[k], best[k], bytes[k] * (double)n / (best[k] * 1e6));
    lt_optim_destroy(opt);
    lt_ctx_destroy(ctx);
    free(a); free(b); free(c); free(d);
    return 0;
}

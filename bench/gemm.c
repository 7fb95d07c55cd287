/* cc -O2 -march=native -fopenmp -I. -I/usr/include/x86_64-linux-gnu/openblas-pthread bench/gemm.c -o build/bench_gemm -lopenblas -lm
   (without OpenBLAS: add -DNO_OPENBLAS and drop -lopenblas)

   bench_gemm: GFLOP/s of ltrain's lt_sgemm against OpenBLAS's cblas_sgemm, 1 and 2 threads, at
   square sizes and at the shapes a GPT training step runs (forward x·W, backward dy·Wᵀ and xᵀ·dy).
   Each shape is timed in alternating rounds (ours, OpenBLAS, ours, ...) and the best round of
   each counts, so a neighbour's load on the machine hurts both sides alike.
   Usage: bench_gemm [--quick] [--threads 1,2] [--md FILE] [M N K ta tb]
          bench_gemm --serve   (for bench/gemm.py: reads lines "M N K ta tb threads impl calls ms",
                                impl ours|openblas, runs at least `calls` calls and `ms`
                                milliseconds, prints "best_seconds calls" for each line)
   OpenBLAS should run its own kernel for this CPU: run with OPENBLAS_CORETYPE=SkylakeX
   (make bench sets it) or it may pick a slow generic one.  make bench runs bench/gemm.py, which
   drives this program's --serve mode alternately with MKL and numpy's OpenBLAS in Python. */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef NO_OPENBLAS
#include <cblas.h>
#endif

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct { const char *what; int64_t M, N, K; int ta, tb; } shape_t;

static const shape_t shapes[] = {
    {"square 1024", 1024, 1024, 1024, 0, 0},
    {"square 2048", 2048, 2048, 2048, 0, 0},
    {"qkv fwd  x·W      (B·T=2048, C=256 -> 3C)", 2048, 768, 256, 0, 0},
    {"fc fwd   x·W      (2048, 768 -> 3072)", 2048, 3072, 768, 0, 0},
    {"fc bwd   dy·Wᵀ    (2048, 3072 -> 768)", 2048, 768, 3072, 0, 1},
    {"fc bwd   xᵀ·dy    (768x3072, K=2048)", 768, 3072, 2048, 1, 0},
    {"proj fwd x·W      (2048, 768 -> 768)", 2048, 768, 768, 0, 0},
    {"proj bwd dy·Wᵀ    (2048, 768 -> 768)", 2048, 768, 768, 0, 1},
    {"proj bwd xᵀ·dy    (768x768, K=2048)", 768, 768, 2048, 1, 0},
    {"2048x256x768      (training shape)", 2048, 256, 768, 0, 0},
    {"2048x256x768 ·Bᵀ", 2048, 256, 768, 0, 1},
    {"256x768x2048 Aᵀ·", 256, 768, 2048, 1, 0},
    {"lm head fwd x·Wᵀ  (1024, 384 -> 50304)", 1024, 50304, 384, 0, 1},
    {"lm head bwd dy·W  (1024, 50304 -> 384)", 1024, 384, 50304, 0, 0},
    {"lm head bwd dyᵀ·x (50304x384, K=1024)", 50304, 384, 1024, 1, 0},
};

/* n floats on 2 MiB pages where Linux gives them (lt__hugepages): the library's own buffers are
   (arena, parameters), and so are numpy's arrays, so every column reads its operands alike.  The
   start is 2 MiB aligned (so every byte can be on such pages; the library's tensors are 64-byte
   aligned, which lt_sgemm's streaming stores of a large C want). */
static float *matrix(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, n * 4 + 64) != 0) return NULL;
    lt__hugepages(p, n * 4);
    return (float *)p;
}

static void fill(float *p, size_t n, unsigned s) {
    size_t i;
    for (i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; p[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f; }
}

/* Best seconds of one call for `ours` (1) or OpenBLAS (0), over `reps` calls. */
static double time_one(int ours, const shape_t *s, const float *A, const float *B, float *C) {
    int64_t lda = s->ta ? s->M : s->K, ldb = s->tb ? s->K : s->N;
    double t = now_s();
    if (ours) lt_sgemm(s->ta, s->tb, s->M, s->N, s->K, 1.0f, A, lda, B, ldb, 0.0f, C, s->N);
#ifndef NO_OPENBLAS
    else cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, (int)s->M,
                     (int)s->N, (int)s->K, 1.0f, A, (int)lda, B, (int)ldb, 0.0f, C, (int)s->N);
#endif
    return now_s() - t;
}

/* the 1-minute load average from /proc/loadavg into buf[64], or "unknown" */
static const char *load1(char *buf) {
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = 0;
    if (f) {
        if (!fgets(buf, 64, f)) buf[0] = 0;
        fclose(f);
    }
    buf[strcspn(buf, " ")] = 0;
    return buf[0] ? buf : "unknown";
}

/* The head of a results file: the CPU's model name, the flags that decide its kernels, the cache
   sizes of CPU 0, the logical CPUs and the load average (bench/machine.py writes the same for the
   Python benches). */
static void machine_md(FILE *out) {
    static const char *const feats[] = {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                                        "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8"};
    char line[8192], model[256] = "unknown CPU", flags[8192] = "", buf[64];
    int i, ncpu = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *v = strchr(line, ':');
        if (!v) continue;
        v += 2;
        v[strcspn(v, "\n")] = 0;
        if (!strncmp(line, "processor", 9)) ncpu++;
        else if (!strncmp(line, "model name", 10) && !strcmp(model, "unknown CPU")) snprintf(model, sizeof model, "%s", v);
        else if (!strncmp(line, "flags", 5) && !flags[0]) snprintf(flags, sizeof flags, " %s ", v);
    }
    if (f) fclose(f);
    fprintf(out, "CPU: %s; %d logical CPUs.\nFeatures:", model, ncpu);
    for (i = 0; i < (int)(sizeof feats / sizeof feats[0]); i++) {
        char want[32];
        snprintf(want, sizeof want, " %s ", feats[i]);
        if (strstr(flags, want)) fprintf(out, " %s", feats[i]);
    }
    fprintf(out, ".\nCaches (of CPU 0):");
    for (i = 0; i < 8; i++) {
        char path[96], level[16] = "", type[32] = "", size[32] = "";
        const char *names[3] = {"level", "type", "size"};
        char *dst[3];
        int k;
        dst[0] = level; dst[1] = type; dst[2] = size;
        for (k = 0; k < 3; k++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", i, names[k]);
            if ((f = fopen(path, "r")) != NULL) {
                if (fgets(dst[k], 16, f)) dst[k][strcspn(dst[k], "\n")] = 0;
                fclose(f);
            }
        }
        if (!level[0]) break;
        fprintf(out, "%s L%s%s %s", i ? "," : "", level, !strcmp(type, "Data") ? "d" : !strcmp(type, "Instruction") ? "i" : "",
                size);
    }
    fprintf(out, ".\nLoad average (1 min) at start: %s (at the end: below the table).\n\n", load1(buf));
}

/* --serve: one timed batch of calls per input line, so that another process can alternate with us.
   The operands stay allocated while the shape does not change. */
static int serve(void) {
    char line[256];
    shape_t s = {"serve", 0, 0, 0, 0, 0};
    float *A = NULL, *B = NULL, *C = NULL;
#ifndef NO_OPENBLAS
    printf("ready %s | %s, core %s\n", lt_kernel_name(), openblas_get_config(), openblas_get_corename());
#else
    printf("ready %s | no OpenBLAS\n", lt_kernel_name());
#endif
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        long long M, N, K;
        int ta, tb, thr, calls, n = 0;
        char impl[16];
        double ms, best = 1e30, spent = 0;
        if (sscanf(line, "%lld %lld %lld %d %d %d %15s %d %lf", &M, &N, &K, &ta, &tb, &thr, impl, &calls, &ms) != 9 ||
            M < 1 || N < 1 || K < 1) {
            printf("error: want \"M N K ta tb threads impl calls ms\", got %s", line);
            fflush(stdout);
            continue;
        }
        if (M != s.M || N != s.N || K != s.K) {
            free(A); free(B); free(C);
            A = matrix((size_t)(M * K)); B = matrix((size_t)(K * N)); C = matrix((size_t)(M * N));
            if (C) memset(C, 0, (size_t)(M * N) * 4);
            if (!A || !B || !C) { printf("error: out of memory for %lldx%lldx%lld\n", M, N, K); return 1; }
            fill(A, (size_t)(M * K), 1); fill(B, (size_t)(K * N), 2);
            s.M = M; s.N = N; s.K = K;
        }
        s.ta = ta; s.tb = tb;
        lt_set_threads(thr);
#ifndef NO_OPENBLAS
        openblas_set_num_threads(thr);
#else
        if (strcmp(impl, "ours") != 0) { printf("error: built without OpenBLAS\n"); fflush(stdout); continue; }
#endif
        while (n < calls || spent * 1e3 < ms) {
            double t = time_one(strcmp(impl, "ours") == 0, &s, A, B, C);
            spent += t;
            if (t < best) best = t;
            if (++n >= 10000) break;
        }
        printf("%.9f %d\n", best, n);
        fflush(stdout);
    }
    free(A); free(B); free(C);
    return 0;
}

int main(int argc, char **argv) {
    int quick = 0, threads[4] = {1, 2}, nthreads = 2, i, ti, custom = 0;
    const char *md = NULL;
    shape_t one = {"custom", 0, 0, 0, 0, 0};
    const shape_t *list = shapes;
    int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    FILE *out = NULL;
    double ours_peak = 0;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--serve") == 0) return serve();
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--md") == 0 && i + 1 < argc) md = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            const char *p = argv[++i];
            nthreads = 0;
            while (*p && nthreads < 4) { threads[nthreads++] = atoi(p); while (*p && *p != ',') p++; if (*p) p++; }
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: bench_gemm [--quick] [--threads 1,2] [--md FILE] [M N K ta tb]\n");
            return 0;
        } else if (i + 4 < argc) {
            one.M = atoll(argv[i]); one.N = atoll(argv[i + 1]); one.K = atoll(argv[i + 2]);
            one.ta = atoi(argv[i + 3]); one.tb = atoi(argv[i + 4]);
            custom = 1; i += 4;
        }
    }
    if (custom) { list = &one; nshapes = 1; }
    else if (quick) nshapes = 3;
    if (getenv("BENCH_QUICK") && getenv("BENCH_QUICK")[0] && strcmp(getenv("BENCH_QUICK"), "0") != 0) {
        quick = 1;
        if (!custom) nshapes = 3;
    }
    if (md) out = fopen(md, "w");
    if (out) machine_md(out);
    printf("lt_sgemm kernel: %s\n", lt_kernel_name());
    {
        FILE *la = fopen("/proc/loadavg", "r");
        char buf[64] = "";
        if (la) { if (!fgets(buf, sizeof buf, la)) buf[0] = 0; fclose(la); }
        if (buf[0]) printf("load average: %s", buf);   /* others on the cores make every number noisy */
    }
#ifndef NO_OPENBLAS
    printf("OpenBLAS: %s, core %s (OPENBLAS_CORETYPE=%s)\n", openblas_get_config(), openblas_get_corename(),
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "unset");
#endif
    printf("%-44s %3s %9s %9s %6s\n", "shape (M x N x K, op)", "thr", "ours", "OpenBLAS", "ratio");
    if (out) {
        fprintf(out, "| shape | M×N×K | threads | ours GFLOP/s | OpenBLAS GFLOP/s | ours/OpenBLAS |\n");
        fprintf(out, "|---|---|---|---|---|---|\n");
    }
    for (i = 0; i < nshapes; i++) {
        const shape_t *s = &list[i];
        size_t na = (size_t)(s->M * s->K), nb = (size_t)(s->K * s->N), nc = (size_t)(s->M * s->N);
        float *A = matrix(na), *B = matrix(nb), *C = matrix(nc);
        double flop = 2.0 * (double)s->M * (double)s->N * (double)s->K;
        fill(A, na, 1); fill(B, nb, 2); memset(C, 0, nc * 4);
        for (ti = 0; ti < nthreads; ti++) {
            double best[2] = {1e30, 1e30}, spent = 0, g0, g1;
            int r, rounds = 0;
            lt_set_threads(threads[ti]);
#ifndef NO_OPENBLAS
            openblas_set_num_threads(threads[ti]);
#endif
            time_one(1, s, A, B, C);
            time_one(0, s, A, B, C);
            /* alternate until ~1.5 s per side (0.3 s quick) and at least 3 rounds */
            while (rounds < 3 || spent < (quick ? 0.6 : 3.0)) {
                for (r = 0; r < 2; r++) {
                    double t = time_one(r == 0, s, A, B, C);
                    spent += t;
                    if (t < best[r]) best[r] = t;
                }
                if (++rounds >= 200) break;
            }
            g0 = flop / best[0] * 1e-9; g1 = flop / best[1] * 1e-9;
#ifdef NO_OPENBLAS
            g1 = 0;
#endif
            if (g0 > ours_peak) ours_peak = g0;
            printf("%-44s %3d %9.1f %9.1f %5.0f%%   (%lldx%lldx%lld %s%s)\n", s->what, threads[ti], g0, g1,
                   g1 > 0 ? 100.0 * g0 / g1 : 0.0, (long long)s->M, (long long)s->N, (long long)s->K,
                   s->ta ? "Aᵀ" : "A", s->tb ? "Bᵀ" : "B");
            fflush(stdout);
            if (out)
                fprintf(out, "| %s | %lld×%lld×%lld %s·%s | %d | %.1f | %.1f | %.0f%% |\n", s->what, (long long)s->M,
                        (long long)s->N, (long long)s->K, s->ta ? "Aᵀ" : "A", s->tb ? "Bᵀ" : "B", threads[ti], g0, g1,
                        g1 > 0 ? 100.0 * g0 / g1 : 0.0);
        }
        free(A); free(B); free(C);
    }
    if (out) {
        char buf[64];
        fprintf(out, "\nLoad average (1 min) at the end: %s.\n", load1(buf));
        fclose(out);
    }
    return 0;
}

/* cc -O2 -march=native -fopenmp -I. bench/gemm_seq.c -o build/bench_gemm_seq -lm

   bench_gemm_seq R C L THREADS [ROUNDS]: are a GPT step's products slower inside the step than
   alone?  The products of L GPT-2 blocks of width C on R = B*T rows (per block: qkv C -> 3C, attn
   proj C -> C, fc C -> 4C, mlp proj 4C -> C; forward x·W, then in reverse order the input
   gradient dy·Wᵀ with beta = 1 and the weight gradient xᵀ·dy) on distinct buffers, as a step
   lays them out, timed two ways:
     sequence  all of them in the step's order, the best of ROUNDS (default 3) passes: each
               product finds its operands where the previous ones left the caches
     hot       each product alone, the best of 5 calls in a row (operands in the caches)
   A sequence well above the hot sum means cold operands cost; `make bench-gemm-seq` runs the
   char-small (2048 256 4) and gpt2-124M (256 768 12) shapes at 1 and 2 threads.  V=1 in the
   environment prints each forward product's and input gradient's hot GFLOP/s. */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int ta, tb;
    int64_t M, N, K, lda, ldb, ldc;
    const float *A, *B;
    float *C, beta;
    const char *name;
} gs_product;

static double gs_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
/* n floats in [-0.5, 0.5), never subnormal */
static float *gs_buf(int64_t n) {
    void *v = NULL;
    float *p;
    int64_t i;
    /* 2 MiB aligned: every byte can be on 2 MiB pages, as the library's own buffers, and 64-byte
       aligned rows as its tensors (lt_sgemm streams a large C only there) */
    if (posix_memalign(&v, (size_t)2 << 20, (size_t)n * sizeof(float) + 64) != 0) {
        fprintf(stderr, "bench_gemm_seq: out of memory\n");
        exit(1);
    }
    p = (float *)v;
    lt__hugepages(p, (size_t)n * sizeof(float));
    for (i = 0; i < n; i++) p[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    return p;
}
static void gs_run(const gs_product *g) {
    lt_sgemm(g->ta, g->tb, g->M, g->N, g->K, 1.0f, g->A, g->lda, g->B, g->ldb, g->beta, g->C, g->ldc);
}

int main(int argc, char **argv) {
    static const char *names[4] = {"qkv", "attn proj", "fc", "mlp proj"};
    gs_product *g;
    int64_t R, C, I[4], O[4];
    int L, threads, rounds, n = 0, nf, i, j, r;
    double flops = 0, seq = 1e30, hot = 0, hot_f = 0;
    if (argc < 5) {
        fprintf(stderr, "usage: bench_gemm_seq R C L THREADS [ROUNDS]\n");
        return 2;
    }
    R = atoll(argv[1]); C = atoll(argv[2]); L = atoi(argv[3]); threads = atoi(argv[4]);
    rounds = argc > 5 ? atoi(argv[5]) : 3;
    if (R <= 0 || C <= 0 || L <= 0 || L > 64 || threads <= 0 || rounds <= 0) {
        fprintf(stderr, "bench_gemm_seq: R, C, THREADS, ROUNDS must be positive and 0 < L <= 64\n");
        return 2;
    }
    lt_set_threads(threads);
    I[0] = C; O[0] = 3 * C; I[1] = C; O[1] = C; I[2] = C; O[2] = 4 * C; I[3] = 4 * C; O[3] = C;
    g = (gs_product *)calloc((size_t)L * 12, sizeof *g);
    if (!g) return 1;
    for (i = 0; i < L; i++)
        for (j = 0; j < 4; j++) {   /* forward: y (R, O) = x (R, I) · W (I, O) */
            gs_product p = {0, 0, R, O[j], I[j], I[j], O[j], O[j], NULL, NULL, NULL, 0.0f, names[j]};
            p.A = gs_buf(R * I[j]); p.B = gs_buf(I[j] * O[j]); p.C = gs_buf(R * O[j]);
            g[n++] = p;
        }
    nf = n;
    for (i = nf - 1; i >= 0; i--) {   /* backward, last layer first */
        const gs_product *f = &g[i];
        float *dy = gs_buf(f->M * f->N);
        gs_product dx = {0, 1, f->M, f->K, f->N, f->N, f->N, f->K, dy, f->B, gs_buf(f->M * f->K), 1.0f, "dx"};
        gs_product dw = {1, 0, f->K, f->N, f->M, f->K, f->N, f->N, f->A, dy, gs_buf(f->K * f->N), 0.0f, "dW"};
        g[n++] = dx;
        g[n++] = dw;
    }
    for (i = 0; i < n; i++) flops += 2.0 * (double)g[i].M * (double)g[i].N * (double)g[i].K;
    for (r = 0; r < rounds; r++) {
        double t0 = gs_now(), t;
        for (i = 0; i < n; i++) gs_run(&g[i]);
        t = gs_now() - t0;
        if (t < seq) seq = t;
    }
    for (i = 0; i < n; i++) {
        double best = 1e30;
        for (r = 0; r < 5; r++) {
            double t0 = gs_now(), t;
            gs_run(&g[i]);
            t = gs_now() - t0;
            if (t < best) best = t;
        }
        hot += best;
        if (i < nf) hot_f += best;
        if (getenv("V") && (i < 4 || (i >= nf && i < nf + 8)))
            printf("  %-9s %lldx%lldx%lld %s%s beta %g: %.1f GFLOP/s\n", g[i].name, (long long)g[i].M,
                   (long long)g[i].N, (long long)g[i].K, g[i].ta ? "Aᵀ" : "A", g[i].tb ? "·Bᵀ" : "·B",
                   (double)g[i].beta, 2.0 * (double)g[i].M * (double)g[i].N * (double)g[i].K / best / 1e9);
    }
    printf("R %lld, C %lld, L %d, %d thread%s, %s: %d products, %.2f GFLOP; sequence %.1f ms (%.1f GFLOP/s); "
           "hot sum %.1f ms (%.1f GFLOP/s; forward %.1f, backward %.1f); sequence / hot %.3f\n",
           (long long)R, (long long)C, L, threads, threads == 1 ? "" : "s", lt_kernel_name(), n, flops / 1e9,
           seq * 1e3, flops / seq / 1e9, hot * 1e3, flops / hot / 1e9, hot_f * 1e3, (hot - hot_f) * 1e3, seq / hot);
    for (i = 0; i < n; i++) {
        if (i < nf) { free((void *)g[i].A); free((void *)g[i].B); }
        else if (g[i].ta == 0) free((void *)g[i].A);   /* dy, shared by the dx and dW pair */
        free(g[i].C);
    }
    free(g);
    return 0;
}

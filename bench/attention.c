/* cc -O2 -march=native -fopenmp -I. bench/attention.c -o build/bench_attention -lm

   bench_attention: lt_attention alone, forward and backward kernel milliseconds (the op's
   profiling counters, lt_set_profiling), median (and min: the machine may be shared) of --reps runs, at the shapes of the bench configs:
     char-small B=8 T=256 C=256 H=4, gpt-mini B=4 T=256 C=384 H=6, gpt2 B=4 T=64 C=768 H=12,
   plus T = 1024 (B=1, C=256, H=4); 1 and 2 threads.  `make bench-attention` runs it.
     --shape B,T,C,H (only this one)  --reps N (9)  --threads N (only this count)  --bf16
     --cold (64 MiB written before each kernel: the inputs come from memory, as in a step)
     --blocks (also the float32 block products alone, on one block in cache: lt__att_mm per causal mode)
   GFLOP/s counts the products a causal attention needs, whatever a kernel computes again or
   skips: per (b, h) T(T+1)/2 x D multiply-adds for each of the forward's two (S = Q·Kᵀ, P·V) and
   the backward's four (dV, dP, dK, dQ; not the S it recomputes), so it compares with the GEMM's
   rate (lt_sgemm 2048^3 float32 on as many threads, the best of 5 calls, measured in the same run):
   the issue's "attention at >= 80% of the GEMM rate". */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The attention rows of the profile counters (float32 and 16-bit ops): forward and backward ms. */
static void attention_ms(const lt_ctx *ctx, double *fwd, double *bwd) {
    int r;
    *fwd = *bwd = 0;
    for (r = 0; r < LT__OP_COUNT; r++)
        if (!strncmp(lt__ops[r].name, "attention", 9)) { *fwd += 1e3 * ctx->prof_s[0][r]; *bwd += 1e3 * ctx->prof_s[1][r]; }
}

/* --cold: 64 MiB written before each kernel, so qkv, y and the gradients come from memory, as
   inside a training step (where the other ops' tensors pass through the caches in between) */
static char *cold_buf;
static void cold(void) {
    static unsigned char v;
    if (cold_buf) memset(cold_buf, ++v, (size_t)64 << 20);
}

/* lt_sgemm's GFLOP/s at 2048^3 on the current thread count: the best of 5 calls after one */
static double sgemm_rate(void) {
    const int64_t n = 2048;
    float *a = (float *)malloc((size_t)(n * n) * sizeof(float)), *b = (float *)malloc((size_t)(n * n) * sizeof(float));
    float *c = (float *)malloc((size_t)(n * n) * sizeof(float));
    double best = 1e30;
    int64_t i;
    int k;
    if (!a || !b || !c) { free(a); free(b); free(c); return 0.0; }
    for (i = 0; i < n * n; i++) { a[i] = (float)(i % 7) * 0.1f; b[i] = (float)(i % 5) * 0.1f; }
    for (k = 0; k < 6; k++) {
        double t = lt__now();
        lt_sgemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        t = lt__now() - t;
        if (k > 0 && t < best) best = t;
    }
    free(a); free(b); free(c);
    return 2.0 * (double)n * (double)n * (double)n / best * 1e-9;
}

static void run(int B, int T, int C, int H, int threads, int reps, lt_dtype prec, double gemm) {
    lt_ctx *ctx = lt_ctx_create(1);
    int64_t s[3];
    lt_tensor *qkv, *R = NULL;
    double *f = (double *)malloc((size_t)reps * sizeof(double)), *b = (double *)malloc((size_t)reps * sizeof(double));
    int k;
    lt_set_threads(threads);
    lt_set_precision(ctx, prec);
    s[0] = B; s[1] = T; s[2] = 3 * C;
    qkv = lt_param(ctx, "qkv", 3, s);
    lt_init_normal(ctx, qkv, 0.0, 1.0);
    if (prec != LT_F32) lt_round_to_precision(prec, qkv->data, qkv->data, (size_t)qkv->n);
    for (k = -1; k < reps; k++) {   /* k = -1: warm-up */
        lt_tensor *y;
        lt_zero_grad_lazy(ctx);   /* qkv's gradient starts without values, as a model's (an op's output) */
        lt_set_profiling(ctx, 1);
        cold();
        y = lt_attention(ctx, qkv, H, NULL);
        if (!R) {
            s[2] = C;
            R = lt_param(ctx, "R", 3, s);
            lt_init_uniform(ctx, R, -1.0, 1.0);
            R->requires_grad = 0;
        }
        y = lt_sum(ctx, lt_mul(ctx, y, R));
        cold();
        lt_backward(ctx, y);
        if (k >= 0) attention_ms(ctx, &f[k], &b[k]);
        lt_set_profiling(ctx, 0);
    }
    qsort(f, (size_t)reps, sizeof(double), cmp_d);
    qsort(b, (size_t)reps, sizeof(double), cmp_d);
    {   /* the causal products' multiply-adds, six of them (above) */
        double flops = 2.0 * 6.0 * B * H * (T * (T + 1.0) / 2.0) * (C / H), gf = flops / (f[reps / 2] + b[reps / 2]) * 1e-6;
        printf("| B=%d T=%d C=%d H=%d | %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.0f%% |\n", B, T, C, H,
               lt_precision_name(prec), threads, f[reps / 2], b[reps / 2], f[reps / 2] + b[reps / 2], f[0], b[0], gf,
               gemm > 0 ? 100.0 * gf / gemm : 0.0);
    }
    fflush(stdout);
    if (lt_failed(ctx)) fprintf(stderr, "error: %s\n", lt_error(ctx));
    free(f); free(b);
    lt_ctx_destroy(ctx);
}

/* --blocks: lt__att_mm (the float32 kernels' block products) on one 64 x 64 x 64 block in cache,
   A and B as the forward's S = Q·Kᵀ reads them, in each causal mode on the diagonal (off = 0);
   GFLOP/s of the multiply-adds the mode needs (those of masked products not counted), the best of
   9 batches of 2000 calls, on 1 thread; gemm: lt_sgemm's rate on 1 thread */
static void blocks(double gemm) {
    static const char *const names[5] = {"all (a block below the diagonal)", "NGE (the forward's Sᵀ on the diagonal)",
                                         "NLE (S, dP on the diagonal)", "KLE (P·V, dQ on the diagonal)",
                                         "KGE (dV, dK on the diagonal)"};
    static const int modes[5] = {LT__ATT_ALL, LT__ATT_NGE, LT__ATT_NLE, LT__ATT_KLE, LT__ATT_KGE};
    enum { N = 64 };
    static float A[N * N], Bm[N * N], Cm[N * N];
    int simd = lt__att_simd(), i, k, q;
    for (i = 0; i < N * N; i++) { A[i] = (float)(i % 7) * 0.01f; Bm[i] = (float)(i % 5) * 0.01f; Cm[i] = 0.0f; }
    for (i = 0; i < 5; i++) {
        double need = 0.0, best = 1e30;
        int r;
        for (r = 0; r < N; r++) {   /* per row: the columns (NLE, NGE) or the k steps (KLE, KGE) it needs, x N */
            int ge = modes[i] == LT__ATT_NGE || modes[i] == LT__ATT_KGE;
            need += modes[i] == LT__ATT_ALL ? (double)N * N : ge ? (double)(N - r) * N : (double)(r + 1) * N;
        }
        for (k = 0; k < 9; k++) {
            double t = lt__now();
            for (q = 0; q < 2000; q++)
                lt__att_mm(simd, modes[i], 0, N, N, N, 0.5f, A, N, 1, Bm, N, modes[i] == LT__ATT_KLE || modes[i] == LT__ATT_KGE, Cm, N);
            t = lt__now() - t;
            if (t < best) best = t;
        }
        printf("| %s | %.1f | %.0f%% |\n", names[i], 2.0 * need * 2000 / best * 1e-9,
               gemm > 0 ? 100.0 * 2.0 * need * 2000 / best * 1e-9 / gemm : 0.0);
    }
}

int main(int argc, char **argv) {
    static const int shapes[4][4] = {{8, 256, 256, 4}, {4, 256, 384, 6}, {4, 64, 768, 12}, {1, 1024, 256, 4}};
    int one[4] = {0, 0, 0, 0}, reps = 9, threads = 0, i, t, bf16 = 0, blk = 0;
    double gemm[3] = {0, 0, 0};
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc &&
            sscanf(argv[i + 1], "%d,%d,%d,%d", &one[0], &one[1], &one[2], &one[3]) == 4) i++;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bf16")) bf16 = 1;
        else if (!strcmp(argv[i], "--cold")) cold_buf = (char *)malloc((size_t)64 << 20);
        else if (!strcmp(argv[i], "--blocks")) blk = 1;
        else {
            printf("usage: bench_attention [--shape B,T,C,H] [--reps N (9)] [--threads N] [--bf16] [--cold] [--blocks]\n");
            return argv[i][0] == '-' && argv[i][1] == 'h' ? 0 : 2;
        }
    }
    if (reps < 1) reps = 1;
    for (t = 1; t <= 2; t++) {
        if (threads && t != threads) continue;
        lt_set_threads(t);
        gemm[t] = sgemm_rate();
        printf("lt_sgemm 2048^3, %d thread%s: %.1f GFLOP/s\n", t, t > 1 ? "s" : "", gemm[t]);
    }
    printf("\n| shape | precision | threads | fwd ms | bwd ms | total ms | min fwd | min bwd | GFLOP/s | of lt_sgemm |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    for (t = 1; t <= 2; t++) {
        if (threads && t != threads) continue;
        if (one[0] > 0) run(one[0], one[1], one[2], one[3], t, reps, bf16 ? LT_BF16 : LT_F32, gemm[t]);
        else
            for (i = 0; i < 4; i++)
                run(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], t, reps, bf16 ? LT_BF16 : LT_F32, gemm[t]);
    }
    if (blk) {
        lt_set_threads(1);
        if (gemm[1] <= 0) gemm[1] = sgemm_rate();   /* (--threads 2 measured only the other) */
        printf("\n| float32 block product, 64 x 64 x 64 in cache, 1 thread | GFLOP/s | of lt_sgemm (1 thread) |\n"
               "|---|---|---|\n");
        blocks(gemm[1]);
    }
    return 0;
}

/* cc -O2 -march=native -fopenmp -I. bench/attention.c -o build/bench_attention -lm

   bench_attention: lt_attention alone, forward and backward kernel milliseconds (the op's
   profiling counters, lt_set_profiling), median (and min: the machine may be shared) of --reps runs, at the shapes of the bench configs:
     char-small B=8 T=256 C=256 H=4, gpt-mini B=4 T=256 C=384 H=6, gpt2 B=4 T=64 C=768 H=12,
   plus T = 1024 (B=1, C=256, H=4); 1 and 2 threads.  `make bench-attention` runs it.
     --shape B,T,C,H (only this one)  --reps N (9)  --threads N (only this count)  --bf16
     --cold (64 MiB written before each kernel: the inputs come from memory, as in a step) */
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

static void run(int B, int T, int C, int H, int threads, int reps, lt_dtype prec) {
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
    printf("| B=%d T=%d C=%d H=%d | %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n", B, T, C, H,
           lt_precision_name(prec), threads, f[reps / 2], b[reps / 2], f[reps / 2] + b[reps / 2], f[0], b[0]);
    fflush(stdout);
    if (lt_failed(ctx)) fprintf(stderr, "error: %s\n", lt_error(ctx));
    free(f); free(b);
    lt_ctx_destroy(ctx);
}

int main(int argc, char **argv) {
    static const int shapes[4][4] = {{8, 256, 256, 4}, {4, 256, 384, 6}, {4, 64, 768, 12}, {1, 1024, 256, 4}};
    int one[4] = {0, 0, 0, 0}, reps = 9, threads = 0, i, t, bf16 = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc &&
            sscanf(argv[i + 1], "%d,%d,%d,%d", &one[0], &one[1], &one[2], &one[3]) == 4) i++;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bf16")) bf16 = 1;
        else if (!strcmp(argv[i], "--cold")) cold_buf = (char *)malloc((size_t)64 << 20);
        else {
            printf("usage: bench_attention [--shape B,T,C,H] [--reps N (9)] [--threads N] [--bf16] [--cold]\n");
            return argv[i][0] == '-' && argv[i][1] == 'h' ? 0 : 2;
        }
    }
    if (reps < 1) reps = 1;
    printf("| shape | precision | threads | fwd ms | bwd ms | total ms | min fwd | min bwd |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (t = 1; t <= 2; t++) {
        if (threads && t != threads) continue;
        if (one[0] > 0) run(one[0], one[1], one[2], one[3], t, reps, bf16 ? LT_BF16 : LT_F32);
        else
            for (i = 0; i < 4; i++) run(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], t, reps, bf16 ? LT_BF16 : LT_F32);
    }
    return 0;
}

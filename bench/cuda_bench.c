/* nvcc -x cu -O2 -arch=sm_90 -DLTRAIN_CUDA -I. bench/cuda_bench.c -o build/bench_cuda -lcublas   (bench/cuda_check.sh)

   bench_cuda: the card's measured matmul rate (cuBLAS, 8192³: bf16 and TF32 with float32
   accumulation), then GPT-2 124M training steps on LT_CUDA (B=16, T=1024 by default): ms per step,
   tokens/s and MFU = model FLOPs / time / the measured rate of the same precision.  Model FLOPs per
   token: 6·N (N = parameters, the tied head counted once) + 6·L·T·C for causal attention's
   products (QKᵀ and PV, forward and backward, half of T² visible).  One table line per mode:
     | mode | ms/step | tokens/s | model TFLOP/s | matmul TFLOP/s | MFU |
   Usage: bench_cuda [--steps N (5)] [--batch B (16)] [--seq T (1024)] [--modes fp32,tf32,bf16,bf16-graph] */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* TFLOP/s of one 8192³ GEMM in bf16 (or TF32), median of 10 */
static double matmul_rate(int bf16) {
    const int n = 8192;
    void *a, *b, *c;
    cublasHandle_t h;
    float one = 1.0f, zero = 0.0f, best = 0;
    double t[10], tmp;
    int k, i, j;
    cudaEvent_t e0, e1;
    size_t es = bf16 ? 2 : 4;
    if (cudaMalloc(&a, (size_t)n * n * es) != cudaSuccess || cudaMalloc(&b, (size_t)n * n * es) != cudaSuccess ||
        cudaMalloc(&c, (size_t)n * n * 4) != cudaSuccess)
        return 0;
    cudaMemset(a, 0, (size_t)n * n * es);
    cudaMemset(b, 0, (size_t)n * n * es);
    cublasCreate(&h);
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (k = -2; k < 10; k++) {
        float ms;
        cudaEventRecord(e0, 0);
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, bf16 ? CUDA_R_16BF : CUDA_R_32F, n, b,
                     bf16 ? CUDA_R_16BF : CUDA_R_32F, n, &zero, c, CUDA_R_32F, n,
                     bf16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        if (k >= 0) t[k] = ms;
    }
    for (i = 0; i < 10; i++)
        for (j = i + 1; j < 10; j++)
            if (t[j] < t[i]) { tmp = t[i]; t[i] = t[j]; t[j] = tmp; }
    best = (float)(2.0 * n * (double)n * n / (t[5] * 1e-3) / 1e12);
    cublasDestroy(h);
    cudaFree(a); cudaFree(b); cudaFree(c);
    return best;
}

typedef struct { lt_gpt *g; int32_t *in, *tg; int B, T; } step_arg;
static lt_tensor *step_fn(lt_ctx *ctx, void *u) {
    step_arg *s = (step_arg *)u;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, s->T);
}

/* ms per training step (median of `steps` after 2 warm-up steps); 0 on error (printed) */
static double time_mode(const char *mode, int B, int T, int steps, double *nparams, float *last_loss) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt_config c;
    lt_gpt *g;
    lt_optim *opt;
    lt_plan *plan = NULL;
    int32_t *in, *tg;
    step_arg s;
    double t[64], tmp, ms;
    int k, i, j, graph = strstr(mode, "graph") != NULL;
    if (lt_set_device(ctx, LT_CUDA) != LT_OK) { printf("%s: %s\n", mode, lt_error(ctx)); return 0; }
    lt_set_tf32(ctx, strstr(mode, "tf32") != NULL);
    memset(&c, 0, sizeof c);
    c.vocab = 50257; c.ctx = 1024; c.layers = 12; c.heads = 12; c.channels = 768;
    g = lt_gpt_create(ctx, &c);
    lt_set_precision(ctx, strstr(mode, "bf16") ? LT_BF16 : LT_F32);
    opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    *nparams = (double)lt_gpt_num_params(g);
    in = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    tg = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    for (i = 0; i < B * T; i++) { in[i] = (i * 7919) % 50257; tg[i] = (i * 104729 + 1) % 50257; }
    s.g = g; s.in = in; s.tg = tg; s.B = B; s.T = T;
    if (steps > 62) steps = 62;
    for (k = -2; k < steps && !lt_failed(ctx); k++) {
        double t0;
        float loss = 0;
        lt_device_synchronize(ctx);
        t0 = now_s();
        lt_zero_grad(ctx);
        if (graph) {
            if (!plan) plan = lt_compile(ctx, step_fn, &s);
            if (plan) lt_plan_run(plan, &loss);
        } else {
            lt_tensor *l = step_fn(ctx, &s);
            lt_backward(ctx, l);
            loss = lt_item(l);
        }
        lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
        lt_optim_step(opt, 3e-4);
        lt_device_synchronize(ctx);
        if (k >= 0) t[k] = (now_s() - t0) * 1e3;
        *last_loss = loss;
    }
    if (lt_failed(ctx)) { printf("%s: %s\n", mode, lt_error(ctx)); ms = 0; }
    else {
        for (i = 0; i < steps; i++)
            for (j = i + 1; j < steps; j++)
                if (t[j] < t[i]) { tmp = t[i]; t[i] = t[j]; t[j] = tmp; }
        ms = t[steps / 2];
        if (graph && plan) printf("%s: %s\n", mode, lt_plan_note(plan));
        printf("%s: device arena %.2f GiB\n", mode, (double)lt_device_arena_bytes(ctx) / 1073741824.0);
    }
    lt_plan_destroy(plan);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    free(in); free(tg);
    return ms;
}

int main(int argc, char **argv) {
    int steps = 5, B = 16, T = 1024, i;
    const char *modes = "tf32,bf16,bf16-graph";
    char buf[256], *m;
    double rate_bf16, rate_tf32;
    lt_ctx *probe = lt_ctx_create(1);
    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch")) B = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seq")) T = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--modes")) modes = argv[i + 1];
    }
    if (lt_set_device(probe, LT_CUDA) != LT_OK) { printf("bench_cuda: %s\n", lt_error(probe)); return 1; }
    printf("device: %s\n", lt_device_describe(probe));
    lt_ctx_destroy(probe);
    rate_bf16 = matmul_rate(1);
    rate_tf32 = matmul_rate(0);
    printf("measured cuBLAS 8192^3: bf16 %.1f TFLOP/s, tf32 %.1f TFLOP/s\n", rate_bf16, rate_tf32);
    printf("| mode | B x T | ms/step | tokens/s | model TFLOP/s | matmul TFLOP/s | MFU | loss |\n|---|---|---|---|---|---|---|---|\n");
    snprintf(buf, sizeof buf, "%s", modes);
    for (m = strtok(buf, ","); m; m = strtok(NULL, ",")) {
        double np = 0, ms, flops, rate = strstr(m, "bf16") ? rate_bf16 : rate_tf32;
        float loss = 0;
        ms = time_mode(m, B, T, steps, &np, &loss);
        if (ms <= 0) { printf("| %s | %dx%d | failed | | | | | |\n", m, B, T); continue; }
        flops = (6.0 * np + 6.0 * 12 * (double)T * 768) * (double)B * T;
        printf("| %s | %dx%d | %.1f | %.0f | %.1f | %.1f | %.1f%% | %.3f |\n", m, B, T, ms, B * T / (ms * 1e-3),
               flops / (ms * 1e-3) / 1e12, rate, 100.0 * flops / (ms * 1e-3) / 1e12 / rate, loss);
        fflush(stdout);
    }
    return 0;
}

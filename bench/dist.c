/* mpicc -std=c99 -O2 -march=native -fopenmp -DLTRAIN_MPI -I. bench/dist.c -o build/bench_dist -lm
   OMP_NUM_THREADS=1 mpirun -np 2 build/bench_dist [steps] [reps]

   Data-parallel overhead per optimizer step: each rank trains its share (B rows) of the
   char-small and gpt-mini configurations for `steps` steps, timing forward+backward, the
   all-reduce (split into waiting for the other rank and the transfer) and AdamW; then `reps`
   all-reduces alone in each reduction mode (fp32, fp32 rank-ordered, bf16), min and median.
   Prints one table row per configuration and mode (rank 0). */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct { const char *name; int V, L, H, C, T, B; } bcfg;

static void bench(const bcfg *c, int steps, int reps) {
    static const lt_reduce_mode modes[3] = {LT_REDUCE_F32, LT_REDUCE_F32_ORDERED, LT_REDUCE_BF16};
    static const char *mname[3] = {"fp32", "fp32-ordered", "bf16"};
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt_config gc;
    lt_gpt *g;
    lt_optim *opt;
    lt_dist *d;
    int32_t *in, *tg;
    int64_t i, n = (int64_t)c->B * c->T;
    double fb = 0, ar = 0, wt = 0, op = 0, *t = (double *)malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    int s, m, rank = lt_dist_rank(), world = lt_dist_world();
    lt_rng r;
    memset(&gc, 0, sizeof gc);
    gc.vocab = c->V; gc.ctx = c->T; gc.layers = c->L; gc.heads = c->H; gc.channels = c->C;
    g = lt_gpt_create(ctx, &gc);
    opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    d = lt_dist_create(ctx, NULL);
    in = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
    tg = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
    lt_rng_seed(&r, 7 + (uint64_t)rank);
    for (i = 0; i < n; i++) { in[i] = (int32_t)(lt_rng_u64(&r) % 256); tg[i] = (int32_t)(lt_rng_u64(&r) % 256); }
    for (s = 0; s < steps && !lt_failed(ctx); s++) {
        double t0 = now_ms(), t1, t2;
        lt_zero_grad(ctx);
        lt_backward(ctx, lt_gpt_loss(g, in, tg, c->B, c->T));
        t1 = now_ms();
        lt_dist_allreduce_grads(d);
        t2 = now_ms();
        lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
        lt_optim_step(opt, 1e-4);
        if (s > 0 || steps == 1) {   /* the first step warms the arena up */
            fb += t1 - t0;
            ar += lt_dist_get_stats(d).last_ms;
            wt += lt_dist_get_stats(d).wait_ms;
            op += now_ms() - t2;
        }
        (void)t2;
    }
    if (steps > 1) { fb /= steps - 1; ar /= steps - 1; wt /= steps - 1; op /= steps - 1; }
    if (rank == 0)
        printf("%-10s | %d ranks | %6.2fM params, %6.1f MB fp32 grads | step: fwd+bwd %8.1f ms, all-reduce %7.1f ms "
               "(+%6.1f ms wait), clip+AdamW %6.1f ms\n", c->name, world, lt_gpt_num_params(g) / 1e6,
               lt_gpt_num_params(g) * 4e-6, fb, ar, wt, op);
    lt_dist_destroy(d);
    for (m = 0; m < 3 && reps > 0; m++) {
        lt_dist_config dc = lt_dist_defaults();
        lt_dist_stats st;
        dc.mode = modes[m];
        d = lt_dist_create(ctx, &dc);
        lt_dist_allreduce_grads(d);   /* buffers */
        for (s = 0; s < reps; s++) {
            lt_dist_allreduce_grads(d);
            t[s] = lt_dist_get_stats(d).last_ms;
        }
        st = lt_dist_get_stats(d);
        qsort(t, (size_t)reps, sizeof(double), cmp_d);
        if (rank == 0)
            printf("%-10s | %-12s | %d buckets | %7.1f MB sent per rank | all-reduce min %7.2f ms, median %7.2f ms "
                   "(%5.2f GB/s per rank)\n", c->name, mname[m], st.buckets, st.wire_bytes / 1e6, t[0], t[reps / 2],
                   st.wire_bytes / 1e6 / t[0]);
        lt_dist_destroy(d);
    }
    if (lt_failed(ctx) && rank == 0) printf("error: %s\n", lt_error(ctx));
    fflush(stdout);
    free(t); free(in); free(tg);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

int main(int argc, char **argv) {
    static const bcfg cfgs[2] = {{"char-small", 256, 4, 4, 256, 256, 8}, {"gpt-mini", 50304, 6, 6, 384, 256, 4}};
    int steps, reps, k;
    lt_dist_init(&argc, &argv);
    steps = argc > 1 ? atoi(argv[1]) : 3;
    reps = argc > 2 ? atoi(argv[2]) : 10;
    for (k = 0; k < 2; k++) bench(&cfgs[k], steps, reps);
    lt_dist_finalize();
    return 0;
}

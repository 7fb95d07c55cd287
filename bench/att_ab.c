/* att_ab.c - lt_attention of two versions of ltrain.h run turn about in one process, shape by
   shape, as bench/gemm_ab.c does for lt_sgemm (the machine's speed drifts by 10% from one minute
   to the next, so only side-by-side ratios are worth reading).  bench/att_ab.sh builds it (each
   header compiled on its own with bench/att_ab_side.h, behind att_A / att_B) and runs it:
       bench/att_ab.sh OLD.h NEW.h ROUNDS THREADS [--cold] B,T,C,H ...
   Per round and shape: 5 calls of A, then 5 of B (the order swapped every other round), the least
   kernel time of each batch counted.  Prints per shape the median forward and backward ms of
   each and the median of the per-round ratios A/B of their sums (> 1: B is faster), with its
   95% confidence interval (median_ci, ab_median.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void att_A(int threads, int B, int T, int C, int H, const float *qkv, const float *r, int calls, void (*cold)(void), double *fwd_ms,
           double *bwd_ms);
void att_B(int threads, int B, int T, int C, int H, const float *qkv, const float *r, int calls, void (*cold)(void), double *fwd_ms,
           double *bwd_ms);

static char *cold_buf;
static void cold(void) {
    static unsigned char v;
    memset(cold_buf, ++v, (size_t)64 << 20);
}
#include "ab_median.h"

int main(int argc, char **argv) {
    int rounds, threads, a, r, k;
    if (argc < 4) {
        fprintf(stderr, "usage: att_ab ROUNDS THREADS [--cold] B,T,C,H ...\n");
        return 2;
    }
    rounds = atoi(argv[1]);
    threads = atoi(argv[2]);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    printf("%-16s %7s %9s %9s %9s %9s %8s  %s\n", "B,T,C,H", "threads", "A fwd ms", "A bwd ms", "B fwd ms", "B bwd ms",
           "A/B", "[95% interval of A/B]");
    for (a = 3; a < argc; a++) {
        int B, T, C, H;
        size_t n;
        float *qkv, *rr;
        double *v[5], lo, hi;
        if (!strcmp(argv[a], "--cold")) {
            if (!cold_buf) cold_buf = malloc((size_t)64 << 20);
            continue;
        }
        if (sscanf(argv[a], "%d,%d,%d,%d", &B, &T, &C, &H) != 4) {
            fprintf(stderr, "bad shape %s\n", argv[a]);
            return 2;
        }
        n = (size_t)B * (size_t)T * (size_t)C;
        qkv = malloc(3 * n * sizeof(float)); rr = malloc(n * sizeof(float));
        for (k = 0; k < 5; k++) v[k] = malloc(sizeof(double) * (size_t)rounds);
        if (!qkv || !rr || !v[4]) { fprintf(stderr, "out of memory\n"); return 1; }
        for (k = 0; k < (int)(3 * n); k++) qkv[k] = (float)((k * 7919 % 1000) - 500) / 250.0f;
        for (k = 0; k < (int)n; k++) rr[k] = (float)((k * 104729 % 1000) - 500) / 500.0f;
        for (r = 0; r < rounds; r++) {
            double fa, ba, fb, bb;
            if (r % 2 == 0) {
                att_A(threads, B, T, C, H, qkv, rr, 5, cold_buf ? cold : NULL, &fa, &ba);
                att_B(threads, B, T, C, H, qkv, rr, 5, cold_buf ? cold : NULL, &fb, &bb);
            } else {
                att_B(threads, B, T, C, H, qkv, rr, 5, cold_buf ? cold : NULL, &fb, &bb);
                att_A(threads, B, T, C, H, qkv, rr, 5, cold_buf ? cold : NULL, &fa, &ba);
            }
            v[0][r] = fa; v[1][r] = ba; v[2][r] = fb; v[3][r] = bb; v[4][r] = (fa + ba) / (fb + bb);
        }
        median_ci(v[4], rounds, &lo, &hi);
        printf("%-16s %7d %9.2f %9.2f %9.2f %9.2f %8.3f  [%.3f, %.3f]%s\n", argv[a], threads, median(v[0], rounds),
               median(v[1], rounds), median(v[2], rounds), median(v[3], rounds), median(v[4], rounds), lo, hi,
               cold_buf ? " (cold)" : "");
        fflush(stdout);
        free(qkv); free(rr);
        for (k = 0; k < 5; k++) free(v[k]);
    }
    return 0;
}

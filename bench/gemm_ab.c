/* gemm_ab.c - lt_sgemm of two versions of ltrain.h called turn about in one process, shape by
   shape: the fair way to compare two GEMMs on a machine whose speed drifts by 10% from one
   minute to the next.  bench/gemm_ab.sh builds it (each header compiled on its own, with
   LTRAIN_DEF static, behind gemm_A / gemm_B) and runs it:
       bench/gemm_ab.sh OLD.h NEW.h ROUNDS THREADS M,N,K,ta,tb [M,N,K,ta,tb ...]
   Per round and shape: a batch of calls of A, then of B (the order swapped every other round),
   each batch at least 3 calls and 0.15 s, the best call of each batch counted.  Prints per shape
   the median GFLOP/s of each and the median of the per-round ratios B/A (> 1: B is faster).
   The matrices lie on 2 MiB pages where Linux gives them (madvise, as the library's buffers). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void gemm_A(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
            int64_t ldb, float *C, int64_t ldc);
void gemm_B(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
            int64_t ldb, float *C, int64_t ldc);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static float *matrix(int64_t n) {
    size_t bytes = ((size_t)n * sizeof(float) + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
    float *p = NULL;
    int64_t i;
    if (posix_memalign((void **)&p, 2u << 20, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    for (i = 0; i < n; i++) p[i] = (float)((i * 7919 % 1000) - 500) / 1000.0f;
    return p;
}
#include "ab_median.h"
/* the best call's seconds in a batch of at least 3 calls and 0.15 s */
static double batch(int which, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, const float *B,
                    float *C) {
    int64_t lda = ta ? M : K, ldb = tb ? K : N;
    double best = 1e30, t0 = now();
    int calls = 0;
    while (calls < 3 || now() - t0 < 0.15) {
        double s = now();
        if (which == 0) gemm_A(ta, tb, M, N, K, A, lda, B, ldb, C, N);
        else gemm_B(ta, tb, M, N, K, A, lda, B, ldb, C, N);
        s = now() - s;
        if (s < best) best = s;
        calls++;
    }
    return best;
}

int main(int argc, char **argv) {
    int rounds, threads, s, r;
    if (argc < 4) {
        fprintf(stderr, "usage: gemm_ab ROUNDS THREADS M,N,K,ta,tb ...\n");
        return 2;
    }
    rounds = atoi(argv[1]);
    threads = atoi(argv[2]);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    printf("%-22s %7s %8s %8s %8s  %s\n", "M x N x K ta tb", "threads", "A GF/s", "B GF/s", "B/A", "[95% interval of B/A]");
    for (s = 3; s < argc; s++) {
        long long m, n, k;
        int ta, tb;
        float *A, *B, *C;
        double *ga, *gb, *q, fl, lo, hi;
        if (sscanf(argv[s], "%lld,%lld,%lld,%d,%d", &m, &n, &k, &ta, &tb) != 5) {
            fprintf(stderr, "bad shape %s\n", argv[s]);
            return 2;
        }
        A = matrix(m * k); B = matrix(k * n); C = matrix(m * n);
        ga = malloc(sizeof(double) * (size_t)rounds); gb = malloc(sizeof(double) * (size_t)rounds);
        q = malloc(sizeof(double) * (size_t)rounds);
        if (!A || !B || !C || !ga || !gb || !q) { fprintf(stderr, "out of memory\n"); return 1; }
        fl = 2.0 * (double)m * (double)n * (double)k;
        batch(0, ta, tb, m, n, k, A, B, C); batch(1, ta, tb, m, n, k, A, B, C);   /* warm up */
        for (r = 0; r < rounds; r++) {
            double a, b;
            if (r % 2 == 0) { a = batch(0, ta, tb, m, n, k, A, B, C); b = batch(1, ta, tb, m, n, k, A, B, C); }
            else { b = batch(1, ta, tb, m, n, k, A, B, C); a = batch(0, ta, tb, m, n, k, A, B, C); }
            ga[r] = fl / a * 1e-9; gb[r] = fl / b * 1e-9; q[r] = a / b;
        }
        median_ci(q, rounds, &lo, &hi);
        printf("%-22s %7d %8.1f %8.1f %8.3f  [%.3f, %.3f]\n", argv[s], threads, median(ga, rounds), median(gb, rounds),
               median(q, rounds), lo, hi);
        fflush(stdout);
        free(A); free(B); free(C); free(ga); free(gb); free(q);
    }
    return 0;
}

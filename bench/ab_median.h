/* The median of n doubles (sorted in place): the per-round figures of bench/gemm_ab.c,
   bench/att_ab.c and bench/head_ab.c. */
#include <stdlib.h>
static int ab_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, ab_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

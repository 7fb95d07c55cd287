/* The median of n doubles (sorted in place): the per-round figures of bench/gemm_ab.c,
   bench/att_ab.c and bench/head_ab.c; and how far it can be trusted on a noisy machine.
   median_ci: a 95% confidence interval of the median ratio from the order statistics alone (the
   rounds taken as independent, no assumption on how they scatter): with n rounds, the k-th
   smallest and the k-th largest, k the largest count with P(Binomial(n, 1/2) < k) <= 2.5%.  Under
   6 rounds no k qualifies and the interval is the whole range.  A ratio whose interval holds 1 is
   a change this run could not tell from noise. */
#include <stdlib.h>
static int ab_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, ab_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static void median_ci(double *v, int n, double *lo, double *hi) {
    double p = 1.0, tail = 0.0, c = 1.0;   /* P(B = i) = C(n, i) / 2^n, summed from i = 0 */
    int i, k = 0;
    qsort(v, (size_t)n, sizeof *v, ab_cmp);
    for (i = 0; i < n; i++) p *= 0.5;
    for (i = 0; i < n / 2; i++) {
        tail += c * p;                     /* P(B <= i) */
        if (tail > 0.025) break;
        k = i + 1;                         /* P(B < k) <= 2.5% */
        c = c * (double)(n - i) / (double)(i + 1);
    }
    if (k < 1) k = 1;
    *lo = v[k - 1];
    *hi = v[n - k];
}

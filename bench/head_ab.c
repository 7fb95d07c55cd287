/* head_ab.c - the GPT head and loss of two versions of ltrain.h run turn about in one process, as
   bench/att_ab.c does for attention.  bench/head_ab.sh builds it (each header compiled on its own
   with bench/head_ab_side.h, behind head_A / head_B) and runs it:
       bench/head_ab.sh OLD.h NEW.h ROUNDS fp32|bf16|fp16|mixed R,C,V [--cpu]
   One call: x (R, C) and W (V, C) parameters, the loss as lt_gpt_loss makes it at 16 bits (the
   fused linear_ce16), or at fp32 as lt_gpt_loss makes it (linear_ce_exp; lt_linear +
   lt_cross_entropy from a header before 2026-12-07, which lacks that op), then lt_backward; forward and
   backward timed apart.  "mixed": A runs fp32 and B bf16, both from the NEW header (bf16 against
   fp32 on this CPU).  Per round one call of each, the order swapped every other round; prints the
   median ms of each and the medians of the per-round ratios A/B (> 1: B is faster).  --cpu: the
   process's CPU time instead of the wall clock (at one thread: the work done, which the other
   jobs on a shared machine disturb less). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void head_A(int prec, int cpu, int R, int C, int V, double *fwd, double *bwd, float *loss);
void head_B(int prec, int cpu, int R, int C, int V, double *fwd, double *bwd, float *loss);

#include "ab_median.h"

int main(int argc, char **argv) {
    enum { MAXR = 99 };
    double fa[MAXR], fb[MAXR], ba[MAXR], bb[MAXR], rf[MAXR], rb[MAXR], f, b, lf0, lf1, lb0, lb1;
    float la = 0, lb = 0;
    int rounds, pa, pb, R, C, V, cpu = argc > 4 && !strcmp(argv[4], "--cpu"), r;
    if (argc < 4 || sscanf(argv[3], "%d,%d,%d", &R, &C, &V) != 3) {
        fprintf(stderr, "usage: head_ab ROUNDS PREC(0 fp32, 1 bf16, 2 fp16, 3 mixed) R,C,V [--cpu]\n");
        return 2;
    }
    rounds = atoi(argv[1]);
    if (rounds < 1 || rounds > MAXR) rounds = rounds < 1 ? 1 : MAXR;
    pa = atoi(argv[2]) == 3 ? 0 : atoi(argv[2]);
    pb = atoi(argv[2]) == 3 ? 1 : atoi(argv[2]);
    head_A(pa, cpu, R, C, V, &f, &b, &la);   /* warm-up: the parameters, the arena, the pages */
    head_B(pb, cpu, R, C, V, &f, &b, &lb);
    for (r = 0; r < rounds; r++) {
        if (r & 1) {
            head_B(pb, cpu, R, C, V, &fb[r], &bb[r], &lb);
            head_A(pa, cpu, R, C, V, &fa[r], &ba[r], &la);
        } else {
            head_A(pa, cpu, R, C, V, &fa[r], &ba[r], &la);
            head_B(pb, cpu, R, C, V, &fb[r], &bb[r], &lb);
        }
        rf[r] = fa[r] / fb[r];
        rb[r] = ba[r] / bb[r];
    }
    median_ci(rf, rounds, &lf0, &lf1);
    median_ci(rb, rounds, &lb0, &lb1);
    printf("R,C,V %d,%d,%d, %d rounds, %s: forward A %.1f B %.1f ms, B's speed %.3f [%.3f, %.3f] | backward A %.1f "
           "B %.1f ms, B's speed %.3f [%.3f, %.3f] | loss A %.7g B %.7g\n",
           R, C, V, rounds, cpu ? "CPU time" : "wall", median(fa, rounds), median(fb, rounds), median(rf, rounds), lf0,
           lf1, median(ba, rounds), median(bb, rounds), median(rb, rounds), lb0, lb1, la, lb);
    return 0;
}

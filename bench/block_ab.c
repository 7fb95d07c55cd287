/* block_ab.c - one half of a GPT-2 block (attention or MLP, with its layernorm and residual) of
   two versions of ltrain.h run turn about in one process, as bench/head_ab.c does for the head.
   bench/block_ab.sh builds it (each header compiled on its own with bench/block_ab_side.h, behind
   block_A / block_B) and runs it:
       bench/block_ab.sh OLD.h NEW.h ROUNDS fp32|bf16|fp16|mixed attn|mlp B,T,C,H [--cpu]
   "mixed": A runs fp32 and B bf16, both from the NEW header (bf16 against fp32 on this CPU): a
   step's extra bf16 time found block by block rather than in a whole step's noise.  Per round
   one call of each, the order swapped every other round; prints the median ms of each and the
   medians of the per-round ratios A/B (> 1: B is faster) with 95% intervals (ab_median.h).
   --cpu: the process's CPU time instead of the wall clock. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void block_A(int prec, int cpu, int mlp, int B, int T, int C, int H, double *fwd, double *bwd, float *loss);
void block_B(int prec, int cpu, int mlp, int B, int T, int C, int H, double *fwd, double *bwd, float *loss);

#include "ab_median.h"

int main(int argc, char **argv) {
    enum { MAXR = 199 };
    double fa[MAXR], fb[MAXR], ba[MAXR], bb[MAXR], rf[MAXR], rb[MAXR], f, b, lf0, lf1, lb0, lb1;
    float la = 0, lb = 0;
    int rounds, pa, pb, B, T, C, H, mlp, cpu = argc > 5 && !strcmp(argv[5], "--cpu"), r;
    if (argc < 5 || sscanf(argv[4], "%d,%d,%d,%d", &B, &T, &C, &H) != 4 || (strcmp(argv[3], "attn") && strcmp(argv[3], "mlp"))) {
        fprintf(stderr, "usage: block_ab ROUNDS PREC(0 fp32, 1 bf16, 2 fp16, 3 mixed) attn|mlp B,T,C,H [--cpu]\n");
        return 2;
    }
    rounds = atoi(argv[1]);
    if (rounds < 1 || rounds > MAXR) rounds = rounds < 1 ? 1 : MAXR;
    mlp = !strcmp(argv[3], "mlp");
    pa = atoi(argv[2]) == 3 ? 0 : atoi(argv[2]);
    pb = atoi(argv[2]) == 3 ? 1 : atoi(argv[2]);
    for (r = 0; r < 2; r++) {   /* warm-up: the parameters, the arena, the pages */
        block_A(pa, cpu, mlp, B, T, C, H, &f, &b, &la);
        block_B(pb, cpu, mlp, B, T, C, H, &f, &b, &lb);
    }
    for (r = 0; r < rounds; r++) {
        if (r & 1) {
            block_B(pb, cpu, mlp, B, T, C, H, &fb[r], &bb[r], &lb);
            block_A(pa, cpu, mlp, B, T, C, H, &fa[r], &ba[r], &la);
        } else {
            block_A(pa, cpu, mlp, B, T, C, H, &fa[r], &ba[r], &la);
            block_B(pb, cpu, mlp, B, T, C, H, &fb[r], &bb[r], &lb);
        }
        rf[r] = fa[r] / fb[r];
        rb[r] = ba[r] / bb[r];
    }
    median_ci(rf, rounds, &lf0, &lf1);
    median_ci(rb, rounds, &lb0, &lb1);
    printf("%s B,T,C,H %d,%d,%d,%d, %d rounds, %s: forward A %.2f B %.2f ms, B's speed %.3f [%.3f, %.3f] | backward "
           "A %.2f B %.2f ms, B's speed %.3f [%.3f, %.3f] | loss A %.7g B %.7g\n",
           argv[3], B, T, C, H, rounds, cpu ? "CPU time" : "wall", median(fa, rounds), median(fb, rounds),
           median(rf, rounds), lf0, lf1, median(ba, rounds), median(bb, rounds), median(rb, rounds), lb0, lb1, la, lb);
    return 0;
}

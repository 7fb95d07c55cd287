/* cc -O2 -march=native -fopenmp -I. bench/pack.c -o build/bench_pack -lm   (make bench-pack)

   bench_pack: how fast the GEMM's packers convert a 16-bit product's operands (@@GEMM.f16,
   @@GEMM.pack_bf16), in nanoseconds per value, on one A block of a training step (96 rows of a
   256-value K piece, rows 384 apart, as gpt-mini's products pack them), best of 400 runs in CPU
   time, the data in L1/L2:
     widen rows      bf16 values widened into float32 rows (lt__gsrc_get: A as is)
     round rows      float32 values rounded to bf16 (lt__gsrc_get: a weight)
     transposed A    16-bit op(A) transposed into k-major slivers (lt__pack_a16t_avx2 / _avx512;
                     the AVX-512 kernels' 112 rows of 14), and in brackets float32 values as
                     lt__pack_a packs them
     bf16 pairs      float32 B rounded into the bf16 pair words of the vdpbf16ps kernel
                     (lt__pack_b_pairs_n; CPUs with AVX512_BF16 only)
     weight B, Bᵀ    a float32 weight as B (K x 96), as is and stored transposed, rounded into
                     the float32 panels of a bf16 product (lt__pack_b16), and in brackets copied
                     as a float32 product packs it (lt__pack_b); "ahead": as lt__pack_b16 packs
                     a panel whose rows were fetched ahead (lt__gsrc's warm)
     16-bit B        bf16 values as B, as is (K x 96), widened into the panels (a 16-bit copy of
                     dy in a product's dW)
   for each kernel set this CPU runs (AVX2, AVX-512).  --cold: the weight packers only, each call on
   a 256 x 1536 block of a 72 MiB weight not touched for the last 47 calls (from memory, as a
   training step's weights come: AdamW and the activations pass between their uses), the mean
   of 192 calls.  To compare two versions of the header, build this file against each
   (cc ... -I DIR with DIR/ltrain.h) and run them in turn. */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define R 96    /* rows of the A block (the AVX2 kernels' MC) */
#define K 256   /* its K piece (KC) */
#define LD 384  /* the stored rows' length (gpt-mini's C) */
#define RUNS 400

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

#ifdef LT__X86
#define NW 48   /* --cold: weight blocks of K x CLD floats */
#define CLD 1536
static void cold(void) {
    size_t blk = (size_t)K * CLD, i;
    float *w = (float *)malloc(blk * NW * sizeof(float)), *bp = (float *)malloc((K * 512 + 16) * sizeof(float)), *b;
    int isa;
    if (!w || !bp) { free(w); free(bp); return; }
    b = (float *)(((uintptr_t)bp + 63) & ~(uintptr_t)63);
    for (i = 0; i < blk * NW; i++) w[i] = (float)(i % 977) / 977.0f - 0.5f;
    for (isa = 1; isa <= 2; isa++) {
        double sum[6] = {0, 0, 0, 0, 0, 0};
        int run, v, nr = isa == 1 ? 16 : 32;
        if (!lt__gemm_supported(isa)) continue;
        for (run = 0; run < 4 * NW; run++)
            for (v = 0; v < 6; v++) {
                const float *W = w + (size_t)((run * 6 + v) % NW) * blk;
                lt__gsrc s = lt__gsrc_f32(W);
                double t0 = now_ns();
                s.p = LT_BF16;
                if (v == 0) lt__pack_b16(0, isa, &s, CLD, K, 512, nr, b);   /* K x 512 of a row-major weight */
                else if (v == 1) lt__pack_b(0, isa, W, CLD, K, 512, nr, b);
                else if (v == 2) lt__pack_b16(1, isa, &s, K, K, 512, nr, b);   /* 512 stored rows of K */
                else if (v == 3) lt__pack_b(1, isa, W, K, K, 512, nr, b);
                else {   /* the "ahead" packers (s.warm) from memory */
                    s.warm = 1;
                    if (v == 4) lt__pack_b16(0, isa, &s, CLD, K, 512, nr, b);
                    else lt__pack_b16(1, isa, &s, K, K, 512, nr, b);
                }
                sum[v] += now_ns() - t0;
            }
        printf("%-7s ns/value from memory: weight B %.3f (%.3f) ahead %.3f  weight Bᵀ %.3f (%.3f) ahead %.3f\n",
               isa == 1 ? "AVX2" : "AVX-512", sum[0] / (4 * NW) / (K * 512), sum[1] / (4 * NW) / (K * 512),
               sum[4] / (4 * NW) / (K * 512), sum[2] / (4 * NW) / (K * 512), sum[3] / (4 * NW) / (K * 512),
               sum[5] / (4 * NW) / (K * 512));
    }
    free(w);
    free(bp);
}
#endif

int main(int argc, char **argv) {
#ifdef LT__X86
    if (argc > 1 && !strcmp(argv[1], "--cold")) {
        cold();
        return 0;
    }
    static uint16_t h[LD * LD];
    static float f[LD * LD];
    float *raw = (float *)malloc((2 * (R + 16) * LT__KS + 16) * sizeof(float)), *ap;
    lt__gsrc s16, s32, s32w;
    int isa, i;
    if (!raw) return 1;
    ap = (float *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    for (i = 0; i < LD * LD; i++) {
        f[i] = (float)(i % 977) / 977.0f - 0.5f;
        h[i] = lt_f32_to_bf16(f[i]);
    }
    s16 = lt__gsrc_f32(NULL); s16.h = h; s16.p = LT_BF16;
    s32 = lt__gsrc_f32(f); s32.p = LT_BF16;
    s32w = s32; s32w.warm = 1;
    for (isa = 1; isa <= 2; isa++) {
        double best[12] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
        int mr = isa == 1 ? 6 : 14, ma = isa == 1 ? R : 112;   /* the kernels' MR and MC */
        int run, r, w, pairs = isa == 2 && lt__cpu_has(LT__CPU_AVX512BF16 | LT__CPU_AVX512BW | LT__CPU_AVX512VL);
        if (!lt__gemm_supported(isa)) continue;
        for (run = 0; run < RUNS; run++) {
            double t[13];
            int nr = isa == 1 ? 16 : 32;
            t[0] = now_ns();
            for (r = 0; r < R; r++) lt__gsrc_get(isa, &s16, (int64_t)r * LD, K, ap + r * LT__KS);
            t[1] = now_ns();
            for (r = 0; r < R; r++) lt__gsrc_get(isa, &s32, (int64_t)r * LD, K, ap + r * LT__KS);
            t[2] = now_ns();
            if (isa == 1) lt__pack_a16t_avx2(&s16, LD, R, K, ap);
            else lt__pack_a16t_avx512(&s16, LD, ma, K, mr, ap);
            t[3] = now_ns();
            if (pairs) lt__pack_b_pairs_n(&s32, LD, K, R, 32, ap);
            t[4] = now_ns();
            lt__pack_b16(0, isa, &s32, LD, K, R, nr, ap);
            t[5] = now_ns();
            lt__pack_b(0, isa, f, LD, K, R, nr, ap);
            t[6] = now_ns();
            lt__pack_b16(1, isa, &s32, LD, K, R, nr, ap);
            t[7] = now_ns();
            lt__pack_b(1, isa, f, LD, K, R, nr, ap);
            t[8] = now_ns();
            lt__pack_b16(0, isa, &s16, LD, K, R, nr, ap);
            t[9] = now_ns();
            lt__pack_a(1, isa, f, LD, ma, K, mr, ap);
            t[10] = now_ns();
            lt__pack_b16(1, isa, &s32w, LD, K, R, nr, ap);
            t[11] = now_ns();
            lt__pack_b16(0, isa, &s32w, LD, K, R, nr, ap);
            t[12] = now_ns();
            for (w = 0; w < 12; w++)
                if (t[w + 1] - t[w] < best[w]) best[w] = t[w + 1] - t[w];
        }
        printf("%-7s ns/value: widen rows %.3f  round rows %.3f  transposed A %.3f (%.3f)", isa == 1 ? "AVX2" : "AVX-512",
               best[0] / (R * K), best[1] / (R * K), best[2] / (ma * K), best[9] / (ma * K));
        if (pairs) printf("  bf16 pairs %.3f", best[3] / (R * K));
        printf("  weight B %.3f (%.3f) ahead %.3f  weight Bᵀ %.3f (%.3f) ahead %.3f  16-bit B %.3f\n", best[4] / (R * K),
               best[5] / (R * K), best[11] / (R * K), best[6] / (R * K), best[7] / (R * K), best[10] / (R * K),
               best[8] / (R * K));
    }
    free(raw);
#else
    (void)argc; (void)argv;
    printf("bench_pack: the packers measured here are x86-64's\n");
#endif
    return 0;
}

/* ==== @@GEMM  matrix multiply kernels (part of @@OPS) ========================================== */
/* Holds: lt_sgemm and its layers (packing, micro-kernels portable / AVX2 / AVX-512), 16-bit
   operands converted while packing, the kernel set picked once per process.
   Calls: @@HALF; @@OPS's 16-bit GELU block (the fused epilogue of gelu16). */
/* C (M,N) = alpha * op(A) (M,K) * op(B) (K,N) + beta * C, row-major; op(X) is X or Xᵀ.

   The layering of Goto & van de Geijn ("Anatomy of high-performance matrix multiplication",
   2008) as BLIS names it, with the two innermost loops swapped so the small A sliver stays in L1:
     for jc over N by NC:                 (one thread owns a range of rows or of columns of C)
       for pc over K by KC:               pack op(B)[pc.., jc..] into NR-wide slivers  (~L2)
         for ic over M by MC:             pack op(A)[ic.., pc..] into MR-tall slivers
           for ir over MC by MR:          this A sliver (MR x KC) stays in L1 ...
             for jr over NC by NR:        ... while B slivers stream from L2:
               micro-kernel: an MR x NR tile of C in registers, KC rank-1 updates, then
               C = alpha*tile + beta*C on the first KC block, C += alpha*tile after.
   Packing reads op(A) and op(B) whatever their transposes (no transposed copy is ever made),
   and pads partial slivers with zeros, so the micro-kernel sees one layout and full tiles (a
   partial tile is computed into a side buffer and merged).
   Kernels, chosen at run time from cpuid (the intrinsics compile only on x86 gcc/clang, inside
   functions marked with a target attribute, so the rest of the file needs no -m flags):
     avx512   14 x 32 tile: 28 zmm accumulators; B sliver rows are 2 zmm, A values broadcast
              (and 4 x 32, 8 x 32 short tiles for the last sliver's M mod 14 rows; streaming
              stores where C is larger than the caches, lt__gemm_stream_fit)
     bf16dp   the same tiles on bf16 pairs (AVX512_BF16 vdpbf16ps), for two bf16 operands only
     avx2      6 x 16 tile: 12 ymm accumulators (AVX2 + FMA)
     neon      8 x 12 tile: 24 q-register accumulators (AArch64, where it always runs; tested
               under qemu-aarch64 by tests/arm64.sh, not timed on an ARM machine)
     portable  4 x 16 tile in plain C: the reference, and the kernel everywhere else
   The environment variable LT_GEMM=portable|avx2|avx512|neon forces one (if the CPU has it);
   LT_GEMM16=convert keeps bf16 products off the bf16dp kernel (pairs: on it, where the CPU can);
   #define LTRAIN_NO_SIMD compiles only the portable one.
   Threads (OpenMP): C is cut into one block of rows (or of columns, when C is short and wide)
   per thread, and each thread runs the loops above on its block with its own packing buffers,
   on the stack: LT__GEMM_STACK bytes (about 690 KiB; 740 KiB with 16-bit operands) per thread
   and no malloc, so a thread that calls lt_sgemm needs a stack of 1 MiB or more (the main thread's and OpenMP's default 8 MiB
   are fine; musl's 128 KiB default for new threads is not).
   bench/gemm.c (make bench) times all four transpose cases against OpenBLAS's cblas_sgemm; the
   figures are in bench/results.md and bench/design.md. */

#ifdef LTRAIN_CBLAS
#include <cblas.h>
#endif


/* A micro-kernel: c (MR,NR) = alpha * a·b + beta * c (beta == 0: c is not read), where b is an
   NR-wide sliver (kc rows of NR values) and a an MR-tall sliver, stored one of two ways so that
   packing it is a plain copy whatever A's transpose: k-major (a[k*MR + r], from A stored
   transposed) or row-major with the fixed row stride LT__KS (a[r*LT__KS + k], from A as is). */
typedef void (*lt__ukernel)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                            float beta);
/* the same with a float32 bias row (NR floats) added to every row of the tile as it is stored:
   C = (alpha*tile + beta*C) + bias, the sums lt__gemm_epilogue's bias pass would make afterwards */
typedef void (*lt__ukernel_b)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                              float beta, const float *bias);

typedef struct {
    lt__ukernel fn_k, fn_r;   /* A sliver k-major / row-major */
    lt__ukernel sk[2], sr[2]; /* short tiles (NULL: none): the first rows of a sliver, k-major / row-major */
    lt__ukernel nk, nr_;      /* full tiles with streaming stores, beta 0 only (NULL: none), k-major / row-major */
    lt__ukernel nkr, nrr;     /* ... of the values rounded to bf16 (the 16-bit head's float32 logits) */
    lt__ukernel_b bk, br;     /* full tiles with a bias row added as they are stored (NULL: none), k- / row-major */
    lt__ukernel_b rk, rr;     /* ... and then rounded to bf16 (the 16-bit forward's epilogue) */
    int stream;               /* this call stores C's full tiles with nk / nr_ (lt__gemm_stream_fit) */
    int sh[2];                /* ... their heights, sh[0] < sh[1] < mr */
    int mr, nr;               /* register tile */
    int mc, kc, nc;           /* cache blocks: A block MC x KC, B panel KC x NC (multiples of MR, NR) */
    int isa;                  /* packing may use: 0 plain C, 1 AVX2, 2 AVX-512 */
    int dp;                   /* fn_k/fn_r take bf16 pair panels (AVX512_BF16, lt__gemm_dp) */
    int amx;                  /* ... and are the AMX tile kernel: A slivers row-major whatever ta */
    const char *name;
} lt__gemm_impl;

/* The kernels' KC is 256; a K of at most LT__KC_MAX (1.5 KC) may be one block instead, where C
   is streamed to memory (lt__gemm_stream_fit) */
#define LT__KC_MAX 384
#define LT__KS (LT__KC_MAX + 16)   /* row stride of a row-major A sliver (+16: rows on other L1 sets) */

/* ---- @@GEMM.kernels  portable kernel: the reference ------------------------------------------- */
#define LT__P_MR 4
#define LT__P_NR 16
static void lt__uk_portable(int64_t kc, const float *a, int64_t ak, int64_t ar, const float *b, float *c,
                            int64_t ldc, float alpha, float beta) {
    float acc[LT__P_MR][LT__P_NR];
    int64_t k;
    int i, j;
    memset(acc, 0, sizeof acc);
    for (k = 0; k < kc; k++, a += ak, b += LT__P_NR)
        for (i = 0; i < LT__P_MR; i++)
            for (j = 0; j < LT__P_NR; j++) acc[i][j] += a[i * ar] * b[j];
    for (i = 0; i < LT__P_MR; i++, c += ldc)
        for (j = 0; j < LT__P_NR; j++) c[j] = alpha * acc[i][j] + (beta == 0.0f ? 0.0f : beta * c[j]);
}
static void lt__uk_portable_k(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                              float beta) {
    lt__uk_portable(kc, a, LT__P_MR, 1, b, c, ldc, alpha, beta);
}
static void lt__uk_portable_r(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                              float beta) {
    lt__uk_portable(kc, a, 1, LT__KS, b, c, ldc, alpha, beta);
}

#ifdef LT__X86
/* ---- @@GEMM.avx512  AVX-512: 14 x 32 ---------------------------------------------------------- */
/* 28 accumulators + 2 B vectors + the broadcast A value fit in the 32 zmm registers; each k is
   2 loads + 14 broadcasts (folded into the FMAs) for 28 FMAs. */
#define LT__A5_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
/* Short tiles: the last sliver of A holds M mod 14 rows (4 of M = 256, 2 of 1024, 6 of 384); the
   kernels of 4 and 8 rows do those without the full tile's idle rows (a 14-row tile for 4 rows
   wastes 4% of M = 256's products). */
#define LT__A5_ROWS4(X) X(0) X(1) X(2) X(3)
#define LT__A5_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define LT__A5_ZERO(r) __m512 c##r##a = _mm512_setzero_ps(), c##r##b = _mm512_setzero_ps();
/* C's tile is read at the end (beta != 0), or only written (beta 0, where a store to a line that
   is not in the cache first fetches it all the same): asked for at the start, it arrives during
   the k loop instead of stalling the stores (a few % where C is much larger than the caches).  The
   float32 kernels ask for it two lines a step over their first k steps (row k's two lines at step
   k), not all 28 lines before the first step: 1-3% faster on products that add to C, 1-2% on a
   layer's forward product into a fresh C (bench/design.md).  The streaming kernels (FETCH 0) ask
   only when they read C: their stores bypass the cache.  LT__A5_ONE counts a kernel's rows. */
#define LT__A5_ONE(r) +1
#define LT__A5_PF(r) _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0); \
                     _mm_prefetch((const char *)(c + r * ldc + 16), _MM_HINT_T0);
#define LT__A5_FMA(r)                                                                              \
    c##r##a = _mm512_fmadd_ps(_mm512_set1_ps(LT__AT(r)), b0, c##r##a);                           \
    c##r##b = _mm512_fmadd_ps(_mm512_set1_ps(LT__AT(r)), b1, c##r##b);
#define LT__A5_ST0(r)                                                                              \
    _mm512_storeu_ps(c + r * ldc, _mm512_mul_ps(va, c##r##a));                                   \
    _mm512_storeu_ps(c + r * ldc + 16, _mm512_mul_ps(va, c##r##b));
#define LT__A5_ST1(r)                                                                              \
    _mm512_storeu_ps(c + r * ldc, _mm512_fmadd_ps(va, c##r##a, _mm512_loadu_ps(c + r * ldc)));       \
    _mm512_storeu_ps(c + r * ldc + 16, _mm512_fmadd_ps(va, c##r##b, _mm512_loadu_ps(c + r * ldc + 16)));
#define LT__A5_STB(r)                                                                              \
    _mm512_storeu_ps(c + r * ldc, _mm512_fmadd_ps(va, c##r##a, _mm512_mul_ps(vb, _mm512_loadu_ps(c + r * ldc)))); \
    _mm512_storeu_ps(c + r * ldc + 16,                                                           \
                     _mm512_fmadd_ps(va, c##r##b, _mm512_mul_ps(vb, _mm512_loadu_ps(c + r * ldc + 16))));
/* the 28 accumulators zeroed (the pair kernels, all but the streaming ones: C's tile asked for
   at once, read or only written, as above); at the end C = alpha*tile (beta 0), C += alpha*tile
   (beta 1) or C = alpha*tile + beta*C */
#define LT__A5_BEGIN(ROWS)                                                                         \
    ROWS(LT__A5_ZERO)                                                                              \
    ROWS(LT__A5_PF)
#define LT__A5_STORE(ROWS)                                                                         \
    va = _mm512_set1_ps(alpha);                                                                    \
    vb = _mm512_set1_ps(beta);                                                                     \
    if (beta == 0.0f) { ROWS(LT__A5_ST0) }                                                         \
    else if (beta == 1.0f) { ROWS(LT__A5_ST1) }                                                    \
    else { ROWS(LT__A5_STB) }
/* the same with the bias row (two vectors vz0, vz1, loaded once) added last, through OUT(x, z):
   LT__A5_PLUS, the float32 forward's bias (which otherwise costs a pass over each finished block
   of C, lt__gemm_epilogue), or LT__A5_PLUSR, bias added then rounded to bf16, the 16-bit forward's
   round16(C + round16(bias)) (the row comes rounded; -0.0, which adds nothing, where there is no
   bias) */
#define LT__A5_PLUS(x, z) _mm512_add_ps(x, z)
#define LT__A5_PLUSR(x, z) lt__bf16_round_f32(_mm512_castps_si512(_mm512_add_ps(x, z)))
#define LT__A5_SBX0(r, OUT)                                                                        \
    _mm512_storeu_ps(c + r * ldc, OUT(_mm512_mul_ps(va, c##r##a), vz0));                          \
    _mm512_storeu_ps(c + r * ldc + 16, OUT(_mm512_mul_ps(va, c##r##b), vz1));
#define LT__A5_SBX1(r, OUT)                                                                        \
    _mm512_storeu_ps(c + r * ldc, OUT(_mm512_fmadd_ps(va, c##r##a, _mm512_loadu_ps(c + r * ldc)), vz0)); \
    _mm512_storeu_ps(c + r * ldc + 16, OUT(_mm512_fmadd_ps(va, c##r##b, _mm512_loadu_ps(c + r * ldc + 16)), vz1));
#define LT__A5_SBXB(r, OUT)                                                                        \
    _mm512_storeu_ps(c + r * ldc,                                                                \
                     OUT(_mm512_fmadd_ps(va, c##r##a, _mm512_mul_ps(vb, _mm512_loadu_ps(c + r * ldc))), vz0)); \
    _mm512_storeu_ps(c + r * ldc + 16,                                                           \
                     OUT(_mm512_fmadd_ps(va, c##r##b, _mm512_mul_ps(vb, _mm512_loadu_ps(c + r * ldc + 16))), vz1));
#define LT__A5_SB0(r) LT__A5_SBX0(r, LT__A5_PLUS)
#define LT__A5_SB1(r) LT__A5_SBX1(r, LT__A5_PLUS)
#define LT__A5_SBB(r) LT__A5_SBXB(r, LT__A5_PLUS)
#define LT__A5_RB0(r) LT__A5_SBX0(r, LT__A5_PLUSR)
#define LT__A5_RB1(r) LT__A5_SBX1(r, LT__A5_PLUSR)
#define LT__A5_RBB(r) LT__A5_SBXB(r, LT__A5_PLUSR)
#define LT__A5_STORE_ROW(ROWS, X0, X1, XB)                                                         \
    {                                                                                              \
        __m512 vz0 = _mm512_loadu_ps(bias), vz1 = _mm512_loadu_ps(bias + 16);                      \
        va = _mm512_set1_ps(alpha);                                                                \
        vb = _mm512_set1_ps(beta);                                                                 \
        if (beta == 0.0f) { ROWS(X0) }                                                             \
        else if (beta == 1.0f) { ROWS(X1) }                                                        \
        else { ROWS(XB) }                                                                          \
    }
#define LT__A5_STORE_BIAS(ROWS) LT__A5_STORE_ROW(ROWS, LT__A5_SB0, LT__A5_SB1, LT__A5_SBB)
#define LT__A5_STORE_BF16(ROWS) LT__A5_STORE_ROW(ROWS, LT__A5_RB0, LT__A5_RB1, LT__A5_RBB)
/* C = alpha*tile with streaming stores (beta 0 only; c 64-byte aligned, ldc a multiple of 16):
   the lines go to memory without being read first and without taking cache room (when:
   lt__gemm_stream_fit) */
#define LT__A5_STN(r)                                                                              \
    _mm512_stream_ps(c + r * ldc, _mm512_mul_ps(va, c##r##a));                                   \
    _mm512_stream_ps(c + r * ldc + 16, _mm512_mul_ps(va, c##r##b));
#define LT__A5_STREAM(ROWS)                                                                        \
    va = _mm512_set1_ps(alpha);                                                                    \
    (void)vb; (void)beta;                                                                          \
    ROWS(LT__A5_STN)
/* ... and the same with each value rounded to bf16 first (lt__gemm_tiles' fe without a bias: the
   kr kernels' sums, whose -0.0 row adds nothing) */
#define LT__A5_STNR(r)                                                                             \
    _mm512_stream_ps(c + r * ldc, lt__bf16_round_f32(_mm512_castps_si512(_mm512_mul_ps(va, c##r##a)))); \
    _mm512_stream_ps(c + r * ldc + 16, lt__bf16_round_f32(_mm512_castps_si512(_mm512_mul_ps(va, c##r##b))));
#define LT__A5_STREAMR(ROWS)                                                                       \
    va = _mm512_set1_ps(alpha);                                                                    \
    (void)vb; (void)beta;                                                                          \
    ROWS(LT__A5_STNR)
/* XARG: more parameters (", const float *bias" for LT__A5_STORE_BIAS and _BF16), or nothing;
   FETCH: 1 asks for C's tile whatever beta, 0 only when the kernel reads C (the streaming stores) */
#define LT__A5_KERNEL(name, ASTEP, ROWS) LT__A5_KERNEL_S(name, ASTEP, ROWS, LT__A5_ZEROS, LT__A5_STORE, , 1)
#define LT__A5_KERNEL_S(name, ASTEP, ROWS, BEGIN, STORE, XARG, FETCH)                              \
    LT__TARGET("avx512f") static void name(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, \
                                       float alpha, float beta XARG) {                             \
        __m512 b0, b1, va, vb;                                                                     \
        int64_t k = 0;                                                                             \
        BEGIN(ROWS)                                                                                \
        if (FETCH || beta != 0.0f) {   /* the first steps, each asking for one row of C's tile */  \
            int64_t rows = 0 ROWS(LT__A5_ONE), r;                                                  \
            for (; k < rows && k < kc; k++, a += ASTEP, b += 32) {                                 \
                LT__A5_PF(k)                                                                       \
                b0 = _mm512_load_ps(b);                                                            \
                b1 = _mm512_load_ps(b + 16);                                                       \
                ROWS(LT__A5_FMA)                                                                   \
            }                                                                                      \
            for (r = k; r < rows; r++) { LT__A5_PF(r) }   /* kc shorter than the tile */           \
        }                                                                                          \
        LT__UNROLL4                                                                                \
        for (; k < kc; k++, a += ASTEP, b += 32) {                                                 \
            b0 = _mm512_load_ps(b);                                                                \
            b1 = _mm512_load_ps(b + 16);                                                           \
            ROWS(LT__A5_FMA)                                                                       \
        }                                                                                          \
        STORE(ROWS)                                                                                \
    }
#define LT__A5_ZEROS(ROWS) ROWS(LT__A5_ZERO)
#define LT__A5_BIAS_ARG , const float *bias
#define LT__AT(r) a[r]
LT__A5_KERNEL(lt__uk_avx512_k, 14, LT__A5_ROWS)    /* A sliver k-major: a[k*14 + r] */
LT__A5_KERNEL(lt__uk_avx512_k4, 14, LT__A5_ROWS4)
LT__A5_KERNEL(lt__uk_avx512_k8, 14, LT__A5_ROWS8)
LT__A5_KERNEL_S(lt__uk_avx512_kn, 14, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STREAM, , 0)
LT__A5_KERNEL_S(lt__uk_avx512_knr, 14, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STREAMR, , 0)
LT__A5_KERNEL_S(lt__uk_avx512_kb, 14, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STORE_BIAS, LT__A5_BIAS_ARG, 1)
LT__A5_KERNEL_S(lt__uk_avx512_kr, 14, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STORE_BF16, LT__A5_BIAS_ARG, 1)
#undef LT__AT
#define LT__AT(r) a[r * LT__KS]
LT__A5_KERNEL(lt__uk_avx512_r, 1, LT__A5_ROWS)     /* A sliver row-major: a[r*KS + k] */
LT__A5_KERNEL(lt__uk_avx512_r4, 1, LT__A5_ROWS4)
LT__A5_KERNEL(lt__uk_avx512_r8, 1, LT__A5_ROWS8)
LT__A5_KERNEL_S(lt__uk_avx512_rn, 1, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STREAM, , 0)
LT__A5_KERNEL_S(lt__uk_avx512_rnr, 1, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STREAMR, , 0)
LT__A5_KERNEL_S(lt__uk_avx512_rb, 1, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STORE_BIAS, LT__A5_BIAS_ARG, 1)
LT__A5_KERNEL_S(lt__uk_avx512_rr, 1, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STORE_BF16, LT__A5_BIAS_ARG, 1)
#undef LT__AT

/* ---- @@GEMM.bf16dp  AVX512_BF16: 14 x 32 on bf16 pairs (bf16 operands only) ------------------- */
/* When both operands are bf16 (lt__gemm16 in bf16 precision), vdpbf16ps does twice the work of
   an FMA per instruction at the same rate (bench/precision.md, design notes): each float32
   lane j of the accumulator gets
       c[j] += a[2m]·b[2m][j] + a[2m+1]·b[2m+1][j]
   so one instruction is two steps of k.  The panels hold bf16 pairs, packed straight from the
   operands (@@GEMM.pack_bf16): the 32-bit word (m, j) holds k = 2m in its low half and k = 2m+1
   in its high half, where a float32 panel holds word (k, j) — so the micro-kernel is the
   float32 one with k counting pairs.  An odd kc gets a zero partner.  The sums differ
   from the float32 kernel's only in order (pairs), and the instruction treats bf16 subnormals
   (|x| < 1.2e-38) as zero and flushes subnormal sums, as every kernel on it does. */
#define LT__AD_DP(r)                                                                               \
    av = _mm512_set1_epi32(LT__AT(r));                                                             \
    c##r##a = _mm512_dpbf16_ps(c##r##a, (__m512bh)av, (__m512bh)b0);                               \
    c##r##b = _mm512_dpbf16_ps(c##r##b, (__m512bh)av, (__m512bh)b1);
#define LT__AD_KERNEL(name, ASTEP, ROWS) LT__AD_KERNEL_S(name, ASTEP, ROWS, LT__A5_BEGIN, LT__A5_STORE, )
#define LT__AD_KERNEL_S(name, ASTEP, ROWS, BEGIN, STORE, XARG)                                     \
    LT__TARGET("avx512f,avx512bf16") static void name(int64_t kc, const float *af, const float *bf, float *c, int64_t ldc, \
                                     float alpha, float beta XARG) {                               \
        const int32_t *a = (const int32_t *)(const void *)af;                                      \
        const int32_t *b = (const int32_t *)(const void *)bf;                                      \
        __m512i b0, b1, av;                                                                        \
        __m512 va, vb;                                                                             \
        int64_t m, pairs = (kc + 1) / 2;                                                           \
        BEGIN(ROWS)                                                                                \
        LT__UNROLL4                                                                                \
        for (m = 0; m < pairs; m++, a += ASTEP, b += 32) {                                         \
            b0 = _mm512_load_si512((const void *)b);                                               \
            b1 = _mm512_load_si512((const void *)(b + 16));                                        \
            ROWS(LT__AD_DP)                                                                        \
        }                                                                                          \
        STORE(ROWS)                                                                                \
    }
#define LT__AT(r) a[r]
LT__AD_KERNEL(lt__uk_bf16dp_k, 14, LT__A5_ROWS)    /* A sliver k-major: pair word a[m*14 + r] */
LT__AD_KERNEL(lt__uk_bf16dp_k4, 14, LT__A5_ROWS4)
LT__AD_KERNEL(lt__uk_bf16dp_k8, 14, LT__A5_ROWS8)
LT__AD_KERNEL_S(lt__uk_bf16dp_kn, 14, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STREAM, )
LT__AD_KERNEL_S(lt__uk_bf16dp_kr, 14, LT__A5_ROWS, LT__A5_BEGIN, LT__A5_STORE_BF16, LT__A5_BIAS_ARG)
#undef LT__AT
#define LT__AT(r) a[r * LT__KS]
LT__AD_KERNEL(lt__uk_bf16dp_r, 1, LT__A5_ROWS)     /* A sliver row-major: pair word a[r*KS + m] */
LT__AD_KERNEL(lt__uk_bf16dp_r4, 1, LT__A5_ROWS4)
LT__AD_KERNEL(lt__uk_bf16dp_r8, 1, LT__A5_ROWS8)
LT__AD_KERNEL_S(lt__uk_bf16dp_rn, 1, LT__A5_ROWS, LT__A5_ZEROS, LT__A5_STREAM, )
LT__AD_KERNEL_S(lt__uk_bf16dp_rr, 1, LT__A5_ROWS, LT__A5_BEGIN, LT__A5_STORE_BF16, LT__A5_BIAS_ARG)
#undef LT__AT

#ifdef LT__AMX
/* ---- @@GEMM.amx  AMX: 32 x 32 from four 16 x 16 tiles (bf16 operands only) -------------------- */
/* Intel's AMX (Sapphire Rapids and later Xeons) adds eight tile registers of 16 rows x 64 bytes
   and one instruction, tdpbf16ps, that multiplies whole tiles: with T a 16 x 16 float32 tile, A
   16 rows of 32 bf16 (row i holds k = 0..31) and B 16 rows of 16 pair words (row m, word j holds
   k = 2m in its low half and 2m+1 in its high half: the bf16dp kernel's B panel),
       T[i][j] += a[i][2m]·b[2m][j] + a[i][2m+1]·b[2m+1][j]      for m = 0..15 in turn,
   16384 multiply-adds in one instruction (a float32 FMA does 16).  The kernel keeps a 32 x 32
   block of C in four tiles (T0 T1 / T2 T3), and per 32 steps of k loads two A tiles (rows 0-15,
   16-31 of the sliver) and two B tiles (columns 0-15, 16-31 of the sliver) and multiplies each
   A by each B.  The operands are the pair panels of the bf16dp kernel with the A sliver always
   row-major (pair word m of row r at r*LT__KS + m: a tile row is 16 words of one row), 32 rows
   tall.  The last kc/2 mod 16 pairs, fewer than a tile holds, are added with vdpbf16ps (every
   CPU with AMX-BF16 has AVX512_BF16) once the tiles are stored.  The sums run over k in the pair
   kernel's order and bf16 subnormals count as zero likewise, but the tile unit rounds its steps
   its own way: the results differ from the pair kernel's in the last bits (a few units in the
   last place of sums of 64-1000 products; tests/test_precision.c holds both to the same bound).
   The tile shapes are set per thread (ldtilecfg, lt__amx_begin) before its part of a product
   and released after it (lt__amx_end); Linux gives a process the tile registers only once it
   asks (arch_prctl ARCH_REQ_XCOMP_PERM, lt__amx_ready: at the first bf16 product, not before,
   since a process holding them gets larger signal frames). */
typedef struct {
    unsigned char palette, start_row, reserved[14];
    unsigned short colsb[16];   /* bytes per row of tile t */
    unsigned char rows[16];
} lt__amx_cfg;
/* May this process use the tiles?  The CPU has them and Linux said yes (asked once). */
static int lt__amx_ready(void) {
    static int known;   /* 0: not asked yet, 1: yes, -1: no */
    int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!v) {
        long ret = -1;
        if (lt__cpu_has(LT__CPU_AMX))   /* (lt__gemm_dp checked the AVX-512 parts the packing uses) */
            /* arch_prctl(ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18): system call 158 */
            __asm__ volatile("syscall" : "=a"(ret) : "0"(158L), "D"(0x1023L), "S"(18L) : "rcx", "r11", "memory");
        v = ret == 0 ? 1 : -1;
        __atomic_store_n(&known, v, __ATOMIC_RELAXED);
    }
    return v > 0;
}
/* tiles 0-7 as 16 rows of 64 bytes (palette 1), the rest of the 64 bytes zero.  A constant, not
   a local filled in before ldtilecfg: gcc 12 without -march flags for AVX-512 kept only the first
   17 bytes of such a local's memset (it does not see the instruction read all 64), and the
   leftover stack bytes made ldtilecfg fault (make test's no-march stage, tests/no_march.sh). */
static const lt__amx_cfg lt__amx_tiles = {1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};
LT__TARGET("amx-tile") static void lt__amx_begin(void) { _tile_loadconfig(&lt__amx_tiles); }
LT__TARGET("amx-tile") static void lt__amx_end(void) { _tile_release(); }
#define LT__AMX_ROW(X) X(0)
/* c (32 x 32) = alpha * a·b + beta * c (beta 0: c not read); a: a row-major pair sliver, b: a pair
   sliver 32 words wide (as lt__uk_bf16dp_r's), both bf16 pairs over kc steps of k.  STORE: how
   each row leaves, as the AVX-512 kernels' row 0 (LT__A5_STORE; LT__A5_STORE_BF16 for the 16-bit
   forward's round16(C + round16(bias)), with XARG the bias row's parameter) */
#define LT__AMX_KERNEL(name, STORE, XARG)                                                          \
    LT__TARGET("avx512f,avx512bf16,amx-tile,amx-bf16") static void name(int64_t kc, const float *af, const float *bf, \
                                                                       float *c, int64_t ldc, float alpha, float beta XARG) { \
        float t[32 * 32];                                                                          \
        const char *a = (const char *)af, *b = (const char *)bf;                                   \
        const int32_t *aw = (const int32_t *)(const void *)af, *bw = (const int32_t *)(const void *)bf; \
        int64_t pairs = (kc + 1) / 2, m0 = 0, m, r;                                                \
        __m512 va, vb;   /* (set by STORE) */                                                      \
        _tile_zero(0);                                                                             \
        _tile_zero(1);                                                                             \
        _tile_zero(2);                                                                             \
        _tile_zero(3);                                                                             \
        for (; m0 + 16 <= pairs; m0 += 16) {                                                       \
            _tile_loadd(4, a + m0 * 4, LT__KS * 4);                /* rows 0-15, pairs m0.. */      \
            _tile_loadd(5, a + (16 * LT__KS + m0) * 4, LT__KS * 4); /* rows 16-31 */                \
            _tile_loadd(6, b + m0 * 128, 128);                     /* pair rows m0.., columns 0-15 */ \
            _tile_loadd(7, b + m0 * 128 + 64, 128);                /* columns 16-31 */              \
            _tile_dpbf16ps(0, 4, 6);                                                               \
            _tile_dpbf16ps(1, 4, 7);                                                               \
            _tile_dpbf16ps(2, 5, 6);                                                               \
            _tile_dpbf16ps(3, 5, 7);                                                               \
        }                                                                                          \
        _tile_stored(0, t, 128);                                                                   \
        _tile_stored(1, t + 16, 128);                                                              \
        _tile_stored(2, t + 16 * 32, 128);                                                         \
        _tile_stored(3, t + 16 * 32 + 16, 128);                                                    \
        for (r = 0; r < 32; r++, c += ldc) {   /* row r as row 0 of the AVX-512 kernels' store */ \
            __m512 c0a = _mm512_loadu_ps(t + r * 32), c0b = _mm512_loadu_ps(t + r * 32 + 16);      \
            for (m = m0; m < pairs; m++) {   /* the last pairs, one at a time */                   \
                __m512i av = _mm512_set1_epi32(aw[r * LT__KS + m]);                                \
                c0a = _mm512_dpbf16_ps(c0a, (__m512bh)av, (__m512bh)_mm512_loadu_si512((const void *)(bw + m * 32))); \
                c0b = _mm512_dpbf16_ps(c0b, (__m512bh)av, (__m512bh)_mm512_loadu_si512((const void *)(bw + m * 32 + 16))); \
            }                                                                                      \
            STORE(LT__AMX_ROW)                                                                     \
        }                                                                                          \
    }
LT__AMX_KERNEL(lt__uk_amx, LT__A5_STORE, )
LT__AMX_KERNEL(lt__uk_amx_rb, LT__A5_STORE_BF16, LT__A5_BIAS_ARG)
#endif /* LT__AMX */

/* ---- @@GEMM.avx2  AVX2 + FMA: 6 x 16 ---------------------------------------------------------- */
/* 12 accumulators + 2 B vectors + 1 broadcast = 15 of the 16 ymm registers. */
#define LT__A2_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define LT__A2_ZERO(r) __m256 c##r##a = _mm256_setzero_ps(), c##r##b = _mm256_setzero_ps();
#define LT__A2_FMA(r)                                                                              \
    av = _mm256_broadcast_ss(&LT__AT(r));                                                          \
    c##r##a = _mm256_fmadd_ps(av, b0, c##r##a);                                                   \
    c##r##b = _mm256_fmadd_ps(av, b1, c##r##b);
#define LT__A2_ST0(r)                                                                              \
    _mm256_storeu_ps(c + r * ldc, _mm256_mul_ps(va, c##r##a));                                   \
    _mm256_storeu_ps(c + r * ldc + 8, _mm256_mul_ps(va, c##r##b));
#define LT__A2_ST1(r)                                                                              \
    _mm256_storeu_ps(c + r * ldc, _mm256_fmadd_ps(va, c##r##a, _mm256_loadu_ps(c + r * ldc)));       \
    _mm256_storeu_ps(c + r * ldc + 8, _mm256_fmadd_ps(va, c##r##b, _mm256_loadu_ps(c + r * ldc + 8)));
#define LT__A2_STB(r)                                                                              \
    _mm256_storeu_ps(c + r * ldc, _mm256_fmadd_ps(va, c##r##a, _mm256_mul_ps(vb, _mm256_loadu_ps(c + r * ldc)))); \
    _mm256_storeu_ps(c + r * ldc + 8,                                                            \
                     _mm256_fmadd_ps(va, c##r##b, _mm256_mul_ps(vb, _mm256_loadu_ps(c + r * ldc + 8))));
/* C's tile asked for before the k loop, whatever beta (its 16 floats may straddle two lines): a
   row's lines arrive during the loop, not at the stores (as the AVX-512 kernels, above) */
#define LT__A2_PF(r) _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0); \
                     _mm_prefetch((const char *)(c + r * ldc + 15), _MM_HINT_T0);
/* the same with the bias row added last, through OUT (LT__A5_STORE_ROW's AVX2 twin) */
#define LT__A2_PLUS(x, z) _mm256_add_ps(x, z)
#define LT__A2_PLUSR(x, z) lt__bf16_round8_f32(_mm256_castps_si256(_mm256_add_ps(x, z)))
#define LT__A2_SBX0(r, OUT)                                                                        \
    _mm256_storeu_ps(c + r * ldc, OUT(_mm256_mul_ps(va, c##r##a), vz0));                          \
    _mm256_storeu_ps(c + r * ldc + 8, OUT(_mm256_mul_ps(va, c##r##b), vz1));
#define LT__A2_SBX1(r, OUT)                                                                        \
    _mm256_storeu_ps(c + r * ldc, OUT(_mm256_fmadd_ps(va, c##r##a, _mm256_loadu_ps(c + r * ldc)), vz0)); \
    _mm256_storeu_ps(c + r * ldc + 8, OUT(_mm256_fmadd_ps(va, c##r##b, _mm256_loadu_ps(c + r * ldc + 8)), vz1));
#define LT__A2_SBXB(r, OUT)                                                                        \
    _mm256_storeu_ps(c + r * ldc,                                                                \
                     OUT(_mm256_fmadd_ps(va, c##r##a, _mm256_mul_ps(vb, _mm256_loadu_ps(c + r * ldc))), vz0)); \
    _mm256_storeu_ps(c + r * ldc + 8,                                                            \
                     OUT(_mm256_fmadd_ps(va, c##r##b, _mm256_mul_ps(vb, _mm256_loadu_ps(c + r * ldc + 8))), vz1));
#define LT__A2_SB0(r) LT__A2_SBX0(r, LT__A2_PLUS)
#define LT__A2_SB1(r) LT__A2_SBX1(r, LT__A2_PLUS)
#define LT__A2_SBB(r) LT__A2_SBXB(r, LT__A2_PLUS)
#define LT__A2_RB0(r) LT__A2_SBX0(r, LT__A2_PLUSR)
#define LT__A2_RB1(r) LT__A2_SBX1(r, LT__A2_PLUSR)
#define LT__A2_RBB(r) LT__A2_SBXB(r, LT__A2_PLUSR)
#define LT__A2_STORE(r0, r1, rb) /* the three ways of storing: beta 0, beta 1, any other beta */     \
    if (beta == 0.0f) { LT__A2_ROWS(r0) }                                                          \
    else if (beta == 1.0f) { LT__A2_ROWS(r1) }                                                     \
    else { LT__A2_ROWS(rb) }
#define LT__A2_PLAIN LT__A2_STORE(LT__A2_ST0, LT__A2_ST1, LT__A2_STB)
#define LT__A2_WITH_ROW(r0, r1, rb)                                                                \
    {                                                                                              \
        __m256 vz0 = _mm256_loadu_ps(bias), vz1 = _mm256_loadu_ps(bias + 8);                       \
        LT__A2_STORE(r0, r1, rb)                                                                   \
    }
#define LT__A2_BIASED LT__A2_WITH_ROW(LT__A2_SB0, LT__A2_SB1, LT__A2_SBB)
#define LT__A2_BF16 LT__A2_WITH_ROW(LT__A2_RB0, LT__A2_RB1, LT__A2_RBB)
/* C = alpha*tile with streaming stores, plain or each value rounded to bf16 (beta 0 only; c
   64-byte aligned, ldc a multiple of 16: LT__A5_STREAM's AVX2 twins, when: lt__gemm_stream_fit) */
#define LT__A2_STN(r)                                                                              \
    _mm256_stream_ps(c + r * ldc, _mm256_mul_ps(va, c##r##a));                                   \
    _mm256_stream_ps(c + r * ldc + 8, _mm256_mul_ps(va, c##r##b));
#define LT__A2_STNR(r)                                                                             \
    _mm256_stream_ps(c + r * ldc, lt__bf16_round8_f32(_mm256_castps_si256(_mm256_mul_ps(va, c##r##a)))); \
    _mm256_stream_ps(c + r * ldc + 8, lt__bf16_round8_f32(_mm256_castps_si256(_mm256_mul_ps(va, c##r##b))));
#define LT__A2_STREAM (void)vb; LT__A2_ROWS(LT__A2_STN)
#define LT__A2_STREAMR (void)vb; LT__A2_ROWS(LT__A2_STNR)
/* FETCH: 1 asks for C's tile before the k loop, 0 not (the streaming stores do not read it) */
#define LT__A2_KERNEL(name, ASTEP) LT__A2_KERNEL_S(name, ASTEP, LT__A2_PLAIN, , 1)
#define LT__A2_KERNEL_S(name, ASTEP, STORE, XARG, FETCH)                                           \
    LT__TARGET("avx2,fma") static void name(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,  \
                                     float alpha, float beta XARG) {                               \
        __m256 b0, b1, av, va, vb;                                                                 \
        int64_t k;                                                                                 \
        LT__A2_ROWS(LT__A2_ZERO)                                                                   \
        if (FETCH) { LT__A2_ROWS(LT__A2_PF) }                                                      \
        LT__UNROLL4                                                                                \
        for (k = 0; k < kc; k++, a += ASTEP, b += 16) {                                            \
            b0 = _mm256_load_ps(b);                                                                \
            b1 = _mm256_load_ps(b + 8);                                                            \
            LT__A2_ROWS(LT__A2_FMA)                                                                \
        }                                                                                          \
        va = _mm256_set1_ps(alpha);                                                                \
        vb = _mm256_set1_ps(beta);                                                                 \
        STORE                                                                                      \
    }
#define LT__AT(r) a[r]
LT__A2_KERNEL(lt__uk_avx2_k, 6)
LT__A2_KERNEL_S(lt__uk_avx2_kn, 6, LT__A2_STREAM, , 0)
LT__A2_KERNEL_S(lt__uk_avx2_knr, 6, LT__A2_STREAMR, , 0)
LT__A2_KERNEL_S(lt__uk_avx2_kb, 6, LT__A2_BIASED, LT__A5_BIAS_ARG, 1)
LT__A2_KERNEL_S(lt__uk_avx2_kr, 6, LT__A2_BF16, LT__A5_BIAS_ARG, 1)
#undef LT__AT
#define LT__AT(r) a[r * LT__KS]
LT__A2_KERNEL(lt__uk_avx2_r, 1)
LT__A2_KERNEL_S(lt__uk_avx2_rn, 1, LT__A2_STREAM, , 0)
LT__A2_KERNEL_S(lt__uk_avx2_rnr, 1, LT__A2_STREAMR, , 0)
LT__A2_KERNEL_S(lt__uk_avx2_rb, 1, LT__A2_BIASED, LT__A5_BIAS_ARG, 1)
LT__A2_KERNEL_S(lt__uk_avx2_rr, 1, LT__A2_BF16, LT__A5_BIAS_ARG, 1)
#undef LT__AT

/* n runs of h floats, s[i*lds + 0..h) -> d[i*ldd + 0..ldd), zero-filled past h (h <= ldd <= 32). */
LT__TARGET("avx512f") static void lt__runs_avx512(const float *s, int64_t lds, int64_t n, int h, float *d, int ldd) {
    __mmask16 h0 = (__mmask16)(h >= 16 ? 0xffffu : (1u << h) - 1), d0 = (__mmask16)(ldd >= 16 ? 0xffffu : (1u << ldd) - 1);
    __mmask16 h1 = (__mmask16)(h <= 16 ? 0u : (1u << (h - 16)) - 1), d1 = (__mmask16)(ldd <= 16 ? 0u : (1u << (ldd - 16)) - 1);
    int64_t i;
    if (ldd == 32 && h == 32) {
        for (i = 0; i < n; i++) {
            _mm512_storeu_ps(d + i * 32, _mm512_loadu_ps(s + i * lds));
            _mm512_storeu_ps(d + i * 32 + 16, _mm512_loadu_ps(s + i * lds + 16));
        }
        return;
    }
    for (i = 0; i < n; i++) {
        _mm512_mask_storeu_ps(d + i * ldd, d0, _mm512_maskz_loadu_ps(h0, s + i * lds));
        if (d1) _mm512_mask_storeu_ps(d + i * ldd + 16, d1, _mm512_maskz_loadu_ps(h1, s + i * lds + 16));
    }
}
LT__TARGET("avx2,fma") static void lt__runs_avx2(const float *s, int64_t lds, int64_t n, int h, float *d, int ldd) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i h0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(h), lane), d0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(ldd), lane);
    __m256i h1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(h - 8), lane);
    __m256i d1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(ldd - 8), lane);
    int64_t i;
    /* whole slivers with plain moves: masked stores (vmaskmovps) are slow on AMD cores */
    if (ldd == 16 && h == 16) {   /* B's rows */
        for (i = 0; i < n; i++) {
            _mm256_storeu_ps(d + i * 16, _mm256_loadu_ps(s + i * lds));
            _mm256_storeu_ps(d + i * 16 + 8, _mm256_loadu_ps(s + i * lds + 8));
        }
        return;
    }
    if (ldd == 6 && h == 6) {     /* a transposed A's runs of 6: 4 floats, then 2 as one unaligned 64-bit move */
        for (i = 0; i < n; i++) {
            _mm_storeu_ps(d + i * 6, _mm_loadu_ps(s + i * lds));
            _mm_storel_epi64((__m128i *)(void *)(d + i * 6 + 4), _mm_loadl_epi64((const __m128i *)(const void *)(s + i * lds + 4)));
        }
        return;
    }
    for (i = 0; i < n; i++) {
        _mm256_maskstore_ps(d + i * ldd, d0, _mm256_maskload_ps(s + i * lds, h0));
        if (ldd > 8) _mm256_maskstore_ps(d + i * ldd + 8, d1, _mm256_maskload_ps(s + i * lds + 8, h1));
    }
}
#endif /* LT__X86 */

#ifdef LT__ARM
/* ---- @@GEMM.neon  NEON (AArch64): 8 x 12 ------------------------------------------------------ */
/* 24 accumulators (8 rows of 3 quads) + 3 B quads + 4 quads of A values = 31 of the 32 q
   registers.  Each FMA multiplies a B quad by one lane of an A quad (fmla v.4s, v.4s, v.s[l]), so
   A values are never broadcast separately.  k-major slivers give the 8 A values of one k in two
   quads; row-major ones give 4 k of one row per quad, so that kernel steps k by 4 (rows 0-3, then
   4-7, each against the same 4 rows of B) and sums every element in k order all the same. */
#define LT__N8_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define LT__N8_ZERO(r) float32x4_t c##r##a = vdupq_n_f32(0.0f), c##r##b = c##r##a, c##r##c = c##r##a;
#define LT__N8_FMAL(r, v, l)                                                                        \
    c##r##a = vfmaq_laneq_f32(c##r##a, b0, v, l);                                                  \
    c##r##b = vfmaq_laneq_f32(c##r##b, b1, v, l);                                                  \
    c##r##c = vfmaq_laneq_f32(c##r##c, b2, v, l);
#define LT__N8_LOADB(kk)                                                                            \
    b0 = vld1q_f32(b + (kk) * 12); b1 = vld1q_f32(b + (kk) * 12 + 4); b2 = vld1q_f32(b + (kk) * 12 + 8);
/* row-major: B row kk against lane kk of rows p..s (x0..x3 hold 4 k of each) */
#define LT__N8_ROW4(kk, p, q, r, s)                                                                 \
    LT__N8_LOADB(kk) LT__N8_FMAL(p, x0, kk) LT__N8_FMAL(q, x1, kk) LT__N8_FMAL(r, x2, kk) LT__N8_FMAL(s, x3, kk)
#define LT__N8_FMAN(r)                                                                              \
    c##r##a = vfmaq_n_f32(c##r##a, b0, a[r * LT__KS + k]);                                         \
    c##r##b = vfmaq_n_f32(c##r##b, b1, a[r * LT__KS + k]);                                         \
    c##r##c = vfmaq_n_f32(c##r##c, b2, a[r * LT__KS + k]);
#define LT__N8_ST(r) lt__n8_store(c + r * ldc, c##r##a, c##r##b, c##r##c, alpha, beta);
/* one row of the tile: c = alpha·acc (+ beta·c) */
static inline void lt__n8_store(float *c, float32x4_t x, float32x4_t y, float32x4_t z, float alpha, float beta) {
    if (beta == 0.0f) {
        vst1q_f32(c, vmulq_n_f32(x, alpha));
        vst1q_f32(c + 4, vmulq_n_f32(y, alpha));
        vst1q_f32(c + 8, vmulq_n_f32(z, alpha));
    } else {
        vst1q_f32(c, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(c), beta), x, alpha));
        vst1q_f32(c + 4, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(c + 4), beta), y, alpha));
        vst1q_f32(c + 8, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(c + 8), beta), z, alpha));
    }
}
static void lt__uk_neon_k(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta) {
    int64_t k;
    LT__N8_ROWS(LT__N8_ZERO)
    for (k = 0; k < kc; k++, a += 8, b += 12) {
        float32x4_t b0, b1, b2, a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
        LT__N8_LOADB(0)
        LT__N8_FMAL(0, a0, 0) LT__N8_FMAL(1, a0, 1) LT__N8_FMAL(2, a0, 2) LT__N8_FMAL(3, a0, 3)
        LT__N8_FMAL(4, a1, 0) LT__N8_FMAL(5, a1, 1) LT__N8_FMAL(6, a1, 2) LT__N8_FMAL(7, a1, 3)
    }
    LT__N8_ROWS(LT__N8_ST)
}
static void lt__uk_neon_r(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta) {
    int64_t k = 0;
    float32x4_t b0, b1, b2, x0, x1, x2, x3;
    LT__N8_ROWS(LT__N8_ZERO)
    for (; k + 4 <= kc; k += 4, b += 48) {
        x0 = vld1q_f32(a + k); x1 = vld1q_f32(a + LT__KS + k);
        x2 = vld1q_f32(a + 2 * LT__KS + k); x3 = vld1q_f32(a + 3 * LT__KS + k);
        LT__N8_ROW4(0, 0, 1, 2, 3) LT__N8_ROW4(1, 0, 1, 2, 3) LT__N8_ROW4(2, 0, 1, 2, 3) LT__N8_ROW4(3, 0, 1, 2, 3)
        x0 = vld1q_f32(a + 4 * LT__KS + k); x1 = vld1q_f32(a + 5 * LT__KS + k);
        x2 = vld1q_f32(a + 6 * LT__KS + k); x3 = vld1q_f32(a + 7 * LT__KS + k);
        LT__N8_ROW4(0, 4, 5, 6, 7) LT__N8_ROW4(1, 4, 5, 6, 7) LT__N8_ROW4(2, 4, 5, 6, 7) LT__N8_ROW4(3, 4, 5, 6, 7)
    }
    for (; k < kc; k++, b += 12) {   /* the last kc % 4 */
        LT__N8_LOADB(0)
        LT__N8_ROWS(LT__N8_FMAN)
    }
    LT__N8_ROWS(LT__N8_ST)
}
#endif /* LT__ARM */

/* ---- kernel choice: lt__gemm_pick (@@CORE.cpu, with LT_GEMM) ---------------------------------- */
/* Blocking per kernel.  KC x NR floats of a B sliver plus MR x KC of A stay in L1 (32-48 KiB),
   the KC x NC B panel in L2; MC only sets how much A one packing pass covers.  The NC below is
   each kernel's largest (the packing buffer's size); lt__gemm_fit lowers it where L2 is small. */
static void lt__gemm_fit(lt__gemm_impl *g, int64_t l2);
static lt__gemm_impl lt__gemm_impl_of(int id) {
    lt__gemm_impl g;
    memset(&g, 0, sizeof g);
    g.fn_k = lt__uk_portable_k; g.fn_r = lt__uk_portable_r; g.mr = LT__P_MR; g.nr = LT__P_NR;
    g.mc = 64; g.kc = 256; g.nc = 256;
    g.name = "portable C 4x16 packed";
#ifdef LT__X86
    if (id == LT__GEMM_AVX512) {
        g.fn_k = lt__uk_avx512_k; g.fn_r = lt__uk_avx512_r; g.mr = 14; g.nr = 32;
        g.sk[0] = lt__uk_avx512_k4; g.sr[0] = lt__uk_avx512_r4; g.sh[0] = 4;
        g.sk[1] = lt__uk_avx512_k8; g.sr[1] = lt__uk_avx512_r8; g.sh[1] = 8;
        g.nk = lt__uk_avx512_kn; g.nr_ = lt__uk_avx512_rn;
        g.nkr = lt__uk_avx512_knr; g.nrr = lt__uk_avx512_rnr;
        g.bk = lt__uk_avx512_kb; g.br = lt__uk_avx512_rb;
        g.rk = lt__uk_avx512_kr; g.rr = lt__uk_avx512_rr;
        g.mc = 112; g.kc = 256; g.nc = 512; g.isa = 2;
        g.name = "avx512 14x32 packed";
    } else if (id == LT__GEMM_AVX2) {
        g.fn_k = lt__uk_avx2_k; g.fn_r = lt__uk_avx2_r; g.mr = 6; g.nr = 16;
        g.bk = lt__uk_avx2_kb; g.br = lt__uk_avx2_rb;
        g.nk = lt__uk_avx2_kn; g.nr_ = lt__uk_avx2_rn;
        g.nkr = lt__uk_avx2_knr; g.nrr = lt__uk_avx2_rnr;
        g.rk = lt__uk_avx2_kr; g.rr = lt__uk_avx2_rr;
        g.mc = 96; g.kc = 256; g.nc = 512; g.isa = 1;
        g.name = "avx2+fma 6x16 packed";
    }
#elif defined(LT__ARM)
    if (id == LT__GEMM_NEON) {
        g.fn_k = lt__uk_neon_k; g.fn_r = lt__uk_neon_r; g.mr = 8; g.nr = 12;
        g.mc = 96; g.kc = 256; g.nc = 504;
        g.name = "neon 8x12 packed";
    }
#else
    (void)id;
#endif
    lt__gemm_fit(&g, lt__cpu_cache(2));
    return g;
}
/* The B panel (KC x NC floats) takes at most half of L2 (the rest holds C's tiles, the A block
   and the next panel's prefetch): NC = L2 / (8 KC) floored to a multiple of NR, at least 4 NR,
   never above the kernel's own NC.  l2 <= 0 (unknown) keeps the kernel's NC. */
static void lt__gemm_fit(lt__gemm_impl *g, int64_t l2) {
    int64_t nc;
    if (l2 <= 0) return;
    nc = l2 / (8 * (int64_t)g->kc) / g->nr * g->nr;
    if (nc < 4 * g->nr) nc = 4 * g->nr;
    if (nc < g->nc) g->nc = (int)nc;
}

/* Products of two bf16 operands take the AMX tile kernel where the CPU has AMX and Linux lends the
   tiles (Intel Xeons since Sapphire Rapids: 1024 multiply-adds a cycle against the FMAs' 32), else
   the AVX512_BF16 pair kernels where the AVX-512 kernel was picked, the CPU has the instruction
   and pairs are the faster way: on AMD (Zen 4) a vdpbf16ps does twice an FMA's multiply-adds per
   cycle, while on Intel Xeons with AVX512_BF16 it does no more than the two FMA ports and the pair
   packing costs extra (a bf16 step took 1.45x fp32's time on pairs there, about fp32's on
   converted panels: bench/precision.md).  LT_GEMM16=pairs or LT_GEMM16=convert in the environment
   chooses either of those ways (the same values, summed in another order for convert; AMX sums in
   the pairs' order, rounding its steps its own way); LT_CPU_OFF=amx keeps the tiles off. */
static void lt__gemm_dp(lt__gemm_impl *g) {
#ifdef LT__X86
    const char *e = getenv("LT_GEMM16");
    int pairs = e && strcmp(e, "pairs") == 0;
    if (g->isa != 2 || (e && strcmp(e, "convert") == 0) || !lt__cpu_has(LT__CPU_AVX512F | LT__CPU_AVX512BF16)) return;
    if (!lt__cpu_has(LT__CPU_AVX512BW | LT__CPU_AVX512VL)) return;   /* packing */
#ifdef LT__AMX
    if (!pairs && lt__amx_ready()) {
        lt__gemm_impl t;
        memset(&t, 0, sizeof t);
        t.fn_k = lt__uk_amx; t.fn_r = lt__uk_amx; t.dp = 1; t.amx = 1;
        t.rk = lt__uk_amx_rb; t.rr = lt__uk_amx_rb;   /* the 16-bit forward's bias and rounding */
        t.mr = 32; t.nr = 32; t.mc = 96; t.kc = 256; t.isa = 2;
        /* NC 1024: A is packed once per NC columns, which at the tiles' speed costs as much as the
           products of a 512-wide panel cost (1.13-1.25x on the training shapes with 1024,
           bench/precision.md); the panel's pair words (KC/2 x NC, 512 KiB) within half of L2 */
        t.nc = 1024;
        while (lt__cpu_cache(2) > 0 && (int64_t)t.nc * t.kc * 2 > lt__cpu_cache(2) / 2 && t.nc > 4 * t.nr) t.nc /= 2;
        t.name = "amx-bf16 32x32 tiles";
        *g = t;   /* no short tiles or streaming stores; of the fused epilogues only bf16's */
        return;
    }
#endif
    if (!pairs && !lt__cpu_has(LT__CPU_AMD)) return;
    g->fn_k = lt__uk_bf16dp_k; g->fn_r = lt__uk_bf16dp_r; g->dp = 1;
    g->nk = lt__uk_bf16dp_kn; g->nr_ = lt__uk_bf16dp_rn;
    g->nkr = NULL; g->nrr = NULL;
    g->bk = NULL; g->br = NULL;   /* (no float32 bias on bf16 operands) */
    g->rk = lt__uk_bf16dp_kr; g->rr = lt__uk_bf16dp_rr;
    g->sk[0] = lt__uk_bf16dp_k4; g->sr[0] = lt__uk_bf16dp_r4;   /* heights 4 and 8 (sh) as the */
    g->sk[1] = lt__uk_bf16dp_k8; g->sr[1] = lt__uk_bf16dp_r8;   /* AVX-512 kernels they replace */
    g->name = "avx512bf16 14x32 bf16 pairs";
#else
    (void)g;
#endif
}

/* Floats of packing buffer one thread needs (the largest over kernels), + alignment slack. */
#define LT__GEMM_MAXA (112 * LT__KS)
/* B: the largest KC x NC floats (a longer KC takes a narrower NC), or KC/2 x NC pair words (AMX's
   NC 1024) */
#define LT__GEMM_PANEL (256 * 512)
#define LT__GEMM_MAXB LT__GEMM_PANEL
#define LT__GEMM_STACK ((LT__GEMM_MAXA + LT__GEMM_MAXB + 32) * 4)
#define LT__GEMM_MC_MAX 112   /* the largest MC and NC above */
#define LT__GEMM_NC_MAX 1024

/* ---- @@GEMM.pack  packing --------------------------------------------------------------------- */
/* Packing walks rows that lie a stride apart (a run of KC values from each), which the hardware
   prefetcher picks up late: the runs a few rows ahead are asked for explicitly (lt__fetch,
   LT__FETCH_L1; see bench/precision.md, design notes). */

/* op(A)[0..mc, 0..kc] -> MR-tall slivers of MR*LT__KS floats each.  A points at op(A)[0][0].
   A as is (element (i,k) at A[i*lda + k]): rows copied, row-major slivers a[r*KS + k].
   A transposed (element (i,k) at A[k*lda + i]): runs of MR copied, k-major slivers a[k*MR + r].
   Rows past mc are zeros. */
static void lt__pack_a(int ta, int isa, const float *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *ap) {
    int64_t is, k;
    int r;
    for (is = 0; is < mc; is += mr, ap += (int64_t)mr * LT__KS) {
        int h = mc - is < mr ? (int)(mc - is) : mr;
        if (!ta) {
            for (r = 0; r < h; r++) {
                memcpy(ap + r * LT__KS, A + (is + r) * lda, (size_t)kc * sizeof(float));
                if (is + r + 4 < mc) lt__fetch(A + (is + r + 4) * lda, 0, kc * (int64_t)sizeof(float), LT__FETCH_L1);
            }
            for (; r < mr; r++) memset(ap + r * LT__KS, 0, (size_t)kc * sizeof(float));
        } else {
#ifdef LT__X86
            if (isa == 2 && mr <= 32) { lt__runs_avx512(A + is, lda, kc, h, ap, mr); continue; }
            if (isa == 1 && mr <= 16) { lt__runs_avx2(A + is, lda, kc, h, ap, mr); continue; }
#else
            (void)isa;
#endif
            for (k = 0; k < kc; k++) {
                const float *s = A + k * lda + is;
                float *d = ap + k * mr;
                for (r = 0; r < h; r++) d[r] = s[r];
                for (; r < mr; r++) d[r] = 0.0f;
            }
        }
    }
}

/* op(B)[0..kc, 0..nc] -> NR-wide slivers, each kc rows of NR values: bp[s*kc*NR + k*NR + j].
   Element (k,j) of op(B) is B[k*ldb + j], or B[j*ldb + k] when transposed (then 8 x 8 blocks
   are turned with AVX, lt__tr8x8 in @@OPS, when isa is set). */
static void lt__pack_b(int tb, int isa, const float *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *bp) {
    int64_t js, k, kk;
    int j;
    for (js = 0; js < nc; js += nr, bp += kc * nr) {
        int w = nc - js < nr ? (int)(nc - js) : nr;
        if (!tb) {
#ifdef LT__X86
            if (isa == 2 && nr <= 32) { lt__runs_avx512(B + js, ldb, kc, w, bp, nr); continue; }
            if (isa == 1 && nr <= 16) { lt__runs_avx2(B + js, ldb, kc, w, bp, nr); continue; }
#endif
            for (k = 0; k < kc; k++) {
                float *d = bp + k * nr;
                memcpy(d, B + k * ldb + js, (size_t)w * sizeof(float));
                for (j = w; j < nr; j++) d[j] = 0.0f;
            }
            continue;
        }
        k = 0;
#ifdef LT__X86
        if (isa >= 1 && w == nr) {
            for (; k + 8 <= kc; k += 8)
                for (j = 0; j < nr; j += 8) lt__tr8x8(B + (js + j) * ldb + k, ldb, bp + k * nr + j, nr, 0);
        }
#else
        (void)isa;
#endif
        for (j = 0; j < w; j++) {
            const float *s = B + (js + j) * ldb;
            for (kk = k; kk < kc; kk++) bp[kk * nr + j] = s[kk];
        }
        for (; j < nr; j++)
            for (kk = k; kk < kc; kk++) bp[kk * nr + j] = 0.0f;
    }
}

/* ---- @@GEMM.f16  16-bit operands (lt__gemm16, @@OPS): converted while packing ------------------ */
/* An operand as packing reads it: float32 values f as they are (p = 0) or rounded to 16 bits
   (p = LT_BF16 or LT_F16), or 16-bit values h of type p, widened.  The panels are float32 either
   way, so the micro-kernels, their sums and their speed are those of float32; packing converts
   instead of copying (little more than a copy with the vector converters of @@HALF), and a 16-bit
   operand moves half the bytes.  With two bf16 operands on a CPU with AVX512_BF16 the panels are
   then rewritten as bf16 pairs for the vdpbf16ps kernel (above: 2x the products per second);
   fp16 has no such kernel (AVX512_FP16 computes in fp16 and has none here), so fp16 products
   run at the float32 rate. */
/* The gradient of a cross-entropy's logits as an operand, made while packing (linear_ce16's
   float32 logits, @@LOSS): the operand's floats hold the softmax terms e_rj = exp(z_rj - m_r) of
   rows r of length ld from base, and element (r, j) reads as round16(c_r·e_rj - g·[j = t_r]): the
   value the loss's own pass would write over e (lt__ce_row_grad, kept: the same operations, so the
   same bits), made where the products pack it instead, so backward reads the R·V terms once for
   each product and writes nothing over them. */
typedef struct {
    const float *base, *c;   /* c: per row, g/Σ_j e_rj (0 for an ignored row) */
    const int32_t *t;        /* per row, the target (LT_IGNORE_INDEX: none) */
    int64_t ld;
    float g;
} lt__gsrc_ce;
typedef struct {
    const float *f;
    const uint16_t *h;
    int p;
    int gelu;     /* h holds gelu16's input: the values are round16(gelu(h)), recomputed (@@OPS) */
    const lt__gsrc_ce *ce;   /* f holds a cross-entropy's terms, read as its gradient (above), rounded to p */
    int warm;     /* this panel's rows were fetched into the caches ahead (lt__gemm_block's lt__pf) */
} lt__gsrc;
/* The vector stores' types may alias anything, so a loop that stores vectors and reads an operand's
   fields through a pointer loads them again for every vector.  Most packers below read a local
   copy of the operand in their loops instead (the inlined lane helpers get its address; it is
   never passed on), so the fields stay in registers: AVX2's row conversions 13-27% faster,
   bench/pack.c.  lt__pack_a16t_avx512 does not: it measured 6% slower so. */
static void lt__gelu16_block(lt_dtype p, const uint16_t *xh, float *y, int64_t m); /* @@OPS */
/* Do bf16 products with kernel id run on bf16 pairs (lt__gemm_dp)?  Otherwise an operand whose
   float32 values are bf16 already is packed as float32 (rounding it again gives the same values). */
static int lt__gemm16_pairs(int id) {
    lt__gemm_impl g = lt__gemm_impl_of(id);
    lt__gemm_dp(&g);
    return g.dp;
}
/* float32 values f as they are (set p to round them while packing); every operand starts here */
static lt__gsrc lt__gsrc_f32(const float *f) {
    lt__gsrc s;
    s.f = f; s.h = NULL; s.p = 0; s.gelu = 0; s.ce = NULL; s.warm = 0;
    return s;
}
static lt__gsrc lt__gsrc_at(lt__gsrc s, int64_t off) {
    if (s.h) s.h += off;
    else s.f += off;
    return s;
}
/* prefetch n values of s from at (as above; the packers below use it) */
static void lt__gsrc_prefetch(const lt__gsrc *s, int64_t at, int64_t n) {
    if (s->h) lt__fetch(s->h + at, 0, n * 2, LT__FETCH_L1);
    else lt__fetch(s->f + at, 0, n * 4, LT__FETCH_L1);
}
#ifdef LT__X86
/* element i of s as float32, the scalar way (the fast paths' ragged ends and NaNs) */
static float lt__gsrc_one(const lt__gsrc *s, int64_t i) {
    if (s->gelu) return lt__gelu16_y[s->p == LT_F16][s->h[i]];
    if (s->h) return s->p == LT_F16 ? lt_f16_to_f32(s->h[i]) : lt_bf16_to_f32(s->h[i]);
    return s->p == LT_F16 ? lt_f16_to_f32(lt_f32_to_f16(s->f[i])) : lt_bf16_to_f32(lt_f32_to_bf16(s->f[i]));
}
/* lt__gsrc_get with AVX-512, 16 values at a time in registers (the tail in scalar code): bf16
   widens by a shift and rounds with the integer formula of lt_f32_to_bf16 (a NaN stays a NaN);
   fp16 through vcvtps2ph / vcvtph2ps (nearest even; 16 values holding a NaN by the scalar code,
   for its canonical NaN).  The scalar code's bits either way.  out may equal s's floats. */
/* 16 values of s at element i (all present) as float32 */
LT__TARGET("avx512f") static inline __m512 lt__gsrc16_lanes(const lt__gsrc *s, int64_t i) {
    if (s->gelu) {   /* 16 lookups in gelu16's table at once (one gather) */
        __m512i x = _mm512_maskz_cvtepu16_epi32(LT__M16, _mm256_loadu_si256((const __m256i *)(const void *)(s->h + i)));
        return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), LT__M16, x, lt__gelu16_y[s->p == LT_F16], 4);
    }
    if (s->h) return lt__widen16_lanes((lt_dtype)s->p, _mm256_loadu_si256((const __m256i *)(const void *)(s->h + i)));
    if (s->p == LT_F16) {
        __m512 v = _mm512_loadu_ps(s->f + i);
        if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)) {   /* the scalar code's canonical NaN */
            float t[16];
            int j;
            for (j = 0; j < 16; j++) t[j] = lt__gsrc_one(s, i + j);
            return _mm512_loadu_ps(t);
        }
        return _mm512_maskz_cvtph_ps(LT__M16, _mm512_maskz_cvtps_ph(LT__M16, v, _MM_FROUND_TO_NEAREST_INT));
    }
    return lt__bf16_round_f32(_mm512_loadu_si512((const void *)(s->f + i)));
}
/* One k of op(A) transposed, dealt to k-major slivers: the mc 32-bit values of that k sit in
   v[0..ceil(mc/16)) (lanes past mc zero; v has room for one more vector), and sliver s's mr (<= 16)
   values, picked from two of those vectors with one permute, go to d + s*mr*LT__KS, where d is the
   k's place in sliver 0.  (Dealing them through a row in memory stalls on store forwarding; see
   bench/design.md.)  Used for float32 values and for bf16 pair words alike. */
LT__TARGET("avx512f") static void lt__deal_slivers(__m512i *v, int64_t mc, int mr, int32_t *d) {
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __mmask16 mk = (__mmask16)((1u << mr) - 1u);
    int i0;
    v[(mc + 15) / 16] = _mm512_setzero_si512();
    for (i0 = 0; i0 < mc; i0 += mr) {
        __m512i x = _mm512_permutex2var_epi32(v[i0 / 16], _mm512_add_epi32(lane, _mm512_set1_epi32(i0 % 16)), v[i0 / 16 + 1]);
        _mm512_mask_storeu_epi32(d + (int64_t)i0 * LT__KS, mk, x);
    }
}
/* op(A) transposed, k-major slivers (as lt__pack_a): per k, the mc values converted 16 at a time
   into registers, then dealt (lt__deal_slivers).  Slivers of 14 (the kernel's MR) go 8 from each
   7 vectors held in registers, each picked with one valignd (the zero-masking form: the plain
   one leaves lanes undefined, which g++ -Werror rejects) and stored under a mask: 2x faster
   than dealing them from the converted row in memory, and faster than float32's runs of 14
   (lt__pack_a; bench/pack.c). */
LT__TARGET("avx512f") static void lt__pack_a16t_avx512(const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                                                   float *ap) {
    const lt__gsrc a = *A;   /* (the fields in registers: at lt__gsrc) */
    const __mmask16 m14 = 0x3fff;
    __m512i v[LT__GEMM_MC_MAX / 16 + 2];
    int nv, c, i;
    int64_t k, is, m112 = mr == 14 ? mc / 112 * 112 : 0;
    for (k = 0; k < kc; k++) {
        int64_t at = k * lda;
        float *d = ap + k * mr;   /* the k's place in sliver 0; sliver s starts at s*mr*KS */
        if (k + 4 < kc) lt__gsrc_prefetch(A, at + 4 * lda, mc);
        for (is = 0; is < m112; is += 112, d += 112 * LT__KS) {
            __m512i u0 = _mm512_castps_si512(lt__gsrc16_lanes(&a, at + is));
            __m512i u1 = _mm512_castps_si512(lt__gsrc16_lanes(&a, at + is + 16));
            __m512i u2 = _mm512_castps_si512(lt__gsrc16_lanes(&a, at + is + 32));
            __m512i u3 = _mm512_castps_si512(lt__gsrc16_lanes(&a, at + is + 48));
            __m512i u4 = _mm512_castps_si512(lt__gsrc16_lanes(&a, at + is + 64));
            __m512i u5 = _mm512_castps_si512(lt__gsrc16_lanes(&a, at + is + 80));
            __m512i u6 = _mm512_castps_si512(lt__gsrc16_lanes(&a, at + is + 96));
            _mm512_mask_storeu_epi32(d, m14, u0);   /* sliver s: values 14s.. = lanes 14s % 16.. of u[14s / 16] */
            _mm512_mask_storeu_epi32(d + 14 * LT__KS, m14, _mm512_maskz_alignr_epi32(m14, u1, u0, 14));
            _mm512_mask_storeu_epi32(d + 28 * LT__KS, m14, _mm512_maskz_alignr_epi32(m14, u2, u1, 12));
            _mm512_mask_storeu_epi32(d + 42 * LT__KS, m14, _mm512_maskz_alignr_epi32(m14, u3, u2, 10));
            _mm512_mask_storeu_epi32(d + 56 * LT__KS, m14, _mm512_maskz_alignr_epi32(m14, u4, u3, 8));
            _mm512_mask_storeu_epi32(d + 70 * LT__KS, m14, _mm512_maskz_alignr_epi32(m14, u5, u4, 6));
            _mm512_mask_storeu_epi32(d + 84 * LT__KS, m14, _mm512_maskz_alignr_epi32(m14, u6, u5, 4));
            _mm512_mask_storeu_epi32(d + 98 * LT__KS, m14, _mm512_maskz_alignr_epi32(m14, u6, u6, 2));
        }
        if (m112 == mc) continue;
        nv = (int)((mc - m112 + 15) / 16);
        for (c = 0; c < nv; c++) {
            int64_t r = m112 + 16 * c;
            if (r + 16 <= mc) v[c] = _mm512_castps_si512(lt__gsrc16_lanes(&a, at + r));
            else {
                float t[16];
                for (i = 0; i < 16; i++) t[i] = r + i < mc ? lt__gsrc_one(A, at + r + i) : 0.0f;
                v[c] = _mm512_castps_si512(_mm512_loadu_ps(t));
            }
        }
        lt__deal_slivers(v, mc - m112, mr, (int32_t *)(void *)d);
    }
}
/* op(B) as is, NR-wide slivers (as lt__pack_b): sliver by sliver, each k row's values converted
   16 at a time straight into it, written in order as lt__pack_b writes them (row by row over all
   the slivers, the code before, took 1.2-1.7x as long when it packed weights, bench/pack.c). */
LT__TARGET("avx512f") static void lt__pack_b16n_avx512(const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                                                   float *bp) {
    const lt__gsrc b = *B;   /* (the fields in registers: at lt__gsrc) */
    int64_t k, js;
    int j;
    for (js = 0; js < nc; js += nr, bp += kc * nr) {
        int w = nc - js < nr ? (int)(nc - js) : nr;
        if (w == 32 && nr == 32) {   /* a whole sliver: two vectors a k, no tails to test */
            for (k = 0; k < kc; k++) {
                _mm512_store_ps(bp + k * 32, lt__gsrc16_lanes(&b, k * ldb + js));
                _mm512_store_ps(bp + k * 32 + 16, lt__gsrc16_lanes(&b, k * ldb + js + 16));
            }
            continue;
        }
        for (k = 0; k < kc; k++) {
            float *d = bp + k * nr;
            int64_t at = k * ldb + js;
            for (j = 0; j + 16 <= w; j += 16) _mm512_store_ps(d + j, lt__gsrc16_lanes(&b, at + j));
            for (; j < w; j++) d[j] = lt__gsrc_one(B, at + j);
            for (; j < nr; j++) d[j] = 0.0f;
        }
    }
}
LT__TARGET("avx512f") static void lt__gsrc_get_avx512(const lt__gsrc *s, int64_t off, int64_t n, float *out) {
    const lt__gsrc c = *s;   /* (the fields in registers: at lt__gsrc) */
    int64_t i = 0;
    if (s->gelu) {
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, lt__gsrc16_lanes(&c, off + i));
        for (; i < n; i++) out[i] = lt__gsrc_one(s, off + i);
    } else if (s->h) {
        lt__widen16_avx512((lt_dtype)s->p, s->h + off, out, n);
    } else {
        const float *f = s->f + off;
        if (s->p == LT_F16) {
            for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, lt__gsrc16_lanes(&c, off + i));
            for (; i < n; i++) out[i] = lt_f16_to_f32(lt_f32_to_f16(f[i]));
        } else {
            for (; i + 16 <= n; i += 16)
                _mm512_storeu_ps(out + i, lt__bf16_round_f32(_mm512_loadu_si512((const void *)(f + i))));
            for (; i < n; i++) out[i] = lt_bf16_to_f32(lt_f32_to_bf16(f[i]));
        }
    }
}
/* The same with AVX2 (+ F16C; CPUs without AVX-512), 8 values at a time: bf16 rounded by the
   integer formula (lt__bf16_round8) and widened by a shift, fp16 through vcvtps2ph / vcvtph2ps
   (8 values holding a NaN one by one, for the scalar code's canonical NaN), gelu16's values by one
   gather from its table.  One pass, where lt__round16 and lt__from16 (their own dispatch on each
   call) cost a step of bf16 training on an AVX2-only CPU 10-20% over float32. */
LT__TARGET("avx2,fma,f16c") static inline __m256 lt__gsrc8_lanes(const lt__gsrc *s, int64_t i) {
    if (s->gelu || s->h) {
        __m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(s->h + i)));
        if (s->gelu) return _mm256_i32gather_ps(lt__gelu16_y[s->p == LT_F16], x, 4);
        if (s->p == LT_F16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(s->h + i)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(x, 16));
    }
    if (s->p == LT_F16) {
        __m256 v = _mm256_loadu_ps(s->f + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            float t[8];
            int j;
            for (j = 0; j < 8; j++) t[j] = lt__gsrc_one(s, i + j);
            return _mm256_loadu_ps(t);
        }
        return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    return lt__bf16_round8_f32(_mm256_loadu_si256((const __m256i *)(const void *)(s->f + i)));
}
LT__TARGET("avx2,fma,f16c") static void lt__gsrc_get_avx2(const lt__gsrc *s, int64_t off, int64_t n, float *out) {
    const lt__gsrc c = *s;   /* (the fields in registers: at lt__gsrc) */
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, lt__gsrc8_lanes(&c, off + i));
    for (; i < n; i++) out[i] = lt__gsrc_one(s, off + i);
}
/* op(A) transposed, k-major slivers of 6 (the AVX2 kernel's MR; as lt__pack_a16t_avx512): per k,
   the mc values converted 24 at a time into three registers and stored straight from their
   halves into four slivers (as fast as float32's runs of 6, bench/pack.c; picking each sliver's 6
   with permutes and blends, the code before, took 1.8x as long). */
LT__TARGET("avx2,fma,f16c") static void lt__pack_a16t_avx2(const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc,
                                                         float *ap) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), seven = _mm256_set1_epi32(7);
    const lt__gsrc a = *A;   /* (the fields in registers: at lt__gsrc) */
    __m256 v[LT__GEMM_MC_MAX / 8 + 2];
    int nv, c, i;
    int64_t k, is, m24 = mc / 24 * 24;
    for (k = 0; k < kc; k++) {
        int64_t at = k * lda;
        float *d = ap + k * 6;   /* the k's place in sliver 0; sliver s starts at s*6*KS */
        if (k + 4 < kc) lt__gsrc_prefetch(A, at + 4 * lda, mc);
        for (is = 0; is < m24; is += 24, d += 24 * LT__KS) {
            /* four slivers from three vectors, their halves stored as 4 + 2 and 2 + 4 floats */
            __m256 u0 = lt__gsrc8_lanes(&a, at + is), u1 = lt__gsrc8_lanes(&a, at + is + 8);
            __m256 u2 = lt__gsrc8_lanes(&a, at + is + 16);
            __m128 a1 = _mm256_extractf128_ps(u0, 1), b1 = _mm256_extractf128_ps(u1, 1);
            __m128 c0 = _mm256_castps256_ps128(u2);
            _mm_storeu_ps(d, _mm256_castps256_ps128(u0));
            _mm_storel_pi((__m64 *)(void *)(d + 4), a1);
            _mm_storeh_pi((__m64 *)(void *)(d + 6 * LT__KS), a1);
            _mm_storeu_ps(d + 6 * LT__KS + 2, _mm256_castps256_ps128(u1));
            _mm_storeu_ps(d + 12 * LT__KS, b1);
            _mm_storel_pi((__m64 *)(void *)(d + 12 * LT__KS + 4), c0);
            _mm_storeh_pi((__m64 *)(void *)(d + 18 * LT__KS), c0);
            _mm_storeu_ps(d + 18 * LT__KS + 2, _mm256_extractf128_ps(u2, 1));
        }
        if (m24 == mc) continue;
        /* the last mc % 24 values: converted 8 at a time (lanes past mc zero), each sliver's 6
           picked from the two vectors that hold them (two permutes and a blend) */
        nv = (int)((mc - m24 + 7) / 8);
        for (c = 0; c < nv; c++) {
            int64_t r = m24 + 8 * c;
            if (r + 8 <= mc) v[c] = lt__gsrc8_lanes(&a, at + r);
            else {
                float t[8];
                for (i = 0; i < 8; i++) t[i] = r + i < mc ? lt__gsrc_one(A, at + r + i) : 0.0f;
                v[c] = _mm256_loadu_ps(t);
            }
        }
        v[nv] = _mm256_setzero_ps();
        for (is = 0; m24 + is < mc; is += 6, d += 6 * LT__KS) {
            __m256i j = _mm256_add_epi32(lane, _mm256_set1_epi32((int)(is % 8)));   /* lane r: value is + r */
            __m256i idx = _mm256_and_si256(j, seven);
            __m256 x = _mm256_blendv_ps(_mm256_permutevar8x32_ps(v[is / 8], idx), _mm256_permutevar8x32_ps(v[is / 8 + 1], idx),
                                        _mm256_castsi256_ps(_mm256_cmpgt_epi32(j, seven)));
            _mm_storeu_ps(d, _mm256_castps256_ps128(x));
            _mm_storel_epi64((__m128i *)(void *)(d + 4), _mm_castps_si128(_mm256_extractf128_ps(x, 1)));
        }
    }
}
/* op(B) as is with AVX2, lt__pack_b16n_avx512's twin, 8 values at a time (each row converted
   into a buffer and copied on from there, the code before, took 2-3x float32's packing when it
   packed weights: bench/pack.c). */
LT__TARGET("avx2,fma,f16c") static void lt__pack_b16n_avx2(const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                                                         float *bp) {
    const lt__gsrc b = *B;   /* (the fields in registers: at lt__gsrc) */
    int64_t k, js;
    int j;
    for (js = 0; js < nc; js += nr, bp += kc * nr) {
        int w = nc - js < nr ? (int)(nc - js) : nr;
        if (w == 16 && nr == 16) {   /* a whole sliver: two vectors a k, no tails to test (the loop
                                        below took 2.2x float32's packing for 16-bit dy: bench/pack.c) */
            for (k = 0; k < kc; k++) {
                _mm256_store_ps(bp + k * 16, lt__gsrc8_lanes(&b, k * ldb + js));
                _mm256_store_ps(bp + k * 16 + 8, lt__gsrc8_lanes(&b, k * ldb + js + 8));
            }
            continue;
        }
        for (k = 0; k < kc; k++) {
            float *d = bp + k * nr;
            int64_t at = k * ldb + js;
            for (j = 0; j + 8 <= w; j += 8) _mm256_store_ps(d + j, lt__gsrc8_lanes(&b, at + j));
            for (; j < w; j++) d[j] = lt__gsrc_one(B, at + j);
            for (; j < nr; j++) d[j] = 0.0f;
        }
    }
}
/* out[0..n) = round_bf16(0 + c·e[0..n)): lt__exp_grad's kept values rounded as lt__round16
   rounds them, in one pass through registers (AVX-512 or AVX2; the last values by the scalar
   code) */
LT__TARGET("avx512f") static void lt__ce_bf16_avx512(const float *e, float *out, int64_t n, float c) {
    __m512 vc = _mm512_set1_ps(c), z = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i,
                         lt__bf16_round_f32(_mm512_castps_si512(_mm512_add_ps(z, _mm512_mul_ps(vc, _mm512_loadu_ps(e + i))))));
    for (; i < n; i++) out[i] = lt_bf16_to_f32(lt_f32_to_bf16(0.0f + c * e[i]));
}
LT__TARGET("avx2,fma") static void lt__ce_bf16_avx2(const float *e, float *out, int64_t n, float c) {
    __m256 vc = _mm256_set1_ps(c), z = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i,
                         lt__bf16_round8_f32(_mm256_castps_si256(_mm256_add_ps(z, _mm256_mul_ps(vc, _mm256_loadu_ps(e + i))))));
    for (; i < n; i++) out[i] = lt_bf16_to_f32(lt_f32_to_bf16(0.0f + c * e[i]));
}
#endif
/* out[0..n) = a cross-entropy's gradient at element off.. of s (s->ce; the n values in one row):
   c·e, its target's value less g, then rounded to p, as lt__ce_row_grad makes them */
static void lt__gsrc_get_ce(int isa, const lt__gsrc *s, int64_t off, int64_t n, float *out) {
    const lt__gsrc_ce *ce = s->ce;
    const float *e = s->f + off;
    int64_t at = e - ce->base, r = at / ce->ld, j = at - r * ce->ld;
    int32_t t = ce->t[r];
    float c = ce->c[r];
#ifdef LT__X86
    if (s->p == LT_BF16 && (isa == 2 || (isa == 1 && lt__k_available(LT__K_AVX2)))) {
        if (isa == 2) lt__ce_bf16_avx512(e, out, n, c);
        else lt__ce_bf16_avx2(e, out, n, c);
        if (t >= j && t < j + n) out[t - j] = lt_bf16_to_f32(lt_f32_to_bf16((0.0f + c * e[t - j]) - ce->g));
        return;
    }
#else
    (void)isa;
#endif
    lt__exp_grad(0, e, out, n, 0.0f, c, 0, 1);
    if (t >= j && t < j + n) out[t - j] -= ce->g;
    lt__round16((lt_dtype)s->p, out, out, (size_t)n);
}
/* out[0..n) = element off.. of s as float32 (isa: as lt__gemm_impl's) */
static void lt__gsrc_get(int isa, const lt__gsrc *s, int64_t off, int64_t n, float *out) {
    if (s->ce) { lt__gsrc_get_ce(isa, s, off, n, out); return; }
#ifdef LT__X86
    if (isa == 2 && (s->h || s->p)) { lt__gsrc_get_avx512(s, off, n, out); return; }
    if (isa == 1 && (s->h || s->p) && lt__k_available(LT__K_AVX2)) { lt__gsrc_get_avx2(s, off, n, out); return; }
#else
    (void)isa;
#endif
    if (s->gelu) lt__gelu16_block((lt_dtype)s->p, s->h + off, out, n);
    else if (s->h) lt__from16((lt_dtype)s->p, s->h + off, out, (size_t)n);
    else if (s->p) lt__round16((lt_dtype)s->p, s->f + off, out, (size_t)n);
    else memcpy(out, s->f + off, (size_t)n * sizeof(float));
}

/* lt__pack_a for a converted operand: rows of op(A) converted straight into the slivers, or (A
   transposed) one k at a time, mc values converted in a row then dealt to the slivers. */
static void lt__pack_a16(int ta, int isa, const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *ap) {
    float row[LT__GEMM_MC_MAX + 16];
    int64_t is, k;
    int r;
    if (!ta) {   /* rows converted straight into the slivers, the row 4 ahead fetched (as lt__pack_a) */
        for (is = 0; is < mc; is += mr, ap += (int64_t)mr * LT__KS) {
            int h = mc - is < mr ? (int)(mc - is) : mr;
            for (r = 0; r < h; r++) {
                lt__gsrc_get(isa, A, (is + r) * lda, kc, ap + r * LT__KS);
                if (is + r + 4 < mc) lt__gsrc_prefetch(A, (is + r + 4) * lda, kc);
            }
            for (; r < mr; r++) memset(ap + r * LT__KS, 0, (size_t)kc * sizeof(float));
        }
        return;
    }
    if (A->ce) {   /* 16 k at a time: their rows of the gradient made, then dealt as float32 */
        float blk[16 * LT__GEMM_MC_MAX];
        for (k = 0; k < kc; k += 16) {
            int64_t kn = kc - k < 16 ? kc - k : 16, i;
            for (i = 0; i < kn; i++) {
                lt__gsrc_get(isa, A, (k + i) * lda, mc, blk + i * mc);
                if (k + i + 4 < kc) lt__gsrc_prefetch(A, (k + i + 4) * lda, mc);
            }
            lt__pack_a(1, isa, blk, mc, mc, kn, mr, ap + k * mr);
        }
        return;
    }
#ifdef LT__X86
    if (isa == 2 && mr <= 16) { lt__pack_a16t_avx512(A, lda, mc, kc, mr, ap); return; }
    if (isa == 1 && mr == 6 && lt__k_available(LT__K_AVX2)) { lt__pack_a16t_avx2(A, lda, mc, kc, ap); return; }
#endif
    for (k = 0; k < kc; k++) {
        lt__gsrc_get(isa, A, k * lda, mc, row);
        if (k + 4 < kc) lt__gsrc_prefetch(A, (k + 4) * lda, mc);
        for (is = 0; is < mc; is += mr) {
            float *d = ap + is * LT__KS + k * mr;   /* sliver is/mr starts at (is/mr)*mr*KS */
            int h = mc - is < mr ? (int)(mc - is) : mr;
            for (r = 0; r < h; r++) d[r] = row[is + r];
            for (; r < mr; r++) d[r] = 0.0f;
        }
    }
}

#ifdef LT__X86
/* one sliver of nr (a multiple of 8) columns of float32 B (kc rows ldb apart), each value rounded
   to bf16 (lt__bf16_round8_f32) */
LT__TARGET("avx2") static void lt__pack_b_rb_avx2(const float *b, int64_t ldb, int64_t kc, int nr, float *bp) {
    int64_t k;
    int j;
    for (k = 0; k < kc; k++, b += ldb, bp += nr)
        for (j = 0; j < nr; j += 8)
            _mm256_storeu_ps(bp + j, lt__bf16_round8_f32(_mm256_loadu_si256((const __m256i *)(const void *)(b + j))));
}
#endif
/* lt__pack_b for a converted operand: B as is, one k row (nc values) at a time; B transposed,
   the NR stored rows of a sliver converted into a float32 block that lt__pack_b then turns.  A
   float32 weight rounded to 16 bits takes packers of its own: from memory (as a rule) a copy
   rounded after in L1, from the caches (B->warm: the panel was fetched ahead) rounded on the way. */
static void lt__pack_b16(int tb, int isa, const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *bp) {
    int64_t js, k;
    int j;
#ifdef LT__X86
    if (!tb && B->f && B->p == LT_BF16 && !B->ce && B->warm && isa >= 1 && nr % 8 == 0 && nc % nr == 0) {
        /* float32 values rounded to bf16 (a weight) whose rows were fetched into the caches ahead:
           rounded on the way, 8 at a time (in cache about 1.5x as fast as the copy then rounding
           below; from memory slower: bench/precision.md) */
        for (js = 0; js < nc; js += nr, bp += kc * nr) lt__pack_b_rb_avx2(B->f + js, ldb, kc, nr, bp);
        return;
    }
#endif
    if (!tb && B->f && B->p && !B->ce) {
        /* float32 values rounded to 16 bits (a weight, as a rule): each sliver copied as
           float32's packing copies it, then rounded while it is in L1.  A weight comes from
           memory (AdamW and the activations pass between its uses), and a copy loop keeps more
           of its rows in flight than one that rounds on the way (bench/pack.c --cold) */
        for (js = 0; js < nc; js += nr, bp += kc * nr) {
            lt__pack_b(0, isa, B->f + js, ldb, kc, nc - js < nr ? nc - js : nr, nr, bp);
            lt__round16((lt_dtype)B->p, bp, bp, (size_t)(kc * nr));
        }
        return;
    }
    if (!tb) {
        float row[LT__GEMM_NC_MAX];
#ifdef LT__X86
        if (isa == 2 && nr % 16 == 0 && !B->ce) { lt__pack_b16n_avx512(B, ldb, kc, nc, nr, bp); return; }
        if (isa == 1 && nr % 8 == 0 && !B->ce && lt__k_available(LT__K_AVX2)) {
            lt__pack_b16n_avx2(B, ldb, kc, nc, nr, bp);
            return;
        }
#endif
        for (k = 0; k < kc; k++) {
            lt__gsrc_get(isa, B, k * ldb, nc, row);
            if (k + 4 < kc) lt__gsrc_prefetch(B, (k + 4) * ldb, nc);
            for (js = 0; js < nc; js += nr) {
                float *d = bp + js * kc + k * nr;   /* sliver js/nr starts at js*kc */
                int w = nc - js < nr ? (int)(nc - js) : nr;
                memcpy(d, row + js, (size_t)w * sizeof(float));
                for (j = w; j < nr; j++) d[j] = 0.0f;
            }
        }
        return;
    }
    if (B->f && B->p && !B->ce && B->warm) {
        /* float32 values (a weight W, op(B) = Wᵀ) rounded to 16 bits, their rows fetched into the
           caches ahead (B->warm): turned 8 x 8 as float32's packing turns them, bf16 rounded in
           the registers on the way (lt__tr8x8's rb), fp16 and partial slivers rounded in L1
           after.  In cache that is about 1.5x as fast as the rows-then-turn below; from memory
           it is slower (bench/precision.md) */
        for (js = 0; js < nc; js += nr, bp += kc * nr) {
            int w = nc - js < nr ? (int)(nc - js) : nr;
#ifdef LT__X86
            if (isa >= 1 && w == nr && kc % 8 == 0 && B->p == LT_BF16) {
                for (k = 0; k < kc; k += 8)
                    for (j = 0; j < nr; j += 8) lt__tr8x8(B->f + (js + j) * ldb + k, ldb, bp + k * nr + j, nr, 1);
                continue;
            }
#endif
            lt__pack_b(1, isa, B->f + js * ldb, ldb, kc, w, nr, bp);
            lt__round16((lt_dtype)B->p, bp, bp, (size_t)(kc * nr));
        }
        return;
    }
    {
        float blk[32 * LT__KC_MAX];
        for (js = 0; js < nc; js += nr, bp += kc * nr) {
            int w = nc - js < nr ? (int)(nc - js) : nr;
            for (j = 0; j < w; j++) {
                lt__gsrc_get(isa, B, (js + j) * ldb, kc, blk + j * kc);
                if (js + nr + j < nc) lt__gsrc_prefetch(B, (js + nr + j) * ldb, kc);   /* the next sliver's */
            }
            lt__pack_b(1, isa, blk, kc, kc, w, nr, bp);
        }
    }
}

#ifdef LT__X86
/* ---- @@GEMM.pack_bf16  packing straight into bf16 pairs (the bf16dp and AMX kernels) ------------ */
/* The four cases write the pair panels (@@GEMM.bf16dp) straight from the operand, 16 values at a
   time.  AVX512_BF16 CPUs all have AVX512BW and VL. */
/* the bf16 bits of s at at..at+n (n <= 16, the rest 0), zero-extended into 32-bit lanes; a gelu
   operand's values looked up in gelu16's bf16 table (one gather: its values are bf16-exact
   floats, so their high halves are the bits lt__gsrc_get's values have) */
LT__TARGET("avx512f,avx512bw,avx512vl") static inline __m512i lt__bf16_bits(const lt__gsrc *s, int64_t at, int n) {
    __mmask16 k = (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
    if (s->gelu) {
        __m512i x = _mm512_maskz_cvtepu16_epi32(k, _mm256_maskz_loadu_epi16(k, s->h + at));
        __m512i y = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), k, x, lt__gelu16_y[0], 4);
        return _mm512_maskz_srli_epi32(LT__M16, y, 16);
    }
    if (s->h) return _mm512_maskz_cvtepu16_epi32(k, _mm256_maskz_loadu_epi16(k, s->h + at));
    return lt__bf16_round16(_mm512_maskz_loadu_epi32(k, s->f + at));   /* float32: rounded as lt_f32_to_bf16 */
}
/* pair words of two runs: lo's bits in the low half, hi's in the high half */
LT__TARGET("avx512f,avx512bw,avx512vl") static inline __m512i lt__pair_words(__m512i lo, __m512i hi) {
    return _mm512_or_si512(lo, _mm512_maskz_slli_epi32(LT__M16, hi, 16));
}
/* n values of s from at as n bf16 halves at d (n <= 16) */
LT__TARGET("avx512f,avx512bw,avx512vl") static inline void lt__bf16_store(const lt__gsrc *s, int64_t at, int n, uint16_t *d) {
    __mmask16 k = (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
    _mm256_mask_storeu_epi16(d, k, _mm512_maskz_cvtepi32_epi16(LT__M16, lt__bf16_bits(s, at, n)));
}
/* op(B) as is: word (m, j) of a sliver from rows 2m and 2m+1 of B (nr a multiple of 16) */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_b_pairs_n(const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                                                 float *bp) {
    const lt__gsrc b = *B;   /* (the fields in registers: at lt__gsrc) */
    int32_t *q0 = (int32_t *)(void *)bp;
    int64_t js, m;
    for (m = 0; 2 * m < kc; m++) {   /* rows 2m, 2m+1 in order, the next ones prefetched */
        if (2 * m + 5 < kc) {
            lt__gsrc_prefetch(B, (2 * m + 4) * ldb, nc);
            lt__gsrc_prefetch(B, (2 * m + 5) * ldb, nc);
        }
        for (js = 0; js < nc; js += nr) {
            int32_t *q = q0 + js * ((kc + 1) / 2);   /* sliver js/nr (lt__gemm_bcol) */
            int w = nc - js < nr ? (int)(nc - js) : nr, j;
            for (j = 0; j < nr; j += 16) {
                int n = w - j;
                __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
                if (n > 0) lo = lt__bf16_bits(&b, 2 * m * ldb + js + j, n);
                if (n > 0 && 2 * m + 1 < kc) hi = lt__bf16_bits(&b, (2 * m + 1) * ldb + js + j, n);
                _mm512_store_si512((void *)(q + m * nr + j), lt__pair_words(lo, hi));
            }
        }
    }
}
/* 16 x 16 words turned over: out[j] lane i = in[i] lane j.  Pairs of rows interleaved by words,
   then by double words (each 128-bit lane then holds a 4 x 4 block turned), then the lanes dealt
   between four registers. */
LT__TARGET("avx512f") static void lt__tr16_epi32(const __m512i *in, __m512i *out) {
    __m512i t[16], s[16];
    int i, c;
    for (i = 0; i < 8; i++) {
        t[2 * i] = _mm512_maskz_unpacklo_epi32(LT__M16, in[2 * i], in[2 * i + 1]);
        t[2 * i + 1] = _mm512_maskz_unpackhi_epi32(LT__M16, in[2 * i], in[2 * i + 1]);
    }
    for (i = 0; i < 4; i++) {   /* s[4i + c], lane L: column 4L + c of rows 4i..4i+3 */
        s[4 * i] = _mm512_maskz_unpacklo_epi64(0xFF, t[4 * i], t[4 * i + 2]);
        s[4 * i + 1] = _mm512_maskz_unpackhi_epi64(0xFF, t[4 * i], t[4 * i + 2]);
        s[4 * i + 2] = _mm512_maskz_unpacklo_epi64(0xFF, t[4 * i + 1], t[4 * i + 3]);
        s[4 * i + 3] = _mm512_maskz_unpackhi_epi64(0xFF, t[4 * i + 1], t[4 * i + 3]);
    }
    for (c = 0; c < 4; c++) {   /* column 4L + c: lane L of s[c], s[4 + c], s[8 + c], s[12 + c] */
        __m512i ab0 = _mm512_maskz_shuffle_i32x4(LT__M16, s[c], s[4 + c], 0x44);   /* lanes 0 1 of each */
        __m512i ab1 = _mm512_maskz_shuffle_i32x4(LT__M16, s[c], s[4 + c], 0xEE);   /* lanes 2 3 */
        __m512i cd0 = _mm512_maskz_shuffle_i32x4(LT__M16, s[8 + c], s[12 + c], 0x44);
        __m512i cd1 = _mm512_maskz_shuffle_i32x4(LT__M16, s[8 + c], s[12 + c], 0xEE);
        out[c] = _mm512_maskz_shuffle_i32x4(LT__M16, ab0, cd0, 0x88);
        out[4 + c] = _mm512_maskz_shuffle_i32x4(LT__M16, ab0, cd0, 0xDD);
        out[8 + c] = _mm512_maskz_shuffle_i32x4(LT__M16, ab1, cd1, 0x88);
        out[12 + c] = _mm512_maskz_shuffle_i32x4(LT__M16, ab1, cd1, 0xDD);
    }
}
/* op(B) transposed: column j of op(B) is stored row j, where the pairs (2m, 2m+1) are already
   neighbours, so a row's values as bf16 halves in order are its pair words: 16 words (32 values)
   of 16 rows at a time are turned over in registers (lt__tr16_epi32) into 16 pair rows of 16 of
   the sliver's columns (columns past nc: zeros), the next 16 rows fetched meanwhile. */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_b_pairs_t(const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                                                 float *bp) {
    const lt__gsrc b = *B;   /* (the fields in registers: at lt__gsrc) */
    int32_t *q = (int32_t *)(void *)bp;
    int64_t kc2 = (kc + 1) / 2, js, j0, m0;
    for (js = 0; js < nc; js += nr, q += kc2 * nr)   /* (lt__gemm_bcol) */
        for (j0 = 0; j0 < nr; j0 += 16) {
            int64_t r0 = js + j0;   /* the first of these 16 stored rows */
            int n = nc - r0 < 16 ? (int)(nc - r0) : 16, i;
            for (m0 = 0; m0 < kc2; m0 += 16) {
                int64_t k = 2 * m0;
                int l = kc - k < 32 ? (int)(kc - k) : 32, nm = kc2 - m0 < 16 ? (int)(kc2 - m0) : 16;
                __m512i v[16], w[16];
                for (i = 0; i < 16; i++) {
                    int64_t at = (r0 + i) * ldb + k;
                    if (i >= n) { v[i] = _mm512_setzero_si512(); continue; }
                    if (r0 + 16 + i < nc) lt__gsrc_prefetch(B, at + 16 * ldb, l);
                    if (B->h && !B->gelu)
                        v[i] = _mm512_maskz_loadu_epi16(l >= 32 ? ~(__mmask32)0 : ((__mmask32)1 << l) - 1, B->h + at);
                    else {
                        __m256i lo = _mm512_maskz_cvtepi32_epi16(LT__M16, lt__bf16_bits(&b, at, l < 16 ? l : 16));
                        __m256i hi = l > 16 ? _mm512_maskz_cvtepi32_epi16(LT__M16, lt__bf16_bits(&b, at + 16, l - 16)) : _mm256_setzero_si256();
                        v[i] = _mm512_maskz_inserti64x4(0xFF, _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), lo, 0), hi, 1);
                    }
                }
                lt__tr16_epi32(v, w);   /* w[c]: pair word m0 + c of the 16 rows (an odd kc: a zero partner) */
                for (i = 0; i < nm; i++) _mm512_store_si512((void *)(q + (m0 + i) * nr + j0), w[i]);
            }
        }
}
/* op(A) as is: each row's kc values as kc halves at the row's start (rows past mc: zeros) */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_a_pairs_r(const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                                                 float *ap) {
    const lt__gsrc a = *A;   /* (the fields in registers: at lt__gsrc) */
    int64_t rows = (mc + mr - 1) / mr * mr, r, k;
    for (r = 0; r < rows; r++) {
        uint16_t *d = (uint16_t *)(void *)(ap + r * LT__KS);
        if (r + 4 < mc) lt__gsrc_prefetch(A, (r + 4) * lda, kc);
        if (r >= mc) memset(d, 0, (size_t)(kc + 1) * sizeof(uint16_t));
        else if (A->h && !A->gelu) memcpy(d, A->h + r * lda, (size_t)kc * sizeof(uint16_t));
        else
            for (k = 0; k < kc; k += 16) lt__bf16_store(&a, r * lda + k, kc - k < 16 ? (int)(kc - k) : 16, d + k);
        if (kc & 1) d[kc] = 0;
    }
}
/* op(A) transposed: stored rows 2m and 2m+1 give the words of all mc rows of op(A) for pair m,
   16 at a time in registers, dealt to the slivers (lt__deal_slivers). */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_a_pairs_t(const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                                                 float *ap) {
    const lt__gsrc a = *A;   /* (the fields in registers: at lt__gsrc) */
    __m512i v[LT__GEMM_MC_MAX / 16 + 2];
    int32_t *q = (int32_t *)(void *)ap;
    int nv = (int)((mc + 15) / 16), c;
    int64_t m;
    for (m = 0; 2 * m < kc; m++) {
        if (2 * m + 5 < kc) {
            lt__gsrc_prefetch(A, (2 * m + 4) * lda, mc);
            lt__gsrc_prefetch(A, (2 * m + 5) * lda, mc);
        }
        for (c = 0; c < nv; c++) {
            int n = mc - 16 * c < 16 ? (int)(mc - 16 * c) : 16;
            __m512i hi = 2 * m + 1 < kc ? lt__bf16_bits(&a, (2 * m + 1) * lda + 16 * c, n) : _mm512_setzero_si512();
            v[c] = lt__pair_words(lt__bf16_bits(&a, 2 * m * lda + 16 * c, n), hi);
        }
        lt__deal_slivers(v, mc, mr, q + m * mr);
    }
}
/* The pair panels for the bf16dp and AMX kernels */
static void lt__pack_b_dp(int tb, const lt__gsrc *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *bp) {
    if (tb) lt__pack_b_pairs_t(B, ldb, kc, nc, nr, bp);
    else lt__pack_b_pairs_n(B, ldb, kc, nc, nr, bp);
}
static void lt__pack_a_dp(int ta, const lt__gsrc *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *ap) {
    if (ta) lt__pack_a_pairs_t(A, lda, mc, kc, mr, ap);
    else lt__pack_a_pairs_r(A, lda, mc, kc, mr, ap);
}
#ifdef LT__AMX
/* The AMX kernel's A slivers: row-major pairs whatever ta.  As is, those of lt__pack_a_dp.
   Transposed, stored rows 2m and 2m+1 hold pair m of every row of op(A): 16 pairs of 16 rows at
   a time, the pair words of 32 stored rows (16 values each) are turned over (lt__tr16_epi32)
   into 16 runs of 16 words, one per row of op(A) (rows past mc: zeros). */
LT__TARGET("avx512f,avx512bw,avx512vl") static void lt__pack_a_amx(int ta, const lt__gsrc *A, int64_t lda, int64_t mc,
                                                                 int64_t kc, int mr, float *ap) {
    const lt__gsrc a = *A;   /* (the fields in registers: at lt__gsrc) */
    int32_t *q32 = (int32_t *)(void *)ap;
    int64_t pairs = (kc + 1) / 2, rows = (mc + mr - 1) / mr * mr, m0, r0, r;
    if (!ta) { lt__pack_a_dp(0, A, lda, mc, kc, mr, ap); return; }
    for (m0 = 0; m0 < pairs; m0 += 16) {
        int nm = pairs - m0 < 16 ? (int)(pairs - m0) : 16, q, i;
        __mmask16 km = (__mmask16)(nm >= 16 ? 0xFFFFu : (1u << nm) - 1u);
        for (q = 0; q < 32 && 2 * (m0 + 16) + q < kc; q++)   /* the next 32 stored rows */
            lt__gsrc_prefetch(A, (2 * (m0 + 16) + q) * lda, mc);
        for (r0 = 0; r0 < mc; r0 += 16) {
            int n = mc - r0 < 16 ? (int)(mc - r0) : 16;
            __m512i v[16], w[16];
            for (q = 0; q < 16; q++) {
                int64_t k = 2 * (m0 + q);
                __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
                if (q < nm) lo = lt__bf16_bits(&a, k * lda + r0, n);
                if (q < nm && k + 1 < kc) hi = lt__bf16_bits(&a, (k + 1) * lda + r0, n);
                v[q] = lt__pair_words(lo, hi);   /* an odd kc: the last pair's zero partner */
            }
            lt__tr16_epi32(v, w);
            for (i = 0; i < n; i++) _mm512_mask_storeu_epi32(q32 + (r0 + i) * LT__KS + m0, km, w[i]);
        }
    }
    for (r = mc; r < rows; r++) memset(q32 + r * LT__KS, 0, (size_t)pairs * sizeof(int32_t));
}
#endif
#endif /* LT__X86 */

/* The end of a linear layer's forward, applied to each finished block of C while it is in cache
   (one pass over C saved):
     p = 0:          C = C + bias                        (float32; bias (N) or NULL: nothing)
     p = bf16, f16:  C = round16(C + round16(bias))      (16-bit products; bias may be NULL)
   lt__gemm_block hands the float32 bias and bf16 to the register tiles instead, which do the
   same as they store (lt__gemm_tiles' fe); fp16 and z take the pass.
   With z (16-bit products, beta 0), the product's home is z instead: each finished block of C is
   rounded as above, narrowed into z (row stride ldz), and the maxima of its rows' pieces of
   `piece` columns (counted from column col0 of the whole) merged into pm (piece q of row i at
   pm[i·ldpm + q·ldq], -inf before the product; lt__row_max's maximum, NaN ignored, so merging
   parts gives the piece's), or without maxima where pm is NULL (a compiled plan's 16-bit inputs
   of attention16 and gelu16: lt__gemm16_z, @@OPS.matmul16).
   C is then only a scratch of M x ldc floats (blocks no wider: lt__sgemm_ex), one for each of nscr
   threads, which a block of C passes through while it is in L2: the head's 16-bit logits
   (linear_ce16, @@LOSS) without a float32 copy that is written out and read back. */
typedef struct {
    int p;
    const float *bias;
    uint16_t *z;
    float *pm;
    int64_t ldz, ldpm, ldq, col0, piece;
    int nscr;
} lt__gepi;
#define LT__GEPI_ON(e) ((e) && ((e)->p || (e)->bias || (e)->z))
static lt__gepi lt__gepi_of(int p, const float *bias) {
    lt__gepi e;
    memset(&e, 0, sizeof e);
    e.p = p;
    e.bias = bias;
    return e;
}
/* In z mode, the piece that column j of a block (column col0 + j of the whole) lies in: its number
   into *q, and where it ends in the block (at most n) */
static int64_t lt__epi_piece(const lt__gepi *e, int64_t j, int64_t n, int64_t *q) {
    int64_t end;
    *q = (e->col0 + j) / e->piece;
    end = (*q + 1) * e->piece - e->col0;
    return end < n ? end : n;
}
#ifdef LT__X86
/* y[0..n) = round_bf16(y + b) (b NULL: round_bf16(y)), 16 at a time, the tail masked: one pass over
   the row, the rounding as lt__gsrc16_lanes' */
LT__TARGET("avx512f") static void lt__epi_bf16_avx512(const float *b, float *y, int64_t n) {
    int64_t j;
    for (j = 0; j < n; j += 16) {
        __mmask16 k = (__mmask16)(n - j >= 16 ? 0xFFFFu : (1u << (n - j)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, y + j);
        if (b) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, b + j));
        _mm512_mask_storeu_ps(y + j, k, lt__bf16_round_f32(_mm512_castps_si512(v)));
    }
}
/* the same on AVX2 CPUs, either format: the bias added, then the row rounded by lt__round16's
   AVX2 kernels (the row is in L1 for the second pass) */
LT__TARGET("avx2,fma,f16c") static void lt__epi16_avx2(int p, const float *b, float *y, int64_t n) {
    int64_t j = 0;
    if (b) {
        for (; j + 8 <= n; j += 8) _mm256_storeu_ps(y + j, _mm256_add_ps(_mm256_loadu_ps(y + j), _mm256_loadu_ps(b + j)));
        for (; j < n; j++) y[j] += b[j];
    }
    if (p == LT_BF16) lt__round_bf16_avx2(y, y, (size_t)n);
    else lt__round_f16_avx2(y, y, (size_t)n);
}
/* lt__gemm_epi_z's work for bf16 without a bias in one pass over each row, in registers: the
   bf16 patterns (as lt__to16 narrows the rounded values) and the pieces' maxima of their values.
   The rows and pieces here; piece(y, z, n) rounds n values of y, narrows them into z and returns
   the largest of the n float32 sums (-inf for none, a NaN ignored as lt__row_max ignores it),
   which is rounded here: rounding never reverses an order, so that is the largest rounded value
   (at most its zero's sign differs, which no use of the maximum sees: z - m and the loss come out
   the same), and the kernels save the operation a register that rounding each lane took. */
typedef float (*lt__epi_piece_fn)(const float *y, uint16_t *z, int64_t n);
static void lt__epi_z_rows(const lt__gepi *e, const float *C, int64_t ldc, int64_t m, int64_t n, lt__epi_piece_fn piece) {
    int64_t i;
    for (i = 0; i < m; i++) {
        const float *y = C + i * ldc;
        uint16_t *z = e->z + i * e->ldz;
        float *pm = e->pm + i * e->ldpm;   /* (pm is not NULL here: lt__gemm_epilogue) */
        int64_t j = 0;
        while (j < n) {
            int64_t q, end = lt__epi_piece(e, j, n, &q);
            float v = lt_bf16_to_f32(lt_f32_to_bf16(piece(y + j, z + j, end - j)));
            if (v > pm[q * e->ldq]) pm[q * e->ldq] = v;
            j = end;
        }
    }
}
/* AVX-512: 16 values at a time (lt__bf16_round16; vmaxps(x, m) is lt__row_max's x > m ? x : m),
   the patterns streamed past the caches (z is not read again soon), the last few masked */
LT__TARGET("avx512f") static float lt__epi_piece_bf16_avx512(const float *y, uint16_t *z, int64_t n) {
    __m512 mx = _mm512_set1_ps(-INFINITY);
    int64_t j;
    for (j = 0; j + 16 <= n; j += 16) {
        __m512i u = _mm512_loadu_si512((const void *)(y + j)), r = lt__bf16_round16(u);
        mx = _mm512_mask_max_ps(mx, LT__M16, _mm512_castsi512_ps(u), mx);
        if (((uintptr_t)(z + j) & 31) == 0)
            _mm256_stream_si256((__m256i *)(void *)(z + j), _mm512_maskz_cvtepi32_epi16(LT__M16, r));
        else
            _mm256_storeu_si256((__m256i *)(void *)(z + j), _mm512_maskz_cvtepi32_epi16(LT__M16, r));
    }
    if (j < n) {
        __mmask16 k = (__mmask16)((1u << (n - j)) - 1u);
        __m512i u = _mm512_maskz_loadu_epi32(k, y + j), r = lt__bf16_round16(u);
        mx = _mm512_mask_max_ps(mx, k, _mm512_castsi512_ps(u), mx);
        _mm512_mask_cvtepi32_storeu_epi16(z + j, k, r);
    }
    return lt__lanes_max16(mx);
}
/* AVX2: 16 values (two registers) at a time (lt__bf16_round8), two registers of maxima, the
   patterns packed to 16 bits (vpackusdw works within 128-bit halves: a permute puts them back in
   order) and streamed as above; the last few (< 16) one by one */
LT__TARGET("avx2,fma") static float lt__epi_piece_bf16_avx2(const float *y, uint16_t *z, int64_t n) {
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
    float t[16], v;
    int64_t j;
    int l;
    for (j = 0; j + 16 <= n; j += 16) {
        __m256 ya = _mm256_loadu_ps(y + j), yb = _mm256_loadu_ps(y + j + 8);
        __m256i a = lt__bf16_round8(_mm256_castps_si256(ya)), b = lt__bf16_round8(_mm256_castps_si256(yb));
        __m256i h = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        m0 = _mm256_max_ps(ya, m0);
        m1 = _mm256_max_ps(yb, m1);
        if (((uintptr_t)(z + j) & 31) == 0) _mm256_stream_si256((__m256i *)(void *)(z + j), h);
        else _mm256_storeu_si256((__m256i *)(void *)(z + j), h);
    }
    _mm256_storeu_ps(t, m0);
    _mm256_storeu_ps(t + 8, m1);
    for (v = t[0], l = 1; l < 16; l++) v = t[l] > v ? t[l] : v;
    for (; j < n; j++) {
        z[j] = lt_f32_to_bf16(y[j]);
        v = y[j] > v ? y[j] : v;
    }
    return v;
}
#endif
/* The rounded block (m x n, at column col0 of the whole) into z and its pieces' maxima into pm
   (none where pm is NULL) */
static void lt__gemm_epi_z(const lt__gepi *e, const float *C, int64_t ldc, int64_t m, int64_t n) {
    int64_t i;
    for (i = 0; i < m; i++) {
        const float *y = C + i * ldc;
        float *pm = e->pm ? e->pm + i * e->ldpm : NULL;
        int64_t j = 0;
        while (pm && j < n) {
            int64_t q, end = lt__epi_piece(e, j, n, &q);
            float mx = lt__row_max(y + j, end - j);
            if (mx > pm[q * e->ldq]) pm[q * e->ldq] = mx;
            j = end;
        }
        lt__to16((lt_dtype)e->p, y, e->z + i * e->ldz, (size_t)n);
    }
}
static void lt__gemm_epilogue(int isa, const lt__gepi *e, float *C, int64_t ldc, int64_t m, int64_t n) {
    float b16[LT__GEMM_NC_MAX];
    int64_t i, j;
    lt__gsrc s = lt__gsrc_f32(e->bias);
    if (!e->p) {
        for (i = 0; i < m; i++) {
            float *y = C + i * ldc;
            LT__OMP(simd)
            for (j = 0; j < n; j++) y[j] += e->bias[j];
        }
        return;
    }
    s.p = e->p;
    if (e->bias) lt__gsrc_get(isa, &s, 0, n, b16);
#ifdef LT__X86
    if (isa == 2 && e->p == LT_BF16 && e->z && e->pm && !e->bias) {
        lt__epi_z_rows(e, C, ldc, m, n, lt__epi_piece_bf16_avx512);
        return;
    }
    if (isa == 2 && e->p == LT_BF16) {
        for (i = 0; i < m; i++) lt__epi_bf16_avx512(e->bias ? b16 : NULL, C + i * ldc, n);
        if (e->z) lt__gemm_epi_z(e, C, ldc, m, n);
        return;
    }
    if (isa == 1 && e->p == LT_BF16 && e->z && e->pm && !e->bias && lt__k_available(LT__K_AVX2)) {
        lt__epi_z_rows(e, C, ldc, m, n, lt__epi_piece_bf16_avx2);
        return;
    }
    if (isa == 1 && lt__k_available(LT__K_AVX2)) {
        for (i = 0; i < m; i++) lt__epi16_avx2(e->p, e->bias ? b16 : NULL, C + i * ldc, n);
        if (e->z) lt__gemm_epi_z(e, C, ldc, m, n);
        return;
    }
#endif
    for (i = 0; i < m; i++) {
        float *y = C + i * ldc;
        if (e->bias) for (j = 0; j < n; j++) y[j] += b16[j];
        s.f = y;
        lt__gsrc_get(isa, &s, 0, n, y);
    }
    if (e->z) lt__gemm_epi_z(e, C, ldc, m, n);
}

/* ---- @@GEMM.block  one thread's block of C ---------------------------------------------------- */
/* The B panel that the next (jc, pc) step will pack, fetched into L2 a few lines before each
   micro-kernel call of this step, so that packing it reads cache instead of memory.  Weights are
   cold in a training step (a whole step of other data passed since their last use), and packing
   does not overlap the FMAs: at 2 threads a thread has half the FMAs but reads as many bytes per
   panel, so the wait shows most there (bench/design.md).  Only blocks of C up to
   LT__PF_ROWS rows tall: each packed value then feeds few FMAs, so packing's wait for memory
   is a visible share of a panel's time; taller blocks hide it.
   Taller blocks get the same help for A instead: the next MC x KC block of A, which the next
   packing of A reads from rows LDA apart, is fetched during this block's tiles.  Where A, B and C
   together outgrow the L3 (2048^3: 48 MiB) that packing read memory, 1-2.5% of the product's
   time at 1 and 2 threads (bench/design.md).  Not while C is streamed (lt__gemm_stream_fit): A
   is small then (K <= LT__KC_MAX) and stays in the caches, and the fetches only take a share of
   the bandwidth that C's stores need (the head's logits: 2.4% slower with them at 2 threads). */
#define LT__PF_ROWS 384
typedef struct {
    const char *row0;     /* the first row's first byte */
    int64_t stride;       /* bytes from a row to the next */
    int64_t rows, bytes;  /* rows to fetch, bytes of each */
    int64_t r, off;       /* the next line: row r, offset off from its start rounded down to a line */
    int64_t per_call;     /* lines fetched before each micro-kernel call */
} lt__pf;
static void lt__pf_set(lt__pf *f, const lt__gsrc *B, int tb, int64_t ldb, int64_t pc, int64_t jc, int64_t kc,
                       int64_t nc, int64_t calls) {
    int64_t es = B->h ? 2 : 4, lines;
    const char *base = B->h ? (const char *)B->h : (const char *)B->f;
    f->row0 = base + (tb ? jc * ldb + pc : pc * ldb + jc) * es;
    f->stride = ldb * es;
    f->rows = tb ? nc : kc;
    f->bytes = (tb ? kc : nc) * es;
    f->r = 0;
    f->off = 0;
    lines = f->rows * ((f->bytes + 63) / 64 + 1);
    f->per_call = lines / (calls > 0 ? calls : 1) + 1;
}
static void lt__pf_step(lt__pf *f) {
#if defined(__GNUC__) || defined(__clang__)
    int64_t n;
    for (n = 0; n < f->per_call && f->r < f->rows; n++) {
        const char *row = f->row0 + f->r * f->stride;
        const char *line = (const char *)((uintptr_t)row & ~(uintptr_t)63) + f->off;
        __builtin_prefetch(line, 0, 2);
        f->off += 64;
        if (line + 64 >= row + f->bytes) { f->off = 0; f->r++; }
    }
#else
    (void)f;
#endif
}
/* Floats (pair words for the bf16 pair kernels) that a column of a packed B sliver takes: sliver
   j/nr of a KC-row panel starts at j x lt__gemm_bcol(g, kc) */
static int64_t lt__gemm_bcol(const lt__gemm_impl *g, int64_t kc) { return g->dp ? (kc + 1) / 2 : kc; }
/* The register tiles of a packed A block (mc x kc, slivers MR tall) against a packed B panel
   (kc x nc, slivers NR wide): C (mc, nc) = alpha·A·B + bet·C, a partial tile computed on the
   side and merged.  A sliver of fewer rows runs on the shortest short-tile kernel that covers
   them, if any; a full tile with streaming stores where g->stream and bet is 0.  ta: A's slivers
   are k-major.  pf[0], pf[1]: prefetches spread over the tiles (lt__pf_step; B's next panel,
   A's next block).  fe (NULL: none): the epilogue of the block's last K block, done here tile by
   tile (fe->bias at the block's first column): float32 (fe->p 0) with a bias, or bf16; row: the nc
   floats the full tiles' kernels add as they store (g->bk, g->br: the bias; g->rk, g->rr: the
   bias rounded, or -0.0 without one, then the sum rounded); the other tiles run
   lt__gemm_epilogue on themselves after their product.  Either way each element gets the sums
   the epilogue's pass over the finished block would give, while the tile is in registers or L1. */
static void lt__gemm_tiles(const lt__gemm_impl *g, int ta, int64_t mc, int64_t nc, int64_t kc, const float *ap,
                           const float *bp, float alpha, float bet, float *C, int64_t ldc, lt__pf *pf,
                           const lt__gepi *fe, const float *row) {
    float edge[32 * 32];   /* the largest MR x NR (AMX's) */
    int64_t ir, jr, bc = lt__gemm_bcol(g, kc);
    for (ir = 0; ir < mc; ir += g->mr) {
        int h = mc - ir < g->mr ? (int)(mc - ir) : g->mr, kh = g->mr, s;   /* kh: the kernel's rows */
        const float *as = ap + ir * LT__KS;
        lt__ukernel fn = ta ? g->fn_k : g->fn_r, full;   /* full: for tiles wholly inside C */
        for (s = 0; s < 2 && h < g->mr; s++)
            if (g->sk[s] && h <= g->sh[s]) {
                fn = ta ? g->sk[s] : g->sr[s];
                kh = g->sh[s];
                break;
            }
        lt__ukernel_b fb = !fe || kh != g->mr ? NULL : fe->p ? (ta ? g->rk : g->rr) : (ta ? g->bk : g->br);
        int rounds = 0;   /* the streaming kernel rounds to bf16 itself (fe bf16 without a bias) */
        full = g->stream && bet == 0.0f && kh == g->mr ? (ta ? g->nk : g->nr_) : fn;
        if (g->stream && bet == 0.0f && kh == g->mr && fe && fe->p == LT_BF16 && !fe->bias) {
            full = ta ? g->nkr : g->nrr;
            rounds = 1;
            fb = NULL;
        }
        for (jr = 0; jr < nc; jr += g->nr) {
            int w = nc - jr < g->nr ? (int)(nc - jr) : g->nr, i, j;
            float *c = C + ir * ldc + jr;
            lt__pf_step(pf);
            lt__pf_step(pf + 1);
            if (h == kh && w == g->nr && rounds) {
                full(kc, as, bp + jr * bc, c, ldc, alpha, bet);
                continue;
            }
            if (h == kh && w == g->nr && fb) {
                fb(kc, as, bp + jr * bc, c, ldc, alpha, bet, row + jr);
                continue;
            }
            if (h == kh && w == g->nr) full(kc, as, bp + jr * bc, c, ldc, alpha, bet);
            else {
                fn(kc, as, bp + jr * bc, edge, g->nr, alpha, 0.0f);
                for (i = 0; i < h; i++)
                    for (j = 0; j < w; j++)
                        c[i * ldc + j] = edge[i * g->nr + j] + (bet == 0.0f ? 0.0f : bet * c[i * ldc + j]);
            }
            if (fe) {
                lt__gepi e = *fe;
                if (e.bias) e.bias += jr;
                lt__gemm_epilogue(g->isa, &e, c, ldc, h, w);
            }
        }
    }
}
/* op(B)[0..kc, 0..nc] (bs at its first element) packed as the kernel wants it */
static void lt__gemm_pack_b(const lt__gemm_impl *g, int tb, const lt__gsrc *bs, int64_t ldb, int64_t kc, int64_t nc,
                            float *bp) {
#ifdef LT__X86
    if (g->dp) { lt__pack_b_dp(tb, bs, ldb, kc, nc, g->nr, bp); return; }
#endif
    if (bs->h || bs->p) lt__pack_b16(tb, g->isa, bs, ldb, kc, nc, g->nr, bp);
    else lt__pack_b(tb, g->isa, bs->f, ldb, kc, nc, g->nr, bp);
}
/* op(A)[0..mc, 0..kc] (as at its first element) packed as the kernel wants it */
static void lt__gemm_pack_a(const lt__gemm_impl *g, int ta, const lt__gsrc *as, int64_t lda, int64_t mc, int64_t kc,
                            float *ap) {
#ifdef LT__X86
#ifdef LT__AMX
    if (g->amx) { lt__pack_a_amx(ta, as, lda, mc, kc, g->mr, ap); return; }
#endif
    if (g->dp) { lt__pack_a_dp(ta, as, lda, mc, kc, g->mr, ap); return; }
#endif
    if (as->h || as->p) lt__pack_a16(ta, g->isa, as, lda, mc, kc, g->mr, ap);
    else lt__pack_a(ta, g->isa, as->f, lda, mc, kc, g->mr, ap);
}

static void lt__gemm_block(const lt__gemm_impl *g, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                           lt__gsrc A, int64_t lda, lt__gsrc B, int64_t ldb, float beta, float *C,
                           int64_t ldc, const lt__gepi *epi) {
    float buf[LT__GEMM_MAXA + LT__GEMM_MAXB + 32];
    float *ap = (float *)(((uintptr_t)buf + 63) & ~(uintptr_t)63), *bp = ap + LT__GEMM_MAXA;
    int64_t jc, pc, ic;
    lt__pf pf[2];   /* B's next panel, A's next block */
    int fetched = 0;   /* the panel packed next was asked for during this one's tiles (pf[0]) */
    /* z without maxima and all of K in one piece (lt__gemm_part): every block of C is final after
       its one piece, so one block of the scratch serves them all, and the tiles' epilogue applies */
    int once = epi && epi->z && !epi->pm && K <= g->kc;
    /* the epilogue done by the tiles (lt__gemm_tiles' fe): a float32 bias, or bf16 where this
       kernel has its rounding kernels; row: what their kernels add (the bias, rounded for bf16) */
    int fuse = epi && (!epi->z || once) && ((!epi->p && epi->bias) || (epi->p == LT_BF16 && g->rk));
    float row[LT__GEMM_NC_MAX];
    lt__gepi fe;
    memset(&fe, 0, sizeof fe);
    if (fuse) {
        fe = *epi;
        fe.z = NULL;   /* (once: the tiles round, the finished block is narrowed below) */
        fe.pm = NULL;
    }
    for (jc = 0; jc < N; jc += g->nc) {
        int64_t nc = N - jc < g->nc ? N - jc : g->nc;
        if (fuse) {
            fe.bias = epi->bias ? epi->bias + jc : NULL;
            if (epi->p && fe.bias) {   /* the bias rounded, as lt__gemm_epilogue rounds it */
                lt__gsrc s = lt__gsrc_f32(fe.bias);
                s.p = epi->p;
                lt__gsrc_get(g->isa, &s, 0, nc, row);
            } else if (epi->p) {
                int64_t j;
                for (j = 0; j < nc; j++) row[j] = -0.0f;   /* adds nothing, not even to -0.0 */
            }
        }
        float *cb = epi && epi->z ? C : C + jc;   /* C's columns jc.., or the scratch (lt__gepi) */
        for (pc = 0; pc < K; pc += g->kc) {
            int64_t kc = K - pc < g->kc ? K - pc : g->kc;
            float bet = pc == 0 ? beta : 1.0f;
            lt__gsrc bs = lt__gsrc_at(B, tb ? jc * ldb + pc : pc * ldb + jc);
            bs.warm = fetched;   /* fetched during the last panel's tiles (below) */
            lt__gemm_pack_b(g, tb, &bs, ldb, kc, nc, bp);
            {   /* the next panel: the next K block of these columns, else the next columns' first */
                int64_t npc = pc + kc < K ? pc + kc : 0, njc = pc + kc < K ? jc : jc + nc;
                int64_t nkc = K - npc < g->kc ? K - npc : g->kc, nnc = N - njc < g->nc ? N - njc : g->nc;
                int64_t calls = (M + g->mr - 1) / g->mr * ((nc + g->nr - 1) / g->nr);
                fetched = njc < N && M <= LT__PF_ROWS;
                if (fetched) lt__pf_set(&pf[0], &B, tb, ldb, npc, njc, nkc, nnc, calls);
                else memset(&pf[0], 0, sizeof pf[0]);
            }
            for (ic = 0; ic < M; ic += g->mc) {
                int64_t mc = M - ic < g->mc ? M - ic : g->mc;
                lt__gsrc as = lt__gsrc_at(A, ta ? pc * lda + ic : ic * lda + pc);
                lt__gemm_pack_a(g, ta, &as, lda, mc, kc, ap);
                memset(&pf[1], 0, sizeof pf[1]);
                if (M > LT__PF_ROWS && ic + mc < M && !g->stream) {
                    /* op(A)[i, k] lies as op(B)[k, j] would with i for k and k for j: A's next
                       block is the "panel" of rows ic + mc.. (nmc of them) and columns pc.. (kc) */
                    int64_t nmc = M - ic - mc < g->mc ? M - ic - mc : g->mc;
                    int64_t calls = (mc + g->mr - 1) / g->mr * ((nc + g->nr - 1) / g->nr);
                    lt__pf_set(&pf[1], &A, ta, lda, ic + mc, pc, nmc, kc, calls);
                }
                float *cblk = once ? cb : cb + ic * ldc;
                lt__gemm_tiles(g, ta, mc, nc, kc, ap, bp, alpha, bet, cblk, ldc, pf,
                               fuse && pc + kc >= K ? &fe : NULL, fe.p ? row : fe.bias);
                if (LT__GEPI_ON(epi) && pc + kc >= K && (!fuse || once)) {   /* this block of C is final */
                    lt__gepi e = *epi;
                    if (e.bias) e.bias += jc;
                    if (e.z) { e.z += ic * e.ldz + jc; e.col0 += jc; }
                    if (e.pm) e.pm += ic * e.ldpm;
                    if (fuse) lt__gemm_epi_z(&e, cblk, ldc, mc, nc);   /* (rounded by the tiles: narrowed) */
                    else lt__gemm_epilogue(g->isa, &e, cblk, ldc, mc, nc);
                }
            }
        }
    }
#ifdef LT__X86
    if (g->stream || (epi && epi->z))   /* streamed lines (C; z, lt__epi_piece_bf16_*) reach memory */
        _mm_sfence();                    /* before the threads meet */
#endif
}

/* ---- @@GEMM.blockz  a product narrowed into 16-bit values (lt__gepi's z) ------------------------ */
/* The head's 16-bit logits (linear_ce16, @@LOSS) in lt__gemm_block's loops with two changes.  Each
   MC x NC block of C gets all of K before the next block starts (ic outside pc), so it stays in L2
   from its first sums to its narrowing and the scratch is one block: lt__gemm_block would take
   every block's first KC sums, then all the next ones, through a scratch of M x NC that outgrows
   L2.  For that B's panel holds all of K, its KC-row pieces packed one after another, and NC
   shrinks to fit it in one panel's floats (320 for gpt-mini's K = 384; the bf16 pair kernels'
   pair words take half as many, lt__gemm_bcol, so twice the columns).  A is packed again for
   each panel, into the L2-sized buffer its tiles read next: packed once for all panels, A would
   lie in L3 and the tiles would wait for it (bench/precision.md).  Every element sums the same products in
   the same KC pieces and order as lt__gemm_block: the same values.  Only where a panel holds four
   slivers of all of K (lt__gemm_z_fits); lt__gemm_block serves the others. */
static int lt__gemm_z_fits(const lt__gemm_impl *g, int64_t K) { return lt__gemm_bcol(g, K) * g->nr * 4 <= LT__GEMM_PANEL; }
static void lt__gemm_block_z(const lt__gemm_impl *g, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                             lt__gsrc A, int64_t lda, lt__gsrc B, int64_t ldb, float *C, int64_t ldc,
                             const lt__gepi *epi) {
    float buf[LT__GEMM_MAXA + LT__GEMM_MAXB + 32];
    float *ap = (float *)(((uintptr_t)buf + 63) & ~(uintptr_t)63), *bp = ap + LT__GEMM_MAXA;
    int64_t ncz = LT__GEMM_PANEL / lt__gemm_bcol(g, K) / g->nr * g->nr, npcs = (K + g->kc - 1) / g->kc, jc, pc, ic;
    lt__pf pf[2];   /* B's next panel; nothing for A */
    if (ncz > g->nc) ncz = g->nc;
    memset(pf, 0, sizeof pf);
    for (jc = 0; jc < N; jc += ncz) {
        int64_t nc = N - jc < ncz ? N - jc : ncz, ncr = (nc + g->nr - 1) / g->nr * g->nr;
        for (pc = 0; pc < K; pc += g->kc) {   /* all of K: KC-row pieces of lt__gemm_bcol(kc) x ncr floats */
            lt__gsrc bs = lt__gsrc_at(B, tb ? jc * ldb + pc : pc * ldb + jc);
            lt__gemm_pack_b(g, tb, &bs, ldb, K - pc < g->kc ? K - pc : g->kc, nc, bp + lt__gemm_bcol(g, pc) * ncr);
        }
        if (jc + nc < N) {
            int64_t nnc = N - jc - nc < ncz ? N - jc - nc : ncz;
            lt__pf_set(&pf[0], &B, tb, ldb, 0, jc + nc, K, nnc, (M + g->mr - 1) / g->mr * (ncr / g->nr) * npcs);
        } else memset(&pf[0], 0, sizeof pf[0]);
        for (ic = 0; ic < M; ic += g->mc) {
            int64_t mc = M - ic < g->mc ? M - ic : g->mc;
            lt__gepi e = *epi;
            for (pc = 0; pc < K; pc += g->kc) {
                int64_t kc = K - pc < g->kc ? K - pc : g->kc;
                lt__gsrc as = lt__gsrc_at(A, ta ? pc * lda + ic : ic * lda + pc);
                lt__gemm_pack_a(g, ta, &as, lda, mc, kc, ap);
                lt__gemm_tiles(g, ta, mc, nc, kc, ap, bp + lt__gemm_bcol(g, pc) * ncr, alpha, pc == 0 ? 0.0f : 1.0f, C, ldc, pf, NULL,
                               NULL);
            }
            e.z += ic * e.ldz + jc;
            if (e.pm) e.pm += ic * e.ldpm;
            e.col0 += jc;
            lt__gemm_epilogue(g->isa, &e, C, ldc, mc, nc);
        }
    }
#ifdef LT__X86
    _mm_sfence();   /* z's streamed lines (lt__epi_piece_bf16_*) reach memory before the threads meet */
#endif
}

/* ---- @@GEMM.blockk  a C larger than L2: each block of rows takes all of K first ----------------- */
/* lt__gemm_block gives every block of C its first KC sums, then goes over all of C again for the
   next KC rows of K.  Where C (M x N floats) does not stay in L2, each of those passes stores C to
   memory and loads it back: K/KC trips of all of C.  The head's weight gradient at 16 bits
   (dW = dzᵀ·x: 50304 x 384 floats, K = the batch's 1024 rows) moved its 77 MB that way four times.
   Where B packed whole (all of K and all of N) takes at most half of L2, it is packed once into a
   heap buffer, KC-row pieces one after another (as lt__gemm_block_z's panel), and the loops turn:
   for each MC rows of A, all of K, each piece against all of N, so that MC x N block of C stays in
   L2 from its first sums to its last and goes to memory once.  A is packed once per MC x KC block
   as before; every element gets the same sums in the same KC pieces and order as lt__gemm_block:
   the same bits.  Products without an epilogue only (the weight gradients); a failed allocation
   leaves the product to lt__gemm_block.  lt__gemm_kin_l2: the L2 bytes to plan for (-1: cpuid's;
   the tests lower it to reach this path with small products). */
static int64_t lt__gemm_kin_l2 = -1;
static int64_t lt__gemm_kin_floats(const lt__gemm_impl *g, int64_t N, int64_t K) {
    return lt__gemm_bcol(g, K) * ((N + g->nr - 1) / g->nr * g->nr);
}
static int lt__gemm_kin_fits(const lt__gemm_impl *g, int64_t M, int64_t N, int64_t K, const lt__gepi *epi) {
    int64_t l2 = lt__gemm_kin_l2 >= 0 ? lt__gemm_kin_l2 : lt__cpu_cache(2);
    return !epi && !g->stream && K > g->kc && l2 > 0 && (double)M * (double)N * 4.0 > 2.0 * (double)l2 &&
           M > g->mc && lt__gemm_kin_floats(g, N, K) * 4 <= l2 / 2;
}
static int lt__gemm_block_kin(const lt__gemm_impl *g, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                              lt__gsrc A, int64_t lda, lt__gsrc B, int64_t ldb, float beta, float *C, int64_t ldc) {
    float abuf[LT__GEMM_MAXA + 16], *ap = (float *)(((uintptr_t)abuf + 63) & ~(uintptr_t)63), *bp;
    int64_t ncr = (N + g->nr - 1) / g->nr * g->nr, pc, ic;
    void *bbuf = LT__MALLOC(((size_t)lt__gemm_kin_floats(g, N, K) + 16) * sizeof(float));   /* + alignment */
    lt__pf pf[2];   /* none for B (in L2); A's next block */
    if (!bbuf) return 0;
    bp = (float *)(((uintptr_t)bbuf + 63) & ~(uintptr_t)63);
    memset(pf, 0, sizeof pf);
    for (pc = 0; pc < K; pc += g->kc) {
        lt__gsrc bs = lt__gsrc_at(B, tb ? pc : pc * ldb);
        lt__gemm_pack_b(g, tb, &bs, ldb, K - pc < g->kc ? K - pc : g->kc, N, bp + lt__gemm_bcol(g, pc) * ncr);
    }
    for (ic = 0; ic < M; ic += g->mc) {
        int64_t mc = M - ic < g->mc ? M - ic : g->mc;
        for (pc = 0; pc < K; pc += g->kc) {
            int64_t kc = K - pc < g->kc ? K - pc : g->kc;
            lt__gsrc as = lt__gsrc_at(A, ta ? pc * lda + ic : ic * lda + pc);
            /* A's next block, fetched over this one's tiles: the next KC columns, else the next rows' first */
            int64_t npc = pc + kc < K ? pc + kc : 0, nic = pc + kc < K ? ic : ic + mc;
            lt__gemm_pack_a(g, ta, &as, lda, mc, kc, ap);
            if (nic < M)
                lt__pf_set(&pf[1], &A, ta, lda, nic, npc, M - nic < g->mc ? M - nic : g->mc,
                           K - npc < g->kc ? K - npc : g->kc, (mc + g->mr - 1) / g->mr * (ncr / g->nr));
            else memset(&pf[1], 0, sizeof pf[1]);
            lt__gemm_tiles(g, ta, mc, N, kc, ap, bp + lt__gemm_bcol(g, pc) * ncr, alpha, pc == 0 ? beta : 1.0f,
                           C + ic * ldc, ldc, pf, NULL, NULL);
        }
    }
    LT__FREE(bbuf);
    return 1;
}

/* One thread's part: lt__gemm_block_z for a product into z where a panel holds all of K (but
   lt__gemm_block for one without maxima whose K is one KC piece: it has the tiles' epilogue),
   lt__gemm_block_kin for a C larger than L2 where all of B fits, else lt__gemm_block; for the
   AMX kernel, between setting this thread's tiles and releasing them */
static void lt__gemm_part(const lt__gemm_impl *g, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                          lt__gsrc A, int64_t lda, lt__gsrc B, int64_t ldb, float beta, float *C, int64_t ldc,
                          const lt__gepi *epi) {
#ifdef LT__AMX
    if (g->amx) lt__amx_begin();   /* this thread's tile shapes */
#endif
    if (epi && epi->z && lt__gemm_z_fits(g, K) && (epi->pm || K > g->kc))
        lt__gemm_block_z(g, ta, tb, M, N, K, alpha, A, lda, B, ldb, C, ldc, epi);
    else if (!lt__gemm_kin_fits(g, M, N, K, epi) ||
             !lt__gemm_block_kin(g, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc))
        lt__gemm_block(g, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, epi);
#ifdef LT__AMX
    if (g->amx) lt__amx_end();
#endif
}

/* Does a 16-bit product of precision p (bf16: pairs where the kernel has them) into z without
   maxima (lt__gemm16_z, @@OPS.matmul16) take no longer than into float32 narrowed after?  Where K
   is one KC piece (lt__gemm_block, the tiles' epilogue), or lt__gemm_block_z packs A for at most
   four panels of B: GPT-2's q, k, v product at 1 thread (M 256, N 2304, K 768: nine panels)
   took 3.05 ms into z against 2.61 into float32 and narrowed, gpt-mini's (1024, 1152, 384: two)
   2.02 against 2.28 (bench/precision.md). */
static int lt__gemm_z_cheap(int id, int p, int64_t N, int64_t K, int64_t ldc) {
    lt__gemm_impl g = lt__gemm_impl_of(id);
    int64_t ncz;
    if (p == LT_BF16) lt__gemm_dp(&g);
    if (g.nc > ldc) g.nc = (int)(ldc / g.nr * g.nr);   /* as lt__sgemm_ex's z mode */
    if (K <= g.kc) return 1;
    if (!lt__gemm_z_fits(&g, K)) return 0;
    ncz = LT__GEMM_PANEL / lt__gemm_bcol(&g, K) / g.nr * g.nr;
    if (ncz > g.nc) ncz = g.nc;
    return N <= 4 * ncz;
}

/* A C larger than the last-level cache, written once (beta 0, K in one block, no epilogue to read
   it back), gets streaming stores.  By the time the product ends C's first lines have left the
   caches anyway, so the usual store, which reads each line into the cache first and writes it
   back later, moves twice the bytes for nothing.  A K a little over KC (up to LT__KC_MAX,
   gpt-mini's 384) is then taken as one block, with a B panel of the same size (NC cut as KC
   grows): with two blocks every tile of C would be stored, loaded and stored again.  The head's
   logits (1024 x 50304 floats, 206 MB, from K = 384) are the case in a training step, at float32
   and as bf16 values kept in float32 (linear_ce16's z32: the one epilogue with streaming kernels,
   nkr / nrr, which round each value as the tiles' fe would and store it).  The AVX-512 and AVX2
   kernels have them (what each gained: bench/design.md, bench/precision.md).
   lt__gemm_stream_min: C's bytes must be above it (-1: above the L3's size, or 32 MiB where cpuid
   does not say); the tests lower it to reach the streaming kernels with small products. */
static int64_t lt__gemm_stream_min = -1;
static void lt__gemm_stream_fit(lt__gemm_impl *g, int64_t M, int64_t N, int64_t K, float beta, const float *C,
                                int64_t ldc, const lt__gepi *epi) {
    int64_t min = lt__gemm_stream_min >= 0 ? lt__gemm_stream_min : lt__cpu_cache(3);
    if (min <= 0 && lt__gemm_stream_min < 0) min = (int64_t)32 << 20;
    g->stream = 0;
    if (!g->nk || beta != 0.0f || K > LT__KC_MAX || ((uintptr_t)C & 63) != 0 || ldc % 16 != 0 ||
        (double)M * (double)N * 4.0 <= (double)min)
        return;
    if (LT__GEPI_ON(epi) && !(epi->p == LT_BF16 && !epi->bias && !epi->z && g->nkr))
        return;
    g->stream = 1;
    if (K > g->kc) {
        g->nc = (int)((int64_t)g->nc * g->kc / K / g->nr * g->nr);
        g->kc = (int)K;
    }
}

/* The whole product with kernel `id`, split over the OpenMP threads; operands converted while
   packing and the epilogue (NULL: none) as lt__gemm_block.  With epi->z (beta 0), C is the
   scratch lt__gepi describes: the threads' parts of rows share it, parts of columns (at multiples
   of the pieces, so no two threads merge into one piece's maximum) take one each. */
static void lt__sgemm_ex(int id, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, lt__gsrc A,
                         int64_t lda, lt__gsrc B, int64_t ldb, float beta, float *C, int64_t ldc, const lt__gepi *epi) {
    lt__gemm_impl g = lt__gemm_impl_of(id);
    int nt = 1, split_m, zm = epi && epi->z;
    if (A.p == LT_BF16 && B.p == LT_BF16 && !A.ce && !B.ce) lt__gemm_dp(&g);   /* (lt__gsrc_ce: float32 panels) */
    if (M <= 0 || N <= 0) return;
    if (zm && g.nc > ldc) g.nc = (int)(ldc / g.nr * g.nr);   /* blocks of C fit the scratch */
    if (zm && (K <= 0 || alpha == 0.0f)) {   /* zeros through the epilogue, NC columns at a time */
        int64_t i, j;
        for (j = 0; j < N; j += g.nc) {
            lt__gepi e = *epi;
            int64_t w = N - j < g.nc ? N - j : g.nc;
            for (i = 0; i < M; i++) memset(C + i * ldc, 0, (size_t)w * sizeof(float));
            e.z += j;
            e.col0 += j;
            lt__gemm_epilogue(g.isa, &e, C, ldc, M, w);
        }
        return;
    }
    if (K <= 0 || alpha == 0.0f) {   /* C = beta*C; beta == 0 writes zeros even over NaN, as BLAS */
        int64_t i, j;
        if (beta != 1.0f)
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        if (LT__GEPI_ON(epi))
            for (j = 0; j < N; j += LT__GEMM_NC_MAX) {
                lt__gepi e = *epi;
                if (e.bias) e.bias += j;
                lt__gemm_epilogue(g.isa, &e, C + j, ldc, M, N - j < LT__GEMM_NC_MAX ? N - j : LT__GEMM_NC_MAX);
            }
        return;
    }
    lt__gemm_stream_fit(&g, M, N, K, beta, C, ldc, epi);
#ifdef _OPENMP
    if (!omp_in_parallel() && (double)M * (double)N * (double)K >= 2097152.0) {
        /* at least one register tile row of work per thread */
        int64_t units = (M + g.mr - 1) / g.mr > (N + g.nr - 1) / g.nr ? (M + g.mr - 1) / g.mr : (N + g.nr - 1) / g.nr;
        nt = omp_get_max_threads();
        if (nt > units) nt = (int)units;
    }
#endif
    /* cut the longer side (in tiles): rows unless C is much wider than tall */
    split_m = (M + g.mr - 1) / g.mr >= (N + g.nr - 1) / g.nr;
    if (zm && !split_m && nt > epi->nscr) nt = epi->nscr;
    if (nt <= 1) {
        lt__gemm_part(&g, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, epi);
        return;
    }
    LT__OMP(parallel num_threads(nt))
    {
        int t = 0, n = 1;
        int64_t unit = split_m ? g.mr : g.nr, len = split_m ? M : N, tiles, t0, t1;
        lt__gepi e;
#ifdef _OPENMP
        t = omp_get_thread_num(); n = omp_get_num_threads();
#endif
        if (zm && !split_m && epi->pm)   /* whole pieces: a multiple of both nr and the piece */
            while (unit % epi->piece) unit += g.nr;
        tiles = (len + unit - 1) / unit;
        t0 = tiles * t / n * unit; t1 = tiles * (t + 1) / n * unit;
        if (t1 > len) t1 = len;
        if (epi) e = *epi;
        else memset(&e, 0, sizeof e);
        if (t1 > t0) {
            if (split_m) {
                if (zm) e.z += t0 * e.ldz;
                if (zm && e.pm) e.pm += t0 * e.ldpm;
                lt__gemm_part(&g, ta, tb, t1 - t0, N, K, alpha, lt__gsrc_at(A, ta ? t0 : t0 * lda), lda, B, ldb,
                              beta, C + t0 * ldc, ldc, epi ? &e : NULL);
            } else {
                if (epi && e.bias) e.bias += t0;
                if (zm) { e.z += t0; e.col0 += t0; }
                lt__gemm_part(&g, ta, tb, M, t1 - t0, K, alpha, A, lda, lt__gsrc_at(B, tb ? t0 * ldb : t0), ldb,
                              beta, zm ? C + (int64_t)t * M * ldc : C + t0, ldc, epi ? &e : NULL);
            }
        }
    }
}

static void lt__sgemm_with(int id, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    lt__sgemm_ex(id, ta, tb, M, N, K, alpha, lt__gsrc_f32(A), lda, lt__gsrc_f32(B), ldb, beta, C, ldc, NULL);
}

LTRAIN_DEF const char *lt_kernel_name(void) {
#ifdef LTRAIN_CBLAS
    (void)lt__sgemm_with; /* the built-in kernels stay compiled: the tests compare them with cblas */
    (void)lt__gemm_pick;
    return "cblas_sgemm";
#else
    return lt__gemm_impl_of(lt__gemm_pick()).name;
#endif
}
/* 16-bit products always run on the built-in kernels (bf16 on bf16 pairs where the CPU can) */
LTRAIN_DEF const char *lt_kernel_name_for(lt_dtype p) {
    lt__gemm_impl g;
    if (p != LT_BF16 && p != LT_F16) return lt_kernel_name();
    g = lt__gemm_impl_of(lt__gemm_pick());
    if (p == LT_BF16) lt__gemm_dp(&g);
    return g.name;
}

LTRAIN_DEF void lt_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                         const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                         float *C, int64_t ldc) {
#ifdef LTRAIN_CBLAS
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
#else
    lt__sgemm_with(lt__gemm_pick(), trans_a != 0, trans_b != 0, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

/* C (M,N) = op(A)·op(B) + bias (N, or NULL), the bias added to each block of C as the GEMM
   finishes it (the built-in kernels) or in a second pass (cblas) */
static void lt__sgemm_bias(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                           const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc) {
#ifdef LTRAIN_CBLAS
    int64_t r;
    lt_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
    if (!bias) return;
    LT__OMP(parallel for if (M * N > 32768))
    for (r = 0; r < M; r++) {
        int64_t j;
        for (j = 0; j < N; j++) C[r * ldc + j] += bias[j];
    }
#else
    lt__gepi e = lt__gepi_of(0, bias);
    lt__sgemm_ex(lt__gemm_pick(), ta, tb, M, N, K, 1.0f, lt__gsrc_f32(A), lda, lt__gsrc_f32(B), ldb, 0.0f, C, ldc, &e);
#endif
}


/* ==== @@OPS  ops: forward next to backward =================================================== */
/* Holds: the elementwise, reduction, shape, normalisation, attention and embedding ops, each
   forward next to its backward, and the op table the tape dispatches from.
   Calls: @@CORE, @@HALF, @@TENSOR; the device through ctx->dev; @@COMPILE's capture hook. */
/* How an op works.  A public op (lt_add, lt_layernorm, ...) checks its arguments, allocates its
   output from the arena, fills a tape record (lt__node) and runs the record's forward kernel.
   If a gradient must flow, the record stays on the tape and lt_backward later runs the
   backward kernel of the same row of the op table.  Kernels read everything from the record,
   so the compile mode (@@COMPILE, 09_compile.h) replays records without the public functions.

   The op table below is the only place the tape dispatches from: one X-macro row per op
   (its name and its forward/backward kernels lt__NAME_fwd / lt__NAME_bwd).  A device (the seam,
   @@CORE) keeps its own kernels by row of this table, so a backend adds kernels without touching
   callers. */

/* ---- @@OPS.table  the op table --------------------------------------------------------------- */
/* name, and the op's flags.  What its backward reads besides gradients: the inputs' values (IN),
   its own output's values (OUT); the compile mode plans buffer lifetimes from these two.
   The 16-bit rows (matmul16, linear16, conv1d16, layernorm16, gelu16, linear_ce16, rmsnorm16,
   attention_gqa16, swiglu16: lt_set_precision,
   @@HALF) read 0: their backward reads 16-bit copies saved in the record, so the float32 inputs
   need not stay alive.  (Eager records may skip a copy and read the float32 values in place,
   lt__copy16: eager mode never frees them; a compiled plan always has the copies.)
   What the compile mode may do with the op (@@COMPILE), each a property of its kernels:
     ROW        each row of its (R, C) output is computed from the same row of its inputs (or
                from one row broadcast to all): a plan may run it on tiles of rows, fused with
                the row-wise ops next to it (lt__plan_fuse)
     VIEW       its output shares its input's values (reshape): no buffer of its own
     Y_OVER_X   its forward allows y == x for a same-size input (y[i] = a[i] + b[i]): the output
                may be written over an input nothing reads afterwards (lt__add_over, eagerly)
     DX_OVER_X  its backward allows dx == x: x's gradient may be written over x's values when
                nothing reads them afterwards (cross-entropy's d(logits) over the logits)
     DX_OVER_DY its backward allows dx == dy for its first input: that gradient may be written
                over the output's when nothing reads it afterwards (lt__grad_adopt, eagerly)
     Y16        its output is already rounded to 16 bits in the record's precision (LT__PREC), so a
                16-bit copy of it is exact (lt__exact16) */
#define LT__IN 1
#define LT__OUT 2
#define LT__ROW 4
#define LT__VIEW 8
#define LT__Y_OVER_X 16
#define LT__DX_OVER_X 32
#define LT__DX_OVER_DY 64
#define LT__Y16 128
#define LT__OP_LIST(X)                                                                              \
    X(reshape, LT__VIEW) X(add, LT__ROW | LT__Y_OVER_X | LT__DX_OVER_DY) X(sub, LT__ROW)             \
    X(mul, LT__IN | LT__ROW) X(scale, LT__ROW) X(sum, 0) X(mean, 0)                                  \
    X(matmul, LT__IN) X(linear, LT__IN) X(conv1d, LT__IN) X(gelu, LT__IN | LT__ROW | LT__DX_OVER_DY) \
    X(gelu_erf, LT__IN | LT__ROW) X(relu, LT__IN | LT__ROW) X(tanh, LT__OUT | LT__ROW)               \
    X(sigmoid, LT__OUT | LT__ROW) X(softmax, LT__OUT | LT__ROW) X(log_softmax, LT__OUT | LT__ROW)    \
    X(layernorm, LT__IN | LT__ROW) X(embedding, 0) X(dropout, 0) X(transpose, 0)                     \
    X(attention, LT__IN | LT__OUT) X(cross_entropy, LT__IN | LT__DX_OVER_X) X(mse, LT__IN)           \
    X(matmul16, LT__Y16) X(linear16, LT__Y16) X(conv1d16, LT__Y16) X(attention16, LT__Y16)           \
    X(layernorm16, 0) X(gelu16, LT__Y16 | LT__DX_OVER_DY) X(linear_ce16, 0)                         \
    X(rmsnorm, LT__IN | LT__ROW) X(rmsnorm16, 0) X(rope, LT__DX_OVER_DY)                             \
    X(silu, LT__IN | LT__ROW | LT__DX_OVER_DY) X(swiglu, LT__IN | LT__ROW | LT__DX_OVER_DY)          \
    X(attention_gqa, LT__IN | LT__OUT) X(attention_gqa16, LT__Y16) X(swiglu16, LT__Y16 | LT__DX_OVER_DY) \
    X(linear_ce, LT__IN) X(linear_ce_exp, LT__IN)

struct lt__node {
    const struct lt__opdef *op;
    lt_ctx *ctx;
    lt_tensor *out;
    lt_tensor *in[3];            /* inputs (NULL where absent, e.g. no bias) */
    int64_t i[6];                /* integer arguments: sizes, flags (each op names its slots: LT__LN_C, ...) */
    double f[2];                 /* scalar arguments: scale, eps, p, denominators (LT__LN_EPS, ...) */
    float *save[2];              /* values saved for backward (mean/rstd, masks, probabilities) */
    int64_t n_save[2];           /* their lengths (floats) */
    int32_t *ids;                /* indices (embedding ids, targets, lengths), copied to the arena */
    const int32_t *ids_src;      /* ... from here (a compiled plan copies them again each replay) */
    int64_t n_ids;
    const char *scope;           /* where in the model (lt_scope), for messages */
    int32_t *ids_dev;            /* on a device: its copy of the ids (CUDA: and, for embedding, rows grouped by id) */
};

typedef struct lt__opdef {
    const char *name;
    int reads;                   /* LT__IN | LT__OUT: what backward reads */
    int flags;                   /* the row's flags: reads, LT__ROW, LT__VIEW, ... (above) */
    lt__kernel fwd;              /* the CPU's kernels; a device's are in its table, by row (ctx->dev) */
    lt__kernel bwd;
} lt__opdef;

#define LT__DECLARE_KERNELS(name, flags) static void lt__##name##_fwd(lt__node *); static void lt__##name##_bwd(lt__node *);
LT__OP_LIST(LT__DECLARE_KERNELS)
#undef LT__DECLARE_KERNELS

enum {
#define LT__OP_INDEX(name, flags) LT__OPI_##name,
    LT__OP_LIST(LT__OP_INDEX)
#undef LT__OP_INDEX
    LT__OP_COUNT
};
/* indices only name rows of this table; records point at rows, never at numbers */
static const lt__opdef lt__ops[LT__OP_COUNT] = {
#define LT__OP_ROW(name, flags) {#name, (flags) & (LT__IN | LT__OUT), flags, lt__##name##_fwd, lt__##name##_bwd},
    LT__OP_LIST(LT__OP_ROW)
#undef LT__OP_ROW
};
#define LT__OP(name) (&lt__ops[LT__OPI_##name])
typedef char lt__op_table_fits_profile[LT__OP_COUNT <= 64 ? 1 : -1]; /* ctx->prof_s has 64 rows */
#define LT__EW_PAR (int64_t)32768   /* elementwise loops over fewer elements than this: one thread */

static void lt__profile_add(lt_ctx *ctx, const lt__node *nd, int bwd, double s) {
    int row = (int)(nd->op - lt__ops);
    ctx->prof_s[bwd][row] += s;
    ctx->prof_n[bwd][row]++;
}

LTRAIN_DEF void lt_set_profiling(lt_ctx *ctx, int on) {
    if (!ctx) return;
    ctx->profiling = on != 0;
    memset(ctx->prof_s, 0, sizeof ctx->prof_s);
    memset(ctx->prof_n, 0, sizeof ctx->prof_n);
}

LTRAIN_DEF void lt_profile_print(const lt_ctx *ctx, FILE *f) {
    double total = 0;
    int r;
    if (!ctx || !f) return;
    for (r = 0; r < LT__OP_COUNT; r++) total += ctx->prof_s[0][r] + ctx->prof_s[1][r];
    fprintf(f, "%-14s %10s %10s %8s %6s\n", "op", "fwd ms", "bwd ms", "calls", "share");
    for (r = 0; r < LT__OP_COUNT; r++) {
        double t = ctx->prof_s[0][r] + ctx->prof_s[1][r];
        if (ctx->prof_n[0][r] + ctx->prof_n[1][r] == 0) continue;
        fprintf(f, "%-14s %10.1f %10.1f %8lld %5.1f%%\n", lt__ops[r].name, 1e3 * ctx->prof_s[0][r],
                1e3 * ctx->prof_s[1][r], (long long)ctx->prof_n[0][r], total > 0 ? 100.0 * t / total : 0.0);
    }
    fprintf(f, "%-14s %10.1f ms in kernels\n", "total", 1e3 * total);
}

/* ---- @@OPS.simd  shared math (exp, tanh, an 8x8 transpose) and the SIMD kernels' rules -------------
   Every op has a plain C kernel, the reference.  Where the compiler is GCC or Clang on x86 (and
   LTRAIN_NO_SIMD is not defined), hand-written AVX2 / AVX-512 kernels are compiled beside it with
   target attributes (LT__TARGET, @@CORE), and run only when the CPU has the instructions
   (lt__cpu_has and lt__gemm_pick, @@CORE.cpu; LT_GEMM=portable|avx2|avx512|neon in the environment
   forces one).  On AArch64 the GEMM has a NEON kernel (@@GEMM); the other
   ops run their C kernels there. */
/* exp(x) for x <= 0, the only exps the kernels need (softmax, cross-entropy, tanh, sigmoid all
   shift their argument to be non-positive).  exp(x) = 2^n · e^r with n = round(x/ln2) and
   r = x - n·ln2 in [-ln2/2, ln2/2] (ln2 split in two so r is exact), e^r by its Taylor series to
   r^6: relative error below 2e-7, about one float ulp.  Straight-line code, so `omp simd` loops
   vectorize it (libm's expf does not).  x < -87 gives 0 (exp(-inf) = 0 exactly), NaN gives NaN;
   it stays right up to x = 88 (a rounding error may make an argument slightly positive).
   Written for the vectorizer: the clamps are one max and one min each, 2^n comes from t's own
   bits (t = 1.5·2^23 + n, so its low bits are n: no float-to-int conversion), and the special
   cases are two selects at the end (cheaper than nested conditions, the same bits; see
   bench/design.md). */
#define LT__LOG2E 1.44269504088896341f       /* 1/ln2 */
#define LT__LN2_HI 0.693145751953125f        /* ln2 = LT__LN2_HI + LT__LN2_LO, the first part exact in n·ln2 */
#define LT__LN2_LO 1.428606765330187e-06f
#define LT__EXP_C3 0.16666667f               /* the series' 1/3!, 1/4!, 1/5!, 1/6! (the SIMD kernels use these too) */
#define LT__EXP_C4 0.041666668f
#define LT__EXP_C5 0.0083333338f
#define LT__EXP_C6 0.0013888889f
LT__OMP(declare simd)
static inline float lt__exp_neg(float x) {
    float xc = x > -87.0f ? x : -87.0f, t, n, r, p, scale;   /* NaN lands on -87: no UB below */
    int32_t bits;
    xc = xc < 88.0f ? xc : 88.0f;
    t = xc * LT__LOG2E + 12582912.0f;     /* 1.5·2^23: rounds xc/ln2 to an integer */
    n = t - 12582912.0f;
    r = xc - n * LT__LN2_HI - n * LT__LN2_LO;
    p = 1.0f + r * (1.0f + r * (0.5f + r * (LT__EXP_C3 + r * (LT__EXP_C4 + r * (LT__EXP_C5 + r * LT__EXP_C6)))));
    memcpy(&bits, &t, sizeof bits);                  /* 0x4B400000 + n, n in [-126, 127] */
    bits = (bits - 0x4B400000 + 127) << 23;          /* 2^n as a float's bits (1..254 << 23: defined) */
    memcpy(&scale, &bits, sizeof scale);
    p = x < -87.0f ? 0.0f : p * scale;
    return x == x ? p : x;                           /* NaN stays NaN */
}

/* tanh(u) = sign(u)·(1 - e)/(1 + e) with e = exp(-2|u|) <= 1 (no overflow); below |u| = 1/16,
   where 1 - e would cancel, the odd series u - u³/3 + 2u⁵/15 - 17u⁷/315 instead. */
LT__OMP(declare simd)
static inline float lt__tanh(float u) {
    float e = lt__exp_neg(-2.0f * fabsf(u)), u2 = u * u;
    float series = u * (1.0f + u2 * (-0.33333333f + u2 * (0.13333333f - u2 * 0.053968254f)));
    return fabsf(u) < 0.0625f ? series : copysignf((1.0f - e) / (1.0f + e), u);
}

/* ---- fast paths: AVX-512 and AVX2 exp, AVX2 8x8 transpose ------------------------------------ */
#ifdef LT__X86
/* lt__exp_neg for 16 values with AVX-512: a raised to -120 if below (exp is 0 in float below
   -104; a NaN stays NaN: vmaxps returns its second operand when one is NaN), n = round(a/ln2),
   r = a - n·ln2, the same series, and 2^n applied by vscalefps (no range tricks needed).  Within
   an ulp or two of lt__exp_neg, not always the same bits. */
LT__TARGET("avx512f") static inline __m512 lt__exp_neg16(__m512 a) {
    __m512 n, r, p;
    a = _mm512_maskz_max_ps(LT__M16, _mm512_set1_ps(-120.0f), a);
    n = _mm512_maskz_roundscale_ps(LT__M16, _mm512_mul_ps(a, _mm512_set1_ps(LT__LOG2E)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LT__LN2_HI), a);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LT__LN2_LO), r);
    p = _mm512_fmadd_ps(_mm512_set1_ps(LT__EXP_C6), r, _mm512_set1_ps(LT__EXP_C5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(LT__EXP_C4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(LT__EXP_C3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(LT__M16, p, n);
}
/* lt__exp_neg for 8 values with AVX2 + FMA (CPUs without AVX-512): the C function's steps on 8
   lanes, 2^n built in the exponent bits as there; 0 below -87, a NaN stays NaN. */
LT__TARGET("avx2,fma") static inline __m256 lt__exp_neg8(__m256 a) {
    __m256 xc = _mm256_min_ps(_mm256_max_ps(a, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f)), n, r, p;
    __m256i e;
    n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(LT__LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LT__LN2_HI), xc);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LT__LN2_LO), r);
    p = _mm256_fmadd_ps(_mm256_set1_ps(LT__EXP_C6), r, _mm256_set1_ps(LT__EXP_C5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(LT__EXP_C4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(LT__EXP_C3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);   /* 2^n, n in [-126, 127] */
    p = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    p = _mm256_andnot_ps(_mm256_cmp_ps(a, _mm256_set1_ps(-87.0f), _CMP_LT_OQ), p);              /* exp below -87: 0 */
    return _mm256_blendv_ps(p, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));                            /* NaN stays NaN */
}
/* The AVX2 kernels' ragged ends: the first nv of 8 floats (all 8 when nv >= 8) loaded with zeros
   past them, or stored, through 8 floats on the stack, so the last values of a row take the same
   8-lane code as the others and get the same bits wherever they sit (AVX2's masked moves,
   vmaskmovps, are slow on AMD). */
LT__TARGET("avx2,fma") static inline __m256 lt__load8(const float *x, int64_t nv) {
    float t[8] = {0};
    if (nv >= 8) return _mm256_loadu_ps(x);
    memcpy(t, x, (size_t)nv * sizeof(float));
    return _mm256_loadu_ps(t);
}
LT__TARGET("avx2,fma") static inline void lt__store8(float *x, __m256 v, int64_t nv) {
    float t[8];
    if (nv >= 8) { _mm256_storeu_ps(x, v); return; }
    _mm256_storeu_ps(t, v);
    memcpy(x, t, (size_t)nv * sizeof(float));
}
/* the 16 lanes of acc added pairwise: 8 + 8, 4 + 4, 2 + 2, 1 + 1 (a fixed order), in registers
   (summing them from memory after a vector store stalls on the reloads; the masked shuffles
   because g++ 12 -Werror takes the plain ones' undefined source for an uninitialized read) */
LT__TARGET("avx512f") static float lt__lanes_sum16(__m512 acc) {
    acc = _mm512_add_ps(acc, _mm512_mask_shuffle_f32x4(acc, 0xFFFF, acc, acc, 0xEE));   /* lanes 0-7 + 8-15 */
    acc = _mm512_add_ps(acc, _mm512_mask_shuffle_f32x4(acc, 0xFFFF, acc, acc, 0x01));   /* lanes 0-3 + 4-7 */
    acc = _mm512_add_ps(acc, _mm512_mask_permute_ps(acc, 0xFFFF, acc, 0x0E));           /* lanes 0-1 + 2-3 */
    acc = _mm512_add_ps(acc, _mm512_mask_permute_ps(acc, 0xFFFF, acc, 0x01));           /* lane 0 + 1 */
    return _mm512_cvtss_f32(acc);
}
/* the 8 lanes of acc added pairwise: 4 + 4, 2 + 2, 1 + 1, in registers */
LT__TARGET("avx2,fma") static float lt__lanes_sum8(__m256 acc) {
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}
/* the largest of the 16 lanes of mx, lane 0 first (as lt__row_max's x > m ? x : m) */
LT__TARGET("avx512f") static float lt__lanes_max16(__m512 mx) {
    float t[16], v;
    int l;
    _mm512_storeu_ps(t, mx);
    for (v = t[0], l = 1; l < 16; l++) v = t[l] > v ? t[l] : v;
    return v;
}
/* lt__exp_sum and lt__exp_grad (@@OPS.softmax) with lt__exp_neg16, 16 values at a time, the last
   ones masked: the sum in 16 lanes added up at the end (each term stored in keep too, when not
   NULL), the gradient row mul then add as the portable loop. */
LT__TARGET("avx512f") static float lt__exp_sum_avx512(const float *x, int64_t n, float m, float *keep) {
    __m512 acc = _mm512_setzero_ps(), vm = _mm512_set1_ps(m);
    int64_t j;
    for (j = 0; j < n; j += 16) {
        __mmask16 k = (__mmask16)(n - j >= 16 ? 0xFFFFu : (1u << (n - j)) - 1u);
        __m512 e = lt__exp_neg16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), vm));
        if (keep) _mm512_mask_storeu_ps(keep + j, k, e);
        acc = _mm512_mask_add_ps(acc, k, acc, e);
    }
    return lt__lanes_sum16(acc);
}
LT__TARGET("avx512f") static void lt__exp_grad_avx512(const float *x, float *y, int64_t n, float m, float c, int add) {
    __m512 vm = _mm512_set1_ps(m), vc = _mm512_set1_ps(c);
    int64_t j;
    for (j = 0; j < n; j += 16) {
        __mmask16 k = (__mmask16)(n - j >= 16 ? 0xFFFFu : (1u << (n - j)) - 1u);
        __m512 v = _mm512_mul_ps(vc, lt__exp_neg16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), vm)));
        _mm512_mask_storeu_ps(y + j, k, _mm512_add_ps(add ? _mm512_maskz_loadu_ps(k, y + j) : _mm512_setzero_ps(), v));
    }
}
/* The same with AVX2 + FMA and lt__exp_neg8, 8 values at a time; the sum's last ones through a
   block padded with -inf (exp 0: nothing added; lt__store8 keeps the real ones), the gradient's
   through lt__load8 / lt__store8. */
LT__TARGET("avx2,fma") static float lt__exp_sum_avx2(const float *x, int64_t n, float m, float *keep) {
    __m256 acc = _mm256_setzero_ps(), vm = _mm256_set1_ps(m), e;
    float t[8];
    int64_t j;
    int l;
    for (j = 0; j + 8 <= n; j += 8) {
        e = lt__exp_neg8(_mm256_sub_ps(_mm256_loadu_ps(x + j), vm));
        if (keep) _mm256_storeu_ps(keep + j, e);
        acc = _mm256_add_ps(acc, e);
    }
    if (j < n) {
        for (l = 0; l < 8; l++) t[l] = j + l < n ? x[j + l] : -INFINITY;
        e = lt__exp_neg8(_mm256_sub_ps(_mm256_loadu_ps(t), vm));
        if (keep) lt__store8(keep + j, e, n - j);
        acc = _mm256_add_ps(acc, e);
    }
    return lt__lanes_sum8(acc);
}
LT__TARGET("avx2,fma") static void lt__exp_grad_avx2(const float *x, float *y, int64_t n, float m, float c, int add) {
    __m256 vm = _mm256_set1_ps(m), vc = _mm256_set1_ps(c);
    int64_t j;
    for (j = 0; j < n; j += 8) {   /* the last values through lt__load8 / lt__store8 */
        __m256 v = _mm256_mul_ps(vc, lt__exp_neg8(_mm256_sub_ps(lt__load8(x + j, n - j), vm)));
        lt__store8(y + j, _mm256_add_ps(add ? lt__load8(y + j, n - j) : _mm256_setzero_ps(), v), n - j);
    }
}

/* d (8,8) = sᵀ of the 8 x 8 block at s (row strides lds, ldd), turned in AVX registers: pairs of
   rows interleaved, then pairs of pairs, then the 128-bit halves exchanged (the attention's
   transposes below, the GEMM's packing of B stored transposed, @@GEMM).  rb: each value rounded
   to bf16 on the way (lt__bf16_round8_f32: a float32 weight packed for a bf16 product). */
LT__TARGET("avx2") static void lt__tr8x8(const float *s, int64_t lds, float *d, int64_t ldd, int rb) {
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + lds), r2 = _mm256_loadu_ps(s + 2 * lds);
    __m256 r3 = _mm256_loadu_ps(s + 3 * lds), r4 = _mm256_loadu_ps(s + 4 * lds), r5 = _mm256_loadu_ps(s + 5 * lds);
    __m256 r6 = _mm256_loadu_ps(s + 6 * lds), r7 = _mm256_loadu_ps(s + 7 * lds);
    if (rb) {
#define LT__RB8(x) x = lt__bf16_round8_f32(_mm256_castps_si256(x));
        LT__RB8(r0) LT__RB8(r1) LT__RB8(r2) LT__RB8(r3) LT__RB8(r4) LT__RB8(r5) LT__RB8(r6) LT__RB8(r7)
#undef LT__RB8
    }
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3);
    __m256 t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + ldd, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * ldd, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * ldd, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * ldd, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * ldd, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * ldd, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * ldd, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#endif

/* ---- @@OPS.records  what every op shares: gradients, tape records, saved values ----------- */
/* n zeros, split over the threads when n is large */
static void lt__zero(float *p, int64_t n) {
    int64_t i0;
    LT__OMP(parallel for if (n > 4 * LT__EW_PAR))
    for (i0 = 0; i0 < n; i0 += LT__EW_PAR)
        memset(p + i0, 0, (size_t)(n - i0 < LT__EW_PAR ? n - i0 : LT__EW_PAR) * sizeof(float));
}

/* n floats copied, split over the threads when n is large */
static void lt__copy(float *dst, const float *src, int64_t n) {
    int64_t i0;
    LT__OMP(parallel for if (n > 4 * LT__EW_PAR))
    for (i0 = 0; i0 < n; i0 += LT__EW_PAR)
        memcpy(dst + i0, src + i0, (size_t)(n - i0 < LT__EW_PAR ? n - i0 : LT__EW_PAR) * sizeof(float));
}

/* Recycling (eager mode, as torch): once an op's backward has run, nothing reads its output's
   gradient again, so lt_backward drops it (grad = NULL) unless lt_retain_grad asked to keep it,
   and puts the buffer on a free list (kept inside the free buffers themselves).  Gradients made
   later take the best-fitting buffer from it (at most twice their size) before new arena
   memory: a backward pass holds a few activation gradients at a time instead of all of them. */
typedef struct lt__gfree { struct lt__gfree *next; size_t bytes; } lt__gfree;
#define LT__GFREE_MIN 1024   /* smaller buffers are dropped, not recycled */
static void lt__grad_release(lt_ctx *ctx, lt_tensor *t) {
    size_t bytes = (size_t)t->n * sizeof(float);
    if (t->retain_grad || t->is_param || !t->grad) return;
    if (t->grad != t->data && bytes >= LT__GFREE_MIN) {   /* (not a gradient written over the values) */
        lt__gfree *b = (lt__gfree *)(void *)t->grad;
        b->bytes = bytes;
        b->next = (lt__gfree *)ctx->grad_free;
        ctx->grad_free = b;
    }
    t->grad = NULL;
}
static float *lt__grad_alloc(lt_ctx *ctx, size_t bytes) {
    lt__gfree **best = NULL, **q;
    for (q = (lt__gfree **)&ctx->grad_free; *q; q = &(*q)->next)
        if ((*q)->bytes >= bytes && (*q)->bytes / 2 <= bytes && (!best || (*q)->bytes < (*best)->bytes)) best = q;
    if (best) {
        lt__gfree *b = *best;
        *best = b->next;
        return (float *)(void *)b;
    }
    return (float *)lt__arena_alloc(ctx, bytes);
}
/* The gradient buffer of a tensor, made in the arena on first use.  Backward kernels add their
   contribution into it (a tensor read by two ops gets two), so a new buffer must start at zero.
   lt__grad_w saves that zeroing pass for the kernels that can write the whole buffer anyway:
   *add is 0 when the buffer holds no values yet (just made, or marked unset by a compiled
   replay), and the caller must then write (=) every element instead of adding (+=); the values
   are the same (0 + g is g).  lt__grad zeroes such a buffer first, for kernels that only add. */
static float *lt__grad_w(lt_tensor *t, lt_ctx *ctx, int *add) {
    *add = 1;
    if (!t || !t->requires_grad) return NULL;
    if (!t->grad) {
        t->grad = lt__grad_alloc(ctx, (size_t)t->n * sizeof(float));
        if (!t->grad) return NULL;
        t->grad_unset = 1;
    }
    *add = !t->grad_unset;
    t->grad_unset = 0;
    return t->grad;
}
/* In eager mode an op's output gradient dies right after the op's backward kernel (lt_backward
   drops it), so an elementwise kernel whose input has no gradient buffer yet can hand that
   buffer over to the input and work in place (gx[i] = gy[i]·..., the same values, one buffer
   fewer alive).  Not when the output's gradient is retained or written over its values, nor in
   a compiled plan, which places every buffer itself (the input's is set already).  Returns 1
   when in[j] took it: its grad is then the old nd->out->grad, which is NULL. */
static int lt__grad_adopt(lt__node *nd, int j) {
    lt_tensor *x = nd->in[j], *y = nd->out;
    if (!x || !x->requires_grad || x->grad || x->n != y->n || !y->grad || y->retain_grad || y->grad == y->data ||
        nd->ctx->device != LT_CPU)
        return 0;
    x->grad = y->grad;
    x->grad_unset = 0;
    y->grad = NULL;
    return 1;
}
static float *lt__grad(lt_tensor *t, lt_ctx *ctx) {
    int add;
    float *g = lt__grad_w(t, ctx, &add);
    if (g && !add) lt__zero(g, t->n);
    return g;
}

/* Common checks of a public op: live context, non-NULL required inputs of this context and step
   (lt__usable; lt__node_new checks every input again, the optional ones too). */
static int lt__live(lt_ctx *ctx, const char *who, const lt_tensor *a, const lt_tensor *b) {
    if (!ctx) return 0;
    if (ctx->status != LT_OK) return 0;
    if (!a) return lt_set_error(ctx, LT_ERR_ARG, "%s: the first input is NULL", who), 0;
    if (!b) return lt_set_error(ctx, LT_ERR_ARG, "%s: the second input is NULL", who), 0;
    lt__begin(ctx);
    return lt__usable(ctx, who, "the first input", a) && (b == a || lt__usable(ctx, who, "the second input", b));
}

/* A record with an output of the given shape (data from the arena unless no_data). */
static lt__node *lt__node_new(lt_ctx *ctx, const lt__opdef *op, int ndim, const int64_t *shape,
                              lt_tensor *a, lt_tensor *b, lt_tensor *c, int no_data) {
    lt__node *nd;
    if ((a && !LT__CURRENT(ctx, a)) || (b && !LT__CURRENT(ctx, b)) || (c && !LT__CURRENT(ctx, c))) {
        char who[48];
        snprintf(who, sizeof who, "lt_%s", op->name);
        if (a && !lt__usable(ctx, who, "the first input", a)) return NULL;
        if (b && !lt__usable(ctx, who, "the second input", b)) return NULL;
        lt__usable(ctx, who, "the third input", c);
        return NULL;
    }
    nd = (lt__node *)lt__arena_alloc(ctx, sizeof(lt__node));
    if (!nd) return NULL;
    memset(nd, 0, sizeof *nd);
    nd->op = op;
    nd->ctx = ctx;
    nd->scope = ctx->scope;
    nd->in[0] = a; nd->in[1] = b; nd->in[2] = c;
    nd->out = lt__arena_tensor(ctx, op->name, ndim, shape, !no_data);
    if (!nd->out) return NULL;
    nd->out->requires_grad = ctx->grad_enabled &&
        ((a && a->requires_grad) || (b && b->requires_grad) || (c && c->requires_grad));
    return nd;
}

/* The kernel of a record's row: the CPU's, or the device's (ctx->dev, the device seam). */
#define LT__FWD(ctx, nd) ((ctx)->dev ? (ctx)->dev->op_fwd[(nd)->op - lt__ops] : (nd)->op->fwd)
#define LT__BWD(ctx, nd) ((ctx)->dev ? (ctx)->dev->op_bwd[(nd)->op - lt__ops] : (nd)->op->bwd)
/* a device's kernels are asynchronous: a profile times them whole */
#define LT__PROFILE_SYNC(ctx) do { if ((ctx)->dev) lt_device_synchronize(ctx); } while (0)

/* Recompute segments (lt_recompute_begin, @@TAPE): refuse an op that reads a value a segment
   dropped, or, inside one, an op with no recompute rule: one whose forward writes over a value
   made before the segment (lt__add_over), which running it again in backward would read.  Inside
   a segment the op is noted, to be run again.  0: refused (the error is set). */
static int lt__seg_note(lt_ctx *ctx, lt__node *nd) {
    int j;
    for (j = 0; j < 3; j++) {
        const lt_tensor *t = nd->in[j];
        if (!t) continue;
        if (!t->data)
            return lt_set_error(ctx, LT_ERR_STATE, "op %s%s%s: input %d is a value that lt_recompute_end dropped: "
                                "a segment keeps only its output (hint: make the value the segment's output, "
                                "or compute it outside the segment)", nd->op->name, nd->scope ? " in " : "",
                                nd->scope ? nd->scope : "", j), 0;
        if (ctx->to_scratch && nd->out->data == t->data && !(nd->op->flags & LT__VIEW) &&
            !lt__arena_owns(&ctx->scratch, t->data))
            return lt_set_error(ctx, LT_ERR_STATE, "op %s%s%s has no recompute rule here: it writes its output over "
                                "input %d, made before lt_recompute_begin, which running it again in backward "
                                "would read", nd->op->name, nd->scope ? " in " : "", nd->scope ? nd->scope : "", j), 0;
    }
    if (!ctx->seg_open) return 1;
    if (ctx->n_seg_nodes == ctx->cap_seg_nodes) {
        int cap = ctx->cap_seg_nodes ? 2 * ctx->cap_seg_nodes : 256;
        lt__node **a = (lt__node **)LT__REALLOC(ctx->seg_nodes, (size_t)cap * sizeof(lt__node *));
        float **d = a ? (float **)LT__REALLOC(ctx->seg_data, (size_t)cap * sizeof(float *)) : NULL;
        if (a) ctx->seg_nodes = a;
        if (d) ctx->seg_data = d;
        if (!a || !d) return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory noting a segment's ops", nd->op->name), 0;
        ctx->cap_seg_nodes = cap;
    }
    ctx->seg_data[ctx->n_seg_nodes] = NULL;
    ctx->seg_nodes[ctx->n_seg_nodes++] = nd;
    ctx->segs[ctx->n_segs - 1].n++;
    return 1;
}

/* Run the forward kernel; keep the record on the tape if a gradient will flow through it. */
static lt_tensor *lt__run(lt_ctx *ctx, lt__node *nd) {
    if (!nd || lt_failed(ctx)) return NULL;
    if ((ctx->n_segs || ctx->seg_open) && !lt__seg_note(ctx, nd)) return NULL;
    if (ctx->dry && !(nd->op->flags & LT__VIEW)) {
        /* lt_compile's recording pass: shapes only (a view's pointer is still set) */
    } else if (ctx->profiling) {
        double t0 = lt__now();
        LT__FWD(ctx, nd)(nd);
        LT__PROFILE_SYNC(ctx);
        lt__profile_add(ctx, nd, 0, lt__now() - t0);
    } else {
        LT__FWD(ctx, nd)(nd);
    }
    if (lt_failed(ctx)) return NULL;
    if (ctx->cap_hooks) ctx->cap_hooks->node(ctx, nd);
    if (nd->out->requires_grad) {
        if (ctx->tape_len == ctx->tape_cap) {
            int cap = ctx->tape_cap ? 2 * ctx->tape_cap : 256;
            lt__node **t = (lt__node **)LT__REALLOC(ctx->tape, (size_t)cap * sizeof(lt__node *));
            if (!t) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory growing the tape", nd->op->name); return NULL; }
            ctx->tape = t;
            ctx->tape_cap = cap;
        }
        ctx->tape[ctx->tape_len++] = nd;
        nd->out->node = nd;
    }
    return nd->out;
}

/* Copy indices into the arena (the record keeps where they came from, for compiled replays). */
static int32_t *lt__node_ids(lt_ctx *ctx, lt__node *nd, const int32_t *ids, int64_t n) {
    int32_t *p = (int32_t *)lt__arena_alloc(ctx, (size_t)n * sizeof(int32_t));
    if (p) memcpy(p, ids, (size_t)n * sizeof(int32_t));
    if (p && ctx->dev) ctx->dev->ids(ctx, nd, ids, n);   /* kernels read the device copy */
    nd->ids = p;
    nd->ids_src = ids;
    nd->n_ids = n;
    return p;
}

/* A buffer saved for backward (slot 0 or 1 of the record). */
static float *lt__save(lt_ctx *ctx, lt__node *nd, int slot, int64_t n) {
    nd->save[slot] = (float *)lt__values_alloc(ctx, (size_t)n * sizeof(float));
    nd->n_save[slot] = n;
    return nd->save[slot];
}

/* 16-bit precision (lt_set_precision): the record's type, kept in a double slot, and the
   single-thread vector conversions of @@HALF (out[i] = float(in[i]), in[i] to 16 bits, and
   out[i] = float(16 bit(in[i]))). */
static lt_dtype lt__prec_of(double f) { return f == (double)LT_F16 ? LT_F16 : LT_BF16; }
#define LT__PREC(nd) ((nd)->f[0])    /* a 16-bit record's precision (matmul16, linear16, ... gelu16) */
#define LT__PREC2(nd) ((nd)->f[1])   /* ... where f[0] is another argument (layernorm16, linear_ce16) */
/* Does a 16-bit op keep a 16-bit copy of t, a value its backward reads?  In a compiled plan
   (recorded while ctx->dry) yes: the plan reuses the float32 buffers after the forward, and the
   copies are what halves the activation memory.  Eager on the CPU, every float32 tensor of a
   step stays in the arena until lt_reset, so a value that is already 16-bit (the rounded output
   of a 16-bit product, attention16 or gelu16 in the same precision) is read in place by backward
   (rounding it again changes nothing: the same bits as a copy), and a copy would only add memory.
   Other values keep their copy in eager mode too: reading float32 and rounding it while packing
   a GEMM operand is slower than widening a copy.  (Nothing an eager step writes over is read this
   way: lt__add_over writes over a product's output, which no backward reads.)
   LTRAIN_EAGER_COPIES16=1 in the environment makes eager ops keep every copy (to compare). */
static int lt__exact16(const lt_tensor *t, lt_dtype p) {
    const lt__node *nd = t ? t->node : NULL;
    if (!nd || LT__PREC(nd) != (double)p) return 0;
    return (nd->op->flags & LT__Y16) != 0;
}
static int lt__copy16(const lt_ctx *ctx, const lt_tensor *t) {
    const char *e;
    if (ctx->dry || ctx->device != LT_CPU || !lt__exact16(t, ctx->precision)) return 1;
    e = getenv("LTRAIN_EAGER_COPIES16");
    return e && strcmp(e, "1") == 0;
}

/* ---- @@OPS.reshape  reshape: a view ---------------------------------------------------------- */
/* x (any) -> y (same n, new shape), sharing x's data; dx += dy */
static void lt__reshape_fwd(lt__node *nd) { nd->out->data = nd->in[0]->data; }
static void lt__reshape_bwd(lt__node *nd) {
    int add;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gy = nd->out->grad;
    int64_t i, n = nd->out->n;
    if (!gx) return;
    if (!add) { lt__copy(gx, gy, n); return; }
    LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
    for (i = 0; i < n; i++) gx[i] += gy[i];
}

LTRAIN_DEF lt_tensor *lt_reshape(lt_ctx *ctx, lt_tensor *t, int ndim, const int64_t *shape) {
    int64_t s[LT_MAX_DIMS], known = 1;
    int i, infer = -1;
    char b1[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_reshape", t, t)) return NULL;
    if (ndim < 1 || ndim > LT_MAX_DIMS || !shape) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_reshape: ndim is %d: it must be 1..%d", ndim, LT_MAX_DIMS);
        return NULL;
    }
    for (i = 0; i < ndim; i++) {
        s[i] = shape[i];
        if (s[i] == -1 && infer < 0) infer = i;
        else if (s[i] < 1) {
            lt_set_error(ctx, LT_ERR_ARG, "lt_reshape: dim %d is %lld: dims must be >= 1 (one may be -1)", i,
                         (long long)s[i]);
            return NULL;
        } else if (known > 0 && s[i] <= t->n / known) known *= s[i];
        else known = 0; /* more elements than x has: a mismatch (and no overflow) */
    }
    if (infer >= 0) s[infer] = known > 0 && t->n % known == 0 ? t->n / known : 0;
    if (infer >= 0 && s[infer] > 0) known *= s[infer];
    if (known != t->n) {
        char b2[96];
        size_t used = (size_t)snprintf(b2, sizeof b2, "[");
        for (i = 0; i < ndim && used < sizeof b2; i++)
            used += (size_t)snprintf(b2 + used, sizeof b2 - used, i ? ",%lld" : "%lld", (long long)shape[i]);
        if (used < sizeof b2) snprintf(b2 + used, sizeof b2 - used, "]");
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_reshape: x is %s (%lld elements), the new shape %s does not hold "
                     "that many: a reshape must keep the count", lt_shape_str(t, b1, sizeof b1), (long long)t->n, b2);
        return NULL;
    }
    nd = lt__node_new(ctx, LT__OP(reshape), ndim, s, t, NULL, NULL, 1);
    if (!nd) return NULL;
    nd->out->base = t->base ? t->base : t;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.add  add, sub, mul: elementwise, b broadcast over a's leading dims ---------------- */
/* a (..., S), b (S) -> y (..., S) where S is any trailing part of a's shape; i indexes y,
   b is read at i mod |b|. */
static int lt__check_broadcast(lt_ctx *ctx, const char *who, const lt_tensor *a, const lt_tensor *b) {
    int k;
    char b1[64], b2[64];
    if (b->ndim <= a->ndim) {
        for (k = 1; k <= b->ndim; k++)
            if (a->shape[a->ndim - k] != b->shape[b->ndim - k]) break;
        if (k > b->ndim) return 1;
    }
    lt_set_error(ctx, LT_ERR_SHAPE, "%s: a is %s, b is %s: b's shape must equal a's trailing dims "
                 "(b is broadcast over a's leading dims)", who, lt_shape_str(a, b1, sizeof b1),
                 lt_shape_str(b, b2, sizeof b2));
    return 0;
}

static lt_tensor *lt__binary(lt_ctx *ctx, const lt__opdef *op, const char *who, lt_tensor *a, lt_tensor *b) {
    lt__node *nd;
    if (!lt__live(ctx, who, a, b) || !lt__check_broadcast(ctx, who, a, b)) return NULL;
    nd = lt__node_new(ctx, op, a->ndim, a->shape, a, b, NULL, 0);
    return lt__run(ctx, nd);
}

/* The backward helpers of the three: threaded, and each element's sum runs over the rows in order
   (threads split the columns), so results do not depend on the thread count.
     ga[i] += gy[i]·(b[i mod nb] or 1)                            (elementwise)
     gb[j] += sign · Σ_r gy[r·nb + j]·(a[r·nb + j] or 1)          (over the broadcast rows r)
   add = 0 (a gradient buffer without values yet, lt__grad_w): = instead of +=. */
static void lt__bcast_grad_a(float *ga, const float *gy, const float *b, int64_t n, int64_t nb, int add) {
    int64_t i;
    if (!b && !add) { lt__copy(ga, gy, n); return; }
    if (!b) {
        LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
        for (i = 0; i < n; i++) ga[i] += gy[i];
        return;
    }
    if (!add) {
        LT__OMP(parallel for if (n > LT__EW_PAR))
        for (i = 0; i < n; i++) ga[i] = gy[i] * b[i % nb];
        return;
    }
    LT__OMP(parallel for if (n > LT__EW_PAR))
    for (i = 0; i < n; i++) ga[i] += gy[i] * b[i % nb];
}
/* The width of the column blocks the threads take for sums over rows (the gradients of a
   broadcast bias or of an embedding): nb columns in a multiple of the thread count of blocks,
   each at most LT__BGB_W columns, rounded up to 16 */
#define LT__BGB_W 1024
static int64_t lt__col_block(int64_t nb) {
    int64_t nt = lt_get_threads(), per = (nb + nt * LT__BGB_W - 1) / (nt * LT__BGB_W), blocks = nt * per;
    return ((nb + blocks - 1) / blocks + 15) / 16 * 16;
}
/* gb: each thread sums blocks of whole columns, walking the rows in order, so it reads one run of
   up to 4 KiB from each row, which the hardware fetches ahead, where blocks of 64 columns left it
   waiting on a few lines from every row (bench/design.md). */
static void lt__bcast_grad_b(float *gb, const float *gy, const float *a, int64_t n, int64_t nb, float sign, int add) {
    int64_t j0, rows = n / nb, bw = lt__col_block(nb);
    if (rows == 1 && !a && sign > 0) { lt__bcast_grad_a(gb, gy, NULL, n, nb, add); return; }   /* same shape */
    LT__OMP(parallel for if (n > LT__EW_PAR))
    for (j0 = 0; j0 < nb; j0 += bw) {
        float acc[LT__BGB_W];   /* the sums of this block of columns, apart from gb (no aliasing) */
        int64_t w = j0 + bw < nb ? bw : nb - j0, r, j;
        for (j = 0; j < w; j++) acc[j] = add ? gb[j0 + j] : 0.0f;
        for (r = 0; r < rows; r++) {
            const float *g = gy + r * nb + j0, *x = a ? a + r * nb + j0 : NULL;
            if (x) {
                LT__OMP(simd)
                for (j = 0; j < w; j++) acc[j] += g[j] * x[j];
            } else if (sign > 0) {
                LT__OMP(simd)
                for (j = 0; j < w; j++) acc[j] += g[j];
            } else {
                LT__OMP(simd)
                for (j = 0; j < w; j++) acc[j] -= g[j];
            }
        }
        for (j = 0; j < w; j++) gb[j0 + j] = acc[j];
    }
}

static void lt__add_fwd(lt__node *nd) {
    const float *a = nd->in[0]->data, *b = nd->in[1]->data;
    float *y = nd->out->data;
    int64_t n = nd->out->n, nb = nd->in[1]->n, r;
    if (nb == n) {   /* the same shape (a residual add): one row, split over the threads by elements */
        LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
        for (r = 0; r < n; r++) y[r] = a[r] + b[r];
        return;
    }
    LT__OMP(parallel for if (n > 32768))
    for (r = 0; r < n / nb; r++) {
        int64_t j;
        LT__OMP(simd)
        for (j = 0; j < nb; j++) y[r * nb + j] = a[r * nb + j] + b[j];
    }
}
/* da += dy; db += sum over the broadcast rows of dy */
static void lt__add_bwd(lt__node *nd) {
    int adda, addb;
    float *gy = nd->out->grad, *gb = lt__grad_w(nd->in[1], nd->ctx, &addb), *ga;
    int64_t n = nd->out->n, nb = nd->in[1]->n;
    if (gb && !(gb == gy && !addb)) lt__bcast_grad_b(gb, gy, NULL, n, nb, 1.0f, addb);   /* (a plan's in place) */
    if (lt__grad_adopt(nd, 0)) return;   /* da = dy: a takes dy's buffer as it is (eager) */
    ga = lt__grad_w(nd->in[0], nd->ctx, &adda);
    if (ga && !(ga == gy && !adda)) lt__bcast_grad_a(ga, gy, NULL, n, nb, adda);   /* (a plan's in place: done) */
}
LTRAIN_DEF lt_tensor *lt_add(lt_ctx *ctx, lt_tensor *a, lt_tensor *b) { return lt__binary(ctx, LT__OP(add), "lt_add", a, b); }
/* lt_add whose result is written over the values of `over` (a or b, of the result's shape): for
   the GPT trunk's residual adds, whose branch output is a private intermediate that no backward
   kernel reads (add's own backward reads no values), so eager mode keeps one tensor fewer per
   add.  Recording for lt_compile, or off the CPU, it is a plain lt_add (the plan places memory). */
static lt_tensor *lt__add_over(lt_ctx *ctx, lt_tensor *a, lt_tensor *b, lt_tensor *over) {
    lt__node *nd;
    if (!ctx || ctx->cap || ctx->dry || ctx->device != LT_CPU || !a || !b || !over || over->n != a->n ||
        over->is_param || over->base || !over->data)
        return lt_add(ctx, a, b);
    if (!lt__live(ctx, "lt_add", a, b) || !lt__check_broadcast(ctx, "lt_add", a, b)) return NULL;
    nd = lt__node_new(ctx, LT__OP(add), a->ndim, a->shape, a, b, NULL, 1);
    if (!nd) return NULL;
    nd->out->data = over->data;
    return lt__run(ctx, nd);
}

static void lt__sub_fwd(lt__node *nd) {
    const float *a = nd->in[0]->data, *b = nd->in[1]->data;
    float *y = nd->out->data;
    int64_t n = nd->out->n, nb = nd->in[1]->n, i;
    LT__OMP(parallel for if (n > LT__EW_PAR))
    for (i = 0; i < n; i++) y[i] = a[i] - b[i % nb];
}
/* da += dy; db -= sum of dy over the broadcast rows */
static void lt__sub_bwd(lt__node *nd) {
    int adda, addb;
    float *ga = lt__grad_w(nd->in[0], nd->ctx, &adda), *gb = lt__grad_w(nd->in[1], nd->ctx, &addb), *gy = nd->out->grad;
    int64_t n = nd->out->n, nb = nd->in[1]->n;
    if (ga) lt__bcast_grad_a(ga, gy, NULL, n, nb, adda);
    if (gb) lt__bcast_grad_b(gb, gy, NULL, n, nb, -1.0f, addb);
}
LTRAIN_DEF lt_tensor *lt_sub(lt_ctx *ctx, lt_tensor *a, lt_tensor *b) { return lt__binary(ctx, LT__OP(sub), "lt_sub", a, b); }

static void lt__mul_fwd(lt__node *nd) {
    const float *a = nd->in[0]->data, *b = nd->in[1]->data;
    float *y = nd->out->data;
    int64_t n = nd->out->n, nb = nd->in[1]->n, i;
    LT__OMP(parallel for if (n > LT__EW_PAR))
    for (i = 0; i < n; i++) y[i] = a[i] * b[i % nb];
}
/* da += dy*b; db += sum over broadcast rows of dy*a */
static void lt__mul_bwd(lt__node *nd) {
    const float *a = nd->in[0]->data, *b = nd->in[1]->data;
    int adda, addb;
    float *ga = lt__grad_w(nd->in[0], nd->ctx, &adda), *gb = lt__grad_w(nd->in[1], nd->ctx, &addb), *gy = nd->out->grad;
    int64_t n = nd->out->n, nb = nd->in[1]->n;
    if (ga) lt__bcast_grad_a(ga, gy, b, n, nb, adda);
    if (gb) lt__bcast_grad_b(gb, gy, a, n, nb, 1.0f, addb);
}
LTRAIN_DEF lt_tensor *lt_mul(lt_ctx *ctx, lt_tensor *a, lt_tensor *b) { return lt__binary(ctx, LT__OP(mul), "lt_mul", a, b); }

/* ---- @@OPS.scale  scale: y = s*x ----------------------------------------------------------------- */
#define LT__SCALE_S(nd) ((nd)->f[0])   /* s */
static void lt__scale_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data, s = (float)LT__SCALE_S(nd);
    int64_t i, n = nd->out->n;
    LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
    for (i = 0; i < n; i++) y[i] = s * x[i];
}
static void lt__scale_bwd(lt__node *nd) {
    int add;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gy = nd->out->grad, s = (float)LT__SCALE_S(nd);
    int64_t i, n = nd->out->n;
    if (!gx) return;
    if (!add) {
        LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
        for (i = 0; i < n; i++) gx[i] = s * gy[i];
        return;
    }
    LT__OMP(parallel for simd if (parallel : n > LT__EW_PAR))
    for (i = 0; i < n; i++) gx[i] += s * gy[i];
}
LTRAIN_DEF lt_tensor *lt_scale(lt_ctx *ctx, lt_tensor *a, float s) {
    lt__node *nd;
    if (!lt__live(ctx, "lt_scale", a, a)) return NULL;
    nd = lt__node_new(ctx, LT__OP(scale), a->ndim, a->shape, a, NULL, NULL, 0);
    if (nd) LT__SCALE_S(nd) = s;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.sum  sum, mean: x (any) -> y [1] ------------------------------------------------- */
static double lt__sum_f(const float *x, int64_t n) {
    double s = 0;
    int64_t i;
    for (i = 0; i < n; i++) s += x[i];
    return s;
}
static void lt__sum_fwd(lt__node *nd) { nd->out->data[0] = (float)lt__sum_f(nd->in[0]->data, nd->in[0]->n); }
/* dx_i += dy */
static void lt__sum_bwd(lt__node *nd) {
    float *gx = lt__grad(nd->in[0], nd->ctx), g = nd->out->grad[0];
    int64_t i, n = nd->in[0]->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += g;
}
static void lt__mean_fwd(lt__node *nd) {
    nd->out->data[0] = (float)(lt__sum_f(nd->in[0]->data, nd->in[0]->n) / (double)nd->in[0]->n);
}
/* dx_i += dy / n */
static void lt__mean_bwd(lt__node *nd) {
    float *gx = lt__grad(nd->in[0], nd->ctx), g = nd->out->grad[0] / (float)nd->in[0]->n;
    int64_t i, n = nd->in[0]->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += g;
}
static lt_tensor *lt__reduce(lt_ctx *ctx, const lt__opdef *op, const char *who, lt_tensor *a) {
    int64_t one = 1;
    lt__node *nd;
    if (!lt__live(ctx, who, a, a)) return NULL;
    nd = lt__node_new(ctx, op, 1, &one, a, NULL, NULL, 0);
    return lt__run(ctx, nd);
}
LTRAIN_DEF lt_tensor *lt_sum(lt_ctx *ctx, lt_tensor *a) { return lt__reduce(ctx, LT__OP(sum), "lt_sum", a); }
LTRAIN_DEF lt_tensor *lt_mean(lt_ctx *ctx, lt_tensor *a) { return lt__reduce(ctx, LT__OP(mean), "lt_mean", a); }

/* ---- @@OPS.activations  pointwise activations --------------------------------------------------- */
static lt_tensor *lt__unary(lt_ctx *ctx, const lt__opdef *op, const char *who, lt_tensor *a) {
    lt__node *nd;
    if (!lt__live(ctx, who, a, a)) return NULL;
    nd = lt__node_new(ctx, op, a->ndim, a->shape, a, NULL, NULL, 0);
    return lt__run(ctx, nd);
}

/* ---- @@OPS.gelu  gelu (tanh, and erf below) -------------------------------------------------- */
/* gelu (tanh): y = ½x(1 + tanh(u)), u = √(2/π)(x + 0.044715x³)   (torch's approximate='tanh'),
   computed as y = x·s with s = σ(2u) = 1/(1 + e^(-2u)), which is ½(1 + tanh u): one exp and no
   cancellation where tanh u → -1 (there 1 + tanh u loses digits, σ does not).
     dy/dx = s + x·σ'(2u)·2u' = s + 2x·s(1 - s)·√(2/π)(1 + 3·0.044715x²)
   σ(z) from e = exp(-|z|) <= 1 (no overflow): 1/(1 + e) for z >= 0, e/(1 + e) for z < 0. */
#define LT__GELU_K 0.7978845608028654f /* sqrt(2/pi) */
#define LT__GELU_C 0.044715f
LT__OMP(declare simd)
static inline float lt__gelu_s(float v) {   /* s = σ(2u) at x = v */
    float u = LT__GELU_K * (v + LT__GELU_C * v * v * v), e = lt__exp_neg(-2.0f * fabsf(u)), r = 1.0f / (1.0f + e);
    return u < 0.0f ? e * r : r;
}
LT__OMP(declare simd)
static inline float lt__gelu_d(float v) {   /* dy/dx at x = v */
    float s = lt__gelu_s(v);
    return s + 2.0f * v * (s - s * s) * LT__GELU_K * (1.0f + 3.0f * LT__GELU_C * v * v);
}

/* ---- fast paths: AVX-512 and AVX2 (gelu) ------------------------------------------------------- */
#ifdef LT__X86
/* The same with AVX-512, 16 values at a time (the last ones masked): exp by lt__exp_neg16, and
   1/(1 + e) by the 14-bit reciprocal and one Newton step, r·(2 - d·r).  Each result is within a
   few ulp of the plain C loops' (they divide), at about half their cost (bench/design.md). */
LT__TARGET("avx512f") static inline __m512 lt__gelu_s16(__m512 v) {
    __m512 u = _mm512_mul_ps(_mm512_set1_ps(LT__GELU_K),
                             _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(LT__GELU_C), _mm512_mul_ps(v, v)), v, v));
    __m512 e = lt__exp_neg16(_mm512_mul_ps(_mm512_set1_ps(-2.0f), _mm512_abs_ps(u)));
    __m512 d = _mm512_add_ps(_mm512_set1_ps(1.0f), e), r = _mm512_maskz_rcp14_ps(LT__M16, d);
    r = _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
    return _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(u, _mm512_setzero_ps(), _CMP_LT_OQ), r, e);
}
LT__TARGET("avx512f") static void lt__gelu_avx512(const float *x, float *y, int64_t m) {
    int64_t i;
    for (i = 0; i < m; i += 16) {
        __mmask16 k = (__mmask16)(m - i >= 16 ? 0xFFFFu : (1u << (m - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, x + i);
        _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(v, lt__gelu_s16(v)));
    }
}
/* gx = gy·dy/dx (add: gx += ...); gy NULL: gx = dy/dx */
LT__TARGET("avx512f") static void lt__gelu_bwd_avx512(const float *x, const float *gy, float *gx, int64_t m, int add) {
    const __m512 two = _mm512_set1_ps(2.0f), one = _mm512_set1_ps(1.0f);
    int64_t i;
    for (i = 0; i < m; i += 16) {
        __mmask16 k = (__mmask16)(m - i >= 16 ? 0xFFFFu : (1u << (m - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, x + i), s = lt__gelu_s16(v);
        __m512 du = _mm512_mul_ps(_mm512_set1_ps(LT__GELU_K),
                                  _mm512_fmadd_ps(_mm512_set1_ps(3.0f * LT__GELU_C), _mm512_mul_ps(v, v), one));
        __m512 d = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_mul_ps(two, v), _mm512_fnmadd_ps(s, s, s)), du, s);
        LT__FETCH(x + i);   /* (@@CORE: memory keeps up with the polynomial) */
        if (gy) { LT__FETCH(gy + i); d = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, gy + i), d); }
        if (add) d = _mm512_add_ps(_mm512_maskz_loadu_ps(k, gx + i), d);
        _mm512_mask_storeu_ps(gx + i, k, d);
    }
}

/* The same with AVX2 + FMA (CPUs without AVX-512), 8 values at a time: exp by lt__exp_neg8,
   1/(1 + e) by a division. */
LT__TARGET("avx2,fma") static inline __m256 lt__gelu_s8(__m256 v) {
    __m256 u = _mm256_mul_ps(_mm256_set1_ps(LT__GELU_K),
                             _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(LT__GELU_C), _mm256_mul_ps(v, v)), v, v));
    __m256 au = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), u);
    __m256 e = lt__exp_neg8(_mm256_mul_ps(_mm256_set1_ps(-2.0f), au));
    __m256 r = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    return _mm256_blendv_ps(r, _mm256_mul_ps(e, r), _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_LT_OQ));
}
/* y = gelu(x) (gy NULL, grad 0); grad 1: gx = gy·gelu'(x), or gelu'(x) where gy is NULL, added
   to gx when add is set; the last values through lt__load8 / lt__store8 */
LT__TARGET("avx2,fma") static void lt__gelu_avx2(const float *x, const float *gy, float *out, int64_t m, int grad, int add) {
    int64_t i;
    for (i = 0; i < m; i += 8) {
        int64_t nv = m - i;
        __m256 v = lt__load8(x + i, nv), s = lt__gelu_s8(v), d;
        if (!grad) { lt__store8(out + i, _mm256_mul_ps(v, s), nv); continue; }
        LT__FETCH(x + i);   /* (the backward's, as above) */
        if (gy) LT__FETCH(gy + i);
        d = _mm256_mul_ps(_mm256_set1_ps(LT__GELU_K),
                          _mm256_fmadd_ps(_mm256_set1_ps(3.0f * LT__GELU_C), _mm256_mul_ps(v, v), _mm256_set1_ps(1.0f)));
        d = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(2.0f), v), _mm256_fnmadd_ps(s, s, s)), d, s);
        if (gy) d = _mm256_mul_ps(lt__load8(gy + i, nv), d);
        if (add) d = _mm256_add_ps(lt__load8(out + i, nv), d);
        lt__store8(out + i, d, nv);
    }
}
#endif

/* y = gelu(x) for m values (y may be x).  The plain C path runs every value through the same
   16-wide loop of one function that is never inlined (lt__gelu_run16; the last piece padded into
   a block of 16), never a scalar remainder loop or a second copy of the loop that the compiler
   may contract (FMA) differently, so a value gets the same bits wherever it sits: gelu16's
   lookup table (below) is made by this function too. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void lt__gelu_run16(const float *x, float *y, int64_t blocks) {   /* blocks x 16 floats */
    int64_t b;
    int i;
    for (b = 0; b < blocks; b++, x += 16, y += 16) {
        LT__OMP(simd)
        for (i = 0; i < 16; i++) y[i] = x[i] * lt__gelu_s(x[i]);   /* a fixed trip count: one vector body */
    }
}
static void lt__gelu_rows(int simd, const float *x, float *y, int64_t m) {
    int64_t full = m / 16, i;
#ifdef LT__X86
    if (simd == 2) { lt__gelu_avx512(x, y, m); return; }
    if (simd == 1) { lt__gelu_avx2(x, NULL, y, m, 0, 0); return; }
#else
    (void)simd;
#endif
    if (full) lt__gelu_run16(x, y, full);
    if (m > full * 16) {
        float t[16];
        int n = (int)(m - full * 16);
        for (i = 0; i < 16; i++) t[i] = i < n ? x[full * 16 + i] : 0.0f;
        lt__gelu_run16(t, t, 1);
        for (i = 0; i < n; i++) y[full * 16 + i] = t[i];
    }
}
/* gx = gy·gelu'(x) (add: gx += ...; gx may be gy); gy NULL: gx = gelu'(x) */
static void lt__gelu_grad_rows(int simd, const float *x, const float *gy, float *gx, int64_t m, int add) {
    int64_t i;
#ifdef LT__X86
    if (simd == 2) { lt__gelu_bwd_avx512(x, gy, gx, m, add); return; }
    if (simd == 1) { lt__gelu_avx2(x, gy, gx, m, 1, add); return; }
#else
    (void)simd;
#endif
    if (!gy) {
        LT__OMP(simd)
        for (i = 0; i < m; i++) gx[i] = lt__gelu_d(x[i]);
    } else if (add) {
        LT__OMP(simd)
        for (i = 0; i < m; i++) gx[i] += gy[i] * lt__gelu_d(x[i]);
    } else {
        LT__OMP(simd)
        for (i = 0; i < m; i++) gx[i] = gy[i] * lt__gelu_d(x[i]);
    }
}
/* The element-wise kernels by level, as GELU (lt__gelu_rows), the softmax sums (lt__exp_sum,
   lt__exp_grad), attention and AdamW take them: 2 AVX-512, 1 AVX2 + FMA, 0 plain C (the kernel
   set LT_GEMM picks, lt__gemm_pick). */
static int lt__simd_level(void) {
#ifdef LT__X86
    int id = lt__gemm_pick();
    return id == LT__GEMM_AVX512 ? 2 : id == LT__GEMM_AVX2 ? 1 : 0;
#else
    return 0;
#endif
}
/* Which of gelu16's kernels run (below): 2 AVX-512, 1 AVX2 + F16C (CPUs without AVX-512), 0 the
   plain C loops */
static int lt__act_simd(void) {
    int s = lt__simd_level();
    return s == 1 && !lt__k_available(LT__K_AVX2) ? 0 : s;
}
/* The loops run over blocks of LT__EWB values, each a simd loop in a function of its own, and the
   threads take blocks.  (A combined "parallel for simd if (...)" whose condition is false, as
   for a small tensor, also turns the simd off; bench/design.md.  "if (parallel : ...)" limits the
   condition to the threads; the simple loops below are written that way.) */
#define LT__EWB 4096
static void lt__gelu_fwd(lt__node *nd) {
    int64_t n = nd->out->n, b;
    int simd = lt__simd_level();
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++)
        lt__gelu_rows(simd, nd->in[0]->data + b * LT__EWB, nd->out->data + b * LT__EWB,
                      n - b * LT__EWB < LT__EWB ? n - b * LT__EWB : LT__EWB);
}
static void lt__gelu_bwd(lt__node *nd) {
    const float *gy = nd->out->grad;
    int add = 0, simd = lt__simd_level();
    float *gx = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &add);   /* in place? */
    int64_t n = nd->out->n, b;
    if (!gx) return;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++)
        lt__gelu_grad_rows(simd, nd->in[0]->data + b * LT__EWB, gy + b * LT__EWB, gx + b * LT__EWB,
                           n - b * LT__EWB < LT__EWB ? n - b * LT__EWB : LT__EWB, add);
}

/* gelu16 (lt_set_precision): y = round16(gelu(round16(x))), as torch's gelu on a bf16 tensor (its
   math in float32, the result rounded); saves x in 16 bits (save[0], R·n/2 floats), so the
   float32 input is free after the forward; dx += dy·gelu'(x16) in float32.  LT__PREC(nd) = the precision.
   In blocks of LT__EW16 elements, converted on the stack.  In a compiled plan whose readers of y
   all recompute it from that copy (16-bit products: @@COMPILE's lt__plan_unmade) y is NULL, and
   the forward writes the copy alone.  And when x is a 16-bit product's output read by gelu16
   alone, the product's backward reads dx only as round16(dx): LT__G16_DX16 (set by the plan,
   lt__plan_dx16) has the backward write dx so, each row of O 16-bit values over the first half
   of its float32 bytes in x's gradient buffer (16-bit rows 2·O apart), where the product finds
   them (LT__AFF_DY16) instead of making that copy itself.  And where that product is x's maker
   and y is unmade, the product may write the copy itself (LT__G16_XH_MADE, @@COMPILE's
   lt__plan_y16_homes): the forward then has nothing left to do. */
#define LT__G16_DX16(nd) ((nd)->i[0])
#define LT__G16_XH_MADE(nd) ((nd)->i[1])
#define LT__EW16 4096
/* A 16-bit input is one of 65536 bit patterns, so gelu16's output round16(gelu(x)) and the
   derivative gelu'(x) are tabulated, once per format (4 tables of 256 KiB, filled the first time
   lt_gelu is called in that precision), and every later value is a lookup: no exp per element
   in the forward, the backward, or the GEMM's packing that recomputes the MLP's activation.
   The tables come from lt__gelu_rows and lt__gelu_grad_rows themselves (with the kernels that
   float32 gelu runs on this CPU), so a lookup gives the bits the float32 op gives. */
static float lt__gelu16_y[2][65536], lt__gelu16_dy[2][65536];
static int lt__gelu16_ready[2];
static void lt__gelu16_tables(lt_dtype p) {
    int k = p == LT_F16, i;
    LT__OMP(critical(lt__gelu16_tables))
    if (!lt__gelu16_ready[k]) {
        float *y = lt__gelu16_y[k], *d = lt__gelu16_dy[k];
        uint16_t h[256];
        int j, simd = lt__simd_level();
        for (i = 0; i < 65536; i += 256) {
            for (j = 0; j < 256; j++) h[j] = (uint16_t)(i + j);
            lt__from16(p, h, y + i, 256);
        }
        lt__gelu_grad_rows(simd, y, NULL, d, 65536, 0);
        lt__gelu_rows(simd, y, y, 65536);
        lt__round16(p, y, y, 65536);
        lt__gelu16_ready[k] = 1;
    }
}
/* y = round16(gelu(x16)): gelu16's output from its saved input (also for a GEMM's packing) */
static void lt__gelu16_block(lt_dtype p, const uint16_t *xh, float *y, int64_t m) {
    const float *tab = lt__gelu16_y[p == LT_F16];
    int64_t i;
    for (i = 0; i < m; i++) y[i] = tab[xh[i]];
}
/* One block of m values, the plain C way: x rounded to its 16-bit patterns h (xh: where they are
   saved, or NULL), then y = tab_y[h] (forward), or gx (+)= gy·tab_dy[h] (backward; x NULL: h is
   xh, saved by the forward). */
static void lt__gelu16_fwd_c(lt_dtype p, const float *x, uint16_t *xh, float *y, int64_t m) {
    uint16_t tmp[LT__EW16], *h = xh ? xh : tmp;
    lt__to16(p, x, h, (size_t)m);
    lt__gelu16_block(p, h, y, m);
}
static void lt__gelu16_bwd_c(lt_dtype p, const float *x, const uint16_t *xh, const float *gy, float *gx, int64_t m,
                             int add) {
    const float *tab = lt__gelu16_dy[p == LT_F16];
    uint16_t tmp[LT__EW16];
    const uint16_t *h = xh ? xh : tmp;
    int64_t j;
    if (!xh) lt__to16(p, x, tmp, (size_t)m);
    if (add) {
        LT__OMP(simd)
        for (j = 0; j < m; j++) gx[j] += gy[j] * tab[h[j]];
    } else {
        LT__OMP(simd)
        for (j = 0; j < m; j++) gx[j] = gy[j] * tab[h[j]];
    }
}

/* ---- fast paths: AVX-512 and AVX2 (gelu16's lookups) --------------------------------------------- */
#ifdef LT__X86
/* The same, 16 values at a time in registers: x rounded to its 16-bit patterns as lt__to16 rounds
   (bf16: the integer formula, which vcvtneps2bf16 matches where lt__to16 takes it; fp16: vcvtps2ph,
   a block holding a NaN by lt__to16 itself, for its canonical NaN), the patterns as 32-bit lane
   indices, and 16 table entries fetched by one gather: 1.5-2x as fast as rounding a block into
   memory and looking up one value at a time (bench/precision.md); the same bits. */
LT__TARGET("avx512f") static __m512i lt__pat16(lt_dtype p, __m512 v, __mmask16 k) {   /* k: the first lanes */
    if (p == LT_BF16) return lt__bf16_round16(_mm512_castps_si512(v));
    if (_mm512_mask_cmp_ps_mask(k, v, v, _CMP_UNORD_Q)) {
        float f[16];
        uint16_t t[16] = {0};
        int n = 0;
        _mm512_storeu_ps(f, v);
        while (n < 16 && (k >> n & 1)) n++;
        lt__to16(p, f, t, (size_t)n);
        return _mm512_maskz_cvtepu16_epi32(LT__M16, _mm256_loadu_si256((const __m256i *)(const void *)t));
    }
    return _mm512_maskz_cvtepu16_epi32(LT__M16, _mm512_maskz_cvtps_ph(LT__M16, v, _MM_FROUND_TO_NEAREST_INT));
}
LT__TARGET("avx512f") static __m512i lt__gelu16_idx(lt_dtype p, const float *x, const uint16_t *xh, __mmask16 k) {
    if (xh) return _mm512_maskz_cvtepu16_epi32(LT__M16, lt__load16_lanes(xh, k));   /* the saved patterns */
    return lt__pat16(p, _mm512_maskz_loadu_ps(k, x), k);
}
LT__TARGET("avx512f") static void lt__gelu16_fwd_avx512(lt_dtype p, const float *x, uint16_t *xh, float *y, int64_t m) {
    const float *tab = lt__gelu16_y[p == LT_F16];
    int64_t i;
    for (i = 0; i < m; i += 16) {
        __mmask16 k = (__mmask16)(m - i >= 16 ? 0xFFFFu : (1u << (m - i)) - 1u);
        __m512i h = lt__gelu16_idx(p, x + i, NULL, k);
        if (xh) _mm512_mask_cvtepi32_storeu_epi16(xh + i, k, h);
        _mm512_mask_storeu_ps(y + i, k, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, h, tab, 4));
    }
}
LT__TARGET("avx512f") static void lt__gelu16_bwd_avx512(lt_dtype p, const float *x, const uint16_t *xh, const float *gy,
                                                       float *gx, uint16_t *gh, int64_t m, int add) {
    const float *tab = lt__gelu16_dy[p == LT_F16];
    int64_t i;
    for (i = 0; i < m; i += 16) {
        __mmask16 k = (__mmask16)(m - i >= 16 ? 0xFFFFu : (1u << (m - i)) - 1u);
        __m512i h = lt__gelu16_idx(p, x ? x + i : NULL, xh ? xh + i : NULL, k);
        __m512 d = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, gy + i), _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, h, tab, 4));
        if (x) LT__FETCH(x + i);   /* (@@CORE) */
        else if (i % 32 == 0) LT__FETCH(xh + i);
        LT__FETCH(gy + i);
        if (gh) { _mm512_mask_cvtepi32_storeu_epi16(gh + i, k, lt__pat16(p, d, k)); continue; }   /* dx16 */
        if (add) d = _mm512_add_ps(_mm512_maskz_loadu_ps(k, gx + i), d);
        _mm512_mask_storeu_ps(gx + i, k, d);
    }
}
/* The AVX2 (+ F16C) twins for CPUs without AVX-512, 8 values a gather (bf16 rounded by
   lt__bf16_round8, the scalar formula; fp16 by vcvtps2ph, 8 values holding a NaN by the scalar
   code); the last m % 8 values by the plain C path.  The same bits as the C loops. */
LT__TARGET("avx2,f16c") static __m256i lt__gelu16_idx8(lt_dtype p, const float *x, const uint16_t *xh) {
    __m256 v;
    if (xh) return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)xh));
    if (p == LT_BF16) return lt__bf16_round8(_mm256_loadu_si256((const __m256i *)(const void *)x));
    v = _mm256_loadu_ps(x);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
        uint16_t t[8];
        int j;
        for (j = 0; j < 8; j++) t[j] = lt_f32_to_f16(x[j]);
        return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)t));
    }
    return _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
LT__TARGET("avx2,f16c") static void lt__gelu16_fwd_avx2(lt_dtype p, const float *x, uint16_t *xh, float *y, int64_t m) {
    const float *tab = lt__gelu16_y[p == LT_F16];
    int64_t i;
    for (i = 0; i + 8 <= m; i += 8) {
        __m256i h = lt__gelu16_idx8(p, x + i, NULL);
        if (xh)   /* the 8 patterns (each < 65536) narrowed to 16 bits, in order */
            _mm_storeu_si128((__m128i *)(void *)(xh + i),
                             _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
        _mm256_storeu_ps(y + i, _mm256_i32gather_ps(tab, h, 4));
    }
    if (i < m) lt__gelu16_fwd_c(p, x + i, xh ? xh + i : NULL, y + i, m - i);
}
LT__TARGET("avx2,f16c") static void lt__gelu16_bwd_avx2(lt_dtype p, const float *x, const uint16_t *xh, const float *gy,
                                                       float *gx, int64_t m, int add) {
    const float *tab = lt__gelu16_dy[p == LT_F16];
    int64_t i;
    for (i = 0; i + 8 <= m; i += 8) {
        __m256i h = lt__gelu16_idx8(p, x ? x + i : NULL, xh ? xh + i : NULL);
        __m256 d = _mm256_mul_ps(_mm256_loadu_ps(gy + i), _mm256_i32gather_ps(tab, h, 4));
        if (x) LT__FETCH(x + i);   /* (@@CORE) */
        else if (i % 32 == 0) LT__FETCH(xh + i);
        LT__FETCH(gy + i);
        if (add) d = _mm256_add_ps(_mm256_loadu_ps(gx + i), d);
        _mm256_storeu_ps(gx + i, d);
    }
    if (i < m) lt__gelu16_bwd_c(p, x ? x + i : NULL, xh ? xh + i : NULL, gy + i, gx + i, m - i, add);
}
#endif

static void lt__gelu16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC(nd));
    uint16_t *xh = (uint16_t *)(void *)nd->save[0];   /* x in 16 bits, saved for backward, or NULL */
    int64_t n = nd->out->n, nb = (n + LT__EW16 - 1) / LT__EW16, b;
    int simd = lt__act_simd();
    if (!nd->out->data && LT__G16_XH_MADE(nd)) return;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < nb; b++) {
        int64_t lo = b * LT__EW16, m = n - lo < LT__EW16 ? n - lo : LT__EW16;
        if (!nd->out->data) {   /* y unmade (a compiled plan's readers recompute it from xh): the copy */
            lt__to16(p, nd->in[0]->data + lo, xh + lo, (size_t)m);
            continue;
        }
#ifdef LT__X86
        if (simd == 2) { lt__gelu16_fwd_avx512(p, nd->in[0]->data + lo, xh ? xh + lo : NULL, nd->out->data + lo, m); continue; }
        if (simd == 1) { lt__gelu16_fwd_avx2(p, nd->in[0]->data + lo, xh ? xh + lo : NULL, nd->out->data + lo, m); continue; }
#endif
        lt__gelu16_fwd_c(p, nd->in[0]->data + lo, xh ? xh + lo : NULL, nd->out->data + lo, m);
    }
    (void)simd;
}
static void lt__gelu16_bwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC(nd));
    const uint16_t *xh = (const uint16_t *)(const void *)nd->save[0];   /* NULL: (eager, x read in
                                                                           place: lt__copy16) from x */
    const float *gy = nd->out->grad;
    int add = 0, simd = lt__act_simd();
    float *gx = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &add);
    int64_t n = nd->out->n, O = nd->out->shape[nd->out->ndim - 1], nb, b;
    int dx16 = LT__G16_DX16(nd) != 0;
    if (!gx) return;
    /* blocks of LT__EW16, or with dx16 rows (each in blocks), a row's 16-bit values written over
       the first half of its own float32 bytes: each thread writes only what it has read */
    nb = dx16 ? n / O * ((O + LT__EW16 - 1) / LT__EW16) : (n + LT__EW16 - 1) / LT__EW16;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < nb; b++) {
        int64_t per = (O + LT__EW16 - 1) / LT__EW16, r = b / per, lo = dx16 ? r * O + b % per * LT__EW16 : b * LT__EW16;
        int64_t end = dx16 ? (r + 1) * O : n, m = end - lo < LT__EW16 ? end - lo : LT__EW16;
        const float *x = xh ? NULL : nd->in[0]->data + lo;
        uint16_t *gh = dx16 ? (uint16_t *)(void *)(gx + r * O) + (lo - r * O) : NULL;
        float tmp[LT__EW16], *o = dx16 ? tmp : gx + lo;   /* dx16: the block's float32 dx, then rounded */
#ifdef LT__X86
        if (simd == 2) {   /* (rounds in registers) */
            lt__gelu16_bwd_avx512(p, x, xh ? xh + lo : NULL, gy + lo, gx + lo, gh, m, add);
            continue;
        }
        if (simd == 1) lt__gelu16_bwd_avx2(p, x, xh ? xh + lo : NULL, gy + lo, o, m, add && !dx16);
        else
#endif
        lt__gelu16_bwd_c(p, x, xh ? xh + lo : NULL, gy + lo, o, m, add && !dx16);
        if (dx16) lt__to16(p, tmp, gh, (size_t)m);
    }
    (void)simd;
}
LTRAIN_DEF lt_tensor *lt_gelu(lt_ctx *ctx, lt_tensor *a) {
    lt__node *nd;
    if (!ctx || ctx->precision == LT_F32 || ctx->device != LT_CPU)   /* (the CUDA kernel is float32) */
        return lt__unary(ctx, LT__OP(gelu), "lt_gelu", a);
    if (!lt__live(ctx, "lt_gelu", a, a)) return NULL;
    lt__gelu16_tables(ctx->precision);
    nd = lt__node_new(ctx, LT__OP(gelu16), a->ndim, a->shape, a, NULL, NULL, 0);
    if (!nd) return NULL;
    LT__PREC(nd) = (double)ctx->precision;
    if (nd->out->requires_grad && lt__copy16(ctx, a) && !lt__save(ctx, nd, 0, (a->n + 1) / 2)) return NULL;
    return lt__run(ctx, nd);
}

/* gelu (erf): y = ½x(1 + erf(x/√2)),  dy/dx = ½(1 + erf(x/√2)) + x·φ(x),  φ = exp(-x²/2)/√(2π) */
static void lt__gelu_erf_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data;
    int64_t i, n = nd->out->n;
    for (i = 0; i < n; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}
static void lt__gelu_erf_bwd(lt__node *nd) {
    const float *x = nd->in[0]->data, *gy = nd->out->grad;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    int64_t i, n = nd->out->n;
    if (gx)
        for (i = 0; i < n; i++) {
            float v = x[i];
            float d = 0.5f * (1.0f + erff(v * 0.70710678118654752f)) + v * expf(-0.5f * v * v) * 0.3989422804014327f;
            gx[i] += gy[i] * d;
        }
}
LTRAIN_DEF lt_tensor *lt_gelu_erf(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(gelu_erf), "lt_gelu_erf", a); }

/* ---- @@OPS.relu  relu, tanh, sigmoid --------------------------------------------------------- */
/* relu: y = max(x, 0), dy/dx = [x > 0] */
static void lt__relu_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data;
    int64_t i, n = nd->out->n;
    for (i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
}
static void lt__relu_bwd(lt__node *nd) {
    const float *x = nd->in[0]->data, *gy = nd->out->grad;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    int64_t i, n = nd->out->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += x[i] > 0 ? gy[i] : 0.0f;
}
LTRAIN_DEF lt_tensor *lt_relu(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(relu), "lt_relu", a); }

/* tanh: dy/dx = 1 - y² */
static void lt__tanh_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data;
    int64_t i, n = nd->out->n;
    LT__OMP(simd)
    for (i = 0; i < n; i++) y[i] = lt__tanh(x[i]);
}
static void lt__tanh_bwd(lt__node *nd) {
    const float *y = nd->out->data, *gy = nd->out->grad;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    int64_t i, n = nd->out->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += gy[i] * (1.0f - y[i] * y[i]);
}
LTRAIN_DEF lt_tensor *lt_tanh(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(tanh), "lt_tanh", a); }

/* sigmoid: y = 1/(1+e^-x) (computed without overflow for x << 0), dy/dx = y(1-y) */
static void lt__sigmoid_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data;
    int64_t i, n = nd->out->n;
    for (i = 0; i < n; i++) {
        float v = x[i];
        float e = lt__exp_neg(-fabsf(v));           /* e^-|v|: never overflows */
        y[i] = v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
    }
}
static void lt__sigmoid_bwd(lt__node *nd) {
    const float *y = nd->out->data, *gy = nd->out->grad;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    int64_t i, n = nd->out->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += gy[i] * y[i] * (1.0f - y[i]);
}
LTRAIN_DEF lt_tensor *lt_sigmoid(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(sigmoid), "lt_sigmoid", a); }

/* ---- @@OPS.silu  silu, and swiglu: silu(gate) ⊙ up fused ------------------------------------- */
/* silu (torch's F.silu): y = x·σ(x),  dy/dx = σ(x)·(1 + x·(1 - σ(x)));  σ(x) from e = exp(-|x|)
   (no overflow): 1/(1 + e) for x >= 0, e/(1 + e) below.  Backward reads x. */
LT__OMP(declare simd)
static inline float lt__sigm(float v) {
    float e = lt__exp_neg(-fabsf(v));
    return (v >= 0.0f ? 1.0f : e) / (1.0f + e);   /* one division: 1/(1 + e) or e/(1 + e) */
}
LT__OMP(declare simd)
static inline float lt__silu_d(float v) {   /* dy/dx at x = v */
    float s = lt__sigm(v);
    return s * (1.0f + v * (1.0f - s));
}

/* ---- fast paths: AVX-512 and AVX2 (silu, swiglu) --------------------------------------------- */
#ifdef LT__X86
/* One kernel per instruction set runs the four loops below.  x is silu's input or swiglu's gate,
   u swiglu's up (NULL: silu).  Forward (gy NULL): o1 = x·σ(x)[·u].  Backward: o1 (+)= gy·[u·]silu'(x)
   and o2 (+)= gy·x·σ(x) (swiglu's dup), add1/add2 choosing += (o1 or o2 NULL: skipped; o1 may be
   gy: a value is read before it is written).  σ as lt__sigm: e = exp(-|x|) by lt__exp_neg16 / 8,
   then (x >= 0 ? 1 : e)/(1 + e) by a division, and the products in the C loops' order, so a result
   is within an ulp or two of theirs (only the exp differs).  AVX-512: the last values masked. */
static inline LT__TARGET("avx512f") __m512 lt__sigm16(__m512 v) {   /* σ(v), 16 lanes */
    const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
    __m512 e = lt__exp_neg16(_mm512_sub_ps(zero, _mm512_abs_ps(v)));
    __m512 num = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GE_OQ), e, one);   /* x >= 0 ? 1 : e */
    return _mm512_div_ps(num, _mm512_add_ps(one, e));
}
static inline LT__TARGET("avx2,fma") __m256 lt__sigm8(__m256 v) {   /* σ(v), 8 lanes */
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    __m256 e = lt__exp_neg8(_mm256_sub_ps(zero, _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v)));   /* e^-|x| */
    return _mm256_div_ps(_mm256_blendv_ps(e, one, _mm256_cmp_ps(v, zero, _CMP_GE_OQ)), _mm256_add_ps(one, e));
}
LT__TARGET("avx512f") static void lt__silu_avx512(const float *x, const float *u, const float *gy, float *o1, int add1,
                                                  float *o2, int add2, int64_t m) {
    const __m512 one = _mm512_set1_ps(1.0f);
    int64_t i;
    for (i = 0; i < m; i += 16) {
        __mmask16 k = (__mmask16)(m - i >= 16 ? 0xFFFFu : (1u << (m - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, x + i), s = lt__sigm16(v);
        __m512 d, r;
        if (!gy) {   /* forward */
            r = _mm512_mul_ps(v, s);
            if (u) r = _mm512_mul_ps(r, _mm512_maskz_loadu_ps(k, u + i));
            _mm512_mask_storeu_ps(o1 + i, k, r);
            continue;
        }
        d = _mm512_maskz_loadu_ps(k, gy + i);
        if (o2) {    /* gy·x·σ(x) */
            r = _mm512_mul_ps(d, _mm512_mul_ps(v, s));
            if (add2) r = _mm512_add_ps(_mm512_maskz_loadu_ps(k, o2 + i), r);
            _mm512_mask_storeu_ps(o2 + i, k, r);
        }
        if (o1) {    /* gy·[u·]σ(x)·(1 + x·(1 - σ(x))) */
            r = _mm512_mul_ps(s, _mm512_add_ps(one, _mm512_mul_ps(v, _mm512_sub_ps(one, s))));
            r = _mm512_mul_ps(u ? _mm512_mul_ps(d, _mm512_maskz_loadu_ps(k, u + i)) : d, r);
            if (add1) r = _mm512_add_ps(_mm512_maskz_loadu_ps(k, o1 + i), r);
            _mm512_mask_storeu_ps(o1 + i, k, r);
        }
    }
}
/* the same with AVX2 + FMA, 8 values at a time (the last ones through lt__load8 / lt__store8) */
LT__TARGET("avx2,fma") static void lt__silu_avx2(const float *x, const float *u, const float *gy, float *o1, int add1,
                                                 float *o2, int add2, int64_t m) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i;
    for (i = 0; i < m; i += 8) {
        int64_t nv = m - i;
        __m256 v = lt__load8(x + i, nv), s = lt__sigm8(v);
        __m256 d, r;
        if (!gy) {
            r = _mm256_mul_ps(v, s);
            if (u) r = _mm256_mul_ps(r, lt__load8(u + i, nv));
            lt__store8(o1 + i, r, nv);
            continue;
        }
        d = lt__load8(gy + i, nv);
        if (o2) {
            r = _mm256_mul_ps(d, _mm256_mul_ps(v, s));
            if (add2) r = _mm256_add_ps(lt__load8(o2 + i, nv), r);
            lt__store8(o2 + i, r, nv);
        }
        if (o1) {
            r = _mm256_mul_ps(s, _mm256_add_ps(one, _mm256_mul_ps(v, _mm256_sub_ps(one, s))));
            r = _mm256_mul_ps(u ? _mm256_mul_ps(d, lt__load8(u + i, nv)) : d, r);
            if (add1) r = _mm256_add_ps(lt__load8(o1 + i, nv), r);
            lt__store8(o1 + i, r, nv);
        }
    }
}
/* swiglu16's forward at bf16 in one pass, every rounding in registers (lt__bf16_round_f32 /
   _round8_f32, the bits lt__round16 gives): y = rb(rb(g·σ(g))·u) with g, u rounded to bf16 first,
   and (hg, hu not NULL) those g16, u16 stored for backward: a rounded value's high half is its
   bf16 pattern.  The passes of lt__swiglu16_fwd's general loop in one. */
#define LT__RB16(x) lt__bf16_round_f32(_mm512_castps_si512(x))
#define LT__RB8(x) lt__bf16_round8_f32(_mm256_castps_si256(x))
#define LT__HI16(x) _mm512_maskz_srli_epi32((__mmask16)0xFFFF, _mm512_castps_si512(x), 16)   /* (g++ -Werror: no undefined lanes) */
LT__TARGET("avx512f") static void lt__swiglu_bf16_avx512(const float *g, const float *u, float *y, uint16_t *hg,
                                                         uint16_t *hu, int64_t m) {
    int64_t i;
    for (i = 0; i < m; i += 16) {
        __mmask16 k = (__mmask16)(m - i >= 16 ? 0xFFFFu : (1u << (m - i)) - 1u);
        __m512 v = LT__RB16(_mm512_maskz_loadu_ps(k, g + i)), w = LT__RB16(_mm512_maskz_loadu_ps(k, u + i));
        _mm512_mask_storeu_ps(y + i, k, LT__RB16(_mm512_mul_ps(LT__RB16(_mm512_mul_ps(v, lt__sigm16(v))), w)));
        if (hg) {
            _mm512_mask_cvtepi32_storeu_epi16(hg + i, k, LT__HI16(v));   /* vpmovdw: the low halves */
            _mm512_mask_cvtepi32_storeu_epi16(hu + i, k, LT__HI16(w));
        }
    }
}
/* 8 rounded values' bf16 patterns (LT__HI16's AVX2 twin): the high halves packed, in order */
static inline LT__TARGET("avx2") __m128i lt__hi16x8(__m256 x) {
    __m256i h = _mm256_srli_epi32(_mm256_castps_si256(x), 16);
    return _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}
LT__TARGET("avx2,fma") static void lt__swiglu_bf16_avx2(const float *g, const float *u, float *y, uint16_t *hg,
                                                        uint16_t *hu, int64_t m) {
    int64_t i;
    for (i = 0; i < m; i += 8) {
        __m256 v = LT__RB8(lt__load8(g + i, m - i)), w = LT__RB8(lt__load8(u + i, m - i));
        lt__store8(y + i, LT__RB8(_mm256_mul_ps(LT__RB8(_mm256_mul_ps(v, lt__sigm8(v))), w)), m - i);
        if (hg && m - i >= 8) {
            _mm_storeu_si128((__m128i *)(void *)(hg + i), lt__hi16x8(v));
            _mm_storeu_si128((__m128i *)(void *)(hu + i), lt__hi16x8(w));
        } else if (hg) {   /* the last m - i < 8 */
            uint16_t b[16];
            _mm_storeu_si128((__m128i *)(void *)b, lt__hi16x8(v));
            _mm_storeu_si128((__m128i *)(void *)(b + 8), lt__hi16x8(w));
            memcpy(hg + i, b, (size_t)(m - i) * sizeof *b);
            memcpy(hu + i, b + 8, (size_t)(m - i) * sizeof *b);
        }
    }
}
#undef LT__RB16
#undef LT__RB8
#undef LT__HI16
#endif
/* Runs the loop with the kernel of level simd (lt__simd_level: 2 AVX-512, 1 AVX2) and returns 1;
   0 (level 0, or not x86): the caller's C loop runs it. */
static int lt__silu_simd(int simd, const float *x, const float *u, const float *gy, float *o1, int add1, float *o2,
                         int add2, int64_t m) {
#ifdef LT__X86
    if (simd == 2) { lt__silu_avx512(x, u, gy, o1, add1, o2, add2, m); return 1; }
    if (simd == 1) { lt__silu_avx2(x, u, gy, o1, add1, o2, add2, m); return 1; }
#else
    (void)simd; (void)x; (void)u; (void)gy; (void)o1; (void)add1; (void)o2; (void)add2; (void)m;
#endif
    return 0;
}

/* the elementwise loops below: blocks of LT__EWB values, each a simd loop, the threads take blocks
   (as gelu's); y = silu(x) over m values */
static void lt__silu_rows(int simd, const float *x, float *y, int64_t m) {
    int64_t i;
    if (lt__silu_simd(simd, x, NULL, NULL, y, 0, NULL, 0, m)) return;
    LT__OMP(simd)
    for (i = 0; i < m; i++) y[i] = x[i] * lt__sigm(x[i]);
}
static void lt__silu_fwd(lt__node *nd) {
    int64_t n = nd->out->n, b;
    int simd = lt__simd_level();
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++)
        lt__silu_rows(simd, nd->in[0]->data + b * LT__EWB, nd->out->data + b * LT__EWB,
                      n - b * LT__EWB < LT__EWB ? n - b * LT__EWB : LT__EWB);
}
/* gx (+)= gy·silu'(x) over m values (gx may be gy) */
static void lt__silu_grad_rows(int simd, const float *x, const float *gy, float *gx, int add, int64_t m) {
    int64_t i;
    if (lt__silu_simd(simd, x, NULL, gy, gx, add, NULL, 0, m)) return;
    if (add) {
        LT__OMP(simd)
        for (i = 0; i < m; i++) gx[i] += gy[i] * lt__silu_d(x[i]);
    } else {
        LT__OMP(simd)
        for (i = 0; i < m; i++) gx[i] = gy[i] * lt__silu_d(x[i]);
    }
}
/* dx = dy·silu'(x) (add: +=; eager, dx may take dy's buffer: lt__grad_adopt) */
static void lt__silu_bwd(lt__node *nd) {
    const float *gy = nd->out->grad, *x = nd->in[0]->data;
    int add = 0, simd = lt__simd_level();
    float *gx = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &add);
    int64_t n = nd->out->n, b;
    if (!gx) return;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, m = n - lo < LT__EWB ? n - lo : LT__EWB;
        lt__silu_grad_rows(simd, x + lo, gy + lo, gx + lo, add, m);
    }
}
LTRAIN_DEF lt_tensor *lt_silu(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(silu), "lt_silu", a); }

/* swiglu (the Llama MLP's gate): gate, up (same shape) -> y = silu(gate) ⊙ up, one pass, silu never
   stored.  Backward recomputes σ(gate) from gate:
     dgate += dy·up·silu'(gate),   dup += dy·silu(gate)
   Both gradients come from one read of dy per element, so dgate may be written over dy (eager:
   gate takes dy's buffer, lt__grad_adopt; a compiled plan: LT__DX_OVER_DY).  gate == up (one
   tensor twice): both terms add into its one gradient.
   swiglu16 (lt_set_precision): y = round16(round16(silu(g16))·u16) with g16, u16 the inputs rounded
   to 16 bits (torch's silu then mul on 16-bit tensors, each rounding its float32 result); for
   backward save[0] keeps g16 | u16 (2n 16-bit values), so the float32 inputs need not outlive the
   forward, and the float32 formulas above run on them (eager with both inputs 16-bit values
   already, a 16-bit product's outputs, lt__copy16: no copies, the inputs are read in place). */
static void lt__swiglu_rows(int simd, const float *g, const float *u, float *y, int64_t m) {
    int64_t i;
    if (lt__silu_simd(simd, g, u, NULL, y, 0, NULL, 0, m)) return;
    LT__OMP(simd)
    for (i = 0; i < m; i++) y[i] = g[i] * lt__sigm(g[i]) * u[i];
}
static void lt__swiglu_fwd(lt__node *nd) {
    int64_t n = nd->out->n, b;
    int simd = lt__simd_level();
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++)
        lt__swiglu_rows(simd, nd->in[0]->data + b * LT__EWB, nd->in[1]->data + b * LT__EWB, nd->out->data + b * LT__EWB,
                        n - b * LT__EWB < LT__EWB ? n - b * LT__EWB : LT__EWB);
}
/* m <= LT__EWB elements: gg (+)= dy·u·silu'(g), gu (+)= dy·silu(g) (either NULL: skipped; gg may
   be gy): both terms from one simd loop, into gg and gu when both are written (=), else into the
   stack and then stored */
static void lt__swiglu_grad_rows(int simd, const float *g, const float *u, const float *gy, float *gg, int addg,
                                 float *gu, int addu, int64_t m) {
    float dg[LT__EWB], du[LT__EWB];
    int64_t i;
    if (lt__silu_simd(simd, g, u, gy, gg, addg, gu, addu, m)) return;
    if (gg && gu && !addg && !addu) {   /* both written, not added: straight into them (gg may be gy: */
        LT__OMP(simd)                   /* element i is read before it is written) */
        for (i = 0; i < m; i++) {
            float d = gy[i], s = lt__sigm(g[i]);
            gg[i] = d * u[i] * (s * (1.0f + g[i] * (1.0f - s)));
            gu[i] = d * (g[i] * s);
        }
        return;
    }
    LT__OMP(simd)
    for (i = 0; i < m; i++) {
        float d = gy[i], s = lt__sigm(g[i]);
        dg[i] = d * u[i] * (s * (1.0f + g[i] * (1.0f - s)));
        du[i] = d * (g[i] * s);
    }
    if (gg && addg) for (i = 0; i < m; i++) gg[i] += dg[i];
    else if (gg) memcpy(gg, dg, (size_t)m * sizeof(float));
    if (gu && addu) for (i = 0; i < m; i++) gu[i] += du[i];
    else if (gu) memcpy(gu, du, (size_t)m * sizeof(float));
}
/* h: the 16-bit g | u of swiglu16 in precision p, or NULL (the float32 inputs, read in place) */
static void lt__swiglu_grads(lt__node *nd, lt_dtype p, const uint16_t *h) {
    const float *gy = nd->out->grad;
    int addg = 0, addu = 0, simd = lt__simd_level();
    float *gg, *gu;
    int64_t n = nd->out->n, b;
    if (nd->in[0] == nd->in[1]) {   /* one tensor: its gradient gets both terms, added */
        gg = lt__grad(nd->in[0], nd->ctx);
        gu = gg;
        addg = addu = 1;
    } else {
        gg = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &addg);
        gu = lt__grad_w(nd->in[1], nd->ctx, &addu);
    }
    if (!gg && !gu) return;
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, m = n - lo < LT__EWB ? n - lo : LT__EWB;
        float gw[LT__EWB], uw[LT__EWB];
        const float *g = nd->in[0]->data + lo, *u = nd->in[1]->data + lo;
        if (h) {   /* widened from the 16-bit copies */
            lt__from16(p, h + lo, gw, (size_t)m);
            lt__from16(p, h + n + lo, uw, (size_t)m);
            g = gw; u = uw;
        }
        if (gg == gu) {   /* (the same tensor) one term after the other */
            lt__swiglu_grad_rows(simd, g, u, gy + lo, gg + lo, 1, NULL, 1, m);
            lt__swiglu_grad_rows(simd, g, u, gy + lo, NULL, 1, gu + lo, 1, m);
        } else {
            lt__swiglu_grad_rows(simd, g, u, gy + lo, gg ? gg + lo : NULL, addg, gu ? gu + lo : NULL, addu, m);
        }
    }
}
static void lt__swiglu_bwd(lt__node *nd) { lt__swiglu_grads(nd, LT_F32, NULL); }
static void lt__swiglu16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC(nd));
    uint16_t *h = (uint16_t *)(void *)nd->save[0];
    int64_t n = nd->out->n, b;
    int simd = lt__simd_level();
    LT__OMP(parallel for if (n > 32768))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, m = n - lo < LT__EWB ? n - lo : LT__EWB, i;
        float g[LT__EWB], u[LT__EWB], *y = nd->out->data + lo;
#ifdef LT__X86
        if (p == LT_BF16 && simd) {   /* y, and g16, u16 kept for backward, in one pass (fast paths above) */
            uint16_t *hg = h ? h + lo : NULL, *hu = h ? h + n + lo : NULL;
            if (simd == 2) lt__swiglu_bf16_avx512(nd->in[0]->data + lo, nd->in[1]->data + lo, y, hg, hu, m);
            else lt__swiglu_bf16_avx2(nd->in[0]->data + lo, nd->in[1]->data + lo, y, hg, hu, m);
            continue;
        }
#endif
        if (h) {   /* g16, u16 kept for backward, and widened */
            lt__to16(p, nd->in[0]->data + lo, h + lo, (size_t)m);
            lt__to16(p, nd->in[1]->data + lo, h + n + lo, (size_t)m);
            lt__from16(p, h + lo, g, (size_t)m);
            lt__from16(p, h + n + lo, u, (size_t)m);
        } else {
            lt__round16(p, nd->in[0]->data + lo, g, (size_t)m);
            lt__round16(p, nd->in[1]->data + lo, u, (size_t)m);
        }
        lt__silu_rows(simd, g, y, m);
        lt__round16(p, y, y, (size_t)m);
        LT__OMP(simd)
        for (i = 0; i < m; i++) y[i] *= u[i];
        lt__round16(p, y, y, (size_t)m);
    }
}
static void lt__swiglu16_bwd(lt__node *nd) {
    lt__swiglu_grads(nd, lt__prec_of(LT__PREC(nd)), (const uint16_t *)(const void *)nd->save[0]);
}
LTRAIN_DEF lt_tensor *lt_swiglu(lt_ctx *ctx, lt_tensor *gate, lt_tensor *up) {
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_swiglu", gate, up)) return NULL;
    if (gate->n != up->n || gate->ndim != up->ndim ||
        memcmp(gate->shape, up->shape, (size_t)gate->ndim * sizeof(int64_t)) != 0) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_swiglu: gate is %s, up is %s: they must have the same shape",
                     lt_shape_str(gate, b1, sizeof b1), lt_shape_str(up, b2, sizeof b2));
        return NULL;
    }
    if (ctx->precision == LT_F32 || ctx->device != LT_CPU) {   /* (the CUDA kernel is float32) */
        nd = lt__node_new(ctx, LT__OP(swiglu), gate->ndim, gate->shape, gate, up, NULL, 0);
        return lt__run(ctx, nd);
    }
    nd = lt__node_new(ctx, LT__OP(swiglu16), gate->ndim, gate->shape, gate, up, NULL, 0);
    if (!nd) return NULL;
    LT__PREC(nd) = (double)ctx->precision;
    if (nd->out->requires_grad && (lt__copy16(ctx, gate) || lt__copy16(ctx, up)) && !lt__save(ctx, nd, 0, gate->n))
        return NULL;   /* g16 | u16 */
    return lt__run(ctx, nd);
}

/* ---- @@OPS.softmax  softmax and log-softmax over the last dim ------------------------------------- */
/* x (R, V) -> y (R, V).  Stable: subtract the row max first, so logits of ±1e4 and -inf entries
   stay finite.  A row of all -inf has no distribution: softmax gives 0s, log-softmax -inf. */
/* 16 running maxima (a loop compilers vectorise), then the largest: max is exact in any order */
static float lt__row_max(const float *x, int64_t V) {
    float lane[16], m = -INFINITY;
    int64_t j = 0;
    int k;
    for (k = 0; k < 16; k++) lane[k] = -INFINITY;
    for (; j + 16 <= V; j += 16)
        for (k = 0; k < 16; k++) lane[k] = x[j + k] > lane[k] ? x[j + k] : lane[k];
    for (; j < V; j++) m = x[j] > m ? x[j] : m;
    for (k = 0; k < 16; k++) m = lane[k] > m ? lane[k] : m;
    return m;
}
/* Σ_{j<n} exp(x_j - m) for x_j <= m, in float partial sums (the caller adds blocks of 256 of
   them in double): the portable loop in the SIMD lanes the compiler picks (simd 0), or, by
   lt__simd_level, 16 lanes of lt__exp_neg16 (2, AVX-512) or 8 of lt__exp_neg8 (1, AVX2), whose
   terms are within an ulp or two of lt__exp_neg's.  Every softmax-type row (cross-entropy, the
   fused heads, log_softmax) sums through here, so they agree with each other on a CPU.
   keep (NULL: not wanted; may be x) receives the terms exp(x_j - m) the sum adds. */
static float lt__exp_sum(int simd, const float *x, int64_t n, float m, float *keep) {
    float part = 0.0f;
    int64_t j;
#ifdef LT__X86
    if (simd == 2) return lt__exp_sum_avx512(x, n, m, keep);
    if (simd == 1) return lt__exp_sum_avx2(x, n, m, keep);
#else
    (void)simd;
#endif
    if (keep) {
        LT__OMP(simd reduction(+ : part))
        for (j = 0; j < n; j++) {
            float e = lt__exp_neg(x[j] - m);
            keep[j] = e;
            part += e;
        }
        return part;
    }
    LT__OMP(simd reduction(+ : part))
    for (j = 0; j < n; j++) part += lt__exp_neg(x[j] - m);
    return part;
}
/* y_j = c·exp(x_j - m) added to y_j (add) or to 0 (the bits of += into zeros), j < n; y may be
   x.  kept: x holds the terms exp(x_j - m) already (lt__exp_sum's keep), y_j = (y_j or 0) + c·x_j,
   the same bits.  With c = g/Σ_k exp(x_k - m) the cross-entropy gradient g·(p - onehot) before
   its onehot part (p = exp(x - m)/Σ, not exp((x - m) - log Σ) as torch's log_softmax: the float
   log Σ's rounding stays out of p). */
static void lt__exp_grad(int simd, const float *x, float *y, int64_t n, float m, float c, int add, int kept) {
    int64_t j;
    if (kept) {
        if (add) {
            LT__OMP(simd)
            for (j = 0; j < n; j++) y[j] += c * x[j];
        } else {
            LT__OMP(simd)
            for (j = 0; j < n; j++) y[j] = 0.0f + c * x[j];
        }
        return;
    }
#ifdef LT__X86
    if (simd == 2) { lt__exp_grad_avx512(x, y, n, m, c, add); return; }
    if (simd == 1) { lt__exp_grad_avx2(x, y, n, m, c, add); return; }
#else
    (void)simd;
#endif
    if (add) {
        LT__OMP(simd)
        for (j = 0; j < n; j++) y[j] += c * lt__exp_neg(x[j] - m);
    } else {
        LT__OMP(simd)
        for (j = 0; j < n; j++) y[j] = 0.0f + c * lt__exp_neg(x[j] - m);
    }
}
/* A row's max m (through *m; -inf for a row of -inf) and log Σ exp(x_j - m), kept apart as in
   torch's log_softmax, (x - m) - log Σ: the sum m + log Σ would round to m's ulp (~1e-3 at
   |m| = 1e4) and lose the small part of every log-probability.
   Two passes: the max reads the row from memory, the sums from cache (a row of GPT-2's 50304
   logits takes 197 KiB).  next (NULL: none), the row the caller takes next, is fetched into L2
   during the sums, piece by piece: the memory pass then overlaps the exps instead of waiting
   alone (lt_cross_entropy's forward on 1024 x 50304 logits, bench/design.md).
   keep (NULL: not wanted) receives exp(x_j - m) (lt__exp_sum's), and *sum the double Σ whose log
   this returns (0 for a row of -inf, whose terms are not made). */
static float lt__lse_shifted(int simd, const float *x, int64_t V, float *m, const float *next, float *keep,
                             double *sum) {
    double s = 0;
    int64_t j0;
    *m = lt__row_max(x, V);
    if (sum) *sum = 0;
    if (*m == -INFINITY) return -INFINITY;
    for (j0 = 0; j0 < V; j0 += 256) {   /* float partial sums, accumulated in double per block of 256 */
        int64_t n = V - j0 < 256 ? V - j0 : 256;
        if (next) lt__fetch(next + j0, 0, n * (int64_t)sizeof(float), LT__FETCH_L2);
        s += lt__exp_sum(simd, x + j0, n, *m, keep ? keep + j0 : NULL);
    }
    if (sum) *sum = s;
    return (float)log(s);
}
static void lt__softmax_fwd(lt__node *nd) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V, r;
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++) {
        const float *x = nd->in[0]->data + r * V;
        float *y = nd->out->data + r * V, m = lt__row_max(x, V);
        double s = 0;
        int64_t j;
        if (m == -INFINITY) { memset(y, 0, (size_t)V * sizeof(float)); continue; }
        LT__OMP(simd)
        for (j = 0; j < V; j++) y[j] = lt__exp_neg(x[j] - m);
        for (j = 0; j < V; j++) s += y[j];
        for (j = 0; j < V; j++) y[j] = (float)(y[j] / s);
    }
}
/* dx_j += y_j (dy_j - Σ_k dy_k y_k) */
static void lt__softmax_bwd(lt__node *nd) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V, r;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    if (!gx) return;
    for (r = 0; r < R; r++) {
        const float *y = nd->out->data + r * V, *gy = nd->out->grad + r * V;
        double dot = 0;
        int64_t j;
        for (j = 0; j < V; j++) dot += (double)gy[j] * y[j];
        for (j = 0; j < V; j++) gx[r * V + j] += y[j] * (gy[j] - (float)dot);
    }
}
LTRAIN_DEF lt_tensor *lt_softmax(lt_ctx *ctx, lt_tensor *a) { return lt__unary(ctx, LT__OP(softmax), "lt_softmax", a); }

static void lt__log_softmax_fwd(lt__node *nd) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V, r;
    int simd = lt__simd_level();
    for (r = 0; r < R; r++) {
        const float *x = nd->in[0]->data + r * V;
        float *y = nd->out->data + r * V, m, ls = lt__lse_shifted(simd, x, V, &m, r + 1 < R ? x + V : NULL, NULL, NULL);
        int64_t j;
        for (j = 0; j < V; j++) y[j] = m == -INFINITY ? -INFINITY : (x[j] - m) - ls;
    }
}
/* dx_j += dy_j - exp(y_j) Σ_k dy_k */
static void lt__log_softmax_bwd(lt__node *nd) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V, r;
    float *gx = lt__grad(nd->in[0], nd->ctx);
    if (!gx) return;
    for (r = 0; r < R; r++) {
        const float *y = nd->out->data + r * V, *gy = nd->out->grad + r * V;
        double s = 0;
        int64_t j;
        if (y[0] == -INFINITY && lt__row_max(y, V) == -INFINITY) continue; /* an all -inf row: no gradient */
        for (j = 0; j < V; j++) s += gy[j];
        for (j = 0; j < V; j++) gx[r * V + j] += gy[j] - expf(y[j]) * (float)s;
    }
}
LTRAIN_DEF lt_tensor *lt_log_softmax(lt_ctx *ctx, lt_tensor *a) {
    return lt__unary(ctx, LT__OP(log_softmax), "lt_log_softmax", a);
}

/* ---- @@OPS.layernorm  layernorm ------------------------------------------------------------------- */
/* x (R, C), w, b (C) -> y (R, C) = (x - mean)·rstd·w + b,  rstd = 1/sqrt(var + eps) (biased var);
   saves mean, rstd (R).  Backward, with x̂ = (x - mean)·rstd and g = dy·w:
     dw += Σ_rows dy·x̂,   db += Σ_rows dy,   dx += rstd·(g - mean(g) - x̂·mean(g·x̂))
   layernorm16 (below) runs the same two kernels; only where backward reads x̂ differs. */
#define LT__LN_C(nd) ((nd)->i[0])      /* C, the row length */
#define LT__LN_EPS(nd) ((nd)->f[0])    /* eps */
#define LT__LN_PIECE 256   /* columns of a row held on the stack at a time */
#define LT__LN_RB 32       /* backward: rows per chunk of the dw, db partial sums */

/* One row: y, mean and rstd (any may be NULL: not kept), and in 16 bits of type p x̂ into xh and
   y into yh where those are not NULL.  The sums run in double (vector partial sums, one thread's,
   a fixed order).  rms (lt_rmsnorm): the mean is taken as 0, so var is mean(x²) and x̂ = x·rstd. */
static void lt__ln_row_fwd(const float *x, float *y, const float *w, const float *b, int64_t C, float eps,
                           float *mean, float *rstd, lt_dtype p, uint16_t *xh, uint16_t *yh, int rms) {
    double sum = 0, var = 0;
    float m = 0.0f, s, v[LT__LN_PIECE], yv[LT__LN_PIECE];
    int64_t j, j0;
    if (!rms) {
        LT__OMP(simd reduction(+ : sum))
        for (j = 0; j < C; j++) sum += x[j];
        m = (float)(sum / (double)C);
    }
    LT__OMP(simd reduction(+ : var))
    for (j = 0; j < C; j++) { double d = (double)x[j] - m; var += d * d; }
    s = (float)(1.0 / sqrt(var / (double)C + eps));
    for (j0 = 0; j0 < C; j0 += LT__LN_PIECE) {   /* v = x̂, then y = v·w + b: one loop per case, each vectorised */
        int64_t n = C - j0 < LT__LN_PIECE ? C - j0 : LT__LN_PIECE;
        const float *xp = x + j0, *wp = w ? w + j0 : NULL, *bp = b ? b + j0 : NULL;
        float *yp = y ? y + j0 : yv;
        LT__OMP(simd)
        for (j = 0; j < n; j++) v[j] = (xp[j] - m) * s;
        if (wp && bp) {
            LT__OMP(simd)
            for (j = 0; j < n; j++) yp[j] = v[j] * wp[j] + bp[j];
        } else if (wp) {
            LT__OMP(simd)
            for (j = 0; j < n; j++) yp[j] = v[j] * wp[j];
        } else if (bp) {
            LT__OMP(simd)
            for (j = 0; j < n; j++) yp[j] = v[j] + bp[j];
        } else {
            memcpy(yp, v, (size_t)n * sizeof(float));
        }
        if (xh) lt__to16(p, v, xh + j0, (size_t)n);
        if (yh) lt__to16(p, yp, yh + j0, (size_t)n);
    }
    if (mean) *mean = m;
    if (rstd) *rstd = s;
}
static void lt__layernorm_fwd(lt__node *nd) {
    int64_t C = LT__LN_C(nd), R = nd->out->n / C, r;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL, *b = nd->in[2] ? nd->in[2]->data : NULL;
    LT__OMP(parallel for if (R * C > 32768))
    for (r = 0; r < R; r++)
        lt__ln_row_fwd(nd->in[0]->data + r * C, nd->out->data + r * C, w, b, C, (float)LT__LN_EPS(nd), nd->save[0] + r,
                       nd->save[1] + r, LT_F32, NULL, NULL, 0);
}

/* Where backward reads x̂ (R, C): from x and the saved means (layernorm; rmsnorm: mean NULL, 0),
   or widened from the 16-bit copy (layernorm16, rmsnorm16). */
typedef struct {
    const float *x, *mean;
    const uint16_t *xh;
    lt_dtype p;
} lt__ln_src;
static void lt__ln_xhat(const lt__ln_src *a, int64_t C, int64_t r, float s, int64_t j0, int64_t n, float *out) {
    const float *x;
    float m;
    int64_t j;
    if (a->xh) { lt__from16(a->p, a->xh + r * C + j0, out, (size_t)n); return; }
    x = a->x + r * C + j0;
    m = a->mean ? a->mean[r] : 0.0f;
    LT__OMP(simd)
    for (j = 0; j < n; j++) out[j] = (x[j] - m) * s;
}

/* g = dy·w for n columns (w NULL: dy) */
static void lt__ln_g(const float *gy, const float *w, int64_t n, float *g) {
    int64_t j;
    if (!w) { memcpy(g, gy, (size_t)n * sizeof(float)); return; }
    LT__OMP(simd)
    for (j = 0; j < n; j++) g[j] = gy[j] * w[j];
}
/* Backward, one pass over the rows: each row's dx, and dw, db summed per chunk of LT__LN_RB rows
   (the threads take chunks), then the chunks' partial sums added in chunk order.  The chunks
   depend on R alone, so the thread count never changes a bit; x and dy are read once.  A row of
   at most LT__LN_PIECE columns keeps its x̂ and g from the first pass (mean(g), mean(g·x̂)) for
   the second (dx); longer rows make them again piece by piece.
   rms (rmsnorm): no mean was subtracted, so its term mean(g) drops: dx += rstd·(g - x̂·mean(g·x̂)). */
static void lt__ln_bwd(lt__node *nd, const lt__ln_src *a, const float *rstd, int rms) {
    int64_t C = LT__LN_C(nd), R = nd->out->n / C, nch = (R + LT__LN_RB - 1) / LT__LN_RB, ch, nb, blk;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL;
    int add = 0;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad(nd->in[1], nd->ctx);
    float *gb = lt__grad(nd->in[2], nd->ctx), *part = NULL;
    size_t bytes = 0;
    if (gw || gb) {
        if (!lt_mul_size((size_t)nch * 2, (size_t)C * sizeof(float), &bytes) ||
            !(part = (float *)LT__MALLOC(bytes))) {
            lt_set_error(nd->ctx, LT_ERR_NOMEM, "lt_layernorm backward: out of memory (%zu bytes of partial sums "
                         "for the weight and bias gradients)", bytes);
            return;
        }
    }
    LT__OMP(parallel for if (R * C > 32768))
    for (ch = 0; ch < nch; ch++) {
        float *pw = part ? part + ch * 2 * C : NULL, *pb = pw ? pw + C : NULL;
        float xv[LT__LN_PIECE], g[LT__LN_PIECE];
        int64_t r, r1 = (ch + 1) * LT__LN_RB < R ? (ch + 1) * LT__LN_RB : R, j, j0;
        int kept = gx && C <= LT__LN_PIECE;   /* xv, g of the whole row are still there from the first pass */
        if (pw) memset(pw, 0, (size_t)(2 * C) * sizeof(float));
        for (r = ch * LT__LN_RB; r < r1; r++) {
            const float *gy = nd->out->grad + r * C;
            float s = rstd[r], fmg, fmgx;
            double mg = 0, mgx = 0;
            for (j0 = 0; gx && j0 < C; j0 += LT__LN_PIECE) {   /* mean(g), mean(g·x̂) */
                int64_t n = C - j0 < LT__LN_PIECE ? C - j0 : LT__LN_PIECE;
                lt__ln_xhat(a, C, r, s, j0, n, xv);
                lt__ln_g(gy + j0, w ? w + j0 : NULL, n, g);
                LT__OMP(simd reduction(+ : mg, mgx))
                for (j = 0; j < n; j++) {
                    mg += g[j];
                    mgx += (double)g[j] * xv[j];
                }
            }
            fmg = rms ? 0.0f : (float)(mg / (double)C);
            fmgx = (float)(mgx / (double)C);
            for (j0 = 0; j0 < C; j0 += LT__LN_PIECE) {   /* dx; the chunk's dw, db */
                int64_t n = C - j0 < LT__LN_PIECE ? C - j0 : LT__LN_PIECE;
                const float *gyp = gy + j0;
                float *gxp = gx ? gx + r * C + j0 : NULL;
                if (!kept) lt__ln_xhat(a, C, r, s, j0, n, xv);
                if (gxp) {
                    if (!kept) lt__ln_g(gyp, w ? w + j0 : NULL, n, g);
                    if (add) {
                        LT__OMP(simd)   /* gx is none of gy, w, xv (the compiler cannot know) */
                        for (j = 0; j < n; j++) gxp[j] += s * (g[j] - fmg - xv[j] * fmgx);
                    } else {
                        LT__OMP(simd)
                        for (j = 0; j < n; j++) gxp[j] = s * (g[j] - fmg - xv[j] * fmgx);
                    }
                }
                if (pw) {
                    float *pwp = pw + j0, *pbp = pb + j0;
                    LT__OMP(simd)
                    for (j = 0; j < n; j++) {
                        pwp[j] += gyp[j] * xv[j];
                        pbp[j] += gyp[j];
                    }
                }
            }
        }
    }
    if (!part) return;
    /* dw, db += the chunks' sums in chunk order; the threads take blocks of 64 columns of w's, then b's */
    nb = (C + 63) / 64;
    LT__OMP(parallel for if (nch * C > 32768))
    for (blk = 0; blk < 2 * nb; blk++) {
        int half = blk >= nb;
        int64_t o = (blk - half * nb) * 64, n = C - o < 64 ? C - o : 64, k, j;
        float acc[64], *out = half ? gb : gw;
        if (!out) continue;
        for (j = 0; j < n; j++) acc[j] = out[o + j];
        for (k = 0; k < nch; k++) {
            const float *pk = part + k * 2 * C + half * C + o;
            LT__OMP(simd)
            for (j = 0; j < n; j++) acc[j] += pk[j];
        }
        for (j = 0; j < n; j++) out[o + j] = acc[j];
    }
    LT__FREE(part);
}
static void lt__layernorm_bwd(lt__node *nd) {
    lt__ln_src a;
    memset(&a, 0, sizeof a);
    a.x = nd->in[0]->data;
    a.mean = nd->save[0];
    lt__ln_bwd(nd, &a, nd->save[1], 0);
}
LTRAIN_DEF lt_tensor *lt_layernorm(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b, float eps) {
    int64_t C, R;
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_layernorm", x, x)) return NULL;
    C = x->shape[x->ndim - 1];
    if ((w && w->n != C) || (b && b->n != C)) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_layernorm: x is %s, %s is %s: it needs %lld values (x's last dim)",
                     lt_shape_str(x, b1, sizeof b1), (w && w->n != C) ? "weight" : "bias",
                     lt_shape_str((w && w->n != C) ? w : b, b2, sizeof b2), (long long)C);
        return NULL;
    }
    if (!(eps > 0) || !isfinite(eps)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_layernorm: eps is %g: it must be a positive number", (double)eps);
        return NULL;
    }
    R = x->n / C;
    if (ctx->precision != LT_F32 && ctx->device == LT_CPU) {   /* (the CUDA kernel is float32) */
        nd = lt__node_new(ctx, LT__OP(layernorm16), x->ndim, x->shape, x, w, b, 0);
        if (!nd) return NULL;
        LT__LN_C(nd) = C;
        LT__LN_EPS(nd) = eps;
        LT__PREC2(nd) = (double)ctx->precision;
        if (nd->out->requires_grad && (!lt__save(ctx, nd, 0, R) || !lt__save(ctx, nd, 1, (x->n + 1) / 2)))
            return NULL;
        return lt__run(ctx, nd);
    }
    nd = lt__node_new(ctx, LT__OP(layernorm), x->ndim, x->shape, x, w, b, 0);
    if (!nd) return NULL;
    LT__LN_C(nd) = C;
    LT__LN_EPS(nd) = eps;
    lt__save(ctx, nd, 0, R);
    lt__save(ctx, nd, 1, R);
    if (!nd->save[0] || !nd->save[1]) return NULL;
    return lt__run(ctx, nd);
}

/* layernorm16 (lt_set_precision): y as lt_layernorm's, in float32 (torch's autocast runs
   layer_norm in float32 too); for backward it saves rstd (save[0], R floats) and x̂ = (x-mean)·rstd
   in 16 bits (save[1], R·C/2 floats) instead of the float32 input, so x is free after the
   forward.  Backward is lt__layernorm_bwd's kernel with x̂ read from the 16-bit copy: x̂ is
   bounded by sqrt(C), so fp16 holds it, and its rounding (2^-9 relative in bf16, 2^-12 in fp16)
   is the only difference from the float32 gradients (tests/test_precision.c bounds it).
   In a compiled plan whose only readers of y are 16-bit products that keep a 16-bit copy of it
   (@@COMPILE's lt__plan_norm16_y), the norm writes that copy, round16(y), itself, as it makes
   each row, after x̂ in save[1] (LT__LN_Y16, lt__norm16_y16), and the products read it there;
   y itself is then not written (its data NULL).  The same for rmsnorm16 (below). */
#define LT__LN_Y16(nd) ((nd)->i[1])   /* layernorm16, rmsnorm16: 1 when round16(y) goes after x̂ */
static uint16_t *lt__norm16_y16(const lt__node *nd) {
    return (uint16_t *)(void *)(nd->save[1] + nd->n_save[1]);
}
static void lt__norm16_fwd(lt__node *nd, const float *b, int rms) {
    lt_dtype p = lt__prec_of(LT__PREC2(nd));
    int64_t C = LT__LN_C(nd), R = nd->out->n / C, r;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL;
    uint16_t *xh = (uint16_t *)(void *)nd->save[1], *yh = LT__LN_Y16(nd) ? lt__norm16_y16(nd) : NULL;
    float *y = nd->out->data;
    LT__OMP(parallel for if (R * C > 32768))
    for (r = 0; r < R; r++)
        lt__ln_row_fwd(nd->in[0]->data + r * C, y ? y + r * C : NULL, w, b, C, (float)LT__LN_EPS(nd), NULL,
                       nd->save[0] ? nd->save[0] + r : NULL, p, xh ? xh + r * C : NULL, yh ? yh + r * C : NULL, rms);
}
static void lt__layernorm16_fwd(lt__node *nd) { lt__norm16_fwd(nd, nd->in[2] ? nd->in[2]->data : NULL, 0); }
static void lt__layernorm16_bwd(lt__node *nd) {
    lt__ln_src a;
    memset(&a, 0, sizeof a);
    a.xh = (const uint16_t *)(const void *)nd->save[1];
    a.p = lt__prec_of(LT__PREC2(nd));
    if (a.xh) lt__ln_bwd(nd, &a, nd->save[0], 0);
}

/* ---- @@OPS.rmsnorm  RMSNorm over the last dim ------------------------------------------------------ */
/* x (R, C), w (C) or NULL -> y (R, C) = x·rstd·w,  rstd = 1/sqrt(mean(x²) + eps)   (torch.nn.RMSNorm,
   HF's LlamaRMSNorm: statistics in float32, here summed in double); saves rstd (R).  Backward,
   with x̂ = x·rstd and g = dy·w (layernorm's without the mean):
     dw += Σ_rows dy·x̂,   dx += rstd·(g - x̂·mean(g·x̂))
   The kernels are layernorm's (lt__ln_row_fwd, lt__ln_bwd with rms = 1, no bias), so the record
   uses layernorm's slots (LT__LN_C, LT__LN_EPS; LT__RMS_* name them).  QK-norm (Qwen3, OLMo-2) is
   this op on q or k reshaped to [B,T,H,D] with w [D]: rows of one head's D channels.
   rmsnorm16 (lt_set_precision): as layernorm16, y in float32, and backward keeps rstd (save[0])
   and x̂ in 16 bits (save[1]) instead of x. */
#define LT__RMS_C(nd) LT__LN_C(nd)       /* C, the row length */
#define LT__RMS_EPS(nd) LT__LN_EPS(nd)   /* eps */
static void lt__rmsnorm_fwd(lt__node *nd) {
    int64_t C = LT__RMS_C(nd), R = nd->out->n / C, r;
    const float *w = nd->in[1] ? nd->in[1]->data : NULL;
    LT__OMP(parallel for if (R * C > 32768))
    for (r = 0; r < R; r++)
        lt__ln_row_fwd(nd->in[0]->data + r * C, nd->out->data + r * C, w, NULL, C, (float)LT__RMS_EPS(nd), NULL,
                       nd->save[0] + r, LT_F32, NULL, NULL, 1);
}
static void lt__rmsnorm_bwd(lt__node *nd) {
    lt__ln_src a;
    memset(&a, 0, sizeof a);
    a.x = nd->in[0]->data;
    lt__ln_bwd(nd, &a, nd->save[0], 1);
}
static void lt__rmsnorm16_fwd(lt__node *nd) { lt__norm16_fwd(nd, NULL, 1); }
static void lt__rmsnorm16_bwd(lt__node *nd) {
    lt__ln_src a;
    memset(&a, 0, sizeof a);
    a.xh = (const uint16_t *)(const void *)nd->save[1];
    a.p = lt__prec_of(LT__PREC2(nd));
    if (a.xh) lt__ln_bwd(nd, &a, nd->save[0], 1);
}
LTRAIN_DEF lt_tensor *lt_rmsnorm(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, float eps) {
    int64_t C, R;
    char b1[64], b2[64];
    int bits16;
    lt__node *nd;
    if (!lt__live(ctx, "lt_rmsnorm", x, x)) return NULL;
    C = x->shape[x->ndim - 1];
    if (w && w->n != C) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_rmsnorm: x is %s, weight is %s: it needs %lld values (x's last dim)",
                     lt_shape_str(x, b1, sizeof b1), lt_shape_str(w, b2, sizeof b2), (long long)C);
        return NULL;
    }
    if (!(eps > 0) || !isfinite(eps)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_rmsnorm: eps is %g: it must be a positive number", (double)eps);
        return NULL;
    }
    R = x->n / C;
    bits16 = ctx->precision != LT_F32 && ctx->device == LT_CPU;   /* (the CUDA kernel is float32) */
    nd = lt__node_new(ctx, bits16 ? LT__OP(rmsnorm16) : LT__OP(rmsnorm), x->ndim, x->shape, x, w, NULL, 0);
    if (!nd) return NULL;
    LT__RMS_C(nd) = C;
    LT__RMS_EPS(nd) = eps;
    if (bits16) {
        LT__PREC2(nd) = (double)ctx->precision;
        if (nd->out->requires_grad && (!lt__save(ctx, nd, 0, R) || !lt__save(ctx, nd, 1, (x->n + 1) / 2)))
            return NULL;
    } else if (!lt__save(ctx, nd, 0, R)) {
        return NULL;
    }
    return lt__run(ctx, nd);
}

/* ---- @@OPS.rope  rotary position embedding (Hugging Face's rotate_half layout) ------------------- */
/* x (B, T, H·D) -> y (B, T, H·D), head h at h·D..h·D+D-1, D even, half = D/2.  For position
   p = pos0 + t and i < half, the pair (i, i + half) of every head turns by the angle p·f_i:
     f_i = 1 / theta^(2i/D),  c = cos(p·f_i),  s = sin(p·f_i)
     y_i = x_i·c - x_{i+half}·s,   y_{i+half} = x_{i+half}·c + x_i·s
   (transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb: q·cos + rotate_half(q)·sin).  f_i
   and the angle are float32 as HF computes them (2i/D a float32 quotient, theta to that power
   rounded to float32, 1/it in float32, p·f_i a float32 product), so an angle at a large position
   carries the same rounding as HF's; cos and sin of it in double, rounded.  (The power here is
   correctly rounded; torch's float32 pow is not always, so f_i may be one ulp off HF's for a few
   i: the angle then moves by about p·2^-24 of itself.)  Backward turns dy
   back by -angle:
     dx_i += dy_i·c + dy_{i+half}·s,   dx_{i+half} += dy_{i+half}·c - dy_i·s
   reading no values: the record keeps the (T, half) tables of c and s (save[0]: c then s).
   Threads take rows (b, t).  Each pair is read before it is written, so dx may be written over dy
   (eager: lt__grad_adopt; a plan: LT__DX_OVER_DY).  16-bit precision: float32 arithmetic, as
   before (y is not rounded; its backward keeps nothing but the tables). */
#define LT__ROPE_H(nd) ((nd)->i[0])       /* heads */
#define LT__ROPE_POS0(nd) ((nd)->i[1])    /* the position of t = 0 */
#define LT__ROPE_THETA(nd) ((nd)->f[0])   /* theta (the base) */
/* the tables: cs[t·half + i] = c, cs[(T + t)·half + i] = s */
static void lt__rope_tables(float *cs, int64_t T, int64_t D, int64_t pos0, double theta) {
    int64_t half = D / 2, t, i;
    float base = (float)theta;
    for (i = 0; i < half; i++) {
        float e = (float)(2 * i) / (float)D, f = 1.0f / (float)pow((double)base, (double)e);
        for (t = 0; t < T; t++) {
            float ang = (float)(pos0 + t) * f;
            cs[t * half + i] = (float)cos((double)ang);
            cs[(T + t) * half + i] = (float)sin((double)ang);
        }
    }
}
/* one row of H heads: y = rotate(x) (dir 1) or x turned back (dir -1, backward; add: y +=);
   y may be x */
static void lt__rope_row(const float *x, float *y, const float *c, const float *s, int64_t H, int64_t D, float dir,
                         int add) {
    int64_t half = D / 2, h, i;
    for (h = 0; h < H; h++) {
        const float *xa = x + h * D, *xb = xa + half;
        float *ya = y + h * D, *yb = ya + half;
        if (add) {
            LT__OMP(simd)
            for (i = 0; i < half; i++) {
                float a = xa[i], b = xb[i], sn = dir * s[i];
                ya[i] += a * c[i] - b * sn;
                yb[i] += b * c[i] + a * sn;
            }
        } else {
            LT__OMP(simd)
            for (i = 0; i < half; i++) {
                float a = xa[i], b = xb[i], sn = dir * s[i];
                ya[i] = a * c[i] - b * sn;
                yb[i] = b * c[i] + a * sn;
            }
        }
    }
}
static void lt__rope_fwd(lt__node *nd) {
    int64_t B = nd->out->shape[0], T = nd->out->shape[1], C = nd->out->shape[2], H = LT__ROPE_H(nd), D = C / H, r;
    float *cs = nd->save[0];
    lt__rope_tables(cs, T, D, LT__ROPE_POS0(nd), LT__ROPE_THETA(nd));
    LT__OMP(parallel for if (B * T * C > 32768))
    for (r = 0; r < B * T; r++) {
        int64_t t = r % T;
        lt__rope_row(nd->in[0]->data + r * C, nd->out->data + r * C, cs + t * (D / 2), cs + (T + t) * (D / 2), H, D,
                     1.0f, 0);
    }
}
static void lt__rope_bwd(lt__node *nd) {
    int64_t B = nd->out->shape[0], T = nd->out->shape[1], C = nd->out->shape[2], H = LT__ROPE_H(nd), D = C / H, r;
    const float *cs = nd->save[0], *gy = nd->out->grad;
    int add = 0;
    float *gx = lt__grad_adopt(nd, 0) ? nd->in[0]->grad : lt__grad_w(nd->in[0], nd->ctx, &add);
    if (!gx) return;
    if (gx == gy) add = 0;   /* dy's buffer taken over (or a plan's in place): turned where it is */
    LT__OMP(parallel for if (B * T * C > 32768))
    for (r = 0; r < B * T; r++) {
        int64_t t = r % T;
        lt__rope_row(gy + r * C, gx + r * C, cs + t * (D / 2), cs + (T + t) * (D / 2), H, D, -1.0f, add);
    }
}
LTRAIN_DEF lt_tensor *lt_rope(lt_ctx *ctx, lt_tensor *x, int n_head, float theta, int pos0) {
    char b1[64];
    lt__node *nd;
    int64_t C;
    if (!lt__live(ctx, "lt_rope", x, x)) return NULL;
    if (x->ndim != 3) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_rope: x is %s: it must be [B,T,H*D]", lt_shape_str(x, b1, sizeof b1));
        return NULL;
    }
    C = x->shape[2];
    if (n_head < 1 || C % n_head != 0 || (C / n_head) % 2 != 0) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_rope: x is %s with %d heads: the heads must divide %lld into heads of an "
                     "even size", lt_shape_str(x, b1, sizeof b1), n_head, (long long)C);
        return NULL;
    }
    if (!(theta > 0) || !isfinite(theta)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_rope: theta is %g: it must be a positive number", (double)theta);
        return NULL;
    }
    if (pos0 < 0) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_rope: pos0 is %d: it must be >= 0", pos0);
        return NULL;
    }
    nd = lt__node_new(ctx, LT__OP(rope), 3, x->shape, x, NULL, NULL, 0);
    if (!nd) return NULL;
    LT__ROPE_H(nd) = n_head;
    LT__ROPE_POS0(nd) = pos0;
    LT__ROPE_THETA(nd) = theta;
    if (!lt__save(ctx, nd, 0, x->shape[1] * (C / n_head))) return NULL;   /* c, s: T x D/2 each */
    return lt__run(ctx, nd);
}

/* ---- @@OPS.embedding  embedding ------------------------------------------------------------------- */
/* W (V, C), ids (N) -> y (N, C) = W[ids];  dW[ids[n]] += dy[n] (rows may repeat: summed).
   Forward: the threads take rows.  Backward: the threads take blocks of whole columns (as the
   bias gradient's, lt__col_block), each adding every row into its columns in row order, so
   repeated ids never race and the sums do not depend on the thread count. */
static void lt__embedding_fwd(lt__node *nd) {
    int64_t C = nd->in[0]->shape[1], N = nd->out->n / C, r;
    LT__OMP(parallel for if (N * C > 4 * LT__EW_PAR))
    for (r = 0; r < N; r++)
        memcpy(nd->out->data + r * C, nd->in[0]->data + (int64_t)nd->ids[r] * C, (size_t)C * sizeof(float));
}
static void lt__embedding_bwd(lt__node *nd) {
    int64_t C = nd->in[0]->shape[1], N = nd->out->n / C, j0, bw = lt__col_block(C);
    float *gw = lt__grad(nd->in[0], nd->ctx);
    if (!gw) return;
    LT__OMP(parallel for if (N * C > 4 * LT__EW_PAR))
    for (j0 = 0; j0 < C; j0 += bw) {
        int64_t w = C - j0 < bw ? C - j0 : bw, r, j;
        for (r = 0; r < N; r++) {
            float *g = gw + (int64_t)nd->ids[r] * C + j0;
            const float *gy = nd->out->grad + r * C + j0;
            LT__OMP(simd)
            for (j = 0; j < w; j++) g[j] += gy[j];
        }
    }
}
LTRAIN_DEF lt_tensor *lt_embedding(lt_ctx *ctx, lt_tensor *w, const int32_t *ids, int64_t n0, int64_t n1) {
    int64_t shape[3], k, N;
    char b1[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_embedding", w, w)) return NULL;
    if (w->ndim != 2) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_embedding: W is %s: it must be [V,C]", lt_shape_str(w, b1, sizeof b1));
        return NULL;
    }
    if (!ids || n0 < 1 || n1 < 1) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_embedding: ids %s, count %lldx%lld: need ids and counts >= 1",
                     ids ? "given" : "NULL", (long long)n0, (long long)n1);
        return NULL;
    }
    if (n0 > INT64_MAX / n1) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_embedding: %lld x %lld ids overflow", (long long)n0, (long long)n1);
        return NULL;
    }
    N = n0 * n1;
    for (k = 0; k < N; k++)
        if (ids[k] < 0 || ids[k] >= w->shape[0]) {
            lt_set_error(ctx, LT_ERR_ARG, "lt_embedding: ids[%lld] is %d: it must be in [0,%lld) (W is %s)",
                         (long long)k, ids[k], (long long)w->shape[0], lt_shape_str(w, b1, sizeof b1));
            return NULL;
        }
    shape[0] = n0; shape[1] = n1; shape[2] = w->shape[1];
    nd = n0 == 1 ? lt__node_new(ctx, LT__OP(embedding), 2, shape + 1, w, NULL, NULL, 0)
                 : lt__node_new(ctx, LT__OP(embedding), 3, shape, w, NULL, NULL, 0);
    if (!nd || !(lt__node_ids(ctx, nd, ids, N))) return NULL;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.dropout  dropout -------------------------------------------------------------------------- */
/* y = x·m/(1-p), m ~ Bernoulli(1-p) from the context's RNG; saves the scaled mask; dx += dy·mask.
   Not training, or p = 0: y is x itself (no record). */
#define LT__DROPOUT_P(nd) ((nd)->f[0])   /* p */
static void lt__dropout_fwd(lt__node *nd) {
    const float *x = nd->in[0]->data;
    float *y = nd->out->data, *m = nd->save[0], p = (float)LT__DROPOUT_P(nd), keep = 1.0f - p;
    lt_rng *rng = &nd->ctx->rng;
    int64_t i, n = nd->out->n;
    for (i = 0; i < n; i++) {
        m[i] = (p < 1.0f && lt_rng_uniform(rng) < keep) ? 1.0f / keep : 0.0f;
        y[i] = x[i] * m[i];
    }
}
static void lt__dropout_bwd(lt__node *nd) {
    float *gx = lt__grad(nd->in[0], nd->ctx), *gy = nd->out->grad;
    const float *m = nd->save[0];
    int64_t i, n = nd->out->n;
    if (gx) for (i = 0; i < n; i++) gx[i] += gy[i] * m[i];
}
LTRAIN_DEF lt_tensor *lt_dropout(lt_ctx *ctx, lt_tensor *a, float p) {
    lt__node *nd;
    if (!lt__live(ctx, "lt_dropout", a, a)) return NULL;
    if (!(p >= 0.0f && p <= 1.0f)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_dropout: p is %g: it must be in [0,1]", (double)p);
        return NULL;
    }
    if (!ctx->training || p == 0.0f) return a;
    nd = lt__node_new(ctx, LT__OP(dropout), a->ndim, a->shape, a, NULL, NULL, 0);
    if (!nd || !lt__save(ctx, nd, 0, a->n)) return NULL;
    LT__DROPOUT_P(nd) = p;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.transpose  transpose (a copy) ---------------------------------------------------------- */
/* x (s0,s1,s2,s3) -> y with dims d0 and d1 swapped;  dx += dy transposed back. */
#define LT__TR_D0(nd) ((nd)->i[0])   /* d0 */
#define LT__TR_D1(nd) ((nd)->i[1])   /* d1 */
static void lt__transpose_copy(const lt_tensor *x, const lt_tensor *y, int d0, int d1, const float *src, float *dst,
                               int accumulate) {
    int64_t st[LT_MAX_DIMS], idx[LT_MAX_DIMS], k, tmp;
    int d;
    /* stride of each output dim in the input */
    st[3] = 1;
    for (d = 2; d >= 0; d--) st[d] = st[d + 1] * x->shape[d + 1];
    tmp = st[d0]; st[d0] = st[d1]; st[d1] = tmp;
    for (idx[0] = 0, k = 0; idx[0] < y->shape[0]; idx[0]++)
        for (idx[1] = 0; idx[1] < y->shape[1]; idx[1]++)
            for (idx[2] = 0; idx[2] < y->shape[2]; idx[2]++)
                for (idx[3] = 0; idx[3] < y->shape[3]; idx[3]++, k++) {
                    int64_t o = idx[0] * st[0] + idx[1] * st[1] + idx[2] * st[2] + idx[3] * st[3];
                    if (accumulate) dst[o] += src[k];
                    else dst[k] = src[o];
                }
}
static void lt__transpose_fwd(lt__node *nd) {
    lt__transpose_copy(nd->in[0], nd->out, (int)LT__TR_D0(nd), (int)LT__TR_D1(nd), nd->in[0]->data, nd->out->data, 0);
}
static void lt__transpose_bwd(lt__node *nd) {
    float *gx = lt__grad(nd->in[0], nd->ctx);
    if (gx) lt__transpose_copy(nd->in[0], nd->out, (int)LT__TR_D0(nd), (int)LT__TR_D1(nd), nd->out->grad, gx, 1);
}
LTRAIN_DEF lt_tensor *lt_transpose(lt_ctx *ctx, lt_tensor *a, int d0, int d1) {
    int64_t shape[LT_MAX_DIMS], t;
    int k;
    char b1[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_transpose", a, a)) return NULL;
    if (d0 < 0 || d1 < 0 || d0 >= a->ndim || d1 >= a->ndim) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_transpose: x is %s: dims %d and %d must be in [0,%d)",
                     lt_shape_str(a, b1, sizeof b1), d0, d1, a->ndim);
        return NULL;
    }
    for (k = 0; k < LT_MAX_DIMS; k++) shape[k] = a->shape[k];
    t = shape[d0]; shape[d0] = shape[d1]; shape[d1] = t;
    nd = lt__node_new(ctx, LT__OP(transpose), a->ndim, shape, a, NULL, NULL, 0);
    if (!nd) return NULL;
    LT__TR_D0(nd) = d0; LT__TR_D1(nd) = d1;
    return lt__run(ctx, nd);
}

/* ---- @@OPS.attention  causal multi-head self-attention ----------------------------------------------- */
#define LT__ATT_B(nd) ((nd)->i[0])   /* batch */
#define LT__ATT_T(nd) ((nd)->i[1])   /* sequence length */
#define LT__ATT_C(nd) ((nd)->i[2])   /* channels, H heads of C/H */
#define LT__ATT_H(nd) ((nd)->i[3])   /* heads */
#define LT__ATT_QKV16(nd) ((nd)->i[5])   /* attention16: 1 when qkv's 16-bit copy was written by its maker */
/* qkv (B, T, 3C) -> y (B, T, C), H heads of D = C/H; for query t of head h (q_t, k_u, v_u its rows):
     s_u = q_t·k_u / sqrt(D) for u <= t,  p = softmax(s),  y_t = Σ_u p_u v_u
   (torch's scaled_dot_product_attention(q, k, v, is_causal=True)); saves L_t = log Σ_u exp(s_u),
   (B, H, T) floats: the probabilities are recomputed by backward, never stored.  Backward, dy_t:
     p_u = exp(s_u - L_t),  dv_u += p_u dy_t,  ds_u = p_u (dy_t·v_u - D_t) with D_t = dy_t·y_t,
     dq_t += Σ_u ds_u k_u / sqrt(D),  dk_u += ds_u q_t / sqrt(D)
   (D_t = Σ_u p_u dy_t·v_u, so the output stands in for the row sums of p ⊙ dp; the op reads it.)
   lengths: queries t >= len output 0 and take no gradient; keys u >= len are then never seen
   (u <= t < len).  The record: B, T, C, H (LT__ATT_*), save[0] = L (0 for padded rows).
   The kernels are FlashAttention's (Dao et al. 2022; backward as in FlashAttention-2), in blocks
   small enough for L1/L2, multiplied by lt__att_mm (below) straight from the strided rows of qkv:
     forward, per (b, h, block of BR query rows), over blocks of BC keys up to the diagonal:
       Sᵀ = scale·K·Qᵀ (Qᵀ transposed once per block; key rows are the broadcast operand);
       per query m' = max(m, max S), P = exp(S - m'), l = l·exp(m - m') + Σ P,
       Y = Y·exp(m - m') + P·V  (the online softmax);  at the end Y /= l, L = m + log l
     backward, per (b, h), over blocks of BK keys (Kᵀ, Vᵀ transposed once), then over blocks of BQ
     query rows that see them:
       P = exp(scale·Q·Kᵀ - L), dV += Pᵀ·dY, dP = dY·Vᵀ, dS = P ⊙ (dP - D),
       dK += scale·dSᵀ·Q, dQ += scale·dS·K
   Memory: L, plus blocks on each thread's stack (up to 224 KiB), instead of the B·H·T·T probabilities.
   Forward units (b, h, query block) and backward units (b, h) go to the OpenMP threads; each
   unit's sums run in one fixed order, so the thread count never changes a bit.
   attention16 (lt_set_precision 16-bit) runs the same kernels on qkv rounded to 16 bits, rounds
   y to 16 bits, and keeps 16-bit copies of qkv and y for backward (rows widened block by block
   into the stack tiles) instead of reading the float32 tensors; in eager mode, with qkv already
   16-bit values (a 16-bit product's output, lt__copy16), it reads qkv and y in place instead.
   (Its op functions are in @@OPS.attention16, after the GEMM: bf16 on a CPU with AMX, or with
   AVX512_BF16 on AMD's cores, runs kernels of its own there, through lt__att_src's fwd_rows and
   bwd_head.)
   Every block is at most LT__ATT_TILE floats, so a head has at most that many channels. */
#define LT__ATT_BR 64      /* forward: query rows per unit */
#define LT__ATT_BC 128     /* forward: keys per online-softmax step */
#define LT__ATT_BK 64      /* backward: keys per block */
#define LT__ATT_BQ 128     /* backward: query rows per step */
#define LT__ATT_TILE 8192  /* floats of one operand block (rows x D) */



/* The block products: C (m,n) = alpha·A·B, or C += alpha·A·B (acc), where element (r,k) of A is
   A[r*ars + k*aks] (any two strides: A as is or transposed, in place) and row k of B is the n
   floats at B + k*ldb.  Sums run over k in order.  Plain C here (the reference, and the kernel
   where AVX2 is missing or LT_GEMM=portable is set); AVX-512 and AVX2 kernels in the fast paths
   at the end of the section (lt__att_tile_avx512, lt__att_tile_avx2). */
static void lt__att_mm_c(int64_t m, int64_t n, int64_t K, float alpha, const float *A, int64_t ars, int64_t aks,
                         const float *B, int64_t ldb, int acc, float *C, int64_t ldc) {
    int64_t r, j0, j, k;
    for (r = 0; r < m; r++)
        for (j0 = 0; j0 < n; j0 += 16) {
            float s[16];
            int64_t w = n - j0 < 16 ? n - j0 : 16;
            for (j = 0; j < 16; j++) s[j] = 0.0f;
            for (k = 0; k < K; k++) {
                float a = A[r * ars + k * aks];
                const float *b = B + k * ldb + j0;
                for (j = 0; j < w; j++) s[j] += a * b[j];
            }
            for (j = 0; j < w; j++) C[r * ldc + j0 + j] = alpha * s[j] + (acc ? C[r * ldc + j0 + j] : 0.0f);
        }
}

/* The attention kernels this CPU runs (lt__simd_level): 2 AVX-512, 1 AVX2 + FMA (CPUs without
   AVX-512), the block products and the softmax passes; 0 plain C. */
static int lt__att_simd(void) { return lt__simd_level(); }

#ifdef LT__X86
/* the AVX-512 and AVX2 fast paths, at the end of the section */
LT__TARGET("avx2,fma") static void lt__att_tile_avx2(int64_t m, int64_t n, int64_t K, float alpha, const float *A,
                                                    int64_t ars, int64_t aks, const float *B, int64_t ldb, int acc,
                                                    float *C, int64_t ldc);
LT__TARGET("avx512f") static void lt__att_tile_avx512(int64_t m, int64_t n, int64_t K, float alpha, const float *A,
                                                     int64_t ars, int64_t aks, const float *B, int64_t ldb, int acc,
                                                     float *C, int64_t ldc);
LT__TARGET("avx512f") static void lt__widen16_avx512(lt_dtype p, const uint16_t *h, float *out, int64_t n);
LT__TARGET("avx512f") static void lt__att_exp_avx512(float *x, const float *c, float c0, int64_t n);
LT__TARGET("avx512f") static void lt__att_colmax_avx512(const float *s, int64_t w, int64_t n, int64_t off, float *al);
LT__TARGET("avx512f") static void lt__att_colexp_avx512(float *s, int64_t w, int64_t n, int64_t off, const float *mx,
                                                       float *l);
LT__TARGET("avx2,fma") static void lt__att_exp_avx2(float *x, const float *c, float c0, int64_t n);
LT__TARGET("avx512f") static float lt__att_dot_avx512(const float *x, const float *dot, int64_t n);
LT__TARGET("avx2,fma") static float lt__att_dot_avx2(const float *x, const float *dot, int64_t n);
LT__TARGET("avx2,fma") static void lt__att_colmax_avx2(const float *s, int64_t w, int64_t n, int64_t off, float *al);
LT__TARGET("avx2,fma") static void lt__att_colexp_avx2(float *s, int64_t w, int64_t n, int64_t off, const float *mx,
                                                      float *l);
#endif

/* The block products, with the causal triangle skipped by row tiles of MR (row r of C needs only
   part of K or of the columns; what a tile needs is the union over its rows):
     LT__ATT_KLE: row r needs k <= r + off      LT__ATT_KGE: row r needs k >= r + off
     LT__ATT_NLE: row r needs columns <= r + off (later columns are not written)
     LT__ATT_NGE: row r needs columns >= r + off (earlier columns are not written)
   The skipped products are those of masked (zero) probabilities, so results do not change. */
enum { LT__ATT_ALL = 0, LT__ATT_KLE = 1, LT__ATT_KGE = 2, LT__ATT_NLE = 3, LT__ATT_NGE = 4 };
static void lt__att_mm(int simd, int tri, int64_t off, int64_t m, int64_t n, int64_t K, float alpha, const float *A,
                       int64_t ars, int64_t aks, const float *B, int64_t ldb, int acc, float *C, int64_t ldc) {
    int64_t mr = simd ? 6 : 1, r, j, k0, k1, j0, nn, mi;
    for (r = 0; r < m; r += mr) {
        mi = m - r < mr ? m - r : mr;
        k0 = tri == LT__ATT_KGE ? r + off : 0;
        k1 = tri == LT__ATT_KLE ? r + mi + off : K;
        j0 = tri == LT__ATT_NGE ? r + off : 0;
        nn = tri == LT__ATT_NLE ? r + mi + off : n;
        k0 = k0 < 0 ? 0 : k0;
        k1 = k1 > K ? K : k1;
        j0 = j0 < 0 ? 0 : j0;
        nn = nn > n ? n : nn;
        if (k1 <= k0) {   /* nothing to add: C stays, or becomes 0 */
            int64_t i;
            if (!acc) for (i = 0; i < mi; i++) for (j = j0; j < nn; j++) C[(r + i) * ldc + j] = 0.0f;
            continue;
        }
#ifdef LT__X86
        if (simd == 2) {
            for (j = j0; j < nn; j += 64)
                lt__att_tile_avx512(mi, nn - j < 64 ? nn - j : 64, k1 - k0, alpha, A + r * ars + k0 * aks, ars, aks,
                                    B + k0 * ldb + j, ldb, acc, C + r * ldc + j, ldc);
            continue;
        }
        if (simd == 1) {
            if (nn > j0)
                lt__att_tile_avx2(mi, nn - j0, k1 - k0, alpha, A + r * ars + k0 * aks, ars, aks, B + k0 * ldb + j0, ldb,
                                  acc, C + r * ldc + j0, ldc);
            continue;
        }
#endif
        if (nn > j0)
            lt__att_mm_c(mi, nn - j0, k1 - k0, alpha, A + r * ars + k0 * aks, ars, aks, B + k0 * ldb + j0, ldb, acc,
                         C + r * ldc + j0, ldc);
    }
}

/* Where the kernels read q, k, v (and y, for D): float32 rows in place, float32 rows rounded to
   16 bits on the way (attention16 without a gradient), or a 16-bit copy widened; and where
   backward adds their gradients.  Part w (0 q, 1 k, 2 v) of row r (= b·T + t) starts at
   f[w] + r·ld[w] (h[w], g[w] alike), its head j at j·D: fused qkv has ld 3C for all three parts
   (k at +C, v at +2C); lt_attention_gqa's separate q [B,T,H·D], k and v [B,T,Hkv·D] have ld H·D
   and Hkv·D.  Query head h reads key/value head h / G (G = H/Hkv; 1 without grouping). */
typedef struct lt__att_src lt__att_src;
struct lt__att_src {
    const float *f[3];           /* float32 q, k, v, or NULL */
    const uint16_t *h[3];        /* their 16-bit copies, or NULL */
    int64_t ld[3];               /* row strides of q, k, v (and of h, g) */
    float *g[3];                 /* backward: the gradients of q, k, v (NULL: not wanted) */
    const uint16_t *y16;         /* 16-bit copy of y (B,T,C) (attention16 backward) */
    int round;                   /* f is read rounded to p */
    lt_dtype p;
    int simd;                    /* lt__att_simd() */
    int64_t T, C, D, G;          /* C: y's row, H·D */
    /* the units' kernels: NULL for the float32 ones below (lt__att_fwd_rows, lt__att_bwd_head);
       attention16 on AMX tiles sets its own (@@OPS.attention16) */
    void (*fwd_rows)(const lt__att_src *a, int64_t b, int64_t h, int64_t t0, int64_t n, float *y, float *L);
    void (*bwd_head)(const lt__att_src *a, int64_t b, int64_t h, int64_t len, const float *Lh, const float *y,
                     const float *gy, int fresh);
    int amx;                     /* attention16's kernels: products on AMX tiles (else AVX512_BF16 pairs) */
    unsigned char *work;         /* their scratch: work_bytes for each OpenMP thread */
    size_t work_bytes;
};

/* out[0..n) = the 16-bit values h of type p widened (lt__widen16_avx512 where simd is 2) */
static void lt__att_widen(int simd, lt_dtype p, const uint16_t *h, float *out, int64_t n) {
#ifdef LT__X86
    if (simd == 2) { lt__widen16_avx512(p, h, out, n); return; }
#else
    (void)simd;
#endif
    lt__from16(p, h, out, (size_t)n);
}

/* n rows from r0 of part w (0 q, 1 k, 2 v) of query head h (k, v: its kv head h/G), batch b, as
   float32: a pointer into the input (row stride ld[w]) or rows widened/rounded into buf (stride D). */
static const float *lt__att_rows(const lt__att_src *a, int w, int64_t b, int64_t h, int64_t r0, int64_t n,
                                 float *buf, int64_t *ld) {
    int64_t lw = a->ld[w], off = (b * a->T + r0) * lw + (w ? h / a->G : h) * a->D, r;
    if (a->f[w] && !a->round) { *ld = lw; return a->f[w] + off; }
    for (r = 0; r < n; r++) {
        if (a->h[w]) lt__att_widen(a->simd, a->p, a->h[w] + off + r * lw, buf + r * a->D, a->D);
        else lt__round16(a->p, a->f[w] + off + r * lw, buf + r * a->D, (size_t)a->D);
    }
    *ld = a->D;
    return buf;
}

/* xt (D, n) = xᵀ of n rows of D floats (row stride ld): 8 x 8 blocks by lt__tr8x8 (simd), the
   edges one by one. */
static void lt__att_transpose(int simd, const float *x, int64_t ld, int64_t n, int64_t D, float *xt) {
    int64_t r, d, r8 = 0, d8 = 0;
#ifdef LT__X86
    if (simd) {
        r8 = n & ~(int64_t)7;
        d8 = D & ~(int64_t)7;
        for (r = 0; r < r8; r += 8)
            for (d = 0; d < d8; d += 8) lt__tr8x8(x + r * ld + d, ld, xt + d * n + r, n, 0);
    }
#else
    (void)simd;
#endif
    for (r = 0; r < n; r++)
        for (d = r < r8 ? d8 : 0; d < D; d++) xt[d * n + r] = x[r * ld + d];
}

/* x_i = exp(x_i - c_i) for i < n (c NULL: exp(x_i - c0)), every argument <= 0: the
   probabilities from the scores.  AVX-512: lt__exp_neg16, about twice as fast; AVX2: lt__exp_neg8. */
static void lt__att_exp(int simd, float *x, const float *c, float c0, int64_t n) {
    int64_t i;
#ifdef LT__X86
    if (simd == 2) { lt__att_exp_avx512(x, c, c0, n); return; }
    if (simd == 1) { lt__att_exp_avx2(x, c, c0, n); return; }
#else
    (void)simd;
#endif
    if (c) {
        LT__OMP(simd)
        for (i = 0; i < n; i++) x[i] = lt__exp_neg(x[i] - c[i]);
    } else {
        LT__OMP(simd)
        for (i = 0; i < n; i++) x[i] = lt__exp_neg(x[i] - c0);
    }
}

/* Σ x_i dot_i in 16 interleaved partial sums added pairwise: a fixed order the compiler can still
   vectorize.  With n a multiple of 16, AVX-512 and AVX2 keep the 16 sums and the pairwise adds in
   registers (lt__att_dot_avx512, lt__att_dot_avx2: the same multiplies and adds in the same order,
   so the same bits): the C loop's sums go through memory, and reading them back one by one after
   a vector store stalls (3% of attention at D = 64). */
static float lt__att_dot(int simd, const float *x, const float *dot, int64_t n) {
    float acc[16];
    int64_t i = 0;
    int j;
#ifdef LT__X86
    if (simd == 2 && n % 16 == 0) return lt__att_dot_avx512(x, dot, n);
    if (simd == 1 && n % 16 == 0) return lt__att_dot_avx2(x, dot, n);
#else
    (void)simd;
#endif
    for (j = 0; j < 16; j++) acc[j] = 0.0f;
    for (; i + 16 <= n; i += 16) for (j = 0; j < 16; j++) acc[j] += x[i + j] * dot[i + j];
    for (j = 0; i < n; i++, j++) acc[j] += x[i] * dot[i];
    for (j = 8; j > 0; j >>= 1) {
        int k;
        for (k = 0; k < j; k++) acc[k] += acc[k + j];
    }
    return acc[0];
}

/* The online softmax's passes over a block of scores S (w key rows of n query columns; column t
   sees row u when t >= u + off, the causal mask: later keys are not seen):
     lt__att_colmax:  al[t] = max(al[t], S[u][t] over the rows u it sees), u in order
     lt__att_colexp:  S[u][t] = exp(S[u][t] - mx[t]) where seen, 0 where not (a masked
                      probability is 0, and the block products read it); l[t] += S[u][t], u in order
   The plain C loops go row by row; the AVX-512 and AVX2 ones (fast paths below) go column block
   by column block, the running max and sum of 16 (8) columns in a register through all the rows:
   the same operations in the same order, so the same bits but for the exp's. */
static void lt__att_colmax(int simd, const float *s, int64_t w, int64_t n, int64_t off, float *al) {
    int64_t u, t;
#ifdef LT__X86
    if (simd == 2) { lt__att_colmax_avx512(s, w, n, off, al); return; }
    if (simd == 1) { lt__att_colmax_avx2(s, w, n, off, al); return; }
#else
    (void)simd;
#endif
    for (u = 0; u < w && u + off < n; u++) {
        const float *sr = s + u * n;
        LT__OMP(simd)
        for (t = u + off > 0 ? u + off : 0; t < n; t++) al[t] = sr[t] > al[t] ? sr[t] : al[t];
    }
}
static void lt__att_colexp(int simd, float *s, int64_t w, int64_t n, int64_t off, const float *mx, float *l) {
    int64_t u, t;
#ifdef LT__X86
    if (simd == 2) { lt__att_colexp_avx512(s, w, n, off, mx, l); return; }
    if (simd == 1) { lt__att_colexp_avx2(s, w, n, off, mx, l); return; }
#else
    (void)simd;
#endif
    for (u = 0; u < w; u++) {
        float *sr = s + u * n;
        int64_t tm = u + off < 0 ? 0 : u + off < n ? u + off : n;   /* row u's masked columns: t < tm */
        for (t = 0; t < tm; t++) sr[t] = 0.0f;
        lt__att_exp(0, sr + tm, mx + tm, 0.0f, n - tm);
        LT__OMP(simd)
        for (t = 0; t < n; t++) l[t] += sr[t];
    }
}

/* Forward of query rows t0..t0+n-1 (all < len) of head h, batch b: y rows (stride C) and L. */
static void lt__att_fwd_rows(const lt__att_src *a, int64_t b, int64_t h, int64_t t0, int64_t n, float *y, float *L) {
    float s[LT__ATT_BR * LT__ATT_BC], m[LT__ATT_BR], l[LT__ATT_BR], al[LT__ATT_BR];
    float qt[LT__ATT_TILE], tq[LT__ATT_TILE], tk[LT__ATT_TILE], tv[LT__ATT_TILE];
    int64_t C = a->C, D = a->D, t1 = t0 + n, u0, t, d, ldq, ldk, ldv;
    int64_t bc = LT__ATT_TILE / D < LT__ATT_BC ? LT__ATT_TILE / D : LT__ATT_BC;
    float scale = 1.0f / sqrtf((float)D);
    const float *q = lt__att_rows(a, 0, b, h, t0, n, tq, &ldq);
    lt__att_transpose(a->simd, q, ldq, n, D, qt);
    for (u0 = 0; u0 < t1; u0 += bc) {
        int64_t w = t1 - u0 < bc ? t1 - u0 : bc;
        const float *k = lt__att_rows(a, 1, b, h, u0, w, tk, &ldk), *v = lt__att_rows(a, 2, b, h, u0, w, tv, &ldv);
        lt__att_mm(a->simd, LT__ATT_NGE, u0 - t0, w, n, D, scale, k, ldk, 1, qt, n, 0, s, n);  /* Sᵀ = scale·K·Qᵀ */
        for (t = 0; t < n; t++) al[t] = u0 == 0 ? -INFINITY : m[t];
        lt__att_colmax(a->simd, s, w, n, u0 - t0, al);   /* al: the new max */
        for (t = 0; t < n; t++) {   /* al becomes the factor on the old sums, exp(m - m') */
            float mn = al[t];
            al[t] = u0 == 0 ? 0.0f : lt__exp_neg(m[t] - mn);
            m[t] = mn;
            l[t] = u0 == 0 ? 0.0f : l[t] * al[t];
        }
        lt__att_colexp(a->simd, s, w, n, u0 - t0, m, l);   /* P = exp(S - m'), l += its sums */
        if (u0 > 0)
            for (t = 0; t < n; t++) {
                float f = al[t], *yr = y + t * C;
                if (f != 1.0f) {
                    LT__OMP(simd)
                    for (d = 0; d < D; d++) yr[d] *= f;
                }
            }
        lt__att_mm(a->simd, LT__ATT_KLE, t0 - u0, n, D, w, 1.0f, s, 1, n, v, ldv, u0 > 0, y, C);  /* Y (+)= P·V */
    }
    for (t = 0; t < n; t++) {
        float r = 1.0f / l[t], *yr = y + t * C;
        LT__OMP(simd)
        for (d = 0; d < D; d++) yr[d] *= r;
        L[t] = m[t] + logf(l[t]);
    }
}

static void lt__att_fwd(lt__node *nd, const lt__att_src *a) {
    int64_t B = LT__ATT_B(nd), T = LT__ATT_T(nd), C = LT__ATT_C(nd), H = LT__ATT_H(nd), D = C / H;
    int64_t br = LT__ATT_TILE / D < LT__ATT_BR ? LT__ATT_TILE / D : LT__ATT_BR;
    int64_t nblk = (T + br - 1) / br, unit;
    float *out = nd->out->data, *Ls = nd->save[0];
    LT__OMP(parallel for schedule(dynamic, 1))
    for (unit = 0; unit < B * H * nblk; unit++) {
        int64_t bh = unit / nblk, b = bh / H, h = bh % H, t0 = unit % nblk * br, t, u;
        int64_t t1 = t0 + br < T ? t0 + br : T, len = nd->ids ? nd->ids[b] : T, tl = t1 < len ? t1 : len;
        float *y = out + (b * T + t0) * C + h * D, *L = Ls + bh * T + t0;
        if (tl > t0) (a->fwd_rows ? a->fwd_rows : lt__att_fwd_rows)(a, b, h, t0, tl - t0, y, L);
        for (t = tl > t0 ? tl : t0; t < t1; t++) {   /* padded queries: output 0 */
            for (u = 0; u < D; u++) y[(t - t0) * C + u] = 0.0f;
            L[t - t0] = 0.0f;
        }
    }
}

/* D_t = dy_t·y_t for rows t0..t0+n-1 of head h, batch b (y from its 16-bit copy in attention16,
   widened into buf). */
static void lt__att_drows(const lt__att_src *a, int64_t b, int64_t h, int64_t t0, int64_t n, const float *y,
                          const float *gy, float *dd, float *buf) {
    int64_t T = a->T, C = a->C, D = a->D, t;
    for (t = 0; t < n; t++) {
        int64_t at = (b * T + t0 + t) * C + h * D;
        const float *yr = y + at;
        if (a->y16) {
            lt__att_widen(a->simd, a->p, a->y16 + at, buf, D);
            yr = buf;
        }
        dd[t] = lt__att_dot(a->simd, gy + at, yr, D);
    }
}

#define LT__ATT_DMAX 4096  /* backward: D for up to this many rows is made once per head */
typedef char lt__att_dmax_holds_a_step[LT__ATT_DMAX >= LT__ATT_BQ ? 1 : -1];
/* Backward of query head h, batch b, queries and keys < len: adds into a->g (dq of head h, dk and
   dv of kv head h/G; a NULL part is skipped).  Bit w of fresh: part w's rows < len of this head
   hold no values yet, so its first product there writes (=) instead of adding: dq's rows all get
   theirs from the first key block (u0 = 0), a key block's dk, dv rows from its first query block
   (t0 = u0); lt__att_mm writes zeros where a row has nothing to add. */
static void lt__att_bwd_head(const lt__att_src *a, int64_t b, int64_t h, int64_t len, const float *Lh,
                             const float *y, const float *gy, int fresh) {
    float p[LT__ATT_BQ * LT__ATT_BK], ds[LT__ATT_BQ * LT__ATT_BK], dall[LT__ATT_DMAX], *dd;
    float tq[LT__ATT_TILE], tk[LT__ATT_TILE], tv[LT__ATT_TILE], kt[LT__ATT_TILE], vt[LT__ATT_TILE];
    int64_t T = a->T, C = a->C, D = a->D, u0, t0, t, u;
    int once = len <= LT__ATT_DMAX;
    int64_t bk = LT__ATT_TILE / D < LT__ATT_BK ? LT__ATT_TILE / D : LT__ATT_BK;
    int64_t bq = LT__ATT_TILE / D < LT__ATT_BQ ? LT__ATT_TILE / D : LT__ATT_BQ;
    float scale = 1.0f / sqrtf((float)D);
    for (u0 = 0; u0 < len; u0 += bk) {
        int64_t w = len - u0 < bk ? len - u0 : bk, ldk, ldv;
        const float *k = lt__att_rows(a, 1, b, h, u0, w, tk, &ldk), *v = lt__att_rows(a, 2, b, h, u0, w, tv, &ldv);
        int64_t kvo = (h / a->G) * D;
        float *dk = a->g[1] ? a->g[1] + (b * T + u0) * a->ld[1] + kvo : NULL;
        float *dv = a->g[2] ? a->g[2] + (b * T + u0) * a->ld[2] + kvo : NULL;
        lt__att_transpose(a->simd, k, ldk, w, D, kt);
        lt__att_transpose(a->simd, v, ldv, w, D, vt);
        for (t0 = u0; t0 < len; t0 += bq) {
            int64_t n = len - t0 < bq ? len - t0 : bq, ldq;
            const float *q, *dy = gy + (b * T + t0) * C + h * D;
            float *dq = a->g[0] ? a->g[0] + (b * T + t0) * a->ld[0] + h * D : NULL;
            if (once) {
                if (u0 == 0) lt__att_drows(a, b, h, t0, n, y, gy, dall + t0, tq);
                dd = dall + t0;
            } else {
                dd = dall;
                lt__att_drows(a, b, h, t0, n, y, gy, dd, tq);
            }
            q = lt__att_rows(a, 0, b, h, t0, n, tq, &ldq);
            /* query t0+i sees key u0+j when j <= i + o: the products skip the rest (o >= 0) */
            int64_t o = t0 - u0;
            lt__att_mm(a->simd, LT__ATT_NLE, o, n, w, D, scale, q, ldq, 1, kt, w, 0, p, w);  /* S = scale·Q·Kᵀ */
            for (t = 0; t < n; t++) {
                float *pr = p + t * w, Lt = Lh[t0 + t];
                int64_t vis = t + o + 1 < w ? t + o + 1 : w;
                lt__att_exp(a->simd, pr, NULL, Lt, vis);                                         /* P */
                for (u = vis; u < w; u++) pr[u] = 0.0f;
            }
            if (dv) lt__att_mm(a->simd, LT__ATT_KGE, -o, w, D, n, 1.0f, p, 1, w, dy, C, !(fresh & 4) || o > 0, dv,
                               a->ld[2]);                                                              /* dV += Pᵀ·dY */
            lt__att_mm(a->simd, LT__ATT_NLE, o, n, w, D, 1.0f, dy, C, 1, vt, w, 0, ds, w);      /* dP = dY·Vᵀ */
            for (t = 0; t < n; t++) {                                                       /* dS = P ⊙ (dP - D) */
                float *pr = p + t * w, *dr = ds + t * w, dt = dd[t];
                int64_t vis = t + o + 1 < w ? t + o + 1 : w;
                LT__OMP(simd)
                for (u = 0; u < vis; u++) dr[u] = pr[u] * (dr[u] - dt);
                for (u = vis; u < w; u++) dr[u] = 0.0f;
            }
            if (dk) lt__att_mm(a->simd, LT__ATT_KGE, -o, w, D, n, scale, ds, 1, w, q, ldq, !(fresh & 2) || o > 0, dk,
                               a->ld[1]);                                                              /* dK += scale·dSᵀ·Q */
            if (dq) lt__att_mm(a->simd, LT__ATT_KLE, o, n, D, w, scale, ds, w, 1, k, ldk, !(fresh & 1) || u0 > 0, dq,
                               a->ld[0]);                                                              /* dQ += scale·dS·K */
        }
    }
}

/* Units (b, kv head j) go to the threads; a unit runs its G query heads jG..jG+G-1 in order, so
   the sums into dk, dv of head j have one order whatever the thread count.  add[w] = 0: part w's
   gradient buffer holds no values yet: each unit's first products write its own columns
   (lt__att_bwd_head's fresh) and it zeroes only the padded rows >= len, which no product reaches
   (a part that shares its buffer with an earlier one, fused qkv or the same tensor passed twice,
   comes with add 1: those columns are written by then). */
static void lt__att_bwd(lt__node *nd, const lt__att_src *a, const int add[3]) {
    int64_t B = LT__ATT_B(nd), T = LT__ATT_T(nd), Hk = LT__ATT_H(nd) / a->G, bj;
    LT__OMP(parallel for schedule(dynamic, 1))
    for (bj = 0; bj < B * Hk; bj++) {
        int64_t b = bj / Hk, j = bj % Hk, len = nd->ids ? nd->ids[b] : T, t, i;
        int w;
        for (w = 0; w < 3; w++) {
            int64_t c0 = w ? j * a->D : j * a->G * a->D, nc = w ? a->D : a->G * a->D;
            if (a->g[w] && !add[w])
                for (t = len; t < T; t++) memset(a->g[w] + (b * T + t) * a->ld[w] + c0, 0, (size_t)nc * sizeof(float));
        }
        for (i = 0; i < a->G; i++) {   /* dk, dv: the group's first head writes, the others add */
            int64_t h = j * a->G + i;
            int fresh = (add[0] ? 0 : 1) | (i == 0 && !add[1] ? 2 : 0) | (i == 0 && !add[2] ? 4 : 0);
            (a->bwd_head ? a->bwd_head : lt__att_bwd_head)(a, b, h, len, nd->save[0] + (b * LT__ATT_H(nd) + h) * T,
                                                           nd->out->data, nd->out->grad, fresh);
        }
    }
}
/* the gradient of fused qkv, its three parts (add as lt__att_bwd wants it) */
static int lt__att_grad_qkv(lt__node *nd, lt__att_src *a, int add[3]) {
    float *g = lt__grad_w(nd->in[0], nd->ctx, &add[0]);
    if (!g) return 0;
    a->g[0] = g; a->g[1] = g + a->C; a->g[2] = g + 2 * a->C;
    add[1] = add[2] = add[0];
    return 1;
}

static lt__att_src lt__att_src_of(const lt__node *nd, int bits16) {
    lt__att_src a;
    memset(&a, 0, sizeof a);
    a.T = LT__ATT_T(nd); a.C = LT__ATT_C(nd); a.D = LT__ATT_C(nd) / LT__ATT_H(nd); a.G = 1;
    a.f[0] = nd->in[0]->data; a.f[1] = a.f[0] + a.C; a.f[2] = a.f[0] + 2 * a.C;
    a.ld[0] = a.ld[1] = a.ld[2] = 3 * a.C;
    if (bits16) {
        a.p = LT__PREC(nd) == (double)LT_F16 ? LT_F16 : LT_BF16;
        a.h[0] = (const uint16_t *)(const void *)nd->save[1];
        if (a.h[0]) { a.h[1] = a.h[0] + a.C; a.h[2] = a.h[0] + 2 * a.C; }
        a.y16 = a.h[0] ? a.h[0] + nd->in[0]->n : NULL;
        a.round = !lt__exact16(nd->in[0], a.p);   /* (16-bit values already: read in place) */
    }
    a.simd = lt__att_simd();
    return a;
}
static void lt__attention_fwd(lt__node *nd) {
    lt__att_src a = lt__att_src_of(nd, 0);
    lt__att_fwd(nd, &a);
}
static void lt__attention_bwd(lt__node *nd) {
    lt__att_src a = lt__att_src_of(nd, 0);
    int add[3];
    if (lt__att_grad_qkv(nd, &a, add)) lt__att_bwd(nd, &a, add);
}

LTRAIN_DEF lt_tensor *lt_attention(lt_ctx *ctx, lt_tensor *qkv, int n_head, const int32_t *lengths) {
    int64_t B, T, C, shape[3], b;
    char b1[64];
    lt__node *nd;
    size_t ln;
    int bits16;
    if (!lt__live(ctx, "lt_attention", qkv, qkv)) return NULL;
    bits16 = ctx->precision != LT_F32 && ctx->device == LT_CPU;   /* the CUDA kernel is float32 */
    if (qkv->ndim != 3 || qkv->shape[2] % 3 != 0) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_attention: qkv is %s: it must be [B,T,3C]", lt_shape_str(qkv, b1, sizeof b1));
        return NULL;
    }
    B = qkv->shape[0]; T = qkv->shape[1]; C = qkv->shape[2] / 3;
    if (n_head < 1 || C % n_head != 0) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_attention: %d heads do not divide C = %lld (qkv is %s)", n_head, (long long)C,
                     lt_shape_str(qkv, b1, sizeof b1));
        return NULL;
    }
    if (C / n_head > LT__ATT_TILE) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_attention: qkv is %s with %d heads: a head of %lld channels is more than "
                     "%d, the most the kernels handle (hint: use more heads)",
                     lt_shape_str(qkv, b1, sizeof b1), n_head, (long long)(C / n_head), LT__ATT_TILE);
        return NULL;
    }
    if (lengths)
        for (b = 0; b < B; b++)
            if (lengths[b] < 0 || lengths[b] > T) {
                lt_set_error(ctx, LT_ERR_ARG, "lt_attention: lengths[%lld] is %d: it must be in [0,%lld]", (long long)b,
                             lengths[b], (long long)T);
                return NULL;
            }
    shape[0] = B; shape[1] = T; shape[2] = C;
    if (!lt_mul_size((size_t)(B * n_head), (size_t)T, &ln)) {
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_attention: B*H*T overflows");
        return NULL;
    }
    nd = lt__node_new(ctx, bits16 ? LT__OP(attention16) : LT__OP(attention), 3, shape, qkv, NULL, NULL, 0);
    if (!nd) return NULL;
    LT__ATT_B(nd) = B; LT__ATT_T(nd) = T; LT__ATT_C(nd) = C; LT__ATT_H(nd) = n_head;
    LT__PREC(nd) = (double)ctx->precision;
    if (!lt__save(ctx, nd, 0, (int64_t)ln)) return NULL;   /* L */
    if (bits16 && nd->out->requires_grad && lt__copy16(ctx, qkv) && !lt__save(ctx, nd, 1, 2 * B * T * C))
        return NULL;   /* qkv, y: 16 bit (or, lt__copy16, the float32 qkv and y read in place) */
    if (lengths && !(lt__node_ids(ctx, nd, lengths, B))) return NULL;
    return lt__run(ctx, nd);
}

/* ---- fast paths: AVX-512 and AVX2 (attention) --------------------------------------------------- */
#ifdef LT__X86
/* 6 rows x up to 64 columns: up to 24 zmm accumulators, as many B vectors as the 16-column groups
   n spans (1 to 4: a head of 48 channels computes 3, not 4 with one masked off), A values
   broadcast.  The last group is masked past n; rows past m read row 0 and are not stored.
   The body is written once for R rows (lt__att_rows_avx512, always inlined, so each R is its own
   code with the unused rows' FMAs gone): R = 6, and R = 4 or 2 for a block's last rows (the
   blocks have 64 or 128 rows, 10·6 + 4 and 21·6 + 2), which would otherwise run six rows' FMAs
   for four or two rows stored. */
#define LT__AM_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define LT__AM_PTR(r) const float *a##r = A + (r < m ? r : 0) * ars;
#define LT__AM_ZERO(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = c##r##0, c##r##2 = c##r##0, c##r##3 = c##r##0;
#define LT__AM_FMA1(r, v) c##r##v = _mm512_fmadd_ps(av, b##v, c##r##v);
#define LT__AM_ST1(r, v, mk)                                                                         \
    _mm512_mask_storeu_ps(cr + 16 * v, mk, acc ? _mm512_fmadd_ps(va, c##r##v, _mm512_maskz_loadu_ps(mk, cr + 16 * v)) \
                                                : _mm512_mul_ps(va, c##r##v));
#define LT__AM_ST(r)                                                                                \
    if (r < R && r < m) {                                                                                   \
        float *cr = C + r * ldc;                                                                   \
        LT__AM_ST1(r, 0, m0) LT__AM_ST1(r, 1, m1) LT__AM_ST1(r, 2, m2) LT__AM_ST1(r, 3, m3)            \
    }
/* the k loop on NV vectors: B row k's groups loaded (past n masked to 0), one broadcast per row */
#define LT__AM_B0 __m512 b0 = _mm512_maskz_loadu_ps(m0, b);
#define LT__AM_B1 LT__AM_B0 __m512 b1 = _mm512_maskz_loadu_ps(m1, b + 16);
#define LT__AM_B2 LT__AM_B1 __m512 b2 = _mm512_maskz_loadu_ps(m2, b + 32);
#define LT__AM_B3 LT__AM_B2 __m512 b3 = _mm512_maskz_loadu_ps(m3, b + 48);
#define LT__AM_AV(r) __m512 av = _mm512_set1_ps(a##r[k * aks]);
#define LT__AM_F0(r) if (r < R) { LT__AM_AV(r) LT__AM_FMA1(r, 0) }
#define LT__AM_F1(r) if (r < R) { LT__AM_AV(r) LT__AM_FMA1(r, 0) LT__AM_FMA1(r, 1) }
#define LT__AM_F2(r) if (r < R) { LT__AM_AV(r) LT__AM_FMA1(r, 0) LT__AM_FMA1(r, 1) LT__AM_FMA1(r, 2) }
#define LT__AM_F3(r) if (r < R) { LT__AM_AV(r) LT__AM_FMA1(r, 0) LT__AM_FMA1(r, 1) LT__AM_FMA1(r, 2) LT__AM_FMA1(r, 3) }
#define LT__AM_LOOP(LOADS, FMAS)                                                                   \
    LT__UNROLL4                                                                                    \
    for (k = 0; k < K; k++) {                                                                      \
        const float *b = B + k * ldb;                                                              \
        LOADS                                                                                      \
        LT__AM_ROWS(FMAS)                                                                          \
    }
LT__TARGET("avx512f") static inline __attribute__((always_inline)) void
lt__att_rows_avx512(const int R, int64_t m, int64_t n, int64_t K, float alpha, const float *A, int64_t ars, int64_t aks,
                    const float *B, int64_t ldb, int acc, float *C, int64_t ldc) {
    __mmask16 m0 = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
    __mmask16 m1 = (__mmask16)(n >= 32 ? 0xffffu : n <= 16 ? 0u : (1u << (n - 16)) - 1u);
    __mmask16 m2 = (__mmask16)(n >= 48 ? 0xffffu : n <= 32 ? 0u : (1u << (n - 32)) - 1u);
    __mmask16 m3 = (__mmask16)(n >= 64 ? 0xffffu : n <= 48 ? 0u : (1u << (n - 48)) - 1u);
    __m512 va = _mm512_set1_ps(alpha);
    int64_t k;
    LT__AM_ROWS(LT__AM_PTR)
    LT__AM_ROWS(LT__AM_ZERO)
    if (n > 48) LT__AM_LOOP(LT__AM_B3, LT__AM_F3)
    else if (n > 32) LT__AM_LOOP(LT__AM_B2, LT__AM_F2)
    else if (n > 16) LT__AM_LOOP(LT__AM_B1, LT__AM_F1)
    else LT__AM_LOOP(LT__AM_B0, LT__AM_F0)
    LT__AM_ROWS(LT__AM_ST)
}
LT__TARGET("avx512f") static void lt__att_tile_avx512(int64_t m, int64_t n, int64_t K, float alpha, const float *A,
                                                     int64_t ars, int64_t aks, const float *B, int64_t ldb, int acc,
                                                     float *C, int64_t ldc) {
    if (m > 4) lt__att_rows_avx512(6, m, n, K, alpha, A, ars, aks, B, ldb, acc, C, ldc);
    else if (m > 2) lt__att_rows_avx512(4, m, n, K, alpha, A, ars, aks, B, ldb, acc, C, ldc);
    else lt__att_rows_avx512(2, m, n, K, alpha, A, ars, aks, B, ldb, acc, C, ldc);
}
#undef LT__AM_ROWS
#undef LT__AM_PTR
#undef LT__AM_ZERO
#undef LT__AM_FMA1
#undef LT__AM_ST1
#undef LT__AM_ST
#undef LT__AM_LOOP
#undef LT__AM_B0
#undef LT__AM_B1
#undef LT__AM_B2
#undef LT__AM_B3
#undef LT__AM_AV
#undef LT__AM_F0
#undef LT__AM_F1
#undef LT__AM_F2
#undef LT__AM_F3

/* lt__att_mm's AVX2 kernel (CPUs without AVX-512): up to 6 rows x 16 columns at a time, 12 ymm
   accumulators, A values broadcast; rows past m read row 0 and are not stored.  The last columns
   (n % 16, the causal tiles' ragged edges) load and store through masks.  R rows as
   lt__att_rows_avx512: 6, or 4 and 2 for a block's last rows. */
#define LT__AV_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define LT__AV_PTR(r) const float *a##r = A + (r < m ? r : 0) * ars;
#define LT__AV_ZERO(r) __m256 c##r##0 = _mm256_setzero_ps(), c##r##1 = c##r##0;
#define LT__AV_FMA(r)                                                                               \
    if (r < R) { __m256 av = _mm256_broadcast_ss(a##r + k * aks);                                             \
      c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0); c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1); }
#define LT__AV_ST1(r, v)                                                                            \
    _mm256_storeu_ps(cr + 8 * v, acc ? _mm256_fmadd_ps(va, c##r##v, _mm256_loadu_ps(cr + 8 * v))    \
                                     : _mm256_mul_ps(va, c##r##v));
#define LT__AV_ST(r) if (r < R && r < m) { float *cr = C + r * ldc + j; LT__AV_ST1(r, 0) LT__AV_ST1(r, 1) }
#define LT__AV_SM1(r, v, mk)                                                                        \
    _mm256_maskstore_ps(cr + 8 * v, mk, acc ? _mm256_fmadd_ps(va, c##r##v, _mm256_maskload_ps(cr + 8 * v, mk)) \
                                            : _mm256_mul_ps(va, c##r##v));
#define LT__AV_SM(r) if (r < R && r < m) { float *cr = C + r * ldc + j; LT__AV_SM1(r, 0, m0) LT__AV_SM1(r, 1, m1) }
LT__TARGET("avx2,fma") static inline __attribute__((always_inline)) void
lt__att_rows_avx2(const int R, int64_t m, int64_t n, int64_t K, float alpha, const float *A, int64_t ars, int64_t aks,
                  const float *B, int64_t ldb, int acc, float *C, int64_t ldc) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 va = _mm256_set1_ps(alpha);
    int64_t j, k;
    LT__AV_ROWS(LT__AV_PTR)
    for (j = 0; j < n; j += 16) {
        LT__AV_ROWS(LT__AV_ZERO)
        if (n - j >= 16) {
            LT__UNROLL4
            for (k = 0; k < K; k++) {
                const float *b = B + k * ldb + j;
                __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
                LT__AV_ROWS(LT__AV_FMA)
            }
            LT__AV_ROWS(LT__AV_ST)
        } else {
            int w = (int)(n - j);
            __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(w), lane), m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - 8), lane);
            for (k = 0; k < K; k++) {
                const float *b = B + k * ldb + j;
                __m256 b0 = _mm256_maskload_ps(b, m0), b1 = _mm256_maskload_ps(b + 8, m1);
                LT__AV_ROWS(LT__AV_FMA)
            }
            LT__AV_ROWS(LT__AV_SM)
        }
    }
}
LT__TARGET("avx2,fma") static void lt__att_tile_avx2(int64_t m, int64_t n, int64_t K, float alpha, const float *A,
                                                    int64_t ars, int64_t aks, const float *B, int64_t ldb, int acc,
                                                    float *C, int64_t ldc) {
    if (m > 4) lt__att_rows_avx2(6, m, n, K, alpha, A, ars, aks, B, ldb, acc, C, ldc);
    else if (m > 2) lt__att_rows_avx2(4, m, n, K, alpha, A, ars, aks, B, ldb, acc, C, ldc);
    else lt__att_rows_avx2(2, m, n, K, alpha, A, ars, aks, B, ldb, acc, C, ldc);
}
#undef LT__AV_ROWS
#undef LT__AV_PTR
#undef LT__AV_ZERO
#undef LT__AV_FMA
#undef LT__AV_ST1
#undef LT__AV_ST
#undef LT__AV_SM1
#undef LT__AV_SM

/* out[0..n) = the 16-bit values h of type p widened, with AVX-512: for the attention kernels (a
   row of a head is D values, too few to pay for lt__from16's dispatch each time) and the GEMM's
   packing of 16-bit operands (@@GEMM, lt__gsrc_get) */
LT__TARGET("avx512f") static void lt__widen16_avx512(lt_dtype p, const uint16_t *h, float *out, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, lt__widen16_lanes(p, _mm256_loadu_si256((const __m256i *)(const void *)(h + i))));
    if (i < n) lt__from16(p, h + i, out + i, (size_t)(n - i));
}

/* lt__att_exp's AVX-512 kernel: lt__exp_neg16 on 16 values at a time, the last ones masked. */
LT__TARGET("avx512f") static void lt__att_exp_avx512(float *x, const float *c, float c0, int64_t n) {
    __m512 vc = _mm512_set1_ps(c0);
    int64_t i;
    for (i = 0; i < n; i += 16) {
        __mmask16 k = (__mmask16)(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1u);
        __m512 v = _mm512_maskz_loadu_ps(k, x + i);
        _mm512_mask_storeu_ps(x + i, k, lt__exp_neg16(_mm512_sub_ps(v, c ? _mm512_maskz_loadu_ps(k, c + i) : vc)));
    }
}
/* lt__att_colmax and lt__att_colexp, 16 columns at a time: the lanes a row sees are those at or
   past u + off, a mask that grows by one lane per row; rows that see none of a block's columns
   end the max (later rows see fewer) and write zeros in the exp pass. */
LT__TARGET("avx512f") static __mmask16 lt__att_seen(int64_t lim, __mmask16 k) {   /* lanes j >= lim of k */
    return lim <= 0 ? k : lim >= 16 ? (__mmask16)0 : (__mmask16)(k & (0xFFFFu << lim));
}
LT__TARGET("avx512f") static void lt__att_colmax_avx512(const float *s, int64_t w, int64_t n, int64_t off, float *al) {
    int64_t j, u;
    for (j = 0; j < n; j += 16) {
        __mmask16 k = (__mmask16)(n - j >= 16 ? 0xFFFFu : (1u << (n - j)) - 1u);
        __m512 mx = _mm512_maskz_loadu_ps(k, al + j);
        for (u = 0; u < w && u + off - j < 16; u++) {
            __mmask16 seen = lt__att_seen(u + off - j, k);
            mx = _mm512_mask_max_ps(mx, seen, _mm512_maskz_loadu_ps(seen, s + u * n + j), mx);   /* s > mx ? s : mx */
        }
        _mm512_mask_storeu_ps(al + j, k, mx);
    }
}
LT__TARGET("avx512f") static void lt__att_colexp_avx512(float *s, int64_t w, int64_t n, int64_t off, const float *mx,
                                                       float *l) {
    int64_t j, u;
    for (j = 0; j < n; j += 16) {
        __mmask16 k = (__mmask16)(n - j >= 16 ? 0xFFFFu : (1u << (n - j)) - 1u);
        __m512 m = _mm512_maskz_loadu_ps(k, mx + j), acc = _mm512_maskz_loadu_ps(k, l + j);
        for (u = 0; u < w; u++) {
            __mmask16 seen = lt__att_seen(u + off - j, k);
            __m512 p = _mm512_setzero_ps();
            if (seen) p = _mm512_maskz_mov_ps(seen, lt__exp_neg16(_mm512_sub_ps(_mm512_maskz_loadu_ps(seen, s + u * n + j), m)));
            _mm512_mask_storeu_ps(s + u * n + j, k, p);
            acc = _mm512_add_ps(acc, p);
        }
        _mm512_mask_storeu_ps(l + j, k, acc);
    }
}

/* The same three with AVX2 + FMA, 8 columns at a time.  A block of fewer than 8 columns (the last
   one of a query block whose length is not a multiple of 8) goes through lt__load8 / lt__store8:
   the lanes past the end are zeros, not seen, never stored.  A row's seen lanes (j >= lim) come
   from comparing the lane numbers 0..7 with lim. */
LT__TARGET("avx2,fma") static __m256 lt__att_seen8(int64_t lim) {   /* all ones in lanes j >= lim */
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int32_t l = lim < -1 ? -1 : lim > 8 ? 8 : (int32_t)lim;
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(l - 1)));
}
/* lt__att_dot, n a multiple of 16: lanes j of the accumulator(s) are the C loop's acc[j], added
   pairwise as it adds them (lt__lanes_sum16, lt__lanes_sum8); multiplies and adds stay separate, as
   the C loop's (no contraction into FMA). */
LT__TARGET("avx512f") static float lt__att_dot_avx512(const float *x, const float *dot, int64_t n) {
    __m512 acc = _mm512_setzero_ps();
    int64_t i;
    for (i = 0; i < n; i += 16) acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(dot + i)));
    return lt__lanes_sum16(acc);
}
LT__TARGET("avx2,fma") static float lt__att_dot_avx2(const float *x, const float *dot, int64_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    int64_t i;
    for (i = 0; i < n; i += 16) {
        a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(dot + i)));
        a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(dot + i + 8)));
    }
    return lt__lanes_sum8(_mm256_add_ps(a0, a1));   /* lanes j + 8 added first, as the C loop */
}
LT__TARGET("avx2,fma") static void lt__att_exp_avx2(float *x, const float *c, float c0, int64_t n) {
    __m256 vc = _mm256_set1_ps(c0);
    int64_t i;
    for (i = 0; i < n; i += 8) {
        int64_t nv = n - i;
        __m256 v = lt__load8(x + i, nv);
        lt__store8(x + i, lt__exp_neg8(_mm256_sub_ps(v, c ? lt__load8(c + i, nv) : vc)), nv);
    }
}
LT__TARGET("avx2,fma") static void lt__att_colmax_avx2(const float *s, int64_t w, int64_t n, int64_t off, float *al) {
    int64_t j, u;
    for (j = 0; j < n; j += 8) {
        int64_t nv = n - j;
        __m256 mx = lt__load8(al + j, nv);
        for (u = 0; u < w && u + off - j < 8; u++)   /* s > mx ? s : mx in the lanes the row sees */
            mx = _mm256_blendv_ps(mx, _mm256_max_ps(lt__load8(s + u * n + j, nv), mx), lt__att_seen8(u + off - j));
        lt__store8(al + j, mx, nv);
    }
}
LT__TARGET("avx2,fma") static void lt__att_colexp_avx2(float *s, int64_t w, int64_t n, int64_t off, const float *mx,
                                                      float *l) {
    int64_t j, u;
    for (j = 0; j < n; j += 8) {
        int64_t nv = n - j;
        __m256 m = lt__load8(mx + j, nv), acc = lt__load8(l + j, nv);
        for (u = 0; u < w; u++) {
            __m256 p = _mm256_setzero_ps();
            if (u + off - j < 8)
                p = _mm256_and_ps(lt__att_seen8(u + off - j),
                                  lt__exp_neg8(_mm256_sub_ps(lt__load8(s + u * n + j, nv), m)));
            lt__store8(s + u * n + j, p, nv);
            acc = _mm256_add_ps(acc, p);
        }
        lt__store8(l + j, acc, nv);
    }
}
#endif /* LT__X86 */

/* ---- @@OPS.attention_gqa  grouped-query attention: fewer key/value heads than query heads --------- */
/* q (B, T, H·D), k and v (B, T, Hkv·D) -> y (B, T, H·D); H = G·Hkv, query head h reads key/value
   head h/G (HF's repeat_kv, without the copies); causal, scale 1/sqrt(D), lengths as lt_attention.
   Per query head the math is lt_attention's (forward and backward above), on the same kernels:
   lt__att_src reads q, k, v at their own row strides (H·D, Hkv·D) and maps a query head to its
   kv head, so nothing is repeated or copied.  Backward: the G query heads of one kv head add into
   the same dk, dv, so the threads take units (b, kv head), each running its G heads in order
   (lt__att_bwd): no two threads add into one gradient and the sums keep one order (MQA, Hkv = 1,
   has B units).  Hkv = H is plain multi-head attention on separate q, k, v (lt_attention's numbers
   on fused qkv).  The record: lt_attention's B, T, C = H·D, H (LT__ATT_*), Hkv (LT__GQA_HKV),
   save[0] = L (B, H, T).
   attention_gqa16 (lt_set_precision 16-bit): as attention16, on q, k, v rounded to 16 bits, y
   rounded; for backward save[1] keeps q16 | k16 | v16 | y16 (eager, when q, k and v all hold 16-bit
   values already, lt__copy16: no copies, the float32 q, k, v and y are read in place, as
   attention16 does). */
#define LT__GQA_HKV(nd) ((nd)->i[4])   /* key/value heads */
static lt__att_src lt__gqa_src_of(const lt__node *nd, int bits16) {
    lt__att_src a;
    int64_t H = LT__ATT_H(nd), Hk = LT__GQA_HKV(nd), nq = nd->in[0]->n, nk = nd->in[1]->n;
    int w;
    memset(&a, 0, sizeof a);
    a.T = LT__ATT_T(nd); a.C = LT__ATT_C(nd); a.D = a.C / H; a.G = H / Hk;
    for (w = 0; w < 3; w++) a.f[w] = nd->in[w]->data;
    a.ld[0] = a.C; a.ld[1] = a.ld[2] = Hk * a.D;
    if (bits16) {
        a.p = LT__PREC(nd) == (double)LT_F16 ? LT_F16 : LT_BF16;
        a.h[0] = (const uint16_t *)(const void *)nd->save[1];
        if (a.h[0]) { a.h[1] = a.h[0] + nq; a.h[2] = a.h[1] + nk; a.y16 = a.h[2] + nk; }
        a.round = !(lt__exact16(nd->in[0], a.p) && lt__exact16(nd->in[1], a.p) && lt__exact16(nd->in[2], a.p));
    }
    a.simd = lt__att_simd();
    return a;
}
static void lt__gqa_bwd(lt__node *nd, lt__att_src *a) {
    int add[3], w;
    for (w = 0; w < 3; w++) a->g[w] = lt__grad_w(nd->in[w], nd->ctx, &add[w]);
    if (a->g[0] || a->g[1] || a->g[2]) lt__att_bwd(nd, a, add);
}
static void lt__attention_gqa_fwd(lt__node *nd) {
    lt__att_src a = lt__gqa_src_of(nd, 0);
    lt__att_fwd(nd, &a);
}
static void lt__attention_gqa_bwd(lt__node *nd) {
    lt__att_src a = lt__gqa_src_of(nd, 0);
    lt__gqa_bwd(nd, &a);
}
LTRAIN_DEF lt_tensor *lt_attention_gqa(lt_ctx *ctx, lt_tensor *q, lt_tensor *k, lt_tensor *v, int n_head, int n_kv_head,
                                       const int32_t *lengths) {
    int64_t B, T, C, D, b;
    char b1[64], b2[64], b3[64];
    lt__node *nd;
    size_t ln;
    int bits16, copies;
    if (!lt__live(ctx, "lt_attention_gqa", q, k)) return NULL;
    if (!v) return lt_set_error(ctx, LT_ERR_ARG, "lt_attention_gqa: v is NULL"), (lt_tensor *)NULL;
    bits16 = ctx->precision != LT_F32 && ctx->device == LT_CPU;   /* the CUDA kernel is float32 */
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3 || k->shape[0] != q->shape[0] || k->shape[1] != q->shape[1] ||
        v->shape[0] != k->shape[0] || v->shape[1] != k->shape[1] || v->shape[2] != k->shape[2]) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_attention_gqa: q is %s, k is %s, v is %s: they must be [B,T,H*D], "
                     "[B,T,Hkv*D], [B,T,Hkv*D]", lt_shape_str(q, b1, sizeof b1), lt_shape_str(k, b2, sizeof b2),
                     lt_shape_str(v, b3, sizeof b3));
        return NULL;
    }
    B = q->shape[0]; T = q->shape[1]; C = q->shape[2];
    if (n_head < 1 || n_kv_head < 1 || C % n_head != 0 || n_head % n_kv_head != 0 ||
        k->shape[2] != (int64_t)n_kv_head * (C / n_head)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_attention_gqa: q is %s, k is %s with %d heads and %d kv heads: the heads "
                     "must divide q's %lld channels, the kv heads the heads, and k must have kv heads x %lld channels",
                     lt_shape_str(q, b1, sizeof b1), lt_shape_str(k, b2, sizeof b2), n_head, n_kv_head, (long long)C,
                     n_head >= 1 ? (long long)(C / n_head) : 0LL);
        return NULL;
    }
    D = C / n_head;
    if (D > LT__ATT_TILE) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_attention_gqa: q is %s with %d heads: a head of %lld channels is more than "
                     "%d, the most the kernels handle (hint: use more heads)",
                     lt_shape_str(q, b1, sizeof b1), n_head, (long long)D, LT__ATT_TILE);
        return NULL;
    }
    if (lengths)
        for (b = 0; b < B; b++)
            if (lengths[b] < 0 || lengths[b] > T) {
                lt_set_error(ctx, LT_ERR_ARG, "lt_attention_gqa: lengths[%lld] is %d: it must be in [0,%lld]",
                             (long long)b, lengths[b], (long long)T);
                return NULL;
            }
    if (!lt_mul_size((size_t)(B * n_head), (size_t)T, &ln)) {
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_attention_gqa: B*H*T overflows");
        return NULL;
    }
    nd = lt__node_new(ctx, bits16 ? LT__OP(attention_gqa16) : LT__OP(attention_gqa), 3, q->shape, q, k, v, 0);
    if (!nd) return NULL;
    LT__ATT_B(nd) = B; LT__ATT_T(nd) = T; LT__ATT_C(nd) = C; LT__ATT_H(nd) = n_head; LT__GQA_HKV(nd) = n_kv_head;
    LT__PREC(nd) = (double)ctx->precision;
    if (!lt__save(ctx, nd, 0, (int64_t)ln)) return NULL;   /* L */
    copies = lt__copy16(ctx, q) || lt__copy16(ctx, k) || lt__copy16(ctx, v);
    if (bits16 && nd->out->requires_grad && copies && !lt__save(ctx, nd, 1, q->n + k->n))
        return NULL;   /* q, k, v, y: 16 bit (2·(q->n + k->n) halves) */
    if (lengths && !(lt__node_ids(ctx, nd, lengths, B))) return NULL;
    return lt__run(ctx, nd);
}

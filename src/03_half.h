/* ==== @@HALF  16-bit numbers: fp16/bf16 conversions (scalar reference, then SIMD) ============== */
/* Holds: float32 <-> fp16/bf16 conversions, one value and arrays, the scalar reference first and
   the SIMD versions after; rounding a float32 to a 16-bit precision; the CPU-feature probe.
   Calls: @@CORE. */

static uint32_t lt__f32_bits(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
static float lt__bits_f32(uint32_t u) { float x; memcpy(&x, &u, sizeof x); return x; }

/* ---- @@HALF.scalar  scalar conversions: the reference every kernel below is tested against --- */
/* torch 1.13: c10::BFloat16's round_to_nearest_even for numbers; ATen's vectorised CPU cast
   (cvtfp32_bf16) writes 0xFFFF for every NaN.  The NaN test comes first: u + 0x7FFF would wrap
   for negative NaNs. */
LTRAIN_DEF uint16_t lt_f32_to_bf16(float x) {
    uint32_t u = lt__f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFu;
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

LTRAIN_DEF float lt_bf16_to_f32(uint16_t h) { return lt__bits_f32((uint32_t)h << 16); }

/* As c10's fp16_ieee_from_fp32_value, in integers: the exponent is rebased from 127 to 15 and the
   13 (normal) or 14..24 (subnormal) dropped mantissa bits round to nearest even; a carry out of
   the mantissa moves up the exponent, up to inf. */
LTRAIN_DEF uint16_t lt_f32_to_f16(float x) {
    uint32_t u = lt__f32_bits(x), a = u & 0x7FFFFFFFu;
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);     /* NaN: quiet, payload dropped */
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);    /* >= 65520 (max 65504 + half ulp) */
    if (a >= 0x38800000u) {                                      /* >= 2^-14: normal */
        uint32_t r = a - ((127u - 15u) << 23);
        return (uint16_t)(sign | ((r + 0x0FFFu + ((r >> 13) & 1u)) >> 13));
    }
    if (a <= 0x33000000u) return sign;                           /* <= 2^-25 (a tie) -> 0 */
    {   /* subnormal: round(a's value / 2^-24); the mantissa with its implicit 1 is m·2^(e-150) */
        uint32_t e = a >> 23, m = (a & 0x007FFFFFu) | 0x00800000u, s = 126u - e; /* s in 14..24 */
        uint32_t q = m >> s, rem = m & ((1u << s) - 1u), half = 1u << (s - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;        /* q = 0x400 is 2^-14, encoded right */
        return (uint16_t)(sign | q);
    }
}

LTRAIN_DEF float lt_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu) return lt__bits_f32(sign | 0x7F800000u | (m ? 0x00400000u | (m << 13) : 0u));
    if (e) return lt__bits_f32(sign | ((e + 112u) << 23) | (m << 13));
    if (!m) return lt__bits_f32(sign);
    for (e = 113; !(m & 0x400u); e--) m <<= 1;                   /* subnormal m·2^-24: normalise */
    return lt__bits_f32(sign | (e << 23) | ((m & 0x3FFu) << 13));
}

/* Stochastic rounding: r uniform in [0, 2^16) added to the bits, then truncated (inf stays inf:
   0x7F800000 + r truncates to 0x7F80; the largest finite values may round up to inf). */
static uint16_t lt__bf16_sr(float x, uint32_t r) {
    uint32_t u = lt__f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFu;
    return (uint16_t)((u + r) >> 16);
}
LTRAIN_DEF uint16_t lt_f32_to_bf16_stochastic(float x, lt_rng *rng) {
    return lt__bf16_sr(x, (uint32_t)(lt_rng_u64(rng) >> 48));
}
LTRAIN_DEF void lt_f32_to_bf16_stochastic_array(const float *in, uint16_t *out, size_t n, lt_rng *rng) {
    size_t i;
    uint64_t r = 0;
    for (i = 0; i < n; i++) {
        if (i % 4 == 0) r = lt_rng_u64(rng);
        out[i] = lt__bf16_sr(in[i], (uint32_t)(r >> (48 - 16 * (i % 4))) & 0xFFFFu);
    }
}

/* ---- @@HALF.arrays  array kernels --------------------------------------------------------------- */
/* Four conversions (LT__CV_*) by up to four kernels (LT__K_*); lt__cv_run runs one pair and
   returns 0 when that kernel lacks that conversion, so the tests can hold every kernel the CPU
   has against the scalar loop. */
enum { LT__CV_TO_BF16 = 0, LT__CV_FROM_BF16, LT__CV_TO_F16, LT__CV_FROM_F16, LT__CV_COUNT };
enum { LT__K_SCALAR = 0, LT__K_AVX2, LT__K_AVX512, LT__K_AVX512BF16, LT__K_COUNT };

static void lt__to_bf16_scalar(const float *in, uint16_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = lt_f32_to_bf16(in[i]);
}
static void lt__from_bf16_scalar(const uint16_t *in, float *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = lt_bf16_to_f32(in[i]);
}
static void lt__to_f16_scalar(const float *in, uint16_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = lt_f32_to_f16(in[i]);
}
static void lt__from_f16_scalar(const uint16_t *in, float *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = lt_f16_to_f32(in[i]);
}

/* ---- fast paths: AVX2 / F16C and AVX-512, the scalar loops' bits ------------------------------ */
#ifdef LT__X86
#if defined(__GNUC__) && !defined(__clang__) && defined(__cplusplus)
/* g++ 12 warns about the AVX-512 headers' own _mm512_undefined_* (GCC bug 105593) where they
   are inlined, i.e. in the kernels below; the warning is off up to the end of the kernels. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define LT__AMP_POP_DIAGNOSTIC 1
#endif

/* bf16 rounding on 8 lanes of float bits, the scalar formula: lt__bf16_sum8 is u + 0x7FFF + the
   kept part's lowest bit, with a NaN lane (vcmpunordps: all ones) ORed in, so that its high half
   is the pattern (0xFFFF for a NaN); lt__bf16_round8 shifts it down, lt__bf16_round8_f32 (below)
   masks the low half off: 7 operations each (the NaN test in integers and a shift down and up
   again took 9 and 10) */
static inline LT__TARGET("avx2") __m256i lt__bf16_sum8(__m256i u) {
    __m256i r = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(u), _mm256_castsi256_ps(u), _CMP_UNORD_Q));
    return _mm256_or_si256(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), r), nan);
}
static inline LT__TARGET("avx2") __m256i lt__bf16_round8(__m256i u) { return _mm256_srli_epi32(lt__bf16_sum8(u), 16); }
static LT__TARGET("avx2") void lt__to_bf16_avx2(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = lt__bf16_round8(_mm256_loadu_si256((const __m256i *)(const void *)(in + i)));
        __m256i b = lt__bf16_round8(_mm256_loadu_si256((const __m256i *)(const void *)(in + i + 8)));
        /* packus interleaves 128-bit halves: a0-3 b0-3 a4-7 b4-7; the permute restores order */
        __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), p);
    }
    lt__to_bf16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx2") void lt__from_bf16_avx2(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(in + i)));
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm256_slli_epi32(h, 16));
    }
    lt__from_bf16_scalar(in + i, out + i, n - i);
}
/* vcvtps2ph rounds like the scalar code (imm 0: nearest even, not MXCSR) but keeps NaN payloads:
   blocks holding a NaN are redone by the scalar code. */
static LT__TARGET("avx2,f16c") void lt__to_f16_avx2(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(in + i);
        _mm_storeu_si128((__m128i *)(void *)(out + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) lt__to_f16_scalar(in + i, out + i, 8);
    }
    lt__to_f16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx2,f16c") void lt__from_f16_avx2(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(in + i))));
    lt__from_f16_scalar(in + i, out + i, n - i);
}
/* out = float(16 bit(in)) in registers, 8 at a time (lt__round16's path on AVX2 CPUs): bf16 by the
   integer formula kept as float32 bits (a NaN to 0xFFFF0000, as lt__round_bf16_avx512 below);
   fp16 through vcvtps2ph / vcvtph2ps, blocks holding a NaN redone by the scalar code (its
   canonical NaN).  One pass instead of a 16-bit array written and read back.  in == out allowed. */
/* 8 floats rounded to bf16 values, kept as float32 (the AVX2 twin of lt__bf16_round_f32) */
static inline LT__TARGET("avx2") __m256 lt__bf16_round8_f32(__m256i u) {
    return _mm256_castsi256_ps(_mm256_and_si256(lt__bf16_sum8(u), _mm256_set1_epi32((int)0xFFFF0000u)));
}
static LT__TARGET("avx2") void lt__round_bf16_avx2(const float *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, lt__bf16_round8_f32(_mm256_loadu_si256((const __m256i *)(const void *)(in + i))));
    for (; i < n; i++) out[i] = lt_bf16_to_f32(lt_f32_to_bf16(in[i]));
}
static LT__TARGET("avx2,f16c") void lt__round_f16_avx2(const float *in, float *out, size_t n) {
    size_t i = 0, j;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(in + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
            for (j = i; j < i + 8; j++) out[j] = lt_f16_to_f32(lt_f32_to_f16(in[j]));
        else
            _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)));
    }
    for (; i < n; i++) out[i] = lt_f16_to_f32(lt_f32_to_f16(in[i]));
}

/* The same on 16 lanes (lt__bf16_sum8's sum, a NaN lane set to all ones under its vcmpunordps
   mask): lt__bf16_round16 the patterns in the low halves, lt__bf16_round_f32 the rounded values
   kept as float32 bits (a NaN to 0xFFFF0000) */
static inline LT__TARGET("avx512f") __m512i lt__bf16_sum16(__m512i u) {
    __m512i r = _mm512_and_si512(_mm512_maskz_srli_epi32(LT__M16, u, 16), _mm512_set1_epi32(1));
    __mmask16 nan = _mm512_cmp_ps_mask(_mm512_castsi512_ps(u), _mm512_castsi512_ps(u), _CMP_UNORD_Q);
    return _mm512_mask_mov_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), r), nan,
                                 _mm512_set1_epi32(-1));
}
static inline LT__TARGET("avx512f") __m512i lt__bf16_round16(__m512i u) {
    return _mm512_maskz_srli_epi32(LT__M16, lt__bf16_sum16(u), 16);
}
static inline LT__TARGET("avx512f") __m512 lt__bf16_round_f32(__m512i u) {
    return _mm512_castsi512_ps(_mm512_and_si512(lt__bf16_sum16(u), _mm512_set1_epi32((int)0xFFFF0000u)));
}
/* 16 bf16 or fp16 values in a register widened to float32 (exactly: a shift, or vcvtph2ps) */
static inline LT__TARGET("avx512f") __m512 lt__widen16_lanes(lt_dtype p, __m256i h) {
    if (p == LT_F16) return _mm512_maskz_cvtph_ps(LT__M16, h);
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(LT__M16, _mm512_maskz_cvtepu16_epi32(LT__M16, h), 16));
}
/* the 16-bit values at h in the lanes of k (lanes 0.. up to n), zeros past them, in one register;
   a short run goes through a copy, so nothing past it is read */
static inline LT__TARGET("avx512f") __m256i lt__load16_lanes(const uint16_t *h, __mmask16 k) {
    uint16_t t[16] = {0};
    int i;
    if (k == LT__M16) return _mm256_loadu_si256((const __m256i *)(const void *)h);
    for (i = 0; i < 16; i++) if (k >> i & 1) t[i] = h[i];
    return _mm256_loadu_si256((const __m256i *)(const void *)t);
}
static LT__TARGET("avx512f") void lt__to_bf16_avx512(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i r = lt__bf16_round16(_mm512_loadu_si512((const void *)(in + i)));
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_cvtepi32_epi16(r));
    }
    lt__to_bf16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx512f") void lt__from_bf16_avx512(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i h = _mm512_maskz_cvtepu16_epi32(LT__M16, _mm256_loadu_si256((const __m256i *)(const void *)(in + i)));
        _mm512_storeu_si512((void *)(out + i), _mm512_maskz_slli_epi32(LT__M16, h, 16));
    }
    lt__from_bf16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx512f") void lt__to_f16_avx512(const float *in, uint16_t *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(in + i);
        _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_maskz_cvtps_ph(LT__M16, x, _MM_FROUND_TO_NEAREST_INT));
        if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q)) lt__to_f16_scalar(in + i, out + i, 16);
    }
    lt__to_f16_scalar(in + i, out + i, n - i);
}
static LT__TARGET("avx512f") void lt__from_f16_avx512(const uint16_t *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(LT__M16, _mm256_loadu_si256((const __m256i *)(const void *)(in + i))));
    lt__from_f16_scalar(in + i, out + i, n - i);
}
/* out = float(16 bit(in)) in registers (lt__round16's fast path): bf16 with the integer formula;
   fp16 through vcvtps2ph / vcvtph2ps, blocks holding a NaN redone by the scalar code (canonical
   NaN, as lt_f32_to_f16).  in == out allowed. */
static LT__TARGET("avx512f") void lt__round_bf16_avx512(const float *in, float *out, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i r = lt__bf16_round16(_mm512_loadu_si512((const void *)(in + i)));
        _mm512_storeu_si512((void *)(out + i), _mm512_maskz_slli_epi32(LT__M16, r, 16));
    }
    for (; i < n; i++) out[i] = lt_bf16_to_f32(lt_f32_to_bf16(in[i]));
}
static LT__TARGET("avx512f") void lt__round_f16_avx512(const float *in, float *out, size_t n) {
    size_t i = 0, j;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(in + i);
        if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q))
            for (j = i; j < i + 16; j++) out[j] = lt_f16_to_f32(lt_f32_to_f16(in[j]));
        else
            _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(LT__M16, _mm512_maskz_cvtps_ph(LT__M16, x, _MM_FROUND_TO_NEAREST_INT)));
    }
    for (; i < n; i++) out[i] = lt_f16_to_f32(lt_f32_to_f16(in[i]));
}
/* vcvtneps2bf16 rounds to nearest even but treats float32 subnormals as 0 (the formula can give a
   bf16 subnormal) and keeps NaN payloads and signs (0xFFFF here): blocks holding either take the
   integer formula. */
static LT__TARGET("avx512f,avx512bf16") void lt__to_bf16_avx512bf16(const float *in, uint16_t *out, size_t n) {
    const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    const __m512i one = _mm512_set1_epi32(1), max_sub = _mm512_set1_epi32(0x007FFFFF);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(in + i);
        __m512i a = _mm512_and_si512(_mm512_castps_si512(x), abs_mask);
        /* a - 1 < 0x7FFFFF (unsigned) exactly for the subnormals 1..0x7FFFFF */
        if (_mm512_cmpgt_epu32_mask(a, inf) | _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, one), max_sub)) {
            __m512i r = lt__bf16_round16(_mm512_castps_si512(x));
            _mm256_storeu_si256((__m256i *)(void *)(out + i), _mm512_cvtepi32_epi16(r));
        } else {
            __m256bh h = _mm512_cvtneps_pbh(x);
            memcpy(out + i, &h, sizeof h);
        }
    }
    lt__to_bf16_scalar(in + i, out + i, n - i);
}

#ifdef LT__AMP_POP_DIAGNOSTIC
#pragma GCC diagnostic pop
#undef LT__AMP_POP_DIAGNOSTIC
#endif
#endif /* LT__X86 */

/* Does this CPU (and OS) run kernel k (lt__cpu_has, @@CORE)? */
static int lt__k_available(int k) {
    switch (k) {
    case LT__K_SCALAR: return 1;
    case LT__K_AVX2: return lt__cpu_has(LT__CPU_AVX2 | LT__CPU_F16C);
    case LT__K_AVX512: return lt__cpu_has(LT__CPU_AVX512F);
    case LT__K_AVX512BF16: return lt__cpu_has(LT__CPU_AVX512F | LT__CPU_AVX512BF16);
    default: return 0;
    }
}

/* Run conversion cv with kernel k on n elements; 0 when k has no such kernel (nothing done). */
static int lt__cv_run(int cv, int k, const void *in, void *out, size_t n) {
    const float *f = (const float *)in;
    const uint16_t *h = (const uint16_t *)in;
    uint16_t *oh = (uint16_t *)out;
    float *of = (float *)out;
    switch (cv * LT__K_COUNT + k) {
    case LT__CV_TO_BF16 * LT__K_COUNT + LT__K_SCALAR: lt__to_bf16_scalar(f, oh, n); return 1;
    case LT__CV_FROM_BF16 * LT__K_COUNT + LT__K_SCALAR: lt__from_bf16_scalar(h, of, n); return 1;
    case LT__CV_TO_F16 * LT__K_COUNT + LT__K_SCALAR: lt__to_f16_scalar(f, oh, n); return 1;
    case LT__CV_FROM_F16 * LT__K_COUNT + LT__K_SCALAR: lt__from_f16_scalar(h, of, n); return 1;
#ifdef LT__X86
    case LT__CV_TO_BF16 * LT__K_COUNT + LT__K_AVX2: lt__to_bf16_avx2(f, oh, n); return 1;
    case LT__CV_FROM_BF16 * LT__K_COUNT + LT__K_AVX2: lt__from_bf16_avx2(h, of, n); return 1;
    case LT__CV_TO_F16 * LT__K_COUNT + LT__K_AVX2: lt__to_f16_avx2(f, oh, n); return 1;
    case LT__CV_FROM_F16 * LT__K_COUNT + LT__K_AVX2: lt__from_f16_avx2(h, of, n); return 1;
    case LT__CV_TO_BF16 * LT__K_COUNT + LT__K_AVX512: lt__to_bf16_avx512(f, oh, n); return 1;
    case LT__CV_FROM_BF16 * LT__K_COUNT + LT__K_AVX512: lt__from_bf16_avx512(h, of, n); return 1;
    case LT__CV_TO_F16 * LT__K_COUNT + LT__K_AVX512: lt__to_f16_avx512(f, oh, n); return 1;
    case LT__CV_FROM_F16 * LT__K_COUNT + LT__K_AVX512: lt__from_f16_avx512(h, of, n); return 1;
    case LT__CV_TO_BF16 * LT__K_COUNT + LT__K_AVX512BF16: lt__to_bf16_avx512bf16(f, oh, n); return 1;
#endif
    default: (void)f; (void)h; (void)oh; (void)of; return 0;
    }
}

/* The kernel the array functions use for cv: the first in this order that the CPU has and that
   has cv.  The order is their speed: each vector kernel is many times faster than the scalar
   loop, and AVX512_BF16's rounding instruction beats the integer formula (bench/precision.md).
   Picked once per process (with gcc/clang): the 16-bit kernels convert a few hundred values at a
   time, and asking again on each call was 0.3-0.4% of a bf16 step's time (bench/precision.md). */
static int lt__cv_pick(int cv) {
    static const int order[LT__K_COUNT] = {LT__K_AVX512BF16, LT__K_AVX512, LT__K_AVX2, LT__K_SCALAR};
    int i;
    for (i = 0; i < LT__K_COUNT; i++) {
        int k = order[i];
        if (k == LT__K_AVX512BF16 && cv != LT__CV_TO_BF16) continue;
        if (lt__k_available(k)) return k;
    }
    return LT__K_SCALAR;
}
static int lt__cv_kernel(int cv) {
#if defined(__GNUC__) || defined(__clang__)
    static int known[LT__CV_COUNT]; /* the kernel + 1; 0 until picked; written whole, atomically */
    int k = __atomic_load_n(&known[cv], __ATOMIC_RELAXED);
    if (k) return k - 1;
    k = lt__cv_pick(cv);
    __atomic_store_n(&known[cv], k + 1, __ATOMIC_RELAXED);
    return k;
#else
    return lt__cv_pick(cv);
#endif
}

/* The array conversions are split over the threads in blocks of LT__CV_BLOCK values, from four
   blocks (64 Ki values) up, each thread taking one run of blocks.  Most of a training step's
   conversions are 0.4-1.6 M values (gpt-mini's activations, the 16-bit copies backward reads):
   with blocks of 64 Ki from eight up, as until 2026-12-06, those of 393 Ki values ran on one
   thread (bench/precision.md has the times). */
#define LT__CV_BLOCK ((size_t)1 << 14)
static void lt__cv_array(int cv, const void *in, void *out, size_t n, size_t in_size, size_t out_size) {
    int k = lt__cv_kernel(cv);
    int64_t nb = (int64_t)((n + LT__CV_BLOCK - 1) / LT__CV_BLOCK), b;
    LT__OMP(parallel for schedule(static) if (nb >= 4))
    for (b = 0; b < nb; b++) {
        size_t lo = (size_t)b * LT__CV_BLOCK, m = n - lo < LT__CV_BLOCK ? n - lo : LT__CV_BLOCK;
        lt__cv_run(cv, k, (const char *)in + lo * in_size, (char *)out + lo * out_size, m);
    }
}
LTRAIN_DEF void lt_f32_to_bf16_array(const float *in, uint16_t *out, size_t n) {
    lt__cv_array(LT__CV_TO_BF16, in, out, n, sizeof *in, sizeof *out);
}
LTRAIN_DEF void lt_bf16_to_f32_array(const uint16_t *in, float *out, size_t n) {
    lt__cv_array(LT__CV_FROM_BF16, in, out, n, sizeof *in, sizeof *out);
}
LTRAIN_DEF void lt_f32_to_f16_array(const float *in, uint16_t *out, size_t n) {
    lt__cv_array(LT__CV_TO_F16, in, out, n, sizeof *in, sizeof *out);
}
LTRAIN_DEF void lt_f16_to_f32_array(const uint16_t *in, float *out, size_t n) {
    lt__cv_array(LT__CV_FROM_F16, in, out, n, sizeof *in, sizeof *out);
}
LTRAIN_DEF const char *lt_amp_kernel_name(void) {
    static const char *const names[LT__K_COUNT] = {
        "bf16 scalar, fp16 scalar", "bf16 avx2, fp16 f16c", "bf16 avx512f, fp16 avx512f",
        "bf16 avx512bf16, fp16 avx512f"};
    return names[lt__cv_kernel(LT__CV_TO_BF16)];
}

/* ---- @@HALF.precision  16-bit precision for training (lt_set_precision) ------------------------ */
LTRAIN_DEF lt_status lt_set_precision(lt_ctx *ctx, lt_dtype precision) {
    if (!ctx) return LT_ERR_ARG;
    if (precision != LT_F32 && precision != LT_BF16 && precision != LT_F16)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_set_precision: %d is not a precision (use LT_F32, LT_BF16 or "
                            "LT_F16)", (int)precision);
    ctx->precision = precision;
    return LT_OK;
}
LTRAIN_DEF lt_dtype lt_get_precision(const lt_ctx *ctx) { return ctx ? ctx->precision : LT_F32; }
LTRAIN_DEF const char *lt_precision_name(lt_dtype precision) {
    return precision == LT_BF16 ? "bf16" : precision == LT_F16 ? "fp16" : precision == LT_F32 ? "fp32" : "unknown";
}

/* For the 16-bit kernels (@@OPS: gelu16, layernorm16, linear_ce16, the GEMM's packing elsewhere)
   that convert pieces from inside their own parallel loops: these run on the calling thread only,
   with the fastest kernel the CPU has. */
static void lt__from16(lt_dtype p, const uint16_t *in, float *out, size_t n) {
    int cv = p == LT_F16 ? LT__CV_FROM_F16 : LT__CV_FROM_BF16;
    lt__cv_run(cv, lt__cv_kernel(cv), in, out, n);
}
static void lt__to16(lt_dtype p, const float *in, uint16_t *out, size_t n) {
    int cv = p == LT_F16 ? LT__CV_TO_F16 : LT__CV_TO_BF16;
    lt__cv_run(cv, lt__cv_kernel(cv), in, out, n);
}
/* The array conversion to precision p (bf16 or fp16), split over the threads as lt__cv_array:
   the 16-bit copies the ops keep of their float32 inputs */
static void lt__to16_array(lt_dtype p, const float *in, uint16_t *out, size_t n) {
    if (p == LT_F16) lt_f32_to_f16_array(in, out, n);
    else lt_f32_to_bf16_array(in, out, n);
}
/* y rounded to 16 bits in place, its 16-bit values kept in h (n values): one pass over memory,
   each piece of 4096 rounded into h and widened back from there while in L1 (the pieces threaded
   by blocks, as lt__cv_array) */
static void lt__round16_keep(lt_dtype p, float *y, uint16_t *h, size_t n) {
    int64_t nb = (int64_t)((n + LT__CV_BLOCK - 1) / LT__CV_BLOCK), b;
    LT__OMP(parallel for schedule(static) if (nb >= 4))
    for (b = 0; b < nb; b++) {
        size_t lo = (size_t)b * LT__CV_BLOCK, end = n - lo < LT__CV_BLOCK ? n : lo + LT__CV_BLOCK, i, m;
        for (i = lo; i < end; i += m) {
            m = end - i < 4096 ? end - i : 4096;
            lt__to16(p, y + i, h + i, m);
            lt__from16(p, h + i, y + i, m);
        }
    }
}
/* out = float(16 bit(in)) through a 16-bit staging buffer on the stack; in == out allowed. */
static void lt__round16(lt_dtype p, const float *in, float *out, size_t n) {
    uint16_t h[1024];
    int to = p == LT_F16 ? LT__CV_TO_F16 : LT__CV_TO_BF16, from = p == LT_F16 ? LT__CV_FROM_F16 : LT__CV_FROM_BF16;
    int kt = lt__cv_kernel(to), kf = lt__cv_kernel(from);
    size_t i, m;
    if (p != LT_BF16 && p != LT_F16) {
        if (in != out) memmove(out, in, n * sizeof(float));
        return;
    }
#ifdef LT__X86
    if (lt__k_available(LT__K_AVX512)) {
        if (p == LT_BF16) lt__round_bf16_avx512(in, out, n);
        else lt__round_f16_avx512(in, out, n);
        return;
    }
    if (lt__k_available(LT__K_AVX2)) {
        if (p == LT_BF16) lt__round_bf16_avx2(in, out, n);
        else lt__round_f16_avx2(in, out, n);
        return;
    }
#endif
    for (i = 0; i < n; i += m) {
        m = n - i < 1024 ? n - i : 1024;
        lt__cv_run(to, kt, in + i, h, m);
        lt__cv_run(from, kf, h, out + i, m);
    }
}
LTRAIN_DEF void lt_round_to_precision(lt_dtype precision, const float *in, float *out, size_t n) {
    int64_t nb = (int64_t)((n + LT__CV_BLOCK - 1) / LT__CV_BLOCK), b;
    LT__OMP(parallel for schedule(static) if (nb >= 4))
    for (b = 0; b < nb; b++) {
        size_t lo = (size_t)b * LT__CV_BLOCK, m = n - lo < LT__CV_BLOCK ? n - lo : LT__CV_BLOCK;
        lt__round16(precision, in + lo, out + lo, m);
    }
}


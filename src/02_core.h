/* =============================================================================================
   IMPLEMENTATION
   ============================================================================================= */
#ifdef LTRAIN_IMPLEMENTATION

/* ==== @@CORE  errors, allocator, arena, RNG, threads ======================================== */

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(LTRAIN_MALLOC) && defined(LTRAIN_REALLOC) && defined(LTRAIN_FREE)
#define LT__MALLOC(sz) LTRAIN_MALLOC(sz)
#define LT__REALLOC(p, sz) LTRAIN_REALLOC(p, sz)
#define LT__FREE(p) LTRAIN_FREE(p)
#elif !defined(LTRAIN_MALLOC) && !defined(LTRAIN_REALLOC) && !defined(LTRAIN_FREE)
#define LT__MALLOC(sz) malloc(sz)
#define LT__REALLOC(p, sz) realloc(p, sz)
#define LT__FREE(p) free(p)
#else
#error "ltrain.h: define all of LTRAIN_MALLOC, LTRAIN_REALLOC and LTRAIN_FREE, or none"
#endif

#ifdef LTRAIN_ASSERT
#define LT__ASSERT(x) LTRAIN_ASSERT(x)
#else
#include <assert.h>
#define LT__ASSERT(x) assert(x)
#endif

/* OpenMP pragmas through a macro, so that builds without -fopenmp see nothing (and no
   unknown-pragma warning): LT__OMP(parallel for) is "#pragma omp parallel for". */
#ifdef _OPENMP
#define LT__PRAGMA(x) _Pragma(#x)
#define LT__OMP(x) LT__PRAGMA(omp x)
#else
#define LT__OMP(x)
#endif

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- the CPU's features ------------------------------------------------------------------------
   Every op has a plain C kernel, the reference.  Where the compiler is GCC or Clang on x86
   (LT__X86) or AArch64 (LT__ARM) and LTRAIN_NO_SIMD is not defined, hand-written SIMD kernels are
   compiled beside it: on x86 each such function names the instructions it uses with
   LT__TARGET("avx2,fma"), LT__TARGET("avx512f"), ..., so the rest of the file needs no -m flags,
   and it runs only where lt__cpu_has says this CPU has them.  Advanced SIMD (NEON) is part of the
   AArch64 base architecture: every such CPU has it. */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(LTRAIN_NO_SIMD)
#define LT__X86 1
#include <cpuid.h>
#include <immintrin.h>
#define LT__TARGET(s) __attribute__((target(s)))
/* g++ 12 in C++ mode warns "used uninitialized" inside its own avx512fintrin.h for the unmasked
   shifts and conversions (they start from _mm512_undefined_*); their zero-masked forms with every
   lane selected (LT__M16) compute the same thing without the warning, so the header uses those. */
#define LT__M16 ((__mmask16)0xFFFF)
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__) && !defined(LTRAIN_NO_SIMD)
#define LT__ARM 1
#include <arm_neon.h>
#endif

/* The features the kernels ask for, as bits of one set. */
enum {
    LT__CPU_AVX2 = 1 << 0, LT__CPU_FMA = 1 << 1, LT__CPU_F16C = 1 << 2, LT__CPU_AVX512F = 1 << 3,
    LT__CPU_AVX512BW = 1 << 4, LT__CPU_AVX512VL = 1 << 5, LT__CPU_AVX512BF16 = 1 << 6, LT__CPU_NEON = 1 << 7,
    LT__CPU_PROBED = 1 << 8
};
#ifdef LT__X86
/* __builtin_cpu_supports checks that the OS saves the wider registers too; F16C and AVX512_BF16
   are read with cpuid (older clangs lack those builtin names), F16C only where AVX2 is (its
   registers are the ymm ones) and AVX512_BF16 only where AVX512F is. */
static unsigned lt__cpu_probe(void) {
    unsigned a = 0, b = 0, c = 0, d = 0, m = LT__CPU_PROBED;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        m |= LT__CPU_AVX2;
        if (__get_cpuid(1, &a, &b, &c, &d) && ((c >> 29) & 1u)) m |= LT__CPU_F16C;   /* CPUID.1:ECX bit 29 */
    }
    if (__builtin_cpu_supports("fma")) m |= LT__CPU_FMA;
    if (__builtin_cpu_supports("avx512f")) {
        m |= LT__CPU_AVX512F;
        if (__get_cpuid_max(0, NULL) >= 7) {
            __cpuid_count(7, 1, a, b, c, d);
            if ((a >> 5) & 1u) m |= LT__CPU_AVX512BF16;                              /* CPUID.(7,1):EAX bit 5 */
        }
    }
    if (__builtin_cpu_supports("avx512bw")) m |= LT__CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512vl")) m |= LT__CPU_AVX512VL;
    return m;
}
/* Does this CPU have every feature of `want` (LT__CPU_* bits)?  cpuid can take microseconds (it
   traps in a virtual machine), so the answer, a fact about the machine and the same for every
   caller, is kept after the first call. */
static int lt__cpu_has(unsigned want) {
    static unsigned known; /* 0 until probed; written whole, atomically */
    unsigned m = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!m) {
        m = lt__cpu_probe();
        __atomic_store_n(&known, m, __ATOMIC_RELAXED);
    }
    return (m & want) == want;
}
#elif defined(LT__ARM)
static int lt__cpu_has(unsigned want) { return (want & ~(unsigned)LT__CPU_NEON) == 0; }
#else
static int lt__cpu_has(unsigned want) { return want == 0; }
#endif

/* The arena: a list of big chunks, bump-allocated, 64-byte aligned.  Reset keeps the chunks,
   so after the first step a training loop allocates nothing. */
typedef struct lt__chunk {
    struct lt__chunk *next;
    size_t cap, used;
    unsigned char *mem;          /* 64-byte aligned start inside the allocation */
} lt__chunk;

typedef struct {
    lt__chunk *head;             /* chunk being filled */
    lt__chunk *first;
    size_t used, peak;           /* bytes handed out (for lt_arena_used / peak) */
} lt__arena;

struct lt_ctx {
    lt_status status;
    char msg[512];
    lt_rng rng;
    int training, grad_enabled;
    lt__arena arena;
    /* the tape: nodes in recording order, in the arena */
    lt__node **tape;
    int tape_len, tape_cap;
    int tape_done;               /* lt_backward ran: the next op resets the arena */
    void *grad_free;             /* lt_backward: dead activation gradients, for reuse (lt__grad_w) */
    /* parameters */
    lt_tensor **params;
    int n_params, cap_params;
    float *param_block;          /* after lt_params_pack: data of all params, then grads */
    size_t param_floats;
    const char *scope;           /* lt_scope: where in the model ops are being recorded */
    lt_dtype precision;          /* lt_set_precision: LT_F32, or the type matmuls compute in (@@AMP) */
    int profiling;               /* lt_set_profiling: time every kernel by op */
    double prof_s[2][64];        /* seconds in forward [0] / backward [1] kernels, by op row */
    int64_t prof_n[2][64];
    struct lt__capture *cap;     /* non-NULL while lt_compile records a step */
    int dry;                     /* lt_compile's recording pass: ops are recorded, kernels not run */
    lt_device device;            /* lt_set_device: where ops run (LT_CPU unless LTRAIN_CUDA chose LT_CUDA) */
    struct lt__cuda *cuda;       /* LT_CUDA: stream, cuBLAS, device arena, parameter mirror (@@CUDA) */
};

#ifdef LTRAIN_CUDA
/* The CUDA backend (@@CUDA) reaches into the sections above it only through these hooks; each
   call site tests ctx->device (or a tensor's) first, so an LT_CPU context never enters them. */
static void *lt__cu_alloc(lt_ctx *ctx, size_t bytes);                      /* device arena */
static void lt__cu_reset(lt_ctx *ctx);
static void lt__cu_destroy(lt_ctx *ctx);
static void lt__cu_fill_values(lt_ctx *ctx, float *dst, const float *src, size_t n); /* src NULL: zeros */
static float lt__cu_item(const lt_tensor *t);
static void lt__cu_ids(lt_ctx *ctx, lt__node *nd, const int32_t *ids, int64_t n); /* device copy of ids */
static lt_status lt__cu_seed(lt_ctx *ctx, lt_tensor *loss, float seed);   /* d(loss) += seed */
static void lt__cu_zero_grad(lt_ctx *ctx);
static const float *lt__cu_host_row(lt_ctx *ctx, const float *dev, size_t n);
#endif

#define LT__STATUS_TEXT(name, text) text,
static const char *const lt__status_text[] = {LT_STATUS_LIST(LT__STATUS_TEXT)};
#undef LT__STATUS_TEXT

LTRAIN_DEF const char *lt_status_name(lt_status s) {
    return (s >= 0 && s < LT_STATUS_COUNT) ? lt__status_text[s] : "unknown status";
}
LTRAIN_DEF int lt_failed(const lt_ctx *ctx) { return !ctx || ctx->status != LT_OK; }
LTRAIN_DEF lt_status lt_status_of(const lt_ctx *ctx) { return ctx ? ctx->status : LT_ERR_ARG; }
LTRAIN_DEF const char *lt_error(const lt_ctx *ctx) { return ctx ? ctx->msg : "no context"; }
LTRAIN_DEF void lt_clear_error(lt_ctx *ctx) {
    if (ctx) { ctx->status = LT_OK; ctx->msg[0] = 0; }
}

/* The first error sticks: later ones are dropped so the message names the root cause. */
LTRAIN_DEF lt_status lt_set_error(lt_ctx *ctx, lt_status s, const char *fmt, ...) {
    va_list ap;
    if (!ctx) return s;
    if (ctx->status != LT_OK) return ctx->status;
    ctx->status = s;
    va_start(ap, fmt);
    vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
    va_end(ap);
    return s;
}

LTRAIN_DEF int lt_mul_size(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}
LTRAIN_DEF int lt_add_size(size_t a, size_t b, size_t *out) {
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}

static char *lt__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = (char *)LT__MALLOC(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* -- threads: the one global setting ---------------------------------------------------------- */
LTRAIN_DEF void lt_set_threads(int n) {
#ifdef _OPENMP
    if (n > 0) omp_set_num_threads(n);
#else
    (void)n;
#endif
}
LTRAIN_DEF int lt_get_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* -- RNG: xoshiro256** seeded through splitmix64 ------------------------------------------------ */
static uint64_t lt__splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
LTRAIN_DEF void lt_rng_seed(lt_rng *r, uint64_t seed) {
    int i;
    for (i = 0; i < 4; i++) r->s[i] = lt__splitmix64(&seed);
}
static uint64_t lt__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
LTRAIN_DEF uint64_t lt_rng_u64(lt_rng *r) {
    uint64_t *s = r->s, out = lt__rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = lt__rotl(s[3], 45);
    return out;
}
/* 53 random bits -> a double in [0,1) */
LTRAIN_DEF double lt_rng_uniform(lt_rng *r) { return (double)(lt_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }
/* Box-Muller; one draw per call keeps the state a plain 4 words (no cached second value). */
LTRAIN_DEF double lt_rng_normal(lt_rng *r) {
    double u1 = 1.0 - lt_rng_uniform(r), u2 = lt_rng_uniform(r); /* u1 in (0,1] */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
LTRAIN_DEF lt_rng *lt_ctx_rng(lt_ctx *ctx) { return &ctx->rng; }

/* -- arena -------------------------------------------------------------------------------------- */
#define LT__ALIGN 64
#define LT__CHUNK_MIN ((size_t)16 << 20)

static void *lt__arena_alloc(lt_ctx *ctx, size_t bytes) {
    lt__arena *a = &ctx->arena;
    lt__chunk *c;
    size_t need;
    if (!lt_add_size(bytes, LT__ALIGN - 1, &need)) goto oom;
    need &= ~(size_t)(LT__ALIGN - 1);
    if (need == 0) need = LT__ALIGN;
    /* use the current chunk, or a later one kept from an earlier step (those are empty) */
    for (c = a->head; c; c = c->next) {
        if (c->cap - c->used >= need) {
            void *p = c->mem + c->used;
            c->used += need;
            a->head = c;
            a->used += need;
            if (a->used > a->peak) a->peak = a->used;
            return p;
        }
    }
    {
        size_t cap = need > LT__CHUNK_MIN ? need : LT__CHUNK_MIN, total;
        unsigned char *raw;
        if (!lt_add_size(cap, sizeof(lt__chunk) + LT__ALIGN, &total)) goto oom;
        raw = (unsigned char *)LT__MALLOC(total);
        if (!raw) goto oom;
        c = (lt__chunk *)raw;
        c->mem = raw + sizeof(lt__chunk);
        c->mem += (LT__ALIGN - ((uintptr_t)c->mem % LT__ALIGN)) % LT__ALIGN;
        c->cap = cap; c->used = need; c->next = NULL;
        /* append at the end of the list so reset reuses chunks in order */
        if (!a->first) a->first = c;
        else { lt__chunk *t = a->first; while (t->next) t = t->next; t->next = c; }
        a->head = c;
        a->used += need;
        if (a->used > a->peak) a->peak = a->used;
        return c->mem;
    }
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "out of memory: the arena could not grow by %zu bytes "
                 "(hint: a smaller batch or sequence length needs less)", bytes);
    return NULL;
}

static void lt__arena_reset(lt__arena *a) {
    lt__chunk *c;
    for (c = a->first; c; c = c->next) c->used = 0;
    a->head = a->first;
    a->used = 0;
}

static void lt__arena_free(lt__arena *a) {
    lt__chunk *c = a->first;
    while (c) { lt__chunk *n = c->next; LT__FREE(c); c = n; }
    a->first = a->head = NULL;
    a->used = 0;
}

LTRAIN_DEF size_t lt_arena_used(const lt_ctx *ctx) { return ctx->arena.used; }
LTRAIN_DEF size_t lt_arena_peak(const lt_ctx *ctx) { return ctx->arena.peak; }

/* -- context -------------------------------------------------------------------------------------- */
LTRAIN_DEF lt_ctx *lt_ctx_create(uint64_t seed) {
    lt_ctx *ctx = (lt_ctx *)LT__MALLOC(sizeof(lt_ctx));
    if (!ctx) return NULL;
    memset(ctx, 0, sizeof *ctx);
    lt_rng_seed(&ctx->rng, seed);
    ctx->training = 1;
    ctx->grad_enabled = 1;
    return ctx;
}

LTRAIN_DEF void lt_set_training(lt_ctx *ctx, int on) { ctx->training = on != 0; }
/* Wall-clock seconds (omp_get_wtime with OpenMP, else processor time: C99 has no wall clock). */
static double lt__now(void) {
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

LTRAIN_DEF const char *lt_scope(lt_ctx *ctx, const char *scope) {
    const char *old = ctx->scope;
    ctx->scope = scope;
    return old;
}
LTRAIN_DEF void lt_set_grad_enabled(lt_ctx *ctx, int on) { ctx->grad_enabled = on != 0; }

/* Drop the tape and all arena memory; parameter gradients stay. */
LTRAIN_DEF void lt_reset(lt_ctx *ctx) {
    lt__arena_reset(&ctx->arena);
#ifdef LTRAIN_CUDA
    if (ctx->cuda) lt__cu_reset(ctx);
#endif
    ctx->tape_len = 0;
    ctx->tape_done = 0;
    ctx->grad_free = NULL;
}


/* =============================================================================================
   IMPLEMENTATION
   ============================================================================================= */
#ifdef LTRAIN_IMPLEMENTATION

/* ==== @@CORE  errors, allocator, arena, RNG, threads ======================================== */
/* Holds: the context, status codes and errors, the allocator, the arena, the RNG, threads,
   overflow-checked sizes, timing.
   Calls: the C library only; the device through ctx->dev. */

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
/* Floating-point contraction off for the implementation: clang's default, and gcc's in its GNU
   modes (gcc's default, and the README's plain `cc -O2` line) and in C++ whatever the -std
   (only -std=c99/c11 turn it off), fuse a·b + c into an FMA, within one C expression (clang) or
   across statements and intrinsics (gcc), so a plain C loop would no longer give the bits its
   vector path gives, nor a fused epilogue the product's then the epilogue's (built that way the
   suite failed 16 such tests).  clang takes the standard pragma; gcc ignores it and takes its
   own, which sets the option for each function that follows (where it is off already, nothing
   changes).  Back to the command line's setting at the end of the implementation (DEFAULT,
   pop_options). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#define LT__GCC_CONTRACT_OFF 1
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

/* LT__UNROLL4: unroll the loop that follows 4 times (GCC 8+ and Clang; nothing elsewhere).  The
   GEMM's micro-kernels use it on their k loops, whose own adds, compare and branch then take a
   quarter of the issue slots, slots they would share with the FMAs; attention's block kernel
   (lt__att_tile_avx512) likewise (bench/design.md). */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define LT__UNROLL4 _Pragma("GCC unroll 4")
#else
#define LT__UNROLL4
#endif

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- @@CORE.cpu  the CPU's features --------------------------------------------------------------
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
/* LT__AMX: the AMX tile kernel for bf16 products (@@GEMM.amx) is compiled: x86-64 Linux (the OS
   must be asked for the tile registers, a Linux system call) and a compiler that knows the
   instructions (GCC 11, Clang 12 and later). */
#if defined(__x86_64__) && defined(__linux__) && \
    ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && __GNUC__ >= 11))
#define LT__AMX 1
#endif
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__) && !defined(LTRAIN_NO_SIMD)
#define LT__ARM 1
#include <arm_neon.h>
#endif

/* The features the kernels ask for, as bits of one set. */
enum {
    LT__CPU_AVX2 = 1 << 0, LT__CPU_FMA = 1 << 1, LT__CPU_F16C = 1 << 2, LT__CPU_AVX512F = 1 << 3,
    LT__CPU_AVX512BW = 1 << 4, LT__CPU_AVX512VL = 1 << 5, LT__CPU_AVX512BF16 = 1 << 6, LT__CPU_NEON = 1 << 7,
    LT__CPU_PROBED = 1 << 8, LT__CPU_AMD = 1 << 9,  /* AMD: a fact about the maker, for kernel choices */
    LT__CPU_AMX = 1 << 10   /* AMX-TILE and AMX-BF16 (the OS's consent is asked apart: lt__amx_ready) */
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
            __cpuid_count(7, 0, a, b, c, d);
            if (((d >> 22) & 1u) && ((d >> 24) & 1u)) m |= LT__CPU_AMX;   /* CPUID.(7,0):EDX bits 22, 24 */
        }
    }
    __cpuid(0, a, b, c, d);
    if (b == 0x68747541u) m |= LT__CPU_AMD;   /* "Auth"enticAMD */
    if (__builtin_cpu_supports("avx512bw")) m |= LT__CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512vl")) m |= LT__CPU_AVX512VL;
    return m;
}
/* The features named in a comma-separated list such as LT_CPU_OFF's "avx512_bf16,f16c" (unknown
   names are ignored): a user or a benchmark turns them off to run, on one machine, the kernels
   another kind of CPU would get (a CPU without AVX512_BF16, an AVX2-only one). */
static unsigned lt__cpu_named(const char *list) {
    static const struct { const char *name; unsigned bit; } names[] = {
        {"avx2", LT__CPU_AVX2}, {"fma", LT__CPU_FMA}, {"f16c", LT__CPU_F16C}, {"avx512f", LT__CPU_AVX512F},
        {"avx512bw", LT__CPU_AVX512BW}, {"avx512vl", LT__CPU_AVX512VL}, {"avx512_bf16", LT__CPU_AVX512BF16},
        {"amx", LT__CPU_AMX}};
    unsigned m = 0;
    size_t i, n;
    while (list && *list) {
        n = strcspn(list, ",");
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && strncmp(list, names[i].name, n) == 0) m |= names[i].bit;
        list += n + (list[n] == ',');
    }
    return m;
}
/* Does this CPU have every feature of `want` (LT__CPU_* bits)?  cpuid can take microseconds (it
   traps in a virtual machine), so the answer, a fact about the machine and the same for every
   caller, is kept after the first call; features LT_CPU_OFF names count as absent.  AVX-512
   without AVX2 is not a CPU that exists: turning AVX2 off turns AVX-512 off too, and
   turning off AVX-512 or a part of it turns off AMX (its packing runs on them).  The first call
   probes (lt__cpu_first, out of line); the others are a load and a test that inline where the
   packers ask per row (bench/precision.md). */
static unsigned lt__cpu_known; /* 0 until probed; written whole, atomically */
__attribute__((noinline)) static unsigned lt__cpu_first(void) {
    unsigned off = lt__cpu_named(getenv("LT_CPU_OFF")), m;
    if (off & (LT__CPU_AVX2 | LT__CPU_FMA)) off |= LT__CPU_AVX512F;
    if (off & LT__CPU_AVX512F) off |= LT__CPU_AVX512BW | LT__CPU_AVX512VL | LT__CPU_AVX512BF16;
    if (off & (LT__CPU_AVX512BW | LT__CPU_AVX512VL | LT__CPU_AVX512BF16)) off |= LT__CPU_AMX;   /* (its packing) */
    m = lt__cpu_probe() & ~off;
    __atomic_store_n(&lt__cpu_known, m, __ATOMIC_RELAXED);
    return m;
}
static inline int lt__cpu_has(unsigned want) {
    unsigned m = __atomic_load_n(&lt__cpu_known, __ATOMIC_RELAXED);
    if (!m) m = lt__cpu_first();
    return (m & want) == want;
}
/* Bytes of the cache at `level` (1: L1 data, 2: L2, 3: L3, shared by several cores) as cpuid
   describes it: the cache descriptors of leaf 4 (Intel) or 0x8000001D (AMD) give ways x partitions
   x line x sets of each cache; 0 where the CPU does not say (the caller keeps its defaults).  Kept
   after the first call. */
static int64_t lt__cpu_cache(int level) {
    static int64_t known[4] = {-1, -1, -1, -1};   /* -1: not asked yet; written whole */
    int64_t v;
    if (level < 1 || level > 3) return 0;
    v = __atomic_load_n(&known[level], __ATOMIC_RELAXED);
    if (v < 0) {
        unsigned a = 0, b = 0, c = 0, d = 0, leaf = 4, i;
        if (lt__cpu_has(LT__CPU_AMD)) {
            __cpuid(0x80000000u, a, b, c, d);
            leaf = a >= 0x8000001Du ? 0x8000001Du : 0;
        } else if (__get_cpuid_max(0, NULL) < 4) leaf = 0;
        v = 0;
        for (i = 0; leaf && i < 16; i++) {
            __cpuid_count(leaf, i, a, b, c, d);
            if ((a & 31u) == 0) break;                                      /* no more caches */
            if ((a & 31u) != 2 && ((a >> 5) & 7u) == (unsigned)level)       /* data or unified */
                v = (int64_t)((b >> 22) + 1) * (((b >> 12) & 1023u) + 1) * ((b & 4095u) + 1) * ((int64_t)c + 1);
        }
        __atomic_store_n(&known[level], v, __ATOMIC_RELAXED);
    }
    return v;
}
#elif defined(LT__ARM)
static int lt__cpu_has(unsigned want) { return (want & ~(unsigned)LT__CPU_NEON) == 0; }
static int64_t lt__cpu_cache(int level) { (void)level; return 0; }
#else
static int lt__cpu_has(unsigned want) { return want == 0; }
static int64_t lt__cpu_cache(int level) { (void)level; return 0; }
#endif

/* The kernel sets (the GEMM's micro-kernels, @@GEMM, and the ops' SIMD kernels of the same
   instructions, @@OPS): the best one this CPU runs, or the one LT_GEMM names. */
enum { LT__GEMM_PORTABLE = 0, LT__GEMM_AVX2 = 1, LT__GEMM_AVX512 = 2, LT__GEMM_NEON = 3, LT__GEMM_NKERNELS = 4 };
/* Does this CPU run kernel set id (the GEMM's micro-kernel, @@GEMM, and the ops' kernels of the
   same instructions)? */
static int lt__gemm_supported(int id) {
    if (id == LT__GEMM_PORTABLE) return 1;
#ifdef LT__X86
    if (id == LT__GEMM_AVX2) return lt__cpu_has(LT__CPU_AVX2 | LT__CPU_FMA);
    if (id == LT__GEMM_AVX512) return lt__cpu_has(LT__CPU_AVX512F | LT__CPU_AVX2);
#endif
#ifdef LT__ARM
    if (id == LT__GEMM_NEON) return lt__cpu_has(LT__CPU_NEON);
#endif
    return 0;
}

/* The best kernel this CPU runs, or the one LT_GEMM names (when this CPU runs it). */
static int lt__gemm_pick(void) {
    const char *e = getenv("LT_GEMM");
    int id;
    if (e) {
        id = strcmp(e, "portable") == 0 ? LT__GEMM_PORTABLE : strcmp(e, "avx2") == 0 ? LT__GEMM_AVX2
           : strcmp(e, "avx512") == 0 ? LT__GEMM_AVX512 : strcmp(e, "neon") == 0 ? LT__GEMM_NEON : -1;
        if (id >= 0 && lt__gemm_supported(id)) return id;
    }
    for (id = LT__GEMM_NKERNELS - 1; id > 0; id--)
        if (lt__gemm_supported(id)) return id;
    return LT__GEMM_PORTABLE;
}

/* ---- @@CORE.arena  the arena ----------------------------------------------------------------- */
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

/* lt_compile's recording (@@COMPILE) as a seam: while it records a step, ctx->cap_hooks points at
   its two recorders, so the parts above it record without naming it (NULL otherwise: one test). */
typedef struct lt__capture_hooks {
    void (*input)(lt_ctx *ctx, lt_tensor *t, const float *src);  /* lt_tensor_new / lt_tensor_from made t */
    void (*node)(lt_ctx *ctx, lt__node *nd);                      /* lt__run ran op nd */
} lt__capture_hooks;

/* A recompute segment (lt_recompute_begin .. lt_recompute_end, @@TAPE): the ops run inside it
   are ctx->seg_nodes[first .. first+n-1]; the values they made (all but out's) are dropped at its
   end and made again by running their forward kernels once more in backward (eager: into the
   scratch arena, from the RNG state it began with). */
typedef struct lt__seg {
    int first, n;                /* its ops in ctx->seg_nodes */
    int tape_first, tape_end;    /* its records on the tape: tape[tape_first .. tape_end-1] */
    lt_rng rng;                  /* the RNG when it began: dropout draws the same masks again */
    lt_tensor *out;              /* the value kept (NULL until it ends) */
    size_t scratch_bytes;        /* values it made in the scratch arena (eager) */
} lt__seg;

struct lt_ctx {
    lt_status status;
    char msg[512];
    lt_rng rng;
    int training, grad_enabled;
    lt__arena arena;
    unsigned gen;                /* the arena's generation: lt_reset adds one (stale tensors, lt__usable) */
    /* the tape: nodes in recording order, in the arena */
    lt__node **tape;
    int tape_len, tape_cap;
    int tape_done;               /* lt_backward ran: the next op resets the arena */
    void *grad_free;             /* lt_backward: dead activation gradients, for reuse (lt__grad_w) */
    /* parameters */
    lt_tensor **params;
    int n_params, cap_params;
    int grads_unset;             /* lt_zero_grad_lazy marked parameter gradients unset: lt__grads_settle */
    float *param_block;          /* after lt_params_pack: data of all params, then grads */
    size_t param_floats;
    const char *scope;           /* lt_scope: where in the model ops are being recorded */
    lt_dtype precision;          /* lt_set_precision: LT_F32, or the type matmuls compute in (@@AMP) */
    int profiling;               /* lt_set_profiling: time every kernel by op */
    double prof_s[2][64];        /* seconds in forward [0] / backward [1] kernels, by op row */
    int64_t prof_n[2][64];
    struct lt__capture *cap;     /* non-NULL while lt_compile records a step */
    const lt__capture_hooks *cap_hooks; /* ... and then its recorders (@@COMPILE) */
    int dry;                     /* lt_compile's recording pass: ops are recorded, kernels not run */
    lt_device device;            /* lt_set_device: where ops run (LT_CPU unless LTRAIN_CUDA chose LT_CUDA) */
    const struct lt__device *dev;/* the device's table (NULL on LT_CPU): the device seam below */
    struct lt__cuda *cuda;       /* LT_CUDA: stream, cuBLAS, device arena, parameter mirror (@@CUDA) */
    /* recompute segments (@@TAPE) */
    lt__seg *segs;
    int n_segs, cap_segs;
    int seg_open;                /* a segment is open (the last of segs) */
    lt__node **seg_nodes;        /* the ops run inside segments, in order */
    float **seg_data;            /* ... their outputs' values while dropped (NULL in the tensor) */
    int n_seg_nodes, cap_seg_nodes;
    lt__arena scratch;           /* eager, on the CPU: the values made inside the open segment */
    int to_scratch;              /* values go to the scratch arena (inside a segment, eager) */
    size_t budget;               /* lt_set_memory_budget: the planned block's bytes at most (0: none) ... */
    double budget_frac;          /* ... or this fraction of the plan without recomputation (0: none) */
    unsigned char *work;         /* scratch a kernel borrows for one call (lt__ctx_work), kept between calls */
    size_t work_bytes;
};

/* ---- @@CORE.device  the device seam ------------------------------------------------------- */
/* The device seam: what a backend that runs ops away from the host provides, one table of
   functions.  The CPU is the absence of a device: an LT_CPU context has ctx->dev NULL and every
   call below is skipped (the host code after it is the reference).  lt_set_device installs a
   backend's table in ctx->dev (and in lt__devices, for the calls that only have a tensor);
   from then on the CPU parts call ctx->dev->fn where a device does the work.  @@CUDA fills the
   one backend there is (lt__cuda_device); another plugs in here with a table of its own.
   A plan keeps the table of the device that recorded its graph (lt_plan.graph_dev), an
   optimizer that of its device state (lt_optim.dev), since either may outlive the context's
   device. */
typedef void (*lt__kernel)(lt__node *nd);
typedef struct lt__device {
    const char *name;
    /* the context's device state */
    void (*destroy)(lt_ctx *ctx);                            /* free it all (lt_ctx_destroy) */
    void (*reset)(lt_ctx *ctx);                              /* with the arena (lt_reset) */
    void (*synchronize)(lt_ctx *ctx);                        /* wait for queued work; its errors */
    const char *(*describe)(lt_ctx *ctx);
    size_t (*arena_bytes)(const lt_ctx *ctx);
    void (*set_tf32)(lt_ctx *ctx, int on);
    /* values: a device address in t->data / t->grad */
    void *(*alloc)(lt_ctx *ctx, size_t bytes);               /* the device arena */
    void (*fill_values)(lt_ctx *ctx, float *dst, const float *src, size_t n); /* src (host) or zeros */
    void (*fill)(lt_tensor *t, float v);                     /* lt_fill */
    float (*item)(const lt_tensor *t);                       /* one value back to the host */
    lt_status (*read)(lt_ctx *ctx, const lt_tensor *t, int grad, float *out);  /* lt_tensor_read */
    const float *(*host_row)(lt_ctx *ctx, const float *dev, size_t n);          /* n values to the host */
    /* parameters: host copies and the device's */
    void (*sync_params)(lt_ctx *ctx);                        /* the device's values to the host copies */
    void (*params_changed)(lt_ctx *ctx);                     /* the host copies were written */
    /* ops and the tape */
    const lt__kernel *op_fwd, *op_bwd;                       /* by row of the op table (@@OPS) */
    void (*ids)(lt_ctx *ctx, lt__node *nd, const int32_t *ids, int64_t n);     /* nd->ids_dev */
    lt_status (*seed)(lt_ctx *ctx, lt_tensor *loss, float seed);              /* d(loss) += seed */
    void (*zero_grad)(lt_ctx *ctx);
    /* optimizer, clipping, loss scaling */
    lt_status (*optim_step)(lt_optim *opt, double lr);
    void (*optim_pull)(lt_optim *opt);                       /* the state back to the host */
    void (*optim_free)(lt_optim *opt);
    double (*clip)(lt_ctx *ctx, lt_paramset ps, double limit, int mode);       /* 0 norm, 1 clip norm, 2 clip value */
    int (*unscale)(lt_ctx *ctx, lt_paramset ps, float inv);                    /* 1: an inf/NaN was seen */
    /* the compile mode: the step recorded as the device's graph */
    lt_plan *(*compile)(lt_ctx *ctx, lt_plan *p);
    lt_status (*graph_run)(lt_plan *p, float seed, float *loss);
    void (*graph_free)(lt_plan *p);
} lt__device;
/* The table of each device lt_set_device has installed, by lt_device (LT_CPU: NULL).  A tensor
   is on a device only after that, so lt_item and lt_fill find its table here. */
static const lt__device *lt__devices[LT_NDEVICES];

#define LT__STATUS_TEXT(name, text) text,
static const char *const lt__status_text[] = {LT_STATUS_LIST(LT__STATUS_TEXT)};
#undef LT__STATUS_TEXT

/* ---- @@CORE.errors  errors and overflow-checked sizes ---------------------------------------- */
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
    if (!out) return 0;
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}
LTRAIN_DEF int lt_add_size(size_t a, size_t b, size_t *out) {
    if (!out) return 0;
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

/* ---- @@CORE.utf8  UTF-8: the one validator ----------------------------------------------------
   UTF-8 as RFC 3629 defines it: a scalar value U+0000..U+10FFFF in its shortest form.
     U+0000..U+007F      0xxxxxxx
     U+0080..U+07FF      110xxxxx 10xxxxxx                    lead C2..DF (C0, C1: overlong)
     U+0800..U+FFFF      1110xxxx 10xxxxxx 10xxxxxx           after E0 the second byte is A0..BF
                                                              (lower: overlong); after ED 80..9F
                                                              (higher: the surrogates D800..DFFF)
     U+10000..U+10FFFF   11110xxx 10xxxxxx 10xxxxxx 10xxxxxx  after F0 90..BF (lower: overlong);
                                                              after F4 80..8F (higher: past U+10FFFF)
   Leads F5..FF and stray continuation bytes (80..BF) start nothing. */

/* The valid sequence at s[0..n) (n >= 1): its length (1..4) with its code point in *cp (when cp is
   not NULL), or 0 when s does not start one (a bad lead, a bad or missing continuation byte). */
static int lt__utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    uint32_t v;
    int len, k;
    if (c < 0x80) { if (cp) *cp = c; return 1; }
    if (c >= 0xC2 && c <= 0xDF) { len = 2; v = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; v = c & 0x0F; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; v = c & 0x07; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
    else return 0;
    if (n < (size_t)len || s[1] < lo || s[1] > hi) return 0;
    for (k = 1; k < len; k++) {
        if (s[k] < 0x80 || s[k] > 0xBF) return 0;
        v = (v << 6) | (s[k] & 0x3F);
    }
    if (cp) *cp = v;
    return len;
}

/* The offset of the first byte of s[0..n) that starts no valid sequence, or n when all of it is UTF-8. */
static size_t lt__utf8_bad_at(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int k = lt__utf8_next(s + i, n - i, NULL);
        if (!k) return i;
        i += (size_t)k;
    }
    return n;
}

/* -- @@CORE.threads  threads: the one global setting ------------------------------------------ */
#ifdef _OPENMP
static int lt__threads_chosen;   /* lt_set_threads was called: the count is the caller's from then on */
#endif

LTRAIN_DEF void lt_set_threads(int n) {
#ifdef _OPENMP
    if (n > 0) { omp_set_num_threads(n); lt__threads_chosen = 1; }
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

/* Busy machines.  OpenMP threads wait for each other by spinning (libgomp: some 3 ms before they
   sleep; OMP_WAIT_POLICY and GOMP_SPINCOUNT change that, but the runtime reads them once, when it
   loads, and has no call to change it later, so a library cannot).  With one thread per core while
   other programs keep some cores busy, every barrier waits for a thread the scheduler has set
   aside while the others spin on cores the other programs need: a step takes several times as
   long.  So lt_ctx_create counts the cores other work keeps busy, the smaller of the runnable
   threads now (/proc/stat's procs_running, less this one) and the 1-minute load average rounded
   (both must see the work: a moment's blip or a finished job does not count), and runs on the cores
   left, at least one, while neither OMP_NUM_THREADS nor lt_set_threads chose a count and
   LTRAIN_BUSY=ignore is not in the environment.  Without /proc (not Linux) nothing changes. */
#ifdef _OPENMP
static int lt__proc_number(const char *path, const char *key, double *out) {
    char line[256];
    size_t klen = strlen(key);
    int found = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0) found = sscanf(line + klen, "%lf", out) == 1;
    fclose(f);
    return found;
}
/* The threads for procs cores when `running` threads are runnable (this one included) and the
   1-minute load average is `load`. */
static int lt__threads_for(int procs, double running, double load) {
    double others = running - 1 < load + 0.5 ? running - 1 : load + 0.5;
    int n = procs - (others >= 1 ? (int)others : 0);
    return n >= 1 ? n : 1;
}
static void lt__threads_for_load(void) {
    const char *e = getenv("LTRAIN_BUSY");
    double running, load;
    if (lt__threads_chosen || getenv("OMP_NUM_THREADS") || (e && strcmp(e, "ignore") == 0)) return;
    if (!lt__proc_number("/proc/stat", "procs_running", &running) || !lt__proc_number("/proc/loadavg", "", &load))
        return;
    omp_set_num_threads(lt__threads_for(omp_get_num_procs(), running, load));
}
#else
static void lt__threads_for_load(void) {}
#endif

/* -- @@CORE.rng  RNG: xoshiro256** seeded through splitmix64 ------------------------------------ */
static uint64_t lt__splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
LTRAIN_DEF void lt_rng_seed(lt_rng *r, uint64_t seed) {
    int i;
    if (!r) return;
    for (i = 0; i < 4; i++) r->s[i] = lt__splitmix64(&seed);
}
static uint64_t lt__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
LTRAIN_DEF uint64_t lt_rng_u64(lt_rng *r) {
    uint64_t *s, out, t;
    if (!r) return 0;            /* (then uniform draws 0 and normal 0) */
    s = r->s; out = lt__rotl(s[1] * 5, 7) * 9; t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = lt__rotl(s[3], 45);
    return out;
}
/* 53 random bits -> a double in [0,1) */
static double lt__u53(uint64_t w) { return (double)(w >> 11) * (1.0 / 9007199254740992.0); }
LTRAIN_DEF double lt_rng_uniform(lt_rng *r) { return lt__u53(lt_rng_u64(r)); }
/* Box-Muller on two words a, b: sqrt(-2 ln u1) cos(2 pi u2) with u1 = 1 - u53(a) in (0,1] and
   u2 = u53(b) is N(0,1).  One draw per call (two words) keeps the state a plain 4 words, no cached
   second value; lt_init_normal transforms words drawn ahead with the same function. */
static double lt__box_muller(uint64_t a, uint64_t b) {
    double u1 = 1.0 - lt__u53(a), u2 = lt__u53(b);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
LTRAIN_DEF double lt_rng_normal(lt_rng *r) {
    uint64_t a = lt_rng_u64(r);
    return lt__box_muller(a, lt_rng_u64(r));
}
LTRAIN_DEF lt_rng *lt_ctx_rng(lt_ctx *ctx) { return ctx ? &ctx->rng : NULL; }

/* -- fetching ahead ------------------------------------------------------------------------------
   A loop that streams an array from memory while it does real work on each value (an exp per
   logit, GELU's polynomial) can outrun what the hardware fetches ahead for it: on the Intel Xeons
   of bench/precision.md such a loop read memory at 3 GB/s, the log-sum-exp of linear_ce16 taking
   0.66 ns a logit from memory against 0.23 with the row in cache.  These loops ask for the lines
   LT__AHEAD bytes ahead of those they read (prefetcht1: into L2), which brought that one to 0.31.
   A prefetch never faults, so asking past an array's end is harmless (the addresses are computed
   as integers, not as pointers past the array). */
#define LT__AHEAD 2048
#if defined(__GNUC__) || defined(__clang__)
#define LT__FETCH(p) __builtin_prefetch((const void *)((uintptr_t)(p) + LT__AHEAD), 0, 2)
#else
#define LT__FETCH(p) ((void)0)
#endif
/* The lines of [p + off, p + off + bytes), as `how` says: LT__FETCH_L2 to read and LT__FETCH_L2W
   to write (into L2, as LT__FETCH), or LT__FETCH_L1 to read within the next few hundred cycles
   (prefetcht0: the GEMM's packing and attention16's rows ask for the rows a few ahead so). */
#define LT__FETCH_L2 0
#define LT__FETCH_L2W 1
#define LT__FETCH_L1 2
static void lt__fetch(const void *p, int64_t off, int64_t bytes, int how) {
#if defined(__GNUC__) || defined(__clang__)
    uintptr_t a = (uintptr_t)p + (uintptr_t)off, e = a + (uintptr_t)bytes;
    for (; a < e; a += 64) {
        if (how == LT__FETCH_L1) __builtin_prefetch((const void *)a, 0, 3);
        else if (how == LT__FETCH_L2W) __builtin_prefetch((const void *)a, 1, 2);
        else __builtin_prefetch((const void *)a, 0, 2);
    }
#else
    (void)p; (void)off; (void)bytes; (void)how;
#endif
}

/* -- huge pages ----------------------------------------------------------------------------------
   The big buffers (arena chunks, parameters and their gradients, optimizer moments) ask Linux for
   2 MiB pages (madvise MADV_HUGEPAGE) before their first touch.  A product walks its operands
   row by row; a row of a 50304 x 768 weight or of a (1024, 50304) logits tensor is on a page of
   its own with 4 KiB pages, so packing and storing a tile miss the TLB once per row, and a page
   walk costs about as much as the row's values.  With 2 MiB pages those walks are rare (the gain,
   for products and for whole steps, is in bench/design.md).  Where transparent_hugepage is
   "madvise" (many distributions' default) only advised memory gets them; with "always" nothing
   changes, with "never" the advice is ignored.  Only the 2 MiB-aligned middle of a buffer is
   advised, so memory around it keeps its pages; the values never change.  numpy does the same for
   its large arrays.  LTRAIN_HUGEPAGES=0 in the environment turns it off.  The chunks that
   lt_compile's recording pass makes are advised the other way (MADV_NOHUGEPAGE, lt__no_hugepages):
   it touches them only here and there (records, no values), and a 2 MiB page commits all of itself
   at the first touch, so under "always" they would cost as much memory as the buffers they stand
   for (a compiled step's peak RSS 46 -> 78 MB on tests' compile/cli_rss model). */
#define LT__HUGE ((uintptr_t)2 << 20)
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define LT__MADV_HUGEPAGE 14   /* Linux's MADV_HUGEPAGE (hidden by <sys/mman.h> under strict -std=c99) */
#define LT__MADV_NOHUGEPAGE 15 /* and MADV_NOHUGEPAGE */
#ifndef __cplusplus
extern int madvise(void *, size_t, int);
#else
#include <sys/mman.h>
#endif
#endif
static void lt__hugepages(void *p, size_t bytes) {
#ifdef LT__MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + LT__HUGE - 1) & ~(LT__HUGE - 1), e = ((uintptr_t)p + bytes) & ~(LT__HUGE - 1);
    const char *off;
    if (!p || e <= a) return;
    off = getenv("LTRAIN_HUGEPAGES");
    if (!(off && strcmp(off, "0") == 0)) (void)madvise((void *)a, (size_t)(e - a), LT__MADV_HUGEPAGE);   /* advice: a refusal changes nothing */
#else
    (void)p; (void)bytes;
#endif
}
/* The 4 KiB pages of [p, p + bytes) keep to 4 KiB pages whatever transparent_hugepage says. */
static void lt__no_hugepages(void *p, size_t bytes) {
#ifdef LT__MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + 4095u) & ~(uintptr_t)4095u, e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095u;
    if (p && e > a) (void)madvise((void *)a, (size_t)(e - a), LT__MADV_NOHUGEPAGE);   /* advice, as above */
#else
    (void)p; (void)bytes;
#endif
}
/* A new buffer of zeros (parameters, gradients, optimizer moments; NULL: out of memory), advised
   as above, the threads each zeroing 2 MiB pieces: a buffer's first touch is the kernel clearing
   its pages, on the touching thread. */
static void *lt__zalloc_big(size_t bytes) {
    char *p = (char *)LT__MALLOC(bytes ? bytes : 1);
    int64_t k, pieces = (int64_t)((bytes + LT__HUGE - 1) / LT__HUGE);
    if (!p) return NULL;
    lt__hugepages(p, bytes);
    LT__OMP(parallel for schedule(static) if (pieces > 1))
    for (k = 0; k < pieces; k++) {
        size_t lo = (size_t)k * LT__HUGE;
        memset(p + lo, 0, bytes - lo < LT__HUGE ? bytes - lo : LT__HUGE);
    }
    return p;
}

/* -- arena -------------------------------------------------------------------------------------- */
/* bytes of scratch for one kernel call (NULL: out of memory): the context keeps the largest asked
   for, so steps after the first neither allocate nor touch new pages.  One call at a time: a
   context's ops run one after another. */
static void *lt__ctx_work(lt_ctx *ctx, size_t bytes) {
    if (bytes > ctx->work_bytes) {
        LT__FREE(ctx->work);
        ctx->work = (unsigned char *)LT__MALLOC(bytes);
        ctx->work_bytes = ctx->work ? bytes : 0;
    }
    return ctx->work;
}

#define LT__ALIGN 64
#define LT__CHUNK_MIN ((size_t)16 << 20)

/* bytes from arena a of ctx (the arena, or the scratch arena of recompute segments); the peak
   counts both together */
static void *lt__arena_take(lt_ctx *ctx, lt__arena *a, size_t bytes) {
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
            if (ctx->arena.used + ctx->scratch.used > ctx->arena.peak) ctx->arena.peak = ctx->arena.used + ctx->scratch.used;
            return p;
        }
    }
    {
        size_t cap = need > LT__CHUNK_MIN ? need : LT__CHUNK_MIN, total;
        unsigned char *raw;
        if (!lt_add_size(cap, sizeof(lt__chunk) + LT__ALIGN, &total)) goto oom;
        raw = (unsigned char *)LT__MALLOC(total);
        if (!raw) goto oom;
        if (!ctx->dry) lt__hugepages(raw, total);
        else lt__no_hugepages(raw, total);
        c = (lt__chunk *)raw;
        c->mem = raw + sizeof(lt__chunk);
        c->mem += (LT__ALIGN - ((uintptr_t)c->mem % LT__ALIGN)) % LT__ALIGN;
        c->cap = cap; c->used = need; c->next = NULL;
        /* append at the end of the list so reset reuses chunks in order */
        if (!a->first) a->first = c;
        else { lt__chunk *t = a->first; while (t->next) t = t->next; t->next = c; }
        a->head = c;
        a->used += need;
        if (ctx->arena.used + ctx->scratch.used > ctx->arena.peak) ctx->arena.peak = ctx->arena.used + ctx->scratch.used;
        return c->mem;
    }
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "out of memory: the arena could not grow by %zu bytes "
                 "(hint: a smaller batch or sequence length needs less)", bytes);
    return NULL;
}

static void *lt__arena_alloc(lt_ctx *ctx, size_t bytes) { return lt__arena_take(ctx, &ctx->arena, bytes); }
/* Values (tensor data, saved buffers) on the CPU: the scratch arena inside a recompute segment
   (eager), the arena otherwise. */
static void *lt__arena_values(lt_ctx *ctx, size_t bytes) {
    return lt__arena_take(ctx, ctx->to_scratch ? &ctx->scratch : &ctx->arena, bytes);
}
/* Does p point into arena a's chunks? */
static int lt__arena_owns(const lt__arena *a, const void *p) {
    const lt__chunk *c;
    for (c = a->first; c; c = c->next)
        if ((const unsigned char *)p >= c->mem && (const unsigned char *)p < c->mem + c->cap) return 1;
    return 0;
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

/* (the scratch arena of recompute segments included) */
LTRAIN_DEF size_t lt_arena_used(const lt_ctx *ctx) { return ctx ? ctx->arena.used + ctx->scratch.used : 0; }
LTRAIN_DEF size_t lt_arena_peak(const lt_ctx *ctx) { return ctx ? ctx->arena.peak : 0; }

/* -- @@CORE.context  context ---------------------------------------------------------------------- */
LTRAIN_DEF lt_ctx *lt_ctx_create(uint64_t seed) {
    lt_ctx *ctx = (lt_ctx *)LT__MALLOC(sizeof(lt_ctx));
    if (!ctx) return NULL;
    memset(ctx, 0, sizeof *ctx);
    lt_rng_seed(&ctx->rng, seed);
    ctx->training = 1;
    ctx->grad_enabled = 1;
    ctx->gen = 1;
    lt__threads_for_load();
    return ctx;
}

LTRAIN_DEF void lt_set_training(lt_ctx *ctx, int on) { if (ctx) ctx->training = on != 0; }
/* Wall-clock seconds (omp_get_wtime with OpenMP, else processor time: C99 has no wall clock). */
static double lt__now(void) {
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

LTRAIN_DEF const char *lt_scope(lt_ctx *ctx, const char *scope) {
    const char *old;
    if (!ctx) return NULL;
    old = ctx->scope;
    ctx->scope = scope;
    return old;
}
LTRAIN_DEF void lt_set_grad_enabled(lt_ctx *ctx, int on) { if (ctx) ctx->grad_enabled = on != 0; }

/* Drop the tape and all arena memory; parameter gradients stay. */
LTRAIN_DEF void lt_reset(lt_ctx *ctx) {
    if (!ctx) return;
    lt__arena_reset(&ctx->arena);
    ctx->gen++;                  /* every arena tensor made so far is stale from here on */
    if (ctx->dev) ctx->dev->reset(ctx);
    ctx->tape_len = 0;
    ctx->tape_done = 0;
    ctx->grad_free = NULL;
    lt__arena_reset(&ctx->scratch);
    ctx->n_segs = ctx->n_seg_nodes = 0;
    ctx->seg_open = ctx->to_scratch = 0;
}

/* -- devices: names, and the calls every build has (through the seam; LT_CPU: nothing to do) ------- */
LTRAIN_DEF const char *lt_device_name(lt_device d) {
    return d == LT_CPU ? "cpu" : d == LT_CUDA ? "cuda" : "unknown device";
}
LTRAIN_DEF int lt_device_parse(const char *name, lt_device *out) {
    if (!name || !out) return 0;
    if (strcmp(name, "cpu") == 0) { *out = LT_CPU; return 1; }
    if (strcmp(name, "cuda") == 0 || strcmp(name, "gpu") == 0) { *out = LT_CUDA; return 1; }
    return 0;
}
LTRAIN_DEF lt_device lt_get_device(const lt_ctx *ctx) { return ctx ? ctx->device : LT_CPU; }
LTRAIN_DEF const char *lt_device_describe(lt_ctx *ctx) { return ctx && ctx->dev ? ctx->dev->describe(ctx) : "cpu"; }
LTRAIN_DEF size_t lt_device_arena_bytes(const lt_ctx *ctx) { return ctx && ctx->dev ? ctx->dev->arena_bytes(ctx) : 0; }
LTRAIN_DEF void lt_set_tf32(lt_ctx *ctx, int on) {
    if (ctx && ctx->dev) ctx->dev->set_tf32(ctx, on);
}
LTRAIN_DEF lt_status lt_device_synchronize(lt_ctx *ctx) {
    if (!ctx) return LT_ERR_ARG;
    if (ctx->dev && !lt_failed(ctx)) ctx->dev->synchronize(ctx);
    return ctx->status;
}

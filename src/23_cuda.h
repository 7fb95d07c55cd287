/* ==== @@CUDA  the CUDA backend: device arena, kernels, cuBLAS, graphs (LTRAIN_CUDA) ============== */
/* Holds: the CUDA backend: it fills the device table (ctx->dev) with the device arena, kernels
   for every op, cuBLAS matmuls, optimizer steps, clipping, unscaling and CUDA-graph replay.
   Calls: @@CORE, @@TENSOR, @@OPS, @@TAPE, @@COMPILE, @@OPTIM; CUDA, cuBLAS. */
/* How the backend fits the library.  lt_set_device(ctx, LT_CUDA) gives the context a CUDA stream,
   a cuBLAS handle and a device arena; from then on:
     - values (op outputs, gradients, saved buffers) come from the device arena (lt__values_alloc):
       one list of cudaMalloc'ed chunks, bump-allocated and reset with the host arena, so after the
       first step nothing is allocated (never managed memory).  Headers and tape records stay in
       the host arena: the tape is walked on the host and launches kernels in order on one stream;
     - parameters keep their host copies (the packed block of lt_params_pack: initialisation and
       checkpoints work on them) and get one device mirror of that block, [all data | all grads];
       a kernel turns a host pointer into the block into its device twin (lt__cu_p).  Which copy
       is current is one state (host newer / same / device newer): the first device op after a
       host write uploads, lt_sync_params downloads;
     - the parts above reach the backend only through the device seam (lt__device, @@CORE): the
       table lt__cuda_device at the end of this part, which lt_set_device installs in ctx->dev;
     - its op kernels are the ones below, by row of the op table (forward and backward of every op;
       the CPU kernel is their reference, tests/test_cuda.c compares them); ids, targets and lengths
       are copied in by lt__node_ids; lt_item, the clipping norm and the scaler's inf flag are the
       only values that come back during a step;
     - optimizers: AdamW (one fused pass over every parameter) and SGD run on the device with their
       state there; the others run on the host copies (slow, correct);
     - lt_compile records the step into a CUDA graph and replays it (below, "graphs").
   Kernels accumulate in a fixed order (no float atomics), so a run repeats bit for bit; they
   differ from the CPU only in summation order (fp32 tolerances in tests/test_cuda.c). */

#ifndef LTRAIN_CUDA
/* A build without the backend: LT_CPU is the only device (no table is ever installed, so the
   seam's calls in the parts above are all skipped). */
LTRAIN_DEF lt_status lt_set_device(lt_ctx *ctx, lt_device dev) {
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return ctx->status;
    if (dev == LT_CPU) return LT_OK;
    if (dev == LT_CUDA)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_set_device: cuda: this build has no CUDA backend (hint: compile "
                            "with nvcc -x cu -DLTRAIN_CUDA ... -lcublas, e.g. make cuda; see README \"CUDA\")");
    return lt_set_error(ctx, LT_ERR_ARG, "lt_set_device: %d is not an lt_device (LT_CPU or LT_CUDA)", (int)dev);
}
LTRAIN_DEF int lt_cuda_available(void) { return 0; }

#else /* LTRAIN_CUDA */

#ifndef __CUDACC__
#error "ltrain.h: LTRAIN_CUDA needs the implementation compiled by nvcc as CUDA: nvcc -x cu -DLTRAIN_IMPLEMENTATION -DLTRAIN_CUDA ... -lcublas"
#endif
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>

#define LT__CU_CHUNK_MIN ((size_t)64 << 20)
#define LT__CU_T 256               /* threads per block of the elementwise kernels */

typedef struct lt__cu_chunk {
    struct lt__cu_chunk *next;
    size_t cap, used;
    unsigned char *mem;            /* cudaMalloc'ed */
} lt__cu_chunk;

enum { LT__CU_HOST_NEWER = 0, LT__CU_SAME, LT__CU_DEV_NEWER };   /* which copy of a mirrored block is current */

struct lt__cuda {
    int dev;
    cudaStream_t stream;
    cublasHandle_t blas;
    void *blas_ws;                 /* cuBLAS workspace (set explicitly, so graph capture allocates nothing) */
    int tf32;
    lt__cu_chunk *first, *head;    /* the device arena */
    size_t used, peak, reserved;
    float *pdev;                   /* the parameter block's mirror: 2*pfloats (data | grads) */
    const float *phost;            /* ... of this host block */
    size_t pfloats;
    int pstate;
    unsigned char *pin;            /* pinned host staging for ids (graph replays copy from here) */
    size_t pin_cap, pin_used;
    unsigned char *pin_old[24];    /* outgrown staging blocks: a recorded graph may still copy from them */
    int n_pin_old;
    double *red;                   /* pinned: reduction results coming back */
    float *row;                    /* lt_gpt_generate's logits row */
    size_t row_cap;
    char info[200];
    struct lt__cu_graph *rec;      /* non-NULL while lt_compile records a graph */
};

static const lt__device *lt__cu_table(void);   /* the backend's table of the device seam (the end of @@CUDA) */

/* A CUDA error becomes the context's error, naming what failed and the device. */
static int lt__cu_ok(lt_ctx *ctx, cudaError_t e, const char *what) {
    if (e == cudaSuccess) return 1;
    lt_set_error(ctx, e == cudaErrorMemoryAllocation ? LT_ERR_NOMEM : LT_ERR_STATE, "%s on cuda: %s (%s)", what,
                 cudaGetErrorString(e), cudaGetErrorName(e));
    return 0;
}
static int lt__cu_blas_ok(lt_ctx *ctx, cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return 1;
    lt_set_error(ctx, s == CUBLAS_STATUS_ALLOC_FAILED ? LT_ERR_NOMEM : LT_ERR_STATE, "%s on cuda: cuBLAS status %d",
                 what, (int)s);
    return 0;
}
/* After a launch: a bad configuration shows at once, a fault at the next synchronisation. */
#define LT__CU_LAUNCHED(ctx, what) lt__cu_ok(ctx, cudaGetLastError(), what)

/* -- @@CUDA.arena  device arena ---------------------------------------------------------------- */
static void *lt__cu_alloc(lt_ctx *ctx, size_t bytes) {
    lt__cuda *cu = ctx->cuda;
    lt__cu_chunk *c;
    size_t need;
    if (!lt_add_size(bytes, LT__ALIGN - 1, &need)) goto oom;
    need &= ~(size_t)(LT__ALIGN - 1);
    if (need == 0) need = LT__ALIGN;
    for (c = cu->head; c; c = c->next)
        if (c->cap - c->used >= need) {
            void *p = c->mem + c->used;
            c->used += need;
            cu->head = c;
            cu->used += need;
            if (cu->used > cu->peak) cu->peak = cu->used;
            return p;
        }
    c = (lt__cu_chunk *)LT__MALLOC(sizeof(lt__cu_chunk));
    if (!c) goto oom;
    c->cap = need > LT__CU_CHUNK_MIN ? need : LT__CU_CHUNK_MIN;
    if (cudaMalloc((void **)&c->mem, c->cap) != cudaSuccess) {
        (void)cudaGetLastError();
        LT__FREE(c);
        goto oom;
    }
    c->used = need;
    c->next = NULL;
    if (!cu->first) cu->first = c;
    else { lt__cu_chunk *t = cu->first; while (t->next) t = t->next; t->next = c; }
    cu->head = c;
    cu->reserved += c->cap;
    cu->used += need;
    if (cu->used > cu->peak) cu->peak = cu->used;
    return c->mem;
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "out of device memory: the cuda arena could not grow by %zu bytes (it holds "
                 "%zu) (hint: a smaller batch or sequence length needs less)", bytes, ctx->cuda->reserved);
    return NULL;
}

/* Pinned host bytes (ids on their way in), reset with the arena. */
static void *lt__cu_pinned(lt_ctx *ctx, size_t bytes) {
    lt__cuda *cu = ctx->cuda;
    size_t need = (bytes + 63) & ~(size_t)63;
    void *p;
    if (cu->pin_used + need > cu->pin_cap) {
        /* grow: earlier pointers stay valid until the next reset, so the old block is kept alive
           only by a synchronisation before it is freed */
        size_t cap = 2 * (cu->pin_used + need) > ((size_t)1 << 20) ? 2 * (cu->pin_used + need) : ((size_t)1 << 20);
        unsigned char *nb;
        if (cu->rec) {   /* a graph being recorded holds addresses into the old block */
            lt_set_error(ctx, LT_ERR_STATE, "lt_compile on cuda: the step's inputs outgrew the staging buffer "
                         "while recording; run the step once eagerly before compiling");
            return NULL;
        }
        if (!lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "staging ids")) return NULL;
        if (!lt__cu_ok(ctx, cudaMallocHost((void **)&nb, cap), "pinned staging buffer")) return NULL;
        if (cu->pin && cu->n_pin_old < 24) cu->pin_old[cu->n_pin_old++] = cu->pin;   /* freed with the context */
        else if (cu->pin) cudaFreeHost(cu->pin);
        cu->pin = nb;
        cu->pin_cap = cap;
        cu->pin_used = 0;
    }
    p = cu->pin + cu->pin_used;
    cu->pin_used += need;
    return p;
}

static void lt__cu_reset(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    lt__cu_chunk *c;
    for (c = cu->first; c; c = c->next) c->used = 0;
    cu->head = cu->first;
    cu->used = 0;
    /* the pinned staging bytes are rewritten by the next step: its copies must be done */
    if (cu->pin_used && !cu->rec) { cudaStreamSynchronize(cu->stream); cu->pin_used = 0; }
}

static size_t lt__cu_arena_bytes(const lt_ctx *ctx) { return ctx->cuda->reserved; }

/* -- @@CUDA.params  parameters: the device mirror of the packed block ---------------------------- */
static float *lt__cu_p(lt_ctx *ctx, const float *p) {
    lt__cuda *cu = ctx->cuda;
    if (p && cu->pdev && p >= cu->phost && p < cu->phost + 2 * cu->pfloats) return cu->pdev + (p - cu->phost);
    return (float *)p;
}

static void lt__cu_download_params(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    if (cu->pstate != LT__CU_DEV_NEWER || !cu->pdev) return;
    if (lt__cu_ok(ctx, cudaMemcpyAsync((void *)cu->phost, cu->pdev, 2 * cu->pfloats * sizeof(float),
                                       cudaMemcpyDeviceToHost, cu->stream), "copying the parameters to the host") &&
        lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "copying the parameters to the host"))
        cu->pstate = LT__CU_SAME;
}

/* Before device work that touches parameters: the mirror exists, matches the host block's layout
   (parameters made since are packed in) and holds the current values. */
static int lt__cu_params_ready(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    size_t total = lt_params_count(ctx);
    if (lt_failed(ctx)) return 0;
    if (total == 0) return 1;
    if (!ctx->param_block || ctx->param_floats != total || cu->phost != ctx->param_block || cu->pfloats != total) {
        lt__cu_download_params(ctx);   /* the device may hold newer values of the old block */
        if (!ctx->param_block || ctx->param_floats != total)
            if (lt_params_pack(ctx) != LT_OK) return 0;
        if (cu->pdev) cudaFree(cu->pdev);
        cu->pdev = NULL;
        cu->phost = NULL;
        if (!lt__cu_ok(ctx, cudaMalloc((void **)&cu->pdev, 2 * total * sizeof(float)), "the parameter block"))
            return 0;
        cu->phost = ctx->param_block;
        cu->pfloats = total;
        cu->pstate = LT__CU_HOST_NEWER;
    }
    if (cu->pstate == LT__CU_HOST_NEWER) {
        if (!lt__cu_ok(ctx, cudaMemcpyAsync(cu->pdev, cu->phost, 2 * total * sizeof(float), cudaMemcpyHostToDevice,
                                            cu->stream), "copying the parameters to the device"))
            return 0;
        cu->pstate = LT__CU_SAME;
    }
    return 1;
}

static void lt__cu_sync_params(lt_ctx *ctx) { lt__cu_download_params(ctx); }   /* lt_sync_params */
static void lt__cu_params_changed(lt_ctx *ctx) { ctx->cuda->pstate = LT__CU_HOST_NEWER; }

/* A tensor's values / gradient on the device (parameters: their mirror).  The gradient of an arena
   tensor is made (zeroed) on first use, as lt__grad does on the host. */
static float *lt__cu_data(lt_ctx *ctx, const lt_tensor *t) { return t ? lt__cu_p(ctx, t->data) : NULL; }
static float *lt__cu_grad(lt_ctx *ctx, lt_tensor *t) {
    if (!t || !t->requires_grad) return NULL;
    if (!t->grad) {
        t->grad = (float *)lt__cu_alloc(ctx, (size_t)t->n * sizeof(float));
        if (!t->grad) return NULL;
        if (!lt__cu_ok(ctx, cudaMemsetAsync(t->grad, 0, (size_t)t->n * sizeof(float), ctx->cuda->stream), "zeroing a gradient"))
            return NULL;
    }
    if (ctx->cuda->pdev && t->grad >= ctx->cuda->phost && t->grad < ctx->cuda->phost + 2 * ctx->cuda->pfloats)
        ctx->cuda->pstate = LT__CU_DEV_NEWER;   /* a parameter's gradient is about to change */
    return lt__cu_p(ctx, t->grad);
}
/* Every device kernel starts here: parameters on the device, no earlier error. */
static int lt__cu_begin(lt__node *nd) { return !lt_failed(nd->ctx) && lt__cu_params_ready(nd->ctx); }
#define LT__CU_STREAM(nd) ((nd)->ctx->cuda->stream)

static unsigned lt__cu_blocks(int64_t n) {
    int64_t b = (n + LT__CU_T - 1) / LT__CU_T;
    return (unsigned)(b < 1 ? 1 : b > 8192 ? 8192 : b);   /* grid-stride loops cover the rest */
}
#define LT__CU_LOOP(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* -- small host-facing helpers ----------------------------------------------------------------- */
__global__ void lt__k_fill(float *y, float v, int64_t n) { LT__CU_LOOP(i, n) y[i] = v; }

static void lt__cu_fill_values(lt_ctx *ctx, float *dst, const float *src, size_t n) {
    if (!dst) return;
    if (src) lt__cu_ok(ctx, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyHostToDevice, ctx->cuda->stream),
                       "lt_tensor_from: copying the data in");
    else lt__cu_ok(ctx, cudaMemsetAsync(dst, 0, n * sizeof(float), ctx->cuda->stream), "lt_tensor_new: zeroing");
}

/* lt_fill on a device tensor (no context at hand: the legacy stream, which waits for the others). */
static void lt__cu_fill_const(lt_tensor *t, float v) {
    lt__k_fill<<<lt__cu_blocks(t->n), LT__CU_T>>>(t->data, v, t->n);
    cudaDeviceSynchronize();
}

static float lt__cu_item(const lt_tensor *t) {
    float v = (float)NAN;
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, t->data) != cudaSuccess || a.type != cudaMemoryTypeDevice) {
        (void)cudaGetLastError();
        return t->data[0];   /* a view of a parameter: its host copy */
    }
    if (cudaMemcpy(&v, t->data, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess) { (void)cudaGetLastError(); return (float)NAN; }
    return v;
}

static const float *lt__cu_host_row(lt_ctx *ctx, const float *dev, size_t n) {
    lt__cuda *cu = ctx->cuda;
    if (cu->row_cap < n) {
        float *r = (float *)LT__REALLOC(cu->row, n * sizeof(float));
        if (!r) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_generate: out of memory"); return NULL; }
        cu->row = r;
        cu->row_cap = n;
    }
    if (!lt__cu_ok(ctx, cudaMemcpyAsync(cu->row, dev, n * sizeof(float), cudaMemcpyDeviceToHost, cu->stream), "reading logits") ||
        !lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "reading logits"))
        return NULL;
    return cu->row;
}

/* lt_tensor_read, its arguments checked */
static lt_status lt__cu_read(lt_ctx *ctx, const lt_tensor *t, int grad, float *out) {
    const float *src = grad ? t->grad : t->data;
    if (ctx->cuda->pdev && src >= ctx->cuda->phost && src < ctx->cuda->phost + 2 * ctx->cuda->pfloats) {
        lt__cu_download_params(ctx);   /* a parameter (or a view of one): its host copy, made current */
        if (!lt_failed(ctx)) memcpy(out, src, (size_t)t->n * sizeof(float));
        return ctx->status;
    }
    if (t->device != LT_CUDA) { memcpy(out, src, (size_t)t->n * sizeof(float)); return LT_OK; }
    if (lt__cu_ok(ctx, cudaMemcpyAsync(out, src, (size_t)t->n * sizeof(float), cudaMemcpyDeviceToHost, ctx->cuda->stream),
                  "lt_tensor_read"))
        lt__cu_ok(ctx, cudaStreamSynchronize(ctx->cuda->stream), "lt_tensor_read");
    return ctx->status;
}

static void lt__cu_synchronize(lt_ctx *ctx) {   /* lt_device_synchronize */
    lt__cu_ok(ctx, cudaStreamSynchronize(ctx->cuda->stream), "lt_device_synchronize");
}

static void lt__cu_set_tf32(lt_ctx *ctx, int on) {
    ctx->cuda->tf32 = on != 0;
    cublasSetMathMode(ctx->cuda->blas, on ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
}

LTRAIN_DEF int lt_cuda_available(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) { (void)cudaGetLastError(); return 0; }
    return n > 0;
}

static const char *lt__cu_describe(lt_ctx *ctx) { return ctx->cuda->info; }

static void lt__cu_free_all(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    lt__cu_chunk *c = cu->first;
    if (cu->stream) cudaStreamSynchronize(cu->stream);
    while (c) { lt__cu_chunk *n = c->next; cudaFree(c->mem); LT__FREE(c); c = n; }
    if (cu->pdev) cudaFree(cu->pdev);
    if (cu->blas_ws) cudaFree(cu->blas_ws);
    if (cu->pin) cudaFreeHost(cu->pin);
    while (cu->n_pin_old > 0) cudaFreeHost(cu->pin_old[--cu->n_pin_old]);
    if (cu->red) cudaFreeHost(cu->red);
    if (cu->blas) cublasDestroy(cu->blas);
    if (cu->stream) cudaStreamDestroy(cu->stream);
    LT__FREE(cu->row);
    LT__FREE(cu);
    ctx->cuda = NULL;
    ctx->dev = NULL;
}
static void lt__cu_destroy(lt_ctx *ctx) {
    if (ctx->cuda) lt__cu_free_all(ctx);
}

LTRAIN_DEF lt_status lt_set_device(lt_ctx *ctx, lt_device dev) {
    lt__cuda *cu;
    struct cudaDeviceProp prop;
    int n = 0, id = 0;
    const char *env;
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return ctx->status;
    if (dev != LT_CPU && dev != LT_CUDA)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_set_device: %d is not an lt_device (LT_CPU or LT_CUDA)", (int)dev);
    if (dev == ctx->device) return LT_OK;
    if (ctx->tape_len > 0 && !ctx->tape_done)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_set_device: %d ops are recorded on the tape: change the device "
                            "between steps (hint: lt_reset first)", ctx->tape_len);
    if (dev == LT_CPU) {   /* back to the host: parameters come home, the device memory goes */
        if (lt_sync_params(ctx) != LT_OK) return ctx->status;
        lt_reset(ctx);
        lt__cu_free_all(ctx);
        ctx->device = LT_CPU;
        return LT_OK;
    }
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        cudaError_t e = cudaGetLastError();
        return lt_set_error(ctx, LT_ERR_STATE, "lt_set_device: cuda: no CUDA device is available (%s)",
                            n < 1 && e == cudaSuccess ? "none found" : cudaGetErrorString(e));
    }
    env = getenv("LTRAIN_CUDA_DEVICE");   /* which GPU, as CUDA numbers them (default 0) */
    if (env && *env) id = atoi(env);
    if (id < 0 || id >= n)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_set_device: LTRAIN_CUDA_DEVICE is %d: there are %d devices", id, n);
    cu = (lt__cuda *)LT__MALLOC(sizeof(lt__cuda));
    if (!cu) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_set_device: out of memory");
    memset(cu, 0, sizeof *cu);
    cu->dev = id;
    ctx->cuda = cu;
    ctx->dev = lt__cu_table();   /* the device seam: the parts above call the backend through it */
    lt__devices[LT_CUDA] = ctx->dev;
    if (!lt__cu_ok(ctx, cudaSetDevice(id), "lt_set_device") ||
        !lt__cu_ok(ctx, cudaGetDeviceProperties(&prop, id), "lt_set_device") ||
        !lt__cu_ok(ctx, cudaStreamCreateWithFlags(&cu->stream, cudaStreamNonBlocking), "lt_set_device: a stream") ||
        !lt__cu_blas_ok(ctx, cublasCreate(&cu->blas), "lt_set_device: cuBLAS") ||
        !lt__cu_blas_ok(ctx, cublasSetStream(cu->blas, cu->stream), "lt_set_device: cuBLAS stream") ||
        !lt__cu_ok(ctx, cudaMalloc(&cu->blas_ws, (size_t)32 << 20), "lt_set_device: cuBLAS workspace") ||
        !lt__cu_blas_ok(ctx, cublasSetWorkspace(cu->blas, cu->blas_ws, (size_t)32 << 20), "lt_set_device: cuBLAS workspace") ||
        !lt__cu_ok(ctx, cudaMallocHost((void **)&cu->red, 4096 * sizeof(double)), "lt_set_device: pinned memory")) {
        lt__cu_free_all(ctx);
        return ctx->status;
    }
    cublasSetMathMode(cu->blas, CUBLAS_DEFAULT_MATH);   /* fp32 products in fp32 (lt_set_tf32 to change) */
    snprintf(cu->info, sizeof cu->info, "%.100s (sm_%d%d, %.0f GiB, %d SMs)", prop.name, prop.major, prop.minor,
             (double)prop.totalGlobalMem / 1073741824.0, prop.multiProcessorCount);
    lt_reset(ctx);
    ctx->device = LT_CUDA;
    cu->pstate = LT__CU_HOST_NEWER;
    return LT_OK;
}

/* -- @@CUDA.reductions  reductions -------------------------------------------------------------- */
/* The sum of v over a block (double, fixed order: the same on every run).  blockDim.x must be a
   multiple of 32, at most 1024; every thread gets the result. */
__device__ double lt__cu_block_sum(double v) {
    __shared__ double part[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5, o;
    for (o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    __syncthreads();   /* part[] may still be read by a previous call */
    if (lane == 0) part[w] = v;
    __syncthreads();
    v = 0;
    if (w == 0) {
        v = lane < nw ? part[lane] : 0.0;
        for (o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) part[0] = v;
    }
    __syncthreads();
    return part[0];
}
__device__ float lt__cu_block_max(float v) {
    __shared__ float part[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5, o;
    for (o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
    __syncthreads();
    if (lane == 0) part[w] = v;
    __syncthreads();
    if (w == 0) {
        v = lane < nw ? part[lane] : -INFINITY;
        for (o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
        if (lane == 0) part[0] = v;
    }
    __syncthreads();
    return part[0];
}
__device__ double lt__cu_warp_sum(double v) {
    int o;
    for (o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

#define LT__CU_RB 256   /* blocks of the first reduction stage */
/* Stage 1 of Σ f(a, b) over n elements: block k's partial sum into part[k] (double).
   mode 0: a_i;  1: (a_i - b_i)²;  2: a_i² */
__global__ void lt__k_reduce(const float *a, const float *b, int64_t n, int mode, double *part) {
    double s = 0;
    LT__CU_LOOP(i, n) {
        double x = a[i];
        if (mode == 1) x -= b[i];
        s += mode == 0 ? x : x * x;
    }
    s = lt__cu_block_sum(s);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}
/* Stage 2: the k partials of each of nseg segments in order; out[seg] = (float)(sum * scale)
   (dout: the double sums as well, or NULL) */
__global__ void lt__k_reduce_finish(const double *part, int k, double scale, float *out, double *dout) {
    double s = 0;
    int j;
    for (j = threadIdx.x; j < k; j += blockDim.x) s += part[(int64_t)blockIdx.x * k + j];
    s = lt__cu_block_sum(s);
    if (threadIdx.x == 0) {
        if (out) out[blockIdx.x] = (float)(s * scale);
        if (dout) dout[blockIdx.x] = s;
    }
}
/* out[0] = scale · Σ f(a, b) (one value, deterministic) */
static void lt__cu_reduce(lt_ctx *ctx, const float *a, const float *b, int64_t n, int mode, double scale, float *out) {
    double *part = (double *)lt__cu_alloc(ctx, LT__CU_RB * sizeof(double));
    if (!part) return;
    lt__k_reduce<<<LT__CU_RB, LT__CU_T, 0, ctx->cuda->stream>>>(a, b, n, mode, part);
    lt__k_reduce_finish<<<1, LT__CU_T, 0, ctx->cuda->stream>>>(part, LT__CU_RB, scale, out, NULL);
    LT__CU_LAUNCHED(ctx, "a reduction");
}

/* Column sums of an (R, C) matrix, deterministic in two stages: rows in chunks of `rc`, one partial
   per (chunk, column), then the chunks in order.
     out[j] += sign · round?(Σ_r x[r,j] · (y ? y[r,j] : 1))
   (round16: 0 none, else the lt_dtype to round the sum to before it is added: bias gradients of
   the 16-bit ops) */
__global__ void lt__k_colsum1(const float *x, const float *y, int64_t R, int64_t C, int64_t rc, float *part) {
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, r0 = (int64_t)blockIdx.y * rc, r1 = r0 + rc, r;
    float s = 0;
    if (j >= C) return;
    if (r1 > R) r1 = R;
    for (r = r0; r < r1; r++) s += y ? x[r * C + j] * y[r * C + j] : x[r * C + j];
    part[(int64_t)blockIdx.y * C + j] = s;
}
__device__ float lt__cu_round16(float x, int prec);
__global__ void lt__k_colsum2(const float *part, int64_t nchunk, int64_t C, float sign, int round16, float *out) {
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, k;
    float s = 0;
    if (j >= C) return;
    for (k = 0; k < nchunk; k++) s += part[k * C + j];
    if (round16) s = lt__cu_round16(s, round16);
    out[j] += sign * s;
}
static void lt__cu_colsum(lt_ctx *ctx, const float *x, const float *y, int64_t R, int64_t C, float sign, int round16,
                          float *out) {
    int64_t rc = R <= 64 ? R : (R + 255) / 256 > 32 ? (R + 255) / 256 : 32, nchunk = (R + rc - 1) / rc;
    float *part = (float *)lt__cu_alloc(ctx, (size_t)(nchunk * C) * sizeof(float));
    dim3 g1((unsigned)((C + 127) / 128), (unsigned)nchunk);
    if (!part) return;
    lt__k_colsum1<<<g1, 128, 0, ctx->cuda->stream>>>(x, y, R, C, rc, part);
    lt__k_colsum2<<<(unsigned)((C + 127) / 128), 128, 0, ctx->cuda->stream>>>(part, nchunk, C, sign, round16, out);
    LT__CU_LAUNCHED(ctx, "a column sum");
}

/* -- 16-bit values --------------------------------------------------------------------------- */
/* Bit for bit the host conversions (@@HALF): bf16 rounds to nearest even on the bits, every NaN
   gives 0xFFFF; fp16 is IEEE binary16 (the hardware conversion rounds to nearest even), NaN gives
   sign | 0x7E00. */
__device__ unsigned short lt__cu_to_bf16(float x) {
    unsigned u = __float_as_uint(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFu;
    return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
__device__ float lt__cu_from_bf16(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
__device__ unsigned short lt__cu_to_f16(float x) {
    unsigned u = __float_as_uint(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)(((u >> 16) & 0x8000u) | 0x7E00u);
    return __half_as_ushort(__float2half_rn(x));
}
__device__ float lt__cu_from_f16(unsigned short h) { return __half2float(__ushort_as_half(h)); }
__device__ float lt__cu_round16(float x, int prec) {
    return prec == LT_F16 ? lt__cu_from_f16(lt__cu_to_f16(x)) : lt__cu_from_bf16(lt__cu_to_bf16(x));
}
__global__ void lt__k_to16(const float *x, unsigned short *h, int64_t n, int prec) {
    LT__CU_LOOP(i, n) h[i] = prec == LT_F16 ? lt__cu_to_f16(x[i]) : lt__cu_to_bf16(x[i]);
}
__global__ void lt__k_round16(float *x, int64_t n, int prec) { LT__CU_LOOP(i, n) x[i] = lt__cu_round16(x[i], prec); }
/* acc: y += round16(t)   (else y = round16(t + round16(bias[col]))) */
__global__ void lt__k_epilogue16(float *y, const float *t, const float *bias, int64_t n, int64_t cols, int acc, int prec) {
    LT__CU_LOOP(i, n) {
        if (acc) y[i] += lt__cu_round16(t[i], prec);
        else y[i] = lt__cu_round16(y[i] + (bias ? lt__cu_round16(bias[i % cols], prec) : 0.0f), prec);
    }
}

/* -- @@CUDA.gemm  GEMM through cuBLAS ------------------------------------------------------------- */
/* Row-major C (M,N) = alpha·op(A)·op(B) + beta·C is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: cuBLAS gets
   B first.  nb batches with strides sA, sB, sC (sB = 0: B shared).  prec LT_F32: fp32 inputs
   (TF32 tensor cores only after lt_set_tf32); LT_BF16 / LT_F16: A and B are 16-bit arrays, C
   float32 with float32 accumulation (cublasGemmEx, tensor cores). */
static void lt__cu_gemm(lt_ctx *ctx, const char *who, int prec, int ta, int tb, int64_t M, int64_t N, int64_t K,
                        float alpha, const void *A, int64_t lda, int64_t sA, const void *B, int64_t ldb, int64_t sB,
                        float beta, float *C, int64_t ldc, int64_t sC, int64_t nb) {
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType_t dt = prec == LT_F32 ? CUDA_R_32F : prec == LT_F16 ? CUDA_R_16F : CUDA_R_16BF;
    cublasComputeType_t ct = prec == LT_F32 ? (ctx->cuda->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F)
                                            : CUBLAS_COMPUTE_32F;
    cublasStatus_t s;
    if (lt_failed(ctx) || M == 0 || N == 0) return;
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX || nb > INT_MAX) {
        lt_set_error(ctx, LT_ERR_ARG, "%s on cuda: a product of %lld x %lld x %lld is too large for cuBLAS's int sizes",
                     who, (long long)M, (long long)N, (long long)K);
        return;
    }
    if (nb == 1)
        s = cublasGemmEx(ctx->cuda->blas, opb, opa, (int)N, (int)M, (int)K, &alpha, B, dt, (int)ldb, A, dt, (int)lda,
                         &beta, C, CUDA_R_32F, (int)ldc, ct, CUBLAS_GEMM_DEFAULT);
    else
        s = cublasGemmStridedBatchedEx(ctx->cuda->blas, opb, opa, (int)N, (int)M, (int)K, &alpha, B, dt, (int)ldb, sB,
                                       A, dt, (int)lda, sA, &beta, C, CUDA_R_32F, (int)ldc, sC, (int)nb, ct,
                                       CUBLAS_GEMM_DEFAULT);
    lt__cu_blas_ok(ctx, s, who);
}

/* -- @@CUDA.elementwise  elementwise ops --------------------------------------------------------- */
/* A CUDA kernel of an op that has none yet: a clear error, never a wrong result. */
static void lt__cu_missing(lt__node *nd, int bwd) {
    lt_set_error(nd->ctx, LT_ERR_STATE, "%s%s%s: the %s of op '%s' has no CUDA kernel yet (device cuda) (hint: run "
                 "this model on LT_CPU; README \"CUDA\" lists the ops the backend has)", nd->op->name,
                 nd->scope ? " in " : "", nd->scope ? nd->scope : "", bwd ? "backward" : "forward", nd->op->name);
}
#define LT__CU_MISSING(name)                                               \
    static void lt__##name##_fwd_cuda(lt__node *nd) { lt__cu_missing(nd, 0); } \
    static void lt__##name##_bwd_cuda(lt__node *nd) { lt__cu_missing(nd, 1); }

/* reshape: the view shares its input's memory (device or a parameter's host address, which the
   kernels translate); dx += dy */
__global__ void lt__k_axpy(float *y, const float *x, float s, int64_t n) { LT__CU_LOOP(i, n) y[i] += s * x[i]; }
static void lt__reshape_fwd_cuda(lt__node *nd) {
    if (lt__cu_begin(nd)) nd->out->data = nd->in[0]->data;   /* after packing: the parameter's final address */
}
static void lt__reshape_bwd_cuda(lt__node *nd) {
    float *gx, *gy;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    gy = lt__cu_p(nd->ctx, nd->out->grad);
    lt__k_axpy<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, gy, 1.0f, nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "reshape");
}

/* add, sub, mul: y_i = a_i ∘ b_(i mod nb) */
__global__ void lt__k_binary(float *y, const float *a, const float *b, int64_t n, int64_t nb, int op) {
    LT__CU_LOOP(i, n) {
        float u = a[i], v = b[i % nb];
        y[i] = op == 0 ? u + v : op == 1 ? u - v : u * v;
    }
}
/* da += dy (add, sub) or dy·b (mul) */
__global__ void lt__k_binary_da(float *ga, const float *gy, const float *b, int64_t n, int64_t nb, int op) {
    LT__CU_LOOP(i, n) ga[i] += op == 2 ? gy[i] * b[i % nb] : gy[i];
}
static void lt__cu_binary_fwd(lt__node *nd, int op) {
    lt_ctx *ctx = nd->ctx;
    if (!lt__cu_begin(nd)) return;
    lt__k_binary<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, lt__cu_data(ctx, nd->in[0]), lt__cu_data(ctx, nd->in[1]), nd->out->n, nd->in[1]->n, op);
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
/* db += ±Σ_rows dy (add, sub) or Σ_rows dy·a (mul), as column sums of the (n/nb, nb) view */
static void lt__cu_binary_bwd(lt__node *nd, int op) {
    lt_ctx *ctx = nd->ctx;
    float *ga, *gb, *gy;
    int64_t n = nd->out->n, nb = nd->in[1]->n;
    if (!lt__cu_begin(nd)) return;
    ga = lt__cu_grad(ctx, nd->in[0]);
    gb = lt__cu_grad(ctx, nd->in[1]);
    gy = lt__cu_p(ctx, nd->out->grad);
    if (ga)
        lt__k_binary_da<<<lt__cu_blocks(n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(ga, gy, lt__cu_data(ctx, nd->in[1]), n, nb, op);
    if (gb) lt__cu_colsum(ctx, gy, op == 2 ? lt__cu_data(ctx, nd->in[0]) : NULL, n / nb, nb, op == 1 ? -1.0f : 1.0f, 0, gb);
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
static void lt__add_fwd_cuda(lt__node *nd) { lt__cu_binary_fwd(nd, 0); }
static void lt__add_bwd_cuda(lt__node *nd) { lt__cu_binary_bwd(nd, 0); }
static void lt__sub_fwd_cuda(lt__node *nd) { lt__cu_binary_fwd(nd, 1); }
static void lt__sub_bwd_cuda(lt__node *nd) { lt__cu_binary_bwd(nd, 1); }
static void lt__mul_fwd_cuda(lt__node *nd) { lt__cu_binary_fwd(nd, 2); }
static void lt__mul_bwd_cuda(lt__node *nd) { lt__cu_binary_bwd(nd, 2); }

/* scale: y = s·x, dx += s·dy */
__global__ void lt__k_scale(float *y, const float *x, float s, int64_t n) { LT__CU_LOOP(i, n) y[i] = s * x[i]; }
static void lt__scale_fwd_cuda(lt__node *nd) {
    if (!lt__cu_begin(nd)) return;
    lt__k_scale<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(nd->ctx, nd->in[0]),
                                                                                  (float)LT__SCALE_S(nd), nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "scale");
}
static void lt__scale_bwd_cuda(lt__node *nd) {
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_axpy<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, lt__cu_p(nd->ctx, nd->out->grad),
                                                                                (float)LT__SCALE_S(nd), nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "scale");
}

/* sum, mean: y = Σx (·1/n); dx_i += dy (·1/n), dy read on the device */
__global__ void lt__k_bcast_add(float *gx, const float *gy, float s, int64_t n) {
    float g = gy[0] * s;
    LT__CU_LOOP(i, n) gx[i] += g;
}
static void lt__cu_reduce_fwd(lt__node *nd, double scale) {
    if (!lt__cu_begin(nd)) return;
    lt__cu_reduce(nd->ctx, lt__cu_data(nd->ctx, nd->in[0]), NULL, nd->in[0]->n, 0, scale, nd->out->data);
}
static void lt__cu_reduce_bwd(lt__node *nd, float scale) {
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_bcast_add<<<lt__cu_blocks(nd->in[0]->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, nd->out->grad, scale, nd->in[0]->n);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__sum_fwd_cuda(lt__node *nd) { lt__cu_reduce_fwd(nd, 1.0); }
static void lt__sum_bwd_cuda(lt__node *nd) { lt__cu_reduce_bwd(nd, 1.0f); }
static void lt__mean_fwd_cuda(lt__node *nd) { lt__cu_reduce_fwd(nd, 1.0 / (double)nd->in[0]->n); }
static void lt__mean_bwd_cuda(lt__node *nd) { lt__cu_reduce_bwd(nd, 1.0f / (float)nd->in[0]->n); }

/* pointwise activations: the CPU kernels' formulas (@@OPS), with CUDA's tanhf/expf/erff.
   op: 0 gelu (tanh), 1 gelu (erf), 2 relu, 3 tanh, 4 sigmoid */
__device__ float lt__cu_act(float v, int op) {
    switch (op) {
    case 0: {   /* x·σ(2u), as lt__gelu_s */
        float u = 0.7978845608028654f * (v + 0.044715f * v * v * v), e = expf(-2.0f * fabsf(u)), r = 1.0f / (1.0f + e);
        return v * (u < 0.0f ? e * r : r);
    }
    case 1: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case 2: return v > 0 ? v : 0.0f;
    case 3: return tanhf(v);
    case 5: { float e = expf(-fabsf(v)); return v * (v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e)); }   /* silu */
    default: { float e = expf(-fabsf(v)); return v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e); }
    }
}
/* dy/dx from x (gelu, gelu_erf, relu, silu) or from y (tanh, sigmoid) */
__device__ float lt__cu_act_d(float v, float y, int op) {
    switch (op) {
    case 0: {
        float u = 0.7978845608028654f * (v + 0.044715f * v * v * v), e = expf(-2.0f * fabsf(u)), r = 1.0f / (1.0f + e);
        float s = u < 0.0f ? e * r : r;
        return s + 2.0f * v * (s - s * s) * 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * v * v);
    }
    case 1: return 0.5f * (1.0f + erff(v * 0.70710678118654752f)) + v * expf(-0.5f * v * v) * 0.3989422804014327f;
    case 2: return v > 0 ? 1.0f : 0.0f;
    case 3: return 1.0f - y * y;
    case 5: { float e = expf(-fabsf(v)), s = v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e); return s * (1.0f + v * (1.0f - s)); }
    default: return y * (1.0f - y);
    }
}
__global__ void lt__k_act(float *y, const float *x, int64_t n, int op) { LT__CU_LOOP(i, n) y[i] = lt__cu_act(x[i], op); }
__global__ void lt__k_act_bwd(float *gx, const float *gy, const float *x, const float *y, int64_t n, int op) {
    LT__CU_LOOP(i, n) {
        float d = lt__cu_act_d(x ? x[i] : 0.0f, y ? y[i] : 0.0f, op);
        gx[i] += op == 2 ? (x[i] > 0 ? gy[i] : 0.0f) : gy[i] * d;
    }
}
static void lt__cu_act_fwd(lt__node *nd, int op) {
    if (!lt__cu_begin(nd)) return;
    lt__k_act<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(nd->ctx, nd->in[0]),
                                                                               nd->out->n, op);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__cu_act_bwd(lt__node *nd, int op) {
    float *gx;
    int from_y = op == 3 || op == 4;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_act_bwd<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        gx, nd->out->grad, from_y ? NULL : lt__cu_data(nd->ctx, nd->in[0]), from_y ? nd->out->data : NULL, nd->out->n, op);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__gelu_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 0); }
static void lt__gelu_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 0); }
static void lt__gelu_erf_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 1); }
static void lt__gelu_erf_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 1); }
static void lt__relu_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 2); }
static void lt__relu_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 2); }
static void lt__tanh_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 3); }
static void lt__tanh_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 3); }
static void lt__sigmoid_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 4); }
static void lt__sigmoid_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 4); }
static void lt__silu_fwd_cuda(lt__node *nd) { lt__cu_act_fwd(nd, 5); }
static void lt__silu_bwd_cuda(lt__node *nd) { lt__cu_act_bwd(nd, 5); }

/* swiglu: y = silu(g)·u;  dg += dy·u·silu'(g), du += dy·silu(g) (gg == gu: one tensor, both add) */
__global__ void lt__k_swiglu(float *y, const float *g, const float *u, int64_t n) {
    LT__CU_LOOP(i, n) y[i] = lt__cu_act(g[i], 5) * u[i];
}
__global__ void lt__k_swiglu_bwd(float *gg, float *gu, const float *gy, const float *g, const float *u, int64_t n) {
    LT__CU_LOOP(i, n) {
        float d = gy[i];
        if (gg) gg[i] += d * u[i] * lt__cu_act_d(g[i], 0.0f, 5);
        if (gu) gu[i] += d * lt__cu_act(g[i], 5);
    }
}
static void lt__swiglu_fwd_cuda(lt__node *nd) {
    if (!lt__cu_begin(nd)) return;
    lt__k_swiglu<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_data(nd->ctx, nd->in[1]), nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "swiglu");
}
static void lt__swiglu_bwd_cuda(lt__node *nd) {
    float *gg, *gu;
    if (!lt__cu_begin(nd)) return;
    gg = lt__cu_grad(nd->ctx, nd->in[0]);
    gu = lt__cu_grad(nd->ctx, nd->in[1]);
    if (lt_failed(nd->ctx) || (!gg && !gu)) return;
    lt__k_swiglu_bwd<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        gg, gu, nd->out->grad, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_data(nd->ctx, nd->in[1]), nd->out->n);
    LT__CU_LAUNCHED(nd->ctx, "swiglu");
}

/* rope: the (T, D/2) tables of cos and sin (save[0]: c then s) as the CPU makes them (float32
   1/theta^(2i/D) and angle, cos and sin in double), then each pair (i, i+D/2) of each head turned
   by the angle (dir 1) or back (dir -1, backward: gx += ...) */
__global__ void lt__k_rope_tables(float *cs, int64_t T, int64_t D, int64_t pos0, float base) {
    int64_t half = D / 2;
    LT__CU_LOOP(k, T * half) {
        int64_t t = k / half, i = k % half;
        float e = (float)(2 * i) / (float)D, f = 1.0f / (float)pow((double)base, (double)e), ang = (float)(pos0 + t) * f;
        cs[t * half + i] = (float)cos((double)ang);
        cs[(T + t) * half + i] = (float)sin((double)ang);
    }
}
__global__ void lt__k_rope(float *y, const float *x, const float *cs, int64_t BT, int64_t T, int64_t H, int64_t D,
                           float dir, int add) {
    int64_t half = D / 2;
    LT__CU_LOOP(k, BT * H * half) {
        int64_t r = k / (H * half), h = k / half % H, i = k % half, t = r % T, o = r * H * D + h * D + i;
        float c = cs[t * half + i], sn = dir * cs[(T + t) * half + i], a = x[o], b = x[o + half];
        float ya = a * c - b * sn, yb = b * c + a * sn;
        if (add) { y[o] += ya; y[o + half] += yb; }
        else { y[o] = ya; y[o + half] = yb; }
    }
}
static void lt__rope_fwd_cuda(lt__node *nd) {
    int64_t B = nd->out->shape[0], T = nd->out->shape[1], H = LT__ROPE_H(nd), D = nd->out->shape[2] / H;
    if (!lt__cu_begin(nd)) return;
    lt__k_rope_tables<<<lt__cu_blocks(T * (D / 2)), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->save[0], T, D, LT__ROPE_POS0(nd),
                                                                                        (float)LT__ROPE_THETA(nd));
    lt__k_rope<<<lt__cu_blocks(B * T * H * (D / 2)), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, lt__cu_data(nd->ctx, nd->in[0]), nd->save[0], B * T, T, H, D, 1.0f, 0);
    LT__CU_LAUNCHED(nd->ctx, "rope");
}
static void lt__rope_bwd_cuda(lt__node *nd) {
    int64_t B = nd->out->shape[0], T = nd->out->shape[1], H = LT__ROPE_H(nd), D = nd->out->shape[2] / H;
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_rope<<<lt__cu_blocks(B * T * H * (D / 2)), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, nd->out->grad, nd->save[0], B * T,
                                                                                        T, H, D, -1.0f, 1);
    LT__CU_LAUNCHED(nd->ctx, "rope");
}

/* softmax / log-softmax over rows of V: one block per row (max, then Σ exp in double).
   A row of all -inf: softmax 0s, log-softmax -inf (as the CPU). */
__global__ void lt__k_softmax(float *y, const float *x, int64_t V, int logsm) {
    const float *xr = x + (int64_t)blockIdx.x * V;
    float *yr = y + (int64_t)blockIdx.x * V, m = -INFINITY;
    double s = 0;
    int64_t j;
    for (j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = lt__cu_block_max(m);
    if (m == -INFINITY) {
        for (j = threadIdx.x; j < V; j += blockDim.x) yr[j] = logsm ? -INFINITY : 0.0f;
        return;
    }
    for (j = threadIdx.x; j < V; j += blockDim.x) s += expf(xr[j] - m);
    s = lt__cu_block_sum(s);
    if (logsm) {
        float ls = (float)log(s);
        for (j = threadIdx.x; j < V; j += blockDim.x) yr[j] = (xr[j] - m) - ls;
    } else {
        for (j = threadIdx.x; j < V; j += blockDim.x) yr[j] = (float)(expf(xr[j] - m) / s);
    }
}
/* softmax: dx_j += y_j (dy_j - Σ dy·y);  log-softmax: dx_j += dy_j - exp(y_j) Σ dy */
__global__ void lt__k_softmax_bwd(float *gx, const float *gy, const float *y, int64_t V, int logsm) {
    const float *yr = y + (int64_t)blockIdx.x * V, *gr = gy + (int64_t)blockIdx.x * V;
    float *gxr = gx + (int64_t)blockIdx.x * V;
    double s = 0;
    int64_t j;
    if (logsm && yr[0] == -INFINITY) {   /* an all -inf row gets no gradient */
        float m = -INFINITY;
        for (j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, yr[j]);
        if (lt__cu_block_max(m) == -INFINITY) return;
    }
    for (j = threadIdx.x; j < V; j += blockDim.x) s += logsm ? (double)gr[j] : (double)gr[j] * yr[j];
    s = lt__cu_block_sum(s);
    for (j = threadIdx.x; j < V; j += blockDim.x)
        gxr[j] += logsm ? gr[j] - expf(yr[j]) * (float)s : yr[j] * (gr[j] - (float)s);
}
static void lt__cu_softmax_fwd(lt__node *nd, int logsm) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V;
    if (!lt__cu_begin(nd)) return;
    if (R > INT_MAX) { lt_set_error(nd->ctx, LT_ERR_ARG, "%s on cuda: %lld rows are too many", nd->op->name, (long long)R); return; }
    lt__k_softmax<<<(unsigned)R, LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(nd->ctx, nd->in[0]), V, logsm);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__cu_softmax_bwd(lt__node *nd, int logsm) {
    int64_t V = nd->in[0]->shape[nd->in[0]->ndim - 1], R = nd->out->n / V;
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_softmax_bwd<<<(unsigned)R, LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, nd->out->grad, nd->out->data, V, logsm);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__softmax_fwd_cuda(lt__node *nd) { lt__cu_softmax_fwd(nd, 0); }
static void lt__softmax_bwd_cuda(lt__node *nd) { lt__cu_softmax_bwd(nd, 0); }
static void lt__log_softmax_fwd_cuda(lt__node *nd) { lt__cu_softmax_fwd(nd, 1); }
static void lt__log_softmax_bwd_cuda(lt__node *nd) { lt__cu_softmax_bwd(nd, 1); }

/* -- @@CUDA.layernorm  layernorm: one warp per row; sums in double as the CPU kernel ------------- */
/* x (R, C), w, b (C) -> y (R, C) = (x - mean)·rstd·w + b; saves mean, rstd (R).  mean NULL: rmsnorm
   (the mean taken as 0, no bias; saves rstd), as the CPU's kernels share the two. */
__global__ void lt__k_layernorm(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b,
                                int64_t R, int64_t C, float eps) {
    int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, j;
    int lane = threadIdx.x & 31;
    const float *xr;
    double sum = 0, var = 0;
    float m, s;
    if (r >= R) return;
    xr = x + r * C;
    for (j = lane; j < C; j += 32) sum += xr[j];
    m = mean ? (float)(lt__cu_warp_sum(sum) / (double)C) : 0.0f;
    for (j = lane; j < C; j += 32) { double d = (double)xr[j] - m; var += d * d; }
    s = (float)(1.0 / sqrt(lt__cu_warp_sum(var) / (double)C + eps));
    for (j = lane; j < C; j += 32) {
        float v = (xr[j] - m) * s;
        y[r * C + j] = (w ? v * w[j] : v) + (b ? b[j] : 0.0f);
    }
    if (lane == 0) { if (mean) mean[r] = m; rstd[r] = s; }
}
/* dx += rstd·(g - mean(g) - x̂·mean(g·x̂)),  g = dy·w, one warp per row (mean NULL: rmsnorm, without
   the mean(g) term) */
__global__ void lt__k_layernorm_dx(float *gx, const float *gy, const float *x, const float *w, const float *mean,
                                   const float *rstd, int64_t R, int64_t C) {
    int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, j;
    int lane = threadIdx.x & 31;
    double mg = 0, mgx = 0;
    float m, s;
    if (r >= R) return;
    m = mean ? mean[r] : 0.0f; s = rstd[r];
    for (j = lane; j < C; j += 32) {
        float xh = (x[r * C + j] - m) * s, g = w ? gy[r * C + j] * w[j] : gy[r * C + j];
        mg += g;
        mgx += (double)g * xh;
    }
    mg = mean ? lt__cu_warp_sum(mg) / (double)C : 0.0;
    mgx = lt__cu_warp_sum(mgx) / (double)C;
    for (j = lane; j < C; j += 32) {
        float xh = (x[r * C + j] - m) * s, g = w ? gy[r * C + j] * w[j] : gy[r * C + j];
        gx[r * C + j] += s * (g - (float)mg - xh * (float)mgx);
    }
}
/* dw += Σ_rows dy·x̂, db += Σ_rows dy: per chunk of rows, then the chunks in order */
__global__ void lt__k_layernorm_dwb1(const float *gy, const float *x, const float *mean, const float *rstd, int64_t R,
                                     int64_t C, int64_t rc, float *pw, float *pb) {
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, r0 = (int64_t)blockIdx.y * rc, r1 = r0 + rc, r;
    float sw = 0, sb = 0;
    if (j >= C) return;
    if (r1 > R) r1 = R;
    for (r = r0; r < r1; r++) {
        float g = gy[r * C + j];
        sw += g * ((x[r * C + j] - (mean ? mean[r] : 0.0f)) * rstd[r]);
        sb += g;
    }
    pw[(int64_t)blockIdx.y * C + j] = sw;
    pb[(int64_t)blockIdx.y * C + j] = sb;
}
/* layernorm (mean, rstd: save[0], save[1]) or rmsnorm (mean NULL, rstd: save[0]; no bias) */
static void lt__cu_norm_fwd(lt__node *nd, float *mean, float *rstd) {
    lt_ctx *ctx = nd->ctx;
    int64_t C = LT__LN_C(nd), R = nd->out->n / C;
    if (!lt__cu_begin(nd)) return;
    lt__k_layernorm<<<(unsigned)((R + 7) / 8), 256, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, mean, rstd, lt__cu_data(ctx, nd->in[0]), lt__cu_data(ctx, nd->in[1]),
        lt__cu_data(ctx, nd->in[2]), R, C, (float)LT__LN_EPS(nd));
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
static void lt__cu_norm_bwd(lt__node *nd, const float *mean, const float *rstd) {
    lt_ctx *ctx = nd->ctx;
    int64_t C = LT__LN_C(nd), R = nd->out->n / C;
    const float *x, *gy;
    float *gx, *gw, *gb;
    if (!lt__cu_begin(nd)) return;
    x = lt__cu_data(ctx, nd->in[0]);
    gy = nd->out->grad;
    gx = lt__cu_grad(ctx, nd->in[0]);
    gw = lt__cu_grad(ctx, nd->in[1]);
    gb = lt__cu_grad(ctx, nd->in[2]);
    if (lt_failed(ctx)) return;
    if (gx)
        lt__k_layernorm_dx<<<(unsigned)((R + 7) / 8), 256, 0, LT__CU_STREAM(nd)>>>(gx, gy, x, lt__cu_data(ctx, nd->in[1]),
                                                                                  mean, rstd, R, C);
    if (gw || gb) {
        int64_t rc = R <= 64 ? R : (R + 255) / 256 > 32 ? (R + 255) / 256 : 32, nchunk = (R + rc - 1) / rc;
        float *pw = (float *)lt__cu_alloc(ctx, (size_t)(2 * nchunk * C) * sizeof(float));
        dim3 g1((unsigned)((C + 127) / 128), (unsigned)nchunk);
        if (!pw) return;
        lt__k_layernorm_dwb1<<<g1, 128, 0, LT__CU_STREAM(nd)>>>(gy, x, mean, rstd, R, C, rc, pw, pw + nchunk * C);
        if (gw) lt__k_colsum2<<<(unsigned)((C + 127) / 128), 128, 0, LT__CU_STREAM(nd)>>>(pw, nchunk, C, 1.0f, 0, gw);
        if (gb) lt__k_colsum2<<<(unsigned)((C + 127) / 128), 128, 0, LT__CU_STREAM(nd)>>>(pw + nchunk * C, nchunk, C, 1.0f, 0, gb);
    }
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
static void lt__layernorm_fwd_cuda(lt__node *nd) { lt__cu_norm_fwd(nd, nd->save[0], nd->save[1]); }
static void lt__layernorm_bwd_cuda(lt__node *nd) { lt__cu_norm_bwd(nd, nd->save[0], nd->save[1]); }
static void lt__rmsnorm_fwd_cuda(lt__node *nd) { lt__cu_norm_fwd(nd, NULL, nd->save[0]); }
static void lt__rmsnorm_bwd_cuda(lt__node *nd) { lt__cu_norm_bwd(nd, NULL, nd->save[0]); }

/* -- embedding ----------------------------------------------------------------------------------- */
/* The ids on the device.  For an embedding the host also groups the rows by id (a counting sort),
   so backward sums each id's rows in order, one block per distinct id, with no atomics:
     [ids (N)] [U] [distinct ids (U)] [start of each id's rows (U+1)] [rows, grouped (N)] */
static void lt__cu_rec_ids(lt_ctx *ctx, int32_t *stage, const int32_t *src, int64_t n, int64_t V); /* graphs */
/* The staging ints of n ids (V > 0: an embedding of V rows, grouped; cnt has V+1 ints of room). */
static void lt__cu_stage_ids(int32_t *stage, const int32_t *ids, int64_t n, int64_t V, int32_t *cnt) {
    int32_t *U = stage + n, *uid = U + 1, *start = uid + n, *rows = start + n + 1;
    int64_t k, u = 0;
    memcpy(stage, ids, (size_t)n * sizeof(int32_t));
    if (V <= 0) return;
    memset(cnt, 0, (size_t)(V + 1) * sizeof(int32_t));
    for (k = 0; k < n; k++) cnt[ids[k]]++;
    start[0] = 0;
    for (k = 0; k < V; k++)
        if (cnt[k]) { uid[u] = (int32_t)k; start[u + 1] = start[u] + cnt[k]; u++; }
    for (k = 0; k < u; k++) cnt[uid[k]] = start[k];   /* now: the next free slot of each id */
    for (k = 0; k < n; k++) rows[cnt[ids[k]]++] = (int32_t)k;
    *U = (int32_t)u;
}
static void lt__cu_ids(lt_ctx *ctx, lt__node *nd, const int32_t *ids, int64_t n) {
    int64_t total = n, V = nd->op == LT__OP(embedding) ? nd->in[0]->shape[0] : 0;
    int32_t *stage, *cnt = NULL;
    if (V > 0) {
        total = 1 + 3 * n + 1 + n;   /* at most n distinct ids */
        cnt = (int32_t *)lt__arena_alloc(ctx, (size_t)(V + 1) * sizeof(int32_t));
        if (!cnt) return;
    }
    stage = (int32_t *)lt__cu_pinned(ctx, (size_t)total * sizeof(int32_t));
    nd->ids_dev = (int32_t *)lt__cu_alloc(ctx, (size_t)total * sizeof(int32_t));
    if (!stage || !nd->ids_dev) return;
    lt__cu_stage_ids(stage, ids, n, V, cnt);
    lt__cu_ok(ctx, cudaMemcpyAsync(nd->ids_dev, stage, (size_t)total * sizeof(int32_t), cudaMemcpyHostToDevice,
                                   ctx->cuda->stream), "copying ids to the device");
    if (ctx->cuda->rec) lt__cu_rec_ids(ctx, stage, ids, n, V);   /* a graph replays this copy */
}
/* W (V, C), ids (N) -> y (N, C) = W[ids] */
__global__ void lt__k_embedding(float *y, const float *w, const int32_t *ids, int64_t N, int64_t C) {
    LT__CU_LOOP(i, N * C) y[i] = w[(int64_t)ids[i / C] * C + i % C];
}
/* dW[id] += Σ over id's rows (in row order) of dy: block u handles distinct id u */
__global__ void lt__k_embedding_bwd(float *gw, const float *gy, const int32_t *grp, int64_t N, int64_t C) {
    const int32_t *uid = grp + 1, *start = uid + N, *rows = start + N + 1;
    int32_t u = (int32_t)blockIdx.x, a, b, k;
    int64_t j;
    if (u >= grp[0]) return;
    a = start[u]; b = start[u + 1];
    for (j = threadIdx.x; j < C; j += blockDim.x) {
        float s = gw[(int64_t)uid[u] * C + j];
        for (k = a; k < b; k++) s += gy[(int64_t)rows[k] * C + j];
        gw[(int64_t)uid[u] * C + j] = s;
    }
}
static void lt__embedding_fwd_cuda(lt__node *nd) {
    int64_t C = nd->in[0]->shape[1], N = nd->out->n / C;
    if (!lt__cu_begin(nd)) return;
    lt__k_embedding<<<lt__cu_blocks(N * C), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(nd->ctx, nd->in[0]),
                                                                                nd->ids_dev, N, C);
    LT__CU_LAUNCHED(nd->ctx, "embedding");
}
static void lt__embedding_bwd_cuda(lt__node *nd) {
    int64_t C = nd->in[0]->shape[1], N = nd->out->n / C;
    float *gw;
    if (!lt__cu_begin(nd) || !(gw = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    /* one block per possible distinct id (N of them at most; the extra blocks return at once) */
    lt__k_embedding_bwd<<<(unsigned)N, 128, 0, LT__CU_STREAM(nd)>>>(gw, nd->out->grad, nd->ids_dev + N, N, C);
    LT__CU_LAUNCHED(nd->ctx, "embedding");
}

/* dropout draws its masks from the context's RNG on the host; the device has no such stream yet */
/* the 16-bit-storage rows of the CPU: their ops pick them only on LT_CPU */
LT__CU_MISSING(attention16)
LT__CU_MISSING(layernorm16)
LT__CU_MISSING(gelu16)
LT__CU_MISSING(linear_ce16)
/* the float32 heads and losses (lt_linear_cross_entropy's column blocks, lt_gpt_loss's
   exponentials kept): CPU-only; lt_gpt's loss keeps lt_linear + lt_cross_entropy on a device */
LT__CU_MISSING(linear_ce)
LT__CU_MISSING(linear_ce_exp)
LT__CU_MISSING(rmsnorm16)
LT__CU_MISSING(attention_gqa16)
LT__CU_MISSING(swiglu16)
LT__CU_MISSING(dropout)

/* -- transpose: a copy with two dims swapped --------------------------------------------------- */
/* y index k = (i0,i1,i2,i3) in y's shape; x offset = Σ i_d·st_d with x's strides permuted */
struct lt__cu_tr { int64_t ys[4], st[4]; };
__global__ void lt__k_transpose(float *dst, const float *src, lt__cu_tr p, int64_t n, int accumulate) {
    LT__CU_LOOP(k, n) {
        int64_t r = k, o = 0;
        int d;
        for (d = 3; d >= 0; d--) { o += (r % p.ys[d]) * p.st[d]; r /= p.ys[d]; }
        if (accumulate) dst[o] += src[k];
        else dst[k] = src[o];
    }
}
static lt__cu_tr lt__cu_tr_of(const lt__node *nd) {
    lt__cu_tr p;
    int d, d0 = (int)LT__TR_D0(nd), d1 = (int)LT__TR_D1(nd);
    int64_t t;
    p.st[3] = 1;
    for (d = 2; d >= 0; d--) p.st[d] = p.st[d + 1] * nd->in[0]->shape[d + 1];
    t = p.st[d0]; p.st[d0] = p.st[d1]; p.st[d1] = t;
    for (d = 0; d < 4; d++) p.ys[d] = nd->out->shape[d];
    return p;
}
static void lt__transpose_fwd_cuda(lt__node *nd) {
    if (!lt__cu_begin(nd)) return;
    lt__k_transpose<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        nd->out->data, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_tr_of(nd), nd->out->n, 0);
    LT__CU_LAUNCHED(nd->ctx, "transpose");
}
static void lt__transpose_bwd_cuda(lt__node *nd) {
    float *gx;
    if (!lt__cu_begin(nd) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_transpose<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, nd->out->grad, lt__cu_tr_of(nd),
                                                                                     nd->out->n, 1);
    LT__CU_LAUNCHED(nd->ctx, "transpose");
}

/* -- @@CUDA.attention  attention: fused, causal, flash-style ---------------------------------- */
/* One warp per (b, h, query t); lane l holds head dims l, l+32, ... (D <= 32·LT__CU_DK).  Keys are
   visited once with an online softmax (Milakov & Gimelshein 2018; Dao et al. 2022): a running max
   m, normaliser l and output acc rescaled by exp(m_old - m_new) as each key arrives, so no T×T
   matrix is stored.  Saves lse_t = m + log l per row (save[0]: B·H·T of its floats); backward
   recomputes p_tu = exp(s_tu - lse_t):
     Δ_t = dy_t·y_t,  ds_tu = p_tu (dy_t·v_u - Δ_t),
     dq_t += scale Σ_u ds_tu k_u  (a warp per query),  dk_u += scale Σ_t ds_tu q_t,
     dv_u += Σ_t p_tu dy_t  (a warp per key).  Query rows t >= len give 0, keys u >= len are masked.
   lt_attention_gqa runs the same kernels: q, k, v at their own row strides, query head h reading
   kv head h/G, and the warp of key u of kv head j summing over its G query heads (no atomics). */
#define LT__CU_DK 8
__device__ float lt__cu_wsum(float v) {
    int o;
    for (o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* Where q, k, v are: row r (= b·T + t) of part w at p[w] + r·ld[w], head j at j·D (fused qkv: ld 3C,
   k at +C, v at +2C; lt_attention_gqa: its q [B,T,H·D], k, v [B,T,Hkv·D]); query head h reads key/value
   head h/G.  C is y's row (H·D). */
struct lt__cu_att { int64_t B, T, C, H, D, G, ldq, ldkv; float scale; const int32_t *lens; };
/* row (b,h,t) of the warp over nh heads, its length */
__device__ int lt__cu_att_row(const lt__cu_att &a, int64_t nh, int64_t *b, int64_t *h, int64_t *t, int64_t *len) {
    int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (w >= a.B * nh * a.T) return 0;
    *t = w % a.T; *h = w / a.T % nh; *b = w / (a.T * nh);
    *len = a.lens ? a.lens[*b] : a.T;
    return 1;
}
__global__ void lt__k_attention(float *y, float *lse, const float *qp, const float *kp, const float *vp, lt__cu_att a) {
    int64_t b, h, t, len, u;
    int lane = threadIdx.x & 31, k;
    float q[LT__CU_DK], acc[LT__CU_DK], m = -INFINITY, l = 0;
    const float *qr, *kb, *vb;
    float *yr;
    if (!lt__cu_att_row(a, a.H, &b, &h, &t, &len)) return;
    qr = qp + (b * a.T + t) * a.ldq + h * a.D;
    kb = kp + b * a.T * a.ldkv + h / a.G * a.D;
    vb = vp + b * a.T * a.ldkv + h / a.G * a.D;
    yr = y + (b * a.T + t) * a.C + h * a.D;
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        q[k] = d < a.D ? qr[d] : 0.0f;
        acc[k] = 0.0f;
    }
    if (t < len)
        for (u = 0; u <= t; u++) {
            float s = 0, mn, corr, p;
            for (k = 0; k < LT__CU_DK; k++) {
                int64_t d = lane + 32 * k;
                if (d < a.D) s += q[k] * kb[u * a.ldkv + d];
            }
            s = lt__cu_wsum(s) * a.scale;
            mn = fmaxf(m, s);
            corr = expf(m - mn);
            p = expf(s - mn);
            l = l * corr + p;
            for (k = 0; k < LT__CU_DK; k++) {
                int64_t d = lane + 32 * k;
                acc[k] = acc[k] * corr + (d < a.D ? p * vb[u * a.ldkv + d] : 0.0f);
            }
            m = mn;
        }
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        if (d < a.D) yr[d] = t < len ? acc[k] / l : 0.0f;
    }
    if (lane == 0) lse[(b * a.H + h) * a.T + t] = t < len ? m + logf(l) : 0.0f;
}
/* Δ_t = dy_t·y_t per row */
__global__ void lt__k_attention_delta(float *delta, const float *y, const float *gy, lt__cu_att a) {
    int64_t b, h, t, len, d;
    float s = 0;
    if (!lt__cu_att_row(a, a.H, &b, &h, &t, &len)) return;
    for (d = threadIdx.x & 31; d < a.D; d += 32) s += y[(b * a.T + t) * a.C + h * a.D + d] * gy[(b * a.T + t) * a.C + h * a.D + d];
    s = lt__cu_wsum(s);
    if ((threadIdx.x & 31) == 0) delta[(b * a.H + h) * a.T + t] = s;
}
/* dq_t for the warp's query row */
__global__ void lt__k_attention_dq(float *gq, const float *qp, const float *kp, const float *vp, const float *gy,
                                   const float *lse, const float *delta, lt__cu_att a) {
    int64_t b, h, t, len, u, row;
    int lane = threadIdx.x & 31, k;
    float q[LT__CU_DK], dy[LT__CU_DK], dq[LT__CU_DK], L, Dt;
    const float *kb, *vb;
    if (!lt__cu_att_row(a, a.H, &b, &h, &t, &len) || t >= len) return;
    row = (b * a.H + h) * a.T + t;
    L = lse[row]; Dt = delta[row];
    kb = kp + b * a.T * a.ldkv + h / a.G * a.D;
    vb = vp + b * a.T * a.ldkv + h / a.G * a.D;
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        q[k] = d < a.D ? qp[(b * a.T + t) * a.ldq + h * a.D + d] : 0.0f;
        dy[k] = d < a.D ? gy[(b * a.T + t) * a.C + h * a.D + d] : 0.0f;
        dq[k] = 0.0f;
    }
    for (u = 0; u <= t; u++) {
        float s = 0, dp = 0, p, ds;
        for (k = 0; k < LT__CU_DK; k++) {
            int64_t d = lane + 32 * k;
            if (d < a.D) { s += q[k] * kb[u * a.ldkv + d]; dp += dy[k] * vb[u * a.ldkv + d]; }
        }
        s = lt__cu_wsum(s);
        dp = lt__cu_wsum(dp);
        p = expf(s * a.scale - L);
        ds = p * (dp - Dt);
        for (k = 0; k < LT__CU_DK; k++) {
            int64_t d = lane + 32 * k;
            if (d < a.D) dq[k] += ds * kb[u * a.ldkv + d];
        }
    }
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        if (d < a.D) gq[(b * a.T + t) * a.ldq + h * a.D + d] += a.scale * dq[k];
    }
}
/* dk_u, dv_u for the warp's key row u of kv head j (the row index plays the key), summed over the G
   query heads jG.. in order (gk or gv NULL: not wanted) */
__global__ void lt__k_attention_dkv(float *gk, float *gv, const float *qp, const float *kp, const float *vp,
                                    const float *gy, const float *lse, const float *delta, lt__cu_att a) {
    int64_t b, j, u, len, t, i;
    int lane = threadIdx.x & 31, k;
    float kk[LT__CU_DK], vv[LT__CU_DK], dk[LT__CU_DK], dv[LT__CU_DK];
    if (!lt__cu_att_row(a, a.H / a.G, &b, &j, &u, &len) || u >= len) return;
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        kk[k] = d < a.D ? kp[(b * a.T + u) * a.ldkv + j * a.D + d] : 0.0f;
        vv[k] = d < a.D ? vp[(b * a.T + u) * a.ldkv + j * a.D + d] : 0.0f;
        dk[k] = dv[k] = 0.0f;
    }
    for (i = 0; i < a.G; i++) {
        int64_t h = j * a.G + i;
        const float *qb = qp + b * a.T * a.ldq + h * a.D, *gb = gy + b * a.T * a.C + h * a.D;
        for (t = u; t < len; t++) {
            float s = 0, dp = 0, p, ds;
            int64_t row = (b * a.H + h) * a.T + t;
            for (k = 0; k < LT__CU_DK; k++) {
                int64_t d = lane + 32 * k;
                if (d < a.D) { s += qb[t * a.ldq + d] * kk[k]; dp += gb[t * a.C + d] * vv[k]; }
            }
            s = lt__cu_wsum(s);
            dp = lt__cu_wsum(dp);
            p = expf(s * a.scale - lse[row]);
            ds = p * (dp - delta[row]);
            for (k = 0; k < LT__CU_DK; k++) {
                int64_t d = lane + 32 * k;
                if (d < a.D) { dv[k] += p * gb[t * a.C + d]; dk[k] += ds * qb[t * a.ldq + d]; }
            }
        }
    }
    for (k = 0; k < LT__CU_DK; k++) {
        int64_t d = lane + 32 * k;
        if (d < a.D) {
            if (gk) gk[(b * a.T + u) * a.ldkv + j * a.D + d] += a.scale * dk[k];
            if (gv) gv[(b * a.T + u) * a.ldkv + j * a.D + d] += dv[k];
        }
    }
}
/* the record's sizes: fused qkv (attention), or q, k, v apart (attention_gqa, Hkv = LT__GQA_HKV) */
static int lt__cu_att_of(lt__node *nd, lt__cu_att *a) {
    int gqa = nd->op == LT__OP(attention_gqa);
    a->B = LT__ATT_B(nd); a->T = LT__ATT_T(nd); a->C = LT__ATT_C(nd); a->H = LT__ATT_H(nd); a->D = a->C / a->H;
    a->G = gqa ? a->H / LT__GQA_HKV(nd) : 1;
    a->ldq = gqa ? a->C : 3 * a->C;
    a->ldkv = gqa ? LT__GQA_HKV(nd) * a->D : 3 * a->C;
    a->scale = 1.0f / sqrtf((float)a->D);
    a->lens = nd->ids ? nd->ids_dev : NULL;
    if (a->D > 32 * LT__CU_DK) {
        lt_set_error(nd->ctx, LT_ERR_ARG, "%s%s%s on cuda: head size %lld: the CUDA kernel takes at most %d",
                     gqa ? "lt_attention_gqa" : "lt_attention", nd->scope ? " in " : "", nd->scope ? nd->scope : "",
                     (long long)a->D, 32 * LT__CU_DK);
        return 0;
    }
    return 1;
}
#define LT__CU_WARPS(rows) (unsigned)(((rows) * 32 + 255) / 256), 256
/* forward from q, k, v (p[0..2]); backward adds into g[0..2] (NULL: not wanted) */
static void lt__cu_att_fwd(lt__node *nd, const lt__cu_att *a, const float *const *p) {
    lt__k_attention<<<LT__CU_WARPS(a->B * a->H * a->T), 0, LT__CU_STREAM(nd)>>>(nd->out->data, nd->save[0], p[0], p[1], p[2], *a);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__cu_att_bwd(lt__node *nd, const lt__cu_att *a, const float *const *p, float *const *g) {
    float *delta = (float *)lt__cu_alloc(nd->ctx, (size_t)(a->B * a->H * a->T) * sizeof(float));
    if (!delta) return;
    lt__k_attention_delta<<<LT__CU_WARPS(a->B * a->H * a->T), 0, LT__CU_STREAM(nd)>>>(delta, nd->out->data, nd->out->grad, *a);
    if (g[0])
        lt__k_attention_dq<<<LT__CU_WARPS(a->B * a->H * a->T), 0, LT__CU_STREAM(nd)>>>(g[0], p[0], p[1], p[2], nd->out->grad,
                                                                                      nd->save[0], delta, *a);
    if (g[1] || g[2])
        lt__k_attention_dkv<<<LT__CU_WARPS(a->B * (a->H / a->G) * a->T), 0, LT__CU_STREAM(nd)>>>(
            g[1], g[2], p[0], p[1], p[2], nd->out->grad, nd->save[0], delta, *a);
    LT__CU_LAUNCHED(nd->ctx, nd->op->name);
}
static void lt__attention_fwd_cuda(lt__node *nd) {
    lt__cu_att a;
    const float *p[3];
    if (!lt__cu_begin(nd) || !lt__cu_att_of(nd, &a)) return;
    p[0] = lt__cu_data(nd->ctx, nd->in[0]); p[1] = p[0] + a.C; p[2] = p[0] + 2 * a.C;
    lt__cu_att_fwd(nd, &a, p);
}
static void lt__attention_bwd_cuda(lt__node *nd) {
    lt__cu_att a;
    const float *p[3];
    float *g[3];
    if (!lt__cu_begin(nd) || !lt__cu_att_of(nd, &a) || !(g[0] = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    p[0] = lt__cu_data(nd->ctx, nd->in[0]); p[1] = p[0] + a.C; p[2] = p[0] + 2 * a.C;
    g[1] = g[0] + a.C; g[2] = g[0] + 2 * a.C;
    lt__cu_att_bwd(nd, &a, p, g);
}
/* attention_gqa: the same kernels on q, k, v apart; each kv head's dk, dv warp sums its G query heads */
static void lt__attention_gqa_fwd_cuda(lt__node *nd) {
    lt__cu_att a;
    const float *p[3];
    int w;
    if (!lt__cu_begin(nd) || !lt__cu_att_of(nd, &a)) return;
    for (w = 0; w < 3; w++) p[w] = lt__cu_data(nd->ctx, nd->in[w]);
    lt__cu_att_fwd(nd, &a, p);
}
static void lt__attention_gqa_bwd_cuda(lt__node *nd) {
    lt__cu_att a;
    const float *p[3];
    float *g[3];
    int w;
    if (!lt__cu_begin(nd) || !lt__cu_att_of(nd, &a)) return;
    for (w = 0; w < 3; w++) { p[w] = lt__cu_data(nd->ctx, nd->in[w]); g[w] = lt__cu_grad(nd->ctx, nd->in[w]); }
    if (lt_failed(nd->ctx) || (!g[0] && !g[1] && !g[2])) return;
    lt__cu_att_bwd(nd, &a, p, g);
}

/* -- @@CUDA.losses  losses ----------------------------------------------------------------------- */
/* cross-entropy: a block per row: row_r = logsumexp(x_r) - x_r[t_r] (0 for ignored rows), then
   loss = Σ row / denom (two-stage sum); backward dx_r += g·(softmax(x_r) - onehot(t_r)),
   g = dloss/denom read on the device */
__device__ void lt__cu_row_lse(const float *x, int64_t V, float *m, float *ls) {
    float mx = -INFINITY;
    double s = 0;
    int64_t j;
    for (j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, x[j]);
    mx = lt__cu_block_max(mx);
    for (j = threadIdx.x; j < V; j += blockDim.x) s += expf(x[j] - mx);
    s = lt__cu_block_sum(s);
    *m = mx;
    *ls = (float)log(s);
}
__global__ void lt__k_ce_rows(float *row, const float *x, const int32_t *tg, int64_t V) {
    int32_t t = tg[blockIdx.x];
    float m, ls;
    if (t == LT_IGNORE_INDEX) { if (threadIdx.x == 0) row[blockIdx.x] = 0.0f; return; }
    lt__cu_row_lse(x + (int64_t)blockIdx.x * V, V, &m, &ls);
    if (threadIdx.x == 0) row[blockIdx.x] = (m - x[(int64_t)blockIdx.x * V + t]) + ls;
}
__global__ void lt__k_ce_bwd(float *gx, const float *x, const int32_t *tg, int64_t V, const float *gy, double denom) {
    int32_t t = tg[blockIdx.x];
    const float *xr = x + (int64_t)blockIdx.x * V;
    float *gr = gx + (int64_t)blockIdx.x * V, m, ls, g = (float)(gy[0] / denom);
    int64_t j;
    if (t == LT_IGNORE_INDEX) return;
    lt__cu_row_lse(xr, V, &m, &ls);
    for (j = threadIdx.x; j < V; j += blockDim.x) gr[j] += g * expf((xr[j] - m) - ls) - (j == t ? g : 0.0f);
}
static void lt__cross_entropy_fwd_cuda(lt__node *nd) {
    int64_t V = LT__CE_V(nd), R = nd->in[0]->n / V;
    if (!lt__cu_begin(nd)) return;
    lt__k_ce_rows<<<(unsigned)R, LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->save[0], lt__cu_data(nd->ctx, nd->in[0]), nd->ids_dev, V);
    lt__cu_reduce(nd->ctx, nd->save[0], NULL, R, 0, LT__CE_DENOM(nd) > 0 ? 1.0 / LT__CE_DENOM(nd) : 0.0, nd->out->data);
    LT__CU_LAUNCHED(nd->ctx, "cross_entropy");
}
static void lt__cross_entropy_bwd_cuda(lt__node *nd) {
    int64_t V = LT__CE_V(nd), R = nd->in[0]->n / V;
    float *gx;
    if (!lt__cu_begin(nd) || !(LT__CE_DENOM(nd) > 0) || !(gx = lt__cu_grad(nd->ctx, nd->in[0]))) return;
    lt__k_ce_bwd<<<(unsigned)R, LT__CU_T, 0, LT__CU_STREAM(nd)>>>(gx, lt__cu_data(nd->ctx, nd->in[0]), nd->ids_dev, V,
                                                                   nd->out->grad, LT__CE_DENOM(nd));
    LT__CU_LAUNCHED(nd->ctx, "cross_entropy");
}
/* mse: Σ(p - t)²/n;  dp += g·2(p - t)/n, dt -= the same */
__global__ void lt__k_mse_bwd(float *gp, float *gt, const float *p, const float *t, const float *gy, int64_t n) {
    float g = gy[0] * 2.0f / (float)n;
    LT__CU_LOOP(i, n) {
        float d = g * (p[i] - t[i]);
        if (gp) gp[i] += d;
        if (gt) gt[i] -= d;
    }
}
static void lt__mse_fwd_cuda(lt__node *nd) {
    if (!lt__cu_begin(nd)) return;
    lt__cu_reduce(nd->ctx, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_data(nd->ctx, nd->in[1]), nd->in[0]->n, 1,
                  1.0 / (double)nd->in[0]->n, nd->out->data);
}
static void lt__mse_bwd_cuda(lt__node *nd) {
    float *gp, *gt;
    if (!lt__cu_begin(nd)) return;
    gp = lt__cu_grad(nd->ctx, nd->in[0]);
    gt = lt__cu_grad(nd->ctx, nd->in[1]);
    if (lt_failed(nd->ctx) || (!gp && !gt)) return;
    lt__k_mse_bwd<<<lt__cu_blocks(nd->in[0]->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(
        gp, gt, lt__cu_data(nd->ctx, nd->in[0]), lt__cu_data(nd->ctx, nd->in[1]), nd->out->grad, nd->in[0]->n);
    LT__CU_LAUNCHED(nd->ctx, "mse");
}

/* -- matmul, linear, conv1d: cuBLAS --------------------------------------------------------------- */
/* The float32 ops: the products of the CPU kernels (@@OPS), written through lt__cu_gemm; the bias
   is added by a kernel, its gradient is a column sum. */
__global__ void lt__k_bias_rows(float *y, const float *b, int64_t n, int64_t O) { LT__CU_LOOP(i, n) y[i] += b[i % O]; }

static void lt__matmul_fwd_cuda(lt__node *nd) {
    lt_ctx *ctx = nd->ctx;
    int ta = (LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd);
    if (!lt__cu_begin(nd)) return;
    lt__cu_gemm(ctx, "matmul", LT_F32, ta, tb, M, N, K, 1.0f, lt__cu_data(ctx, nd->in[0]), ta ? M : K, M * K,
                lt__cu_data(ctx, nd->in[1]), tb ? K : N, shared ? 0 : K * N, 0.0f, nd->out->data, N, M * N, nb);
}
/* The backward products of matmul (as lt__matmul_bwd), for float32 operands (prec LT_F32) or
   16-bit ones (A16/B16/dY16 then point to 16-bit arrays); out16: C += round16(product) through
   a float32 temporary instead of C += product. */
static void lt__cu_mm(lt_ctx *ctx, int prec, int ta, int tb, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                      int64_t sA, const void *B, int64_t ldb, int64_t sB, float *C, int64_t ldc, int64_t sC, int64_t nb) {
    if (prec == LT_F32) {
        lt__cu_gemm(ctx, "matmul backward", LT_F32, ta, tb, M, N, K, 1.0f, A, lda, sA, B, ldb, sB, 1.0f, C, ldc, sC, nb);
    } else {   /* C (contiguous: ldc = N, sC = M·N or 0 with nb = 1) += round16(product) */
        float *t = (float *)lt__cu_alloc(ctx, (size_t)(nb * M * N) * sizeof(float));
        if (!t) return;
        lt__cu_gemm(ctx, "16-bit matmul backward", prec, ta, tb, M, N, K, 1.0f, A, lda, sA, B, ldb, sB, 0.0f, t, N, M * N, nb);
        lt__k_epilogue16<<<lt__cu_blocks(nb * M * N), LT__CU_T, 0, ctx->cuda->stream>>>(C, t, NULL, nb * M * N, N, 1, prec);
        LT__CU_LAUNCHED(ctx, "16-bit matmul backward");
        (void)ldc; (void)sC;
    }
}
/* dA and dB of y = op(a)·op(b); a16/b16/gy16: 16-bit copies for prec != LT_F32 */
static void lt__cu_matmul_grads(lt__node *nd, int prec, const void *a, const void *b, const void *gy, float *ga, float *gb) {
    lt_ctx *ctx = nd->ctx;
    int ta = (LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd), q;
    int64_t lda = ta ? M : K, ldb = tb ? K : N, sb = shared ? 0 : K * N, es = prec == LT_F32 ? 4 : 2;
    if (ga) {
        if (!ta) lt__cu_mm(ctx, prec, 0, !tb, M, K, N, gy, N, M * N, b, ldb, sb, ga, K, M * K, nb);   /* dA = dY op(B)ᵀ */
        else lt__cu_mm(ctx, prec, tb, 1, K, M, N, b, ldb, sb, gy, N, M * N, ga, M, M * K, nb);        /* dAs = op(B) dYᵀ */
    }
    if (gb && shared && !ta) {   /* b shared by every batch: one product over all batches' rows */
        if (!tb) lt__cu_mm(ctx, prec, 1, 0, K, N, nb * M, a, K, 0, gy, N, 0, gb, N, 0, 1);           /* dB = Aᵀ dY */
        else lt__cu_mm(ctx, prec, 1, 0, N, K, nb * M, gy, N, 0, a, K, 0, gb, K, 0, 1);               /* dBs = dYᵀ A */
    } else if (gb && shared) {   /* shared b, a transposed: one batch at a time */
        for (q = 0; q < nb; q++) {
            const char *aq = (const char *)a + q * M * K * es, *gq = (const char *)gy + q * M * N * es;
            if (!tb) lt__cu_mm(ctx, prec, !ta, 0, K, N, M, aq, lda, 0, gq, N, 0, gb, N, 0, 1);
            else lt__cu_mm(ctx, prec, 1, ta, N, K, M, gq, N, 0, aq, lda, 0, gb, K, 0, 1);
        }
    } else if (gb) {
        if (!tb) lt__cu_mm(ctx, prec, !ta, 0, K, N, M, a, lda, M * K, gy, N, M * N, gb, N, K * N, nb);  /* dB = op(A)ᵀ dY */
        else lt__cu_mm(ctx, prec, 1, ta, N, K, M, gy, N, M * N, a, lda, M * K, gb, K, K * N, nb);       /* dBs = dYᵀ op(A) */
    }
}
static void lt__matmul_bwd_cuda(lt__node *nd) {
    lt_ctx *ctx = nd->ctx;
    float *ga, *gb;
    if (!lt__cu_begin(nd)) return;
    ga = lt__cu_grad(ctx, nd->in[0]);
    gb = lt__cu_grad(ctx, nd->in[1]);
    if (lt_failed(ctx)) return;
    lt__cu_matmul_grads(nd, LT_F32, lt__cu_data(ctx, nd->in[0]), lt__cu_data(ctx, nd->in[1]), nd->out->grad, ga, gb);
}

/* linear (wt = 1: W [O,I], y = x·Wᵀ + b) and conv1d (wt = 0: W [I,O], y = x·W + b); x is (R, I) */
static void lt__cu_affine_fwd(lt__node *nd, int wt) {
    lt_ctx *ctx = nd->ctx;
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    if (!lt__cu_begin(nd)) return;
    lt__cu_gemm(ctx, nd->op->name, LT_F32, 0, wt, R, O, Ci, 1.0f, lt__cu_data(ctx, nd->in[0]), Ci, 0,
                lt__cu_data(ctx, nd->in[1]), wt ? Ci : O, 0, 0.0f, nd->out->data, O, 0, 1);
    if (nd->in[2])
        lt__k_bias_rows<<<lt__cu_blocks(R * O), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, lt__cu_data(ctx, nd->in[2]),
                                                                                    R * O, O);
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
/* dx += dy·W (linear) or dy·Wᵀ (conv1d); dW += dyᵀ·x (linear) or xᵀ·dy (conv1d); db += Σ_rows dy.
   prec != LT_F32: x, w, gy are 16-bit arrays and every term is rounded once before it is added. */
static void lt__cu_affine_grads(lt__node *nd, int wt, int prec, const void *x, const void *w, const void *gy,
                                const float *gy32, float *gx, float *gw, float *gb) {
    lt_ctx *ctx = nd->ctx;
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    if (gx) lt__cu_mm(ctx, prec, 0, !wt, R, Ci, O, gy, O, 0, w, wt ? Ci : O, 0, gx, Ci, 0, 1);
    if (gw) {
        if (wt) lt__cu_mm(ctx, prec, 1, 0, O, Ci, R, gy, O, 0, x, Ci, 0, gw, Ci, 0, 1);
        else lt__cu_mm(ctx, prec, 1, 0, Ci, O, R, x, Ci, 0, gy, O, 0, gw, O, 0, 1);
    }
    if (gb) lt__cu_colsum(ctx, gy32, NULL, R, O, 1.0f, prec == LT_F32 ? 0 : prec, gb);
}
static void lt__cu_affine_bwd(lt__node *nd, int wt) {
    lt_ctx *ctx = nd->ctx;
    float *gx, *gw, *gb;
    if (!lt__cu_begin(nd)) return;
    gx = lt__cu_grad(ctx, nd->in[0]);
    gw = lt__cu_grad(ctx, nd->in[1]);
    gb = lt__cu_grad(ctx, nd->in[2]);
    if (lt_failed(ctx)) return;
    lt__cu_affine_grads(nd, wt, LT_F32, lt__cu_data(ctx, nd->in[0]), lt__cu_data(ctx, nd->in[1]), nd->out->grad,
                        nd->out->grad, gx, gw, gb);
}
static void lt__linear_fwd_cuda(lt__node *nd) { lt__cu_affine_fwd(nd, 1); }
static void lt__linear_bwd_cuda(lt__node *nd) { lt__cu_affine_bwd(nd, 1); }
static void lt__conv1d_fwd_cuda(lt__node *nd) { lt__cu_affine_fwd(nd, 0); }
static void lt__conv1d_bwd_cuda(lt__node *nd) { lt__cu_affine_bwd(nd, 0); }

/* -- the 16-bit rows (lt_set_precision): bf16/fp16 tensor-core GEMMs, float32 accumulation ------- */
/* As the CPU rows (@@OPS, matmul16): operands rounded to 16 bit, y = round16(product + round16(b)),
   backward rounds dy in place and adds round16 of each product.  The record's 16-bit copies
   (save[j], made by the forward) are what cuBLAS reads; an operand without one (a parameter) is
   converted into a temporary for each product. */
static const unsigned short *lt__cu_16(lt_ctx *ctx, int prec, const float *x, int64_t n, unsigned short *dst) {
    if (!dst) dst = (unsigned short *)lt__cu_alloc(ctx, (size_t)n * sizeof(unsigned short));
    if (!dst) return NULL;
    lt__k_to16<<<lt__cu_blocks(n), LT__CU_T, 0, ctx->cuda->stream>>>(x, dst, n, prec);
    LT__CU_LAUNCHED(ctx, "a 16-bit conversion");
    return dst;
}
static const unsigned short *lt__cu_opnd16(lt__node *nd, int j) {
    if (nd->save[j]) return (const unsigned short *)(const void *)nd->save[j];
    return lt__cu_16(nd->ctx, lt__prec16(nd), lt__cu_data(nd->ctx, nd->in[j]), nd->in[j]->n, NULL);
}
/* The forward's copies (saved for backward) first, then the operands as cuBLAS reads them. */
static int lt__cu_fwd16(lt__node *nd, const unsigned short **a, const unsigned short **b) {
    int j, p = lt__prec16(nd);
    for (j = 0; j < 2; j++)
        if (nd->save[j]) lt__cu_16(nd->ctx, p, lt__cu_data(nd->ctx, nd->in[j]), nd->in[j]->n, (unsigned short *)(void *)nd->save[j]);
    *a = lt__cu_opnd16(nd, 0);
    *b = lt__cu_opnd16(nd, 1);
    return *a && *b && !lt_failed(nd->ctx);
}
/* dy rounded in place; its 16-bit copy for the products */
static const unsigned short *lt__cu_dy16(lt__node *nd) {
    int p = lt__prec16(nd);
    lt__k_round16<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->grad, nd->out->n, p);
    return lt__cu_16(nd->ctx, p, nd->out->grad, nd->out->n, NULL);
}
static void lt__matmul16_fwd_cuda(lt__node *nd) {
    lt_ctx *ctx = nd->ctx;
    int p = lt__prec16(nd), ta = (LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd);
    const unsigned short *a, *b;
    if (!lt__cu_begin(nd) || !lt__cu_fwd16(nd, &a, &b)) return;
    lt__cu_gemm(ctx, "matmul (16-bit)", p, ta, tb, M, N, K, 1.0f, a, ta ? M : K, M * K, b, tb ? K : N, shared ? 0 : K * N,
                0.0f, nd->out->data, N, M * N, nb);
    lt__k_epilogue16<<<lt__cu_blocks(nd->out->n), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, NULL, NULL, nd->out->n, N, 0, p);
    LT__CU_LAUNCHED(ctx, "matmul (16-bit)");
}
static void lt__matmul16_bwd_cuda(lt__node *nd) {
    lt_ctx *ctx = nd->ctx;
    float *ga, *gb;
    const unsigned short *dy;
    if (!lt__cu_begin(nd)) return;
    ga = lt__cu_grad(ctx, nd->in[0]);
    gb = lt__cu_grad(ctx, nd->in[1]);
    if (lt_failed(ctx) || !(dy = lt__cu_dy16(nd))) return;
    lt__cu_matmul_grads(nd, lt__prec16(nd), gb ? lt__cu_opnd16(nd, 0) : NULL, ga ? lt__cu_opnd16(nd, 1) : NULL, dy, ga, gb);
}
static void lt__cu_affine16_fwd(lt__node *nd, int wt) {
    lt_ctx *ctx = nd->ctx;
    int p = lt__prec16(nd);
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    const unsigned short *x, *w;
    if (!lt__cu_begin(nd) || !lt__cu_fwd16(nd, &x, &w)) return;
    lt__cu_gemm(ctx, nd->op->name, p, 0, wt, R, O, Ci, 1.0f, x, Ci, 0, w, wt ? Ci : O, 0, 0.0f, nd->out->data, O, 0, 1);
    lt__k_epilogue16<<<lt__cu_blocks(R * O), LT__CU_T, 0, LT__CU_STREAM(nd)>>>(nd->out->data, NULL,
                                                                                 lt__cu_data(ctx, nd->in[2]), R * O, O, 0, p);
    LT__CU_LAUNCHED(ctx, nd->op->name);
}
static void lt__cu_affine16_bwd(lt__node *nd, int wt) {
    lt_ctx *ctx = nd->ctx;
    float *gx, *gw, *gb;
    const unsigned short *dy;
    if (!lt__cu_begin(nd)) return;
    gx = lt__cu_grad(ctx, nd->in[0]);
    gw = lt__cu_grad(ctx, nd->in[1]);
    gb = lt__cu_grad(ctx, nd->in[2]);
    if (lt_failed(ctx) || !(dy = lt__cu_dy16(nd))) return;
    lt__cu_affine_grads(nd, wt, lt__prec16(nd), gw ? lt__cu_opnd16(nd, 0) : NULL, gx ? lt__cu_opnd16(nd, 1) : NULL, dy,
                        nd->out->grad, gx, gw, gb);
}
static void lt__linear16_fwd_cuda(lt__node *nd) { lt__cu_affine16_fwd(nd, 1); }
static void lt__linear16_bwd_cuda(lt__node *nd) { lt__cu_affine16_bwd(nd, 1); }
static void lt__conv1d16_fwd_cuda(lt__node *nd) { lt__cu_affine16_fwd(nd, 0); }
static void lt__conv1d16_bwd_cuda(lt__node *nd) { lt__cu_affine16_bwd(nd, 0); }

/* -- tape, gradients ------------------------------------------------------------------------------ */
__global__ void lt__k_seed(float *g, float seed, const float *seed_dev) { g[0] += seed_dev ? seed_dev[0] : seed; }
static const float *lt__cu_rec_seed(lt_ctx *ctx);   /* graphs: the seed a replay sets */
static lt_status lt__cu_seed(lt_ctx *ctx, lt_tensor *loss, float seed) {
    float *g;
    if (!lt__cu_params_ready(ctx) || !(g = lt__cu_grad(ctx, loss))) return ctx->status;
    lt__k_seed<<<1, 1, 0, ctx->cuda->stream>>>(g, seed, ctx->cuda->rec ? lt__cu_rec_seed(ctx) : NULL);
    LT__CU_LAUNCHED(ctx, "lt_backward");
    return ctx->status;
}
static void lt__cu_zero_grad(lt_ctx *ctx) {
    lt__cuda *cu = ctx->cuda;
    if (lt_failed(ctx) || !lt__cu_params_ready(ctx) || !cu->pdev) return;
    lt__cu_ok(ctx, cudaMemsetAsync(cu->pdev + cu->pfloats, 0, cu->pfloats * sizeof(float), cu->stream), "lt_zero_grad");
    cu->pstate = LT__CU_DEV_NEWER;
}

/* -- @@CUDA.optim  optimizers ---------------------------------------------------------------------- */
/* AdamW over every parameter in one launch: parameter i's elements are cut into chunks of
   LT__CU_ACHUNK, chunk c of the whole launch finds its parameter by binary search over the
   chunk offsets.  The arithmetic is lt__adamw_update's, operation for operation (__fmul_rn keeps
   nvcc from fusing a product into a later add where the CPU rounds it), so a step equals the CPU's
   (and torch's) bit for bit when both use fmaf. */
#define LT__CU_ACHUNK 4096
typedef struct {
    float *p, *g, *m, *v;
    int64_t n, chunk0;              /* first chunk of this parameter */
    float shrink, bc2_sqrt, neg_step;
} lt__cu_adam_job;
__global__ void lt__k_adamw(const lt__cu_adam_job *jobs, int njobs, float b1, float omb1, float b2, float omb2, float eps) {
    int lo = 0, hi = njobs - 1;
    int64_t c = blockIdx.x, i, e0, e1;
    const lt__cu_adam_job *j;
    while (lo < hi) { int mid = (lo + hi + 1) / 2; if (jobs[mid].chunk0 <= c) lo = mid; else hi = mid - 1; }
    j = &jobs[lo];
    e0 = (c - j->chunk0) * LT__CU_ACHUNK;
    e1 = e0 + LT__CU_ACHUNK < j->n ? e0 + LT__CU_ACHUNK : j->n;
    for (i = e0 + threadIdx.x; i < e1; i += blockDim.x) {
        float g = j->g[i], p = j->shrink != 1.0f ? __fmul_rn(j->p[i], j->shrink) : j->p[i];
        float mi = fmaf(omb1, g, __fmul_rn(j->m[i], b1));
        float vi = fmaf(__fmul_rn(omb2, g), g, __fmul_rn(j->v[i], b2));
        float den = __fadd_rn(__fdiv_rn(sqrtf(vi), j->bc2_sqrt), eps);
        j->m[i] = mi;
        j->v[i] = vi;
        j->p[i] = __fadd_rn(p, __fdiv_rn(__fmul_rn(j->neg_step, mi), den));
    }
}
/* SGD, as lt__sgd_update */
__global__ void lt__k_sgd(float *p, float *buf, const float *g, int64_t n, float wd, float mom, float omdamp, int nesterov,
                          int first, float neg_lr) {
    LT__CU_LOOP(i, n) {
        float d = g[i];
        if (wd != 0) d = fmaf(wd, p[i], d);
        if (buf) {
            float b = first ? d : fmaf(omdamp, d, __fmul_rn(buf[i], mom));
            buf[i] = b;
            d = nesterov ? fmaf(mom, b, d) : b;
        }
        p[i] = fmaf(neg_lr, d, p[i]);
    }
}
static int lt__cu_optim_ready(lt_optim *o) {
    lt_ctx *ctx = o->ctx;
    size_t bytes = 0;
    int i;
    for (i = 0; i < o->np; i++) bytes += (size_t)o->p[i]->n * (size_t)o->nstates * sizeof(float);
    if (!o->dev_block && bytes) {
        o->dev = lt__cu_table();   /* lt_optim_state / _destroy reach the state through it */
        if (!lt__cu_ok(ctx, cudaMalloc((void **)&o->dev_block, bytes), "the optimizer state")) return 0;
        o->dev_state = LT__CU_HOST_NEWER;
    }
    if (bytes && o->dev_state == LT__CU_HOST_NEWER) {
        if (!lt__cu_ok(ctx, cudaMemcpyAsync(o->dev_block, o->block, bytes, cudaMemcpyHostToDevice, ctx->cuda->stream),
                       "copying the optimizer state to the device"))
            return 0;
        o->dev_state = LT__CU_SAME;
    }
    for (i = 0; i < o->np; i++)   /* every parameter must live in the mirrored block */
        if (lt__cu_p(ctx, o->p[i]->data) == o->p[i]->data)
            return lt_set_error(ctx, LT_ERR_STATE, "lt_optim_step on cuda: parameter '%s' is not in the context's "
                                "parameter block", o->p[i]->name ? o->p[i]->name : "?"), 0;
    return 1;
}
static float *lt__cu_state(lt_optim *o, int i, int w) { return o->dev_block + (o->st[i * o->nstates + w] - o->block); }
static void lt__cu_optim_pull(lt_optim *o) {
    lt_ctx *ctx = o->ctx;
    size_t bytes = 0;
    int i;
    if (!o->dev_block) return;
    for (i = 0; i < o->np; i++) bytes += (size_t)o->p[i]->n * (size_t)o->nstates * sizeof(float);
    if (o->dev_state == LT__CU_DEV_NEWER && (ctx->cuda ? cudaStreamSynchronize(ctx->cuda->stream) : cudaDeviceSynchronize()) == cudaSuccess &&
        lt__cu_ok(ctx, cudaMemcpy(o->block, o->dev_block, bytes, cudaMemcpyDeviceToHost), "copying the optimizer state to the host"))
        o->dev_state = LT__CU_SAME;
    o->dev_state = o->dev_state == LT__CU_SAME ? LT__CU_HOST_NEWER : o->dev_state;   /* the caller may write it */
}
static void lt__cu_optim_free(lt_optim *o) {
    if (o->dev_block) cudaFree(o->dev_block);
    o->dev_block = NULL;
}
static lt_status lt__cu_optim_step(lt_optim *o, double lr) {
    lt_ctx *ctx = o->ctx;
    lt__cu_adam_job *jobs, *djobs;
    int i, nj = 0;
    int64_t chunks = 0;
    if (o->kind != LT__OPT_ADAMW && o->kind != LT__OPT_SGD) {   /* Lion, AdEMAMix, Muon, SOAP: on the host copies (correct; the bus is the price) */
        lt_status s;
        if (lt_sync_params(ctx) != LT_OK) return ctx->status;
        s = lt__optim_host_step(o, lr);
        lt_params_changed(ctx);
        return s;
    }
    if (lr < 0) lr = o->kind == LT__OPT_ADAMW ? o->adamw.lr : o->sgd.lr;
    if (!(lr - lr == 0))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_optim_step: the learning rate is %g (hint: check the schedule's settings)", lr);
    if (!lt__cu_params_ready(ctx) || !lt__cu_optim_ready(o)) return ctx->status;
    if (o->kind == LT__OPT_SGD) {
        const lt_sgd_config *c = &o->sgd;
        for (i = 0; i < o->np; i++) {
            lt_tensor *t = o->p[i];
            double wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
            if (!t->grad) continue;
            lt__k_sgd<<<lt__cu_blocks(t->n), LT__CU_T, 0, ctx->cuda->stream>>>(
                lt__cu_p(ctx, t->data), o->nstates ? lt__cu_state(o, i, 0) : NULL, lt__cu_p(ctx, t->grad), t->n, (float)wd,
                (float)c->momentum, (float)(1.0 - c->dampening), c->nesterov, !o->hasbuf[i], (float)(-lr));
            o->hasbuf[i] = 1;
            o->pstep[i]++;
        }
    } else {
        const lt_adamw_config *c = &o->adamw;
        jobs = (lt__cu_adam_job *)lt__arena_alloc(ctx, (size_t)o->np * sizeof(lt__cu_adam_job));
        djobs = (lt__cu_adam_job *)lt__cu_alloc(ctx, (size_t)o->np * sizeof(lt__cu_adam_job));
        if (!jobs || !djobs) return ctx->status;
        for (i = 0; i < o->np; i++) {
            lt_tensor *t = o->p[i];
            double step, bc1, bc2, wd;
            if (!t->grad) continue;
            step = (double)(++o->pstep[i]);
            bc1 = 1.0 - pow(c->beta1, step);
            bc2 = 1.0 - pow(c->beta2, step);
            wd = lt__opt_decays(c->decay_mode, t) ? c->weight_decay : 0.0;
            jobs[nj].p = lt__cu_p(ctx, t->data);
            jobs[nj].g = lt__cu_p(ctx, t->grad);
            jobs[nj].m = lt__cu_state(o, i, 0);
            jobs[nj].v = lt__cu_state(o, i, 1);
            jobs[nj].n = t->n;
            jobs[nj].chunk0 = chunks;
            jobs[nj].shrink = (float)(1.0 - lr * wd);
            jobs[nj].bc2_sqrt = (float)sqrt(bc2);
            jobs[nj].neg_step = (float)(-(lr / bc1));
            chunks += (t->n + LT__CU_ACHUNK - 1) / LT__CU_ACHUNK;
            nj++;
        }
        if (nj > 0) {
            /* the job list goes in through pinned staging: the copy is part of the stream's order */
            lt__cu_adam_job *stage = (lt__cu_adam_job *)lt__cu_pinned(ctx, (size_t)nj * sizeof(lt__cu_adam_job));
            if (!stage) return ctx->status;
            memcpy(stage, jobs, (size_t)nj * sizeof(lt__cu_adam_job));
            lt__cu_ok(ctx, cudaMemcpyAsync(djobs, stage, (size_t)nj * sizeof(lt__cu_adam_job), cudaMemcpyHostToDevice,
                                           ctx->cuda->stream), "lt_optim_step");
            lt__k_adamw<<<(unsigned)chunks, LT__CU_T, 0, ctx->cuda->stream>>>(djobs, nj, (float)c->beta1, (float)(1.0 - c->beta1),
                                                                             (float)c->beta2, (float)(1.0 - c->beta2), (float)c->eps);
        }
    }
    LT__CU_LAUNCHED(ctx, "lt_optim_step");
    ctx->cuda->pstate = LT__CU_DEV_NEWER;
    o->dev_state = LT__CU_DEV_NEWER;
    o->t++;
    return ctx->status;
}

/* -- @@CUDA.clip  clipping, loss scaling --------------------------------------------------------- */
/* Σ g² of each parameter (double, two stages) -> the host; mode 0 norm, 1 clip to a norm, 2 clamp.
   The norm and the finiteness test are torch's (as @@CLIP); the scaling runs on the device. */
__global__ void lt__k_mulc(float *g, float c, int64_t n) { LT__CU_LOOP(i, n) g[i] *= c; }
__global__ void lt__k_clamp(float *g, float c, int64_t n) {
    LT__CU_LOOP(i, n) { if (g[i] > c) g[i] = c; else if (g[i] < -c) g[i] = -c; }
}
static double lt__cu_clip(lt_ctx *ctx, lt_paramset ps, double limit, int mode) {
    lt__cuda *cu = ctx->cuda;
    double *part, acc = 0;
    float coef;
    int i, n = 0;
    if (lt_failed(ctx) || !lt__cu_params_ready(ctx)) return NAN;
    if (mode == 2) {
        for (i = 0; i < ps.n; i++)
            if (ps.p[i] && ps.p[i]->grad)
                lt__k_clamp<<<lt__cu_blocks(ps.p[i]->n), LT__CU_T, 0, cu->stream>>>(lt__cu_p(ctx, ps.p[i]->grad), (float)limit, ps.p[i]->n);
        cu->pstate = LT__CU_DEV_NEWER;
        LT__CU_LAUNCHED(ctx, "lt_clip_grad_value");
        return 0;
    }
    if (ps.n > 4096) { lt_set_error(ctx, LT_ERR_ARG, "lt_clip_grad_norm on cuda: more than 4096 parameters"); return NAN; }
    part = (double *)lt__cu_alloc(ctx, (size_t)ps.n * LT__CU_RB * sizeof(double) + (size_t)ps.n * sizeof(double));
    if (!part) return NAN;
    for (i = 0; i < ps.n; i++) {
        const lt_tensor *t = ps.p[i];
        if (!t || !t->grad) continue;
        lt__k_reduce<<<LT__CU_RB, LT__CU_T, 0, cu->stream>>>(lt__cu_p(ctx, t->grad), NULL, t->n, 2, part + (size_t)n * LT__CU_RB);
        n++;
    }
    if (n == 0) return 0;
    lt__k_reduce_finish<<<(unsigned)n, LT__CU_T, 0, cu->stream>>>(part, LT__CU_RB, 1.0, NULL, part + (size_t)ps.n * LT__CU_RB);
    if (!LT__CU_LAUNCHED(ctx, "lt_clip_grad_norm") ||
        !lt__cu_ok(ctx, cudaMemcpyAsync(cu->red, part + (size_t)ps.n * LT__CU_RB, (size_t)n * sizeof(double),
                                        cudaMemcpyDeviceToHost, cu->stream), "lt_clip_grad_norm") ||
        !lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "lt_clip_grad_norm"))
        return NAN;
    for (i = 0; i < n; i++) acc += cu->red[i];   /* per tensor, then the total: as @@CLIP */
    if (mode == 0) return sqrt(acc);
    acc = sqrt(acc);
    if (!(acc - acc == 0)) {
        int k = 0;
        for (i = 0; i < ps.n; i++) {
            const lt_tensor *t = ps.p[i];
            if (!t || !t->grad) continue;
            if (!(cu->red[k] - cu->red[k] == 0)) {
                lt_set_error(ctx, LT_ERR_NONFINITE, "lt_clip_grad_norm: the gradient norm is %g: '%s' has a non-finite "
                             "gradient; gradients left unclipped (hint: lower the learning rate, or look for a "
                             "log/divide of 0 in the loss)", acc, t->name ? t->name : "?");
                return acc;
            }
            k++;
        }
        lt_set_error(ctx, LT_ERR_NONFINITE, "lt_clip_grad_norm: the gradient norm is %g", acc);
        return acc;
    }
    coef = (1.0f / ((float)acc + (float)1e-6)) * (float)limit;
    if (coef > 1.0f) coef = 1.0f;
    for (i = 0; i < ps.n; i++)
        if (ps.p[i] && ps.p[i]->grad)
            lt__k_mulc<<<lt__cu_blocks(ps.p[i]->n), LT__CU_T, 0, cu->stream>>>(lt__cu_p(ctx, ps.p[i]->grad), coef, ps.p[i]->n);
    cu->pstate = LT__CU_DEV_NEWER;
    LT__CU_LAUNCHED(ctx, "lt_clip_grad_norm");
    return acc;
}
/* g *= inv for every gradient; *bad = 1 if any was inf/NaN (checked on the bits, before scaling) */
__global__ void lt__k_unscale(float *g, float inv, int64_t n, int *bad) {
    int b = 0;
    LT__CU_LOOP(i, n) {
        b |= (__float_as_uint(g[i]) & 0x7F800000u) == 0x7F800000u;
        g[i] *= inv;
    }
    if (__syncthreads_or(b) && threadIdx.x == 0) *bad = 1;
}
static int lt__cu_unscale(lt_ctx *ctx, lt_paramset ps, float inv) {
    lt__cuda *cu = ctx->cuda;
    int *bad, i;
    if (lt_failed(ctx) || !lt__cu_params_ready(ctx) || !(bad = (int *)lt__cu_alloc(ctx, sizeof(int)))) return 0;
    lt__cu_ok(ctx, cudaMemsetAsync(bad, 0, sizeof(int), cu->stream), "lt_scaler_unscale");
    for (i = 0; ps.p && i < ps.n; i++)
        if (ps.p[i] && ps.p[i]->grad)
            lt__k_unscale<<<lt__cu_blocks(ps.p[i]->n), LT__CU_T, 0, cu->stream>>>(lt__cu_p(ctx, ps.p[i]->grad), inv, ps.p[i]->n, bad);
    cu->pstate = LT__CU_DEV_NEWER;
    if (!LT__CU_LAUNCHED(ctx, "lt_scaler_unscale") ||
        !lt__cu_ok(ctx, cudaMemcpyAsync(cu->red, bad, sizeof(int), cudaMemcpyDeviceToHost, cu->stream), "lt_scaler_unscale") ||
        !lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "lt_scaler_unscale"))
        return 0;
    return *(int *)(void *)cu->red != 0;
}

/* -- @@CUDA.graphs  graphs: the compile mode on the device ------------------------------------------- */
/* lt_compile on LT_CUDA runs the step once eagerly (which grows the device arena and the pinned
   staging to their size), then runs it again inside cudaStreamBeginCapture: the kernels, cuBLAS
   calls and the ids' copies (from pinned staging) become one CUDA graph; nothing executes.  The
   arena hands out the same addresses on every step, so a replay (lt_plan_run) only refills the
   staging from the step's id arrays (ids_src, read again as the CPU plan does), sets the seed and
   launches the graph: one launch instead of a few thousand.  The parameters' gradients are left
   as they were (the eager run's are restored).  A step that reads a value back while it is being
   recorded (lt_item inside the step function) cannot be recorded and falls back to eager. */
typedef struct { int32_t *stage; const int32_t *src; int64_t n, V; } lt__cu_rec_in;
struct lt__cu_graph {
    cudaGraphExec_t exec;
    lt__cu_rec_in *in;
    int n_in, cap_in;
    int32_t *cnt;                  /* counting-sort scratch for the embeddings' grouping */
    int64_t cnt_cap;
    float *seed_dev, *seed_pin;    /* the backward seed, set before each launch */
    const float *loss_dev;
    const float *pdev;             /* the parameter mirror the graph was recorded against */
    size_t pin_used;               /* pinned staging the graph's copies read (kept out of later use) */
    int failed;
};
static void lt__cu_rec_ids(lt_ctx *ctx, int32_t *stage, const int32_t *src, int64_t n, int64_t V) {
    struct lt__cu_graph *g = ctx->cuda->rec;
    if (g->n_in == g->cap_in) {
        int cap = g->cap_in ? 2 * g->cap_in : 16;
        lt__cu_rec_in *p = (lt__cu_rec_in *)LT__REALLOC(g->in, (size_t)cap * sizeof(lt__cu_rec_in));
        if (!p) { g->failed = 1; return; }
        g->in = p;
        g->cap_in = cap;
    }
    g->in[g->n_in].stage = stage;
    g->in[g->n_in].src = src;
    g->in[g->n_in].n = n;
    g->in[g->n_in].V = V;
    g->n_in++;
    if (V + 1 > g->cnt_cap) g->cnt_cap = V + 1;
}
static const float *lt__cu_rec_seed(lt_ctx *ctx) { return ctx->cuda->rec->seed_dev; }
static void lt__cu_graph_free(struct lt__cu_graph *g) {
    if (!g) return;
    if (g->exec) cudaGraphExecDestroy(g->exec);
    if (g->seed_dev) cudaFree(g->seed_dev);
    if (g->seed_pin) cudaFreeHost(g->seed_pin);
    LT__FREE(g->in);
    LT__FREE(g->cnt);
    LT__FREE(g);
}
static lt_plan *lt__cu_compile(lt_ctx *ctx, lt_plan *p) {
    lt__cuda *cu = ctx->cuda;
    struct lt__cu_graph *g = NULL;
    float *saved = NULL;
    lt_tensor *loss;
    cudaGraph_t graph = NULL;
    cudaError_t e;
    lt_rng rng = ctx->rng;
    const char *why = NULL;
    if (!lt__cu_params_ready(ctx)) goto fail;
    /* the caller's gradients survive the two runs */
    if (cu->pfloats && !lt__cu_ok(ctx, cudaMalloc((void **)&saved, cu->pfloats * sizeof(float)), "lt_compile"))
        goto fail;
    if (saved) cudaMemcpyAsync(saved, cu->pdev + cu->pfloats, cu->pfloats * sizeof(float), cudaMemcpyDeviceToDevice, cu->stream);
    lt_reset(ctx);
    loss = p->fn(ctx, p->user);                                   /* 1: eager, to size every buffer */
    if (!lt_failed(ctx) && !loss) lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the step function returned NULL");
    if (lt_failed(ctx) || lt_backward(ctx, loss) != LT_OK || lt_device_synchronize(ctx) != LT_OK) goto fail;
    g = (struct lt__cu_graph *)LT__MALLOC(sizeof *g);
    if (!g) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); goto fail; }
    memset(g, 0, sizeof *g);
    if (!lt__cu_ok(ctx, cudaMalloc((void **)&g->seed_dev, sizeof(float)), "lt_compile") ||
        !lt__cu_ok(ctx, cudaMallocHost((void **)&g->seed_pin, sizeof(float)), "lt_compile"))
        goto fail;
    lt_reset(ctx);                                                /* 2: the same step, recorded */
    cu->rec = g;
    if (!lt__cu_ok(ctx, cudaStreamBeginCapture(cu->stream, cudaStreamCaptureModeRelaxed), "lt_compile: capture")) {
        cu->rec = NULL;
        goto fail;
    }
    loss = p->fn(ctx, p->user);
    if (loss && !lt_failed(ctx)) lt_backward(ctx, loss);
    e = cudaStreamEndCapture(cu->stream, &graph);
    cu->rec = NULL;
    if (lt_failed(ctx) || e != cudaSuccess || g->failed || !graph) {
        why = lt_failed(ctx) ? lt_error(ctx) : cudaGetErrorString(e);
        (void)cudaGetLastError();
    } else if (cudaGraphInstantiate(&g->exec, graph, 0) != cudaSuccess) {
        why = "cudaGraphInstantiate failed";
        (void)cudaGetLastError();
    }
    if (graph) cudaGraphDestroy(graph);
    if (why) {   /* what cannot be recorded runs eagerly: slower, never wrong */
        snprintf(p->note, sizeof p->note, "eager fallback (cuda): the step could not be recorded as a graph: %.150s", why);
        lt_clear_error(ctx);
        lt__cu_graph_free(g);
        g = NULL;
        p->eager = 1;
    } else {
        g->loss_dev = loss->data;
        g->pdev = cu->pdev;
        g->pin_used = cu->pin_used;
        g->cnt = (int32_t *)LT__MALLOC((size_t)(g->cnt_cap ? g->cnt_cap : 1) * sizeof(int32_t));
        if (!g->cnt) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); goto fail; }
        p->graph = g;
        p->graph_dev = lt__cu_table();
        p->eager = 0;
        snprintf(p->note, sizeof p->note, "compiled (cuda graph): %d id inputs, device arena %.1f MB", g->n_in,
                 (double)cu->peak / 1048576.0);
        g = NULL;
    }
    lt_reset(ctx);
    if (saved) {
        cudaMemcpyAsync(cu->pdev + cu->pfloats, saved, cu->pfloats * sizeof(float), cudaMemcpyDeviceToDevice, cu->stream);
        cudaStreamSynchronize(cu->stream);
        cudaFree(saved);
    }
    ctx->rng = rng;
    return p;
fail:
    cu->rec = NULL;
    lt__cu_graph_free(g);
    if (saved) cudaFree(saved);
    lt_reset(ctx);
    lt_plan_destroy(p);
    return NULL;
}
static lt_status lt__cu_graph_run(lt_plan *p, float seed, float *loss_out) {
    lt_ctx *ctx = p->ctx;
    lt__cuda *cu = ctx->cuda;
    struct lt__cu_graph *g = p->graph;
    int k;
    if (!cu || ctx->device != LT_CUDA) return lt_set_error(ctx, LT_ERR_STATE, "lt_plan_run: the plan was compiled on cuda");
    if (!lt__cu_params_ready(ctx)) return ctx->status;
    if (cu->pdev != g->pdev)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_plan_run: parameters were added since lt_compile recorded this step "
                            "(hint: compile again)");
    lt_reset(ctx);
    /* the previous launch has read the staging: refill it from the step's inputs; later host work
       in this step (the optimizer's job list) stages past the graph's bytes */
    if (!lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "lt_plan_run")) return ctx->status;
    cu->pin_used = g->pin_used;
    for (k = 0; k < g->n_in; k++) lt__cu_stage_ids(g->in[k].stage, g->in[k].src, g->in[k].n, g->in[k].V, g->cnt);
    *g->seed_pin = seed;
    if (!lt__cu_ok(ctx, cudaMemcpyAsync(g->seed_dev, g->seed_pin, sizeof(float), cudaMemcpyHostToDevice, cu->stream), "lt_plan_run") ||
        !lt__cu_ok(ctx, cudaGraphLaunch(g->exec, cu->stream), "lt_plan_run: graph launch"))
        return ctx->status;
    cu->pstate = LT__CU_DEV_NEWER;
    if (loss_out) {
        if (lt__cu_ok(ctx, cudaMemcpyAsync(cu->red, g->loss_dev, sizeof(float), cudaMemcpyDeviceToHost, cu->stream), "lt_plan_run") &&
            lt__cu_ok(ctx, cudaStreamSynchronize(cu->stream), "lt_plan_run"))
            *loss_out = *(float *)(void *)cu->red;
    }
    return ctx->status;
}
static void lt__cu_plan_free(lt_plan *p) { lt__cu_graph_free(p->graph); }

/* -- the device seam (@@CORE's lt__device): what the parts above call ---------------------------- */
static const lt__kernel lt__cu_op_fwd[LT__OP_COUNT] = {   /* by row of the op table */
#define LT__CU_FWD_ROW(name, reads) lt__##name##_fwd_cuda,
    LT__OP_LIST(LT__CU_FWD_ROW)
#undef LT__CU_FWD_ROW
};
static const lt__kernel lt__cu_op_bwd[LT__OP_COUNT] = {
#define LT__CU_BWD_ROW(name, reads) lt__##name##_bwd_cuda,
    LT__OP_LIST(LT__CU_BWD_ROW)
#undef LT__CU_BWD_ROW
};
static const lt__device lt__cuda_device = {
    "cuda",
    lt__cu_destroy, lt__cu_reset, lt__cu_synchronize, lt__cu_describe, lt__cu_arena_bytes, lt__cu_set_tf32,
    lt__cu_alloc, lt__cu_fill_values, lt__cu_fill_const, lt__cu_item, lt__cu_read, lt__cu_host_row,
    lt__cu_sync_params, lt__cu_params_changed,
    lt__cu_op_fwd, lt__cu_op_bwd, lt__cu_ids, lt__cu_seed, lt__cu_zero_grad,
    lt__cu_optim_step, lt__cu_optim_pull, lt__cu_optim_free, lt__cu_clip, lt__cu_unscale,
    lt__cu_compile, lt__cu_graph_run, lt__cu_plan_free,
};
static const lt__device *lt__cu_table(void) { return &lt__cuda_device; }

#endif /* LTRAIN_CUDA */

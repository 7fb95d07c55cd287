/* ==== @@TENSOR  tensors: shapes, parameters, views =========================================== */
/* Holds: tensors (shapes, creation, fill, views), parameters and their packed block,
   lt_ctx_destroy.
   Calls: @@CORE; the device through ctx->dev; @@COMPILE's capture hook (a declared seam). */

LTRAIN_DEF const char *lt_shape_str(const lt_tensor *t, char *buf, size_t cap) {
    size_t used = 0;
    int i;
    if (!buf || !cap) return buf;
    if (!t) { snprintf(buf, cap, "(null)"); return buf; }
    used += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < t->ndim && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ",%lld" : "%lld", (long long)t->shape[i]);
    if (used < cap) snprintf(buf + used, cap - used, "]");
    return buf;
}

/* The first allocation after lt_backward starts a new step: reset the arena lazily, so the
   loss and activations stay readable after backward until the next forward begins. */
static void lt__begin(lt_ctx *ctx) {
    if (ctx->tape_done) lt_reset(ctx);
}

/* Can ctx's op `who` read t (its `what`, e.g. "the first input")?  Two compares: t was made by
   ctx (t->ctx), and, unless a parameter, in the arena's current generation (t->gen; lt_reset and
   the step's lazy reset in lt__begin start a new one, after which the old header and values may
   hold another tensor's bytes).  Call it after lt__begin.  The shape is printed only when the
   header still reads as one, since a stale header may have been written over. */
#define LT__CURRENT(ctx, t) ((t)->ctx == (ctx) && ((t)->is_param || (t)->gen == (ctx)->gen))
static int lt__usable(lt_ctx *ctx, const char *who, const char *what, const lt_tensor *t) {
    char b1[64];
    int shape_ok;
    if (LT__CURRENT(ctx, t)) return 1;
    shape_ok = t->ndim >= 1 && t->ndim <= LT_MAX_DIMS;
    if (!shape_ok) snprintf(b1, sizeof b1, "(shape unreadable)");
    else lt_shape_str(t, b1, sizeof b1);
    if (t->ctx != ctx)
        lt_set_error(ctx, LT_ERR_ARG, "%s: %s %s%s%s%s is not a tensor of this context: it belongs to another "
                     "context, or its memory was reused (hint: pass each context only the tensors it made)",
                     who, what, b1, t->is_param && shape_ok ? " (\"" : "",
                     t->is_param && shape_ok && t->name ? t->name : "", t->is_param && shape_ok ? "\")" : "");
    else
        lt_set_error(ctx, LT_ERR_STATE, "%s: %s %s is stale: it was made before the arena was reset (lt_reset, "
                     "or the first op after lt_backward), so its memory now holds other values "
                     "(hint: make inputs again each step; keep values across steps in a parameter or your own array)",
                     who, what, b1);
    return 0;
}

/* Validate a shape; n = product of dims (overflow-checked). */
static int lt__shape_ok(lt_ctx *ctx, const char *who, int ndim, const int64_t *shape, int64_t *n) {
    int i;
    size_t total = 1;
    if (ndim < 1 || ndim > LT_MAX_DIMS || !shape)
        return lt_set_error(ctx, LT_ERR_ARG, "%s: ndim is %d: it must be 1..%d", who, ndim, LT_MAX_DIMS), 0;
    for (i = 0; i < ndim; i++) {
        if (shape[i] < 1)
            return lt_set_error(ctx, LT_ERR_ARG, "%s: dim %d is %lld: every dim must be >= 1", who, i,
                                (long long)shape[i]), 0;
        if (!lt_mul_size(total, (size_t)shape[i], &total) || total > (size_t)INT64_MAX / sizeof(float))
            return lt_set_error(ctx, LT_ERR_ARG, "%s: the shape's element count overflows", who), 0;
    }
    *n = (int64_t)total;
    return 1;
}

/* Memory for values (tensor data, gradients, saved buffers): the arena, or on LT_CUDA the
   device arena.  Headers and tape records always live in the (host) arena. */
static void *lt__values_alloc(lt_ctx *ctx, size_t bytes) {
    if (ctx->dev) return ctx->dev->alloc(ctx, bytes);
    return lt__arena_values(ctx, bytes);
}
/* dst (n values of a tensor of ctx) = src, or zeros for NULL; src is host memory. */
static void lt__values_set(lt_ctx *ctx, float *dst, const float *src, size_t n) {
    if (ctx->dev) { ctx->dev->fill_values(ctx, dst, src, n); return; }
    if (src) memcpy(dst, src, n * sizeof(float));
    else memset(dst, 0, n * sizeof(float));
}

/* A tensor header (and, if with_data, its data) from the arena. */
static lt_tensor *lt__arena_tensor(lt_ctx *ctx, const char *who, int ndim, const int64_t *shape, int with_data) {
    lt_tensor *t;
    int64_t n;
    int i;
    if (!lt__shape_ok(ctx, who, ndim, shape, &n)) return NULL;
    t = (lt_tensor *)lt__arena_alloc(ctx, sizeof(lt_tensor));
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    for (i = 0; i < LT_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    t->n = n;
    t->device = ctx->device;
    t->ctx = ctx;
    t->gen = ctx->gen;
    if (with_data) {
        t->data = (float *)lt__values_alloc(ctx, (size_t)n * sizeof(float));
        if (!t->data) return NULL;
    }
    return t;
}

/* ---- @@TENSOR.new  tensors from the arena ---------------------------------------------------- */
LTRAIN_DEF lt_tensor *lt_tensor_new(lt_ctx *ctx, int ndim, const int64_t *shape) {
    lt_tensor *t;
    if (!ctx || lt_failed(ctx)) return NULL;
    lt__begin(ctx);
    t = lt__arena_tensor(ctx, "lt_tensor_new", ndim, shape, 1);
    if (t) lt__values_set(ctx, t->data, NULL, (size_t)t->n);
    if (t && ctx->cap_hooks) ctx->cap_hooks->input(ctx, t, NULL);
    return t;
}

LTRAIN_DEF lt_tensor *lt_tensor_from(lt_ctx *ctx, const float *data, int ndim, const int64_t *shape) {
    lt_tensor *t;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!data) { lt_set_error(ctx, LT_ERR_ARG, "lt_tensor_from: data is NULL"); return NULL; }
    lt__begin(ctx);
    t = lt__arena_tensor(ctx, "lt_tensor_from", ndim, shape, 1);
    if (t) lt__values_set(ctx, t->data, data, (size_t)t->n);
    if (t && ctx->cap_hooks) ctx->cap_hooks->input(ctx, t, data);
    return t;
}

LTRAIN_DEF float lt_item(const lt_tensor *t) {
    if (t && t->data && t->n > 0 && t->device != LT_CPU) return lt__devices[t->device]->item(t);   /* one value back to the host */
    return (t && t->data && t->n > 0) ? t->data[0] : (float)NAN;
}

LTRAIN_DEF void lt_fill(lt_tensor *t, float v) {
    int64_t i;
    if (!t || !t->data) return;
    if (t->device != LT_CPU) { lt__devices[t->device]->fill(t, v); return; }
    for (i = 0; i < t->n; i++) t->data[i] = v;
}

/* lt_zero_grad_lazy (@@TAPE) writes no zeros: it marks every parameter's gradient unset
   (t->grad_unset, ctx->grads_unset), and the first backward kernel that reaches one writes it
   whole, or zeroes it just before adding (lt__grad_w, lt__grad in @@OPS).  Whatever no kernel
   reached is zeroed here, before anything reads gradients: the end of a backward pass, and every
   reader (optimizers, clipping, the scaler, the all-reduce, lt_tensor_read). */
static void lt__grads_settle(lt_ctx *ctx) {
    int i;
    if (!ctx || !ctx->grads_unset) return;
    for (i = 0; i < ctx->n_params; i++) {
        lt_tensor *t = ctx->params[i];
        if (t->grad_unset && t->grad) memset(t->grad, 0, (size_t)t->n * sizeof(float));
        t->grad_unset = 0;
    }
    ctx->grads_unset = 0;
}

/* The checks of lt_tensor_read; a device reads its own (a parameter: the host copy, made current). */
static int lt__read_ok(lt_ctx *ctx, const lt_tensor *t, int grad, const float *out) {
    if (!ctx) return 0;
    if (lt_failed(ctx)) return 0;
    if (!t || !out) return lt_set_error(ctx, LT_ERR_ARG, "lt_tensor_read: %s is NULL", t ? "out" : "the tensor"), 0;
    if (!lt__usable(ctx, "lt_tensor_read", "the tensor", t)) return 0;
    if (!(grad ? t->grad : t->data))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_tensor_read: the tensor has no %s", grad ? "gradient" : "data"), 0;
    return 1;
}
LTRAIN_DEF lt_status lt_tensor_read(lt_ctx *ctx, const lt_tensor *t, int grad, float *out) {
    if (!lt__read_ok(ctx, t, grad, out)) return lt_status_of(ctx);
    if (ctx->dev) return ctx->dev->read(ctx, t, grad, out);
    if (grad) lt__grads_settle(ctx);
    memcpy(out, grad ? t->grad : t->data, (size_t)t->n * sizeof(float));
    return LT_OK;
}

/* -- @@TENSOR.params  parameters ----------------------------------------------------------------- */
static float *lt__zeros(size_t n) {
    return (float *)lt__zalloc_big(n * sizeof(float)); /* n * 4 fits: lt__shape_ok bounds n */
}

static int lt__in_block(const lt_ctx *ctx, const float *p) {
    return ctx->param_block && p >= ctx->param_block && p < ctx->param_block + 2 * ctx->param_floats;
}

/* A parameter's name goes into checkpoints as a safetensors key (a JSON string): it must be
   UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), not "__metadata__" (the
   header's reserved key), and at most LT__NAME_MAX bytes. */
#define LT__NAME_MAX 1024
static int lt__param_name_ok(lt_ctx *ctx, const char *name) {
    size_t len, bad;
    if (!name || !*name) return lt_set_error(ctx, LT_ERR_ARG, "lt_param: a parameter needs a name"), 0;
    len = strlen(name);
    if (len > LT__NAME_MAX)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_param: the name \"%.40s...\" is %zu bytes long: at most %d "
                            "(checkpoints store it in their header)", name, len, LT__NAME_MAX), 0;
    if (strcmp(name, "__metadata__") == 0)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_param: \"__metadata__\" is reserved (a checkpoint's header keeps "
                            "its metadata under that key): choose another name"), 0;
    if ((bad = lt__utf8_bad_at((const unsigned char *)name, len)) < len)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_param: the name is not UTF-8: byte %zu is 0x%02X (checkpoints "
                            "store names as JSON strings; hint: convert it from Latin-1 or use ASCII)", bad,
                            (unsigned)(unsigned char)name[bad]), 0;
    if (lt_find_param(ctx, name))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_param: a parameter named \"%s\" exists already", name), 0;
    return 1;
}

LTRAIN_DEF lt_tensor *lt_param(lt_ctx *ctx, const char *name, int ndim, const int64_t *shape) {
    lt_tensor *t;
    int64_t n;
    int i;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!lt__param_name_ok(ctx, name)) return NULL;
    if (!lt__shape_ok(ctx, "lt_param", ndim, shape, &n)) return NULL;
    if (ctx->n_params == ctx->cap_params) {
        int cap = ctx->cap_params ? 2 * ctx->cap_params : 64;
        lt_tensor **p = (lt_tensor **)LT__REALLOC(ctx->params, (size_t)cap * sizeof(lt_tensor *));
        if (!p) goto oom;
        ctx->params = p;
        ctx->cap_params = cap;
    }
    t = (lt_tensor *)LT__MALLOC(sizeof(lt_tensor));
    if (!t) goto oom;
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    for (i = 0; i < LT_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    t->n = n;
    t->data = lt__zeros((size_t)n);
    t->grad = lt__zeros((size_t)n);
    t->name = lt__strdup(name);
    if (!t->data || !t->grad || !t->name) {
        LT__FREE(t->data); LT__FREE(t->grad); LT__FREE((void *)t->name); LT__FREE(t);
        goto oom;
    }
    t->requires_grad = 1;
    t->is_param = 1;
    t->ctx = ctx;                /* a parameter lives as long as its context: no generation */
    t->decay = ndim >= 2;
    ctx->params[ctx->n_params++] = t;
    return t;
oom:
    lt_set_error(ctx, LT_ERR_NOMEM, "lt_param: out of memory for \"%s\"", name);
    return NULL;
}

LTRAIN_DEF lt_paramset lt_ctx_params(lt_ctx *ctx) {
    lt_paramset s;
    s.p = ctx ? ctx->params : NULL;
    s.n = ctx ? ctx->n_params : 0;
    return s;
}

LTRAIN_DEF lt_tensor *lt_find_param(lt_ctx *ctx, const char *name) {
    int i;
    if (!ctx || !name) return NULL;
    for (i = 0; i < ctx->n_params; i++)
        if (strcmp(ctx->params[i]->name, name) == 0) return ctx->params[i];
    return NULL;
}

LTRAIN_DEF size_t lt_params_count(lt_ctx *ctx) {
    size_t n = 0;
    int i;
    if (!ctx) return 0;
    for (i = 0; i < ctx->n_params; i++) n += (size_t)ctx->params[i]->n;
    return n;
}

/* Move every parameter into one block [all data | all grads], in creation order, so that
   zero-grad, norms, clipping, optimizers and (later) an all-reduce see one flat span. */
LTRAIN_DEF lt_status lt_params_pack(lt_ctx *ctx) {
    size_t total = lt_params_count(ctx), bytes, off = 0;
    float *block;
    int i;
    if (lt_failed(ctx)) return lt_status_of(ctx);
    if (!lt_mul_size(total, 2 * sizeof(float), &bytes) || !(block = (float *)LT__MALLOC(bytes ? bytes : 1)))
        return lt_set_error(ctx, LT_ERR_NOMEM, "lt_params_pack: out of memory for %zu parameters", total);
    lt__hugepages(block, bytes);
    lt__grads_settle(ctx);
    for (i = 0; i < ctx->n_params; i++) {
        lt_tensor *t = ctx->params[i];
        memcpy(block + off, t->data, (size_t)t->n * sizeof(float));
        memcpy(block + total + off, t->grad, (size_t)t->n * sizeof(float));
        if (!lt__in_block(ctx, t->data)) { LT__FREE(t->data); LT__FREE(t->grad); }
        t->data = block + off;
        t->grad = block + total + off;
        off += (size_t)t->n;
    }
    LT__FREE(ctx->param_block);
    ctx->param_block = block;
    ctx->param_floats = total;
    return LT_OK;
}

/* On a device the parameters have host copies and the device's (@@CUDA); on LT_CPU one copy. */
LTRAIN_DEF lt_status lt_sync_params(lt_ctx *ctx) {
    if (!ctx) return LT_ERR_ARG;
    if (ctx->dev && !lt_failed(ctx)) ctx->dev->sync_params(ctx);
    return ctx->status;
}
LTRAIN_DEF void lt_params_changed(lt_ctx *ctx) {
    if (ctx && ctx->dev) ctx->dev->params_changed(ctx);
}

LTRAIN_DEF float *lt_params_grad_span(lt_ctx *ctx, size_t *n) {
    if (!ctx || !ctx->param_block || ctx->param_floats != lt_params_count(ctx)) { if (n) *n = 0; return NULL; }
    lt__grads_settle(ctx);
    if (n) *n = ctx->param_floats;
    return ctx->param_block + ctx->param_floats;
}

static void lt__params_free(lt_ctx *ctx) {
    int i;
    for (i = 0; i < ctx->n_params; i++) {
        lt_tensor *t = ctx->params[i];
        if (!lt__in_block(ctx, t->data)) { LT__FREE(t->data); LT__FREE(t->grad); }
        LT__FREE((void *)t->name);
        LT__FREE(t);
    }
    LT__FREE(ctx->params);
    LT__FREE(ctx->param_block);
    ctx->params = NULL;
    ctx->param_block = NULL;
    ctx->n_params = ctx->cap_params = 0;
}

/* The context last: its device state, its parameters, then its arena and tape. */
LTRAIN_DEF void lt_ctx_destroy(lt_ctx *ctx) {
    if (!ctx) return;
    if (ctx->dev) ctx->dev->destroy(ctx);
    lt__params_free(ctx);
    lt__arena_free(&ctx->arena);
    lt__arena_free(&ctx->scratch);
    LT__FREE(ctx->tape);
    LT__FREE(ctx->segs);
    LT__FREE(ctx->seg_nodes);
    LT__FREE(ctx->seg_data);
    LT__FREE(ctx->work);
    LT__FREE(ctx);
}

/* N(mean, std^2) in every value: the values of one lt_rng_normal after another.  The words must
   come from the context's generator in order, but the log, cos and sqrt that turn two words into
   a normal (nearly all the time, some 30 ns a value: seconds for GPT-2's 124M) do not depend on
   one another.  So a big tensor draws the words of a block of values first, then the threads
   transform the block. */
#define LT__NORMAL_BLOCK 65536
LTRAIN_DEF void lt_init_normal(lt_ctx *ctx, lt_tensor *t, double mean, double std) {
    int64_t i, lo, m;
    uint64_t *w = NULL;
    if (!ctx || !t || !t->data) return;
    if (t->n > LT__NORMAL_BLOCK && lt_get_threads() > 1)
        w = (uint64_t *)LT__MALLOC(2 * LT__NORMAL_BLOCK * sizeof(uint64_t));
    if (!w) {   /* one thread (or no memory for the words): one draw after another */
        for (i = 0; i < t->n; i++) t->data[i] = (float)(mean + std * lt_rng_normal(&ctx->rng));
        return;
    }
    for (lo = 0; lo < t->n; lo += LT__NORMAL_BLOCK) {
        float *out = t->data + lo;
        m = t->n - lo < LT__NORMAL_BLOCK ? t->n - lo : LT__NORMAL_BLOCK;
        for (i = 0; i < 2 * m; i++) w[i] = lt_rng_u64(&ctx->rng);
        LT__OMP(parallel for schedule(static))
        for (i = 0; i < m; i++) out[i] = (float)(mean + std * lt__box_muller(w[2 * i], w[2 * i + 1]));
    }
    LT__FREE(w);
}
LTRAIN_DEF void lt_init_uniform(lt_ctx *ctx, lt_tensor *t, double lo, double hi) {
    int64_t i;
    if (!ctx || !t || !t->data) return;
    for (i = 0; i < t->n; i++) t->data[i] = (float)(lo + (hi - lo) * lt_rng_uniform(&ctx->rng));
}


/* ==== @@TAPE  autograd tape: backward, zero-grad, gradcheck ================================== */
/* Holds: lt_backward (running the tape backwards), recompute segments (activation checkpointing),
   lt_zero_grad and lt_zero_grad_lazy, lt_gradcheck.
   Calls: @@CORE, @@TENSOR, @@OPS; the device through ctx->dev. */

/* ---- @@TAPE.recompute  recompute segments: activation checkpointing -------------------------- */
/* As torch.utils.checkpoint: the values made between lt_recompute_begin and lt_recompute_end,
   all but the segment's output, are dropped when it ends and made again in backward by running
   the segment's forward kernels once more, just before its first backward kernel.  Dropout draws
   the same masks again (the segment keeps the RNG state it began with), and the kernels are the
   same, so the gradients are the bits of a step without segments.
   Where the memory goes (eager, on the CPU): inside a segment, values (outputs and saved buffers)
   come from the scratch arena; tape records and tensor headers stay in the arena.  At the end
   the output's values (and its op's saved buffers) are copied into the arena and the scratch
   arena is rewound, so the next segment writes over the same bytes.  The dropped tensors keep
   their addresses (ctx->seg_data) with data NULL, which any op reading one refuses (lt__seg_note).
   In backward nothing else allocates from the scratch arena, so running the segment again into
   those addresses needs no allocation: the scratch arena holds one segment at a time, forward
   and backward.  In a compiled plan (@@COMPILE) the values made again get buffers of their own,
   alive from then to their last backward reader, while the forward's die at their last forward
   reader; the planned block shrinks accordingly.  On a device, or without gradients, segments
   drop nothing. */
static const char *lt__seg_where(const lt_ctx *ctx, const lt__seg *sg) {
    return sg->n ? ctx->seg_nodes[sg->first]->op->name : "(no op yet)";
}

LTRAIN_DEF lt_status lt_recompute_begin(lt_ctx *ctx) {
    lt__seg *sg;
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return ctx->status;
    lt__begin(ctx);
    if (ctx->seg_open) {
        sg = &ctx->segs[ctx->n_segs - 1];
        return lt_set_error(ctx, LT_ERR_STATE, "lt_recompute_begin: segment %d (from op %s%s%s) is still open: "
                            "segments do not nest (hint: lt_recompute_end it first)", ctx->n_segs - 1,
                            lt__seg_where(ctx, sg), sg->n && ctx->seg_nodes[sg->first]->scope ? " in " : "",
                            sg->n && ctx->seg_nodes[sg->first]->scope ? ctx->seg_nodes[sg->first]->scope : "");
    }
    if (ctx->n_segs == ctx->cap_segs) {
        int cap = ctx->cap_segs ? 2 * ctx->cap_segs : 16;
        lt__seg *a = (lt__seg *)LT__REALLOC(ctx->segs, (size_t)cap * sizeof(lt__seg));
        if (!a) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_recompute_begin: out of memory");
        ctx->segs = a;
        ctx->cap_segs = cap;
    }
    sg = &ctx->segs[ctx->n_segs++];
    memset(sg, 0, sizeof *sg);
    sg->first = ctx->n_seg_nodes;
    sg->tape_first = ctx->tape_len;
    sg->rng = ctx->rng;
    ctx->seg_open = 1;
    ctx->to_scratch = ctx->grad_enabled && !ctx->dev && !ctx->dry;
    return LT_OK;
}

LTRAIN_DEF lt_tensor *lt_recompute_end(lt_ctx *ctx, lt_tensor *out) {
    lt__seg *sg;
    lt__node *on = NULL;
    int i, j;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!ctx->seg_open) {
        lt_set_error(ctx, LT_ERR_STATE, "lt_recompute_end: no segment is open (hint: lt_recompute_begin first; "
                     "segments do not nest)");
        return NULL;
    }
    sg = &ctx->segs[ctx->n_segs - 1];
    ctx->seg_open = ctx->to_scratch = 0;
    if (!out) { lt_set_error(ctx, LT_ERR_ARG, "lt_recompute_end: out is NULL"); return NULL; }
    sg->out = out;
    sg->tape_end = ctx->tape_len;
    if (!ctx->grad_enabled || ctx->dev) {   /* nothing to drop: the segment is forgotten */
        sg->n = 0;
        sg->tape_end = sg->tape_first;
        return out;
    }
    for (i = sg->first; i < sg->first + sg->n; i++)
        if (ctx->seg_nodes[i]->out == out) on = ctx->seg_nodes[i];
    /* the output's values and its op's saved buffers move to the arena: they are kept */
    if (out->data && lt__arena_owns(&ctx->scratch, out->data)) {
        float *d = (float *)lt__arena_alloc(ctx, (size_t)out->n * sizeof(float));
        if (!d) return NULL;
        memcpy(d, out->data, (size_t)out->n * sizeof(float));
        out->data = d;
    }
    for (j = 0; on && j < 2; j++)
        if (on->save[j] && lt__arena_owns(&ctx->scratch, on->save[j])) {
            float *d = (float *)lt__arena_alloc(ctx, (size_t)on->n_save[j] * sizeof(float));
            if (!d) return NULL;
            memcpy(d, on->save[j], (size_t)on->n_save[j] * sizeof(float));
            on->save[j] = d;
        }
    for (i = sg->first; i < sg->first + sg->n; i++) {
        lt__node *nd = ctx->seg_nodes[i];
        if (nd == on) continue;
        ctx->seg_data[i] = nd->out->data;
        nd->out->data = NULL;
    }
    sg->scratch_bytes = ctx->scratch.used;
    lt__arena_reset(&ctx->scratch);
    return out;
}

/* Segment s again (backward, eager): its values back at their addresses, made by its forward
   kernels from the RNG state it began with (the output's op is not run: its values were kept). */
static void lt__seg_again(lt_ctx *ctx, const lt__seg *sg) {
    lt_rng keep = ctx->rng;
    int i;
    ctx->scratch.used = sg->scratch_bytes;
    if (ctx->arena.used + ctx->scratch.used > ctx->arena.peak) ctx->arena.peak = ctx->arena.used + ctx->scratch.used;
    ctx->rng = sg->rng;
    for (i = sg->first; i < sg->first + sg->n && !lt_failed(ctx); i++) {
        lt__node *nd = ctx->seg_nodes[i];
        if (nd->out == sg->out) continue;
        nd->out->data = ctx->seg_data[i];
        if (ctx->profiling) {
            double t0 = lt__now();
            LT__FWD(ctx, nd)(nd);
            lt__profile_add(ctx, nd, 0, lt__now() - t0);
        } else {
            LT__FWD(ctx, nd)(nd);
        }
    }
    ctx->rng = keep;
}
/* ... and dropped again once its backward is done (the scratch arena serves the next one) */
static void lt__seg_drop(lt_ctx *ctx, const lt__seg *sg) {
    int i;
    for (i = sg->first; i < sg->first + sg->n; i++)
        if (ctx->seg_nodes[i]->out != sg->out) ctx->seg_nodes[i]->out->data = NULL;
    ctx->scratch.used = 0;
}
/* the last segment before s (from s - 1 down) with records on the tape, or -1 */
static int lt__seg_prev(const lt_ctx *ctx, int s) {
    while (s >= 0 && ctx->segs[s].tape_end <= ctx->segs[s].tape_first) s--;
    return s;
}

/* ---- @@TAPE.backward  backward --------------------------------------------------------------- */
/* gelu16 records whose input's gradient they alone write: it goes at 16 bits to the product that
   made the input (lt__dx16_pair, @@OPS.matmul16) */
static void lt__tape_dx16(lt_ctx *ctx, const lt_tensor *loss) {
    int k, m, j;
    for (k = 0; k < ctx->tape_len; k++) {
        lt__node *g = ctx->tape[k];
        int readers = 0;
        if (g->op != LT__OP(gelu16) || !g->in[0] || g->in[0] == loss) continue;
        for (m = 0; m < ctx->tape_len; m++)
            for (j = 0; j < 3; j++) readers += ctx->tape[m]->in[j] == g->in[0];
        if (lt__dx16_pair(g, readers)) lt__dx16_mark(g);
    }
}

/* Reverse-mode differentiation: seed d(loss)/d(loss) = 1 (or `seed`: the gradient of seed·loss,
   e.g. 1/K for K accumulated micro-batches, or a loss scale), then run the backward kernel of every
   record from last to first.  A record whose output received no gradient is skipped.  Every
   backward kernel adds (+=) into its inputs' gradients, so parameters used twice (the tied
   GPT-2 head) and gradient accumulation over micro-batches just work. */
LTRAIN_DEF lt_status lt_backward(lt_ctx *ctx, lt_tensor *loss) { return lt_backward_scaled(ctx, loss, 1.0f); }

LTRAIN_DEF lt_status lt_backward_scaled(lt_ctx *ctx, lt_tensor *loss, float seed) {
    int k, s, live = -1;
    char b1[64];
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return ctx->status;
    if (!loss) return lt_set_error(ctx, LT_ERR_ARG, "lt_backward: loss is NULL");
    if (!lt__usable(ctx, "lt_backward", "the loss", loss)) return ctx->status;
    if (loss->n != 1)
        return lt_set_error(ctx, LT_ERR_SHAPE, "lt_backward: loss is %s: backward starts from a scalar "
                            "(hint: lt_sum or lt_mean it first)", lt_shape_str(loss, b1, sizeof b1));
    if (ctx->tape_done)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_backward: this tape was used by an earlier lt_backward; "
                            "run the forward pass again");
    if (ctx->seg_open) {
        const lt__seg *sg = &ctx->segs[ctx->n_segs - 1];
        return lt_set_error(ctx, LT_ERR_STATE, "lt_backward: recompute segment %d (from op %s%s%s) was not closed "
                            "(hint: lt_recompute_end)", ctx->n_segs - 1, lt__seg_where(ctx, sg),
                            sg->n && ctx->seg_nodes[sg->first]->scope ? " in " : "",
                            sg->n && ctx->seg_nodes[sg->first]->scope ? ctx->seg_nodes[sg->first]->scope : "");
    }
    if (!loss->data)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_backward: the loss is a value that lt_recompute_end dropped "
                            "(hint: compute it outside the segment, or make it the segment's output)");
    if (ctx->dev && (loss->is_param || (loss->requires_grad && loss->node))) {
        if (ctx->dev->seed(ctx, loss, seed) != LT_OK) return ctx->status;   /* d(loss) += seed on the device */
        if (loss->is_param) { ctx->tape_done = 1; return LT_OK; }
    } else {
    if (loss->is_param) {   /* a parameter used as the loss: d(p)/d(p) = 1, nothing to walk */
        lt__grads_settle(ctx);
        loss->grad[0] += seed;
        ctx->tape_done = 1;
        return LT_OK;
    }
    if (!loss->requires_grad || !loss->node)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_backward: the loss does not depend on any parameter "
                            "(hint: was it computed with gradients disabled?)");
    if (!lt__grad(loss, ctx)) return ctx->status;
    loss->grad[0] += seed;
    }
    if (ctx->device == LT_CPU) lt__tape_dx16(ctx, loss);
    s = lt__seg_prev(ctx, ctx->n_segs - 1);
    for (k = ctx->tape_len - 1; k >= 0 && !lt_failed(ctx); k--) {
        lt__node *nd = ctx->tape[k];
        if (s >= 0 && k == ctx->segs[s].tape_end - 1) {   /* a segment's last record: make its values again */
            if (live >= 0) lt__seg_drop(ctx, &ctx->segs[live]);
            lt__seg_again(ctx, &ctx->segs[s]);
            live = s;
            s = lt__seg_prev(ctx, s - 1);
        }
        if (!nd->out->grad) continue;
        if (ctx->profiling) {
            double t0 = lt__now();
            LT__BWD(ctx, nd)(nd);
            LT__PROFILE_SYNC(ctx);
            lt__profile_add(ctx, nd, 1, lt__now() - t0);
        } else {
            LT__BWD(ctx, nd)(nd);
        }
        if (ctx->device == LT_CPU) lt__grad_release(ctx, nd->out);   /* read by no one from here on */
    }
    if (live >= 0) lt__seg_drop(ctx, &ctx->segs[live]);
    lt__grads_settle(ctx);   /* parameters this loss does not reach: zero */
    ctx->tape_done = 1;
    return ctx->status;
}

LTRAIN_DEF void lt_retain_grad(lt_tensor *t) { if (t) t->retain_grad = 1; }

/* ---- @@TAPE.zero_grad  zero_grad ------------------------------------------------------------- */
/* Zero n floats at x in the loop lt__adamw_update reads them with (blocks of LT__EWB, OpenMP's
   static split; LT__OPT_PAR_MIN there equals LT__EW_PAR), so each thread clears the lines it read
   last in the optimizer's step, which sit in its own cache.  One thread clearing them all would
   take the other threads' lines from their cores first (bench/design.md). */
static void lt__zero_split(float *x, int64_t n) {
    int64_t b;
    LT__OMP(parallel for if (n >= LT__EW_PAR))
    for (b = 0; b < (n + LT__EWB - 1) / LT__EWB; b++) {
        int64_t lo = b * LT__EWB, hi = lo + LT__EWB < n ? lo + LT__EWB : n;
        memset(x + lo, 0, (size_t)(hi - lo) * sizeof(float));
    }
}
/* Zero n floats at x as one large memset per thread (large memsets use stores that bypass the caches) */
static void lt__zero_wide(float *x, int64_t n) {
    int64_t k, parts = lt_get_threads();
    LT__OMP(parallel for)
    for (k = 0; k < parts; k++)
        memset(x + n * k / parts, 0, (size_t)(n * (k + 1) / parts - n * k / parts) * sizeof(float));
}
#define LT__ZERO_BIG ((size_t)64 << 20)   /* bytes of gradients above which they leave the caches anyway */
LTRAIN_DEF void lt_zero_grad(lt_ctx *ctx) {
    int i;
    size_t n;
    float *span;
    if (!ctx) return;
    if (ctx->dev) { ctx->dev->zero_grad(ctx); return; }
    for (i = 0; i < ctx->n_params; i++) ctx->params[i]->grad_unset = 0;   /* (after lt_zero_grad_lazy) */
    ctx->grads_unset = 0;
    /* gradients larger than the caches: the flat span in one piece per thread; smaller ones
       parameter by parameter, as the optimizer read them */
    span = lt_params_grad_span(ctx, &n);
    if (span && n * sizeof(float) >= LT__ZERO_BIG) { lt__zero_wide(span, (int64_t)n); return; }
    for (i = 0; i < ctx->n_params; i++) lt__zero_split(ctx->params[i]->grad, ctx->params[i]->n);
}

/* torch's zero_grad(set_to_none=True): no pass of zeros.  Each parameter's gradient is marked
   unset, and its first writer in the next backward pass writes it whole (a weight's gradient
   product runs with beta = 0) or zeroes it just before adding, while its lines are about to be
   used anyway (lt__grad_w, lt__grad in @@OPS).  For GPT-2 124M that saves writing 500 MB a step,
   and the weight products' reading them.  What no kernel reached is zeroed by lt__grads_settle
   (@@TENSOR) at the end of backward, or before any reader. */
LTRAIN_DEF void lt_zero_grad_lazy(lt_ctx *ctx) {
    int i;
    if (!ctx) return;
    if (ctx->dev) { ctx->dev->zero_grad(ctx); return; }
    for (i = 0; i < ctx->n_params; i++) ctx->params[i]->grad_unset = 1;
    ctx->grads_unset = ctx->n_params > 0;
}

LTRAIN_DEF int lt_tape_length(const lt_ctx *ctx) { return ctx ? ctx->tape_len : 0; }

/* Σ out·R in double, without recording (for the finite differences). */
/* ---- @@TAPE.gradcheck  gradcheck: finite differences ----------------------------------------- */
static double lt__probe(lt_ctx *ctx, lt_gradcheck_fn fn, lt_tensor **in, void *user, const float *R) {
    lt_tensor *out;
    double s = 0;
    int64_t i;
    int ge = ctx->grad_enabled;
    lt_reset(ctx);
    ctx->grad_enabled = 0;
    out = fn(ctx, in, user);
    ctx->grad_enabled = ge;
    if (!out) return NAN;
    for (i = 0; i < out->n; i++) s += (double)out->data[i] * R[i];
    return s;
}

LTRAIN_DEF double lt_gradcheck(lt_ctx *ctx, lt_gradcheck_fn fn, lt_tensor **inputs, int n_inputs, void *user,
                               double eps) {
    lt_tensor *out, *r, *loss;
    float *R = NULL, **analytic = NULL;
    double worst = 0;
    int k;
    int64_t i;
    if (!ctx || lt_failed(ctx)) return NAN;
    if (!fn || n_inputs < 0 || (n_inputs > 0 && !inputs)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_gradcheck: %s", !fn ? "fn is NULL" : "the inputs are NULL");
        return NAN;
    }
    if (ctx->device != LT_CPU) {   /* it perturbs parameters on the host, one element at a time */
        lt_set_error(ctx, LT_ERR_STATE, "lt_gradcheck: runs on LT_CPU only (this context is on %s); "
                     "hint: check the op on a CPU context, then compare the devices", lt_device_name(ctx->device));
        return NAN;
    }
    for (k = 0; k < n_inputs; k++)
        if (!inputs[k] || !inputs[k]->is_param) {
            lt_set_error(ctx, LT_ERR_ARG, "lt_gradcheck: input %d is not a parameter (make it with lt_param)", k);
            return NAN;
        }
    lt_reset(ctx);
    out = fn(ctx, inputs, user);
    if (!out) return NAN;
    /* analytic: d/dx Σ out·R for a fixed random R */
    R = (float *)LT__MALLOC((size_t)out->n * sizeof(float));
    analytic = (float **)LT__MALLOC((size_t)n_inputs * sizeof(float *));
    if (analytic) for (k = 0; k < n_inputs; k++) analytic[k] = NULL;
    if (!R || !analytic) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gradcheck: out of memory"); goto done; }
    for (i = 0; i < out->n; i++) R[i] = (float)(lt_rng_uniform(&ctx->rng) * 2.0 - 1.0);
    r = lt_tensor_from(ctx, R, out->ndim, out->shape);
    loss = lt_sum(ctx, lt_mul(ctx, out, r));
    for (k = 0; k < n_inputs; k++) memset(inputs[k]->grad, 0, (size_t)inputs[k]->n * sizeof(float));
    if (lt_backward(ctx, loss) != LT_OK) goto done;
    for (k = 0; k < n_inputs; k++) {
        analytic[k] = (float *)LT__MALLOC((size_t)inputs[k]->n * sizeof(float));
        if (!analytic[k]) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gradcheck: out of memory"); goto done; }
        memcpy(analytic[k], inputs[k]->grad, (size_t)inputs[k]->n * sizeof(float));
    }
    /* numeric: central differences, one element at a time */
    for (k = 0; k < n_inputs; k++)
        for (i = 0; i < inputs[k]->n; i++) {
            float x0 = inputs[k]->data[i];
            double fp, fm, num, a, err;
            inputs[k]->data[i] = (float)(x0 + eps);
            fp = lt__probe(ctx, fn, inputs, user, R);
            inputs[k]->data[i] = (float)(x0 - eps);
            fm = lt__probe(ctx, fn, inputs, user, R);
            inputs[k]->data[i] = x0;
            num = (fp - fm) / (2.0 * eps);
            a = analytic[k][i];
            err = fabs(a - num) / fmax(1.0, fmax(fabs(a), fabs(num)));
            if (!(err <= worst)) worst = err;
        }
done:
    if (analytic) for (k = 0; k < n_inputs; k++) LT__FREE(analytic[k]);
    LT__FREE(analytic);
    LT__FREE(R);
    lt_reset(ctx);
    return lt_failed(ctx) ? NAN : worst;
}



/* ==== @@TAPE  autograd tape: backward, zero-grad, gradcheck ================================== */
/* Holds: lt_backward (running the tape backwards), lt_zero_grad, lt_gradcheck.
   Calls: @@CORE, @@TENSOR, @@OPS; the device through ctx->dev. */

/* ---- @@TAPE.backward  backward --------------------------------------------------------------- */
/* Reverse-mode differentiation: seed d(loss)/d(loss) = 1 (or `seed`: the gradient of seed·loss,
   e.g. 1/K for K accumulated micro-batches, or a loss scale), then run the backward kernel of every
   record from last to first.  A record whose output received no gradient is skipped.  Every
   backward kernel adds (+=) into its inputs' gradients, so parameters used twice (the tied
   GPT-2 head) and gradient accumulation over micro-batches just work. */
LTRAIN_DEF lt_status lt_backward(lt_ctx *ctx, lt_tensor *loss) { return lt_backward_scaled(ctx, loss, 1.0f); }

LTRAIN_DEF lt_status lt_backward_scaled(lt_ctx *ctx, lt_tensor *loss, float seed) {
    int k;
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
    if (ctx->dev && (loss->is_param || (loss->requires_grad && loss->node))) {
        if (ctx->dev->seed(ctx, loss, seed) != LT_OK) return ctx->status;   /* d(loss) += seed on the device */
        if (loss->is_param) { ctx->tape_done = 1; return LT_OK; }
    } else {
    if (loss->is_param) {   /* a parameter used as the loss: d(p)/d(p) = 1, nothing to walk */
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
    for (k = ctx->tape_len - 1; k >= 0 && !lt_failed(ctx); k--) {
        lt__node *nd = ctx->tape[k];
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
    /* gradients larger than the caches: the flat span in one piece per thread; smaller ones
       parameter by parameter, as the optimizer read them */
    span = lt_params_grad_span(ctx, &n);
    if (span && n * sizeof(float) >= LT__ZERO_BIG) { lt__zero_wide(span, (int64_t)n); return; }
    for (i = 0; i < ctx->n_params; i++) lt__zero_split(ctx->params[i]->grad, ctx->params[i]->n);
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



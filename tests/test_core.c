/* test_core.c - contexts, errors, tensors, parameters, the arena, the tape, gradcheck, sgemm. */

static int64_t tc_dims[4];
/* a shape argument inline: TC_SHAPE(2, 3) */
static const int64_t *tc_shape(int64_t a, int64_t b, int64_t c, int64_t d) {
    tc_dims[0] = a; tc_dims[1] = b; tc_dims[2] = c; tc_dims[3] = d;
    return tc_dims;
}
#define TC_SHAPE1(a) tc_shape(a, 1, 1, 1)
#define TC_SHAPE2(a, b) tc_shape(a, b, 1, 1)
#define TC_SHAPE3(a, b, c) tc_shape(a, b, c, 1)

static void tc_fill_seq(lt_tensor *t, float start, float step) {
    int64_t i;
    if (t) for (i = 0; i < t->n; i++) t->data[i] = start + step * (float)i;
}

/* ---- contexts and errors -------------------------------------------------------------------------- */
static void test_core_ctx(void) {
    lt_ctx *a, *b;
    lt_tensor *pa, *pb;
    char buf[64];
    int ok, i;
    if (!t_want("core/ctx")) return;
    a = lt_ctx_create(1);
    t_check(a && !lt_failed(a) && lt_status_of(a) == LT_OK && strcmp(lt_error(a), "") == 0 &&
                lt_tape_length(a) == 0 && lt_arena_used(a) == 0 && lt_params_count(a) == 0,
            "core/ctx/create", "a new context is not clean");
    t_check(strcmp(lt_status_name(LT_OK), "ok") == 0 && strcmp(lt_status_name(LT_ERR_SHAPE), "shape mismatch") == 0 &&
                strcmp(lt_status_name((lt_status)99), "unknown status") == 0,
            "core/ctx/status_names", "%s / %s", lt_status_name(LT_OK), lt_status_name(LT_ERR_SHAPE));
    t_check(lt_failed(NULL) && lt_status_of(NULL) == LT_ERR_ARG && lt_error(NULL) != NULL && lt_add(NULL, NULL, NULL) == NULL,
            "core/ctx/null_ctx", "a NULL context must read as failed");
    lt_ctx_destroy(NULL);

    /* the first error sticks (it names the root cause); clearing it lets work go on */
    lt_set_error(a, LT_ERR_IO, "first %d", 1);
    lt_set_error(a, LT_ERR_SHAPE, "second");
    t_check(lt_status_of(a) == LT_ERR_IO && strcmp(lt_error(a), "first 1") == 0, "core/ctx/first_error_sticks",
            "status %s, message \"%s\"", lt_status_name(lt_status_of(a)), lt_error(a));
    t_check(lt_tensor_new(a, 1, TC_SHAPE1(3)) == NULL && lt_param(a, "late", 1, TC_SHAPE1(3)) == NULL,
            "core/ctx/failed_ctx_allocates_nothing", "a failed context still made tensors");
    lt_clear_error(a);
    t_check(!lt_failed(a) && lt_error(a)[0] == 0 && lt_tensor_new(a, 1, TC_SHAPE1(3)) != NULL, "core/ctx/clear_error",
            "%s", lt_error(a));

    /* two contexts: errors, parameter names, tapes and RNG streams are separate */
    b = lt_ctx_create(1);
    pa = lt_param(a, "w", 2, TC_SHAPE2(2, 3));
    pb = lt_param(b, "w", 2, TC_SHAPE2(2, 3));
    t_check(pa && pb && pa != pb && pa->data != pb->data, "core/ctx/two_same_names", "%s / %s", lt_error(a), lt_error(b));
    tc_fill_seq(pa, 1.0f, 1.0f);
    tc_fill_seq(pb, -1.0f, 0.5f);
    t_check(lt_backward(a, lt_sum(a, pa)) == LT_OK && lt_tape_length(b) == 0 && pb->grad[0] == 0.0f && pa->grad[0] == 1.0f,
            "core/ctx/two_tapes", "backward in one context touched the other");
    lt_matmul(a, pa, pa, 0); /* [2,3]x[2,3]: an error in a */
    t_check(lt_failed(a) && !lt_failed(b) && lt_sum(b, pb) != NULL, "core/ctx/two_errors",
            "an error in one context leaked into the other");
    lt_ctx_destroy(a);
    a = lt_ctx_create(42);
    lt_ctx_destroy(b);
    b = lt_ctx_create(42);
    for (i = 0; i < 5; i++) lt_rng_u64(lt_ctx_rng(a)); /* draws from a must not move b */
    {
        lt_rng r;
        lt_rng_seed(&r, 42);
        for (ok = 1, i = 0; i < 100; i++) ok &= lt_rng_u64(lt_ctx_rng(b)) == lt_rng_u64(&r);
    }
    t_check(ok, "core/ctx/rng_per_context", "a context's RNG is not its seed's stream");
    for (ok = 1, i = 0; i < 10000; i++) {
        double u = lt_rng_uniform(lt_ctx_rng(a));
        ok &= u >= 0.0 && u < 1.0;
    }
    t_check(ok, "core/ctx/rng_uniform_range", "uniform left [0,1)");
    lt_ctx_destroy(a);
    lt_ctx_destroy(b);
    {   /* lt_init_normal gives the values of one lt_rng_normal after another (its threads transform
           words drawn ahead, by blocks: sizes below, at and across a block), and leaves the stream
           where those draws would; at 1 and at 3 threads */
        int64_t sizes[3] = {1000, LT__NORMAL_BLOCK, 2 * LT__NORMAL_BLOCK + 77}, j;
        int th, k, keep = lt_get_threads(), same = 1;
#ifdef _OPENMP
        int chosen = lt__threads_chosen;
#endif
        for (th = 1; th <= 3; th += 2)
            for (k = 0; k < 3; k++) {
                lt_rng r;
                a = lt_ctx_create(7);
                pa = lt_tensor_new(a, 1, TC_SHAPE1(sizes[k]));
                lt_set_threads(th);
                lt_init_normal(a, pa, 0.5, 2.0);
                lt_set_threads(keep);
                lt_rng_seed(&r, 7);
                for (j = 0; pa && j < sizes[k] && same; j++) {
                    float want = (float)(0.5 + 2.0 * lt_rng_normal(&r));
                    if (memcmp(&want, &pa->data[j], sizeof want) != 0) {
                        printf("     %d threads, %lld values: value %lld is %.9g, one draw after another %.9g\n", th,
                               (long long)sizes[k], (long long)j, pa->data[j], want);
                        same = 0;
                    }
                }
                if (!pa || lt_rng_u64(lt_ctx_rng(a)) != lt_rng_u64(&r)) same = 0;
                lt_ctx_destroy(a);
            }
#ifdef _OPENMP
        lt__threads_chosen = chosen;
#endif
        t_check(same, "core/ctx/init_normal_stream", "lt_init_normal differs from lt_rng_normal's draws in turn");
    }

    /* tensors: shapes, fill, item, shape strings, bad shapes */
    a = lt_ctx_create(1);
    pa = lt_tensor_new(a, 3, TC_SHAPE3(2, 1, 5));
    t_check(pa && pa->n == 10 && pa->ndim == 3 && pa->shape[3] == 1 && !pa->requires_grad && pa->data[9] == 0.0f &&
                strcmp(lt_shape_str(pa, buf, sizeof buf), "[2,1,5]") == 0,
            "core/tensor/new", "%s", lt_shape_str(pa, buf, sizeof buf));
    lt_fill(pa, 2.5f);
    t_check(lt_item(pa) == 2.5f && pa->data[9] == 2.5f && isnan(lt_item(NULL)) &&
                strcmp(lt_shape_str(NULL, buf, sizeof buf), "(null)") == 0,
            "core/tensor/fill_item", "item %g", (double)lt_item(pa));
    {
        float src[3] = {1.0f, -2.0f, 3.5f};
        pb = lt_tensor_from(a, src, 1, TC_SHAPE1(3));
        t_check(pb && pb->data != src && pb->data[1] == -2.0f && pb->data[2] == 3.5f, "core/tensor/from", "%s", lt_error(a));
    }
    t_check(lt_tensor_new(a, 2, TC_SHAPE2(3, 0)) == NULL && lt_status_of(a) == LT_ERR_ARG &&
                strstr(lt_error(a), "lt_tensor_new") != NULL,
            "core/tensor/zero_dim", "%s", lt_error(a));
    lt_clear_error(a);
    t_check(lt_tensor_new(a, 5, tc_shape(1, 2, 3, 4)) == NULL && lt_status_of(a) == LT_ERR_ARG,
            "core/tensor/too_many_dims", "%s", lt_error(a));
    lt_clear_error(a);
    t_check(lt_tensor_new(a, 2, TC_SHAPE2((int64_t)1 << 40, (int64_t)1 << 40)) == NULL && lt_status_of(a) == LT_ERR_ARG,
            "core/tensor/count_overflow", "%s", lt_error(a));
    lt_ctx_destroy(a);
}

/* ---- parameters ---------------------------------------------------------------------------------- */
static void test_core_params(void) {
    lt_ctx *ctx;
    lt_tensor *p[3], *q;
    lt_paramset ps;
    size_t n = 0;
    float *span;
    int i, ok;
    int64_t j;
    if (!t_want("core/params")) return;
    ctx = lt_ctx_create(5);
    p[0] = lt_param(ctx, "w", 2, TC_SHAPE2(3, 4));
    p[1] = lt_param(ctx, "b", 1, TC_SHAPE1(4));
    p[2] = lt_param(ctx, "e", 3, TC_SHAPE3(2, 1, 3));
    ps = lt_ctx_params(ctx);
    t_check(ps.n == 3 && ps.p[0] == p[0] && ps.p[2] == p[2] && lt_find_param(ctx, "b") == p[1] &&
                lt_find_param(ctx, "nope") == NULL && lt_params_count(ctx) == 22,
            "core/params/list", "%d params, %zu floats", ps.n, lt_params_count(ctx));
    t_check(p[0]->is_param && p[0]->requires_grad && p[0]->decay && !p[1]->decay && p[0]->grad && p[0]->data[11] == 0.0f &&
                p[0]->grad[11] == 0.0f && strcmp(p[1]->name, "b") == 0,
            "core/params/fields", "a new parameter is not zeroed, named and decay-marked");

    q = lt_param(ctx, "w", 1, TC_SHAPE1(2));
    t_check(q == NULL && lt_status_of(ctx) == LT_ERR_ARG && strstr(lt_error(ctx), "\"w\"") != NULL &&
                strstr(lt_error(ctx), "lt_param") != NULL && lt_ctx_params(ctx).n == 3,
            "core/params/duplicate_name", "%s", lt_error(ctx));
    lt_clear_error(ctx);
    t_check(lt_param(ctx, "", 1, TC_SHAPE1(2)) == NULL && lt_status_of(ctx) == LT_ERR_ARG, "core/params/empty_name", "%s",
            lt_error(ctx));
    lt_clear_error(ctx);
    t_check(lt_param(ctx, "z", 1, TC_SHAPE1(0)) == NULL && lt_status_of(ctx) == LT_ERR_ARG, "core/params/bad_shape",
            "%s", lt_error(ctx));
    lt_clear_error(ctx);

    /* pack: values and gradients survive, and become one span [all data | all grads] */
    for (i = 0; i < 3; i++) {
        tc_fill_seq(p[i], (float)(i + 1), 0.25f);
        for (j = 0; j < p[i]->n; j++) p[i]->grad[j] = -(float)(i + 1) - 0.5f * (float)j;
    }
    t_check(lt_params_grad_span(ctx, &n) == NULL && n == 0, "core/params/no_span_before_pack", "span before pack");
    t_check(lt_params_pack(ctx) == LT_OK, "core/params/pack", "%s", lt_error(ctx));
    span = lt_params_grad_span(ctx, &n);
    ok = span != NULL && n == 22 && span == p[0]->grad && p[0]->data + 22 == p[0]->grad;
    for (i = 0; i < 2; i++) ok &= p[i + 1]->data == p[i]->data + p[i]->n && p[i + 1]->grad == p[i]->grad + p[i]->n;
    t_check(ok, "core/params/pack_one_span", "the parameters are not one block in creation order");
    for (ok = 1, i = 0; i < 3; i++)
        for (j = 0; j < p[i]->n; j++)
            ok &= p[i]->data[j] == (float)(i + 1) + 0.25f * (float)j && p[i]->grad[j] == -(float)(i + 1) - 0.5f * (float)j;
    t_check(ok, "core/params/pack_keeps_values", "pack changed a value or a gradient");

    /* zero_grad on the packed block; backward writes into the block */
    lt_zero_grad(ctx);
    for (ok = 1, j = 0; j < 22; j++) ok &= span[j] == 0.0f;
    t_check(ok, "core/params/zero_grad_packed", "gradients left after lt_zero_grad");
    t_check(lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, p[0], p[1]))) == LT_OK && span[0] == p[1]->data[0] &&
                span[12] == p[0]->data[0] + p[0]->data[4] + p[0]->data[8],
            "core/params/backward_into_pack", "%s", lt_error(ctx));

    /* a parameter made after pack, then a second pack: everything kept */
    q = lt_param(ctx, "late", 1, TC_SHAPE1(5));
    tc_fill_seq(q, 9.0f, 1.0f);
    q->grad[4] = 7.0f;
    t_check(lt_params_grad_span(ctx, &n) == NULL, "core/params/stale_span", "a span that misses a parameter");
    ok = lt_params_pack(ctx) == LT_OK && (span = lt_params_grad_span(ctx, &n)) != NULL && n == 27 &&
         q->data[4] == 13.0f && q->grad[4] == 7.0f && p[0]->data[3] == 1.75f && span[0] == p[1]->data[0];
    t_check(ok, "core/params/pack_twice", "%s", lt_error(ctx));
    lt_ctx_destroy(ctx);

    /* zero_grad without pack */
    ctx = lt_ctx_create(5);
    p[0] = lt_param(ctx, "a", 1, TC_SHAPE1(3));
    p[1] = lt_param(ctx, "b", 2, TC_SHAPE2(2, 2));
    p[0]->grad[2] = 1.0f;
    p[1]->grad[3] = 2.0f;
    lt_zero_grad(ctx);
    t_check(p[0]->grad[2] == 0.0f && p[1]->grad[3] == 0.0f, "core/params/zero_grad", "gradients left");
    /* init helpers draw from the context's RNG, within range */
    lt_init_uniform(ctx, p[1], -0.5, 0.25);
    for (ok = 1, j = 0; j < 4; j++) ok &= p[1]->data[j] >= -0.5f && p[1]->data[j] < 0.25f;
    t_check(ok, "core/params/init_uniform", "a value out of range");
    lt_ctx_destroy(ctx);
}

/* ---- arena and tape -------------------------------------------------------------------------------- */
/* loss = sum((x*w + b)^2 scaled) for the accumulation and reset tests */
static lt_tensor *tc_forward(lt_ctx *ctx, lt_tensor *w, lt_tensor *b) {
    static const float xs[6] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};
    lt_tensor *x = lt_tensor_from(ctx, xs, 2, TC_SHAPE2(2, 3));
    lt_tensor *h = lt_add(ctx, lt_mul(ctx, x, w), b);
    return lt_scale(ctx, lt_sum(ctx, lt_mul(ctx, h, h)), 0.5f);
}

/* As torch: an op's output loses its gradient once backward has passed it (the buffer is reused
   for later gradients), parameters keep theirs, lt_retain_grad keeps one; no value changes. */
static lt_tensor *tc_chain(lt_ctx *ctx, lt_tensor *w, lt_tensor **h, int n, int retain_all) {
    int k;
    h[0] = w;
    for (k = 1; k <= n; k++) {
        h[k] = k % 2 ? lt_gelu(ctx, h[k - 1]) : lt_scale(ctx, h[k - 1], 1.5f);
        if (retain_all || k == 5) lt_retain_grad(h[k]);
    }
    return lt_sum(ctx, lt_mul(ctx, h[n], h[n]));
}
static void test_core_retain_grad(void) {
    enum { N = 12, E = 4096 };
    lt_ctx *ctx[2];
    lt_tensor *w[2], *h[2][N + 1], *loss[2];
    size_t peak[2];
    int r, k, others_null = 1;
    if (!t_want("core/retain_grad")) return;
    for (r = 0; r < 2; r++) {   /* r = 0: as a training step; r = 1: every gradient retained */
        ctx[r] = lt_ctx_create(3);
        w[r] = lt_param(ctx[r], "w", 1, TC_SHAPE1(E));
        tc_fill_seq(w[r], -2.0f, 4.0f / E);
        loss[r] = tc_chain(ctx[r], w[r], h[r], N, r);
        t_check(lt_backward(ctx[r], loss[r]) == LT_OK, "core/retain_grad/backward", "%s", lt_error(ctx[r]));
        peak[r] = lt_arena_peak(ctx[r]);
    }
    for (k = 1; k <= N; k++) others_null &= (k == 5) == (h[0][k]->grad != NULL);
    t_check(others_null && w[0]->grad && !loss[0]->grad, "core/retain_grad/kept",
            "op outputs without lt_retain_grad must have grad NULL, h5 and the parameter their own");
    t_check(memcmp(w[0]->grad, w[1]->grad, E * sizeof(float)) == 0 &&
                memcmp(h[0][5]->grad, h[1][5]->grad, E * sizeof(float)) == 0,
            "core/retain_grad/same_values", "gradients differ between the recycled and the retained runs");
    /* 12 retained gradients of 16 KiB against a few alive at a time */
    t_check(peak[0] + 8 * E * sizeof(float) <= peak[1], "core/retain_grad/recycled",
            "arena peak %zu bytes recycling, %zu retaining all", peak[0], peak[1]);
    for (r = 0; r < 2; r++) lt_ctx_destroy(ctx[r]);
}

static void test_core_tape(void) {
    lt_ctx *ctx;
    lt_tensor *w, *b, *loss, *y;
    float g1[6], v1;
    size_t used, used2;
    int ok, i;
    if (!t_want("core/tape")) return;
    ctx = lt_ctx_create(9);
    w = lt_param(ctx, "w", 1, TC_SHAPE1(3));
    b = lt_param(ctx, "b", 1, TC_SHAPE1(3));
    tc_fill_seq(w, 0.5f, 0.5f);
    tc_fill_seq(b, -0.25f, 0.1f);

    /* lazy reset: after backward the loss stays readable; the next op starts a new step */
    loss = tc_forward(ctx, w, b);
    v1 = lt_item(loss);
    used = lt_arena_used(ctx);
    t_check(loss && lt_tape_length(ctx) > 0 && used > 0, "core/tape/records", "tape %d, arena %zu",
            lt_tape_length(ctx), used);
    t_check(lt_backward(ctx, loss) == LT_OK && lt_item(loss) == v1 && lt_arena_used(ctx) >= used, "core/tape/loss_after_backward",
            "loss %g then %g, %s", (double)v1, (double)lt_item(loss), lt_error(ctx));
    for (i = 0; i < 3; i++) { g1[i] = w->grad[i]; g1[3 + i] = b->grad[i]; }
    t_check(lt_backward(ctx, loss) == LT_ERR_STATE && strstr(lt_error(ctx), "lt_backward") != NULL,
            "core/tape/backward_twice", "status %s: %s", lt_status_name(lt_status_of(ctx)), lt_error(ctx));
    lt_clear_error(ctx);
    y = lt_tensor_new(ctx, 1, TC_SHAPE1(4));
    used2 = lt_arena_used(ctx);
    t_check(y && used2 < used && lt_tape_length(ctx) == 0 && lt_arena_peak(ctx) >= used, "core/tape/lazy_reset",
            "arena %zu after the next op (was %zu), tape %d", used2, used, lt_tape_length(ctx));

    /* two backward passes without zero_grad accumulate: 2x one pass */
    loss = tc_forward(ctx, w, b);
    t_check(lt_backward(ctx, loss) == LT_OK, "core/tape/second_pass", "%s", lt_error(ctx));
    for (ok = 1, i = 0; i < 3; i++) ok &= w->grad[i] == 2.0f * g1[i] && b->grad[i] == 2.0f * g1[3 + i];
    t_check(ok, "core/tape/accumulate", "w.grad[0] %g, want %g", (double)w->grad[0], 2.0 * g1[0]);
    /* the values themselves: h = x*w + b, dL/dw = Σ_rows h*x, dL/db = Σ_rows h (one pass) */
    {
        static const float xs[6] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};
        float gw[3] = {0, 0, 0}, gb[3] = {0, 0, 0};
        int r, j;
        for (r = 0; r < 2; r++)
            for (j = 0; j < 3; j++) {
                float h = xs[r * 3 + j] * w->data[j] + b->data[j];
                gw[j] += h * xs[r * 3 + j];
                gb[j] += h;
            }
        for (ok = 1, j = 0; j < 3; j++) ok &= fabsf(g1[j] - gw[j]) < 1e-6f && fabsf(g1[3 + j] - gb[j]) < 1e-6f;
        t_check(ok, "core/tape/values", "dL/dw[0] %g, want %g", (double)g1[0], (double)gw[0]);
    }

    /* lt_reset drops everything; parameter gradients stay */
    lt_reset(ctx);
    t_check(lt_arena_used(ctx) == 0 && lt_tape_length(ctx) == 0 && w->grad[0] == 2.0f * g1[0], "core/tape/reset",
            "arena %zu, tape %d", lt_arena_used(ctx), lt_tape_length(ctx));

    /* backward from a non-scalar */
    {
        char buf[32];
        y = lt_mul(ctx, w, b);
        t_check(lt_backward(ctx, y) == LT_ERR_SHAPE && strstr(lt_error(ctx), "lt_backward") != NULL &&
                    strstr(lt_error(ctx), lt_shape_str(y, buf, sizeof buf)) != NULL,
                "core/tape/backward_non_scalar", "%s", lt_error(ctx));
        lt_clear_error(ctx);
        t_check(lt_backward(ctx, NULL) == LT_ERR_ARG, "core/tape/backward_null", "%s", lt_error(ctx));
        lt_clear_error(ctx);
    }

    /* gradients disabled: nothing recorded, and backward says why */
    lt_reset(ctx);
    lt_set_grad_enabled(ctx, 0);
    loss = tc_forward(ctx, w, b);
    t_check(loss && lt_tape_length(ctx) == 0 && !loss->requires_grad && lt_item(loss) == v1, "core/tape/no_grad_records_nothing",
            "tape %d", lt_tape_length(ctx));
    t_check(lt_backward(ctx, loss) == LT_ERR_ARG && strstr(lt_error(ctx), "lt_backward") != NULL,
            "core/tape/no_grad_backward", "%s", lt_error(ctx));
    lt_clear_error(ctx);
    lt_set_grad_enabled(ctx, 1);
    loss = tc_forward(ctx, w, b);
    t_check(loss && lt_tape_length(ctx) > 0 && loss->requires_grad, "core/tape/grad_reenabled", "tape %d",
            lt_tape_length(ctx));
    /* a loss computed from no parameter cannot be differentiated */
    lt_reset(ctx);
    y = lt_tensor_new(ctx, 1, TC_SHAPE1(3));
    t_check(lt_backward(ctx, lt_sum(ctx, y)) == LT_ERR_ARG, "core/tape/backward_constant", "%s", lt_error(ctx));
    lt_ctx_destroy(ctx);
}

/* ---- reshape views ---------------------------------------------------------------------------------- */
static void test_core_reshape(void) {
    lt_ctx *ctx;
    lt_tensor *p, *v, *v2;
    static const float R[12] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};
    int ok;
    int64_t i;
    if (!t_want("core/reshape")) return;
    ctx = lt_ctx_create(2);
    p = lt_param(ctx, "p", 2, TC_SHAPE2(3, 4));
    tc_fill_seq(p, 0.0f, 1.0f);
    v = lt_reshape(ctx, p, 3, TC_SHAPE3(2, -1, 3));
    t_check(v && v->ndim == 3 && v->shape[1] == 2 && v->n == 12 && v->data == p->data && v->base == p,
            "core/reshape/view", "%s", lt_error(ctx));
    v2 = lt_reshape(ctx, v, 1, TC_SHAPE1(12));
    t_check(v2 && v2->data == p->data && v2->base == p, "core/reshape/view_of_view", "%s", lt_error(ctx));
    p->data[5] = 50.0f; /* shared memory */
    t_check(v2 && v2->data[5] == 50.0f, "core/reshape/shares_data", "a copy, not a view");
    t_check(lt_backward(ctx, lt_sum(ctx, lt_mul(ctx, v2, lt_tensor_from(ctx, R, 1, TC_SHAPE1(12))))) == LT_OK,
            "core/reshape/backward", "%s", lt_error(ctx));
    for (ok = 1, i = 0; i < 12; i++) ok &= p->grad[i] == R[i];
    t_check(ok, "core/reshape/grad_flows", "p.grad[1] %g, want %g", (double)p->grad[1], (double)R[1]);
    t_check(lt_reshape(ctx, p, 2, TC_SHAPE2(-1, -1)) == NULL && lt_failed(ctx), "core/reshape/two_inferred",
            "two -1 dims accepted");
    lt_ctx_destroy(ctx);
}

/* ---- dropout -------------------------------------------------------------------------------------------- */
static void test_core_dropout(void) {
    enum { N = 20000 };
    const float p = 0.25f;
    lt_ctx *ctx, *ctx2;
    lt_tensor *x, *x2, *y, *y2;
    int64_t i, zeros = 0;
    double mean = 0;
    int ok;
    if (!t_want("core/dropout")) return;
    ctx = lt_ctx_create(77);
    ctx2 = lt_ctx_create(77);
    x = lt_param(ctx, "x", 1, TC_SHAPE1(N));
    x2 = lt_param(ctx2, "x", 1, TC_SHAPE1(N));
    lt_fill(x, 1.0f);
    lt_fill(x2, 1.0f);
    y = lt_dropout(ctx, x, p);
    y2 = lt_dropout(ctx2, x2, p);
    if (!t_check(y && y2, "core/dropout/train", "%s", lt_error(ctx))) { lt_ctx_destroy(ctx); lt_ctx_destroy(ctx2); return; }
    for (ok = 1, i = 0; i < N; i++) {
        mean += y->data[i];
        zeros += y->data[i] == 0.0f;
        ok &= y->data[i] == 0.0f || y->data[i] == 1.0f / (1.0f - p);
    }
    mean /= N;
    /* Bernoulli(0.75) over 20000: the zero fraction's std is 0.003, the mean's 0.004; 5 sigma */
    t_check(ok && fabs(mean - 1.0) < 0.02 && fabs((double)zeros / N - p) < 0.015, "core/dropout/statistics",
            "mean %.4f (want 1), zeros %.4f (want %.2f)", mean, (double)zeros / N, (double)p);
    t_check(memcmp(y->data, y2->data, N * sizeof(float)) == 0, "core/dropout/seeded", "same seed, other masks");
    /* backward: dx = dy * mask */
    t_check(lt_backward(ctx, lt_sum(ctx, y)) == LT_OK, "core/dropout/backward", "%s", lt_error(ctx));
    for (ok = 1, i = 0; i < N; i++) ok &= x->grad[i] == y->data[i];
    t_check(ok, "core/dropout/grad_is_mask", "dx differs from the mask");
    /* a second draw differs (the RNG moved on) */
    y = lt_dropout(ctx, x, p);
    t_check(y && memcmp(y->data, y2->data, N * sizeof(float)) != 0, "core/dropout/fresh_mask", "the same mask twice");
    /* eval mode and p = 0: identity */
    lt_set_training(ctx, 0);
    y = lt_dropout(ctx, x, p);
    t_check(y && memcmp(y->data, x->data, N * sizeof(float)) == 0, "core/dropout/eval_identity", "%s", lt_error(ctx));
    lt_set_training(ctx, 1);
    y = lt_dropout(ctx, x, 0.0f);
    t_check(y && memcmp(y->data, x->data, N * sizeof(float)) == 0, "core/dropout/p0_identity", "%s", lt_error(ctx));
    y = lt_dropout(ctx, x, 1.0f);
    for (ok = y != NULL, i = 0; ok && i < N; i++) ok = y->data[i] == 0.0f;
    t_check(ok, "core/dropout/p1_zeros", "%s", lt_error(ctx));
    lt_ctx_destroy(ctx);
    lt_ctx_destroy(ctx2);
}

/* ---- size arithmetic ---------------------------------------------------------------------------------- */
static void test_core_sizes(void) {
    size_t out = 12345;
    if (!t_want("core/sizes")) return;
    t_check(lt_mul_size(SIZE_MAX / 2 + 1, 2, &out) == 0 && out == 12345, "core/sizes/mul_overflow", "out %zu", out);
    t_check(sizeof(size_t) < 8 || (lt_mul_size((size_t)1 << 31 << 1, (size_t)1 << 31 << 1, &out) == 0 && out == 12345),
            "core/sizes/mul_overflow_2_64", "out %zu", out);
    t_check(lt_mul_size(SIZE_MAX, 1, &out) == 1 && out == SIZE_MAX && lt_mul_size(0, SIZE_MAX, &out) == 1 && out == 0 &&
                lt_mul_size(3, 7, &out) == 1 && out == 21,
            "core/sizes/mul", "out %zu", out);
    out = 5;
    t_check(lt_add_size(SIZE_MAX, 1, &out) == 0 && out == 5 && lt_add_size(SIZE_MAX - 1, 1, &out) == 1 && out == SIZE_MAX,
            "core/sizes/add", "out %zu", out);
}

/* ---- sgemm against a naive triple loop ------------------------------------------------------------------- */
/* C = alpha·op(A)·op(B) + beta·C with leading dims wider than the matrices.  A float32 sum of K
   products differs from the exact one by about sqrt(K)·2^-24·Σ|products| (random rounding), so
   each element is held to 2e-7·sqrt(K)·S, S = |alpha|·Σ_k|a_ik b_kj| + |beta·c_ij| (measured:
   worst ratio 0.21 of that). */
static void test_core_sgemm(void) {
    static const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 1, 33}, {65, 67, 130}, {4, 64, 64}, {7, 3, 300}, {66, 2, 5}};
    static const float ab[][2] = {{1.0f, 0.0f}, {0.5f, 1.0f}, {-1.25f, 0.75f}, {2.0f, 0.0f}};
    lt_rng rng;
    int s, ta, tb;
    double worst = 0;
    if (!t_want("core/sgemm")) return;
    lt_rng_seed(&rng, 11);
    for (s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++) {
                int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], i, j, q;
                int64_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
                int64_t lda = ac + 3, ldb = bc + 1, ldc = N + 2;
                float alpha = ab[(s + ta + 2 * tb) % 4][0], beta = ab[(s + ta + 2 * tb) % 4][1];
                float *A = (float *)malloc((size_t)(ar * lda) * sizeof(float));
                float *B = (float *)malloc((size_t)(br * ldb) * sizeof(float));
                float *C = (float *)malloc((size_t)(M * ldc) * sizeof(float));
                float *C0 = (float *)malloc((size_t)(M * ldc) * sizeof(float));
                char name[96];
                int ok = 1;
                double bad = 0;
                for (i = 0; i < ar * lda; i++) A[i] = (float)(lt_rng_uniform(&rng) * 2 - 1);
                for (i = 0; i < br * ldb; i++) B[i] = (float)(lt_rng_uniform(&rng) * 2 - 1);
                for (i = 0; i < M * ldc; i++) C0[i] = C[i] = (float)(lt_rng_uniform(&rng) * 2 - 1);
                if (beta == 0.0f) for (i = 0; i < M; i++) C[i * ldc] = C0[i * ldc] = NAN; /* beta 0 ignores C */
                lt_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
                for (i = 0; i < M; i++)
                    for (j = 0; j < ldc; j++) {
                        double ref = 0, S = 0, err, lim;
                        if (j >= N) { /* padding columns are not C's */
                            if (!(C[i * ldc + j] == C0[i * ldc + j])) ok = 0;
                            continue;
                        }
                        for (q = 0; q < K; q++) {
                            double a = ta ? A[q * lda + i] : A[i * lda + q], b = tb ? B[j * ldb + q] : B[q * ldb + j];
                            ref += a * b;
                            S += fabs(a * b);
                        }
                        ref *= alpha;
                        S *= fabs(alpha);
                        if (beta != 0.0f) { ref += (double)beta * C0[i * ldc + j]; S += fabs((double)beta * C0[i * ldc + j]); }
                        err = fabs(C[i * ldc + j] - ref);
                        lim = 2e-7 * sqrt((double)K + 1) * S + 1e-30;
                        if (!(err <= lim)) ok = 0;
                        if (!(err / lim <= bad)) bad = err / lim;
                    }
                if (bad > worst) worst = bad;
                snprintf(name, sizeof name, "core/sgemm/%s%s/%lldx%lldx%lld", ta ? "T" : "N", tb ? "T" : "N", (long long)M,
                         (long long)N, (long long)K);
                t_check(ok, name, "worst err/limit %.3g (alpha %g, beta %g)", bad, (double)alpha, (double)beta);
                free(A); free(B); free(C); free(C0);
            }
    printf("info core/sgemm: worst err/limit %.3f (%s)\n", worst, lt_kernel_name());
}

/* ---- gradcheck itself ------------------------------------------------------------------------------------- */
/* Backward of this op is right, but the forward the probes see is scaled by 2: gradcheck must
   notice (the analytic gradient is 1/2 of the numeric one). */
static lt_tensor *tc_liar(lt_ctx *ctx, lt_tensor **in, void *user) {
    int *calls = (int *)user;
    return lt_scale(ctx, lt_tanh(ctx, in[0]), (*calls)++ == 0 ? 1.0f : 2.0f);
}
static lt_tensor *tc_honest(lt_ctx *ctx, lt_tensor **in, void *user) {
    (void)user;
    return lt_mul(ctx, lt_tanh(ctx, in[0]), in[1]);
}

static void test_core_gradcheck(void) {
    lt_ctx *ctx;
    lt_tensor *in[2];
    int calls = 0;
    double e;
    if (!t_want("core/gradcheck")) return;
    ctx = lt_ctx_create(3);
    in[0] = lt_param(ctx, "a", 2, TC_SHAPE2(2, 3));
    in[1] = lt_param(ctx, "b", 1, TC_SHAPE1(3));
    lt_init_normal(ctx, in[0], 0.0, 1.0);
    lt_init_normal(ctx, in[1], 0.0, 1.0);
    e = lt_gradcheck(ctx, tc_honest, in, 2, NULL, 1e-2);
    t_check(e < 1e-3 && lt_arena_used(ctx) == 0, "core/gradcheck/agrees", "worst %.3g", e);
    e = lt_gradcheck(ctx, tc_liar, in, 1, &calls, 1e-2);
    t_check(e > 0.1, "core/gradcheck/catches_wrong_gradient", "worst %.3g on a wrong gradient", e);
    {
        lt_tensor *t = lt_tensor_new(ctx, 1, TC_SHAPE1(3)), *bad[1];
        bad[0] = t;
        e = lt_gradcheck(ctx, tc_honest, bad, 1, NULL, 1e-2);
        t_check(isnan(e) && lt_status_of(ctx) == LT_ERR_ARG && strstr(lt_error(ctx), "lt_gradcheck") != NULL,
                "core/gradcheck/needs_params", "%s", lt_error(ctx));
    }
    lt_ctx_destroy(ctx);
}


/* ---- stale and foreign tensors: refused with the op, the input and its shape ------------------------ */
static void test_core_stale(void) {
    lt_ctx *a, *b;
    lt_tensor *x, *w, *y, *loss, *wb;
    float v[6] = {1, 2, 3, 4, 5, 6};
    if (!t_want("core/stale")) return;
    a = lt_ctx_create(1);
    b = lt_ctx_create(1);
    w = lt_param(a, "w", 2, TC_SHAPE2(2, 3));
    tc_fill_seq(w, 0.5f, 0.25f);
    /* an input reused after lt_reset */
    x = lt_tensor_from(a, v, 2, TC_SHAPE2(2, 3));
    lt_reset(a);
    y = lt_add(a, x, w);
    t_check(!y && lt_status_of(a) == LT_ERR_STATE && strstr(lt_error(a), "lt_add") && strstr(lt_error(a), "[2,3]") &&
                strstr(lt_error(a), "stale"),
            "core/stale/input_after_reset", "%s", lt_error(a));
    lt_clear_error(a);
    /* ... and after the lazy reset of the next step (the first op after lt_backward) */
    x = lt_tensor_from(a, v, 2, TC_SHAPE2(2, 3));
    loss = lt_sum(a, lt_mul(a, x, w));
    t_check(lt_backward(a, loss) == LT_OK, "core/stale/step1", "%s", lt_error(a));
    y = lt_mul(a, w, x);   /* the reset happens here, then x is refused */
    t_check(!y && lt_status_of(a) == LT_ERR_STATE && strstr(lt_error(a), "lt_mul: the second input [2,3] is stale"),
            "core/stale/input_next_step", "%s", lt_error(a));
    lt_clear_error(a);
    /* a loss of the previous step passed to lt_backward */
    x = lt_tensor_from(a, v, 2, TC_SHAPE2(2, 3));
    loss = lt_sum(a, lt_mul(a, x, w));
    t_check(lt_backward(a, loss) == LT_OK, "core/stale/step2", "%s", lt_error(a));
    x = lt_tensor_from(a, v, 2, TC_SHAPE2(2, 3));   /* the next step begins: the old loss is stale */
    t_check(lt_backward(a, loss) == LT_ERR_STATE && strstr(lt_error(a), "lt_backward: the loss [1] is stale"),
            "core/stale/old_loss_backward", "%s", lt_error(a));
    lt_clear_error(a);
    /* reading a stale tensor is refused too */
    {
        float out[6];
        lt_reset(a);
        t_check(lt_tensor_read(a, x, 0, out) == LT_ERR_STATE, "core/stale/read", "%s", lt_error(a));
        lt_clear_error(a);
    }
    /* a tensor (and a parameter) of context b in a's ops */
    wb = lt_param(b, "wb", 2, TC_SHAPE2(2, 3));
    x = lt_tensor_from(b, v, 2, TC_SHAPE2(2, 3));
    y = lt_add(a, w, x);
    t_check(!y && lt_status_of(a) == LT_ERR_ARG && strstr(lt_error(a), "lt_add: the second input [2,3]") &&
                strstr(lt_error(a), "another context") && !lt_failed(b),
            "core/stale/foreign_tensor", "%s", lt_error(a));
    lt_clear_error(a);
    y = lt_layernorm(a, lt_tensor_from(a, v, 2, TC_SHAPE2(2, 3)), lt_param(a, "g", 1, TC_SHAPE1(3)),
                     lt_param(b, "bias", 1, TC_SHAPE1(3)), 1e-5f);
    t_check(!y && strstr(lt_error(a), "lt_layernorm: the third input [3] (\"bias\")"), "core/stale/foreign_param",
            "%s", lt_error(a));
    lt_clear_error(a);
    t_check(lt_backward(a, wb) == LT_ERR_ARG && strstr(lt_error(a), "\"wb\""), "core/stale/foreign_loss", "%s",
            lt_error(a));
    lt_clear_error(a);
    /* parameters stay valid across any number of resets */
    lt_reset(a); lt_reset(a);
    lt_zero_grad(a);
    loss = lt_sum(a, lt_mul(a, w, w));
    t_check(loss && lt_backward(a, loss) == LT_OK && fabsf(w->grad[0] - 2 * w->data[0]) < 1e-6f,
            "core/stale/param_survives_reset", "%s", lt_error(a));
    lt_ctx_destroy(a);
    lt_ctx_destroy(b);
}


/* ---- parameter names: what a checkpoint could not store is refused at lt_param ------------------------ */
static void test_core_param_names(void) {
    static const struct { const char *name, *why, *expect; } bad[] = {
        {"", "empty", "needs a name"},
        {"__metadata__", "reserved", "reserved"},
        {"caf\xe9", "Latin-1", "byte 3 is 0xE9"},
        {"a\xc0\xaf" "b", "overlong", "byte 1 is 0xC0"},
        {"x\xed\xa0\x80", "surrogate", "byte 1 is 0xED"},
        {"cut\xe2\x82", "truncated", "byte 3 is 0xE2"},
        {"w", "duplicate", "exists already"},
    };
    char longname[LT__NAME_MAX + 2], name[64];
    lt_ctx *ctx;
    int k;
    if (!t_want("core/param_names")) return;
    ctx = lt_ctx_create(1);
    t_check(lt_param(ctx, "w", 1, TC_SHAPE1(2)) && lt_param(ctx, "h.0.caf\xc3\xa9.\xe2\x82\xac", 1, TC_SHAPE1(2)) &&
                lt_param(ctx, "\xf0\x9f\x98\x80", 1, TC_SHAPE1(2)),
            "core/param_names/utf8_ok", "%s", lt_error(ctx));
    for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); k++) {
        lt_tensor *t = lt_param(ctx, bad[k].name, 1, TC_SHAPE1(2));
        snprintf(name, sizeof name, "core/param_names/%s", bad[k].why);
        t_check(!t && lt_status_of(ctx) == LT_ERR_ARG && strstr(lt_error(ctx), bad[k].expect), name, "%s", lt_error(ctx));
        lt_clear_error(ctx);
    }
    memset(longname, 'a', sizeof longname);
    longname[LT__NAME_MAX] = 0;
    t_check(lt_param(ctx, longname, 1, TC_SHAPE1(2)) != NULL, "core/param_names/longest", "%s", lt_error(ctx));
    longname[LT__NAME_MAX] = 'a';
    longname[LT__NAME_MAX + 1] = 0;
    t_check(!lt_param(ctx, longname, 1, TC_SHAPE1(2)) && strstr(lt_error(ctx), "1025 bytes long"), "core/param_names/too_long",
            "%s", lt_error(ctx));
    lt_clear_error(ctx);
    /* what lt_param accepts, a checkpoint saves and loads */
    {
        lt_st_writer *w = lt_st_writer_create(ctx);
        lt_paramset ps = lt_ctx_params(ctx);
        char path[256];
        lt_st *st;
        int i, ok = 1;
        snprintf(path, sizeof path, "%s/param_names.safetensors", t_tmp_dir());
        for (i = 0; i < ps.n; i++) ok &= lt_st_add(w, ps.p[i]->name, "F32", ps.p[i]->ndim, ps.p[i]->shape, ps.p[i]->data) == LT_OK;
        ok &= lt_st_save(w, path) == LT_OK;
        lt_st_writer_destroy(w);
        st = lt_st_open(ctx, path);
        ok &= st && lt_st_count(st) == ps.n && lt_st_find(st, "h.0.caf\xc3\xa9.\xe2\x82\xac") >= 0;
        lt_st_close(st);
        t_check(ok, "core/param_names/saved", "%s", lt_error(ctx));
    }
    lt_ctx_destroy(ctx);
}


/* ---- busy machines: the thread count left by other work (lt__threads_for; OpenMP builds) --------------- */
#ifdef _OPENMP
static void test_core_busy(void) {
    static const struct { int procs; double running, load; int want; } cases[] = {
        {2, 1, 0.0, 2},     /* idle */
        {2, 2, 1.0, 1},     /* one core busy (a competing loop) */
        {2, 3, 0.2, 2},     /* a moment's blip: the load average has not seen it */
        {2, 1, 3.0, 2},     /* a job that just ended: nothing runs now */
        {8, 4, 3.2, 5},
        {2, 10, 11.0, 1},   /* everything busy: still one thread */
        {1, 1, 0.0, 1},
    };
    int k, ok = 1;
    if (!t_want("core/busy")) return;
    for (k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        int got = lt__threads_for(cases[k].procs, cases[k].running, cases[k].load);
        if (got != cases[k].want) {
            ok = 0;
            printf("     procs %d, running %g, load %g: %d threads, want %d\n", cases[k].procs, cases[k].running,
                   cases[k].load, got, cases[k].want);
        }
    }
    t_check(ok, "core/busy/threads_for", "the thread count for a loaded machine is wrong");
    {   /* lt_set_threads wins over the load */
        int keep = lt_get_threads(), chosen = lt__threads_chosen;
        lt_ctx *ctx;
        lt_set_threads(3);
        ctx = lt_ctx_create(1);
        t_check(lt_get_threads() == 3, "core/busy/set_threads_wins", "%d threads", lt_get_threads());
        lt_ctx_destroy(ctx);
        omp_set_num_threads(keep);
        lt__threads_chosen = chosen;
    }
}
#else
static void test_core_busy(void) { if (t_want("core/busy")) t_skip("core/busy", "built without OpenMP"); }
#endif

/* ---- huge pages: the big buffers are advised (lt__hugepages; Linux) ------------------------------------ */
#ifdef LT__MADV_HUGEPAGE
/* Whether the mapping that holds p carries the huge-page advice ("hg" in its VmFlags line of
   /proc/self/smaps: the advice given, whether or not the kernel found 2 MiB pages), -1: unknown. */
static int t_hg(const void *p) {
    char line[512];
    unsigned long lo, hi, at = (unsigned long)(uintptr_t)p;
    int in = 0, got = -1;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) in = at >= lo && at < hi;   /* a mapping's first line */
        else if (in && !strncmp(line, "VmFlags:", 8)) {
            got = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return got;
}
static void test_core_hugepages(void) {
    lt_ctx *ctx;
    lt_tensor *w, *x, *w2;
    lt_optim *o;
    int64_t s[2] = {1024, 2048};   /* 8 MiB of floats: a 2 MiB-aligned middle of at least 4 MiB */
    if (!t_want("core/hugepages")) return;
    {   /* does this system record the advice at all?  (not under qemu-user, nor without THP) */
        size_t bytes = (size_t)8 << 20;
        char *probe = (char *)malloc(bytes);
        uintptr_t mid = ((uintptr_t)probe + LT__HUGE - 1) & ~(LT__HUGE - 1);
        int seen = probe && madvise((void *)mid, (size_t)LT__HUGE, LT__MADV_HUGEPAGE) == 0 && t_hg((void *)mid) == 1;
        free(probe);
        if (!seen) {
            t_skip("core/hugepages", "this system does not record huge-page advice (no THP, or qemu-user)");
            return;
        }
    }
    ctx = lt_ctx_create(1);
    w = lt_param(ctx, "w", 2, s);
    x = lt_tensor_new(ctx, 2, s);
    o = lt_adamw_create(ctx, lt_ctx_params(ctx), lt_adamw_defaults());
    if (!t_check(w && x && o && !lt_failed(ctx), "core/hugepages/made", "%s", lt_error(ctx))) { lt_ctx_destroy(ctx); return; }
    t_check(t_hg(w->data + (1 << 20)) == 1 && t_hg(w->grad + (1 << 20)) == 1, "core/hugepages/param",
            "a parameter's values or gradient (8 MiB) are not advised");
    t_check(t_hg(x->data + (1 << 20)) == 1, "core/hugepages/arena", "an arena chunk is not advised");
    t_check(t_hg(lt_optim_state(o, 0, 0) + (1 << 20)) == 1, "core/hugepages/optim", "AdamW's moments are not advised");
    setenv("LTRAIN_HUGEPAGES", "0", 1);
    w2 = lt_param(ctx, "w2", 2, s);
    unsetenv("LTRAIN_HUGEPAGES");
    t_check(w2 && t_hg(w2->data + (1 << 20)) == 0, "core/hugepages/off", "LTRAIN_HUGEPAGES=0 still advised");
    lt_optim_destroy(o);
    lt_ctx_destroy(ctx);
}
#else
static void test_core_hugepages(void) { if (t_want("core/hugepages")) t_skip("core/hugepages", "not Linux on x86-64 or AArch64"); }
#endif

static void test_core_all(void) {
    test_core_ctx();
    test_core_params();
    test_core_tape();
    test_core_retain_grad();
    test_core_reshape();
    test_core_dropout();
    test_core_sizes();
    test_core_sgemm();
    test_core_gradcheck();
    test_core_stale();
    test_core_param_names();
    test_core_busy();
    test_core_hugepages();
}

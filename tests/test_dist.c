/* test_dist.c - @@DIST built without LTRAIN_MPI: the single-process case every user program gets
   (rank 0 of 1, the all-reduce leaves gradients untouched, the sharded loader is the loader,
   checkpoints go through unchanged).  The multi-rank tests are tests/test_mpi.c, run by
   tests/test_mpi.sh under mpirun.  #included by test_main.c. */

static void test_dist_single(void) {
    lt_ctx *ctx;
    lt_gpt_config c;
    lt_gpt *g;
    lt_optim *opt;
    lt_dist *d;
    lt_dist_config bad = lt_dist_defaults();
    lt_loader *a, *b;
    lt_train_state st, st2;
    int32_t tok[200], in1[32], tg1[32], in2[32], tg2[32];
    float *before;
    size_t n, i;
    float *span;
    int k, same = 1;
    char path[256];
    lt_dist_stats s;
    if (!t_want("dist")) return;
    ctx = lt_ctx_create(3);
    t_check(lt_dist_init(NULL, NULL) == LT_OK && lt_dist_rank() == 0 && lt_dist_world() == 1, "dist/single-rank-0-of-1",
            "rank %d world %d", lt_dist_rank(), lt_dist_world());
    memset(&c, 0, sizeof c);
    c.vocab = 32; c.ctx = 8; c.layers = 1; c.heads = 2; c.channels = 16;
    g = lt_gpt_create(ctx, &c);
    opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    d = lt_dist_create(ctx, NULL);
    t_check(d && strstr(lt_dist_describe(d), "1 process") != NULL, "dist/single-describe", "%s",
            d ? lt_dist_describe(d) : lt_error(ctx));
    span = lt_params_grad_span(ctx, &n);
    for (i = 0; i < n; i++) span[i] = (float)i * 0.25f - 3.0f;
    before = (float *)malloc(n * sizeof(float));
    memcpy(before, span, n * sizeof(float));
    t_check(lt_dist_allreduce_grads(d) == LT_OK && !memcmp(before, span, n * sizeof(float)) &&
            lt_dist_mean(d, 2.5) == 2.5 && lt_dist_barrier(d) == LT_OK && lt_dist_check_sync(d) == LT_OK &&
            lt_dist_broadcast_params(d) == LT_OK, "dist/single-collectives-are-identity", "%s", lt_error(ctx));
    s = lt_dist_get_stats(d);
    t_check(s.calls == 1 && s.wire_bytes == 0 && s.last_ms == 0, "dist/single-stats", "calls %lld wire %g",
            (long long)s.calls, s.wire_bytes);
    free(before);

    for (k = 0; k < 200; k++) tok[k] = (k * 17 + k / 3) % 32;
    a = lt_loader_from_tokens(ctx, tok, 200, 4, 8);
    b = lt_loader_from_tokens(ctx, tok, 200, 4, 8);
    lt_loader_shuffle(a, 9);
    lt_loader_shuffle(b, 9);
    for (k = 0; k < 14 && same; k++) {
        lt_dist_loader_next(d, a, in1, tg1);
        lt_loader_next(b, in2, tg2);
        same = !memcmp(in1, in2, sizeof in1) && !memcmp(tg1, tg2, sizeof tg1);
    }
    t_check(same, "dist/single-loader-is-the-loader", "batch %d differs", k - 1);

    snprintf(path, sizeof path, "%s/dist_single.safetensors", t_tmp_dir());
    memset(&st, 0, sizeof st);
    st.step = 7; st.data_epoch = 1; st.data_index = 2;
    memset(&st2, 0, sizeof st2);
    t_check(lt_dist_checkpoint_save(d, g, opt, &st, "t", path) == LT_OK &&
            lt_dist_checkpoint_load(d, g, opt, &st2, path) == LT_OK && st2.step == 7 && st2.data_epoch == 1 &&
            st2.data_index == 2, "dist/single-checkpoint-round-trip", "%s", lt_error(ctx));
    remove(path);

    bad.mode = (lt_reduce_mode)7;
    t_check(lt_dist_create(ctx, &bad) == NULL && lt_status_of(ctx) == LT_ERR_ARG, "dist/bad-mode-refused", "%s",
            lt_error(ctx));
    lt_dist_destroy(d);
    lt_loader_destroy(a);
    lt_loader_destroy(b);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    lt_dist_finalize();
}

static void test_dist_all(void) { test_dist_single(); }

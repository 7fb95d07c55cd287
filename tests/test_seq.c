/* test_seq.c - variable-length sequences: splitting into lines / paragraphs / documents,
   bucketed and random batching (every piece once per epoch, the budget, resume), padding kept
   out of the loss and attention (a padded batch equals its sequences run one by one),
   token-weighted accumulation (equals one batch), folding rows for a length schedule, the
   schedule's values, random restarts; tinyshakespeare paragraphs when ../shared/data has them;
   build/train_gpt --seqs/--len-schedule resuming to the bit.  #included by test_main.c. */
#include <sys/wait.h>
#include <unistd.h>

/* Builds text of n lines whose lengths follow a skewed distribution (many short, few long),
   with a blank line after every third: lines and paragraphs of many lengths. */
static char *ts__text(int n, uint64_t seed, size_t *len) {
    lt_rng r;
    size_t cap = (size_t)n * 200 + 16, used = 0;
    char *s = (char *)malloc(cap);
    int i, k;
    lt_rng_seed(&r, seed);
    *len = 0;
    if (!s) return NULL;
    for (i = 0; i < n; i++) {
        double u = lt_rng_uniform(&r);
        int L = 1 + (int)(u * u * u * 150.0);
        for (k = 0; k < L; k++) s[used++] = (char)('a' + (int)(lt_rng_u64(&r) % 26));
        s[used++] = '\n';
        if (i % 3 == 2) s[used++] = '\n';
    }
    s[used] = 0;
    *len = used;
    return s;
}

static void ts__split(void) {
    const char *text = "ab\ncd\n\n\nefg\nh\n  \nij";
    int32_t toks[9] = {5, 1, 2, 9, 3, 4, 9, 9, 7};
    lt_ctx *ctx = lt_ctx_create(1);
    lt_seq_config c = lt_seq_defaults();
    lt_seq_loader *sl;
    int ok;
    c.max_len = 4; c.batch_tokens = 8;
    /* lines: "ab\n" "cd\n" "efg\n" "h\n" "  \n" "ij" (the lone "\n" lines have no pair) */
    c.split = LT_SEQ_LINES;
    sl = lt_seq_from_text(ctx, text, strlen(text), &c);
    ok = sl && lt_seq_count(sl) == 6 && lt_seq_length(sl, 0) == 2 && lt_seq_length(sl, 2) == 3 &&
         lt_seq_length(sl, 3) == 1 && lt_seq_length(sl, 4) == 2 && lt_seq_length(sl, 5) == 1 &&
         lt_seq_tokens(sl, 2)[0] == 'e' && lt_seq_tokens(sl, 2)[3] == '\n';
    t_check(ok, "seq.split.lines", "%lld pieces (want 6) %s", (long long)lt_seq_count(sl), lt_error(ctx));
    lt_seq_destroy(sl);
    /* paragraphs: "ab\ncd\n" (5 pairs: pieces 4 + 1), "efg\nh\n" (4 + 1), "ij" (1); "  " is blank */
    c.split = LT_SEQ_PARAGRAPHS;
    sl = lt_seq_from_text(ctx, text, strlen(text), &c);
    ok = sl && lt_seq_count(sl) == 5 && lt_seq_length(sl, 0) == 4 && lt_seq_length(sl, 1) == 1 &&
         lt_seq_tokens(sl, 1)[0] == 'd' && lt_seq_tokens(sl, 1)[1] == '\n' && lt_seq_tokens(sl, 2)[0] == 'e' &&
         lt_seq_length(sl, 4) == 1 && lt_seq_tokens(sl, 4)[0] == 'i';
    t_check(ok, "seq.split.paragraphs", "%lld pieces (want 5) %s", (long long)lt_seq_count(sl), lt_error(ctx));
    lt_seq_destroy(sl);
    /* documents at eot 9: [5 1 2] [9 3 4] [9] [9 7]; the lone [9] has no pair */
    c.split = LT_SEQ_EOT; c.eot = 9;
    sl = lt_seq_from_tokens(ctx, toks, 9, &c);
    ok = sl && lt_seq_count(sl) == 3 && lt_seq_length(sl, 0) == 2 && lt_seq_length(sl, 1) == 2 &&
         lt_seq_tokens(sl, 1)[0] == 9 && lt_seq_length(sl, 2) == 1 && lt_seq_tokens(sl, 2)[1] == 7;
    t_check(ok, "seq.split.eot", "%lld pieces (want 3) %s", (long long)lt_seq_count(sl), lt_error(ctx));
    lt_seq_destroy(sl);
    /* errors: a budget below max_len; nothing to train on */
    c.batch_tokens = 3;
    sl = lt_seq_from_tokens(ctx, toks, 9, &c);
    t_check(!sl && strstr(lt_error(ctx), "batch_tokens"), "seq.split.bad_budget", "\"%s\"", lt_error(ctx));
    lt_clear_error(ctx);
    c.batch_tokens = 8; c.split = LT_SEQ_LINES;
    sl = lt_seq_from_text(ctx, "\n\n\n", 3, &c);
    t_check(!sl && strstr(lt_error(ctx), "no sequence"), "seq.split.empty", "\"%s\"", lt_error(ctx));
    lt_ctx_destroy(ctx);
}

/* One epoch's statistics: every piece exactly once, budget kept, one bucket per batch. */
typedef struct { int64_t batches, positions, real; int once, budget, bucket; } ts__epoch;

static ts__epoch ts__walk(lt_seq_loader *sl, const lt_seq_config *c, int64_t epoch, int64_t *seen, int64_t *members) {
    ts__epoch e;
    int64_t n = lt_seq_count(sl), i, k;
    memset(&e, 0, sizeof e);
    e.once = e.budget = e.bucket = 1;
    for (i = 0; i < n; i++) seen[i] = 0;
    e.batches = lt_seq_batches(sl, epoch);
    for (i = 0; i < e.batches; i++) {
        int64_t m = lt_seq_batch_members(sl, epoch, i, members), lo = INT_MAX, hi = 0, sum = 0;
        for (k = 0; k < m; k++) {
            int64_t L = lt_seq_length(sl, members[k]);
            seen[members[k]]++;
            if (L < lo) lo = L;
            if (L > hi) hi = L;
            sum += L;
        }
        if (m * hi > c->batch_tokens) e.budget = 0;
        /* a bucket is (h(1-w), h]: so lo > h(1-w) - 1 >= hi(1-w) - 1 */
        if (c->batching == LT_BATCH_BUCKET && !((double)lo > (double)hi * (1.0 - c->bucket_width) - 1.0)) e.bucket = 0;
        e.positions += m * hi;
        e.real += sum;
    }
    for (i = 0; i < n; i++) if (seen[i] != 1) e.once = 0;
    return e;
}

static void ts__batching(void) {
    size_t len;
    char *text = ts__text(3000, 11, &len);
    lt_ctx *ctx = lt_ctx_create(1);
    lt_seq_config c = lt_seq_defaults();
    int mode;
    double pad[2] = {0, 0};
    c.split = LT_SEQ_LINES; c.max_len = 64; c.batch_tokens = 1024; c.seed = 5;
    for (mode = 0; mode < 2; mode++) {
        lt_seq_loader *sl, *s2;
        int64_t *seen, *members, e, i, ep, ix, diff = 0;
        int once = 1, budget = 1, bucket = 1, same = 1;
        char nm[64];
        lt_batch b1, b2;
        memset(&b1, 0, sizeof b1); memset(&b2, 0, sizeof b2);
        c.batching = mode ? LT_BATCH_RANDOM : LT_BATCH_BUCKET;
        sl = lt_seq_from_text(ctx, text, len, &c);
        s2 = lt_seq_from_text(ctx, text, len, &c);
        if (!sl || !s2) { t_check(0, "seq.batching", "%s", lt_error(ctx)); lt_seq_destroy(sl); lt_seq_destroy(s2); break; }
        seen = (int64_t *)malloc((size_t)lt_seq_count(sl) * sizeof(int64_t));
        members = (int64_t *)malloc((size_t)c.batch_tokens * sizeof(int64_t));
        for (e = 0; e < 3; e++) {
            ts__epoch st = ts__walk(sl, &c, e, seen, members);
            once &= st.once; budget &= st.budget; bucket &= st.bucket;
            if (e == 0) pad[mode] = 1.0 - (double)st.real / (double)st.positions;
        }
        snprintf(nm, sizeof nm, "seq.batching.%s.once_per_epoch", mode ? "random" : "bucket");
        t_check(once, nm, "a piece was missing or repeated in an epoch");
        snprintf(nm, sizeof nm, "seq.batching.%s.budget", mode ? "random" : "bucket");
        t_check(budget, nm, "a batch exceeded %lld tokens", (long long)c.batch_tokens);
        if (!mode) t_check(bucket, "seq.batching.bucket.one_bucket", "a batch mixed lengths across buckets");
        /* epochs differ; the same seed gives the same batches; a position resumes exactly */
        for (i = 0; i < 5 && i < lt_seq_batches(sl, 0); i++)
            diff += lt_seq_batch_members(sl, 0, i, members) != lt_seq_batch_members(sl, 1, i, seen) || members[0] != seen[0];
        snprintf(nm, sizeof nm, "seq.batching.%s.epochs_differ", mode ? "random" : "bucket");
        t_check(diff > 0, nm, "epochs 0 and 1 start with the same batches");
        for (i = 0; i < lt_seq_batches(sl, 0) + 7; i++) lt_seq_next(sl, 0, &b1);
        lt_seq_get_pos(sl, &ep, &ix);
        lt_seq_set_pos(s2, ep, ix);
        for (i = 0; i < 3 && same; i++) {
            lt_seq_next(sl, 0, &b1);
            lt_seq_next(s2, 0, &b2);
            same = b1.B == b2.B && b1.T == b2.T &&
                   !memcmp(b1.ids, b2.ids, (size_t)b1.B * (size_t)b1.T * sizeof(int32_t)) &&
                   !memcmp(b1.targets, b2.targets, (size_t)b1.B * (size_t)b1.T * sizeof(int32_t));
        }
        snprintf(nm, sizeof nm, "seq.batching.%s.resume", mode ? "random" : "bucket");
        t_check(same && ep == 1 && ix == 7, nm, "position (%lld, %lld) did not resume to the same batches", (long long)ep,
                (long long)ix);
        lt_batch_free(&b1); lt_batch_free(&b2);
        free(seen); free(members);
        lt_seq_destroy(sl); lt_seq_destroy(s2);
    }
    t_check(pad[0] <= 0.05 && pad[1] > 2 * pad[0], "seq.batching.padding", "bucket %.1f%%, random %.1f%%", 100 * pad[0],
            100 * pad[1]);
    printf("info seq.batching: padding over one epoch (skewed lengths 1..150 cut at 64, 1024 tokens): bucket %.1f%%, "
           "random %.1f%%\n", 100 * pad[0], 100 * pad[1]);
    lt_seq_set_pos(NULL, 0, 0);
    lt_ctx_destroy(ctx);
    free(text);
}

/* A tiny GPT (V 32, ctx 16) for the loss-masking checks. */
static lt_gpt *ts__gpt(lt_ctx *ctx) {
    lt_gpt_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab = 32; cfg.ctx = 16; cfg.layers = 2; cfg.heads = 2; cfg.channels = 16;
    return lt_gpt_create(ctx, &cfg);
}

/* loss and a copy of the flat gradient */
static double ts__run(lt_ctx *ctx, lt_gpt *g, const int32_t *ids, const int32_t *tg, int B, int T, const int32_t *len,
                      double denom, int zero) {
    lt_tensor *loss;
    double l;
    if (zero) lt_zero_grad(ctx);
    loss = lt_gpt_loss_ex(g, ids, tg, B, T, len, denom);
    l = lt_item(loss);
    lt_backward(ctx, loss);
    return l;
}

static void ts__masking(void) {
    /* three sequences of 6, 10 and 3 pairs: their tokens, then run padded (T 10) and one by one */
    enum { NS = 3, TP = 10 };
    static const int lens[NS] = {6, 10, 3};
    lt_ctx *ctx = lt_ctx_create(3);
    lt_gpt *g = ctx ? ts__gpt(ctx) : NULL;
    int32_t seq[NS][TP + 1], ids[NS * TP], tg[NS * TP], len[NS];
    float *g1 = NULL, *grad;
    size_t ng = 0, i;
    double l1, l2 = 0, denom = 0, worst = 0;
    int s, t;
    lt_rng r;
    if (!g) { t_check(0, "seq.mask", "setup: %s", ctx ? lt_error(ctx) : "no context"); lt_ctx_destroy(ctx); return; }
    lt_rng_seed(&r, 99);
    for (s = 0; s < NS; s++) {
        for (t = 0; t <= TP; t++) seq[s][t] = (int32_t)(lt_rng_u64(&r) % 32);
        for (t = 0; t < TP; t++) {
            /* padding inputs are arbitrary tokens (not 0): they must not matter */
            ids[s * TP + t] = t < lens[s] ? seq[s][t] : (int32_t)(lt_rng_u64(&r) % 32);
            tg[s * TP + t] = t < lens[s] ? seq[s][t + 1] : LT_IGNORE_INDEX;
        }
        len[s] = lens[s];
        denom += lens[s];
    }
    l1 = ts__run(ctx, g, ids, tg, NS, TP, len, denom, 1);
    grad = lt_params_grad_span(ctx, &ng);
    g1 = (float *)malloc(ng * sizeof(float));
    if (g1 && grad) memcpy(g1, grad, ng * sizeof(float));
    lt_zero_grad(ctx);
    for (s = 0; s < NS; s++) l2 += ts__run(ctx, g, seq[s], seq[s] + 1, 1, lens[s], NULL, denom, 0);
    grad = lt_params_grad_span(ctx, &ng);
    t_check(!lt_failed(ctx) && fabs(l1 - l2) <= 1e-6 * fabs(l2), "seq.mask.loss",
            "padded %.9g, one by one %.9g (%s)", l1, l2, lt_error(ctx));
    /* fp32: gradients are sums over rows in another order; 1e-6 + 1e-4|ref| */
    if (g1 && grad) {
        t_close("seq.mask.grads", g1, grad, (int64_t)ng, 1e-6, 1e-4);
        for (i = 0; i < ng; i++) if (fabs((double)g1[i] - grad[i]) > worst) worst = fabs((double)g1[i] - grad[i]);
        printf("info seq.mask: padded vs one by one: loss %.9g vs %.9g, worst gradient difference %.3g over %zu\n", l1, l2,
               worst, ng);
    }
    /* (padding sits at the end of a row, so causal attention alone already hides it from the
       real queries; lengths also zero the padded rows' attention and skip its work) */

    /* token-weighted accumulation: micro-batches {0,2} (T 6) and {1} (T 10), denom = all real
       targets, against the one batch above */
    {
        int32_t ia[2 * 6], ta[2 * 6], la[2] = {6, 3};
        double la_loss;
        for (t = 0; t < 6; t++) {
            ia[t] = seq[0][t]; ta[t] = seq[0][t + 1];
            ia[6 + t] = t < 3 ? seq[2][t] : 0; ta[6 + t] = t < 3 ? seq[2][t + 1] : LT_IGNORE_INDEX;
        }
        la_loss = ts__run(ctx, g, ia, ta, 2, 6, la, denom, 1);
        la_loss += ts__run(ctx, g, seq[1], seq[1] + 1, 1, 10, NULL, denom, 0);
        grad = lt_params_grad_span(ctx, &ng);
        t_check(fabs(la_loss - l1) <= 1e-6 * fabs(l1), "seq.accum.loss", "2 micro-batches %.9g, one batch %.9g", la_loss,
                l1);
        if (g1 && grad) t_close("seq.accum.grads", grad, g1, (int64_t)ng, 1e-6, 1e-4);
        /* the mean of micro-batch means is not the same thing: (sum_a/9 + sum_b/10)/2 */
        {
            double ma = ts__run(ctx, g, ia, ta, 2, 6, la, 0, 1), mb = ts__run(ctx, g, seq[1], seq[1] + 1, 1, 10, NULL, 0, 1);
            printf("info seq.accum: token-weighted %.6f = one batch %.6f; mean of micro-batch means would be %.6f\n",
                   la_loss, l1, (ma + mb) / 2);
        }
    }
    free(g1);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

static void ts__fold(void) {
    int32_t ids[16], tg[16], len[2] = {8, 5};
    lt_ctx *ctx = lt_ctx_create(1);
    lt_batch b;
    int i, ok;
    memset(&b, 0, sizeof b);
    for (i = 0; i < 16; i++) { ids[i] = 100 + i; tg[i] = 200 + i; }
    /* row 0 (8) -> 3,3,2; row 1 (5) -> 3,2: 5 rows of 3 */
    lt_batch_from_rows(ctx, &b, ids, tg, len, 2, 8, 3);
    ok = b.B == 5 && b.T == 3 && b.real == 13 && b.lengths[0] == 3 && b.lengths[2] == 2 && b.lengths[4] == 2 &&
         b.ids[3] == 103 && b.ids[6] == 106 && b.ids[8] == 0 && b.targets[8] == LT_IGNORE_INDEX && b.ids[9] == 108 &&
         b.targets[12] == 211 && b.targets[14] == LT_IGNORE_INDEX;
    t_check(ok, "seq.fold.rows", "B %d T %d real %lld", b.B, b.T, (long long)b.real);
    lt_batch_from_rows(ctx, &b, ids, tg, NULL, 2, 8, 0);
    ok = b.B == 2 && b.T == 8 && b.real == 16 && !memcmp(b.ids, ids, sizeof ids) && !memcmp(b.targets, tg, sizeof tg);
    t_check(ok, "seq.fold.identity", "B %d T %d", b.B, b.T);
    lt_batch_from_rows(ctx, &b, ids, tg, NULL, 2, 8, 4);   /* a stream batch [2,8] at length 4 -> [4,4] */
    ok = b.B == 4 && b.T == 4 && b.real == 16 && !memcmp(b.ids, ids, sizeof ids);
    t_check(ok, "seq.fold.stream", "B %d T %d", b.B, b.T);
    lt_batch_free(&b);
    lt_ctx_destroy(ctx);
}

static void ts__schedule(void) {
    /* expected values, computed by hand from the formulas in the header */
    static const int64_t at[6] = {0, 24, 25, 50, 99, 100};
    static const int lin[6] = {16, 72, 72, 136, 248, 256};   /* 16 + 240 p, down to a multiple of 8 */
    static const int stp[6] = {16, 16, 32, 64, 128, 256};    /* n = 4 doublings, each 25 steps */
    static const int sqr[6] = {16, 128, 136, 184, 248, 256}; /* 16 + 240 sqrt(p), down to x8 */
    lt_len_schedule ls;
    char err[200];
    int i, ok = 1, got[3][6];
    ok &= lt_len_parse("16:256:100", &ls, err, sizeof err) && ls.rule == LT_LEN_LINEAR && ls.quantum == 8;
    for (i = 0; i < 6; i++) ok &= (got[0][i] = lt_len_at(&ls, at[i])) == lin[i];
    ok &= lt_len_parse("16:256:100:step", &ls, err, sizeof err) && ls.rule == LT_LEN_STEP;
    for (i = 0; i < 6; i++) ok &= (got[1][i] = lt_len_at(&ls, at[i])) == stp[i];
    ok &= lt_len_parse("16:256:100:sqrt", &ls, err, sizeof err) && ls.rule == LT_LEN_SQRT;
    for (i = 0; i < 6; i++) ok &= (got[2][i] = lt_len_at(&ls, at[i])) == sqr[i];
    t_check(ok, "seq.len_schedule.values", "linear %d %d %d %d %d %d, step %d %d %d %d %d %d, sqrt %d %d %d %d %d %d",
            got[0][0], got[0][1], got[0][2], got[0][3], got[0][4], got[0][5], got[1][0], got[1][1], got[1][2], got[1][3],
            got[1][4], got[1][5], got[2][0], got[2][1], got[2][2], got[2][3], got[2][4], got[2][5]);
    /* 24:64 with step: 24, 48, then capped at 64 */
    ok = lt_len_parse("24:64:10:step", &ls, err, sizeof err) && lt_len_at(&ls, 0) == 24 && lt_len_at(&ls, 5) == 48 &&
         lt_len_at(&ls, 9) == 48 && lt_len_at(&ls, 10) == 64 && lt_len_at(&ls, 1000) == 64;
    t_check(ok, "seq.len_schedule.step_cap", "24:64:10:step gave %d %d %d", lt_len_at(&ls, 0), lt_len_at(&ls, 5),
            lt_len_at(&ls, 10));
    ok = !lt_len_parse("64:16:10", &ls, err, sizeof err) && strstr(err, "T0") &&
         !lt_len_parse("16:64", &ls, err, sizeof err) && !lt_len_parse("16:64:10:cubic", &ls, err, sizeof err) &&
         strstr(err, "rule") && !lt_len_parse("0:64:10", &ls, err, sizeof err);
    t_check(ok, "seq.len_schedule.parse_errors", "last message \"%s\"", err);
}

/* restarts: a fake trainer with known losses, then three tiny real ones */
static lt_status ts__fake(void *user, int r, uint64_t seed, double *val) {
    (void)seed;
    *val = ((const double *)user)[r];
    return r == 4 ? LT_ERR_STATE : LT_OK;
}

typedef struct { const int32_t *tok; int64_t n; } ts__data;
static lt_status ts__real(void *user, int r, uint64_t seed, double *val) {
    const ts__data *d = (const ts__data *)user;
    lt_ctx *ctx = lt_ctx_create(seed);
    lt_gpt *g = ctx ? ts__gpt(ctx) : NULL;
    lt_optim *opt = g ? lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults()) : NULL;
    lt_loader *ld = opt ? lt_loader_from_tokens(ctx, d->tok, d->n / 2, 4, 8) : NULL;
    lt_loader *vl = ld ? lt_loader_from_tokens(ctx, d->tok + d->n / 2, d->n / 2, 4, 8) : NULL;
    int32_t in[32], tg[32];
    int k;
    lt_status s;
    (void)r;
    if (vl) lt_loader_shuffle(ld, seed);
    for (k = 0; vl && k < 6; k++) {
        lt_zero_grad(ctx);
        lt_loader_next(ld, in, tg);
        lt_backward(ctx, lt_gpt_loss(g, in, tg, 4, 8));
        lt_optim_step(opt, 1e-2);
    }
    *val = 0;
    for (k = 0; vl && k < 2; k++) {
        lt_reset(ctx);
        lt_loader_next(vl, in, tg);
        *val += lt_item(lt_gpt_loss(g, in, tg, 4, 8)) / 2;
    }
    s = ctx ? (vl ? lt_status_of(ctx) : LT_ERR_STATE) : LT_ERR_NOMEM;
    lt_loader_destroy(ld); lt_loader_destroy(vl); lt_optim_destroy(opt); lt_gpt_destroy(g); lt_ctx_destroy(ctx);
    return s;
}

static void ts__restarts(void) {
    double fake[6] = {2.5, 1.9, NAN, 1.9, 0.1, 2.0}, val[6], nan3[3] = {NAN, NAN, NAN};
    uint64_t seeds[6];
    int32_t tok[400];
    ts__data d;
    int best, i, r, argmin = 0;
    best = lt_restarts(6, 100, ts__fake, fake, seeds, val);
    /* index 4 reported 0.1 but failed: it must not win */
    t_check(best == 1 && seeds[0] == 100 && seeds[5] == 105 && isnan(val[4]) && isnan(val[2]), "seq.restarts.pick",
            "best %d (want 1: the first of the two 1.9s; 0.1 came from a failed run)", best);
    t_check(lt_restarts(3, 0, ts__fake, nan3, NULL, NULL) == -1, "seq.restarts.none_finite", "picked a NaN");
    for (i = 0; i < 400; i++) tok[i] = (int32_t)((i * 7 + i / 13) % 32);
    d.tok = tok; d.n = 400;
    best = lt_restarts(3, 42, ts__real, &d, seeds, val);
    for (r = 1; r < 3; r++) if (val[r] < val[argmin]) argmin = r;
    t_check(best == argmin && val[0] != val[1] && val[1] != val[2], "seq.restarts.real", "best %d, losses %g %g %g", best,
            val[0], val[1], val[2]);
    lt_restarts_print(stdout, 3, seeds, val, best);
}

/* tinyshakespeare paragraphs, as the issue measures them: T 256, 4096 tokens per batch */
static void ts__shakespeare(void) {
    char path[512];
    lt_ctx *ctx = lt_ctx_create(1);
    lt_seq_config c = lt_seq_defaults();
    double pad[2] = {0, 0};
    int64_t nb[2] = {0, 0}, npieces = 0;
    int mode;
    FILE *f;
    snprintf(path, sizeof path, "%s/tinyshakespeare.txt", t_shared_dir());
    if (!(f = fopen(path, "rb"))) {
        t_skip("seq.shakespeare", "no tinyshakespeare.txt in ../shared/data (LT_SHARED_DIR)");
        lt_ctx_destroy(ctx);
        return;
    }
    fclose(f);
    c.split = LT_SEQ_PARAGRAPHS; c.max_len = 256; c.batch_tokens = 4096; c.seed = 1;
    for (mode = 0; mode < 2; mode++) {
        lt_seq_loader *sl;
        int64_t *seen, *mem;
        ts__epoch e;
        c.batching = mode ? LT_BATCH_RANDOM : LT_BATCH_BUCKET;
        sl = lt_seq_open(ctx, path, &c, 256);
        if (!sl) { t_check(0, "seq.shakespeare", "%s", lt_error(ctx)); break; }
        npieces = lt_seq_count(sl);
        seen = (int64_t *)malloc((size_t)npieces * sizeof(int64_t));
        mem = (int64_t *)malloc((size_t)c.batch_tokens * sizeof(int64_t));
        e = ts__walk(sl, &c, 0, seen, mem);
        pad[mode] = 1.0 - (double)e.real / (double)e.positions;
        nb[mode] = e.batches;
        t_check(e.once && e.budget && e.bucket, mode ? "seq.shakespeare.random.epoch" : "seq.shakespeare.bucket.epoch",
                "once %d budget %d bucket %d", e.once, e.budget, e.bucket);
        free(seen); free(mem);
        lt_seq_destroy(sl);
    }
    t_check(pad[0] <= 0.05, "seq.shakespeare.bucket_padding", "%.2f%% (goal <= 5%%)", 100 * pad[0]);
    printf("info seq.shakespeare: %lld paragraph pieces (T 256); padding bucket %.2f%% (%lld batches), random %.2f%% "
           "(%lld batches)\n", (long long)npieces, 100 * pad[0], (long long)nb[0], 100 * pad[1], (long long)nb[1]);
    lt_ctx_destroy(ctx);
}

/* ---- build/train_gpt (test_gpt.c's tg__straight_and_resumed runs it) ------------------------ */
static char ts__made[16][512];
static int ts__nmade;
/* a file under the tmp dir, named with the process id, removed by ts__cleanup */
static char *ts__path(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/seq%d_%s", t_tmp_dir(), (int)getpid(), name);
    if (ts__nmade < 16) snprintf(ts__made[ts__nmade++], sizeof ts__made[0], "%s", buf);
    return buf;
}
static void ts__cleanup(void) {
    while (ts__nmade > 0) remove(ts__made[--ts__nmade]);
}
/* The first line of a file (for error messages). */
static void ts__first_line(const char *path, char *buf, int cap) {
    FILE *f = fopen(path, "rb");
    buf[0] = 0;
    if (f) { if (!fgets(buf, cap, f)) buf[0] = 0; fclose(f); }
}
/* Per step line of a --log file: the text from "loss" up to "ms" (loss, lr, grad_norm). */
static int ts__log(const char *path, char out[][200], int cap) {
    FILE *f = fopen(path, "rb");
    char line[1024];
    int n = 0;
    if (!f) return -1;
    while (n < cap && fgets(line, sizeof line, f)) {
        const char *a = strstr(line, "\"loss\""), *b = strstr(line, "\"ms\"");
        if (!a || !b || b < a) continue;
        snprintf(out[n++], 200, "%.*s", (int)(b - a), a);
    }
    fclose(f);
    return n;
}

/* build/train_gpt with sequences and a length schedule: 20 steps straight equal 10 + save +
   resume 10, to the bit (the position is (epoch, batch) and the length comes from the step). */
static void ts__train_gpt_case(const char *tag, const char *data, const char *extra) {
    char common[1024], logA[512], logB[512], ck[512], err[512], nm[128];
    static char la[40][200], lb[40][200];
    int na, nb, i, same, rc[3];
    snprintf(nm, sizeof nm, "%s.a.jsonl", tag); ts__path(logA, sizeof logA, nm);
    snprintf(nm, sizeof nm, "%s.b.jsonl", tag); ts__path(logB, sizeof logB, nm);
    snprintf(nm, sizeof nm, "%s.ckpt", tag); ts__path(ck, sizeof ck, nm);
    ts__path(err, sizeof err, "err.txt");
    snprintf(common, sizeof common, "--data %s --layers 1 --heads 2 --channels 16 --ctx 16 --batch 2 --seq 16 "
             "--accum 2 --steps 20 --warmup 3 --lr 3e-3 --seed 7 %s", data, extra);
    tg__straight_and_resumed(common, ck, logA, logB, err, rc);
    snprintf(nm, sizeof nm, "seq.train_gpt.%s.resume_bitwise", tag);
    if (rc[0] || rc[1] || rc[2]) {
        char e[300];
        ts__first_line(err, e, sizeof e);
        t_check(0, nm, "exit statuses %d %d %d: %s", rc[0], rc[1], rc[2], e);
        return;
    }
    na = ts__log(logA, la, 40);
    nb = ts__log(logB, lb, 40);
    same = na == 20 && nb == 20;
    for (i = 0; same && i < 20; i++) same = strcmp(la[i], lb[i]) == 0;
    t_check(same, nm, "%d and %d log lines; first difference at step %d", na, nb, i);
}

static void ts__train_gpt(void) {
    char data[512];
    FILE *f;
    int i;
    if (!tg__have_bin()) { t_skip("seq.train_gpt", "build/train_gpt is missing (make build/train_gpt)"); return; }
    ts__path(data, sizeof data, "train.txt");
    if (!(f = fopen(data, "wb"))) { t_check(0, "seq.train_gpt", "cannot write %s", data); return; }
    for (i = 0; i < 60; i++)
        fprintf(f, "%s %d%s\n%s", i % 4 ? "the fox" : "a much longer line about the quick brown fox", i,
                i % 5 ? "" : " jumps", i % 3 == 2 ? "\n" : "");
    fclose(f);
    ts__train_gpt_case("paragraphs", data, "--seqs paragraphs --batch-tokens 40 --len-schedule 4:16:12:step");
    ts__train_gpt_case("lines_random", data, "--seqs lines --batching random --batch-tokens 48");
    ts__train_gpt_case("stream_sched", data, "--len-schedule 4:16:10:linear");
    ts__cleanup();
}

static void test_seq_all(void) {
    if (t_only && strncmp(t_only, "seq", 3) != 0 && !strstr("seq", t_only)) return;
    ts__split();
    ts__batching();
    ts__masking();
    ts__fold();
    ts__schedule();
    ts__restarts();
    ts__shakespeare();
    ts__train_gpt();
}

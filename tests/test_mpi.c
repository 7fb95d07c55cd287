/* mpicc -std=c99 -O2 -DLTRAIN_MPI -I. -Itests tests/test_mpi.c -o build/test_mpi -lm
   mpirun -np N build/test_mpi        (tests/test_mpi.sh runs it with 1, 2 and 3 ranks)

   Data-parallel training (@@DIST) against one process with the combined batch: every rank
   also trains the single-process reference itself (B_global = N*B rows, no MPI), so the
   comparison needs no files.  Checked: the three reduction modes on known gradients (bit for
   bit: integer sums, rank-ordered sums, bf16 wire), bucket edges and padding, unpacked
   parameters, sharding of the global batch, losses and final weights against the reference,
   weights in sync across ranks, checkpoint resume to the bit.  Every rank checks; rank 0 prints
   "ok name" when all ranks passed, a failing rank prints its own FAIL line. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TM_V 64
#define TM_T 16
#define TM_B 2      /* rows per rank */
#define TM_K 2      /* micro-batches per step */
#define TM_STEPS 6

static int tm_rank, tm_world, tm_passed, tm_failed;

/* Collective: passes when it passed on every rank. */
static int tm_check(int ok, const char *name, const char *fmt, ...) {
    int all = 0;
    char full[160];
    snprintf(full, sizeof full, "mpi%d/%s", tm_world, name);
    if (!ok) {
        va_list ap;
        printf("FAIL %s [rank %d]: ", full, tm_rank);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
    }
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all) tm_passed++; else tm_failed++;
    if (all && tm_rank == 0) { printf("ok   %s\n", full); fflush(stdout); }
    return all;
}

static uint16_t tm_bf16(float x) { return lt_f32_to_bf16(x); }
static float tm_f(uint16_t h) { return lt_bf16_to_f32(h); }

/* ---- the three reductions on known gradients ---------------------------------------------- */
static float tm_val(lt_reduce_mode m, int rank, size_t i) {
    if (m == LT_REDUCE_F32) return (float)((int)((i * 7 + (size_t)rank * 13) % 29) - 14);  /* exact sums */
    return (float)(sin(0.37 * (double)i + rank) * 1e-2);
}

static void test_reduce(lt_reduce_mode m, int packed) {
    static const int64_t sizes[4] = {1000, 3, 2500, 77};   /* 3580 floats: 4 buckets of 1024, ragged */
    lt_ctx *ctx = lt_ctx_create(1);
    lt_dist_config dc = lt_dist_defaults();
    lt_dist *d;
    lt_tensor *p[4];
    size_t i, off, bad = 0, first = 0;
    float got = 0, want = 0, inv = 1.0f / (float)tm_world;
    int k, j;
    char name[96];
    lt_dist_stats s;
    for (k = 0; k < 4; k++) { char nm[16]; snprintf(nm, sizeof nm, "p%d", k); p[k] = lt_param(ctx, nm, 1, &sizes[k]); }
    if (packed) lt_params_pack(ctx);
    dc.bucket_bytes = 4096;
    dc.mode = m;
    d = lt_dist_create(ctx, &dc);
    for (k = 0, off = 0; k < 4; off += (size_t)p[k]->n, k++)
        for (i = 0; i < (size_t)p[k]->n; i++) p[k]->grad[i] = tm_val(m, tm_rank, off + i);
    lt_dist_allreduce_grads(d);
    for (k = 0, off = 0; k < 4; off += (size_t)p[k]->n, k++)
        for (i = 0; i < (size_t)p[k]->n; i++) {
            size_t g = off + i;
            float acc;
            if (m == LT_REDUCE_BF16) {
                acc = tm_f(tm_bf16(tm_val(m, 0, g)));
                for (j = 1; j < tm_world; j++) acc += tm_f(tm_bf16(tm_val(m, j, g)));
                acc = tm_world > 1 ? tm_f(tm_bf16(acc * inv)) : tm_val(m, 0, g);
            } else {
                acc = tm_val(m, 0, g);
                for (j = 1; j < tm_world; j++) acc += tm_val(m, j, g);
                if (tm_world > 1) acc *= inv;
            }
            if (memcmp(&acc, &p[k]->grad[i], sizeof acc) != 0 && bad++ == 0) { first = g; got = p[k]->grad[i]; want = acc; }
        }
    s = lt_dist_get_stats(d);
    snprintf(name, sizeof name, "reduce-%s-%s", m == LT_REDUCE_F32 ? "f32" : m == LT_REDUCE_BF16 ? "bf16" : "f32-ordered",
             packed ? "packed" : "unpacked");
    tm_check(!lt_failed(ctx) && bad == 0, name, "%zu of 3580 differ; first at %zu: got %.9g want %.9g (%s)", bad, first,
             got, want, lt_error(ctx));
    snprintf(name + strlen(name), sizeof name - strlen(name), "-stats");
    tm_check(tm_world == 1 || (s.floats == 3580 && s.buckets == 4 && s.calls == 1 && s.last_ms >= 0 &&
             fabs(s.wire_bytes - 2.0 * (tm_world - 1) / tm_world * 3580 * (m == LT_REDUCE_BF16 ? 2 : 4)) < 1e-6),
             name, "floats %zu buckets %d calls %lld wire %.0f", s.floats, s.buckets, (long long)s.calls, s.wire_bytes);
    lt_dist_destroy(d);
    lt_ctx_destroy(ctx);
}

/* ---- data: tokens, sharding --------------------------------------------------------------- */
static int32_t *tm_tokens(int64_t *n) {
    int64_t i, nt = 7 * (int64_t)tm_world * TM_B * TM_T + 5;   /* 7 global windows: the runs wrap */
    int32_t *t = (int32_t *)malloc((size_t)nt * sizeof(int32_t));
    for (i = 0; i < nt; i++) t[i] = (int32_t)((i * i * 31 + i * 7 + i / 5) % TM_V);
    *n = nt;
    return t;
}

static void test_shard(void) {
    int64_t n;
    int32_t *tok = tm_tokens(&n), in[TM_B * TM_T], tg[TM_B * TM_T];
    int32_t *gin = (int32_t *)malloc(sizeof(int32_t) * (size_t)tm_world * TM_B * TM_T);
    int32_t *gtg = (int32_t *)malloc(sizeof(int32_t) * (size_t)tm_world * TM_B * TM_T);
    lt_ctx *ctx = lt_ctx_create(1);
    lt_loader *a = lt_loader_from_tokens(ctx, tok, n, tm_world * TM_B, TM_T);
    lt_loader *b = lt_loader_from_tokens(ctx, tok, n, tm_world * TM_B, TM_T);
    lt_dist *d = lt_dist_create(ctx, NULL);
    int w, ok = 1;
    int64_t ea, ia, eb, ib;
    size_t bt = TM_B * TM_T;
    lt_loader_shuffle(a, 7);
    lt_loader_shuffle(b, 7);
    for (w = 0; w < 16 && ok; w++) {   /* past two epochs */
        lt_dist_loader_next(d, a, in, tg);
        lt_loader_next(b, gin, gtg);
        ok = !memcmp(in, gin + (size_t)tm_rank * bt, bt * sizeof(int32_t)) &&
             !memcmp(tg, gtg + (size_t)tm_rank * bt, bt * sizeof(int32_t));
    }
    lt_loader_get_pos(a, &ea, &ia);
    lt_loader_get_pos(b, &eb, &ib);
    tm_check(ok && !lt_failed(ctx) && ea == eb && ia == ib, "shard-rows-of-global-batch",
             "window %d: rows %d..%d differ from the global batch (pos %lld.%lld vs %lld.%lld) %s", w - 1,
             tm_rank * TM_B, tm_rank * TM_B + TM_B - 1, (long long)ea, (long long)ia, (long long)eb, (long long)ib,
             lt_error(ctx));
    tm_check(lt_dist_mean(d, (double)tm_rank) == (tm_world - 1) / 2.0, "mean", "got %g",
             lt_dist_mean(d, (double)tm_rank));
    if (tm_world > 1) {   /* a loader whose batch the ranks cannot share */
        lt_loader *c = lt_loader_from_tokens(ctx, tok, n, tm_world * TM_B + 1, TM_T);
        lt_status s = lt_dist_loader_next(d, c, in, tg);
        tm_check(s == LT_ERR_ARG && strstr(lt_error(ctx), "cannot share") != NULL, "shard-uneven-batch-refused",
                 "status %d: %s", (int)s, lt_error(ctx));
        lt_loader_destroy(c);
    }
    lt_dist_destroy(d);
    lt_loader_destroy(a);
    lt_loader_destroy(b);
    lt_ctx_destroy(ctx);
    free(tok); free(gin); free(gtg);
}

/* A weight changed on one rank is caught; a broadcast from rank 0 repairs it. */
static void test_sync(void) {
    lt_ctx *ctx = lt_ctx_create(5);
    lt_gpt_config c;
    lt_gpt *g;
    lt_dist *d;
    lt_status s1, s2;
    memset(&c, 0, sizeof c);
    c.vocab = TM_V; c.ctx = TM_T; c.layers = 1; c.heads = 2; c.channels = 16;
    g = lt_gpt_create(ctx, &c);
    d = lt_dist_create(ctx, NULL);
    tm_check(lt_dist_check_sync(d) == LT_OK, "sync-same-seed", "%s", lt_error(ctx));
    if (tm_world > 1) {
        if (tm_rank == tm_world - 1) lt_gpt_params(g).p[3]->data[1] += 1e-3f;
        s1 = lt_dist_check_sync(d);
        tm_check(s1 == LT_ERR_STATE && strstr(lt_error(ctx), "different weights") != NULL, "sync-detects-difference",
                 "status %d: %s", (int)s1, lt_error(ctx));
        lt_clear_error(ctx);
        lt_dist_broadcast_params(d);
        s2 = lt_dist_check_sync(d);
        tm_check(s2 == LT_OK, "broadcast-params", "%s", lt_error(ctx));
    }
    lt_dist_destroy(d);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

/* ---- training against one process ---------------------------------------------------------- */
typedef struct {
    int dist;              /* 0: the single-process reference (N*B rows, no MPI) */
    lt_reduce_mode mode;
    int save_at;           /* > 0: checkpoint after this many steps */
    int resume;            /* start from the checkpoint */
    const char *path;
    int sgd;               /* SGD with momentum instead of AdamW */
    float *grad0;          /* if set: the first step's gradient (after the all-reduce, before clipping) */
} tm_run;

/* Losses of every step (from the checkpoint's step on when resuming) and a copy of the final
   weights; returns 0 on failure. */
static int tm_train(const tm_run *o, double *losses, float **weights, size_t *nw, int *in_sync, unsigned char *kbias) {
    int64_t n;
    int32_t *tok = tm_tokens(&n);
    int rows = o->dist ? TM_B : tm_world * TM_B, step, k, ok;
    int32_t *in = (int32_t *)malloc(sizeof(int32_t) * (size_t)rows * TM_T);
    int32_t *tg = (int32_t *)malloc(sizeof(int32_t) * (size_t)rows * TM_T);
    lt_ctx *ctx = lt_ctx_create(42);
    lt_gpt_config c;
    lt_gpt *g;
    lt_optim *opt;
    lt_loader *ld;
    lt_dist *d = NULL;
    lt_adamw_config ac = lt_adamw_defaults();
    lt_train_state st;
    memset(&c, 0, sizeof c);
    c.vocab = TM_V; c.ctx = TM_T; c.layers = 2; c.heads = 2; c.channels = 32;
    g = lt_gpt_create(ctx, &c);
    ac.lr = 3e-3; ac.weight_decay = 0.1;
    if (o->sgd) {
        lt_sgd_config sc = lt_sgd_defaults();
        sc.lr = 0.1; sc.momentum = 0.9;
        opt = lt_sgd_create(ctx, lt_gpt_params(g), sc);
    } else {
        opt = lt_adamw_create(ctx, lt_gpt_params(g), ac);
    }
    ld = lt_loader_from_tokens(ctx, tok, n, tm_world * TM_B, TM_T);   /* the global batch */
    lt_loader_shuffle(ld, 99);
    memset(&st, 0, sizeof st);
    if (o->dist) {
        lt_dist_config dc = lt_dist_defaults();
        dc.mode = o->mode;
        dc.bucket_bytes = 64 << 10;   /* ~0.5 MiB of gradient: several buckets */
        d = lt_dist_create(ctx, &dc);
    }
    if (o->resume && lt_dist_checkpoint_load(d, g, opt, &st, o->path) == LT_OK)
        lt_loader_set_pos(ld, st.data_epoch, st.data_index);
    for (step = (int)st.step; step < TM_STEPS && !lt_failed(ctx); step++) {
        double loss = 0;
        lt_zero_grad(ctx);
        for (k = 0; k < TM_K; k++) {
            lt_tensor *l;
            if (d) lt_dist_loader_next(d, ld, in, tg); else lt_loader_next(ld, in, tg);
            l = lt_gpt_loss(g, in, tg, rows, TM_T);
            loss += lt_item(l);
            lt_backward(ctx, lt_scale(ctx, l, 1.0f / TM_K));
        }
        loss /= TM_K;
        if (d) {
            lt_dist_allreduce_grads(d);
            loss = lt_dist_mean(d, loss);
        }
        if (o->grad0 && step == 0) {
            size_t n;
            const float *span = lt_params_grad_span(ctx, &n);
            if (span) memcpy(o->grad0, span, n * sizeof(float));
        }
        lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
        lt_optim_step(opt, -1);
        losses[step] = loss;
        if (o->save_at == step + 1) {
            st.step = step + 1;
            lt_loader_get_pos(ld, &st.data_epoch, &st.data_index);
            lt_dist_checkpoint_save(d, g, opt, &st, "test_mpi", o->path);
        }
    }
    *in_sync = d ? lt_dist_check_sync(d) == LT_OK : 1;
    {
        lt_paramset ps = lt_gpt_params(g);
        size_t off = 0;
        *nw = (size_t)lt_gpt_num_params(g);
        *weights = (float *)malloc(*nw * sizeof(float));
        for (k = 0; k < ps.n; k++) {
            const char *nm = ps.p[k]->name;
            size_t L = strlen(nm), i;
            memcpy(*weights + off, ps.p[k]->data, (size_t)ps.p[k]->n * sizeof(float));
            for (i = 0; kbias && i < (size_t)ps.p[k]->n; i++)   /* the k third of c_attn.bias */
                kbias[off + i] = L > 16 && !strcmp(nm + L - 16, "attn.c_attn.bias") && i >= (size_t)c.channels &&
                                 i < 2 * (size_t)c.channels;
            off += (size_t)ps.p[k]->n;
        }
    }
    ok = !lt_failed(ctx);
    if (!ok) printf("rank %d: %s\n", tm_rank, lt_error(ctx));
    lt_dist_destroy(d);
    lt_loader_destroy(ld);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    free(tok); free(in); free(tg);
    return ok;
}

/* Final weights against the reference: the worst |a-b| / (atol + rtol|b|) over every weight but
   the attention key biases, the worst |a-b| of those, and ||a-b|| / ||b|| over all. */
typedef struct { double of_tol, kbias_abs, rel_l2; size_t at; } tm_cmp;
static tm_cmp tm_compare(const float *a, const float *b, const unsigned char *kb, size_t n, double atol, double rtol) {
    tm_cmp c;
    double dd = 0, bb = 0;
    size_t i;
    memset(&c, 0, sizeof c);
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]), e = d / (atol + rtol * fabs((double)b[i]));
        dd += d * d;
        bb += (double)b[i] * b[i];
        if (kb[i]) { if (!(d <= c.kbias_abs)) c.kbias_abs = d; }
        else if (!(e <= c.of_tol)) { c.of_tol = e; c.at = i; }
    }
    c.rel_l2 = sqrt(dd / bb);
    return c;
}

/* How the data-parallel runs are compared with the reference.  The first step's gradient (the
   all-reduce's output, before clipping) is the direct check: max|g - ref| <= 2e-6 max|ref| in
   fp32 (the same sums over N*B*T rows in another order: a few ulps of the largest terms; seen:
   3e-7 at 2 ranks, 6e-7 at 3), 2^-7 in bf16 (each rank's gradient rounded to 8 mantissa bits, a
   rank's part can exceed the mean, and the mean is rounded again; seen: 3e-3 and 4.7e-3).
   Training with SGD (momentum 0.9) must keep every weight within 1e-6 relative + 1e-7.
   With AdamW the losses must agree to 1e-6 relative, but a weight may differ by more than 1e-6
   of itself: AdamW steps each weight by ~lr whatever its gradient's size, so where a gradient is
   small (cancellation; the attention key bias, whose true gradient is 0 because softmax ignores a
   shift of a row's scores, is pure rounding noise) a rounding-level change of the gradient
   changes the step by a larger fraction: the bound there is 1e-6|w| + 1e-3 lr, and the whole
   vector ||w - ref|| <= 1e-5 ||ref||. */
static void test_train(void) {
    static const lt_reduce_mode modes[3] = {LT_REDUCE_F32, LT_REDUCE_F32_ORDERED, LT_REDUCE_BF16};
    static const char *names[3] = {"f32", "f32-ordered", "bf16"};
    double ref_loss[TM_STEPS], loss[TM_STEPS], loss2[TM_STEPS], lr = 3e-3;
    float *ref_w = NULL, *ref_sgd = NULL, *w = NULL, *w2 = NULL;
    float *gref = (float *)calloc(1 << 20, sizeof(float)), *g = (float *)calloc(1 << 20, sizeof(float));
    unsigned char *kb = (unsigned char *)calloc(1 << 20, 1);
    size_t nref = 0, nw = 0, nw2 = 0, i;
    int m, s, sync, ok;
    char name[96], path[256];
    tm_run r;
    memset(&r, 0, sizeof r);
    r.grad0 = gref;
    ok = tm_train(&r, ref_loss, &ref_w, &nref, &sync, kb);   /* (the 1 << 20 buffers hold this model's 54k floats) */
    r.grad0 = NULL;
    r.sgd = 1;
    ok = tm_train(&r, loss, &ref_sgd, &nw, &sync, NULL) && ok;
    tm_check(ok && nref < (1 << 20) && nw == nref, "reference-runs", "a single-process run failed");
    for (m = 0; m < 3; m++) {
        double le = 0, gmax = 0, dmax = 0, gtol = m == 2 ? 1.0 / 128 : 2e-6;
        tm_cmp c, cs;
        memset(&r, 0, sizeof r);
        r.dist = 1;
        r.mode = modes[m];
        r.grad0 = g;
        ok = tm_train(&r, loss, &w, &nw, &sync, NULL) && nw == nref;
        for (s = 0; s < TM_STEPS; s++) {
            double e = fabs(loss[s] - ref_loss[s]) / fabs(ref_loss[s]);
            if (!(e <= le)) le = e;
        }
        for (i = 0; ok && i < nw; i++) {
            double d = fabs((double)g[i] - gref[i]);
            if (fabs((double)gref[i]) > gmax) gmax = fabs((double)gref[i]);
            if (!(d <= dmax)) dmax = d;
        }
        c = tm_compare(w, ref_w, kb, ok ? nw : 0, 1e-3 * lr, 1e-6);
        if (tm_rank == 0)
            printf("     %d ranks, %s: step-1 gradient max|g - ref| = %.2e max|ref|; AdamW: losses within %.2e "
                   "relative, weights %.3g x (1e-6|w| + 1e-3 lr), key biases %.2g, ||w - ref|| / ||ref|| = %.2e\n",
                   tm_world, names[m], dmax / gmax, le, c.of_tol, c.kbias_abs, c.rel_l2);
        snprintf(name, sizeof name, "grad-%s-vs-one-process", names[m]);
        tm_check(ok && dmax <= gtol * gmax, name, "max|g - ref| = %.3g max|ref| (tol %g)", dmax / gmax, gtol);
        snprintf(name, sizeof name, "adamw-%s-losses-vs-one-process", names[m]);
        tm_check(ok && le <= (m == 2 ? 1e-4 : 1e-6), name, "worst relative loss error %.3g", le);
        snprintf(name, sizeof name, "adamw-%s-weights-vs-one-process", names[m]);
        if (m == 2) tm_check(ok && c.rel_l2 <= 1e-2, name, "||w - ref|| / ||ref|| = %.3g (tol 1e-2)", c.rel_l2);
        else tm_check(ok && c.of_tol <= 1.0 && c.kbias_abs <= TM_STEPS * lr && c.rel_l2 <= 1e-5, name,
                      "worst weight error %.3g x tolerance at %zu (%.9g vs %.9g); key biases %.3g; rel l2 %.3g",
                      c.of_tol, c.at, ok ? w[c.at] : 0.0, ok ? ref_w[c.at] : 0.0, c.kbias_abs, c.rel_l2);
        snprintf(name, sizeof name, "adamw-%s-weights-identical-across-ranks", names[m]);
        tm_check(ok && sync, name, "lt_dist_check_sync failed");
        if (m == 0 && tm_world == 1)
            tm_check(ok && !memcmp(w, ref_w, nw * sizeof(float)), "one-rank-bit-identical", "one rank differs from no MPI");
        free(w);
        w = NULL;
        if (m == 2) continue;
        r.grad0 = NULL;
        r.sgd = 1;
        ok = tm_train(&r, loss, &w, &nw, &sync, NULL) && nw == nref;
        {
            unsigned char *none = (unsigned char *)calloc(nw ? nw : 1, 1);
            cs = tm_compare(w, ref_sgd, none, ok ? nw : 0, 1e-7, 1e-6);
            free(none);
        }
        if (tm_rank == 0)
            printf("     %d ranks, %s: SGD weights %.3g x (1e-7 + 1e-6|w|)\n", tm_world, names[m], cs.of_tol);
        snprintf(name, sizeof name, "sgd-%s-weights-vs-one-process", names[m]);
        tm_check(ok && cs.of_tol <= 1.0 && sync, name, "worst %.3g x tolerance at %zu", cs.of_tol, cs.at);
        free(w);
        w = NULL;
        /* resume from a checkpoint written by rank 0 at step 3 (AdamW) */
        r.sgd = 0;
        snprintf(path, sizeof path, "build/tmp/mpi%d_%s.safetensors", tm_world, names[m]);
        r.save_at = 3;
        r.path = path;
        tm_train(&r, loss, &w, &nw, &sync, NULL);
        r.save_at = 0;
        r.resume = 1;
        memcpy(loss2, loss, sizeof loss2);
        ok = tm_train(&r, loss2, &w2, &nw2, &sync, NULL);
        snprintf(name, sizeof name, "resume-%s-bit-identical", names[m]);
        tm_check(ok && sync && nw == nw2 && !memcmp(w, w2, nw * sizeof(float)) &&
                 !memcmp(loss + 3, loss2 + 3, 3 * sizeof(double)), name,
                 "the resumed run ends with other weights or losses (loss 6: %.9g vs %.9g)", loss[5], loss2[5]);
        free(w2);
        free(w);
        w = w2 = NULL;
        if (tm_rank == 0) remove(path);
    }
    free(ref_w);
    free(ref_sgd);
    free(kb);
    free(g);
    free(gref);
}

int main(int argc, char **argv) {
    lt_reduce_mode m;
    if (lt_dist_init(&argc, &argv) != LT_OK) { printf("FAIL mpi: lt_dist_init\n"); return 1; }
    tm_rank = lt_dist_rank();
    tm_world = lt_dist_world();
    lt_set_threads(1);
    for (m = LT_REDUCE_F32; m <= LT_REDUCE_BF16; m = (lt_reduce_mode)(m + 1)) {
        test_reduce(m, 1);
        test_reduce(m, 0);
    }
    test_shard();
    test_sync();
    test_train();
    if (tm_rank == 0) printf("mpi %d ranks: %d passed, %d failed\n", tm_world, tm_passed, tm_failed);
    lt_dist_finalize();
    return tm_failed ? 1 : 0;
}

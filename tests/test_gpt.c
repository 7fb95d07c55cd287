/* test_gpt.c - the GPT-2 model and training against PyTorch (tests/ref/gpt.bin, written by
   tests/ref/gen_gpt.py): logits, loss and every parameter gradient; 10 AdamW steps with warm-up,
   cosine decay and clipping against a float64 run; gradient accumulation; checkpoint round trip,
   shape and missing-tensor errors; build/train_gpt's resume-to-the-bit and its error exits;
   sampling; GPT-2 initialisation statistics.  #included by test_main.c. */
#include <sys/wait.h>
#include <unistd.h>

#define TG_T 16
#define TG_V 256

static lt_gpt_config tg__cfg(int channels, int ctx_len) {
    lt_gpt_config c;
    memset(&c, 0, sizeof c);
    c.vocab = TG_V; c.ctx = ctx_len; c.layers = 2; c.heads = 4; c.channels = channels;
    return c;
}

static void tg__ints(const t_arr *a, int32_t *out) {
    int64_t i;
    for (i = 0; i < a->n; i++) out[i] = (int32_t)a->data[i];
}

/* Worst error of got against ref: as a multiple of (atol + rtol|ref|), and max|d| / max|ref|. */
static void tg__err(const float *got, const float *ref, int64_t n, double atol, double rtol, double *of_tol,
                    double *of_max) {
    double dmax = 0, rmax = 0, w = 0;
    int64_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)ref[i]), lim = atol + rtol * fabs((double)ref[i]);
        if (!(d <= dmax)) dmax = d;
        if (fabs((double)ref[i]) > rmax) rmax = fabs((double)ref[i]);
        if (!(d / lim <= w)) w = d / lim;
    }
    *of_tol = w;
    *of_max = rmax > 0 ? dmax / rmax : dmax;
}

/* A model with the reference weights w.<name>, copied in by name. */
static lt_gpt *tg__model(lt_ctx *ctx, t_ref *r) {
    lt_gpt_config cfg = tg__cfg(64, TG_T);
    lt_gpt *g = lt_gpt_create(ctx, &cfg);
    int i, copied = 0;
    if (!g) return NULL;
    for (i = 0; i < r->n; i++) {
        t_arr *a = &r->a[i];
        lt_tensor *p;
        if (strncmp(a->name, "w.", 2) != 0) continue;
        p = lt_find_param(ctx, a->name + 2);
        if (!p || p->n != a->n) {
            printf("tg__model: %s: %s\n", a->name, p ? "wrong size" : "no such parameter");
            lt_gpt_destroy(g);
            return NULL;
        }
        memcpy(p->data, a->data, (size_t)a->n * sizeof(float));
        copied++;
    }
    if (copied != lt_gpt_params(g).n) {
        printf("tg__model: %d reference tensors for %d parameters\n", copied, lt_gpt_params(g).n);
        lt_gpt_destroy(g);
        return NULL;
    }
    return g;
}

/* ---- logits, loss and gradients against PyTorch (float32) ---------------------------------- */
/* Tolerances: logits to 1e-5 + 1e-4|ref| (measured worst: ~0.1 of it; logits reach ~10, and
   each is a 64-term dot product after two blocks of float32 sums).  The loss to 1e-6 relative
   (measured: equal).  Gradients to 1e-6 + 1e-5|ref|, ten times tighter than the bound
   (measured worst: ~0.12 of it; each is a float32 sum over at most B*T = 48 rows, or 256
   vocabulary rows for wte's head part). */
static void tg__case(t_ref *r, const char *tag) {
    char nm[160];
    t_arr *ids_a, *tg_a, *lg, *ls;
    int32_t *ids, *tgt;
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt *g = tg__model(ctx, r);
    lt_tensor *logits, *loss;
    lt_paramset ps;
    double of_tol, of_max, worst_tol = 0, worst_max = 0;
    int B, i, ngrad = 0;
    snprintf(nm, sizeof nm, "%s.ids", tag); ids_a = t_ref_get(r, nm);
    snprintf(nm, sizeof nm, "%s.targets", tag); tg_a = t_ref_get(r, nm);
    snprintf(nm, sizeof nm, "%s.logits", tag); lg = t_ref_get(r, nm);
    snprintf(nm, sizeof nm, "%s.loss", tag); ls = t_ref_get(r, nm);
    snprintf(nm, sizeof nm, "gpt.%s.setup", tag);
    if (!t_check(g && ids_a && tg_a && lg && ls, nm, "model or reference missing")) {
        lt_gpt_destroy(g);
        lt_ctx_destroy(ctx);
        return;
    }
    B = (int)ids_a->shape[0];
    ids = (int32_t *)malloc((size_t)ids_a->n * sizeof(int32_t));
    tgt = (int32_t *)malloc((size_t)tg_a->n * sizeof(int32_t));
    tg__ints(ids_a, ids);
    tg__ints(tg_a, tgt);
    logits = lt_gpt_forward(g, ids, B, TG_T, NULL);
    snprintf(nm, sizeof nm, "gpt.%s.logits", tag);
    if (t_check(logits && logits->n == lg->n, nm, "no logits (%s)", lt_error(ctx))) {
        t_close(nm, logits->data, lg->data, lg->n, 1e-5, 1e-4);
        tg__err(logits->data, lg->data, lg->n, 1e-5, 1e-4, &of_tol, &of_max);
        printf("info gpt.%s.logits: max |err| / max |ref| = %.3g (%.3g of the tolerance)\n", tag, of_max, of_tol);
    }
    loss = lt_cross_entropy(ctx, logits, tgt);
    lt_zero_grad(ctx);
    snprintf(nm, sizeof nm, "gpt.%s.backward", tag);
    t_check(lt_backward(ctx, loss) == LT_OK, nm, "%s", lt_error(ctx));
    snprintf(nm, sizeof nm, "gpt.%s.loss", tag);
    if (loss) {
        t_close(nm, loss->data, ls->data, 1, 1e-6, 1e-6);
        printf("info gpt.%s.loss: got %.9g ref %.9g (rel err %.3g)\n", tag, (double)loss->data[0],
               (double)ls->data[0], fabs((double)loss->data[0] - ls->data[0]) / fabs((double)ls->data[0]));
    }
    ps = lt_gpt_params(g);
    for (i = 0; i < ps.n; i++) {
        t_arr *gr;
        snprintf(nm, sizeof nm, "%s.grad.%s", tag, ps.p[i]->name);
        if (!(gr = t_ref_get(r, nm))) continue;
        snprintf(nm, sizeof nm, "gpt.%s.grad.%s", tag, ps.p[i]->name);
        if (!t_check(gr->n == ps.p[i]->n && ps.p[i]->grad, nm, "size %lld, ref %lld", (long long)ps.p[i]->n,
                     (long long)gr->n))
            continue;
        t_close(nm, ps.p[i]->grad, gr->data, gr->n, 1e-6, 1e-5);
        tg__err(ps.p[i]->grad, gr->data, gr->n, 1e-6, 1e-5, &of_tol, &of_max);
        if (of_tol > worst_tol) worst_tol = of_tol;
        if (of_max > worst_max) worst_max = of_max;
        ngrad++;
    }
    snprintf(nm, sizeof nm, "gpt.%s.grad_count", tag);
    t_check(ngrad == (strcmp(tag, "a") == 0 ? ps.n : 5), nm, "compared %d gradients", ngrad);
    printf("info gpt.%s.grads: %d tensors, worst max |err| / max |ref| = %.3g, worst %.3g of the tolerance\n", tag,
           ngrad, worst_max, worst_tol);
    /* lt_gpt_loss is forward + cross-entropy */
    loss = lt_gpt_loss(g, ids, tgt, B, TG_T);
    snprintf(nm, sizeof nm, "gpt.%s.lt_gpt_loss", tag);
    t_close(nm, loss ? loss->data : ls->data, ls->data, 1, 1e-6, 1e-6);
    free(ids);
    free(tgt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

/* ---- 10 AdamW steps (float32) against the float64 PyTorch run ------------------------------- */
static lt_adamw_config tg__adamw_cfg(void) {
    lt_adamw_config c = lt_adamw_defaults();
    c.lr = 1e-3; c.beta1 = 0.9; c.beta2 = 0.95; c.eps = 1e-8; c.weight_decay = 0.1;
    c.decay_mode = LT_DECAY_MARKED;
    return c;
}

static lt_schedule tg__sched(void) {
    lt_schedule s;
    memset(&s, 0, sizeof s);
    s.lr = 1e-3; s.min_lr = 1e-4; s.warmup = 3; s.total = 10; s.warmup_start = 0.1; s.decay = LT_SCHED_COSINE;
    return s;
}

/* One optimizer step on batch (ids, tgt) [B,T]; returns the loss, *norm the pre-clip norm. */
static double tg__step(lt_ctx *ctx, lt_gpt *g, lt_optim *opt, const int32_t *ids, const int32_t *tgt, int B,
                       double lr, double *norm) {
    lt_tensor *loss;
    double l;
    lt_zero_grad(ctx);
    loss = lt_gpt_loss(g, ids, tgt, B, TG_T);
    l = lt_item(loss);
    lt_backward(ctx, loss);
    *norm = lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
    lt_optim_step(opt, lr);
    return l;
}

static void tg__checkpoint(lt_ctx *ctx, lt_gpt *g, lt_optim *opt, t_ref *r);

static void tg__train(t_ref *r) {
    t_arr *ids_a = t_ref_get(r, "train.ids"), *tg_a = t_ref_get(r, "train.targets");
    double *lr_ref = NULL, *loss_ref = NULL, *norm_ref = NULL, worst_loss = 0, worst_norm = 0, worst_lr = 0;
    int64_t n1 = 0, n2 = 0, n3 = 0;
    int32_t *ids, *tgt;
    lt_ctx *ctx;
    lt_gpt *g;
    lt_optim *opt;
    lt_schedule s = tg__sched();
    lt_paramset ps;
    int k, S, B, i;
    double of_tol, of_max, worst_w = 0, worst_wtol = 0;
    if (!ids_a || !tg_a || !to__f64(r, "train.lr", &lr_ref, &n1) || !to__f64(r, "train.loss", &loss_ref, &n2) ||
        !to__f64(r, "train.norm", &norm_ref, &n3)) {
        t_check(0, "gpt.train.setup", "train.* records missing from gpt.bin");
        free(lr_ref); free(loss_ref); free(norm_ref);
        return;
    }
    S = (int)ids_a->shape[0];
    B = (int)ids_a->shape[1];
    ids = (int32_t *)malloc((size_t)ids_a->n * sizeof(int32_t));
    tgt = (int32_t *)malloc((size_t)tg_a->n * sizeof(int32_t));
    tg__ints(ids_a, ids);
    tg__ints(tg_a, tgt);
    ctx = lt_ctx_create(1);
    g = tg__model(ctx, r);
    opt = g ? lt_adamw_create(ctx, lt_gpt_params(g), tg__adamw_cfg()) : NULL;
    if (!t_check(g && opt && S == 10 && n1 == S && n2 == S && n3 == S, "gpt.train.setup", "%s", lt_error(ctx)))
        goto done;
    for (k = 0; k < S; k++) {
        double lr = lt_schedule_lr(&s, k), norm, loss;
        double el = fabs(lr - lr_ref[k]) / lr_ref[k];
        if (el > worst_lr) worst_lr = el;
        loss = tg__step(ctx, g, opt, ids + (int64_t)k * B * TG_T, tgt + (int64_t)k * B * TG_T, B, lr, &norm);
        el = fabs(loss - loss_ref[k]) / fabs(loss_ref[k]);
        if (!(el <= worst_loss)) worst_loss = el;
        el = fabs(norm - norm_ref[k]) / fabs(norm_ref[k]);
        if (!(el <= worst_norm)) worst_norm = el;
    }
    t_check(!lt_failed(ctx), "gpt.train.no_error", "%s", lt_error(ctx));
    t_check(worst_lr <= 1e-14, "gpt.train.lr", "schedule differs from the reference by %.3g relative", worst_lr);
    /* float32 against float64: the measured worst is ~6e-8 relative (the issue asks for 1e-4);
       1e-6 leaves room for other summation orders (threads, kernels) and still catches any
       real error (a wrong decay group or bias correction shows at ~1e-4). */
    t_check(worst_loss <= 1e-6, "gpt.train.losses", "worst loss rel err %.3g (limit 1e-6)", worst_loss);
    t_check(worst_norm <= 1e-6, "gpt.train.grad_norms", "worst grad-norm rel err %.3g (limit 1e-6)", worst_norm);
    printf("info gpt.train: 10 steps, worst rel err: loss %.3g, grad norm %.3g, lr %.3g\n", worst_loss, worst_norm,
           worst_lr);
    /* final weights, to 1e-5 + 1e-4|ref| (atol 1e-5 is 1% of the peak lr: AdamW moves every
       element by ~lr whatever its gradient's size, so that is the scale of a real error) */
    ps = lt_gpt_params(g);
    for (i = 0; i < ps.n; i++) {
        char nm[160];
        t_arr *f;
        snprintf(nm, sizeof nm, "final.%s", ps.p[i]->name);
        f = t_ref_get(r, nm);
        snprintf(nm, sizeof nm, "gpt.train.final.%s", ps.p[i]->name);
        if (!t_check(f && f->n == ps.p[i]->n, nm, "reference missing")) continue;
        if (strstr(nm, "attn.c_attn.bias")) {
            /* The key part of c_attn.bias (channels C..2C) has a gradient of exactly 0 (it adds
               q.b_k to every score of a query row, which softmax ignores), so its "gradient" is
               rounding noise: ~1e-9 in float32, ~1e-17 in float64, and AdamW turns noise into
               steps of up to ~lr either way.  Compare q and v; bound k by the sum of the lrs. */
            double lr_sum = 0;
            for (k = 0; k < S; k++) lr_sum += lr_ref[k];
            t_close(nm, ps.p[i]->data, f->data, 64, 1e-5, 1e-4);
            t_close(nm, ps.p[i]->data + 128, f->data + 128, 64, 1e-5, 1e-4);
            strcat(nm, ".key_part");
            t_close(nm, ps.p[i]->data + 64, f->data + 64, 64, 2 * lr_sum, 0);
            tg__err(ps.p[i]->data, f->data, 64, 1e-5, 1e-4, &of_tol, &of_max);
            if (of_max > worst_w) worst_w = of_max;
            if (of_tol > worst_wtol) worst_wtol = of_tol;
            tg__err(ps.p[i]->data + 128, f->data + 128, 64, 1e-5, 1e-4, &of_tol, &of_max);
        } else {
            t_close(nm, ps.p[i]->data, f->data, f->n, 1e-5, 1e-4);
            tg__err(ps.p[i]->data, f->data, f->n, 1e-5, 1e-4, &of_tol, &of_max);
        }
        if (of_max > worst_w) worst_w = of_max;
        if (of_tol > worst_wtol) worst_wtol = of_tol;
    }
    printf("info gpt.train.final: worst max |err| / max |ref| = %.3g, %.3g of the tolerance\n", worst_w, worst_wtol);
    tg__checkpoint(ctx, g, opt, r);
done:
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    free(ids); free(tgt); free(lr_ref); free(loss_ref); free(norm_ref);
}

/* ---- gradient accumulation ------------------------------------------------------------------ */
/* K micro-batches of B/K rows, each loss scaled by 1/K, give the full batch's gradient. */
static void tg__accum(t_ref *r) {
    enum { B = 4, K = 4 };
    int32_t ids[B * TG_T], tgt[B * TG_T];
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt *g = tg__model(ctx, r);
    lt_rng rng;
    lt_paramset ps;
    float *full = NULL, *acc = NULL;
    size_t n = 0;
    double lfull = 0, lacc = 0, worst = 0, worst_lazy = 0, num = 0, den = 0;
    int i, k, lazy;
    if (!t_check(g != NULL, "gpt.accum.setup", "%s", lt_error(ctx))) { lt_ctx_destroy(ctx); return; }
    lt_rng_seed(&rng, 77);
    for (i = 0; i < B * TG_T; i++) {
        ids[i] = (int32_t)(lt_rng_u64(&rng) % TG_V);
        tgt[i] = (int32_t)(lt_rng_u64(&rng) % TG_V);
    }
    ps = lt_gpt_params(g);
    lt_params_grad_span(ctx, &n);
    full = (float *)malloc(n * sizeof(float));
    acc = (float *)malloc(n * sizeof(float));
    /* the full batch */
    lt_zero_grad(ctx);
    {
        lt_tensor *loss = lt_gpt_loss(g, ids, tgt, B, TG_T);
        lfull = lt_item(loss);
        lt_backward(ctx, loss);
    }
    memcpy(full, lt_params_grad_span(ctx, &n), n * sizeof(float));
    for (lazy = 0; lazy < 2; lazy++) {
        double w = 0;
        lt_zero_grad(ctx);
        lacc = 0;
        for (k = 0; k < K; k++) {
            lt_tensor *loss;
            if (!lazy) lt_reset(ctx);  /* explicit; the lazy pass relies on the next forward resetting */
            loss = lt_gpt_loss(g, ids + k * (B / K) * TG_T, tgt + k * (B / K) * TG_T, B / K, TG_T);
            lacc += lt_item(loss) / K;
            lt_backward(ctx, lt_scale(ctx, loss, 1.0f / K));
        }
        memcpy(acc, lt_params_grad_span(ctx, &n), n * sizeof(float));
        /* per tensor: max |acc - full| <= 1e-6 * max |full| (the float32 sums run in another
           order, so elements that cancel cannot match to 1e-6 of themselves) */
        for (i = 0; i < ps.n; i++) {
            double dm = 0, rm = 0;
            int64_t j;
            /* the same tensor's slice of the saved flat gradient */
            const float *a = ps.p[i]->grad, *f = full + (ps.p[i]->grad - lt_params_grad_span(ctx, &n));
            for (j = 0; j < ps.p[i]->n; j++) {
                double d = fabs((double)a[j] - (double)f[j]);
                if (!(d <= dm)) dm = d;
                if (fabs((double)f[j]) > rm) rm = fabs((double)f[j]);
                if (!lazy) { num += d * d; den += (double)f[j] * f[j]; }
            }
            if (!(dm <= 1e-300 + w * rm)) w = dm / rm;
        }
        if (lazy) worst_lazy = w; else worst = w;
    }
    t_check(!lt_failed(ctx), "gpt.accum.no_error", "%s", lt_error(ctx));
    t_check(fabs(lacc - lfull) <= 1e-6 * fabs(lfull), "gpt.accum.loss", "mean of micro-batch losses %.9g, full %.9g",
            lacc, lfull);
    t_check(worst <= 1e-6, "gpt.accum.grads", "worst per-tensor max|err|/max|ref| %.3g", worst);
    t_check(worst_lazy <= 1e-6, "gpt.accum.grads_lazy_reset", "worst %.3g", worst_lazy);
    printf("info gpt.accum: K=%d x B=%d vs B=%d: worst per-tensor max |err| / max |ref| = %.3g (norm-wise %.3g)\n", K,
           B / K, B, worst, sqrt(num / den));
    free(full);
    free(acc);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

/* ---- checkpoints ---------------------------------------------------------------------------- */
/* A file under the tmp dir, named with the process id (two suites may run at once), noted so
   that tg__cleanup removes it. */
static char tg__made[40][512];
static int tg__nmade;
static char *tg__path(char *buf, size_t cap, const char *name) {
    int i;
    snprintf(buf, cap, "%s/gpt%d_%s", t_tmp_dir(), (int)getpid(), name);
    for (i = 0; i < tg__nmade; i++)
        if (strcmp(tg__made[i], buf) == 0) return buf;
    if (tg__nmade < 40) snprintf(tg__made[tg__nmade++], sizeof tg__made[0], "%s", buf);
    return buf;
}
static void tg__cleanup(void) {
    int i;
    for (i = 0; i < tg__nmade; i++) remove(tg__made[i]);
    tg__nmade = 0;
}

static int tg__same_params(lt_gpt *a, lt_gpt *b) {
    lt_paramset pa = lt_gpt_params(a), pb = lt_gpt_params(b);
    int i;
    if (pa.n != pb.n) return 0;
    for (i = 0; i < pa.n; i++)
        if (pa.p[i]->n != pb.p[i]->n || strcmp(pa.p[i]->name, pb.p[i]->name) != 0 ||
            memcmp(pa.p[i]->data, pb.p[i]->data, (size_t)pa.p[i]->n * sizeof(float)) != 0)
            return 0;
    return 1;
}

/* Save the trained model and optimizer, load into a fresh context: everything identical, and one
   more step on both gives the same bits. */
static void tg__checkpoint(lt_ctx *ctx, lt_gpt *g, lt_optim *opt, t_ref *r) {
    char path[512], wpath[512];
    lt_train_state st, st2;
    lt_gpt_config cfg = tg__cfg(64, TG_T);
    lt_ctx *ctx2 = lt_ctx_create(12345), *ctx3 = lt_ctx_create(5);
    lt_gpt *g2 = lt_gpt_create(ctx2, &cfg), *g3;
    lt_optim *opt2 = g2 ? lt_adamw_create(ctx2, lt_gpt_params(g2), tg__adamw_cfg()) : NULL;
    lt_paramset ps = lt_gpt_params(g);
    t_arr *ids_a = t_ref_get(r, "train.ids"), *tg_a = t_ref_get(r, "train.targets");
    int i, j, ok = 1;
    tg__path(path, sizeof path, "gpt_ckpt.safetensors");
    tg__path(wpath, sizeof wpath, "gpt_weights.safetensors");
    memset(&st, 0, sizeof st);
    st.step = 10; st.data_epoch = 2; st.data_index = 5;
    memset(&st2, 0, sizeof st2);
    lt_rng_u64(lt_ctx_rng(ctx)); /* some RNG state that is not the seed's */
    t_check(lt_checkpoint_save(g, opt, &st, "test_gpt", path) == LT_OK, "gpt.ckpt.save", "%s", lt_error(ctx));
    t_check(lt_checkpoint_load(g2, opt2, &st2, path) == LT_OK, "gpt.ckpt.load", "%s", lt_error(ctx2));
    t_check(tg__same_params(g, g2), "gpt.ckpt.weights", "weights differ after the round trip");
    for (i = 0; i < ps.n && opt2; i++)
        for (j = 0; j < lt_optim_num_states(opt); j++)
            if (memcmp(lt_optim_state(opt, i, j), lt_optim_state(opt2, i, j), (size_t)ps.p[i]->n * sizeof(float)))
                ok = 0;
    t_check(ok && opt2 && lt_optim_num_states(opt) == 2, "gpt.ckpt.moments", "optimizer moments differ");
    t_check(opt2 && lt_optim_steps(opt2) == 10 && lt_optim_steps(opt) == 10, "gpt.ckpt.step", "optimizer step %lld",
            opt2 ? (long long)lt_optim_steps(opt2) : -1LL);
    t_check(st2.step == 10 && st2.data_epoch == 2 && st2.data_index == 5, "gpt.ckpt.train_state",
            "step %lld epoch %lld index %lld", (long long)st2.step, (long long)st2.data_epoch,
            (long long)st2.data_index);
    t_check(memcmp(lt_ctx_rng(ctx), lt_ctx_rng(ctx2), sizeof(lt_rng)) == 0, "gpt.ckpt.rng", "RNG state differs");
    if (ids_a && tg_a && opt2) {   /* the next step continues identically */
        int32_t ids[2 * TG_T], tgt[2 * TG_T];
        double n1, n2, l1, l2;
        for (i = 0; i < 2 * TG_T; i++) {   /* batch 0 again */
            ids[i] = (int32_t)ids_a->data[i];
            tgt[i] = (int32_t)tg_a->data[i];
        }
        l1 = tg__step(ctx, g, opt, ids, tgt, 2, 1e-4, &n1);
        l2 = tg__step(ctx2, g2, opt2, ids, tgt, 2, 1e-4, &n2);
        t_check(l1 == l2 && n1 == n2 && tg__same_params(g, g2), "gpt.ckpt.next_step_identical",
                "loss %.9g vs %.9g, norm %.9g vs %.9g", l1, l2, n1, n2);
    }
    /* weights only: lt_gpt_save / lt_gpt_load (config from shapes, heads from metadata) */
    t_check(lt_gpt_save(g, wpath) == LT_OK, "gpt.save", "%s", lt_error(ctx));
    g3 = lt_gpt_load(ctx3, wpath, 0);
    t_check(g3 && lt_gpt_cfg(g3)->layers == 2 && lt_gpt_cfg(g3)->heads == 4 && lt_gpt_cfg(g3)->channels == 64 &&
                lt_gpt_cfg(g3)->ctx == TG_T && lt_gpt_cfg(g3)->vocab == TG_V && tg__same_params(g, g3),
            "gpt.load.round_trip", "%s", lt_error(ctx3));
    {   /* a weights-only file has no training state */
        lt_train_state st3;
        memset(&st3, 0, sizeof st3);
        lt_status s = lt_checkpoint_load(g2, opt2, &st3, wpath);
        t_check(s == LT_ERR_FORMAT && strstr(lt_error(ctx2), "train.state"), "gpt.ckpt.weights_only_file",
                "status %d: %s", (int)s, lt_error(ctx2));
    }
    lt_gpt_destroy(g3);
    lt_optim_destroy(opt2);
    lt_gpt_destroy(g2);
    lt_ctx_destroy(ctx2);
    lt_ctx_destroy(ctx3);
}

/* A checkpoint of another config loaded into the model: an error naming the tensor and both shapes. */
static void tg__shape_mismatch(void) {
    char path[512], path2[512];
    lt_gpt_config small = tg__cfg(32, TG_T), longer = tg__cfg(64, 32), cfg = tg__cfg(64, TG_T);
    lt_ctx *ca = lt_ctx_create(1), *cb = lt_ctx_create(2), *cc = lt_ctx_create(3);
    lt_gpt *ga = lt_gpt_create(ca, &small), *gb = lt_gpt_create(cb, &longer), *gc = lt_gpt_create(cc, &cfg);
    lt_optim *oa = ga ? lt_adamw_create(ca, lt_gpt_params(ga), tg__adamw_cfg()) : NULL;
    lt_optim *oc = gc ? lt_adamw_create(cc, lt_gpt_params(gc), tg__adamw_cfg()) : NULL;
    lt_train_state st;
    lt_status s;
    memset(&st, 0, sizeof st);
    st.step = 3;
    tg__path(path, sizeof path, "gpt_c32.safetensors");
    tg__path(path2, sizeof path2, "gpt_ctx32.safetensors");
    t_check(lt_checkpoint_save(ga, oa, &st, NULL, path) == LT_OK && lt_gpt_save(gb, path2) == LT_OK,
            "gpt.mismatch.save", "%s %s", lt_error(ca), lt_error(cb));
    s = lt_checkpoint_load(gc, oc, &st, path);
    t_check(s == LT_ERR_SHAPE && strstr(lt_error(cc), "wte.weight") && strstr(lt_error(cc), "[256,32]") &&
                strstr(lt_error(cc), "[256,64]") && strstr(lt_error(cc), path),
            "gpt.mismatch.channels", "status %d: %s", (int)s, lt_error(cc));
    lt_clear_error(cc);
    s = lt_gpt_load_weights(gc, path2);
    t_check(s == LT_ERR_SHAPE && strstr(lt_error(cc), "wpe.weight") && strstr(lt_error(cc), "[32,64]") &&
                strstr(lt_error(cc), "[16,64]"),
            "gpt.mismatch.ctx", "status %d: %s", (int)s, lt_error(cc));
    lt_optim_destroy(oa);
    lt_optim_destroy(oc);
    lt_gpt_destroy(ga);
    lt_gpt_destroy(gb);
    lt_gpt_destroy(gc);
    lt_ctx_destroy(ca);
    lt_ctx_destroy(cb);
    lt_ctx_destroy(cc);
}

/* Files written tensor by tensor: one missing a tensor (an error naming it), and one laid out as
   Hugging Face saves GPT2LMHeadModel ("transformer." prefix, attn.bias / attn.masked_bias
   buffers, a tied lm_head.weight, no n_head metadata) that loads as the same model. */
static void tg__files(t_ref *r) {
    char path[512], hpath[512], nm[160];
    lt_ctx *ctx = lt_ctx_create(1), *c2 = lt_ctx_create(2), *c3 = lt_ctx_create(3);
    lt_gpt *g = tg__model(ctx, r), *g2 = NULL, *g3 = NULL;
    lt_st_writer *w;
    lt_paramset ps;
    float *mask = (float *)malloc(TG_T * TG_T * sizeof(float)), masked = -1e4f;
    int64_t mshape[4] = {1, 1, TG_T, TG_T};
    char names[40][160];
    int i, j;
    if (!t_check(g != NULL && mask, "gpt.files.setup", "%s", lt_error(ctx))) goto done;
    ps = lt_gpt_params(g);
    tg__path(path, sizeof path, "gpt_missing.safetensors");
    tg__path(hpath, sizeof hpath, "gpt_hf_layout.safetensors");
    w = lt_st_writer_create(ctx);
    for (i = 0; i < ps.n; i++)
        if (strcmp(ps.p[i]->name, "h.1.mlp.c_fc.bias") != 0)
            lt_st_add(w, ps.p[i]->name, "F32", ps.p[i]->ndim, ps.p[i]->shape, ps.p[i]->data);
    lt_st_add_meta(w, "n_head", "4");
    t_check(lt_st_save(w, path) == LT_OK, "gpt.files.save_missing", "%s", lt_error(ctx));
    lt_st_writer_destroy(w);
    g2 = lt_gpt_load(c2, path, 0);
    t_check(!g2 && lt_status_of(c2) == LT_ERR_FORMAT && strstr(lt_error(c2), "\"h.1.mlp.c_fc.bias\"") &&
                strstr(lt_error(c2), "missing"),
            "gpt.files.missing_tensor", "got %s: %s", g2 ? "a model" : "NULL", lt_error(c2));
    lt_gpt_destroy(g2);
    /* the Hugging Face layout */
    for (i = 0; i < TG_T; i++)
        for (j = 0; j < TG_T; j++) mask[i * TG_T + j] = j <= i ? 1.0f : 0.0f;
    w = lt_st_writer_create(ctx);
    for (i = 0; i < ps.n && i < 40; i++) {
        snprintf(names[i], sizeof names[i], "transformer.%s", ps.p[i]->name);
        lt_st_add(w, names[i], "F32", ps.p[i]->ndim, ps.p[i]->shape, ps.p[i]->data);
    }
    lt_st_add(w, "transformer.h.0.attn.bias", "F32", 4, mshape, mask);
    lt_st_add(w, "transformer.h.1.attn.bias", "F32", 4, mshape, mask);
    lt_st_add(w, "transformer.h.0.attn.masked_bias", "F32", 0, NULL, &masked);
    lt_st_add(w, "transformer.h.1.attn.masked_bias", "F32", 0, NULL, &masked);
    lt_st_add(w, "lm_head.weight", "F32", 2, ps.p[0]->shape, ps.p[0]->data);
    lt_st_add_meta(w, "format", "pt");
    t_check(lt_st_save(w, hpath) == LT_OK, "gpt.files.save_hf", "%s", lt_error(ctx));
    lt_st_writer_destroy(w);
    g3 = lt_gpt_load(c3, hpath, 0);
    t_check(!g3 && strstr(lt_error(c3), "heads"), "gpt.files.hf_needs_heads", "%s", lt_error(c3));
    lt_gpt_destroy(g3);
    lt_clear_error(c3);
    g3 = lt_gpt_load(c3, hpath, 4);
    if (t_check(g3 && tg__same_params(g, g3), "gpt.files.hf_layout_loads", "%s", lt_error(c3))) {
        t_arr *ids_a = t_ref_get(r, "a.ids");
        int32_t ids[2 * TG_T];
        lt_tensor *l1, *l2;
        if (ids_a && ids_a->n == 2 * TG_T) {
            tg__ints(ids_a, ids);
            l1 = lt_gpt_forward(g, ids, 2, TG_T, NULL);
            l2 = lt_gpt_forward(g3, ids, 2, TG_T, NULL);
            snprintf(nm, sizeof nm, "gpt.files.hf_layout_logits");
            t_check(l1 && l2 && memcmp(l1->data, l2->data, (size_t)l1->n * sizeof(float)) == 0, nm,
                    "logits differ");
        }
    }
done:
    free(mask);
    lt_gpt_destroy(g3);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    lt_ctx_destroy(c2);
    lt_ctx_destroy(c3);
}

/* ---- build/train_gpt: resume to the bit, error exits ----------------------------------------- */
static const char *tg__bin = "build/train_gpt";

static int tg__have_bin(void) { return t_exists(tg__bin); }

/* Runs train_gpt with args, stdout to /dev/null, stderr to err_path; returns the exit status. */
static int tg__run(const char *args, const char *err_path) {
    char cmd[4096];
    int s;
    snprintf(cmd, sizeof cmd, "%s %s > /dev/null 2> %s", tg__bin, args, err_path);
    s = system(cmd);
    if (s == -1 || !WIFEXITED(s)) return -1;
    return WEXITSTATUS(s);
}

/* From a --log JSONL file: per step line, the text of the "loss", "lr" and "grad_norm" values,
   joined; returns how many step lines were read (lines without "loss" are skipped). */
static int tg__log_fields(const char *path, char out[][160], int cap) {
    char *text = t_slurp(path, NULL), *line, *next;
    int n = 0;
    if (!text) return -1;
    for (line = text; line && *line && n < cap; line = next) {
        static const char *const keys[3] = {"\"loss\": ", "\"lr\": ", "\"grad_norm\": "};
        size_t used = 0;
        int k;
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (!strstr(line, "\"loss\": ")) continue;
        out[n][0] = 0;
        for (k = 0; k < 3; k++) {
            const char *p = strstr(line, keys[k]);
            size_t len;
            if (!p) continue;
            p += strlen(keys[k]);
            len = strcspn(p, ",}");
            used += (size_t)snprintf(out[n] + used, 160 - used, "%.*s ", (int)len, p);
            if (used >= 160) used = 159;
        }
        n++;
    }
    free(text);
    return n;
}

/* One line on stderr, starting "train_gpt: ". */
static int tg__one_line(const char *err_path, char *msg, size_t cap) {
    char *e = t_slurp(err_path, NULL);
    int ok;
    if (!e) { snprintf(msg, cap, "(no stderr file)"); return 0; }
    snprintf(msg, cap, "%s", e);
    ok = strncmp(e, "train_gpt: ", 11) == 0 && strchr(e, '\n') == e + strlen(e) - 1;
    free(e);
    return ok;
}

/* train_gpt's resume protocol with the flags common: 20 steps straight (log logA), then 10 steps
   saved to ck and 10 more resumed from it (both logged to logB); the three exit statuses in rc.
   test_seq.c runs it too. */
static void tg__straight_and_resumed(const char *common, const char *ck, const char *logA, const char *logB,
                                     const char *err, int rc[3]) {
    char args[3072];
    remove(logA); remove(logB); remove(ck);
    snprintf(args, sizeof args, "%s --log %s", common, logA);
    rc[0] = tg__run(args, err);
    snprintf(args, sizeof args, "%s --stop-after 10 --save %s --log %s", common, ck, logB);
    rc[1] = tg__run(args, err);
    snprintf(args, sizeof args, "%s --resume %s --log %s", common, ck, logB);
    rc[2] = tg__run(args, err);
}

static void tg__resume_case(const char *tag, const char *data, const char *extra) {
    char common[1024], logA[512], logB[512], ck[512], err[512], nm[128];
    static char la[40][160], lb[40][160];
    int na, nb, i, same, rc[3];
    snprintf(nm, sizeof nm, "gpt.train_gpt.%s.log_a.jsonl", tag); tg__path(logA, sizeof logA, nm);
    snprintf(nm, sizeof nm, "gpt.train_gpt.%s.log_b.jsonl", tag); tg__path(logB, sizeof logB, nm);
    snprintf(nm, sizeof nm, "gpt.train_gpt.%s.ckpt.safetensors", tag); tg__path(ck, sizeof ck, nm);
    tg__path(err, sizeof err, "gpt.train_gpt.err");
    snprintf(common, sizeof common,
             "--data %s --layers 2 --heads 2 --channels 32 --ctx 32 --batch 2 --seq 16 --accum 2 --steps 20 "
             "--warmup 3 --warmup-start 0.1 --lr 3e-3 --min-lr 3e-4 --seed 7 %s", data, extra);
    tg__straight_and_resumed(common, ck, logA, logB, err, rc);
    snprintf(nm, sizeof nm, "gpt.train_gpt.%s.runs", tag);
    if (!t_check(rc[0] == 0 && rc[1] == 0 && rc[2] == 0, nm, "exit statuses %d %d %d", rc[0], rc[1], rc[2])) return;
    na = tg__log_fields(logA, la, 40);
    nb = tg__log_fields(logB, lb, 40);
    same = na == 20 && nb == 20;
    for (i = 0; same && i < 20; i++) same = strcmp(la[i], lb[i]) == 0;
    snprintf(nm, sizeof nm, "gpt.train_gpt.%s.resume_bitwise", tag);
    t_check(same, nm, "%d and %d log lines; first difference at step %d: \"%s\" vs \"%s\"", na, nb, i,
            i > 0 && i <= na ? la[i - 1] : "", i > 0 && i <= nb ? lb[i - 1] : "");
    if (same) printf("info gpt.train_gpt.%s: 20 straight = 10 + save + resume 10, to the bit (loss %s... at step 20)\n",
                     tag, la[19]);
}

/* The training text of the train_gpt runs at path (~1.5 KB: 20 steps of 2x2x16 tokens wrap around
   it a few times); 0 when it cannot be written. */
static int tg__write_text(const char *path) {
    FILE *f = fopen(path, "wb");
    int i;
    if (!f) return 0;
    for (i = 0; i < 30; i++)
        fprintf(f, "line %d: the quick brown fox %s over the lazy dog.\n", i * 7 % 13, i % 3 ? "jumps" : "leaps");
    fclose(f);
    return 1;
}

static void tg__train_gpt(void) {
    char data[512], bad[512], ck[512], err[512], args[2048], msg[1024];
    FILE *f;
    int rc;
    if (!tg__have_bin()) {
        t_skip("gpt.train_gpt", "build/train_gpt is missing (make build/train_gpt)");
        return;
    }
    tg__path(data, sizeof data, "gpt_train.txt");
    tg__path(bad, sizeof bad, "gpt_bad_ckpt.safetensors");
    tg__path(err, sizeof err, "gpt.train_gpt.err");
    if (!tg__write_text(data)) { t_check(0, "gpt.train_gpt.data", "cannot write %s", data); return; }
    tg__resume_case("plain", data, "");
    tg__resume_case("shuffle", data, "--shuffle --weight-decay 0.05 --clip-norm 0.5");
    /* every optimizer's state goes into the checkpoint (SOAP's factor matrices flat) */
    tg__resume_case("sgd", data, "--optim sgd --momentum 0.9");
    tg__resume_case("lion", data, "--optim lion");
    tg__resume_case("ademamix", data, "--optim ademamix");
    tg__resume_case("muon", data, "--optim muon");
    tg__resume_case("soap", data, "--optim soap --precond-freq 3");
    tg__resume_case("compiled", data, "--compile on");
    tg__resume_case("bf16", data, "--precision bf16");
    tg__resume_case("fp16", data, "--precision fp16");

    /* error exits: status 1 and one line on stderr */
    rc = tg__run("--bogus-flag 3", err);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg), "gpt.train_gpt.bad_flag", "exit %d, stderr \"%s\"", rc, msg);
    snprintf(args, sizeof args, "--data %s/no_such_file.txt --steps 1", t_tmp_dir());
    rc = tg__run(args, err);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg) && strstr(msg, "no_such_file.txt"),
            "gpt.train_gpt.missing_data", "exit %d, stderr \"%s\"", rc, msg);
    f = fopen(bad, "wb");
    if (f) {   /* a header length far past the end of the file */
        fputs("\x40\x00\x00\x00\x00\x00\x00\x00{\"wte.weight\": {\"dtype\": \"F32\"", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "--data %s --steps 1 --resume %s", data, bad);
    rc = tg__run(args, err);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg) && strstr(msg, "gpt_bad_ckpt"),
            "gpt.train_gpt.malformed_resume", "exit %d, stderr \"%s\"", rc, msg);
    /* --seq longer than the context of the model it starts from */
    tg__path(ck, sizeof ck, "gpt.train_gpt.plain.ckpt.safetensors");
    snprintf(args, sizeof args, "--data %s --heads 2 --steps 1 --seq 64 --init %s", data, ck);
    rc = tg__run(args, err);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg) && strstr(msg, "--seq"), "gpt.train_gpt.seq_over_ctx",
            "exit %d, stderr \"%s\"", rc, msg);
}

/* ---- sampling ------------------------------------------------------------------------------- */
static int tg__argmax_next(lt_ctx *ctx, lt_gpt *g, const int32_t *seq, int len) {
    int T = len < TG_T ? len : TG_T, j, best = 0;
    lt_tensor *lg;
    const float *row;
    lt_reset(ctx);
    lg = lt_gpt_forward(g, seq + len - T, 1, T, NULL);
    if (!lg) return -1;
    row = lg->data + (int64_t)(T - 1) * TG_V;
    for (j = 1; j < TG_V; j++)
        if (row[j] > row[best]) best = j;
    return best;
}

static void tg__sampling(t_ref *r) {
    enum { NP = 3, N = 20 };
    int32_t prompt[NP] = {10, 200, 33}, a[NP + N], b[NP + N], c[NP + N], gr[NP + N], k1[NP + N];
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt *g = tg__model(ctx, r);
    lt_rng r1, r2, r3;
    int na, nb, nc, ng, nk, i, greedy_ok = 1, differ = 0;
    if (!t_check(g != NULL, "gpt.sample.setup", "%s", lt_error(ctx))) { lt_ctx_destroy(ctx); return; }
    lt_rng_seed(&r1, 42); lt_rng_seed(&r2, 42); lt_rng_seed(&r3, 43);
    na = lt_gpt_generate(g, prompt, NP, N, 1.0f, 0, &r1, a);
    nb = lt_gpt_generate(g, prompt, NP, N, 1.0f, 0, &r2, b);
    nc = lt_gpt_generate(g, prompt, NP, N, 1.0f, 0, &r3, c);
    t_check(na == NP + N && nb == na && memcmp(a, b, sizeof a) == 0 && memcmp(a, prompt, sizeof prompt) == 0,
            "gpt.sample.same_seed", "%d %d tokens; %s", na, nb, lt_error(ctx));
    for (i = NP; i < nc && i < na; i++) differ |= a[i] != c[i];
    t_check(nc == na && differ, "gpt.sample.other_seed_differs", "seed 43 gave seed 42's tokens");
    for (i = 0; i < na && a[i] >= 0 && a[i] < TG_V; i++) {}
    t_check(i == na, "gpt.sample.in_vocab", "token %d is %d", i, i < na ? a[i] : 0);
    /* temperature 0: each token is the argmax of the logits (the window slides past ctx = 16) */
    ng = lt_gpt_generate(g, prompt, NP, N, 0.0f, 0, &r1, gr);
    for (i = NP; i < ng; i++)
        if (tg__argmax_next(ctx, g, gr, i) != gr[i]) greedy_ok = 0;
    t_check(ng == NP + N && greedy_ok, "gpt.sample.greedy_is_argmax", "%d tokens", ng);
    nk = lt_gpt_generate(g, prompt, NP, N, 1.0f, 1, &r2, k1);
    t_check(nk == ng && memcmp(k1, gr, sizeof gr) == 0, "gpt.sample.top_k1_is_greedy", "differs");
    nk = lt_gpt_generate(g, prompt, NP, N, 0.7f, 5, &r3, k1);
    t_check(nk == NP + N && !lt_failed(ctx), "gpt.sample.top_k5", "%s", lt_error(ctx));
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

/* ---- GPT-2 initialisation ------------------------------------------------------------------- */
static void tg__stats(const lt_tensor *t, double *mean, double *sd) {
    double s = 0, s2 = 0;
    int64_t i;
    for (i = 0; i < t->n; i++) s += t->data[i];
    *mean = s / (double)t->n;
    for (i = 0; i < t->n; i++) s2 += (t->data[i] - *mean) * (t->data[i] - *mean);
    *sd = sqrt(s2 / (double)t->n);
}

static void tg__init(void) {
    lt_gpt_config cfg = tg__cfg(64, TG_T);
    lt_ctx *ctx = lt_ctx_create(1234), *c2 = lt_ctx_create(1234);
    lt_gpt *g = lt_gpt_create(ctx, &cfg), *g2 = lt_gpt_create(c2, &cfg);
    lt_paramset ps;
    int i, ok_consts = 1;
    int64_t total = 0;
    if (!t_check(g && g2, "gpt.init.create", "%s", lt_error(ctx))) goto done;
    ps = lt_gpt_params(g);
    t_check(ps.n == 4 + 12 * 2, "gpt.init.count", "%d parameters", ps.n);
    for (i = 0; i < ps.n; i++) total += ps.p[i]->n;
    t_check(total == lt_gpt_num_params(g) && total == 256 * 64 + 16 * 64 + 2 * (12 * 64 * 64 + 13 * 64) + 2 * 64,
            "gpt.init.num_params", "%lld", (long long)lt_gpt_num_params(g));
    for (i = 0; i < ps.n; i++) {
        const lt_tensor *t = ps.p[i];
        const char *nm = t->name;
        size_t len = strlen(nm);
        int is_bias = len > 5 && strcmp(nm + len - 5, ".bias") == 0;
        int is_ln = strstr(nm, "ln_") != NULL;
        if (is_bias || is_ln) {
            float want = is_ln && !is_bias ? 1.0f : 0.0f;
            int64_t j;
            for (j = 0; j < t->n; j++)
                if (t->data[j] != want) ok_consts = 0;
            t_check(t->decay == 0, "gpt.init.no_decay_1d", "%s is marked for decay", nm);
        } else {
            char cn[160];
            double mean, sd, want = strstr(nm, "c_proj.weight") ? 0.02 / sqrt(2.0 * cfg.layers) : 0.02;
            tg__stats(t, &mean, &sd);
            /* sample std of n normals: relative sd ~ 1/sqrt(2n) <= 0.6% here (n >= 1024 -> 2.2%) */
            snprintf(cn, sizeof cn, "gpt.init.std.%s", nm);
            t_check(fabs(sd - want) <= 0.08 * want && fabs(mean) <= 5 * want / sqrt((double)t->n), cn,
                    "mean %.3g std %.5g, want 0 and %.5g", mean, sd, want);
            t_check(t->decay == 1, "gpt.init.decay_2d", "%s is not marked for decay", nm);
        }
    }
    t_check(ok_consts, "gpt.init.bias0_ln1", "a bias is not 0 or a LayerNorm weight not 1");
    t_check(tg__same_params(g, g2), "gpt.init.seeded", "the same seed gave other weights");
done:
    lt_gpt_destroy(g);
    lt_gpt_destroy(g2);
    lt_ctx_destroy(ctx);
    lt_ctx_destroy(c2);
}

static void test_gpt_all(void) {
    char path[512];
    t_ref r;
    if (t_only && !strstr("gpt", t_only) && strncmp(t_only, "gpt", 3) != 0) return;   /* "gpt", "gpt.train", ... */
    tg__init();
    tg__shape_mismatch();
    tg__train_gpt();
    snprintf(path, sizeof path, "%s/gpt.bin", t_ref_dir());
    if (!t_ref_load(&r, path)) {
        t_check(0, "gpt.ref", "cannot read %s (run python3 tests/ref/gen_gpt.py)", path);
        tg__cleanup();
        return;
    }
    tg__case(&r, "a");
    tg__case(&r, "b");
    tg__train(&r);
    tg__accum(&r);
    tg__files(&r);
    tg__sampling(&r);
    t_ref_free(&r);
    tg__cleanup();
}

/* test_optim2.c - Lion, AdEMAMix, Muon and SOAP against PyTorch implementations written from the
   papers (tests/ref/optim2.bin, written by tests/ref/gen_optim2.py): 10 steps on five tensors with
   stored gradients (float32, states included), 10 steps on the small GPT of gen_gpt.py (against
   a float64 run), resume from copied state to the bit, the state contract, the Muon split and
   the argument checks.  #included by test_main.c. */

#define TO2_NP 5
#define TO2_STEPS 10
static const char *const to2__names[TO2_NP] = {"w", "b", "e", "u", "wte"};

/* The m.* tensors as parameters of a fresh context. */
static lt_ctx *to2__params(t_ref *r, lt_tensor **p) { return to__load(r, "m", to2__names, TO2_NP, p); }

/* Steps [from, to) of the stored gradients, with lr = lr0 * factor[k] and the .grad None holes
   (test_optim.c's to__replay). */
static void to2__run(t_ref *r, lt_optim *opt, lt_tensor **p, double lr0, int from, int to) {
    to__replay(r, "m", to2__names, TO2_NP, "m.lrf", lr0, opt, p, from, to);
}

/* Worst |got - ref| / (atol + rtol|ref|) and worst |got - ref| / |ref|, accumulated. */
static void to2__err(const float *got, const float *ref, int64_t n, double *rel) {
    int64_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)ref[i]), a = fabs((double)ref[i]);
        double e = a > 0 ? d / a : d;
        if (!(e <= *rel)) *rel = e;
    }
}

/* Parameters (and, when states, every parameter-shaped state) against m.TAG.*. */
static void to2__compare(t_ref *r, lt_optim *opt, lt_tensor **p, const char *tag, double atol, double rtol,
                         double satol, double srtol, int states) {
    int i, w, nref = 0;
    double rel = 0, srel = 0;
    for (i = 0; i < TO2_NP; i++) {
        char nm[128], tn[160];
        t_arr *a;
        snprintf(nm, sizeof nm, "m.%s.%s", tag, to2__names[i]);
        snprintf(tn, sizeof tn, "optim2.%s", nm);
        if (!(a = t_ref_get(r, nm)) || a->n != p[i]->n) { t_check(0, tn, "reference missing"); continue; }
        t_close(tn, p[i]->data, a->data, a->n, atol, rtol);
        to2__err(p[i]->data, a->data, a->n, &rel);
        for (w = 0; states && w < lt_optim_num_states(opt); w++) {
            float *s = lt_optim_state(opt, i, w);
            snprintf(nm, sizeof nm, "m.%s.%s.%s", tag, to2__names[i], lt_optim_state_name(opt, w));
            snprintf(tn, sizeof tn, "optim2.%s", nm);
            a = t_ref_get(r, nm);
            if (!s && !a) continue;   /* a state this parameter does not hold (Muon's split) */
            if (!s || !a || a->n != p[i]->n) { t_check(0, tn, "state %s, reference %s", s ? "present" : "absent",
                                                       a ? "present" : "absent"); continue; }
            t_close(tn, s, a->data, a->n, satol, srtol);
            to2__err(s, a->data, a->n, &srel);
            nref++;
        }
    }
    printf("info optim2.m.%s: worst rel err: parameters %.3g, states %.3g (%d state buffers)\n", tag, rel, srel, nref);
}

static lt_lion_config to2__lion_cfg(void) {
    lt_lion_config c = lt_lion_defaults();
    c.lr = (double)3e-3f; c.beta1 = 0.9; c.beta2 = 0.99; c.weight_decay = 0.1; c.decay_mode = LT_DECAY_MARKED;
    return c;
}
static lt_ademamix_config to2__adem_cfg(void) {
    lt_ademamix_config c = lt_ademamix_defaults();
    c.lr = (double)1e-2f; c.alpha = 5; c.alpha_warmup = 4; c.beta3_warmup = 6; c.weight_decay = 0.05;
    return c;
}
static lt_muon_config to2__muon_cfg(int nesterov) {
    lt_muon_config c = lt_muon_defaults();
    c.lr = (double)0.02f; c.momentum = 0.95; c.nesterov = nesterov; c.weight_decay = 0.02;
    c.adamw.lr = (double)3e-3f; c.adamw.beta1 = 0.9; c.adamw.beta2 = 0.95; c.adamw.eps = 1e-10;
    c.adamw.weight_decay = 0.1; c.adamw.decay_mode = LT_DECAY_MARKED;
    return c;
}
static lt_soap_config to2__soap_cfg(void) {
    lt_soap_config c = lt_soap_defaults();
    c.lr = (double)3e-3f; c.precondition_frequency = 3; c.max_precond_dim = 8; c.weight_decay = 0.01;
    return c;
}

/* Which optimizer (0 lion, 1 ademamix, 2 muon, 3 muon without nesterov, 4 soap) on params. */
static lt_optim *to2__make(lt_ctx *ctx, lt_paramset ps, int which) {
    switch (which) {
    case 0: return lt_lion_create(ctx, ps, to2__lion_cfg());
    case 1: return lt_ademamix_create(ctx, ps, to2__adem_cfg());
    case 2: return lt_muon_create(ctx, ps, to2__muon_cfg(1));
    case 3: return lt_muon_create(ctx, ps, to2__muon_cfg(0));
    default: return lt_soap_create(ctx, ps, to2__soap_cfg());
    }
}
static const char *const to2__tags[5] = {"lion", "ademamix", "muon", "muon_plain", "soap"};
static double to2__lr0(int which) { return which == 0 ? (double)3e-3f : which == 1 ? (double)1e-2f
                                         : which == 4 ? (double)3e-3f : (double)0.02f; }

/* Tolerances of the m case (float32 on both sides, the same gradients):
   Lion, AdEMAMix: torch's operations in torch's order, measured identical; 2.5e-7 relative
     (2-4 ulps) + 1e-9 only allows for another libm's pow() and a compiler contracting a·b + c.
   Muon: Newton-Schulz is 15 float32 matrix products summed in another order than torch's, and
     the norm is a double sum here: 1e-5 relative on parameters (measured ~1e-7); its momentum
     and the AdamW part are elementwise: 2.5e-7.
   SOAP: matrix products and the float32 factors L, R in another order; bases from double
     eigensolvers on both sides (Jacobi here, LAPACK's eigh there): 1e-5 relative + 1e-7. */
static void to2__test_m(t_ref *r) {
    int which;
    for (which = 0; which < 5; which++) {
        lt_tensor *p[TO2_NP];
        lt_ctx *ctx;
        lt_optim *opt;
        char name[64];
        snprintf(name, sizeof name, "optim2.m.%s", to2__tags[which]);
        if (!t_want(name)) continue;
        if (!(ctx = to2__params(r, p))) { t_check(0, name, "reference missing"); continue; }
        opt = to2__make(ctx, lt_ctx_params(ctx), which);
        if (!t_check(opt != NULL, name, "create: %s", lt_error(ctx))) { lt_ctx_destroy(ctx); continue; }
        to2__run(r, opt, p, to2__lr0(which), 0, TO2_STEPS);
        t_check(!lt_failed(ctx) && lt_optim_steps(opt) == TO2_STEPS, name, "%s", lt_error(ctx));
        if (which <= 1) to2__compare(r, opt, p, to2__tags[which], 1e-9, 2.5e-7, 1e-9, 2.5e-7, 1);
        else if (which <= 3) to2__compare(r, opt, p, to2__tags[which], 1e-7, 1e-5, 1e-9, 2.5e-7, 1);
        else to2__compare(r, opt, p, to2__tags[which], 1e-7, 1e-5, 0, 0, 0);
        lt_optim_destroy(opt);
        lt_ctx_destroy(ctx);
    }
}

/* Resume: 2 steps, every state buffer copied (lt_optim_state_buf) into a fresh optimizer that
   is told lt_optim_set_steps(2), 8 more steps: the same bits as 10 uninterrupted steps (SOAP:
   after its first update, through the basis refreshes at steps 3, 6, 9).  Step 2 comes before
   b's missing gradient: lt_optim_set_steps gives every parameter the same count. */
static void to2__test_resume(t_ref *r) {
    int which;
    for (which = 0; which < 5; which++) {
        lt_tensor *p[TO2_NP], *q[TO2_NP];
        lt_ctx *ca, *cb;
        lt_optim *a, *b1, *b2;
        int i, w, same = 1, counts = 1;
        char name[64];
        snprintf(name, sizeof name, "optim2.resume.%s", to2__tags[which]);
        if (!t_want(name)) continue;
        ca = to2__params(r, p);
        cb = to2__params(r, q);
        if (!ca || !cb) { t_check(0, name, "reference missing"); lt_ctx_destroy(ca); lt_ctx_destroy(cb); continue; }
        a = to2__make(ca, lt_ctx_params(ca), which);
        b1 = to2__make(cb, lt_ctx_params(cb), which);
        to2__run(r, a, p, to2__lr0(which), 0, TO2_STEPS);
        to2__run(r, b1, q, to2__lr0(which), 0, 2);
        b2 = to2__make(cb, lt_ctx_params(cb), which);
        lt_optim_set_steps(b2, lt_optim_steps(b1));
        for (i = 0; i < TO2_NP; i++)
            for (w = 0; w < lt_optim_num_states(b2); w++) {
                int64_t n1 = 0, n2 = 0;
                float *s1 = lt_optim_state_buf(b1, i, w, &n1), *s2 = lt_optim_state_buf(b2, i, w, &n2);
                if (n1 != n2 || !s1 != !s2) { counts = 0; continue; }
                if (s1) memcpy(s2, s1, (size_t)n1 * sizeof(float));
            }
        lt_optim_destroy(b1);
        to2__run(r, b2, q, to2__lr0(which), 2, TO2_STEPS);
        for (i = 0; i < TO2_NP; i++) same &= memcmp(p[i]->data, q[i]->data, (size_t)p[i]->n * sizeof(float)) == 0;
        t_check(same && counts && lt_optim_steps(b2) == TO2_STEPS && !lt_failed(cb), name,
                "resumed run differs from the uninterrupted one (counts %s) %s", counts ? "ok" : "differ", lt_error(cb));
        lt_optim_destroy(a);
        lt_optim_destroy(b2);
        lt_ctx_destroy(ca);
        lt_ctx_destroy(cb);
    }
}

/* ---- the small GPT ------------------------------------------------------------------------ */
static lt_gpt *to2__gpt(lt_ctx *ctx, t_ref *g) {
    lt_gpt_config cfg;
    lt_gpt *m;
    lt_paramset ps;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab = 256; cfg.ctx = 16; cfg.layers = 2; cfg.heads = 4; cfg.channels = 64;
    if (!(m = lt_gpt_create(ctx, &cfg))) return NULL;
    ps = lt_gpt_params(m);
    for (i = 0; i < ps.n; i++) {
        char nm[160];
        t_arr *a;
        snprintf(nm, sizeof nm, "w.%s", ps.p[i]->name);
        if (!(a = t_ref_get(g, nm)) || a->n != ps.p[i]->n) { lt_gpt_destroy(m); return NULL; }
        memcpy(ps.p[i]->data, a->data, (size_t)a->n * sizeof(float));
    }
    return m;
}

/* The GPT cases: lion lr 3e-4 λ 0.1; ademamix lr 1e-3, α 5, T_α = T_β3 = 8, λ 0.1; muon lr 0.02
   λ 0.01 with AdamW lr 1e-3 λ 0.01 (eps 1e-10); soap lr 3e-3, frequency 3, λ 0.01 (decayed
   parameters), max_precond_dim 16 (see gen_optim2.py), lr 1e-3. */
static lt_optim *to2__gpt_opt(lt_ctx *ctx, lt_paramset ps, int which, double *lr0) {
    switch (which) {
    case 0: {
        lt_lion_config c = lt_lion_defaults();
        c.lr = *lr0 = (double)3e-4f; c.weight_decay = 0.1;
        return lt_lion_create(ctx, ps, c);
    }
    case 1: {
        lt_ademamix_config c = lt_ademamix_defaults();
        c.lr = *lr0 = (double)1e-3f; c.alpha = 5; c.alpha_warmup = 8; c.beta3_warmup = 8; c.weight_decay = 0.1;
        return lt_ademamix_create(ctx, ps, c);
    }
    case 2: {
        lt_muon_config c = lt_muon_defaults();
        c.lr = *lr0 = (double)0.02f; c.weight_decay = 0.01;
        c.adamw.lr = (double)1e-3f; c.adamw.weight_decay = 0.01; c.adamw.decay_mode = LT_DECAY_MARKED;
        return lt_muon_create(ctx, ps, c);
    }
    default: {
        lt_soap_config c = lt_soap_defaults();
        c.lr = *lr0 = (double)1e-3f; c.precondition_frequency = 3; c.weight_decay = 0.01;
        c.max_precond_dim = 16;
        return lt_soap_create(ctx, ps, c);
    }
    }
}

static void to2__test_gpt(t_ref *r) {
    static const char *const tags[4] = {"lion", "ademamix", "muon", "soap"};
    /* Parameters: max|err| / max|ref| per tensor <= 1e-5 (float32 here, float64 there; the
       gradients alone differ by ~1e-6 relative, see test_gpt.c), SOAP 1e-4: its Adam (β2 0.95,
       eps outside the bias correction) turns the gradients' float32 rounding in a few small
       elements into ~1% of a step: measured 2.6e-5 at lr 1e-3 (7.6e-5 at 3e-3), the same with
       max_precond_dim 0, i.e. not from the eigenbases.  Losses (the forward pass of the same
       weights) to 1e-6 relative. */
    static const double tol[4] = {1e-5, 1e-5, 1e-5, 1e-4};
    char path[512];
    t_ref g;
    t_arr *ids_a, *tg_a, *lrf;
    int which;
    snprintf(path, sizeof path, "%s/gpt.bin", t_ref_dir());
    if (!t_want("optim2.gpt")) return;
    if (!t_ref_load(&g, path)) { t_check(0, "optim2.gpt", "cannot read %s", path); return; }
    ids_a = t_ref_get(&g, "train.ids");
    tg_a = t_ref_get(&g, "train.targets");
    lrf = t_ref_get(r, "gpt.lrf");
    if (!ids_a || !tg_a || !lrf) { t_check(0, "optim2.gpt", "records missing"); t_ref_free(&g); return; }
    for (which = 0; which < 4; which++) {
        lt_ctx *ctx = lt_ctx_create(1);
        lt_gpt *m = to2__gpt(ctx, &g);
        lt_optim *opt;
        lt_paramset ps;
        double lr0 = 0, lr_sum = 0, worst = 0, key_worst = 0, key_max = 0, key_bound, worst_loss = 0;
        t_arr *lref;
        int32_t ids[2 * 16], tgt[2 * 16];
        int k, i, j, B = (int)ids_a->shape[1], T = (int)ids_a->shape[2], compared = 0;
        char name[160];
        snprintf(name, sizeof name, "gpt.%s.loss", tags[which]);
        lref = t_ref_get(r, name);
        snprintf(name, sizeof name, "optim2.gpt.%s", tags[which]);
        if (!m || !lref || B * T > 32) { t_check(0, name, "model: %s", lt_error(ctx)); lt_ctx_destroy(ctx); continue; }
        ps = lt_gpt_params(m);
        opt = to2__gpt_opt(ctx, ps, which, &lr0);
        for (k = 0; k < 10 && opt; k++) {
            double lr = lr0 * (double)lrf->data[k];
            lr_sum += lr;
            for (j = 0; j < B * T; j++) {
                ids[j] = (int32_t)ids_a->data[(int64_t)k * B * T + j];
                tgt[j] = (int32_t)tg_a->data[(int64_t)k * B * T + j];
            }
            lt_tensor *loss;
            double el;
            lt_zero_grad(ctx);
            loss = lt_gpt_loss(m, ids, tgt, B, T);
            el = fabs((double)lt_item(loss) - (double)lref->data[k]) / (double)lref->data[k];
            if (!(el <= worst_loss)) worst_loss = el;
            lt_backward(ctx, loss);
            lt_optim_step(opt, lr);
        }
        t_check(opt && !lt_failed(ctx), name, "%s", lt_error(ctx));
        snprintf(name, sizeof name, "optim2.gpt.%s.losses", tags[which]);
        t_check(worst_loss <= 1e-6, name, "worst loss rel err %.3g (tol 1e-6)", worst_loss);
        snprintf(name, sizeof name, "optim2.gpt.%s", tags[which]);
        if (which == 2) lr_sum *= (double)1e-3f / (double)0.02f; /* c_attn.bias is in Muon's AdamW part */
        for (i = 0; i < ps.n; i++) {
            char nm[200];
            t_arr *f;
            double dm = 0, rm = 0;
            snprintf(nm, sizeof nm, "gpt.%s.%s", tags[which], ps.p[i]->name);
            if (!(f = t_ref_get(r, nm))) continue;
            compared++;
            for (j = 0; j < f->n; j++) {
                double d = fabs((double)ps.p[i]->data[j] - (double)f->data[j]);
                /* c_attn.bias's key part (C..2C) has an exact-zero gradient, so what moves it is
                   rounding noise (see test_gpt.c): bounded by the lrs, not compared */
                if (strstr(nm, "c_attn.bias") && j >= 64 && j < 128) {
                    if (d > key_worst) key_worst = d;
                    if (fabs((double)f->data[j]) > key_max) key_max = fabs((double)f->data[j]);
                    continue;
                }
                if (d > dm) dm = d;
                if (fabs((double)f->data[j]) > rm) rm = fabs((double)f->data[j]);
            }
            if (dm / rm > worst) worst = dm / rm;
            snprintf(nm, sizeof nm, "optim2.gpt.%s.%s", tags[which], ps.p[i]->name);
            t_check(dm <= tol[which] * rm, nm, "max|err| / max|ref| = %.3g (tol %g)", dm / rm, tol[which]);
        }
        /* Each side steps a key bias by up to lr either way (Lion: exactly lr, the sign of noise; the
           two sides' noise may disagree at every step), so they part by up to 2 Σ lr, plus float32's
           roundings, each at most half an ulp of values up to key_max + 2 Σ lr: three a step here
           (the decay factor, the decay, the step; 10 steps) and the stored reference's.  Lion on
           the portable kernels reached 2 Σ lr + 3.3e-9. */
        key_bound = 2 * lr_sum + 31 * ldexp(key_max + 2 * lr_sum, -24);
        t_check(compared == 9 && key_worst <= key_bound, name, "compared %d tensors; c_attn.bias key part off by %.3g "
                "(bound %.3g)", compared, key_worst, key_bound);
        printf("info optim2.gpt.%s: 10 steps, float32 vs float64: worst max|err|/max|ref| over %d tensors = %.3g "
               "(key bias part %.3g, bound %.3g); losses %.3g\n", tags[which], compared, worst, key_worst, key_bound,
               worst_loss);
        lt_optim_destroy(opt);
        lt_gpt_destroy(m);
        lt_ctx_destroy(ctx);
    }
    t_ref_free(&g);
}

/* ---- the contract, the split, the errors ------------------------------------------------------ */
static void to2__test_misc(void) {
    lt_ctx *ctx;
    lt_gpt_config cfg;
    lt_gpt *m;
    lt_paramset ps;
    lt_optim *o;
    int i, hidden = 0, ok;
    if (!t_want("optim2.misc")) return;
    ctx = lt_ctx_create(3);
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab = 64; cfg.ctx = 8; cfg.layers = 2; cfg.heads = 2; cfg.channels = 16;
    m = lt_gpt_create(ctx, &cfg);
    ps = lt_gpt_params(m);
    /* the default Muon split: the 4 hidden matrices of each block, nothing else */
    for (i = 0; i < ps.n; i++) {
        int want = strstr(ps.p[i]->name, ".weight") && (strstr(ps.p[i]->name, "c_attn") || strstr(ps.p[i]->name, "c_proj") ||
                                                         strstr(ps.p[i]->name, "c_fc"));
        if (lt_muon_is_hidden(ps.p[i], NULL) != want) hidden = -1000;
        hidden += want;
    }
    t_check(hidden == 8, "optim2.misc.muon_split", "lt_muon_is_hidden picked a wrong set (%d)", hidden);
    o = lt_muon_create(ctx, ps, lt_muon_defaults());
    ok = o && !strcmp(lt_optim_name(o), "muon") && lt_optim_num_states(o) == 3;
    for (i = 0; o && i < ps.n; i++) {
        int mu = lt_muon_uses_muon(o, i);
        ok &= mu == lt_muon_is_hidden(ps.p[i], NULL);
        ok &= (lt_optim_state(o, i, 0) != NULL) == mu && (lt_optim_state(o, i, 1) != NULL) == !mu;
    }
    t_check(ok, "optim2.misc.muon_states", "momentum for Muon's matrices, exp_avg/exp_avg_sq for the rest");
    {   /* state bytes: Muon holds 1 buffer per hidden matrix, 2 per other parameter */
        size_t want = 0;
        for (i = 0; i < ps.n; i++) want += (size_t)ps.p[i]->n * 4 * (lt_muon_is_hidden(ps.p[i], NULL) ? 1 : 2);
        t_check(o && lt_optim_state_bytes(o) == want, "optim2.misc.state_bytes", "%zu, want %zu",
                lt_optim_state_bytes(o), want);
    }
    lt_optim_destroy(o);
    {   /* SOAP: square factors are not parameter-shaped; max_precond_dim drops a side */
        lt_soap_config c = lt_soap_defaults();
        int64_t cnt = -1;
        lt_tensor *fc = lt_find_param(ctx, "h.0.mlp.c_fc.weight"), *b = lt_find_param(ctx, "h.0.mlp.c_fc.bias");
        int ifc = -1, ib = -1;
        for (i = 0; i < ps.n; i++) { if (ps.p[i] == fc) ifc = i; if (ps.p[i] == b) ib = i; }
        c.max_precond_dim = 32;
        o = lt_soap_create(ctx, ps, c);
        ok = o && lt_optim_num_states(o) == 6 && !strcmp(lt_optim_state_name(o, 4), "Q_L");
        ok &= ifc >= 0 && lt_optim_state(o, ifc, 2) == NULL && lt_optim_state_buf(o, ifc, 2, &cnt) && cnt == 16 * 16;
        ok &= lt_optim_state_buf(o, ifc, 3, &cnt) == NULL && cnt == 0;      /* 64 > 32: no R */
        ok &= ib >= 0 && lt_optim_state_buf(o, ib, 2, &cnt) == NULL && lt_optim_state(o, ib, 0) != NULL;
        t_check(ok, "optim2.misc.soap_states", "SOAP's state layout");
        lt_optim_destroy(o);
    }
    {   /* AdamW through the new accessor */
        int64_t cnt = 0;
        o = lt_adamw_create(ctx, ps, lt_adamw_defaults());
        t_check(o && lt_optim_state_buf(o, 0, 1, &cnt) == lt_optim_state(o, 0, 1) && cnt == ps.p[0]->n &&
                    lt_optim_state_bytes(o) == 2 * 4 * (size_t)lt_params_count(ctx),
                "optim2.misc.adamw_buf", "lt_optim_state_buf on AdamW");
        lt_optim_destroy(o);
    }
    {   /* the scheduled α and β3 at their ends */
        lt_ademamix_config c = lt_ademamix_defaults();
        c.alpha_warmup = 10; c.beta3_warmup = 10;
        t_check(lt_ademamix_alpha(&c, 0) == 0 && fabs(lt_ademamix_alpha(&c, 5) - 2.5) < 1e-12 &&
                    lt_ademamix_alpha(&c, 10) == 5 && fabs(lt_ademamix_beta3(&c, 0) - 0.9) < 1e-7 &&
                    lt_ademamix_beta3(&c, 10) == 0.9999 && lt_ademamix_beta3(&c, 5) > 0.9 &&
                    lt_ademamix_beta3(&c, 5) < 0.9999,
                "optim2.misc.ademamix_sched", "alpha/beta3 warm-ups");
    }
    /* errors: a sentence, NULL, and nothing else happens */
    {
        lt_lion_config lc = lt_lion_defaults();
        lt_soap_config sc = lt_soap_defaults();
        lt_muon_config mc = lt_muon_defaults();
        lc.beta1 = 1.0;
        t_check(!lt_lion_create(ctx, ps, lc) && lt_status_of(ctx) == LT_ERR_ARG && strstr(lt_error(ctx), "lt_lion_create"),
                "optim2.misc.err_lion", "%s", lt_error(ctx));
        lt_clear_error(ctx);
        sc.precondition_frequency = 0;
        t_check(!lt_soap_create(ctx, ps, sc) && strstr(lt_error(ctx), "precondition_frequency"), "optim2.misc.err_soap",
                "%s", lt_error(ctx));
        lt_clear_error(ctx);
        mc.adamw.beta2 = -1;
        t_check(!lt_muon_create(ctx, ps, mc) && strstr(lt_error(ctx), "AdamW part"), "optim2.misc.err_muon", "%s",
                lt_error(ctx));
        lt_clear_error(ctx);
        o = lt_ademamix_create(ctx, ps, lt_ademamix_defaults());
        t_check(o && lt_optim_step(o, (double)NAN) == LT_ERR_ARG && lt_optim_steps(o) == 0, "optim2.misc.err_lr",
                "a NaN lr must be refused");
        lt_optim_destroy(o);
        lt_clear_error(ctx);
    }
    lt_gpt_destroy(m);
    lt_ctx_destroy(ctx);
}

/* SOAP's eigensolver (lt__eigh) and QR (lt__householder_q) on their own, in double: a random
   symmetric matrix, one with a 5-fold eigenvalue (a Gram matrix of rank 7 in 12 dims), and a
   diagonal one: ‖A − V·diag(w)·Vᵀ‖ and ‖VᵀV − I‖ below 1e-12 (relative to ‖A‖), and QR's Q
   orthogonal with QᵀA upper triangular. */
static void to2__test_eigh(void) {
    enum { N = 12 };
    double a[N * N], v[N * N], w[N], e[N], q[N * N], h[N * N], row[N], g[N * 7];
    double worst = 0;
    lt_rng rng;
    int c, i, j, k;
    if (!t_want("optim2.eigh")) return;
    lt_rng_seed(&rng, 5);
    for (c = 0; c < 3; c++) {
        double nrm = 0, err = 0, orth = 0, tri = 0;
        for (i = 0; i < N * 7; i++) g[i] = lt_rng_normal(&rng);
        for (i = 0; i < N; i++)
            for (j = 0; j <= i; j++) {
                double x = 0;
                if (c == 0) x = lt_rng_normal(&rng);
                if (c == 1) for (k = 0; k < 7; k++) x += g[i * 7 + k] * g[j * 7 + k];
                if (c == 2) x = i == j ? (double)(i % 3) : 0;
                a[i * N + j] = a[j * N + i] = x;
            }
        for (i = 0; i < N * N; i++) nrm += a[i] * a[i];
        nrm = sqrt(nrm);
        lt__eigh(a, v, w, e, N);
        for (i = 0; i < N; i++)
            for (j = 0; j < N; j++) {
                double r = 0, o = 0;
                for (k = 0; k < N; k++) { r += v[k * N + i] * w[k] * v[k * N + j]; o += v[i * N + k] * v[j * N + k]; }
                err = fmax(err, fabs(r - a[i * N + j]) / nrm);
                orth = fmax(orth, fabs(o - (i == j)));
            }
        memcpy(h, a, sizeof a);
        lt__householder_q(h, q, v, row, N);
        for (i = 0; i < N; i++)
            for (j = 0; j < N; j++) {
                double o = 0, r = 0;
                for (k = 0; k < N; k++) { o += q[k * N + i] * q[k * N + j]; r += q[k * N + i] * a[k * N + j]; }
                orth = fmax(orth, fabs(o - (i == j)));
                if (i > j) tri = fmax(tri, fabs(r) / nrm);
            }
        worst = fmax(worst, fmax(err, fmax(orth, tri)));
    }
    t_check(worst < 1e-12, "optim2.eigh", "worst reconstruction / orthogonality error %.3g", worst);
}

/* ---- fidelity to the references: Muon with no gradient and on more dims, SOAP's shampoo_beta ---- */
static int to2__all(const lt_tensor *t, void *user) { (void)t; (void)user; return 1; }
/* k steps of opt on ps, gradient of parameter i at step s: sin(1 + i + 0.37·j + 1.3·s) (i = hole: NULL at step 1) */
static void to2__steps(lt_optim *opt, lt_paramset ps, int k, int hole) {
    int s, i;
    int64_t j;
    for (s = 0; s < k; s++) {
        float *keep[8];
        for (i = 0; i < ps.n && i < 8; i++) {
            for (j = 0; j < ps.p[i]->n; j++) ps.p[i]->grad[j] = sinf(1.0f + (float)i + 0.37f * (float)j + 1.3f * (float)s);
            keep[i] = ps.p[i]->grad;
            if (i == hole && s == 1) ps.p[i]->grad = NULL;
        }
        lt_optim_step(opt, -1);
        for (i = 0; i < ps.n && i < 8; i++) ps.p[i]->grad = keep[i];
    }
}
static void to2__test_fidelity(void) {
    lt_ctx *a = lt_ctx_create(1), *b = lt_ctx_create(1);
    lt_muon_config mc = lt_muon_defaults();
    lt_optim *oa, *ob;
    lt_tensor *wa, *wb, *ba, *bb;
    int64_t s2[2] = {4, 6}, s1[1] = {5}, j;
    int ok;
    if (!t_want("optim2.fidelity")) { lt_ctx_destroy(a); lt_ctx_destroy(b); return; }
    mc.weight_decay = 0.1; mc.adamw.weight_decay = 0.1;
    /* a parameter whose grad is NULL: stepped as with a zero gradient (Muon and its AdamW part) */
    wa = lt_param(a, "h.w", 2, s2); ba = lt_param(a, "h.b", 1, s1);
    wb = lt_param(b, "h.w", 2, s2); bb = lt_param(b, "h.b", 1, s1);
    for (j = 0; j < wa->n; j++) wa->data[j] = wb->data[j] = 0.1f * (float)(j % 7) - 0.3f;
    for (j = 0; j < ba->n; j++) ba->data[j] = bb->data[j] = 0.2f * (float)j;
    oa = lt_muon_create(a, lt_ctx_params(a), mc);
    ob = lt_muon_create(b, lt_ctx_params(b), mc);
    to2__steps(oa, lt_ctx_params(a), 3, 0);    /* w's grad NULL at step 1 */
    {   /* b: the same with an explicit zero gradient at step 1 */
        lt_paramset ps = lt_ctx_params(b);
        int st, i;
        for (st = 0; st < 3; st++) {
            for (i = 0; i < ps.n; i++)
                for (j = 0; j < ps.p[i]->n; j++)
                    ps.p[i]->grad[j] = (i == 0 && st == 1) ? 0.0f : sinf(1.0f + (float)i + 0.37f * (float)j + 1.3f * (float)st);
            lt_optim_step(ob, -1);
        }
    }
    ok = oa && ob && !memcmp(wa->data, wb->data, (size_t)wa->n * 4) &&
         !memcmp(lt_optim_state(oa, 0, 0), lt_optim_state(ob, 0, 0), (size_t)wa->n * 4);
    t_check(ok, "optim2.fidelity.muon_null_grad", "a NULL gradient is not stepped as a zero one: %s", lt_error(a));
    lt_optim_destroy(oa); lt_optim_destroy(ob);
    for (j = 0; j < wa->n; j++) wa->data[j] = wb->data[j] = 0.1f * (float)(j % 7) - 0.3f;
    for (j = 0; j < ba->n; j++) ba->data[j] = bb->data[j] = 0.2f * (float)j;
    oa = lt_muon_create(a, lt_ctx_params(a), mc);
    ob = lt_muon_create(b, lt_ctx_params(b), mc);
    to2__steps(oa, lt_ctx_params(a), 3, 1);    /* the AdamW part: b's grad NULL at step 1 */
    {
        lt_paramset ps = lt_ctx_params(b);
        int st, i;
        for (st = 0; st < 3; st++) {
            for (i = 0; i < ps.n; i++)
                for (j = 0; j < ps.p[i]->n; j++)
                    ps.p[i]->grad[j] = (i == 1 && st == 1) ? 0.0f : sinf(1.0f + (float)i + 0.37f * (float)j + 1.3f * (float)st);
            lt_optim_step(ob, -1);
        }
    }
    ok = oa && ob && !memcmp(ba->data, bb->data, (size_t)ba->n * 4) &&
         !memcmp(lt_optim_state(oa, 1, 1), lt_optim_state(ob, 1, 1), (size_t)ba->n * 4);
    t_check(ok, "optim2.fidelity.muon_adamw_null_grad", "the AdamW part skipped a NULL gradient: %s", lt_error(a));
    lt_optim_destroy(oa); lt_optim_destroy(ob);
    {   /* lt_adamw still skips it (torch's AdamW) */
        float before[5];
        lt_optim *ad = lt_adamw_create(a, lt_ctx_params(a), lt_adamw_defaults());
        float *keep = ba->grad;
        memcpy(before, ba->data, sizeof before);
        ba->grad = NULL;
        lt_optim_step(ad, -1);
        ba->grad = keep;
        t_check(!memcmp(before, ba->data, sizeof before), "optim2.fidelity.adamw_skips_null_grad", "AdamW moved it");
        lt_optim_destroy(ad);
    }
    lt_ctx_destroy(a); lt_ctx_destroy(b);

    /* 3-D: a batch of matrices, each its own Muon update = two 2-D parameters holding the slices */
    {
        int64_t s3[3] = {2, 3, 5}, sm[2] = {3, 5}, s4[4] = {3, 1, 4, 2}, sf[2] = {3, 8};
        lt_tensor *t3, *m0, *m1, *t4, *f2;
        float g3[30], d4[24], df[24];
        double worst = 0;
        a = lt_ctx_create(1); b = lt_ctx_create(1);
        mc = lt_muon_defaults();
        mc.select = to2__all;
        t3 = lt_param(a, "t3", 3, s3);
        m0 = lt_param(b, "m0", 2, sm); m1 = lt_param(b, "m1", 2, sm);
        for (j = 0; j < 30; j++) { t3->data[j] = 0.05f * (float)j; g3[j] = cosf(0.7f * (float)j); }
        memcpy(m0->data, t3->data, 15 * 4); memcpy(m1->data, t3->data + 15, 15 * 4);
        oa = lt_muon_create(a, lt_ctx_params(a), mc);
        ob = lt_muon_create(b, lt_ctx_params(b), mc);
        memcpy(t3->grad, g3, sizeof g3); memcpy(m0->grad, g3, 15 * 4); memcpy(m1->grad, g3 + 15, 15 * 4);
        lt_optim_step(oa, -1); lt_optim_step(ob, -1);
        ok = oa && ob && !memcmp(t3->data, m0->data, 15 * 4) && !memcmp(t3->data + 15, m1->data, 15 * 4);
        t_check(ok, "optim2.fidelity.muon_3d_batched", "a [2,3,5] parameter is not two [3,5] matrices: %s", lt_error(a));
        lt_optim_destroy(oa); lt_optim_destroy(ob);
        lt_ctx_destroy(a); lt_ctx_destroy(b);
        /* 4-D: one matrix [shape[0], rest], scaled by sqrt(max(1, shape[2]/shape[3])) = sqrt(2) here,
           where the same values as a [3,8] matrix get 1 */
        a = lt_ctx_create(1); b = lt_ctx_create(1);
        t4 = lt_param(a, "t4", 4, s4); f2 = lt_param(b, "f2", 2, sf);
        for (j = 0; j < 24; j++) { t4->grad[j] = f2->grad[j] = cosf(0.3f * (float)j); }
        oa = lt_muon_create(a, lt_ctx_params(a), mc);
        ob = lt_muon_create(b, lt_ctx_params(b), mc);
        lt_optim_step(oa, -1); lt_optim_step(ob, -1);
        for (j = 0; j < 24; j++) {
            d4[j] = -t4->data[j]; df[j] = -f2->data[j];
            if (fabs(d4[j] - sqrt(2.0) * df[j]) > worst) worst = fabs(d4[j] - sqrt(2.0) * df[j]);
        }
        t_check(oa && ob && worst < 1e-6 && fabsf(df[0]) > 1e-4f, "optim2.fidelity.muon_4d_scale",
                "4-D update / flattened one is not sqrt(2): worst %.3g", worst);
        lt_optim_destroy(oa); lt_optim_destroy(ob);
        lt_ctx_destroy(a); lt_ctx_destroy(b);
    }

    /* SOAP: shampoo_beta < 0 (the default) follows beta2, as the reference's -1 */
    {
        lt_soap_config c1 = lt_soap_defaults(), c2;
        int64_t sh[2] = {4, 3};
        t_check(c1.shampoo_beta < 0, "optim2.fidelity.soap_default", "shampoo_beta default %g", c1.shampoo_beta);
        c1.beta2 = 0.9; c1.precondition_frequency = 2;
        c2 = c1; c2.shampoo_beta = 0.9;
        a = lt_ctx_create(1); b = lt_ctx_create(1);
        wa = lt_param(a, "w", 2, sh); wb = lt_param(b, "w", 2, sh);
        oa = lt_soap_create(a, lt_ctx_params(a), c1);
        ob = lt_soap_create(b, lt_ctx_params(b), c2);
        to2__steps(oa, lt_ctx_params(a), 5, -1);
        to2__steps(ob, lt_ctx_params(b), 5, -1);
        t_check(oa && ob && !memcmp(wa->data, wb->data, 12 * 4) && wa->data[0] != 0.0f, "optim2.fidelity.soap_follows_beta2",
                "shampoo_beta -1 is not beta2: %s", lt_error(a));
        lt_optim_destroy(oa); lt_optim_destroy(ob);
        lt_ctx_destroy(a); lt_ctx_destroy(b);
    }
}

static void test_optim2_all(void) {
    char path[512];
    t_ref r;
    snprintf(path, sizeof path, "%s/optim2.bin", t_ref_dir());
    if (!t_ref_load(&r, path)) { t_check(0, "optim2.ref", "cannot read %s (run tests/ref/gen_optim2.py)", path); return; }
    to2__test_m(&r);
    to2__test_resume(&r);
    to2__test_gpt(&r);
    t_ref_free(&r);
    to2__test_misc();
    to2__test_eigh();
    to2__test_fidelity();
}

/* ==== @@TRAIN  training helpers: GPT checkpoints, training state ================================ */
/* Holds: GPT checkpoints under Hugging Face names; the training state (optimizer moments,
   scaler, step) saved next to the weights and loaded back.
   Calls: @@CORE, @@TENSOR, @@NN, @@OPTIM, @@AMP, @@CKPT; the device through ctx->dev. */

/* ---- @@TRAIN.weights  GPT weights under Hugging Face names ----------------------------------- */
LTRAIN_DEF lt_status lt_gpt_save(lt_gpt *g, const char *path) {
    return lt_checkpoint_save(g, NULL, NULL, NULL, path);
}

/* Find a model tensor in a file by its Hugging Face name, with or without "transformer.". */
static int lt__st_find_hf(const lt_st *st, const char *name) {
    char buf[160];
    int i = lt_st_find(st, name);
    if (i >= 0) return i;
    snprintf(buf, sizeof buf, "transformer.%s", name);
    return lt_st_find(st, buf);
}

/* A model loads completely or not at all: a tensor of the file that is not one of g's parameters
   is an error, except the training state a checkpoint adds (optim.*, train.state, amp.scaler) and
   what Hugging Face's GPT-2 files hold beside the weights: the causal-mask buffers
   h.N.attn.bias and h.N.attn.masked_bias of the model's layers, and lm_head.weight shaped like wte
   (tied to it). */
static lt_status lt__gpt_extra(lt_gpt *g, const lt_st *st, const char *path) {
    int i, k, n = lt_st_count(st);
    for (i = 0; i < n; i++) {
        const char *nm = lt_st_name(st, i), *base = nm, *dot;
        int64_t shape[8];
        int known = 0;
        long layer = -1;
        if (strncmp(nm, "optim.", 6) == 0 || strcmp(nm, "train.state") == 0 || strcmp(nm, "amp.scaler") == 0) continue;
        if (strncmp(base, "transformer.", 12) == 0) base += 12;
        for (k = 0; k < g->n_list && !known; k++) known = strcmp(base, g->list[k]->name) == 0;
        if (known) continue;
        if (strncmp(base, "h.", 2) == 0 && base[2] >= '0' && base[2] <= '9') layer = strtol(base + 2, NULL, 10);
        dot = layer >= 0 ? strchr(base + 2, '.') : NULL;
        if (dot && layer < g->cfg.layers && (strcmp(dot, ".attn.bias") == 0 || strcmp(dot, ".attn.masked_bias") == 0))
            continue;
        if (strcmp(nm, "lm_head.weight") == 0 && lt_st_shape(st, i, shape) == 2 && shape[0] == g->cfg.vocab &&
            shape[1] == g->cfg.channels)
            continue;
        if (layer >= g->cfg.layers)
            return lt_set_error(g->ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\" belongs to layer %ld, but the model has %d "
                                "layer%s (h.0 to h.%d): a layer in between is incomplete or the layer count is wrong", path,
                                nm, layer, g->cfg.layers, g->cfg.layers == 1 ? "" : "s", g->cfg.layers - 1);
        return lt_set_error(g->ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\" is not part of this GPT-2 model (L=%d C=%d "
                            "V=%d): another architecture or a damaged file?", path, nm, g->cfg.layers, g->cfg.channels,
                            g->cfg.vocab);
    }
    return LT_OK;
}

/* Copy every parameter of g from st; shapes must match exactly; every weight finite; no tensor
   of the file left over (lt__gpt_extra). */
static lt_status lt__gpt_read(lt_gpt *g, lt_st *st, const char *path) {
    lt_ctx *ctx = g->ctx;
    int k;
    for (k = 0; k < g->n_list && !lt_failed(ctx); k++) {
        lt_tensor *t = g->list[k];
        int64_t shape[8];
        int i = lt__st_find_hf(st, t->name), nd, d, same;
        int64_t e;
        char b1[64];
        if (i < 0)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" is missing (the model needs it, shape %s)", path,
                                t->name, lt_shape_str(t, b1, sizeof b1));
        nd = lt_st_shape(st, i, shape);
        same = nd == t->ndim;
        for (d = 0; same && d < nd; d++) same = shape[d] == t->shape[d];
        if (!same) {
            char b2[96];
            size_t used = (size_t)snprintf(b2, sizeof b2, "[");
            for (d = 0; d < nd && d < 8 && used < sizeof b2; d++)
                used += (size_t)snprintf(b2 + used, sizeof b2 - used, d ? ",%lld" : "%lld", (long long)shape[d]);
            if (used < sizeof b2) snprintf(b2 + used, sizeof b2 - used, "]");
            return lt_set_error(ctx, LT_ERR_SHAPE, "%s: tensor \"%s\" is %s but the model needs %s", path, t->name, b2,
                                lt_shape_str(t, b1, sizeof b1));
        }
        if (lt_st_read_f32(st, i, t->data, t->n) != LT_OK) break;
        for (e = 0; e < t->n; e++)
            if (!isfinite(t->data[e]))
                return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" holds %s at element %lld: the checkpoint's "
                                    "weights are not finite (saved from a diverged run?)", path, lt_st_name(st, i),
                                    t->data[e] != t->data[e] ? "NaN" : "inf", (long long)e);
    }
    if (!lt_failed(ctx)) lt__gpt_extra(g, st, path);
    return ctx->status;
}

LTRAIN_DEF lt_status lt_gpt_load_weights(lt_gpt *g, const char *path) {
    lt_st *st;
    lt_status s;
    if (!g || lt_failed(g->ctx)) return g ? g->ctx->status : LT_ERR_ARG;
    lt_sync_params(g->ctx);      /* LT_CUDA: the host copies are written, then sent to the device */
    lt_params_changed(g->ctx);
    st = lt_st_open(g->ctx, path);
    if (!st) return g->ctx->status;
    s = lt__gpt_read(g, st, path);
    lt_st_close(st);
    return s;
}

/* A positive integer metadata value (key), or 0 when the file has none; -1 + error if malformed. */
static long lt__gpt_meta_int(lt_ctx *ctx, const lt_st *st, const char *path, const char *key) {
    const char *m = lt_st_meta(st, key);
    char *end;
    long v;
    if (!m) return 0;
    v = strtol(m, &end, 10);
    if (end == m || *end || v < 1 || v > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: metadata %s is \"%.40s\": it must be a positive integer", path, key, m);
        return -1;
    }
    return v;
}

/* The layer count: one past the highest h.N of the file's tensors, and every layer below it
   complete (all 12 tensors; shapes are checked when they are read).  Metadata n_layer, n_embd,
   n_ctx and vocab_size, where the file has them, must agree with the tensors. */
static lt_status lt__gpt_load_layers(lt_ctx *ctx, const lt_st *st, const char *path, lt_gpt_config *cfg) {
    static const char *const part[12] = {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
        "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
        "mlp.c_proj.weight", "mlp.c_proj.bias"};
    static const char *const keys[4] = {"n_layer", "n_embd", "n_ctx", "vocab_size"};
    long top = -1, m;
    int i, k, got[4];
    char name[64];
    for (i = 0; i < lt_st_count(st); i++) {
        const char *nm = lt_st_name(st, i);
        if (strncmp(nm, "transformer.", 12) == 0) nm += 12;
        if (strncmp(nm, "h.", 2) == 0 && nm[2] >= '0' && nm[2] <= '9') {
            long l = strtol(nm + 2, NULL, 10);
            if (l > top) top = l;
        }
    }
    if (top >= 100000)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: a tensor of layer %ld: more than 100000 layers", path, top);
    cfg->layers = (int)(top + 1);
    got[0] = cfg->layers; got[1] = cfg->channels; got[2] = cfg->ctx; got[3] = cfg->vocab;
    for (k = 0; k < 4; k++) {
        if ((m = lt__gpt_meta_int(ctx, st, path, keys[k])) < 0) return ctx->status;
        if (m > 0 && m != got[k])
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: metadata %s = %ld but the tensors say %d%s", path, keys[k], m,
                                got[k], k == 0 ? " (tensors of a layer missing, or of an extra layer present?)" : "");
    }
    for (i = 0; i < cfg->layers; i++)
        for (k = 0; k < 12; k++) {
            snprintf(name, sizeof name, "h.%d.%s", i, part[k]);
            if (lt__st_find_hf(st, name) < 0)
                return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" is missing: layer %d of %d is incomplete "
                                    "(a model loads completely or not at all)", path, name, i, cfg->layers);
        }
    return LT_OK;
}

/* A config from the shapes in a file: wte [V,C], wpe [ctx,C], layers = one past the highest h.N
   (every layer complete, the metadata consistent: lt__gpt_load_layers). */
LTRAIN_DEF lt_gpt *lt_gpt_load(lt_ctx *ctx, const char *path, int n_head) {
    lt_st *st;
    lt_gpt_config cfg;
    lt_gpt *g = NULL;
    int64_t s1[8], s2[8];
    int iw, ip, l;
    const char *meta;
    if (!ctx || lt_failed(ctx)) return NULL;
    st = lt_st_open(ctx, path);
    if (!st) return NULL;
    memset(&cfg, 0, sizeof cfg);
    iw = lt__st_find_hf(st, "wte.weight");
    ip = lt__st_find_hf(st, "wpe.weight");
    if (iw < 0 || ip < 0) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" is missing: this is not a GPT-2 checkpoint", path,
                     iw < 0 ? "wte.weight" : "wpe.weight");
        goto done;
    }
    if (lt_st_shape(st, iw, s1) != 2 || lt_st_shape(st, ip, s2) != 2 || s1[1] != s2[1] || s1[0] > INT_MAX ||
        s2[0] > INT_MAX || s1[1] > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: wte.weight and wpe.weight must be [V,C] and [ctx,C] with the same C", path);
        goto done;
    }
    cfg.vocab = (int)s1[0];
    cfg.channels = (int)s1[1];
    cfg.ctx = (int)s2[0];
    if (lt__gpt_load_layers(ctx, st, path, &cfg) != LT_OK) goto done;
    meta = lt_st_meta(st, "n_head");
    if (meta) {
        char *end;
        long h = strtol(meta, &end, 10);
        if (*end || h < 1 || h > INT_MAX) {
            lt_set_error(ctx, LT_ERR_FORMAT, "%s: metadata n_head is \"%s\": it must be a positive integer", path, meta);
            goto done;
        }
        if (n_head > 0 && n_head != (int)h) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: the file says n_head = %ld but %d heads were asked for", path, h, n_head);
            goto done;
        }
        n_head = (int)h;
    }
    if (n_head < 1) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: the number of heads is unknown (no n_head metadata): give it (--heads N)",
                     path);
        goto done;
    }
    cfg.heads = n_head;
    if (cfg.layers < 1 || cfg.channels % cfg.heads != 0) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %d layers and C = %d with %d heads: need >= 1 layer and heads dividing C",
                     path, cfg.layers, cfg.channels, cfg.heads);
        goto done;
    }
    {   /* every parameter must be in the file (>= 2 bytes each): refuse a config bigger than the
           file before allocating it (a few header bytes could otherwise ask for gigabytes) */
        double C = cfg.channels, need = ((double)cfg.vocab + cfg.ctx + 2) * C + cfg.layers * (12 * C * C + 13 * C);
        size_t have = 0, b;
        for (l = 0; l < lt_st_count(st); l++) { lt_st_data(st, l, &b); have += b; }
        if (need > (double)have / 2) {
            lt_set_error(ctx, LT_ERR_FORMAT, "%s: its shapes describe a model of %.0f parameters (V=%d ctx=%d C=%d, %d "
                         "layers) but the file holds only %zu bytes of tensors: tensors are missing", path, need,
                         cfg.vocab, cfg.ctx, cfg.channels, cfg.layers, have);
            goto done;
        }
    }
    g = lt_gpt_create(ctx, &cfg);
    if (g && lt__gpt_read(g, st, path) != LT_OK) { lt_gpt_destroy(g); g = NULL; }
done:
    lt_st_close(st);
    return g;
}

/* ---- @@TRAIN.checkpoint  checkpoints: weights and training state ----------------------------- */
LTRAIN_DEF lt_status lt_checkpoint_save(lt_gpt *g, lt_optim *opt, const lt_train_state *st, const char *note,
                                        const char *path) {
    lt_ctx *ctx;
    lt_st_writer *w;
    char num[5][32], (*names)[160] = NULL;
    int64_t (*shapes)[2] = NULL;   /* 1-D shapes of state buffers not shaped like their parameter */
    int64_t state[7], seven = 7, six = 6;
    double amp[6];
    int k, j, ns = opt ? lt_optim_num_states(opt) : 0;
    lt_status s;
    if (!g) return LT_ERR_ARG;
    ctx = g->ctx;
    if (lt_failed(ctx)) return ctx->status;
    if (opt && lt_optim_params(opt).n != g->n_list)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_checkpoint_save: the optimizer holds %d parameters, the model %d",
                            lt_optim_params(opt).n, g->n_list);
    if (lt_sync_params(ctx) != LT_OK) return ctx->status;   /* LT_CUDA: the device's values to the host copies */
    w = lt_st_writer_create(ctx);
    if (!w) return ctx->status;
    if (ns > 0) {
        names = (char(*)[160])LT__MALLOC((size_t)ns * (size_t)g->n_list * 160);
        shapes = (int64_t(*)[2])LT__MALLOC((size_t)ns * (size_t)g->n_list * sizeof(int64_t[2]));
        if (!names || !shapes) {
            LT__FREE(names);
            LT__FREE(shapes); lt_st_writer_destroy(w); return lt_set_error(ctx, LT_ERR_NOMEM, "lt_checkpoint_save: out of memory"); }
    }
    for (k = 0; k < g->n_list; k++) {
        lt_tensor *t = g->list[k];
        lt_st_add(w, t->name, "F32", t->ndim, t->shape, t->data);
    }
    /* optimizer state: buffers shaped like their parameter keep its shape; others (SOAP's
       factor matrices) are stored flat; a parameter without a buffer of this kind has none */
    for (j = 0; j < ns; j++)
        for (k = 0; k < g->n_list; k++) {
            lt_tensor *t = g->list[k];
            char *nm = names[j * g->n_list + k];
            const char *sn = lt_optim_state_name(opt, j);
            int64_t cnt = 0, *shp = shapes[j * g->n_list + k];
            float *buf = lt_optim_state_buf(opt, k, j, &cnt);
            if (!buf) continue;
            snprintf(nm, 160, "optim.%s.%s", sn ? sn : "state", t->name);
            shp[0] = cnt;
            if (lt_optim_state(opt, k, j) == buf) lt_st_add(w, nm, "F32", t->ndim, t->shape, buf);
            else lt_st_add(w, nm, "F32", 1, shp, buf);
        }
    snprintf(num[0], 32, "%d", g->cfg.layers);
    snprintf(num[1], 32, "%d", g->cfg.heads);
    snprintf(num[2], 32, "%d", g->cfg.channels);
    snprintf(num[3], 32, "%d", g->cfg.ctx);
    snprintf(num[4], 32, "%d", g->cfg.vocab);
    lt_st_add_meta(w, "format", "ltrain-gpt2");
    lt_st_add_meta(w, "n_layer", num[0]);
    lt_st_add_meta(w, "n_head", num[1]);
    lt_st_add_meta(w, "n_embd", num[2]);
    lt_st_add_meta(w, "n_ctx", num[3]);
    lt_st_add_meta(w, "vocab_size", num[4]);
    if (note) lt_st_add_meta(w, "note", note);
    if (st && st->run[0]) lt_st_add_meta(w, "run", st->run);
    if (st) {
        /* step, data epoch, data index, then the RNG's 4 words (bit patterns as int64) */
        state[0] = st->step; state[1] = st->data_epoch; state[2] = st->data_index;
        for (k = 0; k < 4; k++) memcpy(&state[3 + k], &ctx->rng.s[k], sizeof(int64_t));
        lt_st_add(w, "train.state", "I64", 1, &seven, state);
        if (opt) lt_st_add_meta(w, "optimizer", lt_optim_name(opt));
    }
    if (st && st->scaler) {   /* the counters are whole numbers below 2^53: exact as doubles */
        lt_scaler_state ss = lt_scaler_get_state(st->scaler);
        amp[0] = ss.scale; amp[1] = ss.growth_factor; amp[2] = ss.backoff_factor;
        amp[3] = (double)ss.growth_interval; amp[4] = (double)ss.growth_tracker; amp[5] = (double)ss.skipped;
        lt_st_add(w, "amp.scaler", "F64", 1, &six, amp);
    }
    s = lt_failed(ctx) ? ctx->status : lt_st_save(w, path);
    lt_st_writer_destroy(w);
    LT__FREE(names);
    LT__FREE(shapes);
    return s;
}

/* A checkpoint's "amp.scaler" (tensor i of f) into the loss scaler sc. */
static lt_status lt__ckpt_read_scaler(lt_ctx *ctx, lt_st *f, int i, lt_scaler *sc, const char *path) {
    int64_t shape[8];
    size_t bytes;
    double a[6];
    lt_scaler_state ss;
    int k;
    const void *data = lt_st_data(f, i, &bytes);
    if (strcmp(lt_st_dtype(f, i), "F64") != 0 || lt_st_shape(f, i, shape) != 1 || shape[0] != 6 || bytes != sizeof a)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"amp.scaler\" must be F64 [6]", path);
    memcpy(a, data, sizeof a);
    for (k = 3; k < 6; k++)   /* counters: whole numbers in [0, 2^53] before any int64 conversion */
        if (!(a[k] >= 0 && a[k] <= 9007199254740992.0 && a[k] == floor(a[k])))
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: amp.scaler holds %g where a count belongs (the file is "
                                "damaged)", path, a[k]);
    ss.scale = a[0]; ss.growth_factor = a[1]; ss.backoff_factor = a[2];
    ss.growth_interval = (int64_t)a[3]; ss.growth_tracker = (int64_t)a[4]; ss.skipped = (int64_t)a[5];
    return lt_scaler_set_state(ctx, sc, &ss);
}

/* A checkpoint's "train.state" (step, data position, the RNG's 4 words) into st and the context's
   RNG, then its "amp.scaler" into st->scaler when both are there. */
static lt_status lt__ckpt_read_train_state(lt_ctx *ctx, lt_st *f, lt_train_state *st, const char *path) {
    int64_t shape[8], v[7];
    size_t bytes;
    const void *data;
    int k, i = lt_st_find(f, "train.state");
    if (i < 0) return lt_set_error(ctx, LT_ERR_FORMAT, "%s: no \"train.state\": this holds weights only (use --init)", path);
    data = lt_st_data(f, i, &bytes);
    if (strcmp(lt_st_dtype(f, i), "I64") != 0 || lt_st_shape(f, i, shape) != 1 || shape[0] != 7 || bytes != sizeof v)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"train.state\" must be I64 [7]", path);
    memcpy(v, data, sizeof v);
    if (v[0] < 0 || v[1] < 0 || v[2] < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: train.state holds step %lld, data epoch %lld, index %lld: none may be "
                            "negative", path, (long long)v[0], (long long)v[1], (long long)v[2]);
    /* hardening: no run takes 2^48 steps or epochs (nor has 2^48 batches in one); a larger number
       is a damaged file, and would overflow the int64 arithmetic done with it (step * K, ...) */
    if (v[0] > ((int64_t)1 << 48) || v[1] > ((int64_t)1 << 48) || v[2] > ((int64_t)1 << 48))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: train.state holds step %lld, data epoch %lld, index %lld: out of "
                            "range (each must be <= 2^48; the file is damaged)", path, (long long)v[0], (long long)v[1],
                            (long long)v[2]);
    if (v[3] == 0 && v[4] == 0 && v[5] == 0 && v[6] == 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: train.state holds an all-zero RNG state (not a valid xoshiro state)", path);
    st->step = v[0]; st->data_epoch = v[1]; st->data_index = v[2];
    snprintf(st->run, sizeof st->run, "%s", lt_st_meta(f, "run") ? lt_st_meta(f, "run") : "");
    for (k = 0; k < 4; k++) memcpy(&ctx->rng.s[k], &v[3 + k], sizeof(int64_t));
    if (st->scaler && (i = lt_st_find(f, "amp.scaler")) >= 0) return lt__ckpt_read_scaler(ctx, f, i, st->scaler, path);
    return LT_OK;
}

/* The optimizer's state buffer of kind j for parameter k from f ("optim.<state name>.<param
   name>"), when the optimizer keeps one. */
static lt_status lt__ckpt_read_optim_buf(lt_gpt *g, lt_optim *opt, lt_st *f, int j, int k, const char *path) {
    lt_ctx *ctx = g->ctx;
    lt_tensor *t = g->list[k];
    char nm[160];
    int64_t shape[8], cnt = 0, have = 1;
    const char *sn = lt_optim_state_name(opt, j);
    float *buf = lt_optim_state_buf(opt, k, j, &cnt);
    int d, nd, i;
    if (!buf) return LT_OK;
    snprintf(nm, sizeof nm, "optim.%s.%s", sn ? sn : "state", t->name);
    i = lt_st_find(f, nm);
    if (i < 0) return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%s\" is missing", path, nm);
    nd = lt_st_shape(f, i, shape);
    /* hardening: a zero dim first, so that huge dims beside it cannot overflow the product
       (without one, the reader has checked the product against the file's size) */
    for (d = 0; d < nd; d++) if (shape[d] == 0) have = 0;
    for (d = 0; d < nd && have; d++) have *= shape[d];
    /* a parameter-shaped buffer must have the parameter's shape (not just its size) */
    if (nd >= 1 && have == cnt && lt_optim_state(opt, k, j) == buf) {
        int same = nd == t->ndim;
        char b1[64];
        for (d = 0; same && d < nd; d++) same = shape[d] == t->shape[d];
        if (!same)
            return lt_set_error(ctx, LT_ERR_SHAPE, "%s: tensor \"%s\" has %d dims / another shape than its "
                                "parameter %s", path, nm, nd, lt_shape_str(t, b1, sizeof b1));
    }
    if (nd < 1 || have != cnt)
        return lt_set_error(ctx, LT_ERR_SHAPE, "%s: tensor \"%s\" holds %lld values but this optimizer keeps %lld "
                            "(another optimizer configuration?)", path, nm, (long long)have, (long long)cnt);
    lt_st_read_f32(f, i, buf, cnt);
    return LT_OK;
}

/* Weights, then the training state when st is given, then the optimizer's state when opt is. */
LTRAIN_DEF lt_status lt_checkpoint_load(lt_gpt *g, lt_optim *opt, lt_train_state *st, const char *path) {
    lt_ctx *ctx;
    lt_st *f;
    int k, j, ns;
    if (!g) return LT_ERR_ARG;
    ctx = g->ctx;
    if (lt_failed(ctx)) return ctx->status;
    lt_sync_params(ctx);         /* LT_CUDA: the host copies are written, then sent to the device */
    lt_params_changed(ctx);
    f = lt_st_open(ctx, path);
    if (!f) return ctx->status;
    if (lt__gpt_read(g, f, path) != LT_OK) goto done;
    if (st && lt__ckpt_read_train_state(ctx, f, st, path) != LT_OK) goto done;
    if (opt) {
        const char *oname = lt_st_meta(f, "optimizer");
        if (oname && strcmp(oname, lt_optim_name(opt)) != 0) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: saved with optimizer %s, resumed with %s", path, oname, lt_optim_name(opt));
            goto done;
        }
        ns = lt_optim_num_states(opt);
        for (j = 0; j < ns && !lt_failed(ctx); j++)
            for (k = 0; k < g->n_list && !lt_failed(ctx); k++)
                if (lt__ckpt_read_optim_buf(g, opt, f, j, k, path) != LT_OK) break;
        if (st) lt_optim_set_steps(opt, st->step);
    }
done:
    lt_st_close(f);
    return ctx->status;
}


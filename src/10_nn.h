/* ==== @@NN  nn blocks: GPT-2 ===================================================================== */
/* Holds: the GPT-2 model: its parameters, initialisation, the trunk's forward, sampling.
   Calls: @@CORE, @@TENSOR, @@OPS (matmul and linear from 07_ops_matmul.h); the device through
   ctx->dev. */
/* One block, pre-LayerNorm (x is the residual stream [B,T,C]):
       x = x + c_proj(attention(c_attn(ln_1(x))))
       x = x + mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x))))
   then logits = ln_f(x) · wteᵀ (the head shares wte's memory, so its gradient adds into wte). */

typedef struct {
    lt_tensor *ln1_w, *ln1_b, *attn_w, *attn_b, *attnproj_w, *attnproj_b;
    lt_tensor *ln2_w, *ln2_b, *fc_w, *fc_b, *fcproj_w, *fcproj_b;
} lt__gpt_block;

struct lt_gpt {
    lt_ctx *ctx;
    lt_gpt_config cfg;
    lt_tensor *wte, *wpe, *lnf_w, *lnf_b;
    lt__gpt_block *blocks;
    lt_tensor **list;        /* every parameter, in Hugging Face order */
    int n_list;
    int32_t *pos;            /* 0, 1, ..., ctx-1: the position ids */
    char (*scopes)[24];      /* "h.3.attn", "h.3.mlp", ...: where ops run (for messages) */
    int recompute;           /* lt_gpt_set_recompute: blocks l with l % recompute == 0 are checkpointed (0: none) */
};

/* ---- @@NN.gpt  the model: parameters, initialisation ----------------------------------------- */
/* A parameter of the model, named as Hugging Face names it (prefix + suffix). */
static lt_tensor *lt__gpt_param(lt_gpt *g, const char *prefix, const char *suffix, int64_t d0, int64_t d1) {
    char name[128];
    int64_t shape[2];
    lt_tensor *t;
    shape[0] = d0; shape[1] = d1;
    snprintf(name, sizeof name, "%s%s", prefix, suffix);
    t = lt_param(g->ctx, name, d1 > 0 ? 2 : 1, shape);
    if (t) g->list[g->n_list++] = t;
    return t;
}

LTRAIN_DEF lt_gpt *lt_gpt_create(lt_ctx *ctx, const lt_gpt_config *cfg) {
    lt_gpt *g;
    int64_t V, C, L;
    int l;
    double std = 0.02, proj_std;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!cfg || cfg->vocab < 1 || cfg->ctx < 1 || cfg->layers < 1 || cfg->heads < 1 || cfg->channels < 1 ||
        cfg->channels % cfg->heads != 0 || !(cfg->dropout >= 0.0f && cfg->dropout < 1.0f)) {
        if (!cfg) lt_set_error(ctx, LT_ERR_ARG, "lt_gpt_create: config is NULL");
        else
            lt_set_error(ctx, LT_ERR_ARG, "lt_gpt_create: vocab %d, ctx %d, layers %d, heads %d, channels %d, "
                         "dropout %g: all must be >= 1, heads must divide channels, dropout in [0,1)",
                         cfg->vocab, cfg->ctx, cfg->layers, cfg->heads, cfg->channels, (double)cfg->dropout);
        return NULL;
    }
    V = cfg->vocab; C = cfg->channels; L = cfg->layers;
    g = (lt_gpt *)LT__MALLOC(sizeof(lt_gpt));
    if (!g) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_create: out of memory"); return NULL; }
    memset(g, 0, sizeof *g);
    g->ctx = ctx;
    g->cfg = *cfg;
    g->blocks = (lt__gpt_block *)LT__MALLOC((size_t)L * sizeof(lt__gpt_block));
    g->list = (lt_tensor **)LT__MALLOC((size_t)(4 + 12 * L) * sizeof(lt_tensor *));
    g->pos = (int32_t *)LT__MALLOC((size_t)cfg->ctx * sizeof(int32_t));
    g->scopes = (char(*)[24])LT__MALLOC((size_t)(2 * L + 2) * 24);
    if (!g->blocks || !g->list || !g->pos || !g->scopes) {
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_create: out of memory");
        lt_gpt_destroy(g);
        return NULL;
    }
    for (l = 0; l < cfg->ctx; l++) g->pos[l] = l;
    snprintf(g->scopes[0], 24, "embeddings");
    snprintf(g->scopes[1], 24, "ln_f+head");
    for (l = 0; l < L; l++) {
        snprintf(g->scopes[2 + 2 * l], 24, "h.%d.attn", l);
        snprintf(g->scopes[3 + 2 * l], 24, "h.%d.mlp", l);
    }
    g->wte = lt__gpt_param(g, "wte", ".weight", V, C);
    g->wpe = lt__gpt_param(g, "wpe", ".weight", cfg->ctx, C);
    for (l = 0; l < L; l++) {
        lt__gpt_block *b = &g->blocks[l];
        char p[32];
        snprintf(p, sizeof p, "h.%d.", l);
        b->ln1_w = lt__gpt_param(g, p, "ln_1.weight", C, 0);
        b->ln1_b = lt__gpt_param(g, p, "ln_1.bias", C, 0);
        b->attn_w = lt__gpt_param(g, p, "attn.c_attn.weight", C, 3 * C);
        b->attn_b = lt__gpt_param(g, p, "attn.c_attn.bias", 3 * C, 0);
        b->attnproj_w = lt__gpt_param(g, p, "attn.c_proj.weight", C, C);
        b->attnproj_b = lt__gpt_param(g, p, "attn.c_proj.bias", C, 0);
        b->ln2_w = lt__gpt_param(g, p, "ln_2.weight", C, 0);
        b->ln2_b = lt__gpt_param(g, p, "ln_2.bias", C, 0);
        b->fc_w = lt__gpt_param(g, p, "mlp.c_fc.weight", C, 4 * C);
        b->fc_b = lt__gpt_param(g, p, "mlp.c_fc.bias", 4 * C, 0);
        b->fcproj_w = lt__gpt_param(g, p, "mlp.c_proj.weight", 4 * C, C);
        b->fcproj_b = lt__gpt_param(g, p, "mlp.c_proj.bias", C, 0);
    }
    g->lnf_w = lt__gpt_param(g, "ln_f", ".weight", C, 0);
    g->lnf_b = lt__gpt_param(g, "ln_f", ".bias", C, 0);
    if (lt_failed(ctx)) { lt_gpt_destroy(g); return NULL; }
    /* GPT-2 initialisation: N(0, 0.02); the two projections that write into the residual stream
       N(0, 0.02/sqrt(2L)) so the stream's variance does not grow with depth; biases 0;
       LayerNorm weight 1, bias 0.  Drawn in parameter order from the context's RNG. */
    proj_std = std / sqrt(2.0 * (double)L);
    lt_init_normal(ctx, g->wte, 0, std);
    lt_init_normal(ctx, g->wpe, 0, std);
    for (l = 0; l < L; l++) {
        lt__gpt_block *b = &g->blocks[l];
        lt_fill(b->ln1_w, 1.0f);
        lt_fill(b->ln2_w, 1.0f);
        lt_init_normal(ctx, b->attn_w, 0, std);
        lt_init_normal(ctx, b->attnproj_w, 0, proj_std);
        lt_init_normal(ctx, b->fc_w, 0, std);
        lt_init_normal(ctx, b->fcproj_w, 0, proj_std);
    }
    lt_fill(g->lnf_w, 1.0f);
    if (lt_params_pack(ctx) != LT_OK) { lt_gpt_destroy(g); return NULL; }
    return g;
}

LTRAIN_DEF void lt_gpt_destroy(lt_gpt *g) {
    if (!g) return;
    LT__FREE(g->blocks);
    LT__FREE(g->list);
    LT__FREE(g->pos);
    LT__FREE(g->scopes);
    LT__FREE(g);
}

LTRAIN_DEF const lt_gpt_config *lt_gpt_cfg(const lt_gpt *g) { return &g->cfg; }

LTRAIN_DEF lt_paramset lt_gpt_params(lt_gpt *g) {
    lt_paramset s;
    s.p = g->list;
    s.n = g->n_list;
    return s;
}

LTRAIN_DEF lt_status lt_gpt_set_recompute(lt_gpt *g, int every) {
    if (!g) return LT_ERR_ARG;
    if (every < 0)
        return lt_set_error(g->ctx, LT_ERR_ARG, "lt_gpt_set_recompute: every is %d: 0 (off), 1 (every block) or "
                            "N (every N-th block)", every);
    g->recompute = every;
    return lt_status_of(g->ctx);
}

LTRAIN_DEF int64_t lt_gpt_num_params(const lt_gpt *g) {
    int64_t n = 0;
    int i;
    for (i = 0; i < g->n_list; i++) n += g->list[i]->n;
    return n;
}

/* ---- @@NN.forward  forward ------------------------------------------------------------------- */
/* The model up to ln_f (B,T,C); the head is the caller's: lt_gpt_forward's lt_linear, or the
   fused head and loss of lt__gpt_loss at 16-bit precision. */
static lt_tensor *lt__gpt_trunk(lt_gpt *g, const int32_t *ids, int B, int T, const int32_t *lengths) {
    lt_ctx *ctx = g ? g->ctx : NULL;
    const lt_gpt_config *c;
    lt_tensor *x, *h;
    float eps = 1e-5f, p;
    int l;
    if (!ctx || lt_failed(ctx)) return NULL;
    c = &g->cfg;
    p = c->dropout;
    if (!ids || B < 1 || T < 1 || T > c->ctx) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_gpt_forward: ids %s, B = %d, T = %d: need ids, B >= 1 and 1 <= T <= %d "
                     "(the model's context length)", ids ? "given" : "NULL", B, T, c->ctx);
        return NULL;
    }
    /* x = wte[ids] + wpe[0..T-1]   (B,T,C) */
    lt_scope(ctx, g->scopes[0]);
    h = lt_embedding(ctx, g->wte, ids, B, T);
    x = lt__add_over(ctx, h, lt_embedding(ctx, g->wpe, g->pos, 1, T), h);   /* (written over wte's rows) */
    if (B == 1) {   /* the embedding of one row is [T,C]: make it [1,T,C] */
        int64_t shape[3];
        shape[0] = 1; shape[1] = T; shape[2] = c->channels;
        x = lt_reshape(ctx, x, 3, shape);
    }
    x = lt_dropout(ctx, x, p);
    for (l = 0; l < c->layers; l++) {
        const lt__gpt_block *b = &g->blocks[l];
        int ckpt = g->recompute > 0 && l % g->recompute == 0;
        if (ckpt) lt_recompute_begin(ctx);
        lt_scope(ctx, g->scopes[2 + 2 * l]);
        h = lt_layernorm(ctx, x, b->ln1_w, b->ln1_b, eps);
        h = lt_conv1d(ctx, h, b->attn_w, b->attn_b);                 /* (B,T,3C) = q | k | v */
        h = lt_attention(ctx, h, c->heads, lengths);                 /* (B,T,C) */
        h = lt_dropout(ctx, lt_conv1d(ctx, h, b->attnproj_w, b->attnproj_b), p);
        x = lt__add_over(ctx, x, h, h);                              /* x + h, over h */
        lt_scope(ctx, g->scopes[3 + 2 * l]);
        h = lt_layernorm(ctx, x, b->ln2_w, b->ln2_b, eps);
        h = lt_gelu(ctx, lt_conv1d(ctx, h, b->fc_w, b->fc_b));       /* (B,T,4C) */
        h = lt_dropout(ctx, lt_conv1d(ctx, h, b->fcproj_w, b->fcproj_b), p);
        x = lt__add_over(ctx, x, h, h);
        if (ckpt) x = lt_recompute_end(ctx, x);
    }
    lt_scope(ctx, g->scopes[1]);
    x = lt_layernorm(ctx, x, g->lnf_w, g->lnf_b, eps);
    return x;
}

LTRAIN_DEF lt_tensor *lt_gpt_forward(lt_gpt *g, const int32_t *ids, int B, int T, const int32_t *lengths) {
    lt_tensor *x = lt__gpt_trunk(g, ids, B, T, lengths);
    if (!x) return NULL;
    x = lt_linear(g->ctx, x, g->wte, NULL);                          /* (B,T,V) = x·wteᵀ */
    lt_scope(g->ctx, NULL);
    return x;
}

/* ---- @@NN.generate  sampling ----------------------------------------------------------------- */
/* The k-th largest of a[0..n-1] (k >= 1), by quickselect; a is reordered. */
static double lt__kth_largest(double *a, int n, int k) {
    int lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        double pivot = a[(lo + hi) / 2], t;
        int i = lo, j = hi;
        while (i <= j) {                       /* descending: big values to the left */
            while (a[i] > pivot) i++;
            while (a[j] < pivot) j--;
            if (i <= j) { t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else break;
    }
    return a[want];
}

/* Draw one token from logits (V): greedy at temperature 0, else softmax(logits/temperature)
   restricted to the top_k largest (0 = all). */
static int32_t lt__sample(const float *logits, int V, float temperature, int top_k, lt_rng *rng, double *prob) {
    double sum = 0, u;
    float thresh = -INFINITY, m;
    int j, best = 0;
    for (j = 0; j < V; j++) if (logits[j] > logits[best]) best = j;
    if (!(temperature > 0)) return best;
    m = logits[best];
    if (top_k > 0 && top_k < V) {
        for (j = 0; j < V; j++) prob[j] = logits[j];
        thresh = (float)lt__kth_largest(prob, V, top_k);
    }
    for (j = 0; j < V; j++) {
        prob[j] = logits[j] >= thresh ? exp((double)(logits[j] - m) / temperature) : 0.0;
        sum += prob[j];
    }
    u = lt_rng_uniform(rng) * sum;
    for (j = 0; j < V; j++) {
        u -= prob[j];
        if (u < 0 && prob[j] > 0) return j;
    }
    return best;
}

LTRAIN_DEF int lt_gpt_generate(lt_gpt *g, const int32_t *prompt, int n_prompt, int n, float temperature, int top_k,
                               lt_rng *rng, int32_t *out) {
    lt_ctx *ctx = g ? g->ctx : NULL;
    int len, k, ge, tr;
    double *prob;
    if (!ctx || lt_failed(ctx)) return 0;
    if (!prompt || n_prompt < 1 || n < 0 || !out || !rng) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_gpt_generate: need a prompt of >= 1 tokens, n >= 0, out and rng");
        return 0;
    }
    prob = (double *)LT__MALLOC((size_t)g->cfg.vocab * sizeof(double));
    if (!prob) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_generate: out of memory"); return 0; }
    memcpy(out, prompt, (size_t)n_prompt * sizeof(int32_t));
    len = n_prompt;
    ge = ctx->grad_enabled; tr = ctx->training;
    ctx->grad_enabled = 0; ctx->training = 0;
    for (k = 0; k < n; k++) {
        int T = len < g->cfg.ctx ? len : g->cfg.ctx;
        lt_tensor *logits;
        lt_reset(ctx);
        logits = lt_gpt_forward(g, out + len - T, 1, T, NULL);
        if (!logits) break;
        {
            const float *row = logits->data + (int64_t)(T - 1) * g->cfg.vocab;
            if (logits->device != LT_CPU && !(row = ctx->dev->host_row(ctx, row, (size_t)g->cfg.vocab))) break;
            out[len] = lt__sample(row, g->cfg.vocab, temperature, top_k, rng, prob);
        }
        len++;
    }
    ctx->grad_enabled = ge; ctx->training = tr;
    lt_reset(ctx);
    LT__FREE(prob);
    return len;
}


/* ==== @@NN  nn blocks: GPT-2, Llama ============================================================== */
/* Holds: the GPT-2 and Llama-style models: their parameters, initialisation, the trunk's forward,
   sampling.
   Calls: @@CORE, @@TENSOR, @@OPS (matmul and linear from 07_ops_matmul.h); the device through
   ctx->dev. */
/* One block, pre-LayerNorm (x is the residual stream [B,T,C]):
       x = x + c_proj(attention(c_attn(ln_1(x))))
       x = x + mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x))))
   then logits = ln_f(x) · wteᵀ (the head shares wte's memory, so its gradient adds into wte).
   A Llama block (x as above; no position table: RoPE rotates q and k by their position):
       h = rmsnorm(x);  x = x + o_proj(attention_gqa(rope(q_proj(h)), rope(k_proj(h)), v_proj(h)))
       h = rmsnorm(x);  x = x + down_proj(silu(gate_proj(h)) * up_proj(h))
   then logits = norm(x) · headᵀ, head = embed_tokens (tied) or lm_head. */

typedef struct {
    lt_tensor *ln1_w, *ln1_b, *attn_w, *attn_b, *attnproj_w, *attnproj_b;
    lt_tensor *ln2_w, *ln2_b, *fc_w, *fc_b, *fcproj_w, *fcproj_b;
} lt__gpt_block;

typedef struct {
    lt_tensor *q_w, *q_b, *k_w, *k_b, *v_w, *v_b, *o_w, *o_b, *q_norm, *k_norm;
    lt_tensor *gate_w, *gate_b, *up_w, *up_b, *down_w, *down_b, *in_norm, *post_norm;
} lt__llama_layer;

struct lt_gpt {
    lt_ctx *ctx;
    lt_gpt_config cfg;
    lt_tensor *wte, *wpe, *lnf_w, *lnf_b;   /* Llama: wte = embed_tokens, lnf_w = norm, no wpe, lnf_b */
    lt_tensor *head;         /* the LM head's [V,C] weight: wte, or Llama's untied lm_head */
    lt__gpt_block *blocks;
    lt__llama_layer *lblocks;
    lt_tensor **list;        /* every parameter, in Hugging Face order */
    int n_list;
    int32_t *pos;            /* 0, 1, ..., ctx-1: the position ids */
    char (*scopes)[24];      /* "h.3.attn", "h.3.mlp", ...: where ops run (for messages) */
    int recompute;           /* lt_gpt_set_recompute: blocks l with l % recompute == 0 are checkpointed (0: none) */
    int fused_head;          /* lt_gpt_set_fused_head: the float32 loss through lt_linear_cross_entropy */
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

/* The config with its defaults filled in, checked; 0 and an error on the context if it is not valid. */
static int lt__gpt_config_resolve(lt_ctx *ctx, const lt_gpt_config *in, lt_gpt_config *c) {
    const char *who = "lt_gpt_create";
    if (!in) { lt_set_error(ctx, LT_ERR_ARG, "%s: config is NULL", who); return 0; }
    *c = *in;
    if (c->vocab < 1 || c->ctx < 1 || c->layers < 1 || c->heads < 1 || c->channels < 1 ||
        c->channels % c->heads != 0 || !(c->dropout >= 0.0f && c->dropout < 1.0f)) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: vocab %d, ctx %d, layers %d, heads %d, channels %d, "
                     "dropout %g: all must be >= 1, heads must divide channels, dropout in [0,1)",
                     who, c->vocab, c->ctx, c->layers, c->heads, c->channels, (double)c->dropout);
        return 0;
    }
    if (c->arch != LT_ARCH_GPT2 && c->arch != LT_ARCH_LLAMA) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: arch is %d: it must be LT_ARCH_GPT2 (0) or LT_ARCH_LLAMA (1)", who, c->arch);
        return 0;
    }
    if (c->kv_heads == 0) c->kv_heads = c->heads;
    if (c->hidden == 0)
        c->hidden = c->arch == LT_ARCH_GPT2 ? 4 * c->channels : (int)(((int64_t)8 * c->channels / 3 + 31) / 32 * 32);
    if (c->rope_theta == 0.0f && c->arch == LT_ARCH_LLAMA) c->rope_theta = 10000.0f;
    if (c->norm_eps == 0.0f) c->norm_eps = 1e-5f;
    if (c->no_bias == 0 && c->arch == LT_ARCH_LLAMA) c->no_bias = 1;
    if (c->kv_heads < 1 || c->heads % c->kv_heads != 0 || c->hidden < 1 || !(c->rope_theta >= 0.0f) ||
        !(c->norm_eps > 0.0f) || c->no_bias < -1 || c->no_bias > 1 || (unsigned)c->qk_norm > 1 || (unsigned)c->untied > 1) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: kv_heads %d, hidden %d, rope_theta %g, norm_eps %g, no_bias %d, qk_norm %d, "
                     "untied %d: kv_heads must divide heads (%d), hidden >= 1, rope_theta >= 0, norm_eps > 0, no_bias "
                     "-1, 0 or 1, qk_norm and untied 0 or 1", who, c->kv_heads, c->hidden, (double)c->rope_theta,
                     (double)c->norm_eps, c->no_bias, c->qk_norm, c->untied, c->heads);
        return 0;
    }
    if (c->arch == LT_ARCH_GPT2 && (c->kv_heads != c->heads || c->qk_norm || c->untied || c->no_bias == 1 ||
                                    c->rope_theta != 0.0f)) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: arch gpt2 with kv_heads %d (heads %d), qk_norm %d, untied %d, no_bias %d, "
                     "rope_theta %g: GPT-2 has full attention, a tied head, biases and learned positions "
                     "(hint: arch LT_ARCH_LLAMA has these knobs)", who, c->kv_heads, c->heads, c->qk_norm, c->untied,
                     c->no_bias, (double)c->rope_theta);
        return 0;
    }
    return 1;
}

/* GPT-2's parameters, in Hugging Face order, and its initialisation. */
static void lt__gpt2_params(lt_gpt *g) {
    const lt_gpt_config *cfg = &g->cfg;
    int64_t V = cfg->vocab, C = cfg->channels, L = cfg->layers, F = cfg->hidden;
    double std = 0.02, proj_std;
    int l;
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
        b->fc_w = lt__gpt_param(g, p, "mlp.c_fc.weight", C, F);
        b->fc_b = lt__gpt_param(g, p, "mlp.c_fc.bias", F, 0);
        b->fcproj_w = lt__gpt_param(g, p, "mlp.c_proj.weight", F, C);
        b->fcproj_b = lt__gpt_param(g, p, "mlp.c_proj.bias", C, 0);
    }
    g->lnf_w = lt__gpt_param(g, "ln_f", ".weight", C, 0);
    g->lnf_b = lt__gpt_param(g, "ln_f", ".bias", C, 0);
    g->head = g->wte;
    if (lt_failed(g->ctx)) return;
    /* GPT-2 initialisation: N(0, 0.02); the two projections that write into the residual stream
       N(0, 0.02/sqrt(2L)) so the stream's variance does not grow with depth; biases 0;
       LayerNorm weight 1, bias 0.  Drawn in parameter order from the context's RNG. */
    proj_std = std / sqrt(2.0 * (double)L);
    lt_init_normal(g->ctx, g->wte, 0, std);
    lt_init_normal(g->ctx, g->wpe, 0, std);
    for (l = 0; l < L; l++) {
        lt__gpt_block *b = &g->blocks[l];
        lt_fill(b->ln1_w, 1.0f);
        lt_fill(b->ln2_w, 1.0f);
        lt_init_normal(g->ctx, b->attn_w, 0, std);
        lt_init_normal(g->ctx, b->attnproj_w, 0, proj_std);
        lt_init_normal(g->ctx, b->fc_w, 0, std);
        lt_init_normal(g->ctx, b->fcproj_w, 0, proj_std);
    }
    lt_fill(g->lnf_w, 1.0f);
}

/* A Llama linear: weight [out,in] named <p><name>.weight, and .bias [out] when biases are on. */
static void lt__llama_linear(lt_gpt *g, const char *p, const char *name, int64_t out, int64_t in, lt_tensor **w,
                             lt_tensor **b) {
    char sfx[48];
    snprintf(sfx, sizeof sfx, "%s.weight", name);
    *w = lt__gpt_param(g, p, sfx, out, in);
    if (g->cfg.no_bias != -1) return;
    snprintf(sfx, sizeof sfx, "%s.bias", name);
    *b = lt__gpt_param(g, p, sfx, out, 0);
}

/* The Llama model's parameters, in Hugging Face order (LlamaForCausalLM, Qwen3 for q_norm and
   k_norm), and its initialisation as HF's _init_weights: linears and embeddings N(0, 0.02),
   biases 0, RMSNorm weights 1. */
static void lt__llama_params(lt_gpt *g) {
    const lt_gpt_config *cfg = &g->cfg;
    int64_t V = cfg->vocab, C = cfg->channels, D = cfg->channels / cfg->heads, F = cfg->hidden;
    int64_t Q = D * cfg->heads, KV = D * cfg->kv_heads;
    int l, k;
    g->wte = lt__gpt_param(g, "model.embed_tokens", ".weight", V, C);
    for (l = 0; l < cfg->layers; l++) {
        lt__llama_layer *b = &g->lblocks[l];
        char p[48];
        snprintf(p, sizeof p, "model.layers.%d.", l);
        lt__llama_linear(g, p, "self_attn.q_proj", Q, C, &b->q_w, &b->q_b);
        lt__llama_linear(g, p, "self_attn.k_proj", KV, C, &b->k_w, &b->k_b);
        lt__llama_linear(g, p, "self_attn.v_proj", KV, C, &b->v_w, &b->v_b);
        lt__llama_linear(g, p, "self_attn.o_proj", C, Q, &b->o_w, &b->o_b);
        if (cfg->qk_norm) {
            b->q_norm = lt__gpt_param(g, p, "self_attn.q_norm.weight", D, 0);
            b->k_norm = lt__gpt_param(g, p, "self_attn.k_norm.weight", D, 0);
        }
        lt__llama_linear(g, p, "mlp.gate_proj", F, C, &b->gate_w, &b->gate_b);
        lt__llama_linear(g, p, "mlp.up_proj", F, C, &b->up_w, &b->up_b);
        lt__llama_linear(g, p, "mlp.down_proj", C, F, &b->down_w, &b->down_b);
        b->in_norm = lt__gpt_param(g, p, "input_layernorm.weight", C, 0);
        b->post_norm = lt__gpt_param(g, p, "post_attention_layernorm.weight", C, 0);
    }
    g->lnf_w = lt__gpt_param(g, "model.norm", ".weight", C, 0);
    g->head = cfg->untied ? lt__gpt_param(g, "lm_head", ".weight", V, C) : g->wte;
    if (lt_failed(g->ctx)) return;
    for (k = 0; k < g->n_list; k++) {   /* in parameter order: 2-D weights drawn, RMSNorm 1, biases 0 */
        lt_tensor *t = g->list[k];
        if (t->ndim == 2) lt_init_normal(g->ctx, t, 0, 0.02);
        else if (strstr(t->name, "norm")) lt_fill(t, 1.0f);
    }
}

LTRAIN_DEF lt_gpt *lt_gpt_create(lt_ctx *ctx, const lt_gpt_config *cfg) {
    lt_gpt *g;
    lt_gpt_config c;
    int64_t L;
    int l, llama;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!lt__gpt_config_resolve(ctx, cfg, &c)) return NULL;
    L = c.layers;
    llama = c.arch == LT_ARCH_LLAMA;
    g = (lt_gpt *)LT__MALLOC(sizeof(lt_gpt));
    if (!g) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_create: out of memory"); return NULL; }
    memset(g, 0, sizeof *g);
    g->ctx = ctx;
    g->cfg = c;
    if (llama) g->lblocks = (lt__llama_layer *)LT__MALLOC((size_t)L * sizeof(lt__llama_layer));
    else g->blocks = (lt__gpt_block *)LT__MALLOC((size_t)L * sizeof(lt__gpt_block));
    g->list = (lt_tensor **)LT__MALLOC((size_t)(4 + 20 * L) * sizeof(lt_tensor *));
    g->pos = (int32_t *)LT__MALLOC((size_t)(llama ? 1 : c.ctx) * sizeof(int32_t));   /* Llama: no wpe to index */
    g->scopes = (char(*)[24])LT__MALLOC((size_t)(2 * L + 2) * 24);
    if (!(llama ? (void *)g->lblocks : (void *)g->blocks) || !g->list || !g->pos || !g->scopes) {
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_create: out of memory");
        lt_gpt_destroy(g);
        return NULL;
    }
    if (llama) memset(g->lblocks, 0, (size_t)L * sizeof(lt__llama_layer));
    for (l = 0; l < (llama ? 1 : c.ctx); l++) g->pos[l] = l;
    snprintf(g->scopes[0], 24, "embeddings");
    snprintf(g->scopes[1], 24, llama ? "norm+head" : "ln_f+head");
    for (l = 0; l < L; l++) {
        snprintf(g->scopes[2 + 2 * l], 24, llama ? "layers.%d.attn" : "h.%d.attn", l);
        snprintf(g->scopes[3 + 2 * l], 24, llama ? "layers.%d.mlp" : "h.%d.mlp", l);
    }
    if (llama) lt__llama_params(g);
    else lt__gpt2_params(g);
    if (lt_failed(ctx) || lt_params_pack(ctx) != LT_OK) { lt_gpt_destroy(g); return NULL; }
    return g;
}

LTRAIN_DEF lt_gpt_config lt_gpt2_config(int vocab, int ctx, int layers, int heads, int channels) {
    lt_gpt_config c;
    memset(&c, 0, sizeof c);
    c.vocab = vocab; c.ctx = ctx; c.layers = layers; c.heads = heads; c.channels = channels;
    return c;
}

LTRAIN_DEF lt_gpt_config lt_llama_config(int vocab, int ctx, int layers, int heads, int kv_heads, int channels, int hidden) {
    lt_gpt_config c = lt_gpt2_config(vocab, ctx, layers, heads, channels);
    c.arch = LT_ARCH_LLAMA; c.kv_heads = kv_heads; c.hidden = hidden;
    return c;
}

LTRAIN_DEF void lt_gpt_destroy(lt_gpt *g) {
    if (!g) return;
    LT__FREE(g->blocks);
    LT__FREE(g->lblocks);
    LT__FREE(g->list);
    LT__FREE(g->pos);
    LT__FREE(g->scopes);
    LT__FREE(g);
}

LTRAIN_DEF const lt_gpt_config *lt_gpt_cfg(const lt_gpt *g) { return g ? &g->cfg : NULL; }

LTRAIN_DEF lt_paramset lt_gpt_params(lt_gpt *g) {
    lt_paramset s;
    s.p = g ? g->list : NULL;
    s.n = g ? g->n_list : 0;
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
LTRAIN_DEF lt_status lt_gpt_set_fused_head(lt_gpt *g, int on) {
    if (!g) return LT_ERR_ARG;
    if (on != 0 && on != 1)
        return lt_set_error(g->ctx, LT_ERR_ARG, "lt_gpt_set_fused_head: on is %d: 0 (the logits kept) "
                            "or 1 (lt_linear_cross_entropy)", on);
    g->fused_head = on;
    return lt_status_of(g->ctx);
}

LTRAIN_DEF int64_t lt_gpt_num_params(const lt_gpt *g) {
    int64_t n = 0;
    int i;
    if (!g) return 0;
    for (i = 0; i < g->n_list; i++) n += g->list[i]->n;
    return n;
}

/* ---- @@NN.forward  forward ------------------------------------------------------------------- */
/* GPT-2 block l on the residual stream x (B,T,C); returns the new stream. */
static lt_tensor *lt__gpt2_block(lt_gpt *g, int l, lt_tensor *x, const int32_t *lengths) {
    lt_ctx *ctx = g->ctx;
    const lt__gpt_block *b = &g->blocks[l];
    float eps = g->cfg.norm_eps, p = g->cfg.dropout;
    lt_tensor *h;
    lt_scope(ctx, g->scopes[2 + 2 * l]);
    h = lt_layernorm(ctx, x, b->ln1_w, b->ln1_b, eps);
    h = lt_conv1d(ctx, h, b->attn_w, b->attn_b);                 /* (B,T,3C) = q | k | v */
    h = lt_attention(ctx, h, g->cfg.heads, lengths);             /* (B,T,C) */
    h = lt_dropout(ctx, lt_conv1d(ctx, h, b->attnproj_w, b->attnproj_b), p);
    x = lt__add_over(ctx, x, h, h);                              /* x + h, over h */
    lt_scope(ctx, g->scopes[3 + 2 * l]);
    h = lt_layernorm(ctx, x, b->ln2_w, b->ln2_b, eps);
    h = lt_gelu(ctx, lt_conv1d(ctx, h, b->fc_w, b->fc_b));       /* (B,T,4C) */
    h = lt_dropout(ctx, lt_conv1d(ctx, h, b->fcproj_w, b->fcproj_b), p);
    return lt__add_over(ctx, x, h, h);
}

/* RMSNorm of each head's D values of t (B,T,n*D), weight w [D] (Qwen3's q_norm, k_norm). */
static lt_tensor *lt__head_rmsnorm(lt_ctx *ctx, lt_tensor *t, int n, lt_tensor *w, float eps) {
    int64_t s4[4], s3[3];
    if (!t) return NULL;
    s3[0] = t->shape[0]; s3[1] = t->shape[1]; s3[2] = t->shape[2];
    s4[0] = s3[0]; s4[1] = s3[1]; s4[2] = n; s4[3] = s3[2] / n;
    return lt_reshape(ctx, lt_rmsnorm(ctx, lt_reshape(ctx, t, 4, s4), w, eps), 3, s3);
}

/* Llama block l on the residual stream x (B,T,C); returns the new stream. */
static lt_tensor *lt__llama_block(lt_gpt *g, int l, lt_tensor *x, const int32_t *lengths) {
    lt_ctx *ctx = g->ctx;
    const lt__llama_layer *b = &g->lblocks[l];
    const lt_gpt_config *c = &g->cfg;
    float eps = c->norm_eps, p = c->dropout;
    lt_tensor *h, *q, *k, *v;
    lt_scope(ctx, g->scopes[2 + 2 * l]);
    h = lt_rmsnorm(ctx, x, b->in_norm, eps);
    q = lt_linear(ctx, h, b->q_w, b->q_b);                       /* (B,T,H*D) */
    k = lt_linear(ctx, h, b->k_w, b->k_b);                       /* (B,T,Hkv*D) */
    v = lt_linear(ctx, h, b->v_w, b->v_b);
    if (c->qk_norm) {
        q = lt__head_rmsnorm(ctx, q, c->heads, b->q_norm, eps);
        k = lt__head_rmsnorm(ctx, k, c->kv_heads, b->k_norm, eps);
    }
    q = lt_rope(ctx, q, c->heads, c->rope_theta, 0);
    k = lt_rope(ctx, k, c->kv_heads, c->rope_theta, 0);
    h = lt_attention_gqa(ctx, q, k, v, c->heads, c->kv_heads, lengths);   /* (B,T,H*D) */
    h = lt_dropout(ctx, lt_linear(ctx, h, b->o_w, b->o_b), p);
    x = lt__add_over(ctx, x, h, h);
    lt_scope(ctx, g->scopes[3 + 2 * l]);
    h = lt_rmsnorm(ctx, x, b->post_norm, eps);
    h = lt_swiglu(ctx, lt_linear(ctx, h, b->gate_w, b->gate_b), lt_linear(ctx, h, b->up_w, b->up_b));
    h = lt_dropout(ctx, lt_linear(ctx, h, b->down_w, b->down_b), p);
    return lt__add_over(ctx, x, h, h);
}

/* The model up to ln_f / norm (B,T,C); the head is the caller's: lt_gpt_forward's lt_linear, or
   the fused head and loss of lt__gpt_loss (@@LOSS.gpt). */
static lt_tensor *lt__gpt_trunk(lt_gpt *g, const int32_t *ids, int B, int T, const int32_t *lengths) {
    lt_ctx *ctx = g ? g->ctx : NULL;
    const lt_gpt_config *c;
    lt_tensor *x, *h;
    int l, llama;
    if (!ctx || lt_failed(ctx)) return NULL;
    c = &g->cfg;
    llama = c->arch == LT_ARCH_LLAMA;
    if (!ids || B < 1 || T < 1 || T > c->ctx) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_gpt_forward: ids %s, B = %d, T = %d: need ids, B >= 1 and 1 <= T <= %d "
                     "(the model's context length)", ids ? "given" : "NULL", B, T, c->ctx);
        return NULL;
    }
    /* x = wte[ids] + wpe[0..T-1]   (B,T,C); Llama: x = embed_tokens[ids] */
    lt_scope(ctx, g->scopes[0]);
    h = lt_embedding(ctx, g->wte, ids, B, T);
    x = llama ? h : lt__add_over(ctx, h, lt_embedding(ctx, g->wpe, g->pos, 1, T), h);   /* (written over wte's rows) */
    if (B == 1) {   /* the embedding of one row is [T,C]: make it [1,T,C] */
        int64_t shape[3];
        shape[0] = 1; shape[1] = T; shape[2] = c->channels;
        x = lt_reshape(ctx, x, 3, shape);
    }
    x = lt_dropout(ctx, x, c->dropout);
    for (l = 0; l < c->layers; l++) {
        int ckpt = g->recompute > 0 && l % g->recompute == 0;   /* this block's values recomputed in backward */
        if (ckpt) lt_recompute_begin(ctx);
        x = llama ? lt__llama_block(g, l, x, lengths) : lt__gpt2_block(g, l, x, lengths);
        if (ckpt) x = lt_recompute_end(ctx, x);
    }
    lt_scope(ctx, g->scopes[1]);
    x = llama ? lt_rmsnorm(ctx, x, g->lnf_w, c->norm_eps) : lt_layernorm(ctx, x, g->lnf_w, g->lnf_b, c->norm_eps);
    return x;
}

LTRAIN_DEF lt_tensor *lt_gpt_forward(lt_gpt *g, const int32_t *ids, int B, int T, const int32_t *lengths) {
    lt_tensor *x = lt__gpt_trunk(g, ids, B, T, lengths);
    if (!x) return NULL;
    x = lt_linear(g->ctx, x, g->head, NULL);                         /* (B,T,V) = x·headᵀ */
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


/* ==== @@TRAIN  training helpers: GPT checkpoints, training state ================================ */
/* Holds: GPT checkpoints under Hugging Face names; the training state (optimizer moments,
   scaler, step) saved next to the weights and loaded back.
   Calls: @@CORE, @@TENSOR, @@NN, @@OPTIM, @@AMP, @@CKPT; the device through ctx->dev. */

/* ---- @@TRAIN.hf  Hugging Face model directories: config.json, Llama checkpoints ---------------- */
/* A path names a safetensors file or a directory holding model.safetensors (save_pretrained's);
   the config.json read and written is the one in that directory / beside the file.  Our files
   carry the same JSON in their metadata ("ltrain_config"), which wins over a config.json beside
   them (several checkpoints may share a directory). */
#include <sys/stat.h>
#if defined(_WIN32) && !defined(S_ISDIR)
#define S_ISDIR(m) (((m) & S_IFMT) == S_IFDIR)
#endif
#if defined(_WIN32)
#include <direct.h>
#define LT__MKDIR(p) _mkdir(p)
#else
#define LT__MKDIR(p) mkdir(p, 0777)
#endif
#define LT__PATH_MAX 4200
static int lt__is_dir(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}
/* stp = the safetensors file of path, cfgp = its config.json; 0 if path is too long. */
static int lt__hf_paths(const char *path, char *stp, char *cfgp) {
    const char *slash = strrchr(path, '/');
    size_t n = strlen(path);
    if (n + 24 >= LT__PATH_MAX) return 0;
    if ((n > 0 && path[n - 1] == '/') || lt__is_dir(path)) {
        int sep = n > 0 && path[n - 1] != '/';
        snprintf(stp, LT__PATH_MAX, "%s%smodel.safetensors", path, sep ? "/" : "");
        snprintf(cfgp, LT__PATH_MAX, "%s%sconfig.json", path, sep ? "/" : "");
    } else {
        snprintf(stp, LT__PATH_MAX, "%s", path);
        snprintf(cfgp, LT__PATH_MAX, "%.*sconfig.json", slash ? (int)(slash - path + 1) : 0, path);
    }
    return 1;
}
static int lt__file_exists(const char *p) {
    FILE *f = fopen(p, "rb");
    if (f) fclose(f);
    return f != NULL && !lt__is_dir(p);
}

/* The model's settings as JSON from st's "ltrain_config" metadata, else from cfgp when it exists.
   1: read into hc (src names where from), 0: neither is there, -1: an error on ctx. */
static int lt__hf_load_config(lt_ctx *ctx, lt_st *st, const char *stp, const char *cfgp, lt__hfcfg *hc, char *src) {
    const char *meta = lt_st_meta(st, "ltrain_config");
    void *buf = NULL;
    size_t size = 0;
    int ok;
    memset(hc, 0, sizeof *hc);
    if (meta) {
        snprintf(src, LT__PATH_MAX, "%.4000s (metadata ltrain_config)", stp);
        ok = lt__hf_parse(hc, meta, strlen(meta));
    } else {
        if (!lt__file_exists(cfgp)) return 0;
        if (lt_read_file(ctx, cfgp, &buf, &size) != LT_OK) return -1;
        memcpy(src, cfgp, strlen(cfgp) + 1);   /* < LT__PATH_MAX (lt__hf_paths) */
        ok = lt__hf_parse(hc, (const char *)buf, size);
        LT__FREE(buf);
    }
    if (!ok) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: not valid JSON: %s", src, hc->err);
        lt__hf_free(hc);
        return -1;
    }
    return 1;
}

/* Setting key of hc as a whole number (*v kept when absent): 1 found, 0 absent, -1 error on ctx. */
static int lt__hf_int(lt_ctx *ctx, const lt__hfcfg *hc, const char *src, const char *key, int *v) {
    const lt__hfitem *x = hc ? lt__hf_find(hc, key) : NULL;
    char *end;
    long n;
    if (!x || x->kind == 'z') return 0;
    n = x->kind == 'n' ? strtol(x->val, &end, 10) : 0;
    if (x->kind != 'n' || *end || n < 0 || n > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %s is %s: it must be a whole number", src, key, x->kind == 's' ? "a string" : x->val);
        return -1;
    }
    *v = (int)n;
    return 1;
}
static int lt__hf_real(lt_ctx *ctx, const lt__hfcfg *hc, const char *src, const char *key, float *v) {
    const lt__hfitem *x = hc ? lt__hf_find(hc, key) : NULL;
    char *end;
    double d;
    if (!x || x->kind == 'z') return 0;
    d = x->kind == 'n' ? strtod(x->val, &end) : -1;
    if (x->kind != 'n' || *end || !(d >= 0 && d < 1e30)) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %s is %s: it must be a number >= 0", src, key, x->kind == 's' ? "a string" : x->val);
        return -1;
    }
    *v = (float)d;
    return 1;
}
static int lt__hf_bool(lt_ctx *ctx, const lt__hfcfg *hc, const char *src, const char *key, int *v) {
    const lt__hfitem *x = hc ? lt__hf_find(hc, key) : NULL;
    if (!x || x->kind == 'z') return 0;
    if (x->kind != 'b') {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %s is %s: it must be true or false", src, key, x->val);
        return -1;
    }
    *v = x->val[0] == 't';
    return 1;
}
/* A setting that the tensors also tell: both must agree (absent: fine). */
static int lt__hf_agree(lt_ctx *ctx, const lt__hfcfg *hc, const char *src, const char *key, int have, const char *path) {
    int v = have, r = lt__hf_int(ctx, hc, src, key, &v);
    if (r < 0) return 0;
    if (v != have) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %s is %d but the tensors of %s say %d", src, key, v, path, have);
        return 0;
    }
    return 1;
}

/* A float for JSON: shortest %g that reads back the same float, with '.' whatever the locale. */
static void lt__json_float(char *b, size_t cap, float v) {
    int prec;
    char *p;
    for (prec = 6; prec < 10; prec++) {
        snprintf(b, cap, "%.*g", prec, (double)v);
        for (p = b; *p; p++) if (*p == ',') *p = '.';
        if ((float)strtod(b, NULL) == v) break;
    }
    if (!strpbrk(b, ".eEn")) { size_t n = strlen(b); if (n + 3 < cap) memcpy(b + n, ".0", 3); }
}

/* config.json of c (the model's resolved config) into b: GPT2LMHeadModel, LlamaForCausalLM, or
   Qwen3ForCausalLM when qk_norm is on (Llama has no q_norm / k_norm). */
static void lt__gpt_config_json(const lt_gpt_config *c, char *b, size_t cap) {
    char eps[32], th[32], dr[32];
    lt__json_float(eps, sizeof eps, c->norm_eps);
    lt__json_float(th, sizeof th, c->rope_theta);
    lt__json_float(dr, sizeof dr, c->dropout);
    if (c->arch == LT_ARCH_GPT2) {
        snprintf(b, cap, "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n"
                 "  \"vocab_size\": %d,\n  \"n_positions\": %d,\n  \"n_ctx\": %d,\n  \"n_embd\": %d,\n  \"n_layer\": %d,\n"
                 "  \"n_head\": %d,\n  \"n_inner\": %d,\n  \"activation_function\": \"gelu_new\",\n"
                 "  \"layer_norm_epsilon\": %s,\n  \"embd_pdrop\": %s,\n  \"resid_pdrop\": %s,\n  \"attn_pdrop\": 0.0,\n"
                 "  \"initializer_range\": 0.02,\n  \"tie_word_embeddings\": true,\n  \"torch_dtype\": \"float32\"\n}\n",
                 c->vocab, c->ctx, c->ctx, c->channels, c->layers, c->heads, c->hidden, eps, dr, dr);
        return;
    }
    snprintf(b, cap, "{\n  \"architectures\": [\"%s\"],\n  \"model_type\": \"%s\",\n"
             "  \"vocab_size\": %d,\n  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n  \"num_hidden_layers\": %d,\n"
             "  \"num_attention_heads\": %d,\n  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n"
             "  \"hidden_act\": \"silu\",\n  \"max_position_embeddings\": %d,\n  \"rms_norm_eps\": %s,\n"
             "  \"rope_theta\": %s,\n  \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": %s},\n"
             "  \"tie_word_embeddings\": %s,\n  \"attention_bias\": %s,\n  \"mlp_bias\": %s,\n"
             "  \"attention_dropout\": 0.0,\n  \"initializer_range\": 0.02,\n  \"use_sliding_window\": false,\n"
             "  \"torch_dtype\": \"float32\"\n}\n",
             c->qk_norm ? "Qwen3ForCausalLM" : "LlamaForCausalLM", c->qk_norm ? "qwen3" : "llama", c->vocab, c->channels,
             c->hidden, c->layers, c->heads, c->kv_heads, c->channels / c->heads, c->ctx, eps, th, th,
             c->untied ? "false" : "true", c->no_bias == -1 ? "true" : "false", c->no_bias == -1 ? "true" : "false");
}

/* A Llama tensor's shape [d0] or [d0,d1] from st (-1 entries when absent). */
static int lt__st_dims(const lt_st *st, const char *name, int64_t *d0, int64_t *d1) {
    int64_t sh[8];
    int i = lt_st_find(st, name), nd;
    *d0 = *d1 = -1;
    if (i < 0) return 0;
    nd = lt_st_shape(st, i, sh);
    if (nd >= 1) *d0 = sh[0];
    if (nd == 2) *d1 = sh[1];
    return nd;
}

/* What the tensors of a Llama file say: V, C, L, Q and KV rows, the MLP's hidden, biases,
   qk-norm, an untied head.  0 with an error when the file's shapes are not a Llama model. */
static int lt__llama_shapes(lt_ctx *ctx, const lt_st *st, const char *path, lt_gpt_config *c, int64_t *q, int64_t *kv) {
    int64_t v, ch, x, y, f;
    int l;
    if (lt__st_dims(st, "model.embed_tokens.weight", &v, &ch) != 2 || v < 1 || ch < 1 || v > INT_MAX || ch > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: model.embed_tokens.weight must be [vocab, hidden_size]", path);
        return 0;
    }
    for (l = 0; l < 100000; l++) {
        char name[64];
        snprintf(name, sizeof name, "model.layers.%d.input_layernorm.weight", l);
        if (lt_st_find(st, name) < 0) break;
    }
    lt__st_dims(st, "model.layers.0.self_attn.q_proj.weight", q, &x);
    lt__st_dims(st, "model.layers.0.self_attn.k_proj.weight", kv, &y);
    lt__st_dims(st, "model.layers.0.mlp.gate_proj.weight", &f, &x);
    if (l < 1 || *q < 1 || *kv < 1 || f < 1 || f > INT_MAX) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %d layers, model.layers.0's q_proj, k_proj or mlp.gate_proj missing: not "
                     "a Llama checkpoint", path, l);
        return 0;
    }
    c->vocab = (int)v; c->channels = (int)ch; c->layers = l; c->hidden = (int)f;
    c->arch = LT_ARCH_LLAMA;
    c->untied = lt_st_find(st, "lm_head.weight") >= 0;
    c->qk_norm = lt_st_find(st, "model.layers.0.self_attn.q_norm.weight") >= 0;
    c->no_bias = lt_st_find(st, "model.layers.0.self_attn.q_proj.bias") >= 0 ? -1 : 1;
    return 1;
}

/* A Llama model's config: shapes from the tensors, heads, RoPE theta, eps and context from the
   JSON (hc, from src; NULL when there is none: then n_head must be given), the two checked
   against each other.  0 with an error on ctx. */
static int lt__llama_config(lt_ctx *ctx, const lt_st *st, const char *path, const lt__hfcfg *hc, const char *src,
                            int n_head, lt_gpt_config *c) {
    int64_t q, kv;
    int kvh, hd = 0, ab = 0, mb = 0, tie = -1, ok = 1, l;
    const lt__hfitem *mt = hc ? lt__hf_find(hc, "model_type") : NULL, *act = hc ? lt__hf_find(hc, "hidden_act") : NULL;
    const lt__hfitem *rt = hc ? lt__hf_find(hc, "rope_parameters.rope_type") : NULL;
    const lt__hfitem *rs = hc ? lt__hf_find(hc, "rope_scaling") : NULL;
    memset(c, 0, sizeof *c);
    if (!lt__llama_shapes(ctx, st, path, c, &q, &kv)) return 0;
    c->heads = n_head;
    c->ctx = 2048;          /* as LlamaConfig's max_position_embeddings, when nothing says */
    c->norm_eps = 1e-6f;    /* as LlamaConfig's rms_norm_eps */
    if (mt && strcmp(mt->val, "llama") && strcmp(mt->val, "qwen3"))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: model_type is \"%s\": ltrain.h reads gpt2, llama and qwen3", src,
                            mt->val), 0;
    if ((rt && strcmp(rt->val, "default")) || (rs && rs->kind != 'z'))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: rope_type is \"%s\"%s: ltrain.h's RoPE is the default one (no "
                            "scaling)", src, rt ? rt->val : "", rs && rs->kind != 'z' ? " and rope_scaling is set" : ""), 0;
    if (act && strcmp(act->val, "silu"))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: hidden_act is \"%s\": ltrain.h's Llama MLP is silu", src, act->val), 0;
    if (hc) {
        int h = 0;
        if (lt__hf_int(ctx, hc, src, "num_attention_heads", &h) < 0) return 0;
        if (h && n_head && h != n_head)
            return lt_set_error(ctx, LT_ERR_ARG, "%s: num_attention_heads is %d but %d heads were asked for", src, h,
                                n_head), 0;
        if (h) c->heads = h;
        ok = lt__hf_int(ctx, hc, src, "max_position_embeddings", &c->ctx) >= 0 &&
             lt__hf_real(ctx, hc, src, "rms_norm_eps", &c->norm_eps) >= 0 &&
             lt__hf_real(ctx, hc, src, "rope_parameters.rope_theta", &c->rope_theta) >= 0 &&
             (c->rope_theta > 0 || lt__hf_real(ctx, hc, src, "rope_theta", &c->rope_theta) >= 0) &&
             lt__hf_int(ctx, hc, src, "head_dim", &hd) >= 0 && lt__hf_bool(ctx, hc, src, "attention_bias", &ab) >= 0 &&
             lt__hf_bool(ctx, hc, src, "mlp_bias", &mb) >= 0 && lt__hf_bool(ctx, hc, src, "tie_word_embeddings", &tie) >= 0 &&
             lt__hf_agree(ctx, hc, src, "vocab_size", c->vocab, path) && lt__hf_agree(ctx, hc, src, "hidden_size", c->channels, path) &&
             lt__hf_agree(ctx, hc, src, "num_hidden_layers", c->layers, path) &&
             lt__hf_agree(ctx, hc, src, "intermediate_size", c->hidden, path);
        if (!ok) return 0;
    }
    if (c->heads < 1)
        return lt_set_error(ctx, LT_ERR_ARG, "%s: the number of heads is unknown (no config.json beside it, no "
                            "ltrain_config metadata): give it (--heads N)", path), 0;
    if (c->channels % c->heads || q != c->channels || kv % (c->channels / c->heads) || (hd && hd != c->channels / c->heads))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: hidden_size %d, %d heads, head_dim %d, q_proj %lld rows, k_proj %lld "
                            "rows: ltrain.h needs head_dim = hidden_size / heads = q_proj rows / heads and k_proj rows a "
                            "multiple of it", path, c->channels, c->heads, hd, (long long)q, (long long)kv), 0;
    kvh = (int)(kv / (c->channels / c->heads));
    c->kv_heads = kvh;
    if (hc && !lt__hf_agree(ctx, hc, src, "num_key_value_heads", kvh, path)) return 0;
    if (hc && (ab != (c->no_bias == -1) || mb != (c->no_bias == -1) || (tie >= 0 && tie == c->untied)))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: attention_bias %s, mlp_bias %s, tie_word_embeddings %s but %s %s "
                            "biases and %s lm_head.weight (ltrain.h: biases on every linear or none)", src,
                            ab ? "true" : "false", mb ? "true" : "false", tie < 0 ? "unset" : tie ? "true" : "false",
                            path, c->no_bias == -1 ? "has" : "has no", c->untied ? "has" : "has no"), 0;
    if (hc && mt && (strcmp(mt->val, "qwen3") == 0) != c->qk_norm)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: model_type %s but %s %s q_norm/k_norm tensors", src, mt->val, path,
                            c->qk_norm ? "has" : "has no"), 0;
    if (c->rope_theta == 0) c->rope_theta = 10000.0f;
    {   /* every parameter must be in the file (>= 2 bytes each): refuse a config bigger than the
           file before allocating it */
        double C = c->channels, need = (double)c->vocab * C * (1 + c->untied) + C +
                                       c->layers * (2 * C * (double)q + 2 * C * (double)kv + 3 * C * c->hidden + 2 * C);
        size_t have = 0;
        for (l = 0; l < lt_st_count(st); l++) have += lt__st_nbytes(st, l);
        if (need > (double)have / 2)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: its shapes describe a model of %.0f parameters (%d layers) but "
                                "the file holds only %zu bytes of tensors: tensors are missing", path, need, c->layers,
                                have), 0;
    }
    return 1;
}

/* Tensors of st that no parameter of the Llama model g reads (training state aside): an error. */
static lt_status lt__llama_check_extra(lt_gpt *g, const lt_st *st, const char *path) {
    int i, k;
    for (i = 0; i < lt_st_count(st); i++) {
        const char *nm = lt_st_name(st, i);
        int found = !strncmp(nm, "optim.", 6) || !strcmp(nm, "train.state") || !strcmp(nm, "amp.scaler");
        for (k = 0; k < g->n_list && !found; k++) found = !strcmp(g->list[k]->name, nm);
        if (!found)
            return lt_set_error(g->ctx, LT_ERR_FORMAT, "%s: unexpected tensor \"%.100s\": the model (%d layers, %s, "
                                "%s) has no such parameter", path, nm, g->cfg.layers,
                                g->cfg.qk_norm ? "qk-norm" : "no qk-norm", g->cfg.untied ? "untied" : "tied head");
    }
    return LT_OK;
}

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
    if (!lt_failed(ctx)) {
        if (g->cfg.arch == LT_ARCH_LLAMA) lt__llama_check_extra(g, st, path);
        else lt__gpt_extra(g, st, path);
    }
    return ctx->status;
}

LTRAIN_DEF lt_status lt_gpt_load_weights(lt_gpt *g, const char *path) {
    lt_st *st;
    lt_status s;
    char stp[LT__PATH_MAX], cfgp[LT__PATH_MAX];
    if (!g || lt_failed(g->ctx)) return g ? g->ctx->status : LT_ERR_ARG;
    if (path && lt__hf_paths(path, stp, cfgp)) path = stp;   /* a directory: its model.safetensors */
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

/* GPT-2's config from the shapes in a file: wte [V,C], wpe [ctx,C], layers = how many
   h.{i}.ln_1.weight, the MLP's size from c_fc; the heads and eps from the metadata or the JSON hc
   (config.json, read from src; NULL when there is none).  0 with an error on ctx. */
static int lt__gpt2_config(lt_ctx *ctx, lt_st *st, const char *path, int n_head, const lt__hfcfg *hc, const char *src,
                           lt_gpt_config *out) {
    lt_gpt_config cfg;
    int64_t s1[8], s2[8];
    int iw, ip, l, have_cfg = hc != NULL;
    const char *meta;
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
    if (lt_st_shape(st, lt__st_find_hf(st, "h.0.mlp.c_fc.weight"), s2) == 2 && s2[1] > 0 && s2[1] <= INT_MAX)
        cfg.hidden = (int)s2[1];
    if (have_cfg && (lt__hf_real(ctx, hc, src, "layer_norm_epsilon", &cfg.norm_eps) < 0 ||
                     !lt__hf_agree(ctx, hc, src, "n_embd", cfg.channels, path) ||
                     !lt__hf_agree(ctx, hc, src, "vocab_size", cfg.vocab, path) ||
                     !lt__hf_agree(ctx, hc, src, "n_layer", cfg.layers, path)))
        goto done;
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
    } else if (have_cfg) {
        int h = 0;
        if (lt__hf_int(ctx, hc, src, "n_head", &h) < 0) goto done;
        if (h && n_head > 0 && n_head != h) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: n_head is %d but %d heads were asked for", src, h, n_head);
            goto done;
        }
        if (h) n_head = h;
    }
    if (n_head < 1) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: the number of heads is unknown (no n_head metadata, no config.json beside "
                     "it): give it (--heads N)", path);
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
        double C = cfg.channels, F = cfg.hidden ? cfg.hidden : 4 * C;
        double need = ((double)cfg.vocab + cfg.ctx + 2) * C + cfg.layers * (4 * C * C + 2 * C * F + 9 * C + F);
        size_t have = 0;
        for (l = 0; l < lt_st_count(st); l++) have += lt__st_nbytes(st, l);
        if (need > (double)have / 2) {
            lt_set_error(ctx, LT_ERR_FORMAT, "%s: its shapes describe a model of %.0f parameters (V=%d ctx=%d C=%d, %d "
                         "layers) but the file holds only %zu bytes of tensors: tensors are missing", path, need,
                         cfg.vocab, cfg.ctx, cfg.channels, cfg.layers, have);
            goto done;
        }
    }
    *out = cfg;
    return 1;
done:
    return 0;
}

/* A model from a file or a Hugging Face directory: GPT-2 (lt__gpt2_config) or Llama
   (model.embed_tokens.weight: lt__llama_config), its weights read completely. */
LTRAIN_DEF lt_gpt *lt_gpt_load(lt_ctx *ctx, const char *path, int n_head) {
    lt_st *st;
    lt_gpt_config cfg;
    lt_gpt *g = NULL;
    int have_cfg, ok;
    char *stp, *cfgp, *src;
    lt__hfcfg hc;
    if (!ctx || lt_failed(ctx)) return NULL;
    stp = (char *)LT__MALLOC(3 * LT__PATH_MAX);
    if (!stp) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_gpt_load: out of memory"); return NULL; }
    cfgp = stp + LT__PATH_MAX; src = cfgp + LT__PATH_MAX;
    if (!path || !lt__hf_paths(path, stp, cfgp)) { LT__FREE(stp); lt_st_open(ctx, path); return NULL; }
    path = stp;
    st = lt_st_open(ctx, path);
    if (!st) { LT__FREE(stp); return NULL; }
    have_cfg = lt__hf_load_config(ctx, st, path, cfgp, &hc, src);
    if (have_cfg >= 0) {
        ok = lt_st_find(st, "model.embed_tokens.weight") >= 0
                 ? lt__llama_config(ctx, st, path, have_cfg ? &hc : NULL, src, n_head, &cfg)
                 : lt__gpt2_config(ctx, st, path, n_head, have_cfg ? &hc : NULL, src, &cfg);
        if (ok) g = lt_gpt_create(ctx, &cfg);
        if (g && lt__gpt_read(g, st, path) != LT_OK) { lt_gpt_destroy(g); g = NULL; }
        lt__hf_free(&hc);
    }
    lt_st_close(st);
    LT__FREE(stp);
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
    char *stp, *cfgp = NULL, json[2048];
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
    /* "format" must be "pt" for transformers 4.x; ours is ltrain_format and ltrain_config (config.json's text) */
    lt__gpt_config_json(&g->cfg, json, sizeof json);
    lt_st_add_meta(w, "format", "pt");
    lt_st_add_meta(w, "ltrain_format", g->cfg.arch == LT_ARCH_LLAMA ? "ltrain-llama" : "ltrain-gpt2");
    lt_st_add_meta(w, "ltrain_config", json);
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
    /* a directory: its model.safetensors; beside a model.safetensors also config.json, so that the
       directory is a Hugging Face model's */
    stp = (char *)LT__MALLOC(2 * LT__PATH_MAX);
    if (!stp) lt_set_error(ctx, LT_ERR_NOMEM, "lt_checkpoint_save: out of memory");
    else if (!path || !lt__hf_paths(path, stp, cfgp = stp + LT__PATH_MAX))
        lt_set_error(ctx, LT_ERR_ARG, "lt_checkpoint_save: path is %s", path ? "too long" : "NULL");
    else {
        if (path[0] && path[strlen(path) - 1] == '/' && !lt__is_dir(path)) LT__MKDIR(path);   /* as save_pretrained */
        path = stp;
    }
    s = lt_failed(ctx) ? ctx->status : lt_st_save(w, path);
    if (s == LT_OK && (!strcmp(path, "model.safetensors") ||
                       (strlen(path) > 18 && !strcmp(path + strlen(path) - 18, "/model.safetensors"))))
        s = lt__write_text_atomic(ctx, cfgp, json);
    LT__FREE(stp);
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
    if (!data) return lt_failed(ctx) ? lt_status_of(ctx) : lt_set_error(ctx, LT_ERR_IO, "%s: amp.scaler unreadable", path);
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
    if (!data) return lt_failed(ctx) ? lt_status_of(ctx) : lt_set_error(ctx, LT_ERR_IO, "%s: train.state unreadable", path);
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
    return lt_st_read_f32(f, i, buf, cnt);
}

/* Weights, then the training state when st is given, then the optimizer's state when opt is. */
LTRAIN_DEF lt_status lt_checkpoint_load(lt_gpt *g, lt_optim *opt, lt_train_state *st, const char *path) {
    lt_ctx *ctx;
    lt_st *f;
    char stp[LT__PATH_MAX], cfgp[LT__PATH_MAX];
    int k, j, ns;
    if (!g) return LT_ERR_ARG;
    ctx = g->ctx;
    if (lt_failed(ctx)) return ctx->status;
    if (path && lt__hf_paths(path, stp, cfgp)) path = stp;   /* a directory: its model.safetensors */
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


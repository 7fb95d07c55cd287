/* test_llama.c - the Llama-style model (lt_gpt_config.arch = LT_ARCH_LLAMA): config defaults and
   refusals, parameters under Hugging Face names, logits against transformers' LlamaForCausalLM and
   Qwen3ForCausalLM (tests/ref/llama_hf, tests/ref/qwen3_hf: save_pretrained directories with
   ref.safetensors, written by tests/ref/check_llama.py --write-ref), save/load round trips with
   config.json, bad checkpoints, training (accumulation, compiled plans, bf16), sampling, and
   build/train_gpt --arch llama (resume to the bit, bad input).  Also GPT-2's Hugging Face
   directory: config.json written and read, metadata format "pt". */

static lt_gpt_config tl__cfg(int kv, int qk, int untied, int no_bias) {
    lt_gpt_config c = lt_llama_config(40, 16, 2, 4, kv, 32, 48);
    c.qk_norm = qk; c.untied = untied; c.no_bias = no_bias;
    return c;
}

static char *tl__path(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/llama_%s", t_tmp_dir(), name);
    return buf;
}

static void tl__config(void) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt_config c = lt_llama_config(100, 32, 2, 6, 0, 48, 0), bad;
    lt_gpt *g = lt_gpt_create(ctx, &c);
    const lt_gpt_config *r = g ? lt_gpt_cfg(g) : NULL;
    lt_paramset ps;
    int i, named = 1;
    static const char *const want[] = {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
                                       "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight",
                                       "model.layers.0.self_attn.o_proj.weight", "model.layers.0.mlp.gate_proj.weight",
                                       "model.layers.0.mlp.up_proj.weight", "model.layers.0.mlp.down_proj.weight",
                                       "model.layers.0.input_layernorm.weight",
                                       "model.layers.0.post_attention_layernorm.weight"};
    t_check(r && r->kv_heads == 6 && r->hidden == 128 && r->rope_theta == 10000.0f && r->norm_eps == 1e-5f &&
                lt_gpt_num_params(g) == 100 * 48 + 2 * (4 * 48 * 48 + 3 * 48 * 128 + 2 * 48) + 48,
            "llama.config.defaults", "kv %d hidden %d theta %g eps %g params %lld", r ? r->kv_heads : -1,
            r ? r->hidden : -1, r ? (double)r->rope_theta : 0.0, r ? (double)r->norm_eps : 0.0,
            g ? (long long)lt_gpt_num_params(g) : -1LL);
    if (g) {
        ps = lt_gpt_params(g);
        for (i = 0; i < 10 && named; i++) named = strcmp(ps.p[i]->name, want[i]) == 0;
        t_check(named && ps.n == 1 + 2 * 9 + 1 && strcmp(ps.p[ps.n - 1]->name, "model.norm.weight") == 0,
                "llama.config.names", "parameter %d is \"%s\" (of %d)", i - 1, ps.p[i - 1]->name, ps.n);
    }
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    /* refusals: one sentence naming the field and values */
    {
        static const struct { const char *name, *needle; int what; } cases[] = {
            {"llama.config.kv_not_dividing", "kv_heads 4", 0}, {"llama.config.unknown_arch", "arch is 7", 1},
            {"llama.config.gpt2_with_kv", "arch gpt2 with kv_heads 2", 2}, {"llama.config.gpt2_untied", "untied 1", 3}};
        for (i = 0; i < 4; i++) {
            ctx = lt_ctx_create(1);
            bad = lt_llama_config(100, 32, 2, 6, 0, 48, 0);
            if (cases[i].what == 0) bad.kv_heads = 4;
            if (cases[i].what == 1) bad.arch = 7;
            if (cases[i].what == 2) { bad.arch = LT_ARCH_GPT2; bad.kv_heads = 2; }
            if (cases[i].what == 3) { bad = lt_gpt2_config(100, 32, 2, 6, 48); bad.untied = 1; }
            g = lt_gpt_create(ctx, &bad);
            t_check(!g && strstr(lt_error(ctx), cases[i].needle) && !strchr(lt_error(ctx), '\n'), cases[i].name,
                    "got \"%s\"", lt_error(ctx));
            lt_gpt_destroy(g);
            lt_ctx_destroy(ctx);
        }
    }
}

/* Logits of the committed transformers models against transformers' own. */
static void tl__hf_ref(const char *dir, const char *name) {
    char path[512], nm[96];
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt *g;
    lt_st *ref;
    int64_t sh[8];
    int32_t ids[64];
    float *want = NULL;
    lt_tensor *lg;
    int ii, il, B, T;
    snprintf(path, sizeof path, "tests/ref/%s/ref.safetensors", dir);
    snprintf(nm, sizeof nm, "llama.hf.%s", name);
    ref = lt_st_open(ctx, path);
    if (!ref) { t_check(0, nm, "%s", lt_error(ctx)); lt_ctx_destroy(ctx); return; }
    ii = lt_st_find(ref, "ids");
    il = lt_st_find(ref, "logits");
    lt_st_shape(ref, ii, sh);
    B = (int)sh[0]; T = (int)sh[1];
    memcpy(ids, lt_st_data(ref, ii, NULL), (size_t)B * T * 4);   /* I32, little-endian */
    snprintf(path, sizeof path, "tests/ref/%s", dir);
    g = lt_gpt_load(ctx, path, 0);   /* the heads from config.json */
    if (g) {
        want = (float *)malloc((size_t)B * T * lt_gpt_cfg(g)->vocab * sizeof(float));
        lt_st_read_f32(ref, il, want, (int64_t)B * T * lt_gpt_cfg(g)->vocab);
        lt_set_grad_enabled(ctx, 0);
        lg = lt_gpt_forward(g, ids, B, T, NULL);
        if (lg && want) t_close(nm, lg->data, want, lg->n, 1e-4, 0);
        else t_check(0, nm, "%s", lt_error(ctx));
    } else {
        t_check(0, nm, "%s", lt_error(ctx));
    }
    free(want);
    lt_gpt_destroy(g);
    lt_st_close(ref);
    lt_ctx_destroy(ctx);
}

static int tl__same_params(lt_gpt *a, lt_gpt *b) {
    lt_paramset x = lt_gpt_params(a), y = lt_gpt_params(b);
    int k;
    if (x.n != y.n) return 0;
    for (k = 0; k < x.n; k++)
        if (strcmp(x.p[k]->name, y.p[k]->name) || x.p[k]->n != y.p[k]->n ||
            memcmp(x.p[k]->data, y.p[k]->data, (size_t)x.p[k]->n * sizeof(float)))
            return 0;
    return 1;
}

static int tl__write(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

/* Save into a directory and load back, for each variant; config.json beside; bad files refused. */
static void tl__save_load(void) {
    static const int var[4][4] = {{2, 0, 0, 0}, {1, 1, 1, 0}, {4, 0, 1, -1}, {2, 1, 0, -1}};
    char dir[512], file[512], cfgp[600], nm[96];
    int v;
    for (v = 0; v < 4; v++) {
        lt_ctx *ctx = lt_ctx_create(3 + (uint64_t)v), *ctx2 = lt_ctx_create(9);
        lt_gpt_config c = tl__cfg(var[v][0], var[v][1], var[v][2], var[v][3]);
        lt_gpt *g = lt_gpt_create(ctx, &c), *h;
        char *json;
        snprintf(nm, sizeof nm, "variant%d/", v);
        tl__path(dir, sizeof dir, nm);
        lt_gpt_save(g, dir);
        h = lt_gpt_load(ctx2, dir, 0);
        snprintf(nm, sizeof nm, "llama.save_load.variant%d", v);
        t_check(h && tl__same_params(g, h) && memcmp(lt_gpt_cfg(g), lt_gpt_cfg(h), sizeof c) == 0, nm, "%s",
                h ? "parameters or config differ" : lt_error(ctx2));
        snprintf(cfgp, sizeof cfgp, "%sconfig.json", dir);
        json = t_slurp(cfgp, NULL);
        snprintf(nm, sizeof nm, "llama.save_load.variant%d.config_json", v);
        t_check(json && strstr(json, var[v][1] ? "\"Qwen3ForCausalLM\"" : "\"LlamaForCausalLM\"") &&
                    strstr(json, var[v][2] ? "\"tie_word_embeddings\": false" : "\"tie_word_embeddings\": true"),
                nm, "%s", json ? json : "no config.json");
        free(json);
        lt_gpt_destroy(g);
        lt_gpt_destroy(h);
        lt_ctx_destroy(ctx);
        lt_ctx_destroy(ctx2);
    }
    /* our metadata wins over a config.json beside (another model's) */
    tl__path(cfgp, sizeof cfgp, "variant0/config.json");
    tl__write(cfgp, "{\"model_type\": \"llama\", \"num_attention_heads\": 8, \"vocab_size\": 1}");
    {
        lt_ctx *ctx = lt_ctx_create(1);
        lt_gpt *g = lt_gpt_load(ctx, tl__path(dir, sizeof dir, "variant0"), 0);
        t_check(g && lt_gpt_cfg(g)->heads == 4, "llama.save_load.metadata_first", "%s", g ? "heads differ" : lt_error(ctx));
        lt_gpt_destroy(g);
        lt_ctx_destroy(ctx);
    }
    /* a file not named model.safetensors: no config.json written, the metadata is enough */
    {
        lt_ctx *ctx = lt_ctx_create(1);
        lt_gpt_config c = tl__cfg(2, 0, 0, 0);
        lt_ctx *ctx2 = lt_ctx_create(2);
        lt_gpt *g = lt_gpt_create(ctx, &c), *h;
        tl__path(file, sizeof file, "plain.safetensors");
        lt_gpt_save(g, file);
        h = lt_gpt_load(ctx2, file, 0);
        t_check(h && tl__same_params(g, h), "llama.save_load.plain_file", "%s", lt_error(ctx2));
        lt_gpt_destroy(g);
        lt_gpt_destroy(h);
        lt_ctx_destroy(ctx);
        lt_ctx_destroy(ctx2);
    }
}

/* A save_pretrained-like directory from transformers' committed model, with one thing changed. */
static void tl__bad_case(const char *name, const char *config_edit_from, const char *config_edit_to, const char *drop,
                         const char *add, const char *needle) {
    char dir[512], p[600], nm[96], *json, *at;
    lt_ctx *ctx = lt_ctx_create(1), *c2 = lt_ctx_create(1);
    lt_st *src = lt_st_open(ctx, "tests/ref/llama_hf/model.safetensors");
    lt_st_writer *w = lt_st_writer_create(ctx);
    lt_gpt *g;
    float extra[4] = {0};
    int64_t four = 4;
    int i;
    snprintf(nm, sizeof nm, "llama.bad.%s", name);
    snprintf(p, sizeof p, "bad_%s/", name);
    tl__path(dir, sizeof dir, p);
    mkdir(dir, 0755);
    if (!src) { t_check(0, nm, "%s", lt_error(ctx)); goto out; }
    for (i = 0; i < lt_st_count(src); i++) {
        int64_t sh[8];
        int nd = lt_st_shape(src, i, sh);
        if (drop && !strcmp(lt_st_name(src, i), drop)) continue;
        lt_st_add(w, lt_st_name(src, i), lt_st_dtype(src, i), nd, sh, lt_st_data(src, i, NULL));
    }
    if (add) lt_st_add(w, add, "F32", 1, &four, extra);
    snprintf(p, sizeof p, "%smodel.safetensors", dir);
    lt_st_save(w, p);
    json = t_slurp("tests/ref/llama_hf/config.json", NULL);
    if (json && config_edit_from && (at = strstr(json, config_edit_from)) != NULL) {
        size_t a = strlen(config_edit_from), b = strlen(config_edit_to);
        char *nj = (char *)malloc(strlen(json) + b + 1);
        memcpy(nj, json, (size_t)(at - json));
        memcpy(nj + (at - json), config_edit_to, b);
        strcpy(nj + (at - json) + b, at + a);
        free(json);
        json = nj;
    }
    snprintf(p, sizeof p, "%sconfig.json", dir);
    if (json) tl__write(p, json);
    free(json);
    g = lt_gpt_load(c2, dir, 0);
    t_check(!g && strstr(lt_error(c2), needle) && !strchr(lt_error(c2), '\n'), nm, "got \"%s\" (want \"%s\")",
            g ? "(loaded)" : lt_error(c2), needle);
    lt_gpt_destroy(g);
out:
    lt_st_writer_destroy(w);
    lt_st_close(src);
    lt_ctx_destroy(ctx);
    lt_ctx_destroy(c2);
}

static void tl__bad(void) {
    tl__bad_case("missing_tensor", NULL, NULL, "model.layers.1.mlp.up_proj.weight", NULL,
                 "model.layers.1.mlp.up_proj.weight\" is missing");
    tl__bad_case("extra_tensor", NULL, NULL, NULL, "model.layers.0.mlp.extra.weight", "unexpected tensor");
    tl__bad_case("kv_heads", "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 4", NULL, NULL,
                 "num_key_value_heads is 4 but the tensors");
    tl__bad_case("vocab", "\"vocab_size\": 48", "\"vocab_size\": 50", NULL, NULL, "vocab_size is 50");
    tl__bad_case("tie", "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true", NULL, NULL,
                 "tie_word_embeddings true");
    tl__bad_case("heads", "\"num_attention_heads\": 4", "\"num_attention_heads\": 3", NULL, NULL, "3 heads");
    tl__bad_case("model_type", "\"model_type\": \"llama\"", "\"model_type\": \"mamba\"", NULL, NULL, "model_type is \"mamba\"");
    tl__bad_case("json", "{", "{{", NULL, NULL, "not valid JSON");
    tl__bad_case("rope_scaling", "\"rope_type\": \"default\"", "\"rope_type\": \"llama3\"", NULL, NULL,
                 "rope_type is \"llama3\"");
}

/* Training: the loss falls; K micro-batches of B/K = one batch of B; bf16 follows fp32 (compiled
   plans: build/train_gpt --compile on in tl__cli). */
static double tl__steps(int accum, lt_dtype prec, int nsteps, int qk) {
    lt_ctx *ctx = lt_ctx_create(5);
    lt_gpt_config c = tl__cfg(2, qk, 1, 0);
    lt_gpt *g;
    lt_optim *opt;
    lt_adamw_config ac = lt_adamw_defaults();
    int32_t ids[4 * 12], tg[4 * 12];
    int s, k, i, B = 4, T = 12;
    double loss = NAN;
    lt_set_precision(ctx, prec);
    g = lt_gpt_create(ctx, &c);
    ac.lr = 3e-3;
    opt = lt_adamw_create(ctx, lt_gpt_params(g), ac);
    for (i = 0; i < B * T; i++) { ids[i] = (i * 7 + i / 5) % 40; tg[i] = (ids[i] * 3 + 1) % 40; }
    for (s = 0; s < nsteps; s++) {
        double sum = 0;
        lt_zero_grad(ctx);
        for (k = 0; k < accum; k++) {
            int b = B / accum;
            lt_tensor *l;
            lt_reset(ctx);
            l = lt_gpt_loss(g, ids + k * b * T, tg + k * b * T, b, T);
            if (!l) break;
            sum += lt_item(l) / accum;
            lt_backward_scaled(ctx, l, 1.0f / (float)accum);
        }
        lt_optim_step(opt, ac.lr);
        loss = sum;
    }
    if (lt_failed(ctx)) { printf("     %s\n", lt_error(ctx)); loss = NAN; }
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return loss;
}

static void tl__train(void) {
    double first = tl__steps(1, LT_F32, 1, 0), last = tl__steps(1, LT_F32, 30, 0);
    double k1 = tl__steps(1, LT_F32, 5, 1), k2 = tl__steps(2, LT_F32, 5, 1), b16 = tl__steps(1, LT_BF16, 30, 0);
    t_check(last < first - 0.5, "llama.train.loss_falls", "loss %.4f after 1 step, %.4f after 30", first, last);
    t_check(fabs(k1 - k2) < 1e-4 * fabs(k1) + 1e-5, "llama.train.accumulation", "B=4: %.6f, 2 x B=2: %.6f", k1, k2);
    t_check(b16 < first - 0.5 && fabs(b16 - last) < 0.1, "llama.train.bf16", "bf16 %.4f, fp32 %.4f", b16, last);
}

/* Sampling: greedy = argmax of a forward on the same window; deterministic. */
static void tl__generate(void) {
    lt_ctx *ctx = lt_ctx_create(2);
    lt_gpt_config c = tl__cfg(1, 1, 0, 0);
    lt_gpt *g = lt_gpt_create(ctx, &c);
    int32_t prompt[3] = {1, 2, 3}, a[40], b[40];
    lt_rng r1, r2;
    int n1, n2;
    lt_rng_seed(&r1, 4); lt_rng_seed(&r2, 4);
    n1 = lt_gpt_generate(g, prompt, 3, 30, 0.8f, 5, &r1, a);   /* past the context (16): a sliding window */
    n2 = lt_gpt_generate(g, prompt, 3, 30, 0.8f, 5, &r2, b);
    t_check(n1 == 33 && n2 == 33 && memcmp(a, b, sizeof(int32_t) * 33) == 0 && !lt_failed(ctx), "llama.generate",
            "%d and %d tokens: %s", n1, n2, lt_error(ctx));
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

/* GPT-2 in a Hugging Face directory: config.json beside, metadata format "pt", heads read back. */
static void tl__gpt2_dir(void) {
    char dir[512], p[600], *json;
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt_config c = lt_gpt2_config(50, 16, 1, 4, 32);
    lt_gpt *g = lt_gpt_create(ctx, &c), *h;
    lt_st *st;
    tl__path(dir, sizeof dir, "gpt2dir/");
    lt_gpt_save(g, dir);
    snprintf(p, sizeof p, "%sconfig.json", dir);
    json = t_slurp(p, NULL);
    t_check(json && strstr(json, "\"GPT2LMHeadModel\"") && strstr(json, "\"n_head\": 4"), "llama.gpt2_dir.config_json",
            "%s", json ? json : "missing");
    free(json);
    snprintf(p, sizeof p, "%smodel.safetensors", dir);
    st = lt_st_open(ctx, p);
    t_check(st && lt_st_meta(st, "format") && !strcmp(lt_st_meta(st, "format"), "pt") && lt_st_meta(st, "ltrain_config"),
            "llama.gpt2_dir.format_pt", "format \"%s\"", st && lt_st_meta(st, "format") ? lt_st_meta(st, "format") : "");
    lt_st_close(st);
    /* a file without our metadata (as save_pretrained writes): the heads from config.json */
    {
        lt_st *src = lt_st_open(ctx, p);
        lt_st_writer *w = lt_st_writer_create(ctx);
        char dir2[512], p2[600];
        int i;
        tl__path(dir2, sizeof dir2, "gpt2hf");
        mkdir(dir2, 0755);
        for (i = 0; src && i < lt_st_count(src); i++) {
            int64_t sh[8];
            int nd = lt_st_shape(src, i, sh);
            char name[160];
            snprintf(name, sizeof name, "transformer.%s", lt_st_name(src, i));
            lt_st_add(w, name, lt_st_dtype(src, i), nd, sh, lt_st_data(src, i, NULL));
        }
        lt_st_add_meta(w, "format", "pt");
        snprintf(p2, sizeof p2, "%s/model.safetensors", dir2);
        lt_st_save(w, p2);
        lt_st_writer_destroy(w);
        lt_st_close(src);
        snprintf(p2, sizeof p2, "%s/config.json", dir2);
        tl__write(p2, "{\"model_type\": \"gpt2\", \"n_head\": 4, \"n_embd\": 32, \"n_layer\": 1, \"vocab_size\": 50, "
                      "\"layer_norm_epsilon\": 1e-05, \"activation_function\": \"gelu_new\", \"n_inner\": null, "
                      "\"architectures\": [\"GPT2LMHeadModel\"], \"task_specific_params\": {\"x\": {\"y\": [1, 2.5]}}}");
        lt_ctx *ctx2 = lt_ctx_create(2);
        h = lt_gpt_load(ctx2, dir2, 0);
        t_check(h && tl__same_params(g, h) && lt_gpt_cfg(h)->heads == 4, "llama.gpt2_dir.heads_from_config_json", "%s",
                lt_error(ctx2));
        lt_gpt_destroy(h);
        lt_ctx_destroy(ctx2);
    }
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

/* build/train_gpt --arch llama: every mode resumes to the bit; bad input is one line, exit 1. */
static void tl__cli(void) {
    char data[512], err[512], args[2048], msg[1024], ck[512], ck2[512];
    int rc;
    unsigned char before[64], after[64];
    FILE *f;
    if (!tg__have_bin()) { t_skip("llama.cli", "build/train_gpt is missing (make build/train_gpt)"); return; }
    tl__path(data, sizeof data, "train.txt");
    if (!tg__write_text(data)) { t_check(0, "llama.cli.data", "cannot write %s", data); return; }
    tg__resume_case("llama_gqa", data, "--arch llama --kv-heads 1");
    tg__resume_case("llama_qk_untied_bias", data, "--arch llama --qk-norm --untied --bias --rope-theta 500");
    tg__resume_case("llama_muon_clip", data, "--arch llama --optim muon --clip-norm 0.5 --decay linear");
    tg__resume_case("llama_compiled", data, "--arch llama --kv-heads 1 --compile on");
    tg__resume_case("llama_bf16", data, "--arch llama --precision bf16");
    tg__resume_case("llama_fp16", data, "--arch llama --kv-heads 1 --precision fp16");
    tg__resume_case("llama_seqs", data, "--arch llama --seqs lines --batching bucket");
    tg__path(err, sizeof err, "llama.err");
    tg__path(ck, sizeof ck, "gpt.train_gpt.llama_gqa.ckpt.safetensors");
    /* restarts: candidates saved and the best resumed, with the --arch flags passed along */
    snprintf(args, sizeof args, "--data %s --val %s --arch llama --kv-heads 1 --layers 1 --heads 2 --channels 16 --batch 2 "
             "--seq 8 --steps 6 --restarts 2 --restart-steps 3 --eval-batches 1", data, data);
    rc = tg__run(args, err);
    tg__one_line(err, msg, sizeof msg);
    t_check(rc == 0, "llama.cli.restarts", "exit %d (%s)", rc, msg);
    /* sampling from a Llama checkpoint */
    {
        char cmd[1200];
        int s;
        snprintf(cmd, sizeof cmd, "build/sample_gpt %s --n 20 > /dev/null 2> %s", ck, err);
        s = tg__have_bin() && (f = fopen("build/sample_gpt", "rb")) != NULL ? (fclose(f), system(cmd)) : -2;
        if (s == -2) t_skip("llama.cli.sample", "build/sample_gpt is missing");
        else t_check(s == 0, "llama.cli.sample", "sample_gpt exit %d", s);
    }
    /* a flag that contradicts the checkpoint, an unknown arch, kv-heads not dividing heads: one line,
       exit 1, and the --save file untouched */
    tl__path(ck2, sizeof ck2, "cli_keep.safetensors");
    tl__write(ck2, "keep me");
    snprintf(args, sizeof args, "--data %s --steps 2 --batch 2 --seq 8 --init %s --kv-heads 2 --save %s", data, ck, ck2);
    rc = tg__run(args, err);
    f = fopen(ck2, "rb");
    memset(after, 0, sizeof after);
    if (f) { if (fread(after, 1, 7, f)) {} fclose(f); }
    memcpy(before, "keep me", 8);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg) && strstr(msg, "--kv-heads 2") && strstr(msg, "has 1") &&
                memcmp(before, after, 7) == 0, "llama.cli.flag_vs_checkpoint", "exit %d, stderr \"%s\"", rc, msg);
    snprintf(args, sizeof args, "--data %s --steps 2 --arch mamba", data);
    rc = tg__run(args, err);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg) && strstr(msg, "mamba"), "llama.cli.unknown_arch",
            "exit %d, stderr \"%s\"", rc, msg);
    snprintf(args, sizeof args, "--data %s --steps 2 --arch llama --heads 4 --kv-heads 3", data);
    rc = tg__run(args, err);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg) && strstr(msg, "--kv-heads 3") && strstr(msg, "--heads 4"),
            "llama.cli.kv_not_dividing", "exit %d, stderr \"%s\"", rc, msg);
    snprintf(args, sizeof args, "--data %s --steps 2 --qk-norm", data);
    rc = tg__run(args, err);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg) && strstr(msg, "--arch llama"), "llama.cli.gpt2_qk_norm",
            "exit %d, stderr \"%s\"", rc, msg);
    snprintf(args, sizeof args, "--data %s --steps 2 --init tests/ref/llama_hf --arch gpt2", data);
    rc = tg__run(args, err);
    t_check(rc == 1 && tg__one_line(err, msg, sizeof msg) && strstr(msg, "llama model"), "llama.cli.arch_vs_checkpoint",
            "exit %d, stderr \"%s\"", rc, msg);
    /* --init from transformers' save_pretrained directory (vocab 48: text of bytes below 48) */
    tl__path(data, sizeof data, "small_vocab.txt");
    if ((f = fopen(data, "wb")) != NULL) {
        for (rc = 0; rc < 400; rc++) fputc(" !#$%&()*+,-./"[rc * 5 % 14], f);
        fclose(f);
    }
    snprintf(args, sizeof args, "--data %s --steps 2 --batch 2 --seq 8 --init tests/ref/llama_hf", data);
    rc = tg__run(args, err);
    tg__one_line(err, msg, sizeof msg);
    t_check(rc == 0, "llama.cli.init_hf_dir", "exit %d (%s)", rc, msg);
    tg__cleanup();
}

static void test_llama_all(void) {
    if (t_want("llama.config")) tl__config();
    if (t_want("llama.hf")) {
        tl__hf_ref("llama_hf", "llama_gqa_untied_bias");
        tl__hf_ref("qwen3_hf", "qwen3_qknorm_gqa");
    }
    if (t_want("llama.save_load")) tl__save_load();
    if (t_want("llama.bad")) tl__bad();
    if (t_want("llama.train")) tl__train();
    if (t_want("llama.generate")) tl__generate();
    if (t_want("llama.gpt2_dir")) tl__gpt2_dir();
    if (t_want("llama.cli") || t_want("gpt.train_gpt.llama")) tl__cli();
}

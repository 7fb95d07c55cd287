/* test_tok_train.c - training a byte-level BPE vocabulary (@@TOK.train): merges equal to Hugging
   Face tokenizers' BpeTrainer on tests/ref/bpe_text.txt (tests/ref/bpe_merges.txt) and on
   tinyshakespeare when ../shared/data has it (tests/ref/bpe_hashes.txt; both written by
   tests/ref/gen_bpe.py), the tie rule and overlapping pairs by hand, stopping early, bad options,
   and the saved files loaded back by @@TOK's loaders.  #included by test_main.c. */

static uint64_t ttr__fnv(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* The merges as vocab.bpe's lines "left right\n" in byte-level characters (malloc'd). */
static char *ttr__merge_lines(const lt_bpe *v, size_t *len) {
    size_t cap = 64, k, m;
    char *s = (char *)malloc(cap);
    int i, side;
    *len = 0;
    for (i = 0; s && i < lt_bpe_n_merges(v); i++)
        for (side = 0; side < 2; side++) {
            int lr[2];
            const unsigned char *t;
            lt_bpe_merge(v, i, &lr[0], &lr[1]);
            t = lt_bpe_token(v, lr[side], &m);
            if (*len + 2 * m + 2 > cap) {
                char *q = (char *)realloc(s, cap = 2 * (cap + m));
                if (!q) { free(s); return NULL; }
                s = q;
            }
            for (k = 0; k < m; k++) {
                uint32_t c = lt_tok_byte_char(t[k]);
                if (c < 0x80) s[(*len)++] = (char)c;
                else { s[(*len)++] = (char)(0xc0 | (c >> 6)); s[(*len)++] = (char)(0x80 | (c & 0x3f)); }
            }
            s[(*len)++] = side ? '\n' : ' ';
        }
    return s;
}

/* Trains on text and returns the merges' lines and their count: for GPT-2's pattern vocab.bpe's
   lines after the "#version" line, from the pair saved under build/tmp; else ttr__merge_lines. */
static char *ttr__train_merges(const char *text, size_t n, int vocab, lt_pretok pattern, size_t *len, int *nmerges) {
    char enc[256], bpe[256], *all, *body = NULL;
    size_t m;
    lt_ctx *ctx = lt_ctx_create(1);
    lt_bpe_opts o = lt_bpe_defaults();
    lt_bpe *v;
    *len = 0;
    *nmerges = -1;
    o.vocab_size = vocab;
    o.pattern = pattern;
    snprintf(enc, sizeof enc, "%s/tt_encoder.json", t_tmp_dir());
    snprintf(bpe, sizeof bpe, "%s/tt_vocab.bpe", t_tmp_dir());
    v = lt_bpe_train(ctx, text, n, &o);
    if (v && pattern != LT_PRETOK_GPT2) {
        body = ttr__merge_lines(v, len);
        *nmerges = lt_bpe_n_merges(v);
    } else if (v && lt_bpe_save_gpt2(ctx, v, enc, bpe) == LT_OK && (all = t_slurp(bpe, &m)) != NULL) {
        const char *nl = strchr(all, '\n');
        size_t skip = nl ? (size_t)(nl - all) + 1 : m;
        body = (char *)malloc(m - skip + 1);
        if (body) { memcpy(body, all + skip, m - skip); body[m - skip] = 0; *len = m - skip; }
        free(all);
        *nmerges = lt_bpe_n_merges(v);
    }
    if (lt_failed(ctx)) printf("     %s\n", lt_error(ctx));
    lt_bpe_free(v);
    lt_ctx_destroy(ctx);
    return body;
}

/* The reference hash line "NAME VOCAB N_MERGES HASH" for name and vocab; 0 when absent. */
static int ttr__hash_ref(const char *name, int vocab, int *nmerges, uint64_t *hash) {
    size_t n;
    char *s = t_slurp("tests/ref/bpe_hashes.txt", &n), *line, *save = NULL;
    int found = 0;
    if (!s) return 0;
    for (line = strtok_r(s, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
        char nm[64];
        int v, m;
        unsigned long long h;
        if (sscanf(line, "%63s %d %d %llx", nm, &v, &m, &h) == 4 && strcmp(nm, name) == 0 && v == vocab) {
            *nmerges = m;
            *hash = (uint64_t)h;
            found = 1;
        }
    }
    free(s);
    return found;
}

static void ttr__hf_small(void) {
    size_t n, nref, got;
    char *text = t_slurp("tests/ref/bpe_text.txt", &n), *ref = t_slurp("tests/ref/bpe_merges.txt", &nref), *me;
    int nm = -1, vocabs[2] = {300, 1024}, i;
    if (!text || !ref) {
        t_check(0, "tok.train.hf_small", "tests/ref/bpe_text.txt or bpe_merges.txt missing (run from the repository root)");
        free(text); free(ref);
        return;
    }
    me = ttr__train_merges(text, n, 1024, LT_PRETOK_GPT2, &got, &nm);
    if (me && got == nref && memcmp(me, ref, got) == 0) t_check(1, "tok.train.hf_small", "");
    else {
        size_t k = 0, line = 1;
        while (me && k < got && k < nref && me[k] == ref[k]) line += me[k++] == '\n';
        t_check(0, "tok.train.hf_small", "vocab 1024: %d merges; merges.txt differs from HF's at line %zu", nm, line);
    }
    free(me);
    for (i = 0; i < 2; i++) {   /* GPT-2's pre-tokenizer at two sizes */
        int want_m;
        uint64_t want_h, h;
        char nmname[64];
        snprintf(nmname, sizeof nmname, "tok.train.hf_small_hash/%d", vocabs[i]);
        me = ttr__train_merges(text, n, vocabs[i], LT_PRETOK_GPT2, &got, &nm);
        h = me ? ttr__fnv(me, got) : 0;
        if (!ttr__hash_ref("small", vocabs[i], &want_m, &want_h)) t_check(0, nmname, "no line in tests/ref/bpe_hashes.txt");
        else t_check(nm == want_m && h == want_h, nmname, "%d merges hash %016llx, HF: %d merges hash %016llx", nm,
                     (unsigned long long)h, want_m, (unsigned long long)want_h);
        free(me);
    }
    for (i = 0; i < 2; i++) {   /* Llama-3's and Qwen2's pre-tokenizers */
        int want_m;
        uint64_t want_h, h;
        const char *pname = i ? "small_qwen2" : "small_llama3";
        char nmname[64];
        snprintf(nmname, sizeof nmname, "tok.train.hf_%s", pname);
        me = ttr__train_merges(text, n, 1024, i ? LT_PRETOK_QWEN2 : LT_PRETOK_CL100K, &got, &nm);
        h = me ? ttr__fnv(me, got) : 0;
        if (!ttr__hash_ref(pname, 1024, &want_m, &want_h)) t_check(0, nmname, "no line in tests/ref/bpe_hashes.txt");
        else t_check(nm == want_m && h == want_h, nmname, "%d merges hash %016llx, HF: %d merges hash %016llx", nm,
                     (unsigned long long)h, want_m, (unsigned long long)want_h);
        free(me);
    }
    free(text);
    free(ref);
}

static void ttr__hf_shakespeare(void) {
    char path[512], *text, *me;
    size_t n, got;
    int nm = -1, want_m;
    uint64_t want_h, h;
    snprintf(path, sizeof path, "%s/tinyshakespeare.txt", t_shared_dir());
    if (!(text = t_slurp(path, &n))) { t_skip("tok.train.hf_shakespeare", "no tinyshakespeare.txt in ../shared/data (LT_SHARED_DIR)"); return; }
    me = ttr__train_merges(text, n, 4096, LT_PRETOK_GPT2, &got, &nm);
    h = me ? ttr__fnv(me, got) : 0;
    if (!ttr__hash_ref("tinyshakespeare", 4096, &want_m, &want_h)) t_check(0, "tok.train.hf_shakespeare", "no line in tests/ref/bpe_hashes.txt");
    else t_check(nm == want_m && h == want_h, "tok.train.hf_shakespeare", "vocab 4096: %d merges hash %016llx, HF: %d "
                 "merges hash %016llx", nm, (unsigned long long)h, want_m, (unsigned long long)want_h);
    free(me);
    free(text);
}

/* Merge i's two halves and result as text "left+right=result" (bytes; printable in these tests). */
static void ttr__merge_str(const lt_bpe *v, int i, char *out, size_t cap) {
    int l, r, c = lt_bpe_merge(v, i, &l, &r);
    size_t nl, nr, nc;
    const unsigned char *a = lt_bpe_token(v, l, &nl), *b = lt_bpe_token(v, r, &nr), *m = lt_bpe_token(v, c, &nc);
    if (c < 0 || !a || !b || !m) { snprintf(out, cap, "?"); return; }
    snprintf(out, cap, "%.*s+%.*s=%.*s", (int)nl, (const char *)a, (int)nr, (const char *)b, (int)nc, (const char *)m);
}

/* Hand-checked cases: overlapping pairs merge left to right ("aaaa": (a,a) occurs 3 times, makes
   "aa aa", then one (aa,aa)); ties go to the smaller pair, and the space byte's id sorts after
   the letters' (GPT-2 order), so "ab cd" merges a+b, then c+d, then " "+cd. */
static void ttr__by_hand(void) {
    struct { const char *text, *want; int vocab; } c[] = {
        {"aaaa", "a+a=aa|aa+aa=aaaa|", 300},
        {"ab cd", "a+b=ab|c+d=cd| +cd= cd|", 300},
        {"ab cd", "a+b=ab|", 258},                /* vocab 258: one special, 256 bytes, one merge */
        {"xyxyxy", "x+y=xy|xy+xy=xyxy|xyxy+xy=xyxyxy|", 400},
    };
    int k, i;
    for (k = 0; k < (int)(sizeof c / sizeof c[0]); k++) {
        lt_ctx *ctx = lt_ctx_create(1);
        lt_bpe_opts o = lt_bpe_defaults();
        lt_bpe *v;
        char got[512] = "", one[128], name[64];
        o.vocab_size = c[k].vocab;
        v = lt_bpe_train(ctx, c[k].text, strlen(c[k].text), &o);
        for (i = 0; v && i < lt_bpe_n_merges(v); i++) {
            ttr__merge_str(v, i, one, sizeof one);
            strncat(got, one, sizeof got - strlen(got) - 2);
            strcat(got, "|");
        }
        snprintf(name, sizeof name, "tok.train.by_hand/%d", k);
        t_check(v && strcmp(got, c[k].want) == 0 && lt_bpe_vocab_size(v) == 257 + lt_bpe_n_merges(v), name,
                "\"%s\" vocab %d: merges %s, want %s", c[k].text, c[k].vocab, got, c[k].want);
        lt_bpe_free(v);
        lt_ctx_destroy(ctx);
    }
}

/* The first ids: specials, then bytes in GPT-2's order ('!' first, ' ' at 188+32). */
static void ttr__ids(void) {
    lt_ctx *ctx = lt_ctx_create(1);
    static const char *const sp[2] = {"<|endoftext|>", "<|pad|>"};
    lt_bpe_opts o = lt_bpe_defaults();
    lt_bpe *v;
    size_t n0, n1, n2, n3;
    const unsigned char *t0, *t1, *t2, *t3;
    o.n_special = 2;
    o.special = sp;
    o.vocab_size = 300;
    v = lt_bpe_train(ctx, "", 0, &o);
    t0 = lt_bpe_token(v, 1, &n0);
    t1 = lt_bpe_token(v, 2, &n1);
    t2 = lt_bpe_token(v, 2 + 188 + 32, &n2);
    t3 = lt_bpe_token(v, 2 + 255, &n3);
    t_check(v && lt_bpe_vocab_size(v) == 258 && lt_bpe_n_merges(v) == 0 && n0 == 7 && memcmp(t0, "<|pad|>", 7) == 0 &&
            n1 == 1 && t1[0] == '!' && n2 == 1 && t2[0] == ' ' && n3 == 1 && t3[0] == 0xad &&
            !lt_bpe_token(v, 258, &n0) && lt_bpe_merge(v, 0, NULL, NULL) == -1, "tok.train.ids", "vocab %d",
            lt_bpe_vocab_size(v));
    lt_bpe_free(v);
    lt_ctx_destroy(ctx);
}

/* min_frequency stops at the first pair that occurs fewer times. */
static void ttr__min_frequency(void) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_bpe_opts o = lt_bpe_defaults();
    lt_bpe *v;
    const char *text = "ab ab ab cd cd";  /* (a,b) 3, ( ,a) 2, ( ,c) 2, (c,d) 2 */
    o.vocab_size = 1000;
    o.min_frequency = 3;
    v = lt_bpe_train(ctx, text, strlen(text), &o);
    t_check(v && lt_bpe_n_merges(v) == 1, "tok.train.min_frequency", "%d merges, want 1", lt_bpe_n_merges(v));
    lt_bpe_free(v);
    lt_ctx_destroy(ctx);
}

static void ttr__bad_args(void) {
    static const char *const dup[2] = {"<s>", "<s>"}, *const empty[1] = {""};
    struct { int vocab, nsp; const char *const *sp; const char *text; size_t n; const char *want; } c[] = {
        {256, 1, NULL, "x", 1, "vocab_size is 256"},
        {1 << 25, 0, NULL, "x", 1, "vocab_size is 33554432"},
        {300, 2, dup, "x", 1, "special[0] and special[1] are both \"<s>\""},
        {300, 1, empty, "x", 1, "special[0] is NULL or empty"},
        {300, -1, NULL, "x", 1, "n_special is -1"},
        {300, 0, NULL, NULL, 5, "text is NULL but n is 5"},
        {300, 0, NULL, "x", 1, "pattern is 99"},
    };
    int k;
    for (k = 0; k < (int)(sizeof c / sizeof c[0]); k++) {
        lt_ctx *ctx = lt_ctx_create(1);
        lt_bpe_opts o = lt_bpe_defaults();
        lt_bpe *v;
        char name[64];
        o.vocab_size = c[k].vocab;
        if (c[k].sp || c[k].nsp <= 0) { o.n_special = c[k].nsp; o.special = c[k].sp; }
        if (strstr(c[k].want, "pattern")) o.pattern = (lt_pretok)99;
        v = lt_bpe_train(ctx, c[k].text, c[k].n, &o);
        snprintf(name, sizeof name, "tok.train.bad_args/%d", k);
        t_check(!v && strstr(lt_error(ctx), c[k].want) != NULL, name, "got \"%s\", want \"%s\"", lt_error(ctx), c[k].want);
        lt_bpe_free(v);
        lt_ctx_destroy(ctx);
    }
}

/* The saved files load back with @@TOK's loaders: the same tokens and merges (rank = learned
   order), the special token, decode(encode(text)) == text, and the JSON and GPT-2 pair encode the
   text to the same ids, fewer than its bytes. */
static void ttr__load_back(void) {
    char js[256], enc[256], bpe[256];
    size_t n, k0, k1;
    char *text = t_slurp("tests/ref/bpe_text.txt", &n), *back = NULL;
    lt_ctx *ctx = lt_ctx_create(1);
    lt_bpe_opts o = lt_bpe_defaults();
    lt_bpe *v;
    lt_tokenizer *a = NULL, *b = NULL;
    int32_t *ia = NULL, *ib = NULL;
    int64_t na = -1, nb = -2, nback = -1;
    int i, bad_tok = -1, bad_merge = -1;
    o.vocab_size = 700;
    snprintf(js, sizeof js, "%s/ttr_tokenizer.json", t_tmp_dir());
    snprintf(enc, sizeof enc, "%s/ttr_encoder.json", t_tmp_dir());
    snprintf(bpe, sizeof bpe, "%s/ttr_vocab.bpe", t_tmp_dir());
    v = text ? lt_bpe_train(ctx, text, n, &o) : NULL;
    if (v && lt_bpe_save_json(ctx, v, js) == LT_OK && lt_bpe_save_gpt2(ctx, v, enc, bpe) == LT_OK) {
        a = lt_tok_load_json(ctx, js);
        b = lt_tok_load_gpt2(ctx, enc, bpe);
    }
    if (a && b) {
        for (i = 0; i < lt_bpe_vocab_size(v) && bad_tok < 0; i++) {
            const unsigned char *x = lt_bpe_token(v, i, &k0);
            const char *y = lt_tok_token(a, i, &k1);
            if (!y || k0 != k1 || memcmp(x, y, k0) != 0) bad_tok = i;
        }
        for (i = 0; i < lt_bpe_n_merges(v) && bad_merge < 0; i++) {
            int l = 0, r = 0, c = lt_bpe_merge(v, i, &l, &r);
            int32_t rank = -1;
            if (lt_tok_merge(a, l, r, &rank) != c || rank != i) bad_merge = i;
        }
        ia = (int32_t *)malloc((n + 1) * sizeof *ia);
        ib = (int32_t *)malloc((n + 1) * sizeof *ib);
        back = (char *)malloc(n + 1);
        if (ia && ib && back) {
            na = lt_tok_encode(a, text, n, 0, ia, (int64_t)n);
            nb = lt_tok_encode(b, text, n, 0, ib, (int64_t)n);
            nback = lt_tok_decode(a, ia, na, back, n);
        }
    }
    if (lt_failed(ctx)) printf("     %s\n", lt_error(ctx));
    t_check(a && b && lt_tok_vocab_size(a) == lt_bpe_vocab_size(v) && lt_tok_vocab_size(b) == lt_bpe_vocab_size(v) &&
            bad_tok < 0 && bad_merge < 0 && lt_tok_num_merges(a) == lt_bpe_n_merges(v) &&
            lt_tok_special(a, "<|endoftext|>") == 0 && lt_tok_special(b, "<|endoftext|>") == 0,
            "tok.train.load_back.vocab", "vocab %d/%d/%d, first bad token %d, first bad merge %d", lt_bpe_vocab_size(v),
            lt_tok_vocab_size(a), lt_tok_vocab_size(b), bad_tok, bad_merge);
    t_check(na > 0 && na == nb && na < (int64_t)n && memcmp(ia, ib, (size_t)na * sizeof *ia) == 0 &&
            nback == (int64_t)n && memcmp(back, text, n) == 0, "tok.train.load_back.encode",
            "%lld ids (json) vs %lld (gpt2 pair) for %zu bytes; decoded %lld bytes", (long long)na, (long long)nb, n,
            (long long)nback);
    free(ia); free(ib); free(back); free(text);
    lt_tok_free(a);
    lt_tok_free(b);
    lt_bpe_free(v);
    lt_ctx_destroy(ctx);
}

static void test_tok_train_all(void) {
    if (t_want("tok.train.hf_small")) ttr__hf_small();
    if (t_want("tok.train.hf_shakespeare")) ttr__hf_shakespeare();
    if (t_want("tok.train.by_hand")) ttr__by_hand();
    if (t_want("tok.train.ids")) ttr__ids();
    if (t_want("tok.train.min_frequency")) ttr__min_frequency();
    if (t_want("tok.train.bad_args")) ttr__bad_args();
    if (t_want("tok.train.load_back")) ttr__load_back();
}

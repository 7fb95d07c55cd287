/* test_tok.c - the tokenizers (@@TOK): the pre-tokenizer patterns on chosen cases, and (with the
   references of tests/ref/gen_tok.py) encode and decode against tiktoken and Hugging Face
   tokenizers.  #included by test_main.c. */

/* The pre-tokens of text by pattern p, joined with '|' into buf. */
static const char *tt__split(lt_pretok p, const char *text, char *buf, size_t cap) {
    size_t n = strlen(text), i = 0, o = 0, k;
    while (i < n) {
        k = lt_pretok_next(p, text + i, n - i);
        if (k == 0 || k > n - i) { snprintf(buf, cap, "(bad length %zu at %zu)", k, i); return buf; }
        if (o && o + 1 < cap) buf[o++] = '|';
        if (o + k + 1 >= cap) break;
        memcpy(buf + o, text + i, k);
        o += k;
        i += k;
    }
    buf[o] = 0;
    return buf;
}

static void tt__pretok_cases(void) {
    static const struct { lt_pretok p; const char *text, *want; } cases[] = {
        {LT_PRETOK_GPT2, "Hello world", "Hello| world"},
        {LT_PRETOK_GPT2, "I'm he's we'll they'D", "I|'m| he|'s| we|'ll| they|'|D"},
        {LT_PRETOK_GPT2, "a  b   c\n\nd", "a| | b|  | c|\n|\n|d"},
        {LT_PRETOK_GPT2, "x   ", "x|   "},
        {LT_PRETOK_GPT2, "123456 7.5!! ?", "123456| 7|.|5|!!| ?"},
        {LT_PRETOK_GPT2, "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87", "caf\xc3\xa9| \xe4\xb8\xad\xe6\x96\x87"},
        {LT_PRETOK_GPT2, "a\xff\xfe" "b", "a|\xff\xfe|b"},
        {LT_PRETOK_CL100K, "I'M HE'S we'LL", "I|'M| HE|'S| we|'LL"},
        {LT_PRETOK_CL100K, "1234567 x", "123|456|7| x"},
        {LT_PRETOK_CL100K, "\"hello\" (world)", "\"hello|\"| (|world|)"},
        {LT_PRETOK_CL100K, "a;\n\nb  \n c", "a|;\n\n|b|  \n| c"},
        {LT_PRETOK_CL100K, "x  \t y", "x|  \t| y"},
        {LT_PRETOK_QWEN2, "1234 ab", "1|2|3|4| ab"},
    };
    char buf[256], name[64];
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(name, sizeof name, "tok.pretok.case%zu", i);
        if (!t_want(name)) continue;
        tt__split(cases[i].p, cases[i].text, buf, sizeof buf);
        t_check(strcmp(buf, cases[i].want) == 0, name, "\"%s\" -> \"%s\" (want \"%s\")", cases[i].text, buf, cases[i].want);
    }
}

/* The byte alphabet is a bijection between the 256 bytes and 256 characters. */
static void tt__byte_alphabet(void) {
    int b, ok = 1;
    if (!t_want("tok.byte_alphabet")) return;
    for (b = 0; b < 256; b++) ok &= lt_tok_char_byte(lt_tok_byte_char(b)) == b;
    ok &= lt_tok_byte_char(' ') == 0x120 && lt_tok_byte_char('\n') == 0x10a && lt_tok_byte_char(0xad) == 0x143 &&
          lt_tok_char_byte('A') == 'A' && lt_tok_char_byte(0x144) == -1 && lt_tok_char_byte(0xad) == -1;
    t_check(ok, "tok.byte_alphabet", "byte <-> character map is not GPT-2's bytes_to_unicode");
}

/* ---- references: tests/ref/tok_cases.bin (tests/ref/gen_tok.py) -------------------------------- */
typedef struct {
    int n;                  /* texts */
    char **text;
    size_t *len;
    int32_t **ids[6];       /* [tokenizer * 2 + flags][text] */
    int64_t *nids[6];
} tt__cases;

static uint32_t tt__u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void tt__cases_free(tt__cases *c) {
    int i, k;
    for (i = 0; i < c->n; i++) {
        free(c->text[i]);
        for (k = 0; k < 6; k++) free(c->ids[k][i]);
    }
    free(c->text); free(c->len);
    for (k = 0; k < 6; k++) { free(c->ids[k]); free(c->nids[k]); }
    memset(c, 0, sizeof *c);
}

static int tt__cases_load(tt__cases *c) {
    size_t size, at = 12;
    unsigned char *b = (unsigned char *)t_slurp("tests/ref/tok_cases.bin", &size);
    int i, k;
    memset(c, 0, sizeof *c);
    if (!b || size < 12 || memcmp(b, "LTTOKREF", 8)) { free(b); return 0; }
    c->n = (int)tt__u32(b + 8);
    c->text = (char **)calloc((size_t)c->n, sizeof(char *));
    c->len = (size_t *)calloc((size_t)c->n, sizeof(size_t));
    for (k = 0; k < 6; k++) {
        c->ids[k] = (int32_t **)calloc((size_t)c->n, sizeof(int32_t *));
        c->nids[k] = (int64_t *)calloc((size_t)c->n, sizeof(int64_t));
    }
    for (i = 0; i < c->n; i++) {
        uint32_t n, j;
        if (at + 4 > size || (n = tt__u32(b + at)) > size - at - 4) goto bad;
        c->len[i] = n;
        c->text[i] = (char *)malloc(n + 1);
        memcpy(c->text[i], b + at + 4, n);
        c->text[i][n] = 0;
        at += 4 + n;
        for (k = 0; k < 6; k++) {
            if (at + 4 > size || (n = tt__u32(b + at)) > (size - at - 4) / 2) goto bad;
            c->nids[k][i] = n;
            c->ids[k][i] = (int32_t *)malloc((size_t)(n ? n : 1) * sizeof(int32_t));
            for (j = 0; j < n; j++) c->ids[k][i][j] = b[at + 4 + 2 * j] | b[at + 5 + 2 * j] << 8;
            at += 4 + 2 * (size_t)n;
        }
    }
    free(b);
    return at == size;
bad:
    free(b);
    tt__cases_free(c);
    return 0;
}

static lt_tokenizer *tt__gpt2(lt_ctx *ctx) {
    char e[512], v[512];
    snprintf(e, sizeof e, "%s/gpt2-bpe/encoder.json", t_shared_dir());
    snprintf(v, sizeof v, "%s/gpt2-bpe/vocab.bpe", t_shared_dir());
    if (!t_exists(e) || !t_exists(v)) return NULL;
    return lt_tok_load_gpt2(ctx, e, v);
}

/* Every text of the corpus, without and with LT_TOK_SPECIAL, encodes to the reference ids and
   decodes back to itself. */
static void tt__corpus(const char *name, lt_tokenizer *tk, int which, const tt__cases *c) {
    int i, f, bad = 0, badrt = 0, first = -1, firstf = 0;
    int32_t *ids = NULL;
    char *back = NULL, nm[96];
    for (f = 0; f < 2; f++) {
        snprintf(nm, sizeof nm, "%s%s", name, f ? ".special" : "");
        if (!t_want(nm)) continue;
        for (i = 0; i < c->n; i++) {
            const int32_t *ref = c->ids[2 * which + f][i];
            int64_t nref = c->nids[2 * which + f][i], m, k;
            ids = (int32_t *)realloc(ids, (c->len[i] + 1) * sizeof(int32_t));
            back = (char *)realloc(back, c->len[i] + 1);
            m = lt_tok_encode(tk, c->text[i], c->len[i], f ? LT_TOK_SPECIAL : 0, ids, (int64_t)c->len[i]);
            if (m != nref || memcmp(ids, ref, (size_t)(m > 0 ? m : 0) * sizeof(int32_t))) {
                if (first < 0) { first = i; firstf = f; }
                bad++;
            }
            k = m >= 0 ? lt_tok_decode(tk, ids, m, back, c->len[i]) : -1;
            if (k != (int64_t)c->len[i] || memcmp(back, c->text[i], c->len[i])) badrt++;
        }
        if (!t_check(bad == 0 && badrt == 0, nm, "%d of %d texts encode differently (first: text %d, flags %d, %lld ids, "
                     "want %lld: %s), %d do not decode back", bad, c->n, first, firstf,
                     first >= 0 ? (long long)lt_tok_encode(tk, c->text[first], c->len[first], firstf, NULL, 0) : 0LL,
                     first >= 0 ? (long long)c->nids[2 * which + firstf][first] : 0LL, lt_error(tk->ctx), badrt))
            if (first >= 0) {
                int64_t m = lt_tok_encode(tk, c->text[first], c->len[first], firstf, ids, (int64_t)c->len[first]), k;
                printf("     text \"%.200s\"\n     got ", c->text[first]);
                for (k = 0; k < m && k < 40; k++) printf("%d ", ids[k]);
                printf("\n     ref ");
                for (k = 0; k < c->nids[2 * which + firstf][first] && k < 40; k++) printf("%d ", c->ids[2 * which + firstf][first][k]);
                printf("\n");
            }
        bad = badrt = 0;
        first = -1;
    }
    free(ids);
    free(back);
}

static uint64_t tt__fnv(const int32_t *ids, int64_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t i;
    int k;
    for (i = 0; i < n; i++)
        for (k = 0; k < 4; k++) h = (h ^ (((uint32_t)ids[i] >> (8 * k)) & 0xff)) * 0x100000001b3ull;
    return h;
}

/* Whole files of ../shared/data against tests/ref/tok_hashes.txt (count and FNV-1a of the ids). */
static void tt__hashes(lt_tokenizer **tks) {
    char *text = t_slurp("tests/ref/tok_hashes.txt", NULL), *line, *next;
    for (line = text; line && *line; line = next) {
        int which, flags;
        char file[128], name[200], path[600];
        long long count;
        unsigned long long hash;
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (line[0] == '#' || sscanf(line, "%d %d %127s %lld %llx", &which, &flags, file, &count, &hash) != 5) continue;
        snprintf(name, sizeof name, "tok.file.%s.%s%s", which == 0 ? "gpt2" : which == 1 ? "llama3" : "qwen2", file,
                 flags ? ".special" : "");
        if (!t_want(name)) continue;
        snprintf(path, sizeof path, "%s/%s", t_shared_dir(), file);
        if (!tks[which] || !t_exists(path)) { t_skip(name, "no ../shared/data (LT_SHARED_DIR) with GPT-2's files and the text"); continue; }
        {
            size_t n;
            char *buf = t_slurp(path, &n), *back = (char *)malloc(n + 1);
            int32_t *ids = (int32_t *)malloc((n + 1) * sizeof(int32_t));
            int64_t m = lt_tok_encode(tks[which], buf, n, flags, ids, (int64_t)n);
            int64_t k = m >= 0 ? lt_tok_decode(tks[which], ids, m, back, n) : -1;
            uint64_t h = m >= 0 ? tt__fnv(ids, m) : 0;
            t_check(m == count && h == hash && k == (int64_t)n && !memcmp(back, buf, n), name,
                    "%lld ids, hash 0x%016llx (want %lld, 0x%016llx); decodes back: %d", (long long)m,
                    (unsigned long long)h, count, hash, k == (int64_t)n && !memcmp(back, buf, n));
            free(buf); free(back); free(ids);
        }
    }
    free(text);
}

/* tests/ref/tok_csource.txt (C source) against tests/ref/tok_csource_ids.txt (tiktoken's ids, by
   tests/ref/gen_tok_csource.py): the count, the FNV-1a hash of all ids, the first k ids, and the
   decode back to the text. */
static void tt__csource(lt_tokenizer **tks) {
    static const char *const nm[3] = {"gpt2", "llama3", "qwen2"};
    size_t n;
    char *text = t_slurp("tests/ref/tok_csource.txt", &n), *ref = t_slurp("tests/ref/tok_csource_ids.txt", NULL);
    char *line, *next;
    int rows = 0;
    if (!t_check(text && ref, "tok.csource.ref", "cannot read tests/ref/tok_csource.txt and tok_csource_ids.txt")) {
        free(text); free(ref);
        return;
    }
    for (line = ref; *line; line = next) {
        int which, pos, k, i, same = 0;
        long long count;
        unsigned long long hash;
        char name[64];
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        else next = line + strlen(line);
        if (line[0] == '#' || sscanf(line, "%d %lld %llx %d%n", &which, &count, &hash, &k, &pos) != 4 || which < 0 ||
            which > 2 || k < 0)
            continue;
        rows++;
        snprintf(name, sizeof name, "tok.csource.%s", nm[which]);
        if (!t_want(name)) continue;
        if (!tks[which]) { t_skip(name, "no GPT-2 encoder.json / vocab.bpe in ../shared/data (LT_SHARED_DIR)"); continue; }
        {
            int32_t *ids = (int32_t *)malloc((n + 1) * sizeof(int32_t));
            char *back = (char *)malloc(n + 1), *p = line + pos;
            int64_t m = ids ? lt_tok_encode(tks[which], text, n, 0, ids, (int64_t)n) : -1;
            int64_t b = m >= 0 && back ? lt_tok_decode(tks[which], ids, m, back, n) : -1;
            uint64_t h = m >= 0 ? tt__fnv(ids, m) : 0;
            for (i = 0; i < k && i < m; i++, same++) {
                long v = strtol(p, &p, 10);
                if (v != ids[i]) break;
            }
            t_check(m == count && h == hash && same == k && b == (int64_t)n && !memcmp(back, text, n), name,
                    "%lld ids, hash 0x%016llx (tiktoken: %lld, 0x%016llx); the first %d of %d equal; decodes back: %d",
                    (long long)m, (unsigned long long)h, count, hash, same, k, b == (int64_t)n && !memcmp(back, text, n));
            free(ids); free(back);
        }
    }
    t_check(rows == 3, "tok.csource.rows", "%d rows in tests/ref/tok_csource_ids.txt (want 3)", rows);
    free(text); free(ref);
}

/* The two BPE merge loops (scan for short pre-tokens, heap for long ones) agree on random byte
   strings and on runs that merge a lot. */
static void tt__bpe_paths(lt_tokenizer *tk, const char *name) {
    lt_rng r;
    int t, bad = 0;
    int32_t a[600], b[600], x[600], y[600], h[3600];
    if (!t_want(name)) return;
    lt_rng_seed(&r, 7);
    for (t = 0; t < 400; t++) {
        int64_t n = 2 + (int64_t)(lt_rng_u64(&r) % 500), i, na, nb;
        int mode = t % 4;
        for (i = 0; i < n; i++) {
            int c = mode == 0 ? (int)(lt_rng_u64(&r) % 256) : mode == 1 ? 'a' + (int)(lt_rng_u64(&r) % 26)
                  : mode == 2 ? "the quick brown fox "[i % 20] : (i % 7 == 0 ? ' ' : 'e');
            a[i] = b[i] = tk->byte_id[c];
        }
        na = lt__tok_bpe_scan(tk, a, x, y, n);
        nb = lt__tok_bpe_heap(tk, b, x, y, h, n);
        if (na != nb || memcmp(a, b, (size_t)na * sizeof(int32_t))) bad++;
    }
    t_check(bad == 0, name, "%d of 400 byte strings merge differently by scanning and by the heap", bad);
}

/* decode(encode(x)) == x for random byte strings (valid UTF-8 or not) and random code points. */
static void tt__roundtrip(lt_tokenizer *tk, const char *name) {
    lt_rng r;
    int t, bad = 0, k;
    char text[2048], back[2048];
    int32_t ids[2048];
    if (!t_want(name)) return;
    lt_rng_seed(&r, 11);
    for (t = 0; t < 600; t++) {
        size_t n = 0, lim = 1 + (size_t)(lt_rng_u64(&r) % 1500);
        int64_t m, d;
        while (n < lim) {
            if (t % 3 == 0) text[n++] = (char)(lt_rng_u64(&r) % 256);
            else {
                unsigned char u[4];
                uint32_t cp = t % 3 == 1 ? (uint32_t)(lt_rng_u64(&r) % 0x110000) : (uint32_t)(lt_rng_u64(&r) % 0x3100);
                if (cp >= 0xd800 && cp <= 0xdfff) cp = ' ';
                for (k = 0; k < (int)lt__tok_put_utf8(u, cp) && n < sizeof text; k++) text[n++] = (char)u[k];
            }
        }
        m = lt_tok_encode(tk, text, n, t % 2 ? LT_TOK_SPECIAL : 0, ids, (int64_t)n);
        d = m >= 0 ? lt_tok_decode(tk, ids, m, back, sizeof back) : -1;
        if (d != (int64_t)n || memcmp(back, text, n)) bad++;
    }
    t_check(bad == 0, name, "%d of 600 random texts do not decode back to themselves (%s)", bad, lt_error(tk->ctx));
}

/* Counting without out, a short out, special tokens, NULLs, ids out of range. */
static void tt__api(lt_tokenizer *tk, const char *name) {
    const char *text = "Hello world<|endoftext|> again";
    int32_t ids[64], few[2] = {-7, -7}, eot = lt_tok_special(tk, "<|endoftext|>");
    int64_t n = lt_tok_encode(tk, text, strlen(text), LT_TOK_SPECIAL, ids, 64), c0, c2;
    char out[64];
    int ok = n == 4 && eot == 50256 && ids[2] == eot && lt_tok_special(tk, "Hello") == -1;
    if (!t_want(name)) return;
    c0 = lt_tok_encode(tk, text, strlen(text), LT_TOK_SPECIAL, NULL, 0);
    c2 = lt_tok_encode(tk, text, strlen(text), LT_TOK_SPECIAL, few, 2);
    ok &= c0 == n && c2 == n && few[0] == ids[0] && few[1] == ids[1];
    ok &= lt_tok_encode(tk, text, strlen(text), 0, NULL, 0) == 10;   /* "<", "|", "end", "of", "text", "|", ">" as text */
    ok &= lt_tok_decode(tk, ids, n, NULL, 0) == (int64_t)strlen(text) && lt_tok_decode(tk, ids, n, out, 3) == (int64_t)strlen(text) &&
          !memcmp(out, "Hel", 3);
    ok &= lt_tok_encode(tk, "", 0, 0, NULL, 0) == 0 && !lt_failed(tk->ctx);
    ids[1] = 50257;
    ok &= lt_tok_decode(tk, ids, n, out, sizeof out) == -1 && strstr(lt_error(tk->ctx), "id 50257 at position 1") != NULL;
    lt_clear_error(tk->ctx);
    ids[1] = -1;
    ok &= lt_tok_decode(tk, ids, n, out, sizeof out) == -1 && strstr(lt_error(tk->ctx), "out of range") != NULL;
    lt_clear_error(tk->ctx);
    ok &= lt_tok_encode(tk, NULL, 5, 0, ids, 5) == -1 && lt_failed(tk->ctx);
    lt_clear_error(tk->ctx);
    ok &= lt_tok_encode(tk, text, 3, 0, ids, -1) == -1 && lt_failed(tk->ctx);
    lt_clear_error(tk->ctx);
    ok &= lt_tok_merge(tk, 220, 83, NULL) == 256 && lt_tok_lookup(tk, " the", 4) == 262 && lt_tok_num_merges(tk) == 50000 &&
          lt_tok_vocab_size(tk) == 50257 && lt_tok_pattern(tk) == LT_PRETOK_GPT2;
    t_check(ok, name, "encode/decode counting, short buffers, specials or errors misbehave (n %lld, %s)", (long long)n,
            lt_error(tk->ctx));
}

/* The loaded GPT-2 vocabulary holds at most 10 MB (its tables, the cache and scratch included). */
static void tt__memory(lt_tokenizer *tk, const char *name) {
    size_t m = lt_tok_memory(tk);
    if (!t_want(name)) return;
    printf("info %s: GPT-2 tokenizer holds %.2f MB after encoding\n", name, (double)m / 1e6);
    t_check(m <= 10u * 1000 * 1000, name, "%zu bytes (at most 10 MB)", m);
}

/* ---- malformed vocabularies ------------------------------------------------------------------ */
/* A small valid GPT-2-style vocabulary: the 256 byte tokens (ids 0..255 by byte value), then
   "Ġt" 256, "he" 257, "Ġthe" 258, and `extra` members; skip_byte >= 0 leaves that byte out. */
static char *tt__enc(const char *extra, int skip_byte) {
    size_t cap = 8192 + strlen(extra), o = 0;
    char *b = (char *)malloc(cap);
    int i;
    unsigned char u[4];
    o += (size_t)snprintf(b + o, cap - o, "{");
    for (i = 0; i < 256; i++) {
        size_t k = lt__tok_put_utf8(u, lt_tok_byte_char(i));
        if (i == skip_byte) continue;
        b[o++] = '"';
        if (i == '"' || i == '\\') b[o++] = '\\';
        memcpy(b + o, u, k);
        o += k;
        o += (size_t)snprintf(b + o, cap - o, "\": %d, ", i);
    }
    snprintf(b + o, cap - o, "\"\xc4\xa0t\": 256, \"he\": 257, \"\xc4\xa0the\": 258%s}", extra);
    return b;
}
static const char tt__bpe_ok[] = "#version: 0.2\n\xc4\xa0 t\nh e\n\xc4\xa0t he\n";

/* A tokenizer.json around the small vocabulary: model fields `model` (after vocab), merges, added
   tokens, pre-tokenizer and normalizer as given. */
static char *tt__json(const char *model, const char *merges, const char *added, const char *pre, const char *norm) {
    char *v = tt__enc("", -1), *b;
    size_t cap = strlen(v) + strlen(model) + strlen(merges) + strlen(added) + strlen(pre) + strlen(norm) + 256;
    b = (char *)malloc(cap);
    snprintf(b, cap, "{\"version\": \"1.0\", \"normalizer\": %s, \"pre_tokenizer\": %s, \"added_tokens\": %s, "
             "\"model\": {\"vocab\": %s, \"merges\": %s%s}}", norm, pre, added, v, merges, model);
    free(v);
    return b;
}

static void tt__errors(void) {
    static const char *const L3 = "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": "
        "\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|"
        "\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", "
        "\"add_prefix_space\": false, \"use_regex\": false}]}";
    static const char *const BL = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}";
    static const char *const MG = "[\"\xc4\xa0 t\", [\"h\", \"e\"], \"\xc4\xa0t he\"]";
    static const struct { int kind; const char *a, *b, *want; } cases[] = {
        /* kind 0: encoder.json = tt__enc(a) (b = "skip" drops byte 'x'), vocab.bpe valid */
        {0, ", \"zz\": 1.5", "", "fraction"},
        {0, ", \"zz\": \"7\"", "", "its id must be an integer"},
        {0, ", \"zz\": -3", "", "ids must be in [0, 2^31-1)"},
        {0, ", \"zz\": 99999999999999999999999", "", "ids must be in [0, 2^31-1)"},
        {0, ", \"zz\": 1000000", "", "ids must be below 2 * tokens + 256"},
        {0, ", \"zz\": 7", "", "duplicate id 7"},
        {0, ", \"he\": 300", "", "appears twice"},
        {0, ", \"\xe2\x82\xac\": 259", "", "not in the byte-level alphabet"},
        {0, ", \"\xff\": 259", "", "invalid UTF-8"},
        {0, ", \"a\\ud800\": 259", "", "without its low half"},
        {0, ", \"zz\": 259 ,", "", "expected a string"},
        {0, "} []", "", "more text after"},
        {0, "", "skip", "no token for byte 0x78"},
        /* kind 1: encoder.json valid, vocab.bpe = a */
        {1, "\xc4\xa0 t\nhe\n", "", "line 2: \"he\" is not two tokens"},
        {1, "\xc4\xa0 t\nh  e\n", "", "line 2"},
        {1, "\xc4\xa0 t\nzz e\n", "", "\"zz\", which is not a token"},
        {1, "h e\nt h\n", "", "line 2: merging \"t\" and \"h\" makes no token"},
        {1, "h e\n\xc4\xa0 t\nh e\n", "", "line 3: the merge \"h\" + \"e\" repeats merge 0"},
        {1, "h \xe2\x82\xac\n", "", "U+20AC"},
        {1, "h \xff\n", "", "invalid UTF-8"},
        /* kind 2: tokenizer.json = tt__json(a, merges, added, pre, norm) with b selecting the broken part */
        {2, "", "norm", "normalizer NFKC is not supported"},
        {2, "", "norm_seq", "normalizer Lowercase inside a Sequence is not supported"},
        {2, "", "norm_seq_empty", "a Sequence normalizer without normalizers"},
        {2, "", "norm_str", "normalizer.type must be a string"},
        {2, ", \"type\": \"WordPiece\"", "", "only BPE"},
        {2, ", \"byte_fallback\": true", "", "byte_fallback"},
        {2, ", \"continuing_subword_prefix\": \"##\"", "", "continuing_subword_prefix"},
        {2, ", \"ignore_merges\": 1", "", "ignore_merges must be true or false"},
        {2, "", "merges_num", "expected a merge"},
        {2, "", "merges_unknown", "which is not a token"},
        {2, "", "merges_three", "more than two strings"},
        {2, "", "added_dup", "duplicate id 5"},
        {2, "", "added_noid", "has no id"},
        {2, "", "pre_ws", "pre_tokenizer Whitespace is not supported"},
        {2, "", "pre_regex", "is not one of the patterns"},
        {2, "", "pre_prefix", "add_prefix_space"},
        {2, "", "pre_null", "pre_tokenizer is null"},
        {2, "", "deep", "deeper than 64"},
        {2, "", "trunc", "the end of the text"},
        {2, "", "notobj", "expected '{'"},
    };
    lt_ctx *ctx = lt_ctx_create(1);
    size_t i;
    char name[64];
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lt_tokenizer *tk = NULL;
        char *text = NULL;
        const char *b = cases[i].b;
        snprintf(name, sizeof name, "tok.errors.%s%zu", cases[i].kind == 0 ? "enc" : cases[i].kind == 1 ? "bpe" : "json", i);
        if (!t_want(name)) continue;
        lt_clear_error(ctx);
        if (cases[i].kind == 0) {
            text = tt__enc(cases[i].a, !strcmp(b, "skip") ? 'x' : -1);
            tk = lt_tok_parse_gpt2(ctx, text, strlen(text), tt__bpe_ok, strlen(tt__bpe_ok), "case");
        } else if (cases[i].kind == 1) {
            text = tt__enc("", -1);
            tk = lt_tok_parse_gpt2(ctx, text, strlen(text), cases[i].a, strlen(cases[i].a), "case");
        } else {
            char deep[400];
            int k;
            for (k = 0; k < 70; k++) { deep[k] = '['; deep[140 - k] = ']'; }
            memset(deep + 70, ' ', 1);
            deep[141] = 0;
            text = tt__json(cases[i].a,
                            !strcmp(b, "merges_num") ? "[\"h e\", 5]" : !strcmp(b, "merges_unknown") ? "[[\"h\", \"zz\"]]" :
                            !strcmp(b, "merges_three") ? "[[\"h\", \"e\", \"x\"]]" : MG,
                            !strcmp(b, "added_dup") ? "[{\"id\": 5, \"content\": \"<s>\", \"special\": true}]" :
                            !strcmp(b, "added_noid") ? "[{\"content\": \"<s>\"}]" :
                            "[{\"id\": 259, \"content\": \"<s>\", \"special\": true}]",
                            !strcmp(b, "pre_ws") ? "{\"type\": \"Whitespace\"}" :
                            !strcmp(b, "pre_regex") ? "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
                                                      "{\"Regex\": \"\\\\w+\"}}, {\"type\": \"ByteLevel\", \"use_regex\": false}]}" :
                            !strcmp(b, "pre_prefix") ? "{\"type\": \"ByteLevel\", \"add_prefix_space\": true}" :
                            !strcmp(b, "pre_null") ? "null" : !strcmp(b, "deep") ? deep : i % 2 ? BL : L3,
                            !strcmp(b, "norm") ? "{\"type\": \"NFKC\"}" :
                            !strcmp(b, "norm_seq") ? "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFC\"}, "
                                                     "{\"type\": \"Lowercase\"}]}" :
                            !strcmp(b, "norm_seq_empty") ? "{\"type\": \"Sequence\"}" :
                            !strcmp(b, "norm_str") ? "{\"type\": 5}" : "null");
            if (!strcmp(b, "trunc")) text[strlen(text) - 2] = 0;
            if (!strcmp(b, "notobj")) text[0] = '[';
            tk = lt_tok_parse_json(ctx, text, strlen(text), "case");
        }
        t_check(!tk && lt_failed(ctx) && strstr(lt_error(ctx), cases[i].want) && strstr(lt_error(ctx), "case"), name,
                "loaded=%d, message \"%s\" (want one naming the source and containing \"%s\")", tk != NULL, lt_error(ctx),
                cases[i].want);
        lt_tok_free(tk);
        free(text);
    }
    /* the valid forms load and encode alike */
    if (t_want("tok.errors.valid")) {
        char *e = tt__enc("", -1), *j1 = tt__json("", MG, "[{\"id\": 259, \"content\": \"<s>\", \"special\": true}]", BL, "null");
        char *j2 = tt__json(", \"ignore_merges\": true", MG, "[]", L3, "null");
        lt_tokenizer *a, *b, *c;
        int32_t x[32], y[32], z[32];
        int64_t nx = -1, ny = -2, nz = -3;
        lt_clear_error(ctx);
        a = lt_tok_parse_gpt2(ctx, e, strlen(e), tt__bpe_ok, strlen(tt__bpe_ok), "valid");
        b = lt_tok_parse_json(ctx, j1, strlen(j1), "valid1");
        c = lt_tok_parse_json(ctx, j2, strlen(j2), "valid2");
        if (a && b && c) {
            nx = lt_tok_encode(a, " the the<s>", 11, LT_TOK_SPECIAL, x, 32);
            ny = lt_tok_encode(b, " the the<s>", 11, 0, y, 32);
            nz = lt_tok_encode(c, " the the", 8, 0, z, 32);
        }
        t_check(a && b && c && nx == 5 && ny == 5 && nz == 2 && !memcmp(x, y, 5 * sizeof(int32_t)) && x[0] == 258 &&
                    x[1] == 258 && lt_tok_encode(b, "<s>", 3, LT_TOK_SPECIAL, z, 32) == 1 && z[0] == 259 &&
                    lt_tok_pattern(c) == LT_PRETOK_CL100K && lt_tok_vocab_size(b) == 260,
                "tok.errors.valid", "the small vocabulary in its three forms: %lld, %lld, %lld ids (%s)", (long long)nx,
                (long long)ny, (long long)nz, lt_error(ctx));
        lt_tok_free(a); lt_tok_free(b); lt_tok_free(c);
        free(e); free(j1); free(j2);
    }
    lt_ctx_destroy(ctx);
}

/* One row of the malformed corpus (tests/malformed/MANIFEST.tsv, read by test_harden.c) whose
   reader is tok_enc / tok_bpe (the file as encoder.json or vocab.bpe, paired with the valid other
   half) or tok_json.  want: "OK" or a keyword the message must hold; the message must also name
   the file.  Returns 1 when the row was run. */
static int tt__corp_row(const char *dir, const char *file, const char *reader, const char *want) {
    char name[300], path[600], other[600];
    size_t n = 0, no = 0;
    char *buf, *ob = NULL;
    lt_ctx *ctx;
    lt_tokenizer *tk;
    int ok_want = !strcmp(want, "OK");
    snprintf(name, sizeof name, "harden.lib.%s.%s", reader, file);
    if (!t_want(name)) return 0;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(other, sizeof other, "%s/%s", dir, !strcmp(reader, "tok_enc") ? "tok_valid_vocab.bpe" : "tok_valid_encoder.json");
    buf = t_slurp(path, &n);
    if (strcmp(reader, "tok_json")) ob = t_slurp(other, &no);
    if (!buf || (strcmp(reader, "tok_json") && !ob)) { t_check(0, name, "cannot read %s or %s", path, other); free(buf); free(ob); return 1; }
    ctx = lt_ctx_create(1);
    if (!strcmp(reader, "tok_json")) tk = lt_tok_parse_json(ctx, buf, n, file);
    else if (!strcmp(reader, "tok_enc")) tk = lt_tok_parse_gpt2(ctx, buf, n, ob, no, file);
    else tk = lt_tok_parse_gpt2(ctx, ob, no, buf, n, file);
    if (tk) {   /* whatever loaded must encode and decode any text */
        static const char text[] = " the cat's 123 \xe4\xb8\xad\xff<|endoftext|>\n\n";
        int32_t ids[64];
        char back[64];
        int64_t m = lt_tok_encode(tk, text, sizeof text - 1, LT_TOK_SPECIAL, ids, 64);
        if (m < 0 || lt_tok_decode(tk, ids, m, back, sizeof back) != (int64_t)sizeof text - 1 || memcmp(back, text, sizeof text - 1))
            lt_set_error(ctx, LT_ERR_STATE, "%s: loaded, but the text does not round-trip", file);
    }
    if (ok_want) t_check(tk && !lt_failed(ctx), name, "should load: %s", lt_error(ctx));
    else
        t_check(!tk && lt_failed(ctx) && strstr(lt_error(ctx), want) && strstr(lt_error(ctx), file), name,
                "loaded=%d, message \"%s\" (want an error naming the file and containing \"%s\")", tk != NULL, lt_error(ctx), want);
    lt_tok_free(tk);
    lt_ctx_destroy(ctx);
    free(buf);
    free(ob);
    return 1;
}

/* Token id's bytes in the byte-level alphabet as JSON string text at j[o..]; the new end. */
static size_t tt__put_token(char *j, size_t o, const lt_tokenizer *g, int32_t id) {
    size_t k;
    for (k = 0; k < g->len[id]; k++) {
        uint32_t ch = lt_tok_byte_char((unsigned char)g->bytes[g->off[id] + k]);
        if (ch == '"' || ch == '\\') j[o++] = '\\';
        o += lt__tok_put_utf8((unsigned char *)j + o, ch);
    }
    return o;
}

/* GPT-2 written out as a Hugging Face tokenizer.json (vocab in the byte-level alphabet, merges in
   rank order as "a b" strings, <|endoftext|> added, ByteLevel pre-tokenizer) loads with
   lt_tok_parse_json into a tokenizer that encodes the corpus and the given text alike. */
static void tt__gpt2_as_json(lt_tokenizer *g, const tt__cases *c, const char *name) {
    size_t cap = 8u << 20, o = 0, i;
    char *j = (char *)malloc(cap);
    int32_t id, *order = (int32_t *)malloc((size_t)g->nmerges * sizeof(int32_t)), *x = NULL, *y = NULL;
    lt_ctx *ctx = lt_ctx_create(1);
    lt_tokenizer *h;
    int bad = 0, t;
    if (!t_want(name)) { free(j); free(order); lt_ctx_destroy(ctx); return; }
    o += (size_t)snprintf(j + o, cap - o, "{\"added_tokens\": [{\"id\": 50256, \"content\": \"<|endoftext|>\", \"special\": true}], "
                          "\"normalizer\": null, \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
                          "\"use_regex\": true}, \"model\": {\"type\": \"BPE\", \"vocab\": {");
    for (id = 0; id < g->nvocab; id++) {   /* one token: "chars": id, */
        j[o++] = '"';
        o = tt__put_token(j, o, g, id);
        o += (size_t)snprintf(j + o, cap - o, "\": %d%s", id, id + 1 < g->nvocab ? ", " : "}, \"merges\": [");
    }
    for (i = 0; i <= g->mmask; i++)
        if (g->mslot[i].key != LT__TOK_NO_KEY) order[g->mslot[i].rank] = (int32_t)i;
    for (id = 0; id < g->nmerges; id++) {
        const lt__tok_mslot *m = &g->mslot[order[id]];
        int32_t ab[2];
        ab[0] = (int32_t)(m->key >> 32); ab[1] = (int32_t)(m->key & 0xffffffffu);
        j[o++] = '"';
        for (t = 0; t < 2; t++) {
            o = tt__put_token(j, o, g, ab[t]);
            if (t == 0) j[o++] = ' ';
        }
        o += (size_t)snprintf(j + o, cap - o, "\"%s", id + 1 < g->nmerges ? ", " : "]}}");
    }
    h = lt_tok_parse_json(ctx, j, o, "gpt2 as tokenizer.json");
    for (t = 0; h && t < c->n * 2; t++) {
        int f = t % 2;
        const char *s = c->text[t / 2];
        size_t n = c->len[t / 2];
        int64_t a, b;
        x = (int32_t *)realloc(x, (n + 1) * sizeof(int32_t));
        y = (int32_t *)realloc(y, (n + 1) * sizeof(int32_t));
        a = lt_tok_encode(g, s, n, f, x, (int64_t)n);
        b = lt_tok_encode(h, s, n, f, y, (int64_t)n);
        if (a != b || memcmp(x, y, (size_t)(a > 0 ? a : 0) * sizeof(int32_t))) bad++;
    }
    t_check(h && bad == 0 && lt_tok_vocab_size(h) == 50257 && lt_tok_num_merges(h) == 50000, name,
            "loaded %d (%s), %d of %d encodings differ from the GPT-2 files'", h != NULL, lt_error(ctx), bad, c->n * 2);
    lt_tok_free(h);
    lt_ctx_destroy(ctx);
    free(j); free(order); free(x); free(y);
}

/* The one UTF-8 validator (lt__utf8_next, @@CORE.utf8) against the definition read plainly: a
   lead byte gives the length, the continuation bits the value, and the value must need that
   length (no overlong form), be no surrogate and at most U+10FFFF.  Every 1-, 2- and 3-byte
   string, and the 4-byte ones with any first two bytes and the last two from a set of edges;
   also cut short (n below the length). */
static int tt__utf8_plain(const unsigned char *s, size_t n, uint32_t *cp) {
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    int len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0, k;
    uint32_t v = len == 1 ? s[0] : len == 2 ? s[0] & 0x1fu : len == 3 ? s[0] & 0x0fu : s[0] & 0x07u;
    if (!len || (size_t)len > n) return 0;
    for (k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80) return 0;
        v = (v << 6) | (s[k] & 0x3fu);
    }
    if (v < least[len] || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff) return 0;
    *cp = v;
    return len;
}
static void tt__utf8_validator(void) {
    static const unsigned char edge[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xe0, 0xf4, 0xff};
    unsigned long bad = 0, tried = 0;
    uint32_t a, b;
    unsigned char s[4], first[4] = {0};
    size_t n;
    if (!t_want("tok.utf8.validator")) return;
    for (a = 0; a < (1u << 24); a++) {   /* every 3-byte string; cut to 1 and 2 bytes once per first two */
        s[0] = (unsigned char)(a >> 16); s[1] = (unsigned char)(a >> 8); s[2] = (unsigned char)a;
        for (n = (a & 0xff) ? 3 : 1; n <= 3; n++) {
            uint32_t c1 = 0xffffffffu, c2 = 0xffffffffu;
            int k1 = lt__utf8_next(s, n, &c1), k2 = tt__utf8_plain(s, n, &c2);
            tried++;
            if ((k1 != k2 || (k1 && c1 != c2)) && !bad++) memcpy(first, s, 3);
        }
    }
    for (a = 0; a < (1u << 16); a++)   /* 4 bytes; and lt__utf8_bad_at against a walk by the definition */
        for (b = 0; b < sizeof edge * sizeof edge; b++) {
            uint32_t c1 = 0xffffffffu, c2 = 0xffffffffu, c3;
            int k1, k2, k;
            size_t i = 0;
            s[0] = (unsigned char)(a >> 8); s[1] = (unsigned char)a;
            s[2] = edge[b % sizeof edge]; s[3] = edge[b / sizeof edge];
            k1 = lt__utf8_next(s, 4, &c1);
            k2 = tt__utf8_plain(s, 4, &c2);
            while (i < 4 && (k = tt__utf8_plain(s + i, 4 - i, &c3)) > 0) i += (size_t)k;
            tried++;
            if ((k1 != k2 || (k1 && c1 != c2) || lt__utf8_bad_at(s, 4) != i) && !bad++) memcpy(first, s, 4);
        }
    t_check(bad == 0, "tok.utf8.validator", "%lu of %lu strings differ from the definition (first %02x %02x %02x %02x)",
            bad, tried, first[0], first[1], first[2], first[3]);
}

/* ---- encoding a file in pieces (lt_loader_open_tok) ---- */

/* Text for the piecewise encoder, in random order (fixed seed): words, contractions, digits, runs
   of spaces and tabs before newlines, CRLF, blank lines, punctuation before newlines, special-token
   strings next to newlines, UTF-8, invalid bytes, and runs of spaces longer than a piece. */
static char *tt__piece_text(size_t want, size_t *n) {
    static const char *const parts[] = {
        "hello", "The", "we'LL", "I'm", "x", "12345", "7", " ", "  ", "   ", "\t", " \t ", "\n", "\n", "\n", "\n",
        "\r\n", "\n\n", " \n", "   \n", "\n ", ".", "!?", "...\n", ";\n\n", "<|endoftext|>", "<|endoftext|>\n",
        "\n<|endoftext|>", "caf\xc3\xa9", "\xe4\xb8\xad\xe6\x96\x87", "\xf0\x9f\x98\x80", "\xff", "\xc3", "a\nb", "9\nZ",
        "Q\n", "\n1", "x\n<|endoftext|>y\nz"};
    lt_rng r;
    size_t cap = want + 8192, len = 0;
    char *s = (char *)malloc(cap);
    lt_rng_seed(&r, 24);
    while (s && len < want) {
        uint64_t u = lt_rng_u64(&r);
        if (u % 997 == 0) {   /* a long run of spaces (or tabs), then a newline or a word */
            size_t k = 100 + (size_t)(u >> 20) % 5000;
            memset(s + len, (u >> 8) & 1 ? ' ' : '\t', k);
            len += k;
        } else {
            const char *p = parts[(u >> 8) % (sizeof parts / sizeof parts[0])];
            memcpy(s + len, p, strlen(p));
            len += strlen(p);
        }
    }
    *n = len;
    return s;
}

/* Every cut the piecewise encoder may make (lt__tok_last_cut's rule) is a pre-token boundary of the
   whole text under each pattern, and the pre-tokens before it come out the same when the text ends
   there; a cut at any newline does not (the text is hard enough to tell). */
static void tt__piece_rule(const char *s, size_t n) {
    static const lt_pretok pats[3] = {LT_PRETOK_GPT2, LT_PRETOK_CL100K, LT_PRETOK_QWEN2};
    unsigned char *isb = (unsigned char *)calloc(n + 1, 1);
    int p;
    for (p = 0; p < 3 && isb; p++) {
        size_t i, c, cuts = 0, bad = 0, naive_bad = 0, first_bad = 0;
        char name[64];
        memset(isb, 0, n + 1);
        for (i = 0; i < n; i += lt_pretok_next(pats[p], s + i, n - i)) isb[i] = 1;
        isb[n] = 1;
        for (c = 2; c < n; c++) {
            int rule = s[c - 1] == '\n' && lt__tok_alnum((unsigned char)s[c]) && lt__tok_alnum((unsigned char)s[c - 2]);
            size_t b, j, k;
            int same = isb[c];
            if (s[c - 1] != '\n') continue;
            for (b = c > 300 ? c - 300 : 0; b > 0 && !isb[b]; b--) {}
            for (i = b; same && i < c; i += k) {   /* s[b..c) alone, b a boundary of the whole */
                k = lt_pretok_next(pats[p], s + i, c - i);
                for (j = i + 1; j < i + k; j++) if (isb[j]) same = 0;
                if (!isb[i + k]) same = 0;
            }
            if (rule) { cuts++; if (!same && !bad++) first_bad = c; }
            else if (!same) naive_bad++;
        }
        snprintf(name, sizeof name, "tok.pieces.rule.%s", p == 0 ? "gpt2" : p == 1 ? "cl100k" : "qwen2");
        t_check(cuts > 100 && bad == 0 && naive_bad > 0, name, "%zu cuts, %zu of them change the pre-tokens (first at "
                "%zu); %zu other newlines would (want > 0)", cuts, bad, first_bad, naive_bad);
    }
    free(isb);
}

/* The file at path encoded in pieces of several sizes (stored as uint16 and as int32) equals the
   whole text encoded at once. */
static void tt__pieces(lt_tokenizer *tk, const char *tkname, const char *path, const char *s, size_t n) {
    static const size_t piece[3] = {1, 64, 4096};
    int f, e, q, ok;
    char why[700];
    int32_t *ref = (int32_t *)malloc((n + 1) * sizeof(int32_t));
    for (f = 0; f < 2 && ref; f++) {
        char name[96];
        int64_t m = lt_tok_encode(tk, s, n, f ? LT_TOK_SPECIAL : 0, ref, (int64_t)n), i;
        snprintf(name, sizeof name, "tok.pieces.%s%s", tkname, f ? ".special" : "");
        if (!t_want(name)) continue;
        ok = 1;
        for (e = 0; e < 2 && ok; e++)
            for (q = 0; q < 3 && ok; q++) {
                lt__store *st = lt__tok_store_file(tk->ctx, tk, path, f ? LT_TOK_SPECIAL : 0, piece[q], e ? 4 : 0,
                                                   "tt__pieces");
                int64_t diff = -1;
                int esz = st ? st->esz : 0;
                for (i = 0; st && diff < 0 && i < m && i < st->n; i++)
                    if (lt__tk(st->p, st->esz, i) != ref[i]) diff = i;
                ok = st && st->n == m && diff < 0 && esz == (e ? 4 : lt_tok_vocab_size(tk) <= 65536 ? 2 : 4);
                if (!ok)
                    snprintf(why, sizeof why, "piece %zu, esz %d: %lld ids (whole text: %lld), first difference at %lld; %.200s",
                             piece[q], esz, st ? (long long)st->n : -1LL, (long long)m, (long long)diff,
                             st ? "" : lt_error(tk->ctx));
                lt__store_release(st);
            }
        t_check(ok, name, "%s", why);
        lt_clear_error(tk->ctx);
    }
    free(ref);
}

/* tinyshakespeare through lt_loader_open_tok: GPT-2's ids as uint16, equal to the whole text's. */
static void tt__pieces_shakespeare(lt_ctx *ctx, lt_tokenizer *gpt2) {
    const char *name = "tok.pieces.shakespeare";
    char path[600];
    size_t n;
    char *text;
    if (!t_want(name)) return;
    snprintf(path, sizeof path, "%s/tinyshakespeare.txt", t_shared_dir());
    if (!gpt2 || !(text = t_slurp(path, &n))) { t_skip(name, "no tinyshakespeare.txt and gpt2-bpe/ in ../shared/data (LT_SHARED_DIR)"); return; }
    {
        int32_t *ref = (int32_t *)malloc((n + 1) * sizeof(int32_t)), *got = NULL;
        int64_t m = lt_tok_encode(gpt2, text, n, 0, ref, (int64_t)n), k = 0;
        lt_loader *ld = lt_loader_open_tok(ctx, path, gpt2, 0, 4, 64);
        if (ld && (got = (int32_t *)malloc((size_t)(m + 1) * sizeof(int32_t))) && lt_loader_read(ld, 0, m, got) == LT_OK)
            for (k = 0; k < m && got[k] == ref[k]; k++) {}
        t_check(ld && m == 338025 && lt_loader_num_tokens(ld) == m && lt_loader_token_bytes(ld) == 2 && k == m, name,
                "%s; %lld ids (whole text: %lld, tiktoken: 338025), %d bytes each, equal up to %lld",
                ld ? "opened" : lt_error(ctx), ld ? (long long)lt_loader_num_tokens(ld) : -1LL, (long long)m,
                ld ? lt_loader_token_bytes(ld) : 0, (long long)k);
        lt_loader_destroy(ld);
        free(ref); free(got); free(text);
    }
    lt_clear_error(ctx);
}

static void tt__pieces_all(lt_ctx *ctx, lt_tokenizer **tks) {
    static const char *const nm[3] = {"gpt2", "llama3", "qwen2"};
    char path[600];
    size_t n;
    char *s = tt__piece_text(200000, &n);
    FILE *f;
    int k;
    lt_loader *ld;
    snprintf(path, sizeof path, "%s/tok_pieces.txt", t_tmp_dir());
    if (!s || !(f = fopen(path, "wb")) || fwrite(s, 1, n, f) != n || fclose(f) != 0) {
        t_check(0, "tok.pieces", "cannot write %s", path);
        free(s);
        return;
    }
    if (t_want("tok.pieces.rule")) tt__piece_rule(s, n);
    for (k = 0; k < 3; k++) if (tks[k]) tt__pieces(tks[k], nm[k], path, s, n);
    tt__pieces_shakespeare(ctx, tks[0]);
    if (t_want("tok.pieces.errors") && tks[1]) {
        ld = lt_loader_open_tok(ctx, "build/tmp/no_such_file.txt", tks[1], 0, 1, 1);
        t_check(!ld && strstr(lt_error(ctx), "no_such_file.txt"), "tok.pieces.errors.missing", "%s", lt_error(ctx));
        lt_clear_error(ctx);
        ld = lt_loader_open_tok(ctx, path, tks[1], 0, 1000000, 1000);
        t_check(!ld && strstr(lt_error(ctx), "B*T+1"), "tok.pieces.errors.short", "%s", lt_error(ctx));
        lt_clear_error(ctx);
        ld = lt_loader_open_tok(ctx, path, NULL, 0, 1, 1);
        t_check(!ld && strstr(lt_error(ctx), "tk is NULL"), "tok.pieces.errors.null", "%s", lt_error(ctx));
        lt_clear_error(ctx);
    }
    free(s);
}

/* ---- NFC: tests/ref/nfc_cases.bin and tests/ref/tok_nfc.bin (tests/ref/gen_nfc.py) ------------- */
static uint64_t tt__fnv_bytes(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* Chosen cases, byte for byte. */
static void tt__nfc_cases(void) {
    static const struct { const char *in, *want; } cases[] = {
        {"", ""},
        {"plain ASCII", "plain ASCII"},
        {"e\xcc\x81", "\xc3\xa9"},                                        /* e + acute -> U+00E9 */
        {"\xe2\x84\xab", "\xc3\x85"},                                     /* U+212B ANGSTROM SIGN -> U+00C5 */
        {"\xe2\x84\xa6", "\xce\xa9"},                                     /* U+2126 OHM SIGN -> U+03A9 */
        {"a\xcc\x81\xcc\xa3", "\xe1\xba\xa1\xcc\x81"},                    /* a acute dot-below -> U+1EA1 + acute */
        {"a\xcc\xa3\xcc\x81", "\xe1\xba\xa1\xcc\x81"},
        {"\xe0\xa5\x98", "\xe0\xa4\x95\xe0\xa4\xbc"},                     /* U+0958 (an exclusion) stays decomposed */
        {"\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", "\xea\xb0\x81"},         /* jamo G A G -> U+AC01 */
        {"\xea\xb0\x80\xe1\x86\xa8", "\xea\xb0\x81"},                     /* U+AC00 + T -> U+AC01 */
        {"\xea\xb0\x81\xe1\x86\xa8", "\xea\xb0\x81\xe1\x86\xa8"},         /* an LVT syllable takes no T */
        {"\xcd\x84", "\xcc\x88\xcc\x81"},                                 /* U+0344 -> diaeresis + acute */
        {"e\xff\xcc\x81", "e\xff\xcc\x81"},                               /* an invalid byte between: no join */
        {"e\xcc", "e\xcc"},                                               /* a sequence cut short at the end */
        {"\xe0\xaf\x86\xe0\xae\xbe", "\xe0\xaf\x8a"},                     /* Tamil two-part vowel: starter + starter */
        {"\xe0\xaf\x86\xcc\x81\xe0\xae\xbe", "\xe0\xaf\x86\xcc\x81\xe0\xae\xbe"},   /* blocked by the mark */
    };
    char out[64], name[64];
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].in), w = strlen(cases[i].want);
        char *in = (char *)malloc(n ? n : 1);   /* exactly n bytes: nothing may be read past them */
        int64_t m;
        snprintf(name, sizeof name, "tok.nfc.case%zu", i);
        if (!t_want(name)) { free(in); continue; }
        memcpy(in, cases[i].in, n);
        m = lt_tok_nfc(NULL, in, n, out, sizeof out);
        t_check(m == (int64_t)w && !memcmp(out, cases[i].want, w), name, "%zu bytes -> %lld bytes (want %zu)", n, (long long)m, w);
        free(in);
    }
    if (t_want("tok.nfc.api")) {
        lt_ctx *ctx = lt_ctx_create(1);
        int ok = lt_tok_nfc(NULL, "e\xcc\x81x", 4, NULL, 0) == 3 && lt_tok_nfc(ctx, NULL, 0, NULL, 0) == 0;
        ok &= lt_tok_nfc(ctx, "e\xcc\x81x", 4, out, 1) == 3 && (unsigned char)out[0] == 0xc3;   /* truncated */
        ok &= !lt_failed(ctx) && lt_tok_nfc(ctx, NULL, 3, out, 4) == -1 && strstr(lt_error(ctx), "lt_tok_nfc");
        lt_clear_error(ctx);
        ok &= lt_tok_nfc(ctx, "ab", 2, NULL, 4) == -1 && lt_failed(ctx);
        t_check(ok, "tok.nfc.api", "measuring, truncation or argument errors (%s)", lt_error(ctx));
        lt_ctx_destroy(ctx);
    }
}

/* Every case of the reference: the NFC's length and FNV-1a equal Python's, and NFC is idempotent. */
static void tt__nfc_ref(void) {
    size_t size, at = 12;
    unsigned char *b;
    uint32_t n, i, count;
    int bad = 0, first = -1, idem = 0;
    if (!t_want("tok.nfc.ref")) return;
    b = (unsigned char *)t_slurp("tests/ref/nfc_cases.bin", &size);
    if (!b || size < 12 || memcmp(b, "LTNFCREF", 8)) {
        t_check(0, "tok.nfc.ref", "cannot read tests/ref/nfc_cases.bin (/work/venv/bin/python tests/ref/gen_nfc.py)");
        free(b);
        return;
    }
    count = tt__u32(b + 8);
    for (i = 0; i < count; i++) {
        char *in, *out, *again;
        int64_t m, m2;
        uint64_t h;
        if (at + 4 > size || (n = tt__u32(b + at)) > size - at - 16) { bad++; first = (int)i; break; }
        in = (char *)malloc(n ? n : 1);
        memcpy(in, b + at + 4, n);
        at += 4 + n;
        h = (uint64_t)tt__u32(b + at + 4) | (uint64_t)tt__u32(b + at + 8) << 32;
        out = (char *)malloc(3 * (size_t)n + 1);
        again = (char *)malloc(3 * (size_t)n + 1);
        m = lt_tok_nfc(NULL, in, n, out, 3 * (size_t)n + 1);
        if (m != (int64_t)tt__u32(b + at) || tt__fnv_bytes(out, (size_t)m) != h) {
            if (first < 0) first = (int)i;
            bad++;
        } else {
            m2 = lt_tok_nfc(NULL, out, (size_t)m, again, 3 * (size_t)n + 1);
            idem += m2 != m || memcmp(out, again, (size_t)m);
        }
        at += 12;
        free(in); free(out); free(again);
    }
    t_check(bad == 0 && idem == 0 && at == size, "tok.nfc.ref", "%d of %u cases differ from Python's NFC (first: case %d), "
            "%d not idempotent, %zu of %zu bytes read", bad, count, first, idem, at, size);
    free(b);
}

/* tok_qwen2.json with the NFC normalizer (as gen_nfc.py makes it): the corpus of tok_cases.bin
   encodes to tok_nfc.bin's ids (or tok_cases.bin's where NFC changes nothing) and decodes to the
   text's NFC.  norm: the normalizer's JSON. */
static lt_tokenizer *tt__qwen2_nfc(lt_ctx *ctx, const char *norm) {
    size_t n;
    char *s = t_slurp("tests/ref/tok_qwen2.json", &n), *p, *t;
    lt_tokenizer *tk = NULL;
    static const char key[] = "\"normalizer\":null";
    if (!s || !(p = strstr(s, key))) { free(s); return NULL; }
    t = (char *)malloc(n + strlen(norm) + 32);
    memcpy(t, s, (size_t)(p - s));
    n = (size_t)(p - s) + (size_t)sprintf(t + (p - s), "\"normalizer\":%s%s", norm, p + strlen(key));
    tk = lt_tok_parse_json(ctx, t, n, "tok_qwen2.json with NFC");
    free(s);
    free(t);
    return tk;
}

static void tt__nfc_corpus(lt_ctx *ctx, const tt__cases *c) {
    static const char *const norms[2] = {"{\"type\":\"NFC\"}", "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFC\"}]}"};
    size_t size, at;
    unsigned char *b = (unsigned char *)t_slurp("tests/ref/tok_nfc.bin", &size);
    int v, f, i;
    for (v = 0; v < 2; v++) {
        char name[64];
        lt_tokenizer *tk;
        snprintf(name, sizeof name, "tok.qwen2_nfc%s.corpus", v ? ".seq" : "");
        if (!t_want(name)) continue;
        if (!b || size < 12 || memcmp(b, "LTTOKNFC", 8) || (int)tt__u32(b + 8) != c->n) {
            t_check(0, name, "cannot read tests/ref/tok_nfc.bin for %d texts (/work/venv/bin/python tests/ref/gen_nfc.py)", c->n);
            continue;
        }
        if (!(tk = tt__qwen2_nfc(ctx, norms[v]))) { t_check(0, name, "load: %s", lt_error(ctx)); lt_clear_error(ctx); continue; }
        for (f = 0; f < 2; f++) {
            int bad = 0, badrt = 0, first = -1, skipped = 0;
            char nm[96];
            snprintf(nm, sizeof nm, "%s%s", name, f ? ".special" : "");
            for (i = 0, at = 12; i < c->n; i++) {
                uint32_t what = tt__u32(b + at), nref, j;
                size_t len = c->len[i];
                int32_t *ids = (int32_t *)malloc((3 * len + 1) * sizeof(int32_t)), *ref;
                char *back = (char *)malloc(3 * len + 1), *norm = (char *)malloc(3 * len + 1);
                int64_t m, k, nn;
                at += 4;
                if (what == 1) {   /* two lists follow */
                    size_t a0 = at, a1 = at + 4 + 2 * (size_t)tt__u32(b + at);
                    size_t a = f ? a1 : a0;
                    nref = tt__u32(b + a);
                    ref = (int32_t *)malloc((nref + 1) * sizeof(int32_t));
                    for (j = 0; j < nref; j++) ref[j] = b[a + 4 + 2 * j] | b[a + 5 + 2 * j] << 8;
                    at = a1 + 4 + 2 * (size_t)tt__u32(b + a1);
                } else {
                    nref = (uint32_t)c->nids[4 + f][i];
                    ref = (int32_t *)malloc((nref + 1) * sizeof(int32_t));
                    memcpy(ref, c->ids[4 + f][i], nref * sizeof(int32_t));
                }
                if (what == 0xffffffffu) { skipped++; free(ids); free(back); free(norm); free(ref); continue; }
                m = lt_tok_encode(tk, c->text[i], len, f ? LT_TOK_SPECIAL : 0, ids, (int64_t)(3 * len + 1));
                if (m != (int64_t)nref || memcmp(ids, ref, (size_t)nref * sizeof(int32_t))) {
                    if (first < 0) first = i;
                    bad++;
                }
                k = m >= 0 ? lt_tok_decode(tk, ids, m, back, 3 * len + 1) : -1;
                nn = lt_tok_nfc(NULL, c->text[i], len, norm, 3 * len + 1);
                if (k != nn || memcmp(back, norm, (size_t)(nn > 0 ? nn : 0))) badrt++;
                free(ids); free(back); free(norm); free(ref);
            }
            t_check(bad == 0 && badrt == 0, nm, "%d of %d texts encode differently from HF tokenizers (first: text %d \"%.80s\"), "
                    "%d do not decode to their NFC (%d skipped); %s", bad, c->n - skipped, first,
                    first >= 0 ? c->text[first] : "", badrt, skipped, lt_error(tk->ctx));
        }
        lt_tok_free(tk);
    }
    free(b);
}

/* The pieces of lt_loader_open_tok under NFC: a text of combining sequences, exclusions that grow
   (U+0958: 3 bytes to 6, U+1D160: 4 to 12) and jamo around the cut points gives the ids of the
   whole text encoded at once. */
static void tt__nfc_pieces(lt_ctx *ctx) {
    static const char *const parts[] = {"a\n", "b", "e\xcc\x81", "\xcc\xa3", "\xe0\xa5\x98", "\xf0\x9d\x85\xa0", "\n",
                                        "A\xcc\x8a", "9", "\xe1\x84\x80\xe1\x85\xa1", "\xe1\x86\xa8", "<|eot_id|>", " ",
                                        "\xff", "x\ny", "\xe2\x84\xab"};
    char path[600];
    size_t n = 0, cap = 60000, q;
    char *s;
    lt_rng r;
    lt_tokenizer *tk;
    FILE *fp;
    int f;
    if (!t_want("tok.qwen2_nfc.pieces")) return;
    if (!(tk = tt__qwen2_nfc(ctx, "{\"type\":\"NFC\"}"))) { t_check(0, "tok.qwen2_nfc.pieces", "load: %s", lt_error(ctx)); return; }
    s = (char *)malloc(cap + 64);
    lt_rng_seed(&r, 15);
    while (n < cap) {
        const char *p = parts[lt_rng_u64(&r) % (sizeof parts / sizeof parts[0])];
        memcpy(s + n, p, strlen(p));
        n += strlen(p);
    }
    snprintf(path, sizeof path, "%s/tok_nfc_pieces.txt", t_tmp_dir());
    if (!(fp = fopen(path, "wb")) || fwrite(s, 1, n, fp) != n || fclose(fp) != 0) {
        t_check(0, "tok.qwen2_nfc.pieces", "cannot write %s", path);
    } else {
        int32_t *ref = (int32_t *)malloc(3 * n * sizeof(int32_t));
        int ok = 1;
        for (f = 0; f < 2 && ok; f++) {
            int64_t m = lt_tok_encode(tk, s, n, f ? LT_TOK_SPECIAL : 0, ref, (int64_t)(3 * n)), i;
            static const size_t piece[3] = {1, 64, 4096};
            ok = m > (int64_t)n / 4;
            for (q = 0; q < 3 && ok; q++) {
                lt__store *st = lt__tok_store_file(ctx, tk, path, f ? LT_TOK_SPECIAL : 0, piece[q], 4, "tt__nfc_pieces");
                ok = st && st->n == m;
                for (i = 0; ok && i < m; i++) ok = lt__tk(st->p, st->esz, i) == ref[i];
                lt__store_release(st);
            }
        }
        t_check(ok, "tok.qwen2_nfc.pieces", "the pieces' ids differ from the whole text's (%s)", lt_error(ctx));
        free(ref);
    }
    lt_clear_error(ctx);
    lt_tok_free(tk);
    free(s);
}

static void test_tok_all(void) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_tokenizer *tks[3];
    tt__cases c;
    int k, have = tt__cases_load(&c);
    tt__pretok_cases();
    tt__utf8_validator();
    tt__byte_alphabet();
    tt__errors();
    t_check(have, "tok.ref", "cannot read tests/ref/tok_cases.bin (/work/venv/bin/python tests/ref/gen_tok.py)");
    tks[0] = tt__gpt2(ctx);
    if (!tks[0] && lt_failed(ctx)) t_check(0, "tok.gpt2.load", "%s", lt_error(ctx));
    lt_clear_error(ctx);
    tks[1] = lt_tok_load_json(ctx, "tests/ref/tok_llama3.json");
    t_check(tks[1] != NULL, "tok.llama3.load", "%s", lt_error(ctx));
    lt_clear_error(ctx);
    tks[2] = lt_tok_load_json(ctx, "tests/ref/tok_qwen2.json");
    t_check(tks[2] != NULL, "tok.qwen2.load", "%s", lt_error(ctx));
    lt_clear_error(ctx);
    if (have) {
        if (tks[0]) tt__corpus("tok.gpt2.corpus", tks[0], 0, &c);
        else if (t_want("tok.gpt2.corpus")) t_skip("tok.gpt2.corpus", "no GPT-2 encoder.json / vocab.bpe in ../shared/data (LT_SHARED_DIR)");
        if (tks[1]) tt__corpus("tok.llama3.corpus", tks[1], 1, &c);
        if (tks[2]) tt__corpus("tok.qwen2.corpus", tks[2], 2, &c);
        tt__nfc_corpus(ctx, &c);
    }
    tt__nfc_cases();
    tt__nfc_ref();
    tt__nfc_pieces(ctx);
    tt__hashes(tks);
    tt__csource(tks);
    for (k = 0; k < 3; k++) {
        static const char *const nm[3] = {"gpt2", "llama3", "qwen2"};
        char name[64];
        if (!tks[k]) continue;
        snprintf(name, sizeof name, "tok.%s.bpe_paths", nm[k]);
        tt__bpe_paths(tks[k], name);
        snprintf(name, sizeof name, "tok.%s.roundtrip", nm[k]);
        tt__roundtrip(tks[k], name);
    }
    tt__pieces_all(ctx, tks);
    if (tks[0]) {
        tt__api(tks[0], "tok.gpt2.api");
        tt__memory(tks[0], "tok.gpt2.memory");
        if (have) tt__gpt2_as_json(tks[0], &c, "tok.gpt2.as_json");
    } else if (t_want("tok.gpt2.api")) {
        t_skip("tok.gpt2.api", "no GPT-2 files in ../shared/data (LT_SHARED_DIR)");
    }
    for (k = 0; k < 3; k++) lt_tok_free(tks[k]);
    if (have) tt__cases_free(&c);
    lt_ctx_destroy(ctx);
}

/* ==== @@DATA  text files, llm.c token shards, batches ======================================== */
/* Holds: whole-file reads, little-endian reads, llm.c token shards, the batch loader.
   Calls: @@CORE. */

/* Little-endian reads that work on any host and at any alignment (file bytes are LE). */
static uint16_t lt__rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t lt__rd32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t lt__rd64(const unsigned char *p) { return (uint64_t)lt__rd32(p) | ((uint64_t)lt__rd32(p + 4) << 32); }

LTRAIN_DEF void lt_free(void *p) { LT__FREE(p); }

/* ---- @@DATA.files  files and token shards ---------------------------------------------------- */
/* The whole file, whatever its length: the size from fseek/ftell is only a hint (a pipe or a
   directory reports nonsense), so the buffer grows with the bytes actually read. */
LTRAIN_DEF lt_status lt_read_file(lt_ctx *ctx, const char *path, void **buf, size_t *size) {
    FILE *f;
    unsigned char *p, *q;
    size_t cap = (size_t)1 << 16, len = 0;
    long hint;
    if (buf) *buf = NULL;
    if (size) *size = 0;
    if (!path || !buf || !size)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_read_file: path, buf and size must not be NULL");
    f = fopen(path, "rb");
    if (!f) return lt_set_error(ctx, LT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) == 0 && (hint = ftell(f)) >= 0 && (unsigned long)hint < ((size_t)1 << 30))
        cap = (size_t)hint + 1; /* +1: the read that meets EOF needs room */
    if (fseek(f, 0, SEEK_SET) != 0) clearerr(f);
    p = (unsigned char *)LT__MALLOC(cap);
    if (!p) { fclose(f); return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory reading the file", path); }
    for (;;) {
        size_t got;
        if (len == cap) {
            size_t ncap;
            if (!lt_mul_size(cap, 2, &ncap) || !(q = (unsigned char *)LT__REALLOC(p, ncap))) {
                LT__FREE(p); fclose(f);
                return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory reading the file (%zu bytes so far)", path, len);
            }
            p = q; cap = ncap;
        }
        got = fread(p + len, 1, cap - len, f);
        len += got;
        if (len < cap) {
            if (ferror(f)) {
                int e = errno;
                LT__FREE(p); fclose(f);
                return lt_set_error(ctx, LT_ERR_IO, "%s: read failed: %s", path, strerror(e));
            }
            if (feof(f)) break;
        }
    }
    fclose(f);
    *buf = p;
    *size = len;
    return LT_OK;
}

/* llm.c token shard: 256 int32 header [20240520, 1, count, 0...] then count uint16 tokens. */
#define LT__SHARD_MAGIC 20240520
#define LT__SHARD_HEADER 1024

LTRAIN_DEF lt_status lt_shard_parse(lt_ctx *ctx, const void *buf, size_t size, const char *label, int vocab,
                                    int32_t **tokens, int64_t *n) {
    const unsigned char *b = (const unsigned char *)buf;
    int32_t magic, version, count, *tok;
    uint64_t want;
    size_t bytes;
    int64_t i;
    if (tokens) *tokens = NULL;
    if (n) *n = 0;
    if (!label) label = "token shard";
    if (!tokens || !n || (!buf && size))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_shard_parse: %s: buf, tokens and n must not be NULL", label);
    if (size < LT__SHARD_HEADER)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: %zu bytes is too short for an llm.c token shard "
                            "(its header alone is %d bytes)", label, size, LT__SHARD_HEADER);
    magic = (int32_t)lt__rd32(b);
    version = (int32_t)lt__rd32(b + 4);
    count = (int32_t)lt__rd32(b + 8);
    if (magic != LT__SHARD_MAGIC)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: magic number is %ld, expected %d "
                            "(not an llm.c token shard)", label, (long)magic, LT__SHARD_MAGIC);
    if (version != 1)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: version is %ld, expected 1 "
                            "(uint16 tokens; other versions are not supported)", label, (long)version);
    if (count < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: token count is %ld (negative)", label, (long)count);
    want = (uint64_t)LT__SHARD_HEADER + 2u * (uint64_t)count;
    if ((uint64_t)size != want)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: file is %zu bytes but the header's token count %ld "
                            "needs %llu (%d-byte header + 2 bytes per token)", label, size, (long)count,
                            (unsigned long long)want, LT__SHARD_HEADER);
    /* count is now bounded by the buffer's real size */
    if (!lt_mul_size(count ? (size_t)count : 1, sizeof(int32_t), &bytes) || !(tok = (int32_t *)LT__MALLOC(bytes)))
        return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %ld tokens", label, (long)count);
    for (i = 0; i < count; i++) {
        uint16_t t = lt__rd16(b + LT__SHARD_HEADER + 2 * i);
        if (vocab > 0 && t >= vocab) {
            LT__FREE(tok);
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: token %u at position %lld is >= the vocab size %d",
                                label, (unsigned)t, (long long)i, vocab);
        }
        tok[i] = t;
    }
    *tokens = tok;
    *n = count;
    return LT_OK;
}

struct lt_loader {
    lt_ctx *ctx;
    int32_t *tok;
    int64_t n;           /* tokens */
    int64_t bt;          /* B*T */
    int64_t nwin;        /* windows per epoch: floor((n-1)/(B*T)) */
    int B, T, is_shard;
    int64_t epoch, index;/* the next batch: window number `index` of epoch `epoch` */
    int shuffled;
    uint64_t seed;
    int64_t *perm;       /* shuffled: the window order of epoch perm_epoch */
    int64_t perm_epoch;
};

/* ---- @@DATA.loader  the batch loader --------------------------------------------------------- */
/* Takes ownership of tok (frees it on failure).  what: "lt_loader_open: \"path\"" or similar. */
static lt_loader *lt__loader_make(lt_ctx *ctx, int32_t *tok, int64_t n, int B, int T, int is_shard, const char *what) {
    lt_loader *ld;
    int64_t bt = (int64_t)B * (int64_t)T;
    if (n < bt + 1) {
        LT__FREE(tok);
        lt_set_error(ctx, LT_ERR_ARG, "%s: %lld tokens, but a batch of B=%d x T=%d needs at least B*T+1 = %lld "
                     "(hint: use a smaller B or T, or more data)", what, (long long)n, B, T, (long long)(bt + 1));
        return NULL;
    }
    ld = (lt_loader *)LT__MALLOC(sizeof(lt_loader));
    if (!ld) {
        LT__FREE(tok);
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what);
        return NULL;
    }
    memset(ld, 0, sizeof *ld);
    ld->ctx = ctx; ld->tok = tok; ld->n = n; ld->B = B; ld->T = T; ld->bt = bt;
    ld->nwin = (n - 1) / bt;
    ld->is_shard = is_shard;
    ld->perm_epoch = -1;
    return ld;
}

static int lt__loader_check_bt(lt_ctx *ctx, const char *fn, int B, int T) {
    if (B >= 1 && T >= 1) return 1;
    lt_set_error(ctx, LT_ERR_ARG, "%s: B=%d and T=%d must both be >= 1", fn, B, T);
    return 0;
}

LTRAIN_DEF lt_loader *lt_loader_open(lt_ctx *ctx, const char *path, int B, int T, int vocab) {
    void *buf;
    size_t size, i;
    int32_t *tok;
    int64_t n;
    int shard;
    char what[300];
    if (!path) { lt_set_error(ctx, LT_ERR_ARG, "lt_loader_open: path is NULL"); return NULL; }
    if (!lt__loader_check_bt(ctx, "lt_loader_open", B, T)) return NULL;
    if (vocab < 0) { lt_set_error(ctx, LT_ERR_ARG, "lt_loader_open: vocab %d must be >= 0 (0: no check)", vocab); return NULL; }
    if (lt_read_file(ctx, path, &buf, &size) != LT_OK) return NULL;
    shard = size >= 4 && lt__rd32((const unsigned char *)buf) == LT__SHARD_MAGIC;
    if (shard) {
        if (lt_shard_parse(ctx, buf, size, path, vocab, &tok, &n) != LT_OK) { LT__FREE(buf); return NULL; }
    } else {
        /* a text file: every byte is a token (vocab 256) */
        const unsigned char *b = (const unsigned char *)buf;
        size_t bytes;
        if (!lt_mul_size(size ? size : 1, sizeof(int32_t), &bytes) || !(tok = (int32_t *)LT__MALLOC(bytes))) {
            LT__FREE(buf);
            lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %zu tokens", path, size);
            return NULL;
        }
        for (i = 0; i < size; i++) {
            if (vocab > 0 && b[i] >= vocab) {
                lt_set_error(ctx, LT_ERR_FORMAT, "%s: text byte %u at position %zu is >= the vocab size %d "
                             "(hint: a text file needs vocab >= 256, or 0)", path, (unsigned)b[i], i, vocab);
                LT__FREE(tok); LT__FREE(buf);
                return NULL;
            }
            tok[i] = b[i];
        }
        n = (int64_t)size;
    }
    LT__FREE(buf);
    snprintf(what, sizeof what, "lt_loader_open: %.250s (%s)", path, shard ? "token shard" : "text file");
    return lt__loader_make(ctx, tok, n, B, T, shard, what);
}

LTRAIN_DEF lt_loader *lt_loader_from_tokens(lt_ctx *ctx, const int32_t *tokens, int64_t n, int B, int T) {
    int32_t *tok;
    size_t bytes;
    if (!lt__loader_check_bt(ctx, "lt_loader_from_tokens", B, T)) return NULL;
    if (n < 0 || (!tokens && n > 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_loader_from_tokens: n = %lld with tokens %s", (long long)n, tokens ? "given" : "NULL");
        return NULL;
    }
    if ((uint64_t)n > (uint64_t)SIZE_MAX || !lt_mul_size(n ? (size_t)n : 1, sizeof(int32_t), &bytes) ||
        !(tok = (int32_t *)LT__MALLOC(bytes))) {
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_loader_from_tokens: out of memory for %lld tokens", (long long)n);
        return NULL;
    }
    if (n) memcpy(tok, tokens, (size_t)n * sizeof(int32_t));
    return lt__loader_make(ctx, tok, n, B, T, 0, "lt_loader_from_tokens");
}

LTRAIN_DEF void lt_loader_destroy(lt_loader *ld) {
    if (!ld) return;
    LT__FREE(ld->tok);
    LT__FREE(ld->perm);
    LT__FREE(ld);
}

/* An unbiased draw from [0, bound): reject the top 2^64 mod bound values. */
static uint64_t lt__rng_below(lt_rng *r, uint64_t bound) {
    uint64_t lim = (0 - bound) % bound, x;
    do x = lt_rng_u64(r); while (x < lim);
    return x % bound;
}

/* Epoch e's window order: Fisher-Yates driven by an RNG seeded from (seed, e) alone, so any
   position can be reached again without replaying earlier epochs. */
static void lt__loader_permute(lt_loader *ld) {
    lt_rng r;
    int64_t i;
    lt_rng_seed(&r, (uint64_t)ld->epoch);
    lt_rng_seed(&r, ld->seed ^ lt_rng_u64(&r));
    for (i = 0; i < ld->nwin; i++) ld->perm[i] = i;
    for (i = ld->nwin - 1; i > 0; i--) {
        int64_t j = (int64_t)lt__rng_below(&r, (uint64_t)i + 1), t = ld->perm[i];
        ld->perm[i] = ld->perm[j]; ld->perm[j] = t;
    }
    ld->perm_epoch = ld->epoch;
}

LTRAIN_DEF void lt_loader_shuffle(lt_loader *ld, uint64_t seed) {
    if (!ld) return;
    if (!ld->perm) {
        size_t bytes;
        if (!lt_mul_size((size_t)ld->nwin, sizeof(int64_t), &bytes) || !(ld->perm = (int64_t *)LT__MALLOC(bytes))) {
            lt_set_error(ld->ctx, LT_ERR_NOMEM, "lt_loader_shuffle: out of memory for %lld windows", (long long)ld->nwin);
            return;
        }
    }
    ld->shuffled = 1;
    ld->seed = seed;
    ld->perm_epoch = -1;
}

LTRAIN_DEF lt_status lt_loader_next(lt_loader *ld, int32_t *inputs, int32_t *targets) {
    int64_t w;
    const int32_t *win;
    if (!ld) return LT_ERR_ARG;
    if (ld->shuffled && ld->perm_epoch != ld->epoch) lt__loader_permute(ld);
    w = ld->shuffled ? ld->perm[ld->index] : ld->index;
    win = ld->tok + w * ld->bt;
    if (inputs) memcpy(inputs, win, (size_t)ld->bt * sizeof(int32_t));
    if (targets) memcpy(targets, win + 1, (size_t)ld->bt * sizeof(int32_t));
    if (++ld->index == ld->nwin) { ld->index = 0; ld->epoch++; }
    return LT_OK;
}

LTRAIN_DEF int64_t lt_loader_num_tokens(const lt_loader *ld) { return ld ? ld->n : 0; }
LTRAIN_DEF const int32_t *lt_loader_tokens(const lt_loader *ld) { return ld ? ld->tok : NULL; }
LTRAIN_DEF int lt_loader_is_shard(const lt_loader *ld) { return ld ? ld->is_shard : 0; }

LTRAIN_DEF void lt_loader_get_pos(const lt_loader *ld, int64_t *epoch, int64_t *index) {
    if (epoch) *epoch = ld ? ld->epoch : 0;
    if (index) *index = ld ? ld->index : 0;
}

LTRAIN_DEF lt_status lt_loader_set_pos(lt_loader *ld, int64_t epoch, int64_t index) {
    if (!ld) return LT_ERR_ARG;
    if (epoch < 0 || index < 0 || index >= ld->nwin)
        return lt_set_error(ld->ctx, LT_ERR_ARG, "lt_loader_set_pos: (epoch %lld, index %lld) is out of range: "
                            "epoch must be >= 0 and index in [0, %lld) (batches per epoch)",
                            (long long)epoch, (long long)index, (long long)ld->nwin);
    ld->epoch = epoch;
    ld->index = index;
    return LT_OK;
}


/* ==== @@DATA (continued)  sequences: variable lengths, buckets, length schedule, restarts ====== */
/* Holds: the sequence loader (variable lengths, padding, buckets, shuffles, restarts) and the
   length schedule (lt_len_*).
   Calls: @@CORE, @@LOSS (lt__gpt_loss), @@DATA (file and shard reads). */

/* ---- @@DATA.seq  the sequence loader --------------------------------------------------------- */
/* A row of a batch before padding: its inputs and targets (len of each), elements of esz bytes
   (lt__tk reads them). */
typedef struct { const unsigned char *ids, *tg; int esz, len; } lt__row;

struct lt_seq_loader {
    lt_ctx *ctx;
    lt_seq_config cfg;
    lt__store *st;           /* every token of the source (shared with a stream loader) */
    int64_t ntok;
    int64_t n;               /* pieces */
    int64_t *off;            /* piece i: tokens tok[off[i] .. off[i]+len[i]] */
    int32_t *len;
    int32_t *bucket_of;      /* [max_len+1]: the bucket of a length (0 = the longest lengths) */
    int64_t epoch, index;    /* the next batch */
    /* the plan of epoch plan_epoch: batch i is order[run_start[bperm[i]] ..][run_len[bperm[i]]] */
    int64_t plan_epoch, nb;
    int64_t *order, *run_start, *run_len, *bperm;
    int64_t *bcount;         /* per bucket: counts, then offsets (counting sort) */
    int64_t nbuckets;
    lt__row *rows;           /* scratch for one batch */
};

LTRAIN_DEF lt_seq_config lt_seq_defaults(void) {
    lt_seq_config c;
    memset(&c, 0, sizeof c);
    c.split = LT_SEQ_LINES;
    c.eot = 50256;
    c.max_len = 64;
    c.batching = LT_BATCH_BUCKET;
    c.batch_tokens = 512;
    c.bucket_width = 1.0 / 16;
    c.pad_to = 1;
    return c;
}

LTRAIN_DEF void lt_seq_destroy(lt_seq_loader *sl) {
    if (!sl) return;
    lt__store_release(sl->st); LT__FREE(sl->off); LT__FREE(sl->len); LT__FREE(sl->bucket_of);
    LT__FREE(sl->order); LT__FREE(sl->run_start); LT__FREE(sl->run_len); LT__FREE(sl->bperm);
    LT__FREE(sl->bcount); LT__FREE(sl->rows);
    LT__FREE(sl);
}

static int lt__seq_check_cfg(lt_ctx *ctx, const char *who, const lt_seq_config *c) {
    if (!c) return lt_set_error(ctx, LT_ERR_ARG, "%s: config is NULL (start from lt_seq_defaults())", who), 0;
    if (c->split != LT_SEQ_LINES && c->split != LT_SEQ_PARAGRAPHS && c->split != LT_SEQ_EOT)
        return lt_set_error(ctx, LT_ERR_ARG, "%s: split %d is not LT_SEQ_LINES, LT_SEQ_PARAGRAPHS or LT_SEQ_EOT",
                            who, (int)c->split), 0;
    if (c->batching != LT_BATCH_BUCKET && c->batching != LT_BATCH_RANDOM)
        return lt_set_error(ctx, LT_ERR_ARG, "%s: batching %d is not LT_BATCH_BUCKET or LT_BATCH_RANDOM", who,
                            (int)c->batching), 0;
    if (c->max_len < 1 || c->batch_tokens < c->max_len || c->pad_to < 1 ||
        !(c->bucket_width > 0 && c->bucket_width < 1))
        return lt_set_error(ctx, LT_ERR_ARG, "%s: max_len %d, batch_tokens %lld, pad_to %d, bucket_width %g: need "
                            "max_len >= 1, batch_tokens >= max_len (one longest piece must fit), pad_to >= 1 and "
                            "bucket_width in (0,1)", who, c->max_len, (long long)c->batch_tokens, c->pad_to,
                            c->bucket_width), 0;
    return 1;
}

/* Adds the pieces of the sequence tok[start .. start+ntok-1]: piece k starts at start + k*T and
   holds min(T, ntok-1-k*T) pairs.  cap: room in off/len (counted beforehand). */
static void lt__seq_cut(lt_seq_loader *sl, int64_t start, int64_t ntok) {
    int64_t T = sl->cfg.max_len, k;
    for (k = 0; k * T < ntok - 1; k++) {
        int64_t left = ntok - 1 - k * T;
        sl->off[sl->n] = start + k * T;
        sl->len[sl->n] = (int32_t)(left < T ? left : T);
        sl->n++;
    }
}

/* Walks the sequences; with count_only, counts pieces into *pieces instead of storing them. */
static void lt__seq_split(lt_seq_loader *sl, int count_only, int64_t *pieces) {
    const unsigned char *t = sl->st->p;
    int esz = sl->st->esz;
    int64_t i = 0, N = sl->ntok, T = sl->cfg.max_len, total = 0;
#define LT__SEQ_EMIT(s, cnt) do { int64_t s_ = (s), c_ = (cnt); \
        if (c_ >= 2) { if (count_only) total += (c_ - 2) / T + 1; else lt__seq_cut(sl, s_, c_); } } while (0)
    if (sl->cfg.split == LT_SEQ_EOT) {
        int64_t start = 0;
        for (i = 1; i <= N; i++)
            if (i == N || lt__tk(t, esz, i) == sl->cfg.eot) { LT__SEQ_EMIT(start, i - start); start = i; }
    } else {
        int64_t para = -1;   /* paragraphs: where the current one starts (-1: none open) */
        while (i < N) {
            int64_t j = i, blank = 1;
            while (j < N) {
                int32_t c = lt__tk(t, esz, j);
                if (c == '\n') break;
                if (c != ' ' && c != '\t' && c != '\r') blank = 0;
                j++;
            }
            if (j < N) j++;  /* the line includes its '\n' */
            if (sl->cfg.split == LT_SEQ_LINES) LT__SEQ_EMIT(i, j - i);
            else if (blank) { if (para >= 0) LT__SEQ_EMIT(para, i - para); para = -1; }
            else if (para < 0) para = i;
            i = j;
        }
        if (para >= 0) LT__SEQ_EMIT(para, N - para);
    }
#undef LT__SEQ_EMIT
    if (count_only) *pieces = total;
}

/* Takes over the store's reference (releases it on failure). */
static lt_seq_loader *lt__seq_make(lt_ctx *ctx, lt__store *st, const lt_seq_config *cfg, const char *what) {
    lt_seq_loader *sl = (lt_seq_loader *)LT__MALLOC(sizeof(lt_seq_loader));
    int64_t pieces = 0, T, hi, b, ntok = st->n;
    size_t bytes;
    if (!sl) { lt__store_release(st); lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what); return NULL; }
    memset(sl, 0, sizeof *sl);
    sl->ctx = ctx; sl->cfg = *cfg; sl->st = st; sl->ntok = ntok; sl->plan_epoch = -1;
    T = cfg->max_len;
    lt__seq_split(sl, 1, &pieces);
    if (pieces < 1) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: no sequence with 2 or more tokens (%lld tokens split by %s)", what,
                     (long long)ntok, cfg->split == LT_SEQ_LINES ? "lines" : cfg->split == LT_SEQ_PARAGRAPHS ?
                     "paragraphs" : "end-of-text id");
        lt_seq_destroy(sl);
        return NULL;
    }
    if (!lt_mul_size((size_t)pieces, sizeof(int64_t), &bytes) ||
        !(sl->off = (int64_t *)LT__MALLOC(bytes)) || !(sl->len = (int32_t *)LT__MALLOC(bytes)) ||
        !(sl->order = (int64_t *)LT__MALLOC(bytes)) || !(sl->run_start = (int64_t *)LT__MALLOC(bytes)) ||
        !(sl->run_len = (int64_t *)LT__MALLOC(bytes)) || !(sl->bperm = (int64_t *)LT__MALLOC(bytes)) ||
        !(sl->bucket_of = (int32_t *)LT__MALLOC((size_t)(T + 1) * sizeof(int32_t)))) {
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %lld pieces", what, (long long)pieces);
        lt_seq_destroy(sl);
        return NULL;
    }
    lt__seq_split(sl, 0, NULL);
    LT__ASSERT(sl->n == pieces);
    /* buckets from the top: (hi*(1-w), hi], each at least one length wide */
    for (hi = T, b = 0; hi >= 1; b++) {
        int64_t lo = (int64_t)floor((double)hi * (1.0 - cfg->bucket_width)), l;
        if (lo > hi - 1) lo = hi - 1;
        if (lo < 0) lo = 0;
        for (l = hi; l > lo; l--) sl->bucket_of[l] = (int32_t)b;
        hi = lo;
    }
    sl->bucket_of[0] = (int32_t)b;
    sl->nbuckets = b + 1;
    if (!(sl->bcount = (int64_t *)LT__MALLOC((size_t)sl->nbuckets * sizeof(int64_t)))) {
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what);
        lt_seq_destroy(sl);
        return NULL;
    }
    return sl;
}

LTRAIN_DEF lt_seq_loader *lt_seq_from_tokens(lt_ctx *ctx, const int32_t *tokens, int64_t n, const lt_seq_config *cfg) {
    lt__store *st;
    if (!lt__seq_check_cfg(ctx, "lt_seq_from_tokens", cfg)) return NULL;
    if (n < 0 || (!tokens && n > 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_seq_from_tokens: n = %lld with tokens %s", (long long)n, tokens ? "given" : "NULL");
        return NULL;
    }
    if (!(st = lt__store_copy_of(ctx, tokens, n, 4, "lt_seq_from_tokens"))) return NULL;
    return lt__seq_make(ctx, st, cfg, "lt_seq_from_tokens");
}

LTRAIN_DEF lt_seq_loader *lt_seq_from_text(lt_ctx *ctx, const char *text, size_t n, const lt_seq_config *cfg) {
    lt__store *st;
    if (!lt__seq_check_cfg(ctx, "lt_seq_from_text", cfg)) return NULL;
    if (!text && n) { lt_set_error(ctx, LT_ERR_ARG, "lt_seq_from_text: text is NULL"); return NULL; }
    if (n > (size_t)INT64_MAX || !(st = lt__store_copy_of(ctx, text, (int64_t)n, 1, "lt_seq_from_text"))) {
        if (!lt_failed(ctx)) lt_set_error(ctx, LT_ERR_NOMEM, "lt_seq_from_text: %zu bytes is too much", n);
        return NULL;
    }
    return lt__seq_make(ctx, st, cfg, "lt_seq_from_text");
}

/* Lines and paragraphs split text; a shard is split at an end-of-text id. */
static int lt__seq_fits(lt_ctx *ctx, const lt__store *st, const lt_seq_config *cfg, const char *what) {
    if (!st->is_shard || cfg->split == LT_SEQ_EOT) return 1;
    lt_set_error(ctx, LT_ERR_ARG, "%s: lines and paragraphs split text; a token shard is split at an "
                 "end-of-text id (hint: --eot 50256)", what);
    return 0;
}

LTRAIN_DEF lt_seq_loader *lt_seq_open_as(lt_ctx *ctx, const char *path, lt_data_format format,
                                         const lt_seq_config *cfg, int vocab) {
    lt__store *st;
    char what[300];
    if (!path) { lt_set_error(ctx, LT_ERR_ARG, "lt_seq_open: path is NULL"); return NULL; }
    if (!lt__seq_check_cfg(ctx, "lt_seq_open", cfg)) return NULL;
    if (vocab < 0) { lt_set_error(ctx, LT_ERR_ARG, "lt_seq_open: vocab %d must be >= 0 (0: no check)", vocab); return NULL; }
    if (!(st = lt__store_open(ctx, path, format, vocab))) return NULL;
    snprintf(what, sizeof what, "lt_seq_open: %.250s (%s)", path, st->is_shard ? "token shard" : "text file");
    if (!lt__seq_fits(ctx, st, cfg, what)) { lt__store_release(st); return NULL; }
    return lt__seq_make(ctx, st, cfg, what);
}

LTRAIN_DEF lt_seq_loader *lt_seq_open(lt_ctx *ctx, const char *path, const lt_seq_config *cfg, int vocab) {
    return lt_seq_open_as(ctx, path, LT_DATA_AUTO, cfg, vocab);
}

LTRAIN_DEF lt_seq_loader *lt_seq_from_loader(lt_ctx *ctx, const lt_loader *ld, const lt_seq_config *cfg) {
    char what[300];
    if (!ld) { lt_set_error(ctx, LT_ERR_ARG, "lt_seq_from_loader: loader is NULL"); return NULL; }
    if (!lt__seq_check_cfg(ctx, "lt_seq_from_loader", cfg)) return NULL;
    snprintf(what, sizeof what, "lt_seq_from_loader: %.250s (%s)", ld->st->label, ld->is_shard ? "token shard" : "text file");
    if (!lt__seq_fits(ctx, ld->st, cfg, what)) return NULL;
    ld->st->refs++;
    return lt__seq_make(ctx, ld->st, cfg, what);
}

LTRAIN_DEF int64_t lt_seq_count(const lt_seq_loader *sl) { return sl ? sl->n : 0; }
LTRAIN_DEF int lt_seq_length(const lt_seq_loader *sl, int64_t i) { return sl && i >= 0 && i < sl->n ? sl->len[i] : 0; }
LTRAIN_DEF const int32_t *lt_seq_tokens(const lt_seq_loader *sl, int64_t i) {
    const int32_t *w;
    if (!sl || i < 0 || i >= sl->n) return NULL;
    w = lt__store_wide(sl->ctx, sl->st);
    return w ? w + sl->off[i] : NULL;
}

/* The padded length of a batch whose longest row is m. */
static int64_t lt__seq_padded(const lt_seq_config *c, int64_t m) {
    int64_t p = (m + c->pad_to - 1) / c->pad_to * c->pad_to;
    return p < c->max_len ? p : c->max_len;   /* m <= max_len always */
}

/* ---- @@DATA.buckets  batches: buckets, packing, padding -------------------------------------- */
/* Epoch e's batches, from an RNG seeded by (seed, e) alone (as the stream loader's shuffle):
   a permutation of the pieces; bucket mode sorts it stably by bucket (a random order inside
   each bucket).  Then batches are packed greedily in that order, a batch closing when the next
   piece would push rows * padded length past the budget (or, bucketed, starts another bucket);
   bucketed batches are shuffled last. */
static void lt__seq_plan(lt_seq_loader *sl, int64_t epoch) {
    lt_rng r;
    int64_t i, n = sl->n, *perm = sl->bperm, rows = 0, m = 0, nb = 0;
    int bucketed = sl->cfg.batching == LT_BATCH_BUCKET;
    if (sl->plan_epoch == epoch) return;
    lt_rng_seed(&r, (uint64_t)epoch);
    lt_rng_seed(&r, sl->cfg.seed ^ lt_rng_u64(&r));
    for (i = 0; i < n; i++) perm[i] = i;
    for (i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)lt__rng_below(&r, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j]; perm[j] = t;
    }
    if (bucketed) {   /* counting sort by bucket, stable: key[] counts, then offsets */
        int64_t *cnt = sl->bcount, acc = 0;
        for (i = 0; i < sl->nbuckets; i++) cnt[i] = 0;
        for (i = 0; i < n; i++) cnt[sl->bucket_of[sl->len[perm[i]]]]++;
        for (i = 0; i < sl->nbuckets; i++) { int64_t c = cnt[i]; cnt[i] = acc; acc += c; }
        for (i = 0; i < n; i++) sl->order[cnt[sl->bucket_of[sl->len[perm[i]]]]++] = perm[i];
    } else {
        memcpy(sl->order, perm, (size_t)n * sizeof(int64_t));
    }
    for (i = 0; i < n; i++) {
        int64_t L = sl->len[sl->order[i]], m2 = L > m ? L : m;
        int new_bucket = bucketed && rows > 0 && sl->bucket_of[L] != sl->bucket_of[sl->len[sl->order[i - 1]]];
        if (rows > 0 && (new_bucket || (rows + 1) * lt__seq_padded(&sl->cfg, m2) > sl->cfg.batch_tokens)) {
            sl->run_len[nb++] = rows;
            rows = 0; m2 = L;
        }
        if (rows == 0) sl->run_start[nb] = i;
        rows++; m = m2;
    }
    sl->run_len[nb++] = rows;
    for (i = 0; i < nb; i++) perm[i] = i;
    if (bucketed)
        for (i = nb - 1; i > 0; i--) {
            int64_t j = (int64_t)lt__rng_below(&r, (uint64_t)i + 1), t = perm[i];
            perm[i] = perm[j]; perm[j] = t;
        }
    sl->nb = nb;
    sl->plan_epoch = epoch;
}

LTRAIN_DEF int64_t lt_seq_batches(lt_seq_loader *sl, int64_t epoch) {
    if (!sl || epoch < 0) return 0;
    lt__seq_plan(sl, epoch);
    return sl->nb;
}

LTRAIN_DEF int64_t lt_seq_batch_members(lt_seq_loader *sl, int64_t epoch, int64_t index, int64_t *pieces) {
    int64_t run, k;
    if (!sl || epoch < 0 || index < 0) return -1;
    lt__seq_plan(sl, epoch);
    if (index >= sl->nb) return -1;
    run = sl->bperm[index];
    if (pieces)
        for (k = 0; k < sl->run_len[run]; k++) pieces[k] = sl->order[sl->run_start[run] + k];
    return sl->run_len[run];
}

/* Rows cut to at most fold pairs (0: no cut), padded to the longest resulting row rounded up to
   pad_to (but not past cap) into b: inputs 0 and targets LT_IGNORE_INDEX past each length. */
static lt_status lt__batch_fill(lt_ctx *ctx, lt_batch *b, const lt__row *rows, int64_t nrows, int fold, int pad_to,
                                int cap) {
    int64_t F = fold > 0 ? fold : INT_MAX, R = 0, W = 1, Wr, i, r = 0;
    size_t pos;
    int32_t *p1, *p2;
    for (i = 0; i < nrows; i++) {
        int64_t L = rows[i].len;
        R += L > 0 ? (L + F - 1) / F : 1;
        if ((L < F ? L : F) > W) W = L < F ? L : F;
    }
    Wr = (W + pad_to - 1) / pad_to * pad_to;
    if (Wr <= cap) W = Wr;   /* never past the model's length (every row fits in cap) */
    if (R > INT_MAX || !lt_mul_size((size_t)R, (size_t)W, &pos) || pos > (size_t)INT64_MAX / 8)
        return lt_set_error(ctx, LT_ERR_NOMEM, "lt_batch: %lld rows of %lld is too large", (long long)R, (long long)W);
    if ((int64_t)pos > b->cap_pos) {
        p1 = (int32_t *)LT__REALLOC(b->ids, pos * sizeof(int32_t));
        if (p1) b->ids = p1;
        p2 = p1 ? (int32_t *)LT__REALLOC(b->targets, pos * sizeof(int32_t)) : NULL;
        if (p2) b->targets = p2;
        if (!p1 || !p2) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_batch: out of memory for %zu positions", pos);
        b->cap_pos = (int64_t)pos;
    }
    if (R > b->cap_rows) {
        int32_t *p = (int32_t *)LT__REALLOC(b->lengths, (size_t)R * sizeof(int32_t));
        if (!p) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_batch: out of memory for %lld rows", (long long)R);
        b->lengths = p;
        b->cap_rows = R;
    }
    b->B = (int)R; b->T = (int)W; b->real = 0;
    for (i = 0; i < nrows; i++) {
        int64_t L = rows[i].len, c = 0;
        do {
            int64_t n = L - c < F ? L - c : F, t;
            int32_t *oi = b->ids + r * W, *ot = b->targets + r * W;
            if (n > W) n = W;
            for (t = 0; t < n; t++) {
                oi[t] = lt__tk(rows[i].ids, rows[i].esz, c + t);
                ot[t] = lt__tk(rows[i].tg, rows[i].esz, c + t);
                b->real += ot[t] != LT_IGNORE_INDEX;
            }
            for (; t < W; t++) { oi[t] = 0; ot[t] = LT_IGNORE_INDEX; }
            b->lengths[r++] = (int32_t)n;
            c += F;
        } while (c < L);
    }
    LT__ASSERT(r == R);
    return LT_OK;
}

LTRAIN_DEF lt_status lt_seq_next(lt_seq_loader *sl, int fold_len, lt_batch *b) {
    int64_t run, k, nr;
    if (!sl || !b) return sl ? lt_set_error(sl->ctx, LT_ERR_ARG, "lt_seq_next: batch is NULL") : LT_ERR_ARG;
    if (lt_failed(sl->ctx)) return lt_status_of(sl->ctx);
    if (!sl->rows) {
        size_t bytes;
        if (!lt_mul_size((size_t)sl->n, sizeof(lt__row), &bytes) || !(sl->rows = (lt__row *)LT__MALLOC(bytes)))
            return lt_set_error(sl->ctx, LT_ERR_NOMEM, "lt_seq_next: out of memory");
    }
    lt__seq_plan(sl, sl->epoch);
    run = sl->bperm[sl->index];
    nr = sl->run_len[run];
    for (k = 0; k < nr; k++) {
        int64_t p = sl->order[sl->run_start[run] + k];
        sl->rows[k].ids = sl->st->p + sl->off[p] * sl->st->esz;
        sl->rows[k].tg = sl->rows[k].ids + sl->st->esz;
        sl->rows[k].esz = sl->st->esz;
        sl->rows[k].len = sl->len[p];
    }
    if (++sl->index == sl->nb) { sl->index = 0; sl->epoch++; }
    return lt__batch_fill(sl->ctx, b, sl->rows, nr, fold_len, sl->cfg.pad_to, sl->cfg.max_len);
}

LTRAIN_DEF void lt_seq_get_pos(const lt_seq_loader *sl, int64_t *epoch, int64_t *index) {
    if (epoch) *epoch = sl ? sl->epoch : 0;
    if (index) *index = sl ? sl->index : 0;
}

LTRAIN_DEF lt_status lt_seq_set_pos(lt_seq_loader *sl, int64_t epoch, int64_t index) {
    if (!sl) return LT_ERR_ARG;
    if (epoch < 0 || index < 0 || index >= lt_seq_batches(sl, epoch))
        return lt_set_error(sl->ctx, LT_ERR_ARG, "lt_seq_set_pos: (epoch %lld, index %lld) is out of range: epoch "
                            "must be >= 0 and index in [0, %lld) (that epoch's batches)", (long long)epoch,
                            (long long)index, (long long)(epoch >= 0 ? lt_seq_batches(sl, epoch) : 0));
    sl->epoch = epoch;
    sl->index = index;
    return LT_OK;
}

LTRAIN_DEF lt_status lt_batch_from_rows(lt_ctx *ctx, lt_batch *b, const int32_t *ids, const int32_t *targets,
                                        const int32_t *lengths, int B, int T, int fold_len) {
    lt__row *rows;
    lt_status s;
    int i;
    if (!b || !ids || !targets || B < 1 || T < 1)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_batch_from_rows: need b, ids, targets, B >= 1 and T >= 1 (B = %d, "
                            "T = %d)", B, T);
    for (i = 0; lengths && i < B; i++)
        if (lengths[i] < 0 || lengths[i] > T)
            return lt_set_error(ctx, LT_ERR_ARG, "lt_batch_from_rows: lengths[%d] is %d: it must be in [0,%d]", i,
                                lengths[i], T);
    rows = (lt__row *)LT__MALLOC((size_t)B * sizeof(lt__row));
    if (!rows) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_batch_from_rows: out of memory");
    for (i = 0; i < B; i++) {
        rows[i].ids = (const unsigned char *)(ids + (int64_t)i * T);
        rows[i].tg = (const unsigned char *)(targets + (int64_t)i * T);
        rows[i].esz = 4;
        rows[i].len = lengths ? lengths[i] : T;
    }
    s = lt__batch_fill(ctx, b, rows, B, fold_len, 1, T);
    LT__FREE(rows);
    return s;
}

LTRAIN_DEF void lt_batch_free(lt_batch *b) {
    if (!b) return;
    LT__FREE(b->ids); LT__FREE(b->targets); LT__FREE(b->lengths);
    memset(b, 0, sizeof *b);
}

LTRAIN_DEF lt_tensor *lt_gpt_loss_ex(lt_gpt *g, const int32_t *ids, const int32_t *targets, int B, int T,
                                     const int32_t *lengths, double denom) {
    return lt__gpt_loss(g, ids, targets, B, T, lengths, denom);
}

/* ---- @@DATA.len_schedule  sequence-length schedule ------------------------------------------- */
LTRAIN_DEF int lt_len_at(const lt_len_schedule *ls, int64_t step) {
    int64_t t0, t1, v, q;
    double p;
    if (!ls) return 0;
    t0 = ls->t0; t1 = ls->t1;
    if (ls->steps <= 0 || step >= ls->steps || t0 >= t1) return (int)t1;
    if (step < 0) step = 0;
    p = (double)step / (double)ls->steps;
    q = ls->quantum > 0 ? ls->quantum : 1;
    if (ls->rule == LT_LEN_STEP) {
        int64_t n = 0, k;
        while ((t0 << n) < t1) n++;
        k = n * step / ls->steps;   /* integer: no rounding surprises at the stage edges */
        v = t0 << k;
        return (int)(v < t1 ? v : t1);
    }
    v = t0 + (int64_t)floor((double)(t1 - t0) * (ls->rule == LT_LEN_SQRT ? sqrt(p) : p));
    v = v / q * q;
    return (int)(v < t0 ? t0 : v > t1 ? t1 : v);
}

LTRAIN_DEF int lt_len_parse(const char *spec, lt_len_schedule *out, char *err, size_t errcap) {
    const char *p = spec;
    char *end;
    long v[3];
    int k;
    if (err && errcap) err[0] = 0;
    if (!spec || !out) { if (err) snprintf(err, errcap, "no schedule given"); return 0; }
    for (k = 0; k < 3; k++) {
        v[k] = strtol(p, &end, 10);
        if (end == p || (k < 2 && *end != ':') || (k == 2 && *end && *end != ':') || v[k] < (k == 2 ? 0 : 1) ||
            v[k] > (k == 2 ? LONG_MAX : 1 << 24)) {
            if (err) snprintf(err, errcap, "\"%s\" is not T0:T1:STEPS[:linear|step|sqrt] with 1 <= T0 <= T1, STEPS >= 0",
                              spec);
            return 0;
        }
        p = end + (*end == ':');
    }
    memset(out, 0, sizeof *out);
    out->t0 = (int)v[0]; out->t1 = (int)v[1]; out->steps = v[2];
    out->quantum = out->t0 < 8 ? out->t0 : 8;
    if (end[0] == ':') {
        if (!strcmp(p, "linear")) out->rule = LT_LEN_LINEAR;
        else if (!strcmp(p, "step")) out->rule = LT_LEN_STEP;
        else if (!strcmp(p, "sqrt")) out->rule = LT_LEN_SQRT;
        else { if (err) snprintf(err, errcap, "\"%s\": the rule must be linear, step or sqrt", spec); return 0; }
    }
    if (out->t0 > out->t1) {
        if (err) snprintf(err, errcap, "\"%s\": T0 (%d) must not exceed T1 (%d)", spec, out->t0, out->t1);
        return 0;
    }
    return 1;
}

/* ---- @@DATA.restarts  random restarts --------------------------------------------------------- */
LTRAIN_DEF int lt_restarts(int n, uint64_t base_seed, lt_restart_fn fn, void *user, uint64_t *seeds, double *val) {
    int r, best = -1;
    double best_v = INFINITY;
    if (n < 1 || !fn) return -1;
    for (r = 0; r < n; r++) {
        uint64_t s = base_seed + (uint64_t)r;
        double v = NAN;
        if (fn(user, r, s, &v) != LT_OK) v = NAN;
        if (seeds) seeds[r] = s;
        if (val) val[r] = v;
        if (isfinite(v) && (best < 0 || v < best_v)) { best = r; best_v = v; }
    }
    return best;
}

LTRAIN_DEF void lt_restarts_print(FILE *f, int n, const uint64_t *seeds, const double *val, int best) {
    double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0, mean;
    int r, k = 0;
    if (!f || n < 1 || !seeds || !val) return;
    fprintf(f, "restart  seed                  val_loss\n");
    for (r = 0; r < n; r++) {
        fprintf(f, "%7d  %-20llu  %8.4f%s\n", r, (unsigned long long)seeds[r], val[r], r == best ? "  <- best" : "");
        if (!isfinite(val[r])) continue;
        if (val[r] < lo) lo = val[r];
        if (val[r] > hi) hi = val[r];
        sum += val[r]; k++;
    }
    if (k == 0) { fprintf(f, "no restart reached a finite validation loss\n"); return; }
    mean = sum / k;
    for (r = 0; r < n; r++) if (isfinite(val[r])) sq += (val[r] - mean) * (val[r] - mean);
    fprintf(f, "val loss over %d seeds: min %.4f max %.4f mean %.4f std %.4f (spread %.4f); continuing seed %llu\n", k,
            lo, hi, mean, k > 1 ? sqrt(sq / (k - 1)) : 0.0, hi - lo,
            best >= 0 ? (unsigned long long)seeds[best] : 0ULL);
}


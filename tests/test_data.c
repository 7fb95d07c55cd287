/* test_data.c - loaders, llm.c token shards, safetensors read/write, malformed files.
   Python references: tests/ref/gen_st.py (st_ref.safetensors, st_ref.bin). */

#include <sys/wait.h>
#include <unistd.h>

/* A malformed input was refused: failed, the context holds the error, its message has `kw`. */
static void td_refused(const char *name, lt_ctx *ctx, int failed, const char *kw) {
    t_check(failed && lt_failed(ctx) && strstr(lt_error(ctx), kw) != NULL, name,
            "refused=%d status=%s message=\"%s\" (want one containing \"%s\")", failed,
            lt_status_name(lt_status_of(ctx)), lt_error(ctx), kw);
    lt_clear_error(ctx);
}

static void td_path(char *buf, size_t cap, const char *file) { snprintf(buf, cap, "%s/%s", t_tmp_dir(), file); }

static int td_write(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = 0;
    return ok;
}

static void td_put32(unsigned char *p, uint32_t v) { int i; for (i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static void td_put64(unsigned char *p, uint64_t v) { int i; for (i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }

/* An llm.c shard: header [magic, version, count], then the tokens as uint16 (malloc'd). */
static unsigned char *td_shard(uint32_t magic, uint32_t version, uint32_t count, const uint16_t *tok, size_t ntok, size_t *size) {
    unsigned char *b;
    size_t i;
    *size = 1024 + 2 * ntok;
    b = (unsigned char *)calloc(1, *size);
    td_put32(b, magic); td_put32(b + 4, version); td_put32(b + 8, count);
    for (i = 0; i < ntok; i++) { b[1024 + 2 * i] = (unsigned char)tok[i]; b[1024 + 2 * i + 1] = (unsigned char)(tok[i] >> 8); }
    return b;
}

/* A safetensors file in memory: 8-byte length, the header text, `data` zero bytes (malloc'd). */
static unsigned char *td_st(const char *header, size_t data, size_t *size) {
    size_t h = strlen(header);
    unsigned char *b;
    *size = 8 + h + data;
    b = (unsigned char *)calloc(1, *size);
    td_put64(b, h);
    memcpy(b + 8, header, h);
    return b;
}

/* ---- loaders -------------------------------------------------------------------------------- */
static void test_data_loader(lt_ctx *ctx) {
    int32_t tok[64], in[16] = {0}, tg[16] = {0};
    int i;
    for (i = 0; i < 64; i++) tok[i] = i;
    if (t_want("data_loader_batches")) {
        /* n = 21, B*T = 6: windows start at 0, 6, 12 (12+7 = 19 <= 21; 18+7 > 21 wraps) */
        lt_loader *ld = lt_loader_from_tokens(ctx, tok, 21, 2, 3);
        int ok = ld != NULL, b, k;
        int64_t e, ix;
        for (b = 0; ok && b < 7; b++) {
            int start = 6 * (b % 3);
            lt_loader_get_pos(ld, &e, &ix);
            ok = ix == b % 3 && e == b / 3 && lt_loader_next(ld, in, tg) == LT_OK;
            for (k = 0; ok && k < 6; k++) ok = in[k] == start + k && tg[k] == start + k + 1;
        }
        t_check(ok, "data_loader_batches", "batch %d wrong (inputs start %d)", b - 1, (int)in[0]);
        lt_loader_destroy(ld);
    }
    if (t_want("data_loader_exact_end")) {
        /* n = 19 = 3*6+1: the last window ends on the last token */
        lt_loader *ld = lt_loader_from_tokens(ctx, tok, 19, 1, 6);
        int ok = ld != NULL;
        for (i = 0; ok && i < 3; i++) ok = lt_loader_next(ld, in, tg) == LT_OK;
        ok = ok && in[0] == 12 && tg[5] == 18;
        ok = ok && lt_loader_next(ld, in, tg) == LT_OK && in[0] == 0;
        t_check(ok, "data_loader_exact_end", "3rd window should be 12..18 and then wrap to 0");
        lt_loader_destroy(ld);
    }
    if (t_want("data_loader_too_few_tokens")) {
        lt_loader *ld = lt_loader_from_tokens(ctx, tok, 6, 2, 3);
        td_refused("data_loader_too_few_tokens", ctx, ld == NULL, "B*T+1");
        lt_loader_destroy(ld);
        ld = lt_loader_from_tokens(ctx, tok, 20, 0, 3);
        td_refused("data_loader_bad_B", ctx, ld == NULL, "B=0");
    }
    if (t_want("data_loader_set_pos")) {
        lt_loader *ld = lt_loader_from_tokens(ctx, tok, 21, 2, 3);
        int64_t e, ix;
        int ok = ld && lt_loader_set_pos(ld, 4, 2) == LT_OK && lt_loader_next(ld, in, tg) == LT_OK && in[0] == 12;
        lt_loader_get_pos(ld, &e, &ix);
        t_check(ok && e == 5 && ix == 0, "data_loader_set_pos", "set_pos(4,2) then next: in[0] %d, pos (%lld,%lld)",
                (int)in[0], (long long)e, (long long)ix);
        td_refused("data_loader_set_pos_range", ctx, lt_loader_set_pos(ld, 0, 3) != LT_OK, "out of range");
        lt_loader_destroy(ld);
    }
    if (t_want("data_loader_shuffle")) {
        /* 5 windows per epoch (n = 34, B*T = 6); each epoch must visit each window once */
        lt_loader *ld = lt_loader_from_tokens(ctx, tok, 34, 1, 6), *ld2 = lt_loader_from_tokens(ctx, tok, 34, 1, 6);
        int order[4][5], seen, ok = ld && ld2, same = 1, ep, b, k;
        int64_t e, ix;
        lt_loader_shuffle(ld, 42);
        for (ep = 0; ok && ep < 4; ep++) {
            seen = 0;
            for (b = 0; ok && b < 5; b++) {
                ok = lt_loader_next(ld, in, tg) == LT_OK && in[0] % 6 == 0 && in[0] / 6 < 5;
                for (k = 0; ok && k < 6; k++) ok = in[k] == in[0] + k && tg[k] == in[0] + k + 1;
                order[ep][b] = in[0] / 6;
                seen |= 1 << order[ep][b];
            }
            ok = ok && seen == 31;
            if (ep) for (b = 0; b < 5; b++) same &= order[ep][b] == order[0][b];
        }
        lt_loader_get_pos(ld, &e, &ix);
        t_check(ok && !same && e == 4 && ix == 0, "data_loader_shuffle_permutes",
                "each epoch must be a permutation of the 5 windows, and epochs must differ (same=%d)", same);
        /* a fresh loader with the same seed, put at (2, 3), continues exactly */
        lt_loader_shuffle(ld2, 42);
        ok = ld2 && lt_loader_set_pos(ld2, 2, 3) == LT_OK;
        for (b = 3; ok && b < 5; b++) ok = lt_loader_next(ld2, in, tg) == LT_OK && in[0] / 6 == order[2][b];
        for (b = 0; ok && b < 5; b++) ok = lt_loader_next(ld2, in, tg) == LT_OK && in[0] / 6 == order[3][b];
        t_check(ok, "data_loader_shuffle_set_pos", "after set_pos(2,3) the windows differ from the first run");
        /* another seed gives another order */
        lt_loader_shuffle(ld2, 43);
        lt_loader_set_pos(ld2, 0, 0);
        same = 1;
        for (b = 0; ld2 && b < 5; b++) { lt_loader_next(ld2, in, tg); same &= in[0] / 6 == order[0][b]; }
        t_check(!same, "data_loader_shuffle_seed", "seed 43 gave seed 42's order");
        lt_loader_destroy(ld);
        lt_loader_destroy(ld2);
    }
    if (t_want("data_loader_text")) {
        char path[512];
        const char *text = "hello, world! a small text file.";
        lt_loader *ld;
        int ok;
        td_path(path, sizeof path, "loader.txt");
        td_write(path, text, strlen(text));
        ld = lt_loader_open(ctx, path, 2, 4, 0);
        ok = ld && !lt_loader_is_shard(ld) && lt_loader_num_tokens(ld) == (int64_t)strlen(text);
        for (i = 0; ok && i < (int)strlen(text); i++) ok = lt_loader_tokens(ld)[i] == (unsigned char)text[i];
        ok = ok && lt_loader_next(ld, in, tg) == LT_OK && in[7] == 'w' && tg[7] == 'o';
        ok = ok && lt_loader_next(ld, in, tg) == LT_OK && in[0] == 'o' && tg[7] == 's';
        t_check(ok, "data_loader_text", "tokens must be the file's bytes (%s)", lt_error(ctx));
        lt_loader_destroy(ld);
        ld = lt_loader_open(ctx, path, 4, 8, 0);
        td_refused("data_loader_text_too_short", ctx, ld == NULL, "B*T+1");
        ld = lt_loader_open(ctx, path, 1, 4, 112); /* 'w' = 119 at position 7 is the first byte >= 112 */
        td_refused("data_loader_text_vocab", ctx, ld == NULL, "byte 119 at position 7");
        td_path(path, sizeof path, "no_such_file.txt");
        ld = lt_loader_open(ctx, path, 1, 4, 0);
        td_refused("data_loader_missing_file", ctx, ld == NULL && lt_status_of(ctx) == LT_ERR_IO, "no_such_file.txt");
    }
}

/* ---- token shards ----------------------------------------------------------------------------- */
static void test_data_shard(lt_ctx *ctx) {
    uint16_t tok[40];
    unsigned char *b;
    size_t size;
    int32_t *out = NULL;
    int64_t n = -1;
    int i;
    for (i = 0; i < 40; i++) tok[i] = (uint16_t)(i * 1637 % 50257);
    if (t_want("data_shard_roundtrip")) {
        char path[512];
        lt_loader *ld;
        int32_t in[8], tg[8];
        int ok;
        b = td_shard(20240520, 1, 40, tok, 40, &size);
        ok = lt_shard_parse(ctx, b, size, "mem", 50257, &out, &n) == LT_OK && n == 40;
        for (i = 0; ok && i < 40; i++) ok = out[i] == tok[i];
        t_check(ok, "data_shard_parse", "%s", lt_error(ctx));
        lt_free(out);
        td_path(path, sizeof path, "tokens.bin");
        td_write(path, b, size);
        ld = lt_loader_open(ctx, path, 2, 4, 50257);
        ok = ld && lt_loader_is_shard(ld) && lt_loader_num_tokens(ld) == 40;
        for (i = 0; ok && i < 40; i++) ok = lt_loader_tokens(ld)[i] == tok[i];
        ok = ok && lt_loader_next(ld, in, tg) == LT_OK && in[7] == tok[7] && tg[7] == tok[8];
        t_check(ok, "data_shard_roundtrip", "loader over a written shard: %s", lt_error(ctx));
        lt_loader_destroy(ld);
        /* on disk, a token past the vocab: named with its position */
        ld = lt_loader_open(ctx, path, 2, 4, 30000);
        td_refused("data_shard_bad_vocab_file", ctx, ld == NULL, "tokens.bin: token 31103 at position 19");
        free(b);
    }
    if (t_want("data_shard_bad")) {
        b = td_shard(20240520, 1, 40, tok, 40, &size);
        td_refused("data_shard_bad_short", ctx, lt_shard_parse(ctx, b, 1000, "s", 0, &out, &n) != LT_OK, "too short");
        td_refused("data_shard_bad_empty", ctx, lt_shard_parse(ctx, b, 0, "s", 0, &out, &n) != LT_OK, "too short");
        td_refused("data_shard_bad_size_short", ctx, lt_shard_parse(ctx, b, size - 1, "s", 0, &out, &n) != LT_OK, "token count 40");
        free(b);
        b = td_shard(20240521, 1, 40, tok, 40, &size);
        td_refused("data_shard_bad_magic", ctx, lt_shard_parse(ctx, b, size, "s", 0, &out, &n) != LT_OK, "magic");
        free(b);
        b = td_shard(20240520, 2, 40, tok, 40, &size);
        td_refused("data_shard_bad_version", ctx, lt_shard_parse(ctx, b, size, "s", 0, &out, &n) != LT_OK, "version is 2");
        free(b);
        b = td_shard(20240520, 1, 41, tok, 40, &size);
        td_refused("data_shard_bad_size", ctx, lt_shard_parse(ctx, b, size, "s", 0, &out, &n) != LT_OK, "token count 41");
        free(b);
        b = td_shard(20240520, 1, 0x80000000u, tok, 40, &size);
        td_refused("data_shard_bad_negative_count", ctx, lt_shard_parse(ctx, b, size, "s", 0, &out, &n) != LT_OK, "negative");
        free(b);
        b = td_shard(20240520, 1, 40, tok, 40, &size);
        td_refused("data_shard_bad_vocab", ctx, lt_shard_parse(ctx, b, size, "s", 20000, &out, &n) != LT_OK,
                   "s: token 21281 at position 13 is >= the vocab size 20000");
        t_check(out == NULL && n == 0, "data_shard_bad_outputs", "a failed parse must leave tokens NULL and n 0");
        free(b);
    }
}

/* ---- token storage and formats (data.*) -------------------------------------------------------- */
/* Draws `batches` batches from both loaders (shuffled with seed when seed != 0): equal bits? */
static int td_same_batches(lt_loader *a, lt_loader *b, int batches, uint64_t seed) {
    int32_t ia[64], ta[64], ib[64], tb[64];
    int k;
    if (!a || !b) return 0;
    memset(ia, 0, sizeof ia); memset(ta, 0, sizeof ta); memset(ib, 0, sizeof ib); memset(tb, 0, sizeof tb);
    if (seed) { lt_loader_shuffle(a, seed); lt_loader_shuffle(b, seed); }
    for (k = 0; k < batches; k++) {
        if (lt_loader_next(a, ia, ta) != LT_OK || lt_loader_next(b, ib, tb) != LT_OK) return 0;
        if (memcmp(ia, ib, sizeof ia) || memcmp(ta, tb, sizeof ta)) return 0;
    }
    return 1;
}

static void test_data_store(lt_ctx *ctx) {
    char path[512], bin[512];
    unsigned char text[3000], zeros[100];
    int32_t wide[3000], out[16];
    uint16_t tok[1500];
    unsigned char *b;
    size_t size;
    int i, ok;
    for (i = 0; i < 3000; i++) { text[i] = (unsigned char)(i * 37 % 251 + (i % 7 == 0 ? 3 : 0)); wide[i] = text[i]; }
    for (i = 0; i < 1500; i++) tok[i] = (uint16_t)(i * 7919 % 65521);
    memset(zeros, 0, sizeof zeros);
    td_path(path, sizeof path, "store.txt");
    td_write(path, text, sizeof text);
    if (t_want("data.store.text_bytes")) {
        /* a text file is stored as bytes; its batches are those of the same tokens as int32 */
        lt_loader *ld = lt_loader_open(ctx, path, 4, 16, 0), *ref = lt_loader_from_tokens(ctx, wide, 3000, 4, 16);
        ok = ld && lt_loader_token_bytes(ld) == 1 && lt_loader_token_bytes(ref) == 4 && td_same_batches(ld, ref, 100, 0);
        t_check(ok, "data.store.text_bytes", "byte storage changed the batches (%s)", lt_error(ctx));
        lt_loader_destroy(ld); lt_loader_destroy(ref);
        ld = lt_loader_open(ctx, path, 4, 16, 0); ref = lt_loader_from_tokens(ctx, wide, 3000, 4, 16);
        t_check(td_same_batches(ld, ref, 150, 42), "data.store.text_bytes_shuffled", "shuffled batches differ");
        lt_loader_destroy(ld); lt_loader_destroy(ref);
    }
    if (t_want("data.store.shard_uint16")) {
        int32_t w[1500];
        lt_loader *ld, *ref;
        for (i = 0; i < 1500; i++) w[i] = tok[i];
        b = td_shard(20240520, 1, 1500, tok, 1500, &size);
        td_path(bin, sizeof bin, "store.bin");
        td_write(bin, b, size);
        free(b);
        ld = lt_loader_open(ctx, bin, 2, 16, 0); ref = lt_loader_from_tokens(ctx, w, 1500, 2, 16);
        ok = ld && lt_loader_is_shard(ld) && lt_loader_token_bytes(ld) == 2 && td_same_batches(ld, ref, 100, 0);
        lt_loader_destroy(ld); lt_loader_destroy(ref);
        ld = lt_loader_open(ctx, bin, 2, 16, 0); ref = lt_loader_from_tokens(ctx, w, 1500, 2, 16);
        ok = ok && td_same_batches(ld, ref, 100, 7);
        t_check(ok, "data.store.shard_uint16", "uint16 storage changed the batches (%s)", lt_error(ctx));
        /* the deprecated int32 view and lt_loader_read agree with the file */
        ok = ld && lt_loader_tokens(ld) && lt_loader_tokens(ld)[1499] == tok[1499] &&
             lt_loader_read(ld, 1490, 10, out) == LT_OK && out[9] == tok[1499] && out[0] == tok[1490];
        t_check(ok, "data.store.read", "lt_loader_tokens / lt_loader_read: %s", lt_error(ctx));
        td_refused("data.store.read_range", ctx, ld && lt_loader_read(ld, 1495, 10, out) != LT_OK, "outside [0, 1500)");
        td_refused("data.store.vocab_later", ctx, ld && lt_loader_check_vocab(ld, 60000) != LT_OK,
                   "store.bin: token 6");
        lt_loader_destroy(ld); lt_loader_destroy(ref);
    }
    if (t_want("data.format")) {
        lt_loader *ld;
        td_path(bin, sizeof bin, "zeros.bin");
        td_write(bin, zeros, sizeof zeros);
        ld = lt_loader_open(ctx, bin, 1, 4, 0);
        td_refused("data.format.bin_short", ctx, ld == NULL, "zeros.bin: 100 bytes is too short for an llm.c token shard");
        ld = lt_loader_open_as(ctx, bin, LT_DATA_TEXT, 1, 4, 0);
        ok = ld && !lt_loader_is_shard(ld) && lt_loader_num_tokens(ld) == 100 && lt_loader_token_bytes(ld) == 1;
        t_check(ok, "data.format.text_on_bin", "LT_DATA_TEXT reads a .bin as text: %s", lt_error(ctx));
        lt_loader_destroy(ld);
        b = td_shard(20240521, 1, 40, tok, 40, &size);
        td_write(bin, b, size);
        free(b);
        ld = lt_loader_open(ctx, bin, 1, 4, 0);
        td_refused("data.format.bin_magic", ctx, ld == NULL, "magic number is 20240521, expected 20240520");
        b = td_shard(20240520, 3, 40, tok, 40, &size);
        td_write(bin, b, size);
        ld = lt_loader_open(ctx, bin, 1, 4, 0);
        td_refused("data.format.bin_version", ctx, ld == NULL, "version is 3, expected 1");
        free(b);
        b = td_shard(20240520, 1, 40, tok, 40, &size);
        td_write(bin, b, size - 2);
        ld = lt_loader_open(ctx, bin, 1, 4, 0);
        td_refused("data.format.bin_count", ctx, ld == NULL, "is 1102 bytes but the header's token count 40 needs 1104");
        free(b);
        ld = lt_loader_open_as(ctx, path, LT_DATA_SHARD, 1, 4, 0);
        td_refused("data.format.shard_on_text", ctx, ld == NULL, "store.txt: shard header: magic number is");
        /* a valid shard under another name is still a shard (its magic says so) */
        b = td_shard(20240520, 1, 40, tok, 40, &size);
        td_path(bin, sizeof bin, "shard.dat");
        td_write(bin, b, size);
        free(b);
        ld = lt_loader_open(ctx, bin, 1, 4, 0);
        t_check(ld && lt_loader_is_shard(ld) && lt_loader_num_tokens(ld) == 40, "data.format.auto_magic",
                "a shard named .dat: %s", lt_error(ctx));
        lt_loader_destroy(ld);
        ld = lt_loader_open_as(ctx, bin, (lt_data_format)7, 1, 4, 0);
        td_refused("data.format.bad_value", ctx, ld == NULL && lt_status_of(ctx) == LT_ERR_ARG, "format 7");
        ld = lt_loader_open(ctx, t_tmp_dir(), 1, 4, 0);
        td_refused("data.format.directory", ctx, ld == NULL, "directory");
    }
    if (t_want("data.seq")) {
        /* sequences sharing a stream loader's tokens give the batches lt_seq_open gives, and
           either loader may be destroyed first; text from bytes batches as text from int32 */
        lt_seq_config c = lt_seq_defaults();
        lt_batch b1, b2;
        lt_loader *ld = lt_loader_open(ctx, path, 2, 8, 0);
        lt_seq_loader *s1 = lt_seq_open(ctx, path, &c, 0), *s2 = ld ? lt_seq_from_loader(ctx, ld, &c) : NULL, *s3;
        int k;
        memset(&b1, 0, sizeof b1); memset(&b2, 0, sizeof b2);
        lt_loader_destroy(ld);
        ok = s1 && s2 && lt_seq_count(s1) == lt_seq_count(s2) && lt_seq_count(s1) > 10;
        for (k = 0; ok && k < 40; k++)
            ok = lt_seq_next(s1, 0, &b1) == LT_OK && lt_seq_next(s2, 0, &b2) == LT_OK && b1.B == b2.B && b1.T == b2.T &&
                 !memcmp(b1.ids, b2.ids, (size_t)b1.B * b1.T * 4) && !memcmp(b1.targets, b2.targets, (size_t)b1.B * b1.T * 4);
        t_check(ok, "data.seq.from_loader", "batch %d differs (%s)", k, lt_error(ctx));
        c.split = LT_SEQ_EOT; c.eot = 3;
        lt_seq_destroy(s1); lt_seq_destroy(s2);
        s1 = lt_seq_from_text(ctx, (const char *)text, sizeof text, &c);
        s3 = lt_seq_from_tokens(ctx, wide, 3000, &c);
        ok = s1 && s3 && lt_seq_count(s1) == lt_seq_count(s3);
        for (k = 0; ok && k < 40; k++)
            ok = lt_seq_next(s1, 5, &b1) == LT_OK && lt_seq_next(s3, 5, &b2) == LT_OK && b1.B == b2.B && b1.T == b2.T &&
                 !memcmp(b1.ids, b2.ids, (size_t)b1.B * b1.T * 4) && !memcmp(b1.targets, b2.targets, (size_t)b1.B * b1.T * 4);
        ok = ok && lt_seq_tokens(s1, 2) && lt_seq_tokens(s3, 2) && lt_seq_tokens(s1, 2)[1] == lt_seq_tokens(s3, 2)[1];
        t_check(ok, "data.seq.bytes_as_int32", "batch %d differs (%s)", k, lt_error(ctx));
        lt_seq_destroy(s1); lt_seq_destroy(s3);
        lt_batch_free(&b1); lt_batch_free(&b2);
        td_path(bin, sizeof bin, "store.bin");
        ld = lt_loader_open(ctx, bin, 2, 8, 0);
        c.split = LT_SEQ_LINES;
        s1 = ld ? lt_seq_from_loader(ctx, ld, &c) : NULL;
        td_refused("data.seq.shard_lines", ctx, ld && s1 == NULL, "a token shard is split at an end-of-text id");
        lt_loader_destroy(ld);
    }
}

/* ---- safetensors -------------------------------------------------------------------------------- */
static void test_data_st_roundtrip(lt_ctx *ctx) {
    static const float a[6] = {0.5f, -1.25f, 3.0f, 4.5f, -0.0f, 1e-3f}, sc = 2.5f, one = -1.0f;
    static const int64_t ids[4] = {1, -2, (int64_t)1 << 40, 7};
    static const char *weird = "we\"ird\\name\n\xc3\xa9";
    int64_t sa[2] = {2, 3}, si[1] = {4}, se[2] = {0, 3}, s1[1] = {1}, shape[8];
    char path[512];
    lt_st_writer *w;
    lt_st *st;
    float got[6];
    size_t bytes;
    int ok;
    if (!t_want("st_roundtrip")) return;
    td_path(path, sizeof path, "st_roundtrip.safetensors");
    w = lt_st_writer_create(ctx);
    ok = lt_st_add(w, "a.weight", "F32", 2, sa, a) == LT_OK && lt_st_add(w, "ids", "I64", 1, si, ids) == LT_OK &&
         lt_st_add(w, "scalar", "F32", 0, NULL, &sc) == LT_OK && lt_st_add(w, "empty", "F32", 2, se, NULL) == LT_OK &&
         lt_st_add(w, weird, "F32", 1, s1, &one) == LT_OK && lt_st_add_meta(w, "format", "np") == LT_OK &&
         lt_st_add_meta(w, "note", "line1\nline2 \"q\"") == LT_OK && lt_st_add_meta(w, "format", "pt") == LT_OK &&
         lt_st_save(w, path) == LT_OK;
    t_check(ok, "st_roundtrip_save", "%s", lt_error(ctx));
    td_refused("st_writer_duplicate", ctx, lt_st_add(w, "ids", "I64", 1, si, ids) != LT_OK, "duplicate");
    td_refused("st_writer_after_failure", ctx, lt_st_save(w, path) == LT_ERR_STATE, "earlier");
    lt_st_writer_destroy(w);

    st = lt_st_open(ctx, path);
    ok = st && lt_st_count(st) == 5;
    ok = ok && strcmp(lt_st_name(st, 0), "a.weight") == 0 && strcmp(lt_st_name(st, 4), weird) == 0;
    ok = ok && lt_st_find(st, "ids") == 1 && lt_st_find(st, weird) == 4 && lt_st_find(st, "nope") == -1;
    ok = ok && strcmp(lt_st_dtype(st, 1), "I64") == 0 && lt_st_shape(st, 0, shape) == 2 && shape[0] == 2 && shape[1] == 3;
    ok = ok && lt_st_shape(st, 2, shape) == 0 && lt_st_shape(st, 3, shape) == 2 && shape[0] == 0 && shape[1] == 3;
    ok = ok && lt_st_data(st, 1, &bytes) && bytes == 32 && memcmp(lt_st_data(st, 1, NULL), ids, 32) == 0;
    ok = ok && lt_st_read_f32(st, 0, got, 6) == LT_OK && memcmp(got, a, sizeof a) == 0;
    ok = ok && lt_st_read_f32(st, 2, got, 1) == LT_OK && got[0] == 2.5f && lt_st_read_f32(st, 3, got, 0) == LT_OK;
    ok = ok && lt_st_meta(st, "format") && strcmp(lt_st_meta(st, "format"), "pt") == 0 &&
         strcmp(lt_st_meta(st, "note"), "line1\nline2 \"q\"") == 0 && lt_st_meta(st, "x") == NULL;
    t_check(ok, "st_roundtrip", "read back differs: %s", lt_error(ctx));
    td_refused("st_read_f32_wrong_n", ctx, st && lt_st_read_f32(st, 0, got, 5) != LT_OK, "6 values");
    td_refused("st_read_f32_int", ctx, st && lt_st_read_f32(st, 1, got, 4) != LT_OK, "is I64");
    lt_st_close(st);
    {
        /* the header is padded to a multiple of 8 with spaces */
        void *buf;
        size_t size;
        int i;
        ok = lt_read_file(ctx, path, &buf, &size) == LT_OK && size > 8;
        const unsigned char *p = (const unsigned char *)buf;
        uint64_t hl = 0;
        for (i = 7; ok && i >= 0; i--) hl = hl << 8 | p[i];
        ok = ok && hl % 8 == 0 && hl < size && p[8 + hl - 1] == ' ';
        t_check(ok, "st_roundtrip_padding", "header length must be a multiple of 8, padded with spaces");
        lt_free(buf);
    }
    if (t_want("st_open_pipe")) {
        /* lt_st_open reads a regular file's tensors when asked and a pipe into memory at once: the
           same tensors either way.  Under a 64-byte data limit the regular file still opens (only
           its header is read then) and the pipe is refused, so both ways are taken. */
        char fifo[512], mapped_err[256] = "";
        lt_st *m, *p = NULL;
        int k, same;
        pid_t pid;
        td_path(fifo, sizeof fifo, "st_roundtrip.fifo");
        remove(fifo);
        setenv("LTRAIN_DATA_LIMIT", "64", 1);
        m = lt_st_open(ctx, path);
        if (!m) snprintf(mapped_err, sizeof mapped_err, "%.200s", lt_error(ctx));
        lt_clear_error(ctx);
        for (k = 0; k < 2; k++) {   /* k = 0: under the limit (refused); k = 1: no limit */
            if (k == 1) unsetenv("LTRAIN_DATA_LIMIT");
            if (mkfifo(fifo, 0600) != 0) break;
            pid = fork();
            if (pid == 0) {         /* the writer: the file's bytes into the pipe */
                char bytes[4096];
                FILE *in = fopen(path, "rb");
                size_t n = in ? fread(bytes, 1, sizeof bytes, in) : 0, off = 0;
                int fd;
                alarm(30);
                fd = open(fifo, O_WRONLY);
                while (fd >= 0 && off < n) {
                    ssize_t w = write(fd, bytes + off, n - off);
                    if (w <= 0) break;
                    off += (size_t)w;
                }
                _exit(0);
            }
            if (k == 0) {
                lt_st *q = lt_st_open(ctx, fifo);
                td_refused("st_open_pipe_limit", ctx, q == NULL, "over the data limit");
                lt_st_close(q);
            } else {
                p = lt_st_open(ctx, fifo);
            }
            if (pid > 0) waitpid(pid, NULL, 0);
            remove(fifo);
        }
        unsetenv("LTRAIN_DATA_LIMIT");
        same = m && p && lt_st_count(m) == lt_st_count(p);
        for (k = 0; same && k < lt_st_count(m); k++) {
            size_t bm, bp;
            const void *dm = lt_st_data(m, k, &bm), *dp = lt_st_data(p, k, &bp);
            same = strcmp(lt_st_name(m, k), lt_st_name(p, k)) == 0 && bm == bp && (bm == 0 || memcmp(dm, dp, bm) == 0);
        }
        t_check(same, "st_open_pipe", "regular file %s (%s), pipe %s: %s", m ? "opened" : "refused", mapped_err,
                p ? "opened" : "refused", lt_error(ctx));
        lt_clear_error(ctx);
        lt_st_close(m);
        lt_st_close(p);
    }
    {
        char bad[600];
        snprintf(bad, sizeof bad, "%s/no_such_dir/x.safetensors", t_tmp_dir());
        w = lt_st_writer_create(ctx);
        lt_st_add(w, "a", "F32", 2, sa, a);
        td_refused("st_save_io_error", ctx, lt_st_save(w, bad) == LT_ERR_IO, "no_such_dir/x.safetensors\": No such file");
        lt_st_writer_destroy(w);
    }
}

/* Tensors read from the file on demand (lt_st_open) against the same bytes parsed in memory
   (lt_st_parse): every float type converts alike over several 256 KiB pieces, and a file cut
   short after it was opened is an error naming the tensor. */
static void test_data_st_file(lt_ctx *ctx) {
    enum { NB = 300000, ND = 70000 };
    char path[512];
    uint16_t *bf = (uint16_t *)malloc(NB * 2);
    double *dd = (double *)malloc(ND * 8);
    float *a = (float *)malloc(NB * 4), *b = (float *)malloc(NB * 4);
    int64_t sb[1] = {NB}, sf[1] = {NB / 2}, sd[2] = {ND / 10, 10};
    lt_st_writer *w;
    lt_st *f = NULL, *m = NULL;
    void *bytes = NULL;
    size_t size = 0;
    int i, k, ok;
    if (!t_want("st_file") || !bf || !dd || !a || !b) { free(bf); free(dd); free(a); free(b); return; }
    for (i = 0; i < NB; i++) bf[i] = (uint16_t)(i * 2654435761u >> 16);   /* every pattern: NaN, inf, subnormal too */
    for (i = 0; i < ND; i++) dd[i] = (i - ND / 2) * 1.000001e-3 * (i % 7 == 0 ? 1e40 : 1.0);
    td_path(path, sizeof path, "st_file.safetensors");
    w = lt_st_writer_create(ctx);
    ok = lt_st_add(w, "bf", "BF16", 1, sb, bf) == LT_OK && lt_st_add(w, "f16", "F16", 1, sb, bf) == LT_OK &&
         lt_st_add(w, "f64", "F64", 2, sd, dd) == LT_OK && lt_st_add(w, "f32", "F32", 1, sf, bf) == LT_OK &&
         lt_st_save(w, path) == LT_OK;
    lt_st_writer_destroy(w);
    ok = ok && lt_read_file(ctx, path, &bytes, &size) == LT_OK;
    f = ok ? lt_st_open(ctx, path) : NULL;
    m = ok ? lt_st_parse(ctx, bytes, size, "memory") : NULL;
    ok = f && m && lt_st_count(f) == 4;
    for (k = 0; ok && k < 4; k++) {
        int64_t n = k == 2 ? ND : (k == 3 ? NB / 2 : NB);
        size_t nb1, nb2;
        const void *d1 = lt_st_data(f, k, &nb1), *d2 = lt_st_data(m, k, &nb2);
        memset(a, 0, NB * 4);
        memset(b, 0xff, NB * 4);
        ok = lt_st_read_f32(f, k, a, n) == LT_OK && lt_st_read_f32(m, k, b, n) == LT_OK &&
             memcmp(a, b, (size_t)n * 4) == 0 && d1 && d2 && nb1 == nb2 && memcmp(d1, d2, nb1) == 0;
        t_check(ok, "st_file_convert", "tensor %s read from the file differs from the bytes in memory: %s",
                lt_st_name(m, k), lt_error(ctx));
    }
    lt_st_close(f);
    /* open, then cut the file inside the last tensor ("f32", 600000 bytes at the end) */
    f = ok ? lt_st_open(ctx, path) : NULL;
    if (f && truncate(path, (off_t)size - 1000) == 0) {
        td_refused("st_file_truncated", ctx, lt_st_read_f32(f, 3, a, NB / 2) == LT_ERR_IO,
                   "ends inside tensor \"f32\"");
        td_refused("st_file_truncated_data", ctx, lt_st_data(f, 3, NULL) == NULL, "shorter than when it was opened");
        ok = lt_st_read_f32(f, 0, a, NB) == LT_OK;   /* what is still there still reads */
        t_check(ok, "st_file_truncated_rest", "%s", lt_error(ctx));
    } else {
        t_check(0, "st_file_truncated", "could not open and cut %s: %s", path, lt_error(ctx));
    }
    lt_clear_error(ctx);
    lt_st_close(f);
    lt_st_close(m);
    lt_free(bytes);
    free(bf); free(dd); free(a); free(b);
}

static void test_data_st_python(lt_ctx *ctx) {
    char path[512], bin[512];
    t_ref ref;
    lt_st *st;
    int i;
    if (!t_want("st_python")) return;
    snprintf(path, sizeof path, "%s/st_ref.safetensors", t_ref_dir());
    snprintf(bin, sizeof bin, "%s/st_ref.bin", t_ref_dir());
    st = lt_st_open(ctx, path);
    if (!t_check(st && t_ref_load(&ref, bin) && ref.n == 7, "st_python_open", "%s / %s (run tests/ref/gen_st.py): %s",
                 path, bin, lt_error(ctx))) {
        lt_clear_error(ctx);
        lt_st_close(st);
        return;
    }
    t_check(lt_st_count(st) == 7 && lt_st_meta(st, "format") && strcmp(lt_st_meta(st, "format"), "pt") == 0 &&
            strcmp(lt_st_dtype(st, lt_st_find(st, "w_f16")), "F16") == 0 &&
            strcmp(lt_st_dtype(st, lt_st_find(st, "w_bf16")), "BF16") == 0,
            "st_python_header", "tensors, dtypes or metadata differ");
    for (i = 0; i < ref.n; i++) {
        t_arr *r = &ref.a[i];
        int k = lt_st_find(st, r->name), nd, d, shape_ok;
        int64_t shape[8];
        char name[160];
        snprintf(name, sizeof name, "st_python_%s", r->name);
        nd = lt_st_shape(st, k, shape);
        shape_ok = k >= 0 && nd == r->ndim;
        for (d = 0; shape_ok && d < nd; d++) shape_ok = shape[d] == r->shape[d];
        if (!t_check(shape_ok, name, "missing or wrong shape")) continue;
        if (strcmp(lt_st_dtype(st, k), "I64") == 0) {
            /* integers: the raw little-endian values */
            const unsigned char *p = (const unsigned char *)lt_st_data(st, k, NULL);
            int ok = 1;
            int64_t j;
            for (j = 0; j < r->n; j++) {
                uint64_t u = 0;
                for (d = 7; d >= 0; d--) u = u << 8 | p[8 * j + d];
                ok &= (double)(int64_t)u == (double)r->data[j];
            }
            t_check(ok, name, "I64 values differ");
        } else {
            float *got = (float *)malloc((size_t)r->n * sizeof(float));
            if (t_check(lt_st_read_f32(st, k, got, r->n) == LT_OK, name, "%s", lt_error(ctx)))
                t_close(name, got, r->data, r->n, 0, 0); /* conversions are exact: what torch's .float() gives */
            free(got);
        }
    }
    lt_clear_error(ctx);
    t_ref_free(&ref);
    lt_st_close(st);
}

/* Conversions of special values, bit for bit. */
static void test_data_st_convert(lt_ctx *ctx) {
    static const uint16_t h[10] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x7C00, 0xFC00, 0x8000, 0x7E00};
    static const uint16_t bf[5] = {0x3F80, 0x7F7F, 0x0001, 0xFF80, 0x7FC0};
    float want_h[10], want_bf[5], want_d[5], got[16];
    double d[5];
    unsigned char *b;
    size_t size;
    lt_st *st;
    int i, ok;
    uint32_t u;
    const char *hdr = "{\"h\":{\"dtype\":\"F16\",\"shape\":[10],\"data_offsets\":[0,20]},"
                      "\"b\":{\"dtype\":\"BF16\",\"shape\":[5],\"data_offsets\":[20,30]},"
                      "\"d\":{\"dtype\":\"F64\",\"shape\":[5],\"data_offsets\":[30,70]}}";
    if (!t_want("st_convert")) return;
    want_h[0] = 1.0f; want_h[1] = -2.0f; want_h[2] = 65504.0f; want_h[3] = ldexpf(1.0f, -24);
    want_h[4] = 1023.0f * ldexpf(1.0f, -24); want_h[5] = ldexpf(1.0f, -14); want_h[6] = HUGE_VALF;
    want_h[7] = -HUGE_VALF; want_h[8] = -0.0f;
    want_bf[0] = 1.0f; want_bf[1] = 3.38953139e38f; want_bf[2] = ldexpf(1.0f, -133); want_bf[3] = -HUGE_VALF;
    d[0] = 0.1; d[1] = 1e300; d[2] = ldexp(1.0, 128) - ldexp(1.0, 103); d[3] = d[2] - ldexp(1.0, 75); d[4] = -1e-300;
    want_d[0] = 0.1f; want_d[1] = HUGE_VALF; want_d[2] = HUGE_VALF; want_d[3] = FLT_MAX; want_d[4] = -0.0f;
    b = td_st(hdr, 70, &size);
    for (i = 0; i < 10; i++) { b[size - 70 + 2 * i] = (unsigned char)h[i]; b[size - 70 + 2 * i + 1] = (unsigned char)(h[i] >> 8); }
    for (i = 0; i < 5; i++) { b[size - 50 + 2 * i] = (unsigned char)bf[i]; b[size - 50 + 2 * i + 1] = (unsigned char)(bf[i] >> 8); }
    for (i = 0; i < 5; i++) { uint64_t x; memcpy(&x, &d[i], 8); td_put64(b + size - 40 + 8 * i, x); }
    st = lt_st_parse(ctx, b, size, "convert");
    ok = st && lt_st_read_f32(st, 0, got, 10) == LT_OK;
    for (i = 0; ok && i < 9; i++) ok = memcmp(&got[i], &want_h[i], 4) == 0;
    memcpy(&u, &got[9], 4);
    t_check(ok && isnan(got[9]) && u == 0x7FC00000u, "st_convert_f16", "F16 value %d converted wrong", i - 1);
    ok = st && lt_st_read_f32(st, 1, got, 5) == LT_OK;
    for (i = 0; ok && i < 4; i++) ok = memcmp(&got[i], &want_bf[i], 4) == 0;
    t_check(ok && isnan(got[4]), "st_convert_bf16", "BF16 value %d converted wrong", i - 1);
    ok = st && lt_st_read_f32(st, 2, got, 5) == LT_OK;
    for (i = 0; ok && i < 5; i++) ok = memcmp(&got[i], &want_d[i], 4) == 0;
    t_check(ok, "st_convert_f64", "F64 value %d converted wrong (got %g)", i - 1, ok ? 0.0 : (double)got[i - 1]);
    lt_st_close(st);
    free(b);
}

/* ---- malformed safetensors: each must be refused with a message naming the problem -------------- */
static void test_data_st_malformed(lt_ctx *ctx) {
    static const struct { const char *name, *header; size_t data; const char *kw; } bad[] = {
        {"st_bad_json_empty", "", 0, "unexpected end"},
        {"st_bad_json_unterminated_string", "{\"a", 0, "unterminated string"},
        {"st_bad_json_unclosed_object", "{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}", 4, "expected ',' or '}'"},
        {"st_bad_json_trailing_comma", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}", 4, "expected a string key"},
        {"st_bad_json_missing_colon", "{\"a\" {}}", 0, "expected ':'"},
        {"st_bad_json_single_quoted_key", "{'a':{}}", 0, "expected a string key"},
        {"st_bad_json_single_quoted_value", "{\"a\":{\"dtype\":'F32'}}", 0, "unexpected character '''"},
        {"st_bad_json_float", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4, "only integers"},
        {"st_bad_json_exponent", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1e2],\"data_offsets\":[0,4]}}", 4, "only integers"},
        {"st_bad_json_leading_zero", "{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 4, "leading zero"},
        {"st_bad_json_huge_int", "{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}", 4, "out of range"},
        {"st_bad_json_literal", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":null}}", 4, "null"},
        {"st_bad_json_bad_escape", "{\"a\\q\":{}}", 0, "invalid escape"},
        {"st_bad_json_control_char", "{\"a\tb\":{}}", 0, "control character"},
        {"st_bad_json_bad_utf8", "{\"a\xc3(\":{}}", 0, "invalid UTF-8"},
        {"st_bad_json_lone_surrogate", "{\"\\ud800x\":{}}", 0, "surrogate"},
        {"st_bad_json_nul_escape", "{\"a\\u0000\":{}}", 0, "\\u0000"},
        {"st_bad_json_deep", "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]}", 0, "nested too deeply"},
        {"st_bad_json_trailing_garbage", "{} x", 0, "trailing characters"},
        {"st_bad_json_two_objects", "{}{}", 0, "trailing characters"},
        {"st_bad_root_not_object", "[]", 0, "must be a JSON object"},
        {"st_bad_entry_not_object", "{\"a\":[]}", 0, "tensor \"a\": must be an object"},
        {"st_bad_missing_field", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "missing field \"data_offsets\""},
        {"st_bad_unknown_field", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4, "unknown field \"x\""},
        {"st_bad_field_twice", "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "twice"},
        {"st_bad_duplicate_name", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                  "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "duplicate tensor name \"a\""},
        {"st_bad_unknown_dtype", "{\"a\":{\"dtype\":\"F31\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "unknown dtype \"F31\""},
        {"st_bad_dtype_not_string", "{\"a\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "dtype must be a string"},
        {"st_bad_negative_shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,-1],\"data_offsets\":[0,4]}}", 4, "shape[1] is -1"},
        {"st_bad_shape_not_int", "{\"a\":{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}}", 4, "shape[0] is not an integer"},
        {"st_bad_shape_overflow", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,4]}}", 4, "overflows"},
        {"st_bad_bytes_overflow", "{\"a\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]}}", 4, "overflows"},
        {"st_bad_too_many_dims", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "more than 8 dims"},
        {"st_bad_offsets_three", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,4]}}", 4, "two integers"},
        {"st_bad_offsets_negative", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4, "two integers"},
        {"st_bad_offsets_reversed", "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]}}", 4, "end before"},
        {"st_bad_offsets_overlap", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                                   "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, "overlap"},
        {"st_bad_offsets_hole", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, "hole in the data: bytes [4,8)"},
        {"st_bad_offsets_not_from_zero", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "hole"},
        {"st_bad_offsets_past_end", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 12, "past the end"},
        {"st_bad_size_mismatch", "{\"h.0.ln_1.weight\":{\"dtype\":\"F32\",\"shape\":[64],\"data_offsets\":[0,100]}}", 100,
         "tensor \"h.0.ln_1.weight\": data_offsets [0,100] but shape [64] of F32 needs 256 bytes"},
        {"st_bad_trailing_bytes", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 5, "1 trailing bytes"},
        {"st_bad_trailing_bytes_empty", "{}", 3, "3 trailing bytes"},
        {"st_bad_metadata_not_object", "{\"__metadata__\":[]}", 0, "__metadata__ must be an object"},
        {"st_bad_metadata_not_string", "{\"__metadata__\":{\"k\":1}}", 0, "value of \"k\" must be a string"},
        {"st_bad_metadata_twice", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "duplicate \"__metadata__\""},
        {"st_bad_metadata_duplicate_key", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, "key \"k\" twice"},
    };
    unsigned char *b;
    size_t size;
    lt_st *st;
    int i;
    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        if (!t_want(bad[i].name)) continue;
        b = td_st(bad[i].header, bad[i].data, &size);
        st = lt_st_parse(ctx, b, size, "model.safetensors");
        if (st == NULL && strstr(lt_error(ctx), "model.safetensors: ") != lt_error(ctx))
            t_check(0, bad[i].name, "the message must start with the file's label: \"%s\"", lt_error(ctx));
        td_refused(bad[i].name, ctx, st == NULL && lt_status_of(ctx) == LT_ERR_FORMAT, bad[i].kw);
        lt_st_close(st);
        free(b);
    }
    /* sanity: the cases above fail for their reason, not because the builder is wrong */
    if (t_want("st_good_minimal")) {
        b = td_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"z\":{\"dtype\":\"U8\",\"shape\":[0],"
                  "\"data_offsets\":[4,4]},\"__metadata__\":{\"k\":\"\\u00e9\\ud83d\\ude00\\/\"}}  \n ", 4, &size);
        st = lt_st_parse(ctx, b, size, "m");
        t_check(st && lt_st_count(st) == 2 && strcmp(lt_st_meta(st, "k"), "\xc3\xa9\xf0\x9f\x98\x80/") == 0,
                "st_good_minimal", "%s", lt_error(ctx));
        lt_clear_error(ctx);
        lt_st_close(st);
        free(b);
        b = td_st("{}", 0, &size);
        st = lt_st_parse(ctx, b, size, "m");
        t_check(st && lt_st_count(st) == 0, "st_good_empty", "%s", lt_error(ctx));
        lt_clear_error(ctx);
        lt_st_close(st);
        free(b);
    }
    if (t_want("st_bad_short")) {
        unsigned char z[7] = {0};
        td_refused("st_bad_short", ctx, lt_st_parse(ctx, z, 7, "m") == NULL, "too short");
    }
    if (t_want("st_bad_header_past_end")) {
        b = td_st("{}", 0, &size);
        td_put64(b, 1000);
        td_refused("st_bad_header_past_end", ctx, lt_st_parse(ctx, b, size, "m") == NULL, "header length 1000 runs past the end");
        td_put64(b, 100000001);
        td_refused("st_bad_header_over_100MB", ctx, lt_st_parse(ctx, b, size, "m") == NULL, "over the limit");
        td_put64(b, ~(uint64_t)0);
        td_refused("st_bad_header_huge", ctx, lt_st_parse(ctx, b, size, "m") == NULL, "over the limit");
        free(b);
    }
    if (t_want("st_bad_truncated")) {
        /* every proper prefix of a valid file must be refused */
        static const float v[3] = {1, 2, 3};
        static const int64_t ids[2] = {5, -6};
        int64_t s3[1] = {3}, s2[1] = {2};
        void *buf;
        size_t full, k, refused = 0;
        char path[512];
        lt_st_writer *w = lt_st_writer_create(ctx);
        td_path(path, sizeof path, "st_trunc.safetensors");
        lt_st_add(w, "v", "F32", 1, s3, v);
        lt_st_add(w, "ids", "I64", 1, s2, ids);
        lt_st_add_meta(w, "format", "pt");
        lt_st_save(w, path);
        lt_st_writer_destroy(w);
        if (lt_read_file(ctx, path, &buf, &full) == LT_OK) {
            for (k = 0; k < full; k++) {
                st = lt_st_parse(ctx, buf, k, "t");
                if (!st && lt_status_of(ctx) == LT_ERR_FORMAT) refused++;
                lt_st_close(st);
                lt_clear_error(ctx);
            }
            st = lt_st_parse(ctx, buf, full, "t");
            t_check(refused == full && st != NULL, "st_bad_truncated", "%zu of %zu truncations refused; full file %s",
                    refused, full, st ? "parsed" : "refused");
            printf("     (%zu truncations of %s refused)\n", refused, path);
            lt_st_close(st);
            lt_free(buf);
        } else {
            t_check(0, "st_bad_truncated", "could not write a file to truncate: %s", lt_error(ctx));
        }
        lt_clear_error(ctx);
    }
    if (t_want("st_bad_on_disk")) {
        char path[512];
        td_path(path, sizeof path, "bad_offsets.safetensors");
        b = td_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, &size);
        td_write(path, b, size);
        st = lt_st_open(ctx, path);
        td_refused("st_bad_on_disk", ctx, st == NULL, "bad_offsets.safetensors: tensors \"a\" [0,4] and \"b\" [0,4] overlap");
        free(b);
        td_path(path, sizeof path, "no_such.safetensors");
        st = lt_st_open(ctx, path);
        td_refused("st_open_missing_file", ctx, st == NULL && lt_status_of(ctx) == LT_ERR_IO, "no_such.safetensors: cannot open");
    }
}

static void test_data_all(void) {
    lt_ctx *ctx = lt_ctx_create(1);
    test_data_loader(ctx);
    test_data_shard(ctx);
    test_data_store(ctx);
    test_data_st_roundtrip(ctx);
    test_data_st_file(ctx);
    test_data_st_python(ctx);
    test_data_st_convert(ctx);
    test_data_st_malformed(ctx);
    lt_ctx_destroy(ctx);
}

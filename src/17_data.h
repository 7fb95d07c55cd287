/* ==== @@DATA  text files, llm.c token shards, batches ======================================== */
/* Holds: little-endian reads, whole-file reads bounded by the data limit, llm.c token shards,
   token storage (bytes, uint16 or int32; a mapped file or one read), the batch loader.
   Calls: @@CORE. */

#if !defined(_WIN32) && (defined(__unix__) || defined(__APPLE__))
#define LT__POSIX_IO 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#else
#define LT__POSIX_IO 0
#endif

/* Little-endian reads that work on any host and at any alignment (file bytes are LE). */
static uint16_t lt__rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t lt__rd32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t lt__rd64(const unsigned char *p) { return (uint64_t)lt__rd32(p) | ((uint64_t)lt__rd32(p + 4) << 32); }

LTRAIN_DEF void lt_free(void *p) { LT__FREE(p); }

/* ---- @@DATA.files  files, the data limit, token shards, token storage ----------------------- */
/* Reads into memory stop at the data limit, so a source that never ends (/dev/zero, an endless
   pipe) is refused with a clear error before memory runs out: LTRAIN_DATA_LIMIT=N (bytes, or with
   a k, m or g suffix: binary units) sets it; the default is half the physical memory where the
   system reports it, else 4 GiB.  Regular files the loaders map are not read, so no limit applies. */
static lt_status lt__data_limit(lt_ctx *ctx, uint64_t *limit) {
    const char *e = getenv("LTRAIN_DATA_LIMIT");
    *limit = (uint64_t)4 << 30;
#if LT__POSIX_IO
    {
        long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
        if (pages > 0 && psize > 0) *limit = (uint64_t)pages * (uint64_t)psize / 2;
    }
#endif
    if (e && *e) {
        char *end;
        unsigned long long v;
        int shift = 0;
        errno = 0;
        v = strtoull(e, &end, 10);
        if (*end == 'k' || *end == 'K') shift = 10;
        else if (*end == 'm' || *end == 'M') shift = 20;
        else if (*end == 'g' || *end == 'G') shift = 30;
        if (shift) end++;
        if (errno || end == e || *end || e[0] == '-' || v == 0 || v > (UINT64_MAX >> shift))
            return lt_set_error(ctx, LT_ERR_ARG, "LTRAIN_DATA_LIMIT=\"%s\" is not a positive size (bytes, or a number "
                                "with k, m or g)", e);
        *limit = (uint64_t)v << shift;
    }
    return LT_OK;
}

/* An open input: a file descriptor where POSIX I/O is available (so a FIFO is opened once, and
   a regular file can be mapped), a FILE elsewhere. */
typedef struct {
#if LT__POSIX_IO
    int fd;
#else
    FILE *f;
#endif
    const char *path;
    int regular;      /* a regular file whose size is known */
    uint64_t size;    /* its size (regular only) */
} lt__src;

static lt_status lt__src_open(lt_ctx *ctx, lt__src *s, const char *path) {
    s->path = path;
    s->regular = 0;
    s->size = 0;
#if LT__POSIX_IO
    {
        struct stat st;
        int e;
        do s->fd = open(path, O_RDONLY); while (s->fd < 0 && errno == EINTR);
        if (s->fd < 0) return lt_set_error(ctx, LT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        if (fstat(s->fd, &st) != 0) {
            e = errno;
            close(s->fd);
            return lt_set_error(ctx, LT_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
        }
        if (S_ISDIR(st.st_mode)) {
            close(s->fd);
            return lt_set_error(ctx, LT_ERR_IO, "%s: is a directory, not a file", path);
        }
        if (S_ISREG(st.st_mode) && st.st_size > 0) { s->regular = 1; s->size = (uint64_t)st.st_size; }
    }
#else
    s->f = fopen(path, "rb");
    if (!s->f) return lt_set_error(ctx, LT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
#endif
    return LT_OK;
}

static void lt__src_close(lt__src *s) {
#if LT__POSIX_IO
    close(s->fd);
#else
    fclose(s->f);
#endif
}

/* Up to n bytes into dst: the count read (0 at the end), or -1 with errno set. */
static long long lt__src_read(lt__src *s, void *dst, size_t n) {
#if LT__POSIX_IO
    ssize_t got;
    if (n > ((size_t)1 << 30)) n = (size_t)1 << 30;
    do got = read(s->fd, dst, n); while (got < 0 && errno == EINTR);
    return (long long)got;
#else
    size_t got = fread(dst, 1, n, s->f);
    if (got == 0 && ferror(s->f)) return -1;
    return (long long)got;
#endif
}

/* The rest of the input, in one pass, into a malloc'd buffer that grows with the bytes actually
   read (a size the system reports is only a hint): at most limit bytes. */
static lt_status lt__src_slurp(lt_ctx *ctx, lt__src *s, uint64_t limit, void **buf, size_t *size) {
    unsigned char *p, *q;
    size_t cap = (size_t)1 << 12, len = 0;   /* unknown size: 4 KiB, doubled as bytes arrive */
    *buf = NULL;
    *size = 0;
    if (s->regular && s->size > limit)
        return lt_set_error(ctx, LT_ERR_NOMEM, "%s: %llu bytes is over the data limit of %llu bytes for a read into "
                            "memory (LTRAIN_DATA_LIMIT=N[k|m|g] raises it)", s->path, (unsigned long long)s->size,
                            (unsigned long long)limit);
    if (s->regular && s->size < limit && s->size < ((uint64_t)SIZE_MAX >> 1)) cap = (size_t)s->size + 1;
    else if ((uint64_t)cap > limit) cap = (size_t)limit + 1;   /* a read past the limit fills the buffer */
    p = (unsigned char *)LT__MALLOC(cap);
    if (!p) return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory reading the file", s->path);
    for (;;) {
        long long got;
        if (len == cap) {
            size_t ncap;
            if ((uint64_t)len > limit) {
                LT__FREE(p);
                return lt_set_error(ctx, LT_ERR_NOMEM, "%s: more than %llu bytes read without reaching the end: over "
                                    "the data limit (an input that does not end, such as /dev/zero or an endless "
                                    "pipe? LTRAIN_DATA_LIMIT=N[k|m|g] raises the limit)", s->path,
                                    (unsigned long long)limit);
            }
            if (!lt_mul_size(cap, 2, &ncap)) ncap = SIZE_MAX;
            if ((uint64_t)ncap > limit + 1 && limit < (uint64_t)SIZE_MAX) ncap = (size_t)limit + 1;
            if (ncap <= cap || !(q = (unsigned char *)LT__REALLOC(p, ncap))) {
                LT__FREE(p);
                return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory reading the file (%zu bytes so far)",
                                    s->path, len);
            }
            p = q; cap = ncap;
        }
        got = lt__src_read(s, p + len, cap - len);
        if (got < 0) {
            int e = errno;
            LT__FREE(p);
            return lt_set_error(ctx, LT_ERR_IO, "%s: read failed: %s", s->path, strerror(e));
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    if (cap - len > 4096 && (q = (unsigned char *)LT__REALLOC(p, len ? len : 1)) != NULL) p = q;
    *buf = p;
    *size = len;
    return LT_OK;
}

/* The whole file, whatever its length, read once (a pipe too), at most the data limit. */
LTRAIN_DEF lt_status lt_read_file(lt_ctx *ctx, const char *path, void **buf, size_t *size) {
    lt__src s;
    lt_status st;
    uint64_t limit;
    if (buf) *buf = NULL;
    if (size) *size = 0;
    if (!path || !buf || !size)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_read_file: path, buf and size must not be NULL");
    if (lt__data_limit(ctx, &limit) != LT_OK) return lt_status_of(ctx);
    if (lt__src_open(ctx, &s, path) != LT_OK) return lt_status_of(ctx);
    st = lt__src_slurp(ctx, &s, limit, buf, size);
    lt__src_close(&s);
    return st;
}

/* llm.c token shard: 256 int32 header [20240520, 1, count, 0...] then count uint16 tokens. */
#define LT__SHARD_MAGIC 20240520
#define LT__SHARD_HEADER 1024

/* Checks a shard's header against its size: the token count, or -1 with the field and value. */
static int64_t lt__shard_check(lt_ctx *ctx, const unsigned char *b, size_t size, const char *label) {
    int32_t magic, version, count;
    uint64_t want;
    if (size < LT__SHARD_HEADER)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: %zu bytes is too short for an llm.c token shard "
                            "(its header alone is %d bytes)", label, size, LT__SHARD_HEADER), -1;
    magic = (int32_t)lt__rd32(b);
    version = (int32_t)lt__rd32(b + 4);
    count = (int32_t)lt__rd32(b + 8);
    if (magic != LT__SHARD_MAGIC)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: magic number is %ld, expected %d "
                            "(not an llm.c token shard)", label, (long)magic, LT__SHARD_MAGIC), -1;
    if (version != 1)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: version is %ld, expected 1 "
                            "(uint16 tokens; other versions are not supported)", label, (long)version), -1;
    if (count < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: shard header: token count is %ld (negative)", label,
                            (long)count), -1;
    want = (uint64_t)LT__SHARD_HEADER + 2u * (uint64_t)count;
    if ((uint64_t)size != want)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: file is %zu bytes but the header's token count %ld "
                            "needs %llu (%d-byte header + 2 bytes per token)", label, size, (long)count,
                            (unsigned long long)want, LT__SHARD_HEADER), -1;
    return count;
}

LTRAIN_DEF lt_status lt_shard_parse(lt_ctx *ctx, const void *buf, size_t size, const char *label, int vocab,
                                    int32_t **tokens, int64_t *n) {
    const unsigned char *b = (const unsigned char *)buf;
    int32_t *tok;
    int64_t count, i;
    size_t bytes;
    if (tokens) *tokens = NULL;
    if (n) *n = 0;
    if (!label) label = "token shard";
    if (!tokens || !n || (!buf && size))
        return lt_set_error(ctx, LT_ERR_ARG, "lt_shard_parse: %s: buf, tokens and n must not be NULL", label);
    if ((count = lt__shard_check(ctx, b, size, label)) < 0) return lt_status_of(ctx);
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

/* A token store, shared by the loaders that read it (refs): token i at p + i*esz, as uint8
   (text bytes), uint16 in host order (shard tokens) or int32 (tokens given in memory).  p points
   into a mapped file (map) or a malloc'd block (heap); batches widen tokens to int32 as they are
   copied out, so no wider copy of the data exists unless lt_loader_tokens / lt_seq_tokens ask for
   one (wide, made on first use). */
typedef struct {
    int refs, esz, is_shard;
    const unsigned char *p;
    int64_t n;
    void *heap;
    void *map;
    size_t map_len;
    int32_t *wide;
    char label[260];     /* the file (or the function) the tokens came from, for messages */
} lt__store;

static int32_t lt__tk(const unsigned char *p, int esz, int64_t i) {
    uint16_t h;
    int32_t w;
    if (esz == 1) return p[i];
    if (esz == 2) { memcpy(&h, p + 2 * i, 2); return h; }
    memcpy(&w, p + 4 * i, 4);
    return w;
}

/* Tokens [start, start+n) as int32 into out. */
static void lt__store_copy(const lt__store *s, int64_t start, int64_t n, int32_t *out) {
    const unsigned char *p = s->p;
    int64_t i;
    if (s->esz == 4) memcpy(out, p + 4 * start, (size_t)n * 4);
    else if (s->esz == 1) for (i = 0; i < n; i++) out[i] = p[start + i];
    else for (i = 0; i < n; i++) out[i] = lt__tk(p, 2, start + i);
}

static void lt__store_release(lt__store *s) {
    if (!s || --s->refs > 0) return;
    LT__FREE(s->heap);
#if LT__POSIX_IO
    if (s->map) munmap(s->map, s->map_len);
#endif
    LT__FREE(s->wide);
    LT__FREE(s);
}

static lt__store *lt__store_new(lt_ctx *ctx, const char *what) {
    lt__store *s = (lt__store *)LT__MALLOC(sizeof(lt__store));
    if (!s) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what); return NULL; }
    memset(s, 0, sizeof *s);
    s->refs = 1;
    return s;
}

/* A store holding a copy of n elements of esz bytes. */
static lt__store *lt__store_copy_of(lt_ctx *ctx, const void *src, int64_t n, int esz, const char *what) {
    lt__store *s;
    size_t bytes;
    if ((uint64_t)n > (uint64_t)SIZE_MAX || !lt_mul_size(n ? (size_t)n : 1, (size_t)esz, &bytes)) {
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %lld tokens", what, (long long)n);
        return NULL;
    }
    if (!(s = lt__store_new(ctx, what))) return NULL;
    if (!(s->heap = LT__MALLOC(bytes))) {
        LT__FREE(s);
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %lld tokens", what, (long long)n);
        return NULL;
    }
    if (n) memcpy(s->heap, src, (size_t)n * (size_t)esz);
    s->p = (const unsigned char *)s->heap;
    s->n = n;
    s->esz = esz;
    snprintf(s->label, sizeof s->label, "%.250s", what);
    return s;
}

/* The tokens as int32 (for the accessors that return a pointer): the store itself when it holds
   int32, else a copy made once. */
static const int32_t *lt__store_wide(lt_ctx *ctx, lt__store *s) {
    size_t bytes;
    if (s->esz == 4) return (const int32_t *)(const void *)s->p;
    if (!s->wide) {
        if (!lt_mul_size(s->n ? (size_t)s->n : 1, sizeof(int32_t), &bytes) ||
            !(s->wide = (int32_t *)LT__MALLOC(bytes))) {
            lt_set_error(ctx, LT_ERR_NOMEM, "out of memory for an int32 copy of %lld tokens", (long long)s->n);
            return NULL;
        }
        lt__store_copy(s, 0, s->n, s->wide);
    }
    return s->wide;
}

/* vocab > 0 rejects tokens >= vocab (only a vocab below the storage's range can be exceeded). */
static lt_status lt__store_check_vocab(lt_ctx *ctx, const lt__store *s, int vocab, const char *label) {
    int64_t i;
    if (vocab <= 0 || (s->esz == 1 && vocab >= 256) || (s->esz == 2 && vocab >= 65536)) return LT_OK;
    for (i = 0; i < s->n; i++) {
        int32_t t = lt__tk(s->p, s->esz, i);
        if (t >= vocab || t < 0) {
            if (s->esz == 1)
                return lt_set_error(ctx, LT_ERR_FORMAT, "%s: text byte %u at position %lld is >= the vocab size %d "
                                    "(hint: a text file needs vocab >= 256, or 0)", label, (unsigned)t, (long long)i,
                                    vocab);
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: token %ld at position %lld is %s the vocab size %d", label,
                                (long)t, (long long)i, t < 0 ? "negative, outside" : ">=", vocab);
        }
    }
    return LT_OK;
}

static int lt__host_le(void) {
    uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* Does the name end in ".bin" (any case)? */
static int lt__ends_bin(const char *path) {
    size_t n = strlen(path);
    const char *e = path + n - 4;
    return n >= 4 && e[0] == '.' && (e[1] | 32) == 'b' && (e[2] | 32) == 'i' && (e[3] | 32) == 'n';
}

/* Opens a data file into a new store, reading it once: a regular file is mapped where the
   system allows (else read), anything else (a pipe, a device) read up to the data limit.  Then
   the format: format's, or with LT_DATA_AUTO a shard when the name ends in .bin or the file starts
   with the shard magic, text otherwise.  A shard is checked (header, size, vocab) and its tokens
   used in place; text bytes are used as they are. */
static lt__store *lt__store_open(lt_ctx *ctx, const char *path, lt_data_format format, int vocab) {
    lt__src src;
    lt__store *s;
    unsigned char *base = NULL;
    size_t size = 0;
    uint64_t limit;
    int shard;
    if (format != LT_DATA_AUTO && format != LT_DATA_TEXT && format != LT_DATA_SHARD) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: format %d is not LT_DATA_AUTO, LT_DATA_TEXT or LT_DATA_SHARD", path,
                     (int)format);
        return NULL;
    }
    if (lt__data_limit(ctx, &limit) != LT_OK || !(s = lt__store_new(ctx, path))) return NULL;
    snprintf(s->label, sizeof s->label, "%.250s", path);
    if (lt__src_open(ctx, &src, path) != LT_OK) { LT__FREE(s); return NULL; }
#if LT__POSIX_IO
    if (src.regular && src.size <= (uint64_t)SIZE_MAX) {
        void *m = mmap(NULL, (size_t)src.size, PROT_READ, MAP_PRIVATE, src.fd, 0);
        if (m != MAP_FAILED) { s->map = m; s->map_len = (size_t)src.size; base = (unsigned char *)m; size = s->map_len; }
    }
#endif
    if (!base) {
        void *buf;
        if (lt__src_slurp(ctx, &src, limit, &buf, &size) != LT_OK) { lt__src_close(&src); LT__FREE(s); return NULL; }
        s->heap = buf;
        base = (unsigned char *)buf;
    }
    lt__src_close(&src);
    shard = format == LT_DATA_SHARD ||
            (format == LT_DATA_AUTO && (lt__ends_bin(path) || (size >= 4 && lt__rd32(base) == LT__SHARD_MAGIC)));
    if (shard) {
        int64_t count = lt__shard_check(ctx, base, size, path), i;
        if (count < 0) { lt__store_release(s); return NULL; }
        s->p = base + LT__SHARD_HEADER;
        if (!lt__host_le()) {   /* the file's tokens are little-endian: to host order */
            unsigned char *to = s->heap ? base + LT__SHARD_HEADER : (unsigned char *)LT__MALLOC((size_t)count * 2 + 1);
            if (!to) {
                lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %lld tokens", path, (long long)count);
                lt__store_release(s);
                return NULL;
            }
            for (i = 0; i < count; i++) {
                uint16_t t = lt__rd16(base + LT__SHARD_HEADER + 2 * i);
                memcpy(to + 2 * i, &t, 2);
            }
            if (!s->heap) {
#if LT__POSIX_IO
                munmap(s->map, s->map_len);
#endif
                s->map = NULL;
                s->heap = to;
            }
            s->p = to;
        }
        s->n = count;
        s->esz = 2;
        s->is_shard = 1;
    } else {
        s->p = base;
        s->n = (int64_t)size;
        s->esz = 1;
    }
    if (lt__store_check_vocab(ctx, s, vocab, path) != LT_OK) { lt__store_release(s); return NULL; }
    return s;
}

struct lt_loader {
    lt_ctx *ctx;
    lt__store *st;       /* the tokens (shared with a sequence loader made from this one) */
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
/* Takes over the store's reference (releases it on failure).  what: "lt_loader_open: \"path\"". */
static lt_loader *lt__loader_make(lt_ctx *ctx, lt__store *st, int B, int T, const char *what) {
    lt_loader *ld;
    int64_t bt = (int64_t)B * (int64_t)T, n = st->n;
    if (n < bt + 1) {
        lt__store_release(st);
        lt_set_error(ctx, LT_ERR_ARG, "%s: %lld tokens, but a batch of B=%d x T=%d needs at least B*T+1 = %lld "
                     "(hint: use a smaller B or T, or more data)", what, (long long)n, B, T, (long long)(bt + 1));
        return NULL;
    }
    ld = (lt_loader *)LT__MALLOC(sizeof(lt_loader));
    if (!ld) {
        lt__store_release(st);
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what);
        return NULL;
    }
    memset(ld, 0, sizeof *ld);
    ld->ctx = ctx; ld->st = st; ld->n = n; ld->B = B; ld->T = T; ld->bt = bt;
    ld->nwin = (n - 1) / bt;
    ld->is_shard = st->is_shard;
    ld->perm_epoch = -1;
    return ld;
}

static int lt__loader_check_bt(lt_ctx *ctx, const char *fn, int B, int T) {
    if (B >= 1 && T >= 1) return 1;
    lt_set_error(ctx, LT_ERR_ARG, "%s: B=%d and T=%d must both be >= 1", fn, B, T);
    return 0;
}

LTRAIN_DEF lt_loader *lt_loader_open_as(lt_ctx *ctx, const char *path, lt_data_format format, int B, int T,
                                        int vocab) {
    lt__store *st;
    char what[300];
    if (!path) { lt_set_error(ctx, LT_ERR_ARG, "lt_loader_open: path is NULL"); return NULL; }
    if (!lt__loader_check_bt(ctx, "lt_loader_open", B, T)) return NULL;
    if (vocab < 0) { lt_set_error(ctx, LT_ERR_ARG, "lt_loader_open: vocab %d must be >= 0 (0: no check)", vocab); return NULL; }
    if (!(st = lt__store_open(ctx, path, format, vocab))) return NULL;
    snprintf(what, sizeof what, "lt_loader_open: %.250s (%s)", path, st->is_shard ? "token shard" : "text file");
    return lt__loader_make(ctx, st, B, T, what);
}

LTRAIN_DEF lt_loader *lt_loader_open(lt_ctx *ctx, const char *path, int B, int T, int vocab) {
    return lt_loader_open_as(ctx, path, LT_DATA_AUTO, B, T, vocab);
}

LTRAIN_DEF lt_loader *lt_loader_from_tokens(lt_ctx *ctx, const int32_t *tokens, int64_t n, int B, int T) {
    lt__store *st;
    if (!lt__loader_check_bt(ctx, "lt_loader_from_tokens", B, T)) return NULL;
    if (n < 0 || (!tokens && n > 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_loader_from_tokens: n = %lld with tokens %s", (long long)n, tokens ? "given" : "NULL");
        return NULL;
    }
    if (!(st = lt__store_copy_of(ctx, tokens, n, 4, "lt_loader_from_tokens"))) return NULL;
    return lt__loader_make(ctx, st, B, T, "lt_loader_from_tokens");
}

LTRAIN_DEF void lt_loader_destroy(lt_loader *ld) {
    if (!ld) return;
    lt__store_release(ld->st);
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
    if (!ld) return LT_ERR_ARG;
    if (ld->shuffled && ld->perm_epoch != ld->epoch) lt__loader_permute(ld);
    w = ld->shuffled ? ld->perm[ld->index] : ld->index;
    if (inputs) lt__store_copy(ld->st, w * ld->bt, ld->bt, inputs);
    if (targets) lt__store_copy(ld->st, w * ld->bt + 1, ld->bt, targets);
    if (++ld->index == ld->nwin) { ld->index = 0; ld->epoch++; }
    return LT_OK;
}

LTRAIN_DEF int64_t lt_loader_num_tokens(const lt_loader *ld) { return ld ? ld->n : 0; }
LTRAIN_DEF const int32_t *lt_loader_tokens(const lt_loader *ld) { return ld ? lt__store_wide(ld->ctx, ld->st) : NULL; }
LTRAIN_DEF int lt_loader_is_shard(const lt_loader *ld) { return ld ? ld->is_shard : 0; }
LTRAIN_DEF int lt_loader_token_bytes(const lt_loader *ld) { return ld ? ld->st->esz : 0; }

LTRAIN_DEF lt_status lt_loader_read(const lt_loader *ld, int64_t start, int64_t n, int32_t *out) {
    if (!ld) return LT_ERR_ARG;
    if (start < 0 || n < 0 || start > ld->n - n || (!out && n > 0))
        return lt_set_error(ld->ctx, LT_ERR_ARG, "lt_loader_read: tokens [%lld, %lld + %lld) are outside [0, %lld)%s",
                            (long long)start, (long long)start, (long long)n, (long long)ld->n, out ? "" : " or out is NULL");
    if (n) lt__store_copy(ld->st, start, n, out);
    return LT_OK;
}

LTRAIN_DEF lt_status lt_loader_check_vocab(lt_loader *ld, int vocab) {
    if (!ld) return LT_ERR_ARG;
    return lt__store_check_vocab(ld->ctx, ld->st, vocab, ld->st->label);
}

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


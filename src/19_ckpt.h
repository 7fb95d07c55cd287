/* ==== @@CKPT  safetensors read/write =========================================================== */
/* Holds: safetensors: parsing and validating a file (lt_st_open), reading tensors, the writer
   (atomic save: temporary file, fsync, rename).
   Calls: @@CORE, @@DATA (file and little-endian reads). */

#include <time.h>
#if defined(_WIN32)
#include <io.h>
#define LT__FSYNC(f) _commit(_fileno(f))
#else
#include <unistd.h>
#ifndef __cplusplus
/* Strict -std=c99 hides these POSIX functions from <stdio.h>/<unistd.h>; declaring them again is
   harmless where they are visible.  (fileno) in parentheses survives a fileno macro. */
extern int fsync(int);
extern int(fileno)(FILE *);
#endif
#define LT__FSYNC(f) fsync(fileno(f))
#include <fcntl.h>
/* After the rename the new directory entry must reach the disk too, or a power cut can bring the
   old file back (or none): fsync the directory that holds path.  buf has room for path.  Best
   effort where the directory cannot be opened (no read permission); an I/O error is reported. */
static int lt__fsync_dir(char *buf, const char *path) {
    const char *slash = strrchr(path, '/');
    int fd, rc, e;
    if (!slash) { buf[0] = '.'; buf[1] = 0; }
    else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        memcpy(buf, path, n);
        buf[n] = 0;
    }
    fd = open(buf, O_RDONLY);
    if (fd < 0) return 0;
    rc = fsync(fd);
    e = errno;
    close(fd);
    errno = e;
    return rc != 0 && e == EIO ? -1 : 0;
}
#endif

#define LT__ST_MAX_HEADER 100000000u /* as the reference implementation: a header over 100 MB is refused */
#define LT__ST_MAX_DIMS 8
#define LT__JSON_MAX_DEPTH 16        /* a safetensors header needs 3 levels */

enum { LT__ST_F64, LT__ST_F32, LT__ST_F16, LT__ST_BF16 }; /* the first rows below: the float types */
static const struct { const char *name; size_t size; } lt__st_dtypes[] = {
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2},
    {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"U16", 2}, {"U32", 4}, {"U64", 8},
};
#define LT__ST_NDTYPES ((int)(sizeof lt__st_dtypes / sizeof lt__st_dtypes[0]))

static int lt__st_dtype_index(const char *s) {
    int i;
    for (i = 0; i < LT__ST_NDTYPES; i++) if (strcmp(s, lt__st_dtypes[i].name) == 0) return i;
    return -1;
}

/* -- @@CKPT.json  a strict JSON parser: objects, arrays, strings, integers; nothing else ------- */
enum { LT__J_OBJ, LT__J_ARR, LT__J_STR, LT__J_INT };

typedef struct {
    int type;
    int child, next;   /* first child / next sibling (node indices, -1 for none) */
    size_t key;        /* members of an object: the key's offset in the string pool */
    size_t str;        /* strings: offset in the pool (NUL-terminated) */
    int64_t num;       /* integers */
} lt__jnode;

typedef struct {
    const unsigned char *s;
    size_t len, pos;
    lt__jnode *nodes;
    int n, cap;
    char *pool;        /* decoded strings; never longer than the text they came from */
    size_t pool_len;
    int oom;
    char err[128];     /* what went wrong at pos (empty: nothing) */
} lt__json;

static void lt__j_fail(lt__json *j, const char *what) {
    if (!j->err[0]) snprintf(j->err, sizeof j->err, "%s", what);
}

static void lt__j_ws(lt__json *j) {
    while (j->pos < j->len && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' || j->s[j->pos] == '\n' || j->s[j->pos] == '\r'))
        j->pos++;
}

static int lt__j_node(lt__json *j, int type) {
    lt__jnode *x;
    if (j->n == j->cap) {
        int ncap = j->cap ? j->cap * 2 : 64;
        lt__jnode *p;
        if (j->cap > INT_MAX / 2 || (size_t)ncap > SIZE_MAX / sizeof(lt__jnode) ||
            !(p = (lt__jnode *)LT__REALLOC(j->nodes, (size_t)ncap * sizeof(lt__jnode)))) {
            j->oom = 1;
            lt__j_fail(j, "out of memory");
            return -1;
        }
        j->nodes = p; j->cap = ncap;
    }
    x = &j->nodes[j->n];
    x->type = type; x->child = x->next = -1; x->key = x->str = 0; x->num = 0;
    return j->n++;
}

static int lt__j_hex4(const unsigned char *p, unsigned *out) {
    int i;
    unsigned v = 0;
    for (i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

/* A string at pos (the opening quote) decoded into the pool; *off receives its offset. */
static int lt__j_string(lt__json *j, size_t *off) {
    char *o = j->pool + j->pool_len;
    *off = j->pool_len;
    j->pos++; /* the quote */
    for (;;) {
        unsigned c;
        if (j->pos >= j->len) { lt__j_fail(j, "unterminated string"); return 0; }
        c = j->s[j->pos];
        if (c == '"') { j->pos++; break; }
        if (c < 0x20) { lt__j_fail(j, "control character inside a string (must be escaped)"); return 0; }
        if (c == '\\') {
            unsigned cp, lo;
            if (j->pos + 1 >= j->len) { lt__j_fail(j, "unterminated string"); return 0; }
            c = j->s[j->pos + 1];
            j->pos += 2;
            switch (c) {
            case '"': *o++ = '"'; continue;
            case '\\': *o++ = '\\'; continue;
            case '/': *o++ = '/'; continue;
            case 'b': *o++ = '\b'; continue;
            case 'f': *o++ = '\f'; continue;
            case 'n': *o++ = '\n'; continue;
            case 'r': *o++ = '\r'; continue;
            case 't': *o++ = '\t'; continue;
            case 'u': break;
            default: j->pos -= 2; lt__j_fail(j, "invalid escape in a string"); return 0;
            }
            if (j->pos + 4 > j->len || !lt__j_hex4(j->s + j->pos, &cp)) {
                j->pos -= 2; lt__j_fail(j, "\\u needs four hex digits"); return 0;
            }
            j->pos += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) { lt__j_fail(j, "lone low surrogate in a \\u escape"); return 0; }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (j->pos + 6 > j->len || j->s[j->pos] != '\\' || j->s[j->pos + 1] != 'u' ||
                    !lt__j_hex4(j->s + j->pos + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    lt__j_fail(j, "lone high surrogate in a \\u escape"); return 0;
                }
                j->pos += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            /* a NUL would cut the name short in C and could fake a duplicate or a match */
            if (cp == 0) { lt__j_fail(j, "\\u0000 is not allowed in a string"); return 0; }
            /* UTF-8 of cp: never longer than the escape (6 or 12 bytes) that encoded it */
            if (cp < 0x80) *o++ = (char)cp;
            else if (cp < 0x800) { *o++ = (char)(0xC0 | (cp >> 6)); *o++ = (char)(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) {
                *o++ = (char)(0xE0 | (cp >> 12)); *o++ = (char)(0x80 | ((cp >> 6) & 0x3F)); *o++ = (char)(0x80 | (cp & 0x3F));
            } else {
                *o++ = (char)(0xF0 | (cp >> 18)); *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
                *o++ = (char)(0x80 | ((cp >> 6) & 0x3F)); *o++ = (char)(0x80 | (cp & 0x3F));
            }
        } else {
            int k = lt__utf8_next(j->s + j->pos, j->len - j->pos, NULL);
            if (!k) { lt__j_fail(j, "invalid UTF-8 in a string"); return 0; }
            memcpy(o, j->s + j->pos, (size_t)k);
            o += k;
            j->pos += (size_t)k;
        }
    }
    *o++ = 0;
    j->pool_len = (size_t)(o - j->pool);
    return 1;
}

static int lt__j_value(lt__json *j, int depth);

/* Objects and arrays: children linked in order. */
static int lt__j_container(lt__json *j, int depth, int is_obj) {
    int self = lt__j_node(j, is_obj ? LT__J_OBJ : LT__J_ARR), last = -1;
    char close = is_obj ? '}' : ']';
    if (self < 0) return -1;
    if (depth >= LT__JSON_MAX_DEPTH) { lt__j_fail(j, "nested too deeply"); return -1; }
    j->pos++;
    lt__j_ws(j);
    if (j->pos < j->len && j->s[j->pos] == (unsigned char)close) { j->pos++; return self; }
    for (;;) {
        size_t key = 0;
        int v;
        lt__j_ws(j);
        if (is_obj) {
            if (j->pos >= j->len || j->s[j->pos] != '"') { lt__j_fail(j, "expected a string key"); return -1; }
            if (!lt__j_string(j, &key)) return -1;
            lt__j_ws(j);
            if (j->pos >= j->len || j->s[j->pos] != ':') { lt__j_fail(j, "expected ':' after an object key"); return -1; }
            j->pos++;
        }
        v = lt__j_value(j, depth + 1);
        if (v < 0) return -1;
        j->nodes[v].key = key;
        if (last < 0) j->nodes[self].child = v; else j->nodes[last].next = v;
        last = v;
        lt__j_ws(j);
        if (j->pos < j->len && j->s[j->pos] == ',') { j->pos++; continue; }
        if (j->pos < j->len && j->s[j->pos] == (unsigned char)close) { j->pos++; return self; }
        lt__j_fail(j, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        return -1;
    }
}

static int lt__j_value(lt__json *j, int depth) {
    unsigned c;
    lt__j_ws(j);
    if (j->pos >= j->len) { lt__j_fail(j, "unexpected end of the header"); return -1; }
    c = j->s[j->pos];
    if (c == '{' || c == '[') return lt__j_container(j, depth, c == '{');
    if (c == '"') {
        int v = lt__j_node(j, LT__J_STR);
        if (v < 0) return -1;
        if (!lt__j_string(j, &j->nodes[v].str)) return -1;
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        /* an integer: -?(0|[1-9][0-9]*), within int64 */
        int neg = c == '-', v;
        uint64_t u = 0, lim;
        size_t start;
        if (neg) j->pos++;
        start = j->pos;
        lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        while (j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9') {
            unsigned d = j->s[j->pos] - '0';
            if (u > (lim - d) / 10) { lt__j_fail(j, "integer out of range"); return -1; }
            u = u * 10 + d;
            j->pos++;
        }
        if (j->pos == start) { lt__j_fail(j, "'-' without digits"); return -1; }
        if (j->pos - start > 1 && j->s[start] == '0') { j->pos = start; lt__j_fail(j, "leading zero in a number"); return -1; }
        if (j->pos < j->len && (j->s[j->pos] == '.' || j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
            lt__j_fail(j, "only integers are allowed (no fractions or exponents)"); return -1;
        }
        v = lt__j_node(j, LT__J_INT);
        if (v < 0) return -1;
        j->nodes[v].num = neg ? (u ? -(int64_t)(u - 1) - 1 : 0) : (int64_t)u;
        return v;
    }
    if (c == 't' || c == 'f' || c == 'n') { lt__j_fail(j, "true, false and null are not allowed in a safetensors header"); return -1; }
    if (c >= 0x20 && c < 0x7F) snprintf(j->err, sizeof j->err, "unexpected character '%c'", (char)c);
    else snprintf(j->err, sizeof j->err, "unexpected byte 0x%02x", c);
    return -1;
}

/* -- @@CKPT.read  reading ----------------------------------------------------------------------- */
typedef struct {
    const char *name;  /* in the pool */
    int dt;            /* index into lt__st_dtypes */
    int ndim;
    int64_t shape[LT__ST_MAX_DIMS];
    size_t begin, end; /* byte range in the data section */
} lt__st_entry;

struct lt_st {
    lt_ctx *ctx;
    unsigned char *buf;        /* the whole file (lt_st_parse, a pipe), or only its header (fd >= 0) */
    size_t size;               /* the file's size */
    int fd;                    /* >= 0: a regular file, tensors read from it when asked (POSIX) */
    uint64_t data_off;         /* where the data section starts in the file: 8 + header length */
    void **copy;               /* fd >= 0: lt_st_data's copies of tensors, read at the first call */
    const unsigned char *data; /* fd < 0: the data section, in buf */
    lt__st_entry *t;
    int n;
    int *by_name;              /* entry indices sorted by name, for lt_st_find */
    const char **meta;         /* key, value pairs (in the pool) */
    int n_meta;
    char *pool;
    char label[160];           /* the file's name, for error messages (cut if longer) */
};

LTRAIN_DEF void lt_st_close(lt_st *st) {
    int i;
    if (!st) return;
#if LT__POSIX_IO
    if (st->fd >= 0) close(st->fd);
#endif
    for (i = 0; st->copy && i < st->n; i++) LT__FREE(st->copy[i]);
    LT__FREE(st->copy);
    LT__FREE(st->buf);
    LT__FREE(st->t);
    LT__FREE(st->by_name);
    LT__FREE(st->meta);
    LT__FREE(st->pool);
    LT__FREE(st);
}

typedef struct { const char *name; int idx; } lt__st_name;
static int lt__st_cmp_name(const void *a, const void *b) {
    return strcmp(((const lt__st_name *)a)->name, ((const lt__st_name *)b)->name);
}
static int lt__st_cmp_range(const void *a, const void *b) {
    const lt__st_entry *x = *(const lt__st_entry *const *)a, *y = *(const lt__st_entry *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

static void lt__st_shape_str(char *buf, size_t cap, const int64_t *shape, int ndim) {
    size_t k = 0;
    int i;
    k += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < ndim && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* An entry {"dtype": s, "shape": [ints], "data_offsets": [begin, end]}; 0 + error if not. */
static lt_status lt__st_entry_read(lt_ctx *ctx, const char *label, lt__json *j, int node, lt__st_entry *e, size_t dsize) {
    const char *name = e->name;
    int c, dtype = -1, shape = -1, offs = -1, k;
    size_t numel = 1, bytes;
    int64_t off[2] = {0, 0};
    char sh[96];
    if (j->nodes[node].type != LT__J_OBJ)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": must be an object {dtype, shape, data_offsets}", label, name);
    for (c = j->nodes[node].child; c >= 0; c = j->nodes[c].next) {
        const char *key = j->pool + j->nodes[c].key;
        int *slot = strcmp(key, "dtype") == 0 ? &dtype : strcmp(key, "shape") == 0 ? &shape
                  : strcmp(key, "data_offsets") == 0 ? &offs : NULL;
        if (!slot)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": unknown field \"%.40s\" "
                                "(expected dtype, shape, data_offsets)", label, name, key);
        if (*slot >= 0)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": field \"%s\" appears twice", label, name, key);
        *slot = c;
    }
    if (dtype < 0 || shape < 0 || offs < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": missing field \"%s\"", label, name,
                            dtype < 0 ? "dtype" : shape < 0 ? "shape" : "data_offsets");
    if (j->nodes[dtype].type != LT__J_STR)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": dtype must be a string", label, name);
    e->dt = lt__st_dtype_index(j->pool + j->nodes[dtype].str);
    if (e->dt < 0)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": unknown dtype \"%.20s\" (known: F64 F32 F16 BF16 "
                            "I64 I32 I16 I8 U8 BOOL U16 U32 U64)", label, name, j->pool + j->nodes[dtype].str);
    if (j->nodes[shape].type != LT__J_ARR)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape must be an array of integers", label, name);
    e->ndim = 0;
    for (c = j->nodes[shape].child; c >= 0; c = j->nodes[c].next) {
        if (j->nodes[c].type != LT__J_INT)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape[%d] is not an integer", label, name, e->ndim);
        if (j->nodes[c].num < 0)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape[%d] is %lld (dims must be >= 0)",
                                label, name, e->ndim, (long long)j->nodes[c].num);
        if (e->ndim == LT__ST_MAX_DIMS)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape has more than %d dims (not supported)",
                                label, name, LT__ST_MAX_DIMS);
        e->shape[e->ndim++] = j->nodes[c].num;
    }
    lt__st_shape_str(sh, sizeof sh, e->shape, e->ndim);
    for (k = 0; k < e->ndim; k++) if (e->shape[k] == 0) numel = 0;
    for (k = 0; k < e->ndim && numel; k++)
        if ((uint64_t)e->shape[k] > (uint64_t)SIZE_MAX || !lt_mul_size(numel, (size_t)e->shape[k], &numel))
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape %s has too many elements (the product overflows)",
                                label, name, sh);
    if (!lt_mul_size(numel, lt__st_dtypes[e->dt].size, &bytes))
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": shape %s of %s is too many bytes (overflows)",
                            label, name, sh, lt__st_dtypes[e->dt].name);
    k = 0;
    if (j->nodes[offs].type == LT__J_ARR)
        for (c = j->nodes[offs].child; c >= 0; c = j->nodes[c].next) {
            if (k == 2 || j->nodes[c].type != LT__J_INT || j->nodes[c].num < 0) { k = -1; break; }
            off[k++] = j->nodes[c].num;
        }
    if (k != 2)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": data_offsets must be [begin, end], two integers >= 0",
                            label, name);
    if (off[0] > off[1])
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": data_offsets [%lld,%lld] end before they begin",
                            label, name, (long long)off[0], (long long)off[1]);
    if ((uint64_t)off[1] > (uint64_t)dsize)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": data_offsets [%lld,%lld] run past the end of the "
                            "file (the data section is %zu bytes)", label, name, (long long)off[0], (long long)off[1], dsize);
    e->begin = (size_t)off[0];
    e->end = (size_t)off[1];
    if (e->end - e->begin != bytes)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensor \"%.100s\": data_offsets [%lld,%lld] but shape %s of %s needs %zu bytes",
                            label, name, (long long)off[0], (long long)off[1], sh, lt__st_dtypes[e->dt].name, bytes);
    return LT_OK;
}

/* Step 1 of parsing: the 8-byte header length, then the header as JSON into j (j->pool allocated
   here).  Returns the root node, or -1 with the error set. */
static int lt__st_parse_header(lt_ctx *ctx, const unsigned char *buf, size_t size, const char *label, lt__json *j,
                               uint64_t *hlen) {
    int root;
    if (size < 8) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: %zu bytes is too short for a safetensors file "
                     "(it starts with an 8-byte header length)", label, size);
        return -1;
    }
    *hlen = lt__rd64(buf);
    if (*hlen > LT__ST_MAX_HEADER) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: header length %llu is over the limit of %u bytes (100 MB)",
                     label, (unsigned long long)*hlen, LT__ST_MAX_HEADER);
        return -1;
    }
    if (*hlen > size - 8) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: header length %llu runs past the end of the file (%zu bytes)",
                     label, (unsigned long long)*hlen, size);
        return -1;
    }
    j->s = buf + 8;
    j->len = (size_t)*hlen;
    j->pool = (char *)LT__MALLOC(j->len + 1);
    if (!j->pool) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for the header", label); return -1; }
    root = lt__j_value(j, 0);
    if (root >= 0) {
        lt__j_ws(j);
        if (j->pos < j->len) lt__j_fail(j, "trailing characters after the JSON object");
    }
    if (j->err[0]) {
        if (j->oom) lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory parsing the header", label);
        else lt_set_error(ctx, LT_ERR_FORMAT, "%s: header is not valid JSON: %s (at byte %zu of the header)", label, j->err, j->pos);
        return -1;
    }
    if (j->nodes[root].type != LT__J_OBJ) {
        lt_set_error(ctx, LT_ERR_FORMAT, "%s: header must be a JSON object {name: {dtype, shape, data_offsets}, ...}", label);
        return -1;
    }
    return root;
}

/* Step 2: the root's members counted (tensors in *n_ent, metadata strings in *n_meta) and its
   "__metadata__" found (*meta, -1 if none) and checked to be an object of strings. */
static lt_status lt__st_count_members(lt_ctx *ctx, const char *label, const lt__json *j, int root, int *n_ent,
                                      int *n_meta, int *meta) {
    int c;
    for (c = j->nodes[root].child; c >= 0; c = j->nodes[c].next) {
        if (strcmp(j->pool + j->nodes[c].key, "__metadata__") != 0) { (*n_ent)++; continue; }
        if (*meta >= 0) return lt_set_error(ctx, LT_ERR_FORMAT, "%s: duplicate \"__metadata__\" in the header", label);
        *meta = c;
    }
    if (*meta < 0) return LT_OK;
    if (j->nodes[*meta].type != LT__J_OBJ)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: __metadata__ must be an object of strings", label);
    for (c = j->nodes[*meta].child; c >= 0; c = j->nodes[c].next, (*n_meta)++)
        if (j->nodes[c].type != LT__J_STR)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: __metadata__ value of \"%.100s\" must be a string", label,
                                j->pool + j->nodes[c].key);
    return LT_OK;
}

/* Step 3: every tensor entry read into st->t, and st->by_name filled (names must be unique).
   names and order are scratch of one slot per tensor; order receives the entries. */
static lt_status lt__st_read_entries(lt_ctx *ctx, const char *label, lt__json *j, int root, int meta, size_t dsize,
                                     lt_st *st, lt__st_name *names, lt__st_entry **order) {
    int c, i;
    for (c = j->nodes[root].child; c >= 0; c = j->nodes[c].next) {
        lt__st_entry *e = &st->t[st->n];
        lt_status s;
        if (c == meta) continue;
        e->name = j->pool + j->nodes[c].key;
        if ((s = lt__st_entry_read(ctx, label, j, c, e, dsize)) != LT_OK) return s;
        names[st->n].name = e->name;
        names[st->n].idx = st->n;
        order[st->n] = e;
        st->n++;
    }
    qsort(names, (size_t)st->n, sizeof *names, lt__st_cmp_name);
    for (i = 0; i < st->n; i++) {
        if (i && strcmp(names[i].name, names[i - 1].name) == 0)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: duplicate tensor name \"%.100s\"", label, names[i].name);
        st->by_name[i] = names[i].idx;
    }
    return LT_OK;
}

/* Step 4: the byte ranges must tile the data section: sorted, each starting where the last ended. */
static lt_status lt__st_check_tiling(lt_ctx *ctx, const char *label, lt__st_entry **order, int n, size_t dsize) {
    size_t expect = 0;
    int i;
    qsort(order, (size_t)n, sizeof *order, lt__st_cmp_range);
    for (i = 0; i < n; i++) {
        const lt__st_entry *e = order[i];
        if (e->begin < expect) {
            const lt__st_entry *p = order[i - 1];
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: tensors \"%.100s\" [%zu,%zu] and \"%.100s\" [%zu,%zu] overlap in data_offsets",
                                label, p->name, p->begin, p->end, e->name, e->begin, e->end);
        }
        if (e->begin > expect)
            return lt_set_error(ctx, LT_ERR_FORMAT, "%s: hole in the data: bytes [%zu,%zu) belong to no tensor (before tensor \"%.100s\")",
                                label, expect, e->begin, e->name);
        expect = e->end;
    }
    if (expect != dsize)
        return lt_set_error(ctx, LT_ERR_FORMAT, "%s: %zu trailing bytes after the last tensor's data (the data section is %zu bytes, "
                            "the tensors cover %zu)", label, dsize - expect, dsize, expect);
    return LT_OK;
}

/* Step 5: the metadata's key, value pairs into st->meta (keys must be unique). */
static lt_status lt__st_read_meta(lt_ctx *ctx, const char *label, const lt__json *j, int meta, lt_st *st) {
    int c, i;
    if (meta < 0) return LT_OK;
    for (c = j->nodes[meta].child; c >= 0; c = j->nodes[c].next) {
        const char *k = j->pool + j->nodes[c].key;
        for (i = 0; i < st->n_meta; i++)
            if (strcmp(st->meta[2 * i], k) == 0)
                return lt_set_error(ctx, LT_ERR_FORMAT, "%s: __metadata__ has the key \"%.100s\" twice", label, k);
        st->meta[2 * st->n_meta] = k;
        st->meta[2 * st->n_meta + 1] = j->pool + j->nodes[c].str;
        st->n_meta++;
    }
    return LT_OK;
}

/* Parses a safetensors file of size bytes: the header, its members, the tensor entries, their byte
   ranges, the metadata.  buf (malloc'd) holds the whole file when fd < 0, else its first 8 bytes
   and the header, and the tensors stay in the open file fd.  buf and fd are owned from here on
   (freed and closed on failure). */
static lt_st *lt__st_parse_owned(lt_ctx *ctx, unsigned char *buf, size_t size, int fd, const char *label) {
    lt__json j;
    lt_st *st = NULL;
    lt__st_name *names = NULL;
    lt__st_entry **order = NULL;
    uint64_t hlen = 0;
    size_t dsize;
    int root, n_ent = 0, n_meta = 0, meta = -1;
    memset(&j, 0, sizeof j);
    if (!label) label = "safetensors";
    root = lt__st_parse_header(ctx, buf, size, label, &j, &hlen);
    if (root < 0) goto fail;
    dsize = size - 8 - (size_t)hlen;
    if (lt__st_count_members(ctx, label, &j, root, &n_ent, &n_meta, &meta) != LT_OK) goto fail;
    st = (lt_st *)LT__MALLOC(sizeof(lt_st));
    if (!st) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", label); goto fail; }
    memset(st, 0, sizeof *st);
    st->fd = -1;   /* set when parsed: until then fd is closed below on failure, not by lt_st_close */
    st->t = (lt__st_entry *)LT__MALLOC((size_t)(n_ent ? n_ent : 1) * sizeof(lt__st_entry));
    st->by_name = (int *)LT__MALLOC((size_t)(n_ent ? n_ent : 1) * sizeof(int));
    st->meta = (const char **)LT__MALLOC((size_t)(n_meta ? n_meta : 1) * 2 * sizeof(char *));
    names = (lt__st_name *)LT__MALLOC((size_t)(n_ent ? n_ent : 1) * sizeof(lt__st_name));
    order = (lt__st_entry **)LT__MALLOC((size_t)(n_ent ? n_ent : 1) * sizeof(lt__st_entry *));
    if (!st->t || !st->by_name || !st->meta || !names || !order) {
        lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %d tensors", label, n_ent);
        goto fail;
    }
    if (lt__st_read_entries(ctx, label, &j, root, meta, dsize, st, names, order) != LT_OK ||
        lt__st_check_tiling(ctx, label, order, st->n, dsize) != LT_OK || lt__st_read_meta(ctx, label, &j, meta, st) != LT_OK)
        goto fail;
    st->ctx = ctx;
    snprintf(st->label, sizeof st->label, "%s", label);
    st->buf = buf;
    st->size = size;
    st->fd = fd;
    st->data_off = 8 + hlen;
    st->data = fd < 0 ? buf + 8 + hlen : NULL;
    st->pool = j.pool;
    LT__FREE(j.nodes);
    LT__FREE(names);
    LT__FREE(order);
    return st;
fail:
    LT__FREE(j.nodes);
    LT__FREE(j.pool);
    LT__FREE(names);
    LT__FREE(order);
    lt_st_close(st);
    LT__FREE(buf);
#if LT__POSIX_IO
    if (fd >= 0) close(fd);
#endif
    return NULL;
}

LTRAIN_DEF lt_st *lt_st_parse(lt_ctx *ctx, const void *buf, size_t size, const char *label) {
    unsigned char *copy;
    if (!buf && size) { lt_set_error(ctx, LT_ERR_ARG, "lt_st_parse: buf is NULL"); return NULL; }
    copy = (unsigned char *)LT__MALLOC(size ? size : 1);
    if (!copy) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory copying %zu bytes", label ? label : "safetensors", size); return NULL; }
    if (size) memcpy(copy, buf, size);
    return lt__st_parse_owned(ctx, copy, size, -1, label);
}

#if LT__POSIX_IO
/* n bytes at offset off of the open file into dst; 0, or -1 with errno set (0: the file ended).
   lseek and read rather than pread, which strict C99 builds do not declare: so one lt_st is read
   by one thread at a time. */
static int lt__read_at(int fd, void *dst, size_t n, uint64_t off) {
    unsigned char *d = (unsigned char *)dst;
    if ((uint64_t)(off_t)off != off) { errno = EOVERFLOW; return -1; }   /* past a 32-bit off_t */
    if (lseek(fd, (off_t)off, SEEK_SET) == (off_t)-1) return -1;
    while (n) {
        ssize_t got = read(fd, d, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) { if (got == 0) errno = 0; return -1; }
        d += got; n -= (size_t)got;
    }
    return 0;
}
#endif

/* A regular file: only the header is read here, and each tensor is read from the file when it is
   asked for, straight into the caller's memory (lt_st_read_f32), so loading a 1.5 GB checkpoint
   needs no second copy of it.  A pipe or device, or a system without POSIX I/O: the whole input
   is read into memory, up to the data limit (lt_read_file). */
LTRAIN_DEF lt_st *lt_st_open(lt_ctx *ctx, const char *path) {
    void *buf = NULL;
    size_t size = 0;
    lt__src src;
    uint64_t limit;
    if (!path) { lt_set_error(ctx, LT_ERR_ARG, "lt_st_open: path is NULL"); return NULL; }
    if (lt__data_limit(ctx, &limit) != LT_OK || lt__src_open(ctx, &src, path) != LT_OK) return NULL;
#if LT__POSIX_IO
    if (src.regular && src.size <= (uint64_t)SIZE_MAX / 2 && src.size >= 8) {
        unsigned char head[8];
        uint64_t hlen, n;
        if (lt__read_at(src.fd, head, 8, 0) == 0) {
            /* the header's bytes, at most as many as the file and the header limit allow: a
               length past either is refused by the parser, which reads no further than 8 bytes */
            hlen = lt__rd64(head);
            n = hlen < src.size - 8 ? hlen : src.size - 8;
            if (n > LT__ST_MAX_HEADER) n = 0;
            buf = LT__MALLOC((size_t)n + 8);
            if (!buf) { lt__src_close(&src); lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for the header", path); return NULL; }
            if (lt__read_at(src.fd, buf, (size_t)n + 8, 0) == 0)
                return lt__st_parse_owned(ctx, (unsigned char *)buf, (size_t)src.size, src.fd, path);
            LT__FREE(buf);
            buf = NULL;
        }
        lt_set_error(ctx, LT_ERR_IO, "%s: read failed: %s", path, errno ? strerror(errno) : "the file ended early");
        lt__src_close(&src);
        return NULL;
    }
#endif
    if (lt__src_slurp(ctx, &src, limit, &buf, &size) != LT_OK) { lt__src_close(&src); return NULL; }
    lt__src_close(&src);
    return lt__st_parse_owned(ctx, (unsigned char *)buf, size, -1, path);
}

LTRAIN_DEF int lt_st_count(const lt_st *st) { return st ? st->n : 0; }

LTRAIN_DEF int lt_st_find(const lt_st *st, const char *name) {
    int lo = 0, hi;
    if (!st || !name) return -1;
    hi = st->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(st->t[st->by_name[mid]].name, name);
        if (c == 0) return st->by_name[mid];
        if (c < 0) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

LTRAIN_DEF const char *lt_st_name(const lt_st *st, int i) { return st && i >= 0 && i < st->n ? st->t[i].name : NULL; }
LTRAIN_DEF const char *lt_st_dtype(const lt_st *st, int i) {
    return st && i >= 0 && i < st->n ? lt__st_dtypes[st->t[i].dt].name : NULL;
}
LTRAIN_DEF int lt_st_shape(const lt_st *st, int i, int64_t *shape) {
    int k;
    if (!st || i < 0 || i >= st->n) return -1;
    if (shape) for (k = 0; k < st->t[i].ndim; k++) shape[k] = st->t[i].shape[k];
    return st->t[i].ndim;
}
/* Tensor i's size in bytes (0 for a bad i), without reading it. */
static size_t lt__st_nbytes(const lt_st *st, int i) {
    return st && i >= 0 && i < st->n ? st->t[i].end - st->t[i].begin : 0;
}

/* Bytes [off, off + n) of tensor e's data into dst, read from the open file (fd >= 0).  lt_st_open
   checked the file's size, so a file that ends early was cut or rewritten since. */
static lt_status lt__st_read_bytes(lt_st *st, const lt__st_entry *e, size_t off, void *dst, size_t n) {
#if LT__POSIX_IO
    if (lt__read_at(st->fd, dst, n, st->data_off + e->begin + off) == 0) return LT_OK;
    if (errno == 0)
        return lt_set_error(st->ctx, LT_ERR_IO, "%s: the file ends inside tensor \"%.100s\": it is shorter than when "
                            "it was opened (rewritten meanwhile?)", st->label, e->name);
    return lt_set_error(st->ctx, LT_ERR_IO, "%s: reading tensor \"%.100s\" failed: %s", st->label, e->name, strerror(errno));
#else
    (void)off; (void)dst; (void)n;
    return lt_set_error(st->ctx, LT_ERR_STATE, "%s: tensor \"%.100s\" is not in memory", st->label, e->name);
#endif
}

/* The raw little-endian bytes, as stored (no alignment promised).  From a file that lt_st_open
   reads on demand, the tensor is read at the first call and the copy kept until lt_st_close; NULL
   (and the error in the context) if that read fails.  The copies are a cache, not a change that
   a caller could see, so st stays const to the caller. */
LTRAIN_DEF const void *lt_st_data(const lt_st *st, int i, size_t *bytes) {
    lt_st *w = (lt_st *)st;
    size_t nb = lt__st_nbytes(st, i);
    if (bytes) *bytes = nb;
    if (!st || i < 0 || i >= st->n) return NULL;
    if (st->fd < 0) return st->data + st->t[i].begin;
    if (!w->copy) {
        if (!(w->copy = (void **)LT__MALLOC((size_t)st->n * sizeof(void *)))) {
            lt_set_error(st->ctx, LT_ERR_NOMEM, "%s: out of memory", st->label);
            return NULL;
        }
        memset(w->copy, 0, (size_t)st->n * sizeof(void *));
    }
    if (!w->copy[i]) {
        void *c = LT__MALLOC(nb ? nb : 1);
        if (!c) {
            lt_set_error(st->ctx, LT_ERR_NOMEM, "%s: out of memory for tensor \"%.100s\" (%zu bytes)", st->label,
                         st->t[i].name, nb);
            return NULL;
        }
        if (lt__st_read_bytes(w, &st->t[i], 0, c, nb) != LT_OK) { LT__FREE(c); return NULL; }
        w->copy[i] = c;
    }
    return w->copy[i];
}
LTRAIN_DEF const char *lt_st_meta(const lt_st *st, const char *key) {
    int i;
    if (!st || !key) return NULL;
    for (i = 0; i < st->n_meta; i++) if (strcmp(st->meta[2 * i], key) == 0) return st->meta[2 * i + 1];
    return NULL;
}
LTRAIN_DEF const char *lt_st_meta_key(const lt_st *st, int i) {
    return st && i >= 0 && i < st->n_meta ? st->meta[2 * i] : NULL;
}

/* IEEE binary16 -> binary32, exact: sign, 5-bit exponent (bias 15), 10-bit mantissa. */
static float lt__half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu, bits;
    float f;
    if (e == 0x1F) bits = sign | 0x7F800000u | (m << 13);        /* inf, NaN (payload kept) */
    else if (e) bits = sign | ((e + 112) << 23) | (m << 13);     /* rebias 15 -> 127 */
    else {                                                       /* zero, subnormal m * 2^-24 */
        f = (float)m * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    memcpy(&f, &bits, 4);
    return f;
}
/* bfloat16 is the top half of a binary32. */
static float lt__bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
/* double -> float rounded to nearest even, as a C cast, but without the undefined behaviour of
   casting a finite value past FLT_MAX: those round to FLT_MAX or to infinity (from 2^128 - 2^103). */
static float lt__f64_to_float(double d) {
    double lim = ldexp(1.0, 128) - ldexp(1.0, 103);
    if (d >= lim) return (float)HUGE_VAL;
    if (d <= -lim) return -(float)HUGE_VAL;
    if (d > FLT_MAX) return FLT_MAX;
    if (d < -FLT_MAX) return -FLT_MAX;
    return (float)d;
}

/* count values of dtype dt, little-endian at p (any alignment), to float32 at out. */
static void lt__st_to_f32(int dt, const unsigned char *p, float *out, size_t count) {
    size_t k;
    switch (dt) {
    case LT__ST_F64: for (k = 0; k < count; k++) { uint64_t u = lt__rd64(p + 8 * k); double d; memcpy(&d, &u, 8); out[k] = lt__f64_to_float(d); } break;
    case LT__ST_F32: for (k = 0; k < count; k++) { uint32_t u = lt__rd32(p + 4 * k); memcpy(&out[k], &u, 4); } break;
    case LT__ST_F16: for (k = 0; k < count; k++) out[k] = lt__half_to_float(lt__rd16(p + 2 * k)); break;
    case LT__ST_BF16: for (k = 0; k < count; k++) out[k] = lt__bf16_to_float(lt__rd16(p + 2 * k)); break;
    default: break;
    }
}

/* From memory (lt_st_parse, a pipe): converted from the bytes held.  From a file: float32 is read
   straight into out (a checkpoint's usual case: no copy between the page cache and the tensor),
   byte-swapped on a big-endian host; the other types go through a buffer of up to 256 KiB,
   converted piece by piece. */
LTRAIN_DEF lt_status lt_st_read_f32(lt_st *st, int i, float *out, int64_t n) {
    const lt__st_entry *e;
    size_t numel, es, k;
    if (!st) return LT_ERR_ARG;
    if (i < 0 || i >= st->n) return lt_set_error(st->ctx, LT_ERR_ARG, "lt_st_read_f32: index %d out of range [0,%d)", i, st->n);
    e = &st->t[i];
    es = lt__st_dtypes[e->dt].size;
    numel = (e->end - e->begin) / es;
    if (n < 0 || (uint64_t)n != (uint64_t)numel) {
        char sh[96];
        lt__st_shape_str(sh, sizeof sh, e->shape, e->ndim);
        return lt_set_error(st->ctx, LT_ERR_SHAPE, "lt_st_read_f32: %s: tensor \"%.100s\" has shape %s (%zu values) but n is %lld",
                            st->label, e->name, sh, numel, (long long)n);
    }
    if (!out && numel) return lt_set_error(st->ctx, LT_ERR_ARG, "lt_st_read_f32: out is NULL");
    if (e->dt != LT__ST_F64 && e->dt != LT__ST_F32 && e->dt != LT__ST_F16 && e->dt != LT__ST_BF16)
        return lt_set_error(st->ctx, LT_ERR_ARG, "lt_st_read_f32: %s: tensor \"%.100s\" is %s; only F32, F16, BF16 and F64 "
                            "convert to float", st->label, e->name, lt__st_dtypes[e->dt].name);
    if (st->fd < 0) { lt__st_to_f32(e->dt, st->data + e->begin, out, numel); return LT_OK; }
    if (e->dt == LT__ST_F32) {
        lt_status r = lt__st_read_bytes(st, e, 0, out, numel * 4);
        if (r != LT_OK) return r;
        if (!lt__host_le()) lt__st_to_f32(LT__ST_F32, (const unsigned char *)out, out, numel);   /* swaps in place */
        return LT_OK;
    } else {
        size_t per = numel < ((size_t)1 << 18) / es ? numel : ((size_t)1 << 18) / es;   /* no more than the tensor */
        unsigned char *tmp = (unsigned char *)LT__MALLOC(per ? per * es : 1);
        if (!tmp) return lt_set_error(st->ctx, LT_ERR_NOMEM, "lt_st_read_f32: %s: out of memory", st->label);
        for (k = 0; k < numel; k += per) {
            size_t m = numel - k < per ? numel - k : per;
            lt_status r = lt__st_read_bytes(st, e, k * es, tmp, m * es);
            if (r != LT_OK) { LT__FREE(tmp); return r; }
            lt__st_to_f32(e->dt, tmp, out + k, m);
        }
        LT__FREE(tmp);
    }
    return LT_OK;
}

/* -- @@CKPT.write  writing ---------------------------------------------------------------------- */
typedef struct {
    char *name;
    int dt, ndim;
    int64_t shape[LT__ST_MAX_DIMS];
    const void *data;
    size_t bytes;
} lt__stw_tensor;

struct lt_st_writer {
    lt_ctx *ctx;
    lt__stw_tensor *t;
    int n, cap;
    char **meta;       /* key, value pairs (owned) */
    int n_meta, cap_meta;
    int failed;        /* an add failed: saving would silently drop a tensor */
};

LTRAIN_DEF lt_st_writer *lt_st_writer_create(lt_ctx *ctx) {
    lt_st_writer *w;
    if (!ctx) return NULL;
    w = (lt_st_writer *)LT__MALLOC(sizeof(lt_st_writer));
    if (!w) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_st_writer_create: out of memory"); return NULL; }
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    return w;
}

LTRAIN_DEF void lt_st_writer_destroy(lt_st_writer *w) {
    int i;
    if (!w) return;
    for (i = 0; i < w->n; i++) LT__FREE(w->t[i].name);
    for (i = 0; i < 2 * w->n_meta; i++) LT__FREE(w->meta[i]);
    LT__FREE(w->t);
    LT__FREE(w->meta);
    LT__FREE(w);
}

static int lt__utf8_valid(const char *s) {
    size_t n = strlen(s);
    return lt__utf8_bad_at((const unsigned char *)s, n) == n;
}

LTRAIN_DEF size_t lt_utf8_escape(char *out, size_t cap, const char *in) {
    size_t i = 0, n, o = 0;
    if (!out || cap == 0) return 0;
    n = in ? strlen(in) : 0;
    while (i < n) {
        int k = lt__utf8_next((const unsigned char *)in + i, n - i, NULL);
        if (k) {
            if (o + (size_t)k >= cap) break;
            memcpy(out + o, in + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
        } else {
            if (o + 4 >= cap) break;
            snprintf(out + o, 5, "\\x%02X", (unsigned char)in[i]);
            o += 4;
            i++;
        }
    }
    out[o] = 0;
    return o;
}

static lt_status lt__st_add(lt_st_writer *w, const char *name, const char *dtype, int ndim,
                            const int64_t *shape, const void *data) {
    lt__stw_tensor *x;
    size_t numel = 1, bytes;
    int dt, k;
    if (!name || !dtype || (ndim > 0 && !shape))
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: name, dtype and shape must not be NULL");
    if (!lt__utf8_valid(name) || strcmp(name, "__metadata__") == 0)
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: \"%.100s\" is not a valid tensor name (UTF-8, not __metadata__)", name);
    dt = lt__st_dtype_index(dtype);
    if (dt < 0)
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": unknown dtype \"%.20s\"", name, dtype);
    if (ndim < 0 || ndim > LT__ST_MAX_DIMS)
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": ndim %d must be in [0,%d]", name, ndim, LT__ST_MAX_DIMS);
    for (k = 0; k < ndim; k++) {
        if (shape[k] < 0)
            return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": shape[%d] is %lld", name, k, (long long)shape[k]);
        if (shape[k] == 0) numel = 0;
    }
    for (k = 0; k < ndim && numel; k++)
        if ((uint64_t)shape[k] > (uint64_t)SIZE_MAX || !lt_mul_size(numel, (size_t)shape[k], &numel))
            return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": the shape's product overflows", name);
    if (!lt_mul_size(numel, lt__st_dtypes[dt].size, &bytes))
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": too many bytes", name);
    if (!data && bytes) return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: tensor \"%.100s\": data is NULL", name);
    for (k = 0; k < w->n; k++)
        if (strcmp(w->t[k].name, name) == 0)
            return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add: duplicate tensor name \"%.100s\"", name);
    if (w->n == w->cap) {
        int ncap = w->cap ? 2 * w->cap : 16;
        lt__stw_tensor *p = w->cap > INT_MAX / 2 ? NULL : (lt__stw_tensor *)LT__REALLOC(w->t, (size_t)ncap * sizeof *p);
        if (!p) return lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_add: out of memory");
        w->t = p; w->cap = ncap;
    }
    x = &w->t[w->n];
    if (!(x->name = lt__strdup(name))) return lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_add: out of memory");
    x->dt = dt; x->ndim = ndim; x->data = data; x->bytes = bytes;
    for (k = 0; k < ndim; k++) x->shape[k] = shape[k];
    w->n++;
    return LT_OK;
}
LTRAIN_DEF lt_status lt_st_add(lt_st_writer *w, const char *name, const char *dtype, int ndim,
                               const int64_t *shape, const void *data) {
    lt_status s;
    if (!w) return LT_ERR_ARG;
    s = lt__st_add(w, name, dtype, ndim, shape, data);
    if (s != LT_OK) w->failed = 1;
    return s;
}

/* A key that is set again replaces its value. */
LTRAIN_DEF lt_status lt_st_add_meta(lt_st_writer *w, const char *key, const char *value) {
    char *v;
    int i;
    if (!w) return LT_ERR_ARG;
    if (!key || !value || !lt__utf8_valid(key) || !lt__utf8_valid(value)) {
        w->failed = 1;
        return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_add_meta: key and value must be UTF-8 strings (not NULL)");
    }
    if (!(v = lt__strdup(value))) goto oom;
    for (i = 0; i < w->n_meta; i++)
        if (strcmp(w->meta[2 * i], key) == 0) { LT__FREE(w->meta[2 * i + 1]); w->meta[2 * i + 1] = v; return LT_OK; }
    if (w->n_meta == w->cap_meta) {
        int ncap = w->cap_meta ? 2 * w->cap_meta : 8;
        char **p = w->cap_meta > INT_MAX / 4 ? NULL : (char **)LT__REALLOC(w->meta, (size_t)ncap * 2 * sizeof(char *));
        if (!p) { LT__FREE(v); goto oom; }
        w->meta = p; w->cap_meta = ncap;
    }
    if (!(w->meta[2 * w->n_meta] = lt__strdup(key))) { LT__FREE(v); goto oom; }
    w->meta[2 * w->n_meta + 1] = v;
    w->n_meta++;
    return LT_OK;
oom:
    w->failed = 1;
    return lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_add_meta: out of memory");
}

/* A growing string for the header. */
typedef struct { char *p; size_t len, cap; int oom; } lt__sbuf;
static void lt__sb_put(lt__sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (n > b->cap - b->len) {
        size_t ncap = b->cap ? b->cap : 256;
        char *p;
        while (ncap - b->len < n) if (!lt_mul_size(ncap, 2, &ncap)) { b->oom = 1; return; }
        if (!(p = (char *)LT__REALLOC(b->p, ncap))) { b->oom = 1; return; }
        b->p = p; b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}
static void lt__sb_str(lt__sbuf *b, const char *s) { lt__sb_put(b, s, strlen(s)); }
static void lt__sb_json(lt__sbuf *b, const char *s) { /* a JSON string literal */
    lt__sb_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = (char)c; lt__sb_put(b, esc, 2); }
        else if (c < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", c); lt__sb_put(b, esc, 6); }
        else lt__sb_put(b, s, 1);
    }
    lt__sb_put(b, "\"", 1);
}

static int lt__host_big_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* The tensor's bytes, little-endian whatever the host. */
static int lt__st_write_data(FILE *f, const lt__stw_tensor *x) {
    size_t es = lt__st_dtypes[x->dt].size, k, i;
    const unsigned char *p = (const unsigned char *)x->data;
    unsigned char tmp[4096];
    if (!x->bytes) return 1;
    if (es == 1 || !lt__host_big_endian()) return fwrite(p, 1, x->bytes, f) == x->bytes;
    for (k = 0; k < x->bytes;) {
        size_t m = x->bytes - k < sizeof tmp ? x->bytes - k : sizeof tmp;
        for (i = 0; i < m; i++) tmp[i] = p[k + (i / es) * es + (es - 1 - i % es)];
        if (fwrite(tmp, 1, m, f) != m) return 0;
        k += m;
    }
    return 1;
}

/* Where a writer may put its file (lt_dest_check).  Returns 1 with *target (LT__MALLOC'd) the path
   to write: path itself, or the regular file a symbolic link at path points to (the target is
   written, the link stays); else 0 with why (cap bytes) saying what path is (-1: out of memory).  A node is judged
   by lstat: a missing path or a regular file passes; LT_DEST_STREAM also passes character
   devices and FIFOs, which a stream writes into and never replaces. */
#if !defined(_WIN32)
#include <sys/stat.h>
#ifndef __cplusplus
extern int lstat(const char *, struct stat *);
extern char *realpath(const char *, char *);
#endif
#endif
static const char *lt__node_kind(unsigned mode) {
    return S_ISDIR(mode) ? "a directory" : S_ISCHR(mode) ? "a character device"
#if !defined(_WIN32)
         : S_ISBLK(mode) ? "a block device" : S_ISFIFO(mode) ? "a FIFO (named pipe)"
#endif
         : "a socket or other special file";
}
static int lt__dest(const char *path, lt_dest_mode mode, char **target, char *why, size_t cap) {
    struct stat s;
    const char *use = path;
    char *real = NULL;
    size_t n;
    *target = NULL;
    if (!path || !path[0]) { snprintf(why, cap, "no path given"); return 0; }
#if defined(_WIN32)
    if (stat(path, &s) == 0 && !S_ISREG(s.st_mode) && !(mode == LT_DEST_STREAM && S_ISCHR(s.st_mode))) {
        snprintf(why, cap, "\"%.300s\" is %s, not a regular file", path, lt__node_kind((unsigned)s.st_mode));
        return 0;
    }
#else
    if (lstat(path, &s) == 0) {
        if (S_ISLNK(s.st_mode)) {   /* follow it: the file it names is written, the link stays (a stream
                                       opens the link itself: /dev/stdout may name a pipe, which has no path) */
            if (stat(path, &s) != 0 || (mode == LT_DEST_REPLACE && !(real = realpath(path, NULL)))) {
                snprintf(why, cap, "\"%.300s\" is a symbolic link to a missing file (create the target, or give "
                         "the target's path)", path);
                free(real);
                return 0;
            }
            if (real) use = real;
        }
        if (!S_ISREG(s.st_mode) && !(mode == LT_DEST_STREAM && (S_ISCHR(s.st_mode) || S_ISFIFO(s.st_mode)))) {
            snprintf(why, cap, "\"%.300s\"%s%.300s%s is %s, not a regular file%s", path, real ? " (a symbolic link to \"" : "",
                     real ? real : "", real ? "\")" : "", lt__node_kind((unsigned)s.st_mode),
                     mode == LT_DEST_REPLACE && !S_ISDIR(s.st_mode) ? ": a save writes a new file and renames it over "
                                               "the path, which would replace it; give a file's path" : "");
            free(real);
            return 0;
        }
    }
#endif
    n = strlen(use);
    *target = (char *)LT__MALLOC(n + 1);
    if (*target) memcpy(*target, use, n + 1);
    else snprintf(why, cap, "\"%.300s\": out of memory", path);
    free(real);   /* realpath's memory comes from malloc, not LT__MALLOC */
    return *target ? 1 : -1;
}

LTRAIN_DEF lt_status lt_dest_check(lt_ctx *ctx, const char *path, lt_dest_mode mode) {
    char why[900], *target;
    int d = lt__dest(path, mode, &target, why, sizeof why);
    if (d <= 0) return lt_set_error(ctx, d < 0 ? LT_ERR_NOMEM : LT_ERR_ARG, "%s", why);
    LT__FREE(target);
    return LT_OK;
}

LTRAIN_DEF lt_status lt_st_save(lt_st_writer *w, const char *path) {
    lt__sbuf h;
    char num[96], *tmp = NULL, *target = NULL;
    unsigned char len8[8];
    size_t off = 0, plen;
    FILE *f = NULL;
    int i, k, err = 0;
    lt_status s;
    lt_rng r;
    if (!w) return LT_ERR_ARG;
    if (!path) return lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_save: path is NULL");
    if (w->failed)
        return lt_set_error(w->ctx, LT_ERR_STATE, "lt_st_save: %s: not written because an earlier lt_st_add or "
                            "lt_st_add_meta on this writer failed", path);
    {   /* a device, FIFO, directory..: refused; a symbolic link: its target is written */
        char why[900];
        int d = lt__dest(path, LT_DEST_REPLACE, &target, why, sizeof why);
        if (d <= 0) return lt_set_error(w->ctx, d < 0 ? LT_ERR_NOMEM : LT_ERR_ARG, "lt_st_save: %s", why);
        path = target;
    }
    memset(&h, 0, sizeof h);
    /* {"__metadata__":{...},"name":{"dtype":"F32","shape":[..],"data_offsets":[b,e]},...} */
    lt__sb_str(&h, "{");
    if (w->n_meta) {
        lt__sb_str(&h, "\"__metadata__\":{");
        for (i = 0; i < w->n_meta; i++) {
            if (i) lt__sb_str(&h, ",");
            lt__sb_json(&h, w->meta[2 * i]);
            lt__sb_str(&h, ":");
            lt__sb_json(&h, w->meta[2 * i + 1]);
        }
        lt__sb_str(&h, "}");
    }
    for (i = 0; i < w->n; i++) {
        const lt__stw_tensor *x = &w->t[i];
        if (i || w->n_meta) lt__sb_str(&h, ",");
        lt__sb_json(&h, x->name);
        lt__sb_str(&h, ":{\"dtype\":\"");
        lt__sb_str(&h, lt__st_dtypes[x->dt].name);
        lt__sb_str(&h, "\",\"shape\":[");
        for (k = 0; k < x->ndim; k++) {
            snprintf(num, sizeof num, k ? ",%lld" : "%lld", (long long)x->shape[k]);
            lt__sb_str(&h, num);
        }
        if (!lt_add_size(off, x->bytes, &plen)) { h.oom = 1; break; }
        snprintf(num, sizeof num, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)plen);
        lt__sb_str(&h, num);
        off = plen;
    }
    lt__sb_str(&h, "}");
    while (!h.oom && h.len % 8) lt__sb_str(&h, " "); /* the data then starts 8-byte aligned (oom: no progress) */
    if (h.oom) {
        s = lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_save: %s: out of memory for the header", path);
        LT__FREE(h.p);
        LT__FREE(target);
        return s;
    }
    if (h.len > LT__ST_MAX_HEADER) {   /* lt_st_open would refuse the file */
        s = lt_set_error(w->ctx, LT_ERR_ARG, "lt_st_save: %s: the header would be %zu bytes, over the %u a reader "
                         "accepts (too many tensors or too much metadata)", path, h.len, LT__ST_MAX_HEADER);
        LT__FREE(h.p);
        LT__FREE(target);
        return s;
    }
    for (k = 0; k < 8; k++) len8[k] = (unsigned char)((uint64_t)h.len >> (8 * k));

    /* a name no other writer is likely to pick at the same moment */
    lt_rng_seed(&r, (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)w << 20) ^ (uint64_t)clock());
    plen = strlen(path);
    tmp = (char *)LT__MALLOC(plen + 32);
    if (!tmp) {
        s = lt_set_error(w->ctx, LT_ERR_NOMEM, "lt_st_save: %s: out of memory", path);
        LT__FREE(h.p);
        LT__FREE(target);
        return s;
    }
    snprintf(tmp, plen + 32, "%s.tmp%08lx", path, (unsigned long)(lt_rng_u64(&r) & 0xFFFFFFFFu));

    f = fopen(tmp, "wb");
    if (!f) { err = errno; goto io; }
    if (fwrite(len8, 1, 8, f) != 8 || fwrite(h.p, 1, h.len, f) != h.len) { err = errno; goto io; }
    for (i = 0; i < w->n; i++)
        if (!lt__st_write_data(f, &w->t[i])) { err = errno; goto io; }
    if (fflush(f) != 0 || LT__FSYNC(f) != 0) { err = errno; goto io; }
    k = fclose(f);
    f = NULL;
    if (k != 0) { err = errno; goto io; }
    if (rename(tmp, path) != 0) {
        err = errno;
#if defined(_WIN32)
        /* Windows will not rename over an existing file */
        if (remove(path) == 0 && rename(tmp, path) == 0) err = 0;
        else err = errno;
#endif
        if (err) goto io;
    }
#if !defined(_WIN32)
    if (lt__fsync_dir(tmp, path) != 0) {   /* the file is in place, but perhaps not durably */
        err = errno;
        LT__FREE(h.p);
        LT__FREE(tmp);
        s = lt_set_error(w->ctx, LT_ERR_IO, "lt_st_save: \"%s\" written, but syncing its directory failed: %s",
                         path, strerror(err));
        LT__FREE(target);
        return s;
    }
#endif
    LT__FREE(h.p);
    LT__FREE(tmp);
    LT__FREE(target);
    return LT_OK;
io:
    if (f) fclose(f);
    remove(tmp);
    LT__FREE(h.p);
    LT__FREE(tmp);
    s = lt_set_error(w->ctx, LT_ERR_IO, "lt_st_save: cannot write \"%s\": %s", path, err ? strerror(err) : "write failed");
    LT__FREE(target);
    return s;
}


/* -- @@CKPT.config  config.json: Hugging Face model settings, read leniently; text written atomically */
/* A config.json holds floats, true/false/null, nested objects and arrays, which the safetensors
   header parser above refuses.  This reader keeps the scalars: each member of the top object (and,
   dotted, of objects inside it: "rope_parameters.rope_theta") as text with its kind; arrays are
   checked and skipped.  Anything that is not JSON is an error with the byte offset. */
typedef struct { char key[80], val[80]; char kind; } lt__hfitem;   /* kind: s(tring) n(umber) b(ool) z(null) o a */
typedef struct {
    const char *s;
    size_t len, pos;
    lt__hfitem *it;
    int n, cap;
    char err[96];
} lt__hfcfg;

static void lt__hf_ws(lt__hfcfg *c) {
    while (c->pos < c->len && strchr(" \t\r\n", c->s[c->pos]) && c->s[c->pos]) c->pos++;
}
static int lt__hf_fail(lt__hfcfg *c, const char *what) {
    if (!c->err[0]) snprintf(c->err, sizeof c->err, "%s at byte %zu", what, c->pos);
    return 0;
}
static int lt__hf_push(lt__hfcfg *c, const char *key, const char *val, size_t n, char kind) {
    lt__hfitem *x;
    if (!key) return 1;
    if (c->n == c->cap) {
        int ncap = c->cap ? 2 * c->cap : 32;
        lt__hfitem *p = c->cap > 4096 ? NULL : (lt__hfitem *)LT__REALLOC(c->it, (size_t)ncap * sizeof *p);
        if (!p) return lt__hf_fail(c, "out of memory (or too many settings)");
        c->it = p; c->cap = ncap;
    }
    x = &c->it[c->n++];
    snprintf(x->key, sizeof x->key, "%s", key);
    if (n >= sizeof x->val) n = sizeof x->val - 1;
    memcpy(x->val, val, n);
    x->val[n] = 0;
    x->kind = kind;
    return 1;
}
/* A string at pos (the quote) into out (escapes kept as written but for \" and \\). */
static int lt__hf_str(lt__hfcfg *c, char *out, size_t cap) {
    size_t k = 0;
    c->pos++;
    while (c->pos < c->len && c->s[c->pos] != '"') {
        char ch = c->s[c->pos];
        if ((unsigned char)ch < 0x20) return lt__hf_fail(c, "control character in a string");
        if (ch == '\\') {
            if (++c->pos >= c->len) break;
            ch = c->s[c->pos];
        }
        if (k + 1 < cap) out[k++] = ch;
        c->pos++;
    }
    if (c->pos >= c->len) return lt__hf_fail(c, "unterminated string");
    c->pos++;
    if (cap) out[k < cap ? k : cap - 1] = 0;
    return 1;
}
static int lt__hf_value(lt__hfcfg *c, const char *key, int depth) {
    char ch, sub[80], str[80];
    size_t start;
    lt__hf_ws(c);
    if (depth > 32) return lt__hf_fail(c, "nested too deeply");
    if (c->pos >= c->len) return lt__hf_fail(c, "unexpected end");
    ch = c->s[c->pos];
    start = c->pos;
    if (ch == '{' || ch == '[') {
        int first = 1;
        c->pos++;
        for (;;) {
            lt__hf_ws(c);
            if (c->pos < c->len && c->s[c->pos] == (ch == '{' ? '}' : ']')) { c->pos++; break; }
            if (!first) {
                if (c->pos >= c->len || c->s[c->pos] != ',') return lt__hf_fail(c, "expected ',' or a closing bracket");
                c->pos++;
                lt__hf_ws(c);
            }
            first = 0;
            if (ch == '[') { if (!lt__hf_value(c, NULL, depth + 1)) return 0; continue; }
            if (c->pos >= c->len || c->s[c->pos] != '"') return lt__hf_fail(c, "expected a string key");
            if (!lt__hf_str(c, str, sizeof str)) return 0;
            lt__hf_ws(c);
            if (c->pos >= c->len || c->s[c->pos] != ':') return lt__hf_fail(c, "expected ':'");
            c->pos++;
            if (key && strlen(key) + strlen(str) + 2 <= sizeof sub) {   /* "key.str" */
                size_t kl = strlen(key);
                memcpy(sub, key, kl);
                sub[kl] = '.';
                memcpy(sub + kl + 1, str, strlen(str) + 1);
            } else memcpy(sub, str, strlen(str) + 1);
            if (!lt__hf_value(c, depth == 0 || key ? sub : NULL, depth + 1)) return 0;
        }
        return lt__hf_push(c, key, "", 0, ch == '{' ? 'o' : 'a');
    }
    if (ch == '"') return lt__hf_str(c, str, sizeof str) && lt__hf_push(c, key, str, strlen(str), 's');
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        while (c->pos < c->len && strchr("+-0123456789.eE", c->s[c->pos]) && c->s[c->pos]) c->pos++;
        return lt__hf_push(c, key, c->s + start, c->pos - start, 'n');
    }
    if (c->len - c->pos >= 4 && (!strncmp(c->s + c->pos, "true", 4) || !strncmp(c->s + c->pos, "null", 4))) {
        c->pos += 4;
        return lt__hf_push(c, key, c->s + start, 4, ch == 'n' ? 'z' : 'b');
    }
    if (c->len - c->pos >= 5 && !strncmp(c->s + c->pos, "false", 5)) {
        c->pos += 5;
        return lt__hf_push(c, key, c->s + start, 5, 'b');
    }
    return lt__hf_fail(c, "not a JSON value");
}
/* Parse text (len bytes) into c (zeroed by the caller; lt__hf_free after).  1, or 0 with c->err. */
static int lt__hf_parse(lt__hfcfg *c, const char *text, size_t len) {
    c->s = text; c->len = len; c->pos = 0;
    lt__hf_ws(c);
    if (c->pos >= len || text[c->pos] != '{') return lt__hf_fail(c, "expected a JSON object");
    if (!lt__hf_value(c, NULL, 0)) return 0;
    lt__hf_ws(c);
    return c->pos == len ? 1 : lt__hf_fail(c, "text after the object");
}
static void lt__hf_free(lt__hfcfg *c) { LT__FREE(c->it); c->it = NULL; c->n = c->cap = 0; }
static const lt__hfitem *lt__hf_find(const lt__hfcfg *c, const char *key) {
    int i;
    for (i = c->n - 1; i >= 0; i--) if (strcmp(c->it[i].key, key) == 0) return &c->it[i];
    return NULL;
}

/* Write text to path through a temporary file, fsync and rename (as lt_st_save). */
static lt_status lt__write_text_atomic(lt_ctx *ctx, const char *path, const char *text) {
    size_t n = strlen(text), plen = strlen(path);
    char *tmp = (char *)LT__MALLOC(plen + 32);
    FILE *f;
    int err = 0;
    lt_rng r;   /* not the context's: saving must not change what training draws */
    if (!tmp) return lt_set_error(ctx, LT_ERR_NOMEM, "cannot write \"%s\": out of memory", path);
    lt_rng_seed(&r, (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)tmp << 20) ^ (uint64_t)clock());
    snprintf(tmp, plen + 32, "%s.tmp%08lx", path, (unsigned long)(lt_rng_u64(&r) & 0xFFFFFFFFu));
    f = fopen(tmp, "wb");
    if (!f || fwrite(text, 1, n, f) != n || fflush(f) != 0 || LT__FSYNC(f) != 0) err = errno ? errno : EIO;
    if (f && fclose(f) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) {
        err = errno;
#if defined(_WIN32)
        if (remove(path) == 0 && rename(tmp, path) == 0) err = 0;
#endif
    }
    if (err) remove(tmp);
    LT__FREE(tmp);
    return err ? lt_set_error(ctx, LT_ERR_IO, "cannot write \"%s\": %s", path, strerror(err)) : LT_OK;
}

/* lt_test.h - the test suite's small harness: checks, tolerances, reference files.
   Every test file is #included by tests/test_main.c, which holds LTRAIN_IMPLEMENTATION. */
#ifndef LT_TEST_H
#define LT_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define T_UNUSED __attribute__((unused)) /* not every test file uses every helper */
#else
#define T_UNUSED
#endif

static int t_passed, t_failed, t_skipped;
static const char *t_only; /* run only tests whose name contains this (argv[1]) */

/* One named check: prints ok / FAIL and counts it. */
static int t_check(int ok, const char *name, const char *fmt, ...);
#include <stdarg.h>
static int t_check(int ok, const char *name, const char *fmt, ...) {
    va_list ap;
    if (ok) { t_passed++; printf("ok   %s\n", name); return 1; }
    t_failed++;
    printf("FAIL %s: ", name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return 0;
}
static T_UNUSED void t_skip(const char *name, const char *why) { t_skipped++; printf("skip %s: %s\n", name, why); }

/* Arrays agree when |got - ref| <= atol + rtol*|ref| everywhere (NaN never agrees). */
static T_UNUSED int t_close(const char *name, const float *got, const float *ref, int64_t n, double atol, double rtol) {
    double worst = 0, worst_abs = 0; int64_t at = -1, i; int ok = 1;
    for (i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)ref[i]), lim = atol + rtol * fabs((double)ref[i]);
        double r = d / lim;
        if (!(d <= lim)) { ok = 0; }
        if (!(r <= worst)) { worst = r; worst_abs = d; at = i; }
    }
    if (ok) return t_check(1, name, "");
    return t_check(0, name, "at [%lld] got %.9g ref %.9g: err %.3g (tol %g + %g*|ref|)", (long long)at,
                   at >= 0 ? got[at] : 0.0, at >= 0 ? ref[at] : 0.0, worst_abs, atol, rtol);
}

/* ---- files ------------------------------------------------------------------------------------------- */
/* Whether path opens for reading. */
static T_UNUSED int t_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    return 1;
}
/* The whole file, NUL-terminated (malloc'd), its length in *size (when size is not NULL); NULL when
   it cannot be read.  Read in growing pieces, so files whose size stat does not know work too. */
static T_UNUSED char *t_slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, len = 0, got;
    if (size) *size = 0;
    if (!f) return NULL;
    do {
        if (cap - len < 4096) {
            char *p = (char *)realloc(buf, cap * 2 + 4096);
            if (!p) { free(buf); fclose(f); return NULL; }
            buf = p;
            cap = cap * 2 + 4096;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    fclose(f);
    buf[len] = 0;
    if (size) *size = len;
    return buf;
}

/* ---- reference files (tests/ref/NAME.bin, written by tests/ref/gen_NAME.py) ----------------------------
   A file is a sequence of records: u32 name length, name bytes, u32 ndim, i64 shape[ndim],
   f32 data[prod(shape)], all little-endian.  Integers (ids, targets) are stored as exact floats. */
typedef struct { char name[128]; int ndim; int64_t shape[8]; int64_t n; float *data; } t_arr;
typedef struct { t_arr *a; int n; } t_ref;

static T_UNUSED int t_ref_load(t_ref *r, const char *path) {
    FILE *f = fopen(path, "rb");
    r->a = NULL; r->n = 0;
    if (!f) return 0;
    for (;;) {
        uint32_t len, nd; t_arr x; int i;
        memset(&x, 0, sizeof x);
        if (fread(&len, 4, 1, f) != 1) break;
        if (len >= sizeof x.name || fread(x.name, 1, len, f) != len) goto bad;
        if (fread(&nd, 4, 1, f) != 1 || nd > 8) goto bad;
        x.ndim = (int)nd; x.n = 1;
        for (i = 0; i < x.ndim; i++) { if (fread(&x.shape[i], 8, 1, f) != 1) goto bad; x.n *= x.shape[i]; }
        x.data = (float *)malloc((size_t)(x.n ? x.n : 1) * sizeof(float));
        if (!x.data || fread(x.data, 4, (size_t)x.n, f) != (size_t)x.n) { free(x.data); goto bad; }
        r->a = (t_arr *)realloc(r->a, (size_t)(r->n + 1) * sizeof(t_arr));
        r->a[r->n++] = x;
    }
    fclose(f);
    return 1;
bad:
    fclose(f);
    return 0;
}
static T_UNUSED t_arr *t_ref_get(t_ref *r, const char *name) {
    int i;
    for (i = 0; i < r->n; i++) if (strcmp(r->a[i].name, name) == 0) return &r->a[i];
    return NULL;
}
static T_UNUSED void t_ref_free(t_ref *r) {
    int i;
    for (i = 0; i < r->n; i++) free(r->a[i].data);
    free(r->a); r->a = NULL; r->n = 0;
}
/* The directory holding tests/ref (the suite runs from the repository root). */
static T_UNUSED const char *t_ref_dir(void) { const char *d = getenv("LT_REF_DIR"); return d ? d : "tests/ref"; }
/* ../shared/data, if present (tests needing it skip otherwise). */
static T_UNUSED const char *t_shared_dir(void) { const char *d = getenv("LT_SHARED_DIR"); return d ? d : "../shared/data"; }
/* a temporary directory for files tests write */
static T_UNUSED const char *t_tmp_dir(void) { const char *d = getenv("LT_TMP_DIR"); return d ? d : "build/tmp"; }

/* Loads tests/ref/FILE.bin for the test called test: 1 when it holds records.  A missing file skips
   the test (tests/ref/gen_FILE.py makes it), an unreadable or empty one fails it. */
static T_UNUSED int t_ref_open(t_ref *r, const char *file, const char *test) {
    char path[512], why[256];
    FILE *f;
    r->a = NULL; r->n = 0;
    snprintf(path, sizeof path, "%s/%s.bin", t_ref_dir(), file);
    if (!(f = fopen(path, "rb"))) {
        snprintf(why, sizeof why, "tests/ref/%s.bin is missing (make it: python3 tests/ref/gen_%s.py)", file, file);
        t_skip(test, why);
        return 0;
    }
    fclose(f);
    if (!t_ref_load(r, path) || r->n == 0) {
        t_ref_free(r);
        t_check(0, test, "%s is malformed (regenerate it: python3 tests/ref/gen_%s.py)", path, file);
        return 0;
    }
    return 1;
}

/* ---- op cases (tests/ref/ops.bin, llama_ops.bin: tests/ref/refio.py's op_case) -------------------------
   A case ID = KIND/LABEL/sSEED is the records ID.x0..x2 (float inputs; absent: no such input),
   ID.g0..g2 (the gradients of sum(out * R) with respect to them), ID.ids (integers stored as
   floats), ID.args (scalars), ID.R and ID.out. */
typedef struct { t_arr *x[3], *g[3], *ids, *args, *out, *R; } t_case;

/* When a is a case's ID.out record: its ID into id[cap], 1; otherwise 0. */
static T_UNUSED int t_case_id(const t_arr *a, char *id, size_t cap) {
    size_t n = strlen(a->name);
    if (n < 4 || n - 4 >= cap || strcmp(a->name + n - 4, ".out") != 0) return 0;
    memcpy(id, a->name, n - 4);
    id[n - 4] = 0;
    return 1;
}
/* The records of case id (NULL where absent); 1 when it has out, R and x0. */
static T_UNUSED int t_case_get(t_ref *r, const char *id, t_case *c) {
    char key[160];
    int k;
#define T_CASE_GET(field) (snprintf(key, sizeof key, "%s.%s", id, field), t_ref_get(r, key))
    for (k = 0; k < 3; k++) {
        char f[3] = {'x', (char)('0' + k), 0};
        c->x[k] = T_CASE_GET(f);
        f[0] = 'g';
        c->g[k] = T_CASE_GET(f);
    }
    c->ids = T_CASE_GET("ids"); c->args = T_CASE_GET("args"); c->out = T_CASE_GET("out"); c->R = T_CASE_GET("R");
#undef T_CASE_GET
    return c->out && c->R && c->x[0];
}

/* Should the test called name run?  (argv filter) */
static T_UNUSED int t_want(const char *name) { return !t_only || strstr(name, t_only) != NULL; }
#endif

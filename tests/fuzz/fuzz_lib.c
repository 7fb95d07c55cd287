/* fuzz_lib.c - the library for the fuzz targets, compiled once, with allocator hooks that keep
   every allocation made between fz_begin(n) and fz_end() within the bound fuzz.h describes. */
#define FZ_LIB
#include "fuzz.h"

static size_t fz_n = (size_t)-1;   /* the input's size while checking; (size_t)-1: not checking */
static size_t fz_live, fz_base;     /* bytes allocated now; at fz_begin */
static size_t fz_single, fz_most, fz_single_n, fz_most_n;   /* worst seen, and the input sizes then */
static int fz_report_set;

static void fz_over(const char *what, size_t bytes, size_t limit) {
    fprintf(stderr, "fuzz: %s of %zu bytes for a %zu-byte input (limit %zu): an allocation not bounded "
            "by the input's size\n", what, bytes, fz_n, limit);
    abort();
}
static void fz_account(size_t add, size_t sub) {
    size_t lim1, lim2;
    fz_live = fz_live + add - sub;
    if (fz_n == (size_t)-1) return;
    lim1 = FZ_SINGLE_PER_BYTE * fz_n + FZ_SLACK;
    lim2 = FZ_LIVE_PER_BYTE * fz_n + FZ_SLACK;
    if (add > fz_single) { fz_single = add; fz_single_n = fz_n; }
    if (add > lim1) fz_over("one allocation", add, lim1);
    if (fz_live > fz_base && fz_live - fz_base > fz_most) { fz_most = fz_live - fz_base; fz_most_n = fz_n; }
    if (fz_live > fz_base && fz_live - fz_base > lim2) fz_over("live memory", fz_live - fz_base, lim2);
}
/* 16 bytes in front of each block hold its size (16 keeps malloc's alignment). */
static void *fz_malloc(size_t n) {
    unsigned char *p;
    if (n > SIZE_MAX - 16) return NULL;
    fz_account(n, 0);
    p = (unsigned char *)malloc(n + 16);
    if (!p) { fz_account(0, n); return NULL; }
    memcpy(p, &n, sizeof n);
    return p + 16;
}
static void fz_free(void *q) {
    unsigned char *p = (unsigned char *)q;
    size_t n;
    if (!p) return;
    memcpy(&n, p - 16, sizeof n);
    fz_account(0, n);
    free(p - 16);
}
static void *fz_realloc(void *q, size_t n) {
    unsigned char *p = (unsigned char *)q, *r;
    size_t old;
    if (!p) return fz_malloc(n);
    if (n > SIZE_MAX - 16) return NULL;
    memcpy(&old, p - 16, sizeof old);
    fz_account(n, 0);
    r = (unsigned char *)realloc(p - 16, n + 16);
    if (!r) { fz_account(0, n); return NULL; }
    fz_account(0, old);
    memcpy(r, &n, sizeof n);
    return r + 16;
}

static void fz_report(void) {
    fprintf(stderr, "fuzz bound: largest allocation %zu bytes (for a %zu-byte input), most live %zu bytes (for a "
            "%zu-byte input); limits %d*n + %zu and %d*n + %zu\n", fz_single, fz_single_n, fz_most, fz_most_n,
            FZ_SINGLE_PER_BYTE, FZ_SLACK, FZ_LIVE_PER_BYTE, FZ_SLACK);
}
void fz_begin(size_t n) {
    if (!fz_report_set) { fz_report_set = 1; atexit(fz_report); }
    fz_n = n;
    fz_base = fz_live;
}
void fz_end(void) { fz_n = (size_t)-1; }

#define LTRAIN_MALLOC(n) fz_malloc(n)
#define LTRAIN_REALLOC(p, n) fz_realloc(p, n)
#define LTRAIN_FREE(p) fz_free(p)
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

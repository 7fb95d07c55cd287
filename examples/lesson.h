/* examples/lesson.h: the plumbing the lessons share, so that each lesson's own file shows what it
   teaches and little else.  Static inline functions (a lesson that uses only some of them compiles
without warnings), for the one .c file of a lesson, after ltrain.h:

       lesson_args       the command line: --help, one positional (the text file), --flag VALUE
                         from a table of the lesson's flags
       lesson_text       a text file read as byte tokens (vocab 256)
       lesson_now_ms     a monotonic clock in milliseconds (define _POSIX_C_SOURCE 200809L first)
       lesson_plot_save  write a plot, say where (or why not), free it

   Each function prints its own error, prefixed with the program's name. */
#ifndef LESSON_H
#define LESSON_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flags.h"

/* One --flag VALUE: the value is read as a whole number from 0 up ('i' into an int, 'l' a long, 'L' an
   int64_t), a finite real number >= 0 ('d', double), both with flags.h's checks, or kept as it is
   ('s', const char *). */
typedef struct { const char *name; char kind; void *value; } lesson_flag;

#define LESSON_HELP 2

/* Reads argv[1..] into the flags' values; an argument without a leading '-' goes to *positional.
   Returns 0 (go on), 1 (a usage error, printed: an unknown flag, a missing value, or a value that is
   not a number in the flag's range, with the flag named) or LESSON_HELP (--help or -h: print the usage, with
   the values read so far as the defaults, and exit 0). */
static inline int lesson_args(const char *prog, int argc, char **argv, const char **positional,
                              const lesson_flag *flags, int n) {
    int i, k;
    unsigned long long u;
    double d;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) return LESSON_HELP;
        if (f[0] != '-') { *positional = f; continue; }
        if (!v) { fprintf(stderr, "%s: %s needs a value\n", prog, f); return 1; }
        for (k = 0; k < n && strcmp(f, flags[k].name); k++) {}
        if (k == n) { fprintf(stderr, "%s: unknown flag %s (see --help)\n", prog, f); return 1; }
        switch (flags[k].kind) {
        case 'i':
            if (!flag_whole(prog, f, v, 0, INT_MAX, &u)) return 1;
            *(int *)flags[k].value = (int)u;
            break;
        case 'l':
            if (!flag_whole(prog, f, v, 0, LONG_MAX, &u)) return 1;
            *(long *)flags[k].value = (long)u;
            break;
        case 'L':
            if (!flag_whole(prog, f, v, 0, INT64_MAX, &u)) return 1;
            *(int64_t *)flags[k].value = (int64_t)u;
            break;
        case 'd':
            if (!flag_real(prog, f, v, 0, &d)) return 1;
            *(double *)flags[k].value = d;
            break;
        default: *(const char **)flags[k].value = v; break;
        }
        i++;
    }
    return 0;
}

/* The bytes of the file at path as tokens 0..255 in *tok (free it), their count in *n.  0 if the file
   cannot be read, holds fewer than `need` bytes (the message says "too short" and then `for_what`,
   e.g. "for one batch", or with NULL the bytes it needs) or memory runs out (printed). */
static inline int lesson_text(const char *prog, const char *path, int64_t need, const char *for_what, int32_t **tok,
                              int64_t *n) {
    lt_ctx *ctx = lt_ctx_create(0);
    void *buf = NULL;
    size_t size = 0, i;
    *tok = NULL;
    *n = 0;
    if (!ctx || lt_read_file(ctx, path, &buf, &size) != LT_OK) {
        fprintf(stderr, "%s: %s\n", prog, ctx ? lt_error(ctx) : "out of memory");
        lt_ctx_destroy(ctx);
        return 0;
    }
    lt_ctx_destroy(ctx);
    if ((int64_t)size < need) {
        if (for_what) fprintf(stderr, "%s: %s is too short %s (%lld bytes)\n", prog, path, for_what, (long long)size);
        else fprintf(stderr, "%s: %s is too short (%lld bytes; need %lld)\n", prog, path, (long long)size, (long long)need);
        lt_free(buf);
        return 0;
    }
    if (size > 0 && !(*tok = (int32_t *)malloc(size * sizeof(int32_t)))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        lt_free(buf);
        return 0;
    }
    for (i = 0; i < size; i++) (*tok)[i] = ((unsigned char *)buf)[i];
    *n = (int64_t)size;
    lt_free(buf);
    return 1;
}

#ifdef _POSIX_C_SOURCE
static inline double lesson_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}
#endif

/* Saves p to path and prints the line `said` (a printf format of the path, e.g. "wrote %s\n"), or
   the error; frees p.  0 if it failed. */
static inline int lesson_plot_save(const char *prog, lt_plot *p, const char *path, const char *said) {
    int ok = lt_plot_save(p, path) == LT_OK;
    if (!ok) fprintf(stderr, "%s: %s\n", prog, lt_plot_error(p));
    else printf(said, path);
    lt_plot_destroy(p);
    return ok;
}

#endif

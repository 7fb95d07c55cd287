/* flags.h: checked number parsing for the example programs' command-line flags (train_gpt,
   sample_gpt).  A whole number is read as an integer (strtoull), so every value from 0 to
   2^64-1 is exact; an integral value written as a float ("1e3", "2.0") is kept when it is exact
   (at most 2^53).  A real number must be finite.  Each refusal names the program, the flag and
   the value on one line of stderr; the functions return 1 when *out was set, 0 otherwise. */
#ifndef EXAMPLES_FLAGS_H
#define EXAMPLES_FLAGS_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int flag_whole(const char *prog, const char *flag, const char *v, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out) {
    char *end;
    unsigned long long u = 0;
    double x;
    int ok = 0;
    if (!v) { fprintf(stderr, "%s: %s needs a value\n", prog, flag); return 0; }
    if ((*v >= '0' && *v <= '9') || *v == '+') {   /* no sign but '+': strtoull would wrap "-1" */
        errno = 0;
        u = strtoull(v, &end, 10);
        if (end != v && !*end && !errno) ok = 1;
        else {
            x = strtod(v, &end);
            if (end != v && !*end && x >= 0 && x <= 9007199254740992.0 && x == floor(x)) { u = (unsigned long long)x; ok = 1; }
        }
    }
    if (!ok || u < lo || u > hi) {
        fprintf(stderr, "%s: %s: \"%s\" is not a whole number from %llu to %llu\n", prog, flag, v, lo, hi);
        return 0;
    }
    *out = u;
    return 1;
}

/* A finite number >= lo (lo = -HUGE_VAL: any finite number). */
static int flag_real(const char *prog, const char *flag, const char *v, double lo, double *out) {
    char *end;
    double x;
    if (!v) { fprintf(stderr, "%s: %s needs a value\n", prog, flag); return 0; }
    x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || x < lo) {
        if (lo == -HUGE_VAL) fprintf(stderr, "%s: %s: \"%s\" is not a finite number\n", prog, flag, v);
        else fprintf(stderr, "%s: %s: \"%s\" is not a finite number >= %g\n", prog, flag, v, lo);
        return 0;
    }
    *out = x;
    return 1;
}

#endif

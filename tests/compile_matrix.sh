#!/bin/sh
# The header must compile warning-free everywhere a user may drop it:
#   C99 and C11 with gcc and clang, C++ (g++ -x c++), LTRAIN_STATIC, two translation units that
#   both include it (one with the implementation), a user allocator, and without OpenMP; the
#   suite and train_gpt at -O3 too.
# Prints one line per configuration and "compile matrix: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
out=build/matrix
mkdir -p "$out"
pass=0; fail=0
W="-Wall -Wextra -Wpedantic -Werror"
cat > "$out/impl.c" <<'C'
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
int user_fn(void);
int main(void) { lt_ctx *c = lt_ctx_create(1); int ok = c != NULL; lt_ctx_destroy(c); return ok ? user_fn() : 1; }
C
cat > "$out/user.c" <<'C'
#include "ltrain.h"
int user_fn(void) { return lt_status_name(LT_OK)[0] == 'o' ? 0 : 1; }
C
cat > "$out/static.c" <<'C'
#define LTRAIN_STATIC
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
int main(void) { lt_ctx *c = lt_ctx_create(1); lt_ctx_destroy(c); return 0; }
C
cat > "$out/alloc.c" <<'C'
#include <stdlib.h>
static size_t n_alloc;
static void *my_malloc(size_t n) { n_alloc++; return malloc(n); }
#define LTRAIN_MALLOC(n) my_malloc(n)
#define LTRAIN_REALLOC(p, n) realloc(p, n)
#define LTRAIN_FREE(p) free(p)
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
int main(void) { lt_ctx *c = lt_ctx_create(1); lt_ctx_destroy(c); return n_alloc > 0 ? 0 : 1; }
C
run() { # name, command...
    name=$1; shift
    if "$@" > "$out/log.txt" 2>&1; then pass=$((pass + 1)); echo "ok   compile/$name"
    else fail=$((fail + 1)); echo "FAIL compile/$name: $*"; head -20 "$out/log.txt"; fi
}
for cc in gcc clang; do
    command -v $cc > /dev/null || { echo "skip compile/$cc: not installed"; continue; }
    for std in c99 c11; do
        run "$cc-$std-two-units" $cc -std=$std $W -I. "$out/impl.c" "$out/user.c" -o "$out/a-$cc-$std" -lm
        run "$cc-$std-run" "$out/a-$cc-$std"
        run "$cc-$std-openmp" $cc -std=$std $W -fopenmp -I. -c "$out/impl.c" -o "$out/o-$cc-$std.o"
    done
    run "$cc-static" $cc -std=c99 $W -I. "$out/static.c" -o "$out/s-$cc" -lm
    run "$cc-allocator" $cc -std=c99 $W -I. "$out/alloc.c" -o "$out/m-$cc" -lm
    run "$cc-allocator-run" "$out/m-$cc"
done
for cxx in g++ clang++; do
    command -v $cxx > /dev/null || { echo "skip compile/$cxx: not installed"; continue; }
    run "$cxx-two-units" $cxx -x c++ $W -I. "$out/impl.c" "$out/user.c" -o "$out/cpp-$cxx" -lm
    run "$cxx-static" $cxx -x c++ $W -I. -c "$out/static.c" -o "$out/cs-$cxx.o"
    # optimised, with this CPU's SIMD and OpenMP: flow-based warnings only show up here
    run "$cxx-O2-native" $cxx -x c++ $W -O2 -march=native -fopenmp -I. -c "$out/impl.c" -o "$out/cn-$cxx.o"
done
for ex in examples/*.c; do
    run "example-$(basename "$ex" .c)-no-openmp" gcc -std=c99 $W -I. -c "$ex" -o "$out/ex.o"
done
# -O3 inlines further than -O2, and gcc's maybe-uninitialized and format checks follow it (a false
# alarm there breaks a user's -Werror build): train_gpt and the suite, which between them call
# every part of the header (15-25 s each)
run "gcc-O3-native-train_gpt" gcc -std=c99 $W -O3 -march=native -fopenmp -I. -c examples/train_gpt.c -o "$out/ex.o"
run "gcc-O3-native-suite" gcc -std=c99 $W -O3 -march=native -fopenmp -I. -Itests -c tests/test_main.c -o "$out/t3.o"
echo "compile matrix: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

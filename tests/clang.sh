#!/bin/sh
# make test's clang stage: the suite built with clang and run, so the library's bits do not hang on
# gcc (clang fuses a·b + c into FMAs by default, which the implementation turns off for itself:
# its plain C loops keep the bits of the vector paths; @@CORE).  Skipped without clang.
cd "$(dirname "$0")/.."
if ! command -v clang > /dev/null 2>&1; then
    echo "skip clang: no clang (apt install clang libomp-dev)"
    exit 0
fi
omp=-fopenmp
echo '#include <omp.h>' | clang -fopenmp -x c -c - -o /dev/null 2>/dev/null || omp=""   # (no libomp-dev: serial)
mkdir -p build/tmp
if ! clang -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -march=native $omp -I. -Itests tests/test_main.c \
        -o build/test_clang -lm > build/tmp/clang.log 2>&1; then
    cat build/tmp/clang.log
    echo "FAIL clang: the suite does not build with clang (log above)"
    exit 1
fi
./build/test_clang

#!/bin/sh
# make test's no-march stage: the suite built with plain "cc -O2 -fopenmp" (the README's build
# line), no -march and no -std flags, as a distribution's package or a user's first build makes
# it, and run.  Every fast path (AVX2, AVX-512, AVX512_BF16, AMX) is then reached only through the
# run-time dispatch and the kernels' target attributes, where the compiler may lay out code around
# them differently than under -march=native (gcc 12 dropped part of the AMX tile configuration's
# zeroing there: a crash that only this build showed); and gcc's GNU mode, its default, fuses
# a·b + c into FMAs where -std=c99 does not (the implementation turns that off for itself, @@CORE:
# without it 6 of the suite's same-bits tests failed here).
cd "$(dirname "$0")/.."
mkdir -p build/tmp
if ! ${CC:-cc} -Wall -Wextra -Wpedantic -Werror -O2 -fopenmp -I. -Itests tests/test_main.c \
        -o build/test_no_march -lm > build/tmp/no_march.log 2>&1; then
    cat build/tmp/no_march.log
    echo "FAIL no-march: the suite does not build without -march flags (log above)"
    exit 1
fi
./build/test_no_march

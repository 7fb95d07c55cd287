#!/bin/sh
# make test's cblas stage: the suite built with -DLTRAIN_CBLAS (matmuls through cblas_sgemm, here
# OpenBLAS) and run, so the CBLAS path keeps passing the same tests (tests/test_gemm.c compares it
# with a double-precision loop, the op tests with PyTorch).  Skipped without OpenBLAS's headers
# (apt install libopenblas-dev).
cd "$(dirname "$0")/.."
inc=""
for d in /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas /usr/include; do
    [ -f "$d/cblas.h" ] && { inc=$d; break; }
done
if [ -z "$inc" ]; then
    echo "skip cblas: no cblas.h (apt install libopenblas-dev)"
    exit 0
fi
mkdir -p build/tmp
if ! ${CC:-cc} -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -march=native -fopenmp -DLTRAIN_CBLAS -I. -Itests \
        -I"$inc" tests/test_main.c -o build/test_cblas -lopenblas -lm > build/tmp/cblas.log 2>&1; then
    cat build/tmp/cblas.log
    echo "FAIL cblas: the suite does not build with -DLTRAIN_CBLAS (log above)"
    exit 1
fi
OPENBLAS_NUM_THREADS=1 ./build/test_cblas

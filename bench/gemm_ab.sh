#!/bin/bash
# bench/gemm_ab.sh OLD.h NEW.h ROUNDS THREADS M,N,K,ta,tb [M,N,K,ta,tb ...]
#   lt_sgemm of two versions of ltrain.h called turn about in one process (bench/gemm_ab.c): per
#   shape the median GFLOP/s of each and the median of the per-round speed ratios NEW/OLD
#   (> 1: NEW is faster).  Example, the working tree against the last commit, gpt-mini's head:
#     git show HEAD:ltrain.h > /tmp/old.h && bench/gemm_ab.sh /tmp/old.h ltrain.h 9 1 1024,50304,384,0,1
set -e
if [ $# -lt 5 ]; then sed -n 2,6p "$0"; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
for v in A B; do
    if [ $v = A ]; then cp "$1" "$d/$v.h"; else cp "$2" "$d/$v.h"; fi
    cat > "$d/w$v.c" <<EOC
#define LTRAIN_IMPLEMENTATION
#include "$v.h"
void gemm_$v(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
             int64_t ldb, float *C, int64_t ldc) {
    lt_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
}
EOC
    cc -O2 -march=native -fopenmp -DLTRAIN_DEF=static -w -c "$d/w$v.c" -o "$d/w$v.o"
done
cc -O2 -fopenmp "$here/gemm_ab.c" "$d/wA.o" "$d/wB.o" -o "$d/gemm_ab" -lm
rounds=$3; threads=$4; shift 4
"$d/gemm_ab" "$rounds" "$threads" "$@"

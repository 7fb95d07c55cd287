#!/bin/bash
# bench/att_ab.sh OLD.h NEW.h ROUNDS THREADS [--cold] B,T,C,H [B,T,C,H ...]
#   lt_attention (forward and backward, float32) of two versions of ltrain.h run turn about in one
#   process (bench/att_ab.c): per shape the median kernel milliseconds of each and the median of
#   the per-round ratios OLD/NEW of forward + backward (> 1: NEW is faster).  --cold: 64 MiB
#   written before each kernel, so qkv, y and the gradients come from memory, as in a step.
#   Example, the working tree against the last commit, char-small's attention at 1 thread:
#     git show HEAD:ltrain.h > /tmp/old.h && bench/att_ab.sh /tmp/old.h ltrain.h 9 1 8,256,256,4
set -e
if [ $# -lt 5 ]; then sed -n 2,8p "$0"; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$here/ab_sides.sh" "$d" "$here/att_ab_side.h" ATT_AB_SIDE att "$1" "$2"
cc -O2 -fopenmp "$here/att_ab.c" "$d/wA.o" "$d/wB.o" -o "$d/att_ab" -lm
rounds=$3; threads=$4; shift 4
"$d/att_ab" "$rounds" "$threads" "$@"

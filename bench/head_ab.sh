#!/bin/bash
# bench/head_ab.sh OLD.h NEW.h ROUNDS fp32|bf16|fp16|mixed R,C,V [--cpu]
#   The GPT head and its loss (x·Wᵀ and the cross-entropy; at 16 bits the fused linear_ce16),
#   forward and backward, of two versions of ltrain.h run turn about in one process
#   (bench/head_ab.c): the median ms of each and the median per-round ratios OLD/NEW (> 1: NEW is
#   faster).  mixed: fp32 against bf16, both NEW.  OMP_NUM_THREADS sets the threads.  Example,
#   the working tree against the last commit, gpt-mini's head in bf16 at 1 thread:
#     git show HEAD:ltrain.h > /tmp/old.h && OMP_NUM_THREADS=1 bench/head_ab.sh /tmp/old.h ltrain.h 9 bf16 1024,384,50304 --cpu
set -e
if [ $# -lt 5 ]; then sed -n 2,8p "$0"; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
case "$4" in fp32) p=0 ;; bf16) p=1 ;; fp16) p=2 ;; mixed) p=3 ;; *) echo "precision: fp32, bf16, fp16 or mixed" >&2; exit 2 ;; esac
for v in A B; do
    if [ $v = A ] && [ "$p" != 3 ]; then cp "$1" "$d/$v.h"; else cp "$2" "$d/$v.h"; fi
    cat > "$d/w$v.c" <<EOC
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "$v.h"
#include <stdio.h>
#include <stdlib.h>
#include "$here/head_ab_side.h"
HEAD_AB_SIDE(head_$v)
EOC
    lce=; if grep -q lt__linear_ce_exp_fwd "$d/$v.h"; then lce=-DHEAD_AB_LCE_EXP; fi
    cc -O2 -march=native -fopenmp -DLTRAIN_DEF=static $lce -w -c "$d/w$v.c" -o "$d/w$v.o"
done
cc -O2 -fopenmp "$here/head_ab.c" "$d/wA.o" "$d/wB.o" -o "$d/head_ab" -lm
"$d/head_ab" "$3" "$p" "$5" ${6:-}

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
a=$1; [ "$p" = 3 ] && a=$2   # mixed: both sides from NEW
# fp32: lt_gpt_loss's own op where a header has it (head_ab_side.h)
lce() { if grep -q lt__linear_ce_exp_fwd "$1"; then echo -DHEAD_AB_LCE_EXP; fi; }
AB_FLAGS_A=$(lce "$a") AB_FLAGS_B=$(lce "$2") "$here/ab_sides.sh" "$d" "$here/head_ab_side.h" HEAD_AB_SIDE head "$a" "$2"
cc -O2 -fopenmp "$here/head_ab.c" "$d/wA.o" "$d/wB.o" -o "$d/head_ab" -lm
"$d/head_ab" "$3" "$p" "$5" ${6:-}

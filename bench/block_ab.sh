#!/bin/bash
# bench/block_ab.sh OLD.h NEW.h ROUNDS fp32|bf16|fp16|mixed attn|mlp B,T,C,H [--cpu]
#   Half of a GPT-2 block (attn: ln_1, c_attn, attention, c_proj and the residual; mlp: ln_2, c_fc,
#   gelu, c_proj and the residual), forward and backward, of two versions of ltrain.h run turn
#   about in one process (bench/block_ab.c): the median ms of each and the median per-round
#   ratios OLD/NEW (> 1: NEW is faster).  mixed: fp32 against bf16, both NEW.  OMP_NUM_THREADS
#   sets the threads.  Example, bf16 against fp32 in gpt-mini's attention half on AVX2 kernels:
#     OMP_NUM_THREADS=2 LT_CPU_OFF=avx512f bench/block_ab.sh ltrain.h ltrain.h 30 mixed attn 4,256,384,6
set -e
if [ $# -lt 6 ]; then sed -n 2,8p "$0"; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
case "$4" in fp32) p=0 ;; bf16) p=1 ;; fp16) p=2 ;; mixed) p=3 ;; *) echo "precision: fp32, bf16, fp16 or mixed" >&2; exit 2 ;; esac
a=$1; [ "$p" = 3 ] && a=$2   # mixed: both sides from NEW
"$here/ab_sides.sh" "$d" "$here/block_ab_side.h" BLOCK_AB_SIDE block "$a" "$2"
cc -O2 -fopenmp "$here/block_ab.c" "$d/wA.o" "$d/wB.o" -o "$d/block_ab" -lm
"$d/block_ab" "$3" "$p" "$5" "$6" ${7:-}

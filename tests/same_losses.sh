#!/bin/sh
# tests/same_losses.sh OLD.h NEW.h: a refactor's check that training is unchanged to the bit.
#   Builds examples/train_gpt.c against each header, runs the same short runs with each (fp32,
#   bf16, fp16, compiled, accumulation, clipping by value, four optimizers, buckets, 1 and 2
#   threads), and compares the logged losses, learning rates and gradient norms (the "ms" and
#   other timing fields are dropped).  Prints "same: RUN" or "DIFF: RUN" per run and
#   "N passed, N failed".
#   OLD_SRC=PATH builds the old side from PATH instead of examples/train_gpt.c (a refactor of the
#   program itself: OLD_SRC=old_train_gpt.c sh tests/same_losses.sh ltrain.h ltrain.h).
set -u
if [ $# -ne 2 ]; then sed -n 2,8p "$0"; exit 2; fi
root=$(cd "$(dirname "$0")/.." && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
for v in old new; do
    if [ $v = old ]; then h=$1; src=${OLD_SRC:-$root/examples/train_gpt.c}; else h=$2; src=$root/examples/train_gpt.c; fi
    mkdir -p "$d/$v"; cp "$h" "$d/$v/ltrain.h"
    ${CC:-cc} -O2 -march=native -fopenmp -I"$d/$v" "$src" -o "$d/$v/train_gpt" -lm || exit 1
done
P=0; F=0
run() {
    name=$1; shift
    for v in old new; do
        (cd "$root" && "$d/$v/train_gpt" --data ltrain.h --steps 12 --layers 2 --channels 64 --heads 4 \
            --batch 4 --seq 32 --eval-every 6 --eval-batches 2 "$@" --log "$d/$v/$name.jsonl" >/dev/null 2>&1)
        sed -E 's/, *"(ms|tok_per_s|tokens_per_s|elapsed_s|time_s)": *[-0-9.eE+]+//g' "$d/$v/$name.jsonl" > "$d/$v/$name.txt"
    done
    if [ -s "$d/old/$name.txt" ] && cmp -s "$d/old/$name.txt" "$d/new/$name.txt"; then
        echo "same: $name"; P=$((P + 1))
    else
        echo "DIFF: $name"; diff "$d/old/$name.txt" "$d/new/$name.txt" | head -5; F=$((F + 1))
    fi
}
run fp32-1t     --threads 1
run fp32-2t     --threads 2
run compiled    --threads 2 --compile on
run bf16        --threads 2 --precision bf16
run bf16-1t     --threads 1 --precision bf16
run fp16        --threads 2 --precision fp16
run fp16-comp   --threads 2 --precision fp16 --compile on
run fp16-1t     --threads 1 --precision fp16 --compile on
run accum-clip  --threads 2 --accum 3 --clip-value 0.05 --clip-norm 0.5 --decay linear
run sgd         --threads 2 --optim sgd --lr 0.05
run lion        --threads 2 --optim lion --lr 3e-4 --decay sqrt
run muon        --threads 2 --optim muon --lr 0.02
run soap        --threads 2 --optim soap --lr 3e-3 --precond-freq 3
run ademamix    --threads 2 --optim ademamix
run buckets     --threads 2 --seqs lines --batching bucket --len-schedule 8:32:8
echo "$P passed, $F failed"
[ "$F" -eq 0 ]

#!/bin/sh
# make test's precision stage: 300 steps of char-small (bytes, 4 layers, 4 heads, C 256, T 256,
# B 8) on tinyshakespeare with build/train_gpt in fp32, bf16, fp16 (dynamic loss scale) and fp16
# with the loss scale off.  bf16 and fp16 must end within 2% of fp32's loss (the mean training
# loss of the last 30 steps: every run sees the same batches); fp16 without the scale is reported
# with the share of gradient values that were exactly zero (the underflow), not judged.
# Skipped without ../shared/data/tinyshakespeare.txt (LT_SHARED_DIR sets the folder): users clone
# the project alone.  About 5 minutes on 2 cores.  STEPS=N runs fewer steps (to try it out).
set -u
cd "$(dirname "$0")/.."
data="${LT_SHARED_DIR:-../shared/data}/tinyshakespeare.txt"
steps=${STEPS:-300}
if [ ! -f "$data" ]; then
    echo "skip precision-shakespeare: no $data"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
[ -x build/train_gpt ] || ${MAKE:-make} build/train_gpt >/dev/null || { echo "FAIL precision-shakespeare: no build/train_gpt"; exit 1; }
mkdir -p build/tmp
pass=0; fail=0
for run in fp32 bf16 fp16 fp16-noscale; do
    prec=${run%-noscale}
    scale=on
    [ "$run" = fp16-noscale ] && scale=off
    if ! build/train_gpt --data "$data" --layers 4 --heads 4 --channels 256 --ctx 256 --seq 256 --batch 8 \
            --steps "$steps" --warmup 30 --lr 1e-3 --min-lr 1e-4 --precision "$prec" --loss-scale "$scale" \
            --log "build/tmp/prec_$run.jsonl" > "build/tmp/prec_$run.out" 2>&1; then
        echo "FAIL precision-shakespeare/$run: train_gpt failed"; tail -n 3 "build/tmp/prec_$run.out"
        fail=$((fail + 1))
    fi
done
# mean loss of the last 30 logged steps, and the largest share of zero gradient values
tail_loss() { grep -v '"skipped": 1' "build/tmp/prec_$1.jsonl" 2>/dev/null | tail -n 30 |
              sed -E 's/.*"loss": ([^,]*),.*/\1/' | awk '{s += $1; n++} END {if (n) printf "%.6f", s / n; else print "nan"}'; }
max_zero() { sed -nE 's/.*"grad_zero_frac": ([^}]*)}.*/\1/p' "build/tmp/prec_$1.jsonl" 2>/dev/null |
             awk 'BEGIN {m = 0} {if ($1 > m) m = $1} END {printf "%.4f", 100 * m}'; }
f32=$(tail_loss fp32)
for run in bf16 fp16; do
    l=$(tail_loss "$run")
    if awk -v a="$l" -v b="$f32" 'BEGIN {
            if (a !~ /^[0-9]+\.[0-9]+$/ || b !~ /^[0-9]+\.[0-9]+$/) exit 1   # (a missing run: "nan")
            d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.02 * b) }'; then
        echo "ok   precision-shakespeare/$run: loss $l vs fp32 $f32 (within 2%)"
        pass=$((pass + 1))
    else
        echo "FAIL precision-shakespeare/$run: loss $l vs fp32 $f32 (more than 2% apart)"
        fail=$((fail + 1))
    fi
done
echo "info precision-shakespeare: fp16 without the loss scale: loss $(tail_loss fp16-noscale), at most $(max_zero fp16-noscale)% of the gradient values exactly zero in a step (fp16 with the scale: $(max_zero fp16)%, fp32: $(max_zero fp32)%)"
echo "precision-shakespeare: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

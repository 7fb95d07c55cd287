#!/bin/sh
# One-shot verification of the CUDA backend on a machine with an NVIDIA GPU (about 5-8 minutes on an
# H200).  Run from the repository root:  sh bench/cuda_check.sh
#   1. build: make cuda (build/train_gpt_cuda, build/test_cuda) and build/bench_cuda
#   2. build/test_cuda: every op's kernel (forward, backward) against the CPU kernel, AdamW, clipping,
#      the loss scaler, 50 GPT training steps fp32 CPU vs GPU (loss within 1e-3), bf16 / fp16 runs,
#      the CUDA-graph step against the eager one
#   3. compute-sanitizer memcheck on a 3-step train_gpt run (eager and graph)
#   4. build/bench_cuda: cuBLAS bf16/TF32 matmul rate, GPT-2 124M (B=16, T=1024) ms/step, tokens/s, MFU
# Prints one table and appends it (with the device and the date) to bench/results.md.
# Each part has a time limit, so one hang cannot eat the session.  Exit status: non-zero on a failure.
set -u
cd "$(dirname "$0")/.."
mkdir -p build/tmp
LOG=build/tmp/cuda_check
mkdir -p $LOG
NVCC=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
SAN=$(command -v compute-sanitizer 2>/dev/null || echo /usr/local/cuda/bin/compute-sanitizer)
fail=0
row() { printf '| %-34s | %-8s | %s |\n' "$1" "$2" "$3" >> $LOG/table.md; }
: > $LOG/table.md
t0=$(date +%s)
dev=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "== device: ${dev:-unknown} | $(uptime)"

echo "== 1. build"
if timeout 300 make -j4 cuda NVCC="$NVCC" > $LOG/build.log 2>&1 &&
   timeout 120 "$NVCC" -x cu -O2 -gencode 'arch=compute_90,code=[sm_90,compute_90]' -DLTRAIN_CUDA -I. \
       bench/cuda_bench.c -o build/bench_cuda -lcublas -lm >> $LOG/build.log 2>&1; then
    row "build (make cuda, bench_cuda)" ok "$(grep -c warning $LOG/build.log) warnings"
else
    tail -n 30 $LOG/build.log; row "build" FAIL "see $LOG/build.log"; fail=1
fi

echo "== 2. kernels against the CPU (build/test_cuda)"
if [ -x build/test_cuda ]; then
    timeout 300 ./build/test_cuda > $LOG/test_cuda.log 2>&1; rc=$?
    grep -E '^(FAIL|skip|device)|50 steps' $LOG/test_cuda.log
    sum=$(tail -n 1 $LOG/test_cuda.log)
    echo "$sum"
    [ $rc -eq 0 ] && row "test_cuda (ops fwd/bwd, optim, graphs)" ok "$sum" || { row "test_cuda" FAIL "$sum (rc $rc)"; fail=1; }
    line=$(grep '50 steps fp32' $LOG/test_cuda.log | sed 's/^ *//')
    row "50 GPT steps fp32, CPU vs CUDA" "$(grep -q '^ok   cuda/train-50-fp32$' $LOG/test_cuda.log && echo ok || echo FAIL)" "${line:-no result}"
fi

echo "== 3. compute-sanitizer memcheck (3 steps, small model; eager and graph)"
for c in off on; do
    if [ -x "$SAN" ] && [ -x build/train_gpt_cuda ]; then
        timeout 240 "$SAN" --tool memcheck --leak-check full --error-exitcode 9 ./build/train_gpt_cuda --device cuda \
            --steps 3 --layers 2 --channels 64 --heads 4 --batch 4 --seq 32 --compile $c > $LOG/memcheck_$c.log 2>&1; rc=$?
        res=$(grep 'ERROR SUMMARY' $LOG/memcheck_$c.log | tail -n 1)
        echo "compile $c: rc $rc, ${res:-no summary}"
        [ $rc -eq 0 ] && row "memcheck, --compile $c" ok "$res" || { row "memcheck, --compile $c" FAIL "rc $rc, $res"; fail=1; }
    else
        row "memcheck" skip "compute-sanitizer or build/train_gpt_cuda missing"
    fi
done

echo "== 4. GPT-2 124M timing (B=16, T=1024)"
if [ -x build/bench_cuda ]; then
    timeout 420 ./build/bench_cuda --steps 5 --batch 16 --seq 1024 --modes fp32,tf32,bf16,bf16-graph > $LOG/bench.log 2>&1; rc=$?
    cat $LOG/bench.log
    [ $rc -eq 0 ] || { row "bench_cuda" FAIL "rc $rc"; fail=1; }
fi

{
    echo
    echo "## CUDA check $(date -u +%Y-%m-%d) on ${dev:-unknown GPU} ($(( $(date +%s) - t0 )) s)"
    echo
    echo "| check | result | detail |"
    echo "|---|---|---|"
    cat $LOG/table.md
    echo
    grep -E '^(measured|\|)' $LOG/bench.log 2>/dev/null
    echo
    echo "MFU: model FLOPs (6N + 6LTC per token) / step time / the measured cuBLAS rate (bf16 modes vs bf16, fp32 and tf32 vs tf32)."
} > $LOG/summary.md
echo; echo "================ summary"; cat $LOG/summary.md
cat $LOG/summary.md >> bench/results.md
echo "(appended to bench/results.md; logs in $LOG)"
exit $fail

#!/bin/sh
# make test's cuda-compile stage: the CUDA backend (LTRAIN_CUDA) compiled and linked by nvcc, so the
# device path never rots on machines without a GPU.  -O1 for one architecture (sm_90 + its PTX) keeps
# it near 20 s; without nvcc (PATH or /usr/local/cuda/bin) the stage is skipped.  Where the binary
# can find a GPU, the kernels' tests run too (else test_cuda reports its skip).
cd "$(dirname "$0")/.."
NVCC=$(command -v nvcc 2>/dev/null || true)
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -z "$NVCC" ]; then
    echo "skip cuda-compile: nvcc not found (PATH, /usr/local/cuda/bin)"
    exit 0
fi
mkdir -p build/tmp
ok=0; p=0; f=0; s=0
for t in examples/train_gpt.c tests/test_cuda.c; do
    out=build/tmp/cuda_$(basename "$t" .c)
    if "$NVCC" -x cu -O1 -gencode 'arch=compute_90,code=[sm_90,compute_90]' -Xcompiler -Wall,-Wextra,-Werror \
        -DLTRAIN_CUDA -I. -Itests "$t" -o "$out" -lcublas -lm > build/tmp/cuda_compile.log 2>&1; then
        echo "ok   cuda-compile/$(basename "$t")"; p=$((p + 1))
    else
        cat build/tmp/cuda_compile.log
        echo "FAIL cuda-compile/$(basename "$t"): nvcc failed (log above)"
        ok=1; f=$((f + 1))
    fi
done
# the kernels' tests when a GPU is there (else the binary says why it skips: a clear error, no crash)
if [ "$f" -eq 0 ] && [ -x build/tmp/cuda_test_cuda ]; then
    build/tmp/cuda_test_cuda > build/tmp/cuda_test.out 2>&1; rc=$?
    sed 's/^/    /' build/tmp/cuda_test.out | tail -n 5
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' build/tmp/cuda_test.out | tail -n 1)
    tp=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/'); tf=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    ts=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    p=$((p + ${tp:-0})); f=$((f + ${tf:-0})); s=$((s + ${ts:-0}))
    [ "$rc" -ne 0 ] && [ "${tf:-0}" -eq 0 ] && { echo "FAIL cuda-compile/test_cuda: exit status $rc"; f=$((f + 1)); ok=1; }
fi
echo "cuda-compile: $p passed, $f failed, $s skipped"
exit $ok

#!/bin/sh
# make test: every stage of the suite, then one line with the totals:
#   0. src/amalgamate.sh --check, build/layout   ltrain.h is what its parts make; the layout rules
#   1. build/test_all                the suite (ops, optimizers, data, GPT, ... against PyTorch references)
#   2. tests/compile_matrix.sh       the header under C99/C11/C++/LTRAIN_STATIC/two TUs, gcc and clang
#   3. build/test_san                the suite again under -fsanitize=address,undefined (leaks too)
#   4. harden.cli                    the malformed-file corpus through a sanitizer build of train_gpt
#   5. build/test_oom                allocation failure at every allocation of a short training run
#   6. tests/kill_save.sh            SIGKILL during checkpoint saves: the checkpoint always loads
#   7. tests/valgrind_examples.sh    the examples under valgrind memcheck (skipped without valgrind)
#   8. tests/fuzz/run.sh 10          each libFuzzer target for 10 s (replays the corpus without libFuzzer)
#   9. tests/test_mpi.sh             data parallel over MPI (skipped without mpirun)
#  10. tests/cuda_compile.sh         the CUDA backend compiled and linked by nvcc (skipped without nvcc)
#  11. tests/cblas.sh                the suite built with -DLTRAIN_CBLAS (skipped without OpenBLAS)
#  12. tests/clang.sh                the suite built with clang (skipped without clang)
#  13. tests/arm64.sh                the suite built for AArch64 (NEON GEMM) and run under qemu-aarch64
#                                    (skipped without the cross compiler and qemu)
#  14. tests/no_march.sh             the suite built without -march flags (run-time dispatch only)
#  15. cpu-kinds.*                   test_all and test_san with LT_CPU_OFF hiding AMX, AVX512_BF16, AVX-512,
#                                    AVX2 in turn (other x86-64 CPUs' kernels; each where this CPU has it)
#  16. tests/tokenizer_cli.sh        tokenize, train_gpt/sample_gpt --tokenizer, lesson_sequences in tokens
#  17. tests/readme.sh               every command of README.md, as a new user would run it
#  18. tests/precision_shakespeare.sh 300 steps of char-small on tinyshakespeare in fp32, bf16, fp16:
#                                    16-bit within 2% of fp32 (skipped without ../shared/data)
# Each stage ends with "N passed, N failed" (or ok/FAIL/skip lines, counted); a stage that exits
# non-zero without reporting a failure counts as one.  Exit status: non-zero if anything failed.
set -u
cd "$(dirname "$0")/.."
mkdir -p build/tmp
P=0; F=0; S=0
stage() {
    name=$1; shift
    t0=$(date +%s)
    echo "== $name: $*"
    { "$@" 2>&1; echo "$?" > build/tmp/stage.rc; } | tee build/tmp/stage.out
    rc=$(cat build/tmp/stage.rc)
    line=$(grep -E '^(.*: )?[0-9]+ passed, [0-9]+ failed' build/tmp/stage.out | tail -n 1)
    if [ -n "$line" ]; then
        p=$(echo "$line" | sed -E 's/^(.*: )?([0-9]+) passed.*/\2/')
        f=$(echo "$line" | sed -E 's/^(.*: )?[0-9]+ passed, ([0-9]+) failed.*/\2/')
        s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
        s=${s:-0}
    else
        p=$(grep -c '^ok ' build/tmp/stage.out)
        f=$(grep -c '^FAIL' build/tmp/stage.out)
        s=$(grep -c '^skip' build/tmp/stage.out)
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $name: exit status $rc"
        f=1
    fi
    P=$((P + p)); F=$((F + f)); S=$((S + s))
    echo "== $name: $p passed, $f failed, $s skipped ($(( $(date +%s) - t0 )) s)"
}
stage layout sh -c 'sh src/amalgamate.sh --check; a=$?; ./build/layout; [ $a -eq 0 ] && [ $? -eq 0 ]'
stage suite ./build/test_all
stage compile-matrix sh tests/compile_matrix.sh
stage sanitizers env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./build/test_san
stage malformed-cli env LT_TRAIN_GPT=build/train_gpt_san ./build/test_all harden.cli
stage out-of-memory ./build/test_oom
stage kill-during-save sh tests/kill_save.sh
stage valgrind sh tests/valgrind_examples.sh
stage fuzz-short sh tests/fuzz/run.sh 10
stage mpi env MAKE="${MAKE:-make}" sh tests/test_mpi.sh
stage cuda-compile sh tests/cuda_compile.sh
stage cblas sh tests/cblas.sh
stage clang sh tests/clang.sh
stage arm64 sh tests/arm64.sh
stage no-march sh tests/no_march.sh
# the suite and its sanitizer build as other x86-64 CPUs run them, LT_CPU_OFF hiding from the
# run-time dispatch (@@CORE.cpu): amx (AVX512_BF16 without AMX), avx512_bf16,amx (AVX-512 without
# bf16), avx512f (AVX2 + FMA only, most laptops), avx2 (the portable C kernels); each only where
# /proc/cpuinfo names the feature it hides (else it is the suite's own run again)
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
for kind in amx:amx_tile avx512_bf16,amx:avx512_bf16 avx512f:avx512f avx2:avx2; do
    off=${kind%%:*}; need=${kind#*:}
    case " $flags " in
    *" $need "*)
        stage "cpu-kinds.$off" env LT_CPU_OFF="$off" ./build/test_all
        stage "cpu-kinds.$off.san" env LT_CPU_OFF="$off" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
            ./build/test_san ;;
    *) echo "skip cpu-kinds.$off: this CPU has no $need to hide"; S=$((S + 1)) ;;
    esac
done
stage tokenizer-cli sh tests/tokenizer_cli.sh
stage readme sh tests/readme.sh
stage precision-shakespeare env MAKE="${MAKE:-make}" sh tests/precision_shakespeare.sh
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]

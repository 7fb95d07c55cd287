#!/bin/sh
# tests/fuzz/run.sh SECONDS - the libFuzzer pass: builds build/fuzz/fuzz_{st,shard,ckpt,tok} (make) and
# runs each for SECONDS (make fuzz: 60, make fuzz-short: 10), starting from tests/fuzz/seeds and
# the malformed corpus; new inputs go to build/fuzz/corpus_*, a crash to build/fuzz/crash_*.
# Where clang cannot link libFuzzer it says so and, instead of fuzzing, replays the seeds and the
# corpus through a sanitizer build of the same targets (cc -DFZ_STANDALONE); exit 0 then.
# Exit status non-zero on a crash, a leak, a sanitizer report or an allocation past the bound.
set -u
cd "$(dirname "$0")/../.."
secs=${1:-10}
CC_FUZZ=${FUZZ_CC:-clang}
targets="st shard ckpt tok"
mkdir -p build/fuzz

probe=build/fuzz/probe.c
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' > $probe
if ! $CC_FUZZ -fsanitize=fuzzer,address,undefined $probe -o build/fuzz/probe > build/fuzz/probe.log 2>&1; then
    echo "fuzz: SKIPPED: $CC_FUZZ cannot link -fsanitize=fuzzer (install clang and its runtime, e.g."
    echo "      libclang-rt-14-dev); replaying seeds and tests/malformed under ASan+UBSan instead"
    make --no-print-directory $(for t in $targets; do printf 'build/fuzz/replay_%s ' $t; done) || exit 1
    for t in $targets; do
        ./build/fuzz/replay_$t tests/fuzz/seeds/$t tests/malformed || exit 1
    done
    exit 0
fi

make --no-print-directory FUZZ_CC=$CC_FUZZ $(for t in $targets; do printf 'build/fuzz/fuzz_%s ' $t; done) || exit 1
fail=0
for t in $targets; do
    mkdir -p build/fuzz/corpus_$t
    log=build/fuzz/$t.log
    case $t in st) max=4096 ;; shard) max=4096 ;; tok) max=8192 ;; *) max=12000 ;; esac
    ./build/fuzz/fuzz_$t -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=$max \
        -dict=tests/fuzz/st.dict -print_final_stats=1 -artifact_prefix=build/fuzz/crash_${t}_ \
        build/fuzz/corpus_$t tests/fuzz/seeds/$t tests/malformed > "$log" 2>&1
    rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
    bound=$(grep '^fuzz bound' "$log" | tail -1)
    if [ $rc -ne 0 ]; then
        echo "FAIL fuzz_$t: exit $rc after ${runs:-?} runs (log $log; inputs build/fuzz/crash_${t}_*):"
        grep -v '^"\|# Uses' "$log" | tail -30
        fail=1
    else
        echo "ok   fuzz_$t: ${runs:-?} runs in ${secs}s, $cov, no crash, leak or unbounded allocation"
        echo "     $bound"
    fi
done
exit $fail

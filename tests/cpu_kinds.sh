#!/bin/sh
# make test's cpu-kinds stage: the suite again, build/test_all and its sanitizer build
# build/test_san, as they run on the other kinds of x86-64 CPU that this one can stand for,
# LT_CPU_OFF hiding features from the run-time dispatch (@@CORE.cpu in ltrain.h):
#   amx               AVX512_BF16 without AMX (Intel: bf16 products on converted float32 panels)
#   avx512_bf16,amx   AVX-512 without bf16 instructions (Intel Xeons before Cooper Lake)
#   avx512f           AVX2 + FMA only (most desktop and laptop CPUs)
#   avx2              none of those: the portable C kernels
# Each runs only where this CPU has the feature it hides (else it would be the suite's own run
# again), and only on x86-64 Linux, where /proc/cpuinfo names the features.
cd "$(dirname "$0")/.."
mkdir -p build/tmp
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
P=0; F=0; S=0
# one run of the suite binary $2 with LT_CPU_OFF=$1: its FAIL lines, then its totals added up
suite() {
    LT_CPU_OFF=$1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$2" > build/tmp/cpu_kinds.out 2>&1
    rc=$?
    grep -E '^FAIL|ERROR: |runtime error' build/tmp/cpu_kinds.out
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' build/tmp/cpu_kinds.out | tail -n 1)
    echo "LT_CPU_OFF=$1 $2: ${line:-no totals (exit status $rc)}"
    if [ -z "$line" ]; then F=$((F + 1)); return; fi
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    P=$((P + p)); F=$((F + f)); S=$((S + ${s:-0}))
}
for kind in amx:amx_tile avx512_bf16,amx:avx512_bf16 avx512f:avx512f avx2:avx2; do
    off=${kind%%:*}; need=${kind#*:}
    if ! has "$need"; then
        echo "skip cpu-kinds.$off: this CPU has no $need to hide"
        S=$((S + 1))
        continue
    fi
    suite "$off" ./build/test_all
    suite "$off" ./build/test_san
done
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]

#!/bin/bash
# bench/ab.sh OLD.h NEW.h ROUNDS [bench_train_step flags]
#   Times two versions of ltrain.h against each other in one process, turn about (bench/ab_driver.c):
#   per round the median step ms of each, then the per-round ratios NEW/OLD and their median.
#   A ratio below 1 means NEW is faster.  Example, the working tree against the last commit:
#     git show HEAD:ltrain.h > /tmp/old.h && bench/ab.sh /tmp/old.h ltrain.h 8 --config char-small --steps 6
#   AB_MARCH sets the build's -march (default native); AB_MARCH=x86-64-v3 with LT_GEMM=avx2 runs
#   what an AVX2-only CPU runs (bench/avx2.md).  AB_B_FLAGS adds flags to NEW's runs only: the
#   same header twice with AB_B_FLAGS="--precision bf16" times bf16 (new) against fp32 (old).
set -e
if [ $# -lt 3 ]; then sed -n 2,6p "$0"; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cp "$1" "$d/a.h"; cp "$2" "$d/b.h"
rounds=$3; shift 3
for v in a b; do
    V=$(echo $v | tr ab AB)
    sed "s/#include \"ltrain.h\"/#include \"$v.h\"/" "$here/train_step.c" > "$d/t$v.c"
    cc -O2 -march=${AB_MARCH:-native} -fopenmp -D_POSIX_C_SOURCE=200809L -DLTRAIN_DEF=static -Dmain=main_$V -w \
       -c "$d/t$v.c" -o "$d/t$v.o"
done
cc -O2 -fopenmp "$here/ab_driver.c" "$d/ta.o" "$d/tb.o" -o "$d/ab" -lm
"$d/ab" "$rounds" "$@" | python3 -c '
import sys, json, statistics
r = {"A": [], "B": []}
for line in sys.stdin:
    k, _, j = line.partition(" ")
    if k in r and j.startswith("{"):
        r[k].append(statistics.median(json.loads(j)["ms"]))
for k, name in (("A", "old"), ("B", "new")):
    v = r[k]
    print("%s ms: %s | median %.2f, min %.2f" % (name, " ".join("%.1f" % x for x in v), statistics.median(v), min(v)))
q = [b / a for a, b in zip(r["A"], r["B"])]
print("new/old by round: %s | median %.3f" % (" ".join("%.3f" % x for x in q), statistics.median(q)))
'

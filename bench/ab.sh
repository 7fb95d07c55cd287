#!/bin/bash
# bench/ab.sh OLD.h NEW.h ROUNDS [bench_train_step flags]
#   Times two versions of ltrain.h against each other in one process, turn about (bench/ab_driver.c):
#   per round the median step ms of each, then the per-round ratios NEW/OLD, their median and its
#   95% confidence interval (from the order statistics, rounds taken as independent, no assumption
#   on the noise; an interval that holds 1 is no difference this run could resolve).
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
# the 95% confidence interval of the median ratio from the order statistics (as bench/ab_median.h median_ci):
# the k-th smallest and k-th largest, k the largest count with P(Binomial(n, 1/2) < k) <= 2.5%
n, k, tail, c = len(q), 0, 0.0, 1.0
for i in range(n // 2):
    tail += c / 2.0 ** n
    if tail > 0.025:
        break
    k = i + 1
    c = c * (n - i) / (i + 1)
s = sorted(q)
k = max(k, 1)
print("new/old by round: %s | median %.3f, 95%% interval [%.3f, %.3f], %d of %d rounds below 1"
      % (" ".join("%.3f" % x for x in q), statistics.median(q), s[k - 1], s[n - k], sum(x < 1 for x in q), n))
'

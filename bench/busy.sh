#!/bin/sh
# bench/busy.sh: ms per step of a short build/train_gpt run on an idle machine and with a competing
# CPU load (one busy loop per LOAD, default 1), for four ways of waiting:
#   spin      OMP_WAIT_POLICY=ACTIVE, every core (LTRAIN_BUSY=ignore)
#   passive   OMP_WAIT_POLICY=PASSIVE, every core
#   openmp    the OpenMP runtime's default wait, every core (the library's behaviour before it
#             counted busy cores)
#   default   the library's default: the cores other work leaves free (lt_ctx_create)
# Each run prints train_gpt's "ms per step after the first"; REPS runs each (default 3), the median.
#       sh bench/busy.sh [STEPS (40)]          results: paste into bench/busy.md
set -u
cd "$(dirname "$0")/.."
steps=${1:-40}
reps=${REPS:-3}
load=${LOAD:-1}
make -s build/train_gpt || exit 1
args="--data ltrain.h --layers 2 --heads 4 --channels 64 --seq 64 --batch 8 --steps $steps --lr 3e-3"

one() {   # one() MODE: ms per step of one run
    case $1 in
    spin) env OMP_WAIT_POLICY=ACTIVE LTRAIN_BUSY=ignore build/train_gpt $args ;;
    passive) env OMP_WAIT_POLICY=PASSIVE LTRAIN_BUSY=ignore build/train_gpt $args ;;
    openmp) env LTRAIN_BUSY=ignore build/train_gpt $args ;;
    default) build/train_gpt $args ;;
    esac 2>&1 | sed -n 's/.*| \([0-9.]*\) ms per step after the first.*/\1/p'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "?") }'; }
threads() { build/train_gpt $args --steps 1 2>&1 | sed -n 's/.*| \([0-9]*\) threads |.*/\1/p' | head -1; }

row() {   # row LABEL: one line of the table
    line="| $1 | $(cat /proc/loadavg 2>/dev/null | cut -d' ' -f1) | $(threads)"
    for m in spin passive openmp default; do
        v=$(i=0; while [ $i -lt "$reps" ]; do one $m; i=$((i + 1)); done | median)
        line="$line | $v"
    done
    echo "$line |"
}

echo "cores: $(nproc 2>/dev/null), $steps steps, median of $reps runs, ms per step"
echo "| machine | load avg (1 min) | default's threads | spin | passive | openmp | default |"
echo "|---|---|---|---|---|---|---|"
row "as found"
pids=""
i=0
while [ $i -lt "$load" ]; do
    sh -c 'while :; do :; done' &
    pids="$pids $!"
    i=$((i + 1))
done
sleep 2
row "+ $load busy loop(s)"
for p in $pids; do kill "$p"; done

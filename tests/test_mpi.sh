#!/bin/sh
# Data-parallel tests under MPI (make test runs this; without mpicc/mpirun it skips with a message).
#   1. build/test_mpi with 1, 2 and 3 ranks: reductions, sharding, training against one process
#      with the combined batch, weights in sync, resume (see tests/test_mpi.c).
#   2. build/train_gpt_mpi, GPT-2 and Llama (--arch llama): 2 ranks x --batch 2 log the same losses as build/train_gpt --batch 4
#      (1e-6 relative); a run stopped and resumed from its checkpoint ends as the straight run;
#      the plain build/train_gpt under mpirun refuses to run N independent copies.
# Ranks share this machine's cores (--oversubscribe, one OpenMP thread each).
set -u
cd "$(dirname "$0")/.."
if ! command -v mpicc > /dev/null 2>&1 || ! command -v mpirun > /dev/null 2>&1; then
    echo "skip mpi: mpicc/mpirun not found (install openmpi-bin libopenmpi-dev to run the data-parallel tests)"
    exit 0
fi
${MAKE:-make} --no-print-directory -s mpi build/train_gpt || { echo "FAIL mpi: make mpi"; exit 1; }
export OMP_NUM_THREADS=1
# Open MPI: running as root needs consent, more ranks than cores needs --oversubscribe
if mpirun --version 2>&1 | grep -q "Open MPI"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    RUN="mpirun --oversubscribe --bind-to none"
else
    RUN="mpirun"
fi
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

for n in 1 2 3; do
    if $RUN -np $n build/test_mpi > build/tmp/test_mpi_$n.log 2>&1; then
        ok "mpi/test_mpi-$n-ranks ($(tail -1 build/tmp/test_mpi_$n.log))"
    else
        bad "mpi/test_mpi-$n-ranks" "see build/tmp/test_mpi_$n.log"; grep -E "^FAIL|rror" build/tmp/test_mpi_$n.log | head -10
    fi
done

# the "loss" field of every step line of a --log file
losses() { sed -n 's/.*"loss": \([^,]*\),.*/\1/p' "$1"; }
# train_gpt_mpi end to end, for each architecture: $1 names it, $2 adds its flags
e2e() {
arch=$1
d=build/tmp/mpi_e2e_$arch
mkdir -p $d
rm -f $d/*
common="--data ltrain.h --layers 2 --heads 2 --channels 32 --seq 32 --steps 6 --warmup 2 --lr 3e-3 --accum 2 --shuffle --threads 1 $2"
if ./build/train_gpt $common --batch 4 --log $d/one.jsonl > $d/one.out 2>&1 &&
   $RUN -np 2 build/train_gpt_mpi $common --batch 2 --log $d/two.jsonl > $d/two.out 2>&1; then
    losses $d/one.jsonl > $d/one.loss
    losses $d/two.jsonl > $d/two.loss
    worst=$(paste $d/one.loss $d/two.loss | awk '{ e = ($1 - $2) / $1; if (e < 0) e = -e; if (e > w) w = e; n++ }
                                                END { if (n != 6) print "missing"; else printf "%.3g", w }')
    if [ "$worst" != missing ] && awk "BEGIN { exit !($worst <= 1e-6) }"; then
        ok "mpi/$arch/train_gpt-2x2-equals-1x4 (losses within $worst relative)"
    else
        bad "mpi/$arch/train_gpt-2x2-equals-1x4" "losses differ by $worst relative: $(tr '\n' ' ' < $d/one.loss) vs $(tr '\n' ' ' < $d/two.loss)"
    fi
    grep -q "world 2" $d/two.out && grep -q "allreduce_ms" $d/two.jsonl && ok "mpi/$arch/train_gpt-logs-world-and-allreduce" ||
        bad "mpi/$arch/train_gpt-logs-world-and-allreduce" "no \"world 2\" in the output or no allreduce_ms in the log"
else
    bad "mpi/$arch/train_gpt-2x2-equals-1x4" "a run failed: $(tail -3 $d/one.out $d/two.out)"
fi

# resume: stop after 3 steps with a checkpoint (rank 0 writes), resume with 2 ranks to step 6
if $RUN -np 2 build/train_gpt_mpi $common --batch 2 --stop-after 3 --save $d/ck.safetensors > $d/a.out 2>&1 &&
   $RUN -np 2 build/train_gpt_mpi $common --batch 2 --resume $d/ck.safetensors --log $d/b.jsonl > $d/b.out 2>&1; then
    losses $d/two.jsonl | tail -3 > $d/straight.loss
    losses $d/b.jsonl > $d/resumed.loss
    if cmp -s $d/straight.loss $d/resumed.loss && [ -s $d/resumed.loss ]; then
        ok "mpi/$arch/train_gpt-resume-bit-identical"
    else
        bad "mpi/$arch/train_gpt-resume-bit-identical" "steps 4-6: $(tr '\n' ' ' < $d/straight.loss) vs $(tr '\n' ' ' < $d/resumed.loss)"
    fi
else
    bad "mpi/$arch/train_gpt-resume-bit-identical" "a run failed: $(tail -3 $d/a.out $d/b.out)"
fi
}
e2e gpt2 ""
e2e llama "--arch llama --kv-heads 1 --hidden 96"

# the plain build started by mpirun: every copy would train alone, so each refuses
d=build/tmp/mpi_e2e_gpt2
common="--data ltrain.h --layers 2 --heads 2 --channels 32 --seq 32 --steps 6 --threads 1"
if $RUN -np 2 build/train_gpt $common --batch 2 > $d/plain.out 2>&1; then
    bad "mpi/plain-build-under-mpirun-refuses" "it ran"
elif grep -q "built without LTRAIN_MPI" $d/plain.out; then
    ok "mpi/plain-build-under-mpirun-refuses"
else
    bad "mpi/plain-build-under-mpirun-refuses" "$(head -3 $d/plain.out)"
fi

echo "mpi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

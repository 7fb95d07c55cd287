#!/bin/sh
# The examples under valgrind (memcheck, leaks included), built without OpenMP so that the
# thread runtime's own allocations do not muddy the report.  Skipped when valgrind is absent.
set -u
cd "$(dirname "$0")/.."
command -v valgrind > /dev/null || { echo "skip valgrind: not installed (apt-get install valgrind)"; exit 0; }
mkdir -p build/vg
pass=0; fail=0
VG="valgrind --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect -q"
check() { # name, command...
    name=$1; shift
    if "$@" > build/vg/out.txt 2>&1; then pass=$((pass + 1)); echo "ok   valgrind/$name"
    else fail=$((fail + 1)); echo "FAIL valgrind/$name: $*"; tail -20 build/vg/out.txt; fi
}
for ex in mlp seed_schedule seed_clip train_gpt sample_gpt; do
    cc -std=c99 -O1 -g -I. examples/$ex.c -o build/vg/$ex -lm || { fail=$((fail + 1)); echo "FAIL valgrind/build-$ex"; }
done
check mlp $VG ./build/vg/mlp
check seed_schedule $VG ./build/vg/seed_schedule
check seed_clip $VG ./build/vg/seed_clip --value
check train_gpt $VG ./build/vg/train_gpt --steps 3 --layers 1 --channels 32 --heads 2 --seq 16 --batch 2 \
    --accum 2 --save build/vg/ck.safetensors --sample 16
check train_gpt_resume $VG ./build/vg/train_gpt --steps 5 --layers 1 --channels 32 --heads 2 --seq 16 --batch 2 \
    --accum 2 --resume build/vg/ck.safetensors --compile on
check sample_gpt $VG ./build/vg/sample_gpt build/vg/ck.safetensors --n 16
echo "valgrind: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

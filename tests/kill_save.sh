#!/bin/sh
# tests/kill_save.sh [TRIALS] - crash-safe checkpoints.  build/train_gpt resumes from a checkpoint
# and saves it again after every step (--save-every 1, a tiny model: most of its time is spent
# saving); it is killed with SIGKILL at a random moment, then the path must hold a complete
# checkpoint, the old one or a newer one: train_gpt --resume loads all of it (weights, AdamW
# moments, data position, RNG) and trains a step from it, and its step never goes back.  TRIALS
# times (100), at most 60 s in all.  Stray path.tmpXXXXXXXX files are allowed (a kill between the write
# and the rename leaves one) and must not be what the path holds; they are counted and removed.
# Prints "ok"/"FAIL" lines; exit status non-zero on a failure.  Run from anywhere.
set -u
cd "$(dirname "$0")/.."
trials=${1:-100}
bin=${LT_TRAIN_GPT:-build/train_gpt}
dir=build/tmp/kill_save
ck=$dir/ckpt.safetensors
[ -x "$bin" ] || { echo "FAIL kill_save: $bin is missing (make $bin)"; exit 1; }
rm -rf "$dir"
mkdir -p "$dir"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%c", 97 + (i * 7 + int(i / 13)) % 26; printf "\n" }' > "$dir/data.txt"
base="--data $dir/data.txt --layers 1 --heads 2 --channels 32 --ctx 16 --batch 2 --seq 8 --threads 1 --steps 1000000"
common="$base --save-every 1 --save $ck"
# The step of the checkpoint at $ck, after resuming from it for one step (no save); fails if it
# does not load.
check() {
    # shellcheck disable=SC2086
    $bin $base --resume "$ck" --stop-after 1 > "$dir/check_out" 2> "$dir/check_err" &&
        sed -n 's/^resumed .* at step \([0-9]*\)$/\1/p' "$dir/check_out" | grep .
}
# shellcheck disable=SC2086
if ! $bin $common --stop-after 2 > /dev/null 2> "$dir/err"; then
    echo "FAIL kill_save.setup: $(cat "$dir/err")"
    exit 1
fi
prev=$(check) || { echo "FAIL kill_save.setup: the first checkpoint does not load: $(cat "$dir/check_err")"; exit 1; }
# kill moments in [0, 150) ms, from a fixed seed
awk -v n="$trials" 'BEGIN { srand(8); for (i = 0; i < n; i++) printf "%.3f\n", rand() * 0.15 }' > "$dir/delays"
start=$(date +%s)
done_=0
tmps=0
first=$prev
fail=0
while read -r delay; do
    # shellcheck disable=SC2086
    $bin $common --resume "$ck" > /dev/null 2> "$dir/err" &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    done_=$((done_ + 1))
    if ! step=$(check); then
        echo "FAIL kill_save.trial_$done_: killed after ${delay}s, $ck does not load: $(cat "$dir/check_err")"
        fail=1
        break
    fi
    if [ "$step" -lt "$prev" ]; then
        echo "FAIL kill_save.trial_$done_: the checkpoint went back from step $prev to $step"
        fail=1
        break
    fi
    prev=$step
    n=$(find "$dir" -name 'ckpt.safetensors.tmp*' | wc -l)
    tmps=$((tmps + n))
    find "$dir" -name 'ckpt.safetensors.tmp*' -exec rm -f {} +
    if [ $(($(date +%s) - start)) -ge 60 ]; then
        echo "note kill_save: stopped at 60 s after $done_ of $trials trials"
        break
    fi
done < "$dir/delays"
if [ $fail -eq 0 ]; then
    echo "ok   kill_save: $done_ SIGKILLs during save-every-step training: the checkpoint always loaded" \
         "(steps $first -> $prev, $tmps stray .tmp files) in $(($(date +%s) - start)) s"
fi
exit $fail

#!/bin/sh
# bench/data_memory.sh [OLD_HEADER OLD_TRAIN_GPT_C]: the peak memory (max RSS) of train_gpt on a
# 1 GiB text file, a few steps of the default model, under /usr/bin/time -v.
#   Writes the file to $TMPDIR (default /tmp) from copies of ltrain.h and deletes it at the end.
#   Runs: the file by name (mapped), the file through a pipe (--data <(cat FILE): read once into
#   memory), and the file by name with --shuffle (windows from all over the file).
#   With OLD_HEADER and OLD_TRAIN_GPT_C, the same runs with a train_gpt built from them first
#   (the "before" of bench/data_memory.md: git show REV:ltrain.h, git show REV:examples/train_gpt.c).
#   SIZE=bytes changes the file size (default 1073741824); STEPS (default 5).
#   Needs bash for the pipe run (process substitution); prints one line per run.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
size=${SIZE:-1073741824}
steps=${STEPS:-5}
tmp=${TMPDIR:-/tmp}
d=$(mktemp -d "$tmp/data_memory.XXXXXX")
file="$d/text_1g.txt"
trap 'rm -rf "$d"' EXIT INT TERM
if [ ! -x /usr/bin/time ]; then echo "data_memory: needs /usr/bin/time (GNU time, package time)"; exit 2; fi
while :; do cat "$root/ltrain.h" || break; done 2>/dev/null | head -c "$size" > "$file"
echo "file: $(wc -c < "$file") bytes of text ($file)"
grep -m1 "model name" /proc/cpuinfo 2>/dev/null | sed 's/^/cpu: /; s/\t//g'

build() { # name header source
    mkdir -p "$d/$1"
    cp "$2" "$d/$1/ltrain.h"
    cp "$3" "$d/$1/train_gpt.c"
    cp "$root/examples/flags.h" "$d/$1/" 2>/dev/null
    ${CC:-cc} -O2 -march=native -fopenmp -I"$d/$1" "$d/$1/train_gpt.c" -o "$d/$1/train_gpt" -lm || exit 1
}

measure() { # name binary how
    bin=$2
    case $3 in
        file)    cmd="$bin --data $file" ;;
        pipe)    cmd="$bin --data <(cat $file)" ;;
        shuffle) cmd="$bin --data $file --shuffle" ;;
    esac
    cmd="$cmd --steps $steps --threads 2 --eval-every 0"
    bash -c "/usr/bin/time -v $cmd" > "$d/out.txt" 2> "$d/err.txt"
    rc=$?
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$d/err.txt")
    toks=$(sed -n 's/.*| data: [^,]*, \([0-9]*\) tokens.*/\1/p' "$d/out.txt")
    printf '%-6s %-8s exit %d  max RSS %8d kB = %7.1f MiB  tokens %s\n' "$1" "$3" "$rc" "${rss:-0}" \
        "$(echo "${rss:-0} / 1024" | bc -l)" "${toks:-?}"
    [ "$rc" = 0 ] || grep -v "^\s" "$d/err.txt" | grep -v "Command" | head -2
}

if [ $# -ge 2 ]; then
    build old "$1" "$2"
    for how in file pipe shuffle; do measure before "$d/old/train_gpt" $how; done
fi
build new "$root/ltrain.h" "$root/examples/train_gpt.c"
for how in file pipe shuffle; do measure after "$d/new/train_gpt" $how; done
echo "command: train_gpt --data FILE|<(cat FILE) [--shuffle] --steps $steps --threads 2 --eval-every 0 (default model)"

#!/bin/sh
# tests/readme.sh: run every command of README.md, as a new user would, so the README never goes stale.
#   A command is a line of a ```sh code block (a line ending in \ continues on the next one);
#   blank lines and lines starting with # are skipped, and so is `make test` (it runs this script)
#   and `make test-readme`.  Templates that need your own files belong in ```text blocks.
#   Each command runs with sh in the repository root under a timeout (README_TIMEOUT seconds,
#   default 300); its output goes to build/tmp/readme.N.log, whose tail is shown when it fails.
#   Prints "ok   readme: CMD" or "FAIL readme: CMD (exit N)" per command, then
#   "readme: N passed, N failed".  Exit status: non-zero if a command failed.
#       sh tests/readme.sh [README.md]
set -u
cd "$(dirname "$0")/.."
readme=${1:-README.md}
limit=${README_TIMEOUT:-300}
mkdir -p build/tmp
cmds=build/tmp/readme.cmds
# One command per output line: the ```sh blocks' lines, continuations joined.
awk '
    /^```/ { if (inside) { inside = 0; next } if ($0 ~ /^```sh[ \t]*$/) inside = 1; next }
    !inside { next }
    {
        line = $0
        if (line ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", line); acc = acc line " "; next }
        line = acc line; acc = ""
        sub(/^[ \t]+/, "", line)
        if (line == "" || line ~ /^#/) next
        print line
    }
' "$readme" > "$cmds"
have_timeout=1
command -v timeout > /dev/null 2>&1 || have_timeout=0
P=0; F=0; n=0
while IFS= read -r cmd; do
    # the command without a trailing comment, for the recursion check
    bare=$(printf '%s\n' "$cmd" | sed -E 's/[ \t]+#.*$//; s/[ \t]+$//')
    case "$bare" in
        "make test"|"make test-readme") echo "skip readme: $cmd (runs this test)"; continue ;;
    esac
    n=$((n + 1))
    log=build/tmp/readme.$n.log
    if [ "$have_timeout" -eq 1 ]; then
        timeout "$limit" sh -c "$cmd" < /dev/null > "$log" 2>&1
    else
        sh -c "$cmd" < /dev/null > "$log" 2>&1
    fi
    rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "ok   readme: $cmd"
        P=$((P + 1))
    else
        [ "$rc" -eq 124 ] && echo "  (timed out after ${limit}s)"
        tail -n 15 "$log" | sed 's/^/  | /'
        echo "FAIL readme: $cmd (exit $rc)"
        F=$((F + 1))
    fi
done < "$cmds"
echo "readme: $P passed, $F failed"
[ "$F" -eq 0 ]

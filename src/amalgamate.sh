#!/bin/sh
# src/amalgamate.sh: ltrain.h is made from its parts, src/NN_name.h, concatenated in the order of
# their numbers (the order of the header's table of contents), each preceded by a line naming it.
#   sh src/amalgamate.sh            rewrite ltrain.h (what `make header` runs)
#   sh src/amalgamate.sh --check    exit 1 if ltrain.h differs from what the parts make (make test)
#   sh src/amalgamate.sh --stdout   print the header
# Edit the parts, never the generated ltrain.h.
set -eu
cd "$(dirname "$0")/.."
make_header() {
    echo "/* GENERATED FILE: do not edit.  src/amalgamate.sh writes it from the parts src/00_docs.h ..."
    echo "   src/99_end.h (one per section of the contents below); edit those, then run \`make header\`."
    echo "   \`make test\` fails while this file and its parts disagree. */"
    for f in src/[0-9][0-9]_*.h; do
        echo "/* ---- $f ---- */"
        cat "$f"
    done
}
case "${1:-}" in
    --stdout) make_header ;;
    --check)
        t=$(mktemp)
        make_header > "$t"
        if cmp -s "$t" ltrain.h; then
            rm -f "$t"
            echo "ok amalgamate: ltrain.h is what src/ makes"
        else
            echo "FAIL amalgamate: ltrain.h differs from what src/ makes (edit src/, then run make header):"
            diff "$t" ltrain.h | head -20
            rm -f "$t"
            exit 1
        fi ;;
    "")
        t=ltrain.h.tmp
        make_header > "$t"
        mv "$t" ltrain.h ;;
    *) sed -n 2,7p "$0"; exit 2 ;;
esac

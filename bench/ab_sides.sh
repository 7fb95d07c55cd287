#!/bin/bash
# bench/ab_sides.sh DIR SIDE.h MACRO NAME A.h B.h
#   The two sides of a turn-about program (bench/att_ab.sh, head_ab.sh, block_ab.sh): each header
#   compiled on its own into DIR/wA.o and DIR/wB.o with SIDE.h's MACRO instantiated as NAME_A and
#   NAME_B (LTRAIN_DEF static: the two versions' functions do not meet at link time).  Flags of
#   one side's compile only: AB_FLAGS_A, AB_FLAGS_B.
set -e
for v in A B; do
    if [ $v = A ]; then cp "$5" "$1/$v.h"; flags=${AB_FLAGS_A:-}; else cp "$6" "$1/$v.h"; flags=${AB_FLAGS_B:-}; fi
    printf '#define _POSIX_C_SOURCE 200809L\n#define LTRAIN_IMPLEMENTATION\n#include "%s.h"\n#include <stdio.h>\n#include <stdlib.h>\n#include "%s"\n%s(%s_%s)\n' \
        "$v" "$2" "$3" "$4" "$v" > "$1/w$v.c"
    cc -O2 -march=native -fopenmp -DLTRAIN_DEF=static $flags -w -c "$1/w$v.c" -o "$1/w$v.o"
done

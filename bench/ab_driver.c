/* ab_driver.c - two builds of bench/train_step.c, each on its own copy of ltrain.h (main renamed
   main_A / main_B, LTRAIN_DEF static so the copies do not clash), run turn about in one process:
   the fair way to compare two versions of the library on a machine whose speed drifts by 10%
   from one minute to the next.  bench/ab.sh builds and runs it:
       bench/ab.sh OLD.h NEW.h ROUNDS [bench_train_step flags]
   Usage: ab_driver ROUNDS [bench_train_step flags]; each line of output is "A " or "B " and the
   JSON line of that run.  AB_B_FLAGS (words split at spaces) are added to B's flags only, after
   the others: the same header twice with AB_B_FLAGS="--precision bf16" times bf16 against fp32
   turn about. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main_A(int argc, char **argv);
int main_B(int argc, char **argv);

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 0, r, bc;
    char **bv, *extra = getenv("AB_B_FLAGS") ? strdup(getenv("AB_B_FLAGS")) : NULL, *w;
    bv = (char **)malloc(((size_t)argc + 64) * sizeof(char *));
    if (!bv) return 1;
    if (rounds < 1) {
        fprintf(stderr, "usage: ab_driver ROUNDS [bench_train_step flags]\n");
        return 2;
    }
    argv[1] = argv[0];   /* the runs see: program name, then the flags */
    for (bc = 0; bc < argc - 1; bc++) bv[bc] = argv[1 + bc];
    for (w = extra ? strtok(extra, " ") : NULL; w && bc < argc + 62; w = strtok(NULL, " ")) bv[bc++] = w;
    bv[bc] = NULL;
    for (r = 0; r < rounds; r++) {
        printf("A ");
        fflush(stdout);
        if (main_A(argc - 1, argv + 1) != 0) return 1;
        fflush(stdout);
        printf("B ");
        fflush(stdout);
        if (main_B(bc, bv) != 0) return 1;
        fflush(stdout);
    }
    return 0;
}

/* bench/checkpoint.c - what saving and resuming a training checkpoint costs (make bench-checkpoint).

   Creates a GPT model with AdamW, saves a checkpoint (lt_checkpoint_save: weights, both moments),
   then loads it back (lt_checkpoint_load) --reps times, and prints for each: seconds, and the
   anonymous memory (RssAnon, sampled every 2 ms by a second thread) the load needed on top of the
   training state it fills.  File pages mapped into the process (RssFile) are printed apart: they
   are the system's page cache, which it can drop again, yet they count in the process's RSS (a
   reader that maps the file shows them; lt_st_open reads tensors with read(2) and maps nothing).

     build/bench_checkpoint [--model V,L,H,C (50304,12,12,768: GPT-2 124M)] [--reps N (3)]
                            [--file PATH (build/bench_ckpt.safetensors; removed at the end)]

   The first load after the save finds the file in the page cache; a load from disk after a
   reboot or `echo 3 > /proc/sys/vm/drop_caches` reads at the disk's speed instead. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime, nanosleep */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include <pthread.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A field of /proc/self/status in KiB ("RssAnon:"), or -1 where there is none (not Linux). */
static long status_kb(const char *key) {
    char line[256];
    size_t n = strlen(key);
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0) v = atol(line + n);
    fclose(f);
    return v;
}

static volatile int watching;
static long max_anon, max_file;
static void *watch(void *arg) {
    struct timespec pause = {0, 2000000};
    (void)arg;
    while (watching) {
        long a = status_kb("RssAnon:"), f = status_kb("RssFile:");
        if (a > max_anon) max_anon = a;
        if (f > max_file) max_file = f;
        nanosleep(&pause, NULL);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int V = 50304, L = 12, H = 12, C = 768, reps = 3, i;
    const char *file = "build/bench_ckpt.safetensors";
    lt_ctx *ctx;
    lt_gpt *g;
    lt_optim *opt;
    lt_gpt_config cfg;
    lt_train_state st;
    double t;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%d,%d,%d,%d", &V, &L, &H, &C) != 4) { fprintf(stderr, "--model V,L,H,C\n"); return 2; }
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc) file = argv[++i];
        else {
            fprintf(stderr, "usage: bench_checkpoint [--model V,L,H,C] [--reps N] [--file PATH]\n");
            return 2;
        }
    }
    ctx = lt_ctx_create(1);
    cfg = lt_gpt2_config(V, 64, L, H, C);
    g = lt_gpt_create(ctx, &cfg);
    opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    memset(&st, 0, sizeof st);
    if (!g || !opt) { fprintf(stderr, "setup: %s\n", lt_error(ctx)); return 1; }
    printf("model V,L,H,C %d,%d,%d,%d with AdamW, %d threads\n", V, L, H, C, lt_get_threads());
    t = now_s();
    if (lt_checkpoint_save(g, opt, &st, "bench", file) != LT_OK) { fprintf(stderr, "save: %s\n", lt_error(ctx)); return 1; }
    {
        FILE *f = fopen(file, "rb");
        long size = -1;
        if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
        if (f) fclose(f);
        printf("save: %.2f s, %.1f MB (%s)\n", now_s() - t, (double)size / 1048576.0, file);
    }
    for (i = 0; i < reps; i++) {
        pthread_t th;
        long anon0 = status_kb("RssAnon:");
        max_anon = anon0;
        max_file = 0;
        watching = 1;
        if (pthread_create(&th, NULL, watch, NULL) != 0) { fprintf(stderr, "pthread_create failed\n"); return 1; }
        t = now_s();
        if (lt_checkpoint_load(g, opt, &st, file) != LT_OK) { fprintf(stderr, "load: %s\n", lt_error(ctx)); return 1; }
        t = now_s() - t;
        watching = 0;
        pthread_join(th, NULL);
        printf("load %d: %.2f s; anonymous memory %.0f MB before, %.0f MB more at the peak; mapped file pages at "
               "the peak %.0f MB\n", i + 1, t, anon0 / 1024.0, (max_anon - anon0) / 1024.0, max_file / 1024.0);
    }
    remove(file);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return 0;
}

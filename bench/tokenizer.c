/* cc -O2 -march=native -fopenmp -I. bench/tokenizer.c -o build/bench_tokenizer -lm   (make bench-tokenizer)

   bench_tokenizer: ltrain.h's GPT-2 encoder on one text, the side of bench/tokenizer.py that
   measures this library (the script alternates it with tiktoken and Hugging Face tokenizers).
       build/bench_tokenizer DIR TEXT [--repeat R] [--threads N]
   DIR holds encoder.json + vocab.bpe; the text is TEXT repeated R times (default 1).  Prints one
   line of key=value pairs:
     load_ms     loading the vocabulary;  vocab_bytes  lt_tok_memory of the loaded tokenizer;
     rss_load_kb the resident set's growth across that first load (the tokenizer still loaded,
                 the files read and freed), before the text is read;
     tokens      ids from one thread (the count the script checks against tiktoken's);
     t1_s        one thread encoding the whole text, a freshly loaded tokenizer;
     tn_s        N threads (default: all), the text cut into 8N chunks after a "\n" that follows a
                 non-space and precedes a letter (such a cut never changes GPT-2's pre-tokens: a
                 run of newlines at a chunk's end would merge), one freshly loaded tokenizer per thread,
                 chunks handed out dynamically; tn_tokens  their total (equal to tokens). */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
/* The resident set now, in KiB (Linux /proc/self/statm; else the peak from getrusage, which a
   process started by fork inherits from its parent, so it can hide a growth). */
static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size, res = -1;
    struct rusage u;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &res) != 2) res = -1;
        fclose(f);
    }
    if (res >= 0) return res * (sysconf(_SC_PAGESIZE) / 1024);
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_maxrss : 0;
}

int main(int argc, char **argv) {
    char enc[600], bpe[600];
    void *raw = NULL;
    char *text;
    size_t n0 = 0, n, *cut;
    int repeat = 1, threads = 0, i, nchunks, nc;
    int64_t tokens, total = 0;
    int32_t *ids;
    double t, t1, tn, load_ms;
    long rss0;
    lt_ctx *ctx;
    lt_tokenizer *tk;
    if (argc < 3) { fprintf(stderr, "usage: bench_tokenizer DIR TEXT [--repeat R] [--threads N]\n"); return 1; }
    for (i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--repeat")) repeat = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    }
    if (repeat < 1) repeat = 1;
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_max_threads();
#else
    threads = 1;
#endif
    snprintf(enc, sizeof enc, "%s/encoder.json", argv[1]);
    snprintf(bpe, sizeof bpe, "%s/vocab.bpe", argv[1]);
    ctx = lt_ctx_create(1);
    rss0 = rss_kb();   /* the vocabulary first, before the text is in memory */
    t = now_s();
    tk = ctx ? lt_tok_load_gpt2(ctx, enc, bpe) : NULL;
    load_ms = (now_s() - t) * 1e3;
    if (!tk) { fprintf(stderr, "%s\n", ctx ? lt_error(ctx) : "out of memory"); return 1; }
    printf("load_ms=%.1f vocab_bytes=%zu rss_load_kb=%ld ", load_ms, lt_tok_memory(tk), rss_kb() - rss0);
    lt_tok_free(tk);
    if (lt_read_file(ctx, argv[2], &raw, &n0) != LT_OK) { fprintf(stderr, "%s\n", lt_error(ctx)); return 1; }
    n = n0 * (size_t)repeat;
    text = (char *)malloc(n + 1);
    ids = (int32_t *)malloc((n + 1) * sizeof *ids);
    nchunks = 8 * threads;
    cut = (size_t *)malloc(((size_t)nchunks + 1) * sizeof *cut);
    if (!text || !ids || !cut) { fprintf(stderr, "out of memory\n"); return 1; }
    for (i = 0; i < repeat; i++) memcpy(text + (size_t)i * n0, raw, n0);
    lt_free(raw);

    if (!(tk = lt_tok_load_gpt2(ctx, enc, bpe))) { fprintf(stderr, "%s\n", lt_error(ctx)); return 1; }

    t = now_s();
    tokens = lt_tok_encode(tk, text, n, 0, ids, (int64_t)n);
    t1 = now_s() - t;
    lt_tok_free(tk);
    if (tokens < 0) { fprintf(stderr, "%s\n", lt_error(ctx)); return 1; }

    /* the chunks: ends near k*n/nchunks, moved forward to a cut as in the top comment */
    cut[0] = 0;
    for (nc = 1, i = 1; i < nchunks; i++) {
        size_t p = n / (size_t)nchunks * (size_t)i;
        if (p < cut[nc - 1]) p = cut[nc - 1];
        while (p < n && !(p >= 2 && text[p - 1] == '\n' && !isspace((unsigned char)text[p - 2]) &&
                          isalpha((unsigned char)text[p]))) p++;
        if (p < n && p > cut[nc - 1]) cut[nc++] = p;
    }
    cut[nc] = n;
    tn = now_s();
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) reduction(+ : total)
#endif
    {
        lt_ctx *c = lt_ctx_create(1);
        lt_tokenizer *tt = c ? lt_tok_load_gpt2(c, enc, bpe) : NULL;
        int k;
#ifdef _OPENMP
#pragma omp barrier
#pragma omp single
        tn = now_s();   /* after every thread's load */
#pragma omp for schedule(dynamic, 1)
#endif
        for (k = 0; k < nc; k++)
            if (tt) total += lt_tok_encode(tt, text + cut[k], cut[k + 1] - cut[k], 0, ids + cut[k], (int64_t)(cut[k + 1] - cut[k]));
#ifdef _OPENMP
#pragma omp single
#endif
        tn = now_s() - tn;   /* after the loop's barrier: the slowest thread's end */
        lt_tok_free(tt);
        lt_ctx_destroy(c);
    }
    printf("bytes=%zu tokens=%lld t1_s=%.4f threads=%d chunks=%d tn_s=%.4f tn_tokens=%lld\n", n, (long long)tokens, t1,
           threads, nc, tn, (long long)total);
    free(text);
    free(ids);
    free(cut);
    lt_ctx_destroy(ctx);
    return 0;
}

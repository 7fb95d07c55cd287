/* cc -O2 -fopenmp -I. examples/tokenize.c -o build/tokenize -lm

   tokenize: text to an llm.c token shard (256 int32 header [20240520, 1, count, 0...], then count
   uint16 tokens), which train_gpt --data reads.
       build/tokenize --in TEXT --out SHARD.bin --tokenizer gpt2|FILE.json [--tokenizer-dir DIR]
       build/tokenize --in TEXT --out SHARD.bin --train-vocab N --save-tokenizer FILE.json
   --train-vocab N learns a byte-level BPE vocabulary of N tokens from the text itself (as Hugging
   Face's BpeTrainer; "<|endoftext|>" is id 0), saves it as a tokenizer.json (--save-tokenizer;
   --save-gpt2 DIR also writes DIR/encoder.json and DIR/vocab.bpe; --pattern llama3|qwen2 learns on
   Llama-3's or Qwen2's pre-tokens instead of GPT-2's), then tokenizes with it.
   --eot puts the end-of-text token before the text (as llm.c's shards start each document).
   `build/tokenize --help` lists the flags. */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "flags.h"
#include "tokenizer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *in, *out, *tokenizer, *dir, *save, *save_gpt2, *pattern;
    int train_vocab, eot, quiet;
} args_t;

static void usage(void) {
    printf("usage: tokenize --in TEXT --out SHARD.bin (--tokenizer gpt2|FILE.json | --train-vocab N --save-tokenizer FILE.json)\n"
           "  --tokenizer gpt2|FILE.json  GPT-2's vocabulary (from --tokenizer-dir, default $LT_SHARED_DIR/gpt2-bpe or\n"
           "                              ../shared/data/gpt2-bpe) or a Hugging Face tokenizer.json\n"
           "  --train-vocab N             learn a byte-level BPE vocabulary of N tokens (>= 257) from --in\n"
           "  --save-tokenizer FILE.json  where --train-vocab saves it (needed with --train-vocab)\n"
           "  --pattern gpt2|llama3|qwen2 the pre-tokenizer --train-vocab learns with (gpt2)\n"
           "  --save-gpt2 DIR             also save it as DIR/encoder.json + DIR/vocab.bpe (gpt2 pattern only)\n"
           "  --eot                       put the end-of-text token (<|endoftext|>) before the text\n"
           "  --quiet                     print nothing but errors\n");
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int parse(args_t *a, int argc, char **argv) {
    int i;
    unsigned long long u;
    memset(a, 0, sizeof *a);
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **s = !strcmp(f, "--in") ? &a->in : !strcmp(f, "--out") ? &a->out
                       : !strcmp(f, "--tokenizer") ? &a->tokenizer : !strcmp(f, "--tokenizer-dir") ? &a->dir
                       : !strcmp(f, "--save-tokenizer") ? &a->save : !strcmp(f, "--save-gpt2") ? &a->save_gpt2
                       : !strcmp(f, "--pattern") ? &a->pattern : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) { usage(); exit(0); }
        if (!strcmp(f, "--eot")) { a->eot = 1; continue; }
        if (!strcmp(f, "--quiet")) { a->quiet = 1; continue; }
        if (s) {
            if (!v) { fprintf(stderr, "tokenize: %s needs a value\n", f); return 0; }
            *s = v; i++; continue;
        }
        if (!strcmp(f, "--train-vocab")) {
            if (!flag_whole("tokenize", f, v, 257, 65536, &u)) return 0;
            a->train_vocab = (int)u; i++; continue;
        }
        fprintf(stderr, "tokenize: unknown flag %s (see --help)\n", f);
        return 0;
    }
    if (!a->in || !a->out) return fprintf(stderr, "tokenize: --in and --out are needed (see --help)\n"), 0;
    if (!a->tokenizer == !a->train_vocab)
        return fprintf(stderr, "tokenize: give one of --tokenizer and --train-vocab (see --help)\n"), 0;
    if (a->pattern && (!a->train_vocab || (strcmp(a->pattern, "gpt2") && strcmp(a->pattern, "llama3") &&
                                           strcmp(a->pattern, "qwen2"))))
        return fprintf(stderr, "tokenize: --pattern is gpt2, llama3 or qwen2, with --train-vocab\n"), 0;
    if (a->train_vocab && !a->save)
        return fprintf(stderr, "tokenize: --train-vocab needs --save-tokenizer FILE.json (to decode and train with)\n"), 0;
    return 1;
}

/* --train-vocab: learn, save, and load back what was saved (so the shard is what the file makes). */
static lt_tokenizer *train_vocab(lt_ctx *ctx, const args_t *a, const char *text, size_t n) {
    lt_bpe_opts o = lt_bpe_defaults();
    lt_bpe *v;
    double t0 = now_s();
    char enc[600], bpe[600];
    o.vocab_size = a->train_vocab;
    if (a->pattern) o.pattern = !strcmp(a->pattern, "llama3") ? LT_PRETOK_CL100K
                              : !strcmp(a->pattern, "qwen2") ? LT_PRETOK_QWEN2 : LT_PRETOK_GPT2;
    if (!(v = lt_bpe_train(ctx, text, n, &o))) { fprintf(stderr, "tokenize: %s\n", lt_error(ctx)); return NULL; }
    if (!a->quiet)
        printf("trained %d tokens (%d merges) on %zu bytes in %.2f s\n", lt_bpe_vocab_size(v), lt_bpe_n_merges(v), n,
               now_s() - t0);
    if (lt_bpe_save_json(ctx, v, a->save) == LT_OK && a->save_gpt2) {
        snprintf(enc, sizeof enc, "%s/encoder.json", a->save_gpt2);
        snprintf(bpe, sizeof bpe, "%s/vocab.bpe", a->save_gpt2);
        lt_bpe_save_gpt2(ctx, v, enc, bpe);
    }
    lt_bpe_free(v);
    if (lt_failed(ctx)) { fprintf(stderr, "tokenize: %s\n", lt_error(ctx)); return NULL; }
    if (!a->quiet) printf("saved %s%s%s\n", a->save, a->save_gpt2 ? " and " : "", a->save_gpt2 ? a->save_gpt2 : "");
    return tok_open(ctx, "tokenize", a->save, NULL);
}

/* The shard: header, then the ids as uint16 little-endian. */
static int write_shard(const char *path, const int32_t *ids, int64_t n) {
    FILE *f = fopen(path, "wb");
    unsigned char h[1024], b[2];
    int64_t i;
    int ok;
    if (!f) { fprintf(stderr, "tokenize: %s: cannot create\n", path); return 0; }
    memset(h, 0, sizeof h);
    for (i = 0; i < 4; i++) {   /* int32 little-endian: magic, version, count */
        h[i] = (unsigned char)(20240520u >> (8 * i));
        h[4 + i] = (unsigned char)(1u >> (8 * i));
        h[8 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    }
    ok = fwrite(h, 1, sizeof h, f) == sizeof h;
    for (i = 0; ok && i < n; i++) {
        b[0] = (unsigned char)ids[i];
        b[1] = (unsigned char)(ids[i] >> 8);
        ok = fwrite(b, 1, 2, f) == 2;
    }
    if (fclose(f) != 0 || !ok) { fprintf(stderr, "tokenize: %s: write failed\n", path); return 0; }
    return 1;
}

int main(int argc, char **argv) {
    args_t a;
    lt_ctx *ctx;
    lt_tokenizer *tk = NULL;
    void *text = NULL;
    size_t n = 0;
    int32_t *ids = NULL, eot = -1;
    int64_t m = 0;
    int rc = 1;
    double t0;
    (void)flag_real;   /* flags.h's parser of reals: no such flag here */
    if (!parse(&a, argc, argv)) return 1;
    if (!(ctx = lt_ctx_create(1))) return fprintf(stderr, "tokenize: out of memory\n"), 1;
    if (lt_read_file(ctx, a.in, &text, &n) != LT_OK) { fprintf(stderr, "tokenize: %s\n", lt_error(ctx)); goto out; }
    if (!(tk = a.train_vocab ? train_vocab(ctx, &a, (const char *)text, n) : tok_open(ctx, "tokenize", a.tokenizer, a.dir)))
        goto out;
    if (lt_tok_vocab_size(tk) > 65536) {
        fprintf(stderr, "tokenize: the tokenizer has %ld tokens; a shard holds uint16 ids (at most 65536)\n",
                (long)lt_tok_vocab_size(tk));
        goto out;
    }
    if (a.eot && (eot = lt_tok_special(tk, "<|endoftext|>")) < 0) {
        fprintf(stderr, "tokenize: --eot: the tokenizer has no <|endoftext|> token\n");
        goto out;
    }
    t0 = now_s();
    if (!(ids = tok_encode_all(tk, ctx, "tokenize", (const char *)text, n, &m))) goto out;
    if (m + (eot >= 0) > INT32_MAX) { fprintf(stderr, "tokenize: %lld tokens: a shard holds at most 2^31-1\n", (long long)m); goto out; }
    if (eot >= 0) { memmove(ids + 1, ids, (size_t)m * sizeof *ids); ids[0] = eot; m++; }
    if (!write_shard(a.out, ids, m)) goto out;
    if (!a.quiet)
        printf("%s: %zu bytes -> %lld tokens (%.2f bytes per token, vocab %ld) in %.2f s -> %s\n", a.in, n, (long long)m,
               m ? (double)n / (double)m : 0.0, (long)lt_tok_vocab_size(tk), now_s() - t0, a.out);
    rc = 0;
out:
    free(ids);
    lt_tok_free(tk);
    lt_free(text);
    lt_ctx_destroy(ctx);
    return rc;
}

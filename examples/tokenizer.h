/* tokenizer.h: the example programs' --tokenizer flag (tokenize, train_gpt, sample_gpt,
   lesson_sequences).  --tokenizer gpt2 loads GPT-2's encoder.json + vocab.bpe from
   --tokenizer-dir DIR (default $LT_SHARED_DIR/gpt2-bpe when LT_SHARED_DIR is set, else
   ../shared/data/gpt2-bpe); --tokenizer FILE.json loads a Hugging Face tokenizer.json (one that
   tokenize --save-tokenizer wrote, for one).  A tokenizer's identity, "vocab V hash H" (H: FNV-1a
   64 over every token's length and bytes, in id order), goes into checkpoints' note so that
   sample_gpt can refuse a checkpoint trained with another vocabulary. */
#ifndef EXAMPLES_TOKENIZER_H
#define EXAMPLES_TOKENIZER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define TOK_UNUSED __attribute__((unused))   /* not every program uses every helper */
#else
#define TOK_UNUSED
#endif

/* The directory of GPT-2's two files: dir if given, else the default above (into buf). */
static TOK_UNUSED const char *tok_gpt2_dir(const char *dir, char *buf, size_t cap) {
    const char *env = getenv("LT_SHARED_DIR");
    if (dir) return dir;
    snprintf(buf, cap, "%s/gpt2-bpe", env && env[0] ? env : "../shared/data");
    return buf;
}

/* Loads --tokenizer spec (gpt2 or a tokenizer.json); NULL after printing why (prog: the program). */
static TOK_UNUSED lt_tokenizer *tok_open(lt_ctx *ctx, const char *prog, const char *spec, const char *dir) {
    lt_tokenizer *tk;
    char d[512], enc[600], bpe[600];
    FILE *f;
    if (!strcmp(spec, "gpt2")) {
        dir = tok_gpt2_dir(dir, d, sizeof d);
        snprintf(enc, sizeof enc, "%s/encoder.json", dir);
        snprintf(bpe, sizeof bpe, "%s/vocab.bpe", dir);
        if (!(f = fopen(enc, "rb"))) {
            fprintf(stderr, "%s: --tokenizer gpt2 needs GPT-2's encoder.json and vocab.bpe in %s, but %s cannot be "
                    "opened (hint: --tokenizer-dir DIR, or LT_SHARED_DIR=DIR with DIR/gpt2-bpe)\n", prog, dir, enc);
            return NULL;
        }
        fclose(f);
        tk = lt_tok_load_gpt2(ctx, enc, bpe);
    } else {
        tk = lt_tok_load_json(ctx, spec);
    }
    if (!tk) fprintf(stderr, "%s: --tokenizer %s: %s\n", prog, spec, lt_error(ctx));
    return tk;
}

/* "vocab V hash H" (see the top comment) into buf. */
static TOK_UNUSED void tok_identity(const lt_tokenizer *tk, char *buf, size_t cap) {
    uint64_t h = 0xcbf29ce484222325ull;
    int32_t id, V = lt_tok_vocab_size(tk);
    for (id = 0; id < V; id++) {
        size_t n = 0, i;
        const char *s = lt_tok_token(tk, id, &n);
        unsigned char len4[4];
        len4[0] = (unsigned char)n; len4[1] = (unsigned char)(n >> 8);
        len4[2] = (unsigned char)(n >> 16); len4[3] = (unsigned char)(s ? n >> 24 : 0xff);
        for (i = 0; i < 4; i++) h = (h ^ len4[i]) * 0x100000001b3ull;
        for (i = 0; s && i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    }
    snprintf(buf, cap, "vocab %ld hash %016llx", (long)V, (unsigned long long)h);
}

/* The whole of text encoded (special-token strings stay text); malloc'd with room for one id
   more, *n ids; NULL after printing why. */
static TOK_UNUSED int32_t *tok_encode_all(lt_tokenizer *tk, lt_ctx *ctx, const char *prog, const char *text, size_t len,
                               int64_t *n) {
    int32_t *ids = (int32_t *)malloc((len + 1) * sizeof(int32_t));
    *n = 0;
    if (!ids) { fprintf(stderr, "%s: out of memory for %zu tokens\n", prog, len); return NULL; }
    if ((*n = lt_tok_encode(tk, text, len, 0, ids, (int64_t)len)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, lt_error(ctx));
        free(ids);
        return NULL;
    }
    if (*n > (int64_t)len) {   /* an NFC normalizer made the text longer: encode again with room */
        int32_t *more = (int32_t *)realloc(ids, ((size_t)*n + 1) * sizeof(int32_t));
        if (!more) { fprintf(stderr, "%s: out of memory for %lld tokens\n", prog, (long long)*n); free(ids); return NULL; }
        ids = more;
        *n = lt_tok_encode(tk, text, len, 0, ids, *n);
    }
    return ids;
}

/* Prints ids as text (the bytes the tokenizer decodes them to). */
static TOK_UNUSED void tok_print(const lt_tokenizer *tk, const int32_t *ids, int64_t n, FILE *out) {
    int64_t size = lt_tok_decode(tk, ids, n, NULL, 0);
    char *s = size > 0 ? (char *)malloc((size_t)size) : NULL;
    if (s && lt_tok_decode(tk, ids, n, s, (size_t)size) == size) fwrite(s, 1, (size_t)size, out);
    else if (size != 0) fprintf(out, "(ids that the tokenizer cannot decode)");
    free(s);
}
#endif

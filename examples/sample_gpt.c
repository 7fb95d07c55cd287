/* cc -O2 -fopenmp -I. examples/sample_gpt.c -o build/sample_gpt -lm

   sample_gpt: text from a checkpoint (GPT-2 or Llama-style; a safetensors file or a Hugging Face
   model directory).
       build/sample_gpt build/model.safetensors [--n 300 (at most 1000000)] [--temperature 0.8] [--top-k 0]
                        [--prompt TEXT] [--seed 1337] [--heads H] [--tokenizer gpt2|FILE.json [--tokenizer-dir DIR]]
   For byte-level models (vocab 256) the tokens are printed as text; with --tokenizer the prompt is
   encoded and the sample decoded by it (refused when the checkpoint records another tokenizer:
   train_gpt --tokenizer writes "tokenizer: vocab V hash H" into its note); otherwise token ids. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "flags.h"
#include "tokenizer.h"

#include <limits.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

/* The tokenizer the checkpoint was trained with ("vocab V hash H" from its note) into buf; 0 if none. */
static int checkpoint_tokenizer(lt_ctx *ctx, const char *path, char *buf, size_t cap) {
    char file[4200];
    struct stat sb;
    size_t n = strlen(path), k = 0;
    lt_st *st;
    const char *note, *t;
    if (n > 0 && n + 20 < sizeof file && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {   /* a model directory */
        snprintf(file, sizeof file, "%s%smodel.safetensors", path, path[n - 1] == '/' ? "" : "/");
        path = file;
    }
    st = lt_st_open(ctx, path);
    note = st ? lt_st_meta(st, "note") : NULL;
    t = note ? strstr(note, "\ntokenizer: ") : NULL;
    if (t) for (t += 12; t[k] && t[k] != '\n' && k + 1 < cap; k++) buf[k] = t[k];
    buf[k] = 0;
    lt_st_close(st);
    return t != NULL;
}

/* --tokenizer: loaded and checked against the checkpoint's record and vocab; NULL after printing why. */
static lt_tokenizer *open_checked(lt_ctx *ctx, const char *path, const lt_gpt *g, const char *spec, const char *dir) {
    char want[96], have[96];
    int recorded = checkpoint_tokenizer(ctx, path, want, sizeof want);
    lt_tokenizer *tk = tok_open(ctx, "sample_gpt", spec, dir);
    if (!tk) return NULL;
    tok_identity(tk, have, sizeof have);
    if (recorded && strcmp(want, have)) {
        fprintf(stderr, "sample_gpt: %s was trained with the tokenizer \"%s\", but --tokenizer %s is \"%s\"\n", path,
                want, spec, have);
        lt_tok_free(tk);
        return NULL;
    }
    if (lt_tok_vocab_size(tk) > lt_gpt_cfg(g)->vocab || lt_gpt_cfg(g)->vocab <= 256) {
        fprintf(stderr, "sample_gpt: %s has a vocab of %d; --tokenizer %s has %ld tokens%s\n", path, lt_gpt_cfg(g)->vocab,
                spec, (long)lt_tok_vocab_size(tk), lt_gpt_cfg(g)->vocab <= 256 ? " (a byte-level model needs none)" : "");
        lt_tok_free(tk);
        return NULL;
    }
    if (!recorded)
        fprintf(stderr, "sample_gpt: note: %s records no tokenizer (a shard-trained model?); decoding with %s\n", path, spec);
    return tk;
}

int main(int argc, char **argv) {
    const char *path = NULL, *prompt = "\n", *tokspec = NULL, *tokdir = NULL;
    int n = 300, top_k = 0, heads = 0, i, np, k, len, rc = 1;
    double temperature = 0.8;
    unsigned long long seed = 1337, u;
    lt_ctx *ctx;
    lt_gpt *g;
    lt_tokenizer *tk = NULL;
    char rec[96];
    lt_rng rng;
    int32_t *buf;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            printf("usage: sample_gpt CHECKPOINT [--n 300] [--temperature 0.8] [--top-k 0] [--prompt \"\\n\"] "
                   "[--seed 1337] [--heads H (if neither the file nor a config.json beside it says)]\n"
                   "       [--tokenizer gpt2|FILE.json (encode the prompt, decode the sample)] [--tokenizer-dir DIR "
                   "($LT_SHARED_DIR/gpt2-bpe or ../shared/data/gpt2-bpe)]\n");
            return 0;
        }
        if (f[0] != '-') { path = f; continue; }
        if (!v) { fprintf(stderr, "sample_gpt: %s needs a value\n", f); return 1; }
        i++;
        if (!strcmp(f, "--n")) { if (!flag_whole("sample_gpt", f, v, 0, 1000000, &u)) return 1; n = (int)u; }
        else if (!strcmp(f, "--temperature")) { if (!flag_real("sample_gpt", f, v, 0, &temperature)) return 1; }
        else if (!strcmp(f, "--top-k")) { if (!flag_whole("sample_gpt", f, v, 0, INT_MAX, &u)) return 1; top_k = (int)u; }
        else if (!strcmp(f, "--prompt")) prompt = v;
        else if (!strcmp(f, "--tokenizer")) tokspec = v;
        else if (!strcmp(f, "--tokenizer-dir")) tokdir = v;
        else if (!strcmp(f, "--seed")) { if (!flag_whole("sample_gpt", f, v, 0, ULLONG_MAX, &seed)) return 1; }
        else if (!strcmp(f, "--heads")) { if (!flag_whole("sample_gpt", f, v, 0, INT_MAX, &u)) return 1; heads = (int)u; }
        else { fprintf(stderr, "sample_gpt: unknown flag %s (see --help)\n", f); return 1; }
    }
    if (!path) { fprintf(stderr, "sample_gpt: give a checkpoint (see --help)\n"); return 1; }
    if (n < 0 || temperature < 0 || top_k < 0) { fprintf(stderr, "sample_gpt: --n, --temperature, --top-k must be >= 0\n"); return 1; }
    ctx = lt_ctx_create(seed);
    g = lt_gpt_load(ctx, path, heads);
    if (!g) { fprintf(stderr, "sample_gpt: %s\n", lt_error(ctx)); lt_ctx_destroy(ctx); return 1; }
    if (tokspec && !(tk = open_checked(ctx, path, g, tokspec, tokdir))) { buf = NULL; goto out; }
    if (!tk && checkpoint_tokenizer(ctx, path, rec, sizeof rec))
        fprintf(stderr, "sample_gpt: %s was trained with a tokenizer (%s): give --tokenizer to see text\n", path, rec);
    np = (int)strlen(prompt);
    buf = (int32_t *)malloc((3 * (size_t)np + (size_t)n + 1) * sizeof(int32_t));   /* 3: an NFC normalizer may grow it */
    if (!buf) { fprintf(stderr, "sample_gpt: out of memory\n"); goto out; }
    if (tk && np > 0 && (np = (int)lt_tok_encode(tk, prompt, (size_t)np, 0, buf, 3 * (int64_t)np)) < 0) {
        fprintf(stderr, "sample_gpt: --prompt: %s\n", lt_error(ctx));
        goto out;
    }
    if (np == 0 || lt_gpt_cfg(g)->vocab < 256) { buf[0] = 0; np = 1; }
    else if (!tk) for (k = 0; k < np; k++) buf[k] = (unsigned char)prompt[k];
    lt_rng_seed(&rng, seed);
    len = lt_gpt_generate(g, buf, np, n, (float)temperature, top_k, &rng, buf);
    if (lt_failed(ctx)) { fprintf(stderr, "sample_gpt: %s\n", lt_error(ctx)); goto out; }
    if (tk) tok_print(tk, buf, len, stdout);
    for (k = 0; k < len && !tk; k++) {
        if (lt_gpt_cfg(g)->vocab <= 256) putchar((buf[k] >= 32 && buf[k] < 127) || buf[k] == 10 ? buf[k] : '?');
        else printf("%d ", buf[k]);
    }
    putchar('\n');
    rc = 0;
out:
    free(buf);
    lt_tok_free(tk);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return rc;
}

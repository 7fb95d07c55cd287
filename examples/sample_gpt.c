/* cc -O2 -fopenmp -I. examples/sample_gpt.c -o build/sample_gpt -lm

   sample_gpt: text from a checkpoint (GPT-2 or Llama-style; a safetensors file or a Hugging Face
   model directory).
       build/sample_gpt build/model.safetensors [--n 300 (at most 1000000)] [--temperature 0.8] [--top-k 0]
                        [--prompt TEXT] [--seed 1337] [--heads H]
   For byte-level models (vocab 256) the tokens are printed as text, otherwise as token ids. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "flags.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *path = NULL, *prompt = "\n";
    int n = 300, top_k = 0, heads = 0, i, np, k, len, rc = 1;
    double temperature = 0.8;
    unsigned long long seed = 1337, u;
    lt_ctx *ctx;
    lt_gpt *g;
    lt_rng rng;
    int32_t *buf;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            printf("usage: sample_gpt CHECKPOINT [--n 300] [--temperature 0.8] [--top-k 0] [--prompt \"\\n\"] "
                   "[--seed 1337] [--heads H (if neither the file nor a config.json beside it says)]\n");
            return 0;
        }
        if (f[0] != '-') { path = f; continue; }
        if (!v) { fprintf(stderr, "sample_gpt: %s needs a value\n", f); return 1; }
        i++;
        if (!strcmp(f, "--n")) { if (!flag_whole("sample_gpt", f, v, 0, 1000000, &u)) return 1; n = (int)u; }
        else if (!strcmp(f, "--temperature")) { if (!flag_real("sample_gpt", f, v, 0, &temperature)) return 1; }
        else if (!strcmp(f, "--top-k")) { if (!flag_whole("sample_gpt", f, v, 0, INT_MAX, &u)) return 1; top_k = (int)u; }
        else if (!strcmp(f, "--prompt")) prompt = v;
        else if (!strcmp(f, "--seed")) { if (!flag_whole("sample_gpt", f, v, 0, ULLONG_MAX, &seed)) return 1; }
        else if (!strcmp(f, "--heads")) { if (!flag_whole("sample_gpt", f, v, 0, INT_MAX, &u)) return 1; heads = (int)u; }
        else { fprintf(stderr, "sample_gpt: unknown flag %s (see --help)\n", f); return 1; }
    }
    if (!path) { fprintf(stderr, "sample_gpt: give a checkpoint (see --help)\n"); return 1; }
    if (n < 0 || temperature < 0 || top_k < 0) { fprintf(stderr, "sample_gpt: --n, --temperature, --top-k must be >= 0\n"); return 1; }
    ctx = lt_ctx_create(seed);
    g = lt_gpt_load(ctx, path, heads);
    if (!g) { fprintf(stderr, "sample_gpt: %s\n", lt_error(ctx)); lt_ctx_destroy(ctx); return 1; }
    np = (int)strlen(prompt);
    buf = (int32_t *)malloc(((size_t)np + (size_t)n + 1) * sizeof(int32_t));
    if (!buf) { fprintf(stderr, "sample_gpt: out of memory\n"); goto out; }
    if (np == 0 || lt_gpt_cfg(g)->vocab < 256) { buf[0] = 0; np = 1; }
    else for (k = 0; k < np; k++) buf[k] = (unsigned char)prompt[k];
    lt_rng_seed(&rng, seed);
    len = lt_gpt_generate(g, buf, np, n, (float)temperature, top_k, &rng, buf);
    if (lt_failed(ctx)) { fprintf(stderr, "sample_gpt: %s\n", lt_error(ctx)); goto out; }
    for (k = 0; k < len; k++) {
        if (lt_gpt_cfg(g)->vocab <= 256) putchar((buf[k] >= 32 && buf[k] < 127) || buf[k] == 10 ? buf[k] : '?');
        else printf("%d ", buf[k]);
    }
    putchar('\n');
    rc = 0;
out:
    free(buf);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return rc;
}

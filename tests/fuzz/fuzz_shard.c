/* fuzz_shard.c - libFuzzer target: the llm.c token-shard reader (lt_shard_parse), without and with
   a vocab check; accepted tokens must lie in [0, vocab).  Build and run: make fuzz. */
#include "ltrain.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    lt_ctx *ctx = lt_ctx_create(1);
    int v;
    if (!ctx) return 0;
    fz_begin(size);
    for (v = 0; v < 2; v++) {
        int vocab = v ? 50257 : 0;
        int32_t *tok = NULL;
        int64_t n = -1, i;
        lt_status s = lt_shard_parse(ctx, data, size, "fuzz", vocab, &tok, &n);
        if (s != LT_OK && (tok || n != 0 || !lt_failed(ctx))) abort();
        for (i = 0; s == LT_OK && i < n; i++)
            if (tok[i] < 0 || (vocab && tok[i] >= vocab) || tok[i] > 65535) abort();
        lt_free(tok);
        lt_clear_error(ctx);
    }
    fz_end();
    lt_ctx_destroy(ctx);
    return 0;
}

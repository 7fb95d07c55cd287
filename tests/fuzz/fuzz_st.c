/* fuzz_st.c - libFuzzer target: the safetensors reader (lt_st_parse) on arbitrary bytes, and on
   success every accessor of every tensor.  Build and run: make fuzz (tests/fuzz/run.sh). */
#include "ltrain.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_st *st;
    int i;
    if (!ctx) return 0;
    fz_begin(size);
    st = lt_st_parse(ctx, data, size, "fuzz");
    if (!st && !lt_failed(ctx)) abort();   /* a refusal always says why */
    for (i = 0; st && i < lt_st_count(st); i++) {
        int64_t shape[8], n = 1;
        size_t bytes;
        int nd = lt_st_shape(st, i, shape), k;
        const unsigned char *p = (const unsigned char *)lt_st_data(st, i, &bytes);
        unsigned sum = 0;
        if (nd < 0 || nd > 8 || lt_st_find(st, lt_st_name(st, i)) != i || !lt_st_dtype(st, i)) abort();
        for (k = 0; k < nd; k++) if (shape[k] == 0) n = 0;
        for (k = 0; k < nd && n; k++) n *= shape[k];   /* fits: the reader checked it against the bytes */
        for (k = 0; (size_t)k < bytes; k++) sum += p[k];   /* the range lies inside the buffer (ASan) */
        if (sum == 0xFFFFFFFFu) fz_end();                   /* (keeps the loop from being dropped) */
        if (n <= 1024) {
            float out[1024];
            lt_st_read_f32(st, i, out, n);
            lt_clear_error(ctx);
        }
    }
    lt_st_meta(st, "format");
    lt_st_close(st);
    fz_end();
    lt_ctx_destroy(ctx);
    return 0;
}

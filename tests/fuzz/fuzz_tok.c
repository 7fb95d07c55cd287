/* fuzz_tok.c - libFuzzer target: the tokenizer loaders and encoding.  The first byte picks the
   loader: even, the rest is a tokenizer.json (lt_tok_parse_json); odd, the rest is encoder.json,
   a NUL, vocab.bpe (lt_tok_parse_gpt2).  Loading keeps the allocation bound of fuzz.h.  Whatever
   loads must encode the input's bytes (with and without LT_TOK_SPECIAL) to ids that decode back
   to them (to their NFC, lt_tok_nfc, under an NFC normalizer); the input's bytes also go through
   a small fixed vocabulary (each pattern, and Qwen2's with the NFC normalizer), so the
   pre-tokenizer patterns, NFC and BPE see arbitrary text.  Build and run: make fuzz. */
#include "ltrain.h"
#include "fuzz.h"

/* decode(encode(text)) == text (NFC(text) when tk normalizes: "e" + U+0301 comes back as U+00E9),
   or abort.  With LT_TOK_SPECIAL under NFC the text between special tokens is normalized stretch
   by stretch (as Hugging Face does), so a combining mark just after a special token ("<|e" then
   U+0301) stays apart: there the decoded text's NFC must be NFC(text). */
static void fz_roundtrip(lt_tokenizer *tk, const uint8_t *text, size_t n) {
    int32_t *ids = (int32_t *)malloc((3 * n + 1) * sizeof(int32_t));
    char *back = (char *)malloc(3 * n + 1), *want = (char *)malloc(3 * n + 1), *again = (char *)malloc(3 * n + 1);
    int32_t probe[4];
    char pb[8];
    int64_t nw = (int64_t)n, np = lt_tok_encode(tk, "e\xcc\x81", 3, 0, probe, 4);
    int f, nfc = np >= 1 && np <= 4 && lt_tok_decode(tk, probe, np, pb, sizeof pb) == 2;
    if (!ids || !back || !want || !again) abort();
    if (nfc) {
        if ((nw = lt_tok_nfc(NULL, (const char *)text, n, want, 3 * n + 1)) < 0 || nw > 3 * (int64_t)n) abort();
    } else if (n) {
        memcpy(want, text, n);
    }
    for (f = 0; f < 2; f++) {
        int64_t m = lt_tok_encode(tk, (const char *)text, n, f ? LT_TOK_SPECIAL : 0, ids, (int64_t)(3 * n + 1)), k;
        if (m < 0 || m > nw) abort();
        for (k = 0; k < m; k++) if (ids[k] < 0 || ids[k] >= lt_tok_vocab_size(tk)) abort();
        if (nfc && f) {
            int64_t nb = lt_tok_decode(tk, ids, m, back, 3 * n + 1);
            if (nb < 0 || nb > 3 * (int64_t)n) abort();
            if (lt_tok_nfc(NULL, back, (size_t)nb, again, 3 * n + 1) != nw || (nw && memcmp(again, want, (size_t)nw))) abort();
        } else if (lt_tok_decode(tk, ids, m, back, 3 * n + 1) != nw || (nw && memcmp(back, want, (size_t)nw))) {
            abort();
        }
    }
    free(again);
    free(ids);
    free(back);
    free(want);
}

/* The 256 byte tokens of GPT-2's alphabet and a few merges, as a tokenizer.json (built once). */
static lt_tokenizer *fz_fixed(lt_ctx *ctx, lt_pretok p, int nfc) {
    static const char *const re[4] = {"", "'s|'t|'re|'ve|'m|'ll|'d| ?\\\\p{L}+| ?\\\\p{N}+| ?[^\\\\s\\\\p{L}\\\\p{N}]+|\\\\s+(?!\\\\S)|\\\\s+",
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+",
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"};
    char *j = (char *)malloc(16384);
    size_t o = 0;
    int b;
    lt_tokenizer *tk;
    o += (size_t)sprintf(j, "{\"normalizer\": %s, \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
                            "{\"Regex\": \"%s\"}}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}]}, \"added_tokens\": "
                            "[{\"id\": 263, \"content\": \"<|endoftext|>\"}, {\"id\": 264, \"content\": \"<|e\"}], \"model\": "
                            "{\"ignore_merges\": %s, \"vocab\": {", nfc ? "{\"type\": \"NFC\"}" : "null", re[p],
                            p == LT_PRETOK_CL100K ? "true" : "false");
    for (b = 0; b < 256; b++) {
        uint32_t c = lt_tok_byte_char(b);
        o += (size_t)sprintf(j + o, "\"%s\\u%04x\": %d, ", "", (unsigned)c, b);
    }
    o += (size_t)sprintf(j + o, "\"\\u0120t\": 256, \"he\": 257, \"\\u0120the\": 258, \"ee\": 259, \"eee\": 260, \"eeee\": 261, "
                                "\"\\u0120\\u0120\": 262}, \"merges\": [\"\\u0120 t\", \"h e\", \"\\u0120t he\", \"e e\", \"ee e\", "
                                "\"ee ee\", \"\\u0120 \\u0120\"]}}");
    tk = lt_tok_parse_json(ctx, j, o, "fixed");
    free(j);
    if (!tk) { fprintf(stderr, "fuzz_tok: the fixed vocabulary does not load: %s\n", lt_error(ctx)); abort(); }
    return tk;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static lt_ctx *fixed_ctx;
    static lt_tokenizer *fixed[4];
    lt_ctx *ctx = lt_ctx_create(1);
    lt_tokenizer *tk = NULL;
    int p;
    if (!ctx) return 0;
    if (!fixed_ctx) {
        fixed_ctx = lt_ctx_create(1);
        for (p = 0; p < 4; p++) fixed[p] = fz_fixed(fixed_ctx, p < 3 ? (lt_pretok)(p + 1) : LT_PRETOK_QWEN2, p == 3);
    }
    if (size > 0) {
        fz_begin(size);
        if (data[0] % 2 == 0) tk = lt_tok_parse_json(ctx, data + 1, size - 1, "fuzz");
        else {
            const uint8_t *nul = (const uint8_t *)memchr(data + 1, 0, size - 1);
            size_t ne = nul ? (size_t)(nul - data - 1) : size - 1;
            tk = lt_tok_parse_gpt2(ctx, data + 1, ne, nul ? nul + 1 : data + size, nul ? size - ne - 2 : 0, "fuzz");
        }
        if (!tk && !lt_failed(ctx)) abort();   /* a refusal always says why */
        fz_end();
    }
    if (tk) fz_roundtrip(tk, data, size);
    for (p = 0; p < 4; p++) fz_roundtrip(fixed[p], data, size);
    lt_tok_free(tk);
    lt_ctx_destroy(ctx);
    return 0;
}

/* cc -std=c99 -O1 -g -fsanitize=address,undefined -I. tests/test_oom.c -o build/test_oom -lm

   test_oom: allocation failure anywhere.  One short training run -- context, GPT, AdamW, a
   token shard opened as a shuffled loader, two steps of forward, loss, backward, clipping and
   update, a checkpoint save, then lt_gpt_load + lt_checkpoint_load into a second context and a few
   sampled tokens -- is first run cleanly to count its
   allocations (N), then once for every k in 1..N with the k-th allocation failing (through the
   LTRAIN_MALLOC/REALLOC/FREE hooks).  Each failing run must end with an error status (never a
   crash, never a silent success) and, after the destroy calls, nothing may stay allocated.
   Prints "ok"/"FAIL" lines and "N passed, N failed"; exit status non-zero on a failure.
   Run from the repository root (it writes build/tmp/oom*.safetensors). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

static long oom_calls, oom_fail_at, oom_live; /* allocation attempts; which one fails (0: none); blocks live */

static void *oom_malloc(size_t n) {
    void *p;
    if (++oom_calls == oom_fail_at) return NULL;
    p = malloc(n ? n : 1);
    if (p) oom_live++;
    return p;
}
static void *oom_realloc(void *p, size_t n) {
    void *q;
    if (++oom_calls == oom_fail_at) return NULL;   /* p stays valid, as with a real failure */
    q = realloc(p, n ? n : 1);
    if (q && !p) oom_live++;
    return q;
}
static void oom_free(void *p) {
    if (p) oom_live--;
    free(p);
}
#define LTRAIN_MALLOC(n) oom_malloc(n)
#define LTRAIN_REALLOC(p, n) oom_realloc(p, n)
#define LTRAIN_FREE(p) oom_free(p)
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

static const char *oom_path = "build/tmp/oom.safetensors", *oom_shard = "build/tmp/oom_shard.bin";

/* An llm.c shard of 64 tokens < 16. */
static int oom_write_shard(void) {
    unsigned char b[1024 + 128];
    FILE *f = fopen(oom_shard, "wb");
    int i, ok;
    memset(b, 0, sizeof b);
    b[0] = 0x88; b[1] = 0xd8; b[2] = 0x34; b[3] = 0x01;   /* 20240520 = 0x0134d888 */
    b[4] = 1;                                            /* version */
    b[8] = 64;                                           /* tokens */
    for (i = 0; i < 64; i++) b[1024 + 2 * i] = (unsigned char)((i * 5 + 1) % 16);
    ok = f && fwrite(b, 1, sizeof b, f) == sizeof b;
    if (f && fclose(f) != 0) ok = 0;
    return ok;
}

/* The run: 0 when everything succeeded, 1 when an error was reported (on a context, or as NULL
   from lt_ctx_create).  why gets the error message. */
static int oom_run(char *why, size_t cap) {
    lt_ctx *ctx = lt_ctx_create(7), *ctx2 = NULL;
    lt_gpt *g = NULL, *g2 = NULL;
    lt_optim *opt = NULL, *opt2 = NULL;
    lt_loader *ld = NULL;
    lt_gpt_config cfg;
    lt_train_state st, st2;
    int32_t in[8], tg[8], sample[6] = {1, 2, 0, 0, 0, 0};
    lt_rng rng;
    int i, rc = 1;
    why[0] = 0;
    if (!ctx) { snprintf(why, cap, "lt_ctx_create returned NULL"); return 1; }
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab = 16; cfg.ctx = 8; cfg.layers = 1; cfg.heads = 2; cfg.channels = 8;
    if (!(g = lt_gpt_create(ctx, &cfg))) goto out;
    if (!(opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults()))) goto out;
    if (!(ld = lt_loader_open(ctx, oom_shard, 2, 4, 16))) goto out;
    lt_loader_shuffle(ld, 3);
    for (i = 0; i < 2 && !lt_failed(ctx); i++) {
        lt_tensor *loss;
        lt_zero_grad(ctx);
        if (lt_loader_next(ld, in, tg) != LT_OK) goto out;
        loss = lt_gpt_loss(g, in, tg, 2, 4);
        if (!loss || lt_backward(ctx, loss) != LT_OK) goto out;
        lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
        if (lt_failed(ctx) || lt_optim_step(opt, 1e-3) != LT_OK) goto out;
    }
    memset(&st, 0, sizeof st);
    st.step = 2;
    lt_loader_get_pos(ld, &st.data_epoch, &st.data_index);
    if (lt_checkpoint_save(g, opt, &st, "test_oom", oom_path) != LT_OK) goto out;
    if (!(ctx2 = lt_ctx_create(8))) { snprintf(why, cap, "lt_ctx_create (second) returned NULL"); rc = 1; goto out; }
    if (!(g2 = lt_gpt_load(ctx2, oom_path, 0))) goto out;
    if (!(opt2 = lt_adamw_create(ctx2, lt_gpt_params(g2), lt_adamw_defaults()))) goto out;
    if (lt_checkpoint_load(g2, opt2, &st2, oom_path) != LT_OK) goto out;
    lt_rng_seed(&rng, 1);
    if (lt_gpt_generate(g2, sample, 2, 4, 1.0f, 0, &rng, sample) != 6) goto out;
    rc = 0;
out:
    if (lt_failed(ctx)) snprintf(why, cap, "%s", lt_error(ctx));
    else if (ctx2 && lt_failed(ctx2)) snprintf(why, cap, "%s", lt_error(ctx2));
    else if (rc && !why[0]) snprintf(why, cap, "(a call failed without an error on its context)");
    if (rc == 0 && (lt_failed(ctx) || (ctx2 && lt_failed(ctx2)))) rc = 1;
    lt_loader_destroy(ld);
    lt_optim_destroy(opt);
    lt_optim_destroy(opt2);
    lt_gpt_destroy(g);
    lt_gpt_destroy(g2);
    lt_ctx_destroy(ctx);
    lt_ctx_destroy(ctx2);
    return rc;
}

/* Temporary files lt_st_save left beside the checkpoint (a failed save must remove its own). */
static int oom_tmp_files(void) {
    DIR *d = opendir("build/tmp");
    struct dirent *e;
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "oom.safetensors.tmp", 19) == 0) n++;
    closedir(d);
    return n;
}

int main(void) {
    char why[600];
    long total, k;
    int passed = 0, failed = 0, shown = 0, rc;
    remove(oom_path);
    if (!oom_write_shard()) { printf("FAIL oom.setup: cannot write %s\n0 passed, 1 failed\n", oom_shard); return 1; }
    oom_fail_at = 0;
    oom_calls = 0;
    rc = oom_run(why, sizeof why);
    total = oom_calls;
    if (rc != 0 || oom_live != 0) {
        printf("FAIL oom.clean_run: status %d, %ld blocks left: %s\n", rc, oom_live, why);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    for (k = 1; k <= total; k++) {
        remove(oom_path);
        oom_calls = 0;
        oom_live = 0;
        oom_fail_at = k;
        rc = oom_run(why, sizeof why);
        if (rc == 1 && oom_live == 0 && strstr(why, "(a call failed") == NULL) { passed++; continue; }
        failed++;
        if (shown++ < 20)
            printf("FAIL oom.fail_%ld: allocation %ld of %ld failed: %s; %ld blocks left after destroy; \"%s\"\n", k, k,
                   total, rc == 1 ? "error status" : "SUCCESS reported", oom_live, why);
    }
    k = oom_tmp_files();
    if (k) { failed++; printf("FAIL oom.tmp_files: %ld temporary files left beside %s\n", k, oom_path); }
    remove(oom_path);
    remove(oom_shard);
    if (!failed) printf("ok   oom: each of the %ld allocations of a short training run failed in turn: an error every "
                        "time, nothing left allocated\n", total);
    printf("%d passed, %d failed\n", passed + (k ? 0 : 1), failed);
    return failed ? 1 : 0;
}

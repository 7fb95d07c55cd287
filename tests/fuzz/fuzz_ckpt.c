/* fuzz_ckpt.c - libFuzzer target: the training-state reader, lt_checkpoint_load, into the tiny model
   of tests/gen_malformed.py (vocab 16, ctx 8, 1 layer, 2 heads, 4 channels) with AdamW and a train
   state.  The input goes through a file, as in real use (tmpfs when there is one).  A load that
   succeeds must leave a usable state: step, epoch, index >= 0 and a non-zero RNG. */
#include "ltrain.h"
#include "fuzz.h"
#include <unistd.h>

static lt_ctx *fz_ctx;
static lt_gpt *fz_g;
static lt_optim *fz_opt;
static char fz_path[256];

static void fz_cleanup(void) {
    lt_optim_destroy(fz_opt);
    lt_gpt_destroy(fz_g);
    lt_ctx_destroy(fz_ctx);
    remove(fz_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    lt_train_state ts;
    lt_status s;
    FILE *f;
    if (!fz_g) {
        lt_gpt_config cfg;
        FILE *d = fopen("/dev/shm/.fz", "wb");
        memset(&cfg, 0, sizeof cfg);
        cfg.vocab = 16; cfg.ctx = 8; cfg.layers = 1; cfg.heads = 2; cfg.channels = 4;
        fz_ctx = lt_ctx_create(1);
        fz_g = lt_gpt_create(fz_ctx, &cfg);
        fz_opt = fz_g ? lt_adamw_create(fz_ctx, lt_gpt_params(fz_g), lt_adamw_defaults()) : NULL;
        if (!fz_opt) abort();
        if (d) { fclose(d); remove("/dev/shm/.fz"); }
        snprintf(fz_path, sizeof fz_path, "%s/ltrain_fuzz_ckpt_%ld.safetensors", d ? "/dev/shm" : "/tmp", (long)getpid());
        atexit(fz_cleanup);
    }
    f = fopen(fz_path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    memset(&ts, 0, sizeof ts);
    fz_begin(size);
    s = lt_checkpoint_load(fz_g, fz_opt, &ts, fz_path);
    fz_end();
    if (s == LT_OK) {
        lt_rng *r = lt_ctx_rng(fz_ctx);
        if (ts.step < 0 || ts.data_epoch < 0 || ts.data_index < 0 || (!r->s[0] && !r->s[1] && !r->s[2] && !r->s[3]))
            abort();
    } else if (!lt_failed(fz_ctx)) {
        abort();
    }
    lt_clear_error(fz_ctx);
    return 0;
}

/* cc -std=c99 -O2 -I. tests/ckpt_check.c -o build/ckpt_check -lm

   ckpt_check PATH: is PATH a complete training checkpoint of build/train_gpt (AdamW)?  Loads the
   model its shapes describe (lt_gpt_load), then the optimizer state, data position and RNG
   (lt_checkpoint_load).  Prints the step and exits 0, or prints why not and exits 1.
   tests/kill_save.sh runs it after every kill. */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

int main(int argc, char **argv) {
    lt_ctx *ctx;
    lt_gpt *g;
    lt_optim *opt = NULL;
    lt_train_state st;
    int ok;
    if (argc != 2) {
        fprintf(stderr, "usage: ckpt_check PATH\n");
        return 2;
    }
    ctx = lt_ctx_create(1);
    if (!ctx) return 1;
    memset(&st, 0, sizeof st);
    g = lt_gpt_load(ctx, argv[1], 0);
    if (g) opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    ok = opt && lt_checkpoint_load(g, opt, &st, argv[1]) == LT_OK;
    if (ok) printf("%lld\n", (long long)st.step);
    else fprintf(stderr, "ckpt_check: %s\n", lt_error(ctx));
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return ok ? 0 : 1;
}

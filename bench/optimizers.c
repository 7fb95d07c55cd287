/* cc -O2 -march=native -fopenmp -I. bench/optimizers.c -o build/bench_optimizers -lm   (make bench-optimizers)

   bench_optimizers: AdamW against Lion, AdEMAMix, Muon and SOAP on tinyshakespeare.

   Every optimizer trains the same character-level GPT (V=256, from the same initial weights, on
   the same batches) for the same token budget, at each lr of its 3-value grid; the table gives
   the final validation loss (the mean over fixed held-out batches: the last 10% of the text),
   the mean time per step (forward + backward + clipping + the optimizer, the first step
   included: SOAP's first eigendecompositions count), the optimizer's share of it, and the bytes
   of optimizer state.  Schedule: linear warm-up over 10% of the steps from 0, cosine to 10% of
   the peak; clipping at norm 1; weight decay on the 2-D parameters (AdamW 0.1, Lion 0.3 = AdamW's
   λ·lr at a 3x smaller lr, AdEMAMix 0.1, Muon 0 and its AdamW part 0, SOAP 0.01: each one's
   paper or reference default).  AdEMAMix: α 5, β3 0.9999 with T_α = T_β3 = the run's steps (the
   paper's prescription).  Muon's AdamW part (wte, wpe, biases, LayerNorm): lr 3e-3·(lr/0.02).

   flags: --data PATH (../shared/data/tinyshakespeare.txt)  --steps N (200)  --batch B (8)
          --seq T (64)  --layers L (2)  --channels C (128)  --heads H (4)  --eval-batches N (16)
          --only NAME (one optimizer)  --threads N  --md PATH (also write the table as markdown) */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *data, *only, *md;
    int steps, batch, seq, layers, channels, heads, eval_batches, threads;
} opts_t;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

enum { OPT_ADAMW, OPT_LION, OPT_ADEMAMIX, OPT_MUON, OPT_SOAP, N_OPT };
static const char *const opt_names[N_OPT] = {"adamw", "lion", "ademamix", "muon", "soap"};
static const double opt_grid[N_OPT][3] = {
    {1e-3, 3e-3, 1e-2}, {1e-4, 3e-4, 1e-3}, {1e-3, 3e-3, 1e-2}, {0.01, 0.02, 0.05}, {1e-3, 3e-3, 1e-2}};

static lt_optim *make_opt(lt_ctx *ctx, lt_paramset ps, int which, double lr, int steps) {
    switch (which) {
    case OPT_ADAMW: {
        lt_adamw_config c = lt_adamw_defaults();
        c.lr = lr; c.beta1 = 0.9; c.beta2 = 0.95; c.weight_decay = 0.1;
        return lt_adamw_create(ctx, ps, c);
    }
    case OPT_LION: {
        lt_lion_config c = lt_lion_defaults();
        c.lr = lr; c.weight_decay = 0.3;
        return lt_lion_create(ctx, ps, c);
    }
    case OPT_ADEMAMIX: {
        lt_ademamix_config c = lt_ademamix_defaults();
        c.lr = lr; c.weight_decay = 0.1; c.alpha_warmup = steps; c.beta3_warmup = steps;
        return lt_ademamix_create(ctx, ps, c);
    }
    case OPT_MUON: {
        lt_muon_config c = lt_muon_defaults();
        c.lr = lr; c.adamw.lr = 3e-3 * (lr / 0.02);
        return lt_muon_create(ctx, ps, c);
    }
    default: {
        lt_soap_config c = lt_soap_defaults();
        c.lr = lr;
        return lt_soap_create(ctx, ps, c);
    }
    }
}

typedef struct { double val, ms, opt_ms; size_t bytes; int ok; } result_t;

/* One run: fresh model from seed 1337, the same batches for everyone. */
static result_t run(const opts_t *o, const int32_t *train, int64_t ntrain, const int32_t *val, int64_t nval,
                    int which, double peak) {
    result_t res;
    lt_ctx *ctx = lt_ctx_create(1337);
    lt_gpt_config cfg;
    lt_gpt *g;
    lt_loader *ld = NULL, *vl = NULL;
    lt_optim *opt = NULL;
    lt_schedule s;
    int32_t *in = NULL, *tg = NULL;
    int B = o->batch, T = o->seq, k;
    double t0, topt = 0;
    memset(&res, 0, sizeof res);
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab = 256; cfg.ctx = T; cfg.layers = o->layers; cfg.heads = o->heads; cfg.channels = o->channels;
    g = lt_gpt_create(ctx, &cfg);
    if (g) ld = lt_loader_from_tokens(ctx, train, ntrain, B, T);
    if (ld) vl = lt_loader_from_tokens(ctx, val, nval, B, T);
    if (vl) opt = make_opt(ctx, lt_gpt_params(g), which, peak, o->steps);
    in = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    tg = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    if (!opt || !in || !tg) {
        fprintf(stderr, "bench_optimizers: %s\n", lt_error(ctx)[0] ? lt_error(ctx) : "out of memory");
        goto out;
    }
    lt_loader_shuffle(ld, 1337);
    memset(&s, 0, sizeof s);
    s.lr = peak; s.min_lr = peak / 10; s.warmup = o->steps / 10; s.total = o->steps; s.decay = LT_SCHED_COSINE;
    t0 = now_s();
    for (k = 0; k < o->steps; k++) {
        double t1;
        lt_zero_grad(ctx);
        lt_loader_next(ld, in, tg);
        lt_backward(ctx, lt_gpt_loss(g, in, tg, B, T));
        lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
        t1 = now_s();
        lt_optim_step(opt, lt_schedule_lr(&s, k));
        topt += now_s() - t1;
        if (lt_failed(ctx)) break;
    }
    res.ms = (now_s() - t0) / o->steps * 1e3;
    res.opt_ms = topt / o->steps * 1e3;
    res.bytes = lt_optim_state_bytes(opt);
    lt_set_grad_enabled(ctx, 0);
    lt_set_training(ctx, 0);
    for (k = 0; k < o->eval_batches && !lt_failed(ctx); k++) {
        lt_reset(ctx);
        lt_loader_next(vl, in, tg);
        res.val += lt_item(lt_gpt_loss(g, in, tg, B, T));
    }
    res.val /= o->eval_batches;
    res.ok = !lt_failed(ctx) && res.val == res.val;
    if (lt_failed(ctx)) fprintf(stderr, "bench_optimizers: %s: %s\n", opt_names[which], lt_error(ctx));
out:
    free(in);
    free(tg);
    lt_optim_destroy(opt);
    lt_loader_destroy(ld);
    lt_loader_destroy(vl);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return res;
}

static int parse(opts_t *o, int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *n = !strcmp(f, "--steps") ? &o->steps : !strcmp(f, "--batch") ? &o->batch : !strcmp(f, "--seq") ? &o->seq
               : !strcmp(f, "--layers") ? &o->layers : !strcmp(f, "--channels") ? &o->channels
               : !strcmp(f, "--heads") ? &o->heads : !strcmp(f, "--eval-batches") ? &o->eval_batches
               : !strcmp(f, "--threads") ? &o->threads : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) return 0;
        if (!v) { fprintf(stderr, "bench_optimizers: %s needs a value\n", f); return 0; }
        if (n) { *n = atoi(v); if (*n < 1) { fprintf(stderr, "bench_optimizers: %s must be >= 1\n", f); return 0; } }
        else if (!strcmp(f, "--data")) o->data = v;
        else if (!strcmp(f, "--only")) o->only = v;
        else if (!strcmp(f, "--md")) o->md = v;
        else { fprintf(stderr, "bench_optimizers: unknown flag %s\n", f); return 0; }
        i++;
    }
    return 1;
}

int main(int argc, char **argv) {
    opts_t o;
    lt_ctx *ctx;
    void *buf = NULL;
    size_t size = 0;
    int32_t *tok;
    int64_t n, ntrain, i;
    result_t res[N_OPT][3];
    int w, j, best[N_OPT];
    FILE *md = NULL;
    memset(&o, 0, sizeof o);
    o.data = "../shared/data/tinyshakespeare.txt";
    o.steps = 200; o.batch = 8; o.seq = 64; o.layers = 2; o.channels = 128; o.heads = 4; o.eval_batches = 16;
    if (!parse(&o, argc, argv)) {
        printf("usage: bench_optimizers [--data PATH (%s)] [--steps N (200)] [--batch B (8)] [--seq T (64)]\n"
               "       [--layers L (2)] [--channels C (128)] [--heads H (4)] [--eval-batches N (16)] [--only NAME]\n"
               "       [--threads N] [--md PATH]\n", o.data);
        return argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) ? 0 : 1;
    }
    if (o.threads > 0) lt_set_threads(o.threads);
    ctx = lt_ctx_create(1);
    if (lt_read_file(ctx, o.data, &buf, &size) != LT_OK) {
        printf("bench_optimizers: skipped: %s (pass --data PATH to tinyshakespeare.txt)\n", lt_error(ctx));
        lt_ctx_destroy(ctx);
        return 0;
    }
    n = (int64_t)size;
    tok = (int32_t *)malloc((size_t)n * sizeof(int32_t));
    if (!tok) return 1;
    for (i = 0; i < n; i++) tok[i] = ((const unsigned char *)buf)[i];
    lt_free(buf);
    ntrain = n - n / 10;
    printf("bench_optimizers: %s, %lld train / %lld val bytes | GPT V=256 L=%d C=%d H=%d T=%d | B=%d, %d steps "
           "(%lld tokens) | %d threads, matmul %s\n", o.data, (long long)ntrain, (long long)(n - ntrain), o.layers,
           o.channels, o.heads, o.seq, o.batch, o.steps, (long long)o.steps * o.batch * o.seq, lt_get_threads(),
           lt_kernel_name());
    printf("%-9s %8s %9s %9s %9s %10s\n", "optimizer", "lr", "val loss", "ms/step", "optim ms", "state KiB");
    fflush(stdout);
    for (w = 0; w < N_OPT; w++) {
        best[w] = -1;
        for (j = 0; j < 3; j++) {
            memset(&res[w][j], 0, sizeof res[w][j]);
            if (o.only && strcmp(o.only, opt_names[w])) continue;
            res[w][j] = run(&o, tok, ntrain, tok + ntrain, n - ntrain, w, opt_grid[w][j]);
            printf("%-9s %8.0e %9.4f %9.1f %9.1f %10.1f\n", opt_names[w], opt_grid[w][j],
                   res[w][j].val, res[w][j].ms, res[w][j].opt_ms,
                   (double)res[w][j].bytes / 1024);
            fflush(stdout);
            if (res[w][j].ok && (best[w] < 0 || res[w][j].val < res[w][best[w]].val)) best[w] = j;
        }
    }
    if (o.md && !(md = fopen(o.md, "w"))) fprintf(stderr, "bench_optimizers: cannot write %s\n", o.md);
    printf("\nbest lr of each (AdamW = baseline):\n");
    if (md) {
        fprintf(md, "| optimizer | lr grid | best lr | val loss (best) | vs AdamW | ms/step | optimizer ms/step | "
                    "state (KiB) |\n|---|---|---|---|---|---|---|---|\n");
    }
    for (w = 0; w < N_OPT; w++) {
        const result_t *r;
        double base = best[OPT_ADAMW] >= 0 ? res[OPT_ADAMW][best[OPT_ADAMW]].val : 0;
        if (best[w] < 0) continue;
        r = &res[w][best[w]];
        printf("%-9s lr %-6g val %.4f (%+.4f vs adamw) %7.1f ms/step (optimizer %.1f) %8.1f KiB   grid:", opt_names[w],
               opt_grid[w][best[w]], r->val, base > 0 ? r->val - base : 0.0, r->ms, r->opt_ms, (double)r->bytes / 1024);
        for (j = 0; j < 3; j++) printf(" %g:%.4f", opt_grid[w][j], res[w][j].val);
        printf("\n");
        if (md) {
            fprintf(md, "| %s | %g, %g, %g (val %.3f, %.3f, %.3f) | %g | %.4f | %+.4f | %.1f | %.1f | %.1f |\n",
                    opt_names[w], opt_grid[w][0], opt_grid[w][1], opt_grid[w][2], res[w][0].val, res[w][1].val,
                    res[w][2].val, opt_grid[w][best[w]], r->val, base > 0 ? r->val - base : 0.0, r->ms, r->opt_ms,
                    (double)r->bytes / 1024);
        }
    }
    if (md) fclose(md);
    free(tok);
    lt_ctx_destroy(ctx);
    return 0;
}

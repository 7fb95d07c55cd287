/* cc -O2 -fopenmp -I. examples/lesson_llama.c -o build/lesson_llama -lm

   Lesson: GPT-2 or Llama?  The same budget for both blocks.

   A GPT-2 block and a Llama block do the same two things (mix the positions with attention, then
   transform each position with an MLP, each on a normalized copy of the residual stream that is
   added back), and differ in four pieces:

   - RMSNorm instead of LayerNorm.  LayerNorm subtracts each row's mean, divides by its standard
     deviation and applies a weight and a bias; RMSNorm only divides by the root mean square,
     x / sqrt(mean(x^2) + eps) * w: no mean, no bias, one reduction less per row.
   - RoPE instead of learned positions.  GPT-2 adds a learned vector per position (wpe, ctx x C
     parameters) to the token embedding, once, at the input.  Llama has no position table: rotary
     embedding turns each pair of channels of every head's q and k (channels i and i + D/2 in
     Hugging Face's rotate_half layout) by the angle p * theta^(-2i/D) at position p, so the score
     q_m . k_n sees the positions only through the offset m - n.  The position enters every
     attention layer and costs no parameters; the values v are not turned.
   - SwiGLU instead of the GELU MLP.  GPT-2: c_proj(gelu(c_fc(h))) with hidden 4C, two matrices.
     Llama: down_proj(silu(gate_proj(h)) * up_proj(h)), a gate that multiplies, three matrices; so
     for the MLP's parameters of GPT-2 the hidden size is 8C/3, not 4C.
   - Grouped-query attention.  In GPT-2 each of the H query heads has its own key and value head;
     with GQA, groups of H/Hkv query heads share one key head and one value head.  k_proj and
     v_proj shrink to Hkv*D outputs (here Hkv = 2 of H = 4: half of C), and so do the K/V tensors
     attention reads (and a KV cache keeps when sampling).  Each query head still scores every
     position, so attention's own arithmetic stays; what shrinks is K/V's parameters and memory.
     Hkv = 1 is multi-query attention.
   Llama's linears have no biases.

   This program trains a GPT-2 and a Llama-style model of (close to) equal parameter count on the
   same text with the same budget: the same batches (same seed, same tokens), the same number of
   steps, the same AdamW, warm-up + cosine schedule and clipping.  The parameters that GQA, the
   missing position table and the missing biases save go to a wider SwiGLU: its hidden size is
   chosen so that the counts match (398 here, against the usual 8C/3 = 341).  It prints both
   configurations and parameter counts, the validation loss every twentieth of the run, the final
   validation loss and the time per step, and draws the validation curves (against steps and
   against training seconds) into build/lesson_llama.svg.  Which block wins at this tiny size is
   a measurement on this text and budget, not a law.

       build/lesson_llama [text file] [--steps N] [--lr X] [--threads N] [--plot PATH.svg]

   The text is ../shared/data/tinyshakespeare.txt (or $LT_SHARED_DIR/tinyshakespeare.txt) when it is
   there, else the library's own source ltrain.h, read as bytes (vocabulary 256).

   Read @@NN.forward in ltrain.h (both blocks), @@OPS.rmsnorm, @@OPS.rope, @@OPS.silu (and lt_swiglu)
   and @@OPS.attention_gqa. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define B 8         /* sequences per batch */
#define T 128       /* tokens per sequence */
#define LAYERS 4
#define HEADS 4
#define KV_HEADS 2  /* Llama: two query heads share each key/value head */
#define C 128
#define N_VAL 8     /* validation: 8 fixed batches = 8192 tokens */
#define N_EVAL 20   /* validation points after step 0 (fewer if --steps is smaller) */

typedef struct {
    const char *name;
    lt_gpt_config cfg;
    int64_t params;
    double *val;      /* validation loss after k * steps / evals steps, k = 0..evals */
    double *secs;     /* training seconds (evaluation left out) when it was measured */
    double ms;        /* per training step, the first step left out */
} run_t;

/* Parameter count of a config, from a model made and thrown away. */
static int64_t count_params(const lt_gpt_config *cfg) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_gpt *g = lt_gpt_create(ctx, cfg);
    int64_t n = g ? lt_gpt_num_params(g) : -1;
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return n;
}

/* Mean loss over the fixed validation batches (no tape). */
static double validate(lt_ctx *ctx, lt_gpt *g, const int32_t *vin, const int32_t *vtg) {
    double s = 0;
    int k;
    lt_set_grad_enabled(ctx, 0);
    for (k = 0; k < N_VAL; k++) {
        lt_reset(ctx);
        s += lt_item(lt_gpt_loss(g, vin + (size_t)k * B * T, vtg + (size_t)k * B * T, B, T)) / N_VAL;
    }
    lt_reset(ctx);
    lt_set_grad_enabled(ctx, 1);
    return s;
}

/* `steps` AdamW steps on the training tokens, the validation loss at step 0 and every steps/evals.
   0 on a library error (printed). */
static int train(run_t *r, const int32_t *tok, int64_t n_train, const int32_t *vin, const int32_t *vtg, int steps,
                 double lr, int evals) {
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt *g = lt_gpt_create(ctx, &r->cfg);
    lt_loader *ld = lt_loader_from_tokens(ctx, tok, n_train, B, T);
    lt_adamw_config ac = lt_adamw_defaults();
    lt_optim *opt;
    lt_schedule sc;
    int32_t *in = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    int32_t *tg = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    double train_ms = 0, timed_ms = 0, t0;
    int step, k = 0, ok = 1;

    ac.lr = lr; ac.beta1 = 0.9; ac.beta2 = 0.95; ac.eps = 1e-8; ac.weight_decay = 0.1;
    opt = lt_adamw_create(ctx, lt_gpt_params(g), ac);
    memset(&sc, 0, sizeof sc);
    sc.lr = lr; sc.min_lr = lr / 10; sc.warmup = steps / 10; sc.total = steps; sc.warmup_start = 0.1;
    sc.decay = LT_SCHED_COSINE;
    for (step = 0; step <= steps && in && tg && !lt_failed(ctx); step++) {
        lt_tensor *loss;
        if (step == (int)((int64_t)k * steps / evals)) {
            r->val[k] = validate(ctx, g, vin, vtg);
            r->secs[k] = train_ms / 1e3;
            printf("  %-7s step %5d  val loss %.4f  (%.1f s of training)\n", r->name, step, r->val[k], r->secs[k]);
            fflush(stdout);
            k++;
        }
        if (step == steps) break;
        t0 = lesson_now_ms();
        lt_zero_grad(ctx);
        lt_loader_next(ld, in, tg);
        loss = lt_gpt_loss(g, in, tg, B, T);
        lt_backward(ctx, loss);
        lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
        lt_optim_step(opt, lt_schedule_lr(&sc, step));
        t0 = lesson_now_ms() - t0;
        train_ms += t0;
        if (step > 0) timed_ms += t0;
    }
    r->ms = steps > 1 ? timed_ms / (steps - 1) : train_ms;
    if (!in || !tg) { fprintf(stderr, "lesson_llama: out of memory\n"); ok = 0; }
    else if (lt_failed(ctx)) { fprintf(stderr, "lesson_llama: %s: %s\n", r->name, lt_error(ctx)); ok = 0; }
    lt_optim_destroy(opt);
    lt_loader_destroy(ld);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    free(in);
    free(tg);
    return ok;
}

static void print_config(const run_t *r) {
    const lt_gpt_config *c = &r->cfg;
    if (c->arch == LT_ARCH_LLAMA)
        printf("%-7s %d layers, C=%d, %d query heads, %d kv heads (D=%d), SwiGLU hidden %d, RMSNorm, RoPE, no biases: "
               "%lld parameters\n", r->name, c->layers, c->channels, c->heads, c->kv_heads, c->channels / c->heads,
               c->hidden, (long long)r->params);
    else
        printf("%-7s %d layers, C=%d, %d heads (D=%d), GELU MLP hidden %d, LayerNorm, learned positions: "
               "%lld parameters\n", r->name, c->layers, c->channels, c->heads, c->channels / c->heads, 4 * c->channels,
               (long long)r->params);
}

int main(int argc, char **argv) {
    const char *shared = getenv("LT_SHARED_DIR"), *data = "ltrain.h", *plot = "build/lesson_llama.svg";
    char shakespeare[1024];
    int steps = 300, threads = 1, evals, r, k, rc = 0;
    double lr = 3e-3;
    const lesson_flag flags[] = {{"--steps", 'i', &steps}, {"--lr", 'd', &lr}, {"--threads", 'i', &threads},
                                 {"--plot", 's', &plot}};
    run_t run[2];
    int32_t *tok = NULL, *vin = NULL, *vtg = NULL;
    int64_t n = 0, n_train, gpt_params;
    double x[N_EVAL + 1], top;
    lt_loader *vl;
    lt_ctx *vctx;
    lt_plot *p;
    FILE *f;

    /* tinyshakespeare where the tests find it (LT_SHARED_DIR, else ../shared/data), else the library's source */
    snprintf(shakespeare, sizeof shakespeare, "%s/tinyshakespeare.txt", shared && *shared ? shared : "../shared/data");
    if ((f = fopen(shakespeare, "rb")) != NULL) { fclose(f); data = shakespeare; }
    if ((rc = lesson_args("lesson_llama", argc, argv, &data, flags, 4)) == LESSON_HELP) {
        printf("usage: lesson_llama [text file (%s)] [--steps N (%d)] [--lr X (%g)]\n"
               "                    [--threads N (%d)] [--plot PATH.svg (%s)]\n", data,
               steps, lr, threads, plot);
        return 0;
    }
    if (rc) return 1;
    if (steps < 1 || !(lr > 0)) {
        fprintf(stderr, "lesson_llama: need --steps >= 1 and --lr > 0\n");
        return 1;
    }
    evals = steps < N_EVAL ? steps : N_EVAL;
    if (threads > 0) lt_set_threads(threads);
    /* 90% to train on, the last 10% holds the validation batches */
    if (!lesson_text("lesson_llama", data, 10 * ((int64_t)N_VAL * B * T + 1), NULL, &tok, &n)) return 1;
    n_train = n * 9 / 10;

    memset(run, 0, sizeof run);
    run[0].name = "GPT-2";
    run[0].cfg = lt_gpt2_config(256, T, LAYERS, HEADS, C);
    run[1].name = "Llama";
    run[1].cfg = lt_llama_config(256, T, LAYERS, HEADS, KV_HEADS, C, 0);
    /* the SwiGLU hidden size that brings the Llama model closest to GPT-2's count: each hidden unit
       is 3C parameters per layer (a row of gate_proj and of up_proj, a column of down_proj) */
    gpt_params = run[0].params = count_params(&run[0].cfg);
    run[1].cfg.hidden = 32;
    run[1].cfg.hidden += (int)floor((double)(gpt_params - count_params(&run[1].cfg)) / (3.0 * C * LAYERS) + 0.5);
    run[1].params = count_params(&run[1].cfg);

    vin = (int32_t *)malloc((size_t)N_VAL * B * T * sizeof(int32_t));
    vtg = (int32_t *)malloc((size_t)N_VAL * B * T * sizeof(int32_t));
    for (r = 0; r < 2; r++) {
        run[r].val = (double *)calloc(N_EVAL + 1, sizeof(double));
        run[r].secs = (double *)calloc(N_EVAL + 1, sizeof(double));
    }
    if (!vin || !vtg || !run[0].val || !run[1].val || !run[0].secs || !run[1].secs) {
        fprintf(stderr, "lesson_llama: out of memory\n");
        rc = 1;
        goto out;
    }
    /* the validation batches, read once: both models are measured on the same tokens */
    vctx = lt_ctx_create(99);
    vl = lt_loader_from_tokens(vctx, tok + n_train, n - n_train, B, T);
    for (k = 0; k < N_VAL; k++) lt_loader_next(vl, vin + (size_t)k * B * T, vtg + (size_t)k * B * T);
    if (lt_failed(vctx)) { fprintf(stderr, "lesson_llama: %s\n", lt_error(vctx)); rc = 1; }
    lt_loader_destroy(vl);
    lt_ctx_destroy(vctx);
    if (rc) goto out;

    printf("GPT-2 vs Llama on %s: %d steps of %d x %d byte tokens each, AdamW lr %g, warm-up %d steps, cosine "
           "decay, clip 1.0\n\n", data, steps, B, T, lr, steps / 10);
    for (r = 0; r < 2; r++) print_config(&run[r]);
    printf("difference %+lld parameters (%+.2f%%)\n\n", (long long)(run[1].params - run[0].params),
           100.0 * (double)(run[1].params - run[0].params) / (double)run[0].params);
    for (r = 0; r < 2 && !rc; r++)
        if (!train(&run[r], tok, n_train, vin, vtg, steps, lr, evals)) rc = 1;
    if (rc) goto out;

    printf("\n%-7s  %10s  %14s  %8s  %s\n", "model", "parameters", "final val loss", "ms/step", "training time");
    for (r = 0; r < 2; r++)
        printf("%-7s  %10lld  %14.4f  %8.1f  %.1f s\n", run[r].name, (long long)run[r].params, run[r].val[evals],
               run[r].ms, run[r].secs[evals]);
    printf("Llama - GPT-2: %+.4f validation loss, %.2fx the time per step\n", run[1].val[evals] - run[0].val[evals],
           run[0].ms > 0 ? run[1].ms / run[0].ms : 0.0);

    for (k = 0; k <= evals; k++) x[k] = (double)((int64_t)k * steps / evals);
    top = run[0].val[1] > run[1].val[1] ? run[0].val[1] : run[1].val[1];
    top = ceil(top * 10 + 1) / 10;
    p = lt_plot_create("GPT-2 and Llama blocks, same parameters, same budget", "step", "validation loss");
    for (r = 0; r < 2; r++) lt_plot_series(p, run[r].name, x, run[r].val, evals + 1);
    lt_plot_range(p, NAN, NAN, NAN, top);   /* the first steps' fall would flatten the rest */
    lt_plot_panel(p, "the same curves against training time", "seconds of training (validation left out)",
                  "validation loss");
    for (r = 0; r < 2; r++) lt_plot_series(p, run[r].name, run[r].secs, run[r].val, evals + 1);
    lt_plot_range(p, NAN, NAN, NAN, top);
    if (!lesson_plot_save("lesson_llama", p, plot, "\nwrote %s\n")) rc = 1;
out:
    for (r = 0; r < 2; r++) {
        free(run[r].val);
        free(run[r].secs);
    }
    free(vin);
    free(vtg);
    free(tok);
    return rc;
}

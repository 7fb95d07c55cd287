/* cc -O2 -fopenmp -I. examples/lesson_precision.c -o build/lesson_precision -lm

   Lesson: mixed precision — half the activation bytes, the same loss, and why fp16 needs a loss
   scale.

   lt_set_precision(ctx, LT_BF16 or LT_F16) makes the matmuls (torch.autocast's list) round their
   operands to 16 bits and keep 16-bit copies for backward, so the activations a step must hold
   shrink; layernorm, softmax, the loss and the optimizer stay in float32 (master weights).
   bf16 keeps float32's exponent range and only loses mantissa bits.  fp16 keeps more mantissa
   bits but its smallest value is 2^-24 (6e-8): a gradient smaller than that becomes exactly 0
   ("underflow") and that weight learns nothing.  The remedy is torch's GradScaler (lt_scaler):
   backward runs on loss * S (S = 65536 at first) so small gradients land in range, the
   gradients are divided by S before the optimizer, and a step whose gradients overflowed to inf
   is skipped and S halved.

   Part 1 trains the same GPT (same seed, same batches, compiled with lt_compile per precision)
   in fp32, bf16, fp16 with the GradScaler and fp16 without it, and prints the final loss, the
   planned step memory (lt_plan_bytes), ms/step, the loss scale at the end and the skipped steps.
   The scaler's growth interval is cut from torch's 2000 to --growth steps, so that a short run
   shows it growing the scale until a step overflows and is skipped.
   Part 2 provokes underflow on purpose: one backward on the first batch with the loss multiplied
   by 1, 2^-4, 2^-8, 2^-12 (what a larger batch's mean or a deeper net does to gradient sizes)
   and counts the gradient values that are exactly zero: fp32 and scaled fp16 keep them, plain
   fp16 loses them.  Both parts go to build/lesson_precision.svg.

       build/lesson_precision [text file (ltrain.h)] [--steps N] [--growth N] [--threads N]
                              [--plot PATH.svg]

   Read @@AMP in ltrain.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define B 16
#define T 64
#define RUNS 4
#define MULTS 4

static const char *run_name[RUNS] = {"fp32", "bf16", "fp16 + GradScaler", "fp16, no loss scale"};
static const lt_dtype run_prec[RUNS] = {LT_F32, LT_BF16, LT_F16, LT_F16};

typedef struct { lt_gpt *g; int32_t *in, *tg; } step_t;
static lt_tensor *gpt_step(lt_ctx *ctx, void *user) {
    step_t *s = (step_t *)user;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, B, T);
}

/* fraction of all gradient values that are exactly 0 */
static double zero_frac(lt_paramset ps) {
    double zeros = 0, n = 0;
    int k;
    int64_t i;
    for (k = 0; k < ps.n; k++) {
        for (i = 0; i < ps.p[k]->n; i++) zeros += ps.p[k]->grad[i] == 0.0f;
        n += (double)ps.p[k]->n;
    }
    return n > 0 ? zeros / n : 0;
}

typedef struct {
    double *loss, *zeros, *scale;   /* per step */
    double ms;
    size_t planned;
    int64_t skipped;
} run_result;

static lt_ctx *make(lt_dtype prec, lt_gpt **g) {
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt_config cfg = lt_gpt2_config(256, T, 2, 4, 64);    /* V, ctx, layers, heads, channels */
    *g = lt_gpt_create(ctx, &cfg);
    lt_set_precision(ctx, prec);
    return ctx;
}

/* Part 1: `steps` AdamW steps from a compiled plan.  0 on a library error (printed). */
static int train(const int32_t *tok, int64_t n, int run, int steps, int growth, run_result *r) {
    lt_gpt *g;
    lt_ctx *ctx = make(run_prec[run], &g);
    lt_loader *ld = lt_loader_from_tokens(ctx, tok, n, B, T);
    lt_optim *opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    lt_scaler sc = lt_scaler_defaults();
    lt_plan *plan = NULL;
    int32_t in[B * T], tg[B * T];
    step_t st;
    double t0 = 0;
    int step, ok = 1;

    sc.enabled = run == 2;
    sc.growth_interval = growth;
    st.g = g; st.in = in; st.tg = tg;
    for (step = 0; step < steps && !lt_failed(ctx); step++) {
        float l = 0;
        if (step == 1) t0 = lesson_now_ms();
        lt_zero_grad(ctx);
        lt_loader_next(ld, in, tg);
        if (!plan && !(plan = lt_compile(ctx, gpt_step, &st))) break;
        /* backward of loss * scale (1 unless the scaler is on) */
        if (lt_plan_run_scaled(plan, (float)lt_scaler_get_scale(&sc), &l) != LT_OK) break;
        r->loss[step] = l;
        r->zeros[step] = zero_frac(lt_gpt_params(g));   /* before unscaling: what backward produced */
        r->scale[step] = lt_scaler_get_scale(&sc);
        lt_scaler_unscale(ctx, &sc, lt_gpt_params(g));
        lt_scaler_step(&sc, opt, -1);                    /* skipped if a gradient is inf/NaN */
        lt_scaler_update(&sc);
    }
    r->ms = steps > 1 ? (lesson_now_ms() - t0) / (steps - 1) : 0;
    r->planned = plan ? lt_plan_bytes(plan) : 0;
    r->skipped = lt_scaler_skipped(&sc);
    if (lt_failed(ctx)) { fprintf(stderr, "lesson_precision: %s: %s\n", run_name[run], lt_error(ctx)); ok = 0; }
    lt_plan_destroy(plan);
    lt_optim_destroy(opt);
    lt_loader_destroy(ld);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return ok;
}

/* Part 2: zero fraction of one backward of loss * mult * seed on the first batch. */
static double zeros_after_backward(const int32_t *tok, lt_dtype prec, double mult, float seed) {
    lt_gpt *g;
    lt_ctx *ctx = make(prec, &g);
    double z = -1;
    lt_tensor *loss = lt_gpt_loss(g, tok, tok + 1, B, T);   /* the first B*T bytes as B rows */
    if (lt_backward_scaled(ctx, loss, (float)mult * seed) == LT_OK) z = zero_frac(lt_gpt_params(g));
    else fprintf(stderr, "lesson_precision: %s\n", lt_error(ctx));
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return z;
}

static double mean_last(const double *x, int n, int k) {
    double s = 0;
    int i;
    for (i = n - k; i < n; i++) s += x[i];
    return s / k;
}

int main(int argc, char **argv) {
    const char *data = "ltrain.h", *plot = "build/lesson_precision.svg";
    int steps = 150, growth = 20, threads = 1, i, r, rc = 0;
    const lesson_flag flags[] = {{"--steps", 'i', &steps}, {"--growth", 'i', &growth}, {"--threads", 'i', &threads},
                                 {"--plot", 's', &plot}};
    run_result res[RUNS];
    double zt[MULTS][3], mults[MULTS], *x = NULL;
    int64_t size = 0;
    int32_t *tok = NULL;
    lt_plot *p;

    if ((rc = lesson_args("lesson_precision", argc, argv, &data, flags, 4)) == LESSON_HELP) {
        printf("usage: lesson_precision [text file (%s)] [--steps N (%d)] [--growth N (%d, torch: 2000)]\n"
               "                        [--threads N (%d)] [--plot PATH.svg (%s)]\n", data, steps, growth, threads,
               plot);
        return 0;
    }
    if (rc) return 1;
    if (steps < 20 || growth < 1) {
        fprintf(stderr, "lesson_precision: need --steps >= 20 and --growth >= 1\n");
        return 1;
    }
    if (threads > 0) lt_set_threads(threads);
    if (!lesson_text("lesson_precision", data, (int64_t)B * T + 1, "for one batch", &tok, &size)) return 1;
    memset(res, 0, sizeof res);
    x = (double *)malloc((size_t)steps * sizeof(double));
    for (r = 0; r < RUNS; r++) {
        res[r].loss = (double *)malloc((size_t)steps * sizeof(double));
        res[r].zeros = (double *)malloc((size_t)steps * sizeof(double));
        res[r].scale = (double *)malloc((size_t)steps * sizeof(double));
        if (!res[r].loss || !res[r].zeros || !res[r].scale) tok = (free(tok), (int32_t *)NULL);
    }
    if (!tok || !x) {
        fprintf(stderr, "lesson_precision: out of memory\n");
        rc = 1;
        goto out;
    }
    printf("AdamW on a 2-layer GPT (C=64), %s, %d steps of %d x %d tokens, each precision compiled\n", data, steps,
           B, T);
    printf("16-bit kernels: %s\n\n", lt_amp_kernel_name());
    for (r = 0; r < RUNS && rc == 0; r++)
        if (!train(tok, (int64_t)size, r, steps, growth, &res[r])) rc = 1;
    if (rc) goto out;
    printf("%-20s  %10s  %12s  %8s  %10s  %7s  %10s\n", "run", "final loss", "planned MiB", "ms/step", "loss scale",
           "skipped", "zero grads");
    for (r = 0; r < RUNS; r++)
        printf("%-20s  %10.4f  %12.2f  %8.1f  %10.0f  %7lld  %9.2f%%\n", run_name[r], mean_last(res[r].loss, steps, 10),
               res[r].planned / 1048576.0, res[r].ms, res[r].scale[steps - 1], (long long)res[r].skipped,
               100.0 * mean_last(res[r].zeros, steps, steps));
    printf("(final loss: mean of the last 10 steps; zero grads: share of gradient values exactly 0, mean over the run;\n"
           " planned: only the matmuls keep 16-bit copies, so the saving is the part of the step they hold)\n");

    printf("\nunderflow: one backward of loss * m on the first batch (%d x %d tokens); gradient values exactly 0\n", B, T);
    printf("%10s  %10s  %10s  %18s\n", "m", "fp32", "fp16", "fp16, loss x 65536");
    for (i = 0; i < MULTS && rc == 0; i++) {
        mults[i] = ldexp(1.0, -4 * i);
        zt[i][0] = zeros_after_backward(tok, LT_F32, mults[i], 1.0f);
        zt[i][1] = zeros_after_backward(tok, LT_F16, mults[i], 1.0f);
        zt[i][2] = zeros_after_backward(tok, LT_F16, mults[i], 65536.0f);
        if (zt[i][0] < 0 || zt[i][1] < 0 || zt[i][2] < 0) { rc = 1; break; }
        printf("%8s%-2d  %9.2f%%  %9.2f%%  %17.2f%%\n", i ? "2^-" : "", i ? 4 * i : 1, 100 * zt[i][0], 100 * zt[i][1],
               100 * zt[i][2]);
    }
    if (rc) goto out;
    printf("(plain fp16 loses the smallest gradients first; the loss scale lifts them back into range)\n");

    for (i = 0; i < steps; i++) x[i] = i + 1;
    p = lt_plot_create("training loss by precision", "step", "loss");
    for (r = 0; r < RUNS; r++) lt_plot_series(p, run_name[r], x, res[r].loss, steps);
    lt_plot_panel(p, "gradient values exactly 0 (before unscaling)", "step", "fraction");
    for (r = 0; r < RUNS; r++) lt_plot_series(p, run_name[r], x, res[r].zeros, steps);
    lt_plot_panel(p, "GradScaler's loss scale (fp16 + GradScaler)", "step", "scale (log)");
    lt_plot_log_y(p, 1);
    lt_plot_series(p, "loss scale", x, res[2].scale, steps);
    if (!lesson_plot_save("lesson_precision", p, plot, "\nwrote %s\n")) rc = 1;
out:
    free(tok);
    free(x);
    for (r = 0; r < RUNS; r++) {
        free(res[r].loss);
        free(res[r].zeros);
        free(res[r].scale);
    }
    return rc;
}

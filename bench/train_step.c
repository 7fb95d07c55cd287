/* cc -O2 -march=native -fopenmp -I. bench/train_step.c -o build/bench_train_step -lm

   bench_train_step: time ltrain's GPT-2 (or Llama-style) training step (zero_grad, forward, cross-entropy,
   backward, AdamW) on random tokens, and print one JSON line: the per-step milliseconds, peak
   RSS and the model size.  bench/train_step.py runs it alternately with the same step in PyTorch
   and prints the comparison; run that (or `make bench`) rather than this directly.
     --config char-small|gpt-mini|gpt2-124M|llama-mini   or  --model V,L,H,C,T,B[,KV,HIDDEN]
              (vocabulary, layers, heads, channels, sequence length, batch; with KV and HIDDEN a
              Llama-style model: KV key/value heads, SwiGLU hidden size; llama-mini is
              50304,6,6,384,256,4,2,1024)
     --threads N (0: OpenMP's default)  --steps N (10)  --warmup N (2)
     --compile the step captured once (lt_compile) and replayed (lt_plan_run) instead of eager
     --peak    instead: the best lt_sgemm GFLOP/s at 2048^3 with these threads (the MFU base)
     --phases  also print the median ms of zero_grad / forward+loss / backward / AdamW to stderr
     --trace   also print the peak RSS (VmHWM) and the seconds since the start after each setup
               stage and the first steps to stderr
     --precision fp32|bf16|fp16  the step at this precision (lt_set_precision; fp32 default)
     --profile also print lt_profile_print's table of kernel time by op (the timed steps, warm-up not
              counted) to stderr; with --phases, the share table of bench/step_shares.md
     --cpu     time in the process's CPU time instead of the wall clock: with --threads 1, the step
              without the time the host took the CPU away (steal), for comparing two steps on a
              busy machine (bench/ab.sh); with more threads it also counts their waits, not a step time
   The memory floor in the JSON line: state_mb = 16 bytes a parameter (weights, gradients, AdamW's
   two moments), saved_mb = the activations the backward pass keeps (lt_plan_saved_bytes of the
   compiled step; null in eager mode, which compiles nothing: take it from a --compile run, the
   model and the kernels are the same; null too if the plan fell back to eager), floor_mb = their
   sum.  MB = 2^20 bytes, as rss_mb.  loss0 is the first step's loss (before any update: about
   ln V for a fresh model), loss the last one's; compile_s the seconds lt_compile took (0 in eager). */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static int cpu_clock;   /* --cpu */
static double now_ms(void) {
    struct timespec t;
    clock_gettime(cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static long peak_rss_kb(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;   /* KiB on Linux */
}

/* VmHWM (the peak resident set so far, KiB) from /proc/self/status; -1 where there is none */
static long vm_hwm_kb(void) {
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = atol(line + 6);
    fclose(f);
    return kb;
}
static int tracing;
static void trace(const char *what) {
    static double t0 = -1;
    double t = now_ms();
    if (t0 < 0) t0 = t;
    if (tracing) fprintf(stderr, "trace %-28s VmHWM %8.1f MB  at %8.3f s\n", what, (double)vm_hwm_kb() / 1024.0, (t - t0) / 1e3);
}

/* a config: GPT-2 when kv_heads is 0, else Llama-style (RMSNorm, RoPE, SwiGLU of `hidden`, GQA with
   kv_heads key/value heads, no biases, tied head) */
typedef struct { const char *name; int V, L, H, C, T, B, KV, hidden; } bench_cfg;

/* the step lt_compile captures: the GPT's loss on the batch at fixed addresses */
typedef struct { lt_gpt *g; const int32_t *ids, *tg; int B, T; } bench_step;
static lt_tensor *bench_loss(lt_ctx *ctx, void *u) {
    const bench_step *b = (const bench_step *)u;
    (void)ctx;
    return lt_gpt_loss(b->g, b->ids, b->tg, b->B, b->T);
}
static const bench_cfg configs[] = {
    {"char-small", 256, 4, 4, 256, 256, 8, 0, 0},
    {"gpt-mini", 50304, 6, 6, 384, 256, 4, 0, 0},
    {"gpt2-124M", 50304, 12, 12, 768, 64, 4, 0, 0},
    {"llama-mini", 50304, 6, 6, 384, 256, 4, 2, 1024},
};

static int peak(void) {
    int64_t n = 2048, i;
    float *a = (float *)malloc((size_t)(n * n) * 4), *b = (float *)malloc((size_t)(n * n) * 4),
          *c = (float *)malloc((size_t)(n * n) * 4);
    double best = 1e30;
    int r;
    if (!a || !b || !c) return 1;
#ifdef LT__HUGE   /* (bench/ab.sh builds this file on older headers too) */
    lt__hugepages(a, (size_t)(n * n) * 4);   /* 2 MiB pages, as the library's own buffers (and numpy's) */
    lt__hugepages(b, (size_t)(n * n) * 4);
    lt__hugepages(c, (size_t)(n * n) * 4);
#endif
    for (i = 0; i < n * n; i++) { a[i] = (float)(i % 13) * 0.01f; b[i] = (float)(i % 7) * 0.01f; }
    for (r = 0; r < 6; r++) {
        double t = now_ms();
        lt_sgemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        t = now_ms() - t;
        if (t < best) best = t;
    }
    printf("{\"peak_gflops\": %.2f, \"threads\": %d, \"kernel\": \"%s\"}\n", 2.0 * (double)(n * n * n) / best * 1e-6,
           lt_get_threads(), lt_kernel_name());
    free(a); free(b); free(c);
    return 0;
}

int main(int argc, char **argv) {
    bench_cfg cfg = configs[0];
    int threads = 0, steps = 10, warmup = 2, do_peak = 0, phases = 0, compiled = 0, profile = 0, i, s;
    lt_dtype precision = LT_F32;
    lt_plan *plan = NULL;
    bench_step bs;
    double *ph = NULL;
    lt_ctx *ctx;
    lt_gpt *g;
    lt_optim *opt;
    lt_gpt_config gc;
    lt_adamw_config ac;
    int32_t *ids, *tg;
    double *ms;
    float last_loss = 0, first_loss = 0;
    double compile_ms = 0;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            const char *n = argv[++i];
            int k, found = 0;
            for (k = 0; k < (int)(sizeof configs / sizeof configs[0]); k++)
                if (!strcmp(configs[k].name, n)) { cfg = configs[k]; found = 1; }
            if (!found) { fprintf(stderr, "unknown config %s\n", n); return 2; }
        } else if (!strcmp(argv[i], "--model") && i + 1 < argc) {
            int n = sscanf(argv[++i], "%d,%d,%d,%d,%d,%d,%d,%d", &cfg.V, &cfg.L, &cfg.H, &cfg.C, &cfg.T, &cfg.B,
                           &cfg.KV, &cfg.hidden);
            if (n != 6 && n != 8) {
                fprintf(stderr, "--model wants V,L,H,C,T,B (GPT-2) or V,L,H,C,T,B,KV,HIDDEN (Llama-style)\n");
                return 2;
            }
            if (n == 6) cfg.KV = cfg.hidden = 0;
            cfg.name = "custom";
        } else if (!strcmp(argv[i], "--precision") && i + 1 < argc) {
            const char *p = argv[++i];
            precision = !strcmp(p, "bf16") ? LT_BF16 : !strcmp(p, "fp16") ? LT_F16 : LT_F32;
            if (precision == LT_F32 && strcmp(p, "fp32")) { fprintf(stderr, "--precision wants fp32, bf16 or fp16\n"); return 2; }
        } else if (!strcmp(argv[i], "--compile")) {
            compiled = 1;
        } else if (!strcmp(argv[i], "--phases")) {
            phases = 1;
        } else if (!strcmp(argv[i], "--trace")) {
            tracing = 1;
        } else if (!strcmp(argv[i], "--profile")) {
            profile = 1;
        } else if (!strcmp(argv[i], "--peak")) {
            do_peak = 1;
        } else if (!strcmp(argv[i], "--cpu")) {
            cpu_clock = 1;
        } else {
            printf("usage: bench_train_step [--config char-small|gpt-mini|gpt2-124M|llama-mini\n"
                   "                        | --model V,L,H,C,T,B[,KV,HIDDEN]]\n"
                   "                        [--threads N] [--steps 10] [--warmup 2] [--compile] [--peak] [--phases]\n"
                   "                        [--trace] [--profile] [--precision fp32|bf16|fp16] [--cpu]\n");
            return !strcmp(argv[i], "--help") ? 0 : 2;
        }
    }
    if (threads > 0) lt_set_threads(threads);
    if (do_peak) return peak();

    trace("start");
    ctx = lt_ctx_create(1337);
    trace("lt_ctx_create");
    if (ctx && lt_set_precision(ctx, precision) != LT_OK) { fprintf(stderr, "%s\n", lt_error(ctx)); return 1; }
    gc = cfg.KV ? lt_llama_config(cfg.V, cfg.T, cfg.L, cfg.H, cfg.KV, cfg.C, cfg.hidden)
                : lt_gpt2_config(cfg.V, cfg.T, cfg.L, cfg.H, cfg.C);
    g = ctx ? lt_gpt_create(ctx, &gc) : NULL;
    ac = lt_adamw_defaults();
    ac.lr = 3e-4; ac.beta1 = 0.9; ac.beta2 = 0.95; ac.weight_decay = 0.1;
    trace("lt_gpt_create");
    opt = g ? lt_adamw_create(ctx, lt_gpt_params(g), ac) : NULL;
    trace("lt_adamw_create");
    ids = (int32_t *)malloc((size_t)cfg.B * (size_t)cfg.T * sizeof(int32_t));
    tg = (int32_t *)malloc((size_t)cfg.B * (size_t)cfg.T * sizeof(int32_t));
    ms = (double *)malloc((size_t)(steps > 0 ? steps : 1) * sizeof(double));
    ph = (double *)malloc((size_t)(steps > 0 ? steps : 1) * 4 * sizeof(double));
    if (!opt || !ids || !tg || !ms || !ph) {
        fprintf(stderr, "setup failed: %s\n", ctx ? lt_error(ctx) : "out of memory");
        return 1;
    }
    {
        lt_rng r;
        lt_rng_seed(&r, 42);
        for (i = 0; i < cfg.B * cfg.T; i++) { ids[i] = (int32_t)(lt_rng_u64(&r) % (uint64_t)cfg.V); }
        for (i = 0; i < cfg.B * cfg.T; i++) tg[i] = (int32_t)(lt_rng_u64(&r) % (uint64_t)cfg.V);
    }
    bs.g = g; bs.ids = ids; bs.tg = tg; bs.B = cfg.B; bs.T = cfg.T;
    compile_ms = now_ms();
    if (compiled && !(plan = lt_compile(ctx, bench_loss, &bs))) goto failed;
    compile_ms = now_ms() - compile_ms;
    if (compiled) trace("lt_compile");
    for (s = -warmup; s < steps; s++) {
        double t[5];
        if (s == 0 && profile) lt_set_profiling(ctx, 1);   /* (also clears the counts: the timed steps only) */
        t[0] = now_ms();
        lt_zero_grad_lazy(ctx);   /* as torch's zero_grad(set_to_none=True) on the other side */
        t[1] = now_ms();
        if (plan) {   /* forward and backward in one replay: the time goes to "backward" */
            t[2] = now_ms();
            if (lt_plan_run(plan, &last_loss) != LT_OK) goto failed;
        } else {
            lt_tensor *loss = lt_gpt_loss(g, ids, tg, cfg.B, cfg.T);
            last_loss = lt_item(loss);
            t[2] = now_ms();
            if (lt_backward(ctx, loss) != LT_OK) goto failed;
        }
        t[3] = now_ms();
        if (lt_optim_step(opt, -1.0) != LT_OK) goto failed;
        t[4] = now_ms();
        if (s == -warmup) first_loss = last_loss;
        if (s <= 0) {
            char what[64];
            snprintf(what, sizeof what, "step %d (warm-up %d)", s + warmup + 1, warmup);
            trace(what);
        }
        if (s >= 0) {
            ms[s] = t[4] - t[0];
            for (i = 0; i < 4; i++) ph[i * steps + s] = t[i + 1] - t[i];
        }
    }
    if (phases && steps > 0) {
        static const char *const names[4] = {"zero_grad", "forward+loss", "backward", "adamw"};
        fprintf(stderr, "%s, %d threads, median ms:", cfg.name, lt_get_threads());
        for (i = 0; i < 4; i++) {
            double *p = ph + i * steps;
            int a, b;
            for (a = 1; a < steps; a++)   /* insertion sort: steps is small */
                for (b = a; b > 0 && p[b - 1] > p[b]; b--) { double x = p[b]; p[b] = p[b - 1]; p[b - 1] = x; }
            fprintf(stderr, "  %s %.1f", names[i], p[steps / 2]);
        }
        fprintf(stderr, "\n");
    }
    if (profile && steps > 0) {   /* the op table, then the means of the phases it does not cover */
        double sum[5] = {0, 0, 0, 0, 0};
        for (s = 0; s < steps; s++) {
            sum[4] += ms[s];
            for (i = 0; i < 4; i++) sum[i] += ph[i * steps + s];
        }
        lt_profile_print(ctx, stderr);
        fprintf(stderr, "profile: %d steps, mean ms: step %.2f zero_grad %.2f forward+loss %.2f backward %.2f adamw %.2f\n",
                steps, sum[4] / steps, sum[0] / steps, sum[1] / steps, sum[2] / steps, sum[3] / steps);
    }
    {
        double state = 16.0 * (double)lt_gpt_num_params(g) / 1048576.0, saved = (double)lt_plan_saved_bytes(plan) / 1048576.0;
        char sv[32], fl[32];
        if (plan && !lt_plan_is_eager(plan)) { snprintf(sv, sizeof sv, "%.1f", saved); snprintf(fl, sizeof fl, "%.1f", state + saved); }
        else { snprintf(sv, sizeof sv, "null"); snprintf(fl, sizeof fl, "null"); }
        printf("{\"impl\": \"%s\", \"config\": \"%s\", \"arch\": \"%s\", \"threads\": %d, \"kernel\": \"%s\", \"params\": %lld, "
               "\"loss0\": %.4f, \"loss\": %.4f, \"compile_s\": %.3f, \"rss_mb\": %.1f, \"plan_mb\": %.1f, \"state_mb\": %.1f, \"saved_mb\": %s, "
               "\"floor_mb\": %s, \"ms\": [", plan ? "ltrain compiled" : "ltrain", cfg.name, cfg.KV ? "llama" : "gpt2",
               lt_get_threads(),
               lt_kernel_name_for(precision), (long long)lt_gpt_num_params(g), first_loss, last_loss, plan ? compile_ms / 1e3 : 0.0,
               (double)peak_rss_kb() / 1024.0,
               (double)lt_plan_bytes(plan) / 1048576.0, state, sv, fl);
    }
    for (s = 0; s < steps; s++) printf("%s%.3f", s ? ", " : "", ms[s]);
    printf("]}\n");
    lt_plan_destroy(plan);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    free(ids); free(tg); free(ms); free(ph);
    return 0;
failed:
    fprintf(stderr, "step failed: %s\n", lt_error(ctx));
    return 1;
}

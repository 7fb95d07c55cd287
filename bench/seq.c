/* cc -O2 -march=native -fopenmp -I. bench/seq.c -o build/bench_seq -lm      (make bench-seq)

   bench_seq: the two measurements of the sequences issue, on tinyshakespeare.

   bench_seq pad [flags]    paragraphs, the same token budget: bucketed vs random batching.
                            Training steps (forward, backward, AdamW) alternate between the two
                            loaders round by round; prints padding fraction, positions/s and real
                            tokens/s per round, then the medians and the ratio.
   bench_seq sched [flags]  time to reach a validation loss: a fixed T against a length schedule
                            (the stream's rows cut to the schedule's length, B*T tokens per step
                            either way).  Runs alternate; evaluation time is not counted.

   flags: --data PATH (../shared/data/tinyshakespeare.txt)  --rounds N (pad 5, sched 2)
          --steps N (pad: per round 6; sched: at most 600)  --layers N (2) --channels N (pad 128,
          sched 64) --heads N (4) --seq T (pad 256, sched 128) --tokens N (pad 4096, sched 2048)
          --target X (sched: val loss, 2.0) --schedule SPEC (sched: 16:T:300:step) --threads N */
#define _POSIX_C_SOURCE 200809L
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *data, *schedule;
    int rounds, steps, layers, channels, heads, seq, threads;
    long tokens;
    double target;
} opts_t;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* this process's CPU seconds (all threads): robust to other programs sharing the cores;
   with --threads 1 it is the work done */
static double cpu_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static lt_gpt *model(lt_ctx *ctx, const opts_t *o) {
    lt_gpt_config c;
    memset(&c, 0, sizeof c);
    c.vocab = 256; c.ctx = o->seq; c.layers = o->layers; c.heads = o->heads; c.channels = o->channels;
    return lt_gpt_create(ctx, &c);
}

/* One optimizer step on one batch, token-weighted; returns the loss. */
static double step(lt_ctx *ctx, lt_gpt *g, lt_optim *opt, const lt_batch *b, double lr) {
    lt_tensor *loss;
    double l;
    lt_zero_grad(ctx);
    loss = lt_gpt_loss_ex(g, b->ids, b->targets, b->B, b->T, b->lengths, (double)b->real);
    l = lt_item(loss);
    lt_backward(ctx, loss);
    lt_clip_grad_norm(ctx, lt_gpt_params(g), 1.0);
    lt_optim_step(opt, lr);
    return l;
}

static int bench_pad(const opts_t *o) {
    const char *name[2] = {"bucket", "random"};
    lt_ctx *ctx[2] = {NULL, NULL};
    lt_gpt *g[2] = {NULL, NULL};
    lt_optim *opt[2] = {NULL, NULL};
    lt_seq_loader *sl[2] = {NULL, NULL};
    lt_batch b;
    double *real_tps[2], *pos_tps[2], *cpu_tps[2], pos_all[2] = {0, 0}, real_all[2] = {0, 0}, m[2][3];
    int mode, r, k, rc = 1;
    memset(&b, 0, sizeof b);
    real_tps[0] = (double *)malloc(6 * (size_t)o->rounds * sizeof(double));
    if (!real_tps[0]) return 1;
    real_tps[1] = real_tps[0] + o->rounds; pos_tps[0] = real_tps[1] + o->rounds; pos_tps[1] = pos_tps[0] + o->rounds;
    cpu_tps[0] = pos_tps[1] + o->rounds; cpu_tps[1] = cpu_tps[0] + o->rounds;
    for (mode = 0; mode < 2; mode++) {
        lt_seq_config c = lt_seq_defaults();
        c.split = LT_SEQ_PARAGRAPHS; c.max_len = o->seq; c.batch_tokens = o->tokens; c.seed = 1;
        c.batching = mode ? LT_BATCH_RANDOM : LT_BATCH_BUCKET;
        ctx[mode] = lt_ctx_create(1);
        if (!ctx[mode]) goto out;
        g[mode] = model(ctx[mode], o);
        opt[mode] = g[mode] ? lt_adamw_create(ctx[mode], lt_gpt_params(g[mode]), lt_adamw_defaults()) : NULL;
        sl[mode] = opt[mode] ? lt_seq_open(ctx[mode], o->data, &c, 256) : NULL;
        if (!sl[mode]) { fprintf(stderr, "bench_seq: %s\n", lt_error(ctx[mode])); goto out; }
        printf("%s: %lld pieces of <= %d tokens, %lld batches per epoch of <= %ld tokens\n", name[mode],
               (long long)lt_seq_count(sl[mode]), o->seq, (long long)lt_seq_batches(sl[mode], 0), o->tokens);
    }
    printf("model: L=%d C=%d H=%d T=%d, %d threads; %d rounds of %d steps, alternating\n", o->layers, o->channels,
           o->heads, o->seq, lt_get_threads(), o->rounds, o->steps);
    for (r = 0; r < o->rounds; r++)
        for (mode = 0; mode < 2; mode++) {
            int mm = r % 2 ? 1 - mode : mode;   /* ABBA order against drift */
            double t0, t, c0, c, pos = 0, real = 0;
            t0 = now_s();
            c0 = cpu_s();
            for (k = 0; k < o->steps; k++) {
                if (lt_seq_next(sl[mm], 0, &b) != LT_OK) goto out;
                step(ctx[mm], g[mm], opt[mm], &b, 1e-3);
                pos += (double)b.B * b.T;
                real += (double)b.real;
            }
            t = now_s() - t0;
            c = cpu_s() - c0;
            if (lt_failed(ctx[mm])) { fprintf(stderr, "bench_seq: %s\n", lt_error(ctx[mm])); goto out; }
            real_tps[mm][r] = real / t; pos_tps[mm][r] = pos / t; cpu_tps[mm][r] = real / c;
            pos_all[mm] += pos; real_all[mm] += real;
            printf("round %d %-6s: padding %5.1f%%  %8.0f positions/s  %8.0f real tokens/s  %8.0f real tokens/cpu-s  "
                   "(%.2f s)\n", r, name[mm], 100 * (1 - real / pos), pos / t, real / t, real / c, t);
            fflush(stdout);
        }
    for (mode = 0; mode < 2; mode++) {
        m[mode][0] = median(real_tps[mode], o->rounds);
        m[mode][1] = median(pos_tps[mode], o->rounds);
        m[mode][2] = median(cpu_tps[mode], o->rounds);
        printf("%-6s: padding %.1f%% | median %.0f positions/s, %.0f real tokens/s, %.0f real tokens per CPU second\n",
               name[mode], 100 * (1 - real_all[mode] / pos_all[mode]), m[mode][1], m[mode][0], m[mode][2]);
    }
    printf("bucket / random real tokens/s: %.2fx wall, %.2fx CPU time (goal >= 1.5x); bucket padding %.1f%% "
           "(goal <= 5%%)\n", m[0][0] / m[1][0], m[0][2] / m[1][2], 100 * (1 - real_all[0] / pos_all[0]));
    rc = 0;
out:
    lt_batch_free(&b);
    for (mode = 0; mode < 2; mode++) {
        lt_seq_destroy(sl[mode]); lt_optim_destroy(opt[mode]); lt_gpt_destroy(g[mode]); lt_ctx_destroy(ctx[mode]);
    }
    free(real_tps[0]);
    return rc;
}

/* The mean loss over the whole validation split (windows of B x T), no gradients. */
static double val_loss(lt_ctx *ctx, lt_gpt *g, lt_loader *vl, int B, int T, int32_t *in, int32_t *tg, int nb) {
    double s = 0;
    int k;
    lt_set_grad_enabled(ctx, 0);
    lt_set_training(ctx, 0);
    lt_loader_set_pos(vl, 0, 0);
    for (k = 0; k < nb; k++) {
        lt_reset(ctx);
        lt_loader_next(vl, in, tg);
        s += lt_item(lt_gpt_loss(g, in, tg, B, T));
    }
    lt_reset(ctx);
    lt_set_grad_enabled(ctx, 1);
    lt_set_training(ctx, 1);
    return s / nb;
}

/* One run: seconds of training (evaluation excluded) until val <= target; -1 when not reached. */
static double sched_run(const opts_t *o, const int32_t *tok, int64_t n, const lt_len_schedule *ls, int *steps_out,
                        double *final_val, double *cpu_out) {
    int B = (int)(o->tokens / o->seq), T = o->seq, s, nb;
    int64_t ntrain = n * 9 / 10;
    lt_ctx *ctx = lt_ctx_create(7);
    lt_gpt *g = ctx ? model(ctx, o) : NULL;
    lt_adamw_config ac = lt_adamw_defaults();
    lt_optim *opt;
    lt_loader *ld, *vl;
    lt_schedule sc;
    lt_batch b;
    int32_t *in = (int32_t *)malloc((size_t)B * T * sizeof(int32_t)), *tg = (int32_t *)malloc((size_t)B * T * sizeof(int32_t));
    double train_s = 0, train_cpu = 0, v = 0, result = -1;
    memset(&b, 0, sizeof b);
    ac.lr = 3e-3; ac.beta2 = 0.95; ac.weight_decay = 0.1;
    opt = g ? lt_adamw_create(ctx, lt_gpt_params(g), ac) : NULL;
    ld = opt ? lt_loader_from_tokens(ctx, tok, ntrain, B, T) : NULL;
    vl = ld ? lt_loader_from_tokens(ctx, tok + ntrain, n - ntrain, B, T) : NULL;
    if (!vl || !in || !tg) { fprintf(stderr, "bench_seq: %s\n", ctx ? lt_error(ctx) : "out of memory"); goto out; }
    lt_loader_shuffle(ld, 7);
    nb = (int)((n - ntrain - 1) / ((int64_t)B * T));
    if (nb > 16) nb = 16;
    memset(&sc, 0, sizeof sc);
    sc.lr = 3e-3; sc.min_lr = 3e-4; sc.warmup = 20; sc.total = o->steps; sc.decay = LT_SCHED_COSINE;
    for (s = 0; s < o->steps; s++) {
        double t0 = now_s(), c0 = cpu_s();
        lt_loader_next(ld, in, tg);
        lt_batch_from_rows(ctx, &b, in, tg, NULL, B, T, ls ? lt_len_at(ls, s) : 0);
        step(ctx, g, opt, &b, lt_schedule_lr(&sc, s));
        train_s += now_s() - t0;
        train_cpu += cpu_s() - c0;
        if ((s + 1) % 25 == 0) {
            v = val_loss(ctx, g, vl, B, T, in, tg, nb);
            if (o->threads < 0 || getenv("BENCH_SEQ_VERBOSE")) printf("  step %d: %.1f s, val %.4f\n", s + 1, train_s, v);
            if (v <= o->target) { result = train_s; *cpu_out = train_cpu; break; }
        }
    }
    *steps_out = s + 1;
    *final_val = v;
    if (lt_failed(ctx)) { fprintf(stderr, "bench_seq: %s\n", lt_error(ctx)); result = -2; }
out:
    lt_batch_free(&b);
    free(in); free(tg);
    lt_loader_destroy(ld); lt_loader_destroy(vl); lt_optim_destroy(opt); lt_gpt_destroy(g); lt_ctx_destroy(ctx);
    return result;
}

static int bench_sched(const opts_t *o) {
    void *buf;
    size_t size, i;
    int32_t *tok;
    lt_ctx *ctx = lt_ctx_create(1);
    lt_len_schedule ls;
    char err[200], spec[64];
    double t[2][16], tc[2][16];
    int r, mode, n[2] = {0, 0};
    if (!ctx || lt_read_file(ctx, o->data, &buf, &size) != LT_OK) {
        fprintf(stderr, "bench_seq: %s\n", ctx ? lt_error(ctx) : "out of memory");
        lt_ctx_destroy(ctx);
        return 1;
    }
    tok = (int32_t *)malloc(size * sizeof(int32_t));
    if (!tok) return 1;
    for (i = 0; i < size; i++) tok[i] = ((unsigned char *)buf)[i];
    lt_free(buf);
    if (o->schedule) snprintf(spec, sizeof spec, "%s", o->schedule);
    else snprintf(spec, sizeof spec, "16:%d:300:step", o->seq);
    if (!lt_len_parse(spec, &ls, err, sizeof err)) { fprintf(stderr, "bench_seq: --schedule: %s\n", err); return 1; }
    printf("model: L=%d C=%d H=%d, B*T = %ld tokens per step, T = %d; schedule %s; target val loss %.3f; "
           "%d threads\n", o->layers, o->channels, o->heads, o->tokens, o->seq, spec, o->target, lt_get_threads());
    for (r = 0; r < o->rounds && r < 16; r++)
        for (mode = 0; mode < 2; mode++) {
            int mm = r % 2 ? 1 - mode : mode, steps = 0;
            double v = 0, cpu = 0, s = sched_run(o, tok, (int64_t)size, mm ? &ls : NULL, &steps, &v, &cpu);
            printf("round %d %-9s: %s %.1f s (%.1f CPU s) of training, %d steps, val %.4f\n", r,
                   mm ? "schedule" : "fixed T", s >= 0 ? "reached target in" : "NOT reached:", s >= 0 ? s : 0.0, cpu,
                   steps, v);
            fflush(stdout);
            if (s >= 0) { tc[mm][n[mm]] = cpu; t[mm][n[mm]++] = s; }
        }
    if (n[0] && n[1]) {
        double a = median(t[0], n[0]), b = median(t[1], n[1]), ac = median(tc[0], n[0]), bc = median(tc[1], n[1]);
        printf("median time to val %.3f: fixed T %.1f s, schedule %.1f s: %.2fx wall; CPU %.1f s vs %.1f s: %.2fx "
               "(goal <= 0.8x)\n", o->target, a, b, b / a, ac, bc, bc / ac);
    }
    free(tok);
    lt_ctx_destroy(ctx);
    return 0;
}

int main(int argc, char **argv) {
    opts_t o;
    int i, pad;
    if (argc < 2 || (strcmp(argv[1], "pad") && strcmp(argv[1], "sched"))) {
        printf("usage: bench_seq pad|sched [flags] (see the first comment of bench/seq.c)\n");
        return argc < 2 ? 0 : 1;
    }
    pad = !strcmp(argv[1], "pad");
    memset(&o, 0, sizeof o);
    o.data = "../shared/data/tinyshakespeare.txt";
    o.rounds = pad ? 5 : 2; o.steps = pad ? 6 : 600; o.layers = 2; o.channels = pad ? 128 : 64; o.heads = 4;
    o.seq = pad ? 256 : 128; o.tokens = pad ? 4096 : 2048; o.target = 2.0;
    for (i = 2; i + 1 < argc; i += 2) {
        const char *f = argv[i], *v = argv[i + 1];
        if (!strcmp(f, "--data")) o.data = v;
        else if (!strcmp(f, "--schedule")) o.schedule = v;
        else if (!strcmp(f, "--rounds")) o.rounds = atoi(v);
        else if (!strcmp(f, "--steps")) o.steps = atoi(v);
        else if (!strcmp(f, "--layers")) o.layers = atoi(v);
        else if (!strcmp(f, "--channels")) o.channels = atoi(v);
        else if (!strcmp(f, "--heads")) o.heads = atoi(v);
        else if (!strcmp(f, "--seq")) o.seq = atoi(v);
        else if (!strcmp(f, "--tokens")) o.tokens = atol(v);
        else if (!strcmp(f, "--target")) o.target = atof(v);
        else if (!strcmp(f, "--threads")) { o.threads = atoi(v); lt_set_threads(o.threads); }
        else { fprintf(stderr, "bench_seq: unknown flag %s\n", f); return 1; }
    }
    if (o.rounds < 1 || o.steps < 1 || o.seq < 1 || o.tokens < o.seq) {
        fprintf(stderr, "bench_seq: --rounds, --steps, --seq must be >= 1 and --tokens >= --seq\n");
        return 1;
    }
    return pad ? bench_pad(&o) : bench_sched(&o);
}

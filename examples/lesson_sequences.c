/* cc -O2 -fopenmp -I. examples/lesson_sequences.c -o build/lesson_sequences -lm

   Lesson: sequence lengths — bucketing wastes less padding; does starting on short sequences pay?

   Part 1.  Real data comes as pieces of different lengths (here the lines, or the paragraphs, of
   the text).  A batch is a rectangle: every row is padded to the longest one, and the padding
   costs compute but teaches nothing (lt_gpt_loss_ex masks it out of the loss and the attention).
   Packing the pieces in a random order mixes a 3-token line with a 60-token one; grouping pieces
   of similar length into buckets first (LT_BATCH_BUCKET) makes each batch nearly full.  Both use
   the same token budget per batch (rows * padded length <= --budget).  The program counts the
   padding over one epoch and trains the same GPT on each for --steps batches: the real tokens
   per second are what the padding costs.

   Part 2.  A sequence-length schedule (lt_len_at: here linear from 16 to 64 over the first half)
   starts on short rows: lt_batch_from_rows cuts each 64-token row into shorter ones, so a step
   holds the same tokens but attention, whose cost grows with T^2, is cheaper, and the model
   first learns local statistics.  Whether that wins depends on how much of a step attention
   costs: on this tiny model (C=64, T=64) it is little, so expect a tie or a small loss; the gain
   grows with T.  Both runs get the same wall time (the fixed-T run's time for
   --steps steps); the validation loss at T = 64 on held-out text (the last 10%) is compared.

   Losses and padding go to build/lesson_sequences.svg.

   With --tokenizer gpt2|FILE.json the lengths are counted in tokens instead of bytes: each line
   (or paragraph) is encoded on its own, behind an end-of-text token, and the pieces are cut where
   that token starts one (LT_SEQ_EOT); the model's vocabulary is the tokenizer's.  A small
   vocabulary trained on the text keeps the model small: build/tokenize --train-vocab 1024 ...

       build/lesson_sequences [text file (ltrain.h)] [--split lines|paragraphs] [--budget N] [--steps N]
                              [--threads N] [--plot PATH.svg] [--tokenizer gpt2|FILE.json] [--tokenizer-dir DIR]

   Read @@DATA (sequences, lt_seq_*) and @@TRAIN (lt_len_*) in ltrain.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "lesson.h"
#include "tokenizer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TMAX 64     /* the model context and the longest sequence */
#define SB 8        /* part 2: rows of the stream loader */
#define VAL_BATCHES 8

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int vocab = 256;   /* the tokenizer's with --tokenizer */
static lt_gpt *make_gpt(lt_ctx *ctx) {
    lt_gpt_config cfg = lt_gpt2_config(256, TMAX, 2, 4, 64);    /* V, ctx, layers, heads, channels */
    cfg.vocab = vocab;
    return lt_gpt_create(ctx, &cfg);
}

/* --tokenizer: the pieces (lines, or paragraphs: runs of non-blank lines) encoded one by one, each
   behind the end-of-text id eot; malloc'd, *m ids (NULL after printing why). */
static int32_t *tok_pieces(lt_tokenizer *tk, lt_ctx *ctx, const char *s, size_t n, lt_seq_split split, int32_t eot,
                           int64_t *m) {
    int32_t *ids = (int32_t *)malloc((4 * n + 1) * sizeof(int32_t));   /* each byte at most 3 ids (NFC), one eot per line */
    size_t i = 0, j;
    int64_t k;
    *m = 0;
    if (!ids) { fprintf(stderr, "lesson_sequences: out of memory\n"); return NULL; }
    while (i < n) {
        for (j = i; j < n && s[j] != '\n'; j++) {}
        j += j < n;                                            /* the line with its newline */
        if (split == LT_SEQ_PARAGRAPHS && j - i > 1)           /* a paragraph runs to a blank line */
            while (j < n && s[j] != '\n') { while (j < n && s[j] != '\n') j++; j += j < n; }
        if (j - i == 1 && s[i] == '\n') { i = j; continue; }  /* a blank line is no piece (as in bytes) */
        ids[(*m)++] = eot;
        if ((k = lt_tok_encode(tk, s + i, j - i, 0, ids + *m, 3 * (int64_t)(j - i))) < 0) {
            fprintf(stderr, "lesson_sequences: %s\n", lt_error(ctx));
            free(ids);
            return NULL;
        }
        *m += k;
        i = j;
    }
    return ids;
}

typedef struct {
    double pad_frac;       /* padding share of all batch slots over one epoch */
    int64_t batches;       /* in one epoch */
    double tok_s;          /* real (non-padding) tokens per second while training */
    double *loss;          /* per step */
    double mean_rows, mean_len;
} batch_result;

/* Part 1: one epoch's padding, then `steps` AdamW steps.  0 on a library error (printed). */
static int run_batching(const char *text, size_t n, lt_seq_split split, lt_batching how, int64_t budget, int steps,
                        const int32_t *pieces, int64_t npieces, int32_t eot, batch_result *r) {
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt *g = make_gpt(ctx);
    lt_optim *opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    lt_seq_config sc = lt_seq_defaults();
    lt_seq_loader *sl;
    lt_batch b;
    int64_t k, real = 0, slots = 0, rows = 0;
    double t0;
    int step, ok = 1;

    memset(&b, 0, sizeof b);
    sc.split = split; sc.max_len = TMAX; sc.batching = how; sc.batch_tokens = budget; sc.seed = 7;
    if (pieces) { sc.split = LT_SEQ_EOT; sc.eot = eot; }   /* --tokenizer: tok_pieces' stream */
    sl = pieces ? lt_seq_from_tokens(ctx, pieces, npieces, &sc) : lt_seq_from_text(ctx, text, n, &sc);
    r->batches = sl ? lt_seq_batches(sl, 0) : 0;
    for (k = 0; k < r->batches && lt_seq_next(sl, 0, &b) == LT_OK; k++) {
        real += b.real;
        slots += (int64_t)b.B * b.T;
        rows += b.B;
    }
    r->pad_frac = slots ? 1.0 - (double)real / (double)slots : 0;
    r->mean_rows = r->batches ? (double)rows / (double)r->batches : 0;
    r->mean_len = rows ? (double)slots / (double)rows : 0;

    real = 0;
    t0 = now_s();
    for (step = 0; step < steps && sl && !lt_failed(ctx); step++) {
        lt_tensor *loss;
        lt_zero_grad(ctx);
        if (lt_seq_next(sl, 0, &b) != LT_OK) break;
        loss = lt_gpt_loss_ex(g, b.ids, b.targets, b.B, b.T, b.lengths, 0);   /* mean over real targets */
        r->loss[step] = lt_item(loss);
        lt_backward(ctx, loss);
        lt_optim_step(opt, -1);
        real += b.real;
    }
    r->tok_s = (double)real / (now_s() - t0);
    if (lt_failed(ctx)) { fprintf(stderr, "lesson_sequences: %s\n", lt_error(ctx)); ok = 0; }
    lt_batch_free(&b);
    lt_seq_destroy(sl);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return ok;
}

typedef struct {
    int steps;
    int64_t tokens;
    double seconds, val;
    double *loss, *when;   /* per step: training loss, seconds since the start */
} len_result;

/* mean loss at T = 64 over the validation batches, without gradients */
static double validate(lt_ctx *ctx, lt_gpt *g, const int32_t *val, int64_t nval) {
    lt_loader *vl = lt_loader_from_tokens(ctx, val, nval, SB, TMAX);
    int32_t in[SB * TMAX], tg[SB * TMAX];
    double s = 0;
    int k;
    lt_set_grad_enabled(ctx, 0);
    for (k = 0; k < VAL_BATCHES && vl; k++) {
        lt_reset(ctx);
        lt_loader_next(vl, in, tg);
        s += lt_item(lt_gpt_loss(g, in, tg, SB, TMAX));
    }
    lt_reset(ctx);
    lt_set_grad_enabled(ctx, 1);
    lt_loader_destroy(vl);
    return s / VAL_BATCHES;
}

/* Part 2: fixed T (ls NULL) for max_steps steps, or a schedule until `seconds` have passed. */
static int run_length(const int32_t *tok, int64_t ntrain, int64_t nval, const lt_len_schedule *ls, int max_steps,
                      double seconds, len_result *r) {
    lt_ctx *ctx = lt_ctx_create(1234);
    lt_gpt *g = make_gpt(ctx);
    lt_optim *opt = lt_adamw_create(ctx, lt_gpt_params(g), lt_adamw_defaults());
    lt_loader *ld = lt_loader_from_tokens(ctx, tok, ntrain, SB, TMAX);
    int32_t in[SB * TMAX], tg[SB * TMAX];
    lt_batch b;
    double t0 = now_s();
    int step, ok = 1;

    memset(&b, 0, sizeof b);
    r->tokens = 0;
    for (step = 0; step < max_steps && !lt_failed(ctx); step++) {
        lt_tensor *loss;
        if (ls && now_s() - t0 >= seconds) break;
        lt_zero_grad(ctx);
        lt_loader_next(ld, in, tg);
        /* rows of 64 cut into rows of at most lt_len_at(step): the same tokens, shorter contexts */
        if (lt_batch_from_rows(ctx, &b, in, tg, NULL, SB, TMAX, ls ? lt_len_at(ls, step) : 0) != LT_OK) break;
        loss = lt_gpt_loss_ex(g, b.ids, b.targets, b.B, b.T, b.lengths, 0);
        r->loss[step] = lt_item(loss);
        lt_backward(ctx, loss);
        lt_optim_step(opt, -1);
        r->tokens += b.real;
        r->when[step] = now_s() - t0;
    }
    r->steps = step;
    r->seconds = now_s() - t0;
    r->val = validate(ctx, g, tok + ntrain, nval);
    if (lt_failed(ctx)) { fprintf(stderr, "lesson_sequences: %s\n", lt_error(ctx)); ok = 0; }
    lt_batch_free(&b);
    lt_loader_destroy(ld);
    lt_optim_destroy(opt);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
    return ok;
}

static double mean_last(const double *x, int n, int k) {
    double s = 0;
    int i;
    if (k > n) k = n;
    for (i = n - k; i < n; i++) s += x[i];
    return k ? s / k : NAN;
}

int main(int argc, char **argv) {
    const char *data = "ltrain.h", *plot = "build/lesson_sequences.svg", *split_name = "lines";
    const char *tokspec = NULL, *tokdir = NULL;
    lt_tokenizer *tk = NULL;
    int32_t *pieces = NULL, eot = -1;
    int64_t npieces = 0, ntok = 0;
    int steps = 150, threads = 1, i, r, rc = 0, cap;
    int64_t budget = 1024, ntrain, nval;
    batch_result br[2];
    len_result lr[2];
    lt_len_schedule ls;
    lt_seq_split split = LT_SEQ_LINES;
    lt_ctx *ctx;
    void *buf = NULL;
    size_t size = 0, j;
    int32_t *tok = NULL;
    double *x = NULL;
    lt_plot *p;
    const lesson_flag flags[] = {{"--split", 's', &split_name}, {"--budget", 'L', &budget}, {"--steps", 'i', &steps},
                                 {"--threads", 'i', &threads}, {"--plot", 's', &plot},
                                 {"--tokenizer", 's', &tokspec}, {"--tokenizer-dir", 's', &tokdir}};

    if ((rc = lesson_args("lesson_sequences", argc, argv, &data, flags, 7)) == LESSON_HELP) {
        printf("usage: lesson_sequences [text file (%s)] [--split lines|paragraphs (%s)] [--budget N (%lld)]\n"
               "                        [--steps N (%d)] [--threads N (%d)] [--plot PATH.svg (%s)]\n"
               "                        [--tokenizer gpt2|FILE.json (off: bytes)] [--tokenizer-dir DIR]\n", data,
               split_name, (long long)budget, steps, threads, plot);
        return 0;
    }
    if (rc) return 1;
    if (!strcmp(split_name, "paragraphs")) split = LT_SEQ_PARAGRAPHS;
    else if (strcmp(split_name, "lines")) {
        fprintf(stderr, "lesson_sequences: --split is lines or paragraphs, not %s\n", split_name);
        return 1;
    }
    if (steps < 20 || budget < TMAX || budget > 65536) {
        fprintf(stderr, "lesson_sequences: need --steps >= 20 and --budget in %d..65536\n", TMAX);
        return 1;
    }
    if (threads > 0) lt_set_threads(threads);
    ctx = lt_ctx_create(0);
    if (!ctx || lt_read_file(ctx, data, &buf, &size) != LT_OK) {
        fprintf(stderr, "lesson_sequences: %s\n", ctx ? lt_error(ctx) : "out of memory");
        lt_ctx_destroy(ctx);
        return 1;
    }
    if (tokspec) {   /* lengths in tokens: the pieces for part 1, the whole text for part 2 */
        if (!(tk = tok_open(ctx, "lesson_sequences", tokspec, tokdir)) ||
            (eot = lt_tok_special(tk, "<|endoftext|>")) < 0 ||
            !(pieces = tok_pieces(tk, ctx, (const char *)buf, size, split, eot, &npieces)) ||
            !(tok = tok_encode_all(tk, ctx, "lesson_sequences", (const char *)buf, size, &ntok))) {
            if (tk && eot < 0) fprintf(stderr, "lesson_sequences: --tokenizer %s has no <|endoftext|>\n", tokspec);
            lt_tok_free(tk);
            lt_ctx_destroy(ctx);
            lt_free(buf);
            free(pieces);
            return 1;
        }
        vocab = (int)lt_tok_vocab_size(tk);
        lt_tok_free(tk);
    }
    lt_ctx_destroy(ctx);
    nval = (tokspec ? ntok : (int64_t)size) / 10;
    ntrain = (tokspec ? ntok : (int64_t)size) - nval;
    if (nval < (int64_t)SB * TMAX + 1) {
        fprintf(stderr, "lesson_sequences: %s is too short (%lld %s; need %d)\n", data, (long long)(ntrain + nval),
                tokspec ? "tokens" : "bytes", 10 * (SB * TMAX + 1));
        lt_free(buf);
        free(tok);
        free(pieces);
        return 1;
    }
    cap = 4 * steps;   /* the scheduled run may take more, cheaper, steps in the same time */
    memset(br, 0, sizeof br);
    memset(lr, 0, sizeof lr);
    if (!tokspec) tok = (int32_t *)malloc(size * sizeof(int32_t));
    x = (double *)malloc((size_t)cap * sizeof(double));
    for (r = 0; r < 2; r++) {
        br[r].loss = (double *)malloc((size_t)steps * sizeof(double));
        lr[r].loss = (double *)malloc((size_t)cap * sizeof(double));
        lr[r].when = (double *)malloc((size_t)cap * sizeof(double));
        if (!br[r].loss || !lr[r].loss || !lr[r].when) tok = (free(tok), (int32_t *)NULL);
    }
    if (!tok || !x) {
        fprintf(stderr, "lesson_sequences: out of memory\n");
        rc = 1;
        goto out;
    }
    for (j = 0; j < size && !tokspec; j++) tok[j] = ((unsigned char *)buf)[j];

    printf("part 1: the %s of %s as sequences (at most %d tokens), batches of <= %lld token slots,\n"
           "        AdamW on a 2-layer GPT (C=64) for %d batches\n", split_name, data, TMAX, (long long)budget, steps);
    if (tokspec) printf("        tokens of --tokenizer %s (vocab %d); each %s behind <|endoftext|>\n", tokspec, vocab,
                        split == LT_SEQ_LINES ? "line" : "paragraph");
    printf("\n");
    for (r = 0; r < 2 && rc == 0; r++)
        if (!run_batching((const char *)buf, size, split, r ? LT_BATCH_BUCKET : LT_BATCH_RANDOM, budget, steps,
                          pieces, npieces, eot, &br[r]))
            rc = 1;
    if (rc) goto out;
    printf("%-10s  %8s  %10s  %9s  %8s  %13s  %10s\n", "batching", "batches", "rows/batch", "padded T", "padding",
           "real tokens/s", "final loss");
    for (r = 0; r < 2; r++)
        printf("%-10s  %8lld  %10.1f  %9.1f  %7.1f%%  %13.0f  %10.4f\n", r ? "bucketed" : "random",
               (long long)br[r].batches, br[r].mean_rows, br[r].mean_len, 100 * br[r].pad_frac, br[r].tok_s,
               mean_last(br[r].loss, steps, 10));
    printf("(padding over one epoch; final loss: mean of the last 10 batches, each over its real tokens)\n");

    ls.t0 = 16; ls.t1 = TMAX; ls.steps = steps / 2; ls.rule = LT_LEN_LINEAR; ls.quantum = 8;
    printf("\npart 2: %d rows of %d from the first 90%% of %s; fixed T = %d for %d steps, then a schedule\n"
           "        (linear %d -> %d over %lld steps) for the same wall time; validation loss at T = %d\n\n", SB, TMAX,
           data, TMAX, steps, ls.t0, ls.t1, (long long)ls.steps, TMAX);
    if (!run_length(tok, ntrain, nval, NULL, steps, 0, &lr[0]) ||
        !run_length(tok, ntrain, nval, &ls, cap, lr[0].seconds, &lr[1])) {
        rc = 1;
        goto out;
    }
    printf("%-24s  %6s  %9s  %8s  %10s  %8s\n", "run", "steps", "tokens", "seconds", "train loss", "val loss");
    for (r = 0; r < 2; r++)
        printf("%-24s  %6d  %9lld  %8.2f  %10.4f  %8.4f\n", r ? "schedule 16 -> 64" : "fixed T = 64", lr[r].steps,
               (long long)lr[r].tokens, lr[r].seconds, mean_last(lr[r].loss, lr[r].steps, 10), lr[r].val);

    for (i = 0; i < steps; i++) x[i] = i + 1;
    p = lt_plot_create("random vs bucketed batches (training loss per batch)", "batch", "loss");
    lt_plot_series(p, "random", x, br[0].loss, steps);
    lt_plot_series(p, "bucketed", x, br[1].loss, steps);
    lt_plot_panel(p, "fixed T vs length schedule, same wall time", "seconds", "training loss");
    lt_plot_series(p, "fixed T = 64", lr[0].when, lr[0].loss, lr[0].steps);
    lt_plot_series(p, "schedule 16 -> 64", lr[1].when, lr[1].loss, lr[1].steps);
    if (!lesson_plot_save("lesson_sequences", p, plot, "\nwrote %s\n")) rc = 1;
out:
    lt_free(buf);
    free(tok);
    free(pieces);
    free(x);
    for (r = 0; r < 2; r++) {
        free(br[r].loss);
        free(lr[r].loss);
        free(lr[r].when);
    }
    return rc;
}

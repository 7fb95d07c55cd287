/* cc -O2 -fopenmp -I. examples/train_gpt.c -o build/train_gpt -lm

   train_gpt: train a GPT-2 on a text file (bytes, vocab 256) or llm.c token shards, with AdamW,
   warm-up + decay, clipping and gradient accumulation; save and resume safetensors checkpoints;
   sample text.  `build/train_gpt --help` lists the flags and their defaults.  Without training:
   --inspect PATH prints a checkpoint's config, tensors and metadata; --convert IN OUT saves it again
   (a Hugging Face model directory or one file).

   One optimizer step:  zero_grad → K × (forward, loss/K, backward) → clip → AdamW(lr(step)). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, isatty */
#define LTRAIN_IMPLEMENTATION
#include "ltrain.h"
#include "flags.h"
#include "tokenizer.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const char *data, *val, *init, *resume, *save, *log, *decay, *optim, *prompt;
    const char *format;   /* --format auto|text|shard: how --data and --val are read (data_format) */
    const char *plot;   /* --plot PATH.svg */
    const char *compile;   /* --compile on|off: replay a captured step (lt_compile) */
    const char *checkpoint;   /* --checkpoint off|every|N: blocks' activations made again in backward */
    int recompute;            /* ... as lt_gpt_set_recompute's `every` (0 off) */
    int fused_head;           /* --fused-head: the float32 head and loss in column blocks (lt_gpt_set_fused_head) */
    const char *budget;       /* --memory-budget 1.5G|800M|50%: lt_compile plans within it (lt_set_memory_budget) */
    const char *precision, *loss_scale;   /* --precision fp32|bf16|fp16, --loss-scale on|off (fp16) */
    const char *device, *tf32;            /* --device cpu|cuda (lt_set_device), --tf32 on|off */
    int eval_every, save_every, layers, heads, channels, ctx, vocab, batch, seq, accum, threads;
    int sample, top_k, eval_batches, shuffle, profile;
    int heads_set, ctx_set;   /* given on the command line (else: from the checkpoint / from --seq) */
    int layers_set, channels_set, vocab_set;
    long steps, stop_after;
    double lr, min_lr, warmup_start, beta1, beta2, eps, weight_decay, clip_norm, clip_value, temperature, momentum;
    double skip_outliers;   /* --skip-outliers Z (0: off) */
    double alpha, beta3, shampoo_beta, muon_momentum, muon_adamw_lr;   /* --optim lion|ademamix|muon|soap */
    long alpha_warmup, beta3_warmup;   /* -1: --steps */
    int precond_freq, max_precond_dim, betas_set;
    long warmup;
    unsigned long long seed;
    const char *seqs, *batching, *len_sched;   /* sequences (see seqs_open) */
    int eot, restarts, restart_steps;
    long batch_tokens;
    const char *allreduce;   /* data parallel (make mpi; mpirun -np N): f32 | ordered | bf16 */
    int bucket_mb;
    const char *arch;        /* --arch gpt2|llama and its knobs (see arch_config) */
    int kv_heads, hidden, qk_norm, no_bias, untied;
    double rope_theta;
    unsigned model_set;      /* which model flags were given (bit i: model_flags[i]) */
    const char *tokenizer, *tokenizer_dir;   /* --tokenizer gpt2|FILE.json: --data/--val are text, encoded */
    lt_tokenizer *tok;                       /* loaded by tok_data (sample() decodes with it) */
    const char *inspect, *convert_in, *convert_out;   /* --inspect PATH, --convert IN OUT (see tools) */
} args_t;

static void defaults(args_t *a) {
    memset(a, 0, sizeof *a);
    a->data = "ltrain.h";
    a->format = "auto";
    a->decay = "cosine";
    a->optim = "adamw";
    a->compile = "off";
    a->checkpoint = "off";
    a->precision = "fp32"; a->loss_scale = "on";
    a->device = "cpu"; a->tf32 = "off";
    a->prompt = "\n";
    a->layers = 4; a->heads = 4; a->channels = 128; a->ctx = 128; a->vocab = 0;
    a->batch = 8; a->seq = 64; a->accum = 1; a->threads = 0;
    a->steps = 200; a->stop_after = 0;
    a->lr = 1e-3; a->min_lr = 1e-4; a->warmup = 10; a->warmup_start = 0.0;
    a->beta1 = 0.9; a->beta2 = 0.95; a->eps = 1e-8; a->weight_decay = 0.1; a->momentum = 0.9;
    a->alpha = 5; a->beta3 = 0.9999; a->alpha_warmup = a->beta3_warmup = -1; a->shampoo_beta = 0.95;
    a->muon_momentum = 0.95; a->muon_adamw_lr = 0; a->precond_freq = 10; a->max_precond_dim = 10000;
    a->clip_norm = 1.0; a->clip_value = 0;
    a->seed = 1337;
    a->sample = 0; a->temperature = 1.0; a->top_k = 0;
    a->eval_every = 0; a->eval_batches = 8; a->save_every = 0;
    a->seqs = "stream"; a->batching = "bucket"; a->eot = -1; a->restart_steps = 50;
    a->allreduce = "f32"; a->bucket_mb = 16;
    a->arch = "gpt2"; a->rope_theta = 10000;
}

static void usage(void) {
    args_t d;
    defaults(&d);
    printf("usage: train_gpt [flags]\n"
           "  data:      --data PATH (%s)  --val PATH  --eval-every N (%d)  --eval-batches N (%d)  --shuffle\n"
           "             --format auto|text|shard (auto: a .bin name or the shard magic is a shard, else text)\n"
           "  model:     --layers N (%d) --heads N (%d) --channels N (%d) --ctx N (%d) --vocab N (256 text, 50257 shards)\n"
           "             --init PATH (weights: a safetensors file or a Hugging Face model directory)\n"
           "             --arch gpt2|llama (gpt2)  llama: --kv-heads N (heads) --hidden N (8C/3 up to a multiple of 32;\n"
           "             gpt2: 4C) --rope-theta X (10000) --qk-norm --untied (separate lm_head) --no-bias | --bias\n"
           "             (llama has no biases unless --bias)\n"
           "  batch:     --batch B (%d) --seq T (%d) --accum K (%d)\n"
           "  schedule:  --steps S (%ld) --stop-after N  --lr X (%g) --min-lr X (%g) --warmup W (%ld)\n"
           "             --warmup-start F (%g) --decay cosine|linear|sqrt|constant (%s)\n"
           "  optimizer: --optim adamw|sgd|lion|ademamix|muon|soap (%s) --beta1 (%g) --beta2 (%g) --eps (%g) --weight-decay (%g)\n"
           "             --momentum (%g, sgd)\n"
           "  clipping:  --clip-norm X (%g, 0 off) --clip-value X (0 off)\n"
           "  guard:     --skip-outliers Z (0 off): skip the update of a step whose loss or gradient norm is more\n"
           "             than Z standard deviations above the last 50 steps' mean (window not kept in checkpoints)\n"
           "  run:       --seed N (%llu) --threads N --save PATH --save-every N --resume PATH --log PATH\n"
           "             --profile (time every op, eager mode; a table at the end)\n"
           "             --compile on|off (off; on: capture the step once and replay it; LTRAIN_COMPILE=0 forces off)\n"
           "             --checkpoint off|every|N (off): drop the activations of every block (or every N-th) after\n"
           "             forward and make them again in backward (lt_gpt_set_recompute): less memory, one more forward\n"
           "             --fused-head (off): at fp32 the LM head and the loss in blocks of columns, no [B,T,V] logits\n"
           "             kept, made again in backward (lt_gpt_set_fused_head): B*T*V floats less\n"
           "             --memory-budget 1.5G|800M|50%% (off; needs --compile on): the plan runs the cheapest ops again\n"
           "             in backward until its activations fit (lt_set_memory_budget; %% of the plan without)\n"
           "             --plot PATH.svg (loss, val loss and lr against steps, rewritten every 10 steps)\n"
           "  parallel:  mpirun -np N build/train_gpt_mpi (make mpi): --batch is per rank, N*B rows a step\n"
           "             --allreduce f32|ordered|bf16 (f32) --bucket-mb N (16)\n"
           "  sequences: --seqs stream|lines|paragraphs (stream) --eot ID (shards: split at ID, e.g. 50256)\n"
           "             --batching bucket|random (bucket) --batch-tokens N (B*T; per micro-batch)\n"
           "             --len-schedule T0:T1:STEPS[:linear|step|sqrt] (T grows to --seq; off)\n"
           "             --restarts R (off) --restart-steps K (50): R seeds for K steps, best val loss goes on\n"
           "  sampling:  --sample N (0) --temperature X (%g) --top-k K (0) --prompt TEXT\n"
           "  tokens:    --tokenizer gpt2|FILE.json (off: bytes): encode --data and --val as they load (vocab: the\n"
           "             tokenizer's); --tokenizer-dir DIR (gpt2: DIR/encoder.json + DIR/vocab.bpe;\n"
           "             default $LT_SHARED_DIR/gpt2-bpe or ../shared/data/gpt2-bpe)\n"
           "  tools:     (no training; PATH, IN: a .safetensors file or a Hugging Face model directory; --heads N\n"
           "             where neither the file nor a config.json says; other model flags must agree with the file)\n"
           "             --inspect PATH: the model's config, a table of the file's tensors (name, dtype, shape,\n"
           "             parameters), the total, the metadata keys\n"
           "             --convert IN OUT: load IN completely and save its weights (float32, metadata note kept,\n"
           "             optimizer state left out) to OUT, atomically: OUT ending in / is a Hugging Face model\n"
           "             directory (model.safetensors + config.json; made if missing), anything else one .safetensors file\n",
           d.data, d.eval_every, d.eval_batches, d.layers, d.heads, d.channels, d.ctx, d.batch, d.seq, d.accum,
           d.steps, d.lr, d.min_lr, d.warmup, d.warmup_start, d.decay, d.optim, d.beta1, d.beta2, d.eps,
           d.weight_decay, d.momentum, d.clip_norm, d.seed, d.temperature);
    printf("  more optimizers (their own betas unless --beta1/--beta2 are given; try --lr: lion 3e-4, muon 0.02, soap 3e-3):\n"
           "             lion (0.9, 0.99) | ademamix (0.9, 0.999) --alpha (%g) --beta3 (%g) --alpha-warmup N --beta3-warmup N\n"
           "             (-1: --steps, the paper's choice; 0 off) | muon --muon-momentum (%g, nesterov) --muon-adamw-lr X\n"
           "             (wte, wpe, biases, LayerNorm; 0: --lr*0.015) | soap (0.95, 0.95) --shampoo-beta (%g)\n"
           "             --precond-freq N (%d) --max-precond-dim N (%d)\n",
           d.alpha, d.beta3, d.muon_momentum, d.shampoo_beta, d.precond_freq, d.max_precond_dim);
    printf("  precision: --precision fp32|bf16|fp16 (%s): matmuls in 16 bit, the rest fp32 (lt_set_precision)\n"
           "             --loss-scale on|off (%s): fp16's dynamic loss scale (lt_scaler); off shows the underflow\n",
           d.precision, d.loss_scale);
    printf("  device:    --device cpu|cuda (%s): where the step runs (cuda: a build with LTRAIN_CUDA, make cuda)\n"
           "             --tf32 on|off (%s): cuda fp32 matmuls on TF32 tensor cores\n", d.device, d.tf32);
}

static int die(const char *msg) {
    fprintf(stderr, "train_gpt: %s\n", msg);
    return 1;
}

/* The flags that shape the model: given with --init or --resume, each must match the checkpoint. */
static const char *const model_flags[] = {"--layers", "--heads", "--channels", "--vocab", "--arch", "--kv-heads",
                                          "--hidden", "--rope-theta", "--qk-norm", "--no-bias", "--bias", "--untied"};
static void model_flag_seen(args_t *a, const char *f) {
    unsigned k;
    for (k = 0; k < sizeof model_flags / sizeof model_flags[0]; k++)
        if (!strcmp(f, model_flags[k])) a->model_set |= 1u << k;
}

/* A loaded model (--init, --resume, --convert, --inspect) against the model flags given: the file
   decides the model, so a flag that says otherwise is an error, named with both values.  llama:
   the architecture the flags mean (--arch, else the file's).  0, or 1 after a message. */
static int loaded_matches(const args_t *a, const lt_gpt_config *c, int llama) {
    /* model_flags[k] for k < 12; 12: --ctx.  The order of the checks: the architecture's knobs,
       then the shape (--layers, --channels, --vocab, --ctx) */
    static const int order[] = {1, 4, 5, 6, 7, 8, 9, 10, 11, 0, 2, 3, 12};
    const char *path = a->resume ? a->resume : a->init ? a->init : a->convert_in ? a->convert_in : a->inspect;
    const char *flag = a->resume ? "--resume" : a->init ? "--init" : a->convert_in ? "--convert" : "--inspect";
    long have[13], want[13];
    int j, k, set;
    char msg[600];
    have[0] = c->layers; have[1] = c->heads; have[2] = c->channels; have[3] = c->vocab; have[4] = c->arch;
    have[5] = c->kv_heads; have[6] = c->hidden; have[7] = (long)c->rope_theta; have[8] = c->qk_norm;
    have[9] = c->no_bias == 1 || (c->arch == LT_ARCH_LLAMA && c->no_bias == 0); have[10] = !have[9]; have[11] = c->untied;
    have[12] = c->ctx;
    want[0] = a->layers; want[1] = a->heads; want[2] = a->channels; want[3] = a->vocab; want[4] = llama;
    want[5] = a->kv_heads; want[6] = a->hidden; want[7] = (long)a->rope_theta; want[8] = 1; want[9] = 1; want[10] = 1;
    want[11] = 1; want[12] = a->ctx;
    for (j = 0; j < (int)(sizeof order / sizeof order[0]); j++) {
        k = order[j];
        set = k == 0 ? a->layers_set : k == 2 ? a->channels_set : k == 3 ? a->vocab_set : k == 12 ? a->ctx_set
            : (int)((a->model_set >> k) & 1u);
        if (!set || have[k] == want[k]) continue;
        if (k == 4)
            return fprintf(stderr, "train_gpt: --arch %s but %s is a %s model\n", a->arch, path,
                           have[4] ? "llama" : "gpt2"), 1;
        if (k >= 8 && k <= 11)
            return fprintf(stderr, "train_gpt: %s given but %s has %s\n", model_flags[k], path,
                           k == 8 ? "no qk-norm" : k == 9 ? "biases" : k == 10 ? "no biases" : "a tied head"), 1;
        if (k == 0 || k == 2 || k == 3 || k == 12) {
            snprintf(msg, sizeof msg, "%s: the checkpoint %s has %s %ld, this command line says %ld (the shape comes from "
                     "the file: drop the flag)", flag, path, k == 12 ? "--ctx" : model_flags[k],
                     have[k], want[k]);
            return die(msg);
        }
        return fprintf(stderr, "train_gpt: %s %ld but %s has %ld\n", model_flags[k], want[k], path, have[k]), 1;
    }
    return 0;
}

/* The architecture flags: with loaded == NULL, fill cfg's arch fields for a new model; else check
   that every model flag given agrees with the loaded model's config (loaded_matches).  0, or 1
   after a message. */
static int arch_config(const args_t *a, const lt_gpt_config *loaded, lt_gpt_config *cfg) {
    unsigned set = a->model_set;   /* a loaded model without --arch keeps its own */
    int llama = loaded && !(set & (1u << 4)) ? loaded->arch == LT_ARCH_LLAMA : !strcmp(a->arch, "llama");
    int bias = a->no_bias ? a->no_bias : llama ? 1 : 0;
    if (strcmp(a->arch, "llama") && strcmp(a->arch, "gpt2"))
        return fprintf(stderr, "train_gpt: --arch is \"%s\": it must be gpt2 or llama\n", a->arch), 1;
    if ((set & (1u << 5)) && (a->kv_heads < 1 || a->heads % a->kv_heads != 0))
        return fprintf(stderr, "train_gpt: --kv-heads %d does not divide --heads %d\n", a->kv_heads, a->heads), 1;
    if (!llama && (a->kv_heads || a->qk_norm || a->untied || a->no_bias == 1 || (set & (1u << 7))))
        return fprintf(stderr, "train_gpt: --kv-heads, --rope-theta, --qk-norm, --untied and --no-bias need --arch llama "
                       "(GPT-2 has full attention, learned positions, a tied head and biases)\n"), 1;
    if (loaded) return loaded_matches(a, loaded, llama);
    cfg->arch = llama ? LT_ARCH_LLAMA : LT_ARCH_GPT2;
    cfg->kv_heads = a->kv_heads; cfg->hidden = a->hidden; cfg->qk_norm = a->qk_norm; cfg->untied = a->untied;
    cfg->rope_theta = llama ? (float)a->rope_theta : 0.0f;
    cfg->no_bias = llama ? bias : 0;
    return 0;
}

/* --checkpoint off|every|N into a->recompute (0, 1, N); 0 with a message when it does not parse */
static int checkpoint_parse(args_t *a) {
    unsigned long long u;
    if (!strcmp(a->checkpoint, "off")) a->recompute = 0;
    else if (!strcmp(a->checkpoint, "every")) a->recompute = 1;
    else if (*a->checkpoint >= '0' && *a->checkpoint <= '9') {
        if (!flag_whole("train_gpt", "--checkpoint", a->checkpoint, 1, INT_MAX, &u)) return 0;
        a->recompute = (int)u;
    } else {
        fprintf(stderr, "train_gpt: --checkpoint is \"%s\": it must be off, every, or N >= 1 (every N-th block)\n",
                a->checkpoint);
        return 0;
    }
    return 1;
}

static int parse(args_t *a, int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long long u;
        /* string flags */
        const char **s = !strcmp(f, "--data") ? &a->data : !strcmp(f, "--val") ? &a->val : !strcmp(f, "--init") ? &a->init
                       : !strcmp(f, "--resume") ? &a->resume : !strcmp(f, "--save") ? &a->save : !strcmp(f, "--log") ? &a->log
                       : !strcmp(f, "--decay") ? &a->decay : !strcmp(f, "--optim") ? &a->optim
                       : !strcmp(f, "--prompt") ? &a->prompt : !strcmp(f, "--compile") ? &a->compile : !strcmp(f, "--plot") ? &a->plot
                       : !strcmp(f, "--allreduce") ? &a->allreduce : !strcmp(f, "--precision") ? &a->precision
                       : !strcmp(f, "--loss-scale") ? &a->loss_scale : !strcmp(f, "--device") ? &a->device
                       : !strcmp(f, "--tf32") ? &a->tf32 : !strcmp(f, "--format") ? &a->format
                       : !strcmp(f, "--arch") ? &a->arch : !strcmp(f, "--checkpoint") ? &a->checkpoint
                       : !strcmp(f, "--memory-budget") ? &a->budget : !strcmp(f, "--tokenizer") ? &a->tokenizer
                       : !strcmp(f, "--tokenizer-dir") ? &a->tokenizer_dir : !strcmp(f, "--inspect") ? &a->inspect : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) { usage(); exit(0); }
        if (!strcmp(f, "--shuffle")) { a->shuffle = 1; continue; }
        if (!strcmp(f, "--profile")) { a->profile = 1; continue; }
        if (!strcmp(f, "--fused-head")) { a->fused_head = 1; continue; }
        model_flag_seen(a, f);
        if (!strcmp(f, "--qk-norm") || !strcmp(f, "--untied")) { *(f[2] == 'q' ? &a->qk_norm : &a->untied) = 1; continue; }
        if (!strcmp(f, "--no-bias") || !strcmp(f, "--bias")) { a->no_bias = f[2] == 'n' ? 1 : -1; continue; }
        if (!strcmp(f, "--convert")) {
            if (!v || i + 2 >= argc) { fprintf(stderr, "train_gpt: --convert needs two values: IN OUT\n"); return 0; }
            a->convert_in = v; a->convert_out = argv[i + 2];
            i += 2; continue;
        }
        if (!strcmp(f, "--seqs") || !strcmp(f, "--batching") || !strcmp(f, "--len-schedule")) {
            if (!v) { fprintf(stderr, "train_gpt: %s needs a value\n", f); return 0; }
            *(f[2] == 's' ? &a->seqs : f[2] == 'b' ? &a->batching : &a->len_sched) = v;
            i++; continue;
        }
        if (s) {
            if (!v) { fprintf(stderr, "train_gpt: %s needs a value\n", f); return 0; }
            *s = v; i++; continue;
        }
        if (!strcmp(f, "--heads")) a->heads_set = 1;
        if (!strcmp(f, "--ctx")) a->ctx_set = 1;
        if (!strcmp(f, "--layers")) a->layers_set = 1;
        if (!strcmp(f, "--channels")) a->channels_set = 1;
        if (!strcmp(f, "--vocab")) a->vocab_set = 1;
        if (!strcmp(f, "--beta1") || !strcmp(f, "--beta2")) a->betas_set = 1;
        /* number flags: whole numbers in the field's range (>= 1 where 0 means nothing), finite reals
           (>= 0 where a negative value makes no sense; FINITE: any finite value) */
#define WHOLE(name, field, lo, hi) if (!strcmp(f, name)) { if (!flag_whole("train_gpt", f, v, lo, hi, &u)) return 0; \
            a->field = u; i++; continue; }
#define INTFLAG(name, field) WHOLE(name, field, 0, INT_MAX)
#define LONGFLAG(name, field) WHOLE(name, field, 0, LONG_MAX)
#define REAL(name, field, lo) if (!strcmp(f, name)) { if (!flag_real("train_gpt", f, v, lo, &a->field)) return 0; i++; continue; }
#define DBLFLAG(name, field) REAL(name, field, 0)
#define FINITE(name, field) REAL(name, field, -HUGE_VAL)
        INTFLAG("--eval-every", eval_every) WHOLE("--eval-batches", eval_batches, 1, INT_MAX) INTFLAG("--save-every", save_every)
        INTFLAG("--layers", layers) INTFLAG("--heads", heads) INTFLAG("--channels", channels) INTFLAG("--ctx", ctx)
        INTFLAG("--vocab", vocab) WHOLE("--batch", batch, 1, INT_MAX) WHOLE("--seq", seq, 1, INT_MAX) WHOLE("--accum", accum, 1, INT_MAX)
        INTFLAG("--threads", threads) INTFLAG("--sample", sample) INTFLAG("--top-k", top_k)
        WHOLE("--steps", steps, 1, LONG_MAX) LONGFLAG("--stop-after", stop_after) LONGFLAG("--warmup", warmup)
        DBLFLAG("--lr", lr) DBLFLAG("--min-lr", min_lr) DBLFLAG("--warmup-start", warmup_start) FINITE("--beta1", beta1)
        FINITE("--beta2", beta2) DBLFLAG("--eps", eps) DBLFLAG("--weight-decay", weight_decay)
        DBLFLAG("--clip-norm", clip_norm) DBLFLAG("--clip-value", clip_value) DBLFLAG("--temperature", temperature)
        FINITE("--momentum", momentum) DBLFLAG("--skip-outliers", skip_outliers)
        DBLFLAG("--alpha", alpha) FINITE("--beta3", beta3) FINITE("--shampoo-beta", shampoo_beta)
        FINITE("--muon-momentum", muon_momentum) DBLFLAG("--muon-adamw-lr", muon_adamw_lr)
        LONGFLAG("--alpha-warmup", alpha_warmup) LONGFLAG("--beta3-warmup", beta3_warmup)
        INTFLAG("--precond-freq", precond_freq) INTFLAG("--max-precond-dim", max_precond_dim)
        INTFLAG("--bucket-mb", bucket_mb)
        INTFLAG("--eot", eot) INTFLAG("--restarts", restarts) INTFLAG("--restart-steps", restart_steps)
        LONGFLAG("--batch-tokens", batch_tokens)
        WHOLE("--kv-heads", kv_heads, 1, INT_MAX) WHOLE("--hidden", hidden, 1, INT_MAX) DBLFLAG("--rope-theta", rope_theta)
        WHOLE("--seed", seed, 0, ULLONG_MAX)
        fprintf(stderr, "train_gpt: unknown flag %s (see --help)\n", f);
        return 0;
    }
    if (a->batch < 1 || a->seq < 1 || a->accum < 1 || a->steps < 1)
        return fprintf(stderr, "train_gpt: --batch, --seq, --accum and --steps must be >= 1\n"), 0;
    if (!(a->lr >= 0) || !(a->min_lr >= 0) || a->clip_norm < 0 || a->clip_value < 0 || a->temperature < 0)
        return fprintf(stderr, "train_gpt: --lr, --min-lr, --clip-norm, --clip-value, --temperature must be >= 0\n"), 0;
    if (!(a->skip_outliers >= 0)) return fprintf(stderr, "train_gpt: --skip-outliers must be >= 0\n"), 0;
    if (a->resume && a->init)
        return fprintf(stderr, "train_gpt: --resume continues a run (its weights, optimizer and data position); --init "
                       "starts a new one from weights: give one of them\n"), 0;
    if ((a->inspect || a->convert_in) && !!a->inspect + !!a->convert_in + !!a->init + !!a->resume > 1)
        return fprintf(stderr, "train_gpt: --inspect, --convert, --init and --resume each read a model: give one of "
                       "them\n"), 0;
    return 1;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The most memory this process has held (getrusage: KiB on Linux). */
static double peak_rss_mb(void) {
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? (double)u.ru_maxrss / 1024.0 : 0.0;
}

/* Print sampled text (bytes for vocab 256; token ids otherwise). */
static void sample(lt_gpt *g, const args_t *a, lt_rng *rng, const char *title) {
    int np = (int)strlen(a->prompt), n, k, V = lt_gpt_cfg(g)->vocab;
    int32_t *buf = (int32_t *)malloc((3 * (size_t)np + (size_t)a->sample + 1) * sizeof(int32_t));   /* 3: NFC may grow it */
    if (!buf) return;
    if (a->tok && np > 0) np = (int)lt_tok_encode(a->tok, a->prompt, (size_t)np, 0, buf, 3 * (int64_t)np);
    if (np <= 0 || V < 256) { buf[0] = 0; np = 1; }
    else if (!a->tok) for (k = 0; k < np; k++) buf[k] = (unsigned char)a->prompt[k];
    n = lt_gpt_generate(g, buf, np, a->sample, (float)a->temperature, a->top_k, rng, buf);
    printf("---- %s ----\n", title);
    if (a->tok) tok_print(a->tok, buf, n, stdout);
    for (k = 0; k < n && !a->tok; k++) {
        if (V <= 256) putchar((buf[k] >= 32 && buf[k] < 127) || buf[k] == 10 ? buf[k] : 63);
        else printf("%d ", buf[k]);
    }
    printf("\n-----%.*s\n", (int)strlen(title), "------------------------------------------------------------");
    free(buf);
}

/* One micro-batch's loss, as a step function that lt_compile can capture: it reads the batch
   from in/tg, which the loop refills before every replay. */
typedef struct { lt_gpt *g; int32_t *in, *tg; int B, T; } gpt_step_t;
static lt_tensor *gpt_step(lt_ctx *ctx, void *user) {
    gpt_step_t *s = (gpt_step_t *)user;
    (void)ctx;
    return lt_gpt_loss(s->g, s->in, s->tg, s->B, s->T);
}

/* Mean loss over n batches of the validation loader, without gradients. */
static double evaluate(lt_ctx *ctx, lt_gpt *g, lt_loader *val, int n, int B, int T, int32_t *in, int32_t *tg) {
    double s = 0;
    int k;
    lt_set_grad_enabled(ctx, 0);
    lt_set_training(ctx, 0);
    for (k = 0; k < n; k++) {
        lt_tensor *loss;
        lt_reset(ctx);
        if (lt_loader_next(val, in, tg) != LT_OK) break;
        loss = lt_gpt_loss(g, in, tg, B, T);
        s += lt_item(loss);
    }
    lt_reset(ctx);
    lt_set_grad_enabled(ctx, 1);
    lt_set_training(ctx, 1);
    return s / n;
}

/* --plot: loss (and val loss) above, lr below, in one SVG rewritten as training goes (reload it). */
typedef struct { lt_plot *p; const char *path; int loss, val, lr; } plot_t;
static int plot_open(plot_t *pl, const char *path, int with_val) {
    pl->path = path;
    pl->p = lt_plot_create("training loss", "step", "loss (nats per token)");
    pl->loss = lt_plot_series(pl->p, "train", NULL, NULL, 0);
    pl->val = with_val ? lt_plot_series(pl->p, "validation", NULL, NULL, 0) : -1;
    lt_plot_panel(pl->p, "learning rate", "step", "lr");
    pl->lr = lt_plot_series(pl->p, NULL, NULL, NULL, 0);
    return pl->p && pl->lr >= 0;
}
static void plot_save(plot_t *pl) {   /* a failed write is reported once, then plotting stops */
    if (pl->p && lt_plot_save(pl->p, pl->path) != LT_OK) {
        fprintf(stderr, "\ntrain_gpt: --plot: %s\n", lt_plot_error(pl->p));
        lt_plot_destroy(pl->p);
        pl->p = NULL;
    }
}

/* ---- sequences (--seqs, --eot, --batching, --batch-tokens, --len-schedule) ----------------------
   With sequences or a length schedule a step is token-weighted: its K micro-batches are drawn
   first, then each backward sees sum(token losses) / (real targets of all K), so the step's loss
   equals one batch of all K's rows however ragged they are.  Stream batches under a length
   schedule are cut into rows of the current length (B*T tokens per micro-batch either way). */
typedef struct {
    int on;                   /* the token-weighted step below runs */
    lt_seq_loader *sl;        /* lines / paragraphs / documents; NULL: the stream loader */
    lt_len_schedule ls;
    int has_ls, B, T, K, cur_T;
    lt_batch *mb;             /* K micro-batches */
    double positions, real;   /* this step: positions processed (padding included), real targets */
    double all_pos, all_real; /* the run so far */
    float seed;               /* each backward's seed: the fp16 loss scale (1 otherwise) */
} seqs_t;

/* 0 ok, 1 a usage error (printed), 2 a library error (on ctx).  The sequences share the stream
   loader's tokens (the file is read once). */
static int seqs_open(seqs_t *q, const args_t *a, lt_ctx *ctx, const lt_loader *ld) {
    char err[256];
    int split = !strcmp(a->seqs, "lines") ? LT_SEQ_LINES : !strcmp(a->seqs, "paragraphs") ? LT_SEQ_PARAGRAPHS : 0;
    q->B = a->batch; q->T = a->seq; q->K = a->accum;
    if (!split && strcmp(a->seqs, "stream")) return die("--seqs must be stream, lines or paragraphs");
    if (strcmp(a->batching, "bucket") && strcmp(a->batching, "random")) return die("--batching must be bucket or random");
    if (a->eot >= 0) split = LT_SEQ_EOT;
    if (a->len_sched) {
        if (!lt_len_parse(a->len_sched, &q->ls, err, sizeof err)) {
            fprintf(stderr, "train_gpt: --len-schedule: %s\n", err);
            return 1;
        }
        if (q->ls.t1 != a->seq) {
            fprintf(stderr, "train_gpt: --len-schedule: T1 (%d) must equal --seq (%d), the longest length\n", q->ls.t1,
                    a->seq);
            return 1;
        }
        q->has_ls = 1;
    }
    if (split) {
        lt_seq_config c = lt_seq_defaults();
        c.split = (lt_seq_split)split;
        c.eot = a->eot;
        c.max_len = a->seq;
        c.batching = strcmp(a->batching, "random") ? LT_BATCH_BUCKET : LT_BATCH_RANDOM;
        c.batch_tokens = a->batch_tokens > 0 ? a->batch_tokens : (int64_t)a->batch * a->seq;
        c.seed = a->seed;
        if (!(q->sl = lt_seq_from_loader(ctx, ld, &c))) return 2;
        printf("sequences: %lld pieces of at most %d tokens (%s), %s batches of <= %lld tokens, %lld in epoch 0\n",
               (long long)lt_seq_count(q->sl), a->seq, a->eot >= 0 ? "documents" : a->seqs, a->batching,
               (long long)c.batch_tokens, (long long)lt_seq_batches(q->sl, 0));
    } else if (a->batch_tokens > 0) {
        return die("--batch-tokens needs --seqs lines|paragraphs or --eot (the stream uses --batch and --seq)");
    }
    q->on = q->sl || q->has_ls;
    if (q->on && !(q->mb = (lt_batch *)calloc((size_t)q->K, sizeof(lt_batch)))) return die("out of memory");
    return 0;
}

static lt_status seqs_step(seqs_t *q, lt_ctx *ctx, lt_gpt *g, lt_loader *ld, long step, int32_t *in, int32_t *tg,
                           double *loss) {
    int fold = q->has_ls ? lt_len_at(&q->ls, step) : 0, k;
    double denom = 0;
    q->cur_T = fold ? fold : q->T;
    q->positions = q->real = 0;
    *loss = 0;
    for (k = 0; k < q->K; k++) {
        lt_batch *b = &q->mb[k];
        lt_status s = q->sl ? lt_seq_next(q->sl, fold, b)
                     : lt_loader_next(ld, in, tg) == LT_OK ? lt_batch_from_rows(ctx, b, in, tg, NULL, q->B, q->T, fold)
                     : lt_status_of(ctx);
        if (s != LT_OK) return s;
        denom += (double)b->real;
        q->positions += (double)b->B * b->T;
    }
    q->real = denom;
    for (k = 0; k < q->K; k++) {
        lt_batch *b = &q->mb[k];
        lt_tensor *l = lt_gpt_loss_ex(g, b->ids, b->targets, b->B, b->T, b->lengths, denom);
        *loss += lt_item(l);
        if (lt_backward_scaled(ctx, l, q->seed) != LT_OK) return lt_status_of(ctx);
    }
    return LT_OK;
}

static void seqs_close(seqs_t *q) {
    int k;
    for (k = 0; q->mb && k < q->K; k++) lt_batch_free(&q->mb[k]);
    free(q->mb);
    lt_seq_destroy(q->sl);
    memset(q, 0, sizeof *q);
}

/* --skip-outliers Z: once 10 steps are in the window, a step whose loss or gradient norm is more than
   Z sample standard deviations above the window's mean (the last 50 steps) is an outlier.  Its
   values enter the window all the same, so a lasting shift (a new part of the data) soon stops
   counting as one instead of freezing training. */
#define GUARD_WINDOW 50
typedef struct { double loss[GUARD_WINDOW], norm[GUARD_WINDOW]; int n, next; } guard_t;

static double zscore(const double *x, int n, double v) {
    double m = 0, s = 0;
    int i;
    for (i = 0; i < n; i++) m += x[i];
    m /= n;
    for (i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m);
    s = sqrt(s / (n - 1));
    return s > 0 ? (v - m) / s : 0;
}

static int guard_outlier(guard_t *gd, double z_max, double loss, double norm, double *zl, double *zn) {
    *zl = gd->n >= 10 ? zscore(gd->loss, gd->n, loss) : 0;
    *zn = gd->n >= 10 ? zscore(gd->norm, gd->n, norm) : 0;
    gd->loss[gd->next] = loss;
    gd->norm[gd->next] = norm;
    gd->next = (gd->next + 1) % GUARD_WINDOW;
    if (gd->n < GUARD_WINDOW) gd->n++;
    return *zl > z_max || *zn > z_max;
}

/* Share of gradient values that are exactly 0: fp16 without a loss scale flushes small ones
   (below 2^-24) to 0.  Rows of unused tokens are 0 in every precision: compare with fp32. */
static double zero_grad_frac(lt_paramset ps) {
    double zeros = 0, n = 0;
    int k;
    int64_t i;
    for (k = 0; k < ps.n; k++) {
        for (i = 0; i < ps.p[k]->n; i++) zeros += ps.p[k]->grad[i] == 0.0f;
        n += (double)ps.p[k]->n;
    }
    return n > 0 ? zeros / n : 0;
}

/* ---- one training run ----------------------------------------------------------------------------
   train() reads as the run goes: setup (run_open, model_open, data_open, optim_open, dist_open,
   run_resume, outputs_open, run_start), the loop (step_batch, step_update, step_count, log_step,
   log_json, plot_update, maybe_eval, maybe_save), then run_finish and run_close.  The setup and
   step functions return 0 (go on), 1 (an error, already printed) or FAILED (a library error, whose
   message is on the context; run_close prints it). */
#define FAILED 2

typedef struct {
    args_t a;
    lt_ctx *ctx;
    lt_gpt *g;
    lt_loader *ld, *val;
    lt_optim *opt;
    lt_plan_cache *plans;   /* --compile on: captured steps, by sequence length */
    gpt_step_t gs;
    lt_dist *dist;          /* data parallel: rank, world, gradient all-reduce (1 process without MPI) */
    lt_schedule sched;
    lt_train_state st;      /* the step and data position, saved with checkpoints */
    lt_rng srng;            /* --sample's */
    FILE *logf;
    seqs_t sq;
    guard_t guard;
    lt_scaler scaler;       /* --precision fp16: dynamic loss scaling */
    plot_t pl;
    int32_t *in, *tg;       /* one micro-batch */
    int tty, B, T, K;
    long done;              /* steps this process ran */
    double later_ms;        /* the steps after the first (which also plans / allocates) */
    double t_start;
    char note[512];         /* the command line, saved in checkpoints */
} run_t;

/* One step's figures, from step_batch and step_update to the logs. */
typedef struct {
    long step;
    double t0, lr, seed;    /* seed: fp16's loss scale, which the backward starts from (else 1) */
    double loss, norm, zl, zn, zero_frac, ms, tps, pad;
    int skip, inf_skip;     /* skipped by --skip-outliers; by the loss scaler (an inf/NaN gradient) */
} step_t;

/* Flags, context, device, precision and the lr schedule; the note records the command line, for
   whoever opens the checkpoint later. */
static int run_open(run_t *r, int argc, char **argv) {
    args_t *a = &r->a;
    lt_device dev;
    size_t used;
    int i;
    defaults(a);
    if (!parse(a, argc, argv)) return 1;
    if (a->eval_every > 0 && !a->val)   /* said, not refused: the rest of the run is what was asked */
        fprintf(stderr, "train_gpt: note: --eval-every does nothing without --val (the file a validation loss is "
                "measured on)\n");
    if (!lt_decay_parse(a->decay, &r->sched.decay)) return die("--decay must be cosine, linear, sqrt or constant");
    if (strcmp(a->optim, "adamw") && strcmp(a->optim, "sgd") && strcmp(a->optim, "lion") &&
        strcmp(a->optim, "ademamix") && strcmp(a->optim, "muon") && strcmp(a->optim, "soap"))
        return die("--optim must be adamw, sgd, lion, ademamix, muon or soap");
    if (strcmp(a->compile, "on") && strcmp(a->compile, "off")) return die("--compile must be on or off");
    if (!checkpoint_parse(a)) return 1;
    if (strcmp(a->precision, "fp32") && strcmp(a->precision, "bf16") && strcmp(a->precision, "fp16"))
        return die("--precision must be fp32, bf16 or fp16");
    if (strcmp(a->loss_scale, "on") && strcmp(a->loss_scale, "off")) return die("--loss-scale must be on or off");
    if (a->threads > 0) lt_set_threads(a->threads);
    r->B = a->batch; r->T = a->seq; r->K = a->accum;
    if (!(r->ctx = lt_ctx_create(a->seed))) return die("out of memory");
    if (a->budget && strcmp(a->compile, "on")) return die("--memory-budget plans a compiled step: add --compile on");
    if (a->budget && lt_set_memory_budget(r->ctx, a->budget) != LT_OK) return die(lt_error(r->ctx));
    if (!lt_device_parse(a->device, &dev)) return die("--device must be cpu or cuda");
    if (lt_set_device(r->ctx, dev) != LT_OK) {
        fprintf(stderr, "train_gpt: %s\n", lt_error(r->ctx));
        return 1;
    }
    lt_set_tf32(r->ctx, !strcmp(a->tf32, "on"));
    lt_set_precision(r->ctx, !strcmp(a->precision, "bf16") ? LT_BF16 : !strcmp(a->precision, "fp16") ? LT_F16 : LT_F32);
    r->scaler.enabled = lt_get_precision(r->ctx) == LT_F16 && !strcmp(a->loss_scale, "on");   /* as torch: fp16 only */
    r->st.scaler = r->scaler.enabled ? &r->scaler : NULL;   /* saved with checkpoints and restored on --resume */
    r->sched.lr = a->lr; r->sched.min_lr = a->min_lr; r->sched.warmup = a->warmup; r->sched.total = a->steps;
    r->sched.warmup_start = a->warmup_start;
    /* metadata must be UTF-8: bytes that are not (a Latin-1 file name) are written as \xNN, and the
       cut at the note's size falls between characters */
    snprintf(r->note, sizeof r->note, "train_gpt");
    used = strlen(r->note);
    for (i = 1; i < argc && used + 2 < sizeof r->note; i++) {
        r->note[used++] = ' ';
        used += lt_utf8_escape(r->note + used, sizeof r->note - used, argv[i]);
    }
    return 0;
}

/* The format of --format (1 with a message when it is none of them). */
static int data_format(const args_t *a, lt_data_format *f) {
    *f = !strcmp(a->format, "text") ? LT_DATA_TEXT : !strcmp(a->format, "shard") ? LT_DATA_SHARD : LT_DATA_AUTO;
    if (*f == LT_DATA_AUTO && strcmp(a->format, "auto")) return die("--format must be auto, text or shard");
    return 0;
}

/* The training loader (the global batch), opened once: --data may be a pipe.  vocab 0: checked
   later by data_open, when the model's vocab is known. */
static int open_data(run_t *r, int vocab) {
    lt_data_format f;
    if (data_format(&r->a, &f)) return 1;
    r->ld = lt_loader_open_as(r->ctx, r->a.data, f, r->B * lt_dist_world(), r->T, vocab);
    return r->ld ? 0 : FAILED;
}

/* --tokenizer: load it, open the loaders of --data and --val (text, encoded as it is read), make
   the new model's vocab the tokenizer's, and add the tokenizer's identity to the checkpoints' note
   (sample_gpt checks it). */
static int tok_data(run_t *r) {
    args_t *a = &r->a;
    char id[96];
    size_t used = strlen(r->note);
    if (!a->tokenizer) return 0;
    if (strcmp(a->seqs, "stream") || a->eot >= 0 || a->len_sched)
        return die("--tokenizer reads the text as one stream: --seqs lines|paragraphs, --eot and --len-schedule "
                   "need a text or a shard file without it (build/tokenize makes a shard)");
    if (!(a->tok = tok_open(r->ctx, "train_gpt", a->tokenizer, a->tokenizer_dir))) return 1;
    if (a->data && !(r->ld = lt_loader_open_tok(r->ctx, a->data, a->tok, 0, r->B * lt_dist_world(), r->T))) return FAILED;
    if (a->val && !(r->val = lt_loader_open_tok(r->ctx, a->val, a->tok, 0, r->B, r->T))) return FAILED;
    if (a->vocab == 0) a->vocab = (int)lt_tok_vocab_size(a->tok);
    tok_identity(a->tok, id, sizeof id);
    if (used + strlen(id) + 13 > sizeof r->note) used = sizeof r->note - strlen(id) - 13; /* the line fits */
    snprintf(r->note + used, sizeof r->note - used, "\ntokenizer: %s", id);
    return 0;
}

/* The model: loaded from --resume or --init, else a new one of the flags' shape. */
static int model_open(run_t *r) {
    const args_t *a = &r->a;
    char msg[600];
    if (a->resume || a->init) {   /* the file decides the model: a flag that says otherwise is an error */
        r->g = lt_gpt_load(r->ctx, a->resume ? a->resume : a->init, a->heads_set ? a->heads : 0);
        if (r->g && arch_config(a, lt_gpt_cfg(r->g), NULL)) return 1;
    } else {
        lt_gpt_config cfg;
        memset(&cfg, 0, sizeof cfg);
        if (arch_config(a, NULL, &cfg)) return 1;
        cfg.layers = a->layers; cfg.heads = a->heads; cfg.channels = a->channels; cfg.ctx = a->ctx;
        cfg.vocab = a->vocab;
        if (cfg.vocab == 0) {   /* 256 for text, GPT-2's 50257 for token shards: the data opens here */
            int rc = open_data(r, 0);
            if (rc != 0) return rc;
            cfg.vocab = lt_loader_is_shard(r->ld) ? 50257 : 256;
        }
        if (r->T > cfg.ctx && !a->ctx_set) cfg.ctx = r->T; /* the default context grows to --seq */
        r->g = lt_gpt_create(r->ctx, &cfg);
    }
    if (!r->g) return FAILED;
    if (lt_gpt_set_recompute(r->g, a->recompute) != LT_OK || lt_gpt_set_fused_head(r->g, a->fused_head) != LT_OK)
        return FAILED;
    if (r->T > lt_gpt_cfg(r->g)->ctx) {
        snprintf(msg, sizeof msg, "--seq %d is longer than the model's context (%d)", r->T, lt_gpt_cfg(r->g)->ctx);
        return die(msg);
    }
    return 0;
}

/* The data: the training loader (unless model_open opened it), the sequences, --val, one
   micro-batch's buffers. */
static int data_open(run_t *r) {
    const args_t *a = &r->a;
    int V = lt_gpt_cfg(r->g)->vocab, rc;
    lt_data_format f;
    if (data_format(a, &f)) return 1;
    if (a->tok && lt_tok_vocab_size(a->tok) > V) {
        fprintf(stderr, "train_gpt: --tokenizer has %ld tokens but the model's vocab is %d\n",
                (long)lt_tok_vocab_size(a->tok), V);
        return 1;
    }
    if (r->ld) {   /* opened by model_open, or by tok_data (the text encoded) */
        if (lt_loader_check_vocab(r->ld, V) != LT_OK) return FAILED;
    } else if ((rc = open_data(r, V)) != 0) {
        return rc;
    }
    if (a->shuffle) lt_loader_shuffle(r->ld, a->seed);
    if (a->eot >= 0 && !lt_loader_is_shard(r->ld))
        return die("--eot splits token shards into documents; for a text file use --seqs lines or paragraphs");
    if (a->eot >= V) {
        char msg[200];
        snprintf(msg, sizeof msg, "--eot %d is not a token of the model's vocab (0..%d)", a->eot, V - 1);
        return die(msg);
    }
    if ((rc = seqs_open(&r->sq, a, r->ctx, r->ld)) != 0) return rc;
    if (r->sq.on && lt_dist_world() > 1) return die("--seqs, --eot and --len-schedule run on one process only");
    if (a->val && !r->val && !(r->val = lt_loader_open_as(r->ctx, a->val, f, r->B, r->T, V)))
        return FAILED;
    r->in = (int32_t *)malloc((size_t)r->B * (size_t)r->T * sizeof(int32_t));
    r->tg = (int32_t *)malloc((size_t)r->B * (size_t)r->T * sizeof(int32_t));
    if (!r->in || !r->tg) return die("out of memory");
    return 0;
}

/* The optimizer of --optim, configured from the flags. */
static int optim_open(run_t *r) {
    const args_t *a = &r->a;
    lt_paramset ps = lt_gpt_params(r->g);
    if (!strcmp(a->optim, "adamw")) {
        lt_adamw_config c = lt_adamw_defaults();
        c.lr = a->lr; c.beta1 = a->beta1; c.beta2 = a->beta2; c.eps = a->eps; c.weight_decay = a->weight_decay;
        r->opt = lt_adamw_create(r->ctx, ps, c);
    } else if (!strcmp(a->optim, "lion")) {
        lt_lion_config c = lt_lion_defaults();
        c.lr = a->lr; c.weight_decay = a->weight_decay;
        if (a->betas_set) { c.beta1 = a->beta1; c.beta2 = a->beta2; }
        r->opt = lt_lion_create(r->ctx, ps, c);
    } else if (!strcmp(a->optim, "ademamix")) {
        lt_ademamix_config c = lt_ademamix_defaults();
        c.lr = a->lr; c.eps = a->eps; c.weight_decay = a->weight_decay; c.alpha = a->alpha; c.beta3 = a->beta3;
        c.alpha_warmup = a->alpha_warmup < 0 ? a->steps : a->alpha_warmup;
        c.beta3_warmup = a->beta3_warmup < 0 ? a->steps : a->beta3_warmup;
        if (a->betas_set) { c.beta1 = a->beta1; c.beta2 = a->beta2; }
        r->opt = lt_ademamix_create(r->ctx, ps, c);
    } else if (!strcmp(a->optim, "muon")) {   /* Muon for the hidden matrices, AdamW for the rest */
        lt_muon_config c = lt_muon_defaults();
        c.lr = a->lr; c.momentum = a->muon_momentum; c.weight_decay = a->weight_decay;
        c.adamw.lr = a->muon_adamw_lr > 0 ? a->muon_adamw_lr : a->lr * 0.015;
        c.adamw.beta1 = a->beta1; c.adamw.beta2 = a->beta2; c.adamw.weight_decay = a->weight_decay;
        r->opt = lt_muon_create(r->ctx, ps, c);
    } else if (!strcmp(a->optim, "soap")) {
        lt_soap_config c = lt_soap_defaults();
        c.lr = a->lr; c.eps = a->eps; c.weight_decay = a->weight_decay; c.shampoo_beta = a->shampoo_beta;
        c.precondition_frequency = a->precond_freq; c.max_precond_dim = a->max_precond_dim;
        if (a->betas_set) { c.beta1 = a->beta1; c.beta2 = a->beta2; }
        r->opt = lt_soap_create(r->ctx, ps, c);
    } else {
        lt_sgd_config c = lt_sgd_defaults();
        c.lr = a->lr; c.momentum = a->momentum; c.weight_decay = a->weight_decay;
        r->opt = lt_sgd_create(r->ctx, ps, c);
    }
    return r->opt ? 0 : FAILED;
}

/* Data parallel: the gradient all-reduce of --allreduce, in buckets of --bucket-mb. */
static int dist_open(run_t *r) {
    const args_t *a = &r->a;
    lt_dist_config dc = lt_dist_defaults();
    dc.bucket_bytes = (size_t)(a->bucket_mb > 0 ? a->bucket_mb : 16) << 20;
    dc.mode = !strcmp(a->allreduce, "bf16") ? LT_REDUCE_BF16 : !strcmp(a->allreduce, "ordered") ? LT_REDUCE_F32_ORDERED
                                                                                                : LT_REDUCE_F32;
    if (strcmp(a->allreduce, "f32") && strcmp(a->allreduce, "bf16") && strcmp(a->allreduce, "ordered"))
        return die("--allreduce must be f32, ordered or bf16");
    return (r->dist = lt_dist_create(r->ctx, &dc)) ? 0 : FAILED;
}

/* How this run reads its data, saved in checkpoints (lt_train_state's run): what a data position
   means depends on all of it.  "key=value;" fields, the data's path last (as UTF-8 text).  rows:
   the rows of one step's micro-batch over all processes (--batch x processes, the loader's unit). */
static void run_describe(const run_t *r, char *buf, size_t cap) {
    const args_t *a = &r->a;
    int n = snprintf(buf, cap, "rows=%lld;batch=%d;world=%d;seq=%d;accum=%d;shuffle=%s;seqs=%s;eot=%d;batching=%s;"
                     "batch_tokens=%ld;len_schedule=%s;tokens=%lld;", (long long)r->B * lt_dist_world(), r->B,
                     lt_dist_world(), r->T, r->K, a->shuffle ? "on" : "off", a->seqs, a->eot, a->batching, a->batch_tokens,
                     a->len_sched ? a->len_sched : "off", (long long)lt_loader_num_tokens(r->ld));
    if (n > 0 && (size_t)n < cap && (a->shuffle || r->sq.sl))   /* the seed orders the data */
        n += snprintf(buf + n, cap - (size_t)n, "seed=%llu;", a->seed);
    if (n > 0 && (size_t)n + 6 < cap) {
        memcpy(buf + n, "data=", 5);
        lt_utf8_escape(buf + n + 5, cap - (size_t)n - 5, a->data);
    }
}

/* The value of key in a run_describe string (copied into v), or "" if absent. */
static const char *run_field(const char *d, const char *key, char *v, size_t cap) {
    size_t k = strlen(key);
    const char *p = d;
    v[0] = 0;
    while (p && *p) {
        if (!strncmp(p, key, k) && p[k] == '=') {
            size_t n = strcmp(key, "data") ? strcspn(p + k + 1, ";") : strlen(p + k + 1);   /* the path: the rest */
            snprintf(v, cap, "%.*s", (int)(n < cap ? n : cap - 1), p + k + 1);
            return v;
        }
        p = strncmp(p, "data=", 5) ? strchr(p, ';') : NULL;
        if (p) p++;
    }
    return v;
}

/* --resume with flags that read the data otherwise than the saved run: the data position would
   point elsewhere, so refuse, naming the saved and the given values.  A moved data file (another
   path, the same number of tokens) continues with a note.  Checkpoints without a record: a note. */
static int run_check_same(const run_t *r, const char *saved, const char *now) {
    static const char *const keys[][2] = {
        {"rows", "--batch x processes"}, {"seq", "--seq"}, {"accum", "--accum"}, {"shuffle", "--shuffle"},
        {"seqs", "--seqs"}, {"eot", "--eot"}, {"batching", "--batching"}, {"batch_tokens", "--batch-tokens"},
        {"len_schedule", "--len-schedule"}, {"tokens", "--data (tokens)"}, {"seed", "--seed (orders the data)"}};
    char sv[700], nv[700], sb[32], sw[32], msg[1600];
    int k;
    if (!saved[0]) {
        printf("note: %s does not record how its run read the data: --batch, --seq, --data.. are not checked\n",
               r->a.resume);
        return 0;
    }
    for (k = 0; k < (int)(sizeof keys / sizeof keys[0]); k++) {
        run_field(saved, keys[k][0], sv, sizeof sv);
        run_field(now, keys[k][0], nv, sizeof nv);
        if (!strcmp(sv, nv)) continue;
        if (k == 0)
            snprintf(msg, sizeof msg, "--resume %s: saved with %s rows a step (--batch %s x %s processes), this run has %s "
                     "(--batch %d x %d): the data position would point elsewhere; give the saved values, or start a new "
                     "run (--init)", r->a.resume, sv, run_field(saved, "batch", sb, sizeof sb),
                     run_field(saved, "world", sw, sizeof sw), nv, r->B, lt_dist_world());
        else
            snprintf(msg, sizeof msg, "--resume %s: saved with %s %s, this run has %s %s: the data position would point "
                     "elsewhere; give the saved value, or start a new run (--init)", r->a.resume, keys[k][1],
                     sv[0] ? sv : "(none)", keys[k][1], nv[0] ? nv : "(none)");
        return die(msg);
    }
    if (strcmp(run_field(saved, "data", sv, sizeof sv), run_field(now, "data", nv, sizeof nv)))
        printf("note: %s was trained on --data %s; continuing on %s (the same number of tokens)\n", r->a.resume, sv, nv);
    return 0;
}

/* --resume: weights, optimizer state, loss scale, step and data position from the checkpoint. */
static int run_resume(run_t *r) {
    const args_t *a = &r->a;
    char msg[600], now[sizeof r->st.run];
    run_describe(r, now, sizeof now);
    if (!a->resume) { memcpy(r->st.run, now, sizeof now); return 0; }
    if (lt_dist_checkpoint_load(r->dist, r->g, r->opt, &r->st, a->resume) != LT_OK) return FAILED;
    if (run_check_same(r, r->st.run, now) != 0) return 1;
    memcpy(r->st.run, now, sizeof now);
    if ((r->sq.sl ? lt_seq_set_pos(r->sq.sl, r->st.data_epoch, r->st.data_index)
                  : lt_loader_set_pos(r->ld, r->st.data_epoch, r->st.data_index)) != LT_OK) return FAILED;
    if (r->st.step > a->steps) {
        snprintf(msg, sizeof msg, "%s is at step %lld, past --steps %ld (hint: raise --steps)", a->resume,
                 (long long)r->st.step, a->steps);
        return die(msg);
    }
    printf("resumed %s at step %lld\n", a->resume, (long long)r->st.step);
    return 0;
}

/* Where a model save (--save, --convert's OUT) would write: NULL when it can, else the path that
   is refused (out, or one of its two files in buf), lt_error saying why.  A path ending in / that
   names an existing directory is a Hugging Face model directory, written into as save_pretrained
   does: its model.safetensors and config.json are checked; any other path as one file. */
static const char *model_dest_check(lt_ctx *ctx, const char *out, char *buf, size_t cap) {
    size_t n = strlen(out);
    struct stat sb;
    int k;
    if (n > 0 && out[n - 1] == '/' && n + 20 < cap && stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        for (k = 0; k < 2; k++) {
            snprintf(buf, cap, "%s%s", out, k ? "config.json" : "model.safetensors");
            if (lt_dest_check(ctx, buf, LT_DEST_REPLACE) != LT_OK) return buf;
        }
        return NULL;
    }
    return lt_dest_check(ctx, out, LT_DEST_REPLACE) == LT_OK ? NULL : out;
}

/* --log (appended to when resuming) and --plot, on rank 0. */
static int outputs_open(run_t *r) {
    const args_t *a = &r->a;
    const char *bad = NULL;
    char msg[1200], file[4200];
    /* before any training: a path no save could write to (a device, a FIFO, a directory..) */
    if (a->save && model_dest_check(r->ctx, a->save, file, sizeof file)) bad = "--save";
    else if (a->plot && lt_dest_check(r->ctx, a->plot, LT_DEST_REPLACE) != LT_OK) bad = "--plot";
    else if (a->log && lt_dest_check(r->ctx, a->log, LT_DEST_STREAM) != LT_OK) bad = "--log";
    if (bad) {
        snprintf(msg, sizeof msg, "%s: %s", bad, lt_error(r->ctx));
        return die(msg);
    }
    if (a->log && lt_dist_rank() == 0 && !(r->logf = fopen(a->log, r->st.step > 0 ? "a" : "w"))) {
        snprintf(msg, sizeof msg, "cannot open --log %s: %s", a->log, strerror(errno));
        return die(msg);
    }
    if (a->save) {   /* the metadata a save will write, checked now rather than after training */
        lt_st_writer *w = lt_st_writer_create(r->ctx);
        if (w) { lt_st_add_meta(w, "note", r->note); lt_st_add_meta(w, "run", r->st.run); }
        lt_st_writer_destroy(w);
        if (lt_failed(r->ctx)) return FAILED;
    }
    if (a->plot && lt_dist_rank() == 0 && !plot_open(&r->pl, a->plot, r->val != NULL))
        return die("--plot: out of memory");
    return 0;
}

/* The run's header lines, the sample before training, --compile's plan cache and --profile. */
static int run_start(run_t *r) {
    const args_t *a = &r->a;
    const lt_gpt_config *cfg = lt_gpt_cfg(r->g);
    printf("model: %lld parameters (%sL=%d H=%d C=%d ctx=%d V=%d) | data: %s, %lld tokens | B=%d T=%d K=%d | "
           "%d threads | matmul: %s\n",
           (long long)lt_gpt_num_params(r->g), cfg->arch == LT_ARCH_LLAMA ? "llama " : "", cfg->layers, cfg->heads,
           cfg->channels, cfg->ctx, cfg->vocab, a->data,
           (long long)lt_loader_num_tokens(r->ld), r->B, r->T, r->K, lt_get_threads(),
           lt_kernel_name_for(lt_get_precision(r->ctx)));
    if (lt_dist_world() > 1) printf("dist: world %d | %s\n", lt_dist_world(), lt_dist_describe(r->dist));
    if (lt_get_device(r->ctx) != LT_CPU)
        printf("device: %s %s\n", lt_device_name(lt_get_device(r->ctx)), lt_device_describe(r->ctx));
    lt_rng_seed(&r->srng, a->seed ^ 0x5eedULL);
    if (a->sample > 0) sample(r->g, a, &r->srng, "sample before training");

    if (!strcmp(a->compile, "on") && !r->sq.on) {
        r->gs.g = r->g; r->gs.in = r->in; r->gs.tg = r->tg; r->gs.B = r->B; r->gs.T = r->T;
        if (!(r->plans = lt_plan_cache_create(r->ctx, 4))) return FAILED;
    }
    printf("mode: %s | precision %s%s", r->plans ? "compiled (lt_compile: captured once, replayed)" : "eager",
           a->precision, r->scaler.enabled ? " (dynamic loss scale)"
                         : lt_get_precision(r->ctx) == LT_F16 ? " (no loss scale)" : "");
    if (a->recompute == 1) printf(" | checkpoint every block");
    if (a->recompute > 1) printf(" | checkpoint every %d-th block", a->recompute);
    printf("\n");
    if (a->profile) lt_set_profiling(r->ctx, 1);
    return 0;
}

/* The step's gradients and mean loss: K micro-batches of (forward, loss/K, backward), replayed
   from a captured plan when compiled, or the token-weighted step of seqs_step. */
static int step_batch(run_t *r, step_t *s) {
    int k;
    lt_zero_grad_lazy(r->ctx);   /* no pass of zeros: backward writes each gradient first */
    r->sq.seed = (float)s->seed;
    if (r->sq.on)
        return seqs_step(&r->sq, r->ctx, r->g, r->ld, s->step, r->in, r->tg, &s->loss) != LT_OK ? FAILED : 0;
    for (k = 0; k < r->K; k++) {
        lt_tensor *loss;
        if (lt_dist_loader_next(r->dist, r->ld, r->in, r->tg) != LT_OK) return FAILED;   /* this rank's rows */
        if (r->plans) {   /* compiled: the plan re-reads in/tg and replays forward + backward */
            lt_plan *p = lt_plan_cache_get(r->plans, r->T, gpt_step, &r->gs);
            float l = 0;
            if (!p) return FAILED;
            if (s->step == (long)r->st.step && k == 0) printf("compile: %s\n", lt_plan_note(p));
            if (lt_plan_run_scaled(p, (float)s->seed / (float)r->K, &l) != LT_OK) return FAILED;
            s->loss += l;
            continue;
        }
        loss = lt_gpt_loss(r->g, r->in, r->tg, r->B, r->T);
        s->loss += lt_item(loss);
        /* the gradient of the mean over K micro-batches: each backward sees loss/K */
        if (lt_backward_scaled(r->ctx, loss, (float)s->seed / (float)r->K) != LT_OK) return FAILED;
    }
    s->loss /= r->K;
    return 0;
}

/* All-reduce, then the update.  fp16 (lt_scaler, torch.cuda.amp.GradScaler's order): unscale ->
   clip unless inf -> step (skipped on inf/NaN) -> update the scale; without a scaler these do
   nothing extra.  A diverged loss or a non-finite gradient norm ends the run (1). */
static int step_update(run_t *r, step_t *s) {
    const args_t *a = &r->a;
    lt_paramset ps = lt_gpt_params(r->g);
    char msg[600];
    if (lt_dist_allreduce_grads(r->dist) != LT_OK) return FAILED;   /* every rank: the global mean gradient */
    s->loss = lt_dist_mean(r->dist, s->loss);
    if (!isfinite(s->loss)) {
        snprintf(msg, sizeof msg, "step %ld: the loss is %g (diverged; try a lower --lr or --clip-norm 1)", s->step + 1,
                 s->loss);
        return die(msg);
    }
    s->zero_frac = zero_grad_frac(ps);
    s->inf_skip = lt_scaler_unscale(r->ctx, &r->scaler, ps) == LT_OK && lt_scaler_found_inf(&r->scaler);
    if (lt_failed(r->ctx)) return FAILED;
    s->norm = s->inf_skip ? INFINITY : a->clip_norm > 0 ? lt_clip_grad_norm(r->ctx, ps, a->clip_norm)
                                                        : lt_grad_norm(r->ctx, ps);
    if (!isfinite(s->norm) && !s->inf_skip) {   /* name the first parameter whose gradient is not finite */
        if (!lt_failed(r->ctx)) lt_clip_grad_norm(r->ctx, ps, INFINITY);
        snprintf(msg, sizeof msg, "step %ld: %s", s->step + 1, lt_error(r->ctx));
        return die(msg);
    }
    if (a->clip_value > 0 && !s->inf_skip) lt_clip_grad_value(r->ctx, ps, a->clip_value);
    if (a->skip_outliers > 0 && !s->inf_skip)
        s->skip = guard_outlier(&r->guard, a->skip_outliers, s->loss, s->norm, &s->zl, &s->zn);
    if (!s->skip && lt_scaler_step(&r->scaler, r->opt, s->lr) != LT_OK) return FAILED;
    if (lt_scaler_update(&r->scaler) != LT_OK) return FAILED;
    return 0;
}

/* The step's time and throughput, every position processed, padding included (real tokens/s =
   tps * (1 - pad)); the run's totals. */
static void step_count(run_t *r, step_t *s) {
    seqs_t *q = &r->sq;
    s->ms = now_ms() - s->t0;
    if (r->done > 0) r->later_ms += s->ms;
    r->done++;
    s->tps = (q->on ? q->positions : (double)r->B * r->T * r->K * lt_dist_world()) / (s->ms / 1e3);
    s->pad = q->on ? 1.0 - q->real / q->positions : 0.0;
    q->all_pos += q->on ? q->positions : (double)r->B * r->T * r->K;
    q->all_real += q->on ? q->real : (double)r->B * r->T * r->K;
}

/* The step on stdout: a progress bar on a terminal, else a line; a skipped step says why. */
static void log_step(run_t *r, const step_t *s) {
    const args_t *a = &r->a;
    char ar[48] = "";   /* data parallel: the all-reduce's share of the step */
    char amp[96] = "";  /* fp16: the loss scale this step ran with, steps skipped so far */
    if (r->scaler.enabled)
        snprintf(amp, sizeof amp, " | scale %g%s | skipped %lld", s->seed,
                 s->inf_skip ? " (inf/NaN grad: no step)" : "", (long long)lt_scaler_skipped(&r->scaler));
    if (lt_dist_world() > 1)
        snprintf(ar, sizeof ar, " | allreduce %.1f ms (+%.1f wait)", lt_dist_get_stats(r->dist).last_ms,
                 lt_dist_get_stats(r->dist).wait_ms);
    if (s->skip) {
        printf("%sstep %ld/%ld | skipped: loss %.4f (z %.1f), norm %.3f (z %.1f) over the last %d steps\n",
               r->tty ? "\n" : "", s->step + 1, a->steps, s->loss, s->zl, s->norm, s->zn, r->guard.n - 1);
    } else if (r->tty) {
        double left = (now_ms() - r->t_start) / r->done * (double)(a->steps - s->step - 1) / 1e3;
        int w = 30, fill = (int)((double)(s->step + 1) / a->steps * w), j;
        printf("\r[");
        for (j = 0; j < w; j++) putchar(j < fill ? '#' : '.');
        printf("] step %ld/%ld | loss %.4f | lr %.2e | norm %.3f | %.0f ms%s%s | %.0f tok/s | ETA %.0fs   ",
               s->step + 1, a->steps, s->loss, s->lr, s->norm, s->ms, ar, amp, s->tps, left);
        if (s->step + 1 == a->steps) putchar('\n');
        fflush(stdout);
    } else {
        printf("step %ld/%ld | loss %.4f | lr %.2e | norm %.3f | %.0f ms%s%s | %.0f tok/s\n", s->step + 1, a->steps,
               s->loss, s->lr, s->norm, s->ms, ar, amp, s->tps);
    }
}

/* --log: a failed write (a full disk) ends the run with the reason; 0 when all is well. */
static int log_check(run_t *r) {
    char msg[700];
    if (!r->logf || (fflush(r->logf) == 0 && !ferror(r->logf))) return 0;
    snprintf(msg, sizeof msg, "%s--log %s: writing failed: %s", r->tty ? "\n" : "", r->a.log, strerror(errno));
    fclose(r->logf);
    r->logf = NULL;
    return die(msg);
}

/* A number for JSON: null where it is not finite (JSON has no NaN or infinity). */
static const char *json_num(char *buf, size_t cap, double x) {
    if (isfinite(x)) snprintf(buf, cap, "%.9g", x);
    else snprintf(buf, cap, "null");
    return buf;
}

/* --log: one JSON line per step (a skipped step's line says why). */
static int log_json(run_t *r, const step_t *s) {
    FILE *f = r->logf;
    char gn[32];
    if (!f) return 0;
    if (s->skip)
        fprintf(f, "{\"step\": %ld, \"skipped\": 1, \"loss\": %.9g, \"grad_norm\": %.9g, \"z_loss\": %.3f, "
                "\"z_norm\": %.3f}\n", s->step + 1, s->loss, s->norm, s->zl, s->zn);
    if (s->inf_skip)
        fprintf(f, "{\"step\": %ld, \"skipped\": 1, \"reason\": \"inf/NaN gradient\", \"loss\": %.9g, "
                "\"loss_scale\": %.9g, \"skipped_steps\": %lld}\n", s->step + 1, s->loss, s->seed,
                (long long)lt_scaler_skipped(&r->scaler));
    if (!s->skip && !s->inf_skip) {
        fprintf(f, "{\"step\": %ld, \"loss\": %.9g, \"lr\": %.9g, \"grad_norm\": %s, \"ms\": %.9g, "
                "\"tokens_per_s\": %.9g, \"pad_frac\": %.6f, \"seq\": %d, \"world\": %d, \"allreduce_ms\": %.6g, "
                "\"allreduce_wait_ms\": %.6g, \"precision\": \"%s\", \"loss_scale\": %.9g, \"skipped_steps\": %lld, "
                "\"grad_zero_frac\": %.6g}\n", s->step + 1, s->loss, s->lr, json_num(gn, sizeof gn, s->norm), s->ms, s->tps, s->pad,
                r->sq.on ? r->sq.cur_T : r->T, lt_dist_world(), lt_dist_get_stats(r->dist).last_ms,
                lt_dist_get_stats(r->dist).wait_ms, r->a.precision, s->seed, (long long)lt_scaler_skipped(&r->scaler),
                s->zero_frac);
    }
    return log_check(r);
}

/* --plot: the step's loss and lr; the file is rewritten every 10 steps. */
static void plot_update(run_t *r, const step_t *s) {
    if (!r->pl.p) return;
    lt_plot_append(r->pl.p, r->pl.loss, (double)(s->step + 1), s->loss);
    lt_plot_append(r->pl.p, r->pl.lr, (double)(s->step + 1), s->lr);
    if ((s->step + 1) % 10 == 0) plot_save(&r->pl);
}

/* --eval-every N: the validation loss every N steps. */
static int maybe_eval(run_t *r, long step) {
    const args_t *a = &r->a;
    double vl;
    char v[32];
    if (!r->val || a->eval_every <= 0 || (step + 1) % a->eval_every != 0) return 0;
    vl = evaluate(r->ctx, r->g, r->val, a->eval_batches, r->B, r->T, r->in, r->tg);
    if (r->tty) printf("\n");
    printf("step %ld/%ld | val loss %.4f\n", step + 1, a->steps, vl);
    if (r->pl.p) lt_plot_append(r->pl.p, r->pl.val, (double)(step + 1), vl);
    if (r->logf) fprintf(r->logf, "{\"step\": %ld, \"val_loss\": %s}\n", step + 1, json_num(v, sizeof v, vl));
    return log_check(r);
}

/* --save: a checkpoint every --save-every steps, at the last step and at --stop-after. */
static int maybe_save(run_t *r, long step) {
    const args_t *a = &r->a;
    if (!a->save || !((a->save_every > 0 && (step + 1) % a->save_every == 0) || step + 1 == a->steps ||
                      (a->stop_after > 0 && r->done == a->stop_after)))
        return 0;
    r->st.step = step + 1;
    if (r->sq.sl) lt_seq_get_pos(r->sq.sl, &r->st.data_epoch, &r->st.data_index);
    else lt_loader_get_pos(r->ld, &r->st.data_epoch, &r->st.data_index);
    if (lt_dist_checkpoint_save(r->dist, r->g, r->opt, &r->st, r->note, a->save) != LT_OK)   /* rank 0 writes */
        return FAILED;
    if (r->tty) printf("\n");
    printf("saved %s (step %ld)\n", a->save, step + 1);
    return 0;
}

/* After the loop: the time per step, padding, the final validation loss, --profile, --sample. */
static void run_finish(run_t *r, double *final_val) {
    const args_t *a = &r->a;
    seqs_t *q = &r->sq;
    if (r->done > 1)   /* the number to compare between --compile on and off, or precisions */
        printf("done: %ld steps | %.1f ms per step after the first | peak RSS %.1f MB\n", r->done,
               r->later_ms / (double)(r->done - 1), peak_rss_mb());
    if (q->on && q->all_pos > 0)
        printf("padding: %.1f%% of %.0f positions\n", 100.0 * (1.0 - q->all_real / q->all_pos), q->all_pos);
    if (final_val)
        *final_val = r->val ? evaluate(r->ctx, r->g, r->val, a->eval_batches, r->B, r->T, r->in, r->tg) : NAN;
    if (a->profile) lt_profile_print(r->ctx, stdout);
    if (a->sample > 0) sample(r->g, a, &r->srng, "sample after training");
}

/* Prints a library error (FAILED), frees everything; returns the exit code. */
static int run_close(run_t *r, int rc) {
    if (rc == FAILED) {
        fprintf(stderr, "train_gpt: %s\n", lt_error(r->ctx)[0] ? lt_error(r->ctx) : "failed");
        rc = 1;
    }
    if (r->logf && fclose(r->logf) != 0 && rc == 0) {
        char msg[700];
        snprintf(msg, sizeof msg, "--log %s: writing failed: %s", r->a.log, strerror(errno));
        rc = die(msg);
    }
    if (r->pl.p && r->done > 0) plot_save(&r->pl);   /* the last steps, also when training stopped early */
    lt_plot_destroy(r->pl.p);
    free(r->in);
    free(r->tg);
    lt_plan_cache_destroy(r->plans);
    lt_optim_destroy(r->opt);
    lt_dist_destroy(r->dist);
    lt_loader_destroy(r->ld);
    lt_loader_destroy(r->val);
    seqs_close(&r->sq);
    lt_tok_free(r->a.tok);
    lt_gpt_destroy(r->g);
    lt_ctx_destroy(r->ctx);
    return rc;
}

/* One training run of the command line; final_val (if not NULL) gets the last validation loss. */
static int train(int argc, char **argv, double *final_val) {
    run_t r;
    long step;
    int rc;
    memset(&r, 0, sizeof r);
    r.scaler = lt_scaler_defaults();
    r.pl.loss = r.pl.val = r.pl.lr = -1;
    /* progress bars: rank 0 of one process, on a terminal; under an MPI launcher (whose output
       may reach a terminal through a pseudo-terminal or a pipe) plain lines */
    r.tty = isatty(1) && lt_dist_world() == 1 && !getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") &&
            !getenv("PMIX_RANK");

    /* ---- setup ---- */
    rc = run_open(&r, argc, argv);
    if (!rc) rc = tok_data(&r);
    if (!rc) rc = model_open(&r);
    if (!rc) rc = data_open(&r);
    if (!rc) rc = optim_open(&r);
    if (!rc) rc = dist_open(&r);
    if (!rc) rc = run_resume(&r);
    if (!rc) rc = outputs_open(&r);
    if (!rc) rc = run_start(&r);
    if (rc) return run_close(&r, rc);

    /* ---- the loop ---- */
    r.t_start = now_ms();
    for (step = (long)r.st.step; step < r.a.steps; step++) {
        step_t s;
        memset(&s, 0, sizeof s);
        s.step = step;
        s.t0 = now_ms();
        s.lr = lt_schedule_lr(&r.sched, step);
        s.seed = lt_scaler_get_scale(&r.scaler);   /* fp16: backward runs on loss * scale (else 1) */
        if ((rc = step_batch(&r, &s)) != 0 || (rc = step_update(&r, &s)) != 0) return run_close(&r, rc);
        step_count(&r, &s);
        log_step(&r, &s);
        if ((rc = log_json(&r, &s)) != 0) return run_close(&r, rc);
        plot_update(&r, &s);
        if ((rc = maybe_eval(&r, step)) != 0 || (rc = maybe_save(&r, step)) != 0) return run_close(&r, rc);
        if (r.a.stop_after > 0 && r.done == r.a.stop_after) break;
    }
    run_finish(&r, final_val);
    return run_close(&r, 0);
}

/* ---- random restarts (--restarts R --restart-steps K) -------------------------------------------
   Candidate r trains with seed --seed + r (weights and data order) for K steps of the full
   schedule (--stop-after K), saved to a temporary checkpoint, then is scored on --val; the one
   with the lowest validation loss is resumed from its checkpoint and trained to --steps. */
typedef struct { int argc; char **argv; const args_t *a; } restarts_t;

static void restart_path(const restarts_t *rs, int r, char *buf, size_t cap) {
    snprintf(buf, cap, "%s.restart%d.safetensors", rs->a->save ? rs->a->save : "train_gpt", r);
}

/* train() on the command line plus extra flags (later flags win) */
static int train_with(const restarts_t *rs, const char **extra, int nextra, double *val) {
    char **argv2 = (char **)malloc(((size_t)rs->argc + (size_t)nextra + 1) * sizeof(char *));
    int i, rc;
    if (!argv2) return die("out of memory");
    for (i = 0; i < rs->argc; i++) argv2[i] = rs->argv[i];
    for (i = 0; i < nextra; i++) argv2[rs->argc + i] = (char *)extra[i];
    argv2[rs->argc + nextra] = NULL;
    rc = train(rs->argc + nextra, argv2, val);
    free(argv2);
    return rc;
}

static lt_status restart_one(void *user, int r, uint64_t seed, double *val) {
    const restarts_t *rs = (const restarts_t *)user;
    char sd[32], k[32], path[640], logp[640];
    const char *extra[12];
    int n = 0;
    snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
    snprintf(k, sizeof k, "%d", rs->a->restart_steps);
    restart_path(rs, r, path, sizeof path);
    printf("==== restart %d: seed %s, %s steps ====\n", r, sd, k);
    extra[n++] = "--seed"; extra[n++] = sd; extra[n++] = "--stop-after"; extra[n++] = k;
    extra[n++] = "--save"; extra[n++] = path; extra[n++] = "--restarts"; extra[n++] = "0";
    extra[n++] = "--sample"; extra[n++] = "0";
    if (rs->a->log) {   /* each candidate's own log beside the run's */
        snprintf(logp, sizeof logp, "%s.restart%d.jsonl", rs->a->log, r);
        extra[n++] = "--log"; extra[n++] = logp;
    }
    return train_with(rs, extra, n, val) == 0 ? LT_OK : LT_ERR_STATE;
}

static int restarts(int argc, char **argv, const args_t *a) {
    restarts_t rs;
    uint64_t *seeds;
    double *vals;
    char sd[32], path[640];
    const char *extra[6];
    int best, r, rc = 1;
    if (!a->val) return die("--restarts needs --val (candidates are compared on the validation loss)");
    if (a->resume) return die("--restarts starts new runs: it cannot be combined with --resume");
    if (a->restart_steps < 1 || a->restart_steps >= a->steps) return die("--restart-steps must be in [1, --steps)");
    seeds = (uint64_t *)malloc((size_t)a->restarts * sizeof(uint64_t));
    vals = (double *)malloc((size_t)a->restarts * sizeof(double));
    if (!seeds || !vals) { free(seeds); free(vals); return die("out of memory"); }
    rs.argc = argc; rs.argv = argv; rs.a = a;
    best = lt_restarts(a->restarts, a->seed, restart_one, &rs, seeds, vals);
    printf("==== restarts: validation loss after %d steps ====\n", a->restart_steps);
    lt_restarts_print(stdout, a->restarts, seeds, vals, best);
    if (best >= 0) {
        snprintf(sd, sizeof sd, "%llu", (unsigned long long)seeds[best]);
        restart_path(&rs, best, path, sizeof path);
        printf("==== continuing restart %d (seed %s) to step %ld; to resume this run later pass --seed %s ====\n", best,
               sd, a->steps, sd);
        extra[0] = "--seed"; extra[1] = sd; extra[2] = "--resume"; extra[3] = path;
        extra[4] = "--restarts"; extra[5] = "0";
        rc = train_with(&rs, extra, 6, NULL);
    } else {
        die("no restart finished with a finite validation loss");
    }
    for (r = 0; r < a->restarts; r++) { restart_path(&rs, r, path, sizeof path); remove(path); }
    free(seeds);
    free(vals);
    return rc;
}

/* ---- tools: --inspect PATH, --convert IN OUT (no training) --------------------------------------
   Both load the model completely with lt_gpt_load (so whatever would refuse it for --init refuses
   it here, with the same message) and read the file itself with lt_st_open for what the model does
   not keep: dtypes, tensors it ignores, metadata. */

/* The safetensors file of a model path: path itself, or path/model.safetensors (in buf) for a
   directory. */
static const char *model_file(const char *path, char *buf, size_t cap) {
    struct stat sb;
    size_t n = strlen(path);
    if (n > 0 && n + 20 < cap && (path[n - 1] == '/' || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)))) {
        snprintf(buf, cap, "%s%smodel.safetensors", path, path[n - 1] == '/' ? "" : "/");
        return buf;
    }
    return path;
}

/* The model of path and its file (*file: path or buf, room for 4200), or 1 after a message;
   model flags given must agree with it. */
static int tool_open(lt_ctx *ctx, const args_t *a, const char *path, lt_gpt **g, lt_st **st, char *buf,
                     const char **file) {
    *st = NULL;
    *file = model_file(path, buf, 4200);
    if (!(*g = lt_gpt_load(ctx, path, a->heads_set ? a->heads : 0))) return die(lt_error(ctx));
    if (arch_config(a, lt_gpt_cfg(*g), NULL)) return 1;
    if (!(*st = lt_st_open(ctx, *file))) return die(lt_error(ctx));
    return 0;
}

/* --inspect: the config as the flags name it, the tensor table, the total, the metadata keys. */
static int inspect(lt_ctx *ctx, const args_t *a) {
    lt_gpt *g;
    lt_st *st;
    const lt_gpt_config *c;
    int64_t shape[8], n, total = 0;
    char buf[160], fbuf[4200];
    const char *key, *val, *file;
    int i, d, nd, llama, w = 4;
    if (tool_open(ctx, a, a->inspect, &g, &st, fbuf, &file)) { lt_gpt_destroy(g); return 1; }
    c = lt_gpt_cfg(g);
    llama = c->arch == LT_ARCH_LLAMA;
    printf("model: %s%s%s%s\nconfig:\n", a->inspect, file != a->inspect ? " (" : "", file != a->inspect ? file : "",
           file != a->inspect ? ")" : "");
    printf("  arch:       %s (%s)\n", llama ? "llama" : "gpt2",
           !llama ? "GPT2LMHeadModel" : c->qk_norm ? "Qwen3ForCausalLM" : "LlamaForCausalLM");
    printf("  layers:     %d\n  heads:      %d\n  kv-heads:   %d\n  channels:   %d\n  hidden:     %d\n", c->layers,
           c->heads, llama ? c->kv_heads : c->heads, c->channels, c->hidden);
    printf("  vocab:      %d\n  ctx:        %d\n", c->vocab, c->ctx);
    if (llama) printf("  rope-theta: %g\n", (double)c->rope_theta);
    else printf("  rope-theta: none (learned positions, wpe)\n");
    printf("  norm-eps:   %g (%s)\n", (double)c->norm_eps, llama ? "RMSNorm" : "LayerNorm");
    printf("  tie:        %s\n", c->untied ? "no (lm_head.weight)" : "yes (the head is the embedding)");
    printf("  bias:       %s\n", c->no_bias == -1 || (!llama && c->no_bias == 0) ? "yes" : "no");
    printf("  qk-norm:    %s\n", c->qk_norm ? "yes" : "no");
    for (i = 0; i < lt_st_count(st); i++) if ((int)strlen(lt_st_name(st, i)) > w) w = (int)strlen(lt_st_name(st, i));
    printf("tensors:\n  %-*s  %-5s %-16s %s\n", w, "name", "dtype", "shape", "parameters");
    for (i = 0; i < lt_st_count(st); i++) {
        size_t used = 0;
        nd = lt_st_shape(st, i, shape);
        n = 1;
        buf[used++] = '[';
        for (d = 0; d < nd; d++) {
            n *= shape[d];
            used += (size_t)snprintf(buf + used, sizeof buf - used, d ? ", %lld" : "%lld", (long long)shape[d]);
        }
        snprintf(buf + used, sizeof buf - used, "]");
        total += n;
        {
            const char *name = lt_st_name(st, i), *dtype = lt_st_dtype(st, i);   /* (NULL only past the count) */
            printf("  %-*s  %-5s %-16s %lld\n", w, name ? name : "?", dtype ? dtype : "?", buf, (long long)n);
        }
    }
    printf("total: %d tensors, %lld parameters (the model: %lld)\nmetadata:", lt_st_count(st), (long long)total,
           (long long)lt_gpt_num_params(g));
    for (i = 0; (key = lt_st_meta_key(st, i)) != NULL; i++) {
        val = lt_st_meta(st, key);   /* a short one-line value in full, else its size */
        if (strlen(val) <= 60 && !strchr(val, '\n')) printf("\n  %s: %s", key, val);
        else printf("\n  %s: (%zu bytes)", key, strlen(val));
    }
    printf("%s\n", i ? "" : " none");
    lt_st_close(st);
    lt_gpt_destroy(g);
    return 0;
}

/* --convert: OUT checked before anything is read (a directory without the final /, a device:
   refused; a directory path: the two files it gets), IN loaded completely, its weights saved with
   its note (sample_gpt reads the tokenizer's record there). */
static int convert(lt_ctx *ctx, const args_t *a) {
    lt_gpt *g;
    lt_st *st;
    char msg[1200], file[4200];
    const char *out = a->convert_out, *bad, *in_file;
    size_t n = strlen(out);
    int rc;
    if ((bad = model_dest_check(ctx, out, file, sizeof file))) {
        snprintf(msg, sizeof msg, "--convert: %s%s", lt_error(ctx), bad == out && strstr(lt_error(ctx), "is a directory")
                 ? " (OUT is a file, or a Hugging Face model directory: a path ending in /)" : "");
        return die(msg);
    }
    rc = tool_open(ctx, a, a->convert_in, &g, &st, file, &in_file);
    if (!rc && lt_checkpoint_save(g, NULL, NULL, lt_st_meta(st, "note"), out) != LT_OK) rc = die(lt_error(ctx));
    if (!rc)
        printf("converted %s (%s, %lld parameters) to %s%s\n", a->convert_in,
               lt_gpt_cfg(g)->arch == LT_ARCH_LLAMA ? "llama" : "gpt2", (long long)lt_gpt_num_params(g), out,
               n && out[n - 1] == '/' ? " (model.safetensors and config.json)" : "");
    lt_st_close(st);
    lt_gpt_destroy(g);
    return rc;
}

static int tools(const args_t *a) {
    lt_ctx *ctx = lt_ctx_create(a->seed);
    int rc;
    if (!ctx) return die("out of memory");
    if (a->threads > 0) lt_set_threads(a->threads);
    rc = a->inspect ? inspect(ctx, a) : convert(ctx, a);
    lt_ctx_destroy(ctx);
    return rc;
}

int main(int argc, char **argv) {
    args_t a;
    int rc;
    /* data parallel (built with make mpi, run with mpirun -np N): every rank runs this program;
       only rank 0 prints and writes logs and checkpoints.  A plain build is one process. */
    if (lt_dist_init(&argc, &argv) != LT_OK) return die("MPI initialisation failed");
    if (lt_dist_rank() > 0 && !freopen("/dev/null", "w", stdout)) return die("cannot silence stdout");
    defaults(&a);
    rc = !parse(&a, argc, argv) ? 1 : a.inspect || a.convert_in ? tools(&a) : a.restarts > 0 ? restarts(argc, argv, &a)
                                                                                       : train(argc, argv, NULL);
    if (rc != 0) lt_dist_abort(rc);   /* a rank that failed alone must not leave the others waiting */
    lt_dist_finalize();
    return rc;
}

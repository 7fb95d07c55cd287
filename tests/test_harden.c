/* test_harden.c - hardening.  The named corpus of malformed files (tests/malformed, written by
   tests/gen_malformed.py; MANIFEST.tsv says which reader each goes through and the keyword its
   error must contain) through lt_st_parse, lt_shard_parse, lt_checkpoint_load and
   build/train_gpt --init/--resume/--data; build/train_gpt resuming to the bit in every mode
   (inside warm-up, at a data wrap-around, with accumulation, shuffling, SGD momentum, buckets,
   a length schedule, bf16 and fp16);
   saves leave no temporary file; a diverging run names its step; --skip-outliers.
   #included by test_main.c.  LT_TRAIN_GPT picks the train_gpt binary (make test runs the CLI
   part once more with build/train_gpt_san). */
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

static const char *th__bin(void) { const char *b = getenv("LT_TRAIN_GPT"); return b ? b : "build/train_gpt"; }
static const char *th__dir(void) { const char *d = getenv("LT_MALFORMED_DIR"); return d ? d : "tests/malformed"; }

static void th__path(char *buf, size_t cap, const char *file) { snprintf(buf, cap, "%s/harden_%s", t_tmp_dir(), file); }

/* Runs train_gpt with args (stdout and stderr to files); the exit status, or -1 when it did not
   exit normally (a signal: a crash).  A sanitizer report exits 99, so it never passes as the
   ordinary error status 1. */
static int th__run(const char *args, const char *out_path, const char *err_path) {
    char cmd[8192];
    int s;
    snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=exitcode=99:print_stacktrace=1 "
             "%s %s > %s 2> %s", th__bin(), args, out_path, err_path);
    s = system(cmd);
    if (s == -1 || !WIFEXITED(s)) return -1;
    return WEXITSTATUS(s);
}

/* ---- the corpus ------------------------------------------------------------------------------ */
typedef struct {
    lt_ctx *ctx;
    lt_gpt *g;
    lt_optim *opt;
    int n_lib, n_cli, n_ok;
} th__corp;

/* The model gen_malformed.py's checkpoints hold: vocab 16, ctx 8, 1 layer, 2 heads, 4 channels. */
static int th__corp_model(th__corp *c) {
    lt_gpt_config cfg;
    if (c->g) return 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab = 16; cfg.ctx = 8; cfg.layers = 1; cfg.heads = 2; cfg.channels = 4;
    c->ctx = lt_ctx_create(5);
    c->g = c->ctx ? lt_gpt_create(c->ctx, &cfg) : NULL;
    c->opt = c->g ? lt_adamw_create(c->ctx, lt_gpt_params(c->g), lt_adamw_defaults()) : NULL;
    return t_check(c->opt != NULL, "harden.corpus.model", "%s", c->ctx ? lt_error(c->ctx) : "no context");
}

static void th__corp_lib(th__corp *c, const char *file, const char *reader, const char *want, const char *path) {
    char name[300];
    const char *msg;
    int ok_want = strcmp(want, "OK") == 0, loaded = 0;
    snprintf(name, sizeof name, "harden.lib.%s.%s", reader, file);
    if (!t_want(name) || !th__corp_model(c)) return;
    lt_clear_error(c->ctx);
    if (!strcmp(reader, "st") || !strcmp(reader, "shard")) {
        size_t size;
        char *buf = t_slurp(path, &size);
        if (!buf) { t_check(0, name, "cannot read %s", path); return; }
        if (reader[1] == 't') {
            lt_st *st = lt_st_parse(c->ctx, buf, size, file);
            loaded = st != NULL;
            lt_st_close(st);
        } else {
            int32_t *tok = NULL;
            int64_t n = -1;
            loaded = lt_shard_parse(c->ctx, buf, size, file, 16, &tok, &n) == LT_OK;
            if (!loaded && (tok || n)) loaded = -1;   /* a failure must leave no tokens behind */
            lt_free(tok);
        }
        free(buf);
    } else {
        lt_train_state ts;
        memset(&ts, 0, sizeof ts);
        loaded = lt_checkpoint_load(c->g, c->opt, &ts, path) == LT_OK;
    }
    msg = lt_error(c->ctx);
    c->n_lib++;
    if (ok_want) t_check(loaded == 1 && !lt_failed(c->ctx), name, "should load: %s", msg);
    else
        t_check(loaded == 0 && lt_failed(c->ctx) && strstr(msg, want) && strstr(msg, file), name,
                "loaded=%d, message \"%s\" (want an error naming the file and containing \"%s\")", loaded, msg, want);
    c->n_ok += loaded == 1;
    lt_clear_error(c->ctx);
}

static void th__corp_cli(th__corp *c, const char *file, const char *reader, const char *want, const char *path) {
    char name[300], args[2048], shard[512], out[512], err[512], *e;
    int rc, ok_want = strcmp(want, "OK") == 0, one_line;
    snprintf(name, sizeof name, "harden.cli.%s.%s", reader, file);
    if (!t_want(name)) return;
    if (!t_exists(th__bin())) { t_skip(name, "no train_gpt binary (make build/train_gpt)"); return; }
    snprintf(shard, sizeof shard, "%s/shard_valid.bin", th__dir());
    th__path(out, sizeof out, "cli.out");
    th__path(err, sizeof err, "cli.err");
    if (!strcmp(reader, "init"))
        snprintf(args, sizeof args, "--init %s --data %s --batch 1 --seq 4 --steps 1 --threads 1", path, shard);
    else if (!strcmp(reader, "resume"))
        snprintf(args, sizeof args, "--resume %s --data %s --batch 1 --seq 4 --steps 5 --threads 1", path, shard);
    else
        snprintf(args, sizeof args, "--data %s --vocab 16 --layers 1 --heads 2 --channels 4 --ctx 8 --batch 1 --seq 4 "
                 "--steps 1 --threads 1", path);
    rc = th__run(args, out, err);
    e = t_slurp(err, NULL);
    c->n_cli++;
    if (ok_want) {
        t_check(rc == 0, name, "exit %d: %s", rc, e ? e : "");
    } else {
        /* exactly one line, "train_gpt: ..." with the keyword; exit status 1 */
        one_line = e && strncmp(e, "train_gpt: ", 11) == 0 && strchr(e, '\n') == e + strlen(e) - 1;
        t_check(rc == 1 && one_line && strstr(e, want), name, "exit %d, stderr \"%s\" (want one line containing \"%s\")",
                rc, e ? e : "", want);
    }
    free(e);
}

static void th__corpus(void) {
    char mpath[512], *text, *line, *next;
    th__corp c;
    int rows = 0;
    memset(&c, 0, sizeof c);
    snprintf(mpath, sizeof mpath, "%s/MANIFEST.tsv", th__dir());
    text = t_slurp(mpath, NULL);
    if (!t_check(text != NULL, "harden.corpus.manifest", "cannot read %s (python3 tests/gen_malformed.py)", mpath)) return;
    for (line = text; line && *line; line = next) {
        char *f[4], path[600];
        int k;
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (line[0] == '#' || !line[0]) continue;
        for (k = 0; k < 4; k++) {
            f[k] = line;
            line = strchr(line, '\t');
            if (line) *line++ = 0;
            else { for (k++; k < 4; k++) f[k] = (char *)""; break; }
        }
        rows++;
        snprintf(path, sizeof path, "%s/%s", th__dir(), f[0]);
        if (!strncmp(f[1], "tok_", 4)) c.n_lib += tt__corp_row(th__dir(), f[0], f[1], f[2]);   /* test_tok.c */
        else if (!strcmp(f[1], "st") || !strcmp(f[1], "shard") || !strcmp(f[1], "ckpt")) th__corp_lib(&c, f[0], f[1], f[2], path);
        else th__corp_cli(&c, f[0], f[1], f[2], path);
    }
    free(text);
    if (rows) printf("info harden.corpus: %d rows: %d through the readers (%d valid ones loaded), %d through %s\n", rows,
                     c.n_lib, c.n_ok, c.n_cli, th__bin());
    lt_optim_destroy(c.opt);
    lt_gpt_destroy(c.g);
    lt_ctx_destroy(c.ctx);
}

/* ---- build/train_gpt resumes to the bit ------------------------------------------------------ */
/* A --log line without its timing fields ("ms", "tokens_per_s"): the rest must match exactly. */
static void th__strip_timing(char *line) {
    static const char *const drop[2] = {"\"ms\": ", "\"tokens_per_s\": "};
    int k;
    for (k = 0; k < 2; k++) {
        char *p = strstr(line, drop[k]), *q;
        if (!p) continue;
        q = p + strcspn(p, ",}");
        if (*q == ',') q++;
        while (*q == ' ') q++;
        memmove(p, q, strlen(q) + 1);
    }
}

/* Two --log files agree line by line (timing aside); *lines gets the count; at: first difference. */
static int th__same_logs(const char *a, const char *b, int *lines, char *at, size_t cap) {
    char *ta = t_slurp(a, NULL), *tb = t_slurp(b, NULL), *la, *lb, *na, *nb;
    int same = ta && tb, n = 0;
    *lines = 0;
    at[0] = 0;
    for (la = ta, lb = tb; same && la && *la; la = na, lb = nb) {
        na = strchr(la, '\n');
        if (na) *na++ = 0;
        nb = lb ? strchr(lb, '\n') : NULL;
        if (nb) *nb++ = 0;
        if (!lb || !*lb) { snprintf(at, cap, "line %d: \"%.200s\" vs nothing", n + 1, la); same = 0; break; }
        th__strip_timing(la);
        th__strip_timing(lb);
        if (strcmp(la, lb) != 0) { snprintf(at, cap, "line %d: \"%.200s\" vs \"%.200s\"", n + 1, la, lb); same = 0; }
        n++;
    }
    if (same && lb && *lb) { snprintf(at, cap, "the second log has more lines"); same = 0; }
    *lines = n;
    free(ta);
    free(tb);
    return same && n > 0;
}

/* Every tensor of two checkpoints has the same dtype, shape and bytes (metadata aside). */
static int th__same_ckpt(const char *a, const char *b, char *why, size_t cap) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_st *x = lt_st_open(ctx, a), *y = x ? lt_st_open(ctx, b) : NULL;
    int i, same = x && y && lt_st_count(x) == lt_st_count(y);
    snprintf(why, cap, "%.250s", x && y ? "tensor counts differ" : lt_error(ctx));
    for (i = 0; same && i < lt_st_count(x); i++) {
        const char *nm = lt_st_name(x, i);
        int j = lt_st_find(y, nm);
        size_t nx, ny;
        const void *dx = lt_st_data(x, i, &nx), *dy = j >= 0 ? lt_st_data(y, j, &ny) : NULL;
        same = dy && nx == ny && strcmp(lt_st_dtype(x, i), lt_st_dtype(y, j)) == 0 && memcmp(dx, dy, nx) == 0;
        if (!same) snprintf(why, cap, "tensor \"%s\" differs", nm);
    }
    lt_st_close(x);
    lt_st_close(y);
    lt_ctx_destroy(ctx);
    return same;
}

/* Uninterrupted (steps) against stop after `stop` + save + resume: logs and final checkpoints. */
static void th__resume_case(const char *tag, const char *data, const char *extra, int steps, int stop) {
    char common[1536], args[4096], la[512], lb[512], ca[512], cb[512], out[512], err[512], nm[160], at[600], why[300];
    int r1, r2, r3, lines = 0;
    snprintf(nm, sizeof nm, "harden.resume.%s", tag);
    if (!t_want(nm)) return;
    snprintf(at, sizeof at, "resume_%s_a.jsonl", tag); th__path(la, sizeof la, at);
    snprintf(at, sizeof at, "resume_%s_b.jsonl", tag); th__path(lb, sizeof lb, at);
    snprintf(at, sizeof at, "resume_%s_a.safetensors", tag); th__path(ca, sizeof ca, at);
    snprintf(at, sizeof at, "resume_%s_b.safetensors", tag); th__path(cb, sizeof cb, at);
    th__path(out, sizeof out, "resume.out");
    th__path(err, sizeof err, "resume.err");
    remove(la); remove(lb); remove(ca); remove(cb);
    snprintf(common, sizeof common,
             "--data %s --layers 1 --heads 2 --channels 16 --ctx 16 --batch 2 --seq 8 --threads 1 --steps %d --seed 11 "
             "--lr 3e-3 --min-lr 3e-4 --warmup 4 --warmup-start 0.1 %s", data, steps, extra);
    snprintf(args, sizeof args, "%s --log %s --save %s", common, la, ca);
    r1 = th__run(args, out, err);
    snprintf(args, sizeof args, "%s --stop-after %d --log %s --save %s", common, stop, lb, cb);
    r2 = th__run(args, out, err);
    snprintf(args, sizeof args, "%s --resume %s --log %s --save %s", common, cb, lb, cb);
    r3 = th__run(args, out, err);
    if (!t_check(r1 == 0 && r2 == 0 && r3 == 0, nm, "exit statuses %d %d %d (%s)", r1, r2, r3, err)) return;
    t_check(th__same_logs(la, lb, &lines, at, sizeof at) && lines == steps, nm, "%d log lines of %d; %s", lines, steps, at);
    snprintf(nm, sizeof nm, "harden.resume.%s.checkpoint", tag);
    t_check(th__same_ckpt(ca, cb, why, sizeof why), nm, "%s vs %s: %s", ca, cb, why);
}

static void th__resume(void) {
    char text[512], lines[512];
    FILE *f;
    int i;
    if (!t_want("harden.resume")) return;
    if (!t_exists(th__bin())) { t_skip("harden.resume", "no train_gpt binary"); return; }
    /* 81 bytes = 5 windows of B*T = 16, +1: each epoch ends exactly on a window */
    th__path(text, sizeof text, "resume81.txt");
    f = fopen(text, "wb");
    if (!f) { t_check(0, "harden.resume.data", "cannot write %s", text); return; }
    for (i = 0; i < 81; i++) fputc("the quick brown fox jumps over the lazy dog. "[i % 45], f);
    fclose(f);
    th__path(lines, sizeof lines, "resume_lines.txt");
    f = fopen(lines, "wb");
    if (!f) { t_check(0, "harden.resume.data", "cannot write %s", lines); return; }
    for (i = 0; i < 60; i++) fprintf(f, "%.*s\n", 1 + i * 7 % 15, "line of text with words in it");
    fclose(f);
    th__resume_case("inside_warmup", text, "--warmup 8", 10, 3);        /* lr still rising at the save */
    th__resume_case("at_wrap", text, "", 10, 5);                        /* saved at (epoch 1, index 0) */
    th__resume_case("accum_across_wrap", text, "--accum 3", 8, 4);      /* 12 windows: epochs end mid-step */
    th__resume_case("shuffle_accum", text, "--shuffle --accum 3", 8, 3);
    th__resume_case("shuffle_at_wrap", text, "--shuffle", 12, 5);
    th__resume_case("sgd_momentum", text, "--optim sgd --momentum 0.9 --lr 0.05", 8, 4);
    th__resume_case("clip_value", text, "--clip-norm 0 --clip-value 0.001 --decay linear", 8, 4);
    th__resume_case("lines_bucket_accum", lines, "--seqs lines --batching bucket --accum 2", 8, 3);
    th__resume_case("len_schedule", text, "--len-schedule 4:8:6 --accum 2", 8, 3);
    th__resume_case("bf16", text, "--precision bf16", 8, 3);
    th__resume_case("fp16_loss_scale", text, "--precision fp16 --accum 2", 8, 3);
    /* not covered: resuming after a skipped fp16 step.  The checkpoint does not hold the loss
       scaler's state yet, so a scale that backed off before the save restarts at 2^16. */
}

/* ---- saves leave nothing behind; the old file stays whole until the new one replaces it ------- */
static int th__count_tmp(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strstr(e->d_name, ".tmp")) n++;
    closedir(d);
    return n;
}

static void th__save(void) {
    lt_ctx *ctx;
    lt_st_writer *w;
    lt_st *st;
    char path[512];
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    int64_t shape = 4;
    int k, ok = 1;
    if (!t_want("harden.save")) return;
    ctx = lt_ctx_create(1);
    th__path(path, sizeof path, "save_atomic.safetensors");
    for (k = 0; k < 3 && ok; k++) {   /* over a missing file, then over the file itself */
        w = lt_st_writer_create(ctx);
        lt_st_add(w, "x", "F32", 1, &shape, k % 2 ? b : a);
        ok = lt_st_save(w, path) == LT_OK;
        lt_st_writer_destroy(w);
    }
    t_check(ok && th__count_tmp(t_tmp_dir(), "harden_save_atomic") == 0, "harden.save.no_tmp_left", "%s; %d .tmp files",
            lt_error(ctx), th__count_tmp(t_tmp_dir(), "harden_save_atomic"));
    st = lt_st_open(ctx, path);
    t_check(st && lt_st_read_f32(st, 0, b, 4) == LT_OK && b[0] == 1, "harden.save.last_write_wins", "%s", lt_error(ctx));
    lt_st_close(st);
    /* a save that cannot happen (no such directory) leaves nothing and says why */
    lt_clear_error(ctx);
    w = lt_st_writer_create(ctx);
    lt_st_add(w, "x", "F32", 1, &shape, a);
    snprintf(path, sizeof path, "%s/harden_no_such_dir/x.safetensors", t_tmp_dir());
    t_check(lt_st_save(w, path) == LT_ERR_IO && strstr(lt_error(ctx), "harden_no_such_dir"), "harden.save.bad_dir", "%s",
            lt_error(ctx));
    lt_st_writer_destroy(w);
    lt_ctx_destroy(ctx);
}

/* ---- non-finite values ----------------------------------------------------------------------- */
static void th__nonfinite(void) {
    lt_ctx *ctx;
    lt_gpt *g;
    lt_gpt_config cfg;
    lt_paramset ps;
    double norm;
    if (!t_want("harden.nonfinite")) return;
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab = 16; cfg.ctx = 8; cfg.layers = 1; cfg.heads = 2; cfg.channels = 4;
    ctx = lt_ctx_create(3);
    g = lt_gpt_create(ctx, &cfg);
    if (!t_check(g != NULL, "harden.nonfinite.model", "%s", lt_error(ctx))) { lt_ctx_destroy(ctx); return; }
    /* the gradient norm names the first parameter with a non-finite gradient (clipping off too:
       train_gpt calls lt_clip_grad_norm with max_norm inf to get that message) */
    ps = lt_gpt_params(g);
    lt_zero_grad(ctx);
    ps.p[5]->grad[3] = INFINITY;
    ps.p[9]->grad[0] = NAN;
    norm = lt_clip_grad_norm(ctx, ps, INFINITY);
    t_check(!(norm - norm == 0) && lt_failed(ctx) && strstr(lt_error(ctx), ps.p[5]->name) &&
            strstr(lt_error(ctx), "element 3"), "harden.nonfinite.grad_names_param", "norm %g, \"%s\" (want %s)", norm,
            lt_error(ctx), ps.p[5]->name);
    lt_gpt_destroy(g);
    lt_ctx_destroy(ctx);
}

/* train_gpt: a diverging run stops at the step with a message; --skip-outliers skips a spike. */
static void th__train_guards(void) {
    char data[512], out[512], err[512], args[2048], logp[512], *e, *log;
    FILE *f;
    int i, rc;
    if (!t_want("harden.train")) return;
    if (!t_exists(th__bin())) { t_skip("harden.train", "no train_gpt binary"); return; }
    th__path(out, sizeof out, "train.out");
    th__path(err, sizeof err, "train.err");
    th__path(logp, sizeof logp, "train.jsonl");
    /* 60 windows of "abab..." (the loss falls fast), then 2 of noise (step 61), then more letters */
    th__path(data, sizeof data, "spike.txt");
    f = fopen(data, "wb");
    if (!f) { t_check(0, "harden.train.data", "cannot write %s", data); return; }
    for (i = 0; i < 16 * 60; i++) fputc('a' + (i % 2), f);
    for (i = 0; i < 16 * 2; i++) fputc(33 + (i * 37 + i * i * 11) % 90, f);
    for (i = 0; i < 16 * 10 + 1; i++) fputc('a' + (i % 2), f);
    fclose(f);

    snprintf(args, sizeof args, "--data %s --layers 1 --heads 2 --channels 16 --ctx 16 --batch 2 --seq 8 --threads 1 "
             "--steps 30 --lr 1e30 --clip-norm 0 --warmup 0", data);
    rc = th__run(args, out, err);
    e = t_slurp(err, NULL);
    t_check(rc == 1 && e && strstr(e, "step ") && (strstr(e, "loss") || strstr(e, "gradient")), "harden.train.diverge",
            "exit %d, stderr \"%s\" (want the step and the loss or gradient named)", rc, e ? e : "");
    free(e);

    remove(logp);
    snprintf(args, sizeof args, "--data %s --layers 1 --heads 2 --channels 16 --ctx 16 --batch 2 --seq 8 --threads 1 "
             "--steps 64 --lr 1e-2 --warmup 0 --decay constant --skip-outliers 4 --log %s", data, logp);
    rc = th__run(args, out, err);
    e = t_slurp(out, NULL);
    log = t_slurp(logp, NULL);
    t_check(rc == 0 && e && strstr(e, "step 61/64 | skipped") && log && strstr(log, "\"step\": 61, \"skipped\": 1"),
            "harden.train.skip_outliers", "exit %d; want step 61 (the noise) skipped in stdout and the log:\n%s", rc,
            e ? e : "");
    free(e);
    free(log);
}

/* train_gpt and sample_gpt: number flags are parsed as numbers of the flag's kind and range (no float
   cast out of range, no nan/inf, no negative lr); each refusal names the flag and the value. */
static const char *th__sample_bin(void) { const char *b = getenv("LT_SAMPLE_GPT"); return b ? b : "build/sample_gpt"; }

static double th__loss_of(const char *path) {
    char *o = t_slurp(path, NULL), *l = o ? strstr(o, "| loss ") : NULL;
    double x = l ? atof(l + 7) : -1;
    free(o);
    return x;
}

static void th__flags(void) {
    static const char *bad[][2] = {
        {"--layers nan", "--layers: \"nan\" is not a whole number"},
        {"--layers abc", "--layers: \"abc\" is not a whole number"},
        {"--layers 3000000000", "--layers: \"3000000000\" is not a whole number from 0 to 2147483647"},
        {"--batch -1", "--batch: \"-1\" is not a whole number from 1"},
        {"--steps 1e19", "--steps: \"1e19\" is not a whole number from 1 to 9223372036854775807"},
        {"--steps inf", "--steps: \"inf\" is not a whole number"},
        {"--steps 2.5", "--steps: \"2.5\" is not a whole number"},
        {"--lr nan", "--lr: \"nan\" is not a finite number >= 0"},
        {"--lr -1e-3", "--lr: \"-1e-3\" is not a finite number >= 0"},
        {"--lr x", "--lr: \"x\" is not a finite number"},
        {"--temperature nan", "--temperature: \"nan\" is not a finite number >= 0"},
        {"--clip-norm inf", "--clip-norm: \"inf\" is not a finite number >= 0"},
        {"--warmup-start -1", "--warmup-start: \"-1\" is not a finite number >= 0"},
        {"--beta1 nan", "--beta1: \"nan\" is not a finite number"},
        {"--seed -1", "--seed: \"-1\" is not a whole number from 0 to 18446744073709551615"},
        {"--seed 1e30", "--seed: \"1e30\" is not a whole number"},
        {"--seed nan", "--seed: \"nan\" is not a whole number"},
        {"--seed 18446744073709551616", "--seed: \"18446744073709551616\" is not a whole number"},
        {"--seed x", "--seed: \"x\" is not a whole number"},
        {"--sav x", "unknown flag --sav"},
    };
    static const char *good[] = {"--seed 18446744073709551615", "--seed 1e3", "--lr 3e-4 --steps 2", "--steps 1e0"};
    char base[1024], args[2048], out[512], err[512], name[300], cmd[4096], *e;
    double l0, l1;
    int i, rc, one_line;
    if (!t_want("harden.cli.flags")) return;
    if (!t_exists(th__bin())) { t_skip("harden.cli.flags", "no train_gpt binary (make build/train_gpt)"); return; }
    snprintf(base, sizeof base, "--data %s/shard_valid.bin --vocab 16 --layers 1 --heads 2 --channels 4 --ctx 8 --batch 1 "
             "--seq 4 --steps 1 --threads 1", th__dir());
    th__path(out, sizeof out, "flags.out");
    th__path(err, sizeof err, "flags.err");
    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        snprintf(name, sizeof name, "harden.cli.flags.refuse[%s]", bad[i][0]);
        snprintf(args, sizeof args, "%s %s", base, bad[i][0]);
        rc = th__run(args, out, err);
        e = t_slurp(err, NULL);
        one_line = e && strncmp(e, "train_gpt: ", 11) == 0 && strchr(e, '\n') == e + strlen(e) - 1;
        t_check(rc == 1 && one_line && strstr(e, bad[i][1]), name, "exit %d, stderr \"%s\" (want one line containing \"%s\")",
                rc, e ? e : "", bad[i][1]);
        free(e);
    }
    for (i = 0; i < (int)(sizeof good / sizeof good[0]); i++) {
        snprintf(name, sizeof name, "harden.cli.flags.accept[%s]", good[i]);
        snprintf(args, sizeof args, "%s %s", base, good[i]);
        rc = th__run(args, out, err);
        e = t_slurp(err, NULL);
        t_check(rc == 0, name, "exit %d: %s", rc, e ? e : "");
        free(e);
    }
    /* seeds above 2^53 are exact: 2^53 and 2^53+1 start different models */
    snprintf(args, sizeof args, "%s --seed 9007199254740992", base);
    rc = th__run(args, out, err);
    l0 = rc == 0 ? th__loss_of(out) : -1;
    snprintf(args, sizeof args, "%s --seed 9007199254740993", base);
    rc = th__run(args, out, err);
    l1 = rc == 0 ? th__loss_of(out) : -1;
    t_check(l0 > 0 && l1 > 0 && l0 != l1, "harden.cli.flags.seed_exact", "losses %.4f and %.4f (want two runs, different)",
            l0, l1);

    /* sample_gpt: --n is checked (atoi read "abc" as 0 and 99999999999 as a huge count that hung) */
    if (!t_exists(th__sample_bin())) { t_skip("harden.cli.flags.sample", "no sample_gpt binary (make build/sample_gpt)"); return; }
    {
        static const char *sbad[][2] = {
            {"--n abc", "--n: \"abc\" is not a whole number"},
            {"--n 99999999999", "--n: \"99999999999\" is not a whole number"},
            {"--temperature nan", "--temperature: \"nan\" is not a finite number >= 0"},
            {"--seed -1", "--seed: \"-1\" is not a whole number"},
        };
        for (i = 0; i < (int)(sizeof sbad / sizeof sbad[0]); i++) {
            snprintf(name, sizeof name, "harden.cli.flags.sample[%s]", sbad[i][0]);
            snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=exitcode=99 timeout 30 "
                     "%s %s/ckpt_valid.safetensors %s > %s 2> %s", th__sample_bin(), th__dir(), sbad[i][0], out, err);
            rc = system(cmd);
            rc = rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
            e = t_slurp(err, NULL);
            one_line = e && strncmp(e, "sample_gpt: ", 12) == 0 && strchr(e, '\n') == e + strlen(e) - 1;
            t_check(rc == 1 && one_line && strstr(e, sbad[i][1]), name,
                    "exit %d, stderr \"%s\" (want one line containing \"%s\")", rc, e ? e : "", sbad[i][1]);
            free(e);
        }
    }
}

/* ---- data sources: pipes read once, endless inputs, the format asked for --------------------- */
/* Runs "pre BIN args" through sh (pre: an environment assignment or "cat F |"); as th__run. */
static int th__run_sh(const char *pre, const char *args, const char *out_path, const char *err_path) {
    char cmd[8192];
    int s;
    snprintf(cmd, sizeof cmd, "%s ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=exitcode=99:print_stacktrace=1 "
             "%s %s > %s 2> %s", pre, th__bin(), args, out_path, err_path);
    s = system(cmd);
    if (s == -1 || !WIFEXITED(s)) return -1;
    return WEXITSTATUS(s);
}

/* src into dst (cap bytes; src may be dst), each of the 4 names replaced by its path. */
static void th__subst(char *dst, size_t cap, const char *src, const char *const *names, const char *const *paths) {
    char tmp[4096];
    size_t n = 0;
    int k;
    while (*src && n + 1 < sizeof tmp) {
        for (k = 0; k < 4 && strncmp(src, names[k], strlen(names[k])); k++) {}
        if (k < 4) {
            size_t m = strlen(paths[k]);
            if (n + m + 1 >= sizeof tmp) break;
            memcpy(tmp + n, paths[k], m);
            n += m;
            src += strlen(names[k]);
        } else {
            tmp[n++] = *src++;
        }
    }
    if (n >= cap) n = cap - 1;
    memcpy(dst, tmp, n);
    dst[n] = 0;
}

static void th__data(void) {
    static const char *small = "--layers 1 --heads 2 --channels 8 --ctx 8 --batch 1 --seq 4 --steps 2 --threads 1";
    char text[512], zeros[512], fifo[512], out[512], err[512], pre[2048], args[2048], want[128], *o, *e;
    unsigned char buf[5000];
    FILE *f;
    int rc, i;
    struct { const char *name, *pre, *data, *extra; int rc; const char *want; } c[] = {
        {"harden.data.pipe_once", "cat TEXT |", "/dev/stdin", "", 0, "data: /dev/stdin, 5000 tokens"},
        {"harden.data.pipe_seqs", "cat TEXT |", "/dev/stdin", "--seqs lines", 0, "data: /dev/stdin, 5000 tokens"},
        {"harden.data.fifo_once", "(timeout 30 cat TEXT > FIFO &) ;", "FIFO", "", 0, "tokens"},
        {"harden.data.dev_zero_limit", "LTRAIN_DATA_LIMIT=1m", "/dev/zero", "", 1, "over the data limit"},
        {"harden.data.limit_bad", "LTRAIN_DATA_LIMIT=12x", "TEXT", "", 1, "LTRAIN_DATA_LIMIT=\"12x\""},
        {"harden.data.limit_pipe", "cat TEXT | LTRAIN_DATA_LIMIT=1k", "/dev/stdin", "", 1, "more than 1024 bytes"},
        {"harden.data.limit_mapped", "LTRAIN_DATA_LIMIT=1k", "TEXT", "", 0, "data: TEXT, 5000 tokens"},
        {"harden.data.bin_zeros", "", "ZEROS", "", 1, "100 bytes is too short for an llm.c token shard"},
        {"harden.data.bin_bad_magic", "", "MAGIC", "", 1, "magic number is 20240521"},
        {"harden.data.format_text_bin", "", "ZEROS", "--format text", 0, "data: ZEROS, 100 tokens"},
        {"harden.data.format_shard_text", "", "TEXT", "--format shard", 1, "shard header: magic number is"},
        {"harden.data.format_bad", "", "TEXT", "--format xml", 1, "--format must be auto, text or shard"},
        {"harden.data.val_bin_zeros", "", "TEXT", "--val ZEROS --eval-every 1 --eval-batches 1", 1,
         "ZEROS: 100 bytes is too short"},
        {"harden.data.val_format_text", "", "TEXT", "--val ZEROS --format text --eval-every 1 --eval-batches 1", 0,
         "step 2/2"},
    };
    const char *names[4] = {"TEXT", "ZEROS", "FIFO", "MAGIC"}, *paths[4];
    char magic[512];
    snprintf(magic, sizeof magic, "%s/shard_bad_magic.bin", th__dir());
    paths[0] = text; paths[1] = zeros; paths[2] = fifo; paths[3] = magic;
    th__path(text, sizeof text, "data.txt");
    th__path(zeros, sizeof zeros, "zeros.bin");
    th__path(fifo, sizeof fifo, "data.fifo");
    th__path(out, sizeof out, "data.out");
    th__path(err, sizeof err, "data.err");
    for (i = 0; i < 5000; i++) buf[i] = (unsigned char)("abcdefgh ijk\n"[i % 13]);
    if ((f = fopen(text, "wb")) != NULL) { fwrite(buf, 1, 5000, f); fclose(f); }
    memset(buf, 0, 100);
    if ((f = fopen(zeros, "wb")) != NULL) { fwrite(buf, 1, 100, f); fclose(f); }
    remove(fifo);
    for (i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        if (!t_want(c[i].name)) continue;
        if (!t_exists(th__bin())) { t_skip(c[i].name, "no train_gpt binary (make build/train_gpt)"); continue; }
        if (strstr(c[i].name, "fifo")) {
            snprintf(pre, sizeof pre, "mkfifo %s", fifo);
            if (system(pre) != 0) { t_skip(c[i].name, "no mkfifo"); continue; }
        }
        /* TEXT, ZEROS, FIFO, MAGIC stand for the paths */
        snprintf(args, sizeof args, "--data %s %s %s", c[i].data, c[i].extra, small);
        th__subst(pre, sizeof pre, c[i].pre, names, paths);
        th__subst(args, sizeof args, args, names, paths);
        th__subst(want, sizeof want, c[i].want, names, paths);
        rc = th__run_sh(pre, args, out, err);
        o = t_slurp(out, NULL);
        e = t_slurp(err, NULL);
        if (c[i].rc == 0)
            t_check(rc == 0 && o && strstr(o, want), c[i].name, "exit %d, stdout lacks \"%s\": %s", rc, want, e ? e : "");
        else
            t_check(rc == 1 && e && !strncmp(e, "train_gpt: ", 11) && strchr(e, '\n') == e + strlen(e) - 1 &&
                    strstr(e, want), c[i].name, "exit %d, stderr \"%s\" (want one line containing \"%s\")", rc,
                    e ? e : "", want);
        free(o);
        free(e);
        remove(fifo);
    }
}

/* ---- issue 26: destinations, complete checkpoints, metadata text, resume flags, logs ---------- */
/* A train_gpt run that must be refused: exit 1, one line "train_gpt: ..." containing want. */
static void th__refused(const char *name, const char *args, const char *want) {
    char out[512], err[512], *e;
    int rc, one_line;
    th__path(out, sizeof out, "refuse.out");
    th__path(err, sizeof err, "refuse.err");
    rc = th__run(args, out, err);
    e = t_slurp(err, NULL);
    one_line = e && strncmp(e, "train_gpt: ", 11) == 0 && strchr(e, '\n') == e + strlen(e) - 1;
    t_check(rc == 1 && one_line && strstr(e, want), name, "exit %d, stderr \"%s\" (want one line containing \"%s\")", rc,
            e ? e : "", want);
    if (rc == 1 && one_line && strstr(e, want) && getenv("LT_HARDEN_SHOW")) printf("info %s: %s", name, e);
    free(e);
}

/* The flags of a small run on the corpus's valid shard (vocab 16, 400 tokens). */
static void th__small(char *buf, size_t cap, const char *more) {
    snprintf(buf, cap, "--data %s/shard_valid.bin --vocab 16 --layers 1 --heads 2 --channels 4 --ctx 8 --batch 1 "
             "--seq 4 --steps 2 --threads 1 %s", th__dir(), more);
}

/* Is path (not followed) still a node of this kind: 'f' FIFO, 'l' symbolic link, 'c' character device. */
static int th__node_is(const char *path, char kind) {
    struct stat s;
    if (lstat(path, &s) != 0) return 0;
    return kind == 'f' ? S_ISFIFO(s.st_mode) : kind == 'l' ? S_ISLNK(s.st_mode) : kind == 'c' ? S_ISCHR(s.st_mode) : 0;
}

static void th__dest(void) {
    char fifo[512], lfifo[512], dir[512], dang[512], file[512], lfile[512], args[2048], base[1024], name[200];
    char devn[512], want[700];   /* a private character device like /dev/null (c 1 3): a regression
                                    replaces this node, never the system's /dev/null */
    float a[4] = {1, 2, 3, 4}, b[4];
    int64_t shape = 4;
    lt_ctx *ctx;
    lt_st_writer *w;
    lt_st *st;
    lt_plot *p;
    struct stat s0, s1;
    int k, devnull_ok, have_dev;
    static const char *const cases[][3] = {   /* path, node kind after, keyword */
        {"fifo", "f", "is a FIFO"}, {"lfifo", "l", "a symbolic link to"}, {"/dev/null", "c", "is a character device"},
        {"dir", "", "is a directory"}, {"dang", "l", "symbolic link to a missing file"}};
    if (!t_want("harden.dest") && !t_want("harden.cli.dest")) return;
    th__path(fifo, sizeof fifo, "dest_fifo");
    th__path(lfifo, sizeof lfifo, "dest_link_fifo");
    th__path(dir, sizeof dir, "dest_dir");
    th__path(dang, sizeof dang, "dest_dangling");
    th__path(file, sizeof file, "dest_file.safetensors");
    th__path(lfile, sizeof lfile, "dest_link_file.safetensors");
    th__path(devn, sizeof devn, "dest_null");
    remove(fifo); remove(lfifo); rmdir(dir); remove(dang); remove(file); remove(lfile); remove(devn);
    snprintf(args, sizeof args, "mknod %s c 1 3 2> /dev/null", devn);
    have_dev = system(args) == 0 && th__node_is(devn, 'c');   /* needs root; else that case skips */
    if (!t_check(mkfifo(fifo, 0644) == 0 && symlink("harden_dest_fifo", lfifo) == 0 && mkdir(dir, 0755) == 0 &&
                 symlink("harden_no_such_file", dang) == 0 && symlink("harden_dest_file.safetensors", lfile) == 0,
                 "harden.dest.setup", "mkfifo/symlink/mkdir in %s failed", t_tmp_dir())) return;
    devnull_ok = stat("/dev/null", &s0) == 0;
    ctx = lt_ctx_create(1);
    /* lt_st_save and lt_plot_save: each refused with the path and what it is; the node untouched */
    for (k = 0; k < 5; k++) {
        const char *path = !strcmp(cases[k][0], "fifo") ? fifo : !strcmp(cases[k][0], "lfifo") ? lfifo
                         : !strcmp(cases[k][0], "dir") ? dir : !strcmp(cases[k][0], "dang") ? dang : devn;
        lt_status s;
        if (path == devn && !have_dev) { t_skip("harden.dest.lib.device", "mknod failed (not root)"); continue; }
        lt_clear_error(ctx);
        w = lt_st_writer_create(ctx);
        lt_st_add(w, "x", "F32", 1, &shape, a);
        s = lt_st_save(w, path);
        lt_st_writer_destroy(w);
        snprintf(name, sizeof name, "harden.dest.lib.st_save[%s]", cases[k][0]);
        t_check(s == LT_ERR_ARG && strstr(lt_error(ctx), path) && strstr(lt_error(ctx), cases[k][2]) &&
                (!cases[k][1][0] || th__node_is(path, cases[k][1][0])), name, "status %d, \"%s\" (want \"%s\"; node kept)",
                (int)s, lt_error(ctx), cases[k][2]);
        if (getenv("LT_HARDEN_SHOW")) printf("info %s: %s\n", name, lt_error(ctx));
        p = lt_plot_create("t", "x", "y");
        lt_plot_series(p, "s", NULL, NULL, 0);
        s = lt_plot_save(p, path);
        snprintf(name, sizeof name, "harden.dest.lib.plot_save[%s]", cases[k][0]);
        t_check(s == LT_ERR_ARG && strstr(lt_plot_error(p), cases[k][2]) &&
                (!cases[k][1][0] || th__node_is(path, cases[k][1][0])), name, "status %d, \"%s\"", (int)s, lt_plot_error(p));
        lt_plot_destroy(p);
    }
    t_check(devnull_ok && stat("/dev/null", &s1) == 0 && S_ISCHR(s1.st_mode) && s1.st_rdev == s0.st_rdev,
            "harden.dest.lib.devnull_untouched", "/dev/null is no longer the same character device");
    /* a symbolic link to a regular file: the target gets the new file, the link stays */
    lt_clear_error(ctx);
    for (k = 0; k < 2; k++) {
        w = lt_st_writer_create(ctx);
        lt_st_add(w, "x", "F32", 1, &shape, a);
        lt_st_save(w, k ? lfile : file);
        lt_st_writer_destroy(w);
        a[0] = 7;
    }
    st = lt_st_open(ctx, file);
    t_check(st && lt_st_read_f32(st, 0, b, 4) == LT_OK && b[0] == 7 && th__node_is(lfile, 'l'),
            "harden.dest.lib.symlink_followed", "%s", lt_error(ctx));
    lt_st_close(st);
    /* lt_dest_check: a log (a stream) may go to a character device or a FIFO, not to a directory */
    lt_clear_error(ctx);
    t_check(lt_dest_check(ctx, "/dev/null", LT_DEST_STREAM) == LT_OK && lt_dest_check(ctx, fifo, LT_DEST_STREAM) == LT_OK &&
            lt_dest_check(ctx, dir, LT_DEST_STREAM) == LT_ERR_ARG, "harden.dest.lib.stream", "%s", lt_error(ctx));
    lt_ctx_destroy(ctx);

    /* train_gpt: refused before training, the node untouched */
    if (!t_exists(th__bin())) { t_skip("harden.cli.dest", "no train_gpt binary"); goto out; }
    if (have_dev) {
        snprintf(args, sizeof args, "--save %s", devn); th__small(base, sizeof base, args);
        snprintf(want, sizeof want, "--save: \"%s\" is a character device", devn);
        th__refused("harden.cli.dest.save_devnull", base, want);
    }
    snprintf(args, sizeof args, "--save %s", lfifo); th__small(base, sizeof base, args);
    th__refused("harden.cli.dest.save_link_to_fifo", base, "a symbolic link to");
    snprintf(args, sizeof args, "--plot %s", fifo); th__small(base, sizeof base, args);
    th__refused("harden.cli.dest.plot_fifo", base, "is a FIFO");
    snprintf(args, sizeof args, "--log %s", dir); th__small(base, sizeof base, args);
    th__refused("harden.cli.dest.log_dir", base, "--log: ");
    snprintf(args, sizeof args, "--save %s", dir); th__small(base, sizeof base, args);
    th__refused("harden.cli.dest.save_dir", base, "is a directory");
    {   /* an existing directory named with its final /: a Hugging Face model directory, saved into
           again (as save_pretrained); its model.safetensors a directory: refused naming that */
        char out[512], err[512], sub[600];
        th__path(out, sizeof out, "dest.out");
        th__path(err, sizeof err, "dest.err");
        snprintf(args, sizeof args, "--save %s/", dir); th__small(base, sizeof base, args);
        k = th__run(base, out, err);
        k = k == 0 ? th__run(base, out, err) : k;
        snprintf(sub, sizeof sub, "%s/model.safetensors", dir);
        t_check(k == 0 && t_exists(sub), "harden.cli.dest.save_hf_dir_twice", "exit %d", k);
        snprintf(sub, sizeof sub, "%s/config.json", dir);
        remove(sub);
        snprintf(sub, sizeof sub, "%s/model.safetensors", dir);
        remove(sub);
        mkdir(sub, 0700);
        th__refused("harden.cli.dest.save_hf_dir_model_is_dir", base, "model.safetensors\" is a directory");
        rmdir(sub);
    }
    t_check(th__node_is(fifo, 'f') && th__node_is(lfifo, 'l') && (!have_dev || th__node_is(devn, 'c')) &&
            stat("/dev/null", &s1) == 0 && S_ISCHR(s1.st_mode),
            "harden.cli.dest.nodes_untouched", "a node was replaced");
    {   /* a log may stream into /dev/null (written in place, never replaced) */
        char out[512], err[512];
        th__path(out, sizeof out, "dest.out");
        th__path(err, sizeof err, "dest.err");
        th__small(base, sizeof base, "--log /dev/null");
        k = th__run(base, out, err);
        t_check(k == 0 && stat("/dev/null", &s1) == 0 && S_ISCHR(s1.st_mode) && s1.st_rdev == s0.st_rdev,
                "harden.cli.dest.log_devnull", "exit %d", k);
        if (th__node_is("/dev/stdout", 'l')) {   /* a link to /proc/self/fd/1, here a pipe: the log joins stdout */
            char *o, cmd[4096];
            th__small(base, sizeof base, "--log /dev/stdout");
            snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=exitcode=99 %s %s "
                     "2> %s | cat > %s", th__bin(), base, err, out);
            k = system(cmd);
            k = k != -1 && WIFEXITED(k) ? WEXITSTATUS(k) : -1;
            o = t_slurp(out, NULL);
            t_check(k == 0 && o && strstr(o, "{\"step\": 2, \"loss\": ") && strstr(o, "done: 2 steps") &&
                    th__node_is("/dev/stdout", 'l'),
                    "harden.cli.dest.log_dev_stdout", "exit %d, stdout \"%.200s\"", k, o ? o : "");
            free(o);
        }
    }
out:
    remove(fifo); remove(lfifo); rmdir(dir); remove(dang); remove(lfile); remove(file); remove(devn);
}

/* A copy of checkpoint src at dst without the tensors whose names start with drop (NULL: none),
   with tensor nan_in's first value NaN, an extra F32 [1] tensor named extra, and metadata key
   mkey set to mval (NULL: kept; "": left out).  1 on success. */
static int th__ck_edit(const char *src, const char *dst, const char *drop, const char *nan_in, const char *extra,
                       const char *mkey, const char *mval) {
    static const char *const keys[] = {"format", "n_layer", "n_head", "n_embd", "n_ctx", "vocab_size", "note", "run",
                                       "optimizer"};
    lt_ctx *ctx = lt_ctx_create(1);
    lt_st *st = lt_st_open(ctx, src);
    lt_st_writer *w = lt_st_writer_create(ctx);
    float one = 1, *copy = NULL;
    int64_t shape[8], n1 = 1;
    int i, k, ok;
    for (k = 0; st && k < (int)(sizeof keys / sizeof keys[0]); k++) {
        const char *v = mkey && !strcmp(mkey, keys[k]) ? mval : lt_st_meta(st, keys[k]);
        if (v && v[0]) lt_st_add_meta(w, keys[k], v);
    }
    for (i = 0; st && i < lt_st_count(st); i++) {
        const char *nm = lt_st_name(st, i);
        size_t bytes;
        const void *d = lt_st_data(st, i, &bytes);
        int nd = lt_st_shape(st, i, shape);
        if (drop && !strncmp(nm, drop, strlen(drop))) continue;
        if (nan_in && !strcmp(nm, nan_in) && bytes >= 4 && (copy = (float *)malloc(bytes)) != NULL) {
            memcpy(copy, d, bytes);
            copy[0] = NAN;
            d = copy;
        }
        lt_st_add(w, nm, lt_st_dtype(st, i), nd, shape, d);
    }
    if (extra) lt_st_add(w, extra, "F32", 1, &n1, &one);
    ok = st && lt_st_save(w, dst) == LT_OK;
    if (!ok) printf("info th__ck_edit %s: %s\n", dst, lt_error(ctx));
    free(copy);
    lt_st_writer_destroy(w);
    lt_st_close(st);
    lt_ctx_destroy(ctx);
    return ok;
}

/* A model loads completely or not at all (lt_gpt_load, lt_checkpoint_load, --init, --resume,
   sample_gpt); non-finite weights are named at load. */
static void th__complete(void) {
    char ck2[512], ck3[512], bad[512], args[2048], more[1024], out[512], err[512], name[200], cmd[4096], *e;
    lt_ctx *ctx;
    lt_gpt *g;
    int k, rc;
    static const char *const lib[][5] = {   /* test, drop, nan tensor, extra tensor, metadata n_layer (NULL kept) */
        {"no_ln_1", "h.1.ln_1.weight", NULL, NULL, NULL},
        {"no_ln_1_no_meta", "h.1.ln_1.weight", NULL, NULL, ""},
        {"layer_1_missing", "h.1.", NULL, NULL, NULL},
        {"layer_1_missing_no_meta", "h.1.", NULL, NULL, ""},
        {"n_layer_says_4", NULL, NULL, NULL, "4"},
        {"extra_layer", NULL, NULL, "h.3.ln_1.weight", ""},
        {"unexpected", NULL, NULL, "lm_head.bias", NULL},
        {"nan_weight", NULL, "h.1.mlp.c_fc.weight", NULL, NULL},
        {"hf_buffers", NULL, NULL, "h.2.attn.bias", NULL},
    };
    static const char *const want[] = {"\"h.1.ln_1.weight\" is missing", "\"h.1.ln_1.weight\" is missing",
        "\"h.1.ln_1.weight\" is missing: layer 1 of 3", "\"h.1.ln_1.weight\" is missing: layer 1 of 3",
        "metadata n_layer = 4 but the tensors say 3", "is missing: layer 3 of 4 is incomplete",
        "\"lm_head.bias\" is not part of this GPT-2 model", "\"h.1.mlp.c_fc.weight\" holds NaN at element 0",
        "OK"};
    if (!t_want("harden.ckpt") && !t_want("harden.cli.ckpt")) return;
    if (!t_exists(th__bin())) { t_skip("harden.ckpt", "no train_gpt binary"); return; }
    th__path(ck3, sizeof ck3, "ck3.safetensors");
    th__path(ck2, sizeof ck2, "ck2.safetensors");
    th__path(bad, sizeof bad, "ck_bad.safetensors");
    th__path(out, sizeof out, "ck.out");
    th__path(err, sizeof err, "ck.err");
    snprintf(more, sizeof more, "--layers 3 --save %s", ck3);
    th__small(args, sizeof args, more);
    if (!t_check(th__run(args, out, err) == 0, "harden.ckpt.setup", "train_gpt --save %s failed", ck3)) return;
    for (k = 0; k < (int)(sizeof lib / sizeof lib[0]); k++) {
        ctx = lt_ctx_create(1);   /* a load that fails after creating the model leaves its parameters */
        snprintf(name, sizeof name, "harden.ckpt.lib.%s", lib[k][0]);
        if (!t_check(th__ck_edit(ck3, bad, lib[k][1], lib[k][2], lib[k][3], lib[k][4] ? "n_layer" : NULL, lib[k][4]),
                     name, "cannot write the edited checkpoint")) continue;
        lt_clear_error(ctx);
        g = lt_gpt_load(ctx, bad, 0);
        if (!strcmp(want[k], "OK")) t_check(g && lt_gpt_cfg(g)->layers == 3, name, "%s", lt_error(ctx));
        else t_check(!g && strstr(lt_error(ctx), want[k]), name, "loaded=%d, \"%s\" (want \"%s\")", g != NULL,
                     lt_error(ctx), want[k]);
        if (getenv("LT_HARDEN_SHOW")) printf("info %s: %s\n", name, lt_error(ctx));
        lt_gpt_destroy(g);
        lt_ctx_destroy(ctx);
    }
    ctx = lt_ctx_create(1);
    {   /* a file with more layers than the model it is loaded into: refused, not half-loaded */
        lt_gpt_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.vocab = 16; cfg.ctx = 8; cfg.layers = 2; cfg.heads = 2; cfg.channels = 4;
        lt_clear_error(ctx);
        g = lt_gpt_create(ctx, &cfg);
        t_check(g && lt_checkpoint_load(g, NULL, NULL, ck3) != LT_OK && strstr(lt_error(ctx), "belongs to layer 2"),
                "harden.ckpt.lib.into_smaller_model", "\"%s\"", lt_error(ctx));
        lt_gpt_destroy(g);
    }
    lt_ctx_destroy(ctx);

    /* the command lines: --init, --resume and sample_gpt refuse a checkpoint missing a layer */
    th__ck_edit(ck3, bad, "h.1.", NULL, NULL, "n_layer", "");
    snprintf(more, sizeof more, "--init %s", bad);
    th__small(args, sizeof args, more);
    th__refused("harden.cli.ckpt.init_missing_layer", args, "\"h.1.ln_1.weight\" is missing: layer 1 of 3");
    snprintf(more, sizeof more, "--resume %s --steps 4", bad);
    th__small(args, sizeof args, more);
    th__refused("harden.cli.ckpt.resume_missing_layer", args, "\"h.1.ln_1.weight\" is missing: layer 1 of 3");
    th__ck_edit(ck3, ck2, NULL, "wte.weight", NULL, NULL, NULL);
    snprintf(more, sizeof more, "--init %s", ck2);
    th__small(args, sizeof args, more);
    th__refused("harden.cli.ckpt.init_nan", args, "\"wte.weight\" holds NaN");
    if (!t_exists(th__sample_bin())) { t_skip("harden.cli.ckpt.sample", "no sample_gpt binary"); return; }
    for (k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "harden.cli.ckpt.sample_%s", k ? "nan" : "missing_layer");
        snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=exitcode=99 timeout 60 %s %s --n 20 "
                 "> %s 2> %s", th__sample_bin(), k ? ck2 : bad, out, err);
        rc = system(cmd);
        rc = rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
        e = t_slurp(err, NULL);
        t_check(rc == 1 && e && !strncmp(e, "sample_gpt: ", 12) && strstr(e, k ? "\"wte.weight\" holds NaN" :
                "\"h.1.ln_1.weight\" is missing"), name, "exit %d, stderr \"%s\"", rc, e ? e : "");
        if (rc == 1 && e && getenv("LT_HARDEN_SHOW")) printf("info %s: %s", name, e);
        free(e);
    }
}

/* The command line in the metadata is UTF-8 whatever the bytes given: a Latin-1 file name, a cut
   inside a character. */
static void th__meta_text(void) {
    char out[16], data[512], ck[512], args[4096], more[2048], lo[512], le[512], prompt[700];
    const char *note;
    lt_ctx *ctx;
    lt_st *st;
    int k, rc;
    if (!t_want("harden.meta") && !t_want("harden.cli.meta")) return;
    t_check(lt_utf8_escape(out, sizeof out, "a\xe9\xc3\xa9z") == 8 && !strcmp(out, "a\\xE9\xc3\xa9z"),
            "harden.meta.escape", "\"%s\"", out);
    t_check(lt_utf8_escape(out, 4, "ab\xc3\xa9") == 2 && !strcmp(out, "ab") && lt_utf8_escape(out, 6, "a\xff") == 5,
            "harden.meta.escape_cut", "\"%s\"", out);
    if (!t_exists(th__bin())) { t_skip("harden.cli.meta", "no train_gpt binary"); return; }
    snprintf(data, sizeof data, "%s/harden_caf\xe9.bin", t_tmp_dir());   /* a Latin-1 name */
    snprintf(args, sizeof args, "cp %s/shard_valid.bin '%s'", th__dir(), data);
    if (!t_check(system(args) == 0, "harden.meta.setup", "cannot copy the shard to %s", data)) return;
    th__path(ck, sizeof ck, "meta.safetensors");
    th__path(lo, sizeof lo, "meta.out");
    th__path(le, sizeof le, "meta.err");
    for (k = 0; k < 2; k++) {   /* 1: a prompt of 300 two-byte characters, so the 512-byte note is cut inside one */
        for (rc = 0; rc < 300; rc++) memcpy(prompt + 2 * rc, "\xc3\xa9", 2);
        prompt[k ? 600 : 0] = 0;
        remove(ck);
        snprintf(more, sizeof more, "--data '%s' --vocab 16 --layers 1 --heads 2 --channels 4 --ctx 8 --batch 1 --seq 4 "
                 "--steps 2 --threads 1 --save %s%s%s%s", data, ck, k ? " --prompt '" : "", k ? prompt : "", k ? "'" : "");
        rc = th__run(more, lo, le);
        ctx = lt_ctx_create(1);
        st = rc == 0 ? lt_st_open(ctx, ck) : NULL;
        note = st ? lt_st_meta(st, "note") : NULL;
        t_check(note && (k ? strlen(note) < 512 && strlen(note) > 500 : strstr(note, "caf\\xE9.bin") != NULL),
                k ? "harden.cli.meta.cut_inside_character" : "harden.cli.meta.latin1_path", "exit %d, note \"%.80s...\"",
                rc, note ? note : lt_error(ctx));
        lt_st_close(st);
        lt_ctx_destroy(ctx);
    }
    remove(data);
}

/* --resume with flags that read the data otherwise: refused with the saved and the given values. */
static void th__resume_flags(void) {
    char ck[512], args[2048], more[1024], out[512], err[512], moved[512], *o;
    int rc;
    static const char *const bad[][3] = {
        {"batch", "--batch 2", "saved with 1 rows a step (--batch 1 x 1 processes), this run has 2"},
        {"seq", "--seq 2", "saved with --seq 4, this run has --seq 2"},
        {"shuffle", "--shuffle", "saved with --shuffle off, this run has --shuffle on"},
        {"accum", "--accum 2", "saved with --accum 1, this run has --accum 2"},
        {"layers", "--layers 2", "has --layers 1, this command line says 2"},
        {"vocab", "--vocab 32", "has --vocab 16, this command line says 32"},
        {"channels", "--channels 8", "has --channels 4, this command line says 8"},
    };
    int k;
    if (!t_want("harden.cli.resume_flags")) return;
    if (!t_exists(th__bin())) { t_skip("harden.cli.resume_flags", "no train_gpt binary"); return; }
    th__path(ck, sizeof ck, "rflags.safetensors");
    th__path(out, sizeof out, "rflags.out");
    th__path(err, sizeof err, "rflags.err");
    snprintf(more, sizeof more, "--steps 6 --stop-after 2 --save %s", ck);
    th__small(args, sizeof args, more);
    if (!t_check(th__run(args, out, err) == 0, "harden.cli.resume_flags.setup", "the first run failed")) return;
    for (k = 0; k < (int)(sizeof bad / sizeof bad[0]); k++) {
        char name[100];
        snprintf(name, sizeof name, "harden.cli.resume_flags.%s", bad[k][0]);
        snprintf(more, sizeof more, "--steps 6 --resume %s %s", ck, bad[k][1]);
        th__small(args, sizeof args, more);
        th__refused(name, args, bad[k][2]);
    }
    /* other data (the shard's first 300 tokens): refused; the same data at another path: a note */
    th__path(moved, sizeof moved, "rflags_other.bin");
    {
        size_t size;
        unsigned char *sh;
        FILE *f;
        snprintf(args, sizeof args, "%s/shard_valid.bin", th__dir());
        sh = (unsigned char *)t_slurp(args, &size);
        f = sh && size >= 1024 + 600 ? fopen(moved, "wb") : NULL;
        if (f) {
            sh[8] = 300 & 255; sh[9] = 300 >> 8; sh[10] = sh[11] = 0;   /* header word 2: the token count */
            fwrite(sh, 1, 1024 + 600, f);
            fclose(f);
        }
        free(sh);
    }
    snprintf(args, sizeof args, "--data %s --layers 1 --heads 2 --channels 4 --ctx 8 --batch 1 --seq 4 --steps 6 "
             "--threads 1 --resume %s", moved, ck);
    th__refused("harden.cli.resume_flags.data", args, "saved with --data (tokens) 400, this run has --data (tokens) 300");
    th__path(moved, sizeof moved, "rflags_moved.bin");
    snprintf(args, sizeof args, "cp %s/shard_valid.bin %s", th__dir(), moved);
    rc = system(args);
    snprintf(args, sizeof args, "--data %s --layers 1 --heads 2 --channels 4 --ctx 8 --batch 1 --seq 4 --steps 6 "
             "--threads 1 --resume %s", moved, ck);
    rc = rc == 0 ? th__run(args, out, err) : -2;
    o = t_slurp(out, NULL);
    t_check(rc == 0 && o && strstr(o, "note: ") && strstr(o, "continuing on") && strstr(o, "resumed"),
            "harden.cli.resume_flags.data_moved", "exit %d, stdout \"%.300s\"", rc, o ? o : "");
    free(o);
    remove(moved);
}

/* --log: a write error ends the run with a message; the JSON stays JSON; low-level flag mixes. */
static void th__logs_and_flags(void) {
    char args[4096], more[2048], out[512], err[512], logp[512], val[512], *e, *l;
    int rc;
    if (!t_want("harden.cli.log") && !t_want("harden.cli.low") && !t_want("harden.low")) return;
    if (!t_exists(th__bin())) { t_skip("harden.log", "no train_gpt binary"); return; }
    th__path(out, sizeof out, "log.out");
    th__path(err, sizeof err, "log.err");
    th__path(logp, sizeof logp, "log.jsonl");
    if (t_exists("/dev/full")) {
        th__small(args, sizeof args, "--log /dev/full");
        th__refused("harden.cli.log.dev_full", args, "--log /dev/full: writing failed: No space left on device");
    } else {
        t_skip("harden.cli.log.dev_full", "no /dev/full");
    }
    {   /* a regular file that cannot grow (a full disk; here a file size limit, SIGXFSZ ignored) */
        char cmd[8192];
        snprintf(more, sizeof more, "--steps 20 --log %s", logp);
        th__small(args, sizeof args, more);
        remove(logp);
        snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 1; ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=exitcode=99 %s %s > %s "
                 "2> %s", th__bin(), args, out, err);
        rc = system(cmd);
        rc = rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
        e = t_slurp(err, NULL);
        t_check(rc == 1 && e && strstr(e, "writing failed: File too large"), "harden.cli.log.file_limit",
                "exit %d, stderr \"%s\"", rc, e ? e : "");
        if (rc == 1 && e && getenv("LT_HARDEN_SHOW")) printf("info harden.cli.log.file_limit: %s", e);
        free(e);
    }
    th__small(args, sizeof args, "--eval-batches 0");
    th__refused("harden.cli.log.eval_batches_zero", args, "--eval-batches: \"0\" is not a whole number from 1");
    snprintf(val, sizeof val, "%s/shard_valid.bin", th__dir());
    snprintf(more, sizeof more, "--val %s --eval-every 1 --eval-batches 1 --steps 3 --log %s", val, logp);
    th__small(args, sizeof args, more);
    rc = th__run(args, out, err);
    l = t_slurp(logp, NULL);
    t_check(rc == 0 && l && strstr(l, "\"val_loss\": ") && !strstr(l, "nan") && !strstr(l, "inf"), "harden.cli.log.json_numbers",
            "exit %d, log \"%.300s\"", rc, l ? l : "");
    free(l);
    /* low: --eot past the vocab or on text, --resume with --init, --init X --vocab N, --eval-every alone */
    th__small(args, sizeof args, "--eot 16");
    th__refused("harden.cli.low.eot_past_vocab", args, "--eot 16 is not a token of the model's vocab (0..15)");
    th__refused("harden.cli.low.eot_on_text", "--data ltrain.h --steps 1 --eot 10",
                "--eot splits token shards into documents; for a text file use --seqs");
    th__refused("harden.cli.low.resume_and_init", "--resume a.safetensors --init b.safetensors", "give one of them");
    snprintf(more, sizeof more, "--init %s/ckpt_valid.safetensors --vocab 32", th__dir());
    th__small(args, sizeof args, more);
    th__refused("harden.cli.low.init_vocab", args, "--init: the checkpoint");
    th__small(args, sizeof args, "--eval-every 1");
    rc = th__run(args, out, err);
    e = t_slurp(err, NULL);
    t_check(rc == 0 && e && strstr(e, "--eval-every does nothing without --val"), "harden.cli.low.eval_every_without_val",
            "exit %d, stderr \"%s\"", rc, e ? e : "");
    free(e);
    {   /* the writer refuses a header its reader would refuse (over 100 MB), before writing */
        lt_ctx *ctx = lt_ctx_create(1);
        lt_st_writer *w = lt_st_writer_create(ctx);
        char *big = (char *)malloc(100000001), path[512];
        lt_status s = LT_OK;
        th__path(path, sizeof path, "huge_header.safetensors");
        remove(path);
        if (big) {
            memset(big, 'a', 100000000);
            big[100000000] = 0;
            lt_st_add_meta(w, "big", big);
            s = lt_st_save(w, path);
        }
        t_check(big && s == LT_ERR_ARG && strstr(lt_error(ctx), "over the 100000000 a reader accepts") && !t_exists(path),
                "harden.low.header_limit", "status %d, \"%s\"", (int)s, lt_error(ctx));
        if (getenv("LT_HARDEN_SHOW")) printf("info harden.low.header_limit: %s\n", lt_error(ctx));
        free(big);
        lt_st_writer_destroy(w);
        lt_ctx_destroy(ctx);
    }
}

/* Progress bars only on a terminal of a single process: under an MPI launcher's variables, lines. */
static void th__tty(void) {
    char args[2048], out[512], cmd[4096], *o;
    int k, rc;
    if (!t_want("harden.cli.tty")) return;
    if (!t_exists(th__bin()) || system("command -v script > /dev/null 2>&1") != 0) {
        t_skip("harden.cli.tty", "no train_gpt binary or no script(1) for a terminal");
        return;
    }
    th__path(out, sizeof out, "tty.out");
    th__small(args, sizeof args, "");
    for (k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "%s ASAN_OPTIONS=detect_leaks=0 script -qec '%s %s' /dev/null > %s 2>&1",
                 k ? "OMPI_COMM_WORLD_SIZE=1" : "true;", th__bin(), args, out);
        rc = system(cmd);
        o = t_slurp(out, NULL);
        t_check(rc == 0 && o && (k ? !strstr(o, "\r[") && strstr(o, "step 2/2 | loss") : strstr(o, "\r[") != NULL),
                k ? "harden.cli.tty.mpi_lines" : "harden.cli.tty.terminal_bar", "exit %d, output \"%.300s\"", rc, o ? o : "");
        free(o);
    }
}

/* ---- train_gpt --inspect and --convert --------------------------------------------------------- */
/* The value after "key:" on the line of out that starts with "  key:" (spaces trimmed) into v. */
static const char *th__cv_field(const char *out, const char *key, char *v, size_t cap) {
    char pat[64];
    const char *p;
    size_t n = 0;
    v[0] = 0;
    snprintf(pat, sizeof pat, "\n  %s:", key);
    if (!out || !(p = strstr(out, pat))) return v;
    for (p += strlen(pat); *p == ' '; p++) {}
    while (p[n] && p[n] != '\n' && n + 1 < cap) { v[n] = p[n]; n++; }
    v[n] = 0;
    return v;
}

/* The row of tensor name in out's table, its runs of spaces made one ("NAME F32 [48, 32] 1536"). */
static const char *th__cv_row(const char *out, const char *name, char *v, size_t cap) {
    char pat[200];
    const char *p;
    size_t n = 0;
    v[0] = 0;
    snprintf(pat, sizeof pat, "\n  %s ", name);
    if (!out || !(p = strstr(out, pat))) return v;
    for (p += 3; *p && *p != '\n' && n + 1 < cap; p++)
        if (*p != ' ' || (n > 0 && v[n - 1] != ' ')) v[n++] = *p;
    v[n] = 0;
    return v;
}

/* The same tensors (names, dtypes, shapes, bytes) in two files: how many, or -1 when they differ
   (what differs in why). */
static int th__cv_same(const char *a, const char *b, char *why, size_t cap) {
    lt_ctx *ctx = lt_ctx_create(1);
    lt_st *x = lt_st_open(ctx, a), *y = x ? lt_st_open(ctx, b) : NULL;
    int i, j, nd, n = -1;
    int64_t s1[8], s2[8];
    size_t b1, b2;
    snprintf(why, cap, "%s", lt_error(ctx));
    if (x && y && lt_st_count(x) != lt_st_count(y))
        snprintf(why, cap, "%d tensors in %s, %d in %s", lt_st_count(x), a, lt_st_count(y), b);
    else if (x && y)
        for (n = i = 0; i < lt_st_count(x); i++, n++) {
            const void *d1 = lt_st_data(x, i, &b1), *d2;
            j = lt_st_find(y, lt_st_name(x, i));
            d2 = lt_st_data(y, j, &b2);
            nd = lt_st_shape(x, i, s1);
            if (j < 0 || strcmp(lt_st_dtype(x, i), lt_st_dtype(y, j)) || nd != lt_st_shape(y, j, s2) ||
                memcmp(s1, s2, (size_t)nd * sizeof s1[0]) || b1 != b2 || memcmp(d1, d2, b1)) {
                snprintf(why, cap, "tensor \"%s\" differs (or is missing in %s)", lt_st_name(x, i), b);
                n = -1;
                break;
            }
        }
    lt_st_close(x);
    lt_st_close(y);
    lt_ctx_destroy(ctx);
    return n;
}

/* --inspect prints the config, the tensor table, the total and the metadata keys; --convert to a
   Hugging Face directory and back to a file keeps every tensor to the bit (GPT-2, Llama, and a
   directory transformers wrote); bad input is one line naming the path, exit 1, nothing written. */
static void th__convert(void) {
    static const char *const kinds[2] = {"gpt2", "llama"};
    static const char *const want[2][13][2] = {
        {{"arch", "gpt2 (GPT2LMHeadModel)"}, {"layers", "2"}, {"heads", "4"}, {"kv-heads", "4"}, {"channels", "32"},
         {"hidden", "128"}, {"vocab", "40"}, {"ctx", "16"}, {"rope-theta", "none (learned positions, wpe)"},
         {"norm-eps", "1e-05 (LayerNorm)"}, {"tie", "yes (the head is the embedding)"}, {"bias", "yes"}, {"qk-norm", "no"}},
        {{"arch", "llama (LlamaForCausalLM)"}, {"layers", "2"}, {"heads", "4"}, {"kv-heads", "2"}, {"channels", "32"},
         {"hidden", "48"}, {"vocab", "40"}, {"ctx", "16"}, {"rope-theta", "500000"}, {"norm-eps", "1e-06 (RMSNorm)"},
         {"tie", "no (lm_head.weight)"}, {"bias", "yes"}, {"qk-norm", "no"}}};
    char src[512], dir[512], back[512], file[600], args[2048], out[512], err[512], name[200], v[700], why[700], tot[200];
    char row[300], *o, *e;
    lt_ctx *ctx;
    lt_gpt *g;
    long long params[2] = {0, 0};
    int k, i, rc, n, count[2] = {0, 0};
    if (!t_want("harden.cli.convert") && !t_want("harden.cli.inspect")) return;
    if (!t_exists(th__bin())) { t_skip("harden.cli.convert", "no train_gpt binary"); return; }
    th__path(out, sizeof out, "cv.out");
    th__path(err, sizeof err, "cv.err");
    for (k = 0; k < 2; k++) {   /* the two tiny checkpoints, saved by the library */
        lt_gpt_config c = k ? lt_llama_config(40, 16, 2, 4, 2, 32, 48) : lt_gpt2_config(40, 16, 2, 4, 32);
        if (k) { c.untied = 1; c.no_bias = -1; c.rope_theta = 500000; c.norm_eps = 1e-6f; }
        snprintf(name, sizeof name, "cv_%s.safetensors", kinds[k]);
        th__path(src, sizeof src, name);
        ctx = lt_ctx_create(7);
        g = lt_gpt_create(ctx, &c);
        rc = g && lt_gpt_save(g, src) == LT_OK;
        params[k] = g ? (long long)lt_gpt_num_params(g) : 0;
        count[k] = g ? lt_gpt_params(g).n : 0;
        snprintf(name, sizeof name, "harden.cli.convert.setup.%s", kinds[k]);
        if (!t_check(rc, name, "%s: %s", src, lt_error(ctx))) { lt_ctx_destroy(ctx); return; }
        lt_gpt_destroy(g);
        lt_ctx_destroy(ctx);
    }
    for (k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "cv_%s.safetensors", kinds[k]);
        th__path(src, sizeof src, name);
        /* --inspect: every config field, a row of the table, the total, the metadata */
        snprintf(args, sizeof args, "--inspect %s", src);
        rc = th__run(args, out, err);
        o = t_slurp(out, NULL);
        for (i = 0; i < 13; i++) {
            snprintf(name, sizeof name, "harden.cli.inspect.%s.%s", kinds[k], want[k][i][0]);
            t_check(rc == 0 && !strcmp(th__cv_field(o, want[k][i][0], v, sizeof v), want[k][i][1]), name,
                    "exit %d, \"%s\" is \"%s\" (want \"%s\")", rc, want[k][i][0], v, want[k][i][1]);
        }
        snprintf(tot, sizeof tot, "\ntotal: %d tensors, %lld parameters (the model: %lld)\n", count[k], params[k],
                 params[k]);
        snprintf(name, sizeof name, "harden.cli.inspect.%s.table", kinds[k]);
        th__cv_row(o, k ? "model.layers.1.mlp.up_proj.weight" : "h.1.mlp.c_fc.weight", row, sizeof row);
        t_check(rc == 0 && o && !strcmp(row, k ? "model.layers.1.mlp.up_proj.weight F32 [48, 32] 1536"
                                           : "h.1.mlp.c_fc.weight F32 [32, 128] 4096") && strstr(o, tot) &&
                    !strcmp(th__cv_field(o, "ltrain_format", v, sizeof v), k ? "ltrain-llama" : "ltrain-gpt2") &&
                    !strcmp(th__cv_field(o, "format", v, sizeof v), "pt") && strstr(o, "\n  ltrain_config: ("),
                name, "exit %d, row \"%s\", stdout \"%.3000s\" (want \"%s\")", rc, row, o ? o : "", tot);
        free(o);
        /* --convert: file -> new directory -> file, every tensor the same */
        snprintf(name, sizeof name, "cv_%s_dir/", kinds[k]);
        th__path(dir, sizeof dir, name);
        snprintf(name, sizeof name, "cv_%s_back.safetensors", kinds[k]);
        th__path(back, sizeof back, name);
        snprintf(file, sizeof file, "%smodel.safetensors", dir);
        remove(file); remove(back);
        snprintf(file, sizeof file, "%sconfig.json", dir);
        remove(file);
        rmdir(dir);
        snprintf(file, sizeof file, "%smodel.safetensors", dir);
        snprintf(args, sizeof args, "--convert %s %s", src, dir);
        rc = th__run(args, out, err);
        snprintf(args, sizeof args, "--convert %s %s", dir, back);
        rc = rc == 0 ? th__run(args, out, err) : rc;
        n = rc == 0 ? th__cv_same(src, file, why, sizeof why) : -1;
        if (n > 0) n = th__cv_same(src, back, why, sizeof why);
        snprintf(name, sizeof name, "harden.cli.convert.%s.round_trip", kinds[k]);
        e = t_slurp(err, NULL);
        snprintf(file, sizeof file, "%sconfig.json", dir);
        t_check(rc == 0 && n == count[k] && t_exists(file), name, "exit %d, %d tensors the same (%s), config.json %s, "
                "stderr \"%s\"", rc, n, why, t_exists(file) ? "written" : "missing", e ? e : "");
        free(e);
    }
    /* a directory transformers wrote (save_pretrained): its tensors to the bit in our file */
    th__path(back, sizeof back, "cv_hf_back.safetensors");
    remove(back);
    snprintf(args, sizeof args, "--convert tests/ref/llama_hf %s", back);
    rc = th__run(args, out, err);
    n = rc == 0 ? th__cv_same("tests/ref/llama_hf/model.safetensors", back, why, sizeof why) : -1;
    t_check(rc == 0 && n == 35, "harden.cli.convert.hf_dir", "exit %d, %d tensors the same (%s)", rc, n, why);

    /* bad input: one line naming the path, exit 1, nothing written */
    {
        char garbage[512], empty[512], fifo[512], devn[512], dst[512], tmpl[600];
        struct stat sb;
        int have_dev;
        static const char *const corpus = "ckpt_no_layer_0.safetensors";
        FILE *f;
        th__path(garbage, sizeof garbage, "cv_garbage.safetensors");
        th__path(empty, sizeof empty, "cv_empty_dir");
        th__path(fifo, sizeof fifo, "cv_fifo");
        th__path(devn, sizeof devn, "cv_null");
        th__path(dst, sizeof dst, "cv_dst.safetensors");
        th__path(src, sizeof src, "cv_llama.safetensors");
        remove(dst); remove(fifo); remove(devn); rmdir(empty);
        if ((f = fopen(garbage, "wb")) != NULL) { fputs("this is not a safetensors file\n", f); fclose(f); }
        mkdir(empty, 0755);
        snprintf(args, sizeof args, "mknod %s c 1 3 2> /dev/null", devn);
        have_dev = system(args) == 0 && th__node_is(devn, 'c');   /* needs root; else that case skips */
        if (mkfifo(fifo, 0644) != 0) t_check(0, "harden.cli.convert.setup_fifo", "mkfifo %s failed", fifo);
        snprintf(args, sizeof args, "--convert %s/no_such.safetensors %s", t_tmp_dir(), dst);
        snprintf(v, sizeof v, "%s/no_such.safetensors: cannot open", t_tmp_dir());
        th__refused("harden.cli.convert.missing", args, v);
        snprintf(args, sizeof args, "--convert %s %s", garbage, dst);
        th__refused("harden.cli.convert.garbage", args, garbage);
        snprintf(args, sizeof args, "--convert %s/%s %s", th__dir(), corpus, dst);
        th__refused("harden.cli.convert.malformed", args, corpus);
        snprintf(args, sizeof args, "--convert %s %s", empty, dst);
        th__refused("harden.cli.convert.dir_without_model", args, "model.safetensors: cannot open");
        snprintf(args, sizeof args, "--inspect %s", garbage);
        th__refused("harden.cli.inspect.garbage", args, garbage);
        snprintf(args, sizeof args, "--inspect %s/no_such.safetensors", t_tmp_dir());
        th__refused("harden.cli.inspect.missing", args, "no_such.safetensors: cannot open");
        snprintf(args, sizeof args, "--inspect %s --arch gpt2", src);
        snprintf(v, sizeof v, "--arch gpt2 but %s is a llama model", src);
        th__refused("harden.cli.inspect.flag_vs_file", args, v);
        snprintf(args, sizeof args, "--convert %s %s/", garbage, dst);   /* a new directory: not made */
        th__refused("harden.cli.convert.garbage_to_dir", args, garbage);
        t_check(stat(dst, &sb) != 0, "harden.cli.convert.bad_in_nothing_written", "%s exists", dst);
        snprintf(args, sizeof args, "--convert %s %s", src, empty);
        snprintf(v, sizeof v, "--convert: \"%s\" is a directory", empty);
        th__refused("harden.cli.convert.out_dir", args, v);
        snprintf(file, sizeof file, "%s/model.safetensors", empty);
        t_check(!t_exists(file), "harden.cli.convert.out_dir_untouched", "%s was written into", empty);
        mkdir(file, 0755);   /* a directory path (ending in /) is written into: its model.safetensors is checked */
        snprintf(args, sizeof args, "--convert %s %s/", src, empty);
        snprintf(v, sizeof v, "--convert: \"%s\" is a directory", file);
        th__refused("harden.cli.convert.out_dir_model_is_dir", args, v);
        rmdir(file);
        snprintf(args, sizeof args, "--convert %s %s/", src, empty);
        rc = th__run(args, out, err) == 0 ? th__cv_same(src, file, why, sizeof why) : -1;
        t_check(rc == count[1], "harden.cli.convert.into_existing_dir", "%d tensors the same (%s)", rc, why);
        remove(file);
        snprintf(file, sizeof file, "%s/config.json", empty);
        remove(file);
        rmdir(empty);
        snprintf(args, sizeof args, "--convert %s %s", src, fifo);
        snprintf(v, sizeof v, "--convert: \"%s\" is a FIFO", fifo);
        th__refused("harden.cli.convert.out_fifo", args, v);
        if (have_dev) {
            snprintf(args, sizeof args, "--convert %s %s", src, devn);
            snprintf(v, sizeof v, "--convert: \"%s\" is a character device", devn);
            th__refused("harden.cli.convert.out_device", args, v);
        } else {
            t_skip("harden.cli.convert.out_device", "mknod failed (not root)");
        }
        t_check(th__node_is(fifo, 'f') && (!have_dev || th__node_is(devn, 'c')), "harden.cli.convert.nodes_untouched",
                "a node was replaced");
        snprintf(tmpl, sizeof tmpl, "ls %s | grep -q 'cv_.*tmp'", t_tmp_dir());
        t_check(system(tmpl) != 0, "harden.cli.convert.no_temporary_files", "a cv_*tmp* file is left in %s", t_tmp_dir());
        remove(fifo); remove(devn); remove(garbage);
    }
    for (k = 0; k < 2; k++) {   /* what the round trips wrote */
        static const char *const files[] = {".safetensors", "_back.safetensors", "_dir/model.safetensors", "_dir/config.json",
                                            "_dir"};
        for (i = 0; i < 5; i++) {
            snprintf(name, sizeof name, "cv_%s%s", kinds[k], files[i]);
            th__path(file, sizeof file, name);
            if (i < 4) remove(file); else rmdir(file);
        }
    }
    th__path(back, sizeof back, "cv_hf_back.safetensors");
    remove(back);
}

static void test_harden_all(void) {
    if (t_only && !strstr("harden", t_only) && strncmp(t_only, "harden", 6) != 0) return;
    th__corpus();
    th__save();
    th__nonfinite();
    th__resume();
    th__train_guards();
    th__flags();
    th__data();
    th__dest();
    th__complete();
    th__meta_text();
    th__resume_flags();
    th__logs_and_flags();
    th__tty();
    th__convert();
}

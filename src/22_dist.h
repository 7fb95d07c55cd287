/* ==== @@DIST  data parallel over MPI: ranks, bucketed gradient all-reduce, sharding, checkpoints = */
/* Holds: lt_dist: ranks, the bucketed gradient all-reduce (fp32, ordered, bf16), each
   rank's share of the batches, checkpoints saved by rank 0.
   Calls: @@CORE, @@HALF, @@TENSOR, @@DATA, @@TRAIN; MPI under LTRAIN_MPI. */
/* Under LTRAIN_MPI (compile with mpicc) the functions talk to MPI; without it they are the
   single-process case (rank 0 of 1), so user code needs no #ifdef.

   Gradient averaging, per bucket of the flat gradient (cfg.bucket_bytes of fp32, so a model is a
   few large messages rather than one per tensor):
     LT_REDUCE_F32          MPI_Allreduce(MPI_IN_PLACE, MPI_SUM) then *= 1/N.  For large messages
                            Open MPI runs a ring (reduce-scatter + all-gather), so each rank sends
                            2 (N-1)/N * 4 bytes per gradient float; every rank receives the same
                            bits (each slice is summed once, then copied around).
     LT_REDUCE_F32_ORDERED  the same traffic written out as two collectives: MPI_Alltoall gives
     LT_REDUCE_BF16         rank j slice j of every rank's bucket; j sums its N rows in fp32 in
                            rank order 0..N-1, scales by 1/N, and MPI_Allgather hands every rank
                            the finished slices.  The sum order is fixed by the ranks, not by
                            MPI's algorithm.  BF16 sends bf16 both ways (2 (N-1)/N * 2 bytes per
                            float): each gradient is rounded to bf16 once before sending (round to
                            nearest even, lt_f32_to_bf16), the N values are added in fp32 (a sum
                            of bf16s is never rounded to bf16 along the way, unlike a bf16
                            MPI_SUM where every partial sum would be), and the mean is rounded to
                            bf16 once more.  So the result is within 2^-8 relative of the fp32
                            mean of the rounded inputs, and identical on every rank.
   Not overlapped with backward: the tape's backward has no "this parameter's gradient is final"
   hook, and the tied wte gradient is only final at the very end of backward anyway; the
   reduction runs once per optimizer step (micro-batches accumulate locally, as DDP's no_sync).
   A barrier before it splits the time into waiting for the slowest rank (stats.wait_ms: load
   imbalance) and the transfer itself (stats.last_ms); it costs one message latency per step. */

#ifdef LTRAIN_MPI
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  /* the C API only, also when the header is compiled as C++ */
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#endif

struct lt_dist {
    lt_ctx *ctx;
    lt_dist_config cfg;
    lt_dist_stats stats;
    int rank, world;
    size_t bucket;              /* floats per bucket */
    float *stage;               /* one bucket (unpacked parameters), then the slice sums */
    unsigned char *wire, *wire2;/* ordered modes: world * slice elements each */
    size_t stage_cap, wire_cap;
    int32_t *gin, *gtg;         /* the global batch, for lt_dist_loader_next */
    size_t gcap;
    char desc[96];
#ifdef LTRAIN_MPI
    MPI_Comm comm;              /* our own copy of MPI_COMM_WORLD: our messages never meet the user's */
#endif
};

/* ---- @@DIST.process  process level -------------------------------------------------------- */
#ifdef LTRAIN_MPI
static int lt__mpi_live(void) {
    int i = 0, f = 0;
    MPI_Initialized(&i);
    if (i) MPI_Finalized(&f);
    return i && !f;
}
#endif

LTRAIN_DEF lt_status lt_dist_init(int *argc, char ***argv) {
#ifdef LTRAIN_MPI
    int inited = 0, fin = 0, provided = 0;
    MPI_Initialized(&inited);
    if (inited) return LT_OK;
    MPI_Finalized(&fin);
    if (fin) return LT_ERR_STATE;
    /* funneled: OpenMP threads compute, only the thread that called init talks to MPI */
    return MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS ? LT_OK : LT_ERR_STATE;
#else
    (void)argc;
    (void)argv;
    return LT_OK;
#endif
}

LTRAIN_DEF void lt_dist_finalize(void) {
#ifdef LTRAIN_MPI
    if (lt__mpi_live()) MPI_Finalize();
#endif
}

LTRAIN_DEF int lt_dist_rank(void) {
#ifdef LTRAIN_MPI
    int r = 0;
    if (lt__mpi_live()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
#else
    return 0;
#endif
}

LTRAIN_DEF int lt_dist_world(void) {
#ifdef LTRAIN_MPI
    int n = 1;
    if (lt__mpi_live()) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
#else
    return 1;
#endif
}

LTRAIN_DEF void lt_dist_abort(int code) {
#ifdef LTRAIN_MPI
    if (lt__mpi_live() && lt_dist_world() > 1) MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
#else
    (void)code;
#endif
}

/* ---- @@DIST.reducer  the reducer ---------------------------------------------------------- */
LTRAIN_DEF lt_dist_config lt_dist_defaults(void) {
    lt_dist_config c;
    memset(&c, 0, sizeof c);
    c.bucket_bytes = (size_t)16 << 20;
    c.mode = LT_REDUCE_F32;
    return c;
}

#ifdef LTRAIN_MPI
/* An MPI call failed: its message on ctx. */
static lt_status lt__dist_mpi_error(lt_dist *d, int rc, const char *what) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
    return lt_set_error(d->ctx, LT_ERR_STATE, "%s (rank %d of %d): %s", what, d->rank, d->world, s);
}
#endif

LTRAIN_DEF lt_dist *lt_dist_create(lt_ctx *ctx, const lt_dist_config *cfg) {
    lt_dist *d;
    const char *mode;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (ctx->device != LT_CPU) {
        lt_set_error(ctx, LT_ERR_STATE, "lt_dist_create: data parallel runs on LT_CPU contexts only (this one is on %s)",
                     lt_device_name(ctx->device));
        return NULL;
    }
    if (cfg && (cfg->mode < LT_REDUCE_F32 || cfg->mode > LT_REDUCE_BF16)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_dist_create: mode %d is not an lt_reduce_mode", (int)cfg->mode);
        return NULL;
    }
#ifndef LTRAIN_MPI
    {   /* a plain build started by mpirun: every copy would train alone and write the same files */
        const char *env[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"};
        int i;
        for (i = 0; i < 3; i++) {
            const char *v = getenv(env[i]);
            if (v && atoi(v) > 1) {
                lt_set_error(ctx, LT_ERR_STATE, "lt_dist_create: this program was built without LTRAIN_MPI but runs as "
                             "one of %s MPI processes (%s): each would train alone (hint: compile with mpicc "
                             "-DLTRAIN_MPI, e.g. make mpi)", v, env[i]);
                return NULL;
            }
        }
    }
#else
    if (!lt__mpi_live()) {
        lt_set_error(ctx, LT_ERR_STATE, "lt_dist_create: MPI is not initialised (hint: call lt_dist_init(&argc, &argv) "
                     "at the start of main)");
        return NULL;
    }
#endif
    d = (lt_dist *)LT__MALLOC(sizeof *d);
    if (!d) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_dist_create: out of memory"); return NULL; }
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->cfg = cfg ? *cfg : lt_dist_defaults();
    d->rank = lt_dist_rank();
    d->world = lt_dist_world();
    /* at least 1024 floats, at most 2^28 (MPI counts are int; 1 GiB messages gain nothing) */
    d->bucket = d->cfg.bucket_bytes / sizeof(float);
    if (d->bucket < 1024) d->bucket = 1024;
    if (d->bucket > ((size_t)1 << 28)) d->bucket = (size_t)1 << 28;
    d->cfg.bucket_bytes = d->bucket * sizeof(float);
#ifdef LTRAIN_MPI
    {
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &d->comm);
        if (rc != MPI_SUCCESS) {
            lt__dist_mpi_error(d, rc, "lt_dist_create: MPI_Comm_dup");
            LT__FREE(d);
            return NULL;
        }
        MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    }
#endif
    mode = d->cfg.mode == LT_REDUCE_BF16 ? "bf16" : d->cfg.mode == LT_REDUCE_F32_ORDERED ? "fp32 rank-ordered" : "fp32";
    if (d->world > 1)
        snprintf(d->desc, sizeof d->desc, "%d ranks (MPI), %s all-reduce in %.3g MiB buckets", d->world, mode,
                 (double)d->cfg.bucket_bytes / (1 << 20));
    else
#ifdef LTRAIN_MPI
        snprintf(d->desc, sizeof d->desc, "1 rank (MPI): no all-reduce");
#else
        snprintf(d->desc, sizeof d->desc, "1 process (built without LTRAIN_MPI)");
#endif
    return d;
}

LTRAIN_DEF void lt_dist_destroy(lt_dist *d) {
    if (!d) return;
#ifdef LTRAIN_MPI
    if (lt__mpi_live()) MPI_Comm_free(&d->comm);
#endif
    LT__FREE(d->stage);
    LT__FREE(d->wire);
    LT__FREE(d->wire2);
    LT__FREE(d->gin);
    LT__FREE(d->gtg);
    LT__FREE(d);
}

LTRAIN_DEF lt_dist_stats lt_dist_get_stats(const lt_dist *d) {
    lt_dist_stats s;
    if (d) return d->stats;
    memset(&s, 0, sizeof s);
    return s;
}

LTRAIN_DEF const char *lt_dist_describe(const lt_dist *d) { return d ? d->desc : "no lt_dist"; }


#ifdef LTRAIN_MPI
/* Floats [lo, lo+n) of the gradient seen as one concatenation (parameters in creation order),
   copied into buf (to_grad 0) or back (to_grad 1): for parameters that were never packed. */
static void lt__dist_grad_copy(lt_ctx *ctx, size_t lo, size_t n, float *buf, int to_grad) {
    size_t off = 0, hi = lo + n;
    int i;
    for (i = 0; i < ctx->n_params && off < hi; i++) {
        lt_tensor *t = ctx->params[i];
        size_t tn = (size_t)t->n;
        if (off + tn > lo) {
            size_t a = lo > off ? lo - off : 0, b = (hi < off + tn ? hi : off + tn) - off;
            float *q = buf + (off + a - lo);
            if (!t->grad) { if (!to_grad) memset(q, 0, (b - a) * sizeof(float)); }
            else if (to_grad) memcpy(t->grad + a, q, (b - a) * sizeof(float));
            else memcpy(q, t->grad + a, (b - a) * sizeof(float));
        }
        off += tn;
    }
}

/* Room for a bucket of nb floats: stage (nb), acc (one slice), two wire buffers (world slices). */
static lt_status lt__dist_reserve(lt_dist *d, size_t nb) {
    size_t slice = (nb + (size_t)d->world - 1) / (size_t)d->world;
    size_t sf = nb + slice, wb = (size_t)d->world * slice * sizeof(float);
    if (sf > d->stage_cap) {
        LT__FREE(d->stage);
        d->stage_cap = 0;
        if (!(d->stage = (float *)LT__MALLOC(sf * sizeof(float))))
            return lt_set_error(d->ctx, LT_ERR_NOMEM, "lt_dist_allreduce_grads: out of memory for a %zu-float bucket", nb);
        d->stage_cap = sf;
    }
    if (d->cfg.mode != LT_REDUCE_F32 && wb > d->wire_cap) {
        LT__FREE(d->wire);
        LT__FREE(d->wire2);
        d->wire_cap = 0;
        d->wire = (unsigned char *)LT__MALLOC(wb);
        d->wire2 = (unsigned char *)LT__MALLOC(wb);
        if (!d->wire || !d->wire2)
            return lt_set_error(d->ctx, LT_ERR_NOMEM, "lt_dist_allreduce_grads: out of memory for %zu wire bytes", wb);
        d->wire_cap = wb;
    }
    return LT_OK;
}

/* One bucket p[nb] -> its mean over ranks, summed in rank order by the slice's owner (see the
   section comment): MPI_Alltoall, fixed-order fp32 sum of the N rows, MPI_Allgather. */
static int lt__dist_reduce_ordered(lt_dist *d, float *p, size_t nb) {
    int N = d->world, bf16 = d->cfg.mode == LT_REDUCE_BF16, rc, j;
    size_t c = (nb + (size_t)N - 1) / (size_t)N, i, esz = bf16 ? sizeof(uint16_t) : sizeof(float);
    float *acc = d->stage + d->stage_cap - c, inv = 1.0f / (float)N;
    MPI_Datatype ty = bf16 ? MPI_UINT16_T : MPI_FLOAT;
    if (bf16) lt_f32_to_bf16_array(p, (uint16_t *)d->wire, nb);
    else memcpy(d->wire, p, nb * sizeof(float));
    memset(d->wire + nb * esz, 0, ((size_t)N * c - nb) * esz);   /* the last slice's padding */
    rc = MPI_Alltoall(d->wire, (int)c, ty, d->wire2, (int)c, ty, d->comm);
    if (rc != MPI_SUCCESS) return rc;
    /* row j of wire2: rank j's values of this rank's slice */
    if (bf16) {
        const uint16_t *r = (const uint16_t *)d->wire2;
        for (i = 0; i < c; i++) acc[i] = lt_bf16_to_f32(r[i]);
        for (j = 1; j < N; j++)
            for (i = 0; i < c; i++) acc[i] += lt_bf16_to_f32(r[(size_t)j * c + i]);
        for (i = 0; i < c; i++) acc[i] *= inv;
        lt_f32_to_bf16_array(acc, (uint16_t *)d->wire, c);
    } else {
        const float *r = (const float *)d->wire2;
        for (i = 0; i < c; i++) acc[i] = r[i];
        for (j = 1; j < N; j++)
            for (i = 0; i < c; i++) acc[i] += r[(size_t)j * c + i];
        for (i = 0; i < c; i++) acc[i] *= inv;
        memcpy(d->wire, acc, c * sizeof(float));
    }
    rc = MPI_Allgather(d->wire, (int)c, ty, d->wire2, (int)c, ty, d->comm);
    if (rc != MPI_SUCCESS) return rc;
    if (bf16) lt_bf16_to_f32_array((const uint16_t *)d->wire2, p, nb);
    else memcpy(p, d->wire2, nb * sizeof(float));
    return MPI_SUCCESS;
}

/* FNV-1a over the parameters' 32-bit words (and their sizes): equal weights, equal hash. */
static uint64_t lt__dist_hash(lt_ctx *ctx) {
    uint64_t h = 0xcbf29ce484222325ULL;
    int i;
    for (i = 0; i < ctx->n_params; i++) {
        const lt_tensor *t = ctx->params[i];
        int64_t k;
        h = (h ^ (uint64_t)t->n) * 0x100000001b3ULL;
        for (k = 0; k < t->n; k++) {
            uint32_t w;
            memcpy(&w, &t->data[k], sizeof w);
            h = (h ^ w) * 0x100000001b3ULL;
        }
    }
    return h;
}

static int lt__dist_bcast_floats(lt_dist *d, float *p, size_t n) {
    size_t lo;
    for (lo = 0; lo < n; lo += d->bucket) {
        size_t nb = n - lo < d->bucket ? n - lo : d->bucket;
        int rc = MPI_Bcast(p + lo, (int)nb, MPI_FLOAT, 0, d->comm);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}
#endif /* LTRAIN_MPI */

LTRAIN_DEF lt_status lt_dist_allreduce_grads(lt_dist *d) {
    if (!d) return LT_ERR_ARG;
    if (lt_failed(d->ctx)) return d->ctx->status;
    d->stats.calls++;
    if (d->world == 1) return LT_OK;
#ifdef LTRAIN_MPI
    lt__grads_settle(d->ctx);   /* gradients lt_zero_grad_lazy left unset: zero first (@@TENSOR) */
    {
        lt_ctx *ctx = d->ctx;
        size_t n = 0, lo, nb, i;
        float *span = lt_params_grad_span(ctx, &n), inv = 1.0f / (float)d->world;
        double t0 = MPI_Wtime(), ms, elem = d->cfg.mode == LT_REDUCE_BF16 ? 2.0 : 4.0;
        int buckets = 0, rc = MPI_Barrier(d->comm);   /* so that the time below is the transfer alone */
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_allreduce_grads");
        ms = (MPI_Wtime() - t0) * 1e3;
        d->stats.wait_ms = ms;
        d->stats.total_wait_ms += ms;
        t0 = MPI_Wtime();
        if (!span) n = lt_params_count(ctx);
        if (lt__dist_reserve(d, n < d->bucket ? n : d->bucket) != LT_OK) return ctx->status;
        for (lo = 0; lo < n; lo += nb) {
            float *p;
            nb = n - lo < d->bucket ? n - lo : d->bucket;
            p = span ? span + lo : d->stage;
            if (!span) lt__dist_grad_copy(ctx, lo, nb, p, 0);
            if (d->cfg.mode == LT_REDUCE_F32) {
                rc = MPI_Allreduce(MPI_IN_PLACE, p, (int)nb, MPI_FLOAT, MPI_SUM, d->comm);
                for (i = 0; i < nb; i++) p[i] *= inv;
            } else {
                rc = lt__dist_reduce_ordered(d, p, nb);
            }
            if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_allreduce_grads");
            if (!span) lt__dist_grad_copy(ctx, lo, nb, p, 1);
            buckets++;
        }
        ms = (MPI_Wtime() - t0) * 1e3;
        d->stats.last_ms = ms;
        d->stats.total_ms += ms;
        d->stats.floats = n;
        d->stats.buckets = buckets;
        d->stats.wire_bytes = 2.0 * (d->world - 1) / d->world * (double)n * elem;
    }
#endif
    return LT_OK;
}

LTRAIN_DEF double lt_dist_mean(lt_dist *d, double x) {
    if (!d || d->world == 1) return x;
#ifdef LTRAIN_MPI
    {
        double s = 0;
        int rc = MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, d->comm);
        if (rc != MPI_SUCCESS) { lt__dist_mpi_error(d, rc, "lt_dist_mean"); return NAN; }
        return s / d->world;
    }
#else
    return x;
#endif
}

LTRAIN_DEF lt_status lt_dist_barrier(lt_dist *d) {
    if (!d) return LT_ERR_ARG;
#ifdef LTRAIN_MPI
    if (d->world > 1) {
        int rc = MPI_Barrier(d->comm);
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_barrier");
    }
#endif
    return d->ctx->status;
}

LTRAIN_DEF lt_status lt_dist_broadcast_params(lt_dist *d) {
    if (!d) return LT_ERR_ARG;
    if (lt_failed(d->ctx) || d->world == 1) return d->ctx->status;
#ifdef LTRAIN_MPI
    {
        lt_ctx *ctx = d->ctx;
        size_t n;
        float *grads = lt_params_grad_span(ctx, &n);
        int rc = MPI_SUCCESS, i;
        if (grads) rc = lt__dist_bcast_floats(d, grads - n, n);   /* the packed block: data, then grads */
        for (i = 0; !grads && i < ctx->n_params && rc == MPI_SUCCESS; i++)
            rc = lt__dist_bcast_floats(d, ctx->params[i]->data, (size_t)ctx->params[i]->n);
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_broadcast_params");
    }
#endif
    return d->ctx->status;
}

LTRAIN_DEF lt_status lt_dist_check_sync(lt_dist *d) {
    if (!d) return LT_ERR_ARG;
    if (lt_failed(d->ctx) || d->world == 1) return d->ctx->status;
#ifdef LTRAIN_MPI
    {
        uint64_t h = lt__dist_hash(d->ctx), in[2], out[2];
        int rc;
        in[0] = h; in[1] = ~h;   /* max of h and of ~h: the largest and (complemented) the smallest */
        rc = MPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, d->comm);
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_check_sync");
        if (out[0] != ~out[1])
            return lt_set_error(d->ctx, LT_ERR_STATE, "lt_dist_check_sync: the %d ranks hold different weights (hash "
                                "%016llx on rank %d; range %016llx..%016llx) (hint: create the model from the same "
                                "seed on every rank, or call lt_dist_broadcast_params)", d->world,
                                (unsigned long long)h, d->rank, (unsigned long long)~out[1],
                                (unsigned long long)out[0]);
    }
#endif
    return d->ctx->status;
}

/* Reads the loader's B and B*T: lt_loader is defined in @@DATA above. */
/* ---- @@DIST.data  each rank's batches, checkpoints ------------------------------------------- */
LTRAIN_DEF lt_status lt_dist_loader_next(lt_dist *d, lt_loader *ld, int32_t *inputs, int32_t *targets) {
    size_t bt, gbt;
    lt_status s;
    if (!d || !ld) return LT_ERR_ARG;
    if (d->world == 1) return lt_loader_next(ld, inputs, targets);
    if (ld->B % d->world != 0)
        return lt_set_error(d->ctx, LT_ERR_ARG, "lt_dist_loader_next: the loader's batch has %d rows, which %d ranks "
                            "cannot share (hint: open it with B = world * B per rank)", ld->B, d->world);
    gbt = (size_t)ld->bt;
    bt = gbt / (size_t)d->world;
    if (gbt > d->gcap) {
        LT__FREE(d->gin);
        LT__FREE(d->gtg);
        d->gcap = 0;
        d->gin = (int32_t *)LT__MALLOC(gbt * sizeof(int32_t));
        d->gtg = (int32_t *)LT__MALLOC(gbt * sizeof(int32_t));
        if (!d->gin || !d->gtg)
            return lt_set_error(d->ctx, LT_ERR_NOMEM, "lt_dist_loader_next: out of memory for a %zu-token batch", gbt);
        d->gcap = gbt;
    }
    s = lt_loader_next(ld, d->gin, d->gtg);
    if (s != LT_OK) return s;
    if (inputs) memcpy(inputs, d->gin + (size_t)d->rank * bt, bt * sizeof(int32_t));
    if (targets) memcpy(targets, d->gtg + (size_t)d->rank * bt, bt * sizeof(int32_t));
    return LT_OK;
}

LTRAIN_DEF lt_status lt_dist_checkpoint_save(lt_dist *d, lt_gpt *gpt, lt_optim *opt, const lt_train_state *st,
                                             const char *note, const char *path) {
    lt_status s = LT_OK;
    if (!d) return LT_ERR_ARG;
    if (d->rank == 0) s = lt_checkpoint_save(gpt, opt, st, note, path);
#ifdef LTRAIN_MPI
    if (d->world > 1) {
        int code = (int)s, rc = MPI_Bcast(&code, 1, MPI_INT, 0, d->comm);   /* the others wait here */
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_checkpoint_save");
        if (d->rank != 0 && code != LT_OK)
            return lt_set_error(d->ctx, (lt_status)code, "lt_dist_checkpoint_save: rank 0 could not write %s (%s)",
                                path ? path : "(null)", lt_status_name((lt_status)code));
    }
#endif
    return d->rank == 0 ? s : d->ctx->status;
}

LTRAIN_DEF lt_status lt_dist_checkpoint_load(lt_dist *d, lt_gpt *gpt, lt_optim *opt, lt_train_state *st,
                                             const char *path) {
    lt_status s;
    if (!d) return LT_ERR_ARG;
    s = lt_checkpoint_load(gpt, opt, st, path);
#ifdef LTRAIN_MPI
    if (d->world > 1) {
        int mine = (int)s, worst = 0, rc = MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, d->comm);
        if (rc != MPI_SUCCESS) return lt__dist_mpi_error(d, rc, "lt_dist_checkpoint_load");
        if (worst != LT_OK && s == LT_OK)
            return lt_set_error(d->ctx, (lt_status)worst, "lt_dist_checkpoint_load: %s: another rank could not load it "
                                "(hint: every machine must see the file)", path ? path : "(null)");
        if (worst != LT_OK) return s;
        return lt_dist_check_sync(d);
    }
#endif
    return s;
}


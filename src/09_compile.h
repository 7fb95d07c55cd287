/* ==== @@COMPILE  capture a step once, plan its memory, replay ================================== */
/* Holds: lt_compile (capture a step, plan its buffers by lifetime), lt_plan_run (replay).
   Calls: @@CORE, @@TENSOR, @@OPS, @@TAPE; the device through ctx->dev. */
/* torch.compile's idea in C.  lt_compile runs the user's step function once in a recording
   mode (every op checks its arguments and is recorded, not only those on the tape, but no
   kernel runs), works out from the graph which outputs receive gradients, and turns the
   recording into a plan:
     - a schedule: the forward kernels in order, then the backward kernels in reverse;
     - a lifetime for every buffer (activation, saved value, activation gradient) on a timeline
       0 = copy inputs in, k+1 = forward of op k, N+1 = seed d(loss) = 1, 2N+1-k = backward of op k;
     - one block of memory in which buffers whose lifetimes do not overlap share bytes
       (greedy placement, largest first, at the lowest offset free for the whole lifetime);
       a cross-entropy's logits gradient is written over the logits when nothing reads them later;
       a residual add's two inputs take its output's gradient as theirs (no copy) where it may;
       at 16 bits gelu's output is not written when its readers take it from gelu's 16-bit copy
       of its input, and its gradient goes straight to 16 bits for the product before it.
   A replay copies the inputs in again (from the same addresses: ids, targets and lt_tensor_from
   data are re-read), runs the kernels and marks each gradient buffer unset just before its
   first write (the kernel zeroes it, or writes it whole: lt__grad_w).  It allocates nothing,
   records nothing and dispatches straight from the plan.
   The kernels are the eager ones in the same order, so a replay gives the eager step's numbers
   to the bit.  The first replay, inside lt_compile, is the validation step: every output is
   checked for NaN/inf, and the op, its shapes and its place are named if one is not finite.  lt_compile starts a new step (arena tensors made before it are gone) and leaves
   the gradients and the RNG as they were.  LTRAIN_COMPILE=0 in the environment turns compiling off (plans run eagerly). */

typedef struct { lt_tensor *t; const float *src; } lt__cap_in;
struct lt__capture {
    lt__node **nodes;            /* every op executed, in order */
    int n, cap;
    lt__cap_in *in;              /* tensors made by lt_tensor_new / lt_tensor_from */
    int n_in, cap_in;
    char *has_grad;              /* op k's output receives a gradient (so its backward runs) */
    int *seg;                    /* op k ran inside recompute segment seg[k] (-1: none; NULL: no segments) */
    char *rc;                    /* op k's forward runs again in backward (all of a segment's ops but its output's) */
};

/* ---- @@COMPILE.capture  capture -------------------------------------------------------------- */
static void lt__capture_input(lt_ctx *ctx, lt_tensor *t, const float *src) {
    struct lt__capture *c = ctx->cap;
    if (c->n_in == c->cap_in) {
        int cap = c->cap_in ? 2 * c->cap_in : 16;
        lt__cap_in *p = (lt__cap_in *)LT__REALLOC(c->in, (size_t)cap * sizeof(lt__cap_in));
        if (!p) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory recording inputs"); return; }
        c->in = p;
        c->cap_in = cap;
    }
    c->in[c->n_in].t = t;
    c->in[c->n_in].src = src;
    c->n_in++;
}

static void lt__capture_node(lt_ctx *ctx, lt__node *nd) {
    struct lt__capture *c = ctx->cap;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 256;
        lt__node **p = (lt__node **)LT__REALLOC(c->nodes, (size_t)cap * sizeof(lt__node *));
        if (!p) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory recording ops"); return; }
        c->nodes = p;
        c->cap = cap;
    }
    c->nodes[c->n++] = nd;
}

/* what lt_compile hands the parts above it while it records (ctx->cap_hooks) */
static const lt__capture_hooks lt__capture_rec = {lt__capture_input, lt__capture_node};

typedef struct {
    size_t bytes, off;
    int first, last;             /* lifetime on the plan's timeline, inclusive */
} lt__pbuf;

struct lt_plan {
    lt_ctx *ctx;
    lt_step_fn fn;
    void *user;
    int eager;                   /* fell back (or compiling is off): run fn + backward each time */
    char note[256];
    int n;                       /* ops */
    lt__node *nodes;             /* plan-owned copies of the records */
    lt_tensor *outs;             /* their outputs */
    int n_in;
    lt_tensor *ins;              /* inputs (copies) */
    const float **in_src;        /* where each input's values come from (NULL: zeros) */
    int loss;                    /* which op's output is the loss */
    int *runs_bwd;               /* op k runs its backward kernel */
    int **zero_at;               /* zero_at[k]: grad buffers (indices into outs) born at op k's backward */
    int *n_zero_at;
    int32_t *ids;                /* every op's indices, one block */
    unsigned char *mem;          /* the planned block */
    size_t mem_bytes, naive_bytes;
    size_t saved_bytes;          /* what the forward leaves for the backward (lt_plan_saved_bytes) */
    int *fuse_end;               /* op k starts a fused group ending at op fuse_end[k] (-1: none) */
    int n_groups, n_fused;       /* fused groups, and the ops in them */
    int n_ev, *ev;               /* the backward phase in order: 2k = op k's backward, 2k+1 = op k's forward run again */
    int n_rc;                    /* ops run again (recompute segments, the memory budget) */
    char *rc;                    /* op k runs again in backward */
    float *(*rcp)[6];            /* op k run again: its data and saved values' homes in forward [0..2], again [3..5] */
    lt_rng *op_rng;              /* op k run again: the RNG as its forward began (dropout draws it again) */
    size_t budget, rc_bytes;     /* the memory budget it was planned under (0: none); bytes made again */
    double rc_flops;             /* the forward FLOPs run again */
    struct lt__cu_graph *graph;  /* on a device: the step recorded as its graph (LT_CUDA: a CUDA graph, @@CUDA) */
    const lt__device *graph_dev; /* ... and that device, which replays and frees it */
};

/* index of t among the recorded outputs (-1: not one) */
static int lt__find_out(struct lt__capture *c, const lt_tensor *t) {
    int k;
    for (k = c->n - 1; k >= 0; k--) if (c->nodes[k]->out == t) return k;
    return -1;
}
static int lt__find_in(struct lt__capture *c, const lt_tensor *t) {
    int k;
    for (k = 0; k < c->n_in; k++) if (c->in[k].t == t) return k;
    return -1;
}

/* Place buffers: largest first, each at the lowest 64-byte-aligned offset that does not overlap a
   placed buffer alive at the same time.  Returns the block size. */
static size_t lt__place(lt__pbuf *b, int nb, int *order, size_t *scratch_off, size_t *scratch_end) {
    size_t total = 0;
    int i, j, k;
    for (i = 0; i < nb; i++) order[i] = i;
    for (i = 1; i < nb; i++) {   /* insertion sort by size, descending (stable) */
        int t = order[i];
        for (j = i; j > 0 && b[order[j - 1]].bytes < b[t].bytes; j--) order[j] = order[j - 1];
        order[j] = t;
    }
    for (i = 0; i < nb; i++) {
        lt__pbuf *x = &b[order[i]];
        int m = 0;
        size_t off = 0;
        for (j = 0; j < i; j++) {   /* placed buffers alive together with x, sorted by offset */
            lt__pbuf *y = &b[order[j]];
            if (y->first <= x->last && x->first <= y->last) {
                for (k = m; k > 0 && scratch_off[k - 1] > y->off; k--) {
                    scratch_off[k] = scratch_off[k - 1];
                    scratch_end[k] = scratch_end[k - 1];
                }
                scratch_off[k] = y->off;
                scratch_end[k] = y->off + y->bytes;
                m++;
            }
        }
        for (k = 0; k < m; k++) {
            if (scratch_off[k] >= off + x->bytes) break;   /* fits in the gap before it */
            if (scratch_end[k] > off) off = (scratch_end[k] + LT__ALIGN - 1) & ~(size_t)(LT__ALIGN - 1);
        }
        x->off = off;
        if (off + x->bytes > total) total = off + x->bytes;
    }
    return total;
}

static lt_plan *lt__plan_alloc(lt_ctx *ctx, lt_step_fn fn, void *user) {
    lt_plan *p = (lt_plan *)LT__MALLOC(sizeof(lt_plan));
    if (!p) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); return NULL; }
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->fn = fn;
    p->user = user;
    return p;
}

LTRAIN_DEF void lt_plan_destroy(lt_plan *p) {
    int k;
    if (!p) return;
    if (p->graph) p->graph_dev->graph_free(p);
    if (p->zero_at) for (k = 0; k < p->n; k++) LT__FREE(p->zero_at[k]);
    LT__FREE(p->zero_at);
    LT__FREE(p->n_zero_at);
    LT__FREE(p->runs_bwd);
    LT__FREE(p->fuse_end);
    LT__FREE(p->ev);
    LT__FREE(p->rcp);
    LT__FREE(p->rc);
    LT__FREE(p->op_rng);
    LT__FREE(p->nodes);
    LT__FREE(p->outs);
    LT__FREE(p->ins);
    LT__FREE((void *)p->in_src);
    LT__FREE(p->ids);
    LT__FREE(p->mem);
    LT__FREE(p);
}

/* ---- @@COMPILE.fusion  fusion: chains of row-wise ops run tile by tile ---------------------------
   Ops such as layernorm, softmax and the elementwise ones (LT__ROW in the op table) treat each
   row of their (R, C) output independently.  A chain of them (in GPT-2: the residual add and the
   layernorm after it) runs eagerly as one sweep over all R rows per op, so each op reads back
   from memory what the one before just wrote.  The plan instead runs the chain on tiles of rows: for a tile, every op of
   the chain in turn, on views of its tensors (and of its per-row saved values) cut to those
   rows, while the tile is still in cache; the tiles are split over the threads.  Every kernel
   computes each row exactly as before, so the numbers are the eager ones to the bit.
   LTRAIN_FUSE=0 in the environment plans without fusion (to compare, or to debug). */
/* Can plan node nd run on row tiles of an (R, C) output?  Its inputs must be either full
   (R, C) tensors (cut with the tile) or at most one row broadcast over all (left whole), and its
   saved values a whole number per row. */
static int lt__row_fusable(const lt__node *nd, int64_t R, int64_t C) {
    int j;
    if (!(nd->op->flags & LT__ROW) || nd->out->n != R * C || nd->out->shape[nd->out->ndim - 1] != C) return 0;
    for (j = 0; j < 3; j++) {
        const lt_tensor *t = nd->in[j];
        if (!t || t->n == R * C) continue;
        if (t->n > C || C % t->n != 0 || j == 0) return 0;
    }
    if (nd->in[0]->shape[nd->in[0]->ndim - 1] != C) return 0;
    for (j = 0; j < 2; j++)
        if (nd->save[j] && nd->n_save[j] % R != 0) return 0;
    return 1;
}

/* Group runs of row-wise ops (at least two, of the same (R, C), each after the first reading an
   earlier one's output).  fuse_end[k] is the group's last op for the op k that starts a group. */
static void lt__plan_fuse(lt_plan *p) {
    int k, N = p->n;
    const char *env = getenv("LTRAIN_FUSE");
    for (k = 0; k < N; k++) p->fuse_end[k] = -1;
    if (env && strcmp(env, "0") == 0) return;
    for (k = 0; k < N;) {
        lt__node *nd = &p->nodes[k];
        int64_t C = nd->out->shape[nd->out->ndim - 1], R = C > 0 ? nd->out->n / C : 0;
        int e = k;
        if (R > 1 && lt__row_fusable(nd, R, C)) {
            while (e + 1 < N && lt__row_fusable(&p->nodes[e + 1], R, C)) {
                const lt__node *nx = &p->nodes[e + 1];
                int j, q, reads = 0;
                for (j = 0; j < 3; j++)
                    for (q = k; q <= e; q++) if (nx->in[j] && nx->in[j] == p->nodes[q].out) reads = 1;
                if (!reads) break;
                e++;
            }
        }
        if (e > k) {
            p->fuse_end[k] = e;
            p->n_groups++;
            p->n_fused += e - k + 1;
        }
        k = e + 1;
    }
}

/* t cut to rows r0 .. r0+rows-1 (a copy of the header; data points into t's) */
static void lt__rows_view(lt_tensor *v, const lt_tensor *t, int64_t R, int64_t r0, int64_t rows) {
    int64_t per = t->n / R;
    *v = *t;
    v->data = t->data + r0 * per;
    v->ndim = 2;
    v->shape[0] = rows;
    v->shape[1] = per;
    v->shape[2] = v->shape[3] = 1;
    v->n = rows * per;
}

/* Run ops k..e on tiles of rows (forward kernels, as they would run on all rows).  A tile is about
   128 KB per tensor (a chain's few tensors stay within L2), cut smaller where that would leave a
   thread fewer than two tiles.  Not smaller: every kernel call within a tile passes its own OpenMP
   construct (a parallel region that its `if` keeps to one thread), which costs about a
   microsecond; with 16 KB tiles that made the fused residual add and layernorm of char-small
   about 45% slower than the two ops unfused (bench/design.md). */
static void lt__run_fused(lt_plan *p, int k, int e) {
    const lt__node *first = &p->nodes[k];
    int64_t C = first->out->shape[first->out->ndim - 1], R = first->out->n / C, t0;
    int64_t tile = C >= 32768 ? 1 : 32768 / C, most = (R + 2 * lt_get_threads() - 1) / (2 * lt_get_threads());
    if (tile > most) tile = most > 0 ? most : 1;
    LT__OMP(parallel for schedule(static))
    for (t0 = 0; t0 < R; t0 += tile) {
        int64_t rows = t0 + tile <= R ? tile : R - t0;
        int q, j;
        for (q = k; q <= e; q++) {
            const lt__node *nd = &p->nodes[q];
            lt__node cut = *nd;
            lt_tensor out, in[3];
            lt__rows_view(&out, nd->out, R, t0, rows);
            cut.out = &out;
            for (j = 0; j < 3; j++) {
                if (!nd->in[j] || nd->in[j]->n != R * C) continue;   /* a broadcast row: whole */
                lt__rows_view(&in[j], nd->in[j], R, t0, rows);
                cut.in[j] = &in[j];
            }
            for (j = 0; j < 2; j++)
                if (nd->save[j]) {
                    int64_t per = nd->n_save[j] / R;
                    cut.save[j] = nd->save[j] + t0 * per;
                    cut.n_save[j] = rows * per;
                }
            nd->op->fwd(&cut);
        }
    }
}

/* ---- @@COMPILE.plan  the plan: schedule, lifetimes, placement -------------------------------- */
/* The planner's working state (lt__plan_build and its steps): the buffers, and which one holds
   each op's data, gradient and saved values, and each input's data. */
typedef struct {
    lt_plan *p;
    struct lt__capture *c;
    int N, nb;                   /* ops, buffers */
    lt__pbuf *b;                 /* per op data (none for a view of a parameter), grad, two saves; per input data */
    int *dbuf, *gbuf, *ibuf;     /* op k's data and gradient buffers, input k's data buffer (-1: none) */
    int (*sbuf)[2];              /* op k's saved values' buffers (-1: none) */
    char *inplace;               /* op k's gradient is written over its data (lt__plan_dx_over_x) */
    int *galias;                 /* op k's gradient is op galias[k]'s (lt__plan_dx_over_dy, _db_), or -1 */
    char *unmade;                /* op k's output is never written: its readers recompute it (lt__plan_unmade) */
    int norm_y_off;              /* 1: no norm writes its readers' 16-bit copies (lt__plan_norm16_y) */
    int64_t n_ids;               /* indices of all ops together */
    char *rc;                    /* op k runs again in backward (c->rc, or none) */
    int *tb, *tr, *top, t_end;   /* when op k's backward runs, when it runs again (-1); which op's backward runs at t */
    int *rbuf;                   /* op k run again: its data buffer then (-1: none) */
    int (*rsbuf)[2];             /* ... and its saved values' */
} lt__planner;

/* the timeline (top of @@COMPILE): forward of op k, backward of op k (lt__plan_timeline) */
#define LT__TF(k) ((k) + 1)
#define LT__TB(k) (s->tb[k])

/* Can the recording be planned?  The loss is a recorded output, no input was written after it
   was made, every op's input is a parameter, a recorded output or a recorded input.  Returns 0
   with p->note set otherwise. */
static int lt__plan_check(lt_plan *p, struct lt__capture *c, lt_tensor *loss) {
    int k, j;
    p->loss = lt__find_out(c, loss);
    if (p->loss < 0) { snprintf(p->note, sizeof p->note, "the loss is not the output of a recorded op"); return 0; }
    /* a replay re-reads inputs from where lt_tensor_from copied them; values written into an
       input after it was made (t->data[i] = ...) would not be replayed */
    for (k = 0; k < c->n_in; k++) {
        lt_tensor *t = c->in[k].t;
        int64_t i;
        int same = 1;
        if (c->in[k].src) same = memcmp(t->data, c->in[k].src, (size_t)t->n * sizeof(float)) == 0;
        else for (i = 0; i < t->n && same; i++) same = t->data[i] == 0.0f;
        if (!same) {
            snprintf(p->note, sizeof p->note, "input %d was changed after it was made (hint: give its values to "
                     "lt_tensor_from, which a replay reads again)", k);
            return 0;
        }
    }
    /* every input of every op must be a parameter, a recorded output or a recorded input */
    for (k = 0; k < c->n; k++)
        for (j = 0; j < 3; j++) {
            lt_tensor *t = c->nodes[k]->in[j];
            if (t && !t->is_param && lt__find_out(c, t) < 0 && lt__find_in(c, t) < 0) {
                snprintf(p->note, sizeof p->note, "input %d of op %d (%s%s%s) was made before lt_compile "
                         "(hint: make inputs inside the step function)", j, k, c->nodes[k]->op->name,
                         c->nodes[k]->scope ? " in " : "", c->nodes[k]->scope ? c->nodes[k]->scope : "");
                return 0;
            }
        }
    return 1;
}

/* The plan's arrays and the planner's, for N ops and c->n_in inputs (0: out of memory, set). */
static int lt__plan_arrays(lt__planner *s) {
    lt_plan *p = s->p;
    int k, N = s->N, n_in = s->c->n_in;
    p->nodes = (lt__node *)LT__MALLOC((size_t)N * sizeof(lt__node));
    p->outs = (lt_tensor *)LT__MALLOC((size_t)N * sizeof(lt_tensor));
    p->ins = (lt_tensor *)LT__MALLOC((size_t)(n_in + 1) * sizeof(lt_tensor));
    p->in_src = (const float **)LT__MALLOC((size_t)(n_in + 1) * sizeof(float *));
    p->runs_bwd = (int *)LT__MALLOC((size_t)N * sizeof(int));
    p->fuse_end = (int *)LT__MALLOC((size_t)N * sizeof(int));
    p->zero_at = (int **)LT__MALLOC((size_t)N * sizeof(int *));
    p->n_zero_at = (int *)LT__MALLOC((size_t)N * sizeof(int));
    if (p->zero_at) for (k = 0; k < N; k++) p->zero_at[k] = NULL;   /* (lt_plan_destroy frees them) */
    /* buffers: per op data (or -1 for a view / param alias), grad, two saves; per input data */
    s->b = (lt__pbuf *)LT__MALLOC((size_t)(7 * N + n_in + 1) * sizeof(lt__pbuf));   /* (+3 per op run again) */
    s->dbuf = (int *)LT__MALLOC((size_t)N * sizeof(int));
    s->gbuf = (int *)LT__MALLOC((size_t)N * sizeof(int));
    s->ibuf = (int *)LT__MALLOC((size_t)(n_in + 1) * sizeof(int));
    s->sbuf = (int(*)[2])LT__MALLOC((size_t)N * sizeof(int[2]));
    s->inplace = (char *)LT__MALLOC((size_t)N + 1);
    s->galias = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    s->unmade = (char *)LT__MALLOC((size_t)N + 1);
    s->rc = (char *)LT__MALLOC((size_t)N + 1);
    s->tb = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    s->tr = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    s->top = (int *)LT__MALLOC(((size_t)3 * N + 4) * sizeof(int));
    s->rbuf = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    s->rsbuf = (int(*)[2])LT__MALLOC(((size_t)N + 1) * sizeof(int[2]));
    p->ev = (int *)LT__MALLOC(((size_t)2 * N + 1) * sizeof(int));
    p->rc = (char *)LT__MALLOC((size_t)N + 1);
    p->rcp = (float *(*)[6])LT__MALLOC(((size_t)N + 1) * sizeof(float *[6]));
    p->op_rng = (lt_rng *)LT__MALLOC(((size_t)N + 1) * sizeof(lt_rng));
    if (!p->nodes || !p->outs || !p->ins || !p->in_src || !p->runs_bwd || !p->fuse_end || !p->zero_at || !p->n_zero_at ||
        !s->b || !s->dbuf || !s->gbuf || !s->ibuf || !s->sbuf || !s->inplace || !s->galias || !s->unmade || !s->rc || !s->tb ||
        !s->tr || !s->top || !s->rbuf || !s->rsbuf || !p->ev || !p->rc || !p->rcp || !p->op_rng) {
        lt_set_error(p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory planning %d ops", N);
        return 0;
    }
    for (k = 0; k < N; k++) s->rc[k] = s->c->rc ? s->c->rc[k] : 0;
    return 1;
}

/* Op q runs again (s->rc) at the next time t, after the ops run again whose values it reads. */
static void lt__plan_again(lt__planner *s, int q, int *t) {
    const lt__node *nd = s->c->nodes[q];
    int j, o;
    if (s->tr[q] >= 0) return;
    for (j = 0; j < 3; j++)
        if (nd->in[j] && (o = lt__find_out(s->c, nd->in[j])) >= 0 && s->rc[o]) lt__plan_again(s, o, t);
    s->tr[q] = *t;
    s->top[(*t)++] = -1;
    s->p->ev[s->p->n_ev++] = 2 * q + 1;
    s->p->n_rc++;
}

/* The backward phase's order (p->ev) and its times: after the seed at N+1, op k's backward for
   k = N-1 .. 0, one step of time each; an op to be run again (s->rc) runs just before the first
   backward kernel that reads what it makes (its values, its saved buffers), each at a time of its
   own (s->tr), after the ops run again that it reads.  An op run again that no backward kernel
   needs is not run.  With none, op k's backward is at 2N+1-k. */
static void lt__plan_timeline(lt__planner *s) {
    lt_plan *p = s->p;
    struct lt__capture *c = s->c;
    int k, j, o, N = s->N, t = N + 2;
    p->n_ev = p->n_rc = 0;
    for (k = 0; k < N; k++) s->tr[k] = -1;
    if (p->loss >= 0) s->rc[p->loss] = 0;
    for (k = N - 1; k >= 0; k--) {
        const lt__node *nd = c->nodes[k];
        if (c->has_grad[k]) {
            if (s->rc[k] && ((nd->op->reads & LT__OUT) || nd->save[0] || nd->save[1])) lt__plan_again(s, k, &t);
            /* a 16-bit product of gelu16's output reads gelu16's saved copy of its input (lt__opnd16_of) */
            if ((nd->op == LT__OP(linear16) || nd->op == LT__OP(conv1d16)) && LT__AFF_X_GELU16(nd) == 1.0 &&
                (o = lt__find_out(c, nd->in[0])) >= 0 && s->rc[o])
                lt__plan_again(s, o, &t);
            for (j = 0; j < 3 && (nd->op->reads & LT__IN); j++)
                if (nd->in[j] && (o = lt__find_out(c, nd->in[j])) >= 0 && s->rc[o]) lt__plan_again(s, o, &t);
        }
        s->tb[k] = t;
        s->top[t++] = k;
        p->ev[p->n_ev++] = 2 * k;
    }
    for (k = 0; k < N; k++) if (s->tr[k] < 0) s->rc[k] = 0;   /* not needed again: planned as any other op */
    s->t_end = t;
}

/* Copies of the records and tensors (inputs remapped to the copies), and a buffer for every
   input, op output (a view shares its input's), gradient and saved value, alive where it is
   written; gradients get their first write from their uses (lt__plan_lifetimes). */
static void lt__plan_records(lt__planner *s) {
    lt_plan *p = s->p;
    struct lt__capture *c = s->c;
    lt__pbuf *b = s->b;
    int k, j, N = s->N, nb = 0, *dbuf = s->dbuf, *gbuf = s->gbuf, *ibuf = s->ibuf, (*sbuf)[2] = s->sbuf;
    for (k = 0; k < c->n_in; k++) {
        p->ins[k] = *c->in[k].t;
        p->in_src[k] = c->in[k].src;
        b[nb].bytes = (size_t)p->ins[k].n * sizeof(float);
        b[nb].first = 0;
        b[nb].last = 0;
        ibuf[k] = nb++;
    }
    for (k = 0; k < N; k++) {
        lt__node *src = c->nodes[k], *nd = &p->nodes[k];
        *nd = *src;
        p->outs[k] = *src->out;
        p->outs[k].node = nd;
        p->outs[k].grad = NULL;
        nd->out = &p->outs[k];
        p->runs_bwd[k] = c->has_grad[k];
        s->n_ids += src->ids ? src->n_ids : 0;
        for (j = 0; j < 3; j++) {
            lt_tensor *t = src->in[j];
            int o, q;
            if (!t || t->is_param) continue;
            o = lt__find_out(c, t);
            if (o >= 0) nd->in[j] = &p->outs[o];
            else { q = lt__find_in(c, t); nd->in[j] = &p->ins[q]; }
        }
        /* data: a view (reshape) shares its input's buffer; a param's view has none */
        dbuf[k] = -1;
        if (src->op->flags & LT__VIEW) {
            lt_tensor *t = src->in[0];
            int o = lt__find_out(c, t), q = o < 0 ? lt__find_in(c, t) : -1;
            dbuf[k] = o >= 0 ? dbuf[o] : q >= 0 ? ibuf[q] : -1;
            if (dbuf[k] >= 0) { if (LT__TF(k) > b[dbuf[k]].last) b[dbuf[k]].last = LT__TF(k); }
            if (s->rc[k]) s->rbuf[k] = o >= 0 && s->rc[o] ? s->rbuf[o] : dbuf[k];   /* (a view again of the value again) */
        } else {
            b[nb].bytes = (size_t)p->outs[k].n * sizeof(float);
            b[nb].first = b[nb].last = LT__TF(k);
            dbuf[k] = nb++;
            if (s->rc[k]) {   /* made again: a second buffer, from then on */
                b[nb].bytes = b[nb - 1].bytes;
                b[nb].first = b[nb].last = s->tr[k];
                s->rbuf[k] = nb++;
            }
        }
        gbuf[k] = -1;
        if (p->runs_bwd[k]) {
            b[nb].bytes = (size_t)p->outs[k].n * sizeof(float);
            b[nb].first = INT_MAX;
            b[nb].last = LT__TB(k);
            gbuf[k] = nb++;
        }
        for (j = 0; j < 2; j++) {
            sbuf[k][j] = -1;
            if (!src->save[j]) continue;
            b[nb].bytes = (size_t)src->n_save[j] * sizeof(float);
            b[nb].first = LT__TF(k);
            b[nb].last = p->runs_bwd[k] && !s->rc[k] ? LT__TB(k) : LT__TF(k);
            sbuf[k][j] = nb++;
            if (s->rc[k]) {   /* saved again when the op runs again: backward reads that one */
                b[nb].bytes = b[nb - 1].bytes;
                b[nb].first = s->tr[k];
                b[nb].last = p->runs_bwd[k] ? LT__TB(k) : s->tr[k];
                s->rsbuf[k][j] = nb++;
            }
        }
    }
    s->nb = nb;
}

/* Lifetimes from the uses: a value lives until its last reader (a backward kernel reads what its
   row's LT__IN / LT__OUT say), a gradient from its first write.  A value made again in backward
   (s->rc) is read there from its second buffer, by its segment's ops run again and their backward;
   its first buffer serves the forward only.  An op run again reads values from outside its
   segment (the segment's input: the value kept) at that time too. */
#define LT__LIVE(q, t) do { if ((q) >= 0 && (t) > b[q].last) b[q].last = (t); } while (0)
/* the record that makes t (-1: an input, a parameter or none), and how many (record, input) pairs
   read op k's output */
static int lt__plan_maker(const lt_plan *p, const lt_tensor *t) {
    return t && t->node ? (int)(t->node - p->nodes) : -1;
}
static int lt__plan_readers(const lt_plan *p, int N, int k) {
    int m, j, n = 0;
    for (m = 0; m < N; m++)
        for (j = 0; j < 3; j++) n += p->nodes[m].in[j] == &p->outs[k];
    return n;
}
/* a 16-bit product of gelu16's output that reads gelu16's 16-bit copy of its input instead, in
   forward too (LT__AFF_X_GELU16, lt__opnd16_of) */
static int lt__recomputes_x(const lt__node *nd) {
    return (nd->op == LT__OP(linear16) || nd->op == LT__OP(conv1d16)) && LT__AFF_X_GELU16(nd) == 1.0;
}
static void lt__plan_lifetimes(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, j, N = s->N, *dbuf = s->dbuf, *gbuf = s->gbuf, *ibuf = s->ibuf;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        if ((nd->op->reads & LT__OUT) && p->runs_bwd[k]) LT__LIVE(s->rc[k] ? s->rbuf[k] : dbuf[k], LT__TB(k));
        if (lt__recomputes_x(nd) && nd->in[0]->node) LT__LIVE(s->sbuf[nd->in[0]->node - p->nodes][0], LT__TF(k));
        for (j = 0; j < 3; j++) {
            lt_tensor *t = nd->in[j];
            int src_op, db, rb;
            if (!t || t->is_param) continue;
            src_op = lt__plan_maker(p, t);
            db = src_op >= 0 ? dbuf[src_op] : ibuf[t - p->ins];
            rb = src_op >= 0 && s->rc[src_op] ? s->rbuf[src_op] : db;   /* what backward finds in t */
            LT__LIVE(db, LT__TF(k));
            if (s->rc[k]) LT__LIVE(rb, s->tr[k]);
            if (p->runs_bwd[k] && (nd->op->reads & LT__IN)) LT__LIVE(rb, LT__TB(k));
            /* the input's gradient is first written by the last consumer's backward (it runs first) */
            if (src_op >= 0 && gbuf[src_op] >= 0 && p->runs_bwd[k] && t->requires_grad &&
                LT__TB(k) < b[gbuf[src_op]].first)
                b[gbuf[src_op]].first = LT__TB(k);
        }
    }
}

/* in place, as eager's lt__add_over: an add (LT__Y_OVER_X) of two same-shape tensors writes its
   sum over an input (the second first: the residual branch) whose buffer nobody reads after it.
   y[i] = a[i] + b[i] allows y == b, also row by row in a fused group.  The writes land on the
   lines just read, where a fresh buffer would be cold (bench/design.md).  Views of the add share
   the merged buffer too. */
static void lt__plan_y_over_x(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, j, N = s->N, *dbuf = s->dbuf;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int d = dbuf[k], m;
        if (!(nd->op->flags & LT__Y_OVER_X) || d < 0 || !nd->in[0] || !nd->in[1] || nd->in[0] == nd->in[1] ||
            nd->in[0]->n != nd->out->n || nd->in[1]->n != nd->out->n)
            continue;
        for (j = 1; j >= 0; j--) {
            lt_tensor *t = nd->in[j];
            int e = t->node ? dbuf[t->node - p->nodes] : -1;
            if (e < 0 || e == d || b[e].last != LT__TF(k) || b[e].bytes != b[d].bytes) continue;
            if (b[d].last > b[e].last) b[e].last = b[d].last;
            for (m = k; m < N; m++)
                if (dbuf[m] == d) dbuf[m] = e;
            p->naive_bytes += b[d].bytes;   /* ("all buffers" still counts it) */
            b[d].bytes = 0;
            b[d].first = b[d].last = 0;
            break;
        }
    }
}

/* Op k's output gets no buffer (its data NULL): its readers take its values from elsewhere */
static void lt__plan_unmake(lt__planner *s, int k) {
    s->p->naive_bytes += s->b[s->dbuf[k]].bytes;   /* (counted in "all buffers": eager mode writes it) */
    s->b[s->dbuf[k]].bytes = 0;
    s->unmade[k] = 1;
}

/* Values nobody needs written: gelu16's output y when every op reading it is a 16-bit product
   that recomputes it from gelu16's 16-bit copy of its input (LT__AFF_X_GELU16: its backward
   does so already, and its forward then does too).  y gets no buffer (its data is NULL) and
   gelu16's forward writes only the copy: the MLP's widest activation is neither written nor
   read back, in float32, by the forward.  Not for an op run again (its second home) nor the loss. */
static void lt__plan_unmade(lt__planner *s) {
    lt_plan *p = s->p;
    int k, m, j, N = s->N;
    for (k = 0; k < N; k++) {
        int ok = p->nodes[k].op == LT__OP(gelu16) && s->sbuf[k][0] >= 0 && s->dbuf[k] >= 0 && !s->rc[k] &&
                 k != p->loss;
        for (m = k + 1; m < N && ok; m++)
            for (j = 0; j < 3; j++)
                if (p->nodes[m].in[j] == &p->outs[k] && (j != 0 || !lt__recomputes_x(&p->nodes[m]))) ok = 0;
        if (ok) lt__plan_unmake(s, k);
    }
}

/* The 16-bit copy a product keeps of its input, written by the norm that makes that input: a
   layernorm16 or rmsnorm16 (not run again) whose output y every op reading it reads as x of a
   16-bit product of its precision that keeps a 16-bit copy of x for backward (linear16, conv1d16,
   linear_ce16: the copy the product's forward would make from y).  The norm writes round16(y)
   after x̂ in its save[1] (LT__LN_Y16), the products read it there (LT__X_NORM16) and keep no
   copy of their own, and y gets no buffer: one float32 write of y and one pass over it fewer
   (Llama's q, k, v projections share one copy where each kept its own).  The copy lives with
   x̂, to the norm's backward, which runs after the products'. */
static int lt__norm16_reader(const lt__planner *s, int m, double prec) {
    const lt__node *nd = &s->p->nodes[m];
    double q = nd->op == LT__OP(linear_ce16) ? LT__PREC2(nd) : LT__PREC(nd);
    return (nd->op == LT__OP(linear16) || nd->op == LT__OP(conv1d16) || nd->op == LT__OP(linear_ce16)) &&
           !lt__recomputes_x(nd) && q == prec && s->sbuf[m][0] >= 0 && !s->rc[m];
}
static void lt__plan_norm16_y(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, m, j, N = s->N;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int ok = !s->norm_y_off && (nd->op == LT__OP(layernorm16) || nd->op == LT__OP(rmsnorm16)) && s->sbuf[k][1] >= 0 &&
                 s->dbuf[k] >= 0 && p->runs_bwd[k] && !s->rc[k] && k != p->loss, readers = 0;
        for (m = k + 1; m < N && ok; m++)
            for (j = 0; j < 3; j++)
                if (p->nodes[m].in[j] == &p->outs[k]) {
                    readers++;
                    if (j != 0 || !lt__norm16_reader(s, m, LT__PREC2(nd))) ok = 0;
                }
        if (!ok || !readers) continue;
        LT__LN_Y16(nd) = 1;
        b[s->sbuf[k][1]].bytes += (size_t)((p->outs[k].n + 1) / 2) * sizeof(float);
        for (m = k + 1; m < N; m++) {
            lt__node *r = &p->nodes[m];
            if (r->in[0] != &p->outs[k]) continue;
            LT__X_NORM16(r) = 1;
            LT__LIVE(s->sbuf[k][1], LT__TB(m));
            b[s->sbuf[m][0]].bytes = 0;   /* (its bytes are counted in the norm's now) */
            s->sbuf[m][0] = -1;
            r->save[0] = NULL;
        }
        lt__plan_unmake(s, k);
    }
}

/* A product's output written at 16 bits only: a 16-bit product (linear16, conv1d16) whose output
   one op alone reads and keeps as 16-bit values, attention16 (q, k, v, in its save[1]) or gelu16
   whose own output is unmade (its save[0]), writes it there itself, each finished block narrowed
   in cache (LT__AFF_Y16_TO; LT__ATT_QKV16, LT__G16_XH_MADE), and the float32 output gets no
   buffer: no float32 write, and no pass of the reader's over it (gelu16's forward is then
   nothing).  The copy then lives from the product's forward on.  Not for ops run again, nor
   where the GEMM's z mode would be slower than the float32 product and the pass
   (lt__gemm_z_cheap). */
static void lt__plan_y16_homes(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, m, j, N = s->N;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int a = -1, readers = 0, home;
        if ((nd->op != LT__OP(linear16) && nd->op != LT__OP(conv1d16)) || s->dbuf[k] < 0 || s->rc[k] || k == p->loss)
            continue;
        for (m = k + 1; m < N; m++)
            for (j = 0; j < 3; j++)
                if (p->nodes[m].in[j] == &p->outs[k]) {
                    readers++;
                    if (j == 0) a = m;
                }
        if (readers != 1 || a < 0 || s->rc[a] || LT__PREC(&p->nodes[a]) != LT__PREC(nd)) continue;
        if (p->nodes[a].op == LT__OP(attention16) && s->sbuf[a][1] >= 0) home = s->sbuf[a][1];
        else if (p->nodes[a].op == LT__OP(gelu16) && s->unmade[a] && s->sbuf[a][0] >= 0) home = s->sbuf[a][0];
        else continue;
        if (!lt__gemm_z_cheap(lt__gemm_pick(), (int)lt__prec16(nd), LT__AFF_O(nd), LT__AFF_I(nd), LT__Z_COLS)) continue;
        if (p->nodes[a].op == LT__OP(attention16)) LT__ATT_QKV16(&p->nodes[a]) = 1;
        else LT__G16_XH_MADE(&p->nodes[a]) = 1;
        LT__AFF_Y16_TO(nd) = a - k;
        b[home].first = LT__TF(k);
        lt__plan_unmake(s, k);
    }
}

/* Gradients written at 16 bits: a 16-bit product's output x read by gelu16 alone gets its gradient
   from gelu16's backward only, and the product's backward reads it only rounded to 16 bits (its
   copy of dy).  Then gelu16 writes dx rounded (LT__G16_DX16: each row over the first half of its
   float32 bytes) and the product reads that as its copy (LT__AFF_DY16): one pass over dy fewer. */
static void lt__plan_dx16(lt__planner *s) {
    lt_plan *p = s->p;
    int k, o, N = s->N;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        o = lt__plan_maker(p, nd->in[0]);
        if (nd->op != LT__OP(gelu16) || !p->runs_bwd[k] || o < 0 || o == p->loss || s->gbuf[o] < 0) continue;
        if (lt__dx16_pair(nd, lt__plan_readers(p, N, o))) lt__dx16_mark(nd);
    }
}

/* the activations the backward pass must keep: every buffer written by the forward (or copied
   in) and still read by a backward kernel, i.e. alive across the seed at N+1 (gradient buffers
   are born at N+1 or later), and the index arrays (ids, targets) of ops whose backward runs.
   Computed before the loss's own value is kept alive for the caller (4 bytes, not counted).
   These are what these kernels keep, not a minimum that recomputation could reach: e.g. the
   float32 head keeps its logits (B*T*V floats), which the cross-entropy backward reads.
   Then the loss's lifetimes (seeded, read after the replay) and those of gradients no kernel writes. */
static void lt__plan_saved(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, N = s->N, *dbuf = s->dbuf, *gbuf = s->gbuf;
    for (k = 0; k < s->nb; k++)
        if (b[k].first <= N && b[k].last > N + 1) p->saved_bytes += b[k].bytes;
    for (k = 0; k < N; k++)
        if (p->runs_bwd[k] && s->c->nodes[k]->ids) p->saved_bytes += (size_t)s->c->nodes[k]->n_ids * sizeof(int32_t);
    if (gbuf[p->loss] >= 0) b[gbuf[p->loss]].first = N + 1;   /* the seed */
    if (dbuf[p->loss] >= 0) b[dbuf[p->loss]].last = s->t_end; /* read after the replay */
    for (k = 0; k < N; k++)
        if (gbuf[k] >= 0 && b[gbuf[k]].first == INT_MAX) b[gbuf[k]].first = b[gbuf[k]].last; /* never written */
}

/* in place: a cross-entropy's backward (LT__DX_OVER_X) may write d(logits) over the logits (rows
   are independent) when it is the first to write that gradient and nothing reads the logits
   after it.  The gradient then needs no buffer (R·V floats less at the peak: the largest
   buffer of a GPT step with a big vocabulary) and no zeroing: the kernel writes 0 + g·p,
   the bits of += into a zeroed buffer. */
static void lt__plan_dx_over_x(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, N = s->N, *dbuf = s->dbuf, *gbuf = s->gbuf;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int o = lt__plan_maker(p, nd->in[0]);
        if (!(nd->op->flags & LT__DX_OVER_X) || !p->runs_bwd[k] || o < 0 || gbuf[o] < 0 || dbuf[o] < 0 ||
            (p->nodes[o].op->flags & LT__VIEW) || s->rc[o] || s->rc[k] || b[gbuf[o]].first != LT__TB(k) ||
            b[dbuf[o]].last != LT__TB(k))
            continue;
        b[dbuf[o]].last = b[gbuf[o]].last;
        p->naive_bytes += b[gbuf[o]].bytes;   /* (still counted in "all buffers": eager mode has it) */
        b[gbuf[o]].bytes = 0;
        s->inplace[o] = 1;
    }
}

/* in place, as eager's lt__grad_adopt: add (for its first input), gelu and gelu16 (LT__DX_OVER_DY)
   write their input's gradient over their output's (their kernels allow gx == gy) when they are
   the first to write it and nothing reads the output's gradient after them.  One buffer fewer,
   and the writes land on the lines just read, as in eager mode (bench/design.md).  galias[o] = k:
   o's gradient is k's (lt__plan_homes). */
static void lt__plan_dx_over_dy(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, N = s->N, *gbuf = s->gbuf;
    char *inplace = s->inplace;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int o = lt__plan_maker(p, nd->in[0]);
        if (!(nd->op->flags & LT__DX_OVER_DY) || !p->runs_bwd[k] ||
            o < 0 || k == p->loss || gbuf[o] < 0 || gbuf[k] < 0 || inplace[o] || inplace[k] ||
            (p->nodes[o].op->flags & LT__VIEW) || nd->in[0]->n != nd->out->n || nd->in[1] == nd->in[0] ||
            p->outs[k].retain_grad || b[gbuf[o]].first != LT__TB(k) || b[gbuf[k]].last != LT__TB(k))
            continue;
        if (b[gbuf[o]].last > b[gbuf[k]].last) b[gbuf[k]].last = b[gbuf[o]].last;
        p->naive_bytes += b[gbuf[o]].bytes;   /* (counted in "all buffers": as the logits above) */
        b[gbuf[o]].bytes = 0;
        s->galias[o] = k;
    }
}

/* And an add's second input, the branch of a residual add x + f(x): its gradient is dy as well,
   so where the first input's is written over dy already (lt__plan_dx_over_dy) the second's may be
   that buffer too, and the add's backward copies nothing.  Only where the add alone reads the
   branch (the add is the only writer of its gradient) and no backward writes into the shared
   buffer from the add's backward to the branch maker's, which reads it last: the first input's
   other readers add into it, and a maker that writes its own dx over its dy would (galias chains
   followed to their ends: the add's own gradient may be the next residual add's already). */
static int lt__galias_end(const lt__planner *s, int q, int ib, int k) {
    for (;;) {
        if (q == ib) q = k;   /* (as it will be) */
        if (s->galias[q] < 0) return q;
        q = s->galias[q];
    }
}
static void lt__plan_db_over_dy(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, m, j, N = s->N, *gbuf = s->gbuf;
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        int ia = lt__plan_maker(p, nd->in[0]), ib = lt__plan_maker(p, nd->in[1]), ok, last, e;
        if (nd->op != LT__OP(add) || ia < 0 || ib < 0 || s->galias[ia] != k || s->galias[ib] >= 0 || gbuf[ib] < 0 ||
            s->inplace[ib] || s->rc[ib] || s->rc[k] || ib == p->loss || (p->nodes[ib].op->flags & LT__VIEW) ||
            nd->in[1]->n != nd->out->n || p->outs[ib].retain_grad || b[gbuf[ib]].first != LT__TB(k))
            continue;
        last = b[gbuf[ib]].last;
        e = lt__galias_end(s, k, ib, k);   /* the op whose buffer it is (k's own, or further on) */
        ok = lt__plan_readers(p, N, ib) == 1;
        for (m = 0; m < N && ok; m++) {   /* the backward kernels between: what do they write into? */
            if (m == k || !p->runs_bwd[m] || LT__TB(m) <= LT__TB(k) || LT__TB(m) > last) continue;
            for (j = 0; j < 3 && ok; j++) {
                lt_tensor *t = p->nodes[m].in[j];
                int q = lt__plan_maker(p, t);
                if (q >= 0 && t->requires_grad && lt__galias_end(s, q, ib, k) == e) ok = 0;
            }
        }
        if (!ok) continue;
        if (last > b[gbuf[e]].last) b[gbuf[e]].last = last;
        p->naive_bytes += b[gbuf[ib]].bytes;   /* (counted in "all buffers": eager mode has it) */
        b[gbuf[ib]].bytes = 0;
        s->galias[ib] = k;
    }
}

/* zero each gradient buffer just before its first write: p->zero_at (0: out of memory, set) */
static int lt__plan_zero_at(lt__planner *s) {
    lt_plan *p = s->p;
    int k, N = s->N;
    for (k = 0; k < N; k++) {
        int at, *z;
        if (s->gbuf[k] < 0 || k == p->loss || s->inplace[k]) continue;
        at = s->b[s->gbuf[k]].first;    /* the op whose backward writes it first */
        if (at <= N + 1 || at >= s->t_end || (at = s->top[at]) < 0) continue;
        z = (int *)LT__REALLOC(p->zero_at[at], (size_t)(p->n_zero_at[at] + 1) * sizeof(int));
        if (!z) return lt_set_error(p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory"), 0;
        z[p->n_zero_at[at]++] = k;
        p->zero_at[at] = z;
    }
    return 1;
}

/* Place the buffers in one block (lt__place), then point every tensor, saved buffer and index
   array at its home (0: out of memory, set). */
static int lt__plan_homes(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, j, N = s->N, nb = s->nb, *order, ok = 0;
    size_t *s1, *s2;
    order = (int *)LT__MALLOC((size_t)nb * sizeof(int));
    s1 = (size_t *)LT__MALLOC((size_t)(nb + 1) * sizeof(size_t));
    s2 = (size_t *)LT__MALLOC((size_t)(nb + 1) * sizeof(size_t));
    p->ids = (int32_t *)LT__MALLOC((size_t)(s->n_ids + 1) * sizeof(int32_t));
    if (!order || !s1 || !s2 || !p->ids) { lt_set_error(p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); goto done; }
    for (k = 0; k < nb; k++) p->naive_bytes += b[k].bytes;
    p->mem_bytes = lt__place(b, nb, order, s1, s2);
    p->mem = (unsigned char *)LT__MALLOC(p->mem_bytes + LT__ALIGN);
    if (!p->mem) {
        lt_set_error(p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory for the planned %zu bytes", p->mem_bytes);
        goto done;
    }
    lt__hugepages(p->mem, p->mem_bytes + LT__ALIGN);
    {
        unsigned char *base = p->mem + (LT__ALIGN - ((uintptr_t)p->mem % LT__ALIGN)) % LT__ALIGN;
        int32_t *ids = p->ids;
        for (k = 0; k < s->c->n_in; k++) p->ins[k].data = (float *)(base + b[s->ibuf[k]].off);
        for (k = 0; k < N; k++) {
            lt__node *nd = &p->nodes[k];
            if (s->unmade[k]) p->outs[k].data = NULL;
            else if (s->dbuf[k] >= 0) p->outs[k].data = (float *)(base + b[s->dbuf[k]].off);
            else p->outs[k].data = nd->in[0]->data;   /* a view of a parameter */
            if (s->gbuf[k] >= 0) p->outs[k].grad = s->inplace[k] ? p->outs[k].data : (float *)(base + b[s->gbuf[k]].off);
            for (j = 0; j < 2; j++)
                if (s->sbuf[k][j] >= 0) nd->save[j] = (float *)(base + b[s->sbuf[k][j]].off);
            for (j = 0; j < 6; j++) p->rcp[k][j] = NULL;
            p->rc[k] = s->rc[k];
            if (s->rc[k] && !(nd->op->flags & LT__VIEW)) {   /* (a view's kernel points it itself) */
                p->rcp[k][0] = p->outs[k].data;
                p->rcp[k][3] = (float *)(base + b[s->rbuf[k]].off);
                for (j = 0; j < 2; j++) {
                    p->rcp[k][1 + j] = nd->save[j];
                    if (s->rsbuf[k][j] >= 0) p->rcp[k][4 + j] = (float *)(base + b[s->rsbuf[k][j]].off);
                }
            }
            if (nd->ids) {
                memcpy(ids, nd->ids, (size_t)nd->n_ids * sizeof(int32_t));
                nd->ids = ids;
                ids += nd->n_ids;
            }
        }
        for (k = N - 1; k >= 0; k--)   /* (galias[k] > k: resolved first, chains included) */
            if (s->galias[k] >= 0) p->outs[k].grad = p->outs[s->galias[k]].grad;
    }
    ok = 1;
done:
    LT__FREE(order); LT__FREE(s1); LT__FREE(s2);
    return ok;
}
#undef LT__TF
#undef LT__TB
#undef LT__LIVE

/* A fused group (lt__plan_fuse) runs its ops tile by tile, the tiles spread over the threads, so
   one op's writes meet another's reads in any order: every buffer an op of the group reads or
   writes in forward lives across the whole group. */
static void lt__plan_groups_live(lt__planner *s) {
    lt_plan *p = s->p;
    lt__pbuf *b = s->b;
    int k, q, j, e;
    for (k = 0; k < s->N; k++) {
        if ((e = p->fuse_end[k]) <= k) continue;
        for (q = k; q <= e; q++) {
            const lt__node *nd = &p->nodes[q];
            int u[6];
            u[0] = s->dbuf[q]; u[1] = s->sbuf[q][0]; u[2] = s->sbuf[q][1];
            for (j = 0; j < 3; j++) {
                const lt_tensor *t = nd->in[j];
                u[3 + j] = !t || t->is_param ? -1 : t->node ? s->dbuf[t->node - p->nodes] : s->ibuf[t - p->ins];
            }
            for (j = 0; j < 6; j++) {
                if (u[j] < 0 || !b[u[j]].bytes) continue;
                if (b[u[j]].first > k + 1) b[u[j]].first = k + 1;   /* (forward times: op q at q + 1) */
                if (b[u[j]].last < e + 1) b[u[j]].last = e + 1;
            }
        }
        k = e;
    }
}

/* One planning of the recording, with the ops s->rc marks run again: the order of the backward
   phase, the buffers and their lifetimes, the write-overs the op table allows. */
static void lt__plan_steps(lt__planner *s) {
    int k;
    for (k = 0; k < s->N; k++) {
        s->p->n_zero_at[k] = 0; s->inplace[k] = 0; s->galias[k] = -1; s->unmade[k] = 0;
        s->rbuf[k] = s->rsbuf[k][0] = s->rsbuf[k][1] = -1;
    }
    s->p->naive_bytes = s->p->saved_bytes = 0;
    s->n_ids = 0;
    lt__plan_timeline(s);
    lt__plan_records(s);
    lt__plan_lifetimes(s);
    lt__plan_y_over_x(s);
    lt__plan_unmade(s);
    lt__plan_norm16_y(s);
    lt__plan_y16_homes(s);
    lt__plan_dx16(s);
    lt__plan_saved(s);
    lt__plan_dx_over_x(s);
    lt__plan_dx_over_dy(s);
    lt__plan_db_over_dy(s);
    s->p->n_groups = s->p->n_fused = 0;
    lt__plan_fuse(s->p);
    lt__plan_groups_live(s);
}
/* ... and the size of its block as lt__plan_homes will place it (0: out of memory, set) */
static size_t lt__plan_size(lt__planner *s) {
    int *order = (int *)LT__MALLOC((size_t)(s->nb + 1) * sizeof(int));
    size_t *s1 = (size_t *)LT__MALLOC((size_t)(s->nb + 1) * sizeof(size_t));
    size_t *s2 = (size_t *)LT__MALLOC((size_t)(s->nb + 1) * sizeof(size_t)), total = 0;
    if (!order || !s1 || !s2) lt_set_error(s->p->ctx, LT_ERR_NOMEM, "lt_compile: out of memory");
    else total = lt__place(s->b, s->nb, order, s1, s2);
    LT__FREE(order); LT__FREE(s1); LT__FREE(s2);
    return total;
}

/* The forward FLOPs of a record (the memory budget's cost of running it again): products
   2·(output elements)·(inner size); attention 4·(output elements)·T; layernorm, gelu and softmax
   a handful per element; the rest one per element. */
static double lt__op_flops(const lt__node *nd) {
    const lt__opdef *op = nd->op;
    const lt_tensor *x = nd->in[0], *y = nd->out;
    double e = (double)y->n;
    if (op == LT__OP(matmul) || op == LT__OP(linear) || op == LT__OP(conv1d) || op == LT__OP(matmul16) ||
        op == LT__OP(linear16) || op == LT__OP(conv1d16))
        return 2.0 * e * (double)x->shape[x->ndim - 1];
    if (op == LT__OP(attention) || op == LT__OP(attention16)) return 4.0 * e * (double)x->shape[x->ndim - 2];
    if (op == LT__OP(linear_ce16) || op == LT__OP(linear_ce) || op == LT__OP(linear_ce_exp))
        return 2.0 * (double)x->n * (double)nd->in[1]->shape[0];
    if (op == LT__OP(layernorm) || op == LT__OP(layernorm16)) return 8.0 * e;
    if (op == LT__OP(gelu) || op == LT__OP(gelu_erf) || op == LT__OP(gelu16)) return 20.0 * e;
    if (op == LT__OP(softmax) || op == LT__OP(log_softmax) || op == LT__OP(cross_entropy)) return 10.0 * (double)x->n;
    return e;
}

/* The bytes op k's values and saved buffers keep from the forward for the backward (alive across
   the seed at N+1) in the plan as it stands */
static size_t lt__plan_kept(const lt__planner *s, int k) {
    const lt__pbuf *b = s->b;
    size_t n = 0;
    int j, N = s->N, q[3];
    q[0] = s->dbuf[k]; q[1] = s->sbuf[k][0]; q[2] = s->sbuf[k][1];
    for (j = 0; j < 3; j++)
        if (q[j] >= 0 && b[q[j]].first <= N && b[q[j]].last > N + 1) n += b[q[j]].bytes;
    return n;
}

/* Under a memory budget (lt_set_memory_budget): which ops to run again in backward.  A candidate
   is an op that keeps values for the backward; candidates are tried in order of FLOPs per byte
   kept, cheapest first (pointwise ops and norms before products), each planned whole and kept
   only if the block shrinks (running an op again can keep its inputs longer: a residual add's
   recomputation needs the whole chain of adds before it), until the block fits; if it does not,
   the rest are added one by one and the smallest plan on the way is kept (ops that pay only
   together).  When every
   candidate was tried and it does not: an error naming the least block found.  (One planning
   per candidate tried: compiling under a tight budget takes longer.) */
static int lt__plan_budget(lt__planner *s) {
    lt_plan *p = s->p;
    lt_ctx *ctx = p->ctx;
    int k, j, n = 0, N = s->N, *cand;
    double *cost;
    char *best;
    size_t base = lt__plan_size(s), want, least;
    want = ctx->budget ? ctx->budget : (size_t)(ctx->budget_frac * (double)base);
    p->budget = want;
    cand = (int *)LT__MALLOC(((size_t)N + 1) * sizeof(int));
    cost = (double *)LT__MALLOC(((size_t)N + 1) * sizeof(double));
    best = (char *)LT__MALLOC((size_t)N + 1);
    if (!cand || !cost || !best) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); goto done; }
    if (!base || base <= want) goto done;
    /* the candidates by what each keeps with its own 16-bit copies: a norm writing a product's
       (lt__plan_norm16_y) would hide the product, which pays only when run again with the norm */
    s->norm_y_off = 1;
    lt__plan_steps(s);
    s->norm_y_off = 0;
    for (k = 0; k < N; k++) {
        const lt__node *nd = s->c->nodes[k];
        size_t kept = lt__plan_kept(s, k);
        if (s->rc[k] || k == p->loss || (nd->op->flags & LT__VIEW) || !kept) continue;
        cost[k] = lt__op_flops(nd) / (double)kept;
        for (j = n; j > 0 && cost[cand[j - 1]] > cost[k]; j--) cand[j] = cand[j - 1];   /* (stable) */
        cand[j] = k;
        n++;
    }
    least = base;
    for (j = 0; j < n && least > want && !lt_failed(ctx); j++) {   /* one at a time: kept where it helps */
        size_t size;
        s->rc[cand[j]] = 1;
        lt__plan_steps(s);
        size = lt__plan_size(s);
        if (size < least) least = size;
        else s->rc[cand[j]] = 0;
    }
    if (least > want && best) {   /* again, the rest together: ops that help only with others (a 16-bit
                                     product and the op whose output it reads) */
        memcpy(best, s->rc, (size_t)N);
        for (j = 0; j < n && least > want && !lt_failed(ctx); j++) {
            size_t size;
            if (s->rc[cand[j]]) continue;
            s->rc[cand[j]] = 1;
            lt__plan_steps(s);
            size = lt__plan_size(s);
            if (size < least) { least = size; memcpy(best, s->rc, (size_t)N); }
        }
        memcpy(s->rc, best, (size_t)N);
    }
    lt__plan_steps(s);
    if (!lt_failed(ctx) && least > want)
        lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the memory budget of %.2f MB is below the least this step can "
                     "be planned in: %.2f MB (with %d ops run again in backward; %.2f MB with none)",
                     (double)want / 1048576.0, (double)least / 1048576.0, p->n_rc, (double)base / 1048576.0);
done:
    LT__FREE(cand); LT__FREE(cost); LT__FREE(best);
    return !lt_failed(ctx);
}

/* Build the plan from a recording and its gradient marks (lt__mark_grads), step by step: the
   buffers and their lifetimes, the write-overs the op table allows (lt__plan_steps), the ops run
   again under a memory budget, the zeroing, the placement, the fused groups.  Returns 0 with
   p->note set when the recording cannot be planned (or with the error set). */
static int lt__plan_build(lt_plan *p, struct lt__capture *c, lt_tensor *loss) {
    lt__planner s;
    int k, j, ok = 0;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.c = c;
    s.N = p->n = c->n;
    p->n_in = c->n_in;
    if (!lt__plan_check(p, c, loss)) return 0;
    if (lt__plan_arrays(&s)) {
        lt__plan_steps(&s);
        if ((!p->ctx->budget && !(p->ctx->budget_frac > 0)) || lt__plan_budget(&s)) {
            for (k = 0; k < s.N; k++)   /* what runs again: bytes, FLOPs */
                if (s.rc[k] && !(c->nodes[k]->op->flags & LT__VIEW)) {
                    p->rc_bytes += s.b[s.rbuf[k]].bytes;
                    for (j = 0; j < 2; j++) if (s.rsbuf[k][j] >= 0) p->rc_bytes += s.b[s.rsbuf[k][j]].bytes;
                    p->rc_flops += lt__op_flops(c->nodes[k]);
                }
            if (lt__plan_zero_at(&s) && lt__plan_homes(&s)) ok = 1;
        }
    }
    LT__FREE(s.b); LT__FREE(s.dbuf); LT__FREE(s.gbuf); LT__FREE(s.ibuf); LT__FREE(s.sbuf);
    LT__FREE(s.inplace); LT__FREE(s.galias); LT__FREE(s.unmade);
    LT__FREE(s.rc); LT__FREE(s.tb); LT__FREE(s.tr); LT__FREE(s.top); LT__FREE(s.rbuf); LT__FREE(s.rsbuf);
    return ok;
}

/* Is every value of t finite?  (validation before compiling) */
static int lt__all_finite(const float *x, int64_t n) {
    int64_t i;
    for (i = 0; i < n; i++) if (!isfinite(x[i])) return 0;
    return 1;
}

/* Which recorded outputs receive a gradient, found from the graph alone, as lt_backward would:
   the loss does, and so does every input that requires a gradient of an op whose output does
   (its backward kernel adds into that input's gradient).  Walk the recording backwards. */
static int lt__mark_grads(lt_ctx *ctx, struct lt__capture *c, const lt_tensor *loss) {
    int k, j, o;
    c->has_grad = (char *)LT__MALLOC((size_t)c->n + 1);
    if (!c->has_grad) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"), 0;
    memset(c->has_grad, 0, (size_t)c->n + 1);
    o = lt__find_out(c, loss);
    if (o < 0 || !loss->requires_grad) return 1;   /* lt__plan_build reports it */
    c->has_grad[o] = 1;
    for (k = c->n - 1; k >= 0; k--) {
        if (!c->has_grad[k]) continue;
        for (j = 0; j < 3; j++) {
            lt_tensor *t = c->nodes[k]->in[j];
            if (!t || t->is_param || !t->requires_grad) continue;
            o = lt__find_out(c, t);
            if (o >= 0) c->has_grad[o] = 1;
        }
    }
    return 1;
}

/* Which recorded op ran inside which recompute segment (c->seg), and which run again in backward
   (c->rc): all of a segment's ops but the one that made its output (lt_recompute_end).  The
   segments noted their ops in the order they ran, which is the recording's.  0: a segment left
   open, a loss dropped, out of memory (the error set). */
static int lt__capture_segs(lt_ctx *ctx, struct lt__capture *c, const lt_tensor *loss) {
    int s, i, k = 0;
    if (ctx->seg_open)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_compile: the step function left a recompute segment open "
                            "(hint: every lt_recompute_begin needs its lt_recompute_end)"), 0;
    if (!loss->data)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_compile: the loss is a value that lt_recompute_end dropped "
                            "(hint: compute the loss outside the segment, or make it the segment's output)"), 0;
    if (!ctx->n_segs || !c->n) return 1;
    c->seg = (int *)LT__MALLOC((size_t)c->n * sizeof(int));
    c->rc = (char *)LT__MALLOC((size_t)c->n);
    if (!c->seg || !c->rc) return lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"), 0;
    for (k = 0; k < c->n; k++) { c->seg[k] = -1; c->rc[k] = 0; }
    k = 0;
    for (s = 0; s < ctx->n_segs; s++) {
        const lt__seg *sg = &ctx->segs[s];
        for (i = sg->first; i < sg->first + sg->n; i++) {
            while (k < c->n && c->nodes[k] != ctx->seg_nodes[i]) k++;
            if (k == c->n) return 1;
            c->seg[k] = s;
            c->rc[k] = ctx->seg_nodes[i]->out != sg->out;
        }
    }
    return 1;
}

/* ---- @@COMPILE.replay  replay ---------------------------------------------------------------- */
/* One replay: the inputs copied in again, every forward kernel, the seed, every backward kernel
   (each gradient buffer marked unset just before its first write).  `check`: lt_compile's validation
   replay, which stops at the first op whose output is not finite and names it. */
/* One op's CPU kernel, forward or backward, timed when prof (lt_set_profiling) */
static void lt__plan_kernel(lt_ctx *ctx, lt__node *nd, int bwd, int prof) {
    double t0 = prof ? lt__now() : 0.0;
    (bwd ? nd->op->bwd : nd->op->fwd)(nd);
    if (prof) lt__profile_add(ctx, nd, bwd, lt__now() - t0);
}
static lt_status lt__plan_replay(lt_plan *p, float seed, float *loss_out, int check) {
    lt_ctx *ctx = p->ctx;
    int i, k, j, N = p->n, prof = ctx->profiling && !check;   /* (lt_set_profiling: lt_compile's check uncounted) */
    for (k = 0; k < p->n_in; k++) {
        lt_tensor *t = &p->ins[k];
        if (p->in_src[k]) memcpy(t->data, p->in_src[k], (size_t)t->n * sizeof(float));
        else memset(t->data, 0, (size_t)t->n * sizeof(float));
    }
    for (k = 0; k < N && p->n_rc; k++)   /* ops run again in backward: their forward homes */
        if (p->rcp[k][0]) {
            p->outs[k].data = p->rcp[k][0];
            p->nodes[k].save[0] = p->rcp[k][1];
            p->nodes[k].save[1] = p->rcp[k][2];
        }
    for (k = 0; k < N; k++) {
        lt__node *nd = &p->nodes[k];
        if (nd->ids && nd->ids_src) memcpy(nd->ids, nd->ids_src, (size_t)nd->n_ids * sizeof(int32_t));
        if (p->n_rc)   /* ops to run again (here, or in the group from here): the RNG they start from */
            for (j = k; j <= (!check && p->fuse_end[k] > k ? p->fuse_end[k] : k); j++)
                if (p->rc[j]) p->op_rng[j] = ctx->rng;
        if (!check && p->fuse_end[k] > k) {   /* the validation replay runs op by op */
            double t0 = prof ? lt__now() : 0.0;
            lt__run_fused(p, k, p->fuse_end[k]);
            if (prof) lt__profile_add(ctx, nd, 0, lt__now() - t0);   /* the group, under its first op */
            k = p->fuse_end[k];
            continue;
        }
        lt__plan_kernel(ctx, nd, 0, prof);
        if (check && (lt_failed(ctx) || (nd->out->data && !lt__all_finite(nd->out->data, nd->out->n)))) {
            char b1[64], b2[64];
            if (!lt_failed(ctx))
                lt_set_error(ctx, LT_ERR_NONFINITE, "lt_compile: op %d (%s%s%s, input %s -> output %s) produced a "
                             "non-finite value: fix the model (or the data) before compiling", k, nd->op->name,
                             nd->scope ? " in " : "", nd->scope ? nd->scope : "",
                             lt_shape_str(nd->in[0], b1, sizeof b1), lt_shape_str(nd->out, b2, sizeof b2));
            return ctx->status;
        }
    }
    if (loss_out) *loss_out = p->outs[p->loss].data[0];
    if (p->outs[p->loss].grad) p->outs[p->loss].grad[0] = seed;
    for (i = 0; i < p->n_ev; i++) {
        lt__node *nd = &p->nodes[k = p->ev[i] >> 1];
        if (p->ev[i] & 1) {   /* op k of a recompute segment again, into its second homes, from its RNG */
            lt_rng keep = ctx->rng;
            if (p->rcp[k][0]) {
                p->outs[k].data = p->rcp[k][3];
                nd->save[0] = p->rcp[k][4];
                nd->save[1] = p->rcp[k][5];
            }
            ctx->rng = p->op_rng[k];
            lt__plan_kernel(ctx, nd, 0, prof);
            ctx->rng = keep;
            continue;
        }
        if (!p->runs_bwd[k]) continue;
        for (j = 0; j < p->n_zero_at[k]; j++)   /* zeroed by lt__grad, or written whole (lt__grad_w) */
            p->outs[p->zero_at[k][j]].grad_unset = 1;
        lt__plan_kernel(ctx, nd, 1, prof);
    }
    lt__grads_settle(ctx);   /* parameters this loss does not reach: zero */
    return ctx->status;
}

/* ---- @@COMPILE.compile  lt_compile ----------------------------------------------------------- */
/* lt_compile's validation: the first replay, every op's output checked, then the gradients.  Not
   timed: the profile's switch is off meanwhile (kernels that split their time read it, @@LOSS). */
static void lt__plan_validate(lt_plan *p) {
    lt_ctx *ctx = p->ctx;
    int k, prof = ctx->profiling;
    ctx->profiling = 0;
    lt__plan_replay(p, 1.0f, NULL, 1);
    ctx->profiling = prof;
    for (k = 0; k < ctx->n_params && !lt_failed(ctx); k++)
        if (!lt__all_finite(ctx->params[k]->grad, ctx->params[k]->n))
            lt_set_error(ctx, LT_ERR_NONFINITE, "lt_compile: the gradient of \"%s\" is not finite after the "
                         "validation step", ctx->params[k]->name);
}

/* Recording runs the step function in a "dry" mode: every op checks its arguments and is
   recorded with its shapes, but no kernel runs and no activation is written, so the arena's
   pages are never touched and compiling costs no more memory than the plan itself (an eager
   step would first hold every buffer at once).  Backward is planned from the graph
   (lt__mark_grads).  The validation step is then the plan's first replay, checked op by op. */
LTRAIN_DEF lt_plan *lt_compile(lt_ctx *ctx, lt_step_fn fn, void *user) {
    struct lt__capture cap;
    lt_plan *p;
    lt_tensor *loss;
    float *saved = NULL;
    lt_rng rng;
    size_t np = 0, off = 0;
    int k, built = 0, zero = 1, lazy;
    const char *env = getenv("LTRAIN_COMPILE");
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!fn) { lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the step function is NULL"); return NULL; }
    p = lt__plan_alloc(ctx, fn, user);
    if (!p) return NULL;
    if (env && strcmp(env, "0") == 0) {
        p->eager = 1;
        snprintf(p->note, sizeof p->note, "eager: compiling is off (LTRAIN_COMPILE=0)");
        return p;
    }
    if (ctx->dev) return ctx->dev->compile(ctx, p);   /* the step as the device's graph */
    /* the validation step must not change the gradients the caller has accumulated: when they
       are all zero (the usual case: compiling before training; or unset by lt_zero_grad_lazy) they
       are zero again after it, otherwise a copy is kept (as much memory again as the gradients) */
    lazy = ctx->grads_unset;
    for (k = 0; k < ctx->n_params && zero && !lazy; k++) {
        const float *g = ctx->params[k]->grad;
        int64_t i;
        for (i = 0; i < ctx->params[k]->n && zero; i++) zero = g[i] == 0.0f;
    }
    if (!zero) {
        np = lt_params_count(ctx);
        saved = (float *)LT__MALLOC((np + 1) * sizeof(float));
        if (!saved) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_compile: out of memory"); LT__FREE(p); return NULL; }
        for (k = 0; k < ctx->n_params; k++) {
            memcpy(saved + off, ctx->params[k]->grad, (size_t)ctx->params[k]->n * sizeof(float));
            off += (size_t)ctx->params[k]->n;
        }
    }
    memset(&cap, 0, sizeof cap);
    rng = ctx->rng;              /* the validation step draws nothing that counts (dropout masks) */
    lt_reset(ctx);
    ctx->cap = &cap;
    ctx->cap_hooks = &lt__capture_rec;
    ctx->dry = 1;
    loss = fn(ctx, user);
    ctx->dry = 0;
    ctx->cap = NULL;
    ctx->cap_hooks = NULL;
    if (!lt_failed(ctx) && !loss) lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the step function returned NULL");
    if (!lt_failed(ctx) && loss->n != 1) {
        char b1[64];
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_compile: the step function returned %s: the loss must be a scalar "
                     "(hint: lt_sum or lt_mean it first)", lt_shape_str(loss, b1, sizeof b1));
    }
    if (!lt_failed(ctx) && !loss->is_param && !loss->requires_grad)
        lt_set_error(ctx, LT_ERR_ARG, "lt_compile: the loss does not depend on any parameter "
                     "(hint: was it computed with gradients disabled?)");
    if (!lt_failed(ctx) && lt__capture_segs(ctx, &cap, loss) && lt__mark_grads(ctx, &cap, loss))
        built = lt__plan_build(p, &cap, loss);
    if (!lt_failed(ctx) && !built) {
        /* what the plan cannot handle runs eagerly: slower, never wrong */
        char why[200];
        snprintf(why, sizeof why, "%.199s", p->note);
        lt_plan_destroy(p);
        p = lt__plan_alloc(ctx, fn, user);
        if (p) {
            p->eager = 1;
            snprintf(p->note, sizeof p->note, "eager fallback: %.199s", why);
        }
    } else if (!lt_failed(ctx)) {
        lt__plan_validate(p);
        snprintf(p->note, sizeof p->note, "compiled: %d ops (%d fused in %d groups, %d run again), %d inputs, "
                 "planned %.1f MB (all buffers %.1f MB); kept for backward %.1f MB, made again %.1f MB, "
                 "+%.3g GFLOP", p->n, p->n_fused, p->n_groups, p->n_rc, p->n_in, (double)p->mem_bytes / 1048576.0,
                 (double)p->naive_bytes / 1048576.0, (double)p->saved_bytes / 1048576.0,
                 (double)p->rc_bytes / 1048576.0, p->rc_flops * 1e-9);
    }
    off = 0;
    for (k = 0; k < ctx->n_params; k++) {
        if (saved) memcpy(ctx->params[k]->grad, saved + off, (size_t)ctx->params[k]->n * sizeof(float));
        else if (lazy) ctx->params[k]->grad_unset = 1;   /* unset again, as lt_zero_grad_lazy left them */
        else memset(ctx->params[k]->grad, 0, (size_t)ctx->params[k]->n * sizeof(float));
        off += (size_t)ctx->params[k]->n;
    }
    if (lazy) ctx->grads_unset = ctx->n_params > 0;
    ctx->rng = rng;
    LT__FREE(saved);
    LT__FREE(cap.nodes);
    LT__FREE(cap.in);
    LT__FREE(cap.has_grad);
    LT__FREE(cap.seg);
    LT__FREE(cap.rc);
    lt_reset(ctx);
    if (lt_failed(ctx)) { lt_plan_destroy(p); return NULL; }
    return p;
}

/* "1.5G", "800M", "64K", "1000000" (bytes; K, M, G, T are powers of 1024, a trailing B or iB
   allowed), "50%", or "off" / "" / NULL */
LTRAIN_DEF lt_status lt_set_memory_budget(lt_ctx *ctx, const char *budget) {
    const char *units = "KMGT";
    char *end;
    double x;
    if (!ctx) return LT_ERR_ARG;
    ctx->budget = 0;
    ctx->budget_frac = 0;
    if (!budget || !*budget || !strcmp(budget, "off")) return ctx->status;
    errno = 0;
    x = strtod(budget, &end);
    if (end != budget && errno == 0 && x > 0 && isfinite(x)) {
        const char *u = *end ? strchr(units, *end) : NULL;
        if (*end == '%' && !end[1] && x <= 100) { ctx->budget_frac = x / 100.0; return ctx->status; }
        if (u) {
            x *= pow(1024.0, (double)(u - units + 1));
            end++;
            if (*end == 'i') end++;
            if (*end == 'B') end++;
        } else if (*end == 'B') end++;
        if (!*end && x >= 1 && x < 1.8e19) { ctx->budget = (size_t)x; return ctx->status; }
    }
    return lt_set_error(ctx, LT_ERR_ARG, "lt_set_memory_budget: \"%s\" is not a memory budget: give bytes with an "
                        "optional K, M, G or T (1.5G, 800M), a percentage of the plan without recomputation "
                        "(50%%, at most 100%%), or off", budget);
}

LTRAIN_DEF size_t lt_plan_budget(const lt_plan *p) { return p ? p->budget : 0; }
LTRAIN_DEF size_t lt_plan_recomputed_bytes(const lt_plan *p) { return p ? p->rc_bytes : 0; }
LTRAIN_DEF double lt_plan_recomputed_flops(const lt_plan *p) { return p ? p->rc_flops : 0.0; }

LTRAIN_DEF lt_status lt_plan_run(lt_plan *p, float *loss_out) { return lt_plan_run_scaled(p, 1.0f, loss_out); }

LTRAIN_DEF lt_status lt_plan_run_scaled(lt_plan *p, float seed, float *loss_out) {
    lt_ctx *ctx;
    if (!p) return LT_ERR_ARG;
    ctx = p->ctx;
    if (lt_failed(ctx)) return ctx->status;
    if (p->graph) return p->graph_dev->graph_run(p, seed, loss_out);
    if (p->eager) {
        lt_tensor *loss;
        lt_reset(ctx);
        loss = p->fn(ctx, p->user);
        if (loss_out) *loss_out = lt_item(loss);
        return lt_backward_scaled(ctx, loss, seed);
    }
    return lt__plan_replay(p, seed, loss_out, 0);
}

LTRAIN_DEF int lt_plan_is_eager(const lt_plan *p) { return p ? p->eager : 1; }
LTRAIN_DEF const char *lt_plan_note(const lt_plan *p) { return p ? p->note : ""; }
LTRAIN_DEF size_t lt_plan_bytes(const lt_plan *p) { return p ? p->mem_bytes : 0; }
LTRAIN_DEF size_t lt_plan_naive_bytes(const lt_plan *p) { return p ? p->naive_bytes : 0; }
LTRAIN_DEF size_t lt_plan_saved_bytes(const lt_plan *p) { return p ? p->saved_bytes : 0; }

/* -- @@COMPILE.cache  a small cache of plans keyed by the caller's shape key (e.g. B*65536 + T) --- */
struct lt_plan_cache {
    lt_ctx *ctx;
    int cap, n;
    int64_t *keys;
    lt_plan **plans;
    uint64_t *used, clock;
};

LTRAIN_DEF lt_plan_cache *lt_plan_cache_create(lt_ctx *ctx, int capacity) {
    lt_plan_cache *c;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (capacity < 1) capacity = 1;
    c = (lt_plan_cache *)LT__MALLOC(sizeof(lt_plan_cache));
    if (!c) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_plan_cache_create: out of memory"); return NULL; }
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->cap = capacity;
    c->keys = (int64_t *)LT__MALLOC((size_t)capacity * sizeof(int64_t));
    c->plans = (lt_plan **)LT__MALLOC((size_t)capacity * sizeof(lt_plan *));
    c->used = (uint64_t *)LT__MALLOC((size_t)capacity * sizeof(uint64_t));
    if (!c->keys || !c->plans || !c->used) {
        lt_plan_cache_destroy(c);
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_plan_cache_create: out of memory");
        return NULL;
    }
    return c;
}

LTRAIN_DEF void lt_plan_cache_destroy(lt_plan_cache *c) {
    int k;
    if (!c) return;
    for (k = 0; k < c->n; k++) lt_plan_destroy(c->plans[k]);
    LT__FREE(c->keys);
    LT__FREE(c->plans);
    LT__FREE(c->used);
    LT__FREE(c);
}

LTRAIN_DEF lt_plan *lt_plan_cache_get(lt_plan_cache *c, int64_t key, lt_step_fn fn, void *user) {
    int k, victim = 0;
    lt_plan *p;
    if (!c || lt_failed(c->ctx)) return NULL;
    for (k = 0; k < c->n; k++)
        if (c->keys[k] == key && c->plans[k]->fn == fn && c->plans[k]->user == user) {
            c->used[k] = ++c->clock;
            return c->plans[k];
        }
    p = lt_compile(c->ctx, fn, user);
    if (!p) return NULL;
    if (c->n < c->cap) victim = c->n++;
    else {   /* evict the least recently used */
        for (k = 1; k < c->n; k++) if (c->used[k] < c->used[victim]) victim = k;
        lt_plan_destroy(c->plans[victim]);
    }
    c->keys[victim] = key;
    c->plans[victim] = p;
    c->used[victim] = ++c->clock;
    return p;
}

LTRAIN_DEF int lt_plan_cache_size(const lt_plan_cache *c) { return c ? c->n : 0; }


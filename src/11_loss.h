/* ==== @@LOSS  cross-entropy, MSE ============================================================= */
/* Holds: cross-entropy (mean or token-weighted, ignore index; the fused 16-bit head), MSE, and
   the GPT's loss (lt__gpt_loss: trunk, head, cross-entropy).
   Calls: @@CORE, @@HALF, @@TENSOR, @@OPS, @@GEMM, @@NN. */

/* ---- @@LOSS.cross_entropy  cross-entropy ----------------------------------------------------- */
LTRAIN_DEF int64_t lt_count_targets(const int32_t *targets, int64_t n) {
    int64_t i, c = 0;
    if (!targets) return 0;
    for (i = 0; i < n; i++) c += targets[i] != LT_IGNORE_INDEX;
    return c;
}

/* logits (R, V), targets (R) -> loss [1] = Σ_r (logsumexp(x_r) - x_r[t_r]) / denom over rows with
   t_r != -1; denom = the count of such rows (mean) or the caller's (token-weighted sum).
   Backward forms the softmax p from the logits and each row's max m and sum s = Σ exp(x - m),
   which the forward saves (as 1/s), so it is one pass over the logits:
     dx_r += dloss · (p_r - onehot(t_r)) / denom,   p_rj = exp(x_rj - m_r) / s_r
   LT__CE_DENOM = denom (0 when no row counts: loss 0, no gradient).
   save[0] = [row losses | m | log s | 1/s].
   In place (gx == x): dx_r = 0 + ... over the logits, the bits of += into zeros.  A compiled plan
   does this when nothing reads the logits later (@@COMPILE).  (lt_gpt_loss's head and loss at
   float32 are one op, linear_ce_exp below, which needs no such pass.) */
#define LT__CE_V(nd) ((nd)->i[0])       /* V, the row length */
#define LT__CE_DENOM(nd) ((nd)->f[0])
/* The 1/Σ a row saves for backward, from its sum Σ exp(x - m); NaN for a row of -inf (Σ = 0),
   which then gives NaN gradients, as torch does.  Every cross-entropy op saves it this way. */
static float lt__ce_rinv(double s) { return s > 0 ? (float)(1.0 / s) : NAN; }
/* The forward's rows (R rows of V logits x, targets ids): row[r] = (m - x[t]) + log Σ exp(x - m),
   with m, the log-sum (ls) and 1/Σ kept in rm, rl, rinv for backward (all 0 for an ignored row,
   1/Σ NaN for a row of -inf); returns Σ_r row[r], summed in row order afterwards: deterministic.
   (linear_ce16 runs it on its float32 logits too.)  keep: each row's terms exp(x - m) are
   written over x (zeros over an ignored row; a row of -inf keeps its values), for a backward
   that reads them instead of making them again (lt__ce_row_grad's kept). */
static double lt__ce_rows_fwd(float *x0, int64_t R, int64_t V, const int32_t *ids, float *row, float *rm, float *rl,
                              float *rinv, int keep) {
    int64_t r;
    double total = 0;
    int simd = lt__simd_level();
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++) {
        float *x = x0 + r * V, m, ls, xt;
        int32_t t = ids[r];
        double s;
        if (t == LT_IGNORE_INDEX) {
            row[r] = rm[r] = rl[r] = rinv[r] = 0.0f;
            if (keep) memset(x, 0, (size_t)V * sizeof(float));
            continue;
        }
        xt = x[t];
        ls = lt__lse_shifted(simd, x, V, &m, r + 1 < R ? x + V : NULL, keep ? x : NULL, &s);
        row[r] = (m - xt) + ls;
        rm[r] = m;
        rl[r] = ls;
        rinv[r] = lt__ce_rinv(s);
    }
    for (r = 0; r < R; r++) total += row[r];
    return total;
}
static void lt__cross_entropy_fwd(lt__node *nd) {
    int64_t V = LT__CE_V(nd), R = nd->in[0]->n / V;
    float *row = nd->save[0];
    double total = lt__ce_rows_fwd(nd->in[0]->data, R, V, nd->ids, row, row + R, row + 2 * R, row + 3 * R, 0);
    nd->out->data[0] = LT__CE_DENOM(nd) > 0 ? (float)(total / LT__CE_DENOM(nd)) : 0.0f;
}
/* The backward of one row (x its logits, m its forward's max, g = dloss/denom, c = g/Σ exp(x - m),
   t its target or LT_IGNORE_INDEX): gr = g·(softmax(x) - onehot(t)) = c·exp(x - m) - g·onehot(t)
   over x when gr == x (0 + ..., the bits of += into zeros; zeros for an ignored row), else added
   to gr (nothing for an ignored row), in pieces of 256 with the next ones fetched (@@CORE); kept:
   x holds exp(x - m) already (lt__ce_rows_fwd's keep), the same bits without the exps; p16 (bf16
   or fp16; LT_F32: none) rounds each finished piece in place, while it is in L1 (linear_ce16's
   float32 logits). */
static void lt__ce_row_grad(int simd, const float *x, float *gr, int64_t V, float m, float c, float g, int32_t t,
                            lt_dtype p16, int kept) {
    int64_t j0, step = simd ? 256 : V;   /* (the vector kernels' values do not depend on the pieces) */
    if (t == LT_IGNORE_INDEX) {
        if (gr == x) memset(gr, 0, (size_t)V * sizeof(float));
        return;
    }
    for (j0 = 0; j0 < V; j0 += step) {
        int64_t n = V - j0 < step ? V - j0 : step;
        if (simd) {
            lt__fetch(x + j0, LT__AHEAD, n * (int64_t)sizeof(float), gr == x ? LT__FETCH_L2W : LT__FETCH_L2);
            if (gr != x) lt__fetch(gr + j0, LT__AHEAD, n * (int64_t)sizeof(float), LT__FETCH_L2W);
        }
        lt__exp_grad(simd, x + j0, gr + j0, n, m, c, gr != x, kept);
        if (t >= j0 && t < j0 + n) gr[t] -= g;
        if (p16 != LT_F32) lt__round16(p16, gr + j0, gr + j0, (size_t)n);
    }
}
static void lt__cross_entropy_bwd(lt__node *nd) {
    int64_t V = LT__CE_V(nd), R = nd->in[0]->n / V, r;
    float *gx, g;
    int simd = lt__simd_level();
    gx = lt__grad(nd->in[0], nd->ctx);
    if (!gx) return;
    if (!(LT__CE_DENOM(nd) > 0)) {   /* no gradient: in place, that is zeros over the logits */
        if (gx == nd->in[0]->data) memset(gx, 0, (size_t)nd->in[0]->n * sizeof(float));
        return;
    }
    g = (float)(nd->out->grad[0] / LT__CE_DENOM(nd));
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++)
        lt__ce_row_grad(simd, nd->in[0]->data + r * V, gx + r * V, V, nd->save[0][R + r], g * nd->save[0][3 * R + r], g,
                        nd->ids[r], LT_F32, 0);
}
/* The checks lt_cross_entropy(_sum) make: targets in [0,V) or ignored, denom > 0 when given. */
static int lt__ce_check(lt_ctx *ctx, const char *who, const lt_tensor *logits, int64_t V, int64_t R,
                        const int32_t *targets, double denom, int use_count) {
    int64_t r;
    char b1[64];
    if (!targets) { lt_set_error(ctx, LT_ERR_ARG, "%s: targets is NULL", who); return 0; }
    for (r = 0; r < R; r++)
        if (targets[r] != LT_IGNORE_INDEX && (targets[r] < 0 || targets[r] >= V)) {
            lt_set_error(ctx, LT_ERR_ARG, "%s: targets[%lld] is %d: it must be in [0,%lld) or %d (ignored); "
                         "logits are %s", who, (long long)r, targets[r], (long long)V, LT_IGNORE_INDEX,
                         lt_shape_str(logits, b1, sizeof b1));
            return 0;
        }
    if (!use_count && !(denom > 0)) {
        lt_set_error(ctx, LT_ERR_ARG, "%s: denom is %g: it must be > 0", who, denom);
        return 0;
    }
    return 1;
}
static lt_tensor *lt__ce(lt_ctx *ctx, const char *who, lt_tensor *logits, const int32_t *targets, double denom,
                         int use_count) {
    int64_t V, R, one = 1;
    lt__node *nd;
    if (!lt__live(ctx, who, logits, logits)) return NULL;
    V = logits->shape[logits->ndim - 1];
    R = logits->n / V;
    if (!lt__ce_check(ctx, who, logits, V, R, targets, denom, use_count)) return NULL;
    nd = lt__node_new(ctx, LT__OP(cross_entropy), 1, &one, logits, NULL, NULL, 0);
    if (!nd || !lt__node_ids(ctx, nd, targets, R) || !lt__save(ctx, nd, 0, 4 * R)) return NULL;
    LT__CE_V(nd) = V;
    LT__CE_DENOM(nd) = use_count ? (double)lt_count_targets(targets, R) : denom;
    return lt__run(ctx, nd);
}
LTRAIN_DEF lt_tensor *lt_cross_entropy(lt_ctx *ctx, lt_tensor *logits, const int32_t *targets) {
    return lt__ce(ctx, "lt_cross_entropy", logits, targets, 0, 1);
}
LTRAIN_DEF lt_tensor *lt_cross_entropy_sum(lt_ctx *ctx, lt_tensor *logits, const int32_t *targets, double denom) {
    return lt__ce(ctx, "lt_cross_entropy_sum", logits, targets, denom, 0);
}

/* ---- @@LOSS.linear_ce16  linear_ce16: the LM head and cross-entropy in one op, for 16-bit training --- */
/* x (R, C), W (V, C), targets (R) -> loss [1]: lt_linear(x, W) then lt_cross_entropy(_sum) at
   16-bit precision, the same numbers, without a float32 logits tensor (R·V floats) or its float32
   gradient (as much again): the logits z = round16(x16·W16ᵀ) are kept in 16 bits only (but for
   bf16 where its products run on converted panels, which keeps them as float32 values:
   LT__LCE_WIDE below, whose forward and backward are lt_cross_entropy's loops).
   Forward: z in one product whose epilogue rounds each finished block of float32 sums (in L2, a
   scratch of R x 512 floats per thread, malloc'd for the forward, not kept, with R x C more for x
   where the product runs on converted panels) and narrows it into z16, taking the row maxima of
   each piece of 256 columns on the way (lt__gepi's z, @@GEMM);
   then per row (max, log Σ exp) as lt__lse_shifted, on z16 in pieces, and the loss: only the
   sums read z16 back.
   Backward (g = dloss/denom): dz = round16(g·(softmax(z) - onehot(t))) written over z16 (the
   float32 op's dlogits, rounded as linear16 packs them), then as linear16:
     dx += dz·W16,  dW += dzᵀ·x16   (float32 sums)
   z32 holds the softmax terms exp(z - max) from the forward, and there the products' packing
   makes dz from them (lt__gsrc_ce, @@GEMM): no pass of its own over the R·V values.
   The arguments below (as lt_cross_entropy's: the denominator 0 when no row counts: loss 0, no
   gradient); ids = targets.  save[0] = x16 (when W gets a gradient and x is not a parameter);
   save[1] = z16 (R·V 16-bit values) or z32 (R·V floats, LT__LCE_WIDE), then per row max, lse,
   loss, 1/Σ exp(z - max). */
#define LT__LCE_V(nd) ((nd)->i[0])
#define LT__LCE_C(nd) ((nd)->i[1])
#define LT__LCE_DENOM(nd) ((nd)->f[0])
#define LT__LCE_WIDE(nd) ((nd)->i[2])   /* 1: the logits are kept as float32 values (lt__ce16_wide) */
/* Where bf16 products run on converted panels (the AVX2 kernel, or AVX-512 without the pair
   kernels: no 16-bit arithmetic), the logits are kept as float32 values rounded to bf16 (z32, R·V
   floats) instead of 16-bit patterns: the same numbers, twice the bytes, but made the way the
   float32 head makes its logits, the tiles rounding as they store (lt__gemm_tiles' fe; streamed
   to memory, as fp32's, lt__gemm_stream_fit), and read by the float32 cross-entropy's loops.
   Narrowing each finished block into z16 needs a pass of its own over the block, and that pass
   waits on z16's lines while no product runs; the float32 values cost more bytes and no such
   pass.  gpt-mini's head (1024 x 384 x 50304) at 2 threads: the forward 4.5% faster than through
   z16 on AVX2 kernels, 3.4% on AVX-512 ones, the backward level or 1.2% faster (bench/precision.md).
   The forward also writes the softmax terms exp(z - max) over z32 while it sums them, so
   backward makes dz with no exps, and where the panels are float32 (always but for the tests'
   switch) the products make it as they pack the terms, instead of a pass over z32 that scaled
   and rounded them in place first (bench/precision.md).  Where the pair kernels or AMX multiply
   bf16 themselves, z16 stays (half the bytes, and their products are the faster part). */
static int lt__ce16_wide_force = -1;   /* the tests' switch: 0 or 1 whatever the kernel (-1: as below) */
static int lt__ce16_wide(lt_dtype p) {
    int id;
    if (lt__ce16_wide_force >= 0) return lt__ce16_wide_force;
    id = lt__gemm_pick();
    return p == LT_BF16 && (id == LT__GEMM_AVX2 || id == LT__GEMM_AVX512) && !lt__gemm16_pairs(id);
}
typedef struct { uint16_t *z; float *z32, *m, *lse, *loss, *rinv; } lt__ce16_bufs;
static int64_t lt__ce16_zfloats(int wide, int64_t R, int64_t V) { return wide ? R * V : (R * V + 1) / 2; }
static lt__ce16_bufs lt__ce16_layout(const lt__node *nd) {
    int64_t V = LT__LCE_V(nd), R = nd->in[0]->n / LT__LCE_C(nd);
    lt__ce16_bufs b;
    b.z = LT__LCE_WIDE(nd) ? NULL : (uint16_t *)(void *)nd->save[1];
    b.z32 = LT__LCE_WIDE(nd) ? nd->save[1] : NULL;
    b.m = nd->save[1] + lt__ce16_zfloats((int)LT__LCE_WIDE(nd), R, V);
    b.lse = b.m + R;
    b.loss = b.lse + R;
    b.rinv = b.loss + R;
    return b;
}

/* lt__lse_shifted on a 16-bit row: the same max and the same sums in blocks of 256; pm[q·ldq]
   holds block q's maximum (lt__row_max of it, taken by the product's epilogue) */
#define LT__CE16_PIECE 256
#define LT__CE16_BLK 512   /* columns of a thread's scratch block of float32 logits */
/* The two passes over a piece of n (<= LT__CE16_PIECE) 16-bit logits z, as the float32 ops make
   them on the widened values (lt__exp_sum, lt__exp_grad):
     lt__ce16_sum:  Σ_j exp(z_j - m)  (the piece's float partial sum)
     lt__ce16_dz:   z_j = round16(c·exp(z_j - m)), minus g at j = t (0 <= t < n; else none)
   Through a float32 buffer on the stack; the sum with AVX-512 (fast paths below) widens 16 values
   in registers instead: the same operations, so the same bits, 5-13% faster (bench/precision.md;
   done the same way, dz was slower than through the buffer). */
#ifdef LT__X86
LT__TARGET("avx512f") static float lt__ce16_sum_avx512(lt_dtype p, const uint16_t *z, int64_t n, float m);
#endif
static float lt__ce16_sum(int simd, lt_dtype p, const uint16_t *z, int64_t n, float m) {
    float x[LT__CE16_PIECE];
#ifdef LT__X86
    if (simd == 2) return lt__ce16_sum_avx512(p, z, n, m);
#endif
    lt__from16(p, z, x, (size_t)n);
    return lt__exp_sum(simd, x, n, m, NULL);
}
static void lt__ce16_dz(int simd, lt_dtype p, uint16_t *z, int64_t n, float m, float c, float g, int64_t t) {
    float v[LT__CE16_PIECE];
    lt__from16(p, z, v, (size_t)n);
    lt__exp_grad(simd, v, v, n, m, c, 0, 0);
    if (t >= 0 && t < n) v[t] -= g;
    lt__to16(p, v, z, (size_t)n);
}
static float lt__lse16(int simd, lt_dtype p, const uint16_t *z, int64_t V, const float *pm, int64_t ldq, float *m,
                       double *sum) {
    float mm = -INFINITY;
    double s = 0;
    int64_t j0;
    for (j0 = 0; j0 < V; j0 += LT__CE16_PIECE)
        if (pm[j0 / LT__CE16_PIECE * ldq] > mm) mm = pm[j0 / LT__CE16_PIECE * ldq];
    *m = mm;
    *sum = 0;
    if (mm == -INFINITY) return -INFINITY;
    for (j0 = 0; j0 < V; j0 += LT__CE16_PIECE) {
        lt__fetch(z + j0, LT__AHEAD, LT__CE16_PIECE * (int64_t)sizeof *z, LT__FETCH_L2);   /* (@@CORE: memory keeps up) */
        s += lt__ce16_sum(simd, p, z + j0, V - j0 < LT__CE16_PIECE ? V - j0 : LT__CE16_PIECE, mm);
    }
    *sum = s;
    return (float)log(s);
}

/* x as a float32 operand (n values) for products on converted panels: its values rounded to p
   once into xr, from its 16-bit copy where it has one (a compiled plan may keep only that), packed
   then as plain float32 copies instead of being widened or rounded for each panel of W
   (bench/precision.md) */
static lt__mm16_opnd lt__ce16_x32(lt_dtype p, lt__mm16_opnd x, float *xr, int64_t n, int64_t C) {
    if (x.h && p == LT_F16) lt_f16_to_f32_array(x.h, xr, (size_t)n);
    else if (x.h) lt_bf16_to_f32_array(x.h, xr, (size_t)n);
    else lt_round_to_precision(p, x.f, xr, (size_t)n);
    x = lt__opnd16(xr, NULL, C, 0, 0);
    x.exact = 1;
    return x;
}
/* The forward with float32 logits (LT__LCE_WIDE): z32 = round16(x16·W16ᵀ) by lt__gemm16 (x as
   lt__ce16_x32 makes it, unless its float32 values are 16-bit already), then the rows as
   lt_cross_entropy's forward (lt__ce_rows_fwd): the same max and sums as lt__lse16's on z16,
   the terms exp(z - max) kept over z32 for backward. */
static void lt__linear_ce16_fwd32(lt__node *nd, lt_dtype p, const lt__ce16_bufs *bf) {
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C;
    double total;
    float *xr = NULL;
    lt__mm16_opnd x = lt__opnd16_of(nd, 0, C, 0, 0), wt = lt__opnd16(nd->in[1]->data, NULL, C, 0, 1);
    if (!x.exact) {
        xr = (float *)LT__MALLOC((size_t)R * (size_t)C * sizeof(float));
        if (!xr) {
            lt_set_error(nd->ctx, LT_ERR_NOMEM, "lt_cross_entropy: out of memory for a %lld x %lld copy of x",
                         (long long)R, (long long)C);
            return;
        }
        x = lt__ce16_x32(p, x, xr, R * C, C);
    }
    lt__gemm16(p, 1, R, V, C, &x, &wt, NULL, bf->z32, V, 0, 0);
    LT__FREE(xr);
    total = lt__ce_rows_fwd(bf->z32, R, V, nd->ids, bf->loss, bf->m, bf->lse, bf->rinv, 1);
    nd->out->data[0] = LT__CE_DENOM(nd) > 0 ? (float)(total / LT__CE_DENOM(nd)) : 0.0f;
}
static void lt__linear_ce16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC2(nd));
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C, r;
    int64_t np = (V + LT__CE16_PIECE - 1) / LT__CE16_PIECE, i;
    lt__ce16_bufs bf = lt__ce16_layout(nd);
    int nt = lt_get_threads() < 1 ? 1 : lt_get_threads(), simd = lt__simd_level();
    double total = 0;
    float *blk, *pm, *xr = NULL;
    lt__mm16_opnd x;
    lt__gsrc w = lt__gsrc_f32(nd->in[1]->data);
    lt__gepi e = lt__gepi_of((int)p, NULL);
    int id = lt__gemm_pick(), exact = !lt__gemm16_pairs(id);
    if (bf.z32) {
        if (nd->save[0]) lt__to16_array(p, nd->in[0]->data, (uint16_t *)(void *)nd->save[0], (size_t)nd->in[0]->n);
        lt__linear_ce16_fwd32(nd, p, &bf);
        return;
    }
    /* z = round16(x16 · W16ᵀ) in one product whose epilogue narrows each finished block into z and
       takes its pieces' maxima (lt__gepi's z): the float32 values pass through blk, a scratch of
       R x LT__CE16_BLK floats per thread, the widest block of C it takes (lt__sgemm_ex).  x is
       packed again for each panel of W (lt__gemm_block_z: about 150 times for gpt-mini's head);
       where the product runs the float32 kernel on converted panels, it packs x from xr, x
       rounded to 16 bits once and kept as float32 (R x C more floats of scratch), as plain
       float32 copies, instead of widening the 16-bit copy each time (bench/precision.md) */
    blk = (float *)LT__MALLOC(((size_t)nt * (size_t)R * LT__CE16_BLK + (size_t)R * (size_t)np +
                               (exact ? (size_t)R * (size_t)C : 0)) * sizeof(float));
    if (!blk) {
        lt_set_error(nd->ctx, LT_ERR_NOMEM, "lt_cross_entropy: out of memory for %d blocks of %lld x %d logits", nt,
                     (long long)R, LT__CE16_BLK);
        return;
    }
    /* the pieces' row maxima, np x R: a piece's rows side by side, so that the epilogue's merges
       for a block of rows touch a few lines instead of a line a row (bench/precision.md) */
    pm = blk + (size_t)nt * (size_t)R * LT__CE16_BLK;
    for (i = 0; i < R * np; i++) pm[i] = -INFINITY;
    if (nd->save[0]) lt__to16_array(p, nd->in[0]->data, (uint16_t *)(void *)nd->save[0], (size_t)nd->in[0]->n);
    x = lt__opnd16_of(nd, 0, C, 0, 0);
    if (exact) {
        xr = pm + (size_t)R * (size_t)np;
        x = lt__ce16_x32(p, x, xr, R * C, C);
    }
    w.p = (int)p;
    e.z = bf.z; e.ldz = V;
    e.pm = pm; e.ldpm = 1; e.ldq = R;
    e.piece = LT__CE16_PIECE;
    e.nscr = nt;
    lt__sgemm_ex(id, 0, 1, R, V, C, 1.0f, lt__gsrc16(p, &x, 0), C, w, C, 0.0f, blk, LT__CE16_BLK, &e);
    LT__OMP(parallel for if (R * V > 32768))
    for (r = 0; r < R; r++) {
        int32_t t = nd->ids[r];
        float m, ls, zt;
        double sum;
        if (t == LT_IGNORE_INDEX) { bf.loss[r] = bf.m[r] = bf.lse[r] = bf.rinv[r] = 0.0f; continue; }
        ls = lt__lse16(simd, p, bf.z + r * V, V, pm + r, R, &m, &sum);
        lt__from16(p, bf.z + r * V + t, &zt, 1);
        bf.m[r] = m;
        bf.lse[r] = ls;
        bf.loss[r] = (m - zt) + ls;
        bf.rinv[r] = lt__ce_rinv(sum);
    }
    LT__FREE(blk);
    for (r = 0; r < R; r++) total += bf.loss[r];
    nd->out->data[0] = LT__CE_DENOM(nd) > 0 ? (float)(total / LT__CE_DENOM(nd)) : 0.0f;
}
static void lt__linear_ce16_bwd(lt__node *nd) {
    lt_dtype p = lt__prec_of(LT__PREC2(nd));
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C, r;
    lt__ce16_bufs bf = lt__ce16_layout(nd);
    int addx = 1, addw = 1, simd = lt__simd_level(), id = lt__gemm_pick();
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &addx), *gw = lt__grad_w(nd->in[1], nd->ctx, &addw), g, *c = NULL;
    lt__mm16_opnd dz = lt__opnd16(bf.z32, bf.z, V, 0, 0), x, w;
    lt__gsrc dzs;
    lt__gsrc_ce ce;
    if (!(LT__LCE_DENOM(nd) > 0)) {   /* no gradient: zeros where nothing was written yet */
        if (gx && !addx) lt__zero(gx, nd->in[0]->n);
        if (gw && !addw) lt__zero(gw, nd->in[1]->n);
        return;
    }
    g = (float)(nd->out->grad[0] / LT__CE_DENOM(nd));
    /* float32 logits on float32 panels: dz made where the products pack the terms (lt__gsrc_ce,
       @@GEMM), c_r = g/Σ_r per row, and no pass of its own over the R·V terms (the pass below
       where c finds no memory) */
    if (bf.z32 && !lt__gemm16_pairs(id) && (c = (float *)lt__ctx_work(nd->ctx, (size_t)R * sizeof(float))) != NULL) {
        for (r = 0; r < R; r++) c[r] = g * bf.rinv[r];
        ce.base = bf.z32; ce.c = c; ce.t = nd->ids; ce.ld = V; ce.g = g;
        dzs = lt__gsrc_f32(bf.z32);
        dzs.p = (int)p;
        dzs.ce = &ce;
    }
    if (!c) {   /* dz written over z first, in pieces */
        LT__OMP(parallel for if (R * V > 32768))
        for (r = 0; r < R; r++) {
            int32_t t = nd->ids[r];
            float m = bf.m[r], cr = g * bf.rinv[r];
            int64_t j0;
            uint16_t *zr = bf.z ? bf.z + r * V : NULL;
            if (bf.z32) {   /* float32 logits, their exps kept: lt_cross_entropy's backward in place, each piece rounded */
                lt__ce_row_grad(simd, bf.z32 + r * V, bf.z32 + r * V, V, m, cr, g, t, p, 1);
                continue;
            }
            if (t == LT_IGNORE_INDEX) {
                memset(zr, 0, (size_t)V * sizeof(uint16_t));
                continue;
            }
            for (j0 = 0; j0 < V; j0 += LT__CE16_PIECE) {
                lt__fetch(zr + j0, LT__AHEAD, LT__CE16_PIECE * (int64_t)sizeof *zr, LT__FETCH_L2W);
                lt__ce16_dz(simd, p, zr + j0, V - j0 < LT__CE16_PIECE ? V - j0 : LT__CE16_PIECE, m, cr, g, t - j0);
            }
        }
        dz.exact = bf.z32 != NULL;
        dzs = lt__gsrc16(p, &dz, 0);
    }
    if (gx) {   /* dx (R,C) += dz · W */
        w = lt__opnd16(nd->in[1]->data, NULL, C, 0, 0);
        lt__sgemm_ex(id, 0, 0, R, C, V, 1.0f, dzs, V, lt__gsrc16(p, &w, 0), C, addx ? 1.0f : 0.0f, gx, C, NULL);
    }
    if (gw) {   /* dW (V,C) += dzᵀ · x */
        x = lt__opnd16_of(nd, 0, C, 0, 0);
        lt__sgemm_ex(id, 1, 0, V, C, R, 1.0f, dzs, V, lt__gsrc16(p, &x, 0), C, addw ? 1.0f : 0.0f, gw, C, NULL);
    }
}
/* The head + loss ops' arguments: x (..., C) alive, W [V, C], the targets as lt_cross_entropy's;
   V, C and R (rows of x) on success, 0 with the context's error (naming `who`) otherwise. */
static int lt__lce_args(lt_ctx *ctx, const char *who, lt_tensor *x, lt_tensor *w, const int32_t *targets, double denom,
                        int use_count, int64_t *V, int64_t *C, int64_t *R) {
    char b1[64], b2[64];
    if (!lt__live(ctx, who, x, w)) return 0;
    *C = x->shape[x->ndim - 1];
    if (w->ndim != 2 || w->shape[1] != *C) {
        lt_set_error(ctx, LT_ERR_SHAPE, "%s: x is %s, W is %s: W must be [V,C] with C = x's last dim", who,
                     lt_shape_str(x, b1, sizeof b1), lt_shape_str(w, b2, sizeof b2));
        return 0;
    }
    *V = w->shape[0];
    *R = x->n / *C;
    return lt__ce_check(ctx, who, x, *V, *R, targets, denom, use_count);
}
/* The op behind lt_gpt_loss(_ex) at 16-bit precision (x = ln_f's output, W = the head: wte or lm_head). */
static lt_tensor *lt__linear_ce16(lt_ctx *ctx, const char *who, lt_tensor *x, lt_tensor *w, const int32_t *targets,
                                  double denom, int use_count) {
    int64_t V, C, R, one = 1;
    lt__node *nd;
    if (!lt__lce_args(ctx, who, x, w, targets, denom, use_count, &V, &C, &R)) return NULL;
    nd = lt__node_new(ctx, LT__OP(linear_ce16), 1, &one, x, w, NULL, 0);
    if (!nd || !lt__node_ids(ctx, nd, targets, R)) return NULL;
    LT__LCE_V(nd) = V;
    LT__LCE_C(nd) = C;
    LT__LCE_DENOM(nd) = use_count ? (double)lt_count_targets(targets, R) : denom;
    LT__PREC2(nd) = (double)ctx->precision;
    if (nd->out->requires_grad && w->requires_grad && !lt__is_param_data(x) && lt__copy16(ctx, x) &&
        !lt__save(ctx, nd, 0, (x->n + 1) / 2))
        return NULL;
    LT__LCE_WIDE(nd) = lt__ce16_wide(ctx->precision);
    if (!lt__save(ctx, nd, 1, lt__ce16_zfloats((int)LT__LCE_WIDE(nd), R, V) + 4 * R)) return NULL;
    return lt__run(ctx, nd);
}

/* ---- fast paths: AVX-512 (linear_ce16's sums over the 16-bit logits) ---------------------------- */
#ifdef LT__X86
LT__TARGET("avx512f") static float lt__ce16_sum_avx512(lt_dtype p, const uint16_t *z, int64_t n, float m) {
    __m512 acc = _mm512_setzero_ps(), vm = _mm512_set1_ps(m);
    int64_t j;
    for (j = 0; j < n; j += 16) {   /* lt__exp_sum_avx512's loop and final sum */
        __mmask16 k = (__mmask16)(n - j >= 16 ? 0xFFFFu : (1u << (n - j)) - 1u);
        acc = _mm512_mask_add_ps(acc, k, acc, lt__exp_neg16(_mm512_sub_ps(lt__widen16_lanes(p, lt__load16_lanes(z + j, k)), vm)));
    }
    return lt__lanes_sum16(acc);
}
#endif

/* ---- @@LOSS.linear_ce  linear_ce: the LM head and cross-entropy in one op, at float32, in column blocks --- */
/* x (R, C), W (V, C), targets (R) -> loss [1] = Σ_r (lse(z_r) - z_r[t_r]) / denom,  z = x·Wᵀ, over rows
   with t_r != -1 (lt_linear then lt_cross_entropy(_sum), the same arguments and rules), with no
   R x V tensor kept: the logits exist one block of LT__LCE_COLS columns at a time.
   Forward, block b by block (z_b = x·W_bᵀ, one threaded GEMM into a scratch block of R rows): per
   row the running max m and Σ exp(z - m), rescaled when a block raises the max (the online
   log-sum-exp: s ← s·exp(m - m') + Σ_b exp(z_b - m'), the block's sum in pieces of 256 as
   lt__lse_shifted), and the target's logit when its block passes.  Saved: per row m, ls = log s,
   the row's loss and 1/s (4 floats); x and W stay the inputs' own values.
   Backward: with p = softmax(z_r) and loss_r = lse(z_r) - z_r[t],  ∂loss_r/∂z_rj = p_rj - [j = t],
   so with g = dloss/denom each block is made again and turned into
     dz_b = (g/s)·exp(z_b - m) - g·onehot(t)       (0 on ignored rows)
   and, as lt_linear's backward, dx += dz_b·W_b, dW_b += dz_bᵀ·x (dx set by the first block when
   x's gradient is unset).  The blocks run in their order and each product is threaded inside,
   over rows or columns, never over its sum: the bits do not depend on the thread count.  The sums
   differ from one product over all V columns and one log-sum-exp per row in order only (float
   rounding, ~1e-7 relative).  LT__LCE_DENOM = denom (0 when no row counts: loss 0, zero gradients). */
#define LT__LCE_COLS 1024
static void lt__linear_ce_fwd(lt__node *nd) {
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C, cols = V < LT__LCE_COLS ? V : LT__LCE_COLS;
    int64_t v0, r;
    int simd = lt__simd_level();
    float *rm = nd->save[0], *rl = rm + R, *row = rm + 2 * R, *rinv = rm + 3 * R, *blk, *zt;
    double *rs, total = 0;
    int64_t nb = (R * cols + 1) / 2 * 2;   /* the block's floats, rounded to an even count: rs is 8-aligned */
    blk = (float *)LT__MALLOC((size_t)nb * sizeof(float) + (size_t)R * (sizeof(double) + sizeof(float)));
    if (!blk) {
        lt_set_error(nd->ctx, LT_ERR_NOMEM, "lt_linear_cross_entropy: out of memory for a block of %lld x %lld logits",
                     (long long)R, (long long)cols);
        return;
    }
    rs = (double *)(void *)(blk + nb);   /* per row: the running Σ exp, then the target's logit */
    zt = (float *)(void *)(rs + R);
    for (r = 0; r < R; r++) { rm[r] = -INFINITY; rs[r] = 0.0; zt[r] = 0.0f; }
    for (v0 = 0; v0 < V; v0 += LT__LCE_COLS) {
        int64_t n = V - v0 < LT__LCE_COLS ? V - v0 : LT__LCE_COLS;
        lt_sgemm(0, 1, R, n, C, 1.0f, nd->in[0]->data, C, nd->in[1]->data + v0 * C, C, 0.0f, blk, n);
        LT__OMP(parallel for if (R * n > 32768))
        for (r = 0; r < R; r++) {
            const float *z = blk + r * n;
            int32_t t = nd->ids[r];
            float bm, mm;
            int64_t j0;
            double s = 0;
            if (t == LT_IGNORE_INDEX) continue;
            if (t >= v0 && t < v0 + n) zt[r] = z[t - v0];
            bm = lt__row_max(z, n);
            if (!(bm > rm[r])) bm = rm[r];   /* the new running max */
            if (bm == -INFINITY) continue;
            if (bm > rm[r]) {
                if (rm[r] > -INFINITY) rs[r] *= exp((double)rm[r] - (double)bm);
                rm[r] = bm;
            }
            mm = rm[r];
            for (j0 = 0; j0 < n; j0 += 256) s += lt__exp_sum(simd, z + j0, n - j0 < 256 ? n - j0 : 256, mm, NULL);
            rs[r] += s;
        }
    }
    for (r = 0; r < R; r++) {
        if (nd->ids[r] == LT_IGNORE_INDEX) { rm[r] = rl[r] = row[r] = rinv[r] = 0.0f; continue; }
        rl[r] = rm[r] == -INFINITY ? -INFINITY : (float)log(rs[r]);
        rinv[r] = lt__ce_rinv(rs[r]);
        row[r] = (rm[r] - zt[r]) + rl[r];
        total += row[r];
    }
    LT__FREE(blk);
    nd->out->data[0] = LT__LCE_DENOM(nd) > 0 ? (float)(total / LT__LCE_DENOM(nd)) : 0.0f;
}
static void lt__linear_ce_bwd(lt__node *nd) {
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C, cols = V < LT__LCE_COLS ? V : LT__LCE_COLS;
    int64_t v0, r;
    const float *x = nd->in[0]->data, *rm = nd->save[0], *rinv = rm + 3 * R;
    int add = 1, addw = 1, simd = lt__simd_level();
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad_w(nd->in[1], nd->ctx, &addw), *blk, g;
    if (gx && !add && !(LT__LCE_DENOM(nd) > 0)) lt__zero(gx, nd->in[0]->n);   /* no gradient: zeros */
    if (gw && !addw && !(LT__LCE_DENOM(nd) > 0)) lt__zero(gw, nd->in[1]->n);
    if ((!gx && !gw) || !(LT__LCE_DENOM(nd) > 0)) return;
    blk = (float *)LT__MALLOC((size_t)R * (size_t)cols * sizeof(float));
    if (!blk) {
        lt_set_error(nd->ctx, LT_ERR_NOMEM, "lt_linear_cross_entropy: out of memory for a block of %lld x %lld logits",
                     (long long)R, (long long)cols);
        return;
    }
    g = (float)(nd->out->grad[0] / LT__LCE_DENOM(nd));
    for (v0 = 0; v0 < V; v0 += LT__LCE_COLS) {
        int64_t n = V - v0 < LT__LCE_COLS ? V - v0 : LT__LCE_COLS;
        const float *w = nd->in[1]->data + v0 * C;
        lt_sgemm(0, 1, R, n, C, 1.0f, x, C, w, C, 0.0f, blk, n);
        LT__OMP(parallel for if (R * n > 32768))
        for (r = 0; r < R; r++) {   /* dz over the block */
            float *z = blk + r * n, m = rm[r];
            int32_t t = nd->ids[r];
            if (t == LT_IGNORE_INDEX) { memset(z, 0, (size_t)n * sizeof(float)); continue; }
            lt__exp_grad(simd, z, z, n, m, g * rinv[r], 0, 0);
            if (t >= v0 && t < v0 + n) z[t - v0] -= g;
        }
        if (gx) lt_sgemm(0, 0, R, C, n, 1.0f, blk, n, w, C, add || v0 > 0 ? 1.0f : 0.0f, gx, C);   /* dx (R,C) += dz_b·W_b */
        if (gw) lt_sgemm(1, 0, n, C, R, 1.0f, blk, n, x, C, addw ? 1.0f : 0.0f, gw + v0 * C, C);   /* dW_b (n,C) += dz_bᵀ·x */
    }
    LT__FREE(blk);
}
/* linear_ce, or with kept = 1 linear_ce_exp (below) */
static lt_tensor *lt__linear_ce(lt_ctx *ctx, const char *who, lt_tensor *x, lt_tensor *w, const int32_t *targets,
                                double denom, int use_count, int kept) {
    int64_t V, C, R, one = 1;
    lt__node *nd;
    if (!lt__lce_args(ctx, who, x, w, targets, denom, use_count, &V, &C, &R)) return NULL;
    nd = lt__node_new(ctx, kept ? LT__OP(linear_ce_exp) : LT__OP(linear_ce), 1, &one, x, w, NULL, 0);
    if (!nd || !lt__node_ids(ctx, nd, targets, R) || !lt__save(ctx, nd, 0, (kept ? R * V : 0) + 4 * R)) return NULL;
    LT__LCE_V(nd) = V;
    LT__LCE_C(nd) = C;
    LT__LCE_DENOM(nd) = use_count ? (double)lt_count_targets(targets, R) : denom;
    return lt__run(ctx, nd);
}
LTRAIN_DEF lt_tensor *lt_linear_cross_entropy(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, const int32_t *targets) {
    return lt__linear_ce(ctx, "lt_linear_cross_entropy", x, w, targets, 0, 1, 0);
}
LTRAIN_DEF lt_tensor *lt_linear_cross_entropy_sum(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, const int32_t *targets,
                                                  double denom) {
    return lt__linear_ce(ctx, "lt_linear_cross_entropy_sum", x, w, targets, denom, 0, 0);
}

/* ---- @@LOSS.linear_ce_exp  linear_ce_exp: the float32 head and loss, the exponentials kept ----- */
/* x (R, C), W (V, C), targets (R) -> loss [1]: lt_linear(x, W, NULL) then lt_cross_entropy(_sum),
   the same arguments and rules and the same loss to the bit; the op behind lt_gpt_loss at float32.
   Forward: z = x·Wᵀ (lt_linear's product) into the record's own buffer, whose logits nothing else
   reads, then each row as lt_cross_entropy's (max m, s = Σ exp(z - m), the loss), each term
   e_j = exp(z_j - m) written over z_j by the pass that sums it, while the row is in cache
   (lt__ce_rows_fwd's keep; 1/s kept too).
   Backward: with g = dloss/denom and c_r = g/s_r the gradient of the logits is
   dz_r = c_r·e_r - g·onehot(t_r), so the two products take E as it is:
     dx = dz·W  = c ⊙ (E·W) - g·W[t]          (c scales the rows of E·W; W[t]: row t_r of W for row r)
     dW = dzᵀ·x = Eᵀ·(c ⊙ x) - g·Σ_r [row t_r] x_r
   with R x C work around them and no pass over the R·V values to build dz first: such a pass
   (lt_cross_entropy's backward, in place) reads and writes every logit and takes an exp of each,
   as long as the forward's rows (bench/design.md).  c multiplies sums of e·W where dz multiplies
   each e: the gradients differ from lt_linear + lt_cross_entropy's by float rounding (~1e-7 relative).
   save[0] = [E (R·V) | m | ls | loss | 1/s (R each)]; ignored rows: E and 1/s zeros.  LT__LCE_V,
   LT__LCE_C, LT__LCE_DENOM as linear_ce's. */
/* Under lt_set_profiling the products count as lt_linear's (the products' share of a step, as
   bench/train_step.py reads it) and the rest as this op's: the caller adds the whole kernel's time
   to this op's row afterwards, so their time moves from it to linear's. */
static void lt__lce_timed_gemm(lt__node *nd, int bwd, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                               int64_t lda, const float *B, int64_t ldb, float beta, float *Cm, int64_t ldc) {
    lt_ctx *ctx = nd->ctx;
    double t0 = ctx->profiling ? lt__now() : 0.0;
    if (!bwd) lt__sgemm_bias(ta, tb, M, N, K, A, lda, B, ldb, NULL, Cm, ldc);   /* (lt_linear's forward call) */
    else lt_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, Cm, ldc);
    if (ctx->profiling) {
        double s = lt__now() - t0;
        ctx->prof_s[bwd][nd->op - lt__ops] -= s;
        ctx->prof_s[bwd][LT__OP(linear) - lt__ops] += s;
        ctx->prof_n[bwd][LT__OP(linear) - lt__ops]++;
    }
}
static void lt__linear_ce_exp_fwd(lt__node *nd) {
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C;
    float *e = nd->save[0], *st = e + R * V;
    double total;
    lt__lce_timed_gemm(nd, 0, 0, 1, R, V, C, nd->in[0]->data, C, nd->in[1]->data, C, 0.0f, e, V);
    total = lt__ce_rows_fwd(e, R, V, nd->ids, st + 2 * R, st, st + R, st + 3 * R, 1);
    nd->out->data[0] = LT__LCE_DENOM(nd) > 0 ? (float)(total / LT__LCE_DENOM(nd)) : 0.0f;
}
static void lt__linear_ce_exp_bwd(lt__node *nd) {
    int64_t V = LT__LCE_V(nd), C = LT__LCE_C(nd), R = nd->in[0]->n / C, r;
    const float *x = nd->in[0]->data, *w = nd->in[1]->data, *e = nd->save[0], *rinv = e + R * V + 3 * R;
    int add = 1, addw = 1;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad_w(nd->in[1], nd->ctx, &addw), *c, *tmp, g;
    if (gx && !add && !(LT__LCE_DENOM(nd) > 0)) lt__zero(gx, nd->in[0]->n);   /* no gradient: zeros */
    if (gw && !addw && !(LT__LCE_DENOM(nd) > 0)) lt__zero(gw, nd->in[1]->n);
    if ((!gx && !gw) || !(LT__LCE_DENOM(nd) > 0)) return;
    /* c (R), then R x C floats: E·W when dx adds to a gradient (else made in gx), c ⊙ x for dW;
       the context's scratch, kept from step to step */
    c = (float *)lt__ctx_work(nd->ctx, (size_t)R * ((size_t)C + 1) * sizeof(float));
    if (!c) {
        lt_set_error(nd->ctx, LT_ERR_NOMEM, "lt_gpt_loss: out of memory for %lld x %lld floats of scratch",
                     (long long)R, (long long)C + 1);
        return;
    }
    tmp = c + R;
    g = (float)(nd->out->grad[0] / LT__LCE_DENOM(nd));
    for (r = 0; r < R; r++) c[r] = g * rinv[r];
    if (gx) {   /* dx (R,C) (+)= c ⊙ (E·W) - g·W[t] */
        float *ew = add ? tmp : gx;
        lt__lce_timed_gemm(nd, 1, 0, 0, R, C, V, e, V, w, C, 0.0f, ew, C);
        LT__OMP(parallel for if (R * C > LT__EW_PAR))
        for (r = 0; r < R; r++) {   /* (a loop for each case: vectorized, no test per value) */
            int32_t t = nd->ids[r];
            const float *wt = w + (int64_t)(t == LT_IGNORE_INDEX ? 0 : t) * C;
            float *d = gx + r * C, cr = c[r];
            const float *s = ew + r * C;
            int64_t j;
            if (t == LT_IGNORE_INDEX && add) {
                LT__OMP(simd)
                for (j = 0; j < C; j++) d[j] += cr * s[j];
            } else if (t == LT_IGNORE_INDEX) {
                LT__OMP(simd)
                for (j = 0; j < C; j++) d[j] = cr * s[j];
            } else if (add) {
                LT__OMP(simd)
                for (j = 0; j < C; j++) d[j] += cr * s[j] - g * wt[j];
            } else {
                LT__OMP(simd)
                for (j = 0; j < C; j++) d[j] = cr * s[j] - g * wt[j];
            }
        }
    }
    if (gw) {   /* dW (V,C) (+)= Eᵀ·(c ⊙ x) - g·Σ_r [row t_r] x_r, the rows in order */
        LT__OMP(parallel for if (R * C > LT__EW_PAR))
        for (r = 0; r < R; r++) {
            float cr = c[r];
            int64_t j;
            LT__OMP(simd)
            for (j = 0; j < C; j++) tmp[r * C + j] = cr * x[r * C + j];
        }
        lt__lce_timed_gemm(nd, 1, 1, 0, V, C, R, e, V, tmp, C, addw ? 1.0f : 0.0f, gw, C);
        for (r = 0; r < R; r++) {
            int32_t t = nd->ids[r];
            int64_t j;
            float *d;
            const float *xr = x + r * C;
            if (t == LT_IGNORE_INDEX) continue;
            d = gw + (int64_t)t * C;
            LT__OMP(simd)
            for (j = 0; j < C; j++) d[j] -= g * xr[j];
        }
    }
}

/* pred, target (n) -> loss [1] = Σ (p - t)² / n  (torch.nn.MSELoss, mean);
   dp += dloss·2(p - t)/n,  dt -= the same */
/* ---- @@LOSS.mse  mse ------------------------------------------------------------------------- */
static void lt__mse_fwd(lt__node *nd) {
    const float *p = nd->in[0]->data, *t = nd->in[1]->data;
    int64_t i, n = nd->in[0]->n;
    double s = 0;
    for (i = 0; i < n; i++) { double d = (double)p[i] - t[i]; s += d * d; }
    nd->out->data[0] = (float)(s / (double)n);
}
static void lt__mse_bwd(lt__node *nd) {
    const float *p = nd->in[0]->data, *t = nd->in[1]->data;
    float *gp = lt__grad(nd->in[0], nd->ctx), *gt = lt__grad(nd->in[1], nd->ctx);
    float g = nd->out->grad[0] * 2.0f / (float)nd->in[0]->n;
    int64_t i, n = nd->in[0]->n;
    for (i = 0; i < n; i++) {
        float d = g * (p[i] - t[i]);
        if (gp) gp[i] += d;
        if (gt) gt[i] -= d;
    }
}
LTRAIN_DEF lt_tensor *lt_mse_loss(lt_ctx *ctx, lt_tensor *pred, lt_tensor *target) {
    int64_t one = 1;
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_mse_loss", pred, target)) return NULL;
    if (pred->n != target->n) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_mse_loss: pred is %s, target is %s: they need the same number of "
                     "elements", lt_shape_str(pred, b1, sizeof b1), lt_shape_str(target, b2, sizeof b2));
        return NULL;
    }
    nd = lt__node_new(ctx, LT__OP(mse), 1, &one, pred, target, NULL, 0);
    return lt__run(ctx, nd);
}

/* ---- @@LOSS.gpt  the GPT's loss: its trunk (@@NN), then the head and the cross-entropy ----------- */
/* lt_gpt_loss and lt_gpt_loss_ex: the mean over counted targets (denom <= 0) or the sum / denom.
   At 16-bit precision the head and the loss are one op (linear_ce16, @@LOSS): the same numbers
   as lt_linear + lt_cross_entropy there, without float32 logits.  At float32 one op as well:
   linear_ce_exp (the same loss, the gradients equal to float rounding), or with
   lt_gpt_set_fused_head linear_ce (no logits kept, equal to float rounding); a device (CUDA) runs
   lt_linear + lt_cross_entropy. */
static lt_tensor *lt__gpt_loss(lt_gpt *g, const int32_t *ids, const int32_t *targets, int B, int T,
                               const int32_t *lengths, double denom) {
    lt_tensor *x, *loss;
    if (g && g->ctx && g->ctx->precision != LT_F32 && g->ctx->device == LT_CPU) {   /* CUDA: head + loss apart */
        x = lt__gpt_trunk(g, ids, B, T, lengths);
        if (!x) return NULL;
        loss = lt__linear_ce16(g->ctx, denom > 0 ? "lt_cross_entropy_sum" : "lt_cross_entropy", x, g->head, targets,
                               denom, denom <= 0);
        lt_scope(g->ctx, NULL);
        return loss;
    }
    if (g && g->ctx && g->ctx->precision == LT_F32 && g->ctx->device == LT_CPU) {
        x = lt__gpt_trunk(g, ids, B, T, lengths);
        if (!x) return NULL;
        const char *who = g->fused_head ? (denom > 0 ? "lt_linear_cross_entropy_sum" : "lt_linear_cross_entropy")
                                        : (denom > 0 ? "lt_cross_entropy_sum" : "lt_cross_entropy");
        loss = lt__linear_ce(g->ctx, who, x, g->head, targets, denom, denom <= 0, !g->fused_head);
        lt_scope(g->ctx, NULL);
        return loss;
    }
    x = lt_gpt_forward(g, ids, B, T, lengths);
    if (!x) return NULL;
    return denom > 0 ? lt_cross_entropy_sum(g->ctx, x, targets, denom) : lt_cross_entropy(g->ctx, x, targets);
}
LTRAIN_DEF lt_tensor *lt_gpt_loss(lt_gpt *g, const int32_t *ids, const int32_t *targets, int B, int T) {
    return lt__gpt_loss(g, ids, targets, B, T, NULL, 0);
}


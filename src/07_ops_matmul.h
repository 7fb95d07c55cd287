/* ==== @@OPS (continued)  matmul, linear, conv1d: the ops that call the GEMM ===================== */
/* Holds: the ops built on the GEMM: matmul, linear, conv1d, and their 16-bit forms.
   Calls: @@CORE, @@HALF, @@TENSOR, @@OPS (records, gradients), @@GEMM. */
/* ---- @@OPS.matmul  matmul: y (..., M, N) = op(a) (..., M, K) · op(b) (..., K, N) --------------- */
/* Backward:  d op(a) = dy · op(b)ᵀ,  d op(b) = op(a)ᵀ · dy, written through the stored layouts:
   a stored transposed gets (d op(a))ᵀ = op(b) · dyᵀ, likewise for b. */
#define LT__MM_FLAGS(nd) ((nd)->i[0])    /* LT_TRANS_A | LT_TRANS_B */
#define LT__MM_NB(nd) ((nd)->i[1])       /* batches */
#define LT__MM_M(nd) ((nd)->i[2])
#define LT__MM_N(nd) ((nd)->i[3])
#define LT__MM_K(nd) ((nd)->i[4])
#define LT__MM_SHARED(nd) ((nd)->i[5])   /* b is shared (2-D) by every batch */
static void lt__matmul_fwd(lt__node *nd) {
    int ta = (int)(LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (int)(LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd), q;
    for (q = 0; q < nb; q++)
        lt_sgemm(ta, tb, M, N, K, 1.0f, nd->in[0]->data + q * M * K, ta ? M : K,
                 nd->in[1]->data + (shared ? 0 : q * K * N), tb ? K : N, 0.0f, nd->out->data + q * M * N, N);
}
static void lt__matmul_bwd(lt__node *nd) {
    int ta = (int)(LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (int)(LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd), q;
    int add, addb;
    float *ga = lt__grad_w(nd->in[0], nd->ctx, &add), *gb = lt__grad_w(nd->in[1], nd->ctx, &addb), ba = add ? 1.0f : 0.0f;
    for (q = 0; q < nb; q++) {
        float bb = addb || (shared && q > 0) ? 1.0f : 0.0f;   /* a shared b: the batches add up */
        const float *a = nd->in[0]->data + q * M * K, *b = nd->in[1]->data + (shared ? 0 : q * K * N);
        const float *gy = nd->out->grad + q * M * N;
        if (ga) {
            float *g = ga + q * M * K;
            if (!ta) lt_sgemm(0, !tb, M, K, N, 1.0f, gy, N, b, tb ? K : N, ba, g, K);          /* dA = dY op(B)ᵀ */
            else lt_sgemm(tb, 1, K, M, N, 1.0f, b, tb ? K : N, gy, N, ba, g, M);               /* dAs = op(B) dYᵀ */
        }
        if (gb) {
            float *g = gb + (shared ? 0 : q * K * N);
            if (!tb) lt_sgemm(!ta, 0, K, N, M, 1.0f, a, ta ? M : K, gy, N, bb, g, N);          /* dB = op(A)ᵀ dY */
            else lt_sgemm(1, ta, N, K, M, 1.0f, gy, N, a, ta ? M : K, bb, g, K);               /* dBs = dYᵀ op(A) */
        }
    }
}

static int lt__node16(lt_ctx *ctx, lt__node *nd); /* below: a 16-bit record's precision and copies */

LTRAIN_DEF lt_tensor *lt_matmul(lt_ctx *ctx, lt_tensor *a, lt_tensor *b, int flags) {
    int ta = (flags & LT_TRANS_A) != 0, tb = (flags & LT_TRANS_B) != 0, k;
    int64_t M, K, K2, N, batches = 1, shape[LT_MAX_DIMS];
    char b1[64], b2[64];
    lt__node *nd;
    if (!lt__live(ctx, "lt_matmul", a, b)) return NULL;
    lt_shape_str(a, b1, sizeof b1);
    lt_shape_str(b, b2, sizeof b2);
    if (a->ndim < 2 || b->ndim < 2) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_matmul: a is %s, b is %s: both need 2 or more dims", b1, b2);
        return NULL;
    }
    M = ta ? a->shape[a->ndim - 1] : a->shape[a->ndim - 2];
    K = ta ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
    K2 = tb ? b->shape[b->ndim - 1] : b->shape[b->ndim - 2];
    N = tb ? b->shape[b->ndim - 2] : b->shape[b->ndim - 1];
    if (K != K2) {
        lt_set_error(ctx, LT_ERR_SHAPE, "lt_matmul: a is %s%s, b is %s%s: op(a)'s last dim (%lld) must equal "
                     "op(b)'s first (%lld)", b1, ta ? " (transposed)" : "", b2, tb ? " (transposed)" : "",
                     (long long)K, (long long)K2);
        return NULL;
    }
    if (b->ndim > 2 && b->ndim != a->ndim) goto batch_mismatch;
    for (k = 0; k < a->ndim - 2; k++) {
        if (b->ndim > 2 && b->shape[k] != a->shape[k]) goto batch_mismatch;
        batches *= a->shape[k];
        shape[k] = a->shape[k];
    }
    shape[a->ndim - 2] = M;
    shape[a->ndim - 1] = N;
    nd = lt__node_new(ctx, ctx->precision == LT_F32 ? LT__OP(matmul) : LT__OP(matmul16), a->ndim, shape, a, b, NULL, 0);
    if (!nd) return NULL;
    LT__MM_FLAGS(nd) = flags & (LT_TRANS_A | LT_TRANS_B);
    LT__MM_NB(nd) = batches; LT__MM_M(nd) = M; LT__MM_N(nd) = N; LT__MM_K(nd) = K;
    LT__MM_SHARED(nd) = b->ndim == 2 && a->ndim > 2;
    if (ctx->precision != LT_F32 && !lt__node16(ctx, nd)) return NULL;
    return lt__run(ctx, nd);
batch_mismatch:
    lt_set_error(ctx, LT_ERR_SHAPE, "lt_matmul: a is %s, b is %s: leading (batch) dims must match, or b must be 2-D",
                 b1, b2);
    return NULL;
}

/* ---- @@OPS.linear  linear (torch.nn.Linear) and conv1d (Hugging Face Conv1D) ------------------- */
/* linear: x (R, I), W (O, I), b (O) -> y (R, O) = x·Wᵀ + b
     dx += dy·W,  dW += dyᵀ·x,  db += Σ_rows dy
   conv1d: x (R, I), W (I, O), b (O) -> y (R, O) = x·W + b
     dx += dy·Wᵀ, dW += xᵀ·dy,  db += Σ_rows dy
   (R = all leading dims of x flattened) */
#define LT__AFF_R(nd) ((nd)->i[0])
#define LT__AFF_I(nd) ((nd)->i[1])
#define LT__AFF_O(nd) ((nd)->i[2])
#define LT__AFF_X_GELU16(nd) ((nd)->f[1])   /* linear16/conv1d16: 1 when x is recomputed from gelu16's copy */
/* db += Σ_rows dy: the broadcast-add gradient of @@OPS (threaded by columns, rows in order) */
static void lt__bias_grad(float *gb, const float *gy, int64_t R, int64_t O) {
    lt__bcast_grad_b(gb, gy, NULL, R * O, O, 1.0f, 1);
}
static void lt__linear_fwd(lt__node *nd) {
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    lt__sgemm_bias(0, 1, R, O, Ci, nd->in[0]->data, Ci, nd->in[1]->data, Ci, nd->in[2] ? nd->in[2]->data : NULL,
                   nd->out->data, O);
}
static void lt__linear_bwd(lt__node *nd) {
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    int add, addw;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad_w(nd->in[1], nd->ctx, &addw);
    float *gb = lt__grad(nd->in[2], nd->ctx);
    const float *gy = nd->out->grad;
    if (gx) lt_sgemm(0, 0, R, Ci, O, 1.0f, gy, O, nd->in[1]->data, Ci, add ? 1.0f : 0.0f, gx, Ci);
    if (gw) lt_sgemm(1, 0, O, Ci, R, 1.0f, gy, O, nd->in[0]->data, Ci, addw ? 1.0f : 0.0f, gw, Ci);
    if (gb) lt__bias_grad(gb, gy, R, O);
}
static void lt__conv1d_fwd(lt__node *nd) {
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    lt__sgemm_bias(0, 0, R, O, Ci, nd->in[0]->data, Ci, nd->in[1]->data, O, nd->in[2] ? nd->in[2]->data : NULL,
                   nd->out->data, O);
}
static void lt__conv1d_bwd(lt__node *nd) {
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    int add, addw;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad_w(nd->in[1], nd->ctx, &addw);
    float *gb = lt__grad(nd->in[2], nd->ctx);
    const float *gy = nd->out->grad;
    if (gx) lt_sgemm(0, 1, R, Ci, O, 1.0f, gy, O, nd->in[1]->data, O, add ? 1.0f : 0.0f, gx, Ci);
    if (gw) lt_sgemm(1, 0, Ci, O, R, 1.0f, nd->in[0]->data, Ci, gy, O, addw ? 1.0f : 0.0f, gw, O);
    if (gb) lt__bias_grad(gb, gy, R, O);
}
static lt_tensor *lt__affine(lt_ctx *ctx, const lt__opdef *op, const lt__opdef *op16, const char *who, lt_tensor *x,
                             lt_tensor *w, lt_tensor *b, int w_is_out_in) {
    int64_t Ci, O, shape[LT_MAX_DIMS];
    char b1[64], b2[64], b3[64];
    int k;
    lt__node *nd;
    if (!lt__live(ctx, who, x, w)) return NULL;
    Ci = x->shape[x->ndim - 1];
    O = w_is_out_in ? w->shape[0] : w->shape[1];
    if (w->ndim != 2 || (w_is_out_in ? w->shape[1] : w->shape[0]) != Ci) {
        lt_set_error(ctx, LT_ERR_SHAPE, "%s: x is %s, W is %s: W must be %s with in = x's last dim (%lld)", who,
                     lt_shape_str(x, b1, sizeof b1), lt_shape_str(w, b2, sizeof b2),
                     w_is_out_in ? "[out,in] (torch.nn.Linear layout)" : "[in,out] (Conv1D layout)", (long long)Ci);
        return NULL;
    }
    if (b && (b->n != O)) {
        lt_set_error(ctx, LT_ERR_SHAPE, "%s: W is %s, bias is %s: the bias needs %lld values", who,
                     lt_shape_str(w, b2, sizeof b2), lt_shape_str(b, b3, sizeof b3), (long long)O);
        return NULL;
    }
    for (k = 0; k < x->ndim - 1; k++) shape[k] = x->shape[k];
    shape[x->ndim - 1] = O;
    nd = lt__node_new(ctx, ctx->precision == LT_F32 ? op : op16, x->ndim, shape, x, w, b, 0);
    if (!nd) return NULL;
    LT__AFF_R(nd) = x->n / Ci; LT__AFF_I(nd) = Ci; LT__AFF_O(nd) = O;
    /* x = gelu16(h) whose record keeps h in 16 bits (a compiled plan's, lt__copy16): backward
       recomputes x from that copy while packing (gelu16's table, the same values) instead of
       keeping a second 16-bit copy, of x, as large: the MLP's 4C-wide activation is stored once */
    if (ctx->precision != LT_F32 && x->node && x->node->op == LT__OP(gelu16) && x->node->save[0] &&
        LT__PREC(x->node) == (double)ctx->precision)
        LT__AFF_X_GELU16(nd) = 1.0;
    if (ctx->precision != LT_F32 && !lt__node16(ctx, nd)) return NULL;
    return lt__run(ctx, nd);
}
LTRAIN_DEF lt_tensor *lt_linear(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b) {
    return lt__affine(ctx, LT__OP(linear), LT__OP(linear16), "lt_linear", x, w, b, 1);
}
LTRAIN_DEF lt_tensor *lt_conv1d(lt_ctx *ctx, lt_tensor *x, lt_tensor *w, lt_tensor *b) {
    return lt__affine(ctx, LT__OP(conv1d), LT__OP(conv1d16), "lt_conv1d", x, w, b, 0);
}


/* ---- @@OPS.matmul16  16-bit precision (lt_set_precision, @@HALF): matmul16, linear16, conv1d16 -- */
/* The products above with both operands rounded to bf16 or fp16 and float32 accumulation:
     forward   y  = round16(op(a)16 · op(b)16 + round16(bias))     as torch.autocast's mm/addmm
     backward  da += dy16 · ...,  db += ... (the operands as in the float32 op, all 16-bit),
               dbias += Σ_rows dy16, with float32 sums added straight into the float32 gradients
   The backward products are not rounded to 16 bits, where torch's bf16 mm rounds its output
   before the float32 gradient receives it: the sums are the same, one rounding fewer (as
   Megatron-LM's fused weight-gradient accumulation into float32 main grads).  dy is rounded as
   the GEMM packs it; the gradient buffer itself is not changed.
   The GEMM (@@GEMM) converts 16-bit operands (and rounds float32 ones) while packing them into
   its float32 panels and rounds the output as the register tiles store it (bf16) or each
   finished block of it while it is in cache (fp16) (lt__sgemm_ex), so a 16-bit product
   allocates nothing and runs at the float32 GEMM's speed, or (bf16 with AVX512_BF16) on bf16
   pairs at up to twice that (bench/precision.md).
   A record keeps a 16-bit copy (save[0] of in[0], save[1] of in[1], n_save = half the element
   count in floats) of each operand its backward reads, unless that operand is a parameter (read
   in place, it outlives the step) or, eager, already 16-bit values (lt__copy16); the op rows
   read 0 (@@OPS), so a compiled plan frees the float32 inputs after the forward.  LT__PREC(nd) =
   the precision (LT_BF16 or LT_F16). */
static lt_dtype lt__prec16(const lt__node *nd) { return lt__prec_of(LT__PREC(nd)); }

/* A parameter (or a view of one) is read in place by backward; anything else is copied. */
static int lt__is_param_data(const lt_tensor *t) { return t->is_param || (t->base && t->base->is_param); }

/* The record's precision, and a 16-bit copy of each operand backward will read: in[0] when in[1]
   gets a gradient and the other way round.  0 with the error on ctx when out of memory. */
static int lt__node16(lt_ctx *ctx, lt__node *nd) {
    int j;
    LT__PREC(nd) = (double)ctx->precision;
    if (!nd->out->requires_grad) return 1;
    for (j = 0; j < 2; j++) {
        lt_tensor *t = nd->in[j], *other = nd->in[1 - j];
        if (lt__is_param_data(t) || !other->requires_grad || (j == 0 && LT__AFF_X_GELU16(nd) == 1.0) || !lt__copy16(ctx, t)) continue;
        if (!lt__save(ctx, nd, j, (t->n + 1) / 2)) return 0;
    }
    return 1;
}

/* An operand: element (i,k) of op(X) in batch q is X[q*stride + i*ld + k], or X[q*stride + k*ld + i]
   when trans.  Values come from f (rounded as they are packed) or from a 16-bit copy h. */
typedef struct {
    const float *f;
    const uint16_t *h;
    int64_t ld, stride;
    int trans, gelu;   /* gelu: as lt__gsrc's */
    int exact;         /* f holds 16-bit values already (lt__exact16): fp16 packs them as float32 */
} lt__mm16_opnd;

static lt__mm16_opnd lt__opnd16(const float *f, const uint16_t *h, int64_t ld, int64_t stride, int trans) {
    lt__mm16_opnd o;
    o.f = f; o.h = h; o.ld = ld; o.stride = stride; o.trans = trans; o.gelu = 0; o.exact = 0;
    return o;
}
/* Operand j of a record: its 16-bit copy if it has one, gelu recomputed from gelu16's copy of its
   input (linear16/conv1d16 with LT__AFF_X_GELU16, below), else its float32 values. */
static lt__mm16_opnd lt__opnd16_of(const lt__node *nd, int j, int64_t ld, int64_t stride, int trans) {
    if (j == 0 && (nd->op == LT__OP(linear16) || nd->op == LT__OP(conv1d16)) && LT__AFF_X_GELU16(nd) == 1.0) {
        lt__mm16_opnd o = lt__opnd16(NULL, (const uint16_t *)(const void *)nd->in[0]->node->save[0], ld, stride, trans);
        o.gelu = 1;
        return o;
    }
    if (!nd->save[j]) {
        lt__mm16_opnd o = lt__opnd16(nd->in[j]->data, NULL, ld, stride, trans);
        o.exact = lt__exact16(nd->in[j], lt__prec_of(nd->op == LT__OP(linear_ce16) ? LT__PREC2(nd) : LT__PREC(nd)));
        return o;
    }
    return lt__opnd16(NULL, (const uint16_t *)(const void *)nd->save[j], ld, stride, trans);
}
static lt__gsrc lt__gsrc16(lt_dtype p, const lt__mm16_opnd *x, int64_t q) {
    lt__gsrc s;
    s.f = x->f ? x->f + q * x->stride : NULL;
    s.h = x->h ? x->h + q * x->stride : NULL;
    /* values that are 16-bit already are packed as the float32 they are, but bf16 keeps p where
       its products run on the pair kernel, which wants bf16 on both sides */
    s.p = x->exact && (p == LT_F16 || !lt__gemm16_pairs(lt__gemm_pick())) ? 0 : (int)p;
    s.gelu = x->gelu;
    return s;
}

/* For each batch q < nb, C_q (M,N) at C + q*sc, row stride ldc:
     acc = 0:  C_q  = round16(op(A_q) · op(B_q) + round16(bias))   (bias (N) or NULL)
     acc = 1:  C_q += op(A_q) · op(B_q)                             (float32, not rounded)
     acc = 2:  C_q  = op(A_q) · op(B_q)                             (float32, not rounded)
   with 16-bit operands and float32 sums over K, in the order of the float32 GEMM. */
static void lt__gemm16(lt_dtype p, int64_t nb, int64_t M, int64_t N, int64_t K, const lt__mm16_opnd *A,
                       const lt__mm16_opnd *B, const float *bias, float *C, int64_t ldc, int64_t sc, int acc) {
    lt__gepi e = lt__gepi_of((int)p, bias);
    int64_t q;
    int id = lt__gemm_pick();
    for (q = 0; q < nb; q++)
        lt__sgemm_ex(id, A->trans, B->trans, M, N, K, 1.0f, lt__gsrc16(p, A, q), A->ld, lt__gsrc16(p, B, q), B->ld,
                     acc == 1 ? 1.0f : 0.0f, C + q * sc, ldc, acc ? NULL : &e);
}

/* The 16-bit copies backward reads, made before the product (which may read them). */
static void lt__save16(lt__node *nd) {
    lt_dtype p = lt__prec16(nd);
    int j;
    for (j = 0; j < 2; j++) {
        uint16_t *h = (uint16_t *)(void *)nd->save[j];
        if (!h) continue;
        if (p == LT_F16) lt_f32_to_f16_array(nd->in[j]->data, h, (size_t)nd->in[j]->n);
        else lt_f32_to_bf16_array(nd->in[j]->data, h, (size_t)nd->in[j]->n);
    }
}

/* db += Σ_rows round16(dy), float32 sums (torch sums the bf16 dy its mm reads).  As
   lt__bcast_grad_b: each thread sums blocks of whole columns (lt__col_block), walking the rows in
   order and reading one run of each, which the hardware fetches ahead (blocks of 64 columns, the
   code until 2026-12-04, waited on a few lines of every row: on an AVX2 CPU the bias gradient
   took twice float32's); each column's sum adds the rows in order, so the sums depend neither on
   the blocks nor on the thread count.  dy is read as float32 gy (rounded here) or as its 16-bit
   copy gh (the other NULL). */
#ifdef LT__X86
/* acc[0..w) += row of s (16 or 8 values at a time, as the GEMM's packing rounds them; the last
   ones by the scalar code) */
LT__TARGET("avx512f") static void lt__bg16_row_avx512(const lt__gsrc *s, float *acc, int64_t w) {
    int64_t j = 0;
    for (; j + 16 <= w; j += 16) _mm512_storeu_ps(acc + j, _mm512_add_ps(_mm512_loadu_ps(acc + j), lt__gsrc16_lanes(s, j)));
    for (; j < w; j++) acc[j] += lt__gsrc_one(s, j);
}
LT__TARGET("avx2,fma,f16c") static void lt__bg16_row_avx2(const lt__gsrc *s, float *acc, int64_t w) {
    int64_t j = 0;
    for (; j + 8 <= w; j += 8) _mm256_storeu_ps(acc + j, _mm256_add_ps(_mm256_loadu_ps(acc + j), lt__gsrc8_lanes(s, j)));
    for (; j < w; j++) acc[j] += lt__gsrc_one(s, j);
}
#endif
static void lt__bias_grad16(lt_dtype p, float *gb, const float *gy, const uint16_t *gh, int64_t R, int64_t O) {
    int64_t bw = lt__col_block(O), j0;
    int simd = 0;
    (void)simd;
#ifdef LT__X86
    simd = lt__gemm_supported(LT__GEMM_AVX512) ? 2 : lt__k_available(LT__K_AVX2) ? 1 : 0;
#endif
    LT__OMP(parallel for if (R * O > 65536 && !omp_in_parallel()))
    for (j0 = 0; j0 < O; j0 += bw) {
        float s[LT__BGB_W], acc[LT__BGB_W];
        int64_t w = O - j0 < bw ? O - j0 : bw, r, j;
        lt__gsrc src;
        src.f = NULL; src.h = NULL; src.p = (int)p; src.gelu = 0;
        for (j = 0; j < w; j++) acc[j] = gb[j0 + j];
        for (r = 0; r < R; r++) {
            if (gh) src.h = gh + r * O + j0;
            else src.f = gy + r * O + j0;
#ifdef LT__X86
            if (simd == 2) { lt__bg16_row_avx512(&src, acc, w); continue; }
            if (simd == 1) { lt__bg16_row_avx2(&src, acc, w); continue; }
#endif
            if (gh) lt__from16(p, src.h, s, (size_t)w);
            else lt__round16(p, src.f, s, (size_t)w);
            for (j = 0; j < w; j++) acc[j] += s[j];
        }
        for (j = 0; j < w; j++) gb[j0 + j] = acc[j];
    }
}

/* matmul16: as lt__matmul_fwd / _bwd, operands through lt__gemm16. */
static void lt__matmul16_fwd(lt__node *nd) {
    lt_dtype p = lt__prec16(nd);
    int ta = (int)(LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (int)(LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd);
    lt__mm16_opnd a, b;
    lt__save16(nd);
    a = lt__opnd16_of(nd, 0, ta ? M : K, M * K, ta);
    b = lt__opnd16_of(nd, 1, tb ? K : N, shared ? 0 : K * N, tb);
    lt__gemm16(p, nb, M, N, K, &a, &b, NULL, nd->out->data, N, M * N, 0);
}
static void lt__matmul16_bwd(lt__node *nd) {
    lt_dtype p = lt__prec16(nd);
    int ta = (int)(LT__MM_FLAGS(nd) & LT_TRANS_A) != 0, tb = (int)(LT__MM_FLAGS(nd) & LT_TRANS_B) != 0;
    int64_t nb = LT__MM_NB(nd), M = LT__MM_M(nd), N = LT__MM_N(nd), K = LT__MM_K(nd), shared = LT__MM_SHARED(nd), q;
    int add, addb;
    float *ga = lt__grad_w(nd->in[0], nd->ctx, &add), *gb = lt__grad_w(nd->in[1], nd->ctx, &addb), *gy = nd->out->grad;
    int64_t lda = ta ? M : K, ldb = tb ? K : N, sb = shared ? 0 : K * N;
    lt__mm16_opnd dy = lt__opnd16(gy, NULL, N, M * N, 0), dyt = lt__opnd16(gy, NULL, N, M * N, 1), x, w;
    if (ga) {
        if (!ta) {   /* dA (M,K) += dY · op(B)ᵀ */
            w = lt__opnd16_of(nd, 1, ldb, sb, !tb);
            lt__gemm16(p, nb, M, K, N, &dy, &w, NULL, ga, K, M * K, add ? 1 : 2);
        } else {     /* dAs (K,M) += op(B) · dYᵀ */
            w = lt__opnd16_of(nd, 1, ldb, sb, tb);
            lt__gemm16(p, nb, K, M, N, &w, &dyt, NULL, ga, M, M * K, add ? 1 : 2);
        }
    }
    if (gb && shared && !ta) {   /* one product over all batches' rows (torch folds them into M) */
        x = lt__opnd16_of(nd, 0, K, 0, !tb ? 1 : 0);
        dy.stride = dyt.stride = 0;
        if (!tb) lt__gemm16(p, 1, K, N, nb * M, &x, &dy, NULL, gb, N, 0, addb ? 1 : 2);   /* dB = Aᵀ dY */
        else lt__gemm16(p, 1, N, K, nb * M, &dyt, &x, NULL, gb, K, 0, addb ? 1 : 2);      /* dBs = dYᵀ A */
    } else if (gb) {
        for (q = 0; q < (shared ? nb : 1); q++) {   /* shared b, a transposed: one batch at a time */
            int64_t n1 = shared ? 1 : nb;
            int acc = addb || q > 0 ? 1 : 2;   /* a shared b: the batches add up */
            lt__mm16_opnd dq = lt__opnd16(gy + q * M * N, NULL, N, M * N, 0), dqt = dq;
            dqt.trans = 1;
            x = lt__opnd16_of(nd, 0, lda, M * K, !tb ? !ta : ta);
            if (x.f) x.f += q * M * K;
            else x.h += q * M * K;
            if (!tb) lt__gemm16(p, n1, K, N, M, &x, &dq, NULL, gb, N, sb, acc);   /* dB = op(A)ᵀ dY */
            else lt__gemm16(p, n1, N, K, M, &dqt, &x, NULL, gb, K, sb, acc);      /* dBs = dYᵀ op(A) */
        }
    }
}

/* linear16 (W [O,I], y = x·Wᵀ) and conv1d16 (W [I,O], y = x·W); arguments as the float32 ops'.
   wt: W is [O,I]. */
static void lt__affine16_fwd(lt__node *nd, int wt) {
    lt_dtype p = lt__prec16(nd);
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    lt__mm16_opnd x, w;
    lt__save16(nd);
    if (LT__AFF_X_GELU16(nd) == 1.0) {   /* gelu16's output, read in place: 16-bit values */
        x = lt__opnd16(nd->in[0]->data, NULL, Ci, 0, 0);
        x.exact = lt__exact16(nd->in[0], p);
    } else x = lt__opnd16_of(nd, 0, Ci, 0, 0);
    w = lt__opnd16_of(nd, 1, wt ? Ci : O, 0, wt);
    lt__gemm16(p, 1, R, O, Ci, &x, &w, nd->in[2] ? nd->in[2]->data : NULL, nd->out->data, O, 0, 0);
}
/* Backward reads dy up to three times (dx, dW, db): when more than once, dy is rounded to 16 bits
   once, into a scratch copy the three read (the same values as rounding while packing, half the
   bytes); without memory for the copy each reader rounds the float32 dy itself. */
static void lt__affine16_bwd(lt__node *nd, int wt) {
    lt_dtype p = lt__prec16(nd);
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    int add, addw;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad_w(nd->in[1], nd->ctx, &addw);
    float *gb = lt__grad(nd->in[2], nd->ctx), *gy = nd->out->grad;
    lt__mm16_opnd dy = lt__opnd16(gy, NULL, O, 0, 0), dyt = lt__opnd16(gy, NULL, O, 0, 1), x, w;
    uint16_t *gh = NULL;
    if ((gx != NULL) + (gw != NULL) + (gb != NULL) > 1 && (gh = (uint16_t *)LT__MALLOC((size_t)(R * O) * 2)) != NULL) {
        if (p == LT_F16) lt_f32_to_f16_array(gy, gh, (size_t)(R * O));
        else lt_f32_to_bf16_array(gy, gh, (size_t)(R * O));
        dy = lt__opnd16(NULL, gh, O, 0, 0);
        dyt = lt__opnd16(NULL, gh, O, 0, 1);
    }
    if (gx) {   /* dx (R,I) += dy · W (linear) or dy · Wᵀ (conv1d) */
        w = lt__opnd16_of(nd, 1, wt ? Ci : O, 0, !wt);
        lt__gemm16(p, 1, R, Ci, O, &dy, &w, NULL, gx, Ci, 0, add ? 1 : 2);
    }
    if (gw) {
        if (wt) {   /* dW (O,I) += dyᵀ · x */
            x = lt__opnd16_of(nd, 0, Ci, 0, 0);
            lt__gemm16(p, 1, O, Ci, R, &dyt, &x, NULL, gw, Ci, 0, addw ? 1 : 2);
        } else {    /* dW (I,O) += xᵀ · dy */
            x = lt__opnd16_of(nd, 0, Ci, 0, 1);
            lt__gemm16(p, 1, Ci, O, R, &x, &dy, NULL, gw, O, 0, addw ? 1 : 2);
        }
    }
    if (gb) lt__bias_grad16(p, gb, gh ? NULL : gy, gh, R, O);
    LT__FREE(gh);
}
static void lt__linear16_fwd(lt__node *nd) { lt__affine16_fwd(nd, 1); }
static void lt__linear16_bwd(lt__node *nd) { lt__affine16_bwd(nd, 1); }
static void lt__conv1d16_fwd(lt__node *nd) { lt__affine16_fwd(nd, 0); }
static void lt__conv1d16_bwd(lt__node *nd) { lt__affine16_bwd(nd, 0); }


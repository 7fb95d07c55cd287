/* ==== @@OPS (continued)  matmul, linear, conv1d: the ops that call the GEMM ===================== */
/* Holds: the ops built on the GEMM: matmul, linear, conv1d, and their 16-bit forms; attention16's
   op functions, with its bf16 kernels on AMX tiles (@@GEMM.amx's).
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
#define LT__AFF_DY16(nd) ((nd)->i[3])       /* linear16/conv1d16: 1 when dy comes as 16-bit values (gelu16's) */
#define LT__AFF_Y16_TO(nd) ((nd)->i[5])     /* linear16/conv1d16: > 0 when y goes only to its reader's copy */
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
/* linear16, conv1d16, linear_ce16 in a compiled plan: 1 when the 16-bit copy of x is the one the
   norm that made x wrote (layernorm16 or rmsnorm16 with LT__LN_Y16: @@COMPILE's lt__plan_norm16_y),
   not the record's own */
#define LT__X_NORM16(nd) ((nd)->i[4])
static int lt__x16_of_norm(const lt__node *nd) {
    return (nd->op == LT__OP(linear16) || nd->op == LT__OP(conv1d16) || nd->op == LT__OP(linear_ce16)) &&
           LT__X_NORM16(nd);
}
/* Operand j of a record: its 16-bit copy if it has one (or the norm's, above), gelu recomputed
   from gelu16's copy of its input (linear16/conv1d16 with LT__AFF_X_GELU16, below), else its
   float32 values. */
static lt__mm16_opnd lt__opnd16_of(const lt__node *nd, int j, int64_t ld, int64_t stride, int trans) {
    if (j == 0 && lt__x16_of_norm(nd)) return lt__opnd16(NULL, lt__norm16_y16(nd->in[0]->node), ld, stride, trans);
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
    lt__gsrc s = lt__gsrc_f32(x->f ? x->f + q * x->stride : NULL);
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

/* C = round16(op(A) · op(B) + round16(bias)) as lt__gemm16's acc = 0, written only as 16-bit
   values into z (row stride N), each finished block narrowed while it is in cache (lt__gepi's z,
   @@GEMM): the float32 C is never written.  The blocks pass through the context's scratch
   (lt__ctx_work, as many floats as lt__sgemm_ex's z mode asks: M x LT__Z_COLS a thread). */
#define LT__Z_COLS 1040
static void lt__gemm16_z(lt_ctx *ctx, lt_dtype p, int64_t M, int64_t N, int64_t K, const lt__mm16_opnd *A,
                         const lt__mm16_opnd *B, const float *bias, uint16_t *z) {
    int nt = lt_get_threads() < 1 ? 1 : lt_get_threads();
    size_t bytes = 0;
    float *scr = NULL;
    lt__gepi e = lt__gepi_of((int)p, bias);
    if (lt_mul_size((size_t)nt * (size_t)M, LT__Z_COLS * sizeof(float), &bytes)) scr = (float *)lt__ctx_work(ctx, bytes);
    if (!scr) {
        lt_set_error(ctx, LT_ERR_NOMEM, "a 16-bit product (%lld x %lld): out of memory for %zu bytes of scratch",
                     (long long)M, (long long)N, bytes);
        return;
    }
    e.z = z;
    e.ldz = N;
    e.nscr = nt;
    lt__sgemm_ex(lt__gemm_pick(), A->trans, B->trans, M, N, K, 1.0f, lt__gsrc16(p, A, 0), A->ld, lt__gsrc16(p, B, 0),
                 B->ld, 0.0f, scr, LT__Z_COLS, &e);
}

/* The 16-bit copies backward reads, made before the product (which may read them). */
static void lt__save16(lt__node *nd) {
    lt_dtype p = lt__prec16(nd);
    int j;
    for (j = 0; j < 2; j++) {
        uint16_t *h = (uint16_t *)(void *)nd->save[j];
        if (!h) continue;
        lt__to16_array(p, nd->in[j]->data, h, (size_t)nd->in[j]->n);
    }
}

/* db += Σ_rows round16(dy), float32 sums (torch sums the bf16 dy its mm reads).  As
   lt__bcast_grad_b: each thread sums blocks of whole columns (lt__col_block), walking the rows in
   order and reading one run of each, which the hardware fetches ahead (blocks of 64 columns, the
   code until 2026-12-04, waited on a few lines of every row: on an AVX2 CPU the bias gradient
   took twice float32's); each column's sum adds the rows in order, so the sums depend neither on
   the blocks nor on the thread count.  dy is read as float32 gy (rounded here) or as its 16-bit
   copy gh (the other NULL); given both, the copy is made here on the way: each row's piece of gy
   rounded into gh (lt__to16, the kernel of lt_f32_to_bf16_array: the same bits) and summed from
   there while it is in L1, one pass over dy for the copy and the sums instead of two (bf16 with
   AVX-512 or AVX2: rounded, stored and summed in registers, lt__bg16_row_to_bf16_*). */
#ifdef LT__X86
/* acc[0..w) += row of s (16 or 8 values at a time, as the GEMM's packing rounds them; the last
   ones by the scalar code) */
LT__TARGET("avx512f") static void lt__bg16_row_avx512(const lt__gsrc *s, float *acc, int64_t w) {
    const lt__gsrc c = *s;   /* (the fields in registers: at lt__gsrc, @@GEMM) */
    int64_t j = 0;
    for (; j + 16 <= w; j += 16) _mm512_storeu_ps(acc + j, _mm512_add_ps(_mm512_loadu_ps(acc + j), lt__gsrc16_lanes(&c, j)));
    for (; j < w; j++) acc[j] += lt__gsrc_one(s, j);
}
LT__TARGET("avx2,fma,f16c") static void lt__bg16_row_avx2(const lt__gsrc *s, float *acc, int64_t w) {
    const lt__gsrc c = *s;   /* (the fields in registers: at lt__gsrc, @@GEMM) */
    int64_t j = 0;
    for (; j + 8 <= w; j += 8) _mm256_storeu_ps(acc + j, _mm256_add_ps(_mm256_loadu_ps(acc + j), lt__gsrc8_lanes(&c, j)));
    for (; j < w; j++) acc[j] += lt__gsrc_one(s, j);
}
/* bf16, the copy made on the way: gh[0..w) = the patterns of gy rounded (lt__bf16_round16 / 8, the
   bits of lt_f32_to_bf16) and acc += their values, 16 or 8 at a time in registers (the last few by
   the scalar code) */
LT__TARGET("avx512f") static void lt__bg16_row_to_bf16_avx512(const float *gy, uint16_t *gh, float *acc, int64_t w) {
    int64_t j = 0;
    for (; j + 16 <= w; j += 16) {
        __m512i r = lt__bf16_round16(_mm512_loadu_si512((const void *)(gy + j)));
        _mm256_storeu_si256((__m256i *)(void *)(gh + j), _mm512_maskz_cvtepi32_epi16(LT__M16, r));
        _mm512_storeu_ps(acc + j, _mm512_add_ps(_mm512_loadu_ps(acc + j),
                                                _mm512_castsi512_ps(_mm512_maskz_slli_epi32(LT__M16, r, 16))));
    }
    for (; j < w; j++) {
        gh[j] = lt_f32_to_bf16(gy[j]);
        acc[j] += lt_bf16_to_f32(gh[j]);
    }
}
LT__TARGET("avx2,fma") static void lt__bg16_row_to_bf16_avx2(const float *gy, uint16_t *gh, float *acc, int64_t w) {
    int64_t j = 0;
    for (; j + 8 <= w; j += 8) {
        __m256i r = lt__bf16_round8(_mm256_loadu_si256((const __m256i *)(const void *)(gy + j)));
        __m256i h = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);   /* the 8 patterns, low half */
        _mm_storeu_si128((__m128i *)(void *)(gh + j), _mm256_castsi256_si128(h));
        _mm256_storeu_ps(acc + j, _mm256_add_ps(_mm256_loadu_ps(acc + j), _mm256_castsi256_ps(_mm256_slli_epi32(r, 16))));
    }
    for (; j < w; j++) {
        gh[j] = lt_f32_to_bf16(gy[j]);
        acc[j] += lt_bf16_to_f32(gh[j]);
    }
}
#endif
static void lt__bias_grad16(lt_dtype p, float *gb, const float *gy, uint16_t *gh, int64_t ldh, int64_t R, int64_t O) {
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
        lt__gsrc src = lt__gsrc_f32(NULL);
        src.p = (int)p;
        for (j = 0; j < w; j++) acc[j] = gb[j0 + j];
        for (r = 0; r < R; r++) {
#ifdef LT__X86
            if (gh && gy && p == LT_BF16 && simd) {
                if (simd == 2) lt__bg16_row_to_bf16_avx512(gy + r * O + j0, gh + r * ldh + j0, acc, w);
                else lt__bg16_row_to_bf16_avx2(gy + r * O + j0, gh + r * ldh + j0, acc, w);
                continue;
            }
#endif
            if (gh && gy) lt__to16(p, gy + r * O + j0, gh + r * ldh + j0, (size_t)w);
            if (gh) src.h = gh + r * ldh + j0;
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
   wt: W is [O,I].  In a compiled plan whose only reader of y keeps y as 16-bit values, attention16
   (its q, k, v, first in save[1]) or gelu16 with its own output unmade (save[0]), y may go there
   and nowhere else (@@COMPILE's lt__plan_y16_homes): the records of a plan are one array, and
   that reader is LT__AFF_Y16_TO(nd) records on. */
static uint16_t *lt__y16_home(lt__node *nd) {
    const lt__node *r = nd + LT__AFF_Y16_TO(nd);
    return (uint16_t *)(void *)r->save[r->op == LT__OP(gelu16) ? 0 : 1];
}
static void lt__affine16_fwd(lt__node *nd, int wt) {
    lt_dtype p = lt__prec16(nd);
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    const float *bias = nd->in[2] ? nd->in[2]->data : NULL;
    lt__mm16_opnd x, w;
    lt__save16(nd);
    x = lt__opnd16_of(nd, 0, Ci, 0, 0);   /* (gelu16's output recomputed from its copy, as backward) */
    w = lt__opnd16_of(nd, 1, wt ? Ci : O, 0, wt);
    if (LT__AFF_Y16_TO(nd) > 0)
        lt__gemm16_z(nd->ctx, p, R, O, Ci, &x, &w, bias, lt__y16_home(nd));
    else lt__gemm16(p, 1, R, O, Ci, &x, &w, bias, nd->out->data, O, 0, 0);
}
/* Backward reads dy up to three times (dx, dW, db): when more than once, dy is rounded to 16 bits
   once, into a scratch copy the three read (the same values as rounding while packing, half the
   bytes); without memory for the copy each reader rounds the float32 dy itself.  At 1 thread the
   bias gradient's pass makes the copy (lt__bias_grad16).  With more, that pass is split by
   columns, so half of each row of the copy would sit in the other core's cache when the products,
   split by rows, read it (a step 1.08x slower, bench/precision.md): the copy is made by rows.
   In a compiled plan dy may come as that copy already, rows 2·O apart (LT__AFF_DY16: gelu16's
   backward wrote it over dy's float32 rows). */
static void lt__affine16_bwd(lt__node *nd, int wt) {
    lt_dtype p = lt__prec16(nd);
    int64_t R = LT__AFF_R(nd), Ci = LT__AFF_I(nd), O = LT__AFF_O(nd);
    int add, addw;
    float *gx = lt__grad_w(nd->in[0], nd->ctx, &add), *gw = lt__grad_w(nd->in[1], nd->ctx, &addw);
    float *gb = lt__grad(nd->in[2], nd->ctx), *gy = nd->out->grad;
    lt__mm16_opnd dy = lt__opnd16(gy, NULL, O, 0, 0), dyt = lt__opnd16(gy, NULL, O, 0, 1), x, w;
    uint16_t *gh = NULL, *own = NULL;
    int64_t ldh = O;
    if (LT__AFF_DY16(nd)) { gh = (uint16_t *)(void *)gy; ldh = 2 * O; }   /* made by gelu16's backward (LT__G16_DX16) */
    else if ((gx != NULL) + (gw != NULL) + (gb != NULL) > 1 && (gh = own = (uint16_t *)LT__MALLOC((size_t)(R * O) * 2))) {
        if (gb && lt_get_threads() <= 1) {   /* the copy and db in one pass; db is done */
            lt__bias_grad16(p, gb, gy, gh, O, R, O);
            gb = NULL;
        } else lt__to16_array(p, gy, gh, (size_t)(R * O));
    }
    if (gh) {
        dy = lt__opnd16(NULL, gh, ldh, 0, 0);
        dyt = lt__opnd16(NULL, gh, ldh, 0, 1);
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
    if (gb) lt__bias_grad16(p, gb, gh ? NULL : gy, gh, ldh, R, O);
    LT__FREE(own);
}
/* May gelu16's record g write its dx at 16 bits for the 16-bit product that made its input
   (LT__G16_DX16 and LT__AFF_DY16, set by lt_backward on the tape and by a compiled plan)?  Yes when
   that input's gradient comes from g alone (readers: the (record, input) pairs that read it) and
   is no one else's to see. */
static int lt__dx16_pair(const lt__node *g, int readers) {
    const lt__node *pr = g->in[0] ? g->in[0]->node : NULL;
    return g->op == LT__OP(gelu16) && pr && (pr->op == LT__OP(linear16) || pr->op == LT__OP(conv1d16)) &&
           LT__PREC(pr) == LT__PREC(g) && !g->in[0]->retain_grad && readers == 1;
}
static void lt__dx16_mark(lt__node *g) {
    LT__G16_DX16(g) = 1;
    LT__AFF_DY16(g->in[0]->node) = 1;
}

static void lt__linear16_fwd(lt__node *nd) { lt__affine16_fwd(nd, 1); }
static void lt__linear16_bwd(lt__node *nd) { lt__affine16_bwd(nd, 1); }
static void lt__conv1d16_fwd(lt__node *nd) { lt__affine16_fwd(nd, 0); }
static void lt__conv1d16_bwd(lt__node *nd) { lt__affine16_bwd(nd, 0); }

/* ---- @@OPS.attention16  attention at 16 bits: the float32 kernels, or bf16 block products ------ */
/* attention16 (lt_attention under lt_set_precision 16-bit) and attention_gqa16 round q, k, v to 16
   bits, run attention on them and round y (@@OPS.attention holds the records and the float32
   kernels).  Everywhere but one case the arithmetic is float32: the float32 kernels on the
   rounded values.  The case: bf16 on a CPU with AMX, or with AVX512_BF16 on AMD's cores
   (lt__att16_unit), a head of at most LT__A16_DMAX channels, sequences of more than one block of
   64 (at T = 64 a head has one block product of each kind, and the set-up costs what the tiles
   save: GPT-2's shape at 2 threads ran its backward 0.96 ms against the float32 kernels' 0.76,
   bench/attention.md).  There the seven block products of each unit are bf16 products summed in
   float32, on the tiles (tdpbf16ps) or on pairs (vdpbf16ps, lt__a16_mm_dp), as torch's CPU flash
   attention does for bf16:
     forward, per (b, h, block of 64 queries), over blocks of 64 keys up to the diagonal:
       S = Q·Kᵀ;  per query m' = max(m, max scale·S), P = exp(scale·S - m'),
       l = l·exp(m - m') + Σ P,  Y = Y·exp(m - m') + bf16(P)·V;  at the end Y /= l, L = m + log l
     backward, per (b, h), over blocks of 64 keys, then over the blocks of 64 queries that see them:
       P = exp(scale·Q·Kᵀ - L),  dV += bf16(P)ᵀ·bf16(dY),  dP = bf16(dY)·Vᵀ,  dS = P ⊙ (dP - D),
       dK += scale·bf16(dS)ᵀ·Q,  dQ += scale·bf16(dS)·K       (D_t = dy_t·y_t as the float32 kernel)
   So P, dY and dS are rounded to bf16 where they enter a product, as q, k and v are (P and dS by
   the CPU's own conversion, lt__a16_st): y and the gradients move by about a bf16 rounding
   against the float32 kernels' (tests/test_ops.c holds the two to that bound).  The softmax, l,
   L, D and the sums stay float32; a unit's sums run in one order, so the thread count changes no
   bit.  LT_ATT16=f32 in the environment keeps the float32 kernels.
   The operands as the tiles take them (@@GEMM.amx; the pair kernel reads the same): A row-major
   bf16, a tile row 32 values of k;
   B as pair words, word m of column j holding k = 2m (low half) and 2m + 1.  For a product over
   the head's channels (S = Q·Kᵀ: column u of B is key u) B is the 32-bit transpose of the key
   rows, whose pairs are neighbours already (lt__a16_tr); for one over keys or queries (P·V,
   column d is channel d) two rows interleaved by 16-bit halves make a pair row (lt__a16_ilv); a
   transposed A (Pᵀ, dSᵀ) is for the tiles the 32-bit transpose of the interleaved rows, while the
   pair kernel reads the interleaved rows as they are (lt__a16_prod_t).  Blocks are padded to 32
   rows and the channels to a multiple of 32 with zeros, which add nothing. */
#define LT__A16_B 64        /* queries and keys per block */
#define LT__A16_DMAX 128    /* the most channels per head the bf16 kernels take */
static int lt__att16_off = -1;   /* 1: the float32 kernels always (LT_ATT16=f32; tests set it) */
static int lt__att16_pairs = -1; /* 1: AVX512_BF16 pairs even where AMX is (LT_ATT16=pairs; tests set it) */

#ifdef LT__AMX
/* C (m x n, float32) (+)= A·B: A bf16 rows (lda values apart), B pair rows (ldb words apart),
   m, n and k multiples of 32, in 2 x 2 tiles.  tri skips what the causal mask zeroes, with the
   modes of lt__att_mm (@@OPS.attention) on 32-row blocks: LT__ATT_NLE skips (does not write)
   blocks whose columns all lie past row + off; LT__ATT_KLE / LT__ATT_KGE skip the k steps whose
   A values are all zero (k > row + off, k < row + off). */
LT__TARGET("amx-tile,amx-bf16") static void lt__a16_mm(int tri, int64_t off, int64_t m, int64_t n, int64_t k,
                                                       const uint16_t *A, int64_t lda, const uint32_t *B, int64_t ldb,
                                                       int acc, float *C, int64_t ldc) {
    int64_t i, j, kk;
    for (i = 0; i < m; i += 32) {
        int64_t k0 = 0, k1 = k;
        if (tri == LT__ATT_KLE) k1 = i + 31 + off < 0 ? 0 : (i + 31 + off) / 32 * 32 + 32;
        if (tri == LT__ATT_KGE && i + off > 0) k0 = (i + off) / 32 * 32;
        k1 = k1 < k ? k1 : k;
        for (j = 0; j < n; j += 32) {
            float *c = C + i * ldc + j;
            if (tri == LT__ATT_NLE && j > i + 31 + off) continue;
            if (acc) {
                _tile_loadd(0, c, ldc * 4);
                _tile_loadd(1, c + 16, ldc * 4);
                _tile_loadd(2, c + 16 * ldc, ldc * 4);
                _tile_loadd(3, c + 16 * ldc + 16, ldc * 4);
            } else {
                _tile_zero(0);
                _tile_zero(1);
                _tile_zero(2);
                _tile_zero(3);
            }
            for (kk = k0; kk < k1; kk += 32) {
                _tile_loadd(4, A + i * lda + kk, lda * 2);
                _tile_loadd(5, A + (i + 16) * lda + kk, lda * 2);
                _tile_loadd(6, B + kk / 2 * ldb + j, ldb * 4);
                _tile_loadd(7, B + kk / 2 * ldb + j + 16, ldb * 4);
                _tile_dpbf16ps(0, 4, 6);
                _tile_dpbf16ps(1, 4, 7);
                _tile_dpbf16ps(2, 5, 6);
                _tile_dpbf16ps(3, 5, 7);
            }
            _tile_stored(0, c, ldc * 4);
            _tile_stored(1, c + 16, ldc * 4);
            _tile_stored(2, c + 16 * ldc, ldc * 4);
            _tile_stored(3, c + 16 * ldc + 16, ldc * 4);
        }
    }
}

/* The same product on AVX512_BF16 pairs (vdpbf16ps, @@GEMM.bf16dp), where bf16 products run on
   pairs rather than tiles (lt__gemm_dp: AMD's cores): the same operands, 8 rows x 32 columns of C
   in 16 registers, each step one pair word of A's row broadcast against a pair row of B (k = 2m,
   2m + 1).  The causal skips are those above, taken per 8 rows (k rounded out to whole pairs):
   what they leave out is zeros, or columns no reader looks at.  The sums run over k in order, a
   pair at a time: the float32 sums of bf16 products that the tiles make, but for the last bits.
   A comes as the tiles take it (rows of bf16, lt__a16_mm_dp) or as pair words k-major
   (lt__a16_mm_dpt: word (m, r) at A[m·lda + r] holds k = 2m and 2m + 1 of row r, lda words; what
   lt__a16_prod_t hands it). */
#define LT__A16_DP_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define LT__A16_DP_LOAD(r)                                                                         \
    __m512 c##r##a = acc ? _mm512_loadu_ps(cc + r * ldc) : _mm512_setzero_ps();                    \
    __m512 c##r##b = acc ? _mm512_loadu_ps(cc + r * ldc + 16) : _mm512_setzero_ps();
#define LT__A16_DP_STEP(r)                                                                         \
    memcpy(&w, LT__A16_DP_A(r), 4);                                                                \
    av = _mm512_set1_epi32(w);                                                                     \
    c##r##a = _mm512_dpbf16_ps(c##r##a, (__m512bh)av, (__m512bh)b0);                               \
    c##r##b = _mm512_dpbf16_ps(c##r##b, (__m512bh)av, (__m512bh)b1);
#define LT__A16_DP_STORE(r)                                                                        \
    _mm512_storeu_ps(cc + r * ldc, c##r##a);                                                       \
    _mm512_storeu_ps(cc + r * ldc + 16, c##r##b);
#define LT__A16_DP_KERNEL(name, AT)                                                                \
    LT__TARGET("avx512f,avx512bf16") static void name(int tri, int64_t off, int64_t m, int64_t n, int64_t k, \
                                                     const AT *A, int64_t lda, const uint32_t *B, int64_t ldb, \
                                                     int acc, float *C, int64_t ldc) {                      \
    int64_t i, j, q;                                                                               \
    for (i = 0; i < m; i += 8) {                                                                   \
        int64_t k0 = 0, k1 = k;                                                                    \
        if (tri == LT__ATT_KLE) k1 = i + 8 + off <= 0 ? 0 : (i + 8 + off + 1) / 2 * 2;             \
        if (tri == LT__ATT_KGE && i + off > 0) k0 = (i + off) / 2 * 2;                             \
        k1 = k1 < k ? k1 : k;                                                                      \
        for (j = 0; j < n; j += 32) {                                                              \
            float *cc = C + i * ldc + j;                                                           \
            if (tri == LT__ATT_NLE && j > i + 7 + off) continue;                                   \
            {                                                                                      \
                LT__A16_DP_ROWS(LT__A16_DP_LOAD)                                                   \
                for (q = k0 / 2; q < k1 / 2; q++) {                                                \
                    __m512i b0 = _mm512_loadu_si512((const void *)(B + q * ldb + j));              \
                    __m512i b1 = _mm512_loadu_si512((const void *)(B + q * ldb + j + 16)), av;     \
                    int32_t w;                                                                     \
                    LT__A16_DP_ROWS(LT__A16_DP_STEP)                                               \
                }                                                                                  \
                LT__A16_DP_ROWS(LT__A16_DP_STORE)                                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
}
#define LT__A16_DP_A(r) (A + (i + r) * lda + 2 * q)
LT__A16_DP_KERNEL(lt__a16_mm_dp, uint16_t)
#undef LT__A16_DP_A
#define LT__A16_DP_A(r) (A + q * lda + i + r)
LT__A16_DP_KERNEL(lt__a16_mm_dpt, uint32_t)
#undef LT__A16_DP_A
#undef LT__A16_DP_KERNEL
#undef LT__A16_DP_ROWS
#undef LT__A16_DP_LOAD
#undef LT__A16_DP_STEP
#undef LT__A16_DP_STORE
/* a product of the bf16 kernels on the CPU's kind of unit (a->amx: tiles, else pairs) */
static void lt__a16_prod(const lt__att_src *a, int tri, int64_t off, int64_t m, int64_t n, int64_t k,
                         const uint16_t *A, int64_t lda, const uint32_t *B, int64_t ldb, int acc, float *C, int64_t ldc) {
    if (a->amx) lt__a16_mm(tri, off, m, n, k, A, lda, B, ldb, acc, C, ldc);
    else lt__a16_mm_dp(tri, off, m, n, k, A, lda, B, ldb, acc, C, ldc);
}

/* the first n of 16 lanes (none for n <= 0, all for n >= 16) */
static inline __mmask16 lt__a16_first(int64_t n) {
    return (__mmask16)(n >= 16 ? 0xFFFFu : n <= 0 ? 0u : (1u << n) - 1u);
}
/* how many keys of a w-wide key block row t of an n-row query block sees, the key block starting
   o positions before the query block (causal: keys u <= t + o; none for a padding row t >= n) */
static inline int64_t lt__a16_vis(int64_t t, int64_t n, int64_t o, int64_t w) {
    return t >= n || t + o + 1 <= 0 ? 0 : t + o + 1 < w ? t + o + 1 : w;
}
/* 16 floats stored as bf16 by the CPU's own conversion (vcvtneps2bf16, AVX512_BF16, which every
   CPU with AMX has): round to nearest even as the library's lt_f32_to_bf16, in 2 instructions
   where that takes 10, but with subnormal inputs taken as 0 and a NaN's bits kept (quieted).  For
   P and dS, which only enter the products: values below 2^-126 add nothing there. */
LT__TARGET("avx512f,avx512bf16") static inline void lt__a16_st(uint16_t *o, __m512 v) {
    _mm256_storeu_si256((__m256i *)(void *)o, (__m256i)_mm512_cvtneps_pbh(v));
}
/* exp(scale·x - c) in the lanes of mk (x read there only), 0 in the others */
LT__TARGET("avx512f") static inline __m512 lt__a16_exp(__mmask16 mk, const float *x, __m512 scale, __m512 c) {
    __m512 v = _mm512_maskz_sub_ps(mk, _mm512_mul_ps(scale, _mm512_maskz_loadu_ps(mk, x)), c);
    return _mm512_maskz_mov_ps(mk, lt__exp_neg16(v));
}
/* 16 floats as bf16 (the library's rounding, lt_f32_to_bf16), past the first n zeros */
LT__TARGET("avx512f,avx512bw") static inline __m256i lt__a16_cvt16(const float *x, int64_t n) {
    __mmask16 mk = lt__a16_first(n);
    return _mm512_maskz_cvtepi32_epi16(mk, lt__bf16_round16(_mm512_maskz_loadu_epi32(mk, x)));
}
/* the cache lines of row r of lt__a16_rows's source, fetched ahead: the rows lie ldx apart, each
   on pages of its own, which the hardware's prefetchers do not follow */
static void lt__a16_fetch(const float *x, const uint16_t *h, int64_t ldx, int64_t r, int64_t n_col) {
    if (h) lt__fetch(h + r * ldx, 0, n_col * 2, LT__FETCH_L1);
    else lt__fetch(x + r * ldx, 0, n_col * 4, LT__FETCH_L1);
}
/* np rows of dp bf16 into o: rows < n from x (row stride ldx; float32 rounded, or the 16-bit
   copy h as it is), n_col values each, zeros past them and in rows >= n */
LT__TARGET("avx512f,avx512bw") static void lt__a16_rows(const float *x, const uint16_t *h, int64_t ldx, int64_t n,
                                                       int64_t n_col, int64_t np, int64_t dp, uint16_t *o) {
    int64_t r, d;
    for (r = 0; r < 8 && r < n; r++) lt__a16_fetch(x, h, ldx, r, n_col);
    for (r = 0; r < np; r++, o += dp) {
        if (r >= n) { memset(o, 0, (size_t)dp * 2); continue; }
        if (r + 8 < n) lt__a16_fetch(x, h, ldx, r + 8, n_col);
        if (h) {
            memcpy(o, h + r * ldx, (size_t)n_col * 2);
            if (dp > n_col) memset(o + n_col, 0, (size_t)(dp - n_col) * 2);
        } else
            for (d = 0; d < dp; d += 16)
                _mm256_storeu_si256((__m256i *)(void *)(o + d), lt__a16_cvt16(x + r * ldx + d, n_col - d));
    }
}
/* pair rows from rows: o (np/2 x dp words), word (m, d) = x[2m][d] | x[2m+1][d] << 16; x: np rows
   of dp bf16 (dp a multiple of 32) */
LT__TARGET("avx512f,avx512bw") static void lt__a16_ilv(const uint16_t *x, int64_t np, int64_t dp, uint32_t *o) {
    const __m512i lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6,
                                        37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
    const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
    int64_t m, d;
    for (m = 0; m < np / 2; m++)
        for (d = 0; d < dp; d += 32) {
            __m512i a = _mm512_loadu_si512((const void *)(x + 2 * m * dp + d));
            __m512i b = _mm512_loadu_si512((const void *)(x + (2 * m + 1) * dp + d));
            _mm512_storeu_si512((void *)(o + m * dp + d), _mm512_permutex2var_epi16(a, lo, b));
            _mm512_storeu_si512((void *)(o + m * dp + d + 16), _mm512_permutex2var_epi16(a, hi, b));
        }
}
/* o (cw x r words, row stride r) = the 32-bit transpose of x (r x cw words), both multiples of 16 */
LT__TARGET("avx512f") static void lt__a16_tr(const uint32_t *x, int64_t r, int64_t cw, uint32_t *o) {
    int64_t i, j, t;
    for (i = 0; i < r; i += 16)
        for (j = 0; j < cw; j += 16) {
            __m512i v[16], w[16];
            for (t = 0; t < 16; t++) v[t] = _mm512_loadu_si512((const void *)(x + (i + t) * cw + j));
            lt__tr16_epi32(v, w);
            for (t = 0; t < 16; t++) _mm512_storeu_si512((void *)(o + (j + t) * r + i), w[t]);
        }
}
/* xt (cols x rows bf16) = xᵀ, x rows x cols bf16 (rows a multiple of 32, cols of 16): the rows
   interleaved into pair words (tmp, rows/2 x cols words), turned over */
static void lt__a16_t(const uint16_t *x, int64_t rows, int64_t cols, uint32_t *tmp, uint16_t *xt) {
    lt__a16_ilv(x, rows, cols, tmp);
    lt__a16_tr(tmp, rows / 2, cols, (uint32_t *)(void *)xt);
}
/* C (wp x dp, float32) (+)= xᵀ·B: x the np x wp bf16 block of P or dS (rows queries, columns the
   keys of a block o positions before them), B the queries' pair rows (np/2 x dp words: dY's or
   Q's), the causal skip of KGE (key u sees queries t >= u - o).  The tiles take xᵀ as bf16 rows
   (lt__a16_t, through tmp into xt); the pair kernel takes x's interleaved rows as they are
   (lt__a16_mm_dpt), so its operand is never turned over. */
static void lt__a16_prod_t(const lt__att_src *a, const uint16_t *x, int64_t np, int64_t wp, uint32_t *tmp, uint16_t *xt,
                           int64_t o, int64_t dp, const uint32_t *B, int acc, float *C) {
    if (a->amx) {
        lt__a16_t(x, np, wp, tmp, xt);
        lt__a16_prod(a, LT__ATT_KGE, -o, wp, dp, np, xt, np, B, dp, acc, C, dp);
        return;
    }
    lt__a16_ilv(x, np, wp, tmp);
    lt__a16_mm_dpt(LT__ATT_KGE, -o, wp, dp, np, tmp, wp, B, dp, acc, C, dp);
}
/* rows r0.. of part w of head h (k, v: its kv head), batch b: lt__a16_rows from the source */
static void lt__a16_part(const lt__att_src *a, int w, int64_t b, int64_t h, int64_t r0, int64_t n, int64_t np,
                         int64_t dp, uint16_t *o) {
    int64_t off = (b * a->T + r0) * a->ld[w] + (w ? h / a->G : h) * a->D;
    lt__a16_rows(a->h[w] ? NULL : a->f[w] + off, a->h[w] ? a->h[w] + off : NULL, a->ld[w], n, a->D, np, dp, o);
}
/* g rows (stride ldg) = (add ? g : 0) + f·x rows (stride ldx), n rows of D */
LT__TARGET("avx512f") static void lt__a16_put(float *g, int64_t ldg, const float *x, int64_t ldx, int64_t n, int64_t D,
                                              float f, int add) {
    __m512 vf = _mm512_set1_ps(f);
    int64_t r, d;
    for (r = 0; r < n; r++)
        for (d = 0; d < D; d += 16) {
            __mmask16 mk = lt__a16_first(D - d);
            __m512 v = _mm512_mul_ps(vf, _mm512_maskz_loadu_ps(mk, x + r * ldx + d));
            if (r + 8 < n) _mm_prefetch((const char *)(g + (r + 8) * ldg + d), _MM_HINT_T0);   /* as lt__a16_rows */
            if (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, g + r * ldg + d));
            _mm512_mask_storeu_ps(g + r * ldg + d, mk, v);
        }
}
/* the largest of 16 floats, halves against halves in registers (lt__lanes_max16, @@OPS.simd, goes
   through memory for its lane order, and a row's reload stalled on the store: 13% of the forward) */
LT__TARGET("avx512f") static inline float lt__a16_hmax(__m512 v) {
    v = _mm512_maskz_max_ps(LT__M16, v, _mm512_maskz_shuffle_f32x4(LT__M16, v, v, 0x4E));
    v = _mm512_maskz_max_ps(LT__M16, v, _mm512_maskz_shuffle_f32x4(LT__M16, v, v, 0xB1));
    v = _mm512_maskz_max_ps(LT__M16, v, _mm512_maskz_permute_ps(LT__M16, v, 0x4E));
    v = _mm512_maskz_max_ps(LT__M16, v, _mm512_maskz_permute_ps(LT__M16, v, 0xB1));
    return _mm512_cvtss_f32(v);
}

/* The forward's key blocks as the tiles take them, made once per call into prep (a query block's
   unit reads every block up to its own): for batch b, kv head j, block kb of 64 keys (the rows
   below b's length: w = min(64, len - 64·kb), as the units cut them), Kᵀ as pairs (dp/2 x wp
   words) then V as pairs (wp/2 x dp words), in slot (b·Hkv + j)·nkb + kb of 64·dp words. */
static void lt__a16_prep(const lt__att_src *a, const lt__node *nd, uint32_t *prep) {
    int64_t B = LT__ATT_B(nd), T = a->T, D = a->D, dp = (D + 31) / 32 * 32, Hk = a->C / D / a->G;
    int64_t nkb = (T + LT__A16_B - 1) / LT__A16_B, unit;
    LT__OMP(parallel for schedule(static))
    for (unit = 0; unit < B * Hk * nkb; unit++) {
        int64_t bj = unit / nkb, b = bj / Hk, j = bj % Hk, u0 = unit % nkb * LT__A16_B, len = nd->ids ? nd->ids[b] : T;
        int64_t w = len - u0 < LT__A16_B ? len - u0 : LT__A16_B, wp = (w + 31) / 32 * 32;
        uint16_t kv[LT__A16_B * LT__A16_DMAX];
        uint32_t *blk = prep + unit * LT__A16_B * dp;
        if (w <= 0) continue;
        lt__a16_part(a, 1, b, j * a->G, u0, w, wp, dp, kv);
        lt__a16_tr((const uint32_t *)(const void *)kv, wp, dp / 2, blk);
        lt__a16_part(a, 2, b, j * a->G, u0, w, wp, dp, kv);
        lt__a16_ilv(kv, wp, dp, blk + dp / 2 * wp);
    }
}

/* Forward of query rows t0..t0+n-1 (n <= LT__A16_B, all < len) of head h, batch b, with bf16
   products (lt__a16_prod): y rows (stride C) and L.  This and the backward are compiled for AMX
   as well, whose instructions run only where a->amx. */
LT__TARGET("avx512f,avx512bw,avx512bf16,amx-tile,amx-bf16") static void lt__a16_fwd_rows(const lt__att_src *a, int64_t b, int64_t h,
                                                                             int64_t t0, int64_t n, float *y, float *L) {
    uint16_t q[LT__A16_B * LT__A16_DMAX], p[LT__A16_B * LT__A16_B];
    float s[LT__A16_B * LT__A16_B], acc[LT__A16_B * LT__A16_DMAX], m[LT__A16_B], l[LT__A16_B], mn[LT__A16_B], f[LT__A16_B];
    int64_t D = a->D, dp = (D + 31) / 32 * 32, np = (n + 31) / 32 * 32, t1 = t0 + n, u0, t, u;
    int64_t Hk = a->C / D / a->G, nkb = (a->T + LT__A16_B - 1) / LT__A16_B;
    const uint32_t *blocks = (const uint32_t *)(const void *)a->work + (b * Hk + h / a->G) * nkb * LT__A16_B * dp;
    float scale = 1.0f / sqrtf((float)D);
    __m512 vs = _mm512_set1_ps(scale);
    if (a->amx) lt__amx_begin();
    lt__a16_part(a, 0, b, h, t0, n, np, dp, q);
    for (u0 = 0; u0 < t1; u0 += LT__A16_B) {
        int64_t w = t1 - u0 < LT__A16_B ? t1 - u0 : LT__A16_B, wp = (w + 31) / 32 * 32, o = t0 - u0;
        const uint32_t *kt = blocks + u0 / LT__A16_B * LT__A16_B * dp, *vi = kt + dp / 2 * wp;   /* lt__a16_prep's */
        lt__a16_prod(a, LT__ATT_NLE, o, np, wp, dp, q, dp, kt, wp, 0, s, wp);                 /* S = Q·Kᵀ */
        /* the online softmax, row t seeing keys u <= t + o: first every row's new max m' (mn) and
           the factor on its old sums exp(m - m') (f, 16 rows at a time), then P and the sums */
        for (t = 0; t < np; t++) {
            float *sr = s + t * wp;
            int64_t vis = lt__a16_vis(t, n, o, w);
            __m512 mx = _mm512_set1_ps(-INFINITY);
            for (u = 0; u < vis; u += 16) {
                __mmask16 mk = lt__a16_first(vis - u);
                mx = _mm512_mask_max_ps(mx, mk, mx, _mm512_mul_ps(vs, _mm512_maskz_loadu_ps(mk, sr + u)));
            }
            mn[t] = vis ? lt__a16_hmax(mx) : -INFINITY;
            if (u0 > 0 && t < n) mn[t] = m[t] > mn[t] ? m[t] : mn[t];   /* (no key seen: m stays) */
        }
        for (t = 0; u0 > 0 && t < n; t += 16) {
            __mmask16 mk = lt__a16_first(n - t);
            __m512 x = _mm512_maskz_sub_ps(mk, _mm512_maskz_loadu_ps(mk, m + t), _mm512_maskz_loadu_ps(mk, mn + t));
            _mm512_mask_storeu_ps(f + t, mk, lt__exp_neg16(x));
        }
        for (t = 0; t < np; t++) {
            int64_t vis = lt__a16_vis(t, n, o, w);
            __m512 sum = _mm512_setzero_ps(), vm = _mm512_set1_ps(mn[t]);
            for (u = 0; u < wp; u += 16) {   /* P = exp(scale·S - m'), zero past vis; bf16 into p */
                __m512 e = lt__a16_exp(lt__a16_first(vis - u), s + t * wp + u, vs, vm);
                sum = _mm512_add_ps(sum, e);
                lt__a16_st(p + t * wp + u, e);
            }
            if (t >= n) continue;
            if (u0 == 0) { m[t] = mn[t]; l[t] = lt__lanes_sum16(sum); continue; }
            if (!vis) continue;
            m[t] = mn[t];
            l[t] = l[t] * f[t] + lt__lanes_sum16(sum);
            if (f[t] != 1.0f) lt__a16_put(acc + t * dp, 0, acc + t * dp, 0, 1, D, f[t], 0);
        }
        lt__a16_prod(a, LT__ATT_KLE, o, np, dp, wp, p, wp, vi, dp, u0 > 0, acc, dp);          /* Y (+)= P·V */
    }
    if (a->amx) lt__amx_end();
    for (t = 0; t < n; t++) {
        lt__a16_put(y + t * a->C, 0, acc + t * dp, 0, 1, D, 1.0f / l[t], 0);
        L[t] = m[t] + logf(l[t]);
    }
}

/* Backward of query head h, batch b with bf16 products: as lt__att_bwd_head (@@OPS.attention), whose
   fresh and NULL-part rules it keeps.  The head's queries are made ready once, in the thread's
   scratch (lt__a16_work): Q and bf16(dY) as rows and as pair rows, D, and dQ's float32 sums,
   written to the gradient at the end; dK and dV of a key block are summed in float32 blocks of
   their own and written (or added) once its query blocks are done. */
static size_t lt__a16_work(int64_t T, int64_t D) {
    size_t tp = (size_t)(T + 31) / 32 * 32, dp = (size_t)(D + 31) / 32 * 32;
    return tp * dp * 12 + tp * 4 + 64;
}
LT__TARGET("avx512f,avx512bw,avx512bf16,amx-tile,amx-bf16") static void lt__a16_bwd_head(const lt__att_src *a, int64_t b, int64_t h,
                                                                             int64_t len, const float *Lh, const float *y,
                                                                             const float *gy, int fresh) {
    enum { BB = LT__A16_B * LT__A16_B, BD = LT__A16_B * LT__A16_DMAX };   /* (int constants: sizes only) */
    uint16_t kv[BD], p16[BB], ds[BB], tr[BB], *qa, *dya;
    uint32_t kt[BD / 2], ki[BD / 2], vt[BD / 2], tmp[BB / 2], *qia, *dyia;
    float s[BB], dp_[BB], dk[BD], dv[BD], buf[LT__A16_DMAX], *dqa, *dda;
    int64_t T = a->T, C = a->C, D = a->D, dp = (D + 31) / 32 * 32, lp = (len + 31) / 32 * 32, u0, t0, t, u;
    unsigned char *wk = a->work;
    float scale = 1.0f / sqrtf((float)D);
    __m512 vs = _mm512_set1_ps(scale);
#ifdef _OPENMP
    wk += (size_t)omp_get_thread_num() * a->work_bytes;
#endif
    dqa = (float *)(void *)wk;                             /* lp x dp floats */
    dda = dqa + lp * dp;                                   /* lp */
    qa = (uint16_t *)(void *)(dda + lp);                   /* lp x dp bf16 each */
    dya = qa + lp * dp;
    qia = (uint32_t *)(void *)(dya + lp * dp);             /* lp/2 x dp words each */
    dyia = qia + lp / 2 * dp;
    lt__a16_part(a, 0, b, h, 0, len, lp, dp, qa);
    lt__a16_rows(gy + b * T * C + h * D, NULL, C, len, D, lp, dp, dya);
    lt__a16_ilv(qa, lp, dp, qia);
    lt__a16_ilv(dya, lp, dp, dyia);
    for (t0 = 0; t0 < len; t0 += LT__A16_B)   /* D_t = dy_t·y_t */
        lt__att_drows(a, b, h, t0, len - t0 < LT__A16_B ? len - t0 : LT__A16_B, y, gy, dda + t0, buf);
    if (a->amx) lt__amx_begin();
    for (u0 = 0; u0 < len; u0 += LT__A16_B) {
        int64_t w = len - u0 < LT__A16_B ? len - u0 : LT__A16_B, wp = (w + 31) / 32 * 32, kvo = (h / a->G) * D;
        float *gk = a->g[1] ? a->g[1] + (b * T + u0) * a->ld[1] + kvo : NULL;
        float *gv = a->g[2] ? a->g[2] + (b * T + u0) * a->ld[2] + kvo : NULL;
        lt__a16_part(a, 1, b, h, u0, w, wp, dp, kv);
        lt__a16_tr((const uint32_t *)(const void *)kv, wp, dp / 2, kt);   /* Kᵀ as pairs (S) */
        lt__a16_ilv(kv, wp, dp, ki);                                        /* K as pairs (dQ) */
        lt__a16_part(a, 2, b, h, u0, w, wp, dp, kv);
        lt__a16_tr((const uint32_t *)(const void *)kv, wp, dp / 2, vt);   /* Vᵀ as pairs (dP) */
        for (t0 = u0; t0 < len; t0 += LT__A16_B) {
            int64_t n = len - t0 < LT__A16_B ? len - t0 : LT__A16_B, np = (n + 31) / 32 * 32, o = t0 - u0;
            const uint16_t *q = qa + t0 * dp, *dy = dya + t0 * dp;
            const float *dd = dda + t0;
            lt__a16_prod(a, LT__ATT_NLE, o, np, wp, dp, q, dp, kt, wp, 0, s, wp);        /* S = Q·Kᵀ */
            lt__a16_prod(a, LT__ATT_NLE, o, np, wp, dp, dy, dp, vt, wp, 0, dp_, wp);     /* dP = dY·Vᵀ */
            for (t = 0; t < np; t++) {   /* P = exp(scale·S - L), dS = P ⊙ (dP - D): bf16, zero past vis */
                int64_t vis = lt__a16_vis(t, n, o, w);
                __m512 vl = _mm512_set1_ps(t < n ? Lh[t0 + t] : 0.0f), vd = _mm512_set1_ps(t < n ? dd[t] : 0.0f);
                for (u = 0; u < wp; u += 16) {
                    __mmask16 mk = lt__a16_first(vis - u);
                    __m512 e = lt__a16_exp(mk, s + t * wp + u, vs, vl);
                    __m512 g = _mm512_maskz_sub_ps(mk, _mm512_maskz_loadu_ps(mk, dp_ + t * wp + u), vd);
                    lt__a16_st(p16 + t * wp + u, e);
                    lt__a16_st(ds + t * wp + u, _mm512_mul_ps(e, g));
                }
            }
            if (gv) lt__a16_prod_t(a, p16, np, wp, tmp, tr, o, dp, dyia + t0 / 2 * dp, t0 > u0, dv);   /* dV += Pᵀ·dY */
            if (gk) lt__a16_prod_t(a, ds, np, wp, tmp, tr, o, dp, qia + t0 / 2 * dp, t0 > u0, dk);     /* dK += dSᵀ·Q */
            if (a->g[0])                                                                         /* dQ (+)= dS·K */
                lt__a16_prod(a, LT__ATT_KLE, o, np, dp, wp, ds, wp, ki, dp, u0 > 0, dqa + t0 * dp, dp);
        }
        if (gk) lt__a16_put(gk, a->ld[1], dk, dp, w, D, scale, !(fresh & 2));
        if (gv) lt__a16_put(gv, a->ld[2], dv, dp, w, D, 1.0f, !(fresh & 4));
    }
    if (a->amx) lt__amx_end();
    if (a->g[0]) lt__a16_put(a->g[0] + b * T * a->ld[0] + h * D, a->ld[0], dqa, dp, len, D, scale, !(fresh & 1));
}
#endif /* LT__AMX */

/* Which unit the bf16 kernels' products run on: 2 AMX tiles, 1 AVX512_BF16 pairs, 0 none (the
   float32 kernels).  As the bf16 GEMM chooses (lt__gemm_dp): tiles where the CPU has them, pairs
   on AMD's cores (on Intel's the pair instruction does no more than the two FMA ports).
   LT_ATT16=pairs takes pairs wherever the CPU has AVX512_BF16 (the tests run both kernels so). */
static int lt__att16_unit(void) {
    if (lt__att16_off < 0) {
        const char *e = getenv("LT_ATT16");
        lt__att16_off = e && strcmp(e, "f32") == 0;
        if (lt__att16_pairs < 0) lt__att16_pairs = e && strcmp(e, "pairs") == 0;
    }
#ifdef LT__AMX
    if (lt__att16_off || lt__att_simd() != 2 ||
        !lt__cpu_has(LT__CPU_AVX512F | LT__CPU_AVX512BW | LT__CPU_AVX512VL | LT__CPU_AVX512BF16))
        return 0;
    if (lt__att16_pairs != 1 && lt__amx_ready()) return 2;
    return lt__att16_pairs == 1 || lt__cpu_has(LT__CPU_AMD) ? 1 : 0;
#else
    return 0;
#endif
}
/* Do attention16's bf16 kernels run for precision p, sequence length T, D channels a head? */
static int lt__att16_tiles(lt_dtype p, int64_t T, int64_t D) {
    return lt__att16_unit() && p == LT_BF16 && T > LT__A16_B && D <= LT__A16_DMAX;
}
/* Make a ready for the bf16 kernels where they apply (lt__att16_tiles; 0: a is left to the
   float32 kernels).  Their scratch is the context's (lt__ctx_work): for the forward the key blocks
   (lt__a16_prep), for backward each thread's lt__a16_work; none to be had: the float32 kernels,
   which need none.  Every value of q, k, v is turned into bf16 once per call wherever it is read
   from (a float32 tensor in eager mode, or a record's 16-bit copy). */
static int lt__a16_setup(lt__att_src *a, lt__node *nd, int bwd) {
#ifdef LT__AMX
    int64_t D = a->D, dp = (D + 31) / 32 * 32;
    size_t bytes;
    int nt = 1;
    if (!lt__att16_tiles(a->p, a->T, D) || a->simd != 2) return 0;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    if (bwd) bytes = lt__a16_work(a->T, D) * (size_t)nt;
    else   /* lt__a16_prep's slots: B x Hkv x key blocks, 64·dp words each */
        bytes = (size_t)(LT__ATT_B(nd) * (a->C / D / a->G) * ((a->T + LT__A16_B - 1) / LT__A16_B)) *
                LT__A16_B * dp * 4;
    a->work = (unsigned char *)lt__ctx_work(nd->ctx, bytes);
    if (!a->work) return 0;
    a->work_bytes = bwd ? lt__a16_work(a->T, D) : 0;
    if (!bwd) lt__a16_prep(a, nd, (uint32_t *)(void *)a->work);
    a->amx = lt__att16_unit() == 2;
    a->fwd_rows = lt__a16_fwd_rows;
    a->bwd_head = lt__a16_bwd_head;
    return 1;
#else
    (void)a; (void)nd; (void)bwd; (void)lt__ctx_work;
    return 0;
#endif
}

/* The forward of attention16 and attention_gqa16 once their inputs are in place (h16: the record's
   16-bit copies, y's to go at h16 + y_at; NULL: none kept): the kernels, then y rounded to 16 bits. */
static void lt__att16_forward(lt__node *nd, lt__att_src *a, uint16_t *h16, size_t y_at) {
    float *y = nd->out->data;
    size_t ny = (size_t)nd->out->n;
    lt__a16_setup(a, nd, 0);
    lt__att_fwd(nd, a);
    if (!h16) lt_round_to_precision(a->p, y, y, ny);
    else lt__round16_keep(a->p, y, h16 + y_at, ny);
}

/* attention16: y = round16(attention(round16(qkv))) (float32 arithmetic, or the bf16 kernels' above);
   save[1] holds the 16-bit qkv then the 16-bit y (4·B·T·C values) when a gradient will flow, and
   both kernels read qkv from it, so the float32 qkv and y need not outlive the forward (the row
   reads 0).  In a compiled plan the 16-bit product making qkv may write it there itself, qkv
   unmade (LT__ATT_QKV16; @@COMPILE's lt__plan_y16_homes).  Backward runs the forward's kind of
   kernels on those values; its D_t = dy_t·y_t uses the rounded y (as a 16-bit FlashAttention
   does), which moves each gradient by about one 16-bit rounding. */
static void lt__attention16_fwd(lt__node *nd) {
    lt__att_src a = lt__att_src_of(nd, 1);
    uint16_t *h16 = (uint16_t *)(void *)nd->save[1];
    size_t nq = (size_t)nd->in[0]->n;
    if (h16 && !LT__ATT_QKV16(nd)) lt__to16_array(a.p, a.f[0], h16, nq);   /* (else the product before wrote them there) */
    if (h16) {
        a.f[0] = a.f[1] = a.f[2] = NULL;
        a.y16 = NULL;
    }
    lt__att16_forward(nd, &a, h16, nq);
}
static void lt__attention16_bwd(lt__node *nd) {
    lt__att_src a = lt__att_src_of(nd, 1);
    int add[3];
    if (a.h[0]) a.f[0] = a.f[1] = a.f[2] = NULL;   /* else eager (lt__copy16): the float32 qkv, and y (rounded) */
    lt__a16_setup(&a, nd, 1);
    if (lt__att_grad_qkv(nd, &a, add)) lt__att_bwd(nd, &a, add);
}

/* attention_gqa16 (@@OPS.attention_gqa): as attention16, on separate q, k, v */
static void lt__attention_gqa16_fwd(lt__node *nd) {
    lt__att_src a = lt__gqa_src_of(nd, 1);
    uint16_t *h16 = (uint16_t *)(void *)nd->save[1];
    size_t off = 0;
    int w;
    if (h16) {
        for (w = 0; w < 3; w++) {
            size_t n = (size_t)nd->in[w]->n;
            lt__to16_array(a.p, a.f[w], h16 + off, n);
            off += n;
            a.f[w] = NULL;
        }
        a.y16 = NULL;
    }
    lt__att16_forward(nd, &a, h16, off);
}
static void lt__attention_gqa16_bwd(lt__node *nd) {
    lt__att_src a = lt__gqa_src_of(nd, 1);
    if (a.h[0]) a.f[0] = a.f[1] = a.f[2] = NULL;   /* else eager (lt__copy16): float32 q, k, v, y read in place */
    lt__a16_setup(&a, nd, 1);
    lt__gqa_bwd(nd, &a);
}


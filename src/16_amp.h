/* ==== @@AMP  mixed precision: dynamic loss scaling ===================== */
/* Holds: lt_scaler, torch's GradScaler: scale the loss, unscale and check the gradients, skip
   the step on inf/NaN, grow or back off the scale.
   Calls: @@CORE, @@OPS (lt_scale), @@OPTIM (the step); the device through ctx->dev. */
/* ---- @@AMP.scaler  dynamic loss scaling: torch.cuda.amp.GradScaler ------------------------------ */
#define LT__AMP_PAR_MIN 32768 /* elements below which the unscale loop stays on one thread */
enum { LT__SC_READY = 0, LT__SC_UNSCALED, LT__SC_STEPPED };

LTRAIN_DEF lt_scaler lt_scaler_defaults(void) {
    lt_scaler s;
    memset(&s, 0, sizeof s);
    s.scale = 65536.0f;
    s.growth_factor = 2.0;
    s.growth_interval = 2000;
    s.backoff_factor = 0.5;
    s.enabled = 1;
    return s;
}

/* The settings torch's GradScaler accepts (it asserts growth_factor > 1, backoff_factor < 1). */
static int lt__scaler_valid(double scale, double growth, double backoff, int64_t interval) {
    return scale > 0 && scale <= FLT_MAX && growth > 1 && growth <= FLT_MAX && backoff > 0 && backoff < 1 &&
           interval >= 1;
}
static int lt__scaler_check(lt_ctx *ctx, const lt_scaler *sc, const char *who) {
    if (!sc) { lt_set_error(ctx, LT_ERR_ARG, "%s: the scaler is NULL", who); return 0; }
    if (lt__scaler_valid(sc->scale, sc->growth_factor, sc->backoff_factor, sc->growth_interval)) return 1;
    lt_set_error(ctx, LT_ERR_ARG, "%s: scale %g, growth_factor %g, backoff_factor %g, growth_interval %lld: "
                 "need a finite scale > 0, growth_factor > 1, 0 < backoff_factor < 1, growth_interval >= 1 "
                 "(hint: start from lt_scaler_defaults())", who, (double)sc->scale, sc->growth_factor,
                 sc->backoff_factor, (long long)sc->growth_interval);
    return 0;
}

LTRAIN_DEF lt_tensor *lt_scaler_scale_loss(lt_ctx *ctx, lt_scaler *sc, lt_tensor *loss) {
    if (!ctx || lt_failed(ctx)) return NULL;
    if (sc && !sc->enabled) return loss;
    if (!lt__scaler_check(ctx, sc, "lt_scaler_scale_loss")) return NULL;
    return lt_scale(ctx, loss, sc->scale);
}

/* torch's _amp_foreach_non_finite_check_and_unscale_: g *= inv_scale with inv_scale =
   float(1/double(scale)), found_inf |= !isfinite(g).  Scales are powers of two unless set
   otherwise, so the unscaled gradients equal unscaled-run gradients bit for bit (barring
   overflow and subnormals). */
LTRAIN_DEF lt_status lt_scaler_unscale(lt_ctx *ctx, lt_scaler *sc, lt_paramset params) {
    float inv;
    int i, bad = 0;
    lt_tensor *t;
    if (!ctx) return LT_ERR_ARG;
    if (lt_failed(ctx)) return lt_status_of(ctx);
    if (sc && !sc->enabled) return LT_OK;
    if (!lt__scaler_check(ctx, sc, "lt_scaler_unscale")) return lt_status_of(ctx);
    if (sc->stage == LT__SC_UNSCALED) return LT_OK;
    if (sc->stage == LT__SC_STEPPED)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_scaler_unscale: called after lt_scaler_step in the same step "
                            "(hint: call lt_scaler_update after each step)");
    inv = (float)(1.0 / (double)sc->scale);
    if (ctx->dev) {
        bad = ctx->dev->unscale(ctx, params, inv);   /* inf/NaN check on the device */
    } else {
        for (i = 0; (t = lt__next_grad(params, &i)) != NULL;) {   /* @@CLIP */
            float *g = t->grad;
            int64_t j, n = t->n;
            LT__OMP(parallel for reduction(| : bad) if (n >= LT__AMP_PAR_MIN))
            for (j = 0; j < n; j++) {
                uint32_t u;
                memcpy(&u, &g[j], sizeof u);   /* on the bits: -ffast-math would drop an isfinite() */
                bad |= (u & 0x7F800000u) == 0x7F800000u;
                g[j] *= inv;
            }
        }
    }
    sc->found_inf = bad != 0;
    sc->stage = LT__SC_UNSCALED;
    return LT_OK;
}

LTRAIN_DEF lt_status lt_scaler_step(lt_scaler *sc, lt_optim *opt, double lr) {
    lt_ctx *ctx;
    if (!opt) return LT_ERR_ARG;
    ctx = opt->ctx;
    if (lt_failed(ctx)) return lt_status_of(ctx);
    if (sc && !sc->enabled) return lt_optim_step(opt, lr);
    if (!lt__scaler_check(ctx, sc, "lt_scaler_step")) return lt_status_of(ctx);
    if (sc->stage == LT__SC_STEPPED)
        return lt_set_error(ctx, LT_ERR_STATE, "lt_scaler_step: called twice in one step (hint: call "
                            "lt_scaler_update after each step)");
    if (sc->stage == LT__SC_READY && lt_scaler_unscale(ctx, sc, lt_optim_params(opt)) != LT_OK)
        return lt_status_of(ctx);
    sc->stage = LT__SC_STEPPED;
    if (sc->found_inf) {
        sc->skipped++;
        return LT_OK;
    }
    return lt_optim_step(opt, lr);
}

LTRAIN_DEF lt_status lt_scaler_update(lt_scaler *sc) {
    if (!sc) return LT_ERR_ARG;
    if (!sc->enabled) return LT_OK;
    if (sc->stage == LT__SC_READY) return LT_ERR_STATE;
    if (sc->found_inf) {
        sc->scale = (float)((double)sc->scale * sc->backoff_factor);
        sc->growth_tracker = 0;
    } else if (sc->growth_tracker + 1 >= sc->growth_interval) { /* torch: ==; >= also covers an
                                                                    interval lowered mid-run */
        float grown = (float)((double)sc->scale * sc->growth_factor);
        if (grown <= FLT_MAX) sc->scale = grown;                /* never grow to inf */
        sc->growth_tracker = 0;
    } else {
        sc->growth_tracker++;
    }
    sc->found_inf = 0;
    sc->stage = LT__SC_READY;
    return LT_OK;
}

LTRAIN_DEF double lt_scaler_get_scale(const lt_scaler *sc) { return sc && sc->enabled ? (double)sc->scale : 1.0; }
LTRAIN_DEF int lt_scaler_found_inf(const lt_scaler *sc) { return sc && sc->enabled && sc->found_inf; }
LTRAIN_DEF int64_t lt_scaler_skipped(const lt_scaler *sc) { return sc ? sc->skipped : 0; }

LTRAIN_DEF lt_scaler_state lt_scaler_get_state(const lt_scaler *sc) {
    lt_scaler_state st;
    memset(&st, 0, sizeof st);
    if (!sc) return st;
    st.scale = sc->scale;
    st.growth_factor = sc->growth_factor;
    st.backoff_factor = sc->backoff_factor;
    st.growth_interval = sc->growth_interval;
    st.growth_tracker = sc->growth_tracker;
    st.skipped = sc->skipped;
    return st;
}

LTRAIN_DEF lt_status lt_scaler_set_state(lt_ctx *ctx, lt_scaler *sc, const lt_scaler_state *st) {
    if (!sc || !st)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_scaler_set_state: the scaler or the state is NULL");
    if (!lt__scaler_valid(st->scale, st->growth_factor, st->backoff_factor, st->growth_interval) ||
        (double)(float)st->scale != st->scale || st->growth_tracker < 0 || st->skipped < 0)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_scaler_set_state: scale %g, growth_factor %g, backoff_factor "
                            "%g, growth_interval %lld, growth_tracker %lld, skipped %lld: not a state a "
                            "scaler can be in (hint: the checkpoint may be damaged)", st->scale,
                            st->growth_factor, st->backoff_factor, (long long)st->growth_interval,
                            (long long)st->growth_tracker, (long long)st->skipped);
    sc->scale = (float)st->scale;
    sc->growth_factor = st->growth_factor;
    sc->backoff_factor = st->backoff_factor;
    sc->growth_interval = st->growth_interval;
    sc->growth_tracker = st->growth_tracker;
    sc->skipped = st->skipped;
    sc->found_inf = 0;
    sc->stage = LT__SC_READY;
    return LT_OK;
}


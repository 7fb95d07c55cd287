/* ==== @@SCHED  schedules: warm-up + decay; LinearLR, CosineAnnealingLR, SequentialLR ========== */
/* Holds: the learning rate at a step: warm-up then cosine / sqrt / linear decay, and torch's
   LinearLR, CosineAnnealingLR, SequentialLR.
   Calls: nothing (arithmetic on the schedule's fields). */

/* ---- @@SCHED.cosine  warm-up, then cosine / sqrt / linear decay ------------------------------ */
LTRAIN_DEF double lt_schedule_lr(const lt_schedule *s, int64_t step) {
    int64_t t, T;
    double d;
    if (!s) return NAN;
    if (step < 0) step = 0;
    if (step < s->warmup) /* torch LinearLR's closed form: base·(f + (1−f)·k/W) */
        return s->lr * (s->warmup_start + (1.0 - s->warmup_start) * (double)step / (double)s->warmup);
    if (s->decay == LT_SCHED_CONSTANT) return s->lr;
    t = step - (s->warmup > 0 ? s->warmup : 0);
    T = s->total - (s->warmup > 0 ? s->warmup : 0);
    if (t >= T) return s->min_lr;
    switch (s->decay) {
    case LT_SCHED_COSINE: /* CosineAnnealingLR's closed form: η_min + (η−η_min)·(1 + cos(πt/T))/2 */
        return s->min_lr + (s->lr - s->min_lr) * (1.0 + cos(M_PI * (double)t / (double)T)) / 2.0;
    case LT_SCHED_LINEAR: d = (double)(T - t) / (double)T; break;
    case LT_SCHED_SQRT: d = sqrt((double)(T - t) / (double)T); break;
    default: d = 1.0; break;
    }
    return s->min_lr + (s->lr - s->min_lr) * d;
}

static const char *const lt__decay_names[] = {"cosine", "linear", "sqrt", "constant"};

LTRAIN_DEF const char *lt_decay_name(lt_decay d) {
    return (int)d >= 0 && (int)d < 4 ? lt__decay_names[d] : "?";
}

LTRAIN_DEF int lt_decay_parse(const char *name, lt_decay *out) {
    int i;
    if (!name || !out) return 0;
    for (i = 0; i < 4; i++)
        if (strcmp(name, lt__decay_names[i]) == 0) {
            if (out) *out = (lt_decay)i;
            return 1;
        }
    return 0;
}

/* ---- @@SCHED.torch  the torch.optim.lr_scheduler mirror ---
   torch's schedulers all write one shared value, the optimizer group's 'lr', and most of them
   compute the next value from it (the "chainable" form), not from the step number.  `lr` below
   is that shared value; a sequence hands its own to the scheduler it steps and takes it back.
   Each scheduler counts last_epoch (the step index it last produced, -1 before the first) and
   step_count (its step() calls; CosineAnnealingLR reads it), as torch does. */
typedef enum { LT__LRS_LINEAR = 0, LT__LRS_COSINE, LT__LRS_SEQUENTIAL } lt__lrs_kind;

struct lt_lrs {
    lt__lrs_kind kind;
    double base_lr;         /* base_lrs[0]: the group's initial lr */
    double lr;              /* group['lr'] after the last step: get_last_lr()[0] */
    int64_t last_epoch, step_count;
    double start, end;      /* LinearLR: start_factor, end_factor */
    double eta_min;         /* CosineAnnealingLR */
    int64_t iters;          /* LinearLR: total_iters; CosineAnnealingLR: T_max */
    lt_lrs **kids;          /* SequentialLR: the schedulers, and n-1 milestones */
    int64_t *milestones;
    int nkids;
};

/* Python's a % b for b > 0: the result takes b's sign. */
static int64_t lt__pymod(int64_t a, int64_t b) { int64_t r = a % b; return r < 0 ? r + b : r; }

/* _LRScheduler.step(): step_count+1; then last_epoch+1 and the chainable get_lr(), or, with
   to_zero (torch's step(0), used by SequentialLR at a milestone), last_epoch = 0 and the
   closed form at 0. */
static void lt__lrs_step1(lt_lrs *s, int to_zero) {
    double lr = s->lr;
    int64_t e;
    s->step_count++;
    if (to_zero) {
        s->last_epoch = 0;
        if (s->kind == LT__LRS_LINEAR) /* base·(f0 + (f1−f0)·min(T,0)/T), exactly base·f0 */
            s->lr = s->base_lr * s->start;
        else /* η_min + (base−η_min)·(1 + cos 0)/2 */
            s->lr = s->eta_min + (s->base_lr - s->eta_min) * (1.0 + cos(M_PI * 0.0 / (double)s->iters)) / 2.0;
        return;
    }
    e = ++s->last_epoch;
    if (s->kind == LT__LRS_LINEAR) {
        /* LinearLR.get_lr: lr·f0 at 0; unchanged past T; else
           lr·(1 + (f1−f0)/(T·f0 + (e−1)·(f1−f0))), the ratio of consecutive closed-form factors */
        if (e == 0) s->lr = lr * s->start;
        else if (e > s->iters) s->lr = lr;
        else
            s->lr = lr * (1.0 + (s->end - s->start) /
                                    ((double)s->iters * s->start + (double)(e - 1) * (s->end - s->start)));
    } else {
        /* CosineAnnealingLR.get_lr, with T = T_max:
           e = 0: unchanged;  first step of a resumed scheduler: the closed form;
           e−1−T ≡ 0 (mod 2T), the trough: lr + (base−η_min)·(1 − cos(π/T))/2;
           else η_min + (lr−η_min)·(1 + cos(πe/T))/(1 + cos(π(e−1)/T)) */
        double T = (double)s->iters;
        if (e == 0) s->lr = lr;
        else if (s->step_count == 1)
            s->lr = s->eta_min + (s->base_lr - s->eta_min) * (1.0 + cos((double)e * M_PI / T)) / 2.0;
        else if (lt__pymod(e - 1 - s->iters, 2 * s->iters) == 0)
            s->lr = lr + (s->base_lr - s->eta_min) * (1.0 - cos(M_PI / T)) / 2.0;
        else
            s->lr = (1.0 + cos(M_PI * (double)e / T)) / (1.0 + cos(M_PI * (double)(e - 1) / T)) *
                        (lr - s->eta_min) + s->eta_min;
    }
}

static lt_lrs *lt__lrs_new(lt__lrs_kind kind, double base_lr) {
    lt_lrs *s = (lt_lrs *)LT__MALLOC(sizeof(lt_lrs));
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->base_lr = base_lr;
    s->lr = base_lr;
    s->last_epoch = -1;
    return s;
}

LTRAIN_DEF lt_lrs *lt_linear_lr(double base_lr, double start_factor, double end_factor, int64_t total_iters) {
    lt_lrs *s;
    /* torch 1.13 accepts start_factor 0 and then divides by zero on the second step; later
       versions reject it, and so do we */
    if (!(start_factor > 0 && start_factor <= 1) || !(end_factor >= 0 && end_factor <= 1) ||
        total_iters < 0 || !(base_lr >= 0))
        return NULL;
    s = lt__lrs_new(LT__LRS_LINEAR, base_lr);
    if (!s) return NULL;
    s->start = start_factor; s->end = end_factor; s->iters = total_iters;
    lt__lrs_step1(s, 0); /* torch's constructor takes the first step */
    return s;
}

LTRAIN_DEF lt_lrs *lt_cosine_annealing_lr(double base_lr, int64_t t_max, double eta_min) {
    lt_lrs *s;
    if (t_max < 1 || !(base_lr >= 0) || !(eta_min == eta_min)) return NULL;
    s = lt__lrs_new(LT__LRS_COSINE, base_lr);
    if (!s) return NULL;
    s->iters = t_max; s->eta_min = eta_min;
    lt__lrs_step1(s, 0);
    return s;
}

/* SequentialLR: the group lr goes back to the initial lr, every scheduler's last_epoch goes back
   by one (undoing its constructor's step), and the first one is started afresh.  The schedulers
   should share one base_lr, as torch's share one optimizer. */
LTRAIN_DEF lt_lrs *lt_sequential_lr(lt_lrs **scheds, int n, const int64_t *milestones) {
    lt_lrs *s = NULL;
    int i, ok = scheds != NULL && n >= 1 && (n == 1 || milestones != NULL);
    for (i = 0; ok && i < n; i++) ok = scheds[i] != NULL && scheds[i]->kind != LT__LRS_SEQUENTIAL;
    for (i = 1; ok && i < n - 1; i++) ok = milestones[i] >= milestones[i - 1]; /* bisect needs order */
    if (ok) s = lt__lrs_new(LT__LRS_SEQUENTIAL, scheds[0]->base_lr);
    if (s) {
        s->kids = (lt_lrs **)LT__MALLOC((size_t)n * sizeof(lt_lrs *));
        s->milestones = (int64_t *)LT__MALLOC((size_t)n * sizeof(int64_t));
        if (!s->kids || !s->milestones) {
            LT__FREE(s->kids); LT__FREE(s->milestones); LT__FREE(s);
            s = NULL;
        }
    }
    if (!s) { /* ownership was taken: release what was given */
        for (i = 0; scheds && i < n; i++) lt_lrs_destroy(scheds[i]);
        return NULL;
    }
    memcpy(s->kids, scheds, (size_t)n * sizeof(lt_lrs *));
    if (n > 1) memcpy(s->milestones, milestones, (size_t)(n - 1) * sizeof(int64_t));
    s->nkids = n;
    for (i = 0; i < n; i++) s->kids[i]->last_epoch--;
    s->kids[0]->step_count = 0;
    s->kids[0]->lr = s->base_lr;
    lt__lrs_step1(s->kids[0], 0);
    s->lr = s->kids[0]->lr;
    s->last_epoch = 0;
    return s;
}

LTRAIN_DEF double lt_lrs_get(const lt_lrs *s) { return s ? s->lr : NAN; }

LTRAIN_DEF void lt_lrs_step(lt_lrs *s) {
    int idx = 0;
    lt_lrs *k;
    if (!s) return;
    if (s->kind != LT__LRS_SEQUENTIAL) { lt__lrs_step1(s, 0); return; }
    s->last_epoch++;
    /* bisect_right: the number of milestones <= last_epoch picks the scheduler; landing exactly
       on a milestone restarts it with step(0) */
    while (idx < s->nkids - 1 && s->milestones[idx] <= s->last_epoch) idx++;
    k = s->kids[idx];
    k->lr = s->lr;
    lt__lrs_step1(k, idx > 0 && s->milestones[idx - 1] == s->last_epoch);
    s->lr = k->lr;
}

LTRAIN_DEF void lt_lrs_destroy(lt_lrs *s) {
    int i;
    if (!s) return;
    for (i = 0; i < s->nkids; i++) lt_lrs_destroy(s->kids[i]);
    LT__FREE(s->kids);
    LT__FREE(s->milestones);
    LT__FREE(s);
}


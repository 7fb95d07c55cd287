/* ==== @@PLOT  SVG line charts: panels, 1-2-5 ticks, legend; written atomically ================= */
/* Holds: lt_plot: series in panels, 1-2-5 axis ticks, a legend, the SVG written atomically.
   Calls: @@CORE, @@CKPT (lt__dest: which paths a file may be written to). */

typedef struct {
    char *name;                  /* NULL: not in the legend */
    double *x, *y;
    int n, cap;
    int panel;
} lt__pseries;

typedef struct {
    char *title, *xlabel, *ylabel;
    int log_y;
    double lim[4];               /* xmin, xmax, ymin, ymax; NaN = automatic */
} lt__ppanel;

struct lt_plot {
    lt__ppanel *panels;
    int n_panels;
    lt__pseries *series;
    int n_series;
    int width, height;           /* of one panel, pixels */
    lt_status status;
    char msg[256];
};

/* One axis once ranged: data -> pixels, and its ticks. */
typedef struct {
    double lo, hi;               /* in axis units (log10 of the value on a log axis) */
    int log;
    double ticks[64];            /* tick values (not logged) */
    double step;                 /* linear axes: the tick spacing, for the labels' decimals */
    int n_ticks;
    int expo;                    /* label every tick as a power of ten ("2e-4") */
} lt__paxis;

#define LT__PLOT_FONT 12
static const char *const lt__plot_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                              "#9467bd", "#8c564b", "#e377c2", "#17becf"};
static const char *const lt__plot_dashes[] = {"", "6,3", "2,3", "8,3,2,3"}; /* after the 8 colours */

static lt_status lt__plot_fail(lt_plot *p, lt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static lt_status lt__plot_fail(lt_plot *p, lt_status s, const char *fmt, ...) {
    va_list ap;
    if (p->status != LT_OK) return p->status;
    p->status = s;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    return s;
}

static char *lt__plot_dup(const char *s) { return s ? lt__strdup(s) : NULL; }

static void lt__plot_panel_init(lt__ppanel *q) {
    int i;
    memset(q, 0, sizeof *q);
    for (i = 0; i < 4; i++) q->lim[i] = NAN;
}

/* ---- @@PLOT.series  plots, panels, series ---------------------------------------------------- */
LTRAIN_DEF lt_plot *lt_plot_create(const char *title, const char *xlabel, const char *ylabel) {
    lt_plot *p = (lt_plot *)LT__MALLOC(sizeof(lt_plot));
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->width = 640;
    p->height = 400;
    if (lt_plot_panel(p, title, xlabel, ylabel) != LT_OK) {
        lt_plot_destroy(p);
        return NULL;
    }
    return p;
}

LTRAIN_DEF void lt_plot_destroy(lt_plot *p) {
    int i;
    if (!p) return;
    for (i = 0; i < p->n_panels; i++) {
        LT__FREE(p->panels[i].title);
        LT__FREE(p->panels[i].xlabel);
        LT__FREE(p->panels[i].ylabel);
    }
    for (i = 0; i < p->n_series; i++) {
        LT__FREE(p->series[i].name);
        LT__FREE(p->series[i].x);
        LT__FREE(p->series[i].y);
    }
    LT__FREE(p->panels);
    LT__FREE(p->series);
    LT__FREE(p);
}

LTRAIN_DEF lt_status lt_plot_panel(lt_plot *p, const char *title, const char *xlabel, const char *ylabel) {
    lt__ppanel *grown, *q;
    if (!p) return LT_ERR_ARG;
    if (p->status != LT_OK) return p->status;
    if (p->n_panels >= 64) return lt__plot_fail(p, LT_ERR_ARG, "lt_plot_panel: a figure holds at most 64 panels");
    grown = (lt__ppanel *)LT__REALLOC(p->panels, (size_t)(p->n_panels + 1) * sizeof(lt__ppanel));
    if (!grown) return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_panel: out of memory");
    p->panels = grown;
    q = &p->panels[p->n_panels];
    lt__plot_panel_init(q);
    q->title = lt__plot_dup(title);
    q->xlabel = lt__plot_dup(xlabel);
    q->ylabel = lt__plot_dup(ylabel);
    p->n_panels++;
    if ((title && !q->title) || (xlabel && !q->xlabel) || (ylabel && !q->ylabel))
        return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_panel: out of memory");
    return LT_OK;
}

/* Room for at least `need` points in series s. */
static lt_status lt__plot_reserve(lt_plot *p, lt__pseries *s, int need) {
    size_t bytes;
    int cap = s->cap ? s->cap : 16;
    double *nx, *ny;
    if (need <= s->cap) return LT_OK;
    while (cap < need) cap = cap > INT_MAX / 2 ? need : cap * 2;
    if (!lt_mul_size((size_t)cap, sizeof(double), &bytes))
        return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot: %d points do not fit in memory", need);
    nx = (double *)LT__REALLOC(s->x, bytes);
    if (nx) s->x = nx;
    ny = nx ? (double *)LT__REALLOC(s->y, bytes) : NULL;
    if (ny) s->y = ny;
    if (!nx || !ny) return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot: out of memory for %d points", need);
    s->cap = cap;
    return LT_OK;
}

LTRAIN_DEF int lt_plot_series(lt_plot *p, const char *name, const double *x, const double *y, int n) {
    lt__pseries *grown, *s;
    int i;
    if (!p || p->status != LT_OK) return -1;
    if (n < 0 || (n > 0 && !y)) {
        lt__plot_fail(p, LT_ERR_ARG, "lt_plot_series \"%s\": %s", name ? name : "",
                      n < 0 ? "n is negative" : "y is NULL (only x may be NULL, meaning 0, 1, 2, ...)");
        return -1;
    }
    grown = (lt__pseries *)LT__REALLOC(p->series, (size_t)(p->n_series + 1) * sizeof(lt__pseries));
    if (!grown) {
        lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_series: out of memory");
        return -1;
    }
    p->series = grown;
    s = &p->series[p->n_series++];
    memset(s, 0, sizeof *s);
    s->panel = p->n_panels - 1;
    s->name = lt__plot_dup(name);
    if ((name && !s->name) || lt__plot_reserve(p, s, n) != LT_OK) {
        lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_series: out of memory");
        return -1;
    }
    for (i = 0; i < n; i++) {
        s->x[i] = x ? x[i] : (double)i;
        s->y[i] = y[i];
    }
    s->n = n;
    return p->n_series - 1;
}

LTRAIN_DEF lt_status lt_plot_append(lt_plot *p, int series, double x, double y) {
    lt__pseries *s;
    if (!p) return LT_ERR_ARG;
    if (p->status != LT_OK) return p->status;
    if (series < 0 || series >= p->n_series)
        return lt__plot_fail(p, LT_ERR_ARG, "lt_plot_append: series %d does not exist (the plot has %d)", series,
                             p->n_series);
    s = &p->series[series];
    if (s->n == INT_MAX) return lt__plot_fail(p, LT_ERR_ARG, "lt_plot_append: series %d is full", series);
    if (lt__plot_reserve(p, s, s->n + 1) != LT_OK) return p->status;
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->n++;
    return LT_OK;
}

LTRAIN_DEF void lt_plot_log_y(lt_plot *p, int on) {
    if (p && p->n_panels > 0) p->panels[p->n_panels - 1].log_y = on != 0;
}

LTRAIN_DEF void lt_plot_range(lt_plot *p, double xmin, double xmax, double ymin, double ymax) {
    lt__ppanel *q;
    if (!p || p->n_panels == 0) return;
    q = &p->panels[p->n_panels - 1];
    q->lim[0] = xmin; q->lim[1] = xmax; q->lim[2] = ymin; q->lim[3] = ymax;
}

LTRAIN_DEF void lt_plot_size(lt_plot *p, int width, int height) {
    if (!p) return;
    if (width >= 100 && width <= 10000) p->width = width;
    if (height >= 80 && height <= 10000) p->height = height;
}

LTRAIN_DEF const char *lt_plot_error(const lt_plot *p) {
    return p ? p->msg : "lt_plot: no plot (lt_plot_create returned NULL: out of memory)";
}

/* -- @@PLOT.ticks  ranges and ticks --------------------------------------------------------------- */

/* The 1-2-5 step nearest above span/target: 1, 2, 5, 10, 20, 50, ... times a power of ten. */
static double lt__plot_nice_step(double span, int target) {
    double raw = span / target, mag = pow(10.0, floor(log10(raw))), r = raw / mag;
    return (r <= 1.0 ? 1.0 : r <= 2.0 ? 2.0 : r <= 5.0 ? 5.0 : 10.0) * mag;
}

/* Range an axis over [lo, hi] (finite, lo <= hi, axis units) with fixed ends where fix_lo/fix_hi.
   Linear: about 5 ticks a 1-2-5 step apart; automatic ends are rounded out to ticks.
   Log (lo, hi are log10): automatic ends are rounded out to powers of ten; ticks at 1, 2, 5 times
   each power when the axis spans at most 3 decades, else at powers of ten (every k-th). */
static void lt__plot_axis(lt__paxis *a, double lo, double hi, int fix_lo, int fix_hi, int log) {
    double step, v;
    int64_t i, i0, i1;
    memset(a, 0, sizeof *a);
    a->log = log;
    if (!(hi - lo > 1e-12 * (fabs(lo) + fabs(hi))) || !isfinite(hi - lo)) {
        /* one value (a single point or a constant series): widen around it, never divide by 0 */
        double pad = log ? 1.0 : (lo != 0 ? fabs(lo) * 0.1 : 1.0);
        if (!isfinite(pad)) pad = 1.0;
        if (fix_lo && !fix_hi) hi = lo + 2.0 * pad;
        else if (!fix_lo && fix_hi) lo = hi - 2.0 * pad;
        else { lo -= pad; hi += pad; }
        if (!(hi > lo) || !isfinite(hi - lo)) { lo = -1.0; hi = 1.0; } /* about DBL_MAX: give up gracefully */
    }
    if (log) {
        double decades, m[3] = {1.0, 2.0, 5.0};
        int64_t e, every;
        if (!fix_lo) lo = floor(lo + 1e-9);
        if (!fix_hi) hi = ceil(hi - 1e-9);
        if (hi <= lo) hi = lo + 1.0;
        a->lo = lo; a->hi = hi;
        decades = hi - lo;
        every = decades <= 8 ? 1 : (int64_t)ceil(decades / 8.0);
        for (e = (int64_t)floor(lo) - 1; e <= (int64_t)ceil(hi) && a->n_ticks < 64; e++) {
            int k;
            for (k = 0; k < (decades <= 3.0 ? 3 : 1) && a->n_ticks < 64; k++) {
                double lv = (double)e + log10(m[k]);
                if (e % every != 0 && k == 0) continue;
                if (lv >= lo - 1e-9 && lv <= hi + 1e-9) a->ticks[a->n_ticks++] = pow(10.0, lv);
            }
        }
        return;
    }
    step = lt__plot_nice_step(hi - lo, 5);
    if (!(step > 0) || !isfinite(step)) step = hi - lo;
    if (!fix_lo) lo = floor(lo / step + 1e-9) * step;
    if (!fix_hi) hi = ceil(hi / step - 1e-9) * step;
    a->lo = lo; a->hi = hi; a->step = step;
    i0 = (int64_t)ceil(lo / step - 1e-9);
    i1 = (int64_t)floor(hi / step + 1e-9);
    for (i = i0; i <= i1 && a->n_ticks < 64; i++) {
        v = (double)i * step;
        if (fabs(v) < step * 1e-9) v = 0.0;        /* -0 and 1e-17 both print as 0 */
        a->ticks[a->n_ticks++] = v;
    }
}

/* An axis from the data's extent [dlo, dhi] and the user's ends flo, fhi (NaN: automatic). */
static void lt__plot_range(lt__paxis *a, double dlo, double dhi, double flo, double fhi, int log) {
    int fl = isfinite(flo) && (!log || flo > 0), fh = isfinite(fhi) && (!log || fhi > 0);
    double lo = fl ? flo : dlo, hi = fh ? fhi : dhi;
    if (lo > hi) {
        if (fl && fh) { double t = lo; lo = hi; hi = t; }
        else if (fl) hi = lo;
        else lo = hi;
    }
    if (log) { lo = log10(lo); hi = log10(hi); }
    lt__plot_axis(a, lo, hi, fl, fh, log);
    {   /* one style for all labels of an axis: fixed-point, or powers of ten when tiny or huge */
        double small = INFINITY, big = 0;
        int k;
        for (k = 0; k < a->n_ticks; k++) {
            double v = fabs(a->ticks[k]);
            if (v > big) big = v;
            if (v > 0 && v < small) small = v;
        }
        a->expo = big >= 1e7 || (log ? small < 1e-3 : a->step < 1e-3);
    }
}

/* A tick label: fixed-point with the decimals the step needs ("0.25", "120"; on a log axis those
   the value needs: "0.002", "50"), or a short power of ten ("2e-4", "1.5e7"). */
static void lt__plot_label(char *buf, size_t cap, double v, const lt__paxis *a) {
    int dec = 0;
    if (v == 0) { snprintf(buf, cap, "0"); return; }
    if (a->expo) {
        int e = (int)floor(log10(fabs(v)) + 1e-9);
        snprintf(buf, cap, "%.3ge%d", v / pow(10.0, e), e);
        return;
    }
    if (!a->log) dec = (int)(-floor(log10(a->step) + 1e-9));
    else
        while (dec < 6 && fabs(v * pow(10.0, dec) - floor(v * pow(10.0, dec) + 0.5)) > 1e-6 * fabs(v) * pow(10.0, dec))
            dec++;
    snprintf(buf, cap, "%.*f", dec < 0 ? 0 : dec > 9 ? 9 : dec, v);
}

/* -- @@PLOT.svg  writing ------------------------------------------------------------------------- */

/* Text content or an attribute value, XML-escaped; control bytes and invalid UTF-8 become '?'. */
static void lt__plot_text(FILE *f, const char *s) {
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    size_t left = strlen((const char *)u);
    while (*u) {
        unsigned c = *u;
        int len = lt__utf8_next(u, left, NULL);   /* @@CORE.utf8; 0: not valid UTF-8 here */
        left -= len > 1 ? (size_t)len : 1;
        if (len == 0 || (c < 0x20 && c != '\t')) { fputc('?', f); u++; continue; }
        if (len > 1) { fwrite(u, 1, (size_t)len, f); u += len; continue; }
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc((int)c, f);
        }
        u++;
    }
}

/* A coordinate with two decimals and a '.' even under a locale whose decimal point is ','. */
static void lt__plot_num(FILE *f, double v) {
    char buf[48], *c;
    if (!isfinite(v)) v = 0;
    snprintf(buf, sizeof buf, "%.2f", v);
    for (c = buf; *c; c++)
        if (*c == ',') *c = '.';
    fputs(buf, f);
}

/* Pixel position of value v on an axis of length len starting at px0 (y axes run upwards). */
static double lt__plot_px(const lt__paxis *a, double v, double px0, double len, int up) {
    double t = ((a->log ? log10(v) : v) - a->lo) / (a->hi - a->lo);
    /* far outside the box (clipped anyway): keep the numbers printable */
    if (t < -10) t = -10;
    if (t > 11) t = 11;
    return up ? px0 + len - t * len : px0 + t * len;
}

static int lt__plot_ok(double v, int log) { return isfinite(v) && (!log || v > 0); }

/* A panel's layout: its axes, ranged over its data, and the plot box in pixels. */
typedef struct {
    const lt__ppanel *q;
    int id;                      /* the panel's index: its series, its clip path's name */
    lt__paxis ax, ay;
    double oy, x0, y0, W, H;     /* the panel's vertical offset; the box's corner and size */
    int nleg, maxname;           /* named series (legend rows) and the longest name */
} lt__pframe;

/* Range both axes over the panel's finite points (and its fixed limits), then place the box:
   the left margin fits the longest y tick label. */
static void lt__plot_frame(const lt_plot *p, int id, double oy, lt__pframe *fr) {
    const lt__ppanel *q = &p->panels[id];
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    double L, R = 20, T = q->title ? 34 : 16, Bm = q->xlabel ? 48 : 30;
    int s, k, maxlab = 1;
    char lab[64];
    fr->q = q;
    fr->id = id;
    fr->oy = oy;
    fr->nleg = 0;
    fr->maxname = 0;
    for (s = 0; s < p->n_series; s++) {
        const lt__pseries *ser = &p->series[s];
        if (ser->panel != id) continue;
        if (ser->name && ser->name[0]) {
            int len = (int)strlen(ser->name);
            fr->nleg++;
            if (len > fr->maxname) fr->maxname = len;
        }
        for (k = 0; k < ser->n; k++) {
            double x = ser->x[k], y = ser->y[k];
            if (!isfinite(x) || !lt__plot_ok(y, q->log_y)) continue;
            if (x < xlo) xlo = x;
            if (x > xhi) xhi = x;
            if (y < ylo) ylo = y;
            if (y > yhi) yhi = y;
        }
    }
    if (xlo > xhi) { xlo = 0; xhi = 1; }                    /* no points yet: an empty box */
    if (ylo > yhi) { ylo = q->log_y ? 0.1 : 0; yhi = 1; }
    lt__plot_range(&fr->ax, xlo, xhi, q->lim[0], q->lim[1], 0);
    lt__plot_range(&fr->ay, ylo, yhi, q->lim[2], q->lim[3], q->log_y);

    for (k = 0; k < fr->ay.n_ticks; k++) {
        int len;
        lt__plot_label(lab, sizeof lab, fr->ay.ticks[k], &fr->ay);
        len = (int)strlen(lab);
        if (len > maxlab) maxlab = len;
    }
    L = (q->ylabel ? 26 : 8) + 7.0 * maxlab + 8;
    fr->W = p->width - L - R;
    fr->H = p->height - T - Bm;
    fr->x0 = L;
    fr->y0 = oy + T;
}

/* The panel's clip path, title, grid with tick labels, box and axis labels. */
static void lt__plot_draw_axes(FILE *f, const lt__pframe *fr) {
    const lt__ppanel *q = fr->q;
    const lt__paxis *ax = &fr->ax, *ay = &fr->ay;
    double x0 = fr->x0, y0 = fr->y0, W = fr->W, H = fr->H;
    int k;
    char lab[64];
    fprintf(f, "<g>\n<clipPath id=\"lt-clip-%d\"><rect x=\"", fr->id);
    lt__plot_num(f, x0); fputs("\" y=\"", f); lt__plot_num(f, y0);
    fputs("\" width=\"", f); lt__plot_num(f, W); fputs("\" height=\"", f); lt__plot_num(f, H);
    fputs("\"/></clipPath>\n", f);
    if (q->title) {
        fputs("<text x=\"", f); lt__plot_num(f, x0 + W / 2); fputs("\" y=\"", f); lt__plot_num(f, fr->oy + 22);
        fputs("\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", f);
        lt__plot_text(f, q->title);
        fputs("</text>\n", f);
    }
    /* grid and ticks: the x axis's, then the y axis's */
    for (k = 0; k < ax->n_ticks + ay->n_ticks; k++) {
        int isx = k < ax->n_ticks;
        double v = isx ? ax->ticks[k] : ay->ticks[k - ax->n_ticks];
        double px = isx ? lt__plot_px(ax, v, x0, W, 0) : lt__plot_px(ay, v, y0, H, 1);
        lt__plot_label(lab, sizeof lab, v, isx ? ax : ay);
        if (isx) {
            fputs("<line x1=\"", f); lt__plot_num(f, px); fputs("\" y1=\"", f); lt__plot_num(f, y0);
            fputs("\" x2=\"", f); lt__plot_num(f, px); fputs("\" y2=\"", f); lt__plot_num(f, y0 + H + 5);
            fputs("\" stroke=\"#e4e4e4\"/>\n<text x=\"", f); lt__plot_num(f, px);
            fputs("\" y=\"", f); lt__plot_num(f, y0 + H + 18); fputs("\" text-anchor=\"middle\">", f);
        } else {
            fputs("<line x1=\"", f); lt__plot_num(f, x0 - 5); fputs("\" y1=\"", f); lt__plot_num(f, px);
            fputs("\" x2=\"", f); lt__plot_num(f, x0 + W); fputs("\" y2=\"", f); lt__plot_num(f, px);
            fputs("\" stroke=\"#e4e4e4\"/>\n<text x=\"", f); lt__plot_num(f, x0 - 8);
            fputs("\" y=\"", f); lt__plot_num(f, px + 4); fputs("\" text-anchor=\"end\">", f);
        }
        lt__plot_text(f, lab);
        fputs("</text>\n", f);
    }
    fputs("<rect x=\"", f); lt__plot_num(f, x0); fputs("\" y=\"", f); lt__plot_num(f, y0);
    fputs("\" width=\"", f); lt__plot_num(f, W); fputs("\" height=\"", f); lt__plot_num(f, H);
    fputs("\" fill=\"none\" stroke=\"#444\"/>\n", f);
    if (q->xlabel) {
        fputs("<text x=\"", f); lt__plot_num(f, x0 + W / 2); fputs("\" y=\"", f); lt__plot_num(f, y0 + H + 38);
        fputs("\" text-anchor=\"middle\">", f);
        lt__plot_text(f, q->xlabel);
        fputs("</text>\n", f);
    }
    if (q->ylabel) {
        fputs("<text transform=\"translate(16,", f); lt__plot_num(f, y0 + H / 2);
        fputs(") rotate(-90)\" text-anchor=\"middle\">", f);
        lt__plot_text(f, q->ylabel);
        fputs("</text>\n", f);
    }
}

/* The lines: one path per series, a new subpath after every skipped point; lone points
   (nothing finite on either side) get a dot, since a one-point path draws nothing. */
static void lt__plot_draw_lines(const lt_plot *p, FILE *f, const lt__pframe *fr) {
    const lt__paxis *ax = &fr->ax, *ay = &fr->ay;
    double x0 = fr->x0, y0 = fr->y0, W = fr->W, H = fr->H;
    int s, k, log_y = fr->q->log_y;
    for (s = 0, k = 0; s < p->n_series; s++) {
        const lt__pseries *ser = &p->series[s];
        const char *color, *dash;
        int i, open = 0, idx;
        if (ser->panel != fr->id) continue;
        idx = k++;
        color = lt__plot_colors[idx % 8];
        dash = lt__plot_dashes[(idx / 8) % 4];
        fprintf(f, "<g clip-path=\"url(#lt-clip-%d)\" stroke=\"%s\" fill=\"%s\">\n<path fill=\"none\" "
                   "stroke-width=\"1.8\" stroke-linejoin=\"round\" stroke-linecap=\"round\"", fr->id, color, color);
        if (dash[0]) fprintf(f, " stroke-dasharray=\"%s\"", dash);
        fputs(" d=\"", f);
        for (i = 0; i < ser->n; i++) {
            int ok = isfinite(ser->x[i]) && lt__plot_ok(ser->y[i], log_y);
            if (!ok) { open = 0; continue; }
            fputs(open ? " L" : " M", f);
            lt__plot_num(f, lt__plot_px(ax, ser->x[i], x0, W, 0));
            fputc(' ', f);
            lt__plot_num(f, lt__plot_px(ay, ser->y[i], y0, H, 1));
            open = 1;
        }
        fputs("\"/>\n", f);
        for (i = 0; i < ser->n; i++) {
            int prev = i > 0 && isfinite(ser->x[i - 1]) && lt__plot_ok(ser->y[i - 1], log_y);
            int next = i + 1 < ser->n && isfinite(ser->x[i + 1]) && lt__plot_ok(ser->y[i + 1], log_y);
            if (prev || next || !isfinite(ser->x[i]) || !lt__plot_ok(ser->y[i], log_y)) continue;
            fputs("<circle stroke=\"none\" r=\"3\" cx=\"", f); lt__plot_num(f, lt__plot_px(ax, ser->x[i], x0, W, 0));
            fputs("\" cy=\"", f); lt__plot_num(f, lt__plot_px(ay, ser->y[i], y0, H, 1));
            fputs("\"/>\n", f);
        }
        fputs("</g>\n", f);
    }
}

/* The legend: inside the box, in the corner that covers the fewest points (top right first). */
static void lt__plot_draw_legend(const lt_plot *p, FILE *f, const lt__pframe *fr) {
    const lt__paxis *ax = &fr->ax, *ay = &fr->ay;
    double x0 = fr->x0, y0 = fr->y0, W = fr->W, H = fr->H;
    double lw = 36 + 7.0 * fr->maxname, lh = 8 + 18.0 * fr->nleg, lx = x0 + W - lw - 8, ly = y0 + 8;
    int s, k, nleg, corner, best = -1, fewest = 0;
    for (corner = 0; corner < 4; corner++) {
        double cx = corner & 1 ? x0 + 8 : x0 + W - lw - 8, cy = corner & 2 ? y0 + H - lh - 8 : y0 + 8;
        int i, inside = 0;
        for (s = 0; s < p->n_series; s++) {
            const lt__pseries *ser = &p->series[s];
            if (ser->panel != fr->id) continue;
            for (i = 0; i < ser->n; i++) {
                double px, py;
                if (!isfinite(ser->x[i]) || !lt__plot_ok(ser->y[i], fr->q->log_y)) continue;
                px = lt__plot_px(ax, ser->x[i], x0, W, 0);
                py = lt__plot_px(ay, ser->y[i], y0, H, 1);
                inside += px >= cx - 4 && px <= cx + lw + 4 && py >= cy - 4 && py <= cy + lh + 4;
            }
        }
        if (best < 0 || inside < fewest) { best = corner; fewest = inside; lx = cx; ly = cy; }
    }
    fputs("<rect x=\"", f); lt__plot_num(f, lx); fputs("\" y=\"", f); lt__plot_num(f, ly);
    fputs("\" width=\"", f); lt__plot_num(f, lw); fputs("\" height=\"", f); lt__plot_num(f, lh);
    fputs("\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#bbb\"/>\n", f);
    for (s = 0, k = 0, nleg = 0; s < p->n_series; s++) {
        const lt__pseries *ser = &p->series[s];
        int idx;
        double ry;
        if (ser->panel != fr->id) continue;
        idx = k++;
        if (!ser->name || !ser->name[0]) continue;
        ry = ly + 16 + 18.0 * nleg++;
        fprintf(f, "<line stroke=\"%s\" stroke-width=\"2.5\"", lt__plot_colors[idx % 8]);
        if (lt__plot_dashes[(idx / 8) % 4][0]) fprintf(f, " stroke-dasharray=\"%s\"", lt__plot_dashes[(idx / 8) % 4]);
        fputs(" x1=\"", f); lt__plot_num(f, lx + 6); fputs("\" y1=\"", f); lt__plot_num(f, ry - 4);
        fputs("\" x2=\"", f); lt__plot_num(f, lx + 26); fputs("\" y2=\"", f); lt__plot_num(f, ry - 4);
        fputs("\"/>\n<text x=\"", f); lt__plot_num(f, lx + 31); fputs("\" y=\"", f); lt__plot_num(f, ry);
        fputs("\">", f);
        lt__plot_text(f, ser->name);
        fputs("</text>\n", f);
    }
}

/* One panel at vertical offset oy.  id makes its clip path's name unique in the file. */
static void lt__plot_draw_panel(lt_plot *p, FILE *f, int id, double oy) {
    lt__pframe fr;
    lt__plot_frame(p, id, oy, &fr);
    lt__plot_draw_axes(f, &fr);
    lt__plot_draw_lines(p, f, &fr);
    if (fr.nleg > 0) lt__plot_draw_legend(p, f, &fr);
    fputs("</g>\n", f);
}

LTRAIN_DEF lt_status lt_plot_save(lt_plot *p, const char *path) {
    char *tmp, *target = NULL, why[900];
    size_t len;
    FILE *f;
    int i, bad;
    if (!p) return LT_ERR_ARG;
    if (p->status != LT_OK) return p->status;
    if (!path || !path[0]) return lt__plot_fail(p, LT_ERR_ARG, "lt_plot_save: no path given");
    /* a device, FIFO, directory..: refused; a symbolic link: its target is written (@@CKPT) */
    if ((i = lt__dest(path, LT_DEST_REPLACE, &target, why, sizeof why)) <= 0)
        return lt__plot_fail(p, i < 0 ? LT_ERR_NOMEM : LT_ERR_ARG, "lt_plot_save: %s", why);
    path = target;
    len = strlen(path);
    tmp = (char *)LT__MALLOC(len + 5);
    if (!tmp) { LT__FREE(target); return lt__plot_fail(p, LT_ERR_NOMEM, "lt_plot_save: out of memory"); }
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp", 5);
    f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        lt__plot_fail(p, LT_ERR_IO, "lt_plot_save: cannot create %s: %s (hint: does its directory exist?)", tmp,
                      strerror(e));
        LT__FREE(tmp);
        LT__FREE(target);
        return p->status;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"%d\" fill=\"#222\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            p->width, p->height * p->n_panels, p->width, p->height * p->n_panels, LT__PLOT_FONT);
    for (i = 0; i < p->n_panels; i++) lt__plot_draw_panel(p, f, i, (double)p->height * i);
    fputs("</svg>\n", f);
    bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        remove(tmp);
        lt__plot_fail(p, LT_ERR_IO, "lt_plot_save: writing %s failed (disk full?)", tmp);
    } else if (rename(tmp, path) != 0) {
        /* Windows refuses to rename over an existing file: remove it first, then retry */
        if (remove(path) != 0 || rename(tmp, path) != 0) {
            int e = errno;
            remove(tmp);
            lt__plot_fail(p, LT_ERR_IO, "lt_plot_save: cannot rename %s to %s: %s", tmp, path, strerror(e));
        }
    }
    LT__FREE(tmp);
    LT__FREE(target);
    return p->status;
}


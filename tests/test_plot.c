/* test_plot.c - the SVG writer (@@PLOT): every file it writes is well-formed XML (checked by the
   small parser below, which is itself tested on broken inputs), holds the series names and the
   tick labels, skips NaN/inf points, and copes with one point or a constant series. */
#include <ctype.h>

/* ---- a tiny XML checker ----------------------------------------------------------------------
   Enough of XML 1.0 for what an SVG writer may produce: a prolog, comments, elements with quoted
   attributes, text, and the five named entities plus numeric ones.  Returns 1 if s is one
   well-formed element tree; otherwise 0, with the reason and byte offset in why. */
static int tp_name_char(int c) { return isalnum(c) || c == '-' || c == '_' || c == ':' || c == '.'; }

/* An entity reference at s (which starts with '&'): its length, or 0 if it is not one. */
static size_t tp_entity(const char *s) {
    static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    size_t i;
    for (i = 0; i < 5; i++)
        if (strncmp(s, named[i], strlen(named[i])) == 0) return strlen(named[i]);
    if (s[1] == '#') {
        int hex = s[2] == 'x';
        i = hex ? 3 : 2;
        while (hex ? isxdigit((unsigned char)s[i]) : isdigit((unsigned char)s[i])) i++;
        return s[i] == ';' && i > (size_t)(hex ? 3 : 2) ? i + 1 : 0;
    }
    return 0;
}

static int tp_xml_ok(const char *s, char *why, size_t cap) {
    const char *p = s, *stack[256];
    size_t len[256];
    int depth = 0, roots = 0;
#define TP_BAD(msg) do { snprintf(why, cap, "%s at byte %ld", msg, (long)(p - s)); return 0; } while (0)
    if (strncmp(p, "<?xml", 5) == 0) {
        p = strstr(p, "?>");
        if (!p) TP_BAD("unterminated prolog");
        p += 2;
    }
    while (*p) {
        if (*p == '<' && strncmp(p, "<!--", 4) == 0) {
            const char *e = strstr(p + 4, "-->");
            if (!e) TP_BAD("unterminated comment");
            p = e + 3;
        } else if (*p == '<' && p[1] == '/') {
            const char *n = p + 2;
            size_t l = 0;
            while (tp_name_char((unsigned char)n[l])) l++;
            if (depth == 0) TP_BAD("closing tag without an open element");
            if (l != len[depth - 1] || strncmp(n, stack[depth - 1], l) != 0) TP_BAD("closing tag does not match");
            p = n + l;
            while (isspace((unsigned char)*p)) p++;
            if (*p != '>') TP_BAD("bad closing tag");
            p++;
            depth--;
        } else if (*p == '<') {
            const char *n = p + 1;
            size_t l = 0;
            if (!isalpha((unsigned char)*n)) TP_BAD("bad element name");
            while (tp_name_char((unsigned char)n[l])) l++;
            if (depth == 0 && roots++ > 0) TP_BAD("second root element");
            p = n + l;
            for (;;) {   /* attributes: name="value" or name='value' */
                char q;
                while (isspace((unsigned char)*p)) p++;
                if (*p == '>' || (p[0] == '/' && p[1] == '>')) break;
                if (!isalpha((unsigned char)*p)) TP_BAD("bad attribute name");
                while (tp_name_char((unsigned char)*p)) p++;
                if (*p++ != '=') TP_BAD("attribute without =");
                q = *p++;
                if (q != '"' && q != '\'') TP_BAD("unquoted attribute");
                while (*p && *p != q) {
                    if (*p == '<') TP_BAD("< inside an attribute");
                    if (*p == '&') { size_t e = tp_entity(p); if (!e) TP_BAD("bad entity"); p += e; }
                    else p++;
                }
                if (*p++ != q) TP_BAD("unterminated attribute");
            }
            if (*p == '/') p += 2;
            else {
                if (depth == 256) TP_BAD("nesting too deep");
                stack[depth] = n; len[depth] = l; depth++;
                p++;
            }
        } else {
            if (depth == 0 && !isspace((unsigned char)*p)) TP_BAD("text outside the root element");
            if (*p == '&') { size_t e = tp_entity(p); if (!e) TP_BAD("bad entity"); p += e; }
            else if (*p == '>') TP_BAD("raw > in text");  /* legal XML, but our writer escapes it */
            else p++;
        }
    }
    if (depth != 0) TP_BAD("unclosed element");
    if (roots != 1) TP_BAD("no root element");
#undef TP_BAD
    return 1;
}

/* ---- helpers --------------------------------------------------------------------------------- */
/* Every number in the drawing is finite and on (or near) the canvas: no nan, no inf, nothing
   a division by zero would have produced.  Returns the count of numbers outside [-360, 10000]. */
static int tp_wild_numbers(const char *svg) {
    const char *p;
    int bad = 0;
    for (p = svg; *p; p++) {
        if ((isdigit((unsigned char)*p) || *p == '-') && (p == svg || strchr(" \"(,LM", p[-1]))) {
            char *e;
            double v = strtod(p, &e);
            if (e > p && (!isfinite(v) || v < -360 || v > 10000)) bad++; /* -90: rotate(-90) */
            if (e > p) p = e - 1;
        }
        if (tolower((unsigned char)p[0]) == 'n' && tolower((unsigned char)p[1]) == 'a' && tolower((unsigned char)p[2]) == 'n') bad++;
        if (tolower((unsigned char)p[0]) == 'i' && tolower((unsigned char)p[1]) == 'n' && tolower((unsigned char)p[2]) == 'f') bad++;
    }
    return bad;
}

static int tp_count(const char *hay, const char *needle) {
    int n = 0;
    const char *p = hay;
    while ((p = strstr(p, needle)) != NULL) { n++; p += strlen(needle); }
    return n;
}

/* Save p to build/tmp/<file>, check it is well-formed with only sane numbers; returns the text
   (malloc'd) or NULL after a FAIL. */
static char *tp_save_check(lt_plot *p, const char *file, const char *name) {
    char path[512], tmp[520], why[200], label[160];
    char *svg;
    FILE *left;
    snprintf(path, sizeof path, "%s/%s", t_tmp_dir(), file);
    snprintf(label, sizeof label, "%s_saved", name);
    if (!t_check(lt_plot_save(p, path) == LT_OK, label, "lt_plot_save: %s", lt_plot_error(p))) return NULL;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    left = fopen(tmp, "rb");
    snprintf(label, sizeof label, "%s_no_tmp_left", name);
    t_check(left == NULL, label, "%s was left behind", tmp);
    if (left) fclose(left);
    svg = t_slurp(path, NULL);
    snprintf(label, sizeof label, "%s_well_formed", name);
    if (!t_check(svg && tp_xml_ok(svg, why, sizeof why), label, "%s: %s", path, svg ? why : "unreadable")) {
        free(svg);
        return NULL;
    }
    snprintf(label, sizeof label, "%s_numbers_finite", name);
    t_check(tp_wild_numbers(svg) == 0, label, "%s: %d nan/inf or off-canvas numbers", path, tp_wild_numbers(svg));
    return svg;
}

/* The i-th <path ...> element's d attribute: how many subpaths ("M") it has; -1 if none. */
static int tp_subpaths(const char *svg, int which) {
    const char *p = svg, *e;
    int i, n = 0;
    for (i = 0; i <= which; i++) {
        p = strstr(p, "<path ");
        if (!p) return -1;
        p += 6;
    }
    p = strstr(p, " d=\"");
    if (!p) return -1;
    e = strchr(p + 4, '"');
    for (p += 4; p < e; p++) n += *p == 'M';
    return n;
}

/* ---- tests ----------------------------------------------------------------------------------- */
static void test_plot_checker(void) {
    static const char *const bad[] = {
        "<svg><g></svg>", "<svg></g>", "<svg a=1/>", "<svg a=\"<\"/>", "<svg>&nbsp;</svg>", "<svg/><svg/>",
        "<svg>", "text<svg/>", "<svg a=\"x/>", "<svg>a > b</svg>", "<svg>&#;</svg>"};
    static const char *const good[] = {
        "<?xml version=\"1.0\"?>\n<svg a=\"1\" b='2'><g><text>a &amp; b &lt;c&gt; &#960;&#x3c0;</text></g><!-- c --></svg>\n",
        "<svg/>"};
    char why[200];
    size_t i;
    int ok = 1;
    if (!t_want("plot_checker")) return;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tp_xml_ok(bad[i], why, sizeof why)) { ok = 0; printf("  checker accepted %s\n", bad[i]); }
    for (i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!tp_xml_ok(good[i], why, sizeof why)) { ok = 0; printf("  checker refused %s: %s\n", good[i], why); }
    t_check(ok, "plot_checker", "the XML checker itself is wrong (see above)");
}

static void test_plot_basic(void) {
    double x[101], y1[101], y2[101];
    const char *labels[] = {">0</text>", ">20</text>", ">40</text>", ">100</text>", ">0.2</text>", ">0.8</text>",
                            ">1.0</text>"};
    lt_plot *p;
    char *svg;
    int i, ok;
    if (!t_want("plot_basic")) return;
    /* x 0..100 -> ticks 0, 20, ..., 100; y within [0.13, 0.87] -> ticks 0, 0.2, ..., 1.0 */
    for (i = 0; i <= 100; i++) {
        x[i] = i;
        y1[i] = 0.5 + 0.37 * sin(i / 10.0);
        y2[i] = 0.5 + 0.3 * cos(i / 7.0);
    }
    p = lt_plot_create("Loss <and> \"more\"", "step", "loss & co");
    ok = lt_plot_series(p, "train <loss>", x, y1, 101) == 0 && lt_plot_series(p, "val & more", x, y2, 101) == 1;
    t_check(ok, "plot_basic_series_index", "lt_plot_series should return 0, then 1");
    svg = tp_save_check(p, "plot_basic.svg", "plot_basic");
    if (svg) {
        ok = strstr(svg, ">train &lt;loss&gt;</text>") && strstr(svg, ">val &amp; more</text>") &&
             strstr(svg, "Loss &lt;and&gt; &quot;more&quot;") && strstr(svg, ">loss &amp; co</text>") &&
             strstr(svg, ">step</text>");
        t_check(ok, "plot_basic_names", "series names, title or axis labels missing (or not escaped)");
        for (i = 0, ok = 1; i < (int)(sizeof labels / sizeof labels[0]); i++)
            if (!strstr(svg, labels[i])) { ok = 0; printf("  tick label %s missing\n", labels[i]); }
        t_check(ok, "plot_basic_ticks", "tick labels missing (see above)");
        t_check(tp_count(svg, "<path ") == 2 && tp_subpaths(svg, 0) == 1, "plot_basic_paths",
                "want 2 paths of one stroke each, got %d paths", tp_count(svg, "<path "));
        t_check(strstr(svg, "0.30000000000000004") == NULL, "plot_basic_clean_labels", "a tick label shows rounding noise");
    }
    free(svg);
    lt_plot_destroy(p);
    /* text that is not UTF-8 (an overlong '/', a surrogate, a cut sequence) becomes '?' byte by
       byte; valid multi-byte characters pass whole */
    p = lt_plot_create("a\xC0\xAF b\xED\xA0\x80 c\xE2\x82 \xCF\x80", "x", "y");
    lt_plot_series(p, "s", x, y1, 3);
    svg = tp_save_check(p, "plot_utf8.svg", "plot_utf8");
    t_check(svg && strstr(svg, ">a?? b??? c?? \xCF\x80</text>"), "plot_basic_invalid_utf8", "title not escaped as expected");
    free(svg);
    lt_plot_destroy(p);
}

static void test_plot_nonfinite(void) {
    double x[20], y[20];
    lt_plot *p;
    char *svg;
    int i;
    if (!t_want("plot_nonfinite")) return;
    for (i = 0; i < 20; i++) { x[i] = i; y[i] = 1.0 + i; }
    y[5] = NAN;          /* the line breaks here ... */
    y[12] = INFINITY;    /* ... and here */
    x[16] = NAN;         /* ... and here: a point needs both coordinates */
    y[18] = -INFINITY;   /* points 17 and 19 stand alone: a dot each */
    p = lt_plot_create("gaps", NULL, NULL);
    lt_plot_series(p, "with gaps", x, y, 20);
    svg = tp_save_check(p, "plot_nonfinite.svg", "plot_nonfinite");
    if (svg) {
        t_check(tp_subpaths(svg, 0) == 5, "plot_nonfinite_breaks", "want 5 strokes (0-4, 6-11, 13-15, 17, 19), got %d",
                tp_subpaths(svg, 0));
        t_check(tp_count(svg, "<circle") == 2, "plot_nonfinite_lone_dots", "the lone points 17 and 19 should get a dot "
                "each, got %d", tp_count(svg, "<circle"));
        t_check(strstr(svg, ">20</text>") != NULL, "plot_nonfinite_range", "the y range should come from finite "
                "points only (1..20, ticks to 20)");
    }
    free(svg);
    lt_plot_destroy(p);
}

static void test_plot_degenerate(void) {
    double one_x = 7, one_y = 0.25, cx[10], cy[10], zero[10], nan3[3] = {NAN, NAN, NAN};
    lt_plot *p;
    char *svg;
    int i;
    if (!t_want("plot_degenerate")) return;
    for (i = 0; i < 10; i++) { cx[i] = 5; cy[i] = 3.0; zero[i] = 0; }
    p = lt_plot_create("a single point", "x", "y");
    lt_plot_series(p, "one", &one_x, &one_y, 1);
    svg = tp_save_check(p, "plot_one.svg", "plot_single_point");
    if (svg) t_check(tp_count(svg, "<circle") == 1, "plot_single_point_dot", "one point should be drawn as a dot");
    free(svg);
    lt_plot_destroy(p);

    /* constant y (3.0) at a constant x (5): both axes widen around the value */
    p = lt_plot_create("a constant series", "x", "y");
    lt_plot_series(p, "three", cx, cy, 10);
    lt_plot_panel(p, "all zero", NULL, NULL);
    lt_plot_series(p, "zero", NULL, zero, 10);
    lt_plot_panel(p, "only not-a-number, log y", NULL, NULL);
    lt_plot_log_y(p, 1);
    lt_plot_series(p, "none finite", NULL, nan3, 3);
    lt_plot_series(p, "zero on log", NULL, zero, 10);
    lt_plot_panel(p, "no series at all", NULL, NULL);
    lt_plot_panel(p, "log y, one value", NULL, NULL);
    lt_plot_log_y(p, 1);
    lt_plot_series(p, "const", NULL, cy, 10);
    svg = tp_save_check(p, "plot_constant.svg", "plot_constant");
    if (svg) {
        t_check(strstr(svg, ">3.0</text>") != NULL, "plot_constant_ticks", "want a tick labelled 3.0 around y = 3");
        t_check(tp_count(svg, "<clipPath id=") == 5 && strstr(svg, "lt-clip-4") != NULL, "plot_constant_panels",
                "want 5 panels with distinct clip paths");
    }
    free(svg);
    lt_plot_destroy(p);
}

static void test_plot_log_and_range(void) {
    double x[50], y[50];
    lt_plot *p;
    char *svg;
    int i, s;
    if (!t_want("plot_log")) return;
    for (i = 0; i < 50; i++) { x[i] = i; y[i] = 1e-3 * pow(0.9, i); }
    y[3] = 0;
    y[4] = -1;   /* not drawable on a log axis: skipped */
    p = lt_plot_create("learning rate", "step", "lr");
    lt_plot_log_y(p, 1);
    lt_plot_series(p, "lr", x, y, 50);
    lt_plot_panel(p, "fixed range", "step", "loss");
    lt_plot_range(p, 0, 1000, 0, NAN);   /* ymax automatic */
    s = lt_plot_series(p, "grows", NULL, NULL, 0);
    for (i = 0; i < 30; i++) lt_plot_append(p, s, i * 10.0, 2.0 + i);
    svg = tp_save_check(p, "plot_log.svg", "plot_log");
    if (svg) {
        t_check(strstr(svg, ">1e-3</text>") && strstr(svg, ">1e-5</text>"), "plot_log_ticks",
                "want powers of ten as tick labels on the log axis");
        t_check(tp_subpaths(svg, 0) == 2, "plot_log_skips_nonpositive", "want 2 strokes, got %d", tp_subpaths(svg, 0));
        t_check(strstr(svg, ">1000</text>") && strstr(svg, ">40</text>"), "plot_range_append",
                "want the fixed x range to 1000 and the appended points up to 31 (ticks to 40)");
    }
    free(svg);
    lt_plot_destroy(p);
}

static void test_plot_errors(void) {
    char path[512];
    lt_plot *p;
    double y[3] = {1, 2, 3};
    if (!t_want("plot_errors")) return;
    t_check(lt_plot_save(NULL, "x.svg") == LT_ERR_ARG && lt_plot_series(NULL, "a", NULL, y, 3) == -1 &&
                lt_plot_append(NULL, 0, 1, 1) == LT_ERR_ARG && strlen(lt_plot_error(NULL)) > 0,
            "plot_errors_null", "a NULL plot must be refused, not crash");
    lt_plot_destroy(NULL);

    p = lt_plot_create(NULL, NULL, NULL);
    t_check(lt_plot_series(p, "no y", NULL, NULL, 3) == -1 && strstr(lt_plot_error(p), "y is NULL") != NULL,
            "plot_errors_arg", "message: \"%s\"", lt_plot_error(p));
    t_check(lt_plot_series(p, "later", NULL, y, 3) == -1 && lt_plot_save(p, "build/tmp/never.svg") == LT_ERR_ARG,
            "plot_errors_sticky", "the first error should stick");
    lt_plot_destroy(p);

    p = lt_plot_create("t", NULL, NULL);
    t_check(lt_plot_append(p, 3, 1, 1) == LT_ERR_ARG && strstr(lt_plot_error(p), "series 3") != NULL,
            "plot_errors_append", "message: \"%s\"", lt_plot_error(p));
    lt_plot_destroy(p);

    p = lt_plot_create("t", NULL, NULL);
    lt_plot_series(p, "a", NULL, y, 3);
    snprintf(path, sizeof path, "%s/no/such/dir/plot.svg", t_tmp_dir());
    t_check(lt_plot_save(p, path) == LT_ERR_IO && strstr(lt_plot_error(p), "no/such/dir/plot.svg.tmp") != NULL,
            "plot_errors_io", "status and message: \"%s\"", lt_plot_error(p));
    lt_plot_destroy(p);
}

/* A file rewritten as points arrive (train_gpt --plot): every version is complete. */
static void test_plot_rewrite(void) {
    lt_plot *p;
    char *svg = NULL;
    int i, s, ok = 1;
    if (!t_want("plot_rewrite")) return;
    p = lt_plot_create("live", "step", "loss");
    s = lt_plot_series(p, "loss", NULL, NULL, 0);
    for (i = 0; i < 200 && ok; i++) {
        lt_plot_append(p, s, i, 5.0 / (1 + i));
        if (i % 50 == 49) {
            free(svg);
            svg = tp_save_check(p, "plot_live.svg", "plot_rewrite");
            ok = svg != NULL;
        }
    }
    if (svg) t_check(tp_count(svg, " L") == 199, "plot_rewrite_points", "want 200 points, got %d segments",
                     tp_count(svg, " L"));
    free(svg);
    lt_plot_destroy(p);
}

static void test_plot_all(void) {
    test_plot_checker();
    test_plot_basic();
    test_plot_nonfinite();
    test_plot_degenerate();
    test_plot_log_and_range();
    test_plot_errors();
    test_plot_rewrite();
}

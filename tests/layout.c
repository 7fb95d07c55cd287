/* tests/layout.c - the header's layout rules, checked on its parts (src/NN_name.h, in order).

   Run from the repository root:  build/layout [--list]
     back-calls   a part may use only functions defined in itself or in the parts above it;
                  a later part reaches an earlier one's code only through a declared seam
                  (a table of function pointers the later part fills: the device seam of
                  02_core.h, the capture hooks).  Every use of a function of a later part is
                  listed (caller part, function, callee, callee's part).
     cuda-guards  no "#if... LTRAIN_CUDA" outside the CUDA part and the public declarations.
     long-funcs   functions of the header longer than 100 lines (at most LONG_MAX_ALLOWED).
     comment-paths  every repository path named in a comment of src/, examples/, tests/, bench/
                  (src/..., examples/..., tests/..., bench/..., a part such as "05_ops.h")
                  exists.
     tags         every second-level tag (@@SECTION.piece, e.g. @@OPS.attention) named in a
                  comment of a part is listed in the CONTENTS of src/00_docs.h, and every tag
                  listed there heads exactly one sub-banner ("---- @@X.y ...") in the parts
                  (other comments may refer to it).
   Prints "ok NAME" or "FAIL NAME" per rule and ends with "N passed, N failed".  --list also
   prints the figures the rules count (every long function, every guard).

   The reader is a tokenizer, not a C parser: comments, strings and character constants are
   skipped; at brace depth 0 "name ( ... ) {" defines name, "name ( ... ) ;" only declares it;
   any other occurrence of a defined name is a use. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LONG_LINES 100
#define LONG_MAX_ALLOWED 1

typedef struct { char name[96]; int part, line, end; } Def;
typedef struct { char text[96]; int line, mac; } Tok;   /* mac: inside a #define's body */   /* text "" for punctuation other than ( ) { } ; */

static char parts[64][128];
static int nparts;
static Def *defs;
static int ndefs, capdefs;

static char *slurp(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)*n + 1);
    if (!s || fread(s, 1, (size_t)*n, f) != (size_t)*n) { fclose(f); free(s); return NULL; }
    s[*n] = 0;
    fclose(f);
    return s;
}

static int cmpstr(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* Tokens of one file: identifiers and the punctuation that shapes definitions.  Comments go to
   `comments` (one string, for the path rule) when it is not NULL. */
static Tok *tokenize(const char *s, long n, int *ntok, char **comments) {
    int cap = 1 << 16, nt = 0, line = 1;
    Tok *t = malloc(sizeof(Tok) * (size_t)cap);
    size_t cl = 0, cc = 1 << 16;
    char *com = malloc(cc);
    long i = 0;
    int bol = 1;   /* at the beginning of a line (only blanks so far) */
    long mac_end = -1;   /* a #define's body runs up to here */
#define ADDC(ch) do { if (cl + 2 >= cc) { cc *= 2; com = realloc(com, cc); } com[cl++] = (ch); } while (0)
    while (i < n) {
        char c = s[i];
        if (nt + 2 >= cap) { cap *= 2; t = realloc(t, sizeof(Tok) * (size_t)cap); }
        t[nt].mac = i < mac_end;
        if (c == '\n') { line++; i++; bol = 1; continue; }
        if (c == ' ' || c == '\t' || c == '\r') { i++; continue; }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) { if (s[i] == '\n') line++; ADDC(s[i]); i++; }
            ADDC('\n');
            i += 2;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') { ADDC(s[i]); i++; }
            ADDC('\n');
            continue;
        }
        if (c == '#' && bol) {   /* a preprocessor line: keep "#if..." lines as one token, skip the rest */
            long j = i;
            char buf[96];
            int k = 0;
            while (j < n && s[j] != '\n' && k < 95) {
                if (s[j] == '\\' && j + 1 < n && s[j + 1] == '\n') { j += 2; line++; continue; }
                buf[k++] = s[j++];
            }
            buf[k] = 0;
            int is_define = strncmp(buf, "#define", 7) == 0 || strncmp(buf, "# define", 8) == 0;
            if (!strncmp(buf, "#if", 3)) { snprintf(t[nt].text, sizeof t[nt].text, "%s", buf); t[nt++].line = line; }
            if (!is_define) {   /* the directive's rest, continuation lines included */
                while (i < n && s[i] != '\n') {
                    if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') { i += 2; line++; continue; }
                    if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') break;
                    i++;
                }
                continue;
            }
            /* #define: its body's identifiers are uses (a macro calling a function) */
            mac_end = i;
            while (mac_end < n && s[mac_end] != '\n') mac_end += (s[mac_end] == '\\' && mac_end + 1 < n) ? 2 : 1;
            i += (buf[1] == ' ') ? 8 : 7;
            bol = 0;
            continue;
        }
        bol = 0;
        if (c == '"' || c == '\'') {
            i++;
            while (i < n && s[i] != c) { if (s[i] == '\\') i++; else if (s[i] == '\n') line++; i++; }
            i++;
            t[nt].text[0] = 0; t[nt++].line = line;
            continue;
        }
        if (c == '\\' && i + 1 < n && s[i + 1] == '\n') { i += 2; line++; continue; }
        if (isalpha((unsigned char)c) || c == '_') {
            int k = 0;
            while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_')) { if (k < 95) t[nt].text[k++] = s[i]; i++; }
            t[nt].text[k] = 0; t[nt++].line = line;
            continue;
        }
        if (isdigit((unsigned char)c)) { while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '.')) i++; t[nt].text[0] = 0; t[nt++].line = line; continue; }
        if (strchr("(){};", c)) { t[nt].text[0] = c; t[nt].text[1] = 0; t[nt++].line = line; i++; continue; }
        if (c == '-' && i + 1 < n && s[i + 1] == '>') { strcpy(t[nt].text, "->"); t[nt++].line = line; i += 2; continue; }
        if (c == '.') { strcpy(t[nt].text, "."); t[nt++].line = line; i++; continue; }
        t[nt].text[0] = 0; t[nt++].line = line; i++;
    }
    com[cl] = 0;
    if (comments) *comments = com; else free(com);
    *ntok = nt;
    return t;
}

static int is_ident(const Tok *t) { return isalpha((unsigned char)t->text[0]) || t->text[0] == '_'; }
static int is_p(const Tok *t, char c) { return t->text[0] == c && t->text[1] == 0; }

static int is_keyword(const char *s) {
    static const char *kw[] = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case", "defined"};
    for (size_t k = 0; k < sizeof kw / sizeof *kw; k++) if (!strcmp(s, kw[k])) return 1;
    return 0;
}

static int find_def(const char *name) {
    for (int k = 0; k < ndefs; k++) if (!strcmp(defs[k].name, name)) return k;
    return -1;
}

/* Pass 1 (defs != NULL): record definitions.  Pass 2: count uses of later parts' functions. */
static int scan(int part, Tok *t, int nt, int record, int list) {
    int depth = 0, back = 0;
    const char *infn = "(file scope)";
    for (int i = 0; i < nt; i++) {
        if (t[i].mac && (is_p(&t[i], '{') || is_p(&t[i], '}'))) continue;   /* a macro's braces */
        if (is_p(&t[i], '{')) {
            /* extern "C" { of the public declarations: not a block */
            if (i >= 2 && !strcmp(t[i - 2].text, "extern") && t[i - 1].text[0] == 0) continue;
            depth++;
            continue;
        }
        if (is_p(&t[i], '}')) { if (depth > 0) depth--; continue; }
        if (!is_ident(&t[i])) continue;
        if (depth == 0 && !t[i].mac && i + 1 < nt && is_p(&t[i + 1], '(') && !is_keyword(t[i].text)) {
            int j = i + 1, d = 0;
            for (; j < nt; j++) { if (is_p(&t[j], '(')) d++; else if (is_p(&t[j], ')') && --d == 0) break; }
            /* skip __attribute__((...)) between ) and { */
            int k = j + 1;
            while (k < nt && !strcmp(t[k].text, "__attribute__")) {
                int dd = 0;
                for (k = k + 1; k < nt; k++) { if (is_p(&t[k], '(')) dd++; else if (is_p(&t[k], ')') && --dd == 0) break; }
                k++;
            }
            if (k < nt && is_p(&t[k], '{')) {
                int d2 = 0, e = k;
                for (; e < nt; e++) { if (is_p(&t[e], '{')) d2++; else if (is_p(&t[e], '}') && --d2 == 0) break; }
                if (record && find_def(t[i].text) < 0) {
                    if (ndefs == capdefs) { capdefs = capdefs ? 2 * capdefs : 1024; defs = realloc(defs, sizeof(Def) * (size_t)capdefs); }
                    snprintf(defs[ndefs].name, sizeof defs[ndefs].name, "%s", t[i].text);
                    defs[ndefs].part = part; defs[ndefs].line = t[i].line; defs[ndefs].end = t[e < nt ? e : nt - 1].line;
                    ndefs++;
                }
                infn = t[i].text;
                i = j;   /* the parameter list: not uses */
                continue;
            }
            if (k < nt && (is_p(&t[k], ';') || t[k].text[0] == 0)) { i = j; continue; }   /* a declaration */
        }
        if (record) continue;
        if (i > 0 && (!strcmp(t[i - 1].text, ".") || !strcmp(t[i - 1].text, "->"))) continue;   /* a member */
        int d = find_def(t[i].text);
        if (d >= 0 && defs[d].part > part) {
            back++;
            if (list) printf("  back-call: %s:%d %s -> %s (%s)\n", parts[part], t[i].line, infn, t[i].text, parts[defs[d].part]);
        }
    }
    return back;
}

/* Repository paths named in comments: src/..., examples/..., tests/..., bench/..., .ci/...,
   or a part's file name "NN_name.h". */
static int check_paths(const char *from, const char *com, int list) {
    static const char *pre[] = {"src/", "examples/", "tests/", "bench/", ".ci/"};
    int bad = 0;
    for (const char *p = com; *p; p++) {
        if (p > com && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '/' || p[-1] == '.' || p[-1] == '-')) continue;
        char path[256];
        int k = 0, ok = 0;
        for (int q = 0; q < 5; q++) if (!strncmp(p, pre[q], strlen(pre[q]))) ok = 1;
        if (!ok && isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) && p[2] == '_') ok = 2;
        if (!ok) continue;
        if (ok == 2) k = snprintf(path, sizeof path, "src/");
        const char *q = p;
        while (*q && (isalnum((unsigned char)*q) || strchr("_-./*", *q)) && k < 250) path[k++] = *q++;
        while (k > 0 && (path[k - 1] == '.' || path[k - 1] == '/')) k--;
        path[k] = 0;
        if (ok == 2 && !strstr(path, ".h")) continue;
        if (strchr(path, '*') || strstr(path, "NN_") || strstr(path, "...")) continue;   /* a pattern, not a file */
        if (ok == 1 && !strchr(path + strcspn(path, "/") + 1, '.') && !strchr(path, '.')) {
            struct stat st;   /* a folder named with a trailing part of a sentence: check it exists */
            if (stat(path, &st) == 0) continue;
        }
        struct stat st;
        if (stat(path, &st) != 0) {
            bad++;
            if (list || bad <= 20) printf("  missing: %s names %s\n", from, path);
        }
        p = q - 1;
    }
    return bad;
}

/* The second-level tags in text s: "@@" + capitals + "." + [a-z0-9_]+.  Each goes to out (up to
   max, 64 bytes each), and def[i] (when def is not NULL) says whether it stands in a sub-banner
   ("-- @@X.y" or "---- @@X.y": where the piece is) rather than in a reference to it; returns how
   many were found. */
static int find_tags(const char *s, char out[][64], int *def, int max) {
    int n = 0;
    for (const char *p = s; *p; p++) {
        if (p[0] != '@' || p[1] != '@' || (p > s && p[-1] == '@')) continue;
        const char *q = p + 2;
        while (isupper((unsigned char)*q)) q++;
        if (q == p + 2 || *q != '.' || !(islower((unsigned char)q[1]) || isdigit((unsigned char)q[1]))) continue;
        q++;
        while (islower((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '_') q++;
        if (n < max && q - p < 64) {
            memcpy(out[n], p, (size_t)(q - p));
            out[n][q - p] = 0;
            if (def) def[n] = p - s >= 3 && !strncmp(p - 3, "-- ", 3);
            n++;
        }
        p = q - 1;
    }
    return n;
}

/* tags: the CONTENTS of 00_docs.h (from "CONTENTS" to "==== @@DOCS") against the parts' comments. */
static int check_tags(char **coms, int list) {
    static char listed[1024][64], used[4096][64];
    static int def[4096];
    int nl = 0, nu = 0, bad = 0;
    long n;
    char *docs = slurp("src/00_docs.h", &n);
    if (!docs) { printf("  tags: cannot read src/00_docs.h\n"); return 1; }
    char *a = strstr(docs, "CONTENTS"), *b = a ? strstr(a, "==== @@DOCS") : NULL;
    if (!a || !b) { printf("  tags: no CONTENTS ... ==== @@DOCS in src/00_docs.h\n"); free(docs); return 1; }
    *b = 0;
    nl = find_tags(a, listed, NULL, 1024);
    for (int p = 0; p < nparts; p++)
        if (!strstr(parts[p], "00_docs")) nu += find_tags(coms[p], used + nu, def + nu, 4096 - nu);
    for (int i = 0; i < nu; i++) {
        int k = 0, seen = 0;
        while (k < nl && strcmp(listed[k], used[i])) k++;
        for (int j = 0; j < i; j++) seen |= !strcmp(used[j], used[i]);
        if (k == nl && !seen) { bad++; printf("  tag: %s is named in a part but not listed in 00_docs.h's CONTENTS\n", used[i]); }
    }
    for (int k = 0; k < nl; k++) {
        int c = 0;
        for (int i = 0; i < nu; i++) c += def[i] && !strcmp(listed[k], used[i]);
        if (c != 1) { bad++; printf("  tag: %s is listed in CONTENTS and heads %d sub-banners in the parts (one expected)\n", listed[k], c); }
        else if (list) printf("  tag: %s\n", listed[k]);
    }
    free(docs);
    return bad ? bad : (nl == 0);
}

static void list_dir(const char *dir, const char *ext, char out[][128], int *n, int max) {
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return;
    while ((e = readdir(d)) && *n < max) {
        size_t l = strlen(e->d_name), le = strlen(ext);
        if (l > le && !strcmp(e->d_name + l - le, ext)) snprintf(out[(*n)++], 128, "%.40s/%.80s", dir, e->d_name);
    }
    closedir(d);
    qsort(out, (size_t)*n, 128, cmpstr);
}

int main(int argc, char **argv) {
    int list = argc > 1 && !strcmp(argv[1], "--list");
    int passed = 0, failed = 0;
    list_dir("src", ".h", parts, &nparts, 64);
    if (nparts == 0) { printf("FAIL layout: no src/*.h (run from the repository root)\n0 passed, 1 failed\n"); return 1; }
    Tok *toks[64];
    int ntoks[64];
    char *coms[64];
    for (int p = 0; p < nparts; p++) {
        long n;
        char *s = slurp(parts[p], &n);
        if (!s) { printf("FAIL layout: cannot read %s\n", parts[p]); return 1; }
        toks[p] = tokenize(s, n, &ntoks[p], &coms[p]);
        free(s);
        scan(p, toks[p], ntoks[p], 1, 0);
    }
    /* back-calls */
    int back = 0;
    for (int p = 0; p < nparts; p++)   /* the public declarations' macros may name any public function */
        if (!strstr(parts[p], "_api")) back += scan(p, toks[p], ntoks[p], 0, 1);
    printf("%s back-calls: %d uses of a later part's function\n", back ? "FAIL" : "ok", back);
    back ? failed++ : passed++;
    /* CUDA guards outside the CUDA part and the public declarations */
    int guards = 0;
    for (int p = 0; p < nparts; p++) {
        if (strstr(parts[p], "_cuda") || strstr(parts[p], "_api")) continue;
        for (int i = 0; i < ntoks[p]; i++)
            if (!strncmp(toks[p][i].text, "#if", 3) && strstr(toks[p][i].text, "LTRAIN_CUDA")) {
                guards++;
                printf("  cuda-guard: %s:%d %s\n", parts[p], toks[p][i].line, toks[p][i].text);
            }
    }
    printf("%s cuda-guards: %d outside the CUDA part and the public declarations\n", guards ? "FAIL" : "ok", guards);
    guards ? failed++ : passed++;
    /* long functions */
    int nlong = 0;
    for (int k = 0; k < ndefs; k++) {
        int len = defs[k].end - defs[k].line + 1;
        if (len > LONG_LINES) {
            nlong++;
            printf("  long: %s:%d %s, %d lines\n", parts[defs[k].part], defs[k].line, defs[k].name, len);
        }
    }
    printf("%s long-funcs: %d functions over %d lines (at most %d)\n", nlong > LONG_MAX_ALLOWED ? "FAIL" : "ok",
           nlong, LONG_LINES, LONG_MAX_ALLOWED);
    nlong > LONG_MAX_ALLOWED ? failed++ : passed++;
    /* paths named in comments */
    int bad = 0;
    for (int p = 0; p < nparts; p++) bad += check_paths(parts[p], coms[p], list);
    static char files[512][128];
    int nf = 0;
    const char *dirs[] = {"examples", "tests", "bench", "tests/fuzz"};
    const char *exts[] = {".c", ".h", ".sh", ".py"};
    for (int d = 0; d < 4; d++)
        for (int e = 0; e < 4; e++) {
            int n0 = nf;
            list_dir(dirs[d], exts[e], files + nf, &nf, 512);
            (void)n0;
        }
    for (int f = 0; f < nf; f++) {
        long n;
        char *s = slurp(files[f], &n);
        if (!s) continue;
        int nt;
        char *com = NULL;
        if (strstr(files[f], ".sh") || strstr(files[f], ".py")) {
            /* # comments */
            size_t cl = 0;
            com = malloc((size_t)n + 1);
            for (long i = 0; i < n; i++)
                if (s[i] == '#' && (i == 0 || s[i - 1] == '\n' || s[i - 1] == ' ')) {
                    while (i < n && s[i] != '\n') com[cl++] = s[i++];
                    com[cl++] = '\n';
                }
            com[cl] = 0;
        } else {
            free(tokenize(s, n, &nt, &com));
        }
        bad += check_paths(files[f], com, list);
        free(com);
        free(s);
    }
    printf("%s comment-paths: %d repository paths named in comments that do not exist\n", bad ? "FAIL" : "ok", bad);
    bad ? failed++ : passed++;
    /* second-level tags */
    int badtags = check_tags(coms, list);
    printf("%s tags: %d second-level tags unlisted, missing or named twice\n", badtags ? "FAIL" : "ok", badtags);
    badtags ? failed++ : passed++;
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}

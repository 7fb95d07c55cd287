/* ==== @@TOK  (continued) training a byte-level BPE vocabulary ================================= */
/* Holds: lt_bpe_train (learn merges from text), the learned vocabulary's accessors, and its
   writers (Hugging Face tokenizer.json; GPT-2's encoder.json + vocab.bpe).
   Calls: @@CORE, @@DATA (lt_free), @@TOK (the GPT-2 pre-tokenizer).

   The algorithm is Hugging Face tokenizers' BpeTrainer (models/bpe/trainer.rs), byte-level:
     1. the text is split into pre-tokens by the pattern the encoder will use (lt_pretok_next:
        GPT-2's by default, or Llama-3's or Qwen2's), the whole text as one sequence; equal
        pre-tokens are counted once with their count (words);
     2. ids: the special tokens first (0..S-1), then the 256 bytes in the order of the characters
        standing for them (HF sorts its alphabet by code point): bytes 33..126, 161..172,
        174..255, then the rest ascending, as in GPT-2's encoder.json;
     3. every adjacent pair of ids in every word is counted (times the word's count), and a
        max-heap holds (count, pair) with the words where the pair occurs;
     4. repeat until the vocabulary has vocab_size tokens: pop the top entry; if its count is
        stale, push it again with the current count; stop when the count is 0 or below
        min_frequency; else the merge (a, b) -> new token: merged left to right, without
        overlap, in each word of the entry's list; each merge changes the counts of the pairs
        around it, and every pair that gained occurrences is pushed with the words it gained.
   Ties between equal counts go to the smallest pair (first id, then second), as HF's heap
   orders them.  A merge whose bytes equal an existing token's reuses that token's id (so
   vocab_size - S - 256 merges can be fewer than the merges made), as HF does.

   Where this differs from HF's trainer: special tokens' strings are not looked up when a merge
   forms the same bytes (HF compares a merged token's byte-level text with the specials' text;
   a byte-level text equal to a special token's needs the special to consist of GPT-2's printable
   characters and the merges to build it, which the tests do not meet); no limit_alphabet,
   max_token_length, continuing_subword_prefix or end_of_word_suffix (GPT-2 style BPE has none).
   Special-token strings inside the training text are counted as ordinary text. */

/* ---- @@TOK.train  merges from text: pair counts, their positions, a max-heap ------------------- */
typedef struct { int64_t count; uint32_t a, b; int32_t list; } lt__bt_entry; /* a heap entry */
typedef struct { int32_t *v; int32_t n, cap; } lt__bt_list;                  /* word indices */

struct lt_bpe {
    int n_special, n_vocab, n_merges, cap_vocab, cap_merges;
    lt_pretok pattern;          /* the pre-tokenizer it was trained with */
    unsigned char *bytes;       /* every token's bytes, one after another */
    size_t n_bytes, cap_bytes;
    size_t *off;                /* token id's bytes: bytes[off[id] .. off[id+1]) */
    int32_t *merges;            /* (n_merges, 3): left id, right id, result id */
    uint32_t *hslot;            /* token lookup by bytes: open addressing, id+1 (0 = empty) */
    size_t hcap;
};

typedef struct {
    lt_ctx *ctx;
    int oom;
    lt_pretok pattern;
    const unsigned char *text;
    /* words: the distinct pre-tokens; the bytes of word w are text[wtext[w] .. +wbytes[w]) */
    size_t *wtext; uint32_t *wbytes; int64_t *wcount; int32_t nwords, capwords;
    uint32_t *wslot; size_t wcap;               /* word lookup by bytes: index+1 (0 = empty) */
    int32_t *sym; size_t *wstart; int32_t *wlen; /* each word's current ids: sym[wstart[w] .. +wlen[w]) */
    /* pairs: key (a << 32 | b) -> index; count; pending list of words gained this merge */
    uint64_t *pkey; int64_t *pcount; int32_t *ppend; int32_t npairs, cappairs;
    uint32_t *pslot; size_t pcap;               /* pair lookup: index+1 (0 = empty) */
    int32_t *touched; int32_t ntouched, captouched;
    lt__bt_entry *heap; size_t nheap, capheap;
    lt__bt_list *lists; int32_t nlists, caplists;
} lt__bt;

/* Grows *p (an array of elem-byte items, capacity *cap) to hold need items; 0 when out of memory. */
static int lt__bt_grow(lt__bt *t, void **p, size_t *cap, size_t need, size_t elem) {
    size_t ncap = *cap ? *cap : 16, bytes;
    void *q;
    if (need <= *cap) return 1;
    while (ncap < need) ncap *= 2;
    if (!lt_mul_size(ncap, elem, &bytes) || !(q = LT__REALLOC(*p, bytes))) { if (t) t->oom = 1; return 0; }
    *p = q;
    *cap = ncap;
    return 1;
}
#define LT__BT_GROW(t, arr, capv, need) \
    lt__bt_grow((t), (void **)&(arr), &(capv), (size_t)(need), sizeof *(arr))

static uint64_t lt__bt_hash(const unsigned char *s, size_t n) { /* FNV-1a 64 */
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}
static uint64_t lt__bt_mix(uint64_t x) { /* a 64-bit finalizer: pair keys to well-spread slots */
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    return x;
}

/* The bytes' order among the first ids (module comment, step 2): HF sorts its alphabet, the
   characters standing for the bytes (lt_tok_byte_char), by code point.  rank[byte] in 0..255. */
static void lt__bt_byte_ranks(int rank[256]) {
    int b, c;
    for (b = 0; b < 256; b++)
        for (rank[b] = 0, c = 0; c < 256; c++) rank[b] += lt_tok_byte_char(c) < lt_tok_byte_char(b);
}

/* Index of pair (a, b), created with count 0 when create is set and it is new; -1 when absent
   (or out of memory). */
static int32_t lt__bt_pair(lt__bt *t, uint32_t a, uint32_t b, int create) {
    uint64_t key = ((uint64_t)a << 32) | b;
    size_t i, mask;
    if ((size_t)t->npairs * 2 + 2 > t->pcap) { /* rehash at half full */
        size_t ncap = t->pcap ? t->pcap * 2 : 1024, bytes;
        uint32_t *ns;
        int32_t k;
        if (!lt_mul_size(ncap, sizeof *ns, &bytes) || !(ns = (uint32_t *)LT__MALLOC(bytes))) { t->oom = 1; return -1; }
        memset(ns, 0, bytes);
        for (k = 0; k < t->npairs; k++) {
            for (i = lt__bt_mix(t->pkey[k]) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1)) {}
            ns[i] = (uint32_t)k + 1;
        }
        LT__FREE(t->pslot);
        t->pslot = ns;
        t->pcap = ncap;
    }
    mask = t->pcap - 1;
    for (i = lt__bt_mix(key) & mask; t->pslot[i]; i = (i + 1) & mask)
        if (t->pkey[t->pslot[i] - 1] == key) return (int32_t)t->pslot[i] - 1;
    if (!create) return -1;
    {
        size_t cp = (size_t)t->cappairs, cc = (size_t)t->cappairs, cq = (size_t)t->cappairs;
        int32_t k = t->npairs;
        if (!LT__BT_GROW(t, t->pkey, cp, k + 1) || !LT__BT_GROW(t, t->pcount, cc, k + 1) ||
            !LT__BT_GROW(t, t->ppend, cq, k + 1))
            return -1;
        t->cappairs = (int32_t)(cp < cc ? (cp < cq ? cp : cq) : (cc < cq ? cc : cq));
        t->pkey[k] = key;
        t->pcount[k] = 0;
        t->ppend[k] = -1;
        t->pslot[i] = (uint32_t)k + 1;
        t->npairs = k + 1;
        return k;
    }
}

/* A fresh, empty word list; -1 when out of memory. */
static int32_t lt__bt_list_new(lt__bt *t) {
    size_t cap = (size_t)t->caplists;
    if (!LT__BT_GROW(t, t->lists, cap, t->nlists + 1)) return -1;
    t->caplists = (int32_t)cap;
    t->lists[t->nlists].v = NULL;
    t->lists[t->nlists].n = t->lists[t->nlists].cap = 0;
    return t->nlists++;
}
/* Appends word w to list l unless it is already its last entry (words arrive in order). */
static void lt__bt_list_add(lt__bt *t, int32_t l, int32_t w) {
    lt__bt_list *L = &t->lists[l];
    size_t cap = (size_t)L->cap;
    if (L->n && L->v[L->n - 1] == w) return;
    if (!LT__BT_GROW(t, L->v, cap, L->n + 1)) return;
    L->cap = (int32_t)cap;
    L->v[L->n++] = w;
}

/* The heap: the largest count on top; equal counts, the smaller pair (a, then b) on top. */
static int lt__bt_above(const lt__bt_entry *x, const lt__bt_entry *y) {
    if (x->count != y->count) return x->count > y->count;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}
static void lt__bt_push(lt__bt *t, lt__bt_entry e) {
    size_t i;
    if (!LT__BT_GROW(t, t->heap, t->capheap, t->nheap + 1)) return;
    for (i = t->nheap++; i > 0 && lt__bt_above(&e, &t->heap[(i - 1) / 2]); i = (i - 1) / 2)
        t->heap[i] = t->heap[(i - 1) / 2];
    t->heap[i] = e;
}
static lt__bt_entry lt__bt_pop(lt__bt *t) {
    lt__bt_entry top = t->heap[0], last = t->heap[--t->nheap];
    size_t i = 0, c;
    while ((c = 2 * i + 1) < t->nheap) {
        if (c + 1 < t->nheap && lt__bt_above(&t->heap[c + 1], &t->heap[c])) c++;
        if (!lt__bt_above(&t->heap[c], &last)) break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (t->nheap) t->heap[i] = last;
    return top;
}

/* Counts one pre-token (bytes s[0..n) of the text). */
static void lt__bt_add_word(lt__bt *t, size_t at, size_t n) {
    const unsigned char *s = t->text + at;
    size_t i, mask;
    int32_t w;
    if (n == 0 || n > 0xffffffffu) return;
    if ((size_t)t->nwords * 2 + 2 > t->wcap) {
        size_t ncap = t->wcap ? t->wcap * 2 : 1024, bytes;
        uint32_t *ns;
        if (!lt_mul_size(ncap, sizeof *ns, &bytes) || !(ns = (uint32_t *)LT__MALLOC(bytes))) { t->oom = 1; return; }
        memset(ns, 0, bytes);
        for (w = 0; w < t->nwords; w++) {
            for (i = lt__bt_hash(t->text + t->wtext[w], t->wbytes[w]) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1)) {}
            ns[i] = (uint32_t)w + 1;
        }
        LT__FREE(t->wslot);
        t->wslot = ns;
        t->wcap = ncap;
    }
    mask = t->wcap - 1;
    for (i = lt__bt_hash(s, n) & mask; t->wslot[i]; i = (i + 1) & mask) {
        w = (int32_t)t->wslot[i] - 1;
        if (t->wbytes[w] == n && memcmp(t->text + t->wtext[w], s, n) == 0) { t->wcount[w]++; return; }
    }
    {
        size_t c1 = (size_t)t->capwords, c2 = c1, c3 = c1;
        w = t->nwords;
        if (!LT__BT_GROW(t, t->wtext, c1, w + 1) || !LT__BT_GROW(t, t->wbytes, c2, w + 1) ||
            !LT__BT_GROW(t, t->wcount, c3, w + 1))
            return;
        t->capwords = (int32_t)(c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3));
        t->wtext[w] = at;
        t->wbytes[w] = (uint32_t)n;
        t->wcount[w] = 1;
        t->wslot[i] = (uint32_t)w + 1;
        t->nwords = w + 1;
    }
}

/* The learned vocabulary: token id's bytes appended, found again by its bytes when lookup is set
   (the bytes and merged tokens; specials are not looked up).  Returns the id (an existing one when
   lookup finds the bytes), or -1 when out of memory. */
static int lt__bpe_add(lt_bpe *v, const unsigned char *s, size_t n, int lookup) {
    size_t i, mask, need, cap;
    uint64_t h = lt__bt_hash(s, n);
    int id;
    if (lookup && v->hcap) {
        mask = v->hcap - 1;
        for (i = h & mask; v->hslot[i]; i = (i + 1) & mask) {
            id = (int)v->hslot[i] - 1;
            if (v->off[id + 1] - v->off[id] == n && memcmp(v->bytes + v->off[id], s, n) == 0) return id;
        }
    }
    if ((size_t)v->n_vocab * 2 + 2 > v->hcap) { /* rehash at half full */
        size_t ncap = v->hcap ? v->hcap * 2 : 1024, bytes;
        uint32_t *ns;
        if (!lt_mul_size(ncap, sizeof *ns, &bytes) || !(ns = (uint32_t *)LT__MALLOC(bytes))) return -1;
        memset(ns, 0, bytes);
        for (id = v->n_special; id < v->n_vocab; id++) {
            for (i = lt__bt_hash(v->bytes + v->off[id], v->off[id + 1] - v->off[id]) & (ncap - 1); ns[i];
                 i = (i + 1) & (ncap - 1)) {}
            ns[i] = (uint32_t)id + 1;
        }
        LT__FREE(v->hslot);
        v->hslot = ns;
        v->hcap = ncap;
    }
    cap = (size_t)v->cap_vocab;
    if (!lt_add_size(v->n_bytes, n, &need) || !lt__bt_grow(NULL, (void **)&v->bytes, &v->cap_bytes, need, 1) ||
        !lt__bt_grow(NULL, (void **)&v->off, &cap, (size_t)v->n_vocab + 2, sizeof *v->off))
        return -1;
    v->cap_vocab = (int)(cap > 0x7fffffff ? 0x7fffffff : cap);
    if (n) memcpy(v->bytes + v->n_bytes, s, n);
    v->n_bytes += n;
    id = v->n_vocab++;
    v->off[id + 1] = v->n_bytes;
    if (lookup) {
        mask = v->hcap - 1;
        for (i = h & mask; v->hslot[i]; i = (i + 1) & mask) {}
        v->hslot[i] = (uint32_t)id + 1;
    }
    return id;
}

/* Pair (x, y)'s count changes by delta for word w; a gain puts w on the pair's pending list. */
static void lt__bt_change(lt__bt *t, uint32_t x, uint32_t y, int64_t delta, int32_t w) {
    int32_t p = lt__bt_pair(t, x, y, delta > 0);
    if (p < 0) return;
    t->pcount[p] += delta;
    if (delta <= 0) return;
    if (t->ppend[p] < 0) {
        size_t cap = (size_t)t->captouched;
        if (!LT__BT_GROW(t, t->touched, cap, t->ntouched + 1) || (t->ppend[p] = lt__bt_list_new(t)) < 0) return;
        t->captouched = (int32_t)cap;
        t->touched[t->ntouched++] = p;
    }
    lt__bt_list_add(t, t->ppend[p], w);
}

/* Merges (a, b) -> c in word w, left to right without overlap (as HF's Word::merge): each merge
   takes one from (prev, a) and (b, next) and adds one to (prev, c) and (c, next), times the
   word's count; prev is what the word now holds before the merge (perhaps a c just made). */
static void lt__bt_merge_word(lt__bt *t, int32_t w, uint32_t a, uint32_t b, uint32_t c) {
    int32_t *s = t->sym + t->wstart[w];
    int32_t n = t->wlen[w], r = 0, o = 0;
    int64_t k = t->wcount[w];
    while (r < n) {
        if ((uint32_t)s[r] == a && r + 1 < n && (uint32_t)s[r + 1] == b) {
            if (o > 0) {
                lt__bt_change(t, (uint32_t)s[o - 1], a, -k, w);
                lt__bt_change(t, (uint32_t)s[o - 1], c, k, w);
            }
            if (r + 2 < n) {
                lt__bt_change(t, b, (uint32_t)s[r + 2], -k, w);
                lt__bt_change(t, c, (uint32_t)s[r + 2], k, w);
            }
            s[o++] = (int32_t)c;
            r += 2;
        } else {
            s[o++] = s[r++];
        }
    }
    t->wlen[w] = o;
}

/* Every pair that gained occurrences in this merge goes on the heap with its new words. */
static void lt__bt_flush(lt__bt *t) {
    int32_t i;
    for (i = 0; i < t->ntouched; i++) {
        int32_t p = t->touched[i], l = t->ppend[p];
        lt__bt_entry e;
        t->ppend[p] = -1;
        e.count = t->pcount[p];
        e.a = (uint32_t)(t->pkey[p] >> 32);
        e.b = (uint32_t)t->pkey[p];
        e.list = l;
        if (e.count > 0) lt__bt_push(t, e);
        else { LT__FREE(t->lists[l].v); t->lists[l].v = NULL; }
    }
    t->ntouched = 0;
}

/* Steps 2-3 of the module comment: the words' first ids, the pairs' counts and word lists, the heap. */
static void lt__bt_init(lt__bt *t, const lt_bpe *v) {
    int rank[256];
    size_t total = 0, cap = 0;
    int32_t w, j, p;
    lt__bt_byte_ranks(rank);
    for (w = 0; w < t->nwords; w++) total += t->wbytes[w];
    if (!lt__bt_grow(t, (void **)&t->sym, &cap, total ? total : 1, sizeof *t->sym)) return;
    cap = 0;
    if (!LT__BT_GROW(t, t->wstart, cap, t->nwords + 1)) return;
    cap = 0;
    if (!LT__BT_GROW(t, t->wlen, cap, t->nwords + 1)) return;
    for (total = 0, w = 0; w < t->nwords; w++) {
        const unsigned char *s = t->text + t->wtext[w];
        t->wstart[w] = total;
        t->wlen[w] = (int32_t)t->wbytes[w];
        for (j = 0; j < t->wlen[w]; j++) t->sym[total + (size_t)j] = v->n_special + rank[s[j]];
        for (j = 0; j + 1 < t->wlen[w] && !t->oom; j++) {
            p = lt__bt_pair(t, (uint32_t)t->sym[total + j], (uint32_t)t->sym[total + j + 1], 1);
            if (p < 0) return;
            t->pcount[p] += t->wcount[w];
            if (t->ppend[p] < 0 && (t->ppend[p] = lt__bt_list_new(t)) < 0) return;
            lt__bt_list_add(t, t->ppend[p], w);
        }
        total += t->wbytes[w];
    }
    for (p = 0; p < t->npairs && !t->oom; p++) {
        lt__bt_entry e;
        e.count = t->pcount[p];
        e.a = (uint32_t)(t->pkey[p] >> 32);
        e.b = (uint32_t)t->pkey[p];
        e.list = t->ppend[p];
        t->ppend[p] = -1;
        lt__bt_push(t, e);
    }
}

/* Step 4: merge until the vocabulary is full, the pairs run out or fall below min_frequency. */
static void lt__bt_run(lt__bt *t, lt_bpe *v, int vocab_size, int64_t min_frequency) {
    unsigned char *buf = NULL;
    size_t bufcap = 0;
    while (v->n_vocab < vocab_size && t->nheap && !t->oom) {
        lt__bt_entry e = lt__bt_pop(t);
        int32_t p = lt__bt_pair(t, e.a, e.b, 0), i;
        size_t la, lb, cap = (size_t)v->cap_merges;
        int c;
        if (p < 0) break;
        if (e.count != t->pcount[p]) { e.count = t->pcount[p]; lt__bt_push(t, e); continue; }
        if (e.count < 1 || e.count < min_frequency) { lt__bt_push(t, e); break; }
        la = v->off[e.a + 1] - v->off[e.a];
        lb = v->off[e.b + 1] - v->off[e.b];
        if (!lt__bt_grow(t, (void **)&buf, &bufcap, la + lb, 1)) break;
        memcpy(buf, v->bytes + v->off[e.a], la);
        memcpy(buf + la, v->bytes + v->off[e.b], lb);
        if ((c = lt__bpe_add(v, buf, la + lb, 1)) < 0 ||
            !lt__bt_grow(t, (void **)&v->merges, &cap, 3 * ((size_t)v->n_merges + 1), sizeof *v->merges)) {
            t->oom = 1;
            break;
        }
        v->cap_merges = (int)cap;
        v->merges[3 * v->n_merges] = (int32_t)e.a;
        v->merges[3 * v->n_merges + 1] = (int32_t)e.b;
        v->merges[3 * v->n_merges + 2] = c;
        v->n_merges++;
        for (i = 0; i < t->lists[e.list].n; i++) lt__bt_merge_word(t, t->lists[e.list].v[i], e.a, e.b, (uint32_t)c);
        lt__bt_flush(t);
        LT__FREE(t->lists[e.list].v);
        t->lists[e.list].v = NULL;
    }
    LT__FREE(buf);
}

static void lt__bt_free(lt__bt *t) {
    int32_t i;
    for (i = 0; i < t->nlists; i++) LT__FREE(t->lists[i].v);
    LT__FREE(t->lists); LT__FREE(t->heap); LT__FREE(t->touched);
    LT__FREE(t->pkey); LT__FREE(t->pcount); LT__FREE(t->ppend); LT__FREE(t->pslot);
    LT__FREE(t->sym); LT__FREE(t->wstart); LT__FREE(t->wlen);
    LT__FREE(t->wtext); LT__FREE(t->wbytes); LT__FREE(t->wcount); LT__FREE(t->wslot);
}

LTRAIN_DEF void lt_bpe_free(lt_bpe *v) {
    if (!v) return;
    LT__FREE(v->bytes); LT__FREE(v->off); LT__FREE(v->merges); LT__FREE(v->hslot);
    LT__FREE(v);
}

/* Step 1: the text's pre-tokens (the whole text as one sequence), counted. */
static void lt__bt_split(lt__bt *t, size_t n) {
    size_t i, k;
    for (i = 0; i < n && !t->oom; i += k) {
        k = lt_pretok_next(t->pattern, (const char *)t->text + i, n - i);
        if (k == 0) break;
        lt__bt_add_word(t, i, k);
    }
}

/* The vocabulary before any merge: the specials, then the 256 bytes in GPT-2's order. */
static lt_bpe *lt__bpe_new(lt_ctx *ctx, const lt_bpe_opts *o) {
    int rank[256], inv[256], b, i;
    size_t cap = 0;
    lt_bpe *v = (lt_bpe *)LT__MALLOC(sizeof *v);
    if (!v) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_bpe_train: out of memory"); return NULL; }
    memset(v, 0, sizeof *v);
    if (!lt__bt_grow(NULL, (void **)&v->off, &cap, 1024, sizeof *v->off)) goto oom;
    v->cap_vocab = (int)cap;
    v->off[0] = 0;
    for (i = 0; i < o->n_special; i++)
        if (lt__bpe_add(v, (const unsigned char *)o->special[i], strlen(o->special[i]), 0) < 0) goto oom;
    v->n_special = o->n_special;
    lt__bt_byte_ranks(rank);
    for (b = 0; b < 256; b++) inv[rank[b]] = b;
    for (i = 0; i < 256; i++) {
        unsigned char c = (unsigned char)inv[i];
        if (lt__bpe_add(v, &c, 1, 1) < 0) goto oom;
    }
    return v;
oom:
    lt_bpe_free(v);
    lt_set_error(ctx, LT_ERR_NOMEM, "lt_bpe_train: out of memory");
    return NULL;
}

LTRAIN_DEF lt_bpe_opts lt_bpe_defaults(void) {
    lt_bpe_opts o;
    static const char *const eot[1] = {"<|endoftext|>"};
    o.vocab_size = 4096;
    o.min_frequency = 0;
    o.n_special = 1;
    o.special = eot;
    o.pattern = LT_PRETOK_GPT2;
    return o;
}

LTRAIN_DEF lt_bpe *lt_bpe_train(lt_ctx *ctx, const void *text, size_t n, const lt_bpe_opts *opts) {
    lt_bpe_opts o = opts ? *opts : lt_bpe_defaults();
    lt__bt t;
    lt_bpe *v;
    int i, j;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!text && n) { lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: text is NULL but n is %zu", n); return NULL; }
    if (o.pattern == 0) o.pattern = LT_PRETOK_GPT2;
    if (o.pattern != LT_PRETOK_GPT2 && o.pattern != LT_PRETOK_CL100K && o.pattern != LT_PRETOK_QWEN2) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: pattern is %d (LT_PRETOK_GPT2, LT_PRETOK_CL100K or "
                     "LT_PRETOK_QWEN2)", (int)o.pattern);
        return NULL;
    }
    if (o.n_special < 0 || o.n_special > 4096 || (o.n_special && !o.special)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: n_special is %d (0..4096, with special[] set)", o.n_special);
        return NULL;
    }
    for (i = 0; i < o.n_special; i++) {
        if (!o.special[i] || !o.special[i][0]) {
            lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: special[%d] is NULL or empty", i);
            return NULL;
        }
        for (j = 0; j < i; j++)
            if (strcmp(o.special[i], o.special[j]) == 0) {
                lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: special[%d] and special[%d] are both \"%s\"", j, i, o.special[i]);
                return NULL;
            }
    }
    if (o.vocab_size < 256 + o.n_special || o.vocab_size > (1 << 24)) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_train: vocab_size is %d: it counts the %d special tokens and the 256 "
                     "bytes, so it must be %d..%d", o.vocab_size, o.n_special, 256 + o.n_special, 1 << 24);
        return NULL;
    }
    if (!(v = lt__bpe_new(ctx, &o))) return NULL;
    v->pattern = o.pattern;
    memset(&t, 0, sizeof t);
    t.ctx = ctx;
    t.pattern = o.pattern;
    t.text = (const unsigned char *)text;
    lt__bt_split(&t, n);
    if (!t.oom) lt__bt_init(&t, v);
    if (!t.oom) lt__bt_run(&t, v, o.vocab_size, o.min_frequency);
    lt__bt_free(&t);
    if (t.oom) {
        lt_bpe_free(v);
        lt_set_error(ctx, LT_ERR_NOMEM, "lt_bpe_train: out of memory (%zu bytes of text)", n);
        return NULL;
    }
    return v;
}

LTRAIN_DEF int lt_bpe_vocab_size(const lt_bpe *v) { return v ? v->n_vocab : 0; }
LTRAIN_DEF int lt_bpe_n_merges(const lt_bpe *v) { return v ? v->n_merges : 0; }
LTRAIN_DEF int lt_bpe_n_special(const lt_bpe *v) { return v ? v->n_special : 0; }
LTRAIN_DEF int lt_bpe_merge(const lt_bpe *v, int i, int *left, int *right) {
    if (!v || i < 0 || i >= v->n_merges) return -1;
    if (left) *left = v->merges[3 * i];
    if (right) *right = v->merges[3 * i + 1];
    return v->merges[3 * i + 2];
}
LTRAIN_DEF const unsigned char *lt_bpe_token(const lt_bpe *v, int id, size_t *len) {
    if (len) *len = 0;
    if (!v || id < 0 || id >= v->n_vocab) return NULL;
    if (len) *len = v->off[id + 1] - v->off[id];
    return v->bytes + v->off[id];
}

/* ---- @@TOK.save  the learned vocabulary as tokenizer.json, or encoder.json + vocab.bpe -------- */
/* Bytes as GPT-2's byte-level text (each byte one character, lt_tok_byte_char); in a JSON
   string ('"' and '\' escaped) when json is set. */
static void lt__bt_put_bytes(FILE *f, const unsigned char *s, size_t n, int json) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t c = lt_tok_byte_char(s[i]);   /* below U+0800: one or two UTF-8 bytes */
        if (json && (c == '"' || c == '\\')) fputc('\\', f);
        if (c < 0x80) fputc((int)c, f);
        else { fputc((int)(0xc0 | (c >> 6)), f); fputc((int)(0x80 | (c & 0x3f)), f); }
    }
}
/* A special token's text as a JSON string's contents (its bytes as they are, escapes for JSON). */
static void lt__bt_put_text(FILE *f, const unsigned char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\') fprintf(f, "\\%c", s[i]);
        else if (s[i] < 0x20) fprintf(f, "\\u%04x", s[i]);
        else fputc(s[i], f);
    }
}
static void lt__bt_put_token(FILE *f, const lt_bpe *v, int id) {
    size_t n;
    const unsigned char *s = lt_bpe_token(v, id, &n);
    fputc('"', f);
    if (id < v->n_special) lt__bt_put_text(f, s, n);
    else lt__bt_put_bytes(f, s, n, 1);
    fputc('"', f);
}

static lt_status lt__bt_close(lt_ctx *ctx, FILE *f, const char *path) {
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return lt_set_error(ctx, LT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return LT_OK;
}

/* The pre_tokenizer field: GPT-2's is HF's ByteLevel with use_regex; the others a Split on the
   pattern's regex (as @@TOK's loader knows it), then a ByteLevel without regex. */
static void lt__bt_put_pretok(FILE *f, lt_pretok p) {
    size_t r;
    if (p == LT_PRETOK_GPT2) {
        fprintf(f, "  \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
                   "\"use_regex\": true},\n");
        return;
    }
    for (r = 0; r + 1 < sizeof lt__tok_known_re / sizeof lt__tok_known_re[0] && lt__tok_known_re[r].p != p; r++) {}
    fprintf(f, "  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [\n    {\"type\": \"Split\", "
               "\"pattern\": {\"Regex\": \"");
    lt__bt_put_text(f, (const unsigned char *)lt__tok_known_re[r].re, strlen(lt__tok_known_re[r].re));
    fprintf(f, "\"}, \"behavior\": \"Isolated\", \"invert\": false},\n    {\"type\": \"ByteLevel\", "
               "\"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]},\n");
}

/* Hugging Face's tokenizer.json for a byte-level BPE model, the fields as BpeTrainer's tokenizer
   saves them (the pre-tokenizer without a prefix space, byte-level decoder). */
LTRAIN_DEF lt_status lt_bpe_save_json(lt_ctx *ctx, const lt_bpe *v, const char *path) {
    FILE *f;
    int i;
    if (!v || !path) return lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_save_json: vocabulary and path must not be NULL");
    if (!(f = fopen(path, "wb"))) return lt_set_error(ctx, LT_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    fprintf(f, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [");
    for (i = 0; i < v->n_special; i++) {
        fprintf(f, "%s\n    {\"id\": %d, \"content\": ", i ? "," : "", i);
        lt__bt_put_token(f, v, i);
        fprintf(f, ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, "
                   "\"special\": true}");
    }
    fprintf(f, "%s],\n  \"normalizer\": null,\n", v->n_special ? "\n  " : "");
    lt__bt_put_pretok(f, v->pattern);
    fprintf(f, "  \"post_processor\": null,\n");
    fprintf(f, "  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, "
               "\"use_regex\": true},\n");
    fprintf(f, "  \"model\": {\n    \"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, "
               "\"continuing_subword_prefix\": null, \"end_of_word_suffix\": null, \"fuse_unk\": false, "
               "\"byte_fallback\": false, \"ignore_merges\": false,\n    \"vocab\": {");
    for (i = 0; i < v->n_vocab; i++) {
        fprintf(f, "%s\n      ", i ? "," : "");
        lt__bt_put_token(f, v, i);
        fprintf(f, ": %d", i);
    }
    fprintf(f, "\n    },\n    \"merges\": [");
    for (i = 0; i < v->n_merges; i++) {
        fprintf(f, "%s\n      [", i ? "," : "");
        lt__bt_put_token(f, v, v->merges[3 * i]);
        fputs(", ", f);
        lt__bt_put_token(f, v, v->merges[3 * i + 1]);
        fputc(']', f);
    }
    fprintf(f, "\n    ]\n  }\n}\n");
    return lt__bt_close(ctx, f, path);
}

/* GPT-2's pair: encoder.json (token -> id, specials included) and vocab.bpe ("#version: 0.2"
   then one merge "left right" per line, in order). */
LTRAIN_DEF lt_status lt_bpe_save_gpt2(lt_ctx *ctx, const lt_bpe *v, const char *encoder_json, const char *vocab_bpe) {
    FILE *f;
    int i;
    lt_status s;
    if (!v || !encoder_json || !vocab_bpe)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_save_gpt2: vocabulary and paths must not be NULL");
    if (v->pattern != LT_PRETOK_GPT2)
        return lt_set_error(ctx, LT_ERR_ARG, "lt_bpe_save_gpt2: %s: the vocabulary was trained with another "
                            "pre-tokenizer than GPT-2's, which encoder.json + vocab.bpe cannot record "
                            "(hint: lt_bpe_save_json)", vocab_bpe);
    if (!(f = fopen(encoder_json, "wb")))
        return lt_set_error(ctx, LT_ERR_IO, "%s: cannot create: %s", encoder_json, strerror(errno));
    fputc('{', f);
    for (i = 0; i < v->n_vocab; i++) {
        if (i) fputs(", ", f);
        lt__bt_put_token(f, v, i);
        fprintf(f, ": %d", i);
    }
    fputs("}\n", f);
    if ((s = lt__bt_close(ctx, f, encoder_json)) != LT_OK) return s;
    if (!(f = fopen(vocab_bpe, "wb")))
        return lt_set_error(ctx, LT_ERR_IO, "%s: cannot create: %s", vocab_bpe, strerror(errno));
    fputs("#version: 0.2\n", f);
    for (i = 0; i < v->n_merges; i++) {
        size_t n;
        const unsigned char *t = lt_bpe_token(v, v->merges[3 * i], &n);
        lt__bt_put_bytes(f, t, n, 0);
        fputc(' ', f);
        t = lt_bpe_token(v, v->merges[3 * i + 1], &n);
        lt__bt_put_bytes(f, t, n, 0);
        fputc('\n', f);
    }
    return lt__bt_close(ctx, f, vocab_bpe);
}

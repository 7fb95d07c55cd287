/* test_tok.c - the tokenizers (@@TOK): the pre-tokenizer patterns on chosen cases, and (with the
   references of tests/ref/gen_tok.py) encode and decode against tiktoken and Hugging Face
   tokenizers.  #included by test_main.c. */

/* The pre-tokens of text by pattern p, joined with '|' into buf. */
static const char *tt__split(lt_pretok p, const char *text, char *buf, size_t cap) {
    size_t n = strlen(text), i = 0, o = 0, k;
    while (i < n) {
        k = lt_pretok_next(p, text + i, n - i);
        if (k == 0 || k > n - i) { snprintf(buf, cap, "(bad length %zu at %zu)", k, i); return buf; }
        if (o && o + 1 < cap) buf[o++] = '|';
        if (o + k + 1 >= cap) break;
        memcpy(buf + o, text + i, k);
        o += k;
        i += k;
    }
    buf[o] = 0;
    return buf;
}

static void tt__pretok_cases(void) {
    static const struct { lt_pretok p; const char *text, *want; } cases[] = {
        {LT_PRETOK_GPT2, "Hello world", "Hello| world"},
        {LT_PRETOK_GPT2, "I'm he's we'll they'D", "I|'m| he|'s| we|'ll| they|'|D"},
        {LT_PRETOK_GPT2, "a  b   c\n\nd", "a| | b|  | c|\n|\n|d"},
        {LT_PRETOK_GPT2, "x   ", "x|   "},
        {LT_PRETOK_GPT2, "123456 7.5!! ?", "123456| 7|.|5|!!| ?"},
        {LT_PRETOK_GPT2, "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87", "caf\xc3\xa9| \xe4\xb8\xad\xe6\x96\x87"},
        {LT_PRETOK_GPT2, "a\xff\xfe" "b", "a|\xff\xfe|b"},
        {LT_PRETOK_CL100K, "I'M HE'S we'LL", "I|'M| HE|'S| we|'LL"},
        {LT_PRETOK_CL100K, "1234567 x", "123|456|7| x"},
        {LT_PRETOK_CL100K, "\"hello\" (world)", "\"hello|\"| (|world|)"},
        {LT_PRETOK_CL100K, "a;\n\nb  \n c", "a|;\n\n|b|  \n| c"},
        {LT_PRETOK_CL100K, "x  \t y", "x|  \t| y"},
        {LT_PRETOK_QWEN2, "1234 ab", "1|2|3|4| ab"},
    };
    char buf[256], name[64];
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(name, sizeof name, "tok.pretok.case%zu", i);
        if (!t_want(name)) continue;
        tt__split(cases[i].p, cases[i].text, buf, sizeof buf);
        t_check(strcmp(buf, cases[i].want) == 0, name, "\"%s\" -> \"%s\" (want \"%s\")", cases[i].text, buf, cases[i].want);
    }
}

/* The byte alphabet is a bijection between the 256 bytes and 256 characters. */
static void tt__byte_alphabet(void) {
    int b, ok = 1;
    if (!t_want("tok.byte_alphabet")) return;
    for (b = 0; b < 256; b++) ok &= lt_tok_char_byte(lt_tok_byte_char(b)) == b;
    ok &= lt_tok_byte_char(' ') == 0x120 && lt_tok_byte_char('\n') == 0x10a && lt_tok_byte_char(0xad) == 0x143 &&
          lt_tok_char_byte('A') == 'A' && lt_tok_char_byte(0x144) == -1 && lt_tok_char_byte(0xad) == -1;
    t_check(ok, "tok.byte_alphabet", "byte <-> character map is not GPT-2's bytes_to_unicode");
}

static void test_tok_all(void) {
    tt__pretok_cases();
    tt__byte_alphabet();
}

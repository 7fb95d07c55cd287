/* test_gpt.c */
static void test_gpt_all(void) {}

/* test_core.c */
static void test_core_all(void) {}

/* test_lessons.c - the lessons' command lines (examples/lesson.h's lesson_args, flags.h's checks):
   a value that is not a number in the flag's range is refused with exit 1 and one line of stderr
   that names the program, the flag and the value.  Runs the built lessons (make test builds them);
   a lesson whose binary is missing is skipped. */
#include <sys/wait.h>

static const char *const tl_lessons[] = {"lesson_accumulation", "lesson_clipping", "lesson_compile", "lesson_precision",
                                         "lesson_restarts", "lesson_sequences", "lesson_warmup",
                                         "lesson_memory", "lesson_llama"};

/* Runs build/<lesson> args; its exit status (-1: a crash) and stderr in *err (malloc'd). */
static int tl_run(const char *lesson, const char *args, char **err) {
    char cmd[1024], path[512];
    FILE *f;
    size_t n;
    int s;
    *err = NULL;
    snprintf(path, sizeof path, "%s/lessons.err", t_tmp_dir());
    snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=exitcode=99 timeout 30 build/%s %s > /dev/null 2> %s",
             lesson, args, path);
    s = system(cmd);
    if ((f = fopen(path, "rb")) != NULL) {
        *err = (char *)calloc(4096, 1);
        n = *err ? fread(*err, 1, 4095, f) : 0;
        (void)n;
        fclose(f);
    }
    if (s == -1 || !WIFEXITED(s)) return -1;
    return WEXITSTATUS(s);
}

static void test_lessons_all(void) {
    static const char *bad[][2] = {
        {"--steps abc", "--steps: \"abc\" is not a whole number"},
        {"--steps -5", "--steps: \"-5\" is not a whole number from 0 to 2147483647"},
        {"--steps 1e19", "--steps: \"1e19\" is not a whole number"},
        {"--steps 2.5", "--steps: \"2.5\" is not a whole number"},
        {"--threads nan", "--threads: \"nan\" is not a whole number"},
        {"--lr nan", "--lr: \"nan\" is not a finite number >= 0"},
        {"--lr -1", "--lr: \"-1\" is not a finite number >= 0"},
        {"--budget x", "--budget: \"x\" is not a whole number"},
    };
    char name[256], prefix[64], want[128], usage[64], help[8192];
    int k, i, rc, one_line, tried;
    FILE *f;
    if (!t_want("lessons/")) return;
    for (k = 0; k < (int)(sizeof tl_lessons / sizeof tl_lessons[0]); k++) {
        snprintf(name, sizeof name, "build/%s", tl_lessons[k]);
        if (!t_exists(name)) {
            snprintf(name, sizeof name, "lessons/flags/%s", tl_lessons[k]);
            t_skip(name, "not built (make test builds the lessons)");
            continue;
        }
        /* the flags this lesson has: those its --help names ("[--steps N (300)]") */
        snprintf(usage, sizeof usage, "build/%s --help 2>&1", tl_lessons[k]);
        help[0] = 0;
        if ((f = popen(usage, "r")) != NULL) { size_t got = fread(help, 1, sizeof help - 1, f); help[got] = 0; pclose(f); }
        for (tried = i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
            char flag[32], *out = NULL;
            sscanf(bad[i][0], "%31s", flag);
            snprintf(want, sizeof want, "[%s ", flag);
            if (!strstr(help, want)) continue;
            tried++;
            snprintf(name, sizeof name, "lessons/flags/%s[%s]", tl_lessons[k], bad[i][0]);
            rc = tl_run(tl_lessons[k], bad[i][0], &out);
            snprintf(prefix, sizeof prefix, "%s: ", tl_lessons[k]);
            one_line = out && strncmp(out, prefix, strlen(prefix)) == 0 && strchr(out, '\n') == out + strlen(out) - 1;
            t_check(rc == 1 && one_line && strstr(out, bad[i][1]), name,
                    "exit %d, stderr \"%s\" (want one line containing \"%s\")", rc, out ? out : "", bad[i][1]);
            free(out);
        }
        snprintf(name, sizeof name, "lessons/flags/%s/has_steps", tl_lessons[k]);
        t_check(tried > 0 && strstr(help, "[--steps "), name, "--help names no flag this test knows: \"%.200s\"", help);
    }
}

/* fuzz.h - what the fuzz targets share: the allocation bound (kept by tests/fuzz/fuzz_lib.c, the
   one translation unit with the library and its allocator hooks), and a main() for builds
   without libFuzzer.  Each target defines LLVMFuzzerTestOneInput.  Built two ways (tests/fuzz/run.sh):
     clang -fsanitize=fuzzer,address,undefined          libFuzzer drives the target
     cc -DFZ_STANDALONE -fsanitize=address,undefined    main() runs each file, or each file of
                                                        each directory, given on the command line
   The bound: between fz_begin(n) and fz_end(), no single allocation may exceed
   FZ_SINGLE_PER_BYTE * n + FZ_SLACK and the bytes live at once (beyond those live at fz_begin)
   may not exceed FZ_LIVE_PER_BYTE * n + FZ_SLACK; the hook aborts with a message otherwise.  So a
   number read from the file can never size an allocation; only the file's length can.  (The
   largest per byte is the safetensors reader's JSON tree: at most one 40-byte node per 2 header
   bytes, doubled while it grows.) */
#ifndef FZ_H
#define FZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_SINGLE_PER_BYTE 48
#define FZ_LIVE_PER_BYTE 64
#define FZ_SLACK ((size_t)64 << 10)

#ifdef __cplusplus
extern "C" {
#endif
void fz_begin(size_t n);
void fz_end(void);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#ifdef __cplusplus
}
#endif

#if defined(FZ_STANDALONE) && !defined(FZ_LIB)   /* the main() of a replay build */
#include <dirent.h>
#include <sys/stat.h>
static int fz_file(const char *path, int *count) {
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long n;
    if (!f) { fprintf(stderr, "fuzz: cannot open %s\n", path); return 1; }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (unsigned char *)malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) { fclose(f); free(buf); return 1; }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n > 0 ? (size_t)n : 0);
    free(buf);
    (*count)++;
    return 0;
}
int main(int argc, char **argv) {
    int i, count = 0, bad = 0;
    for (i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            while (d && (e = readdir(d)) != NULL) {
                char p[4096];
                if (e->d_name[0] == '.') continue;
                snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
                if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) bad |= fz_file(p, &count);
            }
            if (d) closedir(d);
        } else {
            bad |= fz_file(argv[i], &count);
        }
    }
    printf("%s: %d inputs replayed, no crash\n", argv[0], count);
    return bad;
}
#endif
#endif

/* Replays fuzz inputs without libFuzzer: each argument is a file or a
 * directory of files, and every file goes once through the target's
 * LLVMFuzzerTestOneInput. This is how the seed corpora (and the kept
 * regressions) run as ordinary tests, under ASan and UBSan in the
 * sanitizer build. An empty corpus is a failure: it would test nothing. */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *data = malloc(cap);
    size_t n;
    while (data && (n = fread(data + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *bigger = realloc(data, cap *= 2);
            if (!bigger)
                free(data);
            data = bigger;
        }
    }
    fclose(f);
    if (!data) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    return 1;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    DIR *dir = opendir(path);
    if (!dir) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    int count = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        int r = run_path(child);
        if (r < 0) {
            closedir(dir);
            return -1;
        }
        count += r;
    }
    closedir(dir);
    return count;
}

int main(int argc, char **argv)
{
    int total = 0;
    for (int i = 1; i < argc; i++) {
        int r = run_path(argv[i]);
        if (r < 0)
            return 1;
        total += r;
    }
    if (total == 0) {
        fprintf(stderr, "no inputs found: the corpus is empty\n");
        return 1;
    }
    printf("%d inputs replayed\n", total);
    return 0;
}

/* uitrail import: the inputs of one run. Each argument is a FILE or a DIR
 * (its regular files, not its subdirectories, in name order); with
 * --shard I/N only the inputs whose name hashes to I modulo N are kept,
 * so that N runs over the same arguments, on one machine or many, import
 * every input exactly once. */
#include "import.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint64_t ut_cli_import_name_hash(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a: stable across machines and builds */
    for (const unsigned char *p = (const unsigned char *)base; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    return h;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static ut_status push(ut_cli_import_inputs *in, char *path)
{
    if (!path)
        return UT_ENOMEM;
    if (in->n == in->cap) {
        size_t cap = in->cap ? in->cap * 2 : 16;
        char **grown = realloc(in->paths, cap * sizeof *grown);
        if (!grown) {
            free(path);
            return UT_ENOMEM;
        }
        in->paths = grown;
        in->cap = cap;
    }
    in->paths[in->n++] = path;
    return UT_OK;
}

/* Appends the regular files of `dir` (hidden ones left out), sorted. */
static ut_status push_dir(ut_cli_import_inputs *in, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "uitrail import: %s: %s\n", dir, strerror(errno));
        return UT_ENOENT;
    }
    size_t first = in->n;
    size_t dir_len = strlen(dir);
    while (dir_len > 1 && dir[dir_len - 1] == '/')
        dir_len--;
    ut_status st = UT_OK;
    for (struct dirent *e; st == UT_OK && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = dir_len + 1 + strlen(e->d_name) + 1;
        char *path = malloc(len);
        if (!path) {
            st = UT_ENOMEM;
            break;
        }
        snprintf(path, len, "%.*s/%s", (int)dir_len, dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(path);
            continue;
        }
        st = push(in, path);
    }
    closedir(d);
    qsort(in->paths + first, in->n - first, sizeof *in->paths, by_name);
    return st;
}

ut_status ut_cli_import_inputs_collect(ut_cli_import_inputs *in, char **args, int nargs, uint32_t shard,
                                       uint32_t nshards)
{
    ut_status result = UT_OK;
    for (int i = 0; i < nargs; i++) {
        struct stat sb;
        ut_status st = stat(args[i], &sb) == 0 && S_ISDIR(sb.st_mode) ? push_dir(in, args[i])
                                                                        : push(in, strdup(args[i]));
        if (st == UT_ENOMEM)
            return st;
        if (st != UT_OK)
            result = st;
    }
    if (nshards > 1) {
        size_t kept = 0;
        for (size_t i = 0; i < in->n; i++) {
            if (ut_cli_import_name_hash(in->paths[i]) % nshards == shard)
                in->paths[kept++] = in->paths[i];
            else
                free(in->paths[i]);
        }
        in->n = kept;
    }
    return result;
}

void ut_cli_import_inputs_free(ut_cli_import_inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->paths[i]);
    free(in->paths);
    *in = (ut_cli_import_inputs){0};
}

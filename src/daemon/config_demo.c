/* --demo's files on disk (see config.h): a source tree, or the data
 * directory `meson install` fills (share/uitrail). Which one the root is
 * is found once, at start, so that static.c serves from it without
 * looking again. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How far above the executable the source tree may be: build/src/daemon. */
#define EXE_LEVELS_UP_MAX 4
/* The data directory: relative to the executable's directory (so that an
 * install under DESTDIR or a moved prefix works), then as configured
 * (meson.build defines both). */
#ifndef UT_DATADIR_FROM_BINDIR
#define UT_DATADIR_FROM_BINDIR "../share/uitrail"
#endif
#ifndef UT_DATADIR
#define UT_DATADIR "/usr/local/share/uitrail"
#endif

static const ut__demo_layout source_tree = {"a source tree", "fixtures/demo", "tools/sender"};
static const ut__demo_layout installed = {"an installed share/uitrail", "demo", "sender"};

/* Whether `dir`/`sub`/index.html can be read. */
static bool holds_index(const char *dir, const char *sub)
{
    char probe[2 * PATH_MAX];
    int n = snprintf(probe, sizeof probe, "%s/%s/index.html", dir[0] ? dir : "/", sub);
    return n > 0 && (size_t)n < sizeof probe && access(probe, R_OK) == 0;
}

/* The layout of `root`, a source tree first; NULL when it holds no demo. */
static const ut__demo_layout *layout_of(const char *root)
{
    if (holds_index(root, source_tree.demo_dir))
        return &source_tree;
    if (holds_index(root, installed.demo_dir))
        return &installed;
    return NULL;
}

/* Makes `dir` absolute into `out` (PATH_MAX bytes) when it holds `layout`. */
static bool found(const char *dir, const ut__demo_layout *layout, char *out,
                  const ut__demo_layout **layout_out)
{
    if (!holds_index(dir, layout->demo_dir) || !realpath(dir[0] ? dir : "/", out))
        return false;
    *layout_out = layout;
    return true;
}

/* Finds the files when --demo-root is not given: the source tree above
 * the executable, else the installed data directory, found from the
 * executable's directory as installed, then at the configured prefix. */
static ut_status demo_root_find(char *out, const ut__demo_layout **layout, char *err, size_t errlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(err, errlen, "--demo: cannot find the executable (%s): give --demo-root DIR",
                 strerror(errno));
        return UT_EINVAL;
    }
    exe[n] = '\0';
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", exe);
    for (int up = 0; up <= EXE_LEVELS_UP_MAX; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            break;
        *slash = '\0';
        if (found(dir, &source_tree, out, layout))
            return UT_OK;
    }
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    char near_exe[PATH_MAX + sizeof UT_DATADIR_FROM_BINDIR + 1];
    snprintf(near_exe, sizeof near_exe, "%s/%s", exe, UT_DATADIR_FROM_BINDIR);
    if (found(near_exe, &installed, out, layout) || found(UT_DATADIR, &installed, out, layout))
        return UT_OK;
    snprintf(err, errlen,
             "--demo: no %s/index.html above %s, nor %s/index.html in %s or %s: give the source tree "
             "or the installed data directory with --demo-root DIR",
             source_tree.demo_dir, exe, installed.demo_dir, near_exe, UT_DATADIR);
    return UT_EINVAL;
}

ut_status ut__demo_root_resolve(const char *given, char *out, const ut__demo_layout **layout,
                                char *err, size_t errlen)
{
    if (!given)
        return demo_root_find(out, layout, err, errlen);
    if (!realpath(given, out)) {
        snprintf(err, errlen, "--demo-root %s: %s", given, strerror(errno));
        return UT_EINVAL;
    }
    *layout = layout_of(out);
    if (!*layout) {
        snprintf(err, errlen, "--demo-root %s: no %s/index.html (%s) nor %s/index.html (%s) there",
                 given, source_tree.demo_dir, source_tree.what, installed.demo_dir, installed.what);
        return UT_EINVAL;
    }
    return UT_OK;
}

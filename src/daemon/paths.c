/* Where a uitraild lives: shared by the daemon and the client commands. */
#include "uitrail/daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

ut_status ut_runtime_dir_default(char *out, size_t len)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    /* A relative XDG_RUNTIME_DIR is invalid per the XDG spec: ignore it
     * rather than put sockets under the current directory. */
    if (xdg && xdg[0] == '/')
        n = snprintf(out, len, "%s/uitrail", xdg);
    else
        n = snprintf(out, len, "/tmp/uitrail-%lu", (unsigned long)getuid());
    return n < 0 || (size_t)n >= len ? UT_ELIMIT : UT_OK;
}

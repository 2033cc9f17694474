/* daemon_client.c: how a `uitrail` command reaches a running uitraild: the
 * runtime directory (found the way the daemon finds it, or --runtime-dir,
 * and checked before use), a connection to one of its sockets, and a GET
 * over its http.sock (the answer parsed by libhttp-parser). */
#ifndef UITRAIL_CLI_DAEMON_CLIENT_H
#define UITRAIL_CLI_DAEMON_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "uitrail/common.h"

typedef struct ut_cli_client {
    char runtime_dir[4096];
    /* The default directory, whose name anyone can predict: checked
     * before use. One given with --runtime-dir is the user's choice (it
     * may be another uid's daemon that has --allow-uid for us). */
    bool check_dir;
} ut_cli_client;

/* Takes `runtime_dir` (--runtime-dir), or the default one when NULL;
 * false after printing why. */
bool ut_cli_client_init(ut_cli_client *cl, const char *runtime_dir);
/* Connects to `name` in the runtime directory; -1 after printing why. */
int ut_cli_client_connect(const ut_cli_client *cl, const char *name);
/* Writes all of `data` to `fd`, through EINTR; false on an error (errno). */
bool ut_cli_write_all(int fd, const void *data, size_t len);

/* An answer of the daemon: its status and body. */
typedef struct ut_cli_response {
    int status;
    ut_buf body;
    bool complete;
} ut_cli_response;

/* GETs `target` from the daemon. Returns false (after printing why) when
 * no complete response arrived. */
bool ut_cli_http_get(const ut_cli_client *cl, const char *target, ut_cli_response *r);
/* Prints the reason of a JSON error answer. */
void ut_cli_print_error(const ut_cli_response *r);

#endif

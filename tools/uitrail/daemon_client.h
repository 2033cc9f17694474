/* How a `uitrail` command reaches a running uitraild, the one daemon
 * client of the CLI:
 *   daemon_http.c    one non-blocking HTTP/1.1 GET, over http.sock or
 *                    loopback TCP with the bearer token, the answer parsed
 *                    by libhttp-parser (`uitrail mcp` runs several in its
 *                    poll loop);
 *   daemon_client.c  the runtime directory (found the way the daemon finds
 *                    it, or --runtime-dir, and checked before use), a
 *                    connection to one of its sockets (`send`), and the
 *                    same GET waited for (trace, tabs, stats, wait). */
#ifndef UITRAIL_CLI_DAEMON_CLIENT_H
#define UITRAIL_CLI_DAEMON_CLIENT_H

#include <stdbool.h>
#include <http_parser.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "uitrail/common.h"
#include "uitrail/limits.h"

/* ---- daemon_http.c ---- */

/* Where uitraild is: its http.sock, or a loopback TCP address and the file
 * that holds its bearer token (read again for every request, since the
 * daemon makes a new token at each start). */
typedef struct ut_cli_daemon {
    bool tcp;
    char unix_path[UT_UNIX_PATH_MAX_BYTES + 1];
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char addr_text[300];      /* "127.0.0.1:7317", for messages */
    char token_file[4096];
    char runtime_dir[4096];   /* for messages: how to start a daemon there */
    bool check_dir;           /* the default directory: checked before use (client.c) */
} ut_cli_daemon;

typedef enum ut_cli_http_state {
    UT_CLI_HTTP_CONNECTING,
    UT_CLI_HTTP_WRITING,
    UT_CLI_HTTP_READING,
    UT_CLI_HTTP_DONE,        /* `status` and `body` hold the answer */
    UT_CLI_HTTP_UNREACHABLE, /* no daemon there: `error` says why */
    UT_CLI_HTTP_FAILED,      /* it went wrong later: `error` says how */
} ut_cli_http_state;

typedef struct ut_cli_http {
    ut_cli_http_state state;
    int fd;
    int64_t deadline_ms; /* CLOCK_MONOTONIC */
    int64_t timeout_ms;
    char endpoint[320];  /* "/run/user/1000/uitrail/http.sock" or "tcp:127.0.0.1:7317" */
    ut_buf request;
    size_t sent;
    http_parser parser;
    int status;
    ut_buf body;
    char error[768];
} ut_cli_http;

/* Starts GET `target` (path and query, already escaped) on `d`, to be
 * answered within `timeout_ms`. Never blocks: the state afterwards is
 * CONNECTING, WRITING, or already UNREACHABLE/FAILED. */
void ut_cli_http_start(ut_cli_http *h, const ut_cli_daemon *d, const char *target,
                        int64_t now_ms, int64_t timeout_ms);
/* The poll(2) events the request waits for (0 once it is over). */
short ut_cli_http_events(const ut_cli_http *h);
/* Moves the request on after poll reported `revents` on its fd, or marks it
 * FAILED when `now_ms` is past its deadline. */
void ut_cli_http_step(ut_cli_http *h, short revents, int64_t now_ms);
bool ut_cli_http_over(const ut_cli_http *h);
/* Closes the socket (a cancelled call) and frees what the request holds. */
void ut_cli_http_free(ut_cli_http *h);

/* ---- daemon_client.c ---- */

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

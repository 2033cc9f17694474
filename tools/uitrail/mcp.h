/* `uitrail mcp`: what its three files share.
 *
 *   mcp.c        the command: stdio framing, JSON-RPC 2.0, the MCP lifecycle,
 *                and the poll loop that keeps reading the client while tool
 *                calls wait for the daemon;
 *   mcp_tools.c  the tools: their parameters (one table gives both the JSON
 *                Schema the client sees and the checks of its arguments),
 *                the daemon request of each call and the result it makes;
 *   mcp_http.c   one non-blocking HTTP/1.1 GET to uitraild, over its
 *                http.sock or loopback TCP with the bearer token.
 *
 * Nothing here writes to stdout but mcp.c's message writer: on stdio, stdout
 * carries only JSON-RPC messages. Logs go to stderr. */
#ifndef UITRAIL_MCP_H
#define UITRAIL_MCP_H

#include <http_parser.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "uitrail/common.h"
#include "uitrail/limits.h"

/* ---- mcp_http.c ---- */

/* Where uitraild is: its http.sock, or a loopback TCP address and the file
 * that holds its bearer token (read again for every request, since the
 * daemon makes a new token at each start). */
typedef struct ut__mcp_daemon {
    bool tcp;
    char unix_path[UT_UNIX_PATH_MAX_BYTES + 1];
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char addr_text[300];      /* "127.0.0.1:7317", for messages */
    char token_file[4096];
    char runtime_dir[4096];   /* for messages: how to start a daemon there */
    bool check_dir;           /* the default directory: checked before use (client.c) */
} ut__mcp_daemon;

typedef enum ut__mcp_http_state {
    UT__MCP_HTTP_CONNECTING,
    UT__MCP_HTTP_WRITING,
    UT__MCP_HTTP_READING,
    UT__MCP_HTTP_DONE,        /* `status` and `body` hold the answer */
    UT__MCP_HTTP_UNREACHABLE, /* no daemon there: `error` says why */
    UT__MCP_HTTP_FAILED,      /* it went wrong later: `error` says how */
} ut__mcp_http_state;

typedef struct ut__mcp_http {
    ut__mcp_http_state state;
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
} ut__mcp_http;

/* Starts GET `target` (path and query, already escaped) on `d`, to be
 * answered within `timeout_ms`. Never blocks: the state afterwards is
 * CONNECTING, WRITING, or already UNREACHABLE/FAILED. */
void ut__mcp_http_start(ut__mcp_http *h, const ut__mcp_daemon *d, const char *target,
                        int64_t now_ms, int64_t timeout_ms);
/* The poll(2) events the request waits for (0 once it is over). */
short ut__mcp_http_events(const ut__mcp_http *h);
/* Moves the request on after poll reported `revents` on its fd, or marks it
 * FAILED when `now_ms` is past its deadline. */
void ut__mcp_http_step(ut__mcp_http *h, short revents, int64_t now_ms);
bool ut__mcp_http_over(const ut__mcp_http *h);
/* Closes the socket (a cancelled call) and frees what the request holds. */
void ut__mcp_http_free(ut__mcp_http *h);

/* Appends `s` percent-encoded as one path segment or query value. */
void ut__mcp_append_escaped(ut_buf *out, const char *s);

/* ---- mcp_tools.c ---- */

typedef struct ut__mcp_tool ut__mcp_tool;

/* The `tools` array of a tools/list result (a new reference). */
json_t *ut__mcp_tools_list(void);
/* The tool named `name`, or NULL. */
const ut__mcp_tool *ut__mcp_tool_find(const char *name);
const char *ut__mcp_tool_name(const ut__mcp_tool *tool);
/* "list_tabs, recent_activity, wait_until_stable", for messages. */
const char *ut__mcp_tool_names(void);

/* The checked arguments of a call, by the index of the tool's parameter;
 * the defaults are filled in. Strings point into the call's `args`. */
#define UT__MCP_PARAMS_MAX 6
typedef struct ut__mcp_values {
    bool given[UT__MCP_PARAMS_MAX];
    long long num[UT__MCP_PARAMS_MAX]; /* integers, and booleans as 0 or 1 */
    const char *str[UT__MCP_PARAMS_MAX];
} ut__mcp_values;

/* One tools/call on its way: the checked arguments, the daemon request
 * they became, and (once it is over) the result. */
typedef struct ut__mcp_call {
    const ut__mcp_tool *tool;
    json_t *args; /* the client's arguments (a reference) */
    ut__mcp_values v;
    ut_buf target;
    int64_t wait_ms; /* how long the daemon may take on purpose (a wait) */
    ut__mcp_http http;
} ut__mcp_call;

/* Checks `args` (an object or NULL) against the tool's parameters and
 * builds the daemon request. On a bad argument returns a tool error result
 * (a new reference: CallToolResult with isError) and the call must not be
 * started; NULL when the call is ready to start. */
json_t *ut__mcp_call_prepare(ut__mcp_call *c, const ut__mcp_tool *tool, json_t *args);
/* The CallToolResult of a call whose request is over (a new reference):
 * the tool's output, or a tool error that says what happened and what to
 * do about it. NULL only when out of memory. */
json_t *ut__mcp_call_result(const ut__mcp_call *c, const ut__mcp_daemon *d);
void ut__mcp_call_free(ut__mcp_call *c);

/* Appends `v` serialized (json_dumps flags) to `out`. jansson's own
 * buffers come from the allocator src/wire installs, so its text goes
 * into a ut_buf instead of a json_dumps string. */
ut_status ut__mcp_json_dump(const json_t *v, size_t flags, ut_buf *out);

/* A CallToolResult with isError and one text block (a new reference). */
json_t *ut__mcp_tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

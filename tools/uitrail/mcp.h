/* `uitrail mcp`: what its three files share.
 *
 *   mcp.c        the command: stdio framing, JSON-RPC 2.0, the MCP lifecycle,
 *                and the poll loop that keeps reading the client while tool
 *                calls wait for the daemon;
 *   mcp_tools.c  the tools: their parameters (one table gives both the JSON
 *                Schema the client sees and the checks of its arguments),
 *                the daemon request of each call and the result it makes;
 * The request to uitraild is daemon_client.h's (daemon_http.c), the one
 * daemon client every command uses.
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

#include "daemon_client.h"

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
    ut_cli_http http;
} ut__mcp_call;

/* Checks `args` (an object or NULL) against the tool's parameters and
 * builds the daemon request. On a bad argument returns a tool error result
 * (a new reference: CallToolResult with isError) and the call must not be
 * started; NULL when the call is ready to start. */
json_t *ut__mcp_call_prepare(ut__mcp_call *c, const ut__mcp_tool *tool, json_t *args);
/* The CallToolResult of a call whose request is over (a new reference):
 * the tool's output, or a tool error that says what happened and what to
 * do about it. NULL only when out of memory. */
json_t *ut__mcp_call_result(const ut__mcp_call *c, const ut_cli_daemon *d);
void ut__mcp_call_free(ut__mcp_call *c);

/* Appends `v` serialized (json_dumps flags) to `out`. jansson's own
 * buffers come from the allocator src/wire installs, so its text goes
 * into a ut_buf instead of a json_dumps string. */
ut_status ut__mcp_json_dump(const json_t *v, size_t flags, ut_buf *out);

/* A CallToolResult with isError and one text block (a new reference). */
json_t *ut__mcp_tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

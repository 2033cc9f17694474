/* Integration-test helpers: start the real uitraild on a private runtime
 * directory, talk to it over its real sockets, stop it.
 *
 * The daemon binary comes from $UITRAILD (set by meson); the source tree's
 * fixtures from $UT_SOURCE_ROOT. Every read has a timeout, so a daemon that
 * stalls fails the test instead of hanging it. */
#ifndef UT_ITEST_H
#define UT_ITEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uitrail/common.h"

/* The bound of every wait on the daemon: ten seconds, times
 * $UT_TEST_TIMEOUT_SCALE (meson's valgrind setup sets it, as it multiplies
 * the tests' own timeouts: a daemon under memcheck on a busy machine may
 * take longer than that just to start, and that is not a product failure). */
#define ITEST_TIMEOUT_MS (10000 * itest_timeout_scale())
/* How long a live daemon may take to settle a fixture's traces on its own
 * clock (marks, the busy cap, dead clicks), with slack for a loaded
 * machine. Only an upper bound: a test never waits for it to pass. */
#define ITEST_SETTLE_MS (30000 * itest_timeout_scale())

/* $UT_TEST_TIMEOUT_SCALE when it is a number from 1 to 100, else 1. */
int itest_timeout_scale(void);

typedef struct itest_daemon {
    pid_t pid;
    char dir[256];          /* mkdtemp: holds rt/ and the daemon's stderr */
    char runtime_dir[300];
    char http_sock[400];
    char ingest_sock[400];
    char log_path[400];
    int http_port;          /* 0 when --http off */
    int forward_port;       /* 0 unless --forward-tcp */
    char token[300];
} itest_daemon;

/* Starts uitraild with `args` (NULL-terminated, may be NULL) after
 * --runtime-dir, --http 127.0.0.1:0 and --reorder-ms 0 (the last two
 * unless `args` has them), and waits until it is ready. */
bool itest_start(itest_daemon *d, const char *const *args);
/* Sends `sig` and returns the exit status (-1 for a crash or a timeout).
 * Removes the private directory. */
int itest_stop(itest_daemon *d, int sig);
/* Waits for the child `pid` to exit, at most `timeout_ms`, and reaps it
 * into `status`. False (the child still running) on timeout. */
bool itest_wait_exit(pid_t pid, int *status, int timeout_ms);
/* The daemon's stderr so far (caller frees). */
char *itest_log(const itest_daemon *d);
/* Waits until the log contains `needle`. */
bool itest_log_wait(const itest_daemon *d, const char *needle, int timeout_ms);
/* Virtual time: moves the clocks of a daemon started from the test build
 * (uitraild-test-clock, with UT_TEST_CLOCK_SKIP_MS in its environment)
 * forward by that much, and waits until its log says so: the `n`-th skip
 * of this daemon, counting from 1. False when it never did. */
bool itest_skip_time(const itest_daemon *d, unsigned n);

int itest_connect_unix(const char *path);
int itest_connect_tcp(int port);
bool itest_send(int fd, const void *data, size_t len);
/* Reads up to `cap` bytes, waiting at most `timeout_ms`. Returns the count,
 * 0 at end of stream, -1 on timeout or error. */
ssize_t itest_recv(int fd, void *buf, size_t cap, int timeout_ms);
/* True when the peer closes (end of stream or reset) within `timeout_ms`;
 * input before that is read and dropped. */
bool itest_wait_closed(int fd, int timeout_ms);

typedef struct itest_response {
    int status;
    ut_buf headers; /* "name: value\n" lines, names lower-cased */
    ut_buf body;
} itest_response;

void itest_response_free(itest_response *r);
/* Reads one HTTP response from `fd` (parsed with libhttp-parser). */
bool itest_read_response(int fd, itest_response *r, int timeout_ms);
/* One request on a new connection: over http.sock, or over TCP when
 * `tcp` is set (with `auth` as the Authorization header when not NULL). */
bool itest_http(const itest_daemon *d, bool tcp, const char *auth, const char *method,
                const char *target, const char *content_type, const void *body, size_t body_len,
                itest_response *r);
/* GET over http.sock; the body as a NUL-terminated string the caller
 * frees, or NULL when the status is not `want_status`. */
char *itest_get(const itest_daemon *d, const char *target, int want_status);
/* The value of one sample of GET /metrics, e.g.
 * "uitrail_events_duplicate_total" or
 * "uitrail_events_rejected_total{reason=\"wrong_type\"}"; -1 when absent. */
long long itest_metric(const itest_daemon *d, const char *sample);

/* Waits until `cond(ud)` holds, looking again every few milliseconds, for
 * at most `timeout_ms`: for a condition the daemon sends no event for (a
 * gauge of /metrics, a line in its log, a connection it has let go).
 * Returns whether it held. */
bool itest_wait_until(bool (*cond)(void *ud), void *ud, int timeout_ms);
/* Waits until the /metrics sample `sample` equals `want`. */
bool itest_wait_metric(const itest_daemon *d, const char *sample, long long want, int timeout_ms);

/* Percent-encodes `s` for a URL path segment or a query value. */
void itest_escape(const char *s, char *out, size_t cap);

/* An event stream, GET /v1/events?QUERY over http.sock: open once its
 * headers are in (the daemon has it subscribed by then). `seen` holds
 * what it has sent. */
typedef struct itest_sse {
    int fd;
    ut_buf seen;
    size_t scanned; /* bytes of `seen` already looked at for messages */
} itest_sse;

bool itest_sse_open(const itest_daemon *d, const char *query, itest_sse *s);
void itest_sse_close(itest_sse *s);
/* Reads until a `trace` message for `tab` carries `text` (as the trace
 * endpoint serves it), or `timeout_ms` runs out. */
bool itest_sse_wait_trace(itest_sse *s, const char *tab, const char *text, int timeout_ms);
/* Appends to `out`, one per line, the data of every `event: NAME` message
 * the stream has sent so far (what `uitrail replay --format marks` prints
 * for "mark"). */
void itest_sse_data_of(const itest_sse *s, const char *name, ut_buf *out);
/* Reads what the stream still holds once the daemon closed it (stopped):
 * everything it sent. False when it did not end within `timeout_ms`. */
bool itest_sse_read_to_end(itest_sse *s, int timeout_ms);
/* Waits until GET /v1/tabs/TAB/trace serves `text`: at once, or when the
 * daemon's event stream says the trace changed to it. Returns the trace
 * last served (caller frees). */
char *itest_wait_trace(const itest_daemon *d, const char *tab, const char *text, int timeout_ms);

/* Reads a whole file (caller frees); NULL if it cannot. */
char *itest_read_file(const char *path, size_t *len);

/* Appends the Forward message that carries no event and asks for the ack
 * `chunk`: once it is acknowledged, everything sent before it on that
 * connection has been applied. */
void itest_pack_sync(ut_buf *out, const char *chunk);

#endif

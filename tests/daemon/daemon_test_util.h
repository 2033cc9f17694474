/* What the daemon's test files share (daemon_test_util.c): each case
 * starts the real uitraild on a private runtime directory (itest.h) and
 * talks to it over its real sockets. One test file per room of the
 * daemon, as tests/core does for the core. */
#ifndef UT_DAEMON_TEST_UTIL_H
#define UT_DAEMON_TEST_UTIL_H
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <msgpack.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"
#include "wire_internal.h"
#include "uitrail/daemon.h"
#include "uitrail/engine.h"
#include "uitrail/limits.h"
#include "uitrail/wire.h"

#define SESSION_FIXTURE "fixtures/sessions/bluewidget.json"


char *fixture_path(const char *rel);

/* msgpack of a JSON ingest body (one message or an array of them). */
ut_buf mp(const char *json);

/* The sender's clock now, in seconds, for events that must look live. */
double now_s(void);

/* Reads acks from `fd` until `chunk` is acknowledged; false on close or
 * timeout. */
bool read_ack(int fd, const char *chunk);

/* Sends `data` then a sync message on `fd` and waits for its ack: once it
 * arrives, the daemon has applied everything before it. */
bool send_synced(int fd, const void *data, size_t len, const char *chunk);

/* Ingests `data` over a fresh ingest.sock connection and waits for it. */
void ingest(const itest_daemon *d, const void *data, size_t len);

void ingest_json(const itest_daemon *d, const char *json);

void start(itest_daemon *d, const char *const *args);

void stop_clean(itest_daemon *d);

char *trace_of(const itest_daemon *d, const char *tab_escaped, const char *query);

/* ---- the session fixture through each ingest mode ---- */

typedef struct session {
    ut_buf json;
    ut_buf message;   /* Message mode, as the JSON says */
    ut_buf forward;   /* runs of one tag as Forward messages */
    ut_buf packed;    /* the same runs as PackedForward */
    char tabs[16][UT_TAB_MAX_BYTES + 1];
    size_t ntabs;
    char *reference[16]; /* text trace per tab from an in-process engine */
} session;

/* Regroups a Message-mode stream: consecutive messages with one tag become
 * one Forward (or PackedForward) message. */
void regroup(const ut_buf *message, ut_buf *out, bool packed);

bool collect_tab(void *ud, const ut_tab_info *t);

typedef struct replay_ctx {
    ut_engine *engine;
    int64_t last_us;
} replay_ctx;

ut_status apply_to(void *ud, const ut_event *ev);

/* What `uitrail replay` computes: the events through one engine, in the
 * sender's time, then the clock moved on a minute so that what was pending
 * (a stable mark, a dead click) settles. */
void reference_traces(session *s);

int session_setup(void **state);

int session_teardown(void **state);

/* Reads SSE text from `fd` until `needle` shows up. */
bool sse_wait_for(int fd, ut_buf *seen, const char *needle);

int open_stream(const itest_daemon *d, const char *query);

/* A tab whose page is busy (a loading indicator) is not stable. */
void make_busy_tab(const itest_daemon *d, const char *tab);

/* Runs uitraild with `args` and expects it to refuse to start with
 * `message` on stderr. */
void expect_start_failure(const char *const *args, const char *message);

#endif

/* uitraild: the daemon's private vocabulary, shared by the files of
 * src/daemon and nothing else.
 *
 *   main.c      the process: command line, listeners, signals, reload
 *   daemon.c    lifecycle: bring a daemon up on a loop, stop it, free it
 *   config.c    the option table: command line, --config file (inih), reload
 *   log.c       one line per event worth a line, sanitized samples
 *   listen.c    runtime directory, listeners, accept and the connection cap
 *   conn.c      connection lifecycle, buffers, timers, backpressure, the one
 *               protocol-error path
 *   ingest.c    Forward ingest over a connection, acks
 *   http.c      http-parser glue, keep-alive and pipelining, responses
 *   routes.c    the HTTP endpoints
 *   notify.c    engine observer: event streams (SSE), stable waiters, the
 *               engine timer
 *   ws.c        WebSocket ingest (protocol §3): handshake, origin and token
 *               checks, framing through libwslay, acks
 *   static.c    --demo: the demo app, the sender and /demo/config.json
 *   auth.c      token and peer credentials
 *   metrics.c   counters and the Prometheus text
 *   record.c    --record: one recording file per tab, frame flushes, acks
 *               held until their frame is written
 *
 * Everything runs on one libuv loop thread; nothing here is thread-safe. */
#ifndef UT_DAEMON_H
#define UT_DAEMON_H

#include <http_parser.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <uv.h>

#include "uitrail/common.h"
#include "uitrail/engine.h"
#include "uitrail/limits.h"
#include "uitrail/record.h"
#include "uitrail/wire.h"

typedef struct ut__daemon ut__daemon;
typedef struct ut__conn ut__conn;
typedef struct ut__ws ut__ws;

/* ---- log.c ---- */

typedef enum ut__log_level {
    UT__LOG_ERROR,
    UT__LOG_WARN,
    UT__LOG_INFO,
    UT__LOG_DEBUG,
} ut__log_level;

void ut__log_set_level(ut__log_level level);
bool ut__log_enabled(ut__log_level level);
/* Writes one line to stderr: an ISO 8601 UTC timestamp, the level and the
 * message. A trailing newline in `fmt` is not needed. */
void ut__log(ut__log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ut__log_level_name(ut__log_level level);
bool ut__log_level_parse(const char *name, ut__log_level *out);
/* Writes at most UT_LOG_SAMPLE_MAX_BYTES of `data` into `out` as printable
 * ASCII: other bytes become \xNN, and `"` and `\` are escaped, so a sample
 * of hostile input can never forge a log line. `out` is always terminated;
 * it needs 4 * UT_LOG_SAMPLE_MAX_BYTES + 4 bytes to hold a full sample. */
#define UT__SAMPLE_BUF_BYTES (4 * UT_LOG_SAMPLE_MAX_BYTES + 4)
void ut__sanitize(const void *data, size_t len, char *out, size_t outlen);

/* ---- config.c ---- */

/* When a recording file is fsync'ed (--fsync). */
typedef enum ut__fsync_policy {
    UT__FSYNC_NEVER, /* the kernel writes back when it likes: a crash of the daemon loses nothing
                        written, a crash of the machine may */
    UT__FSYNC_FRAME, /* fdatasync after every frame: each acked event is on disk */
} ut__fsync_policy;

/* A loopback TCP listening address; `enabled` false for "off". */
typedef struct ut__tcp_addr {
    bool enabled;
    char text[64]; /* as given, for logs */
    struct sockaddr_storage sa;
} ut__tcp_addr;

typedef struct ut__settings {
    char *config_path;   /* --config, NULL when none */
    char *runtime_dir;
    char *token_file;    /* --token-file, NULL: generate */
    ut__tcp_addr forward_tcp;
    ut__tcp_addr http_tcp;
    uint32_t max_connections;
    uint32_t allow_uids[UT_ALLOW_UIDS_MAX];
    size_t n_allow_uids;
    ut__log_level log_level;
    uint32_t header_timeout_ms;
    uint32_t idle_timeout_ms;
    /* The engine's configuration; its redact_patterns point at `redact`. */
    ut_config engine;
    char *redact[UT_REDACT_PATTERNS_MAX];
    size_t n_redact;
    /* Origins besides the daemon's own that may open the WebSocket ingest
     * (--allow-origin), as "scheme://host[:port]". */
    char *allow_origins[UT_ALLOW_ORIGINS_MAX];
    size_t n_allow_origins;
    char *ingest_token_file; /* --ingest-token-file, NULL: no ingest token */
    bool demo;               /* --demo: serve the demo app and its config */
    char *demo_root;         /* the source tree holding fixtures/demo and tools/sender, or the
                                installed share/uitrail holding demo and sender (absolute) */
    /* Recording (record.c); record_dir NULL: off. */
    char *record_dir;
    uint32_t record_frame_bytes;
    uint32_t record_frame_ms;
    uint32_t record_max_files;
    ut__fsync_policy fsync;
} ut__settings;

/* What ut__settings_load found on the command line besides settings. */
typedef enum ut__cli_action { UT__CLI_RUN, UT__CLI_HELP, UT__CLI_VERSION } ut__cli_action;

/* Builds the settings: the defaults, then the --config file, then the
 * command line, which wins. On failure returns UT_EINVAL (or UT_ENOMEM)
 * with a one-line reason in `err` and leaves `out` freed. */
ut_status ut__settings_load(int argc, char **argv, ut__settings *out, ut__cli_action *action,
                            char *err, size_t errlen);
void ut__settings_free(ut__settings *s);
void ut__settings_usage(FILE *to);
/* Logs every setting that differs between `cur` and `next`, copies the
 * ones that take effect at once into `cur`, and reports the others as
 * needing a restart. `next` is left for the caller to free. */
void ut__settings_apply_reload(ut__settings *cur, const ut__settings *next);
/* Parses "127.0.0.1:7317", "[::1]:7317" or "off" into `out`, refusing any
 * address that is not loopback. */
ut_status ut__parse_tcp_addr(const char *text, const char *option, ut__tcp_addr *out, char *err,
                             size_t errlen);

/* ---- metrics.c ---- */

#define UT__LATENCY_BUCKETS 12

typedef struct ut__metrics {
    uint64_t rejected[UT_REJECT__COUNT];
    uint64_t ignored;
    uint64_t lost_nomem;           /* events dropped because memory ran out */
    uint64_t protocol_errors_ingest;
    uint64_t protocol_errors_http;
    uint64_t connections_total;
    uint64_t refused_cap;
    uint64_t refused_peer;         /* Unix peer with a uid not allowed */
    uint64_t auth_failures;        /* 401 answers */
    uint64_t dropped_slow_reader;
    uint64_t dropped_timeout;
    uint64_t bytes_in;
    uint64_t bytes_out;
    uint64_t http_requests;
    uint64_t acks;
    uint64_t ws_upgrades;          /* WebSocket ingest connections accepted */
    uint64_t ws_refused;           /* upgrades refused: origin, token, subprotocol, malformed */
    uint64_t trace_requests;
    uint64_t trace_latency_buckets[UT__LATENCY_BUCKETS]; /* cumulative at render time */
    uint64_t trace_latency_count;
    uint64_t trace_latency_sum_ns;
    uint64_t record_events;        /* events queued into a recording */
    uint64_t record_frames;        /* frames written whole */
    uint64_t record_bytes;         /* compressed bytes written */
    uint64_t record_files;         /* recording files created */
    uint64_t record_errors;        /* failed opens, writes, fsyncs; events not recordable */
} ut__metrics;

void ut__metrics_trace_latency(ut__metrics *m, uint64_t ns);
/* Appends the Prometheus text exposition of every counter. */
ut_status ut__metrics_render(const ut__daemon *d, ut_buf *out);

/* ---- auth.c ---- */

/* Loads the token from settings.token_file, or generates one from
 * getrandom(2), and writes it, mode 0600, to <runtime-dir>/token. */
ut_status ut__auth_init(ut__daemon *d, char *err, size_t errlen);
/* Removes <runtime-dir>/token (at shutdown). */
void ut__auth_cleanup(ut__daemon *d);
/* Whether an Authorization header value carries the token, compared in
 * constant time. */
bool ut__auth_bearer_ok(const ut__daemon *d, ut_str authorization);
/* Reads the Unix peer's uid into `uid` and says whether it may talk to us:
 * the daemon's own uid or one of --allow-uid. */
bool ut__auth_peer_ok(const ut__daemon *d, uv_stream_t *stream, uid_t *uid);
/* Whether `uid` is the daemon's own or one of --allow-uid. */
bool ut__auth_uid_allowed(const ut__daemon *d, uid_t uid);
/* Whether `given` is the ingest token (--ingest-token-file), compared in
 * constant time. False when no ingest token is configured. */
bool ut__auth_ingest_token_ok(const ut__daemon *d, ut_str given);
/* Whether `given` is the read-only demo token; false without --demo. */
bool ut__auth_demo_token_ok(const ut__daemon *d, ut_str given);

/* ---- listen.c ---- */

typedef enum ut__proto { UT__PROTO_INGEST, UT__PROTO_HTTP } ut__proto;
typedef enum ut__transport { UT__TRANSPORT_UNIX, UT__TRANSPORT_TCP } ut__transport;

typedef struct ut__listener {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } h;
    ut__daemon *d;
    ut__proto proto;
    ut__transport transport;
    bool active;
    char *path;     /* Unix socket path (owned), NULL for TCP */
    char addr[80];  /* what to print: the path or host:port actually bound */
} ut__listener;

#define UT__LISTENERS_MAX 4

/* Creates the runtime directory (0700, owned by us) or checks an existing
 * one. */
ut_status ut__runtime_dir_prepare(const char *dir, char *err, size_t errlen);
/* Binds every listener the settings ask for. */
ut_status ut__listeners_start(ut__daemon *d, char *err, size_t errlen);
/* Closes the listeners and removes their socket files. */
void ut__listeners_stop(ut__daemon *d);

/* ---- conn.c ---- */

typedef enum ut__conn_state {
    UT__CONN_OPEN,     /* serving */
    UT__CONN_DRAINING, /* the last response is queued: input is read and dropped until close */
    UT__CONN_CLOSING,  /* uv_close issued; freed when its handles are closed */
} ut__conn_state;

typedef enum ut__http_mode {
    UT__HTTP_READY,     /* parsing requests */
    UT__HTTP_WAITING,   /* a stable wait is pending; later requests wait */
    UT__HTTP_STREAMING, /* an event stream: input is ignored */
} ut__http_mode;

typedef enum ut__route {
    UT__ROUTE_NONE,
    UT__ROUTE_HEALTHZ,
    UT__ROUTE_METRICS,
    UT__ROUTE_TABS,
    UT__ROUTE_TRACE,
    UT__ROUTE_STABLE,
    UT__ROUTE_EVENTS,
    UT__ROUTE_INGEST,
    UT__ROUTE_WEBSOCKET,   /* GET /v1/ingest with Upgrade: websocket */
    UT__ROUTE_DEMO_FILE,   /* --demo: GET /demo/..., /sender/... */
    UT__ROUTE_DEMO_CONFIG, /* --demo: GET /demo/config.json */
} ut__route;

typedef enum ut__body_kind { UT__BODY_NONE, UT__BODY_MSGPACK, UT__BODY_JSON } ut__body_kind;

typedef enum ut__header {
    UT__HDR_OTHER,
    UT__HDR_AUTHORIZATION,
    UT__HDR_CONTENT_TYPE,
    UT__HDR_HOST,
    UT__HDR_ORIGIN,
    UT__HDR_UPGRADE,
    UT__HDR_WS_KEY,
    UT__HDR_WS_VERSION,
    UT__HDR_WS_PROTOCOL, /* repeated lines are joined with ", " */
    UT__HDR_FORWARDED_FOR, /* X-Forwarded-For from a proxy in front: logged, never trusted */
} ut__header;

/* Counts of one ingest unit (an HTTP body; a connection's lifetime). */
typedef struct ut__ingest_counts {
    uint64_t accepted;
    uint64_t rejected;
    uint64_t duplicates;
    uint64_t ignored;
} ut__ingest_counts;

/* The request being parsed on an HTTP connection. Its buffers keep their
 * storage from one request to the next. */
typedef struct ut__http_req {
    ut_buf url;
    ut_buf auth;
    ut_buf content_type;
    ut_buf host;
    ut_buf origin;
    ut_buf upgrade;
    ut_buf ws_key;
    ut_buf ws_version;
    ut_buf ws_protocol;
    ut_buf forwarded_for;   /* X-Forwarded-For (tools/deploy: the client's address) */
    ut_buf header_name;     /* the header whose value is arriving */
    ut__header header;      /* which header that value belongs to */
    bool in_value;
    size_t header_bytes;
    uint64_t body_bytes;
    ut__route route;
    const char *allow;      /* the Allow header of a 405 */
    ut_buf tab;             /* the decoded {tab} path segment */
    int status;             /* an error decided before the body ended; 0 if none */
    char error[256];        /* its one-line reason */
    ut__body_kind body_kind;
    ut_fwd_decoder *decoder; /* the msgpack body's, or the converted JSON's */
    ut_buf body;            /* a JSON body, held whole */
    ut__ingest_counts counts;
} ut__http_req;

struct ut__conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_pipe_t pipe;
        uv_tcp_t tcp;
    } h;
    /* One timer whose meaning follows the state: header timeout, idle
     * timeout, stalled ingest frame, stable-wait deadline, event-stream
     * keep-alive, or the linger before close. */
    uv_timer_t timer;
    uv_shutdown_t shutdown_req;
    int open_handles;
    ut__daemon *d;
    uint64_t id;
    ut__proto proto;
    ut__transport transport;
    ut__conn_state state;
    ut__conn *next, *prev;          /* every connection */
    ut__conn *list_next, *list_prev; /* event-stream subscribers or stable waiters */
    ut__conn *ready_next;           /* deferred resume (notify.c) */
    bool in_ready;
    bool in_list;                   /* linked in streams or waiters */
    bool reading;                   /* uv_read_start in effect */
    bool eof;                       /* the peer sent its last byte */
    bool paused_output;             /* above UT_CONN_OUTPUT_HIGH_BYTES: not serving */
    bool peer_allowed;              /* Unix peer uid check (always true over TCP) */
    uid_t peer_uid;
    ut_buf in_pending;              /* input not yet processed (HTTP pipelining) */
    uint64_t bytes_in;

    /* Ingest. */
    ut_fwd_decoder *decoder;        /* also a WebSocket's, once upgraded */
    size_t last_pending;            /* decoder bytes pending after the last read */

    /* HTTP. */
    http_parser parser;
    ut__http_req req;
    ut__http_mode mode;
    ut__ws *ws;                     /* after a WebSocket upgrade: all input is ingest */
    bool keep_alive;
    char *stream_tab;               /* event stream filter; NULL: every tab */
    ut_buf wait_tab;                /* the tab a stable wait is on */
    bool wait_due;                  /* a mark or a tab's end may answer the wait */
    uint64_t wait_started_ms;
};

/* Accepts a connection from `listener` (refusing it above the cap). */
void ut__conn_accept(ut__listener *listener);
/* Makes a connection of `proto` from `fd`, a connected Unix stream socket,
 * exactly as if it had been accepted on the Unix listener of `proto`: the
 * peer's uid and the connection cap are checked the same way. On UT_OK
 * the connection owns `fd`; otherwise (UT_ENOMEM, UT_EIO) the caller still
 * does. For in-process drivers of the daemon (the fuzz targets). */
ut_status ut__conn_adopt(ut__daemon *d, ut__proto proto, int fd);
/* Queues `len` bytes for the peer. Writes straight to the socket when
 * nothing is queued, copying only what the kernel did not take. A queue
 * beyond UT_CONN_OUTPUT_HIGH_BYTES stops serving the connection's requests;
 * beyond UT_CONN_OUTPUT_MAX_BYTES the peer is dropped as a slow reader. */
void ut__conn_write(ut__conn *c, const void *data, size_t len);
/* The one path for bad input: logs `what` with a sanitized sample of the
 * offending bytes, counts it, answers an HTTP peer 400 with `what`, and
 * closes the connection once its queued output is flushed. Safe to call
 * from any callback: the connection is freed later, from its close
 * callbacks. */
void ut__conn_protocol_error(ut__conn *c, const char *what, const void *sample, size_t sample_len);
/* Lets the queued output drain, drops further input, then closes. */
void ut__conn_finish(ut__conn *c);
/* Closes at once, dropping queued output. */
void ut__conn_abort(ut__conn *c, const char *why);
/* Arms the stalled-frame timer of an ingest connection after a read. */
void ut__conn_ingest_progress(ut__conn *c);
/* (Re)arms the connection's timer for `ms`; 0 stops it. */
void ut__conn_timer(ut__conn *c, uint64_t ms, uv_timer_cb cb);
/* Reading resumes (or stops) as the input and output marks allow. */
void ut__conn_update_reading(ut__conn *c);
/* A short description for log lines: "conn 7 (http tcp)". */
const char *ut__conn_name(const ut__conn *c, char *buf, size_t len);
/* Closes every connection (shutdown). */
void ut__conns_close_all(ut__daemon *d);

/* ---- ingest.c ---- */

/* Feeds bytes read from an ingest connection to its decoder. */
void ut__ingest_read(ut__conn *c, const char *data, size_t len);
/* The sink that applies a decoder's events to the engine, counting into
 * `counts`; acks go to `ack_conn` when it is not NULL. */
typedef struct ut__ingest_ctx {
    ut__daemon *d;
    ut__conn *ack_conn;
    ut__ingest_counts *counts;
    int64_t rt_us;
    ut_status failure; /* a reject detail or an ENOMEM seen, for the HTTP answer */
    char first_reject[160];
} ut__ingest_ctx;
void ut__ingest_sink(ut__ingest_ctx *ctx, ut_fwd_sink *sink);

/* ---- http.c ---- */

void ut__http_init(ut__conn *c);
void ut__http_free(ut__conn *c);
/* Parses bytes read from an HTTP connection (or held from earlier), serving
 * every complete request; keeps what it cannot parse yet. */
void ut__http_read(ut__conn *c, const char *data, size_t len);
/* Arms the keep-alive idle timeout between requests. */
void ut__http_arm_idle(ut__conn *c);
/* Parses the input held while the connection was waiting or paused. */
void ut__http_resume(ut__conn *c);
/* Queues a complete response. `extra_headers` is NULL or CRLF-terminated
 * header lines. Honours keep-alive unless `close` is set. */
void ut__http_respond(ut__conn *c, int status, const char *content_type, const char *extra_headers,
                      const void *body, size_t body_len, bool close);
/* A JSON {"error": reason} response. */
void ut__http_error(ut__conn *c, int status, const char *reason, bool close);
const char *ut__http_reason_phrase(int status);

/* ---- routes.c ---- */

/* Picks the route of the request line, or sets req->status 404/405. */
void ut__routes_match(ut__conn *c);
/* The request's headers are complete: authorization, body checks. */
void ut__routes_headers(ut__conn *c);
/* A chunk of the body of POST /v1/ingest. */
void ut__routes_body(ut__conn *c, const char *data, size_t len);
/* The request is complete: answer it (or start waiting/streaming). */
void ut__routes_dispatch(ut__conn *c);
/* Writes the stable-wait answer for the connection's tab. */
void ut__routes_stable_answer(ut__conn *c);

/* ---- ws.c ---- */

/* Answers GET /v1/ingest with Upgrade: websocket: checks the origin, the
 * tokens, the subprotocol and the handshake headers, then answers 101 and
 * makes `c` a WebSocket ingest connection, or answers an error and closes. */
void ut__ws_upgrade(ut__conn *c);
/* Feeds bytes read from an upgraded connection to its WebSocket. */
void ut__ws_read(ut__conn *c, const char *data, size_t len);
/* Sends {"ack": chunk} to a WebSocket peer (ingest.c's ack, once every
 * event of the message is applied and recorded). */
void ut__ws_send_ack(ut__conn *c, ut_str chunk);
/* Frees the WebSocket state of `c` (from its final close). */
void ut__ws_free(ut__conn *c);
/* Whether `origin` ("http://127.0.0.1:7317") is the daemon's own HTTP
 * origin or one of --allow-origin. */
bool ut__ws_origin_allowed(const ut__daemon *d, ut_str origin);
/* Whether the request's Host header names the daemon's own TCP listener
 * (always true over the Unix socket): a guard against DNS rebinding. */
bool ut__ws_host_is_own(const ut__conn *c);

/* ---- static.c ---- */

/* Serves GET /demo/... and /sender/... from the --demo root. */
void ut__static_serve(ut__conn *c);
/* Serves GET /demo/config.json. */
void ut__static_demo_config(ut__conn *c);
/* Finds the files for --demo when --demo-root is not given: the source
 * tree above the executable that holds fixtures/demo/index.html, else the
 * installed data directory (share/uitrail, found from the executable's
 * directory as installed, then at the configured prefix) that holds
 * demo/index.html and sender/. Writes its absolute path into `out`. */
ut_status ut__static_find_root(char *out, size_t len, char *err, size_t errlen);
/* Whether `root` is a source tree or an installed data directory with the
 * demo in it. */
bool ut__static_root_holds_demo(const char *root);

/* ---- notify.c ---- */

/* Installs the engine observer that feeds event streams and waiters. */
void ut__notify_init(ut__daemon *d);
/* Re-arms the engine timer on ut_engine_next_deadline(). Call after every
 * batch of applies. */
void ut__notify_engine_rearm(ut__daemon *d);
void ut__notify_stream_add(ut__conn *c);
void ut__notify_waiter_add(ut__conn *c);
/* Starts the wait's deadline on the connection's timer. */
void ut__notify_waiter_arm(ut__conn *c, uint64_t wait_ms);
/* Unlinks the connection from the subscriber or waiter list. */
void ut__notify_forget(ut__conn *c);
/* Resumes `c` from the deferred-work pass (never from the current
 * callback, which may be deep in an engine call). */
void ut__notify_defer_resume(ut__conn *c);
/* Wall clock in microseconds since the epoch (the events' rt_us). */
int64_t ut__wall_us(void);

/* ---- record.c ---- */

typedef struct ut__rec_file ut__rec_file;

/* The recorder: one writer and one open file per recorded tab, found by a
 * hash of the tab id. Open files are also on a list, most recently written
 * first, so that the least recently written is closed beyond
 * --record-max-files; files with events since the last ack are on a
 * second list, flushed before the ack is sent. One timer, armed at the
 * earliest frame deadline, cuts frames by age. */
typedef struct ut__recorder {
    bool enabled;
    int dir_fd;
    ut_rec_writer_opts opts;
    ut__rec_file **buckets;   /* every tab with an open file or a stopped recording */
    size_t n_buckets;         /* a power of two */
    size_t n_entries;
    ut__rec_file *lru_head, *lru_tail; /* open files, most recently written first */
    size_t n_open;
    ut__rec_file *touched;    /* open files written since the last ack */
    uv_timer_t timer;
    int64_t timer_due;        /* wall-clock µs the timer is armed for; INT64_MAX: idle */
    ut_buf name;              /* a file name being built */
} ut__recorder;

/* Starts recording when --record is set: creates the directory (0700) if
 * it is missing and opens it. UT_EIO with the reason in `err` otherwise.
 * Needs the loop (the flush timer). */
ut_status ut__record_start(ut__daemon *d, char *err, size_t errlen);
/* Records one event, as accepted after redaction (the engine's
 * on_accepted). Never fails the event: a recording error stops recording
 * for that tab, is logged and counted. */
void ut__record_event(ut__daemon *d, const ut_event *ev);
/* The tab was closed or evicted: its file is flushed and closed. */
void ut__record_tab_gone(ut__daemon *d, ut_str tab);
/* Writes the pending frame of every file that took events since the last
 * call: called before an ack goes out, so that an ack means written. */
void ut__record_sync(ut__daemon *d);
/* Flushes and closes every file (shutdown). */
void ut__record_stop(ut__daemon *d);

/* ---- daemon.c ---- */

/* Brings up the daemon whose settings are loaded and whose engine exists:
 * its uid, the runtime directory, the token, the event loop `loop` (initialized
 * here) and the engine observer. The recorder, the listeners and the
 * signals are the caller's to start. On failure returns the status with a
 * one-line reason in `err`, having undone its own work: the caller then
 * only calls ut__daemon_free. */
ut_status ut__daemon_open(ut__daemon *d, uv_loop_t *loop, char *err, size_t errlen);
/* Starts the stop: the listeners, every connection, the recorder and every
 * other handle are closed and the token file is removed. The loop then
 * runs until nothing is left, and ut__daemon_close finishes. */
void ut__daemon_shutdown(ut__daemon *d, const char *why);
/* Frees the engine, the settings and the daemon's buffers (not the loop). */
void ut__daemon_free(ut__daemon *d);
/* After the loop ran dry: closes it and frees the daemon. UT_EIO (and a
 * logged error) when a handle was left open. */
ut_status ut__daemon_close(ut__daemon *d);

/* ---- the daemon ---- */

struct ut__daemon {
    uv_loop_t *loop;
    ut__settings settings;
    int argc;
    char **argv;
    ut_engine *engine;
    ut__listener listeners[UT__LISTENERS_MAX];
    size_t n_listeners;
    uv_signal_t sig_int, sig_term, sig_hup;
    uv_timer_t engine_timer;
    int64_t engine_due;         /* what engine_timer is armed for */
    uv_timer_t kick;            /* deferred work on the next loop turn */
    char token[UT_TOKEN_MAX_BYTES + 1];
    size_t token_len;
    char ingest_token[UT_TOKEN_MAX_BYTES + 1]; /* empty: none configured */
    size_t ingest_token_len;
    char demo_token[2 * UT_TOKEN_RANDOM_BYTES + 1]; /* --demo only */
    size_t demo_token_len;
    char *token_path;
    uid_t uid;

    ut__conn *conns;
    size_t n_conns;
    uint64_t next_conn_id;
    ut__conn *streams;          /* event-stream subscribers */
    size_t n_streams;
    ut__conn *waiters;          /* pending stable waits */
    size_t n_waiters;
    ut__conn *ready;            /* connections to resume on the next turn */
    ut_buf dirty_tabs;          /* tabs whose trace changed: NUL-separated */
    bool waiters_due;

    char read_buf[UT_CONN_READ_CHUNK_BYTES];
    ut_buf out;                 /* a response being assembled */
    ut_buf body;                /* a response body being assembled */
    ut_buf sse;                 /* an event-stream message being assembled */
    ut_buf sse_json;            /* its payload */

    ut__recorder rec;
    ut__metrics m;
    bool stopping;
};

#endif

/* metrics.c: the daemon's counters and their Prometheus text exposition
 * (GET /metrics). Every room counts into the one ut__metrics of the
 * daemon; the engine's own counters come from ut_engine_stats_get, and the
 * gauges (what is open right now) from the rooms that hold those things,
 * gathered by the caller.
 *
 * Below the other rooms: it knows counters, not connections. */
#ifndef UT_DAEMON_METRICS_H
#define UT_DAEMON_METRICS_H

#include "uitrail/common.h"
#include "uitrail/engine.h"
#include "uitrail/token.h"
#include "uitrail/wire.h"

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
    uint64_t acks_withheld;        /* acks not sent: events of their messages not recorded */
    uint64_t ws_upgrades;          /* WebSocket ingest connections accepted */
    uint64_t ws_refused;           /* upgrades refused: origin, token, subprotocol, malformed */
    /* Signed mode (--ingest-secret-file): upgrades refused for their token,
     * by verdict (the UT_TOKEN_VALID slot counts a missing token), or for
     * an Origin other than the one the token names. */
    uint64_t token_refused[UT_TOKEN__COUNT];
    uint64_t token_refused_origin;
    /* Events a token-bound connection sent for another tab, or after its
     * token expired: rejected. */
    uint64_t bound_other_tab;
    uint64_t bound_expired;
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

/* What is open at the time of a scrape. */
typedef struct ut__gauges {
    uint64_t connections;
    uint64_t output_queued;   /* bytes queued for peers, every connection */
    uint64_t event_streams;
    uint64_t event_streams_lagging;
    uint64_t stable_waiters;
    uint64_t record_files_open;
} ut__gauges;

void ut__metrics_trace_latency(ut__metrics *m, uint64_t ns);
/* Appends the Prometheus text exposition of every counter and gauge.
 * UT_ENOMEM when `out` cannot grow. */
ut_status ut__metrics_render(const ut__metrics *m, const ut_engine_stats *es, const ut__gauges *g,
                             ut_buf *out);

#endif

/* Counters and their Prometheus text exposition (GET /metrics). The
 * engine's own counters (events by kind, duplicates, tabs, evictions) come
 * from ut_engine_stats_get; the daemon counts what only it sees. */
#include "metrics.h"

/* Upper bounds of the trace latency buckets, in seconds. */
static const double latency_bounds_s[UT__LATENCY_BUCKETS] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
};

void ut__metrics_trace_latency(ut__metrics *m, uint64_t ns)
{
    double s = (double)ns / 1e9;
    for (size_t i = 0; i < UT__LATENCY_BUCKETS; i++) {
        if (s <= latency_bounds_s[i]) {
            m->trace_latency_buckets[i]++;
            break;
        }
    }
    m->trace_latency_count++;
    m->trace_latency_sum_ns += ns;
}

static void family(ut_buf *out, const char *name, const char *type, const char *help)
{
    ut_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(ut_buf *out, const char *name, const char *help, uint64_t value)
{
    family(out, name, "counter", help);
    ut_buf_printf(out, "%s %llu\n", name, (unsigned long long)value);
}

static void gauge(ut_buf *out, const char *name, const char *help, uint64_t value)
{
    family(out, name, "gauge", help);
    ut_buf_printf(out, "%s %llu\n", name, (unsigned long long)value);
}

/* A counter of two samples told apart by `label`: `a` and `b`. */
static void counter_by(ut_buf *out, const char *name, const char *help, const char *label,
                       const char *a, uint64_t va, const char *b, uint64_t vb)
{
    family(out, name, "counter", help);
    ut_buf_printf(out, "%s{%s=\"%s\"} %llu\n%s{%s=\"%s\"} %llu\n", name, label, a,
                  (unsigned long long)va, name, label, b, (unsigned long long)vb);
}

/* Ingest: what came in, what was refused or dropped, and why. */
static void render_ingest(const ut__metrics *m, const ut_engine_stats *es, ut_buf *out)
{
    family(out, "uitrail_events_applied_total", "counter", "Events applied to the engine, by kind.");
    for (int k = 0; k < UT_KIND__COUNT; k++)
        ut_buf_printf(out, "uitrail_events_applied_total{kind=\"%s\"} %llu\n",
                      ut_kind_name((ut_kind)k), (unsigned long long)es->applied[k]);
    family(out, "uitrail_events_rejected_total", "counter",
           "Records rejected alone (the connection stays), by reason.");
    for (int r = 0; r < UT_REJECT__COUNT; r++)
        ut_buf_printf(out, "uitrail_events_rejected_total{reason=\"%s\"} %llu\n",
                      ut_reject_name((ut_reject)r), (unsigned long long)m->rejected[r]);
    counter(out, "uitrail_events_duplicate_total", "Events dropped because their seq was not new.",
            es->duplicates);
    counter(out, "uitrail_events_seq_jump_total",
            "Events rejected because their seq jumped too far above their tab's highest.",
            es->seq_jumps);
    counter(out, "uitrail_events_reordered_total",
            "Events that arrived before an earlier one of their tab and were put back in order.",
            es->reordered);
    counter(out, "uitrail_events_late_total",
            "Events that arrived after a later one of their tab had been applied.", es->late);
    gauge(out, "uitrail_events_held", "Events waiting in reorder windows.", es->held);
    counter(out, "uitrail_events_held_lost_total",
            "Held events never applied: their tab was closed or evicted first, or memory ran out.",
            es->lost);
    counter(out, "uitrail_messages_ignored_total", "Messages whose tag is not uitrail.*.",
            m->ignored);
    counter(out, "uitrail_events_lost_total", "Events lost because memory ran out.", m->lost_nomem);
    counter(out, "uitrail_acks_total", "Forward acks sent.", m->acks);
    counter(out, "uitrail_acks_withheld_total",
            "Acks not sent because events of their messages could not be recorded (the connection is closed).",
            m->acks_withheld);
    counter(out, "uitrail_websocket_upgrades_total", "WebSocket ingest connections accepted.",
            m->ws_upgrades);
    counter(out, "uitrail_websocket_refused_total",
            "WebSocket upgrades refused (origin, token, subprotocol or a malformed handshake).",
            m->ws_refused);
    family(out, "uitrail_ingest_tokens_refused_total", "counter",
           "WebSocket upgrades refused for their signed ingest token (--ingest-secret-file), by reason.");
    for (int v = 0; v < UT_TOKEN__COUNT; v++)
        ut_buf_printf(out, "uitrail_ingest_tokens_refused_total{reason=\"%s\"} %llu\n",
                      v == UT_TOKEN_VALID ? "missing" : ut_token_verdict_name((ut_token_verdict)v),
                      (unsigned long long)m->token_refused[v]);
    ut_buf_printf(out, "uitrail_ingest_tokens_refused_total{reason=\"origin\"} %llu\n",
                  (unsigned long long)m->token_refused_origin);
    counter_by(out, "uitrail_ingest_unbound_total",
               "Events a token-bound connection sent for another tab, or after its token expired: rejected.",
               "reason", "other_tab", m->bound_other_tab, "expired", m->bound_expired);
    counter_by(out, "uitrail_protocol_errors_total",
               "Malformed input or a limit breach that closed a connection, by listener kind.", "proto",
               "forward", m->protocol_errors_ingest, "http", m->protocol_errors_http);
}

/* The engine's tabs, their bytes and their marks. */
static void render_tabs(const ut_engine_stats *es, ut_buf *out)
{
    gauge(out, "uitrail_tabs", "Tabs held by the engine.", es->tabs);
    counter_by(out, "uitrail_tab_evictions_total", "Tabs evicted, by cause.", "cause", "idle",
               es->evicted_idle, "cap", es->evicted_cap);
    /* The third cause: the tabs held more than --max-memory. */
    ut_buf_printf(out, "uitrail_tab_evictions_total{cause=\"memory\"} %llu\n",
                  (unsigned long long)es->evicted_memory);
    gauge(out, "uitrail_tab_bytes", "Bytes of tab state held, as --max-memory counts them.", es->tab_bytes);
    counter(out, "uitrail_marks_total", "Page-stability marks emitted.", es->marks);
}

/* Connections, HTTP answers and bytes on the wire. */
static void render_connections(const ut__metrics *m, const ut__gauges *g, ut_buf *out)
{
    gauge(out, "uitrail_connections", "Open connections.", g->connections);
    counter(out, "uitrail_connections_total", "Connections accepted.", m->connections_total);
    counter_by(out, "uitrail_connections_refused_total", "Connections refused, by cause.", "cause",
               "cap", m->refused_cap, "peer_uid", m->refused_peer);
    counter_by(out, "uitrail_connections_dropped_total", "Connections dropped, by cause.", "cause",
               "slow_reader", m->dropped_slow_reader, "timeout", m->dropped_timeout);
    counter(out, "uitrail_auth_failures_total", "Requests answered 401.", m->auth_failures);
    gauge(out, "uitrail_event_streams", "Open GET /v1/events streams.", g->event_streams);
    gauge(out, "uitrail_event_streams_lagging",
          "Event streams past UT_SSE_QUEUE_MAX_BYTES of queued output: dropped after "
          "--idle-timeout-ms unless they catch up.",
          g->event_streams_lagging);
    gauge(out, "uitrail_output_queued_bytes", "Output queued for peers the kernel has not taken yet.",
          g->output_queued);
    gauge(out, "uitrail_stable_waiters", "Pending GET /v1/tabs/{tab}/stable waits.", g->stable_waiters);
    counter(out, "uitrail_bytes_received_total", "Bytes read from every connection.", m->bytes_in);
    counter(out, "uitrail_bytes_sent_total", "Bytes written to every connection.", m->bytes_out);
    counter(out, "uitrail_http_responses_total", "HTTP responses sent.", m->http_requests);
    counter(out, "uitrail_trace_requests_total", "GET /v1/tabs/{tab}/trace requests served.",
            m->trace_requests);
}

/* Recordings (--record). */
static void render_record(const ut__metrics *m, const ut__gauges *g, ut_buf *out)
{
    counter(out, "uitrail_record_events_total", "Events written into recordings (--record).",
            m->record_events);
    counter(out, "uitrail_record_frames_total", "Recording frames written.", m->record_frames);
    counter(out, "uitrail_record_bytes_total", "Compressed bytes written to recordings.",
            m->record_bytes);
    counter(out, "uitrail_record_files_total", "Recording files created.", m->record_files);
    gauge(out, "uitrail_record_files_open", "Recording files open.", g->record_files_open);
    counter(out, "uitrail_record_errors_total",
            "Recording failures: a file that could not be created or written (that tab's recording "
            "stops), or an event that could not be recorded.",
            m->record_errors);
}

/* The trace answer's latency histogram. */
static void render_trace_latency(const ut__metrics *m, ut_buf *out)
{
    family(out, "uitrail_trace_duration_seconds", "histogram",
           "Time to build a trace answer.");
    uint64_t cumulative = 0;
    for (size_t i = 0; i < UT__LATENCY_BUCKETS; i++) {
        cumulative += m->trace_latency_buckets[i];
        ut_buf_printf(out, "uitrail_trace_duration_seconds_bucket{le=\"%g\"} %llu\n",
                      latency_bounds_s[i], (unsigned long long)cumulative);
    }
    ut_buf_printf(out, "uitrail_trace_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                  (unsigned long long)m->trace_latency_count);
    ut_buf_printf(out, "uitrail_trace_duration_seconds_sum %.9f\n",
                  (double)m->trace_latency_sum_ns / 1e9);
    ut_buf_printf(out, "uitrail_trace_duration_seconds_count %llu\n",
                  (unsigned long long)m->trace_latency_count);
}

ut_status ut__metrics_render(const ut__metrics *m, const ut_engine_stats *es, const ut__gauges *g,
                             ut_buf *out)
{
    render_ingest(m, es, out);
    render_tabs(es, out);
    render_connections(m, g, out);
    render_record(m, g, out);
    render_trace_latency(m, out);
    return out->oom ? UT_ENOMEM : UT_OK;
}

/* sse.c: event streams, GET /v1/events (protocol §2): the subscribers,
 * and the messages the engine's news becomes: `event` (each applied
 * event), `mark` (stable/changing transitions), `trace` (the new text
 * trace of a tab, once per loop turn however many events changed it).
 *
 * A subscribed connection stops being HTTP: sse.c's ops take it over at
 * the end of the request, and its input is read and dropped.
 *
 * A stream whose queued output passes UT_SSE_QUEUE_MAX_BYTES lags: its
 * messages are not queued but counted, and the tabs whose `trace` it
 * missed remembered; once its queue is empty it gets a `lagged` message
 * ({"dropped": N, "resync": bool}) and the current trace of each of those
 * tabs. A stream that does not catch up within the idle timeout is
 * dropped as a slow reader. So a burst passes a reader that reads, and
 * one that never reads costs at most about UT_SSE_QUEUE_MAX_BYTES.
 *
 * Above http.c (a stream starts as a request); notify.c calls it. */
#ifndef UT_DAEMON_SSE_H
#define UT_DAEMON_SSE_H

#include "defer.h"
#include "http.h"
#include "uitrail/tabset.h"
#include "uitrail/engine.h"

typedef struct ut__sse {
    ut__daemon *d;
    ut_list streams;  /* the subscribers */
    size_t n;
    ut_buf msg;       /* a message being assembled */
    ut_buf payload;   /* its JSON */
    ut_buf trace;     /* a trace being rendered for a `trace` message */
    ut_tabset dirty; /* tabs whose trace changed this turn */
    ut__task flush;   /* sends their `trace` messages on the next turn */
} ut__sse;

void ut__sse_init(ut__daemon *d);
void ut__sse_free(ut__sse *s);
/* Makes `c`, serving GET /v1/events, an event stream of `tab` (a
 * UT_STR_NULL: every tab): writes the response head and hands the
 * connection over. UT_ENOMEM (nothing written) when memory runs out. */
ut_status ut__sse_subscribe(ut__conn *c, ut_str tab);
size_t ut__sse_count(const ut__daemon *d);
/* How many streams lag now (a gauge: each is dropped after
 * --idle-timeout-ms unless it catches up). */
size_t ut__sse_lagging(const ut__daemon *d);

/* The engine's news (from notify.c's observer). */
void ut__sse_event(ut__daemon *d, const ut_event *ev);
void ut__sse_mark(ut__daemon *d, ut_str tab, const ut_mark *m);
void ut__sse_trace_changed(ut__daemon *d, ut_str tab);

#endif

/* notify.c: what the engine tells the daemon, and the engine's timer.
 *
 * The engine's observer fans its news out: accepted events to the
 * recorder, applied events to the event streams, marks to the streams and the stable waits, trace
 * changes to the streams, and a tab's end to the recorder and the waits.
 * The engine timer is armed at ut_engine_next_deadline(), so the engine
 * runs its own clock (marks, dead clicks, idle tabs) without polling.
 *
 * Above the recorder, sse.c and waiters.c; ingest.c re-arms the timer
 * after each batch of events it applies. */
#ifndef UT_DAEMON_NOTIFY_H
#define UT_DAEMON_NOTIFY_H

#include <stdint.h>
#include <uv.h>

typedef struct ut__daemon ut__daemon;

typedef struct ut__notify {
    uv_timer_t engine_timer;
    int64_t engine_due; /* what engine_timer is armed for (wall-clock µs) */
} ut__notify;

/* Installs the engine observer and makes the engine timer. */
void ut__notify_init(ut__daemon *d);
/* Re-arms the engine timer on ut_engine_next_deadline(). Call after every
 * batch of applies. */
void ut__notify_engine_rearm(ut__daemon *d);

#endif

/* uitrail core: a tab's reorder window (reorder.c), owned by the engine's
 * tab. Internal to src/core and its tests.
 *
 * Events of one tab may arrive out of order across Forward messages: a
 * client that buffers per tag (Fluentd's fluent-logger, Fluent Bit) sends
 * all the clicks of a second, then all its mutations; a resend comes
 * late. The engine holds such events here, sorted in event order, and
 * applies them from the front (engine.c decides when). The window holds
 * redacted copies: nothing downstream of it sees unredacted text.
 *
 * Event order is the sender's time, then seq when both events have one,
 * then the order of arrival. Everything here is a pure function of the
 * events and the engine-clock times the engine passes in. */
#ifndef UITRAIL_REORDER_H
#define UITRAIL_REORDER_H

#include "uitrail/event.h"

/* One held event: a deep copy of a redacted event in one allocation. */
typedef struct ut__held {
    struct ut__held *next;  /* the next in event order */
    int64_t arrival_us;     /* engine clock when it was accepted */
    uint64_t serial;        /* engine-wide order of acceptance */
    size_t bytes;           /* the size of this allocation (the byte cap) */
    ut_event ev;            /* its strings and recs point into this allocation */
} ut__held;

typedef struct ut__reorder {
    ut__held *head;         /* the earliest held event, NULL when none */
    ut__held *tail;         /* the latest */
    size_t bytes;
    uint64_t applied_seq;   /* the highest seq applied */
    uint32_t count;
    bool applied_any;       /* an event has been applied */
    bool has_seq;           /* a sequenced event has been applied */
    bool last_had_seq;      /* the latest event accepted had a seq */
    bool disorder;          /* an event of this tab was held or came late */
} ut__reorder;

/* Copies `ev` (a validated, redacted event) into one allocation. NULL when
 * out of memory. */
ut__held *ut__held_new(const ut_event *ev, int64_t arrival_us, uint64_t serial);

/* Inserts `h` in event order. Returns true when it went before an event
 * already held: it arrived out of order. */
bool ut__reorder_insert(ut__reorder *r, ut__held *h);

/* Whether an event with this seq may be applied at once, before any
 * wait: the next seq after the highest applied (seq 1 in a tab that has
 * applied none). */
bool ut__reorder_seq_is_next(const ut__reorder *r, bool has_seq, uint64_t seq);

/* Notes that an event (with this seq, when it has one) was applied. */
void ut__reorder_applied(ut__reorder *r, bool has_seq, uint64_t seq);

/* Removes and returns the earliest event when it may be applied. The
 * tab's sender clock is the engine clock `clock_us` plus `offset_us` (the
 * tab's sender time minus engine clock, from its latest event). The
 * earliest event goes when its seq is the next one; when the sender
 * clock has passed its time by `window_us` (a window in event time, so
 * that events that queued together in a client, and arrive as late as one
 * another, wait as long as one another); when some held event has waited
 * UT_REORDER_WAIT_MAX_MS on the engine clock (everything before it goes
 * first); or when the window holds over UT_REORDER_HELD_MAX events or
 * UT_REORDER_HELD_MAX_BYTES. NULL otherwise. The caller frees it with
 * ut_free. */
ut__held *ut__reorder_pop_ready(ut__reorder *r, int64_t clock_us, int64_t offset_us, int64_t window_us);

/* Removes and returns the earliest event whatever its wait. */
ut__held *ut__reorder_pop(ut__reorder *r);

/* The engine-clock time at which ut__reorder_pop_ready will give the
 * earliest event, if no other event comes first; INT64_MAX when nothing
 * is held. */
int64_t ut__reorder_deadline(const ut__reorder *r, int64_t offset_us, int64_t window_us);

/* Frees every held event. */
void ut__reorder_free(ut__reorder *r);

#endif

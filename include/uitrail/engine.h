/* uitrail: the engine — tabs, rings, debounce, bursts, outcomes, stability
 * and the trace serializer. Pure: no I/O, no clock, no libuv. The daemon,
 * `uitrail replay`, `uitrail tune` and the tests all drive it through these
 * calls alone.
 *
 * Time. Each event carries the sender's time (time_us) and may carry the
 * daemon's receive time (rt_us). The engine clock is rt_us when present,
 * else time_us; ut_engine_advance moves it on between events. Per tab, the
 * engine maps its clock onto the sender's by the offset of the tab's last
 * event, so debounce, outcomes and marks are all computed in sender time
 * and a replay of the same events gives the same result. */
#ifndef UITRAIL_ENGINE_H
#define UITRAIL_ENGINE_H

#include "uitrail/common.h"
#include "uitrail/event.h"
#include "uitrail/stability.h"

typedef struct ut_config {
    uint32_t ring_size;        /* entries per tab, UT_RING_MIN..UT_RING_MAX */
    uint32_t max_tabs;         /* least recently used tab evicted beyond it */
    /* Bytes of tab state over all tabs (ut_engine_stats.tab_bytes); the
     * least recently active tabs are evicted beyond it, never the one an
     * event just went to. 0: no budget; else at least UT_MEMORY_MIN_BYTES. */
    uint64_t max_memory;
    uint32_t idle_ms;          /* a tab with no event for this long is evicted */
    uint32_t debounce_ms;      /* same element within it: one entry */
    bool reset_on_load;        /* a full page load empties the ring */
    /* How long an event may wait, on the engine clock, for earlier events
     * of its tab to arrive (0 .. UT_REORDER_MAX_MS, below idle_ms). An event
     * whose seq is the next one never waits; see ut_engine_apply. */
    uint32_t reorder_ms;
    const char *const *redact_patterns; /* extra PCRE2 patterns (borrowed) */
    size_t n_redact_patterns;
    ut_stab_params stab;
} ut_config;

/* Fills `c` with the documented defaults (limits.h). */
void ut_config_defaults(ut_config *c);

typedef struct ut_engine ut_engine;

/* Called synchronously from ut_engine_apply / ut_engine_advance. Any
 * member may be NULL. Pointers live for the call only. */
typedef struct ut_observer {
    /* An event was applied to its tab, after redaction: in event order,
     * possibly after a wait in the reorder window. */
    void (*on_applied)(void *ud, const ut_event *ev);
    /* The tab's page state changed. */
    void (*on_mark)(void *ud, ut_str tab, const ut_mark *m);
    /* The tab's trace changed (after each user event, outcome or mark). */
    void (*on_trace_changed)(void *ud, ut_str tab);
    /* The tab is gone: closed by the sender, or evicted (idle, tab cap). */
    void (*on_tab_gone)(void *ud, ut_str tab, bool evicted);
    /* An event was accepted, after redaction, in the order it arrived:
     * what a recording stores, so that a replay sees the same input. */
    void (*on_accepted)(void *ud, const ut_event *ev);
    /* The tab's scorer weighed a mutation flush at `time_us` (the tab's
     * clock): what it amounted to under the engine's parameters
     * (ut_stab_change). `uitrail tune --unlabelled` calls a flush the
     * default parameters find VISIBLE a significant change. */
    void (*on_flush)(void *ud, ut_str tab, int64_t time_us, ut_stab_change change);
    void *ud;
} ut_observer;

/* Creates an engine. A bad configuration (ring size out of range, a
 * redaction pattern that does not compile) gives UT_EINVAL and a one-line
 * reason in `err`. */
ut_status ut_engine_new(const ut_config *cfg, ut_engine **out, char *err, size_t errlen);
void ut_engine_free(ut_engine *e);
void ut_engine_set_observer(ut_engine *e, const ut_observer *obs);
const ut_config *ut_engine_config(const ut_engine *e);

/* Accepts one validated event: advances the clock to it (rt_us, else
 * time_us), de-duplicates it by seq against the tab's window of recent
 * seqs (UT_EDUP; a seq in a gap is new), rejects a seq more than
 * UT_SEQ_JUMP_MAX above the tab's highest (UT_ELIMIT), redacts it, and
 * applies it to its tab in event order:
 *   - at once when its seq is the next one after the tab's highest
 *     applied seq (seq 1 for a new tab) and nothing is held, or when the
 *     window is 0, or when it is late: earlier than an event the tab has
 *     already applied (counted; applied at the tab's latest time);
 *   - otherwise it is held in the tab's reorder window, and applied, in
 *     event order, once the events before it are applied and either its
 *     seq is the next one or some held event has waited reorder_ms on the
 *     engine clock; a full window applies its earliest event.
 * Held events are applied by later ut_engine_apply and ut_engine_advance
 * calls, never by anything else: the result is a function of the events,
 * their times and the advance calls. UT_ENOMEM leaves the engine
 * consistent (the event is lost, nothing else). */
ut_status ut_engine_apply(ut_engine *e, const ut_event *ev);

/* Moves the engine clock to `now_us` (never backwards): emits due marks,
 * settles dead clicks, evicts idle tabs. */
void ut_engine_advance(ut_engine *e, int64_t now_us);

/* The engine-clock time at which ut_engine_advance next has work (a mark
 * or a dead click may become due, a tab may go idle); INT64_MAX if none. */
int64_t ut_engine_next_deadline(const ut_engine *e);

typedef enum ut_trace_format { UT_TRACE_TEXT, UT_TRACE_JSON } ut_trace_format;

typedef struct ut_trace_opts {
    ut_trace_format format;
    uint32_t limit;      /* newest entries to show; 0: all */
    uint32_t max_tokens; /* drop the least useful lines to stay under; 0: no cap */
    bool framed;         /* wrap for the assistant prompt (protocol §4) */
    bool compact;        /* JSON: leave out what a prompt cannot use (protocol §4.4) */
} ut_trace_opts;

#define UT_TRACE_OPTS_DEFAULT ((ut_trace_opts){UT_TRACE_TEXT, 0, 0, false, false})

/* Appends the trace of `tab` to `out`. UT_ENOENT for an unknown tab. */
ut_status ut_engine_trace(const ut_engine *e, ut_str tab, const ut_trace_opts *opts, ut_buf *out);

typedef struct ut_tab_info {
    ut_str tab;
    ut_str url;
    ut_str title;
    uint32_t events;     /* entries in the ring */
    int64_t last_us;     /* sender time of the last event */
    ut_stab_status page;
} ut_tab_info;

/* Appends a tab's page state as one JSON object, the same in the JSON
 * trace (its "page") and in GET /v1/tabs/{tab}/stable:
 *   {"stable":true,"state":"stable","marks":4,"since":1715693526000,"intensity":0.004,"busy":0}
 * "stable" is what a caller waits for: false only while the page is
 * changing. "state" is "stable", "changing", or "unknown" for a tab that
 * never sent a mutation record (then "stable" is true: nothing is known to
 * be changing). "since" is the time of the last mark (of the pending user
 * action while the page answers one: src/core/actions.h) in whole ms since
 * the epoch (rounded down), null before the first; "intensity" has three
 * decimals, like a mark's. UT_ENOMEM when `out` cannot grow. */
ut_status ut_page_state_json(const ut_stab_status *st, ut_buf *out);

/* What a wait for the page after an action (GET /v1/tabs/{tab}/stable
 * with after=SEQ or after_ms=TIME) waits for: the first stable state of
 * the page after it answered that action (see src/core/actions.h). */
typedef enum ut_after_by { UT_AFTER_NONE, UT_AFTER_SEQ, UT_AFTER_TIME } ut_after_by;
typedef struct ut_after {
    ut_after_by by;
    uint64_t seq;    /* UT_AFTER_SEQ: the seq of the action's event */
    int64_t time_us; /* UT_AFTER_TIME: the action's time, sender clock */
} ut_after;

typedef enum ut_after_state {
    UT_AFTER_UNSEEN,  /* the action's event has not been applied yet */
    UT_AFTER_PENDING, /* it has, and the page has not settled since */
    UT_AFTER_SETTLED, /* the page is stable after it: the wait is over */
} ut_after_state;

/* Where the wait `q` on `tab` stands at engine-clock time `now_us` (the
 * daemon's clock; never earlier than the engine's own). UT_AFTER_NONE is
 * settled whenever the page reads stable. UT_AFTER_SEQ is unseen until
 * the tab applied an event with that seq (in seq order, so every event
 * before it too). UT_AFTER_TIME is unseen until the tab applied an action
 * at or after that time, or until UT_DEAD_CLICK_MS of the tab's sender
 * time have passed it with none (an action that produced no event);
 * *recheck_us is then the engine-clock time at which that happens
 * (INT64_MAX otherwise), which no event announces. An applied action is
 * settled once the page reads stable: it reads "changing" while the
 * action is pending. UT_ENOENT for an unknown tab. */
ut_status ut_engine_after(const ut_engine *e, ut_str tab, const ut_after *q, int64_t now_us,
                          ut_after_state *out, int64_t *recheck_us);

/* Appends the answer of GET /v1/tabs/{tab}/stable?after=...: the page
 * state object of ut_page_state_json with one more member, "after":
 * "unseen", "pending" or "settled", and with "stable" true only when the
 * wait is settled. */
ut_status ut_page_state_after_json(const ut_stab_status *st, ut_after_state after, ut_buf *out);

/* Information about one tab (pointers live until the next apply/advance). */
ut_status ut_engine_tab_info(const ut_engine *e, ut_str tab, ut_tab_info *out);
/* Calls `visit` for each tab, most recently active first, until it returns
 * false. */
void ut_engine_each_tab(const ut_engine *e, bool (*visit)(void *ud, const ut_tab_info *t), void *ud);
/* Appends GET /v1/tabs's JSON array. */
ut_status ut_engine_tabs_json(const ut_engine *e, ut_buf *out);
/* Appends one applied event as JSON (SSE `event`). */
ut_status ut_event_to_json(const ut_event *ev, ut_buf *out);

typedef struct ut_engine_stats {
    uint64_t applied[UT_KIND__COUNT];
    uint64_t duplicates;
    uint64_t seq_jumps;  /* events rejected for a seq too far above the tab's highest */
    uint64_t reordered;  /* events that arrived before an earlier one of their tab */
    uint64_t late;       /* events that arrived after a later one had been applied */
    uint64_t held;       /* events in reorder windows now */
    uint64_t lost;       /* held events never applied: their tab went (closed, evicted), or
                            memory ran out when they were */
    uint64_t evicted_idle;
    uint64_t evicted_cap;
    uint64_t evicted_memory; /* beyond max_memory */
    uint64_t tab_bytes;      /* tab state now held, as max_memory counts it */
    uint64_t tabs;
    uint64_t marks;
} ut_engine_stats;

void ut_engine_stats_get(const ut_engine *e, ut_engine_stats *out);

#endif

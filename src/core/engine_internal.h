/* The engine's own state (engine.c) and what the serializers (trace*.c)
 * shares with it. Not a public interface: the tests include it to reach
 * the tab table and the ring directly.
 *
 * Who owns what in src/core:
 *   ring.h     entries, the per-tab ring, and making, adding and finding an
 *              entry: the plumbing every rule uses (ring.c)
 *   tabs.h     a tab and the tab table (tabs.c)
 *   actions.h  a user action and what answered it: the click awaiting an
 *              outcome and the action the page answers, one call per event
 *              (actions.c); waits after it (after.c)
 *   clicks.h   debounce, rage clicks, bursts (clicks.c)
 *   dialogs.h  a tab's open dialogs; dialog open and close (dialogs.c)
 *   text.h     UTF-8 cut, URL path (text.c)
 *   engine.c   configuration, the clock and timers, the other event kinds
 *   trace.h    the serializers: read-only over tabs and entries (trace.c, the
 *              entry point; trace_text.c; trace_json.c) */
#ifndef UITRAIL_ENGINE_INTERNAL_H
#define UITRAIL_ENGINE_INTERNAL_H

#include "uitrail/engine.h"
#include "uitrail/redact.h"

#include "ring.h"
#include "tabs.h"
#include "text.h"

/* ---- The engine ---- */

struct ut_engine {
    ut_config cfg;
    ut_observer obs;
    ut_redactor *redactor;
    ut__tabs tabs;
    int64_t clock_us;
    uint64_t serial;  /* events accepted so far: orders held events of equal time */
    uint64_t tab_bytes; /* the sum of every tab's `bytes` (ut_config.max_memory) */
    ut_engine_stats stats;
    ut_buf scratch;  /* the redacted event's text, reused for every event */
    ut_buf build;    /* lists and paths being assembled, reused */
};

/* ---- Shared by the engine and the serializers ---- */

/* (trace_common.c) Estimated o200k_base tokens of `len` bytes of trace text: a third of a
 * token per ASCII byte, rounded up (trace lines are dense in digits and
 * punctuation: gpt-tokenizer counts 2.9-3.0 bytes a token on the fixture
 * sessions, see tools/tokens/measure), plus one token per non-ASCII character (an
 * arrow, an ellipsis, an accented or CJK letter rarely shares a token).
 * The trace budget sums it per line, which rounds up once more: the
 * estimate is meant to err high, so that a max_tokens budget holds. */
uint32_t ut__tokens_estimate(const char *p, size_t len);
/* (engine.c) The page state of `t`; a tab that never sent a mutation record has no
 * scorer and reads as stable without mutations. */
void ut__tab_page_status(const ut__tab *t, ut_stab_status *out);

#endif

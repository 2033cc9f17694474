/* The click rules (clicks.c): what a click does to the ring: debounce,
 * rage clicks and bursts. A click entry becomes the click awaiting an
 * outcome, which actions.h owns with the rest of what answers an action;
 * see actions.h for the outcome rules. */
#ifndef UITRAIL_CORE_CLICKS_H
#define UITRAIL_CORE_CLICKS_H

#include "engine_internal.h"

#define RAGE_WINDOW_US (UT_RAGE_WINDOW_MS * US_PER_MS)
#define BURST_WINDOW_US (UT_BURST_WINDOW_MS * US_PER_MS)

/* What the click rules read besides the tab: the engine's scratch buffer
 * for a list being built, and the debounce time. */
typedef struct ut__click_ctx {
    ut_buf *build;
    uint32_t debounce_ms;
} ut__click_ctx;

/* A click event: debounced, folded into a rage click or a burst, or an
 * entry of its own. */
ut_status ut__apply_click(ut__tab *t, const ut__click_ctx *cx, const ut_event *ev, int64_t now);

#endif

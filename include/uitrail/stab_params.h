/* uitrail: the stability scorer's parameters, described once (issue 11).
 *
 * UT_STAB_PARAM_TABLE lists every tunable of ut_stab_params but the model,
 * one row each, and everything else is derived from it: the struct's
 * fields (stability.h), the uitrail defaults and the bounds that
 * ut_stab_params_check enforces (stability.c), uitraild's options and
 * config keys (`--stab-NAME` with dashes for underscores), the messages
 * for a bad value (which name the parameter), the parameters a recording
 * stores (src/record/meta.c), the grid of `uitrail tune` and the options of
 * `uitrail replay`. A new scorer parameter is one new row here.
 *
 * X(name, type, min, min_open, max, def, unit, help):
 *   type      U32 or DOUBLE (the field's C type: uint32_t or double)
 *   min, max  the bounds, inclusive; min_open: the value must be above min
 *   def       the uitrail model's default (the DOMQuake model overrides a
 *             few: ut_stab_params_defaults_for)
 *   unit      "ms" for times in milliseconds, "" otherwise
 * Why each default is what it is: the comments on the rows. */
#ifndef UITRAIL_STAB_PARAMS_H
#define UITRAIL_STAB_PARAMS_H

#include "uitrail/limits.h"

#define UT_STAB_PARAM_TABLE(X)                                                                     \
    /* Half the page's intensity in one window, for a change no user action                        \
     * caused (a response to one enters at exit_threshold): in Chromium a                          \
     * small slider rotating (about 0.2) or a widget re-hydrated (about                            \
     * 0.26) stays below it from its first beat, three components                                  \
     * re-hydrated (about 1) or data filling a shell (above 3) go above.                           \
     * DOMQuake's 0.75 is the same idea for every change, caused or not.                           \
     * Zero would make every tick a transition. */                                                 \
    X(enter_threshold, DOUBLE, 0, 1, UT_STAB_THRESHOLD_MAX, 0.50, "",                              \
      "intensity above which the page is changing")                                                \
    /* A flush weighing less than 2 % of the page is noise: it neither delays                      \
     * a stable mark nor counts as a click's visible response. The same value                      \
     * as DOMQuake's exit threshold. */                                                            \
    X(exit_threshold, DOUBLE, 0, 0, UT_STAB_THRESHOLD_MAX, 0.02, "",                               \
      "decayed intensity below which the page is stable (domquake); the least intensity of a "     \
      "significant flush (uitrail)")                                                               \
    /* Stable 200 ms after the last significant flush: long enough to bridge                       \
     * the gaps inside a render (a frame is 16 ms, a chunk load or a layout                        \
     * pass rarely stalls rendering longer), and within the 250 ms the                             \
     * assistant can afford to wait. */                                                            \
    X(quiet_ms, U32, 0, 0, UT_STAB_QUIET_MAX_MS, 200, "ms",                                        \
      "quiet time after the last significant mutation before a stable mark")                       \
    /* DOMQuake's window: 6 x 50 ms. Frames of one render (16 ms apart) fall                       \
     * in one window, so a render spread over frames adds up. */                                   \
    X(window_ms, U32, UT_STAB_WINDOW_MIN_MS, 0, UT_STAB_WINDOW_MAX_MS, 300, "ms",                  \
      "scoring window")                                                                            \
    /* A loading indicator blocks "stable" for at most 10 s, so a spinner                          \
     * that never goes away does not hide the page forever. */                                     \
    X(busy_cap_ms, U32, 0, 0, UT_STAB_BUSY_CAP_MAX_MS, 10000, "ms",                                \
      "a loading indicator stops blocking a stable mark after this")                               \
    /* Requests in flight (mutation `net`) the page started before its first                       \
     * stable mark, or a user action started, block "stable" for at most                           \
     * 10 s, like a loading indicator: a request that hangs does not hide                          \
     * the page forever, and the mark that ends the wait says it gave up. */                       \
    X(net_cap_ms, U32, 0, 0, UT_STAB_BUSY_CAP_MAX_MS, 10000, "ms",                                 \
      "requests in flight stop blocking a stable mark after this")                                 \
    /* The reported intensity halves every 50 ms: informative only. */                             \
    X(decay_half_life_ms, U32, 1, 0, UT_STAB_HALF_LIFE_MAX_MS, 50, "ms",                           \
      "half-life of the reported intensity")                                                       \
    /* A content change anywhere weighs at least 2.5 % of the page: above                          \
     * exit_threshold (it is a visible response), below enter_threshold                            \
     * (alone it does not make the page "changing"). */                                            \
    X(leaf_floor, DOUBLE, 0, 0, UT_STAB_THRESHOLD_MAX, 0.025, "",                                  \
      "floor weight of a small target's change")                                                   \
    /* Three intervals at one rhythm (the fourth beat) make a target                               \
     * background: a 1 s clock is learned in 3 s, a 3 s carousel in 9 s. */                        \
    X(churn_min_repeats, U32, 1, 0, UT_STAB_CHURN_REPEATS_MAX, 3, "",                              \
      "a target changed this often at a steady rhythm is background")                              \
    /* Timers drift and flushes land on 16 ms frames: +-15 % of the period                         \
     * (150 ms on a 1 s clock) is still the same rhythm. */                                        \
    X(churn_rhythm_tolerance, DOUBLE, 0, 0, 1, 0.15, "",                                           \
      "allowed relative jitter of that rhythm")                                                    \
    /* Flushes of one target less than 50 ms (three frames) apart are one                          \
     * beat: a render or an animation updating a target every frame is one                         \
     * long beat, never a rhythm, while a live counter updating ten times a                        \
     * second beats at 100 ms. */                                                                  \
    X(churn_min_period_ms, U32, 0, 0, UT_STAB_CHURN_PERIOD_MAX_MS, 50, "ms",                       \
      "changes of one target closer than this to its previous one are one beat")                   \
    /* A target holding half the page or more is a page transition, never                          \
     * background, however regular. */                                                             \
    X(churn_max_page_fraction, DOUBLE, 0, 0, 1, 0.5, "",                                           \
      "a target holding at least this share of the page is never background")                     \
    /* The first settle of a page 100 ms after its last significant flush,                         \
     * as fast as DOMQuake's, where a later change waits quiet_ms for the                          \
     * rest of its response. */                                                                    \
    X(load_quiet_ms, U32, 0, 0, UT_STAB_QUIET_MAX_MS, 100, "ms",                                   \
      "quiet time before a page's first stable mark")                                              \
    /* A flush within 2 s (the dead-click timeout, UT_DEAD_CLICK_MS) of a                          \
     * user action answers it until that answer settles. */                                        \
    X(action_window_ms, U32, 0, 0, UT_STAB_ACTION_WINDOW_MAX_MS, UT_DEAD_CLICK_MS, "ms",           \
      "a significant change this soon after a user action answers it")

#define UT__STAB_PARAM_ONE(name, type, min, min_open, max, def, unit, help) +1
/* The number of rows of UT_STAB_PARAM_TABLE. */
#define UT_STAB_PARAM_COUNT (0 UT_STAB_PARAM_TABLE(UT__STAB_PARAM_ONE))

#endif

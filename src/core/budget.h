/* Which lines of a trace to keep under a token budget, and which lines
 * fold together (a click and the navigation it caused). trace*.c render;
 * this file decides. Pure: no I/O, no clock. */
#ifndef UITRAIL_BUDGET_H
#define UITRAIL_BUDGET_H

#include "ring.h"

/* How useful a line is to an assistant, lowest dropped first. What the
 * page said (a dialog's contents, an error) comes before what the user
 * did to get there, and that before how they got there (issue 22: values
 * set and text typed had pushed a closed dialog's contents out). */
typedef enum ut__rank {
    UT__RANK_VIEW,    /* an older navigation, a repeated view */
    UT__RANK_PLAIN,   /* a click whose outcome was only "page changed" or nothing, text typed;
                       * a repeat */
    UT__RANK_ACTION,  /* clicks with a state or a navigation, bursts, values set, dialogs opened,
                       * a menu's contents, the current page */
    UT__RANK_FACT,    /* clicks in a row, clicks that opened something: what was acted on */
    UT__RANK_MESSAGE, /* what the page said: a dialog's contents, alerts, app events, validation
                       * messages, the alert a click raised, no response, a rage click */
    UT__RANK_NEWEST,  /* what the user did last */
} ut__rank;

/* Times of older identical entries a line lists: " (also T1, T2 …)". */
#define UT__AGAIN_SHOWN 8

/* One line of a text trace (one entry of a JSON trace). */
typedef struct ut__line {
    const ut__entry *en;
    const ut__entry *nav; /* the navigation `en` caused, printed on its line; NULL */
    uint32_t again;       /* older identical entries folded into this line (text only) */
    int64_t again_us[UT__AGAIN_SHOWN]; /* the newest of their times, newest first */
    ut_str ctx;           /* the context it prints (a list: a row's cells, a dialog's name), or empty */
    uint8_t ctx_kind;     /* ut_ctx_kind of `ctx` */
    int64_t minute;       /* its time in whole minutes (tab's zone): ":SS" under the same minute */
    /* Estimated tokens, [same context][same minute]: with the context in
     * full or "(same KIND)", with the clock in full or ":SS" (protocol §4). */
    uint32_t cost[2][2];
    uint64_t body_hash;   /* of the line without its time: finds repeats */
    uint8_t rank;         /* ut__rank */
    bool keep;
} ut__line;

/* Fills `lines` (room for `n`) from the `n` newest entries of `ring`, newest
 * first, folding each navigation into the click whose outcome it is and,
 * with `fold_repeats`, a click or alert into the line above when it says
 * exactly the same (a retry). Returns the number of lines. */
uint32_t ut__lines_build(const ut__ring *ring, uint32_t n, bool fold_repeats, ut__line *lines);

/* True when line `i` prints "(same KIND)": the nearest kept line above
 * it with a context of its kind prints the same one. */
bool ut__line_same_ctx(const ut__line *lines, uint32_t i);

/* True when line `i` prints its clock as ":SS": the kept line above it
 * is of the same minute. */
bool ut__line_same_minute(const ut__line *lines, uint32_t i);

/* Sets each line's rank; needs body_hash. */
void ut__lines_rank(ut__line *lines, uint32_t n);

/* Keeps the most useful lines, newest first within a rank, so that
 * `fixed` + their cost (+ `note_cost` when any is left out) stays within
 * `budget`. Returns the number of lines left out. `order` is scratch room
 * for `n` indices. */
uint32_t ut__lines_select(ut__line *lines, uint32_t n, uint64_t fixed, uint64_t budget,
                          uint32_t note_cost, uint32_t *order);

#endif

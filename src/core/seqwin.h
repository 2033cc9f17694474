/* uitrail core: the per-tab window of recent seqs (seqwin.c), owned by
 * the engine's tab. Internal to src/core and its tests.
 *
 * A sender numbers a tab's events (protocol §1 `seq`); delivery is
 * at-least-once, so the same seq may arrive twice, and a client that
 * batches per tag delivers seqs out of order. The window remembers which of
 * the last UT_SEQ_WINDOW seqs below the highest one were accepted: a seq
 * in a gap is new and accepted when it comes, a seq seen before is a
 * duplicate, a seq older than the window is taken for a duplicate (it
 * cannot be told apart from one), and a seq more than UT_SEQ_JUMP_MAX
 * above the highest is rejected without moving the window. */
#ifndef UITRAIL_SEQWIN_H
#define UITRAIL_SEQWIN_H

#include <stdbool.h>
#include <stdint.h>

#include "uitrail/limits.h"

#define UT__SEQWIN_WORDS (UT_SEQ_WINDOW / 64)

typedef struct ut__seqwin {
    uint64_t high; /* the highest seq accepted */
    /* Bit i (word i / 64, bit i % 64) set: seq high - i was accepted.
     * Bit 0 is set once a seq has been accepted (the highest always is),
     * so it says whether any was: no flag of its own, whose padding
     * would cost 8 bytes a tab. */
    uint64_t bits[UT__SEQWIN_WORDS];
} ut__seqwin;

typedef enum ut__seq_verdict {
    UT__SEQ_NEW,  /* not seen before: accept the event, then ut__seqwin_mark */
    UT__SEQ_DUP,  /* seen before, or older than the window */
    UT__SEQ_JUMP, /* more than UT_SEQ_JUMP_MAX above the highest seq */
} ut__seq_verdict;

/* What `seq` would be for a tab whose window is `w`. Changes nothing. */
ut__seq_verdict ut__seqwin_check(const ut__seqwin *w, uint64_t seq);
/* Records `seq` as accepted (after ut__seqwin_check said UT__SEQ_NEW). */
void ut__seqwin_mark(ut__seqwin *w, uint64_t seq);

#endif

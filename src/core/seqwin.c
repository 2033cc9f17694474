/* The per-tab window of recent seqs: see seqwin.h. A bitmap anchored at
 * the highest seq, as in IPsec's anti-replay window (RFC 4303 §3.4.3),
 * so that a gap filled later is accepted and a resend is not. */
#include "seqwin.h"

#include <string.h>

_Static_assert(UT_SEQ_WINDOW % 64 == 0 && UT_SEQ_WINDOW >= 64, "UT_SEQ_WINDOW is whole words");

static bool bit_get(const ut__seqwin *w, uint64_t i)
{
    return (w->bits[i / 64] >> (i % 64)) & 1u;
}

static void bit_set(ut__seqwin *w, uint64_t i)
{
    w->bits[i / 64] |= UINT64_C(1) << (i % 64);
}

/* A seq has been accepted: the highest one's bit is set. */
static bool seqwin_any(const ut__seqwin *w)
{
    return w->bits[0] & 1u;
}

ut__seq_verdict ut__seqwin_check(const ut__seqwin *w, uint64_t seq)
{
    if (!seqwin_any(w))
        return UT__SEQ_NEW;
    if (seq > w->high)
        return seq - w->high > UT_SEQ_JUMP_MAX ? UT__SEQ_JUMP : UT__SEQ_NEW;
    uint64_t back = w->high - seq;
    if (back >= UT_SEQ_WINDOW)
        return UT__SEQ_DUP;
    return bit_get(w, back) ? UT__SEQ_DUP : UT__SEQ_NEW;
}

/* Moves the anchor `by` seqs up: bit i becomes bit i + by. */
static void shift_up(ut__seqwin *w, uint64_t by)
{
    if (by >= UT_SEQ_WINDOW) {
        memset(w->bits, 0, sizeof w->bits);
        return;
    }
    unsigned words = (unsigned)(by / 64), bits = (unsigned)(by % 64);
    for (int i = UT__SEQWIN_WORDS - 1; i >= 0; i--) {
        uint64_t v = 0;
        int from = i - (int)words;
        if (from >= 0) {
            v = w->bits[from] << bits;
            if (bits && from > 0)
                v |= w->bits[from - 1] >> (64 - bits);
        }
        w->bits[i] = v;
    }
}

void ut__seqwin_mark(ut__seqwin *w, uint64_t seq)
{
    if (!seqwin_any(w)) {
        memset(w->bits, 0, sizeof w->bits);
        w->high = seq;
    } else if (seq > w->high) {
        shift_up(w, seq - w->high);
        w->high = seq;
    } else if (w->high - seq >= UT_SEQ_WINDOW) {
        return;
    }
    bit_set(w, w->high - seq);
}

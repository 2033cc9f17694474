/* Waits for the page after an action: ut_engine_after and its answer
 * (include/uitrail/engine.h; the pending action itself: actions.h). */
#include "engine_internal.h"

#include <string.h>

#include "num.h"

/* Whether the action the wait names has reached the tab; sets *recheck_us
 * when only the passing of time can make it reached. */
static bool after_seen(const ut_engine *e, const ut__tab *t, const ut_after *q, int64_t now_us,
                       int64_t *recheck_us)
{
    switch (q->by) {
    case UT_AFTER_NONE: return true;
    case UT_AFTER_SEQ: return t->reorder.has_seq && t->reorder.applied_seq >= q->seq;
    case UT_AFTER_TIME: break;
    }
    if (t->action.any && t->action.at_us >= q->time_us)
        return true;
    /* No such action yet: the one the caller made may have produced no
     * event at all (a click on nothing); after the dead-click timeout, on
     * the tab's sender clock, the page is what that action left. */
    int64_t clock = now_us > e->clock_us ? now_us : e->clock_us;
    int64_t gone_by = ut__add_sat(q->time_us, DEAD_CLICK_US);
    if (clock + t->offset_us >= gone_by)
        return true;
    *recheck_us = gone_by - t->offset_us;
    return false;
}

ut_status ut_engine_after(const ut_engine *e, ut_str tab, const ut_after *q, int64_t now_us,
                          ut_after_state *out, int64_t *recheck_us)
{
    *recheck_us = INT64_MAX;
    const ut__tab *t = ut__tabs_find(&e->tabs, tab);
    if (!t)
        return UT_ENOENT;
    if (!after_seen(e, t, q, now_us, recheck_us)) {
        *out = UT_AFTER_UNSEEN;
        return UT_OK;
    }
    ut_stab_status st;
    ut__tab_page_status(t, &st);
    *out = st.state == UT_PAGE_STABLE ? UT_AFTER_SETTLED : UT_AFTER_PENDING;
    return UT_OK;
}

ut_status ut_page_state_after_json(const ut_stab_status *st, ut_after_state after, ut_buf *out)
{
    static const char *const names[] = {"unseen", "pending", "settled"};
    /* ut_page_state_json's object opens with "stable": it is true here only
     * when the wait is settled, whatever the page reads now. */
    ut_buf obj = UT_BUF_INIT;
    ut_status rc = ut_page_state_json(st, &obj);
    const char *rest = obj.data ? memchr(obj.data, ',', obj.len) : NULL;
    if (rc == UT_OK && rest && obj.data[obj.len - 1] == '}') {
        bool settled = after == UT_AFTER_SETTLED && st->state == UT_PAGE_STABLE;
        ut_buf_printf(out, "{\"stable\":%s", settled ? "true" : "false");
        ut_buf_append(out, rest, (size_t)(obj.data + obj.len - 1 - rest));
        ut_buf_printf(out, ",\"after\":\"%s\"}", names[after]);
        rc = out->oom ? UT_ENOMEM : UT_OK;
    } else if (rc == UT_OK) {
        rc = UT_ENOMEM;
    }
    ut_buf_free(&obj);
    return rc;
}

/* The pending user action of a tab (see actions.h). */
#include "actions.h"

#include "num.h"

void ut__action_begin(ut__action *a, int64_t at_us)
{
    a->pending = true;
    a->responded = false;
    a->any = true;
    a->at_us = at_us;
    a->response_us = at_us;
}

void ut__action_response(ut__action *a, int64_t t_us)
{
    if (!a->pending || t_us < a->at_us)
        return;
    a->responded = true;
    if (t_us > a->response_us)
        a->response_us = t_us;
}

static void settle(ut__action *a, int64_t t_us)
{
    a->pending = false;
    a->settled_us = t_us;
}

bool ut__action_mark(ut__action *a, const ut_mark *m)
{
    if (!a->pending || !a->responded || m->state != UT_PAGE_STABLE || m->time_us < a->response_us)
        return false;
    settle(a, m->time_us);
    return true;
}

int64_t ut__action_deadline(const ut__action *a, bool scorer_changing, uint32_t quiet_ms)
{
    if (!a->pending)
        return INT64_MAX;
    if (!a->responded)
        return ut__add_sat(a->at_us, DEAD_CLICK_US);
    /* A response that moved the scorer ends with the scorer's mark. */
    if (scorer_changing)
        return INT64_MAX;
    return ut__add_sat(a->response_us, (int64_t)quiet_ms * 1000);
}

bool ut__action_run(ut__action *a, int64_t now, bool scorer_changing, uint32_t quiet_ms)
{
    int64_t due = ut__action_deadline(a, scorer_changing, quiet_ms);
    if (due > now)
        return false;
    settle(a, due);
    return true;
}

/* Work deferred to the next turn of the loop: see defer.h. */
#include "defer.h"

#include <assert.h>

static void on_kick(uv_timer_t *timer)
{
    ut__defer_queue *q = timer->data;
    /* Only what was deferred before this turn runs now. */
    ut_list now, *l;
    ut_list_init(&now);
    while ((l = ut_list_first(&q->due)) != NULL) {
        ut_list_remove(l);
        ut_list_push_back(&now, l);
    }
    while (!q->stopped && (l = ut_list_first(&now)) != NULL) {
        ut_list_remove(l);
        ut__task *t = ut_list_entry(l, ut__task, link);
        t->run(t);
    }
    /* Stopped half way: what is left is dropped, as at shutdown. */
    while ((l = ut_list_first(&now)) != NULL)
        ut_list_remove(l);
}

void ut__defer_init(ut__defer_queue *q, uv_loop_t *loop)
{
    uv_timer_init(loop, &q->kick);
    q->kick.data = q;
    ut_list_init(&q->due);
    q->stopped = false;
}

void ut__task_init(ut__task *t, ut__task_fn run)
{
    ut_list_init(&t->link);
    t->run = run;
}

void ut__defer(ut__defer_queue *q, ut__task *t)
{
    assert(t->run);
    if (q->stopped || ut_list_linked(&t->link))
        return;
    ut_list_push_back(&q->due, &t->link);
    if (!uv_is_active((uv_handle_t *)&q->kick))
        uv_timer_start(&q->kick, on_kick, 0, 0);
}

void ut__task_cancel(ut__task *t)
{
    ut_list_remove(&t->link);
}

bool ut__defer_pending(const ut__defer_queue *q)
{
    return !ut_list_empty(&q->due);
}

void ut__defer_stop(ut__defer_queue *q)
{
    q->stopped = true;
    ut_list *l;
    while ((l = ut_list_first(&q->due)) != NULL)
        ut_list_remove(l);
    uv_timer_stop(&q->kick);
}

/* defer.c: work deferred to the next turn of the loop.
 *
 * The engine calls its observer from inside ut_engine_apply, and a
 * connection's callbacks may be deep in a parser: work that reads the
 * engine, answers a request or parses held input must not run there. A
 * room embeds a ut__task in what it owns and defers it; the one timer of
 * the queue runs every task deferred before the turn began, in the order
 * they were deferred. Work a task defers in turn waits for the next turn,
 * so a task that keeps deferring itself cannot starve the loop.
 *
 * Below the connections: it knows tasks, not what they do. */
#ifndef UT_DAEMON_DEFER_H
#define UT_DAEMON_DEFER_H

#include <uv.h>

#include "uitrail/list.h"

typedef struct ut__task ut__task;
typedef void (*ut__task_fn)(ut__task *t);

struct ut__task {
    ut_list link; /* on the queue while deferred */
    ut__task_fn run;
};

typedef struct ut__defer_queue {
    uv_timer_t kick; /* runs the due tasks on the next turn */
    ut_list due;
    bool stopped;    /* shutting down: nothing more runs */
} ut__defer_queue;

void ut__defer_init(ut__defer_queue *q, uv_loop_t *loop);
/* Makes `t` a task that runs `run`; it is not deferred. */
void ut__task_init(ut__task *t, ut__task_fn run);
/* Runs `t` on the next turn; a task already deferred keeps its place. */
void ut__defer(ut__defer_queue *q, ut__task *t);
/* Takes `t` off the queue, if it is on it (before freeing what holds it). */
void ut__task_cancel(ut__task *t);
/* Whether any task waits for the next turn. */
bool ut__defer_pending(const ut__defer_queue *q);
/* Nothing deferred runs any more (shutdown); the caller closes the timer
 * with the other handles. */
void ut__defer_stop(ut__defer_queue *q);

#endif

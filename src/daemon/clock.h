/* clock.c: the daemon's time, one owner, a leaf under every room.
 *
 * Two clocks: the wall clock (event receive times, token expiry, the
 * engine's and the recorder's deadlines, log stamps) and the loop's
 * monotonic time (connection deadlines, the ack group commit, stable
 * waits, log throttles). The core never reads either: the daemon hands
 * the wall time in (ut_engine_advance, the event's rt_us).
 *
 * Virtual time: an in-process test moves both clocks forward with
 * ut__clock_skip instead of sleeping. A libuv timer still fires on the
 * loop's own time; every timer callback re-reads these clocks, so a skip
 * makes what fell due happen at its next run. */
#ifndef UT_DAEMON_CLOCK_H
#define UT_DAEMON_CLOCK_H

#include <stdint.h>
#include <uv.h>

/* The wall clock in microseconds since the epoch, plus the time skipped. */
int64_t ut__clock_wall_us(void);
/* The loop's monotonic time in milliseconds (uv_now: the time the loop
 * pass started), plus the time skipped. */
uint64_t ut__clock_loop_ms(const uv_loop_t *loop);

/* Virtual time for in-process tests: both clocks jump `us` (>= 0)
 * forward. Time never runs backward. */
void ut__clock_skip(int64_t us);
/* Back to the real clocks: the time skipped is forgotten. */
void ut__clock_reset(void);

#endif

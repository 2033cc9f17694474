/* The daemon's two clocks and the tests' virtual time (clock.h). */
#include "clock.h"

#include <assert.h>
#include <time.h>

/* The time in-process tests skipped, in microseconds. Every room reads the
 * time through this file, so one offset moves the whole daemon. */
static int64_t skipped_us;

int64_t ut__clock_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + skipped_us;
}

uint64_t ut__clock_loop_ms(const uv_loop_t *loop)
{
    return uv_now(loop) + (uint64_t)(skipped_us / 1000);
}

void ut__clock_skip(int64_t us)
{
    assert(us >= 0);
    skipped_us += us;
}

void ut__clock_reset(void)
{
    skipped_us = 0;
}

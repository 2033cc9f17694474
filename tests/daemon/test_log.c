/* The daemon's one log throttle (src/daemon/log.c): the burst passes, then
 * one line per interval of loop time, and the held-back lines are counted
 * into the next line written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "log.h"

static void test_log_throttle_table(void **state)
{
    (void)state;
    /* burst 2, interval 1000 ms: each row is a line asked for at `now`. */
    static const struct {
        uint64_t now;
        bool pass;
        uint64_t held; /* when it passes */
    } rows[] = {
        {0, true, 0},     /* the burst, even at loop time 0 */
        {10, true, 0},
        {20, false, 0},   /* within the interval of the last line */
        {500, false, 0},
        {1009, false, 0},
        {1010, true, 3},  /* an interval after the last line: says 3 held */
        {1500, false, 0},
        {2010, true, 1},
        {9000, true, 0},
    };
    ut__log_throttle t = {0};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint64_t held = UINT64_MAX;
        bool pass = ut__log_throttle_pass(&t, rows[i].now, 2, 1000, &held);
        if (pass != rows[i].pass || (pass && held != rows[i].held))
            fail_msg("row %zu (now %llu): pass %d held %llu", i, (unsigned long long)rows[i].now, pass,
                     (unsigned long long)held);
        if (!pass)
            assert_int_equal(held, UINT64_MAX); /* untouched */
    }
    assert_int_equal(t.seen, sizeof rows / sizeof rows[0]);
}

/* A burst of one is "at most one line per interval" from the first. */
static void test_log_throttle_burst_one(void **state)
{
    (void)state;
    ut__log_throttle t = {0};
    uint64_t held;
    assert_true(ut__log_throttle_pass(&t, 5000, 1, 1000, &held));
    assert_int_equal(held, 0);
    for (uint64_t now = 5001; now < 6000; now += 100)
        assert_false(ut__log_throttle_pass(&t, now, 1, 1000, &held));
    assert_true(ut__log_throttle_pass(&t, 6000, 1, 1000, &held));
    assert_int_equal(held, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_throttle_table),
        cmocka_unit_test(test_log_throttle_burst_one),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}

/* Tests of the buffer transaction and truncate (include/uitrail/common.h)
 * and of the core's integer helpers (src/core/num.h): one copy of each,
 * used by the serializers, the packer, the recorder and the scorer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fail_alloc.h"
#include "isotime.h"
#include "num.h"
#include "uitrail/common.h"

static void test_buf_truncate(void **state)
{
    (void)state;
    ut_buf b = UT_BUF_INIT;
    ut_buf_truncate(&b, 0); /* no storage yet: nothing to do */
    ut_buf_append_cstr(&b, "hello");
    ut_buf_truncate(&b, 9); /* past the end: unchanged */
    assert_string_equal(b.data, "hello");
    ut_buf_truncate(&b, 2);
    assert_int_equal(b.len, 2);
    assert_string_equal(b.data, "he");
    ut_buf_free(&b);
}

static void test_buf_transaction_kept(void **state)
{
    (void)state;
    ut_buf b = UT_BUF_INIT;
    ut_buf_append_cstr(&b, "a");
    ut_buf_mark m = ut_buf_begin(&b);
    ut_buf_append_cstr(&b, "bc");
    assert_int_equal(ut_buf_end(&b, m, UT_OK), UT_OK);
    assert_string_equal(b.data, "abc");
    assert_false(b.oom);
    ut_buf_free(&b);
}

static void test_buf_transaction_refused_by_caller(void **state)
{
    (void)state;
    ut_buf b = UT_BUF_INIT;
    ut_buf_append_cstr(&b, "a");
    ut_buf_mark m = ut_buf_begin(&b);
    ut_buf_append_cstr(&b, "bc");
    assert_int_equal(ut_buf_end(&b, m, UT_ELIMIT), UT_ELIMIT);
    assert_int_equal(b.len, 1);
    assert_string_equal(b.data, "a");
    ut_buf_free(&b);
}

/* A failed append followed by a smaller one that succeeds: the whole
 * transaction goes, and `oom` is as it was before it. */
static void test_buf_transaction_failed_append(void **state)
{
    (void)state;
    ut_buf b = UT_BUF_INIT;
    ut_buf_append_cstr(&b, "a");
    char big[200];
    memset(big, 'x', sizeof big);
    ut_buf_mark m = ut_buf_begin(&b);
    fail_alloc_install(1, false); /* the next allocation fails, once */
    assert_int_equal(ut_buf_append(&b, big, sizeof big), UT_ENOMEM);
    fail_alloc_remove();
    ut_buf_append_cstr(&b, "b");
    assert_true(b.oom);
    assert_int_equal(ut_buf_end(&b, m, UT_OK), UT_ENOMEM);
    assert_string_equal(b.data, "a");
    assert_false(b.oom);
    ut_buf_free(&b);
}

/* A buffer that had failed before the transaction still says so after. */
static void test_buf_transaction_keeps_earlier_oom(void **state)
{
    (void)state;
    ut_buf b = UT_BUF_INIT;
    ut_buf_append_cstr(&b, "a");
    b.oom = true;
    ut_buf_mark m = ut_buf_begin(&b);
    assert_false(b.oom);
    ut_buf_append_cstr(&b, "b");
    assert_int_equal(ut_buf_end(&b, m, UT_OK), UT_OK);
    assert_string_equal(b.data, "ab");
    assert_true(b.oom);
    ut_buf_free(&b);
}

static void test_floor_div(void **state)
{
    (void)state;
    static const struct { int64_t a, b, q; } cases[] = {
        {7, 2, 3}, {-7, 2, -4}, {7, -2, -4}, {-7, -2, 3}, {-8, 2, -4}, {0, 5, 0},
        {-1, 1000, -1}, {999, 1000, 0}, {-1000, 1000, -1}, {-1001, 1000, -2},
        {INT64_MIN, 1000, -9223372036854776}, {INT64_MAX, 1000, 9223372036854775},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(ut__floor_div(cases[i].a, cases[i].b), cases[i].q);
}

static void test_add_sat(void **state)
{
    (void)state;
    static const struct { int64_t a, b, sum; } cases[] = {
        {1, 2, 3}, {-1, -2, -3}, {INT64_MAX, 1, INT64_MAX}, {INT64_MAX, INT64_MAX, INT64_MAX},
        {INT64_MIN, -1, INT64_MIN}, {INT64_MIN, INT64_MIN, INT64_MIN}, {INT64_MAX, INT64_MIN, -1},
        {INT64_MAX - 5, 5, INT64_MAX}, {INT64_MIN + 5, -5, INT64_MIN}, {0, INT64_MIN, INT64_MIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(ut__add_sat(cases[i].a, cases[i].b), cases[i].sum);
}

/* The integer formatters write what printf writes, on the edges of every
 * digit count, the extremes, and a spread of values between. */
static void check_u64(uint64_t v)
{
    char want[32];
    snprintf(want, sizeof want, "%" PRIu64, v);
    ut_buf b = UT_BUF_INIT;
    assert_int_equal(ut_buf_append_u64(&b, v), UT_OK);
    assert_string_equal(b.data, want);
    ut_buf_free(&b);
}

static void check_i64(int64_t v)
{
    char want[32];
    snprintf(want, sizeof want, "%" PRId64, v);
    ut_buf b = UT_BUF_INIT;
    ut_buf_append(&b, "x", 1); /* appends after what is there */
    assert_int_equal(ut_buf_append_i64(&b, v), UT_OK);
    assert_string_equal(b.data + 1, want);
    ut_buf_free(&b);
}

static void test_buf_append_integers(void **state)
{
    (void)state;
    uint64_t p = 1;
    for (int digits = 1; digits <= 20; digits++) {
        check_u64(p);
        check_u64(p - 1);
        check_u64(p + 1);
        check_i64((int64_t)p);
        check_i64(-(int64_t)p);
        check_i64((int64_t)p - 1);
        check_i64(1 - (int64_t)p);
        if (digits < 20)
            p *= 10;
    }
    check_u64(UINT64_MAX);
    check_u64(UINT64_MAX - 1);
    check_i64(INT64_MAX);
    check_i64(INT64_MIN);
    check_i64(INT64_MIN + 1);
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 2000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        check_u64(x >> (i % 64));
        check_i64((int64_t)(x >> (i % 64)) * (i % 2 ? -1 : 1));
    }
}

/* The ISO times of a JSON trace are what gmtime_r and printf write: around
 * the epoch, leap days and century years, the ends of years 0 and 9999,
 * the extremes of int64, and a spread of times between. */
static void check_iso(int64_t us)
{
    int64_t secs = ut__floor_div(us, 1000000);
    int ms = (int)((us % 1000000 + 1000000) % 1000000 / 1000); /* no secs * 1e6: INT64_MIN */
    time_t t = (time_t)secs;
    struct tm tm;
    assert_non_null(gmtime_r(&t, &tm));
    char want[64];
    snprintf(want, sizeof want, "\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    ut_buf b = UT_BUF_INIT;
    assert_int_equal(ut__buf_append_iso_time(&b, us), UT_OK);
    assert_string_equal(b.data, want);
    ut_buf_free(&b);
}

static void test_iso_time(void **state)
{
    (void)state;
    static const int64_t secs[] = {
        0, -1, 1, 86399, 86400, -86400, -86401,
        951782400,     /* 2000-02-29 */
        951868800,     /* 2000-03-01 */
        4107456000,    /* 2100-02-28 */
        4107542400,    /* 2100-03-01 */
        -2208988800,   /* 1900-01-01 */
        -62167219200,  /* 0000-01-01 */
        -62167219201,  /* -0001-12-31T23:59:59 */
        253402300799,  /* 9999-12-31T23:59:59 */
        253402300800,  /* 10000-01-01 */
        1715693491,
    };
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++)
        for (int64_t frac = 0; frac < 1000000; frac += 499999)
            check_iso(secs[i] * 1000000 + frac);
    check_iso(INT64_MAX);
    check_iso(INT64_MIN);
    check_iso(-1);
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        check_iso((int64_t)(x >> (i % 40)) * (i % 2 ? -1 : 1));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_truncate),
        cmocka_unit_test(test_buf_transaction_kept),
        cmocka_unit_test(test_buf_transaction_refused_by_caller),
        cmocka_unit_test(test_buf_transaction_failed_append),
        cmocka_unit_test(test_buf_transaction_keeps_earlier_oom),
        cmocka_unit_test(test_floor_div),
        cmocka_unit_test(test_add_sat),
        cmocka_unit_test(test_buf_append_integers),
        cmocka_unit_test(test_iso_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

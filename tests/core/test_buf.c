/* Tests of the buffer transaction and truncate (include/uitrail/common.h)
 * and of the core's integer helpers (src/core/num.h): one copy of each,
 * used by the serializers, the packer, the recorder and the scorer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fail_alloc.h"
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The tab-id set of the event streams (src/daemon/tabset.c): order of
 * insertion, one entry per tab, refusals, growth and reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tabset.h"

static size_t count(const ut__tabset *s)
{
    size_t at = 0, n = 0;
    ut_str tab;
    while (ut__tabset_next(s, &at, &tab))
        n++;
    return n;
}

static void test_tabset_keeps_order_and_one_of_each(void **state)
{
    (void)state;
    ut__tabset s = UT__TABSET_INIT;
    static const char *const adds[] = {"b", "a", "b", "ab", "a", "b\xc3\xa9"};
    for (size_t i = 0; i < sizeof adds / sizeof adds[0]; i++)
        assert_int_equal(ut__tabset_add(&s, ut_str_cstr(adds[i])), UT_OK);
    static const char *const want[] = {"b", "a", "ab", "b\xc3\xa9"};
    size_t at = 0, i = 0;
    ut_str tab;
    while (ut__tabset_next(&s, &at, &tab)) {
        assert_true(i < 4);
        assert_true(ut_str_eq_cstr(tab, want[i++]));
    }
    assert_int_equal(i, 4);
    assert_int_equal(s.n, 4);
    ut__tabset_free(&s);
}

static void test_tabset_refuses_empty_and_nul(void **state)
{
    (void)state;
    ut__tabset s = UT__TABSET_INIT;
    assert_int_equal(ut__tabset_add(&s, ut_str_from("a\0b", 3)), UT_EINVAL);
    assert_int_equal(ut__tabset_add(&s, ut_str_from("", 0)), UT_EINVAL);
    /* "a" is not taken for the refused "a\0b". */
    assert_int_equal(ut__tabset_add(&s, ut_str_cstr("a")), UT_OK);
    assert_int_equal(s.n, 1);
    ut__tabset_free(&s);
}

static void test_tabset_grows_and_resets(void **state)
{
    (void)state;
    ut__tabset s = UT__TABSET_INIT;
    char tab[32];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 20000; i++) {
            snprintf(tab, sizeof tab, "tab-%d", i);
            assert_int_equal(ut__tabset_add(&s, ut_str_cstr(tab)), UT_OK);
            /* Every other one again: still one entry. */
            snprintf(tab, sizeof tab, "tab-%d", i / 2);
            assert_int_equal(ut__tabset_add(&s, ut_str_cstr(tab)), UT_OK);
        }
        assert_int_equal(s.n, 20000);
        assert_int_equal(count(&s), 20000);
        ut__tabset_reset(&s);
        assert_int_equal(s.n, 0);
        assert_int_equal(count(&s), 0);
    }
    ut__tabset_free(&s);
    ut__tabset_free(&s); /* freeing twice is harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tabset_keeps_order_and_one_of_each),
        cmocka_unit_test(test_tabset_refuses_empty_and_nul),
        cmocka_unit_test(test_tabset_grows_and_resets),
    };
    return cmocka_run_group_tests_name("tabset", tests, NULL, NULL);
}

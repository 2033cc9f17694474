/* The ordered set of tab ids (src/core/tabset.c): order of insertion,
 * one entry per tab, positions, refusals, growth and reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "uitrail/tabset.h"

static size_t count(const ut_tabset *s)
{
    size_t at = 0, n = 0;
    ut_str tab;
    while (ut_tabset_next(s, &at, &tab))
        n++;
    return n;
}

static void test_tabset_keeps_order_and_one_of_each(void **state)
{
    (void)state;
    ut_tabset s = UT_TABSET_INIT;
    static const char *const adds[] = {"b", "a", "b", "ab", "a", "b\xc3\xa9"};
    for (size_t i = 0; i < sizeof adds / sizeof adds[0]; i++)
        assert_int_equal(ut_tabset_add(&s, ut_str_cstr(adds[i]), NULL), UT_OK);
    static const char *const want[] = {"b", "a", "ab", "b\xc3\xa9"};
    size_t at = 0, i = 0;
    ut_str tab;
    while (ut_tabset_next(&s, &at, &tab)) {
        assert_true(i < 4);
        assert_true(ut_str_eq_cstr(tab, want[i++]));
    }
    assert_int_equal(i, 4);
    assert_int_equal(s.n, 4);
    ut_tabset_free(&s);
}

static void test_tabset_refuses_empty_and_nul(void **state)
{
    (void)state;
    ut_tabset s = UT_TABSET_INIT;
    assert_int_equal(ut_tabset_add(&s, ut_str_from("a\0b", 3), NULL), UT_EINVAL);
    assert_int_equal(ut_tabset_add(&s, ut_str_from("", 0), NULL), UT_EINVAL);
    /* "a" is not taken for the refused "a\0b". */
    assert_int_equal(ut_tabset_add(&s, ut_str_cstr("a"), NULL), UT_OK);
    assert_int_equal(s.n, 1);
    ut_tabset_free(&s);
}

/* Each tab keeps the position it was first added at, through growth: what
 * `uitrail replay` keys its closed tabs' traces by. */
static void test_tabset_positions(void **state)
{
    (void)state;
    ut_tabset s = UT_TABSET_INIT;
    size_t at = 99;
    assert_false(ut_tabset_find(&s, ut_str_cstr("a"), &at)); /* empty, never grown */
    char tab[32];
    for (size_t i = 0; i < 300; i++) {
        snprintf(tab, sizeof tab, "t%zu", i);
        assert_int_equal(ut_tabset_add(&s, ut_str_cstr(tab), &at), UT_OK);
        assert_int_equal(at, i);
    }
    assert_int_equal(ut_tabset_add(&s, ut_str_cstr("t7"), &at), UT_OK);
    assert_int_equal(at, 7);
    for (size_t i = 0; i < 300; i++) {
        snprintf(tab, sizeof tab, "t%zu", i);
        assert_true(ut_tabset_find(&s, ut_str_cstr(tab), &at));
        assert_int_equal(at, i);
        assert_true(ut_str_eq_cstr(ut_tabset_at(&s, i), tab));
    }
    assert_false(ut_tabset_find(&s, ut_str_cstr("t300"), NULL));
    ut_tabset_free(&s);
}

static void test_tabset_grows_and_resets(void **state)
{
    (void)state;
    ut_tabset s = UT_TABSET_INIT;
    char tab[32];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 20000; i++) {
            snprintf(tab, sizeof tab, "tab-%d", i);
            assert_int_equal(ut_tabset_add(&s, ut_str_cstr(tab), NULL), UT_OK);
            /* Every other one again: still one entry. */
            snprintf(tab, sizeof tab, "tab-%d", i / 2);
            assert_int_equal(ut_tabset_add(&s, ut_str_cstr(tab), NULL), UT_OK);
        }
        assert_int_equal(s.n, 20000);
        assert_int_equal(count(&s), 20000);
        ut_tabset_reset(&s);
        assert_int_equal(s.n, 0);
        assert_int_equal(count(&s), 0);
    }
    ut_tabset_free(&s);
    ut_tabset_free(&s); /* freeing twice is harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tabset_keeps_order_and_one_of_each),
        cmocka_unit_test(test_tabset_refuses_empty_and_nul),
        cmocka_unit_test(test_tabset_positions),
        cmocka_unit_test(test_tabset_grows_and_resets),
    };
    return cmocka_run_group_tests_name("tabset", tests, NULL, NULL);
}

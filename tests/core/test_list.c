/* Tests of include/uitrail/list.h: the intrusive list every module uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "uitrail/list.h"

typedef struct item {
    int value;
    ut_list link;
} item;

/* The values of `head` front to back, as a number with one digit each. */
static int values_of(const ut_list *head)
{
    int acc = 0;
    const ut_list *pos;
    ut_list_foreach(pos, head)
        acc = acc * 10 + ut_list_entry(pos, item, link)->value;
    return acc;
}

static void test_list_empty_head(void **state)
{
    (void)state;
    ut_list head;
    ut_list_init(&head);
    assert_true(ut_list_empty(&head));
    assert_null(ut_list_first(&head));
    assert_null(ut_list_last(&head));
    assert_int_equal(values_of(&head), 0);
}

static void test_list_push_and_order(void **state)
{
    (void)state;
    ut_list head;
    ut_list_init(&head);
    item a = {1, {0}}, b = {2, {0}}, c = {3, {0}};
    ut_list_init(&a.link);
    ut_list_init(&b.link);
    ut_list_init(&c.link);
    ut_list_push_back(&head, &a.link);
    ut_list_push_back(&head, &b.link);
    ut_list_push_front(&head, &c.link);
    assert_int_equal(values_of(&head), 312);
    assert_ptr_equal(ut_list_entry(ut_list_first(&head), item, link), &c);
    assert_ptr_equal(ut_list_entry(ut_list_last(&head), item, link), &b);
}

static void test_list_remove_leaves_unlinked(void **state)
{
    (void)state;
    ut_list head;
    ut_list_init(&head);
    item a = {1, {0}}, b = {2, {0}};
    ut_list_init(&a.link);
    ut_list_init(&b.link);
    assert_false(ut_list_linked(&a.link));
    ut_list_push_back(&head, &a.link);
    ut_list_push_back(&head, &b.link);
    assert_true(ut_list_linked(&a.link));
    ut_list_remove(&a.link);
    assert_false(ut_list_linked(&a.link));
    ut_list_remove(&a.link); /* a second remove is harmless */
    assert_int_equal(values_of(&head), 2);
    ut_list_remove(&b.link);
    assert_true(ut_list_empty(&head));
}

static void test_list_move_front_is_lru_touch(void **state)
{
    (void)state;
    ut_list head;
    ut_list_init(&head);
    item it[3] = {{1, {0}}, {2, {0}}, {3, {0}}};
    for (int i = 0; i < 3; i++) {
        ut_list_init(&it[i].link);
        ut_list_push_back(&head, &it[i].link);
    }
    ut_list_move_front(&head, &it[2].link);
    assert_int_equal(values_of(&head), 312);
    ut_list_move_front(&head, &it[2].link); /* already first */
    assert_int_equal(values_of(&head), 312);
    item fresh = {4, {0}};
    ut_list_init(&fresh.link);
    ut_list_move_front(&head, &fresh.link); /* on no list yet */
    assert_int_equal(values_of(&head), 4312);
}

static void test_list_foreach_safe_removes_all(void **state)
{
    (void)state;
    ut_list head;
    ut_list_init(&head);
    item it[4] = {{1, {0}}, {2, {0}}, {3, {0}}, {4, {0}}};
    for (int i = 0; i < 4; i++) {
        ut_list_init(&it[i].link);
        ut_list_push_back(&head, &it[i].link);
    }
    ut_list *pos, *tmp;
    ut_list_foreach_safe(pos, tmp, &head) {
        if (ut_list_entry(pos, item, link)->value % 2 == 0)
            ut_list_remove(pos);
    }
    assert_int_equal(values_of(&head), 13);
    ut_list_foreach_safe(pos, tmp, &head)
        ut_list_remove(pos);
    assert_true(ut_list_empty(&head));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_empty_head),
        cmocka_unit_test(test_list_push_and_order),
        cmocka_unit_test(test_list_remove_leaves_unlinked),
        cmocka_unit_test(test_list_move_front_is_lru_touch),
        cmocka_unit_test(test_list_foreach_safe_removes_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of the tab table (hashing, probing, backward-shift deletion, LRU
 * order, deadline heap) and of the ring and its entries. */
#include "engine_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "stability_shared.h"

static ut_str key_of(char *buf, size_t cap, unsigned i)
{
    int n = snprintf(buf, cap, "tab-%u", i);
    return ut_str_from(buf, (size_t)n);
}

static ut__tab *add_tab(ut__tabs *tt, unsigned i)
{
    char buf[32];
    ut_str key = key_of(buf, sizeof buf, i);
    assert_int_equal(ut__tabs_reserve(tt), UT_OK);
    ut__tab *t = ut__tab_new(key, 4);
    assert_non_null(t);
    ut__tabs_insert(tt, t);
    return t;
}

static void test_tabs_insert_find_remove(void **state)
{
    (void)state;
    enum { N = 5000 };
    ut__tabs tt;
    ut__tabs_init(&tt);
    for (unsigned i = 0; i < N; i++)
        add_tab(&tt, i);
    assert_int_equal(tt.count, N);
    /* The table stays at most three quarters full. */
    assert_true((uint64_t)tt.count * 4 <= (uint64_t)tt.cap * 3);
    char buf[32];
    /* Remove every third tab: backward-shift deletion must keep every
     * other tab reachable along its probe run. */
    for (unsigned i = 0; i < N; i += 3) {
        ut__tab *t = ut__tabs_find(&tt, key_of(buf, sizeof buf, i));
        assert_non_null(t);
        ut__tabs_remove(&tt, t);
        ut__tab_free(t);
    }
    for (unsigned i = 0; i < N; i++) {
        ut__tab *t = ut__tabs_find(&tt, key_of(buf, sizeof buf, i));
        if (i % 3 == 0) {
            assert_null(t);
        } else {
            assert_non_null(t);
            assert_true(ut_str_eq(ut__tab_key(t), key_of(buf, sizeof buf, i)));
        }
    }
    assert_null(ut__tabs_find(&tt, UT_STR_LIT("absent")));
    ut__tabs_free(&tt);
}

static void test_tabs_key_limits(void **state)
{
    (void)state;
    char key[UT_TAB_MAX_BYTES + 1];
    memset(key, 'k', sizeof key);
    assert_null(ut__tab_new(ut_str_from(key, 0), 4));
    assert_null(ut__tab_new(ut_str_from(key, UT_TAB_MAX_BYTES + 1), 4));
    ut__tab *t = ut__tab_new(ut_str_from(key, UT_TAB_MAX_BYTES), 4);
    assert_non_null(t);
    assert_int_equal(ut__tab_key(t).len, UT_TAB_MAX_BYTES);
    ut__tab_free(t);
}

static void test_tabs_lru_order(void **state)
{
    (void)state;
    ut__tabs tt;
    ut__tabs_init(&tt);
    ut__tab *a = add_tab(&tt, 1), *b = add_tab(&tt, 2), *c = add_tab(&tt, 3);
    assert_ptr_equal(tt.lru_head, c);
    assert_ptr_equal(tt.lru_tail, a);
    ut__tabs_touch(&tt, a);
    assert_ptr_equal(tt.lru_head, a);
    assert_ptr_equal(tt.lru_tail, b);
    assert_ptr_equal(a->lru_next, c);
    ut__tabs_remove(&tt, b);
    ut__tab_free(b);
    assert_ptr_equal(tt.lru_tail, c);
    assert_null(c->lru_next);
    ut__tabs_free(&tt);
}

static void test_tabs_deadline_heap(void **state)
{
    (void)state;
    enum { N = 300 };
    ut__tabs tt;
    ut__tabs_init(&tt);
    ut__tab *tabs[N];
    srand(7);
    for (unsigned i = 0; i < N; i++) {
        tabs[i] = add_tab(&tt, i);
        ut__tabs_set_deadline(&tt, tabs[i], rand() % 1000);
    }
    /* Move some, clear some, remove some. */
    for (unsigned i = 0; i < N; i += 4)
        ut__tabs_set_deadline(&tt, tabs[i], rand() % 1000);
    for (unsigned i = 1; i < N; i += 5)
        ut__tabs_set_deadline(&tt, tabs[i], INT64_MAX);
    for (unsigned i = 2; i < N; i += 7) {
        ut__tabs_remove(&tt, tabs[i]);
        ut__tab_free(tabs[i]);
        tabs[i] = NULL;
    }
    /* Popping the earliest each time yields a non-decreasing sequence that
     * covers every tab with a deadline. */
    unsigned expected = 0;
    for (unsigned i = 0; i < N; i++)
        if (tabs[i] && tabs[i]->deadline != INT64_MAX)
            expected++;
    int64_t prev = INT64_MIN;
    unsigned popped = 0;
    ut__tab *t;
    while ((t = ut__tabs_earliest(&tt))) {
        assert_true(t->deadline >= prev);
        prev = t->deadline;
        ut__tabs_set_deadline(&tt, t, INT64_MAX);
        assert_int_equal(t->heap_index, UT__NOT_IN_HEAP);
        popped++;
    }
    assert_int_equal(popped, expected);
    ut__tabs_free(&tt);
}

static void test_tabs_reserve_out_of_memory(void **state)
{
    (void)state;
    ut__tabs tt;
    ut__tabs_init(&tt);
    for (unsigned i = 0; i < 12; i++)
        add_tab(&tt, i);
    /* Growing the slots (the 13th tab crosses 3/4 of 16) fails cleanly. */
    for (long n = 1; n <= 2; n++) {
        fail_alloc_install(n, false);
        ut_status st = ut__tabs_reserve(&tt);
        fail_alloc_remove();
        if (st == UT_OK)
            break;
        assert_int_equal(st, UT_ENOMEM);
    }
    char buf[32];
    for (unsigned i = 0; i < 12; i++)
        assert_non_null(ut__tabs_find(&tt, key_of(buf, sizeof buf, i)));
    add_tab(&tt, 12);
    assert_int_equal(tt.cap, 32);
    ut__tabs_free(&tt);
}

static ut__entry *entry_named(const char *name)
{
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_NAME] = ut_str_cstr(name);
    ut__entry *en = ut__entry_new(UT__E_CLICK, fields);
    assert_non_null(en);
    return en;
}

static void test_tabs_ring_evicts_oldest(void **state)
{
    (void)state;
    ut__ring r;
    ut__ring_init(&r, 3);
    assert_null(ut__ring_newest(&r, 0));
    assert_int_equal(ut__ring_reserve(&r), UT_OK);
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++)
        ut__ring_push(&r, entry_named(names[i]));
    assert_int_equal(r.count, 3);
    assert_true(ut_str_eq_cstr(ut__entry_field(*ut__ring_newest(&r, 0), UT__F_NAME), "e"));
    assert_true(ut_str_eq_cstr(ut__entry_field(*ut__ring_newest(&r, 2), UT__F_NAME), "c"));
    assert_null(ut__ring_newest(&r, 3));
    ut__ring_drop_newest(&r);
    assert_true(ut_str_eq_cstr(ut__entry_field(*ut__ring_newest(&r, 0), UT__F_NAME), "d"));
    ut__ring_push(&r, entry_named("f"));
    ut__ring_push(&r, entry_named("g"));
    assert_true(ut_str_eq_cstr(ut__entry_field(*ut__ring_newest(&r, 2), UT__F_NAME), "d"));
    ut__ring_clear(&r);
    assert_int_equal(r.count, 0);
    ut__ring_free(&r);
}

static void test_tabs_entry_fields_and_rebuild(void **state)
{
    (void)state;
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_ROLE] = UT_STR_LIT("button");
    fields[UT__F_NAME] = UT_STR_LIT("Save");
    fields[UT__F_EL] = UT_STR_LIT("save");
    ut__entry *en = ut__entry_new(UT__E_CLICK, fields);
    assert_non_null(en);
    en->count = 3;
    /* Sized to fit: the header plus the text. */
    assert_int_equal(ut__entry_text_len(en), strlen("buttonSavesave"));
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_ROLE), "button"));
    assert_int_equal(ut__entry_field(en, UT__F_CTX).len, 0);
    ut_str repl[UT__F__COUNT] = {0};
    repl[UT__F_OUT_TEXT] = UT_STR_LIT("/next");
    assert_int_equal(ut__entry_rebuild(&en, 1u << UT__F_OUT_TEXT, repl), UT_OK);
    assert_int_equal(en->count, 3);
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_NAME), "Save"));
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_OUT_TEXT), "/next"));
    /* A failed rebuild leaves the entry as it was. */
    fail_alloc_install(1, false);
    repl[UT__F_OUT_TEXT] = UT_STR_LIT("/other");
    assert_int_equal(ut__entry_rebuild(&en, 1u << UT__F_OUT_TEXT, repl), UT_ENOMEM);
    fail_alloc_remove();
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_OUT_TEXT), "/next"));
    ut_free(en);
}

static void test_tabs_entry_field_cut_on_utf8_boundary(void **state)
{
    (void)state;
    /* A role over its maximum (redaction may lengthen text) is cut before
     * the character that does not fit. */
    char role[UT_ROLE_MAX_BYTES + 2];
    memset(role, 'r', UT_ROLE_MAX_BYTES - 1);
    memcpy(role + UT_ROLE_MAX_BYTES - 1, "\xC3\xA9", 2); /* straddles the limit */
    role[UT_ROLE_MAX_BYTES + 1] = '\0';
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_ROLE] = ut_str_cstr(role);
    ut__entry *en = ut__entry_new(UT__E_CLICK, fields);
    assert_non_null(en);
    assert_int_equal(ut__entry_field(en, UT__F_ROLE).len, UT_ROLE_MAX_BYTES - 1);
    ut_free(en);
}

/* The three short fields at their maxima: their ends are bytes, and the
 * fields after them start where they end. */
static void test_tabs_entry_short_fields_at_maxima(void **state)
{
    (void)state;
    char role[UT_ROLE_MAX_BYTES + 1], el[UT_EL_MAX_BYTES + 1], out_role[UT_ROLE_MAX_BYTES + 1];
    memset(role, 'r', UT_ROLE_MAX_BYTES);
    memset(el, 'e', UT_EL_MAX_BYTES);
    memset(out_role, 'o', UT_ROLE_MAX_BYTES);
    role[UT_ROLE_MAX_BYTES] = el[UT_EL_MAX_BYTES] = out_role[UT_ROLE_MAX_BYTES] = '\0';
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_ROLE] = ut_str_cstr(role);
    fields[UT__F_EL] = ut_str_cstr(el);
    fields[UT__F_OUT_ROLE] = ut_str_cstr(out_role);
    fields[UT__F_NAME] = UT_STR_LIT("Save");
    fields[UT__F_OUT_TEXT] = UT_STR_LIT("/next");
    ut__entry *en = ut__entry_new(UT__E_CLICK, fields);
    assert_non_null(en);
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_ROLE), role));
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_EL), el));
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_OUT_ROLE), out_role));
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_NAME), "Save"));
    assert_true(ut_str_eq_cstr(ut__entry_field(en, UT__F_OUT_TEXT), "/next"));
    assert_int_equal(ut__entry_text_len(en), 2 * UT_ROLE_MAX_BYTES + UT_EL_MAX_BYTES + 4 + 5);
    ut_free(en);
}

/* A burst's member states are flags of its members' el items: set and
 * cleared without changing what the list reads as, and kept by a rebuild. */
static void test_tabs_burst_member_flags(void **state)
{
    (void)state;
    ut_buf b = UT_BUF_INIT;
    const char *names[] = {"Active", "Draft", "Archived"};
    for (int i = 0; i < 3; i++) {
        ut__list_put(&b, ut_str_cstr(names[i]), UT_EL_MAX_BYTES);
        ut__list_put(&b, ut_str_cstr(names[i]), UT_NAME_MAX_BYTES);
    }
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_MEMBERS] = ut_buf_str(&b);
    ut__entry *en = ut__entry_new(UT__E_BURST, fields);
    assert_non_null(en);
    assert_int_equal(ut__burst_member_on(en), 0);
    ut__burst_member_set(en, 0);
    ut__burst_member_set(en, 2);
    assert_int_equal(ut__burst_member_on(en), 5);
    ut_str list = ut__entry_field(en, UT__F_MEMBERS), item;
    for (int i = 0; i < 6; i++) {
        assert_true(ut__list_next(&list, &item));
        assert_true(ut_str_eq_cstr(item, names[i / 2]));
    }
    assert_false(ut__list_next(&list, &item));
    ut_str repl[UT__F__COUNT] = {0};
    repl[UT__F_OUT_TEXT] = UT_STR_LIT("/next");
    assert_int_equal(ut__entry_rebuild(&en, 1u << UT__F_OUT_TEXT, repl), UT_OK);
    assert_int_equal(ut__burst_member_on(en), 5);
    ut__burst_member_set(en, UINT32_MAX);
    assert_int_equal(ut__burst_member_on(en), 0);
    ut_free(en);
    ut_buf_free(&b);
}

static void test_tabs_list_encoding(void **state)
{
    (void)state;
    ut_buf b = UT_BUF_INIT;
    ut__list_put(&b, UT_STR_LIT("Blue Widget"), UT_CELL_MAX_BYTES);
    ut__list_put(&b, UT_STR_LIT(""), UT_CELL_MAX_BYTES);
    ut__list_put(&b, UT_STR_LIT("toolong"), 3);
    ut_str list = ut_buf_str(&b), item;
    assert_true(ut__list_next(&list, &item));
    assert_true(ut_str_eq_cstr(item, "Blue Widget"));
    assert_true(ut__list_next(&list, &item));
    assert_int_equal(item.len, 0);
    assert_true(ut__list_next(&list, &item));
    assert_true(ut_str_eq_cstr(item, "too"));
    assert_false(ut__list_next(&list, &item));
    /* A truncated list ends instead of reading past its end. */
    ut_str cut = ut_str_from(b.data, 5);
    assert_false(ut__list_next(&cut, &item));
    ut_buf_free(&b);
}

/* The per-tab sizes that 100 000 tabs multiply (BENCHMARKS.md, "What one daemon
 * sustains"): the entry header, the tab, and the scorer, which reads the
 * engine's parameters instead of holding a copy; ut__tab_bytes counts the
 * scorer the engine makes. */
static void test_tabs_per_tab_sizes(void **state)
{
    (void)state;
    assert_true(sizeof(ut__entry) <= 56);
    assert_true(sizeof(ut__tab) <= 312);
    assert_int_equal(ut__stab_shared_size() + sizeof(ut_stab_params), ut_stab_size());
    ut_engine *e = engine_default();
    ut_event ev = ev_mutation_big("t", AT(0));
    apply_ok(e, &ev);
    const ut__tab *t = ut__tabs_find(&e->tabs, UT_STR_LIT("t"));
    assert_non_null(t);
    assert_non_null(t->stab);
    ut__tab bare = {0};
    bare.key_len = t->key_len;
    assert_int_equal(ut__tab_bytes(t) - ut__tab_bytes(&bare) - t->reorder.bytes,
                     ut__stab_shared_size() + (t->ring.slots ? t->ring.cap * sizeof(ut__entry *) : 0));
    ut_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tabs_insert_find_remove),
        cmocka_unit_test(test_tabs_key_limits),
        cmocka_unit_test(test_tabs_lru_order),
        cmocka_unit_test(test_tabs_deadline_heap),
        cmocka_unit_test(test_tabs_reserve_out_of_memory),
        cmocka_unit_test(test_tabs_ring_evicts_oldest),
        cmocka_unit_test(test_tabs_entry_fields_and_rebuild),
        cmocka_unit_test(test_tabs_entry_field_cut_on_utf8_boundary),
        cmocka_unit_test(test_tabs_entry_short_fields_at_maxima),
        cmocka_unit_test(test_tabs_burst_member_flags),
        cmocka_unit_test(test_tabs_list_encoding),
        cmocka_unit_test(test_tabs_per_tab_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

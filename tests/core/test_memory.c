/* Tests of the memory budget (ut_config.max_memory): per-tab byte
 * accounting (ut__tab_bytes, ut_engine_stats.tab_bytes) and eviction of
 * the least recently active tabs beyond the budget, with tabs whose every
 * field is at its protocol limit. */
#include "engine_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

#define TABS 60
#define EVENTS_PER_TAB 40
#define BUDGET_BYTES (UINT64_C(2) << 20)

static char fill_url[UT_URL_MAX_BYTES + 1], fill_title[UT_TITLE_MAX_BYTES + 1],
    fill_name[UT_NAME_MAX_BYTES + 1], fill_cell[UT_CELL_MAX_BYTES + 1],
    fill_text[UT_DIALOG_TEXT_MAX_BYTES + 1], fill_alert[UT_ALERT_TEXT_MAX_BYTES + 1],
    fill_role[UT_ROLE_MAX_BYTES + 1];

/* Ordinary words, which redaction leaves whole (a run of one letter
 * would become "[token]"). */
static void fill(char *buf, size_t len, char c)
{
    static const char words[] = " Blue Widget, shipped to the warehouse.";
    for (size_t i = 0; i < len; i++)
        buf[i] = i % 8 == 0 ? c : words[i % (sizeof words - 1)];
    buf[len] = '\0';
}

static int setup_fills(void **state)
{
    (void)state;
    fill(fill_url, UT_URL_MAX_BYTES, 'u');
    memcpy(fill_url, "https://x.test/", 15);
    fill(fill_title, UT_TITLE_MAX_BYTES, 't');
    fill(fill_name, UT_NAME_MAX_BYTES, 'n');
    fill(fill_cell, UT_CELL_MAX_BYTES, 'c');
    fill(fill_text, UT_DIALOG_TEXT_MAX_BYTES, 'd');
    fill(fill_alert, UT_ALERT_TEXT_MAX_BYTES, 'a');
    memset(fill_role, 'r', UT_ROLE_MAX_BYTES);
    return 0;
}

/* Event `i` of a tab, every field at its limit: navigations, clicks in
 * full rows, dialogs with full snapshots, alerts. */
static ut_event event_at_limits(const char *tab, unsigned i, int64_t t_us, char *el, size_t el_cap)
{
    snprintf(el, el_cap, "%0*u", UT_EL_MAX_BYTES - 1, i);
    ut_event ev;
    switch (i % 4) {
    case 0: ev = ev_nav(tab, t_us, fill_url, fill_title, UT_NAV_PUSH); break;
    case 1:
        ev = ev_click_in(tab, t_us, fill_role, fill_name, el, UT_CTX_ROW, fill_cell);
        ev.ctx.ncells = UT_CTX_CELLS_MAX;
        for (uint32_t c = 0; c < UT_CTX_CELLS_MAX; c++)
            ev.ctx.cells[c] = ut_str_cstr(fill_cell);
        break;
    case 2: ev = ev_dialog(tab, t_us, UT_DIALOG_OPEN, fill_name, el, fill_text); break;
    default: ev = ev_alert(tab, t_us, fill_alert, UT_LEVEL_ERROR); break;
    }
    return ev;
}

/* The engine's total must be the sum of what its tabs hold. */
static void check_accounting(const ut_engine *e, ut_engine_stats *st)
{
    ut_engine_stats_get(e, st);
    uint64_t sum = 0;
    for (const ut__tab *t = e->tabs.lru_head; t; t = t->lru_next) {
        assert_int_equal(t->bytes, ut__tab_bytes(t));
        sum += t->bytes;
    }
    assert_int_equal(st->tab_bytes, sum);
}

/* Feeds TABS tabs of EVENTS_PER_TAB events at field limits into an engine
 * with the budget `max_memory`; checks the accounting and, with a budget,
 * that the tabs never hold more than it. Returns the final stats. */
static ut_engine_stats run_tabs(uint64_t max_memory, ut_engine **out)
{
    ut_config cfg;
    config_in_order(&cfg);
    cfg.max_memory = max_memory;
    ut_engine *e = engine_with(&cfg);
    ut_engine_stats st;
    int64_t t_ms = 0;
    for (unsigned tab = 0; tab < TABS; tab++) {
        char key[16], el[UT_EL_MAX_BYTES + 1];
        snprintf(key, sizeof key, "tab-%u", tab);
        for (unsigned i = 0; i < EVENTS_PER_TAB; i++) {
            ut_event ev = event_at_limits(key, i, AT(t_ms), el, sizeof el);
            t_ms += 50;
            apply_ok(e, &ev);
            check_accounting(e, &st);
            if (max_memory)
                assert_true(st.tab_bytes <= max_memory);
        }
    }
    *out = e;
    return st;
}

static void test_memory_budget_evicts_least_recent_tabs(void **state)
{
    (void)state;
    ut_engine *e;
    ut_engine_stats st = run_tabs(BUDGET_BYTES, &e);
    assert_true(st.evicted_memory > 0);
    assert_int_equal(st.evicted_cap, 0);
    assert_int_equal(st.evicted_idle, 0);
    /* The oldest tabs went, the newest stayed. */
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("tab-0"), &info), UT_ENOENT);
    char last[16];
    snprintf(last, sizeof last, "tab-%u", TABS - 1);
    assert_int_equal(ut_engine_tab_info(e, ut_str_cstr(last), &info), UT_OK);
    assert_int_equal(st.tabs + st.evicted_memory, TABS);
    /* Every tab left holds its whole ring: the budget evicts tabs, it does
     * not thin them. */
    assert_int_equal(info.events, UT_RING_DEFAULT);
    ut_engine_free(e);
}

/* Without the budget the same tabs hold several times as much: the budget
 * is what bounds them above. */
static void test_memory_without_budget_grows(void **state)
{
    (void)state;
    ut_engine *e;
    ut_engine_stats st = run_tabs(0, &e);
    assert_int_equal(st.evicted_memory, 0);
    assert_int_equal(st.tabs, TABS);
    assert_true(st.tab_bytes > 2 * BUDGET_BYTES);
    /* Closing every tab gives all of it back. */
    for (unsigned tab = 0; tab < TABS; tab++) {
        char key[16];
        snprintf(key, sizeof key, "tab-%u", tab);
        ut_event ev = ev_close(key, AT(1000000));
        apply_ok(e, &ev);
    }
    ut_engine_stats_get(e, &st);
    assert_int_equal(st.tabs, 0);
    assert_int_equal(st.tab_bytes, 0);
    ut_engine_free(e);
}

/* One tab alone may exceed a budget smaller than itself: it is never
 * evicted for the event that just went to it. */
static void test_memory_keeps_the_active_tab(void **state)
{
    (void)state;
    ut_config cfg;
    config_in_order(&cfg);
    cfg.max_memory = UT_MEMORY_MIN_BYTES;
    cfg.ring_size = UT_RING_MAX;
    ut_engine *e = engine_with(&cfg);
    char el[UT_EL_MAX_BYTES + 1];
    ut_engine_stats st;
    for (unsigned i = 0; i < 600; i++) {
        ut_event ev = event_at_limits("big", i, AT(i * 50), el, sizeof el);
        apply_ok(e, &ev);
    }
    check_accounting(e, &st);
    assert_true(st.tab_bytes > UT_MEMORY_MIN_BYTES);
    assert_int_equal(st.tabs, 1);
    ut_event other = ev_click("small", AT(600 * 50), "button", "Go", "go");
    apply_ok(e, &other);
    ut_engine_stats_get(e, &st);
    assert_int_equal(st.evicted_memory, 1);
    assert_int_equal(st.tabs, 1);
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("small"), &info), UT_OK);
    ut_engine_free(e);
}

static void test_memory_config_range(void **state)
{
    (void)state;
    ut_config cfg;
    ut_config_defaults(&cfg);
    assert_int_equal(cfg.max_memory, UT_MEMORY_DEFAULT_BYTES);
    cfg.max_memory = UT_MEMORY_MIN_BYTES - 1;
    ut_engine *e = NULL;
    char err[256];
    assert_int_equal(ut_engine_new(&cfg, &e, err, sizeof err), UT_EINVAL);
    assert_null(e);
    assert_non_null(strstr(err, "memory budget"));
    cfg.max_memory = 0;
    assert_int_equal(ut_engine_new(&cfg, &e, err, sizeof err), UT_OK);
    ut_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_budget_evicts_least_recent_tabs),
        cmocka_unit_test(test_memory_without_budget_grows),
        cmocka_unit_test(test_memory_keeps_the_active_tab),
        cmocka_unit_test(test_memory_config_range),
    };
    return cmocka_run_group_tests(tests, setup_fills, NULL);
}

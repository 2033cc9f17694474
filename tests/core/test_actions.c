/* Tests of the pending user action (src/core/actions.c) through the
 * engine, and of the wait after an action (ut_engine_after, the answer of
 * GET /v1/tabs/{tab}/stable?after=): a click starts the transition, the
 * page reads "changing" until what it caused has settled (or the dead-click
 * timeout passed with nothing), and the wait is race-free whether it comes
 * before the first mutation or before the action's event itself. */
#include "engine_test_util.h"

#include <stdlib.h>
#include <string.h>

static ut_page_state page_of(const ut_engine *e, const char *tab)
{
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, ut_str_cstr(tab), &info), UT_OK);
    return info.page.state;
}

static ut_after_state after_of(const ut_engine *e, const char *tab, ut_after q, int64_t now, int64_t *recheck)
{
    ut_after_state st;
    int64_t r;
    assert_int_equal(ut_engine_after(e, ut_str_cstr(tab), &q, now, &st, &r), UT_OK);
    if (recheck)
        *recheck = r;
    return st;
}

static ut_after by_seq(uint64_t seq)
{
    return (ut_after){.by = UT_AFTER_SEQ, .seq = seq};
}

static ut_event with_seq(ut_event ev, uint64_t seq)
{
    ev.has_seq = true;
    ev.seq = seq;
    return ev;
}

typedef struct marks_seen {
    int stable;
    int64_t last_stable_us;
} marks_seen;

static void on_mark(void *ud, ut_str tab, const ut_mark *m)
{
    (void)tab;
    marks_seen *ms = ud;
    if (m->state == UT_PAGE_STABLE) {
        ms->stable++;
        ms->last_stable_us = m->time_us;
    }
}

/* A tab "t" whose page rendered at 0 and was marked stable: events 1, 2. */
static ut_engine *settled_page(marks_seen *seen)
{
    ut_engine *e = engine_default();
    ut_observer obs = {.on_mark = on_mark, .ud = seen};
    ut_engine_set_observer(e, &obs);
    ut_event nav = with_seq(ev_nav("t", AT(0), "https://shop.example/", "Shop", UT_NAV_LOAD), 1);
    apply_ok(e, &nav);
    ut_event m = with_seq(ev_mutation_big("t", AT(10)), 2);
    apply_ok(e, &m);
    ut_engine_advance(e, AT(1000));
    assert_int_equal(page_of(e, "t"), UT_PAGE_STABLE);
    assert_int_equal(seen->stable, 1);
    return e;
}

static void test_actions_click_then_delayed_dialog(void **state)
{
    (void)state;
    marks_seen seen = {0};
    ut_engine *e = settled_page(&seen);
    /* The wait comes first, before the click's event: unseen. */
    assert_int_equal(after_of(e, "t", by_seq(3), AT(1500), NULL), UT_AFTER_UNSEEN);
    ut_event click = with_seq(ev_click("t", AT(2000), "button", "Open", "open"), 3);
    apply_ok(e, &click);
    /* The click puts the page in the pending state at once, before any
     * mutation: the old answer ("stable since the load") is not given. */
    assert_int_equal(page_of(e, "t"), UT_PAGE_CHANGING);
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, ut_str_cstr("t"), &info), UT_OK);
    assert_true(info.page.since_us == AT(2000)); /* changing since the click */
    assert_int_equal(after_of(e, "t", by_seq(3), AT(2000), NULL), UT_AFTER_PENDING);
    ut_engine_advance(e, AT(2150));
    assert_int_equal(after_of(e, "t", by_seq(3), AT(2150), NULL), UT_AFTER_PENDING);
    /* The dialog renders 200 ms after the click. */
    ut_event dialog = with_seq(ev_mutation_big("t", AT(2200)), 4);
    apply_ok(e, &dialog);
    assert_int_equal(after_of(e, "t", by_seq(3), AT(2200), NULL), UT_AFTER_PENDING);
    ut_engine_advance(e, ut_engine_next_deadline(e));
    while (seen.stable < 2 && ut_engine_next_deadline(e) < AT(5000))
        ut_engine_advance(e, ut_engine_next_deadline(e));
    assert_int_equal(seen.stable, 2);
    assert_true(seen.last_stable_us > AT(2200));
    assert_int_equal(after_of(e, "t", by_seq(3), AT(5000), NULL), UT_AFTER_SETTLED);
    assert_int_equal(page_of(e, "t"), UT_PAGE_STABLE);
    /* A plain wait, and a wait for an earlier event, are settled too. */
    assert_int_equal(after_of(e, "t", (ut_after){.by = UT_AFTER_NONE}, AT(5000), NULL), UT_AFTER_SETTLED);
    assert_int_equal(after_of(e, "t", by_seq(1), AT(5000), NULL), UT_AFTER_SETTLED);
    ut_engine_free(e);
}

static void test_actions_dead_click_settles_at_timeout(void **state)
{
    (void)state;
    marks_seen seen = {0};
    ut_engine *e = settled_page(&seen);
    ut_event click = with_seq(ev_click("t", AT(3000), "button", "Nothing", "nothing"), 3);
    apply_ok(e, &click);
    int64_t dead = AT(3000 + UT_DEAD_CLICK_MS);
    assert_true(ut_engine_next_deadline(e) <= dead);
    ut_engine_advance(e, dead - 1);
    assert_int_equal(after_of(e, "t", by_seq(3), dead - 1, NULL), UT_AFTER_PENDING);
    ut_engine_advance(e, dead);
    assert_int_equal(after_of(e, "t", by_seq(3), dead, NULL), UT_AFTER_SETTLED);
    assert_int_equal(seen.stable, 1); /* no mark: nothing changed */
    ut_engine_free(e);
}

/* A response under the scorer's threshold (a dialog event alone) leaves
 * the scorer stable: the page settles quiet_ms after it. */
static void test_actions_small_response_settles_after_quiet(void **state)
{
    (void)state;
    marks_seen seen = {0};
    ut_engine *e = settled_page(&seen);
    ut_event click = with_seq(ev_click("t", AT(3000), "button", "Help", "help"), 3);
    apply_ok(e, &click);
    ut_event dlg = with_seq(ev_dialog("t", AT(3100), UT_DIALOG_OPEN, "Help", "help-dlg", "Some help"), 4);
    apply_ok(e, &dlg);
    const ut_config *cfg = ut_engine_config(e);
    int64_t settle = AT(3100) + (int64_t)cfg->stab.quiet_ms * 1000;
    ut_engine_advance(e, settle - 1);
    assert_int_equal(page_of(e, "t"), UT_PAGE_CHANGING);
    ut_engine_advance(e, settle);
    assert_int_equal(page_of(e, "t"), UT_PAGE_STABLE);
    assert_true(settle < AT(3000 + UT_DEAD_CLICK_MS));
    ut_engine_free(e);
}

/* The change a checkbox click makes answers the click; it is no new
 * action waiting for a response of its own. */
static void test_actions_change_answers_its_click(void **state)
{
    (void)state;
    marks_seen seen = {0};
    ut_engine *e = settled_page(&seen);
    ut_event click = with_seq(ev_click("t", AT(3000), "checkbox", "Active", "act"), 3);
    apply_ok(e, &click);
    ut_event ch = with_seq(ev_change("t", AT(3020), "checkbox", "Active", "act"), 4);
    ch.has_checked = ch.checked = true;
    apply_ok(e, &ch);
    const ut_config *cfg = ut_engine_config(e);
    ut_engine_advance(e, AT(3020) + (int64_t)cfg->stab.quiet_ms * 1000);
    assert_int_equal(after_of(e, "t", by_seq(4), AT(4000), NULL), UT_AFTER_SETTLED);
    ut_engine_free(e);
}

static void test_actions_after_ms(void **state)
{
    (void)state;
    marks_seen seen = {0};
    ut_engine *e = settled_page(&seen);
    ut_after q = {.by = UT_AFTER_TIME, .time_us = AT(2000)};
    int64_t recheck;
    /* No action at or after 2000 yet: unseen, and looked at again when
     * the dead-click timeout has passed it. */
    assert_int_equal(after_of(e, "t", q, AT(2000), &recheck), UT_AFTER_UNSEEN);
    assert_true(recheck == AT(2000 + UT_DEAD_CLICK_MS));
    assert_int_equal(after_of(e, "t", q, recheck - 1, NULL), UT_AFTER_UNSEEN);
    assert_int_equal(after_of(e, "t", q, recheck, NULL), UT_AFTER_SETTLED);
    /* The action's event arrives: pending until the page settled. */
    ut_event click = with_seq(ev_click("t", AT(2001), "button", "Open", "open"), 3);
    apply_ok(e, &click);
    assert_int_equal(after_of(e, "t", q, AT(2001), NULL), UT_AFTER_PENDING);
    ut_engine_advance(e, AT(2001 + UT_DEAD_CLICK_MS));
    assert_int_equal(after_of(e, "t", q, AT(2001 + UT_DEAD_CLICK_MS), NULL), UT_AFTER_SETTLED);
    ut_engine_free(e);
}

/* The same events give the same settling whether the engine is advanced
 * often (a daemon's timers) or only by the events (a replay). */
static void test_actions_replay_equals_live(void **state)
{
    (void)state;
    int64_t settled_at[2];
    for (int run = 0; run < 2; run++) {
        marks_seen seen = {0};
        ut_engine *e = settled_page(&seen);
        ut_event click = with_seq(ev_click("t", AT(3000), "button", "Open", "open"), 3);
        apply_ok(e, &click);
        if (run == 0)
            for (int ms = 3000; ms < 3150; ms += 7)
                ut_engine_advance(e, AT(ms));
        ut_event m = with_seq(ev_mutation_big("t", AT(3150)), 4);
        apply_ok(e, &m);
        int64_t t = AT(3150);
        while (page_of(e, "t") != UT_PAGE_STABLE) {
            t = run == 0 ? t + 1000 : ut_engine_next_deadline(e);
            ut_engine_advance(e, t);
        }
        settled_at[run] = seen.last_stable_us;
        ut_engine_free(e);
    }
    assert_true(settled_at[0] == settled_at[1]);
}

/* A tab that sends no mutation records cannot tell when its page settles:
 * its clicks leave the page as it reads (stable), not changing for ever. */
static void test_actions_tab_without_mutations(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event click = with_seq(ev_click("q", AT(0), "button", "Go", "go"), 1);
    apply_ok(e, &click);
    assert_int_equal(page_of(e, "q"), UT_PAGE_STABLE);
    assert_int_equal(after_of(e, "q", by_seq(1), AT(0), NULL), UT_AFTER_SETTLED);
    ut_after q = by_seq(1);
    ut_after_state st;
    int64_t r;
    assert_int_equal(ut_engine_after(e, ut_str_cstr("nope"), &q, AT(0), &st, &r), UT_ENOENT);
    ut_engine_free(e);
}

static void test_actions_after_json(void **state)
{
    (void)state;
    ut_stab_status st = {.state = UT_PAGE_STABLE, .since_us = AT(0), .marks = 1, .has_mutations = true};
    static const struct {
        ut_page_state page;
        ut_after_state after;
        const char *prefix;
        const char *suffix;
    } cases[] = {
        {UT_PAGE_STABLE, UT_AFTER_SETTLED, "{\"stable\":true,\"state\":\"stable\"", ",\"after\":\"settled\"}"},
        {UT_PAGE_STABLE, UT_AFTER_UNSEEN, "{\"stable\":false,\"state\":\"stable\"", ",\"after\":\"unseen\"}"},
        {UT_PAGE_CHANGING, UT_AFTER_PENDING, "{\"stable\":false,\"state\":\"changing\"",
         ",\"after\":\"pending\"}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st.state = cases[i].page;
        ut_buf b = UT_BUF_INIT;
        assert_int_equal(ut_page_state_after_json(&st, cases[i].after, &b), UT_OK);
        ut_buf_append(&b, "", 1);
        assert_true(strncmp(b.data, cases[i].prefix, strlen(cases[i].prefix)) == 0);
        assert_string_equal(b.data + strlen(b.data) - strlen(cases[i].suffix), cases[i].suffix);
        ut_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_actions_click_then_delayed_dialog),
        cmocka_unit_test(test_actions_dead_click_settles_at_timeout),
        cmocka_unit_test(test_actions_small_response_settles_after_quiet),
        cmocka_unit_test(test_actions_change_answers_its_click),
        cmocka_unit_test(test_actions_after_ms),
        cmocka_unit_test(test_actions_replay_equals_live),
        cmocka_unit_test(test_actions_tab_without_mutations),
        cmocka_unit_test(test_actions_after_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

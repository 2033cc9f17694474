/* Tests of the engine: configuration, tabs, rings, debounce, rage clicks,
 * bursts, dialogs, navigations, outcomes, observers, eviction, the Blue
 * Widget fixture and the out-of-memory walk. */
#include "engine_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

#define LINE_MAX_BYTES 4096

static void assert_line(const ut_engine *e, const char *tab, unsigned i, const char *expected)
{
    char *trace = trace_text(e, tab);
    char line[LINE_MAX_BYTES];
    if (!trace_line(trace, i, line, sizeof line))
        fail_msg("no event line %u in:\n%s", i, trace);
    if (strcmp(line, expected) != 0)
        fail_msg("line %u is\n  %s\nexpected\n  %s\nin:\n%s", i, line, expected, trace);
    free(trace);
}

/* Entries in the tab's ring (a text trace may print several on a line). */
static unsigned lines_of(const ut_engine *e, const char *tab)
{
    ut_tab_info info;
    if (ut_engine_tab_info(e, ut_str_cstr(tab), &info) != UT_OK)
        return 0;
    return info.events;
}

static unsigned text_lines_of(const ut_engine *e, const char *tab)
{
    char *trace = trace_text(e, tab);
    unsigned n = trace_event_lines(trace);
    free(trace);
    return n;
}

/* ---- Configuration ---- */

static void test_engine_config_defaults(void **state)
{
    (void)state;
    ut_config c;
    memset(&c, 0xA5, sizeof c);
    ut_config_defaults(&c);
    assert_int_equal(c.ring_size, UT_RING_DEFAULT);
    assert_int_equal(c.max_tabs, UT_TABS_DEFAULT);
    assert_int_equal(c.idle_ms, UT_IDLE_DEFAULT_MS);
    assert_int_equal(c.debounce_ms, UT_DEBOUNCE_DEFAULT_MS);
    assert_false(c.reset_on_load);
    assert_null(c.redact_patterns);
    assert_int_equal(c.n_redact_patterns, 0);
    ut_stab_params p;
    ut_stab_params_defaults(&p);
    assert_int_equal(c.stab.model, p.model);
    assert_true(c.stab.enter_threshold == p.enter_threshold);
    assert_true(c.stab.exit_threshold == p.exit_threshold);
    assert_int_equal(c.stab.quiet_ms, p.quiet_ms);
    assert_int_equal(c.stab.busy_cap_ms, p.busy_cap_ms);
}

/* Each case of test_engine_config_rejects_out_of_range states its own
 * change to the defaults, beside its name and its expected answer. */
static const char *const bad_pattern[] = {"(unclosed"};
static const char *const many_patterns[UT_REDACT_PATTERNS_MAX + 1] = {0};
static void ring_0(ut_config *c) { c->ring_size = 0; }
static void ring_1001(ut_config *c) { c->ring_size = 1001; }
static void ring_1(ut_config *c) { c->ring_size = 1; }
static void ring_1000(ut_config *c) { c->ring_size = 1000; }
static void tabs_0(ut_config *c) { c->max_tabs = 0; }
static void tabs_over(ut_config *c) { c->max_tabs = 10000001; }
static void idle_999(ut_config *c) { c->idle_ms = 999; }
static void debounce_10001(ut_config *c) { c->debounce_ms = 10001; }
static void debounce_10000(ut_config *c) { c->debounce_ms = 10000; }
static void patterns_65(ut_config *c)
{
    c->redact_patterns = many_patterns;
    c->n_redact_patterns = 65;
}
static void pattern_bad(ut_config *c)
{
    c->redact_patterns = bad_pattern;
    c->n_redact_patterns = 1;
}
static void stab_threshold_negative(ut_config *c) { c->stab.enter_threshold = -1; }

static void test_engine_config_rejects_out_of_range(void **state)
{
    (void)state;
    _Static_assert(UT_REDACT_PATTERNS_MAX + 1 == 65, "patterns_65 names the count");
    static const struct {
        const char *what;
        void (*apply)(ut_config *c);
        ut_status expect;
        const char *reason;
    } cases[] = {
        {"ring 0", ring_0, UT_EINVAL, "ring size is 0 entries, out of range: use 1 to 1000 entries"},
        {"ring 1001", ring_1001, UT_EINVAL, "ring size is 1001 entries"},
        {"ring 1", ring_1, UT_OK, ""},
        {"ring 1000", ring_1000, UT_OK, ""},
        {"tabs 0", tabs_0, UT_EINVAL, "tab cap is 0 tabs"},
        {"tabs max+1", tabs_over, UT_EINVAL, "tab cap is 10000001 tabs"},
        {"idle 999", idle_999, UT_EINVAL, "idle time is 999 ms"},
        {"debounce 10001", debounce_10001, UT_EINVAL, "debounce time is 10001 ms"},
        {"debounce 10000", debounce_10000, UT_OK, ""},
        {"patterns 65", patterns_65, UT_EINVAL, "redaction pattern count is 65"},
        {"pattern bad", pattern_bad, UT_EINVAL, "pattern"},
        {"stab threshold", stab_threshold_negative, UT_EINVAL,
         "stability parameter enter_threshold out of range: enter_threshold must be a number from above 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_config c;
        ut_config_defaults(&c);
        cases[i].apply(&c);
        ut_engine *e = NULL;
        char err[256] = "unset";
        ut_status st = ut_engine_new(&c, &e, err, sizeof err);
        if (st != cases[i].expect)
            fail_msg("%s: got %s (%s)", cases[i].what, ut_status_str(st), err);
        if (st == UT_OK) {
            assert_non_null(e);
            assert_int_equal(ut_engine_config(e)->ring_size, c.ring_size);
        } else {
            assert_null(e);
            if (!strstr(err, cases[i].reason))
                fail_msg("%s: reason '%s' lacks '%s'", cases[i].what, err, cases[i].reason);
        }
        ut_engine_free(e);
    }
}

static void test_engine_rejects_invalid_events(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    char long_tab[UT_TAB_MAX_BYTES + 2];
    memset(long_tab, 'x', sizeof long_tab - 1);
    long_tab[sizeof long_tab - 1] = '\0';
    ut_event ev = ev_click("", AT(0), "button", "A", "a");
    assert_int_equal(ut_engine_apply(e, &ev), UT_EINVAL);
    ev = ev_click(long_tab, AT(0), "button", "A", "a");
    assert_int_equal(ut_engine_apply(e, &ev), UT_EINVAL);
    long_tab[UT_TAB_MAX_BYTES] = '\0';
    ev = ev_click(long_tab, AT(0), "button", "A", "a");
    assert_int_equal(ut_engine_apply(e, &ev), UT_OK);
    ev.kind = UT_KIND__COUNT;
    assert_int_equal(ut_engine_apply(e, &ev), UT_EINVAL);
    ut_engine_free(e);
}

/* ---- Ring ---- */

static void test_engine_ring_keeps_last_entries(void **state)
{
    (void)state;
    ut_config c;
    config_in_order(&c);
    c.ring_size = 3;
    ut_engine *e = engine_with(&c);
    const char *names[] = {"One", "Two", "Three", "Four", "Five"};
    const char *els[] = {"e1", "e2", "e3", "e4", "e5"};
    for (int i = 0; i < 5; i++) {
        ut_event ev = ev_click("t", AT(i * 5000), "button", names[i], els[i]);
        apply_ok(e, &ev);
    }
    assert_int_equal(lines_of(e, "t"), 3);
    assert_line(e, "t", 0, "click button \"Five\"");
    assert_line(e, "t", 2, "click button \"Three\"");
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("t"), &info), UT_OK);
    assert_int_equal(info.events, 3);
    ut_engine_free(e);
}

static void test_engine_ring_size_one(void **state)
{
    (void)state;
    ut_config c;
    config_in_order(&c);
    c.ring_size = UT_RING_MIN;
    ut_engine *e = engine_with(&c);
    ut_event ev = ev_click("t", AT(0), "button", "A", "a");
    apply_ok(e, &ev);
    /* The navigation is the click's outcome and evicts it from the ring. */
    ev = ev_nav("t", AT(200), "https://x.test/next", "Next", UT_NAV_PUSH);
    apply_ok(e, &ev);
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0, "navigate (in-app) /next \"Next\"");
    ut_engine_free(e);
}

static void test_engine_nav_entries_and_reset_on_load(void **state)
{
    (void)state;
    for (int reset = 0; reset <= 1; reset++) {
        ut_config c;
        config_in_order(&c);
        c.reset_on_load = reset;
        ut_engine *e = engine_with(&c);
        ut_event ev = ev_nav("t", AT(0), "https://shop.test/catalog?page=2#top", "Catalog", UT_NAV_LOAD);
        apply_ok(e, &ev);
        ev = ev_click("t", AT(5000), "button", "Apply", "apply");
        apply_ok(e, &ev);
        ev = ev_nav("t", AT(20000), "https://shop.test/help", "Help", UT_NAV_PUSH);
        apply_ok(e, &ev);
        /* An in-app navigation never resets the ring. */
        assert_int_equal(lines_of(e, "t"), 3);
        ev = ev_nav("t", AT(40000), "https://shop.test/", "Home", UT_NAV_LOAD);
        apply_ok(e, &ev);
        assert_int_equal(lines_of(e, "t"), reset ? 1 : 4);
        assert_line(e, "t", 0, "navigate / \"Home\"");
        if (!reset)
            assert_line(e, "t", 3, "navigate /catalog?page= \"Catalog\"");
        ut_engine_free(e);
    }
}

static void test_engine_nav_how_labels(void **state)
{
    (void)state;
    struct {
        ut_nav_how how;
        const char *line;
    } cases[] = {
        {UT_NAV_LOAD, "navigate /a \"A\""},
        {UT_NAV_RELOAD, "navigate (reload) /a \"A\""},
        {UT_NAV_PUSH, "navigate (in-app) /a \"A\""},
        {UT_NAV_REPLACE, "navigate (in-app redirect) /a \"A\""},
        {UT_NAV_POP, "navigate (back/forward) /a \"A\""},
        {UT_NAV_HASH, "navigate (in-page anchor) /a \"A\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_engine *e = engine_default();
        ut_event ev = ev_nav("t", AT(0), "http://h.test/a", "A", cases[i].how);
        apply_ok(e, &ev);
        assert_line(e, "t", 0, cases[i].line);
        ut_engine_free(e);
    }
}

/* ---- Debounce and rage ---- */

static void test_engine_debounce_boundary(void **state)
{
    (void)state;
    for (int late = 0; late <= 1; late++) {
        ut_engine *e = engine_default();
        ut_event ev = ev_click("t", AT(0), "button", "Save", "save");
        apply_ok(e, &ev);
        ev.time_us = AT(UT_DEBOUNCE_DEFAULT_MS + late);
        apply_ok(e, &ev);
        assert_int_equal(lines_of(e, "t"), late ? 2 : 1);
        /* A double click reads as one click; two entries print on one line. */
        assert_line(e, "t", 0, late ? "click button \"Save\" (also :30)" : "click button \"Save\"");
        ut_engine_free(e);
    }
}

static void test_engine_debounce_configurable(void **state)
{
    (void)state;
    ut_config c;
    config_in_order(&c);
    c.debounce_ms = 0;
    ut_engine *e = engine_with(&c);
    ut_event ev = ev_click("t", AT(0), "button", "Save", "save");
    apply_ok(e, &ev);
    ev.time_us = AT(1);
    apply_ok(e, &ev);
    assert_int_equal(lines_of(e, "t"), 2);
    ut_engine_free(e);
}

static void test_engine_rage_click(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    for (int i = 0; i < 4; i++) {
        ut_event ev = ev_click("t", AT(i * 200), "button", "Save", "save");
        apply_ok(e, &ev);
    }
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0, "click \xC3\x97" "4 button \"Save\" (rage click)");
    ut_engine_free(e);
}

static void test_engine_rage_folds_separate_entries(void **state)
{
    (void)state;
    /* 400 ms apart: not debounced, but three within a second are rage. */
    ut_engine *e = engine_default();
    ut_event ev = ev_click("t", AT(0), "button", "Save", "save");
    apply_ok(e, &ev);
    ev.time_us = AT(400);
    apply_ok(e, &ev);
    assert_int_equal(lines_of(e, "t"), 2);
    ev.time_us = AT(800);
    apply_ok(e, &ev);
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0, "click \xC3\x97" "3 button \"Save\" (rage click)");
    ut_engine_free(e);
}

static void test_engine_rage_threshold(void **state)
{
    (void)state;
    /* Three clicks spread over more than the rage window are not rage. */
    ut_engine *e = engine_default();
    int64_t times[] = {0, 400, UT_RAGE_WINDOW_MS + 401};
    for (int i = 0; i < 3; i++) {
        ut_event ev = ev_click("t", AT(times[i]), "button", "Save", "save");
        apply_ok(e, &ev);
    }
    assert_int_equal(lines_of(e, "t"), 3);
    assert_line(e, "t", 0, "click button \"Save\" (also :30, :30)");
    /* Two clicks are never rage, however fast. */
    ut_event ev = ev_click("u", AT(0), "button", "Go", "go");
    apply_ok(e, &ev);
    ev.time_us = AT(UT_RAGE_WINDOW_MS / 2);
    apply_ok(e, &ev);
    char *trace = trace_text(e, "u");
    assert_null(strstr(trace, "rage"));
    free(trace);
    ut_engine_free(e);
}

/* ---- Bursts ---- */

static const char *const chip_names[] = {"Active", "Draft", "Retired", "Archived", "Pending",
                                         "Rejected", "Review", "Sold"};
static const char *const chip_els[] = {"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"};

static void click_chips(ut_engine *e, const char *tab, int n, int64_t start_ms, int64_t gap_ms)
{
    for (int i = 0; i < n; i++) {
        ut_event ev = ev_click_in(tab, AT(start_ms + i * gap_ms), "checkbox", chip_names[i],
                                  chip_els[i], UT_CTX_GROUP, "Lifecycle filter");
        ev.state_set = UT_STATE_CHECKED;
        ev.state_on = UT_STATE_CHECKED;
        apply_ok(e, &ev);
    }
}

static void test_engine_burst_coalesces(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    click_chips(e, "t", 8, 0, 500);
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0,
                "clicked 8\xC3\x97 checkbox (checked) (group: Lifecycle filter): \"Active\", \"Draft\", "
                "\"Retired\" \xE2\x80\xA6 (+5 more)");
    ut_engine_free(e);
}

static void test_engine_burst_threshold(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    click_chips(e, "t", UT_BURST_MIN_CLICKS - 1, 0, 500);
    assert_int_equal(lines_of(e, "t"), UT_BURST_MIN_CLICKS - 1);
    assert_line(e, "t", 0, "click checkbox \"Draft\" (checked) (group: Lifecycle filter)");
    click_chips(e, "u", UT_BURST_MIN_CLICKS, 0, 500);
    assert_int_equal(lines_of(e, "u"), 1);
    assert_line(e, "u", 0,
                "clicked 3\xC3\x97 checkbox (checked) (group: Lifecycle filter): \"Active\", \"Draft\", "
                "\"Retired\"");
    ut_engine_free(e);
}

static void test_engine_burst_window(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    click_chips(e, "in", 3, 0, UT_BURST_WINDOW_MS);
    assert_int_equal(lines_of(e, "in"), 1);
    click_chips(e, "out", 3, 0, UT_BURST_WINDOW_MS + 1);
    assert_int_equal(lines_of(e, "out"), 3);
    ut_engine_free(e);
}

static void test_engine_burst_needs_same_role_and_context(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    /* Another group's name breaks the run. */
    ut_event a = ev_click_in("t", AT(0), "checkbox", "A", "a", UT_CTX_GROUP, "One");
    ut_event b = ev_click_in("t", AT(100), "checkbox", "B", "b", UT_CTX_GROUP, "Two");
    ut_event c = ev_click_in("t", AT(200), "checkbox", "C", "c", UT_CTX_GROUP, "Two");
    apply_ok(e, &a), apply_ok(e, &b), apply_ok(e, &c);
    assert_int_equal(lines_of(e, "t"), 3);
    /* Another role breaks it. */
    a = ev_click_in("r", AT(0), "checkbox", "A", "a", UT_CTX_TOOLBAR, "T");
    b = ev_click_in("r", AT(100), "button", "B", "b", UT_CTX_TOOLBAR, "T");
    c = ev_click_in("r", AT(200), "checkbox", "C", "c", UT_CTX_TOOLBAR, "T");
    apply_ok(e, &a), apply_ok(e, &b), apply_ok(e, &c);
    assert_int_equal(lines_of(e, "r"), 3);
    /* Rows are not burst contexts. */
    a = ev_click_in("w", AT(0), "link", "A", "a", UT_CTX_ROW, NULL);
    b = ev_click_in("w", AT(100), "link", "B", "b", UT_CTX_ROW, NULL);
    c = ev_click_in("w", AT(200), "link", "C", "c", UT_CTX_ROW, NULL);
    apply_ok(e, &a), apply_ok(e, &b), apply_ok(e, &c);
    assert_int_equal(lines_of(e, "w"), 3);
    /* Elements must be distinct: A, B, A is not a burst of three. */
    a = ev_click_in("d", AT(0), "menuitem", "A", "a", UT_CTX_MENU, "M");
    b = ev_click_in("d", AT(400), "menuitem", "B", "b", UT_CTX_MENU, "M");
    c = ev_click_in("d", AT(800), "menuitem", "A", "a", UT_CTX_MENU, "M");
    apply_ok(e, &a), apply_ok(e, &b), apply_ok(e, &c);
    assert_int_equal(lines_of(e, "d"), 3);
    /* A list context is one. */
    a = ev_click_in("l", AT(0), "option", "A", "a", UT_CTX_LIST, "L");
    b = ev_click_in("l", AT(100), "option", "B", "b", UT_CTX_LIST, "L");
    c = ev_click_in("l", AT(200), "option", "C", "c", UT_CTX_LIST, "L");
    apply_ok(e, &a), apply_ok(e, &b), apply_ok(e, &c);
    assert_int_equal(lines_of(e, "l"), 1);
    ut_engine_free(e);
}

static void test_engine_burst_does_not_flush_ring(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_nav("t", AT(0), "https://shop.test/catalog", "Catalog", UT_NAV_LOAD);
    apply_ok(e, &ev);
    char names[19][16], els[19][16];
    for (int i = 0; i < 19; i++) {
        snprintf(names[i], sizeof names[i], "Chip %d", i + 1);
        snprintf(els[i], sizeof els[i], "chip-%d", i + 1);
        ev = ev_click_in("t", AT(5000 + i * 300), "button", names[i], els[i], UT_CTX_TOOLBAR,
                         "Active filters");
        apply_ok(e, &ev);
    }
    assert_int_equal(lines_of(e, "t"), 2);
    assert_line(e, "t", 1, "navigate /catalog \"Catalog\"");
    assert_line(e, "t", 0,
                "clicked 19\xC3\x97 button (toolbar: Active filters): \"Chip 1\", \"Chip 2\", "
                "\"Chip 3\" \xE2\x80\xA6 (+16 more)");
    ut_engine_free(e);
}

static void test_engine_burst_members_cap(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    enum { N = UT_BURST_MEMBERS_MAX + 8 };
    char names[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i);
        ut_event ev = ev_click_in("t", AT(i * 100), "checkbox", names[i], names[i], UT_CTX_GROUP, "G");
        apply_ok(e, &ev);
    }
    assert_int_equal(lines_of(e, "t"), 1);
    char *json = trace_of(e, "t", (ut_trace_opts){UT_TRACE_JSON, 0, 0, false});
    char count[32];
    snprintf(count, sizeof count, "\"count\":%d", N);
    assert_non_null(strstr(json, count));
    /* Members past the cap are counted, not stored. */
    char last_kept[32], first_dropped[32];
    snprintf(last_kept, sizeof last_kept, "\"name\":\"m%d\"", UT_BURST_MEMBERS_MAX - 1);
    snprintf(first_dropped, sizeof first_dropped, "\"name\":\"m%d\"", UT_BURST_MEMBERS_MAX);
    assert_non_null(strstr(json, last_kept));
    assert_null(strstr(json, first_dropped));
    free(json);
    ut_engine_free(e);
}

/* ---- Sensitive elements, changes, alerts ---- */

static void test_engine_sensitive_click(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click_in("t", AT(0), "textbox", "Card number", "card", UT_CTX_FORM, "Payment");
    ev.sens = true;
    apply_ok(e, &ev);
    assert_line(e, "t", 0, "click textbox (sensitive)");
    char *json = trace_of(e, "t", (ut_trace_opts){UT_TRACE_JSON, 0, 0, false});
    assert_null(strstr(json, "Card number"));
    assert_null(strstr(json, "Payment"));
    assert_non_null(strstr(json, "\"sensitive\":true"));
    free(json);
    ut_engine_free(e);
}

static void test_engine_change_lines(void **state)
{
    (void)state;
    struct {
        const char *role, *name, *value;
        bool has_len, has_checked, checked, sens;
        uint32_t len;
        const char *line;
    } cases[] = {
        {"combobox", "Status", "Published", false, false, false, false, 0,
         "set combobox \"Status\" = \"Published\""},
        {"checkbox", "Active", NULL, false, true, true, false, 0, "set checkbox \"Active\" = checked"},
        {"checkbox", "Active", NULL, false, true, false, false, 0,
         "set checkbox \"Active\" = unchecked"},
        {"textbox", "Search", NULL, true, false, false, false, 12,
         "typed 12 chars into textbox \"Search\""},
        {"textbox", "Initial", NULL, true, false, false, false, 1,
         "typed 1 char into textbox \"Initial\""},
        {"textbox", "Password", NULL, true, false, false, true, 8,
         "typed 8 chars into textbox (sensitive)"},
        {"textbox", "Notes", NULL, false, false, false, false, 0, "changed textbox \"Notes\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_engine *e = engine_default();
        ut_event ev = ev_change("t", AT(0), cases[i].role, cases[i].name, "el");
        if (cases[i].value) {
            ev.has_value = true;
            ev.value = ut_str_cstr(cases[i].value);
        }
        ev.has_len = cases[i].has_len;
        ev.len = cases[i].len;
        ev.has_checked = cases[i].has_checked;
        ev.checked = cases[i].checked;
        ev.sens = cases[i].sens;
        apply_ok(e, &ev);
        assert_line(e, "t", 0, cases[i].line);
        ut_engine_free(e);
    }
}

static void test_engine_alert_lines(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_alert("t", AT(0), "Price must be positive", UT_LEVEL_NONE);
    apply_ok(e, &ev);
    assert_line(e, "t", 0, "alert \"Price must be positive\"");
    ev = ev_alert("t", AT(5000), "Price must be positive", UT_LEVEL_ERROR);
    apply_ok(e, &ev);
    assert_line(e, "t", 0, "error alert \"Price must be positive\"");
    ev = ev_alert("t", AT(9000), "Saved", UT_LEVEL_INFO);
    ev.role = UT_STR_LIT("status");
    apply_ok(e, &ev);
    assert_line(e, "t", 0, "info status \"Saved\"");
    ut_engine_free(e);
}

/* ---- Dialogs and navigations as outcomes ---- */

static void test_engine_dialog_outcome_and_close(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click_in("t", AT(0), "link", "Blue Widget", "row-1", UT_CTX_ROW, NULL);
    ev.ctx.cells[0] = UT_STR_LIT("Blue Widget");
    ev.ctx.cells[1] = UT_STR_LIT("SKU-1234");
    ev.ctx.ncells = 2;
    apply_ok(e, &ev);
    ut_event open = ev_dialog("t", AT(UT_OUTCOME_WINDOW_MS), UT_DIALOG_OPEN, "Blue Widget", "dlg",
                              "Price: $20");
    apply_ok(e, &open);
    /* A second open of the same dialog updates what it shows. */
    open.time_us = AT(1500);
    open.text = UT_STR_LIT("Price: $24.99 \xC2\xB7 Status: Published");
    apply_ok(e, &open);
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0,
                "click link \"Blue Widget\" (row: Blue Widget | SKU-1234) \xE2\x86\x92 opened "
                "dialog \"Blue Widget\"");
    ut_event close = ev_dialog("t", AT(3000), UT_DIALOG_CLOSE, "", "dlg", "");
    apply_ok(e, &close);
    assert_line(e, "t", 0,
                "closed dialog \"Blue Widget\": Price: $24.99 \xC2\xB7 "
                "Status: Published");
    ut_engine_free(e);
}

/* Issue 20 item 3: a dialog whose content is rendered only while it is
 * open is empty during its exit transition; that empty update must not
 * replace what the user read, whatever the close then carries. */
static void test_engine_dialog_emptied_while_closing_keeps_snapshot(void **state)
{
    (void)state;
    static const struct {
        const char *update; /* the second open's snapshot */
        const char *close;  /* the close's own snapshot */
        const char *line;
    } cases[] = {
        {"", "", "closed dialog \"Cart\": Blue Widget \xC2\xB7 Total: $20"},
        {"", "Total:", "closed dialog \"Cart\": Blue Widget \xC2\xB7 Total: $20"},
        {"Total: $45", "", "closed dialog \"Cart\": Total: $45"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_engine *e = engine_default();
        ut_event open = ev_dialog("t", AT(0), UT_DIALOG_OPEN, "Cart", "dlg", "Blue Widget \xC2\xB7 Total: $20");
        apply_ok(e, &open);
        open.time_us = AT(900);
        open.text = (ut_str){cases[i].update, strlen(cases[i].update)};
        apply_ok(e, &open);
        ut_event close = ev_dialog("t", AT(1200), UT_DIALOG_CLOSE, "", "dlg", cases[i].close);
        apply_ok(e, &close);
        assert_line(e, "t", 0, cases[i].line);
        ut_engine_free(e);
    }
}

static void test_engine_dialog_without_click(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click("t", AT(0), "button", "Details", "details");
    apply_ok(e, &ev);
    /* One millisecond past the outcome window: a line of its own. */
    ut_event open = ev_dialog("t", AT(UT_OUTCOME_WINDOW_MS + 1), UT_DIALOG_OPEN, "Cookies", "cookie", "");
    apply_ok(e, &open);
    assert_int_equal(lines_of(e, "t"), 2);
    assert_line(e, "t", 0, "opened dialog \"Cookies\"");
    assert_line(e, "t", 1, "click button \"Details\"");
    /* A close with no snapshot prints no "it showed". */
    ut_event close = ev_dialog("t", AT(5000), UT_DIALOG_CLOSE, "Cookies", "cookie", "");
    apply_ok(e, &close);
    assert_line(e, "t", 0, "closed dialog \"Cookies\"");
    ut_engine_free(e);
}

static void test_engine_dialog_snapshot_cut(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    char text[UT_DIALOG_TEXT_MAX_BYTES + 1] = "";
    while (strlen(text) < UT_TEXT_PRINT_MAX_CHARS + 50)
        strcat(text, "Lorem ipsum ");
    ut_event open = ev_dialog("t", AT(0), UT_DIALOG_OPEN, "Long", "d", text);
    apply_ok(e, &open);
    ut_event close = ev_dialog("t", AT(1000), UT_DIALOG_CLOSE, "Long", "d", "");
    apply_ok(e, &close);
    char *trace = trace_text(e, "t");
    char line[LINE_MAX_BYTES];
    assert_true(trace_line(trace, 0, line, sizeof line));
    char expected[LINE_MAX_BYTES];
    snprintf(expected, sizeof expected, "closed dialog \"Long\": %.*s\xE2\x80\xA6",
             UT_TEXT_PRINT_MAX_CHARS, text);
    assert_string_equal(line, expected);
    free(trace);
    ut_engine_free(e);
}

static void test_engine_dialogs_remembered_cap(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    char els[UT_DIALOGS_OPEN_MAX + 1][8];
    for (int i = 0; i <= UT_DIALOGS_OPEN_MAX; i++) {
        snprintf(els[i], sizeof els[i], "d%d", i);
        ut_event open = ev_dialog("t", AT(i * 5000), UT_DIALOG_OPEN, els[i], els[i], "shown");
        apply_ok(e, &open);
    }
    /* The oldest dialog was forgotten: its close has nothing to recall. */
    ut_event close = ev_dialog("t", AT(100000), UT_DIALOG_CLOSE, "d0", "d0", "");
    apply_ok(e, &close);
    assert_line(e, "t", 0, "closed dialog \"d0\"");
    close = ev_dialog("t", AT(101000), UT_DIALOG_CLOSE, "d1", "d1", "");
    apply_ok(e, &close);
    assert_line(e, "t", 0, "closed dialog \"d1\": shown");
    ut_engine_free(e);
}

static void test_engine_nav_outcome_keeps_nav_entry(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click("t", AT(0), "link", "Item 1234", "item");
    apply_ok(e, &ev);
    ev = ev_nav("t", AT(300), "https://shop.test/catalog/1234?tab=specs#x", "Item", UT_NAV_PUSH);
    apply_ok(e, &ev);
    /* The click and the navigation it caused print on one line. */
    assert_int_equal(lines_of(e, "t"), 2);
    assert_int_equal(text_lines_of(e, "t"), 1);
    assert_line(e, "t", 0,
                "click link \"Item 1234\" \xE2\x86\x92 navigated (in-app) to /catalog/1234?tab= \"Item\"");
    /* The ring still holds both: the JSON trace has the nav entry. */
    ut_trace_opts json = {UT_TRACE_JSON, 0, 0, false};
    char *j = trace_of(e, "t", json);
    assert_non_null(strstr(j, "\"kind\":\"nav\""));
    free(j);
    ut_engine_free(e);
}

static void test_engine_alert_outcome(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click("t", AT(0), "button", "Save", "save");
    apply_ok(e, &ev);
    ev = ev_alert("t", AT(200), "Price must be positive", UT_LEVEL_ERROR);
    apply_ok(e, &ev);
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0,
                "click button \"Save\" \xE2\x86\x92 error alert \"Price must be positive\"");
    /* One outcome per click: a later alert gets its own line. */
    ev = ev_alert("t", AT(400), "Retrying", UT_LEVEL_NONE);
    apply_ok(e, &ev);
    assert_int_equal(lines_of(e, "t"), 2);
    assert_line(e, "t", 0, "alert \"Retrying\"");
    ut_engine_free(e);
}

/* An `invalid` event of two controls at `ms`. */
static ut_event ev_invalid_two(int64_t t_us)
{
    ut_event ev = {.kind = UT_KIND_INVALID, .tab = UT_STR_LIT("t"), .time_us = t_us};
    ev.fields[0] = (ut_invalid_field){UT_STR_LIT("textbox"), UT_STR_LIT("Amount"), UT_STR_LIT("Enter an amount")};
    ev.fields[1] = (ut_invalid_field){UT_STR_LIT("checkbox"), UT_STR_LIT("I accept the terms"),
                                      UT_STR_LIT("You must \"accept\" the terms")};
    ev.nfields = 2;
    return ev;
}

/* Issue 20 item 11: what a submit found invalid is its outcome; it wins
 * over "page changed" (the messages are a change of the page), and is a
 * line of its own when no click awaits one. */
static void test_engine_invalid_outcome(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    ut_event ev = ev_click_in("t", AT(5000), "button", "Place order", "submit", UT_CTX_FORM, "Payment");
    apply_ok(e, &ev);
    m.time_us = AT(5050);
    apply_ok(e, &m);
    assert_line(e, "t", 0, "click button \"Place order\" (form: Payment) \xE2\x86\x92 page changed");
    ev = ev_invalid_two(AT(5100));
    apply_ok(e, &ev);
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0,
                "click button \"Place order\" (form: Payment) \xE2\x86\x92 invalid: textbox \"Amount\": "
                "\"Enter an amount\" \xC2\xB7 checkbox \"I accept the terms\": \"You must \xE2\x80\x9D"
                "accept\xE2\x80\x9D the terms\"");
    char *json = trace_of(e, "t", (ut_trace_opts){UT_TRACE_JSON, 0, 0, false});
    assert_non_null(strstr(json, "\"outcome\":{\"kind\":\"invalid\",\"fields\":[{\"role\":\"textbox\",\"name\":"
                                 "\"Amount\",\"text\":\"Enter an amount\"},{\"role\":\"checkbox\",\"name\":"
                                 "\"I accept the terms\",\"text\":\"You must \\\"accept\\\" the terms\"}]"));
    free(json);
    /* Past the outcome window, and with a withheld name: its own line. */
    ev = ev_invalid_two(AT(5100 + UT_OUTCOME_WINDOW_MS + 1));
    ev.fields[0].name = UT_STR_NULL;
    ev.nfields = 1;
    apply_ok(e, &ev);
    assert_int_equal(lines_of(e, "t"), 2);
    assert_line(e, "t", 0, "invalid: textbox: \"Enter an amount\"");
    json = trace_of(e, "t", (ut_trace_opts){UT_TRACE_JSON, 0, 0, false});
    assert_non_null(strstr(json, "\"kind\":\"invalid\",\"seq\":"));
    assert_non_null(strstr(json, "\"fields\":[{\"role\":\"textbox\",\"text\":\"Enter an amount\"}]}"));
    free(json);
    ut_engine_free(e);
}

/* An `invalid` event of one control at `t_us`. */
static ut_event ev_invalid_one(int64_t t_us, const char *role, const char *name, const char *text)
{
    ut_event ev = {.kind = UT_KIND_INVALID, .tab = UT_STR_LIT("t"), .time_us = t_us};
    ev.fields[0] = (ut_invalid_field){ut_str_cstr(role), ut_str_cstr(name), ut_str_cstr(text)};
    ev.nfields = 1;
    return ev;
}

/* Messages of one submit that come in two records (a library validating
 * each field in its own time, one message shown by an animation a frame
 * later) are one outcome: a control's newer message replaces its older
 * one. Once the user typed, or clicked again, they are not the submit's. */
static void test_engine_invalid_outcome_joins_later_messages(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    ut_event ev = ev_click_in("t", AT(5000), "button", "Refund", "refund", UT_CTX_DIALOG, "Refund");
    apply_ok(e, &ev);
    ut_event inv = ev_invalid_one(AT(5100), "spinbutton", "Amount", "Required");
    apply_ok(e, &inv);
    inv = ev_invalid_two(AT(5300));
    inv.fields[0] = (ut_invalid_field){UT_STR_LIT("combobox"), UT_STR_LIT("Reason"), UT_STR_LIT("Choose a reason")};
    inv.fields[1] = (ut_invalid_field){UT_STR_LIT("spinbutton"), UT_STR_LIT("Amount"), UT_STR_LIT("Enter an amount")};
    apply_ok(e, &inv);
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0,
                "click button \"Refund\" (dialog: Refund) \xE2\x86\x92 invalid: spinbutton \"Amount\": "
                "\"Enter an amount\" \xC2\xB7 combobox \"Reason\": \"Choose a reason\"");
    /* The user types: a message after it answers the typing. */
    ut_event typed = {.kind = UT_KIND_MUTATION, .time_us = AT(5400), .tab = ut_str_cstr("t"),
                      .dom_elements = 500, .dom_depth = 8, .input = true};
    apply_ok(e, &typed);
    inv = ev_invalid_one(AT(5500), "spinbutton", "Amount", "Too much");
    apply_ok(e, &inv);
    assert_int_equal(lines_of(e, "t"), 2);
    assert_line(e, "t", 0, "invalid: spinbutton \"Amount\": \"Too much\"");
    /* A new submit's messages join its own outcome only. */
    ev = ev_click_in("t", AT(7000), "button", "Refund", "refund", UT_CTX_DIALOG, "Refund");
    apply_ok(e, &ev);
    inv = ev_invalid_one(AT(7050), "spinbutton", "Amount", "Too much");
    apply_ok(e, &inv);
    inv = ev_invalid_one(AT(7200), "textbox", "Note", "Too long");
    apply_ok(e, &inv);
    assert_int_equal(lines_of(e, "t"), 3);
    assert_line(e, "t", 0,
                "click button \"Refund\" (dialog: Refund) \xE2\x86\x92 invalid: spinbutton \"Amount\": "
                "\"Too much\" \xC2\xB7 textbox \"Note\": \"Too long\"");
    assert_line(e, "t", 2,
                "click button \"Refund\" (same dialog) \xE2\x86\x92 invalid: spinbutton \"Amount\": "
                "\"Enter an amount\" \xC2\xB7 combobox \"Reason\": \"Choose a reason\"");
    /* Past the click's outcome window: a line of its own. */
    inv = ev_invalid_one(AT(7000 + UT_OUTCOME_WINDOW_MS + 1), "textbox", "Note", "Still too long");
    apply_ok(e, &inv);
    assert_int_equal(lines_of(e, "t"), 4);
    ut_engine_free(e);
}

/* Joined messages stay within UT_INVALID_FIELDS_MAX fields. */
static void test_engine_invalid_outcome_joined_bounded(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click("t", AT(0), "button", "Save", "save");
    apply_ok(e, &ev);
    char name[16];
    for (int i = 0; i < UT_INVALID_FIELDS_MAX + 3; i++) {
        snprintf(name, sizeof name, "Field %d", i);
        ut_event inv = ev_invalid_one(AT(10 + i), "textbox", name, "Required");
        apply_ok(e, &inv);
    }
    assert_int_equal(lines_of(e, "t"), 1);
    char *json = trace_of(e, "t", (ut_trace_opts){UT_TRACE_JSON, 0, 0, false});
    unsigned fields = 0;
    for (const char *p = json; (p = strstr(p, "{\"role\":\"textbox\"")); p++)
        fields++;
    assert_int_equal(fields, UT_INVALID_FIELDS_MAX);
    assert_non_null(strstr(json, "\"name\":\"Field 0\""));
    assert_null(strstr(json, "\"name\":\"Field 8\""));
    free(json);
    ut_engine_free(e);
}

/* The outcome's list is never cut inside a field: fields that do not fit
 * whole are left out. */
static void test_engine_invalid_outcome_bounded(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click("t", AT(0), "button", "Save", "save");
    apply_ok(e, &ev);
    char name[UT_NAME_MAX_BYTES + 1], text[UT_INVALID_TEXT_MAX_BYTES + 1];
    memset(name, 'n', UT_NAME_MAX_BYTES);
    name[UT_NAME_MAX_BYTES] = '\0';
    memset(text, 'x', UT_INVALID_TEXT_MAX_BYTES);
    text[UT_INVALID_TEXT_MAX_BYTES] = '\0';
    ut_event inv = {.kind = UT_KIND_INVALID, .tab = UT_STR_LIT("t"), .time_us = AT(100)};
    for (uint32_t i = 0; i < UT_INVALID_FIELDS_MAX; i++)
        inv.fields[i] = (ut_invalid_field){UT_STR_LIT("textbox"), ut_str_cstr(name), ut_str_cstr(text)};
    inv.nfields = UT_INVALID_FIELDS_MAX;
    apply_ok(e, &inv);
    char *json = trace_of(e, "t", (ut_trace_opts){UT_TRACE_JSON, 0, 0, false});
    unsigned fields = 0;
    for (const char *p = json; (p = strstr(p, "{\"role\":\"textbox\"")); p++)
        fields++;
    /* 2 + 7 + 2 + 256 + 2 + 256 bytes a field: 3 fit in 2048. */
    assert_int_equal(fields, 3);
    assert_non_null(strstr(json, "\"kind\":\"invalid\""));
    free(json);
    ut_engine_free(e);
}

static void test_engine_page_changed_outcome(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    ut_event ev = ev_click("t", AT(5000), "button", "Apply", "apply");
    apply_ok(e, &ev);
    m.time_us = AT(5100);
    apply_ok(e, &m);
    assert_line(e, "t", 0, "click button \"Apply\" \xE2\x86\x92 page changed");
    /* A dialog within the window is the stronger outcome. */
    ut_event open = ev_dialog("t", AT(5300), UT_DIALOG_OPEN, "Filters", "dlg", "");
    apply_ok(e, &open);
    assert_int_equal(lines_of(e, "t"), 1);
    assert_line(e, "t", 0, "click button \"Apply\" \xE2\x86\x92 opened dialog \"Filters\"");
    /* Past the window a mutation no longer speaks for a click. */
    ev = ev_click("t", AT(20000), "button", "Next", "next");
    apply_ok(e, &ev);
    m.time_us = AT(20000 + UT_OUTCOME_WINDOW_MS + 1);
    apply_ok(e, &m);
    ut_engine_advance(e, AT(60000));
    assert_line(e, "t", 0, "click button \"Next\"");
    ut_engine_free(e);
}

/* A search box clicked, then typed into: the list the typing filters is
 * the typing's answer (issue 20 item 12). The sender's `input` record at
 * the first keystroke ends the click's wait: neither the filtering nor a
 * suggestions list opening after it is the click's outcome, and the click
 * is no dead click. What came before the keystroke still answers it. */
static void test_engine_typing_ends_click_wait(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    ut_event ev = ev_click("t", AT(5000), "searchbox", "Filter orders", "q");
    apply_ok(e, &ev);
    ut_event typed = {.kind = UT_KIND_MUTATION, .time_us = AT(5200), .tab = ut_str_cstr("t"),
                      .dom_elements = 500, .dom_depth = 8, .input = true};
    apply_ok(e, &typed);
    m.time_us = AT(5250);
    apply_ok(e, &m);
    ut_event open = ev_dialog("t", AT(5300), UT_DIALOG_OPEN, "Suggestions", "sugg", "");
    apply_ok(e, &open);
    ut_engine_advance(e, AT(60000));
    assert_line(e, "t", 1, "click searchbox \"Filter orders\"");

    /* Without the keystroke the same filtering would be the click's. */
    ev = ev_click("t", AT(70000), "searchbox", "Filter orders", "q");
    apply_ok(e, &ev);
    m.time_us = AT(70250);
    apply_ok(e, &m);
    assert_line(e, "t", 0, "click searchbox \"Filter orders\" \xE2\x86\x92 page changed");

    /* What the page did between the click and the keystroke answers the
     * click; a keystroke after it changes nothing. */
    ev = ev_click("t", AT(80000), "combobox", "Country", "c");
    apply_ok(e, &ev);
    open = ev_dialog("t", AT(80100), UT_DIALOG_OPEN, "Countries", "list", "");
    apply_ok(e, &open);
    typed.time_us = AT(80200);
    apply_ok(e, &typed);
    assert_line(e, "t", 0, "click combobox \"Country\" \xE2\x86\x92 opened dialog \"Countries\"");
    ut_engine_free(e);
}

/* A leaf whose text changes (a ticking clock not yet learned as
 * background) after a click shows the page is alive, so the click is not
 * dead, but it is no response to name as the click's outcome. */
static void test_engine_leaf_text_is_no_outcome(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    static const ut_mut_rec tick = {{"clock", 5}, UT_MUT_CHARDATA, 6, 0, 0, 0};
    ut_event ev = ev_click("t", AT(5000), "checkbox", "Active", "chip");
    apply_ok(e, &ev);
    ut_event clock = ev_mutation_big("t", AT(5400));
    clock.recs = &tick;
    apply_ok(e, &clock);
    ut_engine_advance(e, AT(60000));
    assert_line(e, "t", 0, "click checkbox \"Active\"");
    ut_engine_free(e);
}

static void test_engine_dead_click(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    ut_event ev = ev_click("t", AT(5000), "button", "Save", "save");
    apply_ok(e, &ev);
    /* The deadline covers the dead click; one microsecond before it the
     * click is still open. */
    int64_t due = AT(5000 + UT_DEAD_CLICK_MS);
    assert_true(ut_engine_next_deadline(e) <= due);
    ut_engine_advance(e, due - 1);
    assert_line(e, "t", 0, "click button \"Save\"");
    ut_engine_advance(e, due);
    assert_line(e, "t", 0, "click button \"Save\" \xE2\x86\x92 no response");

    /* A tab that never sent mutations never claims a dead click. */
    ev = ev_click("quiet", AT(5000), "button", "Save", "save");
    apply_ok(e, &ev);
    ut_engine_advance(e, AT(60000));
    assert_line(e, "quiet", 0, "click button \"Save\"");

    /* A change that answered the click within the dead window is a response. */
    ev = ev_click("t", AT(70000), "checkbox", "Active", "act");
    apply_ok(e, &ev);
    ut_event ch = ev_change("t", AT(70050), "checkbox", "Active", "act");
    ch.has_checked = ch.checked = true;
    apply_ok(e, &ch);
    ut_engine_advance(e, AT(90000));
    assert_line(e, "t", 1, "click checkbox \"Active\"");
    ut_engine_free(e);
}

/* A control that reports its state after the click (a native checkbox, a
 * <details> summary) showed the click's effect itself, with no DOM
 * mutation: no dead click, alone or in a burst. The same click without a
 * state is dead (test_engine_dead_click). */
static void test_engine_stateful_click_is_answered(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    ut_event ev = ev_click("t", AT(5000), "button", "How long do refunds take?", "faq1");
    ev.state_set = ev.state_on = UT_STATE_EXPANDED;
    apply_ok(e, &ev);
    ut_engine_advance(e, AT(5000 + 2 * UT_DEAD_CLICK_MS));
    assert_line(e, "t", 0, "click button \"How long do refunds take?\" (expanded)");

    static const char *const names[] = {"VIP", "New this month", "At risk"};
    for (int i = 0; i < 3; i++) {
        ev = ev_click("t", AT(20000 + 300 * i), "checkbox", names[i], names[i]);
        ev.ctx.kind = UT_CTX_GROUP;
        ev.ctx.name = ut_str_cstr("Segments");
        ev.state_set = UT_STATE_CHECKED;
        ev.state_on = i == 1 ? 0 : UT_STATE_CHECKED;
        apply_ok(e, &ev);
    }
    ut_engine_advance(e, AT(20600 + 2 * UT_DEAD_CLICK_MS));
    assert_line(e, "t", 0,
                "clicked 3\xC3\x97 checkbox (group: Segments): \"VIP\" (checked), \"New this month\" "
                "(not checked), \"At risk\" (checked)");
    ut_engine_free(e);
}

static void test_engine_dead_click_settles_on_next_event(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    ut_event ev = ev_click("t", AT(5000), "button", "Save", "save");
    apply_ok(e, &ev);
    /* No advance: the next event, past the dead time, settles it first. */
    ev = ev_click("t", AT(5000 + UT_DEAD_CLICK_MS), "button", "Cancel", "cancel");
    apply_ok(e, &ev);
    assert_line(e, "t", 1, "click button \"Save\" \xE2\x86\x92 no response");
    /* A newer click ends the wait without a verdict. */
    ev = ev_click("t", AT(5000 + UT_DEAD_CLICK_MS + 500), "button", "Close", "close");
    apply_ok(e, &ev);
    ut_engine_advance(e, AT(60000));
    assert_line(e, "t", 1, "click button \"Cancel\"");
    assert_line(e, "t", 0, "click button \"Close\" \xE2\x86\x92 no response");
    ut_engine_free(e);
}

static void test_engine_rage_click_dead(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    apply_ok(e, &m);
    for (int i = 0; i < 4; i++) {
        ut_event ev = ev_click("t", AT(5000 + i * 200), "button", "Save", "save");
        apply_ok(e, &ev);
    }
    ut_engine_advance(e, AT(5600 + UT_DEAD_CLICK_MS - 1));
    assert_line(e, "t", 0, "click \xC3\x97" "4 button \"Save\" (rage click)");
    ut_engine_advance(e, AT(5600 + UT_DEAD_CLICK_MS));
    assert_line(e, "t", 0,
                "click \xC3\x97" "4 button \"Save\" (rage click) \xE2\x86\x92 no response");
    ut_engine_free(e);
}

/* ---- Time ---- */

static void test_engine_sender_time_mapping(void **state)
{
    (void)state;
    /* The sender's clock runs 10 minutes behind the daemon's. */
    const int64_t skew = INT64_C(600) * 1000000;
    ut_engine *e = engine_default();
    ut_event m = ev_mutation_big("t", AT(0));
    m.rt_us = AT(0) + skew;
    apply_ok(e, &m);
    ut_event ev = ev_click("t", AT(5000), "button", "Save", "save");
    ev.rt_us = AT(5000) + skew;
    apply_ok(e, &ev);
    ut_engine_advance(e, AT(60000) + skew);
    /* The trace shows sender time; the dead click settled on the engine clock. */
    char *trace = trace_text(e, "t");
    assert_non_null(strstr(trace, "- 13:31:35 click button \"Save\" \xE2\x86\x92 no response"));
    free(trace);
    ut_engine_free(e);
}

static void test_engine_clock_never_backwards(void **state)
{
    (void)state;
    ut_config c;
    config_in_order(&c);
    c.idle_ms = 10000;
    ut_engine *e = engine_with(&c);
    ut_event ev = ev_click("t", AT(0), "button", "A", "a");
    apply_ok(e, &ev);
    ut_engine_advance(e, AT(5000));
    ut_engine_advance(e, AT(0));
    assert_int_equal(ut_engine_next_deadline(e), AT(5000) + 5000 * 1000);
    ut_engine_free(e);
}

/* ---- Tabs: seq, cap, idle, close ---- */

typedef struct recorder {
    int applied;
    int trace_changed;
    int marks;
    int gone;
    int gone_evicted;
    char last_gone[UT_TAB_MAX_BYTES + 1];
    char last_applied_name[256];
} recorder;

static void rec_applied(void *ud, const ut_event *ev)
{
    recorder *r = ud;
    r->applied++;
    snprintf(r->last_applied_name, sizeof r->last_applied_name, "%.*s", (int)ev->name.len,
             ev->name.ptr ? ev->name.ptr : "");
}

static void rec_mark(void *ud, ut_str tab, const ut_mark *m)
{
    (void)tab;
    (void)m;
    ((recorder *)ud)->marks++;
}

static void rec_trace(void *ud, ut_str tab)
{
    (void)tab;
    ((recorder *)ud)->trace_changed++;
}

static void rec_gone(void *ud, ut_str tab, bool evicted)
{
    recorder *r = ud;
    r->gone++;
    r->gone_evicted += evicted;
    snprintf(r->last_gone, sizeof r->last_gone, "%.*s", (int)tab.len, tab.ptr);
}

static void observe(ut_engine *e, recorder *r)
{
    memset(r, 0, sizeof *r);
    ut_observer obs = {.on_applied = rec_applied, .on_mark = rec_mark, .on_trace_changed = rec_trace,
                       .on_tab_gone = rec_gone, .ud = r};
    ut_engine_set_observer(e, &obs);
}

/* What a recording keeps (on_accepted, in order) and the marks (time and
 * state) the engine emitted. */
typedef struct accepted_log {
    ut_event events[8];
    size_t n;
    int64_t mark_us[16];
    int mark_state[16];
    size_t nmarks;
} accepted_log;

static void log_accepted(void *ud, const ut_event *ev)
{
    accepted_log *l = ud;
    assert_true(l->n < 8);
    l->events[l->n] = *ev;
    l->events[l->n].tab = ut_str_cstr("t"); /* the only tab: its key outlives the call */
    l->n++;
}

static void log_mark(void *ud, ut_str tab, const ut_mark *m)
{
    (void)tab;
    accepted_log *l = ud;
    assert_true(l->nmarks < 16);
    l->mark_us[l->nmarks] = m->time_us;
    l->mark_state[l->nmarks++] = m->state;
}

/* Replay equals live: an event whose receive time is behind the engine's
 * clock when it comes (the daemon's timer advanced the clock past it: a
 * wall clock stepped back, a batch stamped before a timer ran) is applied
 * at the clock; the recording must say so, or its replay applies it
 * before the marks the live engine had already emitted, and the marks
 * shift by the quiet time. */
static void test_engine_replay_of_event_received_behind_the_clock(void **state)
{
    (void)state;
    accepted_log live = {0}, replayed = {0};
    ut_engine *e = engine_default();
    ut_observer obs = {.on_accepted = log_accepted, .on_mark = log_mark, .ud = &live};
    ut_engine_set_observer(e, &obs);
    ut_event a = ev_mutation_big("t", AT(0));
    a.rt_us = AT(0);
    apply_ok(e, &a);
    ut_engine_advance(e, AT(1000)); /* the daemon's timer: stable at 200 */
    ut_event b = ev_mutation_big("t", AT(100));
    b.rt_us = AT(100); /* stamped before the clock's 1000 */
    apply_ok(e, &b);
    ut_engine_advance(e, AT(5000));
    ut_engine_free(e);

    /* The replay: as `uitrail replay` drives a recording. */
    e = engine_default();
    obs.on_accepted = NULL;
    obs.ud = &replayed;
    ut_engine_set_observer(e, &obs);
    for (size_t i = 0; i < live.n; i++) {
        ut_engine_advance(e, live.events[i].rt_us);
        apply_ok(e, &live.events[i]);
    }
    ut_engine_advance(e, AT(5000));
    ut_engine_free(e);

    assert_true(live.nmarks >= 2);
    assert_int_equal(replayed.nmarks, live.nmarks);
    for (size_t i = 0; i < live.nmarks; i++) {
        assert_int_equal(replayed.mark_state[i], live.mark_state[i]);
        assert_true(replayed.mark_us[i] == live.mark_us[i]);
    }
}

static void test_engine_seq_duplicates(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click("t", AT(0), "button", "A", "a");
    ev.has_seq = true;
    ev.seq = 5;
    apply_ok(e, &ev);
    ev.time_us = AT(5000);
    assert_int_equal(ut_engine_apply(e, &ev), UT_EDUP);
    /* A seq below the highest one is a gap filled late, not a duplicate
     * (tests/core/test_reorder.c has the window of recent seqs). */
    ev.seq = 4;
    apply_ok(e, &ev);
    assert_int_equal(ut_engine_apply(e, &ev), UT_EDUP);
    ev.seq = 6;
    ev.time_us = AT(7000);
    apply_ok(e, &ev);
    /* A record without seq is never a duplicate. */
    ev.has_seq = false;
    ev.time_us = AT(10000);
    apply_ok(e, &ev);
    /* Sequence numbers are per tab. */
    ev = ev_click("u", AT(10000), "button", "A", "a");
    ev.has_seq = true;
    ev.seq = 1;
    apply_ok(e, &ev);
    ut_engine_stats stats;
    ut_engine_stats_get(e, &stats);
    assert_int_equal(stats.duplicates, 2);
    assert_int_equal(stats.applied[UT_KIND_CLICK], 5);
    assert_int_equal(lines_of(e, "t"), 4);
    ut_engine_free(e);
}

static void test_engine_tab_cap_evicts_lru(void **state)
{
    (void)state;
    ut_config c;
    config_in_order(&c);
    c.max_tabs = 3;
    ut_engine *e = engine_with(&c);
    recorder r;
    observe(e, &r);
    const char *tabs[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        ut_event ev = ev_click(tabs[i], AT(i * 1000), "button", "X", "x");
        apply_ok(e, &ev);
    }
    /* "a" is active again: "b" is now the least recently used. */
    ut_event ev = ev_click("a", AT(5000), "button", "Y", "y");
    apply_ok(e, &ev);
    ev = ev_click("d", AT(6000), "button", "X", "x");
    apply_ok(e, &ev);
    assert_int_equal(r.gone, 1);
    assert_int_equal(r.gone_evicted, 1);
    assert_string_equal(r.last_gone, "b");
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("b"), &info), UT_ENOENT);
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("a"), &info), UT_OK);
    ut_engine_stats stats;
    ut_engine_stats_get(e, &stats);
    assert_int_equal(stats.evicted_cap, 1);
    assert_int_equal(stats.tabs, 3);
    ut_engine_free(e);
}

static void test_engine_idle_eviction(void **state)
{
    (void)state;
    ut_config c;
    config_in_order(&c);
    c.idle_ms = UT_IDLE_MIN_MS;
    ut_engine *e = engine_with(&c);
    recorder r;
    observe(e, &r);
    ut_event ev = ev_click("old", AT(0), "button", "X", "x");
    apply_ok(e, &ev);
    ev = ev_click("new", AT(600), "button", "X", "x");
    apply_ok(e, &ev);
    assert_int_equal(ut_engine_next_deadline(e), AT(UT_IDLE_MIN_MS));
    ut_engine_advance(e, AT(UT_IDLE_MIN_MS) - 1);
    assert_int_equal(r.gone, 0);
    ut_engine_advance(e, AT(UT_IDLE_MIN_MS));
    assert_int_equal(r.gone, 1);
    assert_string_equal(r.last_gone, "old");
    assert_int_equal(r.gone_evicted, 1);
    assert_int_equal(ut_engine_next_deadline(e), AT(600 + UT_IDLE_MIN_MS));
    /* An event for another tab moves the clock and evicts as well. */
    ev = ev_click("third", AT(600 + UT_IDLE_MIN_MS), "button", "X", "x");
    apply_ok(e, &ev);
    assert_int_equal(r.gone, 2);
    ut_engine_stats stats;
    ut_engine_stats_get(e, &stats);
    assert_int_equal(stats.evicted_idle, 2);
    assert_int_equal(stats.tabs, 1);
    ut_engine_free(e);
}

static void test_engine_close_removes_tab(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    recorder r;
    observe(e, &r);
    ut_event ev = ev_click("t", AT(0), "button", "X", "x");
    apply_ok(e, &ev);
    ev = ev_close("t", AT(1000));
    apply_ok(e, &ev);
    assert_int_equal(r.gone, 1);
    assert_int_equal(r.gone_evicted, 0);
    ut_buf b = UT_BUF_INIT;
    assert_int_equal(ut_engine_trace(e, UT_STR_LIT("t"), NULL, &b), UT_ENOENT);
    ut_buf_free(&b);
    /* Closing an unknown tab is harmless. */
    apply_ok(e, &ev);
    assert_int_equal(r.gone, 1);
    ut_engine_free(e);
}

static void test_engine_observer_callbacks(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    recorder r;
    observe(e, &r);
    ut_event ev = ev_click("t", AT(0), "button", "Mail jane.doe@example.com", "x");
    apply_ok(e, &ev);
    assert_int_equal(r.applied, 1);
    assert_int_equal(r.trace_changed, 1);
    /* Observers see the redacted event. */
    assert_null(strstr(r.last_applied_name, "jane.doe"));
    assert_non_null(strstr(r.last_applied_name, "[email]"));
    ut_event m = ev_mutation_big("t", AT(1000));
    apply_ok(e, &m);
    assert_int_equal(r.applied, 2);
    ut_engine_advance(e, AT(30000));
    assert_true(r.marks >= 1);
    ut_engine_stats stats;
    ut_engine_stats_get(e, &stats);
    assert_int_equal(stats.marks, (uint64_t)r.marks);
    /* No observer: nothing breaks. */
    ut_engine_set_observer(e, NULL);
    apply_ok(e, &ev);
    ut_engine_free(e);
}

static void test_engine_redacts_before_ring(void **state)
{
    (void)state;
    static const char *const extra[] = {"Project\\s+Falcon"};
    ut_config c;
    config_in_order(&c);
    c.redact_patterns = extra;
    c.n_redact_patterns = 1;
    ut_engine *e = engine_with(&c);
    ut_event ev = ev_click_in("t", AT(0), "button", "Open Project Falcon", "x", UT_CTX_REGION,
                              "Owner jane.doe@example.com");
    apply_ok(e, &ev);
    char *trace = trace_of(e, "t", (ut_trace_opts){UT_TRACE_JSON, 0, 0, false});
    assert_null(strstr(trace, "Falcon"));
    assert_null(strstr(trace, "jane.doe"));
    free(trace);
    assert_line(e, "t", 0, "click button \"Open [redacted]\" (region: Owner [email])");
    ut_engine_free(e);
}

static bool count_visit(void *ud, const ut_tab_info *t)
{
    char *order = ud;
    strncat(order, t->tab.ptr, t->tab.len);
    return strlen(order) < 2;
}

static void test_engine_tab_listing(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_nav("a", AT(0), "https://x.test/a", "A \"quoted\"", UT_NAV_LOAD);
    apply_ok(e, &ev);
    ev = ev_click("b", AT(1000), "button", "X", "x");
    apply_ok(e, &ev);
    ev = ev_click("c", AT(2000), "button", "X", "x");
    apply_ok(e, &ev);
    char order[8] = "";
    ut_engine_each_tab(e, count_visit, order);
    assert_string_equal(order, "cb"); /* most recent first, stops on false */
    ut_buf b = UT_BUF_INIT;
    assert_int_equal(ut_engine_tabs_json(e, &b), UT_OK);
    assert_string_equal(b.data,
                        "[{\"tab\":\"c\",\"url\":\"\",\"title\":\"\",\"events\":1,\"state\":\"unknown\","
                        "\"last\":1715693492000},"
                        "{\"tab\":\"b\",\"url\":\"\",\"title\":\"\",\"events\":1,\"state\":\"unknown\","
                        "\"last\":1715693491000},"
                        "{\"tab\":\"a\",\"url\":\"https://x.test/a\",\"title\":\"A \\\"quoted\\\"\","
                        "\"events\":1,\"state\":\"unknown\",\"last\":1715693490000}]");
    ut_buf_free(&b);
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("a"), &info), UT_OK);
    assert_true(ut_str_eq_cstr(info.url, "https://x.test/a"));
    assert_int_equal(info.last_us, AT(0));
    assert_false(info.page.has_mutations);
    ut_engine_free(e);
}

static void test_engine_event_to_json(void **state)
{
    (void)state;
    ut_event ev = ev_click_in("t", AT(1234), "checkbox", "Act\"ive", "c1", UT_CTX_GROUP, "Filter");
    ev.has_seq = true;
    ev.seq = 7;
    ev.state_set = UT_STATE_CHECKED | UT_STATE_EXPANDED;
    ev.state_on = UT_STATE_CHECKED;
    ut_buf b = UT_BUF_INIT;
    assert_int_equal(ut_event_to_json(&ev, &b), UT_OK);
    assert_string_equal(b.data,
                        "{\"kind\":\"click\",\"tab\":\"t\",\"time\":\"2024-05-14T13:31:31.234Z\","
                        "\"ms\":1715693491234,\"seq\":7,\"role\":\"checkbox\",\"name\":\"Act\\\"ive\","
                        "\"el\":\"c1\",\"sens\":false,\"ctx\":{\"kind\":\"group\",\"name\":\"Filter\"},"
                        "\"state\":{\"checked\":true,\"expanded\":false}}");
    ut_buf_reset(&b);
    ut_event m = ev_mutation_big("t", AT(0));
    m.busy = 2;
    assert_int_equal(ut_event_to_json(&m, &b), UT_OK);
    assert_string_equal(b.data,
                        "{\"kind\":\"mutation\",\"tab\":\"t\",\"time\":\"2024-05-14T13:31:30.000Z\","
                        "\"ms\":1715693490000,\"dom\":[500,12],\"recs\":[[\"main\",0,3,400,120,40000]],"
                        "\"busy\":2}");
    ut_buf_free(&b);
}

/* ---- The Blue Widget session ---- */

static ut_status run_session(const session *s, ut_buf *text, ut_buf *json)
{
    ut_engine *e = NULL;
    char err[128];
    ut_status st = ut_engine_new(NULL, &e, err, sizeof err);
    if (st != UT_OK)
        return st;
    int64_t last = 0;
    for (size_t i = 0; i < s->n && st == UT_OK; i++) {
        st = ut_engine_apply(e, &s->events[i]);
        last = s->events[i].time_us;
    }
    if (st == UT_OK) {
        ut_engine_advance(e, last + INT64_C(10) * 1000000);
        st = ut_engine_trace(e, s->events[0].tab, NULL, text);
    }
    if (st == UT_OK && json)
        st = ut_engine_trace(e, s->events[0].tab, &(ut_trace_opts){UT_TRACE_JSON, 0, 0, false}, json);
    ut_engine_free(e);
    return st;
}

static void test_engine_bluewidget_fixture(void **state)
{
    (void)state;
    session s;
    session_load(&s, UT_FIXTURES_DIR "/sessions/bluewidget.json");
    char *expected = read_file(UT_FIXTURES_DIR "/sessions/bluewidget.trace.txt");
    ut_buf text = UT_BUF_INIT, json = UT_BUF_INIT;
    assert_int_equal(run_session(&s, &text, &json), UT_OK);
    if (strcmp(text.data, expected) != 0)
        fail_msg("trace differs from bluewidget.trace.txt:\n%s", text.data);
    free(expected);
    ut_buf_free(&text);
    ut_buf_free(&json);
    session_free(&s);
}

/* Every allocation of a whole session — engine, events, advance, trace —
 * fails in turn: each run returns UT_ENOMEM (or, when the failure only
 * cost an event, a different trace) and frees everything it allocated. */
static void test_engine_oom_walk(void **state)
{
    (void)state;
    session s;
    session_load(&s, UT_FIXTURES_DIR "/sessions/bluewidget.json");
    for (long n = 1;; n++) {
        fail_alloc_install(n, false);
        ut_buf text = UT_BUF_INIT;
        ut_status st = run_session(&s, &text, NULL);
        ut_buf_free(&text);
        bool failed = fail_alloc_failed();
        long live = fail_alloc_live();
        fail_alloc_remove();
        if (live != 0)
            fail_msg("allocation %ld failing leaks %ld blocks", n, live);
        if (!failed) {
            assert_int_equal(st, UT_OK);
            print_message("oom walk: %ld allocations\n", n);
            assert_true(n > (long)s.n);
            break;
        }
        if (st != UT_OK && st != UT_ENOMEM)
            fail_msg("allocation %ld failing gives %s", n, ut_status_str(st));
    }
    /* Every allocation from some point on failing: still clean. */
    for (long n = 1; n < 400; n += 7) {
        fail_alloc_install(n, true);
        ut_buf text = UT_BUF_INIT;
        ut_status st = run_session(&s, &text, NULL);
        ut_buf_free(&text);
        long live = fail_alloc_live();
        fail_alloc_remove();
        assert_int_equal(live, 0);
        assert_true(st == UT_OK || st == UT_ENOMEM);
    }
    session_free(&s);
}

/* An allocation failure inside ut_engine_apply loses that event only. */
static void test_engine_oom_loses_only_the_event(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    ut_event ev = ev_click("t", AT(0), "button", "First", "first");
    apply_ok(e, &ev);
    ut_event next = ev_click("t", AT(5000), "button", "Second", "second");
    next.has_seq = true;
    next.seq = 1;
    fail_alloc_install(1, true);
    ut_status st = ut_engine_apply(e, &next);
    fail_alloc_remove();
    assert_int_equal(st, UT_ENOMEM);
    assert_int_equal(lines_of(e, "t"), 1);
    /* The seq was not consumed: the retry applies. */
    apply_ok(e, &next);
    assert_line(e, "t", 0, "click button \"Second\"");
    /* A new tab whose first event fails does not linger. */
    ut_event other = ev_click("u", AT(6000), "button", "X", "x");
    for (long n = 1; n < 6; n++) {
        fail_alloc_install(n, true);
        st = ut_engine_apply(e, &other);
        fail_alloc_remove();
        ut_tab_info info;
        if (st == UT_ENOMEM)
            assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("u"), &info), UT_ENOENT);
    }
    ut_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_config_defaults),
        cmocka_unit_test(test_engine_config_rejects_out_of_range),
        cmocka_unit_test(test_engine_rejects_invalid_events),
        cmocka_unit_test(test_engine_ring_keeps_last_entries),
        cmocka_unit_test(test_engine_ring_size_one),
        cmocka_unit_test(test_engine_nav_entries_and_reset_on_load),
        cmocka_unit_test(test_engine_nav_how_labels),
        cmocka_unit_test(test_engine_debounce_boundary),
        cmocka_unit_test(test_engine_debounce_configurable),
        cmocka_unit_test(test_engine_rage_click),
        cmocka_unit_test(test_engine_rage_folds_separate_entries),
        cmocka_unit_test(test_engine_rage_threshold),
        cmocka_unit_test(test_engine_burst_coalesces),
        cmocka_unit_test(test_engine_burst_threshold),
        cmocka_unit_test(test_engine_burst_window),
        cmocka_unit_test(test_engine_burst_needs_same_role_and_context),
        cmocka_unit_test(test_engine_burst_does_not_flush_ring),
        cmocka_unit_test(test_engine_burst_members_cap),
        cmocka_unit_test(test_engine_sensitive_click),
        cmocka_unit_test(test_engine_change_lines),
        cmocka_unit_test(test_engine_alert_lines),
        cmocka_unit_test(test_engine_dialog_outcome_and_close),
        cmocka_unit_test(test_engine_dialog_emptied_while_closing_keeps_snapshot),
        cmocka_unit_test(test_engine_dialog_without_click),
        cmocka_unit_test(test_engine_dialog_snapshot_cut),
        cmocka_unit_test(test_engine_dialogs_remembered_cap),
        cmocka_unit_test(test_engine_nav_outcome_keeps_nav_entry),
        cmocka_unit_test(test_engine_alert_outcome),
        cmocka_unit_test(test_engine_invalid_outcome),
        cmocka_unit_test(test_engine_invalid_outcome_bounded),
        cmocka_unit_test(test_engine_invalid_outcome_joins_later_messages),
        cmocka_unit_test(test_engine_invalid_outcome_joined_bounded),
        cmocka_unit_test(test_engine_page_changed_outcome),
        cmocka_unit_test(test_engine_typing_ends_click_wait),
        cmocka_unit_test(test_engine_leaf_text_is_no_outcome),
        cmocka_unit_test(test_engine_dead_click),
        cmocka_unit_test(test_engine_stateful_click_is_answered),
        cmocka_unit_test(test_engine_dead_click_settles_on_next_event),
        cmocka_unit_test(test_engine_rage_click_dead),
        cmocka_unit_test(test_engine_sender_time_mapping),
        cmocka_unit_test(test_engine_clock_never_backwards),
        cmocka_unit_test(test_engine_replay_of_event_received_behind_the_clock),
        cmocka_unit_test(test_engine_seq_duplicates),
        cmocka_unit_test(test_engine_tab_cap_evicts_lru),
        cmocka_unit_test(test_engine_idle_eviction),
        cmocka_unit_test(test_engine_close_removes_tab),
        cmocka_unit_test(test_engine_observer_callbacks),
        cmocka_unit_test(test_engine_redacts_before_ring),
        cmocka_unit_test(test_engine_tab_listing),
        cmocka_unit_test(test_engine_event_to_json),
        cmocka_unit_test(test_engine_bluewidget_fixture),
        cmocka_unit_test(test_engine_oom_walk),
        cmocka_unit_test(test_engine_oom_loses_only_the_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

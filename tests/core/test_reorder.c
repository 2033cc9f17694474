/* Order-tolerant ingest (src/core/reorder.c, src/core/seqwin.c and their
 * hook in ut_engine_apply): events of a tab that arrive out of order are
 * applied in event order, a gap in seq filled later is accepted, and the
 * result is a function of the input alone. */
#include "engine_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqwin.h"

#define MS INT64_C(1000)

static ut_engine *engine_window(uint32_t reorder_ms)
{
    ut_config c;
    ut_config_defaults(&c);
    c.reorder_ms = reorder_ms;
    return engine_with(&c);
}

static ut_event with_seq(ut_event ev, uint64_t seq)
{
    ev.has_seq = true;
    ev.seq = seq;
    return ev;
}

static ut_event at_rt(ut_event ev, int64_t rt_us)
{
    ev.rt_us = rt_us;
    return ev;
}

static ut_engine_stats stats_of(const ut_engine *e)
{
    ut_engine_stats st;
    ut_engine_stats_get(e, &st);
    return st;
}

/* ---- The window of recent seqs ---- */

static void test_reorder_seqwin_table(void **state)
{
    (void)state;
    ut__seqwin w;
    memset(&w, 0, sizeof w);
    /* Any first seq is new, however large. */
    assert_int_equal(ut__seqwin_check(&w, UINT64_MAX - 5), UT__SEQ_NEW);
    assert_int_equal(ut__seqwin_check(&w, 10), UT__SEQ_NEW);
    ut__seqwin_mark(&w, 10);
    static const struct {
        uint64_t seq;
        ut__seq_verdict want;
        bool mark;
    } steps[] = {
        {10, UT__SEQ_DUP, false},                        /* a resend */
        {9, UT__SEQ_NEW, true},                          /* a gap below, filled */
        {9, UT__SEQ_DUP, false},
        {12, UT__SEQ_NEW, true},                         /* a gap above (11) */
        {11, UT__SEQ_NEW, true},                         /* ... filled later */
        {11, UT__SEQ_DUP, false},
        {12 + UT_SEQ_JUMP_MAX, UT__SEQ_NEW, true},       /* the largest jump allowed */
        {12 + UT_SEQ_JUMP_MAX + 1 + UT_SEQ_JUMP_MAX + 1, UT__SEQ_JUMP, false},
        {UINT64_MAX, UT__SEQ_JUMP, false},
        {12 + UT_SEQ_JUMP_MAX - (UT_SEQ_WINDOW - 1), UT__SEQ_NEW, true}, /* the oldest kept */
        {12 + UT_SEQ_JUMP_MAX - UT_SEQ_WINDOW, UT__SEQ_DUP, false},      /* older: a duplicate */
        {12, UT__SEQ_DUP, false},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        ut__seq_verdict got = ut__seqwin_check(&w, steps[i].seq);
        if (got != steps[i].want)
            fail_msg("step %zu: seq %llu gives %d, want %d", i, (unsigned long long)steps[i].seq, got,
                     steps[i].want);
        if (steps[i].mark)
            ut__seqwin_mark(&w, steps[i].seq);
    }
}

/* The bitmap shifts across its words: every seq in a window that moved
 * by each distance from 1 to past its size is remembered exactly. */
static void test_reorder_seqwin_shifts(void **state)
{
    (void)state;
    for (uint64_t by = 1; by <= UT_SEQ_WINDOW + 2; by++) {
        ut__seqwin w;
        memset(&w, 0, sizeof w);
        /* Every third seq of 1000..1000+W-1 accepted. */
        uint64_t base = 1000;
        for (uint64_t s = base; s < base + UT_SEQ_WINDOW; s += 3)
            ut__seqwin_mark(&w, s);
        uint64_t top = base + UT_SEQ_WINDOW - 1 + by;
        ut__seqwin_mark(&w, top);
        for (uint64_t s = top - (UT_SEQ_WINDOW - 1); s < top; s++) {
            bool was = s < base + UT_SEQ_WINDOW && (s - base) % 3 == 0;
            ut__seq_verdict want = was ? UT__SEQ_DUP : UT__SEQ_NEW;
            if (ut__seqwin_check(&w, s) != want)
                fail_msg("shift by %llu: seq %llu", (unsigned long long)by, (unsigned long long)s);
        }
        assert_int_equal(ut__seqwin_check(&w, top), UT__SEQ_DUP);
    }
}

/* Issue 12: one event with seq 2^64-1 used to silence a tab for good
 * (every later seq was "not above the last one"). It is rejected and
 * counted, and the real sender goes on. */
static void test_reorder_seq_jump_rejected(void **state)
{
    (void)state;
    ut_engine *e = engine_default();
    for (uint64_t s = 1; s <= 3; s++) {
        ut_event ev = with_seq(ev_click("t", AT(s * 1000), "button", "Real", "real"), s);
        apply_ok(e, &ev);
    }
    ut_event bad = with_seq(ev_click("t", AT(3500), "button", "Forged", "forged"), UINT64_MAX);
    assert_int_equal(ut_engine_apply(e, &bad), UT_ELIMIT);
    bad.seq = 3 + UT_SEQ_JUMP_MAX + 1;
    assert_int_equal(ut_engine_apply(e, &bad), UT_ELIMIT);
    ut_event next = with_seq(ev_click("t", AT(4000), "button", "After", "after"), 4);
    apply_ok(e, &next);
    char *t = trace_text(e, "t");
    assert_non_null(strstr(t, "\"After\""));
    assert_null(strstr(t, "Forged"));
    free(t);
    assert_int_equal(stats_of(e).seq_jumps, 2);
    assert_int_equal(stats_of(e).duplicates, 0);
    ut_engine_free(e);
}

/* ---- Reordering ---- */

/* The trace of `s` applied in `order` (indices into s->events), every
 * event arriving at engine time `rt(i)`, then settled. */
typedef int64_t (*arrival_fn)(size_t i, const ut_event *ev);

/* The late events of the latest trace_after run (ut_engine_stats.late). */
static uint64_t last_late;

static char *trace_after(const session *s, const size_t *order, uint32_t reorder_ms, bool strip_seq,
                         arrival_fn rt, ut_buf *marks)
{
    ut_engine *e = engine_window(reorder_ms);
    int64_t last = 0;
    for (size_t k = 0; k < s->n; k++) {
        ut_event ev = s->events[order[k]];
        if (strip_seq)
            ev.has_seq = false;
        ev.rt_us = rt(k, &ev);
        if (ev.rt_us > last)
            last = ev.rt_us;
        ut_status st = ut_engine_apply(e, &ev);
        if (st != UT_OK)
            fail_msg("event %zu (%s): %s", order[k], ut_kind_name(ev.kind), ut_status_str(st));
    }
    ut_engine_advance(e, last + 60 * 1000 * MS);
    char *t = trace_text(e, "tab-bluewidget");
    last_late = stats_of(e).late;
    if (marks) {
        ut_engine_stats st = stats_of(e);
        ut_buf_printf(marks, "%llu", (unsigned long long)st.marks);
    }
    ut_engine_free(e);
    return t;
}

/* In order, each event arrives as it happens. */
static int64_t arrive_at_event_time(size_t i, const ut_event *ev)
{
    (void)i;
    return ev->time_us;
}

/* A client that buffers per tag and flushes every 5 s: each flush sends
 * its events grouped by tag, one message after another. */
#define FLUSH_US (5000 * MS)
static int64_t arrive_at_flush(size_t i, const ut_event *ev)
{
    (void)i;
    return (ev->time_us / FLUSH_US + 1) * FLUSH_US;
}

/* The order such a client sends `s` in: flush by flush, and within a
 * flush tag by tag in the order each tag first appeared. */
static void per_tag_order(const session *s, size_t *order)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n;) {
        int64_t flush = arrive_at_flush(i, &s->events[i]);
        size_t end = i;
        while (end < s->n && arrive_at_flush(end, &s->events[end]) == flush)
            end++;
        bool done[UT_KIND__COUNT] = {0};
        for (size_t j = i; j < end; j++) {
            ut_kind k = s->events[j].kind;
            if (done[k])
                continue;
            done[k] = true;
            for (size_t m = j; m < end; m++)
                if (s->events[m].kind == k)
                    order[n++] = m;
        }
        i = end;
    }
    assert_int_equal(n, s->n);
}

static void check_per_tag_batching(bool strip_seq)
{
    session s;
    session_load(&s, UT_FIXTURES_DIR "/sessions/bluewidget.json");
    size_t *in_order = calloc(s.n, sizeof *in_order), *batched = calloc(s.n, sizeof *batched);
    for (size_t i = 0; i < s.n; i++)
        in_order[i] = i;
    per_tag_order(&s, batched);
    bool shuffled = false;
    for (size_t i = 0; i < s.n; i++)
        shuffled = shuffled || batched[i] != i;
    assert_true(shuffled);

    ut_buf marks_in = UT_BUF_INIT, marks_batched = UT_BUF_INIT;
    char *want = trace_after(&s, in_order, UT_REORDER_DEFAULT_MS, strip_seq, arrive_at_event_time, &marks_in);
    /* A window in event time as long as the flush interval puts them back. */
    char *got = trace_after(&s, batched, 5000, strip_seq, arrive_at_flush, &marks_batched);
    if (strcmp(want, got) != 0)
        fail_msg("per-tag batching%s changes the trace:\n--- in order ---\n%s--- batched ---\n%s",
                 strip_seq ? " without seq" : "", want, got);
    assert_string_equal(marks_in.data, marks_batched.data);
    /* Without a window, the same input comes out wrong: the test can fail. */
    /* Without a window, the batched input comes late: each late event
     * still goes where it happened and links to the click it followed
     * (issue 21), so the trace is the same. */
    char *bad = trace_after(&s, batched, 0, strip_seq, arrive_at_flush, NULL);
    assert_true(last_late > 0);
    if (strcmp(want, bad) != 0)
        fail_msg("late events%s change the trace:\n--- in order ---\n%s--- late ---\n%s",
                 strip_seq ? " without seq" : "", want, bad);
    free(bad);
    free(want);
    free(got);
    ut_buf_free(&marks_in);
    ut_buf_free(&marks_batched);
    free(in_order);
    free(batched);
    session_free(&s);
}

static void test_reorder_per_tag_batching_with_seq(void **state)
{
    (void)state;
    check_per_tag_batching(false);
}

static void test_reorder_per_tag_batching_without_seq(void **state)
{
    (void)state;
    check_per_tag_batching(true);
}

/* The case: the click batch arrives before the alert batch. The
 * alert is the outcome of the click it followed, by event time, and the
 * lines are in event order. */
static void test_reorder_outcome_linked_by_event_time(void **state)
{
    (void)state;
    for (int sequenced = 0; sequenced < 2; sequenced++) {
        ut_engine *e = engine_window(UT_REORDER_DEFAULT_MS);
        ut_event save = ev_click("t", AT(0), "button", "Save", "save");
        ut_event next = ev_click("t", AT(2000), "button", "Next", "next");
        ut_event alert = ev_alert("t", AT(300), "Price must be positive", UT_LEVEL_ERROR);
        if (sequenced) {
            save = with_seq(save, 1);
            alert = with_seq(alert, 2);
            next = with_seq(next, 3);
        }
        int64_t flush = AT(2050);
        ut_event batch[] = {at_rt(save, flush), at_rt(next, flush), at_rt(alert, flush + 1)};
        for (size_t i = 0; i < 3; i++)
            apply_ok(e, &batch[i]);
        ut_engine_advance(e, flush + 10 * 1000 * MS);
        char line[512];
        char *t = trace_text(e, "t");
        assert_true(trace_line(t, 0, line, sizeof line));
        assert_string_equal(line, "click button \"Next\"");
        assert_true(trace_line(t, 1, line, sizeof line));
        assert_string_equal(line, "click button \"Save\" → error alert \"Price must be positive\"");
        free(t);
        ut_engine_stats st = stats_of(e);
        assert_int_equal(st.reordered, 1);
        assert_int_equal(st.late, 0);
        assert_int_equal(st.held, 0);
        ut_engine_free(e);
    }
}

/* Issue 21: an event that comes after the window let newer ones through
 * (a batching client's alert, seconds late) keeps its own time, goes where
 * it happened among the tab's lines, and is the outcome of the click it
 * followed, even one already judged "no response"; a late event
 * that is no outcome is a line of its own in its place. */
static void test_reorder_late_event_keeps_its_time(void **state)
{
    (void)state;
    ut_engine *e = engine_window(UT_REORDER_DEFAULT_MS);
    ut_event page = at_rt(ev_nav("t", AT(0), "https://shop.example.com/items", "Items", UT_NAV_LOAD), AT(0));
    ut_event big = at_rt(ev_mutation_big("t", AT(10)), AT(10));
    ut_event save = at_rt(ev_click("t", AT(1000), "button", "Save", "save"), AT(1000));
    ut_event next = at_rt(ev_click("t", AT(6000), "button", "Next", "next"), AT(6000));
    apply_ok(e, &page);
    apply_ok(e, &big);
    apply_ok(e, &save);
    /* Nothing answers Save in time: "no response" (the tab
     * reports mutations), until the late alert says otherwise. */
    ut_engine_advance(e, AT(1500) + UT_REORDER_DEFAULT_MS * MS);
    apply_ok(e, &next);
    ut_engine_advance(e, AT(8000) + UT_REORDER_DEFAULT_MS * MS);
    char *before = trace_text(e, "t");
    assert_non_null(strstr(before, "click button \"Save\" → no response"));
    free(before);
    /* The alert that followed Save, and an older change, arrive now. */
    ut_event alert = at_rt(ev_alert("t", AT(1300), "Price must be positive", UT_LEVEL_ERROR), AT(9500));
    ut_event typed = at_rt(ev_change("t", AT(500), "textbox", "Price", "price"), AT(9500));
    apply_ok(e, &alert);
    apply_ok(e, &typed);
    ut_engine_advance(e, AT(20000));
    char *t = trace_text(e, "t");
    char line[512];
    const char *want[] = {
        "click button \"Next\" → no response",
        "click button \"Save\" → error alert \"Price must be positive\"",
        "changed textbox \"Price\"",
        "navigate /items \"Items\"",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!trace_line(t, i, line, sizeof line))
            fail_msg("line %zu missing in:\n%s", i, t);
        if (strcmp(line, want[i]) != 0)
            fail_msg("line %zu: want %s, got %s in:\n%s", i, want[i], line, t);
    }
    free(t);
    assert_int_equal(stats_of(e).late, 2);
    ut_engine_free(e);
}

/* A browser sender stamps a click at the press and sends it after the
 * change the press's blur fired (a later time, an earlier seq). Next in
 * its sequence, the click is not late: it is the newest line and the
 * click awaiting its outcome. */
static void test_reorder_next_in_sequence_is_not_late(void **state)
{
    (void)state;
    ut_engine *e = engine_window(UT_REORDER_DEFAULT_MS);
    ut_event typed = at_rt(with_seq(ev_change("t", AT(878), "textbox", "Message", "msg"), 1), AT(880));
    ut_event send = at_rt(with_seq(ev_click("t", AT(864), "button", "Send", "send"), 2), AT(881));
    ut_event sent = at_rt(with_seq(ev_alert("t", AT(882), "Message sent", UT_LEVEL_INFO), 3), AT(883));
    apply_ok(e, &typed);
    apply_ok(e, &send);
    apply_ok(e, &sent);
    ut_engine_advance(e, AT(5000));
    char *t = trace_text(e, "t");
    char line[512];
    assert_true(trace_line(t, 0, line, sizeof line));
    assert_string_equal(line, "click button \"Send\" → info alert \"Message sent\"");
    assert_true(trace_line(t, 1, line, sizeof line));
    assert_string_equal(line, "changed textbox \"Message\"");
    free(t);
    ut_engine_free(e);
}

/* Issue 21: a batching client flushes an older tag after a newer one. The
 * older event says nothing of the tab's clock now: the newest held event
 * is still applied --reorder-ms after its arrival, not at the wait cap. */
static void test_reorder_old_batch_does_not_hold_the_newest(void **state)
{
    (void)state;
    ut_engine *e = engine_window(UT_REORDER_DEFAULT_MS);
    ut_event next = at_rt(ev_click("t", AT(5000), "button", "Next", "next"), AT(5100));
    ut_event alert = at_rt(ev_alert("t", AT(0), "Saved", UT_LEVEL_INFO), AT(5200));
    apply_ok(e, &next);
    apply_ok(e, &alert);
    assert_int_equal(ut_engine_next_deadline(e), AT(5100) + UT_REORDER_DEFAULT_MS * MS);
    ut_engine_advance(e, AT(5100) + UT_REORDER_DEFAULT_MS * MS);
    assert_int_equal(stats_of(e).held, 0);
    char *t = trace_text(e, "t");
    char line[512];
    assert_true(trace_line(t, 0, line, sizeof line));
    assert_string_equal(line, "click button \"Next\"");
    free(t);
    ut_engine_free(e);
}

/* Held events are released by later events and by ut_engine_advance,
 * never by a clock of the engine's own, and ut_engine_next_deadline says
 * when. */
static void test_reorder_release_by_advance(void **state)
{
    (void)state;
    ut_engine *e = engine_window(200);
    ut_event a = at_rt(ev_click("t", AT(0), "button", "A", "a"), AT(0));
    apply_ok(e, &a);
    char *t = trace_text(e, "t");
    assert_int_equal(trace_event_lines(t), 0); /* held: no seq to prove it is next */
    free(t);
    assert_int_equal(stats_of(e).held, 1);
    assert_int_equal(ut_engine_next_deadline(e), AT(200));
    ut_engine_advance(e, AT(199));
    assert_int_equal(stats_of(e).held, 1);
    ut_engine_advance(e, AT(200));
    assert_int_equal(stats_of(e).held, 0);
    t = trace_text(e, "t");
    assert_int_equal(trace_event_lines(t), 1);
    free(t);

    /* A later event (by the window, in event time) releases it too. */
    ut_event b = at_rt(ev_click("t", AT(1000), "button", "B", "b"), AT(1000));
    ut_event c = at_rt(ev_click("t", AT(1300), "button", "C", "c"), AT(1300));
    apply_ok(e, &b);
    apply_ok(e, &c);
    t = trace_text(e, "t");
    char line[128];
    assert_true(trace_line(t, 0, line, sizeof line));
    assert_string_equal(line, "click button \"B\"");
    free(t);
    assert_int_equal(stats_of(e).held, 1);
    ut_engine_free(e);
}

/* A sequenced stream in order waits for nothing; a gap holds what comes
 * after it until the gap is filled, or the window has passed. */
static void test_reorder_seq_gap(void **state)
{
    (void)state;
    ut_engine *e = engine_window(500);
    ut_event e1 = with_seq(at_rt(ev_click("t", AT(0), "button", "One", "e1"), AT(0)), 1);
    ut_event e3 = with_seq(at_rt(ev_click("t", AT(2000), "button", "Three", "e3"), AT(2000)), 3);
    ut_event e2 = with_seq(at_rt(ev_click("t", AT(1000), "button", "Two", "e2"), AT(2100)), 2);
    ut_event e5 = with_seq(at_rt(ev_click("t", AT(4000), "button", "Five", "e5"), AT(4000)), 5);
    apply_ok(e, &e1);
    char *t = trace_text(e, "t");
    assert_int_equal(trace_event_lines(t), 1);
    free(t);
    apply_ok(e, &e3);
    assert_int_equal(stats_of(e).held, 1);
    apply_ok(e, &e2); /* fills the gap: 2 and 3 go, in order */
    assert_int_equal(stats_of(e).held, 0);
    t = trace_text(e, "t");
    char line[128];
    assert_true(trace_line(t, 0, line, sizeof line));
    assert_string_equal(line, "click button \"Three\"");
    assert_true(trace_line(t, 1, line, sizeof line));
    assert_string_equal(line, "click button \"Two\"");
    free(t);
    /* Seq 4 never comes: 5 waits out the window, then goes. */
    apply_ok(e, &e5);
    assert_int_equal(stats_of(e).held, 1);
    ut_engine_advance(e, AT(4499));
    assert_int_equal(stats_of(e).held, 1);
    ut_engine_advance(e, AT(4500));
    assert_int_equal(stats_of(e).held, 0);
    /* 4 arriving now is late: applied (not a duplicate), and counted. */
    ut_event e4 = with_seq(at_rt(ev_click("t", AT(3000), "button", "Four", "e4"), AT(6000)), 4);
    apply_ok(e, &e4);
    ut_engine_stats st = stats_of(e);
    assert_int_equal(st.late, 1);
    assert_int_equal(st.duplicates, 0);
    assert_int_equal(st.applied[UT_KIND_CLICK], 5);
    assert_int_equal(ut_engine_apply(e, &e4), UT_EDUP);
    ut_engine_free(e);
}

/* A page stable mark is not claimed while an earlier mutation is held,
 * and the marks are those of the in-order stream. */
static void test_reorder_no_mark_past_a_held_event(void **state)
{
    (void)state;
    ut_engine *e = engine_window(1000);
    ut_event m1 = with_seq(ev_mutation_big("t", AT(0)), 1);
    ut_event m2 = with_seq(ev_mutation_big("t", AT(90)), 2);
    ut_event m3 = with_seq(ev_mutation_big("t", AT(180)), 3);
    m1 = at_rt(m1, AT(0));
    apply_ok(e, &m1);
    /* m3 comes first, before a mark after m1 would be due: the gap shows. */
    ut_event m3_late = at_rt(m3, AT(90));
    apply_ok(e, &m3_late);
    /* In order, m2 at 90 holds the page changing; its mark must wait. */
    ut_engine_advance(e, AT(800));
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("t"), &info), UT_OK);
    uint32_t marks_before = info.page.marks;
    ut_event m2_late = at_rt(m2, AT(900));
    apply_ok(e, &m2_late);
    ut_engine_advance(e, AT(10000));
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("t"), &info), UT_OK);

    ut_engine *ref = engine_window(0);
    apply_ok(ref, &m1);
    apply_ok(ref, &m2);
    apply_ok(ref, &m3);
    ut_engine_advance(ref, AT(10000));
    ut_tab_info want;
    assert_int_equal(ut_engine_tab_info(ref, UT_STR_LIT("t"), &want), UT_OK);
    assert_int_equal(info.page.marks, want.page.marks);
    assert_int_equal(info.page.since_us, want.page.since_us);
    assert_int_equal(info.page.state, want.page.state);
    /* Nothing was marked while m2 was missing. */
    assert_int_equal(marks_before, 0);
    ut_engine_free(ref);
    ut_engine_free(e);
}

/* The window is bounded: beyond UT_REORDER_HELD_MAX events, or
 * UT_REORDER_HELD_MAX_BYTES, the earliest is applied. */
static void test_reorder_window_caps(void **state)
{
    (void)state;
    ut_engine *e = engine_window(UT_REORDER_MAX_MS);
    for (int i = 0; i < UT_REORDER_HELD_MAX + 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        ut_event ev = at_rt(ev_click("t", AT(i * 10), "button", name, name), AT(i * 10));
        apply_ok(e, &ev);
        assert_true(stats_of(e).held <= UT_REORDER_HELD_MAX);
    }
    assert_int_equal(stats_of(e).held, UT_REORDER_HELD_MAX);
    assert_int_equal(stats_of(e).applied[UT_KIND_CLICK], 5);
    ut_engine_free(e);

    /* Mutation flushes of UT_MUTATION_RECS_MAX records with long element
     * keys: the byte cap binds long before the count cap. */
    e = engine_window(UT_REORDER_MAX_MS);
    static ut_mut_rec recs[UT_MUTATION_RECS_MAX];
    static char keys[UT_MUTATION_RECS_MAX][UT_EL_MAX_BYTES];
    for (int i = 0; i < UT_MUTATION_RECS_MAX; i++) {
        memset(keys[i], 'k', sizeof keys[i]);
        snprintf(keys[i], 8, "%05d", i);
        keys[i][5] = 'k';
        recs[i] = (ut_mut_rec){ut_str_from(keys[i], sizeof keys[i]), UT_MUT_CHILDLIST, 3, 10, 2, 100};
    }
    size_t per_event = sizeof recs + sizeof keys;
    _Static_assert(UT_REORDER_HELD_MAX * (sizeof recs + sizeof keys) > 4 * UT_REORDER_HELD_MAX_BYTES,
                   "the byte cap binds before the count cap here");
    for (int i = 0; i < 40; i++) {
        ut_event ev = at_rt(ev_mutation_big("t", AT(i)), AT(i));
        ev.recs = recs;
        ev.nrecs = UT_MUTATION_RECS_MAX;
        apply_ok(e, &ev);
        assert_true(stats_of(e).held * per_event <= UT_REORDER_HELD_MAX_BYTES);
    }
    assert_true(stats_of(e).applied[UT_KIND_MUTATION] >= 40 - UT_REORDER_HELD_MAX_BYTES / per_event);
    ut_engine_free(e);
}

/* No event waits more than UT_REORDER_WAIT_MAX_MS on the engine clock,
 * even when its sender's clock runs far ahead of the others'. */
static void test_reorder_wait_is_bounded(void **state)
{
    (void)state;
    ut_engine *e = engine_window(UT_REORDER_MAX_MS);
    ut_event a = at_rt(ev_click("t", AT(0), "button", "A", "a"), AT(0));
    apply_ok(e, &a);
    /* A later arrival with an old time pulls the tab's sender clock back. */
    ut_event old = at_rt(ev_click("t", AT(-60000), "button", "Old", "old"), AT(1));
    apply_ok(e, &old);
    assert_true(ut_engine_next_deadline(e) <= AT(UT_REORDER_WAIT_MAX_MS));
    ut_engine_advance(e, AT(UT_REORDER_WAIT_MAX_MS));
    assert_int_equal(stats_of(e).held, 0);
    ut_engine_free(e);
}

/* A close waits its turn like any event; what is held after it goes with
 * the tab, and is counted as lost. */
static void test_reorder_close_in_order(void **state)
{
    (void)state;
    ut_engine *e = engine_window(500);
    ut_event a = with_seq(at_rt(ev_click("t", AT(0), "button", "A", "a"), AT(0)), 1);
    ut_event close = with_seq(at_rt(ev_close("t", AT(2000)), AT(2000)), 3);
    ut_event b = with_seq(at_rt(ev_click("t", AT(1000), "button", "B", "b"), AT(2003)), 2);
    /* Within the window after the close: it does not release the close. */
    ut_event after = with_seq(at_rt(ev_click("t", AT(2100), "button", "After", "z"), AT(2002)), 5);
    apply_ok(e, &a);
    apply_ok(e, &close);
    apply_ok(e, &after);
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("t"), &info), UT_OK);
    apply_ok(e, &b); /* 2 then the close go; seq 5 is dropped with the tab */
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("t"), &info), UT_ENOENT);
    ut_engine_stats st = stats_of(e);
    assert_int_equal(st.applied[UT_KIND_CLICK], 2);
    assert_int_equal(st.applied[UT_KIND_CLOSE], 1);
    assert_int_equal(st.held, 0);
    assert_int_equal(st.lost, 1);
    ut_engine_free(e);
}

/* A close that comes late (after a later event was applied) closes the
 * tab at once. */
static void test_reorder_late_close(void **state)
{
    (void)state;
    ut_engine *e = engine_window(500);
    ut_event a = with_seq(at_rt(ev_click("t", AT(1000), "button", "A", "a"), AT(1000)), 1);
    ut_event close = with_seq(at_rt(ev_close("t", AT(500)), AT(1100)), 2);
    apply_ok(e, &a);
    apply_ok(e, &close);
    ut_tab_info info;
    assert_int_equal(ut_engine_tab_info(e, UT_STR_LIT("t"), &info), UT_ENOENT);
    ut_engine_stats st = stats_of(e);
    assert_int_equal(st.late, 1);
    assert_int_equal(st.applied[UT_KIND_CLOSE], 1);
    ut_engine_free(e);
}

/* ---- A function of the input ---- */

typedef struct seen {
    ut_buf log; /* every trace change, mark and applied event, in order */
    const ut_engine *engine;
} seen;

static void seen_applied(void *ud, const ut_event *ev)
{
    seen *s = ud;
    ut_buf_printf(&s->log, "applied %s %lld\n", ut_kind_name(ev->kind), (long long)ev->time_us);
}

static void seen_mark(void *ud, ut_str tab, const ut_mark *m)
{
    seen *s = ud;
    ut_buf_printf(&s->log, "mark %.*s %d %lld\n", (int)tab.len, tab.ptr, (int)m->state, (long long)m->time_us);
}

static void seen_trace(void *ud, ut_str tab)
{
    seen *s = ud;
    ut_buf text = UT_BUF_INIT;
    ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
    assert_int_equal(ut_engine_trace(s->engine, tab, &opts, &text), UT_OK);
    ut_buf_printf(&s->log, "trace %.*s\n%s", (int)tab.len, tab.ptr, text.data ? text.data : "");
    ut_buf_free(&text);
}

/* Feeds a shuffled per-tag stream of two tabs; with `jitter`, the clock
 * is advanced at pseudo-random points between events, as the daemon's
 * timer does at moments no recording keeps. */
static void run_observed(const session *s, const size_t *order, unsigned jitter, ut_buf *log)
{
    ut_engine *e = engine_window(UT_REORDER_DEFAULT_MS);
    seen sn = {UT_BUF_INIT, e};
    ut_observer obs = {.on_applied = seen_applied, .on_mark = seen_mark, .on_trace_changed = seen_trace, .ud = &sn};
    ut_engine_set_observer(e, &obs);
    unsigned rnd = jitter;
    int64_t prev = INT64_MIN;
    for (size_t k = 0; k < s->n; k++) {
        ut_event ev = s->events[order[k]];
        ev.rt_us = arrive_at_flush(k, &ev) + (int64_t)k; /* same flush, a few µs apart */
        if (jitter && prev != INT64_MIN && ev.rt_us > prev) {
            rnd = rnd * 1103515245u + 12345u;
            ut_engine_advance(e, prev + (int64_t)(rnd % (unsigned)(ev.rt_us - prev + 1)));
        }
        prev = ev.rt_us;
        ut_status st = ut_engine_apply(e, &ev);
        assert_true(st == UT_OK || st == UT_EDUP);
    }
    ut_engine_advance(e, prev + 60 * 1000 * MS);
    *log = sn.log;
    ut_engine_free(e);
}

static void test_reorder_pure_function_of_input(void **state)
{
    (void)state;
    session s;
    session_load(&s, UT_FIXTURES_DIR "/sessions/full20.json");
    size_t *order = calloc(s.n, sizeof *order);
    per_tag_order(&s, order);
    ut_buf want;
    run_observed(&s, order, 0, &want);
    assert_non_null(strstr(want.data, "mark"));
    for (unsigned seed = 1; seed <= 20; seed++) {
        ut_buf got;
        run_observed(&s, order, seed, &got);
        if (strcmp(want.data, got.data) != 0 && getenv("UT_REORDER_DUMP")) {
            FILE *f = fopen("/tmp/reorder-want.txt", "w");
            fputs(want.data, f);
            fclose(f);
            f = fopen("/tmp/reorder-got.txt", "w");
            fputs(got.data, f);
            fclose(f);
        }
        if (strcmp(want.data, got.data) != 0)
            fail_msg("advance calls at other moments (seed %u) change what the engine says", seed);
        ut_buf_free(&got);
    }
    ut_buf_free(&want);
    free(order);
    session_free(&s);
}

/* ---- Bounds and memory ---- */

static void test_reorder_config_bounds(void **state)
{
    (void)state;
    ut_config c;
    ut_config_defaults(&c);
    assert_int_equal(c.reorder_ms, UT_REORDER_DEFAULT_MS);
    ut_engine *e = NULL;
    char err[256];
    c.reorder_ms = UT_REORDER_MAX_MS + 1;
    assert_int_equal(ut_engine_new(&c, &e, err, sizeof err), UT_EINVAL);
    assert_non_null(strstr(err, "reorder window is 10001 ms"));
    c.reorder_ms = UT_REORDER_MAX_MS;
    c.idle_ms = UT_REORDER_MAX_MS;
    assert_int_equal(ut_engine_new(&c, &e, err, sizeof err), UT_EINVAL);
    assert_non_null(strstr(err, "shorter than the idle time"));
    c.idle_ms = UT_REORDER_MAX_MS + 1;
    assert_int_equal(ut_engine_new(&c, &e, err, sizeof err), UT_OK);
    ut_engine_free(e);
}

/* Every allocation of a batched session failing in turn: no leak, no
 * crash, and the engine answers every later call. */
static void test_reorder_oom_walk(void **state)
{
    (void)state;
    session s;
    session_load(&s, UT_FIXTURES_DIR "/sessions/bluewidget.json");
    size_t *order = calloc(s.n, sizeof *order);
    per_tag_order(&s, order);
    for (long n = 1;; n++) {
        fail_alloc_install(n, false);
        ut_engine *e = NULL;
        ut_config c;
        ut_config_defaults(&c);
        c.reorder_ms = 5000;
        ut_status st = ut_engine_new(&c, &e, NULL, 0);
        for (size_t k = 0; st == UT_OK && k < s.n; k++) {
            ut_event ev = s.events[order[k]];
            ev.rt_us = arrive_at_flush(k, &ev);
            ut_status a = ut_engine_apply(e, &ev);
            assert_true(a == UT_OK || a == UT_ENOMEM);
        }
        if (e) {
            ut_engine_advance(e, AT(3600 * 1000));
            ut_buf text = UT_BUF_INIT;
            ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
            (void)ut_engine_trace(e, UT_STR_LIT("tab-bluewidget"), &opts, &text);
            ut_buf_free(&text);
            ut_engine_free(e);
        }
        bool failed = fail_alloc_failed();
        long live = fail_alloc_live();
        fail_alloc_remove();
        if (live != 0)
            fail_msg("allocation %ld failing leaks %ld blocks", n, live);
        if (!failed)
            break;
    }
    free(order);
    session_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reorder_seqwin_table),
        cmocka_unit_test(test_reorder_seqwin_shifts),
        cmocka_unit_test(test_reorder_seq_jump_rejected),
        cmocka_unit_test(test_reorder_per_tag_batching_with_seq),
        cmocka_unit_test(test_reorder_per_tag_batching_without_seq),
        cmocka_unit_test(test_reorder_outcome_linked_by_event_time),
        cmocka_unit_test(test_reorder_late_event_keeps_its_time),
        cmocka_unit_test(test_reorder_old_batch_does_not_hold_the_newest),
        cmocka_unit_test(test_reorder_next_in_sequence_is_not_late),
        cmocka_unit_test(test_reorder_release_by_advance),
        cmocka_unit_test(test_reorder_seq_gap),
        cmocka_unit_test(test_reorder_no_mark_past_a_held_event),
        cmocka_unit_test(test_reorder_window_caps),
        cmocka_unit_test(test_reorder_wait_is_bounded),
        cmocka_unit_test(test_reorder_close_in_order),
        cmocka_unit_test(test_reorder_late_close),
        cmocka_unit_test(test_reorder_pure_function_of_input),
        cmocka_unit_test(test_reorder_config_bounds),
        cmocka_unit_test(test_reorder_oom_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

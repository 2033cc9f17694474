/* test_tune_observed: `uitrail tune --unlabelled` (issue 26 item 4): the
 * observed rules (tune_observed.c) on hand-made tabs, the latency
 * histogram and its merge, the objective, and the partial-result reader
 * (tune_partial.c) on a table of good, hostile and truncated inputs, with
 * a write -> read round trip and a merge that equals one run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tune.h"
#include "tune_observed.h"
#include "uitrail/limits.h"

#define MS(x) ((int64_t)(x) * 1000)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define FLAP MS(UT_TUNE_FLAP_WINDOW_MS)

/* ---- The rules ---- */

typedef struct obs_case {
    const char *what;
    int64_t marks[4];
    size_t nmarks;
    int64_t significant[4];
    size_t nsignificant;
    int64_t boundaries[4];
    size_t nboundaries;
    int64_t actions[4];
    size_t nactions;
    uint64_t flaps, settled, unsettled;
    int64_t latencies[4];
} obs_case;

static void test_tune_observed_rules(void **state)
{
    (void)state;
    static const obs_case cases[] = {
        {"a visible change 500 ms after a stable mark, no action: a flap", {MS(1000)}, 1, {MS(1500)}, 1, {0}, 0,
         {0}, 0, 1, 0, 0, {0}},
        {"the same with a click in between: no flap", {MS(1000)}, 1, {MS(1500)}, 1, {MS(1400)}, 1, {0}, 0, 0, 0, 0,
         {0}},
        {"typing (a boundary that is no answered action) in between: no flap", {MS(1000)}, 1, {MS(1500)}, 1,
         {MS(1200)}, 1, {0}, 0, 0, 0, 0, {0}},
        {"the change exactly at the window's end is a flap", {MS(1000)}, 1, {MS(1000) + FLAP}, 1, {0}, 0, {0}, 0,
         1, 0, 0, {0}},
        {"1 ms past the window: no flap", {MS(1000)}, 1, {MS(1001) + FLAP}, 1, {0}, 0, {0}, 0, 0, 0, 0, {0}},
        {"a change at the mark's own time comes after it: a flap", {MS(1000)}, 1, {MS(1000)}, 1, {0}, 0, {0}, 0, 1,
         0, 0, {0}},
        {"an action at the change's own time answers it: no flap", {MS(1000)}, 1, {MS(1300)}, 1, {MS(1300)}, 1,
         {MS(1300)}, 1, 0, 0, 1, {0}},
        {"a click answered 100 ms later, stable 300 ms after it", {MS(500), MS(1400)}, 2, {MS(1100)}, 1, {MS(1000)},
         1, {MS(1000)}, 1, 0, 1, 0, {MS(400)}},
        {"a click nothing answers is not counted", {MS(500)}, 1, {0}, 0, {MS(1000)}, 1, {MS(1000)}, 1, 0, 0, 0,
         {0}},
        {"a change past the response window does not answer the click", {MS(500), MS(9000)}, 2,
         {MS(1000) + MS(2001)}, 1, {MS(1000)}, 1, {MS(1000)}, 1, 0, 0, 0, {0}},
        {"a response after the next action is that action's", {MS(2500)}, 1, {MS(1500)}, 1, {MS(1000), MS(1200)}, 2,
         {MS(1000), MS(1200)}, 2, 0, 1, 0, {MS(1300)}},
        {"no stable mark after the response: unsettled", {MS(500)}, 1, {MS(1100)}, 1, {MS(1000)}, 1, {MS(1000)}, 1,
         0, 0, 1, {0}},
        {"a mark at the response's own time is before it: unsettled (and a flap)", {MS(1100)}, 1, {MS(1100)}, 1,
         {MS(1000)}, 1, {MS(1000)}, 1, 1, 0, 1, {0}},
        {"a settle past UT_TUNE_ACTION_SETTLE_MAX_MS: unsettled", {MS(1000) + MS(UT_TUNE_ACTION_SETTLE_MAX_MS) + 1},
         1, {MS(1100)}, 1, {MS(1000)}, 1, {MS(1000)}, 1, 0, 0, 1, {0}},
    };
    for (size_t i = 0; i < N(cases); i++) {
        const obs_case *c = &cases[i];
        ut_tune_obs_tab t = {c->marks, c->nmarks, c->significant, c->nsignificant, c->boundaries, c->nboundaries,
                             c->actions, c->nactions, MS(2000)};
        ut_tune_obs o = {0};
        int64_t lat[4] = {0};
        size_t n = ut_tune_observe_tab(&t, &o, lat);
        if (o.flaps != c->flaps || o.settled != c->settled || o.unsettled != c->unsettled || n != c->settled ||
            ut_tune_obs_answered(&t) != c->settled + c->unsettled)
            fail_msg("%s: flaps %llu settled %llu unsettled %llu", c->what, (unsigned long long)o.flaps,
                     (unsigned long long)o.settled, (unsigned long long)o.unsettled);
        assert_int_equal(o.marks, c->nmarks);
        for (size_t k = 0; k < n; k++)
            if (lat[k] != c->latencies[k])
                fail_msg("%s: latency %zu is %lld", c->what, k, (long long)lat[k]);
    }
}

/* ---- The histogram ---- */

static void test_tune_observed_hist(void **state)
{
    (void)state;
    int64_t a[] = {MS(300) + 999, MS(100), MS(300), MS(200)};
    int64_t b[] = {MS(300), MS(50)};
    ut_tune_hist ha, hb;
    assert_int_equal(ut_tune_hist_from_us(&ha, a, N(a)), UT_OK);
    assert_int_equal(ut_tune_hist_from_us(&hb, b, N(b)), UT_OK);
    assert_int_equal(ha.n, 3); /* 100, 200, 300 (x2: 300.999 ms is 300 whole ms) */
    assert_int_equal(ha.bins[2].count, 2);
    assert_int_equal(ut_tune_hist_rank(&ha, 50), 200);
    assert_int_equal(ut_tune_hist_rank(&ha, 95), 300);
    assert_int_equal(ut_tune_hist_add(&ha, &hb), UT_OK);
    assert_int_equal(ha.total, 6);
    assert_int_equal(ha.n, 4);
    assert_int_equal(ha.bins[0].ms, 50);
    assert_int_equal(ha.bins[3].count, 3);
    /* The merged histogram is the one built from every latency at once. */
    int64_t all[] = {MS(300) + 999, MS(100), MS(300), MS(200), MS(300), MS(50)};
    ut_tune_hist hall;
    assert_int_equal(ut_tune_hist_from_us(&hall, all, N(all)), UT_OK);
    assert_int_equal(hall.n, ha.n);
    assert_memory_equal(hall.bins, ha.bins, ha.n * sizeof *ha.bins);
    assert_int_equal(ut_tune_hist_rank(&hall, 50), 200); /* rank 3 of 6 */
    ut_tune_hist_free(&ha);
    ut_tune_hist_free(&hb);
    ut_tune_hist_free(&hall);
}

/* ---- The objective ---- */

static ut_tune_obs_summary row(uint64_t flaps, uint64_t unsettled, uint32_t median, uint64_t caps)
{
    return (ut_tune_obs_summary){.obs = {.flaps = flaps, .unsettled = unsettled, .caps = caps},
                                 .has_latency = true, .median_ms = median, .p95_ms = median + 50};
}

static void test_tune_observed_recommend(void **state)
{
    (void)state;
    ut_tune_obs_summary rows[] = {
        row(10, 0, 200, 0), /* 0: the defaults */
        row(30, 0, 100, 0), /* 1: faster, but flaps more: out */
        row(8, 0, 150, 0),  /* 2: faster with fewer flaps: the one */
        row(8, 1, 120, 0),  /* 3: faster still, but leaves an action unsettled: out */
        row(2, 0, 400, 0),  /* 4: fewest flaps, slow */
    };
    unsigned changed[] = {0, 1, 1, 1, 1};
    assert_int_equal(ut_tune_obs_recommend(rows, changed, N(rows), &rows[0]), 2);
    size_t front[N(rows)];
    size_t n = ut_tune_obs_front(rows, N(rows), front);
    /* Every row but the defaults (dominated by 2) is on the front, fastest first. */
    assert_int_equal(n, 4);
    assert_int_equal(front[0], 1);
    assert_int_equal(front[1], 3);
    assert_int_equal(front[2], 2);
    assert_int_equal(front[3], 4);
    /* A tie is broken by the fewest parameters changed. */
    ut_tune_obs_summary tie[] = {row(5, 0, 200, 0), row(5, 0, 200, 0)};
    unsigned tie_changed[] = {2, 0};
    assert_int_equal(ut_tune_obs_recommend(tie, tie_changed, 2, &tie[0]), 1);
    /* When nothing meets the constraints: the fewest flaps. */
    ut_tune_obs_summary ref = row(0, 0, 200, 0);
    assert_int_equal(ut_tune_obs_recommend(rows, changed, N(rows), &ref), 4);
    /* No latency is the slowest. */
    ut_tune_obs_summary none[] = {row(1, 0, 0, 0), row(1, 0, 900, 0)};
    none[0].has_latency = false;
    assert_int_equal(ut_tune_obs_recommend(none, tie_changed, 2, &none[0]), 1);
}

/* ---- Partial results ---- */

/* A small grid: quiet_ms 100 or 200, everything else at its default, so
 * 2 + 2 settings. */
static void small_result(ut_tune_observed *o, uint64_t seed)
{
    *o = (ut_tune_observed){0};
    ut_tune_grid_defaults(&o->grid);
    char why[256];
    assert_true(ut_tune_grid_parse(&o->grid,
                                   "enter_threshold=0.5;exit_threshold=0.02;quiet_ms=100,200;window_ms=300;"
                                   "busy_cap_ms=10000",
                                   why, sizeof why));
    assert_true(ut_tune_grid_count(&o->grid));
    o->nsettings = o->grid.nsettings + UT_TUNE_NREFS;
    assert_int_equal(o->nsettings, 4);
    assert_int_equal(ut_tune_observed_alloc(o), UT_OK);
    o->sessions = 2 + seed;
    o->tabs = 3 + seed;
    o->answered = 3;
    o->span_us = 1000000 * (seed + 1);
    for (size_t k = 0; k < o->nsettings; k++) {
        o->obs[k] = (ut_tune_obs){.marks = 10 + k, .flaps = k + seed, .caps = 1, .settled = 2, .unsettled = 1};
        int64_t lat[] = {MS(100 + 10 * (int64_t)k), MS(250 + (int64_t)seed)};
        assert_int_equal(ut_tune_hist_from_us(&o->latency[k], lat, 2), UT_OK);
    }
}

/* Writes `o` to a string (caller frees). */
static char *write_result(const ut_tune_observed *o, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    assert_int_equal(ut_tune_observed_write(f, o), UT_OK);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void test_tune_partial_round_trip_and_merge(void **state)
{
    (void)state;
    ut_tune_observed a, b, back;
    small_result(&a, 0);
    small_result(&b, 5);
    size_t len;
    char *text = write_result(&a, &len);
    char why[256] = "";
    assert_int_equal(ut_tune_observed_parse(text, len, &back, why, sizeof why), UT_OK);
    size_t len2;
    char *again = write_result(&back, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(text, again, len);
    /* Merge: the sums, and the histograms added. */
    assert_int_equal(ut_tune_observed_merge(&back, &b, why, sizeof why), UT_OK);
    assert_int_equal(back.sessions, 2 + 7);
    assert_int_equal(back.answered, 6);
    assert_int_equal(back.obs[1].flaps, 1 + 6);
    assert_int_equal(back.latency[1].total, 4);
    assert_int_equal(ut_tune_hist_rank(&back.latency[1], 95), 255);
    /* Another grid does not merge. */
    ut_tune_observed other;
    small_result(&other, 0);
    other.grid.values[2][1] = 300; /* quiet_ms 100,300 */
    assert_int_equal(ut_tune_observed_merge(&back, &other, why, sizeof why), UT_EINVAL);
    assert_non_null(strstr(why, "--grid"));
    free(text); /* open_memstream's */
    free(again);
    ut_tune_observed_free(&a);
    ut_tune_observed_free(&b);
    ut_tune_observed_free(&back);
    ut_tune_observed_free(&other);
}

/* The good document the table edits: the small result written. */
static char *good_document(void)
{
    ut_tune_observed o;
    small_result(&o, 0);
    size_t len;
    char *text = write_result(&o, &len);
    ut_tune_observed_free(&o);
    return text;
}

/* `doc` with the first `from` replaced by `to` (caller frees). */
static char *edit(const char *doc, const char *from, const char *to)
{
    const char *at = strstr(doc, from);
    if (!at)
        fail_msg("the good document lacks %s", from);
    size_t n = strlen(doc) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - doc), doc, to, at + strlen(from));
    return out;
}

typedef struct partial_case {
    const char *what;
    const char *from, *to; /* the edit of the good document; from NULL: `to` is the whole input */
    ut_status want;
    const char *why; /* a word of the reason */
} partial_case;

static void test_tune_partial_table(void **state)
{
    (void)state;
    static const partial_case cases[] = {
        {"the good document", "\"version\":1", "\"version\":1", UT_OK, ""},
        {"not JSON", NULL, "uitrail", UT_EPROTO, "bad JSON"},
        {"empty", NULL, "", UT_EPROTO, "bad JSON"},
        {"truncated", NULL, "{\"format\":\"uitrail-tune-partial\",\"version\":1,\"grid\":{", UT_EPROTO, "bad JSON"},
        {"an array", NULL, "[1,2]", UT_EPROTO, "not a partial"},
        {"another format", "uitrail-tune-partial", "uitrail-tune-partiaX", UT_EPROTO, "not a partial"},
        {"another version", "\"version\":1", "\"version\":2", UT_EPROTO, "version"},
        {"a duplicate key", "\"version\":1", "\"version\":1,\"version\":1", UT_EPROTO, "bad JSON"},
        {"an unknown field", "\"version\":1", "\"version\":1,\"extra\":0", UT_EPROTO, "unknown field"},
        {"a negative count", "\"sessions\":2", "\"sessions\":-2", UT_EPROTO, "sessions"},
        {"a count past 2^53", "\"sessions\":2", "\"sessions\":9007199254740992", UT_EPROTO, "sessions"},
        {"a real for a count", "\"sessions\":2", "\"sessions\":2.5", UT_EPROTO, "sessions"},
        {"a string for a count", "\"tabs\":3", "\"tabs\":\"3\"", UT_EPROTO, "tabs"},
        {"a grid value out of bounds", "\"quiet_ms\":[100,200]", "\"quiet_ms\":[100,99999999]", UT_EPROTO,
         "quiet_ms"},
        {"a U32 parameter not whole", "\"quiet_ms\":[100,200]", "\"quiet_ms\":[100,200.5]", UT_EPROTO, "quiet_ms"},
        {"a grid without values", "\"quiet_ms\":[100,200]", "\"quiet_ms\":[]", UT_EPROTO, "quiet_ms"},
        {"a grid missing a parameter", "\"quiet_ms\":[100,200],", "", UT_EPROTO, "every parameter"},
        {"a grid naming an unknown parameter", "\"quiet_ms\"", "\"quiet_mz\"", UT_EPROTO, "quiet_ms"},
        {"settings of another count", "\"settings\":[", "\"settings\":[{},", UT_EPROTO, "want 4"},
        {"a setting that is no object",
         "\"settings\":[{\"marks\":10,\"flaps\":0,\"caps\":1,\"settled\":2,\"unsettled\":1,\"latency_ms\":[[100,1],[250,1]]}",
         "\"settings\":[1", UT_EPROTO, "want objects"},
        {"a setting missing a count", "\"marks\":10,", "", UT_EPROTO, "marks"},
        {"a setting with an unknown field", "\"marks\":10,", "\"marks\":10,\"mark\":1,", UT_EPROTO,
         "unknown field"},
        {"more flaps than marks", "\"marks\":10,\"flaps\":0", "\"marks\":10,\"flaps\":11", UT_EPROTO,
         "more flaps"},
        {"settled and unsettled not adding up", "\"settled\":2,\"unsettled\":1", "\"settled\":2,\"unsettled\":2",
         UT_EPROTO, "add up"},
        {"latencies not adding up", "\"latency_ms\":[[100,1],[250,1]]", "\"latency_ms\":[[100,1],[250,2]]",
         UT_EPROTO, "latency_ms"},
        {"latencies out of order", "\"latency_ms\":[[100,1],[250,1]]", "\"latency_ms\":[[250,1],[100,1]]",
         UT_EPROTO, "ascending"},
        {"a latency repeated", "\"latency_ms\":[[100,1],[250,1]]", "\"latency_ms\":[[100,1],[100,1]]", UT_EPROTO,
         "ascending"},
        {"a latency past its bound", "\"latency_ms\":[[100,1],[250,1]]", "\"latency_ms\":[[100,1],[60001,1]]",
         UT_EPROTO, "latency_ms"},
        {"a zero count", "\"latency_ms\":[[100,1],[250,1]]", "\"latency_ms\":[[100,2],[250,0]]", UT_EPROTO,
         "latency_ms"},
        {"a pair of three", "\"latency_ms\":[[100,1],[250,1]]", "\"latency_ms\":[[100,1,1],[250,1]]", UT_EPROTO,
         "latency_ms"},
        {"a huge count", "\"latency_ms\":[[100,1],[250,1]]", "\"latency_ms\":[[100,1],[250,18446744073709551615]]",
         UT_EPROTO, "bad JSON"},
        {"deep nesting", NULL,
         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
         UT_EPROTO, "bad JSON"},
    };
    char *good = good_document();
    for (size_t i = 0; i < N(cases); i++) {
        const partial_case *c = &cases[i];
        char *doc = c->from ? edit(good, c->from, c->to) : strdup(c->to);
        ut_tune_observed o;
        char why[256] = "";
        ut_status st = ut_tune_observed_parse(doc, strlen(doc), &o, why, sizeof why);
        if (st != c->want || !strstr(why, c->why))
            fail_msg("%s: status %d, why '%s'", c->what, st, why);
        if (st == UT_OK)
            ut_tune_observed_free(&o);
        free(doc);
    }
    /* Every truncation of the good document is refused, none crashes. */
    size_t len = strlen(good);
    for (size_t cut = 0; cut + 1 < len; cut++) {
        ut_tune_observed o;
        char why[256];
        if (ut_tune_observed_parse(good, cut, &o, why, sizeof why) == UT_OK)
            fail_msg("the document cut at %zu was read", cut);
    }
    /* Nesting deeper than the JSON reader goes. */
    size_t depth = 100000;
    char *deep = malloc(depth + 1);
    memset(deep, '[', depth);
    deep[depth] = '\0';
    {
        ut_tune_observed o;
        char why[256];
        assert_int_equal(ut_tune_observed_parse(deep, depth, &o, why, sizeof why), UT_EPROTO);
    }
    free(deep);
    /* Over the size limit. */
    ut_tune_observed o;
    char why[256];
    assert_int_equal(ut_tune_observed_parse(good, (size_t)UT_TUNE_PARTIAL_MAX_BYTES + 1, &o, why, sizeof why),
                     UT_ELIMIT);
    free(good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tune_observed_rules),
        cmocka_unit_test(test_tune_observed_hist),
        cmocka_unit_test(test_tune_observed_recommend),
        cmocka_unit_test(test_tune_partial_round_trip_and_merge),
        cmocka_unit_test(test_tune_partial_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

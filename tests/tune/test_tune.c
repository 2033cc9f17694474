/* test_tune: the metrics of `uitrail tune` (tune_metrics.c) on tiny
 * hand-made sessions, the Pareto front and the recommendation, the SVG
 * writer's escaping, and the stream-to-engine driver (drive.c) on JSON and
 * on a recording written by the record module's writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "drive.h"
#include "tune_metrics.h"
#include "tune_plot.h"
#include "uitrail/limits.h"

#define MS(x) ((int64_t)(x) * 1000)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Metrics ---- */

typedef struct score_case {
    const char *what;
    int64_t marks[6];
    size_t nmarks;
    int64_t settles[4];
    size_t nsettles;
    int64_t starts[4];
    size_t nstarts;
    uint32_t premature, missed;
    int64_t latencies[4]; /* expected, in order of the settles found */
} score_case;

static void test_tune_score_table(void **state)
{
    (void)state;
    static const score_case cases[] = {
        {"a mark 200 ms after the settle", {MS(1200)}, 1, {MS(1000)}, 1, {0}, 1, 0, 0, {MS(200)}},
        {"a mark before the settle is premature, and the settle is found by the next",
         {MS(500), MS(1300)}, 2, {MS(1000)}, 1, {0}, 1, 1, 0, {MS(300)}},
        {"two premature marks", {MS(300), MS(600), MS(1100)}, 3, {MS(1000)}, 1, {0}, 1, 2, 0, {MS(100)}},
        {"a mark exactly at the settle is on time", {MS(1000)}, 1, {MS(1000)}, 1, {0}, 1, 0, 0, {0}},
        {"no mark at all: missed", {0}, 0, {MS(1000)}, 1, {0}, 1, 0, 1, {0}},
        {"a mark exactly at the window's end is found",
         {MS(1000) + MS(UT_TUNE_SETTLE_WINDOW_MS)}, 1, {MS(1000)}, 1, {0}, 1, 0, 0, {MS(UT_TUNE_SETTLE_WINDOW_MS)}},
        {"a mark 1 ms past the window: missed", {MS(1001) + MS(UT_TUNE_SETTLE_WINDOW_MS)}, 1, {MS(1000)}, 1, {0}, 1,
         0, 1, {0}},
        {"a stable mark after the settle, before a later change: not premature",
         {MS(1200), MS(2000), MS(3300)}, 3, {MS(1000), MS(3100)}, 2, {0, MS(3000)}, 2, 0, 0, {MS(200), MS(200)}},
        {"a stable mark between a click and its settle is premature",
         {MS(1200), MS(3050), MS(3300)}, 3, {MS(1000), MS(3100)}, 2, {0, MS(3000)}, 2, 1, 0, {MS(200), MS(200)}},
        {"after a change that no settle follows, a mark is not premature",
         {MS(1200), MS(3500)}, 2, {MS(1000)}, 1, {0, MS(3000)}, 2, 0, 0, {MS(200)}},
        {"one mark finds two settles that both fall within its window",
         {MS(1500)}, 1, {MS(1000), MS(1200)}, 2, {0}, 1, 0, 0, {MS(500), MS(300)}},
        {"a mark at a change start belongs to the new change", {MS(1200), MS(3000)}, 2, {MS(1000), MS(3400)}, 2,
         {0, MS(3000)}, 2, 1, 1, {MS(200)}},
        {"no change start before the mark: never premature", {MS(100)}, 1, {MS(1000)}, 1, {MS(500)}, 1, 0, 1, {0}},
    };
    for (size_t i = 0; i < N(cases); i++) {
        const score_case *c = &cases[i];
        ut_tune_score score = {0};
        int64_t lat[4] = {-1, -1, -1, -1};
        ut_tune_score_tab(c->marks, c->nmarks, c->settles, c->nsettles, c->starts, c->nstarts, &score, lat);
        if (score.premature != c->premature || score.missed != c->missed || score.settles != c->nsettles ||
            score.latencies != c->nsettles - c->missed)
            fail_msg("%s: premature %u missed %u settles %u latencies %u", c->what, score.premature, score.missed,
                     score.settles, score.latencies);
        for (uint32_t k = 0; k < score.latencies; k++)
            if (lat[k] != c->latencies[k])
                fail_msg("%s: latency %u is %lld, expected %lld", c->what, k, (long long)lat[k],
                         (long long)c->latencies[k]);
    }
}

/* Scores of several tabs add up; latencies follow each other. */
static void test_tune_score_accumulates(void **state)
{
    (void)state;
    const int64_t a_marks[] = {MS(100), MS(1300)}, a_settles[] = {MS(1000)}, a_starts[] = {0};
    const int64_t b_settles[] = {MS(500)}, b_starts[] = {0};
    ut_tune_score score = {0};
    int64_t lat[2];
    ut_tune_score_tab(a_marks, 2, a_settles, 1, a_starts, 1, &score, lat);
    ut_tune_score_tab(NULL, 0, b_settles, 1, b_starts, 1, &score, lat + score.latencies);
    assert_int_equal(score.premature, 1);
    assert_int_equal(score.missed, 1);
    assert_int_equal(score.settles, 2);
    assert_int_equal(score.latencies, 1);
    assert_int_equal(lat[0], MS(300));

    ut_tune_summary sum = {0};
    ut_tune_summary_add(&sum, &score);
    ut_tune_summary_add(&sum, &(ut_tune_score){.premature = 0, .missed = 0, .settles = 3, .latencies = 3});
    assert_int_equal(sum.premature_sessions, 1);
    assert_int_equal(sum.premature_marks, 1);
    assert_int_equal(sum.missed, 1);
    assert_int_equal(sum.settles, 5);
}

static void test_tune_latency_percentiles(void **state)
{
    (void)state;
    /* Nearest rank: the median of 1..20 is the 10th, the p95 the 19th. */
    int64_t lat[20];
    for (int i = 0; i < 20; i++)
        lat[i] = MS(20 - i); /* unsorted on purpose */
    ut_tune_summary sum = {0};
    ut_tune_summary_latency(&sum, lat, 20);
    assert_true(sum.has_latency);
    assert_int_equal(sum.median_us, MS(10));
    assert_int_equal(sum.p95_us, MS(19));

    int64_t one[] = {MS(7)};
    ut_tune_summary_latency(&sum, one, 1);
    assert_int_equal(sum.median_us, MS(7));
    assert_int_equal(sum.p95_us, MS(7));

    ut_tune_summary_latency(&sum, NULL, 0);
    assert_false(sum.has_latency);
    assert_int_equal(ut_tune_summary_p95_key(&sum), INT64_MAX);
}

static ut_tune_summary row(uint32_t premature, uint32_t missed, int64_t p95_ms, int64_t median_ms)
{
    return (ut_tune_summary){.premature_sessions = premature, .missed = missed, .settles = 10,
                             .has_latency = p95_ms >= 0, .p95_us = MS(p95_ms), .median_us = MS(median_ms)};
}

static void test_tune_pareto_front(void **state)
{
    (void)state;
    const ut_tune_summary rows[] = {
        row(0, 1, 300, 250), /* 0: front */
        row(0, 1, 400, 100), /* 1: dominated by 0 */
        row(2, 0, 100, 90),  /* 2: front */
        row(1, 1, 200, 150), /* 3: front (faster than 0, fewer premature than 2) */
        row(0, 1, 300, 200), /* 4: front, ties with 0 on the three, better median */
        row(0, 5, -1, 0),    /* 5: finds nothing: dominated */
        row(3, 0, 100, 90),  /* 6: dominated by 2 */
    };
    size_t front[N(rows)];
    size_t n = ut_tune_pareto_front(rows, N(rows), front);
    assert_int_equal(n, 4);
    /* Sorted: premature, missed, p95, median. */
    assert_int_equal(front[0], 4);
    assert_int_equal(front[1], 0);
    assert_int_equal(front[2], 3);
    assert_int_equal(front[3], 2);

    assert_true(ut_tune_dominates(&rows[0], &rows[1]));
    assert_false(ut_tune_dominates(&rows[0], &rows[4]));
    assert_false(ut_tune_dominates(&rows[0], &rows[0]));
    assert_true(ut_tune_dominates(&rows[2], &rows[6]));
    assert_true(ut_tune_dominates(&rows[0], &rows[5]));
}

static void test_tune_recommend(void **state)
{
    (void)state;
    const ut_tune_summary rows[] = {
        row(1, 0, 100, 100), /* fast, but premature */
        row(0, 2, 200, 150),
        row(0, 1, 500, 300),
        row(0, 1, 300, 250),
        row(0, 1, 300, 250), /* same scores as 3, fewer changes */
    };
    unsigned changed[] = {0, 0, 0, 2, 1};
    assert_int_equal(ut_tune_recommend(rows, changed, N(rows)), 4);
    unsigned same[] = {0, 0, 0, 1, 1};
    assert_int_equal(ut_tune_recommend(rows, same, N(rows)), 3); /* then the first */

    /* When every row is premature, the best of them. */
    const ut_tune_summary all_bad[] = {row(2, 0, 100, 100), row(1, 3, 900, 800), row(1, 2, 900, 800)};
    unsigned none[] = {0, 0, 0};
    assert_int_equal(ut_tune_recommend(all_bad, none, N(all_bad)), 2);
}

/* ---- The SVG writer ---- */

static void test_tune_plot_escapes_text(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    const ut_tune_sample samples[] = {{MS(0), 0.0, 1}, {MS(20), 0.5, 1}, {MS(40), 0.2, 0}};
    const ut_tune_plot_mark marks[] = {{MS(10), UT_PAGE_CHANGING}, {MS(40), UT_PAGE_STABLE}};
    const int64_t settles[] = {MS(30)};
    ut_tune_plot plot = {"a <b> & \"c\"\x01", "sub", samples, 3, marks, 2, settles, 1, 0.1, 0.02};
    assert_true(ut_tune_plot_svg(out, &plot));
    fclose(out);
    assert_non_null(strstr(text, "<title>a &lt;b&gt; &amp; &quot;c&quot;?</title>"));
    assert_null(strstr(text, "<b>"));
    assert_non_null(strstr(text, "<polyline class=\"intensity\""));
    assert_non_null(strstr(text, "stroke=\"#2e9e44\""));  /* the stable mark */
    assert_non_null(strstr(text, "<g class=\"busy\""));
    assert_non_null(strstr(text, "</svg>\n"));
    free(text); /* open_memstream's */
}

/* ---- The driver ---- */

/* What a drive delivered: events, labels, and the engine's marks. */
typedef struct drive_log {
    ut_buf text;
    unsigned events, labels;
} drive_log;

static ut_status log_event(void *ud, const ut_event *ev)
{
    drive_log *log = ud;
    log->events++;
    return ut_buf_printf(&log->text, "event %s %lld\n", ut_kind_name(ev->kind), (long long)ev->time_us);
}

static void log_label(void *ud, ut_str tab, int64_t time_us)
{
    drive_log *log = ud;
    log->labels++;
    ut_buf_printf(&log->text, "label %.*s %lld\n", (int)tab.len, tab.ptr, (long long)time_us);
}

static void log_mark(void *ud, ut_str tab, const ut_mark *m)
{
    drive_log *log = ud;
    ut_buf_printf(&log->text, "mark %.*s %s %lld\n", (int)tab.len, tab.ptr, ut_page_state_name(m->state),
                  (long long)m->time_us);
}

/* Drives `in` through a fresh engine; returns the log of marks (and of
 * events and labels when `with_events`). */
static void drive_logged(const ut_cli_input *in, bool with_events, drive_log *log)
{
    ut_config cfg;
    ut_config_defaults(&cfg);
    ut_engine *engine;
    char err[128];
    assert_int_equal(ut_engine_new(&cfg, &engine, err, sizeof err), UT_OK);
    const ut_observer obs = {.on_mark = log_mark, .ud = log};
    ut_engine_set_observer(engine, &obs);
    ut_rec_reader *reader;
    assert_int_equal(ut_rec_reader_new(&reader), UT_OK);
    ut_cli_drive d = {.command = "test", .path = "mem", .engine = engine,
                      .before_event = with_events ? log_event : NULL,
                      .on_label = with_events ? log_label : NULL, .ud = log};
    assert_int_equal(ut_cli_drive_begin(&d), UT_OK);
    assert_int_equal(ut_cli_drive_input(&d, in, reader), UT_OK);
    ut_cli_drive_settle(&d);
    ut_cli_drive_end(&d);
    ut_rec_reader_free(reader);
    ut_engine_free(engine);
}

static ut_status collect_for_writer(void *ud, const ut_event *ev);

typedef struct rec_build {
    ut_rec_writer *w;
    ut_buf file;
} rec_build;

static ut_status collect_for_writer(void *ud, const ut_event *ev)
{
    rec_build *rb = ud;
    ut_str frame;
    ut_status st = ut_rec_writer_append(rb->w, ev, &frame);
    if (st == UT_OK && frame.len)
        st = ut_buf_append(&rb->file, frame.ptr, frame.len);
    return st;
}

/* A labelled fixture: its labels come through the stream, and a recording
 * of its events, written by the record module's writer in small frames,
 * drives the engine to the same marks as the fixture itself. */
static void test_tune_drive_json_and_recording(void **state)
{
    (void)state;
    ut_cli_input json;
    assert_int_equal(ut_cli_input_load("test", UT_FIXTURES_DIR "/sessions/labelled/click_dialog.json", &json),
                     UT_OK);
    assert_int_equal(json.kind, UT_CLI_INPUT_JSON);
    drive_log from_json = {UT_BUF_INIT, 0, 0};
    drive_logged(&json, true, &from_json);
    assert_int_equal(from_json.labels, 3);
    assert_non_null(strstr(from_json.text.data, "label t 1700000003047000\n"));
    assert_non_null(strstr(from_json.text.data, "mark t stable"));

    /* The recording: every event through the writer. */
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    opts.frame_bytes = UT_REC_FRAME_CUT_MIN_BYTES;
    ut_rec_meta meta = {.time_us = 1700000000000000, .daemon = UT_STR_LIT("test"), .tab = UT_STR_LIT("t")};
    rec_build rb = {NULL, UT_BUF_INIT};
    char err[128];
    assert_int_equal(ut_rec_writer_new(&opts, &meta, &rb.w, err, sizeof err), UT_OK);
    ut_fwd_decoder *dec;
    assert_int_equal(ut_fwd_decoder_new(&dec), UT_OK);
    const ut_fwd_sink sink = {.on_event = collect_for_writer, .ud = &rb};
    assert_int_equal(ut_fwd_decoder_feed(dec, json.bytes.data, json.bytes.len, &sink), UT_OK);
    ut_fwd_decoder_free(dec);
    ut_str frame;
    assert_int_equal(ut_rec_writer_flush(rb.w, &frame), UT_OK);
    assert_int_equal(ut_buf_append(&rb.file, frame.ptr, frame.len), UT_OK);
    ut_rec_writer_stats stats;
    ut_rec_writer_stats_get(rb.w, &stats);
    assert_true(stats.frames > 3);
    ut_rec_writer_free(rb.w);

    ut_cli_input rec = {.kind = ut_cli_input_kind_of(rb.file.data, rb.file.len), .bytes = rb.file};
    assert_int_equal(rec.kind, UT_CLI_INPUT_RECORDING);
    drive_log marks_rec = {UT_BUF_INIT, 0, 0}, marks_json = {UT_BUF_INIT, 0, 0};
    drive_logged(&rec, false, &marks_rec);
    drive_logged(&json, false, &marks_json);
    assert_non_null(marks_json.text.data);
    assert_string_equal(marks_rec.text.data, marks_json.text.data);

    /* A recording cut inside its last frame loses that frame only. */
    ut_cli_input torn = rec;
    torn.bytes.len -= 5;
    drive_log marks_torn = {UT_BUF_INIT, 0, 0};
    ut_config cfg;
    ut_config_defaults(&cfg);
    ut_engine *engine;
    assert_int_equal(ut_engine_new(&cfg, &engine, err, sizeof err), UT_OK);
    ut_rec_reader *reader;
    assert_int_equal(ut_rec_reader_new(&reader), UT_OK);
    ut_cli_drive d = {.command = "test", .path = "mem", .engine = engine, .quiet = true,
                      .before_event = log_event, .ud = &marks_torn};
    assert_int_equal(ut_cli_drive_begin(&d), UT_OK);
    assert_int_equal(ut_cli_drive_input(&d, &torn, reader), UT_OK);
    assert_int_equal(d.damage, 1);
    assert_true(marks_torn.events > 0 && marks_torn.events < from_json.events);
    ut_cli_drive_end(&d);
    ut_rec_reader_free(reader);
    ut_engine_free(engine);

    ut_buf_free(&marks_torn.text);
    ut_buf_free(&marks_rec.text);
    ut_buf_free(&marks_json.text);
    ut_buf_free(&from_json.text);
    ut_buf_free(&rb.file);
    ut_cli_input_free(&json);
}

static void test_tune_input_kinds(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
        ut_cli_input_kind kind;
    } cases[] = {
        {"\x28\xb5\x2f\xfd\x00", 5, UT_CLI_INPUT_RECORDING},
        {"\x50\x2a\x4d\x18\x00", 5, UT_CLI_INPUT_RECORDING}, /* a skippable frame */
        {"  \n[", 4, UT_CLI_INPUT_JSON},
        {"{\"a\":1}", 7, UT_CLI_INPUT_JSON},
        {"\x93\xabuitrail", 10, UT_CLI_INPUT_MSGPACK},
        {"\xc0", 1, UT_CLI_INPUT_MSGPACK},
        {"", 0, UT_CLI_INPUT_MSGPACK},
        {"\x28\xb5", 2, UT_CLI_INPUT_MSGPACK}, /* too short for a frame */
    };
    for (size_t i = 0; i < N(cases); i++)
        if (ut_cli_input_kind_of(cases[i].bytes, cases[i].len) != cases[i].kind)
            fail_msg("case %zu: wrong kind", i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tune_score_table),
        cmocka_unit_test(test_tune_score_accumulates),
        cmocka_unit_test(test_tune_latency_percentiles),
        cmocka_unit_test(test_tune_pareto_front),
        cmocka_unit_test(test_tune_recommend),
        cmocka_unit_test(test_tune_plot_escapes_text),
        cmocka_unit_test(test_tune_drive_json_and_recording),
        cmocka_unit_test(test_tune_input_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

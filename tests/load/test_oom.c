/* Out-of-memory walk over the daemon's whole data path, without the
 * daemon: a fixture session's JSON body is converted to msgpack, fed in
 * small pieces through a Forward decoder whose sink applies each event to
 * an engine (as src/daemon/ingest.c does), every applied event is turned
 * into its SSE JSON and its recording entry (as sse.c and recorder.c do),
 * and then every serializer runs: the text trace plain, framed and cut,
 * the JSON trace and GET /v1/tabs.
 *
 * tests/core, tests/wire and tests/record walk each module alone; this
 * walks them chained, where an allocation failure in one stage meets the
 * error handling of the next. Each allocation through ut_malloc and
 * friends fails in turn (then every allocation from some point on): the
 * run must end with UT_OK or UT_ENOMEM from each stage, free every block
 * it took, and, when nothing was reported lost, produce exactly what the
 * run without failures produced. msgpack-c's own buffers do not go
 * through ut_malloc; their leaks are left to the ASan and valgrind runs.
 *
 * This walk found jansson's lexer writing past its buffer when one of its
 * allocations fails (jansson issue #362): src/wire/json.c no longer hands
 * jansson a failure of ut_malloc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fail_alloc.h"

#include "uitrail/engine.h"
#include "uitrail/wire.h"

/* Bytes handed to the decoder per feed: small and odd, so that messages
 * arrive split at every kind of boundary and the decoder's pending-message
 * path is walked too. */
#define FEED_PIECE_BYTES 97
/* The engine clock is moved this far past the last event before the
 * serializers run, so that marks and dead clicks are settled. */
#define SETTLE_US (INT64_C(10) * 1000000)

/* ---- one run of the pipeline ---- */

/* What one run produced. `out` holds every serializer's output, each
 * behind a label, in a fixed order; it is compared whole with the
 * reference run's. */
typedef struct run_result {
    ut_status convert;   /* JSON body to msgpack */
    ut_status setup;     /* engine and decoder creation */
    ut_status feed;      /* the decoder's last feed */
    ut_status serialize; /* UT_ENOMEM if any serializer ran out */
    unsigned applied;    /* events the engine took */
    unsigned lost;       /* events the engine refused with UT_ENOMEM */
    unsigned other;      /* any other apply result: never expected */
    unsigned rejected;   /* records the decoder rejected: never expected */
    unsigned event_json_nomem; /* applied events whose SSE JSON ran out */
    unsigned event_pack_nomem; /* ... whose recording entry ran out */
    int64_t last_time_us;
    long convert_allocs; /* allocation calls made by the end of the conversion */
    /* The test's own record of the outputs. It is written with stdio
     * (open_memstream), not ut_malloc, so that it neither shifts the walk
     * nor fails with it. */
    FILE *out;
    char *out_data;
    size_t out_len;
} run_result;

typedef struct run_ctx {
    ut_engine *engine;
    run_result *r;
    /* Reused from event to event, as the daemon reuses its own buffers:
     * each grows only when an event needs more than the last. */
    ut_buf event_json;
    ut_buf event_entry;
} run_ctx;

static void on_applied(void *ud, const ut_event *ev)
{
    run_ctx *ctx = ud;
    ut_buf_reset(&ctx->event_json);
    if (ut_event_to_json(ev, &ctx->event_json) != UT_OK)
        ctx->r->event_json_nomem++;
    else
        fwrite(ctx->event_json.data, 1, ctx->event_json.len, ctx->r->out);
    ut_buf_reset(&ctx->event_entry);
    if (ut_wire_pack_event(ev, true, &ctx->event_entry) != UT_OK) {
        ctx->r->event_pack_nomem++;
    } else {
        fwrite(ctx->event_entry.data, 1, ctx->event_entry.len, ctx->r->out);
        fputc('\n', ctx->r->out);
    }
}

static ut_status sink_event(void *ud, const ut_event *ev)
{
    run_ctx *ctx = ud;
    ut_status st = ut_engine_apply(ctx->engine, ev);
    if (st == UT_OK)
        ctx->r->applied++;
    else if (st == UT_ENOMEM)
        ctx->r->lost++; /* the daemon counts it and goes on: so do we */
    else
        ctx->r->other++;
    if (ev->time_us > ctx->r->last_time_us)
        ctx->r->last_time_us = ev->time_us;
    return UT_OK;
}

static void sink_reject(void *ud, ut_reject why, const char *detail)
{
    run_ctx *ctx = ud;
    (void)why;
    (void)detail;
    ctx->r->rejected++;
}

/* Tab names, copied with the C library's allocator (test bookkeeping). */
#define TABS_MAX 16

typedef struct tab_list {
    char *names[TABS_MAX];
    unsigned count;
} tab_list;

static bool collect_tab(void *ud, const ut_tab_info *t)
{
    tab_list *tabs = ud;
    assert_true(tabs->count < TABS_MAX);
    tabs->names[tabs->count] = strndup(t->tab.ptr, t->tab.len);
    assert_non_null(tabs->names[tabs->count]);
    tabs->count++;
    return true;
}

/* Runs one serializer into `out` under `label`, folding its status into
 * r->serialize. A serializer that fails must say so: UT_ENOMEM, never a
 * partial success. */
static void serialized(run_result *r, const char *label, ut_status st, const ut_buf *text)
{
    if (st == UT_ENOMEM) {
        r->serialize = UT_ENOMEM;
        return;
    }
    if (st != UT_OK)
        fail_msg("%s gave %s", label, ut_status_str(st));
    if (text->oom)
        fail_msg("%s returned UT_OK with its buffer marked out of memory", label);
    fprintf(r->out, "\n--- %s ---\n", label);
    fwrite(text->data, 1, text->len, r->out);
}

static void serialize_all(ut_engine *e, run_result *r)
{
    tab_list tabs = {{NULL}, 0};
    ut_engine_each_tab(e, collect_tab, &tabs);
    static const struct {
        const char *label;
        ut_trace_opts opts;
    } variants[] = {
        {"text", {UT_TRACE_TEXT, 0, 0, false}},
        {"text framed", {UT_TRACE_TEXT, 0, 0, true}},
        {"text limit 3, 60 tokens", {UT_TRACE_TEXT, 3, 60, false}},
        {"json", {UT_TRACE_JSON, 0, 0, false}},
        {"json limit 2", {UT_TRACE_JSON, 2, 0, false}},
    };
    ut_buf text = UT_BUF_INIT;
    for (unsigned t = 0; t < tabs.count; t++) {
        const char *name = tabs.names[t];
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            ut_buf_reset(&text);
            ut_status st = ut_engine_trace(e, ut_str_cstr(name), &variants[v].opts, &text);
            char label[256];
            snprintf(label, sizeof label, "trace of %s, %s", name, variants[v].label);
            serialized(r, label, st, &text);
        }
    }
    ut_buf_reset(&text);
    serialized(r, "tabs", ut_engine_tabs_json(e, &text), &text);
    ut_buf_free(&text);
    for (unsigned t = 0; t < tabs.count; t++)
        free(tabs.names[t]);
}

/* Drives `json` (a session fixture) through the whole path. Every block
 * taken through ut_malloc is freed before it returns, whatever failed. */
static void run_pipeline(const char *json, size_t json_len, run_result *r)
{
    memset(r, 0, sizeof *r);
    r->out = open_memstream(&r->out_data, &r->out_len);
    assert_non_null(r->out);
    ut_buf body = UT_BUF_INIT;
    char err[256];
    r->convert = ut_wire_json_to_msgpack(ut_str_from(json, json_len), &body, err, sizeof err);
    r->convert_allocs = fail_alloc_calls();
    if (r->convert != UT_OK) {
        ut_buf_free(&body);
        fclose(r->out);
        return;
    }
    run_ctx ctx = {NULL, r, UT_BUF_INIT, UT_BUF_INIT};
    ut_fwd_decoder *dec = NULL;
    r->setup = ut_engine_new(NULL, &ctx.engine, err, sizeof err);
    if (r->setup == UT_OK)
        r->setup = ut_fwd_decoder_new(&dec);
    if (r->setup == UT_OK) {
        ut_engine_set_observer(ctx.engine, &(ut_observer){.on_applied = on_applied, .ud = &ctx});
        ut_fwd_sink sink = {sink_event, sink_reject, NULL, NULL, &ctx};
        for (size_t at = 0; at < body.len && r->feed == UT_OK; at += FEED_PIECE_BYTES) {
            size_t n = body.len - at < FEED_PIECE_BYTES ? body.len - at : FEED_PIECE_BYTES;
            r->feed = ut_fwd_decoder_feed(dec, body.data + at, n, &sink);
        }
        if (r->feed == UT_OK && ut_fwd_decoder_pending(dec) != 0)
            fail_msg("the decoder holds %zu bytes after the whole body", ut_fwd_decoder_pending(dec));
        ut_engine_advance(ctx.engine, r->last_time_us + SETTLE_US);
        serialize_all(ctx.engine, r);
    }
    ut_fwd_decoder_free(dec);
    ut_engine_free(ctx.engine);
    ut_buf_free(&ctx.event_json);
    ut_buf_free(&ctx.event_entry);
    ut_buf_free(&body);
    fclose(r->out);
}

static bool run_clean(const run_result *r)
{
    return r->convert == UT_OK && r->setup == UT_OK && r->feed == UT_OK && r->serialize == UT_OK &&
           r->lost == 0 && r->event_json_nomem == 0 && r->event_pack_nomem == 0;
}

static void check_statuses(const run_result *r, const char *what, long n)
{
    const ut_status st[] = {r->convert, r->setup, r->feed, r->serialize};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        if (st[i] != UT_OK && st[i] != UT_ENOMEM)
            fail_msg("%s %ld: a stage gave %s, not UT_OK or UT_ENOMEM", what, n, ut_status_str(st[i]));
    }
    if (r->other || r->rejected)
        fail_msg("%s %ld: %u events refused and %u records rejected for a reason other than memory",
                 what, n, r->other, r->rejected);
}

/* ---- the walks ---- */

static char *load_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/sessions/%s", UT_FIXTURES_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    *len = (size_t)size;
    return text;
}

/* The walk takes every allocation in turn. Under valgrind, which runs it
 * some 50 times slower, the valgrind test setup (meson.build) sets
 * UT_OOM_WALK_STRIDE: then the walk takes every stride-th allocation of
 * the JSON conversion (most of them: jansson's, one per value) and still
 * every one after it. The plain and sanitizer builds walk them all. */
static long walk_stride(void)
{
    const char *text = getenv("UT_OOM_WALK_STRIDE");
    long stride = text ? strtol(text, NULL, 10) : 1;
    return stride >= 1 ? stride : 1;
}

/* The step after `n` in a walk up to `last`, which is always taken;
 * strided up to `strided_until`. */
static long walk_next(long n, long stride, long strided_until, long last)
{
    long next = n < strided_until ? n + stride : n + 1;
    if (n < strided_until && next > strided_until)
        next = strided_until + 1;
    return n < last && next > last ? last : next;
}

/* Events in a session fixture: its "uitrail.<kind>" tags (the fixtures
 * hold events only). */
static unsigned count_events(const char *json)
{
    unsigned n = 0;
    for (const char *p = json; (p = strstr(p, "[\"uitrail.")) != NULL; p++)
        n++;
    return n;
}

/* Walks every allocation of the fixture's run, then every "all allocations
 * from here on fail" cut. */
static void walk_fixture(const char *fixture)
{
    size_t len;
    char *json = load_fixture(fixture, &len);
    unsigned want_events = count_events(json);
    assert_true(want_events > 0);

    run_result ref;
    fail_alloc_install(0, false);
    run_pipeline(json, len, &ref);
    long total = fail_alloc_calls();
    long live = fail_alloc_live();
    fail_alloc_remove();
    assert_int_equal(live, 0);
    assert_true(run_clean(&ref));
    assert_int_equal(ref.applied, want_events);
    assert_true(total > (long)want_events);

    /* The n-th allocation alone fails: every n, or every stride-th under
     * valgrind (see walk_stride). Count where the failures landed, to show
     * the walk reached every stage. */
    long stride = walk_stride();
    long failed_convert = 0, failed_setup = 0, failed_feed = 0, failed_apply = 0,
         failed_event_json = 0, failed_event_pack = 0, failed_serialize = 0;
    for (long n = 1; n <= total + 1; n = walk_next(n, stride, ref.convert_allocs, total + 1)) {
        run_result r;
        fail_alloc_install(n, false);
        run_pipeline(json, len, &r);
        bool failed = fail_alloc_failed();
        live = fail_alloc_live();
        fail_alloc_remove();
        if (live != 0)
            fail_msg("%s: allocation %ld of %ld failing leaks %ld blocks", fixture, n, total, live);
        check_statuses(&r, "allocation", n);
        if (!failed)
            assert_int_equal(n, total + 1); /* every call before the last was made to fail */
        if (run_clean(&r)) {
            /* Nothing reported: then nothing may differ. */
            if (r.out_len != ref.out_len || memcmp(r.out_data, ref.out_data, r.out_len) != 0)
                fail_msg("%s: allocation %ld failing changed the output without an error:\n%s",
                         fixture, n, r.out_data);
        } else {
            assert_true(failed);
            if (r.lost && r.applied + r.lost != want_events)
                fail_msg("%s: allocation %ld: %u applied + %u lost != %u sent", fixture, n,
                         r.applied, r.lost, want_events);
            failed_convert += r.convert == UT_ENOMEM;
            failed_setup += r.setup == UT_ENOMEM;
            failed_feed += r.feed == UT_ENOMEM;
            failed_apply += r.lost > 0;
            failed_event_json += r.event_json_nomem > 0;
            failed_event_pack += r.event_pack_nomem > 0;
            failed_serialize += r.serialize == UT_ENOMEM;
        }
        free(r.out_data);
    }
    print_message("%s: failures in conversion %ld, set-up %ld, decoding %ld, apply %ld, event JSON "
                  "%ld, recording entry %ld, serializers %ld\n",
                  fixture, failed_convert, failed_setup, failed_feed, failed_apply,
                  failed_event_json, failed_event_pack, failed_serialize);
    assert_true(failed_convert > 0 && failed_setup > 0 && failed_feed > 0 && failed_apply > 0 &&
                failed_event_json > 0 && failed_event_pack > 0 && failed_serialize > 0);

    /* Every allocation from the n-th on fails. */
    for (long n = 1; n <= total; n = walk_next(n, stride, ref.convert_allocs, total)) {
        run_result r;
        fail_alloc_install(n, true);
        run_pipeline(json, len, &r);
        live = fail_alloc_live();
        fail_alloc_remove();
        if (live != 0)
            fail_msg("%s: allocations from %ld of %ld failing leak %ld blocks", fixture, n, total,
                     live);
        check_statuses(&r, "allocations from", n);
        assert_false(run_clean(&r));
        free(r.out_data);
    }
    if (stride == 1)
        print_message("%s: %ld allocations walked one by one and as a cut\n", fixture, total);
    else
        print_message("%s: %ld allocations walked one by one and as a cut, of the conversion's %ld "
                      "one in %ld\n", fixture, total, ref.convert_allocs, stride);
    free(ref.out_data);
    free(json);
}

static void test_oom_walk_bluewidget(void **state)
{
    (void)state;
    walk_fixture("bluewidget.json");
}

static void test_oom_walk_full20(void **state)
{
    (void)state;
    walk_fixture("full20.json");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oom_walk_bluewidget),
        cmocka_unit_test(test_oom_walk_full20),
    };
    return cmocka_run_group_tests_name("oom", tests, NULL, NULL);
}

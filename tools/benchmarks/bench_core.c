/* bench_core: in-process benchmarks of the core and the decoder, on the
 * synthetic workload of workload.c.
 *
 *   bench_core trace [ITERATIONS [text|json]]
 *                                    ns per ut_engine_trace of a full ring,
 *                                    text and JSON (or only the one named)
 *   bench_core mutation [EVENTS]     ns per mutation flush and per record
 *                                    through ut_engine_apply (the scorer)
 *   bench_core ingest [EVENTS]       ns per event from Forward bytes to the
 *                                    ring: decode, validate, redact, apply
 *   bench_core memory TABS           resident bytes per tab with a full ring
 *   bench_core memory-limits TABS [BUDGET]
 *                                    tabs with every field at its limit under
 *                                    --max-memory BUDGET (default 100 MiB; 0:
 *                                    none): tabs kept, bytes counted, RSS
 *   bench_core redact-text LEN FILL N
 *                                    N ut_redact_text of FILL repeated to LEN
 *                                    bytes, nothing printed: run it under
 *                                    callgrind (instructions do not depend
 *                                    on the machine's load)
 *   bench_core redact [EVENTS]       ns per ut_redact_event: a typical click;
 *                                    an event with every text field at its
 *                                    limit of ordinary UI text, and of each
 *                                    hostile fill ("1 1 1 ...", ...)
 *
 * Prints name=value results on one line. Timed loops run a few times and
 * the median is reported, as the machine is shared and noisy. */
#include "workload.h"

#include "uitrail/engine.h"
#include "uitrail/redact.h"
#include "uitrail/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPEATS 5
#define STEPS_MAX_TO_FILL (UT__BENCH_SCRIPT_STEPS * 10)
#define INGEST_FEED_BYTES (64u << 10) /* one socket read of the daemon */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(const char *what, ut_status st)
{
    fprintf(stderr, "bench_core: %s: %s\n", what, ut_status_str(st));
    exit(1);
}

static ut_engine *engine_new(uint32_t max_tabs)
{
    ut_config cfg;
    ut_config_defaults(&cfg);
    if (max_tabs > cfg.max_tabs) {
        cfg.max_tabs = max_tabs;
        cfg.max_memory = 0; /* a million ordinary tabs hold more than the default budget */
        cfg.idle_ms = UINT32_MAX; /* and their start times spread over hours */
    }
    char err[256];
    ut_engine *e;
    ut_status st = ut_engine_new(&cfg, &e, err, sizeof err);
    if (st != UT_OK) {
        fprintf(stderr, "bench_core: cannot create an engine: %s\n", err);
        exit(1);
    }
    return e;
}

static void apply_step(ut_engine *e, uint32_t tab, uint64_t step)
{
    ut__bench_event be;
    ut__bench_event_make(&be, tab, step);
    ut_status st = ut_engine_apply(e, &be.ev);
    if (st != UT_OK)
        fail("applying a workload event", st);
}

/* Applies tab `tab`'s script until its ring is full; returns the steps it
 * took. A script that never fills the ring is a workload bug. */
static uint32_t fill_tab(ut_engine *e, uint32_t tab)
{
    char id[24];
    ut__bench_tab_id(tab, id, sizeof id);
    uint32_t ring = ut_engine_config(e)->ring_size;
    for (uint32_t step = 0; step < STEPS_MAX_TO_FILL; step++) {
        apply_step(e, tab, step);
        ut_tab_info info;
        if (ut_engine_tab_info(e, ut_str_cstr(id), &info) == UT_OK && info.events >= ring &&
            (step + 1) % UT__BENCH_SCRIPT_STEPS == 0)
            return step + 1;
    }
    fprintf(stderr, "bench_core: the workload did not fill a %u-entry ring in %u steps\n", ring,
            STEPS_MAX_TO_FILL);
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* The median nanoseconds of one ut_engine_trace of `tab`; out of line for
 * the profiler, as ingest_stream. */
__attribute__((noinline)) static double trace_ns(ut_engine *e, ut_str tab, ut_trace_format format, uint32_t iterations, size_t *bytes)
{
    ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
    opts.format = format;
    ut_buf out = UT_BUF_INIT;
    double runs[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < iterations; i++) {
            ut_buf_reset(&out);
            ut_status st = ut_engine_trace(e, tab, &opts, &out);
            if (st != UT_OK)
                fail("serializing a trace", st);
        }
        runs[r] = (double)(now_ns() - t0) / iterations;
    }
    *bytes = out.len;
    ut_buf_free(&out);
    return median(runs, REPEATS);
}

/* Both formats, or only `only` ("text" or "json") when it is not NULL:
 * the profiler looks at one format at a time. */
static void bench_trace(uint32_t iterations, const char *only)
{
    ut_engine *e = engine_new(0);
    uint32_t steps = fill_tab(e, 0);
    char id[24];
    ut__bench_tab_id(0, id, sizeof id);
    printf("steps_to_fill=%u", steps);
    static const struct {
        const char *name;
        ut_trace_format format;
    } formats[] = {{"text", UT_TRACE_TEXT}, {"json", UT_TRACE_JSON}};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        if (only && strcmp(only, formats[i].name) != 0)
            continue;
        size_t bytes;
        double ns = trace_ns(e, ut_str_cstr(id), formats[i].format, iterations, &bytes);
        printf(" trace_%s_ns=%.0f trace_%s_bytes=%zu", formats[i].name, ns, formats[i].name, bytes);
    }
    putchar('\n');
    ut_engine_free(e);
}

/* Mutation flushes of the workload over 100 tabs, applied in time order:
 * each tab's script is walked and only its flushes are kept. */
static void bench_mutation(uint32_t events)
{
    enum { TABS = 100 };
    ut__bench_event *all = ut_malloc(sizeof *all * events);
    if (!all) {
        fputs("bench_core: out of memory\n", stderr);
        exit(1);
    }
    uint64_t records = 0;
    uint32_t n = 0;
    for (uint64_t step = 0; n < events; step++) {
        if (!ut__bench_step_is_mutation(step))
            continue;
        for (uint32_t tab = 0; tab < TABS && n < events; tab++, n++) {
            ut__bench_event_make(&all[n], tab, step);
            records += all[n].ev.nrecs;
        }
    }
    /* ut__bench_event_make points the event into its own struct, so the
     * array must not move after it is filled: it does not. */
    double runs[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        ut_engine *e = engine_new(0);
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < events; i++) {
            ut_status st = ut_engine_apply(e, &all[i].ev);
            if (st != UT_OK)
                fail("applying a mutation flush", st);
        }
        runs[r] = (double)(now_ns() - t0);
        ut_engine_free(e);
    }
    double total = median(runs, REPEATS);
    printf("mutation_event_ns=%.0f mutation_record_ns=%.0f records_per_flush=%.2f\n", total / events,
           total / (double)records, (double)records / events);
    ut_free(all);
}

typedef struct ingest_state {
    ut_engine *engine;
    uint64_t applied;
    uint64_t refused;
} ingest_state;

static ut_status ingest_event(void *ud, const ut_event *ev)
{
    ingest_state *s = ud;
    if (ut_engine_apply(s->engine, ev) == UT_OK)
        s->applied++;
    else
        s->refused++;
    return UT_OK;
}

static void ingest_reject(void *ud, ut_reject why, const char *detail)
{
    (void)why;
    ((ingest_state *)ud)->refused++;
    fprintf(stderr, "bench_core: the decoder rejected a workload record: %s\n", detail);
}

/* Feeds `stream` to a fresh decoder in 64 KiB pieces, as the daemon reads
 * it, with a sink that applies each event to `s->engine`; returns the
 * nanoseconds it took. Kept out of line so that a profiler can be told to
 * count this function alone (tools/bench --profile: callgrind's
 * --toggle-collect=ingest_stream). */
__attribute__((noinline)) static double ingest_stream(ingest_state *s, const ut_buf *stream)
{
    ut_fwd_decoder *d;
    if (ut_fwd_decoder_new(&d) != UT_OK)
        fail("creating a decoder", UT_ENOMEM);
    const ut_fwd_sink sink = {.on_event = ingest_event, .on_reject = ingest_reject, .ud = s};
    uint64_t t0 = now_ns();
    for (size_t off = 0; off < stream->len; off += INGEST_FEED_BYTES) {
        size_t len = stream->len - off < INGEST_FEED_BYTES ? stream->len - off : INGEST_FEED_BYTES;
        ut_status st = ut_fwd_decoder_feed(d, stream->data + off, len, &sink);
        if (st != UT_OK)
            fail(ut_fwd_decoder_error(d), st);
    }
    double ns = (double)(now_ns() - t0);
    ut_fwd_decoder_free(d);
    return ns;
}

/* The daemon's ingest path without the sockets, on 1 000 tabs with events
 * round-robin over them. */
static void bench_ingest(uint32_t events)
{
    enum { TABS = 1000 };
    ut_buf stream = UT_BUF_INIT;
    for (uint32_t i = 0; i < events; i++) {
        ut__bench_event be;
        ut__bench_event_make(&be, i % TABS, i / TABS);
        if (ut_wire_pack_event(&be.ev, false, &stream) != UT_OK)
            fail("packing the stream", UT_ENOMEM);
    }
    double runs[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        ingest_state s = {.engine = engine_new(0)};
        runs[r] = ingest_stream(&s, &stream);
        if (s.applied != events) {
            fprintf(stderr, "bench_core: %" PRIu64 " of %u events applied (%" PRIu64 " refused)\n", s.applied,
                    events, s.refused);
            exit(1);
        }
        ut_engine_free(s.engine);
    }
    double total = median(runs, REPEATS);
    printf("ingest_event_ns=%.0f ingest_rate=%.0f stream_bytes_per_event=%.0f\n", total / events,
           events / (total / 1e9), (double)stream.len / events);
    ut_buf_free(&stream);
}

/* VmRSS of this process, in bytes. */
static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %" SCNu64 " kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

/* Nanoseconds per text trace of a tab spread over all `tabs` (a stride by
 * a large prime), so that a large table's cache misses are in the figure. */
static double trace_spread_ns(ut_engine *e, uint32_t tabs, uint32_t reads)
{
    ut_trace_opts opts = UT_TRACE_OPTS_DEFAULT;
    ut_buf out = UT_BUF_INIT;
    char id[24];
    uint64_t elapsed = 0;
    for (uint32_t i = 0; i < reads; i++) {
        ut__bench_tab_id((uint32_t)(((uint64_t)i * 2654435761u) % tabs), id, sizeof id);
        ut_buf_reset(&out);
        uint64_t t0 = now_ns();
        ut_status st = ut_engine_trace(e, ut_str_cstr(id), &opts, &out);
        elapsed += now_ns() - t0;
        if (st != UT_OK)
            fail("serializing a trace", st);
    }
    ut_buf_free(&out);
    return (double)elapsed / reads;
}

/* Resident bytes per tab with a full ring, the counted bytes (ut__tab_bytes)
 * beside them, how long filling took per event (generating the event
 * included) and a text trace read of a tab anywhere in the table. */
static void bench_memory(uint32_t tabs)
{
    ut_engine *e = engine_new(tabs);
    uint64_t before = rss_bytes();
    uint64_t t0 = now_ns();
    uint32_t steps = fill_tab(e, 0);
    for (uint32_t tab = 1; tab < tabs; tab++)
        for (uint32_t step = 0; step < steps; step++)
            apply_step(e, tab, step);
    double fill_ns = (double)(now_ns() - t0) / ((double)tabs * steps);
    uint64_t after = rss_bytes();
    ut_engine_stats stats;
    ut_engine_stats_get(e, &stats);
    if (stats.tabs != tabs) {
        fprintf(stderr, "bench_core: %" PRIu64 " tabs kept of %u\n", stats.tabs, tabs);
        exit(1);
    }
    printf("tabs=%u rss_before=%" PRIu64 " rss_after=%" PRIu64 " bytes_per_tab=%.0f counted_per_tab=%.0f "
           "events_per_tab=%u fill_event_ns=%.0f trace_spread_ns=%.0f\n",
           tabs, before, after, (double)(after - before) / tabs, (double)stats.tab_bytes / tabs, steps,
           fill_ns, trace_spread_ns(e, tabs, 20000));
    ut_engine_free(e);
}

/* The median nanoseconds of one ut_redact_event of `ev`. */
__attribute__((noinline)) static double redact_ns(ut_redactor *r, const ut_event *ev, uint32_t events)
{
    ut_buf scratch = UT_BUF_INIT;
    double runs[REPEATS];
    for (int k = 0; k < REPEATS; k++) {
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < events; i++) {
            ut_buf_reset(&scratch);
            ut_event out;
            ut_status st = ut_redact_event(r, ev, &out, &scratch);
            if (st != UT_OK)
                fail("redacting an event", st);
        }
        runs[k] = (double)(now_ns() - t0) / events;
    }
    ut_buf_free(&scratch);
    return median(runs, REPEATS);
}

/* `pattern` repeated to `len` bytes (cut on a character boundary). */
static ut_str filled(char *buf, size_t len, const char *pattern)
{
    size_t plen = strlen(pattern);
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern[i % plen];
    while (len > 0 && ((unsigned char)buf[len] & 0xC0) == 0x80)
        len--;
    return ut_str_from(buf, len);
}

/* A dialog event with every redacted text field at its protocol limit,
 * filled with `pattern`. */
static ut_event event_at_limits(const char *pattern)
{
    static char url[UT_URL_MAX_BYTES + 1], title[UT_TITLE_MAX_BYTES + 1], name[UT_NAME_MAX_BYTES + 1],
        value[UT_VALUE_MAX_BYTES + 1], text[UT_DIALOG_TEXT_MAX_BYTES + 1], cell[UT_CELL_MAX_BYTES + 1],
        role[UT_ROLE_MAX_BYTES + 1], el[UT_EL_MAX_BYTES + 1];
    ut_event ev = {.kind = UT_KIND_DIALOG, .tab = UT_STR_LIT("tab-1"), .has_value = true,
                   .ctx = {.kind = UT_CTX_ROW, .ncells = UT_CTX_CELLS_MAX}};
    ev.url = filled(url, UT_URL_MAX_BYTES, pattern);
    ev.title = filled(title, UT_TITLE_MAX_BYTES, pattern);
    ev.role = filled(role, UT_ROLE_MAX_BYTES, pattern);
    ev.el = filled(el, UT_EL_MAX_BYTES, pattern);
    ev.name = filled(name, UT_NAME_MAX_BYTES, pattern);
    ev.value = filled(value, UT_VALUE_MAX_BYTES, pattern);
    ev.text = filled(text, UT_DIALOG_TEXT_MAX_BYTES, pattern);
    ev.ctx.name = filled(cell, UT_CELL_MAX_BYTES, pattern);
    for (uint32_t i = 0; i < UT_CTX_CELLS_MAX; i++)
        ev.ctx.cells[i] = ev.ctx.name;
    return ev;
}

/* Ordinary UI text: names, prices, dates, SKUs, order numbers. */
#define TYPICAL_TEXT "Order 4411 \xC2\xB7 Blue Widget SKU-1234 $24.99 shipped 2026-05-14 14:32, qty 3. "

/* Inputs that put a candidate start for a pattern with checks on every few
 * bytes: the worst cases of each family. */
static const char *const hostile_fills[] = {
    "1 ", "1.", "1-", "0 1 ", "111-11-", "+1 ", "DE89 ", "@a.1", "a@a.", "aA1b", "%40a.", "a-", "a1-", "1a-",
};

/* Tab i's event k with every field at its limit (ordinary words, which
 * redaction keeps): navigations, clicks in rows of full cells, dialogs
 * with full snapshots, alerts. */
static ut_event limits_step(const char *tab, uint32_t k, int64_t t_us, char *el, size_t el_cap)
{
    static char url[UT_URL_MAX_BYTES + 1], name[UT_NAME_MAX_BYTES + 1], cell[UT_CELL_MAX_BYTES + 1],
        text[UT_DIALOG_TEXT_MAX_BYTES + 1], alert[UT_ALERT_TEXT_MAX_BYTES + 1];
    static const char words[] = " Blue Widget, shipped to the warehouse.";
    ut_event ev = {.tab = ut_str_cstr(tab), .time_us = t_us};
    snprintf(el, el_cap, "%0*u", UT_EL_MAX_BYTES - 1, k);
    ev.el = ut_str_cstr(el);
    switch (k % 4) {
    case 0:
        ev.kind = UT_KIND_NAV;
        ev.url = filled(url, UT_URL_MAX_BYTES, "https://x.test/a/b");
        ev.title = filled(name, UT_TITLE_MAX_BYTES, words);
        ev.how = UT_NAV_PUSH;
        break;
    case 1:
        ev.kind = UT_KIND_CLICK;
        ev.role = UT_STR_LIT("button");
        ev.name = filled(name, UT_NAME_MAX_BYTES, words);
        ev.ctx.kind = UT_CTX_ROW;
        ev.ctx.ncells = UT_CTX_CELLS_MAX;
        for (uint32_t c = 0; c < UT_CTX_CELLS_MAX; c++)
            ev.ctx.cells[c] = filled(cell, UT_CELL_MAX_BYTES, words);
        break;
    case 2:
        ev.kind = UT_KIND_DIALOG;
        ev.dialog_state = UT_DIALOG_OPEN;
        ev.role = UT_STR_LIT("dialog");
        ev.name = filled(name, UT_NAME_MAX_BYTES, words);
        ev.text = filled(text, UT_DIALOG_TEXT_MAX_BYTES, words);
        break;
    default:
        ev.kind = UT_KIND_ALERT;
        ev.role = UT_STR_LIT("alert");
        ev.text = filled(alert, UT_ALERT_TEXT_MAX_BYTES, words);
        ev.level = UT_LEVEL_ERROR;
        break;
    }
    return ev;
}

#define LIMITS_EVENTS_PER_TAB 40 /* twice the default ring, and 8 dialogs */

static void bench_memory_limits(uint32_t tabs, uint64_t budget)
{
    ut_config cfg;
    ut_config_defaults(&cfg);
    cfg.reorder_ms = 0;
    cfg.max_memory = budget;
    if (tabs > cfg.max_tabs)
        cfg.max_tabs = tabs;
    char err[256];
    ut_engine *e;
    if (ut_engine_new(&cfg, &e, err, sizeof err) != UT_OK) {
        fprintf(stderr, "bench_core: %s\n", err);
        exit(1);
    }
    uint64_t before = rss_bytes();
    int64_t t_us = INT64_C(1715693490000000);
    for (uint32_t tab = 0; tab < tabs; tab++) {
        char key[32], el[UT_EL_MAX_BYTES + 1];
        snprintf(key, sizeof key, "tab-%u", tab);
        for (uint32_t k = 0; k < LIMITS_EVENTS_PER_TAB; k++, t_us += 1000) {
            ut_event ev = limits_step(key, k, t_us, el, sizeof el);
            ut_status st = ut_engine_apply(e, &ev);
            if (st != UT_OK)
                fail("applying an event at the field limits", st);
        }
    }
    uint64_t after = rss_bytes();
    ut_engine_stats st;
    ut_engine_stats_get(e, &st);
    printf("tabs_fed=%u max_memory=%" PRIu64 " tabs_kept=%" PRIu64 " evicted_memory=%" PRIu64
           " tab_bytes=%" PRIu64 " counted_per_tab=%.0f rss_growth=%" PRIu64 " rss_per_tab=%.0f\n",
           tabs, budget, st.tabs, st.evicted_memory, st.tab_bytes,
           st.tabs ? (double)st.tab_bytes / (double)st.tabs : 0.0, after - before,
           st.tabs ? (double)(after - before) / (double)st.tabs : 0.0);
    ut_engine_free(e);
}

#define REDACT_ROUNDS 9

/* The shared machine's load changes during a run: every case is timed
 * once per round, rounds interleave the cases, and each case keeps its
 * fastest round, so that the ratios compare like with like. */
static void bench_redact(uint32_t events)
{
    ut_redactor *r;
    char err[256];
    if (ut_redactor_new(NULL, 0, &r, err, sizeof err) != UT_OK) {
        fprintf(stderr, "bench_core: %s\n", err);
        exit(1);
    }
    enum { N_HOSTILE = sizeof hostile_fills / sizeof hostile_fills[0], N_CASES = N_HOSTILE + 2 };
    ut_event cases[N_CASES];
    ut_event *click = &cases[0];
    *click = (ut_event){.kind = UT_KIND_CLICK, .tab = UT_STR_LIT("tab-1"), .role = UT_STR_LIT("button"),
                        .el = UT_STR_LIT("edit-4411"), .url = UT_STR_LIT("https://shop.test/orders?page=2"),
                        .title = UT_STR_LIT("Orders - Shop admin"), .name = UT_STR_LIT("Edit Item"),
                        .ctx = {.kind = UT_CTX_ROW, .ncells = 4}};
    static const char *const cells[] = {"Blue Widget", "SKU-1234", "$24.99", "Published"};
    for (uint32_t i = 0; i < 4; i++)
        click->ctx.cells[i] = ut_str_cstr(cells[i]);
    /* event_at_limits fills static buffers: each case gets its own copy. */
    static char storage[N_CASES][UT_DIALOG_TEXT_MAX_BYTES * 2 + UT_CELL_MAX_BYTES * 2 + 1024];
    for (size_t c = 1; c < N_CASES; c++) {
        ut_event ev = event_at_limits(c == 1 ? TYPICAL_TEXT : hostile_fills[c - 2]);
        char *at = storage[c];
        ut_str *fields[] = {&ev.url, &ev.title, &ev.role, &ev.el, &ev.name, &ev.value, &ev.text, &ev.ctx.name};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
            memcpy(at, fields[f]->ptr, fields[f]->len);
            *fields[f] = ut_str_from(at, fields[f]->len);
            at += fields[f]->len;
        }
        for (uint32_t i = 0; i < UT_CTX_CELLS_MAX; i++)
            ev.ctx.cells[i] = ev.ctx.name;
        cases[c] = ev;
    }
    uint32_t big = events / 100 ? events / 100 : 1; /* events at limits are ~100x larger */
    double best[N_CASES];
    for (size_t c = 0; c < N_CASES; c++)
        best[c] = 1e300;
    for (int round = 0; round < REDACT_ROUNDS; round++) {
        for (size_t c = 0; c < N_CASES; c++) {
            double ns = redact_ns(r, &cases[c], c == 0 ? events : big);
            if (ns < best[c])
                best[c] = ns;
        }
    }
    double typical_ns = best[1];
    printf("redact_click_ns=%.0f redact_typical_at_limits_ns=%.0f\n", best[0], typical_ns);
    size_t worst = 2;
    for (size_t c = 2; c < N_CASES; c++) {
        printf("redact_fill='%s' ns=%.0f over_typical=%.2f\n", hostile_fills[c - 2], best[c], best[c] / typical_ns);
        if (best[c] > best[worst])
            worst = c;
    }
    printf("redact_worst_fill='%s' redact_worst_ns=%.0f worst_over_typical=%.2f\n", hostile_fills[worst - 2],
           best[worst], best[worst] / typical_ns);
    ut_redactor_free(r);
}

static void bench_redact_text(size_t len, const char *fill, unsigned long n)
{
    ut_redactor *r;
    char err[256];
    if (ut_redactor_new(NULL, 0, &r, err, sizeof err) != UT_OK || !*fill || len > (1u << 20)) {
        fprintf(stderr, "bench_core: %s\n", *fill && len <= (1u << 20) ? err : "bad LEN or FILL");
        exit(1);
    }
    char *buf = malloc(len + 1);
    if (!buf)
        exit(1);
    ut_str text = filled(buf, len, fill);
    ut_buf out = UT_BUF_INIT;
    for (unsigned long i = 0; i < n; i++) {
        ut_buf_reset(&out);
        ut_status st = ut_redact_text(r, text, &out);
        if (st != UT_OK)
            fail("redacting a text", st);
    }
    ut_buf_free(&out);
    free(buf);
    ut_redactor_free(r);
}

static uint32_t arg_or(int argc, char **argv, uint32_t fallback)
{
    if (argc < 3)
        return fallback;
    char *end;
    unsigned long v = strtoul(argv[2], &end, 10);
    if (*end || v == 0 || v > 100000000) {
        fprintf(stderr, "bench_core: '%s' is not a count from 1 to 100000000\n", argv[2]);
        exit(2);
    }
    return (uint32_t)v;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "trace") == 0)
        bench_trace(arg_or(argc, argv, 20000), argc > 3 ? argv[3] : NULL);
    else if (strcmp(what, "mutation") == 0)
        bench_mutation(arg_or(argc, argv, 200000));
    else if (strcmp(what, "ingest") == 0)
        bench_ingest(arg_or(argc, argv, 200000));
    else if (strcmp(what, "memory-limits") == 0 && (argc == 3 || argc == 4))
        bench_memory_limits(arg_or(argc, argv, 1000),
                            argc == 4 ? strtoull(argv[3], NULL, 10) : (UINT64_C(100) << 20));
    else if (strcmp(what, "redact-text") == 0 && argc == 5)
        bench_redact_text(strtoul(argv[2], NULL, 10), argv[3], strtoul(argv[4], NULL, 10));
    else if (strcmp(what, "redact") == 0)
        bench_redact(arg_or(argc, argv, 200000));
    else if (strcmp(what, "memory") == 0 && argc == 3)
        bench_memory(arg_or(argc, argv, 1000));
    else {
        fputs("Usage: bench_core trace [ITERATIONS [text|json]] | mutation [EVENTS] | ingest [EVENTS] | redact [EVENTS] | memory TABS | memory-limits TABS [BUDGET] | redact-text LEN FILL N\n", stderr);
        return 2;
    }
    return 0;
}

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
 *
 * Prints name=value results on one line. Timed loops run a few times and
 * the median is reported, as the machine is shared and noisy. */
#include "workload.h"

#include "uitrail/engine.h"
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
    if (max_tabs > cfg.max_tabs)
        cfg.max_tabs = max_tabs;
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

static void bench_memory(uint32_t tabs)
{
    ut_engine *e = engine_new(tabs);
    uint64_t before = rss_bytes();
    uint32_t steps = fill_tab(e, 0);
    for (uint32_t tab = 1; tab < tabs; tab++)
        for (uint32_t step = 0; step < steps; step++)
            apply_step(e, tab, step);
    uint64_t after = rss_bytes();
    ut_engine_stats stats;
    ut_engine_stats_get(e, &stats);
    if (stats.tabs != tabs) {
        fprintf(stderr, "bench_core: %" PRIu64 " tabs kept of %u\n", stats.tabs, tabs);
        exit(1);
    }
    printf("tabs=%u rss_before=%" PRIu64 " rss_after=%" PRIu64 " bytes_per_tab=%.0f events_per_tab=%u\n", tabs,
           before, after, (double)(after - before) / tabs, steps);
    ut_engine_free(e);
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
    else if (strcmp(what, "memory") == 0 && argc == 3)
        bench_memory(arg_or(argc, argv, 1000));
    else {
        fputs("Usage: bench_core trace [ITERATIONS [text|json]] | mutation [EVENTS] | ingest [EVENTS] | memory TABS\n", stderr);
        return 2;
    }
    return 0;
}

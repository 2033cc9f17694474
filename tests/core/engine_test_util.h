/* Helpers shared by the engine's test binaries (test_engine, test_trace,
 * test_tabs): event builders, trace capture, a fail-after-N allocator and
 * the session fixture loader. */
#ifndef UITRAIL_ENGINE_TEST_UTIL_H
#define UITRAIL_ENGINE_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "uitrail/engine.h"

/* 2024-05-14 13:31:30 UTC, the start of every synthetic session. */
#define T0_US INT64_C(1715693490000000)
/* Sender time `ms` milliseconds after T0. */
#define AT(ms) (T0_US + (int64_t)(ms) * 1000)

ut_engine *engine_with(const ut_config *cfg);
/* The defaults without a reorder window: these tests feed events in
 * order and read the trace at once (tests/core/test_reorder.c tests the
 * window). */
void config_in_order(ut_config *c);
/* An engine with config_in_order's configuration. */
ut_engine *engine_default(void);

ut_event ev_nav(const char *tab, int64_t t_us, const char *url, const char *title, ut_nav_how how);
ut_event ev_click(const char *tab, int64_t t_us, const char *role, const char *name, const char *el);
/* The click with a context of `kind` named `name`. */
ut_event ev_click_in(const char *tab, int64_t t_us, const char *role, const char *name,
                     const char *el, ut_ctx_kind kind, const char *ctx_name);
ut_event ev_change(const char *tab, int64_t t_us, const char *role, const char *name, const char *el);
ut_event ev_alert(const char *tab, int64_t t_us, const char *text, ut_level level);
ut_event ev_dialog(const char *tab, int64_t t_us, ut_dialog_state state, const char *name,
                   const char *el, const char *text);
/* A flush that re-renders most of a 500-element page: significant. */
ut_event ev_mutation_big(const char *tab, int64_t t_us);
ut_event ev_close(const char *tab, int64_t t_us);

void apply_ok(ut_engine *e, const ut_event *ev);

/* The trace of `tab` as a NUL-terminated string the caller frees with
 * free(). Fails the test on error. */
char *trace_of(const ut_engine *e, const char *tab, ut_trace_opts opts);
char *trace_text(const ut_engine *e, const char *tab);
/* The i-th event line of a text trace (0: newest) without "- HH:MM:SS ",
 * into `dst`; false when there is no such line. */
/* The length of an entry line's "- HH:MM:SS " or "- :SS " (protocol §4:
 * the hour and minute of the line above are not repeated), 0 when `line`
 * does not start with one. */
size_t trace_clock_prefix(const char *line);
bool trace_line(const char *trace, unsigned i, char *dst, size_t cap);
unsigned trace_event_lines(const char *trace);

/* The fail-after-N allocator: tests/common/fail_alloc.h. */
#include "fail_alloc.h"

/* A session fixture (a JSON array of [tag, seconds, record]) as events. */
typedef struct session {
    ut_event *events;
    size_t n;
    void *json;       /* keeps the strings alive */
    ut_mut_rec *recs; /* storage of every mutation's recs */
} session;

void session_load(session *s, const char *path);
void session_free(session *s);
/* Reads a whole file into a malloc'd NUL-terminated string. */
char *read_file(const char *path);

#endif

/* The serializers' own header: trace.c (the entry point), trace_text.c
 * (the text trace of protocol §4), trace_json.c (the JSON trace, GET
 * /v1/tabs, the JSON of one event), trace_common.c (what both share).
 * The serializers only read tabs and entries. */
#ifndef UITRAIL_TRACE_H
#define UITRAIL_TRACE_H

#include "budget.h"
#include "engine_internal.h"

#define UT__US_PER_MS INT64_C(1000)

/* The name of the value `v` in a table of names, "" when it has none. */
const char *ut__enum_name(const char *const *names, size_t n, unsigned v);
#define UT__ENUM_NAME(table, v) ut__enum_name((table), sizeof(table) / sizeof((table)[0]), (unsigned)(v))

/* The page state word: "stable", "changing", or "unknown" for a tab that
 * never sent a mutation record. */
const char *ut__page_state_name(const ut_stab_status *st);
/* The number of entries a trace shows under `opts->limit`. */
uint32_t ut__trace_shown_entries(const ut__tab *t, const ut_trace_opts *opts);
/* The tab's zone in minutes east of UTC (0 when it sent none). */
int32_t ut__trace_tab_tz(const ut__tab *t);
/* FNV-1a: finds a line that repeats a newer one (budget.c). */
uint64_t ut__trace_hash(const char *p, size_t len);

/* trace_text.c: appends the HH:MM:SS of `time_us` in the zone `tz_min`
 * minutes east of UTC. */
ut_status ut__trace_put_clock(ut_buf *out, int64_t time_us, int32_t tz_min);
/* trace_text.c: a line's text without its time: what the JSON trace
 * hashes to find repeats, as the text trace does. */
void ut__trace_entry_text(ut_buf *out, const ut__line *l, bool same_row);

void ut__trace_text(const ut__tab *t, const ut_trace_opts *opts, ut_buf *out);
void ut__trace_json(const ut__tab *t, const ut_trace_opts *opts, ut_buf *out);

#endif

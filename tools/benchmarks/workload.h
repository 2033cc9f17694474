/* The synthetic workload of tools/bench: one deterministic script of events
 * per tab, shared by the load client (which sends it to uitraild and to
 * Redis) and by the in-process benchmarks (which apply it to an engine), so
 * every figure of the benchmark table is measured on the same events. */
#ifndef UITRAIL_BENCH_WORKLOAD_H
#define UITRAIL_BENCH_WORKLOAD_H

#include "uitrail/event.h"

/* Events in one pass of a tab's script: 12 user events (clicks with row,
 * toolbar, group and tablist context, changes, a dialog opened by a click
 * and closed later, an alert, a navigation) and 8 mutation flushes. Two
 * passes fill a 20-entry ring. */
#define UT__BENCH_SCRIPT_STEPS 20
/* Mutation records in one flush of the script: 1 to this many. */
#define UT__BENCH_RECS_MAX 4

/* One generated event and the storage its strings point into. */
typedef struct ut__bench_event {
    ut_event ev;
    char tab[24];
    char url[48];
    char title[32];
    char role[16];
    char name[48];
    char el[24];
    char value[24];
    char text[96];
    char cells[4][32];
    char rec_els[UT__BENCH_RECS_MAX][16];
    ut_mut_rec recs[UT__BENCH_RECS_MAX];
} ut__bench_event;

/* Writes the id of tab number `tab` ("tab-000042") into `out`. */
void ut__bench_tab_id(uint32_t tab, char *out, size_t outlen);

/* Fills `be` with event number `step` (0-based) of tab number `tab`: the
 * script repeats with new names and pages every UT__BENCH_SCRIPT_STEPS
 * steps; `seq` is step + 1 and times increase with the step, spaced as a
 * user's actions are (clicks seconds apart, a mutation flush a few hundred
 * milliseconds after what caused it), so debounce, bursts and outcomes act
 * as they would on a real page. `be->ev` points into `be`: do not copy it
 * out of the struct. */
void ut__bench_event_make(ut__bench_event *be, uint32_t tab, uint64_t step);

/* True when event `step` of the script is a mutation flush. */
bool ut__bench_step_is_mutation(uint64_t step);

#endif

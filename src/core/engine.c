/* The engine: configuration, the engine clock, and what each event does to
 * its tab — debounce, rage clicks, bursts, dialogs, navigations and click
 * outcomes. The click rules live in clicks.c, the dialog rules in
 * dialogs.c, the serializers in trace*.c, the tab table in tabs.c and the
 * entries in ring.c.
 *
 * Outcomes: a click awaits its outcome, and the page answers the user's
 * action; both are actions.c's (actions.h tells the rules), which every
 * rule here tells what answered, once per event. */
#include "engine_internal.h"

#include "clicks.h"
#include "dialogs.h"
#include "num.h"
#include "stability_shared.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* ---- Configuration ---- */

void ut_config_defaults(ut_config *c)
{
    memset(c, 0, sizeof *c);
    c->ring_size = UT_RING_DEFAULT;
    c->max_tabs = UT_TABS_DEFAULT;
    c->max_memory = UT_MEMORY_DEFAULT_BYTES;
    c->idle_ms = UT_IDLE_DEFAULT_MS;
    c->debounce_ms = UT_DEBOUNCE_DEFAULT_MS;
    c->reset_on_load = false;
    c->reorder_ms = UT_REORDER_DEFAULT_MS;
    ut_stab_params_defaults(&c->stab);
}

/* Writes "ring size is 0 entries, out of range: use 1 to 1000 entries"
 * into `err`. */
static ut_status range_error(char *err, size_t errlen, const char *what, unsigned long long value,
                             unsigned long long lo, unsigned long long hi, const char *unit)
{
    if (err && errlen)
        snprintf(err, errlen, "%s is %llu%s, out of range: use %llu to %llu%s", what, value, unit,
                 lo, hi, unit);
    return UT_EINVAL;
}

static ut_status config_check(const ut_config *c, char *err, size_t errlen)
{
    if (c->ring_size < UT_RING_MIN || c->ring_size > UT_RING_MAX)
        return range_error(err, errlen, "ring size", c->ring_size, UT_RING_MIN, UT_RING_MAX,
                           " entries");
    if (c->max_tabs < UT_TABS_MIN || c->max_tabs > UT_TABS_MAX)
        return range_error(err, errlen, "tab cap", c->max_tabs, UT_TABS_MIN, UT_TABS_MAX, " tabs");
    if (c->max_memory != 0 && c->max_memory < UT_MEMORY_MIN_BYTES)
        return range_error(err, errlen, "memory budget (0: none)", c->max_memory, UT_MEMORY_MIN_BYTES,
                           UINT64_MAX, " bytes");
    if (c->idle_ms < UT_IDLE_MIN_MS)
        return range_error(err, errlen, "idle time", c->idle_ms, UT_IDLE_MIN_MS, UINT32_MAX, " ms");
    if (c->debounce_ms > UT_DEBOUNCE_MAX_MS)
        return range_error(err, errlen, "debounce time", c->debounce_ms, 0, UT_DEBOUNCE_MAX_MS,
                           " ms");
    if (c->reorder_ms > UT_REORDER_MAX_MS)
        return range_error(err, errlen, "reorder window", c->reorder_ms, 0, UT_REORDER_MAX_MS, " ms");
    if (c->reorder_ms >= c->idle_ms) {
        /* An idle tab must never be evicted with events still held. */
        if (err && errlen)
            snprintf(err, errlen, "the reorder window (%u ms) must be shorter than the idle time (%u ms)",
                     c->reorder_ms, c->idle_ms);
        return UT_EINVAL;
    }
    if (c->n_redact_patterns > UT_REDACT_PATTERNS_MAX)
        return range_error(err, errlen, "redaction pattern count", c->n_redact_patterns, 0,
                           UT_REDACT_PATTERNS_MAX, "");
    if (c->n_redact_patterns && !c->redact_patterns) {
        if (err && errlen)
            snprintf(err, errlen, "%zu redaction patterns announced but none given",
                     c->n_redact_patterns);
        return UT_EINVAL;
    }
    return UT_OK;
}

ut_status ut_engine_new(const ut_config *cfg, ut_engine **out, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    ut_config defaults;
    if (!cfg) {
        ut_config_defaults(&defaults);
        cfg = &defaults;
    }
    ut_status st = config_check(cfg, err, errlen);
    if (st != UT_OK)
        return st;
    const char *bad = ut_stab_params_invalid(&cfg->stab);
    if (bad) {
        const ut_stab_param_desc *d = ut_stab_param_find(bad);
        char bounds[160] = "uitrail or domquake";
        if (d)
            ut_stab_param_bounds_text(d, bounds, sizeof bounds);
        if (err && errlen)
            snprintf(err, errlen, "stability parameter %s out of range: %s", bad, bounds);
        return UT_EINVAL;
    }

    ut_engine *e = ut_calloc(1, sizeof *e);
    if (!e)
        return UT_ENOMEM;
    e->cfg = *cfg;
    e->clock_us = INT64_MIN;
    e->scratch = UT_BUF_INIT;
    e->build = UT_BUF_INIT;
    ut__tabs_init(&e->tabs);
    st = ut_redactor_new(cfg->redact_patterns, cfg->n_redact_patterns, &e->redactor, err, errlen);
    if (st != UT_OK) {
        ut_free(e);
        return st;
    }
    *out = e;
    return UT_OK;
}

void ut_engine_free(ut_engine *e)
{
    if (!e)
        return;
    ut__tabs_free(&e->tabs);
    ut_redactor_free(e->redactor);
    ut_buf_free(&e->scratch);
    ut_buf_free(&e->build);
    ut_free(e);
}

void ut_engine_set_observer(ut_engine *e, const ut_observer *obs)
{
    if (obs)
        e->obs = *obs;
    else
        memset(&e->obs, 0, sizeof e->obs);
}

const ut_config *ut_engine_config(const ut_engine *e)
{
    return &e->cfg;
}

void ut_engine_stats_get(const ut_engine *e, ut_engine_stats *out)
{
    *out = e->stats;
    out->tabs = e->tabs.count;
    out->tab_bytes = e->tab_bytes;
}

/* ---- Observer plumbing ---- */

static void notify_trace(ut_engine *e, const ut__tab *t)
{
    if (e->obs.on_trace_changed)
        e->obs.on_trace_changed(e->obs.ud, ut__tab_key(t));
}

typedef struct mark_sink {
    ut_engine *engine;
    ut__tab *tab;
} mark_sink;

static void on_stab_mark(void *ud, const ut_mark *m)
{
    mark_sink *ms = ud;
    ut__action_mark(&ms->tab->action, m);
    ms->engine->stats.marks++;
    if (ms->engine->obs.on_mark)
        ms->engine->obs.on_mark(ms->engine->obs.ud, ut__tab_key(ms->tab), m);
    notify_trace(ms->engine, ms->tab);
}

/* Counts `t` again after a change (see ut_config.max_memory). */
static void tab_account(ut_engine *e, ut__tab *t)
{
    e->tab_bytes -= t->bytes;
    size_t bytes = ut__tab_bytes(t);
    assert(bytes <= UINT32_MAX && "a tab's bytes are bounded (ut__tab.bytes)");
    t->bytes = (uint32_t)bytes;
    e->tab_bytes += t->bytes;
}

static void tab_drop(ut_engine *e, ut__tab *t, bool evicted)
{
    e->tab_bytes -= t->bytes;
    /* Events still held go with their tab. */
    e->stats.held -= t->reorder.count;
    e->stats.lost += t->reorder.count;
    ut__tabs_remove(&e->tabs, t);
    if (e->obs.on_tab_gone)
        e->obs.on_tab_gone(e->obs.ud, ut__tab_key(t), evicted);
    ut__tab_free(t);
}

/* ---- Timers ---- */

static bool tab_has_mutations(const ut__tab *t)
{
    if (!t->stab)
        return false;
    ut_stab_status st;
    ut_stab_status_get(t->stab, &st);
    return st.has_mutations;
}

/* Whether the scorer of `t` reads changing (a pending action aside). */
static bool scorer_changing(const ut__tab *t)
{
    if (!t->stab)
        return false;
    ut_stab_status st;
    ut_stab_status_get(t->stab, &st);
    return st.state == UT_PAGE_CHANGING;
}

/* The sender time at which `t`'s pending action settles by itself. */
static int64_t action_deadline(const ut_engine *e, const ut__tab *t)
{
    return ut__action_deadline(&t->action, scorer_changing(t), e->cfg.stab.quiet_ms);
}

/* Settles `t`'s pending action if it is due by sender time `now`. */
static void action_run(ut_engine *e, ut__tab *t, int64_t now)
{
    if (ut__action_run(&t->action, now, scorer_changing(t), e->cfg.stab.quiet_ms))
        notify_trace(e, t);
}

/* How far `t`'s timers must lag behind its sender clock: an event may
 * still arrive in order up to the reorder window behind the sender clock,
 * so a mark or a dead click is claimed only once the window has passed
 * it. A tab whose events have always come with seqs and in order (a
 * browser's) waits for nothing: nothing suggests that an event is on its
 * way late. */
static int64_t tab_timer_lag_us(const ut_engine *e, const ut__tab *t)
{
    bool in_sequence = !t->reorder.head && !t->reorder.disorder && t->reorder.last_had_seq &&
                       t->reorder.has_seq && t->reorder.applied_seq == t->seqwin.high;
    return in_sequence ? 0 : (int64_t)e->cfg.reorder_ms * US_PER_MS;
}

/* Re-arms `t`'s deadline on the engine clock: its scorer's next mark and
 * the settling of its pending click, both in sender time and due once the
 * reorder window has passed them, and the end of the wait of its held
 * events. A tab without mutation records can never claim a dead click, so
 * its pending click needs no timer: the next event ends the wait. */
static void tab_schedule(ut_engine *e, ut__tab *t)
{
    int64_t due = t->stab ? ut_stab_next_deadline(t->stab) : INT64_MAX;
    int64_t dead = ut__action_click_deadline(&t->action, tab_has_mutations(t));
    if (dead < due)
        due = dead;
    int64_t settle = action_deadline(e, t);
    if (settle < due)
        due = settle;
    if (due != INT64_MAX)
        due = ut__add_sat(ut__add_sat(due, tab_timer_lag_us(e, t)), -t->offset_us);
    int64_t release = ut__reorder_deadline(&t->reorder, t->offset_us, (int64_t)e->cfg.reorder_ms * US_PER_MS);
    if (release < due)
        due = release;
    ut__tabs_set_deadline(&e->tabs, t, due);
}

/* Ends the wait of the awaiting click once UT_DEAD_CLICK_MS have passed by
 * `now` (sender time), claiming a dead click when the rules allow. */
static void settle_pending(ut_engine *e, ut__tab *t, int64_t now)
{
    if (ut__action_click_run(&t->action, &t->ring, now, tab_has_mutations(t)))
        notify_trace(e, t);
}

/* Runs what is due in `t` by sender time `now`, moving its scorer only to
 * each due time: where the scorer rests between events then does not
 * depend on when the engine happened to be advanced (a daemon's timer, a
 * replay's next event), so neither does anything it says later. */
static void tab_run_due(ut_engine *e, ut__tab *t, int64_t now)
{
    mark_sink ms = {e, t};
    if (t->stab) {
        int64_t due;
        while ((due = ut_stab_next_deadline(t->stab)) <= now) {
            ut_stab_advance(t->stab, due, on_stab_mark, &ms);
            if (ut_stab_next_deadline(t->stab) <= due)
                break; /* no progress: ut_engine_advance steps past it */
        }
    }
    action_run(e, t, now);
    settle_pending(e, t, now);
}

/* Runs `t`'s timers up to sender time `now`, the time of an event about
 * to be applied. */
static void tab_run_timers(ut_engine *e, ut__tab *t, int64_t now)
{
    mark_sink ms = {e, t};
    if (t->stab)
        ut_stab_advance(t->stab, now, on_stab_mark, &ms);
    action_run(e, t, now);
    settle_pending(e, t, now);
}

static bool tab_release(ut_engine *e, ut__tab *t);

/* Evicts the least recently active tabs while the tabs hold more than the
 * budget, as Redis does under maxmemory with allkeys-lru. The most
 * recently active tab stays, whatever it holds: it is the one an event
 * just went to, and a single tab is bounded by the ring and field limits. */
static void enforce_memory(ut_engine *e)
{
    while (e->cfg.max_memory && e->tab_bytes > e->cfg.max_memory && e->tabs.count > 1) {
        e->stats.evicted_memory++;
        tab_drop(e, e->tabs.lru_tail, true);
    }
}

void ut_engine_advance(ut_engine *e, int64_t now_us)
{
    if (now_us > e->clock_us)
        e->clock_us = now_us;
    int64_t clock = e->clock_us;
    ut__tab *t;
    while ((t = ut__tabs_earliest(&e->tabs)) && t->deadline <= clock) {
        if (!tab_release(e, t))
            continue; /* a held close removed the tab */
        /* Held events are later than this (else they would have gone). */
        tab_run_due(e, t, ut__add_sat(ut__add_sat(clock, t->offset_us), -tab_timer_lag_us(e, t)));
        tab_account(e, t);
        tab_schedule(e, t);
        /* A scorer that still reports a due mark after advancing past it
         * must not spin this loop: look again at the next advance. */
        if (t->deadline <= clock)
            ut__tabs_set_deadline(&e->tabs, t, ut__add_sat(clock, 1));
    }
    int64_t idle_us = (int64_t)e->cfg.idle_ms * US_PER_MS;
    while ((t = e->tabs.lru_tail) && ut__add_sat(t->last_engine_us, idle_us) <= clock) {
        e->stats.evicted_idle++;
        tab_drop(e, t, true);
    }
    enforce_memory(e);
}

int64_t ut_engine_next_deadline(const ut_engine *e)
{
    int64_t due = INT64_MAX;
    const ut__tab *t = ut__tabs_earliest(&e->tabs);
    if (t)
        due = t->deadline;
    if (e->tabs.lru_tail) {
        int64_t idle = ut__add_sat(e->tabs.lru_tail->last_engine_us, (int64_t)e->cfg.idle_ms * US_PER_MS);
        if (idle < due)
            due = idle;
    }
    return due;
}

/* ---- Other kinds ---- */

static ut_status apply_change(ut__tab *t, const ut_event *ev, int64_t now)
{
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_ROLE] = ev->role;
    fields[UT__F_NAME] = ev->sens ? UT_STR_NULL : ev->name;
    fields[UT__F_EL] = ev->el;
    fields[UT__F_TEXT] = ev->has_value && !ev->sens ? ev->value : UT_STR_NULL;
    ut__entry *en = ut__ring_entry_make(&t->ring, UT__E_CHANGE, fields);
    if (!en)
        return UT_ENOMEM;
    en->flags = (uint8_t)((ev->sens ? UT__EF_SENS : 0) |
                          (ev->has_value && !ev->sens ? UT__EF_HAS_VALUE : 0) |
                          (ev->has_len ? UT__EF_HAS_LEN : 0) |
                          (ev->has_checked ? UT__EF_HAS_CHECKED : 0) |
                          (ev->has_checked && ev->checked ? UT__EF_CHECKED : 0) |
                          (ev->untrusted ? UT__EF_UNTRUSTED : 0) |
                          (ev->assistant ? UT__EF_ASSISTANT : 0));
    en->count = ev->has_len ? ev->len : 0;
    ut__action_user(&t->action, &t->ring, true, false, tab_has_mutations(t), now, t->last_us);
    ut__ring_add(&t->ring, en, now, t->action.late);
    return UT_OK;
}

static ut_status apply_alert(ut__tab *t, const ut_event *ev, int64_t now)
{
    ut__entry **candidate = ut__action_outcome_candidate(&t->action, &t->ring, now);
    ut__action_answered(&t->action, &t->ring, now, t->last_us);
    if (candidate)
        return ut__action_set_outcome(&t->action, candidate, UT__OUT_ALERT, ev->role, ev->text,
                                      (uint8_t)ev->level, ut__ring_take_id(&t->ring));
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_ROLE] = ev->role;
    fields[UT__F_TEXT] = ev->text;
    ut__entry *en = ut__ring_entry_make(&t->ring, UT__E_ALERT, fields);
    if (!en)
        return UT_ENOMEM;
    en->detail = (uint8_t)ev->level;
    ut__ring_add(&t->ring, en, now, t->action.late);
    return UT_OK;
}

static ut_status apply_nav(ut_engine *e, ut__tab *t, const ut_event *ev, int64_t now)
{
    bool load = ev->how == UT_NAV_LOAD;
    bool new_page = load || ev->how == UT_NAV_RELOAD;
    bool reset = load && e->cfg.reset_on_load;

    size_t url_len = ut__utf8_cut(ev->url, UT_URL_MAX_BYTES);
    size_t title_len = ut__utf8_cut(ev->title, UT_TITLE_MAX_BYTES);
    char *page = ut_malloc(url_len + title_len + 1);
    if (!page)
        return UT_ENOMEM;
    memcpy(page, ev->url.ptr, url_len);
    memcpy(page + url_len, ev->title.ptr, title_len);

    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_NAME] = ev->title;
    fields[UT__F_TEXT] = ev->url;
    ut__entry *en = ut__ring_entry_make(&t->ring, UT__E_NAV, fields);
    if (!en) {
        ut_free(page);
        return UT_ENOMEM;
    }
    en->detail = (uint8_t)ev->how;

    ut__entry **candidate = reset ? NULL : ut__action_outcome_candidate(&t->action, &t->ring, now);
    if (t->action.late) {
        /* A navigation older than what the tab shows now: its line and
         * its click, not the tab's page or its scorer. */
        ut_free(page);
        ut__action_answered(&t->action, &t->ring, now, t->last_us);
        ut_status st = candidate ? ut__action_set_outcome(&t->action, candidate, UT__OUT_NAV, UT_STR_NULL,
                                                          ut__url_path(ev->url), 0, t->ring.next_id)
                                 : UT_OK;
        if (st != UT_OK) {
            ut_free(en);
            return st;
        }
        ut__ring_add(&t->ring, en, now, t->action.late);
        return UT_OK;
    }
    if (!candidate && !reset)
        candidate = ut__action_unload_candidate(&t->action, &t->ring, now);
    bool after_unload = ut__action_page_arrived(&t->action);
    ut__action_answered(&t->action, &t->ring, now, t->last_us);
    if (candidate) {
        ut_status st = ut__action_set_outcome(&t->action, candidate, UT__OUT_NAV, UT_STR_NULL,
                                              ut__url_path(ev->url), 0, t->ring.next_id);
        if (st != UT_OK) {
            ut_free(en);
            ut_free(page);
            return st;
        }
    }

    if (new_page || after_unload) {
        /* A page restored from the back/forward cache after an unload is a
         * page shown anew, though not loaded: it settles from now. */
        ut__dialogs_free(t);
        t->page_load_us = now;
        if (t->stab) {
            mark_sink ms = {e, t};
            ut_stab_page_load(t->stab, now, on_stab_mark, &ms);
        }
    }
    if (reset) {
        ut__ring_clear(&t->ring);
        ut__action_forget_click(&t->action);
    }
    ut_free(t->page);
    t->page = page;
    t->url_len = (uint16_t)url_len;
    t->title_len = (uint16_t)title_len;
    if (ev->has_tz) {
        t->has_tz = true;
        t->tz_min = ev->tz_min;
    }
    ut__ring_add(&t->ring, en, now, t->action.late);
    return UT_OK;
}

static ut_status apply_mutation(ut_engine *e, ut__tab *t, const ut_event *ev, int64_t now)
{
    mark_sink ms = {e, t};
    if (!t->stab) {
        /* The scorer is made lazily, so that tabs whose sender reports no
         * mutations cost nothing; it must still see the page start where
         * the page loaded, as it would have had it existed then. */
        if (ut__stab_new_shared(&e->cfg.stab, &t->stab) != UT_OK)
            return UT_ENOMEM;
        if (t->page_load_us)
            ut_stab_page_load(t->stab, t->page_load_us, on_stab_mark, &ms);
    }
    /* The user typed: from now on the page answers the typing. */
    if (ev->input)
        ut__action_typed(&t->action, now);
    ut_event at = *ev;
    at.time_us = now;
    ut_stab_change change = ut_stab_mutation(t->stab, &at, on_stab_mark, &ms);
    if (e->obs.on_flush)
        e->obs.on_flush(e->obs.ud, ut__tab_key(t), now, change);
    if (change == UT_STAB_CHANGE_NONE)
        return UT_OK;
    if (change == UT_STAB_CHANGE_AWAITED) {
        /* The action's requests are on their way: its pending state waits
         * for the scorer's mark, the click for what the page shows. */
        ut__action_awaited(&t->action, now, t->last_us);
        return UT_OK;
    }
    /* A minor change (text swapped in leaves, as a ticking clock not yet
     * learned as background does) means the click was not dead, but it is not a visible
     * response worth naming as the click's outcome. */
    ut__entry **candidate =
        change == UT_STAB_CHANGE_VISIBLE ? ut__action_outcome_candidate(&t->action, &t->ring, now) : NULL;
    ut__action_answered(&t->action, &t->ring, now, t->last_us);
    if (candidate && (*candidate)->outcome == UT__OUT_NONE) {
        (*candidate)->outcome = UT__OUT_CHANGED;
        (*candidate)->outcome_id = ut__ring_take_id(&t->ring);
        notify_trace(e, t);
    }
    return UT_OK;
}

/* The page goes away, and the tab may come back: its history stays; the
 * page's dialogs are gone with it; a click the unload answered waits for
 * the next page's navigation as its outcome (ut__tab's `unloaded`).
 *
 * The page reads as changing until the next one arrives: the scorer starts
 * a new page at the unload and sees one loading indicator, the browser
 * loading the next document, which the next page's load clears. Like any
 * loading indicator it stops holding the page after the scorer's busy cap,
 * so a tab that never comes back settles. */
static ut_status apply_unload(ut_engine *e, ut__tab *t, int64_t now)
{
    ut__action_unload(&t->action, &t->ring, now, t->last_us);
    ut__dialogs_free(t);
    if (t->stab) {
        mark_sink ms = {e, t};
        ut_stab_page_load(t->stab, now, on_stab_mark, &ms);
        ut_event loading = {.kind = UT_KIND_MUTATION, .time_us = now, .tab = ut__tab_key(t),
                            .dom_elements = 1, .dom_depth = 1, .busy = 1};
        ut_stab_mutation(t->stab, &loading, on_stab_mark, &ms);
    }
    return UT_OK;
}

/* A host event: an entry of its own, with its data as key, value pairs
 * (built in `build`). It answers the awaiting click (the app reacted),
 * without becoming its outcome: its data would not fit an outcome. */
static ut_status apply_app(ut__tab *t, ut_buf *build, const ut_event *ev, int64_t now)
{
    ut_buf_reset(build);
    for (uint32_t i = 0; i < ev->ndata && i < UT_APP_DATA_MAX; i++) {
        ut__list_put(build, ev->data[i].key, UT_APP_KEY_MAX_BYTES);
        ut__list_put(build, ev->data[i].value, UT_APP_VALUE_MAX_BYTES);
    }
    if (build->oom)
        return UT_ENOMEM;
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_NAME] = ev->name;
    fields[UT__F_TEXT] = ev->text;
    fields[UT__F_MEMBERS] = ut_buf_str(build);
    ut__entry *en = ut__ring_entry_make(&t->ring, UT__E_APP, fields);
    if (!en)
        return UT_ENOMEM;
    en->detail = (uint8_t)ev->level;
    ut__action_answered(&t->action, &t->ring, now, t->last_us);
    ut__ring_add(&t->ring, en, now, t->action.late);
    return UT_OK;
}

/* Form validation: the outcome of the click awaiting one (a submit that
 * found the form invalid), joining the messages that submit already made,
 * else a line of its own. */
static ut_status apply_invalid(ut__tab *t, ut_buf *build, const ut_event *ev, int64_t now)
{
    ut__entry **candidate = ut__action_outcome_candidate(&t->action, &t->ring, now);
    ut__entry **joined = candidate ? NULL : ut__action_invalid_more(&t->action, &t->ring, now);
    ut__invalid_list(build, joined ? ut__entry_field(*joined, UT__F_OUT_TEXT) : UT_STR_NULL, ev);
    if (build->oom)
        return UT_ENOMEM;
    ut__action_answered(&t->action, &t->ring, now, t->last_us);
    if (candidate)
        return ut__action_set_outcome(&t->action, candidate, UT__OUT_INVALID, UT_STR_NULL, ut_buf_str(build), 0,
                                      ut__ring_take_id(&t->ring));
    if (joined)
        return ut__action_set_outcome(&t->action, joined, UT__OUT_INVALID, UT_STR_NULL, ut_buf_str(build), 0,
                                      (*joined)->outcome_id);
    ut_str fields[UT__F__COUNT] = {0};
    fields[UT__F_MEMBERS] = ut_buf_str(build);
    ut__entry *en = ut__ring_entry_make(&t->ring, UT__E_INVALID, fields);
    if (!en)
        return UT_ENOMEM;
    ut__ring_add(&t->ring, en, now, t->action.late);
    return UT_OK;
}

/* A click: the click rules make or fold its entry; it is an action the
 * page answers (actions.h), already answered when the control reported
 * its state after it. */
static ut_status apply_click(ut_engine *e, ut__tab *t, const ut_event *ev, int64_t now)
{
    ut__click_ctx cx = {&e->build, e->cfg.debounce_ms};
    ut_status st = ut__apply_click(t, &cx, ev, now);
    if (st == UT_OK)
        ut__action_user(&t->action, &t->ring, false, ev->state_set != 0, tab_has_mutations(t), now, t->last_us);
    return st;
}

/* What the page-stability scorer hears besides mutations, once the event
 * applied: a user action opens a transition its response belongs to, and
 * a dialog opening or closing (`fresh_dialog`: not a snapshot update of an
 * open one) is a change of state. */
static void stab_hear(ut_engine *e, ut__tab *t, const ut_event *ev, bool fresh_dialog, int64_t now)
{
    if (!t->stab)
        return;
    mark_sink ms = {e, t};
    if (ev->kind == UT_KIND_CLICK || ev->kind == UT_KIND_CHANGE)
        ut_stab_action(t->stab, now, on_stab_mark, &ms);
    else if (ev->kind == UT_KIND_DIALOG && fresh_dialog)
        ut_stab_dialog(t->stab, now, on_stab_mark, &ms);
}

static ut_status apply_rules(ut_engine *e, ut__tab *t, const ut_event *ev, int64_t now)
{
    switch (ev->kind) {
    case UT_KIND_NAV: return apply_nav(e, t, ev, now);
    case UT_KIND_CLICK: return apply_click(e, t, ev, now);
    case UT_KIND_CHANGE: return apply_change(t, ev, now);
    case UT_KIND_ALERT: return apply_alert(t, ev, now);
    case UT_KIND_DIALOG:
        return ev->dialog_state == UT_DIALOG_OPEN ? ut__apply_dialog_open(t, ev, now)
                                                  : ut__apply_dialog_close(t, ev, now);
    case UT_KIND_MUTATION: return apply_mutation(e, t, ev, now);
    case UT_KIND_UNLOAD: return apply_unload(e, t, now);
    case UT_KIND_APP: return apply_app(t, &e->build, ev, now);
    case UT_KIND_INVALID: return apply_invalid(t, &e->build, ev, now);
    case UT_KIND_CLOSE:
    case UT_KIND__COUNT: break;
    }
    return UT_EINVAL;
}

/* Applies `ev`'s rules at `at` (its entry's time: the event's own, also
 * for a late one) and tells the scorer at `now` (the tab's clock, which a
 * late event does not move back). */
static ut_status apply_kind(ut_engine *e, ut__tab *t, const ut_event *ev, int64_t at, int64_t now)
{
    bool fresh_dialog = ev->kind == UT_KIND_DIALOG &&
                        (ev->dialog_state != UT_DIALOG_OPEN || !ut__dialog_is_open(t, ev->el));
    ut_status st = apply_rules(e, t, ev, at);
    if (st == UT_OK)
        stab_hear(e, t, ev, fresh_dialog, now);
    return st;
}

/* ---- Applying, in event order ---- */

/* Applies one redacted event of `t` (at once, or out of its reorder
 * window) and tells the observer. A close removes the tab: *gone is then
 * set and `t` is freed. On failure nothing of the tab has changed. */
static ut_status tab_apply(ut_engine *e, ut__tab *t, const ut_event *red, bool *gone)
{
    *gone = false;
    if (red->kind == UT_KIND_CLOSE) {
        e->stats.applied[UT_KIND_CLOSE]++;
        if (e->obs.on_applied)
            e->obs.on_applied(e->obs.ud, red);
        tab_drop(e, t, false);
        *gone = true;
        return UT_OK;
    }
    /* A tab's own time never runs backwards, whatever its sender's clock
     * does: debounce and outcome windows stay well defined. */
    int64_t now = !t->reorder.applied_any || red->time_us > t->last_us ? red->time_us : t->last_us;
    /* A late event (a batching client's, delivered after newer ones) keeps
     * its own time in the ring and links to the click it followed; the
     * scorer and the action hear it at the tab's clock. */
    /* An event next in its sender's sequence is not late however its time
     * compares: a browser sender stamps a click at the press, and the
     * change the press's blur fired comes before it in the sequence with
     * a later time; the sequence is the order they belong in. */
    bool in_sequence = red->has_seq && ut__reorder_seq_is_next(&t->reorder, true, red->seq);
    bool late = t->reorder.applied_any && red->time_us < t->last_us && !in_sequence;
    tab_run_timers(e, t, now);
    ut__action_event(&t->action, late);
    ut_status st = apply_kind(e, t, red, late ? red->time_us : now, now);
    ut__action_event(&t->action, false);
    if (st != UT_OK)
        return st;
    ut__reorder_applied(&t->reorder, red->has_seq, red->seq);
    t->last_us = now;
    e->stats.applied[red->kind]++;
    if (e->obs.on_applied)
        e->obs.on_applied(e->obs.ud, red);
    if (red->kind != UT_KIND_MUTATION)
        notify_trace(e, t);
    return UT_OK;
}

/* Applies the held events of `t` that may go now, in event order, and
 * re-arms its deadline. False when a held close removed the tab. */
static bool tab_release(ut_engine *e, ut__tab *t)
{
    int64_t window_us = (int64_t)e->cfg.reorder_ms * US_PER_MS;
    ut__held *h;
    while ((h = ut__reorder_pop_ready(&t->reorder, e->clock_us, t->offset_us, window_us))) {
        e->stats.held--;
        bool gone;
        if (tab_apply(e, t, &h->ev, &gone) != UT_OK)
            e->stats.lost++; /* out of memory: this event is lost, nothing else */
        ut_free(h);
        if (gone)
            return false;
    }
    tab_schedule(e, t);
    return true;
}

/* Finds or makes the tab of `ev`; *created says which. */
static ut_status tab_for(ut_engine *e, const ut_event *ev, ut__tab **out, bool *created)
{
    *created = false;
    ut__tab *t = ut__tabs_find(&e->tabs, ev->tab);
    if (!t) {
        if (ut__tabs_reserve(&e->tabs) != UT_OK || !(t = ut__tab_new(ev->tab, e->cfg.ring_size)))
            return UT_ENOMEM;
        ut__tabs_insert(&e->tabs, t);
        t->last_us = ev->time_us;
        *created = true;
    }
    *out = t;
    return UT_OK;
}

/* An unload or a close for a tab not known: nothing to keep, to close or
 * to hold, and no tab is made for it; it is applied as it comes. */
static ut_status apply_tabless(ut_engine *e, const ut_event *ev)
{
    e->stats.applied[ev->kind]++;
    if (e->obs.on_accepted)
        e->obs.on_accepted(e->obs.ud, ev);
    if (e->obs.on_applied)
        e->obs.on_applied(e->obs.ud, ev);
    return UT_OK;
}

/* In order, or too late to be put in order: applied now (`*gone` when it
 * closed and freed the tab). Otherwise held until the events before it
 * have arrived or waited enough. */
static ut_status apply_or_hold(ut_engine *e, ut__tab *t, const ut_event *red, bool late, bool *gone)
{
    bool now = late || (!t->reorder.head && (e->cfg.reorder_ms == 0 ||
                                             ut__reorder_seq_is_next(&t->reorder, red->has_seq, red->seq)));
    if (now) {
        if (e->obs.on_accepted)
            e->obs.on_accepted(e->obs.ud, red);
        return tab_apply(e, t, red, gone);
    }
    ut__held *h = ut__held_new(red, e->clock_us, e->serial);
    if (!h)
        return UT_ENOMEM;
    if (e->obs.on_accepted)
        e->obs.on_accepted(e->obs.ud, red);
    /* Held for a gap in seq, or out of order: this tab's client delivers
     * late, so its marks wait the window from now on. */
    if (ut__reorder_insert(&t->reorder, h)) {
        e->stats.reordered++;
        t->reorder.disorder = true;
    } else if (red->has_seq) {
        t->reorder.disorder = true;
    }
    e->stats.held++;
    return UT_OK;
}

/* After an event was applied or held: the tab's sequence window, clock
 * offset and recency, then what it may release, and the caps. */
static void apply_settle(ut_engine *e, ut__tab *t, const ut_event *ev, int64_t engine_t, bool late,
                         bool created)
{
    if (late)
        t->reorder.disorder = true;
    if (ev->has_seq)
        ut__seqwin_mark(&t->seqwin, ev->seq);
    /* The tab's sender clock runs at least as far as its newest event. An
     * older event (a batching client's tag flushed late) says nothing of
     * where that clock is now: it may move the estimate forward, never
     * back, or the newest events held would wait for it (issue 21: up to
     * the 10 s cap, not --reorder-ms). */
    int64_t offset = ut__add_sat(ev->time_us, -engine_t);
    int64_t newest = t->reorder.tail && t->reorder.tail->ev.time_us > t->last_us ? t->reorder.tail->ev.time_us
                                                                              : t->last_us;
    if (created || ev->time_us >= newest || offset > t->offset_us)
        t->offset_us = offset;
    t->reorder.last_had_seq = ev->has_seq;
    t->last_engine_us = e->clock_us;
    ut__tabs_touch(&e->tabs, t);
    if (!tab_release(e, t))
        return;
    tab_account(e, t);
    if (created && e->tabs.count > e->cfg.max_tabs) {
        e->stats.evicted_cap++;
        tab_drop(e, e->tabs.lru_tail, true);
    }
    enforce_memory(e);
}

ut_status ut_engine_apply(ut_engine *e, const ut_event *ev)
{
    if (!ev || (unsigned)ev->kind >= UT_KIND__COUNT || ev->tab.len == 0 ||
        ev->tab.len > UT_TAB_MAX_BYTES)
        return UT_EINVAL;
    int64_t engine_t = ev->rt_us ? ev->rt_us : ev->time_us;
    ut_engine_advance(e, engine_t);
    /* The clock never moves back: an event received before the engine's
     * clock (a wall clock stepped back, a batch stamped before a timer ran)
     * is accepted at the clock, and recorded so (on_accepted), so that its
     * replay advances exactly as far before applying it as this did. */
    ut_event at_clock;
    if (ev->rt_us && ev->rt_us < e->clock_us) {
        at_clock = *ev;
        at_clock.rt_us = e->clock_us;
        ev = &at_clock;
        engine_t = e->clock_us;
    }

    ut__tab *t = ut__tabs_find(&e->tabs, ev->tab);
    if (t && ev->has_seq) {
        switch (ut__seqwin_check(&t->seqwin, ev->seq)) {
        case UT__SEQ_NEW: break;
        case UT__SEQ_DUP: e->stats.duplicates++; return UT_EDUP;
        case UT__SEQ_JUMP: e->stats.seq_jumps++; return UT_ELIMIT;
        }
    }
    if ((ev->kind == UT_KIND_UNLOAD || ev->kind == UT_KIND_CLOSE) && !t)
        return apply_tabless(e, ev);

    ut_event red = *ev;
    ut_buf_reset(&e->scratch);
    ut_status st = ev->kind == UT_KIND_CLOSE ? UT_OK : ut_redact_event(e->redactor, ev, &red, &e->scratch);
    if (st != UT_OK)
        return st;
    bool created;
    if ((st = tab_for(e, &red, &t, &created)) != UT_OK)
        return st;

    bool late = t->reorder.applied_any && red.time_us < t->last_us;
    bool gone = false;
    if ((st = apply_or_hold(e, t, &red, late, &gone)) != UT_OK) {
        if (created) {
            ut__tabs_remove(&e->tabs, t);
            ut__tab_free(t);
        } else {
            tab_schedule(e, t);
        }
        return st;
    }
    e->serial++;
    if (late)
        e->stats.late++;
    if (!gone) /* a close frees `t` */
        apply_settle(e, t, ev, engine_t, late, created);
    return UT_OK;
}

/* ---- Tab information ---- */

void ut__tab_page_status(const ut__tab *t, ut_stab_status *out)
{
    if (t->stab) {
        ut_stab_status_get(t->stab, out);
        /* A page answering an action is changing from the action until
         * it settled (actions.h). */
        if (t->action.pending && out->state == UT_PAGE_STABLE) {
            out->state = UT_PAGE_CHANGING;
            out->since_us = t->action.at_us;
        }
        return;
    }
    memset(out, 0, sizeof *out);
    out->state = UT_PAGE_STABLE;
}

static void tab_info_fill(const ut__tab *t, ut_tab_info *out)
{
    out->tab = ut__tab_key(t);
    out->url = ut__tab_url(t);
    out->title = ut__tab_title(t);
    out->events = t->ring.count;
    out->last_us = t->last_us;
    ut__tab_page_status(t, &out->page);
}

ut_status ut_engine_tab_info(const ut_engine *e, ut_str tab, ut_tab_info *out)
{
    const ut__tab *t = ut__tabs_find(&e->tabs, tab);
    if (!t)
        return UT_ENOENT;
    tab_info_fill(t, out);
    return UT_OK;
}

void ut_engine_each_tab(const ut_engine *e, bool (*visit)(void *ud, const ut_tab_info *t), void *ud)
{
    for (const ut__tab *t = e->tabs.lru_head; t; t = t->lru_next) {
        ut_tab_info info;
        tab_info_fill(t, &info);
        if (!visit(ud, &info))
            return;
    }
}

/* The JSON serializers: the JSON trace of protocol §4.4, the page state,
 * GET /v1/tabs and the JSON of one applied event (the event streams). Page
 * text goes through the JSON string escaper. */
#include "isotime.h"
#include "num.h"
#include "trace.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- JSON ---- */

static void json_key(ut_buf *out, const char *key)
{
    ut_buf_append(out, ",\"", 2);
    ut_buf_append_cstr(out, key);
    ut_buf_append(out, "\":", 2);
}

static void json_u64(ut_buf *out, const char *key, uint64_t v)
{
    json_key(out, key);
    ut_buf_append_u64(out, v);
}

static void json_bool(ut_buf *out, const char *key, bool v)
{
    json_key(out, key);
    ut_buf_append_cstr(out, v ? "true" : "false");
}

/* `{"kind":"word"`, the start of an object; `word` needs no escaping. */
static void json_open_kind(ut_buf *out, const char *word)
{
    ut_buf_append_cstr(out, "{\"kind\":\"");
    ut_buf_append_cstr(out, word);
    ut_buf_append(out, "\"", 1);
}

static void json_str_field(ut_buf *out, const char *key, ut_str v)
{
    json_key(out, key);
    ut_buf_append_json_str(out, v);
}

static void json_ctx(ut_buf *out, const ut__entry *en)
{
    ut_str list = ut__entry_field(en, UT__F_CTX), item;
    if ((en->flags & UT__EF_SENS) || en->ctx_kind == UT_CTX_NONE)
        return;
    json_key(out, "ctx");
    json_open_kind(out, UT__ENUM_NAME(ut_ctx_kind_names, en->ctx_kind));
    ut_buf_append(out, ",", 1);
    if (en->ctx_kind == UT_CTX_ROW) {
        ut_buf_append_cstr(out, "\"cells\":[");
        for (bool first = true; ut__list_next(&list, &item); first = false) {
            if (!first)
                ut_buf_append(out, ",", 1);
            ut_buf_append_json_str(out, item);
        }
        ut_buf_append_cstr(out, "]}");
    } else {
        ut_buf_append_cstr(out, "\"name\":");
        if (!ut__list_next(&list, &item))
            item = UT_STR_LIT("");
        ut_buf_append_json_str(out, item);
        ut_buf_append_cstr(out, "}");
    }
}

static void json_state(ut_buf *out, uint8_t set, uint8_t on)
{
    if (!set)
        return;
    json_key(out, "state");
    ut_buf_append(out, "{", 1);
    bool first = true;
    for (unsigned i = 0; i < UT_STATE__COUNT; i++) {
        if (!(set & (1u << i)))
            continue;
        ut_buf_append_cstr(out, first ? "\"" : ",\"");
        ut_buf_append_cstr(out, ut_state_names[i]);
        ut_buf_append_cstr(out, on & (1u << i) ? "\":true" : "\":false");
        first = false;
    }
    ut_buf_append(out, "}", 1);
}

/* How a JSON trace is written: `compact` (protocol §4.4) leaves out what
 * an assistant cannot use (element keys, default values, epoch times, the
 * full URL next to its path) and prints times as the text trace does. */
typedef struct json_style {
    bool compact;
    int32_t tz;
} json_style;

/* Whose action a click or change was when not the user's: "actor"
 * ("script" or "assistant"; left out for the user's, the default), and the
 * older "trusted": false for the script's. */
static void json_trusted(ut_buf *out, const ut__entry *en)
{
    if (en->flags & UT__EF_UNTRUSTED) {
        ut_buf_append_cstr(out, ",\"trusted\":false");
        json_str_field(out, "actor", ut_str_cstr(ut_actor_names[UT_ACTOR_SCRIPT]));
    } else if (en->flags & UT__EF_ASSISTANT) {
        json_str_field(out, "actor", ut_str_cstr(ut_actor_names[UT_ACTOR_ASSISTANT]));
    }
}

/* "fields": [{"role", "name", "text"}, ...] of a list of invalid fields
 * (ut__invalid_list); "name" left out when the sender withheld it. */
static void json_invalid_fields(ut_buf *out, ut_str list)
{
    ut_str role, name, text;
    json_key(out, "fields");
    ut_buf_append(out, "[", 1);
    for (bool first = true;
         ut__list_next(&list, &role) && ut__list_next(&list, &name) && ut__list_next(&list, &text);
         first = false) {
        ut_buf_append_cstr(out, first ? "{\"role\":" : ",{\"role\":");
        ut_buf_append_json_str(out, role);
        if (name.len)
            json_str_field(out, "name", name);
        json_str_field(out, "text", text);
        ut_buf_append(out, "}", 1);
    }
    ut_buf_append(out, "]", 1);
}

static void json_outcome(ut_buf *out, const ut__entry *en, const json_style *js)
{
    ut_str role = ut__entry_field(en, UT__F_OUT_ROLE);
    ut_str text = ut__entry_field(en, UT__F_OUT_TEXT);
    if (js->compact && en->outcome == UT__OUT_NONE)
        return;
    json_key(out, "outcome");
    switch ((ut__outcome)en->outcome) {
    case UT__OUT_NONE: ut_buf_append_cstr(out, "null"); return;
    case UT__OUT_DIALOG:
        ut_buf_append_cstr(out, "{\"kind\":\"opened\"");
        json_str_field(out, "role", role);
        json_str_field(out, "name", text);
        break;
    case UT__OUT_NAV:
        ut_buf_append_cstr(out, "{\"kind\":\"navigated\"");
        json_str_field(out, "path", text);
        break;
    case UT__OUT_ALERT:
        ut_buf_append_cstr(out, "{\"kind\":\"alert\"");
        json_str_field(out, "role", role);
        if (en->outcome_detail != UT_LEVEL_NONE)
            json_str_field(out, "level", ut_str_cstr(UT__ENUM_NAME(ut_level_names, en->outcome_detail)));
        json_str_field(out, "text", text);
        break;
    case UT__OUT_CHANGED: ut_buf_append_cstr(out, "{\"kind\":\"page_changed\""); break;
    case UT__OUT_DEAD: ut_buf_append_cstr(out, "{\"kind\":\"no_response\""); break;
    case UT__OUT_INVALID:
        ut_buf_append_cstr(out, "{\"kind\":\"invalid\"");
        json_invalid_fields(out, text);
        break;
    }
    json_u64(out, "seq", en->outcome_id);
    ut_buf_append(out, "}", 1);
}

static void json_times(ut_buf *out, const json_style *js, const char *key, const char *ms_key,
                       int64_t us)
{
    json_key(out, key);
    if (js->compact) {
        ut_buf_append(out, "\"", 1);
        ut__trace_put_clock(out, us, js->tz);
        ut_buf_append(out, "\"", 1);
        return;
    }
    ut__buf_append_iso_time(out, us);
    json_key(out, ms_key);
    ut_buf_append_i64(out, ut__floor_div(us, UT__US_PER_MS));
}

/* "el", which only the compact form leaves out. */
static void json_el(ut_buf *out, const json_style *js, ut_str el)
{
    if (!js->compact)
        json_str_field(out, "el", el);
}

static void json_click_flags(ut_buf *out, const json_style *js, const ut__entry *en)
{
    bool sens = en->flags & UT__EF_SENS, rage = en->flags & UT__EF_RAGE;
    if (!js->compact) {
        json_bool(out, "sensitive", sens);
        json_u64(out, "repeat", en->count);
        json_bool(out, "rage", rage);
        json_times(out, js, "last_time", "last_ms", en->last_us);
        return;
    }
    if (sens)
        ut_buf_append_cstr(out, ",\"sensitive\":true");
    if (en->count > 1) {
        json_u64(out, "repeat", en->count);
        json_times(out, js, "last_time", "last_ms", en->last_us);
    }
    if (rage)
        ut_buf_append_cstr(out, ",\"rage\":true");
}

/* One function a kind of trace entry; json_entry writes what they share. */
static void json_entry_click(ut_buf *out, const ut__entry *en, const json_style *js)
{
    json_str_field(out, "role", ut__entry_field(en, UT__F_ROLE));
    if (!(en->flags & UT__EF_SENS))
        json_str_field(out, "name", ut__entry_field(en, UT__F_NAME));
    json_el(out, js, ut__entry_field(en, UT__F_EL));
    json_ctx(out, en);
    json_state(out, en->state_set, en->state_on);
    if (en->sort != UT_SORT_UNSET)
        json_str_field(out, "sort", ut_str_cstr(UT__ENUM_NAME(ut_sort_names, en->sort)));
    json_trusted(out, en);
    json_click_flags(out, js, en);
    json_outcome(out, en, js);
}

static void json_entry_burst(ut_buf *out, const ut__entry *en, const json_style *js)
{
    json_str_field(out, "role", ut__entry_field(en, UT__F_ROLE));
    json_ctx(out, en);
    json_u64(out, "count", en->count);
    ut_buf_append_cstr(out, ",\"members\":[");
    ut_str list = ut__entry_field(en, UT__F_MEMBERS), member_el, member_name;
    uint32_t member = 0, member_on = en->state_set ? ut__burst_member_on(en) : 0;
    for (bool first = true; ut__list_next(&list, &member_el) && ut__list_next(&list, &member_name);
         first = false) {
        ut_buf_append_cstr(out, first ? "{" : ",{");
        if (!js->compact) {
            ut_buf_append_cstr(out, "\"el\":");
            ut_buf_append_json_str(out, member_el);
            ut_buf_append(out, ",", 1);
        }
        ut_buf_append_cstr(out, "\"name\":");
        ut_buf_append_json_str(out, member_name);
        if (en->state_set && member < 32)
            json_state(out, en->state_set, (member_on >> member) & 1u ? en->state_set : 0);
        member++;
        ut_buf_append(out, "}", 1);
    }
    ut_buf_append(out, "]", 1);
    json_trusted(out, en);
    json_times(out, js, "last_time", "last_ms", en->last_us);
    json_outcome(out, en, js);
}

static void json_entry_change(ut_buf *out, const ut__entry *en, const json_style *js)
{
    bool sens = en->flags & UT__EF_SENS;
    json_str_field(out, "role", ut__entry_field(en, UT__F_ROLE));
    if (!sens)
        json_str_field(out, "name", ut__entry_field(en, UT__F_NAME));
    json_el(out, js, ut__entry_field(en, UT__F_EL));
    if (sens || !js->compact)
        json_bool(out, "sensitive", sens);
    if (en->flags & UT__EF_HAS_VALUE)
        json_str_field(out, "value", ut__entry_field(en, UT__F_TEXT));
    if (en->flags & UT__EF_HAS_LEN)
        json_u64(out, "len", en->count);
    if (en->flags & UT__EF_HAS_CHECKED)
        json_bool(out, "checked", en->flags & UT__EF_CHECKED);
    json_trusted(out, en);
}

static void json_entry_app(ut_buf *out, const ut__entry *en)
{
    json_str_field(out, "name", ut__entry_field(en, UT__F_NAME));
    if (en->detail != UT_LEVEL_NONE)
        json_str_field(out, "level", ut_str_cstr(UT__ENUM_NAME(ut_level_names, en->detail)));
    json_str_field(out, "text", ut__entry_field(en, UT__F_TEXT));
    json_key(out, "data");
    ut_buf_append(out, "{", 1);
    ut_str list = ut__entry_field(en, UT__F_MEMBERS), key, value;
    for (bool first = true; ut__list_next(&list, &key) && ut__list_next(&list, &value); first = false) {
        if (!first)
            ut_buf_append(out, ",", 1);
        ut_buf_append_json_str(out, key);
        ut_buf_append(out, ":", 1);
        ut_buf_append_json_str(out, value);
    }
    ut_buf_append(out, "}", 1);
}

static void json_entry_alert(ut_buf *out, const ut__entry *en)
{
    json_str_field(out, "role", ut__entry_field(en, UT__F_ROLE));
    if (en->detail != UT_LEVEL_NONE)
        json_str_field(out, "level", ut_str_cstr(UT__ENUM_NAME(ut_level_names, en->detail)));
    json_str_field(out, "text", ut__entry_field(en, UT__F_TEXT));
}

static void json_entry_dialog(ut_buf *out, const ut__entry *en, const json_style *js)
{
    ut_str text = ut__entry_field(en, UT__F_TEXT);
    json_str_field(out, "state", ut_str_cstr(en->kind == UT__E_DIALOG_OPEN ? "open" : "close"));
    json_str_field(out, "role", ut__entry_field(en, UT__F_ROLE));
    json_str_field(out, "name", ut__entry_field(en, UT__F_NAME));
    json_el(out, js, ut__entry_field(en, UT__F_EL));
    if (text.len || !js->compact)
        json_str_field(out, "text", text);
}

static void json_entry_nav(ut_buf *out, const ut__entry *en, const json_style *js)
{
    ut_str url = ut__entry_field(en, UT__F_TEXT);
    if (!js->compact || en->detail != UT_NAV_LOAD)
        json_str_field(out, "how", ut_str_cstr(UT__ENUM_NAME(ut_nav_how_names, en->detail)));
    if (!js->compact)
        json_str_field(out, "url", url);
    json_str_field(out, "path", ut__url_path(url));
    json_str_field(out, "title", ut__entry_field(en, UT__F_NAME));
}

static void json_entry(ut_buf *out, const ut__entry *en, const json_style *js)
{
    static const char *const kinds[] = {
        [UT__E_NAV] = "nav", [UT__E_CLICK] = "click", [UT__E_BURST] = "burst",
        [UT__E_CHANGE] = "change", [UT__E_ALERT] = "alert", [UT__E_DIALOG_OPEN] = "dialog",
        [UT__E_DIALOG_CLOSE] = "dialog", [UT__E_APP] = "app", [UT__E_INVALID] = "invalid",
    };
    json_open_kind(out, UT__ENUM_NAME(kinds, en->kind));
    json_u64(out, "seq", en->id);
    json_times(out, js, "time", "ms", en->time_us);
    switch ((ut__entry_kind)en->kind) {
    case UT__E_CLICK: json_entry_click(out, en, js); break;
    case UT__E_BURST: json_entry_burst(out, en, js); break;
    case UT__E_CHANGE: json_entry_change(out, en, js); break;
    case UT__E_APP: json_entry_app(out, en); break;
    case UT__E_INVALID: json_invalid_fields(out, ut__entry_field(en, UT__F_MEMBERS)); break;
    case UT__E_ALERT: json_entry_alert(out, en); break;
    case UT__E_DIALOG_OPEN:
    case UT__E_DIALOG_CLOSE: json_entry_dialog(out, en, js); break;
    case UT__E_NAV: json_entry_nav(out, en, js); break;
    }
    ut_buf_append(out, "}", 1);
}

ut_status ut_page_state_json(const ut_stab_status *st, ut_buf *out)
{
    ut_buf_printf(out, "{\"stable\":%s,\"state\":\"%s\",\"marks\":%" PRIu64 ",\"since\":",
                  st->state == UT_PAGE_STABLE ? "true" : "false", ut__page_state_name(st), st->marks);
    if (st->since_us)
        ut_buf_printf(out, "%" PRId64, ut__floor_div(st->since_us, UT__US_PER_MS));
    else
        ut_buf_append_cstr(out, "null");
    ut_buf_printf(out, ",\"intensity\":%.3f,\"busy\":%" PRIu32, isfinite(st->intensity) ? st->intensity : 0.0,
                  st->busy);
    /* Only when they say something, so that the usual answer is unchanged. */
    if (st->net)
        ut_buf_printf(out, ",\"net\":%" PRIu32, st->net);
    if (st->gave_up)
        ut_buf_append_cstr(out, ",\"gave_up\":true");
    ut_buf_append(out, "}", 1);
    return out->oom ? UT_ENOMEM : UT_OK;
}

/* Weighs each JSON entry; the repeat hash comes from its text line. */
static void weigh_json(ut__line *lines, uint32_t n, const json_style *js, ut_buf *out)
{
    size_t start = out->len;
    for (uint32_t i = 0; i < n && !out->oom; i++) {
        ut__trace_entry_text(out, &lines[i], false);
        lines[i].body_hash = ut__trace_hash(out->data + start, out->len - start);
        ut_buf_truncate(out, start);
        ut_buf_append(out, ",", 1);
        json_entry(out, lines[i].en, js);
        uint32_t cost = ut__tokens_estimate(out->data + start, out->len - start);
        lines[i].cost[0][0] = lines[i].cost[0][1] = lines[i].cost[1][0] = lines[i].cost[1][1] = cost;
        ut_buf_truncate(out, start);
    }
}

static const char OMITTED_FMT[] = ",\"omitted\":%" PRIu32;

/* The JSON trace: every entry (no folding: a navigation is its own
 * event), chosen under max_tokens like the text trace's lines. */
void ut__trace_json(const ut__tab *t, const ut_trace_opts *opts, ut_buf *out)
{
    json_style js = {opts->compact, ut__trace_tab_tz(t)};
    size_t start = out->len;
    ut_buf_append_cstr(out, "{\"tab\":");
    ut_buf_append_json_str(out, ut__tab_key(t));
    json_str_field(out, "url", ut__tab_url(t));
    json_str_field(out, "title", ut__tab_title(t));
    if (js.compact) {
        /* times are local already */
    } else if (t->has_tz)
        ut_buf_printf(out, ",\"tz\":%" PRId32, t->tz_min);
    else
        ut_buf_append_cstr(out, ",\"tz\":null");
    ut_buf_append_cstr(out, ",\"events\":[");
    size_t fixed_len = out->len - start;

    /* The page object is counted before the events so that it always fits
     * the budget like the text trace's PAGE line. */
    ut_stab_status page;
    ut__tab_page_status(t, &page);
    size_t page_start = out->len;
    ut_buf_append_cstr(out, "],\"page\":");
    ut_page_state_json(&page, out);
    ut_buf_append_cstr(out, "}");
    uint64_t fixed = out->oom ? 0
                              : ut__tokens_estimate(out->data + start, fixed_len) +
                                    ut__tokens_estimate(out->data + page_start, out->len - page_start);
    ut_buf_truncate(out, page_start);

    uint32_t n = ut__trace_shown_entries(t, opts);
    ut__line *lines = n ? ut_calloc(n, sizeof *lines) : NULL;
    uint32_t *order = n && opts->max_tokens ? ut_calloc(n, sizeof *order) : NULL;
    if (n && (!lines || (opts->max_tokens && !order))) {
        ut_free(lines);
        out->oom = true;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        lines[i] = (ut__line){.en = *ut__ring_newest(&t->ring, i), .keep = true};
    uint32_t left_out = 0;
    if (opts->max_tokens && n) {
        weigh_json(lines, n, &js, out);
        ut__lines_rank(lines, n);
        char note[40];
        snprintf(note, sizeof note, OMITTED_FMT, n);
        left_out = ut__lines_select(lines, n, fixed, opts->max_tokens,
                                    ut__tokens_estimate(note, strlen(note)), order);
    }
    bool first = true;
    for (uint32_t i = 0; i < n; i++) {
        if (!lines[i].keep)
            continue;
        if (!first)
            ut_buf_append(out, ",", 1);
        json_entry(out, lines[i].en, &js);
        first = false;
    }
    ut_free(order);
    ut_free(lines);
    ut_buf_append_cstr(out, "]");
    if (left_out)
        ut_buf_printf(out, OMITTED_FMT, left_out);
    ut_buf_append_cstr(out, ",\"page\":");
    ut_page_state_json(&page, out);
    ut_buf_append_cstr(out, "}");
}

/* ---- GET /v1/tabs and SSE events ---- */

ut_status ut_engine_tabs_json(const ut_engine *e, ut_buf *out)
{
    ut_buf_mark mark = ut_buf_begin(out);
    ut_buf_append(out, "[", 1);
    for (const ut__tab *t = e->tabs.lru_head; t; t = t->lru_next) {
        ut_stab_status page;
        ut__tab_page_status(t, &page);
        ut_buf_append_cstr(out, t == e->tabs.lru_head ? "{\"tab\":" : ",{\"tab\":");
        ut_buf_append_json_str(out, ut__tab_key(t));
        json_str_field(out, "url", ut__tab_url(t));
        json_str_field(out, "title", ut__tab_title(t));
        json_u64(out, "events", t->ring.count);
        json_str_field(out, "state", ut_str_cstr(ut__page_state_name(&page)));
        json_key(out, "last");
        ut_buf_append_i64(out, ut__floor_div(t->last_us, UT__US_PER_MS));
        ut_buf_append(out, "}", 1);
    }
    ut_buf_append(out, "]", 1);
    return ut_buf_end(out, mark, UT_OK);
}

static void json_event_ctx(ut_buf *out, const ut_ctx *ctx)
{
    if (ctx->kind == UT_CTX_NONE)
        return;
    json_key(out, "ctx");
    json_open_kind(out, UT__ENUM_NAME(ut_ctx_kind_names, ctx->kind));
    ut_buf_append(out, ",", 1);
    if (ctx->kind == UT_CTX_ROW) {
        ut_buf_append_cstr(out, "\"cells\":[");
        for (uint32_t i = 0; i < ctx->ncells && i < UT_CTX_CELLS_MAX; i++) {
            if (i)
                ut_buf_append(out, ",", 1);
            ut_buf_append_json_str(out, ctx->cells[i]);
        }
        ut_buf_append_cstr(out, "]}");
    } else {
        ut_buf_append_cstr(out, "\"name\":");
        ut_buf_append_json_str(out, ctx->name);
        ut_buf_append(out, "}", 1);
    }
}

/* One function a kind of raw event for the SSE stream; ut_event_to_json
 * writes what they share. */
static void event_json_nav(ut_buf *out, const ut_event *ev)
{
    json_str_field(out, "url", ev->url);
    json_str_field(out, "title", ev->title);
    json_str_field(out, "how", ut_str_cstr(UT__ENUM_NAME(ut_nav_how_names, ev->how)));
    if (ev->has_tz)
        ut_buf_printf(out, ",\"tz\":%" PRId32, ev->tz_min);
}

/* Clicks and changes share their target; then each adds its own. */
static void event_json_input(ut_buf *out, const ut_event *ev)
{
    json_str_field(out, "role", ev->role);
    if (!ev->sens)
        json_str_field(out, "name", ev->name);
    json_str_field(out, "el", ev->el);
    json_bool(out, "sens", ev->sens);
    if (ev->untrusted)
        ut_buf_append_cstr(out, ",\"trusted\":false");
    if (ev->assistant)
        json_str_field(out, "actor", ut_str_cstr(ut_actor_names[UT_ACTOR_ASSISTANT]));
    if (ev->kind == UT_KIND_CLICK) {
        if (!ev->sens)
            json_event_ctx(out, &ev->ctx);
        json_state(out, ev->state_set, ev->state_on);
        if (ev->sort != UT_SORT_UNSET)
            json_str_field(out, "sort", ut_str_cstr(UT__ENUM_NAME(ut_sort_names, ev->sort)));
        return;
    }
    if (ev->has_value && !ev->sens)
        json_str_field(out, "value", ev->value);
    if (ev->has_len)
        json_u64(out, "len", ev->len);
    if (ev->has_checked)
        json_bool(out, "checked", ev->checked);
}

static void event_json_mutation(ut_buf *out, const ut_event *ev)
{
    ut_buf_append_cstr(out, ",\"dom\":[");
    ut_buf_append_u64(out, ev->dom_elements);
    ut_buf_append(out, ",", 1);
    ut_buf_append_u64(out, ev->dom_depth);
    ut_buf_append_cstr(out, "],\"recs\":[");
    for (uint32_t i = 0; i < ev->nrecs; i++) {
        const ut_mut_rec *r = &ev->recs[i];
        ut_buf_append_cstr(out, i ? ",[" : "[");
        ut_buf_append_json_str(out, r->el);
        const uint64_t nums[] = {(uint64_t)r->kind, r->depth, r->subtree, r->nodes, r->bytes};
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
            ut_buf_append(out, ",", 1);
            ut_buf_append_u64(out, nums[k]);
        }
        ut_buf_append(out, "]", 1);
    }
    ut_buf_append(out, "]", 1);
    json_u64(out, "busy", ev->busy);
    if (ev->has_net)
        json_u64(out, "net", ev->net);
    if (ev->dropped)
        json_u64(out, "dropped", ev->dropped);
    if (ev->loaded)
        ut_buf_append_cstr(out, ",\"loaded\":true");
    if (ev->input)
        ut_buf_append_cstr(out, ",\"input\":true");
}

static void event_json_app(ut_buf *out, const ut_event *ev)
{
    json_str_field(out, "name", ev->name);
    if (ev->text.len)
        json_str_field(out, "text", ev->text);
    if (ev->level != UT_LEVEL_NONE)
        json_str_field(out, "level", ut_str_cstr(UT__ENUM_NAME(ut_level_names, ev->level)));
    json_key(out, "data");
    ut_buf_append(out, "{", 1);
    for (uint32_t i = 0; i < ev->ndata && i < UT_APP_DATA_MAX; i++) {
        if (i)
            ut_buf_append(out, ",", 1);
        ut_buf_append_json_str(out, ev->data[i].key);
        ut_buf_append(out, ":", 1);
        ut_buf_append_json_str(out, ev->data[i].value);
    }
    ut_buf_append(out, "}", 1);
}

static void event_json_invalid(ut_buf *out, const ut_event *ev)
{
    json_key(out, "fields");
    ut_buf_append(out, "[", 1);
    for (uint32_t i = 0; i < ev->nfields && i < UT_INVALID_FIELDS_MAX; i++) {
        ut_buf_append_cstr(out, i ? ",{\"role\":" : "{\"role\":");
        ut_buf_append_json_str(out, ev->fields[i].role);
        if (ev->fields[i].name.len)
            json_str_field(out, "name", ev->fields[i].name);
        json_str_field(out, "text", ev->fields[i].text);
        ut_buf_append(out, "}", 1);
    }
    ut_buf_append(out, "]", 1);
}

ut_status ut_event_to_json(const ut_event *ev, ut_buf *out)
{
    ut_buf_mark mark = ut_buf_begin(out);
    json_open_kind(out, ut_kind_name(ev->kind));
    json_str_field(out, "tab", ev->tab);
    static const json_style full = {false, 0};
    json_times(out, &full, "time", "ms", ev->time_us);
    if (ev->has_seq)
        json_u64(out, "seq", ev->seq);
    switch (ev->kind) {
    case UT_KIND_NAV: event_json_nav(out, ev); break;
    case UT_KIND_CLICK:
    case UT_KIND_CHANGE: event_json_input(out, ev); break;
    case UT_KIND_ALERT:
        json_str_field(out, "role", ev->role);
        json_str_field(out, "text", ev->text);
        if (ev->level != UT_LEVEL_NONE)
            json_str_field(out, "level", ut_str_cstr(UT__ENUM_NAME(ut_level_names, ev->level)));
        break;
    case UT_KIND_DIALOG:
        json_str_field(out, "state", ut_str_cstr(ev->dialog_state == UT_DIALOG_OPEN ? "open" : "close"));
        json_str_field(out, "role", ev->role);
        json_str_field(out, "name", ev->name);
        json_str_field(out, "el", ev->el);
        json_str_field(out, "text", ev->text);
        break;
    case UT_KIND_MUTATION: event_json_mutation(out, ev); break;
    case UT_KIND_UNLOAD:
        json_bool(out, "persisted", ev->persisted);
        break;
    case UT_KIND_APP: event_json_app(out, ev); break;
    case UT_KIND_INVALID: event_json_invalid(out, ev); break;
    case UT_KIND_CLOSE:
    case UT_KIND__COUNT: break;
    }
    ut_buf_append(out, "}", 1);
    return ut_buf_end(out, mark, UT_OK);
}

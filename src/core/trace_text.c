/* The text trace of protocol §4: the lines of the prompt.
 *
 * Text that came from a page is printed through `clip`, the one place it
 * enters a text trace: it is escaped there (escape.h: no line breaks, no
 * quote, bracket, arrow or frame of its own), so that no name, cell or
 * snapshot can start a line or end its quotes and pass for structure, and
 * long text is cut on a character boundary with "…". */
#include "escape.h"
#include "num.h"
#include "trace.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define US_PER_S INT64_C(1000000)
#define SECONDS_PER_DAY INT64_C(86400)

static const char ELLIPSIS[] = "\xE2\x80\xA6"; /* U+2026 */
static const char ARROW[] = " \xE2\x86\x92 "; /* " → " */

/* How a navigation reads in a text trace: a full load needs no word; the
 * history API's words mean little to an assistant, so say what the user
 * saw. */
static const char *const how_labels[UT_NAV__COUNT] = {
    [UT_NAV_LOAD] = "", [UT_NAV_RELOAD] = " (reload)", [UT_NAV_PUSH] = " (in-app)",
    [UT_NAV_REPLACE] = " (in-app redirect)", [UT_NAV_POP] = " (back/forward)",
    [UT_NAV_HASH] = " (in-page anchor)",
};

/* How a column header's sort order reads after a click on it. */
static const char *const sort_labels[UT_SORT__COUNT] = {
    [UT_SORT_UNSET] = "", [UT_SORT_NONE] = " (not sorted)", [UT_SORT_ASCENDING] = " (sorted ascending)",
    [UT_SORT_DESCENDING] = " (sorted descending)", [UT_SORT_OTHER] = " (sorted)",
};

/* ---- Small pieces ---- */

static size_t utf8_chars(const char *p, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)p[i] & 0xC0) != 0x80;
    return n;
}

/* Text cut to a number of characters: pieces are appended until the
 * budget runs out, then "…" once. */
typedef struct clip {
    ut_buf *out;
    size_t left;
    bool cut;
    bool token; /* a role: ut__escape_token instead of ut__escape_text */
} clip;

static void clip_put(clip *c, ut_str s)
{
    if (c->cut || s.len == 0)
        return;
    if (c->left == 0) {
        ut_buf_append_cstr(c->out, ELLIPSIS);
        c->cut = true;
        return;
    }
    size_t n = ut_utf8_prefix_chars(s, c->left);
    (c->token ? ut__escape_token : ut__escape_text)(c->out, s.ptr, n);
    c->left -= utf8_chars(s.ptr, n);
    if (n < s.len) {
        ut_buf_append_cstr(c->out, ELLIPSIS);
        c->cut = true;
    }
}

static void put_text(ut_buf *out, ut_str s, size_t max_chars)
{
    clip c = {out, max_chars, false, false};
    clip_put(&c, s);
}

static void put_quoted(ut_buf *out, ut_str s)
{
    ut_buf_append(out, "\"", 1);
    put_text(out, s, UT_TEXT_PRINT_MAX_CHARS);
    ut_buf_append(out, "\"", 1);
}

/* " ROLE", or nothing for an element without a role. A role is a token
 * (escape.h: no space, quote or bracket), so it needs no brackets to stand
 * apart from the quoted name after it. */
static void put_role(ut_buf *out, ut_str role)
{
    if (!role.len)
        return;
    ut_buf_append(out, " ", 1);
    clip c = {out, UT_ROLE_MAX_BYTES, false, true};
    clip_put(&c, role);
}

static void put_name(ut_buf *out, ut_str name)
{
    if (!name.len)
        return;
    ut_buf_append(out, " ", 1);
    put_quoted(out, name);
}

#define CLOCK_LEN 8 /* "HH:MM:SS" */

static void format_clock(char dst[CLOCK_LEN + 1], int64_t time_us, int32_t tz_min)
{
    int64_t secs = ut__floor_div(time_us, US_PER_S) + (int64_t)tz_min * 60;
    int64_t sod = secs - ut__floor_div(secs, SECONDS_PER_DAY) * SECONDS_PER_DAY;
    const int64_t parts[3] = {sod / 3600, sod / 60 % 60, sod % 60};
    for (int i = 0; i < 3; i++) {
        dst[3 * i] = (char)('0' + parts[i] / 10);
        dst[3 * i + 1] = (char)('0' + parts[i] % 10);
        if (i < 2)
            dst[3 * i + 2] = ':';
    }
    dst[CLOCK_LEN] = '\0';
}

/* Appends the HH:MM:SS of `time_us` in the zone `tz_min` minutes east of
 * UTC. */
ut_status ut__trace_put_clock(ut_buf *out, int64_t time_us, int32_t tz_min)
{
    char clock[CLOCK_LEN + 1];
    format_clock(clock, time_us, tz_min);
    return ut_buf_append(out, clock, CLOCK_LEN);
}

/* Appends `before`, the digits of `v`, then `after`: the counts of the
 * text trace without printf. */
static void put_num(ut_buf *out, const char *before, uint64_t v, const char *after)
{
    ut_buf_append_cstr(out, before);
    ut_buf_append_u64(out, v);
    ut_buf_append_cstr(out, after);
}

/* "error ": a level word before what it qualifies. */
static void put_level(ut_buf *out, uint8_t level)
{
    ut_buf_append_cstr(out, UT__ENUM_NAME(ut_level_names, level));
    ut_buf_append(out, " ", 1);
}

/* ---- Text lines ---- */

/* The STATE of a click: "(checked)", "(not expanded)", "(checked, selected)".
 * A state sent as false prints as "not ...": an assistant must be able to
 * tell a collapsed section from one whose state is unknown. */
static void put_state(ut_buf *out, uint8_t set, uint8_t on)
{
    bool first = true;
    for (unsigned i = 0; i < UT_STATE__COUNT; i++) {
        if (!(set & (1u << i)))
            continue;
        ut_buf_append_cstr(out, first ? " (" : ", ");
        if (!(on & (1u << i)))
            ut_buf_append_cstr(out, "not ");
        ut_buf_append_cstr(out, ut_state_names[i]);
        first = false;
    }
    if (!first)
        ut_buf_append_cstr(out, ")");
}

/* The click's context, "(toolbar: Filters)"; one the line above already
 * named (budget.c, ut__line_same_ctx) as "(same toolbar)". */
static void put_ctx(ut_buf *out, const ut__entry *en, bool same_ctx)
{
    ut_str list = ut__entry_field(en, UT__F_CTX), item;
    if ((en->flags & UT__EF_SENS) || en->ctx_kind == UT_CTX_NONE || list.len == 0)
        return;
    ut_buf_append_cstr(out, same_ctx ? " (same " : " (");
    ut_buf_append_cstr(out, UT__ENUM_NAME(ut_ctx_kind_names, en->ctx_kind));
    if (same_ctx) {
        ut_buf_append_cstr(out, ")");
        return;
    }
    ut_buf_append_cstr(out, ": ");
    clip c = {out, UT_CTX_PRINT_MAX_CHARS, false, false};
    bool first = true;
    while (ut__list_next(&list, &item)) {
        if (!first)
            clip_put(&c, UT_STR_LIT(" | "));
        clip_put(&c, item);
        first = false;
    }
    ut_buf_append_cstr(out, ")");
}

static const char *alert_word(ut_str role)
{
    if (ut_str_eq_cstr(role, "status"))
        return "status";
    if (ut_str_eq_cstr(role, "log"))
        return "log";
    return "alert";
}

/* `error alert "Price must be positive"`: the level when the sender gave
 * one, the role word, and the text. */
static void put_alert(ut_buf *out, ut_str role, uint8_t level, ut_str text)
{
    if (level != UT_LEVEL_NONE)
        put_level(out, level);
    ut_buf_append_cstr(out, alert_word(role));
    ut_buf_append(out, " ", 1);
    put_quoted(out, text);
}

/* `invalid: textbox "Amount": "Enter an amount" · checkbox "Terms":
 * "Accept the terms"`: each control the page found invalid, with its
 * message, all page text quoted and cut like names. */
static void put_invalid(ut_buf *out, ut_str list)
{
    ut_str role, name, text;
    ut_buf_append_cstr(out, "invalid:");
    for (bool first = true;
         ut__list_next(&list, &role) && ut__list_next(&list, &name) && ut__list_next(&list, &text);
         first = false) {
        if (!first)
            ut_buf_append_cstr(out, " \xC2\xB7");
        put_role(out, role);
        put_name(out, name);
        ut_buf_append_cstr(out, ": ");
        put_quoted(out, text);
    }
}

/* `nav`: the navigation entry the click caused, printed here instead of
 * on a line of its own: `→ navigated (in-app) to /x "Title"`. A click
 * that changed nothing on the page reads `→ no response`. */
static void put_outcome(ut_buf *out, const ut__entry *en, const ut__entry *nav)
{
    ut_str role = ut__entry_field(en, UT__F_OUT_ROLE);
    ut_str text = ut__entry_field(en, UT__F_OUT_TEXT);
    switch ((ut__outcome)en->outcome) {
    case UT__OUT_NONE: return;
    case UT__OUT_DIALOG:
        ut_buf_append_cstr(out, ARROW);
        ut_buf_append_cstr(out, "opened");
        put_role(out, role);
        put_name(out, text);
        return;
    case UT__OUT_NAV:
        ut_buf_append_cstr(out, ARROW);
        ut_buf_append_cstr(out, "navigated");
        if (nav)
            ut_buf_append_cstr(out, UT__ENUM_NAME(how_labels, nav->detail));
        ut_buf_append_cstr(out, " to ");
        put_text(out, text, UT_TEXT_PRINT_MAX_CHARS);
        if (nav)
            put_name(out, ut__entry_field(nav, UT__F_NAME));
        return;
    case UT__OUT_ALERT:
        ut_buf_append_cstr(out, ARROW);
        put_alert(out, role, en->outcome_detail, text);
        return;
    case UT__OUT_CHANGED:
        ut_buf_append_cstr(out, ARROW);
        ut_buf_append_cstr(out, "page changed");
        return;
    case UT__OUT_DEAD:
        ut_buf_append_cstr(out, ARROW);
        ut_buf_append_cstr(out, "no response");
        return;
    case UT__OUT_INVALID:
        ut_buf_append_cstr(out, ARROW);
        put_invalid(out, text);
        return;
    }
}

/* " (by script)" for a click or change that a script dispatched with no
 * user input behind it, " (by assistant)" for one an assistant's executor
 * declared: an assistant must tell the user's actions from its own and
 * from the page's. */
static void put_trusted(ut_buf *out, const ut__entry *en)
{
    if (en->flags & UT__EF_UNTRUSTED)
        ut_buf_append_cstr(out, " (by script)");
    else if (en->flags & UT__EF_ASSISTANT)
        ut_buf_append_cstr(out, " (by assistant)");
}

/* The word of a burst's one state bit: "checked", "not checked". */
static void put_state_word(ut_buf *out, uint8_t bit, bool on)
{
    for (unsigned i = 0; i < UT_STATE__COUNT; i++) {
        if (bit != (1u << i))
            continue;
        if (!on)
            ut_buf_append_cstr(out, "not ");
        ut_buf_append_cstr(out, ut_state_names[i]);
    }
}

static void put_click(ut_buf *out, const ut__line *l, bool same_ctx)
{
    const ut__entry *en = l->en;
    bool rage = en->flags & UT__EF_RAGE;
    ut_buf_append_cstr(out, "click");
    /* A double click reads as one click; more is worth saying. */
    if (rage || en->count > 2)
        put_num(out, " \xC3\x97", en->count, "");
    put_role(out, ut__entry_field(en, UT__F_ROLE));
    if (en->flags & UT__EF_SENS) {
        ut_buf_append_cstr(out, " (sensitive)");
    } else {
        put_name(out, ut__entry_field(en, UT__F_NAME));
        put_trusted(out, en);
        put_state(out, en->state_set, en->state_on);
        ut_buf_append_cstr(out, UT__ENUM_NAME(sort_labels, en->sort));
        put_ctx(out, en, same_ctx);
    }
    if (rage)
        ut_buf_append_cstr(out, " (rage click)");
    put_outcome(out, en, l->nav);
}

/* The members of a burst whose state bit is on, among its first `n`. */
static uint32_t burst_on_count(uint32_t member_on, uint32_t from, uint32_t n)
{
    uint32_t on = 0;
    for (uint32_t i = from; i < n && i < 32; i++)
        on += (member_on >> i) & 1u;
    return on;
}

/* A burst line. When its clicks carried a state, the line says it: once,
 * "(checked)", when every member has the same; else after each name shown,
 * and as counts for the members not shown. */
static void put_burst(ut_buf *out, const ut__line *l, bool same_ctx)
{
    const ut__entry *en = l->en;
    put_num(out, "clicked ", en->count, "\xC3\x97");
    put_role(out, ut__entry_field(en, UT__F_ROLE));
    put_trusted(out, en);
    ut_str list = ut__entry_field(en, UT__F_MEMBERS), el, name;
    uint32_t stored = 0;
    for (ut_str it = list; ut__list_next(&it, &el) && ut__list_next(&it, &name);)
        stored++;
    uint8_t bit = en->state_set;
    uint32_t member_on = bit ? ut__burst_member_on(en) : 0;
    uint32_t on = burst_on_count(member_on, 0, stored);
    bool uniform = bit && stored == en->count && (on == 0 || on == stored);
    if (uniform) {
        ut_buf_append_cstr(out, " (");
        put_state_word(out, bit, on != 0);
        ut_buf_append_cstr(out, ")");
    }
    put_ctx(out, en, same_ctx);
    ut_buf_append_cstr(out, ":");
    uint32_t shown = 0;
    while (shown < UT_BURST_NAMES_SHOWN && ut__list_next(&list, &el) && ut__list_next(&list, &name)) {
        ut_buf_append_cstr(out, shown ? ", " : " ");
        put_quoted(out, name);
        if (bit && !uniform) {
            ut_buf_append_cstr(out, " (");
            put_state_word(out, bit, (member_on >> shown) & 1u);
            ut_buf_append_cstr(out, ")");
        }
        shown++;
    }
    if (en->count > shown) {
        ut_buf_append(out, " ", 1);
        ut_buf_append_cstr(out, ELLIPSIS);
        put_num(out, " (+", en->count - shown, " more");
        if (bit && !uniform && stored > shown) {
            uint32_t rest_on = burst_on_count(member_on, shown, stored);
            ut_buf_append_cstr(out, ": ");
            put_num(out, "", rest_on, " ");
            put_state_word(out, bit, true);
            put_num(out, ", ", stored - shown - rest_on, " ");
            put_state_word(out, bit, false);
        }
        ut_buf_append_cstr(out, ")");
    }
    put_outcome(out, en, l->nav);
}

/* `app error "order.refund_failed": "Refund exceeds captured amount"
 * (order: 4411, amount: 120.00)`: the level ("app event" without one), the
 * app's event name, its message and its data, all cut like other page
 * text. */
static void put_app(ut_buf *out, const ut__entry *en)
{
    ut_buf_append_cstr(out, "app ");
    if (en->detail != UT_LEVEL_NONE)
        ut_buf_append_cstr(out, UT__ENUM_NAME(ut_level_names, en->detail));
    else
        ut_buf_append_cstr(out, "event");
    ut_buf_append(out, " ", 1);
    put_quoted(out, ut__entry_field(en, UT__F_NAME));
    ut_str text = ut__entry_field(en, UT__F_TEXT);
    if (text.len) {
        ut_buf_append_cstr(out, ": ");
        put_quoted(out, text);
    }
    ut_str list = ut__entry_field(en, UT__F_MEMBERS), key, value;
    if (!list.len)
        return;
    ut_buf_append_cstr(out, " (");
    clip c = {out, UT_TEXT_PRINT_MAX_CHARS, false, false};
    for (bool first = true; ut__list_next(&list, &key) && ut__list_next(&list, &value); first = false) {
        if (!first)
            clip_put(&c, UT_STR_LIT(", "));
        clip_put(&c, key);
        clip_put(&c, UT_STR_LIT(": "));
        clip_put(&c, value);
    }
    ut_buf_append_cstr(out, ")");
}

static void put_change(ut_buf *out, const ut__entry *en)
{
    ut_str role = ut__entry_field(en, UT__F_ROLE);
    bool sens = en->flags & UT__EF_SENS;
    if (en->flags & UT__EF_HAS_LEN && !(en->flags & UT__EF_HAS_VALUE)) {
        put_num(out, "typed ", en->count, en->count == 1 ? " char into" : " chars into");
    } else {
        ut_buf_append_cstr(out, en->flags & (UT__EF_HAS_VALUE | UT__EF_HAS_CHECKED) ? "set"
                                                                                     : "changed");
    }
    put_role(out, role);
    if (sens)
        ut_buf_append_cstr(out, " (sensitive)");
    else
        put_name(out, ut__entry_field(en, UT__F_NAME));
    put_trusted(out, en);
    if (en->flags & UT__EF_HAS_VALUE) {
        ut_buf_append_cstr(out, " = ");
        put_quoted(out, ut__entry_field(en, UT__F_TEXT));
    } else if (en->flags & UT__EF_HAS_CHECKED && !(en->flags & UT__EF_HAS_LEN)) {
        ut_buf_append_cstr(out, en->flags & UT__EF_CHECKED ? " = checked" : " = unchecked");
    }
}

void ut__trace_entry_text(ut_buf *out, const ut__line *l, bool same_ctx)
{
    const ut__entry *en = l->en;
    switch ((ut__entry_kind)en->kind) {
    case UT__E_CLICK: put_click(out, l, same_ctx); return;
    case UT__E_BURST: put_burst(out, l, same_ctx); return;
    case UT__E_CHANGE: put_change(out, en); return;
    case UT__E_APP: put_app(out, en); return;
    case UT__E_INVALID: put_invalid(out, ut__entry_field(en, UT__F_MEMBERS)); return;
    case UT__E_ALERT:
        put_alert(out, ut__entry_field(en, UT__F_ROLE), en->detail, ut__entry_field(en, UT__F_TEXT));
        return;
    case UT__E_DIALOG_OPEN:
        ut_buf_append_cstr(out, "opened");
        put_role(out, ut__entry_field(en, UT__F_ROLE));
        put_name(out, ut__entry_field(en, UT__F_NAME));
        return;
    case UT__E_DIALOG_CLOSE: {
        ut_buf_append_cstr(out, "closed");
        put_role(out, ut__entry_field(en, UT__F_ROLE));
        put_name(out, ut__entry_field(en, UT__F_NAME));
        ut_str shown = ut__entry_field(en, UT__F_TEXT);
        if (shown.len) {
            ut_buf_append_cstr(out, ": ");
            put_text(out, shown, UT_TEXT_PRINT_MAX_CHARS);
        }
        return;
    }
    case UT__E_NAV:
        ut_buf_append_cstr(out, "navigate");
        ut_buf_append_cstr(out, UT__ENUM_NAME(how_labels, en->detail));
        ut_buf_append(out, " ", 1);
        put_text(out, ut__url_path(ut__entry_field(en, UT__F_TEXT)), UT_TEXT_PRINT_MAX_CHARS);
        put_name(out, ut__entry_field(en, UT__F_NAME));
        return;
    }
}

/* The PAGE line, without its newline, into `dst`. */
static void format_page_line(char *dst, size_t cap, const ut_stab_status *st, int32_t tz)
{
    char since[CLOCK_LEN + 1];
    format_clock(since, st->since_us, tz);
    if (!st->has_mutations) {
        snprintf(dst, cap, "PAGE: no DOM activity reported");
    } else if (st->state == UT_PAGE_STABLE) {
        /* A stable state the scorer reached at a cap says so: the page may
         * still be waiting (issue 21). */
        const char *word = st->gave_up ? "stable (gave up waiting)" : "stable";
        if (st->since_us)
            snprintf(dst, cap, "PAGE: %s since %s", word, since);
        else
            snprintf(dst, cap, "PAGE: %s", word);
    } else {
        int n = st->since_us ? snprintf(dst, cap, "PAGE: changing since %s (intensity %.1f", since,
                                        isfinite(st->intensity) ? st->intensity : 0.0)
                             : snprintf(dst, cap, "PAGE: changing (intensity %.1f",
                                        isfinite(st->intensity) ? st->intensity : 0.0);
        if (n > 0 && (size_t)n < cap && st->busy) {
            int k = snprintf(dst + n, cap - (size_t)n, ", %" PRIu32 " loading indicator%s", st->busy,
                             st->busy == 1 ? "" : "s");
            n = k > 0 ? n + k : n;
        }
        if (n > 0 && (size_t)n < cap && st->net) {
            int k = snprintf(dst + n, cap - (size_t)n, ", %" PRIu32 " request%s pending", st->net,
                             st->net == 1 ? "" : "s");
            n = k > 0 ? n + k : n;
        }
        if (n > 0 && (size_t)n < cap)
            snprintf(dst + n, cap - (size_t)n, ")");
    }
}

static const char FRAME_HEAD[] =
    "--- Recent User Activity ---\n"
    "Use this to understand the user's intent and which item/element they are asking about.\n"
    "<user_activity>\n";
static const char FRAME_TAIL[] = "</user_activity>\n";
static const char TRACE_HEADER[] = "RECENT USER ACTIONS (newest first):\n";

/* A time in whole minutes in the zone `tz_min`: two times print the same
 * HH:MM when this is equal. */
static int64_t minute_of(int64_t time_us, int32_t tz_min)
{
    return ut__floor_div(time_us, 60 * US_PER_S) + tz_min;
}

/* HH:MM:SS, or ":SS" when `prev_us` (0: none) is of the same minute: a
 * reader carries the hour and minute down from the time before it. */
static void put_clock_after(ut_buf *out, int64_t time_us, int64_t prev_us, int32_t tz)
{
    char clock[CLOCK_LEN + 1];
    format_clock(clock, time_us, tz);
    bool same = prev_us && minute_of(prev_us, tz) == minute_of(time_us, tz);
    ut_buf_append_cstr(out, same ? clock + 5 : clock);
}

/* One entry line: "- HH:MM:SS " (or "- :SS " under the line above's
 * minute) and the entry, with the times of its folded repeats. */
static void put_line(ut_buf *out, const ut__line *l, bool same_ctx, bool same_minute, int32_t tz)
{
    ut_buf_append_cstr(out, "- ");
    if (same_minute)
        put_clock_after(out, l->en->time_us, l->en->time_us, tz);
    else
        ut__trace_put_clock(out, l->en->time_us, tz);
    ut_buf_append(out, " ", 1);
    ut__trace_entry_text(out, l, same_ctx);
    int64_t prev = l->en->time_us;
    for (uint32_t k = 0; k < l->again && k < UT__AGAIN_SHOWN; k++) {
        ut_buf_append_cstr(out, k ? ", " : " (also ");
        put_clock_after(out, l->again_us[k], prev, tz);
        prev = l->again_us[k];
    }
    if (l->again > UT__AGAIN_SHOWN)
        put_num(out, " and ", l->again - UT__AGAIN_SHOWN, " more times");
    if (l->again)
        ut_buf_append(out, ")", 1);
    ut_buf_append(out, "\n", 1);
}

/* Renders each line at the end of `out` to weigh it, with its context and
 * clock in full and short (kept_cost in budget.c picks), then takes it
 * back out. */
static void weigh_lines(ut__line *lines, uint32_t n, int32_t tz, ut_buf *out)
{
    size_t start = out->len;
    for (uint32_t i = 0; i < n && !out->oom; i++) {
        ut__line *l = &lines[i];
        l->minute = minute_of(l->en->time_us, tz);
        ut__trace_entry_text(out, l, false);
        l->body_hash = ut__trace_hash(out->data + start, out->len - start);
        ut_buf_truncate(out, start);
        for (int ctx = 0; ctx < 2; ctx++)
            for (int minute = 0; minute < 2; minute++) {
                if (ctx && !l->ctx.len) {
                    l->cost[ctx][minute] = l->cost[0][minute];
                    continue;
                }
                put_line(out, l, ctx, minute, tz);
                l->cost[ctx][minute] = ut__tokens_estimate(out->data + start, out->len - start);
                ut_buf_truncate(out, start);
            }
    }
}

static const char NOTE_FMT[] = "(%" PRIu32 " lines left out)\n";

/* Under `opts->max_tokens`, which lines stay (budget.c); the number left out. */
static uint32_t fit_lines(ut__line *lines, uint32_t n, uint64_t fixed, const ut_trace_opts *opts,
                          int32_t tz, ut_buf *out)
{
    if (!opts->max_tokens || n == 0)
        return 0;
    uint32_t *order = ut_calloc(n, sizeof *order);
    if (!order) {
        out->oom = true;
        return 0;
    }
    weigh_lines(lines, n, tz, out);
    ut__lines_rank(lines, n);
    char note[80];
    snprintf(note, sizeof note, NOTE_FMT, n);
    uint32_t left_out = ut__lines_select(lines, n, fixed, opts->max_tokens,
                                         ut__tokens_estimate(note, strlen(note)), order);
    ut_free(order);
    return left_out;
}

void ut__trace_text(const ut__tab *t, const ut_trace_opts *opts, ut_buf *out)
{
    ut_stab_status page;
    ut__tab_page_status(t, &page);
    char page_line[160];
    format_page_line(page_line, sizeof page_line, &page, ut__trace_tab_tz(t));

    uint64_t fixed = ut__tokens_estimate(TRACE_HEADER, sizeof TRACE_HEADER - 1) +
                     ut__tokens_estimate(page_line, strlen(page_line) + 1);
    if (opts->framed)
        fixed += ut__tokens_estimate(FRAME_HEAD, sizeof FRAME_HEAD - 1) +
                 ut__tokens_estimate(FRAME_TAIL, sizeof FRAME_TAIL - 1);
    uint32_t n = ut__trace_shown_entries(t, opts);
    ut__line *lines = n ? ut_calloc(n, sizeof *lines) : NULL;
    if (n && !lines) {
        out->oom = true;
        return;
    }
    n = ut__lines_build(&t->ring, n, true, lines);
    for (uint32_t i = 0; i < n; i++)
        lines[i].keep = true;
    uint32_t left_out = fit_lines(lines, n, fixed, opts, ut__trace_tab_tz(t), out);

    if (opts->framed)
        ut_buf_append_cstr(out, FRAME_HEAD);
    ut_buf_append_cstr(out, TRACE_HEADER);
    int32_t tz = ut__trace_tab_tz(t);
    for (uint32_t i = 0; i < n; i++)
        lines[i].minute = minute_of(lines[i].en->time_us, tz);
    for (uint32_t i = 0; i < n; i++)
        if (lines[i].keep)
            put_line(out, &lines[i], ut__line_same_ctx(lines, i), ut__line_same_minute(lines, i), tz);
    if (left_out)
        ut_buf_printf(out, NOTE_FMT, left_out);
    ut_free(lines);
    ut_buf_append_cstr(out, page_line);
    ut_buf_append(out, "\n", 1);
    if (opts->framed)
        ut_buf_append_cstr(out, FRAME_TAIL);
}

/* The serializers: the trace of protocol §4 (text and JSON), GET /v1/tabs
 * and the JSON of one applied event.
 *
 * Text that came from a page is printed through `clip`, the one place it
 * enters a text trace: it is escaped there (escape.h: no line breaks, no
 * quote, bracket, arrow or frame of its own), so that no name, cell or
 * snapshot can start a line or end its quotes and pass for structure, and
 * long text is cut on a character boundary with "…". */
#include "budget.h"
#include "engine_internal.h"
#include "escape.h"
#include "isotime.h"
#include "num.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define US_PER_MS INT64_C(1000)
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

static const char *enum_name(const char *const *names, size_t n, unsigned v)
{
    return v < n && names[v] ? names[v] : "";
}
#define ENUM_NAME(table, v) enum_name((table), sizeof(table) / sizeof((table)[0]), (unsigned)(v))

/* ---- Small pieces ---- */

static size_t utf8_chars(const char *p, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)p[i] & 0xC0) != 0x80;
    return n;
}

uint32_t ut__tokens_estimate(const char *p, size_t len)
{
    uint64_t ascii = 0, other = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x80)
            ascii++;
        else if ((c & 0xC0) != 0x80)
            other++;
    }
    uint64_t tokens = (ascii + 2) / 3 + other;
    return tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)tokens;
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

/* " [ROLE]", or nothing for an element without a role. */
static void put_role(ut_buf *out, ut_str role)
{
    if (!role.len)
        return;
    ut_buf_append_cstr(out, " [");
    clip c = {out, UT_ROLE_MAX_BYTES, false, true};
    clip_put(&c, role);
    ut_buf_append_cstr(out, "]");
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
static ut_status put_clock(ut_buf *out, int64_t time_us, int32_t tz_min)
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

/* " [error]": a level word in brackets. */
static void put_level(ut_buf *out, uint8_t level)
{
    ut_buf_append_cstr(out, " [");
    ut_buf_append_cstr(out, ENUM_NAME(ut_level_names, level));
    ut_buf_append(out, "]", 1);
}

/* The page state word: "stable", "changing", or "unknown" for a tab that
 * never sent a mutation record. */
static const char *page_state_name(const ut_stab_status *st)
{
    if (!st->has_mutations)
        return "unknown";
    return st->state == UT_PAGE_CHANGING ? "changing" : "stable";
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

/* The click's context; a row the line above already named (budget.c,
 * ut__line_same_row) as "(in the same row)". */
static void put_ctx(ut_buf *out, const ut__entry *en, bool same_row)
{
    ut_str list = ut__entry_field(en, UT__F_CTX), item;
    if ((en->flags & UT__EF_SENS) || en->ctx_kind == UT_CTX_NONE || list.len == 0)
        return;
    if (same_row && en->ctx_kind == UT_CTX_ROW) {
        ut_buf_append_cstr(out, " (in the same row)");
        return;
    }
    ut_buf_append_cstr(out, " (in ");
    ut_buf_append_cstr(out, ENUM_NAME(ut_ctx_kind_names, en->ctx_kind));
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

/* `alert [error] "Price must be positive"`: the role word, the level when
 * the sender gave one, and the text. */
static void put_alert(ut_buf *out, ut_str role, uint8_t level, ut_str text)
{
    ut_buf_append_cstr(out, alert_word(role));
    if (level != UT_LEVEL_NONE)
        put_level(out, level);
    ut_buf_append(out, " ", 1);
    put_quoted(out, text);
}

/* `nav`: the navigation entry the click caused, printed here instead of
 * on a line of its own: `→ navigated (in-app) to /x "Title"`. */
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
            ut_buf_append_cstr(out, ENUM_NAME(how_labels, nav->detail));
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
        ut_buf_append_cstr(out, "no visible response");
        return;
    }
}

/* " (by script)" for a click or change that a script dispatched: an
 * assistant must tell the user's actions from its own executor's. */
static void put_trusted(ut_buf *out, const ut__entry *en)
{
    if (en->flags & UT__EF_UNTRUSTED)
        ut_buf_append_cstr(out, " (by script)");
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

static void put_click(ut_buf *out, const ut__line *l, bool same_row)
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
        ut_buf_append_cstr(out, ENUM_NAME(sort_labels, en->sort));
        put_ctx(out, en, same_row);
    }
    if (rage)
        ut_buf_append_cstr(out, " (rage click)");
    put_outcome(out, en, l->nav);
}

/* The members of a burst whose state bit is on, among its first `n`. */
static uint32_t burst_on_count(const ut__entry *en, uint32_t from, uint32_t n)
{
    uint32_t on = 0;
    for (uint32_t i = from; i < n && i < 32; i++)
        on += (en->member_on >> i) & 1u;
    return on;
}

/* A burst line. When its clicks carried a state, the line says it: once,
 * "(checked)", when every member has the same; else after each name shown,
 * and as counts for the members not shown. */
static void put_burst(ut_buf *out, const ut__line *l, bool same_row)
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
    uint32_t on = bit ? burst_on_count(en, 0, stored) : 0;
    bool uniform = bit && stored == en->count && (on == 0 || on == stored);
    if (uniform) {
        ut_buf_append_cstr(out, " (");
        put_state_word(out, bit, on != 0);
        ut_buf_append_cstr(out, ")");
    }
    put_ctx(out, en, same_row);
    ut_buf_append_cstr(out, ":");
    uint32_t shown = 0;
    while (shown < UT_BURST_NAMES_SHOWN && ut__list_next(&list, &el) && ut__list_next(&list, &name)) {
        ut_buf_append_cstr(out, shown ? ", " : " ");
        put_quoted(out, name);
        if (bit && !uniform) {
            ut_buf_append_cstr(out, " (");
            put_state_word(out, bit, (en->member_on >> shown) & 1u);
            ut_buf_append_cstr(out, ")");
        }
        shown++;
    }
    if (en->count > shown) {
        ut_buf_append(out, " ", 1);
        ut_buf_append_cstr(out, ELLIPSIS);
        put_num(out, " (+", en->count - shown, " more");
        if (bit && !uniform && stored > shown) {
            uint32_t rest_on = burst_on_count(en, shown, stored);
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

/* `app event [error] "order.refund_failed": "Refund exceeds captured
 * amount" (order: 4411, amount: 120.00)`: the level, the app's event name,
 * its message and its data, all cut like other page text. */
static void put_app(ut_buf *out, const ut__entry *en)
{
    ut_buf_append_cstr(out, "app event");
    if (en->detail != UT_LEVEL_NONE)
        put_level(out, en->detail);
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

static void put_entry_text(ut_buf *out, const ut__line *l, bool same_row)
{
    const ut__entry *en = l->en;
    switch ((ut__entry_kind)en->kind) {
    case UT__E_CLICK: put_click(out, l, same_row); return;
    case UT__E_BURST: put_burst(out, l, same_row); return;
    case UT__E_CHANGE: put_change(out, en); return;
    case UT__E_APP: put_app(out, en); return;
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
            ut_buf_append_cstr(out, " \xE2\x80\x94 it showed: ");
            put_text(out, shown, UT_TEXT_PRINT_MAX_CHARS);
        }
        return;
    }
    case UT__E_NAV:
        ut_buf_append_cstr(out, "navigate");
        ut_buf_append_cstr(out, ENUM_NAME(how_labels, en->detail));
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
        if (st->since_us)
            snprintf(dst, cap, "PAGE: stable since %s", since);
        else
            snprintf(dst, cap, "PAGE: stable");
    } else {
        int n = st->since_us ? snprintf(dst, cap, "PAGE: changing since %s (intensity %.1f", since,
                                        isfinite(st->intensity) ? st->intensity : 0.0)
                             : snprintf(dst, cap, "PAGE: changing (intensity %.1f",
                                        isfinite(st->intensity) ? st->intensity : 0.0);
        if (n > 0 && (size_t)n < cap) {
            if (st->busy)
                snprintf(dst + n, cap - (size_t)n, ", %" PRIu32 " loading indicator%s)", st->busy,
                         st->busy == 1 ? "" : "s");
            else
                snprintf(dst + n, cap - (size_t)n, ")");
        }
    }
}

static const char FRAME_HEAD[] =
    "--- Recent User Activity ---\n"
    "Use this to understand the user's intent and which item/element they are asking about.\n"
    "<user_activity>\n";
static const char FRAME_TAIL[] = "</user_activity>\n";
static const char TRACE_HEADER[] = "RECENT USER ACTIONS (newest first):\n";

/* The number of entries a trace shows under `opts->limit`. */
static uint32_t shown_entries(const ut__tab *t, const ut_trace_opts *opts)
{
    uint32_t n = t->ring.count;
    if (opts->limit && opts->limit < n)
        n = opts->limit;
    return n;
}

static int32_t tab_tz(const ut__tab *t)
{
    return t->has_tz ? t->tz_min : 0;
}

/* One entry line: "- HH:MM:SS " and the entry. */
static void put_line(ut_buf *out, const ut__line *l, bool same_row, int32_t tz)
{
    ut_buf_append_cstr(out, "- ");
    put_clock(out, l->en->time_us, tz);
    ut_buf_append(out, " ", 1);
    put_entry_text(out, l, same_row);
    for (uint32_t k = 0; k < l->again && k < UT__AGAIN_SHOWN; k++) {
        ut_buf_append_cstr(out, k ? ", " : " (also at ");
        put_clock(out, l->again_us[k], tz);
    }
    if (l->again > UT__AGAIN_SHOWN)
        put_num(out, " and ", l->again - UT__AGAIN_SHOWN, " more times");
    if (l->again)
        ut_buf_append(out, ")", 1);
    ut_buf_append(out, "\n", 1);
}

/* FNV-1a: finds a line that repeats a newer one (budget.c). */
static uint64_t hash_bytes(const char *p, size_t len)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
    return h;
}

/* Renders each line at the end of `out` to weigh it, with its row's cells
 * and without, then takes it back out. */
static void weigh_lines(ut__line *lines, uint32_t n, int32_t tz, ut_buf *out)
{
    size_t start = out->len;
    for (uint32_t i = 0; i < n && !out->oom; i++) {
        put_line(out, &lines[i], false, tz);
        lines[i].cost_full = ut__tokens_estimate(out->data + start, out->len - start);
        size_t body = CLOCK_LEN + 3; /* "- HH:MM:SS " */
        lines[i].body_hash = out->len - start > body ? hash_bytes(out->data + start + body,
                                                                  out->len - start - body)
                                                     : 0;
        ut_buf_truncate(out, start);
        lines[i].cost_short = lines[i].cost_full;
        if (lines[i].row.len) {
            put_line(out, &lines[i], true, tz);
            lines[i].cost_short = ut__tokens_estimate(out->data + start, out->len - start);
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

static void trace_text(const ut__tab *t, const ut_trace_opts *opts, ut_buf *out)
{
    ut_stab_status page;
    ut__tab_page_status(t, &page);
    char page_line[160];
    format_page_line(page_line, sizeof page_line, &page, tab_tz(t));

    uint64_t fixed = ut__tokens_estimate(TRACE_HEADER, sizeof TRACE_HEADER - 1) +
                     ut__tokens_estimate(page_line, strlen(page_line) + 1);
    if (opts->framed)
        fixed += ut__tokens_estimate(FRAME_HEAD, sizeof FRAME_HEAD - 1) +
                 ut__tokens_estimate(FRAME_TAIL, sizeof FRAME_TAIL - 1);
    uint32_t n = shown_entries(t, opts);
    ut__line *lines = n ? ut_calloc(n, sizeof *lines) : NULL;
    if (n && !lines) {
        out->oom = true;
        return;
    }
    n = ut__lines_build(&t->ring, n, true, lines);
    for (uint32_t i = 0; i < n; i++)
        lines[i].keep = true;
    uint32_t left_out = fit_lines(lines, n, fixed, opts, tab_tz(t), out);

    if (opts->framed)
        ut_buf_append_cstr(out, FRAME_HEAD);
    ut_buf_append_cstr(out, TRACE_HEADER);
    ut_str row = {0};
    for (uint32_t i = 0; i < n; i++) {
        if (!lines[i].keep)
            continue;
        bool same = lines[i].row.len && row.len && ut_str_eq(row, lines[i].row);
        put_line(out, &lines[i], same, tab_tz(t));
        if (lines[i].row.len)
            row = lines[i].row;
    }
    if (left_out)
        ut_buf_printf(out, NOTE_FMT, left_out);
    ut_free(lines);
    ut_buf_append_cstr(out, page_line);
    ut_buf_append(out, "\n", 1);
    if (opts->framed)
        ut_buf_append_cstr(out, FRAME_TAIL);
}

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
    json_open_kind(out, ENUM_NAME(ut_ctx_kind_names, en->ctx_kind));
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

/* "trusted": false for a click or change that a script dispatched; the
 * field is left out otherwise. */
static void json_trusted(ut_buf *out, const ut__entry *en)
{
    if (en->flags & UT__EF_UNTRUSTED)
        ut_buf_append_cstr(out, ",\"trusted\":false");
}

/* How a JSON trace is written: `compact` (protocol §4.4) leaves out what
 * an assistant cannot use (element keys, default values, epoch times, the
 * full URL next to its path) and prints times as the text trace does. */
typedef struct json_style {
    bool compact;
    int32_t tz;
} json_style;

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
            json_str_field(out, "level", ut_str_cstr(ENUM_NAME(ut_level_names, en->outcome_detail)));
        json_str_field(out, "text", text);
        break;
    case UT__OUT_CHANGED: ut_buf_append_cstr(out, "{\"kind\":\"page_changed\""); break;
    case UT__OUT_DEAD: ut_buf_append_cstr(out, "{\"kind\":\"no_response\""); break;
    }
    ut_buf_append(out, "}", 1);
}

static void json_times(ut_buf *out, const json_style *js, const char *key, const char *ms_key,
                       int64_t us)
{
    json_key(out, key);
    if (js->compact) {
        ut_buf_append(out, "\"", 1);
        put_clock(out, us, js->tz);
        ut_buf_append(out, "\"", 1);
        return;
    }
    ut__buf_append_iso_time(out, us);
    json_key(out, ms_key);
    ut_buf_append_i64(out, ut__floor_div(us, US_PER_MS));
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
        json_str_field(out, "sort", ut_str_cstr(ENUM_NAME(ut_sort_names, en->sort)));
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
    uint32_t member = 0;
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
            json_state(out, en->state_set, (en->member_on >> member) & 1u ? en->state_set : 0);
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
        json_str_field(out, "level", ut_str_cstr(ENUM_NAME(ut_level_names, en->detail)));
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
        json_str_field(out, "level", ut_str_cstr(ENUM_NAME(ut_level_names, en->detail)));
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
        json_str_field(out, "how", ut_str_cstr(ENUM_NAME(ut_nav_how_names, en->detail)));
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
        [UT__E_DIALOG_CLOSE] = "dialog", [UT__E_APP] = "app",
    };
    json_open_kind(out, ENUM_NAME(kinds, en->kind));
    json_times(out, js, "time", "ms", en->time_us);
    switch ((ut__entry_kind)en->kind) {
    case UT__E_CLICK: json_entry_click(out, en, js); break;
    case UT__E_BURST: json_entry_burst(out, en, js); break;
    case UT__E_CHANGE: json_entry_change(out, en, js); break;
    case UT__E_APP: json_entry_app(out, en); break;
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
                  st->state == UT_PAGE_STABLE ? "true" : "false", page_state_name(st), st->marks);
    if (st->since_us)
        ut_buf_printf(out, "%" PRId64, ut__floor_div(st->since_us, US_PER_MS));
    else
        ut_buf_append_cstr(out, "null");
    ut_buf_printf(out, ",\"intensity\":%.3f,\"busy\":%" PRIu32 "}",
                  isfinite(st->intensity) ? st->intensity : 0.0, st->busy);
    return out->oom ? UT_ENOMEM : UT_OK;
}

/* Weighs each JSON entry; the repeat hash comes from its text line. */
static void weigh_json(ut__line *lines, uint32_t n, const json_style *js, ut_buf *out)
{
    size_t start = out->len;
    for (uint32_t i = 0; i < n && !out->oom; i++) {
        put_entry_text(out, &lines[i], false);
        lines[i].body_hash = hash_bytes(out->data + start, out->len - start);
        ut_buf_truncate(out, start);
        ut_buf_append(out, ",", 1);
        json_entry(out, lines[i].en, js);
        lines[i].cost_full = lines[i].cost_short =
            ut__tokens_estimate(out->data + start, out->len - start);
        ut_buf_truncate(out, start);
    }
}

static const char OMITTED_FMT[] = ",\"omitted\":%" PRIu32;

/* The JSON trace: every entry (no folding: a navigation is its own
 * event), chosen under max_tokens like the text trace's lines. */
static void trace_json(const ut__tab *t, const ut_trace_opts *opts, ut_buf *out)
{
    json_style js = {opts->compact, tab_tz(t)};
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

    uint32_t n = shown_entries(t, opts);
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

ut_status ut_engine_trace(const ut_engine *e, ut_str tab, const ut_trace_opts *opts, ut_buf *out)
{
    const ut__tab *t = ut__tabs_find(&e->tabs, tab);
    if (!t)
        return UT_ENOENT;
    ut_trace_opts defaults = UT_TRACE_OPTS_DEFAULT;
    if (!opts)
        opts = &defaults;
    if (opts->limit > UT_TRACE_LIMIT_MAX || opts->max_tokens > UT_TRACE_MAX_TOKENS_MAX)
        return UT_ELIMIT;
    ut_buf_mark mark = ut_buf_begin(out);
    if (opts->format == UT_TRACE_JSON)
        trace_json(t, opts, out);
    else
        trace_text(t, opts, out);
    return ut_buf_end(out, mark, UT_OK);
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
        json_str_field(out, "state", ut_str_cstr(page_state_name(&page)));
        json_key(out, "last");
        ut_buf_append_i64(out, ut__floor_div(t->last_us, US_PER_MS));
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
    json_open_kind(out, ENUM_NAME(ut_ctx_kind_names, ctx->kind));
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
    json_str_field(out, "how", ut_str_cstr(ENUM_NAME(ut_nav_how_names, ev->how)));
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
    if (ev->kind == UT_KIND_CLICK) {
        if (!ev->sens)
            json_event_ctx(out, &ev->ctx);
        json_state(out, ev->state_set, ev->state_on);
        if (ev->sort != UT_SORT_UNSET)
            json_str_field(out, "sort", ut_str_cstr(ENUM_NAME(ut_sort_names, ev->sort)));
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
}

static void event_json_app(ut_buf *out, const ut_event *ev)
{
    json_str_field(out, "name", ev->name);
    if (ev->text.len)
        json_str_field(out, "text", ev->text);
    if (ev->level != UT_LEVEL_NONE)
        json_str_field(out, "level", ut_str_cstr(ENUM_NAME(ut_level_names, ev->level)));
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
            json_str_field(out, "level", ut_str_cstr(ENUM_NAME(ut_level_names, ev->level)));
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
    case UT_KIND_CLOSE:
    case UT_KIND__COUNT: break;
    }
    ut_buf_append(out, "}", 1);
    return ut_buf_end(out, mark, UT_OK);
}

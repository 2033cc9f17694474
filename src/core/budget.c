/* Trace budget: fold a click and its navigation into one line, rank lines
 * by how much an assistant needs them, and keep the best that fit. Under a
 * tight budget the popup's contents, the error and the row the user acted
 * on matter more than which pages they passed through on the way. */
#include "budget.h"
#include "text.h"

#include <string.h>


static bool is_click(const ut__entry *en)
{
    return en->kind == UT__E_CLICK || en->kind == UT__E_BURST;
}

/* Index of the navigation, newer than entry `i`, that is the outcome of
 * click `i`: the nearest newer navigation, when its path is the outcome's
 * (the engine records both from the one nav event). -1 when none. */
static int64_t caused_nav(const ut__ring *ring, uint32_t i, const bool *folded)
{
    const ut__entry *click = *ut__ring_newest(ring, i);
    if (!is_click(click) || click->outcome != UT__OUT_NAV)
        return -1;
    ut_str path = ut__entry_field(click, UT__F_OUT_TEXT);
    for (uint32_t j = i; j-- > 0;) {
        const ut__entry *en = *ut__ring_newest(ring, j);
        if (en->kind != UT__E_NAV)
            continue;
        if (folded[j] || en->time_us < click->time_us ||
            !ut_str_eq(ut__url_path(ut__entry_field(en, UT__F_TEXT)), path))
            return -1;
        return j;
    }
    return -1;
}

/* Two entries that print the same but for their time: a retried click
 * with the same outcome, the same alert again. */
static bool same_but_time(const ut__entry *a, const ut__entry *b)
{
    if (a->kind != b->kind || (a->kind != UT__E_CLICK && a->kind != UT__E_ALERT))
        return false;
    if (a->count != b->count || a->outcome != b->outcome || a->ctx_kind != b->ctx_kind ||
        a->flags != b->flags || a->state_set != b->state_set || a->state_on != b->state_on ||
        a->detail != b->detail || a->outcome_detail != b->outcome_detail || a->sort != b->sort)
        return false;
    for (int f = 0; f < UT__F__COUNT; f++)
        if (!ut_str_eq(ut__entry_field(a, (ut__field)f), ut__entry_field(b, (ut__field)f)))
            return false;
    return true;
}

uint32_t ut__lines_build(const ut__ring *ring, uint32_t n, bool fold_repeats, ut__line *lines)
{
    /* folded[j]: entry j prints on an older click's line. At most the ring's
     * size (UT_RING_MAX); a bit array on the stack would do, bools read
     * better. */
    bool folded[UT_RING_MAX] = {false};
    int32_t nav_of[UT_RING_MAX];
    for (uint32_t i = n; i-- > 0;) { /* oldest first: a click claims its nav */
        int64_t j = caused_nav(ring, i, folded);
        nav_of[i] = (int32_t)j;
        if (j >= 0)
            folded[j] = true;
    }
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (folded[i])
            continue;
        const ut__entry *en = *ut__ring_newest(ring, i);
        ut__line *above = count ? &lines[count - 1] : NULL;
        if (fold_repeats && above && !above->nav && nav_of[i] < 0 && same_but_time(above->en, en)) {
            if (above->again < UT__AGAIN_SHOWN)
                above->again_us[above->again] = en->time_us;
            above->again++;
            continue;
        }
        ut__line *l = &lines[count++];
        *l = (ut__line){.en = en};
        if (nav_of[i] >= 0)
            l->nav = *ut__ring_newest(ring, (uint32_t)nav_of[i]);
        if (is_click(en) && en->ctx_kind != UT_CTX_NONE && !(en->flags & UT__EF_SENS)) {
            l->ctx = ut__entry_field(en, UT__F_CTX);
            l->ctx_kind = en->ctx_kind;
        }
    }
    return count;
}

bool ut__line_same_ctx(const ut__line *lines, uint32_t i)
{
    if (!lines[i].ctx.len)
        return false;
    for (uint32_t j = i; j-- > 0;) {
        if (!lines[j].keep || !lines[j].ctx.len || lines[j].ctx_kind != lines[i].ctx_kind)
            continue;
        return ut_str_eq(lines[j].ctx, lines[i].ctx);
    }
    return false;
}

bool ut__line_same_minute(const ut__line *lines, uint32_t i)
{
    for (uint32_t j = i; j-- > 0;)
        if (lines[j].keep)
            return lines[j].minute == lines[i].minute;
    return false;
}

static uint8_t click_rank(const ut__line *l)
{
    const ut__entry *en = l->en;
    switch ((ut__outcome)en->outcome) {
    case UT__OUT_ALERT:
    case UT__OUT_INVALID:
    case UT__OUT_DEAD: /* the page's answer was nothing: that is what went wrong */
        return UT__RANK_MESSAGE;
    case UT__OUT_DIALOG: return UT__RANK_FACT;
    default: break;
    }
    if (en->flags & UT__EF_RAGE)
        return UT__RANK_MESSAGE;
    if (l->ctx_kind == UT_CTX_ROW)
        return UT__RANK_FACT;
    if (en->outcome == UT__OUT_NAV || en->state_set || en->sort || en->kind == UT__E_BURST)
        return UT__RANK_ACTION;
    return UT__RANK_PLAIN;
}

static bool is_dialog_role(ut_str role)
{
    return ut_str_eq_cstr(role, "dialog") || ut_str_eq_cstr(role, "alertdialog");
}

static uint8_t base_rank(const ut__line *l, bool newest_nav)
{
    const ut__entry *en = l->en;
    switch ((ut__entry_kind)en->kind) {
    case UT__E_CLICK:
    case UT__E_BURST: return click_rank(l);
    case UT__E_NAV: return newest_nav ? UT__RANK_ACTION : UT__RANK_VIEW;
    case UT__E_DIALOG_CLOSE: /* a dialog's contents are what the page said; a menu's are choices */
        if (!ut__entry_field(en, UT__F_TEXT).len)
            return UT__RANK_PLAIN;
        return is_dialog_role(ut__entry_field(en, UT__F_ROLE)) ? UT__RANK_MESSAGE : UT__RANK_ACTION;
    case UT__E_CHANGE: /* a value chosen says what the user did; a length typed, little */
        return en->flags & (UT__EF_HAS_VALUE | UT__EF_HAS_CHECKED) ? UT__RANK_ACTION : UT__RANK_PLAIN;
    case UT__E_DIALOG_OPEN: return UT__RANK_ACTION;
    case UT__E_ALERT:
    case UT__E_APP:
    case UT__E_INVALID: return UT__RANK_MESSAGE;
    }
    return UT__RANK_PLAIN;
}

/* The message a line carries: an alert's or app event's text, or the
 * alert a click raised. Empty when it carries none. */
static ut_str message_of(const ut__entry *en)
{
    if (en->kind == UT__E_ALERT || en->kind == UT__E_APP)
        return ut__entry_field(en, UT__F_TEXT);
    if ((en->kind == UT__E_CLICK || en->kind == UT__E_BURST) && en->outcome == UT__OUT_ALERT)
        return ut__entry_field(en, UT__F_OUT_TEXT);
    return (ut_str){0};
}

/* A line that says again what a newer one says (a popup opened twice, the
 * same error after each retry, the app's event for the error the page
 * showed) is worth less than the newer one. */
static bool repeats_newer(const ut__line *lines, uint32_t i)
{
    ut_str message = message_of(lines[i].en);
    for (uint32_t j = 0; j < i; j++) {
        if (lines[j].body_hash == lines[i].body_hash)
            return true;
        if (message.len && ut_str_eq(message_of(lines[j].en), message))
            return true;
    }
    return false;
}

/* Pieces of a dialog's contents looked up before it counts as saying
 * something: a form's few labels are what this is for. */
#define LABELS_CHECKED 8

/* True when a line's entry names `label`: a click, change or dialog. */
static bool names(const ut__line *lines, uint32_t n, ut_str label)
{
    for (uint32_t j = 0; j < n; j++)
        if (lines[j].en->kind != UT__E_NAV && ut_str_eq(ut__entry_field(lines[j].en, UT__F_NAME), label))
            return true;
    return false;
}

/* A dialog's contents that are only the labels of controls other lines
 * name ("Amount · Reason · Submit refund", with `typed … "Amount"`, `set …
 * "Reason"`, `click … "Submit refund"`) say nothing new: they are what was
 * acted on, not what the page said. */
static bool only_labels(const ut__line *lines, uint32_t n, uint32_t i)
{
    static const ut_str sep = UT_STR_LIT(" \xC2\xB7 "); /* " · ", as the sender joins them */
    ut_str rest = ut__entry_field(lines[i].en, UT__F_TEXT);
    for (unsigned k = 0; rest.len && k < LABELS_CHECKED; k++) {
        size_t at = 0;
        while (at + sep.len <= rest.len && memcmp(rest.ptr + at, sep.ptr, sep.len) != 0)
            at++;
        if (at + sep.len > rest.len)
            at = rest.len;
        if (!names(lines, n, (ut_str){rest.ptr, at}))
            return false;
        rest = at < rest.len ? (ut_str){rest.ptr + at + sep.len, rest.len - at - sep.len} : (ut_str){0};
    }
    return rest.len == 0;
}

void ut__lines_rank(ut__line *lines, uint32_t n)
{
    bool seen_nav = false;
    for (uint32_t i = 0; i < n; i++) {
        const ut__line *l = &lines[i];
        bool is_nav = l->en->kind == UT__E_NAV || l->nav;
        uint8_t rank = base_rank(l, is_nav && !seen_nav);
        seen_nav = seen_nav || is_nav;
        if (rank == UT__RANK_MESSAGE && l->en->kind == UT__E_DIALOG_CLOSE && only_labels(lines, n, i))
            rank = UT__RANK_ACTION;
        if (i == 0)
            rank = UT__RANK_NEWEST;
        else if (repeats_newer(lines, i))
            rank = (l->en->kind == UT__E_NAV || l->en->kind == UT__E_DIALOG_OPEN ||
                    l->en->kind == UT__E_DIALOG_CLOSE)
                       ? UT__RANK_VIEW
                       : UT__RANK_PLAIN;
        lines[i].rank = rank;
    }
}

/* One pass: "(same KIND)" depends on the nearest kept context of its kind
 * above, ":SS" on the kept line above. */
static uint64_t kept_cost(const ut__line *lines, uint32_t n, uint32_t note_cost)
{
    uint64_t sum = 0;
    bool all = true;
    ut_str ctx[UT_CTX__COUNT] = {{0}};
    const ut__line *above = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const ut__line *l = &lines[i];
        if (!l->keep) {
            all = false;
            continue;
        }
        unsigned kind = l->ctx_kind < UT_CTX__COUNT ? l->ctx_kind : UT_CTX_NONE;
        bool same = l->ctx.len && ctx[kind].len && ut_str_eq(ctx[kind], l->ctx);
        bool minute = above && above->minute == l->minute;
        sum += l->cost[same][minute];
        if (l->ctx.len)
            ctx[kind] = l->ctx;
        above = l;
    }
    return all ? sum : sum + note_cost;
}

/* Line i before line j: higher rank first, then newer first. */
static bool more_useful(const ut__line *lines, uint32_t i, uint32_t j)
{
    if (lines[i].rank != lines[j].rank)
        return lines[i].rank > lines[j].rank;
    return i < j;
}

uint32_t ut__lines_select(ut__line *lines, uint32_t n, uint64_t fixed, uint64_t budget,
                          uint32_t note_cost, uint32_t *order)
{
    for (uint32_t i = 0; i < n; i++) {
        lines[i].keep = false;
        order[i] = i;
    }
    /* Insertion sort: stable, and n is at most a ring (1000). */
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t k = i; k > 0 && more_useful(lines, order[k], order[k - 1]); k--) {
            uint32_t tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
    /* A line that does not fit is left out and the next, less useful or
     * older, is tried: shorter lines fill what room is left. */
    uint32_t left_out = n;
    for (uint32_t k = 0; k < n; k++) {
        ut__line *l = &lines[order[k]];
        l->keep = true;
        if (fixed + kept_cost(lines, n, note_cost) <= budget) {
            left_out--;
            continue;
        }
        l->keep = false;
        /* Without the newest line older ones would pass for the latest. */
        if (l->rank == UT__RANK_NEWEST)
            break;
    }
    return left_out;
}

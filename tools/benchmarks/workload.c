/* The synthetic workload: a catalog admin session, the Blue Widget story of
 * the README made to repeat, with the mutation flushes a page of about 1 800
 * elements sends between the user's actions. Events are 120 to 190 bytes as
 * Forward entries. */
#include "workload.h"

#include <stdio.h>
#include <string.h>

/* A day boundary is far from the base time, so printed times are plain. */
#define BASE_TIME_US INT64_C(1715700000000000)
#define TAB_TIME_SPREAD_US INT64_C(7919)
#define PAGE_ELEMENTS 1800u
#define PAGE_DEPTH 14u

typedef enum step_kind {
    STEP_NAV,
    STEP_RENDER,         /* the page's first render: a big childList flush */
    STEP_CLICK_ROW_LINK, /* opens the item's dialog */
    STEP_DIALOG_OPEN,
    STEP_MUTATION_SMALL,
    STEP_DIALOG_CLOSE,
    STEP_CLICK_TOOLBAR,
    STEP_MUTATION_BUSY, /* a filter reloads the table behind a spinner */
    STEP_CHANGE_CHOICE,
    STEP_MUTATION_ATTRS,
    STEP_CLICK_ROW_BUTTON,
    STEP_ALERT,
    STEP_CLICK_CHECKBOX,
    STEP_MUTATION_TEXT, /* a counter's text changes in a leaf */
    STEP_CHANGE_TEXT,
    STEP_CLICK_TAB,
    STEP_CLICK_PLAIN,
} step_kind;

typedef struct script_step {
    step_kind kind;
    uint32_t delay_ms; /* after the previous step */
} script_step;

static const script_step script[UT__BENCH_SCRIPT_STEPS] = {
    {STEP_NAV, 0},
    {STEP_RENDER, 300},
    {STEP_CLICK_ROW_LINK, 2500},
    {STEP_DIALOG_OPEN, 150},
    {STEP_MUTATION_SMALL, 50},
    {STEP_DIALOG_CLOSE, 3000},
    {STEP_CLICK_TOOLBAR, 2500},
    {STEP_MUTATION_BUSY, 200},
    {STEP_CHANGE_CHOICE, 2500},
    {STEP_MUTATION_ATTRS, 100},
    {STEP_CLICK_ROW_BUTTON, 2500},
    {STEP_MUTATION_SMALL, 150},
    {STEP_ALERT, 400},
    {STEP_CLICK_CHECKBOX, 2500},
    {STEP_MUTATION_TEXT, 100},
    {STEP_CHANGE_TEXT, 2500},
    {STEP_CLICK_TAB, 2500},
    {STEP_MUTATION_SMALL, 120},
    {STEP_CLICK_PLAIN, 2500},
    {STEP_MUTATION_SMALL, 3000},
};

/* Milliseconds from the start of a pass to each step, and one pass's
 * length, computed once from the script. */
static uint32_t step_offset_ms(uint32_t pos, uint32_t *pass_ms)
{
    uint32_t at = 0, offset = 0;
    for (uint32_t i = 0; i < UT__BENCH_SCRIPT_STEPS; i++) {
        at += script[i].delay_ms;
        if (i == pos)
            offset = at;
    }
    *pass_ms = at + 2500; /* the next pass's navigation comes 2.5 s after the last flush */
    return offset;
}

void ut__bench_tab_id(uint32_t tab, char *out, size_t outlen)
{
    snprintf(out, outlen, "tab-%06u", tab);
}

bool ut__bench_step_is_mutation(uint64_t step)
{
    switch (script[step % UT__BENCH_SCRIPT_STEPS].kind) {
    case STEP_RENDER:
    case STEP_MUTATION_SMALL:
    case STEP_MUTATION_BUSY:
    case STEP_MUTATION_ATTRS:
    case STEP_MUTATION_TEXT:
        return true;
    default:
        return false;
    }
}

/* The NUL-terminated text written into one of a ut__bench_event's arrays. */
static ut_str text_at(const char *storage)
{
    return ut_str_cstr(storage);
}

static void set_row(ut__bench_event *be, uint32_t item)
{
    ut_event *ev = &be->ev;
    snprintf(be->cells[0], sizeof be->cells[0], "Blue Widget %u", item);
    snprintf(be->cells[1], sizeof be->cells[1], "SKU-%04u", item % 10000);
    snprintf(be->cells[2], sizeof be->cells[2], "$%u.99", 10 + item % 90);
    snprintf(be->cells[3], sizeof be->cells[3], "%s", item % 3 ? "Published" : "Draft");
    ev->ctx.kind = UT_CTX_ROW;
    ev->ctx.ncells = 4;
    for (uint32_t i = 0; i < 4; i++)
        ev->ctx.cells[i] = text_at(be->cells[i]);
}

static void set_control(ut__bench_event *be, const char *role, const char *name, const char *el)
{
    snprintf(be->role, sizeof be->role, "%s", role);
    snprintf(be->name, sizeof be->name, "%s", name);
    snprintf(be->el, sizeof be->el, "%s", el);
    be->ev.role = text_at(be->role);
    be->ev.name = text_at(be->name);
    be->ev.el = text_at(be->el);
}

/* A flush of `nrecs` records of `kind` under a target at `depth`. */
static void set_mutation(ut__bench_event *be, uint32_t nrecs, ut_mut_kind kind, uint32_t depth,
                         uint32_t nodes, uint32_t busy, uint64_t salt)
{
    ut_event *ev = &be->ev;
    ev->kind = UT_KIND_MUTATION;
    ev->dom_elements = PAGE_ELEMENTS;
    ev->dom_depth = PAGE_DEPTH;
    ev->busy = busy;
    ev->nrecs = nrecs;
    ev->recs = be->recs;
    for (uint32_t i = 0; i < nrecs; i++) {
        snprintf(be->rec_els[i], sizeof be->rec_els[i], "n%llu", (unsigned long long)((salt * 7 + i) % 997));
        be->recs[i] = (ut_mut_rec){
            .el = text_at(be->rec_els[i]),
            .kind = kind,
            .depth = depth + i,
            .subtree = kind == UT_MUT_CHILDLIST ? 40 * nodes : 1,
            .nodes = kind == UT_MUT_CHILDLIST ? nodes : 0,
            .bytes = kind == UT_MUT_CHILDLIST ? 180 * nodes : 0,
        };
    }
}

/* The steps where the user acts: clicks and changes. */
static void step_user(ut__bench_event *be, step_kind kind, uint64_t pass, uint32_t item)
{
    ut_event *ev = &be->ev;
    char name[48];
    switch (kind) {
    case STEP_CLICK_ROW_LINK:
    case STEP_CLICK_ROW_BUTTON: {
        bool link = kind == STEP_CLICK_ROW_LINK;
        char el[24];
        if (link)
            snprintf(name, sizeof name, "Blue Widget %u", item);
        else
            snprintf(name, sizeof name, "Edit Item");
        snprintf(el, sizeof el, "row-%u-%s", item, link ? "link" : "edit");
        ev->kind = UT_KIND_CLICK;
        set_control(be, link ? "link" : "button", name, el);
        set_row(be, item);
        break;
    }
    case STEP_CLICK_TOOLBAR:
        ev->kind = UT_KIND_CLICK;
        set_control(be, "button", "Apply", "filters-apply");
        snprintf(be->cells[0], sizeof be->cells[0], "Filters");
        ev->ctx.kind = UT_CTX_TOOLBAR;
        ev->ctx.name = text_at(be->cells[0]);
        break;
    case STEP_CHANGE_CHOICE:
        ev->kind = UT_KIND_CHANGE;
        set_control(be, "combobox", "Status", "filter-status");
        snprintf(be->value, sizeof be->value, "%s", pass % 2 ? "Draft" : "Published");
        ev->value = text_at(be->value);
        ev->has_value = true;
        break;
    case STEP_CLICK_CHECKBOX:
        ev->kind = UT_KIND_CLICK;
        set_control(be, "checkbox", pass % 2 ? "Draft" : "Active", pass % 2 ? "lc-draft" : "lc-active");
        snprintf(be->cells[0], sizeof be->cells[0], "Lifecycle filter");
        ev->ctx.kind = UT_CTX_GROUP;
        ev->ctx.name = text_at(be->cells[0]);
        ev->state_set = UT_STATE_CHECKED;
        ev->state_on = UT_STATE_CHECKED;
        break;
    case STEP_CHANGE_TEXT:
        ev->kind = UT_KIND_CHANGE;
        set_control(be, "textbox", "Search", "search");
        ev->has_len = true;
        ev->len = 12;
        break;
    case STEP_CLICK_TAB:
        ev->kind = UT_KIND_CLICK;
        set_control(be, "tab", pass % 2 ? "History" : "Details", pass % 2 ? "tab-history" : "tab-details");
        snprintf(be->cells[0], sizeof be->cells[0], "Item sections");
        ev->ctx.kind = UT_CTX_TABLIST;
        ev->ctx.name = text_at(be->cells[0]);
        ev->state_set = UT_STATE_SELECTED;
        ev->state_on = UT_STATE_SELECTED;
        break;
    case STEP_CLICK_PLAIN:
        ev->kind = UT_KIND_CLICK;
        set_control(be, "button", "Export", "export");
        break;
    default:
        break;
    }
}

/* The steps where the page or the browser acts: navigations, renders, dialogs, alerts. */
static void step_page(ut__bench_event *be, step_kind kind, uint64_t pass, uint32_t item, uint64_t step)
{
    ut_event *ev = &be->ev;
    char name[48];
    switch (kind) {
    case STEP_NAV:
        ev->kind = UT_KIND_NAV;
        snprintf(be->url, sizeof be->url, "/catalog?page=%llu", (unsigned long long)(pass % 50 + 1));
        snprintf(be->title, sizeof be->title, "Catalog");
        ev->url = text_at(be->url);
        ev->title = text_at(be->title);
        ev->how = pass == 0 ? UT_NAV_LOAD : UT_NAV_PUSH;
        ev->has_tz = true;
        ev->tz_min = 120;
        break;
    case STEP_RENDER:
        set_mutation(be, 3, UT_MUT_CHILDLIST, 4, 60, 0, step);
        break;
    case STEP_MUTATION_SMALL:
        set_mutation(be, 2, UT_MUT_CHILDLIST, 9, 3, 0, step);
        break;
    case STEP_MUTATION_BUSY:
        set_mutation(be, 4, UT_MUT_CHILDLIST, 6, 25, 1, step);
        break;
    case STEP_MUTATION_ATTRS:
        set_mutation(be, 2, UT_MUT_ATTRIBUTES, 11, 0, 0, step);
        break;
    case STEP_MUTATION_TEXT:
        set_mutation(be, 1, UT_MUT_CHARDATA, 12, 0, 0, step);
        break;
    case STEP_DIALOG_OPEN:
    case STEP_DIALOG_CLOSE:
        ev->kind = UT_KIND_DIALOG;
        ev->dialog_state = kind == STEP_DIALOG_OPEN ? UT_DIALOG_OPEN : UT_DIALOG_CLOSE;
        snprintf(name, sizeof name, "Blue Widget %u", item);
        set_control(be, "dialog", name, "item-dialog");
        snprintf(be->text, sizeof be->text, "Price: $%u.99 \xC2\xB7 Status: Published \xC2\xB7 SKU-%04u",
                 10 + item % 90, item % 10000);
        ev->text = text_at(be->text);
        break;
    case STEP_ALERT:
        ev->kind = UT_KIND_ALERT;
        snprintf(be->role, sizeof be->role, "status");
        snprintf(be->text, sizeof be->text, "Saved Blue Widget %u", item);
        ev->role = text_at(be->role);
        ev->text = text_at(be->text);
        ev->level = UT_LEVEL_INFO;
        break;
    default:
        break;
    }
}

void ut__bench_event_make(ut__bench_event *be, uint32_t tab, uint64_t step)
{
    uint32_t pos = (uint32_t)(step % UT__BENCH_SCRIPT_STEPS);
    uint64_t pass = step / UT__BENCH_SCRIPT_STEPS;
    uint32_t pass_ms;
    uint32_t offset_ms = step_offset_ms(pos, &pass_ms);
    /* A different item of the catalog on every pass and tab. */
    uint32_t item = (uint32_t)((tab * 31u + pass * 7u) % 5000u);

    memset(&be->ev, 0, sizeof be->ev);
    ut_event *ev = &be->ev;
    ut__bench_tab_id(tab, be->tab, sizeof be->tab);
    ev->tab = text_at(be->tab);
    ev->has_seq = true;
    ev->seq = step + 1;
    ev->time_us = BASE_TIME_US + (int64_t)tab * TAB_TIME_SPREAD_US +
                  ((int64_t)pass * pass_ms + offset_ms) * 1000;

    step_kind kind = script[pos].kind;
    step_user(be, kind, pass, item);
    step_page(be, kind, pass, item, step);
}

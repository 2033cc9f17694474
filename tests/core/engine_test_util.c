/* Helpers shared by the engine's test binaries; see engine_test_util.h. */
#include "engine_test_util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ut_engine *engine_with(const ut_config *cfg)
{
    ut_engine *e = NULL;
    char err[256];
    ut_status st = ut_engine_new(cfg, &e, err, sizeof err);
    if (st != UT_OK)
        fail_msg("ut_engine_new: %s (%s)", ut_status_str(st), err);
    return e;
}

void config_in_order(ut_config *c)
{
    ut_config_defaults(c);
    c->reorder_ms = 0;
}

ut_engine *engine_default(void)
{
    ut_config cfg;
    config_in_order(&cfg);
    return engine_with(&cfg);
}

static ut_event ev_base(const char *tab, int64_t t_us, ut_kind kind)
{
    ut_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    ev.time_us = t_us;
    ev.tab = ut_str_cstr(tab);
    return ev;
}

ut_event ev_nav(const char *tab, int64_t t_us, const char *url, const char *title, ut_nav_how how)
{
    ut_event ev = ev_base(tab, t_us, UT_KIND_NAV);
    ev.url = ut_str_cstr(url);
    ev.title = ut_str_cstr(title);
    ev.how = how;
    return ev;
}

ut_event ev_click(const char *tab, int64_t t_us, const char *role, const char *name, const char *el)
{
    ut_event ev = ev_base(tab, t_us, UT_KIND_CLICK);
    ev.role = ut_str_cstr(role);
    ev.name = ut_str_cstr(name);
    ev.el = ut_str_cstr(el);
    return ev;
}

ut_event ev_click_in(const char *tab, int64_t t_us, const char *role, const char *name,
                     const char *el, ut_ctx_kind kind, const char *ctx_name)
{
    ut_event ev = ev_click(tab, t_us, role, name, el);
    ev.ctx.kind = kind;
    ev.ctx.name = ut_str_cstr(ctx_name);
    return ev;
}

ut_event ev_change(const char *tab, int64_t t_us, const char *role, const char *name, const char *el)
{
    ut_event ev = ev_base(tab, t_us, UT_KIND_CHANGE);
    ev.role = ut_str_cstr(role);
    ev.name = ut_str_cstr(name);
    ev.el = ut_str_cstr(el);
    return ev;
}

ut_event ev_alert(const char *tab, int64_t t_us, const char *text, ut_level level)
{
    ut_event ev = ev_base(tab, t_us, UT_KIND_ALERT);
    ev.role = UT_STR_LIT("alert");
    ev.text = ut_str_cstr(text);
    ev.level = level;
    return ev;
}

ut_event ev_dialog(const char *tab, int64_t t_us, ut_dialog_state state, const char *name,
                   const char *el, const char *text)
{
    ut_event ev = ev_base(tab, t_us, UT_KIND_DIALOG);
    ev.dialog_state = state;
    ev.role = UT_STR_LIT("dialog");
    ev.name = ut_str_cstr(name);
    ev.el = ut_str_cstr(el);
    ev.text = ut_str_cstr(text);
    return ev;
}

static const ut_mut_rec big_render = {
    .el = {"main", 4}, .kind = UT_MUT_CHILDLIST, .depth = 3, .subtree = 400, .nodes = 120,
    .bytes = 40000,
};

ut_event ev_mutation_big(const char *tab, int64_t t_us)
{
    ut_event ev = ev_base(tab, t_us, UT_KIND_MUTATION);
    ev.dom_elements = 500;
    ev.dom_depth = 12;
    ev.recs = &big_render;
    ev.nrecs = 1;
    return ev;
}

ut_event ev_close(const char *tab, int64_t t_us)
{
    return ev_base(tab, t_us, UT_KIND_CLOSE);
}

void apply_ok(ut_engine *e, const ut_event *ev)
{
    ut_status st = ut_engine_apply(e, ev);
    if (st != UT_OK)
        fail_msg("ut_engine_apply(%s at %lld): %s", ut_kind_name(ev->kind), (long long)ev->time_us,
                 ut_status_str(st));
}

char *trace_of(const ut_engine *e, const char *tab, ut_trace_opts opts)
{
    ut_buf b = UT_BUF_INIT;
    ut_status st = ut_engine_trace(e, ut_str_cstr(tab), &opts, &b);
    if (st != UT_OK)
        fail_msg("ut_engine_trace(%s): %s", tab, ut_status_str(st));
    char *s = strdup(b.data ? b.data : "");
    ut_buf_free(&b);
    assert_non_null(s);
    return s;
}

char *trace_text(const ut_engine *e, const char *tab)
{
    return trace_of(e, tab, UT_TRACE_OPTS_DEFAULT);
}

static bool two_digits(const char *p)
{
    return p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9';
}

size_t trace_clock_prefix(const char *line)
{
    if (line[0] != '-' || line[1] != ' ')
        return 0;
    const char *p = line + 2;
    if (two_digits(p) && p[2] == ':' && two_digits(p + 3) && p[5] == ':')
        p += 5;
    if (p[0] != ':' || !two_digits(p + 1) || p[3] != ' ')
        return 0;
    return (size_t)(p + 4 - line);
}

bool trace_line(const char *trace, unsigned i, char *dst, size_t cap)
{
    unsigned seen = 0;
    for (const char *p = trace; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        size_t clock = trace_clock_prefix(p);
        if (clock && len > clock) {
            if (seen++ == i) {
                size_t n = len - clock < cap - 1 ? len - clock : cap - 1;
                memcpy(dst, p + clock, n);
                dst[n] = '\0';
                return true;
            }
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    return false;
}

unsigned trace_event_lines(const char *trace)
{
    char line[4096];
    unsigned n = 0;
    while (trace_line(trace, n, line, sizeof line))
        n++;
    return n;
}

/* ---- Session fixtures ---- */

char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static ut_str jstr(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? ut_str_from(json_string_value(v), json_string_length(v)) : UT_STR_NULL;
}

static int enum_index(ut_str s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (ut_str_eq_cstr(s, names[i]))
            return i;
    fail_msg("unknown value '%.*s' in fixture", (int)s.len, s.ptr);
    return 0;
}

static void record_to_event(json_t *rec, ut_event *ev, ut_mut_rec **recs_next)
{
    static const char *const hows[] = {"load", "reload", "push", "replace", "pop", "hash"};
    static const char *const ctxs[] = {"", "row", "toolbar", "group", "dialog", "menu",
                                       "tablist", "form", "navigation", "region", "list"};
    static const char *const levels[] = {"", "error", "warning", "info"};
    static const char *const states[] = {"checked", "expanded", "selected", "pressed"};

    ev->tab = jstr(rec, "tab");
    json_t *seq = json_object_get(rec, "seq");
    if (json_is_integer(seq)) {
        ev->has_seq = true;
        ev->seq = (uint64_t)json_integer_value(seq);
    }
    ev->url = jstr(rec, "url");
    ev->title = jstr(rec, "title");
    if (json_object_get(rec, "how"))
        ev->how = (ut_nav_how)enum_index(jstr(rec, "how"), hows, 6);
    json_t *tz = json_object_get(rec, "tz");
    if (json_is_integer(tz)) {
        ev->has_tz = true;
        ev->tz_min = (int32_t)json_integer_value(tz);
    }
    ev->role = jstr(rec, "role");
    ev->name = jstr(rec, "name");
    ev->el = jstr(rec, "el");
    ev->sens = json_is_true(json_object_get(rec, "sens"));
    ev->text = jstr(rec, "text");
    if (json_object_get(rec, "level"))
        ev->level = (ut_level)enum_index(jstr(rec, "level"), levels, 4);

    json_t *ctx = json_object_get(rec, "ctx");
    if (json_is_object(ctx)) {
        ev->ctx.kind = (ut_ctx_kind)enum_index(jstr(ctx, "kind"), ctxs, 11);
        ev->ctx.name = jstr(ctx, "name");
        json_t *cells = json_object_get(ctx, "cells"), *cell;
        size_t i;
        json_array_foreach(cells, i, cell)
        {
            if (i < UT_CTX_CELLS_MAX) {
                ev->ctx.cells[i] = ut_str_from(json_string_value(cell), json_string_length(cell));
                ev->ctx.ncells = (uint32_t)i + 1;
            }
        }
    }
    json_t *state = json_object_get(rec, "state");
    if (ev->kind == UT_KIND_DIALOG) {
        ev->dialog_state = ut_str_eq_cstr(jstr(rec, "state"), "close") ? UT_DIALOG_CLOSE : UT_DIALOG_OPEN;
    } else if (json_is_object(state)) {
        for (int b = 0; b < 4; b++) {
            json_t *v = json_object_get(state, states[b]);
            if (json_is_boolean(v)) {
                ev->state_set |= (uint8_t)(1u << b);
                if (json_is_true(v))
                    ev->state_on |= (uint8_t)(1u << b);
            }
        }
    }
    json_t *value = json_object_get(rec, "value");
    if (json_is_string(value)) {
        ev->has_value = true;
        ev->value = jstr(rec, "value");
    }
    json_t *len = json_object_get(rec, "len");
    if (json_is_integer(len)) {
        ev->has_len = true;
        ev->len = (uint32_t)json_integer_value(len);
    }
    json_t *checked = json_object_get(rec, "checked");
    if (json_is_boolean(checked)) {
        ev->has_checked = true;
        ev->checked = json_is_true(checked);
    }

    json_t *dom = json_object_get(rec, "dom");
    if (json_is_array(dom)) {
        ev->dom_elements = (uint32_t)json_integer_value(json_array_get(dom, 0));
        ev->dom_depth = (uint32_t)json_integer_value(json_array_get(dom, 1));
    }
    json_t *recs = json_object_get(rec, "recs"), *r;
    size_t i;
    ev->recs = *recs_next;
    json_array_foreach(recs, i, r)
    {
        ut_mut_rec *m = (*recs_next)++;
        json_t *el = json_array_get(r, 0);
        m->el = ut_str_from(json_string_value(el), json_string_length(el));
        m->kind = (ut_mut_kind)json_integer_value(json_array_get(r, 1));
        m->depth = (uint32_t)json_integer_value(json_array_get(r, 2));
        m->subtree = (uint32_t)json_integer_value(json_array_get(r, 3));
        m->nodes = (uint32_t)json_integer_value(json_array_get(r, 4));
        m->bytes = (uint32_t)json_integer_value(json_array_get(r, 5));
        ev->nrecs++;
    }
    ev->busy = (uint32_t)json_integer_value(json_object_get(rec, "busy"));
    ev->dropped = (uint32_t)json_integer_value(json_object_get(rec, "dropped"));
}

void session_load(session *s, const char *path)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        fail_msg("%s:%d: %s", path, jerr.line, jerr.text);
    assert_true(json_is_array(root));
    size_t n = json_array_size(root), total_recs = 0, i;
    json_t *entry;
    json_array_foreach(root, i, entry)
    {
        total_recs += json_array_size(json_object_get(json_array_get(entry, 2), "recs"));
    }
    s->events = calloc(n ? n : 1, sizeof *s->events);
    s->recs = calloc(total_recs ? total_recs : 1, sizeof *s->recs);
    assert_non_null(s->events);
    assert_non_null(s->recs);
    s->n = n;
    s->json = root;
    ut_mut_rec *recs_next = s->recs;
    json_array_foreach(root, i, entry)
    {
        json_t *tag = json_array_get(entry, 0);
        ut_kind kind;
        if (ut_kind_from_tag(ut_str_cstr(json_string_value(tag)), &kind) != UT_OK)
            fail_msg("%s: entry %zu: unknown tag", path, i);
        ut_event *ev = &s->events[i];
        ev->kind = kind;
        ev->time_us = (int64_t)llround(json_number_value(json_array_get(entry, 1)) * 1e6);
        record_to_event(json_array_get(entry, 2), ev, &recs_next);
    }
}

void session_free(session *s)
{
    json_decref(s->json);
    free(s->events);
    free(s->recs);
    memset(s, 0, sizeof *s);
}

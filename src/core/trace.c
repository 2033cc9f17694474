/* The serializers' entry point (ut_engine_trace) and what the text and
 * JSON traces share: the token estimate, the entries a trace shows, the
 * repeat hash, the page state word. The formats are trace_text.c and
 * trace_json.c. */
#include "trace.h"

const char *ut__enum_name(const char *const *names, size_t n, unsigned v)
{
    return v < n && names[v] ? names[v] : "";
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

const char *ut__page_state_name(const ut_stab_status *st)
{
    if (!st->has_mutations)
        return "unknown";
    return st->state == UT_PAGE_CHANGING ? "changing" : "stable";
}

uint32_t ut__trace_shown_entries(const ut__tab *t, const ut_trace_opts *opts)
{
    uint32_t n = t->ring.count;
    if (opts->limit && opts->limit < n)
        n = opts->limit;
    return n;
}

int32_t ut__trace_tab_tz(const ut__tab *t)
{
    return t->has_tz ? t->tz_min : 0;
}

uint64_t ut__trace_hash(const char *p, size_t len)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
    return h;
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
        ut__trace_json(t, opts, out);
    else
        ut__trace_text(t, opts, out);
    return ut_buf_end(out, mark, UT_OK);
}

/* What the text and JSON traces share (trace.h): the token estimate, the
 * entries a trace shows, the repeat hash, the page state word. Below both
 * formats; trace.c, the entry point, sits above them. */
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

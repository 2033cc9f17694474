/* The serializers' entry point: ut_engine_trace picks the format, the
 * text trace (trace_text.c) or the JSON one (trace_json.c); what both share
 * is trace_common.c's (trace.h). */
#include "trace.h"

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

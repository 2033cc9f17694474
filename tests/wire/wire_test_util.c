/* Helpers shared by the wire tests (see wire_test_util.h). */
#include "wire_test_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void put_str(ut_buf *out, const char *name, ut_str s)
{
    ut_buf_printf(out, " %s=\"%.*s\"", name, (int)s.len, s.ptr ? s.ptr : "");
}

void wt_describe_event(const ut_event *ev, ut_buf *out)
{
    ut_buf_printf(out, "event %s t=%" PRId64 " rt=%" PRId64, ut_kind_name(ev->kind), ev->time_us, ev->rt_us);
    put_str(out, "tab", ev->tab);
    if (ev->has_seq)
        ut_buf_printf(out, " seq=%" PRIu64, ev->seq);
    switch (ev->kind) {
    case UT_KIND_NAV:
        put_str(out, "url", ev->url);
        put_str(out, "title", ev->title);
        ut_buf_printf(out, " how=%d", (int)ev->how);
        if (ev->has_tz)
            ut_buf_printf(out, " tz=%d", (int)ev->tz_min);
        break;
    case UT_KIND_CLICK:
    case UT_KIND_CHANGE:
        put_str(out, "role", ev->role);
        put_str(out, "name", ev->name);
        put_str(out, "el", ev->el);
        ut_buf_printf(out, " sens=%d", ev->sens);
        if (ev->ctx.kind != UT_CTX_NONE) {
            ut_buf_printf(out, " ctx=%d", (int)ev->ctx.kind);
            put_str(out, "ctxname", ev->ctx.name);
            for (uint32_t i = 0; i < ev->ctx.ncells; i++)
                put_str(out, "cell", ev->ctx.cells[i]);
        }
        ut_buf_printf(out, " state=%u/%u", ev->state_set, ev->state_on);
        if (ev->untrusted)
            ut_buf_printf(out, " untrusted=1");
        if (ev->assistant)
            ut_buf_printf(out, " assistant=1");
        if (ev->sort != UT_SORT_UNSET)
            ut_buf_printf(out, " sort=%d", (int)ev->sort);
        if (ev->has_value)
            put_str(out, "value", ev->value);
        if (ev->has_len)
            ut_buf_printf(out, " len=%" PRIu32, ev->len);
        if (ev->has_checked)
            ut_buf_printf(out, " checked=%d", ev->checked);
        break;
    case UT_KIND_ALERT:
        put_str(out, "role", ev->role);
        put_str(out, "text", ev->text);
        ut_buf_printf(out, " level=%d", (int)ev->level);
        break;
    case UT_KIND_DIALOG:
        ut_buf_printf(out, " state=%d", (int)ev->dialog_state);
        put_str(out, "role", ev->role);
        put_str(out, "name", ev->name);
        put_str(out, "el", ev->el);
        put_str(out, "text", ev->text);
        break;
    case UT_KIND_MUTATION:
        ut_buf_printf(out, " dom=%" PRIu32 "/%" PRIu32 " busy=%" PRIu32 " dropped=%" PRIu32 " recs=%" PRIu32,
                      ev->dom_elements, ev->dom_depth, ev->busy, ev->dropped, ev->nrecs);
        if (ev->has_net)
            ut_buf_printf(out, " net=%" PRIu32, ev->net);
        if (ev->loaded)
            ut_buf_append_cstr(out, " loaded");
        if (ev->input)
            ut_buf_append_cstr(out, " input");
        for (uint32_t i = 0; i < ev->nrecs; i++) {
            const ut_mut_rec *r = &ev->recs[i];
            put_str(out, "rec", r->el);
            ut_buf_printf(out, ":%d:%" PRIu32 ":%" PRIu32 ":%" PRIu32 ":%" PRIu32, (int)r->kind, r->depth,
                          r->subtree, r->nodes, r->bytes);
        }
        break;
    case UT_KIND_UNLOAD:
        ut_buf_printf(out, " persisted=%d", ev->persisted);
        break;
    case UT_KIND_APP:
        put_str(out, "name", ev->name);
        put_str(out, "text", ev->text);
        ut_buf_printf(out, " level=%d data=%" PRIu32, (int)ev->level, ev->ndata);
        for (uint32_t i = 0; i < ev->ndata; i++) {
            put_str(out, "key", ev->data[i].key);
            put_str(out, "value", ev->data[i].value);
        }
        break;
    case UT_KIND_INVALID:
        ut_buf_printf(out, " fields=%" PRIu32, ev->nfields);
        for (uint32_t i = 0; i < ev->nfields; i++) {
            put_str(out, "role", ev->fields[i].role);
            put_str(out, "name", ev->fields[i].name);
            put_str(out, "text", ev->fields[i].text);
        }
        break;
    case UT_KIND_CLOSE:
    case UT_KIND__COUNT:
        break;
    }
}

/* While positive, the failing allocator lets everything through: the
 * log's own allocations are not the code under test. */
static int alloc_paused;

static ut_status log_event(void *ud, const ut_event *ev)
{
    wt_log *log = ud;
    if (log->fail_on_event != UT_OK)
        return log->fail_on_event;
    log->events++;
    alloc_paused++;
    wt_describe_event(ev, &log->text);
    ut_buf_append_cstr(&log->text, "\n");
    alloc_paused--;
    return UT_OK;
}

static void log_reject(void *ud, ut_reject why, const char *detail)
{
    wt_log *log = ud;
    log->rejects++;
    log->last_reject = why;
    alloc_paused++;
    ut_buf_printf(&log->text, "reject %s: %s\n", ut_reject_name(why), detail);
    alloc_paused--;
}

static void log_ignored(void *ud, ut_str tag)
{
    wt_log *log = ud;
    log->ignored++;
    alloc_paused++;
    ut_buf_printf(&log->text, "ignored %.*s\n", (int)tag.len, tag.ptr);
    alloc_paused--;
}

static void log_ack(void *ud, ut_str chunk)
{
    wt_log *log = ud;
    log->acks++;
    alloc_paused++;
    ut_buf_printf(&log->text, "ack %.*s\n", (int)chunk.len, chunk.ptr);
    alloc_paused--;
}

void wt_log_init(wt_log *log)
{
    *log = (wt_log){.text = UT_BUF_INIT, .last_reject = UT_REJECT__COUNT};
}

void wt_log_free(wt_log *log)
{
    ut_buf_free(&log->text);
}

ut_fwd_sink wt_log_sink(wt_log *log)
{
    return (ut_fwd_sink){log_event, log_reject, log_ignored, log_ack, log};
}

ut_status wt_decode(const void *data, size_t len, size_t step, wt_log *log, char *error, size_t errlen,
                    uint64_t *error_offset)
{
    ut_fwd_decoder *d;
    ut_status st = ut_fwd_decoder_new(&d);
    if (st != UT_OK)
        return st;
    ut_fwd_sink sink = wt_log_sink(log);
    const char *p = data;
    if (step == 0)
        step = len ? len : 1;
    for (size_t off = 0; off < len && st == UT_OK; off += step)
        st = ut_fwd_decoder_feed(d, p + off, len - off < step ? len - off : step, &sink);
    if (error && errlen)
        snprintf(error, errlen, "%s", ut_fwd_decoder_error(d));
    if (error_offset)
        *error_offset = ut_fwd_decoder_error_offset(d);
    ut_fwd_decoder_free(d);
    return st;
}

void wt_json(const char *json, ut_buf *out)
{
    char err[256];
    ut_status st = ut_wire_json_to_msgpack(ut_str_cstr(json), out, err, sizeof err);
    if (st != UT_OK)
        fail_msg("test JSON rejected: %s\n%s", err, json);
}

static long alloc_budget = -1, alloc_attempts;

static bool alloc_allowed(void)
{
    if (alloc_paused > 0)
        return true;
    alloc_attempts++;
    return alloc_budget < 0 || alloc_attempts <= alloc_budget;
}
static void *failing_malloc(size_t n) { return alloc_allowed() ? malloc(n) : NULL; }
static void *failing_calloc(size_t n, size_t s) { return alloc_allowed() ? calloc(n, s) : NULL; }
static void *failing_realloc(void *p, size_t n) { return alloc_allowed() ? realloc(p, n) : NULL; }

void wt_alloc_fail_after(long n)
{
    static const ut_allocator failing = {failing_malloc, failing_calloc, failing_realloc, free};
    alloc_budget = n;
    alloc_attempts = 0;
    ut_set_allocator(&failing);
}

long wt_alloc_attempts(void)
{
    return alloc_attempts;
}

void wt_alloc_restore(void)
{
    alloc_budget = -1;
    ut_set_allocator(NULL);
}

static int write_buf(void *data, const char *bytes, size_t len)
{
    return ut_buf_append(data, bytes, len) == UT_OK ? 0 : -1;
}

void wt_packer(msgpack_packer *pk, ut_buf *out)
{
    msgpack_packer_init(pk, out, write_buf);
}

void wt_pack_cstr(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str_with_body(pk, s, strlen(s));
}

void wt_pack_event_time(msgpack_packer *pk, uint32_t sec, uint32_t nsec)
{
    unsigned char b[8] = {(unsigned char)(sec >> 24), (unsigned char)(sec >> 16), (unsigned char)(sec >> 8),
                          (unsigned char)sec, (unsigned char)(nsec >> 24), (unsigned char)(nsec >> 16),
                          (unsigned char)(nsec >> 8), (unsigned char)nsec};
    msgpack_pack_ext_with_body(pk, b, 8, 0);
}

void wt_decode_record(const char *kind, const char *record, wt_log *log)
{
    ut_buf json = UT_BUF_INIT, bytes = UT_BUF_INIT;
    ut_buf_printf(&json, "[\"uitrail.%s\", 1718000000, %s]", kind, record);
    wt_json(json.data, &bytes);
    ut_buf_free(&json);
    wt_log_init(log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, log, NULL, 0, NULL), UT_OK);
    ut_buf_free(&bytes);
}

void wt_check_good_records(const wt_record_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const wt_record_case *c = &cases[i];
        wt_log log;
        wt_decode_record(c->kind, c->record, &log);
        if (log.events != 1 || !strstr(log.text.data, c->expect))
            fail_msg("%s %s:\n got: %s\nwant: %s", c->kind, c->record, log.text.data ? log.text.data : "(nothing)",
                     c->expect);
        wt_log_free(&log);
    }
}

void wt_check_bad_records(const wt_record_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const wt_record_case *c = &cases[i];
        wt_log log;
        wt_decode_record(c->kind, c->record, &log);
        char want[512];
        snprintf(want, sizeof want, "%s\n", c->expect);
        if (log.rejects != 1 || !log.text.data || strcmp(log.text.data, want) != 0)
            fail_msg("%s %s:\n got: %s\nwant: %s", c->kind, c->record, log.text.data ? log.text.data : "(nothing)",
                     want);
        wt_log_free(&log);
    }
}

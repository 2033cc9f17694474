/* POST /v1/ingest (protocol §2, §3): a body of Forward messages in
 * msgpack, fed to a decoder as it arrives, or of JSON, held whole (up to
 * UT_HTTP_JSON_BODY_MAX_BYTES) and converted when it is complete. The
 * answer counts what was accepted; events before an error are kept. */
#include "daemon.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef enum body_kind { BODY_MSGPACK, BODY_JSON } body_kind;

/* The request's state, in the HTTP request's app slot. */
typedef struct ingest_body {
    body_kind kind;
    uint64_t bytes;
    ut_fwd_decoder *decoder; /* the msgpack body's, or the converted JSON's */
    ut_buf json;             /* a JSON body, held whole */
    ut__ingest_counts counts;
    bool bound;              /* sent with a signed per-tab token: */
    ut__ingest_binding bind; /* what it may write */
} ingest_body;

static void body_free(void *app)
{
    ingest_body *b = app;
    ut_fwd_decoder_free(b->decoder);
    ut_buf_free(&b->json);
    ut_free(b);
}

static ingest_body *body_of(ut__conn *c)
{
    ingest_body *b = ut__http_request(c)->app;
    assert(b);
    return b;
}

static uint64_t body_limit(body_kind kind)
{
    return kind == BODY_JSON ? UT_HTTP_JSON_BODY_MAX_BYTES : UT_HTTP_BODY_MAX_BYTES;
}

static bool media_type_is(ut_str value, const char *type)
{
    size_t n = strlen(type);
    while (value.len && value.ptr[0] == ' ') {
        value.ptr++;
        value.len--;
    }
    if (value.len < n || strncasecmp(value.ptr, type, n) != 0)
        return false;
    return value.len == n || value.ptr[n] == ';' || value.ptr[n] == ' ';
}

/* A body sent over TCP with a signed per-tab token instead of the
 * daemon's bearer token (routes.c let it in) may write only its tab. */
static void bind_to_token(ut__conn *c, ingest_body *b)
{
    ut__auth *a = &c->d->auth;
    ut_str auth = ut__http_header(c, UT__HDR_AUTHORIZATION);
    if (c->transport == UT__TRANSPORT_UNIX || !ut__auth_signed_mode(a) || ut__auth_bearer_ok(a, auth))
        return;
    ut_token_claims claims;
    const char *why;
    if (ut__auth_bearer_ingest_token(a, auth, ut__clock_wall_us() / 1000000, &claims, &why) != UT_TOKEN_VALID) {
        /* Expired between the check and now: nothing it sends is kept. */
        claims.tab_len = 0;
        claims.tab[0] = '\0';
        claims.exp_s = 0;
    }
    b->bound = true;
    b->bind = (ut__ingest_binding){.tab_len = claims.tab_len, .exp_s = claims.exp_s};
    memcpy(b->bind.tab, claims.tab, claims.tab_len + 1);
}

void ut__ingest_http_headers(ut__conn *c)
{
    ut_str ctype = ut__http_header(c, UT__HDR_CONTENT_TYPE);
    body_kind kind;
    if (media_type_is(ctype, "application/msgpack") || media_type_is(ctype, "application/x-msgpack"))
        kind = BODY_MSGPACK;
    else if (media_type_is(ctype, "application/json"))
        kind = BODY_JSON;
    else {
        ut__http_set_error(c, 415, "Content-Type must be application/msgpack or application/json");
        return;
    }
    uint64_t limit = body_limit(kind);
    ut__http_req *r = ut__http_request(c);
    if (r->declared_length != ULLONG_MAX && r->declared_length > limit) {
        ut__http_set_error(c, 413,
                           "the body of %llu bytes exceeds the limit of %llu bytes: send smaller requests",
                           (unsigned long long)r->declared_length, (unsigned long long)limit);
        return;
    }
    ingest_body *b = ut_calloc(1, sizeof *b);
    if (!b || ut_fwd_decoder_new(&b->decoder) != UT_OK) {
        ut_free(b);
        ut__http_set_error(c, 500, "out of memory");
        return;
    }
    b->kind = kind;
    r->app = b;
    r->app_free = body_free;
    bind_to_token(c, b);
}

/* Feeds Forward bytes of the body to its decoder. On a protocol error
 * answers 400 and closes; events before it are kept. */
static void feed(ut__conn *c, ingest_body *b, const char *data, size_t len)
{
    ut__ingest_batch batch;
    ut__ingest_begin(&batch, c->d, NULL, &b->counts);
    batch.bind = b->bound ? &b->bind : NULL;
    ut_status st = ut_fwd_decoder_feed(b->decoder, data, len, &batch.sink);
    ut__ingest_end(&batch);
    if (st == UT_EPROTO) {
        char what[320];
        snprintf(what, sizeof what, "%s (%llu events before it were accepted)",
                 ut_fwd_decoder_error(b->decoder), (unsigned long long)b->counts.accepted);
        ut__conn_protocol_error(c, what, data, len);
    } else if (st != UT_OK) {
        ut__http_error(c, 500, "out of memory decoding the body", true);
    }
}

void ut__ingest_http_body(ut__conn *c, const char *data, size_t len)
{
    ingest_body *b = body_of(c);
    b->bytes += len;
    uint64_t limit = body_limit(b->kind);
    if (b->bytes > limit) {
        char why[160];
        snprintf(why, sizeof why, "the body exceeds the limit of %llu bytes: send smaller requests",
                 (unsigned long long)limit);
        ut__http_error(c, 413, why, true);
        return;
    }
    if (b->kind == BODY_JSON) {
        if (ut_buf_append(&b->json, data, len) != UT_OK)
            ut__http_error(c, 500, "out of memory holding the body", true);
        return;
    }
    /* The body's deadline (http.c) is not renewed as it makes progress:
     * a body is bounded, so it has to arrive whole in time. */
    feed(c, b, data, len);
}

/* Converts a JSON body and feeds it. False after answering its error. */
static bool feed_json(ut__conn *c, ingest_body *b)
{
    ut_buf packed = UT_BUF_INIT;
    char err[256] = "";
    ut_status st = ut_wire_json_to_msgpack(ut_buf_str(&b->json), &packed, err, sizeof err);
    if (st == UT_OK)
        feed(c, b, packed.data ? packed.data : "", packed.len);
    ut_buf_free(&packed);
    if (st == UT_ENOMEM) {
        ut__http_error(c, 500, "out of memory converting the JSON body", false);
        return false;
    }
    if (st != UT_OK) {
        char what[300];
        snprintf(what, sizeof what, "bad JSON ingest body: %s", err);
        ut__http_error(c, 400, what, false);
        return false;
    }
    return true;
}

void ut__ingest_http_serve(ut__conn *c)
{
    ingest_body *b = body_of(c);
    if (b->kind == BODY_JSON && !feed_json(c, b))
        return;
    if (c->state != UT__CONN_OPEN)
        return;
    size_t pending = ut_fwd_decoder_pending(b->decoder);
    if (pending > 0) {
        char what[160];
        snprintf(what, sizeof what,
                 "the body ends inside a Forward message (%zu bytes of it); %llu events before it were accepted",
                 pending, (unsigned long long)b->counts.accepted);
        c->d->m.protocol_errors_http++;
        ut__http_error(c, 400, what, false);
        return;
    }
    ut_buf *body = &c->d->body;
    ut_buf_reset(body);
    ut_buf_printf(body, "{\"accepted\":%llu,\"rejected\":%llu,\"duplicates\":%llu,\"ignored\":%llu}\n",
                  (unsigned long long)b->counts.accepted, (unsigned long long)b->counts.rejected,
                  (unsigned long long)b->counts.duplicates, (unsigned long long)b->counts.ignored);
    ut__http_respond_json(c, UT_OK, 202);
}

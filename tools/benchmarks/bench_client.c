/* bench_client: the load client of tools/bench. It drives uitraild or Redis
 * with the same synthetic events (workload.c) through the same libuv loop
 * and socket code; only the encoding differs:
 *
 *   uitrail ingest  Forward Message-mode entries on ingest.sock; an entry
 *                   with option.chunk is acknowledged once applied
 *   uitrail read    GET /v1/tabs/<tab>/trace on http.sock (http-parser)
 *   redis ingest    LPUSH tab:<tab> <entry> + LTRIM tab:<tab> 0 19 per event
 *                   (mutation flushes go to dom:<tab>), replies read with
 *                   hiredis's reader
 *   redis read      LRANGE tab:<tab> 0 19, decoded and formatted into a
 *                   text trace on the client, as a do-it-yourself would
 *
 * Each Redis value is the very msgpack entry uitraild receives (~150
 * bytes). Requests are encoded before the clock starts. "Ingest done" means
 * applied: every Redis reply is in, or uitraild acknowledged the last entry
 * of each connection (entries on one connection are applied in order).
 *
 * Pipelined runs write every request without waiting (reads keep --depth
 * in flight); request-reply runs wait for each request's replies before
 * writing the next. Prints one line of name=value results. A benchmark
 * measures; it asserts nothing beyond the replies being what they should. */
#include "workload.h"

#include "uitrail/wire.h"
#include "wire_internal.h"

#include <errno.h>
#include <getopt.h>
#include <hiredis/hiredis.h>
#include <http_parser.h>
#include <inttypes.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

/* Bounds of the command line. */
#define CONNS_MAX 256
#define READ_BUF_BYTES (64u << 10)
/* Requests generated at a time in --fill mode (memory runs), where the
 * whole stream would not fit comfortably in the client's memory. */
#define FILL_BATCH_REQUESTS 8192u
#define REDIS_RING_LAST "19" /* LTRIM/LRANGE end index: a 20-entry list */

typedef enum target { TARGET_UITRAIL, TARGET_REDIS } target;
typedef enum phase { PHASE_INGEST, PHASE_READ } phase;

typedef struct options {
    target target;
    phase phase;
    const char *socket_path;
    uint32_t conns;
    uint32_t tabs;
    uint32_t steps_per_tab; /* ingest: events sent per tab */
    uint32_t first_step;    /* ingest: the script step to start at */
    uint32_t reads;         /* read: requests over all connections */
    uint32_t depth;         /* requests in flight per connection; 0: all */
    uint32_t ack_every;     /* uitrail pipelined ingest: every Nth entry asks for an ack; 0: the last only */
    bool fill;              /* encode while sending (memory runs) */
} options;

typedef struct bench bench;

typedef struct conn {
    uv_pipe_t pipe;
    uv_connect_t connect_req;
    uv_write_t write_req;
    bench *b;
    uint32_t index;
    uint32_t tabs_here; /* tabs index, index + conns, ... */

    uint64_t n_req;
    uint64_t batch_first; /* the request at out.data + offs[0] */
    uint64_t batch_end;
    ut_buf out;
    size_t *offs; /* offs[r - batch_first]: where request r starts in out */
    uint64_t next_send;
    bool writing;

    uint64_t next_done;    /* first request whose replies are not all in */
    uint32_t replies_left; /* replies still due for request next_done */
    uint64_t *sent_ns;     /* per request, for latencies (reads) */
    uint64_t rng;

    redisReader *redis_reader;
    msgpack_unpacker unpacker;
    msgpack_unpacked unpacked;
    http_parser http;
    ut_buf body; /* the trace just read (uitrail) or formatted (Redis) */
    char read_buf[READ_BUF_BYTES];
} conn;

struct bench {
    options o;
    uv_loop_t loop;
    conn *conns;
    uint32_t connected;
    uint32_t finished;
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t *latencies;
    uint64_t n_latencies;
    uint64_t bytes_read_back; /* trace bytes the reads produced */
    http_parser_settings http_settings;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_client: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void check_buf(const ut_buf *b)
{
    if (b->oom)
        die("out of memory encoding requests: use fewer tabs or steps");
}

/* ---- Requests ---- */

static uint32_t replies_of(const conn *c, uint64_t r)
{
    const options *o = &c->b->o;
    if (o->target == TARGET_REDIS && o->phase == PHASE_INGEST)
        return 2; /* LPUSH's length, LTRIM's OK */
    if (o->target == TARGET_UITRAIL && o->phase == PHASE_INGEST)
        return (o->depth == 1 || r + 1 == c->n_req || (o->ack_every && (r + 1) % o->ack_every == 0))
                   ? 1
                   : 0; /* the ack */
    return 1;
}

static void append_redis_command(ut_buf *out, int argc, const char **argv, const size_t *argvlen)
{
    char *cmd;
    int len = redisFormatCommandArgv(&cmd, argc, argv, argvlen);
    if (len < 0)
        die("out of memory formatting a Redis command");
    ut_buf_append(out, cmd, (size_t)len);
    redisFreeCommand(cmd);
}

static void encode_ingest(conn *c, uint64_t r, ut_buf *scratch)
{
    const options *o = &c->b->o;
    uint32_t tab = c->index + (uint32_t)(r % c->tabs_here) * o->conns;
    uint64_t step = o->first_step + r / c->tabs_here;
    ut__bench_event be;
    ut__bench_event_make(&be, tab, step);

    if (o->target == TARGET_UITRAIL) {
        size_t start = c->out.len;
        if (ut_wire_pack_event(&be.ev, false, &c->out) != UT_OK)
            die("cannot pack event %" PRIu64 " of tab %u", step, tab);
        if (replies_of(c, r)) {
            /* [tag, time, record] becomes [tag, time, record, {"chunk": id}]. */
            char chunk[32];
            int n = snprintf(chunk, sizeof chunk, "c%u-%" PRIu64, c->index, r);
            c->out.data[start] = (char)0x94;
            msgpack_packer pk;
            msgpack_packer_init(&pk, &c->out, ut__msgpack_write_buf);
            msgpack_pack_map(&pk, 1);
            msgpack_pack_str_with_body(&pk, "chunk", 5);
            msgpack_pack_str_with_body(&pk, chunk, (size_t)n);
        }
        return;
    }
    ut_buf_reset(scratch);
    if (ut_wire_pack_event(&be.ev, false, scratch) != UT_OK)
        die("cannot pack event %" PRIu64 " of tab %u", step, tab);
    char key[40];
    int keylen = snprintf(key, sizeof key, "%s:%s", ut__bench_step_is_mutation(step) ? "dom" : "tab", be.tab);
    const char *push[] = {"LPUSH", key, scratch->data};
    const size_t push_len[] = {5, (size_t)keylen, scratch->len};
    const char *trim[] = {"LTRIM", key, "0", REDIS_RING_LAST};
    const size_t trim_len[] = {5, (size_t)keylen, 1, sizeof REDIS_RING_LAST - 1};
    append_redis_command(&c->out, 3, push, push_len);
    append_redis_command(&c->out, 4, trim, trim_len);
}

/* A random tab, the same sequence for both targets. */
static uint32_t next_tab(conn *c)
{
    c->rng = c->rng * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)((c->rng >> 33) % c->b->o.tabs);
}

static void encode_read(conn *c)
{
    char tab[24];
    ut__bench_tab_id(next_tab(c), tab, sizeof tab);
    if (c->b->o.target == TARGET_UITRAIL) {
        ut_buf_printf(&c->out, "GET /v1/tabs/%s/trace HTTP/1.1\r\nHost: localhost\r\n\r\n", tab);
        return;
    }
    char key[40];
    int keylen = snprintf(key, sizeof key, "tab:%s", tab);
    const char *argv[] = {"LRANGE", key, "0", REDIS_RING_LAST};
    const size_t argvlen[] = {6, (size_t)keylen, 1, sizeof REDIS_RING_LAST - 1};
    append_redis_command(&c->out, 4, argv, argvlen);
}

/* Encodes requests [first, first + count) into c->out. */
static void encode_batch(conn *c, uint64_t first, uint64_t count)
{
    ut_buf scratch = UT_BUF_INIT;
    ut_buf_reset(&c->out);
    c->batch_first = first;
    c->batch_end = first + count;
    for (uint64_t r = first; r < c->batch_end; r++) {
        c->offs[r - first] = c->out.len;
        if (c->b->o.phase == PHASE_INGEST)
            encode_ingest(c, r, &scratch);
        else
            encode_read(c);
        check_buf(&c->out);
    }
    c->offs[count] = c->out.len;
    ut_buf_free(&scratch);
}

/* ---- Sending ---- */

static void send_more(conn *c);

static void on_written(uv_write_t *req, int status)
{
    conn *c = req->data;
    c->writing = false;
    if (status < 0)
        die("write to %s failed: %s", c->b->o.socket_path, uv_strerror(status));
    send_more(c);
}

/* Writes the requests the depth allows, as one write. */
static void send_more(conn *c)
{
    const options *o = &c->b->o;
    if (c->writing || c->next_send >= c->n_req)
        return;
    if (c->next_send == c->batch_end)
        encode_batch(c, c->next_send, c->n_req - c->next_send < FILL_BATCH_REQUESTS
                                          ? c->n_req - c->next_send : FILL_BATCH_REQUESTS);
    uint64_t end = c->batch_end;
    if (o->depth && c->next_done + o->depth < end)
        end = c->next_done + o->depth;
    if (end <= c->next_send)
        return;
    if (c->sent_ns) {
        uint64_t t = now_ns();
        for (uint64_t r = c->next_send; r < end; r++)
            c->sent_ns[r] = t;
    }
    size_t from = c->offs[c->next_send - c->batch_first], to = c->offs[end - c->batch_first];
    uv_buf_t buf = uv_buf_init(c->out.data + from, (unsigned)(to - from));
    c->next_send = end;
    c->writing = true;
    c->write_req.data = c;
    int rc = uv_write(&c->write_req, (uv_stream_t *)&c->pipe, &buf, 1, on_written);
    if (rc < 0)
        die("write to %s failed: %s", o->socket_path, uv_strerror(rc));
}

/* ---- Replies ---- */

/* Stops the clock and the loop when the last connection has all its
 * replies; the connections are closed after the results are printed. */
static void conn_finished(bench *b)
{
    if (++b->finished < b->o.conns)
        return;
    b->end_ns = now_ns();
    uv_stop(&b->loop);
}

static void skip_unanswered(conn *c)
{
    while (c->next_done < c->n_req && (c->replies_left = replies_of(c, c->next_done)) == 0)
        c->next_done++;
}

static void on_reply(conn *c)
{
    if (c->next_done >= c->n_req || c->replies_left == 0)
        die("connection %u: a reply nobody asked for", c->index);
    if (--c->replies_left > 0)
        return;
    if (c->sent_ns)
        c->b->latencies[c->b->n_latencies++] = now_ns() - c->sent_ns[c->next_done];
    c->next_done++;
    skip_unanswered(c);
    if (c->next_done == c->n_req) {
        conn_finished(c->b);
        return;
    }
    send_more(c);
}

/* The client-side trace of a do-it-yourself on Redis: the same line shapes
 * as uitrail's for what a list of raw events can tell. */
static const msgpack_object *map_get(const msgpack_object *map, const char *key)
{
    if (map->type != MSGPACK_OBJECT_MAP)
        return NULL;
    size_t len = strlen(key);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object_kv *kv = &map->via.map.ptr[i];
        if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == len &&
            memcmp(kv->key.via.str.ptr, key, len) == 0)
            return &kv->val;
    }
    return NULL;
}

static ut_str map_str(const msgpack_object *map, const char *key)
{
    const msgpack_object *v = map_get(map, key);
    if (!v || v->type != MSGPACK_OBJECT_STR)
        return UT_STR_NULL;
    return ut_str_from(v->via.str.ptr, v->via.str.size);
}

static void format_ctx(ut_buf *out, const msgpack_object *record)
{
    const msgpack_object *ctx = map_get(record, "ctx");
    if (!ctx)
        return;
    ut_str kind = map_str(ctx, "kind");
    ut_buf_printf(out, " (in %.*s: ", (int)kind.len, kind.ptr);
    const msgpack_object *cells = map_get(ctx, "cells");
    if (cells && cells->type == MSGPACK_OBJECT_ARRAY) {
        for (uint32_t i = 0; i < cells->via.array.size; i++) {
            const msgpack_object *cell = &cells->via.array.ptr[i];
            if (cell->type != MSGPACK_OBJECT_STR)
                continue;
            if (i)
                ut_buf_append_cstr(out, " | ");
            ut_buf_append(out, cell->via.str.ptr, cell->via.str.size);
        }
    } else {
        ut_buf_append_str(out, map_str(ctx, "name"));
    }
    ut_buf_append_cstr(out, ")");
}

static void format_entry(ut_buf *out, const msgpack_object *entry)
{
    if (entry->type != MSGPACK_OBJECT_ARRAY || entry->via.array.size < 3 ||
        entry->via.array.ptr[0].type != MSGPACK_OBJECT_STR || entry->via.array.ptr[1].type != MSGPACK_OBJECT_EXT ||
        entry->via.array.ptr[1].via.ext.size != 8)
        die("Redis returned an entry that is not [tag, EventTime, record]");
    const msgpack_object *tag = &entry->via.array.ptr[0];
    const unsigned char *t = (const unsigned char *)entry->via.array.ptr[1].via.ext.ptr;
    uint32_t sec = (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 | (uint32_t)t[2] << 8 | t[3];
    const msgpack_object *rec = &entry->via.array.ptr[2];
    ut_str kind = ut_str_from(tag->via.str.ptr + 8, tag->via.str.size > 8 ? tag->via.str.size - 8 : 0);
    ut_str role = map_str(rec, "role"), name = map_str(rec, "name"), text = map_str(rec, "text");
    ut_buf_printf(out, "- %02u:%02u:%02u ", sec / 3600 % 24, sec / 60 % 60, sec % 60);
    if (ut_str_eq_cstr(kind, "click")) {
        ut_buf_printf(out, "click [%.*s] \"%.*s\"", (int)role.len, role.ptr, (int)name.len, name.ptr);
        format_ctx(out, rec);
    } else if (ut_str_eq_cstr(kind, "change")) {
        ut_str value = map_str(rec, "value");
        if (value.ptr)
            ut_buf_printf(out, "set [%.*s] \"%.*s\" = \"%.*s\"", (int)role.len, role.ptr, (int)name.len,
                          name.ptr, (int)value.len, value.ptr);
        else
            ut_buf_printf(out, "changed [%.*s] \"%.*s\"", (int)role.len, role.ptr, (int)name.len, name.ptr);
    } else if (ut_str_eq_cstr(kind, "nav")) {
        ut_str url = map_str(rec, "url"), title = map_str(rec, "title");
        ut_buf_printf(out, "navigate %.*s \"%.*s\"", (int)url.len, url.ptr, (int)title.len, title.ptr);
    } else if (ut_str_eq_cstr(kind, "dialog")) {
        bool open = ut_str_eq_cstr(map_str(rec, "state"), "open");
        ut_buf_printf(out, "%s [%.*s] \"%.*s\" \xE2\x80\x94 it showed: %.*s", open ? "opened" : "closed",
                      (int)role.len, role.ptr, (int)name.len, name.ptr, (int)text.len, text.ptr);
    } else {
        ut_buf_printf(out, "%.*s \"%.*s\"", (int)role.len, role.ptr, (int)text.len, text.ptr);
    }
    ut_buf_append_cstr(out, "\n");
}

static void format_redis_trace(conn *c, const redisReply *reply)
{
    if (reply->type != REDIS_REPLY_ARRAY)
        die("LRANGE answered something other than an array (type %d)", reply->type);
    ut_buf_reset(&c->body);
    ut_buf_append_cstr(&c->body, "RECENT USER ACTIONS (newest first):\n");
    for (size_t i = 0; i < reply->elements; i++) {
        const redisReply *item = reply->element[i];
        size_t off = 0;
        if (item->type != REDIS_REPLY_STRING ||
            msgpack_unpack_next(&c->unpacked, item->str, item->len, &off) != MSGPACK_UNPACK_SUCCESS)
            die("Redis holds a value that is not a msgpack entry");
        format_entry(&c->body, &c->unpacked.data);
    }
    check_buf(&c->body);
    c->b->bytes_read_back += c->body.len;
}

static void read_redis(conn *c, const char *data, size_t len)
{
    if (redisReaderFeed(c->redis_reader, data, len) != REDIS_OK)
        die("hiredis reader: %s", c->redis_reader->errstr);
    for (;;) {
        void *reply = NULL;
        if (redisReaderGetReply(c->redis_reader, &reply) != REDIS_OK)
            die("Redis sent a malformed reply: %s", c->redis_reader->errstr);
        if (!reply)
            return;
        const redisReply *r = reply;
        if (r->type == REDIS_REPLY_ERROR)
            die("Redis answered an error: %s", r->str);
        if (c->b->o.phase == PHASE_READ)
            format_redis_trace(c, r);
        freeReplyObject(reply);
        on_reply(c);
    }
}

static void read_acks(conn *c, const char *data, size_t len)
{
    if (!msgpack_unpacker_reserve_buffer(&c->unpacker, len))
        die("out of memory reading acks");
    memcpy(msgpack_unpacker_buffer(&c->unpacker), data, len);
    msgpack_unpacker_buffer_consumed(&c->unpacker, len);
    msgpack_unpack_return ret;
    while ((ret = msgpack_unpacker_next(&c->unpacker, &c->unpacked)) == MSGPACK_UNPACK_SUCCESS) {
        if (!map_get(&c->unpacked.data, "ack"))
            die("uitraild sent something other than an ack on ingest.sock");
        on_reply(c);
    }
    if (ret != MSGPACK_UNPACK_CONTINUE)
        die("uitraild sent malformed msgpack on ingest.sock");
}

static int on_http_body(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    ut_buf_append(&c->body, at, len);
    return 0;
}

static int on_http_complete(http_parser *p)
{
    conn *c = p->data;
    if (p->status_code != 200)
        die("GET trace answered %u: %.*s", p->status_code, (int)c->body.len, c->body.data ? c->body.data : "");
    check_buf(&c->body);
    c->b->bytes_read_back += c->body.len;
    ut_buf_reset(&c->body);
    on_reply(c);
    return 0;
}

static void read_http(conn *c, const char *data, size_t len)
{
    size_t used = http_parser_execute(&c->http, &c->b->http_settings, data, len);
    if (HTTP_PARSER_ERRNO(&c->http) != HPE_OK || used != len)
        die("malformed HTTP response: %s", http_errno_description(HTTP_PARSER_ERRNO(&c->http)));
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    conn *c = h->data;
    *buf = uv_buf_init(c->read_buf, sizeof c->read_buf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    conn *c = s->data;
    if (n == 0)
        return;
    if (n < 0) {
        if (c->next_done == c->n_req)
            return;
        die("connection %u to %s: %s after %" PRIu64 " of %" PRIu64 " requests", c->index,
            c->b->o.socket_path, uv_strerror((int)n), c->next_done, c->n_req);
    }
    if (c->b->o.target == TARGET_REDIS)
        read_redis(c, buf->base, (size_t)n);
    else if (c->b->o.phase == PHASE_INGEST)
        read_acks(c, buf->base, (size_t)n);
    else
        read_http(c, buf->base, (size_t)n);
}

/* ---- Connections ---- */

static void start_all(bench *b)
{
    b->start_ns = now_ns();
    for (uint32_t i = 0; i < b->o.conns; i++) {
        conn *c = &b->conns[i];
        skip_unanswered(c);
        int rc = uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
        if (rc < 0)
            die("cannot read from %s: %s", b->o.socket_path, uv_strerror(rc));
        if (c->n_req == 0)
            conn_finished(b);
        send_more(c);
    }
}

static void on_connected(uv_connect_t *req, int status)
{
    conn *c = req->data;
    if (status < 0)
        die("cannot connect to %s: %s", c->b->o.socket_path, uv_strerror(status));
    if (++c->b->connected == c->b->o.conns)
        start_all(c->b);
}

static void conn_init(bench *b, conn *c, uint32_t index)
{
    const options *o = &b->o;
    c->b = b;
    c->index = index;
    c->out = UT_BUF_INIT;
    c->body = UT_BUF_INIT;
    c->tabs_here = (o->tabs - index + o->conns - 1) / o->conns;
    c->rng = 0x9E3779B97F4A7C15u ^ index;
    if (o->phase == PHASE_INGEST) {
        c->n_req = (uint64_t)c->tabs_here * o->steps_per_tab;
    } else {
        c->n_req = o->reads / o->conns + (index < o->reads % o->conns);
        c->sent_ns = ut_calloc(c->n_req ? c->n_req : 1, sizeof *c->sent_ns);
        if (!c->sent_ns)
            die("out of memory");
    }
    uint64_t batch = o->fill && c->n_req > FILL_BATCH_REQUESTS ? FILL_BATCH_REQUESTS : c->n_req;
    c->offs = ut_calloc(batch + 1, sizeof *c->offs);
    if (!c->offs)
        die("out of memory");
    /* Every request of a timed run is encoded before the clock starts. */
    encode_batch(c, 0, batch);

    if (o->target == TARGET_REDIS) {
        c->redis_reader = redisReaderCreate();
        if (!c->redis_reader)
            die("out of memory");
    } else if (o->phase == PHASE_INGEST) {
        if (!msgpack_unpacker_init(&c->unpacker, 4096))
            die("out of memory");
    } else {
        http_parser_init(&c->http, HTTP_RESPONSE);
        c->http.data = c;
    }
    msgpack_unpacked_init(&c->unpacked);

    uv_pipe_init(&b->loop, &c->pipe, 0);
    c->pipe.data = c;
    c->connect_req.data = c;
    uv_pipe_connect(&c->connect_req, &c->pipe, o->socket_path, on_connected);
}

static void conn_close_cb(uv_handle_t *h)
{
    conn *c = h->data;
    ut_buf_free(&c->out);
    ut_buf_free(&c->body);
    ut_free(c->offs);
    ut_free(c->sent_ns);
    if (c->redis_reader)
        redisReaderFree(c->redis_reader);
    else if (c->b->o.target == TARGET_UITRAIL && c->b->o.phase == PHASE_INGEST)
        msgpack_unpacker_destroy(&c->unpacker);
    msgpack_unpacked_destroy(&c->unpacked);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double percentile_us(const uint64_t *sorted, uint64_t n, double p)
{
    if (n == 0)
        return 0;
    uint64_t i = (uint64_t)(p * (double)(n - 1) + 0.5);
    return (double)sorted[i] / 1000.0;
}

/* ---- Command line ---- */

static void usage(FILE *f)
{
    fputs("Usage: bench_client --target uitrail|redis --phase ingest|read --socket PATH [OPTION]...\n"
          "Drives uitraild (ingest.sock for ingest, http.sock for reads) or Redis with the\n"
          "synthetic workload and prints name=value results.\n\n"
          "  --conns N          connections (default 1)\n"
          "  --tabs N           tabs (default 1000)\n"
          "  --steps N          ingest: events per tab (default 100)\n"
          "  --first-step N     ingest: the step of each tab's script to start at (default 0)\n"
          "  --reads N          read: trace reads over all connections (default 10000)\n"
          "  --depth N          requests in flight per connection, 0 for all (default 1)\n"
          "  --ack-every N      uitrail pipelined ingest: an ack every N entries (a relay; default: the last)\n"
          "  --fill             encode while sending (large memory runs)\n",
          f);
}

static uint32_t parse_u32(const char *name, const char *s, uint32_t min, uint32_t max)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max) {
        fprintf(stderr, "bench_client: %s must be a whole number from %u to %u, not '%s'\n", name, min, max, s);
        exit(2);
    }
    return (uint32_t)v;
}

static void parse_options(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"target", required_argument, NULL, 't'}, {"phase", required_argument, NULL, 'p'},
        {"socket", required_argument, NULL, 's'}, {"conns", required_argument, NULL, 'c'},
        {"tabs", required_argument, NULL, 'n'},   {"steps", required_argument, NULL, 'e'},
        {"first-step", required_argument, NULL, 'f'}, {"reads", required_argument, NULL, 'r'},
        {"depth", required_argument, NULL, 'd'},  {"fill", no_argument, NULL, 'F'},
        {"ack-every", required_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    *o = (options){.conns = 1, .tabs = 1000, .steps_per_tab = 100, .reads = 10000, .depth = 1};
    bool have_target = false, have_phase = false;
    int ch;
    while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (ch) {
        case 't':
            have_target = true;
            if (strcmp(optarg, "uitrail") == 0)
                o->target = TARGET_UITRAIL;
            else if (strcmp(optarg, "redis") == 0)
                o->target = TARGET_REDIS;
            else
                have_target = false;
            break;
        case 'p':
            have_phase = true;
            if (strcmp(optarg, "ingest") == 0)
                o->phase = PHASE_INGEST;
            else if (strcmp(optarg, "read") == 0)
                o->phase = PHASE_READ;
            else
                have_phase = false;
            break;
        case 's': o->socket_path = optarg; break;
        case 'c': o->conns = parse_u32("--conns", optarg, 1, CONNS_MAX); break;
        case 'n': o->tabs = parse_u32("--tabs", optarg, 1, UT_TABS_MAX); break;
        case 'e': o->steps_per_tab = parse_u32("--steps", optarg, 1, 1000000); break;
        case 'f': o->first_step = parse_u32("--first-step", optarg, 0, 1000000000); break;
        case 'r': o->reads = parse_u32("--reads", optarg, 1, 100000000); break;
        case 'd': o->depth = parse_u32("--depth", optarg, 0, 1000000); break;
        case 'F': o->fill = true; break;
        case 'a': o->ack_every = parse_u32("--ack-every", optarg, 1, 1000000); break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (!have_target || !have_phase || !o->socket_path || optind != argc) {
        fputs("bench_client: --target uitrail|redis, --phase ingest|read and --socket PATH are needed\n", stderr);
        usage(stderr);
        exit(2);
    }
    if (o->conns > o->tabs) {
        fputs("bench_client: --conns must not exceed --tabs: each connection owns its tabs\n", stderr);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    bench b = {0};
    parse_options(argc, argv, &b.o);
    b.http_settings.on_body = on_http_body;
    b.http_settings.on_message_complete = on_http_complete;
    if (b.o.phase == PHASE_READ) {
        b.latencies = ut_calloc(b.o.reads, sizeof *b.latencies);
        if (!b.latencies)
            die("out of memory");
    }
    b.conns = ut_calloc(b.o.conns, sizeof *b.conns);
    if (!b.conns || uv_loop_init(&b.loop) != 0)
        die("out of memory");
    for (uint32_t i = 0; i < b.o.conns; i++)
        conn_init(&b, &b.conns[i], i);
    uv_run(&b.loop, UV_RUN_DEFAULT);
    if (b.finished != b.o.conns)
        die("the loop ended before every reply came in");

    double seconds = (double)(b.end_ns - b.start_ns) / 1e9;
    if (b.o.phase == PHASE_INGEST) {
        uint64_t events = 0;
        for (uint32_t i = 0; i < b.o.conns; i++)
            events += b.conns[i].n_req;
        printf("events=%" PRIu64 " seconds=%.4f rate=%.0f\n", events, seconds, (double)events / seconds);
    } else {
        qsort(b.latencies, b.n_latencies, sizeof *b.latencies, cmp_u64);
        printf("reads=%" PRIu64 " seconds=%.4f rate=%.0f p50_us=%.1f p99_us=%.1f trace_bytes=%.0f\n",
               b.n_latencies, seconds, (double)b.n_latencies / seconds,
               percentile_us(b.latencies, b.n_latencies, 0.50),
               percentile_us(b.latencies, b.n_latencies, 0.99),
               (double)b.bytes_read_back / (double)(b.n_latencies ? b.n_latencies : 1));
    }

    for (uint32_t i = 0; i < b.o.conns; i++)
        uv_close((uv_handle_t *)&b.conns[i].pipe, conn_close_cb);
    uv_run(&b.loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&b.loop) != 0)
        die("a handle was left open");
    ut_free(b.conns);
    ut_free(b.latencies);
    return 0;
}

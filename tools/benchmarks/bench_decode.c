/* bench_decode: what it costs to get from Forward bytes to values a
 * validator can read, three ways, on the stream `bench_core ingest` sends
 * (the workload of workload.c over 1 000 tabs, one Message-mode message
 * [tag, EventTime, record] per event, packed by ut_wire_pack_event):
 *
 *   bench_decode prescan  [EVENTS]  what uitraild does now: the header
 *                                   pre-scan (ut__scan_run) then msgpack-c's
 *                                   unpacker, per message, as forward.c does
 *   bench_decode prescan-walk [EVENTS]
 *                                   the same, then a walk of the msgpack_object
 *                                   tree touching every value
 *   bench_decode msgpuck  [EVENTS]  msgpuck: mp_check bounds each message,
 *                                   then mp_decode_* walks every value
 *   bench_decode scan-msgpuck [EVENTS]
 *                                   the pre-scan (incremental, with the limits
 *                                   of limits.h) in place of mp_check, then
 *                                   the same msgpuck walk
 *   bench_decode mpack    [EVENTS]  libmpack: mpack_read walks every token,
 *                                   counting containers to find each
 *                                   message's end
 *
 * Each way runs in its own out-of-line function (decode_prescan, ...) so
 * that callgrind counts it alone:
 *   valgrind --tool=callgrind --toggle-collect=decode_msgpuck bench_decode msgpuck
 * Instruction counts do not depend on the machine's load; the program also
 * prints the checksum of the values it touched, which is the same for every
 * way (so none of them skips work the others do).
 *
 * "Touching" a value is what validation needs of it: a string's pointer
 * and length, an integer's value, an ext's type and payload. Reading a
 * string's bytes (comparing keys, cleaning text) costs the same after any
 * of the three, so it is left out. Built only when msgpuck and libmpack are
 * installed; never part of the test suite. */
#include "workload.h"
#include "wire_internal.h"

#include "uitrail/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpack.h>
#include <msgpack.h>
#include <msgpuck.h>

#define TABS 1000
#define FEED_BYTES (64u << 10) /* one socket read of the daemon, as bench_core ingest feeds */

/* forward.c's limits for a top-level message (its message_limits). */
static const ut__scan_limits message_limits = {
    .frame_max_bytes = UT_FRAME_MAX_BYTES,
    .bound_name = "the frame limit",
    .root_name = "Forward message",
    .root_min_elements = 2,
    .root_max_elements = 4,
    .allow_nil_root = true,
    .allow_large_body = true,
};

static void die(const char *what)
{
    fprintf(stderr, "bench_decode: %s\n", what);
    exit(1);
}

/* The checksum every way adds each touched value to. */
static uint64_t touch_str(uint64_t sum, const char *p, uint32_t len)
{
    return sum + len + (len ? (uint8_t)p[0] : 0);
}

static uint64_t walk_object(const msgpack_object *o, uint64_t sum)
{
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        return sum + o->via.u64;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        return sum + (uint64_t)o->via.i64;
    case MSGPACK_OBJECT_BOOLEAN:
        return sum + o->via.boolean;
    case MSGPACK_OBJECT_STR:
        return touch_str(sum, o->via.str.ptr, o->via.str.size);
    case MSGPACK_OBJECT_BIN:
        return touch_str(sum, o->via.bin.ptr, o->via.bin.size);
    case MSGPACK_OBJECT_EXT:
        return touch_str(sum + (uint8_t)o->via.ext.type, o->via.ext.ptr, o->via.ext.size);
    case MSGPACK_OBJECT_ARRAY:
        for (uint32_t i = 0; i < o->via.array.size; i++)
            sum = walk_object(&o->via.array.ptr[i], sum);
        return sum;
    case MSGPACK_OBJECT_MAP:
        for (uint32_t i = 0; i < o->via.map.size; i++)
            sum = walk_object(&o->via.map.ptr[i].val, walk_object(&o->via.map.ptr[i].key, sum));
        return sum;
    default:
        return sum;
    }
}

/* forward.c's drain without the dispatch: each message pre-scanned, then
 * unpacked by msgpack-c into the unpacker's zone, which is cleared after
 * it. With `walk`, the object tree is walked as validation walks it. */
__attribute__((noinline)) static uint64_t decode_prescan(const ut_buf *stream, bool walk, uint64_t *messages)
{
    msgpack_unpacker u;
    if (!msgpack_unpacker_init(&u, UT__DECODER_INITIAL_BYTES))
        die("out of memory");
    ut__scan scan;
    ut__scan_reset(&scan);
    uint64_t sum = 0;
    for (size_t off = 0; off < stream->len; off += FEED_BYTES) {
        size_t step = stream->len - off < FEED_BYTES ? stream->len - off : FEED_BYTES;
        if (!msgpack_unpacker_reserve_buffer(&u, step))
            die("out of memory");
        memcpy(msgpack_unpacker_buffer(&u), stream->data + off, step);
        msgpack_unpacker_buffer_consumed(&u, step);
        for (;;) {
            ut__scan_result r = ut__scan_run(&scan, &message_limits, (const uint8_t *)u.buffer + u.off,
                                             u.used - u.off);
            if (r == UT__SCAN_NEED_MORE)
                break;
            if (r == UT__SCAN_INVALID)
                die(scan.error);
            if (msgpack_unpacker_execute(&u) <= 0)
                die("msgpack-c rejected a message the scan accepted");
            msgpack_object root = msgpack_unpacker_data(&u);
            if (walk)
                sum = walk_object(&root, sum);
            if (!msgpack_unpacker_flush_zone(&u))
                die("out of memory");
            msgpack_zone_clear(u.z);
            msgpack_unpacker_reset(&u);
            ut__scan_reset(&scan);
            ++*messages;
        }
    }
    msgpack_unpacker_destroy(&u);
    return sum;
}

/* One value at *p, already bounded by mp_check, every value touched. */
static uint64_t walk_msgpuck(const char **p, uint32_t depth, uint64_t sum)
{
    uint32_t n, len;
    const char *s;
    if (depth > UT_WIRE_DEPTH_MAX)
        die("msgpuck: nesting over the limit");
    switch (mp_typeof(**p)) {
    case MP_UINT:
        return sum + mp_decode_uint(p);
    case MP_INT:
        return sum + (uint64_t)mp_decode_int(p);
    case MP_BOOL:
        return sum + mp_decode_bool(p);
    case MP_STR:
        s = mp_decode_str(p, &len);
        return touch_str(sum, s, len);
    case MP_BIN:
        s = mp_decode_bin(p, &len);
        return touch_str(sum, s, len);
    case MP_ARRAY:
        n = mp_decode_array(p);
        for (uint32_t i = 0; i < n; i++)
            sum = walk_msgpuck(p, depth + 1, sum);
        return sum;
    case MP_MAP:
        n = mp_decode_map(p);
        for (uint32_t i = 0; i < 2 * n; i++)
            sum = walk_msgpuck(p, depth + 1, sum);
        return sum;
    case MP_EXT:
        /* msgpuck 1.0.3 has no ext decoder: the Forward EventTime is a
         * fixext 8 (0xd7, type, 8 bytes), read by hand; any other ext is
         * skipped whole. */
        if ((uint8_t)**p == 0xd7) {
            sum = touch_str(sum + (uint8_t)(*p)[1], *p + 2, 8);
            *p += 10;
            return sum;
        }
        mp_next(p);
        return sum;
    default:
        mp_next(p);
        return sum;
    }
}

__attribute__((noinline)) static uint64_t decode_msgpuck(const ut_buf *stream, uint64_t *messages)
{
    const char *p = (const char *)stream->data, *end = p + stream->len;
    uint64_t sum = 0;
    while (p < end) {
        const char *check = p;
        if (mp_check(&check, end) != 0)
            die("msgpuck: mp_check rejected a message");
        sum = walk_msgpuck(&p, 0, sum);
        if (p != check)
            die("msgpuck: the walk and mp_check disagree on a message's end");
        ++*messages;
    }
    return sum;
}

/* mp_check is not resumable (fed a growing prefix it starts again from
 * the message's first byte) and checks no limit, so a daemon would keep
 * the pre-scan for framing and limits and walk with msgpuck after it. The
 * whole stream is in memory here, so no message is ever incomplete. */
__attribute__((noinline)) static uint64_t decode_scan_msgpuck(const ut_buf *stream, uint64_t *messages)
{
    const char *p = (const char *)stream->data, *end = p + stream->len;
    ut__scan scan;
    uint64_t sum = 0;
    while (p < end) {
        ut__scan_reset(&scan);
        if (ut__scan_run(&scan, &message_limits, (const uint8_t *)p, (size_t)(end - p)) != UT__SCAN_COMPLETE)
            die("the pre-scan rejected a message");
        const char *message_end = p + scan.pos;
        sum = walk_msgpuck(&p, 0, sum);
        if (p != message_end)
            die("msgpuck: the walk and the pre-scan disagree on a message's end");
        ++*messages;
    }
    return sum;
}

/* Tokens to the end of each message: a stack of values still due in each
 * open container, as a decoder needs to know where a message ends. A str,
 * bin or ext token is followed by one chunk token with its bytes (the
 * whole stream is in memory, so the chunk is never split). */
__attribute__((noinline)) static uint64_t decode_mpack(const ut_buf *stream, uint64_t *messages)
{
    mpack_tokbuf_t tb = MPACK_TOKBUF_INITIAL_VALUE;
    const char *p = (const char *)stream->data;
    size_t left = stream->len;
    uint32_t due[UT_WIRE_DEPTH_MAX + 2];
    uint32_t depth = 0;
    int ext_type = 0;
    uint64_t sum = 0;
    while (left > 0) {
        mpack_token_t t;
        if (mpack_read(&tb, &p, &left, &t) != MPACK_OK)
            die("libmpack: mpack_read failed inside the stream");
        bool value = true; /* the token completes a value (chunks end str/bin/ext) */
        switch (t.type) {
        case MPACK_TOKEN_UINT:
            sum += mpack_unpack_uint(t);
            break;
        case MPACK_TOKEN_SINT:
            sum += (uint64_t)mpack_unpack_sint(t);
            break;
        case MPACK_TOKEN_BOOLEAN:
            sum += mpack_unpack_boolean(t);
            break;
        case MPACK_TOKEN_STR:
        case MPACK_TOKEN_BIN:
        case MPACK_TOKEN_EXT:
            if (t.type == MPACK_TOKEN_EXT)
                ext_type = t.data.ext_type;
            value = t.length == 0;
            if (value)
                sum += ext_type;
            break;
        case MPACK_TOKEN_CHUNK:
            sum = touch_str(sum + (uint8_t)ext_type, t.data.chunk_ptr, t.length);
            ext_type = 0;
            break;
        case MPACK_TOKEN_ARRAY:
        case MPACK_TOKEN_MAP:
            if (t.length > 0) {
                if (depth > UT_WIRE_DEPTH_MAX)
                    die("libmpack: nesting over the limit");
                due[depth++] = t.type == MPACK_TOKEN_MAP ? 2 * t.length : t.length;
                value = false;
            }
            break;
        default:
            break;
        }
        /* A completed value closes every container it was the last of. */
        while (value) {
            if (depth == 0) {
                ++*messages;
                break;
            }
            if (--due[depth - 1] > 0)
                break;
            depth--;
        }
    }
    if (depth != 0)
        die("libmpack: the stream ends inside a message");
    return sum;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    uint32_t events = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 20000;
    if (events == 0)
        die("EVENTS must be at least 1");

    /* bench_core ingest's stream, event for event. */
    ut_buf stream = UT_BUF_INIT;
    for (uint32_t i = 0; i < events; i++) {
        ut__bench_event be;
        ut__bench_event_make(&be, i % TABS, i / TABS);
        if (ut_wire_pack_event(&be.ev, false, &stream) != UT_OK)
            die("packing the stream");
    }

    uint64_t messages = 0, sum;
    if (strcmp(what, "prescan") == 0)
        sum = decode_prescan(&stream, false, &messages);
    else if (strcmp(what, "prescan-walk") == 0)
        sum = decode_prescan(&stream, true, &messages);
    else if (strcmp(what, "msgpuck") == 0)
        sum = decode_msgpuck(&stream, &messages);
    else if (strcmp(what, "scan-msgpuck") == 0)
        sum = decode_scan_msgpuck(&stream, &messages);
    else if (strcmp(what, "mpack") == 0)
        sum = decode_mpack(&stream, &messages);
    else {
        fputs("Usage: bench_decode prescan|prescan-walk|msgpuck|scan-msgpuck|mpack [EVENTS]\n", stderr);
        return 2;
    }
    if (messages != events) {
        fprintf(stderr, "bench_decode: %" PRIu64 " messages decoded of %u\n", messages, events);
        return 1;
    }
    printf("decode=%s events=%u stream_bytes_per_event=%.0f checksum=%" PRIu64 "\n", what, events,
           (double)stream.len / events, sum);
    ut_buf_free(&stream);
    return 0;
}

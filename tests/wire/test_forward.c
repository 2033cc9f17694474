/* The Forward decoder: every mode, chunked and truncated input, hostile
 * headers, every wire limit, error ordering and out-of-memory. */
#include "wire_test_util.h"
#include "uitrail/limits.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define T0 1718000000u

/* Converts a string of hex digits (spaces allowed) into bytes. */
static size_t from_hex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = hex; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        unsigned v;
        assert_true(sscanf(p, "%2x", &v) == 1);
        assert_true(n < cap);
        out[n++] = (uint8_t)v;
        p += 2;
    }
    return n;
}

/* A stream of every mode, with the byte offset of each message's end. */
typedef struct mixed_stream {
    ut_buf bytes;
    size_t ends[16];
    size_t nmessages;
} mixed_stream;

static void mark_end(mixed_stream *s)
{
    s->ends[s->nmessages++] = s->bytes.len;
}

static void pack_click_record(msgpack_packer *pk, const char *tab, const char *el)
{
    msgpack_pack_map(pk, 4);
    wt_pack_cstr(pk, "tab"); wt_pack_cstr(pk, tab);
    wt_pack_cstr(pk, "role"); wt_pack_cstr(pk, "button");
    wt_pack_cstr(pk, "name"); wt_pack_cstr(pk, "Save");
    wt_pack_cstr(pk, "el"); wt_pack_cstr(pk, el);
}

static void build_mixed(mixed_stream *s)
{
    msgpack_packer pk;
    ut_buf body = UT_BUF_INIT;
    *s = (mixed_stream){.bytes = UT_BUF_INIT};
    wt_packer(&pk, &s->bytes);

    /* Message mode, EventTime, option.chunk. */
    msgpack_pack_array(&pk, 4);
    wt_pack_cstr(&pk, "uitrail.click");
    wt_pack_event_time(&pk, T0, 123456789);
    pack_click_record(&pk, "t1", "b1");
    msgpack_pack_map(&pk, 1);
    wt_pack_cstr(&pk, "chunk"); wt_pack_cstr(&pk, "c1");
    mark_end(s);
    /* A heartbeat. */
    msgpack_pack_nil(&pk);
    mark_end(s);
    /* Forward mode with integer and float times. */
    wt_json("[\"uitrail.nav\", [[1718000001, {\"tab\":\"t2\",\"url\":\"/a\",\"title\":\"A\",\"how\":\"load\"}],"
            " [1718000002.5, {\"tab\":\"t2\",\"url\":\"/b\",\"how\":\"push\",\"tz\":-300}]], {\"chunk\":\"c2\"}]",
            &s->bytes);
    mark_end(s);
    /* PackedForward in a bin, compressed "text" (uncompressed). */
    /* An array of arrays converts to them back to back: a packed body. */
    wt_json("[[1718000003, {\"tab\":\"t1\",\"role\":\"alert\",\"text\":\"Saved\",\"level\":\"info\"}],"
            " [1718000004, {\"tab\":\"t1\",\"role\":\"status\",\"text\":\"Busy\"}]]", &body);
    msgpack_pack_array(&pk, 3);
    wt_pack_cstr(&pk, "uitrail.alert");
    msgpack_pack_bin_with_body(&pk, body.data, body.len);
    msgpack_pack_map(&pk, 1);
    wt_pack_cstr(&pk, "compressed"); wt_pack_cstr(&pk, "text");
    mark_end(s);
    /* PackedForward in a str. */
    ut_buf_reset(&body);
    wt_json("[[1718000005, {\"tab\":\"t2\"}]]", &body);
    msgpack_pack_array(&pk, 2);
    wt_pack_cstr(&pk, "uitrail.close");
    msgpack_pack_str_with_body(&pk, body.data, body.len);
    mark_end(s);
    /* A foreign tag, a recording header, an unknown kind, a bad record. */
    wt_json("[\"app.log\", 1718000006, {\"msg\":\"x\"}, {\"chunk\":\"c3\"}]", &s->bytes);
    mark_end(s);
    wt_json("[\"uitrail.meta\", 1718000006, {\"format\":\"uitrail-recording\",\"version\":1}]", &s->bytes);
    mark_end(s);
    wt_json("[\"uitrail.scroll\", 1718000007, {\"tab\":\"t1\"}]", &s->bytes);
    mark_end(s);
    wt_json("[\"uitrail.click\", 1718000008, {\"tab\":\"t1\",\"role\":\"button\"}]", &s->bytes);
    mark_end(s);
    wt_json("[\"uitrail.click\", 1718000009, {\"tab\":\"t1\",\"role\":\"link\",\"name\":\"Home\",\"el\":\"a1\",\"seq\":7}]",
            &s->bytes);
    mark_end(s);
    ut_buf_free(&body);
}

static const char *const mixed_expected =
    "event click t=1718000000123456 rt=0 tab=\"t1\" role=\"button\" name=\"Save\" el=\"b1\" sens=0 state=0/0\n"
    "ack c1\n"
    "event nav t=1718000001000000 rt=0 tab=\"t2\" url=\"/a\" title=\"A\" how=0\n"
    "event nav t=1718000002500000 rt=0 tab=\"t2\" url=\"/b\" title=\"\" how=2 tz=-300\n"
    "ack c2\n"
    "event alert t=1718000003000000 rt=0 tab=\"t1\" role=\"alert\" text=\"Saved\" level=3\n"
    "event alert t=1718000004000000 rt=0 tab=\"t1\" role=\"status\" text=\"Busy\" level=0\n"
    "event close t=1718000005000000 rt=0 tab=\"t2\"\n"
    "ignored app.log\n"
    "ack c3\n"
    "ignored uitrail.meta\n"
    "reject unknown_kind: uitrail.scroll: unknown kind; known kinds are nav, click, change, alert, dialog, mutation, close, unload, app, invalid\n"
    "reject missing_field: uitrail.click: field \"name\" is missing\n"
    "event click t=1718000009000000 rt=0 tab=\"t1\" seq=7 role=\"link\" name=\"Home\" el=\"a1\" sens=0 state=0/0\n";

static void test_forward_every_mode(void **state)
{
    (void)state;
    mixed_stream s;
    wt_log log;
    build_mixed(&s);
    wt_log_init(&log);
    assert_int_equal(wt_decode(s.bytes.data, s.bytes.len, 0, &log, NULL, 0, NULL), UT_OK);
    assert_string_equal(log.text.data, mixed_expected);
    assert_int_equal(log.events, 7);
    assert_int_equal(log.acks, 3);
    wt_log_free(&log);
    ut_buf_free(&s.bytes);
}

static void test_forward_chunked_feeding_gives_same_events(void **state)
{
    (void)state;
    static const size_t steps[] = {1, 2, 3, 7, 64, 1000};
    mixed_stream s;
    build_mixed(&s);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        wt_log log;
        wt_log_init(&log);
        assert_int_equal(wt_decode(s.bytes.data, s.bytes.len, steps[i], &log, NULL, 0, NULL), UT_OK);
        assert_string_equal(log.text.data, mixed_expected);
        wt_log_free(&log);
    }
    ut_buf_free(&s.bytes);
}

static void test_forward_truncation_is_pending_not_error(void **state)
{
    (void)state;
    mixed_stream s;
    build_mixed(&s);
    for (size_t cut = 0; cut < s.bytes.len; cut++) {
        ut_fwd_decoder *d;
        wt_log log;
        wt_log_init(&log);
        ut_fwd_sink sink = wt_log_sink(&log);
        assert_int_equal(ut_fwd_decoder_new(&d), UT_OK);
        assert_int_equal(ut_fwd_decoder_feed(d, s.bytes.data, cut, &sink), UT_OK);
        size_t boundary = 0;
        for (size_t m = 0; m < s.nmessages && s.ends[m] <= cut; m++)
            boundary = s.ends[m];
        assert_int_equal(ut_fwd_decoder_pending(d), cut - boundary);
        /* What was reported is exactly the reports of the whole messages. */
        assert_true(log.text.len <= strlen(mixed_expected));
        assert_memory_equal(log.text.data ? log.text.data : "", mixed_expected, log.text.len);
        /* The rest of the stream completes it. */
        assert_int_equal(ut_fwd_decoder_feed(d, s.bytes.data + cut, s.bytes.len - cut, &sink), UT_OK);
        assert_string_equal(log.text.data, mixed_expected);
        assert_int_equal(ut_fwd_decoder_pending(d), 0);
        ut_fwd_decoder_free(d);
        wt_log_free(&log);
    }
    ut_buf_free(&s.bytes);
}

/* Hostile and malformed inputs: each is a protocol error at a known
 * offset, detected as soon as its header is complete. */
typedef struct hostile_case {
    const char *name;
    const char *hex;
    const char *error;  /* expected substring of the decoder's error */
    uint64_t offset;
} hostile_case;

static const hostile_case hostile_cases[] = {
    {"array32 of 2^28", "dd 10000000", "array of 268435456 elements exceeds the limit of 4096", 0},
    {"map32 huge in a message", "93 a174 01 df 7fffffff", "map of 2147483647 elements exceeds the limit of 4096", 4},
    {"str32 of 4 GiB", "93 a174 01 db ffffffff", "str of 4294967295 bytes exceeds the limit of 65536", 4},
    {"bin32 body over the frame", "92 a174 c6 00200000", "bin of 2097152 bytes runs past the frame limit of 1048576 bytes", 3},
    {"ext32 over the string limit", "93 a174 c9 00010001 00", "ext of 65537 bytes exceeds the limit of 65536", 3},
    {"root map", "80", "a Forward message must be an array, not a map", 0},
    {"root integer", "01", "must be an array, not a scalar", 0},
    {"root string", "a3 616263", "must be an array, not a string or binary", 0},
    {"root of one element", "91 a174", "has 2..4 elements, not 1", 0},
    {"root of five elements", "95", "has 2..4 elements, not 5", 0},
    {"byte 0xc1", "93 a174 c1", "byte 0xc1 is not valid msgpack", 3},
    {"40 nested arrays",
     "92 a174 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 91 c0",
     "nesting deeper than 8 levels", 10},
    {"integer tag", "93 01 01 80", "tag of a Forward message must be a string, not an integer", 0},
    {"nil tag", "93 c0 01 80", "tag of a Forward message must be a string, not nil", 0},
    {"Message mode of two elements", "92 a174 01", "a Message-mode message is [tag, time, record]", 0},
    {"Forward mode of four elements", "94 a174 90 80 80", "2 or 3 elements, not 4", 0},
    {"Forward entry not a pair", "92 a174 91 91 01", "entry 0 of a Forward message must be [time, record]", 0},
    {"option not a map", "94 a174 01 80 01", "option of a Forward message must be a map, not an integer", 0},
    {"chunk not a string", "94 a174 01 80 81 a5 6368756e6b 01", "option \"chunk\" must be a string", 0},
    {"packed body with 0xc1", "92 a174 c4 01 c1", "PackedForward entry 0: byte 0xc1 is not valid msgpack (body byte 0)", 0},
    {"packed body cut inside an entry", "92 a174 c4 04 92 92 01 01", "PackedForward body ends inside entry 0", 0},
    {"packed entry past the body", "92 a174 c4 02 92 01", "array of 2 elements cannot fit in the rest of the PackedForward body of 2 bytes", 0},
    {"packed entry not an array", "92 a174 c4 01 01", "PackedForward entry 0: a PackedForward entry must be an array, not a scalar", 0},
    {"packed entry of three", "92 a174 c4 04 93 01 80 80", "a PackedForward entry has 2..2 elements, not 3", 0},
    {"packed array32 of 2^28", "92 a174 c4 05 dd 10000000", "array of 268435456 elements exceeds the limit of 4096", 0},
    {"packed count past the body", "92 a174 c4 03 92 01 9f", "cannot fit in the rest of the PackedForward body", 0},
};

static void test_forward_hostile_inputs_are_protocol_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hostile_cases / sizeof hostile_cases[0]; i++) {
        const hostile_case *c = &hostile_cases[i];
        uint8_t bytes[128];
        size_t n = from_hex(c->hex, bytes, sizeof bytes);
        char error[256];
        uint64_t offset = 99;
        wt_log log;
        wt_log_init(&log);
        ut_status st = wt_decode(bytes, n, 0, &log, error, sizeof error, &offset);
        if (st != UT_EPROTO || !strstr(error, c->error) || offset != c->offset)
            fail_msg("%s: status %d, error \"%s\" at %llu; expected \"%s\" at %llu", c->name, st, error,
                     (unsigned long long)offset, c->error, (unsigned long long)c->offset);
        assert_int_equal(log.events, 0);
        wt_log_free(&log);
    }
}

/* Only gzip and "text" are known compressions (test_compressed.c has the
 * gzip cases). */
static void test_forward_compressed_packed_forward_is_refused(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT;
    wt_log log;
    char error[256];
    wt_json("[\"uitrail.click\", \"\", {\"compressed\": \"zstd\"}]", &bytes);
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, error, sizeof error, NULL), UT_EPROTO);
    assert_non_null(strstr(error, "option \"compressed\" must be \"gzip\" or \"text\""));
    wt_log_free(&log);
    ut_buf_free(&bytes);
}

/* A huge count is refused from its header alone: msgpack-c never sees it,
 * so it cannot reserve memory for it. */
static void test_forward_huge_header_refused_before_its_bytes(void **state)
{
    (void)state;
    static const uint8_t header[] = {0x93, 0xa1, 't', 0x01, 0xdd, 0x10, 0x00, 0x00, 0x00};
    ut_fwd_decoder *d;
    wt_log log;
    wt_log_init(&log);
    ut_fwd_sink sink = wt_log_sink(&log);
    assert_int_equal(ut_fwd_decoder_new(&d), UT_OK);
    /* Four of the five header bytes: still valid as far as it goes. */
    assert_int_equal(ut_fwd_decoder_feed(d, header, sizeof header - 1, &sink), UT_OK);
    assert_int_equal(ut_fwd_decoder_feed(d, header + sizeof header - 1, 1, &sink), UT_EPROTO);
    assert_int_equal(ut_fwd_decoder_error_offset(d), 4);
    /* A failed decoder stays failed. */
    assert_int_equal(ut_fwd_decoder_feed(d, "\xc0", 1, &sink), UT_EPROTO);
    ut_fwd_decoder_free(d);
    wt_log_free(&log);
}

static void test_forward_error_after_complete_events_keeps_them(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT;
    wt_log log;
    char error[256];
    uint64_t offset;
    wt_json("[[\"uitrail.close\", 1718000000, {\"tab\":\"a\"}], [\"uitrail.close\", 1718000001, {\"tab\":\"b\"}]]",
            &bytes);
    size_t good = bytes.len;
    ut_buf_append(&bytes, "\x93\xa1t\xc1", 4);
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, error, sizeof error, &offset), UT_EPROTO);
    assert_int_equal(log.events, 2);
    assert_int_equal(offset, good + 3);
    char expected[128];
    snprintf(expected, sizeof expected, "byte 0xc1 is not valid msgpack at offset %zu", good + 3);
    assert_string_equal(error, expected);
    wt_log_free(&log);
    ut_buf_free(&bytes);
}

static void test_forward_bad_time_rejects_the_entry(void **state)
{
    (void)state;
    static const struct {
        const char *hex_time;
    } times[] = {
        {"d6 00 00000001"},             /* ext 0 of 4 bytes */
        {"d7 01 6666a880 00000000"},    /* ext type 1 */
        {"d7 00 6666a880 3b9aca00"},    /* nanoseconds = 1e9 */
        {"ff"},                         /* -1 */
        {"c3"},                         /* true */
        {"cf 0000000100000000"},        /* 2^32 seconds: past EventTime */
        {"cb 7ff8000000000000"},        /* NaN */
        {"c0"},
    };
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        uint8_t bytes[128];
        size_t n = from_hex("93 ad 75697472 61696c2e 636c6f73 65", bytes, sizeof bytes);
        n += from_hex(times[i].hex_time, bytes + n, sizeof bytes - n);
        n += from_hex("81 a3 746162 a1 78", bytes + n, sizeof bytes - n); /* {"tab":"x"} */
        wt_log log;
        wt_log_init(&log);
        char error[256];
        if (wt_decode(bytes, n, 0, &log, error, sizeof error, NULL) != UT_OK)
            fail_msg("time %s: %s", times[i].hex_time, error);
        if (log.rejects != 1 || log.last_reject != UT_REJECT_BAD_TIME)
            fail_msg("time %s: %s", times[i].hex_time, log.text.data ? log.text.data : "(nothing)");
        assert_non_null(strstr(log.text.data, "uitrail.close: time must be an EventTime"));
        wt_log_free(&log);
    }
}

/* Logs each label as "label <tab> <time_us>" into the wt_log in `ud`. */
static void log_label(void *ud, ut_str tab, int64_t time_us)
{
    wt_log *log = ud;
    ut_buf_printf(&log->text, "label %.*s %lld\n", (int)tab.len, tab.ptr, (long long)time_us);
}

/* Decodes `json` with a label hook set (or not), logging into `log`. */
static void decode_labelled(const char *json, bool with_hook, wt_log *log)
{
    ut_buf bytes = UT_BUF_INIT;
    wt_json(json, &bytes);
    ut_fwd_decoder *d;
    assert_int_equal(ut_fwd_decoder_new(&d), UT_OK);
    if (with_hook)
        ut_fwd_decoder_set_label_fn(d, log_label, log);
    ut_fwd_sink sink = wt_log_sink(log);
    assert_int_equal(ut_fwd_decoder_feed(d, bytes.data, bytes.len, &sink), UT_OK);
    ut_fwd_decoder_free(d);
    ut_buf_free(&bytes);
}

static void test_forward_labels(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *expect; /* the whole log with the hook set */
    } cases[] = {
        /* Good labels, in every mode, with unknown keys ignored. */
        {"[\"uitrail.label\", 1718000000.25, {\"tab\":\"t1\",\"settled\":true,\"note\":\"x\"}]",
         "label t1 1718000000250000\n"},
        {"[\"uitrail.label\", [[1718000001, {\"tab\":\"a\",\"settled\":true}],"
         " [1718000002, {\"tab\":\"b\",\"settled\":true}]]]",
         "label a 1718000001000000\nlabel b 1718000002000000\n"},
        /* Labels and events keep their stream order. */
        {"[[\"uitrail.close\", 1718000000, {\"tab\":\"t\"}],"
         " [\"uitrail.label\", 1718000001, {\"tab\":\"t\",\"settled\":true}]]",
         "event close t=1718000000000000 rt=0 tab=\"t\"\nlabel t 1718000001000000\n"},
        /* Not settled: ignored. */
        {"[\"uitrail.label\", 1718000000, {\"tab\":\"t\",\"settled\":false}]", "ignored uitrail.label\n"},
        /* Bad labels are rejected alone. */
        {"[\"uitrail.label\", 1718000000, [\"t\"]]", "reject not_map: uitrail.label: the record must be a map\n"},
        {"[\"uitrail.label\", 1718000000, {\"settled\":true}]",
         "reject missing_field: uitrail.label: field \"tab\" is missing\n"},
        {"[\"uitrail.label\", 1718000000, {\"tab\":\"t\"}]",
         "reject missing_field: uitrail.label: field \"settled\" is missing\n"},
        {"[\"uitrail.label\", 1718000000, {\"tab\":7,\"settled\":true}]",
         "reject wrong_type: uitrail.label: field \"tab\" must be a string\n"},
        {"[\"uitrail.label\", 1718000000, {\"tab\":\"t\",\"settled\":1}]",
         "reject wrong_type: uitrail.label: field \"settled\" must be a boolean\n"},
        {"[\"uitrail.label\", 1718000000, {\"tab\":\"\",\"settled\":true}]",
         "reject bad_value: uitrail.label: field \"tab\" must hold 1 to 128 bytes\n"},
        {"[\"uitrail.label\", -1, {\"tab\":\"t\",\"settled\":true}]",
         "reject bad_time: uitrail.label: time must be an EventTime (ext 0 of 8 bytes) or seconds since the "
         "epoch up to 4294967295, not a negative integer\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wt_log log;
        wt_log_init(&log);
        decode_labelled(cases[i].json, true, &log);
        const char *got = log.text.data ? log.text.data : "";
        if (strcmp(got, cases[i].expect) != 0)
            fail_msg("case %zu: got\n%s\nexpected\n%s", i, got, cases[i].expect);
        wt_log_free(&log);
    }

    /* A tab longer than the limit is rejected like an event's. */
    char json[512];
    snprintf(json, sizeof json, "[\"uitrail.label\", 1718000000, {\"tab\":\"%0*d\",\"settled\":true}]",
             UT_TAB_MAX_BYTES + 1, 0);
    wt_log log;
    wt_log_init(&log);
    decode_labelled(json, true, &log);
    assert_int_equal(log.last_reject, UT_REJECT_BAD_VALUE);
    wt_log_free(&log);

    /* Without a hook a label is ignored, whatever it holds, as before. */
    wt_log_init(&log);
    decode_labelled("[\"uitrail.label\", 1718000000, {\"tab\":\"t\",\"settled\":true}]", false, &log);
    decode_labelled("[\"uitrail.label\", 1718000000, 5]", false, &log);
    assert_string_equal(log.text.data, "ignored uitrail.label\nignored uitrail.label\n");
    wt_log_free(&log);
}

/* One decoder, tags of the same length and last byte (they share a slot of
 * the decoder's route cache) in turn, and a label hook set mid-stream:
 * each message is routed by its own tag, every time. */
static void test_forward_routes_of_similar_tags(void **state)
{
    (void)state;
    static const char *const messages[] = {
        "[\"uitrail.click\", 1718000000, {\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"e\"}]",
        "[\"uitrail.clink\", 1718000001, {\"tab\":\"t\"}]",
        "[\"foreign.tagxk\", 1718000002, {\"tab\":\"t\"}]",
        "[\"uitrail.click\", 1718000003, {\"tab\":\"t\",\"role\":\"link\",\"name\":\"B\",\"el\":\"f\"}]",
        "[\"uitrail.label\", 1718000004, {\"tab\":\"t\",\"settled\":true}]",
        "[\"uitrail.label\", 1718000005, {\"tab\":\"t\",\"settled\":true}]",
    };
    static const char *const expected =
        "event click t=1718000000000000 rt=0 tab=\"t\" role=\"button\" name=\"A\" el=\"e\" sens=0 state=0/0\n"
        "reject unknown_kind: uitrail.clink: unknown kind; known kinds are nav, click, change, alert, dialog, "
        "mutation, close, unload, app, invalid\n"
        "ignored foreign.tagxk\n"
        "event click t=1718000003000000 rt=0 tab=\"t\" role=\"link\" name=\"B\" el=\"f\" sens=0 state=0/0\n"
        "ignored uitrail.label\n"
        "label t 1718000005000000\n";
    wt_log log;
    wt_log_init(&log);
    ut_fwd_decoder *d;
    assert_int_equal(ut_fwd_decoder_new(&d), UT_OK);
    ut_fwd_sink sink = wt_log_sink(&log);
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++) {
        if (i == 5)
            ut_fwd_decoder_set_label_fn(d, log_label, &log);
        ut_buf bytes = UT_BUF_INIT;
        wt_json(messages[i], &bytes);
        assert_int_equal(ut_fwd_decoder_feed(d, bytes.data, bytes.len, &sink), UT_OK);
        ut_buf_free(&bytes);
    }
    assert_string_equal(log.text.data, expected);
    ut_fwd_decoder_free(d);
    wt_log_free(&log);
}

/* A label's tab is cleaned like an event's, so both name the same tab. */
static void test_forward_label_tab_is_cleaned(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT;
    msgpack_packer pk;
    wt_packer(&pk, &bytes);
    msgpack_pack_array(&pk, 3);
    wt_pack_cstr(&pk, "uitrail.label");
    msgpack_pack_uint32(&pk, T0);
    msgpack_pack_map(&pk, 2);
    wt_pack_cstr(&pk, "tab");
    msgpack_pack_str(&pk, 3);
    msgpack_pack_str_body(&pk, "a\xff" "b", 3);
    wt_pack_cstr(&pk, "settled");
    msgpack_pack_true(&pk);
    wt_log log;
    wt_log_init(&log);
    ut_fwd_decoder *d;
    assert_int_equal(ut_fwd_decoder_new(&d), UT_OK);
    ut_fwd_decoder_set_label_fn(d, log_label, &log);
    ut_fwd_sink sink = wt_log_sink(&log);
    assert_int_equal(ut_fwd_decoder_feed(d, bytes.data, bytes.len, &sink), UT_OK);
    assert_string_equal(log.text.data, "label a\xef\xbf\xbd" "b 1718000000000000\n");
    ut_fwd_decoder_free(d);
    wt_log_free(&log);
    ut_buf_free(&bytes);
}

static void test_forward_invalid_utf8_is_replaced(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT;
    msgpack_packer pk;
    wt_packer(&pk, &bytes);
    msgpack_pack_array(&pk, 3);
    wt_pack_cstr(&pk, "uitrail.alert");
    msgpack_pack_uint32(&pk, T0);
    msgpack_pack_map(&pk, 3);
    wt_pack_cstr(&pk, "tab"); msgpack_pack_str_with_body(&pk, "t\xff", 2);
    wt_pack_cstr(&pk, "role"); wt_pack_cstr(&pk, "alert");
    wt_pack_cstr(&pk, "text"); msgpack_pack_str_with_body(&pk, "bad \xc0\xaf end", 10);
    wt_log log;
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, NULL, 0, NULL), UT_OK);
    assert_non_null(strstr(log.text.data, "tab=\"t\xef\xbf\xbd\""));
    assert_non_null(strstr(log.text.data, "text=\"bad \xef\xbf\xbd\xef\xbf\xbd end\""));
    wt_log_free(&log);
    ut_buf_free(&bytes);
}

/* Builds [tag, bin body] where the body is ignored-tag filler entries
 * [0, bin] so that the whole message is exactly `total` bytes. */
static void build_message_of_size(ut_buf *out, size_t total)
{
    static const char tag[] = "app.filler";
    const size_t head = 1 + 1 + (sizeof tag - 1) + 5; /* array, fixstr, tag, bin32 header */
    size_t body = total - head;
    msgpack_packer pk;
    wt_packer(&pk, out);
    msgpack_pack_array(&pk, 2);
    wt_pack_cstr(&pk, tag);
    /* Force a bin32 header whatever the size, so `head` holds. */
    ut_buf_append(out, "\xc6", 1);
    unsigned char len[4] = {(unsigned char)(body >> 24), (unsigned char)(body >> 16), (unsigned char)(body >> 8),
                            (unsigned char)body};
    ut_buf_append(out, len, 4);
    static char filler[UT_WIRE_STR_MAX_BYTES];
    while (body > 0) {
        /* An entry is 92 00 c6 <len32> <payload>: 7 bytes of framing. */
        size_t payload = body - 7 > UT_WIRE_STR_MAX_BYTES ? UT_WIRE_STR_MAX_BYTES : body - 7;
        if (body - 7 - payload > 0 && body - 7 - payload < 7)
            payload -= 7; /* leave room for a whole last entry */
        ut_buf_append(out, "\x92\x00\xc6", 3);
        unsigned char plen[4] = {(unsigned char)(payload >> 24), (unsigned char)(payload >> 16),
                                 (unsigned char)(payload >> 8), (unsigned char)payload};
        ut_buf_append(out, plen, 4);
        ut_buf_append(out, filler, payload);
        body -= 7 + payload;
    }
    assert_int_equal(out->len, total);
}

static void test_forward_frame_limit(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT;
    wt_log log;
    char error[256];

    build_message_of_size(&bytes, UT_FRAME_MAX_BYTES);
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 4096, &log, error, sizeof error, NULL), UT_OK);
    assert_int_equal(log.ignored, 1);
    wt_log_free(&log);

    ut_buf_reset(&bytes);
    build_message_of_size(&bytes, UT_FRAME_MAX_BYTES + 1);
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, error, sizeof error, NULL), UT_EPROTO);
    assert_non_null(strstr(error, "runs past the frame limit of 1048576 bytes"));
    wt_log_free(&log);
    ut_buf_free(&bytes);
}

/* [tag, time, {"tab": "t", "x": <value>}] with the value packed by `fill`. */
static ut_status decode_close_with_extra(void (*fill)(msgpack_packer *, size_t), size_t n, char *error,
                                         size_t errlen, wt_log *log)
{
    ut_buf bytes = UT_BUF_INIT;
    msgpack_packer pk;
    wt_packer(&pk, &bytes);
    msgpack_pack_array(&pk, 3);
    wt_pack_cstr(&pk, "uitrail.close");
    msgpack_pack_uint32(&pk, T0);
    msgpack_pack_map(&pk, 2);
    wt_pack_cstr(&pk, "tab"); wt_pack_cstr(&pk, "t");
    wt_pack_cstr(&pk, "x");
    fill(&pk, n);
    ut_status st = wt_decode(bytes.data, bytes.len, 0, log, error, errlen, NULL);
    ut_buf_free(&bytes);
    return st;
}

static void fill_string(msgpack_packer *pk, size_t n)
{
    char *s = calloc(1, n + 1);
    memset(s, 'a', n);
    msgpack_pack_str_with_body(pk, s, n);
    free(s);
}

static void fill_array(msgpack_packer *pk, size_t n)
{
    msgpack_pack_array(pk, n);
    for (size_t i = 0; i < n; i++)
        msgpack_pack_nil(pk);
}

static void fill_map(msgpack_packer *pk, size_t n)
{
    msgpack_pack_map(pk, n);
    for (size_t i = 0; i < n; i++) {
        msgpack_pack_uint64(pk, i);
        msgpack_pack_nil(pk);
    }
}

/* `n` is the total nesting of the message: root and record are 2. */
static void fill_nested(msgpack_packer *pk, size_t n)
{
    for (size_t i = 2; i < n; i++)
        msgpack_pack_array(pk, 1);
    msgpack_pack_nil(pk);
}

static void test_forward_wire_limits(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        void (*fill)(msgpack_packer *, size_t);
        size_t at_limit;
        const char *error;
    } limits[] = {
        {"string", fill_string, UT_WIRE_STR_MAX_BYTES, "str of 65537 bytes exceeds the limit of 65536"},
        {"array", fill_array, UT_WIRE_CONTAINER_MAX, "array of 4097 elements exceeds the limit of 4096"},
        {"map", fill_map, UT_WIRE_CONTAINER_MAX, "map of 4097 elements exceeds the limit of 4096"},
        {"nesting", fill_nested, UT_WIRE_DEPTH_MAX, "nesting deeper than 8 levels"},
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        char error[256];
        wt_log log;
        wt_log_init(&log);
        if (decode_close_with_extra(limits[i].fill, limits[i].at_limit, error, sizeof error, &log) != UT_OK ||
            log.events != 1)
            fail_msg("%s at its limit: %s", limits[i].name, error);
        wt_log_free(&log);
        wt_log_init(&log);
        assert_int_equal(decode_close_with_extra(limits[i].fill, limits[i].at_limit + 1, error, sizeof error, &log),
                         UT_EPROTO);
        if (!strstr(error, limits[i].error))
            fail_msg("%s over its limit: \"%s\"", limits[i].name, error);
        wt_log_free(&log);
    }
}

static void test_forward_packed_entries_limit(void **state)
{
    (void)state;
    for (size_t n = UT_FORWARD_ENTRIES_MAX; n <= UT_FORWARD_ENTRIES_MAX + 1; n++) {
        ut_buf bytes = UT_BUF_INIT, body = UT_BUF_INIT;
        for (size_t i = 0; i < n; i++)
            ut_buf_append(&body, "\x92\x00\xc0", 3);
        msgpack_packer pk;
        wt_packer(&pk, &bytes);
        msgpack_pack_array(&pk, 2);
        wt_pack_cstr(&pk, "app.x");
        msgpack_pack_bin_with_body(&pk, body.data, body.len);
        char error[256];
        wt_log log;
        wt_log_init(&log);
        ut_status st = wt_decode(bytes.data, bytes.len, 0, &log, error, sizeof error, NULL);
        if (n == UT_FORWARD_ENTRIES_MAX) {
            assert_int_equal(st, UT_OK);
        } else {
            assert_int_equal(st, UT_EPROTO);
            assert_non_null(strstr(error, "PackedForward body holds more than 4096 entries"));
        }
        wt_log_free(&log);
        ut_buf_free(&bytes);
        ut_buf_free(&body);
    }
}

static void test_forward_packed_bad_record_rejected_alone(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT, body = UT_BUF_INIT;
    wt_json("[[1718000000, {\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\"}],"
            " [1718000001, {\"tab\":\"t\",\"role\":7,\"name\":\"B\",\"el\":\"b\"}],"
            " [1718000002, \"not a map\"],"
            " [1718000003, {\"tab\":\"t\",\"role\":\"button\",\"name\":\"C\",\"el\":\"c\"}]]", &body);
    msgpack_packer pk;
    wt_packer(&pk, &bytes);
    msgpack_pack_array(&pk, 3);
    wt_pack_cstr(&pk, "uitrail.click");
    msgpack_pack_bin_with_body(&pk, body.data, body.len);
    msgpack_pack_map(&pk, 1);
    wt_pack_cstr(&pk, "chunk"); wt_pack_cstr(&pk, "k");
    wt_log log;
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, NULL, 0, NULL), UT_OK);
    assert_int_equal(log.events, 2);
    assert_int_equal(log.rejects, 2);
    assert_non_null(strstr(log.text.data,
                           "reject wrong_type: uitrail.click: field \"role\" must be a string, not an integer\n"
                           "reject not_map: uitrail.click: the record must be a map, not a string\n"));
    assert_non_null(strstr(log.text.data, "name=\"C\""));
    assert_non_null(strstr(log.text.data, "\nack k\n"));
    wt_log_free(&log);
    ut_buf_free(&bytes);
    ut_buf_free(&body);
}

/* Many messages in one feed, and one message larger than a feed step. */
static void test_forward_large_inputs(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT, body = UT_BUF_INIT;
    msgpack_packer pk;
    wt_packer(&pk, &bytes);
    for (int i = 0; i < 3000; i++) {
        char el[16];
        snprintf(el, sizeof el, "e%d", i);
        msgpack_pack_array(&pk, 3);
        wt_pack_cstr(&pk, "uitrail.click");
        msgpack_pack_uint32(&pk, T0 + (uint32_t)i);
        pack_click_record(&pk, "t", el);
    }
    msgpack_packer bpk;
    wt_packer(&bpk, &body);
    for (int i = 0; i < 2000; i++) {
        msgpack_pack_array(&bpk, 2);
        msgpack_pack_uint32(&bpk, T0);
        pack_click_record(&bpk, "packed-tab-with-a-longer-name", "element-with-a-longer-key");
    }
    assert_true(body.len > 64 * 1024);
    msgpack_pack_array(&pk, 2);
    wt_pack_cstr(&pk, "uitrail.click");
    msgpack_pack_bin_with_body(&pk, body.data, body.len);

    wt_log log;
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, NULL, 0, NULL), UT_OK);
    assert_int_equal(log.events, 5000);
    assert_non_null(strstr(log.text.data, "el=\"e2999\""));
    wt_log_free(&log);
    ut_buf_free(&bytes);
    ut_buf_free(&body);
}

static void test_forward_sink_error_stops_the_feed(void **state)
{
    (void)state;
    mixed_stream s;
    build_mixed(&s);
    wt_log log;
    wt_log_init(&log);
    log.fail_on_event = UT_ENOMEM;
    assert_int_equal(wt_decode(s.bytes.data, s.bytes.len, 0, &log, NULL, 0, NULL), UT_ENOMEM);
    assert_int_equal(log.acks, 0); /* the message's events were not all delivered */
    wt_log_free(&log);
    ut_buf_free(&s.bytes);
}

static void test_forward_out_of_memory_walk(void **state)
{
    (void)state;
    mixed_stream s;
    build_mixed(&s);
    bool completed = false;
    for (long n = 0; n < 1000 && !completed; n++) {
        wt_log log;
        wt_log_init(&log);
        wt_alloc_fail_after(n);
        ut_status st = wt_decode(s.bytes.data, s.bytes.len, 5, &log, NULL, 0, NULL);
        wt_alloc_restore();
        if (st == UT_OK) {
            assert_string_equal(log.text.data, mixed_expected);
            completed = true;
        } else {
            assert_int_equal(st, UT_ENOMEM);
            assert_memory_equal(log.text.data ? log.text.data : "", mixed_expected, log.text.len);
        }
        wt_log_free(&log);
    }
    assert_true(completed);
    ut_buf_free(&s.bytes);
}

int wt_run_forward_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_every_mode),
        cmocka_unit_test(test_forward_routes_of_similar_tags),
        cmocka_unit_test(test_forward_chunked_feeding_gives_same_events),
        cmocka_unit_test(test_forward_truncation_is_pending_not_error),
        cmocka_unit_test(test_forward_hostile_inputs_are_protocol_errors),
        cmocka_unit_test(test_forward_compressed_packed_forward_is_refused),
        cmocka_unit_test(test_forward_huge_header_refused_before_its_bytes),
        cmocka_unit_test(test_forward_error_after_complete_events_keeps_them),
        cmocka_unit_test(test_forward_bad_time_rejects_the_entry),
        cmocka_unit_test(test_forward_labels),
        cmocka_unit_test(test_forward_label_tab_is_cleaned),
        cmocka_unit_test(test_forward_invalid_utf8_is_replaced),
        cmocka_unit_test(test_forward_frame_limit),
        cmocka_unit_test(test_forward_wire_limits),
        cmocka_unit_test(test_forward_packed_entries_limit),
        cmocka_unit_test(test_forward_packed_bad_record_rejected_alone),
        cmocka_unit_test(test_forward_large_inputs),
        cmocka_unit_test(test_forward_sink_error_stops_the_feed),
        cmocka_unit_test(test_forward_out_of_memory_walk),
    };
    return cmocka_run_group_tests_name("forward", tests, NULL, NULL);
}

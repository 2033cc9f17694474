/* CompressedPackedForward (src/wire/inflate.c and its use in forward.c)
 * and the one tag "uitrail" for every kind: tables of good, hostile and
 * truncated inputs. The gzip bodies are made by zlib itself, as Fluentd's
 * and Fluent Bit's are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include "uitrail/limits.h"
#include "wire_internal.h"
#include "wire_test_util.h"

/* Appends the gzip member of `len` bytes of `data` to `out`. */
static void gzip_append(const void *data, size_t len, ut_buf *out)
{
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t bound = deflateBound(&z, (uLong)len) + 64;
    assert_int_equal(ut_buf_reserve(out, bound), UT_OK);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out->data + out->len;
    z.avail_out = (uInt)bound;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    out->len += bound - z.avail_out;
    deflateEnd(&z);
}

/* Two alerts and a click of tab "t", as a PackedForward body. */
static void packed_body(ut_buf *out)
{
    wt_json("[[1718000001, {\"tab\":\"t\",\"role\":\"alert\",\"text\":\"Saved\"}],"
            " [1718000002, {\"tab\":\"t\",\"role\":\"status\",\"text\":\"Busy\"}]]",
            out);
}

/* [tag, <bin or str body>, {"compressed": how, "chunk": "k"}]. */
static void compressed_message(const char *tag, ut_str body, bool as_str, const char *how, ut_buf *out)
{
    msgpack_packer pk;
    wt_packer(&pk, out);
    msgpack_pack_array(&pk, 3);
    wt_pack_cstr(&pk, tag);
    if (as_str)
        msgpack_pack_str_with_body(&pk, body.ptr, body.len);
    else
        msgpack_pack_bin_with_body(&pk, body.ptr, body.len);
    msgpack_pack_map(&pk, 2);
    wt_pack_cstr(&pk, "compressed");
    wt_pack_cstr(&pk, how);
    wt_pack_cstr(&pk, "chunk");
    wt_pack_cstr(&pk, "k");
}

static const char *const two_alerts =
    "event alert t=1718000001000000 rt=0 tab=\"t\" role=\"alert\" text=\"Saved\" level=0\n"
    "event alert t=1718000002000000 rt=0 tab=\"t\" role=\"status\" text=\"Busy\" level=0\n";

typedef enum body_shape {
    BODY_ONE_MEMBER,
    BODY_TWO_MEMBERS,   /* Fluentd concatenates the members of a chunk */
    BODY_EMPTY_MEMBER,  /* a member of nothing: no entries, still acked */
    BODY_IN_STR,
    BODY_CORRUPT,       /* a byte of the deflate data flipped */
    BODY_CUT_TRAILER,   /* the CRC and size cut off */
    BODY_CUT_HALF,
    BODY_GARBAGE_AFTER, /* a member, then bytes that are not one */
    BODY_NOT_GZIP,
    BODY_EMPTY,
    BODY_BAD_MSGPACK,   /* inflates to bytes that are no PackedForward entry */
    BODY_BOMB,          /* 64 MiB of zeros in well under a frame */
} body_shape;

static void make_body(body_shape shape, ut_buf *out)
{
    ut_buf plain = UT_BUF_INIT;
    packed_body(&plain);
    switch (shape) {
    case BODY_ONE_MEMBER:
    case BODY_IN_STR:
        gzip_append(plain.data, plain.len, out);
        break;
    case BODY_TWO_MEMBERS: {
        /* The first entry in one member, the second in another. */
        ut_buf first = UT_BUF_INIT;
        wt_json("[[1718000001, {\"tab\":\"t\",\"role\":\"alert\",\"text\":\"Saved\"}]]", &first);
        gzip_append(first.data, first.len, out);
        gzip_append(plain.data + first.len, plain.len - first.len, out);
        ut_buf_free(&first);
        break;
    }
    case BODY_EMPTY_MEMBER:
        gzip_append("", 0, out);
        break;
    case BODY_CORRUPT:
        gzip_append(plain.data, plain.len, out);
        out->data[out->len / 2] ^= 0x55;
        break;
    case BODY_CUT_TRAILER:
        gzip_append(plain.data, plain.len, out);
        out->len -= 8;
        break;
    case BODY_CUT_HALF:
        gzip_append(plain.data, plain.len, out);
        out->len /= 2;
        break;
    case BODY_GARBAGE_AFTER:
        gzip_append(plain.data, plain.len, out);
        assert_int_equal(ut_buf_append(out, "garbage!", 8), UT_OK);
        break;
    case BODY_NOT_GZIP:
        assert_int_equal(ut_buf_append(out, plain.data, plain.len), UT_OK);
        break;
    case BODY_EMPTY:
        break;
    case BODY_BAD_MSGPACK:
        gzip_append("\xc1\xc1\xc1", 3, out);
        break;
    case BODY_BOMB: {
        size_t n = 64u << 20;
        char *zeros = calloc(1, n);
        assert_non_null(zeros);
        gzip_append(zeros, n, out);
        free(zeros);
        assert_true(out->len < UT_FRAME_MAX_BYTES / 4);
        break;
    }
    }
    ut_buf_free(&plain);
}

static void test_compressed_table(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        body_shape shape;
        ut_status want;
        const char *log;   /* what the sink saw, for UT_OK */
        const char *error; /* a part of the protocol error, otherwise */
    } cases[] = {
        {"one gzip member", BODY_ONE_MEMBER, UT_OK, NULL, NULL},
        {"two members back to back", BODY_TWO_MEMBERS, UT_OK, NULL, NULL},
        {"a member of nothing", BODY_EMPTY_MEMBER, UT_OK, "ack k\n", NULL},
        {"the body in a str", BODY_IN_STR, UT_OK, NULL, NULL},
        {"corrupt", BODY_CORRUPT, UT_EPROTO, NULL, "CompressedPackedForward: the gzip body"},
        {"trailer cut off", BODY_CUT_TRAILER, UT_EPROTO, NULL, "ends inside a member"},
        {"cut in half", BODY_CUT_HALF, UT_EPROTO, NULL, "ends inside a member"},
        {"garbage after a member", BODY_GARBAGE_AFTER, UT_EPROTO, NULL, "CompressedPackedForward: the gzip body"},
        {"not gzip", BODY_NOT_GZIP, UT_EPROTO, NULL, "CompressedPackedForward: the gzip body is corrupt"},
        {"empty", BODY_EMPTY, UT_EPROTO, NULL, "the gzip body is empty"},
        {"inflates to bad msgpack", BODY_BAD_MSGPACK, UT_EPROTO, NULL, "PackedForward entry 0"},
        {"zip bomb", BODY_BOMB, UT_EPROTO, NULL, "inflates beyond the limit of 8388608 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_buf body = UT_BUF_INIT, msg = UT_BUF_INIT;
        make_body(cases[i].shape, &body);
        compressed_message("uitrail.alert", ut_buf_str(&body), cases[i].shape == BODY_IN_STR, "gzip", &msg);
        /* At once, and byte by byte for the small ones: the same outcome. */
        size_t steps[] = {0, 1};
        for (size_t s = 0; s < (msg.len < 4096 ? 2u : 1u); s++) {
            wt_log log;
            wt_log_init(&log);
            char error[256];
            ut_status st = wt_decode(msg.data, msg.len, steps[s], &log, error, sizeof error, NULL);
            if (st != cases[i].want)
                fail_msg("%s (step %zu): %s, want %s (%s)", cases[i].name, steps[s], ut_status_str(st),
                         ut_status_str(cases[i].want), error);
            if (st == UT_OK) {
                char want[1024];
                snprintf(want, sizeof want, "%sack k\n", two_alerts);
                const char *expect = cases[i].log ? cases[i].log : want;
                if (strcmp(log.text.data ? log.text.data : "", expect) != 0)
                    fail_msg("%s: the sink saw\n%s", cases[i].name, log.text.data);
            } else {
                if (!strstr(error, cases[i].error))
                    fail_msg("%s: error \"%s\" lacks \"%s\"", cases[i].name, error, cases[i].error);
                assert_int_equal(log.events, 0);
                assert_int_equal(log.acks, 0);
            }
            wt_log_free(&log);
        }
        ut_buf_free(&body);
        ut_buf_free(&msg);
    }
}

/* The cap is exact: a body that inflates to exactly the cap inflates, one
 * byte more does not. */
static void test_compressed_cap_is_exact(void **state)
{
    (void)state;
    size_t cap = 100000;
    char *zeros = calloc(1, cap + 1);
    assert_non_null(zeros);
    for (size_t n = cap; n <= cap + 1; n++) {
        ut_buf gz = UT_BUF_INIT, out = UT_BUF_INIT;
        gzip_append(zeros, n, &gz);
        char err[160] = "";
        ut_status st = ut__wire_gunzip(ut_buf_str(&gz), cap, &out, err, sizeof err);
        if (n == cap) {
            assert_int_equal(st, UT_OK);
            assert_int_equal(out.len, cap);
        } else {
            assert_int_equal(st, UT_ELIMIT);
            assert_non_null(strstr(err, "beyond the limit of 100000 bytes"));
            assert_true(out.len <= cap);
        }
        ut_buf_free(&gz);
        ut_buf_free(&out);
    }
    free(zeros);
}

/* gzip belongs to PackedForward bodies only. */
static void test_compressed_only_packed_forward(void **state)
{
    (void)state;
    static const char *const messages[] = {
        "[\"uitrail.alert\", 1718000001, {\"tab\":\"t\",\"role\":\"alert\",\"text\":\"x\"}, {\"compressed\":\"gzip\"}]",
        "[\"uitrail.alert\", [[1718000001, {\"tab\":\"t\",\"role\":\"alert\",\"text\":\"x\"}]], {\"compressed\":\"gzip\"}]",
    };
    for (size_t i = 0; i < 2; i++) {
        ut_buf bytes = UT_BUF_INIT;
        wt_json(messages[i], &bytes);
        wt_log log;
        wt_log_init(&log);
        char error[256];
        assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, error, sizeof error, NULL), UT_EPROTO);
        assert_non_null(strstr(error, "needs a PackedForward body"));
        assert_int_equal(log.events, 0);
        wt_log_free(&log);
        ut_buf_free(&bytes);
    }
}

/* Every allocation failing in turn, zlib's included: UT_ENOMEM or the
 * whole result, never a leak or a crash (run under ASan and valgrind). */
static void test_compressed_oom_walk(void **state)
{
    (void)state;
    ut_buf body = UT_BUF_INIT, msg = UT_BUF_INIT;
    make_body(BODY_TWO_MEMBERS, &body);
    compressed_message("uitrail.alert", ut_buf_str(&body), false, "gzip", &msg);
    for (long n = 0;; n++) {
        wt_log log;
        wt_log_init(&log);
        wt_alloc_fail_after(n);
        ut_status st = wt_decode(msg.data, msg.len, 0, &log, NULL, 0, NULL);
        long attempts = wt_alloc_attempts();
        wt_alloc_restore();
        assert_true(st == UT_OK || st == UT_ENOMEM);
        wt_log_free(&log);
        if (st == UT_OK && attempts <= n)
            break;
        assert_true(n < 10000);
    }
    ut_buf_free(&body);
    ut_buf_free(&msg);
}

/* ---- The one tag "uitrail" ---- */

static void test_one_tag_table(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *log;
    } cases[] = {
        {"[\"uitrail\", 1718000001, {\"kind\":\"click\",\"tab\":\"t\",\"role\":\"button\",\"name\":\"Save\",\"el\":\"b\"}]",
         "event click t=1718000001000000 rt=0 tab=\"t\" role=\"button\" name=\"Save\" el=\"b\" sens=0 state=0/0\n"},
        /* Forward mode: every kind under one tag, in one message, in order. */
        {"[\"uitrail\", [[1718000001, {\"kind\":\"nav\",\"tab\":\"t\",\"url\":\"/a\",\"how\":\"load\",\"seq\":1}],"
         " [1718000002, {\"tab\":\"t\",\"role\":\"alert\",\"text\":\"Hi\",\"kind\":\"alert\",\"seq\":2}],"
         " [1718000003, {\"kind\":\"close\",\"tab\":\"t\",\"seq\":3}]], {\"chunk\":\"c\"}]",
         "event nav t=1718000001000000 rt=0 tab=\"t\" seq=1 url=\"/a\" title=\"\" how=0\n"
         "event alert t=1718000002000000 rt=0 tab=\"t\" seq=2 role=\"alert\" text=\"Hi\" level=0\n"
         "event close t=1718000003000000 rt=0 tab=\"t\" seq=3\n"
         "ack c\n"},
        {"[\"uitrail\", 1718000001, {\"tab\":\"t\"}]",
         "reject missing_field: uitrail: field \"kind\" is missing (or send the tag uitrail.<kind>)\n"},
        {"[\"uitrail\", 1718000001, {\"kind\":3,\"tab\":\"t\"}]",
         "reject wrong_type: uitrail: field \"kind\" must be a string\n"},
        {"[\"uitrail\", 1718000001, {\"kind\":\"scroll\",\"tab\":\"t\"}]",
         "reject unknown_kind: uitrail: field \"kind\" is not one of nav, click, change, alert, dialog, mutation, close\n"},
        {"[\"uitrail\", 1718000001, {\"kind\":\"label\",\"tab\":\"t\",\"settled\":true}]",
         "reject unknown_kind: uitrail: field \"kind\" is not one of nav, click, change, alert, dialog, mutation, close\n"},
        {"[\"uitrail\", 1718000001, [1, 2]]", "reject not_map: uitrail: the record must be a map\n"},
        /* The record is then validated as its kind is. */
        {"[\"uitrail\", 1718000001, {\"kind\":\"click\",\"tab\":\"t\",\"role\":\"button\"}]",
         "reject missing_field: uitrail.click: field \"name\" is missing\n"},
        {"[\"uitrail\", true, {\"kind\":\"close\",\"tab\":\"t\"}]",
         "reject bad_time: uitrail.<kind>: time must be an EventTime (ext 0 of 8 bytes) or seconds since the epoch "
         "up to 4294967295, not a boolean\n"},
        /* Other tags near it are not it. */
        {"[\"uitrailx\", 1718000001, {\"kind\":\"close\",\"tab\":\"t\"}]", "ignored uitrailx\n"},
        {"[\"Uitrail\", 1718000001, {\"kind\":\"close\",\"tab\":\"t\"}]", "ignored Uitrail\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_buf bytes = UT_BUF_INIT;
        wt_json(cases[i].json, &bytes);
        wt_log log;
        wt_log_init(&log);
        assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, NULL, 0, NULL), UT_OK);
        if (strcmp(log.text.data ? log.text.data : "", cases[i].log) != 0)
            fail_msg("case %zu: %s\nthe sink saw\n%s", i, cases[i].json, log.text.data);
        wt_log_free(&log);
        ut_buf_free(&bytes);
    }
}

/* Under the one tag, gzip works the same. */
static void test_one_tag_compressed(void **state)
{
    (void)state;
    ut_buf plain = UT_BUF_INIT, gz = UT_BUF_INIT, msg = UT_BUF_INIT;
    wt_json("[[1718000001, {\"kind\":\"alert\",\"tab\":\"t\",\"role\":\"alert\",\"text\":\"Saved\"}],"
            " [1718000002, {\"kind\":\"alert\",\"tab\":\"t\",\"role\":\"status\",\"text\":\"Busy\"}]]",
            &plain);
    gzip_append(plain.data, plain.len, &gz);
    compressed_message("uitrail", ut_buf_str(&gz), false, "gzip", &msg);
    wt_log log;
    wt_log_init(&log);
    assert_int_equal(wt_decode(msg.data, msg.len, 0, &log, NULL, 0, NULL), UT_OK);
    char want[1024];
    snprintf(want, sizeof want, "%sack k\n", two_alerts);
    assert_string_equal(log.text.data, want);
    wt_log_free(&log);
    ut_buf_free(&plain);
    ut_buf_free(&gz);
    ut_buf_free(&msg);
}

int wt_run_compressed_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compressed_table),
        cmocka_unit_test(test_compressed_cap_is_exact),
        cmocka_unit_test(test_compressed_only_packed_forward),
        cmocka_unit_test(test_compressed_oom_walk),
        cmocka_unit_test(test_one_tag_table),
        cmocka_unit_test(test_one_tag_compressed),
    };
    return cmocka_run_group_tests_name("compressed", tests, NULL, NULL);
}

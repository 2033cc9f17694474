/* JSON ingest bodies: accepted shapes, parse errors with their position,
 * every wire limit, and out-of-memory. */
#include "wire_test_util.h"
#include "uitrail/limits.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static ut_status convert(const char *json, ut_buf *out, char *err, size_t errlen)
{
    return ut_wire_json_to_msgpack(ut_str_cstr(json), out, err, errlen);
}

static void test_json_one_message_and_arrays_of_them(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        unsigned events;
        const char *expect;
    } cases[] = {
        {"[\"uitrail.close\", 1718000000.25, {\"tab\":\"a\"}]", 1, "event close t=1718000000250000 rt=0 tab=\"a\"\n"},
        {" [ [\"uitrail.close\", 1718000000, {\"tab\":\"a\"}],\n [\"uitrail.close\", 1718000001, {\"tab\":\"b\"}] ] ", 2,
         "event close t=1718000000000000 rt=0 tab=\"a\"\nevent close t=1718000001000000 rt=0 tab=\"b\"\n"},
        {"[\"uitrail.close\", [[1718000000, {\"tab\":\"a\"}], [1718000002, {\"tab\":\"b\"}]], {\"chunk\":\"z\"}]", 2,
         "event close t=1718000000000000 rt=0 tab=\"a\"\nevent close t=1718000002000000 rt=0 tab=\"b\"\nack z\n"},
        {"[]", 0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_buf out = UT_BUF_INIT;
        char err[256];
        assert_int_equal(convert(cases[i].json, &out, err, sizeof err), UT_OK);
        wt_log log;
        wt_log_init(&log);
        assert_int_equal(wt_decode(out.data, out.len, 0, &log, NULL, 0, NULL), UT_OK);
        assert_int_equal(log.events, cases[i].events);
        assert_string_equal(log.text.data ? log.text.data : "", cases[i].expect);
        wt_log_free(&log);
        ut_buf_free(&out);
    }
}

static void test_json_every_value_type_converts(void **state)
{
    (void)state;
    ut_buf out = UT_BUF_INIT;
    char err[256];
    assert_int_equal(convert("[\"t\", 1, {\"s\":\"\\u00e9\",\"i\":-3,\"u\":300,\"f\":0.5,\"a\":[true,false,null],\"m\":{}}]",
                             &out, err, sizeof err), UT_OK);
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    assert_int_equal(msgpack_unpack_next(&up, out.data, out.len, &off), MSGPACK_UNPACK_SUCCESS);
    assert_int_equal(off, out.len);
    char text[256];
    msgpack_object_print_buffer(text, sizeof text, up.data);
    assert_string_equal(text, "[\"t\", 1, {\"s\"=>\"\xc3\xa9\", \"i\"=>-3, \"u\"=>300, \"f\"=>0.500000, \"a\"=>[true, false, nil], \"m\"=>{}}]");
    msgpack_unpacked_destroy(&up);
    ut_buf_free(&out);
}

typedef struct bad_json {
    const char *name;
    const char *json;
    ut_status status;
    const char *error;
} bad_json;

static const bad_json bad_cases[] = {
    {"syntax", "[\"uitrail.close\",\n 1718000000 {\"tab\":\"a\"}]", UT_EPROTO, "JSON error at line 2, column 13: "},
    {"empty", "", UT_EPROTO, "JSON error at line 1, column 0: "},
    {"duplicate key", "[\"t\", 1, {\"tab\":\"a\",\"tab\":\"b\"}]", UT_EPROTO, "duplicate object key"},
    {"object root", "{\"tag\":\"uitrail.close\"}", UT_EPROTO,
     "the body must be a Forward message [tag, ...] or an array of them, not a JSON object"},
    {"scalar root", "42", UT_EPROTO, "not a JSON scalar"},
    {"element not a message", "[[\"t\", 1, {}], 5]", UT_EPROTO, "message 1: a Forward message must be an array [tag, ...]"},
    {"nesting", "[\"t\", 1, {\"a\":[[[[[[[1]]]]]]]}]", UT_ELIMIT, "message 0: nesting deeper than 8 levels"},
};

static void test_json_bad_bodies(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_json *c = &bad_cases[i];
        ut_buf out = UT_BUF_INIT;
        ut_buf_append_cstr(&out, "kept");
        char err[256];
        ut_status st = convert(c->json, &out, err, sizeof err);
        if (st != c->status || !strstr(err, c->error))
            fail_msg("%s: status %d, \"%s\"; want %d, \"%s\"", c->name, st, err, c->status, c->error);
        /* A failed conversion leaves the output as it was. */
        assert_string_equal(out.data, "kept");
        ut_buf_free(&out);
    }
}

static void test_json_limits(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *unit;  /* repeated inside the record's "x" value */
        const char *open, *close;
        size_t at_limit;
        const char *error;
    } limits[] = {
        {"string", "a", "\"", "\"", UT_WIRE_STR_MAX_BYTES, "string of 65537 bytes exceeds the limit of 65536"},
        {"array", "0,", "[", "0]", UT_WIRE_CONTAINER_MAX - 1, "array of 4097 elements exceeds the limit of 4096"},
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        for (size_t n = limits[i].at_limit; n <= limits[i].at_limit + 1; n++) {
            ut_buf json = UT_BUF_INIT, out = UT_BUF_INIT;
            ut_buf_printf(&json, "[\"uitrail.close\", 1, {\"tab\":\"t\",\"x\":%s", limits[i].open);
            for (size_t k = 0; k < n; k++)
                ut_buf_append_cstr(&json, limits[i].unit);
            ut_buf_printf(&json, "%s}]", limits[i].close);
            char err[256];
            ut_status st = ut_wire_json_to_msgpack(ut_buf_str(&json), &out, err, sizeof err);
            if (n == limits[i].at_limit) {
                if (st != UT_OK)
                    fail_msg("%s at its limit: %s", limits[i].name, err);
            } else if (st != UT_ELIMIT || !strstr(err, limits[i].error)) {
                fail_msg("%s over its limit: %d \"%s\"", limits[i].name, st, err);
            }
            ut_buf_free(&json);
            ut_buf_free(&out);
        }
    }

    /* Nesting at its limit, an object of 4097 keys, and a message over
     * the frame limit. */
    ut_buf json = UT_BUF_INIT, out = UT_BUF_INIT;
    char err[256];
    assert_int_equal(convert("[\"t\", 1, {\"a\":[[[[[[1]]]]]]}]", &out, err, sizeof err), UT_OK);
    ut_buf_reset(&out);
    ut_buf_append_cstr(&json, "[\"t\", 1, {");
    for (int k = 0; k <= UT_WIRE_CONTAINER_MAX; k++)
        ut_buf_printf(&json, "%s\"k%d\":0", k ? "," : "", k);
    ut_buf_append_cstr(&json, "}]");
    assert_int_equal(ut_wire_json_to_msgpack(ut_buf_str(&json), &out, err, sizeof err), UT_ELIMIT);
    assert_non_null(strstr(err, "object of 4097 elements exceeds the limit of 4096"));

    ut_buf_reset(&json);
    ut_buf_append_cstr(&json, "[\"t\", 1, [");
    for (int k = 0; k < 17; k++) {
        ut_buf_append_cstr(&json, k ? ",\"" : "\"");
        for (int c = 0; c < 65000; c++)
            ut_buf_append(&json, "z", 1);
        ut_buf_append_cstr(&json, "\"");
    }
    ut_buf_append_cstr(&json, "]]");
    assert_int_equal(ut_wire_json_to_msgpack(ut_buf_str(&json), &out, err, sizeof err), UT_ELIMIT);
    assert_non_null(strstr(err, "exceed the frame limit of 1048576"));
    assert_int_equal(out.len, 0);
    ut_buf_free(&json);
    ut_buf_free(&out);
}

static void test_json_out_of_memory_walk(void **state)
{
    (void)state;
    static const char json[] =
        "[[\"uitrail.click\", 1718000000, {\"tab\":\"t\",\"role\":\"button\",\"name\":\"Edit Item\",\"el\":\"e\","
        "\"ctx\":{\"kind\":\"row\",\"cells\":[\"Blue Widget\",\"SKU-1234\"]}}],"
        " [\"uitrail.close\", 1718000001, {\"tab\":\"t\"}]]";
    ut_buf expected = UT_BUF_INIT;
    char err[256];
    assert_int_equal(convert(json, &expected, err, sizeof err), UT_OK);
    bool completed = false;
    for (long n = 0; n < 10000 && !completed; n++) {
        ut_buf out = UT_BUF_INIT;
        wt_alloc_fail_after(n);
        ut_status st = convert(json, &out, err, sizeof err);
        wt_alloc_restore();
        if (st == UT_OK) {
            assert_int_equal(out.len, expected.len);
            assert_memory_equal(out.data, expected.data, out.len);
            completed = true;
        } else {
            if (st != UT_ENOMEM)
                fail_msg("allocation %ld failed: status %d, \"%s\"", n, st, err);
            assert_int_equal(out.len, 0);
        }
        ut_buf_free(&out);
    }
    assert_true(completed);
    ut_buf_free(&expected);
}

int wt_run_json_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_one_message_and_arrays_of_them),
        cmocka_unit_test(test_json_every_value_type_converts),
        cmocka_unit_test(test_json_bad_bodies),
        cmocka_unit_test(test_json_limits),
        cmocka_unit_test(test_json_out_of_memory_walk),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}

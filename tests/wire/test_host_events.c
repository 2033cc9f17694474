/* The record fields and kinds that real pages brought (issue 10): the
 * `uitrail.unload` and `uitrail.app` kinds, and the click and change
 * fields `trusted` and `sort`. Each limit of a host event is tripped, every
 * rejection's reason is checked whole, and every new field survives the
 * packer (recordings rely on that). Records are written as JSON and go
 * through the whole decoder. */
#include "wire_test_util.h"
#include "uitrail/limits.h"
#include "wire_internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static const wt_record_case good_records[] = {
    {"unload", "{\"tab\":\"t\",\"seq\":4,\"persisted\":true}", "event unload t=1718000000000000 rt=0 tab=\"t\" seq=4 persisted=1"},
    {"unload", "{\"tab\":\"t\"}", "tab=\"t\" persisted=0"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"Save\",\"el\":\"b\",\"trusted\":false}",
     "name=\"Save\" el=\"b\" sens=0 state=0/0 untrusted=1"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"Save\",\"el\":\"b\",\"trusted\":true}", "state=0/0\n"},
    {"click", "{\"tab\":\"t\",\"role\":\"columnheader\",\"name\":\"Price\",\"el\":\"h\",\"sort\":\"descending\"}",
     "role=\"columnheader\" name=\"Price\" el=\"h\" sens=0 state=0/0 sort=3"},
    {"click", "{\"tab\":\"t\",\"role\":\"columnheader\",\"name\":\"Price\",\"el\":\"h\",\"sort\":\"none\"}", "sort=1"},
    {"click", "{\"tab\":\"t\",\"role\":\"columnheader\",\"name\":\"Price\",\"el\":\"h\",\"sort\":\"other\"}", "sort=4"},
    {"change", "{\"tab\":\"t\",\"role\":\"textbox\",\"name\":\"Note\",\"el\":\"n\",\"len\":3,\"trusted\":false}",
     "untrusted=1 len=3"},
    /* `actor` (issue 20): "script" is trusted:false's newer spelling; an
     * assistant's declared action is never the script's. */
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"Save\",\"el\":\"b\",\"actor\":\"assistant\"}",
     "sens=0 state=0/0 assistant=1\n"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"Save\",\"el\":\"b\",\"actor\":\"assistant\",\"trusted\":false}",
     "sens=0 state=0/0 assistant=1\n"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"Save\",\"el\":\"b\",\"actor\":\"script\"}",
     "sens=0 state=0/0 untrusted=1\n"},
    {"change", "{\"tab\":\"t\",\"role\":\"textbox\",\"name\":\"N\",\"el\":\"n\",\"len\":1,\"actor\":\"user\"}",
     "state=0/0 len=1"},
    {"app", "{\"tab\":\"t\",\"name\":\"order.refund_failed\",\"text\":\"Refund exceeds captured amount\","
            "\"level\":\"error\",\"data\":{\"order\":\"4411\",\"amount\":\"120.00\"}}",
     "name=\"order.refund_failed\" text=\"Refund exceeds captured amount\" level=1 data=2 key=\"order\" "
     "value=\"4411\" key=\"amount\" value=\"120.00\""},
    {"app", "{\"tab\":\"t\",\"name\":\"cart.checkout-started_v2\"}", "name=\"cart.checkout-started_v2\" text=\"\" level=0 data=0"},
};

static const wt_record_case bad_records[] = {
    {"unload", "{\"tab\":\"t\",\"persisted\":1}",
     "reject wrong_type: uitrail.unload: field \"persisted\" must be a boolean, not an integer"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"trusted\":0}",
     "reject wrong_type: uitrail.click: field \"trusted\" must be a boolean, not an integer"},
    {"change", "{\"tab\":\"t\",\"role\":\"textbox\",\"name\":\"A\",\"el\":\"a\",\"trusted\":\"no\"}",
     "reject wrong_type: uitrail.change: field \"trusted\" must be a boolean, not a string"},
    {"click", "{\"tab\":\"t\",\"role\":\"columnheader\",\"name\":\"A\",\"el\":\"a\",\"sort\":\"up\"}",
     "reject bad_value: uitrail.click: field \"sort\" must be one of none, ascending, descending, other, not \"up\""},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"actor\":\"robot\"}",
     "reject bad_value: uitrail.click: field \"actor\" must be one of user, script, assistant, not \"robot\""},
    {"change", "{\"tab\":\"t\",\"role\":\"textbox\",\"name\":\"A\",\"el\":\"a\",\"actor\":1}",
     "reject wrong_type: uitrail.change: field \"actor\" must be a string, not an integer"},
    {"app", "{\"tab\":\"t\"}", "reject missing_field: uitrail.app: field \"name\" is missing"},
    {"app", "{\"tab\":\"t\",\"name\":7}", "reject wrong_type: uitrail.app: field \"name\" must be a string, not an integer"},
    {"app", "{\"tab\":\"t\",\"name\":\"\"}",
     "reject bad_value: uitrail.app: field \"name\" (\"\") must be 1 to 64 characters of A-Z a-z 0-9 _ . -"},
    {"app", "{\"tab\":\"t\",\"name\":\"mail ann@example.com\"}",
     "reject bad_value: uitrail.app: field \"name\" (\"mail ann@example.com\") must be 1 to 64 characters of A-Z a-z 0-9 _ . -"},
    /* UT_APP_NAME_MAX_BYTES + 1 */
    {"app", "{\"tab\":\"t\",\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
     "reject bad_value: uitrail.app: field \"name\" (\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\") must be 1 to 64 characters of A-Z a-z 0-9 _ . -"},
    {"app", "{\"tab\":\"t\",\"name\":\"x\",\"level\":\"fatal\"}",
     "reject bad_value: uitrail.app: field \"level\" must be one of error, warning, info, not \"fatal\""},
    {"app", "{\"tab\":\"t\",\"name\":\"x\",\"data\":[1]}",
     "reject wrong_type: uitrail.app: field \"data\" must be a map, not an array"},
    {"app", "{\"tab\":\"t\",\"name\":\"x\",\"data\":{\"n\":3}}",
     "reject wrong_type: uitrail.app: value of \"data.n\" must be a string, not an integer"},
    {"app", "{\"tab\":\"t\",\"name\":\"x\",\"data\":{\"e-mail of user\":\"a\"}}",
     "reject bad_value: uitrail.app: key \"e-mail of user\" of field \"data\" must be 1 to 32 characters of A-Z a-z 0-9 _ . -"},
    /* UT_APP_KEY_MAX_BYTES + 1 */
    {"app", "{\"tab\":\"t\",\"name\":\"x\",\"data\":{\"k12345678901234567890123456789012\":\"a\"}}",
     "reject bad_value: uitrail.app: key \"k12345678901234567890123456789012\" of field \"data\" must be 1 to 32 characters of A-Z a-z 0-9 _ . -"},
    /* UT_APP_DATA_MAX + 1 */
    {"app", "{\"tab\":\"t\",\"name\":\"x\",\"data\":{\"a\":\"1\",\"b\":\"1\",\"c\":\"1\",\"d\":\"1\",\"e\":\"1\",\"f\":\"1\","
            "\"g\":\"1\",\"h\":\"1\",\"i\":\"1\",\"j\":\"1\",\"k\":\"1\",\"l\":\"1\",\"m\":\"1\",\"n\":\"1\",\"o\":\"1\","
            "\"p\":\"1\",\"q\":\"1\"}}",
     "reject bad_value: uitrail.app: field \"data\" has 17 keys, over the limit of 16"},
};

static void test_host_events_good_records(void **state)
{
    (void)state;
    wt_check_good_records(good_records, sizeof good_records / sizeof good_records[0]);
}

static void test_host_events_bad_records_give_reasons(void **state)
{
    (void)state;
    wt_check_bad_records(bad_records, sizeof bad_records / sizeof bad_records[0]);
}

/* The longest name and key are accepted: the limits are exact. */
static void test_host_events_limits_are_exact(void **state)
{
    (void)state;
    char name[UT_APP_NAME_MAX_BYTES + 1], key[UT_APP_KEY_MAX_BYTES + 1];
    memset(name, 'n', UT_APP_NAME_MAX_BYTES);
    name[UT_APP_NAME_MAX_BYTES] = '\0';
    memset(key, 'k', UT_APP_KEY_MAX_BYTES);
    key[UT_APP_KEY_MAX_BYTES] = '\0';
    ut_buf record = UT_BUF_INIT;
    ut_buf_printf(&record, "{\"tab\":\"t\",\"name\":\"%s\",\"data\":{", name);
    for (int i = 0; i < UT_APP_DATA_MAX; i++) {
        key[0] = (char)('a' + i);
        ut_buf_printf(&record, "%s\"%s\":\"v\"", i ? "," : "", key);
    }
    ut_buf_append_cstr(&record, "}}");
    wt_log log;
    wt_decode_record("app", record.data, &log);
    assert_int_equal(log.events, 1);
    char want[64];
    snprintf(want, sizeof want, "data=%d", UT_APP_DATA_MAX);
    assert_non_null(strstr(log.text.data, want));
    assert_non_null(strstr(log.text.data, name));
    wt_log_free(&log);
    ut_buf_free(&record);
}

/* A message and a value longer than their maxima are cut, never rejected. */
static void test_host_events_text_is_cut(void **state)
{
    (void)state;
    ut_buf record = UT_BUF_INIT, longtext = UT_BUF_INIT;
    for (int i = 0; i < UT_APP_TEXT_MAX_BYTES + 100; i++)
        ut_buf_append(&longtext, "x", 1);
    ut_buf_printf(&record, "{\"tab\":\"t\",\"name\":\"n\",\"text\":\"%s\",\"data\":{\"k\":\"%s\"}}", longtext.data,
                  longtext.data);
    wt_log log;
    wt_decode_record("app", record.data, &log);
    assert_int_equal(log.events, 1);
    ut_buf want = UT_BUF_INIT;
    ut_buf_append_cstr(&want, " text=\"");
    ut_buf_append(&want, longtext.data, UT_APP_TEXT_MAX_BYTES);
    ut_buf_append_cstr(&want, "\" ");
    assert_non_null(strstr(log.text.data, want.data));
    ut_buf_reset(&want);
    ut_buf_append_cstr(&want, " value=\"");
    ut_buf_append(&want, longtext.data, UT_APP_VALUE_MAX_BYTES);
    ut_buf_append_cstr(&want, "\"\n");
    assert_non_null(strstr(log.text.data, want.data));
    wt_log_free(&log);
    ut_buf_free(&record);
    ut_buf_free(&longtext);
    ut_buf_free(&want);
}

/* Every new field goes through the packer and decodes to the same event. */
static void test_host_events_pack_round_trip(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"unload", "{\"tab\":\"t\",\"seq\":3,\"persisted\":true}"},
        {"click", "{\"tab\":\"t\",\"role\":\"columnheader\",\"name\":\"Price\",\"el\":\"h\",\"sort\":\"ascending\","
                  "\"trusted\":false,\"state\":{\"pressed\":true}}"},
        {"change", "{\"tab\":\"t\",\"role\":\"combobox\",\"name\":\"S\",\"el\":\"s\",\"value\":\"Open\",\"trusted\":false}"},
        {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"B\",\"el\":\"b\",\"actor\":\"assistant\"}"},
        {"app", "{\"tab\":\"t\",\"name\":\"order.refund_failed\",\"text\":\"No\",\"level\":\"warning\","
                "\"data\":{\"order\":\"4411\",\"why\":\"over\"}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wt_log first;
        wt_decode_record(cases[i][0], cases[i][1], &first);
        assert_int_equal(first.events, 1);
        /* Decode once more to get the event itself, pack it, decode that. */
        ut_buf json = UT_BUF_INIT, bytes = UT_BUF_INIT, packed = UT_BUF_INIT;
        ut_buf_printf(&json, "[\"uitrail.%s\", 1718000000, %s]", cases[i][0], cases[i][1]);
        wt_json(json.data, &bytes);
        ut__record_validator v;
        assert_int_equal(ut__record_validator_init(&v), UT_OK);
        msgpack_unpacked up;
        msgpack_unpacked_init(&up);
        assert_int_equal(msgpack_unpack_next(&up, bytes.data, bytes.len, NULL), MSGPACK_UNPACK_SUCCESS);
        ut_kind kind;
        const msgpack_object *arr = up.data.via.array.ptr;
        assert_int_equal(ut_kind_from_tag(ut_str_from(arr[0].via.str.ptr, arr[0].via.str.size), &kind), UT_OK);
        ut_event ev;
        assert_int_equal(ut__record_validate(&v, kind, 1718000000000000, &arr[2], &ev), UT_OK);
        assert_int_equal(ut_wire_pack_event(&ev, false, &packed), UT_OK);
        wt_log second;
        wt_log_init(&second);
        assert_int_equal(wt_decode(packed.data, packed.len, 0, &second, NULL, 0, NULL), UT_OK);
        assert_string_equal(second.text.data, first.text.data);
        wt_log_free(&second);
        msgpack_unpacked_destroy(&up);
        ut__record_validator_free(&v);
        ut_buf_free(&json);
        ut_buf_free(&bytes);
        ut_buf_free(&packed);
        wt_log_free(&first);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_events_good_records),
        cmocka_unit_test(test_host_events_bad_records_give_reasons),
        cmocka_unit_test(test_host_events_limits_are_exact),
        cmocka_unit_test(test_host_events_text_is_cut),
        cmocka_unit_test(test_host_events_pack_round_trip),
    };
    return cmocka_run_group_tests_name("host_events", tests, NULL, NULL);
}

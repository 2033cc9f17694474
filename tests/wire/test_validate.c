/* The record validator: each kind's fields, types, enums, text cleaning
 * and cutting, and the reasons given for rejection. Records are written as
 * JSON for readability and go through the whole decoder. */
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

/* Accepted records: the expected text is part of the event's description. */
static const wt_record_case good_records[] = {
    {"nav", "{\"tab\":\"t\",\"url\":\"/catalog?q=1\",\"title\":\"Catalog\",\"how\":\"load\",\"tz\":120}",
     "url=\"/catalog?q=1\" title=\"Catalog\" how=0 tz=120"},
    {"nav", "{\"tab\":\"t\",\"url\":\"/x\",\"how\":\"hash\",\"tz\":-1440}", "title=\"\" how=5 tz=-1440"},
    {"nav", "{\"tab\":\"t\",\"url\":\"/x\",\"how\":\"pop\",\"seq\":9223372036854775807}",
     "seq=9223372036854775807"},
    {"click", "{\"tab\":\"t\",\"role\":\"link\",\"name\":\"Blue Widget\",\"el\":\"r1\","
              "\"ctx\":{\"kind\":\"row\",\"cells\":[\"Blue Widget\",\"SKU-1234\"]},"
              "\"state\":{\"expanded\":true,\"checked\":false},\"future\":[1,2]}",
     "role=\"link\" name=\"Blue Widget\" el=\"r1\" sens=0 ctx=1 ctxname=\"\" cell=\"Blue Widget\" cell=\"SKU-1234\" state=3/2"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"Apply\",\"el\":\"b\",\"ctx\":{\"kind\":\"toolbar\",\"name\":\"Filters\"}}",
     "ctx=2 ctxname=\"Filters\""},
    {"click", "{\"tab\":\"t\",\"role\":\"textbox\",\"el\":\"pw\",\"sens\":true}", "name=\"\" el=\"pw\" sens=1"},
    {"change", "{\"tab\":\"t\",\"role\":\"combobox\",\"name\":\"Status\",\"el\":\"s\",\"value\":\"Published\"}",
     "value=\"Published\""},
    {"change", "{\"tab\":\"t\",\"role\":\"textbox\",\"name\":\"Search\",\"el\":\"q\",\"len\":12}", "len=12"},
    {"change", "{\"tab\":\"t\",\"role\":\"checkbox\",\"name\":\"Active\",\"el\":\"c\",\"checked\":true}", "checked=1"},
    {"alert", "{\"tab\":\"t\",\"role\":\"alert\",\"text\":\"Price must be positive\",\"level\":\"error\"}",
     "role=\"alert\" text=\"Price must be positive\" level=1"},
    {"dialog", "{\"tab\":\"t\",\"state\":\"open\",\"role\":\"dialog\",\"name\":\"Blue Widget\",\"el\":\"d\","
               "\"text\":\"Price: $24.99\"}",
     "state=0 role=\"dialog\" name=\"Blue Widget\" el=\"d\" text=\"Price: $24.99\""},
    {"dialog", "{\"tab\":\"t\",\"state\":\"close\",\"role\":\"menu\",\"el\":\"d\"}", "state=1 role=\"menu\" name=\"\""},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1200,14],\"recs\":[[\"main\",0,3,40,5,900],[\"p\",2,9,0,1,90000]],"
                 "\"busy\":1,\"dropped\":4}",
     "dom=1200/14 busy=1 dropped=4 recs=2 rec=\"main\":0:3:40:5:900 rec=\"p\":2:9:0:1:50000"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[12,4],\"recs\":[],\"busy\":0,\"loaded\":true}",
     "dom=12/4 busy=0 dropped=0 recs=0 loaded"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[12,4],\"recs\":[],\"busy\":0,\"loaded\":false}",
     "dom=12/4 busy=0 dropped=0 recs=0"},
    /* input: the user typed at this time; false is the same as absent. */
    {"mutation", "{\"tab\":\"t\",\"dom\":[12,4],\"recs\":[],\"busy\":0,\"input\":true}",
     "dom=12/4 busy=0 dropped=0 recs=0 input"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[12,4],\"recs\":[],\"busy\":0,\"input\":false,\"loaded\":true}",
     "dom=12/4 busy=0 dropped=0 recs=0 loaded"},
    /* net: the requests in flight; absent is "not counted", 0 is "none". */
    {"mutation", "{\"tab\":\"t\",\"dom\":[12,4],\"recs\":[],\"busy\":0,\"net\":3}",
     "dom=12/4 busy=0 dropped=0 recs=0 net=3"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[12,4],\"recs\":[],\"busy\":0,\"net\":0,\"loaded\":true}",
     "dom=12/4 busy=0 dropped=0 recs=0 net=0 loaded"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[12,4],\"recs\":[],\"busy\":0,\"net\":4294967295}",
     "dom=12/4 busy=0 dropped=0 recs=0 net=4294967295"},
    {"close", "{\"tab\":\"t\",\"rt\":1718000000500000}", "event close t=1718000000000000 rt=1718000000500000 tab=\"t\""},
    /* Form validation: each control's role, name (optional) and message,
     * cleaned and cut; fields beyond UT_INVALID_FIELDS_MAX dropped. */
    {"invalid", "{\"tab\":\"t\",\"fields\":[{\"role\":\"textbox\",\"name\":\"Amount\",\"text\":\"Enter an amount\"},"
                "{\"role\":\"checkbox\",\"text\":\"Accept\\u200b the terms\",\"extra\":1}]}",
     "fields=2 role=\"textbox\" name=\"Amount\" text=\"Enter an amount\" role=\"checkbox\" name=\"\" text=\"Accept the terms\""},
    {"invalid", "{\"tab\":\"t\",\"fields\":[{\"role\":\"a\",\"text\":\"1\"},{\"role\":\"b\",\"text\":\"2\"},"
                "{\"role\":\"c\",\"text\":\"3\"},{\"role\":\"d\",\"text\":\"4\"},{\"role\":\"e\",\"text\":\"5\"},"
                "{\"role\":\"f\",\"text\":\"6\"},{\"role\":\"g\",\"text\":\"7\"},{\"role\":\"h\",\"text\":\"8\"},"
                "{\"role\":\"i\",\"text\":\"9\"}]}",
     "fields=8 role=\"a\""},
};

/* Rejected records: the expected text is the whole report line. */
static const wt_record_case bad_records[] = {
    {"click", "[1,2]", "reject not_map: uitrail.click: the record must be a map, not an array"},
    {"click", "{\"role\":\"button\",\"name\":\"A\",\"el\":\"a\"}", "reject missing_field: uitrail.click: field \"tab\" is missing"},
    {"click", "{\"tab\":1}", "reject wrong_type: uitrail.click: field \"tab\" must be a string, not an integer"},
    {"click", "{\"tab\":\"\"}", "reject bad_value: uitrail.click: field \"tab\" is empty"},
    /* A C1 control alone (U+009E) is dropped by the cleaning: as empty. */
    {"click", "{\"tab\":\"\xC2\x9E\u200B\"}",
     "reject bad_value: uitrail.click: field \"tab\" is empty once invisible characters are dropped"},
    {"close", "{\"tab\":\"" "0123456789012345678901234567890123456789012345678901234567890123"
              "01234567890123456789012345678901234567890123456789012345678901234" "\"}",
     "reject bad_value: uitrail.close: field \"tab\" is 129 bytes, over the limit of 128"},
    {"close", "{\"tab\":\"t\",\"seq\":-1}", "reject wrong_type: uitrail.close: field \"seq\" must be an unsigned integer, not a negative integer"},
    {"close", "{\"tab\":\"t\",\"seq\":\"1\"}", "reject wrong_type: uitrail.close: field \"seq\" must be an unsigned integer, not a string"},
    {"close", "{\"tab\":\"t\",\"rt\":1.5}", "reject wrong_type: uitrail.close: field \"rt\" must be an unsigned integer, not a float"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\"}", "reject missing_field: uitrail.click: field \"el\" is missing"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"el\":\"a\"}", "reject missing_field: uitrail.click: field \"name\" is missing"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":7}", "reject wrong_type: uitrail.click: field \"el\" must be a string, not an integer"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"sens\":\"yes\"}",
     "reject wrong_type: uitrail.click: field \"sens\" must be a boolean, not a string"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"ctx\":[]}",
     "reject wrong_type: uitrail.click: field \"ctx\" must be a map, not an array"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"ctx\":{\"name\":\"x\"}}",
     "reject missing_field: uitrail.click: field \"ctx.kind\" is missing"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"ctx\":{\"kind\":\"sidebar\",\"name\":\"x\"}}",
     "reject bad_value: uitrail.click: field \"ctx.kind\" must be one of row, toolbar, group, dialog, menu, tablist, form, navigation, region, list, not \"sidebar\""},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"ctx\":{\"kind\":\"row\"}}",
     "reject missing_field: uitrail.click: field \"ctx.cells\" is missing"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"ctx\":{\"kind\":\"row\",\"cells\":[\"a\",2]}}",
     "reject wrong_type: uitrail.click: field \"ctx.cells[1]\" must be a string, not an integer"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"ctx\":{\"kind\":\"group\"}}",
     "reject missing_field: uitrail.click: field \"ctx.name\" is missing"},
    {"click", "{\"tab\":\"t\",\"role\":\"button\",\"name\":\"A\",\"el\":\"a\",\"state\":{\"pressed\":1}}",
     "reject wrong_type: uitrail.click: field \"state.pressed\" must be a boolean, not an integer"},
    {"nav", "{\"tab\":\"t\",\"how\":\"load\"}", "reject missing_field: uitrail.nav: field \"url\" is missing"},
    {"nav", "{\"tab\":\"t\",\"url\":\"/\",\"how\":\"teleport\"}",
     "reject bad_value: uitrail.nav: field \"how\" must be one of load, reload, push, replace, pop, hash, not \"teleport\""},
    {"nav", "{\"tab\":\"t\",\"url\":\"/\",\"how\":\"load\",\"tz\":1441}",
     "reject bad_value: uitrail.nav: field \"tz\" is 1441 minutes, outside -1440..1440"},
    {"nav", "{\"tab\":\"t\",\"url\":\"/\",\"how\":\"load\",\"tz\":\"+02:00\"}",
     "reject wrong_type: uitrail.nav: field \"tz\" must be an integer, not a string"},
    {"change", "{\"tab\":\"t\",\"role\":\"textbox\",\"name\":\"q\",\"el\":\"q\",\"len\":4294967296}",
     "reject bad_value: uitrail.change: field \"len\" is 4294967296, over the maximum of 4294967295"},
    {"change", "{\"tab\":\"t\",\"role\":\"checkbox\",\"name\":\"q\",\"el\":\"q\",\"checked\":null}",
     "reject wrong_type: uitrail.change: field \"checked\" must be a boolean, not nil"},
    {"alert", "{\"tab\":\"t\",\"role\":\"banner\",\"text\":\"x\"}",
     "reject bad_value: uitrail.alert: field \"role\" must be one of alert, status, log, not \"banner\""},
    {"alert", "{\"tab\":\"t\",\"role\":\"alert\"}", "reject missing_field: uitrail.alert: field \"text\" is missing"},
    {"alert", "{\"tab\":\"t\",\"role\":\"alert\",\"text\":\"x\",\"level\":\"fatal\"}",
     "reject bad_value: uitrail.alert: field \"level\" must be one of error, warning, info, not \"fatal\""},
    {"dialog", "{\"tab\":\"t\",\"state\":\"toggle\",\"role\":\"dialog\",\"el\":\"d\"}",
     "reject bad_value: uitrail.dialog: field \"state\" must be one of open, close, not \"toggle\""},
    {"dialog", "{\"tab\":\"t\",\"state\":\"open\",\"role\":\"popup\",\"el\":\"d\"}",
     "reject bad_value: uitrail.dialog: field \"role\" must be one of dialog, alertdialog, menu, listbox, tooltip, not \"popup\""},
    {"dialog", "{\"tab\":\"t\",\"state\":\"open\",\"role\":\"dialog\"}", "reject missing_field: uitrail.dialog: field \"el\" is missing"},
    {"mutation", "{\"tab\":\"t\",\"recs\":[],\"busy\":0}", "reject missing_field: uitrail.mutation: field \"dom\" is missing"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1],\"recs\":[],\"busy\":0}",
     "reject wrong_type: uitrail.mutation: field \"dom\" must be [elements, depth]"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"recs\":[]}", "reject missing_field: uitrail.mutation: field \"busy\" is missing"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0}", "reject missing_field: uitrail.mutation: field \"recs\" is missing"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[],\"net\":\"2\"}",
     "reject wrong_type: uitrail.mutation: field \"net\" must be an unsigned integer, not a string"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[],\"net\":-1}",
     "reject wrong_type: uitrail.mutation: field \"net\" must be an unsigned integer, not a negative integer"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[],\"net\":4294967296}",
     "reject bad_value: uitrail.mutation: field \"net\" is 4294967296, over the maximum of 4294967295"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[],\"loaded\":1}",
     "reject wrong_type: uitrail.mutation: field \"loaded\" must be a boolean, not an integer"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[],\"input\":\"yes\"}",
     "reject wrong_type: uitrail.mutation: field \"input\" must be a boolean, not a string"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[],\"input\":null}",
     "reject wrong_type: uitrail.mutation: field \"input\" must be a boolean, not nil"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[[\"a\",0,1,1,1]]}",
     "reject wrong_type: uitrail.mutation: field \"recs[0]\" must be [el, kind, depth, subtree, nodes, bytes]"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[[\"a\",0,1,1,1,1],[\"b\",3,1,1,1,1]]}",
     "reject bad_value: uitrail.mutation: field \"recs[1].kind\" is 3, over the maximum of 2"},
    {"mutation", "{\"tab\":\"t\",\"dom\":[1,2],\"busy\":0,\"recs\":[[5,0,1,1,1,1]]}",
     "reject wrong_type: uitrail.mutation: field \"recs[0].el\" must be a string, not an integer"},
    {"invalid", "{\"tab\":\"t\"}", "reject missing_field: uitrail.invalid: field \"fields\" is missing"},
    {"invalid", "{\"tab\":\"t\",\"fields\":{}}",
     "reject wrong_type: uitrail.invalid: field \"fields\" must be an array, not a map"},
    {"invalid", "{\"tab\":\"t\",\"fields\":[]}",
     "reject bad_value: uitrail.invalid: field \"fields\" is empty: name at least one invalid control"},
    {"invalid", "{\"tab\":\"t\",\"fields\":[\"Amount\"]}",
     "reject wrong_type: uitrail.invalid: field \"fields[0]\" must be a map, not a string"},
    {"invalid", "{\"tab\":\"t\",\"fields\":[{\"role\":\"textbox\",\"text\":\"x\"},{\"role\":\"textbox\"}]}",
     "reject missing_field: uitrail.invalid: field \"fields[1].text\" is missing"},
    {"invalid", "{\"tab\":\"t\",\"fields\":[{\"text\":\"x\"}]}",
     "reject missing_field: uitrail.invalid: field \"fields[0].role\" is missing"},
    {"invalid", "{\"tab\":\"t\",\"fields\":[{\"role\":\"textbox\",\"name\":7,\"text\":\"x\"}]}",
     "reject wrong_type: uitrail.invalid: field \"fields[0].name\" must be a string, not an integer"},
    {"scroll", "{\"tab\":\"t\"}",
     "reject unknown_kind: uitrail.scroll: unknown kind; known kinds are nav, click, change, alert, dialog, mutation, close, unload, app, invalid"},
};

static void test_record_good_records(void **state)
{
    (void)state;
    wt_check_good_records(good_records, sizeof good_records / sizeof good_records[0]);
}

static void test_record_bad_records_give_reasons(void **state)
{
    (void)state;
    wt_check_bad_records(bad_records, sizeof bad_records / sizeof bad_records[0]);
}

static void test_record_every_reason_has_a_name(void **state)
{
    (void)state;
    for (int r = 0; r < UT_REJECT__COUNT; r++)
        assert_string_not_equal(ut_reject_name((ut_reject)r), "unknown");
    assert_string_equal(ut_reject_name(UT_REJECT__COUNT), "unknown");
}

/* A text of `n` copies of `unit`, as JSON string content. */
static char *repeat(const char *unit, size_t n)
{
    size_t u = strlen(unit);
    char *s = malloc(u * n + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * u, unit, u);
    s[u * n] = '\0';
    return s;
}

/* Over-long text is cut on a character boundary at each field's maximum;
 * an event whose text outgrows the scratch's first allocation still points
 * at the right bytes after it moved. */
static void test_record_text_is_cut_at_its_limit(void **state)
{
    (void)state;
    char *url = repeat("u", 3000), *title = repeat("\xc3\xa9", 200), *text = repeat("x", 5000);
    char *json = malloc(20000);
    snprintf(json, 20000, "{\"tab\":\"t\",\"url\":\"%s\",\"title\":\"%s\",\"how\":\"load\"}", url, title);
    wt_log log;
    wt_decode_record("nav", json, &log);
    assert_int_equal(log.events, 1);
    char *want_url = repeat("u", UT_URL_MAX_BYTES), *want_title = repeat("\xc3\xa9", UT_TITLE_MAX_BYTES / 2);
    char *want = malloc(20000);
    snprintf(want, 20000, "url=\"%s\" title=\"%s\" how=0", want_url, want_title);
    assert_non_null(strstr(log.text.data, want));
    wt_log_free(&log);

    /* 255 bytes of 'a' then a two-byte character: cut before it. */
    char *name = repeat("a", 255);
    snprintf(json, 20000, "{\"tab\":\"t\",\"state\":\"open\",\"role\":\"dialog\",\"name\":\"%s\xc3\xa9\",\"el\":\"d\",\"text\":\"%s\"}",
             name, text);
    wt_decode_record("dialog", json, &log);
    char *want_text = repeat("x", UT_DIALOG_TEXT_MAX_BYTES);
    snprintf(want, 20000, "name=\"%s\" el=\"d\" text=\"%s\"\n", name, want_text);
    assert_non_null(strstr(log.text.data, want));
    wt_log_free(&log);
    free(url); free(title); free(text); free(json); free(want_url); free(want_title); free(want); free(name);
    free(want_text);
}

static void test_record_row_cells_beyond_the_limit_are_dropped(void **state)
{
    (void)state;
    char json[2048] = "{\"tab\":\"t\",\"role\":\"row\",\"name\":\"r\",\"el\":\"r\",\"ctx\":{\"kind\":\"row\",\"cells\":[";
    for (int i = 0; i < UT_CTX_CELLS_MAX + 4; i++)
        snprintf(json + strlen(json), sizeof json - strlen(json), "%s\"c%d\"", i ? "," : "", i);
    strcat(json, "]}}");
    wt_log log;
    wt_decode_record("click", json, &log);
    assert_int_equal(log.events, 1);
    char last[16], first_dropped[24];
    snprintf(last, sizeof last, "\"c%d\"", UT_CTX_CELLS_MAX - 1);
    snprintf(first_dropped, sizeof first_dropped, "\"c%d\"", UT_CTX_CELLS_MAX);
    assert_non_null(strstr(log.text.data, last));
    assert_null(strstr(log.text.data, first_dropped));
    wt_log_free(&log);
}

static void test_record_recs_beyond_the_limit_are_dropped_and_counted(void **state)
{
    (void)state;
    const size_t n = UT_MUTATION_RECS_MAX + 88;
    ut_buf json = UT_BUF_INIT;
    ut_buf_append_cstr(&json, "{\"tab\":\"t\",\"dom\":[9,9],\"busy\":0,\"dropped\":2,\"recs\":[");
    for (size_t i = 0; i < n; i++)
        ut_buf_printf(&json, "%s[\"e%zu\",1,2,3,4,5]", i ? "," : "", i);
    ut_buf_append_cstr(&json, "]}");
    char *msg = malloc(json.len + 64);
    sprintf(msg, "[\"uitrail.mutation\", 1718000000, %s]", json.data);
    ut_buf bytes = UT_BUF_INIT;
    wt_json(msg, &bytes);
    wt_log log;
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, NULL, 0, NULL), UT_OK);
    assert_int_equal(log.events, 1);
    assert_non_null(strstr(log.text.data, "dropped=90 recs=512 "));
    assert_non_null(strstr(log.text.data, "rec=\"e511\""));
    assert_null(strstr(log.text.data, "rec=\"e512\""));
    wt_log_free(&log);
    ut_buf_free(&bytes);
    ut_buf_free(&json);
    free(msg);
}

/* The validator called directly, as the fuzz target does: strings of the
 * event point into its scratch and survive the scratch's growth. */
static void test_record_validator_direct_call(void **state)
{
    (void)state;
    ut__record_validator v;
    ut_buf bytes = UT_BUF_INIT;
    msgpack_unpacked up;
    ut_event ev;
    char *big = repeat("y", 1500);
    char json[4096];
    snprintf(json, sizeof json, "[\"x\", 0, {\"tab\":\"t\",\"role\":\"alert\",\"text\":\"%s\"}]", big);
    wt_json(json, &bytes);
    msgpack_unpacked_init(&up);
    size_t off = 0;
    assert_int_equal(msgpack_unpack_next(&up, bytes.data, bytes.len, &off), MSGPACK_UNPACK_SUCCESS);
    assert_int_equal(ut__record_validator_init(&v), UT_OK);
    assert_int_equal(ut__record_validate(&v, UT_KIND_ALERT, 42, &up.data.via.array.ptr[2], &ev), UT_OK);
    assert_int_equal(ev.time_us, 42);
    assert_int_equal(ev.text.len, 512);
    assert_memory_equal(ev.text.ptr, big, 512);
    assert_memory_equal(ev.tab.ptr, "t", 1);
    assert_int_equal(ut__record_validate(&v, UT_KIND__COUNT, 42, &up.data.via.array.ptr[2], &ev), UT_EINVAL);
    assert_int_equal(v.why, UT_REJECT_UNKNOWN_KIND);
    ut__record_validator_free(&v);
    msgpack_unpacked_destroy(&up);
    ut_buf_free(&bytes);
    free(big);
}

int wt_run_validate_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_good_records),
        cmocka_unit_test(test_record_bad_records_give_reasons),
        cmocka_unit_test(test_record_every_reason_has_a_name),
        cmocka_unit_test(test_record_text_is_cut_at_its_limit),
        cmocka_unit_test(test_record_row_cells_beyond_the_limit_are_dropped),
        cmocka_unit_test(test_record_recs_beyond_the_limit_are_dropped_and_counted),
        cmocka_unit_test(test_record_validator_direct_call),
    };
    return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}

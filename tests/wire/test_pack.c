/* The packer: every kind round-trips through the decoder unchanged. */
#include "wire_test_util.h"
#include "uitrail/limits.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define S(lit) UT_STR_LIT(lit)

static const ut_mut_rec recs[] = {
    {S("main"), UT_MUT_CHILDLIST, 3, 40, 5, 900},
    {S("price"), UT_MUT_CHARDATA, 9, 0, 1, 0},
    {S("spinner"), UT_MUT_ATTRIBUTES, 4, 2, 0, UT_MUTATION_BYTES_CAP},
};

/* One event of every kind, with every optional field set on some. */
static void sample_events(ut_event ev[], size_t *n)
{
    size_t k = 0;
    const int64_t t = 1718000000123456;
    ev[k++] = (ut_event){.kind = UT_KIND_NAV, .time_us = t, .tab = S("t1"), .has_seq = true, .seq = 1,
                         .url = S("/catalog"), .title = S("Catalog \xe2\x80\x94 Shop"), .how = UT_NAV_PUSH,
                         .has_tz = true, .tz_min = -300};
    ev[k++] = (ut_event){.kind = UT_KIND_NAV, .time_us = t, .tab = S("t1"), .url = S("/"), .title = S(""),
                         .how = UT_NAV_RELOAD};
    ut_event click = {.kind = UT_KIND_CLICK, .time_us = t + 1, .tab = S("t1"), .role = S("link"),
                      .name = S("Blue Widget"), .el = S("r1"), .state_set = UT_STATE_EXPANDED | UT_STATE_PRESSED,
                      .state_on = UT_STATE_PRESSED};
    click.ctx.kind = UT_CTX_ROW;
    click.ctx.cells[0] = S("Blue Widget");
    click.ctx.cells[1] = S("SKU-1234");
    click.ctx.ncells = 2;
    ev[k++] = click;
    ut_event toolbar = {.kind = UT_KIND_CLICK, .time_us = t + 2, .tab = S("t1"), .role = S("button"),
                        .name = S("Apply"), .el = S("b"), .sens = true};
    toolbar.ctx.kind = UT_CTX_TOOLBAR;
    toolbar.ctx.name = S("Filters");
    ev[k++] = toolbar;
    ev[k++] = (ut_event){.kind = UT_KIND_CHANGE, .time_us = t + 3, .tab = S("t2"), .role = S("combobox"),
                         .name = S("Status"), .el = S("s"), .value = S("Published"), .has_value = true,
                         .has_len = true, .len = 9, .has_checked = true, .checked = false};
    ev[k++] = (ut_event){.kind = UT_KIND_CHANGE, .time_us = t + 3, .tab = S("t2"), .role = S("textbox"),
                         .name = S(""), .el = S("pw"), .sens = true};
    ev[k++] = (ut_event){.kind = UT_KIND_ALERT, .time_us = t + 4, .tab = S("t2"), .role = S("alert"),
                         .text = S("Price must be positive"), .level = UT_LEVEL_WARNING};
    ev[k++] = (ut_event){.kind = UT_KIND_ALERT, .time_us = t + 4, .tab = S("t2"), .role = S("log"), .text = S("")};
    ev[k++] = (ut_event){.kind = UT_KIND_DIALOG, .time_us = t + 5, .tab = S("t1"), .dialog_state = UT_DIALOG_CLOSE,
                         .role = S("alertdialog"), .name = S("Blue Widget"), .el = S("d"),
                         .text = S("Price: $24.99 \xc2\xb7 Status: Published")};
    ev[k++] = (ut_event){.kind = UT_KIND_MUTATION, .time_us = t + 6, .tab = S("t1"), .dom_elements = 1200,
                         .dom_depth = 14, .recs = recs, .nrecs = 3, .busy = 1, .dropped = 7};
    ev[k++] = (ut_event){.kind = UT_KIND_MUTATION, .time_us = t + 6, .tab = S("t1"), .recs = NULL, .nrecs = 0};
    ev[k++] = (ut_event){.kind = UT_KIND_MUTATION, .time_us = t + 7, .tab = S("t1"), .dom_elements = 40,
                         .dom_depth = 6, .recs = NULL, .nrecs = 0, .loaded = true, .has_net = true};
    ev[k++] = (ut_event){.kind = UT_KIND_MUTATION, .time_us = t + 8, .tab = S("t1"), .dom_elements = 40,
                         .dom_depth = 6, .recs = NULL, .nrecs = 0, .has_net = true, .net = 3};
    ev[k++] = (ut_event){.kind = UT_KIND_MUTATION, .time_us = t + 8, .tab = S("t1"), .dom_elements = 40,
                         .dom_depth = 6, .recs = NULL, .nrecs = 0, .input = true};
    ut_event invalid = {.kind = UT_KIND_INVALID, .time_us = t + 9, .tab = S("t1"), .nfields = 2};
    invalid.fields[0] = (ut_invalid_field){S("spinbutton"), S("Amount"), S("Enter an amount")};
    invalid.fields[1] = (ut_invalid_field){S("checkbox"), S(""), S("You must accept the terms")};
    ev[k++] = invalid;
    ev[k++] = (ut_event){.kind = UT_KIND_CLOSE, .time_us = 0, .tab = S("t2"), .has_seq = true,
                         .seq = UINT64_MAX};
    *n = k;
}

/* Packs the `n` events (with their receive times when `with_rt`) and
 * checks that they decode back to themselves. */
static void check_round_trip(ut_event *ev, size_t n, bool with_rt)
{
    ut_buf bytes = UT_BUF_INIT, want = UT_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (with_rt)
            ev[i].rt_us = ev[i].time_us + 250 + (int64_t)i;
        assert_int_equal(ut_wire_pack_event(&ev[i], with_rt, &bytes), UT_OK);
        wt_describe_event(&ev[i], &want);
        ut_buf_append_cstr(&want, "\n");
    }
    wt_log log;
    wt_log_init(&log);
    assert_int_equal(wt_decode(bytes.data, bytes.len, 0, &log, NULL, 0, NULL), UT_OK);
    assert_int_equal(log.events, n);
    assert_string_equal(log.text.data, want.data);
    wt_log_free(&log);
    ut_buf_free(&bytes);
    ut_buf_free(&want);
}

static void round_trip(bool with_rt)
{
    ut_event ev[20];
    size_t n;
    sample_events(ev, &n);
    check_round_trip(ev, n, with_rt);
}

static void test_pack_round_trip_every_kind(void **state)
{
    (void)state;
    round_trip(false);
}

static void test_pack_round_trip_with_receive_time(void **state)
{
    (void)state;
    round_trip(true);
}

static void test_pack_is_message_mode_with_event_time(void **state)
{
    (void)state;
    ut_event ev = {.kind = UT_KIND_CLOSE, .time_us = 1718000000123456, .tab = S("t")};
    ut_buf bytes = UT_BUF_INIT;
    assert_int_equal(ut_wire_pack_event(&ev, false, &bytes), UT_OK);
    static const unsigned char want[] = {
        0x93, 0xad, 'u', 'i', 't', 'r', 'a', 'i', 'l', '.', 'c', 'l', 'o', 's', 'e',
        0xd7, 0x00, 0x66, 0x66, 0x99, 0x80, 0x07, 0x5b, 0xca, 0x00, /* 1718000000 s, 123456000 ns */
        0x81, 0xa3, 't', 'a', 'b', 0xa1, 't'};
    assert_int_equal(bytes.len, sizeof want);
    assert_memory_equal(bytes.data, want, sizeof want);
    ut_buf_free(&bytes);
}

static void test_pack_refuses_what_event_time_cannot_hold(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT;
    ut_event ev = {.kind = UT_KIND_CLOSE, .time_us = -1, .tab = S("t")};
    assert_int_equal(ut_wire_pack_event(&ev, false, &bytes), UT_EINVAL);
    ev.time_us = ((int64_t)UT_WIRE_TIME_MAX_S + 1) * 1000000;
    assert_int_equal(ut_wire_pack_event(&ev, false, &bytes), UT_EINVAL);
    ev.time_us = 0;
    ev.kind = UT_KIND__COUNT;
    assert_int_equal(ut_wire_pack_event(&ev, false, &bytes), UT_EINVAL);
    assert_int_equal(bytes.len, 0);
    ut_buf_free(&bytes);
}

static void test_pack_out_of_memory_walk(void **state)
{
    (void)state;
    ut_event ev[20];
    size_t n;
    sample_events(ev, &n);
    for (size_t i = 0; i < n; i++) {
        bool completed = false;
        for (long k = 0; k < 100 && !completed; k++) {
            ut_buf bytes = UT_BUF_INIT;
            ut_buf_append_cstr(&bytes, "x");
            wt_alloc_fail_after(k);
            ut_status st = ut_wire_pack_event(&ev[i], true, &bytes);
            wt_alloc_restore();
            if (st == UT_OK) {
                completed = true;
            } else {
                assert_int_equal(st, UT_ENOMEM);
                assert_string_equal(bytes.data, "x");
            }
            ut_buf_free(&bytes);
        }
        assert_true(completed);
    }
}

/* The ack {"ack": chunk} at every length where msgpack changes the form of
 * a str (fixstr, str8, str16, str32), up to the longest chunk the decoder
 * takes: each decodes to one map holding the chunk whole, and nothing
 * after it. (At 65 536 bytes a str16 header cannot hold the length.) */
static void test_pack_ack_at_every_str_form(void **state)
{
    (void)state;
    static const size_t lengths[] = {0, 1, 31, 32, 255, 256, 65535, UT_WIRE_STR_MAX_BYTES};
    char *chunk = malloc(UT_WIRE_STR_MAX_BYTES);
    assert_non_null(chunk);
    for (size_t i = 0; i < UT_WIRE_STR_MAX_BYTES; i++)
        chunk[i] = (char)(i * 7 + 1);
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        size_t len = lengths[i];
        ut_buf bytes = UT_BUF_INIT;
        ut_buf_append_cstr(&bytes, "x");
        assert_int_equal(ut_wire_pack_ack(ut_str_from(chunk, len), &bytes), UT_OK);
        msgpack_unpacked msg;
        msgpack_unpacked_init(&msg);
        size_t off = 1;
        assert_int_equal(msgpack_unpack_next(&msg, bytes.data, bytes.len, &off), MSGPACK_UNPACK_SUCCESS);
        if (off != bytes.len)
            fail_msg("a chunk of %zu bytes: %zu bytes follow the ack", len, bytes.len - off);
        const msgpack_object *o = &msg.data;
        assert_int_equal(o->type, MSGPACK_OBJECT_MAP);
        assert_int_equal(o->via.map.size, 1);
        const msgpack_object_kv *kv = o->via.map.ptr;
        assert_int_equal(kv->key.type, MSGPACK_OBJECT_STR);
        assert_int_equal(kv->key.via.str.size, 3);
        assert_memory_equal(kv->key.via.str.ptr, "ack", 3);
        assert_int_equal(kv->val.type, MSGPACK_OBJECT_STR);
        if (kv->val.via.str.size != len)
            fail_msg("a chunk of %zu bytes came back as %u bytes", len, kv->val.via.str.size);
        if (len)
            assert_memory_equal(kv->val.via.str.ptr, chunk, len);
        msgpack_unpacked_destroy(&msg);
        ut_buf_free(&bytes);
    }
    free(chunk);
}

/* Out of memory, the ack appends nothing. */
static void test_pack_ack_out_of_memory(void **state)
{
    (void)state;
    ut_buf bytes = UT_BUF_INIT;
    ut_buf_append_cstr(&bytes, "x");
    wt_alloc_fail_after(0);
    ut_status st = ut_wire_pack_ack(UT_STR_LIT("a chunk id longer than the buffer has room for: 64 bytes and more"),
                                    &bytes);
    wt_alloc_restore();
    assert_int_equal(st, UT_ENOMEM);
    assert_int_equal(bytes.len, 1);
    assert_string_equal(bytes.data, "x");
    ut_buf_free(&bytes);
}

/* Every word of every vocabulary (ut_nav_how_names and the others, the one
 * table the packer and the validator share) packs and decodes back to the
 * same value. */
static void test_pack_round_trip_every_word(void **state)
{
    (void)state;
    ut_event ev[64];
    size_t n = 0;
    const int64_t t = 1718000000000000;
    for (int how = 0; how < UT_NAV__COUNT; how++)
        ev[n++] = (ut_event){.kind = UT_KIND_NAV, .time_us = t, .tab = S("t"), .url = S("/"), .title = S("T"),
                             .how = (ut_nav_how)how};
    for (int k = 0; k < UT_CTX__COUNT; k++) {
        ut_event click = {.kind = UT_KIND_CLICK, .time_us = t, .tab = S("t"), .role = S("button"),
                          .name = S("B"), .el = S("b"), .sort = (ut_sort)(k % UT_SORT__COUNT),
                          .state_set = (uint8_t)((1u << UT_STATE__COUNT) - 1), .state_on = (uint8_t)k};
        click.ctx.kind = (ut_ctx_kind)k;
        if (k == UT_CTX_ROW) {
            click.ctx.cells[0] = S("cell");
            click.ctx.ncells = 1;
        } else if (k != UT_CTX_NONE) {
            click.ctx.name = S("ctx");
        }
        ev[n++] = click;
    }
    for (int level = 0; level < UT_LEVEL__COUNT; level++)
        ev[n++] = (ut_event){.kind = UT_KIND_ALERT, .time_us = t, .tab = S("t"), .role = S("alert"),
                             .text = S("x"), .level = (ut_level)level};
    check_round_trip(ev, n, false);
}

int wt_run_pack_tests(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_round_trip_every_kind),
        cmocka_unit_test(test_pack_round_trip_with_receive_time),
        cmocka_unit_test(test_pack_round_trip_every_word),
        cmocka_unit_test(test_pack_is_message_mode_with_event_time),
        cmocka_unit_test(test_pack_refuses_what_event_time_cannot_hold),
        cmocka_unit_test(test_pack_out_of_memory_walk),
        cmocka_unit_test(test_pack_ack_at_every_str_form),
        cmocka_unit_test(test_pack_ack_out_of_memory),
    };
    return cmocka_run_group_tests_name("pack", tests, NULL, NULL);
}

/* Tests of src/record: the frame writer, the reader and its damage
 * reports, the meta entry and file names.
 *
 * Events are built here in C, of every kind and with varied text. An event
 * is compared with what the reader gives back by packing both with
 * ut_wire_pack_event: the same bytes mean the same event, rt included. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader */
#include <zstd.h>

#include "uitrail/record.h"
#include "uitrail/wire.h"

/* ---- Events ---- */

#define RECS_PER_MUTATION 6

typedef struct test_event {
    ut_event ev;
    char tab[24];
    char url[80];
    char title[48];
    char name[64];
    char el[24];
    char text[200];
    char cells[2][32];
    char rec_els[RECS_PER_MUTATION][16];
    ut_mut_rec recs[RECS_PER_MUTATION];
} test_event;

static const char *const words[] = {
    "Blue", "Widget", "Edit", "Item", "Apply", "Filters", "Catalog", "Price", "Status",
    "Published", "SKU-1234", "Save", "Cancel", "Orders", "Red", "Gadget", "Loading", "Done",
};
#define N_WORDS (sizeof words / sizeof words[0])

static uint32_t next_random(uint32_t *state)
{
    /* xorshift32: varied but reproducible text, so frames are not
     * trivially compressible and every run sees the same bytes. */
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

static void random_words(uint32_t *rng, char *out, size_t cap, unsigned n)
{
    size_t len = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        const char *w = words[next_random(rng) % N_WORDS];
        int k = snprintf(out + len, cap - len, "%s%s", i ? " " : "", w);
        if (k < 0 || (size_t)k >= cap - len)
            break;
        len += (size_t)k;
    }
}

static ut_str s(const char *c)
{
    return ut_str_cstr(c);
}

/* Fills `t` with event number `i` of a session: nav, click, change, alert,
 * dialog and mutation in turn, 40 ms apart, received 5 ms later. */
static void make_event(test_event *t, unsigned i, const char *tab)
{
    static const ut_kind cycle[] = {UT_KIND_NAV, UT_KIND_CLICK, UT_KIND_MUTATION, UT_KIND_CHANGE,
                                    UT_KIND_MUTATION, UT_KIND_ALERT, UT_KIND_DIALOG, UT_KIND_MUTATION};
    uint32_t rng = 2463534242u ^ (i * 2654435761u);
    memset(t, 0, sizeof *t);
    snprintf(t->tab, sizeof t->tab, "%s", tab);
    ut_event *ev = &t->ev;
    ev->kind = cycle[i % (sizeof cycle / sizeof cycle[0])];
    ev->time_us = 1706711525000000 + (int64_t)i * 40000 + (int64_t)(next_random(&rng) % 1000);
    ev->rt_us = ev->time_us + 5000;
    ev->tab = s(t->tab);
    ev->has_seq = true;
    ev->seq = i + 1;
    snprintf(t->el, sizeof t->el, "e%u", next_random(&rng) % 97);

    switch (ev->kind) {
    case UT_KIND_NAV:
        snprintf(t->url, sizeof t->url, "https://shop.example/catalog/%u?page=%u", i, next_random(&rng) % 9);
        random_words(&rng, t->title, sizeof t->title, 2);
        ev->url = s(t->url);
        ev->title = s(t->title);
        ev->how = (ut_nav_how)(next_random(&rng) % UT_NAV__COUNT);
        ev->has_tz = true;
        ev->tz_min = 60;
        break;
    case UT_KIND_CLICK:
        ev->role = s("button");
        random_words(&rng, t->name, sizeof t->name, 2);
        ev->name = s(t->name);
        ev->el = s(t->el);
        ev->ctx.kind = UT_CTX_ROW;
        random_words(&rng, t->cells[0], sizeof t->cells[0], 2);
        snprintf(t->cells[1], sizeof t->cells[1], "SKU-%u", next_random(&rng) % 10000);
        ev->ctx.cells[0] = s(t->cells[0]);
        ev->ctx.cells[1] = s(t->cells[1]);
        ev->ctx.ncells = 2;
        ev->state_set = UT_STATE_EXPANDED;
        ev->state_on = (next_random(&rng) & 1) ? UT_STATE_EXPANDED : 0;
        break;
    case UT_KIND_CHANGE:
        ev->role = s("combobox");
        random_words(&rng, t->name, sizeof t->name, 1);
        ev->name = s(t->name);
        ev->el = s(t->el);
        random_words(&rng, t->text, sizeof t->text, 1);
        ev->value = s(t->text);
        ev->has_value = true;
        break;
    case UT_KIND_ALERT:
        ev->role = s("status");
        random_words(&rng, t->text, sizeof t->text, 6);
        ev->text = s(t->text);
        ev->level = UT_LEVEL_INFO;
        break;
    case UT_KIND_DIALOG:
        ev->dialog_state = (i / 8) % 2 ? UT_DIALOG_CLOSE : UT_DIALOG_OPEN;
        ev->role = s("dialog");
        random_words(&rng, t->name, sizeof t->name, 2);
        ev->name = s(t->name);
        ev->el = s(t->el);
        random_words(&rng, t->text, sizeof t->text, 12);
        ev->text = s(t->text);
        break;
    case UT_KIND_MUTATION:
        ev->dom_elements = 400 + next_random(&rng) % 200;
        ev->dom_depth = 12;
        for (unsigned k = 0; k < RECS_PER_MUTATION; k++) {
            snprintf(t->rec_els[k], sizeof t->rec_els[k], "m%u", next_random(&rng) % 500);
            t->recs[k] = (ut_mut_rec){s(t->rec_els[k]), (ut_mut_kind)(k % 3), 3 + k, next_random(&rng) % 50,
                                      next_random(&rng) % 7, next_random(&rng) % 5000};
        }
        ev->recs = t->recs;
        ev->nrecs = RECS_PER_MUTATION;
        ev->busy = next_random(&rng) % 2;
        break;
    default:
        break;
    }
}

/* ---- A session recorded in memory ---- */

#define MAX_EVENTS 2000
#define MAX_FRAMES 1024
#define TEST_TAB "tab-7f3a"
#define TEST_DAEMON "0.1.0-test"

typedef struct session {
    test_event *events;
    size_t n;
    ut_buf packed;                  /* every event packed, in order */
    size_t packed_off[MAX_EVENTS + 1];
} session;

typedef struct recording {
    ut_buf file;
    size_t nframes;
    size_t frame_off[MAX_FRAMES + 1];    /* frame k is file[frame_off[k], frame_off[k+1]) */
    size_t frame_events[MAX_FRAMES + 1]; /* its events are [frame_events[k], frame_events[k+1]) */
    ut_rec_writer_stats stats;
} recording;

static void session_init(session *se, size_t n)
{
    assert_true(n <= MAX_EVENTS);
    se->events = calloc(n, sizeof *se->events);
    assert_non_null(se->events);
    se->n = n;
    se->packed = UT_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        make_event(&se->events[i], (unsigned)i, TEST_TAB);
        se->packed_off[i] = se->packed.len;
        assert_int_equal(ut_wire_pack_event(&se->events[i].ev, true, &se->packed), UT_OK);
    }
    se->packed_off[n] = se->packed.len;
}

static void session_free(session *se)
{
    free(se->events);
    ut_buf_free(&se->packed);
}

static ut_rec_meta test_meta(const session *se)
{
    ut_rec_meta meta = {0};
    meta.time_us = se->n ? se->events[0].ev.time_us : 0;
    meta.daemon = s(TEST_DAEMON);
    meta.tab = s(TEST_TAB);
    meta.has_config = true;
    ut_config_defaults(&meta.config);
    return meta;
}

static void take_frame(recording *rec, ut_str frame, size_t events_before)
{
    if (frame.len == 0)
        return;
    assert_true(rec->nframes < MAX_FRAMES);
    rec->frame_off[rec->nframes] = rec->file.len;
    rec->nframes++;
    rec->frame_events[rec->nframes] = events_before;
    assert_int_equal(ut_buf_append_str(&rec->file, frame), UT_OK);
}

/* Records `se` the way the daemon does: the timer's flush_due before each
 * event when `timer`, append, and a last flush. */
static void record_session(const session *se, const ut_rec_writer_opts *opts, bool timer, recording *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->file = UT_BUF_INIT;
    ut_rec_meta meta = test_meta(se);
    ut_rec_writer *w = NULL;
    char err[128];
    assert_int_equal(ut_rec_writer_new(opts, &meta, &w, err, sizeof err), UT_OK);
    ut_str frame;
    for (size_t i = 0; i < se->n; i++) {
        const ut_event *ev = &se->events[i].ev;
        if (timer) {
            assert_int_equal(ut_rec_writer_flush_due(w, ev->rt_us, &frame), UT_OK);
            take_frame(rec, frame, i);
        }
        assert_int_equal(ut_rec_writer_append(w, ev, &frame), UT_OK);
        take_frame(rec, frame, i + 1);
    }
    assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);
    take_frame(rec, frame, se->n);
    rec->frame_off[rec->nframes] = rec->file.len;
    ut_rec_writer_stats_get(w, &rec->stats);
    ut_rec_writer_free(w);
}

/* ---- What a read gives back ---- */

#define MAX_DAMAGE 16

typedef struct collected {
    ut_buf packed; /* every decoded event, packed again */
    size_t events;
    size_t event_off[MAX_EVENTS + 1]; /* where each one starts in `packed` */
    size_t rejects;
    int metas;
    char meta_tab[UT_TAB_MAX_BYTES + 1];
    char meta_daemon[64];
    ut_rec_meta meta;
    size_t frames;
    uint64_t frame_bytes;
    uint64_t next_offset; /* frames and damage must tile the data */
    size_t ndamage;
    ut_rec_step damage[MAX_DAMAGE];
} collected;

static ut_status collect_event(void *ud, const ut_event *ev)
{
    collected *c = ud;
    assert_true(c->events < MAX_EVENTS);
    ut_status st = ut_wire_pack_event(ev, true, &c->packed);
    if (st == UT_OK) {
        c->events++;
        c->event_off[c->events] = c->packed.len;
    }
    return st;
}

static void collect_reject(void *ud, ut_reject why, const char *detail)
{
    collected *c = ud;
    (void)why;
    (void)detail;
    c->rejects++;
}

static void collect_meta(void *ud, const ut_rec_meta *meta)
{
    collected *c = ud;
    c->metas++;
    c->meta = *meta;
    snprintf(c->meta_tab, sizeof c->meta_tab, "%.*s", (int)meta->tab.len, meta->tab.ptr);
    snprintf(c->meta_daemon, sizeof c->meta_daemon, "%.*s", (int)meta->daemon.len, meta->daemon.ptr);
}

static void collect_frame(void *ud, const ut_rec_step *frame)
{
    collected *c = ud;
    c->frames++;
    c->frame_bytes += frame->bytes;
    assert_int_equal(frame->offset, c->next_offset);
    c->next_offset += frame->bytes;
}

static void collect_damage(void *ud, const ut_rec_step *d)
{
    collected *c = ud;
    assert_true(c->ndamage < MAX_DAMAGE);
    assert_true(strlen(d->detail) > 0);
    assert_true(d->bytes > 0);
    c->damage[c->ndamage++] = *d;
    /* Damage inside a good frame's content is covered by that frame. */
    if (d->damage != UT_REC_DAMAGE_BAD_CONTENT) {
        assert_int_equal(d->offset, c->next_offset);
        c->next_offset += d->bytes;
    }
}

/* Reads `len` bytes of recording into `c`; returns ut_rec_read's status. */
static ut_status read_recording(const void *data, size_t len, collected *c)
{
    memset(c, 0, sizeof *c);
    c->packed = UT_BUF_INIT;
    ut_rec_handlers h = {collect_meta, collect_frame, collect_damage, c};
    ut_fwd_sink sink = {collect_event, collect_reject, NULL, NULL, c};
    ut_rec_reader *r = NULL;
    ut_status st = ut_rec_reader_new(&r);
    if (st != UT_OK)
        return st;
    st = ut_rec_read(r, data, len, &h, &sink);
    ut_rec_reader_free(r);
    if (st == UT_OK)
        assert_int_equal(c->next_offset, len);
    return st;
}

static void collected_free(collected *c)
{
    ut_buf_free(&c->packed);
}

/* The packed bytes of the events of frames [first, last). */
static void expected_frames(const session *se, const recording *rec, size_t first, size_t last, ut_buf *out)
{
    size_t a = rec->frame_events[first], b = rec->frame_events[last];
    assert_int_equal(ut_buf_append(out, se->packed.data + se->packed_off[a], se->packed_off[b] - se->packed_off[a]),
                     UT_OK);
}

static void assert_events_equal(const ut_buf *got, const ut_buf *want)
{
    assert_int_equal(got->len, want->len);
    assert_memory_equal(got->data, want->data, want->len);
}

static size_t damaged_bytes(const collected *c)
{
    size_t total = 0;
    for (size_t i = 0; i < c->ndamage; i++)
        total += c->damage[i].bytes;
    return total;
}

/* ---- Round trip ---- */

static void test_record_round_trip(void **state)
{
    (void)state;
    session se;
    session_init(&se, MAX_EVENTS);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    recording rec;
    record_session(&se, &opts, true, &rec);
    assert_true(rec.nframes > 2);
    assert_int_equal(rec.stats.frames, rec.nframes);
    assert_int_equal(rec.stats.entries, se.n + 1);
    assert_int_equal(rec.stats.compressed_bytes, rec.file.len);
    assert_int_equal(rec.stats.pending_entries, 0);
    assert_true(rec.stats.content_bytes > rec.stats.compressed_bytes);

    collected c;
    assert_int_equal(read_recording(rec.file.data, rec.file.len, &c), UT_OK);
    assert_events_equal(&c.packed, &se.packed);
    assert_int_equal(c.events, se.n);
    assert_int_equal(c.rejects, 0);
    assert_int_equal(c.metas, 1);
    assert_string_equal(c.meta_tab, TEST_TAB);
    assert_int_equal(c.frames, rec.nframes);
    assert_int_equal(c.frame_bytes, rec.file.len);
    assert_int_equal(c.ndamage, 0);

    collected_free(&c);
    ut_buf_free(&rec.file);
    session_free(&se);
}

/* Two recordings made by writers sharing one compressor, their appends
 * interleaved, read back exactly like recordings made apart. */
static void test_record_shared_compressor(void **state)
{
    (void)state;
    session se;
    session_init(&se, MAX_EVENTS);
    ut_rec_writer_opts own;
    ut_rec_writer_opts_defaults(&own);
    recording alone;
    record_session(&se, &own, true, &alone);

    ut_rec_writer_opts shared = own;
    assert_int_equal(ut_rec_compressor_new(UT_REC_ZSTD_LEVEL_DEFAULT, &shared.compressor), UT_OK);
    ut_rec_meta meta = test_meta(&se);
    ut_rec_writer *w[2];
    ut_buf file[2] = {UT_BUF_INIT, UT_BUF_INIT};
    char err[128];
    for (int k = 0; k < 2; k++)
        assert_int_equal(ut_rec_writer_new(&shared, &meta, &w[k], err, sizeof err), UT_OK);
    ut_str frame;
    for (size_t i = 0; i < se.n; i++) {
        for (int k = 0; k < 2; k++) {
            assert_int_equal(ut_rec_writer_flush_due(w[k], se.events[i].ev.rt_us, &frame), UT_OK);
            ut_buf_append_str(&file[k], frame);
            assert_int_equal(ut_rec_writer_append(w[k], &se.events[i].ev, &frame), UT_OK);
            ut_buf_append_str(&file[k], frame);
        }
    }
    for (int k = 0; k < 2; k++) {
        assert_int_equal(ut_rec_writer_flush(w[k], &frame), UT_OK);
        ut_buf_append_str(&file[k], frame);
        ut_rec_writer_free(w[k]);
        assert_false(file[k].oom);
        assert_int_equal(file[k].len, alone.file.len);
        assert_memory_equal(file[k].data, alone.file.data, alone.file.len);
        ut_buf_free(&file[k]);
    }
    ut_rec_compressor_free(shared.compressor);
    ut_buf_free(&alone.file);
    session_free(&se);
}

/* Every frame is a zstd frame with its content size and checksum, holds
 * whole entries, and decodes without the frames around it. */
static void test_record_frames_decode_alone(void **state)
{
    (void)state;
    session se;
    session_init(&se, 600);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    opts.frame_bytes = 8192;
    recording rec;
    record_session(&se, &opts, false, &rec);
    assert_true(rec.nframes > 3);

    for (size_t k = 0; k < rec.nframes; k++) {
        const char *frame = rec.file.data + rec.frame_off[k];
        size_t len = rec.frame_off[k + 1] - rec.frame_off[k];
        ZSTD_frameHeader fh;
        assert_int_equal(ZSTD_getFrameHeader(&fh, frame, len), 0);
        assert_int_equal(fh.checksumFlag, 1);
        assert_true(fh.frameContentSize != ZSTD_CONTENTSIZE_UNKNOWN);
        assert_int_equal(ZSTD_findFrameCompressedSize(frame, len), len);

        char *content = malloc(fh.frameContentSize + 1);
        assert_non_null(content);
        assert_int_equal(ZSTD_decompress(content, fh.frameContentSize, frame, len), fh.frameContentSize);
        ut_str rest = ut_str_from(content, fh.frameContentSize);
        ut_rec_meta meta;
        size_t consumed;
        assert_int_equal(ut_rec_meta_parse(rest, &meta, &consumed), k == 0 ? UT_OK : UT_ENOENT);
        rest.ptr += consumed;
        rest.len -= consumed;

        collected c = {.packed = UT_BUF_INIT};
        ut_fwd_sink sink = {collect_event, collect_reject, NULL, NULL, &c};
        ut_fwd_decoder *d = NULL;
        assert_int_equal(ut_fwd_decoder_new(&d), UT_OK);
        assert_int_equal(ut_fwd_decoder_feed(d, rest.ptr, rest.len, &sink), UT_OK);
        assert_int_equal(ut_fwd_decoder_pending(d), 0);
        ut_fwd_decoder_free(d);

        ut_buf want = UT_BUF_INIT;
        expected_frames(&se, &rec, k, k + 1, &want);
        assert_events_equal(&c.packed, &want);
        /* Cut by size: every frame but the last reached the cut. */
        if (k + 1 < rec.nframes)
            assert_true(fh.frameContentSize >= opts.frame_bytes);
        ut_buf_free(&want);
        collected_free(&c);
        free(content);
    }
    ut_buf_free(&rec.file);
    session_free(&se);
}

/* Frames are cut when the first queued event is frame_interval_ms old. */
static void test_record_cut_by_time(void **state)
{
    (void)state;
    session se;
    session_init(&se, 100); /* 40 ms apart: 4 s */
    ut_rec_meta meta = test_meta(&se);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    ut_rec_writer *w = NULL;
    char err[128];
    assert_int_equal(ut_rec_writer_new(&opts, &meta, &w, err, sizeof err), UT_OK);

    /* The meta entry alone starts no clock. */
    assert_int_equal(ut_rec_writer_deadline(w), INT64_MAX);
    ut_str frame;
    int64_t first_rt = se.events[0].ev.rt_us;
    assert_int_equal(ut_rec_writer_append(w, &se.events[0].ev, &frame), UT_OK);
    assert_int_equal(frame.len, 0);
    assert_int_equal(ut_rec_writer_deadline(w), first_rt + 1000000);

    size_t frames = 0;
    for (size_t i = 1; i < se.n; i++) {
        const ut_event *ev = &se.events[i].ev;
        int64_t due = ut_rec_writer_deadline(w);
        assert_int_equal(ut_rec_writer_flush_due(w, ev->rt_us, &frame), UT_OK);
        if (ev->rt_us < due) {
            assert_int_equal(frame.len, 0);
        } else {
            assert_true(frame.len > 0);
            assert_int_equal(ut_rec_writer_deadline(w), INT64_MAX);
            frames++;
        }
        assert_int_equal(ut_rec_writer_append(w, ev, &frame), UT_OK);
        assert_int_equal(frame.len, 0);
    }
    /* 4 s of events, a frame per second, the last one still pending. */
    assert_int_equal(frames, 3);
    ut_rec_writer_stats st;
    ut_rec_writer_stats_get(w, &st);
    assert_true(st.pending_entries > 0);
    assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);
    assert_true(frame.len > 0);
    assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);
    assert_int_equal(frame.len, 0);
    ut_rec_writer_stats_get(w, &st);
    assert_int_equal(st.frames, 4);
    assert_int_equal(st.entries, se.n + 1);
    assert_int_equal(st.pending_entries, 0);
    ut_rec_writer_free(w);
    session_free(&se);
}

/* ---- Damage ---- */

/* A file cut at any byte of its last frame keeps every earlier frame and
 * says exactly how much it dropped. */
static void test_record_torn_tail_every_offset(void **state)
{
    (void)state;
    session se;
    session_init(&se, 120);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    opts.frame_bytes = 2048;
    recording rec;
    record_session(&se, &opts, false, &rec);
    assert_true(rec.nframes >= 3);
    size_t last = rec.nframes - 1;
    size_t last_start = rec.frame_off[last];

    ut_buf want = UT_BUF_INIT;
    expected_frames(&se, &rec, 0, last, &want);
    for (size_t cut = last_start; cut < rec.file.len; cut++) {
        collected c;
        assert_int_equal(read_recording(rec.file.data, cut, &c), UT_OK);
        assert_events_equal(&c.packed, &want);
        assert_int_equal(c.frames, last);
        assert_int_equal(c.metas, 1);
        if (cut == last_start) {
            assert_int_equal(c.ndamage, 0);
        } else {
            assert_int_equal(c.ndamage, 1);
            assert_int_equal(c.damage[0].damage, UT_REC_DAMAGE_TORN_TAIL);
            assert_int_equal(c.damage[0].offset, last_start);
            assert_int_equal(c.damage[0].bytes, cut - last_start);
            assert_int_equal(c.damage[0].frame, last);
            assert_non_null(strstr(c.damage[0].detail, "torn tail"));
        }
        collected_free(&c);
    }
    ut_buf_free(&want);
    ut_buf_free(&rec.file);
    session_free(&se);
}

/* Any byte of the middle frame flipped: that frame is rejected (or, for a
 * bit zstd does not use, read unchanged) and the frames around it are
 * read in full. */
static void test_record_flipped_byte_middle_frame(void **state)
{
    (void)state;
    session se;
    session_init(&se, 60);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    opts.frame_bytes = 2048;
    recording rec;
    record_session(&se, &opts, false, &rec);
    assert_true(rec.nframes >= 3);
    size_t mid = rec.nframes / 2;
    size_t mid_start = rec.frame_off[mid], mid_end = rec.frame_off[mid + 1];

    ut_buf around = UT_BUF_INIT;
    expected_frames(&se, &rec, 0, mid, &around);
    expected_frames(&se, &rec, mid + 1, rec.nframes, &around);
    size_t rejected = 0;
    for (size_t at = mid_start; at < mid_end; at++) {
        rec.file.data[at] ^= (char)0xff;
        collected c;
        assert_int_equal(read_recording(rec.file.data, rec.file.len, &c), UT_OK);
        if (c.ndamage == 0) {
            assert_events_equal(&c.packed, &se.packed);
        } else {
            rejected++;
            assert_events_equal(&c.packed, &around);
            assert_int_equal(damaged_bytes(&c), mid_end - mid_start);
            assert_int_equal(c.damage[0].offset, mid_start);
            for (size_t i = 0; i < c.ndamage; i++)
                assert_true(c.damage[i].damage == UT_REC_DAMAGE_BAD_FRAME
                            || c.damage[i].damage == UT_REC_DAMAGE_OVERSIZE
                            || c.damage[i].damage == UT_REC_DAMAGE_GARBAGE);
        }
        assert_int_equal(c.metas, 1);
        collected_free(&c);
        rec.file.data[at] ^= (char)0xff;
    }
    print_message("%zu of %zu flips rejected\n", rejected, mid_end - mid_start);
    /* Outside the few unused header bits, every flip is caught. */
    assert_true(rejected + 4 >= mid_end - mid_start);

    /* A flip in the compressed payload is a checksum or block error of
     * that frame alone. */
    size_t at = mid_start + (mid_end - mid_start) / 2;
    rec.file.data[at] ^= (char)0xff;
    collected c;
    assert_int_equal(read_recording(rec.file.data, rec.file.len, &c), UT_OK);
    assert_int_equal(c.ndamage, 1);
    assert_int_equal(c.damage[0].damage, UT_REC_DAMAGE_BAD_FRAME);
    assert_int_equal(c.damage[0].frame, mid);
    assert_int_equal(c.frames, rec.nframes - 1);
    collected_free(&c);

    ut_buf_free(&around);
    ut_buf_free(&rec.file);
    session_free(&se);
}

/* Compresses `content` into one frame, with or without its size. */
static void make_frame(const void *content, size_t len, bool with_size, ut_buf *out)
{
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    assert_non_null(cctx);
    assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)));
    size_t bound = ZSTD_compressBound(len);
    assert_int_equal(ut_buf_reserve(out, bound), UT_OK);
    size_t n;
    if (with_size) {
        n = ZSTD_compress2(cctx, out->data + out->len, bound, content, len);
    } else {
        /* Streaming without a pledged size leaves the size out. */
        ZSTD_outBuffer o = {out->data + out->len, bound, 0};
        ZSTD_inBuffer in = {content, len, 0};
        size_t left;
        do {
            left = ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end);
            assert_false(ZSTD_isError(left));
        } while (left != 0);
        n = o.pos;
    }
    assert_false(ZSTD_isError(n));
    out->len += n;
    ZSTD_freeCCtx(cctx);
}

/* ---- Hostile and odd files, as a table ---- */

typedef struct file_case {
    const char *name;
    void (*build)(ut_buf *file, const recording *good, const session *se);
    bool events_of_good;    /* the events of `good` must come back... */
    bool skip_first_frame;  /* ...all but those of its first frame */
    int metas;
    ut_rec_damage damage[3]; /* expected, in order, ending with NONE */
} file_case;

static void build_empty(ut_buf *f, const recording *g, const session *se)
{
    (void)f, (void)g, (void)se;
}

static void build_garbage(ut_buf *f, const recording *g, const session *se)
{
    (void)g, (void)se;
    for (int i = 0; i < 100; i++)
        ut_buf_append_cstr(f, "x");
}

static void build_magic_only(ut_buf *f, const recording *g, const session *se)
{
    (void)g, (void)se;
    ut_buf_append(f, "\x28\xb5\x2f", 3);
}

static void build_bad_header_then_good(ut_buf *f, const recording *g, const session *se)
{
    (void)se;
    ut_buf_append(f, "\x28\xb5\x2f\xfd\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 14);
    ut_buf_append(f, g->file.data, g->file.len);
}

static void build_garbage_then_good(ut_buf *f, const recording *g, const session *se)
{
    build_garbage(f, g, se);
    ut_buf_append(f, g->file.data, g->file.len);
}

static void build_good_then_garbage(ut_buf *f, const recording *g, const session *se)
{
    ut_buf_append(f, g->file.data, g->file.len);
    build_garbage(f, g, se);
}

static void build_good_without_first_frame(ut_buf *f, const recording *g, const session *se)
{
    (void)se;
    ut_buf_append(f, g->file.data + g->frame_off[1], g->file.len - g->frame_off[1]);
}

static void build_bad_msgpack_frame(ut_buf *f, const recording *g, const session *se)
{
    (void)se;
    ut_buf_append(f, g->file.data, g->frame_off[1]);
    make_frame("\xc1\xc1\xc1", 3, true, f);
    ut_buf_append(f, g->file.data + g->frame_off[1], g->file.len - g->frame_off[1]);
}

static void build_entry_cut_at_end(ut_buf *f, const recording *g, const session *se)
{
    ut_buf_append(f, g->file.data, g->file.len);
    make_frame(se->packed.data, 7, true, f);
}

static void build_skippable_frame(ut_buf *f, const recording *g, const session *se)
{
    (void)se;
    ut_buf_append(f, g->file.data, g->frame_off[1]);
    ut_buf_append(f, "\x5f\x2a\x4d\x18\x03\x00\x00\x00" "abc", 11);
    ut_buf_append(f, g->file.data + g->frame_off[1], g->file.len - g->frame_off[1]);
}

static void build_unsized_frames(ut_buf *f, const recording *g, const session *se)
{
    /* The same session in one frame without a content size, as `zstd`
     * streaming would write it. */
    (void)se;
    ut_buf content = UT_BUF_INIT;
    for (size_t k = 0; k < g->nframes; k++) {
        const char *frame = g->file.data + g->frame_off[k];
        size_t len = g->frame_off[k + 1] - g->frame_off[k];
        unsigned long long n = ZSTD_getFrameContentSize(frame, len);
        assert_int_equal(ut_buf_reserve(&content, n), UT_OK);
        assert_int_equal(ZSTD_decompress(content.data + content.len, n, frame, len), n);
        content.len += n;
    }
    make_frame(content.data, content.len, false, f);
    ut_buf_free(&content);
}

#define ALL true
static const file_case file_cases[] = {
    {"empty", build_empty, false, false, 0, {UT_REC_DAMAGE_NONE}},
    {"garbage", build_garbage, false, false, 0, {UT_REC_DAMAGE_GARBAGE, UT_REC_DAMAGE_NONE}},
    {"magic only", build_magic_only, false, false, 0, {UT_REC_DAMAGE_TORN_TAIL, UT_REC_DAMAGE_NONE}},
    {"bad header, then a recording", build_bad_header_then_good, ALL, false, 1,
     {UT_REC_DAMAGE_BAD_FRAME, UT_REC_DAMAGE_NONE}},
    {"garbage, then a recording", build_garbage_then_good, ALL, false, 1,
     {UT_REC_DAMAGE_GARBAGE, UT_REC_DAMAGE_NONE}},
    {"a recording, then garbage", build_good_then_garbage, ALL, false, 1,
     {UT_REC_DAMAGE_GARBAGE, UT_REC_DAMAGE_NONE}},
    {"first frame missing", build_good_without_first_frame, ALL, true, 0, {UT_REC_DAMAGE_NONE}},
    {"frame of bad msgpack", build_bad_msgpack_frame, ALL, false, 1,
     {UT_REC_DAMAGE_BAD_CONTENT, UT_REC_DAMAGE_NONE}},
    {"entry cut at the end", build_entry_cut_at_end, ALL, false, 1,
     {UT_REC_DAMAGE_BAD_CONTENT, UT_REC_DAMAGE_NONE}},
    {"skippable frame", build_skippable_frame, ALL, false, 1, {UT_REC_DAMAGE_NONE}},
    {"one frame without a size", build_unsized_frames, ALL, false, 1, {UT_REC_DAMAGE_NONE}},
};

static void test_record_hostile_files(void **state)
{
    (void)state;
    session se;
    session_init(&se, 40);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    opts.frame_bytes = 1024;
    recording good;
    record_session(&se, &opts, false, &good);
    assert_true(good.nframes >= 3);

    for (size_t i = 0; i < sizeof file_cases / sizeof file_cases[0]; i++) {
        const file_case *fc = &file_cases[i];
        ut_buf file = UT_BUF_INIT;
        fc->build(&file, &good, &se);
        assert_false(file.oom);
        collected c;
        ut_status st = read_recording(file.data, file.len, &c);
        print_message("case '%s': %zu events, %zu damage%s%s\n", fc->name, c.events, c.ndamage,
                      c.ndamage ? ": " : "", c.ndamage ? c.damage[0].detail : "");
        assert_int_equal(st, UT_OK);

        ut_buf want = UT_BUF_INIT;
        if (fc->events_of_good)
            expected_frames(&se, &good, fc->skip_first_frame ? 1 : 0, good.nframes, &want);
        assert_events_equal(&c.packed, &want);
        assert_int_equal(c.metas, fc->metas);
        assert_int_equal(c.rejects, 0);
        size_t n = 0;
        while (fc->damage[n] != UT_REC_DAMAGE_NONE)
            n++;
        assert_int_equal(c.ndamage, n);
        for (size_t k = 0; k < n; k++)
            assert_int_equal(c.damage[k].damage, fc->damage[k]);
        ut_buf_free(&want);
        collected_free(&c);
        ut_buf_free(&file);
    }
    ut_buf_free(&good.file);
    session_free(&se);
}

/* The reader's step interface, used alone: empty data ends at once. */
static void test_record_empty_file(void **state)
{
    (void)state;
    ut_rec_reader *r = NULL;
    assert_int_equal(ut_rec_reader_new(&r), UT_OK);
    ut_rec_step step;
    ut_rec_reader_reset(r, NULL, 0);
    assert_int_equal(ut_rec_reader_next(r, &step), UT_OK);
    assert_int_equal(step.kind, UT_REC_STEP_END);
    ut_rec_reader_reset(r, "", 0);
    assert_int_equal(ut_rec_reader_next(r, &step), UT_OK);
    assert_int_equal(step.kind, UT_REC_STEP_END);
    assert_int_equal(ut_rec_reader_next(r, &step), UT_OK);
    assert_int_equal(step.kind, UT_REC_STEP_END);

    collected c;
    assert_int_equal(read_recording("", 0, &c), UT_OK);
    assert_int_equal(c.frames + c.events + c.ndamage + (size_t)c.metas, 0);
    collected_free(&c);
    ut_rec_reader_free(r);
}

/* A frame declaring more content than UT_REC_FRAME_CONTENT_MAX_BYTES is
 * skipped unread; so is one without a size that turns out larger. One at
 * the limit is read. */
static void test_record_frame_over_limit(void **state)
{
    (void)state;
    size_t big = UT_REC_FRAME_CONTENT_MAX_BYTES + 1;
    char *zeros = calloc(1, big);
    assert_non_null(zeros);
    static const struct {
        size_t len;
        bool with_size;
        ut_rec_step_kind kind;
    } cases[] = {
        {UT_REC_FRAME_CONTENT_MAX_BYTES + 1, true, UT_REC_STEP_DAMAGE},
        {UT_REC_FRAME_CONTENT_MAX_BYTES + 1, false, UT_REC_STEP_DAMAGE},
        {UT_REC_FRAME_CONTENT_MAX_BYTES, true, UT_REC_STEP_FRAME},
        {UT_REC_FRAME_CONTENT_MAX_BYTES, false, UT_REC_STEP_FRAME},
    };
    char limit[16];
    snprintf(limit, sizeof limit, "%u", UT_REC_FRAME_CONTENT_MAX_BYTES);
    ut_rec_reader *r = NULL;
    assert_int_equal(ut_rec_reader_new(&r), UT_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_buf file = UT_BUF_INIT;
        make_frame(zeros, cases[i].len, cases[i].with_size, &file);
        size_t first_len = file.len;
        make_frame("\x90", 1, true, &file); /* a small frame after it */

        ut_rec_step step;
        ut_rec_reader_reset(r, file.data, file.len);
        assert_int_equal(ut_rec_reader_next(r, &step), UT_OK);
        assert_int_equal(step.kind, cases[i].kind);
        assert_int_equal(step.bytes, first_len);
        if (step.kind == UT_REC_STEP_DAMAGE) {
            assert_int_equal(step.damage, UT_REC_DAMAGE_OVERSIZE);
            assert_non_null(strstr(step.detail, limit));
        } else {
            assert_int_equal(step.content.len, cases[i].len);
        }
        assert_int_equal(ut_rec_reader_next(r, &step), UT_OK);
        assert_int_equal(step.kind, UT_REC_STEP_FRAME);
        assert_int_equal(step.frame, 1);
        assert_int_equal(step.content.len, 1);
        assert_int_equal(ut_rec_reader_next(r, &step), UT_OK);
        assert_int_equal(step.kind, UT_REC_STEP_END);
        ut_buf_free(&file);
    }
    ut_rec_reader_free(r);
    free(zeros);
}

/* ---- The meta entry ---- */

static const msgpack_object *map_get(const msgpack_object *map, const char *key)
{
    assert_int_equal(map->type, MSGPACK_OBJECT_MAP);
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen(key)
            && memcmp(k->via.str.ptr, key, k->via.str.size) == 0)
            return &map->via.map.ptr[i].val;
    }
    fail_msg("key '%s' missing", key);
    return NULL;
}

static void assert_obj_str(const msgpack_object *o, const char *want)
{
    assert_int_equal(o->type, MSGPACK_OBJECT_STR);
    assert_int_equal(o->via.str.size, strlen(want));
    assert_memory_equal(o->via.str.ptr, want, strlen(want));
}

/* The first entry of the first frame is the meta entry of protocol §5,
 * read here with msgpack-c alone. */
static void test_record_meta_entry(void **state)
{
    (void)state;
    session se;
    session_init(&se, 3);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    recording rec;
    record_session(&se, &opts, false, &rec);
    assert_int_equal(rec.nframes, 1);

    unsigned long long n = ZSTD_getFrameContentSize(rec.file.data, rec.file.len);
    char *content = malloc(n);
    assert_non_null(content);
    assert_int_equal(ZSTD_decompress(content, n, rec.file.data, rec.file.len), n);

    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    assert_int_equal(msgpack_unpack_next(&u, content, n, &off), MSGPACK_UNPACK_SUCCESS);
    const msgpack_object *e = &u.data;
    assert_int_equal(e->type, MSGPACK_OBJECT_ARRAY);
    assert_int_equal(e->via.array.size, 3);
    assert_obj_str(&e->via.array.ptr[0], "uitrail.meta");
    const msgpack_object *t = &e->via.array.ptr[1];
    assert_int_equal(t->type, MSGPACK_OBJECT_EXT);
    assert_int_equal(t->via.ext.type, 0);
    assert_int_equal(t->via.ext.size, 8);
    const unsigned char *b = (const unsigned char *)t->via.ext.ptr;
    uint32_t sec = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    uint32_t nsec = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
    assert_int_equal((int64_t)sec * 1000000 + nsec / 1000, se.events[0].ev.time_us);

    const msgpack_object *rec_map = &e->via.array.ptr[2];
    assert_obj_str(map_get(rec_map, "format"), "uitrail-recording");
    assert_int_equal(map_get(rec_map, "version")->via.u64, 1);
    assert_obj_str(map_get(rec_map, "daemon"), TEST_DAEMON);
    assert_obj_str(map_get(rec_map, "tab"), TEST_TAB);
    ut_config defaults;
    ut_config_defaults(&defaults);
    const msgpack_object *params = map_get(rec_map, "params");
    assert_int_equal(map_get(params, "ring_size")->via.u64, defaults.ring_size);
    assert_int_equal(map_get(params, "debounce_ms")->via.u64, defaults.debounce_ms);
    const msgpack_object *stab = map_get(params, "stab");
    assert_obj_str(map_get(stab, "model"), defaults.stab.model == UT_STAB_MODEL_UITRAIL ? "uitrail" : "domquake");
    assert_true(map_get(stab, "enter_threshold")->via.f64 == defaults.stab.enter_threshold);
    assert_int_equal(map_get(stab, "quiet_ms")->via.u64, defaults.stab.quiet_ms);

    /* What follows is the first event. */
    assert_int_equal(n - off, se.packed_off[3]);
    assert_memory_equal(content + off, se.packed.data, se.packed_off[3]);

    msgpack_unpacked_destroy(&u);
    free(content);
    ut_buf_free(&rec.file);
    session_free(&se);
}

/* Every parameter survives a write and a read. */
static void test_record_meta_params_round_trip(void **state)
{
    (void)state;
    ut_rec_meta in = {0};
    in.time_us = 1706711525123456;
    in.daemon = s("9.9.9");
    in.tab = s("t");
    in.has_config = true;
    ut_config_defaults(&in.config);
    in.config.ring_size = 37;
    in.config.max_tabs = 12345;
    in.config.idle_ms = 999;
    in.config.debounce_ms = 123;
    in.config.reset_on_load = !in.config.reset_on_load;
    in.config.stab.model = UT_STAB_MODEL_DOMQUAKE;
    in.config.stab.enter_threshold = 0.123;
    in.config.stab.exit_threshold = 0.0456;
    in.config.stab.window_ms = 777;
    in.config.stab.decay_half_life_ms = 321;
    in.config.stab.quiet_ms = 654;
    in.config.stab.busy_cap_ms = 4321;
    in.config.stab.churn_min_repeats = 5;
    in.config.stab.churn_rhythm_tolerance = 0.25;
    in.config.stab.leaf_floor = 0.125;

    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    ut_rec_writer *w = NULL;
    char err[128];
    assert_int_equal(ut_rec_writer_new(&opts, &in, &w, err, sizeof err), UT_OK);
    ut_str frame;
    assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);
    collected c;
    assert_int_equal(read_recording(frame.ptr, frame.len, &c), UT_OK);
    assert_int_equal(c.metas, 1);
    assert_int_equal(c.events, 0);
    const ut_rec_meta *out = &c.meta;
    assert_int_equal(out->time_us, in.time_us);
    assert_int_equal(out->version, UT_REC_VERSION);
    assert_string_equal(c.meta_daemon, "9.9.9");
    assert_true(out->has_config);
    assert_int_equal(out->config.ring_size, 37);
    assert_int_equal(out->config.max_tabs, 12345);
    assert_int_equal(out->config.idle_ms, 999);
    assert_int_equal(out->config.debounce_ms, 123);
    assert_int_equal(out->config.reset_on_load, in.config.reset_on_load);
    assert_int_equal(out->config.stab.model, UT_STAB_MODEL_DOMQUAKE);
    assert_true(out->config.stab.enter_threshold == 0.123);
    assert_true(out->config.stab.exit_threshold == 0.0456);
    assert_int_equal(out->config.stab.window_ms, 777);
    assert_int_equal(out->config.stab.decay_half_life_ms, 321);
    assert_int_equal(out->config.stab.quiet_ms, 654);
    assert_int_equal(out->config.stab.busy_cap_ms, 4321);
    assert_int_equal(out->config.stab.churn_min_repeats, 5);
    assert_true(out->config.stab.churn_rhythm_tolerance == 0.25);
    assert_true(out->config.stab.leaf_floor == 0.125);
    assert_null(out->config.redact_patterns);
    collected_free(&c);
    ut_rec_writer_free(w);
}

/* An imported recording's meta (uitrail import) says where it came from
 * and what its format lacks, and reads back the same. */
static void test_record_meta_import_round_trip(void **state)
{
    (void)state;
    ut_rec_meta in = {.time_us = 1706711525123456, .daemon = s("uitrail import 9"), .tab = s("rrweb-1"),
                      .has_import = true};
    in.import.from = s("rrweb");
    in.import.file = s("session.json.gz");
    in.import.n_gaps = 2;
    in.import.gaps[0] = s("isTrusted");
    in.import.gaps[1] = s("time zone");
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    ut_rec_writer *w = NULL;
    char err[128];
    assert_int_equal(ut_rec_writer_new(&opts, &in, &w, err, sizeof err), UT_OK);
    ut_str frame;
    assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);
    ut_rec_reader *r = NULL;
    assert_int_equal(ut_rec_reader_new(&r), UT_OK);
    ut_rec_reader_reset(r, frame.ptr, frame.len);
    ut_rec_step step;
    assert_int_equal(ut_rec_reader_next(r, &step), UT_OK);
    assert_int_equal(step.kind, UT_REC_STEP_FRAME);
    ut_rec_meta out;
    size_t consumed;
    assert_int_equal(ut_rec_meta_parse(step.content, &out, &consumed), UT_OK);
    assert_true(out.has_import);
    assert_false(out.has_config);
    assert_true(ut_str_eq_cstr(out.import.from, "rrweb"));
    assert_true(ut_str_eq_cstr(out.import.file, "session.json.gz"));
    assert_int_equal(out.import.n_gaps, 2);
    assert_true(ut_str_eq_cstr(out.import.gaps[0], "isTrusted"));
    assert_true(ut_str_eq_cstr(out.import.gaps[1], "time zone"));
    ut_rec_reader_free(r);
    ut_rec_writer_free(w);
}

#define META_HEAD "\x93\xacuitrail.meta\xd7\x00\x65\xba\x0b\xe5\x00\x00\x00\x00"
#define FMT "\xa6" "format" "\xb1" "uitrail-recording"
#define VER "\xa7" "version" "\x01"

/* Appends a meta entry of exactly `entry_bytes` bytes (a "pad" string
 * makes up the size), then a heartbeat. */
static void build_padded_meta(size_t entry_bytes, ut_buf *out)
{
    static const char head[] = META_HEAD "\x83" FMT VER "\xa3pad\xda";
    size_t pad = entry_bytes - (sizeof head - 1) - 2;
    assert_true(pad < 65536);
    ut_buf_append(out, head, sizeof head - 1);
    char pad_len[2] = {(char)(pad >> 8), (char)pad};
    ut_buf_append(out, pad_len, 2);
    for (size_t k = 0; k < pad; k++)
        ut_buf_append(out, "p", 1);
    ut_buf_append(out, "\xc0", 1);
    assert_false(out->oom);
}

/* Meta entries built by hand, good and hostile. */
static void test_record_meta_parse_table(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *bytes;
        size_t len;
        ut_status want;
    } cases[] = {
#define CASE(name, lit, want) {name, lit, sizeof(lit) - 1, want}
        CASE("minimal", META_HEAD "\x82" FMT VER, UT_OK),
        CASE("time as integer seconds", "\x93\xacuitrail.meta\xce\x65\xba\x0b\xe5\x82" FMT VER, UT_OK),
        CASE("unknown keys are skipped", META_HEAD "\x83" FMT VER "\xa3new\x90", UT_OK),
        CASE("unknown params are skipped", META_HEAD "\x83" FMT VER "\xa6params\x81\xa3new\x01", UT_OK),
        CASE("another tag", "\x93\xaduitrail.click\x01\x80", UT_ENOENT),
        CASE("not an array", "\xc0", UT_ENOENT),
        CASE("empty", "", UT_ENOENT),
        CASE("wrong format", META_HEAD "\x82\xa6" "format\xa3zip" VER, UT_ECORRUPT),
        CASE("no format", META_HEAD "\x81" VER, UT_ECORRUPT),
        CASE("version as text", META_HEAD "\x82" FMT "\xa7version\xa1" "1", UT_ECORRUPT),
        CASE("record not a map", META_HEAD "\x90", UT_ECORRUPT),
        CASE("bad time", "\x93\xacuitrail.meta\xa1x\x82" FMT VER, UT_ECORRUPT),
        CASE("param of wrong type", META_HEAD "\x83" FMT VER "\xa6params\x81\xa9ring_size\xa1x", UT_ECORRUPT),
        CASE("param over uint32", META_HEAD "\x83" FMT VER "\xa6params\x81\xa9ring_size\xcf\x00\x00\x00\x01\x00\x00\x00\x00",
             UT_ECORRUPT),
        CASE("unknown model", META_HEAD "\x83" FMT VER "\xa6params\x81\xa4stab\x81\xa5model\xa1x", UT_ECORRUPT),
        CASE("truncated", META_HEAD "\x82" FMT, UT_ECORRUPT),
        CASE("array32 of 2^28 elements", META_HEAD "\x83" FMT VER "\xa1x\xdd\x10\x00\x00\x00", UT_ECORRUPT),
        CASE("map32 of 2^31 pairs", META_HEAD "\xdf\x80\x00\x00\x00" FMT VER, UT_ECORRUPT),
        CASE("str32 of 4 GiB", META_HEAD "\x82" FMT "\xa7version\xdb\xff\xff\xff\xff", UT_ECORRUPT),
        CASE("nested too deep", META_HEAD "\x83" FMT VER "\xa1x\x91\x91\x91\x91\x91\x91\x91\x91\x90", UT_ECORRUPT),
        CASE("never-used byte", META_HEAD "\x83" FMT VER "\xa1x\xc1", UT_ECORRUPT),
        CASE("import", META_HEAD "\x83" FMT VER "\xa6import\x83\xa4" "from\xa5rrweb\xa4" "file\xa1" "f\xa4gaps\x91\xa1g",
             UT_OK),
        CASE("import, unknown key skipped", META_HEAD "\x83" FMT VER "\xa6import\x81\xa3new\x01", UT_OK),
        CASE("import not a map", META_HEAD "\x83" FMT VER "\xa6import\x90", UT_ECORRUPT),
        CASE("import from not a string", META_HEAD "\x83" FMT VER "\xa6import\x81\xa4" "from\x01", UT_ECORRUPT),
        CASE("import gaps not an array", META_HEAD "\x83" FMT VER "\xa6import\x81\xa4gaps\xa1g", UT_ECORRUPT),
        CASE("import gap not a string", META_HEAD "\x83" FMT VER "\xa6import\x81\xa4gaps\x91\x01", UT_ECORRUPT),
        CASE("import over UT_REC_IMPORT_GAPS_MAX gaps",
             META_HEAD "\x83" FMT VER "\xa6import\x81\xa4gaps\x99\xa0\xa0\xa0\xa0\xa0\xa0\xa0\xa0\xa0", UT_ECORRUPT),
#undef CASE
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_rec_meta meta;
        size_t consumed = 99;
        ut_status st = ut_rec_meta_parse(ut_str_from(cases[i].bytes, cases[i].len), &meta, &consumed);
        if (st != cases[i].want)
            fail_msg("case '%s': got %s, want %s", cases[i].name, ut_status_str(st), ut_status_str(cases[i].want));
        if (st == UT_OK) {
            assert_int_equal(consumed, cases[i].len);
            assert_int_equal(meta.version, 1);
            assert_int_equal(meta.time_us, 1706691557000000);
        } else if (st == UT_ENOENT) {
            assert_int_equal(consumed, 0);
        }
    }

    /* A meta entry of UT_REC_META_MAX_BYTES is read; one byte more is
     * refused, and the rest of its frame with it (its end cannot be
     * trusted). */
    ut_buf content = UT_BUF_INIT;
    ut_rec_meta meta;
    size_t consumed;
    build_padded_meta(UT_REC_META_MAX_BYTES, &content);
    assert_int_equal(content.len, UT_REC_META_MAX_BYTES + 1);
    assert_int_equal(ut_rec_meta_parse(ut_buf_str(&content), &meta, &consumed), UT_OK);
    assert_int_equal(consumed, UT_REC_META_MAX_BYTES);
    ut_buf_reset(&content);
    build_padded_meta(UT_REC_META_MAX_BYTES + 1, &content);
    assert_int_equal(ut_rec_meta_parse(ut_buf_str(&content), &meta, &consumed), UT_ECORRUPT);
    assert_int_equal(consumed, 0);

    ut_buf file = UT_BUF_INIT;
    make_frame(content.data, content.len, true, &file);
    collected c;
    assert_int_equal(read_recording(file.data, file.len, &c), UT_OK);
    assert_int_equal(c.metas, 0);
    assert_int_equal(c.ndamage, 1);
    assert_int_equal(c.damage[0].damage, UT_REC_DAMAGE_BAD_CONTENT);
    assert_int_equal(c.damage[0].bytes, content.len);
    collected_free(&c);
    ut_buf_free(&file);
    ut_buf_free(&content);
}

/* ---- Writer limits and options ---- */

/* An entry over UT_REC_ENTRY_MAX_BYTES is refused alone. */
static void test_record_entry_over_limit(void **state)
{
    (void)state;
    session se;
    session_init(&se, 3);
    ut_rec_meta meta = test_meta(&se);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    ut_rec_writer *w = NULL;
    char err[128];
    assert_int_equal(ut_rec_writer_new(&opts, &meta, &w, err, sizeof err), UT_OK);

    size_t huge_len = UT_REC_ENTRY_MAX_BYTES + 1;
    char *huge = malloc(huge_len);
    assert_non_null(huge);
    memset(huge, 'a', huge_len);
    ut_event big = se.events[1].ev;
    big.name = ut_str_from(huge, huge_len);

    ut_str frame;
    assert_int_equal(ut_rec_writer_append(w, &se.events[0].ev, &frame), UT_OK);
    assert_int_equal(ut_rec_writer_append(w, &big, &frame), UT_ELIMIT);
    assert_int_equal(frame.len, 0);
    assert_int_equal(ut_rec_writer_append(w, &se.events[1].ev, &frame), UT_OK);
    assert_int_equal(ut_rec_writer_append(w, &se.events[2].ev, &frame), UT_OK);
    assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);

    collected c;
    assert_int_equal(read_recording(frame.ptr, frame.len, &c), UT_OK);
    assert_events_equal(&c.packed, &se.packed);
    assert_int_equal(c.ndamage, 0);
    collected_free(&c);
    ut_rec_writer_free(w);
    free(huge);
    session_free(&se);
}

static void test_record_writer_bad_options(void **state)
{
    (void)state;
    static const struct {
        uint32_t frame_bytes;
        uint32_t interval_ms;
        int level;
        const char *tab;
        const char *says;
    } cases[] = {
        {UT_REC_FRAME_CUT_MIN_BYTES - 1, 1000, 3, "t", "frame size"},
        {UT_REC_FRAME_CUT_MAX_BYTES + 1, 1000, 3, "t", "frame size"},
        {65536, UT_REC_FRAME_INTERVAL_MIN_MS - 1, 3, "t", "frame interval"},
        {65536, UT_REC_FRAME_INTERVAL_MAX_MS + 1, 3, "t", "frame interval"},
        {65536, 1000, 1000, "t", "zstd level"},
        {65536, 1000, 3, "", "tab id"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_rec_writer_opts opts = {cases[i].frame_bytes, cases[i].interval_ms, cases[i].level};
        ut_rec_meta meta = {.tab = s(cases[i].tab), .daemon = s("x")};
        ut_rec_writer *w = (ut_rec_writer *)&opts;
        char err[128];
        assert_int_equal(ut_rec_writer_new(&opts, &meta, &w, err, sizeof err), UT_EINVAL);
        assert_null(w);
        assert_non_null(strstr(err, cases[i].says));
        assert_non_null(strstr(err, "use"));
    }
    /* A tab id over UT_TAB_MAX_BYTES. */
    char tab[UT_TAB_MAX_BYTES + 2];
    memset(tab, 't', sizeof tab - 1);
    tab[sizeof tab - 1] = '\0';
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    ut_rec_meta meta = {.tab = s(tab)};
    ut_rec_writer *w = NULL;
    char err[128];
    assert_int_equal(ut_rec_writer_new(&opts, &meta, &w, err, sizeof err), UT_EINVAL);
    meta.tab.len--;
    assert_int_equal(ut_rec_writer_new(&opts, &meta, &w, err, sizeof err), UT_OK);
    ut_rec_writer_free(w);

    /* A meta entry the reader would refuse is not written. */
    char *daemon = malloc(UT_REC_META_MAX_BYTES);
    assert_non_null(daemon);
    memset(daemon, 'v', UT_REC_META_MAX_BYTES);
    meta.daemon = ut_str_from(daemon, UT_REC_META_MAX_BYTES);
    assert_int_equal(ut_rec_writer_new(&opts, &meta, &w, err, sizeof err), UT_EINVAL);
    assert_null(w);
    assert_non_null(strstr(err, "meta entry"));
    free(daemon);
}

/* ---- File names ---- */

static void test_record_file_name(void **state)
{
    (void)state;
    char long_tab[UT_TAB_MAX_BYTES];
    memset(long_tab, '/', sizeof long_tab);
    static const struct {
        int64_t time_us;
        const char *tab;
        const char *want;
    } cases[] = {
        {1706711525123456, "tab-1", "20240131T143205.123456Z-tab-1.uitrail"},
        {1706711525000000, "a/b c%", "20240131T143205.000000Z-a%2Fb%20c%25.uitrail"},
        {0, "..", "19700101T000000.000000Z-...uitrail"},
        {-1, "x", "19691231T235959.999999Z-x.uitrail"},
        {1706711525000000, "caf\xc3\xa9~", "20240131T143205.000000Z-caf%C3%A9%7E.uitrail"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ut_buf out = UT_BUF_INIT;
        assert_int_equal(ut_rec_file_name(cases[i].time_us, s(cases[i].tab), &out), UT_OK);
        assert_string_equal(out.data, cases[i].want);
        ut_buf_free(&out);
    }

    /* A long tab is cut whole %XX at a time and keeps a hash of its id:
     * two long ids with the same start get different names. */
    ut_buf a = UT_BUF_INIT, b = UT_BUF_INIT;
    assert_int_equal(ut_rec_file_name(0, ut_str_from(long_tab, sizeof long_tab), &a), UT_OK);
    long_tab[sizeof long_tab - 1] = '_';
    assert_int_equal(ut_rec_file_name(0, ut_str_from(long_tab, sizeof long_tab), &b), UT_OK);
    assert_string_not_equal(a.data, b.data);
    const char *tab_part = a.data + strlen("19700101T000000.000000Z-");
    const char *tilde = strchr(tab_part, '~');
    assert_non_null(tilde);
    assert_true((size_t)(tilde - tab_part) <= UT_REC_FILE_TAB_MAX_BYTES);
    assert_int_equal((tilde - tab_part) % 3, 0);
    assert_string_equal(tilde + 17, UT_REC_FILE_SUFFIX);
    assert_true(a.len < 255);
    ut_buf_free(&a);
    ut_buf_free(&b);
}

/* ---- Out of memory ---- */

static long alloc_budget = -1; /* allocations left before failing; -1: no limit */
static bool alloc_failed;

static bool alloc_allowed(void)
{
    if (alloc_budget < 0)
        return true;
    if (alloc_budget == 0) {
        alloc_failed = true;
        return false;
    }
    alloc_budget--;
    return true;
}

static void *failing_malloc(size_t n)
{
    return alloc_allowed() ? malloc(n) : NULL;
}

static void *failing_calloc(size_t n, size_t size)
{
    return alloc_allowed() ? calloc(n, size) : NULL;
}

static void *failing_realloc(void *p, size_t n)
{
    return alloc_allowed() ? realloc(p, n) : NULL;
}

/* Every event in `c` is one of `se`, in the same order. */
static void assert_subsequence(const collected *c, const session *se)
{
    size_t j = 0;
    for (size_t i = 0; i < c->events; i++) {
        size_t len = c->event_off[i + 1] - c->event_off[i];
        const char *got = c->packed.data + c->event_off[i];
        while (j < se->n && (se->packed_off[j + 1] - se->packed_off[j] != len
                             || memcmp(se->packed.data + se->packed_off[j], got, len) != 0))
            j++;
        assert_true(j < se->n);
        j++;
    }
}

static const ut_allocator failing_allocator = {failing_malloc, failing_calloc, failing_realloc, free};

/* Records and reads a session with the Nth allocation failing, for every
 * N until a run needs no failure: every call fails cleanly with
 * UT_ENOMEM (ASan finds any leak) and the run without failure is exact. */
static void test_record_alloc_failure_walk(void **state)
{
    (void)state;
    session se;
    session_init(&se, 80);
    ut_rec_meta meta = test_meta(&se);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    opts.frame_bytes = 2048;

    bool exact = false;
    long n;
    for (n = 0; n < 100000 && !exact; n++) {
        ut_buf file = UT_BUF_INIT;
        alloc_failed = false;
        alloc_budget = n;
        ut_allocator old = ut_set_allocator(&failing_allocator);

        ut_rec_writer *w = NULL;
        char err[128];
        ut_status st = ut_rec_writer_new(&opts, &meta, &w, err, sizeof err);
        bool complete = st == UT_OK;
        if (st != UT_OK) {
            assert_int_equal(st, UT_ENOMEM);
            assert_null(w);
        } else {
            ut_str frame;
            for (size_t i = 0; i < se.n; i++) {
                st = ut_rec_writer_append(w, &se.events[i].ev, &frame);
                assert_true(st == UT_OK || st == UT_ENOMEM);
                complete &= st == UT_OK;
                if (frame.len && ut_buf_append_str(&file, frame) != UT_OK)
                    complete = false;
            }
            st = ut_rec_writer_flush(w, &frame);
            assert_true(st == UT_OK || st == UT_ENOMEM);
            complete &= st == UT_OK;
            if (frame.len && ut_buf_append_str(&file, frame) != UT_OK)
                complete = false;
            ut_rec_writer_free(w);
        }

        collected c;
        st = read_recording(file.data, file.len, &c);
        assert_true(st == UT_OK || st == UT_ENOMEM);
        complete &= st == UT_OK;
        ut_set_allocator(&old);
        alloc_budget = -1;

        if (!alloc_failed) {
            assert_true(complete);
            assert_events_equal(&c.packed, &se.packed);
            assert_int_equal(c.ndamage, 0);
            exact = true;
        } else if (st == UT_OK) {
            /* An event lost to a failure is lost alone: what was recorded
             * reads back whole and in order. */
            assert_int_equal(c.ndamage, 0);
            assert_subsequence(&c, &se);
        }
        collected_free(&c);
        ut_buf_free(&file);
    }
    print_message("%ld allocation failures walked\n", n - 1);
    assert_true(exact);
    session_free(&se);
}

/* `test_record --write-fuzz-seeds DIR` writes the files of the hostile
 * table, a clean recording and a torn one into DIR: the seed corpus of
 * tests/fuzz/fuzz_recording.c (fixtures/fuzz/fuzz_recording). */
static int write_fuzz_seeds(const char *dir)
{
    session se;
    session_init(&se, 40);
    ut_rec_writer_opts opts;
    ut_rec_writer_opts_defaults(&opts);
    opts.frame_bytes = 1024;
    recording good;
    record_session(&se, &opts, false, &good);

    int rc = 0;
    size_t ncases = sizeof file_cases / sizeof file_cases[0];
    for (size_t i = 0; i <= ncases + 1 && rc == 0; i++) {
        ut_buf file = UT_BUF_INIT;
        char name[256];
        if (i < ncases) {
            file_cases[i].build(&file, &good, &se);
            int n = snprintf(name, sizeof name, "%s/", dir);
            for (const char *p = file_cases[i].name; *p && n < 200; p++)
                name[n++] = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '-';
            snprintf(name + n, sizeof name - (size_t)n, ".uitrail");
        } else if (i == ncases) {
            ut_buf_append(&file, good.file.data, good.file.len);
            snprintf(name, sizeof name, "%s/clean.uitrail", dir);
        } else {
            ut_buf_append(&file, good.file.data, good.file.len - 9);
            snprintf(name, sizeof name, "%s/torn.uitrail", dir);
        }
        FILE *f = fopen(name, "wb");
        if (!f || fwrite(file.data, 1, file.len, f) != file.len || fclose(f) != 0) {
            fprintf(stderr, "test_record: cannot write %s\n", name);
            rc = 1;
        }
        ut_buf_free(&file);
    }
    ut_buf_free(&good.file);
    session_free(&se);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-fuzz-seeds") == 0)
        return write_fuzz_seeds(argv[2]);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_round_trip),
        cmocka_unit_test(test_record_shared_compressor),
        cmocka_unit_test(test_record_frames_decode_alone),
        cmocka_unit_test(test_record_cut_by_time),
        cmocka_unit_test(test_record_torn_tail_every_offset),
        cmocka_unit_test(test_record_flipped_byte_middle_frame),
        cmocka_unit_test(test_record_hostile_files),
        cmocka_unit_test(test_record_empty_file),
        cmocka_unit_test(test_record_frame_over_limit),
        cmocka_unit_test(test_record_meta_entry),
        cmocka_unit_test(test_record_meta_params_round_trip),
        cmocka_unit_test(test_record_meta_import_round_trip),
        cmocka_unit_test(test_record_meta_parse_table),
        cmocka_unit_test(test_record_entry_over_limit),
        cmocka_unit_test(test_record_writer_bad_options),
        cmocka_unit_test(test_record_file_name),
        cmocka_unit_test(test_record_alloc_failure_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Tests of the journal format (protocol §5.1): one file of many tabs'
 * events, each data frame led by its tab index. The writer's journal mode,
 * the reader's tab filter, a torn journal at every offset, and a table of
 * hostile journals.
 *
 * Events are clicks of TABS tabs in turn (tab k has seq 1, 2, ...), except
 * a rare tab that sends one event in the middle: a read for it must step
 * over nearly every frame without decompressing it. Events are compared by
 * packing them with ut_wire_pack_event, as in test_record.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <xxhash.h>

#include "uitrail/record.h"
#include "uitrail/wire.h"

#define TABS 24
#define EVENTS 1200
#define RARE_AT 600
#define RARE_TAB "tab-rare"

typedef struct jevent {
    ut_event ev;
    char tab[24];
    char name[48];
} jevent;

typedef struct journal {
    jevent ev[EVENTS];
    ut_buf file;
    size_t nframes;
    size_t frame_end[2048]; /* where frame k (index and data) ends */
    size_t frame_events[2048]; /* events in frames 0..k */
} journal;

static void make_events(journal *j)
{
    for (size_t i = 0; i < EVENTS; i++) {
        jevent *e = &j->ev[i];
        memset(e, 0, sizeof *e);
        if (i == RARE_AT)
            snprintf(e->tab, sizeof e->tab, RARE_TAB);
        else
            snprintf(e->tab, sizeof e->tab, "tab-%02zu", i % TABS);
        unsigned x = (unsigned)(i * 2654435761u);
        snprintf(e->name, sizeof e->name, "Item %zu %08x", i, x);
        e->ev.kind = UT_KIND_CLICK;
        e->ev.tab = ut_str_cstr(e->tab);
        e->ev.time_us = 1706711525000000 + (int64_t)i * 1000;
        e->ev.rt_us = e->ev.time_us + 500;
        e->ev.has_seq = true;
        e->ev.seq = i / TABS + 1;
        e->ev.role = ut_str_cstr("button");
        e->ev.name = ut_str_cstr(e->name);
        e->ev.el = ut_str_cstr(e->name);
    }
}

static void take(journal *j, ut_str frame, size_t events)
{
    if (frame.len == 0)
        return;
    assert_true(j->nframes < 2048);
    assert_int_equal(ut_buf_append_str(&j->file, frame), UT_OK);
    j->frame_end[j->nframes] = j->file.len;
    j->frame_events[j->nframes] = events;
    j->nframes++;
}

/* Writes the journal with frames of `frame_bytes`, flushing every `sync`
 * events as the daemon does before an ack. */
static void write_journal(journal *j, uint32_t frame_bytes, size_t sync)
{
    make_events(j);
    j->file = UT_BUF_INIT;
    j->nframes = 0;
    ut_rec_writer_opts o;
    ut_rec_writer_opts_defaults(&o);
    o.frame_bytes = frame_bytes;
    o.journal = true;
    ut_rec_meta meta = {.time_us = j->ev[0].ev.time_us, .daemon = ut_str_cstr("0.1.0-test"),
                        .tab = ut_str_cstr("ignored in a journal"), .has_config = true};
    ut_config_defaults(&meta.config);
    ut_rec_writer *w;
    char err[128];
    assert_int_equal(ut_rec_writer_new(&o, &meta, &w, err, sizeof err), UT_OK);
    ut_str frame;
    for (size_t i = 0; i < EVENTS; i++) {
        assert_int_equal(ut_rec_writer_append(w, &j->ev[i].ev, &frame), UT_OK);
        take(j, frame, i + 1);
        if ((i + 1) % sync == 0) {
            assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);
            take(j, frame, i + 1);
        }
    }
    assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);
    take(j, frame, EVENTS);
    ut_rec_writer_stats st;
    ut_rec_writer_stats_get(w, &st);
    assert_int_equal(st.compressed_bytes, j->file.len);
    ut_rec_writer_free(w);
}

/* ---- What a read gives back ---- */

typedef struct got {
    const char *only; /* NULL: every tab's events are kept */
    ut_buf packed;
    size_t events;
    int metas;
    bool meta_journal;
    size_t meta_tab_len;
    size_t frames, skipped;
    uint64_t next_offset;
    size_t ndamage;
    ut_rec_damage damage[8];
} got;

static ut_status on_event(void *ud, const ut_event *ev)
{
    got *g = ud;
    if (g->only && !ut_str_eq(ev->tab, ut_str_cstr(g->only)))
        return UT_OK;
    g->events++;
    return ut_wire_pack_event(ev, true, &g->packed);
}

static void on_meta(void *ud, const ut_rec_meta *m)
{
    got *g = ud;
    g->metas++;
    g->meta_journal = m->journal;
    g->meta_tab_len = m->tab.len;
}

static void on_frame(void *ud, const ut_rec_step *f)
{
    got *g = ud;
    assert_int_equal(f->offset, g->next_offset);
    g->next_offset += f->bytes;
    g->frames++;
    if (f->skipped) {
        g->skipped++;
        assert_int_equal(f->content.len, 0);
    }
}

static void on_damage(void *ud, const ut_rec_step *d)
{
    got *g = ud;
    if (d->damage != UT_REC_DAMAGE_BAD_CONTENT) {
        assert_int_equal(d->offset, g->next_offset);
        g->next_offset += d->bytes;
    }
    if (g->ndamage < 8)
        g->damage[g->ndamage] = d->damage;
    g->ndamage++;
}

static void read_journal(const void *data, size_t len, const char *only, got *g)
{
    memset(g, 0, sizeof *g);
    g->only = only;
    g->packed = UT_BUF_INIT;
    ut_rec_reader *r;
    assert_int_equal(ut_rec_reader_new(&r), UT_OK);
    if (only)
        ut_rec_reader_only_tab(r, ut_str_cstr(only));
    ut_rec_handlers h = {on_meta, on_frame, on_damage, g};
    ut_fwd_sink sink = {.on_event = on_event, .ud = g};
    assert_int_equal(ut_rec_read(r, data, len, &h, &sink), UT_OK);
    assert_int_equal(g->next_offset, len);
    ut_rec_reader_free(r);
}

/* The events of `j` among the first `n`, of tab `only` (NULL: all). */
static void want_events(const journal *j, size_t n, const char *only, ut_buf *out)
{
    *out = (ut_buf)UT_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (!only || ut_str_eq(j->ev[i].ev.tab, ut_str_cstr(only)))
            assert_int_equal(ut_wire_pack_event(&j->ev[i].ev, true, out), UT_OK);
    }
}

static void assert_same(const ut_buf *a, const ut_buf *b)
{
    assert_int_equal(a->len, b->len);
    if (a->len)
        assert_memory_equal(a->data, b->data, a->len);
}

static journal *new_journal(uint32_t frame_bytes, size_t sync)
{
    journal *j = calloc(1, sizeof *j);
    assert_non_null(j);
    write_journal(j, frame_bytes, sync);
    return j;
}

static void free_journal(journal *j)
{
    ut_buf_free(&j->file);
    free(j);
}

/* ---- Tests ---- */

/* Every event of every tab comes back in order; the meta entry says
 * journal and names no tab; each frame starts with its index. */
static void test_journal_round_trip(void **state)
{
    (void)state;
    journal *j = new_journal(2048, 100);
    assert_true(j->nframes > 10);
    for (size_t k = 0, at = 0; k < j->nframes; at = j->frame_end[k++]) {
        unsigned char *p = (unsigned char *)j->file.data + at;
        uint32_t magic = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        assert_int_equal(magic, UT_REC_INDEX_MAGIC);
    }
    got g;
    read_journal(j->file.data, j->file.len, NULL, &g);
    ut_buf want;
    want_events(j, EVENTS, NULL, &want);
    assert_same(&g.packed, &want);
    assert_int_equal(g.metas, 1);
    assert_true(g.meta_journal);
    assert_int_equal(g.meta_tab_len, 0);
    assert_int_equal(g.frames, j->nframes);
    assert_int_equal(g.skipped, 0);
    assert_int_equal(g.ndamage, 0);
    ut_buf_free(&want);
    ut_buf_free(&g.packed);
    free_journal(j);
}

/* A read for one tab gives exactly that tab's events, reads the meta
 * entry, and steps over the frames the tab has no event in: for the rare
 * tab, all frames but the meta's and its own. */
static void test_journal_only_tab(void **state)
{
    (void)state;
    journal *j = new_journal(1024, 1000);
    static const char *const tabs[] = {"tab-00", "tab-13", RARE_TAB, "tab-never"};
    for (size_t t = 0; t < 4; t++) {
        got g;
        read_journal(j->file.data, j->file.len, tabs[t], &g);
        ut_buf want;
        want_events(j, EVENTS, tabs[t], &want);
        assert_same(&g.packed, &want);
        assert_int_equal(g.metas, 1);
        assert_int_equal(g.ndamage, 0);
        assert_int_equal(g.frames, j->nframes);
        print_message("%s: %zu of %zu frames stepped over\n", tabs[t], g.skipped, j->nframes);
        if (t >= 2)
            assert_true(g.skipped >= j->nframes - 2);
        ut_buf_free(&want);
        ut_buf_free(&g.packed);
    }
    free_journal(j);
}

/* A journal cut at every byte offset (a crash during a write) reads up to
 * the tear: every event of the frames whole before the cut, one torn tail
 * at most, with and without a tab filter. */
static void test_journal_torn_every_offset(void **state)
{
    (void)state;
    journal *j = new_journal(256, 7);
    assert_true(j->nframes > 20);
    size_t len_max = j->frame_end[20 - 1];
    for (size_t cut = 0; cut <= len_max; cut++) {
        size_t whole = 0;
        while (whole < j->nframes && j->frame_end[whole] <= cut)
            whole++;
        size_t n = whole ? j->frame_events[whole - 1] : 0;
        bool torn = cut > (whole ? j->frame_end[whole - 1] : 0);
        for (int f = 0; f < 2; f++) {
            const char *only = f ? "tab-03" : NULL;
            got g;
            read_journal(j->file.data, cut, only, &g);
            ut_buf want;
            want_events(j, n, only, &want);
            assert_same(&g.packed, &want);
            assert_int_equal(g.ndamage, torn ? 1 : 0);
            if (torn)
                assert_int_equal(g.damage[0], UT_REC_DAMAGE_TORN_TAIL);
            ut_buf_free(&want);
            ut_buf_free(&g.packed);
        }
    }
    free_journal(j);
}

/* ---- Hostile journals, as a table ---- */

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* The index of frame `k` of `f` (a copy of the journal): its first byte. */
static unsigned char *index_of(ut_buf *f, const journal *j, size_t k)
{
    return (unsigned char *)f->data + (k ? j->frame_end[k - 1] : 0);
}

static void copy(ut_buf *f, const journal *j)
{
    assert_int_equal(ut_buf_append(f, j->file.data, j->file.len), UT_OK);
}

static void h_bad_checksum(ut_buf *f, const journal *j)
{
    copy(f, j);
    index_of(f, j, 3)[20] ^= 1;
}

static void h_count_over_payload(ut_buf *f, const journal *j)
{
    copy(f, j);
    unsigned char *ix = index_of(f, j, 3);
    put_u32(ix + 16, get_u32(ix + 16) + 1);
}

static void h_unsorted(ut_buf *f, const journal *j)
{
    copy(f, j);
    unsigned char *ix = index_of(f, j, 3);
    uint32_t n = get_u32(ix + 16);
    assert_true(n >= 2);
    uint32_t a = get_u32(ix + 24), b = get_u32(ix + 28);
    put_u32(ix + 24, b);
    put_u32(ix + 28, a);
    put_u32(ix + 20, XXH32(ix + 24, 4 * (size_t)n, 0));
}

static void h_unknown_flag(ut_buf *f, const journal *j)
{
    copy(f, j);
    index_of(f, j, 3)[12] |= 2;
}

static void h_index_alone_at_end(ut_buf *f, const journal *j)
{
    copy(f, j);
    size_t ix_len = 8 + get_u32(index_of(f, j, 3) + 4);
    assert_int_equal(ut_buf_append(f, index_of(f, j, 3), ix_len), UT_OK);
}

static void h_index_then_garbage(ut_buf *f, const journal *j)
{
    copy(f, j);
    size_t ix_len = 8 + get_u32(index_of(f, j, 3) + 4);
    assert_int_equal(ut_buf_append(f, index_of(f, j, 3), ix_len), UT_OK);
    assert_int_equal(ut_buf_append_cstr(f, "not a frame, not a frame, not a frame"), UT_OK);
}

static void h_two_indexes(ut_buf *f, const journal *j)
{
    /* Frame 3's index again in front of frame 4: the extra one is read as
     * the plain skippable frame it is. */
    size_t at3 = j->frame_end[2], at4 = j->frame_end[3];
    size_t ix_len = 8 + get_u32((const unsigned char *)j->file.data + at3 + 4);
    assert_int_equal(ut_buf_append(f, j->file.data, at4), UT_OK);
    assert_int_equal(ut_buf_append(f, j->file.data + at3, ix_len), UT_OK);
    assert_int_equal(ut_buf_append(f, j->file.data + at4, j->file.len - at4), UT_OK);
}

static void h_bad_data_frame(ut_buf *f, const journal *j)
{
    copy(f, j);
    /* The last byte of frame 3 is its checksum's. */
    f->data[j->frame_end[3] - 1] ^= 0x55;
}

typedef struct hostile {
    const char *name;
    void (*build)(ut_buf *f, const journal *j);
    bool all_events;        /* every event of tab-05 comes back (else frame 3's are lost) */
    ut_rec_damage damage[3];
} hostile;

static const hostile hostiles[] = {
    {"index checksum wrong", h_bad_checksum, true, {UT_REC_DAMAGE_NONE}},
    {"index count over its payload", h_count_over_payload, true, {UT_REC_DAMAGE_NONE}},
    {"index keys out of order", h_unsorted, true, {UT_REC_DAMAGE_NONE}},
    {"index with an unknown flag", h_unknown_flag, true, {UT_REC_DAMAGE_NONE}},
    {"index alone at the end", h_index_alone_at_end, true, {UT_REC_DAMAGE_TORN_TAIL, UT_REC_DAMAGE_NONE}},
    {"index then garbage", h_index_then_garbage, true, {UT_REC_DAMAGE_GARBAGE, UT_REC_DAMAGE_NONE}},
    {"two indexes in a row", h_two_indexes, true, {UT_REC_DAMAGE_NONE}},
    {"data frame checksum wrong", h_bad_data_frame, false, {UT_REC_DAMAGE_BAD_FRAME, UT_REC_DAMAGE_NONE}},
};

/* Events of tab-05 outside frame 3 of `j`. */
static void want_without_frame3(const journal *j, ut_buf *out)
{
    *out = (ut_buf)UT_BUF_INIT;
    for (size_t i = 0; i < EVENTS; i++) {
        if (i >= j->frame_events[2] && i < j->frame_events[3])
            continue;
        if (ut_str_eq(j->ev[i].ev.tab, ut_str_cstr("tab-05")))
            assert_int_equal(ut_wire_pack_event(&j->ev[i].ev, true, out), UT_OK);
    }
}

/* A damaged index never costs an event: its frame is read (or, lacking
 * its data frame, reported as a torn tail). With and without the filter,
 * the same events of the tab come back and the damage is the same. */
static void test_journal_hostile(void **state)
{
    (void)state;
    /* Frames of 4 KiB hold every tab: tab-05's read meets frame 3. */
    journal *j = new_journal(4096, 1000);
    assert_true(j->nframes > 6);
    for (size_t i = 0; i < sizeof hostiles / sizeof hostiles[0]; i++) {
        const hostile *h = &hostiles[i];
        ut_buf f = UT_BUF_INIT;
        h->build(&f, j);
        ut_buf want;
        if (h->all_events)
            want_events(j, EVENTS, "tab-05", &want);
        else
            want_without_frame3(j, &want);
        for (int filter = 0; filter < 2; filter++) {
            got g;
            read_journal(f.data, f.len, filter ? "tab-05" : NULL, &g);
            print_message("case '%s'%s: %zu events, %zu damage\n", h->name, filter ? " (tab-05)" : "",
                          g.events, g.ndamage);
            if (filter)
                assert_same(&g.packed, &want);
            size_t n = 0;
            while (h->damage[n] != UT_REC_DAMAGE_NONE)
                n++;
            assert_int_equal(g.ndamage, n);
            for (size_t k = 0; k < n; k++)
                assert_int_equal(g.damage[k], h->damage[k]);
            assert_int_equal(g.metas, 1);
            ut_buf_free(&g.packed);
        }
        ut_buf_free(&want);
        ut_buf_free(&f);
    }
    free_journal(j);
}

/* A journal's meta entry that names a tab claims the whole file for it:
 * malformed. A per-tab recording read with a tab filter is read whole (it
 * has no index). */
static void test_journal_meta_and_old_recordings(void **state)
{
    (void)state;
    ut_rec_writer_opts o;
    ut_rec_writer_opts_defaults(&o);
    ut_rec_meta meta = {.time_us = 1706711525000000, .daemon = ut_str_cstr("t"), .tab = ut_str_cstr("tab-01")};
    ut_rec_writer *w;
    char err[128];
    assert_int_equal(ut_rec_writer_new(&o, &meta, &w, err, sizeof err), UT_OK);
    journal *j = new_journal(1024, 1000);
    ut_buf file = UT_BUF_INIT;
    ut_str frame;
    size_t n = 0;
    for (size_t i = 0; i < EVENTS; i++) {
        if (!ut_str_eq(j->ev[i].ev.tab, ut_str_cstr("tab-01")))
            continue;
        assert_int_equal(ut_rec_writer_append(w, &j->ev[i].ev, &frame), UT_OK);
        ut_buf_append_str(&file, frame);
        n++;
    }
    assert_int_equal(ut_rec_writer_flush(w, &frame), UT_OK);
    ut_buf_append_str(&file, frame);
    ut_rec_writer_free(w);
    got g;
    read_journal(file.data, file.len, "tab-01", &g);
    assert_int_equal(g.events, n);
    assert_int_equal(g.skipped, 0);
    assert_false(g.meta_journal);
    assert_int_equal(g.meta_tab_len, 6);
    ut_buf_free(&g.packed);
    ut_buf_free(&file);

    /* ["uitrail.meta", 0, {"format": "uitrail-journal", "version": 1, "tab": "x"}] */
    static const char bad[] = "\x93\xac" "uitrail.meta" "\x00\x83\xa6" "format" "\xaf" "uitrail-journal"
                              "\xa7" "version" "\x01\xa3" "tab" "\xa1" "x";
    ut_rec_meta m;
    size_t consumed;
    assert_int_equal(ut_rec_meta_parse(ut_str_from(bad, sizeof bad - 1), &m, &consumed), UT_ECORRUPT);
    static const char good[] = "\x93\xac" "uitrail.meta" "\x00\x82\xa6" "format" "\xaf" "uitrail-journal"
                               "\xa7" "version" "\x01";
    assert_int_equal(ut_rec_meta_parse(ut_str_from(good, sizeof good - 1), &m, &consumed), UT_OK);
    assert_true(m.journal);
    assert_int_equal(consumed, sizeof good - 1);
    free_journal(j);
}

/* `test_journal --write-fuzz-seeds DIR`: a clean journal, a torn one and
 * the hostile table, the seed corpus of tests/fuzz/fuzz_journal.c
 * (fixtures/fuzz/fuzz_journal). The fuzz target takes the first byte as
 * the tab to look for, so each seed starts with one. */
static int write_fuzz_seeds(const char *dir)
{
    journal *j = calloc(1, sizeof *j);
    if (!j)
        return 1;
    write_journal(j, 1024, 1000);
    size_t n = sizeof hostiles / sizeof hostiles[0];
    int rc = 0;
    for (size_t i = 0; i < n + 2 && rc == 0; i++) {
        ut_buf f = UT_BUF_INIT;
        char name[256];
        ut_buf_append(&f, "\x05", 1);
        if (i < n) {
            ut_buf body = UT_BUF_INIT;
            hostiles[i].build(&body, j);
            ut_buf_append(&f, body.data, body.len);
            ut_buf_free(&body);
            int k = snprintf(name, sizeof name, "%s/", dir);
            for (const char *p = hostiles[i].name; *p && k < 200; p++)
                name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '-';
            snprintf(name + k, sizeof name - (size_t)k, ".uitrail");
        } else {
            /* Small seeds: the first frames, whole or torn. */
            size_t len = j->frame_end[i == n ? 4 : 5] - (i == n ? 0 : 9);
            ut_buf_append(&f, j->file.data, len);
            snprintf(name, sizeof name, "%s/%s.uitrail", dir, i == n ? "clean" : "torn");
        }
        FILE *out = fopen(name, "wb");
        if (!out || fwrite(f.data, 1, f.len, out) != f.len || fclose(out) != 0) {
            fprintf(stderr, "test_journal: cannot write %s\n", name);
            rc = 1;
        }
        ut_buf_free(&f);
    }
    free_journal(j);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-fuzz-seeds") == 0)
        return write_fuzz_seeds(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_journal_round_trip),
        cmocka_unit_test(test_journal_only_tab),
        cmocka_unit_test(test_journal_torn_every_offset),
        cmocka_unit_test(test_journal_hostile),
        cmocka_unit_test(test_journal_meta_and_old_recordings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

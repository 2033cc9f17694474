/* libFuzzer target: the recording reader on arbitrary bytes.
 *
 * Walks the input as a recording, frames, damage and Forward entries, and
 * checks that the walk accounts for every byte exactly once: the good
 * frames and the skipped or dropped spans tile the input. The first bytes
 * are also parsed as a meta entry directly, which reaches the msgpack
 * measure with no zstd frame around it.
 *
 * The seed corpus, fixtures/fuzz/fuzz_recording/, is a clean recording, a
 * torn one and the files of the hostile-file table of tests/record; write
 * it again with
 * `test_record --write-fuzz-seeds fixtures/fuzz/fuzz_recording`. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "uitrail/record.h"
#include "uitrail/wire.h"

typedef struct walk_totals {
    uint64_t next_offset; /* where the next frame or damage must start */
    uint64_t events;
} walk_totals;

static void check_tiles(walk_totals *t, const ut_rec_step *step)
{
    FUZZ_CHECK(step->offset == t->next_offset, "frames and damage follow each other without gap or overlap");
    FUZZ_CHECK(step->bytes > 0, "every frame and damage covers bytes");
    t->next_offset += step->bytes;
}

static void on_frame(void *ud, const ut_rec_step *frame)
{
    FUZZ_CHECK(frame->content.len <= UT_REC_FRAME_CONTENT_MAX_BYTES, "frame content within its limit");
    check_tiles(ud, frame);
}

static void on_damage(void *ud, const ut_rec_step *d)
{
    FUZZ_CHECK(d->detail[0] != '\0', "damage is described");
    /* Damage inside a good frame's content is already covered by it. */
    if (d->damage != UT_REC_DAMAGE_BAD_CONTENT)
        check_tiles(ud, d);
}

static ut_status on_event(void *ud, const ut_event *ev)
{
    walk_totals *t = ud;
    (void)ev;
    t->events++;
    return UT_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ut_rec_reader *reader;
    if (!reader)
        FUZZ_CHECK(ut_rec_reader_new(&reader) == UT_OK, "reader created");

    walk_totals totals = {0, 0};
    ut_rec_handlers h = {NULL, on_frame, on_damage, &totals};
    ut_fwd_sink sink = {on_event, NULL, NULL, NULL, &totals};
    FUZZ_CHECK(ut_rec_read(reader, data, size, &h, &sink) == UT_OK, "a walk always reaches the end");
    FUZZ_CHECK(totals.next_offset == size, "frames and damage cover the whole input");

    ut_rec_meta meta;
    size_t consumed;
    ut_status st = ut_rec_meta_parse(ut_str_from((const char *)data, size), &meta, &consumed);
    FUZZ_CHECK(consumed <= size && consumed <= UT_REC_META_MAX_BYTES, "meta entry within the input and its limit");
    FUZZ_CHECK(st != UT_OK || consumed > 0, "a parsed meta entry has a size");
    return 0;
}

/* libFuzzer target: the journal reader (protocol §5.1) on arbitrary bytes.
 *
 * The first byte picks the tab the read looks for (none, or one of a few
 * ids); the rest is read as a journal with that tab filter, and checked:
 * the walk reaches the end, frames (a stepped-over frame included) and
 * damage tile the input, a stepped-over frame has no content, and the
 * meta entry of a read with a filter is the one of the read without (the
 * frame that holds it is never stepped over).
 *
 * The seed corpus, fixtures/fuzz/fuzz_journal/, is a clean journal, a torn
 * one and the hostile table of tests/record/test_journal.c; write it again
 * with `test_journal --write-fuzz-seeds fixtures/fuzz/fuzz_journal`. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uitrail/record.h"
#include "uitrail/wire.h"

typedef struct walk {
    uint64_t next_offset;
    uint64_t events;
    int metas;
    int64_t meta_time;
} walk;

static void check_tiles(walk *w, const ut_rec_step *step)
{
    FUZZ_CHECK(step->offset == w->next_offset, "frames and damage follow each other without gap or overlap");
    FUZZ_CHECK(step->bytes > 0, "every frame and damage covers bytes");
    w->next_offset += step->bytes;
}

static void on_meta(void *ud, const ut_rec_meta *m)
{
    walk *w = ud;
    w->metas++;
    w->meta_time = m->time_us;
}

static void on_frame(void *ud, const ut_rec_step *frame)
{
    FUZZ_CHECK(frame->content.len <= UT_REC_FRAME_CONTENT_MAX_BYTES, "frame content within its limit");
    FUZZ_CHECK(!frame->skipped || frame->content.len == 0, "a frame stepped over has no content");
    check_tiles(ud, frame);
}

static void on_damage(void *ud, const ut_rec_step *d)
{
    FUZZ_CHECK(d->detail[0] != '\0', "damage is described");
    if (d->damage != UT_REC_DAMAGE_BAD_CONTENT)
        check_tiles(ud, d);
}

static ut_status on_event(void *ud, const ut_event *ev)
{
    walk *w = ud;
    (void)ev;
    w->events++;
    return UT_OK;
}

static void read_once(ut_rec_reader *r, const uint8_t *data, size_t size, walk *w)
{
    memset(w, 0, sizeof *w);
    ut_rec_handlers h = {on_meta, on_frame, on_damage, w};
    ut_fwd_sink sink = {on_event, NULL, NULL, NULL, w};
    FUZZ_CHECK(ut_rec_read(r, data, size, &h, &sink) == UT_OK, "a walk always reaches the end");
    FUZZ_CHECK(w->next_offset == size, "frames and damage cover the whole input");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ut_rec_reader *reader;
    static const char *const tabs[] = {"tab-00", "tab-05", "tab-rare", "x"};
    if (!reader)
        FUZZ_CHECK(ut_rec_reader_new(&reader) == UT_OK, "reader created");
    if (size == 0)
        return 0;
    unsigned pick = data[0] % 5;
    data++, size--;

    walk all, one;
    ut_rec_reader_only_tab(reader, UT_STR_NULL);
    read_once(reader, data, size, &all);
    if (pick < 4) {
        ut_rec_reader_only_tab(reader, ut_str_cstr(tabs[pick]));
        read_once(reader, data, size, &one);
        ut_rec_reader_only_tab(reader, UT_STR_NULL);
        FUZZ_CHECK(one.metas == all.metas && one.meta_time == all.meta_time,
                   "a tab filter never hides the meta entry");
        FUZZ_CHECK(one.events <= all.events, "a tab filter only takes events away");
    }
    return 0;
}

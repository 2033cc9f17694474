/* What the wire fuzz targets share: a sink that serializes every report
 * (events through the packer, so every field counts) for comparison, and
 * the pack-then-decode round trip every valid event must survive. */
#ifndef UITRAIL_FUZZ_COMMON_H
#define UITRAIL_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "uitrail/wire.h"

/* `bytes` has every report in order; `packed` the events alone. */
typedef struct fuzz_log {
    ut_buf bytes;
    ut_buf packed;
    size_t events;
} fuzz_log;

#define FUZZ_LOG_INIT ((fuzz_log){UT_BUF_INIT, UT_BUF_INIT, 0})

static inline void fuzz_log_free(fuzz_log *log)
{
    ut_buf_free(&log->bytes);
    ut_buf_free(&log->packed);
}

static inline ut_status fuzz_log_event(void *ud, const ut_event *ev)
{
    fuzz_log *log = ud;
    log->events++;
    FUZZ_CHECK(ut_wire_pack_event(ev, true, &log->packed) == UT_OK, "a decoded event packs");
    FUZZ_CHECK(ut_wire_pack_event(ev, true, &log->bytes) == UT_OK, "a decoded event packs");
    return UT_OK;
}

static inline void fuzz_log_reject(void *ud, ut_reject why, const char *detail)
{
    fuzz_log *log = ud;
    ut_buf_printf(&log->bytes, "R%d:%s\n", (int)why, detail);
}

static inline void fuzz_log_ignored(void *ud, ut_str tag)
{
    fuzz_log *log = ud;
    ut_buf_append_cstr(&log->bytes, "I:");
    ut_buf_append_str(&log->bytes, tag);
}

static inline void fuzz_log_ack(void *ud, ut_str chunk)
{
    fuzz_log *log = ud;
    ut_buf_append_cstr(&log->bytes, "A:");
    ut_buf_append_str(&log->bytes, chunk);
}

static inline ut_fwd_sink fuzz_log_sink(fuzz_log *log)
{
    return (ut_fwd_sink){fuzz_log_event, fuzz_log_reject, fuzz_log_ignored, fuzz_log_ack, log};
}

/* `packed` holds Message-mode entries from ut_wire_pack_event: decoding
 * them must give events that pack to the same bytes again. */
static inline void fuzz_check_round_trip(const ut_buf *packed, size_t events)
{
    ut_fwd_decoder *d;
    fuzz_log again = FUZZ_LOG_INIT;
    ut_fwd_sink sink = fuzz_log_sink(&again);
    FUZZ_CHECK(ut_fwd_decoder_new(&d) == UT_OK, "decoder created");
    FUZZ_CHECK(ut_fwd_decoder_feed(d, packed->data, packed->len, &sink) == UT_OK, "packed events decode");
    FUZZ_CHECK(again.events == events, "every packed event decodes to an event");
    FUZZ_CHECK(again.packed.len == packed->len &&
                   (packed->len == 0 || memcmp(again.packed.data, packed->data, packed->len) == 0),
               "pack(decode(pack(event))) == pack(event)");
    ut_fwd_decoder_free(d);
    fuzz_log_free(&again);
}

#endif

/* Fuzz target: the Forward decoder. The input is fed whole to one decoder
 * and in pseudo-random pieces (seeded by the input) to another; both must
 * report the same events, rejections, acks and status, and every event
 * must survive a pack/decode round trip. */
#include "fuzz_common.h"

typedef struct run_result {
    ut_status status;
    uint64_t error_offset;
    size_t pending;
} run_result;

static run_result run(const uint8_t *data, size_t size, uint32_t seed, fuzz_log *log)
{
    ut_fwd_decoder *d;
    run_result r = {UT_OK, 0, 0};
    ut_fwd_sink sink = fuzz_log_sink(log);
    FUZZ_CHECK(ut_fwd_decoder_new(&d) == UT_OK, "decoder created");
    size_t off = 0;
    while (off < size && r.status == UT_OK) {
        size_t step = size - off;
        if (seed != 0) {
            /* xorshift32: pieces of 1 to 64 bytes. */
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            size_t piece = 1 + seed % 64;
            step = piece < step ? piece : step;
        }
        r.status = ut_fwd_decoder_feed(d, data + off, step, &sink);
        off += step;
    }
    r.error_offset = ut_fwd_decoder_error_offset(d);
    r.pending = ut_fwd_decoder_pending(d);
    if (r.status == UT_EPROTO)
        FUZZ_CHECK(ut_fwd_decoder_error(d)[0] != '\0', "a protocol error has a message");
    ut_fwd_decoder_free(d);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_log whole = FUZZ_LOG_INIT, pieces = FUZZ_LOG_INIT;
    uint32_t seed = 0x9e3779b9u;
    for (size_t i = 0; i < size && i < 4; i++)
        seed = seed * 31 + data[i];

    run_result a = run(data, size, 0, &whole);
    run_result b = run(data, size, seed ? seed : 1, &pieces);
    FUZZ_CHECK(a.status == UT_OK || a.status == UT_EPROTO, "only protocol errors without a failing allocator");
    FUZZ_CHECK(a.status == b.status, "same status whole and in pieces");
    FUZZ_CHECK(a.status != UT_EPROTO || a.error_offset == b.error_offset, "same error offset");
    FUZZ_CHECK(a.status != UT_OK || a.pending == b.pending, "same bytes pending");
    FUZZ_CHECK(whole.bytes.len == pieces.bytes.len &&
                   (whole.bytes.len == 0 || memcmp(whole.bytes.data, pieces.bytes.data, whole.bytes.len) == 0),
               "same reports whole and in pieces");
    fuzz_check_round_trip(&whole.packed, whole.events);
    fuzz_log_free(&whole);
    fuzz_log_free(&pieces);
    return 0;
}

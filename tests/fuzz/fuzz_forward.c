/* Fuzz target: the Forward decoder. The input is fed whole to one decoder
 * and in pseudo-random pieces (seeded by the input) to another; both must
 * report the same events, rejections, acks and status, and every event
 * must survive a pack/decode round trip. The input is also taken as a
 * PackedForward body and sent both plain and gzipped
 * (CompressedPackedForward): both must report the same. */
#include "fuzz_common.h"

#include <msgpack.h>
#include <zlib.h>

static int pack_buf(void *data, const char *bytes, size_t len)
{
    return ut_buf_append(data, bytes, len) == UT_OK ? 0 : -1;
}

/* ["uitrail.alert", bin(body), {"chunk": "z"[, "compressed": "gzip"]}] */
static void packed_message(const void *body, size_t len, bool gzip, ut_buf *out)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, pack_buf);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_str_with_body(&pk, "uitrail.alert", 13);
    msgpack_pack_bin_with_body(&pk, body, len);
    msgpack_pack_map(&pk, gzip ? 2 : 1);
    msgpack_pack_str_with_body(&pk, "chunk", 5);
    msgpack_pack_str_with_body(&pk, "z", 1);
    if (gzip) {
        msgpack_pack_str_with_body(&pk, "compressed", 10);
        msgpack_pack_str_with_body(&pk, "gzip", 4);
    }
}

static void gzip_of(const uint8_t *data, size_t size, ut_buf *out)
{
    z_stream z = {0};
    FUZZ_CHECK(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflate starts");
    size_t bound = deflateBound(&z, (uLong)size) + 64;
    FUZZ_CHECK(ut_buf_reserve(out, bound) == UT_OK, "room for the gzip body");
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = (Bytef *)out->data;
    z.avail_out = (uInt)bound;
    FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate ends");
    out->len = bound - z.avail_out;
    deflateEnd(&z);
}

typedef struct run_result {
    ut_status status;
    uint64_t error_offset;
    size_t pending;
} run_result;

static run_result run(const uint8_t *data, size_t size, uint32_t seed, fuzz_log *log);

/* The input as a PackedForward body, plain and gzipped: the same reports
 * and the same status. */
static void check_compressed(const uint8_t *data, size_t size)
{
    ut_buf gz = UT_BUF_INIT, plain_msg = UT_BUF_INIT, gz_msg = UT_BUF_INIT;
    gzip_of(data, size, &gz);
    packed_message(data, size, false, &plain_msg);
    packed_message(gz.data, gz.len, true, &gz_msg);
    FUZZ_CHECK(!plain_msg.oom && !gz_msg.oom, "messages built");
    fuzz_log plain = FUZZ_LOG_INIT, inflated = FUZZ_LOG_INIT;
    run_result a = run((const uint8_t *)plain_msg.data, plain_msg.len, 0, &plain);
    run_result b = run((const uint8_t *)gz_msg.data, gz_msg.len, 0, &inflated);
    FUZZ_CHECK(a.status == b.status, "the same status plain and gzipped");
    FUZZ_CHECK(plain.bytes.len == inflated.bytes.len &&
                   (plain.bytes.len == 0 || memcmp(plain.bytes.data, inflated.bytes.data, plain.bytes.len) == 0),
               "the same reports plain and gzipped");
    fuzz_log_free(&plain);
    fuzz_log_free(&inflated);
    ut_buf_free(&gz);
    ut_buf_free(&plain_msg);
    ut_buf_free(&gz_msg);
}

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
    if (size <= UT_FRAME_MAX_BYTES / 2)
        check_compressed(data, size);
    return 0;
}

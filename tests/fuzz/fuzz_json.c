/* Fuzz target: JSON ingest bodies. A body that converts must give a
 * stream the decoder takes without breaching a wire limit, and its events
 * must survive a pack/decode round trip. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ut_buf out = UT_BUF_INIT;
    char err[256];
    ut_status st = ut_wire_json_to_msgpack(ut_str_from((const char *)data, size), &out, err, sizeof err);
    FUZZ_CHECK(st == UT_OK || st == UT_EPROTO || st == UT_ELIMIT, "converted or refused");
    if (st != UT_OK) {
        FUZZ_CHECK(err[0] != '\0', "a refusal has a reason");
        FUZZ_CHECK(out.len == 0, "a refusal leaves the output empty");
    } else {
        ut_fwd_decoder *d;
        fuzz_log log = FUZZ_LOG_INIT;
        ut_fwd_sink sink = fuzz_log_sink(&log);
        FUZZ_CHECK(ut_fwd_decoder_new(&d) == UT_OK, "decoder created");
        st = ut_fwd_decoder_feed(d, out.data, out.len, &sink);
        FUZZ_CHECK(st == UT_OK || st == UT_EPROTO, "decoded or a protocol error");
        /* The converter enforces the wire limits, so the decoder can only
         * object to the shape of a message, never to its size (a JSON
         * string in PackedForward position is opaque bytes to the
         * converter, so its content is exempt). */
        const char *e = ut_fwd_decoder_error(d);
        if (st == UT_EPROTO && !strstr(e, "PackedForward")) {
            FUZZ_CHECK(!strstr(e, "exceeds") && !strstr(e, "nesting") && !strstr(e, "runs past"),
                       "a converted body stays within the wire limits");
        }
        FUZZ_CHECK(ut_fwd_decoder_pending(d) == 0 || st != UT_OK, "a converted body ends on a message");
        ut_fwd_decoder_free(d);
        fuzz_check_round_trip(&log.packed, log.events);
        fuzz_log_free(&log);
    }
    ut_buf_free(&out);
    return 0;
}

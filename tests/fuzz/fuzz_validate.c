/* Fuzz target: the record validator alone. The first byte picks the kind,
 * the rest is one msgpack value, pre-scanned with the wire limits as the
 * decoder would. A valid record must pack and decode back to itself. */
#include "fuzz_common.h"
#include "wire_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const ut_kind kind = (ut_kind)(data[0] % UT_KIND__COUNT);
    const uint8_t *value = data + 1;
    const size_t len = size - 1;
    const ut__scan_limits lim = {
        .frame_max_bytes = UT_FRAME_MAX_BYTES,
        .bound_name = "the frame limit",
        .root_name = "record",
        .allow_any_root = true,
    };
    ut__scan scan;
    ut__scan_reset(&scan);
    if (ut__scan_run(&scan, &lim, value, len) != UT__SCAN_COMPLETE)
        return 0;

    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    FUZZ_CHECK(msgpack_unpack_next(&up, (const char *)value, scan.pos, &off) == MSGPACK_UNPACK_SUCCESS,
               "msgpack-c accepts what the scan accepts");
    FUZZ_CHECK(off == scan.pos, "msgpack-c and the scan agree on the length");

    ut__record_validator v;
    FUZZ_CHECK(ut__record_validator_init(&v) == UT_OK, "validator created");
    ut_event ev;
    ut_status st = ut__record_validate(&v, kind, 1718000000000000, &up.data, &ev);
    FUZZ_CHECK(st == UT_OK || st == UT_EINVAL, "valid or rejected");
    if (st == UT_EINVAL) {
        FUZZ_CHECK(v.why < UT_REJECT__COUNT && v.detail[0] != '\0', "a rejection has a reason");
    } else {
        fuzz_log log = FUZZ_LOG_INIT;
        fuzz_log_event(&log, &ev);
        fuzz_check_round_trip(&log.packed, 1);
        fuzz_log_free(&log);
    }
    ut__record_validator_free(&v);
    msgpack_unpacked_destroy(&up);
    return 0;
}

/* test_wire: the Forward decoder, the record validator, JSON bodies, the
 * packer, and CompressedPackedForward with the one tag. Each file holds one cmocka group; this runs them all. */
#include "wire_test_util.h"

int main(void)
{
    int failed = 0;
    failed += wt_run_forward_tests();
    failed += wt_run_validate_tests();
    failed += wt_run_json_tests();
    failed += wt_run_pack_tests();
    failed += wt_run_compressed_tests();
    return failed ? 1 : 0;
}

/* Internal interfaces shared by the files of src/record. */
#ifndef UITRAIL_RECORD_INT_H
#define UITRAIL_RECORD_INT_H

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem: zstd allocates through ut_malloc */
#include <zstd.h>

#include "uitrail/record.h"

/* Routes zstd's allocations through ut_malloc/ut_free, so that a failing
 * test allocator reaches the compression and decompression contexts too. */
extern const ZSTD_customMem ut__rec_zstd_mem;

/* Appends the meta entry ["uitrail.meta", EventTime, {...}] for `meta` to
 * `out`. On UT_ENOMEM `out` is as it was. */
ut_status ut__rec_pack_meta(const ut_rec_meta *meta, ut_buf *out);

#endif

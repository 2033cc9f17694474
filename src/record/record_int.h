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

/* ---- A journal frame's tab index (index.c, protocol §5.1) ---- */

/* Flag: the data frame must be read whatever tab is looked for (it starts
 * with the meta entry). */
#define UT__REC_INDEX_READ_ALWAYS 1u

typedef struct ut__rec_index {
    bool read_always;
    uint32_t n;
    const unsigned char *keys; /* n little-endian u32, strictly ascending */
} ut__rec_index;

/* Sorts and dedupes `keys` (in place), and appends the index frame listing
 * them to `out`. On UT_ENOMEM `out` is as it was. */
ut_status ut__rec_index_pack(uint32_t *keys, size_t n, bool meta, ut_buf *out);
/* True when the `len` bytes at `data` are exactly one well-formed index
 * frame whose checksum holds; `out` then points into `data`. */
bool ut__rec_index_parse(const void *data, size_t len, ut__rec_index *out);
/* Whether the frame after the index may hold entries of the tab `key`. */
bool ut__rec_index_has(const ut__rec_index *ix, uint32_t key);

#endif

/* A journal frame's tab index (protocol §5.1): a zstd skippable frame that
 * lists which tabs have entries in the data frame after it, so that a
 * reader looking for one tab steps over the other tabs' frames without
 * decompressing them.
 *
 * Layout, little-endian: the skippable frame header (UT_REC_INDEX_MAGIC,
 * payload size), then "UTX1", flags (bit 0: the data frame starts with the
 * meta entry), the number of keys, the XXH32 of the key bytes, and the keys
 * (ut_rec_index_key of each tab) strictly ascending. An index that breaks
 * any of these rules is not honoured: its frame is read, never skipped, so
 * a damaged index can cost time but not events. */
#include "record_int.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define INDEX_ID "UTX1"
#define INDEX_HEADER_BYTES 24u /* skippable header 8, id 4, flags 4, count 4, checksum 4 */

uint32_t ut_rec_index_key(ut_str tab)
{
    return (uint32_t)XXH3_64bits(tab.ptr, tab.len);
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

ut_status ut__rec_index_pack(uint32_t *keys, size_t n, bool meta, ut_buf *out)
{
    qsort(keys, n, sizeof *keys, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u == 0 || keys[i] != keys[u - 1])
            keys[u++] = keys[i];
    }
    /* A writer never reaches the cap (see limits.h); were it to, an index
     * listing no tab but flagged "read me" keeps every event readable. */
    bool over = u > UT_REC_INDEX_MAX_TABS;
    if (over)
        u = 0;
    size_t bytes = INDEX_HEADER_BYTES + 4 * u;
    if (ut_buf_reserve(out, bytes) != UT_OK)
        return UT_ENOMEM;
    unsigned char *p = (unsigned char *)out->data + out->len;
    put_u32(p, UT_REC_INDEX_MAGIC);
    put_u32(p + 4, (uint32_t)(bytes - 8));
    memcpy(p + 8, INDEX_ID, 4);
    put_u32(p + 12, (meta || over) ? UT__REC_INDEX_READ_ALWAYS : 0);
    put_u32(p + 16, (uint32_t)u);
    for (size_t i = 0; i < u; i++)
        put_u32(p + INDEX_HEADER_BYTES + 4 * i, keys[i]);
    put_u32(p + 20, XXH32(p + INDEX_HEADER_BYTES, 4 * u, 0));
    out->len += bytes;
    return UT_OK;
}

bool ut__rec_index_parse(const void *data, size_t len, ut__rec_index *out)
{
    const unsigned char *p = data;
    if (len < INDEX_HEADER_BYTES || get_u32(p) != UT_REC_INDEX_MAGIC || memcmp(p + 8, INDEX_ID, 4) != 0)
        return false;
    uint32_t payload = get_u32(p + 4), flags = get_u32(p + 12), n = get_u32(p + 16);
    if (n > UT_REC_INDEX_MAX_TABS || (size_t)payload + 8 != len || len != INDEX_HEADER_BYTES + 4 * (size_t)n
        || (flags & ~UT__REC_INDEX_READ_ALWAYS) != 0)
        return false;
    const unsigned char *keys = p + INDEX_HEADER_BYTES;
    if (XXH32(keys, 4 * (size_t)n, 0) != get_u32(p + 20))
        return false;
    for (uint32_t i = 1; i < n; i++) {
        if (get_u32(keys + 4 * (i - 1)) >= get_u32(keys + 4 * i))
            return false;
    }
    out->read_always = (flags & UT__REC_INDEX_READ_ALWAYS) != 0;
    out->n = n;
    out->keys = keys;
    return true;
}

bool ut__rec_index_has(const ut__rec_index *ix, uint32_t key)
{
    if (ix->read_always)
        return true;
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t k = get_u32(ix->keys + 4 * mid);
        if (k == key)
            return true;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

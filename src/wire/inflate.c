/* CompressedPackedForward bodies (Forward protocol v1, option
 * "compressed": "gzip"): the entries of a PackedForward message,
 * gzipped. Fluentd compresses each chunk on its own and may concatenate
 * several gzip members into one body, so every member is inflated in
 * turn. zlib does the inflating; this file only bounds it: the output may
 * not pass its cap, so a small body that inflates without end (a zip
 * bomb) is a protocol error after at most the cap of work and memory. */
#include "wire_internal.h"

#include <stdio.h>
#include <zlib.h>

/* zlib allocates through the uitrail allocator, so that the tests' failing
 * allocator reaches it too. */
static voidpf zalloc_ut(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return ut_calloc(items, size);
}

static void zfree_ut(voidpf opaque, voidpf address)
{
    (void)opaque;
    ut_free(address);
}

/* Bytes of output added per step: the buffer grows as the output does,
 * never to the cap up front. */
#define INFLATE_STEP_BYTES (64u << 10)

ut_status ut__wire_gunzip(ut_str in, size_t max_bytes, ut_buf *out, char *err, size_t errlen)
{
    z_stream z = {.zalloc = zalloc_ut, .zfree = zfree_ut};
    /* 15 + 16: a gzip wrapper (not zlib, not raw deflate), checked CRC. */
    int rc = inflateInit2(&z, 15 + 16);
    if (rc != Z_OK)
        return rc == Z_MEM_ERROR ? UT_ENOMEM : UT_EPROTO;
    ut_status st = UT_OK;
    const unsigned char *next = (const unsigned char *)in.ptr;
    size_t left = in.len;
    if (left == 0) {
        snprintf(err, errlen, "the gzip body is empty");
        st = UT_EPROTO;
    }
    while (st == UT_OK && left > 0) {
        /* One gzip member: inflate until its end. */
        rc = Z_OK;
        while (rc != Z_STREAM_END) {
            if (out->len >= max_bytes) {
                snprintf(err, errlen, "the gzip body inflates beyond the limit of %zu bytes", max_bytes);
                st = UT_ELIMIT;
                break;
            }
            size_t room = max_bytes - out->len < INFLATE_STEP_BYTES ? max_bytes - out->len : INFLATE_STEP_BYTES;
            if (ut_buf_reserve(out, room) != UT_OK) {
                st = UT_ENOMEM;
                break;
            }
            uInt chunk_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
            z.next_in = (Bytef *)next;
            z.avail_in = chunk_in;
            z.next_out = (Bytef *)out->data + out->len;
            z.avail_out = (uInt)room;
            rc = inflate(&z, Z_NO_FLUSH);
            next += chunk_in - z.avail_in;
            left -= chunk_in - z.avail_in;
            out->len += room - z.avail_out;
            if (rc == Z_MEM_ERROR) {
                st = UT_ENOMEM;
                break;
            }
            if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR) {
                snprintf(err, errlen, "the gzip body is corrupt: %s", z.msg ? z.msg : "bad data");
                st = UT_EPROTO;
                break;
            }
            bool stuck = z.avail_in == chunk_in && z.avail_out == room;
            if (rc != Z_STREAM_END && (left == 0 || stuck) && z.avail_out > 0) {
                snprintf(err, errlen, "the gzip body ends inside a member (%zu bytes inflated)", out->len);
                st = UT_EPROTO;
                break;
            }
        }
        if (st == UT_OK && left > 0 && inflateReset(&z) != Z_OK)
            st = UT_EPROTO;
    }
    inflateEnd(&z);
    return st;
}

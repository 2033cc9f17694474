/* The recording writer: queues packed entries and compresses them into
 * self-contained zstd frames (content size and checksum in each). The
 * compressor (a ZSTD_CCtx and the frame buffer) and the queue are reused
 * for the life of the writer, so recording an event allocates nothing once
 * the buffers have grown; writers of one thread may share a compressor. */
#include "record_int.h"

#include <stdio.h>
#include <string.h>
#include <zstd_errors.h>

#include "uitrail/wire.h"

static void *zstd_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return ut_malloc(size);
}

static void zstd_free(void *opaque, void *ptr)
{
    (void)opaque;
    ut_free(ptr);
}

const ZSTD_customMem ut__rec_zstd_mem = {zstd_alloc, zstd_free, NULL};

struct ut_rec_compressor {
    ZSTD_CCtx *cctx;
    ut_buf frame; /* the last finished frame */
};

struct ut_rec_writer {
    ut_rec_writer_opts opts;
    ut_rec_compressor *comp;   /* opts.compressor, or owned_comp */
    ut_rec_compressor *owned_comp;
    ut_buf pending;            /* msgpack entries of the next frame */
    uint32_t pending_entries;  /* event entries among them (the meta is not counted) */
    bool pending_meta;         /* the meta entry is still queued */
    int64_t pending_since_us;  /* clock of the first queued event */
    ut_buf keys;               /* journal: ut_rec_index_key of each queued event (uint32_t) */
    ut_rec_writer_stats stats;
};

static bool level_ok(int level)
{
    return level >= ZSTD_minCLevel() && level <= ZSTD_maxCLevel();
}

ut_status ut_rec_compressor_new(int zstd_level, ut_rec_compressor **out)
{
    *out = NULL;
    if (!level_ok(zstd_level))
        return UT_EINVAL;
    ut_rec_compressor *c = ut_calloc(1, sizeof *c);
    if (!c)
        return UT_ENOMEM;
    c->frame = UT_BUF_INIT;
    c->cctx = ZSTD_createCCtx_advanced(ut__rec_zstd_mem);
    /* The parameters are sticky: every ZSTD_compress2 on this context uses
     * them. The content size is written by default in one-shot mode. */
    if (!c->cctx || ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, zstd_level))
        || ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1))
        || ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 1))) {
        ut_rec_compressor_free(c);
        return UT_ENOMEM;
    }
    *out = c;
    return UT_OK;
}

void ut_rec_compressor_free(ut_rec_compressor *c)
{
    if (!c)
        return;
    ZSTD_freeCCtx(c->cctx);
    ut_buf_free(&c->frame);
    ut_free(c);
}

void ut_rec_writer_opts_defaults(ut_rec_writer_opts *o)
{
    o->frame_bytes = UT_REC_FRAME_CUT_DEFAULT_BYTES;
    o->frame_interval_ms = UT_REC_FRAME_INTERVAL_DEFAULT_MS;
    o->zstd_level = UT_REC_ZSTD_LEVEL_DEFAULT;
    o->compressor = NULL;
    o->journal = false;
}

static ut_status check_opts(const ut_rec_writer_opts *o, const ut_rec_meta *meta, char *err, size_t errlen)
{
    if (o->frame_bytes < UT_REC_FRAME_CUT_MIN_BYTES || o->frame_bytes > UT_REC_FRAME_CUT_MAX_BYTES) {
        snprintf(err, errlen, "frame size %u bytes is out of range: use %u to %u", o->frame_bytes,
                 UT_REC_FRAME_CUT_MIN_BYTES, UT_REC_FRAME_CUT_MAX_BYTES);
        return UT_EINVAL;
    }
    if (o->frame_interval_ms < UT_REC_FRAME_INTERVAL_MIN_MS || o->frame_interval_ms > UT_REC_FRAME_INTERVAL_MAX_MS) {
        snprintf(err, errlen, "frame interval %u ms is out of range: use %u to %u", o->frame_interval_ms,
                 UT_REC_FRAME_INTERVAL_MIN_MS, UT_REC_FRAME_INTERVAL_MAX_MS);
        return UT_EINVAL;
    }
    if (!o->compressor && !level_ok(o->zstd_level)) {
        snprintf(err, errlen, "zstd level %d is out of range: use %d to %d", o->zstd_level,
                 ZSTD_minCLevel(), ZSTD_maxCLevel());
        return UT_EINVAL;
    }
    if (!o->journal && (meta->tab.len == 0 || meta->tab.len > UT_TAB_MAX_BYTES)) {
        snprintf(err, errlen, "tab id of %zu bytes is out of range: use 1 to %u bytes",
                 meta->tab.len, UT_TAB_MAX_BYTES);
        return UT_EINVAL;
    }
    return UT_OK;
}

ut_status ut_rec_writer_new(const ut_rec_writer_opts *opts, const ut_rec_meta *meta,
                            ut_rec_writer **out, char *err, size_t errlen)
{
    *out = NULL;
    if (errlen)
        err[0] = '\0';
    ut_status st = check_opts(opts, meta, err, errlen);
    if (st != UT_OK)
        return st;

    ut_rec_writer *w = ut_calloc(1, sizeof *w);
    if (!w)
        return UT_ENOMEM;
    w->opts = *opts;
    w->pending = UT_BUF_INIT;
    w->keys = UT_BUF_INIT;
    w->pending_since_us = INT64_MAX;
    w->comp = opts->compressor;
    if (!w->comp) {
        if (ut_rec_compressor_new(opts->zstd_level, &w->owned_comp) != UT_OK)
            goto nomem;
        w->comp = w->owned_comp;
    }
    ut_rec_meta m = *meta;
    m.journal = opts->journal;
    if (m.journal)
        m.tab = UT_STR_NULL;
    if (ut__rec_pack_meta(&m, &w->pending) != UT_OK)
        goto nomem;
    if (w->pending.len > UT_REC_META_MAX_BYTES) {
        snprintf(err, errlen, "meta entry of %zu bytes is over the limit of %u: shorten the daemon version",
                 w->pending.len, UT_REC_META_MAX_BYTES);
        ut_rec_writer_free(w);
        return UT_EINVAL;
    }
    w->pending_meta = true;
    *out = w;
    return UT_OK;

nomem:
    ut_rec_writer_free(w);
    return UT_ENOMEM;
}

void ut_rec_writer_free(ut_rec_writer *w)
{
    if (!w)
        return;
    ut_rec_compressor_free(w->owned_comp);
    ut_buf_free(&w->pending);
    ut_buf_free(&w->keys);
    ut_free(w);
}

/* Compresses the queued entries into one frame. On UT_ENOMEM the entries
 * stay queued for the next attempt. */
static ut_status finish_frame(ut_rec_writer *w, ut_str *frame)
{
    *frame = UT_STR_NULL;
    if (w->pending.len == 0)
        return UT_OK;
    ut_rec_compressor *c = w->comp;
    size_t bound = ZSTD_compressBound(w->pending.len);
    ut_buf_reset(&c->frame);
    /* A journal frame goes out behind its tab index, in the same buffer,
     * so that one write(2) carries both. */
    if (w->opts.journal
        && ut__rec_index_pack((uint32_t *)(void *)w->keys.data, w->keys.len / sizeof(uint32_t), w->pending_meta,
                              &c->frame) != UT_OK)
        return UT_ENOMEM;
    size_t index_len = c->frame.len;
    if (ut_buf_reserve(&c->frame, bound) != UT_OK)
        return UT_ENOMEM;
    size_t n = ZSTD_compress2(c->cctx, c->frame.data + index_len, bound, w->pending.data, w->pending.len);
    if (ZSTD_isError(n)) {
        /* With a destination of ZSTD_compressBound bytes, running out of
         * memory is the one expected failure. Drop the context's half-done
         * session so that the retry starts clean; the entries stay queued. */
        ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
        return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? UT_ENOMEM : UT_EIO;
    }
    c->frame.len = index_len + n;

    w->stats.frames++;
    w->stats.entries += w->pending_entries + (w->pending_meta ? 1u : 0u);
    w->stats.content_bytes += w->pending.len;
    w->stats.compressed_bytes += index_len + n;
    ut_buf_reset(&w->pending);
    ut_buf_reset(&w->keys);
    w->pending_entries = 0;
    w->pending_meta = false;
    w->pending_since_us = INT64_MAX;
    *frame = ut_buf_str(&c->frame);
    return UT_OK;
}

ut_status ut_rec_writer_append(ut_rec_writer *w, const ut_event *ev, ut_str *frame)
{
    *frame = UT_STR_NULL;
    ut_buf_mark mark = ut_buf_begin(&w->pending);
    ut_status st = ut_wire_pack_event(ev, true, &w->pending);
    if (st == UT_OK && w->pending.len - mark.len > UT_REC_ENTRY_MAX_BYTES)
        st = UT_ELIMIT;
    st = ut_buf_end(&w->pending, mark, st);
    if (st != UT_OK)
        return st;
    if (w->opts.journal) {
        uint32_t key = ut_rec_index_key(ev->tab);
        if (ut_buf_append(&w->keys, &key, sizeof key) != UT_OK) {
            w->pending.len = mark.len; /* not recorded: the index would miss it */
            return UT_ENOMEM;
        }
    }
    if (w->pending_entries++ == 0)
        w->pending_since_us = ev->rt_us ? ev->rt_us : ev->time_us;
    if (w->pending.len < w->opts.frame_bytes)
        return UT_OK;
    return finish_frame(w, frame);
}

int64_t ut_rec_writer_deadline(const ut_rec_writer *w)
{
    if (w->pending.len == 0)
        return INT64_MAX;
    /* A frame holding only the meta entry has no clock yet: it goes out
     * with the first event's frame, or on ut_rec_writer_flush. */
    if (w->pending_since_us == INT64_MAX)
        return INT64_MAX;
    int64_t interval_us = (int64_t)w->opts.frame_interval_ms * 1000;
    if (w->pending_since_us > INT64_MAX - interval_us)
        return INT64_MAX;
    return w->pending_since_us + interval_us;
}

ut_status ut_rec_writer_flush_due(ut_rec_writer *w, int64_t now_us, ut_str *frame)
{
    *frame = UT_STR_NULL;
    int64_t due = ut_rec_writer_deadline(w);
    if (due == INT64_MAX || now_us < due)
        return UT_OK;
    return finish_frame(w, frame);
}

ut_status ut_rec_writer_flush(ut_rec_writer *w, ut_str *frame)
{
    return finish_frame(w, frame);
}

void ut_rec_writer_stats_get(const ut_rec_writer *w, ut_rec_writer_stats *out)
{
    *out = w->stats;
    out->pending_entries = w->pending_entries + (w->pending_meta ? 1u : 0u);
    out->pending_bytes = w->pending.len;
}

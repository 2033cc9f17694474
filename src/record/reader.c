/* The recording reader: walks zstd frames in a buffer, decompresses each
 * one that is whole and passes its checksum, and turns everything else
 * into a damage report without losing the frames around it.
 *
 * Each frame is self-delimiting (ZSTD_findFrameCompressedSize), so a frame
 * that fails its checksum is skipped and the walk goes on at the next one.
 * When even the boundary is lost (bytes that do not parse as a frame), the
 * walk resynchronises at the next zstd magic number from which a whole
 * frame parses; a false match inside compressed data would then fail its
 * own checksum and be skipped in turn. */
#include "record_int.h"

#include <stdio.h>
#include <string.h>
#include <zstd_errors.h>

/* ZSTD_MAGICNUMBER as it appears in a file (little-endian). */
static const unsigned char zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};
/* UT_REC_INDEX_MAGIC as it appears in a file. */
static const unsigned char index_magic[4] = {0x55, 0x2A, 0x4D, 0x18};

struct ut_rec_reader {
    ZSTD_DCtx *dctx;
    char *content;       /* decompressed frame, reused */
    size_t content_cap;
    const unsigned char *data;
    size_t len;
    size_t off;          /* start of the next frame or damage */
    uint64_t frame_no;   /* number the next frame gets */
    bool seen_frame;     /* a FRAME step was handed out since the reset */
    bool only_tab;       /* journal frames whose index lacks `key` are stepped over */
    uint32_t key;
};

const char *ut_rec_damage_name(ut_rec_damage d)
{
    switch (d) {
    case UT_REC_DAMAGE_NONE: return "none";
    case UT_REC_DAMAGE_TORN_TAIL: return "torn tail";
    case UT_REC_DAMAGE_BAD_FRAME: return "bad frame";
    case UT_REC_DAMAGE_OVERSIZE: return "oversize frame";
    case UT_REC_DAMAGE_GARBAGE: return "garbage";
    case UT_REC_DAMAGE_BAD_CONTENT: return "bad content";
    }
    return "unknown damage";
}

ut_status ut_rec_reader_new(ut_rec_reader **out)
{
    *out = NULL;
    ut_rec_reader *r = ut_calloc(1, sizeof *r);
    if (!r)
        return UT_ENOMEM;
    r->dctx = ZSTD_createDCtx_advanced(ut__rec_zstd_mem);
    if (!r->dctx) {
        ut_free(r);
        return UT_ENOMEM;
    }
    *out = r;
    return UT_OK;
}

void ut_rec_reader_free(ut_rec_reader *r)
{
    if (!r)
        return;
    ZSTD_freeDCtx(r->dctx);
    ut_free(r->content);
    ut_free(r);
}

void ut_rec_reader_reset(ut_rec_reader *r, const void *data, size_t len)
{
    r->data = data;
    r->len = data ? len : 0;
    r->off = 0;
    r->frame_no = 0;
    r->seen_frame = false;
}

/* True when a whole frame parses at `pos`. */
static bool frame_starts_at(const ut_rec_reader *r, size_t pos)
{
    return r->len - pos >= sizeof zstd_magic && memcmp(r->data + pos, zstd_magic, sizeof zstd_magic) == 0
        && !ZSTD_isError(ZSTD_findFrameCompressedSize(r->data + pos, r->len - pos));
}

/* The first position in [from, to) where a whole frame starts; `to` when
 * there is none. */
static size_t next_frame_start(const ut_rec_reader *r, size_t from, size_t to)
{
    while (from < to) {
        const unsigned char *hit = memchr(r->data + from, zstd_magic[0], to - from);
        if (!hit)
            return to;
        size_t pos = (size_t)(hit - r->data);
        if (frame_starts_at(r, pos))
            return pos;
        from = pos + 1;
    }
    return to;
}

static void damage(ut_rec_reader *r, ut_rec_step *step, ut_rec_damage kind, size_t skipped, bool numbered)
{
    step->kind = UT_REC_STEP_DAMAGE;
    step->damage = kind;
    step->offset = r->off;
    step->bytes = skipped;
    step->frame = numbered ? r->frame_no++ : 0;
    r->off += skipped;
}

/* The bytes at r->off do not parse as a frame. */
static void read_unframed(ut_rec_reader *r, ut_rec_step *step, size_t find_error)
{
    size_t rest = r->len - r->off;
    size_t probe = rest < sizeof zstd_magic ? rest : sizeof zstd_magic;
    /* A journal frame starts with its index: cut inside it, it is a torn
     * frame too. */
    bool looks_like_frame = memcmp(r->data + r->off, zstd_magic, probe) == 0
                         || memcmp(r->data + r->off, index_magic, probe) == 0;
    size_t next = next_frame_start(r, r->off + 1, r->len);
    size_t skipped = next - r->off;
    size_t at = r->off;

    if (looks_like_frame && next == r->len && ZSTD_getErrorCode(find_error) == ZSTD_error_srcSize_wrong) {
        damage(r, step, UT_REC_DAMAGE_TORN_TAIL, skipped, true);
        snprintf(step->detail, sizeof step->detail,
                 "torn tail: frame %llu at byte %zu is incomplete, %zu bytes dropped",
                 (unsigned long long)step->frame, at, skipped);
    } else if (looks_like_frame) {
        damage(r, step, UT_REC_DAMAGE_BAD_FRAME, skipped, true);
        snprintf(step->detail, sizeof step->detail, "frame %llu at byte %zu: %s, %zu bytes skipped",
                 (unsigned long long)step->frame, at, ZSTD_getErrorName(find_error), skipped);
    } else {
        damage(r, step, UT_REC_DAMAGE_GARBAGE, skipped, false);
        snprintf(step->detail, sizeof step->detail, "garbage at byte %zu: %zu bytes skipped", at, skipped);
    }
}

static ut_status reserve_content(ut_rec_reader *r, size_t cap)
{
    if (cap == 0)
        cap = 1;
    if (cap <= r->content_cap)
        return UT_OK;
    char *p = ut_realloc(r->content, cap);
    if (!p)
        return UT_ENOMEM;
    r->content = p;
    r->content_cap = cap;
    return UT_OK;
}

/* A frame of `frame_len` bytes parses at r->off. */
static ut_status read_frame(ut_rec_reader *r, ut_rec_step *step, size_t frame_len)
{
    const unsigned char *src = r->data + r->off;
    size_t at = r->off;
    unsigned long long declared = ZSTD_getFrameContentSize(src, frame_len);
    size_t cap;

    if (declared == ZSTD_CONTENTSIZE_ERROR) {
        damage(r, step, UT_REC_DAMAGE_BAD_FRAME, frame_len, true);
        snprintf(step->detail, sizeof step->detail, "frame %llu at byte %zu: bad frame header, %zu bytes skipped",
                 (unsigned long long)step->frame, at, frame_len);
        return UT_OK;
    }
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > UT_REC_FRAME_CONTENT_MAX_BYTES) {
        damage(r, step, UT_REC_DAMAGE_OVERSIZE, frame_len, true);
        snprintf(step->detail, sizeof step->detail,
                 "frame %llu at byte %zu: declares %llu bytes of content, over the limit of %u; %zu bytes skipped",
                 (unsigned long long)step->frame, at, declared, UT_REC_FRAME_CONTENT_MAX_BYTES, frame_len);
        return UT_OK;
    }
    /* A frame without a declared size (not one of ours) may still be read,
     * into a buffer of the largest size allowed. */
    cap = declared == ZSTD_CONTENTSIZE_UNKNOWN ? UT_REC_FRAME_CONTENT_MAX_BYTES : (size_t)declared;
    if (reserve_content(r, cap) != UT_OK)
        return UT_ENOMEM;

    size_t n = ZSTD_decompressDCtx(r->dctx, r->content, cap, src, frame_len);
    if (ZSTD_isError(n)) {
        ZSTD_ErrorCode code = ZSTD_getErrorCode(n);
        if (code == ZSTD_error_memory_allocation)
            return UT_ENOMEM;
        if (code == ZSTD_error_dstSize_tooSmall && declared == ZSTD_CONTENTSIZE_UNKNOWN) {
            damage(r, step, UT_REC_DAMAGE_OVERSIZE, frame_len, true);
            snprintf(step->detail, sizeof step->detail,
                     "frame %llu at byte %zu: holds more than %u bytes of content; %zu bytes skipped",
                     (unsigned long long)step->frame, at, UT_REC_FRAME_CONTENT_MAX_BYTES, frame_len);
            return UT_OK;
        }
        /* A damaged block header can make a frame look longer than it is
         * and swallow the frames after it: resume at the first whole frame
         * inside the damaged span, if there is one. */
        size_t skipped = next_frame_start(r, at + 1, at + frame_len) - at;
        damage(r, step, UT_REC_DAMAGE_BAD_FRAME, skipped, true);
        snprintf(step->detail, sizeof step->detail, "frame %llu at byte %zu: %s, %zu bytes skipped",
                 (unsigned long long)step->frame, at,
                 code == ZSTD_error_checksum_wrong ? "checksum mismatch" : ZSTD_getErrorName(n), skipped);
        return UT_OK;
    }

    step->kind = UT_REC_STEP_FRAME;
    step->frame = r->frame_no++;
    step->offset = at;
    step->bytes = frame_len;
    step->content = ut_str_from(r->content, n);
    r->seen_frame = true;
    r->off += frame_len;
    return UT_OK;
}

void ut_rec_reader_only_tab(ut_rec_reader *r, ut_str tab)
{
    r->only_tab = tab.ptr != NULL;
    r->key = r->only_tab ? ut_rec_index_key(tab) : 0;
}

/* True when a whole zstd data frame (not a skippable one) starts at `pos`;
 * its length in `*len`. */
static bool data_frame_at(const ut_rec_reader *r, size_t pos, size_t *len)
{
    if (r->len - pos < sizeof zstd_magic || memcmp(r->data + pos, zstd_magic, sizeof zstd_magic) != 0)
        return false;
    *len = ZSTD_findFrameCompressedSize(r->data + pos, r->len - pos);
    return !ZSTD_isError(*len);
}

/* A journal's tab index of `index_len` bytes is at r->off (protocol §5.1).
 * Reads it with the data frame it leads as one step, the two being one
 * write: stepped over when the index says the tab looked for is not in
 * it, else read (the step then covers both). An index with nothing after
 * it is a write torn between the two. False when what follows is neither:
 * the index is then read as the plain skippable frame it also is. */
static bool read_indexed(ut_rec_reader *r, ut_rec_step *step, size_t index_len, ut_status *st)
{
    ut__rec_index ix;
    if (!ut__rec_index_parse(r->data + r->off, index_len, &ix))
        return false;
    size_t at = r->off, data = r->off + index_len, frame_len = 0;
    *st = UT_OK;
    if (data == r->len) {
        damage(r, step, UT_REC_DAMAGE_TORN_TAIL, index_len, true);
        snprintf(step->detail, sizeof step->detail,
                 "torn tail: frame %llu at byte %zu has its index but no data, %zu bytes dropped",
                 (unsigned long long)step->frame, at, index_len);
        return true;
    }
    if (!data_frame_at(r, data, &frame_len))
        return false;
    /* The first frame is always read: it is where the meta entry is,
     * whatever its index says. */
    if (r->only_tab && r->seen_frame && !ut__rec_index_has(&ix, r->key)) {
        step->kind = UT_REC_STEP_FRAME;
        step->skipped = true;
        step->frame = r->frame_no++;
        step->offset = at;
        step->bytes = index_len + frame_len;
        r->off = data + frame_len;
        return true;
    }
    r->off = data;
    *st = read_frame(r, step, frame_len);
    if (*st != UT_OK) {
        r->off = at; /* not consumed: the retry starts at the index again */
        return true;
    }
    step->offset = at;
    step->bytes += index_len;
    return true;
}

ut_status ut_rec_reader_next(ut_rec_reader *r, ut_rec_step *step)
{
    step->kind = UT_REC_STEP_END;
    step->frame = 0;
    step->offset = r->off;
    step->bytes = 0;
    step->content = UT_STR_NULL;
    step->damage = UT_REC_DAMAGE_NONE;
    step->detail[0] = '\0';
    step->skipped = false;
    if (r->off >= r->len)
        return UT_OK;

    size_t frame_len = ZSTD_findFrameCompressedSize(r->data + r->off, r->len - r->off);
    if (ZSTD_isError(frame_len)) {
        read_unframed(r, step, frame_len);
        return UT_OK;
    }
    ut_status st;
    if (read_indexed(r, step, frame_len, &st))
        return st;
    return read_frame(r, step, frame_len);
}

/* ---- Whole recordings ---- */

typedef struct read_walk {
    ut_rec_reader *r;
    const ut_rec_handlers *h;
    const ut_fwd_sink *events;
    ut_fwd_decoder *decoder; /* NULL until needed, and after damage */
    bool meta_checked;
} read_walk;

static void report_damage(read_walk *walk, const ut_rec_step *step)
{
    if (walk->h && walk->h->on_damage)
        walk->h->on_damage(walk->h->ud, step);
}

/* Reports damage inside a good frame's content. */
static void report_bad_content(read_walk *walk, const ut_rec_step *frame, uint64_t bytes, const char *why)
{
    ut_rec_step d = *frame;
    d.kind = UT_REC_STEP_DAMAGE;
    d.damage = UT_REC_DAMAGE_BAD_CONTENT;
    d.bytes = bytes;
    d.content = UT_STR_NULL;
    /* Two 20-digit numbers and the words take 57 of the 192 bytes: a reason
     * is cut at 128 so that the numbers always show. */
    snprintf(d.detail, sizeof d.detail, "frame %llu at byte %llu: %.128s", (unsigned long long)frame->frame,
             (unsigned long long)frame->offset, why);
    report_damage(walk, &d);
}

static void drop_decoder(read_walk *walk)
{
    ut_fwd_decoder_free(walk->decoder);
    walk->decoder = NULL;
}

static ut_status read_frame_entries(read_walk *walk, const ut_rec_step *frame)
{
    ut_str content = frame->content;

    if (!walk->meta_checked) {
        walk->meta_checked = true;
        ut_rec_meta meta;
        size_t consumed = 0;
        ut_status st = ut_rec_meta_parse(content, &meta, &consumed);
        if (st == UT_OK) {
            if (walk->h && walk->h->on_meta)
                walk->h->on_meta(walk->h->ud, &meta);
        } else if (st == UT_ECORRUPT) {
            /* Without a measurable entry the msgpack itself is broken and
             * the rest of the frame cannot be trusted either. */
            report_bad_content(walk, frame, consumed ? consumed : content.len,
                               consumed ? "malformed uitrail.meta entry, skipped"
                                        : "malformed uitrail.meta entry, rest of the frame skipped");
            if (!consumed)
                return UT_OK;
        }
        content.ptr += consumed;
        content.len -= consumed;
    }
    if (!walk->events || content.len == 0)
        return UT_OK;

    if (!walk->decoder && ut_fwd_decoder_new(&walk->decoder) != UT_OK)
        return UT_ENOMEM;
    ut_status st = ut_fwd_decoder_feed(walk->decoder, content.ptr, content.len, walk->events);
    if (st == UT_EPROTO) {
        char why[sizeof ((ut_rec_step *)0)->detail];
        snprintf(why, sizeof why, "%s; rest of the frame skipped", ut_fwd_decoder_error(walk->decoder));
        report_bad_content(walk, frame, content.len, why);
        drop_decoder(walk);
        return UT_OK;
    }
    return st;
}

ut_status ut_rec_read(ut_rec_reader *r, const void *data, size_t len, const ut_rec_handlers *h,
                      const ut_fwd_sink *events)
{
    read_walk walk = {r, h, events, NULL, false};
    ut_rec_step step;
    ut_status st = UT_OK;

    ut_rec_reader_reset(r, data, len);
    for (;;) {
        st = ut_rec_reader_next(r, &step);
        if (st != UT_OK || step.kind == UT_REC_STEP_END)
            break;
        if (step.kind == UT_REC_STEP_DAMAGE) {
            report_damage(&walk, &step);
            /* An entry cut by the lost bytes can never be completed. */
            drop_decoder(&walk);
            continue;
        }
        if (h && h->on_frame)
            h->on_frame(h->ud, &step);
        if (step.skipped) {
            /* Frames hold whole entries: the next frame starts afresh. */
            if (walk.decoder && ut_fwd_decoder_pending(walk.decoder) > 0)
                report_bad_content(&walk, &step, ut_fwd_decoder_pending(walk.decoder),
                                   "an entry runs on into this frame, which was stepped over; it is dropped");
            drop_decoder(&walk);
            continue;
        }
        st = read_frame_entries(&walk, &step);
        if (st != UT_OK)
            break;
    }
    if (st == UT_OK && walk.decoder && ut_fwd_decoder_pending(walk.decoder) > 0) {
        ut_rec_step tail = {.kind = UT_REC_STEP_DAMAGE, .damage = UT_REC_DAMAGE_BAD_CONTENT,
                            .offset = len, .bytes = ut_fwd_decoder_pending(walk.decoder)};
        snprintf(tail.detail, sizeof tail.detail, "the last frame ends inside an entry: %llu bytes dropped",
                 (unsigned long long)tail.bytes);
        report_damage(&walk, &tail);
    }
    drop_decoder(&walk);
    return st;
}
